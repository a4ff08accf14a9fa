//! What the chosen framework will refuse or warn about, errors first, each with its fix one click away.

use leptos::prelude::*;
use trainplan_core::report::Severity;
use trainplan_core::rules;

use crate::components::results::use_results;
use crate::form::PlanForm;
use crate::i18n::{Key, fill};
use crate::messages;

/// The findings list: the report's broken rules about the plan; a fix rewrites the form.
#[component]
pub fn FindingsPanel() -> impl IntoView {
    let ctx = use_results();
    // The search found no plan that fits and keeps every rule (until the plan changes).
    let no_valid = RwSignal::new(false);
    Effect::new(move |_| {
        ctx.plan.track();
        no_valid.set(false);
    });
    // The findings alone: a keystroke that leaves them as they were rebuilds nothing here.
    let findings = Memo::new(move |_| ctx.report.with(|r| r.as_ref().map(|r| r.findings.clone())));
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
                let text = messages::finding(ctx.lang(), &finding);
                let fix = finding.fix.clone().map(|fix| {
                    let field = messages::field_label(ctx.lang(), fix.field);
                    let value = messages::value_text(ctx.lang(), Some(fix.field), &fix.value);
                    let label = fill(ctx.tr(Key::findings_apply), &[("field", &field), ("value", &value)]);
                    let apply = move |_| {
                        let Ok(current) = ctx.plan.get_untracked() else { return };
                        if let Ok(fixed) = rules::apply(&current, &fix) {
                            ctx.form.set(PlanForm::from_plan(&fixed));
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
                        let Ok(current) = ctx.plan.get_untracked() else { return };
                        match trainplan_core::fixes::make_valid(&current)
                            .and_then(|changes| rules::apply_all(&current, &changes).ok())
                        {
                            Some(valid) => ctx.form.set(PlanForm::from_plan(&valid)),
                            None => no_valid.set(true),
                        }
                    };
                    view! {
                        <button class="secondary fix" data-testid=format!("make-valid-{}", finding.code) on:click=run>
                            {ctx.tr(Key::findings_make_valid)}
                        </button>
                    }
                });
                view! {
                    <li class=class data-testid=format!("finding-{}", finding.code)>
                        <span class="sev">{ctx.tr(key)}</span>
                        <span class="text">{text}</span>
                        {fix}
                        {make_valid}
                    </li>
                }
            })
            .collect::<Vec<_>>()
    };
    let none = move || ctx.report.with(|r| r.as_ref().is_some_and(|r| r.findings.is_empty()));
    view! {
        <h2>{move || ctx.tr(Key::findings_title)}</h2>
        <Show when=move || no_valid.get()>
            <p class="note" data-testid="make-valid-none">{move || ctx.tr(Key::findings_no_valid)}</p>
        </Show>
        <Show when=none fallback=move || view! { <ul class="findings" data-testid="findings">{items}</ul> }>
            <p class="badge ok" data-testid="findings-none">{move || ctx.tr(Key::findings_none)}</p>
        </Show>
    }
}
