//! Reading plan files: defaults, round trip and clear errors.

use trainplan_core::plan::{
    Allowed, Framework, HardwareSpec, LoraTargets, Method, ModelSpec, PLAN_FILE_VERSION, Plan, PlanFileError,
    Precision,
};
use trainplan_core::{evaluate, model::LoraTarget};

#[track_caller]
fn check_err(text: &str, expected: &PlanFileError) {
    match Plan::from_json(text) {
        Ok(plan) => panic!("{text} was accepted as {plan:?}"),
        Err(err) => assert_eq!(&err, expected, "{text}"),
    }
}

#[test]
fn a_minimal_plan_names_only_the_model_and_gets_the_documented_defaults() {
    let plan = Plan::from_json(r#"{"model": "llama-3-8b"}"#).unwrap();
    assert_eq!(plan.model.spec, ModelSpec::Catalog("llama-3-8b".to_owned()));
    assert_eq!(plan.hardware.spec, HardwareSpec::Catalog("h100-sxm-80g".to_owned()));
    assert_eq!(plan.cluster.n_devices(), 8);
    assert_eq!(plan.framework, Framework::LlamaFactory);
    assert_eq!(plan.method, Method::Lora);
    assert_eq!(plan.precision, Precision::Bf16);
    assert_eq!(plan.lora.targets, LoraTargets::All);
    assert_eq!(
        (plan.batch.micro_batch.get(), plan.batch.global_batch.get(), plan.batch.seq_len.get()),
        (1, 64, 4096)
    );
    // The first visit is the minimal plan of Qwen2.5-7B.
    assert_eq!(Plan::first_visit(), Plan::from_json(r#"{"model": "qwen2.5-7b"}"#).unwrap());
}

#[test]
fn devices_per_node_defaults_to_the_hardware() {
    // Ascend 910C nodes hold 16 dies (MindSpeed A3 scripts: NPUS_PER_NODE=16).
    let plan =
        Plan::from_json(r#"{"model": "qwen2.5-7b", "hardware": "ascend-910c", "cluster": {"nodes": 2}}"#)
            .unwrap();
    assert_eq!(plan.cluster.n_devices(), 32);
    let file = plan.to_file();
    assert_eq!(file.cluster.devices_per_node, None, "the default is not written back");
    assert_eq!(Plan::from_file(&file).unwrap(), plan);
}

#[test]
fn every_field_round_trips_through_the_file() {
    let text = r#"{"version": 1, "model": "qwen3-30b-a3b", "hardware": "ascend-910b2",
      "cluster": {"nodes": 4, "devices_per_node": 8}, "framework": "mindspeed-llm", "method": "sft-full",
      "parallel": {"tp": 2, "pp": 2, "vpp": 3, "cp": 2, "cp_algo": "alltoall", "ep": 4, "etp": 1, "sequence_parallel": true,
        "zero_stage": 1, "distributed_optimizer": true, "offload_optimizer": false, "offload_params": false},
      "recompute": {"granularity": "selective", "method": "block", "num_layers": 4},
      "batch": {"micro_batch": 2, "global_batch": 512, "seq_len": 8192, "mean_seq_len": 1000}, "precision": "bf16",
      "attention": "sdpa", "lora": {"rank": 64, "alpha": 128, "targets": ["v_proj", "q_proj", "q_proj"]},
      "rl": {"rollout_tp": 4, "n_samples_per_prompt": 16, "max_prompt_length": 2048,
        "max_response_length": 8192, "mean_prompt_length": 300, "mean_response_length": 2000,
        "gpu_memory_utilization": 0.55, "max_num_seqs": 128}}"#;
    let plan = Plan::from_json(text).unwrap();
    assert_eq!(plan.lora.targets, LoraTargets::Only(vec![LoraTarget::Q, LoraTarget::V]));
    let again = serde_json::to_string(&plan.to_file()).unwrap();
    assert_eq!(Plan::from_json(&again).unwrap(), plan);
    assert!(again.contains(r#""cp_algo":"alltoall""#), "{again}");
    assert!(
        again.contains(r#""mean_seq_len":1000"#) && again.contains(r#""mean_response_length":2000"#),
        "{again}"
    );
}

/// The context-parallel algorithm is ring when the file leaves it out, and a ring plan's file
/// leaves it out again, so files written before the setting existed read and write as before.
#[test]
fn the_context_parallel_algorithm_defaults_to_ring_and_is_left_out_when_ring() {
    use trainplan_core::plan::CpAlgo;
    let plan = Plan::from_json(r#"{"model": "llama-3.1-8b", "parallel": {"cp": 2}}"#).unwrap();
    assert_eq!(plan.parallel.cp_algo, CpAlgo::Ring);
    let text = serde_json::to_string(&plan.to_file()).unwrap();
    assert!(!text.contains("cp_algo"), "{text}");
    let all_to_all =
        Plan::from_json(r#"{"model": "llama-3.1-8b", "parallel": {"cp": 2, "cp_algo": "alltoall"}}"#)
            .unwrap();
    assert_eq!(all_to_all.parallel.cp_algo, CpAlgo::AllToAll);
}

#[test]
fn lora_and_full_methods_train_what_they_should() {
    let lora = evaluate(&Plan::from_json(r#"{"model": "qwen2.5-3b", "lora": {"rank": 8}}"#).unwrap());
    assert_eq!(lora.params.trainable, 14_966_784);
    let full = evaluate(&Plan::from_json(r#"{"model": "qwen2.5-3b", "method": "sft-full"}"#).unwrap());
    assert_eq!(full.params.trainable, full.params.total);
    let qv = evaluate(
        &Plan::from_json(r#"{"model": "llama-2-7b", "lora": {"targets": "q_proj,v_proj"}}"#).unwrap(),
    );
    assert_eq!(qv.params.trainable, 4_194_304);
}

#[test]
fn all_is_accepted_wherever_a_list_of_lora_targets_is() {
    let targets = |field: &str| {
        let text = format!(r#"{{"model": "llama-2-7b", "lora": {{"targets": {field}}}}}"#);
        Plan::from_json(&text).unwrap_or_else(|e| panic!("{text}: {e}")).lora.targets
    };
    for field in [r#""all""#, r#"["all"]"#, r#"["q_proj", "all"]"#, r#""all,v_proj""#, r#"" q_proj, all ""#] {
        assert_eq!(targets(field), LoraTargets::All, "{field}");
    }
    assert_eq!(targets(r#"["v_proj", "q_proj"]"#), LoraTargets::Only(vec![LoraTarget::Q, LoraTarget::V]));
    // A list holding "all" is written back as the word, and reads the same again.
    let plan = Plan::from_json(r#"{"model": "llama-2-7b", "lora": {"targets": ["all", "q_proj"]}}"#).unwrap();
    assert_eq!(Plan::from_file(&plan.to_file()).unwrap(), plan);
    assert_eq!(plan, Plan::from_json(r#"{"model": "llama-2-7b"}"#).unwrap());
    // A misspelt module beside "all" is still refused.
    check_err(
        r#"{"model": "llama-2-7b", "lora": {"targets": ["all", "q_prj"]}}"#,
        &PlanFileError::UnknownLoraTarget("q_prj".to_owned()),
    );
}

#[test]
fn bad_plans_are_refused_with_a_reason() {
    check_err(r#"{"model": "gpt-5"}"#, &PlanFileError::UnknownModel("gpt-5".to_owned()));
    check_err(
        r#"{"model": "gpt2", "hardware": "tpu-v9"}"#,
        &PlanFileError::UnknownHardware("tpu-v9".to_owned()),
    );
    use trainplan_core::field::Field;
    let zero = |field, max: f64| PlanFileError::OutOfRange { field, expected: Allowed::between(1.0, max) };
    check_err(r#"{"model": "llama-2-7b", "cluster": {"nodes": 0}}"#, &zero(Field::ClusterNodes, 65_536.0));
    check_err(
        r#"{"model": "llama-2-7b", "cluster": {"devices_per_node": 0}}"#,
        &zero(Field::ClusterDevicesPerNode, 1_024.0),
    );
    check_err(r#"{"model": "llama-2-7b", "parallel": {"tp": 0}}"#, &zero(Field::ParallelTp, 65_536.0));
    check_err(r#"{"model": "llama-2-7b", "batch": {"seq_len": 0}}"#, &zero(Field::BatchSeqLen, 16_777_216.0));
    check_err(
        r#"{"model": "llama-2-7b", "parallel": {"zero_stage": 4}}"#,
        &PlanFileError::OutOfRange { field: Field::ParallelZeroStage, expected: Allowed::ZeroStage },
    );
    check_err(
        r#"{"model": "llama-2-7b", "rl": {"gpu_memory_utilization": 1.5}}"#,
        &PlanFileError::OutOfRange {
            field: Field::RlGpuMemoryUtilization,
            expected: Allowed::AboveZeroAtMost { max: 1.0 },
        },
    );
    let nvme =
        |field| PlanFileError::OutOfRange { field, expected: Allowed::AboveZeroAtMost { max: 1000.0 } };
    check_err(
        r#"{"model": "llama-2-7b", "cluster": {"nvme_read_gb_per_s": 0}}"#,
        &nvme(Field::ClusterNvmeReadGbPerS),
    );
    check_err(
        r#"{"model": "llama-2-7b", "cluster": {"nvme_write_gb_per_s": -5}}"#,
        &nvme(Field::ClusterNvmeWriteGbPerS),
    );
    check_err(
        r#"{"model": "llama-2-7b", "cluster": {"nvme_read_gb_per_s": 1e9}}"#,
        &nvme(Field::ClusterNvmeReadGbPerS),
    );
    check_err(
        r#"{"model": "llama-2-7b", "lora": {"targets": ["q_proj", "lm_head"]}}"#,
        &PlanFileError::UnknownLoraTarget("lm_head".to_owned()),
    );
    check_err(
        &format!(r#"{{"version": {}, "model": "llama-2-7b"}}"#, PLAN_FILE_VERSION + 1),
        &PlanFileError::UnsupportedVersion(PLAN_FILE_VERSION + 1),
    );
    assert!(matches!(
        Plan::from_json(r#"{"model": {"hf_config": {"model_type": "my_decoder"}}}"#),
        Err(PlanFileError::Config(trainplan_core::hf::ConfigError::Missing("hidden_size")))
    ));
    let custom = |extra: &str| {
        format!(
            r#"{{"model": "gpt2", "hardware": {{"custom": {{"memory_gb": 80, "bf16_tflops": 900, "memory_tb_per_s": 3,
            "intra_node_gb_per_s": 900, "inter_node_gbit_per_s": 400{extra}}}}}}}"#
        )
    };
    assert!(Plan::from_json(&custom("")).is_ok());
    assert!(matches!(
        Plan::from_json(&custom(r#", "vendor": "amd""#)),
        Err(PlanFileError::OutOfRange { field: Field::HardwareCustomVendor, .. })
    ));
    assert!(matches!(
        Plan::from_json(&custom(r#", "fp8_tflops": -1"#)),
        Err(PlanFileError::OutOfRange { field: Field::HardwareCustomFp8Tflops, .. })
    ));
    for text in [
        "",
        "[]",
        "{}",
        r#"{"model": 7}"#,
        r#"{"model": "llama-2-7b", "cluster": {"nodes": -1}}"#,
        r#"{"model": "llama-2-7b", "cluster": {"nodes": 1.5}}"#,
        r#"{"model": "llama-2-7b", "cluster": {"nodes": 99999999999}}"#,
        r#"{"model": "llama-2-7b", "colour": "blue"}"#,
        r#"{"model": "llama-2-7b", "framework": "jax"}"#,
        r#"{"model": "llama-2-7b", "precision": "fp4"}"#,
        r#"{"model": "llama-2-7b", "parallel": {"cp_algo": "a2a"}}"#,
    ] {
        match Plan::from_json(text) {
            Err(PlanFileError::Json(msg)) => assert!(!msg.is_empty()),
            other => panic!("{text:?} gave {other:?}"),
        }
    }
    // A name a choice does not have is named, with every name it has, in serde's own words.
    let Err(PlanFileError::Json(msg)) =
        Plan::from_json(r#"{"model": "llama-2-7b", "parallel": {"cp_algo": "a2a"}}"#)
    else {
        panic!("a2a accepted")
    };
    assert!(msg.starts_with("unknown variant `a2a`, expected `ring` or `alltoall`"), "{msg}");
    let Err(PlanFileError::Json(msg)) = Plan::from_json(r#"{"model": "llama-2-7b", "framework": 3}"#) else {
        panic!("a number accepted as a framework")
    };
    assert!(msg.starts_with("invalid type: integer `3`, expected a string"), "{msg}");
}

#[test]
fn the_largest_cluster_still_evaluates() {
    let text = r#"{"model": "llama-2-13b", "cluster": {"nodes": 65536, "devices_per_node": 1024}}"#;
    let report = evaluate(&Plan::from_json(text).unwrap());
    assert_eq!(report.n_devices, 65_536 * 1_024);
    assert!(0 < report.memory.zero3_bf16_weight_bytes_per_device);
}

#[test]
fn counts_beyond_their_limits_are_refused_with_the_limit_named() {
    // (field path, the largest accepted, its message)
    for (path, max, words) in [
        ("cluster.nodes", 65_536_u64, "from 1 to 65536"),
        ("cluster.devices_per_node", 1_024, "from 1 to 1024"),
        ("parallel.tp", 65_536, "from 1 to 65536"),
        ("batch.seq_len", 1 << 24, "from 1 to 16777216"),
        ("rl.n_samples_per_prompt", 1_024, "from 1 to 1024"),
        ("rl.max_model_len", 1 << 24, "from 0 to 16777216"),
        ("recompute.activation_function_layers", 65_536, "from 0 to 65536"),
    ] {
        let (section, key) = path.split_once('.').unwrap();
        let text = |n: u64| format!(r#"{{"model": "gpt2", "{section}": {{"{key}": {n}}}}}"#);
        assert!(trainplan_core::Plan::from_json(&text(max)).is_ok(), "{path} = {max}");
        let err = trainplan_core::Plan::from_json(&text(max + 1)).unwrap_err();
        assert_eq!(err.to_string(), format!("{path} must be {words}"));
    }
}

/// A ZeRO stage is 0 to 3, each sharding what the one below does and one state more (Rajbhandari
/// et al. 2020 §5: P_os, P_os+g, P_os+g+p); a plan file's 4 is refused with the range.
#[test]
fn a_zero_stage_is_zero_to_three_and_each_shards_more() {
    use trainplan_core::plan::ZeroStage;
    assert_eq!(ZeroStage::ALL.map(ZeroStage::get), [0, 1, 2, 3]);
    assert_eq!(ZeroStage::new(4), None);
    let shards = ZeroStage::ALL.map(|z| (z.shards_optimizer(), z.shards_gradients(), z.shards_params()));
    assert_eq!(
        shards,
        [(false, false, false), (true, false, false), (true, true, false), (true, true, true)]
    );
    // Each stage the next one up and down the ladder of a framework that has them all.
    use trainplan_core::choices::{zero_above, zero_below};
    use trainplan_core::plan::Framework;
    assert!(ZeroStage::ALL.windows(2).all(|w| w[0] < w[1]
        && zero_above(Framework::DeepSpeed, w[0]) == Some(w[1])
        && zero_below(Framework::DeepSpeed, w[1]) == Some(w[0])));
    assert_eq!(
        (
            zero_above(Framework::DeepSpeed, ZeroStage::THREE),
            zero_below(Framework::DeepSpeed, ZeroStage::NONE)
        ),
        (None, None)
    );
    let err = Plan::from_json(r#"{"model": "qwen2.5-7b", "parallel": {"zero_stage": 4}}"#).unwrap_err();
    assert!(err.to_string().contains("parallel.zero_stage"), "{err}");
}
