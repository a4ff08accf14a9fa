//! Every flag of every emitted Megatron-LM and MindSpeed-LLM script, and every key of every emitted
//! MindSpeed-RL YAML, checked against the tables recorded from the frameworks' sources at pinned
//! commits (`core/data/flags/`, `emit::flags`): what the frameworks' own parsers would refuse.

use std::collections::BTreeMap;
use std::path::Path;

use trainplan_core::emit::flags::{self, Arity, FlagError, RlFlag, Table, ValueType};
use trainplan_core::emit::import::{ConfigKind, import};
use trainplan_core::emit::{FileKind, emit};
use trainplan_core::plan::{Framework, ModelField, Plan, PlanFile};
use yaml_rust2::{Yaml, YamlLoader};

use crate::corpus;

/// One word handed to the entry script: its text once the script's variables are expanded, or the
/// name of a variable the user must set (`"${ROTARY_BASE:?set ROTARY_BASE to …}"`).
#[derive(Clone, Debug, PartialEq)]
enum Word {
    Text(String),
    UserSets(String),
}

/// The words bash hands to the entry point (`pretrain_gpt.py`, `posttrain_gpt.py`) of a launch
/// script: the launch line after the `.py` word, `"${NAME[@]}"` replaced by the array's words, and
/// `$NAME`, `${NAME}`, `${NAME:-default}` replaced by the script's assignments.
fn entry_args(text: &str) -> Result<Vec<Word>, String> {
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    let mut arrays: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut command: Option<Vec<String>> = None;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        // Continuation lines make one logical line.
        let mut logical = line.to_owned();
        while logical.ends_with('\\') {
            logical.pop();
            match lines.next() {
                Some(next) => logical.push_str(next),
                None => break,
            }
        }
        let trimmed = logical.trim();
        if let Some(name) = trimmed.strip_suffix("=(") {
            let mut words = Vec::new();
            for body in lines.by_ref() {
                if body.trim() == ")" {
                    break;
                }
                words.extend(shell_words::split(body).map_err(|e| format!("{body}: {e}"))?);
            }
            arrays.insert(name.to_owned(), words);
            continue;
        }
        let Ok(words) = shell_words::split(trimmed) else { continue };
        let Some(first) = words.first() else { continue };
        if first == "torchrun" || first == "python" {
            command = Some(words);
            continue;
        }
        let assignment = if first == "export" { words.get(1) } else { Some(first) };
        if let Some((name, value)) = assignment.and_then(|w| w.split_once('='))
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            vars.insert(name.to_owned(), value.to_owned());
        }
    }
    let command = command.ok_or("no torchrun line")?;
    let entry = command.iter().position(|w| w.ends_with(".py")).ok_or("no entry script")?;
    let mut out = Vec::new();
    for word in &command[entry + 1..] {
        let array = word.strip_prefix("${").and_then(|w| w.strip_suffix("[@]}"));
        let words = match array {
            Some(name) => arrays.get(name).ok_or(format!("array {name} is not defined"))?.clone(),
            None => vec![word.clone()],
        };
        for w in words {
            out.push(expand(&w, &vars)?);
        }
    }
    Ok(out)
}

/// A word with the script's variables expanded.
fn expand(word: &str, vars: &BTreeMap<String, String>) -> Result<Word, String> {
    let mut res = String::new();
    let mut rest = word;
    while let Some(at) = rest.find('$') {
        res.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, default, guard, tail) = if let Some(inner) = after.strip_prefix('{') {
            let end = inner.find('}').ok_or(format!("unclosed ${{ in {word}"))?;
            let body = &inner[..end];
            let (name, default, guard) = match (body.split_once(":-"), body.split_once(":?")) {
                (Some((n, d)), _) => (n, Some(d), false),
                (None, Some((n, _))) => (n, None, true),
                (None, None) => (body, None, false),
            };
            (name, default, guard, &inner[end + 1..])
        } else {
            let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            (&after[..end], None, false, &after[end..])
        };
        match (vars.get(name), default) {
            (Some(v), _) => match expand(v, vars)? {
                Word::Text(t) => res.push_str(&t),
                user => return Ok(user),
            },
            (None, Some(d)) => res.push_str(d),
            (None, None) if guard => return Ok(Word::UserSets(name.to_owned())),
            (None, None) => return Err(format!("{word}: ${name} is not set in the script")),
        }
        rest = tail;
    }
    res.push_str(rest);
    Ok(Word::Text(res))
}

/// Each `--flag` with the words after it up to the next flag, as argparse groups them.
fn flag_groups(words: &[Word]) -> Result<Vec<(String, Vec<Word>)>, String> {
    let mut groups: Vec<(String, Vec<Word>)> = Vec::new();
    for w in words {
        match w {
            Word::Text(t) if t.starts_with("--") => groups.push((t.clone(), Vec::new())),
            _ => match groups.last_mut() {
                Some((_, values)) => values.push(w.clone()),
                None => return Err(format!("{w:?} before any flag")),
            },
        }
    }
    Ok(groups)
}

/// What `table`'s parser says of each flag of the script. A value the user sets stands in as a
/// valid one (its first choice, else 0): it is theirs to get right.
pub(crate) fn check_script(table: Table, text: &str) -> Result<Vec<FlagError>, String> {
    let mut errors = Vec::new();
    for (flag, values) in flag_groups(&entry_args(text)?)? {
        let Some(spec) = flags::lookup(table, &flag) else {
            errors.push(FlagError::Unknown { flag, framework: table.name().into() });
            continue;
        };
        let stand_in = spec.choices().next().unwrap_or("0");
        let values: Vec<&str> = values
            .iter()
            .map(|v| match v {
                Word::Text(t) => t.as_str(),
                Word::UserSets(_) => stand_in,
            })
            .collect();
        if let Err(e) = spec.check(&values) {
            errors.push(e);
        }
    }
    Ok(errors)
}

/// A YAML value as MindSpeed-RL's `parse_args_from_config` passes it: `None` when it passes
/// nothing (false, null), else the words after the flag (true: none; a list: its items).
fn yaml_words(value: &Yaml) -> Option<Vec<String>> {
    match value {
        Yaml::Boolean(false) | Yaml::Null => None,
        Yaml::Boolean(true) => Some(Vec::new()),
        Yaml::Array(items) => Some(items.iter().flat_map(|i| yaml_words(i).unwrap_or_default()).collect()),
        Yaml::Integer(i) => Some(vec![i.to_string()]),
        Yaml::Real(r) | Yaml::String(r) => Some(vec![r.clone()]),
        other => Some(vec![format!("{other:?}")]),
    }
}

/// What MindSpeed-RL says of the keys of `section` (a YAML map): each key its class must accept, and
/// for a Megatron key the flag it becomes must pass the actor's parser.
fn check_rl_section(section: &str, map: &yaml_rust2::yaml::Hash, errors: &mut Vec<String>) {
    let Some(class) = flags::rl_class(section) else {
        errors.push(format!("{section}: no MindSpeed-RL config class reads this section"));
        return;
    };
    for (key, value) in map {
        let Some(key) = key.as_str() else { continue };
        if class == "MegatronConfig" && key == "model" {
            continue;
        }
        if let Yaml::Hash(inner) = value
            && flags::rl_class(&format!("{section}.{key}")).is_some()
        {
            check_rl_section(&format!("{section}.{key}"), inner, errors);
        }
        let Some(rl) = flags::rl_key(section, key) else {
            errors.push(format!("{section}.{key}: {class} has no such key (ValueError at start-up)"));
            continue;
        };
        let Some(words) = yaml_words(value) else { continue };
        match rl.flag {
            RlFlag::Setting => {}
            RlFlag::Undeclared => errors.push(format!(
                "{section}.{key}: becomes --{}, which no parser of the actor declares",
                key.replace('_', "-")
            )),
            RlFlag::Declared => {
                let spec = flags::rl_flag(rl).expect("a declared key has its flag");
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                if let Err(e) = spec.check(&words) {
                    errors.push(format!("{section}.{key}: {e}"));
                }
            }
        }
    }
}

/// The errors in a MindSpeed-RL run YAML (`model_block: false`) or model block (`true`).
fn check_rl_yaml(text: &str, model_block: bool) -> Result<Vec<String>, String> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| e.to_string())?;
    let Some(Yaml::Hash(top)) = docs.into_iter().next() else { return Err("not a YAML map".into()) };
    let mut errors = Vec::new();
    for (name, value) in &top {
        let name = name.as_str().unwrap_or_default();
        match value {
            Yaml::Hash(map) if model_block => check_rl_section("model", map, &mut errors),
            Yaml::Hash(map) => check_rl_section(name, map, &mut errors),
            _ if name == "defaults" => {}
            _ => errors.push(format!("{name}: not a section")),
        }
    }
    Ok(errors)
}

/// The refusals over the conformance corpus, by plan, as text; the plans and flags or keys checked.
fn corpus_refusals() -> (BTreeMap<String, Vec<String>>, usize, usize) {
    let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let (mut checked, mut words) = (0, 0);
    for entry in corpus::all() {
        let plan = Plan::from_json(&entry.plan).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let files = emit(&plan, "#link").unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let mut errors = Vec::new();
        match plan.framework {
            Framework::Megatron | Framework::MindSpeedLlm => {
                let table = if plan.framework == Framework::Megatron {
                    Table::MegatronLm
                } else {
                    Table::MindSpeedLlm
                };
                let script = files.iter().find(|f| f.kind == FileKind::Shell).expect("a launch script");
                let found = check_script(table, &script.text)
                    .unwrap_or_else(|e| panic!("{}: {e}\n{}", entry.name, script.text));
                words += flag_groups(&entry_args(&script.text).unwrap()).unwrap().len();
                errors.extend(found.iter().map(ToString::to_string));
            }
            Framework::MindSpeedRl => {
                let yamls: Vec<_> = files.iter().filter(|f| f.kind == FileKind::Yaml).collect();
                assert_eq!(yamls.len(), 2, "{}: the run YAML and the model block", entry.name);
                for (file, model_block) in [(yamls[0], false), (yamls[1], true)] {
                    let found = check_rl_yaml(&file.text, model_block)
                        .unwrap_or_else(|e| panic!("{}: {}: {e}", entry.name, file.name));
                    words += file.text.lines().filter(|l| l.starts_with("  ") && l.contains(": ")).count();
                    errors.extend(found);
                }
            }
            _ => continue,
        }
        checked += 1;
        if !errors.is_empty() {
            refused.insert(entry.name, errors);
        }
    }
    (refused, checked, words)
}

#[test]
fn every_emitted_flag_and_key_is_one_the_framework_declares() {
    let (refused, checked, words) = corpus_refusals();
    assert!(20 <= checked && 1500 <= words, "checked only {checked} plans, {words} flags and keys");
    let report: String =
        refused.iter().map(|(plan, errors)| format!("{plan}:\n  {}\n", errors.join("\n  "))).collect();
    assert!(refused.is_empty(), "the frameworks' parsers would refuse:\n{report}");
}

#[test]
fn a_broken_script_is_refused_with_the_reason() {
    let script = "#!/bin/bash\nCHECKPOINT_PATH=/ckpt   # a comment\nMODEL_ARGS=(\n  --num-layers 32 --no-such-flag 3\n  \
                  --position-embedding-type rope --rotary-base 1000000.0\n  --swiglu true\n)\n\
                  torchrun --nproc_per_node 8 pretrain_gpt.py \\\n  \"${MODEL_ARGS[@]}\" --save \"$CHECKPOINT_PATH\" \
                  --lr-decay-style sine --num-layers\n";
    let errors = check_script(Table::MegatronLm, script).unwrap();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "--no-such-flag is not a flag of Megatron-LM core_v0.19.0",
            "--rotary-base takes an int, given 1000000.0",
            "--swiglu takes no value, given true",
            "--lr-decay-style takes one of constant|linear|cosine|inverse-square-root|WSD, given sine",
            "--num-layers takes one value, given 0",
        ]
    );
    assert_eq!(
        errors[1],
        FlagError::BadType {
            flag: "--rotary-base".into(),
            value: "1000000.0".into(),
            value_type: ValueType::Int
        }
    );
    // The same flags are MindSpeed-LLM's, but the unknown one is named with its own version.
    let errors = check_script(Table::MindSpeedLlm, script).unwrap();
    assert_eq!(
        errors[0].to_string(),
        format!("--no-such-flag is not a flag of {}", Table::MindSpeedLlm.name())
    );
    // A variable the script never sets is the test's failure, not a flag's.
    assert!(check_script(Table::MegatronLm, "X=(\n)\ntorchrun a.py --save \"$NOWHERE\"\n").is_err());
    // One the user must set (`${NAME:?message}`) stands in as valid.
    let guarded = "torchrun a.py --rotary-base \"${ROTARY_BASE:?set ROTARY_BASE}\"\n";
    assert_eq!(check_script(Table::MegatronLm, guarded).unwrap(), []);

    let run = "megatron_training:\n  model: m\n  use_mcore_models: true\n  bogus_key: 1\n  seq_length: 4096.5\n\
               rl_config:\n  actor_resource:\n    num_npus: 8\n    num_gpus: 8\n";
    assert_eq!(
        check_rl_yaml(run, false).unwrap(),
        [
            "megatron_training.bogus_key: MegatronConfig has no such key (ValueError at start-up)",
            "megatron_training.seq_length: --seq-length takes an int, given 4096.5",
            "rl_config.actor_resource.num_gpus: RLConfig.actor_resource has no such key (ValueError at start-up)",
        ]
    );
    let model = "m:\n  rotary_base: 1000000.0\n  swiglu: 1\n  mm_model: x\n  use_flash_attn: false\n";
    assert_eq!(
        check_rl_yaml(model, true).unwrap(),
        [
            "model.rotary_base: --rotary-base takes an int, given 1000000.0",
            "model.swiglu: --swiglu takes no value, given 1",
            "model.mm_model: becomes --mm-model, which no parser of the actor declares",
        ]
    );
}

#[test]
fn values_are_read_as_python_reads_them() {
    let ok = |flag: &str, values: &[&str]| flags::check_values(Table::MegatronLm, flag, values);
    // int(): a sign, surrounding spaces and `_` between digits, nothing else.
    for v in ["32", "+32", "-1", " 32 ", "1_000"] {
        assert_eq!(ok("--num-layers", &[v]), Ok(()), "{v}");
    }
    for v in ["3.0", "1e3", "_1", "1__0", "0x10", "", "thirty"] {
        assert!(ok("--num-layers", &[v]).is_err(), "{v}");
    }
    // float(): exponents, inf and nan too.
    for v in ["1.5e-4", "1e-4", ".5", "5.", "inf", "-Infinity", "nan", "1_0.5", "3"] {
        assert_eq!(ok("--lr", &[v]), Ok(()), "{v}");
    }
    for v in ["1e", "1.5.2", "e5", "1_e5", "fast"] {
        assert!(ok("--lr", &[v]).is_err(), "{v}");
    }
    // nargs: '*' takes any number, '+' at least one, 3 exactly three.
    assert_eq!(ok("--data-path", &[]), Ok(()));
    assert_eq!(ok("--data-path", &["0.3", "/a", "0.7", "/b"]), Ok(()));
    assert!(ok("--rampup-batch-size", &["16", "16"]).is_err());
    assert_eq!(ok("--rampup-batch-size", &["16", "16", "5859375"]), Ok(()));
    assert_eq!(
        flags::lookup(Table::MegatronLm, "--rampup-batch-size").map(|f| f.arity),
        Some(Arity::Exactly(3))
    );
    // Choices of a dataclass Enum are its member names; int choices compare as ints.
    assert_eq!(ok("--attention-backend", &["flash"]), Ok(()));
    assert!(ok("--attention-backend", &["AttnBackend.flash"]).is_err());
    assert_eq!(check_llm("--coc-parallel-num", &["2"]), Ok(()));
    // Flags the dataclasses generate (Megatron-LM >= core_v0.16), with their negations.
    for flag in [
        "--no-gradient-accumulation-fusion",
        "--disable-bias-linear",
        "--untie-embeddings-and-output-weights",
    ] {
        assert_eq!(ok(flag, &[]), Ok(()), "{flag}");
    }
    // MindSpeed-LLM's flags are not Megatron-LM's.
    assert!(matches!(ok("--use-ascend-coc", &[]), Err(FlagError::Unknown { .. })));
    assert_eq!(check_llm("--use-ascend-coc", &[]), Ok(()));
    assert_eq!(check_llm("--tokenizer-type", &["PretrainedFromHF"]), Ok(()));
    assert_eq!(check_llm("--lora-target-modules", &["linear_qkv", "linear_proj"]), Ok(()));
    assert!(check_llm("--lora-target-modules", &[]).is_err());
}

/// The importer lists what the framework would refuse, with the reason, beside what the plan
/// leaves out.
#[test]
fn the_importer_lists_what_the_framework_would_refuse() {
    let base = PlanFile::minimal(ModelField::Id("llama-3-8b".into()));
    let script = "#!/bin/bash\nGPUS_PER_NODE=8\nDISTRIBUTED_ARGS=(\n  --nproc_per_node \"$GPUS_PER_NODE\"\n)\n\
                  CKPT=/ckpt/${RUN:-a}\n\
                  torchrun \"${DISTRIBUTED_ARGS[@]}\" pretrain_gpt.py --tensor-model-parallel-size 2 \\\n  \
                  --rotary-base 1000000.0 --my-flag 3 --swiglu yes --use-ascend-coc --lr \"$LR\" \\\n  \
                  --data-path 0.3 /a 0.7 /b --save \"$CKPT\" --seq-length=4096 --lr-decay-style=sine \\\n  \
                  --bf16 2>&1 | tee log\n";
    let got = import(script, &base).unwrap();
    assert_eq!(got.kind, ConfigKind::Megatron);
    assert_eq!(got.file.parallel.tp, 2);
    // Not used, declared or not: the files the plan writes would not keep them as written
    // (Llama-3-8B's rotary base is 500000, `$LR` is set outside the script).
    assert_eq!(got.unknown, ["--rotary-base", "--my-flag", "--swiglu", "--lr", "--lr-decay-style"]);
    assert_eq!(got.file.batch.seq_len, 4096);
    let refused: Vec<String> = got.refused.iter().map(ToString::to_string).collect();
    assert_eq!(
        refused,
        [
            "--rotary-base takes an int, given 1000000.0",
            "--my-flag is not a flag of Megatron-LM core_v0.19.0",
            "--swiglu takes no value, given yes",
            "--use-ascend-coc is not a flag of Megatron-LM core_v0.19.0",
            "--lr-decay-style takes one of constant|linear|cosine|inverse-square-root|WSD, given sine",
        ]
    );
    // On MindSpeed-LLM (CANN's environment script) CoC is a flag of its own.
    let ascend = format!("source /usr/local/Ascend/ascend-toolkit/set_env.sh\n{script}");
    let got = import(&ascend, &base).unwrap();
    assert_eq!(got.kind, ConfigKind::MindSpeedLlm);
    assert!(got.refused.iter().all(|e| e.flag() != "--use-ascend-coc"), "{:?}", got.refused);
    assert!(got.refused.iter().any(|e| e.to_string().ends_with(Table::MindSpeedLlm.name())));
    // Other kinds of file are not judged by flag.
    let yaml = import("stage: sft\nfinetuning_type: lora\n", &base).unwrap();
    assert!(yaml.refused.is_empty());
}

/// Over the corpus, the importer refuses exactly what the script check above does.
#[test]
fn the_importer_and_the_corpus_check_agree() {
    let mut compared = 0;
    for entry in corpus::all() {
        let plan = Plan::from_json(&entry.plan).unwrap();
        let table = match plan.framework {
            Framework::Megatron => Table::MegatronLm,
            Framework::MindSpeedLlm => Table::MindSpeedLlm,
            _ => continue,
        };
        let files = emit(&plan, "#link").unwrap();
        let script = files.iter().find(|f| f.kind == FileKind::Shell).unwrap();
        let expected: Vec<String> =
            check_script(table, &script.text).unwrap().iter().map(ToString::to_string).collect();
        let got = import(&script.text, &plan.to_file()).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let got: Vec<String> = got.refused.iter().map(ToString::to_string).collect();
        assert_eq!(got, expected, "{}", entry.name);
        compared += 1;
    }
    assert!(10 <= compared, "compared only {compared} scripts");
}

fn check_llm(flag: &str, values: &[&str]) -> Result<(), FlagError> {
    flags::check_values(Table::MindSpeedLlm, flag, values)
}

/// The tables name the repositories and commits they were read from, as the code's pins do, and
/// every row is well formed.
#[test]
fn the_tables_name_their_pinned_commits() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let regenerate = std::fs::read_to_string(root.join("tools/flagtable/regenerate")).unwrap();
    for table in Table::ALL {
        let text = table.text();
        let on_disk = std::fs::read_to_string(root.join("core/data/flags").join(table.file_name())).unwrap();
        assert_eq!(text, on_disk, "{}", table.file_name());
        let sources: Vec<Vec<&str>> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# source\t"))
            .map(|l| l.split('\t').collect())
            .collect();
        assert_eq!(sources.len(), table.targets().len(), "{}: one source line per pin", table.file_name());
        for cells in &sources {
            let [key, repo, commit, version, date] = cells[..] else {
                panic!("{}: source line {cells:?}", table.file_name())
            };
            assert!(["M", "S", "L", "R"].contains(&key), "{key}");
            assert!(
                repo.split_once('/').is_some_and(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/')),
                "{repo}"
            );
            assert!(
                commit.len() == 40
                    && commit.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
            assert!(!version.is_empty() && !version.contains(' '), "{version}");
            let d: Vec<&str> = date.split('-').collect();
            assert!(
                d.len() == 3
                    && [4, 2, 2] == [d[0].len(), d[1].len(), d[2].len()]
                    && date.bytes().all(|b| b.is_ascii_digit() || b == b'-'),
                "{date}"
            );
            assert!(regenerate.contains(commit), "tools/flagtable/regenerate pins {commit}");
        }
        assert_eq!(flags::recorded_targets(table), table.targets(), "{}", table.file_name());
        assert!(text.lines().any(|l| l == "# regenerate\ttools/flagtable/regenerate"));
        let columns: Vec<&str> = text
            .lines()
            .find_map(|l| l.strip_prefix("# columns\t"))
            .expect("a columns line")
            .split('\t')
            .collect();
        let width = columns.len();
        let places: Vec<usize> = (0..width).filter(|&i| columns[i].ends_with("declared_at")).collect();
        let files: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# file\t"))
            .map(|l| l.split('\t').next().unwrap())
            .collect();
        for row in text.lines().filter(|l| !l.starts_with('#')) {
            let cells: Vec<&str> = row.split('\t').collect();
            assert!(2 <= cells.len() && cells.len() <= width, "{}: {row}", table.file_name());
            let cells_at = places.iter().filter_map(|&i| cells.get(i));
            for place in cells_at.flat_map(|c| c.split(',')).filter(|p| !p.is_empty()) {
                let id = place.split(':').next().unwrap();
                assert!(
                    files.contains(&id) || place == "argparse",
                    "{}: {row}: file {id}",
                    table.file_name()
                );
            }
        }
        let all = flags::all(table);
        assert!(
            all.windows(2).all(|w| w[0].name < w[1].name),
            "{}: sorted, no duplicates",
            table.file_name()
        );
    }
    assert!(800 < flags::all(Table::MegatronLm).len());
    assert!(700 < flags::all(Table::MindSpeedLlm).len());
    let spec = flags::lookup(Table::MegatronLm, "--rotary-base").unwrap();
    assert_eq!(
        flags::places(Table::MegatronLm, spec),
        ["NVIDIA/Megatron-LM megatron/training/arguments.py:2335"]
    );
}

/// Every catalog model's launch files on the Megatron family: each flag and key is one the
/// framework declares, for plans that break no rule of the framework (a plan that does, gpt-oss's
/// learned sinks on MindSpeed, says so in its file and is refused by the page before it is
/// downloaded). The corpus covers the knobs; this covers the models' own flags.
#[test]
fn every_catalog_models_flags_are_declared() {
    let (mut refused, mut checked, mut skipped) = (Vec::new(), 0, Vec::new());
    for config in trainplan_core::catalog::CONFIGS {
        for (framework, hardware, method) in [
            (Framework::Megatron, "h100-sxm-80g", "pretrain"),
            (Framework::MindSpeedLlm, "ascend-910b2", "pretrain"),
            (Framework::MindSpeedRl, "ascend-910b2", "grpo"),
        ] {
            // Fused attention, which gpt-oss's learned sinks need on Megatron-LM; a rollout TP that
            // divides the heads and holds the model, on more nodes and over the experts for the
            // largest.
            let plan_at = |(nodes, rollout_tp, rollout_ep): (u32, u32, u32)| {
                let text = format!(
                    r#"{{"model": "{}", "hardware": "{hardware}", "framework": "{}", "method": "{method}",
                        "attention": "sdpa", "cluster": {{"nodes": {nodes}}}, "batch": {{"global_batch": {}}},
                        "rl": {{"rollout_tp": {rollout_tp}, "rollout_ep": {rollout_ep}}}}}"#,
                    config.id,
                    framework.wire(),
                    (nodes * 8).max(256)
                );
                let plan = Plan::from_json(&text).unwrap();
                let report = trainplan_core::evaluate(&plan);
                let errors: Vec<&str> = report
                    .findings
                    .iter()
                    .filter(|f| f.severity == trainplan_core::report::Severity::Error)
                    .map(|f| f.code.as_str())
                    .filter(|&code| code != "memory.does_not_fit")
                    .collect();
                (plan, errors)
            };
            let tried = [(2, 8, 1), (2, 4, 1), (2, 2, 1), (2, 1, 1), (16, 8, 1), (64, 8, 64), (128, 8, 128)]
                .map(plan_at);
            let Some((plan, _)) = tried.iter().find(|(_, errors)| errors.is_empty()) else {
                skipped.push(format!("{} on {}: {:?}", config.id, framework.wire(), tried[0].1));
                continue;
            };
            checked += 1;
            let files = emit(plan, "#link").unwrap();
            let found: Vec<String> = match framework {
                Framework::MindSpeedRl => {
                    let yaml =
                        files.iter().filter(|f| f.kind == FileKind::Yaml).nth(1).expect("the model block");
                    check_rl_yaml(&yaml.text, true).unwrap()
                }
                _ => {
                    let table = if framework == Framework::Megatron {
                        Table::MegatronLm
                    } else {
                        Table::MindSpeedLlm
                    };
                    let script = files.iter().find(|f| f.kind == FileKind::Shell).expect("a launch script");
                    check_script(table, &script.text).unwrap().iter().map(ToString::to_string).collect()
                }
            };
            if !found.is_empty() {
                refused.push(format!("{} on {}: {}", config.id, framework.wire(), found.join("; ")));
            }
        }
    }
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));
    assert!(128 <= checked, "{checked} checked; skipped:\n{}", skipped.join("\n"));
}
