//! The reverse of the emitters: a launch file a user already has — a Megatron-LM or MindSpeed-LLM
//! script, a LLaMA-Factory YAML, a DeepSpeed JSON, a VeRL override list, a MindSpeed-RL run YAML —
//! read onto a plan file,
//! with every key or flag it did not understand listed. The model is the catalog model whose
//! Hugging Face id the file names; shape flags are understood, not applied. A script's flags are
//! also checked against the ones its framework declares at the version trainplan records
//! ([`super::flags`]): a flag it does not declare, or a value its parser would refuse, is listed
//! with the reason.

use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

use super::flags::{self, FlagError, Table};
use crate::plan::{
    Framework, Method, PlanFile, Precision, RecomputeGranularity, RecomputeMethod, TargetsField,
};

/// What an import did.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// The plan file with the launch file's settings applied.
    pub file: PlanFile,
    /// The kind of file it was read as.
    pub kind: ConfigKind,
    /// Flags or keys it did not understand, in the order met: left out of the plan (for a script,
    /// whether or not its framework declares them; [`Imported::refused`] says which it does not).
    pub unknown: Vec<String>,
    /// The flags of a Megatron-LM or MindSpeed-LLM script its framework's own parser would refuse at
    /// the recorded version ([`flags::Table`]): not declared there, a switch given a value, a value
    /// count `nargs` does not allow, a value of the wrong type or outside the choices. Empty for
    /// other kinds of file.
    pub refused: Vec<FlagError>,
}

/// The kinds of launch file the import reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigKind {
    /// A Megatron-LM launch script (flags).
    Megatron,
    /// A MindSpeed-LLM launch script (Megatron flags with MindSpeed's).
    MindSpeedLlm,
    /// A LLaMA-Factory training YAML.
    LlamaFactory,
    /// A DeepSpeed JSON config.
    DeepSpeed,
    /// VeRL Hydra overrides.
    Verl,
    /// A MindSpeed-RL run YAML (`megatron_training`, `actor_config`, `rl_config`, `generate_config`).
    MindSpeedRl,
}

/// Why a text could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportError {
    /// Occurs when the text is none of the kinds above.
    Unrecognized,
    /// Occurs when a value has the wrong type or range: the key and what it must be.
    BadValue(String, &'static str),
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportError::Unrecognized => f.write_str(
                "not a launch file trainplan reads: a Megatron-LM or MindSpeed-LLM script, a LLaMA-Factory YAML, \
                 a DeepSpeed JSON, VeRL overrides, or a MindSpeed-RL YAML",
            ),
            ImportError::BadValue(key, expected) => write!(f, "{key} must be {expected}"),
        }
    }
}

/// Reads `text` onto `base` (usually the current plan's file).
pub fn import(text: &str, base: &PlanFile) -> Result<Imported, ImportError> {
    let mut file = base.clone();
    let mut unknown = Vec::new();
    let mut refused = Vec::new();
    let trimmed = text.trim_start();
    let kind = if trimmed.starts_with('{') {
        let v: Value = serde_json::from_str(text).map_err(|_| ImportError::Unrecognized)?;
        deepspeed(&v, &mut file, &mut unknown)?;
        ConfigKind::DeepSpeed
    } else if text.contains("actor_rollout_ref.") || text.contains("verl.trainer.main_ppo") {
        verl(text, &mut file, &mut unknown)?;
        ConfigKind::Verl
    } else if text.contains("--tensor-model-parallel-size")
        || text.contains("pretrain_gpt.py")
        || text.contains("posttrain_gpt.py")
    {
        let ascend = text.contains("--use-mcore-models")
            || text.contains("set_env.sh")
            || text.contains("PretrainedFromHF");
        flags(text, ascend, &mut file, &mut unknown)?;
        refused = refused_flags(text, if ascend { Table::MindSpeedLlm } else { Table::MegatronLm });
        if ascend { ConfigKind::MindSpeedLlm } else { ConfigKind::Megatron }
    } else {
        let docs = YamlLoader::load_from_str(text).map_err(|_| ImportError::Unrecognized)?;
        let Some(Yaml::Hash(map)) = docs.into_iter().next() else { return Err(ImportError::Unrecognized) };
        if map
            .keys()
            .any(|k| matches!(k.as_str(), Some("megatron_training" | "rl_config" | "generate_config")))
        {
            mindspeed_rl(&map, &mut file, &mut unknown)?;
            ConfigKind::MindSpeedRl
        } else if map
            .keys()
            .any(|k| matches!(k.as_str(), Some("stage" | "finetuning_type" | "model_name_or_path")))
        {
            llamafactory(&map, &mut file, &mut unknown)?;
            // The emitter writes the Ascend build's layers ratio as a comment (upstream refuses
            // the key); read it back from there too.
            let commented = text.lines().find_map(|l| l.trim().strip_prefix("# recompute_layers_ratio:"));
            if let Some(r) = commented.and_then(|r| r.split_whitespace().next()).and_then(|r| r.parse().ok())
                && 0.0 < r
                && r <= 1.0
                && !map.contains_key(&Yaml::String("recompute_layers_ratio".into()))
            {
                file.recompute.layers_ratio = r;
            }
            ConfigKind::LlamaFactory
        } else {
            return Err(ImportError::Unrecognized);
        }
    };
    // The model: a catalog model's Hugging Face id named anywhere in the file (its `-Instruct` or
    // other variants share the architecture), the longest match winning.
    let named = crate::catalog::CONFIGS
        .iter()
        .filter_map(|c| Some((c.id, super::hf_repo(c.source)?)))
        .filter(|(_, repo)| text.contains(repo.as_str()))
        .max_by_key(|(_, repo)| repo.len());
    if let Some((id, _)) = named {
        file.model = crate::plan::ModelField::Id(id.to_owned());
    }
    Ok(Imported { file, kind, unknown, refused })
}

/// The value after a flag, or what it lacks.
fn need<'a>(value: Option<&'a str>, flag: &str) -> Result<&'a str, ImportError> {
    value.ok_or_else(|| ImportError::BadValue(flag.to_owned(), "followed by a value"))
}

fn num(key: &str, v: &str) -> Result<u32, ImportError> {
    v.trim_matches(['"', '\''])
        .parse::<u32>()
        .map_err(|_| ImportError::BadValue(key.to_owned(), "a whole number"))
}

/// The words of a shell script, comments dropped; a line that does not split is skipped.
fn words(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| shell_words::split(l.trim_end_matches('\\')).ok())
        .flatten()
        .collect()
}

/// Megatron flags that describe the model, the data or the run, understood and not applied.
const MEGATRON_INFO: &[&str] = &[
    "--num-layers",
    "--hidden-size",
    "--ffn-hidden-size",
    "--num-attention-heads",
    "--group-query-attention",
    "--num-query-groups",
    "--kv-channels",
    "--max-position-embeddings",
    "--position-embedding-type",
    "--rotary-base",
    "--use-rope-scaling",
    "--rope-scaling-factor",
    "--rope-scaling-type",
    "--low-freq-factor",
    "--high-freq-factor",
    "--original-max-position-embeddings",
    "--normalization",
    "--norm-epsilon",
    "--swiglu",
    "--disable-bias-linear",
    "--add-qkv-bias",
    "--qk-layernorm",
    "--untie-embeddings-and-output-weights",
    "--attention-dropout",
    "--hidden-dropout",
    "--num-experts",
    "--moe-router-topk",
    "--moe-ffn-hidden-size",
    "--moe-shared-expert-intermediate-size",
    "--moe-grouped-gemm",
    "--moe-token-dispatcher-type",
    "--multi-latent-attention",
    "--q-lora-rank",
    "--kv-lora-rank",
    "--qk-head-dim",
    "--qk-pos-emb-head-dim",
    "--v-head-dim",
    "--max-position-embeddings",
    "--train-iters",
    "--lr",
    "--min-lr",
    "--lr-decay-style",
    "--lr-warmup-iters",
    "--lr-warmup-fraction",
    "--weight-decay",
    "--adam-beta1",
    "--adam-beta2",
    "--clip-grad",
    "--initial-loss-scale",
    "--data-path",
    "--split",
    "--tokenizer-type",
    "--tokenizer-model",
    "--tokenizer-name-or-path",
    "--log-interval",
    "--log-throughput",
    "--eval-interval",
    "--eval-iters",
    "--save-interval",
    "--save",
    "--load",
    "--ckpt-format",
    "--nproc_per_node",
    "--nnodes",
    "--node_rank",
    "--master_addr",
    "--master_port",
    "--distributed-backend",
    "--transformer-impl",
    "--use-mcore-models",
    "--use-flash-attn",
    "--use-fused-rotary-pos-emb",
    "--use-fused-rmsnorm",
    "--use-fused-swiglu",
    "--no-masked-softmax-fusion",
    "--attention-softmax-in-fp32",
    "--no-gradient-accumulation-fusion",
    "--make-vocab-size-divisible-by",
    "--padded-vocab-size",
    "--reuse-fp32-param",
    "--swap-optimizer-times",
    "--is-instruction-dataset",
    "--finetune",
    "--coc-parallel-num",
    "--lora-target-modules",
    "--fp8-amax-history-len",
    "--fp8-amax-compute-algo",
    "--init-method-std",
    "--no-load-optim",
    "--no-load-rng",
];

fn flags(
    text: &str,
    ascend: bool,
    file: &mut PlanFile,
    unknown: &mut Vec<String>,
) -> Result<(), ImportError> {
    file.framework = if ascend { Framework::MindSpeedLlm } else { Framework::Megatron };
    let words = words(text);
    // Node variables: `NUM_NODES=4`, `GPUS_PER_NODE=8` (and MindSpeed's names).
    for w in &words {
        if let Some((name, value)) = w.split_once('=') {
            match name {
                "NUM_NODES" | "NNODES" => file.cluster.nodes = num(name, value)?,
                "GPUS_PER_NODE" | "NPUS_PER_NODE" => file.cluster.devices_per_node = Some(num(name, value)?),
                _ => {}
            }
        }
    }
    file.method = match (text.contains("posttrain_gpt.py"), text.contains("--stage dpo")) {
        (false, _) => Method::Pretrain,
        (true, true) => Method::Dpo,
        (true, false) => Method::SftFull,
    };
    let mut vpp_layers = None;
    let mut layers = None;
    let p = &mut file.parallel;
    p.sequence_parallel = false;
    p.distributed_optimizer = false;
    p.overlap_grad_reduce = false;
    p.overlap_param_gather = false;
    p.tp_comm_overlap = false;
    file.recompute.granularity = RecomputeGranularity::None;
    file.recompute.activation_function = false;
    file.recompute.swap_attention = false;
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let Some(_) = w.strip_prefix("--") else {
            i += 1;
            continue;
        };
        let value = words.get(i + 1).filter(|v| !v.starts_with("--")).map(String::as_str);
        let p = &mut file.parallel;
        match w {
            "--tensor-model-parallel-size" => p.tp = num(w, need(value, w)?)?,
            "--pipeline-model-parallel-size" => p.pp = num(w, need(value, w)?)?,
            "--num-layers-per-virtual-pipeline-stage" => vpp_layers = Some(num(w, need(value, w)?)?),
            "--context-parallel-size" => p.cp = num(w, need(value, w)?)?,
            "--expert-model-parallel-size" => p.ep = num(w, need(value, w)?)?,
            "--expert-tensor-parallel-size" => p.etp = num(w, need(value, w)?)?,
            "--sequence-parallel" => p.sequence_parallel = true,
            "--use-distributed-optimizer" => p.distributed_optimizer = true,
            "--overlap-grad-reduce" => p.overlap_grad_reduce = true,
            "--overlap-param-gather" => p.overlap_param_gather = true,
            "--tp-comm-overlap" | "--use-ascend-coc" => p.tp_comm_overlap = true,
            "--recompute-granularity" => {
                let v = need(value, w)?;
                file.recompute.granularity = match v {
                    "full" => RecomputeGranularity::Full,
                    "selective" => RecomputeGranularity::Selective,
                    _ => return Err(ImportError::BadValue(w.to_owned(), "full or selective")),
                };
            }
            "--recompute-activations" => file.recompute.granularity = RecomputeGranularity::Selective,
            "--recompute-method" => {
                let v = need(value, w)?;
                file.recompute.method =
                    if v == "block" { RecomputeMethod::Block } else { RecomputeMethod::Uniform };
            }
            "--recompute-num-layers" => file.recompute.num_layers = num(w, need(value, w)?)?,
            "--recompute-activation-function" => file.recompute.activation_function = true,
            "--recompute-activation-function-num-layers" => {
                file.recompute.activation_function_layers = num(w, need(value, w)?)?
            }
            "--swap-attention" => file.recompute.swap_attention = true,
            "--swap-optimizer" => p.swap_optimizer = true,
            "--num-layer-list"
            | "--decoder-first-pipeline-num-layers"
            | "--decoder-last-pipeline-num-layers" => {
                need(value, w)?;
                p.uneven_layers = true;
            }
            "--micro-batch-size" => file.batch.micro_batch = num(w, need(value, w)?)?,
            "--global-batch-size" => file.batch.global_batch = num(w, need(value, w)?)?,
            "--seq-length" => file.batch.seq_len = num(w, need(value, w)?)?,
            "--bf16" => file.precision = Precision::Bf16,
            "--fp16" => file.precision = Precision::Fp16,
            "--fp8-format" => file.precision = Precision::Fp8,
            "--lora-r" => {
                let v = need(value, w)?;
                file.lora.rank = num(w, v)?;
                file.method = Method::Lora;
            }
            "--lora-alpha" => file.lora.alpha = num(w, need(value, w)?)?,
            "--stage" => {}
            // Megatron-LM's own SFT dataset (`--sft`, with `--finetune`).
            "--sft" => file.method = Method::SftFull,
            "--schedules-method" => {
                file.parallel.schedule = match need(value, w)? {
                    "dualpipev" => crate::plan::PipelineSchedule::DualPipeV,
                    _ => return Err(ImportError::BadValue(w.to_owned(), "dualpipev")),
                };
            }
            "--num-layers" => layers = Some(num(w, need(value, w)?)?),
            w if MEGATRON_INFO.contains(&w) => {}
            w => unknown.push(w.to_owned()),
        }
        i += if value.is_some() { 2 } else { 1 };
    }
    // VPP = layers ÷ PP ÷ layers per virtual stage (Megatron `arguments.py`).
    if let (Some(per), Some(layers)) = (vpp_layers, layers) {
        let pp = file.parallel.pp.max(1);
        file.parallel.vpp = (layers / pp / per.max(1)).max(1);
    }
    Ok(())
}

/// torchrun's own flags (`torch.distributed.run`): the launcher's, not the entry script's.
const LAUNCHER: &[&str] = &[
    "--nnodes",
    "--nproc_per_node",
    "--nproc-per-node",
    "--node_rank",
    "--node-rank",
    "--master_addr",
    "--master-addr",
    "--master_port",
    "--master-port",
    "--rdzv_backend",
    "--rdzv-backend",
    "--rdzv_endpoint",
    "--rdzv-endpoint",
    "--rdzv_id",
    "--rdzv-id",
    "--rdzv_conf",
    "--rdzv-conf",
    "--standalone",
    "--max_restarts",
    "--max-restarts",
    "--monitor_interval",
    "--monitor-interval",
    "--start_method",
    "--start-method",
    "--role",
    "--module",
    "--no_python",
    "--no-python",
    "--run_path",
    "--run-path",
    "--log_dir",
    "--log-dir",
    "--redirects",
    "--tee",
    "--local_addr",
    "--local-addr",
    "--local-ranks-filter",
];

/// The flags of a Megatron-LM or MindSpeed-LLM script `table`'s parser would refuse. A flag's values
/// are the words after it on its line (continuations joined) up to the next flag, a shell operator
/// or an array expansion; `$NAME` is read from the script's own assignments, and a value set
/// outside the script is not judged. On the entry script's line the words before `*.py` are the
/// launcher's, as are torchrun's flags anywhere.
fn refused_flags(text: &str, table: Table) -> Vec<FlagError> {
    let vars: Vec<(String, String)> = words(text)
        .into_iter()
        .filter_map(|w| {
            let (name, value) = w.split_once('=')?;
            let is_name = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            is_name.then(|| (name.to_owned(), value.to_owned()))
        })
        .collect();
    let mut out = Vec::new();
    for words in script_lines(text) {
        let mut i = words.iter().position(|w| w.ends_with(".py")).map_or(0, |at| at + 1);
        while i < words.len() {
            let word = &words[i];
            i += 1;
            if !word.starts_with("--") {
                continue;
            }
            let (flag, inline) = match word.split_once('=') {
                Some((flag, value)) => (flag, Some(value)),
                None => (word.as_str(), None),
            };
            if LAUNCHER.contains(&flag) {
                continue;
            }
            let mut values = Vec::new();
            let mut judged = true;
            let mut take = |w: &str| match expand(w, &vars, &mut 64) {
                Some(v) => values.push(v),
                None => judged = false,
            };
            match inline {
                Some(v) => take(v),
                None => {
                    while i < words.len() && !words[i].starts_with("--") && !ends_values(&words[i]) {
                        take(&words[i]);
                        i += 1;
                    }
                }
            }
            let Some(spec) = flags::lookup(table, flag) else {
                out.push(FlagError::Unknown { flag: flag.to_owned(), framework: table.name() });
                continue;
            };
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            if judged && let Err(e) = spec.check(&values) {
                out.push(e);
            }
        }
    }
    out
}

/// The words of each command line of a script: continuation lines joined (each physical line on
/// its own where the joined one does not split), comments dropped.
fn script_lines(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(first) = lines.next() {
        let mut physical = vec![first];
        while physical.last().is_some_and(|l| l.trim_end().ends_with('\\')) {
            match lines.next() {
                Some(next) => physical.push(next),
                None => break,
            }
        }
        let trim = |l: &str| l.trim_end().trim_end_matches('\\').to_owned();
        let joined: Vec<String> = physical.iter().map(|l| trim(l)).collect();
        match shell_words::split(&joined.join(" ")) {
            Ok(words) => out.push(words),
            Err(_) => out.extend(joined.iter().filter_map(|l| shell_words::split(l).ok())),
        }
    }
    out
}

/// Whether a word ends a flag's values: a shell operator or redirection, a bracket, or an array
/// expansion (`${ARGS[@]}`, more flags).
fn ends_values(word: &str) -> bool {
    matches!(word, "|" | "||" | "&&" | "&" | ";" | ";;" | "(" | ")")
        || word.starts_with(['>', '<'])
        || word.contains(">&")
        || word.starts_with("2>")
        || word.starts_with("1>")
        || word.contains("[@]")
        || word.contains("[*]")
}

/// `word` with `$NAME`, `${NAME}`, `${NAME:-default}` and `${NAME:?message}` replaced from the
/// script's assignments (the last one of each name); `None` where a value is not in the script, or
/// past `budget` expansions (pasted text may nest them without end).
fn expand(word: &str, vars: &[(String, String)], budget: &mut u32) -> Option<String> {
    let mut res = String::new();
    let mut rest = word;
    while let Some(at) = rest.find('$') {
        *budget = budget.checked_sub(1)?;
        res.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, default, tail) = match after.strip_prefix('{') {
            Some(inner) => {
                let end = inner.find('}')?;
                let body = &inner[..end];
                let (name, default) = match body.split_once(":-") {
                    Some((name, default)) => (name, Some(default)),
                    None => (body.split(":?").next().unwrap_or(body), None),
                };
                (name, default, &inner[end + 1..])
            }
            None => {
                let end =
                    after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
                (&after[..end], None, &after[end..])
            }
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        // An assignment sees only the ones before it (`NODE_RANK=${NODE_RANK:-0}` reads the
        // environment's).
        match (vars.iter().rposition(|(n, _)| n == name), default) {
            (Some(pos), _) => res.push_str(&expand(&vars[pos].1, &vars[..pos], budget)?),
            (None, Some(default)) => res.push_str(default),
            (None, None) => return None,
        }
        rest = tail;
    }
    res.push_str(rest);
    Some(res)
}

/// LLaMA-Factory keys that describe data, logging or the schedule, understood and not applied.
const LF_INFO: &[&str] = &[
    "model_name_or_path",
    "trust_remote_code",
    "do_train",
    "dataset",
    "dataset_dir",
    "template",
    "max_samples",
    "overwrite_cache",
    "preprocessing_num_workers",
    "dataloader_num_workers",
    "output_dir",
    "logging_steps",
    "save_steps",
    "save_total_limit",
    "plot_loss",
    "overwrite_output_dir",
    "report_to",
    "learning_rate",
    "num_train_epochs",
    "lr_scheduler_type",
    "warmup_ratio",
    "max_grad_norm",
    "ddp_timeout",
    "val_size",
    "per_device_eval_batch_size",
    "eval_strategy",
    "eval_steps",
    "lora_dropout",
    "pref_beta",
    "pref_loss",
    "reward_model",
    "fp8",
];

fn llamafactory(
    map: &yaml_rust2::yaml::Hash,
    file: &mut PlanFile,
    unknown: &mut Vec<String>,
) -> Result<(), ImportError> {
    file.framework = Framework::LlamaFactory;
    let get = |k: &str| map.get(&Yaml::String(k.to_owned()));
    let int = |k: &str| -> Result<Option<u32>, ImportError> {
        match get(k) {
            None => Ok(None),
            Some(Yaml::Integer(n)) if 0 < *n && *n <= i64::from(u32::MAX) => Ok(Some(*n as u32)),
            Some(_) => Err(ImportError::BadValue(k.to_owned(), "a positive whole number")),
        }
    };
    let truthy = |k: &str| matches!(get(k), Some(Yaml::Boolean(true)));
    let finetuning = get("finetuning_type").and_then(Yaml::as_str).unwrap_or("lora");
    file.method = match (get("stage").and_then(Yaml::as_str).unwrap_or("sft"), finetuning) {
        ("pt", _) => Method::Pretrain,
        ("dpo", _) => Method::Dpo,
        ("ppo", _) => Method::Ppo,
        (_, "lora") if int("quantization_bit")?.is_some() => Method::Qlora,
        (_, "lora") => Method::Lora,
        _ => Method::SftFull,
    };
    if let Some(r) = int("lora_rank")? {
        file.lora.rank = r;
    }
    if let Some(a) = int("lora_alpha")? {
        file.lora.alpha = a;
    }
    if let Some(t) = get("lora_target").and_then(Yaml::as_str) {
        file.lora.targets = TargetsField::Word(t.to_owned());
    }
    if let Some(n) = int("cutoff_len")? {
        file.batch.seq_len = n;
    }
    let micro = int("per_device_train_batch_size")?.unwrap_or(1);
    let gas = int("gradient_accumulation_steps")?.unwrap_or(1);
    file.batch.micro_batch = micro;
    // Global batch = per-device batch × accumulation × world (HF Trainer).
    let world = file.cluster.nodes * file.cluster.devices_per_node.unwrap_or(8);
    file.batch.global_batch = micro.saturating_mul(gas).saturating_mul(world.max(1));
    file.recompute.granularity = match truthy("disable_gradient_checkpointing") {
        true => RecomputeGranularity::None,
        false => RecomputeGranularity::Full,
    };
    match get("recompute_layers_ratio") {
        None => {}
        Some(Yaml::Real(r)) if r.parse::<f64>().is_ok_and(|r| 0.0 < r && r <= 1.0) => {
            file.recompute.layers_ratio = r.parse().unwrap_or(1.0);
        }
        Some(Yaml::Integer(1)) => file.recompute.layers_ratio = 1.0,
        Some(_) => return Err(ImportError::BadValue("recompute_layers_ratio".into(), "a number in (0, 1]")),
    }
    file.precision = match (truthy("bf16"), truthy("fp16"), truthy("fp8")) {
        (_, _, true) => Precision::Fp8,
        (true, _, _) => Precision::Bf16,
        (_, true, _) => Precision::Fp16,
        _ => Precision::Fp32,
    };
    if let Some(f) = get("flash_attn").and_then(Yaml::as_str) {
        file.attention = match f {
            "fa2" | "fa3" | "auto" => crate::plan::AttentionImpl::Flash,
            "sdpa" => crate::plan::AttentionImpl::Sdpa,
            _ => crate::plan::AttentionImpl::Eager,
        };
    }
    // The DeepSpeed file's stage is in its name as LLaMA-Factory ships them (`ds_z3_offload_config.json`).
    file.parallel.zero_stage = 0;
    file.parallel.offload_optimizer = false;
    file.parallel.offload_params = false;
    if let Some(ds) = get("deepspeed").and_then(Yaml::as_str) {
        if let Some(stage) =
            ds.split("ds_z").nth(1).and_then(|r| r.chars().next()).and_then(|c| c.to_digit(10))
        {
            file.parallel.zero_stage = stage as u8;
        }
        file.parallel.offload_optimizer = ds.contains("offload");
    }
    for k in map.keys().filter_map(Yaml::as_str) {
        let known = LF_INFO.contains(&k)
            || matches!(
                k,
                "stage"
                    | "finetuning_type"
                    | "lora_rank"
                    | "lora_alpha"
                    | "lora_target"
                    | "quantization_bit"
                    | "cutoff_len"
                    | "per_device_train_batch_size"
                    | "gradient_accumulation_steps"
                    | "disable_gradient_checkpointing"
                    | "recompute_layers_ratio"
                    | "bf16"
                    | "fp16"
                    | "flash_attn"
                    | "deepspeed"
            );
        if !known {
            unknown.push(k.to_owned());
        }
    }
    Ok(())
}

fn deepspeed(v: &Value, file: &mut PlanFile, unknown: &mut Vec<String>) -> Result<(), ImportError> {
    let Some(obj) = v.as_object() else { return Err(ImportError::Unrecognized) };
    if !obj.contains_key("zero_optimization") && !obj.contains_key("train_batch_size") {
        return Err(ImportError::Unrecognized);
    }
    file.framework = Framework::DeepSpeed;
    let zero = &v["zero_optimization"];
    let stage = zero["stage"].as_u64().unwrap_or(0);
    if 3 < stage {
        return Err(ImportError::BadValue("zero_optimization.stage".into(), "0, 1, 2 or 3"));
    }
    file.parallel.zero_stage = stage as u8;
    file.parallel.overlap_grad_reduce = zero["overlap_comm"].as_bool().unwrap_or(false);
    file.parallel.offload_optimizer =
        zero["offload_optimizer"]["device"].as_str().is_some_and(|d| d != "none");
    file.parallel.offload_params = zero["offload_param"]["device"].as_str().is_some_and(|d| d != "none");
    let int = |k: &str| v[k].as_u64().map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    if let Some(m) = int("train_micro_batch_size_per_gpu") {
        file.batch.micro_batch = m.max(1);
    }
    if let Some(g) = int("train_batch_size") {
        file.batch.global_batch = g.max(1);
    }
    file.recompute.granularity = match obj.contains_key("activation_checkpointing") {
        true => RecomputeGranularity::Full,
        false => RecomputeGranularity::None,
    };
    if v["bf16"]["enabled"] == true {
        file.precision = Precision::Bf16;
    } else if v["fp16"]["enabled"] == true {
        file.precision = Precision::Fp16;
    }
    const KNOWN: &[&str] = &[
        "train_batch_size",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "gradient_clipping",
        "steps_per_print",
        "bf16",
        "fp16",
        "optimizer",
        "scheduler",
        "zero_optimization",
        "wall_clock_breakdown",
        "activation_checkpointing",
        "zero_allow_untested_optimizer",
    ];
    unknown.extend(obj.keys().filter(|k| !KNOWN.contains(&k.as_str())).cloned());
    Ok(())
}

fn verl(text: &str, file: &mut PlanFile, unknown: &mut Vec<String>) -> Result<(), ImportError> {
    file.framework = Framework::Verl;
    file.method = Method::Grpo;
    // Read as written; a value equal to what the plan derives by itself goes back to 0 (auto) below.
    let (mut mini, mut model_len, mut batched, mut budget) = (None, None, None, None);
    for w in words(text) {
        let Some((key, value)) = w.split_once('=') else { continue };
        if !key.contains('.') {
            continue;
        }
        let v = value.trim_matches(['"', '\'']);
        let flag = |v: &str| v.eq_ignore_ascii_case("true");
        match key {
            "algorithm.adv_estimator" => file.method = if v == "gae" { Method::Ppo } else { Method::Grpo },
            "data.train_batch_size" => file.batch.global_batch = num(key, v)?,
            "data.max_prompt_length" => file.rl.max_prompt_length = num(key, v)?,
            "data.max_response_length" => file.rl.max_response_length = num(key, v)?,
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu" => file.batch.micro_batch = num(key, v)?,
            "actor_rollout_ref.actor.ppo_mini_batch_size" => mini = Some(num(key, v)?),
            "actor_rollout_ref.actor.use_dynamic_bsz" => file.rl.dynamic_batch = flag(v),
            "actor_rollout_ref.actor.ppo_max_token_len_per_gpu" => budget = Some(num(key, v)?),
            "actor_rollout_ref.model.use_remove_padding" => file.rl.remove_padding = flag(v),
            "actor_rollout_ref.rollout.enforce_eager" => file.rl.enforce_eager = flag(v),
            "actor_rollout_ref.rollout.max_model_len" => model_len = Some(num(key, v)?),
            "actor_rollout_ref.rollout.max_num_batched_tokens" => batched = Some(num(key, v)?),
            "actor_rollout_ref.actor.ulysses_sequence_parallel_size" => file.parallel.cp = num(key, v)?,
            "actor_rollout_ref.actor.fsdp_config.param_offload" => file.parallel.offload_params = flag(v),
            "actor_rollout_ref.actor.fsdp_config.optimizer_offload" => {
                file.parallel.offload_optimizer = flag(v)
            }
            "actor_rollout_ref.rollout.n" => file.rl.n_samples_per_prompt = num(key, v)?,
            "actor_rollout_ref.rollout.tensor_model_parallel_size" => file.rl.rollout_tp = num(key, v)?,
            "actor_rollout_ref.rollout.max_num_seqs" => file.rl.max_num_seqs = num(key, v)?,
            "actor_rollout_ref.rollout.gpu_memory_utilization" => {
                file.rl.gpu_memory_utilization =
                    v.parse().map_err(|_| ImportError::BadValue(key.to_owned(), "a number in (0, 1]"))?;
            }
            "actor_rollout_ref.model.enable_gradient_checkpointing" => {
                file.recompute.granularity =
                    if flag(v) { RecomputeGranularity::Full } else { RecomputeGranularity::None };
            }
            "actor_rollout_ref.model.lora_rank" => {
                let rank = num(key, v)?;
                // 0 is VeRL's "no LoRA"; the plan's rank keeps its default then.
                file.rl.lora = 0 < rank;
                if 0 < rank {
                    file.lora.rank = rank;
                }
            }
            "actor_rollout_ref.model.target_modules" => {
                let list = v.trim_matches(['\'', '"']).trim_matches(['[', ']']);
                file.lora.targets = match list {
                    "all-linear" => TargetsField::Word("all".to_owned()),
                    names => TargetsField::List(names.split(',').map(|n| n.trim().to_owned()).collect()),
                };
            }
            "actor_rollout_ref.model.lora_alpha" => file.lora.alpha = num(key, v)?,
            "trainer.n_gpus_per_node" => file.cluster.devices_per_node = Some(num(key, v)?),
            "trainer.nnodes" => file.cluster.nodes = num(key, v)?,
            k if k.starts_with("trainer.")
                || k.starts_with("data.")
                || k.starts_with("algorithm.")
                || k.starts_with("critic.")
                || k.starts_with("actor_rollout_ref.") => {}
            k => unknown.push(k.to_owned()),
        }
    }
    set_rl_autos(file, [mini, model_len, batched, budget]);
    Ok(())
}

/// Sets the RL figures read from a file — mini-batch, `max_model_len`, `max_num_batched_tokens`
/// and the token budget, in that order — each back to 0 ("automatic") where it equals what the
/// plan derives by itself (`plan::Rl`'s accessors), so emit → import gives the same plan file.
fn set_rl_autos(file: &mut PlanFile, [mini, model_len, batched, budget]: [Option<u32>; 4]) {
    let rl = &mut file.rl;
    let sequence = rl.max_prompt_length.saturating_add(rl.max_response_length);
    rl.mini_batch = mini.filter(|&m| m != file.batch.global_batch).unwrap_or(0);
    rl.max_model_len = model_len.filter(|&n| n != sequence).unwrap_or(0);
    let auto_batched =
        crate::plan::auto_batched_tokens(if rl.max_model_len == 0 { sequence } else { rl.max_model_len });
    rl.max_num_batched_tokens = batched.filter(|&n| n != auto_batched).unwrap_or(0);
    let auto_budget = crate::plan::auto_tokens_per_device(file.framework, sequence, file.parallel.cp);
    rl.max_tokens_per_device = budget.filter(|&n| n != auto_budget).unwrap_or(0);
}

/// MindSpeed-RL run-YAML keys that describe data, the optimizer's schedule or logging: understood,
/// not applied (frameworks.md §7.2).
const MSRL_INFO: &[&str] = &[
    "defaults",
    "megatron_training.model",
    "megatron_training.use_mcore_models",
    "megatron_training.use_fused_rmsnorm",
    "megatron_training.use_flash_attn",
    "megatron_training.no_masked_softmax_fusion",
    "megatron_training.attention_softmax_in_fp32",
    "megatron_training.no_gradient_accumulation_fusion",
    "megatron_training.use_fused_swiglu",
    "megatron_training.use_fused_rotary_pos_emb",
    "megatron_training.tokenizer_type",
    "megatron_training.tokenizer_name_or_path",
    "megatron_training.seq_length",
    "megatron_training.save_interval",
    "megatron_training.train_iters",
    "megatron_training.stage",
    "megatron_training.distributed_backend",
    "megatron_training.no_shared_storage",
    "megatron_training.dataset_additional_keys",
    "megatron_training.data_path",
    "megatron_training.split",
    "megatron_training.seed",
    "megatron_training.reset_attention_mask",
    "megatron_training.no_pad_to_seq_lengths",
    "actor_config.model",
    "actor_config.lr",
    "actor_config.lr_decay_style",
    "actor_config.min_lr",
    "actor_config.weight_decay",
    "actor_config.lr_warmup_fraction",
    "actor_config.clip_grad",
    "actor_config.adam_beta1",
    "actor_config.adam_beta2",
    "actor_config.finetune",
    "actor_config.load",
    "actor_config.save",
    "actor_config.no_load_optim",
    "actor_config.no_load_rng",
    "rl_config.use_integrated_worker",
    "rl_config.kl_penalty",
    "rl_config.kl_ctrl_type",
    "rl_config.init_kl_coef",
    "rl_config.epochs",
    "rl_config.clip_ratio",
    "rl_config.actor_forward_micro_batch_size",
    "rl_config.ref_forward_micro_batch_size",
    "rl_config.rule_reward",
    "rl_config.verifier_function",
    "rl_config.verifier_weight",
    "rl_config.use_tensorboard",
    "rl_config.actor_resource",
    "rl_config.critic_resource",
    "rl_config.gamma",
    "rl_config.lam",
    "rl_config.cliprange_value",
    "rl_config.share_backbone",
    "megatron_training.lora_target_modules",
    "critic_config.model",
    "critic_config.micro_batch_size",
    "critic_config.tensor_model_parallel_size",
    "critic_config.pipeline_model_parallel_size",
    "critic_config.lr",
    "critic_config.lr_decay_style",
    "critic_config.min_lr",
    "critic_config.weight_decay",
    "critic_config.lr_warmup_fraction",
    "critic_config.clip_grad",
    "critic_config.adam_beta1",
    "critic_config.adam_beta2",
    "critic_config.finetune",
    "critic_config.load",
    "critic_config.save",
    "critic_config.no_load_optim",
    "critic_config.no_load_rng",
    "generate_config.trust_remote_code",
    "generate_config.offload_train_optimizer",
    "generate_config.offload_train_grad",
    "generate_config.offload_train_param",
    "generate_config.infer_pipeline_parallel_size",
    "generate_config.infer_expert_parallel_size",
    "generate_config.dtype",
    "generate_config.sampling_config",
];

/// A MindSpeed-RL run YAML: the Megatron settings, the actor's layout, the RL loop and the vLLM
/// engine. Values the plan derives by itself (a mini-batch of the whole batch, `max_model_len` of
/// prompt + response, the automatic token budgets) come back as 0, "automatic".
fn mindspeed_rl(
    map: &yaml_rust2::yaml::Hash,
    file: &mut PlanFile,
    unknown: &mut Vec<String>,
) -> Result<(), ImportError> {
    file.framework = Framework::MindSpeedRl;
    file.method = Method::Grpo;
    let section = |name: &str| match map.get(&Yaml::String(name.to_owned())) {
        Some(Yaml::Hash(h)) => Some(h),
        _ => None,
    };
    let empty = yaml_rust2::yaml::Hash::new();
    let (mt, actor, rl, generate) = (
        section("megatron_training").unwrap_or(&empty),
        section("actor_config").unwrap_or(&empty),
        section("rl_config").unwrap_or(&empty),
        section("generate_config").unwrap_or(&empty),
    );
    let get = |h: &'_ yaml_rust2::yaml::Hash, k: &str| h.get(&Yaml::String(k.to_owned())).cloned();
    let int = |h: &yaml_rust2::yaml::Hash, sec: &str, k: &str| -> Result<Option<u32>, ImportError> {
        match get(h, k) {
            None => Ok(None),
            Some(Yaml::Integer(n)) if 0 <= n && n <= i64::from(u32::MAX) => Ok(Some(n as u32)),
            Some(_) => Err(ImportError::BadValue(format!("{sec}.{k}"), "a whole number")),
        }
    };
    let flag = |h: &yaml_rust2::yaml::Hash, k: &str| matches!(get(h, k), Some(Yaml::Boolean(true)));
    let has = |h: &yaml_rust2::yaml::Hash, k: &str| get(h, k).is_some();

    let p = &mut file.parallel;
    p.sequence_parallel = flag(mt, "sequence_parallel");
    p.distributed_optimizer = flag(mt, "use_distributed_optimizer");
    p.swap_optimizer = flag(mt, "swap_optimizer");
    p.uneven_layers = has(mt, "num_layer_list");
    p.tp_comm_overlap = flag(mt, "use_ascend_coc");
    p.cp = int(mt, "megatron_training", "context_parallel_size")?.unwrap_or(1);
    p.ep = int(mt, "megatron_training", "expert_model_parallel_size")?.unwrap_or(1);
    p.tp = int(actor, "actor_config", "tensor_model_parallel_size")?.unwrap_or(1);
    p.pp = int(actor, "actor_config", "pipeline_model_parallel_size")?.unwrap_or(1);
    file.precision = if flag(mt, "fp16") { Precision::Fp16 } else { Precision::Bf16 };
    let r = &mut file.recompute;
    r.granularity = match get(mt, "recompute_granularity").as_ref().and_then(Yaml::as_str) {
        None => RecomputeGranularity::None,
        Some("full") => RecomputeGranularity::Full,
        Some("selective") => RecomputeGranularity::Selective,
        Some(_) => {
            return Err(ImportError::BadValue(
                "megatron_training.recompute_granularity".into(),
                "full or selective",
            ));
        }
    };
    r.method = match get(mt, "recompute_method").as_ref().and_then(Yaml::as_str) {
        Some("block") => RecomputeMethod::Block,
        _ => RecomputeMethod::Uniform,
    };
    r.num_layers = int(mt, "megatron_training", "recompute_num_layers")?.unwrap_or(1);
    r.activation_function = flag(mt, "recompute_activation_function");
    r.swap_attention = flag(mt, "swap_attention");
    if let Some(g) = int(mt, "megatron_training", "global_batch_size")? {
        file.batch.global_batch = g;
    }
    if let Some(m) = int(actor, "actor_config", "micro_batch_size")? {
        file.batch.micro_batch = m;
    }
    let rl_file = &mut file.rl;
    if get(rl, "adv_estimator").as_ref().and_then(Yaml::as_str) == Some("gae") {
        file.method = Method::Ppo;
    }
    if let Some(r) = int(mt, "megatron_training", "lora_r")? {
        rl_file.lora = 0 < r;
        if 0 < r {
            file.lora.rank = r;
        }
    }
    if let Some(a) = int(mt, "megatron_training", "lora_alpha")? {
        file.lora.alpha = a;
    }
    if let Some(n) = int(rl, "rl_config", "n_samples_per_prompt")? {
        rl_file.n_samples_per_prompt = n;
    }
    if let Some(n) = int(rl, "rl_config", "max_prompt_length")? {
        rl_file.max_prompt_length = n;
    }
    let sampling = match get(generate, "sampling_config") {
        Some(Yaml::Hash(h)) => h,
        _ => yaml_rust2::yaml::Hash::new(),
    };
    if let Some(n) = int(&sampling, "generate_config.sampling_config", "max_tokens")? {
        rl_file.max_response_length = n;
    }
    rl_file.blocking = !has(rl, "blocking") || flag(rl, "blocking");
    rl_file.remove_padding = flag(rl, "use_remove_padding");
    rl_file.dynamic_batch = flag(rl, "use_dynamic_bsz");
    rl_file.enforce_eager = flag(generate, "enforce_eager");
    if let Some(tp) = int(generate, "generate_config", "infer_tensor_parallel_size")? {
        rl_file.rollout_tp = tp;
    }
    if let Some(n) = int(generate, "generate_config", "max_num_seqs")? {
        rl_file.max_num_seqs = n;
    }
    match get(generate, "gpu_memory_utilization") {
        None => {}
        Some(Yaml::Real(x)) if x.parse::<f64>().is_ok() => {
            rl_file.gpu_memory_utilization = x.parse().unwrap_or(0.5);
        }
        Some(Yaml::Integer(1)) => rl_file.gpu_memory_utilization = 1.0,
        Some(_) => {
            return Err(ImportError::BadValue(
                "generate_config.gpu_memory_utilization".into(),
                "a number in (0, 1]",
            ));
        }
    }
    let read = [
        int(rl, "rl_config", "mini_batch_size")?,
        int(generate, "generate_config", "max_model_len")?,
        int(generate, "generate_config", "max_num_batched_tokens")?,
        int(rl, "rl_config", "max_packing_token_size")?,
    ];
    set_rl_autos(file, read);

    // Every key, by section, that is neither applied above nor known as information.
    const APPLIED: &[&str] = &[
        "megatron_training.sequence_parallel",
        "megatron_training.use_distributed_optimizer",
        "megatron_training.swap_optimizer",
        "megatron_training.num_layer_list",
        "megatron_training.use_ascend_coc",
        "megatron_training.context_parallel_size",
        "megatron_training.expert_model_parallel_size",
        "megatron_training.bf16",
        "megatron_training.fp16",
        "megatron_training.recompute_granularity",
        "megatron_training.recompute_method",
        "megatron_training.recompute_num_layers",
        "megatron_training.recompute_activation_function",
        "megatron_training.swap_attention",
        "megatron_training.global_batch_size",
        "actor_config.micro_batch_size",
        "actor_config.tensor_model_parallel_size",
        "actor_config.pipeline_model_parallel_size",
        "rl_config.adv_estimator",
        "megatron_training.lora_r",
        "megatron_training.lora_alpha",
        "rl_config.n_samples_per_prompt",
        "rl_config.max_prompt_length",
        "rl_config.mini_batch_size",
        "rl_config.blocking",
        "rl_config.use_remove_padding",
        "rl_config.use_dynamic_bsz",
        "rl_config.max_packing_token_size",
        "generate_config.enforce_eager",
        "generate_config.infer_tensor_parallel_size",
        "generate_config.max_num_seqs",
        "generate_config.gpu_memory_utilization",
        "generate_config.max_model_len",
        "generate_config.max_num_batched_tokens",
    ];
    for (key, value) in map {
        let Some(top) = key.as_str() else { continue };
        let keys: Vec<String> = match value {
            Yaml::Hash(h) if top != "defaults" => {
                h.keys().filter_map(Yaml::as_str).map(|k| format!("{top}.{k}")).collect()
            }
            _ => vec![top.to_owned()],
        };
        for k in keys {
            if !APPLIED.contains(&k.as_str()) && !MSRL_INFO.contains(&k.as_str()) {
                unknown.push(k);
            }
        }
    }
    Ok(())
}
