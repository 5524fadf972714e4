//! The gRPC contract between a clowder coordinator and its workers.
//!
//! Generated from `proto/clowder/v1/clowder.proto`, plus the few conventions both sides of
//! the contract read (limits' reasons, the work cap's sentinel, the JSON configuration of
//! external-tool runs ([`command`]) and of test runs ([`test_run`])).

#![allow(missing_docs)]

/// Version 1 of the protocol.
pub mod v1 {
    tonic::include_proto!("clowder.v1");
}

pub use v1::*;

pub mod command;
pub mod test_run;

/// How a worker's reason for a run stopped by its CPU time limit starts:
/// `CPU time limit of N s exceeded …`. That limit is an infrastructure guard whose outcome
/// depends on the machine, not on the run: such a run is reported as an infrastructure failure,
/// the coordinator gives it one more attempt, `clowder verify` skips it and a coordinator resumed
/// with a higher limit runs it again.
pub const CPU_LIMIT_REASON: &str = "CPU time limit of ";

/// [`RunSpec::work_cap`] meaning "no work cap" (0 means the engine's default cap, so that
/// coordinators that do not know the field keep today's behaviour).
pub const NO_WORK_CAP: u64 = u64::MAX;

/// The limit (seconds) named by a CPU time limit failure reason, `None` for any other reason.
pub fn cpu_limit_of_reason(reason: &str) -> Option<u64> {
    reason.strip_prefix(CPU_LIMIT_REASON)?.split(' ').next()?.parse().ok()
}

/// Metadata key that carries the shared worker token on every RPC.
pub const TOKEN_METADATA_KEY: &str = "x-clowder-token";

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_limit_reasons_name_their_limit() {
        let r = format!("{}150 s exceeded (RLIMIT_CPU after 148 s; …)", super::CPU_LIMIT_REASON);
        assert_eq!(super::cpu_limit_of_reason(&r), Some(150));
        assert_eq!(super::cpu_limit_of_reason("memory limit of 4 MiB exceeded"), None);
        assert_eq!(super::cpu_limit_of_reason("CPU time limit of lots"), None);
    }
}
