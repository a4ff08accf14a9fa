//! The core's one integration test binary: each module checks one feature through the public API.

mod cli;
mod memory;
mod params;
mod plan;
mod tidy;
