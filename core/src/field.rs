//! The plan file's fields by name: one [`Field`] per dotted path docs/plan-format.md documents
//! (`parallel.tp`), so that a fix, a search's change or a piece of advice names a field the
//! compiler knows, and the page maps every field to its label exhaustively.

named_enum! {
    /// A field of the plan file, by its dotted path.
    pub enum Field ("Every field, in docs/plan-format.md's order.") {
        Version = "version",
        Model = "model",
        Hardware = "hardware",
        ClusterNodes = "cluster.nodes",
        ClusterDevicesPerNode = "cluster.devices_per_node",
        ClusterScaleUpDomain = "cluster.scale_up_domain",
        Framework = "framework",
        Method = "method",
        MtpLayers = "mtp_layers",
        ParallelTp = "parallel.tp",
        ParallelPp = "parallel.pp",
        ParallelVpp = "parallel.vpp",
        ParallelCp = "parallel.cp",
        ParallelEp = "parallel.ep",
        ParallelEtp = "parallel.etp",
        ParallelCpAlgo = "parallel.cp_algo",
        ParallelSequenceParallel = "parallel.sequence_parallel",
        ParallelZeroStage = "parallel.zero_stage",
        ParallelDistributedOptimizer = "parallel.distributed_optimizer",
        ParallelOffloadOptimizer = "parallel.offload_optimizer",
        ParallelOffloadParams = "parallel.offload_params",
        ParallelOverlapGradReduce = "parallel.overlap_grad_reduce",
        ParallelOverlapParamGather = "parallel.overlap_param_gather",
        ParallelTpCommOverlap = "parallel.tp_comm_overlap",
        ParallelSwapOptimizer = "parallel.swap_optimizer",
        ParallelUnevenLayers = "parallel.uneven_layers",
        ParallelSchedule = "parallel.schedule",
        ParallelAccountEmbeddingLoss = "parallel.account_embedding_loss",
        ParallelGradReduceBf16 = "parallel.grad_reduce_bf16",
        ParallelFp8ParamGather = "parallel.fp8_param_gather",
        ParallelNoSyncAccumulation = "parallel.no_sync_accumulation",
        ParallelPipelineLayout = "parallel.pipeline_layout",
        ParallelFusedKernels = "parallel.fused_kernels",
        ParallelFsdp = "parallel.fsdp",
        MoeDispatcher = "moe.dispatcher",
        MoeGroupedGemm = "moe.grouped_gemm",
        MoePermuteFusion = "moe.permute_fusion",
        MoeOverlapEpComm = "moe.overlap_ep_comm",
        MoeCapacityFactor = "moe.capacity_factor",
        MoePadToCapacity = "moe.pad_to_capacity",
        MoeImbalance = "moe.imbalance",
        RecomputeGranularity = "recompute.granularity",
        RecomputeMethod = "recompute.method",
        RecomputeNumLayers = "recompute.num_layers",
        RecomputeActivationFunction = "recompute.activation_function",
        RecomputeSwapAttention = "recompute.swap_attention",
        RecomputeActivationFunctionLayers = "recompute.activation_function_layers",
        RecomputeLayersRatio = "recompute.layers_ratio",
        RecomputeModules = "recompute.modules",
        RecomputeCpuOffloadLayers = "recompute.cpu_offload_layers",
        RecomputeDistributeSavedActivations = "recompute.distribute_saved_activations",
        BatchMicroBatch = "batch.micro_batch",
        BatchGlobalBatch = "batch.global_batch",
        BatchSeqLen = "batch.seq_len",
        BatchMeanSeqLen = "batch.mean_seq_len",
        Precision = "precision",
        Attention = "attention",
        LigerKernel = "liger_kernel",
        LoraRank = "lora.rank",
        LoraAlpha = "lora.alpha",
        LoraDropout = "lora.dropout",
        LoraDora = "lora.dora",
        LoraTargets = "lora.targets",
        RlRolloutTp = "rl.rollout_tp",
        RlRolloutEp = "rl.rollout_ep",
        RlNSamplesPerPrompt = "rl.n_samples_per_prompt",
        RlMaxPromptLength = "rl.max_prompt_length",
        RlMaxResponseLength = "rl.max_response_length",
        RlMeanPromptLength = "rl.mean_prompt_length",
        RlMeanResponseLength = "rl.mean_response_length",
        RlGpuMemoryUtilization = "rl.gpu_memory_utilization",
        RlMaxNumSeqs = "rl.max_num_seqs",
        RlMiniBatch = "rl.mini_batch",
        RlDynamicBatch = "rl.dynamic_batch",
        RlMaxTokensPerDevice = "rl.max_tokens_per_device",
        RlRemovePadding = "rl.remove_padding",
        RlEnforceEager = "rl.enforce_eager",
        RlMaxModelLen = "rl.max_model_len",
        RlMaxNumBatchedTokens = "rl.max_num_batched_tokens",
        RlBlocking = "rl.blocking",
        RlKlLoss = "rl.kl_loss",
        RlLora = "rl.lora",
        LaunchModelPath = "launch.model_path",
        LaunchDataset = "launch.dataset",
        LaunchOutputDir = "launch.output_dir",
        LaunchMasterAddr = "launch.master_addr",
        LaunchMasterPort = "launch.master_port",
        BudgetTokens = "budget.tokens",
        BudgetDatasetTokens = "budget.dataset_tokens",
        BudgetEpochs = "budget.epochs",
        BudgetPricePerDeviceHour = "budget.price_per_device_hour",
        BudgetPue = "budget.pue",
        OverheadsRuntimeContextMib = "overheads.runtime_context_mib",
        OverheadsCommBufferMib = "overheads.comm_buffer_mib",
        OverheadsAllocatorReserve = "overheads.allocator_reserve",
        CalibrationEfficiencyScale = "calibration.efficiency_scale",
        CalibrationMemoryOffsetMib = "calibration.memory_offset_mib",
        CalibrationRolloutScale = "calibration.rollout_scale",
        HardwareCustomName = "hardware.custom.name",
        HardwareCustomVendor = "hardware.custom.vendor",
        HardwareCustomMemoryGb = "hardware.custom.memory_gb",
        HardwareCustomBf16Tflops = "hardware.custom.bf16_tflops",
        HardwareCustomFp16Tflops = "hardware.custom.fp16_tflops",
        HardwareCustomFp8Tflops = "hardware.custom.fp8_tflops",
        HardwareCustomFp4Tflops = "hardware.custom.fp4_tflops",
        HardwareCustomMemoryTbPerS = "hardware.custom.memory_tb_per_s",
        HardwareCustomIntraNodeGbPerS = "hardware.custom.intra_node_gb_per_s",
        HardwareCustomInterNodeGbitPerS = "hardware.custom.inter_node_gbit_per_s",
        HardwareCustomDevicesPerNode = "hardware.custom.devices_per_node",
        HardwareCustomScaleUpDomain = "hardware.custom.scale_up_domain",
        HardwareCustomBoardPowerW = "hardware.custom.board_power_w",
        HardwareCustomGemmEfficiencyMax = "hardware.custom.gemm_efficiency_max",
    }
}

impl Field {
    /// The dotted path, as plan files and the report write it.
    pub const fn path(self) -> &'static str {
        self.name()
    }

    /// The field at a dotted path; `None` for any other text.
    pub fn from_path(path: &str) -> Option<Field> {
        Field::from_name(path)
    }
}

impl PartialEq<&str> for Field {
    fn eq(&self, other: &&str) -> bool {
        self.path() == *other
    }
}
