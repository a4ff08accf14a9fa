//! The parallel sizes on the Megatron path against the cluster and the model (`validate_args` in
//! megatron/training/arguments.py, `initialize_model_parallel` in megatron/core/parallel_state.py,
//! `TransformerConfig.__post_init__` in megatron/core/transformer/transformer_config.py): the world
//! against TP·PP·CP, heads and query groups against TP, experts against EP, sequence parallelism and
//! context parallelism against the sequence and, by all-to-all, the heads (MindSpeed's
//! `mindspeed/features_manager/context_parallel/` where it replaces Megatron's check).

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx, fix::gcd, nearest_divisor, nearest_multiple};
use crate::model::Family;
use crate::plan::{CpAlgo, Framework};
use crate::report::{Code, Severity};

/// The world against TP·PP·CP, and the heads and query groups against TP.
pub(super) fn megatron_world_and_heads(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { world, tp, pp, cp, heads, kv_heads, .. } = cx;
    if !world.is_multiple_of(tp * pp * cp) {
        // `validate_args`, `initialize_model_parallel`: world % (TP·PP·CP) == 0.
        let fix = nearest_divisor(world / (tp * cp).min(world).max(1), pp);
        acc.push(
            Error,
            Code::ParallelWorld,
            &[
                ("world", world.to_string()),
                ("tp", tp.to_string()),
                ("pp", pp.to_string()),
                ("cp", cp.to_string()),
            ],
            Some((Field::ParallelPp, Value::from(fix))),
        );
    }
    if !heads.is_multiple_of(tp) {
        // `TransformerConfig.__post_init__`: heads % TP == 0.
        acc.push(
            Error,
            Code::ParallelHeadsTp,
            &[("heads", heads.to_string()), ("tp", tp.to_string())],
            Some((Field::ParallelTp, Value::from(nearest_divisor(heads, tp)))),
        );
    } else if !kv_heads.is_multiple_of(tp) && !tp.is_multiple_of(kv_heads) {
        // `TransformerConfig.__post_init__`: query groups a multiple or a divisor of TP (core ≥ 0.16;
        // MindSpeed, on core 0.12: a multiple).
        acc.push(
            Error,
            Code::ParallelKvHeadsTp,
            &[("kv_heads", kv_heads.to_string()), ("tp", tp.to_string())],
            Some((Field::ParallelTp, Value::from(nearest_divisor(kv_heads, tp)))),
        );
    }
}

/// Expert parallelism against the model and the world, and sequence parallelism with TP.
pub(super) fn megatron_experts_and_sequence(cx: &Ctx, acc: &mut Acc) {
    use Severity::{Error, Note, Warning};
    let &Ctx { plan, arch, p, world, tp, pp, ep, etp, .. } = cx;
    if 1 < ep {
        // `validate_args`, `TransformerConfig`: experts % EP == 0; `initialize_model_parallel`:
        // world % (ETP·EP·PP) == 0.
        match &arch.moe {
            None => acc.push(
                Error,
                Code::ParallelEpDense,
                &[("ep", ep.to_string())],
                Some((Field::ParallelEp, Value::from(1))),
            ),
            Some(moe) if !moe.n_experts.is_multiple_of(ep) => acc.push(
                Error,
                Code::ParallelExpertsEp,
                &[("experts", moe.n_experts.to_string()), ("ep", ep.to_string())],
                Some((Field::ParallelEp, Value::from(nearest_divisor(moe.n_experts, ep)))),
            ),
            Some(_) if !world.is_multiple_of(etp * ep * pp) => acc.push(
                Error,
                Code::ParallelWorldEp,
                &[
                    ("world", world.to_string()),
                    ("etp", etp.to_string()),
                    ("ep", ep.to_string()),
                    ("pp", pp.to_string()),
                ],
                Some((Field::ParallelEp, Value::from(nearest_divisor(world / (etp * pp).max(1), ep)))),
            ),
            Some(_) => {}
        }
        if 1 < tp && !p.sequence_parallel {
            acc.push(
                Warning,
                Code::ParallelMoeTpNeedsSp,
                &[],
                Some((Field::ParallelSequenceParallel, Value::from(true))),
            );
        }
    }
    if p.sequence_parallel && tp == 1 {
        // `validate_args`: SP without TP is dropped.
        acc.push(
            Note,
            Code::ParallelSpWithoutTp,
            &[],
            Some((Field::ParallelSequenceParallel, Value::from(false))),
        );
    }
    if p.tp_comm_overlap && !p.sequence_parallel && plan.framework == Framework::Megatron {
        acc.push(
            Error,
            Code::ParallelTpOverlapNeedsSp,
            &[],
            Some((Field::ParallelSequenceParallel, Value::from(true))),
        );
    }
}

/// Context parallelism against the sequence, and by all-to-all against the heads: what each
/// algorithm splits must divide by CP.
/// A model with learned attention sinks (gpt-oss, `--softmax-type learnable`) on a Megatron-family
/// framework: MindSpeed has no flag for them; on Megatron-LM, Transformer Engine runs them in
/// cuDNN's fused attention or unfused, never in FlashAttention, and under context parallelism in
/// the fused attention over all-to-all alone (`get_attention_backend`,
/// transformer_engine/pytorch/attention/dot_product_attention/utils.py, "Filter: Softmax type").
pub(super) fn megatron_attention_sinks(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, p, cp, mindspeed, .. } = cx;
    if !plan.model.arch.attention_sinks {
        return;
    }
    if mindspeed {
        let framework = [("framework", plan.framework.wire().to_owned())];
        acc.push(
            Error,
            Code::ParallelSinksMindspeed,
            &framework,
            Some((Field::Framework, Value::from("megatron"))),
        );
        return;
    }
    if plan.attention == crate::plan::AttentionImpl::Flash {
        let sdpa = crate::plan::AttentionImpl::Sdpa.wire();
        acc.push(Error, Code::ParallelSinksFlash, &[], Some((Field::Attention, Value::from(sdpa))));
    }
    if 1 < cp && p.cp_algo != CpAlgo::AllToAll {
        let a2a = CpAlgo::AllToAll.wire();
        acc.push(Error, Code::ParallelSinksCpRing, &[], Some((Field::ParallelCpAlgo, Value::from(a2a))));
    }
}

/// Sliding-window attention on a Megatron-family framework (gpt-oss's windows are its sinks' rules'
/// too, which say the same). Megatron-LM hands the window to Transformer Engine, whose context
/// parallelism takes it over all-to-all or all-gather only, not the ring
/// (`attn_forward_func_with_cp`, transformer_engine/pytorch/attention/dot_product_attention/
/// context_parallel.py: "Context parallelism does not support sliding window attention with
/// cp_comm_type"; Megatron-Bridge's `MistralBridge` sets `cp_comm_type = "a2a"` with the window).
/// MindSpeed-LLM refuses context parallelism when the sequence is longer than the window
/// (`ContextParallelFeature.validate_args`, mindspeed_llm/features_manager/context_parallel/
/// context_parallel_feature.py). MindSpeed-RL's model config has no key for the window, so its
/// actor attends to the whole sequence beyond it.
pub(super) fn megatron_sliding_window(cx: &Ctx, acc: &mut Acc) {
    let &Ctx { plan, p, cp, seq, .. } = cx;
    let Some(window) = plan.model.arch.sliding_window.filter(|_| !plan.model.arch.attention_sinks) else {
        return;
    };
    let size = [("window", window.size.to_string())];
    match plan.framework {
        Framework::Megatron if 1 < cp && p.cp_algo != CpAlgo::AllToAll => {
            let a2a = Value::from(CpAlgo::AllToAll.wire());
            acc.push(Severity::Error, Code::ParallelWindowCpRing, &[], Some((Field::ParallelCpAlgo, a2a)));
        }
        Framework::MindSpeedLlm if 1 < cp && window.size < seq => {
            acc.push(
                Severity::Error,
                Code::ParallelWindowCpMindspeed,
                &size,
                Some((Field::ParallelCp, Value::from(1))),
            );
        }
        Framework::MindSpeedRl if window.size < seq => {
            acc.push(Severity::Warning, Code::ParallelWindowMindspeedRl, &size, None);
        }
        _ => {}
    }
}

/// GLM's rotary embedding (half of each head; GLM-4's in interleaved pairs) and Phi-4-mini's (three
/// quarters of each head) on MindSpeed-RL, whose model config has no key for either
/// (`rotary_percent`, `rotary_interleaved`: MindSpeed-RL's `MegatronConfig`,
/// core/data/flags/mindspeed-rl.tsv): its actor rotates every dimension, another model than the
/// checkpoint (`emit::megatron::partial_rotary_flags` writes both elsewhere).
pub(super) fn mindspeed_rl_rotary(cx: &Ctx, acc: &mut Acc) {
    let plan = cx.plan;
    if plan.framework == Framework::MindSpeedRl && crate::emit::megatron::rotates_part_of_each_head(plan) {
        acc.push(Severity::Warning, Code::ModelRotaryMindspeedRl, &[], None);
    }
    // LongRoPE (Phi-3.5-mini, Phi-4-mini): MindSpeed-LLM's script builds it
    // (`emit::megatron::longrope_flags`); Megatron-LM has no such position embedding, and
    // MindSpeed-RL's model config no key for its factor lists, without which MindSpeed-LLM's
    // `validate_args` refuses it (mindspeed_llm/features_manager/common/rotary.py).
    if matches!(plan.framework, Framework::Megatron | Framework::MindSpeedRl)
        && crate::emit::megatron::uses_longrope(plan)
    {
        let framework = [("framework", plan.framework.wire().to_owned())];
        acc.push(Severity::Warning, Code::ModelLongropeFramework, &framework, None);
    }
    // GLM-4-0414's norms after attention and after the MLP (`Glm4DecoderLayer`'s
    // `post_self_attn_layernorm`, `post_mlp_layernorm`): Megatron-LM's flags have none
    // (core/data/flags/megatron-lm.tsv), and MindSpeed-LLM's `--post-norm` builds them only in its
    // Gemma 2 and Grok layer specs (`TransformerLayerWithPostNorm`,
    // mindspeed_llm/tasks/models/transformer/transformer_layer.py).
    let launched =
        matches!(plan.framework, Framework::Megatron | Framework::MindSpeedLlm | Framework::MindSpeedRl);
    // Gemma's layers (transformers `Gemma2DecoderLayer`, `Gemma3DecoderLayer`: GeLU-tanh gating,
    // four norms, embeddings scaled by √h, soft-capped logits in Gemma 2): Megatron-LM's flags have
    // neither the activation nor the norms; MindSpeed-LLM builds Gemma 2 from its own spec
    // (`emit::megatron::gemma2_flags`), not Gemma 3.
    let gemma = matches!(plan.model.arch.family, Family::Gemma2 | Family::Gemma3);
    if launched && (plan.model.arch.post_norms || gemma) && !crate::emit::megatron::builds_gemma2(plan) {
        let framework = [("framework", plan.framework.wire().to_owned())];
        let code = if gemma { Code::ModelGemmaMegatron } else { Code::ModelPostNormsMegatron };
        acc.push(Severity::Warning, code, &framework, None);
    }
    // Qwen2-MoE's gate on its shared expert has no key there either (`emit::megatron::shared_expert_flags`).
    let gated =
        plan.model.arch.moe.as_ref().is_some_and(|m| m.shared_expert_gate && 0 < m.shared_intermediate_size);
    if gated && plan.framework == Framework::MindSpeedRl {
        acc.push(Severity::Warning, Code::ModelSharedGateMindspeedRl, &[], None);
    }
}

/// Megatron-LM's multi-latent attention takes YaRN's factor and mscales from its command line but
/// not its betas (`MLATransformerConfig.beta_fast` 32 and `beta_slow` 1, megatron/core/transformer/
/// transformer_config.py at core_v0.19.0, have no flag; `--yarn-beta-fast` sets the non-MLA
/// `yarn_beta_fast` alone, megatron/training/argument_utils.py): a model with others (Kimi K2's 1
/// and 1) trains with another rotary ramp than its checkpoint's. MindSpeed-LLM writes them
/// (`--beta-fast`, `--beta-slow`).
pub(super) fn megatron_mla_yarn_betas(cx: &Ctx, acc: &mut Acc) {
    let plan = cx.plan;
    let mla = matches!(plan.model.arch.attention, crate::model::Attention::Mla { .. });
    if acc.lean || plan.framework != crate::plan::Framework::Megatron || !mla {
        return;
    }
    // A catalog model's betas read from its config once, not on every check.
    static CATALOG: std::sync::OnceLock<Vec<(&'static str, Option<Betas>)>> = std::sync::OnceLock::new();
    let betas = match &plan.model.spec {
        crate::plan::ModelSpec::Catalog(id) => CATALOG
            .get_or_init(|| {
                let of =
                    |c: &crate::catalog::CatalogConfig| yarn_betas(&serde_json::from_str(c.config).ok()?);
                crate::catalog::CONFIGS.iter().map(|c| (c.id, of(c))).collect()
            })
            .iter()
            .find(|(known, _)| known == id)
            .and_then(|(_, betas)| *betas),
        crate::plan::ModelSpec::HfConfig(config) => yarn_betas(config),
    };
    if let Some((fast, slow)) = betas.filter(|&betas| betas != (32.0, 1.0)) {
        let args = [("beta_fast", fast.to_string()), ("beta_slow", slow.to_string())];
        acc.push(Severity::Warning, Code::ModelMlaYarnBetas, &args, None);
    }
}

/// YaRN's `beta_fast` and `beta_slow`.
type Betas = (f64, f64);

/// A config's YaRN betas (`rope_scaling` of type `yarn`; 32 and 1 where it leaves them out).
fn yarn_betas(config: &Value) -> Option<Betas> {
    let scaling = crate::hf::config_value(config, "rope_scaling")?;
    let kind = scaling.get("rope_type").or_else(|| scaling.get("type")).and_then(Value::as_str);
    let beta = |key: &str, default: f64| scaling.get(key).and_then(Value::as_f64).unwrap_or(default);
    (kind == Some("yarn")).then(|| (beta("beta_fast", 32.0), beta("beta_slow", 1.0)))
}

pub(super) fn megatron_context_parallel(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { p, tp, cp, seq, heads, kv_heads, mindspeed, .. } = cx;
    if cp <= 1 {
        return;
    }
    let all_to_all = p.cp_algo == CpAlgo::AllToAll;
    if all_to_all && mindspeed {
        // MindSpeed runs Megatron's `validate_args` with CP 1 (mindspeed/arguments.py at 028de58)
        // and checks Ulysses itself: seq % CP == 0 (`UlyssesContextParallelFeature.validate_args`,
        // mindspeed/features_manager/context_parallel/ulysses_context_parallel.py).
        if !seq.is_multiple_of(cp) {
            acc.push(
                Error,
                Code::ParallelCpA2aSeq,
                &[("seq_len", seq.to_string()), ("cp", cp.to_string())],
                Some((Field::BatchSeqLen, Value::from(nearest_multiple(seq, cp)))),
            );
        }
    } else if !seq.is_multiple_of(2 * cp) {
        // Megatron-LM `validate_args`: seq % (2·CP) == 0 whatever `--cp-comm-type`; MindSpeed's ring
        // the same (`ContextParallelFeature.validate_args`, `megatron_cp_algo`).
        acc.push(
            Error,
            Code::ParallelCpSeq,
            &[("seq_len", seq.to_string()), ("cp", cp.to_string())],
            Some((Field::BatchSeqLen, Value::from(nearest_multiple(seq, 2 * cp)))),
        );
    }
    if !all_to_all {
        return;
    }
    // All-to-all hands each CP rank heads ÷ CP of its TP rank's heads: MindSpeed checks
    // heads % (CP·TP) == 0 (`UlyssesContextParallelFeature.validate_args`); Transformer Engine
    // asserts the query heads and the key/value heads of the rank divide by CP
    // (`AttnFuncWithCPAndQKVOA2A.forward`, transformer_engine/pytorch/attention/
    // dot_product_attention/context_parallel.py at v2.18: "cp_comm_type='a2a' requires num_heads %
    // cp_size == 0 for Q, K, V"), a rank holding at least one key/value head (Megatron-LM
    // `Attention.__init__`, megatron/core/transformer/attention.py at core_v0.19.0). MindSpeed
    // repeats too few key/value heads instead (`UlyssesContextAttention.forward`).
    if !heads.is_multiple_of(tp * cp) {
        acc.push(
            Error,
            Code::ParallelCpA2aHeads,
            &[("heads", heads.to_string()), ("tp", tp.to_string()), ("cp", cp.to_string())],
            Some((Field::ParallelCpAlgo, Value::from(CpAlgo::Ring.wire()))),
        );
    } else if !mindspeed && !kv_heads.is_multiple_of(tp * cp) {
        acc.push(
            Error,
            Code::ParallelCpA2aKvHeads,
            &[("kv_heads", kv_heads.to_string()), ("tp", tp.to_string()), ("cp", cp.to_string())],
            Some((Field::ParallelCpAlgo, Value::from(CpAlgo::Ring.wire()))),
        );
    }
}

/// Gated DeltaNet layers (Qwen3-Next's `linear_attention`). Megatron-LM splits their key and value
/// heads over TP × CP ("linear_num_key_heads must be a multiple of tp_cp_size", and the value heads
/// alike: `TransformerConfig.__post_init__`, megatron/core/transformer/transformer_config.py at
/// core_v0.19.0). MindSpeed-LLM's module runs at TP 1 and CP 1 alone ("does not support tensor
/// parallel and context parallel", `qwen3_next_gated_deltanet_attention.py` at c77308a).
/// MindSpeed-RL's model config and VeRL's Megatron engine have no key that builds them
/// (`emit::megatron::linear_attention_flags` writes them for Megatron-LM and MindSpeed-LLM alone);
/// VeRL's FSDP engine runs the HF model.
pub(super) fn linear_attention(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let Some(l) = cx.arch.linear_attention else { return };
    let (plan, tp, cp) = (cx.plan, cx.tp, cx.cp);
    match plan.framework {
        Framework::Megatron
            if !(l.key_heads.is_multiple_of(tp * cp) && l.value_heads.is_multiple_of(tp * cp)) =>
        {
            let fix = match l.key_heads.is_multiple_of(cp) {
                true => (Field::ParallelTp, Value::from(gcd(tp, l.key_heads / cp))),
                false => (Field::ParallelCp, Value::from(1)),
            };
            let args = [
                ("key_heads", l.key_heads.to_string()),
                ("value_heads", l.value_heads.to_string()),
                ("tp_cp", (tp * cp).to_string()),
            ];
            acc.push(Error, Code::ParallelLinearAttentionHeads, &args, Some(fix));
        }
        Framework::MindSpeedLlm if 1 < tp || 1 < cp => {
            let field = if 1 < tp { Field::ParallelTp } else { Field::ParallelCp };
            acc.push(Error, Code::ParallelLinearAttentionMindspeed, &[], Some((field, Value::from(1))));
        }
        Framework::MindSpeedRl | Framework::VerlMegatron => {
            let framework = [("framework", plan.framework.wire().to_owned())];
            let fix = (Field::Framework, Value::from(Framework::Verl.wire()));
            acc.push(Error, Code::ModelLinearAttentionFramework, &framework, Some(fix));
        }
        _ => {}
    }
}
