//! The frameworks' own rules, checked before a plan reaches a queue: each broken rule is a finding
//! with a stable code, a severity, the actual values, and a fix the page can apply with one click.
//! Sources: Megatron-LM `megatron/training/arguments.py::validate_args`,
//! `megatron/core/transformer/transformer_config.py`, `megatron/core/model_parallel_config.py`,
//! `megatron/core/parallel_state.py`, `megatron/core/num_microbatches_calculator.py` and
//! `megatron/core/pipeline_parallel/schedules.py`; DeepSpeed `deepspeed/runtime/config.py` and
//! `deepspeed/runtime/engine.py`; LLaMA-Factory `src/llamafactory/hparams/parser.py`; MindSpeed and
//! MindSpeed-LLM `features_manager/**` (each feature's `validate_args`); VeRL `verl/utils/config.py`,
//! `verl/workers/config/*.py` and `verl/workers/fsdp_workers.py`; MindSpeed-RL
//! `mindspeed_rl/config_cls/validate_config.py`; the vendors' datasheets (`hardware.rs`). A check
//! names its function beside it; docs/validation.md lists every rule with its source.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::hardware::{Hardware, Vendor};
use crate::memory::Memory;
use crate::model::{Architecture, Attention, Family};
use crate::plan::{Framework, Method, Parallel, PipelineSchedule, Plan, Precision, RecomputeGranularity};
use crate::report::{Code, Finding, Fix, Severity};

mod fix;
mod hardware;
mod memory;
mod method;
mod parallel;
mod pipeline;
mod recompute;

pub use fix::{apply, apply_all, nearest_divisor, nearest_multiple};
use fix::{divisors_of, gcd};

/// Which rules a framework follows.
fn megatron_path(framework: Framework) -> bool {
    crate::layout::model_parallel(framework)
}

/// What the rule families read, computed once per check. The sizes are the plan's as written: a
/// rule judges what the plan asks for (an HF-path plan asking for TP 2 is told it gets none), where
/// `mem.layout` holds the sizes that take effect.
struct Ctx<'a> {
    plan: &'a Plan,
    mem: &'a Memory,
    arch: &'a Architecture,
    hw: &'a Hardware,
    p: &'a Parallel,
    /// Devices in the cluster.
    world: u64,
    tp: u64,
    pp: u64,
    vpp: u64,
    cp: u64,
    ep: u64,
    etp: u64,
    mbs: u64,
    gbs: u64,
    seq: u64,
    /// Attention heads, and the key/value heads (query groups; every head under MLA).
    heads: u64,
    kv_heads: u64,
    /// The Megatron path: Megatron-LM, MindSpeed-LLM and MindSpeed-RL ([`megatron_path`]).
    megatron: bool,
    /// MindSpeed-LLM or MindSpeed-RL, whose features (swap-attention, fused kernels) MindSpeed adds.
    mindspeed: bool,
    /// An RL method (GRPO, PPO).
    rl: bool,
}

impl<'a> Ctx<'a> {
    fn new(plan: &'a Plan, mem: &'a Memory) -> Self {
        let arch = &plan.model.arch;
        let p = &plan.parallel;
        Ctx {
            plan,
            mem,
            arch,
            hw: &plan.hardware.hw,
            p,
            world: plan.cluster.n_devices(),
            tp: u64::from(p.tp.get()),
            pp: u64::from(p.pp.get()),
            vpp: u64::from(p.vpp.get()),
            cp: u64::from(p.cp.get()),
            ep: u64::from(p.ep.get()),
            etp: u64::from(p.etp.get()),
            mbs: u64::from(plan.batch.micro_batch.get()),
            gbs: u64::from(plan.batch.global_batch.get()),
            seq: u64::from(plan.batch.seq_len.get()),
            heads: arch.attention.n_heads(),
            kv_heads: match arch.attention {
                Attention::Gqa { n_kv_heads, .. } => n_kv_heads,
                Attention::Mla { n_heads, .. } => n_heads,
            },
            megatron: megatron_path(plan.framework),
            mindspeed: matches!(plan.framework, Framework::MindSpeedLlm | Framework::MindSpeedRl),
            rl: matches!(plan.method, Method::Grpo | Method::Ppo),
        }
    }
}

/// The findings in the order the rules produce them.
#[derive(Default)]
struct Acc {
    res: Vec<Finding>,
}

impl Acc {
    fn push(
        &mut self,
        severity: Severity,
        code: Code,
        args: &[(&'static str, String)],
        fix: Option<(&'static str, Value)>,
    ) {
        let args = args.iter().cloned().collect::<BTreeMap<_, _>>();
        self.res.push(Finding {
            severity,
            code,
            message: code.message(&args),
            args,
            fix: fix.map(|(field, value)| Fix { field, value }),
            make_valid: false,
        });
    }

    /// The findings, errors first, then warnings and notes, each in the order they were found.
    fn finish(mut self) -> Vec<Finding> {
        self.res.sort_by_key(|f| match f.severity {
            Severity::Error => 0,
            Severity::Warning => 1,
            Severity::Note => 2,
        });
        self.res
    }
}

/// Every rule the plan breaks, errors first.
pub fn check(plan: &Plan, mem: &Memory) -> Vec<Finding> {
    let cx = &Ctx::new(plan, mem);
    let mut acc = Acc::default();
    let &Ctx {
        plan,
        mem,
        arch,
        hw,
        p,
        world,
        tp,
        pp,
        vpp,
        cp,
        ep,

        mbs,
        gbs,
        seq,
        heads,

        megatron,
        mindspeed,
        rl,
        ..
    } = cx;
    use Severity::*;

    hardware::check(cx, &mut acc);
    method::check(cx, &mut acc);

    // ---------- Megatron path (Megatron-LM, MindSpeed-LLM, MindSpeed-RL) ----------
    let layout_string = pipeline::layout_string(cx, &mut acc);
    if megatron {
        parallel::megatron_world_and_heads(cx, &mut acc);
        pipeline::megatron_split(cx, layout_string, &mut acc);
        parallel::megatron_experts_and_sequence(cx, &mut acc);
        memory::megatron_optimizer(cx, &mut acc);
        recompute::megatron(cx, &mut acc);
        if matches!(plan.method, Method::Lora) && plan.recompute.swap_attention && mindspeed {
            // MindSpeed `SwapAttentionFeature.validate_args` (features_manager/memory/swap_attention.py):
            // swap-attention is not for LoRA.
            acc.push(
                Error,
                Code::MindspeedSwapAttentionLora,
                &[],
                Some(("recompute.swap_attention", Value::from(false))),
            );
        }
        if matches!(plan.method, Method::Lora)
            && p.tp_comm_overlap
            && hw.vendor == Vendor::Ascend
            && mindspeed
        {
            // MindSpeed-LLM features_manager/tensor_parallel/coc.py: --use-ascend-coc is not for LoRA.
            acc.push(
                Error,
                Code::MindspeedCocLora,
                &[],
                Some(("parallel.tp_comm_overlap", Value::from(false))),
            );
        }
    }
    // `validate_args`: max_position_embeddings ≥ seq_length, the model's context.
    if arch.max_position_embeddings < seq {
        acc.push(
            Warning,
            Code::ModelSeqTooLong,
            &[("seq_len", seq.to_string()), ("max", arch.max_position_embeddings.to_string())],
            Some(("batch.seq_len", Value::from(arch.max_position_embeddings))),
        );
    }

    // ---------- batch identity (Megatron `num_microbatches_calculator.py`, DeepSpeed
    // `DeepSpeedConfig._batch_assertion`, HF `TrainingArguments`, VeRL `validate_config`) ----------
    let dp = mem.dp;
    let (batch_unit, what) = match plan.framework {
        Framework::Verl => (world / cp.max(1), "devices ÷ Ulysses SP"),
        _ => (mbs * dp, "micro-batch × DP"),
    };
    let samples = match plan.framework {
        Framework::Verl => gbs * u64::from(plan.rl.n_samples_per_prompt.get()),
        _ => gbs,
    };
    if !samples.is_multiple_of(batch_unit.max(1)) {
        let fix = match plan.framework {
            Framework::Verl => nearest_multiple(
                gbs,
                batch_unit / gcd(batch_unit, u64::from(plan.rl.n_samples_per_prompt.get())),
            ),
            _ => nearest_multiple(gbs, batch_unit),
        };
        acc.push(
            Error,
            Code::BatchDivisible,
            &[("global_batch", gbs.to_string()), ("unit", batch_unit.to_string()), ("what", what.to_owned())],
            Some(("batch.global_batch", Value::from(fix))),
        );
    } else if megatron && 1 < vpp && !mem.n_microbatches.is_multiple_of(pp) {
        // `forward_backward_pipelining_with_interleaving` (schedules.py): the interleaved schedule
        // needs micro-batches in groups of PP.
        acc.push(
            Error,
            Code::BatchVppMicrobatches,
            &[("microbatches", mem.n_microbatches.to_string()), ("pp", pp.to_string())],
            Some(("batch.global_batch", Value::from(nearest_multiple(gbs, mbs * dp * pp)))),
        );
    }
    if megatron && 1 < pp && mem.n_microbatches < pp {
        acc.push(
            Warning,
            Code::BatchFewMicrobatches,
            &[("microbatches", mem.n_microbatches.to_string()), ("pp", pp.to_string())],
            Some(("batch.global_batch", Value::from(mbs * dp * 4 * pp))),
        );
    }
    if megatron && p.schedule == PipelineSchedule::DualPipeV && mem.n_microbatches < 2 * pp {
        acc.push(
            Error,
            Code::ScheduleDualpipevMicrobatches,
            &[("microbatches", mem.n_microbatches.to_string()), ("pp", pp.to_string())],
            Some(("batch.global_batch", Value::from(mbs * dp * 2 * pp))),
        );
    }

    pipeline::schedule(cx, &mut acc);

    if rl && plan.rl.lora && plan.framework == Framework::Verl && 512 < plan.lora.rank.get() {
        // vLLM serves the adapters with `max_lora_rank` at most 512 (vllm/config/lora.py
        // `MaxLoRARanks`); VeRL rounds a rank up to the next allowed value and refuses one above
        // (verl/utils/vllm/utils.py `get_vllm_max_lora_rank`).
        acc.push(
            Error,
            Code::VerlLoraRank,
            &[("rank", plan.lora.rank.to_string())],
            Some(("lora.rank", Value::from(512))),
        );
    }

    pipeline::account_framework(cx, &mut acc);

    if !p.fused_kernels && !matches!(plan.framework, Framework::MindSpeedLlm | Framework::MindSpeedRl) {
        // `--use-fused-rmsnorm --use-fused-swiglu --use-fused-rotary-pos-emb` are MindSpeed's
        // (`mindspeed/features_manager/`); Megatron-LM fuses through Transformer Engine and the HF
        // frameworks through their own kernels, with no such switch.
        acc.push(
            Warning,
            Code::ParallelFusedKernelsFramework,
            &[("framework", plan.framework.wire().to_owned())],
            Some(("parallel.fused_kernels", Value::from(true))),
        );
    }
    // ---------- MoE kernels and routing (`moe` section) ----------
    if arch.moe.is_some() {
        moe_rules(cx, &mut acc);
    }

    memory::fsdp(cx, &mut acc);

    // ---------- HF path (DeepSpeed, LLaMA-Factory, VeRL FSDP) ----------
    if !megatron {
        let model_parallel = [("parallel.tp", tp), ("parallel.pp", pp), ("parallel.ep", ep)];
        // An error, not a hint: the launch file would silently train without the degree (VeRL's
        // FSDP strategy, DeepSpeed and LLaMA-Factory have none; VeRL's Megatron strategy does).
        for (field, degree) in model_parallel {
            if 1 < degree {
                acc.push(
                    Error,
                    Code::HfNoModelParallel,
                    &[("field", field.to_owned()), ("framework", plan.framework.wire().to_owned())],
                    Some((field, Value::from(1))),
                );
            }
        }
        if 1 < cp && plan.framework != Framework::Verl {
            acc.push(
                Error,
                Code::HfNoModelParallel,
                &[("field", "parallel.cp".to_owned()), ("framework", plan.framework.wire().to_owned())],
                Some(("parallel.cp", Value::from(1))),
            );
        }
        if p.offload_params && p.zero_stage != 3 {
            // DeepSpeed `_configure_zero_optimizer` (runtime/engine.py): parameter offload is ZeRO-3 only.
            acc.push(
                Error,
                Code::ZeroOffloadParamsNeeds3,
                &[("zero_stage", p.zero_stage.to_string())],
                Some(("parallel.zero_stage", Value::from(3))),
            );
        }
        if p.distributed_optimizer {
            acc.push(
                Note,
                Code::HfDistributedOptimizer,
                &[("framework", plan.framework.wire().to_owned())],
                Some(("parallel.distributed_optimizer", Value::from(false))),
            );
        }
    }
    let mindspeed_knobs = [
        (plan.recompute.activation_function, "recompute.activation_function"),
        (plan.recompute.swap_attention, "recompute.swap_attention"),
        (p.swap_optimizer, "parallel.swap_optimizer"),
    ];
    for (on, field) in mindspeed_knobs {
        if on && !mindspeed {
            acc.push(
                Note,
                Code::MindspeedKnobIgnored,
                &[("field", field.to_owned()), ("framework", plan.framework.wire().to_owned())],
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
            Some(("parallel.distributed_optimizer", Value::from(true))),
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
            Some(("recompute.activation_function_layers", Value::from(arch.n_layers))),
        );
    }
    if mindspeed
        && plan.recompute.activation_function
        && plan.recompute.granularity == RecomputeGranularity::Full
        && plan.recompute.method != crate::plan::RecomputeMethod::Block
    {
        // MindSpeed docs/zh/features/activation-function-recompute.md: with full recompute only the block
        // method is supported, each layer then does one kind of recompute.
        acc.push(Error, Code::MindspeedActFnFullBlock, &[], Some(("recompute.method", Value::from("block"))));
    }
    if plan.recompute.layers_ratio_frac < 1.0 {
        let ratio = format!("{}", plan.recompute.layers_ratio_frac);
        if plan.framework != Framework::LlamaFactory {
            acc.push(
                Note,
                Code::LlamafactoryLayersRatioIgnored,
                &[("framework", plan.framework.wire().to_owned())],
                Some(("recompute.layers_ratio", Value::from(1.0))),
            );
        } else if hw.vendor != Vendor::Ascend {
            // Ascend's packaged LLaMA-Factory reads it (`backend_config.training`; no public source);
            // upstream's `_parse_args` (src/llamafactory/hparams/parser.py) refuses keys it does not know.
            acc.push(
                Warning,
                Code::LlamafactoryLayersRatioUpstream,
                &[("ratio", ratio)],
                Some(("recompute.layers_ratio", Value::from(1.0))),
            );
        }
    }

    // ---------- RL (VeRL, MindSpeed-RL, vLLM) ----------
    if rl {
        let prompts = gbs;
        let mini = u64::from(plan.rl.mini_batch);
        if mini != 0 && (prompts < mini || !prompts.is_multiple_of(mini)) {
            // VeRL `ActorConfig.validate`: train_batch_size ≥ ppo_mini_batch_size; updates per step
            // = train_batch / mini (verl/workers/config/actor.py); MindSpeed-RL likewise.
            acc.push(
                Error,
                Code::RlMiniBatch,
                &[("mini", mini.to_string()), ("prompts", prompts.to_string())],
                Some(("rl.mini_batch", Value::from(nearest_divisor(prompts, mini)))),
            );
        }
        let n = u64::from(plan.rl.n_samples_per_prompt.get());
        let split = world / cp.max(1);
        if plan.framework == Framework::Verl
            && mini != 0
            && prompts.is_multiple_of(mini)
            && !(mini * n).is_multiple_of(split.max(1))
        {
            // VeRL FSDP worker normalization: ppo_mini_batch_size · n ÷ (world ÷ Ulysses SP) must be
            // whole, or samples are silently dropped (`ActorRolloutRefWorker.__init__`, fsdp_workers.py).
            let step = split / gcd(split, n);
            let fix = divisors_of(prompts)
                .filter(|d| d.is_multiple_of(step.max(1)))
                .min_by_key(|d| (d.abs_diff(mini), *d));
            acc.push(
                Error,
                Code::VerlMiniBatchSplit,
                &[("mini", mini.to_string()), ("n", n.to_string()), ("split", split.to_string())],
                fix.map(|d| ("rl.mini_batch", Value::from(d))),
            );
        }
        let sequence = u64::from(plan.rl.sequence_tokens());
        let model_len = u64::from(plan.rl.model_len());
        if model_len < sequence {
            // MindSpeed-RL validate_rl_args: max_model_len ≥ seq_length; VeRL's vLLM
            // rollout asserts max_model_len ≥ prompt_length + response_length.
            acc.push(
                Error,
                Code::RlMaxModelLen,
                &[("max_model_len", model_len.to_string()), ("tokens", sequence.to_string())],
                Some(("rl.max_model_len", Value::from(0))),
            );
        }
        let batched = u64::from(plan.rl.batched_tokens());
        if batched < model_len {
            // vLLM SchedulerConfig: max_num_batched_tokens smaller than max_model_len limits the
            // sequence length (an error without chunked prefill; VeRL raises with it too).
            acc.push(
                Error,
                Code::RlMaxNumBatchedTokens,
                &[("batched", batched.to_string()), ("max_model_len", model_len.to_string())],
                Some(("rl.max_num_batched_tokens", Value::from(model_len))),
            );
        }
        let per_device = u64::from(plan.rl.tokens_per_device(plan.framework, cp as u32));
        if plan.rl.dynamic_batch && per_device * cp.max(1) < sequence {
            // VeRL `seqlen_balancing.rearrange_micro_batches`: "max_token_len must be greater than
            // the sequence length" (the budget is per device × Ulysses SP); MindSpeed-RL packs alike.
            acc.push(
                Error,
                Code::RlTokenBudget,
                &[("budget", per_device.to_string()), ("tokens", sequence.to_string())],
                Some(("rl.max_tokens_per_device", Value::from(sequence.div_ceil(cp.max(1))))),
            );
        }
        let rollout_tp = u64::from(plan.rl.rollout_tp.get());
        if !world.is_multiple_of(rollout_tp) {
            acc.push(
                Error,
                Code::RlRolloutTp,
                &[("world", world.to_string()), ("rollout_tp", rollout_tp.to_string())],
                Some(("rl.rollout_tp", Value::from(nearest_divisor(world, rollout_tp)))),
            );
        }
        if !heads.is_multiple_of(rollout_tp) {
            acc.push(
                Error,
                Code::RlRolloutTpHeads,
                &[("heads", heads.to_string()), ("rollout_tp", rollout_tp.to_string())],
                Some(("rl.rollout_tp", Value::from(nearest_divisor(heads, rollout_tp)))),
            );
        }
        if plan.rl.gpu_memory_utilization_frac >= 1.0 {
            acc.push(
                Error,
                Code::RlGpuMemoryUtilization,
                &[],
                Some(("rl.gpu_memory_utilization", Value::from(0.6))),
            );
        }
        if let Some(r) = &mem.rollout
            && r.kv_cache_bytes == 0
        {
            // The smallest rollout TP whose weight shard leaves a fifth of the engine for KV cache.
            let all_weights = r.weights_bytes * rollout_tp;
            let fit = (1..=gcd(heads, world))
                .filter(|d| heads.is_multiple_of(*d) && world.is_multiple_of(*d))
                .find(|d| (all_weights / d) as f64 <= 0.8 * r.engine_bytes as f64);
            acc.push(Error, Code::RlEngineTooSmall, &[], fit.map(|d| ("rl.rollout_tp", Value::from(d))));
        }
        if plan.framework == Framework::Verl
            && 1 < cp
            && (!world.is_multiple_of(cp) || !heads.is_multiple_of(cp))
        {
            // VeRL: Ulysses needs the devices (the FSDP device mesh) and the heads (`apply_monkey_patch`,
            // verl/models/transformers/monkey_patch.py) to divide.
            acc.push(
                Error,
                Code::VerlUlysses,
                &[("cp", cp.to_string()), ("heads", heads.to_string()), ("world", world.to_string())],
                Some(("parallel.cp", Value::from(nearest_divisor(gcd(world, heads), cp)))),
            );
        }
    }
    if arch.family == Family::DeepseekV3 && plan.method == Method::Lora && ep > 1 && mindspeed {
        // MindSpeed-LLM features_manager/finetune/lora.py: LoRA on MoE needs the alltoall_seq
        // dispatcher; the launch file sets it.
        acc.push(Note, Code::MindspeedLoraMoeDispatcher, &[], None);
    }

    memory::fits(cx, &mut acc);

    acc.finish()
}

/// The `moe` section against the framework and the plan: what Megatron-LM checks
/// (`TransformerConfig.__post_init__` in `megatron/core/transformer/transformer_config.py` at
/// core_v0.19.0) and which frameworks have each flag (core/data/flags/*.tsv).
fn moe_rules(cx: &Ctx, acc: &mut Acc) {
    use crate::plan::MoeDispatcher;
    use Severity::*;
    let &Ctx { plan, p, .. } = cx;
    let m = &plan.moe;
    let framework = plan.framework;
    let off = |field: &'static str| Some((field, Value::from(false)));
    // The HF path (DeepSpeed, LLaMA-Factory, VeRL's FSDP actors) runs the model's own MoE block;
    // MindSpeed-RL's config classes have no capacity flags.
    let written = match framework {
        Framework::Megatron | Framework::MindSpeedLlm => true,
        Framework::MindSpeedRl => m.capacity_factor.is_none() && !m.pad_to_capacity,
        _ => m.is_default(),
    };
    if !written {
        acc.push(Warning, Code::MoeFramework, &[("framework", framework.wire().to_owned())], None);
    }
    if m.dispatcher == MoeDispatcher::Flex && framework != Framework::Megatron {
        // `--moe-flex-dispatcher-backend` (DeepEP, HybridEP) is Megatron-LM's; MindSpeed's parsers
        // have no backend for it.
        acc.push(
            Error,
            Code::MoeFlexFramework,
            &[("framework", framework.wire().to_owned())],
            Some(("moe.dispatcher", Value::from("alltoall"))),
        );
    }
    if m.dispatcher == MoeDispatcher::Flex && p.tp.get() * p.ep.get() <= 1 {
        // `MoEFlexTokenDispatcher.__init__` (`token_dispatcher.py`): "DeepEP dispatcher requires
        // TPxEP > 1".
        acc.push(Error, Code::MoeFlexParallel, &[], Some(("moe.dispatcher", Value::from("alltoall"))));
    }
    if m.pad_to_capacity && m.capacity_factor.is_none() {
        // "moe_expert_capacity_factor must be set to use moe_pad_expert_input_to_capacity".
        acc.push(Error, Code::MoePadNeedsCapacity, &[], off("moe.pad_to_capacity"));
    } else if m.pad_to_capacity && m.dispatcher == MoeDispatcher::Flex {
        // "Flex token dispatcher with deepep backend does not support moe_pad_expert_input_to_capacity".
        acc.push(Error, Code::MoeFlexPad, &[], off("moe.pad_to_capacity"));
    }
    if m.overlap_ep_comm {
        // `overlap_moe_expert_parallel_comm` asserts EP > 1, the alltoall or flex dispatcher, no full
        // recomputation, VPP when PP > 1, and a bf16 or fp16 model; MindSpeed's
        // `--moe-alltoall-overlap-comm` also needs grouped GEMM (moe_alltoall_overlap.py).
        let ascend = matches!(framework, Framework::MindSpeedLlm | Framework::MindSpeedRl);
        let what = match () {
            _ if p.ep.get() <= 1 => Some("expert parallelism 1"),
            _ if m.dispatcher == MoeDispatcher::AllGather => Some("the allgather dispatcher"),
            _ if plan.recompute.granularity == RecomputeGranularity::Full => Some("full recomputation"),
            _ if 1 < p.pp.get() && p.vpp.get() <= 1 && p.schedule != PipelineSchedule::DualPipeV => {
                Some("pipeline parallelism without virtual stages")
            }
            _ if plan.precision == Precision::Fp32 => Some("fp32"),
            _ if ascend && !m.grouped_gemm => Some("experts without grouped GEMM"),
            _ => None,
        };
        if let Some(what) = what {
            acc.push(Error, Code::MoeOverlap, &[("what", what.to_owned())], off("moe.overlap_ep_comm"));
        }
    }
}
