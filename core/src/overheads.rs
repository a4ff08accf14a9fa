//! The memory the runtime takes besides the model: the CUDA/CANN context, the NCCL/HCCL buffers per
//! communication group and the allocator's reserve, as the plan gives them (`overheads` in the plan
//! file), each omitted figure taking its default from the memory model's constants (docs/memory.md,
//! docs/constants.md). Memory reads them through [`Plan::overheads`].

use crate::hardware::Vendor;
use crate::memory::{ALLOCATOR_RESERVE_FRAC, HCCL_BUFFER_BYTES, NCCL_BUFFER_BYTES, RUNTIME_CONTEXT_BYTES};
use crate::plan::Plan;

/// Memory the runtime takes besides the model, as the user may calibrate it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Overheads {
    /// CUDA/CANN context and library workspaces, bytes.
    pub runtime_context_bytes: u64,
    /// NCCL/HCCL buffers per communication group, bytes.
    pub comm_buffer_bytes: u64,
    /// Share of device memory lost to the allocator, in [0, 0.5].
    pub allocator_reserve_frac: f64,
}

impl Plan {
    /// The runtime overheads, defaults resolved for the device (docs/memory.md).
    pub fn overheads(&self) -> Overheads {
        let mib = |x: Option<f64>, default: u64| mib_or(x, default as f64) as u64;
        let comm_default = match self.hardware.hw.vendor {
            Vendor::Ascend => HCCL_BUFFER_BYTES,
            _ => NCCL_BUFFER_BYTES,
        };
        Overheads {
            runtime_context_bytes: mib(self.overheads.runtime_context_mib, RUNTIME_CONTEXT_BYTES),
            comm_buffer_bytes: mib(self.overheads.comm_buffer_mib, comm_default),
            allocator_reserve_frac: self.overheads.allocator_reserve.unwrap_or(ALLOCATOR_RESERVE_FRAC),
        }
    }
}

/// The bytes in `mib` mebibytes where the plan gives them, else `default` bytes.
///
/// Scaled only where given: a `None`'s payload is whatever bytes were left there, and the
/// optimizer, left to itself, scaled them as well and then picked the default, which took a
/// microcode assist whenever those bytes read as a subnormal float: on each stage of every
/// estimate, a fifth of the memory estimate's time (measured natively, the benchmark grid's plans
/// with one chunk a stage). A call it does not speculate keeps the scaling behind the test.
pub(crate) fn mib_or(mib: Option<f64>, default: f64) -> f64 {
    match mib {
        Some(mib) => bytes_of_mib(mib),
        None => default,
    }
}

#[cold]
#[inline(never)]
fn bytes_of_mib(mib: f64) -> f64 {
    mib * (1u64 << 20) as f64
}
