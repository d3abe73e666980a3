//! Encoding the compared columns as order-preserving keys.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::{ArrayRef, AsArray};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, Float64Type, Int64Type};
use dpincon_constraints::{BoundConstraint, Domain};
use dpincon_detect::{KeyColumn, Relation, float_key, int_key, required_columns, string_constants};

use crate::{SourceError, TableData};

/// Encodes every (column, domain) the constraints compare as order-preserving
/// keys, on up to `threads` threads. Strings share one sorted dictionary,
/// constants included, so string codes compare like the strings
/// (lexicographically, SPEC §1): one job on one thread, while the others
/// key the numeric columns, a column each. Slots are numbered as the
/// columns are listed (strings first), whatever `threads`.
pub fn encode(
    table: &TableData,
    constraints: &[BoundConstraint],
    threads: usize,
) -> Result<Relation, SourceError> {
    let required = required_columns(constraints);
    let strings: Vec<usize> =
        required.iter().filter(|(_, d)| *d == Domain::Str).map(|&(i, _)| i).collect();
    let numeric: Vec<(usize, Domain)> =
        required.iter().copied().filter(|(_, d)| *d != Domain::Str).collect();
    // Job 0 is the strings; job k > 0 is numeric column k − 1.
    let jobs = 1 + numeric.len();
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let job = next.fetch_add(1, Ordering::Relaxed);
            if job >= jobs {
                break done;
            }
            let keyed = match job {
                0 => string_columns(table, &strings, constraints).map(Keyed::Strings),
                k => numeric_column(table, numeric[k - 1]).map(Keyed::Numeric),
            };
            done.push((job, keyed));
        }
    };
    let mut done: Vec<(usize, Result<Keyed, SourceError>)> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads.clamp(1, jobs)).map(|_| scope.spawn(work)).collect();
        let mut done = work();
        for h in helpers {
            done.extend(h.join().expect("encoding thread panicked"));
        }
        done
    });
    // The first error in column order, as one thread would have met it.
    done.sort_unstable_by_key(|&(job, _)| job);
    let mut relation = Relation::new(table.rows);
    for (job, keyed) in done {
        match keyed? {
            Keyed::Strings((codes, columns)) => {
                codes.into_iter().for_each(|(s, code)| relation.insert_string_code(s, code));
                for (&index, keys) in strings.iter().zip(columns) {
                    relation.insert_column(index, Domain::Str, keys);
                }
            }
            Keyed::Numeric(keys) => {
                let (index, domain) = numeric[job - 1];
                relation.insert_column(index, domain, keys);
            }
        }
    }
    Ok(relation)
}

/// What one encoding job yields.
enum Keyed {
    Strings(StringKeys),
    Numeric(KeyColumn),
}

/// The string constants' codes, and the string columns' keys.
type StringKeys = (Vec<(String, u64)>, Vec<KeyColumn>);

/// `index` cast to `to`, batch by batch; an error names the column.
fn cast(table: &TableData, index: usize, to: &DataType) -> Result<Vec<ArrayRef>, SourceError> {
    let strict = CastOptions { safe: false, ..Default::default() };
    table
        .batches
        .iter()
        .map(|b| cast_with_options(b.column(index), to, &strict))
        .collect::<Result<_, _>>()
        .map_err(|e| SourceError::Encode {
            column: table.arrow_schema.field(index).name().clone(),
            row: 0,
            message: format!("cannot compare as {to}: {e}"),
        })
}

/// The string columns `indices` and the constraints' string constants in
/// one dictionary: each distinct string once (hashed), then ranked by one
/// sort of the distinct values, so codes compare like the strings.
fn string_columns(
    table: &TableData,
    indices: &[usize],
    constraints: &[BoundConstraint],
) -> Result<StringKeys, SourceError> {
    let arrays: Vec<Vec<ArrayRef>> =
        indices.iter().map(|&i| cast(table, i, &DataType::Utf8)).collect::<Result<_, _>>()?;
    let constants = string_constants(constraints);
    let mut ids: HashMap<&str, u32, foldhash::fast::RandomState> = HashMap::default();
    let mut distinct: Vec<&str> = Vec::new();
    let mut intern = |s| {
        *ids.entry(s).or_insert_with(|| {
            distinct.push(s);
            distinct.len() as u32 - 1
        })
    };
    let constant_ids: Vec<u32> = constants.iter().map(|s| intern(s.as_str())).collect();
    let column_ids: Vec<Vec<Option<u32>>> = arrays
        .iter()
        .map(|arrays| {
            let cells = arrays.iter().flat_map(|a| a.as_string::<i32>().iter());
            cells.map(|v| v.map(&mut intern)).collect()
        })
        .collect();
    let mut order: Vec<u32> = (0..distinct.len() as u32).collect();
    order.sort_unstable_by_key(|&id| distinct[id as usize]);
    let mut rank = vec![0u64; distinct.len()];
    for (code, &id) in order.iter().enumerate() {
        rank[id as usize] = code as u64;
    }
    let codes = constants.iter().zip(constant_ids).map(|(s, id)| (s.clone(), rank[id as usize]));
    let columns = column_ids
        .into_iter()
        .map(|ids| KeyColumn::from_keys(ids.into_iter().map(|id| id.map(|id| rank[id as usize]))))
        .collect();
    Ok((codes.collect(), columns))
}

/// A numeric column's order-preserving keys.
fn numeric_column(
    table: &TableData,
    (index, domain): (usize, Domain),
) -> Result<KeyColumn, SourceError> {
    let keys = match domain {
        Domain::Int => {
            let arrays = cast(table, index, &DataType::Int64)?;
            KeyColumn::from_keys(
                arrays
                    .iter()
                    .flat_map(|a| a.as_primitive::<Int64Type>().iter().map(|v| v.map(int_key))),
            )
        }
        Domain::Float => {
            let arrays = cast(table, index, &DataType::Float64)?;
            KeyColumn::from_keys(
                arrays
                    .iter()
                    .flat_map(|a| a.as_primitive::<Float64Type>().iter().map(|v| v.map(float_key))),
            )
        }
        Domain::Str => unreachable!("strings are keyed together"),
    };
    debug_assert_eq!(keys.len(), table.rows as usize);
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatchIterator, StringArray};
    use arrow::compute::cast;
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::record_batch::RecordBatch;
    use dpincon_constraints::parse_constraints;
    use dpincon_detect::Relation;

    use crate::{TableData, prepare_detection, read_batches};

    type AnyError = Box<dyn std::error::Error>;

    const CONSTRAINTS: &str = "FD: Zip -> City\n\
        not(t1.City=t2.City & t1.Salary>t2.Salary & t1.Rate<t2.Rate)\n\
        not(t1.City=\"c3\" & t1.Zip=t2.Zip & t1.Rate>t2.Rate)\n";

    /// Zip (int), City (string), Rate (float), Salary (int), with NULLs,
    /// as the CSV reader gives them: Int64, Utf8, Float64, Int64.
    fn columns() -> Vec<ArrayRef> {
        let rows = 0..300i64;
        vec![
            Arc::new(Int64Array::from_iter(rows.clone().map(|i| (i % 7 != 0).then_some(i % 13)))),
            Arc::new(StringArray::from_iter(
                rows.clone().map(|i| (i % 5 != 0).then(|| format!("c{}", i % 11))),
            )),
            // Halves: exact in every float width.
            Arc::new(Float64Array::from_iter(rows.clone().map(|i| Some((i % 17) as f64 / 2.0)))),
            Arc::new(Int64Array::from_iter(rows.map(|i| Some(i * 3 % 101)))),
        ]
    }

    /// The table with its columns cast to `types`, in three batches, read
    /// as a stream is.
    fn table(types: [DataType; 4]) -> TableData {
        let columns: Vec<ArrayRef> =
            columns().iter().zip(&types).map(|(c, t)| cast(c, t).unwrap()).collect();
        let names = ["Zip", "City", "Rate", "Salary"];
        let fields: Vec<Field> =
            names.iter().zip(&types).map(|(n, t)| Field::new(*n, t.clone(), true)).collect();
        let schema = Arc::new(Schema::new(fields));
        let whole = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let batches = [(0, 100), (100, 0), (100, 200)].map(|(at, len)| Ok(whole.slice(at, len)));
        read_batches("memory", RecordBatchIterator::new(batches, schema)).unwrap()
    }

    fn encoded(table: &TableData) -> Relation {
        let parsed = parse_constraints(CONSTRAINTS).unwrap();
        prepare_detection::<AnyError>(&parsed, table, |_| true, 2, |e| e.into()).unwrap().relation
    }

    fn dictionary(key: DataType, value: DataType) -> DataType {
        DataType::Dictionary(Box::new(key), Box::new(value))
    }

    /// Every string encoding (Polars sends Utf8View, pandas large_string,
    /// categoricals are dictionaries) and every integer and float width
    /// encode to the same keys as the CSV reader's Utf8, Int64 and Float64.
    #[test]
    fn every_string_encoding_and_number_width_encodes_alike() {
        use DataType::*;
        let want = table([Int64, Utf8, Float64, Int64]);
        assert_eq!(want.rows, 300);
        let want_relation = encoded(&want);
        let strings = [
            LargeUtf8,
            Utf8View,
            dictionary(Int32, Utf8),
            dictionary(UInt32, Utf8View),
            dictionary(Int8, LargeUtf8),
            dictionary(UInt16, Utf8),
            dictionary(Int64, LargeUtf8),
        ];
        for city in strings {
            let got = table([Int64, city.clone(), Float64, Int64]);
            assert_eq!(got.schema().columns, want.schema().columns, "{city}");
            assert!(encoded(&got) == want_relation, "City as {city}");
        }
        let ints = [Int8, Int16, Int32, UInt8, UInt16, UInt32, UInt64];
        let floats = [Float16, Float32, Float64];
        for (int, float) in ints.iter().zip(floats.iter().cycle()) {
            let got = table([int.clone(), Utf8View, float.clone(), int.clone()]);
            assert_eq!(got.schema().columns, want.schema().columns, "{int} {float}");
            assert!(encoded(&got) == want_relation, "{int} and {float}");
        }
    }

    /// A stream batch of other column types than the stream's schema is
    /// refused, and an empty stream is a table of no row.
    #[test]
    fn a_stream_keeps_its_schema() {
        let schema = Arc::new(Schema::new(vec![Field::new("A", DataType::Int64, true)]));
        let other = Arc::new(Schema::new(vec![Field::new("A", DataType::Utf8, true)]));
        let column: ArrayRef = Arc::new(StringArray::from(vec!["x"]));
        let batch = RecordBatch::try_new(other, vec![column]).unwrap();
        let stream = RecordBatchIterator::new([Ok(batch)], schema.clone());
        let err = read_batches("memory", stream).unwrap_err().to_string();
        assert!(err.contains("'memory'") && err.contains("batch 0"), "{err}");
        let empty = read_batches("memory", RecordBatchIterator::new([], schema)).unwrap();
        assert_eq!((empty.rows, empty.batches.len()), (0, 0));
    }
}
