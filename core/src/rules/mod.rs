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
//!
//! The rules come in families, a module each, reading the facts they share from one context
//! (`Ctx`): the device (`hardware`), the method on the framework (`method`), the pipeline's layout
//! and schedules (`pipeline`), the parallel sizes (`parallel`), the memory knobs and the fit
//! (`memory`), recomputation (`recompute`), the batch (`batch`), the `moe` section (`moe`),
//! MindSpeed's features (`mindspeed`), the HF path (`hf`) and RL (`rl`); `fix` holds `apply` and
//! the fixes' arithmetic. [`check`] calls them in the order the findings are listed.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::hardware::Hardware;
use crate::memory::Memory;
use crate::model::{Architecture, Attention};
use crate::plan::{Framework, Method, Parallel, Plan};
use crate::report::{Code, Finding, Fix, Severity};

mod batch;
mod fix;
mod hardware;
mod hf;
mod memory;
mod method;
mod mindspeed;
mod moe;
mod parallel;
mod pipeline;
mod recompute;
mod rl;

pub(crate) use fix::divisors_of;
use fix::gcd;
pub use fix::{apply, apply_all, nearest_divisor, nearest_multiple};
pub(crate) use rl::rollout_ep_layout;

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
struct Acc {
    res: Vec<Finding>,
    /// Errors only, by code: no arguments, message or fix ([`errors`]).
    lean: bool,
}

impl Acc {
    fn push(
        &mut self,
        severity: Severity,
        code: Code,
        args: &[(&'static str, String)],
        fix: Option<(crate::field::Field, Value)>,
    ) {
        if self.lean {
            if severity == Severity::Error {
                let args = BTreeMap::new();
                self.res.push(Finding { severity, code, args, fix: None, make_valid: false });
            }
            return;
        }
        let args = args.iter().cloned().collect::<BTreeMap<_, _>>();
        self.res.push(Finding {
            severity,
            code,
            args,
            fix: fix.map(|(field, value)| Fix { field, value }),
            make_valid: false,
        });
    }

    /// The findings, errors first, then warnings and notes, each in the order they were found.
    fn finish(mut self) -> Vec<Finding> {
        crate::sort::sort_by_key(&mut self.res, |f| match f.severity {
            Severity::Error => 0,
            Severity::Warning => 1,
            Severity::Note => 2,
        });
        self.res
    }
}

/// Every rule the plan breaks, errors first.
pub fn check(plan: &Plan, mem: &Memory) -> Vec<Finding> {
    check_as(plan, mem, false)
}

/// The rules the plan breaks outright (errors), by code alone: a finding's arguments, message and
/// fix are left empty and unworked, as the search needs none of them.
pub fn errors(plan: &Plan, mem: &Memory) -> Vec<Finding> {
    check_as(plan, mem, true)
}

/// Whether the framework cannot train the plan's method at all (an error of the `method` family):
/// that depends on the framework, the method, the precision and the device's maker, none of which
/// a layout or a memory knob changes.
pub fn method_unsupported(plan: &Plan, mem: &Memory) -> bool {
    let mut acc = Acc { res: Vec::new(), lean: true };
    method::check(&Ctx::new(plan, mem), &mut acc);
    !acc.res.is_empty()
}

fn check_as(plan: &Plan, mem: &Memory, lean: bool) -> Vec<Finding> {
    let cx = &Ctx::new(plan, mem);
    let mut acc = Acc { res: Vec::new(), lean };
    // The families in the order their findings are listed within a severity (the report, the page
    // and the golden files keep it): a family's calls are not grouped where that would reorder them.
    hardware::check(cx, &mut acc);
    method::check(cx, &mut acc);
    let layout_string = pipeline::layout_string(cx, &mut acc);
    if cx.megatron {
        parallel::megatron_world_and_heads(cx, &mut acc);
        pipeline::megatron_split(cx, layout_string, &mut acc);
        parallel::megatron_experts_and_sequence(cx, &mut acc);
        parallel::megatron_context_parallel(cx, &mut acc);
        parallel::megatron_attention_sinks(cx, &mut acc);
        parallel::megatron_sliding_window(cx, &mut acc);
        parallel::mindspeed_rl_rotary(cx, &mut acc);
        parallel::megatron_mla_yarn_betas(cx, &mut acc);
        memory::megatron_optimizer(cx, &mut acc);
        recompute::megatron(cx, &mut acc);
        mindspeed::megatron_lora(cx, &mut acc);
    }
    parallel::linear_attention(cx, &mut acc);
    batch::check(cx, &mut acc);
    pipeline::schedule(cx, &mut acc);
    rl::verl_lora_rank(cx, &mut acc);
    rl::verl_zero_stage(cx, &mut acc);
    rl::verl_offload_policy_fsdp1(cx, &mut acc);
    pipeline::account_framework(cx, &mut acc);
    recompute::distribute_saved_activations(cx, &mut acc);
    mindspeed::fused_kernels(cx, &mut acc);
    if cx.arch.moe.is_some() {
        moe::check(cx, &mut acc);
    }
    memory::fsdp(cx, &mut acc);
    if !cx.megatron {
        hf::check(cx, &mut acc);
    }
    mindspeed::knobs(cx, &mut acc);
    hf::layers_ratio(cx, &mut acc);
    hf::nvme(cx, &mut acc);
    hf::zero_plus_plus(cx, &mut acc);
    hf::liger_zero3(cx, &mut acc);
    hf::pure_bf16_zero3(cx, &mut acc);
    hf::adam_8bit_offload(cx, &mut acc);
    hf::low_rank(cx, &mut acc);
    hf::gpt_oss_kernel(cx, &mut acc);
    hf::qlora_experts(cx, &mut acc);
    hf::prequantized(cx, &mut acc);
    hf::mean_seq_len(cx, &mut acc);
    batch::image_tokens(cx, &mut acc);
    if cx.rl {
        rl::batches(cx, &mut acc);
        rl::rollout(cx, &mut acc);
        rl::rollout_ep(cx, &mut acc);
    }
    mindspeed::lora_moe_dispatcher(cx, &mut acc);
    mindspeed::group_limited_ep(cx, &mut acc);
    memory::fits(cx, &mut acc);
    acc.finish()
}
