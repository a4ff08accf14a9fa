//! A DeepSpeed config JSON.

// The importer's shared types and helpers, and its imports (mod.rs).
use super::*;

/// A DeepSpeed JSON: ZeRO stage and offload, batch, recomputation, precision. The file names no
/// model, so the method is full fine-tuning of whatever model the user's script loads.
pub(super) fn deepspeed(v: &Value, file: &mut PlanFile) -> Result<Reading, ImportError> {
    let Some(obj) = v.as_object() else { return Err(ImportError::Unrecognized) };
    file.framework = Framework::DeepSpeed;
    file.method = Method::SftFull;
    let mut r = Reading::default();
    let zero = &v["zero_optimization"];
    let stage = zero["stage"].as_u64().unwrap_or(0);
    if 3 < stage {
        return Err(ImportError::BadValue("zero_optimization.stage".into(), Expected::ZeroStage));
    }
    file.parallel.zero_stage = stage as u8;
    // DeepSpeed overlaps ZeRO-3's reductions unless told otherwise (`overlap_comm_valid`:
    // `self.overlap_comm = self.stage == ZeroStageEnum.weights`, deepspeed/runtime/zero/config.py
    // at v0.19.8), the other stages' not.
    file.parallel.overlap_grad_reduce = zero["overlap_comm"].as_bool().unwrap_or(stage == 3);
    file.parallel.offload_optimizer =
        zero["offload_optimizer"]["device"].as_str().is_some_and(|d| d != "none");
    file.parallel.offload_params = zero["offload_param"]["device"].as_str().is_some_and(|d| d != "none");
    // ZeRO-Infinity: either offload to NVMe (the plan has one device for both).
    let nvme = |k: &str| zero[k]["device"].as_str() == Some("nvme");
    if nvme("offload_optimizer") || nvme("offload_param") {
        file.parallel.offload_device = OffloadDevice::Nvme;
    }
    // ZeRO++ (0 and 1 alike turn hpZ off: the stage-3 engine builds its group above 1).
    let hpz = zero["zero_hpz_partition_size"].as_u64().map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    file.parallel.zero_hpz_partition_size = hpz.unwrap_or(1).max(1);
    file.parallel.zero_quantized_weights = zero["zero_quantized_weights"].as_bool().unwrap_or(false);
    file.parallel.zero_quantized_gradients = zero["zero_quantized_gradients"].as_bool().unwrap_or(false);
    let int = |k: &str| v[k].as_u64().map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let mut applied = vec!["zero_optimization", "activation_checkpointing"];
    if let Some(m) = int("train_micro_batch_size_per_gpu") {
        file.batch.micro_batch = m.max(1);
        applied.push("train_micro_batch_size_per_gpu");
    }
    if let Some(g) = int("train_batch_size") {
        file.batch.global_batch = g.max(1);
        applied.push("train_batch_size");
    }
    file.recompute.granularity = match obj.contains_key("activation_checkpointing") {
        true => RecomputeGranularity::Full,
        false => RecomputeGranularity::None,
    };
    // `"enabled": "auto"` leaves it to the HF Trainer: the plan's default, the key not used.
    file.precision = match (&v["bf16"]["enabled"], &v["fp16"]["enabled"]) {
        (Value::Bool(true), _) => Precision::Bf16,
        (_, Value::Bool(true)) => Precision::Fp16,
        (Value::Null, Value::Null) => Precision::Fp32,
        _ => Precision::Bf16,
    };
    for k in ["bf16", "fp16"] {
        if v[k]["enabled"].is_boolean() {
            applied.push(k);
        }
    }
    for (k, value) in obj {
        if !applied.contains(&k.as_str()) {
            r.rest.push((k.clone(), value.to_string()));
        }
    }
    if let Some(zero) = zero.as_object() {
        for (k, value) in zero {
            let read = [
                "stage",
                "overlap_comm",
                "offload_optimizer",
                "offload_param",
                "zero_hpz_partition_size",
                "zero_quantized_weights",
                "zero_quantized_gradients",
            ];
            if !read.contains(&k.as_str()) {
                r.rest.push((format!("zero_optimization.{k}"), value.to_string()));
            }
        }
    }
    Ok(r)
}
