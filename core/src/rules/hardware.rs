//! The device against the plan: the number formats its tensor cores have (bf16, fp8, the
//! block-scaled MXFP8 and NVFP4; the vendors' datasheets in `hardware.rs`) and the one framework
//! that trains the block-scaled ones, and tensor parallelism kept within a node.

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx, nearest_divisor};
use crate::plan::{Framework, Precision};
use crate::report::{Code, Severity};

/// The plan's precision on its device, and TP within a node.
pub(super) fn check(cx: &Ctx, acc: &mut Acc) {
    use Severity::{Error, Warning};
    let &Ctx { plan, hw, tp, heads, megatron, .. } = cx;
    if plan.precision == Precision::Bf16 && !hw.has_bf16() {
        acc.push(
            Error,
            Code::HwNoBf16,
            &[("device", hw.name.clone())],
            Some((Field::Precision, Value::from("fp16"))),
        );
    }
    if plan.precision == Precision::Fp8 && !hw.has_fp8() {
        acc.push(
            Error,
            Code::HwNoFp8,
            &[("device", hw.name.clone())],
            Some((Field::Precision, Value::from(if hw.has_bf16() { "bf16" } else { "fp16" }))),
        );
    }
    if matches!(plan.precision, Precision::Mxfp8 | Precision::Nvfp4) {
        // MXFP8 and NVFP4 are Blackwell's tensor-core formats (NVIDIA Blackwell architecture
        // technical brief), and Megatron-LM's recipes for them (`--fp8-recipe mxfp8`,
        // `--fp4-recipe nvfp4`, megatron/core/transformer/transformer_config.py) are the only
        // launch path here that runs them.
        let fallback = if hw.has_fp8() {
            "fp8"
        } else if hw.has_bf16() {
            "bf16"
        } else {
            "fp16"
        };
        if !hw.has_block_scaling() {
            acc.push(
                Error,
                Code::HwNoBlockScaling,
                &[("device", hw.name.clone())],
                Some((Field::Precision, Value::from(fallback))),
            );
        } else if plan.framework != Framework::Megatron {
            acc.push(
                Error,
                Code::PrecisionFramework,
                &[
                    ("framework", plan.framework.wire().to_owned()),
                    ("precision", plan.precision.wire().to_owned()),
                ],
                Some((Field::Precision, Value::from(fallback))),
            );
        }
    }
    let per_node = u64::from(plan.cluster.devices_per_node.get());
    if megatron && per_node < tp {
        let fix = nearest_divisor(heads, per_node.min(tp)).min(per_node);
        acc.push(
            Warning,
            Code::HwTpAcrossNodes,
            &[("tp", tp.to_string()), ("devices_per_node", per_node.to_string())],
            Some((Field::ParallelTp, Value::from(fix))),
        );
    }
}
