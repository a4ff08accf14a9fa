//! The plan's inputs: model, hardware, cluster size and training method.

use leptos::prelude::*;
use trainplan_core::Plan;
use trainplan_core::plan::{Framework, Method};

use crate::components::hardware_picker::HardwarePicker;
use crate::components::model_picker::ModelPicker;
use crate::components::{TextField, use_tr};
use crate::form::{FormError, FormField, PlanForm};
use crate::i18n::{Key, fill};

/// The inputs column.
#[component]
pub fn PlanFormPanel(
    /// The form state, written as the user types.
    form: RwSignal<PlanForm>,
    /// The plan the form describes, or what stops it.
    #[prop(into)]
    plan: Signal<Result<Plan, FormError>>,
) -> impl IntoView {
    let tr = use_tr();
    let bad =
        Signal::derive(move || plan.with(|p| p.as_ref().err().map(|e| e.fields.clone()).unwrap_or_default()));
    let is_bad = move |field| bad.with(|b| b.contains(&field));
    let n_devices =
        move || plan.with(|p| p.as_ref().ok().map(|p| crate::format::count(p.cluster.n_devices())));
    let default_devices = move || {
        plan.with(|p| match p {
            Ok(plan) => fill(
                tr(Key::plan_form_devices_default),
                &[("n", &plan.hardware.hw.devices_per_node.to_string())],
            ),
            Err(_) => String::new(),
        })
    };
    let count_message = Signal::derive(move || tr(Key::plan_form_bad_count).to_owned());
    let framework_options = Framework::ALL
        .iter()
        .map(|&fw| {
            view! {
                <option value=fw.wire() selected=move || form.with(|f| f.file.framework == fw)>
                    {framework_name(fw)}
                </option>
            }
        })
        .collect_view();
    let method_options = Method::ALL
        .iter()
        .map(|&m| {
            view! {
                <option value=m.wire() selected=move || form.with(|f| f.file.method == m)>
                    {move || tr(method_key(m))}
                </option>
            }
        })
        .collect_view();
    let on_framework = move |ev| {
        let wire = event_target_value(&ev);
        if let Some(&fw) = Framework::ALL.iter().find(|fw| fw.wire() == wire) {
            form.update(|f| f.file.framework = fw);
        }
    };
    let on_method = move |ev| {
        let wire = event_target_value(&ev);
        if let Some(&m) = Method::ALL.iter().find(|m| m.wire() == wire) {
            form.update(|f| f.file.method = m);
        }
    };
    let uses_lora = move || form.with(|f| matches!(f.file.method, Method::Lora | Method::Qlora));

    view! {
        <div class="inputs">
            <ModelPicker form=form />
            <HardwarePicker form=form bad=bad />
            <section class="panel" aria-labelledby="cluster-title">
                <h2 id="cluster-title">{move || tr(Key::cluster_title)}</h2>
                <div class="row">
                    <TextField
                        label=Signal::derive(move || tr(Key::plan_form_nodes).to_owned())
                        testid="nodes-input"
                        value=Signal::derive(move || form.with(|f| f.nodes.clone()))
                        invalid=Signal::derive(move || is_bad(FormField::Nodes))
                        message=count_message
                        on_input=move |text| form.update(|f| f.nodes = text)
                        numeric=true
                    />
                    <span class="times" aria-hidden="true">"×"</span>
                    <TextField
                        label=Signal::derive(move || tr(Key::plan_form_devices_per_node).to_owned())
                        testid="devices-input"
                        value=Signal::derive(move || form.with(|f| f.devices_per_node.clone()))
                        invalid=Signal::derive(move || is_bad(FormField::DevicesPerNode))
                        message=count_message
                        on_input=move |text| form.update(|f| f.devices_per_node = text)
                        numeric=true
                        placeholder=Signal::derive(default_devices)
                    />
                </div>
                <p class="total-devices">
                    {move || tr(Key::plan_form_n_devices)} ": "
                    <strong data-testid="n-devices">{move || n_devices().unwrap_or_else(|| "–".to_owned())}</strong>
                </p>
            </section>
            <section class="panel" aria-labelledby="training-title">
                <h2 id="training-title">{move || tr(Key::training_title)}</h2>
                <label class="field">
                    <span>{move || tr(Key::training_framework)}</span>
                    <select data-testid="framework-select" on:change=on_framework>{framework_options}</select>
                </label>
                <label class="field">
                    <span>{move || tr(Key::training_method)}</span>
                    <select data-testid="method-select" on:change=on_method>{method_options}</select>
                </label>
                <Show when=uses_lora>
                    <TextField
                        label=Signal::derive(move || tr(Key::training_lora_rank).to_owned())
                        testid="lora-rank-input"
                        value=Signal::derive(move || form.with(|f| f.lora_rank.clone()))
                        invalid=Signal::derive(move || is_bad(FormField::LoraRank))
                        message=count_message
                        on_input=move |text| form.update(|f| f.lora_rank = text)
                        numeric=true
                    />
                </Show>
            </section>
        </div>
    }
}

/// Frameworks are proper names, the same in every language.
fn framework_name(fw: Framework) -> &'static str {
    match fw {
        Framework::Megatron => "Megatron-LM",
        Framework::DeepSpeed => "DeepSpeed",
        Framework::LlamaFactory => "LLaMA-Factory",
        Framework::MindSpeedLlm => "MindSpeed-LLM",
        Framework::Verl => "VeRL",
        Framework::MindSpeedRl => "MindSpeed-RL",
    }
}

/// The words for a method.
pub fn method_key(m: Method) -> Key {
    match m {
        Method::Pretrain => Key::method_pretrain,
        Method::SftFull => Key::method_sft_full,
        Method::Lora => Key::method_lora,
        Method::Qlora => Key::method_qlora,
        Method::Dpo => Key::method_dpo,
        Method::Grpo => Key::method_grpo,
        Method::Ppo => Key::method_ppo,
    }
}
