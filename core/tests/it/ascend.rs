//! Step time on Ascend against public runs: Pangu Ultra (Yin et al. 2025, "Pangu Ultra: Pushing
//! the Limits of Dense Large Language Models on Ascend NPUs", arXiv 2504.07866, report in
//! pangu-tech/pangu-ultra `pangu-ultra-report.pdf`), MindSpeed's measured fused-kernel gains, and
//! the HCCS full mesh of an Atlas 800T A2 node. docs/time.md "Ascend" explains each term.

use trainplan_core::evaluate;
use trainplan_core::hardware;
use trainplan_core::plan::Plan;
use trainplan_core::time;

/// Pangu Ultra as §2 of the report gives it: 94 layers, hidden 12,288, SwiGLU FFN 28,672, GQA
/// with 96 query and 8 KV heads, vocabulary 153,376 (§2.3), untied output layer (assumed; the
/// report does not say). §4: 8,192 NPUs in nodes of 8 (HCCS full mesh, 64 GB each, 200 Gb/s RoCE),
/// TP 8 with sequence parallelism, PP 8, 6 virtual stages, DP 128 with ZeRO (Megatron's
/// distributed optimizer), on MindSpeed and Megatron. §3.1.3: 4K sequences, batch 2,048 for most
/// of pre-training; micro-batch 1 (assumed: it gives 16 micro-batches per pipeline, which is the
/// report's own 1F1B bubble of 30.45 % = 7 / (7 + 16)). The report names no chip bin: 910B2 (the
/// 376-TFLOPS bin of the 910C's dies) is assumed. 94 layers split over 8 × 6 chunks only with
/// the embedding and the loss counted as layers (96 = 8 × 6 × 2), assumed so. No recomputation
/// is stated; none assumed. Gradient reduction and parameter gather overlap (MindSpeed-LLM's
/// example scripts; assumed).
fn pangu_ultra(fused_kernels: bool, tp_overlap: bool) -> Plan {
    let text = format!(
        r#"{{"model": {{"hf_config": {{"model_type": "llama", "vocab_size": 153376, "hidden_size": 12288,
              "intermediate_size": 28672, "num_hidden_layers": 94, "num_attention_heads": 96,
              "num_key_value_heads": 8, "max_position_embeddings": 4096, "tie_word_embeddings": false}},
              "name": "pangu-ultra-135b"}},
            "hardware": "ascend-910b2", "cluster": {{"nodes": 1024}},
            "framework": "mindspeed-llm", "method": "pretrain", "precision": "bf16", "attention": "flash",
            "parallel": {{"tp": 8, "pp": 8, "vpp": 6, "sequence_parallel": true, "distributed_optimizer": true,
                         "overlap_grad_reduce": true, "overlap_param_gather": true,
                         "account_embedding_loss": true, "tp_comm_overlap": {tp_overlap},
                         "fused_kernels": {fused_kernels}}},
            "recompute": {{"granularity": "none"}},
            "batch": {{"micro_batch": 1, "global_batch": 2048, "seq_len": 4096}}}}"#
    );
    Plan::from_json(&text).unwrap()
}

#[test]
fn pangu_ultra_mfu() {
    // (row, plan, MFU the report states)
    // §4.2: the parallel layout alone, "approximately 43 % MFU": no kernel fusion, no MC2.
    // §4.3: with kernel fusion (RMSNorm, SwiGLU, RoPE, NPU fusion attention) and MC2 (matmul and
    // TP collective in one pipelined kernel), "over 52 %". The planner models MC2 as MindSpeed's
    // CoC, the TP overlap it writes (`--use-ascend-coc`), which hides less: one chunk of two stays.
    // The report does not say how it counts the attention core's FLOPs; the planner's MFU is in
    // Megatron's count since core_v0.12, the causal half, as MindSpeed-LLM (on core_v0.12.1) logs
    // it (docs/time.md). Counted over every pair, as Megatron did before, the two rows read 0.438
    // and 0.497.
    let rows = [
        ("§4.2 baseline", pangu_ultra(false, false), 0.43),
        ("§4.3 fused + MC2", pangu_ultra(true, true), 0.52),
    ];
    let mut errors = Vec::new();
    println!("row                 MFU paper  MFU model  error   bubble");
    for (name, plan, paper) in &rows {
        let report = evaluate(plan);
        assert!(
            report.findings.iter().all(|f| f.severity != trainplan_core::report::Severity::Error),
            "{name}"
        );
        let model = report.time.mfu;
        let err = (model - paper) / paper;
        let bubble = report.schedule.bubble_fraction;
        println!("{name:18}  {paper:9.3}  {model:9.3}  {:+5.1}%  {bubble:.3}", 100.0 * err);
        errors.push(err.abs());
        // The report's bubble with 6 virtual stages: 6.8 %, from 30.45 % without (§4.2), both
        // (p − 1) / (p − 1 + v·n) with even stages. FIXME(gap): the planner's last stage also holds
        // the 153k-word head, which the report balanced by "careful tuning of load balancing across
        // PP and VPP stages" (§4.2); the planner splits layers evenly, so its bubble runs higher.
        assert!((0.068..0.068 + 0.025).contains(&bubble), "{name}: bubble {bubble:.3}");
    }
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    let worst = errors.iter().cloned().fold(0.0, f64::max);
    println!("mean {:.1}%  worst {:.1}%", 100.0 * mean, 100.0 * worst);
    // The issue's target for dense Ascend rows: at most 10 %.
    assert!(worst < 0.10, "mean {mean:.3}, worst {worst:.3}");
}

#[test]
fn mindspeed_fused_kernels_reproduce_their_measured_gains() {
    // MindSpeed docs/zh/features: on Llama-2-7B, --use-fused-rmsnorm +2.7 %, --use-fused-swiglu
    // +4.7 %, --use-fused-rotary-pos-emb +1 % throughput, each against the run without it; the three
    // constants are fitted to them on MindSpeed-LLM's Llama-2-7B layout
    // (`examples/mindspore/llama2/pretrain_llama2_7b_ms.sh`: 8 NPUs, TP 1, PP 2, batch 256 × 4096).
    let llama = |fused: bool| {
        let text = format!(
            r#"{{"model": "llama-2-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain",
                "parallel": {{"pp": 2, "distributed_optimizer": true, "overlap_grad_reduce": true, "fused_kernels": {fused}}},
                "recompute": {{"granularity": "none"}}, "attention": "flash",
                "batch": {{"micro_batch": 1, "global_batch": 256, "seq_len": 4096}}}}"#
        );
        Plan::from_json(&text).unwrap()
    };
    let step = |fused: bool| evaluate(&llama(fused)).time.step_seconds;
    let gain = step(false) / step(true);
    let expected = 1.0 + 0.027 + 0.047 + 0.01;
    println!("unfused / fused: model {gain:.4}, MindSpeed docs {expected:.3}");
    assert!((gain - expected).abs() < 0.005, "{gain}");
    // The advice to turn them on carries that gain.
    let advice = trainplan_core::advice::advise(&llama(false));
    let fused = advice
        .iter()
        .find(|a| a.code == trainplan_core::advice::Move::FusedKernels)
        .expect("fused_kernels offered");
    assert!((fused.speed_delta_frac - (gain - 1.0)).abs() < 1e-9, "{}", fused.speed_delta_frac);
    assert!(
        trainplan_core::advice::advise(&llama(true))
            .iter()
            .all(|a| a.code != trainplan_core::advice::Move::FusedKernels)
    );
    // No effect outside MindSpeed: Megatron-LM fuses through Transformer Engine.
    let megatron = |fused: bool| {
        let text = format!(
            r#"{{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "parallel": {{"fused_kernels": {fused}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time.step_seconds
    };
    assert_eq!(megatron(false), megatron(true));
}

#[test]
fn hccs_full_mesh_gives_a_group_its_links() {
    // An Atlas 800T A2 node joins its 8 NPUs in an HCCS full mesh, 7 links each: a TP group of n
    // drives n − 1 of them (MindSpeed `auto_settings/.../comm_hardware_info.py` `calbandwidth`
    // scales 910B bandwidth by n − 1). The same device behind a switch (a custom Ascend device,
    // whose fabric counts as switched) gets the whole link for any group.
    let tp_seconds = |hardware: &str, tp: u32| {
        let text = format!(
            r#"{{"model": "llama-3-8b", "hardware": {hardware}, "framework": "mindspeed-llm", "method": "pretrain",
                "parallel": {{"tp": {tp}, "sequence_parallel": true}}, "recompute": {{"granularity": "none"}},
                "batch": {{"micro_batch": 8, "global_batch": 64, "seq_len": 8192}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time.breakdown.tp_comm_seconds
    };
    let b2 = hardware::device("ascend-910b2").unwrap();
    let switched = format!(
        r#"{{"custom": {{"vendor": "ascend", "memory_gb": 64, "bf16_tflops": {}, "memory_tb_per_s": {},
             "intra_node_gb_per_s": {}, "inter_node_gbit_per_s": 200}}}}"#,
        b2.bf16_flops_per_second / 1e12,
        b2.memory_bytes_per_second / 1e12,
        b2.intra_node_bytes_per_second / 1e9,
    );
    for (tp, links) in [(2, 1.0), (4, 3.0), (8, 7.0)] {
        let (mesh, switch) = (tp_seconds("\"ascend-910b2\"", tp), tp_seconds(&switched, tp));
        // The bandwidth term scales by 7 / (n − 1); the fixed latency (under 1 % of these
        // 64-MiB-per-micro-batch collectives) does not.
        let ratio = mesh / switch;
        println!("TP {tp}: mesh / switched = {ratio:.3} (links {links} of 7)");
        assert!((ratio - 7.0 / links).abs() < 0.02 * 7.0 / links, "TP {tp}: {ratio}");
    }
}

#[test]
fn nvidia_devices_keep_the_nccl_and_a100_figures() {
    // NVIDIA results do not move: every NVIDIA device carries exactly the fitted GEMM asymptote and
    // NCCL's collective figures; every Ascend device carries HCCL's and the Ascend asymptote.
    for d in hardware::devices() {
        let (gemm, eff, latency) = match d.vendor {
            hardware::Vendor::Ascend => {
                (time::ASCEND_GEMM_EFF_MAX, time::HCCL_COLLECTIVE_EFF, time::HCCL_COLLECTIVE_LATENCY_SECONDS)
            }
            _ => (time::GEMM_EFF_MAX, time::COLLECTIVE_EFF, time::COLLECTIVE_LATENCY_SECONDS),
        };
        assert_eq!(
            (d.gemm_efficiency_max, d.collective_eff, d.collective_latency_seconds),
            (gemm, eff, latency),
            "{}",
            d.id
        );
        let mesh = d.id.starts_with("ascend-910a") || d.id.starts_with("ascend-910b");
        assert_eq!(0 < d.mesh_links, mesh, "{}", d.id);
        // The catalog's efficiencies stay fractions.
        assert!(0.0 < d.gemm_efficiency_max && d.gemm_efficiency_max < 1.0 && d.collective_eff < 1.0);
    }
    // A GEMM of 137 GFLOP (4096³): the 910B2's curve against the benchmark it was derived from.
    let b2 = hardware::device("ascend-910b2").unwrap();
    let f = 2.0 * 4096f64.powi(3);
    assert!(time::gemm_efficiency(f) < time::gemm_efficiency_on(&b2, f));
}

#[test]
fn custom_device_takes_its_own_gemm_asymptote() {
    let plan = |extra: &str| {
        let text = format!(
            r#"{{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain",
                "hardware": {{"custom": {{"memory_gb": 80, "bf16_tflops": 989, "memory_tb_per_s": 3.35,
                  "intra_node_gb_per_s": 900, "inter_node_gbit_per_s": 400{extra}}}}}}}"#
        );
        Plan::from_json(&text)
    };
    let (default, faster) = (plan("").unwrap(), plan(r#", "gemm_efficiency_max": 0.8"#).unwrap());
    assert_eq!(default.hardware.hw.gemm_efficiency_max, time::GEMM_EFF_MAX);
    assert!(evaluate(&faster).time.step_seconds < evaluate(&default).time.step_seconds);
    // The file keeps the figure; an impossible one is refused with its range.
    let again = Plan::from_json(&serde_json::to_string(&faster.to_file()).unwrap()).unwrap();
    assert_eq!(again.hardware.hw.gemm_efficiency_max, 0.8);
    let err = plan(r#", "gemm_efficiency_max": 1.5"#).unwrap_err().to_string();
    assert!(err.contains("gemm_efficiency_max"), "{err}");
}
