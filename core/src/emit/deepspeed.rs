//! DeepSpeed: `ds_config.json` (keys of `deepspeed/runtime/config.py`) whose batch identity holds —
//! train_batch_size = micro-batch × accumulation × DP (`runtime/config.py::_batch_assertion`) —
//! and the launch line (`deepspeed/launcher/runner.py`). DeepSpeed has no trainer of its own: the
//! line runs the user's `train.py`, which calls `deepspeed.initialize`.

use serde_json::{Value, json};

use super::{EmittedFile, FileKind, node_vars, script_opening};
use crate::Plan;
use crate::plan::{OffloadDevice, Precision, RecomputeGranularity};

/// The `zero_optimization` block for the plan's stage and offload (`deepspeed/runtime/zero/config.py`;
/// offload needs stage ≥ 1, parameter offload stage 3).
pub fn zero_block(plan: &Plan, hf_auto: bool) -> Value {
    let p = &plan.parallel;
    let bucket = if hf_auto { json!("auto") } else { json!(500_000_000u64) };
    let mut zero = json!({
        "stage": p.zero_stage.get(),
        "overlap_comm": p.overlap_grad_reduce,
        "contiguous_gradients": true,
        "reduce_bucket_size": bucket,
    });
    if p.zero_stage.shards_params() {
        zero["stage3_prefetch_bucket_size"] = bucket.clone();
        zero["stage3_param_persistence_threshold"] =
            if hf_auto { json!("auto") } else { json!(1_000_000u64) };
        zero["stage3_max_live_parameters"] = json!(1_000_000_000u64);
        zero["stage3_max_reuse_distance"] = json!(1_000_000_000u64);
        zero["sub_group_size"] = json!(crate::memory::SUB_GROUP_SIZE);
        zero["stage3_gather_16bit_weights_on_model_save"] = json!(true);
        // ZeRO++ (`DeepSpeedZeroConfig`: read by the stage-3 engine alone), where asked.
        let zpp = plan.zero_plus_plus();
        if 1 < zpp.hpz {
            zero["zero_hpz_partition_size"] = json!(zpp.hpz);
        }
        if zpp.quantized_weights {
            zero["zero_quantized_weights"] = json!(true);
        }
        if zpp.quantized_gradients {
            zero["zero_quantized_gradients"] = json!(true);
        }
    }
    // To NVMe (ZeRO-Infinity), the swap buffers the planner counts (`memory::nvme_swap`), at
    // DeepSpeed's defaults (`DeepSpeedZeroOffloadOptimizerConfig` and
    // `DeepSpeedZeroOffloadParamConfig`, deepspeed/runtime/zero/offload_config.py).
    use crate::memory::{NVME_OPTIMIZER_BUFFERS, NVME_PARAM_BUFFER_ELEMENTS, NVME_PARAM_BUFFERS};
    let nvme = p.offload_device == OffloadDevice::Nvme;
    if p.offload_optimizer && p.zero_stage.shards_optimizer() {
        zero["offload_optimizer"] = match nvme {
            false => json!({"device": "cpu", "pin_memory": true}),
            true => {
                json!({"device": "nvme", "nvme_path": NVME_PATH, "pin_memory": true, "buffer_count": NVME_OPTIMIZER_BUFFERS,
                "pipeline_read": false, "pipeline_write": false})
            }
        };
    }
    if p.offload_params && p.zero_stage.shards_params() {
        zero["offload_param"] = match nvme {
            false => json!({"device": "cpu", "pin_memory": true}),
            true => {
                json!({"device": "nvme", "nvme_path": NVME_PATH, "pin_memory": true, "buffer_count": NVME_PARAM_BUFFERS,
                "buffer_size": NVME_PARAM_BUFFER_ELEMENTS})
            }
        };
    }
    zero
}

/// Where the launch files have DeepSpeed swap to NVMe: the path DeepSpeed's configuration
/// reference gives (docs/_pages/config-json.md, `nvme_path`); the launch script refuses to start
/// where it is not a writable directory ([`nvme_check`]).
pub const NVME_PATH: &str = "/local_nvme";

/// Whether the DeepSpeed file sends anything to NVMe.
pub fn writes_nvme(plan: &Plan) -> bool {
    let p = &plan.parallel;
    p.offload_device == OffloadDevice::Nvme
        && ((p.offload_optimizer && p.zero_stage.shards_optimizer())
            || (p.offload_params && p.zero_stage.shards_params()))
}

/// The top-level `aio` block (libaio's reads and writes of the NVMe swaps) at DeepSpeed's defaults
/// (`get_aio_config`, deepspeed/runtime/swap_tensor/aio_config.py and constants.py), written out
/// to be tuned (DeepSpeed's `ds_nvme_tune` finds the best values for a volume); `None` where
/// nothing goes to NVMe.
pub fn aio_block(plan: &Plan) -> Option<Value> {
    writes_nvme(plan).then(|| {
        json!({"block_size": 1_048_576u64, "queue_depth": 8, "intra_op_parallelism": 1,
            "single_submit": false, "overlap_events": true})
    })
}

/// The launch script's check that the NVMe path is there, on every node, before anything starts;
/// empty where nothing goes to NVMe.
pub fn nvme_check(plan: &Plan, config: &str) -> String {
    if !writes_nvme(plan) {
        return String::new();
    }
    format!(
        "# DeepSpeed swaps the offloaded states to the node's NVMe volume at {NVME_PATH} (nvme_path in {config}).\n\
         if [ ! -d {NVME_PATH} ] || [ ! -w {NVME_PATH} ]; then\n\
         \x20 echo \"{NVME_PATH} is not a writable directory: mount the node's NVMe volume there, or change nvme_path in {config}\" >&2\n\
         \x20 exit 1\n\
         fi\n\n"
    )
}

/// The config a standalone DeepSpeed script reads: every batch key set, consistent.
pub fn config(plan: &Plan) -> Value {
    let micro = u64::from(plan.batch.micro_batch.get());
    let mem = crate::memory::estimate(plan);
    let (accumulation, dp) = (mem.n_microbatches, mem.dp);
    let mut c = json!({
        "train_batch_size": micro * accumulation * dp,
        "train_micro_batch_size_per_gpu": micro,
        "gradient_accumulation_steps": accumulation,
        "gradient_clipping": 1.0,
        "steps_per_print": 10,
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-5, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.1}},
        // DeepSpeed's WarmupLR (`deepspeed/runtime/lr_schedules.py`), with figures: a standalone
        // script has no Trainer to fill "auto".
        "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": 0, "warmup_max_lr": 1e-5, "warmup_num_steps": 100}},
        "zero_optimization": zero_block(plan, false),
        "wall_clock_breakdown": false,
    });
    if let Some(aio) = aio_block(plan) {
        c["aio"] = aio;
    }
    if plan.recompute.granularity != RecomputeGranularity::None {
        // Read by `deepspeed.checkpointing` when the script checkpoints with it
        // (`deepspeed/runtime/activation_checkpointing/config.py`): one checkpoint per layer, no
        // model parallelism to partition over.
        c["activation_checkpointing"] = json!({
            "partition_activations": false,
            "cpu_checkpointing": false,
            "contiguous_memory_optimization": false,
            "number_checkpoints": plan.model.arch.n_layers,
            "synchronize_checkpoint_boundary": false,
            "profile": false,
        });
    }
    match plan.precision {
        Precision::Bf16 | Precision::Fp8 | Precision::Mxfp8 | Precision::Nvfp4 => {
            c["bf16"] = json!({"enabled": true})
        }
        Precision::Fp16 => c["fp16"] = json!({"enabled": true, "loss_scale": 0, "initial_scale_power": 16}),
        Precision::Fp32 => {}
    }
    c
}

/// `ds_config.json` and `launch.sh`.
pub fn files(plan: &Plan, header: &[String]) -> Vec<EmittedFile> {
    let json = serde_json::to_string_pretty(&config(plan)).expect("a JSON value always serializes") + "\n";
    let mut sh = script_opening(
        header,
        "train.py is your script: it calls deepspeed.initialize(..., config=\"ds_config.json\").\n\
         # Run on every node with NODE_RANK set (0 … NUM_NODES − 1); MASTER_ADDR is node 0.",
    );
    sh.push_str(&node_vars(plan, false, "NUM_NODES", "GPUS_PER_NODE", "localhost"));
    sh.push_str(&nvme_check(plan, "ds_config.json"));
    sh.push_str("torchrun --nnodes \"$NUM_NODES\" --nproc_per_node \"$GPUS_PER_NODE\" --node_rank \"$NODE_RANK\" \\\n");
    sh.push_str("  --master_addr \"$MASTER_ADDR\" --master_port \"$MASTER_PORT\" \\\n");
    sh.push_str("  train.py --deepspeed --deepspeed_config ds_config.json\n");
    vec![
        EmittedFile { name: "ds_config.json".to_owned(), kind: FileKind::Json, text: json },
        EmittedFile { name: "launch.sh".to_owned(), kind: FileKind::Shell, text: sh },
    ]
}
