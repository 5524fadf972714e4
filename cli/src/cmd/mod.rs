//! One module per subcommand.

pub mod analyze;
pub mod bench;
pub mod dataset;
pub mod generate;
pub mod mutate;
pub mod run;
