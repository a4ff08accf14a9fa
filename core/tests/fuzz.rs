//! Fuzzing of every text a user can paste and of plan evaluation: the permalink decoder, HF
//! config.json import, the reverse importers of launch files, and `evaluate` (with search and
//! advice) over random plans up to the extremes their types allow.
//!
//! Each property feeds arbitrary input and mutations of real input (encoded links, catalog configs,
//! emitted launch files) and checks three things: no panic, no NaN or ∞ anywhere in a report, and a
//! bounded time per input. An input that decodes to a plan is evaluated too, so every path from
//! pasted text to a report is covered.
//!
//! `TRAINPLAN_FUZZ_CASES` sets the inputs per property (256 by default, the budget every test run
//! uses); docs/testing.md gives the long run. Each property prints how many inputs it survived.

use std::cell::Cell;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use serde_json::{Value, json};
use trainplan_core::emit::import::import;
use trainplan_core::model::{Family, LoraTarget};
use trainplan_core::plan::{
    AttentionImpl, CustomDevice, Framework, Fsdp, HardwareField, Method, ModelField, ModelSpec,
    PipelineSchedule, Plan, PlanFile, Precision, RecomputeGranularity, RecomputeMethod, TargetsField,
};
use trainplan_core::{Report, catalog, emit, hardware, hf, permalink, search};

// ---------------------------------------------------------------------------------------------
// The harness.

/// Inputs per property: `TRAINPLAN_FUZZ_CASES`, else 256.
fn cases() -> u32 {
    std::env::var("TRAINPLAN_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256)
}

/// The longest one evaluation (memory, schedule, time, rules, report) may take. The slowest plans
/// are the extreme ones (65,536 stages simulated to the 2^20-pass bound: 0.22 s in release on this
/// kind of machine, measured alone); the bound leaves room for a loaded machine. Test builds (the
/// core at `opt-level = 1`, debug assertions and overflow checks on: Cargo.toml) are several times
/// slower than release and share two cores with the other properties.
fn evaluation_bound() -> Duration {
    match cfg!(debug_assertions) {
        true => Duration::from_secs(20),
        false => Duration::from_millis(500),
    }
}

/// The longest decoding or importing one pasted text may take, evaluation of its plan excluded.
fn decode_bound() -> Duration {
    match cfg!(debug_assertions) {
        true => Duration::from_secs(2),
        false => Duration::from_millis(100),
    }
}

/// The longest a whole search over a small plan (at most 16 devices) may take.
fn search_bound() -> Duration {
    match cfg!(debug_assertions) {
        true => Duration::from_secs(60),
        false => Duration::from_secs(3),
    }
}

thread_local! {
    /// Plans evaluated by [`check_plan`] on this thread: how many inputs reached a report.
    static EVALUATED: Cell<u64> = const { Cell::new(0) };
}

/// Runs `property` on [`cases`] inputs drawn from `strategy` and prints how many it survived.
/// A failure is shrunk to a small input and reported with it, and its seed is kept in
/// `core/tests/proptest-regressions/fuzz.txt`, which every later run tries first (as the
/// `proptest!` properties' files beside it are).
fn fuzz<S: Strategy>(name: &str, strategy: S, property: impl Fn(S::Value) -> Result<(), TestCaseError>) {
    // Warm the catalog (read once per process) so that its first reading is not timed.
    let _ = catalog::models();
    // `Direct`, a path from the package's folder (cargo runs tests there): a test of one file has no
    // `main.rs` or `lib.rs` beside it for proptest's usual place to be found from.
    let kept = FileFailurePersistence::Direct("tests/proptest-regressions/fuzz.txt");
    let config = Config {
        cases: cases(),
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(kept)),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let survived = Cell::new(0_u64);
    let evaluated_before = EVALUATED.get();
    let start = Instant::now();
    let result = runner.run(&strategy, |input| {
        property(input)?;
        survived.set(survived.get() + 1);
        Ok(())
    });
    match result {
        Ok(()) => println!(
            "fuzz {name}: survived {} inputs in {:.1} s ({} reached a report)",
            survived.get(),
            start.elapsed().as_secs_f64(),
            EVALUATED.get() - evaluated_before,
        ),
        Err(err) => panic!("fuzz {name}: {err}"),
    }
}

/// Times `f`, failing when it takes longer than `bound`.
fn timed<T>(what: &str, bound: Duration, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    let start = Instant::now();
    let res = f();
    let took = start.elapsed();
    match took <= bound {
        true => Ok(res),
        false => Err(TestCaseError::fail(format!("{what} took {took:?}, more than {bound:?}"))),
    }
}

// ---------------------------------------------------------------------------------------------
// What a report must be.

/// Where a report's JSON may hold `null`: the `Option` fields, when absent. serde_json writes a
/// NaN or ∞ as `null`, so a `null` anywhere else is a number that was not finite.
fn null_allowed(path: &str) -> bool {
    path == "memory.rollout"
        || path == "memory.peak_moment"
        || (path.starts_with("findings[") && path.ends_with("].fix"))
}

/// The words of a text that spell a non-finite number as Rust formats it.
fn non_finite_word(text: &str) -> Option<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
        .find(|w| matches!(w.trim_start_matches('-'), "NaN" | "inf"))
}

/// Every value of `value` with its dotted path.
fn walk<'a>(value: &'a Value, path: &str, visit: &mut dyn FnMut(&str, &'a Value)) {
    visit(path, value);
    let join = |key: &str| if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") };
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| walk(v, &join(k), visit)),
        Value::Array(items) => {
            items.iter().enumerate().for_each(|(i, v)| walk(v, &format!("{path}[{i}]"), visit))
        }
        _ => {}
    }
}

/// Fails unless every number of the report is finite: no `null` outside the `Option` fields, no
/// `NaN` or `inf` written into a finding's text (text the user typed, such as a `model_type`, taken
/// out first), and each f64 of the time report checked directly.
fn check_report(report: &Report, typed: &[String]) -> Result<(), TestCaseError> {
    let value = serde_json::to_value(report).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut bad = Vec::new();
    walk(&value, "", &mut |path, v| match v {
        Value::Null if !null_allowed(path) => bad.push(format!("{path} is null (NaN or ∞)")),
        Value::String(text) if path.starts_with("findings[") => {
            let text =
                typed.iter().filter(|t| !t.is_empty()).fold(text.clone(), |t, typed| t.replace(typed, ""));
            if let Some(word) = non_finite_word(&text) {
                bad.push(format!("{path} says {word:?}: {text}"));
            }
        }
        _ => {}
    });
    let t = &report.time;
    let b = &t.breakdown;
    let direct = [
        t.step_seconds,
        t.tokens_per_second,
        t.tokens_per_second_per_device,
        t.samples_per_second,
        t.mfu,
        t.hfu,
        t.model_flops_per_step,
        t.hardware_flops_per_step,
        t.days_per_trillion_tokens,
        b.compute_seconds,
        b.bubble_seconds,
        b.dp_comm_seconds,
        report.schedule.bubble_fraction,
        report.calibration.efficiency_scale,
        report.calibration.memory_offset_mib,
        report.cost.tokens_per_step,
        report.cost.wall_seconds,
        report.cost.device_hours,
        report.cost.energy_kwh.unwrap_or(0.0),
        report.cost.price.unwrap_or(0.0),
    ];
    if direct.iter().any(|x| !x.is_finite()) {
        bad.push(format!("a time figure is not finite: {direct:?}"));
    }
    match bad.is_empty() {
        true => Ok(()),
        false => Err(TestCaseError::fail(bad.join("; "))),
    }
}

/// Fails unless a serialized result (search, advice) holds no `null`: none of their fields is an
/// `Option`, so each `null` is a NaN or ∞.
fn check_no_null(what: &str, value: &impl serde::Serialize) -> Result<(), TestCaseError> {
    let value = serde_json::to_value(value).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut bad = None;
    walk(&value, what, &mut |path, v| {
        if v.is_null() && bad.is_none() {
            bad = Some(path.to_owned());
        }
    });
    match bad {
        None => Ok(()),
        Some(path) => Err(TestCaseError::fail(format!("{path} is null (NaN or ∞)"))),
    }
}

/// Evaluates a plan within the bound and checks its report, its launch files and its link. A
/// failure or a panic is reported with the plan's compact file, ready for a regression test.
fn check_plan(plan: &Plan) -> Result<(), TestCaseError> {
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_plan_unwinding(plan)));
    let why = match res {
        Ok(Ok(())) => return Ok(()),
        Ok(Err(err)) => err.to_string(),
        Err(panic) => match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
            (Some(msg), _) => format!("panicked: {msg}"),
            (_, Some(msg)) => format!("panicked: {msg}"),
            _ => "panicked".to_owned(),
        },
    };
    Err(TestCaseError::fail(format!("{why}\nplan: {}", permalink::compact_json(&plan.to_file()))))
}

fn check_plan_unwinding(plan: &Plan) -> Result<(), TestCaseError> {
    EVALUATED.set(EVALUATED.get() + 1);
    // An abort (out of memory) prints no input: with TRAINPLAN_FUZZ_TRACE=FILE each plan is
    // written there before it runs, so the file's last line is the culprit.
    if let Some(path) = std::env::var_os("TRAINPLAN_FUZZ_TRACE") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(f, "{}", permalink::compact_json(&plan.to_file()));
        }
    }
    let report = timed("evaluate", evaluation_bound(), || trainplan_core::evaluate(plan))?;
    let mut typed = vec![plan.model.name.clone(), plan.hardware.hw.name.clone()];
    if let ModelSpec::HfConfig(config) = &plan.model.spec {
        typed.extend(config.get("model_type").and_then(Value::as_str).map(str::to_owned));
        // The layer kinds `layer_types` lists, which rule `model.layer_types` quotes ("inf" is one).
        let kinds = config.get("layer_types").and_then(Value::as_array).into_iter().flatten();
        typed.extend(kinds.filter_map(Value::as_str).map(str::to_owned));
    }
    check_report(&report, &typed)?;
    let link = permalink::encode(plan);
    match permalink::decode(&link) {
        Ok(back) => prop_assert_eq!(&back, plan, "the link reads back as another plan"),
        Err(err) => return Err(TestCaseError::fail(format!("its own link is refused: {err}"))),
    }
    // The launch files' opening paragraph quotes the peak and the step time (and the names the
    // user typed, which may read "NaN": those are theirs).
    if let Ok(files) = emit::emit(plan, &link) {
        for f in &files {
            let opening = f.text.lines().take_while(|l| l.starts_with('#') || l.starts_with("//"));
            for line in opening {
                let ours =
                    typed.iter().filter(|t| !t.is_empty()).fold(line.to_owned(), |l, t| l.replace(t, ""));
                prop_assert!(non_finite_word(&ours).is_none(), "{}: {line}", f.name);
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Mutations.

/// Values that break parsers: huge, negative, zero, fractional, non-finite spelled out, wrong types.
fn weird_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            json!(0),
            json!(-1),
            json!(-4096),
            json!(1),
            json!(2),
            json!(u32::MAX),
            json!(u64::from(u32::MAX) + 1),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(9_007_199_254_740_993_u64),
            json!(1e300),
            json!(-1e300),
            json!(1e-300),
            json!(5e-324),
            json!(0.5),
            json!(4096.0),
            json!(1e18),
            json!(1e19),
            json!("NaN"),
            json!("inf"),
            json!("-Infinity"),
            json!("4096"),
            json!(""),
            json!(null),
            json!(true),
            json!(false),
            json!([]),
            json!([1, 2]),
            json!({}),
            json!({"type": "yarn", "factor": 1e300}),
        ]),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        (1_u64..=1 << 26).prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ]
}

/// One structure-aware edit of a JSON value.
#[derive(Clone, Debug)]
enum JsonEdit {
    /// The node takes this value.
    Replace(Value),
    /// The node is removed.
    Drop,
    /// A key is added beside the node (or an item after it).
    Add(String, Value),
    /// The node is wrapped in an array.
    Wrap,
}

fn json_edit(keys: Vec<String>) -> impl Strategy<Value = (usize, JsonEdit)> {
    let key = prop_oneof![prop::sample::select(keys), "[a-z_]{1,12}"];
    let edit = prop_oneof![
        4 => weird_json().prop_map(JsonEdit::Replace),
        2 => Just(JsonEdit::Drop),
        2 => (key, weird_json()).prop_map(|(k, v)| JsonEdit::Add(k, v)),
        1 => Just(JsonEdit::Wrap),
    ];
    (any::<usize>(), edit)
}

/// Nodes below the root, in pre-order.
fn count_nodes(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.values().map(|v| 1 + count_nodes(v)).sum(),
        Value::Array(items) => items.iter().map(|v| 1 + count_nodes(v)).sum(),
        _ => 0,
    }
}

/// Applies `edit` to the node `at` (modulo the node count, pre-order, root excluded).
fn mutate_json(root: &mut Value, at: usize, edit: &JsonEdit) {
    fn visit(value: &mut Value, n: &mut usize, edit: &JsonEdit) -> bool {
        match value {
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    if *n == 0 {
                        match edit {
                            JsonEdit::Replace(v) => drop(map.insert(key, v.clone())),
                            JsonEdit::Drop => drop(map.remove(&key)),
                            JsonEdit::Add(k, v) => drop(map.insert(k.clone(), v.clone())),
                            JsonEdit::Wrap => {
                                let old = map.remove(&key).unwrap_or_default();
                                map.insert(key, Value::Array(vec![old]));
                            }
                        }
                        return true;
                    }
                    *n -= 1;
                    if visit(map.get_mut(&key).expect("a listed key"), n, edit) {
                        return true;
                    }
                }
            }
            Value::Array(items) => {
                for i in 0..items.len() {
                    if *n == 0 {
                        match edit {
                            JsonEdit::Replace(v) => items[i] = v.clone(),
                            JsonEdit::Drop => drop(items.remove(i)),
                            JsonEdit::Add(_, v) => items.insert(i + 1, v.clone()),
                            JsonEdit::Wrap => items[i] = Value::Array(vec![items[i].take()]),
                        }
                        return true;
                    }
                    *n -= 1;
                    if visit(&mut items[i], n, edit) {
                        return true;
                    }
                }
            }
            _ => {}
        }
        false
    }
    let count = count_nodes(root);
    if count == 0 {
        if let (Value::Object(map), JsonEdit::Add(k, v)) = (&mut *root, edit) {
            map.insert(k.clone(), v.clone());
        }
        return;
    }
    visit(root, &mut (at % count), edit);
}

/// Tokens that mean something to one of the parsers (shell, YAML, JSON, Hydra, base64).
const TOKENS: &[&str] = &[
    "\"",
    "'",
    "\\",
    "\n",
    "\r\n",
    "\t",
    " ",
    "=",
    "==",
    "--",
    "-",
    "{",
    "}",
    "[",
    "]",
    ":",
    ": ",
    "#",
    ",",
    "0",
    "-1",
    "4294967295",
    "4294967296",
    "99999999999999999999",
    "1e309",
    "NaN",
    "inf",
    "null",
    "true",
    "~",
    "é",
    "\u{0}",
    "${X}",
    "$(",
    "`",
    "&",
    "*a",
    "!!int",
    "---",
    "...",
    "%",
    "v1=",
    "v2=",
    "A",
    "_",
    "/",
    "--tensor-model-parallel-size",
    "--pipeline-model-parallel-size",
    "--num-layers",
    "--num-layers-per-virtual-pipeline-stage",
    "--micro-batch-size",
    "--global-batch-size",
    "--seq-length",
    "--lora-r",
    "--recompute-granularity",
    "pretrain_gpt.py",
    "posttrain_gpt.py",
    "--use-mcore-models",
    "NUM_NODES=",
    "GPUS_PER_NODE=",
    "actor_rollout_ref.rollout.n=",
    "trainer.nnodes=",
    "actor_rollout_ref.rollout.gpu_memory_utilization=",
    "data.train_batch_size=",
    "stage: ",
    "per_device_train_batch_size: ",
    "gradient_accumulation_steps: ",
    "deepspeed: ds_z3_offload.json",
    "\"zero_optimization\": ",
    "\"train_batch_size\": ",
    "\"stage\": ",
    "Qwen/Qwen2.5-7B",
];

/// Numbers that break number parsing, as text.
const WEIRD_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "-0",
    "1",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999",
    "1e309",
    "1e-400",
    "0.5",
    "4096.0",
    "NaN",
    "inf",
    "-inf",
    "0x10",
    "1_000",
    "",
    " ",
    "\"8\"",
    "8'",
    "1/0",
    "+7",
];

/// One edit of a text.
#[derive(Clone, Debug)]
enum TextEdit {
    /// One bit of one byte flipped.
    Flip(usize, u8),
    /// Everything after a position removed.
    Truncate(usize),
    /// A token inserted.
    Insert(usize, &'static str),
    /// Random text inserted.
    InsertText(usize, String),
    /// A stretch removed.
    Delete(usize, usize),
    /// A stretch repeated.
    Duplicate(usize, usize),
    /// One number of the text replaced.
    Number(usize, &'static str),
    /// One line removed.
    DropLine(usize),
}

fn text_edit() -> impl Strategy<Value = TextEdit> {
    let at = any::<usize>();
    prop_oneof![
        2 => (at, 0..8_u8).prop_map(|(i, b)| TextEdit::Flip(i, b)),
        1 => at.prop_map(TextEdit::Truncate),
        2 => (at, prop::sample::select(TOKENS)).prop_map(|(i, t)| TextEdit::Insert(i, t)),
        1 => (at, ".{1,8}").prop_map(|(i, t)| TextEdit::InsertText(i, t)),
        1 => (at, 1..64_usize).prop_map(|(i, n)| TextEdit::Delete(i, n)),
        1 => (at, 1..64_usize).prop_map(|(i, n)| TextEdit::Duplicate(i, n)),
        3 => (at, prop::sample::select(WEIRD_NUMBERS)).prop_map(|(i, t)| TextEdit::Number(i, t)),
        2 => at.prop_map(TextEdit::DropLine),
    ]
}

fn text_edits() -> BoxedStrategy<Vec<TextEdit>> {
    prop::collection::vec(text_edit(), 1..=6).boxed()
}

/// Applies the edits to the bytes of `text`; invalid UTF-8 is replaced, as a browser would.
fn mutate_text(text: &str, edits: &[TextEdit]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for edit in edits {
        let len = bytes.len();
        let pos = |i: usize| i % (len + 1);
        match edit {
            TextEdit::Flip(i, bit) if 0 < len => bytes[i % len] ^= 1 << bit,
            TextEdit::Flip(..) => {}
            TextEdit::Truncate(i) => bytes.truncate(pos(*i)),
            TextEdit::Insert(i, token) => drop(bytes.splice(pos(*i)..pos(*i), token.bytes())),
            TextEdit::InsertText(i, t) => drop(bytes.splice(pos(*i)..pos(*i), t.bytes())),
            TextEdit::Delete(i, n) => drop(bytes.drain(pos(*i)..(pos(*i) + n).min(len))),
            TextEdit::Duplicate(i, n) => {
                let piece = bytes[pos(*i)..(pos(*i) + n).min(len)].to_vec();
                bytes.splice(pos(*i)..pos(*i), piece);
            }
            TextEdit::Number(i, number) => {
                let numbers = digit_runs(&bytes);
                if let Some(&(start, end)) = numbers.get(i % numbers.len().max(1)) {
                    bytes.splice(start..end, number.bytes());
                }
            }
            TextEdit::DropLine(i) => {
                let n_lines = bytes.split(|&b| b == b'\n').count();
                let drop_idx = i % n_lines;
                let kept: Vec<&[u8]> = bytes
                    .split(|&b| b == b'\n')
                    .enumerate()
                    .filter(|(j, _)| *j != drop_idx)
                    .map(|(_, l)| l)
                    .collect();
                bytes = kept.join(&b'\n');
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Where the runs of ASCII digits are.
fn digit_runs(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut res = Vec::new();
    let mut start = None;
    for (i, b) in bytes.iter().chain([&b' ']).enumerate() {
        match (b.is_ascii_digit(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                res.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    res
}

// ---------------------------------------------------------------------------------------------
// Plans.

/// A count up to `extreme`: mostly up to `realistic`, sometimes 1, `extreme` or anywhere between.
fn count_u32(realistic: u32, extreme: u32) -> BoxedStrategy<u32> {
    prop_oneof![
        6 => 1..=realistic,
        2 => (0..=realistic.ilog2()).prop_map(|k| 1 << k),
        1 => Just(1),
        1 => Just(extreme),
        1 => 1..=extreme,
    ]
    .boxed()
}

/// Catalog keys, for adding keys a real config has.
fn config_keys() -> Vec<String> {
    let mut keys: Vec<String> = catalog::CONFIGS
        .iter()
        .filter_map(|c| serde_json::from_str::<Value>(c.config).ok())
        .filter_map(|v| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()))
        .flatten()
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// A catalog config, parsed.
fn catalog_config() -> impl Strategy<Value = Value> {
    let configs: Vec<Value> = catalog::CONFIGS
        .iter()
        .map(|c| serde_json::from_str(c.config).expect("catalog configs are JSON"))
        .collect();
    prop::sample::select(configs)
}

/// A model: a catalog id, or a catalog config scaled up to the largest the importer accepts or
/// down to one of everything (kept only when it reads; a catalog id otherwise).
fn model_field() -> BoxedStrategy<ModelField> {
    let ids: Vec<&'static str> = catalog::CONFIGS.iter().map(|c| c.id).collect();
    let scale = prop::sample::select(vec![0.0, 0.001, 0.5, 1.0, 4.0, 16.0, 64.0, 256.0, 1024.0]);
    (prop::sample::select(ids.clone()), catalog_config(), scale, scale_layers(), any::<bool>())
        .prop_map(move |(id, mut config, width, layers, use_config)| {
            if !use_config {
                return ModelField::Id(id.to_owned());
            }
            let map = config.as_object_mut().expect("catalog configs are objects");
            for key in ["hidden_size", "n_embd", "intermediate_size", "moe_intermediate_size", "vocab_size"] {
                if let Some(n) = map.get(key).and_then(Value::as_u64) {
                    map.insert(key.to_owned(), json!(((n as f64 * width) as u64).max(1)));
                }
            }
            for key in ["num_hidden_layers", "n_layer"] {
                if map.contains_key(key) {
                    map.insert(key.to_owned(), json!(layers));
                }
            }
            match hf::import_value(&config) {
                Ok(_) => ModelField::Config { hf_config: config, name: None },
                Err(_) => ModelField::Id(id.to_owned()),
            }
        })
        .boxed()
}

fn scale_layers() -> impl Strategy<Value = u64> {
    prop_oneof![Just(1_u64), 1..=128_u64, Just(4096)]
}

/// A device: a catalog id, or a custom one anywhere in the accepted ranges.
fn hardware_field() -> BoxedStrategy<HardwareField> {
    let ids: Vec<String> = hardware::devices().into_iter().map(|d| d.id).collect();
    let in_range =
        |lo: f64, hi: f64| prop_oneof![Just(lo), Just(hi), lo..=hi, (lo.ln()..=hi.ln()).prop_map(f64::exp)];
    let custom = (
        in_range(0.1, 100_000.0),
        prop_oneof![Just(0.0), in_range(1e-6, 1e6)],
        prop::option::of(in_range(1e-6, 1e6)),
        prop_oneof![Just(0.0), in_range(1e-6, 1e6)],
        in_range(0.001, 1000.0),
        in_range(0.001, 1e6),
        in_range(0.001, 1e7),
        prop::sample::select(vec!["nvidia", "ascend", "other"]),
        count_u32(64, 1024),
    )
        .prop_map(|(memory_gb, bf16, fp16, fp8, mem_bw, intra, inter, vendor, devices_per_node)| {
            // At least one of bf16 and fp16 is positive.
            let bf16 = if bf16 == 0.0 && fp16.is_none_or(|x| x == 0.0) { 1.0 } else { bf16 };
            HardwareField::Custom {
                custom: CustomDevice {
                    name: "fuzzed device".to_owned(),
                    vendor: vendor.to_owned(),
                    memory_gb,
                    bf16_tflops: bf16,
                    fp16_tflops: fp16,
                    fp8_tflops: fp8,
                    fp4_tflops: None,
                    memory_tb_per_s: mem_bw,
                    intra_node_gb_per_s: intra,
                    inter_node_gbit_per_s: inter,
                    devices_per_node,
                    scale_up_domain: None,
                    gemm_efficiency_max: None,
                    board_power_w: None,
                },
            }
        });
    prop_oneof![3 => prop::sample::select(ids).prop_map(HardwareField::Id), 1 => custom.boxed()].boxed()
}

/// The cluster: 1 device to some hundred thousand, now and then far beyond.
fn cluster() -> BoxedStrategy<(u32, Option<u32>)> {
    prop_oneof![
        8 => (1..=12_500_u32, prop::option::of(prop::sample::select(vec![1_u32, 2, 4, 8, 16]))),
        1 => (Just(1_u32), Just(Some(1_u32))),
        1 => (count_u32(12_500, 1 << 16), prop::option::of(count_u32(64, 1024))),
    ]
    .boxed()
}

/// A parallel degree: realistic, or up to 65536.
fn deg(realistic: u32) -> BoxedStrategy<u32> {
    count_u32(realistic, 1 << 16)
}

/// A plan file anywhere in the ranges `Plan::from_file` accepts, up to its limits: 65,536 nodes of
/// up to 1,024 devices, sequences and batches to 2^24, degrees to 65,536, 1,024 responses per
/// prompt, the largest models the importer reads, every framework, method, device and knob.
/// Every part is boxed: the value tree of the whole would overflow a test thread's stack in debug.
fn plan_file() -> BoxedStrategy<PlanFile> {
    (
        (model_field(), hardware_field(), cluster()).boxed(),
        (
            prop::sample::select(Framework::ALL.to_vec()),
            prop::sample::select(Method::ALL.to_vec()),
            prop::sample::select(Precision::ALL.to_vec()),
            prop::sample::select(AttentionImpl::ALL.to_vec()),
            prop::sample::select(PipelineSchedule::ALL.to_vec()),
            prop::sample::select(Fsdp::ALL.to_vec()),
        )
            .boxed(),
        (deg(64), deg(64), deg(8), deg(16), deg(256), deg(8), 0..=3_u8).boxed(),
        any::<[bool; 8]>(),
        (
            prop::sample::select(RecomputeGranularity::ALL.to_vec()),
            prop::sample::select(RecomputeMethod::ALL.to_vec()),
            count_u32(128, 1 << 16),
            any::<[bool; 3]>(),
        )
            .boxed(),
        (count_u32(64, 1 << 16), count_u32(1 << 20, 1 << 24), count_u32(1 << 17, 1 << 24)).boxed(),
        (count_u32(1024, 1 << 16), any::<u32>(), prop::sample::subsequence(LoraTarget::ALL.to_vec(), 0..=4)),
        (
            (deg(16), count_u32(64, 1 << 10), count_u32(1 << 15, 1 << 24), count_u32(1 << 15, 1 << 24)),
            prop_oneof![Just(1.0), Just(5e-324), Just(1e-9), 1e-6..=1.0_f64],
            count_u32(1024, 1 << 16),
        )
            .boxed(),
        (
            any::<[bool; 7]>(),
            prop_oneof![Just(0_u32), count_u32(64, 1 << 16)],
            prop_oneof![Just(1.0_f64), Just(5e-324), 1e-6..=1.0_f64],
            prop_oneof![Just(0_u32), count_u32(1 << 10, 1 << 24)],
            prop_oneof![Just(0_u32), count_u32(1 << 15, 1 << 24)],
            prop_oneof![Just(0_u32), count_u32(1 << 15, 1 << 24)],
            prop_oneof![Just(0_u32), count_u32(1 << 15, 1 << 24)],
        )
            .boxed(),
        (
            prop::option::of(prop_oneof![Just(0.0), Just(1e6), 0.0..=1e6_f64]),
            prop::option::of(prop_oneof![Just(0.0), Just(1e6), 0.0..=1e6_f64]),
            prop::option::of(prop_oneof![Just(0.0), Just(0.5), 0.0..=0.5_f64]),
            prop::option::of(prop_oneof![Just(0.05), Just(5.0), 0.05..=5.0_f64]),
            prop::option::of(prop_oneof![Just(-1e6), Just(1e6), -1e6..=1e6_f64]),
        )
            .boxed(),
    )
        .prop_map(|(m, kinds, degrees, flags, rc, batch, lora, rl, seed_knobs, knobs)| {
            let (model, hardware, (nodes, devices_per_node)) = m;
            let mut f = PlanFile::minimal(model);
            f.hardware = hardware;
            f.cluster.nodes = nodes;
            f.cluster.devices_per_node = devices_per_node;
            (f.framework, f.method, f.precision, f.attention, f.parallel.schedule, f.parallel.fsdp) = kinds;
            let p = &mut f.parallel;
            (p.tp, p.pp, p.vpp, p.cp, p.ep, p.etp, p.zero_stage) = degrees;
            [
                p.sequence_parallel,
                p.distributed_optimizer,
                p.offload_optimizer,
                p.offload_params,
                p.overlap_grad_reduce,
                p.overlap_param_gather,
                p.tp_comm_overlap,
                p.no_sync_accumulation,
            ] = flags;
            let r = &mut f.recompute;
            (
                r.granularity,
                r.method,
                r.num_layers,
                [r.activation_function, r.swap_attention, r.distribute_saved_activations],
            ) = rc;
            (f.batch.micro_batch, f.batch.global_batch, f.batch.seq_len) = batch;
            f.lora.rank = lora.0;
            f.lora.alpha = lora.1;
            f.lora.targets = match lora.2.is_empty() {
                true => TargetsField::Word("all".to_owned()),
                false => TargetsField::List(lora.2.iter().map(|t| t.name().to_owned()).collect()),
            };
            let ((rollout_tp, n, prompt, response), utilization, seqs) = rl;
            f.rl.rollout_tp = rollout_tp;
            f.rl.n_samples_per_prompt = n;
            f.rl.max_prompt_length = prompt;
            f.rl.max_response_length = response;
            f.rl.gpu_memory_utilization = utilization;
            f.rl.max_num_seqs = seqs;
            // The tuning knobs: MindSpeed's swap-optimizer and activation-function layers, the
            // Ascend LLaMA-Factory layers ratio, the RL engine and batching settings, and the
            // context-parallel algorithm.
            let (switches, act_fn_layers, ratio, mini, budget, model_len, batched) = seed_knobs;
            let [swap_optimizer, dynamic_batch, remove_padding, enforce_eager, blocking, uneven, all_to_all] =
                switches;
            [
                f.parallel.swap_optimizer,
                f.rl.dynamic_batch,
                f.rl.remove_padding,
                f.rl.enforce_eager,
                f.rl.blocking,
                f.parallel.uneven_layers,
            ] = [swap_optimizer, dynamic_batch, remove_padding, enforce_eager, blocking, uneven];
            if all_to_all {
                f.parallel.cp_algo = trainplan_core::plan::CpAlgo::AllToAll;
            }
            f.recompute.activation_function_layers = act_fn_layers;
            f.recompute.layers_ratio = ratio;
            (f.rl.mini_batch, f.rl.max_tokens_per_device, f.rl.max_model_len, f.rl.max_num_batched_tokens) =
                (mini, budget, model_len, batched);
            let (context, comm, reserve, efficiency, offset) = knobs;
            f.overheads.runtime_context_mib = context;
            f.overheads.comm_buffer_mib = comm;
            f.overheads.allocator_reserve = reserve;
            f.calibration.efficiency_scale = efficiency;
            f.calibration.memory_offset_mib = offset;
            f
        })
        .boxed()
}

/// A valid plan from [`plan_file`]: the generator stays inside every range, so a refusal fails.
fn plan() -> BoxedStrategy<Plan> {
    plan_file()
        .prop_map(|f| Plan::from_file(&f).unwrap_or_else(|e| panic!("generated plan refused: {e}\n{f:?}")))
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// (a) The permalink decoder.

/// Decodes a pasted fragment within the bound; a plan it yields must evaluate cleanly.
fn check_link(text: &str) -> Result<(), TestCaseError> {
    let decoded = timed("permalink::decode", decode_bound(), || permalink::decode(text))?;
    match decoded {
        Ok(plan) => check_plan(&plan),
        Err(err) => {
            prop_assert!(!err.to_string().is_empty());
            Ok(())
        }
    }
}

/// A link whose payload is `json` (any text), deflated and encoded as the encoder does.
fn link_of(json: &str) -> String {
    let deflated = miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 6);
    format!("{}{}", permalink::PREFIX, URL_SAFE_NO_PAD.encode(deflated))
}

#[test]
fn fuzz_permalink_arbitrary_text() {
    let text = prop_oneof![
        ".{0,300}",
        "#?v[0-9]{1,3}=[A-Za-z0-9_=-]{0,400}",
        prop::collection::vec(any::<u8>(), 0..400).prop_map(|b| format!("v1={}", URL_SAFE_NO_PAD.encode(b))),
        ".{0,300}".prop_map(|json| link_of(&json)),
    ];
    fuzz("permalink/arbitrary", text, |text| check_link(&text));
}

#[test]
fn fuzz_permalink_mutated_links() {
    let keys = vec!["model".to_owned(), "parallel".to_owned(), "tp".to_owned(), "hf_config".to_owned()];
    let layer = prop_oneof![
        text_edits().prop_map(|e| (0_u8, e, Vec::new())),
        text_edits().prop_map(|e| (1_u8, e, Vec::new())),
        text_edits().prop_map(|e| (2_u8, e, Vec::new())),
        prop::collection::vec(json_edit(keys), 1..=4).prop_map(|j| (3_u8, Vec::new(), j)),
    ];
    fuzz("permalink/mutated", (plan(), layer), |(plan, (level, edits, json_edits))| {
        let link = permalink::encode(&plan);
        let payload = &link[permalink::PREFIX.len()..];
        let text = match level {
            // The link as text: flipped, cut, stretched.
            0 => mutate_text(&link, &edits),
            // The deflated bytes.
            1 => {
                let deflated = URL_SAFE_NO_PAD.decode(payload).expect("an encoded link");
                let damaged = mutate_text(&String::from_utf8_lossy(&deflated), &edits);
                format!("{}{}", permalink::PREFIX, URL_SAFE_NO_PAD.encode(damaged))
            }
            // The plan file's JSON text.
            2 => link_of(&mutate_text(&permalink::compact_json(&plan.to_file()), &edits)),
            // The plan file's JSON values.
            _ => {
                let mut value: Value = serde_json::from_str(&permalink::compact_json(&plan.to_file()))
                    .expect("compact JSON is JSON");
                for (at, edit) in &json_edits {
                    mutate_json(&mut value, *at, edit);
                }
                link_of(&value.to_string())
            }
        };
        check_link(&text)
    });
}

// ---------------------------------------------------------------------------------------------
// (b) HF config.json import.

/// Imports a config within the bound; a config it reads becomes a plan that must evaluate cleanly.
fn check_config(config: &Value) -> Result<(), TestCaseError> {
    let imported = timed("hf::import_value", decode_bound(), || hf::import_value(config))?;
    let Ok(imported) = imported else { return Ok(()) };
    let counts = trainplan_core::model::count_params(&imported.arch);
    prop_assert!(counts.total() <= hf::MAX_PARAMS);
    prop_assert!(counts.active <= counts.total());
    let file = PlanFile::minimal(ModelField::Config { hf_config: config.clone(), name: None });
    let plan =
        Plan::from_file(&file).map_err(|e| TestCaseError::fail(format!("a config that reads: {e}")))?;
    check_plan(&plan)
}

fn arbitrary_json(keys: Vec<String>) -> impl Strategy<Value = Value> {
    let leaf =
        prop_oneof![weird_json(), Just(json!("llama")), Just(json!("deepseek_v3")), Just(json!("gpt2"))];
    leaf.prop_recursive(3, 64, 12, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![prop::sample::select(keys.clone()), "[a-z_]{1,10}"],
                inner,
                0..24
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

#[test]
fn fuzz_hf_config_arbitrary_json() {
    let families: Vec<&str> = Family::ALL.iter().map(|f| f.model_type()).collect();
    let value = (arbitrary_json(config_keys()), prop::option::of(prop::sample::select(families))).prop_map(
        |(mut value, family)| {
            if let (Value::Object(map), Some(family)) = (&mut value, family) {
                map.insert("model_type".to_owned(), json!(family));
            }
            value
        },
    );
    fuzz("hf-config/arbitrary", value, |value| {
        check_config(&value)?;
        // The same as text, and any text at all.
        let _ = timed("hf::import", decode_bound(), || hf::import(&value.to_string()))?;
        Ok(())
    });
    fuzz("hf-config/text", ".{0,300}", |text| {
        let _ = timed("hf::import", decode_bound(), || hf::import(&text))?;
        Ok(())
    });
}

#[test]
fn fuzz_hf_config_mutated_catalog() {
    let families: Vec<&str> = Family::ALL.iter().map(|f| f.model_type()).collect();
    let strategy = (
        catalog_config(),
        prop::collection::vec(json_edit(config_keys()), 1..=5),
        prop::option::of(prop_oneof![
            prop::sample::select(families).prop_map(str::to_owned),
            "[a-z_0-9]{0,12}"
        ]),
        prop::option::of(text_edits()),
    );
    fuzz("hf-config/mutated", strategy, |(mut config, edits, family, text_edits)| {
        for (at, edit) in &edits {
            mutate_json(&mut config, *at, edit);
        }
        if let (Value::Object(map), Some(family)) = (&mut config, family) {
            map.insert("model_type".to_owned(), json!(family));
        }
        check_config(&config)?;
        if let Some(text_edits) = text_edits {
            let text = mutate_text(&config.to_string(), &text_edits);
            let read = timed("hf::import", decode_bound(), || hf::import(&text))?;
            if read.is_ok() {
                let value: Value = serde_json::from_str(&text).expect("it read as JSON");
                check_config(&value)?;
            }
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// (c) The reverse importers.

/// Imports a pasted launch file onto `base` within the bound; a plan file it yields that reads as
/// a plan must evaluate cleanly.
fn check_import(text: &str, base: &PlanFile) -> Result<(), TestCaseError> {
    let imported = timed("emit::import::import", decode_bound(), || import(text, base))?;
    let Ok(imported) = imported else { return Ok(()) };
    match Plan::from_file(&imported.file) {
        Ok(plan) => check_plan(&plan),
        Err(err) => {
            prop_assert!(!err.to_string().is_empty());
            Ok(())
        }
    }
}

/// Emits `framework`'s files for random plans, mutates one of them and imports it.
fn fuzz_import_of(name: &str, framework: Framework) {
    let strategy = (plan_file(), any::<usize>(), text_edits(), any::<bool>());
    fuzz(name, strategy, |(mut file, pick, edits, pristine)| {
        file.framework = framework;
        let Ok(plan) = Plan::from_file(&file) else {
            return Err(TestCaseError::fail("generated plan refused"));
        };
        let link = permalink::encode(&plan);
        let Ok(files) = emit::emit(&plan, &link) else { return Ok(()) };
        let emitted = &files[pick % files.len()];
        let base = PlanFile::minimal(file.model.clone());
        match pristine {
            true => check_import(&emitted.text, &base),
            false => check_import(&mutate_text(&emitted.text, &edits), &file),
        }
    });
}

#[test]
fn fuzz_import_megatron_script() {
    fuzz_import_of("import/megatron", Framework::Megatron);
}

#[test]
fn fuzz_import_mindspeed_llm_script() {
    fuzz_import_of("import/mindspeed-llm", Framework::MindSpeedLlm);
}

#[test]
fn fuzz_import_llamafactory_yaml() {
    fuzz_import_of("import/llamafactory", Framework::LlamaFactory);
}

#[test]
fn fuzz_import_deepspeed_json() {
    fuzz_import_of("import/deepspeed", Framework::DeepSpeed);
}

#[test]
fn fuzz_import_verl_overrides() {
    fuzz_import_of("import/verl", Framework::Verl);
}

#[test]
fn fuzz_import_mindspeed_rl_yaml() {
    fuzz_import_of("import/mindspeed-rl", Framework::MindSpeedRl);
}

#[test]
fn fuzz_import_arbitrary_text() {
    // Token soup: each importer's keywords among numbers, quotes and line breaks.
    let soup = prop::collection::vec(
        prop_oneof![
            prop::sample::select(TOKENS).prop_map(str::to_owned),
            "[ -~]{0,6}",
            prop::sample::select(WEIRD_NUMBERS).prop_map(str::to_owned)
        ],
        0..60,
    )
    .prop_map(|words| words.join(" "));
    let prefix = prop::sample::select(vec![
        "",
        "{",
        "torchrun pretrain_gpt.py ",
        "stage: sft\n",
        "python -m verl.trainer.main_ppo ",
    ]);
    let text = prop_oneof![".{0,400}", (prefix, soup).prop_map(|(p, s)| format!("{p}{s}"))];
    let base = PlanFile::minimal(ModelField::Id("qwen2.5-7b".to_owned()));
    fuzz("import/arbitrary", text, |text| check_import(&text, &base));
}

// ---------------------------------------------------------------------------------------------
// (d) Plan evaluation, search and advice.

#[test]
fn fuzz_evaluate_random_plans() {
    fuzz("evaluate", plan(), |plan| check_plan(&plan));
}

#[test]
fn fuzz_advice_random_plans() {
    fuzz("advise", plan(), |plan| {
        check_plan(&plan)?;
        let advice = timed("advise", evaluation_bound() * 20, || trainplan_core::advice::advise(&plan))?;
        check_no_null("advice", &advice)
    });
}

#[test]
fn fuzz_search_small_plans() {
    let small = (plan_file(), 1..=2_u32, prop::sample::select(vec![1_u32, 2, 4, 8]), 1..=4096_u32).prop_map(
        |(mut file, nodes, per_node, gbs)| {
            file.cluster.nodes = nodes;
            file.cluster.devices_per_node = Some(per_node);
            file.batch.global_batch = gbs;
            file.batch.seq_len = file.batch.seq_len.min(1 << 17);
            file
        },
    );
    fuzz("search", small, |file| {
        let plan = Plan::from_file(&file).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let result = timed("search", search_bound(), || search::search(&plan))?;
        prop_assert!(result.best.len() <= search::TOP);
        check_no_null("search", &result)?;
        // The fastest plan found, applied, is a plan like any other.
        match result.best.first() {
            Some(best) => match trainplan_core::rules::apply_all(&plan, &best.changes) {
                Ok(found) => check_plan(&found),
                Err(err) => Err(TestCaseError::fail(format!("the plan found does not apply: {err}"))),
            },
            None => Ok(()),
        }
    });
}

// ---------------------------------------------------------------------------------------------
// The checks can fail.

#[test]
fn the_report_check_catches_a_non_finite_number() {
    let mut report = trainplan_core::evaluate(&Plan::first_visit());
    assert!(check_report(&report, &[]).is_ok());
    report.time.mfu = f64::NAN;
    assert!(check_report(&report, &[]).is_err());
    report.time.mfu = 0.5;
    report.schedule.timeline[0].end_seconds = f64::INFINITY;
    assert!(check_report(&report, &[]).is_err());
    report.schedule.timeline[0].end_seconds = 1.0;
    report.findings.push(trainplan_core::report::Finding {
        severity: trainplan_core::report::Severity::Note,
        code: trainplan_core::report::Code::ALL[0],
        args: [("detail", "step inf s".to_owned())].into(),
        fix: None,
        make_valid: false,
    });
    assert!(check_report(&report, &[]).is_err());
    // A name the user typed is theirs to choose.
    report.findings.last_mut().unwrap().args.insert("detail", "unknown model_type \"NaN\"".to_owned());
    assert!(check_report(&report, &["NaN".to_owned()]).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Inputs the fuzzer found, each a failure before its fix.

#[track_caller]
fn assert_clean(plan_json: &str) {
    let plan = Plan::from_json(plan_json).unwrap();
    check_plan(&plan).unwrap();
    check_no_null("advice", &trainplan_core::advice::advise(&plan)).unwrap();
}

/// A permalink reopened a plan one unit in the last place away: serde_json's default float parser
/// is not exact (fixed by its `float_roundtrip` feature).
#[test]
fn regression_link_keeps_every_float_exactly() {
    assert_clean(
        r#"{"model": "gpt2", "hardware": "v100-sxm-32g", "framework": "megatron", "method": "pretrain",
            "calibration": {"efficiency_scale": 0.05, "memory_offset_mib": 921143.6260726048},
            "overheads": {"allocator_reserve": 0.06862706130734456, "comm_buffer_mib": 382231.68954271055}}"#,
    );
}

/// The rollout's KV cache for 2^32 sequences of 2^33 tokens overflowed u64 (`memory::rollout_memory`),
/// and prompt plus response lengths overflowed u32 (`advice`'s Ulysses move). Such counts are now
/// refused with the limit named; at the limits the plan evaluates cleanly.
#[test]
fn regression_rollout_of_the_longest_sequences() {
    let err = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo",
            "rl": {"max_num_seqs": 4294967295, "max_prompt_length": 4294967295, "max_response_length": 4294967295}}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("16777216"), "{err}");
    assert_clean(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo",
            "rl": {"max_num_seqs": 16777216, "max_prompt_length": 16777216, "max_response_length": 16777216}}"#,
    );
}

/// Micro-batches times samples per prompt overflowed u32 (`time::estimate_within`).
#[test]
fn regression_rl_microbatches_beyond_u32() {
    assert_clean(
        r#"{"batch": {"global_batch": 16777216, "seq_len": 1}, "framework": "mindspeed-llm", "hardware": "v100-sxm-32g",
            "method": "grpo", "model": "gpt2", "parallel": {"cp": 65536}, "recompute": {"granularity": "none"},
            "rl": {"gpu_memory_utilization": 1.0, "max_num_seqs": 1, "max_prompt_length": 1, "max_response_length": 1,
            "n_samples_per_prompt": 1024}}"#,
    );
}

/// 4,096 pipeline stages, or 65,536 virtual chunks, made the schedule simulation take gigabytes
/// (`time::pipeline_makespan`, `time::estimate_within`).
#[test]
fn regression_deepest_pipelines_are_bounded() {
    let model = r#"{"hf_config": {"model_type": "llama", "vocab_size": 32000, "hidden_size": 64,
        "intermediate_size": 128, "num_hidden_layers": 4096, "num_attention_heads": 1}}"#;
    assert_clean(&format!(
        r#"{{"model": {model}, "framework": "megatron", "method": "pretrain", "parallel": {{"pp": 4096}},
            "batch": {{"global_batch": 16777216, "seq_len": 16}}}}"#
    ));
    assert_clean(
        r#"{"model": "llama-3-70b", "framework": "mindspeed-llm", "method": "pretrain",
            "parallel": {"pp": 8, "vpp": 65536}, "batch": {"global_batch": 1024}}"#,
    );
}

/// RL phase totals overflowed u64 once activations saturated (`memory::rl_phases`), and the
/// advice's peak change overflowed i64 (`advice::advise`).
#[test]
fn regression_rl_phases_of_saturated_stages() {
    assert_clean(
        r#"{"attention": "eager", "batch": {"global_batch": 192189, "micro_batch": 12, "seq_len": 8020},
            "framework": "verl", "hardware": "v100-sxm-32g", "method": "grpo", "model": "gpt2-xl",
            "parallel": {"ep": 65536, "etp": 2, "pp": 30, "tp": 4, "zero_stage": 1},
            "recompute": {"granularity": "none"},
            "rl": {"gpu_memory_utilization": 1.0, "max_num_seqs": 506, "max_prompt_length": 10000000,
            "max_response_length": 6836297, "n_samples_per_prompt": 1}}"#,
    );
}

/// A config whose `model_type` is the text "NaN" reads as Llama-like with a warning that quotes it:
/// the user's text, not a number.
#[test]
fn a_model_type_typed_as_nan_is_text() {
    let config = catalog::CONFIGS.iter().find(|c| c.id == "llama-3-8b").unwrap().config;
    let config = config.replace("\"llama\"", "\"NaN\"");
    assert_clean(&format!(r#"{{"model": {{"hf_config": {config}}}}}"#));
}

/// The logits of 65,536 sequences of 10^7 tokens over a 10^7 vocabulary overflowed u64
/// (`memory::logits_bytes`).
#[test]
fn regression_logits_beyond_u64() {
    assert_clean(
        r#"{"batch": {"global_batch": 1, "micro_batch": 65536, "seq_len": 10000000}, "framework": "deepspeed",
            "method": "pretrain", "recompute": {"granularity": "none"},
            "model": {"hf_config": {"hidden_size": 57344, "intermediate_size": 311296, "model_type": "qwen2",
            "num_attention_heads": 14, "num_hidden_layers": 1, "num_key_value_heads": 2, "vocab_size": 9723904}}}"#,
    );
}

/// The rollout-TP rule looked for the nearest divisor of 67 million devices one number at a time
/// (half a second); divisors now come in √n steps.
#[test]
fn regression_divisors_of_the_largest_cluster() {
    assert_clean(
        r#"{"batch":{"global_batch":1,"seq_len":1},"cluster":{"devices_per_node":1024,"nodes":65536},"framework":"megatron",
            "hardware":"v100-sxm-32g","method":"grpo","model":"gpt2","recompute":{"granularity":"none"},
            "rl":{"max_num_seqs":1,"max_prompt_length":1,"max_response_length":1,"n_samples_per_prompt":1,"rollout_tp":3}}"#,
    );
}

/// DualPipeV on 65,536 stages: the bound on simulated passes counted the micro-batches asked for,
/// but DualPipeV's order holds at least 2·pp of them, so the simulation built 10^10 passes (9 GB,
/// 34 s). The bound now counts what the order holds (`time::pipeline_makespan`).
#[test]
fn regression_dualpipev_on_the_most_stages() {
    assert_clean(
        r#"{"batch":{"global_batch":862478,"micro_batch":63501,"seq_len":67316},"calibration":{"efficiency_scale":0.05},"cluster":{"devices_per_node":4,"nodes":1844},"framework":"mindspeed-llm","hardware":"a100-sxm-40g","lora":{"alpha":370697250,"rank":641,"targets":["v_proj","o_proj","q_a_proj","kv_a_proj_with_mqa"]},"method":"dpo","model":{"hf_config":{"attention_bias":false,"head_dim":128,"hidden_size":32768,"intermediate_size":98304,"max_position_embeddings":40960,"model_type":"qwen3","num_attention_heads":16,"num_hidden_layers":4096,"num_key_value_heads":8,"rms_norm_eps":1e-6,"rope_theta":1000000.0,"tie_word_embeddings":true,"vocab_size":2430976},"name":"custom model"},"overheads":{"allocator_reserve":0.38099322388672363,"comm_buffer_mib":0.0},"parallel":{"cp":16,"ep":5443,"offload_optimizer":true,"overlap_param_gather":true,"pp":65536,"schedule":"dualpipev","sequence_parallel":true,"vpp":4},"precision":"fp16","recompute":{"layers_ratio":0.08351380672080573,"num_layers":40},"rl":{"gpu_memory_utilization":1e-9,"max_model_len":28663,"max_num_seqs":64921,"max_prompt_length":4492,"max_response_length":6110628,"max_tokens_per_device":32768,"mini_batch":512,"n_samples_per_prompt":581,"rollout_tp":10}}"#,
    );
}

/// PPO on MindSpeed-LLM on 16 devices of a fuzzed device with room for anything: the search walked
/// 713,636 plans (52 s in a debug build), every one refused by method.needs_rl_framework, which no
/// knob it walks changes; and it worked out every rule's message and fix for each. The space is now
/// the plan alone, and the search checks the rules for their verdict only.
#[test]
fn regression_search_of_a_method_the_framework_cannot_train() {
    let plan = Plan::from_json(
        r#"{"version":1,"model":"qwen1.5-moe-a2.7b","hardware":{"custom":{"name":"fuzzed device","vendor":"other","memory_gb":100000.0,"bf16_tflops":1.0,"fp8_tflops":1e-06,"memory_tb_per_s":81.30015983860902,"intra_node_gb_per_s":0.001,"inter_node_gbit_per_s":8578559.494298615,"devices_per_node":25}},"cluster":{"nodes":2,"devices_per_node":8},"framework":"mindspeed-llm","method":"ppo","parallel":{"tp":30836,"pp":1,"vpp":6,"cp":10,"cp_algo":"alltoall","ep":65536,"etp":8,"sequence_parallel":false,"zero_stage":1,"distributed_optimizer":true,"offload_optimizer":true,"overlap_grad_reduce":true,"swap_optimizer":true,"uneven_layers":true,"schedule":"zb-h1","fused_kernels":true},"recompute":{"method":"uniform","num_layers":1,"swap_attention":true,"layers_ratio":1.0,"modules":["core_attn"]},"batch":{"micro_batch":22,"global_batch":1149,"seq_len":60972},"precision":"bf16","attention":"sdpa","lora":{"rank":1,"alpha":3547527009,"targets":["q_proj","c_attn","q_a_proj","q_b_proj"]},"rl":{"rollout_tp":1,"rollout_ep":1,"n_samples_per_prompt":6,"max_prompt_length":256,"max_response_length":8192,"gpu_memory_utilization":5e-324,"max_num_seqs":66,"dynamic_batch":true,"enforce_eager":true,"max_num_batched_tokens":10755308,"blocking":true},"moe":{"dispatcher":"alltoall","grouped_gemm":true,"imbalance":1.25},"calibration":{"memory_offset_mib":-571568.2573057844},"budget":{"tokens":1000000000000}}"#,
    )
    .unwrap();
    let result = timed("search", search_bound(), || search::search(&plan)).unwrap();
    assert_eq!(result.considered, 1);
    assert_eq!(result.blocked.first().map(|b| b.code.as_str()), Some("method.needs_rl_framework"));
}

/// The widest space among small plans (catalog models × frameworks × methods on at most 16
/// devices): Qwen3-30B-A3B GRPO on MindSpeed-RL over 2 × 8 devices with room for every plan, long
/// sequences (CP to 16) and every rollout TP × EP, 467,852 plans, all of them fitting: 19 s of the
/// bound's 60 s without optimization, 3.6 s at the tests' `opt-level = 1` (Cargo.toml), alone.
#[test]
fn regression_the_widest_small_search_is_bounded() {
    let plan = Plan::from_json(
        r#"{"model":"qwen3-30b-a3b","hardware":{"custom":{"name":"big","vendor":"ascend","memory_gb":100000.0,
            "bf16_tflops":300.0,"memory_tb_per_s":2.0,"intra_node_gb_per_s":100,"inter_node_gbit_per_s":200,
            "devices_per_node":8}},"cluster":{"nodes":2,"devices_per_node":8},"framework":"mindspeed-rl",
            "method":"grpo","batch":{"micro_batch":1,"global_batch":4096,"seq_len":60972}}"#,
    )
    .unwrap();
    let result = timed("search", search_bound(), || search::search(&plan)).unwrap();
    assert_eq!((result.considered, result.fit), (467_852, 467_852));
    check_no_null("search", &result).unwrap();
}
