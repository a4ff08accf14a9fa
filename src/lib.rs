//! The trainplan page: a Leptos (CSR) view over `trainplan_core`.
//!
//! The page holds no formula. It keeps what the user typed ([`form::PlanForm`]), turns it into a
//! core `Plan`, asks the core for a `Report`, and formats the report's numbers ([`mod@format`]) in the
//! user's language ([`i18n`]).

pub mod chart;
pub mod compare_chart;
pub mod export;
pub mod form;
pub mod format;
pub mod highlight;
pub mod i18n;
pub mod messages;
pub mod reader;
pub mod search_parts;

mod components;
mod history;
mod search_run;
mod storage;

pub use components::app::App;
