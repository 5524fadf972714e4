//! One module per subcommand.

pub mod analyze;
pub mod common;
pub mod coordinator;
pub mod export;
pub mod run;
pub mod slurm;
pub mod status;
pub mod verify;
pub mod worker;
