//! The plan's inputs: model and cluster size.

use leptos::prelude::*;
use trainplan_core::{Plan, catalog};

use crate::components::use_tr;
use crate::form::{FormField, PlanForm};
use crate::i18n::Key;

/// The inputs panel.
#[component]
pub fn PlanFormPanel(
    /// The form state, written as the user types.
    form: RwSignal<PlanForm>,
    /// The plan the form describes, or the fields that stop it.
    #[prop(into)]
    plan: Signal<Result<Plan, Vec<FormField>>>,
) -> impl IntoView {
    let tr = use_tr();
    let bad = move |field| plan.with(|p| p.as_ref().err().is_some_and(|fields| fields.contains(&field)));
    let options = catalog::models()
        .into_iter()
        .map(|m| {
            let id = m.id;
            let selected = move || form.with(|f| f.model_id == id);
            view! { <option value=id selected=selected>{m.name}</option> }
        })
        .collect_view();
    let source = move || form.with(|f| catalog::model(&f.model_id).map(|m| m.source));
    let n_devices =
        move || plan.with(|p| p.as_ref().ok().map(|p| crate::format::count(p.cluster.n_devices())));

    view! {
        <section class="panel plan-form" aria-labelledby="plan-form-title">
            <h2 id="plan-form-title">{move || tr(Key::plan_form_title)}</h2>
            <label class="field">
                <span>{move || tr(Key::plan_form_model)}</span>
                <select
                    data-testid="model-select"
                    aria-invalid=move || bad(FormField::Model).to_string()
                    on:change=move |ev| form.update(|f| f.model_id = event_target_value(&ev))
                >
                    {options}
                </select>
            </label>
            <p class="source" data-testid="model-source">
                {move || tr(Key::plan_form_source)} ": " {source}
            </p>
            <div class="row">
                <CountField
                    label=Key::plan_form_nodes
                    testid="nodes-input"
                    value=Signal::derive(move || form.with(|f| f.nodes.clone()))
                    invalid=Signal::derive(move || bad(FormField::Nodes))
                    on_input=move |text| form.update(|f| f.nodes = text)
                />
                <span class="times" aria-hidden="true">"×"</span>
                <CountField
                    label=Key::plan_form_devices_per_node
                    testid="devices-input"
                    value=Signal::derive(move || form.with(|f| f.devices_per_node.clone()))
                    invalid=Signal::derive(move || bad(FormField::DevicesPerNode))
                    on_input=move |text| form.update(|f| f.devices_per_node = text)
                />
            </div>
            <p class="total-devices">
                {move || tr(Key::plan_form_n_devices)} ": "
                <strong data-testid="n-devices">{move || n_devices().unwrap_or_else(|| "–".to_owned())}</strong>
            </p>
        </section>
    }
}

/// A labelled whole-number input that shows why its text is refused.
#[component]
fn CountField(
    /// The label's text key.
    label: Key,
    /// The `data-testid` of the input.
    testid: &'static str,
    /// The text as typed.
    value: Signal<String>,
    /// Whether the text is refused.
    invalid: Signal<bool>,
    /// Called with the new text on every keystroke.
    on_input: impl Fn(String) + 'static,
) -> impl IntoView {
    let tr = use_tr();
    view! {
        <label class="field count-field">
            <span>{move || tr(label)}</span>
            <input
                type="text"
                inputmode="numeric"
                autocomplete="off"
                data-testid=testid
                class:invalid=move || invalid.get()
                aria-invalid=move || invalid.get().to_string()
                prop:value=move || value.get()
                on:input=move |ev| on_input(event_target_value(&ev))
            />
            <Show when=move || invalid.get()>
                <span class="field-error" role="alert">{move || tr(Key::plan_form_bad_count)}</span>
            </Show>
        </label>
    }
}
