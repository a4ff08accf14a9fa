//! Fits the planner to a measured run: step time (and peak memory) in, factors into the plan.

use leptos::prelude::*;

use super::FormCtx;
use crate::components::{TextField, use_tr};
use crate::format;
use crate::i18n::{Key, fill};

/// The calibration panel.
#[component]
pub fn CalibrationPanel(
    /// The form's shared state; the fitted factors go into its plan file.
    ctx: FormCtx,
) -> impl IntoView {
    let tr = use_tr();
    let (form, plan) = (ctx.form, ctx.plan);
    let step = RwSignal::new(String::new());
    let peak = RwSignal::new(String::new());
    let positive = |text: &str| text.trim().parse::<f64>().ok().filter(|x| x.is_finite() && 0.0 < *x);
    let step_bad = move || step.with(|t| !t.trim().is_empty() && positive(t).is_none());
    let peak_bad = move || peak.with(|t| !t.trim().is_empty() && positive(t).is_none());
    let fit = move |_| {
        let (Ok(plan), Some(seconds)) = (plan.get_untracked(), step.with_untracked(|t| positive(t))) else {
            return;
        };
        let peak_bytes = peak.with_untracked(|t| positive(t)).map(format::bytes_of_gib);
        let fitted = trainplan_core::calibrate(&plan, Some(seconds), peak_bytes);
        form.update(|f| f.file.calibration = fitted);
    };
    let current = move || {
        form.with(|f| {
            let c = f.file.calibration;
            let rollout = c.rollout_scale.map_or_else(String::new, |r| {
                fill(tr(Key::cal_current_rollout), &[("scale", &format::scale(r))])
            });
            match (c.efficiency_scale, c.memory_offset_mib) {
                (None, None) if rollout.is_empty() => tr(Key::cal_none).to_owned(),
                _ => {
                    let (scale, offset) = (
                        format::scale(c.efficiency()),
                        format::signed_gib_of_mib(c.memory_offset_mib.unwrap_or(0.0)),
                    );
                    fill(tr(Key::cal_current), &[("scale", &scale), ("offset", &offset)]) + &rollout
                }
            }
        })
    };
    view! {
        <section class="panel" aria-labelledby="calibration-title">
            <h2 id="calibration-title">{move || tr(Key::cal_title)}</h2>
            <p class="muted">{move || tr(Key::cal_hint)}</p>
            <div class="row">
                <TextField
                    label=Signal::derive(move || tr(Key::cal_step).to_owned())
                    testid="calibration-step"
                    value=Signal::derive(move || step.get())
                    invalid=Signal::derive(step_bad)
                    message=Signal::derive(move || tr(Key::cal_bad).to_owned())
                    on_input=move |text| step.set(text)
                    numeric=true
                />
                <TextField
                    label=Signal::derive(move || tr(Key::cal_peak).to_owned())
                    testid="calibration-peak"
                    value=Signal::derive(move || peak.get())
                    invalid=Signal::derive(peak_bad)
                    message=Signal::derive(move || tr(Key::cal_bad).to_owned())
                    on_input=move |text| peak.set(text)
                    numeric=true
                />
            </div>
            <div class="row">
                <button data-testid="calibration-fit" on:click=fit>{move || tr(Key::cal_fit)}</button>
                <button class="secondary" data-testid="calibration-reset" on:click=move |_| form.update(|f| f.file.calibration = Default::default())>
                    {move || tr(Key::cal_reset)}
                </button>
            </div>
            <p class="muted" data-testid="calibration-current">{current}</p>
        </section>
    }
}
