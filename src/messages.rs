//! Core errors and findings in the user's language. The core names what is wrong as data (an enum
//! variant, a finding code with arguments); this module puts it in words.

use trainplan_core::emit::flags::{FlagError, ValueType};
use trainplan_core::emit::import::{ImportError, ModelOrigin};
use trainplan_core::hf::ConfigError;
use trainplan_core::permalink::PermalinkError;
use trainplan_core::plan::PlanFileError;
use trainplan_core::report::Finding;

use crate::i18n::{Key, Lang, fill, t};

/// A refused config.json, in words.
pub fn config_error(lang: Lang, err: &ConfigError) -> String {
    match err {
        ConfigError::NotJson(detail) => fill(t(lang, Key::cfg_not_json), &[("detail", detail)]),
        ConfigError::NotObject => t(lang, Key::cfg_not_object).to_owned(),
        ConfigError::Missing(key) => fill(t(lang, Key::cfg_missing), &[("key", key)]),
        ConfigError::WrongType { key, expected } => {
            let expected = match *expected {
                "a whole number" => t(lang, Key::expected_whole_number),
                "a string" => t(lang, Key::expected_string),
                "true or false" => t(lang, Key::expected_bool),
                "a list of layer indices" => t(lang, Key::expected_layer_list),
                other => other,
            };
            fill(t(lang, Key::cfg_wrong_type), &[("key", key), ("expected", expected)])
        }
        ConfigError::OutOfRange { key, value, min, max } => fill(
            t(lang, Key::cfg_out_of_range),
            &[("key", key), ("value", value), ("min", &min.to_string()), ("max", &max.to_string())],
        ),
        ConfigError::Inconsistent(detail) => fill(t(lang, Key::cfg_inconsistent), &[("detail", detail)]),
        ConfigError::TooLarge => t(lang, Key::cfg_too_large).to_owned(),
    }
}

/// A refused plan, in words: configs in the user's language, the rest as the core words them.
pub fn plan_error(lang: Lang, err: &PlanFileError) -> String {
    match (lang, err) {
        (_, PlanFileError::Config(err)) => config_error(lang, err),
        (Lang::Zh, PlanFileError::OutOfRange { field, expected }) => {
            format!("{field} 必须{}", expected_zh(expected))
        }
        (_, other) => other.to_string(),
    }
}

/// The core's range phrases in Chinese; a phrase without a rule stays as the core words it.
fn expected_zh(expected: &str) -> String {
    if let Some(range) = expected.strip_prefix("from ")
        && let Some((lo, hi)) = range.split_once(" to ")
    {
        return format!("在 {lo} 到 {hi} 之间");
    }
    match expected {
        "more than 0 and at most 1" => "大于 0 且不超过 1".to_owned(),
        "0, 1, 2 or 3" => "为 0、1、2 或 3".to_owned(),
        other => format!("为 {other}"),
    }
}

/// A permalink that could not be opened, in words.
pub fn link_error(lang: Lang, err: &PermalinkError) -> String {
    match err {
        PermalinkError::NotAPermalink => t(lang, Key::link_not_trainplan).to_owned(),
        PermalinkError::NewerVersion(version) => fill(t(lang, Key::link_newer), &[("version", version)]),
        PermalinkError::Corrupt(_) => t(lang, Key::link_corrupt).to_owned(),
        PermalinkError::Plan(err) => {
            fill(t(lang, Key::link_invalid_plan), &[("reason", &plan_error(lang, err))])
        }
    }
}

/// A launch file that could not be read, in words.
pub fn import_error(lang: Lang, err: &ImportError) -> String {
    match err {
        ImportError::Unrecognized => t(lang, Key::import_unrecognized).to_owned(),
        ImportError::BadValue(key, expected) => {
            let expected = match *expected {
                "a whole number" => t(lang, Key::import_expected_whole_number),
                "a positive whole number" => t(lang, Key::import_expected_positive),
                "followed by a value" => t(lang, Key::import_expected_value),
                "full or selective" => t(lang, Key::import_expected_recompute),
                "dualpipev" => t(lang, Key::import_expected_schedule),
                "a number in (0, 1]" => t(lang, Key::import_expected_fraction),
                "0, 1, 2 or 3" => t(lang, Key::import_expected_zero_stage),
                other => other,
            };
            fill(t(lang, Key::import_bad_value), &[("key", key), ("expected", expected)])
        }
    }
}

/// A flag a framework's own parser would refuse, in words.
pub fn flag_error(lang: Lang, err: &FlagError) -> String {
    match err {
        FlagError::Unknown { flag, framework } => {
            fill(t(lang, Key::flag_unknown), &[("flag", flag), ("framework", framework)])
        }
        FlagError::SwitchWithValue { flag, value } => {
            fill(t(lang, Key::flag_switch_with_value), &[("flag", flag), ("value", value)])
        }
        FlagError::ValueCount { flag, expected, given } => {
            let expected = match expected.as_str() {
                "one value" => t(lang, Key::flag_one_value).to_owned(),
                "at most one value" => t(lang, Key::flag_at_most_one_value).to_owned(),
                "at least one value" => t(lang, Key::flag_at_least_one_value).to_owned(),
                other => match other.strip_suffix(" values") {
                    Some(n) => fill(t(lang, Key::flag_n_values), &[("n", n)]),
                    None => other.to_owned(),
                },
            };
            fill(
                t(lang, Key::flag_value_count),
                &[("flag", flag), ("expected", &expected), ("given", &given.to_string())],
            )
        }
        FlagError::BadType { flag, value, value_type } => {
            let ty = match value_type {
                ValueType::Int => t(lang, Key::flag_type_int),
                ValueType::Float => t(lang, Key::flag_type_float),
                ValueType::Str => t(lang, Key::flag_type_string),
                ValueType::Other(name) => name,
            };
            fill(t(lang, Key::flag_bad_type), &[("flag", flag), ("type", ty), ("value", value)])
        }
        FlagError::NotAChoice { flag, value, choices } => {
            fill(t(lang, Key::flag_not_a_choice), &[("flag", flag), ("choices", choices), ("value", value)])
        }
    }
}

/// How an import told the model, in words; `kept` is the model's name when it told none.
pub fn model_origin(lang: Lang, origin: &ModelOrigin, kept: &str) -> String {
    let name = |id: &str| trainplan_core::catalog::model(id).map_or(id, |m| m.name).to_owned();
    match origin {
        ModelOrigin::Named(id) => fill(t(lang, Key::launch_import_model_named), &[("model", &name(id))]),
        ModelOrigin::Matched { from, id } => {
            fill(t(lang, Key::launch_import_model_matched), &[("model", &name(id)), ("path", from)])
        }
        ModelOrigin::Shape(id) => fill(t(lang, Key::launch_import_model_shape), &[("model", &name(id))]),
        ModelOrigin::Built { name } => fill(t(lang, Key::launch_import_model_built), &[("model", name)]),
        ModelOrigin::Unknown => fill(t(lang, Key::launch_import_model_unknown), &[("model", kept)]),
    }
}

/// A finding, in words; a code this page has no words for falls back to the core's English message.
pub fn finding(lang: Lang, finding: &Finding) -> String {
    let key = match finding.code {
        "model.unknown_type" => Key::finding_model_unknown_type,
        "model.moe_layer_freq" => Key::finding_model_moe_layer_freq,
        "batch.divisible" => Key::rule_batch_divisible,
        "batch.few_microbatches" => Key::rule_batch_few_microbatches,
        "batch.vpp_microbatches" => Key::rule_batch_vpp_microbatches,
        "framework.mindspeed_on_nvidia" => Key::rule_framework_mindspeed_on_nvidia,
        "framework.rl_only" => Key::rule_framework_rl_only,
        "hf.distributed_optimizer" => Key::rule_hf_distributed_optimizer,
        "hf.no_model_parallel" => Key::rule_hf_no_model_parallel,
        "hw.no_bf16" => Key::rule_hw_no_bf16,
        "hw.no_fp8" => Key::rule_hw_no_fp8,
        "hw.tp_across_nodes" => Key::rule_hw_tp_across_nodes,
        "memory.does_not_fit" => Key::rule_memory_does_not_fit,
        "method.dpo_megatron" => Key::rule_method_dpo_megatron,
        "method.lora_megatron" => Key::rule_method_lora_megatron,
        "schedule.framework" => Key::rule_schedule_framework,
        "mindspeed.dualpipev_conflict" => Key::rule_mindspeed_dualpipev_conflict,
        "verl.lora_rank" => Key::rule_verl_lora_rank,
        "method.needs_rl_framework" => Key::rule_method_needs_rl_framework,
        "method.qlora_megatron" => Key::rule_method_qlora_megatron,
        "mindspeed.coc_lora" => Key::rule_mindspeed_coc_lora,
        "mindspeed.knob_ignored" => Key::rule_mindspeed_knob_ignored,
        "mindspeed.lora_moe_dispatcher" => Key::rule_mindspeed_lora_moe_dispatcher,
        "mindspeed.swap_attention_lora" => Key::rule_mindspeed_swap_attention_lora,
        "mindspeed_rl.bf16" => Key::rule_mindspeed_rl_bf16,
        "model.seq_too_long" => Key::rule_model_seq_too_long,
        "parallel.cp_seq" => Key::rule_parallel_cp_seq,
        "parallel.ep_dense" => Key::rule_parallel_ep_dense,
        "parallel.experts_ep" => Key::rule_parallel_experts_ep,
        "parallel.heads_tp" => Key::rule_parallel_heads_tp,
        "parallel.kv_heads_tp" => Key::rule_parallel_kv_heads_tp,
        "parallel.layers_pp" => Key::rule_parallel_layers_pp,
        "parallel.moe_tp_needs_sp" => Key::rule_parallel_moe_tp_needs_sp,
        "parallel.param_gather_needs" => Key::rule_parallel_param_gather_needs,
        "parallel.sp_without_tp" => Key::rule_parallel_sp_without_tp,
        "parallel.tp_overlap_needs_sp" => Key::rule_parallel_tp_overlap_needs_sp,
        "parallel.vpp_layers" => Key::rule_parallel_vpp_layers,
        "parallel.vpp_needs_pp" => Key::rule_parallel_vpp_needs_pp,
        "parallel.world" => Key::rule_parallel_world,
        "parallel.world_ep" => Key::rule_parallel_world_ep,
        "recompute.num_layers" => Key::rule_recompute_num_layers,
        "rl.engine_too_small" => Key::rule_rl_engine_too_small,
        "rl.gpu_memory_utilization" => Key::rule_rl_gpu_memory_utilization,
        "rl.rollout_tp" => Key::rule_rl_rollout_tp,
        "rl.rollout_tp_heads" => Key::rule_rl_rollout_tp_heads,
        "schedule.dualpipev_microbatches" => Key::rule_schedule_dualpipev_microbatches,
        "verl.ulysses" => Key::rule_verl_ulysses,
        "parallel.uneven_vpp" => Key::rule_parallel_uneven_vpp,
        "mindspeed.swap_optimizer" => Key::rule_mindspeed_swap_optimizer,
        "mindspeed.act_fn_layers" => Key::rule_mindspeed_act_fn_layers,
        "mindspeed.act_fn_full_block" => Key::rule_mindspeed_act_fn_full_block,
        "llamafactory.layers_ratio_ignored" => Key::rule_llamafactory_layers_ratio_ignored,
        "llamafactory.layers_ratio_upstream" => Key::rule_llamafactory_layers_ratio_upstream,
        "rl.mini_batch" => Key::rule_rl_mini_batch,
        "verl.mini_batch_split" => Key::rule_verl_mini_batch_split,
        "rl.max_model_len" => Key::rule_rl_max_model_len,
        "rl.max_num_batched_tokens" => Key::rule_rl_max_num_batched_tokens,
        "rl.token_budget" => Key::rule_rl_token_budget,
        "zero.offload_params_needs_3" => Key::rule_zero_offload_params_needs_3,
        _ => return finding.message.clone(),
    };
    let args: Vec<(&str, &str)> = finding.args.iter().map(|(k, v)| (*k, v.as_str())).collect();
    fill(t(lang, key), &args)
}

/// What a piece of advice does, and why; a code this page has no words for shows as itself.
pub fn advice(lang: Lang, code: &str) -> (String, String) {
    let (what, why) = match code {
        "distributed_optimizer" => (Key::advice_distributed_optimizer, Key::advice_why_distributed_optimizer),
        "overlap_grad_reduce" => (Key::advice_overlap_grad_reduce, Key::advice_why_overlap_grad_reduce),
        "sequence_parallel" => (Key::advice_sequence_parallel, Key::advice_why_sequence_parallel),
        "tp_comm_overlap" => (Key::advice_tp_comm_overlap, Key::advice_why_tp_comm_overlap),
        "ascend_coc" => (Key::advice_ascend_coc, Key::advice_why_ascend_coc),
        "zero_stage" => (Key::advice_zero_stage, Key::advice_why_zero_stage),
        "zero_stage_down" => (Key::advice_zero_stage_down, Key::advice_why_zero_stage_down),
        "zero_stage_3" => (Key::advice_zero_stage_3, Key::advice_why_zero_stage_3),
        "offload_optimizer" => (Key::advice_offload_optimizer, Key::advice_why_offload_optimizer),
        "offload_params" => (Key::advice_offload_params, Key::advice_why_offload_params),
        "recompute_selective" => (Key::advice_recompute_selective, Key::advice_why_recompute_selective),
        "recompute_full" => (Key::advice_recompute_full, Key::advice_why_recompute_full),
        "recompute_less" => (Key::advice_recompute_less, Key::advice_why_recompute_less),
        "swap_attention" => (Key::advice_swap_attention, Key::advice_why_swap_attention),
        "flash_attention" => (Key::advice_flash_attention, Key::advice_why_flash_attention),
        "micro_batch_up" => (Key::advice_micro_batch_up, Key::advice_why_micro_batch_up),
        "micro_batch_down" => (Key::advice_micro_batch_down, Key::advice_why_micro_batch_down),
        "more_microbatches" => (Key::advice_more_microbatches, Key::advice_why_more_microbatches),
        "interleave" => (Key::advice_interleave, Key::advice_why_interleave),
        "tp_in_node" => (Key::advice_tp_in_node, Key::advice_why_tp_in_node),
        "pp_over_tp" => (Key::advice_pp_over_tp, Key::advice_why_pp_over_tp),
        "stack_megatron" => (Key::advice_stack_megatron, Key::advice_why_stack_megatron),
        "cheap_together" => (Key::advice_cheap_together, Key::advice_why_cheap_together),
        "verl_ulysses" => (Key::advice_verl_ulysses, Key::advice_why_verl_ulysses),
        "rollout_tp_down" => (Key::advice_rollout_tp_down, Key::advice_why_rollout_tp_down),
        "rollout_tp_up" => (Key::advice_rollout_tp_up, Key::advice_why_rollout_tp_up),
        "max_num_seqs_up" => (Key::advice_max_num_seqs_up, Key::advice_why_max_num_seqs_up),
        "precision_fp8" => (Key::advice_precision_fp8, Key::advice_why_precision_fp8),
        "lora_all_targets" => (Key::advice_lora_all_targets, Key::advice_why_lora_all_targets),
        "search_best" => (Key::advice_search_best, Key::advice_why_search_best),
        _ => return (code.to_owned(), String::new()),
    };
    (t(lang, what).to_owned(), t(lang, why).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_errors_read_in_both_languages() {
        let err = trainplan_core::hf::import(r#"{"model_type": "my_decoder"}"#).unwrap_err();
        assert_eq!(config_error(Lang::En, &err), "config.json has no \"hidden_size\".");
        assert_eq!(config_error(Lang::Zh, &err), "config.json 缺少 \"hidden_size\"。");
        let err = trainplan_core::hf::import(r#"{"hidden_size": "big"}"#).unwrap_err();
        assert_eq!(config_error(Lang::Zh, &err), "\"hidden_size\" 必须是整数。");
    }

    #[test]
    fn every_core_finding_has_words() {
        let text = r#"{"model": {"hf_config": {"model_type": "x", "vocab_size": 10, "hidden_size": 8,
            "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
            "max_position_embeddings": 4096}}}"#;
        let report = trainplan_core::evaluate(&trainplan_core::Plan::from_json(text).unwrap());
        assert_eq!(report.findings.len(), 1);
        assert_eq!(
            finding(Lang::En, &report.findings[0]),
            "Unknown model_type \"x\": read as a Llama-like decoder."
        );
        assert!(finding(Lang::Zh, &report.findings[0]).contains("未知的 model_type"));
    }

    #[test]
    fn out_of_range_reads_in_both_languages() {
        let err =
            trainplan_core::Plan::from_json(r#"{"model": "gpt2", "parallel": {"tp": 100000}}"#).unwrap_err();
        assert_eq!(plan_error(Lang::En, &err), "parallel.tp must be from 1 to 65536");
        assert_eq!(plan_error(Lang::Zh, &err), "parallel.tp 必须在 1 到 65536 之间");
        let err =
            trainplan_core::Plan::from_json(r#"{"model": "gpt2", "rl": {"gpu_memory_utilization": 2}}"#)
                .unwrap_err();
        assert_eq!(plan_error(Lang::Zh, &err), "rl.gpu_memory_utilization 必须大于 0 且不超过 1");
    }

    #[test]
    fn every_rule_of_the_core_has_words() {
        // Every code the rules can emit has a translation: the core's source lists them.
        let source = include_str!("../core/src/rules.rs");
        let codes = source.lines().filter_map(|l| {
            let t = l.trim();
            let code = t.strip_prefix('"')?.strip_suffix("\",")?;
            code.contains('.').then_some(code)
        });
        let mut n = 0;
        for code in codes {
            let f = trainplan_core::report::Finding {
                severity: trainplan_core::report::Severity::Note,
                code: Box::leak(code.to_owned().into_boxed_str()),
                args: Default::default(),
                message: "untranslated".to_owned(),
                fix: None,
                make_valid: false,
            };
            assert_ne!(finding(Lang::Zh, &f), "untranslated", "{code} has no words");
            n += 1;
        }
        assert!(40 <= n, "{n} codes found");
    }

    #[test]
    fn every_advice_of_the_core_has_words() {
        for code in trainplan_core::advice::CODES {
            for lang in Lang::ALL {
                let (what, why) = advice(lang, code);
                assert_ne!(what, *code, "{code} has no words");
                assert!(!why.is_empty(), "{code} has no why");
            }
        }
    }

    #[test]
    fn import_errors_read_in_both_languages() {
        let import = |text: &str| {
            let current = trainplan_core::Plan::first_visit().to_file();
            trainplan_core::emit::import::import(text, &current).unwrap_err()
        };
        let err = import("hello: world");
        assert!(import_error(Lang::En, &err).starts_with("Not a launch file trainplan reads"));
        assert!(import_error(Lang::Zh, &err).starts_with("不是 trainplan 能读取的启动文件"));
        let err = import("torchrun pretrain_gpt.py --tensor-model-parallel-size x\n");
        assert_eq!(import_error(Lang::En, &err), "--tensor-model-parallel-size must be a whole number.");
        assert_eq!(import_error(Lang::Zh, &err), "--tensor-model-parallel-size 必须为整数。");
        let err = import("stage: sft\ncutoff_len: -3\n");
        assert_eq!(import_error(Lang::Zh, &err), "cutoff_len 必须为正整数。");
        // Every phrase the core's importer uses has words.
        let source = include_str!("../core/src/emit/import.rs");
        let mut n = 0;
        for chunk in source.split("ImportError::BadValue(").skip(1) {
            // The string literals up to the closing parenthesis: the last is what a value must be.
            let (mut depth, mut quoted, mut literals, mut literal) = (0, false, Vec::new(), String::new());
            for c in chunk.chars() {
                match (quoted, c) {
                    (true, '"') => {
                        quoted = false;
                        literals.push(std::mem::take(&mut literal));
                    }
                    (true, c) => literal.push(c),
                    (false, '"') => quoted = true,
                    (false, '(') => depth += 1,
                    (false, ')') if depth == 0 => break,
                    (false, ')') => depth -= 1,
                    _ => {}
                }
            }
            let Some(phrase) = literals.pop() else { continue };
            let err = ImportError::BadValue("k".to_owned(), Box::leak(phrase.clone().into_boxed_str()));
            let untranslated =
                fill(t(Lang::Zh, Key::import_bad_value), &[("key", "k"), ("expected", &phrase)]);
            assert_ne!(import_error(Lang::Zh, &err), untranslated, "{phrase} has no words");
            n += 1;
        }
        assert!(10 <= n, "{n} phrases found");
    }

    #[test]
    fn refused_flags_and_the_model_read_in_both_languages() {
        let current = trainplan_core::Plan::first_visit().to_file();
        let script = "torchrun pretrain_gpt.py --tensor-model-parallel-size 2 --rotary-base 1e6 --my-flag\n";
        let got = trainplan_core::emit::import::import(script, &current).unwrap();
        let zh: Vec<String> = got.refused.iter().map(|e| flag_error(Lang::Zh, e)).collect();
        assert_eq!(
            zh,
            ["--rotary-base 应为整数，却给了 1e6", "Megatron-LM core_v0.19.0 没有 --my-flag 这个参数"]
        );
        let en: Vec<String> = got.refused.iter().map(|e| flag_error(Lang::En, e)).collect();
        assert_eq!(en, got.refused.iter().map(ToString::to_string).collect::<Vec<_>>());
        assert_eq!(got.model, ModelOrigin::Unknown);
        assert_eq!(
            model_origin(Lang::En, &got.model, "Qwen2.5-7B"),
            "Model not identified: kept Qwen2.5-7B — pick the model."
        );
        assert_eq!(
            model_origin(Lang::Zh, &got.model, "Qwen2.5-7B"),
            "未能识别模型：保留了 Qwen2.5-7B——请选择模型。"
        );
        let matched =
            ModelOrigin::Matched { from: "/models/Qwen2.5-14B-Instruct".into(), id: "qwen2.5-14b".into() };
        assert_eq!(
            model_origin(Lang::En, &matched, ""),
            "Model: Qwen2.5-14B, matched from the directory /models/Qwen2.5-14B-Instruct."
        );
    }

    #[test]
    fn link_errors_read_in_both_languages() {
        let err = trainplan_core::permalink::decode("v9=abc").unwrap_err();
        assert_eq!(link_error(Lang::En, &err), "It was made by a newer version of trainplan (v9).");
        let err = trainplan_core::permalink::decode("v1=zz").unwrap_err();
        assert_eq!(link_error(Lang::Zh, &err), "链接已损坏：可能被截断或修改。");
    }
}
