//! Calibration from a pasted training log: the core reads the step times and peak memory the run
//! printed (`logparse`) and fits the plan's calibration to them; the page says what it read.

use leptos::prelude::*;
use trainplan_core::logparse::{self, LogError, LogSource, LogSummary, PhaseCheck, StepPhase};
use trainplan_core::plan::Framework;

use crate::components::results::use_results;
use crate::form::NumField;
use crate::i18n::{Key, Lang, fill, t};
use crate::{format, messages};

/// What the last fit said.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    /// The log was read and the plan calibrated to it, with the RL prompts' and responses' mean
    /// lengths it took, whose run the log reads as where the plan's framework prints none of its
    /// lines, the phases it timed beside the plan's as modelled, and the generation's own factor
    /// where it timed the generation apart.
    Fitted(
        Box<LogSummary>,
        (Option<u32>, Option<u32>),
        Option<(LogSource, Framework)>,
        Vec<PhaseCheck>,
        Option<f64>,
    ),
    /// The log gave nothing to fit.
    Refused(LogError),
    /// The plan is not valid.
    NoPlan,
}

/// The paste box and what it read.
#[component]
pub fn LogCalibration() -> impl IntoView {
    let ctx = use_results();
    let text = RwSignal::new(String::new());
    let outcome: RwSignal<Option<Outcome>> = RwSignal::new(None);
    let fit = move |_| {
        let Ok(plan) = ctx.plan.get_untracked() else {
            outcome.set(Some(Outcome::NoPlan));
            return;
        };
        let res = text.with_untracked(|t| logparse::parse_for(&plan, t));
        outcome.set(Some(match res {
            Ok(summary) => {
                let fitted = logparse::calibrate(&plan, &summary);
                let means = logparse::logged_means(&plan, &summary);
                let other = logparse::another_frameworks_log(&plan, &summary).map(|s| (s, plan.framework));
                let phases = logparse::phase_check(&plan, &summary);
                ctx.form.update(|f| {
                    f.file.calibration = fitted;
                    // The form's typed text is what the plan takes (`PlanForm::to_plan`).
                    for (field, mean) in
                        [(NumField::MeanPromptLen, means.0), (NumField::MeanResponseLen, means.1)]
                    {
                        if let Some(mean) = mean {
                            f.set_number(field, mean.to_string());
                        }
                    }
                });
                let rollout = fitted.rollout_scale;
                Outcome::Fitted(Box::new(summary), means, other, phases, rollout)
            }
            Err(err) => Outcome::Refused(err),
        }));
    };
    let message = move || {
        outcome.with(|o| {
            let lines = outcome_lines(ctx.lang(), o.as_ref()?);
            Some(
                lines
                    .into_iter()
                    .map(|(line, bad)| view! { <p class:field-error=bad class:muted=!bad>{line}</p> })
                    .collect::<Vec<_>>(),
            )
        })
    };
    let phases = move || {
        outcome.with(|o| match o {
            Some(Outcome::Fitted(_, _, _, checks, _)) if !checks.is_empty() => {
                Some(phase_table(ctx.lang(), checks))
            }
            _ => None,
        })
    };
    view! {
        <section class="panel log-calibration" aria-labelledby="logcal-title">
            <h2 id="logcal-title" data-testid="logcal-title">{move || ctx.tr(Key::logcal_title)}</h2>
            <p class="muted">{move || ctx.tr(Key::logcal_hint)}</p>
            <textarea
                rows="6"
                wrap="off"
                spellcheck="false"
                data-testid="logcal-text"
                aria-label=move || ctx.tr(Key::logcal_label)
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
            ></textarea>
            <div class="row">
                <button data-testid="logcal-fit" disabled=move || text.with(|t| t.trim().is_empty()) on:click=fit>
                    {move || ctx.tr(Key::logcal_fit)}
                </button>
            </div>
            <div data-testid="logcal-result" role="status">{message}</div>
            {phases}
        </section>
    }
}

/// What a log's lines were recognized as, in words: `Megatron iteration lines: 5, memory reports: 1`.
fn recognized(lang: Lang, s: &LogSummary) -> String {
    let sep = match lang {
        Lang::En => ", ",
        Lang::Zh => "、",
    };
    [
        (s.megatron_lines, Key::logcal_megatron),
        (s.memory_lines, Key::logcal_memory),
        (s.hf_lines, Key::logcal_hf),
        (s.progress_lines, Key::logcal_progress),
        (s.verl_lines, Key::logcal_verl),
        (s.trainer_log_lines, Key::logcal_trainer_log),
        (s.deepspeed_lines, Key::logcal_deepspeed),
        (s.mindspeed_rl_lines, Key::logcal_mindspeed_rl),
    ]
    .into_iter()
    .filter(|&(n, _)| 0 < n)
    .map(|(n, key)| fill(t(lang, key), &[("n", &format::count(n as u64))]))
    .collect::<Vec<_>>()
    .join(sep)
}

/// The words for a phase: the step's parts' own.
fn phase_key(phase: StepPhase) -> Key {
    match phase {
        StepPhase::Generation => Key::bd_rollout,
        StepPhase::LogProb => Key::bd_log_prob,
        StepPhase::Critic => Key::bd_critic,
        StepPhase::Update => Key::tl_lane_update,
        StepPhase::WeightSync => Key::bd_weight_sync,
        StepPhase::ForwardBackward => Key::tl_part_pipeline,
        StepPhase::Optimizer => Key::bd_optimizer,
    }
}

/// A phase's key in the table (`data-phase`): its framework's timer's name.
fn phase_id(phase: StepPhase) -> &'static str {
    match phase {
        StepPhase::Generation => "gen",
        StepPhase::LogProb => "old_log_prob",
        StepPhase::Critic => "update_critic",
        StepPhase::Update => "update_actor",
        StepPhase::WeightSync => "update_weights",
        StepPhase::ForwardBackward => "forward-backward",
        StepPhase::Optimizer => "optimizer",
    }
}

/// The phases a log timed beside the plan's as modelled: which of the model's phases the run
/// parts from, where one fitted factor cannot say.
fn phase_table(lang: Lang, checks: &[PhaseCheck]) -> impl IntoView + use<> {
    let rows = checks
        .iter()
        .map(|c| {
            view! {
                <tr data-phase=phase_id(c.phase)>
                    <th scope="row">{t(lang, phase_key(c.phase))}</th>
                    <td>{format::seconds(c.logged_seconds)}</td>
                    <td>{format::seconds(c.planned_seconds)}</td>
                    <td>{format::times(c.ratio())}</td>
                </tr>
            }
        })
        .collect::<Vec<_>>();
    view! {
        <p class="muted">{t(lang, Key::logcal_phases)}</p>
        <table class="breakdown figures" data-testid="logcal-phases">
            <thead>
                <tr>
                    <th scope="col">{t(lang, Key::logcal_phase)}</th>
                    <th scope="col">{t(lang, Key::logcal_logged)}</th>
                    <th scope="col">{t(lang, Key::logcal_modelled)}</th>
                    <th scope="col">{t(lang, Key::logcal_ratio)}</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// What a fit said, line by line, each with whether it warns.
fn outcome_lines(lang: Lang, outcome: &Outcome) -> Vec<(String, bool)> {
    match outcome {
        Outcome::NoPlan => vec![(t(lang, Key::logcal_no_plan).to_owned(), true)],
        Outcome::Refused(LogError::Unrecognized) => {
            vec![(t(lang, Key::logcal_unrecognized).to_owned(), true)]
        }
        Outcome::Refused(LogError::NothingToFit(s)) => {
            vec![(fill(t(lang, Key::logcal_nothing), &[("what", &recognized(lang, s))]), true)]
        }
        Outcome::Fitted(s, (prompt, response), other, _, rollout) => {
            let mut lines =
                vec![(fill(t(lang, Key::logcal_found), &[("what", &recognized(lang, s))]), false)];
            if let Some((source, framework)) = other {
                let source = t(lang, messages::log_source_key(*source));
                let args = [("source", source), ("framework", framework.name())];
                lines.push((fill(t(lang, Key::logcal_other_framework), &args), true));
            }
            if let Some(step) = s.step_seconds {
                let used = s.steps_used();
                lines.push((
                    fill(
                        t(lang, Key::logcal_step),
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
                lines.push((fill(t(lang, Key::logcal_peak), &[("peak", &format::gib(peak))]), false));
            }
            for (mean, key) in [(prompt, Key::logcal_mean_prompt), (response, Key::logcal_mean_response)] {
                if let Some(mean) = mean {
                    let n = format::count(u64::from(*mean));
                    lines.push((fill(t(lang, key), &[("n", &n)]), false));
                }
            }
            if let Some(scale) = rollout {
                lines.push((fill(t(lang, Key::logcal_rollout), &[("scale", &format::scale(*scale))]), false));
            }
            lines.push((t(lang, Key::logcal_fitted).to_owned(), false));
            lines
        }
    }
}
