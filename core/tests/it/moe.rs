//! MoE step time against public runs: DeepSeek-V3 (arXiv 2412.19437) and DeepSeek-V2
//! (arXiv 2405.04434), each trained on H800s with its stated layout; and the MoE knobs' effects.

use trainplan_core::evaluate;
use trainplan_core::plan::Plan;

/// (name, plan, tokens per second per GPU the source states, its source, today's error).
type Row = (&'static str, &'static str, f64, &'static str, f64);

const ROWS: [Row; 2] = [
    (
        "DeepSeek-V3 2048 × H800",
        // §3.2: PP 16 with DualPipe, EP 64 over 8 nodes, ZeRO-1 DP, no TP; §3.3 FP8 GEMMs; §3.2.2
        // DeepEP-like dispatch kernels with FP8 dispatch; §4.2 sequence 4K, batch up to 15,360;
        // §3.2.3 recomputes RMSNorm and the MLA up-projections, §3.3.3 the SwiGLU outputs of the
        // experts (`--recompute-modules layernorm mla_up_proj moe_act`); §2.2 and §4.2 train one
        // MTP module (D = 1). The split of its 61 layers over DualPipe's 32 stages is not stated:
        // the planner's default puts the extra layers first and the head, loss and MTP layer last.
        r#"{"model": "deepseek-v3", "hardware": "h800-sxm-80g", "cluster": {"nodes": 256}, "framework": "megatron",
            "method": "pretrain", "precision": "fp8", "mtp_layers": 1,
            "parallel": {"pp": 16, "ep": 64, "schedule": "dualpipev", "distributed_optimizer": true},
            "recompute": {"granularity": "selective", "modules": ["layernorm", "mla_up_proj", "moe_act"]},
            "moe": {"dispatcher": "flex", "permute_fusion": true},
            "batch": {"micro_batch": 1, "global_batch": 15360, "seq_len": 4096}}"#,
        // Table 1: 180K H800 GPU hours per trillion tokens.
        1e12 / (180e3 * 3600.0),
        "DeepSeek-V3 Table 1 (180K GPU-h / T tokens)",
        -0.146,
    ),
    (
        "DeepSeek-V2 × H800",
        // §3.1.3: 16-way zero-bubble PP, 8-way EP, ZeRO-1 DP, no TP, part of the operators
        // recomputed, fused expert kernels; §3.2.1 sequence 4K, batch up to 9,216, bf16. The
        // device count is not stated: 1,024 here (ZB-H1 leaves almost no bubble either way).
        r#"{"model": "deepseek-v2", "hardware": "h800-sxm-80g", "cluster": {"nodes": 128}, "framework": "megatron",
            "method": "pretrain", "precision": "bf16",
            "parallel": {"pp": 16, "ep": 8, "schedule": "zb-h1", "distributed_optimizer": true},
            "recompute": {"granularity": "selective"}, "moe": {"permute_fusion": true},
            "batch": {"micro_batch": 1, "global_batch": 9216, "seq_len": 4096}}"#,
        // §3.2.3: 172.8K GPU hours per trillion tokens.
        1e12 / (172.8e3 * 3600.0),
        "DeepSeek-V2 §3.2.3 (172.8K GPU-h / T tokens)",
        0.324,
    ),
];

#[test]
fn deepseek_gpu_hours_per_trillion_tokens() {
    println!("run                        paper tok/s/GPU  model   error  source");
    for (name, text, paper, source, today) in ROWS {
        let report = evaluate(&Plan::from_json(text).unwrap());
        let model = report.time.tokens_per_second_per_device;
        let err = (model - paper) / paper;
        println!("{name:26} {paper:15.0}  {model:6.0}  {:+5.1}%  {source}", 100.0 * err);
        // FIXME(gap): the target is within 15 %. DeepSeek-V3 (with its MTP layer, on the stage
        // that also holds the head) comes out slower than the paper, DeepSeek-V2 faster:
        // node-limited routing, DeepSeek's own stage balance and a production run's restarts,
        // evaluations and checkpoints are not modelled; no constant was fitted to these rows. And
        // DeepSeek-V3 trained on 80 GB H800s where the planner's peak is above it (its fp8
        // activation caching of the expert inputs is not modelled). Today's error is asserted so
        // that a change moving it updates this row.
        assert!((err - today).abs() < 0.005, "{name}: {err:+.3}, was {today:+.3}");
    }
}

fn step(text: &str) -> f64 {
    evaluate(&Plan::from_json(text).unwrap()).time.step_seconds
}

fn mixtral(moe: &str) -> String {
    format!(
        r#"{{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 4}},
            "parallel": {{"tp": 2, "pp": 2, "vpp": 2, "ep": 8, "distributed_optimizer": true}},
            "recompute": {{"granularity": "selective"}}, "moe": {moe},
            "batch": {{"global_batch": 256, "seq_len": 4096}}}}"#
    )
}

/// Each kernel knob moves the step the way its source says: grouped GEMM and permute fusion save
/// time, the overlap hides all-to-all time, imbalance costs time in proportion, padding to a
/// capacity factor costs exactly that factor, and a capacity factor caps the imbalance. With EP 1
/// one device holds every expert: imbalance moves no work, padding still does.
#[test]
fn moe_knobs_move_the_step_their_way() {
    let base = step(&mixtral("{}"));
    assert!(base < step(&mixtral(r#"{"grouped_gemm": false}"#)));
    assert!(step(&mixtral(r#"{"permute_fusion": true}"#)) < base);
    assert!(step(&mixtral(r#"{"overlap_ep_comm": true}"#)) < base);
    assert!(base < step(&mixtral(r#"{"imbalance": 2.0}"#)));
    let padded = step(&mixtral(r#"{"capacity_factor": 2.0, "pad_to_capacity": true}"#));
    assert_eq!(padded, step(&mixtral(r#"{"imbalance": 2.0}"#)));
    let capped = step(&mixtral(r#"{"imbalance": 3.0, "capacity_factor": 1.0}"#));
    assert_eq!(capped, step(&mixtral(r#"{"imbalance": 1.0}"#)));
    let one_device = |moe: &str| {
        step(&format!(
            r#"{{"model": "qwen3-30b-a3b", "framework": "megatron", "method": "pretrain", "moe": {moe},
                "parallel": {{"tp": 8}}, "batch": {{"global_batch": 64, "seq_len": 4096}}}}"#
        ))
    };
    assert_eq!(one_device("{}"), one_device(r#"{"imbalance": 2.0}"#));
    assert!(one_device("{}") < one_device(r#"{"capacity_factor": 2.0, "pad_to_capacity": true}"#));
}

/// All-to-all by placement: EP 8 inside one node runs at NVLink speed; the same EP spread one rank
/// per node (nodes of 1 GPU) crosses the NICs and takes longer; the flex dispatcher's one copy per
/// node beats the all-to-all's k copies there.
#[test]
fn all_to_all_follows_placement_and_dispatcher() {
    let plan = |per_node: u32, dispatcher: &str| {
        format!(
            r#"{{"model": "qwen3-30b-a3b", "framework": "megatron", "method": "pretrain",
                "cluster": {{"nodes": {}, "devices_per_node": {per_node}}},
                "parallel": {{"ep": 8, "distributed_optimizer": true}}, "moe": {{"dispatcher": "{dispatcher}"}},
                "batch": {{"global_batch": 64, "seq_len": 4096}}}}"#,
            8 / per_node
        )
    };
    let ep = |text: &str| evaluate(&Plan::from_json(text).unwrap()).time.breakdown.ep_comm_seconds;
    assert!(ep(&plan(8, "alltoall")) < ep(&plan(1, "alltoall")));
    assert!(ep(&plan(1, "flex")) < ep(&plan(1, "alltoall")));
    assert!(0.0 < ep(&plan(8, "allgather")));
}

/// Padding to capacity c keeps c × the mean routed rows: each MoE layer's saved activations grow
/// by (c − 1) · k(4h + 6f_e) bytes per token ÷ TP (Megatron's routed tensors, docs/memory.md),
/// an exact count; without padding the capacity factor changes no memory.
#[test]
fn padding_to_capacity_grows_the_routed_activations() {
    let activations = |moe: &str| {
        let text = format!(
            r#"{{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 2}},
                "parallel": {{"tp": 2, "ep": 8, "distributed_optimizer": true}}, "recompute": {{"granularity": "none"}},
                "moe": {moe}, "batch": {{"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}}}"#
        );
        let plan = Plan::from_json(&text).unwrap();
        trainplan_core::memory::estimate(&plan).stages[0].activations_bytes as f64
    };
    let base = activations("{}");
    assert_eq!(base, activations(r#"{"capacity_factor": 2.0}"#));
    let padded = activations(r#"{"capacity_factor": 2.0, "pad_to_capacity": true}"#);
    // Mixtral: 32 MoE layers, k = 2, h = 4096, f_e = 14336; 4096 tokens, TP 2; 1F1B keeps one
    // micro-batch's layers with PP 1.
    let per_layer = 2.0 * (4.0 * 4096.0 + 6.0 * 14336.0) * 4096.0 / 2.0;
    let extra = padded - base;
    assert!((extra / (32.0 * per_layer) - 1.0).abs() < 1e-3, "{extra} vs {}", 32.0 * per_layer);
}

/// The count of MoE layers in a range of indices, worked out from the layout of the experts (every
/// layer from the k-th, or each step-th but the listed dense ones), is the count layer by layer.
#[test]
fn moe_layers_are_counted_without_walking_them() {
    use trainplan_core::model::{MoeLayers, is_moe_layer, moe_layers_in};
    let mut arch = Plan::from_json(r#"{"model": "qwen3-30b-a3b"}"#).unwrap().model.arch;
    let n = arch.n_layers;
    let layouts = [
        MoeLayers::FromLayer(0),
        MoeLayers::FromLayer(1),
        MoeLayers::FromLayer(3),
        MoeLayers::FromLayer(n + 5),
        MoeLayers::Step { step: 1, dense: vec![] },
        MoeLayers::Step { step: 2, dense: vec![] },
        // Listed twice, listed but dense anyway (index 0 with step 3), and past the last layer.
        MoeLayers::Step { step: 3, dense: vec![2, 5, 5, 0, n + 1] },
        MoeLayers::Step { step: 0, dense: vec![] },
    ];
    for layout in layouts {
        arch.moe.as_mut().unwrap().layers = layout.clone();
        for from in 0..=n + 2 {
            for to in 0..=n + 2 {
                let walked = (from..to).filter(|&i| is_moe_layer(&arch, i)).count() as u64;
                assert_eq!(moe_layers_in(&arch, from..to), walked, "{layout:?} {from}..{to}");
            }
        }
    }
    let dense = Plan::from_json(r#"{"model": "qwen2.5-7b"}"#).unwrap().model.arch;
    assert_eq!(moe_layers_in(&dense, 0..dense.n_layers), 0);
}
