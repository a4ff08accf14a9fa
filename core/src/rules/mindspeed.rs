//! MindSpeed's own features (MindSpeed-LLM and MindSpeed-RL, each feature's `validate_args` under
//! `features_manager/`): swap-attention, the optimizer swap, activation-function recomputation,
//! fused kernels, Ascend's CoC and LoRA with them, and their switches on other frameworks.

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx, divisors_of, gcd};
use crate::hardware::Vendor;
use crate::plan::{Framework, Method, RecomputeGranularity, RecomputeMethod};
use crate::report::{Code, Severity};

/// LoRA against swap-attention and CoC, on the Megatron path.
pub(super) fn megatron_lora(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, hw, p, mindspeed, .. } = cx;
    if matches!(plan.method, Method::Lora) && plan.recompute.swap_attention && mindspeed {
        // MindSpeed `SwapAttentionFeature.validate_args` (features_manager/memory/swap_attention.py):
        // swap-attention is not for LoRA.
        acc.push(
            Error,
            Code::MindspeedSwapAttentionLora,
            &[],
            Some((Field::RecomputeSwapAttention, Value::from(false))),
        );
    }
    if matches!(plan.method, Method::Lora) && p.tp_comm_overlap && hw.vendor == Vendor::Ascend && mindspeed {
        // MindSpeed-LLM features_manager/tensor_parallel/coc.py: --use-ascend-coc is not for LoRA.
        acc.push(
            Error,
            Code::MindspeedCocLora,
            &[],
            Some((Field::ParallelTpCommOverlap, Value::from(false))),
        );
    }
}

/// The fused-kernel switch, which only MindSpeed has.
pub(super) fn fused_kernels(cx: &Ctx, acc: &mut Acc) {
    use Severity::Warning;
    let &Ctx { plan, p, .. } = cx;
    if !p.fused_kernels && !matches!(plan.framework, Framework::MindSpeedLlm | Framework::MindSpeedRl) {
        // `--use-fused-rmsnorm --use-fused-swiglu --use-fused-rotary-pos-emb` are MindSpeed's
        // (`mindspeed/features_manager/`); Megatron-LM fuses through Transformer Engine and the HF
        // frameworks through their own kernels, with no such switch.
        acc.push(
            Warning,
            Code::ParallelFusedKernelsFramework,
            &[("framework", plan.framework.wire().to_owned())],
            Some((Field::ParallelFusedKernels, Value::from(true))),
        );
    }
}

/// MindSpeed's memory switches: ignored elsewhere, and their own conditions.
pub(super) fn knobs(cx: &Ctx, acc: &mut Acc) {
    use Severity::{Error, Note};
    let &Ctx { plan, arch, p, mindspeed, .. } = cx;
    let mindspeed_knobs = [
        (plan.recompute.activation_function, Field::RecomputeActivationFunction),
        (plan.recompute.swap_attention, Field::RecomputeSwapAttention),
        (p.swap_optimizer, Field::ParallelSwapOptimizer),
    ];
    for (on, field) in mindspeed_knobs {
        if on && !mindspeed {
            acc.push(
                Note,
                Code::MindspeedKnobIgnored,
                &[("field", field.path().to_owned()), ("framework", plan.framework.wire().to_owned())],
                Some((field, Value::from(false))),
            );
        }
    }
    if mindspeed && p.swap_optimizer && !p.distributed_optimizer {
        // MindSpeed `swap_optimizer_feature.py`: dependency_check(args, 'use_distributed_optimizer').
        acc.push(
            Error,
            Code::MindspeedSwapOptimizer,
            &[],
            Some((Field::ParallelDistributedOptimizer, Value::from(true))),
        );
    }
    let act_fn_layers = u64::from(plan.recompute.activation_function_layers);
    if mindspeed && plan.recompute.activation_function && arch.n_layers < act_fn_layers {
        // MindSpeed `RecomputeActivationFeature.validate_args` (features_manager/recompute/
        // activation_function.py): the count lies in [0, num_layers].
        acc.push(
            Error,
            Code::MindspeedActFnLayers,
            &[("layers", act_fn_layers.to_string()), ("n_layers", arch.n_layers.to_string())],
            Some((Field::RecomputeActivationFunctionLayers, Value::from(arch.n_layers))),
        );
    }
    if mindspeed
        && plan.recompute.activation_function
        && plan.recompute.granularity == RecomputeGranularity::Full
        && plan.recompute.method != RecomputeMethod::Block
    {
        // MindSpeed docs/zh/features/activation-function-recompute.md: with full recompute only the block
        // method is supported, each layer then does one kind of recompute.
        acc.push(
            Error,
            Code::MindspeedActFnFullBlock,
            &[],
            Some((Field::RecomputeMethod, Value::from("block"))),
        );
    }
}

/// LoRA on an MoE model under MindSpeed: the dispatcher the launch file sets, whatever
/// `moe.dispatcher` says (MindSpeed-LLM features_manager/finetune/lora.py `validate_args`: "Lora
/// in the moe only enable the alltoall_seq"); and MindSpeed-RL's actor, whose resharding to the
/// rollout needs `moe_tp_extend_ep` with EP above 1 (rule mindspeed_rl.tp_extend_ep), which the same
/// feature refuses with LoRA ("Lora is not supported with moe-tp-extend-ep").
pub(super) fn lora_moe_dispatcher(cx: &Ctx, acc: &mut Acc) {
    let &Ctx { plan, arch, ep, mindspeed, .. } = cx;
    if arch.moe.is_none() || !plan.trains_lora() || !mindspeed {
        return;
    }
    acc.push(Severity::Note, Code::MindspeedLoraMoeDispatcher, &[], None);
    if plan.framework == crate::plan::Framework::MindSpeedRl && 1 < ep {
        acc.push(
            Severity::Error,
            Code::MindspeedRlLoraTpExtendEp,
            &[],
            Some((Field::ParallelEp, Value::from(1))),
        );
    }
}

/// MindSpeed-LLM's group-limited router (DeepSeek-V2's `group_limited_greedy`, which the launch file
/// writes) against EP: `MoERouter._validate_group_limited_greedy`
/// (`mindspeed_llm/features_manager/moe/moe_router.py`) asserts "The topk group ({top_groups})
/// should be less than n-group(EP)", comparing it with the expert parallelism, not the groups. The
/// fix is the least EP above it that divides the experts and the devices left by TP (experts) × PP.
pub(super) fn group_limited_ep(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { arch, ep, etp, pp, world, mindspeed, .. } = cx;
    let Some(moe) = arch.moe.as_ref().filter(|_| mindspeed) else { return };
    let Some(limit) = moe.group_limited.filter(|g| ep <= g.top_groups) else { return };
    let room = gcd(moe.n_experts, world / (etp * pp).max(1));
    let fix = divisors_of(room).filter(|d| limit.top_groups < *d).min();
    acc.push(
        Error,
        Code::MindspeedGroupLimitedEp,
        &[("top_groups", limit.top_groups.to_string()), ("ep", ep.to_string())],
        fix.map(|d| (Field::ParallelEp, Value::from(d))),
    );
}
