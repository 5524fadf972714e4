//! One table, two files: a CSV and a Parquet file with the same columns and
//! types, written row by row (Parquet buffers one row group at a time).
//!
//! Parquet goes through the `parquet` crate's low-level column writers (no
//! arrow, no polars): the exports are a handful of flat tables of strings,
//! integers, floats and booleans, which is all this needs. Output is
//! deterministic: no timestamps, fixed `created_by`, fixed row-group size.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use crate::{Kind, Table};

/// Rows per Parquet row group.
const ROW_GROUP: usize = 1 << 16;

/// A cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// String.
    Str(String),
    /// Unsigned integer (U64 or U32 columns).
    U(u64),
    /// Float.
    F(f64),
    /// Boolean.
    B(bool),
    /// Null.
    Null,
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(s)
    }
}
impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::U(v)
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::U(u64::from(v))
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::F(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::B(v)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map(Into::into).unwrap_or(Value::Null)
    }
}

/// A CSV field that is not a value of its column's type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{text:?} is not a {kind:?}: {reason}")]
pub struct ParseError {
    /// The field.
    pub text: String,
    /// The column's type.
    pub kind: Kind,
    /// Why not.
    pub reason: String,
}

impl Value {
    /// The cell a CSV field of a `kind` column holds (empty: null), as the exports write
    /// them; for tools that rewrite an export (`clowder mutate-study`).
    pub fn parse(kind: Kind, text: &str) -> Result<Value, ParseError> {
        if text.is_empty() && kind != Kind::Str {
            return Ok(Value::Null);
        }
        let bad = |e: &dyn std::fmt::Display| ParseError { text: text.to_string(), kind, reason: e.to_string() };
        Ok(match kind {
            Kind::Str => Value::Str(text.to_string()),
            Kind::U64 | Kind::U32 => Value::U(text.parse().map_err(|e| bad(&e))?),
            Kind::F64 => Value::F(text.parse().map_err(|e| bad(&e))?),
            Kind::Bool => Value::B(text.parse().map_err(|e| bad(&e))?),
        })
    }
}

impl Table {
    /// A row of this table from `(column, value)` cells in any order; columns not named are
    /// null (which [`TableWriter::push`] refuses for a non-null column). For writers that fill
    /// a row by name rather than by position.
    pub fn row<'a>(&self, cells: impl IntoIterator<Item = (&'a str, Value)>) -> Result<Vec<Value>, WriteError> {
        let mut row = vec![Value::Null; self.columns.len()];
        for (name, v) in cells {
            let i = self
                .position(name)
                .ok_or_else(|| WriteError::Row { table: self.name.to_string(), msg: format!("no column {name}") })?;
            row[i] = v;
        }
        Ok(row)
    }
}

/// CSV text of a float: shortest round-trip form, always with a `.` or an
/// exponent so that readers infer a float column.
pub fn float_text(v: f64) -> String {
    format!("{v:?}")
}

/// Why a table could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Creating, syncing or renaming a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Writing the CSV file.
    #[error("{table}.csv: {source}")]
    Csv {
        /// Table name.
        table: String,
        /// The cause.
        #[source]
        source: csv::Error,
    },
    /// Writing the Parquet file.
    #[error("{table}.parquet: {source}")]
    Parquet {
        /// Table name.
        table: String,
        /// The cause.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// A row that does not fit the table's columns (a bug in the caller).
    #[error("{table}: {msg}")]
    Row {
        /// Table name.
        table: String,
        /// What does not fit.
        msg: String,
    },
}

/// Which files a [`TableWriter`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formats {
    /// `<name>.csv` and `<name>.parquet` (the exports).
    CsvAndParquet,
    /// `<name>.csv` only (synthetic studies whose Parquet form a benchmark makes itself).
    CsvOnly,
}

enum Buf {
    Str(Vec<ByteArray>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
}

struct ColBuf {
    values: Buf,
    def: Vec<i16>,
}

/// Writes `<name>.csv` and `<name>.parquet` of a [`Table`] in a folder (via temporary files
/// renamed at the end, so readers never see half a file).
pub struct TableWriter {
    table: Table,
    csv: csv::Writer<BufWriter<File>>,
    pq: Option<SerializedFileWriter<BufWriter<File>>>,
    bufs: Vec<ColBuf>,
    rows_buffered: usize,
    renames: Vec<(PathBuf, PathBuf)>,
    record: Vec<String>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
    move |source| WriteError::Io { path: path.to_path_buf(), source }
}

fn schema(table: &Table) -> Result<Type, WriteError> {
    let pq_err = |source| WriteError::Parquet { table: table.name.to_string(), source };
    let mut fields = Vec::with_capacity(table.columns.len());
    for c in table.columns {
        let (physical, logical) = match c.kind {
            Kind::Str => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
            Kind::U64 => (PhysicalType::INT64, Some(LogicalType::integer(64, false))),
            Kind::U32 => (PhysicalType::INT32, Some(LogicalType::integer(32, false))),
            Kind::F64 => (PhysicalType::DOUBLE, None),
            Kind::Bool => (PhysicalType::BOOLEAN, None),
        };
        let t = Type::primitive_type_builder(c.name, physical)
            .with_repetition(if c.nullable { Repetition::OPTIONAL } else { Repetition::REQUIRED })
            .with_logical_type(logical)
            .build()
            .map_err(pq_err)?;
        fields.push(Arc::new(t));
    }
    Type::group_type_builder("schema").with_fields(fields).build().map_err(pq_err)
}

impl TableWriter {
    /// Starts `<dir>/<name>.csv` and `<dir>/<name>.parquet`.
    pub fn create(dir: &Path, table: Table) -> Result<Self, WriteError> {
        Self::create_as(dir, table, Formats::CsvAndParquet)
    }

    /// Starts the files of `table` in `dir` that `formats` names.
    pub fn create_as(dir: &Path, table: Table, formats: Formats) -> Result<Self, WriteError> {
        let name = table.name;
        let csv_path = dir.join(format!("{name}.csv"));
        let csv_tmp = dir.join(format!(".{name}.csv.tmp"));
        let f = File::create(&csv_tmp).map_err(io(&csv_tmp))?;
        let mut csv = csv::Writer::from_writer(BufWriter::new(f));
        csv.write_record(table.columns.iter().map(|c| c.name))
            .map_err(|source| WriteError::Csv { table: name.to_string(), source })?;
        let mut renames = vec![(csv_tmp, csv_path)];
        let pq = match formats {
            Formats::CsvOnly => None,
            Formats::CsvAndParquet => {
                let pq_path = dir.join(format!("{name}.parquet"));
                let pq_tmp = dir.join(format!(".{name}.parquet.tmp"));
                let props = WriterProperties::builder()
                    .set_compression(Compression::SNAPPY)
                    .set_created_by("clowder".into())
                    .build();
                let f = File::create(&pq_tmp).map_err(io(&pq_tmp))?;
                let w = SerializedFileWriter::new(BufWriter::new(f), Arc::new(schema(&table)?), Arc::new(props))
                    .map_err(|source| WriteError::Parquet { table: name.to_string(), source })?;
                renames.push((pq_tmp, pq_path));
                Some(w)
            }
        };
        let bufs = table
            .columns
            .iter()
            .map(|c| ColBuf {
                values: match c.kind {
                    Kind::Str => Buf::Str(Vec::new()),
                    Kind::U64 => Buf::I64(Vec::new()),
                    Kind::U32 => Buf::I32(Vec::new()),
                    Kind::F64 => Buf::F64(Vec::new()),
                    Kind::Bool => Buf::Bool(Vec::new()),
                },
                def: Vec::new(),
            })
            .collect();
        Ok(Self { table, csv, pq, bufs, rows_buffered: 0, renames, record: Vec::with_capacity(table.columns.len()) })
    }

    fn row_error(&self, msg: String) -> WriteError {
        WriteError::Row { table: self.table.name.to_string(), msg }
    }

    fn pq_error(&self) -> impl Fn(parquet::errors::ParquetError) -> WriteError + use<> {
        let table = self.table.name.to_string();
        move |source| WriteError::Parquet { table: table.clone(), source }
    }

    /// Appends a row (one value per column, in column order).
    pub fn push(&mut self, row: &[Value]) -> Result<(), WriteError> {
        let columns = self.table.columns;
        if row.len() != columns.len() {
            return Err(self.row_error(format!("row has {} values for {} columns", row.len(), columns.len())));
        }
        self.record.clear();
        for (i, (c, v)) in columns.iter().zip(row).enumerate() {
            let bad = || WriteError::Row {
                table: self.table.name.to_string(),
                msg: format!("column {} cannot hold {v:?}", c.name),
            };
            let b = &mut self.bufs[i];
            if matches!(v, Value::Null) {
                if !c.nullable {
                    return Err(bad());
                }
                self.record.push(String::new());
                b.def.push(0);
                continue;
            }
            if c.nullable {
                b.def.push(1);
            }
            match (&mut b.values, v) {
                (Buf::Str(out), Value::Str(s)) => {
                    self.record.push(s.clone());
                    out.push(ByteArray::from(s.as_str()));
                }
                (Buf::I64(out), Value::U(u)) => {
                    self.record.push(u.to_string());
                    // Unsigned 64-bit: Parquet stores the bit pattern.
                    out.push(*u as i64);
                }
                (Buf::I32(out), Value::U(u)) => {
                    let u32v = u32::try_from(*u).map_err(|_| bad())?;
                    self.record.push(u32v.to_string());
                    out.push(u32v as i32);
                }
                (Buf::F64(out), Value::F(f)) => {
                    self.record.push(float_text(*f));
                    out.push(*f);
                }
                (Buf::Bool(out), Value::B(x)) => {
                    self.record.push(x.to_string());
                    out.push(*x);
                }
                _ => return Err(bad()),
            }
        }
        self.csv
            .write_record(&self.record)
            .map_err(|source| WriteError::Csv { table: self.table.name.to_string(), source })?;
        self.rows_buffered += 1;
        if self.rows_buffered >= ROW_GROUP {
            self.flush_group()?;
        }
        Ok(())
    }

    fn flush_group(&mut self) -> Result<(), WriteError> {
        if self.rows_buffered == 0 {
            return Ok(());
        }
        let err = self.pq_error();
        if let Some(pq) = self.pq.as_mut() {
            let mut rg = pq.next_row_group().map_err(&err)?;
            for (c, b) in self.table.columns.iter().zip(&mut self.bufs) {
                let Some(mut cw) = rg.next_column().map_err(&err)? else {
                    return Err(WriteError::Row {
                        table: self.table.name.to_string(),
                        msg: "the Parquet schema has fewer columns than the table".into(),
                    });
                };
                let def = c.nullable.then_some(b.def.as_slice());
                let written = match (cw.untyped(), &mut b.values) {
                    (ColumnWriter::ByteArrayColumnWriter(w), Buf::Str(v)) => w.write_batch(v, def, None),
                    (ColumnWriter::Int64ColumnWriter(w), Buf::I64(v)) => w.write_batch(v, def, None),
                    (ColumnWriter::Int32ColumnWriter(w), Buf::I32(v)) => w.write_batch(v, def, None),
                    (ColumnWriter::DoubleColumnWriter(w), Buf::F64(v)) => w.write_batch(v, def, None),
                    (ColumnWriter::BoolColumnWriter(w), Buf::Bool(v)) => w.write_batch(v, def, None),
                    _ => {
                        return Err(WriteError::Row {
                            table: self.table.name.to_string(),
                            msg: format!("column {} has an unexpected Parquet writer", c.name),
                        });
                    }
                };
                written.map_err(&err)?;
                cw.close().map_err(&err)?;
            }
            rg.close().map_err(&err)?;
        }
        for b in &mut self.bufs {
            b.def.clear();
            match &mut b.values {
                Buf::Str(v) => v.clear(),
                Buf::I64(v) => v.clear(),
                Buf::I32(v) => v.clear(),
                Buf::F64(v) => v.clear(),
                Buf::Bool(v) => v.clear(),
            }
        }
        self.rows_buffered = 0;
        Ok(())
    }

    /// Finishes the files and moves them into place; returns their paths.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, WriteError> {
        self.flush_group()?;
        let table = self.table.name.to_string();
        let csv_path = self.renames[0].0.clone();
        let w = self.csv.into_inner().map_err(|e| WriteError::Io { path: csv_path.clone(), source: e.into_error() })?;
        w.into_inner()
            .map_err(|e| WriteError::Io { path: csv_path.clone(), source: e.into_error() })?
            .sync_all()
            .map_err(io(&csv_path))?;
        if let Some(pq) = self.pq {
            let pq_path = self.renames.get(1).map(|r| r.0.clone()).unwrap_or_default();
            let w = pq.into_inner().map_err(|source| WriteError::Parquet { table, source })?;
            w.into_inner()
                .map_err(|e| WriteError::Io { path: pq_path.clone(), source: e.into_error() })?
                .sync_all()
                .map_err(io(&pq_path))?;
        }
        let mut out = Vec::new();
        for (tmp, dst) in self.renames {
            std::fs::rename(&tmp, &dst).map_err(io(&dst))?;
            out.push(dst);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    use crate::{col, opt};

    const T: Table = Table {
        name: "t",
        columns: &[
            col("name", Kind::Str),
            col("n", Kind::U64),
            opt("x", Kind::F64),
            opt("k", Kind::U32),
            col("b", Kind::Bool),
        ],
    };

    #[test]
    fn csv_and_parquet_carry_the_same_rows() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = TableWriter::create(dir.path(), T).unwrap();
        w.push(&["a,\"b\"".into(), u64::MAX.into(), 0.1f64.into(), 7u32.into(), true.into()]).unwrap();
        w.push(&["c".into(), 2u64.into(), Value::Null, Value::Null, false.into()]).unwrap();
        assert!(w.push(&["short".into()]).is_err());
        assert!(w.push(&[Value::Null, 1u64.into(), Value::Null, Value::Null, true.into()]).is_err());
        let files = w.finish().unwrap();
        assert_eq!(files.len(), 2);
        let csv = std::fs::read_to_string(dir.path().join("t.csv")).unwrap();
        assert_eq!(csv, "name,n,x,k,b\n\"a,\"\"b\"\"\",18446744073709551615,0.1,7,true\nc,2,,,false\n");
        let r = SerializedFileReader::new(File::open(dir.path().join("t.parquet")).unwrap()).unwrap();
        let rows: Vec<Vec<Field>> = r
            .get_row_iter(None)
            .unwrap()
            .map(|row| row.unwrap().get_column_iter().map(|(_, f)| f.clone()).collect())
            .collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0][0], Field::Str("a,\"b\"".into()));
        assert_eq!(rows[0][1], Field::ULong(u64::MAX));
        assert_eq!(rows[0][2], Field::Double(0.1));
        assert_eq!(rows[0][3], Field::UInt(7));
        assert_eq!(rows[1][2], Field::Null);
        assert_eq!(rows[1][4], Field::Bool(false));
    }

    #[test]
    fn identical_tables_give_identical_bytes() {
        let write = |dir: &Path| {
            let mut w = TableWriter::create(dir, T).unwrap();
            for i in 0..1000u64 {
                w.push(&[format!("r{i}").into(), i.into(), (i as f64 / 3.0).into(), Value::Null, (i % 2 == 0).into()])
                    .unwrap();
            }
            w.finish().unwrap();
            std::fs::read(dir.join("t.parquet")).unwrap()
        };
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        assert_eq!(write(a.path()), write(b.path()));
    }

    #[test]
    fn csv_only_writes_the_same_csv_and_no_parquet() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for (dir, formats) in [(a.path(), Formats::CsvAndParquet), (b.path(), Formats::CsvOnly)] {
            let mut w = TableWriter::create_as(dir, T, formats).unwrap();
            w.push(&["x".into(), 3u64.into(), 1.0f64.into(), Value::Null, true.into()]).unwrap();
            w.finish().unwrap();
        }
        assert_eq!(std::fs::read(a.path().join("t.csv")).unwrap(), std::fs::read(b.path().join("t.csv")).unwrap());
        assert!(a.path().join("t.parquet").is_file() && !b.path().join("t.parquet").exists());
        let left: Vec<_> = std::fs::read_dir(b.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["t.csv"], "no temporary file is left behind");
    }

    #[test]
    fn every_table_writes_a_parquet_schema_with_its_columns() {
        let dir = tempfile::tempdir().unwrap();
        for t in crate::tables::ALL {
            TableWriter::create(dir.path(), t).unwrap().finish().unwrap();
            let r =
                SerializedFileReader::new(File::open(dir.path().join(format!("{}.parquet", t.name))).unwrap()).unwrap();
            let schema = r.metadata().file_metadata().schema_descr_ptr();
            let names: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
            let want: Vec<&str> = t.columns.iter().map(|c| c.name).collect();
            assert_eq!(names, want, "{}", t.name);
            let header = std::fs::read_to_string(dir.path().join(format!("{}.csv", t.name))).unwrap();
            assert_eq!(header, format!("{}\n", want.join(",")), "{}", t.name);
        }
    }
}
