//! MindSpeed-RL: the Hydra YAML in its layout (`mindspeed_rl/config_cls/*.py`, as the repo's
//! `configs/grpo_*.yaml`: `megatron_training`, `actor_config`, `rl_config`, `generate_config`), the
//! model block it loads from `configs/model/<name>.yaml`, and `launch.sh` with the Ray start
//! commands and `cli/train_grpo.py` or `cli/train_ppo.py`. Colocated actor/reference/rollout
//! (`use_integrated_worker: true`).

use super::megatron::model_flags;
use super::{EmittedFile, FileKind, comment, model_path, model_slug, node_vars, script_opening, yaml_str};
use crate::Plan;
use crate::plan::{CpAlgo, Method, Precision, RecomputeGranularity};

/// MindSpeed-RL's model name: `qwen2.5-7b` → `qwen25_7b` (the shipped `configs/model/` names).
fn model_name(plan: &Plan) -> String {
    model_slug(plan).replace('.', "").replace('-', "_")
}

/// Megatron flags as MindSpeed-RL's snake_case keys (`parse_args_from_config` turns them back):
/// `--num-layers 80` → `num_layers: 80`, a bare switch → `true`. Flags whose value the model's
/// config does not give (a `${…:?…}` guard) are left as a comment to fill in.
fn flags_to_yaml(flags: &[String], indent: &str) -> String {
    let words: Vec<&str> = flags.iter().flat_map(|f| f.split_whitespace()).collect();
    let mut out = String::new();
    let mut i = 0;
    while i < words.len() {
        let Some(flag) = words[i].strip_prefix("--") else {
            i += 1;
            continue;
        };
        let key = flag.replace('-', "_");
        // The run's YAML sets the sequence (prompt + response); the model block holds the shape only.
        if key == "seq_length" {
            i += 2;
            continue;
        }
        match words.get(i + 1).filter(|w| !w.starts_with("--")) {
            Some(v) if v.starts_with("\"${") => {
                // The guard's words run to the closing brace.
                let mut j = i + 1;
                while j < words.len() && !words[j].ends_with("}\"") {
                    j += 1;
                }
                out.push_str(&format!("{indent}# {key}: set from the model's config.json\n"));
                i = j + 1;
            }
            Some(v) => {
                out.push_str(&format!("{indent}{key}: {v}\n"));
                i += 2;
            }
            None => {
                out.push_str(&format!("{indent}{key}: true\n"));
                i += 1;
            }
        }
    }
    out
}

/// A `MegatronConfig` section that trains (the actor, a PPO critic): the model, its layout, a
/// constant learning rate with AdamW, and the checkpoint it starts from and saves to.
fn training_section(plan: &Plan, section: &str, name: &str, lr: &str, load: &str, save: &str) -> String {
    let p = &plan.parallel;
    let mut y = format!("\n{section}:\n");
    for (k, v) in [
        ("model", name.to_owned()),
        ("micro_batch_size", plan.batch.micro_batch.to_string()),
        ("tensor_model_parallel_size", p.tp.to_string()),
        ("pipeline_model_parallel_size", p.pp.to_string()),
        ("lr", lr.to_owned()),
        ("lr_decay_style", "constant".into()),
        ("min_lr", "0".into()),
        ("weight_decay", "0.01".into()),
        ("lr_warmup_fraction", "0.0".into()),
        ("clip_grad", "1.0".into()),
        ("adam_beta1", "0.9".into()),
        ("adam_beta2", "0.95".into()),
        ("finetune", "true".into()),
        ("load", yaml_str(load)),
        ("save", yaml_str(save)),
        ("no_load_optim", "true".into()),
        ("no_load_rng", "true".into()),
    ] {
        y.push_str(&format!("  {k}: {v}\n"));
    }
    y
}

/// The run's YAML, the model block, and `launch.sh`.
pub fn files(plan: &Plan, header: &[String]) -> Vec<EmittedFile> {
    let name = model_name(plan);
    let ppo = plan.method == Method::Ppo;
    // PPO has its own entry point and stage (`cli/train_ppo.py`, `stage: ray_ppo`, a
    // `critic_config` section: `parse_training_config` reads it unconditionally).
    let algo = if ppo { "ppo" } else { "grpo" };
    let config_name = format!("{algo}_{name}_{}npu", plan.cluster.n_devices());
    let mut y = comment(header);
    y.push_str(&format!("defaults:\n  - model:\n      - {name}\n\n"));
    y.push_str("megatron_training:\n");
    y.push_str(&megatron_training(plan, &name, algo));
    y.push_str(&megatron_memory(plan));
    y.push_str(&trained_sections(plan, &name, algo));
    y.push_str(&rl_config(plan, ppo));
    y.push_str(&generate_config(plan));
    vec![
        EmittedFile { name: format!("{config_name}.yaml"), kind: FileKind::Yaml, text: y },
        EmittedFile {
            name: format!("{name}.yaml"),
            kind: FileKind::Yaml,
            text: model_yaml(plan, header, &name),
        },
        EmittedFile {
            name: "launch.sh".to_owned(),
            kind: FileKind::Shell,
            text: launch(plan, header, algo, &config_name),
        },
    ]
}

/// `megatron_training`'s keys for the model, its kernels, precision, tokenizer, batch, sequence and
/// data, as the repo's configs write them.
fn megatron_training(plan: &Plan, name: &str, algo: &str) -> String {
    let launch = &plan.launch;
    let p = &plan.parallel;
    let rl = &plan.rl;
    let data = if launch.dataset.is_empty() { "./dataset/math_17k/data" } else { &launch.dataset };
    let mut y = String::new();
    let mut m = |k: &str, v: String| y.push_str(&format!("  {k}: {v}\n"));
    m("model", name.to_owned());
    m("use_mcore_models", "true".into());
    // MindSpeed's fused kernels follow the plan's switch; the rest as the repo's configs write them.
    let fused = p.fused_kernels.to_string();
    for (k, v) in [
        ("use_fused_rmsnorm", fused.as_str()),
        ("use_flash_attn", "true"),
        ("no_masked_softmax_fusion", "true"),
        ("attention_softmax_in_fp32", "true"),
        ("no_gradient_accumulation_fusion", "true"),
        ("use_fused_swiglu", fused.as_str()),
        ("use_fused_rotary_pos_emb", fused.as_str()),
    ] {
        m(k, v.into());
    }
    m("sequence_parallel", p.sequence_parallel.to_string());
    match plan.precision {
        Precision::Fp16 => m("fp16", "true".into()),
        _ => m("bf16", "true".into()),
    }
    m("use_distributed_optimizer", p.distributed_optimizer.to_string());
    m("tokenizer_type", "PretrainedFromHF".into());
    m("tokenizer_name_or_path", yaml_str(&model_path(plan)));
    m("global_batch_size", plan.batch.global_batch.to_string());
    m("seq_length", (rl.max_prompt_length.get() + rl.max_response_length.get()).to_string());
    m("save_interval", "100".into());
    m("train_iters", "500".into());
    m("stage", format!("ray_{algo}"));
    m("distributed_backend", "nccl".into());
    m("no_shared_storage", "true".into());
    m("dataset_additional_keys", "['labels',]".into());
    m("data_path", yaml_str(data));
    m("split", "100,0,0".into());
    m("seed", "1234".into());
    y
}

/// `megatron_training`'s keys for the layout, recomputation, swapping, packing, CoC and LoRA, each
/// only where the plan sets it.
fn megatron_memory(plan: &Plan) -> String {
    let p = &plan.parallel;
    let mut y = String::new();
    let mut m = |k: &str, v: String| y.push_str(&format!("  {k}: {v}\n"));
    if 1 < p.cp.get() {
        m("context_parallel_size", p.cp.to_string());
    }
    if p.cp_algo == CpAlgo::AllToAll {
        // MindSpeed's Ulysses (`MegatronConfig.context_parallel_algo`, mindspeed-rl.tsv); the ring
        // `megatron_cp_algo` is the default.
        m("context_parallel_algo", "ulysses_cp_algo".into());
    }
    let listed = p
        .pipeline_layout
        .as_deref()
        .and_then(|t| crate::layout::listed_stage_sizes(t, u64::from(p.pp.get())));
    let uneven = p.uneven_layers.then(|| super::megatron::uneven_layout(plan)).flatten();
    if let Some(sizes) = listed.or(uneven) {
        let list = sizes.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        m("num_layer_list", yaml_str(&list));
    }
    if plan.model.arch.moe.is_some() {
        m("expert_model_parallel_size", p.ep.to_string());
        if 1 < p.ep.get() {
            // Resharding to the rollout needs the experts whole on the TP × EP ranks ("To enable
            // training EP, you need to enable moe_tp_extend_ep and use GroupedMLP",
            // `vllm_weight_container.py`), which MindSpeed runs with the permutation's async
            // all-gathers (`MoETpExtendEpFeature.validate_args`); as in configs/grpo_qwen3_235b_a22b_A2.yaml.
            m("moe_tp_extend_ep", "true".into());
            m("moe_permutation_async_comm", "true".into());
        }
    }
    match plan.recompute.granularity {
        RecomputeGranularity::None => {}
        RecomputeGranularity::Selective => m("recompute_granularity", "selective".into()),
        RecomputeGranularity::Full => {
            m("recompute_granularity", "full".into());
            m("recompute_method", plan.recompute.method.wire().into());
            m("recompute_num_layers", plan.recompute.num_layers.to_string());
        }
    }
    if plan.recompute.activation_function {
        m("recompute_activation_function", "true".into());
    }
    if plan.recompute.swap_attention {
        m("swap_attention", "true".into());
    }
    if p.swap_optimizer {
        m("swap_optimizer", "true".into());
    }
    if plan.rl.remove_padding {
        // validate_rl_args: use_remove_padding needs reset_attention_mask, and with PP > 1
        // no_pad_to_seq_lengths (mindspeed_rl/config_cls/validate_config.py).
        m("reset_attention_mask", "true".into());
        if 1 < p.pp.get() {
            m("no_pad_to_seq_lengths", "true".into());
        }
    }
    if p.tp_comm_overlap {
        m("use_ascend_coc", "true".into());
    }
    if plan.trains_lora() {
        // MindSpeed-RL's LoRA (configs/grpo_lora_*.yaml): Megatron's fused linears, the
        // reference sharing the frozen backbone (`rl_config.share_backbone`).
        m("lora_r", plan.lora.rank.to_string());
        m("lora_alpha", plan.lora.alpha.to_string());
        let modules = super::mindspeed_llm::lora_modules(&plan.lora.targets);
        let list = modules.split(' ').map(yaml_str).collect::<Vec<_>>().join(", ");
        m("lora_target_modules", format!("[{list}]"));
    }
    y
}

/// `actor_config`, and for PPO `critic_config`: the sections that train, from the converted
/// weights to the plan's output directory.
fn trained_sections(plan: &Plan, name: &str, algo: &str) -> String {
    let p = &plan.parallel;
    let launch = &plan.launch;
    let save = if launch.output_dir.is_empty() {
        format!("./ckpt/{}_{algo}", model_slug(plan))
    } else {
        launch.output_dir.clone()
    };
    let load = format!("./model_weights/{name}_mcore_tp{}pp{}", p.tp, p.pp);
    let mut y = training_section(plan, "actor_config", name, "1e-6", &load, &save);
    if plan.method == Method::Ppo {
        // The critic: the actor's model and layout as a value model (configs/ppo_*_integrated.yaml).
        y.push_str(&training_section(plan, "critic_config", name, "5e-6", &load, &format!("{save}_critic")));
    }
    y
}

/// `rl_config`'s packed-row sizes: the file's own, then the update's, the actor's log-probabilities'
/// and the reference's, each of which MindSpeed-RL reads apart.
pub(crate) const PACKING_KEYS: [&str; 4] = [
    "max_packing_token_size",
    "update_max_packing_token_size",
    "actor_max_packing_token_size",
    "ref_max_packing_token_size",
];

/// `rl_config`: the integrated worker, the advantage estimator and KL, the batches, packing, the
/// rule reward, and the devices the actor (and critic) take.
fn rl_config(plan: &Plan, ppo: bool) -> String {
    let rl = &plan.rl;
    let mut y = "\nrl_config:\n".to_owned();
    let mut r = |k: &str, v: String| y.push_str(&format!("  {k}: {v}\n"));
    r("use_integrated_worker", "true".into());
    r("blocking", rl.blocking.to_string());
    r("adv_estimator", if ppo { "gae" } else { "group_norm" }.into());
    if ppo {
        r("gamma", "1.0".into());
        r("lam", "1.0".into());
        r("cliprange_value", "0.5".into());
    }
    if plan.trains_lora() {
        r("share_backbone", "true".into());
    }
    r("kl_penalty", "low_var_kl".into());
    r("kl_ctrl_type", "fixed".into());
    r("init_kl_coef", "0.001".into());
    r("mini_batch_size", rl.mini_batch_prompts(plan.batch.global_batch.get()).to_string());
    r("max_prompt_length", rl.max_prompt_length.to_string());
    r("epochs", "1".into());
    r("clip_ratio", "0.2".into());
    r("n_samples_per_prompt", rl.n_samples_per_prompt.to_string());
    // The old log-probabilities' and the reference's forwards, `temporary_micro_batch_size` around
    // each (mindspeed_rl/workers/integrated_worker.py at 05a90d7).
    let log_prob = rl.log_prob_micro(plan.batch.micro_batch.get()).to_string();
    r("actor_forward_micro_batch_size", log_prob.clone());
    r("ref_forward_micro_batch_size", log_prob);
    r("use_remove_padding", rl.remove_padding.to_string());
    r("use_dynamic_bsz", rl.dynamic_batch.to_string());
    // Read only with use_dynamic_bsz; written always, so the file carries the whole plan. Each role
    // packs to a size of its own, which `RLConfig` sets to 4,096 before it reads the file, whatever
    // `max_packing_token_size` says (mindspeed_rl/config_cls/rl_config.py at 05a90d7), and which
    // `BaseTrainingEngine` reads (`ref_`, `actor_` and `update_max_packing_token_size`,
    // mindspeed_rl/models/base/base_training_engine.py): all four are written, the forwards'
    // (`actor_`, `ref_`) the log-probabilities' own.
    let cp = plan.parallel.cp.get();
    let budget = rl.tokens_per_device(plan.framework, cp).to_string();
    let log_prob_budget = rl.log_prob_tokens_per_device(plan.framework, cp).to_string();
    let [file, update, actor, reference] = PACKING_KEYS;
    r(file, budget.clone());
    r(update, budget);
    r(actor, log_prob_budget.clone());
    r(reference, log_prob_budget);
    r("rule_reward", "true".into());
    r("verifier_function", if ppo { "[\"acc_for_ppo\"]" } else { "[\"math_17k_acc\"]" }.into());
    r("verifier_weight", "[1.0]".into());
    r("use_tensorboard", "true".into());
    y.push_str(&format!("  actor_resource:\n    num_npus: {}\n", plan.cluster.n_devices()));
    if ppo {
        y.push_str(&format!("  critic_resource:\n    num_npus: {}\n", plan.cluster.n_devices()));
    }
    y
}

/// `generate_config`: the vLLM engine (offloading the trained states while it runs, its TP, batch
/// and memory) and the sampling.
fn generate_config(plan: &Plan) -> String {
    let rl = &plan.rl;
    let mut y = "\ngenerate_config:\n".to_owned();
    let mut g = |k: &str, v: String| y.push_str(&format!("  {k}: {v}\n"));
    g("trust_remote_code", "true".into());
    g("offload_train_optimizer", "true".into());
    g("offload_train_grad", "true".into());
    g("offload_train_param", "true".into());
    g("infer_tensor_parallel_size", rl.rollout_tp.to_string());
    g("infer_pipeline_parallel_size", "1".into());
    // The engine spreads the experts over its TP × `infer_expert_parallel_size` ranks
    // (`vllm_weight_container.py`); `enable_expert_parallel` switches vLLM's expert parallelism on
    // (and `cli/train_grpo.py` sets `VLLM_DP_SIZE` from the EP).
    let ep = (rl.rollout_ep.get() / rl.rollout_tp.get()).max(1);
    g("infer_expert_parallel_size", ep.to_string());
    if 1 < ep {
        g("enable_expert_parallel", "true".into());
    }
    g("max_num_seqs", rl.max_num_seqs.to_string());
    g("max_model_len", rl.model_len().to_string());
    g("max_num_batched_tokens", rl.batched_tokens().to_string());
    g("enforce_eager", rl.enforce_eager.to_string());
    g("dtype", "\"bfloat16\"".into());
    g("gpu_memory_utilization", rl.gpu_memory_utilization_frac.to_string());
    y.push_str(&format!(
        "  sampling_config:\n    logprobs: 1\n    max_tokens: {}\n    top_p: 1.0\n    top_k: -1\n    min_p: 0.0\n    temperature: 1.0\n    detokenize: false\n",
        rl.max_response_length
    ));
    y
}

/// The model block (configs/model/<name>.yaml), from the model's config.json.
fn model_yaml(plan: &Plan, header: &[String], name: &str) -> String {
    let mut model = comment(header);
    model.push_str(&format!("{name}:\n"));
    model.push_str(&flags_to_yaml(&model_flags(plan, true), "  "));
    model.push_str(&format!(
        "  make_vocab_size_divisible_by: 1\n  padded_vocab_size: {}\n",
        plan.model.arch.vocab_size
    ));
    model
}

/// `launch.sh`: Ray's head on node 0, which trains once every node has joined; the others join it.
fn launch(plan: &Plan, header: &[String], algo: &str, config_name: &str) -> String {
    let mut sh = script_opening(
        header,
        "Copy the two YAML files to configs/ and configs/model/ in MindSpeed-RL, then run this on every node \
         with NODE_RANK and CURRENT_IP set; MASTER_ADDR is the head node (not localhost).",
    );
    sh.push_str("export HYDRA_FULL_ERROR=1\n");
    sh.push_str(&node_vars(plan, false, "NNODES", "NPUS_PER_NODE", "localhost"));
    sh.push_str("CURRENT_IP=${CURRENT_IP:?set CURRENT_IP to the address of this node}\n\n");
    sh.push_str("if [ \"$NODE_RANK\" = 0 ]; then\n");
    sh.push_str("  ray start --head --port 6766 --dashboard-host=\"$MASTER_ADDR\" --node-ip-address=\"$CURRENT_IP\" \\\n");
    sh.push_str("    --dashboard-port=8260 --resources=\"{\\\"NPU\\\": $NPUS_PER_NODE}\"\n");
    sh.push_str("  # Train once `ray status` counts every node's NPUs.\n");
    sh.push_str(
        "  until ray status 2>/dev/null | grep -q \"/$((NNODES * NPUS_PER_NODE)).0 NPU\"; do sleep 5; done\n",
    );
    sh.push_str(&format!("  python cli/train_{algo}.py --config-name {config_name}\n"));
    sh.push_str("else\n");
    sh.push_str("  ray start --address=\"$MASTER_ADDR:6766\" --resources=\"{\\\"NPU\\\": $NPUS_PER_NODE}\" --node-ip-address=\"$CURRENT_IP\"\n");
    sh.push_str("fi\n");
    sh
}
