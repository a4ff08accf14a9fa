//! What the chosen framework will refuse or warn about, errors first, each with its fix one click away.

use leptos::prelude::*;
use trainplan_core::report::Severity;
use trainplan_core::{Plan, Report, rules};

use crate::components::{use_lang, use_tr};
use crate::form::{FormError, PlanForm};
use crate::i18n::{Key, fill};
use crate::messages;

/// The findings list.
#[component]
pub fn FindingsPanel(
    /// The form, which a fix rewrites.
    form: RwSignal<PlanForm>,
    /// The plan the findings are about.
    #[prop(into)]
    plan: Signal<Result<Plan, FormError>>,
    /// The report carrying the findings.
    #[prop(into)]
    report: Signal<Option<Report>>,
) -> impl IntoView {
    let tr = use_tr();
    let lang = use_lang();
    // The search found no plan that fits and keeps every rule (until the plan changes).
    let no_valid = RwSignal::new(false);
    Effect::new(move |_| {
        plan.track();
        no_valid.set(false);
    });
    // The findings alone: a keystroke that leaves them as they were rebuilds nothing here.
    let findings = Memo::new(move |_| report.with(|r| r.as_ref().map(|r| r.findings.clone())));
    let items = move || {
        let Some(findings) = findings.get() else { return Vec::new() };
        findings
            .into_iter()
            .map(|finding| {
                let (class, key) = match finding.severity {
                    Severity::Error => ("finding error-sev", Key::severity_error),
                    Severity::Warning => ("finding warning-sev", Key::severity_warning),
                    Severity::Note => ("finding note-sev", Key::severity_note),
                };
                let text = messages::finding(lang.get(), &finding);
                let fix = finding.fix.clone().map(|fix| {
                    let field = messages::field_label(lang.get(), fix.field);
                    let label = fill(tr(Key::findings_apply), &[("field", &field), ("value", &fix.value.to_string())]);
                    let apply = move |_| {
                        let Ok(current) = plan.get_untracked() else { return };
                        if let Ok(fixed) = rules::apply(&current, &fix) {
                            form.set(PlanForm::from_plan(&fixed));
                        }
                    };
                    view! {
                        <button class="secondary fix" data-testid=format!("fix-{}", finding.code) on:click=apply>
                            {label}
                        </button>
                    }
                });
                // No single change resolves it without breaking another rule: the search's nearest
                // plan that fits and keeps every rule, found when asked (it takes a search).
                let make_valid = finding.make_valid.then(|| {
                    let run = move |_| {
                        let Ok(current) = plan.get_untracked() else { return };
                        match trainplan_core::fixes::make_valid(&current)
                            .and_then(|changes| rules::apply_all(&current, &changes).ok())
                        {
                            Some(valid) => form.set(PlanForm::from_plan(&valid)),
                            None => no_valid.set(true),
                        }
                    };
                    view! {
                        <button class="secondary fix" data-testid=format!("make-valid-{}", finding.code) on:click=run>
                            {tr(Key::findings_make_valid)}
                        </button>
                    }
                });
                view! {
                    <li class=class data-testid=format!("finding-{}", finding.code)>
                        <span class="sev">{tr(key)}</span>
                        <span class="text">{text}</span>
                        {fix}
                        {make_valid}
                    </li>
                }
            })
            .collect::<Vec<_>>()
    };
    let none = move || report.with(|r| r.as_ref().is_some_and(|r| r.findings.is_empty()));
    view! {
        <h2>{move || tr(Key::findings_title)}</h2>
        <Show when=move || no_valid.get()>
            <p class="note" data-testid="make-valid-none">{move || tr(Key::findings_no_valid)}</p>
        </Show>
        <Show when=none fallback=move || view! { <ul class="findings" data-testid="findings">{items}</ul> }>
            <p class="badge ok" data-testid="findings-none">{move || tr(Key::findings_none)}</p>
        </Show>
    }
}
