//! Tuning advice from the core, best first: what each move does, its computed effect on the peak
//! and the speed, and a button that applies it.

use leptos::prelude::*;
use trainplan_core::{advice, rules};

use crate::components::results::use_results;
use crate::form::PlanForm;
use crate::i18n::{Key, fill};
use crate::{format, messages};

/// The advice list, about the settled plan (the plan once typing pauses).
#[component]
pub fn AdvicePanel() -> impl IntoView {
    let ctx = use_results();
    // Its own memo: each piece of advice evaluates a changed plan, work the report does not need.
    let advice = Memo::new(move |_| {
        ctx.settled.with(|p| {
            let p = p.as_ref().ok()?;
            let mut list = advice::advise(p);
            // The search's fastest plan first, while the plan is the one it searched from.
            let best = ctx.searched.with(|s| {
                s.as_ref().filter(|(from, _)| from == p).and_then(|(_, r)| advice::from_search(p, r))
            });
            if let Some(best) = best {
                list.insert(0, best);
            }
            Some(list)
        })
    });
    // Until the plan settles the advice is the plan before's: its panel is dimmed and takes no
    // pointer (`ParamsPanel`), and its buttons are off for the keyboard too.
    let settling = Memo::new(move |_| ctx.settling());
    let items = move || {
        let Some(advice) = advice.get() else { return Vec::new() };
        advice
            .into_iter()
            .map(|a| {
                let (text, why) = messages::advice(ctx.lang(), a.code);
                let peak = fill(ctx.tr(Key::advice_peak), &[
                    ("peak", &format::gib(a.peak_bytes)),
                    ("delta", &format::signed_gib(a.peak_delta_bytes)),
                ]);
                let speed = fill(ctx.tr(Key::advice_speed), &[("delta", &format::signed_percent(a.speed_delta_frac))]);
                let (fit_class, fit_key) = match a.fits {
                    true => ("badge ok", Key::advice_fits),
                    false => ("badge bad", Key::advice_short),
                };
                let changes = messages::changes(ctx.lang(), &a.changes);
                let code = a.code;
                let apply = move |_| {
                    let Ok(current) = ctx.settled.get_untracked() else { return };
                    if let Ok(next) = rules::apply_all(&current, &a.changes) {
                        ctx.form.set(PlanForm::from_plan(&next));
                    }
                };
                view! {
                    <li class="advice" data-testid=format!("advice-{code}")>
                        <details class="text">
                            <summary>{text}</summary>
                            <p class="why"><strong>{ctx.tr(Key::advice_why_label)}" "</strong>{why}</p>
                        </details>
                        <code class="changes">{changes}</code>
                        <span class="effect">{peak}" · "{speed}</span>
                        <span class=fit_class>{ctx.tr(fit_key)}</span>
                        <button class="secondary fix" data-testid=format!("advice-apply-{code}") on:click=apply
                            disabled=settling>
                            {ctx.tr(Key::advice_apply)}
                        </button>
                    </li>
                }
            })
            .collect::<Vec<_>>()
    };
    let none = move || advice.with(|a| a.as_ref().is_some_and(Vec::is_empty));
    view! {
        <h2>{move || ctx.tr(Key::advice_title)}</h2>
        <Show when=none fallback=move || view! { <ul class="advice-list" data-testid="advice">{items}</ul> }>
            <p class="muted" data-testid="advice-none">{move || ctx.tr(Key::advice_none)}</p>
        </Show>
    }
}
