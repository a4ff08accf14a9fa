//! Launch files: for each framework, exactly what its users run, written from the one typed plan.
//! Formats and flags follow each framework's own argument parser or config schema, named in its
//! module (Megatron-LM `megatron/training/arguments.py`, DeepSpeed `deepspeed/runtime/config.py`,
//! LLaMA-Factory `src/llamafactory/hparams/`, MindSpeed-LLM `mindspeed_llm/features_manager/`,
//! VeRL `verl/trainer/config/ppo_trainer.yaml`, MindSpeed-RL `mindspeed_rl/config_cls/`).
//! Every text a user typed reaches a script as one quoted word ([`shell`]),
//! a YAML file as a double-quoted scalar, and JSON through serde_json.

pub mod archive;
pub mod deepspeed;
pub mod flags;
pub mod import;
pub mod llamafactory;
pub mod megatron;
pub mod mindspeed_llm;
pub mod mindspeed_rl;
pub mod shell;
pub mod verl;

use serde::Serialize;

use crate::Plan;
use crate::field::Field;
use crate::plan::{Framework, Method, ModelSpec};

/// The syntax of an emitted file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// A bash script.
    Shell,
    /// YAML.
    Yaml,
    /// JSON.
    Json,
}

/// One emitted file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EmittedFile {
    /// File name, no directory.
    pub name: String,
    /// Its syntax.
    pub kind: FileKind,
    /// Its text.
    pub text: String,
}

/// Why no files were written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EmitError {
    /// Occurs when a typed text holds characters VeRL's override parser (Hydra) reads as syntax
    /// however the text is quoted (a double quote, a backslash, `${`): the file is refused rather
    /// than written wrong.
    Unsafe {
        /// The plan field.
        field: crate::field::Field,
        /// The framework.
        framework: Framework,
    },
    /// Occurs when a typed text holds `${`, which OmegaConf, loading the YAML of LLaMA-Factory and
    /// MindSpeed-RL, takes for an interpolation however it is quoted.
    Interpolation {
        /// The plan field.
        field: crate::field::Field,
        /// The framework.
        framework: Framework,
    },
}

impl std::fmt::Display for EmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmitError::Unsafe { field, framework } => write!(
                f,
                "{field} cannot hold a double quote, a backslash or ${{ for {}: no quoting keeps them text for its override parser (Hydra)",
                framework.name()
            ),
            EmitError::Interpolation { field, framework } => write!(
                f,
                "{field} cannot hold ${{ for {}: OmegaConf, which reads its YAML, takes it for an interpolation",
                framework.name()
            ),
        }
    }
}

/// The PyPI releases the HF-path files are checked against (`conformance/`: each framework's own
/// parser and validation run over the emitted files).
pub const DEEPSPEED_VERSION: &str = "0.19.8";
/// See [`DEEPSPEED_VERSION`].
pub const LLAMAFACTORY_VERSION: &str = "0.9.5";
/// See [`DEEPSPEED_VERSION`].
pub const VERL_VERSION: &str = "0.9.1";

/// The framework versions a plan's files are written for and checked against, in words: PyPI
/// releases for the HF path, pinned commits for the Megatron family ([`flags`]).
pub fn target(framework: Framework) -> String {
    let at = |t: flags::Target| {
        format!("{} {} ({})", t.repo.split('/').nth(1).unwrap_or(t.repo), t.version, &t.commit[..7])
    };
    match framework {
        Framework::Megatron => at(flags::MEGATRON_LM),
        Framework::DeepSpeed => format!("DeepSpeed {DEEPSPEED_VERSION}"),
        Framework::LlamaFactory => {
            format!("LLaMA-Factory {LLAMAFACTORY_VERSION} + DeepSpeed {DEEPSPEED_VERSION}")
        }
        Framework::MindSpeedLlm => format!(
            "{} + {} + {}",
            at(flags::MINDSPEED_LLM),
            at(flags::MINDSPEED),
            at(flags::MEGATRON_CORE_012)
        ),
        Framework::Verl => format!("VeRL {VERL_VERSION}"),
        Framework::VerlMegatron => format!("VeRL {VERL_VERSION} (megatron-core engine)"),
        Framework::MindSpeedRl => format!("{} + {}", at(flags::MINDSPEED_RL), at(flags::MEGATRON_CORE_012)),
    }
}

/// The files to launch the plan with its framework. `link` is the permalink (a full address or a
/// `#v1=…` fragment) written into each file's opening comment so the file reopens its plan.
pub fn emit(plan: &Plan, link: &str) -> Result<Vec<EmittedFile>, EmitError> {
    emit_with(plan, &crate::evaluate(plan), link)
}

/// [`emit`] with the plan's report already made (`report` must be [`crate::evaluate`] of `plan`):
/// the page has it, and evaluating a plan is most of the work.
pub fn emit_with(plan: &Plan, report: &crate::Report, link: &str) -> Result<Vec<EmittedFile>, EmitError> {
    let header = header(plan, report, link);
    if matches!(plan.framework, Framework::LlamaFactory | Framework::MindSpeedRl) {
        for (field, text) in typed_texts(plan) {
            if omegaconf_interpolates(text) {
                return Err(EmitError::Interpolation { field, framework: plan.framework });
            }
        }
    }
    match plan.framework {
        Framework::Megatron => Ok(vec![megatron::script(plan, &header)]),
        Framework::DeepSpeed => Ok(deepspeed::files(plan, &header)),
        Framework::LlamaFactory => Ok(llamafactory::files(plan, &header)),
        Framework::MindSpeedLlm => Ok(vec![mindspeed_llm::script(plan, &header)]),
        Framework::Verl | Framework::VerlMegatron => Ok(vec![verl::script(plan, &header)?]),
        Framework::MindSpeedRl => Ok(mindspeed_rl::files(plan, &header)),
    }
}

/// The texts a user types that the files carry into a framework's own parser, with their fields.
fn typed_texts(plan: &Plan) -> [(Field, &str); 3] {
    let launch = &plan.launch;
    [
        (Field::LaunchModelPath, &launch.model_path),
        (Field::LaunchDataset, &launch.dataset),
        (Field::LaunchOutputDir, &launch.output_dir),
    ]
}

/// Whether OmegaConf, which loads LLaMA-Factory's and MindSpeed-RL's YAML, reads `text` as holding
/// an interpolation (`${…}`) rather than as the text it is, however it is quoted: MindSpeed-RL
/// resolves it where it reads its sections (`{**config.get("megatron_training"), …}` in
/// `cli/train_grpo.py`: "InterpolationKeyError: Interpolation key 'PATH' not found", omegaconf
/// 2.3.1), and LLaMA-Factory 0.9.5's `read_args` fails at load where it does not close
/// ("GrammarParseError", omegaconf 2.4.0).
fn omegaconf_interpolates(text: &str) -> bool {
    text.contains("${")
}

fn method_name(method: Method) -> &'static str {
    match method {
        Method::Pretrain => "pre-training",
        Method::SftFull => "full SFT",
        Method::Lora => "LoRA SFT",
        Method::Qlora => "QLoRA SFT",
        Method::Freeze => "freeze-tuning SFT",
        Method::Dpo => "DPO",
        Method::DpoLora => "LoRA DPO",
        Method::Grpo => "GRPO",
        Method::Ppo => "PPO",
    }
}

/// The plan in one paragraph, and the link that reopens it, as comment lines without the marker.
fn header(plan: &Plan, report: &crate::Report, link: &str) -> Vec<String> {
    let p = &plan.parallel;
    let (mem, t) = (&report.memory, &report.time);
    let layout = match plan.framework {
        Framework::Megatron | Framework::MindSpeedLlm | Framework::MindSpeedRl | Framework::VerlMegatron => {
            format!(
                "TP {}, PP {}, VPP {}, CP {}{}, EP {}, DP {}{}",
                p.tp,
                p.pp,
                p.vpp,
                p.cp,
                match (p.cp_algo, 1 < p.cp.get()) {
                    (crate::plan::CpAlgo::AllToAll, true) => " (all-to-all)",
                    _ => "",
                },
                p.ep,
                mem.dp,
                match (p.fsdp, p.distributed_optimizer) {
                    (crate::plan::Fsdp::None, true) => ", distributed optimizer".to_owned(),
                    (crate::plan::Fsdp::None, false) => String::new(),
                    (f, _) => format!(", FSDP {}", f.wire()),
                }
            )
        }
        _ => format!(
            "DP {}, ZeRO {}{}{}{}",
            mem.dp,
            p.zero_stage,
            if crate::memory::verl_fsdp2(plan) { " on FSDP2" } else { "" },
            if p.offload_optimizer { ", optimizer offload" } else { "" },
            if p.offload_params { ", parameter offload" } else { "" }
        ),
    };
    let paragraph = format!(
        "{} {} with {} on {} × {} {} ({} devices): {layout}; \
         micro-batch {}, global batch {}, {}; {}. Planned peak {:.1} GiB per device, step {:.2} s.",
        plan.model.name,
        method_name(plan.method),
        plan.framework.name(),
        plan.cluster.nodes,
        plan.cluster.devices_per_node,
        plan.hardware.hw.name,
        plan.cluster.n_devices(),
        plan.batch.micro_batch,
        plan.batch.global_batch,
        match plan.method {
            // RL trains on prompt + response; the plan's sequence length plays no part.
            Method::Grpo | Method::Ppo => format!(
                "prompts {} + responses {} tokens",
                plan.rl.max_prompt_length, plan.rl.max_response_length
            ),
            _ => format!("sequence {}", plan.batch.seq_len),
        },
        // The plan file's own word for it (`bf16`, `fp8`, …).
        serde_json::to_value(plan.precision)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        mem.peak_bytes as f64 / (1u64 << 30) as f64,
        t.step_seconds,
    );
    let mut lines = wrap(&format!("Written by trainplan for {}.", target(plan.framework)), 96);
    lines.extend(wrap(&paragraph, 96));
    lines.extend(verdict_of(report).iter().flat_map(|v| wrap(v, 96)));
    // The link is written as is: a fragment or an address has no newline (base64url and the
    // page's own address), and it sits in a comment.
    lines.push(format!("Reopen the plan: {}", link.replace(['\n', '\r'], "")));
    lines
}

/// What the planner holds against the plan, for the file's header: a file of a plan that does not
/// fit or breaks a rule says so before anything else is read. Empty when the plan is clean.
pub fn verdict(plan: &Plan) -> Vec<String> {
    verdict_of(&crate::evaluate(plan))
}

/// [`verdict`] from the plan's report.
pub fn verdict_of(report: &crate::Report) -> Vec<String> {
    let errors: Vec<&crate::report::Finding> =
        report.findings.iter().filter(|f| f.severity == crate::report::Severity::Error).collect();
    if errors.is_empty() {
        return Vec::new();
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let m = &report.memory;
    let mut lines = vec![match m.fits {
        false => format!(
            "WARNING: this plan does not run as written. It needs {:.1} GiB per device at its peak; \
             {:.1} GiB are usable.",
            gib(m.peak_bytes),
            gib(m.usable_bytes)
        ),
        true => "WARNING: this plan does not run as written.".to_owned(),
    }];
    for f in errors.iter().filter(|f| f.code != crate::report::Code::MemoryDoesNotFit) {
        lines.push(format!("- {} [{}]", f.message(), f.code));
    }
    lines
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for w in text.split(' ') {
        if !line.is_empty() && width < line.len() + 1 + w.len() {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A launch script's opening: shebang, the header, how to run it, strict mode.
fn script_opening(header: &[String], how: &str) -> String {
    format!("#!/bin/bash\n{}# {how}\nset -euo pipefail\n\n", comment(header))
}

/// The node variables of a multi-node launch, `export`ed when `export`: node count, devices per
/// node, this node's rank (from the environment), and node 0's address and port (from the
/// environment, else the plan's launch settings, else `default_addr` and 29500).
fn node_vars(plan: &Plan, export: bool, nodes: &str, per_node: &str, default_addr: &str) -> String {
    let launch = &plan.launch;
    let port = if launch.master_port == 0 { 29500 } else { launch.master_port };
    let addr = if launch.master_addr.is_empty() { default_addr } else { &launch.master_addr };
    let x = if export { "export " } else { "" };
    format!(
        "{x}{nodes}={}\n{x}{per_node}={}\n{x}NODE_RANK=${{NODE_RANK:-0}}\n\
         {x}MASTER_ADDR=${{MASTER_ADDR:-{}}}\n{x}MASTER_PORT=${{MASTER_PORT:-{port}}}\n\n",
        plan.cluster.nodes,
        plan.cluster.devices_per_node,
        shell::quote(addr),
    )
}

/// torchrun's `DISTRIBUTED_ARGS` array over the node variables [`node_vars`] wrote (named `nodes`
/// and `per_node`).
fn distributed_args(nodes: &str, per_node: &str) -> String {
    bash_array(
        "DISTRIBUTED_ARGS",
        &[
            format!("--nproc_per_node \"${per_node}\" --nnodes \"${nodes}\" --node_rank \"$NODE_RANK\""),
            "--master_addr \"$MASTER_ADDR\" --master_port \"$MASTER_PORT\"".to_owned(),
        ],
    )
}

/// A YAML double-quoted scalar: JSON's string escapes are YAML's (YAML 1.2 §7.3.1).
fn yaml_str(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serializes")
}

/// A bash `NAME=( … )` flag array, one flag group per line.
fn bash_array(name: &str, flags: &[String]) -> String {
    let mut res = format!("{name}=(\n");
    for f in flags {
        res.push_str(&format!("  {f}\n"));
    }
    res.push_str(")\n");
    res
}

/// The header as `# ` comment lines. Plans refuse control characters in the names the header
/// carries; a line break that got in anyway would end the comment, so each becomes a space.
fn comment(header: &[String]) -> String {
    header.iter().map(|l| format!("# {}\n", l.replace(char::is_control, " "))).collect()
}

/// The model's own `config.json` keys, when the plan has them (catalog or import).
fn hf_config(plan: &Plan) -> Option<serde_json::Value> {
    match &plan.model.spec {
        ModelSpec::Catalog(id) => {
            let c = crate::catalog::config(id)?;
            serde_json::from_str(c.config).ok()
        }
        ModelSpec::HfConfig(v) => Some(v.clone()),
    }
}

/// The model weights to load: the user's path, else the catalog model's Hugging Face id.
fn model_path(plan: &Plan) -> String {
    if !plan.launch.model_path.is_empty() {
        return plan.launch.model_path.clone();
    }
    if let ModelSpec::Catalog(id) = &plan.model.spec
        && let Some(c) = crate::catalog::config(id)
        && let Some(repo) = hf_repo(c.source)
    {
        return repo;
    }
    "/path/to/model".to_owned()
}

/// `Qwen/Qwen2.5-7B` from `https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json`.
fn hf_repo(source: &str) -> Option<String> {
    let rest = source.split("huggingface.co/").nth(1)?;
    let mut parts = rest.split('/');
    let (org, name) = (parts.next()?, parts.next()?);
    Some(format!("{org}/{name}"))
}

/// A short stable name for paths: the catalog id, else the model's name made path-safe.
fn model_slug(plan: &Plan) -> String {
    match &plan.model.spec {
        ModelSpec::Catalog(id) => id.clone(),
        ModelSpec::HfConfig(_) => {
            plan.model
                .name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                        c.to_ascii_lowercase()
                    } else {
                        '-'
                    }
                })
                .collect()
        }
    }
}

/// Gradient accumulation steps: global batch ÷ (micro-batch · DP), at least 1.
fn accumulation(plan: &Plan) -> u64 {
    crate::memory::estimate(plan).n_microbatches
}
