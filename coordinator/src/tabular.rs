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

/// Rows per Parquet row group.
const ROW_GROUP: usize = 1 << 16;

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
#[derive(Debug, Clone, Copy)]
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

impl Value {
    /// The cell a CSV field of a `kind` column holds (empty: null), as the exports write
    /// them; for tools that rewrite an export (`clowder mutate-study`).
    pub fn parse(kind: Kind, text: &str) -> Result<Value, String> {
        if text.is_empty() && kind != Kind::Str {
            return Ok(Value::Null);
        }
        let bad = |e: &dyn std::fmt::Display| format!("{text:?} is not a {kind:?}: {e}");
        Ok(match kind {
            Kind::Str => Value::Str(text.to_string()),
            Kind::U64 | Kind::U32 => Value::U(text.parse().map_err(|e| bad(&e))?),
            Kind::F64 => Value::F(text.parse().map_err(|e| bad(&e))?),
            Kind::Bool => Value::B(text.parse().map_err(|e| bad(&e))?),
        })
    }
}

/// CSV text of a float: shortest round-trip form, always with a `.` or an
/// exponent so that readers infer a float column.
pub fn float_text(v: f64) -> String {
    format!("{v:?}")
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

/// Writes `<name>.csv` and `<name>.parquet` in a folder (via temporary files
/// renamed at the end, so readers never see half a file).
pub struct TableWriter {
    name: String,
    columns: &'static [Column],
    csv: csv::Writer<BufWriter<File>>,
    pq: SerializedFileWriter<BufWriter<File>>,
    bufs: Vec<ColBuf>,
    rows_buffered: usize,
    renames: Vec<(PathBuf, PathBuf)>,
    record: Vec<String>,
}

fn io(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

fn schema(columns: &[Column]) -> Result<Type, String> {
    let mut fields = Vec::with_capacity(columns.len());
    for c in columns {
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
            .map_err(|e| format!("column {}: {e}", c.name))?;
        fields.push(Arc::new(t));
    }
    Type::group_type_builder("schema").with_fields(fields).build().map_err(|e| e.to_string())
}

impl TableWriter {
    /// Starts `<dir>/<name>.csv` and `<dir>/<name>.parquet`.
    pub fn create(dir: &Path, name: &str, columns: &'static [Column]) -> Result<Self, String> {
        let csv_path = dir.join(format!("{name}.csv"));
        let pq_path = dir.join(format!("{name}.parquet"));
        let csv_tmp = dir.join(format!(".{name}.csv.tmp"));
        let pq_tmp = dir.join(format!(".{name}.parquet.tmp"));
        let f = File::create(&csv_tmp).map_err(|e| io(&csv_tmp, e))?;
        let mut csv = csv::Writer::from_writer(BufWriter::new(f));
        csv.write_record(columns.iter().map(|c| c.name)).map_err(|e| io(&csv_tmp, e))?;
        let props =
            WriterProperties::builder().set_compression(Compression::SNAPPY).set_created_by("clowder".into()).build();
        let f = File::create(&pq_tmp).map_err(|e| io(&pq_tmp, e))?;
        let pq = SerializedFileWriter::new(BufWriter::new(f), Arc::new(schema(columns)?), Arc::new(props))
            .map_err(|e| io(&pq_tmp, e))?;
        let bufs = columns
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
        Ok(Self {
            name: name.to_string(),
            columns,
            csv,
            pq,
            bufs,
            rows_buffered: 0,
            renames: vec![(csv_tmp, csv_path), (pq_tmp, pq_path)],
            record: Vec::with_capacity(columns.len()),
        })
    }

    /// Appends a row (one value per column, in column order).
    pub fn push(&mut self, row: &[Value]) -> Result<(), String> {
        if row.len() != self.columns.len() {
            return Err(format!("{}: row has {} values for {} columns", self.name, row.len(), self.columns.len()));
        }
        self.record.clear();
        for ((c, v), b) in self.columns.iter().zip(row).zip(&mut self.bufs) {
            let bad = || format!("{}: column {} cannot hold {v:?}", self.name, c.name);
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
        self.csv.write_record(&self.record).map_err(|e| format!("{}.csv: {e}", self.name))?;
        self.rows_buffered += 1;
        if self.rows_buffered >= ROW_GROUP {
            self.flush_group()?;
        }
        Ok(())
    }

    fn flush_group(&mut self) -> Result<(), String> {
        if self.rows_buffered == 0 {
            return Ok(());
        }
        let name = self.name.clone();
        let err = |e: parquet::errors::ParquetError| format!("{name}.parquet: {e}");
        let mut rg = self.pq.next_row_group().map_err(err)?;
        for (c, b) in self.columns.iter().zip(&mut self.bufs) {
            let Some(mut cw) = rg.next_column().map_err(err)? else {
                return Err(format!("{}.parquet: schema has fewer columns than the table", self.name));
            };
            let def = c.nullable.then_some(b.def.as_slice());
            let written = match (cw.untyped(), &mut b.values) {
                (ColumnWriter::ByteArrayColumnWriter(w), Buf::Str(v)) => w.write_batch(v, def, None),
                (ColumnWriter::Int64ColumnWriter(w), Buf::I64(v)) => w.write_batch(v, def, None),
                (ColumnWriter::Int32ColumnWriter(w), Buf::I32(v)) => w.write_batch(v, def, None),
                (ColumnWriter::DoubleColumnWriter(w), Buf::F64(v)) => w.write_batch(v, def, None),
                (ColumnWriter::BoolColumnWriter(w), Buf::Bool(v)) => w.write_batch(v, def, None),
                _ => return Err(format!("{}.parquet: column {} has an unexpected writer", self.name, c.name)),
            };
            written.map_err(err)?;
            cw.close().map_err(err)?;
            b.def.clear();
            match &mut b.values {
                Buf::Str(v) => v.clear(),
                Buf::I64(v) => v.clear(),
                Buf::I32(v) => v.clear(),
                Buf::F64(v) => v.clear(),
                Buf::Bool(v) => v.clear(),
            }
        }
        rg.close().map_err(err)?;
        self.rows_buffered = 0;
        Ok(())
    }

    /// Finishes both files and moves them into place; returns their paths.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, String> {
        self.flush_group()?;
        let name = self.name.clone();
        let w = self.csv.into_inner().map_err(|e| format!("{name}.csv: {e}"))?;
        w.into_inner().map_err(|e| format!("{name}.csv: {e}"))?.sync_all().map_err(|e| format!("{name}.csv: {e}"))?;
        let w = self.pq.into_inner().map_err(|e| format!("{name}.parquet: {e}"))?;
        w.into_inner()
            .map_err(|e| format!("{name}.parquet: {e}"))?
            .sync_all()
            .map_err(|e| format!("{name}.parquet: {e}"))?;
        let mut out = Vec::new();
        for (tmp, dst) in self.renames {
            std::fs::rename(&tmp, &dst).map_err(|e| io(&dst, e))?;
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

    const COLS: &[Column] =
        &[col("name", Kind::Str), col("n", Kind::U64), opt("x", Kind::F64), opt("k", Kind::U32), col("b", Kind::Bool)];

    #[test]
    fn csv_and_parquet_carry_the_same_rows() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = TableWriter::create(dir.path(), "t", COLS).unwrap();
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
            let mut w = TableWriter::create(dir, "t", COLS).unwrap();
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
}
