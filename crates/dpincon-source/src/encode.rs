//! Encoding the compared columns as order-preserving keys.

use std::collections::HashMap;

use arrow::array::{ArrayRef, AsArray};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, Float64Type, Int64Type};
use dpincon_constraints::{BoundConstraint, Domain};
use dpincon_detect::{KeyColumn, Relation, float_key, int_key, required_columns, string_constants};

use crate::{SourceError, TableData};

/// Encodes every (column, domain) the constraints compare as order-preserving
/// keys. Strings share one sorted dictionary, constants included, so string
/// codes compare like the strings (lexicographically, SPEC §1).
pub fn encode(table: &TableData, constraints: &[BoundConstraint]) -> Result<Relation, SourceError> {
    let required = required_columns(constraints);
    let mut relation = Relation::new(table.rows);
    let strict = CastOptions { safe: false, ..Default::default() };
    let column_name = |index: usize| table.arrow_schema.field(index).name().clone();
    let cast = |index: usize, to: &DataType| -> Result<Vec<ArrayRef>, SourceError> {
        table
            .batches
            .iter()
            .map(|b| cast_with_options(b.column(index), to, &strict))
            .collect::<Result<_, _>>()
            .map_err(|e| SourceError::Encode {
                column: column_name(index),
                row: 0,
                message: format!("cannot compare as {to}: {e}"),
            })
    };

    let string_columns: Vec<(usize, Vec<ArrayRef>)> = required
        .iter()
        .filter(|(_, d)| *d == Domain::Str)
        .map(|&(index, _)| Ok((index, cast(index, &DataType::Utf8)?)))
        .collect::<Result<_, SourceError>>()?;
    // Each distinct string once (hashed), then ranked by one sort of the
    // distinct values: codes compare like the strings.
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
    let column_ids: Vec<Vec<Option<u32>>> = string_columns
        .iter()
        .map(|(_, arrays)| {
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
    for (s, id) in constants.iter().zip(constant_ids) {
        relation.insert_string_code(s.clone(), rank[id as usize]);
    }
    for ((index, _), ids) in string_columns.iter().zip(column_ids) {
        let keys = ids.into_iter().map(|id| id.map(|id| rank[id as usize]));
        relation.insert_column(*index, Domain::Str, KeyColumn::from_keys(keys));
    }

    for &(index, domain) in &required {
        let keys: Vec<Option<u64>> = match domain {
            Domain::Str => continue,
            Domain::Int => cast(index, &DataType::Int64)?
                .iter()
                .flat_map(|a| {
                    a.as_primitive::<Int64Type>().iter().map(|v| v.map(int_key)).collect::<Vec<_>>()
                })
                .collect(),
            Domain::Float => cast(index, &DataType::Float64)?
                .iter()
                .flat_map(|a| {
                    a.as_primitive::<Float64Type>()
                        .iter()
                        .map(|v| v.map(float_key))
                        .collect::<Vec<_>>()
                })
                .collect(),
        };
        debug_assert_eq!(keys.len(), table.rows as usize);
        relation.insert_column(index, domain, KeyColumn::from_keys(keys));
    }
    Ok(relation)
}
