//! The hardware catalog against the vendors' datasheets and the public reports each entry cites.

use trainplan_core::hardware::{self, Vendor};

#[test]
fn ids_are_unique_kebab_case_and_sourced() {
    let devices = hardware::devices();
    assert!(20 <= devices.len());
    for (idx, d) in devices.iter().enumerate() {
        assert!(d.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{}", d.id);
        assert!(devices[idx + 1..].iter().all(|other| other.id != d.id), "{} twice", d.id);
        assert!(!d.source.is_empty(), "{} has no source", d.id);
        assert!(
            0 < d.memory_bytes && 0.0 < d.fp16_flops_per_second && 0.0 < d.memory_bytes_per_second,
            "{}",
            d.id
        );
        assert_eq!(hardware::device(&d.id).as_ref(), Some(d));
    }
}

#[test]
fn precision_support_follows_the_architectures() {
    // 910A has no BF16 (vllm-ascend issue #9294); V100 and T4 predate it. FP8 needs Hopper, Ada or
    // Blackwell (the datasheets); Ascend 910B/910C (A2/A3) have none (vllm-ascend issue #1526).
    for d in hardware::devices() {
        let no_bf16 = ["v100-sxm-32g", "t4-16g", "ascend-910a"].contains(&d.id.as_str());
        assert_eq!(d.has_bf16(), !no_bf16, "{} bf16", d.id);
        let fp8 = ["h100", "h800", "h200", "h20-", "b200", "gb200", "gb300", "l40s", "rtx-4090"]
            .iter()
            .any(|prefix| d.id.starts_with(prefix));
        assert_eq!(d.has_fp8(), fp8, "{} fp8", d.id);
        assert_eq!(d.vendor == Vendor::Ascend, d.id.starts_with("ascend-"), "{}", d.id);
    }
}

#[test]
fn datasheet_figures() {
    let h100 = hardware::device("h100-sxm-80g").unwrap();
    // NVIDIA H100 SXM5 datasheet: 80 GB (binary, 80 GiB of HBM3), 3.35 TB/s, 989 TFLOPS dense BF16,
    // NVLink 900 GB/s.
    assert_eq!(h100.memory_bytes, 80 << 30);
    assert_eq!(h100.bf16_flops_per_second, 989e12);
    assert_eq!(h100.memory_bytes_per_second, 3.35e12);
    assert_eq!(h100.intra_node_bytes_per_second, 900e9);
    // 400 Gb/s NDR per GPU = 50 GB/s.
    assert_eq!(h100.inter_node_bytes_per_second, 50e9);
    // 910C nodes hold 16 dies of 64 GB (Huawei MindCluster, Atlas 900 A3 SuperPoD: 8 two-die HiAM
    // modules per node); the figures are reported, not datasheet.
    let c = hardware::device("ascend-910c").unwrap();
    assert_eq!((c.devices_per_node, c.memory_bytes, c.reported), (16, 64 << 30, true));
    // vllm-ascend #8746: npu-smi shows a 910B4 as 32768 MB.
    assert_eq!(hardware::device("ascend-910b4").unwrap().memory_bytes, 32768 << 20);
}
