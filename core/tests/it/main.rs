//! The core's one integration test binary: each module checks one feature through the public API.

mod advice;
mod ascend;
mod cli;
mod compare;
#[path = "../corpus/mod.rs"]
mod corpus;
mod cost;
mod emit;
mod export;
mod flags;
mod gpu_peak;
mod hardware;
mod hf;
mod import_config;
mod invariants;
mod knobs;
mod layout;
mod logparse;
mod memory;
mod moe;
mod monotone;
mod params;
mod permalink;
mod plan;
mod public;
mod random_plans;
mod rules;
mod schedule;
mod search;
mod sweep;
mod tidy;
mod time;
mod timeline;
