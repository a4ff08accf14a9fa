//! The form's training: framework, method, precision, the LoRA rank where the plan trains LoRA, and
//! the batch.

use leptos::prelude::*;
use trainplan_core::choices;
use trainplan_core::knobs::Knob;
use trainplan_core::plan::{Framework, Method, Optimizer, PlanFile, Precision};

use super::FormCtx;
use super::controls::{check, enum_select, number, placeholder};
use crate::components::use_tr;
use crate::form::NumField;
use crate::i18n::{Key, t};
use crate::messages::method_key;

/// The training section.
#[component]
pub fn TrainingSection(
    /// The form's shared state.
    ctx: FormCtx,
) -> impl IntoView {
    let tr = use_tr();
    let form = ctx.form;
    // What a framework brings when chosen (VeRL's ZeRO-3) is the core's: choices::choose_framework.
    let framework = enum_select(
        ctx,
        (Key::training_framework, "framework-select"),
        Framework::ALL,
        Framework::wire,
        |fw, _| fw.name(),
        |f| f.framework,
        choices::choose_framework,
    );
    let method = enum_select(
        ctx,
        (Key::training_method, "method-select"),
        Method::ALL,
        Method::wire,
        |m, lang| t(lang, method_key(m)),
        |f| f.method,
        |f, m| f.method = m,
    );
    let precision = enum_select(
        ctx,
        (Key::training_precision, "precision-select"),
        Precision::ALL,
        Precision::wire,
        |k, _| k.wire(),
        |f| f.precision,
        |f, k| f.precision = k,
    );
    let trains_lora = move || form.with(|f| choices::trains_lora(&f.file));
    // LLaMA-Factory's `pure_bf16` (read with bf16 precision) without DeepSpeed, and bitsandbytes'
    // 8-bit AdamW without it or handed to it: where the plan counts them.
    let plain = move || form.with(|f| choices::plain_torch(&f.file));
    let pure_bf16_shown =
        move || plain() && ctx.applies(Knob::PureBf16) && form.with(|f| f.file.precision == Precision::Bf16);
    let adam_8bit_shown =
        move || form.with(|f| choices::offers_eight_bit_adam(&f.file)) && ctx.applies(Knob::Optimizer);
    let is_adam_8bit = |f: &PlanFile| f.optimizer == Optimizer::AdamW8bit;
    let set_adam_8bit =
        |f: &mut PlanFile, on: bool| f.optimizer = if on { Optimizer::AdamW8bit } else { Optimizer::AdamW };
    // GaLore where LLaMA-Factory trains full parameters; its rank and layer-wise stepping with it.
    // GaLore and APOLLO, a box each (one optimizer at a time), their rank and layer-wise stepping.
    let is_galore = |f: &PlanFile| f.optimizer == Optimizer::Galore;
    let set_galore =
        |f: &mut PlanFile, on: bool| f.optimizer = if on { Optimizer::Galore } else { Optimizer::AdamW };
    let is_apollo = |f: &PlanFile| f.optimizer == Optimizer::Apollo;
    let set_apollo =
        |f: &mut PlanFile, on: bool| f.optimizer = if on { Optimizer::Apollo } else { Optimizer::AdamW };
    let low_rank_on = move || ctx.applies(Knob::LowRankRank) && form.with(|f| f.file.optimizer.projects());
    view! {
        <section class="panel" aria-labelledby="training-title">
            <h2 id="training-title">{move || tr(Key::training_title)}</h2>
            {framework}
            {method}
            {precision}
            <Show when=pure_bf16_shown>
                {check(ctx, Key::training_pure_bf16, "pure-bf16-check", |f| f.pure_bf16, |f, v| f.pure_bf16 = v)}
            </Show>
            <Show when=adam_8bit_shown>
                {check(ctx, Key::training_adam_8bit, "adam-8bit-check", is_adam_8bit, set_adam_8bit)}
            </Show>
            <Show when=move || ctx.applies(Knob::LowRankRank)>
                {check(ctx, Key::training_galore, "galore-check", is_galore, set_galore)}
                {check(ctx, Key::training_apollo, "apollo-check", is_apollo, set_apollo)}
            </Show>
            <Show when=low_rank_on>
                {number(ctx, Key::training_low_rank_rank, "low-rank-input", NumField::LowRankRank, None)}
                {check(ctx, Key::training_low_rank_layerwise, "low-rank-layerwise-check", |f| f.low_rank.layerwise, |f, v| f.low_rank.layerwise = v)}
            </Show>
            <Show when=move || ctx.applies(Knob::FreezeLayers)>
                {number(ctx, Key::training_freeze_layers, "freeze-layers-input", NumField::FreezeLayers, None)}
            </Show>
            <Show when=trains_lora>
                <div class="grid2">
                    {number(ctx, Key::training_lora_rank, "lora-rank-input", NumField::LoraRank, None)}
                    // LLaMA-Factory's alone (`knobs::applies`): the other frameworks' LoRA runs none.
                    <Show when=move || ctx.applies(Knob::LoraDropout)>
                        {number(ctx, Key::training_lora_dropout, "lora-dropout-input", NumField::LoraDropout, None)}
                    </Show>
                </div>
                <Show when=move || ctx.applies(Knob::LoraDora)>
                    {check(ctx, Key::training_dora, "dora-check", |f| f.lora.dora, |f, v| f.lora.dora = v)}
                </Show>
            </Show>
            <div class="grid3">
                {number(ctx, Key::batch_micro, "micro-batch-input", NumField::MicroBatch, None)}
                {number(ctx, Key::batch_global, "global-batch-input", NumField::GlobalBatch, None)}
                // RL sequences are the prompt and response lengths of the RL panel.
                <Show when=move || ctx.applies(Knob::SeqLen)>
                    {number(ctx, Key::batch_seq, "seq-len-input", NumField::SeqLen, None)}
                </Show>
                <Show when=move || ctx.applies(Knob::MeanSeqLen)>
                    {number(ctx, Key::batch_mean_seq, "mean-seq-len-input", NumField::MeanSeqLen, placeholder(Key::placeholder_max))}
                </Show>
                // A multimodal model whose encoder the framework runs: the images' share of a sequence.
                <Show when=move || ctx.runs_vision()>
                    {number(ctx, Key::batch_image_tokens, "image-tokens-input", NumField::ImageTokens, placeholder(Key::placeholder_text_only))}
                </Show>
            </div>
        </section>
    }
}
