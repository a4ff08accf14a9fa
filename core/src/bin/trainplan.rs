//! `trainplan`: the planning engine on the command line. JSON in, JSON out; all the computing is in
//! `trainplan_core`, this file only reads arguments and files and prints.

use std::io::{self, Read, Write};
use std::process::ExitCode;

use serde::Serialize;
use trainplan_core::plan::{ModelField, PlanFile};
use trainplan_core::{Plan, catalog, evaluate, export, model, permalink};

const USAGE: &str = "\
usage: trainplan <command> [args]

commands:
  eval PLAN.json [--csv] evaluate a plan file (`-` reads standard input); print the report as JSON,
                         or with --csv its headline figures and memory per stage as CSV
  eval --link FRAGMENT [--csv]
                         evaluate the plan in a permalink fragment (`v1=…`, with or without `#`)
  emit PLAN.json --out DIR [--framework NAME] [--zip]
                         write the launch files (script, YAML, JSON) for the plan's framework
  import-config FILE [--onto PLAN.json]
                         read a Megatron/MindSpeed-LLM script, LLaMA-Factory YAML, DeepSpeed JSON,
                         VeRL overrides or MindSpeed-RL YAML into a plan file from the defaults, keeping
                         the hardware (and the cluster and model the file does not give) of --onto or
                         the default plan; print the plan file, and on standard error how the model was
                         told and the keys not used or refused
  advise PLAN.json       tuning advice for a plan, each move with its computed effect, as JSON
  search PLAN.json [--csv] [--threads N]
                         the fastest plans that fit, and the memory/speed Pareto front, as JSON, or
                         with --csv one row per plan found: its figures and settings; on N threads
                         (every core by default): the same plans, a different count `simulated`
  sweep PLAN.json [--max-nodes N]
                         for 1, 2, 4, … N nodes (64 by default) and the plan's own: the longest
                         sequence and the largest micro-batch that fit, with their speed, as JSON
  calibrate PLAN.json LOG
                         read a Megatron-LM, MindSpeed-LLM, MindSpeed-RL, HF Trainer (LLaMA-Factory's
                         trainer_log.jsonl too), DeepSpeed or VeRL log (`-` for standard input) and print
                         the plan's fitted `calibration` block as JSON
  link PLAN.json         print the permalink fragment of a plan file
  import CONFIG.json     read an HF config.json; print the architecture and its parameter counts
  models                 list the model catalog as JSON
  hardware               list the hardware catalog as JSON
  help                   print this text

Bad input prints a message on standard error and exits with status 2.
";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("trainplan: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    use lexopt::prelude::*;

    let mut parser = lexopt::Parser::from_env();
    let command = match next(&mut parser)? {
        Some(Value(cmd)) => text(cmd)?,
        Some(Long("help") | Short('h')) | None => return print_text(USAGE),
        Some(arg) => return Err(arg.unexpected().to_string()),
    };
    let parser = &mut parser;
    match command.as_str() {
        "eval" => eval(parser),
        "emit" => emit(parser),
        "import-config" => import_config(parser),
        "advise" => advise(parser),
        "search" => search(parser),
        "sweep" => sweep(parser),
        "calibrate" => calibrate(parser),
        "link" => link(parser),
        "import" => import(parser),
        "models" => models(parser),
        "hardware" => hardware(parser),
        "help" => print_text(USAGE),
        other => Err(format!("unknown command {other:?}\n\n{USAGE}")),
    }
}

/// `trainplan eval PLAN.json [--csv]`, `trainplan eval --link FRAGMENT [--csv]`.
fn eval(parser: &mut lexopt::Parser) -> Result<(), String> {
    use lexopt::prelude::*;
    let (mut plan, mut csv) = (None, false);
    while let Some(arg) = next(parser)? {
        match arg {
            Long("link") if plan.is_none() => {
                let fragment = option_value(parser)?;
                plan = Some(permalink::decode(&fragment).map_err(|e| e.to_string())?);
            }
            Long("csv") => csv = true,
            Value(path) if plan.is_none() => plan = Some(read_plan(&text(path)?)?),
            arg => return Err(arg.unexpected().to_string()),
        }
    }
    let plan = plan.ok_or("eval needs a plan file (`-` for standard input) or --link FRAGMENT")?;
    let report = evaluate(&plan);
    match csv {
        true => print_text(&export::report_csv(&report)),
        false => print_text(&export::report_json(&report)),
    }
}

/// `trainplan emit PLAN.json --out DIR [--framework NAME] [--zip]`.
fn emit(parser: &mut lexopt::Parser) -> Result<(), String> {
    use lexopt::prelude::*;
    let (mut path, mut framework, mut out, mut zip) = (None, None, None, false);
    while let Some(arg) = next(parser)? {
        match arg {
            Long("framework") => framework = Some(option_value(parser)?),
            Long("out") => out = Some(option_value(parser)?),
            Long("zip") => zip = true,
            Value(v) if path.is_none() => path = Some(text(v)?),
            arg => return Err(arg.unexpected().to_string()),
        }
    }
    let path = path.ok_or("emit needs a plan file (`-` for standard input)")?;
    let out = out.ok_or("emit needs --out DIR")?;
    let mut plan = read_plan(&path)?;
    if let Some(name) = framework {
        plan.framework = serde_json::from_value(serde_json::Value::String(name.clone())).map_err(|_| {
            format!("unknown framework {name:?}: megatron, deepspeed, llamafactory, mindspeed-llm, verl or mindspeed-rl")
        })?;
    }
    let link = format!("#{}", permalink::encode(&plan));
    let files = trainplan_core::emit::emit(&plan, &link).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&out).map_err(|e| format!("{out}: {e}"))?;
    if zip {
        // One archive, as the page's "download all" gives it.
        let folder = trainplan_core::emit::archive::folder(&plan);
        let target = std::path::Path::new(&out).join(format!("{folder}.zip"));
        let bytes = trainplan_core::emit::archive::zip(&folder, &files);
        std::fs::write(&target, bytes).map_err(|e| format!("{}: {e}", target.display()))?;
        println!("{}", target.display());
        return Ok(());
    }
    for f in &files {
        let target = std::path::Path::new(&out).join(&f.name);
        std::fs::write(&target, &f.text).map_err(|e| format!("{}: {e}", target.display()))?;
        println!("{}", target.display());
    }
    Ok(())
}

/// `trainplan import-config FILE [--onto PLAN.json]`.
fn import_config(parser: &mut lexopt::Parser) -> Result<(), String> {
    use lexopt::prelude::*;
    let (mut path, mut onto) = (None, None);
    while let Some(arg) = next(parser)? {
        match arg {
            Long("onto") => onto = Some(option_value(parser)?),
            Value(v) if path.is_none() => path = Some(text(v)?),
            arg => return Err(arg.unexpected().to_string()),
        }
    }
    let path = path.ok_or("import-config needs a launch file (`-` for standard input)")?;
    // The import starts from the defaults; the plan it goes onto gives its hardware, its
    // cluster where the file gives none, and its model where the file tells none.
    let current = match onto {
        Some(plan) => read_plan(&plan)?.to_file(),
        None => Plan::first_visit().to_file(),
    };
    let text = read_input(&path)?;
    let imported =
        trainplan_core::emit::import::import(&text, &current).map_err(|e| format!("{path}: {e}"))?;
    eprintln!("trainplan: {path}: model: {}", imported.model);
    for key in &imported.unknown {
        eprintln!("trainplan: {path}: not used, left out: {key}");
    }
    for err in &imported.refused {
        eprintln!("trainplan: {path}: its framework would refuse: {err}");
    }
    for caveat in &imported.caveats {
        eprintln!("trainplan: {path}: as given, it runs otherwise: {caveat}");
    }
    print_json(&imported.file)
}

/// `trainplan advise PLAN.json`.
fn advise(parser: &mut lexopt::Parser) -> Result<(), String> {
    let path = one_path(parser, "advise needs a plan file (`-` for standard input)")?;
    let plan = read_plan(&path)?;
    print_json(&trainplan_core::advice::advise(&plan))
}

/// `trainplan search PLAN.json [--csv] [--threads N]`.
fn search(parser: &mut lexopt::Parser) -> Result<(), String> {
    use lexopt::prelude::*;
    let (mut path, mut csv) = (None, false);
    let mut threads = std::thread::available_parallelism().map_or(1, usize::from);
    while let Some(arg) = next(parser)? {
        match arg {
            Long("csv") => csv = true,
            Long("threads") => {
                let text = option_value(parser)?;
                threads = text
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=64).contains(n))
                    .ok_or_else(|| format!("--threads takes a count of 1 to 64, not {text:?}"))?;
            }
            Value(v) if path.is_none() => path = Some(text(v)?),
            arg => return Err(arg.unexpected().to_string()),
        }
    }
    let path = path.ok_or("search needs a plan file (`-` for standard input)")?;
    let plan = read_plan(&path)?;
    let result = trainplan_core::search::search_on_threads(&plan, threads);
    match csv {
        true => print_text(&export::search_csv(&plan, &result)),
        false => print_json(&result),
    }
}

/// `trainplan sweep PLAN.json [--max-nodes N]`.
fn sweep(parser: &mut lexopt::Parser) -> Result<(), String> {
    use lexopt::prelude::*;
    let (mut path, mut max_nodes) = (None, trainplan_core::sweep::DEFAULT_MAX_NODES);
    while let Some(arg) = next(parser)? {
        match arg {
            Long("max-nodes") => {
                let text = option_value(parser)?;
                max_nodes = text
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=trainplan_core::sweep::MAX_NODES_LIMIT).contains(n))
                    .ok_or_else(|| {
                        format!("--max-nodes must be a whole number from 1 to 65536, not {text:?}")
                    })?;
            }
            Value(v) if path.is_none() => path = Some(text(v)?),
            arg => return Err(arg.unexpected().to_string()),
        }
    }
    let path = path.ok_or("sweep needs a plan file (`-` for standard input)")?;
    let plan = read_plan(&path)?;
    print_json(&trainplan_core::sweep::sweep(&plan, max_nodes))
}

/// `trainplan calibrate PLAN.json LOG`.
fn calibrate(parser: &mut lexopt::Parser) -> Result<(), String> {
    use lexopt::prelude::*;
    let mut paths = Vec::new();
    while let Some(arg) = next(parser)? {
        match arg {
            Value(v) if paths.len() < 2 => paths.push(text(v)?),
            arg => return Err(arg.unexpected().to_string()),
        }
    }
    let [plan_path, log_path] = <[String; 2]>::try_from(paths)
        .map_err(|_| "calibrate needs a plan file and a log file (`-` for standard input)")?;
    if plan_path == "-" && log_path == "-" {
        return Err("calibrate reads at most one of the plan and the log from standard input".to_owned());
    }
    let plan = read_plan(&plan_path)?;
    let log = trainplan_core::logparse::parse_for(&plan, &read_input(&log_path)?)
        .map_err(|e| format!("{log_path}: {e}"))?;
    eprintln!("trainplan: {log_path}: {}", log.recognized());
    eprintln!("trainplan: {log_path}: read {}", log.figures());
    if let Some(source) = trainplan_core::logparse::another_frameworks_log(&plan, &log) {
        eprintln!(
            "trainplan: {log_path}: reads as a {source:?} run's log, and the plan runs {}: fitted all the same",
            plan.framework.name()
        );
    }
    let (prompt, response) = trainplan_core::logparse::logged_means(&plan, &log);
    for (key, mean) in [("mean_prompt_length", prompt), ("mean_response_length", response)] {
        if let Some(mean) = mean {
            eprintln!("trainplan: fitted with rl.{key} {mean}: set it in the plan with the calibration");
        }
    }
    for check in trainplan_core::logparse::phase_check(&plan, &log) {
        let ratio = check.ratio().map_or_else(|| "-".to_owned(), |r| format!("{r:.2}x"));
        eprintln!(
            "trainplan: {log_path}: {:?} logged {:.3} s, modelled {:.3} s ({ratio})",
            check.phase, check.logged_seconds, check.planned_seconds
        );
    }
    print_json(&trainplan_core::logparse::calibrate(&plan, &log))
}

/// `trainplan link PLAN.json`.
fn link(parser: &mut lexopt::Parser) -> Result<(), String> {
    let path = one_path(parser, "link needs a plan file (`-` for standard input)")?;
    let plan = read_plan(&path)?;
    print_text(&format!("{}\n", permalink::encode(&plan)))
}

/// `trainplan import CONFIG.json`: an HF config's architecture and parameter counts.
fn import(parser: &mut lexopt::Parser) -> Result<(), String> {
    let path = one_path(parser, "import needs a config.json (`-` for standard input)")?;
    let text = read_input(&path)?;
    let config: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path}: config.json is not valid JSON: {e}"))?;
    let file = PlanFile::minimal(ModelField::Config { hf_config: config, name: None });
    let plan = Plan::from_file(&file).map_err(|e| format!("{path}: {e}"))?;
    let report = evaluate(&plan);
    for finding in &report.findings {
        eprintln!("trainplan: warning: {}", finding.message());
    }
    print_json(&Imported { model: &report.model, params: &report.params })
}

/// `trainplan models`: the model catalog.
fn models(parser: &mut lexopt::Parser) -> Result<(), String> {
    no_more_args(parser)?;
    let rows: Vec<ModelRow> = catalog::models()
        .iter()
        .map(|m| {
            let counts = model::count_params(&m.arch);
            ModelRow {
                id: m.id,
                name: m.name,
                model_type: m.arch.family.model_type(),
                params_total: counts.total(),
                params_active: counts.active,
                source: m.source,
            }
        })
        .collect();
    print_json(&rows)
}

/// `trainplan hardware`: the hardware catalog.
fn hardware(parser: &mut lexopt::Parser) -> Result<(), String> {
    no_more_args(parser)?;
    let rows: Vec<HardwareRow> = trainplan_core::hardware::devices()
        .into_iter()
        .map(|h| HardwareRow {
            memory_bytes: h.memory_bytes,
            bf16_flops_per_second: h.bf16_flops_per_second,
            fp16_flops_per_second: h.fp16_flops_per_second,
            fp8_flops_per_second: h.fp8_flops_per_second,
            memory_bytes_per_second: h.memory_bytes_per_second,
            intra_node_bytes_per_second: h.intra_node_bytes_per_second,
            inter_node_bytes_per_second: h.inter_node_bytes_per_second,
            devices_per_node: h.devices_per_node,
            reported: h.reported,
            id: h.id,
            name: h.name,
            source: h.source,
        })
        .collect();
    print_json(&rows)
}

/// `trainplan import` output.
#[derive(Serialize)]
struct Imported<'a> {
    model: &'a trainplan_core::report::ModelReport,
    params: &'a trainplan_core::report::ParamsReport,
}

/// One line of `trainplan models`.
#[derive(Serialize)]
struct ModelRow {
    id: &'static str,
    name: &'static str,
    model_type: &'static str,
    params_total: u64,
    params_active: u64,
    source: &'static str,
}

/// One line of `trainplan hardware`.
#[derive(Serialize)]
struct HardwareRow {
    id: String,
    name: String,
    memory_bytes: u64,
    bf16_flops_per_second: f64,
    fp16_flops_per_second: f64,
    fp8_flops_per_second: f64,
    memory_bytes_per_second: f64,
    intra_node_bytes_per_second: f64,
    inter_node_bytes_per_second: f64,
    devices_per_node: u32,
    reported: bool,
    source: String,
}

/// The parser's next argument, `None` past the last.
fn next(parser: &mut lexopt::Parser) -> Result<Option<lexopt::Arg<'_>>, String> {
    parser.next().map_err(|e| e.to_string())
}

/// An argument as text.
fn text(value: std::ffi::OsString) -> Result<String, String> {
    use lexopt::prelude::*;
    value.string().map_err(|e| e.to_string())
}

/// The value an option takes (`--out DIR`), as text.
fn option_value(parser: &mut lexopt::Parser) -> Result<String, String> {
    text(parser.value().map_err(|e| e.to_string())?)
}

fn one_path(parser: &mut lexopt::Parser, missing: &str) -> Result<String, String> {
    use lexopt::prelude::*;
    let path = match next(parser)? {
        Some(Value(path)) => text(path)?,
        Some(arg) => return Err(arg.unexpected().to_string()),
        None => return Err(missing.to_owned()),
    };
    no_more_args(parser)?;
    Ok(path)
}

fn no_more_args(parser: &mut lexopt::Parser) -> Result<(), String> {
    match next(parser)? {
        None => Ok(()),
        Some(arg) => Err(arg.unexpected().to_string()),
    }
}

fn read_plan(path: &str) -> Result<Plan, String> {
    let text = read_input(path)?;
    Plan::from_json(&text).map_err(|e| format!("{path}: {e}"))
}

fn read_input(path: &str) -> Result<String, String> {
    let res = match path {
        "-" => {
            let mut text = String::new();
            io::stdin().read_to_string(&mut text).map(|_| text)
        }
        _ => std::fs::read_to_string(path),
    };
    res.map_err(|e| format!("{path}: {e}"))
}

fn print_json<T: Serialize>(value: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    print_text(&format!("{text}\n"))
}

fn print_text(text: &str) -> Result<(), String> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // `trainplan models | head` closes the pipe early; that is not an error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        res => res.map_err(|e| e.to_string()),
    }
}
