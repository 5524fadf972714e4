//! The gRPC contract between a clowder coordinator and its workers.
//!
//! Generated from `proto/clowder/v1/clowder.proto`; nothing else lives here.

#![allow(missing_docs)]

/// Version 1 of the protocol.
pub mod v1 {
    tonic::include_proto!("clowder.v1");
}

pub use v1::*;

/// Metadata key that carries the shared worker token on every RPC.
pub const TOKEN_METADATA_KEY: &str = "x-clowder-token";
