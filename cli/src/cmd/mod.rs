//! One module per subcommand.

pub mod analyze;
pub mod bench;
pub mod bench_profile;
pub mod bench_work;
pub mod common;
pub mod coordinator;
pub mod dataset;
pub mod export;
pub mod generate;
pub mod geometry_query;
pub mod judge_study;
pub mod mutate;
pub mod mutate_study;
pub mod mutate_write;
pub mod replay_study;
pub mod run;
pub mod select_study;
pub mod select_tables;
pub mod slurm;
pub mod status;
pub mod test;
pub mod test_dynamic;
pub mod test_itch;
pub mod verify;
pub mod vm;
pub mod worker;
