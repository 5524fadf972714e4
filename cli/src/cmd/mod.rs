//! One module per subcommand.

pub mod analyze;
pub mod bench;
pub mod run;
