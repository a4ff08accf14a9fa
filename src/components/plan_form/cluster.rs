//! The form's cluster: nodes × devices per node, the scale-up domain, the memory margin, and the
//! devices they make.

use leptos::prelude::*;

use super::FormCtx;
use super::controls::number;
use crate::components::use_tr;
use crate::form::NumField;
use crate::i18n::{Key, fill};

/// The cluster section.
#[component]
pub fn ClusterSection(
    /// The form's shared state.
    ctx: FormCtx,
) -> impl IntoView {
    let tr = use_tr();
    let plan = ctx.plan;
    let n_devices =
        move || plan.with(|p| p.as_ref().ok().map(|p| crate::format::count(p.cluster.n_devices())));
    let default_devices = move || {
        plan.with(|p| match p {
            Ok(plan) => fill(
                tr(Key::plan_form_devices_default),
                &[("n", &plan.hardware.hw.devices_per_node.to_string())],
            ),
            Err(_) => String::new(),
        })
    };
    let scale_up =
        move || plan.with(|p| p.as_ref().map(|p| p.cluster.scale_up_domain.to_string()).unwrap_or_default());
    let margin = move || {
        fill(
            tr(Key::plan_form_margin_default),
            &[("frac", &trainplan_core::memory::ALLOCATOR_RESERVE_FRAC.to_string())],
        )
    };
    view! {
        <section class="panel" aria-labelledby="cluster-title">
            <h2 id="cluster-title">{move || tr(Key::cluster_title)}</h2>
            <div class="row cluster-row">
                {number(ctx, Key::plan_form_nodes, "nodes-input", NumField::Nodes, None)}
                <span class="times" aria-hidden="true">"×"</span>
                {number(ctx, Key::plan_form_devices_per_node, "devices-input", NumField::DevicesPerNode, Some(Signal::derive(default_devices)))}
                {number(ctx, Key::plan_form_scale_up, "scale-up-input", NumField::ScaleUp, Some(Signal::derive(scale_up)))}
                {number(ctx, Key::plan_form_margin, "memory-margin-input", NumField::MemoryMargin, Some(Signal::derive(margin)))}
            </div>
            <p class="total-devices">
                {move || tr(Key::plan_form_n_devices)} ": "
                <strong data-testid="n-devices">{move || n_devices().unwrap_or_else(|| "–".to_owned())}</strong>
            </p>
        </section>
    }
}
