//! Encoding the compared columns as order-preserving keys.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::{Array, ArrayRef, AsArray};
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

/// One batch's column `index` cast to `to` (no copy when it already is
/// `to`); an error names the column.
fn cast(
    table: &TableData,
    batch: usize,
    index: usize,
    to: &DataType,
) -> Result<ArrayRef, SourceError> {
    let strict = CastOptions { safe: false, ..Default::default() };
    cast_with_options(table.batches[batch].column(index), to, &strict).map_err(|e| {
        SourceError::Encode {
            column: table.arrow_schema.field(index).name().clone(),
            row: 0,
            message: format!("cannot compare as {to}: {e}"),
        }
    })
}

/// Whether [`string_cells`] reads arrays of type `t` in place.
fn reads_in_place(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, value) => reads_in_place(value),
        _ => false,
    }
}

/// Appends each cell of `array` to `out` as `intern` numbers its string,
/// reading every string encoding a producer sends (Utf8, pandas'
/// LargeUtf8, Polars' Utf8View, categoricals' dictionaries of these) from
/// the producer's own buffers: a table from Python is never copied (issue
/// 51). A dictionary's values are interned only where a key uses them, so
/// every encoding of a table gets the same codes.
fn string_cells<'a>(
    array: &'a dyn Array,
    intern: &mut impl FnMut(&'a str) -> u32,
    out: &mut Vec<Option<u32>>,
) {
    match array.as_any_dictionary_opt() {
        Some(dictionary) => {
            // The values once (few: the distinct strings), not per key.
            let values: Vec<Option<&'a str>> = flat_strings(dictionary.values().as_ref()).collect();
            let keys = dictionary.keys();
            let cells = dictionary.normalized_keys().into_iter().enumerate();
            // A null key's normalized value is arbitrary: test it first.
            out.extend(cells.map(|(row, k)| {
                if keys.is_null(row) { None } else { values[k].map(&mut *intern) }
            }));
        }
        None => out.extend(flat_strings(array).map(|v| v.map(&mut *intern))),
    }
}

/// The cells of a Utf8, LargeUtf8 or Utf8View array, where they are.
fn flat_strings<'a>(array: &'a dyn Array) -> Box<dyn Iterator<Item = Option<&'a str>> + 'a> {
    match array.data_type() {
        DataType::Utf8 => Box::new(array.as_string::<i32>().iter()),
        DataType::LargeUtf8 => Box::new(array.as_string::<i64>().iter()),
        DataType::Utf8View => Box::new(array.as_string_view().iter()),
        t => unreachable!("{t} is cast to Utf8 before"),
    }
}

/// The string columns `indices` and the constraints' string constants in
/// one dictionary: each distinct string once (hashed), then ranked by one
/// sort of the distinct values, so codes compare like the strings.
fn string_columns(
    table: &TableData,
    indices: &[usize],
    constraints: &[BoundConstraint],
) -> Result<StringKeys, SourceError> {
    // Each column's batches, shared with the table (no copy) unless of a
    // type read through a cast.
    let arrays: Vec<Vec<ArrayRef>> = indices
        .iter()
        .map(|&i| {
            (0..table.batches.len())
                .map(|b| match table.batches[b].column(i) {
                    a if reads_in_place(a.data_type()) => Ok(a.clone()),
                    _ => cast(table, b, i, &DataType::Utf8),
                })
                .collect::<Result<_, _>>()
        })
        .collect::<Result<_, _>>()?;
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
            let mut ids = Vec::with_capacity(table.rows as usize);
            arrays.iter().for_each(|a| string_cells(a.as_ref(), &mut intern, &mut ids));
            ids
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

/// A numeric column's order-preserving keys, read batch by batch: a batch
/// of another width is cast alone, so no copy of the column is ever held.
fn numeric_column(
    table: &TableData,
    (index, domain): (usize, Domain),
) -> Result<KeyColumn, SourceError> {
    let to = match domain {
        Domain::Int => DataType::Int64,
        Domain::Float => DataType::Float64,
        Domain::Str => unreachable!("strings are keyed together"),
    };
    let mut failed = None;
    let arrays = (0..table.batches.len())
        .map_while(|b| cast(table, b, index, &to).map_err(|e| failed = Some(e)).ok());
    let cells = arrays.flat_map(|a| -> Vec<Option<u64>> {
        match domain {
            Domain::Int => a.as_primitive::<Int64Type>().iter().map(|v| v.map(int_key)).collect(),
            _ => a.as_primitive::<Float64Type>().iter().map(|v| v.map(float_key)).collect(),
        }
    });
    let keys = KeyColumn::from_keys(cells);
    match failed {
        Some(e) => Err(e),
        None => {
            debug_assert_eq!(keys.len(), table.rows as usize);
            Ok(keys)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        ArrayRef, AsArray, Float64Array, Int64Array, RecordBatchIterator, StringArray,
    };
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

    /// A dictionary read in place gets the codes its strings get as Utf8:
    /// values no key uses (a Polars categorical's whole category list) are
    /// not in the dictionary, and a null key or a null value is NULL.
    #[test]
    fn dictionaries_are_coded_by_the_values_their_keys_use() {
        use arrow::array::{DictionaryArray, Int32Array};
        let want = table([DataType::Int64, DataType::Utf8, DataType::Float64, DataType::Int64]);
        let city = want.batches.iter().map(|b| b.column(1).as_string::<i32>().iter());
        let cells: Vec<Option<&str>> = city.flatten().collect();
        // Values: the distinct cities, then unused strings ranking first and
        // last, then a null value that the NULL cells' keys point at half
        // the time (the other half: a null key).
        let mut values: Vec<Option<&str>> = cells.iter().filter(|c| c.is_some()).copied().collect();
        values.sort_unstable();
        values.dedup();
        values.extend([Some("!unused"), Some("~unused"), None]);
        let null_value = values.len() as i32 - 1;
        let keys = cells.iter().enumerate().map(|(row, cell)| match cell {
            Some(c) => Some(values.iter().position(|v| *v == Some(c)).unwrap() as i32),
            None => (row % 2 == 0).then_some(null_value),
        });
        let dictionary =
            DictionaryArray::new(Int32Array::from_iter(keys), Arc::new(StringArray::from(values)));
        let mut columns: Vec<ArrayRef> = columns();
        columns[1] = Arc::new(dictionary);
        let names = ["Zip", "City", "Rate", "Salary"];
        let fields: Vec<Field> = names
            .iter()
            .zip(&columns)
            .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let got = read_batches("memory", RecordBatchIterator::new([Ok(batch)], schema)).unwrap();
        assert!(encoded(&got) == encoded(&want));
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
