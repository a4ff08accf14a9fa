//! One layout for every consumer: Megatron's `--pipeline-model-parallel-layout`, uneven stages with
//! VPP and MTP layers place the same layers in memory, time, rules and the launch script.

use trainplan_core::emit::{self, import};
use trainplan_core::plan::Plan;
use trainplan_core::{Report, evaluate};

fn report(text: &str) -> Report {
    evaluate(&Plan::from_json(text).unwrap_or_else(|e| panic!("{text}: {e}")))
}

fn errors(r: &Report) -> Vec<&str> {
    r.findings
        .iter()
        .filter(|f| f.severity == trainplan_core::report::Severity::Error)
        .map(|f| f.code.as_str())
        .collect()
}

/// The example of `PipelineParallelLayerLayout.pretty_repr` (megatron/core/transformer/
/// pipeline_parallel_layer_layout.py, core_v0.19.0): PP 16 × VPP 2 where rank 0 holds
/// "embedding,decoder*2 | decoder*2", ranks 1–13 "decoder*2 | decoder*2", rank 14
/// "decoder*2 | mtp" and rank 15 "decoder*2 | loss" — DeepSeek-V2's 60 layers with one MTP layer.
#[test]
fn megatrons_layout_example_places_every_layer() {
    let r = report(
        r#"{"model": "deepseek-v2", "cluster": {"nodes": 16}, "framework": "megatron", "method": "pretrain",
            "mtp_layers": 1, "parallel": {"pp": 16, "vpp": 2, "ep": 8, "pipeline_layout": "Ett|(tt|)*29m|L",
            "distributed_optimizer": true}, "batch": {"micro_batch": 1, "global_batch": 512, "seq_len": 4096}}"#,
    );
    assert!(
        !errors(&r).iter().any(|c| c.starts_with("parallel.") || c.starts_with("mtp.")),
        "{:?}",
        r.findings
    );
    let layers: Vec<u64> = r.memory.stages.iter().map(|s| s.n_layers).collect();
    assert_eq!(layers, [vec![4; 14], vec![2, 2]].concat());
    // The loss's logits on rank 15, the MTP layer's own on rank 14 (it predicts through the shared
    // head), none elsewhere.
    let logits: Vec<bool> = r.memory.stages.iter().map(|s| 0 < s.logits).collect();
    assert_eq!(logits, [vec![false; 14], vec![true, true]].concat());
    assert_eq!(r.memory.stages[14].logits, r.memory.stages[15].logits);
}

/// DeepSeek-V3 on Megatron-LM: "Et|(tt|)*30mL" over PP 16 is 32 stages, VPP 2. Rank r runs
/// stages r and r + 16: rank 0 the embedding with layer 0 and layers 31–32 (3 layers), rank 15
/// layers 29–30 and the MTP layer with the loss (2), the others 4. The script carries the layout
/// quoted and `--mtp-num-layers 1`, and reads back to the same plan.
#[test]
fn deepseek_v3_layout_round_trips_through_the_launch_script() {
    let text = r#"{"model": "deepseek-v3", "cluster": {"nodes": 256}, "framework": "megatron", "method": "pretrain",
        "mtp_layers": 1, "precision": "fp8", "parallel": {"pp": 16, "vpp": 2, "ep": 64,
        "pipeline_layout": "Et|(tt|)*30mL", "distributed_optimizer": true},
        "batch": {"micro_batch": 1, "global_batch": 16384, "seq_len": 4096}}"#;
    let plan = Plan::from_json(text).unwrap();
    let r = evaluate(&plan);
    assert!(errors(&r).is_empty(), "{:?}", r.findings);
    let layers: Vec<u64> = r.memory.stages.iter().map(|s| s.n_layers).collect();
    assert_eq!(layers, [vec![3], vec![4; 14], vec![2]].concat());
    assert!(r.memory.fits, "DeepSeek-V3 trained on this layout (2,048 H800s, 80 GB)");

    let files = emit::emit(&plan, "").unwrap();
    let script = &files.iter().find(|f| f.name.ends_with(".sh")).unwrap().text;
    assert!(script.contains("--pipeline-model-parallel-layout 'Et|(tt|)*30mL'"), "{script}");
    assert!(script.contains("--mtp-num-layers 1"));
    assert!(!script.contains("--num-layers-per-virtual-pipeline-stage"));
    let back = import::import(script, &plan.to_file()).unwrap().file;
    assert_eq!(back.parallel.pipeline_layout, "Et|(tt|)*30mL");
    assert_eq!((back.mtp_layers, back.parallel.vpp), (1, 2));
}

/// An MTP layer costs what Megatron counts for it (megatron/training/training.py
/// `num_floating_point_operations`, core_v0.19.0): one more layer like the last, its projection
/// of [h; embedding] (2h × h) and one more pass through the output layer (h × V), forward and
/// backward: 6 FLOPs per token per weight. Llama 2 7B's 32 layers are alike, so one layer is the
/// model's FLOPs less the head's, over 32.
#[test]
fn an_mtp_layer_adds_a_layer_a_projection_and_a_head() {
    let plan = |mtp: u32, layout: &str| {
        report(&format!(
            r#"{{"model": "llama-2-7b", "cluster": {{"nodes": 1}}, "framework": "megatron", "method": "pretrain",
                "mtp_layers": {mtp}, "parallel": {{"tp": 4, "pp": 2, "pipeline_layout": "{layout}",
                "sequence_parallel": true, "distributed_optimizer": true}},
                "batch": {{"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}}}"#
        ))
    };
    let (base, mtp) = (plan(0, "Et*16|t*16L"), plan(1, "Et*16|t*16mL"));
    assert!(errors(&mtp).is_empty(), "{:?}", mtp.findings);
    let tokens = 64.0 * 4096.0;
    let (h, v) = (4096.0, 32000.0);
    let head = 6.0 * tokens * h * v;
    let layer = (base.time.model_flops_per_step - head) / 32.0;
    let expected = layer + 6.0 * tokens * 2.0 * h * h + head;
    let added = mtp.time.model_flops_per_step - base.time.model_flops_per_step;
    assert!((added / expected - 1.0).abs() < 1e-9, "{added} vs {expected}");
    // The last stage runs it: its memory and the step grow.
    assert!(base.memory.stages[1].total < mtp.memory.stages[1].total);
    assert_eq!(base.memory.stages[0].total, mtp.memory.stages[0].total);
    assert!(base.time.step_seconds < mtp.time.step_seconds);
}

/// Uneven stages with VPP on Megatron-LM: each rank's layers split evenly over its chunks
/// (megatron/core/transformer/transformer_block.py `get_num_layers_to_build`), written as
/// `--num-virtual-stages-per-pipeline-rank` beside the first/last stage sizes (`arguments.py`
/// asks for it). Llama 2 7B's 32 layers over PP 6: 4, 6, 6, 6, 6, 4, each divisible by VPP 2.
/// MindSpeed-LLM's `--num-layer-list` still refuses VPP.
#[test]
fn uneven_stages_take_vpp_on_megatron_lm() {
    let text = |framework: &str| {
        format!(
            r#"{{"model": "llama-2-7b", "cluster": {{"nodes": 6}}, "framework": "{framework}", "method": "pretrain",
                "parallel": {{"tp": 8, "pp": 6, "vpp": 2, "uneven_layers": true, "sequence_parallel": true,
                "distributed_optimizer": true}}, "batch": {{"micro_batch": 1, "global_batch": 48, "seq_len": 4096}}}}"#
        )
    };
    let plan = Plan::from_json(&text("megatron")).unwrap();
    let r = evaluate(&plan);
    assert!(errors(&r).is_empty(), "{:?}", r.findings);
    let layers: Vec<u64> = r.memory.stages.iter().map(|s| s.n_layers).collect();
    assert_eq!(layers, [4, 6, 6, 6, 6, 4]);
    let script = emit::emit(&plan, "").unwrap().into_iter().find(|f| f.name.ends_with(".sh")).unwrap().text;
    assert!(script.contains("--num-virtual-stages-per-pipeline-rank 2"), "{script}");
    assert!(script.contains("--decoder-first-pipeline-num-layers 4 --decoder-last-pipeline-num-layers 4"));
    let ms = report(
        &text("mindspeed-llm").replace("\"pretrain\"", "\"pretrain\", \"hardware\": \"ascend-910b2\""),
    );
    assert!(errors(&ms).contains(&"parallel.uneven_vpp"), "{:?}", ms.findings);
}

/// VeRL's Megatron engine builds its model with megatron-core's `TransformerConfig` and takes the
/// same split: Llama 2 7B's 32 layers over PP 6, 4, 6, 6, 6, 6, 4, each divisible by VPP 2, written
/// as the engine's virtual size beside the first and last stage sizes.
#[test]
fn uneven_stages_take_vpp_on_verls_megatron_engine() {
    let plan = Plan::from_json(
        r#"{"model": "llama-2-7b", "cluster": {"nodes": 6}, "framework": "verl-megatron", "method": "grpo",
            "parallel": {"tp": 8, "pp": 6, "vpp": 2, "uneven_layers": true, "sequence_parallel": true,
            "distributed_optimizer": true}, "batch": {"global_batch": 48}, "rl": {"rollout_tp": 2}}"#,
    )
    .unwrap();
    let r = evaluate(&plan);
    assert!(errors(&r).is_empty(), "{:?}", r.findings);
    let layers: Vec<u64> = r.memory.stages.iter().map(|s| s.n_layers).collect();
    assert_eq!(layers, [4, 6, 6, 6, 6, 4]);
    let script = emit::emit(&plan, "").unwrap().into_iter().find(|f| f.name.ends_with(".sh")).unwrap().text;
    for key in [
        "actor_rollout_ref.actor.megatron.virtual_pipeline_model_parallel_size=2",
        "+actor_rollout_ref.actor.megatron.override_transformer_config.num_layers_in_first_pipeline_stage=4",
        "+actor_rollout_ref.actor.megatron.override_transformer_config.num_layers_in_last_pipeline_stage=4",
    ] {
        assert!(script.contains(key), "{key} in {script}");
    }
}

/// A layout string is Megatron's symbols only: anything else is refused with the field named,
/// so no other text can reach a launch script.
#[test]
fn a_layout_string_takes_only_layout_symbols() {
    let err = Plan::from_json(
        r#"{"model": "llama-2-7b", "framework": "megatron", "parallel": {"pp": 2, "pipeline_layout": "Et*16|t*16L'; rm -rf /"}}"#,
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("parallel.pipeline_layout must be"), "{err}");
}
