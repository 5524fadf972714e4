//! One module per subcommand.

pub mod analyze;
pub mod dataset;
pub mod run;
