//! The reverse import: a launch file read back onto a plan. Emit → import gives the plan back for
//! every setting the file carries, over the golden plans and a generated set; unknown keys are listed.

use proptest::prelude::*;
use trainplan_core::emit::import::{ConfigKind, import};
use trainplan_core::emit::{FileKind, emit};
use trainplan_core::plan::{Framework, Plan, PlanFile};

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
            assert_eq!((b.tp, b.pp, b.vpp, b.cp), (o.tp, o.pp, o.vpp, o.cp), "{kind:?}");
            assert_eq!(
                (b.sequence_parallel, b.distributed_optimizer),
                (o.sequence_parallel, o.distributed_optimizer)
            );
            assert_eq!(
                (b.overlap_grad_reduce, b.overlap_param_gather, b.tp_comm_overlap),
                (o.overlap_grad_reduce, o.overlap_param_gather, o.tp_comm_overlap)
            );
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
                (b.zero_stage, b.offload_optimizer, b.offload_params),
                (o.zero_stage, o.offload_optimizer, o.offload_params)
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
            assert_eq!(b.zero_stage, o.zero_stage);
            assert_eq!(back.batch, original.batch);
            assert_eq!(back.recompute.granularity, original.recompute.granularity);
            assert_eq!(back.lora.rank, original.lora.rank);
            assert_eq!(back.precision, original.precision);
            if original.recompute.granularity != trainplan_core::plan::RecomputeGranularity::None {
                assert_eq!(back.recompute.layers_ratio, original.recompute.layers_ratio);
            }
        }
        ConfigKind::MindSpeedRl => {
            assert_eq!(back.method, original.method);
            assert_eq!((b.tp, b.pp, b.cp), (o.tp, o.pp, o.cp));
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
                let engine =
                    (r.rollout_tp, r.enforce_eager, r.model_len(), r.batched_tokens(), r.max_num_seqs);
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
            assert_eq!(
                (b.cp, b.offload_optimizer, b.offload_params),
                (o.cp, o.offload_optimizer, o.offload_params)
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
            // Every seed-000 VeRL knob: mini-batch, dynamic batch and its token budget, padding
            // removal, and the vLLM engine's settings, autos included.
            // An explicit value equal to the auto one reads back as auto: compare what is in effect.
            let effective = |f: &PlanFile| {
                let plan = Plan::from_file(f).unwrap();
                let (r, g) = (&plan.rl, plan.batch.global_batch.get());
                let budget = r.tokens_per_device(plan.framework, plan.parallel.cp.get());
                let engine = (r.enforce_eager, r.model_len(), r.batched_tokens(), r.max_num_seqs);
                (r.mini_batch_prompts(g), r.dynamic_batch, budget, r.remove_padding, engine)
            };
            assert_eq!(effective(back), effective(original));
        }
    }
}

#[test]
fn emitted_files_import_back_to_their_plan() {
    let plans = [
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
        r#"{"model": "qwen2.5-72b", "cluster": {"nodes": 2}, "framework": "llamafactory", "method": "sft-full",
            "parallel": {"zero_stage": 3, "offload_optimizer": true}, "recompute": {"granularity": "none"},
            "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3, "cp": 2},
            "rl": {"rollout_tp": 2, "n_samples_per_prompt": 8}, "batch": {"micro_batch": 16, "global_batch": 512}}"#,
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
    ) {
        let tp = [1, 2, 4, 8][tp];
        let pp = [1, 2, 4][pp];
        let vpp = if vpp2 && 1 < pp { 2 } else { 1 };
        let (framework, hardware) = if ascend { ("mindspeed-llm", "ascend-910b2") } else { ("megatron", "h100-sxm-80g") };
        let granularity = ["none", "selective", "full"][recompute];
        // MindSpeed's own knobs: swap-optimizer and activation-function recompute over 0 (= all) to 3 layers.
        let swap_opt = ascend && swap_opt;
        let act = if ascend && 0 < act_fn { format!(r#", "activation_function": true, "activation_function_layers": {}"#, act_fn - 1) } else { String::new() };
        let text = format!(
            r#"{{"model": "llama-3-8b", "hardware": "{hardware}", "cluster": {{"nodes": 2}}, "framework": "{framework}",
                "method": "pretrain", "parallel": {{"tp": {tp}, "pp": {pp}, "vpp": {vpp}, "sequence_parallel": {sp},
                "distributed_optimizer": {dist}, "overlap_grad_reduce": {overlap}, "swap_optimizer": {swap_opt}}},
                "recompute": {{"granularity": "{granularity}"{act}}},
                "batch": {{"micro_batch": {micro}, "global_batch": {}, "seq_len": {seq}}}}}"#,
            micro * gbs_mult * 16
        );
        let plan = Plan::from_json(&text).unwrap();
        let (original, back, kind) = round_trip(&plan);
        assert_carried(&original, &back, kind);
    }

    /// Random ZeRO, offload, batch and precision survive DeepSpeed and LLaMA-Factory emit → import.
    #[test]
    fn hf_family_round_trips(
        lf in any::<bool>(), zero in 0u8..4, offload in any::<bool>(), micro in 1u32..5, gas in 1u32..5,
        checkpointing in any::<bool>(), fp16 in any::<bool>(), ratio in prop::sample::select(vec![0.25f64, 0.5, 1.0]),
    ) {
        let offload = offload && 1 <= zero;
        let framework = if lf { "llamafactory" } else { "deepspeed" };
        let method = if lf { "lora" } else { "sft-full" };
        let precision = if fp16 { "fp16" } else { "bf16" };
        let granularity = if checkpointing { "full" } else { "none" };
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "{method}", "precision": "{precision}",
                "parallel": {{"zero_stage": {zero}, "offload_optimizer": {offload}}},
                "recompute": {{"granularity": "{granularity}", "layers_ratio": {ratio}}},
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
    ) {
        let method = if ppo { "ppo" } else { "grpo" };
        let mini = [0, 64, 128][mini_div as usize];
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "{method}", "parallel": {{"zero_stage": 3, "cp": {cp}}},
                "batch": {{"micro_batch": 2, "global_batch": 256}},
                "rl": {{"n_samples_per_prompt": {n}, "mini_batch": {mini}, "dynamic_batch": {dynamic},
                "max_tokens_per_device": {budget}, "remove_padding": {padding}, "enforce_eager": {eager},
                "max_model_len": {model_len}, "max_num_batched_tokens": {batched}}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        let (original, back, kind) = round_trip(&plan);
        assert_carried(&original, &back, kind);
    }
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
    ) {
        let method = if ppo { "ppo" } else { "grpo" };
        let granularity = ["none", "selective", "full"][recompute];
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "cluster": {{"nodes": 2}}, "framework": "mindspeed-rl",
                "method": "{method}", "parallel": {{"tp": {tp}, "pp": {pp}, "distributed_optimizer": true,
                "swap_optimizer": {swap}, "tp_comm_overlap": {coc}}}, "recompute": {{"granularity": "{granularity}"}},
                "batch": {{"micro_batch": 2, "global_batch": 128}},
                "rl": {{"rollout_tp": {rollout_tp}, "n_samples_per_prompt": {n}, "mini_batch": {mini}, "dynamic_batch": {dynamic},
                "max_tokens_per_device": {budget}, "remove_padding": {padding}, "enforce_eager": {eager}, "blocking": {blocking},
                "max_model_len": {model_len}, "max_num_batched_tokens": {batched}}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        let (original, back, kind) = round_trip(&plan);
        prop_assert_eq!(kind, ConfigKind::MindSpeedRl);
        assert_carried(&original, &back, kind);
    }
}
