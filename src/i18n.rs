//! Every visible string of the page, in English and Chinese.
//!
//! One table: each key has both texts on one line, so a key without a translation does not compile.
//! Keys are snake_case and start with the component that shows them.

use std::fmt;

/// An interface language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    /// English, the default when the browser asks for neither.
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// Both languages, in the order the switch shows them.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The BCP 47 tag for `<html lang>` and for storage.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }

    /// The language for a browser language tag such as `zh-CN`, `zh-Hans-TW` or `en-US`.
    pub fn from_tag(tag: &str) -> Lang {
        match tag.get(..2).map(str::to_ascii_lowercase).as_deref() {
            Some("zh") => Lang::Zh,
            _ => Lang::En,
        }
    }

    /// The other language: what the header's switch changes to.
    pub fn other(self) -> Lang {
        match self {
            Lang::En => Lang::Zh,
            Lang::Zh => Lang::En,
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

macro_rules! texts {
    ($($key:ident => $en:literal, $zh:literal;)*) => {
        /// A visible string of the page.
        #[allow(non_camel_case_types, missing_docs)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Key { $($key),* }

        impl Key {
            /// Every key, for the completeness tests.
            pub const ALL: &[Key] = &[$(Key::$key),*];
        }

        /// The text of `key` in `lang`.
        pub fn t(lang: Lang, key: Key) -> &'static str {
            match (lang, key) {
                $((Lang::En, Key::$key) => $en, (Lang::Zh, Key::$key) => $zh,)*
            }
        }
    };
}

texts! {
    app_title => "trainplan", "trainplan";
    app_tagline => "Plan a large-model training run before you queue it", "在排队之前，先把大模型训练规划清楚";
    header_switch_to => "中文", "English";
    header_switch_label => "Switch the interface to Chinese", "将界面切换为英文";
    part_not_loaded => "This part of the page did not load (the connection dropped, or the page was updated meanwhile): reload the page to see it.", "页面的这一部分未能加载（网络中断，或页面已在此期间更新）：请刷新页面后查看。";
    header_copy_link => "Copy link", "复制链接";
    header_copied => "Link copied", "链接已复制";
    header_copy_failed => "Copy the address from the box", "请从地址框中复制";
    header_link_label => "Link to this plan", "此规划的链接";
    link_error_title => "This link could not be opened.", "无法打开此链接。";
    link_error_fallback => "Showing your last plan instead; it is unchanged.", "已改为显示您上次的规划，它没有被改动。";
    link_error_default => "Showing the default plan instead.", "已改为显示默认规划。";
    link_not_trainplan => "It is not a trainplan link.", "它不是 trainplan 的链接。";
    link_newer => "It was made by a newer version of trainplan ({version}).", "它由更新版本的 trainplan 生成（{version}）。";
    link_corrupt => "It is damaged: cut short or edited.", "链接已损坏：可能被截断或修改。";
    link_invalid_plan => "It holds a plan this version cannot read: {reason}", "其中的规划无法被当前版本读取：{reason}";
    banner_dismiss => "Dismiss", "关闭";
    model_title => "Model", "模型";
    model_search => "Search the catalog", "搜索模型库";
    model_search_placeholder => "qwen 7b, deepseek, mixtral…", "qwen 7b、deepseek、mixtral…";
    model_count => "{shown} of {total} models", "共 {total} 个模型，显示 {shown} 个";
    model_source => "Config source", "配置来源";
    model_import => "Import a config.json", "导入 config.json";
    model_import_hint => "Paste a Hugging Face config.json, or choose the file.", "粘贴 Hugging Face 的 config.json，或选择文件。";
    model_import_apply => "Use this config", "使用此配置";
    model_import_file => "Config file", "配置文件";
    model_imported => "Imported: {name}", "已导入：{name}";
    model_back_to_catalog => "Back to the catalog", "返回模型库";
    model_import_error => "This config cannot be used", "此配置无法使用";
    hw_title => "Hardware", "硬件";
    hw_device => "Device", "设备";
    hw_custom => "Custom device…", "自定义设备…";
    hw_summary => "{memory} GB · {tflops} TFLOPS BF16 · {bandwidth} TB/s", "{memory} GB · BF16 {tflops} TFLOPS · {bandwidth} TB/s";
    hw_no_bf16 => "no BF16: FP16 {tflops} TFLOPS", "不支持 BF16：FP16 {tflops} TFLOPS";
    hw_reported => "Some figures are community reports, not vendor datasheets.", "部分数据来自社区报告，并非厂商规格书。";
    hw_source => "Source", "来源";
    hw_name => "Name", "名称";
    hw_memory_gb => "Memory (GB)", "显存 (GB)";
    hw_bf16_tflops => "Dense BF16 (TFLOPS)", "BF16 稠密算力 (TFLOPS)";
    hw_memory_bw => "Memory bandwidth (TB/s)", "显存带宽 (TB/s)";
    hw_intra => "Intra-node link (GB/s)", "节点内互联 (GB/s)";
    hw_inter => "Network per device (Gb/s)", "每卡网络 (Gb/s)";
    hw_bad_number => "Enter a number", "请输入数字";
    cluster_title => "Cluster", "集群";
    plan_form_nodes => "Nodes", "节点数";
    plan_form_scale_up => "Scale-up domain (devices on one NVLink/HCCS fabric)", "超节点域（同一 NVLink/HCCS 互联的卡数）";
    plan_form_margin => "Memory margin kept free (share of the device)", "预留显存余量（占单卡比例）";
    plan_form_margin_default => "default {frac}", "默认 {frac}";
    plan_form_devices_per_node => "Devices per node", "每节点设备数";
    plan_form_devices_default => "default {n}", "默认 {n}";
    plan_form_n_devices => "Devices in all", "设备总数";
    plan_form_bad_count => "Enter a whole number of at least 1", "请输入不小于 1 的整数";
    training_title => "Training", "训练";
    skip_to_results => "Skip to results", "跳到结果";
    summary_label => "The plan at a glance", "方案概览";
    summary_devices => "{nodes} × {per_node} {device}", "{nodes} 节点 × 每节点 {per_node} 卡 · {device}";
    summary_step => "Step", "单步";
    summary_tokens => "Tokens/s", "每秒 token";
    summary_valid => "Valid: no rule broken", "有效：未违反规则";
    summary_valid_warnings => "Valid: warnings {w}", "有效：{w} 条警告";
    summary_invalid => "Not valid: errors {n}, warnings {w}", "无效：{n} 个错误，{w} 条警告";
    summary_to_findings => "Go to the findings", "查看问题详情";
    knobs_show_all => "Show every knob", "显示全部设置项";
    knobs_hidden => "{n} settings {framework} does not take are hidden.", "已隐藏 {n} 项 {framework} 不支持的设置。";
    knobs_not_framework => "{framework} has no such setting; only {frameworks} do.", "{framework} 没有此设置，仅 {frameworks} 支持。";
    knobs_not_vendor => "Read on Ascend devices only (Ascend's packaged LLaMA-Factory).", "仅在昇腾设备上读取（昇腾打包的 LLaMA-Factory）。";
    knobs_not_method => "{method} does not use this setting; it is for {methods}.", "{method} 用不到此设置，它仅用于{methods}。";
    header_reset => "Reset", "重置";
    header_reset_title => "Start again from the default plan; your imported models and devices stay listed.", "回到默认方案；已导入的模型和自定义设备仍保留在列表中。";
    model_saved => "Your models", "你的模型";
    hw_saved => "Your devices", "你的设备";
    cmp_pin => "Pin this plan to compare", "固定此方案以便对比";
    cmp_title => "Compare plans", "方案对比";
    cmp_make_current => "Make current", "设为当前";
    cmp_make_current_title => "Edit this plan; the current plan takes its place among the pins", "编辑此方案；当前方案改为固定在这一列";
    cmp_unpin => "Unpin", "取消固定";
    cmp_full => "At most {n} plans can be pinned: unpin one first.", "最多只能固定 {n} 个方案，请先取消固定一个。";
    cmp_already => "This plan is pinned already.", "此方案已经固定过了。";
    cmp_link_too_many => "It pins {n} plans; at most {max} can be compared.", "它固定了 {n} 个方案，最多只能对比 {max} 个。";
    cmp_no_plan => "The current plan has an error: fix it to compare it with the pinned ones.", "当前方案有错误，修正后才能与固定的方案对比。";
    cmp_current => "This plan", "当前方案";
    cmp_pin_n => "Pin {n}", "固定 {n}";
    cmp_best => "Best overall: {plan} (a plan that fits and keeps the rules ranks first, then throughput)", "整体最优：{plan}（先看能否放下且不违反规则，再看吞吐）";
    cmp_best_none => "No plan is better overall than every other", "没有哪个方案整体上优于其余所有方案";
    cmp_best_mark => "★ the best value of the plans (a speed counts only for plans that fit and keep the rules)", "★ 各方案中该项最优（速度只在能放下且不违反规则的方案之间比较）";
    cmp_devices => "Devices", "卡数";
    cmp_peak => "Peak memory per device", "单卡峰值显存";
    cmp_fits => "Fits in memory", "显存放得下";
    value_on => "on", "开";
    value_off => "off", "关";
    cmp_yes => "yes", "是";
    cmp_no => "no", "否";
    cmp_step => "Step time", "单步时间";
    cmp_tokens => "Tokens per second", "每秒 token 数";
    cmp_mfu => "MFU", "MFU（模型算力利用率）";
    cmp_errors => "Rules broken (errors)", "违反的规则（错误）";
    cmp_warnings => "Warnings", "警告";
    cmp_memory => "Memory per pipeline stage", "各流水线阶段的显存";
    cmp_chart_label => "Peak memory of each pipeline stage, one bar per plan, against device memory", "各流水线阶段的峰值显存，每个方案一根柱子，对照设备显存";
    cmp_capacity => "device memory {bytes}", "设备显存 {bytes}";
    cmp_stage_n => "Stage {n}", "阶段 {n}";
    cmp_stage => "Stage", "阶段";
    cmp_stage_readout => "Stage {n}: {bars}", "阶段 {n}：{bars}";
    cmp_over_usable => "{bytes}, above usable", "{bytes}，超出可用显存";
    cmp_stage_axis => "Bars grouped by pipeline stage (0 = first)", "柱子按流水线阶段分组（0 为第一阶段）";
    cmp_differences => "Settings that differ", "不同的设置";
    cmp_setting => "Setting", "设置项";
    cmp_custom => "(custom)", "（自定义）";
    cmp_default => "default", "默认";
    cmp_distinct => "Findings not every plan has", "并非每个方案都有的提示";
    export_title => "Download the report: the engine's JSON (as the command line prints it), or CSV of the headline figures and memory per stage", "下载报告：引擎输出的 JSON（与命令行一致），或包含关键指标和各阶段显存的 CSV";
    export_report_json => "Report as JSON", "导出报告（JSON）";
    export_report_csv => "Report as CSV", "导出报告（CSV）";
    search_export_title => "Download every plan found, with its settings and figures", "下载搜索到的全部方案及其设置和指标";
    search_export_csv => "Results as CSV", "导出结果（CSV）";
    search_export_json => "Results as JSON", "导出结果（JSON）";
    plan_form_bad_whole => "Enter a whole number, or leave empty for the automatic value", "请输入整数，留空则自动取值";
    plan_form_bad_fraction => "Enter a fraction above 0 and at most 1", "请输入大于 0、不超过 1 的小数";
    plan_form_bad_rate => "Enter GB/s above 0 and at most 1000, or leave it empty for the default", "请输入大于 0、不超过 1000 的 GB/s，留空则用默认值";
    plan_form_bad_factor => "Enter a factor above 0 and at most 64 (the imbalance at least 1)", "请输入大于 0、不超过 64 的因子（不均衡至少为 1）";
    placeholder_auto => "auto", "自动";
    placeholder_all => "all", "全部";
    rl_title => "RL: rollout and update", "强化学习：推理与更新";
    rl_rollout_tp => "Rollout TP", "推理 TP";
    rl_rollout_ep => "Rollout EP", "推理 EP";
    rl_samples => "Responses per prompt (n)", "每条 prompt 的回答数（n）";
    rl_prompt_len => "Max prompt length", "最大 prompt 长度";
    rl_response_len => "Max response length", "最大回答长度";
    rl_mean_prompt_len => "Mean prompt length (prompt_length/mean)", "平均 prompt 长度（prompt_length/mean）";
    rl_mean_response_len => "Mean response length (response_length/mean)", "平均回答长度（response_length/mean）";
    placeholder_max => "max", "最长";
    placeholder_text_only => "none (text)", "无（纯文本）";
    rl_mini_batch => "Mini-batch (prompts per update)", "mini-batch（每次更新的 prompt 数）";
    rl_token_budget => "Token budget (dynamic batch)", "token 上限（动态 batch）";
    rl_token_budget_device => "Token budget per device (ppo_max_token_len_per_gpu)", "单卡 token 上限（ppo_max_token_len_per_gpu）";
    rl_token_budget_row => "Token budget per packed row (max_packing_token_size)", "每个打包行的 token 上限（max_packing_token_size）";
    rl_gpu_mem => "vLLM memory share (gpu_memory_utilization)", "vLLM 显存占比（gpu_memory_utilization）";
    rl_max_num_seqs => "vLLM sequences at once (max_num_seqs)", "vLLM 并发序列数（max_num_seqs）";
    rl_log_prob_micro => "Log-prob micro-batch", "log-prob 微批";
    rl_log_prob_tokens => "Log-prob tokens, packed", "log-prob 打包 token 数";
    rl_log_prob_micro_device => "Log-prob micro-batch per device (log_prob_micro_batch_size_per_gpu)", "log-prob 每卡微批（log_prob_micro_batch_size_per_gpu）";
    rl_log_prob_tokens_device => "Log-prob tokens per device, packed (log_prob_max_token_len_per_gpu)", "log-prob 每卡打包 token 数（log_prob_max_token_len_per_gpu）";
    rl_log_prob_micro_forward => "Log-prob micro-batch (actor_/ref_forward_micro_batch_size)", "log-prob 微批（actor_/ref_forward_micro_batch_size）";
    rl_log_prob_tokens_row => "Log-prob tokens per packed row (actor_/ref_max_packing_token_size)", "log-prob 每个打包行的 token 数（actor_/ref_max_packing_token_size）";
    rl_max_model_len => "vLLM longest sequence (max_model_len)", "vLLM 最大序列长度（max_model_len）";
    rl_batched_tokens => "vLLM tokens per step (max_num_batched_tokens)", "vLLM 每步 token 数（max_num_batched_tokens）";
    rl_dynamic_batch => "Dynamic batch (use_dynamic_bsz)", "动态 batch（use_dynamic_bsz）";
    rl_remove_padding => "Remove padding (use_remove_padding)", "去除 padding（use_remove_padding）";
    rl_enforce_eager => "vLLM eager mode (enforce_eager)", "vLLM eager 模式（enforce_eager）";
    rl_blocking => "Blocking phases (MindSpeed-RL blocking)", "阶段阻塞执行（MindSpeed-RL blocking）";
    rl_kl_loss => "KL loss to a reference model (VeRL use_kl_loss; off: no reference, as DAPO)", "KL 损失与参考模型（VeRL use_kl_loss；关闭则无参考模型，如 DAPO）";
    rl_lora => "Actor trains LoRA adapters (rank and targets from LoRA)", "Actor 训练 LoRA 适配器（秩与目标模块取自 LoRA 设置）";
    rc_act_fn_layers => "Activation-function recompute layers", "激活函数重计算层数";
    rc_cpu_offload_layers => "Layers offloading activations to CPU (Megatron)", "激活值卸载到 CPU 的层数（Megatron）";
    rc_distribute => "Split checkpoints over TP (full recompute, no SP)", "检查点切分到 TP 各卡（完全重计算、无 SP）";
    rc_modules_mlp => "Selective: recompute the MLP (Megatron --recompute-modules mlp)", "选择性：重计算 MLP（Megatron --recompute-modules mlp）";
    rc_modules_layernorm => "Selective: recompute the norms (layernorm)", "选择性：重计算归一化层（layernorm）";
    rc_modules_moe => "Selective: recompute the MoE layer (moe)", "选择性：重计算 MoE 层（moe）";
    rc_layers_ratio => "Recompute layers ratio (Ascend LLaMA-Factory)", "重计算层比例（昇腾 LLaMA-Factory）";
    par_swap_opt => "Swap optimizer to host (MindSpeed)", "优化器换出到主机（MindSpeed）";
    par_fused => "Fused RMSNorm, SwiGLU and RoPE kernels (MindSpeed)", "RMSNorm、SwiGLU、RoPE 融合算子（MindSpeed）";
    par_grad_bf16 => "Keep and reduce gradients in bf16 (Megatron --grad-reduce-in-bf16)", "梯度以 bf16 保存和归约（Megatron --grad-reduce-in-bf16）";
    par_offload_policy => "FSDP2 CPU offload: parameters, gradients and AdamW on the host (VeRL offload_policy)", "FSDP2 CPU 卸载：参数、梯度与 AdamW 放在主机（VeRL offload_policy）";
    par_zero_hpz => "ZeRO++ hpZ group, ranks (zero_hpz_partition_size)", "ZeRO++ hpZ 分组卡数（zero_hpz_partition_size）";
    par_zero_qw => "ZeRO++ qwZ: gather parameters in int8 (zero_quantized_weights)", "ZeRO++ qwZ：参数以 int8 收集（zero_quantized_weights）";
    par_zero_qg => "ZeRO++ qgZ: average gradients in int4 across nodes (zero_quantized_gradients)", "ZeRO++ qgZ：跨节点梯度以 int4 平均（zero_quantized_gradients）";
    par_no_sync => "Reduce gradients once per update, held unsharded until then (VeRL use_no_sync_for_gradient_accumulation)", "每次更新只归约一次梯度，此前梯度不切分（VeRL use_no_sync_for_gradient_accumulation）";
    par_fp8_params => "Keep linear weights in fp8 and gather them in fp8 (Megatron --fp8-param-gather)", "线性层权重以 fp8 保存并以 fp8 收集（Megatron --fp8-param-gather）";
    par_account => "Count the embedding and the loss as layers in the pipeline split (Megatron)", "流水线切分时把词嵌入和损失各算作一层（Megatron）";
    par_layout => "Pipeline layout (Megatron: E embedding, t layer, m MTP, L loss, | between stages)", "流水线布局（Megatron：E 词嵌入，t 层，m MTP，L 损失，| 分隔各段）";
    par_layout_bad => "Only E, t, m, L, |, commas and (…)*n / x*n repeats", "只能使用 E、t、m、L、|、逗号和 (…)*n / x*n 重复";
    mtp_layers => "MTP layers (multi-token prediction)", "MTP 层数（多 token 预测）";
    moe_dispatcher => "MoE token dispatcher (--moe-token-dispatcher-type)", "MoE 令牌分发器（--moe-token-dispatcher-type）";
    moe_grouped_gemm => "Grouped GEMM over the local experts", "本地专家分组 GEMM";
    moe_permute_fusion => "Fused token permutation", "融合令牌重排";
    moe_overlap_ep_comm => "Overlap the expert-parallel all-to-all", "专家并行 all-to-all 通信掩盖";
    moe_capacity => "Expert capacity factor (--moe-expert-capacity-factor)", "专家容量因子（--moe-expert-capacity-factor）";
    moe_dropless => "none (dropless)", "无（不丢弃令牌）";
    moe_imbalance => "Load imbalance (busiest device ÷ mean)", "负载不均衡（最忙设备 ÷ 平均）";
    moe_pad_to_capacity => "Pad expert inputs to capacity", "专家输入按容量补齐";
    par_uneven => "Uneven pipeline stages (first/last take the rest)", "非均匀流水线划分（首尾阶段承担余数层）";
    training_framework => "Framework", "框架";
    training_method => "Method", "方法";
    training_precision => "Precision (fp8, MXFP8 and NVFP4: the linear layers only)", "精度（fp8、MXFP8、NVFP4 仅用于线性层）";
    training_lora_rank => "LoRA rank", "LoRA 秩";
    training_freeze_layers => "Last layers trained", "训练最后几层";
    training_lora_dropout => "LoRA dropout", "LoRA dropout 比例";
    training_dora => "DoRA (weight-decomposed LoRA)", "DoRA（权重分解的 LoRA）";
    training_galore => "GaLore: gradients projected to low rank (use_galore)", "GaLore：梯度低秩投影（use_galore）";
    training_apollo => "APOLLO: AdamW's scaling from a random low-rank projection (use_apollo)", "APOLLO：由随机低秩投影估计 AdamW 的缩放（use_apollo）";
    training_low_rank_rank => "Projection rank (galore_rank, apollo_rank)", "投影秩（galore_rank、apollo_rank）";
    training_low_rank_layerwise => "Step layer by layer, gradients freed (galore_layerwise, apollo_layerwise)", "逐层更新并释放梯度（galore_layerwise、apollo_layerwise）";
    training_optimizer => "Optimizer", "优化器";
    training_adam_8bit => "8-bit AdamW (bitsandbytes, optim: adamw_8bit)", "8 位 AdamW（bitsandbytes，optim: adamw_8bit）";
    training_pure_bf16 => "pure_bf16: weights and optimizer states in bf16", "pure_bf16：权重与优化器状态均为 bf16";
    method_pretrain => "Pre-training", "预训练";
    method_sft_full => "Full SFT", "全参数 SFT";
    method_lora => "LoRA SFT", "LoRA 微调";
    method_qlora => "QLoRA SFT", "QLoRA 微调";
    method_freeze => "Freeze-tuning SFT", "冻结微调";
    method_dpo => "DPO", "DPO 偏好优化";
    method_dpo_lora => "LoRA DPO", "LoRA DPO 偏好优化";
    method_grpo => "GRPO (RL)", "GRPO 强化学习";
    method_ppo => "PPO (RL)", "PPO 强化学习";
    params_title => "Parameters", "参数量";
    params_total => "Total (exact)", "总参数量（精确）";
    params_active => "Active per token", "每 token 激活";
    params_trainable => "Trainable", "可训练";
    params_embedding => "Embedding", "词嵌入";
    params_attention => "Attention", "注意力";
    params_mlp => "MLP", "MLP";
    params_experts => "Routed experts", "路由专家";
    params_shared_experts => "Shared experts", "共享专家";
    params_router => "Routers", "路由器";
    params_norms => "Norms", "归一化层";
    params_head => "Output head", "输出层";
    params_head_tied => "tied to the embedding", "与词嵌入共享权重";
    params_mtp => "MTP layers, counted apart", "MTP 层（另计）";
    params_vision => "Vision encoder and projector, counted apart", "视觉编码器与投影层（另计）";
    params_component => "Component", "组成部分";
    params_count => "Parameters", "参数量";
    params_share => "Share", "占比";
    params_layers => "Layers", "解码层";
    params_dense_layer => "Dense layer", "稠密层";
    params_moe_layer => "MoE layer", "MoE 层";
    params_moe_linear_layer => "MoE layer, Gated DeltaNet", "MoE 层（Gated DeltaNet）";
    params_dense_linear_layer => "Dense layer, Gated DeltaNet", "稠密层（Gated DeltaNet）";
    params_each => "{n} × {params}", "{n} 层 × {params}";
    weights_title => "Weights per device", "每卡权重显存";
    weights_zero3 => "bf16 weights under ZeRO-3", "ZeRO-3 下的 bf16 权重";
    weights_explain => "Every parameter is sharded over all devices, each tensor padded to a multiple of the device count as DeepSpeed does.", "每个参数都切分到全部设备上；与 DeepSpeed 一致，每个张量先补齐到设备数的整数倍。";
    weights_bytes => "bytes", "字节";
    weights_of_capacity => "of {capacity} on the device", "占单卡 {capacity} 的比例";
    error_title => "This plan cannot be evaluated", "无法计算此规划";
    cfg_not_json => "config.json is not valid JSON ({detail}).", "config.json 不是有效的 JSON（{detail}）。";
    cfg_not_object => "config.json must be a JSON object.", "config.json 必须是一个 JSON 对象。";
    cfg_missing => "config.json has no \"{key}\".", "config.json 缺少 \"{key}\"。";
    cfg_wrong_type => "\"{key}\" must be {expected}.", "\"{key}\" 必须是{expected}。";
    cfg_out_of_range => "\"{key}\" is {value}; it must be from {min} to {max}.", "\"{key}\" 为 {value}，应在 {min} 到 {max} 之间。";
    cfg_inconsistent => "The config contradicts itself: {detail}.", "配置自相矛盾：{detail}。";
    cfg_too_large => "The model would have more than 10^15 parameters.", "模型参数将超过 10^15 个。";
    expected_whole_number => "a whole number", "整数";
    expected_string => "a string", "字符串";
    expected_bool => "true or false", "true 或 false";
    expected_layer_list => "a list of layer indices", "层序号列表";
    mem_title => "Memory per device", "每卡显存";
    mem_weights => "Weights", "权重";
    mem_gradients => "Gradients", "梯度";
    mem_optimizer => "Optimizer states", "优化器状态";
    mem_activations => "Activations", "激活值";
    mem_logits => "Logits and loss", "Logits 与损失";
    mem_buffers => "Comm buffers", "通信缓冲区";
    mem_overhead => "Runtime", "运行时开销";
    mem_total => "Total", "合计";
    mem_stage => "Stage {n}", "阶段 {n}";
    mem_stages_caption => "Per device by pipeline stage, GiB", "每卡显存，按流水线阶段，单位 GiB";
    mem_capacity_line => "capacity {bytes}", "容量 {bytes}";
    mem_usable_line => "usable {bytes}", "可用 {bytes}";
    mem_fits => "Memory fits: peak {peak} of {usable} usable", "显存放得下：峰值 {peak}，可用 {usable}";
    mem_does_not_fit => "Memory does not fit: peak {peak}, only {usable} usable", "显存放不下：峰值 {peak}，可用仅 {usable}";
    mem_moment_forward => "Peak at the loss in the forward pass: 16-bit copies of the weights for autocast, saved activations and the logits; no gradients yet.", "峰值出现在前向的损失处：autocast 的 16 位权重副本、保存的激活和 logits；此时尚无梯度。";
    mem_moment_loss_backward => "Peak in the loss's backward: saved activations, the saved log-softmax and its gradients; no weight gradients yet.", "峰值出现在损失的反向：保存的激活、保存的 log-softmax 及其梯度；此时尚无权重梯度。";
    mem_moment_layer_backward => "Peak in the last layer's backward: saved activations and that layer recomputed, with the hidden state's gradient from Liger's fused loss or DoRA's weight norms; no logits.", "峰值出现在最后一层的反向：保存的激活与重算的该层，另有 Liger 融合损失留下的隐藏状态梯度或 DoRA 的权重范数计算；不含 logits。";
    mem_moment_backward_end => "Peak at the end of the backward pass: every gradient, and the first layer's activations.", "峰值出现在反向结束时：全部梯度，以及第一层的激活。";
    mem_host => "Host memory per node for offloaded states: {bytes}", "卸载所需的每节点主机内存：{bytes}";
    mem_nvme => "NVMe per node for swapped states: {bytes}", "换出到 NVMe 的状态，每节点：{bytes}";
    mem_reference => "Reference model", "参考模型";
    mem_critic => "Critic", "Critic 模型";
    mem_engine => "Rollout engine", "推理引擎";
    mem_peak_label => "{what} (peak)", "{what}（峰值）";
    mem_peak_phase => "— the peak", "— 峰值";
    mem_phase_rollout => "Rollout phase", "生成（rollout）阶段";
    mem_phase_log_prob => "Log-prob phase", "计算 log-prob 阶段";
    mem_phase_update => "Update phase", "参数更新阶段";
    par_title => "Parallelism and memory", "并行与显存";
    par_tp => "TP (tensor)", "TP（张量并行）";
    par_pp => "PP (pipeline)", "PP（流水线并行）";
    par_vpp => "VPP chunks", "VPP 虚拟阶段数";
    par_cp => "CP (context)", "CP（上下文并行）";
    par_cp_algo => "CP exchange", "CP 通信方式";
    par_cp_algo_ring => "ring (P2P, overlapped with attention)", "环形（P2P，与注意力计算重叠）";
    par_cp_algo_alltoall => "all-to-all (Ulysses, splits the heads)", "all-to-all（Ulysses，按注意力头切分）";
    par_ep => "EP (experts)", "EP（专家并行）";
    par_zero => "ZeRO stage", "ZeRO 阶段";
    par_dist_opt => "Distributed optimizer", "分布式优化器";
    par_sp => "Sequence parallel", "序列并行";
    par_offload_opt => "Offload optimizer states", "卸载优化器状态";
    par_offload_params => "Offload parameters", "卸载参数";
    par_offload_device => "Offload to", "卸载到";
    par_offload_device_cpu => "host memory", "主机内存";
    par_offload_device_nvme => "NVMe (ZeRO-Infinity)", "NVMe（ZeRO-Infinity）";
    par_nvme_read => "NVMe read per node, GB/s", "每节点 NVMe 读带宽（GB/s）";
    par_nvme_write => "NVMe write per node, GB/s", "每节点 NVMe 写带宽（GB/s）";
    batch_micro => "Micro-batch", "微批大小";
    batch_global => "Global batch", "全局批大小";
    batch_seq => "Sequence length", "序列长度";
    batch_mean_seq => "Mean sample length", "平均样本长度";
    batch_image_tokens => "Image tokens per sequence", "每条序列的图像 token 数";
    rc_granularity => "Recompute", "重计算";
    rc_none => "None", "不重计算";
    rc_selective => "Selective", "选择性重计算";
    rc_full => "Full (gradient checkpointing)", "完全重计算（梯度检查点）";
    rc_layers => "Layers per checkpoint", "每组重计算层数";
    rc_attention => "Attention kernel", "注意力实现";
    rc_liger => "Liger kernels: fused RMSNorm, SwiGLU, RoPE and cross-entropy (enable_liger_kernel, use_liger)", "Liger 算子：融合 RMSNorm、SwiGLU、RoPE 与交叉熵（enable_liger_kernel、use_liger）";
    rc_act_fn => "Recompute activation function (MindSpeed)", "激活函数重计算（MindSpeed）";
    rc_swap_attn => "Swap attention (MindSpeed)", "Swap Attention（MindSpeed）";
    mem_rollout => "Rollout engine: {engine} reserved, weights {weights}, KV cache {kv} (a full batch needs {needed})", "推理引擎：预留 {engine}，权重 {weights}，KV 缓存 {kv}（满批需要 {needed}）";
    mem_rollout_short => "The KV cache holds fewer than max_num_seqs full sequences: the engine will decode fewer at once.", "KV 缓存放不下 max_num_seqs 条完整序列：推理引擎将减少并发解码数。";
    time_title => "Speed", "速度";
    time_step => "Step time", "单步时间";
    time_tokens => "Tokens per second", "每秒 token 数";
    time_per_device => "{n} per device", "每卡 {n}";
    time_mfu => "MFU (model FLOPs)", "MFU（模型 FLOPs 利用率）";
    time_hfu => "HFU (with recompute)", "HFU（含重计算）";
    time_mfu_how => "The model's FLOPs as Megatron-LM counts them (the attention's causal half), over the devices' dense peak", "模型 FLOPs 按 Megatron-LM 的计法（注意力只计因果掩码的一半），除以设备稠密峰值";
    time_hfu_how => "The FLOPs the hardware runs: recomputation too, and the attention as its kernel computes it", "硬件实际执行的 FLOPs：含重计算，注意力按其算子实际计算";
    time_days => "Days per trillion tokens", "训练 1T token 所需天数";
    bd_compute => "Compute", "计算";
    bd_memory => "Memory-bound kernels", "访存受限算子";
    bd_recompute => "Recompute", "重计算";
    bd_tp => "TP communication", "TP 通信";
    bd_cp => "CP communication", "CP 通信";
    bd_ep => "EP all-to-all", "EP all-to-all 通信";
    bd_pp => "PP send/receive", "PP 点对点通信";
    bd_bubble => "Pipeline bubble", "流水线气泡";
    bd_busiest_note => "The busiest pipeline stage's time: its idle time is the bubble. The other stages wait longer where they hold less work; the schedule's title gives all stages' average.", "以上为最忙流水线阶段的时间，其空闲即气泡；其余阶段工作更少时等待更久，流水线调度标题给出各阶段的平均空闲。";
    bd_dp => "DP communication", "数据并行通信";
    bd_optimizer => "Optimizer step", "优化器更新";
    bd_offload => "Offload transfers", "卸载传输";
    gantt_title => "Pipeline schedule: {name}, stages idle {bubble} of the pipeline's time on average", "流水线调度：{name}，各阶段平均空闲 {bubble} 的流水线时间";
    sched_interleaved => "interleaved 1F1B", "交错式 1F1B（interleaved）";
    gantt_forward => "Forward", "前向";
    gantt_backward => "Backward", "反向";
    gantt_weight => "Weight gradients", "权重梯度";
    cal_title => "Calibrate from a measured run", "用实测结果校准";
    cal_hint => "Enter what one real run of this plan measured; the fitted factors then apply to every plan you make.", "填入此规划一次真实运行的测量值；拟合出的系数将用于之后的所有规划。";
    cal_step => "Measured step time (s)", "实测单步时间（秒）";
    cal_peak => "Measured peak memory (GiB, optional)", "实测显存峰值（GiB，可选）";
    cal_fit => "Fit", "拟合";
    cal_reset => "Reset", "重置";
    cal_current => "In effect: efficiency × {scale}, memory {offset}", "当前生效：效率 × {scale}，显存 {offset}";
    cal_none => "No calibration: figures as modelled.", "未校准：使用模型估计值。";
    cal_rollout => "Generation time factor (RL)", "生成时间系数（RL）";
    cal_current_rollout => "; generation × {scale} (from timing_s/gen)", "；生成时间 × {scale}（按 timing_s/gen）";
    cal_bad => "Enter a positive number", "请输入正数";
    bd_rollout => "Rollout generation", "生成（rollout）";
    bd_log_prob => "Log-prob passes", "log-prob 计算";
    bd_critic => "PPO critic", "PPO critic（估值与更新）";
    bd_weight_sync => "Weights to the rollout engine", "权重同步到推理引擎";
    par_fsdp => "FSDP (Megatron FSDP sharding or torch FSDP2; VeRL: FSDP1 or FSDP2)", "FSDP（Megatron FSDP 切分策略或 torch FSDP2；VeRL：FSDP1 或 FSDP2）";
    par_fsdp_none => "none (DDP / distributed optimizer; VeRL: FSDP1)", "不用（DDP / 分布式优化器；VeRL：FSDP1）";
    advice_grad_reduce_bf16 => "Keep and reduce gradients in bf16 (--grad-reduce-in-bf16).", "梯度以 bf16 保存和归约（--grad-reduce-in-bf16）。";
    advice_fp8_param_gather => "Keep the linear weights in fp8 alone (--fp8-param-gather).", "线性层权重只以 fp8 保存（--fp8-param-gather）。";
    advice_megatron_fsdp => "Megatron FSDP (optim_grads_params): shard parameters and gradients too, gathered a layer at a time.", "Megatron FSDP（optim_grads_params）：参数和梯度也切分，逐层聚合。";
    advice_why_grad_reduce_bf16 => "Megatron keeps fp32 main gradients by default; in bf16 they take 2 bytes a parameter instead of 4 and the data-parallel reduction moves half the bytes. Megatron-LM's own fp8 example runs so; the sums lose fp32's precision.", "Megatron 默认以 fp32 保存主梯度；改为 bf16 后每个参数占 2 字节而非 4 字节，数据并行归约的数据量减半。Megatron-LM 自带的 fp8 示例就这样运行；代价是累加失去 fp32 的精度。";
    advice_why_fp8_param_gather => "Transformer Engine then keeps each linear weight as fp8 data alone, without the bf16 copy beside its fp8 copies: 2 bytes a linear parameter fewer; the distributed optimizer keeps the fp32 master weights.", "Transformer Engine 此时只以 fp8 数据保存线性层权重，不再在 fp8 副本旁保留 bf16 副本：每个线性层参数少 2 字节；fp32 主权重仍由分布式优化器保存。";
    advice_zeropp => "Turn on DeepSpeed ZeRO++: hpZ over each node, int8 weights, int4 gradients.", "开启 DeepSpeed ZeRO++：按节点 hpZ、int8 权重、int4 梯度。";
    advice_why_zeropp => "Across nodes, ZeRO-3's gathers and gradient reduction outlast the compute here. hpZ keeps a second parameter shard per node (more memory) so the backward gathers stay in the node; qwZ gathers in int8, qgZ averages gradients in int4.", "此方案中 ZeRO-3 跨节点的参数收集与梯度归约比计算更久。hpZ 在每个节点再存一份参数分片（多占显存），使反向收集留在节点内；qwZ 以 int8 收集参数，qgZ 以 int4 平均梯度。";
    advice_no_sync => "Reduce gradients once per update (use_no_sync_for_gradient_accumulation).", "每次更新只归约一次梯度（use_no_sync_for_gradient_accumulation）。";
    advice_verl_fsdp2 => "Run VeRL's FSDP engine on FSDP2 (strategy: fsdp2).", "VeRL 的 FSDP 引擎改用 FSDP2（strategy: fsdp2）。";
    advice_why_verl_fsdp2 => "FSDP2 shards an untied embedding as a unit of its own and frees its gathered copy after the forward, where FSDP1's root unit keeps it until the backward; the traffic is the same.", "FSDP2 把未绑定的词嵌入单独作为一个切分单元，前向结束后即释放聚合出的副本；FSDP1 的根单元则一直保留到反向。通信量不变。";
    advice_log_prob_smaller => "Score the log-probabilities in smaller micro-batches.", "log-prob 前向改用更小的微批。";
    advice_why_log_prob_smaller => "The old log-probabilities' and the reference's forwards hold the logits of all they score at once: the largest micro-batch (or packed row) that fits, never below the update's, lowers the phase's peak for a few more, shorter forwards.", "旧策略与参考模型的 log-prob 前向一次打分多少序列（或打包 token），就要同时保存它们全部的 logits：取放得下的最大微批（或打包行，不小于更新时的），降低该阶段的峰值，代价是前向次数多一些、每次更短。";
    advice_why_no_sync => "VeRL's FSDP engine reduce-scatters the gradients after every micro-batch by default; deferring it to the update's last micro-batch saves that traffic, but each device holds the whole model's gradients unsharded until then.", "VeRL 的 FSDP 引擎默认每个 micro-batch 反向后都做梯度 reduce-scatter；推迟到该次更新的最后一个 micro-batch 可省下这些通信，代价是在此之前每卡都保存整份未切分的梯度。";
    advice_why_megatron_fsdp => "Sharding parameters and gradients over the data-parallel ranks leaves each device 1/DP of the model states plus two layers in flight, at the cost of gathering each layer's weights in forward and backward.", "把参数和梯度也按数据并行切分，每卡只留 1/DP 的模型状态和两层在途权重，代价是前向和反向都要逐层聚合权重。";
    par_schedule => "Pipeline schedule", "流水线调度";
    par_schedule_auto => "auto (1F1B, interleaved with VPP)", "自动（1F1B，有 VPP 时交错）";
    par_overlap_grad => "Overlap gradient reduction", "梯度规约与计算重叠";
    par_overlap_param => "Overlap parameter gather", "参数聚合与计算重叠";
    par_tp_overlap => "Overlap TP communication (TE / Ascend CoC)", "TP 通信与计算重叠（TE / Ascend CoC）";
    findings_title => "What the frameworks will say", "框架会提示的问题";
    findings_none => "No framework rule is broken.", "没有违反任何框架规则。";
    findings_make_valid => "Make it valid (nearest plan that fits and keeps every rule)", "一键修正为合规（最近的、放得下且符合全部规则的方案）";
    findings_no_valid => "The search finds no plan that fits and keeps every rule on this cluster: add devices or pick a smaller model.", "在此集群上搜索不到既放得下又符合全部规则的方案：请增加卡数或换更小的模型。";
    findings_apply => "Apply: {field} = {value}", "应用：{field} = {value}";
    advice_title => "Tuning advice", "调优建议";
    launch_title => "Files to launch", "启动文件";
    launch_model_path => "Model path", "模型路径";
    launch_model_path_hint => "empty: the model's Hugging Face id", "默认：HF 模型 id";
    launch_dataset => "Dataset", "数据集";
    launch_dataset_hint => "empty: the framework's demo data", "默认：示例数据";
    launch_output_dir => "Output directory", "输出目录";
    launch_output_dir_hint => "empty: saves/<model>/<stage>", "默认：saves/<模型>/…";
    launch_master_addr => "Node 0 address", "主节点地址";
    launch_master_addr_hint => "empty: $MASTER_ADDR, else localhost", "默认：$MASTER_ADDR";
    launch_copy => "Copy", "复制";
    launch_import_title => "Import a launch file", "导入已有的启动文件";
    launch_import_hint => "Paste a Megatron-LM or MindSpeed-LLM script, a LLaMA-Factory YAML, a DeepSpeed JSON, VeRL overrides or a MindSpeed-RL YAML: the plan becomes what it says, every other setting at its default; the hardware stays, and the cluster where the file does not give it.", "粘贴 Megatron-LM 或 MindSpeed-LLM 脚本、LLaMA-Factory YAML、DeepSpeed JSON、VeRL 覆盖参数或 MindSpeed-RL YAML：方案改为文件所写的设置，其余设置恢复默认；硬件保持不变，文件未给出集群时集群也保持不变。";
    launch_import_apply => "Read into the plan", "读入方案";
    launch_import_ok => "Read: every key understood.", "已读入：所有参数均已识别。";
    launch_import_unknown => "Read. Not used, left out of the plan (no place for them, another value than the files written from it, or set outside the file): {keys}", "已读入。未使用、未纳入方案（方案中没有对应设置、与据此生成的文件取值不同，或其值在文件之外设置）：{keys}";
    launch_import_refused => "Its framework would refuse: {flags}", "其框架本身会拒绝：{flags}";
    launch_import_packing_roles => "As given, it runs otherwise: max_packing_token_size {tokens} reaches MindSpeed-RL's critic alone: the actor's update, its log-probabilities and the reference pack {default} tokens each unless update_, actor_ and ref_max_packing_token_size are set; the plan takes {tokens} for them, and its launch file sets each.",
        "按原样运行会不同：max_packing_token_size {tokens} 在 MindSpeed-RL 中只作用于 critic；未设置 update_、actor_ 和 ref_max_packing_token_size 时，actor 的更新、其 log-prob 计算和 reference 各按 {default} 个 token 打包。计划按 {tokens} 取值，其生成的启动文件会逐项写明。";
    launch_import_reading => "Reading…", "正在读取…";
    launch_import_no_reader => "The launch-file reader could not be loaded ({why}): reload the page and read again.", "无法加载启动文件读取模块（{why}）：请刷新页面后重新读入。";
    launch_import_model_named => "Model: {model}, named by its Hugging Face id.", "模型：{model}，由其 Hugging Face ID 确定。";
    launch_import_model_matched => "Model: {model}, matched from the directory {path}.", "模型：{model}，由目录 {path} 匹配。";
    launch_import_model_shape => "Model: {model}, recognised from the architecture flags.", "模型：{model}，由架构参数识别。";
    launch_import_model_built => "Model: {model}, built from the architecture flags (no catalog model has them).", "模型：{model}，按架构参数构建（目录中没有相同结构的模型）。";
    launch_import_model_unbuilt => "Model not identified: no family here builds the model the architecture flags describe ({flags}); kept {model} — pick the model, or import its config.json.", "未能识别模型：架构参数描述的模型（{flags}）没有可构建的模型族；保留了 {model}——请选择模型，或导入其 config.json。";
    launch_import_model_unknown => "Model not identified: kept {model} — pick the model.", "未能识别模型：保留了 {model}——请选择模型。";
    import_unrecognized => "Not a launch file trainplan reads: paste a Megatron-LM or MindSpeed-LLM script, a LLaMA-Factory YAML, a DeepSpeed JSON, VeRL overrides or a MindSpeed-RL YAML.", "不是 trainplan 能读取的启动文件：请粘贴 Megatron-LM 或 MindSpeed-LLM 脚本、LLaMA-Factory YAML、DeepSpeed JSON、VeRL 覆盖参数或 MindSpeed-RL YAML。";
    import_bad_value => "{key} must be {expected}.", "{key} 必须{expected}。";
    import_expected_whole_number => "a whole number", "为整数";
    import_expected_positive => "a positive whole number", "为正整数";
    import_expected_value => "followed by a value", "后接一个值";
    import_expected_recompute => "full or selective", "为 full 或 selective";
    import_expected_schedule => "dualpipev", "为 dualpipev";
    import_expected_sharding => "optim, optim_grads or optim_grads_params", "为 optim、optim_grads 或 optim_grads_params";
    import_expected_attention_backend => "flash, fused, unfused, local or auto", "为 flash、fused、unfused、local 或 auto";
    import_expected_fraction => "a number in (0, 1]", "为 (0, 1] 内的数";
    import_expected_dropout => "a number from 0 to 0.9", "为 0 到 0.9 之间的数";
    import_expected_zero_stage => "0, 1, 2 or 3", "为 0、1、2 或 3";
    import_expected_dispatcher => "allgather, alltoall or flex", "为 allgather、alltoall 或 flex";
    import_expected_number => "a number", "为数字";
    flag_unknown => "{flag} is not a flag of {framework}", "{framework} 没有 {flag} 这个参数";
    flag_switch_with_value => "{flag} takes no value, given {value}", "{flag} 不接受值，却给了 {value}";
    flag_value_count => "{flag} takes {expected}, given {given}", "{flag} 应接{expected}，却给了 {given} 个";
    flag_bad_type => "{flag} takes {type}, given {value}", "{flag} 应为{type}，却给了 {value}";
    flag_not_a_choice => "{flag} takes one of {choices}, given {value}", "{flag} 只能取 {choices} 之一，却给了 {value}";
    flag_one_value => "one value", "1 个值";
    flag_at_most_one_value => "at most one value", "至多 1 个值";
    flag_at_least_one_value => "at least one value", "至少 1 个值";
    flag_n_values => "{n} values", "{n} 个值";
    flag_type_int => "an int", "整数";
    flag_type_float => "a float", "浮点数";
    flag_type_string => "a string", "字符串";
    launch_copied => "Copied", "已复制";
    launch_not_ready => "This plan does not run as written (see the rules above): each file's header says why.", "此方案按现状无法运行（见上方规则）：每个文件的开头注释写明了原因。";
    launch_confirm_download => "This plan does not fit or breaks a rule of its framework; its files say so in their header. Download anyway?", "此方案显存放不下或违反了框架规则，文件开头注释已注明。仍要下载吗？";
    launch_target => "Written for, and checked against the parsers of: {target}.", "按以下版本编写，并经其参数解析器校验：{target}。";
    launch_download => "Download", "下载";
    launch_download_all => "Download all (.zip)", "全部下载（.zip）";
    launch_unsafe => "{field} cannot hold a double quote, a backslash or ${ for {framework}: no quoting keeps them text for its override parser (Hydra).", "{framework} 的 {field} 不能包含双引号、反斜杠或 ${：任何引号都无法让它的参数解析器（Hydra）把它们当作普通文本。";
    launch_unsafe_interpolation => "{field} cannot hold ${ for {framework}: OmegaConf, which reads its YAML, takes it for an interpolation.", "{framework} 的 {field} 不能包含 ${：读取其 YAML 的 OmegaConf 会把它当作插值。";
    search_title => "Fastest plan that fits", "放得下的最快方案";
    search_hint => "Tries every parallel layout, memory knob and micro-batch for this framework (with RL, the rollout engine's TP too, and with experts its EP), keeping the model, method, batch and cluster.", "在当前框架下遍历所有并行划分、显存选项和微批（RL 还包括推理引擎的 TP，MoE 模型还包括推理 EP），模型、方法、批大小和集群保持不变。";
    search_run => "Search", "搜索";
    search_headroom => "{free} to spare", "余 {free}";
    search_summary => "{considered} plans tried, {fit} fit in memory, {feasible} keep every rule ({millis} ms in this browser, {ran}).", "尝试 {considered} 个方案，{fit} 个放得下，{feasible} 个符合全部规则（本浏览器用时 {millis} ms，{ran}）。";
    search_ran_workers => "{workers} workers in parallel", "{workers} 个 Worker 并行计算";
    search_ran_one_worker => "one worker", "1 个 Worker 计算";
    search_ran_in_page => "in the page itself, without workers", "未用 Worker，在页面内计算";
    search_cancel => "Cancel", "取消";
    search_cancelled => "Search cancelled.", "搜索已取消。";
    search_progress => "Search progress", "搜索进度";
    search_chart => "Peak memory against throughput of the plans found", "所找到方案的峰值显存与吞吐";
    search_chart_legend => "Line: the Pareto front (no plan is both smaller and faster). Dark dot: the fastest.", "折线：帕累托前沿（没有方案同时更省显存且更快）。深色点：最快方案。";
    search_axis_peak => "Peak memory per device", "单卡峰值显存";
    search_axis_speed => "Tokens/s", "吞吐 tokens/s";
    search_none => "No plan fits on this cluster: more devices, a smaller model or LoRA.", "该集群上没有放得下的方案：增加卡数、换小模型或用 LoRA。";
    search_blocked => "{fit} plans fit, but each breaks a rule of the framework. Most often ({plans} plans): {finding}", "有 {fit} 个方案放得下，但每个都违反框架规则。最常见（{plans} 个方案）：{finding}";
    search_unchanged => "the current plan", "当前方案";
    search_col_speed => "Tokens/s", "吞吐 (tokens/s)";
    search_col_mfu => "MFU", "MFU";
    search_col_peak => "Peak", "峰值";
    search_col_changes => "Changes", "修改";
    advice_search_best => "The search's fastest plan that fits and keeps every rule.", "搜索得到的、放得下且符合全部规则的最快方案。";
    advice_why_search_best => "The search tries every parallel layout, memory knob and micro-batch together; this is its fastest plan from here.", "搜索会同时尝试所有并行布局、显存选项与微批大小；这是从当前方案出发的最快方案。";
    advice_none => "None of the single moves tried here makes this plan faster while it still fits: the search tries them together.", "这里尝试的单项修改都不能在放得下的前提下更快：搜索会组合尝试。";
    advice_apply => "Apply", "应用";
    advice_peak => "Peak {peak} ({delta})", "峰值 {peak}（{delta}）";
    advice_speed => "Speed {delta}", "速度 {delta}";
    advice_fits => "fits", "放得下";
    advice_short => "still too big", "仍放不下";
    advice_distributed_optimizer => "Distributed optimizer: shards the fp32 master weights and Adam moments over data-parallel ranks at almost no time cost.", "分布式优化器：把 fp32 主权重和 Adam 状态切分到数据并行各卡，几乎不增加时间。";
    advice_overlap_grad_reduce => "Overlap the gradient reduction (and parameter gather) with backward compute.", "梯度规约（及参数聚合）与反向计算重叠。";
    advice_sequence_parallel => "Sequence parallelism: divides the activations TP leaves whole (LayerNorm, dropout) by TP.", "序列并行：把 TP 未切分的激活（LayerNorm、dropout）也按 TP 切分。";
    advice_tp_comm_overlap => "Pipeline TP communication with the GEMMs (Transformer Engine userbuffers).", "TP 通信与矩阵乘流水重叠（Transformer Engine userbuffers）。";
    advice_fused_kernels => "Turn on MindSpeed's fused RMSNorm, SwiGLU and RoPE kernels.", "开启 MindSpeed 的 RMSNorm、SwiGLU 和 RoPE 融合算子。";
    advice_ascend_coc => "CoC: overlap TP communication with computation on Ascend (MindSpeed --use-ascend-coc).", "CoC：昇腾上 TP 通信与计算重叠（MindSpeed --use-ascend-coc）。";
    advice_zero_stage => "One ZeRO stage up: shard more of the model states over data-parallel ranks.", "ZeRO 升一级：把更多模型状态切分到数据并行各卡。";
    advice_zero_stage_down => "One ZeRO stage down: memory allows it, and fewer shards communicate less.", "ZeRO 降一级：显存够用，切分越少通信越少。";
    advice_zero_stage_3 => "ZeRO-3: shard parameters, gradients and optimizer states.", "ZeRO-3：参数、梯度、优化器状态全部切分。";
    advice_offload_optimizer => "ZeRO-3 with the optimizer states on the host: they leave the device, at the cost of PCIe transfers.", "ZeRO-3 并把优化器状态卸载到主机：它们离开显存，代价是 PCIe 传输。";
    advice_offload_params => "ZeRO-3 with the optimizer states and the parameters on the host: the least device memory, the slowest step.", "ZeRO-3 并把优化器状态和参数都卸载到主机：显存最省，速度最慢。";
    advice_onload_params => "Keep the parameters on the device; the optimizer states stay on the host.", "参数留在设备上，优化器状态仍在主机。";
    advice_offload_to_host => "Keep the offloaded states in host memory instead of NVMe, where each node has the memory for them.", "节点主机内存足够时，把卸载的状态放在主机内存而不是 NVMe。";
    advice_onload => "Keep the states on the device: they fit without offloading.", "状态留在设备上：不卸载也放得下。";
    advice_host_optimizer => "Keep the optimizer states on the host.", "优化器状态放到主机。";
    advice_recompute_selective => "Selective recomputation: recompute the attention core instead of storing it.", "选择性重计算：重算注意力核心部分而不保存。";
    advice_recompute_full => "Full recomputation: store only each layer's input, recompute the rest in backward.", "完全重计算：只保存每层输入，反向时重算其余部分。";
    advice_recompute_less => "Recompute less: memory allows storing the activations, saving the extra forward.", "减少重计算：显存够保存激活，省掉多出来的前向。";
    advice_swap_attention => "Swap attention activations to host memory (MindSpeed --swap-attention).", "把注意力激活换出到主机内存（MindSpeed --swap-attention）。";
    advice_galore => "Use GaLore (use_galore): AdamW's moments of each linear weight's gradient projected to low rank.", "改用 GaLore（use_galore）：每个线性层权重的梯度投影到低秩后再算 AdamW 的动量。";
    advice_adam_8bit => "Use bitsandbytes' 8-bit AdamW (optim: adamw_8bit).", "改用 bitsandbytes 的 8 位 AdamW（optim: adamw_8bit）。";
    advice_pure_bf16 => "Keep the trained parameters in bf16 (LLaMA-Factory pure_bf16).", "训练参数保持 bf16（LLaMA-Factory 的 pure_bf16）。";
    advice_liger_kernel => "Turn on Liger's kernels (LLaMA-Factory enable_liger_kernel, VeRL use_liger).", "开启 Liger 算子（LLaMA-Factory 的 enable_liger_kernel、VeRL 的 use_liger）。";
    advice_flash_attention => "Flash attention: never materialises the score matrix, and runs faster.", "Flash Attention：不生成注意力分数矩阵，且更快。";
    advice_micro_batch_up => "Double the micro-batch: larger GEMMs run closer to peak while memory lasts.", "微批加倍：显存允许时，更大的矩阵乘更接近峰值算力。";
    advice_micro_batch_down => "Halve the micro-batch: fewer activations in flight.", "微批减半：同时在途的激活更少。";
    advice_more_microbatches => "At least 4 × PP micro-batches per step shrink the pipeline bubble.", "每步至少 4 × PP 个微批，可缩小流水线气泡。";
    advice_interleave => "Interleaved schedule (VPP 2): the bubble shrinks by the number of chunks.", "交错调度（VPP 2）：气泡按虚拟阶段数缩小。";
    advice_tp_in_node => "Keep TP inside a node and move the rest to PP: TP traffic needs NVLink/HCCS.", "TP 限制在节点内，其余转为 PP：TP 通信需要 NVLink/HCCS。";
    advice_pp_over_tp => "Double PP: each device holds half the layers.", "PP 加倍：每张卡只放一半的层。";
    advice_cp_algo => "The other context-parallel exchange (ring ↔ all-to-all) runs faster here.", "换用另一种 CP 通信方式（环形 ↔ all-to-all），这里更快。";
    advice_stack_megatron => "A model this size on this many devices trains fastest on Megatron/MindSpeed with TP and the distributed optimizer.", "这个规模的模型和集群，用 Megatron/MindSpeed 的 TP 加分布式优化器训练最快。";
    advice_cheap_together => "The nearly free memory moves, all at once (the settings below).", "把几乎不耗时的省显存手段一起用上（见下方设置）。";
    advice_verl_ulysses => "Ulysses sequence parallelism for long VeRL sequences (SP 2).", "长序列 VeRL 用 Ulysses 序列并行（SP 2）。";
    advice_rollout_tp_down => "Halve the rollout engine's TP.", "推理引擎 TP 减半。";
    advice_rollout_tp_up => "Double the rollout engine's TP.", "推理引擎 TP 加倍。";
    advice_rollout_ep_up => "Spread the rollout engine's experts over more devices (rollout EP).", "把推理引擎的专家分到更多卡上（推理 EP）。";
    advice_max_num_seqs_up => "Decode twice as many sequences per rollout wave.", "每轮推理解码的序列数加倍。";
    advice_precision_fp8 => "fp8 training with Transformer Engine.", "用 Transformer Engine 做 fp8 训练。";
    advice_lora_all_targets => "LoRA on every linear layer, not only q/v.", "LoRA 加到所有线性层，而非只有 q/v。";
    advice_why_distributed_optimizer => "Without it every data-parallel replica keeps its own fp32 master weights and Adam moments: 12 of the 18 bytes per parameter. Sharding them over d replicas leaves 6 + 12/d bytes; the extra reduce-scatter/all-gather replaces the all-reduce at the same volume.", "不开时每个数据并行副本各自保存 fp32 主权重和 Adam 状态，占每参数 18 字节中的 12 字节。切分到 d 个副本后只剩 6 + 12/d 字节；多出的 reduce-scatter/all-gather 与原来的 all-reduce 通信量相同。";
    advice_why_overlap_grad_reduce => "Gradients of the last layers are ready long before backward ends: reducing them bucket by bucket while backward continues hides most of the data-parallel traffic.", "反向传播结束前，靠后层的梯度早已就绪：按桶边算边规约，可隐藏大部分数据并行通信。";
    advice_why_sequence_parallel => "TP splits the GEMMs but leaves LayerNorm and dropout activations whole on every TP rank. Sequence parallelism splits them along the sequence, turning all-reduce into reduce-scatter + all-gather of the same volume.", "TP 切分了矩阵乘，但 LayerNorm 和 dropout 的激活在每个 TP 卡上仍是完整的。序列并行沿序列维切分它们，把 all-reduce 换成等量的 reduce-scatter + all-gather。";
    advice_why_tp_comm_overlap => "With SP, each TP all-gather/reduce-scatter sits next to a GEMM. Splitting both into chunks lets the transfer of one chunk run under the compute of another.", "开启 SP 后，每次 TP 的 all-gather/reduce-scatter 都紧挨着一个矩阵乘。把两者切块，一块的传输就能与另一块的计算重叠。";
    advice_why_fused_kernels => "Each fused kernel reads and writes its tensors once instead of once per eager operator; MindSpeed measures 2.7 %, 4.7 % and 1 % more throughput on Llama-2-7B.", "每个融合算子只读写一次张量，而不是每个小算子各读写一次；MindSpeed 在 Llama-2-7B 上测得吞吐分别提升 2.7%、4.7% 和 1%。";
    advice_why_ascend_coc => "MindSpeed's Communication-over-Computation splits TP GEMMs and their collectives into pieces that overlap on the NPU, the Ascend counterpart of TP communication overlap.", "MindSpeed 的 CoC（计算通信并行）把 TP 矩阵乘及其集合通信切片在 NPU 上重叠，相当于昇腾上的 TP 通信重叠。";
    advice_why_zero_stage => "ZeRO-1 shards optimizer states, ZeRO-2 also gradients, ZeRO-3 also parameters over the data-parallel ranks. Each stage saves memory; ZeRO-3 adds a parameter all-gather per forward and backward. LLaMA-Factory runs ZeRO 0 without DeepSpeed, in plain PyTorch under autocast; from ZeRO-1 on, DeepSpeed's bf16 engine runs the model in bf16 (LoRA's fp32 adapters included) beside its own buffers, so the first stage up can change speed and memory either way.", "ZeRO-1 切分优化器状态，ZeRO-2 再切梯度，ZeRO-3 再切参数，均分到数据并行各卡。每升一级省显存；ZeRO-3 每次前向和反向都要额外 all-gather 参数。LLaMA-Factory 在 ZeRO 0 时不用 DeepSpeed，以纯 PyTorch 加 autocast 运行；从 ZeRO-1 起由 DeepSpeed 的 bf16 引擎以 bf16 运行模型（包括 LoRA 的 fp32 适配器），另有其缓冲区，因此第一次升级可能使速度和显存朝任一方向变化。";
    advice_why_zero_stage_down => "Every ZeRO stage adds communication: if memory allows, a lower stage spends less time gathering and scattering.", "每一级 ZeRO 都增加通信：显存允许时，低一级可少花时间在聚合与切分上。";
    advice_why_zero_stage_3 => "With 16 bytes per parameter for mixed-precision Adam, ZeRO-3 leaves 16/N per device on N data-parallel ranks: the largest saving short of offloading.", "混合精度 Adam 每参数 16 字节，ZeRO-3 在 N 个数据并行卡上每卡只剩 16/N：不卸载时最省的做法。";
    advice_why_offload_optimizer => "DeepSpeed moves the fp32 master weights and Adam moments (12 bytes per parameter) to host memory and the CPU runs the update; VeRL keeps its Adam moments (8 bytes) on the host between updates and brings them back for each. The step waits for PCIe transfers, so it is slower, but a much larger model fits.", "DeepSpeed 把 fp32 主权重和 Adam 状态（每参数 12 字节）移到主机内存，由 CPU 完成更新；VeRL 在两次更新之间把 Adam 状态（8 字节）放在主机上，每次更新前再取回。每步要等 PCIe 传输，变慢，但能放下大得多的模型。";
    advice_why_offload_params => "The parameters go to the host too: DeepSpeed's ZeRO-Infinity fetches each layer when needed, at the cost of host traffic every micro-batch; VeRL loads them for each of its passes and offloads them after, so its rollout holds none.", "参数也放到主机上：DeepSpeed 的 ZeRO-Infinity 按层取用，代价是每个微批都有主机传输；VeRL 在每个阶段计算前载入、算完卸载，推理生成时显存里不留参数。";
    advice_why_onload_params => "Parameters cross the host link every micro-batch, the optimizer states once a step: the parameters first.", "参数每个微批都经主机链路传输，优化器状态每步一次：先留回参数。";
    advice_why_offload_to_host => "NVMe extends host memory at a fraction of its bandwidth: every step reads the swapped states from the drive and writes them back, shared by the node's devices. Where the node's host memory holds them, the same device memory trains faster.", "NVMe 以远低于内存的带宽扩展主机内存：每一步都要从盘上读回换出的状态再写回，节点内各卡共享带宽。节点主机内存放得下时，同样的显存下训练更快。";
    advice_why_onload => "Offloading buys device memory with host copies and an optimizer step on the CPU; a plan that fits without it runs faster on the device.", "卸载是用主机拷贝和 CPU 上的优化器步骤换显存；不卸载也放得下时，留在设备上更快。";
    advice_why_host_optimizer => "The fp32 states leave the device: Megatron-LM steps them on the CPU, MindSpeed brings them back only for the step, VeRL between updates. The step waits for the copies.", "fp32 状态离开显存：Megatron-LM 在 CPU 上更新，MindSpeed 只在 step 时取回，VeRL 在两次更新之间卸载。每步要等拷贝。";
    advice_why_recompute_selective => "Attention's softmax and dropout outputs are large (they grow with sequence²) but cheap to compute again: selective recomputation drops them and reruns only that part in backward.", "注意力的 softmax 和 dropout 输出很大（随序列长度平方增长）但重算很便宜：选择性重计算丢弃它们，反向时只重算这一部分。";
    advice_why_recompute_full => "Full recomputation keeps only each layer's input and reruns the whole forward during backward: activations shrink to a sliver, compute grows by about a third.", "完全重计算只保留每层输入，反向时重跑整个前向：激活几乎全省，计算量约增加三分之一。";
    advice_why_recompute_less => "Recomputation trades time for memory. With memory to spare, storing the activations removes the extra forward pass from every step.", "重计算是用时间换显存。显存有富余时保存激活，每步都能省掉多出的一次前向。";
    advice_why_swap_attention => "MindSpeed copies attention activations to host memory after forward and prefetches them before backward, overlapping the copies with compute.", "MindSpeed 在前向后把注意力激活拷到主机内存，反向前再预取回来，拷贝与计算重叠。";
    advice_why_galore => "AdamW keeps two moments the size of every weight; GaLore keeps them for each linear weight's gradient projected to a few directions (the rank), a projection beside them, so the optimizer's memory falls to the embedding's and head's moments. It trains full parameters, without DeepSpeed; layer by layer, on one device, it frees the gradients too.", "AdamW 为每个权重保存两份同样大小的动量；GaLore 只为投影到少数方向（秩）上的线性层梯度保存动量，外加投影矩阵，优化器显存只剩嵌入层和输出头的动量。它训练全部参数，不用 DeepSpeed；单卡逐层更新时还能释放梯度。";
    advice_why_adam_8bit => "AdamW's two moments take 8 bytes a parameter in fp32 (4 in bf16); bitsandbytes keeps each in a byte with a scale per block of 2,048, about 2 bytes in all. Dettmers et al. (2022) found it trains as well as 32-bit Adam.", "AdamW 的两个动量在 fp32 下每个参数占 8 字节（bf16 下 4 字节）；bitsandbytes 把每个动量存为 1 字节、每 2048 个元素一个缩放系数，共约 2 字节。Dettmers 等（2022）的实验中其训练效果与 32 位 Adam 相当。";
    advice_why_pure_bf16 => "Without DeepSpeed LLaMA-Factory casts the trained parameters to fp32: weights, gradients and AdamW's moments take 16 bytes a parameter. In bf16 they take 8, but there is no fp32 master copy, so updates smaller than bf16 can resolve are lost: check the loss curve.", "不用 DeepSpeed 时 LLaMA-Factory 把训练参数转为 fp32：权重、梯度与 AdamW 状态每个参数占 16 字节。改为 bf16 后只占 8 字节，但没有 fp32 主副本，小于 bf16 精度的更新会丢失，请留意 loss 曲线。";
    advice_why_liger_kernel => "Liger runs each RMSNorm, SwiGLU and rotary embedding as one Triton kernel instead of several eager operators, keeping fewer tensors for backward, and for LLaMA-Factory's pre-training and SFT computes the head and the loss chunk by chunk in forward, so a micro-batch's logits and their fp32 copies are never held.", "Liger 用一个 Triton 算子完成每个 RMSNorm、SwiGLU 和旋转位置编码，代替多个 eager 小算子，为反向保存的张量也更少；LLaMA-Factory 预训练和 SFT 时还在前向中分块计算输出层和损失，从不保存整个微批次的 logits 及其 fp32 副本。";
    advice_why_flash_attention => "Eager attention materialises the b·heads·s² score matrix; flash attention computes it in tiles on chip and never stores it, saving memory and HBM traffic.", "普通注意力会生成 b·heads·s² 的分数矩阵；Flash Attention 在片上分块计算，从不保存它，省显存也省 HBM 流量。";
    advice_why_micro_batch_up => "Small GEMMs leave the tensor cores idle part of the time; a larger micro-batch raises efficiency until memory runs out.", "矩阵乘太小，张量核心有一部分时间空闲；增大微批能提高效率，直到显存用尽。";
    advice_why_micro_batch_down => "Activations grow linearly with the micro-batch; halving it halves them while the global batch stays the same through more accumulation steps.", "激活随微批线性增长；减半微批激活减半，全局批大小靠更多累积步数保持不变。";
    advice_why_more_microbatches => "The pipeline bubble is (p − 1)/m of the step for p stages and m micro-batches; at least 4 × p micro-batches keep it under a fifth.", "p 个流水线阶段、m 个微批时，气泡占 (p − 1)/m；微批数至少 4 × p 可把它压到五分之一以下。";
    advice_why_interleave => "Giving each device v non-adjacent chunks of layers divides the bubble by v, at the cost of v times more pipeline messages.", "每张卡分到 v 段不相邻的层，气泡缩小为 1/v，代价是流水线消息多 v 倍。";
    advice_why_tp_in_node => "TP communicates inside every layer and needs NVLink/HCCS bandwidth; across nodes it runs at network speed. Cost order of the parallelisms: pp < dp < ep < cp < tp.", "TP 每层都要通信，需要 NVLink/HCCS 带宽；跨节点只能走网络。各并行方式的通信代价：pp < dp < ep < cp < tp。";
    advice_why_cp_algo => "The ring passes K and V around the CP ranks behind the attention compute; all-to-all moves Q, K, V and the output once per layer with nothing to hide it. Short sequences and many key/value heads favour all-to-all, long sequences favour the ring: the figure is computed for this plan.", "环形把 K、V 在 CP 各卡间轮转传递，藏在注意力计算之后；all-to-all 每层把 Q、K、V 和输出各交换一次，无法隐藏。序列短、KV 头多时 all-to-all 占优，序列长时环形占优：这里的数字按本方案算出。";
    advice_why_pp_over_tp => "Pipeline stages exchange only activations at their boundaries, the cheapest traffic of all parallelisms; more stages hold fewer layers each.", "流水线各阶段只在边界传激活，是所有并行方式中通信最少的；阶段越多，每张卡上的层越少。";
    advice_why_stack_megatron => "From about 100B parameters on 32+ devices, ZeRO's per-layer gathers cost more than Megatron's TP/PP with the distributed optimizer (Megatron-LM paper, Narayanan et al. 2021 §5.2; the threshold itself is common practice).", "约 100B 参数、32 卡以上时，ZeRO 逐层聚合参数的开销超过 Megatron 的 TP/PP 加分布式优化器（Megatron-LM 论文，Narayanan 等 2021 §5.2；阈值本身为常见经验）。";
    advice_why_cheap_together => "Each of these saves memory without adding compute; when none alone is enough, together they may be.", "这几项都只省显存不加计算；单项不够时，合起来可能就够了。";
    advice_why_verl_ulysses => "Ulysses splits each sequence over sp devices with all-to-all around attention; set ppo_max_token_len_per_gpu to about max_response_length / sp so each device's token budget follows.", "Ulysses 把每条序列切到 sp 张卡上，注意力前后做 all-to-all；ppo_max_token_len_per_gpu 相应设为约 max_response_length / sp。";
    advice_why_rollout_tp_down => "Decoding is bound by reading weights and KV cache; fewer TP ranks per engine mean more engines in parallel and less communication per token.", "解码受限于读取权重和 KV cache；每个推理引擎的 TP 越小，并行的引擎越多，每个 token 的通信越少。";
    advice_why_rollout_tp_up => "More TP per engine splits the weights and leaves more memory per device for the KV cache, so more sequences decode at once.", "每个推理引擎的 TP 越大，权重越分散，每卡留给 KV cache 的显存越多，能同时解码更多序列。";
    advice_why_rollout_ep_up => "Each device then holds fewer whole experts and reads fewer at each decode step, and leaves more of the engine's memory to the KV cache.", "每张卡持有的完整专家更少，每步解码读取的专家权重也更少，推理引擎留给 KV cache 的显存更多。";
    advice_why_max_num_seqs_up => "The rollout engine decodes max_num_seqs sequences per wave; more per wave means fewer waves while the KV cache has room.", "推理引擎每轮解码 max_num_seqs 条序列；KV cache 有余量时，每轮更多则轮数更少。";
    advice_why_precision_fp8 => "Hopper, Ada and Blackwell run fp8 GEMMs at twice the bf16 rate; Transformer Engine keeps scaling factors per tensor. The gain shown assumes the GEMMs reach that rate; real runs gain less.", "Hopper、Ada、Blackwell 的 fp8 矩阵乘速度是 bf16 的两倍；Transformer Engine 按张量维护缩放因子。所示收益假设矩阵乘达到该速度，实际会少一些。";
    advice_why_lora_all_targets => "Adapters on every linear layer (attention and MLP) come closer to full fine-tuning quality than q/v alone, for a small cost in memory and time shown here.", "在所有线性层（注意力和 MLP）上加适配器，效果比只加 q/v 更接近全参微调，显存和时间代价很小，如上所示。";
    advice_why_label => "Why", "为什么";
    cost_title => "Time and cost to train", "训练时间与成本";
    cost_default_budget => "Fine-tuning on the default budget of 1T tokens: enter your dataset's tokens and epochs for the time and cost of this run.", "微调方案仍在使用默认的 1T token 预算：请填写数据集的 token 数和轮数，才能得到本次训练的时间与成本。";
    cost_hint => "The token budget below at this plan's step time. Energy counts the devices alone at full board power (TDP) × PUE: no hosts, network or storage.", "按当前方案的单步时间训练下方的 token 预算。能耗只计设备本身，按满载板卡功耗（TDP）× PUE 计算，不含主机、网络和存储。";
    cost_tokens => "Token budget (e.g. 1T, 300B)", "训练 token 预算（如 1T、300B）";
    cost_dataset => "Dataset tokens (fine-tuning, optional)", "数据集 token 数（微调用，可选）";
    cost_epochs => "Epochs", "训练轮数（epoch）";
    cost_price => "Price per device-hour (optional)", "每卡时单价（可选）";
    cost_pue => "PUE (facility power ÷ IT power)", "PUE（机房总功耗 ÷ IT 设备功耗）";
    cost_power => "Board power per device (W)", "单卡板卡功耗（W）";
    cost_bad_tokens => "A whole number of tokens from 1 to 10^16; K, M, B and T are allowed", "请输入 1 到 10^16 之间的整数 token 数，可用 K、M、B、T";
    cost_bad_dataset => "Empty, or a whole number of tokens up to 10^16; K, M, B and T are allowed", "留空，或输入不超过 10^16 的整数 token 数，可用 K、M、B、T";
    cost_bad_epochs => "More than 0, at most 10000", "须大于 0 且不超过 10000";
    cost_bad_price => "Empty, or a number from 0 to 1000000", "留空，或输入 0 到 1000000 之间的数";
    cost_bad_pue => "From 1 to 5", "须在 1 到 5 之间";
    cost_bad_power => "Empty, or from 0 to 100000 W", "留空，或输入 0 到 100000 W";
    cost_budget => "Tokens trained", "训练 token 数";
    cost_steps => "Optimizer steps", "优化器步数";
    cost_wall => "Wall-clock time", "实际耗时";
    cost_device_hours => "Device-hours", "卡时";
    cost_energy => "Energy", "能耗";
    cost_total => "Cost", "成本";
    cost_per_step => "{tokens} tokens a step", "每步 {tokens} token";
    cost_energy_unknown => "unknown: enter the device's board power", "未知：请填写设备板卡功耗";
    cost_no_price => "enter a price per device-hour", "填写每卡时单价后显示";
    cost_power_datasheet => "{watts} W per device (datasheet), PUE {pue}", "每卡 {watts} W（官方规格），PUE {pue}";
    cost_power_reported => "{watts} W per device (a reported or estimated figure, not a datasheet's), PUE {pue}", "每卡 {watts} W（公开报道或估计值，非官方规格），PUE {pue}";
    sweep_title => "Longest sequence and largest micro-batch by cluster size", "不同集群规模下放得下的最长序列与最大微批";
    sweep_hint => "For 1, 2, 4 … 64 nodes and this plan's own: the largest value that fits in memory with every other setting kept, and its speed; micro-batches that divide the global batch (with RL, its responses) ÷ DP only. Otherwise memory alone decides; check the rules once you use a value.", "针对 1、2、4……64 个节点及当前节点数：其余设置不变时显存放得下的最大值及对应速度；微批只取能整除“全局批（RL 为回答数）÷ DP”的值。其余只看显存，采用某个值后请再检查规则。";
    sweep_run => "Compute", "计算";
    sweep_stale => "The plan has changed since this table was computed: compute again.", "该表计算后方案已修改，请重新计算。";
    sweep_col_nodes => "Nodes", "节点数";
    sweep_col_devices => "Devices", "卡数";
    sweep_col_seq => "Longest sequence (tokens)", "最长序列（token）";
    sweep_col_mbs => "Largest micro-batch", "最大微批";
    sweep_speed => "{step} a step · {tokens} tokens/s", "每步 {step} · {tokens} token/s";
    sweep_none => "does not fit", "放不下";
    sweep_batch => "fewer sequences a step than data-parallel ranks", "每步序列数少于数据并行数";
    sweep_layout => "the parallel sizes do not divide these devices", "并行规模无法整除该卡数";
    sweep_current => "this plan", "当前方案";
    sweep_rl => "RL plans: the sequence lengths are the RL settings' prompt and response lengths.", "强化学习方案：序列长度由 RL 设置中的提示和回复长度决定。";
    logcal_title => "Calibrate from a training log", "从训练日志校准";
    logcal_hint => "Paste this plan's training log: Megatron-LM, MindSpeed-LLM, MindSpeed-RL, HF Trainer, LLaMA-Factory (trainer_log.jsonl too) or VeRL. Warm-up steps are left out; the step time and peak memory are fitted, and the phases the log times are set beside the plan's.", "粘贴此方案的训练日志：Megatron-LM、MindSpeed-LLM、MindSpeed-RL、HF Trainer、LLaMA-Factory（含 trainer_log.jsonl）或 VeRL。预热步不计入；拟合单步时间与显存峰值，日志中分阶段的计时与方案逐阶段对比。";
    logcal_label => "Training log", "训练日志";
    logcal_fit => "Fit to the log", "按日志拟合";
    logcal_megatron => "Megatron iteration lines: {n}", "Megatron 迭代日志 {n} 行";
    logcal_memory => "memory reports: {n}", "显存报告 {n} 条";
    logcal_hf => "HF Trainer log lines: {n}", "HF Trainer 日志 {n} 行";
    logcal_progress => "progress-bar rates: {n}", "进度条速率 {n} 个";
    logcal_verl => "VeRL metrics lines: {n}", "VeRL 指标 {n} 行";
    logcal_trainer_log => "LLaMA-Factory trainer_log.jsonl lines: {n}", "LLaMA-Factory trainer_log.jsonl {n} 行";
    logcal_deepspeed => "DeepSpeed throughput lines: {n}", "DeepSpeed 吞吐日志 {n} 行";
    logcal_mindspeed_rl => "MindSpeed-RL metrics lines: {n}", "MindSpeed-RL 指标 {n} 行";
    logcal_found => "Read {what}.", "已读取：{what}。";
    logcal_step => "Step time {step} from {used} steps after {skipped} of warm-up.", "单步时间 {step}：取自预热 {skipped} 步之后的 {used} 步。";
    logcal_peak => "Peak memory {peak} allocated (the runtime context is added before fitting).", "显存峰值 {peak}（已分配；拟合前另加运行时上下文）。";
    logcal_mean_prompt => "Prompts of {n} tokens on average (prompt_length/mean): now the plan's mean prompt length.", "prompt 平均 {n} 个 token（prompt_length/mean）：已设为方案的平均 prompt 长度。";
    logcal_mean_response => "Responses of {n} tokens on average (response_length/mean): now the plan's mean response length.", "回答平均 {n} 个 token（response_length/mean）：已设为方案的平均回答长度。";
    logcal_other_framework => "This log reads as {source}, and this plan runs {framework}: is it this plan's log? It was fitted all the same.", "这份日志看起来来自 {source}，而当前方案用的是 {framework}：确认是这个方案的日志吗？仍已按它拟合。";
    logcal_source_megatron => "a Megatron-LM or MindSpeed run", "Megatron-LM 或 MindSpeed 的运行";
    logcal_source_hf => "an HF Trainer (LLaMA-Factory) run", "HF Trainer（LLaMA-Factory）的运行";
    logcal_source_verl => "a VeRL run", "VeRL 的运行";
    logcal_source_mindspeed_rl => "a MindSpeed-RL run", "MindSpeed-RL 的运行";
    logcal_source_deepspeed => "a DeepSpeed run", "DeepSpeed 的运行";
    logcal_fitted => "Fitted: this plan now predicts the log's step time and peak.", "已拟合：当前方案的预测已与日志的单步时间和显存峰值一致。";
    logcal_unrecognized => "No training log lines recognized. Paste the lines with the step times of a log the frameworks above print.", "未识别到训练日志。请粘贴上述框架所打印日志中含单步时间的行。";
    logcal_nothing => "Read {what}, but they give no step time or peak memory: paste the lines that print them.", "已读取：{what}，但其中没有单步时间或显存峰值：请粘贴打印它们的行。";
    logcal_no_plan => "Fix the plan first: a log calibrates a valid plan.", "请先修正方案：日志只能校准有效的方案。";
    logcal_phases => "By phase: the run's own timers against the plan's model with the log's mean lengths, before the fit:", "按阶段：运行自身的计时与方案按日志平均长度、拟合前的预测对比：";
    logcal_phase => "Phase", "阶段";
    logcal_rollout => "Generation fitted apart to the log's timing_s/gen: × {scale}.", "生成阶段按日志的 timing_s/gen 单独拟合：× {scale}。";
    logcal_logged => "Logged", "实测";
    logcal_modelled => "Modelled", "预测";
    logcal_ratio => "Logged ÷ modelled", "实测 ÷ 预测";
    severity_error => "Error", "错误";
    severity_warning => "Warning", "警告";
    severity_note => "Note", "提示";
    chart_data => "The figures as a table", "图表数据（表格）";
    chart_hint => "Hover over or tap the chart for its figures.", "将鼠标悬停或轻触图表即可查看数值。";
    mem_chart_caption => "Capacity {capacity}, usable {usable}", "容量 {capacity}，可用 {usable}";
    mem_chart_col => "Stage or phase", "阶段";
    mem_chart_readout => "{what}: {parts}; total {total}", "{what}：{parts}；合计 {total}";
    mem_chart_over => "above the usable memory", "超出可用显存";
    mem_chart_peak => "(peak)", "（峰值）";
    tl_lane_rollout => "Rollout", "生成";
    tl_lane_log_prob => "Log-prob", "算 log-prob";
    tl_lane_update => "Update", "更新";
    tl_lane_step => "Step", "单步";
    tl_part_pipeline => "Forward and backward passes", "前向与反向计算";
    tl_zoom_in => "Zoom in", "放大";
    tl_zoom_out => "Zoom out", "缩小";
    tl_whole => "Whole step", "整个单步";
    tl_window => "Shown: {start} – {end} of a {step} step", "当前显示 {start} – {end}，单步共 {step}";
    tl_hint => "Drag to pan; pinch, Ctrl + wheel or the buttons zoom; hover or tap a pass for its times.", "拖动可平移；双指捏合、Ctrl + 滚轮或按钮可缩放；悬停或轻触某次计算可查看其时间。";
    tl_pass_readout => "Stage {stage} · chunk {chunk} · micro-batch {mb} · {pass} · {start} – {end} ({duration})", "阶段 {stage} · 虚拟块 {chunk} · 微批 {mb} · {pass} · {start} – {end}（{duration}）";
    tl_idle_readout => "Stage {stage} is idle at {at} (the bubble)", "阶段 {stage} 在 {at} 空闲（气泡）";
    tl_part_readout => "{part}: {start} – {end} ({duration})", "{part}：{start} – {end}（{duration}）";
    tl_partial => "Passes drawn one by one for the first {shown} of {total} micro-batches; the rest of the pipeline is one block.", "前 {shown} 个微批（共 {total} 个）的计算逐次绘出；流水线其余部分画成一整块。";
    tl_too_deep => "{n} pipeline stages are too many for a lane each: the step's parts are shown.", "流水线共 {n} 级，无法每级一条泳道：仅显示单步的各部分。";
    tl_passes => "Stages 0–{last}: {passes} passes of {mbs} micro-batches", "阶段 0–{last}：{mbs} 个微批，共 {passes} 次计算";
    tl_chunks => "Lighter shades: later model chunks", "颜色越浅：越靠后的模型块";
    tl_col_lane => "Lane", "泳道";
    tl_col_part => "Part", "部分";
    tl_col_start => "Start", "开始";
    tl_col_end => "End", "结束";
    tl_col_duration => "Duration", "时长";
    bd_title => "Where the step's time goes", "单步时间构成";
    bd_col_cause => "Cause", "来源";
    bd_col_share => "Share", "占比";
    bd_readout => "{cause}: {time} ({share})", "{cause}：{time}（{share}）";
    search_point => "Peak {peak} · {speed} tokens/s", "峰值 {peak} · 吞吐 {speed} tokens/s";
    search_point_front => "on the Pareto front", "位于帕累托前沿";
    search_point_rank => "fastest #{n}", "速度第 {n}";
}

/// A template with its `{name}` placeholders filled in.
pub fn fill(template: &str, args: &[(&str, &str)]) -> String {
    let mut res = template.to_owned();
    for (name, value) in args {
        res = res.replace(&format!("{{{name}}}"), value);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_text_in_both_languages() {
        for &key in Key::ALL {
            for lang in Lang::ALL {
                let text = t(lang, key);
                assert!(!text.trim().is_empty(), "{key:?} is empty in {lang}");
                assert_eq!(text, text.trim(), "{key:?} has outer spaces in {lang}");
            }
        }
    }

    #[test]
    fn chinese_is_translated_not_copied() {
        // Names and units may stay the same in both languages; everything else must differ.
        let same_in_both = [Key::app_title, Key::params_mlp, Key::search_col_mfu];
        for &key in Key::ALL {
            if same_in_both.contains(&key) {
                continue;
            }
            assert_ne!(t(Lang::En, key), t(Lang::Zh, key), "{key:?} is not translated");
        }
    }

    #[test]
    fn placeholders_are_the_same_in_both_languages() {
        fn names(text: &str) -> Vec<&str> {
            let mut res: Vec<&str> =
                text.split('{').skip(1).filter_map(|rest| rest.split_once('}')).map(|(n, _)| n).collect();
            res.sort();
            res
        }
        for &key in Key::ALL {
            assert_eq!(names(t(Lang::En, key)), names(t(Lang::Zh, key)), "{key:?}");
        }
        assert_eq!(fill("{a} of {b}", &[("a", "1"), ("b", "2")]), "1 of 2");
    }

    #[test]
    fn browser_tags_pick_a_language() {
        assert_eq!(Lang::from_tag("zh-CN"), Lang::Zh);
        assert_eq!(Lang::from_tag("ZH-tw"), Lang::Zh);
        assert_eq!(Lang::from_tag("zh"), Lang::Zh);
        assert_eq!(Lang::from_tag("en-US"), Lang::En);
        assert_eq!(Lang::from_tag("de"), Lang::En);
        assert_eq!(Lang::from_tag(""), Lang::En);
        assert_eq!(Lang::from_tag("中文"), Lang::En);
    }
}
