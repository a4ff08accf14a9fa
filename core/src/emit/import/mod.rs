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

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use yaml_rust2::Yaml;
use yaml_rust2::yaml::Hash;

use super::flags::{self, FlagError, Table};
use crate::Plan;
use crate::model::Family;
use crate::plan::{
    AttentionImpl, CpAlgo, Framework, Fsdp, HardwareField, LaunchFile, Method, ModelField, OffloadDevice,
    PipelineSchedule, PlanFile, Precision, RecomputeGranularity, RecomputeMethod, TargetsField,
};

mod branches;
mod deepspeed;
mod llamafactory;
mod mindspeed_rl;
mod model;
mod script;
mod verl;
mod yaml;
use deepspeed::deepspeed;
use llamafactory::llamafactory;
use mindspeed_rl::{mindspeed_rl, model_block};
use model::{SHAPE_FLAGS, model};
use script::{expand, expand_leniently, refused_flags, script, script_vars, words};
use verl::verl;
use yaml::{Section, yaml_key, yaml_map, yaml_text};

/// What an import did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// What the file makes its framework do that its text may not mean, read as the file means it.
    #[serde(default)]
    pub caveats: Vec<Caveat>,
}

/// Something a launch file makes its framework do that its text may not mean: the plan takes
/// what the file means and the launch file the plan writes says it outright, but the file as
/// given runs otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Caveat {
    /// A MindSpeed-RL file sets `max_packing_token_size` (these tokens) and none of the roles'
    /// `update_`, `actor_` and `ref_max_packing_token_size`. At 05a90d7 `RLConfig.__init__` sets
    /// each role's size from the default 4,096 before it reads the file
    /// (mindspeed_rl/config_cls/rl_config.py), and the actor's update, its log-probabilities and
    /// the reference each pack to their own (`BaseTrainingEngine`,
    /// mindspeed_rl/models/base/base_training_engine.py): the file's size reaches the critic alone
    /// (mindspeed_rl/workers/critic_worker.py).
    PackingRolesUnset {
        /// The file's `max_packing_token_size`.
        tokens: u32,
    },
}

impl std::fmt::Display for Caveat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Caveat::PackingRolesUnset { tokens } => write!(
                f,
                "max_packing_token_size {tokens} reaches MindSpeed-RL's critic alone: the actor's update, its \
                 log-probabilities and the reference pack {default} tokens each unless update_, actor_ and \
                 ref_max_packing_token_size are set; the plan takes {tokens} for them, and its launch file sets each",
                default = crate::plan::MINDSPEED_RL_PACKED_TOKENS
            ),
        }
    }
}

/// How an import told the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The file's architecture flags describe a model no family here builds, these flags (as
    /// written) being the ones none has, where the file gives them: the plan keeps the model it
    /// had, and the user should pick one or import its config.json.
    Unbuilt(Vec<String>),
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
            ModelOrigin::Unbuilt(flags) if flags.is_empty() => {
                f.write_str("not identified: no family here builds the model the architecture flags describe; the plan's model kept")
            }
            ModelOrigin::Unbuilt(flags) => write!(
                f,
                "not identified: no family here builds the model the architecture flags describe ({}); the plan's model kept",
                flags.join(", ")
            ),
            ModelOrigin::Unknown => f.write_str("not identified: the plan's model kept"),
        }
    }
}

/// The kinds of launch file the import reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// What reading a text gives: the import, or why the text was not read (the page's launch-file
/// reader hands it to the page as JSON).
pub type Reply = Result<Imported, ImportError>;

/// Why a text could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ImportError {
    /// Occurs when the text is none of the kinds above.
    Unrecognized,
    /// Occurs when a value has the wrong type or range: the key and what it must be.
    BadValue(String, Expected),
}

/// What a value must be, when it is not ([`ImportError::BadValue`]). The page words each in the
/// user's language; `Display` gives the English.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// `lora_dropout`.
    Dropout,
    /// `zero_optimization.stage`.
    ZeroStage,
    /// `--moe-token-dispatcher-type`.
    MoeDispatcher,
    /// Any number.
    Number,
    /// `--attention-backend`.
    AttentionBackend,
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
            Expected::Dropout => "a number from 0 to 0.9",
            Expected::ZeroStage => "0, 1, 2 or 3",
            Expected::MoeDispatcher => "allgather, alltoall or flex",
            Expected::Number => "a number",
            Expected::AttentionBackend => "flash, fused, unfused, local or auto",
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
    // A script is read as the shell runs it: the branches of its `if` blocks it would not run left out.
    let text = &*match kind {
        ConfigKind::Megatron | ConfigKind::MindSpeedLlm | ConfigKind::Verl => branches::taken_branches(text),
        _ => std::borrow::Cow::Borrowed(text),
    };
    let reading = read(kind, text, &mut file)?;
    let refused = match kind {
        ConfigKind::Megatron => refused_flags(text, Table::MegatronLm),
        ConfigKind::MindSpeedLlm => refused_flags(text, Table::MindSpeedLlm),
        _ => Vec::new(),
    };
    let (model, origin) = model(text, &reading, current);
    file.model = model;
    let unknown = settle(kind, &mut file, &reading);
    Ok(Imported { file, kind, model: origin, unknown, refused, caveats: reading.caveats })
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
    /// What the file makes its framework do that it may not mean ([`Imported::caveats`]).
    caveats: Vec<Caveat>,
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
        // MindSpeed-LLM's scripts source CANN's environment and load HF tokenizers as
        // `PretrainedFromHF`. Not `--use-mcore-models`: Megatron-LM's own examples write it too
        // (`examples/llama/train_llama3_8b_h100_fp8.sh`).
        let ascend = text.contains("set_env.sh") || text.contains("PretrainedFromHF");
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
    let one = |a: &str, b: &str| {
        a == b
            || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
            || (boolean(a) && a.eq_ignore_ascii_case(b))
    };
    // A comma-separated list (LongRoPE's factors) item by item: `64.83999633789062` and the
    // `64.83999633789063` the plan writes are one double.
    one(a, b)
        || (a.contains(',')
            && a.split(',').count() == b.split(',').count()
            && a.split(',').zip(b.split(',')).all(|(x, y)| one(x, y)))
}

// ---------------------------------------------------------------------------------------------
// The model.

/// The value after a flag, or what it lacks.
fn need<'a>(value: Option<&'a str>, flag: &str) -> Result<&'a str, ImportError> {
    value.ok_or_else(|| ImportError::BadValue(flag.to_owned(), Expected::FollowedByValue))
}

fn num(key: &str, v: &str) -> Result<u32, ImportError> {
    v.trim_matches(['"', '\''])
        .parse::<u32>()
        .map_err(|_| ImportError::BadValue(key.to_owned(), Expected::WholeNumber))
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

/// The devices in each node: the file's, else the hardware's usual count.
/// Sets the layers of each pipeline stage a file gives (MindSpeed's layer lists, or what its empty
/// slots leave), with `ranks` pipeline ranks: the planner's own uneven split where they are that
/// (`layout::uneven_sizes`), else the plan's layout (`layout::of_stage_sizes`), the plan's MTP
/// layers after the last stage's.
fn set_stage_sizes(file: &mut PlanFile, sizes: &[u64], ranks: u64) {
    let p = &mut file.parallel;
    let one_per_rank = sizes.len() as u64 == ranks;
    // A pasted list's sizes may add past u64: no layers count of its own then.
    let total = sizes.iter().try_fold(0_u64, |sum, &n| sum.checked_add(n));
    let own = total.filter(|_| one_per_rank).and_then(|total| crate::layout::uneven_sizes(total, ranks));
    match own.as_deref() == Some(sizes) {
        true => p.uneven_layers = true,
        false => {
            p.pipeline_layout = crate::layout::of_stage_sizes(sizes, u64::from(file.mtp_layers));
            p.uneven_layers = false;
        }
    }
}

fn devices_per_node(file: &PlanFile) -> u32 {
    file.cluster.devices_per_node.unwrap_or_else(|| match &file.hardware {
        HardwareField::Id(id) => crate::hardware::device(id).map_or(8, |hw| hw.devices_per_node),
        HardwareField::Custom { custom } => custom.devices_per_node,
    })
}

/// Sets the RL figures read from a file — mini-batch, `max_model_len`, `max_num_batched_tokens`
/// and the token budget, in that order — each back to 0 ("automatic") where it equals what the
/// plan derives by itself (`plan::Rl`'s accessors), so emit → import gives the same plan file.
/// Returns the update's token budget in effect.
fn set_rl_autos(file: &mut PlanFile, [mini, model_len, batched, budget]: [Option<u32>; 4]) -> u32 {
    let rl = &mut file.rl;
    let sequence = rl.max_prompt_length.saturating_add(rl.max_response_length);
    rl.mini_batch = mini.filter(|&m| m != file.batch.global_batch).unwrap_or(0);
    rl.max_model_len = model_len.filter(|&n| n != sequence).unwrap_or(0);
    let auto_batched =
        crate::plan::auto_batched_tokens(if rl.max_model_len == 0 { sequence } else { rl.max_model_len });
    rl.max_num_batched_tokens = batched.filter(|&n| n != auto_batched).unwrap_or(0);
    let auto_budget = crate::plan::auto_tokens_per_device(file.framework, sequence, file.parallel.cp);
    rl.max_tokens_per_device = budget.filter(|&n| n != auto_budget).unwrap_or(0);
    budget.unwrap_or(auto_budget)
}
