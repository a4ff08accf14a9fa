//! The form's RL settings, for GRPO and PPO: rollout parallelism (TP, and EP for routed experts)
//! and samples, prompt and response lengths, the rollout engine's memory and batching, and the
//! switches.

use leptos::prelude::*;
use trainplan_core::knobs::Knob;

use super::FormCtx;
use super::controls::{check, knob_slot, number, number_labelled, placeholder};
use crate::components::use_tr;
use crate::form::NumField;
use crate::i18n::Key;

/// The RL section, shown where the method takes the `rl` settings (`knobs::applies`).
#[component]
pub fn RlSection(
    /// The form's shared state.
    ctx: FormCtx,
) -> impl IntoView {
    let tr = use_tr();
    let (auto, all) = (placeholder(Key::placeholder_auto), placeholder(Key::placeholder_all));
    let longest = placeholder(Key::placeholder_max);
    let budget_label = move || ctx.form.with(|f| NumField::TokenBudget.label_in(f.file.framework));
    let blocking =
        move || check(ctx, Key::rl_blocking, "blocking-check", |f| f.rl.blocking, |f, v| f.rl.blocking = v);
    let kl_loss =
        move || check(ctx, Key::rl_kl_loss, "kl-loss-check", |f| f.rl.kl_loss, |f, v| f.rl.kl_loss = v);
    // Named by the framework's own keys: VeRL's per device, MindSpeed-RL's per role.
    let label = move |field: NumField| move || ctx.form.with(|f| field.label_in(f.file.framework));
    let log_prob = move || {
        let field = NumField::LogProbMicroBatch;
        number_labelled(ctx, label(field), "log-prob-micro-input", field, auto)
    };
    let log_prob_tokens = move || {
        let field = NumField::LogProbTokens;
        number_labelled(ctx, label(field), "log-prob-tokens-input", field, auto)
    };
    view! {
        <Show when=move || ctx.applies(Knob::Rl)>
            <section class="panel" aria-labelledby="rl-title" data-testid="rl-panel">
                <h2 id="rl-title">{move || tr(Key::rl_title)}</h2>
                <div class="grid2">
                    {number(ctx, Key::rl_rollout_tp, "rollout-tp-input", NumField::RolloutTp, None)}
                    {number(ctx, Key::rl_rollout_ep, "rollout-ep-input", NumField::RolloutEp, None)}
                    {number(ctx, Key::rl_samples, "samples-input", NumField::Samples, None)}
                    {number(ctx, Key::rl_mini_batch, "mini-batch-input", NumField::MiniBatch, all)}
                    {number(ctx, Key::rl_prompt_len, "prompt-len-input", NumField::PromptLen, None)}
                    {number(ctx, Key::rl_response_len, "response-len-input", NumField::ResponseLen, None)}
                    {number(ctx, Key::rl_mean_prompt_len, "mean-prompt-len-input", NumField::MeanPromptLen, longest)}
                    {number(ctx, Key::rl_mean_response_len, "mean-response-len-input", NumField::MeanResponseLen, longest)}
                    {number_labelled(ctx, budget_label, "token-budget-input", NumField::TokenBudget, auto)}
                    {number(ctx, Key::rl_gpu_mem, "gpu-mem-input", NumField::GpuMemoryUtilization, None)}
                    {number(ctx, Key::rl_max_num_seqs, "max-num-seqs-input", NumField::MaxNumSeqs, None)}
                    {number(ctx, Key::rl_max_model_len, "max-model-len-input", NumField::MaxModelLen, auto)}
                    {number(ctx, Key::rl_batched_tokens, "batched-tokens-input", NumField::BatchedTokens, auto)}
                </div>
                {check(ctx, Key::rl_dynamic_batch, "dynamic-batch-check", |f| f.rl.dynamic_batch, |f, v| f.rl.dynamic_batch = v)}
                {check(ctx, Key::rl_remove_padding, "remove-padding-check", |f| f.rl.remove_padding, |f, v| f.rl.remove_padding = v)}
                {check(ctx, Key::rl_enforce_eager, "enforce-eager-check", |f| f.rl.enforce_eager, |f, v| f.rl.enforce_eager = v)}
                {check(ctx, Key::rl_lora, "rl-lora-check", |f| f.rl.lora, |f, v| f.rl.lora = v)}
                {knob_slot(ctx, Knob::RlBlocking, blocking)}
                {knob_slot(ctx, Knob::RlKlLoss, kl_loss)}
                {knob_slot(ctx, Knob::RlLogProbMicroBatch, log_prob)}
                {knob_slot(ctx, Knob::RlLogProbTokens, log_prob_tokens)}
            </section>
        </Show>
    }
}
