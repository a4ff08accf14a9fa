//! The devices' arithmetic: the dense peak a plan's precision runs at, the fraction of it a GEMM
//! reaches by size (with the plan's calibration), and a linear layer's GEMM in 16 bits or fp8.

use super::{Ctx, GEMM_EFF_MAX, GEMM_HALF_FLOPS, HBM_EFF};
use crate::hardware::Hardware;
use crate::plan::Precision;

/// The fraction of peak a GEMM of `flops` floating-point operations reaches: `max · f / (f + half)`.
///
/// The shape follows Calculon's matrix-efficiency tables (`systems/a100_80g.json`: larger GEMMs run
/// closer to peak); see the two constants for their evidence.
pub fn gemm_efficiency(flops: f64) -> f64 {
    GEMM_EFF_MAX * flops / (flops + GEMM_HALF_FLOPS)
}

/// [`gemm_efficiency`] on a given device: its own asymptote (`Hardware::gemm_efficiency_max`:
/// [`GEMM_EFF_MAX`] on NVIDIA, [`ASCEND_GEMM_EFF_MAX`](super::ASCEND_GEMM_EFF_MAX) on Ascend), the
/// same half-efficiency size.
pub fn gemm_efficiency_on(hw: &Hardware, flops: f64) -> f64 {
    hw.gemm_efficiency_max * flops / (flops + GEMM_HALF_FLOPS)
}

/// Dense peak FLOP/s of the device's 16-bit units at the plan's precision (fp8 plans keep
/// attention, norms, softmax, embedding and head in bf16, so this is also their MFU's peak). A
/// custom device written with an fp16 peak of 0 runs fp16 at its bf16 peak: every device computes
/// in fp16, and a peak of 0 would make every time infinite.
pub fn peak_flops(hw: &Hardware, precision: Precision) -> f64 {
    let fp16 = match hw.fp16_flops_per_second {
        0.0 => hw.bf16_flops_per_second,
        fp16 => fp16,
    };
    match precision {
        Precision::Fp16 => fp16,
        Precision::Fp32 => fp16 / 16.0,
        _ if hw.has_bf16() => hw.bf16_flops_per_second,
        _ => hw.fp16_flops_per_second,
    }
}

/// A linear layer's GEMM (m × k by k × n): in fp8 plans on the fp8 units, after casting its
/// input and weight to fp8 (memory-bound: read 2 bytes, write 1, per element; Transformer
/// Engine's `cast_to_fp8` before each `fp8_gemm`, its amax and scale update folded in).
pub(super) fn gemm(ctx: &Ctx, m: f64, k: f64, n: f64) -> (f64, f64) {
    let flops = 2.0 * m * k * n;
    let compute = flops / (ctx.linear_peak * efficiency(ctx, flops));
    let cast = match ctx.fp8 {
        true => 3.0 * (m * k + k * n) / (ctx.hw.memory_bytes_per_second * HBM_EFF),
        false => 0.0,
    };
    (compute + cast, flops)
}

/// A GEMM that stays in 16-bit whatever the plan's precision (the head: Transformer Engine's fp8
/// recipes keep the output layer in bf16).
pub(super) fn gemm_16bit(ctx: &Ctx, m: f64, k: f64, n: f64) -> (f64, f64) {
    let flops = 2.0 * m * k * n;
    (flops / (ctx.peak * efficiency(ctx, flops)), flops)
}

/// GEMM efficiency with the plan's calibration, never above peak.
pub(super) fn efficiency(ctx: &Ctx, flops: f64) -> f64 {
    (gemm_efficiency_on(ctx.hw, flops) * ctx.plan.calibration.efficiency()).min(1.0)
}
