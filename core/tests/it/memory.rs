//! Memory per device against numbers nobody here wrote: the ZeRO paper, Megatron's distributed-
//! optimizer table, Korthikanti et al.'s activation formulas, and saved tensors measured in HF
//! transformers (core/tests/data/hf_activations.json, made by tools/hf_activations).

use trainplan_core::memory::{self, StateBytes};
use trainplan_core::model::Architecture;
use trainplan_core::plan::{AttentionImpl, Framework, Plan, ZeroStage};
use trainplan_core::report::Severity;
use trainplan_core::{catalog, evaluate, hf, layout};

const GB: f64 = 1e9;

#[test]
fn zero_paper_figure_1() {
    // Rajbhandari et al. 2020, Fig. 1: Ψ = 7.5B, N_d = 64, K = 12:
    // baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB per device.
    let psi = 7.5e9;
    let mixed = StateBytes { weights: 2.0, gradients: 2.0, optimizer: 12.0 };
    let per_device = |stage| {
        let s = memory::zero_model_states(psi, mixed, ZeroStage::new(stage).unwrap(), 64);
        ((s.weights + s.gradients + s.optimizer) / GB * 10.0).round() / 10.0
    };
    assert_eq!([per_device(0), per_device(1), per_device(2), per_device(3)], [120.0, 31.4, 16.6, 1.9]);
    assert_eq!(memory::state_bytes(memory::Path::Hf, trainplan_core::plan::Precision::Bf16), mixed);
}

#[test]
fn zero3_seventy_billion_on_eight_cards() {
    // ZeRO-3 keeps 16Ψ/N_d bytes of model states per device (Rajbhandari et al. 2020, "ZeRO: Memory
    // Optimizations Toward Training Trillion Parameter Models", Figure 1): 70e9 × 16 / 8 is 140 GB
    // per card. Figures of 17.5 GB seen in tuning guides divide by 8 a second time.
    let s = memory::zero_model_states(
        70e9,
        memory::state_bytes(memory::Path::Hf, trainplan_core::plan::Precision::Bf16),
        ZeroStage::THREE,
        8,
    );
    assert_eq!((s.weights + s.gradients + s.optimizer) / GB, 140.0);
}

#[test]
fn megatron_distributed_optimizer_table() {
    // Megatron-LM docs/source/api-guide/dist_optimizer.md: bytes per parameter, non-distributed vs
    // distributed over d ranks: fp16/fp16 20 vs 4 + 16/d; bf16/fp32 18 vs 6 + 12/d; fp32/fp32 16 vs 8 + 8/d.
    use trainplan_core::plan::Precision::*;
    for (precision, plain, fixed, sharded) in
        [(Fp16, 20.0, 4.0, 16.0), (Bf16, 18.0, 6.0, 12.0), (Fp32, 16.0, 8.0, 8.0)]
    {
        let b = memory::state_bytes(memory::Path::Megatron, precision);
        assert_eq!(b.weights + b.gradients + b.optimizer, plain, "{precision:?}");
        assert_eq!((b.weights + b.gradients, b.optimizer), (fixed, sharded), "{precision:?}");
    }
    // Through a whole plan: Llama-2-7B on 8 GPUs, TP 1, PP 1, distributed optimizer: 6 + 12/8 bytes per parameter.
    let plan = Plan::from_json(
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "parallel": {"distributed_optimizer": true}}"#,
    )
    .unwrap();
    let stage = &evaluate(&plan).memory.stages[0];
    let states = (stage.weights + stage.gradients + stage.optimizer) as f64;
    let expected = 6_738_415_616.0 * (6.0 + 12.0 / 8.0);
    assert!((states - expected).abs() < 4.0, "{states} vs {expected}");
}

fn gpt(h: u64, a: u64, layers: u64) -> Architecture {
    let config = format!(
        r#"{{"model_type": "gpt2", "vocab_size": 51200, "n_embd": {h}, "n_head": {a}, "n_layer": {layers}, "n_positions": 2048}}"#
    );
    hf::import(&config).unwrap().arch
}

#[test]
fn korthikanti_activation_formulas() {
    // Korthikanti et al. 2022, Table 2 (bytes per layer; GPT with dropout, f = 4h, 16-bit):
    // none sbh(34 + 5as/h); TP sbh(10 + 24/t + 5as/(ht)); TP+SP sbh/t·(34 + 5as/h);
    // TP + selective sbh(10 + 24/t); TP + SP + selective 34sbh/t. GPT-3 175B shapes (their Table 3).
    let arch = gpt(12288, 96, 96);
    let (s, b, h, a) = (2048.0, 1.0, 12288.0, 96.0);
    let sbh = s * b * h;
    let layer = |t: u64, sp: bool, selective: bool| {
        let saved = memory::Saved { selective, ..memory::Saved::default() };
        let case = memory::LayerCase {
            megatron: true,
            attention: AttentionImpl::Eager,
            seq_len: 2048,
            micro_batch: 1,
            tp: t,
            sequence_parallel: sp,
            saved,
            fp8_inputs: false,
            liger: false,
        };
        memory::layer_activation_bytes(&arch, false, &case)
    };
    let t = 8.0;
    for (got, want, what) in [
        (layer(1, false, false), sbh * (34.0 + 5.0 * a * s / h), "no parallelism"),
        (layer(8, false, false), sbh * (10.0 + 24.0 / t + 5.0 * a * s / (h * t)), "tensor parallel"),
        (layer(8, true, false), sbh / t * (34.0 + 5.0 * a * s / h), "tensor + sequence parallel"),
        (layer(8, false, true), sbh * (10.0 + 24.0 / t), "tensor parallel + selective recompute"),
        (layer(8, true, true), 34.0 * sbh / t, "tensor + sequence parallel + selective recompute"),
    ] {
        assert!((got - want).abs() / want < 1e-12, "{what}: {got} vs {want}");
    }
}

#[test]
fn hf_saved_tensors_match_the_measurements() {
    // Each measured run: a random-weight model's saved-for-backward bytes in one decoder layer
    // (layer 1, which does not carry the shared rotary tables), bf16, no checkpointing.
    let data: serde_json::Value =
        serde_json::from_str(include_str!("../data/hf_activations.json")).expect("the measurements are JSON");
    let mut checked = 0;
    let mut worst: f64 = 0.0;
    for run in data["runs"].as_array().unwrap() {
        let get = |key: &str| run[key].as_u64().unwrap_or(0);
        if run["dtype"] != "bfloat16" {
            continue;
        }
        let family = run["family"].as_str().unwrap();
        let mut config = serde_json::json!({
            "model_type": family, "vocab_size": get("vocab_size"), "hidden_size": get("hidden_size"),
            "intermediate_size": get("intermediate_size"), "num_hidden_layers": get("num_hidden_layers"),
            "num_attention_heads": get("num_attention_heads"), "num_key_value_heads": get("num_key_value_heads"),
        });
        if family == "mixtral" {
            config["num_local_experts"] = get("num_local_experts").into();
            config["num_experts_per_tok"] = get("num_experts_per_tok").into();
        }
        let arch = hf::import_value(&config).unwrap().arch;
        let (s, b) = (get("seq"), get("batch"));
        let measured = run["saved_bytes_dedup_per_layer"][1].as_u64().unwrap() as f64;
        let checkpointing = run["gradient_checkpointing"].as_bool().unwrap();
        let predicted = match checkpointing {
            // HF gradient checkpointing keeps each layer's input hidden state.
            true => (2 * s * b * arch.hidden_size) as f64,
            false => {
                let attention = match run["attn_implementation"].as_str().unwrap() {
                    "eager" => AttentionImpl::Eager,
                    _ => AttentionImpl::Sdpa,
                };
                let case = memory::LayerCase {
                    megatron: false,
                    attention,
                    seq_len: s,
                    micro_batch: b,
                    tp: 1,
                    sequence_parallel: false,
                    saved: memory::Saved::default(),
                    fp8_inputs: false,
                    liger: false,
                };
                memory::layer_activation_bytes(&arch, family == "mixtral", &case)
            }
        };
        let err = (predicted - measured).abs() / measured;
        // Dense layers are exact to the byte but for tiny bookkeeping tensors; Mixtral's router keeps
        // a few more small tensors than the model counts.
        let tolerance = if family == "mixtral" { 0.02 } else { 0.002 };
        assert!(
            err < tolerance,
            "{} b={b} s={s} {}: predicted {predicted}, measured {measured}",
            run["variant"],
            run["attn_implementation"]
        );
        worst = worst.max(err);
        checked += 1;
    }
    assert!(60 <= checked, "{checked} runs checked");
    assert!(worst < 0.02);
}

/// The micro-batches whose activations a rank holds at its peak, as memory counts them, are what
/// the simulated schedule keeps: on each rank, the most (micro-batch, chunk) pairs whose forward
/// has ended and whose backward has not, in units of the rank's layers (÷ chunks). 1F1B,
/// interleaved over even and uneven chunks, ZB-H1 (its deferred weight passes keep no more) and
/// DualPipeV (pp + ½ on every rank: the DualPipe README's PP + 1 of the 2·pp stages).
#[test]
fn in_flight_micro_batches_are_what_the_schedule_keeps() {
    use trainplan_core::schedule::Pass;
    let mut compared = 0;
    for model in ["llama-3.1-70b", "qwen3-0.6b", "deepseek-v3"] {
        for (framework, schedule) in
            [("megatron", "auto"), ("megatron", "zb-h1"), ("mindspeed-llm", "dualpipev")]
        {
            for (pp, vpp) in [(2, 1), (4, 1), (4, 2), (8, 1), (8, 2), (8, 4), (16, 1)] {
                let text = format!(
                    r#"{{"model": "{model}", "framework": "{framework}", "method": "pretrain", "cluster": {{"nodes": 64}},
                        "parallel": {{"tp": 8, "pp": {pp}, "vpp": {vpp}, "schedule": "{schedule}", "uneven_layers": true,
                        "distributed_optimizer": true}}, "batch": {{"micro_batch": 1, "global_batch": 512, "seq_len": 4096}}}}"#
                );
                let Ok(plan) = Plan::from_json(&text) else { continue };
                let mem = memory::estimate(&plan);
                let whole = trainplan_core::time::estimate(&plan, &mem).whole_timeline();
                assert_eq!(whole.microbatches_drawn, whole.n_microbatches, "{text}");
                let (ranks, chunks) = (u64::from(whole.n_ranks), u64::from(whole.n_chunks));
                for rank in 0..ranks {
                    // Each forward's end adds a pair, each backward's end frees one (first, at a tie).
                    let mut ends: Vec<(f64, i32)> = whole
                        .events
                        .iter()
                        .filter(|e| u64::from(e.stage) == rank)
                        .filter_map(|e| match e.pass {
                            Pass::F => Some((e.end_seconds, 1)),
                            Pass::B => Some((e.end_seconds, -1)),
                            Pass::W => None,
                        })
                        .collect();
                    ends.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                    let peak = ends.iter().scan(0, |held, &(_, d)| {
                        *held += d;
                        Some(*held)
                    });
                    let simulated = f64::from(peak.max().unwrap_or(0)) / chunks as f64;
                    let counted = match schedule {
                        "dualpipev" => ranks as f64 + 0.5,
                        _ => memory::in_flight_microbatches(ranks, chunks, rank, mem.n_microbatches),
                    };
                    assert_eq!(simulated, counted, "{text}: rank {rank}");
                    compared += 1;
                }
            }
        }
    }
    assert!(300 < compared, "{compared} ranks compared");
}

#[test]
fn in_flight_micro_batches_follow_the_schedules() {
    // 1F1B: stage i holds min(p − i, m) (Narayanan et al. 2021 §2.2).
    assert_eq!(memory::in_flight_microbatches(4, 1, 0, 8), 4.0);
    assert_eq!(memory::in_flight_microbatches(4, 1, 3, 8), 1.0);
    assert_eq!(memory::in_flight_microbatches(8, 1, 0, 2), 2.0);
    // Interleaved: stage 0 holds 1 + (p − 1)/(p·v) times the layers of 1F1B's stage 0 (Korthikanti et
    // al. 2022 §4.2.3; Megatron-LM `theoretical_memory_usage.py`, interleaved_schedule_memory_penalty).
    let (p, v) = (4.0, 2.0);
    assert_eq!(memory::in_flight_microbatches(4, 2, 0, 64), p * (1.0 + (p - 1.0) / (p * v)));
    assert_eq!(memory::in_flight_microbatches(1, 1, 0, 64), 1.0);
}

#[test]
fn stages_split_layers_and_hold_embedding_and_head() {
    assert_eq!(layout::stage_layers(80, 4), vec![0..20, 20..40, 40..60, 60..80]);
    // 10 layers on 4 stages, the first/last layout: middle stages ⌈10/4⌉ = 3, first 2, last 2.
    assert_eq!(layout::stage_layers(10, 4), vec![0..2, 2..5, 5..8, 8..10]);
    let plan = Plan::from_json(
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 4}}"#,
    )
    .unwrap();
    let stages = evaluate(&plan).memory.stages;
    assert_eq!(stages.len(), 4);
    // The first stage holds the embedding (128256 × 4096), the last the head: both above the middle ones.
    assert!(stages[1].weights < stages[0].weights && stages[2].weights < stages[3].weights);
    assert_eq!(stages[1].weights, stages[2].weights);
    assert!(0 < stages[3].logits && stages.iter().take(3).all(|s| s.logits == 0));
    // 1F1B: the first stage holds the most micro-batches.
    assert!(stages[3].activations < stages[0].activations);
}

/// A small grid of plans over frameworks, methods, ZeRO stages, recomputation and degrees.
fn grid() -> Vec<(String, Plan)> {
    let mut res = Vec::new();
    for model in ["qwen2.5-7b", "mixtral-8x7b", "deepseek-v2-lite", "gpt2"] {
        for framework in ["megatron", "llamafactory", "mindspeed-llm", "verl"] {
            for method in ["pretrain", "lora", "qlora", "dpo", "grpo", "ppo"] {
                for zero in 0..=3 {
                    for (tp, pp) in [(1, 1), (2, 2), (8, 1)] {
                        let text = format!(
                            r#"{{"model": "{model}", "framework": "{framework}", "method": "{method}", "cluster": {{"nodes": 2}},
                              "parallel": {{"tp": {tp}, "pp": {pp}, "zero_stage": {zero}, "distributed_optimizer": {d}}}}}"#,
                            d = zero == 1
                        );
                        res.push((text.clone(), Plan::from_json(&text).unwrap()));
                    }
                }
            }
        }
    }
    res
}

#[test]
fn every_term_is_finite_and_adds_up() {
    for (text, plan) in grid() {
        let mem = evaluate(&plan).memory;
        for s in &mem.stages {
            let sum =
                s.weights + s.gradients + s.optimizer + s.activations + s.logits + s.buffers + s.overhead;
            assert_eq!(sum, s.total, "{text}");
            assert!(0 < s.total && s.total < (1 << 50), "{text}");
        }
        assert!(mem.stages.iter().all(|s| s.total <= mem.peak_bytes), "{text}");
        assert_eq!(mem.fits, mem.peak_bytes <= mem.usable_bytes, "{text}");
        assert!(mem.usable_bytes < mem.capacity_bytes);
    }
}

#[test]
fn more_recompute_never_raises_activations_or_the_peak() {
    for (text, plan) in grid() {
        // A plain PyTorch step (LLaMA-Factory without DeepSpeed) reports its terms at its peak
        // moment, which recomputation can move: there the peak is what never rises.
        let plain_torch = plan.framework == Framework::LlamaFactory
            && plan.parallel.zero_stage == ZeroStage::NONE
            && !plan.parallel.offload_optimizer
            && !plan.parallel.offload_params;
        let with = |granularity| {
            let mut p = plan.clone();
            p.recompute.granularity = granularity;
            let mem = evaluate(&p).memory;
            (mem.stages.iter().map(|s| s.activations).max().unwrap(), mem.peak_bytes)
        };
        use trainplan_core::plan::RecomputeGranularity::*;
        let (none, selective, full) = (with(None), with(Selective), with(Full));
        assert!(selective.1 <= none.1 && full.1 <= selective.1, "{text}: {none:?} {selective:?} {full:?}");
        if !plain_torch {
            assert!(
                selective.0 <= none.0 && full.0 <= selective.0,
                "{text}: {none:?} {selective:?} {full:?}"
            );
        }
    }
}

#[test]
fn more_tensor_parallelism_never_raises_weights_and_more_dp_shrinks_zero3() {
    for model in catalog::models().iter().map(|m| m.id).filter(|id| !id.starts_with("llama-3.1-405b")) {
        let weights = |tp: u32| {
            let text = format!(
                r#"{{"model": "{model}", "framework": "megatron", "method": "pretrain", "parallel": {{"tp": {tp}}}}}"#
            );
            evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].weights
        };
        assert!(weights(2) <= weights(1) && weights(8) <= weights(2), "{model}");
        let zero3 = |nodes: u32| {
            let text = format!(
                r#"{{"model": "{model}", "method": "sft-full", "parallel": {{"zero_stage": 3}}, "cluster": {{"nodes": {nodes}}}}}"#
            );
            let s = &evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0];
            s.weights + s.gradients + s.optimizer
        };
        assert!(zero3(2) < zero3(1) && zero3(8) < zero3(2), "{model}");
    }
}

/// GaLore (`optimizer: galore`, LLaMA-Factory's `use_galore` over every linear weight; APOLLO alike) on
/// Qwen2.5-7B, counted from its config.json (hidden 3,584, 4 key/value heads of 128, MLP 18,944,
/// 28 layers, vocabulary 152,064, untied head): each layer's seven weights hold 233,046,016 of its
/// 233,057,792 parameters (the rest: the q/k/v biases and two norms), 6,525,288,448 over the
/// model, which leaves 1,090,328,064 parameters (embedding, head, norms, biases) to plain AdamW. At
/// rank 16 a layer's projected states are, per weight `(2 × long + short) × 16`: 172,032 for q and
/// o (3,584 square), 122,880 for k and v (512 × 3,584), 663,552 for gate, up and down (18,944 ×
/// 3,584): 2,580,480 a layer, 72,253,440 over the model. With `pure_bf16` every state is 2 bytes.
#[test]
fn galore_keeps_low_rank_moments_of_the_linear_weights() {
    let report = |galore: &str| {
        evaluate(
            &Plan::from_json(&format!(
                r#"{{"model": "qwen2.5-7b", "method": "sft-full", "pure_bf16": true, "cluster": {{"devices_per_node": 1}},
                    "batch": {{"micro_batch": 1, "global_batch": 1, "seq_len": 1024}}{galore}}}"#
            ))
            .unwrap(),
        )
    };
    let adamw = report("");
    let galore = report(r#", "optimizer": "galore""#);
    let expected = 1_090_328_064u64 * 2 * 2 + 72_253_440 * 2;
    assert_eq!(galore.memory.stages[0].optimizer, expected);
    assert_eq!(adamw.memory.stages[0].optimizer, 7_615_616_512 * 2 * 2);
    // APOLLO's random projection keeps the same shapes (`GradientProjector`, apollo_torch 1.0.3).
    assert_eq!(report(r#", "optimizer": "apollo""#).memory.stages[0].optimizer, expected);
    // Rank 128: every weight's shorter side is at least 512, so its states grow eightfold.
    let wide = report(r#", "optimizer": "galore", "low_rank": {"rank": 128}"#);
    assert_eq!(wide.memory.stages[0].optimizer, 1_090_328_064 * 2 * 2 + 72_253_440 * 8 * 2);
    // Layer by layer, each gradient is freed once its parameter is stepped: the peak drops by the
    // gradients it no longer holds (the embedding's, the largest tensor, at most remains).
    let layerwise = report(r#", "optimizer": "galore", "low_rank": {"layerwise": true}"#);
    assert!(layerwise.memory.peak_bytes + 13_000_000_000 < galore.memory.peak_bytes);
    assert!(galore.memory.peak_bytes < adamw.memory.peak_bytes);
    let codes = |r: &trainplan_core::Report| r.findings.iter().map(|f| f.code.as_str()).collect::<Vec<_>>();
    assert!(codes(&layerwise).is_empty(), "{:?}", codes(&layerwise));
}

/// ZeRO-Infinity (`parallel.offload_device: nvme`; DeepSpeed `offload_optimizer.device` and
/// `offload_param.device: nvme`): the device keeps what offload to host memory leaves it; the
/// node's NVMe volume holds every device's fp32 parameters, moments and gradients (16 bytes a
/// parameter) and 16-bit weights (2); host memory only the pinned swap buffers, each device's four
/// of its largest optimizer sub-group in fp32 (`OptimizerSwapper`: Llama-2-13B's 13,015,864,320
/// parameters ÷ 8 exceed the 1e9 `sub_group_size`, so 1e9 elements) and five of 1e8 16-bit
/// parameters (`AsyncPartitionedParameterSwapper`), DeepSpeed's default counts.
#[test]
fn nvme_offload_keeps_the_states_on_the_drive() {
    let plan = |framework: &str, zero: u8, device: &str| {
        evaluate(
            &Plan::from_json(&format!(
                r#"{{"model": "llama-2-13b", "framework": "{framework}", "method": "sft-full",
                    "parallel": {{"zero_stage": {zero}, "offload_optimizer": true, "offload_params": {},
                    "distributed_optimizer": {}, "offload_device": "{device}"}}}}"#,
                zero == 3,
                framework == "megatron"
            ))
            .unwrap(),
        )
    };
    let codes = |r: &trainplan_core::Report| r.findings.iter().map(|f| f.code.as_str()).collect::<Vec<_>>();
    let (cpu, nvme) = (plan("deepspeed", 3, "cpu"), plan("deepspeed", 3, "nvme"));
    assert_eq!(nvme.memory.stages, cpu.memory.stages);
    assert_eq!(cpu.memory.nvme_bytes_per_node, 0);
    let on_drive = nvme.memory.nvme_bytes_per_node as f64;
    let expected = 13_015_864_320.0 * 18.0;
    assert!((on_drive / expected - 1.0).abs() < 1e-9, "{on_drive} against {expected}");
    assert_eq!(nvme.memory.host_bytes_per_node, 8 * (4 * 1_000_000_000 * 4 + 5 * 100_000_000 * 2));
    assert!(nvme.findings.is_empty(), "{:?}", codes(&nvme));
    // ZeRO-2's optimizer keeps the states in host memory whatever the device, and says so.
    let (cpu2, nvme2) = (plan("deepspeed", 2, "cpu"), plan("deepspeed", 2, "nvme"));
    assert_eq!(
        (nvme2.memory.nvme_bytes_per_node, nvme2.memory.host_bytes_per_node),
        (0, cpu2.memory.host_bytes_per_node)
    );
    assert_eq!(codes(&nvme2), ["zero.nvme_stage"]);
    // Megatron-LM offloads to host memory alone: the device changes nothing but a warning.
    let (mcpu, mnvme) = (plan("megatron", 0, "cpu"), plan("megatron", 0, "nvme"));
    assert_eq!((mnvme.memory.clone(), mnvme.time.clone()), (mcpu.memory.clone(), mcpu.time.clone()));
    assert_eq!(codes(&mnvme), [codes(&mcpu), vec!["zero.nvme_framework"]].concat());
}

#[test]
fn offload_moves_states_to_the_host() {
    let base = r#"{"model": "llama-2-13b", "method": "sft-full", "parallel": {"zero_stage": 3"#;
    let on = evaluate(
        &Plan::from_json(&format!(r#"{base}, "offload_optimizer": true, "offload_params": true}}}}"#))
            .unwrap(),
    );
    let off = evaluate(&Plan::from_json(&format!("{base}}}}}")).unwrap());
    assert_eq!(on.memory.stages[0].optimizer, 0);
    assert_eq!(on.memory.stages[0].weights, 0);
    // ZeRO-Offload keeps the gradient partitions on the host too (ZeRO-Offload paper §4.1).
    assert_eq!(on.memory.stages[0].gradients, 0);
    assert!(on.memory.peak_bytes < off.memory.peak_bytes);
    // One node of 8 holds every optimizer state, fp32 gradient and 16-bit weight:
    // (12 + 4 + 2) bytes × 13.0B × 1.5 buffer factor.
    let host = on.memory.host_bytes_per_node as f64;
    let expected = 13_015_864_320.0 * 18.0 * 1.5;
    assert!((host - expected).abs() / expected < 1e-6, "{host} vs {expected}");
    assert_eq!(off.memory.host_bytes_per_node, 0);
}

#[test]
fn rl_reports_each_phase() {
    let plan = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3}}"#,
    )
    .unwrap();
    let mem = evaluate(&plan).memory;
    let names: Vec<_> = mem.phases.iter().map(|p| p.phase).collect();
    assert_eq!(names, ["rollout", "log_prob", "update"]);
    assert_eq!(mem.peak_bytes, mem.phases.iter().map(|p| p.total).max().unwrap().max(mem.stages[0].total));
    // The rollout engine takes gpu_memory_utilization (0.6) of the device.
    let rollout = mem.phases[0].total as f64;
    assert!(0.6 * mem.capacity_bytes as f64 <= rollout);
    let ppo = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "ppo", "parallel": {"zero_stage": 3}}"#,
    )
    .unwrap();
    assert!(mem.peak_bytes < evaluate(&ppo).memory.peak_bytes, "PPO adds a critic");
}

/// The bf16 copy of Qwen2.5-7B's root FSDP unit that VeRL's engine keeps while it computes at ZeRO-3:
/// the embedding and the untied head, 152,064 × 3,584 each, and the final norm, 3,584 (the model's
/// config.json: `vocab_size`, `hidden_size`, `tie_word_embeddings: false`), 2 bytes each.
const QWEN25_7B_ROOT_COPY: u64 = (2 * 152_064 * 3_584 + 3_584) * 2;

/// Both RL launch files keep the reference on the host but for its log-probabilities. VeRL's FSDP
/// engine keeps it there even then: a forward-only engine wraps its model in FSDP's CPU offload
/// (verl 0.9.1 `FSDPEngine._build_fsdp_module`: `CPUOffload(offload_params=True)` when
/// `forward_only`), so each unit's shard comes in for its forward and only the units FSDP keeps
/// gathered after a forward stay: at ZeRO-3 the root's, the embedding, final norm and head in bf16
/// (`_post_forward_reshard` does not free the root's). MindSpeed-RL's integrated worker onloads the
/// whole reference around `compute_ref_log_prob`, as large as the actor's weights, and its file also
/// offloads the actor's parameters and optimizer states while the engine generates, and its
/// optimizer states between updates (`offload_train_param`, `offload_train_optimizer`,
/// `offload_train_grad`: `MegatronShardingManager`). So the reference is a part of the log-prob
/// phase alone, and MindSpeed-RL's rollout holds the engine without the actor.
#[test]
fn rl_launch_files_offload_what_each_phase_does_not_use() {
    let phases = |framework: &str, hardware: &str| {
        let plan = Plan::from_json(&format!(
            r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "grpo", "hardware": "{hardware}",
                "parallel": {{"zero_stage": 3}}}}"#
        ))
        .unwrap();
        let mem = evaluate(&plan).memory;
        let part = |phase: &str, part: &str| {
            let parts = &mem.phases.iter().find(|p| p.phase == phase).unwrap().parts;
            parts.iter().find(|x| x.part == part).map_or(0, |x| x.bytes)
        };
        let got: Vec<[u64; 3]> = ["rollout", "log_prob", "update"]
            .iter()
            .map(|phase| [part(phase, "reference"), part(phase, "weights"), part(phase, "optimizer")])
            .collect();
        (mem.stages[0].weights, mem.stages[0].optimizer, got)
    };
    let (w, o, verl) = phases("verl", "h100-sxm-80g");
    assert!(0 < w && 0 < o);
    // The rollout holds the actor's shards without the root's bf16 copy, which only its passes use.
    assert_eq!(verl, [[0, w - QWEN25_7B_ROOT_COPY, o], [QWEN25_7B_ROOT_COPY, w, o], [0, w, o]]);
    let (w, o, mindspeed) = phases("mindspeed-rl", "ascend-910b2");
    assert_eq!(mindspeed, [[0, 0, 0], [w, w, 0], [0, w, o]]);
}

/// VeRL's offload (`param_offload`, `optimizer_offload`, both engines) moves the states out between
/// passes, not out of them: verl 0.9.1 `BaseEngineCtx._context_switch` (verl/workers/engine/base.py)
/// loads the parameters for a forward-only pass and the parameters, gradients and optimizer states
/// for the update, and offloads them on exit. So the rollout holds neither, the log-probabilities the
/// parameters alone, the update all of them; a stage's states are the same with offload or without.
#[test]
fn verl_offload_leaves_the_update_its_states() {
    for (framework, parallel) in [("verl", r#""zero_stage": 3"#), ("verl-megatron", r#""tp": 2"#)] {
        let mem = |offload: bool| {
            let plan = Plan::from_json(&format!(
                r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "grpo",
                    "parallel": {{{parallel}, "offload_params": {offload}, "offload_optimizer": {offload}}}}}"#
            ))
            .unwrap();
            evaluate(&plan).memory
        };
        let (on, off) = (mem(false), mem(true));
        let stage = &off.stages[0];
        assert_eq!(
            (stage.weights, stage.optimizer),
            (on.stages[0].weights, on.stages[0].optimizer),
            "{framework}"
        );
        assert!(0 < stage.weights && 0 < stage.optimizer, "{framework}");
        let held = |mem: &trainplan_core::report::MemoryReport, phase: &str| {
            let parts = &mem.phases.iter().find(|p| p.phase == phase).unwrap().parts;
            let part = |name: &str| parts.iter().find(|x| x.part == name).map_or(0, |x| x.bytes);
            [part("weights"), part("optimizer")]
        };
        let (w, o) = (stage.weights, stage.optimizer);
        let phases = ["rollout", "log_prob", "update"];
        assert_eq!(phases.map(|p| held(&off, p)), [[0, 0], [w, 0], [w, o]], "{framework}");
        // VeRL FSDP's rollout holds its shards without the root's bf16 copy, which only passes use.
        let copy = if framework == "verl" { QWEN25_7B_ROOT_COPY } else { 0 };
        assert_eq!(phases.map(|p| held(&on, p)), [[w - copy, o], [w, o], [w, o]], "{framework}");
        // The update holds what it held without offload: its peak moves not at all.
        let update = |mem: &trainplan_core::report::MemoryReport| {
            mem.phases.iter().find(|p| p.phase == "update").unwrap().total
        };
        assert_eq!(update(&off), update(&on), "{framework}");
    }
}

/// VeRL's FSDP engine trains fp32 shards under bf16 compute (`model_dtype: fp32`, verl 0.9.1
/// verl/trainer/config/engine/fsdp.yaml; `_build_module`, verl/workers/engine/fsdp/transformer_impl.py):
/// 4-byte weights that are their own master copy, 4-byte gradients, AdamW's two 4-byte moments,
/// against DeepSpeed's 2 + 2 + 12 on the same ZeRO-3 shards (LLaMA-Factory). The rollout holds the
/// weights and moments, 12 bytes a parameter's shard, not 14. The reference, built alike, keeps its
/// 4-byte shards on the host (`forward_only`, FSDP's CPU offload): 7,615,616,512 × 4 ÷ 8 bytes for
/// each device, 8 a node.
#[test]
fn verl_fsdp_keeps_fp32_shards() {
    let stage = |framework: &str, method: &str| {
        let plan = Plan::from_json(&format!(
            r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "{method}",
                "parallel": {{"zero_stage": 3}}}}"#
        ))
        .unwrap();
        evaluate(&plan).memory
    };
    let (verl, ds) = (stage("verl", "grpo"), stage("llamafactory", "sft-full"));
    let (v, d) = (&verl.stages[0], &ds.stages[0]);
    let close = |a: u64, b: f64| (a as f64 - b).abs() <= 1e-6 * b;
    // Per parameter's shard: DeepSpeed's weights are 2 bytes, gradients 2, optimizer 12. VeRL's
    // weights also hold the root unit's bf16 copy while they compute.
    let shards = v.weights - QWEN25_7B_ROOT_COPY;
    assert!(close(shards, 2.0 * d.weights as f64), "{shards} {}", d.weights);
    assert!(close(v.gradients, 2.0 * d.gradients as f64), "{} {}", v.gradients, d.gradients);
    assert!(close(v.optimizer, d.optimizer as f64 * 8.0 / 12.0), "{} {}", v.optimizer, d.optimizer);
    let part = |phase: &str, name: &str| {
        let parts = &verl.phases.iter().find(|p| p.phase == phase).unwrap().parts;
        parts.iter().find(|x| x.part == name).map_or(0, |x| x.bytes)
    };
    assert_eq!(part("log_prob", "reference"), QWEN25_7B_ROOT_COPY);
    assert_eq!(verl.host_bytes_per_node, 7_615_616_512 * 4 / 8 * 8);
    assert_eq!(part("rollout", "weights") + part("rollout", "optimizer"), shards + v.optimizer);
}

/// VeRL's FSDP engine at ZeRO-2 (`reshard_after_forward: False`, PyTorch's `SHARD_GRAD_OP`) shards
/// its fp32 parameters outside computation as at ZeRO-3 and keeps them whole in bf16 from forward to
/// backward; DeepSpeed's ZeRO-2 keeps the whole model in 16 bits with fp32 masters sharded. Qwen2.5-7B
/// has 7,615,616,512 parameters (its Hugging Face checkpoint's count, which the catalog's exact
/// count matches); on 8 H100 each device holds a 4-byte shard of 1/8 of them and, while it
/// computes, 2 bytes of each: 3,807,808,256 + 15,231,233,024 bytes. The engine's rollout holds the
/// shard alone (before: the whole fp32 model, 30.5 GB, in every phase).
#[test]
fn verl_zero2_shards_its_fp32_parameters_and_gathers_them_in_bf16() {
    const N: u64 = 7_615_616_512;
    let plan = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 2}}"#,
    )
    .unwrap();
    let report = evaluate(&plan);
    assert_eq!(report.params.total, N);
    let memory = report.memory;
    assert_eq!(memory.dp, 8);
    let stage = &memory.stages[0];
    assert_eq!(stage.weights, N * 4 / 8 + N * 2);
    let part = |phase: &str, name: &str| {
        let parts = &memory.phases.iter().find(|p| p.phase == phase).unwrap().parts;
        parts.iter().find(|x| x.part == name).map_or(0, |x| x.bytes)
    };
    assert_eq!(part("rollout", "weights"), N * 4 / 8);
    assert_eq!(part("update", "weights"), stage.weights);
    // Gradients and optimizer states sharded as at ZeRO-3: 4 and 8 bytes over 8 devices.
    assert_eq!((stage.gradients, stage.optimizer), (N * 4 / 8, N * 8 / 8));
    // PPO's critic, the actor's size, is sharded alike: its shard alone while the engine generates.
    let ppo = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "ppo", "parallel": {"zero_stage": 2}}"#,
    )
    .unwrap();
    let memory = evaluate(&ppo).memory;
    let critic = |phase: &str| {
        let parts = &memory.phases.iter().find(|p| p.phase == phase).unwrap().parts;
        parts.iter().find(|x| x.part == "critic").map_or(0, |x| x.bytes)
    };
    assert_eq!(critic("rollout"), N * 4 / 8 + N * 4 / 8 + N * 8 / 8);
    assert_eq!(critic("update"), N * 4 / 8 + N * 2 + N * 4 / 8 + N * 8 / 8);
}

/// VeRL's FSDP engine on FSDP2 (`strategy: fsdp2`, the plan's `torch_fsdp2`) against FSDP1, Qwen2.5-7B
/// GRPO over 8 H100 at ZeRO-3 (N = 7,615,616,512 parameters):
/// - FSDP2 wraps an untied embedding as a unit of its own (`_select_fsdp2_wrap_targets`,
///   verl/utils/fsdp_utils.py at verl 0.9.1), freed once its forward is done: the bf16 root copy
///   lacks the embedding, 152,064 × 3,584 × 2 bytes;
/// - under `no_sync` FSDP1 accumulates the whole model's gradients in bf16 and FSDP2 upcasts them
///   to `reduce_dtype`, fp32 (`FSDPParam.to_accumulated_grad_if_needed`, torch 2.11.0): 2 and 4
///   bytes a parameter beside the 4-byte shards.
///
/// A tied model (Qwen2.5-1.5B, `tie_word_embeddings: true`) keeps its embedding in the root under
/// both.
#[test]
fn verl_fsdp2_frees_the_embedding_and_accumulates_in_fp32() {
    const N: u64 = 7_615_616_512;
    let stage = |model: &str, fsdp: &str, no_sync: bool| {
        let plan = Plan::from_json(&format!(
            r#"{{"model": "{model}", "framework": "verl", "method": "grpo",
                "parallel": {{"zero_stage": 3, "fsdp": "{fsdp}", "no_sync_accumulation": {no_sync}}}}}"#
        ))
        .unwrap();
        let report = evaluate(&plan);
        assert!(report.findings.iter().all(|f| f.severity != Severity::Error), "{:?}", report.findings);
        report.memory.stages[0].clone()
    };
    let (fsdp1, fsdp2) = (stage("qwen2.5-7b", "none", false), stage("qwen2.5-7b", "torch_fsdp2", false));
    assert_eq!(fsdp1.weights - fsdp2.weights, 152_064 * 3_584 * 2);
    assert_eq!((fsdp1.gradients, fsdp2.gradients), (N * 4 / 8, N * 4 / 8));
    let (fsdp1, fsdp2) = (stage("qwen2.5-7b", "none", true), stage("qwen2.5-7b", "torch_fsdp2", true));
    assert_eq!((fsdp1.gradients, fsdp2.gradients), (N * 4 / 8 + N * 2, N * 4 / 8 + N * 4));
    let (tied1, tied2) = (stage("qwen2.5-1.5b", "none", false), stage("qwen2.5-1.5b", "torch_fsdp2", false));
    assert_eq!(tied1.weights, tied2.weights);
}

/// An RL plan on VeRL whose rollout does not fit is offered VeRL's own offload, which takes the
/// optimizer states out of the rollout: Qwen2.5-32B GRPO on 8 H100 over TP 4 and PP 2 holds 12
/// bytes a parameter of optimizer states (49 GB a device) beside the engine's 48 GB.
#[test]
fn a_verl_rollout_that_does_not_fit_is_offered_verls_offload() {
    let plan = Plan::from_json(
        r#"{"model": "qwen2.5-32b", "framework": "verl-megatron", "method": "grpo",
            "parallel": {"tp": 4, "pp": 2}, "rl": {"rollout_tp": 4}}"#,
    )
    .unwrap();
    let report = evaluate(&plan);
    assert!(!report.memory.fits);
    let finding = report.findings.iter().find(|f| f.code == "memory.does_not_fit").expect("does not fit");
    let fix = finding.fix.as_ref().expect("a fix");
    assert_eq!((fix.field.path(), fix.value.as_bool()), ("parallel.offload_optimizer", Some(true)));
    let fixed = evaluate(&trainplan_core::rules::apply(&plan, fix).unwrap());
    assert!(fixed.memory.fits, "{}", fixed.memory.peak_bytes);
}

/// VeRL's Megatron engine adapts megatron-core's fused linears (Megatron-Bridge's PEFT,
/// `actor_rollout_ref.model.lora`), routed experts' included, as MindSpeed-LLM's LoRA does: the same
/// adapter parameters; VeRL's FSDP engine, PEFT over the HF modules, adapts no routed expert.
#[test]
fn verl_megatron_lora_adapts_megatron_cores_linears() {
    let lora = |framework: &str, method: &str, hardware: &str| {
        let plan = Plan::from_json(&format!(
            r#"{{"model": "qwen3-30b-a3b", "framework": "{framework}", "method": "{method}", "hardware": "{hardware}",
                "rl": {{"lora": true}}, "lora": {{"rank": 16}}}}"#
        ))
        .unwrap();
        evaluate(&plan).params.lora
    };
    let megatron = lora("verl-megatron", "grpo", "h100-sxm-80g");
    assert!(0 < megatron);
    assert_eq!(megatron, lora("mindspeed-llm", "lora", "ascend-910b2"));
    assert!(lora("verl", "grpo", "h100-sxm-80g") < megatron);
}

/// VeRL's Megatron engine keeps megatron-core's states: a GRPO actor's stage holds the weights,
/// gradients and distributed optimizer shards of a Megatron-LM stage of the same layout.
#[test]
fn verl_megatron_keeps_megatron_cores_states() {
    let stage = |framework: &str, method: &str| {
        let plan = Plan::from_json(&format!(
            r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "{method}",
                "parallel": {{"tp": 2, "pp": 2, "distributed_optimizer": true, "sequence_parallel": true}}}}"#
        ))
        .unwrap();
        let s = &evaluate(&plan).memory.stages[0];
        (s.weights, s.gradients, s.optimizer)
    };
    assert_eq!(stage("verl-megatron", "grpo"), stage("megatron", "pretrain"));
    // And not VeRL FSDP's, which shards everything over the eight devices.
    assert_ne!(stage("verl-megatron", "grpo"), stage("verl", "grpo"));
}

#[test]
fn mindspeed_knobs_save_activations_on_the_megatron_path_only() {
    let base = r#""model": "llama-3-8b", "framework": "mindspeed-llm", "method": "pretrain", "hardware": "ascend-910b2",
        "parallel": {"tp": 2, "pp": 2}, "recompute": {"granularity": "none""#;
    let activations = |extra: &str| {
        let plan = Plan::from_json(&format!("{{{base}{extra}}}}}")).unwrap();
        evaluate(&plan).memory.stages[0].activations
    };
    let plain = activations("");
    // Activation-function recompute drops SwiGLU's product, 2f of 6f + ... per token.
    assert!(activations(r#", "activation_function": true"#) < plain);
    // Swap-attention keeps two layers' attention tensors; the stage has 16 layers.
    assert!(activations(r#", "swap_attention": true"#) < plain);
    // The HF path has neither switch: LLaMA-Factory ignores them.
    let hf = |extra: &str| {
        let text = format!(r#"{{"model": "llama-3-8b", "recompute": {{"granularity": "none"{extra}}}}}"#);
        evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].activations
    };
    assert_eq!(hf(r#", "activation_function": true, "swap_attention": true"#), hf(""));
}

#[test]
fn activation_function_recompute_covers_the_layers_it_is_given() {
    // Llama-3-8B, PP 2: 16 layers a stage. `activation_function_layers` 0 means all of them.
    let activations = |extra: &str| {
        let text = format!(
            r#"{{"model": "llama-3-8b", "framework": "mindspeed-llm", "method": "pretrain", "hardware": "ascend-910b2",
                "parallel": {{"tp": 2, "pp": 2}}, "recompute": {{"granularity": "none"{extra}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.stages[1].activations as f64
    };
    let plain = activations("");
    let all = activations(r#", "activation_function": true"#);
    let eight = activations(r#", "activation_function": true, "activation_function_layers": 8"#);
    assert_eq!(activations(r#", "activation_function": true, "activation_function_layers": 16"#), all);
    // The last stage holds one micro-batch of 16 equal layers: 8 of them save half of the saving.
    assert!(((plain - eight) / (plain - all) - 0.5).abs() < 1e-9, "{}", (plain - eight) / (plain - all));
}

#[test]
fn swap_optimizer_keeps_two_slices_on_the_device_and_the_rest_on_the_host() {
    let mem = |swap: bool| {
        let text = format!(
            r#"{{"model": "qwen2.5-32b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full",
                "cluster": {{"nodes": 2}}, "parallel": {{"tp": 8, "distributed_optimizer": true, "swap_optimizer": {swap}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory
    };
    let (kept, swapped) = (mem(false), mem(true));
    let optimizer = kept.stages[0].optimizer as f64;
    // MindSpeed swap-optimizer: slices of 1/16 (`--swap-optimizer-times` 16), two in flight.
    assert!((swapped.stages[0].optimizer as f64 - optimizer * 2.0 / 16.0).abs() <= 1.0);
    assert_eq!(swapped.stages[0].weights, kept.stages[0].weights);
    // The host holds every device's share, pinned, with DeepSpeed's 1.5 buffer factor. The host
    // figure shards every parameter over TP; the device keeps the norms whole (a 1.4e-4 difference).
    assert_eq!(kept.host_bytes_per_node, 0);
    let expected = optimizer * 8.0 * 1.5;
    let ratio = swapped.host_bytes_per_node as f64 / expected;
    assert!((ratio - 1.0).abs() < 1e-3, "{ratio}");
    // Without the distributed optimizer MindSpeed refuses the switch and nothing moves.
    let text = r#"{"model": "qwen2.5-32b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full",
        "cluster": {"nodes": 2}, "parallel": {"tp": 8, "swap_optimizer": true}}"#;
    assert_eq!(evaluate(&Plan::from_json(text).unwrap()).memory.host_bytes_per_node, 0);
}

#[test]
fn layers_ratio_checkpoints_that_share_of_the_layers() {
    // Ascend's LLaMA-Factory `recompute_layers_ratio`: the first half of Qwen2.5-7B's 28 layers
    // keep their inputs only, the other 14 everything.
    let activations = |recompute: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "method": "sft-full", "parallel": {{"zero_stage": 3}},
                "recompute": {recompute}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].activations as f64
    };
    let full = activations(r#"{"granularity": "full"}"#);
    let none = activations(r#"{"granularity": "none"}"#);
    let half = activations(r#"{"granularity": "full", "layers_ratio": 0.5}"#);
    assert!(full < half && half < none, "{full} {half} {none}");
    // Half the layers' saved tensors (14 of 28), plus the inputs of the others and one layer's
    // working set: each layer the ratio leaves out of recomputation adds the same bytes, so 14 of
    // them add twice what 7 do (ratio 0.75). (The block method's `num_layers` is Megatron's and
    // plays no part on LLaMA-Factory: knobs::effective.)
    let three_quarters = activations(r#"{"granularity": "full", "layers_ratio": 0.75}"#);
    assert!(full < three_quarters && three_quarters < half, "{full} {three_quarters} {half}");
    assert_eq!(half - full, 2.0 * (three_quarters - full));
}

#[test]
fn dynamic_batch_packs_to_the_token_budget() {
    // VeRL `use_dynamic_bsz`: a device's micro-batch is up to `ppo_max_token_len_per_gpu` tokens.
    let activations = |rl: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {{"zero_stage": 3}},
                "recompute": {{"granularity": "none"}}, "attention": "flash", "rl": {rl}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].activations as f64
    };
    let small = activations(r#"{"dynamic_batch": true, "max_tokens_per_device": 8192}"#);
    let large = activations(r#"{"dynamic_batch": true, "max_tokens_per_device": 16384}"#);
    // FlashAttention keeps nothing quadratic: twice the tokens, twice the activations.
    assert!((large / small - 2.0).abs() < 1e-9, "{}", large / small);
    // One 1536-token sequence per micro-batch without packing: less than 8192 packed tokens.
    assert!(activations("{}") < small);
}

#[test]
fn overheads_are_named_and_configurable() {
    let plan =
        Plan::from_json(r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "cluster": {"nodes": 2}}"#)
            .unwrap();
    // HCCL_BUFFSIZE defaults to 200 MB per communication group; this plan has one group (dp 16).
    // LLaMA-Factory without DeepSpeed runs PyTorch DDP, whose buckets hold a second copy of the
    // gradients: here the LoRA adapters', fp32.
    let report = evaluate(&plan);
    let stage = &report.memory.stages[0];
    assert_eq!(stage.buffers, (200 << 20) + 4 * report.params.lora);
    assert_eq!(stage.overhead, memory::RUNTIME_CONTEXT_BYTES);
    let tuned = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "cluster": {"nodes": 2},
            "overheads": {"runtime_context_mib": 2048, "comm_buffer_mib": 50, "allocator_reserve": 0.1}}"#,
    )
    .unwrap();
    let mem = evaluate(&tuned).memory;
    assert_eq!(
        (mem.stages[0].overhead, mem.stages[0].buffers),
        (2048 << 20, (50 << 20) + 4 * report.params.lora)
    );
    assert_eq!(mem.usable_bytes, ((64u64 << 30) as f64 * 0.9) as u64);
    assert_eq!(Plan::from_file(&tuned.to_file()).unwrap(), tuned);
    assert!(Plan::from_json(r#"{"model": "gpt2", "overheads": {"allocator_reserve": 0.9}}"#).is_err());
}

#[test]
fn verl_trains_on_prompt_and_response_and_ulysses_splits_them() {
    // VeRL (docs/perf/perf_tuning.rst): long responses need ulysses_sequence_parallel_size; each
    // device then holds max_response_length / sp of the sequence. The plan calls that degree cp.
    let activations = |cp: u32, response: u32| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {{"cp": {cp}, "zero_stage": 3}},
                "recompute": {{"granularity": "none"}}, "rl": {{"max_prompt_length": 1024, "max_response_length": {response}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].activations as f64
    };
    let long = activations(1, 15360);
    assert!(activations(1, 1024) < long / 4.0, "activations grow with the response");
    let split = activations(8, 15360);
    assert!((long / split - 8.0).abs() < 0.01, "ulysses 8 divides sdpa activations by 8: {}", long / split);
}

#[test]
fn the_rollout_engine_sizes_its_kv_cache() {
    // Qwen2.5-7B: 28 layers, 4 KV heads of 128 (config.json). One token's K and V in bf16:
    // 28 × 2 × 4 × 128 × 2 = 57,344 bytes (exact count). 256 sequences × (512 + 1024) tokens.
    let plan = Plan::from_json(r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"}"#).unwrap();
    let r = memory::rollout_memory(&plan);
    assert_eq!(r.kv_cache_needed_bytes, 256 * 1536 * 57_344);
    assert_eq!(r.weights_bytes, 7_615_616_512 * 2);
    assert_eq!(r.engine_bytes, ((80u64 << 30) as f64 * 0.6) as u64);
    assert_eq!(r.kv_cache_bytes, r.engine_bytes - r.weights_bytes);
    // Rollout TP 2 halves the weights and the KV heads each device caches.
    let tp2 =
        Plan::from_json(r#"{"model": "qwen2.5-7b", "method": "grpo", "rl": {"rollout_tp": 2}}"#).unwrap();
    let r2 = memory::rollout_memory(&tp2);
    assert_eq!(
        (r2.weights_bytes, r2.kv_cache_needed_bytes),
        (r.weights_bytes / 2, r.kv_cache_needed_bytes / 2)
    );
    assert!(evaluate(&plan).memory.rollout.is_some());
    assert!(evaluate(&Plan::first_visit()).memory.rollout.is_none());
}

#[test]
fn uneven_stages_follow_megatrons_first_and_last_rule() {
    // 61 layers on 8 stages: the middle six take ⌈61 ÷ 8⌉ = 8, first and last share 13 as 6 and 7,
    // which `--decoder-first/last-pipeline-num-layers` can express (middle stages even).
    let sizes: Vec<u64> = layout::stage_layers(61, 8).iter().map(|r| r.end - r.start).collect();
    assert_eq!(sizes, [6, 8, 8, 8, 8, 8, 8, 7]);
    // Two stages: no middle, the first takes the smaller half.
    let sizes: Vec<u64> = layout::stage_layers(61, 2).iter().map(|r| r.end - r.start).collect();
    assert_eq!(sizes, [30, 31]);
    // Layers that divide stay even; 10 layers on 8 stages have no first/last layout (⌈10/8⌉ = 2
    // for six middle stages is 12): the first stages take one more.
    assert_eq!(layout::stage_layers(64, 8).iter().map(|r| r.end - r.start).collect::<Vec<_>>(), [8; 8]);
    assert_eq!(layout::uneven_sizes(10, 8), None);
    assert_eq!(layout::stage_layers(10, 8).iter().map(|r| r.end - r.start).sum::<u64>(), 10);
    // Every layout covers every layer once, in order.
    for (n, pp) in [(61, 4), (61, 16), (95, 8), (80, 3), (7, 7)] {
        let ranges = layout::stage_layers(n, pp);
        assert_eq!(ranges.first().map(|r| r.start), Some(0));
        assert_eq!(ranges.last().map(|r| r.end), Some(n));
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start && !w[1].is_empty()), "{n}/{pp}");
    }
}

/// Megatron FSDP shards what its strategy names over the data-parallel ranks: Llama-3-8B at 8K on
/// 8 × H100 without recompute does not fit with the distributed optimizer alone (bf16 weights and
/// fp32 gradients whole: 6 B per parameter before activations) and fits with
/// `optim_grads_params` (each device keeps 1/8 of the states and two layers in flight), a setup
/// run every day. Each strategy holds no more than the one before it.
#[test]
fn megatron_fsdp_shards_what_its_strategy_names() {
    let peak = |fsdp: &str, dist: bool| {
        let r = evaluate(
            &Plan::from_json(&format!(
                r#"{{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain",
                    "parallel": {{"fsdp": "{fsdp}", "distributed_optimizer": {dist}}},
                    "recompute": {{"granularity": "none"}}, "batch": {{"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}}}"#
            ))
            .unwrap(),
        );
        (r.memory.peak_bytes, r.memory.fits, r.memory.stages[0].clone())
    };
    let (dist, dist_fits, d) = peak("none", true);
    let (optim, _, o) = peak("optim", false);
    let (grads, _, g) = peak("optim_grads", false);
    let (full, full_fits, f) = peak("optim_grads_params", false);
    assert!(!dist_fits && full_fits, "{dist} / {full}");
    assert_eq!(optim, dist, "optim is the distributed optimizer's memory");
    assert!(grads < optim && full < grads);
    // Gradients: fp32, 4 B per parameter whole, an eighth sharded.
    assert_eq!(o.gradients, d.gradients);
    assert_eq!(g.gradients, o.gradients / 8);
    assert!(f.weights < o.weights / 4, "{} vs {}", f.weights, o.weights);
    let (torch, torch_fits, _) = peak("torch_fsdp2", false);
    assert!(torch_fits && torch == full);
}

/// Llama 3.1 405B's published layout: 126 layers over PP 16 with the embedding and the loss
/// counted as layers (`--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split`):
/// 128 ÷ 16 = 8 per stage, so the first and last stages hold 7 transformer layers and the others 8,
/// and VPP 8 runs one per virtual chunk. Without the flags the plan breaks Megatron's split rule.
#[test]
fn the_embedding_and_the_loss_can_count_as_layers() {
    let text = |account: bool| {
        format!(
            r#"{{"model": "llama-3.1-405b", "cluster": {{"nodes": 128}}, "framework": "megatron", "method": "pretrain",
                "parallel": {{"tp": 8, "pp": 16, "vpp": 8, "account_embedding_loss": {account}, "sequence_parallel": true,
                "distributed_optimizer": true}}, "batch": {{"micro_batch": 1, "global_batch": 1024, "seq_len": 8192}}}}"#
        )
    };
    let r = evaluate(&Plan::from_json(&text(true)).unwrap());
    let layers: Vec<u64> = r.memory.stages.iter().map(|s| s.n_layers).collect();
    assert_eq!(layers.len(), 16);
    assert_eq!((layers[0], layers[1], layers[15]), (7, 8, 7));
    assert_eq!(layers.iter().sum::<u64>(), 126);
    assert!(
        !r.findings.iter().any(|f| f.code == "parallel.layers_pp" || f.code == "parallel.vpp_layers"),
        "{:?}",
        r.findings
    );
    let without = evaluate(&Plan::from_json(&text(false)).unwrap());
    let f = without
        .findings
        .iter()
        .find(|f| f.code == "parallel.layers_pp")
        .expect("126 layers do not split over 16");
    assert_eq!(f.fix.as_ref().map(|x| x.field.path()), Some("parallel.account_embedding_loss"));
}

/// fp8 training keeps quantized copies of every linear weight beside the bf16 weights: row-wise
/// for the forward and column-wise for the backward, cached across micro-batches (Transformer
/// Engine `linear.py` `quantize_weight`), 1 byte each. Llama 3 8B's linear weights per layer
/// (its config.json): q and o 4096 × 4096, k and v 4096 × 1024, gate, up and down 4096 × 14336;
/// 32 layers over TP 2 on one stage. MXFP8 adds a byte of scale per 32 elements (OCP MX v1.0).
#[test]
fn fp8_weights_are_copied_row_and_column_wise() {
    let weights = |precision: &str| {
        let text = format!(
            r#"{{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "hardware": "b200-180g",
                "precision": "{precision}", "parallel": {{"tp": 2, "sequence_parallel": true, "distributed_optimizer": true}},
                "batch": {{"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].weights as f64
    };
    let linear_per_layer = (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336) as f64;
    let on_device = 32.0 * linear_per_layer / 2.0;
    assert_eq!(weights("fp8") - weights("bf16"), 2.0 * on_device);
    let mx = weights("mxfp8") - weights("bf16");
    assert!((mx - 2.0 * (1.0 + 1.0 / 32.0) * on_device).abs() < 2.0, "{mx}");
}

/// `--recompute-modules mlp` frees each dense layer's MLP inner tensors: SwiGLU's gate/up output
/// and product, 6f bytes per token (Korthikanti et al. 2022 §4.1 with a fused SwiGLU), and `layernorm`
/// the two norms' outputs, 4h; the time reruns the MLP's GEMMs. `--cpu-offloading-num-layers N`
/// moves N layers' activations to the host but for one layer's copy window.
#[test]
fn recompute_modules_and_activation_offload() {
    let plan = |recompute: &str| {
        Plan::from_json(&format!(
            r#"{{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 1}},
                "parallel": {{"distributed_optimizer": true}}, "recompute": {recompute},
                "batch": {{"micro_batch": 1, "global_batch": 8, "seq_len": 4096}}}}"#
        ))
        .unwrap()
    };
    let report = |recompute: &str| evaluate(&plan(recompute));
    let attn = report(r#"{"granularity": "selective"}"#);
    let mlp = report(r#"{"granularity": "selective", "modules": ["core_attn", "mlp"]}"#);
    let norms = report(r#"{"granularity": "selective", "modules": ["core_attn", "layernorm"]}"#);
    let (layers, tokens, h, f) = (32.0, 4096.0, 4096.0, 14336.0);
    let freed = |r: &trainplan_core::report::Report| {
        attn.memory.stages[0].activations as f64 - r.memory.stages[0].activations as f64
    };
    assert!((freed(&mlp) / (layers * tokens * 6.0 * f) - 1.0).abs() < 1e-6, "{}", freed(&mlp));
    assert!((freed(&norms) / (layers * tokens * 4.0 * h) - 1.0).abs() < 1e-6, "{}", freed(&norms));
    // The MLP reruns: more recomputation time and hardware FLOPs, the model FLOPs unchanged.
    assert!(attn.time.breakdown.recompute_seconds < mlp.time.breakdown.recompute_seconds);
    assert!(attn.time.hardware_flops_per_step < mlp.time.hardware_flops_per_step);
    assert_eq!(attn.time.model_flops_per_step, mlp.time.model_flops_per_step);
    // The modules round-trip through the plan file; the default is not written.
    assert_eq!(
        Plan::from_file(&plan(r#"{"granularity": "selective", "modules": ["mlp", "core_attn"]}"#).to_file())
            .unwrap(),
        plan(r#"{"granularity": "selective", "modules": ["core_attn", "mlp"]}"#)
    );
    assert!(
        !serde_json::to_string(&plan(r#"{"granularity": "selective"}"#).to_file())
            .unwrap()
            .contains("modules")
    );
    assert!(Plan::from_json(r#"{"model": "gpt2", "recompute": {"modules": ["attention"]}}"#).is_err());

    // Offloading 8 of 32 layers: 7 layers' activations leave the device (one stays as the window).
    let kept = report(r#"{"granularity": "none"}"#);
    let offloaded = report(r#"{"granularity": "none", "cpu_offload_layers": 8}"#);
    let per_layer = offloaded.memory.stages[0].activations as f64;
    let (a, b) = (kept.memory.stages[0].activations as f64, per_layer);
    let layer = (a - b) / 7.0;
    // A layer without recomputation: 8h + 2(q + 2kv) + 2q + 4a + 6f bytes per token (q = h, kv = h/4, 32 heads).
    let expected = tokens * (8.0 * h + 2.0 * (h + 2.0 * 1024.0) + 2.0 * h + 4.0 * 32.0 + 6.0 * f);
    assert!((layer / expected - 1.0).abs() < 1e-6, "{layer} vs {expected}");
    assert!(0 < offloaded.memory.host_bytes_per_node && kept.memory.host_bytes_per_node == 0);
    assert!(kept.time.step_seconds <= offloaded.time.step_seconds);
    assert!(offloaded.findings.iter().all(|f| !f.code.as_str().starts_with("recompute.cpu_offload")));
}

/// fp8 linear layers keep their inputs quantized for the weight gradient (Transformer Engine
/// `linear.py` saves the quantized input, column-wise data only): 1 byte per element instead of 2
/// for the QKV input (h), the output projection's (q), the MLP's (h) and FC2's (f, the SwiGLU
/// product). Llama 3 8B (h = q = 4096, f = 14336), TP 1, 4,096 tokens: 26,624 bytes per token less.
#[test]
fn fp8_layers_keep_their_linear_inputs_in_one_byte() {
    let arch = catalog::model("llama-3-8b").unwrap().arch.clone();
    let bytes = |fp8_inputs: bool| {
        let case = memory::LayerCase {
            megatron: true,
            attention: AttentionImpl::Flash,
            seq_len: 4096,
            micro_batch: 1,
            tp: 1,
            sequence_parallel: false,
            saved: memory::Saved::default(),
            fp8_inputs,
            liger: false,
        };
        memory::layer_activation_bytes(&arch, false, &case)
    };
    assert_eq!(bytes(false) - bytes(true), 26_624.0 * 4096.0);
}

#[test]
fn distributed_checkpoints_keep_a_tp_share_of_each_input() {
    // Qwen2.5-7B (hidden 3,584, 28 layers; its config.json), Megatron TP 4 without sequence
    // parallelism, full recomputation one layer per checkpoint, 4,096 tokens a micro-batch: each
    // checkpoint keeps its 2 × 4,096 × 3,584-byte input, split four ways with
    // `--distribute-saved-activations` (Megatron `CheckpointFunction`'s 1-D split over TP), and so
    // is the embedding's output on this first stage, the first checkpoint's input tensor itself.
    let plan_of = |distribute: bool, num_layers: u32| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain", "parallel": {{"tp": 4}},
                "recompute": {{"granularity": "full", "num_layers": {num_layers},
                               "distribute_saved_activations": {distribute}}},
                "batch": {{"micro_batch": 1, "seq_len": 4096}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap())
    };
    let plan = |distribute: bool| plan_of(distribute, 1);
    let (kept, split) = (plan(false), plan(true));
    let input = 2 * 4096 * 3584;
    let saved = kept.memory.stages[0].activations - split.memory.stages[0].activations;
    assert!(saved.abs_diff((28 + 1) * input * 3 / 4) <= 29, "{saved}");
    // Only the activations move. The step grows by the all-gather before each recomputed forward,
    // on the critical path as TP time: one all-gather of the input per layer beside the six
    // all-reduces of the same bytes (forward, backward, recomputed forward), so less than a sixth.
    assert_eq!(kept.memory.stages[0].weights, split.memory.stages[0].weights);
    let (kept_tp, split_tp) = (kept.time.breakdown.tp_comm_seconds, split.time.breakdown.tp_comm_seconds);
    let step_grew = split.time.step_seconds - kept.time.step_seconds;
    assert!(0.0 < step_grew && (step_grew - (split_tp - kept_tp)).abs() < 1e-9 * kept.time.step_seconds);
    assert!(split_tp - kept_tp < kept_tp / 6.0);
    // Uniform checkpoints of two layers gather once per two layers: half the added TP time.
    let tp_of = |distribute| plan_of(distribute, 2).time.breakdown.tp_comm_seconds;
    let added_by_pairs = tp_of(true) - tp_of(false);
    assert!((added_by_pairs / (split_tp - kept_tp) - 0.5).abs() < 1e-9, "{added_by_pairs}");
    assert!(kept.findings.iter().all(|f| !f.code.as_str().starts_with("recompute.distribute")));
    assert!(split.findings.iter().all(|f| !f.code.as_str().starts_with("recompute.distribute")));
}

/// Every rank goes through every RL phase, so each phase's peak is the highest over the pipeline's
/// ranks: the first rank, with the embedding's weights, can peak in rollout while a later one, with
/// the head's logits, peaks in the update. Taken at the update's highest rank alone, the rollout
/// peak fell as the micro-batch grew (Qwen3-4B PPO on PP 4, DualPipeV: 83.3 GB at micro-batch 1,
/// 75.1 GB at 4, with the first rank's rollout at 83.3 GB in both).
#[test]
fn rl_phases_peak_on_their_own_rank() {
    let plan = |micro_batch: u32| {
        Plan::from_json(&format!(
            r#"{{"model": "qwen3-4b", "framework": "mindspeed-llm", "method": "ppo",
                "parallel": {{"pp": 4, "distributed_optimizer": true, "overlap_param_gather": true, "schedule": "dualpipev"}},
                "recompute": {{"granularity": "none"}}, "batch": {{"micro_batch": {micro_batch}, "global_batch": 40, "seq_len": 1024}}}}"#
        ))
        .unwrap()
    };
    let mut peaks = Vec::new();
    for micro_batch in [1, 2, 4] {
        let mem = evaluate(&plan(micro_batch)).memory;
        let rollout = mem.phases.iter().find(|p| p.phase == "rollout").expect("RL has a rollout phase");
        let engine = rollout.parts.iter().find(|p| p.part == "engine").expect("the rollout engine").bytes;
        for (rank, stage) in mem.stages.iter().enumerate() {
            // Each rank holds at least its weights and optimizer states, its reference's weights
            // and (PPO) a critic's weights and optimizer states beside the engine.
            let held = 3 * stage.weights + 2 * stage.optimizer + engine;
            assert!(
                held <= rollout.total,
                "micro-batch {micro_batch}, rank {rank}: {held} > {}",
                rollout.total
            );
        }
        peaks.push(mem.peak_bytes);
    }
    assert!(peaks.is_sorted(), "the peak fell as the micro-batch grew: {peaks:?}");
}

#[test]
fn the_rollout_engine_spreads_whole_experts_over_its_ep() {
    // Qwen3-235B-A22B (config.json): 94 layers of 128 routed experts, each a gated MLP of hidden
    // 4096 and moe_intermediate_size 1536, so 3 × 4096 × 1536 parameters an expert in a layer.
    let expert = 3 * 4096 * 1536u64;
    let experts = 94 * 128 * expert;
    let at = |tp: u32, ep: u32| {
        let text = format!(
            r#"{{"model": "qwen3-235b-a22b", "framework": "verl", "method": "grpo", "cluster": {{"nodes": 8}},
                "rl": {{"rollout_tp": {tp}, "rollout_ep": {ep}}}}}"#
        );
        memory::rollout_memory(&Plan::from_json(&text).unwrap()).weights_bytes
    };
    let total = trainplan_core::model::count_params(
        &Plan::from_json(r#"{"model": "qwen3-235b-a22b"}"#).unwrap().model.arch,
    )
    .total();
    // Without EP the TP splits everything; with EP 64, each rank holds ⌈128 ÷ 64⌉ = 2 whole experts
    // a layer and an 8th of the rest; EP 48 leaves some ranks ⌈128 ÷ 48⌉ = 3.
    assert_eq!(at(8, 1), total * 2 / 8);
    assert_eq!(at(8, 64), (total - experts) * 2 / 8 + 2 * 94 * expert * 2);
    assert_eq!(at(8, 48), (total - experts) * 2 / 8 + 3 * 94 * expert * 2);
    assert_eq!(at(1, 64), (total - experts) * 2 + 2 * 94 * expert * 2);
    // The engine's 48 GB of an 80 GB H100 (0.6) cannot hold 58.8 GB; with EP 64 the weights take 9.1 GB.
    assert!(48e9 < at(8, 1) as f64 && (at(8, 64) as f64) < 9.2e9);
}

#[test]
fn ddp_buckets_hold_a_second_copy_of_the_gradients() {
    // LLaMA-Factory without DeepSpeed on several devices is PyTorch DDP, whose all-reduce buckets
    // copy every gradient unless `gradient_as_bucket_view` (off by default, and left off by
    // transformers' Trainer): "the saved memory size will be equal to the total gradients size"
    // (torch.nn.parallel.DistributedDataParallel). Full fine-tuning's gradients are fp32.
    let stage = |devices: u32, zero: u8| {
        let text = format!(
            r#"{{"model": "qwen2.5-1.5b", "framework": "llamafactory", "method": "sft-full",
                "cluster": {{"nodes": 1, "devices_per_node": {devices}}}, "parallel": {{"zero_stage": {zero}}}}}"#
        );
        let report = evaluate(&Plan::from_json(&text).unwrap());
        (report.memory.stages[0].clone(), report.params.total)
    };
    let ((one, params), (two, _)) = (stage(1, 0), stage(2, 0));
    assert_eq!(one.buffers, 0);
    // One NCCL group (128 MiB) and the buckets.
    assert_eq!(two.buffers, (128 << 20) + 4 * params);
    // DeepSpeed (ZeRO 1) has its own reduce buckets, counted with its states: no DDP copy.
    let (zero1, _) = stage(2, 1);
    assert_eq!(zero1.buffers, 128 << 20);
}

#[test]
fn liger_fused_loss_holds_a_chunk_of_logits_not_the_micro_batch() {
    // LLaMA-Factory's `enable_liger_kernel` patches Liger's fused linear cross entropy into SFT
    // (`require_logits` is false for stages `pt` and `sft`, src/llamafactory/model/loader.py). It
    // runs the head and the loss in chunks of next_power_of_2(⌈b·s / ⌈V / h⌉⌉) tokens and keeps
    // the hidden state's gradient and an fp32 loss per token
    // (liger_kernel/ops/fused_linear_cross_entropy.py). Qwen2.5-7B (V 152,064, h 3,584) at 2 × 4,096
    // tokens: ⌈152,064 / 3,584⌉ = 43, ⌈8,192 / 43⌉ = 191 → chunks of 256 tokens.
    let stage = |liger: bool, zero: u8, method: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "llamafactory", "method": "{method}", "liger_kernel": {liger},
                "parallel": {{"zero_stage": {zero}}}, "batch": {{"micro_batch": 2, "global_batch": 64, "seq_len": 4096}}}}"#
        );
        let report = evaluate(&Plan::from_json(&text).unwrap());
        (report.memory.stages[0].clone(), report.memory.peak_moment)
    };
    let (tokens, v, h) = (2 * 4096u64, 152_064u64, 3_584u64);
    let (chunk_logits, grad_input, loss) = (256 * v * 2, tokens * h * 2, tokens * 4);
    // DeepSpeed's additive terms: the fused loss's buffers, where the HF Trainer's loss held 12 bytes
    // a logit.
    let (with, _) = stage(true, 2, "lora");
    let (without, _) = stage(false, 2, "lora");
    assert_eq!(with.logits, chunk_logits + grad_input + loss);
    assert_eq!(without.logits, 12 * tokens * v);
    // Plain PyTorch: the loss's backward no longer peaks; the last layer's backward does, holding the
    // hidden state's gradient and no logit.
    let (with, moment) = stage(true, 0, "lora");
    let (without, before) = stage(false, 0, "lora");
    assert_eq!((moment, before), (Some("layer_backward"), Some("loss_backward")));
    assert_eq!(with.logits, grad_input);
    assert!(with.total + 12 * tokens * v / 2 < without.total, "{} vs {}", with.total, without.total);
    // DPO asks for whole logits: Liger's plain cross entropy, which its loss never calls.
    let (dpo_with, _) = stage(true, 2, "dpo");
    let (dpo_without, _) = stage(false, 2, "dpo");
    assert_eq!(dpo_with.logits, dpo_without.logits);
}

#[test]
fn liger_rms_norm_and_swiglu_keep_less_for_backward() {
    // Per token, HF's RMSNorm keeps an fp32 upcast, the normalized and the weighted outputs and an
    // fp32 factor (8h + 4, measured); Liger's keeps its input and the factor
    // (`LigerRMSNormFunction.forward`: `save_for_backward(X, W, RSTD)`) beside the weighted output,
    // which the next linear keeps: 4h + 4. HF's gated MLP keeps the gate's output, the
    // activation's, the up projection's and the product (8f); Liger's keeps the gate's and the up
    // projection's (`LigerSiLUMulFunction.forward`: `save_for_backward(a, b)`) and the product:
    // 6f (liger-kernel 0.8.5, `ops/rms_norm.py`, `ops/swiglu.py`). Two norms a layer: 8h + 2f
    // less. Qwen2.5-7B (h 3,584, f 18,944, 28 layers), LoRA on LLaMA-Factory without
    // recomputation, 2 × 4,096 tokens a micro-batch; DPO alike, since only its loss differs, over
    // twice the sequences: each pair's chosen and rejected response (LLaMA-Factory
    // `PairwiseDataCollatorWithPadding`).
    let (h, f, layers) = (3_584u64, 18_944u64, 28u64);
    for (method, tokens) in [("lora", 2 * 4_096u64), ("dpo", 2 * 2 * 4_096)] {
        let stage = |liger: bool| {
            let text = format!(
                r#"{{"model": "qwen2.5-7b", "framework": "llamafactory", "method": "{method}", "liger_kernel": {liger},
                    "recompute": {{"granularity": "none"}}, "batch": {{"micro_batch": 2, "global_batch": 64, "seq_len": 4096}}}}"#
            );
            evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].clone()
        };
        let (with, without) = (stage(true), stage(false));
        assert_eq!(without.activations - with.activations, layers * tokens * (8 * h + 2 * f), "{method}");
    }
    // With the layers recomputed, only the one being recomputed keeps its tensors: one layer's less
    // (under DeepSpeed, whose terms add up; plain PyTorch's peak moves to another moment).
    let recomputed = |liger: bool| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "llamafactory", "method": "lora", "liger_kernel": {liger},
                "parallel": {{"zero_stage": 2}}, "batch": {{"micro_batch": 2, "global_batch": 64, "seq_len": 4096}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].activations
    };
    assert_eq!(recomputed(false) - recomputed(true), 2 * 4_096 * (8 * h + 2 * f));
}

#[test]
fn qlora_quantizes_the_layers_linear_weights_alone() {
    // bitsandbytes replaces `nn.Linear` modules and transformers keeps the output head out of it:
    // Qwen2.5-7B's embedding and head (152,064 × 3,584 each, untied) and its RMSNorms (28 × 2 + 1
    // of 3,584) stay bf16, the other 6,525,417,472 parameters of its 7,615,616,512 take NF4
    // (4.127 bits with double quantization; the q, k, v biases among them, 129,024, stay 16-bit in
    // bitsandbytes' `Linear4bit`, 0.2 MB not counted), and the fp32 adapters 4 bytes each.
    let report = evaluate(&Plan::from_json(r#"{"model": "qwen2.5-7b", "method": "qlora"}"#).unwrap());
    let (embedding, norms) = (152_064u64 * 3_584, (28 * 2 + 1) * 3_584u64);
    let layers = 7_615_616_512 - 2 * embedding - norms;
    assert_eq!(layers, 6_525_417_472);
    let expected =
        4.127 / 8.0 * layers as f64 + 2.0 * (2 * embedding + norms) as f64 + 4.0 * report.params.lora as f64;
    let weights = report.memory.stages[0].weights as f64;
    assert!((weights - expected).abs() < 16.0, "{weights} against {expected}");
}

#[test]
fn qlora_leaves_fused_experts_16_bit() {
    // Under transformers 5 the routed experts are fused 3-D parameters and the router a
    // `TopKRouter`, neither an `nn.Linear`: bitsandbytes 0.50.2 leaves both bf16 (seen on
    // Qwen3-MoE in transformers 5.6.0: `Qwen3MoeExperts`, `Qwen3MoeTopKRouter` unconverted, every
    // projection of the attention `Linear4bit`). Qwen3-30B-A3B QLoRA: NF4 for the attention, bf16
    // for the rest, fp32 adapters.
    let report = evaluate(&Plan::from_json(r#"{"model": "qwen3-30b-a3b", "method": "qlora"}"#).unwrap());
    let p = &report.params;
    let bf16 = p.experts + p.router + p.norms + p.embedding + p.head;
    assert_eq!(p.attention + bf16, p.total);
    let expected = 4.127 / 8.0 * p.attention as f64 + 2.0 * bf16 as f64 + 4.0 * p.lora as f64;
    let weights = report.memory.stages[0].weights as f64;
    assert!((weights - expected).abs() < 16.0, "{weights} against {expected}");
}

#[test]
fn liger_patches_no_model_of_an_unknown_type() {
    // LLaMA-Factory and VeRL pick Liger's patch by model_type: a config of a type Liger does not know
    // trains unpatched, though the planner reads it Llama-like. Qwen2.5-7B's config as "llama" and
    // as a type nobody knows, LoRA with Liger asked for and not.
    let config = trainplan_core::catalog::CONFIGS.iter().find(|c| c.id == "qwen2.5-7b").unwrap().config;
    let peak = |model_type: &str, liger: bool| {
        let mut value: serde_json::Value = serde_json::from_str(config).unwrap();
        value["model_type"] = serde_json::json!(model_type);
        let text = format!(
            r#"{{"model": {{"hf_config": {value}}}, "framework": "llamafactory", "method": "lora", "liger_kernel": {liger}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.peak_bytes
    };
    assert!(peak("llama", true) < peak("llama", false));
    assert_eq!(peak("my_decoder", true), peak("my_decoder", false));
    assert_eq!(peak("my_decoder", false), peak("llama", false));
}

#[test]
fn liger_fused_experts_keep_their_gate_and_up_outputs_alone() {
    // Under transformers 5 Liger replaces the batched experts with its fused MoE
    // (`LigerExperts`, liger-kernel 0.8.5 `ops/fused_moe.py`, `LigerFusedMoEFunction.forward`),
    // which gathers the tokens inside the kernel and recomputes the down projection's output:
    // per routed copy it keeps the gate and up outputs (`pre_act`, 2 × 2f_e), the fp32 routing
    // weight and three int32 indices, 4f_e + 16, where HF's experts keep a gathered input, an
    // output (2h each) and 8f_e. Qwen3-30B-A3B (h 2,048, f_e 768, top-8 of 128 experts, 48 MoE
    // layers), LoRA on LLaMA-Factory without recomputation, 2 × 4,096 tokens: with the norms'
    // 8h, 8h + 8(4h + 8f_e) − 8(4f_e + 16) less a layer and token.
    let (h, f_e, k, layers, tokens) = (2_048u64, 768u64, 8u64, 48u64, 2 * 4_096u64);
    let stage = |liger: bool| {
        let text = format!(
            r#"{{"model": "qwen3-30b-a3b", "framework": "llamafactory", "method": "lora", "liger_kernel": {liger},
                "recompute": {{"granularity": "none"}}, "batch": {{"micro_batch": 2, "global_batch": 64, "seq_len": 4096}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].clone()
    };
    let per_token = 8 * h + k * (4 * h + 8 * f_e) - k * (4 * f_e + 16);
    assert_eq!(stage(false).activations - stage(true).activations, layers * tokens * per_token);
}

#[test]
fn liger_patches_gpt_oss_norms_and_leaves_its_experts() {
    // LLaMA-Factory hands `gpt_oss` to Liger (`apply_liger_kernel_to_gpt_oss`, liger-kernel 0.8.5,
    // as VeRL's `_apply_liger_kernel_to_instance` does), whose patch fuses the RMSNorms, the rotary
    // embedding and the loss, and leaves the experts' clamped SwiGLU as it is (`swiglu=False`).
    // gpt-oss-20b (h 2,880, 24 layers, every one MoE), LoRA without recomputation, 2 × 4,096
    // tokens: the two norms' 8h a layer and token less, the experts' bytes unchanged.
    let (h, layers, tokens) = (2_880u64, 24u64, 2 * 4_096u64);
    for framework in ["llamafactory", "verl"] {
        let method = if framework == "verl" { "grpo" } else { "lora" };
        let stage = |liger: bool| {
            let text = format!(
                r#"{{"model": "gpt-oss-20b", "framework": "{framework}", "method": "{method}", "liger_kernel": {liger},
                    "recompute": {{"granularity": "none"}}, "batch": {{"micro_batch": 2, "global_batch": 64, "seq_len": 4096}},
                    "rl": {{"max_prompt_length": 1024, "max_response_length": 3072, "n_samples_per_prompt": 1, "dynamic_batch": false}}}}"#
            );
            evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].clone()
        };
        let saved = stage(false).activations - stage(true).activations;
        assert_eq!(saved, layers * tokens * 8 * h, "{framework}");
    }
}

#[test]
fn liger_changes_nothing_where_llamafactory_does_not_patch() {
    // DeepSeek-V2's `deepseek_v2` is not among the model types LLaMA-Factory hands to Liger
    // (src/llamafactory/model/model_utils/liger_kernel.py warns and trains unpatched), GLM-4-9B's
    // `glm` not among those Liger patches an instance of for VeRL (`MODEL_TYPE_TO_APPLY_LIGER_FN`),
    // and Megatron has no such key.
    for (model, framework, method) in [
        ("deepseek-v2-lite", "llamafactory", "sft-full"),
        ("glm-4-9b", "verl", "grpo"),
        // Neither lists `glm4_moe` (LLaMA-Factory 0.9.5, liger-kernel 0.8.5).
        ("glm-4.5-air", "llamafactory", "lora"),
        ("glm-4.5-air", "verl", "grpo"),
        ("qwen2.5-7b", "megatron", "sft-full"),
    ] {
        let report = |liger: bool| {
            let text = format!(
                r#"{{"model": "{model}", "framework": "{framework}", "method": "{method}", "liger_kernel": {liger}}}"#
            );
            let r = evaluate(&Plan::from_json(&text).unwrap());
            (r.memory.stages.clone(), r.time.step_seconds)
        };
        assert_eq!(report(true), report(false), "{model} on {framework}");
    }
}

/// VeRL's log-probabilities go through a fused cross entropy that keeps the bf16 logits alone
/// (verl 0.9.1 `logprobs_from_logits`: flash-attn's `cross_entropy_loss` with `inplace_backward`,
/// torch_npu's `npu_cross_entropy_loss`): 2 bytes per token and vocabulary entry in the update,
/// and three bf16 copies in the log-prob phase, where the old log-probabilities take the entropy
/// (`entropy_from_logits`: the softmax and its product with the logits). The counts are exact:
/// a micro-batch of 16 sequences × (1,024 + 2,048) tokens × Qwen2.5-7B's 152,064 entries.
#[test]
fn verl_keeps_its_logits_in_bf16_alone() {
    let plan = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3},
            "rl": {"max_prompt_length": 1024, "max_response_length": 2048}, "batch": {"micro_batch": 16}}"#,
    )
    .unwrap();
    let mem = evaluate(&plan).memory;
    let elements = 16 * (1024 + 2048) * 152_064u64;
    let logits = |phase: &str| {
        let parts = &mem.phases.iter().find(|p| p.phase == phase).unwrap().parts;
        parts.iter().find(|x| x.part == "logits").map_or(0, |x| x.bytes)
    };
    assert_eq!(logits("update"), 2 * elements);
    assert_eq!(logits("log_prob"), 6 * elements);
}

/// VeRL's log-probability forwards take their own micro-batch (`log_prob_micro_batch_size_per_gpu`,
/// larger than the update's in 24 of its example scripts: examples/grpo_trainer/run_qwen3-8b_npu.sh
/// 32 against 10, run_deepseek7b_llm.sh 160 against 80). At 32 against 4, the log-prob phase's
/// three bf16 copies of the logits are those of 32 sequences, exactly
/// 6 × 32 × (512 + 1,024) × 152,064 bytes, the update's still 2 × 4 × 1,536 × 152,064. Packed by
/// tokens the micro-batch is not used but the log-prob budget is (`log_prob_max_token_len_per_gpu`,
/// 3 sequences' tokens against the update's 2 in VeRL's DAPO scripts such as
/// examples/gmpo_trainer/test_dapo_7b_math.sh): one packed row of 4,608 tokens against 3,072.
#[test]
fn verl_scores_log_probabilities_in_their_own_micro_batch() {
    let logits = |rl: &str, phase: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {{"zero_stage": 3}},
                "batch": {{"micro_batch": 4}}, "rl": {{{rl}}}}}"#
        );
        let mem = evaluate(&Plan::from_json(&text).unwrap()).memory;
        let parts = &mem.phases.iter().find(|p| p.phase == phase).unwrap().parts;
        parts.iter().find(|x| x.part == "logits").map_or(0, |x| x.bytes)
    };
    let per_sequence = (512 + 1024) * 152_064u64;
    assert_eq!(logits(r#""log_prob_micro_batch": 32"#, "log_prob"), 6 * 32 * per_sequence);
    assert_eq!(logits(r#""log_prob_micro_batch": 32"#, "update"), 2 * 4 * per_sequence);
    assert_eq!(logits(r#""log_prob_micro_batch": 0"#, "log_prob"), 6 * 4 * per_sequence);
    let packed = r#""dynamic_batch": true, "log_prob_micro_batch": 32"#;
    assert_eq!(logits(packed, "log_prob"), logits(r#""dynamic_batch": true"#, "log_prob"));
    let dapo =
        r#""dynamic_batch": true, "max_tokens_per_device": 3072, "log_prob_max_tokens_per_device": 4608"#;
    assert_eq!(logits(dapo, "log_prob"), 6 * 4608 * 152_064);
    assert_eq!(logits(dapo, "update"), 2 * 3072 * 152_064);
}

/// MindSpeed-RL's log-probability forwards take their own micro-batch too (`actor_` and
/// `ref_forward_micro_batch_size`: configs/grpo_qwen25_32b_A2.yaml scores 64 sequences where it
/// updates 2), and packed by tokens their own rows (`actor_` and `ref_max_packing_token_size`:
/// configs/dapo_qwen25_32b_A2_20k.yaml 45,056 tokens against the update's 22,528; both at
/// 05a90d7). Its log-prob phase holds one copy of the logits, so they scale as the sequences or
/// the rows do: 8 against 2 is four times the update's micro-batch's, 8,192 tokens against 4,096
/// twice the update's row.
#[test]
fn mindspeed_rl_scores_log_probabilities_in_their_own_micro_batch() {
    let logits = |rl: &str, phase: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "cluster": {{"nodes": 2}},
                "framework": "mindspeed-rl", "method": "grpo", "parallel": {{"tp": 4}},
                "batch": {{"micro_batch": 2}}, "rl": {{{rl}}}}}"#
        );
        let mem = evaluate(&Plan::from_json(&text).unwrap()).memory;
        let parts = &mem.phases.iter().find(|p| p.phase == phase).unwrap().parts;
        parts.iter().find(|x| x.part == "logits").map_or(0, |x| x.bytes)
    };
    // At 0, "the update's": the update's own copy.
    let update = logits(r#""log_prob_micro_batch": 0"#, "log_prob");
    assert!(0 < update);
    assert_eq!(update, logits(r#""log_prob_micro_batch": 0"#, "update"));
    assert_eq!(logits(r#""log_prob_micro_batch": 8"#, "log_prob"), 4 * update);
    assert_eq!(
        logits(r#""log_prob_micro_batch": 8"#, "update"),
        logits(r#""log_prob_micro_batch": 0"#, "update")
    );
    let packed = |budget: u32| {
        logits(
            &format!(
                r#""dynamic_batch": true, "max_tokens_per_device": 4096, "log_prob_max_tokens_per_device": {budget}"#
            ),
            "log_prob",
        )
    };
    assert_eq!(packed(8192), 2 * packed(0));
    assert_eq!(packed(4096), packed(0));
}

/// Megatron-LM's own Llama 3 8B fp8 example (`examples/llama/train_llama3_8b_h100_fp8.sh`) sets
/// `--grad-reduce-in-bf16` and `--fp8-param-gather`. The first keeps the main gradients in bf16
/// (`grad_reduce_in_fp32` off: 2 bytes a parameter, not 4); the second keeps the linear layers'
/// weights as Transformer Engine's fp8 parameters, whose row-wise and column-wise fp8 data are the
/// weights, without the bf16 copy (2 bytes a linear parameter fewer). Exact counts: Llama 3.1 8B's
/// 8,030,261,248 parameters (its config.json) and its layers' linear weights, 32 × (2 · 4096² +
/// 2 · 4096 · 1024 + 3 · 4096 · 14336) = 6,979,321,856. Off, they change nothing.
#[test]
fn bf16_gradients_and_fp8_weights_drop_their_bytes() {
    let stage = |extra: &str| {
        let plan = Plan::from_json(&format!(
            r#"{{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "precision": "fp8",
                "parallel": {{"distributed_optimizer": true{extra}}}, "batch": {{"global_batch": 128, "seq_len": 8192}}}}"#
        ))
        .unwrap();
        evaluate(&plan).memory.stages[0].clone()
    };
    let base = stage("");
    let bf16 = stage(r#", "grad_reduce_bf16": true"#);
    let fp8 = stage(r#", "fp8_param_gather": true"#);
    assert_eq!(base.gradients - bf16.gradients, 2 * 8_030_261_248);
    assert_eq!(base.weights - fp8.weights, 2 * 6_979_321_856);
    assert_eq!((bf16.weights, fp8.gradients), (base.weights, base.gradients));
    // In bf16 training the fp8 parameters do not exist (rule precision.fp8_param_gather).
    let plan = Plan::from_json(
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain",
            "parallel": {"distributed_optimizer": true, "fp8_param_gather": true}}"#,
    )
    .unwrap();
    let bf16_plan = Plan::from_json(
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "parallel": {"distributed_optimizer": true}}"#,
    )
    .unwrap();
    assert_eq!(evaluate(&plan).memory.stages[0].weights, evaluate(&bf16_plan).memory.stages[0].weights);
}

/// MindSpeed-RL trains EP with `moe_tp_extend_ep`, which its launch file sets (its resharding to
/// the rollout needs it): each device holds experts ÷ (TP × EP) whole (MindSpeed
/// `features_manager/moe/tp_extend_ep.py`), where Megatron-LM at ETP 1 holds experts ÷ EP. Exact
/// count: Qwen3-30B-A3B's routed experts, 48 layers × 128 × 3 · 2048 · 768 = 28,991,029,248
/// parameters, at TP 2 and EP 4: an eighth on each device rather than a quarter.
#[test]
fn mindspeed_rl_spreads_whole_experts_over_tp_times_ep() {
    let params = |framework: &str, hardware: &str, method: &str| {
        let plan = Plan::from_json(&format!(
            r#"{{"model": "qwen3-30b-a3b", "framework": "{framework}", "method": "{method}", "hardware": "{hardware}",
                "cluster": {{"nodes": 4}}, "parallel": {{"tp": 2, "ep": 4, "sequence_parallel": true, "distributed_optimizer": true}}}}"#
        ))
        .unwrap();
        trainplan_core::memory::estimate(&plan).stages[0].params
    };
    let megatron = params("megatron", "h100-sxm-80g", "pretrain");
    let mindspeed_rl = params("mindspeed-rl", "ascend-910b2", "grpo");
    assert_eq!(megatron - mindspeed_rl, 28_991_029_248 / 4 - 28_991_029_248 / 8);
}

/// Megatron recomputes within each model chunk: with virtual stages each chunk is a
/// `TransformerBlock` of its own, and `_checkpointed_forward` counts `recompute_num_layers` over
/// that block's layers (megatron/core/transformer/transformer_block.py at core_v0.19.0). Llama 3.1
/// 8B over PP 2 × VPP 2 holds two chunks of 8 layers a rank: the block method at 8 recomputes every
/// layer, as at 16; at 4 it keeps half of each chunk. Counted over the rank's 16 layers instead, 8
/// would have kept 8 whole layers.
#[test]
fn block_recomputation_counts_each_chunks_layers() {
    let activations = |layers: u32| {
        let plan = Plan::from_json(&format!(
            r#"{{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 2}},
                "parallel": {{"pp": 2, "vpp": 2, "distributed_optimizer": true}},
                "recompute": {{"granularity": "full", "method": "block", "num_layers": {layers}}},
                "batch": {{"global_batch": 64, "seq_len": 4096}}}}"#
        ))
        .unwrap();
        evaluate(&plan).memory.stages[0].activations
    };
    assert_eq!(activations(8), activations(16));
    assert!(activations(8) < activations(4));
}

/// A catalog model's config with a `quantization_config`, as a plan's model.
fn stored(id: &str, quantization: &str, rest: &str) -> Plan {
    let config = catalog::CONFIGS.iter().find(|c| c.id == id).unwrap().config;
    let mut value: serde_json::Value = serde_json::from_str(config).unwrap();
    value["quantization_config"] = serde_json::from_str(quantization).unwrap();
    Plan::from_json(&format!(r#"{{"model": {{"hf_config": {value}}}, {rest}}}"#)).unwrap()
}

const GPTQ_INT4: &str =
    r#"{"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": false, "sym": true}"#;

#[test]
fn a_gptq_checkpoint_keeps_its_packed_weights_under_llamafactory() {
    // Qwen2.5-7B-Instruct-GPTQ-Int4 under LLaMA-Factory LoRA: the layers' 6,525,417,472 linear
    // parameters (as QLoRA's test counts them) take 0.5 + 2.5/128 bytes; the embedding, the head
    // and the norms stay bf16; the adapters are fp32. The q, k, v biases among them (129,024, fp16
    // beside the packed weights) are counted at the packed bytes, 0.2 MB short.
    let report =
        evaluate(&stored("qwen2.5-7b", GPTQ_INT4, r#""framework": "llamafactory", "method": "lora""#));
    let (embedding, norms) = (152_064u64 * 3_584, (28 * 2 + 1) * 3_584u64);
    let layers = 6_525_417_472u64;
    let expected = (0.5 + 2.5 / 128.0) * layers as f64
        + 2.0 * (2 * embedding + norms) as f64
        + 4.0 * report.params.lora as f64;
    let weights = report.memory.stages[0].weights as f64;
    assert!((weights - expected).abs() < 16.0, "{weights} against {expected}");
    // QLoRA asked of it changes nothing: the stored format wins.
    let qlora =
        evaluate(&stored("qwen2.5-7b", GPTQ_INT4, r#""framework": "llamafactory", "method": "qlora""#));
    assert_eq!(qlora.memory.stages[0].weights, report.memory.stages[0].weights);
    // Elsewhere the 16-bit model is counted: MindSpeed-LLM's LoRA over the same config.
    let megatron =
        evaluate(&stored("qwen2.5-7b", GPTQ_INT4, r#""framework": "mindspeed-llm", "method": "lora""#));
    let plain = evaluate(
        &Plan::from_json(r#"{"model": "qwen2.5-7b", "method": "lora", "framework": "mindspeed-llm"}"#)
            .unwrap(),
    );
    assert_eq!(megatron.memory.stages[0].weights, plain.memory.stages[0].weights);
}

#[test]
fn a_gptq_moe_checkpoint_packs_its_experts_too() {
    // GPTQ checkpoints of MoE models store every expert's projections packed
    // (Qwen/Qwen3-30B-A3B-GPTQ-Int4: `mlp.experts.N.gate_proj.qweight`), where bitsandbytes leaves
    // transformers 5's fused experts 16-bit: the attention and the experts at GPTQ's bytes, the
    // router, norms, embedding and head bf16.
    let report =
        evaluate(&stored("qwen3-30b-a3b", GPTQ_INT4, r#""framework": "llamafactory", "method": "lora""#));
    let p = &report.params;
    let bf16 = p.router + p.norms + p.embedding + p.head;
    assert_eq!(p.attention + p.experts + bf16, p.total);
    let expected =
        (0.5 + 2.5 / 128.0) * (p.attention + p.experts) as f64 + 2.0 * bf16 as f64 + 4.0 * p.lora as f64;
    let weights = report.memory.stages[0].weights as f64;
    assert!((weights - expected).abs() < 1e3, "{weights} against {expected}");
}

/// VeRL's FSDP engine unshards each decoder layer's unit in bf16 to compute it and frees it after,
/// two at a time, at ZeRO-0 too (over a group of one the unsharding is the cast from fp32); at
/// ZeRO-2 the whole model's copy stands in for them. A Qwen2.5-7B layer has 233,057,792 parameters
/// (its config.json: q 3,584 × 3,584 and k, v 3,584 × 512 with biases, o 3,584 × 3,584, the MLP
/// 3 × 3,584 × 18,944, two norms of 3,584), so the buffers differ by 2 × 2 bytes of that.
#[test]
fn verl_zero0_unshards_two_layers_in_bf16() {
    const LAYER: u64 =
        (3_584 * 3_584 + 3_584) + 2 * (3_584 * 512 + 512) + 3_584 * 3_584 + 3 * 3_584 * 18_944 + 2 * 3_584;
    assert_eq!(LAYER, 233_057_792);
    let buffers = |zero: u8| {
        let plan = Plan::from_json(&format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {{"zero_stage": {zero}}}}}"#
        ))
        .unwrap();
        evaluate(&plan).memory.stages[0].buffers
    };
    assert_eq!(buffers(0) - buffers(2), 2 * LAYER * 2);
    assert_eq!(buffers(3), buffers(0));
}

/// MindSpeed-RL's `max_packing_token_size` is the packed row's, which its CP group splits
/// (`_split_batches_with_dynamic_bsz`, mindspeed_rl/models/base/base_training_engine.py): at CP 2
/// each device holds half the row's tokens. VeRL's `ppo_max_token_len_per_gpu` is each device's
/// whatever the Ulysses SP: at SP 2 each device still holds the whole budget.
#[test]
fn mindspeed_rl_splits_its_packed_row_over_cp_and_verl_does_not() {
    let activations = |framework: &str, cp: u32| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "{framework}", "method": "grpo",
                "parallel": {{"tp": 2, "cp": {cp}}}, "recompute": {{"granularity": "none"}}, "attention": "flash",
                "rl": {{"dynamic_batch": true, "max_tokens_per_device": 8192}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].activations as f64
    };
    let (whole, split) = (activations("mindspeed-rl", 1), activations("mindspeed-rl", 2));
    assert!((split / whole - 0.5).abs() < 0.02, "{}", split / whole);
    let (one, two) = (activations("verl", 1), activations("verl", 2));
    assert!((two / one - 1.0).abs() < 0.02, "{}", two / one);
}

#[test]
fn lora_dropout_keeps_a_mask_for_each_adapted_input() {
    // PEFT drops each adapter's input on its own (`lora_B(lora_A(dropout(x)))`), so Qwen2.5-7B's
    // seven adapted modules a layer drop 3h (q, k, v) + q (o) + 2h (gate, up) + f (down) =
    // 3 · 3,584 + 3,584 + 2 · 3,584 + 18,944 = 40,448 elements a token. PyTorch's fused dropout
    // keeps a bool mask, a byte each (`native_dropout_cuda`); torch_npu a bit each. Under autocast
    // the adapters' 16-bit input copies are saved with or without it; under DeepSpeed's bf16
    // engine the dropped copy is new, 2 bytes more. No checkpointing: all 28 layers keep theirs.
    let per_token_layer = 3 * 3_584 + 3_584 + 2 * 3_584 + 18_944;
    assert_eq!(per_token_layer, 40_448);
    let activations = |hardware: &str, zero: u32, dropout: f64| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "{hardware}", "framework": "llamafactory", "method": "lora",
                "parallel": {{"zero_stage": {zero}}}, "recompute": {{"granularity": "none"}},
                "batch": {{"micro_batch": 2, "seq_len": 1024}}, "lora": {{"dropout": {dropout}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].activations
    };
    let tokens_layers = 2 * 1_024 * 28;
    assert_eq!(
        activations("h100-sxm-80g", 0, 0.05) - activations("h100-sxm-80g", 0, 0.0),
        tokens_layers * per_token_layer
    );
    assert_eq!(
        activations("h100-sxm-80g", 3, 0.1) - activations("h100-sxm-80g", 3, 0.0),
        3 * tokens_layers * per_token_layer
    );
    assert_eq!(
        activations("ascend-910b2", 0, 0.05) - activations("ascend-910b2", 0, 0.0),
        tokens_layers * per_token_layer / 8
    );
    // Megatron's LoRA (MindSpeed-LLM) takes no dropout: the setting is reset, nothing changes.
    let mindspeed = |dropout: f64| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "lora",
                "lora": {{"dropout": {dropout}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.peak_bytes
    };
    assert_eq!(mindspeed(0.05), mindspeed(0.0));
    // Out of range, refused with its field.
    let err = Plan::from_json(r#"{"model": "qwen2.5-7b", "lora": {"dropout": 1.0}}"#).unwrap_err();
    assert!(err.to_string().contains("lora.dropout"), "{err}");
}

/// DoRA (PEFT's `use_dora`, LLaMA-Factory alone) on Qwen2.5-7B with every target. From its
/// config.json (hidden 3,584, 4 key-value heads of 128, intermediate 18,944, 28 layers) the adapted
/// modules' output widths a layer (q 3,584, k 512, v 512, o 3,584, gate 18,944, up 18,944, down
/// 3,584) add up to 49,664: a trained magnitude each (`lora_magnitude_vector`), and per token the two
/// 16-bit outputs the rescaling keeps for the magnitude's gradient (4 bytes each; measured with
/// tools/hf_activations `autocast.py`). Each forward works out the norms module by module: the
/// largest, down (18,944 in, 3,584 out), holds its in × in identity and three weight-sized
/// temporaries, 2 · (18,944² + 3 · 18,944 · 3,584) bytes with 16-bit adapters (DeepSpeed), and
/// under autocast with fp32 adapters (plain PyTorch) an fp32 identity beside its 16-bit copy and
/// fp32 weight copies: 6 · 18,944² + 12 · 18,944 · 3,584.
#[test]
fn dora_keeps_both_outputs_and_works_out_each_modules_norms() {
    let per_layer = 3_584 + 512 + 512 + 3_584 + 18_944 + 18_944 + 3_584;
    assert_eq!(per_layer, 49_664);
    let workspace: u64 = 2 * (18_944 * 18_944 + 3 * 18_944 * 3_584);
    assert_eq!(workspace, 1_125_122_048);
    let workspace_autocast: u64 = 6 * 18_944 * 18_944 + 12 * 18_944 * 3_584;
    assert_eq!(workspace_autocast, 2_967_994_368);
    let report = |zero: u32, recompute: &str, seq: u32, dora: bool| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "llamafactory", "method": "lora",
                "parallel": {{"zero_stage": {zero}}}, "recompute": {{"granularity": "{recompute}"}},
                "batch": {{"micro_batch": 2, "seq_len": {seq}}}, "lora": {{"dora": {dora}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap())
    };
    // The magnitudes: 28 × 49,664 parameters beside the adapters.
    let (with, without) = (report(0, "none", 1_024, true), report(0, "none", 1_024, false));
    assert_eq!(with.params.trainable - without.params.trainable, 28 * 49_664);
    // No checkpointing, plain PyTorch: every layer keeps its 4 bytes × 49,664 a token, and the peak
    // stays at the loss's backward (its logits outweigh the norms' workspace).
    let tokens_layers = 2 * 1_024 * 28;
    assert_eq!(with.memory.peak_moment, Some("loss_backward"));
    assert_eq!(
        with.memory.stages[0].activations - without.memory.stages[0].activations,
        tokens_layers * 4 * 49_664
    );
    // Checkpointed, at 256 tokens a sample: the peak is the last layer recomputed beside the
    // checkpoints, with the norms' workspace; without DoRA the step peaks at the loss's backward,
    // beside the same checkpoints, so the two differ by the workspace and that one layer's
    // activations (its DoRA outputs among them), some tens of MB at 512 tokens.
    let short = report(0, "full", 256, true);
    assert_eq!(short.memory.peak_moment, Some("layer_backward"));
    let plain = report(0, "full", 256, false);
    let more = short.memory.stages[0].activations - plain.memory.stages[0].activations;
    let first_layer_dora = 2 * 256 * 4 * 49_664;
    assert!(
        (workspace_autocast + first_layer_dora..workspace_autocast + (256 << 20)).contains(&more),
        "{more}"
    );
    // With a dropout under plain PyTorch the base runs again on the dropped fp32 input with the
    // base weight copied to fp32, and autocast's 16-bit copy of it is kept for backward: 2 bytes a
    // weight of every adapted module, q 3,584² + k and v 3,584 · 512 + o 3,584² + gate, up and
    // down 3,584 · 18,944 = 233,046,016 a layer (tools/hf_activations `autocast.py`,
    // `lora-dora-dropout`: 121.6 MB a layer more at Llama-3.2-1B's widths, its 60.8 M weights).
    let weights_per_layer: u64 = 2 * 3_584 * 3_584 + 2 * 3_584 * 512 + 3 * 3_584 * 18_944;
    assert_eq!(weights_per_layer, 233_046_016);
    let dropped = |dora: bool| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "recompute": {{"granularity": "none"}},
                "batch": {{"micro_batch": 2, "seq_len": 1024}}, "lora": {{"dora": {dora}, "dropout": 0.05}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).memory.stages[0].activations
    };
    assert_eq!(dropped(true) - dropped(false), tokens_layers * 4 * 49_664 + 28 * 2 * weights_per_layer);
    // Under DeepSpeed (ZeRO-2) each term is counted at its own peak: the workspace is a buffer.
    let (ds, ds_plain) = (report(2, "full", 256, true), report(2, "full", 256, false));
    assert_eq!(ds.memory.stages[0].buffers - ds_plain.memory.stages[0].buffers, workspace);
    // DoRA costs time: its rescaling and norms every forward, and with a dropout the adapted base
    // GEMMs again on the dropped input.
    assert!(with.time.step_seconds > without.time.step_seconds);
    let step = |dora: bool, dropout: f64| {
        let text = format!(r#"{{"model": "qwen2.5-7b", "lora": {{"dora": {dora}, "dropout": {dropout}}}}}"#);
        evaluate(&Plan::from_json(&text).unwrap()).time.step_seconds
    };
    assert!(step(true, 0.05) > step(false, 0.05) && step(true, 0.05) > step(true, 0.0));
    // QLoRA dequantizes its 4-bit base once more for the norms: DoRA costs it more than LoRA.
    let qlora = |method: &str, dora: bool| {
        let text = format!(r#"{{"model": "qwen2.5-7b", "method": "{method}", "lora": {{"dora": {dora}}}}}"#);
        evaluate(&Plan::from_json(&text).unwrap()).time.step_seconds
    };
    assert!(qlora("qlora", true) - qlora("qlora", false) > qlora("lora", true) - qlora("lora", false));
    // MindSpeed-LLM's and VeRL's LoRA have no DoRA: the setting is reset, nothing changes.
    for framework in ["mindspeed-llm", "verl"] {
        let peak = |dora: bool| {
            let text = format!(
                r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "lora", "lora": {{"dora": {dora}}}}}"#
            );
            evaluate(&Plan::from_json(&text).unwrap()).memory.peak_bytes
        };
        assert_eq!(peak(true), peak(false), "{framework}");
    }
}

/// LLaMA-Factory's `pure_bf16` without DeepSpeed: the trained parameters are not cast to fp32
/// (`model/adapter.py`), so the weights and gradients are 2 bytes each and PyTorch's AdamW keeps
/// its two moments in the parameter's dtype, 4 (`torch.optim.AdamW`, `zeros_like(p)`): 8 bytes a
/// parameter where fp32 trainables take 16. Qwen2.5-7B full SFT on one H100, 7,615,616,512
/// parameters (its config, counted as `model.num_parameters()` gives them): 115 GiB does not fit,
/// 59 GiB does. Autocast has nothing to cast, so the step saves what a bf16 model saves and runs
/// without the casts' traffic; under ZeRO-3 LLaMA-Factory refuses it (`llamafactory.pure_bf16_zero3`),
/// and it is read with bf16 precision alone.
#[test]
fn pure_bf16_keeps_the_trained_parameters_and_their_states_in_bf16() {
    let report = |pure: bool, precision: &str, zero: u32| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "method": "sft-full", "cluster": {{"devices_per_node": 1}},
                "precision": "{precision}", "pure_bf16": {pure}, "parallel": {{"zero_stage": {zero}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap())
    };
    let n = 7_615_616_512u64;
    let (pure, mixed) = (report(true, "bf16", 0), report(false, "bf16", 0));
    assert_eq!(pure.params.total, n);
    let stage = &pure.memory.stages[0];
    assert_eq!((stage.weights, stage.gradients, stage.optimizer), (2 * n, 2 * n, 4 * n));
    let stage = &mixed.memory.stages[0];
    assert_eq!((stage.gradients, stage.optimizer), (4 * n, 8 * n));
    assert!(pure.memory.fits && !mixed.memory.fits);
    assert!(pure.memory.stages[0].activations < mixed.memory.stages[0].activations);
    assert!(pure.time.step_seconds < mixed.time.step_seconds);
    // fp16 precision: not in effect, nothing changes (LLaMA-Factory's file is written without it).
    assert_eq!(report(true, "fp16", 0).memory.peak_bytes, report(false, "fp16", 0).memory.peak_bytes);
    // ZeRO-3: refused, and its fix turns it off.
    let refused = report(true, "bf16", 3);
    let finding = refused.findings.iter().find(|f| f.code == "llamafactory.pure_bf16_zero3").unwrap();
    let fix = finding.fix.as_ref().unwrap();
    let plan = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "pure_bf16": true, "parallel": {"zero_stage": 3}}"#,
    )
    .unwrap();
    assert!(!trainplan_core::rules::apply(&plan, fix).unwrap().pure_bf16);
    // LoRA: the adapters bf16 too, 8 bytes each instead of 16.
    let lora = |pure: bool| {
        let text = format!(r#"{{"model": "qwen2.5-7b", "pure_bf16": {pure}}}"#);
        evaluate(&Plan::from_json(&text).unwrap())
    };
    let (pure, mixed) = (lora(true), lora(false));
    let adapters = pure.params.trainable;
    assert_eq!(mixed.memory.stages[0].optimizer - pure.memory.stages[0].optimizer, 4 * adapters);
}

/// LLaMA-Factory's `optim: adamw_8bit` without DeepSpeed: bitsandbytes keeps each AdamW moment a
/// byte an element with an fp32 scale per block of 2,048 (`Optimizer2State.init_state`), so the
/// optimizer states take 2 + 8/2048 bytes a parameter where fp32 moments take 8 (bf16 ones, with
/// `pure_bf16`, 4). Qwen2.5-7B full SFT on one H100, 7,615,616,512 parameters: exact byte counts.
/// Under DeepSpeed it is the engine's client optimizer, beside the engine's fp32 master weights,
/// unless the optimizer is offloaded, where accelerate swaps it for DeepSpeed's CPU Adam.
#[test]
fn eight_bit_adamw_keeps_a_byte_a_moment() {
    let report = |optimizer: &str, pure: bool, zero: u32| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "method": "sft-full", "cluster": {{"devices_per_node": 1}},
                "optimizer": "{optimizer}", "pure_bf16": {pure}, "parallel": {{"zero_stage": {zero}}}}}"#
        );
        Plan::from_json(&text).unwrap()
    };
    let n = 7_615_616_512u64;
    let optimizer = |plan: &Plan| evaluate(plan).memory.stages[0].optimizer;
    let eight_bit = (n as f64 * (2.0 + 8.0 / 2048.0)) as u64;
    assert_eq!(optimizer(&report("adamw_8bit", false, 0)), eight_bit);
    assert_eq!(optimizer(&report("adamw", false, 0)), 8 * n);
    assert_eq!(optimizer(&report("adamw_8bit", true, 0)), eight_bit);
    assert_eq!(optimizer(&report("adamw", true, 0)), 4 * n);
    let step = |plan: &Plan| evaluate(plan).time.step_seconds;
    assert!(step(&report("adamw_8bit", false, 0)) < step(&report("adamw", false, 0)));
    let yaml = |plan: &Plan| {
        let files = trainplan_core::emit::emit(plan, "").unwrap();
        files.iter().find(|f| f.name.ends_with(".yaml")).map(|f| f.text.clone()).unwrap_or_default()
    };
    assert!(yaml(&report("adamw_8bit", false, 0)).contains("optim: adamw_8bit"));
    // DeepSpeed steps it over its fp32 partitions (one device: ZeRO-2 shards over one): the fp32
    // master weights kept, the moments a byte each, 4 + 2.004 bytes where AdamW's are 4 + 8.
    let (ds8, ds) = (report("adamw_8bit", false, 2), report("adamw", false, 2));
    assert_eq!(optimizer(&ds8), 4 * n + eight_bit);
    assert_eq!(optimizer(&ds), 12 * n);
    assert!(yaml(&ds8).contains("optim: adamw_8bit"));
    assert!(!yaml(&ds).contains("optim:"));
    // With the optimizer offloaded accelerate runs DeepSpeed's CPU Adam instead: AdamW's states,
    // and the finding that says so, whose fix puts AdamW back.
    let offloaded = |optimizer: &str| {
        let mut plan = report(optimizer, false, 2);
        plan.parallel.offload_optimizer = true;
        plan
    };
    let warned = evaluate(&offloaded("adamw_8bit"));
    assert_eq!(warned.memory.host_bytes_per_node, evaluate(&offloaded("adamw")).memory.host_bytes_per_node);
    let finding =
        warned.findings.iter().find(|f| f.code.as_str() == "llamafactory.adam_8bit_offload").unwrap();
    assert_eq!(finding.severity, trainplan_core::report::Severity::Warning);
    assert!(
        evaluate(&offloaded("adamw"))
            .findings
            .iter()
            .all(|f| f.code.as_str() != "llamafactory.adam_8bit_offload")
    );
}

/// VeRL's FSDP2 CPU offload (`parallel.offload_policy`, `CPUOffloadPolicy`): Qwen2.5-7B GRPO on 8
/// H100 at ZeRO-3, its 7,615,616,512 parameters sharded over 8 devices. The actor's fp32 parameter
/// shard, its fp32 gradient shard and AdamW's two fp32 moments leave each device, exactly 4 + 4 + 8
/// bytes a parameter's share, and appear in the node's host memory; what FSDP keeps gathered stays.
/// The step grows by the shards copied in for every gather, the gradients copied out and AdamW on
/// the host. FSDP1 ignores the key (a warning whose fix runs FSDP2); the launch file writes it for
/// the actor and the critic and reads back.
#[test]
fn verl_offload_policy_keeps_the_actors_states_on_the_host() {
    let plan = |policy: bool, fsdp: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo",
                "parallel": {{"zero_stage": 3, "fsdp": "{fsdp}", "offload_policy": {policy}}}}}"#
        );
        Plan::from_json(&text).unwrap()
    };
    let (on, off) = (evaluate(&plan(true, "torch_fsdp2")), evaluate(&plan(false, "torch_fsdp2")));
    let shard = 7_615_616_512u64 / 8;
    let (s_on, s_off) = (&on.memory.stages[0], &off.memory.stages[0]);
    assert_eq!(s_off.weights - s_on.weights, 4 * shard);
    assert_eq!((s_off.gradients, s_on.gradients), (4 * shard, 0));
    assert_eq!((s_off.optimizer, s_on.optimizer), (8 * shard, 0));
    assert_eq!(on.memory.host_bytes_per_node - off.memory.host_bytes_per_node, 16 * shard * 8);
    assert!(on.memory.peak_bytes < off.memory.peak_bytes);
    assert!(off.time.step_seconds < on.time.step_seconds);
    // At ZeRO-0 (`fsdp_size=1`) each device's shard is the whole model.
    let replicated = |policy: bool| {
        let mut plan = plan(policy, "torch_fsdp2");
        plan.parallel.zero_stage = ZeroStage::new(0).unwrap();
        evaluate(&plan)
    };
    let (r_on, r_off) = (replicated(true), replicated(false));
    assert_eq!(r_on.memory.host_bytes_per_node - r_off.memory.host_bytes_per_node, 16 * 8 * shard * 8);
    assert!(r_off.time.step_seconds < r_on.time.step_seconds);
    // LoRA: the frozen base's shard goes to the host too. At ZeRO-0 (a mesh of one) each layer then
    // comes to the device to compute, two at a time (the one computing and the one prefetched), in
    // bf16: 2 × 2 bytes × a Qwen2.5-7B layer's 233,057,792 parameters (from its config: q and o
    // 3,584² + q's bias, k and v 3,584 × 512 + bias each, the MLP 3 × 3,584 × 18,944, two norms).
    let lora = |policy: bool, zero: u8| {
        let mut plan = plan(policy, "torch_fsdp2");
        plan.rl.lora = true;
        plan.parallel.zero_stage = ZeroStage::new(zero).unwrap();
        evaluate(&plan).memory.stages[0].clone()
    };
    let (l_on, l_off) = (lora(true, 0), lora(false, 0));
    assert_eq!(l_on.weights, 0);
    assert_eq!(l_on.buffers - l_off.buffers, 4 * 233_057_792);
    // At ZeRO-2 the base stays gathered from forward to backward: on the device either way.
    assert_eq!(lora(true, 2).weights, lora(false, 2).weights);
    // FSDP1: nothing moves, and a warning says why.
    let fsdp1 = evaluate(&plan(true, "none"));
    assert_eq!(fsdp1.memory.peak_bytes, evaluate(&plan(false, "none")).memory.peak_bytes);
    let warning = fsdp1.findings.iter().find(|f| f.code.as_str() == "verl.offload_policy_fsdp1").unwrap();
    assert_eq!(warning.severity, trainplan_core::report::Severity::Warning);
    assert!(on.findings.iter().all(|f| f.code.as_str() != "verl.offload_policy_fsdp1"));
    // The launch file: the actor's and the critic's engines, read back into the plan.
    let script = |plan: &Plan| {
        let files = trainplan_core::emit::emit(plan, "").unwrap();
        files.iter().map(|f| f.text.clone()).collect::<String>()
    };
    let text = script(&plan(true, "torch_fsdp2"));
    assert!(text.contains("actor_rollout_ref.actor.fsdp_config.offload_policy=True"));
    assert!(!script(&plan(false, "torch_fsdp2")).contains("offload_policy"));
    let launch = trainplan_core::emit::emit(&plan(true, "torch_fsdp2"), "").unwrap();
    let sh = launch.iter().find(|f| f.name.ends_with(".sh")).unwrap();
    let back = trainplan_core::emit::import::import(&sh.text, &plan(false, "torch_fsdp2").to_file()).unwrap();
    assert!(back.file.parallel.offload_policy);
}

/// Freeze-tuning (LLaMA-Factory `finetuning_type: freeze`) trains the last `freeze_layers` decoder
/// layers and keeps states for them alone. A Qwen2.5-7B layer, from its config.json (hidden 3,584;
/// 28 query heads and 4 key/value heads of 128, with biases; intermediate 18,944; two norms):
/// q 3,584² + 3,584, k and v 3,584 · 512 + 512 each, o 3,584², gate, up and down 3 · 3,584 · 18,944,
/// norms 2 · 3,584: 233,057,792 parameters, so two layers 466,115,584 of the model's 7,615,616,512.
#[test]
fn freeze_tuning_keeps_states_for_its_layers_alone() {
    const LAYER: u64 =
        3_584 * 3_584 + 3_584 + 2 * (3_584 * 512 + 512) + 3_584 * 3_584 + 3 * 3_584 * 18_944 + 2 * 3_584;
    const MODEL: u64 = 7_615_616_512;
    assert_eq!(LAYER, 233_057_792);
    let plan = |extra: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "method": "freeze", {extra}
                "batch": {{"micro_batch": 1, "global_batch": 8, "seq_len": 2048}}}}"#
        );
        Plan::from_json(&text).unwrap()
    };
    // Plain PyTorch (no DeepSpeed): the trained layers cast to fp32 (`_setup_freeze_tuning` with
    // `cast_trainable_params_to_fp32`), AdamW's two fp32 moments for them alone.
    let plain = memory::estimate(&plan(""));
    assert_eq!(plain.stages[0].optimizer_bytes, 8 * 2 * LAYER);
    assert_eq!(memory::estimate(&plan(r#""freeze_layers": 4,"#)).stages[0].optimizer_bytes, 8 * 4 * LAYER);
    // Under ZeRO-2 on 8 devices the engine keeps every weight in bf16 and shards the trained
    // layers' fp32 master copy and moments (12 bytes) and their 16-bit gradients.
    let zero2 = memory::estimate(&plan(r#""parallel": {"zero_stage": 2},"#));
    let s = &zero2.stages[0];
    assert_eq!(s.weights_bytes, 2 * MODEL);
    assert_eq!(s.optimizer_bytes, 12 * 2 * LAYER / 8);
    assert_eq!(s.gradients_bytes, 2 * 2 * LAYER / 8);
    // Only the trained layers keep activations for backward: without recomputation, four trained
    // layers keep twice what two do, and a full fine-tune's 28 keep fourteen times as much.
    let saved = |extra: &str| {
        let text =
            format!(r#""recompute": {{"granularity": "none"}}, "parallel": {{"zero_stage": 2}}, {extra}"#);
        memory::estimate(&plan(&text)).stages[0].activations_bytes
    };
    let (two, four) = (saved(""), saved(r#""freeze_layers": 4,"#));
    assert_eq!(four, 2 * two);
    let full = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "recompute": {"granularity": "none"},
            "parallel": {"zero_stage": 2}, "batch": {"micro_batch": 1, "global_batch": 8, "seq_len": 2048}}"#,
    )
    .unwrap();
    let full = memory::estimate(&full).stages[0].activations_bytes;
    assert!(two * 14 <= full && full <= two * 15, "{two} for 2 layers, {full} for 28 and the embedding");
}

/// ZeRO++'s hpZ keeps, beside each rank's ZeRO-3 shard, a secondary shard of the parameters over
/// its group in their 16-bit dtype (DeepSpeed `_partition_param_sec`: `tensor_size //
/// num_ranks_in_param_group` elements): Llama-3-8B's 8,030,261,248 parameters (its
/// model.safetensors.index.json's 16,060,522,496 bytes ÷ 2) over a group of 8 are 2,007,565,312
/// bytes more on every device. Nothing under ZeRO-2 (DeepSpeed's stage-1 and 2 engine reads no
/// hpZ), nor with the parameters offloaded (the secondary shard goes to the host with them).
#[test]
fn hpz_keeps_a_secondary_shard_of_the_parameters() {
    let buffers = |zero: u8, hpz: u32, offload: bool| {
        let text = format!(
            r#"{{"model": "llama-3-8b", "framework": "deepspeed", "method": "sft-full", "cluster": {{"nodes": 2}},
                "parallel": {{"zero_stage": {zero}, "zero_hpz_partition_size": {hpz}, "offload_params": {offload}}}}}"#
        );
        let mem = memory::estimate(&Plan::from_json(&text).unwrap());
        assert_eq!(mem.stages[0].params, 8_030_261_248);
        mem.stages[0].buffers_bytes
    };
    assert_eq!(buffers(3, 8, false) - buffers(3, 1, false), 8_030_261_248 * 2 / 8);
    assert_eq!(buffers(2, 8, false), buffers(2, 1, false));
    assert_eq!(buffers(3, 8, true), buffers(3, 1, true));
}

/// DeepSpeed offloads the optimizer at ZeRO-1 to 3 alone (`offload_optimizer`: "Valid for ZeRO
/// stage 1, 2, 3", deepspeed/runtime/zero/config.py; at ZeRO-0 `_configure_optimizer` wraps the
/// optimizer without ZeRO): asked at ZeRO-0 it changes no figure and no file but a warning, where it
/// had taken the optimizer's states off the device and put LLaMA-Factory's plain PyTorch step under
/// DeepSpeed (Qwen2.5-7B LoRA on 8 H100: 4.54 → 3.83 s a step, 762 MB more at its peak, no finding).
#[test]
fn deepspeed_offloads_nothing_at_zero_0() {
    use trainplan_core::emit::emit;
    for (framework, method) in
        [("llamafactory", "lora"), ("llamafactory", "sft-full"), ("deepspeed", "sft-full")]
    {
        let plan = |offload: bool| {
            let text = format!(
                r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "{method}",
                    "parallel": {{"zero_stage": 0, "offload_optimizer": {offload}}}}}"#
            );
            Plan::from_json(&text).unwrap()
        };
        let (on, off) = (evaluate(&plan(true)), evaluate(&plan(false)));
        assert_eq!(on.memory.stages, off.memory.stages, "{framework} {method}");
        assert_eq!(on.time.step_seconds, off.time.step_seconds, "{framework} {method}");
        let codes: Vec<&str> = on.findings.iter().map(|f| f.code.as_str()).collect();
        assert!(codes.contains(&"zero.offload_optimizer_stage"), "{codes:?}");
        let names = |p: &Plan| emit(p, "").unwrap().into_iter().map(|f| f.name).collect::<Vec<_>>();
        assert_eq!(names(&plan(true)), names(&plan(false)), "{framework} {method}");
    }
}

/// Qwen3-Next's stages hold their own layers' weights: at PP 8 each stage holds 6 of the 48
/// layers, every 4th an attention layer, so stage 1 (layers 6–11) holds two attention layers and
/// stage 2 (layers 12–17) one, a Gated DeltaNet layer in its place: 33,718,464 − 27,263,488 =
/// 6,454,976 parameters more (the two layers' attention blocks, counted by hand from transformers'
/// `modeling_qwen3_next.py` in `params.rs`), their experts split alike by EP.
#[test]
fn qwen3_next_stages_hold_their_own_layers() {
    let plan = Plan::from_json(
        r#"{"model": "qwen3-next-80b-a3b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 8},
            "parallel": {"pp": 8, "ep": 8, "distributed_optimizer": true}}"#,
    )
    .unwrap();
    let mem = memory::estimate(&plan);
    assert_eq!(mem.stages[2].params - mem.stages[1].params, 6_454_976);
    // Stage 3 (layers 18–23) holds two attention layers again, as stage 1 does.
    assert_eq!(mem.stages[3].params, mem.stages[1].params);
}

/// A Gated DeltaNet layer keeps, a token (TP 1; FLA's `ChunkGatedDeltaRuleFunction.forward`,
/// fla/ops/gated_delta_rule/chunk.py, `save_for_backward`; the convolution's and the gated norm's
/// inputs; Qwen3-Next's shapes: key_dim 2,048, value_dim 4,096, 32 value heads of 128, chunks of
/// 64, 2-byte elements but fp32 `g`): the convolution's input 2·8,192, the gate z 8,192, `b` and
/// `a` 128, q and k repeated over the 32 value heads 16,384, v 8,192, `g` and `beta` 192, the
/// chunk solve `A` 4,096, the rule's output 8,192 and the norm's output 8,192: 69,952 bytes. An
/// attention layer with its output gate keeps (Megatron, flash): q, k and v 2·(4,096 + 2·512),
/// the output projection's input 8,192, the softmax statistics 4·16, the core's output and the
/// gate's sigmoid 4·4,096: 34,880 bytes. Qwen3-Next's 36 DeltaNet layers against the same model
/// with every layer attention (`full_attention_interval` 1), one micro-batch of 4,096 tokens in
/// flight.
#[test]
fn gated_deltanet_layers_keep_what_their_kernels_save() {
    let config = catalog::CONFIGS.iter().find(|c| c.id == "qwen3-next-80b-a3b").unwrap().config;
    let activations = |interval: u64| {
        let mut hf_config: serde_json::Value = serde_json::from_str(config).unwrap();
        hf_config["full_attention_interval"] = serde_json::json!(interval);
        let text = serde_json::json!({
            "model": {"hf_config": hf_config, "name": "Qwen3-Next"}, "framework": "megatron", "method": "pretrain",
            "cluster": {"nodes": 4}, "attention": "flash", "parallel": {"ep": 8, "distributed_optimizer": true},
            "recompute": {"granularity": "none"}, "batch": {"micro_batch": 1, "global_batch": 32, "seq_len": 4096}
        });
        let plan = Plan::from_json(&text.to_string()).unwrap();
        memory::estimate(&plan).stages[0].activations_bytes as f64
    };
    let (hybrid, attention) = (activations(4), activations(1));
    let expected = 36.0 * (69_952.0 - 34_880.0) * 4096.0;
    assert!(((hybrid - attention) / expected - 1.0).abs() < 1e-9, "{} vs {expected}", hybrid - attention);
}

/// Gemma 2's soft cap on the logits (`final_logit_softcapping` 30: `tanh(logits / 30) · 30`,
/// transformers `Gemma2ForCausalLM.forward`, MindSpeed-LLM's `GPTModel.forward`) keeps the tanh's
/// 16-bit output for backward: 2 bytes a token and vocabulary entry more on the last stage (÷ TP
/// on MindSpeed-LLM, whose Gemma 2 spec caps them; its vocabulary-parallel loss keeps 6), none
/// under Liger's fused loss, which caps inside its chunks. Gemma-2-9B, 4,096 tokens: 2.1 GB more
/// of logits a micro-batch in LLaMA-Factory, at every moment they are held.
#[test]
fn gemma_2s_soft_capped_logits_keep_the_tanh() {
    let config = |cap: &str| {
        format!(
            r#"{{"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42,
                "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "final_logit_softcapping": {cap}}}"#
        )
    };
    let (tokens, vocab) = (4_096u64, 256_000u64);
    for (framework, hardware, tp, extra, expected) in [
        ("llamafactory", "h100-sxm-80g", 1, "", 2 * tokens * vocab),
        ("mindspeed-llm", "ascend-910b2", 2, "", 2 * tokens * vocab / 2),
        ("llamafactory", "h100-sxm-80g", 1, r#", "liger_kernel": true"#, 0),
    ] {
        // LoRA, so that the loss's moment is the step's peak (full fine-tuning peaks at the end of
        // backward, where the logits are gone).
        let method = if framework == "llamafactory" { "lora" } else { "sft-full" };
        let plan = |cap: &str| {
            Plan::from_json(&format!(
                r#"{{"model": {{"hf_config": {}}}, "framework": "{framework}", "hardware": "{hardware}", "method": "{method}",
                    "parallel": {{"tp": {tp}}}, "batch": {{"micro_batch": 1, "seq_len": {tokens}}}{extra}}}"#,
                config(cap)
            ))
            .unwrap()
        };
        let (capped, plain) = (memory::estimate(&plan("30.0")), memory::estimate(&plan("null")));
        let last = |m: &memory::Memory| m.stages.last().unwrap().logits_bytes;
        assert_eq!(capped.peak_moment, plain.peak_moment, "{framework}{extra}");
        assert_eq!(
            last(&capped) - last(&plain),
            expected,
            "{framework}{extra}: {} vs {}",
            last(&capped),
            last(&plain)
        );
    }
    // VeRL's fused log-probabilities keep the 16-bit logits alone (2 bytes a token and entry, over
    // its own micro-batch's tokens): the cap's tanh doubles them.
    let verl = |cap: &str| {
        let text = format!(
            r#"{{"model": {{"hf_config": {}}}, "framework": "verl", "method": "grpo"}}"#,
            config(cap)
        );
        memory::estimate(&Plan::from_json(&text).unwrap()).stages.last().unwrap().logits_bytes
    };
    assert_eq!(verl("30.0"), 2 * verl("null"));
}

/// Full fine-tuning in plain PyTorch under autocast (fp32 weights) keeps a 16-bit copy of a norm's
/// fp32 output for each linear layer that reads it, one per `F.linear` call (tools/hf_activations
/// `autocast.py`: 10h a token and layer for Llama's q, k, v, gate and up). Phi-3's fused `qkv_proj`
/// and `gate_up_proj` (transformers `Phi3Attention`, `Phi3MLP`) read it twice where Llama's five
/// projections read it five times: Phi-4-mini's shape read as a Phi-3 keeps 3 × 2h bytes a token
/// fewer in the layer backward holds at its end than the same shape read Llama-like (exact count,
/// h = 3,072, 1,024 tokens).
#[test]
fn fused_projections_cast_their_input_once() {
    let config = |model_type: &str| {
        format!(
            r#"{{"model_type": "{model_type}", "vocab_size": 200064, "hidden_size": 3072, "intermediate_size": 8192,
                "num_hidden_layers": 32, "num_attention_heads": 24, "num_key_value_heads": 8,
                "max_position_embeddings": 131072, "tie_word_embeddings": true}}"#
        )
    };
    let at_peak = |model_type: &str| {
        let text = format!(
            r#"{{"model": {{"hf_config": {}}}, "method": "sft-full",
                "batch": {{"micro_batch": 1, "seq_len": 1024, "global_batch": 8}}}}"#,
            config(model_type)
        );
        let mem = memory::estimate(&Plan::from_json(&text).unwrap());
        (mem.stages[0].activations_bytes, mem.peak_moment)
    };
    let (phi, llama) = (at_peak("phi3"), at_peak("llama"));
    assert_eq!(phi.1, llama.1);
    assert_eq!(llama.0 - phi.0, 3 * 2 * 3072 * 1024);
}

/// A multimodal wrapper's vision encoder is held as its framework loads it (`memory::vision_encoder`),
/// on the first stage alone. Qwen2.5-VL-7B's encoder and projector (676,550,144 parameters, counted
/// by hand in `vision.rs`'s tests against the model's published total) against the same config with
/// its `vision_config` taken out:
/// - LLaMA-Factory freezes it (`freeze_vision_tower`, `freeze_multi_modal_projector`): its bf16
///   weights alone, 2 bytes a parameter, and a ZeRO-3 shard of them (÷ 8 on 8 devices); no
///   gradient or optimizer state, the adapters unchanged;
/// - VeRL trains it with the actor (`freeze_vision_tower: false`): it joins the parameters the
///   first stage trains, so its gradients and optimizer states shard as the language model's do
///   (its Megatron engine splits it by the TP too);
/// - Megatron-LM's pretraining launcher plans the language model alone: nothing changes, and the
///   finding says it is not counted.
#[test]
fn a_vision_encoder_is_held_as_its_framework_loads_it() {
    let vision = 676_550_144u64;
    let with: serde_json::Value = serde_json::from_str(crate::hf::QWEN2_5_VL_7B).unwrap();
    let mut without = with.clone();
    without.as_object_mut().unwrap().remove("vision_config");
    let plan = |config: &serde_json::Value, rest: &str| {
        let text = format!(r#"{{"model": {{"hf_config": {config}}}, {rest}}}"#);
        Plan::from_json(&text).unwrap()
    };
    let codes = |plan: &Plan| -> Vec<String> {
        evaluate(plan).findings.iter().map(|f| f.code.to_string()).filter(|c| c.contains("vision")).collect()
    };
    let first = |plan: &Plan| memory::estimate(plan).stages[0].clone();
    for (zero, shards) in [(2u64, 1u64), (3, 8)] {
        let rest =
            format!(r#""framework": "llamafactory", "method": "lora", "parallel": {{"zero_stage": {zero}}}"#);
        let (a, b) = (plan(&with, &rest), plan(&without, &rest));
        assert_eq!(a.model.arch.vision_params(), vision);
        let (sa, sb) = (first(&a), first(&b));
        assert_eq!(sa.weights_bytes - sb.weights_bytes, 2 * vision / shards, "ZeRO-{zero}");
        assert_eq!((sa.gradients_bytes, sa.optimizer_bytes), (sb.gradients_bytes, sb.optimizer_bytes));
        assert_eq!(sa.params, sb.params);
        assert_eq!(codes(&a), ["model.vision_encoder_frozen"]);
        assert!(codes(&b).is_empty());
        // The report's ZeRO-3 figure shards it too, over the 8 devices, as one tensor.
        let zero3 = |p: &Plan| evaluate(p).memory.zero3_bf16_weight_bytes_per_device;
        assert_eq!(zero3(&a) - zero3(&b), vision.div_ceil(8) * 2);
    }
    let rest = r#""framework": "verl", "method": "grpo", "cluster": {"nodes": 1}"#;
    let (a, b) = (plan(&with, rest), plan(&without, rest));
    let (sa, sb) = (first(&a), first(&b));
    assert_eq!(sa.params - sb.params, vision);
    assert!(sb.gradients_bytes < sa.gradients_bytes && sb.optimizer_bytes < sa.optimizer_bytes);
    // Its states per parameter are the language model's on that stage: each term grows in
    // proportion to the parameters (to the byte, but for rounding).
    for (grown, base) in [(sa.gradients_bytes, sb.gradients_bytes), (sa.optimizer_bytes, sb.optimizer_bytes)]
    {
        let per_param = base as f64 / sb.params as f64;
        assert!(
            ((grown - base) as f64 - per_param * vision as f64).abs() <= 1.0 + per_param,
            "{grown} {base}"
        );
    }
    assert_eq!(codes(&a), ["model.vision_encoder_trained"]);
    // VeRL's Megatron engine splits it by the language model's TP (mbridge copies its config).
    let megatron =
        r#""framework": "verl-megatron", "method": "grpo", "cluster": {"nodes": 1}, "parallel": {"tp": 2}"#;
    assert_eq!(first(&plan(&with, megatron)).params - first(&plan(&without, megatron)).params, vision / 2);
    // Its rollout engine holds the encoder's bf16 weights as well, split by the rollout's TP.
    let rollout = |p: &Plan| memory::estimate(p).rollout.unwrap().weights_bytes;
    let tp = u64::from(a.rl.rollout_tp.get());
    assert_eq!(rollout(&a) - rollout(&b), (7_615_616_512 + vision) * 2 / tp - 7_615_616_512 * 2 / tp);
    // The stages after the first hold no part of it.
    let rest = r#""framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"tp": 4, "pp": 2}"#;
    let (a, b) = (plan(&with, rest), plan(&without, rest));
    assert_eq!(memory::estimate(&a).stages, memory::estimate(&b).stages);
    assert_eq!(
        evaluate(&a).memory.zero3_bf16_weight_bytes_per_device,
        evaluate(&b).memory.zero3_bf16_weight_bytes_per_device
    );
    assert_eq!(codes(&a), ["model.vision_encoder"]);
    let rest = r#""framework": "llamafactory", "method": "sft-full", "cluster": {"nodes": 1}, "parallel": {"zero_stage": 3}"#;
    let (a, b) = (plan(&with, rest), plan(&without, rest));
    let (ma, mb) = (memory::estimate(&a), memory::estimate(&b));
    assert_eq!(ma.stages[0].weights_bytes - mb.stages[0].weights_bytes, 2 * vision / 8);
    // Full DPO's frozen reference (TRL's `ref_model`) loads the whole wrapper again: twice as much.
    let rest = r#""framework": "llamafactory", "method": "dpo", "cluster": {"nodes": 1}, "parallel": {"zero_stage": 3}"#;
    let (a, b) = (plan(&with, rest), plan(&without, rest));
    assert_eq!(first(&a).weights_bytes - first(&b).weights_bytes, 2 * (2 * vision / 8));
}

/// A vision encoder that trains keeps its images' activations for backward; a frozen one keeps
/// none. Qwen2.5-VL-7B's encoder by hand from its `vision_config` and `modeling_qwen2_5_vl.py`:
/// each image token is 2 × 2 patches through 32 blocks of width 1,280; under gradient
/// checkpointing each block keeps its input (2 bytes × 1,280 a patch), without it each block keeps
/// per patch two RMSNorms' 8 × 1,280 + 4 bytes, q, k, v and the output (8 × 1,280), a 4-byte
/// log-sum-exp for each of 16 heads and the gated MLP's 8 × 3,420.
#[test]
fn a_trained_vision_encoder_keeps_its_images_activations() {
    let config = crate::hf::QWEN2_5_VL_7B;
    // GRPO on VeRL, 2 sequences of 2,048 + 2,048 tokens a micro-batch, 1,024 image tokens each.
    let first = |rest: &str, images: u32| {
        let text = format!(
            r#"{{"model": {{"hf_config": {config}}}, "cluster": {{"nodes": 1}}, {rest},
                "batch": {{"micro_batch": 2, "image_tokens": {images}}}}}"#
        );
        memory::estimate(&Plan::from_json(&text).unwrap()).stages[0].activations_bytes
    };
    let rl = |recompute: &str| {
        format!(
            r#""framework": "verl", "method": "grpo", "recompute": {{"granularity": "{recompute}"}},
                "rl": {{"dynamic_batch": false, "max_prompt_length": 2048, "max_response_length": 2048}}"#
        )
    };
    let images = 2.0 * 1024.0;
    let checkpointed = rl("full");
    let added = (first(&checkpointed, 1024) - first(&checkpointed, 0)) as f64;
    let inputs = images * 4.0 * 32.0 * 2.0 * 1280.0;
    assert!((added - inputs).abs() <= 1.0, "{added} against {inputs}");
    let block = 2.0 * (8.0 * 1280.0 + 4.0) + 8.0 * 1280.0 + 4.0 * 16.0 + 8.0 * 3420.0;
    let kept = rl("none");
    let added = (first(&kept, 1024) - first(&kept, 0)) as f64;
    let saved = images * 4.0 * 32.0 * block;
    assert!((added - saved).abs() <= 1.0, "{added} against {saved}");
    // 15.2 GB without checkpointing, 0.67 GB with it.
    assert!((saved / 1e9 - 15.24).abs() < 0.01 && (inputs / 1e9 - 0.67).abs() < 0.01);
    // LLaMA-Factory's LoRA keeps the encoder frozen: no activation of it is kept.
    let lora = r#""framework": "llamafactory", "method": "lora""#;
    assert_eq!(first(lora, 1024), first(lora, 0));
}
