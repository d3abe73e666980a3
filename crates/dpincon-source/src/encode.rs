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
