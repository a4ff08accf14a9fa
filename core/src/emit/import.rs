//! The reverse of the emitters: a launch file a user already has — a Megatron-LM or MindSpeed-LLM
//! script, a LLaMA-Factory YAML, a DeepSpeed JSON, a VeRL override list, a MindSpeed-RL run YAML —
//! read into a plan file.
//!
//! An import starts from the plan file's defaults, not from the plan on screen: of the current
//! plan it keeps only the hardware, the cluster where the file does not give it, and the model
//! where the file does not tell it ([`import`]). The model is told by its Hugging Face id, by a
//! local directory's name ([`crate::catalog::model_by_name`]), or by a script's architecture flags
//! (a MindSpeed-RL model block's keys): the catalog model they describe, else a model built from
//! them; [`ModelOrigin`] says which, or that it could not be told. The model path, the dataset,
//! the output directory and the master address come back into the plan's launch settings, the
//! emitters' own placeholders as empty fields, so emit → import → emit writes the same files.
//!
//! Every other key the plan does not hold is compared with the file the imported plan writes: one
//! that file would not keep as written (a value the plan has no place for, a key no emitter
//! writes, a value set outside the script) is listed in [`Imported::unknown`]. A script's flags
//! are also checked against the ones its framework declares at the version trainplan records
//! ([`super::flags`]): a flag it does not declare, or a value its parser would refuse, is listed
//! with the reason.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};
use yaml_rust2::yaml::Hash;
use yaml_rust2::{Yaml, YamlLoader};

use super::flags::{self, FlagError, Table};
use crate::Plan;
use crate::model::Family;
use crate::plan::{
    Framework, HardwareField, LaunchFile, Method, ModelField, PipelineSchedule, PlanFile, Precision,
    RecomputeGranularity, RecomputeMethod, TargetsField,
};

/// What an import did.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// The plan file: the defaults with the launch file's settings, and the current plan's
    /// hardware (and cluster, and model) where the file does not give them.
    pub file: PlanFile,
    /// The kind of file it was read as.
    pub kind: ConfigKind,
    /// How the model was told, or that it was not.
    pub model: ModelOrigin,
    /// The keys or flags not used, in the order met: ones the plan has no place for whose value
    /// the file the plan writes would not keep (a learning rate, a chat template other than the
    /// model's, a key trainplan does not know), and ones whose value is set outside the file. For
    /// a script, whether or not its framework declares them; [`Imported::refused`] says which it
    /// does not.
    pub unknown: Vec<String>,
    /// The flags of a Megatron-LM or MindSpeed-LLM script its framework's own parser would refuse at
    /// the recorded version ([`flags::Table`]): not declared there, a switch given a value, a value
    /// count `nargs` does not allow, a value of the wrong type or outside the choices. Empty for
    /// other kinds of file.
    pub refused: Vec<FlagError>,
}

/// How an import told the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelOrigin {
    /// The catalog model with this id, named by its Hugging Face id (or a variant of it, such as
    /// `Qwen/Qwen2.5-7B-Instruct`).
    Named(String),
    /// The catalog model `id`, whose name a local directory spells.
    Matched {
        /// The path as the file gives it.
        from: String,
        /// The catalog id.
        id: String,
    },
    /// The catalog model with this id, which the file's architecture flags describe.
    Shape(String),
    /// No catalog model has the architecture the file's flags describe: a model built from them,
    /// with this name (the plan's model is an HF config).
    Built {
        /// The model's display name.
        name: String,
    },
    /// The file neither names nor describes a model the planner can tell: the plan keeps the
    /// model it had, and the user should pick one.
    Unknown,
}

impl std::fmt::Display for ModelOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelOrigin::Named(id) => write!(f, "{id}, named by its Hugging Face id"),
            ModelOrigin::Matched { from, id } => write!(f, "{id}, matched from {from}"),
            ModelOrigin::Shape(id) => write!(f, "{id}, described by the architecture flags"),
            ModelOrigin::Built { name } => write!(f, "{name}, built from the architecture flags"),
            ModelOrigin::Unknown => f.write_str("not identified: the plan's model kept"),
        }
    }
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
    /// A MindSpeed-RL run YAML (`megatron_training`, `actor_config`, `rl_config`, `generate_config`),
    /// or a model block (`configs/model/<name>.yaml`), or both.
    MindSpeedRl,
}

/// Why a text could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportError {
    /// Occurs when the text is none of the kinds above.
    Unrecognized,
    /// Occurs when a value has the wrong type or range: the key and what it must be.
    BadValue(String, Expected),
}

/// What a value must be, when it is not ([`ImportError::BadValue`]). The page words each in the
/// user's language; `Display` gives the English.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// A count such as a parallel size.
    WholeNumber,
    /// A count of at least 1.
    PositiveWholeNumber,
    /// A flag that takes a value got none.
    FollowedByValue,
    /// `--recompute-granularity` / `recompute_granularity`.
    FullOrSelective,
    /// `--schedules-method`.
    DualPipeV,
    /// `--data-parallel-sharding-strategy`.
    FsdpSharding,
    /// A share such as `gpu_memory_utilization`.
    FractionUpToOne,
    /// `zero_optimization.stage`.
    ZeroStage,
    /// `--moe-token-dispatcher-type`.
    MoeDispatcher,
    /// Any number.
    Number,
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Expected::WholeNumber => "a whole number",
            Expected::PositiveWholeNumber => "a positive whole number",
            Expected::FollowedByValue => "followed by a value",
            Expected::FullOrSelective => "full or selective",
            Expected::DualPipeV => "dualpipev",
            Expected::FsdpSharding => "optim, optim_grads or optim_grads_params",
            Expected::FractionUpToOne => "a number in (0, 1]",
            Expected::ZeroStage => "0, 1, 2 or 3",
            Expected::MoeDispatcher => "allgather, alltoall or flex",
            Expected::Number => "a number",
        })
    }
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

impl std::error::Error for ImportError {}

/// Reads `text` into a plan file. The file starts from the defaults ([`PlanFile::minimal`]), not
/// from `current`: of `current` it keeps the hardware, the cluster where the file does not give
/// it, and the model where the file does not tell it ([`ModelOrigin::Unknown`]). A setting of an
/// earlier import or of the form (a ZeRO stage, a dataset) never survives.
///
/// # Errors
///
/// [`ImportError::Unrecognized`] for a text of no kind above, [`ImportError::BadValue`] for a key
/// the plan reads whose value it cannot take.
pub fn import(text: &str, current: &PlanFile) -> Result<Imported, ImportError> {
    let mut file = PlanFile::minimal(current.model.clone());
    file.hardware = current.hardware.clone();
    file.cluster = current.cluster;
    let kind = kind_of(text)?;
    let reading = read(kind, text, &mut file)?;
    let refused = match kind {
        ConfigKind::Megatron => refused_flags(text, Table::MegatronLm),
        ConfigKind::MindSpeedLlm => refused_flags(text, Table::MindSpeedLlm),
        _ => Vec::new(),
    };
    let (model, origin) = model(text, &reading, current);
    file.model = model;
    let unknown = settle(kind, &mut file, &reading);
    Ok(Imported { file, kind, model: origin, unknown, refused })
}

/// What a reader found besides the settings it wrote into the plan file.
#[derive(Clone, Debug, Default)]
struct Reading {
    /// The keys the plan does not hold with their values (as written where one is set outside the
    /// file), in the order met.
    rest: Vec<(String, String)>,
    /// The model's weights or tokenizer: a Hugging Face id or a directory.
    model_path: Option<String>,
    /// The training data.
    dataset: Option<String>,
    /// Where checkpoints go.
    output_dir: Option<String>,
    /// The first node's address.
    master_addr: Option<String>,
    /// The rendezvous port, as written.
    master_port: Option<String>,
    /// The model's architecture flags and their values (`""` for a switch).
    shape: Vec<(String, String)>,
    /// Names besides the path that may spell a catalog model (MindSpeed-RL's model names).
    names: Vec<String>,
}

fn kind_of(text: &str) -> Result<ConfigKind, ImportError> {
    if text.trim_start().starts_with('{') {
        let v: Value = serde_json::from_str(text).map_err(|_| ImportError::Unrecognized)?;
        let obj = v.as_object().ok_or(ImportError::Unrecognized)?;
        return match obj.contains_key("zero_optimization") || obj.contains_key("train_batch_size") {
            true => Ok(ConfigKind::DeepSpeed),
            false => Err(ImportError::Unrecognized),
        };
    }
    if text.contains("actor_rollout_ref.") || text.contains("verl.trainer.main_ppo") {
        return Ok(ConfigKind::Verl);
    }
    if text.contains("--tensor-model-parallel-size")
        || text.contains("pretrain_gpt.py")
        || text.contains("posttrain_gpt.py")
    {
        let ascend = text.contains("--use-mcore-models")
            || text.contains("set_env.sh")
            || text.contains("PretrainedFromHF");
        return Ok(if ascend { ConfigKind::MindSpeedLlm } else { ConfigKind::Megatron });
    }
    let map = yaml_map(text)?;
    let key = |k: &Yaml| k.as_str().map(str::to_owned).unwrap_or_default();
    if map.iter().any(|(k, v)| {
        matches!(key(k).as_str(), "megatron_training" | "rl_config" | "generate_config") || model_block(v)
    }) {
        return Ok(ConfigKind::MindSpeedRl);
    }
    if map.keys().any(|k| matches!(key(k).as_str(), "stage" | "finetuning_type" | "model_name_or_path")) {
        return Ok(ConfigKind::LlamaFactory);
    }
    Err(ImportError::Unrecognized)
}

/// Reads `text` as `kind`, writing what the plan holds into `file`.
fn read(kind: ConfigKind, text: &str, file: &mut PlanFile) -> Result<Reading, ImportError> {
    match kind {
        ConfigKind::Megatron => script(text, false, file),
        ConfigKind::MindSpeedLlm => script(text, true, file),
        ConfigKind::LlamaFactory => llamafactory(&yaml_map(text)?, text, file),
        ConfigKind::DeepSpeed => {
            let v: Value = serde_json::from_str(text).map_err(|_| ImportError::Unrecognized)?;
            deepspeed(&v, file)
        }
        ConfigKind::Verl => verl(text, file),
        ConfigKind::MindSpeedRl => mindspeed_rl(&yaml_map(text)?, file),
    }
}

/// The YAML documents of `text`, their top-level keys merged (a run YAML and its model block may
/// be pasted together).
fn yaml_map(text: &str) -> Result<Hash, ImportError> {
    let docs = YamlLoader::load_from_str(text).map_err(|_| ImportError::Unrecognized)?;
    let mut map = Hash::new();
    for doc in docs {
        match doc {
            Yaml::Hash(h) => map.extend(h),
            _ => return Err(ImportError::Unrecognized),
        }
    }
    match map.is_empty() {
        true => Err(ImportError::Unrecognized),
        false => Ok(map),
    }
}

/// The main file `kind` the plan writes, with no header.
fn written(kind: ConfigKind, plan: &Plan) -> Option<String> {
    match kind {
        ConfigKind::Megatron => Some(super::megatron::script(plan, &[]).text),
        ConfigKind::MindSpeedLlm => Some(super::mindspeed_llm::script(plan, &[]).text),
        ConfigKind::LlamaFactory => {
            super::llamafactory::files(plan, &[]).into_iter().find(|f| f.name == "train.yaml").map(|f| f.text)
        }
        ConfigKind::DeepSpeed => serde_json::to_string(&super::deepspeed::config(plan)).ok(),
        ConfigKind::Verl => super::verl::script(plan, &[]).ok().map(|f| f.text),
        ConfigKind::MindSpeedRl => super::mindspeed_rl::files(plan, &[]).into_iter().next().map(|f| f.text),
    }
}

/// The file the plan writes, read back as `kind`.
fn written_reading(kind: ConfigKind, file: &PlanFile) -> Option<Reading> {
    let plan = Plan::from_file(file).ok()?;
    let text = written(kind, &plan)?;
    read(kind, &text, &mut plan.to_file()).ok()
}

/// Sets the launch settings read, each emitter placeholder (the catalog model's Hugging Face id,
/// the demo dataset, `saves/<model>/<stage>`, port 29500, …) back to empty; returns the keys not
/// used: those whose value the file the plan writes does not hold as written.
fn settle(kind: ConfigKind, file: &mut PlanFile, reading: &Reading) -> Vec<String> {
    // Each key once, in the order met.
    let mut seen = std::collections::HashSet::new();
    let keys: Vec<String> =
        reading.rest.iter().filter(|(k, _)| seen.insert(k)).map(|(k, _)| k.clone()).collect();
    let raw = |v: &Option<String>| v.clone().unwrap_or_default();
    // With no launch settings the plan writes its placeholders: read them back.
    let Some(defaults) = written_reading(kind, file) else {
        // A plan that does not validate writes no file to compare with: every key is left out.
        file.launch = LaunchFile {
            model_path: raw(&reading.model_path),
            dataset: raw(&reading.dataset),
            output_dir: raw(&reading.output_dir),
            master_addr: raw(&reading.master_addr),
            master_port: reading.master_port.as_deref().and_then(|p| p.parse().ok()).unwrap_or(0),
        };
        return keys;
    };
    let kept = |read: &Option<String>, placeholder: &Option<String>| match read {
        Some(v) if Some(v) != placeholder.as_ref() => v.clone(),
        _ => String::new(),
    };
    let port = |p: &Option<String>| p.as_deref().and_then(|p| p.trim().parse::<u16>().ok());
    file.launch = LaunchFile {
        model_path: kept(&reading.model_path, &defaults.model_path),
        dataset: kept(&reading.dataset, &defaults.dataset),
        output_dir: kept(&reading.output_dir, &defaults.output_dir),
        master_addr: kept(&reading.master_addr, &defaults.master_addr),
        master_port: port(&reading.master_port)
            .filter(|&p| Some(p) != port(&defaults.master_port))
            .unwrap_or(0),
    };
    let written = written_reading(kind, file).unwrap_or(defaults);
    // The last value of each key counts, as each framework's parser takes it.
    let last = |rest: &[(String, String)]| -> HashMap<String, String> { rest.iter().cloned().collect() };
    let (mine, theirs) = (last(&reading.rest), last(&written.rest));
    keys.into_iter()
        .filter(|key| match (mine.get(key), theirs.get(key)) {
            (Some(mine), Some(theirs)) => !same_value(mine, theirs),
            _ => true,
        })
        .collect()
}

/// Whether two values as written mean the same: the same text, the same number (`1e-4`,
/// `1.0e-4`), or the same truth value (`True`, `true`).
fn same_value(a: &str, b: &str) -> bool {
    let boolean = |s: &str| matches!(s.to_ascii_lowercase().as_str(), "true" | "false");
    a == b
        || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
        || (boolean(a) && a.eq_ignore_ascii_case(b))
}

// ---------------------------------------------------------------------------------------------
// The model.

/// The model the file tells, and how; the current plan's model when it tells none.
fn model(text: &str, reading: &Reading, current: &PlanFile) -> (ModelField, ModelOrigin) {
    // Catalog models the file names, first the path's, then the other names.
    let mut named: Vec<(&'static str, ModelOrigin)> = Vec::new();
    if let Some(path) = &reading.model_path {
        if let Some(id) = by_repo(path) {
            named.push((id, ModelOrigin::Named(id.to_owned())));
        } else if let Some(m) = crate::catalog::model_by_name(path) {
            named.push((m.id, ModelOrigin::Matched { from: path.clone(), id: m.id.to_owned() }));
        }
    }
    for name in &reading.names {
        if let Some(m) = crate::catalog::model_by_name(name) {
            named.push((m.id, ModelOrigin::Matched { from: name.clone(), id: m.id.to_owned() }));
        }
    }
    let Some(shape) = Shape::parse(&reading.shape) else {
        if let Some((id, origin)) = named.into_iter().next() {
            return (ModelField::Id(id.to_owned()), origin);
        }
        // A Hugging Face id anywhere in the text (a comment, a variable), the longest match winning.
        let anywhere = crate::catalog::CONFIGS
            .iter()
            .filter_map(|c| Some((c.id, super::hf_repo(c.source)?)))
            .filter(|(_, repo)| text.contains(repo.as_str()))
            .max_by_key(|(_, repo)| repo.len());
        return match anywhere {
            Some((id, _)) => (ModelField::Id(id.to_owned()), ModelOrigin::Named(id.to_owned())),
            None => (current.model.clone(), ModelOrigin::Unknown),
        };
    };
    // The flags decide: a named model only when it has their architecture.
    let candidates: Vec<&'static str> =
        catalog_shapes().iter().filter(|(_, s)| s.matches(&shape)).map(|(id, _)| *id).collect();
    if let Some((id, origin)) = named.iter().find(|(id, _)| candidates.contains(id)) {
        return (ModelField::Id((*id).to_owned()), origin.clone());
    }
    if let Some(id) = candidates.first() {
        return (ModelField::Id((*id).to_owned()), ModelOrigin::Shape((*id).to_owned()));
    }
    let hint = named
        .first()
        .and_then(|(id, _)| crate::catalog::model(id))
        .map(|m| (m.arch.family, m.arch.vocab_size));
    let name = reading
        .model_path
        .iter()
        .chain(&reading.names)
        .find_map(|p| p.rsplit(['/', '\\']).find(|part| !part.is_empty()))
        .map_or_else(|| "custom model".to_owned(), str::to_owned);
    match built(&shape, &reading.shape, hint, &name) {
        Some(field) => (field, ModelOrigin::Built { name }),
        None => (current.model.clone(), ModelOrigin::Unknown),
    }
}

/// The catalog model whose Hugging Face id `path` is, or a variant of (`Qwen/Qwen2.5-7B-Instruct`):
/// the longest id matching.
fn by_repo(path: &str) -> Option<&'static str> {
    let path = path.trim().trim_end_matches('/').to_ascii_lowercase();
    crate::catalog::CONFIGS
        .iter()
        .filter_map(|c| Some((c.id, super::hf_repo(c.source)?.to_ascii_lowercase())))
        .filter(|(_, repo)| path == *repo || path.starts_with(&format!("{repo}-")))
        .max_by_key(|(_, repo)| repo.len())
        .map(|(id, _)| id)
}

/// A model's architecture as Megatron builds it from its flags, each left out one at Megatron's
/// default (`megatron/training/arguments.py`: `ffn_hidden_size` 4·h, or ⅔ of it rounded down to a
/// multiple of 64 with SwiGLU; `kv_channels` h ÷ heads; one query group under
/// `--group-query-attention`; biases on; LayerNorm; learned absolute positions; rotary base
/// 10000; top-2 routing; the MLA ranks of `_add_mla_args`).
#[derive(Clone, Debug, PartialEq)]
struct Shape {
    layers: u64,
    hidden: u64,
    ffn: u64,
    heads: u64,
    groups: u64,
    head_dim: u64,
    qkv_bias: bool,
    linear_bias: bool,
    qk_norm: bool,
    swiglu: bool,
    tied: bool,
    rms: bool,
    rope: bool,
    /// `None` where the file sets it outside (a `${…}` guard): any base matches.
    rotary_base: Option<u64>,
    /// Llama-3 frequency scaling's factor.
    rope_scaling: Option<f64>,
    /// Experts, top-k, expert FFN, shared-expert FFN.
    moe: Option<[u64; 4]>,
    /// q LoRA rank (0 = none), KV LoRA rank, q/k head dim, rotary head dim, v head dim.
    mla: Option<[u64; 5]>,
    /// `None` where the file does not give it (Megatron-LM reads it from the tokenizer): any matches.
    vocab: Option<u64>,
}

/// The flags that describe the model: read for its architecture, compared with the file the plan
/// writes like the rest.
const SHAPE_FLAGS: &[&str] = &[
    "--num-layers",
    "--hidden-size",
    "--ffn-hidden-size",
    "--num-attention-heads",
    "--group-query-attention",
    "--num-query-groups",
    "--kv-channels",
    "--add-qkv-bias",
    "--qk-layernorm",
    "--multi-latent-attention",
    "--q-lora-rank",
    "--kv-lora-rank",
    "--qk-head-dim",
    "--qk-pos-emb-head-dim",
    "--v-head-dim",
    "--position-embedding-type",
    "--rotary-base",
    "--use-rope-scaling",
    "--rope-scaling-type",
    "--rope-scaling-factor",
    "--low-freq-factor",
    "--high-freq-factor",
    "--original-max-position-embeddings",
    "--max-position-embeddings",
    "--normalization",
    "--norm-epsilon",
    "--swiglu",
    "--disable-bias-linear",
    "--untie-embeddings-and-output-weights",
    "--num-experts",
    "--moe-router-topk",
    "--moe-ffn-hidden-size",
    "--moe-shared-expert-intermediate-size",
    "--first-k-dense-replace",
    "--padded-vocab-size",
    "--vocab-size",
];

impl Shape {
    /// The architecture the flags describe; `None` without layers, width and heads.
    fn parse(flags: &[(String, String)]) -> Option<Shape> {
        let map: HashMap<&str, &str> = flags.iter().map(|(f, v)| (f.as_str(), v.trim())).collect();
        let has = |f: &str| map.contains_key(f);
        let int = |f: &str| map.get(f).and_then(|v| v.parse::<u64>().ok());
        let (layers, hidden, heads) =
            (int("--num-layers")?, int("--hidden-size")?, int("--num-attention-heads")?);
        if layers == 0 || hidden == 0 || heads == 0 {
            return None;
        }
        let swiglu = has("--swiglu");
        // Saturating: an edited script can name any width.
        let ffn = int("--ffn-hidden-size").unwrap_or(if swiglu {
            (hidden.saturating_mul(8) / 3) / 64 * 64
        } else {
            hidden.saturating_mul(4)
        });
        let mla = has("--multi-latent-attention").then(|| {
            [
                int("--q-lora-rank").unwrap_or(0),
                int("--kv-lora-rank").unwrap_or(32),
                int("--qk-head-dim").unwrap_or(128),
                int("--qk-pos-emb-head-dim").unwrap_or(64),
                int("--v-head-dim").unwrap_or(128),
            ]
        });
        let (groups, head_dim) = match mla {
            Some(_) => (heads, 0),
            None => (
                match has("--group-query-attention") {
                    true => int("--num-query-groups").unwrap_or(1),
                    false => heads,
                },
                int("--kv-channels").unwrap_or(hidden / heads),
            ),
        };
        let linear_bias = !has("--disable-bias-linear");
        let rope = map.get("--position-embedding-type") == Some(&"rope");
        let rotary_base = match map.get("--rotary-base") {
            _ if !rope => None,
            None => Some(10000),
            Some(v) => v.parse::<f64>().ok().filter(|x| x.is_finite() && 0.0 < *x).map(|x| x.round() as u64),
        };
        let llama3 = has("--use-rope-scaling") || map.get("--rope-scaling-type") == Some(&"llama3");
        let rope_scaling = llama3
            .then(|| map.get("--rope-scaling-factor").and_then(|v| v.parse::<f64>().ok()).unwrap_or(8.0));
        let moe = int("--num-experts").map(|n| {
            [
                n,
                int("--moe-router-topk").unwrap_or(2),
                int("--moe-ffn-hidden-size").unwrap_or(ffn),
                int("--moe-shared-expert-intermediate-size").unwrap_or(0),
            ]
        });
        Some(Shape {
            layers,
            hidden,
            ffn,
            heads,
            groups,
            head_dim,
            qkv_bias: linear_bias || has("--add-qkv-bias"),
            linear_bias,
            qk_norm: has("--qk-layernorm"),
            swiglu,
            tied: !has("--untie-embeddings-and-output-weights"),
            rms: map.get("--normalization") == Some(&"RMSNorm"),
            rope,
            rotary_base,
            rope_scaling,
            moe,
            mla,
            vocab: int("--padded-vocab-size").or_else(|| int("--vocab-size")),
        })
    }

    /// The same architecture, a vocabulary or rotary base one side leaves open matching any.
    fn matches(&self, other: &Shape) -> bool {
        let open = |a: Option<u64>, b: Option<u64>| a.is_none() || b.is_none() || a == b;
        let closed = |s: &Shape| Shape { vocab: None, rotary_base: None, ..s.clone() };
        open(self.vocab, other.vocab)
            && open(self.rotary_base, other.rotary_base)
            && closed(self) == closed(other)
    }

    /// The architecture of a plan's model, as its Megatron flags and vocabulary give it.
    fn of(plan: &Plan) -> Option<Shape> {
        let words = shell_words::split(&super::megatron::model_flags(plan, false).join(" ")).ok()?;
        let mut shape = Shape::parse(&flag_pairs(&words))?;
        shape.vocab = Some(plan.model.arch.vocab_size);
        Some(shape)
    }
}

/// `--flag value…` words as (flag, values joined) pairs, a switch's value empty.
fn flag_pairs(words: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let Some(_) = words[i].strip_prefix("--") else {
            i += 1;
            continue;
        };
        let flag = words[i].clone();
        i += 1;
        let mut values = Vec::new();
        while i < words.len() && !words[i].starts_with("--") {
            values.push(words[i].as_str());
            i += 1;
        }
        out.push((flag, values.join(" ")));
    }
    out
}

/// Each catalog model's architecture, computed once.
fn catalog_shapes() -> &'static [(&'static str, Shape)] {
    static SHAPES: OnceLock<Vec<(&'static str, Shape)>> = OnceLock::new();
    SHAPES.get_or_init(|| {
        crate::catalog::CONFIGS
            .iter()
            .filter_map(|c| {
                let plan = Plan::from_file(&PlanFile::minimal(ModelField::Id(c.id.to_owned()))).ok()?;
                Some((c.id, Shape::of(&plan)?))
            })
            .collect()
    })
}

/// A model with `shape` as an HF config the planner reads, named `name`: GPT-2 for learned
/// positions and LayerNorm; for RoPE, RMSNorm and SwiGLU, DeepSeek-V3 for MLA, Qwen3(-MoE) for
/// q/k norms, Qwen2-MoE for a shared expert, Mixtral for other MoE, Qwen2 for biases on q/k/v only,
/// Llama otherwise. `None` where no family has the shape, or the config read back has another.
/// A vocabulary the flags do not give is `hint`'s (a named model's family and vocabulary) when the
/// families agree, else the family's default.
fn built(
    shape: &Shape,
    flags: &[(String, String)],
    hint: Option<(Family, u64)>,
    name: &str,
) -> Option<ModelField> {
    let map: HashMap<&str, &str> = flags.iter().map(|(f, v)| (f.as_str(), v.trim())).collect();
    let int = |f: &str| map.get(f).and_then(|v| v.parse::<u64>().ok());
    let float = |f: &str| map.get(f).and_then(|v| v.parse::<f64>().ok()).filter(|x| x.is_finite());
    let s = shape;
    let max_positions = int("--max-position-embeddings").unwrap_or(4096);
    let mut c = Map::new();
    let mut set = |k: &str, v: Value| {
        c.insert(k.to_owned(), v);
    };
    match (s.swiglu, s.rms, s.rope) {
        (false, false, false) => {
            let gpt2 = s.linear_bias && s.tied && s.moe.is_none() && s.mla.is_none() && !s.qk_norm;
            if !gpt2 || s.groups != s.heads || s.head_dim.checked_mul(s.heads) != Some(s.hidden) {
                return None;
            }
            set("model_type", json!("gpt2"));
            set("n_embd", json!(s.hidden));
            set("n_layer", json!(s.layers));
            set("n_head", json!(s.heads));
            set("n_positions", json!(max_positions));
            set("n_inner", json!(s.ffn));
            if let Some(eps) = float("--norm-epsilon") {
                set("layer_norm_epsilon", json!(eps));
            }
        }
        (true, true, true) => {
            set("hidden_size", json!(s.hidden));
            set("num_hidden_layers", json!(s.layers));
            set("num_attention_heads", json!(s.heads));
            set("intermediate_size", json!(s.ffn));
            set("max_position_embeddings", json!(max_positions));
            set("tie_word_embeddings", json!(s.tied));
            if let Some(theta) = s.rotary_base {
                set("rope_theta", json!(theta));
            }
            if let Some(eps) = float("--norm-epsilon") {
                set("rms_norm_eps", json!(eps));
            }
            if let Some(factor) = s.rope_scaling {
                set(
                    "rope_scaling",
                    json!({"rope_type": "llama3", "factor": factor,
                        "low_freq_factor": float("--low-freq-factor").unwrap_or(1.0),
                        "high_freq_factor": float("--high-freq-factor").unwrap_or(4.0),
                        "original_max_position_embeddings": int("--original-max-position-embeddings").unwrap_or(8192)}),
                );
            }
            if s.mla.is_none() {
                set("num_key_value_heads", json!(s.groups));
                set("head_dim", json!(s.head_dim));
            }
            // Biases: q/k/v only (Qwen2), everywhere (Llama's attention_bias and mlp_bias), none.
            let qkv_only = s.qkv_bias && !s.linear_bias;
            match (s.mla, s.moe) {
                (Some([q, kv, qk, rope, v]), Some([n, k, expert, shared])) => {
                    if s.qk_norm || s.qkv_bias || !shared.is_multiple_of(expert.max(1)) {
                        return None;
                    }
                    set("model_type", json!("deepseek_v3"));
                    set("num_key_value_heads", json!(s.heads));
                    set("q_lora_rank", if q == 0 { Value::Null } else { json!(q) });
                    set("kv_lora_rank", json!(kv));
                    set("qk_nope_head_dim", json!(qk));
                    set("qk_rope_head_dim", json!(rope));
                    set("v_head_dim", json!(v));
                    set("n_routed_experts", json!(n));
                    set("num_experts_per_tok", json!(k));
                    set("moe_intermediate_size", json!(expert));
                    set("n_shared_experts", json!(shared / expert.max(1)));
                    set("first_k_dense_replace", json!(int("--first-k-dense-replace").unwrap_or(0)));
                    set("num_nextn_predict_layers", json!(0));
                }
                (Some(_), None) => return None,
                (None, Some([n, k, expert, shared])) => {
                    match (s.qk_norm, 0 < shared) {
                        (true, false) if !s.qkv_bias => {
                            set("model_type", json!("qwen3_moe"));
                            set("attention_bias", json!(false));
                            set("num_experts", json!(n));
                        }
                        (false, true) if !s.linear_bias => {
                            set("model_type", json!("qwen2_moe"));
                            set("qkv_bias", json!(s.qkv_bias));
                            set("shared_expert_intermediate_size", json!(shared));
                            set("num_experts", json!(n));
                        }
                        (false, false) if !s.qkv_bias && expert == s.ffn => {
                            set("model_type", json!("mixtral"));
                            set("num_local_experts", json!(n));
                        }
                        _ => return None,
                    }
                    set("num_experts_per_tok", json!(k));
                    set("moe_intermediate_size", json!(expert));
                    set("decoder_sparse_step", json!(1));
                    set("mlp_only_layers", json!([]));
                }
                (None, None) if s.qk_norm => {
                    if s.qkv_bias != s.linear_bias {
                        return None;
                    }
                    set("model_type", json!("qwen3"));
                    set("attention_bias", json!(s.qkv_bias));
                }
                (None, None) if qkv_only => set("model_type", json!("qwen2")),
                (None, None) => {
                    set("model_type", json!("llama"));
                    set("attention_bias", json!(s.linear_bias));
                    set("mlp_bias", json!(s.linear_bias));
                }
            }
        }
        _ => return None,
    }
    let family = c.get("model_type").and_then(Value::as_str).and_then(Family::from_model_type);
    let vocab = s.vocab.or(hint.filter(|(f, _)| Some(*f) == family).map(|(_, v)| v));
    if let Some(vocab) = vocab {
        c.insert("vocab_size".to_owned(), json!(vocab));
    }
    let field = ModelField::Config { hf_config: Value::Object(c), name: Some(name.to_owned()) };
    // The config read back must have the flags' architecture.
    let plan = Plan::from_file(&PlanFile::minimal(field.clone())).ok()?;
    Shape::of(&plan).filter(|back| back.matches(shape)).map(|_| field)
}

// ---------------------------------------------------------------------------------------------
// The readers.

/// The value after a flag, or what it lacks.
fn need<'a>(value: Option<&'a str>, flag: &str) -> Result<&'a str, ImportError> {
    value.ok_or_else(|| ImportError::BadValue(flag.to_owned(), Expected::FollowedByValue))
}

fn num(key: &str, v: &str) -> Result<u32, ImportError> {
    v.trim_matches(['"', '\''])
        .parse::<u32>()
        .map_err(|_| ImportError::BadValue(key.to_owned(), Expected::WholeNumber))
}

/// The words of a shell script, comments dropped; a line that does not split is skipped.
fn words(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| shell_words::split(l.trim_end_matches('\\')).ok())
        .flatten()
        .collect()
}

/// The script's assignments (`NAME=value`, `export NAME=value`), in order.
fn script_vars(text: &str) -> Vec<(String, String)> {
    words(text)
        .into_iter()
        .filter_map(|w| {
            let (name, value) = w.split_once('=')?;
            let is_name = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            is_name.then(|| (name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// One `--flag value…` of a script.
struct FlagUse {
    /// The flag, `--tensor-model-parallel-size`.
    flag: String,
    /// Its values with the script's `$NAME`s read (`--flag=value` gives one); `None` where one is
    /// set outside the script.
    values: Option<Vec<String>>,
    /// Its values as written, joined.
    raw: String,
}

/// Every flag of a script with its values: the words after it on its command line (continuations
/// joined) up to the next flag, a shell operator, an array expansion or a `*.py` entry script.
fn script_flags(text: &str, vars: &[(String, String)]) -> Vec<FlagUse> {
    let mut out = Vec::new();
    for words in script_lines(text) {
        let mut i = 0;
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
            let mut raw: Vec<&str> = Vec::new();
            match inline {
                Some(v) => raw.push(v),
                None => {
                    while i < words.len()
                        && !words[i].starts_with("--")
                        && !ends_values(&words[i])
                        && !words[i].ends_with(".py")
                    {
                        raw.push(&words[i]);
                        i += 1;
                    }
                }
            }
            let values = raw.iter().map(|w| expand(w, vars, &mut 64)).collect::<Option<Vec<String>>>();
            out.push(FlagUse { flag: flag.to_owned(), values, raw: raw.join(" ") });
        }
    }
    out
}

/// A script's variable, read through the script's assignments.
fn var(vars: &[(String, String)], names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| {
        vars.iter().any(|(n, _)| n == name).then(|| expand(&format!("${{{name}}}"), vars, &mut 64)).flatten()
    })
}

/// MindSpeed-LLM's LoRA modules (`--lora-target-modules`, Megatron's fused linears) as the plan's
/// targets: all four are `all`; each other one is the modules it fuses.
fn lora_targets_of_modules(modules: &[String]) -> Option<TargetsField> {
    const ALL: [&str; 4] = ["linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"];
    if ALL.iter().all(|m| modules.iter().any(|n| n == m)) {
        return Some(TargetsField::Word("all".to_owned()));
    }
    let mut names = Vec::new();
    for m in modules {
        let fused: &[&str] = match m.as_str() {
            "linear_qkv" => &["q_proj", "k_proj", "v_proj"],
            "linear_proj" => &["o_proj"],
            "linear_fc1" => &["gate_proj", "up_proj"],
            "linear_fc2" => &["down_proj"],
            _ => return None,
        };
        names.extend(fused.iter().map(|n| (*n).to_owned()));
    }
    (!names.is_empty()).then_some(TargetsField::List(names))
}

/// A Megatron-LM or MindSpeed-LLM script (`ascend`): the layout, memory and batch flags, the
/// cluster and the paths; every `$NAME` read from the script's own assignments.
fn script(text: &str, ascend: bool, file: &mut PlanFile) -> Result<Reading, ImportError> {
    file.framework = if ascend { Framework::MindSpeedLlm } else { Framework::Megatron };
    file.recompute.granularity = RecomputeGranularity::None;
    let mut r = Reading::default();
    let vars = script_vars(text);
    // Node variables: `NUM_NODES=4`, `GPUS_PER_NODE=8` (and MindSpeed's names).
    if let Some(n) = var(&vars, &["NUM_NODES", "NNODES"]).and_then(|n| n.parse().ok()) {
        file.cluster.nodes = n;
    }
    if let Some(n) = var(&vars, &["GPUS_PER_NODE", "NPUS_PER_NODE"]).and_then(|n| n.parse().ok()) {
        file.cluster.devices_per_node = Some(n);
    }
    let (mut vpp_layers, mut layers) = (None, None);
    // An MoE script says which kernels it runs: Megatron's defaults stand where it does not
    // (no grouped GEMM, the allgather dispatcher; `TransformerConfig` at core_v0.19.0).
    if text.contains("--num-experts") {
        file.moe.grouped_gemm = false;
        file.moe.dispatcher = crate::plan::MoeDispatcher::AllGather;
    }
    let (mut bf16, mut fp16, mut fp8) = (false, false, false);
    let mut block: Option<Precision> = None;
    let (mut stage, mut lora, mut sft) = (None, false, false);
    // MindSpeed's fused RMSNorm, SwiGLU and rotary kernels: on when the script asks for any.
    let mut fused = false;
    for FlagUse { flag, values, raw } in script_flags(text, &vars) {
        let Some(values) = values else {
            r.rest.push((flag, raw));
            continue;
        };
        let w = flag.as_str();
        let one = values.first().map(String::as_str);
        if SHAPE_FLAGS.contains(&w) {
            if w == "--num-layers" {
                layers = Some(num(w, need(one, w)?)?);
            }
            r.shape.push((flag.clone(), values.join(" ")));
            r.rest.push((flag, values.join(" ")));
            continue;
        }
        let p = &mut file.parallel;
        match w {
            "--tensor-model-parallel-size" => p.tp = num(w, need(one, w)?)?,
            "--pipeline-model-parallel-size" => p.pp = num(w, need(one, w)?)?,
            "--num-layers-per-virtual-pipeline-stage" => vpp_layers = Some(num(w, need(one, w)?)?),
            "--num-virtual-stages-per-pipeline-rank" => p.vpp = num(w, need(one, w)?)?,
            "--pipeline-model-parallel-layout" => p.pipeline_layout = need(one, w)?.to_owned(),
            "--mtp-num-layers" => file.mtp_layers = num(w, need(one, w)?)?,
            "--context-parallel-size" => p.cp = num(w, need(one, w)?)?,
            "--expert-model-parallel-size" => p.ep = num(w, need(one, w)?)?,
            "--expert-tensor-parallel-size" => p.etp = num(w, need(one, w)?)?,
            "--sequence-parallel" => p.sequence_parallel = true,
            "--use-distributed-optimizer" => p.distributed_optimizer = true,
            "--use-torch-fsdp2" => p.fsdp = crate::plan::Fsdp::Torch,
            "--account-for-embedding-in-pipeline-split" | "--account-for-loss-in-pipeline-split" => {
                p.account_embedding_loss = true
            }
            "--use-megatron-fsdp" => {
                if p.fsdp == crate::plan::Fsdp::None {
                    p.fsdp = crate::plan::Fsdp::OptimGradsParams;
                }
            }
            "--data-parallel-sharding-strategy" => {
                let v = need(one, w)?;
                p.fsdp = match crate::plan::Fsdp::ALL.iter().find(|f| f.wire() == v) {
                    Some(&f) if f != crate::plan::Fsdp::Torch => f,
                    _ if v == "no_shard" => crate::plan::Fsdp::None,
                    _ => {
                        return Err(ImportError::BadValue(w.to_owned(), Expected::FsdpSharding));
                    }
                };
            }
            "--overlap-grad-reduce" => p.overlap_grad_reduce = true,
            "--overlap-param-gather" => p.overlap_param_gather = true,
            "--tp-comm-overlap" | "--use-ascend-coc" => p.tp_comm_overlap = true,
            "--use-fused-rmsnorm" | "--use-fused-swiglu" | "--use-fused-rotary-pos-emb" => fused = true,
            "--swap-optimizer" => p.swap_optimizer = true,
            "--num-layer-list"
            | "--decoder-first-pipeline-num-layers"
            | "--decoder-last-pipeline-num-layers" => {
                need(one, w)?;
                p.uneven_layers = true;
            }
            "--schedules-method" => {
                p.schedule = match need(one, w)? {
                    "dualpipev" => PipelineSchedule::DualPipeV,
                    _ => return Err(ImportError::BadValue(w.to_owned(), Expected::DualPipeV)),
                };
            }
            "--enable-zero-bubble" => p.schedule = PipelineSchedule::ZbH1,
            // The MoE kernels and routing (`moe` section, emit::megatron `moe_kernel_flags`).
            "--moe-grouped-gemm" => file.moe.grouped_gemm = true,
            "--moe-token-dispatcher-type" => {
                file.moe.dispatcher = match need(one, w)? {
                    "allgather" => crate::plan::MoeDispatcher::AllGather,
                    "alltoall" | "alltoall_seq" => crate::plan::MoeDispatcher::AllToAll,
                    "flex" => crate::plan::MoeDispatcher::Flex,
                    _ => return Err(ImportError::BadValue(w.to_owned(), Expected::MoeDispatcher)),
                };
            }
            "--moe-permute-fusion" | "--use-fused-moe-token-permute-and-unpermute" => {
                file.moe.permute_fusion = true
            }
            "--overlap-moe-expert-parallel-comm" | "--moe-alltoall-overlap-comm" => {
                file.moe.overlap_ep_comm = true
            }
            "--moe-expert-capacity-factor" => {
                let v = need(one, w)?;
                let c: f64 = v.parse().map_err(|_| ImportError::BadValue(w.to_owned(), Expected::Number))?;
                // Megatron treats a negative factor as none (`TransformerConfig.__post_init__`).
                file.moe.capacity_factor = (0.0 < c).then_some(c);
            }
            "--moe-pad-expert-input-to-capacity" => file.moe.pad_to_capacity = true,
            "--moe-flex-dispatcher-backend" => {
                need(one, w)?;
            }
            "--recompute-granularity" => {
                file.recompute.granularity = match need(one, w)? {
                    "full" => RecomputeGranularity::Full,
                    "selective" => RecomputeGranularity::Selective,
                    _ => return Err(ImportError::BadValue(w.to_owned(), Expected::FullOrSelective)),
                };
            }
            "--recompute-activations" => file.recompute.granularity = RecomputeGranularity::Selective,
            "--recompute-modules" => file.recompute.modules = values.clone(),
            "--cpu-offloading-num-layers" => file.recompute.cpu_offload_layers = num(w, need(one, w)?)?,
            "--recompute-method" => {
                file.recompute.method = match need(one, w)? {
                    "block" => RecomputeMethod::Block,
                    _ => RecomputeMethod::Uniform,
                };
            }
            "--recompute-num-layers" => file.recompute.num_layers = num(w, need(one, w)?)?,
            "--recompute-activation-function" => file.recompute.activation_function = true,
            "--recompute-activation-function-num-layers" => {
                file.recompute.activation_function_layers = num(w, need(one, w)?)?
            }
            "--swap-attention" => file.recompute.swap_attention = true,
            "--micro-batch-size" => file.batch.micro_batch = num(w, need(one, w)?)?,
            "--global-batch-size" => file.batch.global_batch = num(w, need(one, w)?)?,
            "--seq-length" => file.batch.seq_len = num(w, need(one, w)?)?,
            "--bf16" => bf16 = true,
            "--fp16" => fp16 = true,
            "--fp8-format" => fp8 = true,
            "--fp8-recipe" if one == Some("mxfp8") => block = Some(Precision::Mxfp8),
            "--fp4-format" | "--fp4-recipe" => block = Some(Precision::Nvfp4),
            "--lora-r" => {
                file.lora.rank = num(w, need(one, w)?)?;
                lora = 0 < file.lora.rank;
            }
            "--lora-alpha" => file.lora.alpha = num(w, need(one, w)?)?,
            "--lora-target-modules" => match lora_targets_of_modules(&values) {
                Some(targets) => file.lora.targets = targets,
                None => r.rest.push((flag, values.join(" "))),
            },
            // MindSpeed-LLM's post-training stages the plan has (`posttrain_gpt.py --stage`).
            "--stage" => match need(one, w)? {
                v @ ("sft" | "dpo") => stage = Some(v.to_owned()),
                _ => r.rest.push((flag, values.join(" "))),
            },
            // Megatron-LM's own SFT dataset (`--sft`, with `--finetune`).
            "--sft" => sft = true,
            "--tokenizer-model" | "--tokenizer-name-or-path" => r.model_path = Some(need(one, w)?.to_owned()),
            "--data-path" => r.dataset = Some(need(one, w).map(|_| values.join(" "))?),
            "--save" => r.output_dir = Some(need(one, w)?.to_owned()),
            // torchrun's: the cluster and the rendezvous (a value such as `1:4` is not the plan's).
            "--nnodes" | "--nproc_per_node" | "--nproc-per-node" => {
                match one.and_then(|v| v.parse::<u32>().ok()) {
                    Some(n) if w == "--nnodes" => file.cluster.nodes = n,
                    Some(n) => file.cluster.devices_per_node = Some(n),
                    None => r.rest.push((flag, values.join(" "))),
                }
            }
            "--master_addr" | "--master-addr" => r.master_addr = Some(need(one, w)?.to_owned()),
            "--master_port" | "--master-port" => r.master_port = Some(need(one, w)?.to_owned()),
            _ => r.rest.push((flag, values.join(" "))),
        }
    }
    // The paths as variables where no flag names them.
    let paths = [
        (&mut r.model_path, &["TOKENIZER_MODEL", "TOKENIZER_PATH"][..]),
        (&mut r.dataset, &["DATA_PATH"][..]),
        (&mut r.output_dir, &["CHECKPOINT_PATH", "CKPT_SAVE_DIR"][..]),
        (&mut r.master_addr, &["MASTER_ADDR"][..]),
        (&mut r.master_port, &["MASTER_PORT"][..]),
    ];
    for (field, names) in paths {
        if field.is_none() {
            *field = var(&vars, names);
        }
    }
    file.method = match (stage.as_deref(), lora, sft || text.contains("posttrain_gpt.py")) {
        (Some("dpo"), _, _) => Method::Dpo,
        (_, true, _) => Method::Lora,
        (_, _, true) => Method::SftFull,
        _ => Method::Pretrain,
    };
    file.precision = match (block, fp8, bf16, fp16) {
        (Some(block), ..) => block,
        (None, true, _, _) => Precision::Fp8,
        (None, _, true, _) => Precision::Bf16,
        (None, _, _, true) => Precision::Fp16,
        _ => Precision::Fp32,
    };
    if ascend {
        file.parallel.fused_kernels = fused;
    }
    // VPP = layers ÷ PP ÷ layers per virtual stage (Megatron `arguments.py`).
    if let (Some(per), Some(layers)) = (vpp_layers, layers) {
        let pp = file.parallel.pp.max(1);
        // The embedding and the loss count as a layer each when the script says so.
        let layers = layers + if file.parallel.account_embedding_loss { 2 } else { 0 };
        file.parallel.vpp = (layers / pp / per.max(1)).max(1);
    }
    // A layout string names VPP: its stages ÷ PP (`arguments.py`).
    if let Ok(stages) = crate::layout::parse(&file.parallel.pipeline_layout) {
        let pp = file.parallel.pp.max(1) as usize;
        if !file.parallel.pipeline_layout.is_empty() && stages.len().is_multiple_of(pp) {
            file.parallel.vpp = u32::try_from(stages.len() / pp).unwrap_or(u32::MAX).max(1);
        }
    }
    Ok(r)
}

/// A YAML value as text: a scalar as written, a list or map in one line.
fn yaml_text(v: &Yaml) -> String {
    match v {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(n) => n.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Null => "null".to_owned(),
        other => format!("{other:?}"),
    }
}

/// The devices in each node: the file's, else the hardware's usual count.
fn devices_per_node(file: &PlanFile) -> u32 {
    file.cluster.devices_per_node.unwrap_or_else(|| match &file.hardware {
        HardwareField::Id(id) => crate::hardware::device(id).map_or(8, |hw| hw.devices_per_node),
        HardwareField::Custom { custom } => custom.devices_per_node,
    })
}

/// A LLaMA-Factory YAML: method, LoRA, batch, recomputation, precision, attention, the DeepSpeed
/// stage as the file's name gives it, and the paths.
fn llamafactory(map: &Hash, text: &str, file: &mut PlanFile) -> Result<Reading, ImportError> {
    const APPLIED: &[&str] = &[
        "model_name_or_path",
        "dataset",
        "output_dir",
        "stage",
        "finetuning_type",
        "lora_rank",
        "lora_alpha",
        "lora_target",
        "quantization_bit",
        "cutoff_len",
        "per_device_train_batch_size",
        "gradient_accumulation_steps",
        "disable_gradient_checkpointing",
        "recompute_layers_ratio",
        "bf16",
        "fp16",
        "fp8",
        "flash_attn",
        "deepspeed",
    ];
    file.framework = Framework::LlamaFactory;
    let mut r = Reading::default();
    let get = |k: &str| map.get(&Yaml::String(k.to_owned()));
    let int = |k: &str| -> Result<Option<u32>, ImportError> {
        match get(k) {
            None => Ok(None),
            Some(Yaml::Integer(n)) if 0 < *n && *n <= i64::from(u32::MAX) => Ok(Some(*n as u32)),
            Some(_) => Err(ImportError::BadValue(k.to_owned(), Expected::PositiveWholeNumber)),
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
    if let Some(rank) = int("lora_rank")? {
        file.lora.rank = rank;
    }
    if let Some(a) = int("lora_alpha")? {
        file.lora.alpha = a;
    }
    match get("lora_target") {
        None => {}
        Some(Yaml::String(t)) => file.lora.targets = TargetsField::Word(t.to_owned()),
        Some(other) => r.rest.push(("lora_target".to_owned(), yaml_text(other))),
    }
    if let Some(n) = int("cutoff_len")? {
        file.batch.seq_len = n;
    }
    let micro = int("per_device_train_batch_size")?.unwrap_or(1);
    let gas = int("gradient_accumulation_steps")?.unwrap_or(1);
    file.batch.micro_batch = micro;
    // Global batch = per-device batch × accumulation × world (HF Trainer).
    let world = file.cluster.nodes.saturating_mul(devices_per_node(file));
    file.batch.global_batch = micro.saturating_mul(gas).saturating_mul(world.max(1));
    file.recompute.granularity = match truthy("disable_gradient_checkpointing") {
        true => RecomputeGranularity::None,
        false => RecomputeGranularity::Full,
    };
    match get("recompute_layers_ratio") {
        None => {
            // The emitter writes the Ascend build's layers ratio as a comment (upstream refuses
            // the key); read it back from there too.
            let commented = text.lines().find_map(|l| l.trim().strip_prefix("# recompute_layers_ratio:"));
            if let Some(ratio) =
                commented.and_then(|c| c.split_whitespace().next()).and_then(|c| c.parse::<f64>().ok())
                && 0.0 < ratio
                && ratio <= 1.0
            {
                file.recompute.layers_ratio = ratio;
            }
        }
        Some(Yaml::Real(ratio)) if ratio.parse::<f64>().is_ok_and(|x| 0.0 < x && x <= 1.0) => {
            file.recompute.layers_ratio = ratio.parse().unwrap_or(1.0);
        }
        Some(Yaml::Integer(1)) => file.recompute.layers_ratio = 1.0,
        Some(_) => {
            return Err(ImportError::BadValue("recompute_layers_ratio".into(), Expected::FractionUpToOne));
        }
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
    if let Some(ds) = get("deepspeed").and_then(Yaml::as_str) {
        if let Some(stage) =
            ds.split("ds_z").nth(1).and_then(|r| r.chars().next()).and_then(|c| c.to_digit(10))
        {
            file.parallel.zero_stage = stage as u8;
        }
        file.parallel.offload_optimizer = ds.contains("offload");
    }
    let text_of = |k: &str| get(k).map(yaml_text);
    r.model_path = text_of("model_name_or_path");
    r.dataset = text_of("dataset");
    r.output_dir = text_of("output_dir");
    for (k, v) in map {
        let key = k.as_str().map_or_else(|| yaml_text(k), str::to_owned);
        if !APPLIED.contains(&key.as_str()) {
            r.rest.push((key, yaml_text(v)));
        }
    }
    Ok(r)
}

/// A DeepSpeed JSON: ZeRO stage and offload, batch, recomputation, precision. The file names no
/// model, so the method is full fine-tuning of whatever model the user's script loads.
fn deepspeed(v: &Value, file: &mut PlanFile) -> Result<Reading, ImportError> {
    let Some(obj) = v.as_object() else { return Err(ImportError::Unrecognized) };
    file.framework = Framework::DeepSpeed;
    file.method = Method::SftFull;
    let mut r = Reading::default();
    let zero = &v["zero_optimization"];
    let stage = zero["stage"].as_u64().unwrap_or(0);
    if 3 < stage {
        return Err(ImportError::BadValue("zero_optimization.stage".into(), Expected::ZeroStage));
    }
    file.parallel.zero_stage = stage as u8;
    file.parallel.overlap_grad_reduce = zero["overlap_comm"].as_bool().unwrap_or(false);
    file.parallel.offload_optimizer =
        zero["offload_optimizer"]["device"].as_str().is_some_and(|d| d != "none");
    file.parallel.offload_params = zero["offload_param"]["device"].as_str().is_some_and(|d| d != "none");
    let int = |k: &str| v[k].as_u64().map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let mut applied = vec!["zero_optimization", "activation_checkpointing"];
    if let Some(m) = int("train_micro_batch_size_per_gpu") {
        file.batch.micro_batch = m.max(1);
        applied.push("train_micro_batch_size_per_gpu");
    }
    if let Some(g) = int("train_batch_size") {
        file.batch.global_batch = g.max(1);
        applied.push("train_batch_size");
    }
    file.recompute.granularity = match obj.contains_key("activation_checkpointing") {
        true => RecomputeGranularity::Full,
        false => RecomputeGranularity::None,
    };
    // `"enabled": "auto"` leaves it to the HF Trainer: the plan's default, the key not used.
    file.precision = match (&v["bf16"]["enabled"], &v["fp16"]["enabled"]) {
        (Value::Bool(true), _) => Precision::Bf16,
        (_, Value::Bool(true)) => Precision::Fp16,
        (Value::Null, Value::Null) => Precision::Fp32,
        _ => Precision::Bf16,
    };
    for k in ["bf16", "fp16"] {
        if v[k]["enabled"].is_boolean() {
            applied.push(k);
        }
    }
    for (k, value) in obj {
        if !applied.contains(&k.as_str()) {
            r.rest.push((k.clone(), value.to_string()));
        }
    }
    if let Some(zero) = zero.as_object() {
        for (k, value) in zero {
            if !matches!(k.as_str(), "stage" | "overlap_comm" | "offload_optimizer" | "offload_param") {
                r.rest.push((format!("zero_optimization.{k}"), value.to_string()));
            }
        }
    }
    Ok(r)
}

/// VeRL's overrides: the RL loop, the FSDP actor (ZeRO-3's sharding), the vLLM engine, the cluster
/// and the paths. Values the plan derives by itself come back as 0, "automatic".
fn verl(text: &str, file: &mut PlanFile) -> Result<Reading, ImportError> {
    file.framework = Framework::Verl;
    file.method = Method::Grpo;
    // `actor.strategy=fsdp` shards parameters, gradients and optimizer states: ZeRO-3.
    file.parallel.zero_stage = 3;
    let mut r = Reading::default();
    let vars = script_vars(text);
    // Read as written; a value equal to what the plan derives by itself goes back to 0 (auto) below.
    let (mut mini, mut model_len, mut batched, mut budget) = (None, None, None, None);
    for w in words(text) {
        let Some((key, value)) = w.split_once('=') else { continue };
        if !key.contains('.') {
            continue;
        }
        let written = value.trim_matches(['"', '\'']);
        // A value set outside the script (`$HOME/data/…`) is not the plan's: compared as written.
        let Some(v) = expand(written, &vars, &mut 64) else {
            r.rest.push((key.to_owned(), written.to_owned()));
            continue;
        };
        let v = v.trim_matches(['"', '\'']);
        let flag = |v: &str| v.eq_ignore_ascii_case("true");
        match key {
            "algorithm.adv_estimator" => file.method = if v == "gae" { Method::Ppo } else { Method::Grpo },
            "data.train_batch_size" => file.batch.global_batch = num(key, v)?,
            "data.max_prompt_length" => file.rl.max_prompt_length = num(key, v)?,
            "data.max_response_length" => file.rl.max_response_length = num(key, v)?,
            "data.train_files" => r.dataset = Some(v.to_owned()),
            "actor_rollout_ref.model.path" => r.model_path = Some(v.to_owned()),
            "trainer.default_local_dir" => r.output_dir = Some(v.to_owned()),
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
                file.rl.gpu_memory_utilization = v
                    .parse()
                    .map_err(|_| ImportError::BadValue(key.to_owned(), Expected::FractionUpToOne))?;
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
                let list = v.trim_matches(['[', ']']);
                file.lora.targets = match list {
                    "all-linear" => TargetsField::Word("all".to_owned()),
                    names => TargetsField::List(names.split(',').map(|n| n.trim().to_owned()).collect()),
                };
            }
            "actor_rollout_ref.model.lora_alpha" => file.lora.alpha = num(key, v)?,
            "trainer.n_gpus_per_node" => file.cluster.devices_per_node = Some(num(key, v)?),
            "trainer.nnodes" => file.cluster.nodes = num(key, v)?,
            k => r.rest.push((k.to_owned(), v.to_owned())),
        }
    }
    set_rl_autos(file, [mini, model_len, batched, budget]);
    Ok(r)
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
    let vars = script_vars(text);
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

/// Whether a YAML value is a MindSpeed-RL model block (`configs/model/<name>.yaml`): Megatron's
/// keys for the model's shape.
fn model_block(v: &Yaml) -> bool {
    let Yaml::Hash(h) = v else { return false };
    ["num_layers", "hidden_size"].iter().all(|k| h.contains_key(&Yaml::String((*k).to_owned())))
}

/// A MindSpeed-RL run YAML: the Megatron settings, the actor's layout, the RL loop, the vLLM engine
/// and the paths, and a model block pasted with it (its keys are Megatron's flags). Values the plan
/// derives by itself (a mini-batch of the whole batch, `max_model_len` of prompt + response, the
/// automatic token budgets) come back as 0, "automatic".
fn mindspeed_rl(map: &Hash, file: &mut PlanFile) -> Result<Reading, ImportError> {
    file.framework = Framework::MindSpeedRl;
    file.method = Method::Grpo;
    let mut r = Reading::default();
    let section = |name: &str| match map.get(&Yaml::String(name.to_owned())) {
        Some(Yaml::Hash(h)) => Some(h),
        _ => None,
    };
    let empty = Hash::new();
    let (mt, actor, rl, generate) = (
        section("megatron_training").unwrap_or(&empty),
        section("actor_config").unwrap_or(&empty),
        section("rl_config").unwrap_or(&empty),
        section("generate_config").unwrap_or(&empty),
    );
    let get = |h: &'_ Hash, k: &str| h.get(&Yaml::String(k.to_owned())).cloned();
    let int = |h: &Hash, sec: &str, k: &str| -> Result<Option<u32>, ImportError> {
        match get(h, k) {
            None => Ok(None),
            Some(Yaml::Integer(n)) if 0 <= n && n <= i64::from(u32::MAX) => Ok(Some(n as u32)),
            Some(_) => Err(ImportError::BadValue(format!("{sec}.{k}"), Expected::WholeNumber)),
        }
    };
    let flag = |h: &Hash, k: &str| matches!(get(h, k), Some(Yaml::Boolean(true)));
    let has = |h: &Hash, k: &str| get(h, k).is_some();

    let p = &mut file.parallel;
    p.sequence_parallel = flag(mt, "sequence_parallel");
    p.distributed_optimizer = flag(mt, "use_distributed_optimizer");
    p.swap_optimizer = flag(mt, "swap_optimizer");
    p.uneven_layers = has(mt, "num_layer_list");
    p.tp_comm_overlap = flag(mt, "use_ascend_coc");
    p.fused_kernels =
        ["use_fused_rmsnorm", "use_fused_swiglu", "use_fused_rotary_pos_emb"].iter().any(|k| flag(mt, k));
    p.cp = int(mt, "megatron_training", "context_parallel_size")?.unwrap_or(1);
    p.ep = int(mt, "megatron_training", "expert_model_parallel_size")?.unwrap_or(1);
    p.tp = int(actor, "actor_config", "tensor_model_parallel_size")?.unwrap_or(1);
    p.pp = int(actor, "actor_config", "pipeline_model_parallel_size")?.unwrap_or(1);
    file.precision = if flag(mt, "fp16") { Precision::Fp16 } else { Precision::Bf16 };
    let rc = &mut file.recompute;
    rc.granularity = match get(mt, "recompute_granularity").as_ref().and_then(Yaml::as_str) {
        None => RecomputeGranularity::None,
        Some("full") => RecomputeGranularity::Full,
        Some("selective") => RecomputeGranularity::Selective,
        Some(_) => {
            return Err(ImportError::BadValue(
                "megatron_training.recompute_granularity".into(),
                Expected::FullOrSelective,
            ));
        }
    };
    rc.method = match get(mt, "recompute_method").as_ref().and_then(Yaml::as_str) {
        Some("block") => RecomputeMethod::Block,
        _ => RecomputeMethod::Uniform,
    };
    rc.num_layers = int(mt, "megatron_training", "recompute_num_layers")?.unwrap_or(1);
    rc.activation_function = flag(mt, "recompute_activation_function");
    rc.swap_attention = flag(mt, "swap_attention");
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
    match get(mt, "lora_target_modules") {
        None => {}
        Some(Yaml::Array(list)) if list.iter().all(|m| m.as_str().is_some()) => {
            let modules: Vec<String> = list.iter().map(yaml_text).collect();
            match lora_targets_of_modules(&modules) {
                Some(targets) => file.lora.targets = targets,
                None => {
                    r.rest.push(("megatron_training.lora_target_modules".to_owned(), format!("{list:?}")))
                }
            }
        }
        Some(other) => r.rest.push(("megatron_training.lora_target_modules".to_owned(), yaml_text(&other))),
    }
    if let Some(n) = int(rl, "rl_config", "n_samples_per_prompt")? {
        rl_file.n_samples_per_prompt = n;
    }
    if let Some(n) = int(rl, "rl_config", "max_prompt_length")? {
        rl_file.max_prompt_length = n;
    }
    let sampling = match get(generate, "sampling_config") {
        Some(Yaml::Hash(h)) => h,
        _ => Hash::new(),
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
                Expected::FractionUpToOne,
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
        "megatron_training.use_fused_rmsnorm",
        "megatron_training.use_fused_swiglu",
        "megatron_training.use_fused_rotary_pos_emb",
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
        "megatron_training.lora_target_modules",
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
        "megatron_training.tokenizer_name_or_path",
        "megatron_training.data_path",
        "actor_config.save",
    ];
    let text_of = |h: &Hash, k: &str| get(h, k).as_ref().map(yaml_text);
    r.model_path = text_of(mt, "tokenizer_name_or_path");
    r.dataset = text_of(mt, "data_path");
    r.output_dir = text_of(actor, "save");
    r.names.extend([text_of(mt, "model"), text_of(actor, "model")].into_iter().flatten());
    // The devices the actor takes: the cluster, where the current one has another count.
    let resource = match get(rl, "actor_resource") {
        Some(Yaml::Hash(h)) => h,
        _ => Hash::new(),
    };
    if let Some(n) = int(&resource, "rl_config.actor_resource", "num_npus")?.filter(|&n| 0 < n) {
        let per = devices_per_node(file);
        if n != file.cluster.nodes.saturating_mul(per) {
            match (n % per, n < per) {
                (0, _) => file.cluster.nodes = n / per,
                (_, true) => (file.cluster.nodes, file.cluster.devices_per_node) = (1, Some(n)),
                _ => r.rest.push(("rl_config.actor_resource.num_npus".to_owned(), n.to_string())),
            }
        }
    }
    for (key, value) in map {
        let top = key.as_str().map_or_else(|| yaml_text(key), str::to_owned);
        if model_block(value) {
            // The model block: its keys are the model's flags (`num_layers: 28` is `--num-layers 28`).
            r.names.push(top);
            let Yaml::Hash(block) = value else { continue };
            for (k, v) in block {
                let flag = format!("--{}", yaml_text(k).replace('_', "-"));
                match v {
                    Yaml::Boolean(false) => {}
                    Yaml::Boolean(true) => r.shape.push((flag, String::new())),
                    v => r.shape.push((flag, yaml_text(v))),
                }
            }
            continue;
        }
        let Yaml::Hash(h) = value else {
            r.rest.push((top, yaml_text(value)));
            continue;
        };
        if top == "defaults" {
            r.rest.push((top, yaml_text(value)));
            continue;
        }
        for (k, v) in h {
            let key = format!("{top}.{}", yaml_text(k));
            if APPLIED.contains(&key.as_str()) {
                continue;
            }
            // The sampling settings and the actor's resources one level down: some are the plan's.
            match (key.as_str(), v) {
                ("generate_config.sampling_config" | "rl_config.actor_resource", Yaml::Hash(inner)) => {
                    for (ik, iv) in inner {
                        let ik = yaml_text(ik);
                        if !matches!(ik.as_str(), "max_tokens" | "num_npus") {
                            r.rest.push((format!("{key}.{ik}"), yaml_text(iv)));
                        }
                    }
                }
                _ => r.rest.push((key, yaml_text(v))),
            }
        }
    }
    Ok(r)
}
