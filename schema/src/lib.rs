//! The export tables of a study (`docs/exports.md`, the contract between the coordinator,
//! `clowder mutate-study` and the analysis): each table's columns with their types, defined
//! once in [`tables`], and the one writer of their files, [`TableWriter`] (a CSV and a
//! Parquet file with the same columns and types).
//!
//! Everything that writes an export (the coordinator's `clowder export`, `clowder
//! mutate-study`, the analysis' synthetic studies) writes through [`TableWriter`] with a
//! [`Table`] from here, and the analysis' loader takes the type of every column it reads from
//! here, so a writer and the loader cannot disagree on a column's name or type.

#![warn(missing_docs)]

pub mod tables;
mod writer;

pub use tables::{
    CONTEXT, DETERMINISM_FAILURES, JUDGED, MUTANTS, MUTATION_FAILURES, PROVENANCE, REPLAYS, RUNS, TESTS, TIMELINE,
};
pub use writer::{Formats, ParseError, TableWriter, Value, WriteError, float_text};

/// Type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 string.
    Str,
    /// Unsigned 64-bit integer.
    U64,
    /// Unsigned 32-bit integer.
    U32,
    /// 64-bit float (written with full round-trip precision in CSV).
    F64,
    /// Boolean (`true`/`false` in CSV).
    Bool,
}

/// A column: name, type, and whether it may be empty (null).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// Header / field name.
    pub name: &'static str,
    /// Type.
    pub kind: Kind,
    /// May be null (empty in CSV).
    pub nullable: bool,
}

/// Shorthand for a non-null column.
pub const fn col(name: &'static str, kind: Kind) -> Column {
    Column { name, kind, nullable: false }
}

/// Shorthand for a nullable column.
pub const fn opt(name: &'static str, kind: Kind) -> Column {
    Column { name, kind, nullable: true }
}

/// An export table: its file stem (`runs` → `runs.csv`, `runs.parquet`) and its columns in
/// file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    /// File stem.
    pub name: &'static str,
    /// Columns in file order.
    pub columns: &'static [Column],
}

impl Table {
    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&'static Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// Position of the column called `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}
