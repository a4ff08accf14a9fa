//! The device: a catalog entry with its figures and source, or a custom device the user describes.

use leptos::prelude::*;
use trainplan_core::hardware::{self, Hardware};
use trainplan_core::plan::HardwareField;

use crate::components::{TextField, use_tr};
use crate::form::{CustomField, CustomForm, FormField, PlanForm};
use crate::format;
use crate::i18n::{Key, fill};

/// The value of the custom entry in the device list.
const CUSTOM: &str = "custom";
/// The prefix of a saved device's entry: `saved:0` is the newest.
const SAVED: &str = "saved:";

/// The hardware panel.
#[component]
pub fn HardwarePicker(
    /// The form state.
    form: RwSignal<PlanForm>,
    /// Fields the plan refuses.
    #[prop(into)]
    bad: Signal<Vec<FormField>>,
) -> impl IntoView {
    let tr = use_tr();
    let devices = hardware::devices();
    let selected = move || {
        form.with(|f| match (&f.file.hardware, f.custom_hardware) {
            (_, true) => CUSTOM.to_owned(),
            (HardwareField::Id(id), false) => id.clone(),
            (HardwareField::Custom { .. }, false) => CUSTOM.to_owned(),
        })
    };
    let options = devices
        .iter()
        .map(|d| {
            let id = d.id.clone();
            let value = id.clone();
            view! { <option value=value selected=move || selected() == id>{d.name.clone()}</option> }
        })
        .collect_view();
    // Devices described on earlier visits (localStorage), newest first: choosing one fills the
    // custom device's fields.
    let saved = crate::storage::saved_devices();
    let saved_options = saved
        .iter()
        .enumerate()
        .map(|(i, d)| view! { <option value=format!("{SAVED}{i}")>{format!("{} ({})", d.name, tr(Key::hw_saved))}</option> })
        .collect_view();
    let on_change = move |ev: leptos::ev::Event| {
        let value = event_target_value(&ev);
        // Leaving a described device keeps it for later visits.
        if let Ok(plan) = form.with_untracked(PlanForm::to_plan) {
            crate::storage::remember_device_of(&plan);
        }
        let chosen = value
            .strip_prefix(SAVED)
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| saved.get(i).cloned());
        form.update(|f| match (value.as_str(), &chosen) {
            (_, Some(device)) => {
                f.custom = CustomForm::from_device(device);
                f.custom_hardware = true;
            }
            (CUSTOM, None) => f.custom_hardware = true,
            (id, None) => {
                f.custom_hardware = false;
                f.file.hardware = HardwareField::Id(id.to_owned());
            }
        });
    };
    let current = move || form.with(|f| if f.custom_hardware { None } else { catalog_device(f) });
    let summary = move || {
        current().map(|d| {
            let tflops = format::whole_tflops;
            let memory = format::whole_gib(d.memory_bytes);
            let bandwidth = format::tb_per_second(d.memory_bytes_per_second);
            match d.has_bf16() {
                true => fill(
                    tr(Key::hw_summary),
                    &[
                        ("memory", &memory),
                        ("tflops", &tflops(d.bf16_flops_per_second)),
                        ("bandwidth", &bandwidth),
                    ],
                ),
                false => fill(tr(Key::hw_no_bf16), &[("tflops", &tflops(d.fp16_flops_per_second))]),
            }
        })
    };

    view! {
        <section class="panel" aria-labelledby="hw-title">
            <h2 id="hw-title">{move || tr(Key::hw_title)}</h2>
            <label class="field">
                <span>{move || tr(Key::hw_device)}</span>
                <select data-testid="hardware-select" on:change=on_change>
                    {options}
                    {saved_options}
                    <option value=CUSTOM selected=move || selected() == CUSTOM>{move || tr(Key::hw_custom)}</option>
                </select>
            </label>
            <Show when=move || current().is_some()>
                <p class="muted" data-testid="hardware-summary">{summary}</p>
                <Show when=move || current().is_some_and(|d| d.reported)>
                    <p class="note">{move || tr(Key::hw_reported)}</p>
                </Show>
                <p class="source">{move || tr(Key::hw_source)} ": " {move || current().map(|d| d.source)}</p>
            </Show>
            <Show when=move || form.with(|f| f.custom_hardware)>
                <CustomFields form=form bad=bad />
            </Show>
        </section>
    }
}

fn catalog_device(form: &PlanForm) -> Option<Hardware> {
    match &form.file.hardware {
        HardwareField::Id(id) => hardware::device(id),
        HardwareField::Custom { .. } => None,
    }
}

/// The custom device's figures.
#[component]
fn CustomFields(
    /// The form state.
    form: RwSignal<PlanForm>,
    /// Fields the plan refuses.
    #[prop(into)]
    bad: Signal<Vec<FormField>>,
) -> impl IntoView {
    let tr = use_tr();
    let field = move |label: Key,
                      testid: &'static str,
                      which: CustomField,
                      get: fn(&CustomForm) -> &String,
                      set: fn(&mut CustomForm, String)| {
        view! {
            <TextField
                label=Signal::derive(move || tr(label).to_owned())
                testid=testid
                value=Memo::new(move |_| form.with(|f| get(&f.custom).clone()))
                invalid=Signal::derive(move || bad.with(|b| b.contains(&FormField::Custom(which))))
                message=Signal::derive(move || tr(Key::hw_bad_number).to_owned())
                on_input=move |text| form.update(|f| set(&mut f.custom, text))
                numeric=which != CustomField::Name
            />
        }
    };
    view! {
        <div class="custom-device" data-testid="custom-device">
            {field(Key::hw_name, "custom-name", CustomField::Name, |c| &c.name, |c, t| c.name = t)}
            <div class="grid2">
                {field(Key::hw_memory_gb, "custom-memory", CustomField::MemoryGb, |c| &c.memory_gb, |c, t| c.memory_gb = t)}
                {field(Key::hw_bf16_tflops, "custom-bf16", CustomField::Bf16Tflops, |c| &c.bf16_tflops, |c, t| c.bf16_tflops = t)}
                {field(Key::hw_memory_bw, "custom-memory-bw", CustomField::MemoryTbPerS, |c| &c.memory_tb_per_s, |c, t| c.memory_tb_per_s = t)}
                {field(Key::hw_intra, "custom-intra", CustomField::IntraNodeGbPerS, |c| &c.intra_node_gb_per_s, |c, t| c.intra_node_gb_per_s = t)}
                {field(Key::hw_inter, "custom-inter", CustomField::InterNodeGbitPerS, |c| &c.inter_node_gbit_per_s, |c, t| c.inter_node_gbit_per_s = t)}
            </div>
        </div>
    }
}
