use std::collections::BTreeMap;
use trainplan_core::schedule::Pass;
use trainplan_core::{Plan, step_timeline};
fn main() {
    for (name, text) in [
        (
            "405b pp32 vpp4",
            r#"{"model": "llama-3.1-405b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 128}, "parallel": {"tp": 8, "pp": 32, "vpp": 4, "cp": 1, "distributed_optimizer": true, "sequence_parallel": true}, "recompute": {"granularity": "selective"}, "batch": {"micro_batch": 1, "global_batch": 1024, "seq_len": 8192}}"#,
        ),
        (
            "70b pp64 vpp1",
            r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 16}, "parallel": {"tp": 8, "pp": 64, "vpp": 1, "cp": 1, "distributed_optimizer": true, "sequence_parallel": true}, "recompute": {"granularity": "selective"}, "batch": {"micro_batch": 1, "global_batch": 1024, "seq_len": 8192}}"#,
        ),
        (
            "qwen3 pp64 vpp1",
            r#"{"model": "qwen3-235b-a22b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 128}, "parallel": {"tp": 8, "pp": 64, "vpp": 1, "cp": 1, "distributed_optimizer": true, "sequence_parallel": true}, "recompute": {"granularity": "selective"}, "batch": {"micro_batch": 1, "global_batch": 1024, "seq_len": 8192}}"#,
        ),
    ] {
        let plan = Plan::from_json(text).unwrap();
        let tl = step_timeline(&plan);
        let mut d: BTreeMap<(u32, u32, u8), f64> = BTreeMap::new();
        for e in &tl.events {
            let k = match e.pass {
                Pass::F => 0,
                Pass::B => 1,
                Pass::W => 2,
            };
            d.entry((e.stage, e.chunk, k)).or_insert(e.end_seconds - e.start_seconds);
        }
        let mut distinct: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
        for r in 0..tl.n_ranks {
            for c in 0..tl.n_chunks {
                let f = d.get(&(r, c, 0)).copied().unwrap_or(0.0);
                let b = d.get(&(r, c, 1)).copied().unwrap_or(0.0);
                distinct.entry(format!("F {:.3} ms B {:.3} ms", f * 1e3, b * 1e3)).or_default().push((r, c));
            }
        }
        println!("{name}: ranks {} chunks {} m {}", tl.n_ranks, tl.n_chunks, tl.n_microbatches);
        for (k, v) in distinct {
            println!("  {k}: {} stages, e.g. {:?}", v.len(), &v[..v.len().min(6)]);
        }
    }
}
