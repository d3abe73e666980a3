//! The relation detection works on: every compared column encoded as
//! order-preserving `u64` keys, so each predicate is one integer comparison.

use std::collections::HashMap;

use dpincon_constraints::Domain;

/// The key of an integer: order-preserving (`a < b` iff `int_key(a) < int_key(b)`).
pub fn int_key(value: i64) -> u64 {
    (value as u64) ^ (1 << 63)
}

/// The key of a float: order-preserving for the total order with `-0.0 = 0.0`
/// and every NaN equal to NaN and above all numbers (DataFusion's order).
pub fn float_key(value: f64) -> u64 {
    let value = if value == 0.0 {
        0.0
    } else if value.is_nan() {
        f64::NAN
    } else {
        value
    };
    let bits = value.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | (1 << 63) }
}

/// One encoded column: a key per row and which rows are NULL.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeyColumn {
    keys: Vec<u64>,
    /// Bit `r` set when row `r` is NULL; empty when no row is.
    nulls: Vec<u64>,
}

impl KeyColumn {
    /// A column from one optional key per row (`None` = NULL).
    pub fn from_keys(values: impl IntoIterator<Item = Option<u64>>) -> Self {
        let mut keys = Vec::new();
        let mut nulls = Vec::new();
        for (row, value) in values.into_iter().enumerate() {
            match value {
                Some(key) => keys.push(key),
                None => {
                    keys.push(0);
                    if nulls.is_empty() {
                        nulls.resize(row / 64 + 1, 0);
                    }
                    set_bit(&mut nulls, row);
                }
            }
        }
        if !nulls.is_empty() {
            nulls.resize(keys.len().div_ceil(64), 0);
        }
        KeyColumn { keys, nulls }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when the column has no row.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key of `row`, `None` when NULL.
    #[inline]
    pub fn get(&self, row: u32) -> Option<u64> {
        let r = row as usize;
        if !self.nulls.is_empty() && self.nulls[r / 64] >> (r % 64) & 1 == 1 {
            None
        } else {
            Some(self.keys[r])
        }
    }

    /// The key of `row`, which must not be NULL.
    #[inline]
    pub(crate) fn key(&self, row: u32) -> u64 {
        self.keys[row as usize]
    }

    /// Bytes the column holds on the heap.
    pub fn heap_bytes(&self) -> u64 {
        8 * (self.keys.capacity() + self.nulls.capacity()) as u64
    }

    /// Whether `row` is NULL.
    #[inline]
    pub fn is_null(&self, row: u32) -> bool {
        self.get(row).is_none()
    }
}

fn set_bit(bits: &mut Vec<u64>, i: usize) {
    if bits.len() <= i / 64 {
        bits.resize(i / 64 + 1, 0);
    }
    bits[i / 64] |= 1 << (i % 64);
}

/// A table encoded for detection: one [`KeyColumn`] per (column, domain)
/// that some predicate compares, plus the codes of string constants.
///
/// String keys are positions in one sorted dictionary shared by every
/// string column and constant, so comparing codes is comparing strings
/// lexicographically (SPEC §1) and columns can be compared with each other.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Relation {
    rows: u32,
    slots: HashMap<(usize, Domain), usize>,
    columns: Vec<KeyColumn>,
    string_codes: HashMap<String, u64>,
}

impl Relation {
    /// An empty relation of `rows` rows.
    pub fn new(rows: u32) -> Self {
        Relation { rows, ..Relation::default() }
    }

    /// Number of rows (tuples).
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// A relation whose slots are `columns`, in order (how a worker rebuilds
    /// the part of a relation a task needs).
    pub fn from_slots(rows: u32, columns: Vec<KeyColumn>) -> Self {
        assert!(columns.iter().all(|c| c.len() == rows as usize), "a column has one key per row");
        Relation { rows, columns, ..Relation::default() }
    }

    /// Number of slots (encoded columns).
    pub fn slot_count(&self) -> usize {
        self.columns.len()
    }

    /// Adds the encoding of table column `column` in `domain`.
    pub fn insert_column(&mut self, column: usize, domain: Domain, keys: KeyColumn) {
        assert_eq!(keys.len(), self.rows as usize, "a column has one key per row");
        let slot = self.columns.len();
        self.columns.push(keys);
        self.slots.insert((column, domain), slot);
    }

    /// Records the dictionary code of a string constant.
    pub fn insert_string_code(&mut self, value: String, code: u64) {
        self.string_codes.insert(value, code);
    }

    /// The slot of an encoded column.
    pub fn slot(&self, column: usize, domain: Domain) -> Option<usize> {
        self.slots.get(&(column, domain)).copied()
    }

    /// The column in `slot`.
    pub fn column(&self, slot: usize) -> &KeyColumn {
        &self.columns[slot]
    }

    /// Bytes the relation holds on the heap (the memory budget of
    /// detection counts them).
    pub fn heap_bytes(&self) -> u64 {
        let columns: u64 = self.columns.iter().map(KeyColumn::heap_bytes).sum();
        // A string constant: its bytes, the String, the code and the map's slot.
        let constants: u64 = self.string_codes.keys().map(|k| k.len() as u64 + 48).sum();
        columns + constants
    }

    /// The code of a string constant.
    pub fn string_code(&self, value: &str) -> Option<u64> {
        self.string_codes.get(value).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_preserve_order() {
        let ints = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        assert!(ints.windows(2).all(|w| int_key(w[0]) < int_key(w[1])));
        let floats = [f64::NEG_INFINITY, -3.5, -1e-300, 0.0, 1e-300, 2.0, f64::INFINITY, f64::NAN];
        assert!(floats.windows(2).all(|w| float_key(w[0]) < float_key(w[1])));
        assert_eq!(float_key(-0.0), float_key(0.0));
        assert_eq!(float_key(f64::NAN), float_key(-f64::NAN));
    }

    #[test]
    fn nulls_are_tracked() {
        let col = KeyColumn::from_keys([Some(3), None, Some(5)]);
        assert_eq!((col.get(0), col.get(1), col.get(2)), (Some(3), None, Some(5)));
        let col = KeyColumn::from_keys((0..130).map(|i| (i != 129).then_some(i)));
        assert!(col.is_null(129) && !col.is_null(128));
    }
}
