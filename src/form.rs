//! What the user typed, kept as typed, and the one function that turns it into a core plan.
//!
//! Choices from lists (model, hardware, framework, method) live in a core `PlanFile`; numbers the
//! user types live as text, so a half-typed or wrong value stays on screen with its message instead
//! of being lost. [`PlanForm::to_plan`] is the only place the two meet.

use trainplan_core::Plan;
use trainplan_core::plan::{CustomDevice, HardwareField, HardwareSpec, ModelField, PlanFile, PlanFileError};

/// The page's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanForm {
    /// Everything chosen from a list, and the imported config if any.
    pub file: PlanFile,
    /// Number of nodes, as typed.
    pub nodes: String,
    /// Devices per node, as typed; empty means the hardware's usual count.
    pub devices_per_node: String,
    /// LoRA rank, as typed.
    pub lora_rank: String,
    /// The custom device's figures as typed, used when `custom_hardware` is on.
    pub custom: CustomForm,
    /// Whether the device is the custom one.
    pub custom_hardware: bool,
}

/// A custom device's figures, as typed.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomForm {
    /// Display name.
    pub name: String,
    /// Memory, GB.
    pub memory_gb: String,
    /// Dense bf16 TFLOPS.
    pub bf16_tflops: String,
    /// Memory bandwidth, TB/s.
    pub memory_tb_per_s: String,
    /// Intra-node link, GB/s.
    pub intra_node_gb_per_s: String,
    /// Network, Gb/s.
    pub inter_node_gbit_per_s: String,
    /// The figures the form does not show (vendor, fp16, fp8, devices per node), kept as they came.
    pub base: CustomDevice,
}

impl Default for CustomForm {
    /// An H100 SXM's datasheet figures: a sensible place to start editing.
    fn default() -> Self {
        CustomForm::from_device(&CustomDevice {
            name: "custom device".to_owned(),
            vendor: "other".to_owned(),
            memory_gb: 80.0,
            bf16_tflops: 989.0,
            fp16_tflops: None,
            fp8_tflops: 0.0,
            memory_tb_per_s: 3.35,
            intra_node_gb_per_s: 900.0,
            inter_node_gbit_per_s: 400.0,
            devices_per_node: 8,
        })
    }
}

/// A field of the form that holds something the plan cannot use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormField {
    /// The model (an unknown id or an unreadable config).
    Model,
    /// The hardware choice.
    Hardware,
    /// The node count.
    Nodes,
    /// The devices-per-node count.
    DevicesPerNode,
    /// The LoRA rank.
    LoraRank,
    /// One of the custom device's figures.
    Custom(CustomField),
}

/// The custom device's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CustomField {
    Name,
    MemoryGb,
    Bf16Tflops,
    MemoryTbPerS,
    IntraNodeGbPerS,
    InterNodeGbitPerS,
}

/// Why the form is not a plan: the fields to mark, and the core's reason when it has one.
#[derive(Clone, Debug, PartialEq)]
pub struct FormError {
    /// Fields holding unusable text, in form order.
    pub fields: Vec<FormField>,
    /// The core's refusal, when the text parsed but the plan is invalid.
    pub plan: Option<PlanFileError>,
}

impl PlanForm {
    /// The form a first visit shows: the core's default plan.
    pub fn first_visit() -> PlanForm {
        PlanForm::from_plan(&Plan::first_visit())
    }

    /// The form showing a plan (from a permalink or saved state).
    pub fn from_plan(plan: &Plan) -> PlanForm {
        let file = plan.to_file();
        let (custom, custom_hardware) = match &plan.hardware.spec {
            HardwareSpec::Custom(c) => (CustomForm::from_device(c), true),
            HardwareSpec::Catalog(_) => (CustomForm::default(), false),
        };
        PlanForm {
            nodes: plan.cluster.nodes.to_string(),
            devices_per_node: match file.cluster.devices_per_node {
                Some(n) => n.to_string(),
                None => String::new(),
            },
            lora_rank: plan.lora.rank.to_string(),
            custom,
            custom_hardware,
            file,
        }
    }

    /// Whether the model is an imported config rather than a catalog entry.
    pub fn imported_model(&self) -> bool {
        matches!(self.file.model, ModelField::Config { .. })
    }

    /// The catalog id of the chosen model, if it is one.
    pub fn model_id(&self) -> Option<&str> {
        match &self.file.model {
            ModelField::Id(id) => Some(id),
            ModelField::Config { .. } => None,
        }
    }

    /// The plan the form describes, or what stops it.
    ///
    /// # Errors
    ///
    /// A [`FormError`] naming the fields whose text is unusable, or carrying the core's reason.
    pub fn to_plan(&self) -> Result<Plan, FormError> {
        let mut bad = Vec::new();
        let mut file = self.file.clone();
        match parse_count(&self.nodes) {
            Some(n) => file.cluster.nodes = n,
            None => bad.push(FormField::Nodes),
        }
        match self.devices_per_node.trim() {
            "" => file.cluster.devices_per_node = None,
            text => match parse_count(text) {
                Some(n) => file.cluster.devices_per_node = Some(n),
                None => bad.push(FormField::DevicesPerNode),
            },
        }
        match parse_count(&self.lora_rank) {
            Some(n) => file.lora.rank = n,
            None => bad.push(FormField::LoraRank),
        }
        if self.custom_hardware {
            match self.custom.to_device() {
                Ok(device) => file.hardware = HardwareField::Custom { custom: device },
                Err(fields) => bad.extend(fields.into_iter().map(FormField::Custom)),
            }
        }
        if !bad.is_empty() {
            return Err(FormError { fields: bad, plan: None });
        }
        Plan::from_file(&file).map_err(|err| FormError { fields: vec![field_of(&err)], plan: Some(err) })
    }

    /// The form with the model changed to a catalog id.
    pub fn with_catalog_model(mut self, id: &str) -> PlanForm {
        self.file.model = ModelField::Id(id.to_owned());
        self
    }
}

impl CustomForm {
    fn from_device(c: &CustomDevice) -> CustomForm {
        CustomForm {
            name: c.name.clone(),
            memory_gb: c.memory_gb.to_string(),
            bf16_tflops: c.bf16_tflops.to_string(),
            memory_tb_per_s: c.memory_tb_per_s.to_string(),
            intra_node_gb_per_s: c.intra_node_gb_per_s.to_string(),
            inter_node_gbit_per_s: c.inter_node_gbit_per_s.to_string(),
            base: c.clone(),
        }
    }

    /// The device the fields describe; each figure is range-checked again by the core.
    fn to_device(&self) -> Result<CustomDevice, Vec<CustomField>> {
        let mut bad = Vec::new();
        let mut number = |text: &str, field| match text.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && 0.0 <= x => x,
            _ => {
                bad.push(field);
                0.0
            }
        };
        let device = CustomDevice {
            name: self.name.trim().to_owned(),
            memory_gb: number(&self.memory_gb, CustomField::MemoryGb),
            bf16_tflops: number(&self.bf16_tflops, CustomField::Bf16Tflops),
            memory_tb_per_s: number(&self.memory_tb_per_s, CustomField::MemoryTbPerS),
            intra_node_gb_per_s: number(&self.intra_node_gb_per_s, CustomField::IntraNodeGbPerS),
            inter_node_gbit_per_s: number(&self.inter_node_gbit_per_s, CustomField::InterNodeGbitPerS),
            ..self.base.clone()
        };
        if device.name.is_empty() {
            bad.insert(0, CustomField::Name);
        }
        match bad.is_empty() {
            true => Ok(device),
            false => Err(bad),
        }
    }
}

/// The form field a core refusal is about.
fn field_of(err: &PlanFileError) -> FormField {
    match err {
        PlanFileError::UnknownModel(_) | PlanFileError::Config(_) => FormField::Model,
        PlanFileError::UnknownHardware(_) => FormField::Hardware,
        PlanFileError::OutOfRange { field, .. } => match *field {
            "cluster.nodes" => FormField::Nodes,
            "cluster.devices_per_node" => FormField::DevicesPerNode,
            "lora.rank" => FormField::LoraRank,
            "hardware.custom.name" => FormField::Custom(CustomField::Name),
            "hardware.custom.memory_gb" => FormField::Custom(CustomField::MemoryGb),
            "hardware.custom.bf16_tflops" | "hardware.custom.fp16_tflops" => {
                FormField::Custom(CustomField::Bf16Tflops)
            }
            "hardware.custom.memory_tb_per_s" => FormField::Custom(CustomField::MemoryTbPerS),
            "hardware.custom.intra_node_gb_per_s" => FormField::Custom(CustomField::IntraNodeGbPerS),
            "hardware.custom.inter_node_gbit_per_s" => FormField::Custom(CustomField::InterNodeGbitPerS),
            _ => FormField::Model,
        },
        _ => FormField::Model,
    }
}

/// A count of at least 1; surrounding spaces and `_`/`,` digit separators are accepted.
fn parse_count(text: &str) -> Option<u32> {
    let digits: String = text.trim().chars().filter(|ch| !matches!(ch, '_' | ',')).collect();
    digits.parse::<u32>().ok().filter(|&n| 0 < n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> PlanForm {
        PlanForm::first_visit()
    }

    #[test]
    fn the_first_visit_is_the_default_plan() {
        assert_eq!(form().to_plan().unwrap(), Plan::first_visit());
        assert_eq!(form().devices_per_node, "", "the hardware's count is not pinned");
    }

    #[test]
    fn counts_are_read_leniently() {
        let mut f = form();
        f.nodes = " 2 ".to_owned();
        f.devices_per_node = "1,024".to_owned();
        assert_eq!(f.to_plan().unwrap().cluster.n_devices(), 2_048);
    }

    #[test]
    fn each_bad_field_is_named() {
        let mut f = form();
        f.nodes = "0".to_owned();
        f.devices_per_node = "x".to_owned();
        f.lora_rank = "-8".to_owned();
        let err = f.to_plan().unwrap_err();
        assert_eq!(err.fields, vec![FormField::Nodes, FormField::DevicesPerNode, FormField::LoraRank]);
        let mut f = form().with_catalog_model("no-such-model");
        assert_eq!(f.to_plan().unwrap_err().fields, vec![FormField::Model]);
        f = form();
        f.custom_hardware = true;
        f.custom.memory_gb = "lots".to_owned();
        assert_eq!(f.to_plan().unwrap_err().fields, vec![FormField::Custom(CustomField::MemoryGb)]);
        f.custom.memory_gb = "0".to_owned();
        let err = f.to_plan().unwrap_err();
        assert_eq!(err.fields, vec![FormField::Custom(CustomField::MemoryGb)]);
        assert!(err.plan.is_some(), "the core says why 0 GB is refused");
    }

    #[test]
    fn every_plan_shown_reads_back_as_itself() {
        for text in [
            r#"{"model": "deepseek-v3", "hardware": "ascend-910c", "cluster": {"nodes": 64}, "method": "pretrain"}"#,
            r#"{"model": "gpt2", "hardware": {"custom": {"name": "lab", "memory_gb": 24, "bf16_tflops": 80,
               "memory_tb_per_s": 1, "intra_node_gb_per_s": 64, "inter_node_gbit_per_s": 100,
               "devices_per_node": 16, "vendor": "ascend", "fp8_tflops": 10.5}},
               "cluster": {"devices_per_node": 4}, "lora": {"rank": 32}}"#,
            r#"{"model": {"hf_config": {"model_type": "llama", "vocab_size": 1000, "hidden_size": 64,
               "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4}}}"#,
        ] {
            let plan = Plan::from_json(text).unwrap();
            assert_eq!(PlanForm::from_plan(&plan).to_plan().unwrap(), plan, "{text}");
        }
    }
}
