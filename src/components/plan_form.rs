//! The plan's inputs: model, hardware, then one component per section of the form (`plan_form/`),
//! all sharing one [`FormCtx`].

mod calibration;
mod cluster;
mod controls;
mod moe;
mod parallel;
mod recompute;
mod rl;
mod training;

use leptos::prelude::*;
use trainplan_core::Plan;
use trainplan_core::knobs::{self, Knob};
use trainplan_core::plan::{Framework, Method};
use wasm_split_helpers::{SplitLoaderError, wasm_split};

use crate::components::deferred::deferred;
use crate::components::hardware_picker::HardwarePicker;
use crate::components::log_calibration::LogCalibration;
use crate::components::model_picker::ModelPicker;
use crate::form::{FormError, FormField, PlanForm};
use calibration::CalibrationPanel;
use cluster::ClusterSection;
use parallel::ParallelSection;
use rl::RlSection;
use training::TrainingSection;

/// What every section of the form shares, made once by [`PlanFormPanel`] and handed to each.
#[derive(Clone, Copy)]
pub struct FormCtx {
    /// The form state, written as the user types.
    pub form: RwSignal<PlanForm>,
    /// The plan the form describes, or what stops it.
    pub plan: Signal<Result<Plan, FormError>>,
    /// The fields holding text the plan cannot use.
    pub bad: Signal<Vec<FormField>>,
    /// Whether the knobs the framework and method do not take are shown too (disabled).
    pub show_all: RwSignal<bool>,
    /// What decides which knobs show, memoised: a keystroke in a number changes the form and the
    /// plan but seldom this, so the many controls that read it are not run again for each one.
    shape: Memo<Shape>,
}

/// The form's framework and method, the plan's device vendor (`None` while the plan is refused)
/// and whether its model has experts and a vision encoder its framework runs.
#[derive(Clone, Copy, PartialEq)]
struct Shape {
    framework: Framework,
    method: Method,
    vendor: Option<trainplan_core::hardware::Vendor>,
    moe: bool,
    vision: bool,
}

impl FormCtx {
    /// Whether `field` holds text the plan cannot use.
    pub fn is_bad(self, field: FormField) -> bool {
        self.bad.with(|b| b.contains(&field))
    }

    /// Whether the plan's model has experts.
    pub fn is_moe(self) -> bool {
        self.shape.with(|s| s.moe)
    }

    /// Whether the plan's framework runs its model's vision encoder (`memory::vision_encoder`).
    pub fn runs_vision(self) -> bool {
        self.shape.with(|s| s.vision)
    }

    /// The plan's device vendor; `None` while the plan is refused.
    pub fn vendor(self) -> Option<trainplan_core::hardware::Vendor> {
        self.shape.with(|s| s.vendor)
    }

    /// The form's framework and method.
    pub fn training(self) -> (Framework, Method) {
        self.shape.with(|s| (s.framework, s.method))
    }

    /// Whether the form's framework and method take `knob` (`knobs::applies`).
    pub fn applies(self, knob: Knob) -> bool {
        self.shape.with(|s| knobs::applies(s.framework, s.method, knob).yes())
    }
}

/// The inputs column.
#[component]
pub fn PlanFormPanel(
    /// The form state, written as the user types.
    form: RwSignal<PlanForm>,
    /// The plan the form describes, or what stops it.
    #[prop(into)]
    plan: Signal<Result<Plan, FormError>>,
) -> impl IntoView {
    // Memoised, so each field's check runs again only when the refused fields change.
    let bad =
        Memo::new(move |_| plan.with(|p| p.as_ref().err().map(|e| e.fields.clone()).unwrap_or_default()));
    let shape = Memo::new(move |_| {
        let (framework, method) = form.with(|f| (f.file.framework, f.file.method));
        let (vendor, moe, vision) = plan.with(|p| match p {
            Ok(p) => (
                Some(p.hardware.hw.vendor),
                p.model.arch.moe.is_some(),
                trainplan_core::memory::loaded_vision_params(p) != 0,
            ),
            Err(_) => (None, false, false),
        });
        Shape { framework, method, vendor, moe, vision }
    });
    let ctx = FormCtx { form, plan, bad: bad.into(), show_all: RwSignal::new(false), shape };
    view! {
        <div class="inputs">
            <ModelPicker form=form />
            <HardwarePicker form=form bad=bad />
            <ClusterSection ctx=ctx />
            <TrainingSection ctx=ctx />
            <ParallelSection ctx=ctx />
            <RlSection ctx=ctx />
            {deferred(load_calibration(), move || calibration(ctx))}
        </div>
    }
}

/// Calibration, from typed figures or a pasted training log, in a module of its own (`deferred`).
#[wasm_split(calibration, fallible, preload(load_calibration))]
fn calibration(ctx: FormCtx) -> Result<AnyView, SplitLoaderError> {
    Ok(view! {
        <CalibrationPanel ctx=ctx />
        <LogCalibration />
    }
    .into_any())
}
