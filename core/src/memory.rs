//! Memory per device.
//!
//! For now: the bytes of model weights each device holds when every parameter is sharded over all
//! devices as DeepSpeed ZeRO stage 3 does it.

use crate::model::{self, Architecture};

/// Bytes per element of a bf16 (or fp16) tensor.
pub const BF16_BYTES: u64 = 2;

/// Weight bytes one device holds under ZeRO-3 sharding over `n_devices`.
///
/// DeepSpeed pads every parameter to a multiple of the world size and gives each rank an equal slice,
/// so a tensor of `numel` elements costs `ceil(numel / n)` elements on every rank.
/// Source: DeepSpeed `deepspeed/runtime/zero/partition_parameters.py`, `Init._aligned_size` and
/// `Init._padding_size` (`remainder = ds_numel % world_size`), `partition_size = tensor_size // world_size`.
///
/// ```
/// use trainplan_core::{catalog, memory};
/// let arch = &catalog::model("llama-2-7b").unwrap().arch;
/// // One device holds everything: 2 bytes for each of the 6,738,415,616 parameters.
/// assert_eq!(memory::zero3_weight_bytes_per_device(arch, 1, memory::BF16_BYTES), 13_476_831_232);
/// ```
///
/// # Panics
///
/// If `n_devices` is 0, which [`crate::plan::Cluster`] never allows.
pub fn zero3_weight_bytes_per_device(arch: &Architecture, n_devices: u64, bytes_per_param: u64) -> u64 {
    assert!(0 < n_devices, "a cluster has at least one device");
    model::tensors(arch)
        .iter()
        .filter(|t| !t.mtp)
        .map(|t| t.numel.div_ceil(n_devices).saturating_mul(t.count))
        .fold(0, u64::saturating_add)
        .saturating_mul(bytes_per_param)
}
