//! The command-line flags and config keys the Megatron-family frameworks declare, recorded as data
//! at pinned commits and checked here the way the frameworks' own parsers would check them.
//!
//! Three tables live in `core/data/flags/`, each a tab-separated file whose `#` header names the
//! repositories and commits it was read from; `tools/flagtable/regenerate` rewrites them from the
//! frameworks' sources (`tools/flagtable/extract.py` follows every argparse registration statically):
//!
//! - `megatron-lm.tsv`: the flags of Megatron-LM's `pretrain_gpt.py` at [`MEGATRON_LM`].
//! - `mindspeed-llm.tsv`: MindSpeed-LLM's parser at [`MINDSPEED_LLM`], i.e. Megatron-LM
//!   [`MEGATRON_CORE_012`] plus every feature's `register_args` (MindSpeed [`MINDSPEED`] and
//!   MindSpeed-LLM's own).
//! - `mindspeed-rl.tsv`: the YAML keys MindSpeed-RL's config classes accept, by section, at
//!   [`MINDSPEED_RL`], and for `MegatronConfig` the flag each key becomes in the actor's parser
//!   (Megatron-LM [`MEGATRON_CORE_012`], MindSpeed [`MINDSPEED_RL_MINDSPEED`], MindSpeed-LLM
//!   [`MINDSPEED_RL_MINDSPEED_LLM`], as MindSpeed-RL's install guide pins them).
//!
//! [`check`] says what argparse would say of one `--flag [value …]`: a flag the version does not
//! declare, a switch given a value, a value missing or one too many for `nargs`, a value that
//! `int()` or `float()` refuses, a value outside the choices.
//!
//! ```
//! use trainplan_core::emit::flags::{FlagError, Table, check};
//!
//! assert_eq!(check(Table::MegatronLm, "--rotary-base", Some("1000000")), Ok(()));
//! // `type=int`: Python's int() refuses a decimal point.
//! assert!(matches!(
//!     check(Table::MegatronLm, "--rotary-base", Some("1000000.0")),
//!     Err(FlagError::BadType { .. })
//! ));
//! ```

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// A framework's repository at the commit a table was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// `owner/name` on GitHub.
    pub repo: &'static str,
    /// The release tag or branch the commit was taken from.
    pub version: &'static str,
    /// The full commit hash.
    pub commit: &'static str,
}

/// Megatron-LM's newest release (`megatron-lm.tsv`).
pub const MEGATRON_LM: Target = Target {
    repo: "NVIDIA/Megatron-LM",
    version: "core_v0.19.0",
    commit: "5be9626709af2722333bf54797c954c09edeada3",
};

/// The Megatron-LM MindSpeed-LLM and MindSpeed-RL run on (their install guides check out this tag).
pub const MEGATRON_CORE_012: Target = Target {
    repo: "NVIDIA/Megatron-LM",
    version: "core_v0.12.1",
    commit: "a845aa7e12b3a117e24c2352b9e3e60bad2e3a17",
};

/// MindSpeed master, as MindSpeed-LLM's install guide checks it out (`mindspeed-llm.tsv`).
pub const MINDSPEED: Target = Target {
    repo: "Ascend/MindSpeed",
    version: "master",
    commit: "028de58ca629d035185b00ff7d1eb7eff4f7fd48",
};

/// MindSpeed-LLM master (`mindspeed-llm.tsv`).
pub const MINDSPEED_LLM: Target = Target {
    repo: "Ascend/MindSpeed-LLM",
    version: "master",
    commit: "c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91",
};

/// MindSpeed-RL master (`mindspeed-rl.tsv`).
pub const MINDSPEED_RL: Target = Target {
    repo: "Ascend/MindSpeed-RL",
    version: "master",
    commit: "05a90d77cb6cfad8999e2aee21068284db959579",
};

/// The MindSpeed commit MindSpeed-RL's install guide checks out.
pub const MINDSPEED_RL_MINDSPEED: Target = Target {
    repo: "Ascend/MindSpeed",
    version: "install-guide",
    commit: "ac9f0e74061f968fdb285aa6a0df68a980fb0412",
};

/// The MindSpeed-LLM commit MindSpeed-RL's install guide checks out.
pub const MINDSPEED_RL_MINDSPEED_LLM: Target = Target {
    repo: "Ascend/MindSpeed-LLM",
    version: "install-guide",
    commit: "a2c0733b9c8674e240a0a7607ed3f973115cc6b7",
};

/// One of the recorded tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    /// Megatron-LM's flags (`megatron-lm.tsv`).
    MegatronLm,
    /// MindSpeed-LLM's flags: Megatron-LM core_v0.12.1, MindSpeed and MindSpeed-LLM (`mindspeed-llm.tsv`).
    MindSpeedLlm,
    /// MindSpeed-RL's YAML keys and the actor's flags they become (`mindspeed-rl.tsv`).
    MindSpeedRl,
}

impl Table {
    /// Every table.
    pub const ALL: [Table; 3] = [Table::MegatronLm, Table::MindSpeedLlm, Table::MindSpeedRl];

    /// The table's file, as written by `tools/flagtable/regenerate`.
    pub fn text(self) -> &'static str {
        match self {
            Table::MegatronLm => include_str!("../../data/flags/megatron-lm.tsv"),
            Table::MindSpeedLlm => include_str!("../../data/flags/mindspeed-llm.tsv"),
            Table::MindSpeedRl => include_str!("../../data/flags/mindspeed-rl.tsv"),
        }
    }

    /// The file's name in `core/data/flags/`.
    pub fn file_name(self) -> &'static str {
        match self {
            Table::MegatronLm => "megatron-lm.tsv",
            Table::MindSpeedLlm => "mindspeed-llm.tsv",
            Table::MindSpeedRl => "mindspeed-rl.tsv",
        }
    }

    /// The pinned repositories the table was read from, in its header's order.
    pub fn targets(self) -> &'static [Target] {
        match self {
            Table::MegatronLm => &[MEGATRON_LM],
            Table::MindSpeedLlm => &[MEGATRON_CORE_012, MINDSPEED, MINDSPEED_LLM],
            Table::MindSpeedRl => {
                &[MEGATRON_CORE_012, MINDSPEED_RL_MINDSPEED, MINDSPEED_RL_MINDSPEED_LLM, MINDSPEED_RL]
            }
        }
    }

    /// The framework version, as messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Table::MegatronLm => "Megatron-LM core_v0.19.0",
            Table::MindSpeedLlm => "MindSpeed-LLM master c77308a (Megatron-LM core_v0.12.1)",
            Table::MindSpeedRl => "MindSpeed-RL master 05a90d7 (Megatron-LM core_v0.12.1)",
        }
    }

    fn idx(self) -> usize {
        match self {
            Table::MegatronLm => 0,
            Table::MindSpeedLlm => 1,
            Table::MindSpeedRl => 2,
        }
    }
}

/// How many values a flag takes (argparse's action and `nargs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// None: `store_true`, `store_false`, `store_const`, `count`, `help`.
    Switch,
    /// Exactly one (`nargs` unset).
    One,
    /// Zero or one (`nargs='?'`).
    Optional,
    /// Any number (`nargs='*'`).
    Any,
    /// One or more (`nargs='+'`).
    AtLeastOne,
    /// Exactly this many (`nargs=N`).
    Exactly(u16),
}

/// The declared `type=` of a flag's values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ValueType {
    /// `int`: Python's `int()` must accept the text.
    Int,
    /// `float`: Python's `float()` must accept the text.
    Float,
    /// `str` or no type: any text.
    Str,
    /// Another callable (a lambda, an Enum lookup, …), named as the source writes it; not checked.
    Other(Cow<'static, str>),
}

/// One flag as a table records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagSpec {
    /// The option string, `--rotary-base`.
    pub name: Cow<'static, str>,
    /// The argparse action as recorded (`store_true`, `value`, `append`, …).
    pub action: &'static str,
    /// How many values it takes.
    pub arity: Arity,
    /// The type its values are converted with.
    pub value_type: ValueType,
    /// The allowed values, `|` separated; empty when any value goes.
    pub choices: &'static str,
    /// The argparse `dest` when it is not the one derived from the name.
    pub dest: &'static str,
    /// Declared inside a conditional branch (only under some settings or installed packages).
    pub conditional: bool,
    /// Where it is declared: `file:line` entries of the table's `# file` list, comma separated.
    pub declared_at: &'static str,
}

impl FlagSpec {
    /// The allowed values, when the flag has choices.
    pub fn choices(&self) -> impl Iterator<Item = &'static str> {
        let choices = self.choices;
        choices.split('|').filter(move |_| !choices.is_empty())
    }

    /// What argparse would say of this flag given `values` (the words after it, up to the next flag).
    ///
    /// # Errors
    ///
    /// [`FlagError`] other than `Unknown`: a switch given a value, a count of values `nargs` does not
    /// allow, a value the declared type refuses or one outside the choices.
    pub fn check(&self, values: &[&str]) -> Result<(), FlagError> {
        let flag = || self.name.clone().into_owned();
        let (min, max, expected) = match self.arity {
            Arity::Switch => {
                return match values.first() {
                    None => Ok(()),
                    Some(v) => Err(FlagError::SwitchWithValue { flag: flag(), value: (*v).to_owned() }),
                };
            }
            Arity::One => (1, 1, "one value".to_owned()),
            Arity::Optional => (0, 1, "at most one value".to_owned()),
            Arity::Any => (0, usize::MAX, String::new()),
            Arity::AtLeastOne => (1, usize::MAX, "at least one value".to_owned()),
            Arity::Exactly(n) => (usize::from(n), usize::from(n), format!("{n} values")),
        };
        if values.len() < min || max < values.len() {
            return Err(FlagError::ValueCount { flag: flag(), expected, given: values.len() });
        }
        for value in values {
            let ok = match self.value_type {
                ValueType::Int => python_int(value).is_some(),
                ValueType::Float => python_float(value).is_some(),
                ValueType::Str | ValueType::Other(_) => true,
            };
            if !ok {
                return Err(FlagError::BadType {
                    flag: flag(),
                    value: (*value).to_owned(),
                    value_type: self.value_type.clone(),
                });
            }
            if !self.choices.is_empty() && !self.choices().any(|c| same_value(&self.value_type, c, value)) {
                return Err(FlagError::NotAChoice {
                    flag: flag(),
                    value: (*value).to_owned(),
                    choices: Cow::Borrowed(self.choices),
                });
            }
        }
        Ok(())
    }
}

/// Why a framework's parser would refuse a flag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FlagError {
    /// Occurs when the framework version declares no such flag (argparse: "unrecognized arguments").
    Unknown {
        /// The flag as written.
        flag: String,
        /// The framework version ([`Table::name`]).
        framework: Cow<'static, str>,
    },
    /// Occurs when a switch is followed by a value: argparse reads the value as a stray argument.
    SwitchWithValue {
        /// The flag.
        flag: String,
        /// The word after it.
        value: String,
    },
    /// Occurs when a flag gets fewer or more values than its `nargs` allows.
    ValueCount {
        /// The flag.
        flag: String,
        /// What it takes ("one value", "3 values", …).
        expected: String,
        /// How many it got.
        given: usize,
    },
    /// Occurs when a value does not parse as the declared type (Python's `int()` or `float()`).
    BadType {
        /// The flag.
        flag: String,
        /// The value.
        value: String,
        /// The declared type.
        value_type: ValueType,
    },
    /// Occurs when a value is not among the declared choices.
    NotAChoice {
        /// The flag.
        flag: String,
        /// The value.
        value: String,
        /// The choices, `|` separated.
        choices: Cow<'static, str>,
    },
}

impl FlagError {
    /// The flag the error is about.
    pub fn flag(&self) -> &str {
        match self {
            FlagError::Unknown { flag, .. }
            | FlagError::SwitchWithValue { flag, .. }
            | FlagError::ValueCount { flag, .. }
            | FlagError::BadType { flag, .. }
            | FlagError::NotAChoice { flag, .. } => flag,
        }
    }
}

impl std::fmt::Display for FlagError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FlagError::Unknown { flag, framework } => write!(f, "{flag} is not a flag of {framework}"),
            FlagError::SwitchWithValue { flag, value } => write!(f, "{flag} takes no value, given {value}"),
            FlagError::ValueCount { flag, expected, given } => {
                write!(f, "{flag} takes {expected}, given {given}")
            }
            FlagError::BadType { flag, value, value_type } => {
                let ty = match value_type {
                    ValueType::Int => "an int",
                    ValueType::Float => "a float",
                    ValueType::Str => "a string",
                    ValueType::Other(name) => name,
                };
                write!(f, "{flag} takes {ty}, given {value}")
            }
            FlagError::NotAChoice { flag, value, choices } => {
                write!(f, "{flag} takes one of {choices}, given {value}")
            }
        }
    }
}

impl std::error::Error for FlagError {}

/// The flag `flag` (`--rotary-base`) as `table` records it.
pub fn lookup(table: Table, flag: &str) -> Option<&'static FlagSpec> {
    let flags = &parsed(table).flags;
    flags.binary_search_by(|f| f.name.as_ref().cmp(flag)).ok().map(|i| &flags[i])
}

/// What the framework's parser would say of `flag` with `value` (`None`: nothing follows it).
///
/// # Errors
///
/// [`FlagError`]: the flag is unknown to the table's version, or [`FlagSpec::check`] refuses it.
pub fn check(table: Table, flag: &str, value: Option<&str>) -> Result<(), FlagError> {
    check_values(table, flag, value.as_slice())
}

/// [`check`] with every value that follows the flag (for `nargs='+'` and the like).
///
/// # Errors
///
/// As [`check`].
pub fn check_values(table: Table, flag: &str, values: &[&str]) -> Result<(), FlagError> {
    match lookup(table, flag) {
        None => Err(FlagError::Unknown { flag: flag.to_owned(), framework: Cow::Borrowed(table.name()) }),
        Some(spec) => spec.check(values),
    }
}

/// The flags `table` records, sorted by name.
pub fn all(table: Table) -> &'static [FlagSpec] {
    &parsed(table).flags
}

/// The repositories and commits the table's header names, in order.
pub fn recorded_targets(table: Table) -> &'static [Target] {
    &parsed(table).targets
}

/// Where `spec` is declared, each place as `owner/repo path:line`.
pub fn places(table: Table, spec: &FlagSpec) -> Vec<String> {
    places_of(table, spec.declared_at)
}

fn places_of(table: Table, declared_at: &str) -> Vec<String> {
    let p = parsed(table);
    declared_at
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|place| {
            let (id, line) = place.split_once(':').unwrap_or((place, ""));
            match p.files.iter().find(|f| f.0 == id) {
                Some((_, key, path)) => {
                    let repo = p.keys.iter().find(|k| k.0 == *key).map_or(*key, |k| k.1);
                    format!("{repo} {path}:{line}")
                }
                None => place.to_owned(),
            }
        })
        .collect()
}

/// Whether the flag in a MindSpeed-RL key is one the actor's parser declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RlFlag {
    /// Not a Megatron key: the section's class keeps it for MindSpeed-RL itself.
    Setting,
    /// A Megatron key whose flag no parser of the stack declares: set (true, a number, a text) it
    /// stops the actor's argument parsing.
    Undeclared,
    /// A Megatron key whose flag is declared: [`rl_flag`] gives it.
    Declared,
}

/// A YAML key a MindSpeed-RL config class accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RlKey {
    /// The class, `MegatronConfig`, or a checked dict inside one (`GenerateConfig.sampling_config`).
    pub class: &'static str,
    /// The key.
    pub key: &'static str,
    /// Whether it becomes a flag of the actor's parser.
    pub flag: RlFlag,
    /// Where the class sets it: `file:line` of the table's `# file` list.
    pub declared_at: &'static str,
}

/// The config class that reads a MindSpeed-RL YAML section (`megatron_training`, `rl_config`,
/// `generate_config.sampling_config`, … and `model` for a model block).
pub fn rl_class(section: &str) -> Option<&'static str> {
    parsed(Table::MindSpeedRl).sections.iter().find(|s| s.0 == section).map(|s| s.1)
}

/// `key` of YAML section `section`, when MindSpeed-RL accepts it there.
pub fn rl_key(section: &str, key: &str) -> Option<&'static RlKey> {
    let class = rl_class(section)?;
    let keys = &parsed(Table::MindSpeedRl).rl_keys;
    keys.binary_search_by(|k| (k.class, k.key).cmp(&(class, key))).ok().map(|i| &keys[i])
}

/// The actor's flag a Megatron key becomes (`rotary_base` → `--rotary-base`), when declared.
pub fn rl_flag(key: &RlKey) -> Option<&'static FlagSpec> {
    match key.flag {
        RlFlag::Declared => lookup(Table::MindSpeedRl, &format!("--{}", key.key.replace('_', "-"))),
        RlFlag::Setting | RlFlag::Undeclared => None,
    }
}

/// A table read once: its flags sorted by name, its header's lists.
struct Parsed {
    flags: Vec<FlagSpec>,
    targets: Vec<Target>,
    /// Source key (`M`) → repository.
    keys: Vec<(&'static str, &'static str)>,
    /// File id → source key, path.
    files: Vec<(&'static str, &'static str, &'static str)>,
    /// MindSpeed-RL: section → class.
    sections: Vec<(&'static str, &'static str)>,
    /// MindSpeed-RL: keys sorted by class and key.
    rl_keys: Vec<RlKey>,
}

fn parsed(table: Table) -> &'static Parsed {
    static TABLES: [OnceLock<Parsed>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    TABLES[table.idx()].get_or_init(|| parse(table))
}

fn parse(table: Table) -> Parsed {
    let mut p = Parsed {
        flags: Vec::new(),
        targets: Vec::new(),
        keys: Vec::new(),
        files: Vec::new(),
        sections: Vec::new(),
        rl_keys: Vec::new(),
    };
    for line in table.text().lines() {
        if let Some(header) = line.strip_prefix("# ") {
            let cells: Vec<&'static str> = header.split('\t').collect();
            match cells.as_slice() {
                ["source", key, repo, commit, version, _date] => {
                    p.keys.push((key, repo));
                    p.targets.push(Target { repo, version, commit });
                }
                ["file", id, key, path] => p.files.push((id, key, path)),
                ["section", section, class] => p.sections.push((section, class)),
                _ => {}
            }
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut cells = line.split('\t');
        let mut next = || cells.next().unwrap_or("");
        match table {
            Table::MegatronLm | Table::MindSpeedLlm => {
                let name = next();
                let (action, value_type, choices, nargs, dest, cond, at) =
                    (next(), next(), next(), next(), next(), next(), next());
                p.flags.push(spec(Cow::Borrowed(name), action, value_type, choices, nargs, dest, cond, at));
            }
            Table::MindSpeedRl => {
                let (class, key) = (next(), next());
                let (action, value_type, choices, nargs, cond, at, flag_at) =
                    (next(), next(), next(), next(), next(), next(), next());
                let flag = match action {
                    "" => RlFlag::Setting,
                    "undeclared" => RlFlag::Undeclared,
                    _ => {
                        let name = Cow::Owned(format!("--{}", key.replace('_', "-")));
                        p.flags.push(spec(name, action, value_type, choices, nargs, "", cond, flag_at));
                        RlFlag::Declared
                    }
                };
                p.rl_keys.push(RlKey { class, key, flag, declared_at: at });
            }
        }
    }
    crate::sort::sort_by(&mut p.flags, |a, b| a.name.cmp(&b.name));
    crate::sort::sort_by_key(&mut p.rl_keys, |k| (k.class, k.key));
    p
}

#[allow(clippy::too_many_arguments)]
fn spec(
    name: Cow<'static, str>,
    action: &'static str,
    value_type: &'static str,
    choices: &'static str,
    nargs: &'static str,
    dest: &'static str,
    cond: &'static str,
    declared_at: &'static str,
) -> FlagSpec {
    let arity = match (action, nargs) {
        ("store_true" | "store_false" | "store_const" | "append_const" | "count" | "help" | "version", _) => {
            Arity::Switch
        }
        (_, "") => Arity::One,
        (_, "?") => Arity::Optional,
        (_, "+") => Arity::AtLeastOne,
        (_, n) => n.parse().map_or(Arity::Any, Arity::Exactly),
    };
    let value_type = match value_type {
        "int" => ValueType::Int,
        "float" => ValueType::Float,
        "str" | "" => ValueType::Str,
        other => ValueType::Other(Cow::Borrowed(other)),
    };
    FlagSpec { name, action, arity, value_type, choices, dest, conditional: cond == "if", declared_at }
}

/// The value Python's `int()` gives `text` (surrounding whitespace, a sign, `_` between digits).
fn python_int(text: &str) -> Option<i128> {
    let digits = python_digits(text.trim())?;
    digits.parse().ok()
}

/// The value Python's `float()` gives `text` (also `inf`, `nan`, exponents, `_` between digits).
fn python_float(text: &str) -> Option<f64> {
    let t = text.trim();
    let bytes = t.as_bytes();
    let mut clean = String::with_capacity(t.len());
    for (i, c) in t.char_indices() {
        if c == '_' {
            let between =
                0 < i && bytes[i - 1].is_ascii_digit() && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !between {
                return None;
            }
            continue;
        }
        clean.push(c);
    }
    clean.parse().ok()
}

/// A signed run of ASCII digits with single `_` between digits, the `_` dropped.
fn python_digits(text: &str) -> Option<String> {
    let (sign, rest) = match text.strip_prefix(['+', '-']) {
        Some(rest) => (&text[..1], rest),
        None => ("", text),
    };
    let ok = !rest.is_empty()
        && !rest.starts_with('_')
        && !rest.ends_with('_')
        && !rest.contains("__")
        && rest.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    ok.then(|| format!("{sign}{}", rest.replace('_', "")))
}

/// Whether `value` converted with the flag's type equals choice `choice` (argparse compares the
/// converted values).
fn same_value(value_type: &ValueType, choice: &str, value: &str) -> bool {
    match value_type {
        ValueType::Int => python_int(choice).is_some() && python_int(choice) == python_int(value),
        ValueType::Float => python_float(choice).is_some() && python_float(choice) == python_float(value),
        ValueType::Str | ValueType::Other(_) => choice == value,
    }
}
