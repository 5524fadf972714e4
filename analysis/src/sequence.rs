//! Event-sequence coverage of the suites (issue 20; the criteria are defined in
//! `docs/testgen.md` "Sequence coverage", the columns in `docs/exports.md`), at the path it has
//! always had: the numbers are computed in `compute::sequence`, the tables and the `report.md`
//! section built in `report::sequence`. This module only re-exports both, so that neither
//! imports the other.

pub use crate::compute::sequence::{
    CRITERIA, CriterionComparisons, MutationCorrelation, SequenceAnalysis, SequenceRow,
};
pub use crate::report::sequence::{SEQ_LABELS, SequenceTables, tables};
