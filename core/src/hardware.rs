//! Accelerators: memory, dense throughput, bandwidths and node shape, each with its source, and the
//! efficiencies their kernels and collective library reach (NCCL on NVIDIA, HCCL on Ascend).
//!
//! Conventions: throughput is dense (no 2:4 sparsity; NVIDIA datasheets print sparse figures with "*");
//! intra-node link bandwidth is per device, both directions added; inter-node bandwidth is the NIC
//! bandwidth per device. A figure marked `reported` comes from community measurements or spec tables,
//! not the vendor's datasheet; the page says so, and a user can override any figure with a custom device.

use crate::time;

/// A device's figures in base units.
#[derive(Clone, Debug, PartialEq)]
pub struct Hardware {
    /// Stable id (`h100-sxm-80g`), or `custom`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Who makes it; decides the collective library (NCCL or HCCL) and the frameworks that run on it.
    pub vendor: Vendor,
    /// Device memory the framework can see, bytes.
    pub memory_bytes: u64,
    /// Dense bf16 tensor throughput, FLOP/s; 0 when the device has no bf16.
    pub bf16_flops_per_second: f64,
    /// Dense fp16 tensor throughput, FLOP/s.
    pub fp16_flops_per_second: f64,
    /// Dense fp8 tensor throughput, FLOP/s; 0 when the device has no fp8.
    pub fp8_flops_per_second: f64,
    /// Dense fp4 (NVFP4) tensor throughput, FLOP/s; 0 when the device has none (before Blackwell).
    pub fp4_flops_per_second: f64,
    /// Memory bandwidth, bytes/s.
    pub memory_bytes_per_second: f64,
    /// Link to the other devices of the node, per device, both directions, bytes/s.
    pub intra_node_bytes_per_second: f64,
    /// Network bandwidth to other nodes, per device, bytes/s.
    pub inter_node_bytes_per_second: f64,
    /// Devices in one node (one host, one launcher): the usual `nproc_per_node`.
    pub devices_per_node: u32,
    /// Devices on one scale-up fabric (NVLink / HCCS / UB), where the intra-node bandwidth holds:
    /// the node on DGX/HGX and Atlas 800 servers (8), a whole rack for GB200/GB300 NVL72 (72,
    /// trays of 4), a CloudMatrix384 supernode for Ascend 910C (384 packages of 2 dies: 768).
    pub scale_up_domain: u32,
    /// Whether any figure is a community report rather than a vendor datasheet.
    pub reported: bool,
    /// Where the figures come from.
    pub source: String,
    /// Asymptotic fraction of the dense peak a large GEMM reaches in a training step
    /// (`time::gemm_efficiency_on`; docs/time.md "Ascend").
    pub gemm_efficiency_max: f64,
    /// Fraction of link bandwidth a collective reaches: NCCL's figure on NVIDIA, HCCL's on Ascend.
    pub collective_eff: f64,
    /// Fixed cost of one collective or point-to-point call, seconds.
    pub collective_latency_seconds: f64,
    /// Links per device of a full-mesh scale-up fabric, where a group of n ranks reaches only n − 1
    /// of them (HCCS on Atlas 800T A2: 7); 0 where switches join the devices (NVSwitch, UB).
    pub mesh_links: u32,
    /// Maximum board power (TDP), watts: what the device may draw at full load, the figure energy
    /// estimates use (docs/cost.md); 0 when unknown (a custom device without one).
    pub board_power_watts: f64,
    /// Whether the board power is a public report or an estimate rather than the vendor's datasheet.
    pub board_power_reported: bool,
    /// Where the board power comes from.
    pub board_power_source: String,
}

impl Hardware {
    /// Whether the device computes in bf16.
    pub fn has_bf16(&self) -> bool {
        0.0 < self.bf16_flops_per_second
    }

    /// Whether the device computes in fp8.
    pub fn has_fp8(&self) -> bool {
        0.0 < self.fp8_flops_per_second
    }

    /// Whether the device has MXFP8 and NVFP4 block scaling in its tensor cores (Blackwell, the
    /// only devices here with fp4 units).
    pub fn has_block_scaling(&self) -> bool {
        0.0 < self.fp4_flops_per_second
    }
}

/// Device makers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// NVIDIA GPUs: NCCL, CUDA frameworks.
    Nvidia,
    /// Huawei Ascend NPUs: HCCL, MindSpeed frameworks.
    Ascend,
    /// A custom device of unknown make.
    Other,
}

const GB: f64 = 1e9;
const TB: f64 = 1e12;
const TFLOPS: f64 = 1e12;
/// A network link of `n` Gb/s in bytes/s.
const fn gbit(n: f64) -> f64 {
    n * 1e9 / 8.0
}

struct Row {
    id: &'static str,
    name: &'static str,
    vendor: Vendor,
    memory_gib: u64,
    bf16_tflops: f64,
    fp16_tflops: f64,
    fp8_tflops: f64,
    fp4_tflops: f64,
    memory_tb_per_s: f64,
    intra_node_gb_per_s: f64,
    inter_node_gbit_per_s: f64,
    devices_per_node: u32,
    scale_up: u32,
    reported: bool,
    source: &'static str,
    tuning: Tuning,
    power: Power,
}

/// A device's maximum board power (TDP), watts, with its source: the vendor's datasheet, or a
/// public report or estimate where the vendor publishes none.
struct Power {
    watts: f64,
    reported: bool,
    source: &'static str,
}

/// Board power from the vendor's datasheet.
const fn datasheet(watts: f64, source: &'static str) -> Power {
    Power { watts, reported: false, source }
}

/// Board power from a public report or an estimate (the page says so).
const fn reported(watts: f64, source: &'static str) -> Power {
    Power { watts, reported: true, source }
}

/// A device family's kernel and collective efficiencies (each figure's evidence is on its constant).
struct Tuning {
    gemm_efficiency_max: f64,
    collective_eff: f64,
    collective_latency_seconds: f64,
    mesh_links: u32,
}

/// NVIDIA GPUs: the constants fitted and derived on A100/H100 runs, NCCL over NVSwitch.
const NVIDIA: Tuning = Tuning {
    gemm_efficiency_max: time::GEMM_EFF_MAX,
    collective_eff: time::COLLECTIVE_EFF,
    collective_latency_seconds: time::COLLECTIVE_LATENCY_SECONDS,
    mesh_links: 0,
};

/// Ascend NPUs: the Ascend GEMM asymptote and HCCL's figures, over a full mesh of `mesh_links`
/// links per device (0: switched).
const fn ascend(mesh_links: u32) -> Tuning {
    Tuning {
        gemm_efficiency_max: time::ASCEND_GEMM_EFF_MAX,
        collective_eff: time::HCCL_COLLECTIVE_EFF,
        collective_latency_seconds: time::HCCL_COLLECTIVE_LATENCY_SECONDS,
        mesh_links,
    }
}

/// Ascend 910A: 3 HCCS links each (Hot Chips 31 DaVinci talk, the catalog row's source), so full
/// meshes of 4; no public GEMM measurement, so the 910B figure stands in.
const ASCEND_910A: Tuning = ascend(3);

/// Ascend 910B1–B4 in Atlas 800T A2 nodes: 8 NPUs in an HCCS full mesh, 7 links each (Pangu Ultra
/// report §4.1, arXiv 2504.07866; MindSpeed `auto_settings/module/communication/comm_hardware/
/// comm_hardware_info.py` scales HCCS bandwidth by the group's n − 1 peers).
const ASCEND_910B: Tuning = ascend(7);

/// Ascend 910C dies in CloudMatrix384: the UB fabric is switched (two tiers of non-blocking UB
/// switches, arXiv 2506.12708), so every group gets the full link; MindSpeed's
/// `comm_hardware_info.py` gives 910_93 the full bandwidth whatever the group.
const ASCEND_910C: Tuning = ascend(0);

/// The catalog, as the datasheets write it (TB/s, TFLOPS, GB/s). Memory sizes are binary: an "80GB"
/// HBM part holds 80 GiB (five 16 GiB stacks), and the tools count so: npu-smi shows a 32 GB 910B4 as
/// 32768 MB (vllm-ascend #8746), nvidia-smi an 80 GB A100 as 81920 MiB.
const ROWS: &[Row] = &[
    Row {
        id: "v100-sxm-32g",
        name: "NVIDIA V100 SXM2 32GB",
        vendor: Vendor::Nvidia,
        memory_gib: 32,
        bf16_tflops: 0.0,
        fp16_tflops: 125.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 0.9,
        intra_node_gb_per_s: 300.0,
        inter_node_gbit_per_s: 100.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: false,
        source: "NVIDIA Tesla V100 datasheet (SXM2: 125 TFLOPS tensor, 900 GB/s HBM2, NVLink 300 GB/s); DGX-1 4 × 100 Gb/s IB; https://www.nvidia.com/en-us/data-center/v100/",
        tuning: NVIDIA,
        power: datasheet(
            300.0,
            "NVIDIA Tesla V100 datasheet: SXM2 300 W max, https://www.nvidia.com/en-us/data-center/v100/",
        ),
    },
    Row {
        id: "t4-16g",
        name: "NVIDIA T4 16GB",
        vendor: Vendor::Nvidia,
        memory_gib: 16,
        bf16_tflops: 0.0,
        fp16_tflops: 65.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 0.32,
        intra_node_gb_per_s: 32.0,
        inter_node_gbit_per_s: 25.0,
        devices_per_node: 4,
        scale_up: 4,
        reported: false,
        source: "NVIDIA T4 datasheet (65 TFLOPS FP16 mixed precision, 320 GB/s GDDR6, PCIe Gen3 x16 32 GB/s), https://www.nvidia.com/en-us/data-center/tesla-t4/",
        tuning: NVIDIA,
        power: datasheet(
            70.0,
            "NVIDIA T4 datasheet: 70 W max, https://www.nvidia.com/en-us/data-center/tesla-t4/",
        ),
    },
    Row {
        id: "a100-sxm-40g",
        name: "NVIDIA A100 SXM4 40GB",
        vendor: Vendor::Nvidia,
        memory_gib: 40,
        bf16_tflops: 312.0,
        fp16_tflops: 312.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 1.555,
        intra_node_gb_per_s: 600.0,
        inter_node_gbit_per_s: 200.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: false,
        source: "NVIDIA A100 datasheet, https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf; DGX A100 user guide (8 × 200 Gb/s HDR), https://docs.nvidia.com/dgx/dgxa100-user-guide/",
        tuning: NVIDIA,
        power: datasheet(
            400.0,
            "NVIDIA A100 datasheet: SXM 400 W max TDP, https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
        ),
    },
    Row {
        id: "a100-sxm-80g",
        name: "NVIDIA A100 SXM4 80GB",
        vendor: Vendor::Nvidia,
        memory_gib: 80,
        bf16_tflops: 312.0,
        fp16_tflops: 312.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 2.039,
        intra_node_gb_per_s: 600.0,
        inter_node_gbit_per_s: 200.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: false,
        source: "NVIDIA A100 datasheet, https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf; DGX A100 user guide (8 × 200 Gb/s HDR), https://docs.nvidia.com/dgx/dgxa100-user-guide/",
        tuning: NVIDIA,
        power: datasheet(
            400.0,
            "NVIDIA A100 datasheet: SXM 400 W max TDP, https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
        ),
    },
    Row {
        id: "a100-pcie-80g",
        name: "NVIDIA A100 PCIe 80GB",
        vendor: Vendor::Nvidia,
        memory_gib: 80,
        bf16_tflops: 312.0,
        fp16_tflops: 312.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 1.935,
        intra_node_gb_per_s: 64.0,
        inter_node_gbit_per_s: 100.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: false,
        source: "NVIDIA A100 datasheet (PCIe Gen4 x16 64 GB/s), https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
        tuning: NVIDIA,
        power: datasheet(
            300.0,
            "NVIDIA A100 datasheet: PCIe 80GB 300 W max TDP, https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
        ),
    },
    Row {
        id: "a800-sxm-80g",
        name: "NVIDIA A800 SXM4 80GB",
        vendor: Vendor::Nvidia,
        memory_gib: 80,
        bf16_tflops: 312.0,
        fp16_tflops: 312.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 2.039,
        intra_node_gb_per_s: 400.0,
        inter_node_gbit_per_s: 200.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: true,
        source: "A100 figures (https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf) with NVLink cut to 8 lanes, 400 GB/s (ArthurChiao, GPU 进阶笔记（一）, 2023, https://arthurchiao.art/blog/gpu-advanced-notes-1-zh/)",
        tuning: NVIDIA,
        power: reported(
            400.0,
            "the A100 SXM figure (400 W, A100 datasheet); NVIDIA publishes no A800 datasheet",
        ),
    },
    Row {
        id: "h100-sxm-80g",
        name: "NVIDIA H100 SXM5 80GB",
        vendor: Vendor::Nvidia,
        memory_gib: 80,
        bf16_tflops: 989.0,
        fp16_tflops: 989.0,
        fp8_tflops: 1979.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 3.35,
        intra_node_gb_per_s: 900.0,
        inter_node_gbit_per_s: 400.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: false,
        source: "NVIDIA H100 datasheet, https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet; DGX H100 user guide (8 × 400 Gb/s NDR), https://docs.nvidia.com/dgx/dgxh100-user-guide/",
        tuning: NVIDIA,
        power: datasheet(
            700.0,
            "NVIDIA H100 datasheet: SXM up to 700 W max TDP, https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet",
        ),
    },
    Row {
        id: "h100-pcie-80g",
        name: "NVIDIA H100 PCIe 80GB",
        vendor: Vendor::Nvidia,
        memory_gib: 80,
        bf16_tflops: 756.0,
        fp16_tflops: 756.0,
        fp8_tflops: 1513.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 2.0,
        intra_node_gb_per_s: 128.0,
        inter_node_gbit_per_s: 200.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: false,
        source: "NVIDIA H100 datasheet (PCIe Gen5 128 GB/s), https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet",
        tuning: NVIDIA,
        power: datasheet(
            350.0,
            "NVIDIA H100 datasheet: PCIe 300–350 W max TDP (the upper figure), https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet",
        ),
    },
    Row {
        id: "h800-sxm-80g",
        name: "NVIDIA H800 SXM5 80GB",
        vendor: Vendor::Nvidia,
        memory_gib: 80,
        bf16_tflops: 989.0,
        fp16_tflops: 989.0,
        fp8_tflops: 1979.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 3.35,
        intra_node_gb_per_s: 400.0,
        inter_node_gbit_per_s: 400.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: true,
        source: "H100 figures (https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet) with NVLink 400 GB/s, https://github.com/deepseek-ai/DeepSeek-V3/issues/28",
        tuning: NVIDIA,
        power: reported(
            700.0,
            "the H100 SXM figure (700 W, H100 datasheet); NVIDIA publishes no H800 datasheet",
        ),
    },
    Row {
        id: "h200-sxm-141g",
        name: "NVIDIA H200 SXM 141GB",
        vendor: Vendor::Nvidia,
        memory_gib: 141,
        bf16_tflops: 989.0,
        fp16_tflops: 989.0,
        fp8_tflops: 1979.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 4.8,
        intra_node_gb_per_s: 900.0,
        inter_node_gbit_per_s: 400.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: false,
        source: "NVIDIA H200 product page, https://www.nvidia.com/en-us/data-center/h200/",
        tuning: NVIDIA,
        power: datasheet(
            700.0,
            "NVIDIA H200 product page: SXM up to 700 W max TDP, https://www.nvidia.com/en-us/data-center/h200/",
        ),
    },
    Row {
        id: "h20-96g",
        name: "NVIDIA H20 96GB",
        vendor: Vendor::Nvidia,
        memory_gib: 96,
        bf16_tflops: 148.0,
        fp16_tflops: 148.0,
        fp8_tflops: 296.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 4.0,
        intra_node_gb_per_s: 900.0,
        inter_node_gbit_per_s: 400.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: true,
        source: "public spec reports, e.g. https://willitrunai.com/gpus/h20-96gb (no NVIDIA datasheet); 400G × 8 RoCE, https://github.com/NVIDIA/nccl-tests/issues/367",
        tuning: NVIDIA,
        power: reported(
            400.0,
            "public spec reports, e.g. https://willitrunai.com/gpus/h20-96gb (no NVIDIA datasheet)",
        ),
    },
    Row {
        id: "b200-180g",
        name: "NVIDIA B200 (HGX) 180GB",
        vendor: Vendor::Nvidia,
        memory_gib: 180,
        bf16_tflops: 2250.0,
        fp16_tflops: 2250.0,
        fp8_tflops: 4500.0,
        fp4_tflops: 9000.0,
        memory_tb_per_s: 7.7,
        intra_node_gb_per_s: 1800.0,
        inter_node_gbit_per_s: 400.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: true,
        source: "HGX B200 at 1000 W, https://www.glennklockwood.com/garden/processors/B200 (Vultr HGX B200 overview: 179 GB visible); DGX B200 user guide, https://docs.nvidia.com/dgx/dgxb200-user-guide/",
        tuning: NVIDIA,
        power: reported(
            1000.0,
            "HGX B200 configured to 1000 W per GPU, https://www.glennklockwood.com/garden/processors/B200; DGX B200 user guide, https://docs.nvidia.com/dgx/dgxb200-user-guide/",
        ),
    },
    Row {
        id: "gb200-186g",
        name: "NVIDIA GB200 NVL72 (per GPU) 186GB",
        vendor: Vendor::Nvidia,
        memory_gib: 186,
        bf16_tflops: 2500.0,
        fp16_tflops: 2500.0,
        fp8_tflops: 5000.0,
        fp4_tflops: 10000.0,
        memory_tb_per_s: 8.0,
        intra_node_gb_per_s: 1800.0,
        inter_node_gbit_per_s: 400.0,
        devices_per_node: 4,
        scale_up: 72,
        reported: false,
        source: "NVIDIA GB200 NVL72 datasheet ÷ 72 GPUs (360 PF BF16 sparse, 13.4 TB HBM3e, 576 TB/s, NVLink 130 TB/s); 4 GPUs per compute tray; https://www.nvidia.com/en-us/data-center/gb200-nvl72/",
        tuning: NVIDIA,
        power: reported(
            1200.0,
            "GB200 variant of B200 configured to 1200 W, https://www.glennklockwood.com/garden/processors/B200 (the NVL72 datasheet gives no per-GPU figure)",
        ),
    },
    Row {
        id: "gb300-288g",
        name: "NVIDIA GB300 NVL72 (per GPU) 288GB",
        vendor: Vendor::Nvidia,
        memory_gib: 288,
        bf16_tflops: 2500.0,
        fp16_tflops: 2500.0,
        fp8_tflops: 5000.0,
        fp4_tflops: 15000.0,
        memory_tb_per_s: 8.0,
        intra_node_gb_per_s: 1800.0,
        inter_node_gbit_per_s: 800.0,
        devices_per_node: 4,
        scale_up: 72,
        reported: false,
        source: "NVIDIA GB300 NVL72 datasheet ÷ 72 GPUs (360 PF BF16 sparse, 20.7 TB HBM3e, 576 TB/s, NVLink 130 TB/s, ConnectX-8 800 Gb/s), https://www.nvidia.com/en-us/data-center/gb300-nvl72/",
        tuning: NVIDIA,
        power: reported(
            1400.0,
            "estimate: public reports of 1400 W per Blackwell Ultra GPU in GB300 NVL72 (the NVL72 datasheet gives no per-GPU figure), https://www.nvidia.com/en-us/data-center/gb300-nvl72/",
        ),
    },
    Row {
        id: "l40s-48g",
        name: "NVIDIA L40S 48GB",
        vendor: Vendor::Nvidia,
        memory_gib: 48,
        bf16_tflops: 362.0,
        fp16_tflops: 362.0,
        fp8_tflops: 733.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 0.864,
        intra_node_gb_per_s: 64.0,
        inter_node_gbit_per_s: 200.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: false,
        source: "NVIDIA L40S product page (no NVLink; PCIe Gen4 x16), https://www.nvidia.com/en-us/data-center/l40s/",
        tuning: NVIDIA,
        power: datasheet(
            350.0,
            "NVIDIA L40S product page: 350 W max power, https://www.nvidia.com/en-us/data-center/l40s/",
        ),
    },
    Row {
        id: "rtx-4090-24g",
        name: "NVIDIA GeForce RTX 4090 24GB",
        vendor: Vendor::Nvidia,
        memory_gib: 24,
        bf16_tflops: 165.0,
        fp16_tflops: 165.0,
        fp8_tflops: 330.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 1.008,
        intra_node_gb_per_s: 64.0,
        inter_node_gbit_per_s: 25.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: false,
        source: "NVIDIA Ada Lovelace architecture whitepaper (FP32 accumulate; no NVLink, P2P disabled), https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
        tuning: NVIDIA,
        power: datasheet(
            450.0,
            "NVIDIA GeForce RTX 4090 specifications: 450 W total graphics power, https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/",
        ),
    },
    Row {
        id: "ascend-910a",
        name: "Huawei Ascend 910A 32GB",
        vendor: Vendor::Ascend,
        memory_gib: 32,
        bf16_tflops: 0.0,
        fp16_tflops: 256.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 1.2,
        intra_node_gb_per_s: 90.0,
        inter_node_gbit_per_s: 200.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: true,
        source: "Huawei Ascend 910 launch, 2019-08-23 (256 TFLOPS FP16), and Hot Chips 31 talk DaVinci: A Scalable Architecture for Neural Network Computing (3 × 240 Gb/s HCCS, 2 × 100 GbE); no bf16, https://github.com/vllm-project/vllm-ascend/issues/9294",
        tuning: ASCEND_910A,
        power: reported(
            310.0,
            "Huawei Ascend 910 launch, 2019-08-23: 310 W max power consumption (an announcement, no datasheet)",
        ),
    },
    Row {
        id: "ascend-910b1",
        name: "Huawei Ascend 910B1 64GB",
        vendor: Vendor::Ascend,
        memory_gib: 64,
        bf16_tflops: 400.0,
        fp16_tflops: 400.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 1.6,
        intra_node_gb_per_s: 392.0,
        inter_node_gbit_per_s: 200.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: true,
        source: "community spec tables (ArthurChiao, GPU 进阶笔记（二）, 2023: HCCS 7 × 56 GB/s, https://arthurchiao.art/blog/gpu-advanced-notes-2-zh/); no Huawei datasheet",
        tuning: ASCEND_910B,
        power: reported(
            400.0,
            "estimate: 400 W as commonly reported for the Atlas 800T A2's NPUs; no Huawei datasheet",
        ),
    },
    Row {
        id: "ascend-910b2",
        name: "Huawei Ascend 910B2 64GB",
        vendor: Vendor::Ascend,
        memory_gib: 64,
        bf16_tflops: 376.0,
        fp16_tflops: 376.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 1.6,
        intra_node_gb_per_s: 392.0,
        inter_node_gbit_per_s: 200.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: true,
        source: "community spec tables, https://arthurchiao.art/blog/gpu-advanced-notes-2-zh/; measured 315 TFLOPS BF16 GEMM, https://github.com/zzc0721/torch-performance-test-data/issues/109; no Huawei datasheet",
        tuning: ASCEND_910B,
        power: reported(
            400.0,
            "estimate: 400 W as commonly reported for the Atlas 800T A2's NPUs; no Huawei datasheet",
        ),
    },
    Row {
        id: "ascend-910b3",
        name: "Huawei Ascend 910B3 64GB",
        vendor: Vendor::Ascend,
        memory_gib: 64,
        bf16_tflops: 313.0,
        fp16_tflops: 313.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 1.6,
        intra_node_gb_per_s: 392.0,
        inter_node_gbit_per_s: 200.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: true,
        source: "community spec tables, https://arthurchiao.art/blog/gpu-advanced-notes-2-zh/; no Huawei datasheet",
        tuning: ASCEND_910B,
        power: reported(
            400.0,
            "estimate: 400 W as commonly reported for the Atlas 800T A2's NPUs; no Huawei datasheet",
        ),
    },
    Row {
        id: "ascend-910b4",
        name: "Huawei Ascend 910B4 32GB",
        vendor: Vendor::Ascend,
        memory_gib: 32,
        bf16_tflops: 280.0,
        fp16_tflops: 280.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 0.8,
        intra_node_gb_per_s: 392.0,
        inter_node_gbit_per_s: 200.0,
        devices_per_node: 8,
        scale_up: 8,
        reported: true,
        source: "32 GB: https://github.com/vllm-project/vllm-ascend/issues/129, https://github.com/vllm-project/vllm-ascend/issues/8746; community spec tables, https://arthurchiao.art/blog/gpu-advanced-notes-2-zh/; no Huawei datasheet",
        tuning: ASCEND_910B,
        power: reported(
            350.0,
            "estimate: a 910B4 runs at a lower power than the B1–B3 (reported 350 W); no Huawei datasheet",
        ),
    },
    Row {
        id: "ascend-910c",
        name: "Huawei Ascend 910C (per die) 64GB",
        vendor: Vendor::Ascend,
        memory_gib: 64,
        bf16_tflops: 376.0,
        fp16_tflops: 376.0,
        fp8_tflops: 0.0,
        fp4_tflops: 0.0,
        memory_tb_per_s: 1.6,
        intra_node_gb_per_s: 392.0,
        inter_node_gbit_per_s: 200.0,
        devices_per_node: 16,
        scale_up: 768,
        reported: true,
        source: "CloudMatrix384 paper, https://arxiv.org/abs/2506.12708: 2 dies per package, 752 TFLOPS BF16 and 128 GB per package; 16 dies per node, https://www.hiascend.com/document/detail/en/mindcluster/730/clustersched/schedulingug/dl_affinity_0007.html",
        tuning: ASCEND_910C,
        power: reported(
            400.0,
            "estimate: one die of a two-die package, taken at the 910B's reported 400 W; no Huawei datasheet gives the package's power",
        ),
    },
];

/// The hardware catalog.
pub fn devices() -> Vec<Hardware> {
    ROWS.iter().map(from_row).collect()
}

/// Looks a device up by id.
pub fn device(id: &str) -> Option<Hardware> {
    ROWS.iter().find(|r| r.id == id).map(from_row)
}

fn from_row(r: &Row) -> Hardware {
    Hardware {
        id: r.id.to_owned(),
        name: r.name.to_owned(),
        vendor: r.vendor,
        memory_bytes: r.memory_gib << 30,
        bf16_flops_per_second: r.bf16_tflops * TFLOPS,
        fp16_flops_per_second: r.fp16_tflops * TFLOPS,
        fp8_flops_per_second: r.fp8_tflops * TFLOPS,
        fp4_flops_per_second: r.fp4_tflops * TFLOPS,
        memory_bytes_per_second: r.memory_tb_per_s * TB,
        intra_node_bytes_per_second: r.intra_node_gb_per_s * GB,
        inter_node_bytes_per_second: gbit(r.inter_node_gbit_per_s),
        devices_per_node: r.devices_per_node,
        scale_up_domain: r.scale_up,
        reported: r.reported,
        source: r.source.to_owned(),
        gemm_efficiency_max: r.tuning.gemm_efficiency_max,
        collective_eff: r.tuning.collective_eff,
        collective_latency_seconds: r.tuning.collective_latency_seconds,
        mesh_links: r.tuning.mesh_links,
        board_power_watts: r.power.watts,
        board_power_reported: r.power.reported,
        board_power_source: r.power.source.to_owned(),
    }
}
