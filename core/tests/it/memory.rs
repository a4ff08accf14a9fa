//! Weight bytes per device under ZeRO-3 sharding.

use trainplan_core::{catalog, memory};

#[test]
fn zero3_divides_evenly_when_every_tensor_divides() {
    // Every Llama-2-7B tensor has a multiple of 8 elements (h = 4096), so the 8 shards are exact:
    // 6,738,415,616 × 2 bytes / 8 = 1,684,603,904 bytes.
    let arch = &catalog::model("llama-2-7b").unwrap().arch;
    assert_eq!(memory::zero3_weight_bytes_per_device(arch, 8, memory::BF16_BYTES), 1_684_603_904);
}

#[test]
fn zero3_pads_each_tensor_to_the_world_size() {
    // With 3 devices, DeepSpeed pads each tensor to a multiple of 3 (`_padding_size`). Qwen2.5-0.5B's
    // k/v biases have 128 elements each: ceil(128 / 3) = 43 per rank, one more than 128 / 3 rounded down.
    let arch = &catalog::model("qwen2.5-0.5b").unwrap().arch;
    let sharded = memory::zero3_weight_bytes_per_device(arch, 3, 1);
    let total = 494_032_768_u64;
    assert!(total.div_ceil(3) < sharded, "padding adds elements");
    // At most one padding element per tensor: 290 tensors in the checkpoint.
    assert!(sharded <= total.div_ceil(3) + 290);
}

#[test]
fn more_devices_never_hold_more_weights() {
    for entry in catalog::models() {
        let mut last = u64::MAX;
        for n in 1..=64 {
            let bytes = memory::zero3_weight_bytes_per_device(&entry.arch, n, memory::BF16_BYTES);
            assert!(bytes <= last, "{} with {n} devices", entry.id);
            last = bytes;
        }
    }
}

#[test]
fn qwen2_5_0_5b_has_as_many_tensors_as_its_checkpoint() {
    // The published bf16 `model.safetensors` of Qwen2.5-0.5B holds 290 tensors (tied head included once).
    let arch = &catalog::model("qwen2.5-0.5b").unwrap().arch;
    let n_tensors: u64 = trainplan_core::model::tensors(arch).iter().map(|t| t.count).sum();
    assert_eq!(n_tensors, 290);
}
