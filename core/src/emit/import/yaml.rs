//! YAML as the importers read it: a file's documents merged into one map, a value or key as text,
//! and a section read key by key (LLaMA-Factory's top level, MindSpeed-RL's sections).

use yaml_rust2::yaml::Hash;
use yaml_rust2::{Yaml, YamlLoader};

use super::{Expected, ImportError};

/// The YAML documents of `text`, their top-level keys merged (a run YAML and its model block may
/// be pasted together).
pub(super) fn yaml_map(text: &str) -> Result<Hash, ImportError> {
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

/// A YAML value as text: a scalar as written, a list or map in one line.
pub(super) fn yaml_text(v: &Yaml) -> String {
    match v {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(n) => n.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Null => "null".to_owned(),
        other => format!("{other:?}"),
    }
}

/// A mapping's key as text: a string as it is, any other key as [`yaml_text`] writes it.
pub(super) fn yaml_key(k: &Yaml) -> String {
    k.as_str().map_or_else(|| yaml_text(k), str::to_owned)
}

/// One mapping of a YAML file, read key by key. Its name is its dotted path, which messages name a
/// key by (`generate_config.sampling_config.max_tokens`), empty at the top level; a section the
/// file does not have, or gives as no mapping, reads as empty.
pub(super) struct Section<'a> {
    name: String,
    map: Option<&'a Hash>,
    /// A mapping whose keys win over this one's, and its name ([`Section::overridden_by`]).
    over: Option<(String, &'a Hash)>,
}

impl<'a> Section<'a> {
    /// The file's top level.
    pub(super) fn top(map: &'a Hash) -> Section<'a> {
        Section { name: String::new(), map: Some(map), over: None }
    }

    /// This section with `over`'s keys winning over its own, as Python's `{**self, **over}` merges
    /// them; a key is named where it was found.
    pub(super) fn overridden_by(self, over: &Section<'a>) -> Section<'a> {
        Section { over: over.map.map(|m| (over.name.clone(), m)), ..self }
    }

    /// The mapping under `key`.
    pub(super) fn section(&self, key: &str) -> Section<'a> {
        let map = match self.get(key) {
            Some(Yaml::Hash(h)) => Some(h),
            _ => None,
        };
        Section { name: self.path(key), map, over: None }
    }

    /// `key`'s dotted path.
    pub(super) fn path(&self, key: &str) -> String {
        let name = match &self.over {
            Some((name, over)) if over.contains_key(&Yaml::String(key.to_owned())) => name,
            _ => &self.name,
        };
        match name.is_empty() {
            true => key.to_owned(),
            false => format!("{name}.{key}"),
        }
    }

    /// The value of `key`.
    pub(super) fn get(&self, key: &str) -> Option<&'a Yaml> {
        let key = Yaml::String(key.to_owned());
        self.over.as_ref().and_then(|(_, over)| over.get(&key)).or_else(|| self.map?.get(&key))
    }

    /// Whether the section has `key`, whatever its value.
    pub(super) fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Whether `key` is `true`.
    pub(super) fn switch(&self, key: &str) -> bool {
        matches!(self.get(key), Some(Yaml::Boolean(true)))
    }

    /// The string `key` holds.
    pub(super) fn str(&self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(Yaml::as_str)
    }

    /// `key`'s value as text ([`yaml_text`]).
    pub(super) fn text(&self, key: &str) -> Option<String> {
        self.get(key).map(yaml_text)
    }

    /// `key` as a count from 0; an error where it is anything else.
    pub(super) fn whole(&self, key: &str) -> Result<Option<u32>, ImportError> {
        self.count(key, 0, Expected::WholeNumber)
    }

    /// `key` as a count from 1; an error where it is anything else.
    pub(super) fn positive(&self, key: &str) -> Result<Option<u32>, ImportError> {
        self.count(key, 1, Expected::PositiveWholeNumber)
    }

    fn count(&self, key: &str, least: i64, expected: Expected) -> Result<Option<u32>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(Yaml::Integer(n)) if least <= *n && *n <= i64::from(u32::MAX) => Ok(Some(*n as u32)),
            Some(_) => Err(ImportError::BadValue(self.path(key), expected)),
        }
    }
}
