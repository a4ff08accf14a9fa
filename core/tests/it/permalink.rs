//! The permalink: exact round trip over random plans, clear refusals of bad links.

use proptest::prelude::*;
use trainplan_core::permalink::{self, PermalinkError};
use trainplan_core::plan::{
    AttentionImpl, Framework, Method, Plan, Precision, RecomputeGranularity, RecomputeMethod,
};
use trainplan_core::{catalog, hardware};

pub(crate) fn plan_strategy() -> impl Strategy<Value = Plan> {
    let models: Vec<&str> = catalog::models().iter().map(|m| m.id).collect();
    let devices: Vec<String> = hardware::devices().into_iter().map(|d| d.id).collect();
    (
        (
            prop::sample::select(models),
            prop::sample::select(devices),
            1..=4096_u32,
            prop::option::of(1..=64_u32),
        ),
        (prop::sample::select(Framework::ALL.to_vec()), prop::sample::select(Method::ALL.to_vec())),
        (1..=64_u32, 1..=64_u32, 1..=8_u32, 1..=16_u32, 1..=256_u32, 0..=3_u8, any::<[bool; 6]>()),
        (
            prop::sample::select(RecomputeGranularity::ALL.to_vec()),
            prop::sample::select(RecomputeMethod::ALL.to_vec()),
            1..=100_u32,
        ),
        (1..=64_u32, 1..=1_000_000_u32, 1..=1_048_576_u32),
        (
            prop::sample::select(Precision::ALL.to_vec()),
            prop::sample::select(AttentionImpl::ALL.to_vec()),
            any::<[bool; 2]>(),
        ),
        (
            1..=1024_u32,
            0..=4096_u32,
            prop::sample::subsequence(
                vec!["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
                0..=7,
            ),
            any::<bool>(),
            prop::sample::select(vec![0.0_f64, 0.05, 0.1, 0.9]),
        ),
        (1..=16_u32, 1..=64_u32, 1..=32_768_u32, 1..=32_768_u32, 0.01..=1.0_f64, 1..=1024_u32),
    )
        .prop_map(|(m, fw, par, rc, batch, prec, lora, rl)| {
            let (model, hw, nodes, dpn) = m;
            let (tp, pp, vpp, cp, ep, zero, flags) = par;
            let targets = match lora.2.is_empty() {
                true => serde_json::json!("all"),
                false => serde_json::json!(lora.2),
            };
            let mut file = serde_json::json!({
                "model": model, "hardware": hw, "cluster": {"nodes": nodes},
                "framework": fw.0.wire(), "method": fw.1.wire(),
                "parallel": {"tp": tp, "pp": pp, "vpp": vpp, "cp": cp, "ep": ep, "etp": 1, "zero_stage": zero,
                    "sequence_parallel": flags[0], "distributed_optimizer": flags[1],
                    "offload_optimizer": flags[2], "offload_params": flags[3],
                    "cp_algo": if flags[4] { "alltoall" } else { "ring" },
                    "offload_device": if flags[5] { "nvme" } else { "cpu" }},
                "recompute": {"granularity": rc.0.wire(), "method": rc.1.wire(), "num_layers": rc.2},
                "batch": {"micro_batch": batch.0, "global_batch": batch.1, "seq_len": batch.2},
                "precision": prec.0.wire(), "attention": prec.1.wire(), "liger_kernel": prec.2[0],
                "pure_bf16": prec.2[1],
                "lora": {"rank": lora.0, "alpha": lora.1, "targets": targets, "dora": lora.3, "dropout": lora.4},
                "rl": {"rollout_tp": rl.0, "n_samples_per_prompt": rl.1, "max_prompt_length": rl.2,
                    "max_response_length": rl.3, "gpu_memory_utilization": rl.4, "max_num_seqs": rl.5},
            });
            if let Some(dpn) = dpn {
                file["cluster"]["devices_per_node"] = dpn.into();
            }
            Plan::from_json(&file.to_string()).expect("generated plans are valid")
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn decode_encode_is_the_identity(plan in plan_strategy()) {
        let link = permalink::encode(&plan);
        prop_assert!(link.starts_with("v1="));
        prop_assert!(link.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'='));
        prop_assert_eq!(permalink::decode(&link).unwrap(), plan.clone());
        prop_assert_eq!(permalink::decode(&format!("#{link}")).unwrap(), plan);
    }

    /// A plan with up to four pins reads back exactly, pins in order; a damaged link with pins is
    /// refused or read, never a panic.
    #[test]
    fn a_plan_and_its_pins_round_trip(
        plan in plan_strategy(),
        pins in prop::collection::vec(plan_strategy(), 0..=4),
        cut in 0..4000_usize,
    ) {
        let link = permalink::encode_link(&plan, &pins);
        prop_assert_eq!(link.matches("&pin=").count(), pins.len());
        let back = permalink::decode_link(&link).unwrap();
        prop_assert_eq!(back.plan, plan);
        prop_assert_eq!(back.pins, pins);
        let _ = permalink::decode_link(&link[..cut.min(link.len())]);
    }

    /// Damaged links: a refusal, never a panic.
    #[test]
    fn damaged_links_are_refused(plan in plan_strategy(), cut in 0..200_usize, flip in 0..200_usize) {
        let link = permalink::encode(&plan);
        let _ = permalink::decode(&link[..cut.min(link.len())]);
        let mut bytes = link.into_bytes();
        let idx = 3 + flip % (bytes.len() - 3);
        bytes[idx] = if bytes[idx] == b'A' { b'B' } else { b'A' };
        let _ = permalink::decode(&String::from_utf8(bytes).unwrap());
    }
}

#[test]
fn a_full_plan_with_an_imported_config_round_trips() {
    let config = catalog::CONFIGS.iter().find(|c| c.id == "deepseek-v3").unwrap().config;
    let text = format!(
        r#"{{"model": {{"hf_config": {config}, "name": "my-v3"}}, "hardware": {{"custom": {{"name": "lab card",
        "memory_gb": 96, "bf16_tflops": 400.5, "memory_tb_per_s": 1.6, "intra_node_gb_per_s": 392,
        "inter_node_gbit_per_s": 200, "devices_per_node": 16, "vendor": "ascend"}}}},
        "cluster": {{"nodes": 32}}, "framework": "mindspeed-llm", "method": "pretrain",
        "parallel": {{"tp": 8, "pp": 8, "vpp": 2, "ep": 32, "distributed_optimizer": true}}}}"#
    );
    let plan = Plan::from_json(&text).unwrap();
    let link = permalink::encode(&plan);
    assert_eq!(permalink::decode(&link).unwrap(), plan);
    // Deflate keeps even a plan carrying a whole config well inside any URL limit.
    assert!(link.len() < 1200, "{} characters", link.len());
    // The default plan is a short link.
    assert!(permalink::encode(&Plan::first_visit()).len() < 40);
}

#[test]
fn bad_links_say_why() {
    assert_eq!(permalink::decode(""), Err(PermalinkError::NotAPermalink));
    assert_eq!(permalink::decode("#section-2"), Err(PermalinkError::NotAPermalink));
    assert_eq!(permalink::decode("v2=abc"), Err(PermalinkError::NewerVersion("v2".to_owned())));
    assert!(matches!(permalink::decode("v1=***"), Err(PermalinkError::Corrupt(_))));
    assert!(matches!(permalink::decode("v1=AAAA"), Err(PermalinkError::Corrupt(_))));
    // Valid deflate of something that is not a plan.
    let not_a_plan = {
        use base64::Engine;
        let deflated = miniz_oxide::deflate::compress_to_vec(br#"{"model": "gpt-9"}"#, 6);
        format!("v1={}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(deflated))
    };
    assert!(matches!(permalink::decode(&not_a_plan), Err(PermalinkError::Plan(_))));
    // A decompression bomb is cut off.
    let bomb = {
        use base64::Engine;
        let deflated = miniz_oxide::deflate::compress_to_vec(&vec![b' '; 8 << 20], 10);
        format!("v1={}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(deflated))
    };
    assert!(matches!(permalink::decode(&bomb), Err(PermalinkError::Corrupt(_))));
}

/// This release's knobs travel in a link: the pipeline layout string and MTP layers, the `moe`
/// section, the recompute modules and activation offloading, MindSpeed's fused kernels, the
/// context-parallel algorithm.
#[test]
fn the_layout_moe_and_recompute_knobs_round_trip() {
    for text in [
        r#"{"model": "deepseek-v3", "cluster": {"nodes": 256}, "framework": "megatron", "method": "pretrain",
            "mtp_layers": 1, "precision": "fp8", "parallel": {"pp": 16, "vpp": 2, "ep": 64,
            "pipeline_layout": "Et|(tt|)*30mL", "distributed_optimizer": true},
            "recompute": {"granularity": "selective", "modules": ["layernorm", "mla_up_proj", "moe_act"]},
            "moe": {"dispatcher": "flex", "permute_fusion": true, "overlap_ep_comm": true, "imbalance": 1.1}}"#,
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain",
            "recompute": {"granularity": "none", "cpu_offload_layers": 8}}"#,
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "sft-full",
            "parallel": {"tp": 4, "fused_kernels": false}}"#,
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain",
            "parallel": {"cp": 4, "cp_algo": "alltoall"}, "batch": {"seq_len": 32768}}"#,
        // ZeRO-Infinity with the node's NVMe figures off their defaults.
        r#"{"model": "qwen2.5-14b", "framework": "deepspeed", "method": "sft-full",
            "cluster": {"nvme_read_gb_per_s": 27.5, "nvme_write_gb_per_s": 11},
            "parallel": {"zero_stage": 3, "offload_optimizer": true, "offload_device": "nvme"}}"#,
    ] {
        let plan = Plan::from_json(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let back = permalink::decode(&permalink::encode(&plan)).unwrap();
        assert_eq!(back, plan, "{text}");
    }
}
