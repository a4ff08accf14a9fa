//! The report: everything the engine computes for a plan, in the shape the CLI prints as JSON and
//! the page renders. Field names are stable; later features add fields beside them.

use serde::Serialize;

/// The result of [`crate::evaluate`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The catalog id of the planned model.
    pub model_id: String,
    /// Devices in the cluster.
    pub n_devices: u64,
    /// Parameter counts.
    pub params: ParamsReport,
    /// Memory per device.
    pub memory: MemoryReport,
}

/// Exact parameter counts, equal to what HF transformers instantiates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ParamsReport {
    /// All parameters, tied tensors counted once.
    pub total: u64,
    /// Token embedding.
    pub embedding: u64,
    /// Attention projections, all layers.
    pub attention: u64,
    /// MLP projections, all layers.
    pub mlp: u64,
    /// Norm weights, all layers and the final norm.
    pub norms: u64,
    /// Untied output head; 0 when tied to the embedding.
    pub head: u64,
    /// One decoder layer.
    pub per_layer: u64,
}

/// Memory per device, in bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryReport {
    /// bf16 weights on each device when ZeRO-3 shards every parameter over all devices.
    pub zero3_bf16_weight_bytes_per_device: u64,
}
