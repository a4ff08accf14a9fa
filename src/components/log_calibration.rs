//! Calibration from a pasted training log: the core reads the step times and peak memory the run
//! printed (`logparse`) and fits the plan's calibration to them; the page says what it read.

use leptos::prelude::*;
use trainplan_core::Plan;
use trainplan_core::logparse::{self, LogError, LogSummary};

use crate::components::{use_lang, use_tr};
use crate::form::{FormError, PlanForm};
use crate::format;
use crate::i18n::{Key, Lang, fill};

/// What the last fit said.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    /// The log was read and the plan calibrated to it.
    Fitted(LogSummary),
    /// The log gave nothing to fit.
    Refused(LogError),
    /// The plan is not valid.
    NoPlan,
}

/// The paste box and what it read.
#[component]
pub fn LogCalibration(
    /// The form state; the fitted factors go into its plan file.
    form: RwSignal<PlanForm>,
    /// The current plan.
    #[prop(into)]
    plan: Signal<Result<Plan, FormError>>,
) -> impl IntoView {
    let tr = use_tr();
    let lang = use_lang();
    let text = RwSignal::new(String::new());
    let outcome: RwSignal<Option<Outcome>> = RwSignal::new(None);
    let fit = move |_| {
        let Ok(plan) = plan.get_untracked() else {
            outcome.set(Some(Outcome::NoPlan));
            return;
        };
        let res = text.with_untracked(|t| logparse::parse(t));
        outcome.set(Some(match res {
            Ok(summary) => {
                let fitted = logparse::calibrate(&plan, &summary);
                form.update(|f| f.file.calibration = fitted);
                Outcome::Fitted(summary)
            }
            Err(err) => Outcome::Refused(err),
        }));
    };
    let recognized = move |s: &LogSummary| {
        let sep = match lang.get() {
            Lang::En => ", ",
            Lang::Zh => "、",
        };
        [
            (s.megatron_lines, Key::logcal_megatron),
            (s.memory_lines, Key::logcal_memory),
            (s.hf_lines, Key::logcal_hf),
            (s.progress_lines, Key::logcal_progress),
            (s.verl_lines, Key::logcal_verl),
        ]
        .into_iter()
        .filter(|&(n, _)| 0 < n)
        .map(|(n, key)| fill(tr(key), &[("n", &format::count(n as u64))]))
        .collect::<Vec<_>>()
        .join(sep)
    };
    let message = move || {
        outcome.with(|o| {
            let lines: Vec<(String, bool)> = match o.as_ref()? {
                Outcome::NoPlan => vec![(tr(Key::logcal_no_plan).to_owned(), true)],
                Outcome::Refused(LogError::Unrecognized) => {
                    vec![(tr(Key::logcal_unrecognized).to_owned(), true)]
                }
                Outcome::Refused(LogError::NothingToFit(s)) => {
                    vec![(fill(tr(Key::logcal_nothing), &[("what", &recognized(s))]), true)]
                }
                Outcome::Fitted(s) => {
                    let mut lines = vec![(fill(tr(Key::logcal_found), &[("what", &recognized(s))]), false)];
                    if let Some(step) = s.step_seconds {
                        let used = s.step_samples - s.skipped;
                        lines.push((
                            fill(
                                tr(Key::logcal_step),
                                &[
                                    ("step", &format::seconds(step)),
                                    ("used", &format::count(used as u64)),
                                    ("skipped", &format::count(s.skipped as u64)),
                                ],
                            ),
                            false,
                        ));
                    }
                    if let Some(peak) = s.peak_allocated_bytes {
                        lines.push((fill(tr(Key::logcal_peak), &[("peak", &format::gib(peak))]), false));
                    }
                    lines.push((tr(Key::logcal_fitted).to_owned(), false));
                    lines
                }
            };
            Some(
                lines
                    .into_iter()
                    .map(|(line, bad)| view! { <p class:field-error=bad class:muted=!bad>{line}</p> })
                    .collect::<Vec<_>>(),
            )
        })
    };
    view! {
        <section class="panel log-calibration" aria-labelledby="logcal-title">
            <h2 id="logcal-title" data-testid="logcal-title">{move || tr(Key::logcal_title)}</h2>
            <p class="muted">{move || tr(Key::logcal_hint)}</p>
            <textarea
                rows="6"
                wrap="off"
                spellcheck="false"
                data-testid="logcal-text"
                aria-label=move || tr(Key::logcal_label)
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
            ></textarea>
            <div class="row">
                <button data-testid="logcal-fit" disabled=move || text.with(|t| t.trim().is_empty()) on:click=fit>
                    {move || tr(Key::logcal_fit)}
                </button>
            </div>
            <div data-testid="logcal-result" role="status">{message}</div>
        </section>
    }
}
