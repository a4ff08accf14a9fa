//! What a choice in a plan file brings with it, for a form that edits the file: the sharding a
//! framework starts from when it is chosen, whether the plan trains LoRA adapters (so a LoRA rank
//! is asked for), and whether a budget is one the plan file takes. The page calls these rather than
//! deciding them in its views.

use crate::Plan;
use crate::plan::{BudgetFile, Framework, Fsdp, Method, PlanFile, ZeroStage};

/// Sets the plan file's framework. Choosing VeRL coming from another framework with ZeRO off
/// (stage 0) sets ZeRO-3, the sharding VeRL's FSDP actor runs by default; any other stage the file
/// holds is kept, and so is stage 0 chosen while on VeRL.
///
/// Source: volcengine/verl v0.4.1 `verl/trainer/config/ppo_trainer.yaml`,
/// `actor_rollout_ref.actor.fsdp_config.fsdp_size: -1` (parameters, gradients and optimizer states
/// sharded over every rank) with `reshard_after_forward: True`: ZeRO-3's memory.
///
/// ```
/// use trainplan_core::choices::choose_framework;
/// use trainplan_core::plan::{Framework, ModelField, PlanFile};
///
/// let mut file = PlanFile::minimal(ModelField::Id("qwen2.5-7b".to_owned()));
/// file.parallel.zero_stage = 0;
/// choose_framework(&mut file, Framework::Verl);
/// assert_eq!((file.framework, file.parallel.zero_stage), (Framework::Verl, 3));
/// ```
///
/// Choosing VeRL's Megatron engine from another framework turns the distributed optimizer and
/// sequence parallelism on, as the engine's own defaults have them (verl 0.9.1
/// `verl/trainer/config/engine/megatron.yaml`, `use_distributed_optimizer: True`,
/// `sequence_parallel: True`, which it turns off itself at TP 1).
pub fn choose_framework(file: &mut PlanFile, framework: Framework) {
    if framework == Framework::Verl && file.framework != Framework::Verl && file.parallel.zero_stage == 0 {
        file.parallel.zero_stage = 3;
    }
    if framework == Framework::VerlMegatron && file.framework != Framework::VerlMegatron {
        file.parallel.distributed_optimizer = true;
        file.parallel.sequence_parallel = true;
    }
    file.framework = framework;
}

/// Whether the plan file trains LoRA adapters on a frozen base: the `lora`, `qlora` and `dpo-lora`
/// methods, and RL with `rl.lora`. The same answer as [`crate::Plan::trains_lora`] for the plan the file
/// gives, also while another field of the file is still refused.
pub fn trains_lora(file: &PlanFile) -> bool {
    match file.method {
        Method::Lora | Method::Qlora | Method::DpoLora => true,
        Method::Grpo | Method::Ppo => file.rl.lora,
        Method::Pretrain | Method::SftFull | Method::Freeze | Method::Dpo => false,
    }
}

/// Whether a plan file takes `budget` as its `budget` section: the decoder's own checks
/// (`Plan::from_file`: tokens from 1 to 10^16, epochs above 0 and at most 10,000, a price from 0
/// to 10^6, a PUE from 1 to 5), asked of it on the first visit's plan with this budget, so a form
/// can refuse a figure as it is typed and keep the last one taken.
pub fn takes_budget(budget: &BudgetFile) -> bool {
    let mut file = Plan::first_visit().to_file();
    file.budget = *budget;
    Plan::from_file(&file).is_ok()
}

/// The FSDP choices (`parallel.fsdp`) a framework has: Megatron-LM all of Megatron FSDP's shardings
/// and torch FSDP2 (core_v0.19.0 `--use-megatron-fsdp`, `--use-torch-fsdp2`); MindSpeed-LLM, on
/// Megatron core 0.12.1, torch FSDP2 alone; VeRL's FSDP engine FSDP1 (`none`, `strategy: fsdp`) or
/// FSDP2 (`strategy: fsdp2`, verl/workers/engine/fsdp/transformer_impl.py at verl 0.9.1); the others
/// none (rule fsdp.framework refuses the rest).
///
/// ```
/// use trainplan_core::choices::fsdp_offered;
/// use trainplan_core::plan::{Framework, Fsdp};
///
/// assert!(fsdp_offered(Framework::Verl).contains(&Fsdp::Torch));
/// assert!(!fsdp_offered(Framework::Verl).contains(&Fsdp::OptimGradsParams));
/// assert_eq!(fsdp_offered(Framework::Megatron), Fsdp::ALL);
/// ```
pub fn fsdp_offered(framework: Framework) -> &'static [Fsdp] {
    match framework {
        Framework::Megatron => Fsdp::ALL,
        Framework::MindSpeedLlm | Framework::Verl => &[Fsdp::None, Fsdp::Torch],
        _ => &[Fsdp::None],
    }
}

/// The ZeRO stages (`parallel.zero_stage`) a framework shards by: every one, but VeRL's FSDP
/// engine, which shards the parameters with everything else (ZeRO-3, its default), the gradients
/// and optimizer states alone (`reshard_after_forward: False`, ZeRO-2), or nothing (`fsdp_size: 1`),
/// never the optimizer states alone (verl 0.9.1 `verl/workers/engine/fsdp/utils.py`:
/// `create_device_mesh`, `get_sharding_strategy`). Rule verl.zero_stage refuses the rest, the
/// advice's ZeRO ladder climbs these, and the form offers these.
///
/// ```
/// use trainplan_core::choices::zero_offered;
/// use trainplan_core::plan::{Framework, ZeroStage};
///
/// assert!(!zero_offered(Framework::Verl).contains(&ZeroStage::new(1).unwrap()));
/// assert_eq!(zero_offered(Framework::DeepSpeed), ZeroStage::ALL);
/// ```
pub fn zero_offered(framework: Framework) -> &'static [ZeroStage] {
    const FSDP_ENGINE: [ZeroStage; 3] = [ZeroStage::NONE, ZeroStage::TWO, ZeroStage::THREE];
    match framework {
        Framework::Verl => &FSDP_ENGINE,
        _ => &ZeroStage::ALL,
    }
}

/// The lowest stage above `stage` that `framework` shards by ([`zero_offered`]), if any: a step up
/// the ZeRO ladder, as the advice and the memory rule's fix take it.
///
/// ```
/// use trainplan_core::choices::zero_above;
/// use trainplan_core::plan::{Framework, ZeroStage};
///
/// let stage = |n| ZeroStage::new(n).unwrap();
/// assert_eq!(zero_above(Framework::DeepSpeed, stage(0)), Some(stage(1)));
/// assert_eq!(zero_above(Framework::Verl, stage(0)), Some(stage(2)));
/// assert_eq!(zero_above(Framework::Verl, stage(1)), Some(stage(2)));
/// assert_eq!(zero_above(Framework::DeepSpeed, stage(3)), None);
/// ```
pub fn zero_above(framework: Framework, stage: ZeroStage) -> Option<ZeroStage> {
    zero_offered(framework).iter().copied().find(|&s| stage < s)
}

/// The highest stage below `stage` that `framework` shards by ([`zero_offered`]), if any.
///
/// ```
/// use trainplan_core::choices::zero_below;
/// use trainplan_core::plan::{Framework, ZeroStage};
///
/// let stage = |n| ZeroStage::new(n).unwrap();
/// assert_eq!(zero_below(Framework::DeepSpeed, stage(2)), Some(stage(1)));
/// assert_eq!(zero_below(Framework::Verl, stage(2)), Some(stage(0)));
/// assert_eq!(zero_below(Framework::Verl, stage(0)), None);
/// ```
pub fn zero_below(framework: Framework, stage: ZeroStage) -> Option<ZeroStage> {
    zero_offered(framework).iter().copied().rev().find(|&s| s < stage)
}

/// Whether the plan file's step runs under plain PyTorch (LLaMA-Factory's `Trainer` without
/// DeepSpeed: ZeRO 0, nothing offloaded; `memory::runs_plain_torch`), where `pure_bf16` is counted,
/// so the form offers it.
pub fn plain_torch(file: &PlanFile) -> bool {
    crate::memory::runs_plain_torch(file.framework, file.method, deepspeed(file))
}

/// Whether the plan file's step can run 8-bit AdamW (`memory::offers_eight_bit_adam`): LLaMA-Factory
/// under plain PyTorch or DeepSpeed, so the form offers it.
pub fn offers_eight_bit_adam(file: &PlanFile) -> bool {
    crate::memory::offers_eight_bit_adam(file.framework, file.method, deepspeed(file))
}

/// Whether the plan file hands its step to DeepSpeed (`memory::runs_deepspeed`): ZeRO shards.
fn deepspeed(file: &PlanFile) -> bool {
    0 < file.parallel.zero_stage
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The form's question agrees with the engine's on the plan the file makes: LLaMA-Factory's
    /// fine-tuning without DeepSpeed, nothing else.
    #[test]
    fn a_plan_file_runs_plain_torch_as_its_plan_does() {
        let file = |text: &str| serde_json::from_str::<crate::plan::PlanFile>(text).unwrap();
        for (text, plain) in [
            (r#"{"model": "qwen2.5-7b"}"#, true),
            (r#"{"model": "qwen2.5-7b", "method": "sft-full"}"#, true),
            (r#"{"model": "qwen2.5-7b", "parallel": {"zero_stage": 2}}"#, false),
            // DeepSpeed offloads nothing at ZeRO-0: no DeepSpeed file is written for it.
            (r#"{"model": "qwen2.5-7b", "parallel": {"offload_optimizer": true}}"#, true),
            (r#"{"model": "qwen2.5-7b", "parallel": {"zero_stage": 1, "offload_optimizer": true}}"#, false),
            (r#"{"model": "qwen2.5-7b", "method": "dpo"}"#, false),
            (r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full"}"#, false),
        ] {
            let f = file(text);
            assert_eq!(plain_torch(&f), plain, "{text}");
            assert_eq!(crate::memory::plain_torch(&Plan::from_file(&f).unwrap()), plain, "{text}");
        }
    }
    use crate::plan::ModelField;

    fn file() -> PlanFile {
        PlanFile::minimal(ModelField::Id("qwen2.5-7b".to_owned()))
    }

    /// Every method, with and without `rl.lora`: the file's answer is the plan's.
    #[test]
    fn trains_lora_agrees_with_the_plan() {
        let mut seen = 0;
        for &method in Method::ALL {
            for lora in [false, true] {
                let mut f = file();
                f.method = method;
                f.rl.lora = lora;
                let plan = Plan::from_file(&f).expect("a minimal plan file with any method decodes");
                assert_eq!(trains_lora(&f), plan.trains_lora(), "{method:?}, rl.lora {lora}");
                seen += usize::from(trains_lora(&f));
            }
        }
        // LoRA, QLoRA and LoRA DPO twice each, GRPO and PPO with rl.lora: the table in the doc above.
        assert_eq!(seen, 8);
    }

    /// VeRL's Megatron engine starts from its own defaults, the distributed optimizer and sequence
    /// parallelism on (engine/megatron.yaml); switching to it again from itself changes nothing.
    #[test]
    fn choosing_verls_megatron_engine_takes_its_defaults() {
        let mut f = file();
        f.framework = Framework::Megatron;
        choose_framework(&mut f, Framework::VerlMegatron);
        assert!(f.parallel.distributed_optimizer && f.parallel.sequence_parallel);
        f.parallel.distributed_optimizer = false;
        choose_framework(&mut f, Framework::VerlMegatron);
        assert!(!f.parallel.distributed_optimizer, "a choice made on the engine stays");
    }

    /// VeRL's default is ZeRO-3 (ppo_trainer.yaml, `fsdp_size: -1`); a stage the user chose stays.
    #[test]
    fn choosing_verl_shards_fully_only_from_zero_off() {
        let cases = [
            // (from, stage before, to, stage after)
            (Framework::LlamaFactory, 0, Framework::Verl, 3),
            (Framework::Megatron, 0, Framework::Verl, 3),
            (Framework::LlamaFactory, 2, Framework::Verl, 2),
            (Framework::LlamaFactory, 1, Framework::Verl, 1),
            (Framework::Verl, 0, Framework::Verl, 0),
            (Framework::Verl, 3, Framework::LlamaFactory, 3),
            (Framework::LlamaFactory, 0, Framework::DeepSpeed, 0),
        ];
        for (from, before, to, after) in cases {
            let mut f = file();
            f.framework = from;
            f.parallel.zero_stage = before;
            choose_framework(&mut f, to);
            assert_eq!((f.framework, f.parallel.zero_stage), (to, after), "{from:?} {before} → {to:?}");
        }
    }

    /// The bounds docs/plan-format.md gives for the `budget` section, at and just past each edge.
    #[test]
    fn takes_budget_is_the_decoders_range() {
        let with = |edit: fn(&mut BudgetFile)| {
            let mut b = BudgetFile::default();
            edit(&mut b);
            takes_budget(&b)
        };
        assert!(with(|_| {}));
        assert!(with(|b| b.epochs = 10_000.0) && !with(|b| b.epochs = 10_000.5));
        assert!(!with(|b| b.epochs = 0.0) && !with(|b| b.epochs = f64::NAN));
        assert!(
            with(|b| b.price_per_device_hour = 1_000_000.0)
                && !with(|b| b.price_per_device_hour = 1_000_001.0)
        );
        assert!(with(|b| b.price_per_device_hour = 0.0) && !with(|b| b.price_per_device_hour = -0.5));
        assert!(with(|b| b.pue = 1.0) && with(|b| b.pue = 5.0));
        assert!(!with(|b| b.pue = 0.99) && !with(|b| b.pue = 5.01) && !with(|b| b.pue = f64::INFINITY));
        assert!(!with(|b| b.tokens = 0) && !with(|b| b.dataset_tokens = crate::plan::BUDGET_TOKENS_MAX + 1));
    }
}
