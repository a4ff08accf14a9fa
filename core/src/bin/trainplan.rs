//! `trainplan`: the planning engine on the command line. JSON in, JSON out; all the computing is in
//! `trainplan_core`, this file only reads arguments and files and prints.

use std::io::{self, Read, Write};
use std::process::ExitCode;

use serde::Serialize;
use trainplan_core::{Plan, catalog, evaluate, model};

const USAGE: &str = "\
usage: trainplan <command> [args]

commands:
  eval PLAN.json   evaluate a plan file (`-` reads standard input) and print the report as JSON
  models           list the model catalog as JSON
  help             print this text
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
    let command = match parser.next().map_err(|e| e.to_string())? {
        Some(Value(cmd)) => cmd.string().map_err(|e| e.to_string())?,
        Some(Long("help") | Short('h')) | None => return print_text(USAGE),
        Some(arg) => return Err(arg.unexpected().to_string()),
    };
    match command.as_str() {
        "eval" => {
            let path = match parser.next().map_err(|e| e.to_string())? {
                Some(Value(path)) => path.string().map_err(|e| e.to_string())?,
                Some(arg) => return Err(arg.unexpected().to_string()),
                None => return Err("eval needs a plan file (or `-` for standard input)".to_owned()),
            };
            no_more_args(&mut parser)?;
            let text = read_input(&path)?;
            let plan = Plan::from_json(&text).map_err(|e| format!("{path}: {e}"))?;
            print_json(&evaluate(&plan))
        }
        "models" => {
            no_more_args(&mut parser)?;
            let rows: Vec<ModelRow> = catalog::models()
                .into_iter()
                .map(|m| ModelRow {
                    id: m.id,
                    name: m.name,
                    params_total: model::count_params(&m.arch).total(),
                    source: m.source,
                })
                .collect();
            print_json(&rows)
        }
        "help" => print_text(USAGE),
        other => Err(format!("unknown command {other:?}\n\n{USAGE}")),
    }
}

/// One line of `trainplan models`.
#[derive(Serialize)]
struct ModelRow {
    id: &'static str,
    name: &'static str,
    params_total: u64,
    source: &'static str,
}

fn no_more_args(parser: &mut lexopt::Parser) -> Result<(), String> {
    match parser.next().map_err(|e| e.to_string())? {
        None => Ok(()),
        Some(arg) => Err(arg.unexpected().to_string()),
    }
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
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        res => res.map_err(|e| e.to_string()),
    }
}
