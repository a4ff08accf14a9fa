//! The form's MoE settings, for models with experts: token dispatcher, fused kernels, overlap,
//! capacity and the router's imbalance.

use leptos::prelude::*;
use trainplan_core::knobs::Knob;
use trainplan_core::plan::MoeDispatcher;

use super::FormCtx;
use super::controls::{ReadBool, WriteBool, check, enum_select, knob_slot, number, placeholder};
use crate::form::NumField;
use crate::i18n::Key;

/// The MoE knobs, inside the parallelism section.
#[component]
pub fn MoeKnobs(
    /// The form's shared state.
    ctx: FormCtx,
) -> impl IntoView {
    let slot_check = move |knob: Knob, label: Key, testid: &'static str, get: ReadBool, set: WriteBool| {
        knob_slot(ctx, knob, move || check(ctx, label, testid, get, set))
    };
    let dispatcher = move || {
        enum_select(
            ctx,
            (Key::moe_dispatcher, "moe-dispatcher-select"),
            MoeDispatcher::ALL,
            MoeDispatcher::wire,
            |k, _| k.wire(),
            |f| f.moe.dispatcher,
            |f, k| f.moe.dispatcher = k,
        )
    };
    let capacity = move || {
        number(
            ctx,
            Key::moe_capacity,
            "moe-capacity-input",
            NumField::MoeCapacity,
            placeholder(Key::moe_dropless),
        )
    };
    view! {
        {knob_slot(ctx, Knob::MoeDispatcher, dispatcher)}
        {slot_check(Knob::MoeGroupedGemm, Key::moe_grouped_gemm, "moe-grouped-gemm-check", |f| f.moe.grouped_gemm, |f, v| f.moe.grouped_gemm = v)}
        {slot_check(Knob::MoePermuteFusion, Key::moe_permute_fusion, "moe-permute-fusion-check", |f| f.moe.permute_fusion, |f, v| f.moe.permute_fusion = v)}
        {slot_check(Knob::MoeOverlapEpComm, Key::moe_overlap_ep_comm, "moe-overlap-check", |f| f.moe.overlap_ep_comm, |f, v| f.moe.overlap_ep_comm = v)}
        {slot_check(Knob::MoePadToCapacity, Key::moe_pad_to_capacity, "moe-pad-check", |f| f.moe.pad_to_capacity, |f, v| f.moe.pad_to_capacity = v)}
        <div class="grid3">
            {knob_slot(ctx, Knob::MoeCapacity, capacity)}
            {knob_slot(ctx, Knob::MoeImbalance, move || number(ctx, Key::moe_imbalance, "moe-imbalance-input", NumField::MoeImbalance, None))}
        </div>
    }
}
