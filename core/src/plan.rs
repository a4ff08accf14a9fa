//! The plan: every input of a planning question, and its file format.
//!
//! [`Plan`] is the validated, typed input of [`crate::evaluate`]. [`PlanFile`] is its JSON form as
//! the CLI reads it; [`Plan::from_json`] turns one into the other and is the only place where a plan
//! can be rejected. Omitted fields take the documented defaults in docs/plan-format.md.

use std::fmt;
use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

use crate::catalog::{self, ModelEntry};

/// The version of the plan file format this build reads and writes.
pub const PLAN_FILE_VERSION: u32 = 1;

/// Devices per node when a plan file names none: an 8-GPU HGX/DGX node or an 8-NPU Atlas 800T A2.
pub const DEFAULT_DEVICES_PER_NODE: u32 = 8;

/// A validated plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The model to train.
    pub model: ModelEntry,
    /// The devices it trains on.
    pub cluster: Cluster,
}

/// The cluster's size. Both counts are at least 1 by construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// Number of nodes.
    pub nodes: NonZeroU32,
    /// Accelerators in each node.
    pub devices_per_node: NonZeroU32,
}

impl Cluster {
    /// All devices of the cluster.
    pub fn n_devices(&self) -> u64 {
        u64::from(self.nodes.get()) * u64::from(self.devices_per_node.get())
    }
}

/// A plan as it is written in a JSON file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// Format version; [`PLAN_FILE_VERSION`] when omitted.
    #[serde(default = "plan_file_version")]
    pub version: u32,
    /// A catalog model id (`trainplan models` lists them).
    pub model: String,
    /// The cluster; one node of [`DEFAULT_DEVICES_PER_NODE`] devices when omitted.
    #[serde(default)]
    pub cluster: ClusterFile,
}

/// The cluster as written in a plan file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterFile {
    /// Number of nodes; 1 when omitted.
    #[serde(default = "one")]
    pub nodes: u32,
    /// Devices in each node; [`DEFAULT_DEVICES_PER_NODE`] when omitted.
    #[serde(default = "default_devices_per_node")]
    pub devices_per_node: u32,
}

impl Default for ClusterFile {
    fn default() -> Self {
        ClusterFile { nodes: 1, devices_per_node: DEFAULT_DEVICES_PER_NODE }
    }
}

/// Why a plan file was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanFileError {
    /// Occurs when the text is not JSON, or not a plan object (a missing `model`, an unknown key,
    /// a value of the wrong type).
    Json(String),
    /// Occurs when the file's `version` is newer than this build understands.
    UnsupportedVersion(u32),
    /// Occurs when `model` names no catalog model.
    UnknownModel(String),
    /// Occurs when a count that must be at least 1 is 0.
    Zero(&'static str),
}

impl fmt::Display for PlanFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanFileError::Json(msg) => write!(f, "invalid plan file: {msg}"),
            PlanFileError::UnsupportedVersion(v) => write!(
                f,
                "plan file version {v} is newer than this build reads (version {PLAN_FILE_VERSION})"
            ),
            PlanFileError::UnknownModel(id) => {
                write!(f, "unknown model {id:?}: `trainplan models` lists the catalog")
            }
            PlanFileError::Zero(field) => write!(f, "{field} must be at least 1"),
        }
    }
}

impl std::error::Error for PlanFileError {}

impl Plan {
    /// Reads a plan from its JSON text.
    ///
    /// # Errors
    ///
    /// A [`PlanFileError`] naming what is wrong; the input is never partly applied.
    pub fn from_json(text: &str) -> Result<Plan, PlanFileError> {
        let file: PlanFile = serde_json::from_str(text).map_err(|e| PlanFileError::Json(e.to_string()))?;
        Plan::from_file(&file)
    }

    /// Validates a decoded plan file.
    ///
    /// # Errors
    ///
    /// A [`PlanFileError`] for a newer version, an unknown model or a zero count.
    pub fn from_file(file: &PlanFile) -> Result<Plan, PlanFileError> {
        if PLAN_FILE_VERSION < file.version {
            return Err(PlanFileError::UnsupportedVersion(file.version));
        }
        let model =
            catalog::model(&file.model).ok_or_else(|| PlanFileError::UnknownModel(file.model.clone()))?;
        let nodes = NonZeroU32::new(file.cluster.nodes).ok_or(PlanFileError::Zero("cluster.nodes"))?;
        let devices_per_node = NonZeroU32::new(file.cluster.devices_per_node)
            .ok_or(PlanFileError::Zero("cluster.devices_per_node"))?;
        Ok(Plan { model, cluster: Cluster { nodes, devices_per_node } })
    }

    /// The plan file that reads back as this plan.
    pub fn to_file(&self) -> PlanFile {
        PlanFile {
            version: PLAN_FILE_VERSION,
            model: self.model.id.to_owned(),
            cluster: ClusterFile {
                nodes: self.cluster.nodes.get(),
                devices_per_node: self.cluster.devices_per_node.get(),
            },
        }
    }
}

fn plan_file_version() -> u32 {
    PLAN_FILE_VERSION
}

fn one() -> u32 {
    1
}

fn default_devices_per_node() -> u32 {
    DEFAULT_DEVICES_PER_NODE
}
