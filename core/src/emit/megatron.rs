//! Megatron-LM: the bash launch script its users run (the pattern of Megatron-LM's
//! `examples/llama/train_llama3_8b_h100_fp8.sh`): environment, node variables, flag arrays, one
//! `torchrun pretrain_gpt.py` line. Model flags follow the model's config.json; every planned
//! parallelism, memory and batch knob is written.

use super::shell::quote;
use super::{
    EmittedFile, FileKind, bash_array, distributed_args, hf_config, model_path, model_slug, node_vars,
    script_opening,
};
use crate::Plan;
use crate::model::{Attention, Family, GroupLimit, MlpKind, Norm};
use crate::plan::{CpAlgo, Method, Precision, RecomputeGranularity, RecomputeMethod};

/// The model's shape as Megatron flags (`megatron/training/arguments.py`, generated from the
/// `TransformerConfig` fields).
/// On MindSpeed (`ascend`), Llama-3.1 rope scaling takes MindSpeed-LLM's flags.
pub fn model_flags(plan: &Plan, ascend: bool) -> Vec<String> {
    let arch = &plan.model.arch;
    let config = hf_config(plan);
    // A key as transformers holds it: the config's value, else its configuration class's default.
    let key = |k: &str| config.as_ref().and_then(|c| crate::hf::config_value(c, k)).filter(|v| !v.is_null());
    let mut f = vec![
        format!("--num-layers {}", arch.n_layers),
        format!("--hidden-size {}", arch.hidden_size),
        format!("--ffn-hidden-size {}", arch.mlp.intermediate_size),
        format!("--num-attention-heads {}", arch.attention.n_heads()),
    ];
    f.extend(attention_flags(&arch.attention));
    f.push(format!(
        "--seq-length {} --max-position-embeddings {}",
        plan.batch.seq_len,
        arch.max_position_embeddings.max(u64::from(plan.batch.seq_len.get()))
    ));
    f.extend(position_flags(plan, ascend, &key));
    let eps = key("rms_norm_eps").or_else(|| key("layer_norm_epsilon")).map(|v| v.to_string());
    let eps = eps.unwrap_or_else(|| {
        "\"${NORM_EPSILON:?set NORM_EPSILON to rms_norm_eps (or layer_norm_epsilon) from the model config.json}\"".to_owned()
    });
    match arch.norm {
        Norm::Rms => f.push(format!("--normalization RMSNorm --norm-epsilon {eps}")),
        Norm::Layer => f.push(format!("--normalization LayerNorm --norm-epsilon {eps}")),
    }
    match arch.family {
        Family::GptOss => f.extend(gpt_oss_flags(arch, &key)),
        Family::Gemma2 if builds_gemma2(plan) => f.extend(gemma2_flags(arch, &key)),
        _ if arch.mlp.kind == MlpKind::Gated => f.push("--swiglu".to_owned()),
        _ => {}
    }
    f.extend(window_flags(plan, ascend));
    f.extend(linear_attention_flags(plan, ascend, &key));
    if !arch.mlp.bias {
        f.push("--disable-bias-linear".to_owned());
    }
    if !arch.tied_embeddings {
        f.push("--untie-embeddings-and-output-weights".to_owned());
    }
    if let Some(moe) = &arch.moe {
        f.push(format!("--num-experts {} --moe-router-topk {}", moe.n_experts, moe.top_k));
        f.extend(moe_layer_flags(arch.n_layers, moe, ascend));
        f.push(format!("--moe-ffn-hidden-size {}", moe.expert_intermediate_size));
        f.extend(shared_expert_flags(plan.framework, moe));
        f.extend(router_weights_flag(ascend, &key));
        match arch.family {
            // GLM-4.5 routes as DeepSeek-V3 does (`Glm4MoeTopkRouter`, transformers
            // models/glm4_moe/modeling_glm4_moe.py; 1 group, × 2.5 on GLM-4.5).
            Family::DeepseekV3 | Family::Glm4Moe => f.push(deepseek_v3_router_flags(&key)),
            Family::DeepseekV2 => f.extend(deepseek_v2_router_flags(ascend, moe.group_limited, &key)),
            _ => {}
        }
        f.extend(moe_kernel_flags(plan, ascend));
    }
    f.push("--attention-dropout 0.0 --hidden-dropout 0.0".to_owned());
    f
}

/// Which layers hold experts, where not every one does (DeepSeek's and Kimi K2's first dense
/// layers, Qwen-MoE's `decoder_sparse_step` and `mlp_only_layers`): Megatron builds experts on
/// every layer unless told. Megatron-LM takes the layers as a pattern, `--moe-layer-freq` with a
/// Python list expression as long as the layers, 1 an expert layer (`moe_freq_type`,
/// megatron/training/arguments.py; its whole-number form puts experts on layers 0, N, 2N…, which
/// no HF family's layout is). MindSpeed-LLM's DeepSeek scripts write `--first-k-dense-replace K
/// --moe-layer-freq 1` (its `transformer_block.py` builds the first K layers dense), taken here for
/// dense layers first.
fn moe_layer_flags(n_layers: u64, moe: &crate::model::Moe, ascend: bool) -> Option<String> {
    let pattern = (0..n_layers).map(|i| moe.is_moe_layer(i));
    if pattern.clone().all(|expert| expert) {
        return None;
    }
    if let (true, crate::model::MoeLayers::FromLayer(first)) = (ascend, &moe.layers) {
        return Some(format!("--first-k-dense-replace {first} --moe-layer-freq 1"));
    }
    let mut runs: Vec<(bool, u64)> = Vec::new();
    for expert in pattern {
        match runs.last_mut() {
            Some((kind, count)) if *kind == expert => *count += 1,
            _ => runs.push((expert, 1)),
        }
    }
    let terms: Vec<String> =
        runs.iter().map(|&(expert, count)| format!("[{}]*{count}", u8::from(expert))).collect();
    Some(format!("--moe-layer-freq \"({})\"", terms.join("+")))
}

/// The shared experts: their summed width (`--moe-shared-expert-intermediate-size`), except on
/// MindSpeed-RL, whose model config takes their count of the routed experts' width alone
/// (`n_shared_experts`; MindSpeed's `MoESharedExpertsFeature.validate_args` makes the width from
/// it, mindspeed/features_manager/moe/shared_expert.py); and Qwen2-MoE's sigmoid gate on their
/// output (`shared_expert_gate`, a `Linear(hidden, 1)`): Megatron-LM `--moe-shared-expert-gate`
/// (`SharedExpertMLP`'s `gate_weight`, megatron/core/transformer/moe/shared_experts.py),
/// MindSpeed-LLM `--shared-expert-gate` (mindspeed_llm/features_manager/moe/shared_expert.py, an
/// output of 1 by default), MindSpeed-RL none (`model.shared_gate_mindspeed_rl`).
fn shared_expert_flags(framework: crate::plan::Framework, moe: &crate::model::Moe) -> Vec<String> {
    use crate::plan::Framework;
    let (shared, routed) = (moe.shared_intermediate_size, moe.expert_intermediate_size);
    if shared == 0 {
        return Vec::new();
    }
    let mut f =
        vec![match framework == Framework::MindSpeedRl && 0 < routed && shared.is_multiple_of(routed) {
            true => format!("--n-shared-experts {}", shared / routed),
            false => format!("--moe-shared-expert-intermediate-size {shared}"),
        }];
    if moe.shared_expert_gate {
        match framework {
            Framework::MindSpeedLlm => f.push("--shared-expert-gate".to_owned()),
            Framework::MindSpeedRl => {}
            _ => f.push("--moe-shared-expert-gate".to_owned()),
        }
    }
    f
}

/// gpt-oss beyond the shape (Megatron-Bridge's `GPTOSSBridge.provider_bridge`,
/// src/megatron/bridge/models/gpt_oss/gpt_oss_bridge.py; Megatron-LM core_v0.19.0 flags): its
/// experts' activation, a gated quick-GELU on `up + 1` clamped at `swiglu_limit`
/// (`--quick-geglu`, `--glu-linear-offset 1.0`, `--activation-func-clamp-value`, transformers
/// `GptOssExperts`' `alpha = 1.702`, `limit = 7.0`); a learned sink per head
/// (`--softmax-type learnable`, Transformer Engine 2.8 or later). Its window: [`window_flags`].
fn gpt_oss_flags(
    arch: &crate::model::Architecture,
    key: &dyn Fn(&str) -> Option<serde_json::Value>,
) -> Vec<String> {
    let limit = key("swiglu_limit").and_then(|v| v.as_f64()).unwrap_or(7.0);
    let mut f =
        vec![format!("--quick-geglu --glu-linear-offset 1.0 --activation-func-clamp-value {limit:?}")];
    if arch.attention_sinks {
        f.push("--softmax-type learnable".to_owned());
    }
    f
}

/// Sliding-window attention, which Megatron builds only when told (without it the model attends to
/// the whole sequence: another model than the checkpoint beyond the window). Megatron-LM:
/// `--window-size w-1,0`, the `w - 1` earlier tokens and itself as transformers' mask keeps them
/// (`sliding_window_overlay`: `kv_idx > q_idx - sliding_window`), as Megatron-Bridge converts
/// Mistral's and gpt-oss's configs (`MistralBridge`, `GPTOSSBridge`: `window_size =
/// (sliding_window - 1, 0)`), with `--window-attn-skip-freq k` where every k-th layer attends to
/// the whole sequence (`is_layer_window_attention`, megatron/core/transformer/utils.py; no
/// frequency where every layer is windowed: its `layer_number % 0` would divide by zero).
/// MindSpeed-LLM: `--sliding-window w`, which it hands its fused attention as `pre_tockens`
/// (mindspeed_llm/core/transformer/custom_dot_product_attention.py), every layer alike;
/// MindSpeed-RL's model config has no such key (`parallel.window_mindspeed_rl`).
fn window_flags(plan: &Plan, ascend: bool) -> Option<String> {
    let window = plan.model.arch.sliding_window?;
    if ascend {
        let every_layer = window.full_every == 0;
        return (plan.framework == crate::plan::Framework::MindSpeedLlm && every_layer)
            .then(|| format!("--sliding-window {}", window.size));
    }
    let left = window.size.saturating_sub(1);
    Some(match window.full_every {
        0 => format!("--window-size {left},0"),
        every => format!("--window-size {left},0 --window-attn-skip-freq {every}"),
    })
}

/// Whether the plan's script builds Gemma 2's layers: MindSpeed-LLM's, from its Gemma 2 spec
/// (`gemma2_flags`); no other Megatron-family script here does (rule `model.gemma_megatron`).
pub fn builds_gemma2(plan: &Plan) -> bool {
    plan.model.arch.family == Family::Gemma2 && plan.framework == crate::plan::Framework::MindSpeedLlm
}

/// Gemma 2's layers as MindSpeed-LLM builds them, with the flags its own script writes
/// (`examples/mcore/gemma2/pretrain_gemma2_9b_ptd.sh` at c77308a1): its layer spec, whose layers
/// norm the attention's and the MLP's outputs too (`--post-norm`; `TransformerLayer` in
/// mindspeed_llm/tasks/models/transformer/transformer_layer.py), GeLU (tanh) gating, Gemma's
/// `1 + weight` norms, embeddings scaled by √h (`--input-embeds-norm`), the attention's scale and
/// the output logits' soft cap from the config (`query_pre_attn_scalar`,
/// `final_logit_softcapping`), and the window on every other layer from the first
/// (`--interleave-sliding-window`: `is_sliding = not bool((layer_number - 1) % 2)`, as transformers'
/// `Gemma2Config.layer_types`). The script writes no `--attn-logit-softcapping`, nor does this.
fn gemma2_flags(
    arch: &crate::model::Architecture,
    key: &dyn Fn(&str) -> Option<serde_json::Value>,
) -> Vec<String> {
    let mut f = vec![
        "--spec mindspeed_llm.tasks.models.spec.gemma2_spec layer_spec".to_owned(),
        "--gelu-tanh --post-norm --add-rmsnorm-offset --input-embeds-norm".to_owned(),
    ];
    if let Some(scalar) = key("query_pre_attn_scalar").and_then(|v| v.as_f64()) {
        f.push(format!("--query-pre-attn-scalar {}", scalar.round() as u64));
    }
    if let Some(cap) = key("final_logit_softcapping").and_then(|v| v.as_f64()) {
        f.push(format!("--output-logit-softcapping {cap:?}"));
    }
    if let Some(window) = arch.sliding_window.filter(|w| w.full_every == 2) {
        f.push(format!("--interleave-sliding-window {}", window.size));
    }
    f
}

/// Qwen3-Next's Gated DeltaNet layers, its attention's output gate, its zero-centred norms
/// (`Qwen3NextRMSNorm`: `output * (1.0 + weight)`) and its rotary embedding on the first quarter of
/// each head (`partial_rotary_factor`). Megatron-LM core_v0.19.0 builds the layers from
/// `--experimental-attention-variant gated_delta_net` with `--linear-attention-freq k` (every k-th
/// layer attention) and the `--linear-*` shapes (`TransformerConfig`, as its functional test
/// `gpt3_mcore_te_tp2_pp1_gdn` sets them), the gate from `--attention-output-gate`, the norms from
/// `--apply-layernorm-1p`. MindSpeed-LLM builds them from its Qwen3-Next layer spec and flags, as
/// its script writes them (`examples/mcore/qwen3_next/pretrain_qwen3_next_80b_16K_A3_ptd.sh`:
/// `--mamba-d-conv` is the convolution's width, `--mamba-chunk-size` the delta rule's chunk;
/// `--add-rmsnorm-offset` the norms' 1 + weight, `--rmsnorm-weight-in-fp32` in fp32 as transformers'
/// `Qwen3NextRMSNorm` computes it), at TP 1 and CP 1 (rule
/// `parallel.linear_attention_mindspeed`). MindSpeed-RL and VeRL's Megatron engine are refused the
/// model (rule `model.linear_attention_framework`).
fn linear_attention_flags(
    plan: &Plan,
    ascend: bool,
    key: &dyn Fn(&str) -> Option<serde_json::Value>,
) -> Vec<String> {
    let arch = &plan.model.arch;
    if !arch.family.has_linear_attention() {
        return Vec::new();
    }
    let mut f = Vec::new();
    // A config whose every layer is attention (`full_attention_interval` 1) builds no DeltaNet
    // layer: MindSpeed-LLM's spec is told so, Megatron-LM's default attention is it.
    match (ascend, arch.linear_attention) {
        (false, Some(l)) => {
            f.push(format!(
                "--experimental-attention-variant gated_delta_net --linear-attention-freq {}",
                l.full_every
            ));
            f.push(format!("{} --linear-conv-kernel-dim {}", linear_shape_flags(&l), l.conv_kernel));
        }
        (true, Some(l)) => {
            f.push("--spec mindspeed_llm.tasks.models.spec.qwen3_next_spec layer_spec".to_owned());
            f.push(format!("--full-attention-interval {} {}", l.full_every, linear_shape_flags(&l)));
            f.push(format!(
                "--mamba-d-conv {} --mamba-expand 1 --mamba-chunk-size 64 --use-triton-gdn",
                l.conv_kernel
            ));
        }
        (true, None) => {
            f.push("--spec mindspeed_llm.tasks.models.spec.qwen3_next_spec layer_spec".to_owned());
            f.push("--full-attention-interval 1".to_owned());
        }
        (false, None) => {}
    }
    f.push(match ascend {
        false => "--apply-layernorm-1p".to_owned(),
        true => "--no-enable-linear-qkv --add-rmsnorm-offset --rmsnorm-weight-in-fp32".to_owned(),
    });
    if arch.attention_output_gate && !ascend {
        f.push("--attention-output-gate".to_owned());
    }
    if let Some(r) = key("partial_rotary_factor").and_then(|v| v.as_f64()).filter(|&r| r < 1.0) {
        f.push(match ascend {
            false => format!("--rotary-percent {r:?}"),
            true => format!("--partial-rotary-factor {r:?}"),
        });
    }
    f
}

/// Gated DeltaNet's head counts and widths, under the flag names Megatron-LM and MindSpeed-LLM share.
fn linear_shape_flags(l: &crate::model::LinearAttention) -> String {
    format!(
        "--linear-key-head-dim {} --linear-value-head-dim {} --linear-num-key-heads {} --linear-num-value-heads {}",
        l.key_head_dim, l.value_head_dim, l.key_heads, l.value_heads
    )
}

/// The attention's flags: grouped queries, the head size, q/k/v biases and q/k norms (GQA), or
/// MLA's ranks and head sizes.
fn attention_flags(attention: &Attention) -> Vec<String> {
    let mut f = Vec::new();
    match *attention {
        Attention::Gqa { n_heads, n_kv_heads, head_dim, qkv_bias, qk_norm, .. } => {
            if n_kv_heads != n_heads {
                f.push(format!("--group-query-attention --num-query-groups {n_kv_heads}"));
            }
            f.push(format!("--kv-channels {head_dim}"));
            if qkv_bias {
                f.push("--add-qkv-bias".to_owned());
            }
            if qk_norm {
                f.push("--qk-layernorm".to_owned());
            }
        }
        Attention::Mla {
            q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, ..
        } => {
            // DeepSeek's latent norms (`q_a_layernorm`, `kv_a_layernorm`): Megatron's MLA layer spec
            // builds `q_layernorm` and `kv_layernorm` only with `--qk-layernorm`
            // (megatron/core/models/gpt/gpt_layer_specs.py), as MindSpeed-LLM's DeepSeek-V3 scripts set it.
            f.push("--multi-latent-attention --qk-layernorm".to_owned());
            if let Some(q) = q_lora_rank {
                f.push(format!("--q-lora-rank {q}"));
            }
            f.push(format!("--kv-lora-rank {kv_lora_rank}"));
            f.push(format!("--qk-head-dim {qk_nope_head_dim} --qk-pos-emb-head-dim {qk_rope_head_dim}"));
            f.push(format!("--v-head-dim {v_head_dim}"));
        }
    }
    f
}

/// How the router weighs the k experts a token goes to, as the config's `norm_topk_prob` says
/// (transformers' Qwen2-MoE and Qwen3-MoE: the top k probabilities renormalized, or their share of
/// the softmax over every expert). Megatron-LM renormalizes unless told `--moe-router-pre-softmax`
/// (softmax over every expert, then the top k: `topk_softmax_with_capacity`,
/// megatron/core/transformer/moe/moe_utils.py); MindSpeed-LLM keeps the share unless told
/// `--norm-topk-prob`, as its DeepSeek-V3 scripts and MindSpeed-RL's `configs/model/qwen3_30b_a3b.yaml`
/// set it. A sigmoid router (DeepSeek-V3's `scoring_func`) has no softmax to move on Megatron-LM.
fn router_weights_flag(ascend: bool, key: &dyn Fn(&str) -> Option<serde_json::Value>) -> Option<String> {
    let renormalized = key("norm_topk_prob")?.as_bool()?;
    let sigmoid = key("scoring_func").is_some_and(|v| v.as_str() == Some("sigmoid"));
    match (ascend, renormalized) {
        (true, true) => Some("--norm-topk-prob".to_owned()),
        (false, false) if !sigmoid => Some("--moe-router-pre-softmax".to_owned()),
        _ => None,
    }
}

/// DeepSeek-V3's router (transformers' `DeepseekV3TopkRouter`, 5.6.0): sigmoid scores, a bias per
/// expert added for choosing them (`e_score_correction_bias`), the best `topk_group` of `n_group`
/// groups, weights scaled by `routed_scaling_factor` (8, 4 and 2.5 in `DeepseekV3Config`): the
/// Megatron-LM and MindSpeed-LLM flags of those names, as MindSpeed-LLM's DeepSeek-V3 scripts set
/// them (`examples/mcore/deepseek3/pretrain_deepseek3_671b_4k_ptd.sh`).
fn deepseek_v3_router_flags(key: &dyn Fn(&str) -> Option<serde_json::Value>) -> String {
    let number = |k: &str, default: f64| key(k).and_then(|v| v.as_f64()).unwrap_or(default);
    format!(
        "--moe-router-score-function sigmoid --moe-router-enable-expert-bias --moe-router-num-groups {} \
         --moe-router-group-topk {} --moe-router-topk-scaling-factor {}",
        number("n_group", 8.0),
        number("topk_group", 4.0),
        number("routed_scaling_factor", 2.5)
    )
}

/// DeepSeek-V2's router (transformers 5.6.0 `DeepseekV2Moe.route_tokens_to_experts`): a softmax
/// over every expert, with `group_limited_greedy` the best `topk_group` of `n_group` groups by
/// their best expert, the top k of those; weights × `routed_scaling_factor` (16 on DeepSeek-V2, 1
/// on V2-Lite). MindSpeed-LLM has that router by name (`--moe-router-load-balancing-type
/// group_limited_greedy`, `group_limited_greedy_topKgating` in `mindspeed_llm/core/transformer/moe/router.py`),
/// as its DeepSeek-V2 script sets it (`tests/pipeline/legacy/deepseek2/deepseek_v2_mcore_tp1_pp1_ep8.sh`:
/// 3 of 8 groups, × 16). Megatron-LM scores a group by the sum of its best topk ÷ group_topk
/// experts rather than its best one (`group_limited_topk`, megatron/core/transformer/moe/moe_utils.py,
/// core_v0.19.0): the nearest it has, from the same groups.
fn deepseek_v2_router_flags(
    ascend: bool,
    groups: Option<GroupLimit>,
    key: &dyn Fn(&str) -> Option<serde_json::Value>,
) -> Vec<String> {
    let mut f = Vec::new();
    if let Some(GroupLimit { groups, top_groups }) = groups {
        if ascend {
            f.push("--moe-router-load-balancing-type group_limited_greedy".to_owned());
        }
        f.push(format!("--moe-router-num-groups {groups} --moe-router-group-topk {top_groups}"));
    }
    let scaling = key("routed_scaling_factor").and_then(|v| v.as_f64()).filter(|s| *s != 1.0);
    // MindSpeed's group-limited router asks for the factor even at 1 (`_validate_group_limited_greedy`).
    if let Some(s) = scaling.or(groups.and(ascend.then_some(1.0))) {
        f.push(format!("--moe-router-topk-scaling-factor {s}"));
    }
    f
}

/// YaRN (the config's `rope_scaling` of `"type"` or `"rope_type"` `"yarn"`: frequencies stretched
/// `factor`-fold past `original_max_position_embeddings`, attention scaled by the ratio of
/// `yarn_get_mscale(factor, mscale)` to `yarn_get_mscale(factor, mscale_all_dim)`, defaults 1 and 0
/// as transformers' `_compute_yarn_parameters` takes them), as the launch file's flags.
///
/// Megatron-LM (core_v0.19.0): MLA reads `--rotary-scaling-factor`, `--mscale` and
/// `--mscale-all-dim` and takes 4,096 positions and betas 32 and 1 from `MLATransformerConfig`,
/// whose own defaults argparse's (factor 1, mscale-all-dim 0) replace, as Megatron-LM's
/// `examples/post_training/modelopt/conf/deepseek-ai/DeepSeek-V2-Lite.sh` and
/// `examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh` write them; other attention takes
/// `--position-embedding-type yarn` and the `--yarn-*` flags besides (`_apply_yarn_config_from_args`,
/// `megatron/training/argument_utils.py`). MindSpeed-LLM names every value for any attention, as its
/// DeepSeek scripts do (`examples/mcore/deepseek3/pretrain_deepseek3_671b_4k_ptd.sh`, `ROPE_ARGS`).
fn yarn_flags(ascend: bool, mla: bool, key: &dyn Fn(&str) -> Option<serde_json::Value>) -> Option<String> {
    let scaling = key("rope_scaling")?;
    let kind = scaling.get("rope_type").or_else(|| scaling.get("type"))?;
    if kind != "yarn" {
        return None;
    }
    let number = |k: &str| scaling.get(k).and_then(serde_json::Value::as_f64);
    let factor = number("factor")?;
    let (mscale, all_dim) = (number("mscale").unwrap_or(1.0), number("mscale_all_dim").unwrap_or(0.0));
    let original = scaling.get("original_max_position_embeddings").and_then(serde_json::Value::as_u64);
    let (original, beta_fast, beta_slow) =
        (original.unwrap_or(4096), number("beta_fast").unwrap_or(32.0), number("beta_slow").unwrap_or(1.0));
    Some(match (ascend, mla) {
        (false, true) => {
            format!("--rotary-scaling-factor {factor} --mscale {mscale} --mscale-all-dim {all_dim}")
        }
        // transformers rounds YaRN's correction range outward unless `truncate` is false
        // (`_compute_yarn_parameters`, gpt-oss's config), as Megatron-LM does unless told
        // `--no-yarn-correction-range-round-to-int`.
        (false, false) => format!(
            "--rotary-scaling-factor {factor} --yarn-original-max-position-embeddings {original} \
             --yarn-beta-fast {beta_fast} --yarn-beta-slow {beta_slow} --mscale {mscale} --mscale-all-dim {all_dim}{}",
            match scaling.get("truncate").and_then(serde_json::Value::as_bool) {
                Some(false) => " --no-yarn-correction-range-round-to-int",
                _ => "",
            }
        ),
        // `--beta-fast`, `--beta-slow` and the positions are whole numbers (`type=int`).
        (true, _) => format!(
            "--rope-scaling-type yarn --rope-scaling-factor {factor} --rope-scaling-mscale {mscale} \
             --rope-scaling-mscale-all-dim {all_dim} --rope-scaling-original-max-position-embeddings {original} \
             --beta-fast {} --beta-slow {}",
            beta_fast.round() as i64,
            beta_slow.round() as i64,
        ),
    })
}

/// Whether the model's `rope_scaling` is LongRoPE: Phi-3's `"longrope"`, or `"su"`, which
/// `Phi3Config._rope_scaling_adjustment` reads as it (transformers 4.57.1).
pub fn uses_longrope(plan: &Plan) -> bool {
    plan.model.arch.family == Family::Phi3
        && hf_config(plan)
            .and_then(|c| crate::hf::config_value(&c, "rope_scaling"))
            .is_some_and(|scaling| is_longrope(&scaling))
}

fn is_longrope(scaling: &serde_json::Value) -> bool {
    let kind = scaling.get("rope_type").or_else(|| scaling.get("type")).and_then(serde_json::Value::as_str);
    matches!(kind, Some("longrope" | "su"))
}

/// LongRoPE (Phi-3.5-mini's and Phi-4-mini's `rope_scaling`): each rotated frequency divided by a
/// factor of its own, `short_factor`'s up to `original_max_position_embeddings` tokens and
/// `long_factor`'s past them, and cos and sin scaled by √(1 + ln s / ln original) for
/// s = max_position_embeddings / original (transformers `_compute_longrope_parameters`). MindSpeed-LLM
/// builds it as its Phi-3.5 scripts write it (`examples/mcore/phi35/pretrain_phi35_mini_A3_ptd.sh`
/// at c77308a1: `--rope-scaling-type longrope --longrope-freqs-type outer`, the original length,
/// and the lists as `--long-factor` and `--short-factor`, comma-separated); its
/// `rotary_pos_embedding.py` picks the list by `--seq-length` and the scale from
/// `--max-position-embeddings`, as transformers does. A config without the lists leaves them for
/// the script's user to set. Megatron-LM has no LongRoPE (`--position-embedding-type` takes
/// learned_absolute, rope, yarn, mrope, relative and none), nor has MindSpeed-RL's model config a
/// key for the lists: rule `model.longrope_framework`.
fn longrope_flags(plan: &Plan, key: &dyn Fn(&str) -> Option<serde_json::Value>) -> Option<String> {
    if plan.framework != crate::plan::Framework::MindSpeedLlm || plan.model.arch.family != Family::Phi3 {
        return None;
    }
    let scaling = key("rope_scaling").filter(is_longrope)?;
    // Each factor as the number it is: nothing but digits, signs, points and exponents reaches the
    // script.
    let list = |name: &str, var: &str| -> String {
        let numbers = scaling.get(name).and_then(serde_json::Value::as_array).and_then(|items| {
            items.iter().map(|v| v.as_f64().map(|x| format!("{x:?}"))).collect::<Option<Vec<_>>>()
        });
        match numbers {
            Some(numbers) if !numbers.is_empty() => numbers.join(","),
            _ => format!(
                "\"${{{var}:?set {var} to rope_scaling.{name} from the model config.json, comma-separated}}\""
            ),
        }
    };
    let original = key("original_max_position_embeddings").and_then(|v| v.as_u64()).unwrap_or(4096);
    Some(format!(
        "--rope-scaling-type longrope --longrope-freqs-type outer \
         --rope-scaling-original-max-position-embeddings {original} --long-factor {} --short-factor {}",
        list("long_factor", "LONG_FACTOR"),
        list("short_factor", "SHORT_FACTOR"),
    ))
}

/// The positions: learned, or rotary with its base and Llama-3.1 frequency scaling. `key` reads the
/// model's config.json.
fn position_flags(plan: &Plan, ascend: bool, key: &dyn Fn(&str) -> Option<serde_json::Value>) -> Vec<String> {
    let arch = &plan.model.arch;
    let mut f = Vec::new();
    match arch.learned_positions {
        0 => {
            // Unknown from the shape alone: the script refuses to run until it is set, rather than
            // silently train with Megatron's default.
            let theta = key("rope_theta").map(|v| rotary_base(&v)).unwrap_or_else(|| {
                "\"${ROTARY_BASE:?set ROTARY_BASE to rope_theta from the model config.json}\"".to_owned()
            });
            let mla = matches!(arch.attention, Attention::Mla { .. });
            let yarn = yarn_flags(ascend, mla, key);
            // Megatron-LM's YaRN outside MLA is a position type of its own.
            let kind = if yarn.is_some() && !ascend && !mla { "yarn" } else { "rope" };
            f.push(format!("--position-embedding-type {kind} --rotary-base {theta}"));
            f.extend(partial_rotary_flags(plan, ascend, key));
            f.extend(yarn);
            f.extend(longrope_flags(plan, key));
            // Llama-3.1/3.2 frequency scaling: Megatron's `--use-rope-scaling` (low/high frequency
            // factors 1 and 4 and original length 8192 built in); MindSpeed-LLM names every value.
            if let Some(scaling) = key("rope_scaling").filter(|r| r["rope_type"] == "llama3") {
                let factor = scaling["factor"].as_f64().unwrap_or(8.0);
                match ascend {
                    false => f.push(format!("--use-rope-scaling --rope-scaling-factor {factor}")),
                    true => f.push(format!(
                        "--rope-scaling-type llama3 --rope-scaling-factor {factor} --low-freq-factor {} \
                         --high-freq-factor {} --original-max-position-embeddings {}",
                        scaling["low_freq_factor"].as_f64().unwrap_or(1.0),
                        scaling["high_freq_factor"].as_f64().unwrap_or(4.0),
                        scaling["original_max_position_embeddings"].as_u64().unwrap_or(8192),
                    )),
                }
            }
        }
        _ => f.push("--position-embedding-type learned_absolute".to_owned()),
    }
    f
}

/// GLM's rotary embedding (`glm`, `glm4`, `glm4_moe`): on the first `partial_rotary_factor` of
/// each head's dimensions (0.5, the configs' default), the rest passed through — Megatron's
/// `--rotary-percent` — and for GLM-4 and GLM-4-0414 on interleaved pairs (`rotate_half` takes
/// `x[..., 0::2]` and `x[..., 1::2]`, transformers models/glm/modeling_glm.py and glm4), Megatron's
/// `--rotary-interleaved`; GLM-4.5 rotates halves (models/glm4_moe/modeling_glm4_moe.py), as
/// THUDM's slime builds it (`scripts/models/glm4.5-355B-A32B.sh`: `--rotary-percent 0.5`).
/// Without them Megatron rotates every dimension of a head, another model than the checkpoint.
/// MindSpeed-LLM's scripts turn its rope fusion off, as its GLM-4.5 scripts do
/// (`examples/mcore/glm45`), and Megatron core 0.12.1 under it refuses the interleaved rotation
/// with the fusion (`validate_args`: "--rotary-interleaved does not work with rope_fusion");
/// Megatron-LM core_v0.19.0 fuses both (Transformer Engine 2.3 or later); MindSpeed's own fused
/// rotation (`--use-fused-rotary-pos-emb`) takes both too, the passed-through dimensions split off
/// first and interleaved pairs as its mode 1 (`apply_rotary_pos_emb_bshd`,
/// mindspeed/core/models/common/embeddings/rotary_pos_embedding.py). MindSpeed-RL's model config
/// has neither key (`model.rotary_mindspeed_rl`).
///
/// Phi-3's (`phi3`) turns the first `partial_rotary_factor` of each head (1 by default; Phi-4-mini
/// 0.75) in halves, `rotate_half` over the rotated part (transformers `Phi3Attention`,
/// models/phi3/modeling_phi3.py): `--rotary-percent` alone, which both fusions take.
fn partial_rotary_flags(
    plan: &Plan,
    ascend: bool,
    key: &dyn Fn(&str) -> Option<serde_json::Value>,
) -> Vec<String> {
    let family = plan.model.arch.family;
    if plan.framework == crate::plan::Framework::MindSpeedRl {
        return Vec::new();
    }
    if family == Family::Phi3 {
        return phi_rotary_share(key("partial_rotary_factor"))
            .map(|share| format!("--rotary-percent {share:?}"))
            .into_iter()
            .collect();
    }
    if !family.rotates_part_of_each_head() {
        return Vec::new();
    }
    let mut f = Vec::new();
    let factor = key("partial_rotary_factor").and_then(|v| v.as_f64()).unwrap_or(0.5);
    if factor < 1.0 {
        f.push(format!("--rotary-percent {factor:?}"));
    }
    if family != Family::Glm4Moe {
        f.push("--rotary-interleaved".to_owned());
    }
    if ascend {
        f.push("--no-rope-fusion".to_owned());
    }
    f
}

/// Whether the model's rotary embedding turns only part of each head's dimensions, or pairs them
/// otherwise than Megatron's default: GLM's always (`partial_rotary_flags`), Phi-3's where its
/// config's `partial_rotary_factor` is under 1 (Phi-4-mini). What a launch file without
/// `--rotary-percent` trains differently (rule `model.rotary_mindspeed_rl`).
pub fn rotates_part_of_each_head(plan: &Plan) -> bool {
    match plan.model.arch.family {
        Family::Phi3 => phi_rotary_share(
            hf_config(plan).and_then(|c| crate::hf::config_value(&c, "partial_rotary_factor")),
        )
        .is_some(),
        family => family.rotates_part_of_each_head(),
    }
}

/// Phi-3's rotated share of each head where it is part of one: its `partial_rotary_factor` (1 in
/// `Phi3Config`) under 1.
fn phi_rotary_share(factor: Option<serde_json::Value>) -> Option<f64> {
    factor.and_then(|v| v.as_f64()).filter(|&share| 0.0 < share && share < 1.0)
}

/// The MoE kernel flags (`moe` section): grouped GEMM and the dispatcher on one line, as trainplan
/// has always written them, then permute fusion and the EP overlap. Megatron-LM names them
/// `--moe-permute-fusion` and `--overlap-moe-expert-parallel-comm` (core_v0.19.0 `arguments.py`);
/// MindSpeed (`ascend`, MindSpeed-LLM and MindSpeed-RL) `--use-fused-moe-token-permute-and-unpermute`
/// (`mindspeed/features_manager/fusions/fused_moe_permute.py`) and `--moe-alltoall-overlap-comm`
/// (`mindspeed/features_manager/moe/moe_alltoall_overlap.py`).
fn moe_kernel_flags(plan: &Plan, ascend: bool) -> Vec<String> {
    let m = &plan.moe;
    // MindSpeed's LoRA on experts takes the sequence all-to-all alone ("Lora in the moe only
    // enable the alltoall_seq", `validate_args`, mindspeed_llm/features_manager/finetune/lora.py;
    // MindSpeed-RL's actor runs the same feature).
    let dispatcher = match ascend && plan.trains_lora() {
        true => "alltoall_seq",
        false => m.dispatcher.wire(),
    };
    let dispatcher = format!("--moe-token-dispatcher-type {dispatcher}");
    let mut f = vec![match m.grouped_gemm {
        true => format!("--moe-grouped-gemm {dispatcher}"),
        false => dispatcher,
    }];
    if m.permute_fusion {
        f.push(
            if ascend { "--use-fused-moe-token-permute-and-unpermute" } else { "--moe-permute-fusion" }
                .to_owned(),
        );
    }
    if m.overlap_ep_comm {
        f.push(
            if ascend { "--moe-alltoall-overlap-comm" } else { "--overlap-moe-expert-parallel-comm" }
                .to_owned(),
        );
    }
    f
}

/// `rope_theta` as Megatron's `--rotary-base`, which is declared `type=int`
/// (`megatron/training/arguments.py`, `_add_network_size_args`): `1000000.0` is written `1000000`,
/// since argparse refuses `1000000.0` for an int. Every published θ is a whole number; one that
/// is not is rounded, the nearest base Megatron can take.
pub fn rotary_base(theta: &serde_json::Value) -> String {
    match theta.as_u64() {
        Some(n) => n.to_string(),
        None => match theta.as_f64() {
            Some(x) if x.is_finite() && 0.0 < x => format!("{}", x.round() as u64),
            _ => theta.to_string(),
        },
    }
}

/// The layers per pipeline stage when the plan asks for uneven stages and the layers need them.
pub fn uneven_layout(plan: &Plan) -> Option<Vec<u64>> {
    crate::layout::uneven_sizes(plan.model.arch.n_layers, u64::from(plan.parallel.pp.get()))
}

/// Parallelism, memory and schedule flags (`megatron/training/arguments.py`: `ModelParallelConfig`,
/// the distributed-optimizer and recompute arguments).
/// On MindSpeed (`ascend`), TP communication overlap is CoC, not Transformer Engine's userbuffers.
pub fn parallel_flags(plan: &Plan, ascend: bool) -> Vec<String> {
    let p = &plan.parallel;
    let mut f = vec![
        format!("--tensor-model-parallel-size {}", p.tp),
        format!("--pipeline-model-parallel-size {}", p.pp),
    ];
    f.extend(pipeline_split_flags(plan, ascend));
    f.push(format!("--context-parallel-size {}", p.cp));
    f.extend(cp_algo_flag(plan, ascend));
    if plan.model.arch.moe.is_some() {
        f.extend(expert_flags(plan, ascend));
    }
    let switches = memory_switches(plan, ascend);
    if !switches.is_empty() {
        f.push(switches.join(" "));
    }
    f.extend(recompute_flags(plan, ascend));
    f
}

/// How context parallelism exchanges, where the plan differs from the framework's default ring:
/// Megatron-LM `--cp-comm-type a2a` (megatron/training/arguments.py at core_v0.19.0; one type for
/// every layer), MindSpeed-LLM `--context-parallel-algo ulysses_cp_algo`
/// (mindspeed/features_manager/context_parallel/ulysses_context_parallel.py).
fn cp_algo_flag(plan: &Plan, ascend: bool) -> Option<String> {
    match (plan.parallel.cp_algo, ascend) {
        (CpAlgo::Ring, _) => None,
        (CpAlgo::AllToAll, false) => Some("--cp-comm-type a2a".to_owned()),
        (CpAlgo::AllToAll, true) => Some("--context-parallel-algo ulysses_cp_algo".to_owned()),
    }
}

/// How the layers split over the pipeline: VPP (as a layout string, chunks per rank or layers per
/// chunk), MTP, the embedding and loss in the split, and uneven stages.
fn pipeline_split_flags(plan: &Plan, ascend: bool) -> Vec<String> {
    let p = &plan.parallel;
    let mut f = Vec::new();
    // The embedding and the loss count as a layer each in the split (`arguments.py`).
    let accounted = plan.model.arch.n_layers + if p.account_embedding_loss { 2 } else { 0 };
    let layout = p.uneven_layers.then(|| uneven_layout(plan)).flatten();
    let listed = p.pipeline_layout.as_deref().filter(|_| ascend);
    let listed = listed.and_then(|text| crate::layout::listed_stage_sizes(text, u64::from(p.pp.get())));
    if let Some(sizes) = listed {
        // A layout of one stage per rank is MindSpeed-LLM's own list of layers per stage.
        let sizes: Vec<String> = sizes.iter().map(u64::to_string).collect();
        f.push(format!("--num-layer-list {}", sizes.join(",")));
    } else if let Some(text) = &p.pipeline_layout {
        // The layout names every stage and so VPP; no other split flag may join it (`arguments.py`,
        // `TransformerConfig.__post_init__`). Its `|`, `(` and `*` need quotes.
        f.push(format!("--pipeline-model-parallel-layout {}", super::shell::quote(text)));
    } else if 1 < p.vpp.get() && layout.is_some() && !ascend {
        // Uneven stages with VPP name the chunks per rank, not the layers per chunk (`arguments.py`:
        // "please use --num-virtual-stages-per-pipeline-rank … when enable uneven pipeline parallelism").
        f.push(format!("--num-virtual-stages-per-pipeline-rank {}", p.vpp));
    } else if 1 < p.vpp.get() {
        // VPP = (layers / PP) / layers-per-virtual-stage (`arguments.py`).
        let per_stage = accounted / u64::from(p.pp.get()) / u64::from(p.vpp.get());
        f.push(format!("--num-layers-per-virtual-pipeline-stage {}", per_stage.max(1)));
    }
    if 0 < plan.mtp_layers {
        // Multi-token prediction (megatron/core/transformer/multi_token_prediction.py).
        f.push(format!("--mtp-num-layers {}", plan.mtp_layers));
    }
    let layout = layout.filter(|_| p.pipeline_layout.is_none());
    if p.account_embedding_loss && p.pipeline_layout.is_none() {
        f.push("--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split".to_owned());
    }
    if let Some(sizes) = layout {
        // Uneven stages (layout::stage_layers): Megatron names the first and last stage's layers
        // (`--decoder-first/last-pipeline-num-layers`, `TransformerConfig`); MindSpeed-LLM lists every
        // stage (`--num-layer-list`, mindspeed_llm/features_manager/pipeline_parallel/num_layer_list.py).
        match ascend {
            true => f.push(format!(
                "--num-layer-list {}",
                sizes.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
            )),
            false => f.push(format!(
                "--decoder-first-pipeline-num-layers {} --decoder-last-pipeline-num-layers {}",
                sizes[0],
                sizes[sizes.len() - 1]
            )),
        }
    }
    f
}

/// An MoE model's expert sizes, token dropping and the flex dispatcher's backend.
fn expert_flags(plan: &Plan, ascend: bool) -> Vec<String> {
    let p = &plan.parallel;
    let mut f =
        vec![format!("--expert-model-parallel-size {} --expert-tensor-parallel-size {}", p.ep, p.etp)];
    // Token dropping (`--moe-expert-capacity-factor`, `--moe-pad-expert-input-to-capacity`:
    // Megatron-LM and MindSpeed-LLM's core 0.12.1 parser) and the flex backend (Megatron-LM only,
    // rule moe.flex_framework).
    let m = &plan.moe;
    if let Some(c) = m.capacity_factor {
        f.push(format!("--moe-expert-capacity-factor {c}"));
    }
    if m.pad_to_capacity {
        f.push("--moe-pad-expert-input-to-capacity".to_owned());
    }
    if m.dispatcher == crate::plan::MoeDispatcher::Flex && !ascend {
        f.push("--moe-flex-dispatcher-backend deepep".to_owned());
    }
    f
}

/// The switches on one line: sequence parallelism, the distributed optimizer, optimizer offload,
/// FSDP, the communication overlaps, bf16 gradients and fp8 parameters.
fn memory_switches(plan: &Plan, ascend: bool) -> Vec<String> {
    use crate::plan::Fsdp;
    let p = &plan.parallel;
    let mut switches = Vec::new();
    let mut on = |s: &str| switches.push(s.to_owned());
    if p.sequence_parallel {
        on("--sequence-parallel");
    }
    // Megatron FSDP runs on the distributed optimizer whether asked or not (`validate_args` turns
    // it on); FSDP2 refuses it (rule fsdp.torch).
    if p.distributed_optimizer {
        on("--use-distributed-optimizer");
    }
    // Optimizer offload, with the precision-aware optimizer Megatron-LM requires for it
    // (`validate_args`, megatron/training/arguments.py @5be9626; rule
    // parallel.offload_needs_distributed_optimizer); `--optimizer-offload-fraction` keeps its default,
    // 1.0: all of the optimizer on the host, as memory/states.rs counts it.
    if p.offload_optimizer {
        on("--optimizer-cpu-offload --use-precision-aware-optimizer");
    }
    match p.fsdp {
        Fsdp::None => {}
        Fsdp::Optim | Fsdp::OptimGrads | Fsdp::OptimGradsParams => {
            on(&format!("--use-megatron-fsdp --data-parallel-sharding-strategy {}", p.fsdp.wire()))
        }
        // FSDP2 refuses gradient accumulation fusion, which is on by default.
        Fsdp::Torch => on("--use-torch-fsdp2 --no-gradient-accumulation-fusion"),
    }
    if p.overlap_grad_reduce {
        on("--overlap-grad-reduce");
    }
    if p.overlap_param_gather {
        on("--overlap-param-gather");
    }
    if p.grad_reduce_bf16 {
        on("--grad-reduce-in-bf16");
    }
    if p.fp8_param_gather {
        on("--fp8-param-gather");
    }
    if p.tp_comm_overlap {
        // MindSpeed: `--use-ascend-coc --coc-parallel-num 2`
        // (MindSpeed docs/zh/features/communication-over-computation.md).
        on(if ascend { "--use-ascend-coc --coc-parallel-num 2" } else { "--tp-comm-overlap" });
    }
    switches
}

/// Recomputation (selective with its modules, or full with its method, layers and whether the
/// checkpoints are split over TP) and Megatron-LM's activation offloading.
fn recompute_flags(plan: &Plan, ascend: bool) -> Vec<String> {
    let mut f = Vec::new();
    let r = &plan.recompute;
    match r.granularity {
        RecomputeGranularity::None => {}
        // `--recompute-modules` when not Megatron's default `core_attn` (transformer_config.py);
        // MindSpeed-LLM's Megatron (core 0.12.1) knows every module but `shared_experts`.
        RecomputeGranularity::Selective => match r.modules == crate::plan::RecomputeModules::DEFAULT {
            true => f.push("--recompute-granularity selective".to_owned()),
            false => {
                let mut modules = r.modules;
                if ascend {
                    modules.shared_experts = false;
                }
                // No module: selective recomputation reruns nothing, as no recomputation does
                // (the flag takes one name or more).
                if modules != crate::plan::RecomputeModules::NONE {
                    f.push(format!(
                        "--recompute-granularity selective --recompute-modules {}",
                        modules.list().join(" ")
                    ));
                }
            }
        },
        RecomputeGranularity::Full => {
            let method = match r.method {
                RecomputeMethod::Uniform => "uniform",
                RecomputeMethod::Block => "block",
            };
            f.push(format!(
                "--recompute-granularity full --recompute-method {method} --recompute-num-layers {}",
                r.num_layers
            ));
            // Each checkpoint's input split over the TP ranks (validate_args: full granularity only).
            if r.distribute_saved_activations {
                f.push("--distribute-saved-activations".to_owned());
            }
        }
    }
    // Activation offloading: Megatron-LM only (`--cpu-offloading-num-layers`, arguments.py).
    if plan.framework == crate::plan::Framework::Megatron && 0 < r.cpu_offload_layers {
        f.push(format!("--cpu-offloading-num-layers {}", r.cpu_offload_layers));
    }
    f
}

/// The script.
pub fn script(plan: &Plan, header: &[String]) -> EmittedFile {
    let slug = model_slug(plan);
    let mut text = script_opening(
        header,
        "Run on every node with NODE_RANK set (0 … NUM_NODES − 1); MASTER_ADDR is node 0.",
    );
    let p = &plan.parallel;
    // Required by Megatron's TP/CP communication ordering before Blackwell (`validate_args` in
    // megatron/training/arguments.py asserts it).
    // FSDP asserts CUDA_DEVICE_MAX_CONNECTIONS is not 1 (`validate_args`).
    if (1 < p.tp.get() || 1 < p.cp.get()) && p.fsdp == crate::plan::Fsdp::None {
        text.push_str("export CUDA_DEVICE_MAX_CONNECTIONS=1\n\n");
    }
    text.push_str(&node_vars(plan, false, "NUM_NODES", "GPUS_PER_NODE", "localhost"));
    text.push_str(&path_vars(plan, &slug));
    text.push_str(&distributed_args("NUM_NODES", "GPUS_PER_NODE"));
    text.push_str(&bash_array("MODEL_ARGS", &model_flags(plan, false)));
    text.push_str(&bash_array("PARALLEL_ARGS", &parallel_flags(plan, false)));
    text.push_str(&bash_array("TRAINING_ARGS", &training_flags(plan)));
    text.push_str(&bash_array(
        "DATA_ARGS",
        &[
            "--data-path \"$DATA_PATH\" --split 99,1,0".to_owned(),
            "--tokenizer-type HuggingFaceTokenizer --tokenizer-model \"$TOKENIZER_MODEL\"".to_owned(),
        ],
    ));
    text.push_str(&bash_array(
        "LOGGING_ARGS",
        &[
            "--log-interval 10 --log-throughput --eval-interval 1000 --eval-iters 10".to_owned(),
            "--save-interval 1000 --save \"$CHECKPOINT_PATH\" --load \"$CHECKPOINT_PATH\" --ckpt-format torch_dist".to_owned(),
        ],
    ));
    text.push_str("\ntorchrun \"${DISTRIBUTED_ARGS[@]}\" pretrain_gpt.py \\\n");
    text.push_str("  \"${MODEL_ARGS[@]}\" \"${PARALLEL_ARGS[@]}\" \"${TRAINING_ARGS[@]}\" \"${DATA_ARGS[@]}\" \"${LOGGING_ARGS[@]}\"\n");
    EmittedFile { name: format!("train_{}.sh", slug.replace('.', "_")), kind: FileKind::Shell, text }
}

/// The paths: the checkpoint, the tokenizer, the data.
fn path_vars(plan: &Plan, slug: &str) -> String {
    let launch = &plan.launch;
    let checkpoint = match launch.output_dir.is_empty() {
        true => format!("/ckpt/{slug}"),
        false => launch.output_dir.clone(),
    };
    let data = match launch.dataset.is_empty() {
        true => "/data/corpus_text_document".to_owned(),
        false => launch.dataset.clone(),
    };
    let mut text = format!(
        "CHECKPOINT_PATH={}   # Megatron (torch_dist) checkpoint, converted from HF\n",
        quote(&checkpoint)
    );
    text.push_str(&format!("TOKENIZER_MODEL={}   # HF tokenizer\n", quote(&model_path(plan))));
    text.push_str(&format!(
        "DATA_PATH={}   # prefix of .bin/.idx from tools/preprocess_data.py\n\n",
        quote(&data)
    ));
    text
}

/// The batch, the optimizer, the precision, the attention kernel and Megatron-LM's own SFT.
fn training_flags(plan: &Plan) -> Vec<String> {
    let b = &plan.batch;
    let precision = match plan.precision {
        Precision::Bf16 => "--bf16".to_owned(),
        Precision::Fp16 => "--fp16".to_owned(),
        Precision::Fp8 => {
            "--bf16 --fp8-format hybrid --fp8-amax-history-len 1024 --fp8-amax-compute-algo max".to_owned()
        }
        // Blackwell's block-scaled recipes (Transformer Engine MXFP8 and NVFP4).
        Precision::Mxfp8 => "--bf16 --fp8-format e4m3 --fp8-recipe mxfp8".to_owned(),
        Precision::Nvfp4 => "--bf16 --fp4-format e2m1 --fp4-recipe nvfp4".to_owned(),
        Precision::Fp32 => String::new(),
    };
    let mut training = vec![
        format!("--micro-batch-size {} --global-batch-size {}", b.micro_batch, b.global_batch),
        "--train-iters 100000 --lr 1.5e-4 --min-lr 1.5e-5 --lr-decay-style cosine --lr-warmup-iters 2000"
            .to_owned(),
        "--weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.95 --clip-grad 1.0".to_owned(),
    ];
    if !precision.is_empty() {
        training.push(precision);
    }
    // The attention kernel the plan counts (`AttnBackend` in megatron/core/transformer/enums.py,
    // `--attention-backend`): FlashAttention, cuDNN's fused attention where the plan says SDPA
    // (PyTorch's SDPA runs the same fused kernels), or the unfused softmax(QKᵀ)V that keeps the
    // score matrix, as memory/activations.rs counts eager attention.
    training.push(format!(
        "--attention-backend {}",
        match plan.attention {
            crate::plan::AttentionImpl::Flash => "flash",
            crate::plan::AttentionImpl::Sdpa => "fused",
            crate::plan::AttentionImpl::Eager => "unfused",
        }
    ));
    if plan.method == Method::SftFull {
        // Megatron-LM's own SFT (`--sft`: pretrain_gpt.py builds an SFTDataset of packed
        // conversations; `_add_sft_args` in megatron/training/arguments.py), from the loaded
        // weights with a fresh optimizer and iteration count (`--finetune`).
        training.push("--sft --finetune".to_owned());
    }
    training
}
