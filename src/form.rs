//! What the user typed, kept as typed, and the one function that turns it into a core plan.

use trainplan_core::Plan;
use trainplan_core::plan::{ClusterFile, PLAN_FILE_VERSION, PlanFile, PlanFileError};

/// The page's inputs, as text, exactly as the user left them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanForm {
    /// A catalog model id.
    pub model_id: String,
    /// Number of nodes, as typed.
    pub nodes: String,
    /// Devices per node, as typed.
    pub devices_per_node: String,
}

/// A field of [`PlanForm`] that holds something the plan cannot use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormField {
    /// The model picker.
    Model,
    /// The node count.
    Nodes,
    /// The devices-per-node count.
    DevicesPerNode,
}

impl PlanForm {
    /// The form a first visit shows: one 8-GPU node training Qwen2.5-7B.
    pub fn first_visit() -> PlanForm {
        PlanForm {
            model_id: "qwen2.5-7b".to_owned(),
            nodes: "1".to_owned(),
            devices_per_node: "8".to_owned(),
        }
    }

    /// The plan the form describes, or every field that stops it.
    ///
    /// # Errors
    ///
    /// The fields whose text is not a valid value, in form order.
    pub fn to_plan(&self) -> Result<Plan, Vec<FormField>> {
        let nodes = parse_count(&self.nodes);
        let devices_per_node = parse_count(&self.devices_per_node);
        let mut bad = Vec::new();
        if nodes.is_none() {
            bad.push(FormField::Nodes);
        }
        if devices_per_node.is_none() {
            bad.push(FormField::DevicesPerNode);
        }
        let (Some(nodes), Some(devices_per_node)) = (nodes, devices_per_node) else {
            return Err(bad);
        };
        let file = PlanFile {
            version: PLAN_FILE_VERSION,
            model: self.model_id.clone(),
            cluster: ClusterFile { nodes, devices_per_node },
        };
        Plan::from_file(&file).map_err(|err| match err {
            PlanFileError::Zero("cluster.nodes") => vec![FormField::Nodes],
            PlanFileError::Zero(_) => vec![FormField::DevicesPerNode],
            _ => vec![FormField::Model],
        })
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

    fn form(model_id: &str, nodes: &str, devices_per_node: &str) -> PlanForm {
        PlanForm {
            model_id: model_id.to_owned(),
            nodes: nodes.to_owned(),
            devices_per_node: devices_per_node.to_owned(),
        }
    }

    #[test]
    fn the_first_visit_is_a_complete_plan() {
        let plan = PlanForm::first_visit().to_plan().unwrap();
        assert_eq!(plan.cluster.n_devices(), 8);
    }

    #[test]
    fn counts_are_read_leniently() {
        let plan = form("llama-2-7b", " 2 ", "1,024").to_plan().unwrap();
        assert_eq!(plan.cluster.n_devices(), 2_048);
    }

    #[test]
    fn each_bad_field_is_named() {
        assert_eq!(form("llama-2-7b", "0", "8").to_plan().unwrap_err(), vec![FormField::Nodes]);
        assert_eq!(
            form("llama-2-7b", "-1", "x").to_plan().unwrap_err(),
            vec![FormField::Nodes, FormField::DevicesPerNode]
        );
        assert_eq!(
            form("llama-2-7b", "1", "4294967296").to_plan().unwrap_err(),
            vec![FormField::DevicesPerNode]
        );
        assert_eq!(form("llama-2-7b", "1", "").to_plan().unwrap_err(), vec![FormField::DevicesPerNode]);
        assert_eq!(form("no-such-model", "1", "8").to_plan().unwrap_err(), vec![FormField::Model]);
    }
}
