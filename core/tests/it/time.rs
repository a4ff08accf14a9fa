//! Step time against Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU
//! Clusters Using Megatron-LM"), Table 1: GPT models from 1.7B to 1T parameters on DGX A100 80GB
//! (Selene), sequence 2048, vocabulary 51200, full recomputation, mixed precision.

use trainplan_core::evaluate;
use trainplan_core::plan::Plan;

/// A row of Table 1 with the run settings of the authors' script for it
/// (NVIDIA/Megatron-LM `examples/sc21/run_table_1.sh`, 2021: micro-batch and interleaved chunks):
/// (parameters in billions, heads, hidden, layers, TP, PP, GPUs, batch, micro-batch, VPP chunks,
/// achieved teraFLOP/s per GPU by Eq. 3, recomputation included).
type Row = (f64, u32, u32, u32, u32, u32, u32, u32, u32, u32, f64);

const TABLE_1: [Row; 10] = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 16, 1, 137.0),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 16, 1, 138.0),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 16, 1, 142.0),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 8, 1, 135.0),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 4, 1, 138.0),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 2, 3, 140.0),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 2, 2, 148.0),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 1, 2, 155.0),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 1, 3, 163.0),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 1, 1, 163.0),
];

fn table_1_plan(row: &Row) -> Plan {
    let (_, heads, hidden, layers, tp, pp, gpus, batch, micro_batch, vpp, _) = *row;
    let text = format!(
        r#"{{"model": {{"hf_config": {{"model_type": "gpt2", "vocab_size": 51200, "n_embd": {hidden}, "n_head": {heads},
            "n_layer": {layers}, "n_positions": 2048}}}}, "hardware": "a100-sxm-80g", "cluster": {{"nodes": {nodes}}},
            "framework": "megatron", "method": "pretrain", "precision": "fp16", "attention": "eager",
            "parallel": {{"tp": {tp}, "pp": {pp}, "vpp": {vpp}, "distributed_optimizer": false}},
            "recompute": {{"granularity": "full"}},
            "batch": {{"micro_batch": {micro_batch}, "global_batch": {batch}, "seq_len": 2048}}}}"#,
        nodes = gpus / 8
    );
    Plan::from_json(&text).unwrap()
}

#[test]
fn narayanan_table_1() {
    let mut errors = Vec::new();
    println!("params  TF/s paper  TF/s model  error");
    for row in &TABLE_1 {
        let plan = table_1_plan(row);
        let report = evaluate(&plan);
        let t = &report.time;
        let achieved = t.hardware_flops_per_step / t.step_seconds / plan.cluster.n_devices() as f64 / 1e12;
        let (billions, paper) = (row.0, row.10);
        let err = (achieved - paper) / paper;
        let bubble = report.schedule.bubble_fraction;
        println!("{billions:7.1}  {paper:10.0}  {achieved:10.1}  {:+5.1}%  bubble {bubble:.3}", 100.0 * err);
        errors.push(err.abs());
    }
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    let worst = errors.iter().cloned().fold(0.0, f64::max);
    println!("mean {:.1}%  worst {:.1}%", 100.0 * mean, 100.0 * worst);
    // The issue's target: at most 5 % on average and 10 % on the worst row.
    assert!(mean < 0.05 && worst < 0.10, "mean {mean:.3}, worst {worst:.3}");
}

fn grid() -> Vec<Plan> {
    let mut res = Vec::new();
    for model in ["qwen2.5-7b", "llama-3.1-70b", "mixtral-8x7b", "deepseek-v2-lite", "gpt2"] {
        for framework in ["megatron", "llamafactory", "verl"] {
            for method in ["pretrain", "lora", "grpo"] {
                for (tp, pp, vpp) in [(1, 1, 1), (2, 2, 1), (8, 4, 2)] {
                    for recompute in ["none", "selective", "full"] {
                        let text = format!(
                            r#"{{"model": "{model}", "framework": "{framework}", "method": "{method}", "cluster": {{"nodes": 4}},
                              "parallel": {{"tp": {tp}, "pp": {pp}, "vpp": {vpp}}}, "recompute": {{"granularity": "{recompute}"}},
                              "batch": {{"global_batch": 256}}}}"#
                        );
                        res.push(Plan::from_json(&text).unwrap());
                    }
                }
            }
        }
    }
    res
}

#[test]
fn step_time_is_finite_and_positive_for_every_plan() {
    for plan in grid() {
        let r = evaluate(&plan);
        let t = &r.time;
        for x in [t.step_seconds, t.tokens_per_second, t.mfu, t.hfu, r.schedule.bubble_fraction] {
            assert!(x.is_finite() && 0.0 <= x, "{plan:?}: {x}");
        }
        assert!(0.0 < t.step_seconds && t.mfu <= t.hfu && t.hfu < 1.0, "{:?}", t);
        let b = &t.breakdown;
        let parts = [
            b.compute_seconds,
            b.memory_bound_seconds,
            b.recompute_seconds,
            b.tp_comm_seconds,
            b.pp_comm_seconds,
            b.bubble_seconds,
            b.dp_comm_seconds,
            b.optimizer_seconds,
        ];
        assert!(parts.iter().all(|x| x.is_finite() && 0.0 <= *x));
    }
}

#[test]
fn more_devices_at_a_fixed_batch_cost_at_most_the_communication_they_add() {
    // Doubling data parallelism halves each device's micro-batches; the step can only grow by the
    // extra gradient communication (pp = 1: no bubble to change).
    for model in ["qwen2.5-7b", "llama-3-8b", "mixtral-8x7b"] {
        for nodes in [1, 2, 4] {
            let plan = |nodes: u32| {
                let text = format!(
                    r#"{{"model": "{model}", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": {nodes}}},
                        "parallel": {{"tp": 2}}, "batch": {{"global_batch": 512}}}}"#
                );
                evaluate(&Plan::from_json(&text).unwrap()).time
            };
            let (small, large) = (plan(nodes), plan(2 * nodes));
            let added = (large.breakdown.dp_comm_seconds - small.breakdown.dp_comm_seconds).max(0.0);
            assert!(large.step_seconds <= small.step_seconds + added + 1e-9, "{model} {nodes} nodes");
            assert!(
                small.tokens_per_second
                    <= large.tokens_per_second * (1.0 + added / large.step_seconds) + 1e-6
            );
        }
    }
}

#[test]
fn calibration_fits_a_measured_run_and_travels_with_the_plan() {
    let plan = Plan::from_json(
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2},
            "parallel": {"tp": 2, "pp": 2}, "batch": {"global_batch": 128}}"#,
    )
    .unwrap();
    let before = evaluate(&plan);
    // A run measured 25 % slower than predicted, with 3 GiB more at its peak.
    let measured_step = before.time.step_seconds * 1.25;
    let measured_peak = before.memory.peak_bytes + (3 << 30);
    let fitted = trainplan_core::calibrate(&plan, Some(measured_step), Some(measured_peak));
    let scale = fitted.efficiency_scale.unwrap();
    assert!(0.5 < scale && scale < 1.0, "slower than predicted means less efficient: {scale}");
    let mut calibrated = plan.clone();
    calibrated.calibration = fitted;
    let after = evaluate(&calibrated);
    assert!(
        (after.time.step_seconds / measured_step - 1.0).abs() < 1e-3,
        "{} vs {measured_step}",
        after.time.step_seconds
    );
    assert!((after.memory.peak_bytes as f64 / measured_peak as f64 - 1.0).abs() < 1e-6);
    assert_eq!(after.calibration.efficiency_scale, scale);
    // The fitted factors apply to the plans that follow: a bigger batch on the same cluster is
    // slower than the uncalibrated estimate by about the same factor.
    let mut bigger = calibrated.clone();
    bigger.batch.global_batch = std::num::NonZeroU32::new(256).unwrap();
    let mut bigger_raw = bigger.clone();
    bigger_raw.calibration = Default::default();
    assert!(evaluate(&bigger_raw).time.step_seconds < evaluate(&bigger).time.step_seconds);
    // And they travel in the permalink.
    let link = trainplan_core::permalink::encode(&calibrated);
    assert_eq!(trainplan_core::permalink::decode(&link).unwrap(), calibrated);
    // Out-of-range factors are refused.
    assert!(Plan::from_json(r#"{"model": "gpt2", "calibration": {"efficiency_scale": 0}}"#).is_err());
}

#[test]
fn rl_steps_add_generation_and_scoring() {
    let step = |extra: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {{"zero_stage": 3}}{extra}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time
    };
    let base = step("");
    assert!(0.0 < base.breakdown.rollout_seconds && 0.0 < base.breakdown.log_prob_seconds);
    let longer = step(r#", "rl": {"max_response_length": 4096}"#);
    assert!(base.breakdown.rollout_seconds < longer.breakdown.rollout_seconds);
    let more = step(r#", "rl": {"n_samples_per_prompt": 16}"#);
    assert!(base.step_seconds < more.step_seconds);
    let bigger = step(r#", "cluster": {"nodes": 4}"#);
    assert!(bigger.breakdown.rollout_seconds < base.breakdown.rollout_seconds);
    // Decoding one sequence at a time is bound by reading the weights each token: at least
    // 2 bytes × 7.6B / 4.8 TB/s ≈ 3.2 ms per token on an H200, so 1024 tokens take over 3 s.
    let single = step(
        r#", "hardware": "h200-sxm-141g", "cluster": {"devices_per_node": 1}, "batch": {"global_batch": 1}, "rl": {"n_samples_per_prompt": 1, "max_num_seqs": 1}"#,
    );
    assert!(1024.0 * 2.0 * 7.6e9 / 4.8e12 < single.breakdown.rollout_seconds);
}

/// An RL step's update pipeline: the step without its rollout, scoring, PPO's critic, the weights'
/// hand-over to the rollout and the tail.
fn rl_update_makespan(t: &trainplan_core::report::TimeReport) -> f64 {
    let b = &t.breakdown;
    t.step_seconds
        - b.rollout_seconds
        - b.log_prob_seconds
        - b.critic_seconds
        - b.weight_sync_seconds
        - b.dp_comm_seconds
        - b.optimizer_seconds
        - b.offload_seconds
}

/// PPO trains a critic of the actor's size on the same devices, one after the other: VeRL runs
/// `_compute_values` after the log-probabilities and `_update_critic` before `_update_actor`
/// (`RayPPOTrainer.fit`, verl 0.9.1); MindSpeed-RL its critic worker's `compute_values` and
/// `update_critic`. So a PPO step is the same plan's GRPO step and the critic's: a forward over
/// every response (a third of the update's pipeline, as a scoring forward) and the actor's update
/// again, its pipeline, gradient reduction and optimizer step, and on MindSpeed-RL the critic
/// worker's own host moves, which keep it off the device beside the actor.
#[test]
fn ppo_trains_its_critic_beside_the_actor() {
    for (framework, hardware, parallel) in
        [("verl-megatron", "h100-sxm-80g", r#""tp": 2"#), ("mindspeed-rl", "ascend-910b2", r#""tp": 4"#)]
    {
        let time = |method: &str| {
            let text = format!(
                r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "{method}", "hardware": "{hardware}",
                    "cluster": {{"nodes": 2}}, "parallel": {{{parallel}}}}}"#
            );
            evaluate(&Plan::from_json(&text).unwrap())
        };
        let (ppo_report, grpo_report) = (time("ppo"), time("grpo"));
        let (ppo, grpo) = (&ppo_report.time, &grpo_report.time);
        let (makespan, b) = (rl_update_makespan(ppo), &ppo.breakdown);
        assert_eq!(grpo.breakdown.critic_seconds, 0.0);
        // MindSpeed-RL's critic worker brings its parameters in for its values and its optimizer
        // states for its update, and sends both out after, whatever the launch file says
        // (`CriticWorker`, mindspeed_rl/workers/critic_worker.py at 05a90d7): the actor's size,
        // its fullest stage's bytes, each way over the host link.
        let moves = match framework {
            "mindspeed-rl" => {
                let fullest = |bytes: fn(&trainplan_core::report::StageReport) -> u64| {
                    ppo_report.memory.stages.iter().map(bytes).max().unwrap() as f64
                };
                2.0 * (fullest(|s| s.weights) + fullest(|s| s.optimizer))
                    / trainplan_core::time::HOST_LINK_BYTES_PER_SECOND
            }
            _ => 0.0,
        };
        let critic = makespan / 3.0 + makespan + b.dp_comm_seconds + b.optimizer_seconds + moves;
        assert!(0.0 < critic);
        assert!(
            (b.critic_seconds / critic - 1.0).abs() < 1e-9,
            "{framework}: {} against {critic}",
            b.critic_seconds
        );
        let added = ppo.step_seconds - grpo.step_seconds;
        assert!(
            (added / b.critic_seconds - 1.0).abs() < 1e-9,
            "{framework}: {added} against {}",
            b.critic_seconds
        );
        // The critic's training passes count in MFU as the actor's do.
        assert!((ppo.model_flops_per_step / (2.0 * grpo.model_flops_per_step) - 1.0).abs() < 1e-12);
        // MindSpeed-RL's critic is never on the device beside the actor's states of the same phase
        // (it computes while they are offloaded, one worker after the other): no phase grows.
        if framework == "mindspeed-rl" {
            assert!(0.0 < moves);
            assert_eq!(ppo_report.memory.phases, grpo_report.memory.phases);
            assert_eq!(ppo_report.memory.peak_bytes, grpo_report.memory.peak_bytes);
        }
    }
}

/// Once a step the trained weights go to the rollout engine. VeRL's FSDP engine gathers every
/// parameter whole in fp32 over its FSDP group (`DTensor.full_tensor()` in
/// `FSDPEngine.get_per_tensor_param`, verl 0.9.1), so at ZeRO-3 over 8 H100 each device receives
/// 7/8 of 7,615,616,512 × 4 bytes over NVLink (the catalog's 900 GB/s both ways, 450 one way); at
/// ZeRO-0 (`fsdp_size=1`) it gathers nothing, and the rest, handing the model to the engine beside
/// it, is the same: the two differ by that gather alone. A LoRA plan hands over its adapters alone,
/// but its adapter engine sleeps at vLLM's level 1 and brings its weights back from the host first
/// (`_resolve_sleep_level`, VeRL resumes them before each sync): the engine's bf16 copy, out and in
/// over the host link. MindSpeed-RL with neither TP nor PP reshards nothing; at TP 4 it gathers
/// its stage over the TP ranks. No plan but RL has it.
#[test]
fn rl_steps_hand_their_weights_to_the_rollout_engine() {
    const N: f64 = 7_615_616_512.0;
    let report = |text: &str| evaluate(&Plan::from_json(text).unwrap());
    let verl = |extra: &str| {
        report(&format!(r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"{extra}}}"#))
    };
    let sync = |r: &trainplan_core::Report| r.time.breakdown.weight_sync_seconds;
    let (sharded, whole) =
        (verl(r#", "parallel": {"zero_stage": 3}"#), verl(r#", "parallel": {"zero_stage": 0}"#));
    let h100 = trainplan_core::hardware::device("h100-sxm-80g").unwrap();
    let gather = trainplan_core::time::ring_seconds_on(&h100, 4.0 * N, 8.0, 450e9, false);
    assert!(
        (sync(&sharded) - sync(&whole) - gather).abs() < 1e-9,
        "{} − {} against {gather}",
        sync(&sharded),
        sync(&whole)
    );
    assert!(0.0 < sync(&whole));
    let lora = verl(r#", "parallel": {"zero_stage": 3}, "rl": {"lora": true}"#);
    let engine = lora.memory.rollout.as_ref().unwrap().weights_bytes as f64;
    let woken = 2.0 * engine / trainplan_core::time::HOST_LINK_BYTES_PER_SECOND;
    assert!(woken <= sync(&lora) && sync(&lora) < woken + 0.01, "{} against {woken}", sync(&lora));
    let mindspeed = |parallel: &str| {
        report(&format!(
            r#"{{"model": "qwen2.5-7b", "framework": "mindspeed-rl", "method": "grpo", "hardware": "ascend-910b2",
                "cluster": {{"nodes": 2}}, "parallel": {{{parallel}}}}}"#
        ))
    };
    assert_eq!(sync(&mindspeed(r#""tp": 1, "pp": 1"#)), 0.0);
    assert!(0.0 < sync(&mindspeed(r#""tp": 4"#)));
    let sft = report(r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "sft-full"}"#);
    assert_eq!(sync(&sft), 0.0);
}

/// VeRL's FSDP engine keeps the reference's fp32 shards on the host (a forward-only engine wraps
/// its model in FSDP's CPU offload: verl 0.9.1 `FSDPEngine._build_fsdp_module`), so each of the
/// reference's forwards copies every unit's shard in (`FlatParamHandle.pre_unshard`); the forward
/// is no shorter than the copies. Qwen2.5-7B GRPO on 8 H100 at ZeRO-0 (`fsdp_size=1`: each device
/// the whole model): 7,615,616,512 parameters (the HF checkpoint's count), 4 bytes each, for 64
/// prompts × 5 responses ÷ 8 devices, one a micro-batch = 40 micro-batches (the plan's defaults),
/// over the host link: longer than the forward itself, the update's pipeline ÷ 3 (docs/time.md,
/// "RL"), which the actor's scoring takes. At ZeRO-3 the copies are an eighth as long, and still
/// longer.
#[test]
fn verl_reference_forwards_wait_on_their_weights_from_the_host() {
    const N: f64 = 7_615_616_512.0;
    let time = |zero: u32| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {{"zero_stage": {zero}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time
    };
    let copies = |shards: f64| 4.0 * N * 40.0 / shards / trainplan_core::time::HOST_LINK_BYTES_PER_SECOND;
    let forward = |t: &trainplan_core::report::TimeReport| rl_update_makespan(t) / 3.0;
    let whole = time(0);
    let (f, s) = (forward(&whole), copies(1.0));
    assert!(f < s, "the copies ({s} s) outlast the forward ({f} s)");
    let log_prob = whole.breakdown.log_prob_seconds;
    assert!((log_prob / (f + s) - 1.0).abs() < 1e-9, "{log_prob} against {f} + {s}");
    let sharded = time(3);
    let (f, s) = (forward(&sharded), copies(8.0));
    assert!(f < s, "{s} {f}");
    assert!((sharded.breakdown.log_prob_seconds / (f + s) - 1.0).abs() < 1e-9);
    // Scoring 8 sequences at a time (`ref.log_prob_micro_batch_size_per_gpu=8`, the update's
    // micro-batch 1), the 40 a device scores take 5 forwards, not 40: 5 copies of the shards.
    let text = r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 0},
        "rl": {"log_prob_micro_batch": 8}}"#;
    let larger = evaluate(&Plan::from_json(text).unwrap()).time;
    let (f, s) = (forward(&larger), copies(1.0) * 5.0 / 40.0);
    assert!(
        (larger.breakdown.log_prob_seconds / (f + s) - 1.0).abs() < 1e-9,
        "{} against {f} + {s}",
        larger.breakdown.log_prob_seconds
    );
}

/// Without the KL loss (`use_kl_loss=False`, as DAPO runs) VeRL builds no reference
/// (`need_reference_policy`, verl/trainer/ppo/utils.py at verl 0.9.1): the log-probabilities are
/// the actor's forward alone, a third of the update's pipeline, no reference copies cross the host
/// link, the log-prob phase holds no reference and the host no shards. The launch file says so.
#[test]
fn verl_without_the_kl_loss_runs_no_reference() {
    let report = |kl: bool| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {{"zero_stage": 3}},
                "rl": {{"kl_loss": {kl}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap())
    };
    let (with, without) = (report(true), report(false));
    let forward = rl_update_makespan(&without.time) / 3.0;
    let log_prob = without.time.breakdown.log_prob_seconds;
    assert!((log_prob / forward - 1.0).abs() < 1e-9, "{log_prob} against {forward}");
    assert!(log_prob < with.time.breakdown.log_prob_seconds / 2.0);
    let reference = |r: &trainplan_core::Report| {
        r.memory
            .phases
            .iter()
            .flat_map(|p| &p.parts)
            .filter(|x| x.part == "reference")
            .map(|x| x.bytes)
            .sum::<u64>()
    };
    assert!(0 < reference(&with));
    assert_eq!(reference(&without), 0);
    assert!(0 < with.memory.host_bytes_per_node);
    assert_eq!(without.memory.host_bytes_per_node, 0);
    let plan = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"kl_loss": false}}"#,
    )
    .unwrap();
    let files = trainplan_core::emit::emit(&plan, "#").unwrap();
    assert!(files[0].text.contains("actor_rollout_ref.actor.use_kl_loss=False"));
    assert!(!files[0].text.contains("kl_loss_coef"));
}

/// DeepSpeed steps an offloaded optimizer with its CPU Adam (`DeepSpeedCPUAdam`), and Megatron-LM
/// with PyTorch's fused AdamW on the host, each of which loads the
/// fp32 gradient, both moments and the parameter and stores three of them (28 bytes a parameter:
/// `Step_AVX`, csrc/includes/cpu_adam.h) through host memory; swapped to NVMe (ZeRO-Infinity), each
/// step reads every device's fp32 parameters, moments and gradients (16 bytes a parameter) from the
/// node's volume and writes them back, the node's eight devices sharing its 10 GB/s of reads and
/// 5 of writes (or what the plan gives), and parameters offloaded there come in for every
/// micro-batch's forward and backward at the slower of the drive and the host link, and go back
/// once a step. Llama-2-13B (13,015,864,320 parameters) at ZeRO-3 on 8 H100.
#[test]
fn offloaded_optimizers_step_on_the_cpu_and_swap_through_nvme() {
    let report = |parallel: &str, cluster: &str| {
        evaluate(
            &Plan::from_json(&format!(
                r#"{{"model": "llama-2-13b", "framework": "deepspeed", "method": "sft-full",
                    "cluster": {{"nodes": 1{cluster}}}, "parallel": {{"zero_stage": 3, "offload_optimizer": true{parallel}}}}}"#
            ))
            .unwrap(),
        )
    };
    let (cpu, nvme) = (report("", ""), report(r#", "offload_device": "nvme""#, ""));
    let owned = 13_015_864_320.0 / 8.0;
    let cpu_adam = 28.0 * owned / trainplan_core::time::HOST_MEMORY_BYTES_PER_SECOND;
    let b = &cpu.time.breakdown;
    assert!(
        (b.optimizer_seconds / cpu_adam - 1.0).abs() < 1e-9,
        "{} against {cpu_adam}",
        b.optimizer_seconds
    );
    assert_eq!(nvme.time.breakdown.optimizer_seconds, b.optimizer_seconds);
    // Megatron-LM's `--optimizer-cpu-offload` steps PyTorch's fused AdamW over the host's fp32
    // copies (`HybridDeviceOptimizer`, `fused=True`): the same single pass over each of its
    // distributed optimizer's shard.
    let megatron = evaluate(
        &Plan::from_json(
            r#"{"model": "llama-2-13b", "framework": "megatron", "method": "pretrain",
                "parallel": {"distributed_optimizer": true, "offload_optimizer": true}}"#,
        )
        .unwrap(),
    );
    let step = megatron.time.breakdown.optimizer_seconds;
    assert!((step / cpu_adam - 1.0).abs() < 1e-9, "{step} against {cpu_adam}");
    let swap = 16.0 * owned * 8.0 * (1.0 / 10e9 + 1.0 / 5e9);
    let added = nvme.time.breakdown.offload_seconds - b.offload_seconds;
    assert!((added / swap - 1.0).abs() < 1e-9, "{added} against {swap}");
    let fast =
        report(r#", "offload_device": "nvme""#, r#", "nvme_read_gb_per_s": 20, "nvme_write_gb_per_s": 10"#);
    let added = fast.time.breakdown.offload_seconds - b.offload_seconds;
    assert!((added / (swap / 2.0) - 1.0).abs() < 1e-9, "{added} against {}", swap / 2.0);
    // The parameters too: fetched twice a micro-batch (2 bytes of each device's shard) at the
    // drive's eighth of 10 GB/s, slower than the host link's 25, and written back once.
    let params =
        |device: &str| report(&format!(r#", "offload_params": true, "offload_device": "{device}""#), "");
    let (pcpu, pnvme) = (params("cpu"), params("nvme"));
    let fetched = 4.0 * owned * pcpu.memory.n_microbatches as f64;
    let expected = fetched / (10e9 / 8.0) + 2.0 * owned / (5e9 / 8.0) - fetched / 25e9 + swap;
    let added = pnvme.time.breakdown.offload_seconds - pcpu.time.breakdown.offload_seconds;
    assert!((added / expected - 1.0).abs() < 1e-9, "{added} against {expected}");
}

/// VeRL's Megatron engine offloads the reference's weights whole between its passes
/// (`megatron.param_offload=True` in the launch file; `BaseEngineCtx._context_switch` loads them
/// before the pass and offloads them after, verl 0.9.1), so the log-probabilities wait on the
/// device's 16-bit weights crossing the host link twice, beside the actor's and the reference's
/// forwards (two thirds of the update's pipeline, docs/time.md "RL"), and the host keeps them,
/// pinned, for each device. Qwen2.5-7B GRPO at TP 2 on 8 H100.
#[test]
fn verl_megatron_moves_the_reference_in_and_out_around_its_pass() {
    let report = evaluate(
        &Plan::from_json(
            r#"{"model": "qwen2.5-7b", "framework": "verl-megatron", "method": "grpo", "parallel": {"tp": 2}}"#,
        )
        .unwrap(),
    );
    let (makespan, b) = (rl_update_makespan(&report.time), &report.time.breakdown);
    let weights = report.memory.stages[0].weights as f64;
    let switch = 2.0 * weights / trainplan_core::time::HOST_LINK_BYTES_PER_SECOND;
    assert!(0.1 < switch);
    let expected = 2.0 * makespan / 3.0 + switch;
    assert!((b.log_prob_seconds / expected - 1.0).abs() < 1e-9, "{} against {expected}", b.log_prob_seconds);
    assert_eq!(report.memory.host_bytes_per_node, report.memory.stages[0].weights * 8);
}

/// MindSpeed-RL's launch file offloads the actor's states around the engine's generation
/// (`offload_train_param`, `offload_train_optimizer`, `offload_train_grad`), and its
/// `MegatronShardingManager` moves them once a step: the parameters out for the rollout, in for the
/// log-probabilities, out after them and in for the update; the optimizer states in for the update
/// and out after; the gradients dropped and remade, not copied; and the integrated worker brings
/// the reference in and out around its log-probabilities (MindSpeed-RL 05a90d7). Six moves of the
/// 16-bit weights and two of the optimizer states over the host link. With LoRA the reference
/// shares the actor's backbone (`share_backbone`): two moves of the weights, none of a reference.
#[test]
fn mindspeed_rl_moves_its_states_over_the_host_link_once_a_step() {
    for (lora, weight_moves) in [(false, 6.0), (true, 2.0)] {
        let report = evaluate(
            &Plan::from_json(&format!(
                r#"{{"model": "qwen2.5-7b", "framework": "mindspeed-rl", "method": "grpo", "hardware": "ascend-910b2",
                    "cluster": {{"nodes": 2}}, "rl": {{"lora": {lora}}}}}"#
            ))
            .unwrap(),
        );
        let stage = report.memory.stages.iter().max_by_key(|s| s.weights).unwrap();
        let moved = weight_moves * stage.weights as f64 + 2.0 * stage.optimizer as f64;
        let expected = moved / trainplan_core::time::HOST_LINK_BYTES_PER_SECOND;
        let offload = report.time.breakdown.offload_seconds;
        assert!(0.1 < expected, "{expected}");
        assert!((offload / expected - 1.0).abs() < 1e-9, "LoRA {lora}: {offload} against {expected}");
    }
}

#[test]
fn a_rollout_engine_short_of_kv_cache_decodes_in_more_waves() {
    // Qwen2.5-32B GRPO on VeRL, 8 H100, rollout TP 2: 64 prompts × 5 responses over 4 engines = 80
    // sequences an engine. Its bf16 weights are 32.8 GB a device (65.5 GB ÷ 2). One token's K and V:
    // 64 layers × 8 key/value heads × 128 × 2 × 2 bytes = 262,144 bytes (config.json), 131,072 a device.
    let rollout = |utilization: f64, response: u32| {
        let text = format!(
            r#"{{"model": "qwen2.5-32b", "framework": "verl", "method": "grpo", "parallel": {{"zero_stage": 3}},
                "rl": {{"rollout_tp": 2, "gpu_memory_utilization": {utilization}, "max_response_length": {response}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time.breakdown.rollout_seconds
    };
    // The engine: 0.6 of 80 GiB is 51.5 GB, 18.8 GB of it left beside the weights; 0.8 leaves 35.9 GB.
    // Responses of 1,024 tokens: at their average context (512 + 512 tokens, 134 MB a sequence) 0.6
    // holds 140 sequences, more than the 80: the engine's share changes nothing.
    assert_eq!(rollout(0.6, 1024), rollout(0.8, 1024));
    // Responses of 8,192 tokens (average 4,608, 604 MB a sequence): 0.6 holds 31 sequences, 3 waves
    // of the 80; 0.8 holds 59, 2 waves. The third wave reads the 65.5 GB of weights again at each of
    // its 8,192 decode steps.
    let (short, roomy) = (rollout(0.6, 8192), rollout(0.8, 8192));
    assert!(1.1 * roomy < short, "{short} s against {roomy} s");
}

#[test]
fn a_mean_response_shorter_than_the_longest_shortens_the_step_not_the_memory() {
    // Qwen2.5-7B GRPO on VeRL, 8 H100: 512 prompts × 5 responses over 8 engines (rollout TP 1), 320
    // sequences an engine decoding 256 at a time; prompts of 512 tokens, responses up to 1,024.
    let report = |rl: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {{"zero_stage": 3}},
                "batch": {{"global_batch": 512}}, "rl": {{{rl}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap())
    };
    let longest = report(r#""mean_response_length": 0"#);
    // Every response as long as the longest: the same step as a mean of 0, to the bit.
    let at_max = report(r#""mean_response_length": 1024"#);
    assert_eq!(at_max.time.step_seconds.to_bits(), longest.time.step_seconds.to_bits());
    // Responses of 256 tokens on average: the memory is the longest's, which any batch may reach.
    let mean = report(r#""mean_response_length": 256"#);
    assert_eq!(mean.memory.peak_bytes, longest.memory.peak_bytes);
    // Without padding the update trains on 512 + 256 tokens a sequence: every one of the
    // 2,560 sequences counted once, against 512 + 1,024.
    let tokens = |r: &trainplan_core::report::Report| r.time.tokens_per_second * r.time.step_seconds;
    assert!((tokens(&mean) / (2560.0 * 768.0) - 1.0).abs() < 1e-9, "{}", tokens(&mean));
    assert!((tokens(&longest) / (2560.0 * 1536.0) - 1.0).abs() < 1e-9, "{}", tokens(&longest));
    // Its model FLOPs: the linear layers' half (768 of 1,536 tokens), attention's quarter.
    let flops = mean.time.model_flops_per_step / longest.time.model_flops_per_step;
    assert!((0.25..0.5).contains(&flops), "{flops}");
    // The rollout: 320 × 256 tokens at 256 a step is 320 steps, fewer than the longest response's
    // 1,024, so 1,024 steps where two whole waves took 2,048; and every phase shorter.
    let (b, l) = (&mean.time.breakdown, &longest.time.breakdown);
    assert!(b.rollout_seconds < l.rollout_seconds && b.log_prob_seconds < l.log_prob_seconds);
    // The decode steps are the longest response's either way below 320 × μ / 256 = 1,024: a mean of
    // 128 decodes as many steps as 256, over a shorter cache.
    let shorter = report(r#""mean_response_length": 128"#);
    let rollout = shorter.time.breakdown.rollout_seconds;
    assert!(
        rollout <= b.rollout_seconds && 0.9 * b.rollout_seconds < rollout,
        "{rollout} against {}",
        b.rollout_seconds
    );
    // Prompts of 128 tokens on average as well (of at most 512): without padding the update
    // trains on 128 + 256 tokens a sequence, and the rollout prefills 128 a prompt.
    let prompts = report(r#""mean_response_length": 256, "mean_prompt_length": 128"#);
    assert!((tokens(&prompts) / (2560.0 * 384.0) - 1.0).abs() < 1e-9, "{}", tokens(&prompts));
    assert!(prompts.time.breakdown.rollout_seconds < b.rollout_seconds);
    assert_eq!(prompts.memory.peak_bytes, longest.memory.peak_bytes);
    // Padded (no `remove_padding`), the update trains on every response at the longest: its
    // tokens are the longest's, and only the rollout is shorter.
    let padded = report(r#""mean_response_length": 256, "remove_padding": false"#);
    assert!((tokens(&padded) / (2560.0 * 1536.0) - 1.0).abs() < 1e-9, "{}", tokens(&padded));
    assert!(padded.time.breakdown.rollout_seconds < l.rollout_seconds);
}

#[test]
fn llamafactory_trains_each_sample_at_its_own_length_at_micro_batch_one() {
    // Qwen2.5-7B LoRA SFT on LLaMA-Factory, 8 H100, cutoff_len 4,096, 64 samples a step.
    let report = |rest: &str| {
        let text =
            format!(r#"{{"model": "qwen2.5-7b", "batch": {{"global_batch": 64, "seq_len": 4096{rest}}}}}"#);
        evaluate(&Plan::from_json(&text).unwrap())
    };
    let full = report("");
    // Samples of 512 tokens on average: the step trains 64 × 512 tokens, the memory stays at 4,096.
    let mean = report(r#", "mean_seq_len": 512"#);
    assert_eq!(mean.memory.peak_bytes, full.memory.peak_bytes);
    let tokens = |r: &trainplan_core::report::Report| r.time.tokens_per_second * r.time.step_seconds;
    assert!((tokens(&mean) / (64.0 * 512.0) - 1.0).abs() < 1e-9, "{}", tokens(&mean));
    assert!((tokens(&full) / (64.0 * 4096.0) - 1.0).abs() < 1e-9, "{}", tokens(&full));
    // The GEMMs scale with the tokens (an eighth), attention with their square (a 64th), the
    // step's fixed costs (the adapters' reduction, the optimizer) not at all.
    let flops = mean.time.model_flops_per_step / full.time.model_flops_per_step;
    assert!((1.0 / 64.0..=1.0 / 8.0).contains(&flops), "{flops}");
    assert!(
        mean.time.step_seconds < full.time.step_seconds / 4.0,
        "{} against {}",
        mean.time.step_seconds,
        full.time.step_seconds
    );
    // At micro-batch 2 each pair is padded to its longer sample: the step counts 4,096, a note says so.
    let padded = report(r#", "micro_batch": 2, "mean_seq_len": 512"#);
    let at_two = report(r#", "micro_batch": 2"#);
    assert_eq!(padded.time.step_seconds.to_bits(), at_two.time.step_seconds.to_bits());
    assert!(padded.findings.iter().any(|f| f.code == "llamafactory.mean_seq_padded"));
    // Megatron-LM packs its samples into full sequences: the mean changes nothing there.
    let megatron = |rest: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "megatron", "method": "sft-full", "batch": {{"seq_len": 4096{rest}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time.step_seconds
    };
    assert_eq!(megatron("").to_bits(), megatron(r#", "mean_seq_len": 512"#).to_bits());
}

#[test]
fn moe_decoding_reads_every_expert_a_batch_routes_to() {
    // Qwen3-30B-A3B (config.json: 48 layers of 128 experts, top 8): 30.5 B parameters, 3.3 B active.
    // GRPO on VeRL, 8 H100, rollout TP 2: 64 prompts × 5 responses over 4 engines, 80 sequences each
    // decoded together. A step's 80 tokens leave an expert untouched with probability
    // (1 − 8/128)^80 = 0.6 %, so each of the 1,024 decode steps reads nearly all 61 GB of bf16
    // weights over the engine's 2 devices: at the H100's full 3.35 TB/s each, at least
    // 1,024 × 0.99 × 61.1 GB ÷ 6.7 TB/s = 9.2 s (reading only the active weights would take 1.0 s).
    let rollout = |ep: u32| {
        let text = format!(
            r#"{{"model": "qwen3-30b-a3b", "framework": "verl", "method": "grpo", "parallel": {{"zero_stage": 3}},
                "rl": {{"rollout_tp": 2, "rollout_ep": {ep}}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        let total = trainplan_core::model::count_params(&plan.model.arch).total() as f64;
        assert!((total / 1e9 - 30.5).abs() < 0.1, "{total}");
        let bound = 1024.0 * 0.99 * 2.0 * total / (2.0 * 3.35e12);
        (evaluate(&plan).time.breakdown.rollout_seconds, bound)
    };
    let (alone, bound) = rollout(1);
    assert!(bound < alone, "{alone} s, at least {bound} s");
    // Spread over EP 8 (TP 2 × DP 4), each device holds 16 of the 128 experts of a layer and reads
    // only those: decoding is faster, though each of its 1,024 steps now dispatches and combines
    // the tokens of its 48 MoE layers, 96 calls of at least the 20 µs a collective costs: 2.0 s.
    let (spread, _) = rollout(8);
    assert!(spread < alone, "{spread} s against {alone} s");
    assert!(1024.0 * 96.0 * 20e-6 < spread, "{spread} s");
}

#[test]
fn the_schedule_a_plan_names_runs_and_zero_bubble_schedules_bubble_less() {
    let run = |schedule: &str| {
        let text = format!(
            r#"{{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 8}},
                "parallel": {{"tp": 8, "pp": 8, "schedule": "{schedule}"}}, "batch": {{"global_batch": 64}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap())
    };
    let one = run("1f1b");
    let zb = run("zb-h1");
    let dual = run("dualpipev");
    let gpipe = run("gpipe");
    assert_eq!((one.schedule.name, zb.schedule.name, dual.schedule.name), ("1f1b", "zb-h1", "dualpipev"));
    assert!(zb.schedule.bubble_fraction < one.schedule.bubble_fraction);
    assert!(dual.schedule.bubble_fraction < one.schedule.bubble_fraction);
    assert!(zb.time.step_seconds < one.time.step_seconds);
    // GPipe has 1F1B's bubble but holds every micro-batch's activations.
    assert!(one.memory.stages[0].activations < gpipe.memory.stages[0].activations);
    assert_eq!(run("auto").schedule.name, "1f1b");
}

#[test]
fn overlap_switches_never_slow_a_step() {
    let base = r#""model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 16},
        "batch": {"global_batch": 256}"#;
    let step = |parallel: &str| {
        evaluate(&Plan::from_json(&format!("{{{base}, \"parallel\": {{{parallel}}}}}")).unwrap())
            .time
            .step_seconds
    };
    let plain = step(r#""tp": 8, "pp": 2, "distributed_optimizer": true"#);
    let grad = step(r#""tp": 8, "pp": 2, "distributed_optimizer": true, "overlap_grad_reduce": true"#);
    let both = step(
        r#""tp": 8, "pp": 2, "distributed_optimizer": true, "overlap_grad_reduce": true, "overlap_param_gather": true"#,
    );
    let tp = step(r#""tp": 8, "pp": 2, "distributed_optimizer": true, "tp_comm_overlap": true"#);
    assert!(grad <= plain && both <= grad && tp < plain, "{plain} {grad} {both} {tp}");
}

/// VeRL's Megatron engine reduces gradients after the backward unless `override_ddp_config` says
/// otherwise (verl 0.9.1 `verl/utils/megatron_utils.py`: `overlap_grad_reduce: False`); overlapped,
/// the reduction hides behind the last backward as on Megatron-LM. VeRL's FSDP engine has no such
/// key: the switch changes nothing there.
#[test]
fn verl_megatron_overlaps_its_gradient_reduction_when_told() {
    let dp_comm = |framework: &str, overlap: bool| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "grpo", "cluster": {{"nodes": 2}},
                "parallel": {{"tp": 2, "distributed_optimizer": true, "overlap_grad_reduce": {overlap}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time.breakdown.dp_comm_seconds
    };
    let (off, on) = (dp_comm("verl-megatron", false), dp_comm("verl-megatron", true));
    assert!(0.0 < on && on < off, "{off} {on}");
    assert_eq!(dp_comm("verl", false), dp_comm("verl", true));
}

#[test]
fn mini_batches_and_swapped_optimizers_cost_what_they_move() {
    let step = |framework: &str, rl: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "grpo",
                "batch": {{"global_batch": 256}}, "rl": {rl}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time
    };
    // Four updates per step (256 prompts in mini-batches of 64): on VeRL's Megatron engine, which
    // reduces the gradients once an update, four gradient reductions and optimizer steps; rollout
    // and training passes unchanged.
    let (one, four) = (step("verl-megatron", "{}"), step("verl-megatron", r#"{"mini_batch": 64}"#));
    let (a, b) = (&one.breakdown, &four.breakdown);
    assert!(0.0 < a.dp_comm_seconds);
    assert!((b.dp_comm_seconds / a.dp_comm_seconds - 4.0).abs() < 1e-9);
    assert!((b.optimizer_seconds / a.optimizer_seconds - 4.0).abs() < 1e-9);
    assert_eq!(a.rollout_seconds, b.rollout_seconds);
    assert_eq!(a.compute_seconds, b.compute_seconds);
    // VeRL's FSDP engine reduces after every micro-batch (`sharded.rs`), however the micro-batches
    // are grouped into updates: the same reductions, four optimizer steps.
    let (one, four) = (step("verl", "{}"), step("verl", r#"{"mini_batch": 64}"#));
    let (a, b) = (&one.breakdown, &four.breakdown);
    assert_eq!(a.dp_comm_seconds, b.dp_comm_seconds);
    assert!((b.optimizer_seconds / a.optimizer_seconds - 4.0).abs() < 1e-9);

    // MindSpeed swap-optimizer: 12 bytes per owned parameter in and out over the host link.
    let swap = |on: bool| {
        let text = format!(
            r#"{{"model": "qwen2.5-32b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full",
                "cluster": {{"nodes": 2}}, "parallel": {{"tp": 8, "distributed_optimizer": true, "swap_optimizer": {on}}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        let report = evaluate(&plan);
        (report.time.breakdown.offload_seconds, report.memory.stages[0].weights)
    };
    let ((kept, _), (swapped, weights)) = (swap(false), swap(true));
    assert_eq!(kept, 0.0);
    // Parameters on a device = bf16 weight bytes ÷ 2; each of the 2 data-parallel ranks owns half.
    let owned = weights as f64 / 2.0 / 2.0;
    let expected = 2.0 * 12.0 * owned / trainplan_core::time::HOST_LINK_BYTES_PER_SECOND;
    assert!((swapped / expected - 1.0).abs() < 1e-9, "{swapped} {expected}");
}

/// The bubble is a share of the step, in [0, 1), whatever the schedule and however few the
/// micro-batches; the idle ÷ busy ratio of Narayanan et al. 2021 is kept beside it and the two
/// agree: share = ratio / (1 + ratio), both from the same idle and busy times.
#[test]
fn bubble_is_a_share_of_the_step() {
    for text in [
        // DeepSeek-V3 on PP 16 with 8 micro-batches: idle exceeds busy (ratio > 1).
        r#"{"model": "deepseek-v3", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 128},
            "parallel": {"pp": 16, "ep": 64, "uneven_layers": true, "distributed_optimizer": true},
            "batch": {"global_batch": 64, "seq_len": 4096}}"#,
        r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 8},
            "parallel": {"tp": 8, "pp": 8}, "batch": {"global_batch": 8}}"#,
        r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 8},
            "parallel": {"tp": 8, "pp": 4, "vpp": 5}, "batch": {"global_batch": 256}}"#,
        r#"{"model": "qwen2.5-7b"}"#,
    ] {
        let r = evaluate(&Plan::from_json(text).unwrap());
        let (share, ratio) = (r.schedule.bubble_fraction, r.schedule.bubble_ratio);
        assert!((0.0..1.0).contains(&share), "{share} for {text}");
        assert!((share - ratio / (1.0 + ratio)).abs() < 1e-9, "{share} vs {ratio}");
    }
    let few = evaluate(
        &Plan::from_json(
            r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain",
        "cluster": {"nodes": 8}, "parallel": {"tp": 8, "pp": 8}, "batch": {"global_batch": 4}}"#,
        )
        .unwrap(),
    );
    // 8 stages (64 devices, DP 1), 4 micro-batches: (p − 1)/m = 7/4 idle per busy.
    assert!(1.0 < few.schedule.bubble_ratio, "{}", few.schedule.bubble_ratio);
}

/// The network model uses the plan's cluster: a group inside the scale-up domain runs at NVLink
/// speed, one that leaves it at the NICs'. H100 TP 8 on nodes of 8 vs nodes of 4 (the domain
/// follows the node); GB200 EP 16 inside one NVL72 rack vs the same plan told its domain is a
/// tray of 4.
#[test]
fn the_plans_cluster_and_scale_up_domain_shape_the_network() {
    let step = |text: &str| evaluate(&Plan::from_json(text).unwrap()).time.step_seconds;
    let tp8 = |per_node: u32| {
        format!(
            r#"{{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain",
                "cluster": {{"nodes": 8, "devices_per_node": {per_node}}}, "parallel": {{"tp": 8, "pp": 4,
                "sequence_parallel": true}}, "batch": {{"global_batch": 64}}}}"#
        )
    };
    let (in_node, across) = (step(&tp8(8)), step(&tp8(4)));
    assert!(in_node * 1.2 < across, "TP 8 in a node {in_node:.2} s, across nodes {across:.2} s");
    let gb200 = |domain: &str| {
        format!(
            r#"{{"model": "qwen3-30b-a3b", "hardware": "gb200-186g", "framework": "megatron", "method": "pretrain",
                "cluster": {{"nodes": 4{domain}}}, "parallel": {{"ep": 16}}, "batch": {{"global_batch": 64}}}}"#
        )
    };
    let plan = Plan::from_json(&gb200("")).unwrap();
    assert_eq!((plan.cluster.devices_per_node.get(), plan.cluster.scale_up_domain.get()), (4, 72));
    let (rack, trays) = (step(&gb200("")), step(&gb200(r#", "scale_up_domain": 4"#)));
    assert!(rack < trays, "EP 16 in the NVL72 rack {rack:.3} s, across trays {trays:.3} s");
    // The domain is written only when it is not the default, and reads back.
    assert_eq!(plan.to_file().cluster.scale_up_domain, None);
    let file = Plan::from_json(&gb200(r#", "scale_up_domain": 4"#)).unwrap().to_file();
    assert_eq!(file.cluster.scale_up_domain, Some(4));
}

/// fp8 is not 2× bf16: only the linear layers run on the fp8 units, after casting their inputs,
/// while attention, norms, softmax, embedding and head stay in bf16. torchtitan
/// `docs/performance.md` Table 1 (Llama 3.1 8B, 8 × H100, FSDP, local batch 2, sequence 8192,
/// selective recompute): bf16 6,667 and fp8 8,532 tokens/s per GPU, ×1.28. The same layout here
/// (Megatron with the distributed optimizer, the nearest the planner has to FSDP) gives the ratio;
/// the absolute figures are another matter (their H100s run at 500 W with 2.4 TB/s HBM2e).
#[test]
fn fp8_speeds_up_the_linear_layers_only() {
    let plan = |precision: &str| {
        Plan::from_json(&format!(
            r#"{{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "precision": "{precision}",
                "parallel": {{"distributed_optimizer": true}}, "recompute": {{"granularity": "selective"}},
                "batch": {{"micro_batch": 2, "global_batch": 16, "seq_len": 8192}}}}"#
        ))
        .unwrap()
    };
    let (bf16, fp8) = (evaluate(&plan("bf16")), evaluate(&plan("fp8")));
    let ratio = fp8.time.tokens_per_second / bf16.time.tokens_per_second;
    let measured = 8532.0 / 6667.0;
    println!(
        "torchtitan Llama 3.1 8B fp8 ÷ bf16: measured {measured:.3}, planned {ratio:.3} ({:+.1}%)",
        100.0 * (ratio / measured - 1.0)
    );
    assert!((ratio / measured - 1.0).abs() < 0.05, "{ratio}");
    // MFU counts against the bf16 peak, so the fp8 plan's MFU is the bf16 plan's times the ratio.
    assert!((fp8.time.mfu / bf16.time.mfu - ratio).abs() < 1e-9);
}

/// On Blackwell, MXFP8 runs the linear layers on the fp8 units and NVFP4 on the fp4 units, at the
/// same share of their peak as fp8 on Hopper: faster than bf16, NVFP4 faster than MXFP8, and
/// neither anywhere near the peaks' ratios, since attention, norms and head stay in bf16.
#[test]
fn block_scaled_precisions_follow_the_blackwell_units() {
    let tps = |precision: &str| {
        evaluate(
            &Plan::from_json(&format!(
                r#"{{"model": "llama-3.1-70b", "hardware": "gb200-186g", "cluster": {{"nodes": 16}},
                    "framework": "megatron", "method": "pretrain", "precision": "{precision}",
                    "parallel": {{"tp": 4, "pp": 2, "sequence_parallel": true, "distributed_optimizer": true}},
                    "recompute": {{"granularity": "selective"}}, "batch": {{"micro_batch": 1, "global_batch": 128, "seq_len": 8192}}}}"#
            ))
            .unwrap(),
        )
        .time
        .tokens_per_second
    };
    let (bf16, mxfp8, nvfp4) = (tps("bf16"), tps("mxfp8"), tps("nvfp4"));
    println!("GB200 Llama-3.1-70B tokens/s: bf16 {bf16:.0}, mxfp8 {mxfp8:.0}, nvfp4 {nvfp4:.0}");
    assert!(bf16 < mxfp8 && mxfp8 < nvfp4);
    assert!(mxfp8 < 1.6 * bf16 && nvfp4 < 2.5 * bf16);
}

/// The breakdown accounts for the whole step: compute, memory-bound work, recomputation, the
/// collectives, the pipeline's sends and its idle time, the data-parallel tail, the optimizer and
/// offload add up to the step (an identity of the model, so a term left out shows here).
#[test]
fn the_breakdown_adds_up_to_the_step() {
    for plan in grid() {
        let t = evaluate(&plan).time;
        let b = &t.breakdown;
        let sum = b.compute_seconds
            + b.memory_bound_seconds
            + b.recompute_seconds
            + b.tp_comm_seconds
            + b.cp_comm_seconds
            + b.ep_comm_seconds
            + b.pp_comm_seconds
            + b.bubble_seconds
            + b.dp_comm_seconds
            + b.optimizer_seconds
            + b.offload_seconds
            + b.rollout_seconds
            + b.log_prob_seconds
            + b.critic_seconds
            + b.weight_sync_seconds;
        assert!((sum / t.step_seconds - 1.0).abs() < 1e-6, "{sum} vs {}: {b:?}\n{plan:?}", t.step_seconds);
    }
}

/// Context parallelism splits the attention's queries: each of the cp ranks scores s ÷ cp queries
/// against all s keys, so the model's FLOPs per step do not depend on cp (Megatron's count,
/// `num_floating_point_operations`, has no cp in it).
#[test]
fn context_parallelism_keeps_the_models_flops() {
    let flops = |cp: u32| {
        let text = format!(
            r#"{{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 1}},
                "parallel": {{"cp": {cp}, "distributed_optimizer": true}},
                "batch": {{"micro_batch": 1, "global_batch": 32, "seq_len": 32768}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time.model_flops_per_step
    };
    let (one, four) = (flops(1), flops(4));
    assert!((four / one - 1.0).abs() < 1e-12, "{one} vs {four}");
}

/// Real plans with even stages take the closed form, and it gives the step what the drawn timeline
/// (the schedule simulated pass by pass over its first micro-batches) gives.
#[test]
fn even_plans_take_the_closed_form_the_simulation_confirms() {
    use trainplan_core::time::uniform_makespan;
    for text in [
        // Narayanan et al. 2021 Table 1's 145.6B row: PP 8 × VPP 2 (80 layers, 5 per chunk).
        r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 16},
            "parallel": {"tp": 8, "pp": 8, "vpp": 2, "distributed_optimizer": true}, "batch": {"global_batch": 512, "seq_len": 4096}}"#,
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2},
            "parallel": {"tp": 4, "pp": 4}, "batch": {"global_batch": 64, "seq_len": 4096}}"#,
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2},
            "parallel": {"tp": 4, "pp": 4, "schedule": "gpipe"}, "batch": {"global_batch": 64, "seq_len": 4096}}"#,
    ] {
        let plan = Plan::from_json(text).unwrap();
        let mem = trainplan_core::memory::estimate(&plan);
        let t = trainplan_core::time::estimate(&plan, &mem);
        let p = &t.pipeline;
        let closed =
            uniform_makespan(p.schedule, p.microbatches, &p.costs).expect("even stages take the closed form");
        let simulated = t.timeline().makespan_seconds;
        assert!((closed - simulated).abs() <= 1e-9 * simulated, "{text}: {closed} vs {simulated}");
    }
}

/// Uneven stages take the period their whole schedule settles into, not the busiest rank's work:
/// the step's pipeline is within 0.1 % of the schedule simulated pass by pass over all its
/// micro-batches (the drawn timeline). Interleaved chunks of 2 and 1 layers wait on each other, so
/// each micro-batch adds more than any rank's passes: extended by the busiest rank's work, these
/// plans' pipelines came out 5 % (Qwen3-235B-A22B, PP 16 × VPP 4), 15 % (Llama 3.1 405B, PP 32 ×
/// 3 chunks) and 20 % (Qwen3-235B-A22B, PP 32 × VPP 2) short of their own schedule.
#[test]
fn uneven_stages_take_the_period_of_their_whole_schedule() {
    use trainplan_core::time::StepPart;
    for (model, pp, vpp, cp) in [
        ("qwen3-235b-a22b", 32, 2, 2),
        ("qwen3-235b-a22b", 16, 4, 1),
        ("llama-3.1-405b", 32, 4, 1),
        ("llama-3.1-405b", 16, 1, 2),
    ] {
        let text = format!(
            r#"{{"model": "{model}", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 128}},
                "parallel": {{"tp": 8, "pp": {pp}, "vpp": {vpp}, "cp": {cp}, "distributed_optimizer": true,
                "sequence_parallel": true}}, "recompute": {{"granularity": "selective"}},
                "batch": {{"micro_batch": 1, "global_batch": 1024, "seq_len": 8192}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        let t = trainplan_core::time::estimate(&plan, &trainplan_core::memory::estimate(&plan));
        // The stages are uneven: the schedule is simulated, not taken in closed form.
        let p = &t.pipeline;
        assert!(
            trainplan_core::time::uniform_makespan(p.schedule, p.microbatches, &p.costs).is_none(),
            "{text}"
        );
        let whole = t.whole_timeline();
        assert_eq!(whole.microbatches_drawn, whole.n_microbatches, "{text}");
        assert!(4 * pp <= whole.n_microbatches, "{text}: the steady state is extended");
        let start = whole.parts.iter().find(|part| part.part == StepPart::Pipeline).unwrap().start_seconds;
        let simulated = whole.events.iter().map(|e| e.end_seconds).fold(0.0, f64::max) - start;
        let step = p.makespan_seconds;
        assert!(
            (step - simulated).abs() <= 1e-3 * simulated,
            "{text}: {step} s against {simulated} s simulated"
        );
    }
}

/// Over every catalog model, each schedule the simulation runs (1F1B and interleaved, ZB-H1,
/// DualPipeV, GPipe) and stages split unevenly where the layers do not divide, the step's pipeline
/// stays within 2 % of its whole schedule simulated pass by pass (before the steady state was
/// extended by its own period, 66 of the 2,420 plans it compared then, over 56 models, were off by
/// more than 1 %, up to 15 %: Qwen3-0.6B's 28 layers in 16 chunks; then 4, at most 1.5 %, where the
/// busiest rank takes hundreds of micro-batches to settle).
#[test]
fn every_uneven_schedule_keeps_to_its_whole_simulation() {
    use trainplan_core::time::StepPart;
    let (mut compared, mut worst) = (0, (0.0_f64, String::new()));
    for model in trainplan_core::catalog::models() {
        for (framework, schedule) in [
            ("megatron", "auto"),
            ("megatron", "zb-h1"),
            ("mindspeed-llm", "dualpipev"),
            ("megatron", "gpipe"),
        ] {
            for (pp, vpp) in
                [(2, 1), (3, 1), (4, 1), (4, 2), (6, 1), (8, 1), (8, 2), (8, 3), (16, 1), (16, 2)]
            {
                for global_batch in [256, 1024] {
                    let text = format!(
                        r#"{{"model": "{}", "framework": "{framework}", "method": "pretrain", "cluster": {{"nodes": 64}},
                            "parallel": {{"tp": 8, "pp": {pp}, "vpp": {vpp}, "schedule": "{schedule}", "uneven_layers": true,
                            "distributed_optimizer": true}}, "batch": {{"micro_batch": 1, "global_batch": {global_batch}, "seq_len": 4096}}}}"#,
                        model.id
                    );
                    let Ok(plan) = Plan::from_json(&text) else { continue };
                    let t = trainplan_core::time::estimate(&plan, &trainplan_core::memory::estimate(&plan));
                    let whole = t.whole_timeline();
                    if whole.microbatches_drawn != whole.n_microbatches {
                        continue;
                    }
                    assert!(!whole.events.is_empty(), "{text}: no pass drawn");
                    let part = whole.parts.iter().find(|p| p.part == StepPart::Pipeline).unwrap();
                    let simulated =
                        whole.events.iter().map(|e| e.end_seconds).fold(0.0, f64::max) - part.start_seconds;
                    let off = (part.end_seconds - part.start_seconds) / simulated - 1.0;
                    compared += 1;
                    if worst.0.abs() < off.abs() {
                        worst = (off, text);
                    }
                }
            }
        }
    }
    assert!(2_000 < compared, "{compared} plans compared");
    assert!(worst.0.abs() <= 0.02, "{:+.2} % off: {}", 100.0 * worst.0, worst.1);
}

/// Every schedule a plan can name runs whole at any VPP: 1F1B named with virtual chunks runs
/// interleaved, as Megatron does whenever VPP is set (`get_forward_backward_func`,
/// megatron/core/pipeline_parallel/schedules.py; the launch file sets it), and GPipe and ZB-H1
/// run one chunk a rank, as at VPP 1. Before, their orders waited on chunks no rank ran: no pass
/// was drawn, and 1F1B at VPP 2 took a fallback 5 % faster than either real schedule.
#[test]
fn every_named_schedule_runs_whole_at_any_vpp() {
    let step = |schedule: &str, vpp: u32| {
        let text = format!(
            r#"{{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 4}},
                "parallel": {{"tp": 8, "pp": 4, "vpp": {vpp}, "schedule": "{schedule}", "distributed_optimizer": true}},
                "batch": {{"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        let t = trainplan_core::time::estimate(&plan, &trainplan_core::memory::estimate(&plan));
        let whole = t.whole_timeline();
        assert_eq!(whole.microbatches_drawn, whole.n_microbatches, "{text}");
        // Every pass of every micro-batch on every rank (and its chunks) is drawn: a forward and a
        // backward, and ZB-H1's weight pass; DualPipeV also splits some backwards' weight passes off.
        let per_microbatch = if schedule == "zb-h1" { 3 } else { 2 } * whole.n_ranks * whole.n_chunks;
        let (drawn, all) = (whole.events.len() as u32, per_microbatch * whole.n_microbatches);
        assert!(drawn == all || (schedule == "dualpipev" && all < drawn), "{text}: {drawn} passes of {all}");
        t.step_seconds
    };
    assert_eq!(step("1f1b", 2), step("interleaved", 2));
    assert!(step("interleaved", 2) < step("1f1b", 1));
    for schedule in ["gpipe", "zb-h1"] {
        assert_eq!(step(schedule, 2), step(schedule, 1), "{schedule}");
    }
    step("auto", 2);
    step("dualpipev", 2);
}

/// One layer's forward all-to-alls under Ulysses context parallelism, by the count of Jacobs et al.
/// 2023 ("DeepSpeed Ulysses", arXiv:2309.14509 §3): four all-to-alls (Q, K, V, the output), each
/// device keeping 1/c of the `held_bytes` it holds of them and sending the rest, here all inside
/// one NVLink domain (one direction of the device's NVLink bandwidth, its datasheet's figure), at
/// the collective library's latency and efficiency.
fn ulysses_layer_seconds(plan: &Plan, held_bytes: f64) -> f64 {
    let hw = &plan.hardware.hw;
    let c = f64::from(plan.parallel.cp.get());
    let sent_bytes = held_bytes * (c - 1.0) / c;
    4.0 * hw.collective_latency_seconds
        + sent_bytes / (hw.intra_node_bytes_per_second / 2.0 * hw.collective_eff)
}

/// A plan on one node of eight H100s (DP 1 where TP × CP fill it), one sequence a step, no
/// recomputation: the step runs each of the model's layers forward once and backward once.
fn cp_plan(model: &str, framework: &str, tp: u32, cp: u32, algo: &str, seq_len: u32) -> Plan {
    let text = format!(
        r#"{{"model": "{model}", "framework": "{framework}", "method": "pretrain",
            "parallel": {{"tp": {tp}, "cp": {cp}, "cp_algo": "{algo}"}}, "recompute": {{"granularity": "none"}},
            "batch": {{"micro_batch": 1, "global_batch": 1, "seq_len": {seq_len}}}}}"#
    );
    Plan::from_json(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// All-to-all is slower than the ring on a long sequence with grouped-query attention. Llama-3.1-8B
/// (32 layers; 32 query and 8 key/value heads of 128, its config.json) at 65,536 tokens over CP 8:
/// each device holds 8,192 tokens of Q, K, V and the output, 8,192 × (32 + 8 + 8 + 32) × 128
/// elements of 2 bytes = 167,772,160 B, and sends 7/8 of it, all of it on the critical path. The
/// ring sends 7 chunks of K and V (8,192 × 2 × 8 × 128 × 2 B = 33,554,432 B each) during the
/// attention core, whose work grows with the square of the sequence (4 · s² · q FLOPs): at 65,536
/// tokens it hides them whole, so the ring shows no CP time at all.
#[test]
fn all_to_all_context_parallelism_costs_its_four_all_to_alls_and_loses_to_a_hidden_ring() {
    let ring = evaluate(&cp_plan("llama-3.1-8b", "megatron", 1, 8, "ring", 65_536)).time;
    let plan = cp_plan("llama-3.1-8b", "megatron", 1, 8, "alltoall", 65_536);
    let all_to_all = evaluate(&plan).time;
    // Forward and backward (the same four on the gradients) of each of the 32 layers.
    let expected = 32.0 * 2.0 * ulysses_layer_seconds(&plan, 167_772_160.0);
    let got = all_to_all.breakdown.cp_comm_seconds;
    assert!((got / expected - 1.0).abs() < 1e-9, "{got} vs {expected}");
    assert_eq!(ring.breakdown.cp_comm_seconds, 0.0);
    assert!(
        ring.step_seconds < all_to_all.step_seconds,
        "{} vs {}",
        ring.step_seconds,
        all_to_all.step_seconds
    );
}

/// All-to-all is faster than the ring on a short sequence with multi-head attention. Llama-2-7B
/// (32 layers, 32 heads of 128 for queries, keys and values alike) at 4,096 tokens over CP 8:
/// each device holds 512 tokens × 4 × 4,096 elements × 2 B = 16,777,216 B of Q, K, V and the
/// output and sends 7/8 of it, 14,680,064 B; the ring sends 7 chunks of K and V, 7 × 512 × 2 ×
/// 4,096 × 2 B = 58,720,256 B, four times as much (2/c in general for multi-head attention), and a
/// 4,096-token attention core is too short to hide it.
#[test]
fn all_to_all_context_parallelism_beats_an_exposed_ring() {
    let ring = evaluate(&cp_plan("llama-2-7b", "megatron", 1, 8, "ring", 4096)).time;
    let plan = cp_plan("llama-2-7b", "megatron", 1, 8, "alltoall", 4096);
    let all_to_all = evaluate(&plan).time;
    let expected = 32.0 * 2.0 * ulysses_layer_seconds(&plan, 16_777_216.0);
    let got = all_to_all.breakdown.cp_comm_seconds;
    assert!((got / expected - 1.0).abs() < 1e-9, "{got} vs {expected}");
    assert!(got < ring.breakdown.cp_comm_seconds, "{got} vs {}", ring.breakdown.cp_comm_seconds);
    assert!(
        all_to_all.step_seconds < ring.step_seconds,
        "{} vs {}",
        all_to_all.step_seconds,
        ring.step_seconds
    );
}

/// With fewer key/value heads per TP rank than CP ranks, MindSpeed repeats K and V to the query
/// heads before its all-to-alls (`UlyssesContextAttention.forward`). Qwen2.5-7B (28 layers; 28
/// query and 4 key/value heads of 128, its config.json) at TP 2 × CP 4: 2 key/value heads per rank
/// against 4 CP ranks, so K and V move 14 heads each like Q and the output: 1,024 tokens × 4 × 14
/// × 128 elements × 2 B = 14,680,064 B held. TP 2 puts the four CP peers two ranks apart, all in
/// the node.
#[test]
fn mindspeed_repeats_too_few_key_value_heads_to_the_query_heads() {
    let plan = cp_plan("qwen2.5-7b", "mindspeed-llm", 2, 4, "alltoall", 4096);
    let got = evaluate(&plan).time.breakdown.cp_comm_seconds;
    let expected = 28.0 * 2.0 * ulysses_layer_seconds(&plan, 14_680_064.0);
    assert!((got / expected - 1.0).abs() < 1e-9, "{got} vs {expected}");
}

/// VeRL's only context parallelism is Ulysses: its plans cost the all-to-alls whatever
/// `parallel.cp_algo` says (VeRL has no such choice), and a 9,216-token sequence that a ring hides
/// behind the attention (the same model on Megatron-LM) still shows CP time.
#[test]
fn verl_context_parallelism_is_all_to_all() {
    let plan = |algo: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {{"zero_stage": 3, "cp": 2, "cp_algo": "{algo}"}},
                "rl": {{"max_prompt_length": 1024, "max_response_length": 8192}}, "batch": {{"global_batch": 64}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time
    };
    let (ring, all_to_all) = (plan("ring"), plan("alltoall"));
    assert_eq!(ring, all_to_all);
    assert!(0.0 < ring.breakdown.cp_comm_seconds);
    let megatron_ring = evaluate(&cp_plan("qwen2.5-7b", "megatron", 1, 2, "ring", 9216)).time;
    assert_eq!(megatron_ring.breakdown.cp_comm_seconds, 0.0);
}

/// VeRL's Megatron engine exchanges the context as megatron-core's `cp_comm_type` says (the ring
/// unless `override_transformer_config` names all-to-all): the same plan as VeRL's FSDP engine's
/// above, its 9,216-token sequences, hides the ring behind the attention and shows the all-to-alls.
#[test]
fn verl_megatron_exchanges_the_context_as_told() {
    let plan = |algo: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl-megatron", "method": "grpo", "parallel": {{"cp": 2, "cp_algo": "{algo}"}},
                "rl": {{"max_prompt_length": 1024, "max_response_length": 8192}}, "batch": {{"global_batch": 64}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time
    };
    let (ring, all_to_all) = (plan("ring"), plan("alltoall"));
    assert_eq!(ring.breakdown.cp_comm_seconds, 0.0);
    assert!(0.0 < all_to_all.breakdown.cp_comm_seconds, "{all_to_all:?}");
}

/// The bounds a search prunes by never cut a plan whose step is within the limit: for every plan of
/// the corpus (every framework and method) and each search-sized variant of its parallelism,
/// `time::estimate_within` with the plan's own step as the limit still answers, with the same step,
/// and `time::layer_bound_seconds` (the first bound, which a search works out ahead) is under it.
#[test]
fn pruning_bounds_never_exceed_the_step() {
    use trainplan_core::{memory, time};
    let (mut checked, mut rl) = (0, 0);
    for entry in crate::corpus::all() {
        for (pp, vpp) in [(None, None), (Some(4), Some(2)), (Some(8), None)] {
            let mut plan = Plan::from_json(&entry.plan).expect("corpus plans parse");
            if let (Some(pp), true) = (pp, trainplan_core::layout::model_parallel(plan.framework)) {
                plan.parallel.pp = std::num::NonZeroU32::new(pp).expect("non-zero");
                plan.parallel.vpp = std::num::NonZeroU32::new(vpp.unwrap_or(1)).expect("non-zero");
            }
            let mem = memory::estimate(&plan);
            let step = time::estimate(&plan, &mem).step_seconds;
            let effective = trainplan_core::knobs::effective(&plan);
            let within = time::estimate_within(&effective, &mem, Some(step))
                .unwrap_or_else(|| panic!("{}: pruned at its own step {step}", entry.name));
            assert_eq!(within.step_seconds, step, "{}", entry.name);
            let bound = time::layer_bound_seconds(&effective, &mem);
            assert!(
                0.0 < bound && !time::rules_out(step, bound),
                "{}: bound {bound} over step {step}",
                entry.name
            );
            // With RL the bound holds the rollout, which no layout of the training shortens.
            let rollout = time::estimate(&plan, &mem).breakdown.rollout_seconds;
            assert!(rollout <= bound, "{}: bound {bound} under the rollout {rollout}", entry.name);
            rl += usize::from(0.0 < rollout);
            checked += 1;
        }
    }
    assert!(100 < checked && 10 < rl, "{checked} plans, {rl} of them RL");
}

#[test]
fn each_decode_step_all_reduces_twice_a_layer_over_the_rollouts_tp() {
    // Llama 3.1 8B (32 layers) GRPO on VeRL over 8 H100, one engine of TP 8 decoding a single
    // response of 1,024 tokens. Each step reads the 16.06 GB of bf16 weights over the 8 devices (at
    // most 3.35 TB/s each: 0.60 ms) and makes 64 all-reduces of at least 8.5 µs, the fastest vLLM's
    // custom all-reduce was measured at on H100 (sgl-project/sglang pull request 2904): at least
    // 1,024 × (0.60 + 0.54) ms = 1.17 s. Without the all-reduces 0.78 s would do (the weights at
    // 80 % of the bandwidth).
    let plan = Plan::from_json(
        r#"{"model": "llama-3.1-8b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3},
            "rl": {"rollout_tp": 8, "n_samples_per_prompt": 1, "max_response_length": 1024},
            "batch": {"global_batch": 1}}"#,
    )
    .unwrap();
    let rollout = evaluate(&plan).time.breakdown.rollout_seconds;
    let weights =
        trainplan_core::model::count_params(&trainplan_core::catalog::model("llama-3.1-8b").unwrap().arch)
            .total() as f64
            * 2.0;
    assert!((weights / 1e9 - 16.06).abs() < 0.05, "{weights}");
    let bound = 1024.0 * (weights / (8.0 * 3.35e12) + 64.0 * 8.5e-6);
    assert!(bound < rollout, "{rollout} s, at least {bound} s");
}

/// Liger's kernels (LLaMA-Factory `enable_liger_kernel`, VeRL `use_liger`) fuse the norms, the
/// rotary embedding and SwiGLU, and for LLaMA-Factory's SFT the loss: the same GEMMs (the fused loss
/// runs the head's three products in forward), less memory-bound traffic. For DPO and VeRL's GRPO
/// actor only the fused modules apply, and still less.
#[test]
fn liger_kernels_cut_the_eager_traffic_not_the_gemms() {
    for (framework, method) in
        [("llamafactory", "lora"), ("llamafactory", "sft-full"), ("llamafactory", "dpo"), ("verl", "grpo")]
    {
        let breakdown = |liger: bool| {
            let text = format!(
                r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "{method}", "liger_kernel": {liger},
                    "parallel": {{"zero_stage": 3}}}}"#
            );
            trainplan_core::evaluate(&Plan::from_json(&text).unwrap()).time.breakdown
        };
        let (with, without) = (breakdown(true), breakdown(false));
        assert!((with.compute_seconds / without.compute_seconds - 1.0).abs() < 1e-12, "{method}");
        assert!(
            with.memory_bound_seconds < 0.8 * without.memory_bound_seconds,
            "{method}: {with:?} vs {without:?}"
        );
    }
}

#[test]
fn qlora_dequantizes_its_base_each_pass() {
    // bitsandbytes dequantizes each 4-bit weight to 16 bits in forward and again in backward (and
    // in the recomputed forward): 2.5 bytes a parameter a pass (`time::DEQUANT_4BIT_BYTES_PER_PARAM`),
    // memory-bound. Qwen2.5-7B (h 3,584; q and o 3,584 wide, k and v 512; MLP 18,944), 28 layers of
    // 233,046,016 linear weights, LoRA and QLoRA alike on 8 × H100 (3.35 TB/s): 8 micro-batches a
    // step, gradient checkpointing (three passes).
    let bound = |method: &str| {
        let plan = Plan::from_json(&format!(r#"{{"model": "qwen2.5-7b", "method": "{method}"}}"#)).unwrap();
        evaluate(&plan).time.breakdown.memory_bound_seconds
    };
    let weights = 3_584.0 * (3_584.0 + 512.0 + 512.0 + 3_584.0) + 3.0 * 3_584.0 * 18_944.0;
    assert_eq!(weights, 233_046_016.0);
    let expected = 2.5 * weights * 28.0 * 3.0 * 8.0 / (3.35e12 * trainplan_core::time::HBM_EFF);
    let added = bound("qlora") - bound("lora");
    assert!((added - expected).abs() < 1e-9 * expected, "{added} against {expected}");
}

/// DPO puts each pair's chosen and rejected responses through the policy as one batch, and the
/// frozen reference forward over both under `no_grad` (LLaMA-Factory 0.9.5
/// `PairwiseDataCollatorWithPadding`: "2 * n examples where the first n examples represent chosen
/// examples", `CustomDPOTrainer.compute_reference_log_probs`). Against full SFT of the same plan:
/// twice the sequences a micro-batch (activations and logits), the reference's bf16 weights beside
/// the policy's, and the reference's forward, a third of the training passes, in the step's
/// log-probability part. Samples count pairs, tokens both responses'.
#[test]
fn dpo_trains_both_responses_and_scores_them_with_the_reference() {
    let eval = |method: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "llamafactory", "method": "{method}", "parallel": {{"zero_stage": 3}},
                "recompute": {{"granularity": "none"}}, "batch": {{"micro_batch": 1, "global_batch": 64, "seq_len": 2048}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap())
    };
    let (dpo, sft) = (eval("dpo"), eval("sft-full"));
    let (d, s) = (&dpo.memory.stages[0], &sft.memory.stages[0]);
    assert_eq!(d.activations, 2 * s.activations);
    assert_eq!(d.logits, 2 * s.logits);
    assert_eq!(d.weights, 2 * s.weights, "the reference's bf16 copy, sharded as the policy's");
    let t = &dpo.time;
    let b = &t.breakdown;
    let makespan =
        t.step_seconds - b.log_prob_seconds - b.dp_comm_seconds - b.optimizer_seconds - b.offload_seconds;
    assert!((b.log_prob_seconds * 3.0 / makespan - 1.0).abs() < 1e-9, "{} of {makespan}", b.log_prob_seconds);
    assert_eq!(sft.time.breakdown.log_prob_seconds, 0.0);
    assert!((t.samples_per_second * t.step_seconds - 64.0).abs() < 1e-6);
    assert!((t.tokens_per_second * t.step_seconds - 2.0 * 64.0 * 2048.0).abs() < 1e-3);
    // LoRA DPO: the reference is the base with the adapters off (`disable_adapter()` in
    // `compute_reference_log_probs`), so no weights beyond LoRA SFT's; the pairs and the
    // reference's forward as in full DPO.
    let (dpo_lora, lora) = (eval("dpo-lora"), eval("lora"));
    let (d, s) = (&dpo_lora.memory.stages[0], &lora.memory.stages[0]);
    assert_eq!(d.weights, s.weights);
    assert_eq!((d.gradients, d.optimizer), (s.gradients, s.optimizer));
    assert_eq!(d.activations, 2 * s.activations);
    let b = &dpo_lora.time.breakdown;
    let makespan = dpo_lora.time.step_seconds
        - b.log_prob_seconds
        - b.dp_comm_seconds
        - b.optimizer_seconds
        - b.offload_seconds;
    assert!((b.log_prob_seconds * 3.0 / makespan - 1.0).abs() < 1e-9);
}

#[test]
fn mindspeed_llm_trains_each_sample_at_its_own_length_when_told_not_to_pad() {
    // Qwen2.5-7B full SFT on MindSpeed-LLM, 8 Ascend 910B2, TP 4, PP 2, sequence 4,096.
    let report = |rest: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "sft-full",
                "parallel": {{"tp": 4, "pp": 2, "distributed_optimizer": true}},
                "batch": {{"global_batch": 64, "seq_len": 4096{rest}}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        let script = trainplan_core::emit::emit(&plan, "#v1=x").unwrap().remove(0).text;
        (evaluate(&plan), script)
    };
    let (full, padded_script) = report("");
    let (mean, script) = report(r#", "mean_seq_len": 700"#);
    // Without a mean, every micro-batch is padded to --seq-length (MindSpeed-LLM's default).
    assert!(!padded_script.contains("--no-pad-to-seq-lengths"), "{padded_script}");
    assert!(script.contains("--no-pad-to-seq-lengths"), "{script}");
    // The step trains 64 × 700 tokens; the memory stays at 4,096, which any sample may reach.
    assert_eq!(mean.memory.peak_bytes, full.memory.peak_bytes);
    let tokens = |r: &trainplan_core::report::Report| r.time.tokens_per_second * r.time.step_seconds;
    assert!((tokens(&mean) / (64.0 * 700.0) - 1.0).abs() < 1e-9, "{}", tokens(&mean));
    assert!((tokens(&full) / (64.0 * 4096.0) - 1.0).abs() < 1e-9, "{}", tokens(&full));
    assert!(
        mean.time.step_seconds < full.time.step_seconds / 3.0,
        "{} against {}",
        mean.time.step_seconds,
        full.time.step_seconds
    );
    // At micro-batch 2 each micro-batch is padded to its longest: the step counts 4,096, a note says so.
    let (at_two_mean, _) = report(r#", "micro_batch": 2, "mean_seq_len": 700"#);
    let (at_two, _) = report(r#", "micro_batch": 2"#);
    assert_eq!(at_two_mean.time.step_seconds.to_bits(), at_two.time.step_seconds.to_bits());
    assert!(at_two_mean.findings.iter().any(|f| f.code == "mindspeed.mean_seq_padded"));
    // MindSpeed-LLM's pre-training packs its samples into full sequences: no mean there, no flag.
    let (pretrain, script) = {
        let text = r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain",
            "parallel": {"tp": 4, "pp": 2, "distributed_optimizer": true}, "batch": {"global_batch": 64, "seq_len": 4096, "mean_seq_len": 700}}"#;
        let plan = Plan::from_json(text).unwrap();
        (evaluate(&plan), trainplan_core::emit::emit(&plan, "#v1=x").unwrap().remove(0).text)
    };
    assert!(!script.contains("--no-pad-to-seq-lengths"));
    assert!((tokens(&pretrain) / (64.0 * 4096.0) - 1.0).abs() < 1e-9, "{}", tokens(&pretrain));
}

/// DeepSpeed ZeRO-2 and 3 reduce the gradients after every micro-batch, not once a step ("ZeRO
/// stage >= 2 communicates during non gradient accumulation boundaries as well",
/// `DeepSpeedEngine.allreduce_gradients`, deepspeed/runtime/engine.py at v0.19.8), and ZeRO-2
/// gathers the updated 16-bit parameters once after the optimizer step (`all_gather_dp_groups`,
/// stage_1_and_2.py). Without `overlap_comm` each reduction adds to its backward: Llama 3 8B on
/// 2 × 8 H100 at micro-batch 1 and global batch 64 runs 4 micro-batches a rank, so 4 bf16
/// reduce-scatters and 1 all-gather of its 8.03 B parameters over the 16 ranks, each a ring's
/// (n − 1)/n of the buffer (the ZeRO paper's volumes, Rajbhandari et al. 2020 §7.2). With
/// `overlap_comm` and ZeRO-3 on one node, the gathers and reductions fit behind the compute of
/// 4,096-token micro-batches and nothing shows.
#[test]
fn sharded_data_parallel_traffic_runs_every_micro_batch() {
    let plan = Plan::from_json(
        r#"{"model": "llama-3-8b", "framework": "deepspeed", "method": "sft-full", "cluster": {"nodes": 2},
            "parallel": {"zero_stage": 2, "overlap_grad_reduce": false},
            "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 2048}}"#,
    )
    .unwrap();
    let mem = trainplan_core::memory::estimate(&plan);
    let t = trainplan_core::time::estimate(&plan, &mem);
    let hw = &plan.hardware.hw;
    assert_eq!(mem.dp, 16);
    assert_eq!(t.pipeline.n_microbatches, 4);
    // Across nodes the 8 ranks of a node drive their 8 NICs at once, capped by NVLink's one
    // direction (H100: no mesh).
    let bandwidth = (hw.inter_node_bytes_per_second * 8.0).min(hw.intra_node_bytes_per_second / 2.0);
    let bytes = mem.params_total as f64 * 2.0;
    let one = trainplan_core::time::ring_seconds_on(hw, bytes, 16.0, bandwidth, false);
    let dp = t.breakdown.dp_comm_seconds;
    assert!((dp / (5.0 * one) - 1.0).abs() < 1e-9, "{dp} against 5 × {one}");
    // Of them, only the gather after the optimizer step follows the pipeline.
    assert!((t.pipeline.gradient_sync_seconds / one - 1.0).abs() < 1e-9);

    let hidden = Plan::from_json(
        r#"{"model": "llama-3-8b", "framework": "deepspeed", "method": "sft-full",
            "parallel": {"zero_stage": 3, "overlap_grad_reduce": true},
            "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}"#,
    )
    .unwrap();
    let t = trainplan_core::time::estimate(&hidden, &trainplan_core::memory::estimate(&hidden));
    assert_eq!(t.breakdown.dp_comm_seconds, 0.0);
    assert_eq!(t.pipeline.gradient_sync_seconds, 0.0);
}

/// VeRL's FSDP engine gathers the parameters for every micro-batch's forward and backward and
/// reduces its gradients after it (`use_no_sync_for_gradient_accumulation: false`), so where a
/// micro-batch's compute is shorter than its parameters' traffic, larger micro-batches make
/// fewer of them: the step falls as the micro-batch grows.
#[test]
fn verl_fsdp_gathers_its_parameters_every_micro_batch() {
    let step = |micro_batch: u32| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "cluster": {{"nodes": 2}},
                "batch": {{"global_batch": 256, "micro_batch": {micro_batch}}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        trainplan_core::time::estimate(&plan, &trainplan_core::memory::estimate(&plan))
    };
    let (one, eight) = (step(1), step(8));
    // An eighth as many micro-batches, each hiding more of its traffic behind eight times the compute.
    assert!(0.0 < one.breakdown.dp_comm_seconds);
    assert!(8.0 * eight.breakdown.dp_comm_seconds <= one.breakdown.dp_comm_seconds);
    assert!(eight.step_seconds < one.step_seconds);
}

/// With `use_no_sync_for_gradient_accumulation` VeRL's FSDP engine reduces once an update, after
/// its last micro-batch, and at ZeRO-2 (`SHARD_GRAD_OP`) keeps the parameters whole until then
/// too, so none of its traffic runs per micro-batch: one update of twice the micro-batches moves
/// what one of half as many does. Each device holds the whole model's gradients unsharded in
/// bf16 meanwhile: Qwen2.5-7B's 7,615,616,512 parameters (its safetensors index, 15,231,233,024
/// bytes in bf16) at 2 bytes, beside the fp32 shards.
#[test]
fn verl_no_sync_reduces_once_an_update_and_holds_the_whole_gradients() {
    let eval = |zero: u8, no_sync: bool, global_batch: u32| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "cluster": {{"nodes": 2}},
                "parallel": {{"zero_stage": {zero}, "no_sync_accumulation": {no_sync}}},
                "batch": {{"global_batch": {global_batch}, "micro_batch": 1}}, "rl": {{"mini_batch": 0}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        let mem = trainplan_core::memory::estimate(&plan);
        let time = trainplan_core::time::estimate(&plan, &mem);
        (mem, time)
    };
    let ((mem_off, off), (mem_on, on)) = (eval(2, false, 64), eval(2, true, 64));
    assert_eq!(mem_on.stages[0].gradients_bytes - mem_off.stages[0].gradients_bytes, 7_615_616_512 * 2);
    assert!(
        on.breakdown.dp_comm_seconds < off.breakdown.dp_comm_seconds && on.step_seconds < off.step_seconds
    );
    let (_, twice) = eval(2, true, 128);
    assert!(0.0 < on.breakdown.dp_comm_seconds);
    assert_eq!(twice.breakdown.dp_comm_seconds, on.breakdown.dp_comm_seconds);
    // At ZeRO-3 the parameters are still gathered for every forward and backward.
    let ((_, off), (_, on)) = (eval(3, false, 64), eval(3, true, 64));
    let (_, twice) = eval(3, true, 128);
    assert!(on.breakdown.dp_comm_seconds < off.breakdown.dp_comm_seconds);
    assert!(on.breakdown.dp_comm_seconds < twice.breakdown.dp_comm_seconds);
}

/// On the Megatron path, PyTorch FSDP2 reduces (and gathers) every micro-batch, as Megatron's
/// wrapper leaves FSDP2's `reshard_after_forward=True` and its `no_sync` does nothing
/// (megatron/core/distributed/torch_fully_sharded_data_parallel.py, data_parallel_base.py); the
/// distributed optimizer reduces once a step; Megatron FSDP with a pipeline moves its states every
/// micro-batch on each stage. Twice the global batch is twice the micro-batches:
/// the per-micro-batch traffic doubles to the rounding, the once-a-step reduction stays as it was.
#[test]
fn megatron_fsdp2_moves_its_states_every_micro_batch_and_ddp_once_a_step() {
    let dp_comm = |fsdp: &str, global_batch: u32| {
        let text = format!(
            r#"{{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 4}},
                "parallel": {{"fsdp": "{fsdp}", "distributed_optimizer": {}, "pp": {}}},
                "batch": {{"micro_batch": 1, "global_batch": {global_batch}, "seq_len": 1024}}}}"#,
            fsdp == "none",
            if fsdp == "torch_fsdp2" { 1 } else { 2 }
        );
        let plan = Plan::from_json(&text).unwrap();
        trainplan_core::time::estimate(&plan, &trainplan_core::memory::estimate(&plan))
            .breakdown
            .dp_comm_seconds
    };
    let (one, two) = (dp_comm("torch_fsdp2", 64), dp_comm("torch_fsdp2", 128));
    assert!(0.0 < one && (two / one - 2.0).abs() < 1e-9, "{one} {two}");
    let (one, two) = (dp_comm("none", 64), dp_comm("none", 128));
    assert!(0.0 < one && one == two, "{one} {two}");
    // With a pipeline (PP 2 here) Megatron FSDP sharding the parameters gathers and reduces every
    // micro-batch on each stage as well; sharding the optimizer states alone (`optim`), it
    // accumulates and reduces once a step.
    let (one, two) = (dp_comm("optim_grads_params", 64), dp_comm("optim_grads_params", 128));
    assert!(0.0 < one && (two / one - 2.0).abs() < 1e-9, "{one} {two}");
    let (one, two) = (dp_comm("optim", 64), dp_comm("optim", 128));
    assert!(0.0 < one && one == two, "{one} {two}");
}

/// VeRL's dynamic batching packs each update's responses on a rank into as few micro-batches as the
/// token budget takes (`rearrange_micro_batches`: `min(num_groups, ceildiv(total_seqlen,
/// max_token_len))`, verl/utils/seqlen_balancing.py at verl 0.9.1; the budget per GPU times the
/// Ulysses or CP size, verl/workers/engine/utils.py), whatever `micro_batch` says. 64 prompts × 5
/// responses in 4 updates of 16 prompts over 8 ranks: 10 responses a rank an update, of 300 + 700
/// tokens on average, 10,000 tokens in budgets of 4,096: 3 micro-batches an update, 12 a step,
/// each of 10/3 responses. On the Megatron engine interleaving over PP 2, a multiple of 2
/// (`microbatch_group_size_per_vp_stage`).
#[test]
fn verl_packs_its_micro_batches_to_the_token_budget() {
    let eval = |framework: &str, parallel: &str, budget: u32| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "{framework}", "method": "grpo", "parallel": {parallel},
                "batch": {{"global_batch": 64, "micro_batch": 1}},
                "rl": {{"n_samples_per_prompt": 5, "mini_batch": 16, "max_prompt_length": 512,
                    "max_response_length": 1024, "mean_prompt_length": 300, "mean_response_length": 700,
                    "dynamic_batch": true, "max_tokens_per_device": {budget}}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        let mem = trainplan_core::memory::estimate(&plan);
        let t = trainplan_core::time::estimate(&plan, &mem);
        (mem.n_microbatches, t)
    };
    let (m, t) = eval("verl", "{}", 4096);
    assert_eq!(m, 12);
    // Every response's tokens, at the means, once.
    assert!((t.tokens_per_second * t.step_seconds / (320.0 * 1000.0) - 1.0).abs() < 1e-9);
    assert!((t.samples_per_second * t.step_seconds / 320.0 - 1.0).abs() < 1e-9);
    // DP 2: 40 responses a rank an update, 40,000 tokens in budgets of 4,500: 9, rounded up to 10.
    let (m, _) = eval("verl-megatron", r#"{"tp": 2, "pp": 2, "vpp": 2}"#, 4500);
    assert_eq!(m, 4 * 10);
}

/// MindSpeed-RL packs each update's responses into rows of `max_packing_token_size` tokens that
/// its CP group then splits (`_split_batches_with_dynamic_bsz`, mindspeed_rl/models/base/
/// base_training_engine.py; the count `ceil(sum / max_token_len)`, mindspeed_rl/utils/
/// seqlen_balancing.py), where VeRL's budget is each device's, times CP. 64 prompts × 5 responses in
/// 4 updates over DP 2 (TP 2, CP 2 on 8 NPUs): 40 responses a rank an update, of 1,000 tokens on
/// average, in rows of 8,192: 5 an update, 20 a step.
#[test]
fn mindspeed_rl_packs_a_row_its_context_parallel_group_splits() {
    let plan = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo",
            "parallel": {"tp": 2, "cp": 2}, "batch": {"global_batch": 64, "micro_batch": 1},
            "rl": {"n_samples_per_prompt": 5, "mini_batch": 16, "max_prompt_length": 512,
                "max_response_length": 1024, "mean_prompt_length": 300, "mean_response_length": 700,
                "dynamic_batch": true, "max_tokens_per_device": 8192}}"#,
    )
    .unwrap();
    let mem = trainplan_core::memory::estimate(&plan);
    assert_eq!(mem.dp, 2);
    assert_eq!(mem.n_microbatches, 20);
}

/// Freeze-tuning runs every layer's forward and the backward of its trained layers alone (their
/// inputs' gradients stop at the first trained layer, and only trained layers are checkpointed):
/// on one device each further trained layer adds the same seconds, and training them all stays
/// short of a full fine-tune, which also trains the embedding and the head.
#[test]
fn freeze_tuning_pays_for_its_trained_layers() {
    let step = |method: &str, layers: u32| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "method": "{method}", "freeze_layers": {layers}, "cluster": {{"devices_per_node": 1}},
                "batch": {{"micro_batch": 1, "global_batch": 8, "seq_len": 2048}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        trainplan_core::time::estimate(&plan, &trainplan_core::memory::estimate(&plan)).step_seconds
    };
    let [two, four, six, all] = [2, 4, 6, 28].map(|n| step("freeze", n));
    let per_layer = (four - two) / 2.0;
    assert!(0.0 < per_layer, "{two} s for 2 layers, {four} s for 4");
    assert!(((six - four) / 2.0 - per_layer).abs() <= 1e-9 * six, "{two}, {four}, {six}");
    assert!(all < step("sft-full", 2), "{all} s for every layer");
    // Two trained layers of 28 cost well under half of the full backward's time.
    assert!(two < 0.5 * step("sft-full", 2), "{two} s");
}

/// Sliding-window layers score only their window's pairs: over s tokens, a window of w scores
/// Σ_{i<s} min(i + 1, w) pairs where causal attention scores s(s + 1)/2, counted here pair by
/// pair. gpt-oss-120b windows 18 of its 36 layers to 128 tokens, so its attention kernels run that
/// share of those layers' work and its step is shorter; its model FLOPs stay Megatron's count,
/// which reads no window, so that MFU compares with Megatron's logs. An eager kernel, which masks
/// the whole matrix, scores every pair.
#[test]
fn sliding_window_layers_score_only_their_window() {
    let (s, w) = (8192u64, 128u64);
    let pairs: u64 = (0..s).map(|i| (i + 1).min(w)).sum();
    let share = pairs as f64 / (s * (s + 1) / 2) as f64;
    let text = r#"{"model": "gpt-oss-120b", "cluster": {"nodes": 2}, "framework": "megatron", "method": "sft-full",
        "attention": "sdpa", "parallel": {"tp": 1, "pp": 2, "ep": 8, "distributed_optimizer": true},
        "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}"#;
    let plan = Plan::from_json(text).unwrap();
    let (layers, windowed) = (36.0, 18.0);
    assert_eq!(
        trainplan_core::model::attention_pair_share(&plan.model.arch, s as f64),
        (layers - windowed + windowed * share) / layers
    );
    let mut full = plan.clone();
    full.model.arch.sliding_window = None;
    let (windowed_report, full_report) = (evaluate(&plan), evaluate(&full));
    assert_eq!(windowed_report.time.model_flops_per_step, full_report.time.model_flops_per_step);
    assert!(windowed_report.time.step_seconds < full_report.time.step_seconds);
    let eager = |mut plan: Plan| {
        plan.attention = trainplan_core::plan::AttentionImpl::Eager;
        evaluate(&plan).time.step_seconds
    };
    assert_eq!(eager(plan.clone()), eager(full));
}

/// LLaMA-Factory loads gpt-oss on its FlashAttention-3 kernel with sinks whatever `flash_attn`
/// asks (`configure_attn_implementation`), so an eager setting changes neither memory nor time.
#[test]
fn llamafactory_runs_gpt_oss_on_flash_attention_whatever_is_asked() {
    let with = |attention: &str| {
        let text = format!(r#"{{"model": "gpt-oss-20b", "attention": "{attention}"}}"#);
        let report = evaluate(&Plan::from_json(&text).unwrap());
        (report.time.step_seconds, report.memory.peak_bytes)
    };
    assert_eq!(with("eager"), with("flash"));
    // Elsewhere the setting counts: Qwen2.5-7B's eager attention writes and reads its scores.
    let qwen = |attention: &str| {
        let text = format!(r#"{{"model": "qwen2.5-7b", "attention": "{attention}"}}"#);
        evaluate(&Plan::from_json(&text).unwrap()).time.step_seconds
    };
    assert!(qwen("flash") < qwen("eager"));
}

/// Mistral-7B-v0.1 attends through a 4,096-token window on every layer (its config's
/// `sliding_window`). Up to 4,096 tokens the window holds the whole causal triangle and nothing
/// changes, to the bit; at 32,768 tokens a window of w scores Σ_{i<s} min(i + 1, w) of the
/// s(s + 1)/2 pairs (counted pair by pair), so FlashAttention runs that share and the step is
/// shorter, where transformers' SDPA, handed the window as a mask, runs every pair.
#[test]
fn mistral_v0_1_attends_through_its_window_beyond_it_only() {
    let step = |seq: u32, attention: &str, windowed: bool| {
        let text = format!(
            r#"{{"model": "mistral-7b-v0.1", "method": "sft-full", "attention": "{attention}",
                "parallel": {{"zero_stage": 3}}, "batch": {{"seq_len": {seq}}}}}"#
        );
        let mut plan = Plan::from_json(&text).unwrap();
        if !windowed {
            plan.model.arch.sliding_window = None;
        }
        evaluate(&plan).time.step_seconds
    };
    assert_eq!(step(4096, "flash", true), step(4096, "flash", false));
    assert!(step(32768, "flash", true) < step(32768, "flash", false));
    assert_eq!(step(32768, "sdpa", true), step(32768, "sdpa", false));
    let (s, w) = (32768u64, 4096u64);
    let pairs: u64 = (0..s).map(|i| (i + 1).min(w)).sum();
    let plan = Plan::from_json(r#"{"model": "mistral-7b-v0.1"}"#).unwrap();
    let share = trainplan_core::model::attention_pair_share(&plan.model.arch, s as f64);
    assert!((share - pairs as f64 / (s * (s + 1) / 2) as f64).abs() < 1e-15, "{share}");
}

/// ZeRO++ on Llama-3-8B's full fine-tuning under DeepSpeed ZeRO-3 (its reductions overlapped, as
/// DeepSpeed's own stage-3 default has it), micro-batch by micro-batch:
/// - on one node hpZ's group is the whole data-parallel group, so its backward gathers the same
///   bytes over the same links: the same step, to the bit (it only costs the secondary shard's
///   memory); qgZ too, which DeepSpeed runs across nodes alone (stage3.py's reduce-scatter where
///   `num_nodes` is 1);
/// - across four nodes whose eight devices share one 200 Gb/s NIC (25 Gb/s a device, the kind of
///   cluster ZeRO++ was made for), the gathers and the reduction outlast the compute: hpZ keeps the
///   backward's gathers in the node, qwZ halves every gather's bytes (int8 for bf16), qgZ moves
///   int4 across nodes; each shortens the step, and all three together most;
/// - on A100 nodes with a 200 Gb/s NIC a device the same traffic hides behind the compute, and
///   ZeRO++ changes nothing.
#[test]
fn zero_plus_plus_moves_less_across_nodes() {
    let shared_nic = r#"{"custom": {"name": "shared NIC", "vendor": "nvidia", "memory_gb": 80, "bf16_tflops": 312,
        "memory_tb_per_s": 2.0, "intra_node_gb_per_s": 600, "inter_node_gbit_per_s": 25, "devices_per_node": 8}}"#;
    let step = |hardware: &str, nodes: u32, zpp: &str| {
        let text = format!(
            r#"{{"model": "llama-3-8b", "hardware": {hardware}, "framework": "deepspeed", "method": "sft-full",
                "cluster": {{"nodes": {nodes}}}, "parallel": {{"zero_stage": 3, "overlap_grad_reduce": true {zpp}}},
                "batch": {{"micro_batch": 1, "global_batch": 256, "seq_len": 4096}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time.step_seconds
    };
    let (hpz, qw, qg) = (
        r#", "zero_hpz_partition_size": 8"#,
        r#", "zero_quantized_weights": true"#,
        r#", "zero_quantized_gradients": true"#,
    );
    let all = format!("{hpz}{qw}{qg}");
    let h100 = r#""h100-sxm-80g""#;
    assert_eq!(step(h100, 1, hpz), step(h100, 1, ""));
    assert_eq!(step(h100, 1, qg), step(h100, 1, ""));
    let base = step(shared_nic, 4, "");
    for one in [hpz, qw, qg] {
        assert!(step(shared_nic, 4, one) < base, "{one}");
        assert!(step(shared_nic, 4, &all) < step(shared_nic, 4, one), "{one}");
    }
    let a100 = r#""a100-sxm-80g""#;
    assert_eq!(step(a100, 4, &all), step(a100, 4, ""));
}

/// DeepSpeed's parameter offload (ZeRO-Infinity's `offload_param`) keeps each device's 16-bit shard
/// on the host, copies it into the device's buffer and gathers it over every rank as a shard on the
/// device is (`_all_gather_coalesced`, deepspeed/runtime/zero/partition_parameters.py): the
/// network carries the same gathers, and the
/// host link's copies come on top. The device's weights read 0 under it, and the gathers had been
/// taken to move nothing: on four nodes sharing a 25 Gb/s NIC each, Llama-3-8B's step fell from
/// 20.4 s to 10.1 s with the parameters offloaded, and the search chose it as the fastest plan.
#[test]
fn offloaded_parameters_are_still_gathered_over_the_network() {
    let shared_nic = r#"{"custom": {"name": "shared NIC", "vendor": "nvidia", "memory_gb": 80, "bf16_tflops": 312,
        "memory_tb_per_s": 2.0, "intra_node_gb_per_s": 600, "inter_node_gbit_per_s": 25, "devices_per_node": 8}}"#;
    let report = |offload_params: bool| {
        let text = format!(
            r#"{{"model": "llama-3-8b", "hardware": {shared_nic}, "framework": "deepspeed", "method": "sft-full",
                "cluster": {{"nodes": 4}}, "parallel": {{"zero_stage": 3, "overlap_grad_reduce": true,
                "offload_optimizer": true, "offload_params": {offload_params}}},
                "batch": {{"micro_batch": 1, "global_batch": 256, "seq_len": 4096}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap())
    };
    let (on_device, on_host) = (report(false), report(true));
    // The same traffic every micro-batch, and the host's copies added: never faster.
    assert_eq!(on_host.time.breakdown.dp_comm_seconds, on_device.time.breakdown.dp_comm_seconds);
    assert!(on_device.time.breakdown.offload_seconds < on_host.time.breakdown.offload_seconds);
    assert!(on_device.time.step_seconds < on_host.time.step_seconds);
    // Less on the device for it.
    assert!(on_host.memory.peak_bytes < on_device.memory.peak_bytes);
}

/// The model's FLOPs are Megatron-LM's own count (`num_floating_point_operations`,
/// megatron/training/training.py at core_v0.19.0, the version the launch files are written for),
/// transcribed here for a dense GQA model with SwiGLU: per token 3 passes × 2 × (h·3f per layer for
/// the MLP, h·(q + 2kv) + q·h per layer for the projections, h·V for the logits), and the attention
/// core's causal half, 3 × 2 × q per layer for each of the b·s² pairs ("causal mask (only half of
/// the mask is non-zero)"). Llama-3-8B pre-training at 8,192 tokens, 32 sequences a step. The
/// hardware's FLOPs are what the kernels run: FlashAttention skips the masked half, so without
/// recomputation they are the same; an eager kernel scores every pair, the other half of the core
/// in each of its 3 passes on top. HFU stays below 1 on every catalog model at 32,768 tokens.
#[test]
fn model_flops_are_megatrons_count_and_hardware_flops_what_the_kernels_run() {
    let (h, layers, f, v) = (4096.0, 32.0, 14336.0, 128256.0);
    let (q, kv) = (32.0 * 128.0, 8.0 * 128.0);
    let (b, s) = (32.0, 8192.0_f64);
    let per_token = 6.0 * (layers * (h * 3.0 * f + h * (q + 2.0 * kv) + q * h) + h * v);
    let megatron = b * s * per_token + b * s * s * 6.0 * q * layers;
    let report = |attention: &str| {
        let text = format!(
            r#"{{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 4}},
                "attention": "{attention}", "parallel": {{"distributed_optimizer": true}},
                "recompute": {{"granularity": "none"}}, "batch": {{"micro_batch": 1, "global_batch": 32, "seq_len": 8192}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap()).time
    };
    let (flash, eager) = (report("flash"), report("eager"));
    assert!(
        (flash.model_flops_per_step / megatron - 1.0).abs() < 1e-12,
        "{} vs {megatron}",
        flash.model_flops_per_step
    );
    assert!((flash.hardware_flops_per_step / megatron - 1.0).abs() < 1e-12);
    assert_eq!(eager.model_flops_per_step, flash.model_flops_per_step);
    let other_half = b * s * s * 6.0 * q * layers;
    assert!((eager.hardware_flops_per_step / (megatron + other_half) - 1.0).abs() < 1e-12);
    for config in trainplan_core::catalog::CONFIGS {
        let text = format!(
            r#"{{"model": "{}", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 32}},
                "parallel": {{"tp": 8, "distributed_optimizer": true, "sequence_parallel": true}},
                "batch": {{"micro_batch": 1, "global_batch": 256, "seq_len": 32768}}}}"#,
            config.id
        );
        let t = evaluate(&Plan::from_json(&text).unwrap()).time;
        assert!(0.0 < t.hfu && t.hfu < 1.0, "{}: HFU {}", config.id, t.hfu);
    }
}

/// Under LoRA the model's FLOPs count two passes of every GEMM (the frozen base has no weight
/// gradients), the attention core's too; the hardware still runs the core's backward, its input
/// gradients, twice its forward (it has no weights). Qwen2.5-7B LoRA on LLaMA-Factory without
/// recomputation, FlashAttention: the hardware's FLOPs exceed the model's by one more forward of the
/// core's causal half, 2·s²·q a layer and sequence (q = 28 heads × 128), 64 sequences of 4,096.
#[test]
fn lora_hardware_runs_the_attention_cores_whole_backward() {
    let text = r#"{"model": "qwen2.5-7b", "framework": "llamafactory", "method": "lora", "attention": "flash",
        "recompute": {"granularity": "none"}, "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}"#;
    let t = evaluate(&Plan::from_json(text).unwrap()).time;
    let (s, q, layers, sequences) = (4096.0_f64, 28.0 * 128.0, 28.0, 64.0);
    let core_forward = 2.0 * s * s * q * layers * sequences;
    let extra = t.hardware_flops_per_step - t.model_flops_per_step;
    assert!((extra / core_forward - 1.0).abs() < 1e-9, "{extra} vs {core_forward}");
}

/// Qwen3-Next's model FLOPs are Megatron-LM's count (`num_floating_point_operations`,
/// megatron/training/training.py at core_v0.19.0, transcribed): its 12 gated attention layers (the
/// output gate widening the query projection; the core's causal half), its 36 Gated DeltaNet
/// layers (in_proj, conv1d, the delta rule's `num_v_heads * v_head_dim ** 2 * 4`, out_proj; no
/// L² term), every layer's 10 routed experts and shared expert, and the logits: 6 × each, a token.
#[test]
fn qwen3_next_flops_are_megatrons_count() {
    let (h, vocab, s, b) = (2048.0, 151_936.0, 4096.0_f64, 32.0);
    let (q, kv, gate) = (16.0 * 256.0, 2.0 * 256.0, 16.0 * 256.0);
    let attention = h * (q + 2.0 * kv + gate) + q * h;
    let (qk_dim, v_dim, v_heads) = (16.0 * 128.0, 32.0 * 128.0, 32.0);
    let gdn = h * (2.0 * qk_dim + 2.0 * v_dim + 2.0 * v_heads)
        + 4.0 * (2.0 * qk_dim + v_dim)
        + v_heads * 128.0 * 128.0 * 4.0
        + h * v_dim;
    let mlp = h * (512.0 * 10.0 * 3.0 + 512.0 * 3.0) * 48.0;
    let per_token = 6.0 * (mlp + 12.0 * attention + 36.0 * gdn + h * vocab);
    let core = 6.0 * q * 12.0;
    let megatron = b * s * per_token + b * s * s * core;
    let text = r#"{"model": "qwen3-next-80b-a3b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4},
        "parallel": {"pp": 4, "ep": 8, "distributed_optimizer": true}, "recompute": {"granularity": "none"},
        "batch": {"micro_batch": 1, "global_batch": 32, "seq_len": 4096}}"#;
    let t = evaluate(&Plan::from_json(text).unwrap()).time;
    assert!(
        (t.model_flops_per_step / megatron - 1.0).abs() < 1e-9,
        "{} vs {megatron}",
        t.model_flops_per_step
    );
}

/// Each of Qwen3-Next's stages runs its own layers: at PP 8 of its 48 layers, stages 1 and 3
/// (layers 6–11, 18–23) hold two attention layers, stage 2 (12–17) one, a Gated DeltaNet layer in
/// the other's place. At 32,768 tokens an attention layer's causal core (2·s·q a token) outweighs a
/// DeltaNet layer's delta rule, so those stages run longer, by the same difference each; the
/// stages' passes add up to the model's average layers' (every DeltaNet layer counted once); and
/// at PP 4 every stage holds the model's share (3 attention layers of 12), as many passes each.
#[test]
fn qwen3_next_stages_run_their_own_layers() {
    let costs = |pp: u32| {
        let text = format!(
            r#"{{"model": "qwen3-next-80b-a3b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 8}},
                "parallel": {{"pp": {pp}, "ep": 8, "distributed_optimizer": true}}, "recompute": {{"granularity": "full"}},
                "batch": {{"micro_batch": 1, "global_batch": 64, "seq_len": 32768}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        trainplan_core::time::estimate(&plan, &trainplan_core::memory::estimate(&plan)).pipeline.costs
    };
    let eight = costs(8);
    let f = eight.forward();
    assert!(f[2] < f[1], "{f:?}");
    assert!(((f[1] - f[2]) / (f[3] - f[2]) - 1.0).abs() < 1e-9, "{f:?}");
    let four = costs(4);
    let f4 = four.forward();
    assert!((f4[1] / f4[2] - 1.0).abs() < 1e-12, "{f4:?}");
    // Stages 1–6 of eight hold 12 attention layers of 36 layers, the middle half of four stages
    // (1–2 of four) the same layers: their passes agree.
    let middle = |f: &[f64], r: std::ops::Range<usize>| f[r].iter().sum::<f64>();
    assert!((middle(f, 2..6) / middle(f4, 1..3) - 1.0).abs() < 1e-9);
}

/// A layer that norms its attention's and its MLP's outputs too (GLM-4-0414's and Gemma's
/// `post_*_layernorm`) runs two more of HF's eager RMSNorms a forward: 2 × 36 bytes a token and
/// hidden unit (`time::HF_RMSNORM_BYTES_PER_TOKEN_UNIT`, counted from `LlamaRMSNorm.forward`),
/// read and written at the device's bandwidth (× `time::HBM_EFF`), in forward, twice in backward
/// and once more where checkpointing reruns the forward. GLM-4-9B's shape as `glm` (two norms)
/// and as `glm4` (four), LoRA in LLaMA-Factory on 8 H100 with full recomputation: the step's
/// memory-bound time differs by exactly that, within the norms' own weights (10⁻⁵).
#[test]
fn norms_after_attention_and_the_mlp_cost_their_eager_passes() {
    let shape = r#""vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40,
        "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "attention_bias": true"#;
    let plan = |model_type: &str| {
        Plan::from_json(&format!(
            r#"{{"model": {{"hf_config": {{"model_type": "{model_type}", {shape}}}}}, "method": "lora",
                "recompute": {{"granularity": "full"}}, "batch": {{"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}}}"#
        ))
        .unwrap()
    };
    let (two, four) = (plan("glm"), plan("glm4"));
    assert!(!two.model.arch.post_norms && four.model.arch.post_norms);
    let bound = |p: &Plan| evaluate(p).time.breakdown.memory_bound_seconds;
    let hw = trainplan_core::hardware::device("h100-sxm-80g").unwrap();
    // Tokens a device runs a step (DP 8), each through 40 layers: forward, backward twice, rerun.
    let tokens = 64.0 * 4096.0 / 8.0;
    let bytes = 2.0 * trainplan_core::time::HF_RMSNORM_BYTES_PER_TOKEN_UNIT * 4096.0 * tokens * 40.0 * 4.0;
    let expected = bytes / (hw.memory_bytes_per_second * trainplan_core::time::HBM_EFF);
    let got = bound(&four) - bound(&two);
    assert!((got / expected - 1.0).abs() < 1e-5, "{got} s against {expected} s");
}

/// A multimodal model's images cost its vision encoder a forward per image token, where the
/// framework runs the encoder, and a backward where it trains it. Expected FLOPs by hand from
/// Qwen2.5-VL-7B's `vision_config` and transformers' `modeling_qwen2_5_vl.py` (`vision.rs`'s
/// tests count the same modules): each image token is 2 × 2 patches, each through the Conv3d
/// patch embedding and 32 blocks, then the merger; two FLOPs a parameter a value passes through.
/// The four blocks `fullatt_block_indexes` names attend over the whole image (the others within
/// windows): QKᵀ and the weighted values, 4 · P² · 1,280 FLOPs a block for P patches, the
/// sequence's 1,024 image tokens one image of P = 4,096.
#[test]
fn image_tokens_cost_the_vision_encoder_its_passes() {
    let (e, i, o) = (1280.0f64, 3420.0f64, 3584.0f64);
    let block = 2.0 * e + (e * 3.0 * e + 3.0 * e) + (e * e + e) + 2.0 * (e * i + i) + (i * e + e);
    let merger = e + (4.0 * e * 4.0 * e + 4.0 * e) + (4.0 * e * o + o);
    let per_token = 4.0 * (3.0 * 2.0 * 14.0 * 14.0 * e + 32.0 * block) + merger;
    let attention = 4.0 * (4.0 * 4.0 * e * 4096.0);
    let forward = 2.0 * per_token + attention;
    let config = crate::hf::QWEN2_5_VL_7B;
    let report = |rest: &str, images: u32| {
        let text = format!(
            r#"{{"model": {{"hf_config": {config}}}, "cluster": {{"nodes": 1}}, {rest},
                "batch": {{"global_batch": 64, "seq_len": 4096, "image_tokens": {images}}}}}"#
        );
        evaluate(&Plan::from_json(&text).unwrap())
    };
    // 64 sequences a step, 1,024 image tokens each: 65,536 image tokens.
    let tokens = 64.0 * 1024.0;
    let added = |rest: &str| {
        let (text, images) = (report(rest, 0), report(rest, 1024));
        let flops = (images.time.model_flops_per_step - text.time.model_flops_per_step) / (forward * tokens);
        (flops, images.time.step_seconds - text.time.step_seconds, images)
    };
    // LLaMA-Factory's LoRA keeps the encoder frozen: its forward alone, nothing asks it for a gradient.
    let (forwards, seconds, images) = added(r#""framework": "llamafactory", "method": "lora""#);
    assert!((forwards - 1.0).abs() < 1e-9, "{forwards}");
    // 2.57 B parameters a token passes through (a third of the 7.6 B decoder's) and 0.34 GFLOP of
    // attention: 65,536 tokens × 5.5 GFLOP over 8 H100 at their 989 TFLOP/s dense bf16 peak is
    // 45 ms at the least; at a GEMM's efficiency, less than twice that.
    assert!((per_token / 1e9 - 2.57).abs() < 0.01 && (attention / 1e9 - 0.34).abs() < 0.01, "{per_token}");
    let least = forward * tokens / (8.0 * 989e12);
    assert!((least..2.0 * least).contains(&seconds), "{seconds} s against at least {least} s");
    assert!(images.findings.iter().any(|f| f.code == "model.vision_encoder_frozen"));
    // VeRL trains it with the actor (`freeze_vision_tower: false`): forward and backward, 2N + 4N.
    // RL's sequences are the prompt and the response, the images among them.
    // 64 prompts of 2,048 tokens, 5 responses each of 2,048: 320 sequences of 4,096 trained.
    let rl = r#""framework": "verl", "method": "grpo",
        "rl": {"n_samples_per_prompt": 5, "max_prompt_length": 2048, "max_response_length": 2048}"#;
    let (forwards, seconds, _) = added(rl);
    assert!((forwards - 3.0 * 5.0).abs() < 1e-9, "{forwards}");
    assert!(0.0 < seconds);
    // Megatron-LM's launcher plans the language model alone: the images change nothing.
    let (forwards, seconds, _) = added(r#""framework": "megatron", "method": "pretrain""#);
    assert_eq!((forwards, seconds), (0.0, 0.0));
    // Nor do they on a model without an encoder.
    let text = |images: u32| {
        let text = format!(r#"{{"model": "qwen2.5-7b", "batch": {{"image_tokens": {images}}}}}"#);
        evaluate(&Plan::from_json(&text).unwrap()).time.step_seconds
    };
    assert_eq!(text(0).to_bits(), text(1024).to_bits());
}
