//! The permalink: the whole plan in a URL fragment, `#v1=…`.
//!
//! The payload is the plan file (docs/plan-format.md) with every field at its default left out,
//! deflated and written in URL-safe base64. The plan file's keys are already the stable, versioned
//! contract, so the permalink reuses them; deflate makes their length cheap. `v1` names this
//! encoding: a later encoding gets a new prefix and this decoder keeps reading `v1` links. Plans
//! pinned for comparison follow, each as `&pin=` and its own payload.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

use crate::plan::{Plan, PlanFile, PlanFileError};

/// The prefix of this encoding.
pub const PREFIX: &str = "v1=";

/// The largest decompressed payload accepted: far above any real plan, small enough that a hostile
/// link cannot exhaust memory.
const MAX_PAYLOAD_BYTES: usize = 1 << 20;

/// Why a permalink could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum PermalinkError {
    /// Occurs when the fragment is empty or has no `vN=` prefix.
    NotAPermalink,
    /// Occurs when the link was made by a newer version of trainplan.
    NewerVersion(String),
    /// Occurs when the payload is not valid base64, deflate or JSON (a truncated or edited link).
    Corrupt(String),
    /// Occurs when the payload decodes but is not a valid plan.
    Plan(PlanFileError),
    /// Occurs when a link pins more plans than can be compared (an edited link).
    TooManyPins(usize),
}

impl fmt::Display for PermalinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PermalinkError::NotAPermalink => write!(f, "not a trainplan link"),
            PermalinkError::NewerVersion(v) => {
                write!(f, "this link ({v}) was made by a newer version of trainplan")
            }
            PermalinkError::Corrupt(why) => write!(f, "the link is damaged ({why})"),
            PermalinkError::Plan(err) => write!(f, "the link holds an invalid plan: {err}"),
            PermalinkError::TooManyPins(n) => {
                write!(f, "the link pins {n} plans; at most {} can be compared", crate::compare::MAX_PINS)
            }
        }
    }
}

impl std::error::Error for PermalinkError {}

/// The fragment for a plan, without the leading `#`.
///
/// ```
/// use trainplan_core::{Plan, permalink};
/// let plan = Plan::from_json(r#"{"model": "llama-3-8b", "cluster": {"nodes": 4}}"#)?;
/// let link = permalink::encode(&plan);
/// assert!(link.starts_with("v1="));
/// assert_eq!(permalink::decode(&link)?, plan);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode(plan: &Plan) -> String {
    let json = compact_json(&plan.to_file());
    let deflated = miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 10);
    format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(deflated))
}

/// Introduces a pinned plan after the plan to edit: `v1=…&pin=…&pin=…`, one per pin (base64url
/// never holds `&`). A link with one pin reads as it always did.
pub const PIN: &str = "&pin=";

/// A link's plans: the one to edit and, when comparing, the pinned ones.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// The plan to show and edit.
    pub plan: Plan,
    /// The plans pinned for comparison, in the order they were pinned (at most
    /// [`crate::compare::MAX_PINS`]).
    pub pins: Vec<Plan>,
}

/// The fragment for a plan and, when comparing, the plans pinned beside it.
///
/// ```
/// use trainplan_core::{Plan, permalink};
/// let plan = Plan::from_json(r#"{"model": "llama-3-8b", "cluster": {"nodes": 2}}"#)?;
/// let pin = Plan::from_json(r#"{"model": "llama-3-8b"}"#)?;
/// let link = permalink::encode_link(&plan, &[pin.clone(), pin.clone()]);
/// assert_eq!(link.matches("&pin=").count(), 2);
/// assert_eq!(permalink::decode_link(&link)?.pins, [pin.clone(), pin]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_link(plan: &Plan, pins: &[Plan]) -> String {
    let mut link = encode(plan);
    for pin in pins {
        link.push_str(PIN);
        link.push_str(&encode(pin)[PREFIX.len()..]);
    }
    link
}

/// Reads a fragment with its pinned plans, if any.
///
/// # Errors
///
/// A [`PermalinkError`] for any of its plans, or [`PermalinkError::TooManyPins`]; nothing is partly
/// applied.
pub fn decode_link(fragment: &str) -> Result<Link, PermalinkError> {
    let fragment = fragment.trim().trim_start_matches('#');
    let mut parts = fragment.split(PIN);
    let plan = decode(parts.next().unwrap_or_default())?;
    let pins: Vec<&str> = parts.collect();
    if crate::compare::MAX_PINS < pins.len() {
        return Err(PermalinkError::TooManyPins(pins.len()));
    }
    let pins = pins.into_iter().map(|p| decode(&format!("{PREFIX}{p}"))).collect::<Result<_, _>>()?;
    Ok(Link { plan, pins })
}

/// Reads a fragment (with or without the leading `#`); pinned plans after it are not read.
///
/// # Errors
///
/// A [`PermalinkError`]; nothing is partly applied.
pub fn decode(fragment: &str) -> Result<Plan, PermalinkError> {
    let fragment = fragment.trim().trim_start_matches('#');
    let fragment = fragment.split_once(PIN).map_or(fragment, |(main, _)| main);
    let payload = match fragment.strip_prefix(PREFIX) {
        Some(payload) => payload,
        None => {
            let version = fragment.split_once('=').map(|(v, _)| v).unwrap_or("");
            let newer = version.strip_prefix('v').is_some_and(|n| n.parse::<u32>().is_ok_and(|n| 1 < n));
            return Err(match newer {
                true => PermalinkError::NewerVersion(version.to_owned()),
                false => PermalinkError::NotAPermalink,
            });
        }
    };
    let deflated = URL_SAFE_NO_PAD.decode(payload).map_err(|e| PermalinkError::Corrupt(e.to_string()))?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&deflated, MAX_PAYLOAD_BYTES)
        .map_err(|e| PermalinkError::Corrupt(format!("{:?}", e.status)))?;
    let text = std::str::from_utf8(&json).map_err(|e| PermalinkError::Corrupt(e.to_string()))?;
    let file: PlanFile =
        serde_json::from_str(text).map_err(|e| PermalinkError::Plan(PlanFileError::Json(e.to_string())))?;
    Plan::from_file(&file).map_err(PermalinkError::Plan)
}

/// The plan file as JSON without the fields equal to their defaults (and without `version`, which
/// the prefix carries).
pub fn compact_json(file: &PlanFile) -> String {
    let mut value = serde_json::to_value(file).expect("a plan file is always JSON");
    let defaults =
        serde_json::to_value(PlanFile::minimal(file.model.clone())).expect("a plan file is always JSON");
    prune(&mut value, &defaults);
    if let Value::Object(map) = &mut value {
        map.remove("version");
        // The model has no default: it equals itself in `defaults`, but must stay.
        let model = serde_json::to_value(&file.model).expect("a model field is always JSON");
        map.insert("model".to_owned(), model);
    }
    value.to_string()
}

/// Removes from `value` every object entry equal to the same entry of `defaults`, recursively, and
/// objects left empty.
fn prune(value: &mut Value, defaults: &Value) {
    let (Value::Object(map), Value::Object(defaults)) = (value, defaults) else { return };
    map.retain(|key, v| {
        let Some(d) = defaults.get(key) else { return true };
        if v == d {
            return false;
        }
        prune(v, d);
        !matches!(v, Value::Object(m) if m.is_empty())
    });
}
