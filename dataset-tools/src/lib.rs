//! The dataset tools only the `clowder` CLI uses, kept out of [`clowder_datasets`] so that the
//! coordinator, which only lists and hashes a dataset's files, links no HTTP client: downloading
//! projects from the Scratch website ([`fetch`]), seeded sampling and candidate ids
//! ([`sample`]), and size statistics ([`stats`]; their histogram is drawn by
//! `clowder_analysis::plots`, where all plotting lives).

#![warn(missing_docs)]

pub mod fetch;
pub mod sample;
pub mod stats;
