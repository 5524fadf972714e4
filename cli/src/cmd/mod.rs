//! One module per subcommand.

pub mod analyze;
pub mod run;
pub mod vm;
