//! The reverse import: a launch file read back onto a plan. Emit → import gives the plan back for
//! every setting the file carries, over the golden plans and a generated set; unknown keys are listed.

use proptest::prelude::*;
use trainplan_core::emit::import::{Caveat, ConfigKind, ModelOrigin, import};
use trainplan_core::emit::{FileKind, emit};
use trainplan_core::model::Family;
use trainplan_core::plan::{Framework, ModelField, Plan, PlanFile};
use trainplan_core::quantized::{Format, Prequantized};

use crate::corpus;

/// Emits `plan`'s files and imports the one that carries the settings, onto the plan's model and
/// cluster with every other setting at its default.
fn round_trip(plan: &Plan) -> (PlanFile, PlanFile, ConfigKind) {
    let files = emit(plan, "#v1=x").unwrap();
    let main = match plan.framework {
        Framework::DeepSpeed => files.iter().find(|f| f.kind == FileKind::Json),
        Framework::LlamaFactory => files.iter().find(|f| f.name == "train.yaml"),
        _ => files.first(),
    }
    .unwrap();
    let original = plan.to_file();
    let mut base = PlanFile::minimal(original.model.clone());
    base.hardware = original.hardware.clone();
    base.cluster = original.cluster;
    let imported = import(&main.text, &base).unwrap_or_else(|e| panic!("{}: {e}\n{}", main.name, main.text));
    assert!(imported.unknown.is_empty(), "{}: {:?}", main.name, imported.unknown);
    (original, imported.file, imported.kind)
}

/// The settings each kind of file carries, compared field by field.
fn assert_carried(original: &PlanFile, back: &PlanFile, kind: ConfigKind) {
    assert_eq!(back.framework, original.framework, "{kind:?}");
    let (o, b) = (&original.parallel, &back.parallel);
    match kind {
        ConfigKind::Megatron | ConfigKind::MindSpeedLlm => {
            assert_eq!(back.method, original.method, "{kind:?}");
            assert_eq!(
                (b.tp, b.pp, b.vpp, b.cp, b.cp_algo),
                (o.tp, o.pp, o.vpp, o.cp, o.cp_algo),
                "{kind:?}"
            );
            assert_eq!(
                (b.sequence_parallel, b.distributed_optimizer),
                (o.sequence_parallel, o.distributed_optimizer)
            );
            assert_eq!(
                (b.overlap_grad_reduce, b.overlap_param_gather, b.tp_comm_overlap),
                (o.overlap_grad_reduce, o.overlap_param_gather, o.tp_comm_overlap)
            );
            assert_eq!((b.grad_reduce_bf16, b.fp8_param_gather), (o.grad_reduce_bf16, o.fp8_param_gather));
            assert_eq!(back.recompute.granularity, original.recompute.granularity);
            assert_eq!(back.batch, original.batch);
            assert_eq!(back.precision, original.precision);
            assert_eq!(back.cluster.nodes, original.cluster.nodes);
            if kind == ConfigKind::MindSpeedLlm {
                assert_eq!(b.swap_optimizer, o.swap_optimizer);
                let (r, s) = (&back.recompute, &original.recompute);
                assert_eq!(
                    (r.activation_function, r.activation_function_layers),
                    (s.activation_function, s.activation_function_layers)
                );
            }
        }
        ConfigKind::DeepSpeed => {
            assert_eq!(
                (b.zero_stage, b.offload_optimizer, b.offload_params, b.offload_device),
                (o.zero_stage, o.offload_optimizer, o.offload_params, o.offload_device)
            );
            assert_eq!(
                (back.batch.micro_batch, back.batch.global_batch),
                (original.batch.micro_batch, original.batch.global_batch)
            );
            assert_eq!(back.precision, original.precision);
            assert_eq!(back.recompute.granularity, original.recompute.granularity);
        }
        ConfigKind::LlamaFactory => {
            assert_eq!(back.method, original.method);
            assert_eq!((b.zero_stage, b.offload_device), (o.zero_stage, o.offload_device));
            assert_eq!((back.optimizer, back.low_rank), (original.optimizer, original.low_rank));
            assert_eq!(back.batch, original.batch);
            assert_eq!(back.recompute.granularity, original.recompute.granularity);
            assert_eq!(back.lora.rank, original.lora.rank);
            assert_eq!(back.lora.dropout, original.lora.dropout);
            assert_eq!(back.lora.dora, original.lora.dora);
            assert_eq!(back.pure_bf16, original.pure_bf16);
            assert_eq!(back.optimizer, original.optimizer);
            assert_eq!(back.precision, original.precision);
            assert_eq!(back.liger_kernel, original.liger_kernel);
            if original.recompute.granularity != trainplan_core::plan::RecomputeGranularity::None {
                assert_eq!(back.recompute.layers_ratio, original.recompute.layers_ratio);
            }
        }
        ConfigKind::MindSpeedRl => {
            assert_eq!(back.method, original.method);
            assert_eq!((b.tp, b.pp, b.cp, b.cp_algo), (o.tp, o.pp, o.cp, o.cp_algo));
            assert_eq!(
                (b.sequence_parallel, b.distributed_optimizer, b.swap_optimizer, b.tp_comm_overlap),
                (o.sequence_parallel, o.distributed_optimizer, o.swap_optimizer, o.tp_comm_overlap)
            );
            assert_eq!(back.recompute, original.recompute);
            assert_eq!(
                (back.batch.micro_batch, back.batch.global_batch),
                (original.batch.micro_batch, original.batch.global_batch)
            );
            let effective = |f: &PlanFile| {
                let plan = Plan::from_file(f).unwrap();
                let (r, g) = (&plan.rl, plan.batch.global_batch.get());
                let budget = r.tokens_per_device(plan.framework, plan.parallel.cp.get());
                // MindSpeed-RL spreads the experts over TP × EP ranks: rollout EP 1 and EP = TP are one.
                let spread = r.rollout_ep.max(r.rollout_tp);
                let engine = (
                    r.rollout_tp,
                    spread,
                    r.enforce_eager,
                    r.model_len(),
                    r.batched_tokens(),
                    r.max_num_seqs,
                );
                let lengths = (r.max_prompt_length, r.max_response_length, r.n_samples_per_prompt);
                (
                    r.mini_batch_prompts(g),
                    r.dynamic_batch,
                    budget,
                    r.remove_padding,
                    r.blocking,
                    engine,
                    lengths,
                )
            };
            assert_eq!(effective(back), effective(original));
        }
        ConfigKind::Verl => {
            assert_eq!(back.method, original.method);
            assert_eq!(back.liger_kernel, original.liger_kernel);
            assert_eq!(
                (b.cp, b.offload_optimizer, b.offload_params, b.zero_stage),
                (o.cp, o.offload_optimizer, o.offload_params, o.zero_stage)
            );
            assert_eq!(
                (back.batch.micro_batch, back.batch.global_batch),
                (original.batch.micro_batch, original.batch.global_batch)
            );
            assert_eq!(back.rl.n_samples_per_prompt, original.rl.n_samples_per_prompt);
            assert_eq!(back.rl.rollout_tp, original.rl.rollout_tp);
            assert_eq!(
                (back.rl.max_prompt_length, back.rl.max_response_length),
                (original.rl.max_prompt_length, original.rl.max_response_length)
            );
            assert_eq!(back.cluster.nodes, original.cluster.nodes);
            // Every VeRL knob the plan holds: mini-batch, dynamic batch and its token budget, padding
            // removal, and the vLLM engine's settings, autos included.
            // An explicit value equal to the auto one reads back as auto: compare what is in effect.
            let effective = |f: &PlanFile| {
                let plan = Plan::from_file(f).unwrap();
                let (r, g) = (&plan.rl, plan.batch.global_batch.get());
                let budget = r.tokens_per_device(plan.framework, plan.parallel.cp.get());
                let engine = (
                    r.rollout_tp,
                    r.rollout_ep,
                    r.enforce_eager,
                    r.model_len(),
                    r.batched_tokens(),
                    r.max_num_seqs,
                );
                (r.mini_batch_prompts(g), r.dynamic_batch, budget, r.remove_padding, engine)
            };
            assert_eq!(effective(back), effective(original));
        }
    }
}

#[test]
fn emitted_files_import_back_to_their_plan() {
    let plans = [
        // Megatron-LM's fp8 example's memory switches (`examples/llama/train_llama3_8b_h100_fp8.sh`).
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "precision": "fp8",
            "parallel": {"distributed_optimizer": true, "grad_reduce_bf16": true, "fp8_param_gather": true},
            "batch": {"global_batch": 128, "seq_len": 8192}}"#,
        r#"{"model": "llama-3.1-70b", "cluster": {"nodes": 4}, "framework": "megatron", "method": "pretrain",
            "parallel": {"tp": 8, "pp": 4, "vpp": 2, "sequence_parallel": true, "distributed_optimizer": true,
            "overlap_grad_reduce": true, "overlap_param_gather": true}, "recompute": {"granularity": "selective"},
            "batch": {"global_batch": 64, "seq_len": 4096}}"#,
        r#"{"model": "llama-3-70b", "hardware": "ascend-910b2", "cluster": {"nodes": 8}, "framework": "mindspeed-llm",
            "method": "pretrain", "parallel": {"tp": 8, "pp": 4, "vpp": 4, "sequence_parallel": true,
            "distributed_optimizer": true, "tp_comm_overlap": true}, "recompute": {"granularity": "none"},
            "batch": {"global_batch": 512, "seq_len": 8192}}"#,
        r#"{"model": "qwen2.5-7b", "hardware": "a100-sxm-80g", "framework": "deepspeed", "method": "sft-full",
            "parallel": {"zero_stage": 3, "overlap_grad_reduce": true, "offload_optimizer": true}, "batch": {"micro_batch": 2, "global_batch": 128}}"#,
        r#"{"model": "qwen2.5-7b"}"#,
        // GaLore (`use_galore`, `galore_rank`, `galore_layerwise`) on one device.
        r#"{"model": "qwen2.5-7b", "framework": "llamafactory", "method": "sft-full", "optimizer": "galore",
            "low_rank": {"rank": 64, "layerwise": true}, "pure_bf16": true, "cluster": {"devices_per_node": 1},
            "batch": {"micro_batch": 1, "global_batch": 1}}"#,
        // APOLLO (`use_apollo`, `apollo_rank`) over 8 devices.
        r#"{"model": "qwen2.5-7b", "framework": "llamafactory", "method": "sft-full", "optimizer": "apollo",
            "low_rank": {"rank": 256}, "pure_bf16": true}"#,
        // ZeRO-Infinity: DeepSpeed's `offload_*.device: nvme`, LLaMA-Factory's file named for it.
        r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full", "parallel": {"zero_stage": 3,
            "offload_optimizer": true, "offload_params": true, "offload_device": "nvme"}}"#,
        r#"{"model": "qwen2.5-14b", "framework": "llamafactory", "method": "sft-full", "parallel": {"zero_stage": 3,
            "offload_optimizer": true, "offload_device": "nvme"}}"#,
        r#"{"model": "qwen2.5-72b", "cluster": {"nodes": 2}, "framework": "llamafactory", "method": "sft-full",
            "parallel": {"zero_stage": 3, "offload_optimizer": true}, "recompute": {"granularity": "none"},
            "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "liger_kernel": true, "parallel": {"zero_stage": 3, "cp": 2},
            "rl": {"rollout_tp": 2, "n_samples_per_prompt": 8}, "batch": {"micro_batch": 16, "global_batch": 512}}"#,
        // VeRL's FSDP over no rank (`fsdp_size=1`) and sharding gradients and optimizer states alone
        // (`reshard_after_forward=False`), PPO's critic alike.
        r#"{"model": "qwen2.5-0.5b", "framework": "verl", "method": "ppo", "parallel": {"zero_stage": 0}}"#,
        r#"{"model": "qwen2.5-1.5b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 2}}"#,
        // The rollout's expert parallelism: VeRL's EP and DP, MindSpeed-RL's EP over its TP.
        r#"{"model": "qwen3-30b-a3b", "framework": "verl", "method": "grpo", "cluster": {"nodes": 2}, "parallel": {"zero_stage": 3},
            "rl": {"rollout_tp": 2, "rollout_ep": 16}}"#,
        r#"{"model": "qwen3-30b-a3b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo",
            "cluster": {"nodes": 2}, "parallel": {"tp": 2, "ep": 4}, "rl": {"rollout_tp": 4, "rollout_ep": 8}}"#,
    ];
    for text in plans {
        let plan = Plan::from_json(text).unwrap();
        let (original, back, kind) = round_trip(&plan);
        assert_carried(&original, &back, kind);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random layouts and knobs of the Megatron family survive emit → import.
    #[test]
    fn megatron_family_round_trips(
        ascend in any::<bool>(), tp in 0usize..4, pp in 0usize..3, vpp2 in any::<bool>(), sp in any::<bool>(),
        dist in any::<bool>(), overlap in any::<bool>(), recompute in 0usize..3, micro in 1u32..5, gbs_mult in 1u32..9,
        seq in prop::sample::select(vec![2048u32, 4096, 8192]), swap_opt in any::<bool>(), act_fn in 0u32..4,
        cp in prop::sample::select(vec![1u32, 2]), all_to_all in any::<bool>(),
    ) {
        let tp = [1, 2, 4, 8][tp];
        let pp = [1, 2, 4][pp];
        let vpp = if vpp2 && 1 < pp { 2 } else { 1 };
        let (framework, hardware) = if ascend { ("mindspeed-llm", "ascend-910b2") } else { ("megatron", "h100-sxm-80g") };
        let granularity = ["none", "selective", "full"][recompute];
        // MindSpeed's own knobs: swap-optimizer and activation-function recompute over 0 (= all) to 3 layers.
        let swap_opt = ascend && swap_opt;
        let act = if ascend && 0 < act_fn { format!(r#", "activation_function": true, "activation_function_layers": {}"#, act_fn - 1) } else { String::new() };
        let cp_algo = if all_to_all { "alltoall" } else { "ring" };
        let text = format!(
            r#"{{"model": "llama-3-8b", "hardware": "{hardware}", "cluster": {{"nodes": 2}}, "framework": "{framework}",
                "method": "pretrain", "parallel": {{"tp": {tp}, "pp": {pp}, "vpp": {vpp}, "cp": {cp}, "cp_algo": "{cp_algo}", "sequence_parallel": {sp},
                "distributed_optimizer": {dist}, "overlap_grad_reduce": {overlap}, "swap_optimizer": {swap_opt}}},
                "recompute": {{"granularity": "{granularity}"{act}}},
                "batch": {{"micro_batch": {micro}, "global_batch": {}, "seq_len": {seq}}}}}"#,
            micro * gbs_mult * 16
        );
        let plan = Plan::from_json(&text).unwrap();
        let (original, back, kind) = round_trip(&plan);
        assert_carried(&original, &back, kind);
    }

    /// Random ZeRO, offload, batch, precision and Liger survive DeepSpeed and LLaMA-Factory emit → import.
    #[test]
    fn hf_family_round_trips(
        lf in any::<bool>(), zero in 0u8..4, offload in any::<bool>(), micro in 1u32..5, gas in 1u32..5,
        checkpointing in any::<bool>(), fp16 in any::<bool>(), ratio in prop::sample::select(vec![0.25f64, 0.5, 1.0]),
        liger in any::<bool>(), dropout in prop::sample::select(vec![0.0f64, 0.05, 0.1]), dora in any::<bool>(),
        pure in any::<bool>(), eight_bit in any::<bool>(),
    ) {
        let offload = offload && 1 <= zero;
        let framework = if lf { "llamafactory" } else { "deepspeed" };
        let method = if lf { "lora" } else { "sft-full" };
        let precision = if fp16 { "fp16" } else { "bf16" };
        // `pure_bf16` is LLaMA-Factory's, read with bf16 precision and written without DeepSpeed.
        let pure = pure && lf && !fp16 && zero == 0 && !offload;
        // bitsandbytes' 8-bit AdamW, LLaMA-Factory's without DeepSpeed.
        let optimizer = if eight_bit && lf && zero == 0 && !offload { "adamw_8bit" } else { "adamw" };
        let granularity = if checkpointing { "full" } else { "none" };
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "{method}", "precision": "{precision}",
                "liger_kernel": {liger}, "pure_bf16": {pure}, "optimizer": "{optimizer}", "parallel": {{"zero_stage": {zero}, "offload_optimizer": {offload}}},
                "recompute": {{"granularity": "{granularity}", "layers_ratio": {ratio}}}, "lora": {{"dropout": {dropout}, "dora": {dora}}},
                "batch": {{"micro_batch": {micro}, "global_batch": {}}}}}"#,
            micro * gas * 8
        );
        let plan = Plan::from_json(&text).unwrap();
        let (original, back, kind) = round_trip(&plan);
        assert_carried(&original, &back, kind);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random RL knobs survive VeRL emit → import, each either written out or left to its auto value.
    #[test]
    fn verl_round_trips(
        ppo in any::<bool>(), n in 1u32..9, mini_div in 0u32..3, dynamic in any::<bool>(),
        budget in prop::sample::select(vec![0u32, 8192, 24576]), padding in any::<bool>(), eager in any::<bool>(),
        model_len in prop::sample::select(vec![0u32, 1536, 4096]),
        batched in prop::sample::select(vec![0u32, 8192, 16384]), cp in prop::sample::select(vec![1u32, 2]),
        kl in any::<bool>(), log_prob in prop::sample::select(vec![0u32, 1, 8]),
        log_prob_budget in prop::sample::select(vec![0u32, 20000]),
    ) {
        let method = if ppo { "ppo" } else { "grpo" };
        let mini = [0, 64, 128][mini_div as usize];
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "{method}", "parallel": {{"zero_stage": 3, "cp": {cp}}},
                "batch": {{"micro_batch": 2, "global_batch": 256}},
                "rl": {{"n_samples_per_prompt": {n}, "mini_batch": {mini}, "dynamic_batch": {dynamic},
                "max_tokens_per_device": {budget}, "remove_padding": {padding}, "enforce_eager": {eager},
                "max_model_len": {model_len}, "max_num_batched_tokens": {batched}, "kl_loss": {kl},
                "log_prob_micro_batch": {log_prob}, "log_prob_max_tokens_per_device": {log_prob_budget}}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        let (original, back, kind) = round_trip(&plan);
        assert_carried(&original, &back, kind);
    }
}

/// The context-parallel algorithm each framework writes reads back, and one the plan cannot hold
/// (Megatron-LM's `allgather` and `a2a+p2p`, a type per layer, MindSpeed's `hybrid_cp_algo`) is
/// read as the ring and listed as not kept.
#[test]
fn the_context_parallel_algorithm_reads_back_or_is_listed() {
    use trainplan_core::plan::CpAlgo;
    let base = PlanFile::minimal(trainplan_core::plan::ModelField::Id("llama-3-8b".into()));
    let read = |text: &str| {
        let got = import(text, &base).unwrap_or_else(|e| panic!("{text}: {e}"));
        (got.file.parallel.cp_algo, got.unknown)
    };
    let megatron =
        |types: &str| format!("torchrun pretrain_gpt.py --context-parallel-size 2 --cp-comm-type {types}\n");
    assert_eq!(read(&megatron("a2a")), (CpAlgo::AllToAll, vec![]));
    assert_eq!(read(&megatron("p2p")), (CpAlgo::Ring, vec![]));
    assert_eq!(read(&megatron("a2a a2a a2a")), (CpAlgo::AllToAll, vec![]));
    for unmodeled in ["allgather", "a2a+p2p", "p2p a2a"] {
        assert_eq!(
            read(&megatron(unmodeled)),
            (CpAlgo::Ring, vec!["--cp-comm-type".to_owned()]),
            "{unmodeled}"
        );
    }
    // MindSpeed-LLM: its pretrain script (the Ascend CANN environment marks it).
    let mindspeed = |algo: &str| {
        format!(
            "source /usr/local/Ascend/ascend-toolkit/set_env.sh\ntorchrun pretrain_gpt.py --context-parallel-size 2 --context-parallel-algo {algo}\n"
        )
    };
    assert_eq!(read(&mindspeed("ulysses_cp_algo")), (CpAlgo::AllToAll, vec![]));
    assert_eq!(read(&mindspeed("megatron_cp_algo")), (CpAlgo::Ring, vec![]));
    assert_eq!(
        read(&mindspeed("hybrid_cp_algo")),
        (CpAlgo::Ring, vec!["--context-parallel-algo".to_owned()])
    );
}

/// LLaMA-Factory's `pure_bf16` computes in bf16 whatever the mixed-precision keys say
/// (`hparams/parser.py`: `compute_dtype` is bf16 when `bf16` or `pure_bf16`), and DoRA's `use_dora`
/// is read as it is written.
#[test]
fn llamafactorys_pure_bf16_and_dora_read_back() {
    use trainplan_core::plan::{Optimizer, Precision};
    let base = PlanFile::minimal(trainplan_core::plan::ModelField::Id("qwen2.5-7b".into()));
    let read = |keys: &str| {
        let text = format!("model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: lora\n{keys}");
        let got = import(&text, &base).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(got.unknown.is_empty(), "{:?}", got.unknown);
        (got.file.precision, got.file.pure_bf16, got.file.lora.dora)
    };
    // The HF `Trainer`'s `optim`: bitsandbytes' 8-bit AdamW under each of its names.
    for (optim, expected) in [
        ("adamw_8bit", Optimizer::AdamW8bit),
        ("adamw_bnb_8bit", Optimizer::AdamW8bit),
        ("paged_adamw_8bit", Optimizer::AdamW8bit),
        ("adamw_torch", Optimizer::AdamW),
    ] {
        let text = format!(
            "model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: full\noptim: {optim}\n"
        );
        assert_eq!(import(&text, &base).unwrap().file.optimizer, expected, "{optim}");
    }
    let text = "model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: full\noptim: adafactor\n";
    assert_eq!(import(text, &base).unwrap().unknown, ["optim".to_owned()]);
    assert_eq!(read("pure_bf16: true\n"), (Precision::Bf16, true, false));
    assert_eq!(read("fp16: true\npure_bf16: true\n"), (Precision::Bf16, true, false));
    assert_eq!(read("fp16: true\nuse_dora: true\n"), (Precision::Fp16, false, true));
    assert_eq!(read("bf16: true\npure_bf16: false\n"), (Precision::Bf16, false, false));
}

/// A script is read as the shell runs it: Megatron-LM's examples/llama/train_llama3_8b_h100_fp8.sh
/// (at 157006d) passes its fp8 flags only `if [[ "$DTYPE" == "fp8" ]]`, so the same script set to
/// bf16 trains in bf16; and an `if` on a node count the script defaults picks that branch's sizes.
#[test]
fn a_scripts_if_blocks_are_read_as_the_shell_runs_them() {
    let base = PlanFile::minimal(ModelField::Id("llama-3-8b".into()));
    let fp8_example = |dtype: &str| {
        format!(
            r#"GPUS_PER_NODE=8
NUM_NODES=1
DTYPE="{dtype}"
TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 128
    --bf16
)
DTYPE_ARGS=()
if [[ "$DTYPE" == "fp8" ]]; then
    DTYPE_ARGS+=(
        "--fp8-format hybrid"
        "--fp8-amax-history-len 1024"
        "--fp8-amax-compute-algo max"
        "--fp8-param-gather"
    )
fi
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py     ${{TRAINING_ARGS[@]}} ${{DTYPE_ARGS[@]}} --tensor-model-parallel-size 1
"#
        )
    };
    let read = |text: &str| {
        import(text, &base)
            .unwrap_or_else(|e| {
                panic!(
                    "{e}
{text}"
                )
            })
            .file
    };
    let fp8 = read(&fp8_example("fp8"));
    assert_eq!((fp8.precision, fp8.parallel.fp8_param_gather), (trainplan_core::plan::Precision::Fp8, true));
    let bf16 = read(&fp8_example("bf16"));
    assert_eq!(
        (bf16.precision, bf16.parallel.fp8_param_gather),
        (trainplan_core::plan::Precision::Bf16, false)
    );
    // The sizes of the branch a defaulted node count takes; with the count from the environment,
    // every branch is read as before (the last assignment stands).
    let sized = |nodes: &str| {
        format!(
            "NNODES={nodes}
if [ \"$NNODES\" -gt 1 ]; then
    TP=8
    PP=4
else
    TP=4
    PP=2
fi
             torchrun --nnodes $NNODES --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size $TP \\
                 --pipeline-model-parallel-size $PP --micro-batch-size 1 --global-batch-size 64
"
        )
    };
    let p = read(&sized("${NNODES:-4}")).parallel;
    assert_eq!((p.tp, p.pp), (8, 4));
    let p = read(&sized("${NNODES:-1}")).parallel;
    assert_eq!((p.tp, p.pp), (4, 2));
    let p = read(&sized("$SLURM_NNODES")).parallel;
    assert_eq!((p.tp, p.pp), (4, 2), "undecided: every branch, the last assignment");
}

#[test]
fn what_is_not_understood_is_listed() {
    let base = PlanFile::minimal(trainplan_core::plan::ModelField::Id("llama-3-8b".into()));
    let yaml = "stage: sft\nfinetuning_type: lora\nper_device_train_batch_size: 2\nmy_custom_key: 1\nuse_badam: true\n";
    let got = import(yaml, &base).unwrap();
    assert_eq!(got.kind, ConfigKind::LlamaFactory);
    assert_eq!(got.unknown, ["my_custom_key", "use_badam"]);
    // The model named by its Hugging Face id (an -Instruct variant shares the catalog architecture).
    let got = import("model_name_or_path: Qwen/Qwen2.5-72B-Instruct\nstage: sft\n", &base).unwrap();
    assert_eq!(got.file.model, trainplan_core::plan::ModelField::Id("qwen2.5-72b".into()));
    let script = "torchrun pretrain_gpt.py --tensor-model-parallel-size 2 --my-flag 3 --sequence-parallel\n";
    let got = import(script, &base).unwrap();
    assert_eq!(got.kind, ConfigKind::Megatron);
    assert_eq!(got.file.parallel.tp, 2);
    assert!(got.file.parallel.sequence_parallel);
    assert_eq!(got.unknown, ["--my-flag"]);
    // VeRL's FSDP engine on FSDP2 is the plan's `torch_fsdp2`, read and kept; FSDP1 is its `none`.
    let overrides = "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \\\n  actor_rollout_ref.actor.strategy=fsdp2 \\\n  trainer.n_gpus_per_node=8\n";
    let got = import(overrides, &base).unwrap();
    assert_eq!((got.kind, got.file.framework), (ConfigKind::Verl, trainplan_core::plan::Framework::Verl));
    assert_eq!(got.file.parallel.fsdp, trainplan_core::plan::Fsdp::Torch);
    assert!(!got.unknown.iter().any(|k| k.contains("strategy")), "{:?}", got.unknown);
    let got = import(&overrides.replace("fsdp2", "fsdp"), &base).unwrap();
    assert_eq!(got.file.parallel.fsdp, trainplan_core::plan::Fsdp::None);
    assert!(!got.unknown.iter().any(|k| k.contains("strategy")), "{:?}", got.unknown);
    // Scripts for FSDP2 name every model's engine: kept where it is the actor's, listed where not.
    let recipe = overrides.replace(
        "trainer.n_gpus_per_node=8",
        "actor_rollout_ref.ref.strategy=fsdp2 actor_rollout_ref.actor.fsdp_config.strategy=fsdp2 \\\n  \
         critic.strategy=fsdp2 reward_model.strategy=fsdp trainer.n_gpus_per_node=8",
    );
    let got = import(&recipe, &base).unwrap();
    assert_eq!(got.unknown, ["reward_model.strategy"]);
    let json = r#"{"train_batch_size": 64, "zero_optimization": {"stage": 2}, "flops_profiler": {}}"#;
    let got = import(json, &base).unwrap();
    assert_eq!((got.file.parallel.zero_stage, got.file.batch.global_batch), (2, 64));
    assert_eq!(got.unknown, ["flops_profiler"]);
    assert_eq!(
        import("hello: world", &base).unwrap_err().to_string().split(':').next(),
        Some("not a launch file trainplan reads")
    );
    assert!(
        import("--tensor-model-parallel-size x pretrain_gpt.py", &base)
            .unwrap_err()
            .to_string()
            .contains("whole number")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random layouts and RL knobs survive MindSpeed-RL emit → import.
    #[test]
    fn mindspeed_rl_round_trips(
        ppo in any::<bool>(), tp in prop::sample::select(vec![1u32, 2, 4]), pp in prop::sample::select(vec![1u32, 2]),
        swap in any::<bool>(), coc in any::<bool>(), recompute in 0usize..3, n in 1u32..17,
        mini in prop::sample::select(vec![0u32, 32, 64]), dynamic in any::<bool>(),
        budget in prop::sample::select(vec![0u32, 8192]), padding in any::<bool>(), eager in any::<bool>(),
        blocking in any::<bool>(), model_len in prop::sample::select(vec![0u32, 4096]),
        batched in prop::sample::select(vec![0u32, 16384]), rollout_tp in prop::sample::select(vec![1u32, 2, 4]),
        cp in prop::sample::select(vec![1u32, 2]), all_to_all in any::<bool>(),
        log_prob in prop::sample::select(vec![0u32, 1, 8]), log_prob_budget in prop::sample::select(vec![0u32, 20000]),
    ) {
        let method = if ppo { "ppo" } else { "grpo" };
        let granularity = ["none", "selective", "full"][recompute];
        let cp_algo = if all_to_all { "alltoall" } else { "ring" };
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "cluster": {{"nodes": 2}}, "framework": "mindspeed-rl",
                "method": "{method}", "parallel": {{"tp": {tp}, "pp": {pp}, "cp": {cp}, "cp_algo": "{cp_algo}", "distributed_optimizer": true,
                "swap_optimizer": {swap}, "tp_comm_overlap": {coc}}}, "recompute": {{"granularity": "{granularity}"}},
                "batch": {{"micro_batch": 2, "global_batch": 128}},
                "rl": {{"rollout_tp": {rollout_tp}, "n_samples_per_prompt": {n}, "mini_batch": {mini}, "dynamic_batch": {dynamic},
                "max_tokens_per_device": {budget}, "remove_padding": {padding}, "enforce_eager": {eager}, "blocking": {blocking},
                "max_model_len": {model_len}, "max_num_batched_tokens": {batched},
                "log_prob_micro_batch": {log_prob}, "log_prob_max_tokens_per_device": {log_prob_budget}}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        let (original, back, kind) = round_trip(&plan);
        prop_assert_eq!(kind, ConfigKind::MindSpeedRl);
        assert_carried(&original, &back, kind);
    }
}

/// The launch file that carries a plan's settings: the JSON for DeepSpeed, `train.yaml` for
/// LLaMA-Factory, the script or the run YAML for the others.
fn main_file(plan: &Plan, files: &[trainplan_core::emit::EmittedFile]) -> trainplan_core::emit::EmittedFile {
    match plan.framework {
        Framework::DeepSpeed => files.iter().find(|f| f.kind == FileKind::Json),
        Framework::LlamaFactory => files.iter().find(|f| f.name == "train.yaml"),
        _ => files.first(),
    }
    .unwrap()
    .clone()
}

/// A current plan with nothing in common with `original` but its hardware and cluster: another
/// model, ZeRO 2, a dataset, fp16. None of it may survive an import.
fn stale_current(original: &PlanFile) -> PlanFile {
    let mut current = PlanFile::minimal(ModelField::Id("gpt2".into()));
    current.hardware = original.hardware.clone();
    current.cluster = original.cluster;
    current.parallel.zero_stage = 2;
    current.parallel.offload_optimizer = true;
    current.precision = trainplan_core::plan::Precision::Fp16;
    current.launch.dataset = "stale_dataset".into();
    current.launch.model_path = "/stale/model".into();
    current
}

/// Emit → import → emit writes the same files, byte for byte, for every plan of the conformance
/// corpus, imported onto a current plan of another model with stale settings. What a kind of file
/// cannot carry is named below with why, and taken from the original plan.
#[test]
fn corpus_files_round_trip_byte_for_byte() {
    let mut compared = 0;
    for entry in corpus::all() {
        let plan = Plan::from_json(&entry.plan).unwrap();
        let files = emit(&plan, "#v1=x").unwrap();
        let main = main_file(&plan, &files);
        let original = plan.to_file();
        let imported = import(&main.text, &stale_current(&original))
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", entry.name, main.text));
        assert!(imported.unknown.is_empty(), "{}: {:?}", entry.name, imported.unknown);
        let mut back = imported.file;
        // No launch file holds the planner's runtime overheads or calibration.
        back.overheads = original.overheads;
        back.calibration = original.calibration;
        match imported.kind {
            ConfigKind::DeepSpeed => {
                // The JSON names no model (the user's train.py loads it): the current one is kept,
                // and the import says so.
                assert_eq!(imported.model, ModelOrigin::Unknown, "{}", entry.name);
                back.model = original.model.clone();
                // Nor the sequence length (the script tokenizes) or the attention kernel.
                back.batch.seq_len = original.batch.seq_len;
                back.attention = original.attention;
                // The master address and port are launch.sh's.
                back.launch = original.launch.clone();
            }
            kind => {
                assert!(
                    matches!(imported.model, ModelOrigin::Named(_) | ModelOrigin::Matched { .. }),
                    "{}: {:?}",
                    entry.name,
                    imported.model
                );
                if matches!(kind, ConfigKind::LlamaFactory | ConfigKind::MindSpeedRl) {
                    // The master address and port are in launch.sh, beside the main file.
                    back.launch.master_addr = original.launch.master_addr.clone();
                    back.launch.master_port = original.launch.master_port;
                }
                if kind == ConfigKind::MindSpeedLlm && 0 < original.batch.mean_seq_len {
                    // The samples' mean length is the data's: the script says only that samples keep
                    // their lengths (--no-pad-to-seq-lengths), read as the sequence length.
                    assert_eq!(back.batch.mean_seq_len, back.batch.seq_len, "{}", entry.name);
                    back.batch.mean_seq_len = original.batch.mean_seq_len;
                }
                if kind == ConfigKind::LlamaFactory {
                    // The DeepSpeed JSON's name says "offload", not which; overlap_comm and ZeRO++
                    // are in the JSON.
                    back.parallel.offload_params = original.parallel.offload_params;
                    back.parallel.overlap_grad_reduce = original.parallel.overlap_grad_reduce;
                    back.parallel.zero_hpz_partition_size = original.parallel.zero_hpz_partition_size;
                    back.parallel.zero_quantized_weights = original.parallel.zero_quantized_weights;
                    back.parallel.zero_quantized_gradients = original.parallel.zero_quantized_gradients;
                }
            }
        }
        let again = Plan::from_file(&back).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let rewritten = emit(&again, "#v1=x").unwrap();
        assert_eq!(rewritten.len(), files.len(), "{}", entry.name);
        for (a, b) in files.iter().zip(&rewritten) {
            assert_eq!(a.name, b.name, "{}", entry.name);
            assert!(a.text == b.text, "{}/{}:\n{}", entry.name, a.name, first_difference(&a.text, &b.text));
        }
        compared += 1;
    }
    assert!(40 <= compared, "{compared}");
}

/// The first line where two texts differ, both ways.
fn first_difference(a: &str, b: &str) -> String {
    let (mut la, mut lb) = (a.lines(), b.lines());
    loop {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (None, None) => return "same lines".to_owned(),
            (x, y) => return format!("- {}\n+ {}", x.unwrap_or("<end>"), y.unwrap_or("<end>")),
        }
    }
}

fn golden(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(path))
        .unwrap()
}

/// The LLaMA-Factory YAML of an air-gapped cluster: the model is a local directory.
const LOCAL_LF_YAML: &str = "model_name_or_path: /models/Qwen2.5-14B-Instruct\nstage: sft\ndo_train: true\n\
    finetuning_type: lora\nlora_target: all\ndataset: my_sft_data\ntemplate: qwen\ncutoff_len: 2048\n\
    output_dir: /output/qwen14b-lora\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 8\nbf16: true\n";

/// Issue: a local model directory left the plan on the previous model, and the dataset, the output
/// directory and the path were dropped while the import said "every key understood".
#[test]
fn issue_a_local_model_directory_names_the_model_and_the_paths_come_back() {
    let current = Plan::first_visit().to_file();
    assert_eq!(current.model, ModelField::Id("qwen2.5-7b".into()));
    let got = import(LOCAL_LF_YAML, &current).unwrap();
    assert_eq!(got.file.model, ModelField::Id("qwen2.5-14b".into()));
    assert_eq!(
        got.model,
        ModelOrigin::Matched { from: "/models/Qwen2.5-14B-Instruct".into(), id: "qwen2.5-14b".into() }
    );
    let launch = &got.file.launch;
    assert_eq!(
        (launch.model_path.as_str(), launch.dataset.as_str(), launch.output_dir.as_str()),
        ("/models/Qwen2.5-14B-Instruct", "my_sft_data", "/output/qwen14b-lora")
    );
    // Every key is used: the template is the one the model gets anyway.
    assert!(got.unknown.is_empty(), "{:?}", got.unknown);
    // The files written afterwards keep them.
    let plan = Plan::from_file(&got.file).unwrap();
    let yaml = main_file(&plan, &emit(&plan, "#x").unwrap()).text;
    for line in [
        "model_name_or_path: \"/models/Qwen2.5-14B-Instruct\"",
        "dataset: \"my_sft_data\"",
        "output_dir: \"/output/qwen14b-lora\"",
        "template: qwen",
    ] {
        assert!(yaml.contains(line), "{line}\n{yaml}");
    }
    // Other spellings of a local directory: Meta's prefix, a chat variant, MindSpeed-RL's names.
    for (path, id) in [
        ("/data/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("/models/Qwen2.5-7B-Instruct/", "qwen2.5-7b"),
        ("/models/qwen2.5-7b/checkpoint-500", "qwen2.5-7b"),
        ("/mnt/glm-4-9b-chat-hf", "glm-4-9b"),
        ("/models/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("/models/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3"),
        ("/models/DeepSeek-V3-Base", "deepseek-v3"),
        ("/models/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b"),
        ("qwen25_7b", "qwen2.5-7b"),
    ] {
        assert_eq!(trainplan_core::catalog::model_by_name(path).map(|m| m.id), Some(id), "{path}");
    }
    for path in ["/models/Qwen2.5-13B", "/models/my-model", "/models/Mistral-7B", "/data/run-7b"] {
        assert_eq!(trainplan_core::catalog::model_by_name(path).map(|m| m.id), None, "{path}");
    }
}

/// Issue: a Megatron script with the model's flags and no Hugging Face id was planned as the
/// previous model, and kept the ZeRO stage of an earlier import.
#[test]
fn issue_architecture_flags_tell_the_model_and_an_import_starts_from_the_defaults() {
    let script = golden("megatron-llama-3.1-70b/train_llama-3_1-70b.sh")
        .replace("TOKENIZER_MODEL='meta-llama/Llama-3.1-70B'", "TOKENIZER_MODEL=/models/tokenizer");
    // An earlier LLaMA-Factory import left ZeRO 2, optimizer offload and a dataset behind.
    let mut current = Plan::first_visit().to_file();
    current.parallel.zero_stage = 2;
    current.parallel.offload_optimizer = true;
    current.launch.dataset = "alpaca_en_demo".into();
    let got = import(&script, &current).unwrap();
    assert_eq!(got.model, ModelOrigin::Shape("llama-3.1-70b".into()));
    assert_eq!(got.file.model, ModelField::Id("llama-3.1-70b".into()));
    assert_eq!((got.file.parallel.zero_stage, got.file.parallel.offload_optimizer), (0, false));
    assert_eq!(got.file.launch.model_path, "/models/tokenizer");
    assert_eq!(got.file.launch.dataset, "", "the script's own placeholder");
    assert!(got.unknown.is_empty(), "{:?}", got.unknown);

    // Half the layers: no catalog model has them, so the model is built from the flags.
    let halved = script
        .replace("--num-layers 80", "--num-layers 40")
        .replace("--num-layers-per-virtual-pipeline-stage 10", "--num-layers-per-virtual-pipeline-stage 5");
    let got = import(&halved, &current).unwrap();
    assert_eq!(got.model, ModelOrigin::Built { name: "tokenizer".into() });
    let plan = Plan::from_file(&got.file).unwrap();
    let arch = &plan.model.arch;
    assert_eq!((arch.n_layers, arch.hidden_size, arch.mlp.intermediate_size), (40, 8192, 28672));
    assert_eq!(plan.parallel.vpp.get(), 2);
    // The flags written for the built model are the ones read, so nothing is left out.
    assert!(got.unknown.is_empty(), "{:?}", got.unknown);
    let rewritten = &emit(&plan, "#x").unwrap()[0].text;
    let model_args =
        |t: &str| t.split("MODEL_ARGS=(").nth(1).and_then(|r| r.split(')').next()).map(str::to_owned);
    assert_eq!(model_args(rewritten), model_args(&halved));

    // MindSpeed-LLM names the vocabulary (`--padded-vocab-size`), so the built model has it too:
    // Qwen2.5-7B's width with 20 layers.
    let ascend = golden("mindspeed-llm-qwen2.5-7b-lora/tune_qwen2_5-7b.sh")
        .replace("--num-layers 28", "--num-layers 20")
        .replace("TOKENIZER_PATH='./model_from_hf/Qwen2.5-7B'", "TOKENIZER_PATH=/models/my-20-layer-model");
    let got = import(&ascend, &current).unwrap();
    assert_eq!(got.kind, ConfigKind::MindSpeedLlm);
    assert_eq!(got.model, ModelOrigin::Built { name: "my-20-layer-model".into() });
    let plan = Plan::from_file(&got.file).unwrap();
    assert_eq!((plan.model.arch.n_layers, plan.model.arch.vocab_size), (20, 152064));
    // The converted checkpoint's directory is named after the catalog model; the plan writes one
    // named after the built model, so the file's is not kept.
    assert_eq!(got.unknown, ["--load"]);
}

/// A file that neither names nor describes its model says so; the plan keeps its model.
#[test]
fn a_model_the_file_does_not_tell_is_said_not_identified() {
    let current = Plan::first_visit().to_file();
    let json =
        r#"{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 3}}"#;
    let got = import(json, &current).unwrap();
    assert_eq!((got.model.clone(), got.file.model.clone()), (ModelOrigin::Unknown, current.model.clone()));
    let yaml = "model_name_or_path: /models/our-sft-v3\nstage: sft\nfinetuning_type: full\n";
    let got = import(yaml, &current).unwrap();
    assert_eq!(got.model, ModelOrigin::Unknown);
    assert_eq!(got.file.launch.model_path, "/models/our-sft-v3");
    // The Hugging Face id, as before: a variant of a catalog model.
    let got =
        import("model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\n", &current).unwrap();
    assert_eq!(got.model, ModelOrigin::Named("llama-3-8b".into()));
    assert_eq!(got.file.launch.model_path, "meta-llama/Meta-Llama-3-8B-Instruct");
    // A MindSpeed-RL model block pasted with (or without) its run YAML gives the architecture.
    let block =
        golden("mindspeed-rl-qwen2.5-7b-grpo/qwen25_7b.yaml").replace("num_layers: 28", "num_layers: 14");
    let got = import(&block, &current).unwrap();
    assert_eq!(got.kind, ConfigKind::MindSpeedRl);
    assert_eq!(got.model, ModelOrigin::Built { name: "qwen25_7b".into() });
    let run = golden("mindspeed-rl-qwen2.5-7b-grpo/grpo_qwen25_7b_16npu.yaml")
        .replace("tokenizer_name_or_path: \"Qwen/Qwen2.5-7B\"", "tokenizer_name_or_path: \"/models/tok\"");
    let both = format!("{run}\n{}", golden("mindspeed-rl-qwen2.5-7b-grpo/qwen25_7b.yaml"));
    let got = import(&both, &current).unwrap();
    assert_eq!(got.model, ModelOrigin::Matched { from: "qwen25_7b".into(), id: "qwen2.5-7b".into() });
    assert!(got.unknown.is_empty(), "{:?}", got.unknown);
}

/// Every key the plan does not hold and the files it writes would not keep is listed by name: a
/// template other than the model's, a learning rate, a key no emitter writes, a value set outside
/// the script.
#[test]
fn every_key_not_used_is_listed() {
    let current = Plan::first_visit().to_file();
    let yaml = LOCAL_LF_YAML.replace("template: qwen", "template: llama3")
        + "learning_rate: 2.0e-5\nval_size: 0.1\n";
    let got = import(&yaml, &current).unwrap();
    assert_eq!(got.unknown, ["template", "learning_rate", "val_size"]);
    // The same learning rate as the emitter's, written another way, is kept.
    let got =
        import(&(LOCAL_LF_YAML.to_owned() + "learning_rate: 1e-4\nnum_train_epochs: 3\n"), &current).unwrap();
    assert!(got.unknown.is_empty(), "{:?}", got.unknown);
    let script = golden("megatron-llama-3.1-70b/train_llama-3_1-70b.sh")
        .replace("--lr 1.5e-4", "--lr \"$LR\"")
        .replace("DATA_PATH='/data/corpus_text_document'", "DATA_PATH=\"/data/my_text_document\"")
        .replace("--split 99,1,0", "--split 98,2,0 --rdzv_backend c10d");
    let got = import(&script, &current).unwrap();
    assert_eq!(got.unknown, ["--lr", "--split", "--rdzv_backend"]);
    assert_eq!(got.file.launch.dataset, "/data/my_text_document");
    assert_eq!(got.refused, [], "--rdzv_backend is torchrun's");
}

/// Each format's paths and addresses come back into the plan's launch settings: the model path,
/// the dataset, the output directory, and the master address and port where the file holds them.
#[test]
fn launch_settings_come_back_from_each_format() {
    let launch = r#""launch": {"model_path": "/models/Qwen2.5-7B-Instruct", "dataset": "/data/train-set",
        "output_dir": "/ckpt/run-1", "master_addr": "10.0.0.7", "master_port": 29600}"#;
    for (framework, method, hardware, carries_master) in [
        ("megatron", "pretrain", "h100-sxm-80g", true),
        ("mindspeed-llm", "sft-full", "ascend-910b2", true),
        ("llamafactory", "lora", "h100-sxm-80g", false),
        ("verl", "grpo", "h100-sxm-80g", false),
        ("mindspeed-rl", "grpo", "ascend-910b2", false),
    ] {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "{hardware}", "framework": "{framework}", "method": "{method}",
                "parallel": {{"zero_stage": {}}}, {launch}}}"#,
            if framework == "verl" { 3 } else { 0 }
        );
        let plan = Plan::from_json(&text).unwrap();
        let main = main_file(&plan, &emit(&plan, "#x").unwrap());
        let got = import(&main.text, &stale_current(&plan.to_file())).unwrap();
        let mut expected = plan.launch.clone();
        if !carries_master {
            (expected.master_addr, expected.master_port) = (String::new(), 0);
        }
        assert_eq!(got.file.launch, expected, "{framework}");
        assert_eq!(
            got.model,
            ModelOrigin::Matched { from: "/models/Qwen2.5-7B-Instruct".into(), id: "qwen2.5-7b".into() }
        );
        assert!(got.unknown.is_empty(), "{framework}: {:?}", got.unknown);
    }
}

/// `trainplan import-config` prints the plan file, and on standard error how the model was told,
/// the keys not used and the flags refused.
#[test]
fn the_cli_says_how_the_model_was_told_and_what_was_not_used() {
    use std::io::Write;
    let run = |stdin: &str| {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_trainplan"))
            .args(["import-config", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let file: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (file, String::from_utf8(out.stderr).unwrap())
    };
    let (file, said) = run(&(LOCAL_LF_YAML.to_owned() + "val_size: 0.1\n"));
    assert_eq!(file["model"], "qwen2.5-14b");
    assert_eq!(file["launch"]["dataset"], "my_sft_data");
    assert!(said.contains("model: qwen2.5-14b, matched from /models/Qwen2.5-14B-Instruct"), "{said}");
    assert!(said.contains("not used, left out: val_size"), "{said}");
    let (file, said) = run("torchrun pretrain_gpt.py --tensor-model-parallel-size 2 --my-flag 3\n");
    assert_eq!(file["model"], "qwen2.5-7b");
    assert!(said.contains("model: not identified"), "{said}");
    assert!(said.contains("not used, left out: --my-flag"), "{said}");
    assert!(said.contains("its framework would refuse: --my-flag is not a flag of Megatron-LM"), "{said}");
}

/// Scripts as the frameworks' own examples write them, each construct from one of them (the
/// scripts here are written for the test, the constructs and their values taken from the files
/// named): what bash would run is what the import reads.
#[test]
fn scripts_read_as_the_frameworks_own_examples_write_them() {
    let base = PlanFile::minimal(ModelField::Id("qwen2.5-7b".into()));
    // Megatron-LM's examples/llama/train_llama3_8b_h100_fp8.sh: `--use-mcore-models` (a Megatron-LM
    // flag, not a sign of MindSpeed-LLM), and flags with their values as quoted array items,
    // which bash splits when it expands the array unquoted; its FSDP sibling's profiler command
    // in an array before the launcher, whose flags are nsys's (none is refused as Megatron's).
    let megatron = r#"#!/bin/bash
GPUS_PER_NODE=8
NUM_NODES=1
WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES))
MODEL_ARGS=(
    --use-mcore-models
    --num-layers 32
    --hidden-size 4096
    --ffn-hidden-size 14336
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 8
    --kv-channels 128
    --seq-length 8192
    --max-position-embeddings 8192
    --position-embedding-type rope
    --rotary-base 500000
    --swiglu
    --normalization RMSNorm
    --disable-bias-linear
    --untie-embeddings-and-output-weights
)
DTYPE_ARGS=(
    "--fp8-format hybrid"
    "--fp8-amax-history-len 1024"
    "--bf16"
)
DATA_ARGS_LIST=(
    "--tokenizer-type HuggingFaceTokenizer"
    "--vocab-size 128256"
)
PROFILE_CMD=(
    nsys profile
    --sample=none --cpuctxsw=none
    --trace=cuda,nvtx,cublas,cudnn
)
"${PROFILE_CMD[@]}" torchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py ${MODEL_ARGS[@]} ${DTYPE_ARGS[@]} \
    ${DATA_ARGS_LIST[@]} --micro-batch-size 1 --global-batch-size 128
"#;
    let got = import(megatron, &base).unwrap();
    assert_eq!(got.kind, ConfigKind::Megatron);
    assert_eq!(got.file.precision, trainplan_core::plan::Precision::Fp8);
    // A command array that runs the training script keeps its flags.
    let in_array =
        "CMD=(\n    python pretrain_gpt.py\n    --tensor-model-parallel-size 4\n)\n\"${CMD[@]}\"\n";
    assert_eq!(import(in_array, &base).unwrap().file.parallel.tp, 4);
    // Llama 3 8B's shape with its 128,256-token vocabulary.
    assert_eq!(got.file.model, ModelField::Id("llama-3-8b".into()), "{:?}", got.model);
    assert!(got.refused.is_empty(), "{:?}", got.refused);

    // VeRL's examples/gmpo_trainer/test_dapo_qwen3_30b_math.sh: lengths in shell arithmetic and a
    // default path built from another variable's default.
    let verl = r#"#!/usr/bin/env bash
max_prompt_length=$((1024 * 2))
max_response_length=$((1024 * 8))
n_resp_per_prompt=16
RAY_DATA_HOME=${RAY_DATA_HOME:-"${HOME}/verl"}
MODEL_PATH=${MODEL_PATH:-"${RAY_DATA_HOME}/models/Qwen3-30B-A3B-Base"}
actor_ppo_max_token_len=$(((max_prompt_length + max_response_length) * 2))
python3 -m verl.trainer.main_ppo \
    data.max_prompt_length=${max_prompt_length} \
    data.max_response_length=${max_response_length} \
    actor_rollout_ref.rollout.n=${n_resp_per_prompt} \
    actor_rollout_ref.actor.use_dynamic_bsz=True \
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=${actor_ppo_max_token_len} \
    actor_rollout_ref.model.path="${MODEL_PATH}"
"#;
    let got = import(verl, &base).unwrap();
    assert_eq!((got.file.rl.max_prompt_length, got.file.rl.max_response_length), (2048, 8192));
    assert_eq!(got.file.rl.max_tokens_per_device, (2048 + 8192) * 2);
    assert_eq!(got.file.rl.n_samples_per_prompt, 16);
    // The directory names the model though $HOME is the machine's.
    assert_eq!(got.file.model, ModelField::Id("qwen3-30b-a3b".into()), "{:?}", got.model);
    // The base of VeRL's DAPO scripts (examples/gmpo_trainer/test_dapo_7b_math.sh and 22 more files).
    let math = verl.replace("Qwen3-30B-A3B-Base", "Qwen2.5-Math-7B");
    assert_eq!(import(&math, &base).unwrap().file.model, ModelField::Id("qwen2.5-math-7b".into()));
    assert_eq!(got.file.launch.model_path, "", "a path set outside the script is not the plan's");
    // VeRL's own default is one response a prompt (`n: 1`, verl/trainer/config/rollout/rollout.yaml),
    // as its PPO examples leave it (examples/ppo_trainer/run_deepseek7b_llm.sh).
    let ppo = "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=gae data.train_batch_size=1024\n";
    let got = import(ppo, &base).unwrap();
    assert_eq!(got.file.rl.n_samples_per_prompt, 1);
    assert!(got.unknown.is_empty(), "{:?}", got.unknown);
    // The model of 22 of VeRL's example scripts, by its Hub id (examples/grpo_trainer/run_qwen2-7b.sh).
    let qwen2 = "python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen2-7B-Instruct\n";
    let got = import(qwen2, &base).unwrap();
    assert_eq!(got.file.model, ModelField::Id("qwen2-7b".into()), "{:?}", got.model);
    // The log-probabilities' micro-batch apart from the update's (examples/grpo_trainer/run_qwen3-8b_npu.sh:
    // 32 and 32 against the update's 10); the rollout's and the reference's as one, the larger; the
    // update's own reads as 0, "the update's".
    let scored = |rollout: u32, reference: u32| {
        let text = format!(
            "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\
             actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu={rollout} \\
             actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu={reference}\n"
        );
        let got = import(&text, &base).unwrap();
        assert!(got.unknown.is_empty(), "{:?}", got.unknown);
        got.file.rl.log_prob_micro_batch
    };
    assert_eq!((scored(32, 32), scored(8, 16), scored(4, 4)), (32, 16, 0));
    // Packed by tokens, their budget (examples/gmpo_trainer/test_dapo_7b_math.sh: 3 sequences'
    // tokens against the update's 2); the update's own reads as 0.
    let packed = |update: u32, scoring: u32| {
        let text = format!(
            "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_dynamic_bsz=True \\
             actor_rollout_ref.actor.ppo_max_token_len_per_gpu={update} \\
             actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu={scoring} \\
             actor_rollout_ref.ref.log_prob_max_token_len_per_gpu={scoring}\n"
        );
        let got = import(&text, &base).unwrap();
        assert!(got.unknown.is_empty(), "{:?}", got.unknown);
        (got.file.rl.max_tokens_per_device, got.file.rl.log_prob_max_tokens_per_device)
    };
    assert_eq!((packed(20480, 30720), packed(20480, 20480)), ((20480, 30720), (20480, 0)));
    // And of 13 more (examples/ppo_trainer/run_deepseek7b_llm.sh), its chat model.
    let deepseek = qwen2.replace("Qwen/Qwen2-7B-Instruct", "deepseek-ai/deepseek-llm-7b-chat");
    let got = import(&deepseek, &base).unwrap();
    assert_eq!(got.file.model, ModelField::Id("deepseek-llm-7b".into()), "{:?}", got.model);
    // Its Megatron engine (examples/ppo_trainer/run_qwen2-7b_math_gsm8k_megatron.sh) is its own
    // config, read as VeRL with that engine.
    let megatron_backend = ppo.replace("main_ppo ", "main_ppo --config-name='ppo_megatron_trainer' ");
    let got = import(&megatron_backend, &base).unwrap();
    assert_eq!(got.file.framework, Framework::VerlMegatron);
    assert!(got.unknown.is_empty(), "{:?}", got.unknown);
    // Its sizes, offload and recomputation read back (examples/grpo_trainer/run_qwen2-7b_math_megatron.sh,
    // with VPP, EP and the engine's `override_transformer_config`).
    let sized = "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer \\
        actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4 \\
        actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=2 \\
        actor_rollout_ref.actor.megatron.virtual_pipeline_model_parallel_size=2 \\
        actor_rollout_ref.actor.megatron.expert_model_parallel_size=8 \\
        actor_rollout_ref.actor.megatron.param_offload=True \\
        +actor_rollout_ref.actor.megatron.override_transformer_config.moe_token_dispatcher_type=alltoall \\
        actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full \\
        actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=block \\
        actor_rollout_ref.actor.megatron.override_transformer_config.recompute_num_layers=3 \\
        critic.megatron.tensor_model_parallel_size=4 critic.megatron.pipeline_model_parallel_size=1\n";
    let got = import(sized, &base).unwrap();
    let p = &got.file.parallel;
    assert_eq!((got.file.framework, p.tp, p.pp, p.vpp, p.ep), (Framework::VerlMegatron, 4, 2, 2, 8));
    assert!(p.offload_params && !p.offload_optimizer);
    let r = &got.file.recompute;
    assert_eq!(
        (r.granularity, r.method, r.num_layers),
        (trainplan_core::plan::RecomputeGranularity::Full, trainplan_core::plan::RecomputeMethod::Block, 3)
    );
    // The critic's TP is the actor's and taken; its PP of 1 is not the plan's: said.
    assert_eq!(got.unknown, ["critic.megatron.pipeline_model_parallel_size"]);
    // Any other config is said, not passed over.
    let other = ppo.replace("main_ppo ", "main_ppo --config-name=ppo_trainer_custom ");
    assert_eq!(import(&other, &base).unwrap().unknown, ["--config-name"]);

    // MindSpeed-LLM's examples/mcore/deepseek3/tune_deepseek3_671b_4k_lora_ptd.sh: shared experts
    // counted (`--n-shared-experts`, of the routed experts' width) and MLA's latent norms
    // (`--qk-layernorm`) with DeepSeek-V3's shape.
    let mindspeed = r#"source /usr/local/Ascend/ascend-toolkit/set_env.sh
torchrun posttrain_gpt.py --multi-latent-attention --qk-pos-emb-head-dim 64 --qk-head-dim 128 \
    --q-lora-rank 1536 --kv-lora-rank 512 --v-head-dim 128 --qk-layernorm \
    --first-k-dense-replace 3 --moe-layer-freq 1 --n-shared-experts 1 --num-experts 256 \
    --moe-router-topk 8 --moe-ffn-hidden-size 2048 --num-layers 61 --hidden-size 7168 \
    --ffn-hidden-size 18432 --num-attention-heads 128 --position-embedding-type rope \
    --normalization RMSNorm --swiglu --disable-bias-linear --untie-embeddings-and-output-weights \
    --vocab-size 129280 --padded-vocab-size 129280 --rotary-base 10000 --norm-epsilon 1e-6 \
    --tokenizer-type PretrainedFromHF --lora-r 8 --lora-alpha 16
"#;
    let got = import(mindspeed, &base).unwrap();
    assert_eq!(got.kind, ConfigKind::MindSpeedLlm);
    assert_eq!(got.file.model, ModelField::Id("deepseek-v3".into()), "{:?}", got.model);

    // MindSpeed-LLM's examples/mcore/qwen25/pretrain_qwen25_72b_32k_ptd.sh: its own split of
    // Qwen2.5-72B's 80 layers over 4 stages, kept as the plan's layout (the planner alone would
    // split them evenly), and written back as the same list.
    let split = "source /usr/local/Ascend/ascend-toolkit/set_env.sh
        torchrun pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4         --num-layer-list 17,20,22,21 --tokenizer-type PretrainedFromHF         --tokenizer-name-or-path /models/Qwen2.5-72B --num-layers 80 --seq-length 32768
";
    let got = import(split, &base).unwrap();
    assert_eq!(got.file.model, ModelField::Id("qwen2.5-72b".into()), "{:?}", got.model);
    assert_eq!(got.file.parallel.pipeline_layout, "Et*17|t*20|t*22|t*21L");
    let plan = Plan::from_file(&got.file).unwrap();
    let report = trainplan_core::evaluate(&plan);
    let layers: Vec<u64> = report.memory.stages.iter().map(|s| s.n_layers).collect();
    assert_eq!(layers, [17, 20, 22, 21]);
    let script = &emit(&plan, "#x").unwrap()[0].text;
    assert!(script.contains("--num-layer-list 17,20,22,21"), "{script}");
    assert!(!script.contains("--pipeline-model-parallel-layout"), "{script}");
    // A list whose sizes add past 2^64 (a pasted typo, found by fuzzing) reads as a list, not a
    // panic: kept as the layout, which the plan then refuses with a message.
    let huge = split.replace("17,20,22,21", "18446744073709551615,1,1,1");
    let got = import(&huge, &base).unwrap();
    assert_eq!(got.file.parallel.pipeline_layout, "Et*18446744073709551615|t*1|t*1|t*1L");
}

/// LLaMA-Factory's YAML: the passes over the dataset reach the budget (and the file the plan writes
/// carries the budget's); LoRA DPO (its examples/train_lora/qwen3_lora_dpo.yaml) is the plan's
/// `dpo-lora`, and LoRA where the plan trains full weights (pre-training) is listed as not used
/// rather than dropped unsaid.
#[test]
fn llamafactory_epochs_and_lora_outside_sft_are_read_or_listed() {
    let base = PlanFile::minimal(ModelField::Id("qwen2.5-7b".into()));
    let dpo = "model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\nstage: dpo\ndo_train: true\n\
               finetuning_type: lora\nlora_rank: 8\nlora_target: all\npref_beta: 0.1\n\
               num_train_epochs: 3.0\nbf16: true\n";
    let got = import(dpo, &base).unwrap();
    assert_eq!(got.file.method, trainplan_core::plan::Method::DpoLora);
    assert!(!got.unknown.contains(&"finetuning_type".to_owned()), "{:?}", got.unknown);
    assert_eq!(got.file.budget.epochs, 3.0);
    let full_dpo = dpo.replace("finetuning_type: lora", "finetuning_type: full");
    assert_eq!(import(&full_dpo, &base).unwrap().file.method, trainplan_core::plan::Method::Dpo);
    let pretrain = dpo.replace("stage: dpo", "stage: pt");
    let got = import(&pretrain, &base).unwrap();
    assert_eq!(got.file.method, trainplan_core::plan::Method::Pretrain);
    assert!(got.unknown.contains(&"finetuning_type".to_owned()), "{:?}", got.unknown);
    let sft = dpo.replace("stage: dpo", "stage: sft").replace("num_train_epochs: 3.0", "num_train_epochs: 2");
    let got = import(&sft, &base).unwrap();
    assert_eq!(got.file.method, trainplan_core::plan::Method::Lora);
    assert!(!got.unknown.contains(&"finetuning_type".to_owned()), "{:?}", got.unknown);
    assert_eq!(got.file.budget.epochs, 2.0);
    // Written back: the plan's budget is the file's `num_train_epochs`.
    let mut file = got.file.clone();
    file.budget.epochs = 1.5;
    let plan = Plan::from_file(&file).unwrap();
    let yaml = &emit(&plan, "#x").unwrap()[0].text;
    assert!(yaml.lines().any(|l| l == "num_train_epochs: 1.5"), "{yaml}");
}

/// MindSpeed-RL packs each role to its own size (`update_`, `actor_`, `ref_max_packing_token_size`,
/// read by `BaseTrainingEngine` at 05a90d7): the update's is the plan's budget, over the file's
/// `max_packing_token_size`, and the larger of the log-probabilities' forwards' is theirs: its DAPO
/// config (configs/dapo_qwen25_32b_A2_20k.yaml) scores rows of 45,056 tokens and updates on rows of
/// 22,528.
#[test]
fn mindspeed_rl_reads_each_roles_packing() {
    // The budget, the log-probabilities' and the keys not kept of an `rl_config` packing by tokens
    // with `sizes`.
    let read = |sizes: &str| {
        let got = import(
            &format!("rl_config:\n  use_dynamic_bsz: true\n{sizes}"),
            &PlanFile::minimal(trainplan_core::plan::ModelField::Id("qwen2.5-7b".into())),
        )
        .expect("a MindSpeed-RL config");
        (
            got.file.rl.max_tokens_per_device,
            got.file.rl.log_prob_max_tokens_per_device,
            got.unknown,
            got.caveats,
        )
    };
    let dapo = "  actor_max_packing_token_size: 45056\n  update_max_packing_token_size: 22528\n";
    assert_eq!(read(dapo), (22528, 45056, vec![], vec![]));
    let all = "  max_packing_token_size: 8192\n  update_max_packing_token_size: 8192\n  \
               actor_max_packing_token_size: 8192\n  ref_max_packing_token_size: 8192\n";
    assert_eq!(read(all), (8192, 0, vec![], vec![]));
    // The file's size alone (its configs/grpo_deepseek_r1_671b_A2.yaml: 10,240): what the file means,
    // and the caveat that MindSpeed-RL, which sets each role's size from its 4,096 before it reads
    // the file (`RLConfig.__init__`), packs every role to 4,096; none where the file's is 4,096 too
    // (configs/grpo_deepseek_r1_671b_A3.yaml).
    let alone = vec![Caveat::PackingRolesUnset { tokens: 8192 }];
    assert_eq!(read("  max_packing_token_size: 8192\n"), (8192, 0, vec![], alone));
    assert!(read("  max_packing_token_size: 4096\n").3.is_empty());
    let apart = "  update_max_packing_token_size: 8192\n  actor_max_packing_token_size: 16384\n  \
                 ref_max_packing_token_size: 12288\n";
    let ref_kept = vec!["rl_config.ref_max_packing_token_size".to_owned()];
    assert_eq!(read(apart), (8192, 16384, ref_kept, vec![]));
    // One role's key set is enough: the file sets sizes per role.
    let one = "  max_packing_token_size: 8192\n  update_max_packing_token_size: 8192\n";
    assert!(read(one).3.is_empty());
}

/// MindSpeed-RL scores the old log-probabilities and the reference's with micro-batches of their
/// own (`actor_` and `ref_forward_micro_batch_size`, `IntegratedWorker` at 05a90d7): its
/// configs/grpo_qwen25_32b_A2.yaml updates 2 sequences at a time and scores 64 (the actor) and 32
/// (the reference). Read as the larger, the smaller listed as not kept; written back for both.
#[test]
fn mindspeed_rl_reads_the_log_probabilities_micro_batches() {
    let current = PlanFile::minimal(trainplan_core::plan::ModelField::Id("qwen2.5-32b".into()));
    let read = |text: &str| import(text, &current).expect("a MindSpeed-RL config");
    let config = "actor_config:\n  micro_batch_size: 2\nrl_config:\n  actor_forward_micro_batch_size: 64\n  \
                  ref_forward_micro_batch_size: 32\n";
    let got = read(config);
    assert_eq!((got.file.batch.micro_batch, got.file.rl.log_prob_micro_batch), (2, 64));
    assert_eq!(got.unknown, vec!["rl_config.ref_forward_micro_batch_size".to_owned()]);
    // configs/grpo_qwen25_7b_A3.yaml: 4, 4 and 4, the update's ("0").
    let same = "actor_config:\n  micro_batch_size: 4\nrl_config:\n  actor_forward_micro_batch_size: 4\n  \
                ref_forward_micro_batch_size: 4\n";
    assert_eq!(read(same).file.rl.log_prob_micro_batch, 0);
    // The plan's launch file writes its figure for both, and reads back as the same plan.
    let plan = Plan::from_file(&got.file).expect("the imported plan");
    let run = main_file(&plan, &emit(&plan, "#x").unwrap()).text;
    for key in ["actor_forward_micro_batch_size: 64", "ref_forward_micro_batch_size: 64"] {
        assert!(run.contains(key), "{key} in {run}");
    }
    assert_eq!(read(&run).file.rl.log_prob_micro_batch, 64);
}

/// MindSpeed-RL builds the actor's Megatron settings from `megatron_training` with
/// `actor_config`'s keys winning (`cli/train_grpo.py`: `MegatronConfig({**megatron_training,
/// **actor_config}, model)`), and its own configs set the actor's expert parallelism and
/// recomputation there (`configs/grpo_qwen3_235b_a22b_A2.yaml`: `expert_model_parallel_size: 4`,
/// `recompute_granularity: full`, `recompute_method: block`, `recompute_num_layers: 6` under
/// `actor_config`). Read as such, and not listed as unused; a key only `megatron_training` gives
/// is still read.
#[test]
fn mindspeed_rl_reads_the_actors_settings_over_the_megatron_ones() {
    let current = Plan::first_visit().to_file();
    let run = golden("mindspeed-rl-qwen3-30b-a3b-grpo/grpo_qwen3_30b_a3b_32npu.yaml");
    let actor = "actor_config:\n  expert_model_parallel_size: 2\n  recompute_granularity: full\n  recompute_method: block\n  recompute_num_layers: 3\n";
    let overridden = run.replacen("actor_config:\n", actor, 1);
    assert_ne!(overridden, run, "the golden run YAML has an actor_config section");
    let got = import(&overridden, &current).unwrap();
    assert_eq!(got.file.parallel.ep, 2);
    let rc = &got.file.recompute;
    use trainplan_core::plan::{RecomputeGranularity, RecomputeMethod};
    assert_eq!(
        (rc.granularity, rc.method, rc.num_layers),
        (RecomputeGranularity::Full, RecomputeMethod::Block, 3)
    );
    for key in
        ["expert_model_parallel_size", "recompute_granularity", "recompute_method", "recompute_num_layers"]
    {
        assert!(!got.unknown.iter().any(|u| u.ends_with(key)), "{key}: {:?}", got.unknown);
    }
    // The Megatron settings alone (this golden file writes EP 4 there), as before.
    assert_eq!(import(&run, &current).unwrap().file.parallel.ep, 4);
}

/// MindSpeed's empty layer slots (`--noop-layers`, `noop_layers`: `NoopTransformerLayer`s that pad
/// a model's layers to a count the pipeline divides) are read as the layers each stage really
/// holds: MindSpeed-LLM's DeepSeek-V3 scripts (`examples/mcore/deepseek3/pretrain_deepseek3_671b_4k_ptd.sh`:
/// `--num-layers 64 --noop-layers 61,62,63` over PP 8, one MTP layer) are DeepSeek-V3's 61 layers,
/// the last stage holding 5 and the MTP layer; MindSpeed-RL's Qwen3-235B config pads 94 layers to
/// 96 (`actor_config`: `num_layers: 96`, `noop_layers: "5,95"`), here two slots of Qwen3-30B-A3B's
/// 48 as 50 over PP 2. The padded count is no model's, so it is not listed as unused, and the
/// files written back list the stages' layers.
#[test]
fn empty_layer_slots_are_read_as_each_stages_layers() {
    let current = Plan::first_visit().to_file();
    let plan = Plan::from_json(
        r#"{"model": "deepseek-v3", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain",
            "cluster": {"nodes": 32}, "mtp_layers": 1, "parallel": {"pp": 8, "ep": 32, "distributed_optimizer": true}}"#,
    )
    .unwrap();
    let files = emit(&plan, "#v1=x").unwrap();
    let script = &files[0].text;
    assert!(script.contains("--num-layers 61\n"), "{script}");
    let padded = script.replace("--num-layers 61\n", "--num-layers 64 --noop-layers 61,62,63\n");
    let got = import(&padded, &current).unwrap();
    assert_eq!(got.file.model, ModelField::Id("deepseek-v3".into()));
    assert_eq!(got.file.parallel.pipeline_layout, "Et*8|t*8|t*8|t*8|t*8|t*8|t*8|t*5mL");
    assert!(
        got.unknown.iter().all(|u| !u.contains("num-layers") && !u.contains("noop")),
        "{:?}",
        got.unknown
    );
    let back = Plan::from_file(&got.file).unwrap();
    let written = emit(&back, "#v1=x").unwrap()[0].text.clone();
    assert!(written.contains("--num-layer-list 8,8,8,8,8,8,8,5"), "{written}");
    // MindSpeed-RL: the actor's padded count and its empty slots.
    let run = golden("mindspeed-rl-qwen3-30b-a3b-grpo/grpo_qwen3_30b_a3b_32npu.yaml").replacen(
        "actor_config:\n",
        "actor_config:\n  num_layers: 50\n  noop_layers: \"0,1\"\n",
        1,
    );
    let got = import(&run, &current).unwrap();
    assert_eq!(got.file.parallel.pipeline_layout, "Et*23|t*25L");
    assert!(
        got.unknown.iter().all(|u| !u.contains("num_layers") && !u.contains("noop")),
        "{:?}",
        got.unknown
    );
    let report = trainplan_core::evaluate(&Plan::from_file(&got.file).unwrap());
    assert!(
        report.findings.iter().all(|f| f.severity != trainplan_core::report::Severity::Error),
        "{:?}",
        report.findings
    );
    let back = emit(&Plan::from_file(&got.file).unwrap(), "#v1=x").unwrap();
    assert!(back.iter().any(|f| f.text.contains("num_layer_list: \"23,25\"")));
}

/// YaRN read back: a Qwen2.5 config with the YaRN its model card tells to add for long context
/// (`"rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}`)
/// writes Megatron-LM's yarn flags, and the script reads back as that config, not as the catalog's
/// Qwen2.5-7B without it; a DeepSeek-V3 script that leaves YaRN to the framework is still DeepSeek-V3.
#[test]
fn yarn_reads_back_as_the_models_rope_scaling() {
    let current = Plan::first_visit().to_file();
    let mut qwen: serde_json::Value = serde_json::from_str(
        trainplan_core::catalog::CONFIGS.iter().find(|c| c.id == "qwen2.5-7b").unwrap().config,
    )
    .unwrap();
    qwen["rope_scaling"] =
        serde_json::json!({"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"});
    let plan = Plan::from_json(&format!(
        r#"{{"model": {{"hf_config": {qwen}}}, "framework": "megatron", "method": "pretrain"}}"#
    ))
    .unwrap();
    let script = emit(&plan, "#v1=x").unwrap()[0].text.clone();
    let got = import(&script, &current).unwrap();
    let ModelField::Config { hf_config, .. } = &got.file.model else { panic!("{:?}", got.file.model) };
    let scaling = &hf_config["rope_scaling"];
    assert_eq!((scaling["type"].as_str(), scaling["factor"].as_f64()), (Some("yarn"), Some(4.0)));
    assert_eq!(scaling["original_max_position_embeddings"].as_u64(), Some(32768));
    assert!(got.unknown.is_empty(), "{:?}", got.unknown);
    let deepseek = Plan::from_json(r#"{"model": "deepseek-v3", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 32}, "parallel": {"pp": 8, "ep": 32}}"#).unwrap();
    let script = emit(&deepseek, "#v1=x").unwrap()[0]
        .text
        .replace("--rotary-scaling-factor 40 --mscale 1 --mscale-all-dim 1", "");
    assert!(!script.contains("--rotary-scaling-factor"));
    let got = import(&script, &current).unwrap();
    assert_eq!(got.file.model, ModelField::Id("deepseek-v3".into()));
}

#[test]
fn a_gptq_or_awq_checkpoint_named_by_the_file_keeps_its_format() {
    // LLaMA-Factory's examples train LoRA over a GPTQ checkpoint by its Hugging Face id
    // (examples/train_qlora/llama3_lora_sft_gptq.yaml and _awq.yaml:
    // `TechxGenus/Meta-Llama-3-8B-Instruct-GPTQ`, `-AWQ`);
    // Qwen publishes `-GPTQ-Int4`, `-GPTQ-Int8` and `-AWQ` releases of each model.
    let base = PlanFile::minimal(ModelField::Id("llama-2-7b".to_owned()));
    let read = |path: &str| {
        let yaml = format!("model_name_or_path: {path}\nstage: sft\nfinetuning_type: lora\n");
        let imported = import(&yaml, &base).unwrap();
        let plan = Plan::from_file(&imported.file).unwrap();
        (plan.model.arch.clone(), plan.model.prequantized, imported.model)
    };
    for (path, id, bits, format) in [
        ("TechxGenus/Meta-Llama-3-8B-Instruct-GPTQ", "llama-3-8b", 4, Format::Gptq),
        ("TechxGenus/Meta-Llama-3-8B-Instruct-AWQ", "llama-3-8b", 4, Format::Awq),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "qwen2.5-7b", 4, Format::Gptq),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "qwen2.5-7b", 8, Format::Gptq),
        ("/data/models/Qwen2.5-7B-Instruct-AWQ", "qwen2.5-7b", 4, Format::Awq),
    ] {
        let (arch, stored, origin) = read(path);
        assert_eq!(arch, trainplan_core::catalog::model(id).unwrap().arch, "{path}");
        assert_eq!(stored, Some(Prequantized { format, bits, group_size: Some(128) }), "{path}");
        assert!(matches!(origin, ModelOrigin::Named(_) | ModelOrigin::Matched { .. }), "{path}: {origin:?}");
    }
    // Unsloth's bitsandbytes releases: NF4 with double quantization.
    let (arch, stored, _) = read("unsloth/Qwen2.5-7B-Instruct-bnb-4bit");
    assert_eq!(arch, trainplan_core::catalog::model("qwen2.5-7b").unwrap().arch);
    let nf4 = Prequantized { format: Format::Nf4 { double_quant: true }, bits: 4, group_size: None };
    assert_eq!(stored, Some(nf4));
    // A 16-bit release stays the catalog model.
    let (_, stored, origin) = read("Qwen/Qwen2.5-7B-Instruct");
    assert_eq!((stored, origin), (None, ModelOrigin::Named("qwen2.5-7b".to_owned())));
}

/// A DeepSpeed JSON that leaves `overlap_comm` out runs with DeepSpeed's default, which overlaps
/// ZeRO-3's reductions and no other stage's (`overlap_comm_valid`, deepspeed/runtime/zero/config.py
/// at v0.19.8); a value the file gives stands.
#[test]
fn deepspeeds_overlap_default_follows_its_stage() {
    let base = PlanFile::minimal(ModelField::Id("llama-3-8b".into()));
    let overlap = |zero: &str| {
        let got = import(
            &format!(r#"{{"zero_optimization": {zero}, "train_micro_batch_size_per_gpu": 1}}"#),
            &base,
        )
        .unwrap();
        assert_eq!(got.kind, ConfigKind::DeepSpeed);
        got.file.parallel.overlap_grad_reduce
    };
    assert!(overlap(r#"{"stage": 3}"#));
    assert!(!overlap(r#"{"stage": 2}"#));
    assert!(!overlap(r#"{"stage": 3, "overlap_comm": false}"#));
    assert!(overlap(r#"{"stage": 2, "overlap_comm": true}"#));
}

/// LLaMA-Factory's freeze-tuning (`finetuning_type: freeze`, its `FreezeArguments`): the last
/// `freeze_trainable_layers` layers, every module of each, are the plan's `freeze`; the first n
/// layers (a negative count), some modules alone, or freeze-tuning outside SFT are listed as not
/// used. Written back, the file says the same.
#[test]
fn llamafactory_freeze_tuning_reads_back() {
    use trainplan_core::plan::Method;
    let base = PlanFile::minimal(ModelField::Id("qwen2.5-7b".into()));
    let yaml = "model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: freeze\n\
                freeze_trainable_layers: 6\nfreeze_trainable_modules: all\nbf16: true\n";
    let got = import(yaml, &base).unwrap();
    assert_eq!((got.file.method, got.file.freeze_layers), (Method::Freeze, 6));
    assert!(got.unknown.is_empty(), "{:?}", got.unknown);
    let written = &emit(&Plan::from_file(&got.file).unwrap(), "#x").unwrap()[0].text;
    for line in ["finetuning_type: freeze", "freeze_trainable_layers: 6", "freeze_trainable_modules: all"] {
        assert!(written.lines().any(|l| l == line), "{line} not in {written}");
    }
    let first = yaml.replace("layers: 6", "layers: -2");
    assert_eq!(import(&first, &base).unwrap().unknown, ["freeze_trainable_layers".to_owned()]);
    let some = yaml.replace("modules: all", "modules: mlp");
    assert_eq!(import(&some, &base).unwrap().unknown, ["freeze_trainable_modules".to_owned()]);
    let dpo = import(&yaml.replace("stage: sft", "stage: dpo"), &base).unwrap();
    assert_eq!(dpo.file.method, Method::Dpo);
    assert_eq!(dpo.unknown, ["finetuning_type".to_owned()]);
}

/// A DeepSeek-shaped Megatron-LM script of no catalog model: its `--moe-layer-freq` pattern gives
/// the built model its dense layers first, as the launch file written for it says again.
#[test]
fn a_built_moe_model_keeps_its_dense_layers_first() {
    let current = Plan::first_visit().to_file();
    let plan = Plan::from_json(
        r#"{"model": "deepseek-v2-lite", "framework": "megatron", "method": "pretrain", "parallel": {"ep": 8}}"#,
    )
    .unwrap();
    let script = emit(&plan, "#x").unwrap()[0].text.clone();
    assert!(script.contains("--moe-layer-freq \"([0]*1+[1]*26)\""), "{script}");
    // Twenty layers of which the first two dense, under a name no catalog model has.
    let renamed = script
        .replace("--num-layers 27", "--num-layers 20")
        .replace("([0]*1+[1]*26)", "([0]*2+[1]*18)")
        .replace("deepseek-ai/DeepSeek-V2-Lite", "/models/my-moe");
    let got = import(&renamed, &current).unwrap();
    assert_eq!(got.model, ModelOrigin::Built { name: "my-moe".into() });
    let built = Plan::from_file(&got.file).unwrap();
    let moe = built.model.arch.moe.as_ref().unwrap();
    let layout: Vec<bool> = (0..20).map(|i| moe.is_moe_layer(i)).collect();
    assert_eq!(layout, [vec![false; 2], vec![true; 18]].concat());
    assert!(emit(&built, "#x").unwrap()[0].text.contains("--moe-layer-freq \"([0]*2+[1]*18)\""));
}

/// Mistral-7B-v0.1's Megatron-LM script (`--window-size 4095,0`) and MindSpeed-LLM script
/// (`--sliding-window 4096`) are that model; without its window a script builds another (every
/// layer attending to the whole sequence), which is not identified as it. A script of no catalog
/// model with the window is built as a Mistral through it, and its launch file says it again.
#[test]
fn a_sliding_window_is_read_from_both_megatron_flags() {
    let current = Plan::first_visit().to_file();
    let script = |framework: &str, hardware: &str| {
        let text = format!(
            r#"{{"model": "mistral-7b-v0.1", "framework": "{framework}", "hardware": "{hardware}", "method": "pretrain"}}"#
        );
        // Under paths that name no model, so that the flags alone tell it.
        let text = emit(&Plan::from_json(&text).unwrap(), "#x").unwrap()[0].text.clone();
        text.replace("mistralai/Mistral-7B-v0.1", "/models/tokenizer")
            .replace("Mistral-7B-v0.1", "run")
            .replace("mistral-7b-v0.1", "run")
    };
    let megatron = script("megatron", "h100-sxm-80g");
    let mindspeed = script("mindspeed-llm", "ascend-910b2");
    for text in [&megatron, &mindspeed] {
        let got = import(text, &current).unwrap();
        assert_eq!(got.model, ModelOrigin::Shape("mistral-7b-v0.1".into()), "{text}");
    }
    let unwindowed = megatron.replace("--window-size 4095,0", "");
    let got = import(&unwindowed, &current).unwrap();
    assert_ne!(got.model, ModelOrigin::Shape("mistral-7b-v0.1".into()));
    assert_eq!(Plan::from_file(&got.file).unwrap().model.arch.sliding_window, None);
    let wider = megatron.replace("--hidden-size 4096", "--hidden-size 4608").replace("4095,0", "2047,0");
    let got = import(&wider, &current).unwrap();
    assert!(matches!(got.model, ModelOrigin::Built { .. }), "{:?}", got.model);
    let built = Plan::from_file(&got.file).unwrap();
    assert_eq!(built.model.arch.family, Family::Mistral);
    let window = built.model.arch.sliding_window.unwrap();
    assert_eq!((window.size, window.windowed_layers(32)), (2048, 32));
    assert!(emit(&built, "#x").unwrap()[0].text.contains("--window-size 2047,0\n"));
}

/// A DeepSpeed JSON's ZeRO++ keys are read into the plan, not listed as unused, and the file the
/// plan writes says them again; DeepSpeed's `zero_hpz_partition_size: 0` is off, as 1 is (the
/// stage-3 engine builds hpZ's group above 1).
#[test]
fn deepspeeds_zero_plus_plus_keys_read_back() {
    let base = PlanFile::minimal(ModelField::Id("llama-3-8b".into()));
    let text = r#"{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3,
        "zero_hpz_partition_size": 8, "zero_quantized_weights": true, "zero_quantized_gradients": true}}"#;
    let got = import(text, &base).unwrap();
    let p = &got.file.parallel;
    assert_eq!(
        (p.zero_hpz_partition_size, p.zero_quantized_weights, p.zero_quantized_gradients),
        (8, true, true)
    );
    assert!(got.unknown.iter().all(|k| !k.contains("zero_")), "{:?}", got.unknown);
    let mut file = got.file.clone();
    file.cluster.nodes = 2;
    let plan = Plan::from_file(&file).unwrap();
    let json = &emit(&plan, "#x").unwrap().into_iter().find(|f| f.kind == FileKind::Json).unwrap().text;
    let zero = &serde_json::from_str::<serde_json::Value>(json).unwrap()["zero_optimization"];
    assert_eq!(
        (&zero["zero_hpz_partition_size"], &zero["zero_quantized_gradients"]),
        (&8.into(), &true.into())
    );
    let off = import(r#"{"zero_optimization": {"stage": 3, "zero_hpz_partition_size": 0}}"#, &base).unwrap();
    assert_eq!(off.file.parallel.zero_hpz_partition_size, 1);
}

/// GLM-4-9B's Megatron-LM script is that model by its flags, its rotary embedding included; the
/// same script without `--rotary-percent 0.5 --rotary-interleaved` builds a model rotating whole
/// heads, which is not it; a GLM-shaped script of no catalog model is built as a GLM whose
/// launch file says its rotation again.
#[test]
fn glms_rotary_flags_tell_the_model() {
    let current = Plan::first_visit().to_file();
    let script = unnamed_megatron_script("glm-4-9b", &["THUDM/glm-4-9b-chat-hf", "GLM-4-9B"]);
    assert_eq!(import(&script, &current).unwrap().model, ModelOrigin::Shape("glm-4-9b".into()));
    let whole = script.replace("  --rotary-percent 0.5\n", "").replace("  --rotary-interleaved\n", "");
    assert_ne!(import(&whole, &current).unwrap().model, ModelOrigin::Shape("glm-4-9b".into()));
    let again = built_again(&script.replace("--num-layers 40", "--num-layers 20"), Family::Glm);
    assert!(again.contains("--rotary-percent 0.5\n") && again.contains("--rotary-interleaved\n"), "{again}");
}

/// Phi-4-mini's Megatron-LM script (`--rotary-percent 0.75`, no interleaving, no biases) is that
/// model by its flags; a script of that shape with other layer counts is built as a Phi-3 whose
/// launch file rotates the same share of each head again, where a Llama-like reading dropped it
/// and rotated whole heads.
#[test]
fn phis_partial_rotation_is_read_back() {
    let current = Plan::first_visit().to_file();
    let script =
        unnamed_megatron_script("phi-4-mini", &["microsoft/Phi-4-mini-instruct", "Phi-4-mini-instruct"]);
    assert_eq!(import(&script, &current).unwrap().model, ModelOrigin::Shape("phi-4-mini".into()));
    let again = built_again(&script.replace("--num-layers 32", "--num-layers 20"), Family::Phi3);
    assert!(again.contains("--rotary-percent 0.75\n") && !again.contains("--rotary-interleaved"), "{again}");
}

/// Phi-4-mini's MindSpeed-LLM script of another depth, read back, is built as a Phi-3 with its
/// LongRoPE (the original length and both factor lists, `--rope-scaling-type longrope`), and the
/// plan's script writes the same flags again.
#[test]
fn longrope_flags_are_read_back() {
    let p = Plan::from_json(
        r#"{"model": "phi-4-mini", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "pretrain"}"#,
    )
    .unwrap();
    let longrope = |text: &str| text.lines().find(|l| l.contains("--rope-scaling-type")).map(str::to_owned);
    let script = emit(&p, "#x").unwrap()[0].text.clone();
    let written = longrope(&script).expect("MindSpeed-LLM writes LongRoPE");
    let deeper = script
        .replace("microsoft/Phi-4-mini-instruct", "/models/tokenizer")
        .replace("Phi-4-mini-instruct", "run")
        .replace("phi-4-mini", "run")
        .replace("--num-layers 32", "--num-layers 20");
    let again = built_again(&deeper, Family::Phi3);
    assert_eq!(longrope(&again), Some(written));
}

/// Catalog model `model`'s Megatron-LM pretraining script with each of `names` (its Hugging Face
/// id, its display name) and its id put out of sight, so that only its flags tell the model.
fn unnamed_megatron_script(model: &str, names: &[&str]) -> String {
    let p =
        Plan::from_json(&format!(r#"{{"model": "{model}", "framework": "megatron", "method": "pretrain"}}"#))
            .unwrap();
    let mut script = emit(&p, "#x").unwrap()[0].text.replace(names[0], "/models/tokenizer");
    for name in &names[1..] {
        script = script.replace(name, "run");
    }
    script.replace(model, "run")
}

/// `script`, of no catalog model's shape, read back as a model of `family` built from its flags;
/// returns the script that plan writes.
fn built_again(script: &str, family: Family) -> String {
    let got = import(script, &Plan::first_visit().to_file()).unwrap();
    assert!(matches!(got.model, ModelOrigin::Built { .. }), "{:?}", got.model);
    let built = Plan::from_file(&got.file).unwrap();
    assert_eq!(built.model.arch.family, family);
    emit(&built, "#x").unwrap()[0].text.clone()
}

/// Qwen3-Next-80B-A3B's Megatron-LM script (`--experimental-attention-variant gated_delta_net`) and
/// MindSpeed-LLM script (`--full-attention-interval`, `--partial-rotary-factor`) are that model
/// from their flags alone; without the Gated DeltaNet flags a script builds another (every layer
/// attention), which is not identified as it. A script of no catalog model with them is built as a
/// Qwen3-Next, every key of the file read, and its launch file says them again.
#[test]
fn gated_deltanet_layers_are_read_from_both_scripts() {
    let current = Plan::first_visit().to_file();
    let script = |framework: &str, hardware: &str| {
        let text = format!(
            r#"{{"model": "qwen3-next-80b-a3b", "framework": "{framework}", "hardware": "{hardware}", "method": "pretrain",
                "cluster": {{"nodes": 8}}, "parallel": {{"pp": 8, "ep": 8}}}}"#
        );
        let text = emit(&Plan::from_json(&text).unwrap(), "#x").unwrap()[0].text.clone();
        text.replace("Qwen/Qwen3-Next-80B-A3B-Instruct", "/models/tokenizer")
            .replace("Qwen3-Next-80B-A3B-Instruct", "run")
            .replace("qwen3-next-80b-a3b", "run")
    };
    let megatron = script("megatron", "h100-sxm-80g");
    let mindspeed = script("mindspeed-llm", "ascend-910b2");
    for text in [&megatron, &mindspeed] {
        let got = import(text, &current).unwrap();
        assert_eq!(got.model, ModelOrigin::Shape("qwen3-next-80b-a3b".into()), "{text}");
    }
    // As written, under the model's own paths, every key of either file is read.
    for (framework, hardware) in [("megatron", "h100-sxm-80g"), ("mindspeed-llm", "ascend-910b2")] {
        let text = format!(
            r#"{{"model": "qwen3-next-80b-a3b", "framework": "{framework}", "hardware": "{hardware}", "method": "pretrain"}}"#
        );
        let written = emit(&Plan::from_json(&text).unwrap(), "#x").unwrap()[0].text.clone();
        let got = import(&written, &current).unwrap();
        assert!(got.unknown.is_empty(), "{framework}: {:?}", got.unknown);
    }
    let without = megatron.replace("--experimental-attention-variant gated_delta_net", "");
    let got = import(&without, &current).unwrap();
    assert_ne!(got.model, ModelOrigin::Shape("qwen3-next-80b-a3b".into()));
    for (text, layers) in [(&megatron, "--num-layers 48"), (&mindspeed, "--num-layers 48")] {
        let got = import(&text.replace(layers, "--num-layers 24"), &current).unwrap();
        assert!(matches!(got.model, ModelOrigin::Built { .. }), "{:?}", got.model);
        let built = Plan::from_file(&got.file).unwrap();
        let catalog = &trainplan_core::catalog::model("qwen3-next-80b-a3b").unwrap().arch;
        assert_eq!(built.model.arch.family, Family::Qwen3Next);
        assert_eq!(built.model.arch.linear_attention, catalog.linear_attention);
        assert_eq!(trainplan_core::model::linear_attention_layers_in(&built.model.arch, 0..24), 18);
        let again = emit(&built, "#x").unwrap()[0].text.clone();
        assert!(again.contains("--linear-num-value-heads 32"), "{again}");
    }
}

/// Qwen3.5's dense language model (its text class's defaults, Qwen3.5-9B's shape), written as a
/// Megatron-LM script, reads back from its flags as a Qwen3.5 text model with the same layers.
#[test]
fn a_dense_gated_deltanet_model_is_built_back_as_qwen3_5() {
    let plan = Plan::from_json(
        r#"{"model": {"hf_config": {"model_type": "qwen3_5", "text_config": {"model_type": "qwen3_5_text"}},
            "name": "Qwen3.5-9B"}, "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2}}"#,
    )
    .unwrap();
    let script = emit(&plan, "#x").unwrap()[0].text.clone();
    assert!(script.contains("--linear-attention-freq 4"), "{script}");
    let got = import(&script, &Plan::first_visit().to_file()).unwrap();
    assert!(matches!(got.model, ModelOrigin::Built { .. }), "{:?}", got.model);
    let built = Plan::from_file(&got.file).unwrap();
    assert_eq!(built.model.arch.family, Family::Qwen35);
    assert_eq!(
        trainplan_core::model::count_params(&built.model.arch),
        trainplan_core::model::count_params(&plan.model.arch)
    );
}

/// A MindSpeed-LLM example script, unchanged (`tests/data/mindspeed-llm/README.md`).
fn mindspeed_llm_script(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mindspeed-llm").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// MindSpeed-LLM's own Phi-3.5-mini script (`examples/mcore/phi35`), imported as a user pastes it,
/// is the catalog's Phi-3.5-mini by its flags, its LongRoPE lists (the script's own variables)
/// included: 3,821,079,552 parameters, the Hub API's count for microsoft/Phi-3.5-mini-instruct, and
/// by hand from the flags (embedding and untied head V·h each with V = 32,064 and h = 3,072; per
/// layer q, k, v, o h·h, gate, up, down h·8,192, two norms h; the final norm h). Every LongRoPE flag
/// is used, and the plan's script writes the lists and the original length again, number for
/// number. The same script with other factors (Phi-3-mini-128k's shape is Phi-3.5-mini's) is another
/// model, built from its flags, which keeps its own.
#[test]
fn mindspeed_llms_phi_3_5_script_keeps_its_longrope() {
    let text = mindspeed_llm_script("pretrain_phi35_mini_A3_ptd.sh");
    let got = import(&text, &Plan::first_visit().to_file()).unwrap();
    assert_eq!(got.model, ModelOrigin::Shape("phi-3.5-mini".into()));
    for flag in ["--rope-scaling-type", "--longrope-freqs-type", "--long-factor", "--short-factor"] {
        assert!(!got.unknown.iter().any(|f| f == flag), "{flag}: {:?}", got.unknown);
    }
    let phi = Plan::from_file(&got.file).unwrap();
    assert_eq!(phi.model.arch.family, Family::Phi3);
    let (v, h, f) = (32_064u64, 3_072u64, 8_192u64);
    let by_hand = 2 * v * h + 32 * (4 * h * h + 3 * h * f + 2 * h) + h;
    assert_eq!(trainplan_core::model::count_params(&phi.model.arch).total(), by_hand);
    assert_eq!(by_hand, 3_821_079_552);
    let numbers = |list: &str| -> Vec<f64> { list.split(',').map(|x| x.parse().unwrap()).collect() };
    let variable = |text: &str, name: &str| {
        let line = text.lines().find(|l| l.starts_with(&format!("{name}="))).unwrap();
        numbers(line.split('"').nth(1).unwrap())
    };
    // The factors the plan's MindSpeed-LLM script writes.
    let written = |plan: &Plan, flag: &str| {
        let script = emit(plan, "#x").unwrap()[0].text.clone();
        let line = script.lines().find(|l| l.contains("--rope-scaling-type longrope")).unwrap().to_owned();
        assert!(
            line.contains("--longrope-freqs-type outer --rope-scaling-original-max-position-embeddings 4096")
        );
        numbers(line.split(flag).nth(1).unwrap().split_whitespace().next().unwrap())
    };
    assert_eq!(written(&phi, "--long-factor "), variable(&text, "LONG_FACTOR"));
    assert_eq!(written(&phi, "--short-factor "), variable(&text, "SHORT_FACTOR"));
    assert_eq!(variable(&text, "LONG_FACTOR").len(), 48);

    let other = text.replace("LONG_FACTOR=\"1.0800000429153442", "LONG_FACTOR=\"1.0700000429153442");
    let got = import(&other, &Plan::first_visit().to_file()).unwrap();
    assert_eq!(got.model, ModelOrigin::Built { name: "phi3.5".into() });
    let built = Plan::from_file(&got.file).unwrap();
    assert_eq!(written(&built, "--long-factor "), variable(&other, "LONG_FACTOR"));
}

/// MindSpeed-LLM's own scripts of models no catalog entry has, imported as a user pastes them.
/// Before, each kept the plan's model (Qwen2.5-7B): Ling 2.0's and Hunyuan's shape (q/k norms,
/// experts with a shared one, dense layers first) was no family's, GLM-5's YaRN was compared on
/// original positions Megatron-LM's flags cannot carry, and its empty layer slots left a stage of
/// none; Gemma 2's GeLU layers were no family's.
#[test]
fn mindspeed_llms_own_scripts_of_models_outside_the_catalog() {
    use trainplan_core::model::{Family, count_params};
    let current = Plan::first_visit().to_file();

    // Ling-mini-2.0 (`bailing_spec`), named by its checkpoint conversion's `--model-type-hf`
    // (its paths are placeholders): built as GLM-4.5's family, with q/k norms, half of each
    // head rotated, one dense layer first and a shared expert of the experts' width. Its count by
    // hand, module by module as the flags build it: embedding and untied head V·h each; per layer
    // q and o h·h, k and v h·512 (4 groups of 128), the q/k norms 128 each, two norms h each; the
    // dense layer's MLP 3·h·5,120; each of the 19 MoE layers a router h·256 (its expert bias a
    // buffer, not a parameter: `TopKRouter`'s `register_buffer('expert_bias', …)`,
    // megatron/core/transformer/moe/router.py), 256 experts of 3·h·512 and the shared one; the
    // final norm h. 16.26 B, 1.43 B active
    // (eight experts, the shared one, attention, embeddings): the model card's "16.26B total,
    // 1.43B activated" (inclusionAI/Ling-mini-2.0).
    let got = import(&mindspeed_llm_script("pretrain_ling_mini_16b_4k_ptd.sh"), &current).unwrap();
    assert_eq!(got.model, ModelOrigin::Built { name: "bailing_mini".into() });
    let ling = Plan::from_file(&got.file).unwrap();
    assert_eq!(ling.model.arch.family, Family::Glm4Moe);
    let (v, h, layers) = (157_184u64, 2_048u64, 20u64);
    let attention = 2 * h * h + 2 * h * 512 + 2 * 128 + 2 * h;
    let router = h * 256;
    let expert = 3 * h * 512;
    let total = 2 * v * h + layers * attention + 3 * h * 5_120 + 19 * (router + 257 * expert) + h;
    let active = 2 * v * h + layers * attention + 3 * h * 5_120 + 19 * (router + 9 * expert) + h;
    let counts = count_params(&ling.model.arch);
    assert_eq!((counts.total(), counts.active), (total, active));
    assert_eq!((total, active), (16_255_638_528, 1_432_968_192));
    assert_eq!(ling.model.arch.n_layers, 20);

    // Hunyuan's (`bailing_spec` too): 64 heads of 128 over a width of 4,096.
    let got = import(&mindspeed_llm_script("pretrain_hunyuan3_299b_4k_A3_ptd.sh"), &current).unwrap();
    assert!(matches!(got.model, ModelOrigin::Built { .. }), "{:?}", got.model);
    let hunyuan = Plan::from_file(&got.file).unwrap();
    assert_eq!(hunyuan.model.arch.family, Family::Glm4Moe);
    let trainplan_core::model::Attention::Gqa { n_heads, n_kv_heads, head_dim, qk_norm, .. } =
        hunyuan.model.arch.attention
    else {
        panic!("{:?}", hunyuan.model.arch.attention)
    };
    assert_eq!((n_heads, n_kv_heads, head_dim, qk_norm), (64, 8, 128, true));

    // GLM-5: DeepSeek-V3.2's layers (MLA), YaRN over 202,752 original positions; 78 layers in 80
    // slots (`--noop-layers 78,79`) over PP 8 × VPP 5, the last virtual stage the head and loss
    // alone. Counted 743.2 B; the card's 744 B holds DSA's indexer too (not counted: its warning).
    let got = import(&mindspeed_llm_script("pretrain_glm5_744b_4k_A3_ptd.sh"), &current).unwrap();
    assert!(matches!(got.model, ModelOrigin::Built { .. }), "{:?}", got.model);
    assert!(!got.unknown.iter().any(|flag| flag == "--noop-layers"), "{:?}", got.unknown);
    let glm5 = Plan::from_file(&got.file).unwrap();
    assert_eq!((glm5.model.arch.family, glm5.model.arch.n_layers), (Family::DeepseekV3, 78));
    assert_eq!((glm5.parallel.pp.get(), glm5.parallel.vpp.get()), (8, 5));
    let layout = &got.file.parallel.pipeline_layout;
    assert!(layout.starts_with("Et*2|t*2|") && layout.ends_with("|t*2|mL"), "{layout}");
    assert_eq!(count_params(&glm5.model.arch).total() / 100_000_000, 7_431);

    // Gemma-2-9B from its layer spec's flags (`--gelu-tanh`, `--post-norm`, the window on every
    // other layer): the catalog's, 8,324,201,984 parameters beside the embedding, the Gemma 2
    // report's (Gemma Team 2024, arXiv 2408.00118, Table 1), and its tied embedding 256,000 × 3,584.
    // The plan writes the same layers back, and no rule says MindSpeed-LLM trains another model.
    let text = mindspeed_llm_script("pretrain_gemma2_9b_ptd.sh");
    let got = import(&text, &current).unwrap();
    assert_eq!(got.model, ModelOrigin::Shape("gemma-2-9b".into()));
    let gemma = Plan::from_file(&got.file).unwrap();
    assert_eq!(gemma.model.arch.family, Family::Gemma2);
    assert_eq!(count_params(&gemma.model.arch).total(), 8_324_201_984 + 256_000 * 3_584);
    let window = gemma.model.arch.sliding_window.unwrap();
    assert_eq!((window.size, window.full_every), (4_096, 2));
    let script = emit(&gemma, "#x").unwrap()[0].text.clone();
    for flags in [
        "--spec mindspeed_llm.tasks.models.spec.gemma2_spec layer_spec",
        "--gelu-tanh --post-norm --add-rmsnorm-offset --input-embeds-norm",
        "--query-pre-attn-scalar 256",
        "--output-logit-softcapping 30.0",
        "--interleave-sliding-window 4096",
    ] {
        assert!(script.contains(flags), "{flags}: {script}");
    }
    assert!(!script.contains("--swiglu"));
    let refused = crate::flags::check_script(trainplan_core::emit::flags::Table::MindSpeedLlm, &script);
    assert_eq!(refused.unwrap(), []);
    let report = trainplan_core::evaluate(&gemma);
    let codes: Vec<_> = report.findings.iter().map(|f| f.code).collect();
    assert!(!codes.contains(&trainplan_core::report::Code::ModelGemmaMegatron), "{codes:?}");
    assert!(!codes.contains(&trainplan_core::report::Code::ModelPostNormsMegatron), "{codes:?}");

    // PLM's squared-ReLU MLP is no family's here: the plan's model is kept, and the flag named.
    let got = import(&mindspeed_llm_script("pretrain_plm_1point8b_ptd.sh"), &current).unwrap();
    assert_eq!(got.model, ModelOrigin::Unbuilt(vec!["--squared-relu".to_owned()]));
    assert_eq!(got.file.model, current.model);
}
