//! Time and cost to train: the token budget, price and PUE the plan carries (`budget`), the board
//! power of a custom device, and the core's figures for them (steps, wall-clock time, device-hours,
//! energy, cost).

use leptos::prelude::*;
use trainplan_core::choices;
use trainplan_core::plan::{BUDGET_TOKENS_MAX, BudgetFile};

use crate::components::TextField;
use crate::components::results::use_results;
use crate::form::PlanForm;
use crate::format;
use crate::i18n::{Key, fill};

/// The cost panel.
#[component]
pub fn CostPanel() -> impl IntoView {
    let ctx = use_results();
    let custom = move || ctx.form.with(|f| f.custom_hardware);
    let facts = move || {
        ctx.report.with(|r| {
            let c = &r.as_ref()?.cost;
            let energy = match c.energy_kwh {
                Some(kwh) => format::energy_kwh(kwh),
                None => ctx.tr(Key::cost_energy_unknown).to_owned(),
            };
            let price = match c.price {
                Some(p) => format::amount(p),
                None => ctx.tr(Key::cost_no_price).to_owned(),
            };
            let power = (0.0 < c.board_power_watts).then(|| {
                let key = if c.board_power_reported { Key::cost_power_reported } else { Key::cost_power_datasheet };
                fill(ctx.tr(key), &[("watts", &format::amount(c.board_power_watts)), ("pue", &format::amount(c.pue))])
            });
            let per_step = fill(
                ctx.tr(Key::cost_per_step),
                &[("tokens", &format::count_short(c.tokens_per_step as u64, ctx.lang()))],
            );
            let default_budget = c.default_budget_for_fine_tuning.then(|| {
                view! { <p class="badge warn" data-testid="cost-default-budget">{ctx.tr(Key::cost_default_budget)}</p> }
            });
            Some(view! {
                {default_budget}
                <dl class="facts">
                    <div>
                        <dt>{ctx.tr(Key::cost_budget)}</dt>
                        <dd data-testid="cost-budget">{format::count_short(c.budget_tokens as u64, ctx.lang())}</dd>
                    </div>
                    <div>
                        <dt>{ctx.tr(Key::cost_steps)}</dt>
                        <dd data-testid="cost-steps">
                            {format::count(c.steps)} <span class="muted">" · " {per_step}</span>
                        </dd>
                    </div>
                    <div>
                        <dt>{ctx.tr(Key::cost_wall)}</dt>
                        <dd data-testid="cost-wall">{format::duration(c.wall_seconds, ctx.lang())}</dd>
                    </div>
                    <div>
                        <dt>{ctx.tr(Key::cost_device_hours)}</dt>
                        <dd data-testid="cost-device-hours">{format::amount(c.device_hours)}</dd>
                    </div>
                    <div>
                        <dt>{ctx.tr(Key::cost_energy)}</dt>
                        <dd data-testid="cost-energy">{energy}</dd>
                    </div>
                    <div>
                        <dt>{ctx.tr(Key::cost_total)}</dt>
                        <dd data-testid="cost-price">{price}</dd>
                    </div>
                </dl>
                <p class="explain" data-testid="cost-power">{power}</p>
            })
        })
    };
    view! {
        <h2 data-testid="cost-title">{move || ctx.tr(Key::cost_title)}</h2>
        <p class="explain">{move || ctx.tr(Key::cost_hint)}</p>
        <div class="cost-inputs">
            <BudgetField label=Key::cost_tokens testid="cost-tokens" bad=Key::cost_bad_tokens show=show_tokens apply=apply_tokens />
            <BudgetField label=Key::cost_dataset testid="cost-dataset" bad=Key::cost_bad_dataset show=show_dataset apply=apply_dataset />
            <BudgetField label=Key::cost_epochs testid="cost-epochs" bad=Key::cost_bad_epochs show=show_epochs apply=apply_epochs />
            <BudgetField label=Key::cost_price testid="cost-price-input" bad=Key::cost_bad_price show=show_price apply=apply_price />
            <BudgetField label=Key::cost_pue testid="cost-pue" bad=Key::cost_bad_pue show=show_pue apply=apply_pue />
            <Show when=custom>
                <BudgetField label=Key::cost_power testid="cost-power-input" bad=Key::cost_bad_power show=show_power apply=apply_power />
            </Show>
        </div>
        <div data-testid="cost-panel">{facts}</div>
    }
}

fn show_tokens(f: &PlanForm) -> String {
    format::count_typed(f.file.budget.tokens)
}

fn apply_tokens(f: &mut PlanForm, text: &str) -> bool {
    let n = format::parse_count(text, BUDGET_TOKENS_MAX);
    if let Some(n) = n {
        f.file.budget.tokens = n;
    }
    n.is_some()
}

fn show_dataset(f: &PlanForm) -> String {
    match f.file.budget.dataset_tokens {
        0 => String::new(),
        n => format::count_typed(n),
    }
}

fn apply_dataset(f: &mut PlanForm, text: &str) -> bool {
    let n = match text.trim() {
        "" => Some(0),
        text => format::parse_count(text, BUDGET_TOKENS_MAX),
    };
    if let Some(n) = n {
        f.file.budget.dataset_tokens = n;
    }
    n.is_some()
}

fn show_epochs(f: &PlanForm) -> String {
    f.file.budget.epochs.to_string()
}

fn apply_epochs(f: &mut PlanForm, text: &str) -> bool {
    budget_number(f, text, None, |b, x| b.epochs = x)
}

fn show_price(f: &PlanForm) -> String {
    let x = f.file.budget.price_per_device_hour;
    if 0.0 < x { x.to_string() } else { String::new() }
}

fn apply_price(f: &mut PlanForm, text: &str) -> bool {
    budget_number(f, text, Some(0.0), |b, x| b.price_per_device_hour = x)
}

fn show_pue(f: &PlanForm) -> String {
    f.file.budget.pue.to_string()
}

fn apply_pue(f: &mut PlanForm, text: &str) -> bool {
    budget_number(f, text, None, |b, x| b.pue = x)
}

fn show_power(f: &PlanForm) -> String {
    f.custom.base.board_power_w.map(|x| x.to_string()).unwrap_or_default()
}

fn apply_power(f: &mut PlanForm, text: &str) -> bool {
    let x = match text.trim() {
        "" => Some(None),
        text => number(text).filter(|x| (0.0..=100_000.0).contains(x)).map(Some),
    };
    if let Some(x) = x {
        f.custom.base.board_power_w = x;
    }
    x.is_some()
}

/// The typed number (`empty` for empty text) set into the form's budget by `set`, kept when the plan
/// file takes it; whether it was kept.
fn budget_number(f: &mut PlanForm, text: &str, empty: Option<f64>, set: fn(&mut BudgetFile, f64)) -> bool {
    let x = match text.trim() {
        "" => empty,
        text => number(text),
    };
    x.is_some_and(|x| take_budget(f, |b| set(b, x)))
}

/// The form's budget with `edit` made, kept when the plan file takes it (`choices::takes_budget`,
/// the core's own bounds); whether it was kept.
fn take_budget(f: &mut PlanForm, edit: impl FnOnce(&mut BudgetFile)) -> bool {
    let mut budget = f.file.budget;
    edit(&mut budget);
    let takes = choices::takes_budget(&budget);
    if takes {
        f.file.budget = budget;
    }
    takes
}

/// A finite number as typed.
fn number(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

/// One budget figure: shows the plan's value, and what the user types while it is what the plan
/// holds; text it refuses stays on screen with its message, and the plan keeps its last good value.
#[component]
fn BudgetField(
    /// The label.
    label: Key,
    /// The input's `data-testid`.
    testid: &'static str,
    /// The message for refused text.
    bad: Key,
    /// The form's value as text.
    show: fn(&PlanForm) -> String,
    /// Writes the text into the form; false when the text is refused (the form unchanged).
    apply: fn(&mut PlanForm, &str) -> bool,
) -> impl IntoView {
    let ctx = use_results();
    // What was typed, whether it was taken, and the form's text right after: the typed text shows
    // while the form still holds that value (a reset or a link replaces it).
    let typed: RwSignal<Option<(String, bool, String)>> = RwSignal::new(None);
    let current = move || {
        let now = ctx.form.with(show);
        typed.with(|t| match t {
            Some((text, ok, at)) if *at == now => (text.clone(), !ok),
            _ => (now, false),
        })
    };
    view! {
        <TextField
            label=Signal::derive(move || ctx.tr(label).to_owned())
            testid=testid
            value=Signal::derive(move || current().0)
            invalid=Signal::derive(move || current().1)
            message=Signal::derive(move || ctx.tr(bad).to_owned())
            on_input=move |text: String| {
                let mut next = ctx.form.get_untracked();
                let ok = apply(&mut next, &text);
                if ok {
                    ctx.form.set(next);
                }
                let at = ctx.form.with_untracked(show);
                typed.set(Some((text, ok, at)));
            }
            numeric=true
        />
    }
}
