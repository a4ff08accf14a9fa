//! The whole page: header, the plan's inputs, and the report.

use leptos::prelude::*;

use crate::components::LangCtx;
use crate::components::header::Header;
use crate::components::params_panel::ParamsPanel;
use crate::components::plan_form::PlanFormPanel;
use crate::form::PlanForm;
use crate::storage;

/// The trainplan page. Opened with nothing, it already shows a complete plan.
#[component]
pub fn App() -> impl IntoView {
    let lang = RwSignal::new(storage::initial_lang());
    provide_context(LangCtx(lang));
    Effect::new(move |_| storage::apply_lang(lang.get()));

    let form = RwSignal::new(PlanForm::first_visit());
    let plan = Memo::new(move |_| form.with(PlanForm::to_plan));
    let report = Memo::new(move |_| plan.with(|plan| plan.as_ref().ok().map(trainplan_core::evaluate)));

    view! {
        <Header />
        <main class="layout">
            <PlanFormPanel form=form plan=plan />
            <ParamsPanel plan=plan report=report />
        </main>
    }
}
