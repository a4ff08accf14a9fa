//! The form's recomputation and activation-memory knobs: granularity and layers, the attention
//! kernel, Liger's kernels (LLaMA-Factory, VeRL), activation-function recomputation,
//! swap-attention, checkpoints split over TP, the modules recomputed, CPU offload of layers and
//! LLaMA-Factory's layer ratio.

use leptos::prelude::*;
use trainplan_core::knobs::Knob;
use trainplan_core::plan::{AttentionImpl, PlanFile, RecomputeGranularity};

use super::FormCtx;
use super::controls::{ReadBool, WriteBool, check, enum_select, knob_slot, number, placeholder};
use crate::form::NumField;
use crate::i18n::Key;

/// The recomputation knobs, inside the parallelism section.
#[component]
pub fn RecomputeKnobs(
    /// The form's shared state.
    ctx: FormCtx,
) -> impl IntoView {
    let slot_number = move |knob: Knob, label: Key, testid: &'static str, field: NumField| {
        knob_slot(ctx, knob, move || number(ctx, label, testid, field, None))
    };
    let slot_check = move |knob: Knob, label: Key, testid: &'static str, get: ReadBool, set: WriteBool| {
        knob_slot(ctx, knob, move || check(ctx, label, testid, get, set))
    };
    let granularity = enum_select(
        ctx,
        (Key::rc_granularity, "recompute-select"),
        RecomputeGranularity::ALL,
        RecomputeGranularity::wire,
        |g, lang| crate::messages::recompute_choice(lang, g),
        |f| f.recompute.granularity,
        |f, g| f.recompute.granularity = g,
    );
    let attention = move || {
        enum_select(
            ctx,
            (Key::rc_attention, "attention-select"),
            AttentionImpl::ALL,
            AttentionImpl::wire,
            |a, _| a.wire(),
            |f| f.attention,
            |f, a| f.attention = a,
        )
    };
    let modules = move || {
        view! {
            {check(ctx, Key::rc_modules_mlp, "rc-mlp-check", |f| module_on(f, "mlp"), |f, v| set_module(f, "mlp", v))}
            {check(ctx, Key::rc_modules_layernorm, "rc-layernorm-check", |f| module_on(f, "layernorm"), |f, v| set_module(f, "layernorm", v))}
            {check(ctx, Key::rc_modules_moe, "rc-moe-check", |f| module_on(f, "moe"), |f, v| set_module(f, "moe", v))}
        }
    };
    let act_fn_layers = move || {
        number(
            ctx,
            Key::rc_act_fn_layers,
            "act-fn-layers-input",
            NumField::ActFnLayers,
            placeholder(Key::placeholder_all),
        )
    };
    view! {
        <div class="grid3">
            {granularity}
            {slot_number(Knob::RecomputeLayers, Key::rc_layers, "recompute-layers-input", NumField::RecomputeLayers)}
            {knob_slot(ctx, Knob::Attention, attention)}
        </div>
        {slot_check(Knob::LigerKernel, Key::rc_liger, "liger-check", |f| f.liger_kernel, |f, v| f.liger_kernel = v)}
        {slot_check(Knob::ActivationFunction, Key::rc_act_fn, "act-fn-check", |f| f.recompute.activation_function, |f, v| f.recompute.activation_function = v)}
        {slot_check(Knob::SwapAttention, Key::rc_swap_attn, "swap-attn-check", |f| f.recompute.swap_attention, |f, v| f.recompute.swap_attention = v)}
        {slot_check(Knob::DistributeSavedActivations, Key::rc_distribute, "distribute-saved-check", |f| f.recompute.distribute_saved_activations, |f, v| f.recompute.distribute_saved_activations = v)}
        {knob_slot(ctx, Knob::RecomputeModules, modules)}
        <div class="grid3">
            {knob_slot(ctx, Knob::ActivationFunctionLayers, act_fn_layers)}
            {slot_number(Knob::CpuOffloadLayers, Key::rc_cpu_offload_layers, "cpu-offload-input", NumField::CpuOffloadLayers)}
            {slot_number(Knob::LayersRatio, Key::rc_layers_ratio, "layers-ratio-input", NumField::LayersRatio)}
        </div>
    }
}

/// Whether `recompute.modules` names `module`.
fn module_on(file: &PlanFile, module: &str) -> bool {
    file.recompute.modules.iter().any(|m| m == module)
}

/// Adds `module` to `recompute.modules` or takes it out.
fn set_module(file: &mut PlanFile, module: &str, on: bool) {
    let modules = &mut file.recompute.modules;
    modules.retain(|m| m != module);
    if on {
        modules.push(module.to_owned());
    }
}
