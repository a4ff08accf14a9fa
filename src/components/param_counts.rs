//! Exact parameter counts by component and layer, what the method trains (`ParamCounts`), and the
//! weight bytes each device holds under ZeRO-3 (`DeviceWeights`), all from the report.

use leptos::prelude::*;
use trainplan_core::report::ParamsReport;

use crate::components::results::{ResultsCtx, use_results};
use crate::i18n::{Key, fill};
use crate::{format, messages};

/// The parameter counts: the total, active and trainable, the breakdown by component and the
/// layers.
#[component]
pub fn ParamCounts() -> impl IntoView {
    let ctx = use_results();
    // The counts alone: they change with the model and method, not with each keystroke.
    let params = Memo::new(move |_| ctx.report.with(|r| r.as_ref().map(|r| r.params.clone())));
    let value = move |pick: fn(&ParamsReport) -> u64| params.with(|p| p.as_ref().map(pick));
    let total = move || value(|p| p.total);
    let is_moe = move || params.with(|p| p.as_ref().is_some_and(|p| p.active != p.total));
    let method = move || ctx.plan.with(|p| p.as_ref().ok().map(|p| p.method));
    let trainable_share = move || params.with(|p| p.as_ref().map(|p| format::share(p.trainable, p.total)));
    let mtp = move || value(|p| p.mtp).filter(|&n| 0 < n);
    let vision = move || value(|p| p.vision).filter(|&n| 0 < n);
    view! {
        <h2>{move || ctx.tr(Key::params_title)}</h2>
        <div class="headline">
            <span class="label">{move || ctx.tr(Key::params_total)}</span>
            <span class="big" data-testid="params-total">{move || total().map(format::count)}</span>
            <span class="short" data-testid="params-total-short">
                {move || total().map(|n| format::count_short(n, ctx.lang()))}
            </span>
        </div>
        <dl class="facts">
            <Show when=is_moe>
                <div>
                    <dt>{move || ctx.tr(Key::params_active)}</dt>
                    <dd data-testid="params-active">
                        {move || value(|p| p.active).map(format::count)}
                        <span class="muted">
                            " · " {move || value(|p| p.active).map(|n| format::count_short(n, ctx.lang()))}
                        </span>
                    </dd>
                </div>
            </Show>
            <div>
                <dt>
                    {move || ctx.tr(Key::params_trainable)} " · " {move || method().map(|m| ctx.tr(messages::method_key(m)))}
                </dt>
                <dd data-testid="params-trainable">
                    {move || value(|p| p.trainable).map(format::count)}
                    <span class="muted">" · " {trainable_share}</span>
                </dd>
            </div>
        </dl>
        <table class="breakdown" data-testid="params-breakdown">
            <thead>
                <tr>
                    <th scope="col">{move || ctx.tr(Key::params_component)}</th>
                    <th scope="col" class="num">{move || ctx.tr(Key::params_count)}</th>
                    <th scope="col" class="num">{move || ctx.tr(Key::params_share)}</th>
                </tr>
            </thead>
            <tbody>{move || component_rows(ctx, params)}</tbody>
            <tbody class="layers">
                <tr>
                    <th scope="rowgroup" colspan="3" class="group">{move || ctx.tr(Key::params_layers)}</th>
                </tr>
                {move || layer_rows(ctx, params)}
            </tbody>
            <Show when=move || mtp().is_some() || vision().is_some()>
                <tfoot>
                    {counted_apart(ctx, Key::params_mtp, "params-mtp", mtp)}
                    {counted_apart(ctx, Key::params_vision, "params-vision", vision)}
                </tfoot>
            </Show>
        </table>
    }
}

/// A row of parameters outside the total (MTP layers, a vision encoder), where the model has them.
fn counted_apart(
    ctx: ResultsCtx,
    label: Key,
    testid: &'static str,
    count: impl Fn() -> Option<u64> + Copy + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <Show when=move || count().is_some()>
            <tr>
                <th scope="row">{move || ctx.tr(label)}</th>
                <td class="num" data-testid=testid>{move || count().map(format::count)}</td>
                <td></td>
            </tr>
        </Show>
    }
}

/// A row per component the model has (embedding, attention, MLP or experts, …): its count and
/// share of the total; a tied head says so.
fn component_rows(ctx: ResultsCtx, params: Memo<Option<ParamsReport>>) -> Vec<impl IntoView> {
    let Some(p) = params.get() else { return Vec::new() };
    [
        (Key::params_embedding, p.embedding, true),
        (Key::params_attention, p.attention, true),
        (Key::params_mlp, p.mlp, 0 < p.mlp),
        (Key::params_experts, p.experts, 0 < p.experts),
        (Key::params_shared_experts, p.shared_experts, 0 < p.shared_experts),
        (Key::params_router, p.router, 0 < p.router),
        (Key::params_norms, p.norms, true),
        (Key::params_head, p.head, true),
    ]
    .into_iter()
    .filter(|&(_, _, shown)| shown)
    .map(|(key, n, _)| {
        let (count, share) = match (key, n) {
            (Key::params_head, 0) => (ctx.tr(Key::params_head_tied).to_owned(), String::new()),
            _ => (format::count(n), format::share(n, p.total)),
        };
        view! {
            <tr>
                <th scope="row">{ctx.tr(key)}</th>
                <td class="num">{count}</td>
                <td class="num">{share}</td>
            </tr>
        }
    })
    .collect()
}

/// A row per kind of layer (dense, MoE; Gated DeltaNet apart): how many, and the parameters of each.
fn layer_rows(ctx: ResultsCtx, params: Memo<Option<ParamsReport>>) -> Vec<impl IntoView> {
    let Some(p) = params.get() else { return Vec::new() };
    p.layers
        .iter()
        .map(|l| {
            let kind = match (l.kind == "moe", l.linear_attention) {
                (true, false) => Key::params_moe_layer,
                (true, true) => Key::params_moe_linear_layer,
                (false, false) => Key::params_dense_layer,
                (false, true) => Key::params_dense_linear_layer,
            };
            let each = fill(
                ctx.tr(Key::params_each),
                &[("n", &l.n_layers.to_string()), ("params", &format::count(l.params_per_layer))],
            );
            view! {
                <tr>
                    <th scope="row">{ctx.tr(kind)}</th>
                    <td class="num" colspan="2">{each}</td>
                </tr>
            }
        })
        .collect()
}

/// The bf16 weights each device holds with ZeRO-3, in GiB and bytes, and their share of its memory.
#[component]
pub fn DeviceWeights() -> impl IntoView {
    let ctx = use_results();
    let weights =
        move || ctx.report.with(|r| r.as_ref().map(|r| r.memory.zero3_bf16_weight_bytes_per_device));
    let capacity_share = move || {
        ctx.report.with(|r| {
            r.as_ref().map(|r| {
                let share =
                    format::share(r.memory.zero3_bf16_weight_bytes_per_device, r.hardware.memory_bytes);
                let capacity = format::gib(r.hardware.memory_bytes);
                format!("{share} {}", fill(ctx.tr(Key::weights_of_capacity), &[("capacity", &capacity)]))
            })
        })
    };
    view! {
        <h2>{move || ctx.tr(Key::weights_title)}</h2>
        <div class="headline">
            <span class="label">{move || ctx.tr(Key::weights_zero3)}</span>
            <span class="big" data-testid="weights-per-device">{move || weights().map(format::gib)}</span>
            <span class="short" data-testid="weights-per-device-bytes">
                {move || weights().map(format::count)} " " {move || ctx.tr(Key::weights_bytes)}
            </span>
            <span class="short">{capacity_share}</span>
        </div>
        <p class="explain">{move || ctx.tr(Key::weights_explain)}</p>
    }
}
