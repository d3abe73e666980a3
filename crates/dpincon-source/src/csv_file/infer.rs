//! CSV type inference with Arrow's rules, without Arrow's per-cell regex.
//!
//! arrow-csv's `Format::infer_schema` matches every non-empty cell against a
//! set of eight regular expressions; at 10^6 rows that is most of the read.
//! [`InferredType`] gives the same answer with a hand-written matcher for
//! ASCII cells, [`ARROW_PATTERNS`] (Arrow's own expressions) for the rest,
//! and stops looking at a column once it is a string column: the candidate
//! types only accumulate, and a string bit decides the result.

use std::sync::LazyLock;

use arrow::datatypes::{DataType, TimeUnit};
use regex::RegexSet;

/// arrow-csv 59's inference expressions, in its order: the first match wins.
pub(crate) const ARROW_PATTERNS: [&str; 8] = [
    r"(?i)^(true)$|^(false)$(?-i)",
    r"^-?(\d+)$",
    r"^-?((\d*\.\d+|\d+\.\d*)([eE][-+]?\d+)?|\d+([eE][-+]?\d+))$",
    r"^\d{4}-\d\d-\d\d$",
    r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[^\d\.].*)?$",
    r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d\.\d{1,3}(?:[^\d].*)?$",
    r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d\.\d{1,6}(?:[^\d].*)?$",
    r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d\.\d{1,9}(?:[^\d].*)?$",
];

const BOOLEAN: usize = 0;
const INTEGER: usize = 1;
const FLOAT: usize = 2;
const DATE: usize = 3;
const SECOND: usize = 4;
const UTF8: u16 = 1 << 8;

static PATTERNS: LazyLock<RegexSet> = LazyLock::new(|| RegexSet::new(ARROW_PATTERNS).unwrap());

/// The types a column's cells allow so far: one bit per pattern of
/// arrow-csv 59's inference expressions, bit 8 for strings (arrow-csv's
/// `InferredDataType`). What a CSV column's type is read as;
/// `dpincon-generate` types the columns it writes with it too.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct InferredType(u16);

impl InferredType {
    /// The type one non-NULL (non-empty) cell allows alone.
    pub fn of(cell: &str) -> Self {
        InferredType(cell_bit(cell))
    }

    /// Whether more cells can still change [`Self::data_type`].
    pub fn is_open(self) -> bool {
        self.0 & UTF8 == 0
    }

    /// Takes a non-NULL (non-empty) cell into account.
    pub fn update(&mut self, cell: &str) {
        if self.is_open() {
            self.0 |= cell_bit(cell);
        }
    }

    /// The column's type, as arrow-csv would infer it from the same cells.
    pub fn data_type(self) -> DataType {
        match self.0 {
            0 => DataType::Null,
            1 => DataType::Boolean,
            2 => DataType::Int64,
            4 | 6 => DataType::Float64,
            b if b & !0b1111_1000 == 0 => match b.leading_zeros() {
                8 => DataType::Timestamp(TimeUnit::Nanosecond, None),
                9 => DataType::Timestamp(TimeUnit::Microsecond, None),
                10 => DataType::Timestamp(TimeUnit::Millisecond, None),
                11 => DataType::Timestamp(TimeUnit::Second, None),
                _ => DataType::Date32,
            },
            _ => DataType::Utf8,
        }
    }
}

/// The bit one cell sets (arrow-csv's `InferredDataType::update`).
pub(crate) fn cell_bit(cell: &str) -> u16 {
    bit_for(cell, |cell| {
        if cell.is_ascii() {
            ascii_match(cell.as_bytes())
        } else {
            // `\d` and the case-insensitive `true` are Unicode-aware: keep
            // Arrow's expressions for the rare non-ASCII cell of an open column.
            arrow_match(cell)
        }
    })
}

/// The bit a cell sets, given how to find the first pattern it matches.
fn bit_for(cell: &str, first_match: impl FnOnce(&str) -> Option<usize>) -> u16 {
    if cell.starts_with('"') {
        return UTF8;
    }
    match first_match(cell) {
        Some(INTEGER) if cell.len() >= 19 && cell.parse::<i64>().is_err() => UTF8,
        Some(pattern) => 1 << pattern,
        None if matches!(cell, "NaN" | "nan" | "inf" | "-inf") => 1 << FLOAT,
        None => UTF8,
    }
}

/// The first of [`ARROW_PATTERNS`] a cell matches, by Arrow's expressions.
fn arrow_match(cell: &str) -> Option<usize> {
    PATTERNS.matches(cell).into_iter().next()
}

/// The first of [`ARROW_PATTERNS`] an ASCII cell matches.
fn ascii_match(b: &[u8]) -> Option<usize> {
    if b.eq_ignore_ascii_case(b"true") || b.eq_ignore_ascii_case(b"false") {
        return Some(BOOLEAN);
    }
    let unsigned = b.strip_prefix(b"-").unwrap_or(b);
    let leading = digits(unsigned);
    if leading > 0 && leading == unsigned.len() {
        return Some(INTEGER);
    }
    if is_float(unsigned, leading) {
        return Some(FLOAT);
    }
    temporal(b)
}

fn digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// `(\d*\.\d+|\d+\.\d*)([eE][-+]?\d+)?|\d+([eE][-+]?\d+)`, after the sign;
/// `leading` is the count of leading digits.
fn is_float(b: &[u8], leading: usize) -> bool {
    let mut rest = &b[leading..];
    let mut mantissa = leading;
    let dotted = rest.first() == Some(&b'.');
    if dotted {
        let fraction = digits(&rest[1..]);
        mantissa += fraction;
        rest = &rest[1 + fraction..];
    }
    if mantissa == 0 {
        return false;
    }
    match rest.split_first() {
        None => dotted,
        Some((e, exponent)) if e.eq_ignore_ascii_case(&b'e') => {
            let exponent = exponent.strip_prefix(b"+").or(exponent.strip_prefix(b"-"));
            let exponent = exponent.unwrap_or(&rest[1..]);
            !exponent.is_empty() && digits(exponent) == exponent.len()
        }
        Some(_) => false,
    }
}

/// The date and timestamp patterns: `YYYY-MM-DD`, then `[T ]hh:mm:ss`, then
/// a fraction whose digit count picks the unit, then an optional suffix
/// (a zone) that starts with a non-digit and holds no new line.
fn temporal(b: &[u8]) -> Option<usize> {
    let shape = |text: &[u8], pattern: &[u8]| {
        text.len() >= pattern.len()
            && text.iter().zip(pattern).all(|(c, p)| match p {
                b'd' => c.is_ascii_digit(),
                b'T' => *c == b'T' || *c == b' ',
                p => c == p,
            })
    };
    if !shape(b, b"dddd-dd-dd") {
        return None;
    }
    if b.len() == 10 {
        return Some(DATE);
    }
    if !shape(b, b"dddd-dd-ddTdd:dd:dd") {
        return None;
    }
    let rest = &b[19..];
    let suffix_ok = |s: &[u8]| match s.split_first() {
        None => true,
        Some((first, tail)) => !first.is_ascii_digit() && !tail.contains(&b'\n'),
    };
    match rest.split_first() {
        None => Some(SECOND),
        Some((b'.', fraction)) => {
            let n = digits(fraction);
            let unit = match n {
                1..=3 => SECOND + 1,
                4..=6 => SECOND + 2,
                7..=9 => SECOND + 3,
                _ => return None,
            };
            suffix_ok(&fraction[n..]).then_some(unit)
        }
        Some(_) => suffix_ok(rest).then_some(SECOND),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The reference: Arrow's expressions for every cell.
    fn reference(cell: &str) -> u16 {
        bit_for(cell, arrow_match)
    }

    #[test]
    fn cells_of_every_kind_match_arrow() {
        let cells = [
            "true",
            "FALSE",
            "tRuE",
            "truex",
            "0",
            "-7",
            "007",
            "-",
            "--1",
            "1.",
            ".5",
            "-.5",
            ".",
            "1e5",
            "1E+5",
            "1e",
            "e5",
            "1.5e-3",
            "1.e2",
            ".e2",
            "1.5.2",
            "NaN",
            "nan",
            "inf",
            "-inf",
            "Inf",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "99999999999999999999",
            "2020-01-31",
            "2020-1-31",
            "2020-01-31T10:20:30",
            "2020-01-31 10:20:30",
            "2020-01-31 10:20:30Z",
            "2020-01-31 10:20:30+01:00",
            "2020-01-31 10:20:30.1",
            "2020-01-31 10:20:30.1234",
            "2020-01-31 10:20:30.1234567",
            "2020-01-31 10:20:30.1234567890",
            "2020-01-31 10:20:30.",
            "2020-01-31 10:20:301",
            "2020-01-31 10:20:30.12Z",
            "2020-01-31 10:20:30.12\nZ",
            "2020-01-31 10:20:30x\ny",
            "2020-01-31x",
            "\"quoted\"",
            "٣",
            "-٣٤",
            "falſe",
            "Ana",
            "1,5",
            " 1",
            "1 ",
        ];
        for cell in cells {
            assert_eq!(cell_bit(cell), reference(cell), "{cell:?}");
        }
    }

    #[test]
    fn a_column_is_a_string_column_once_any_cell_is_a_string() {
        let mut t = InferredType::default();
        assert_eq!(t.data_type(), DataType::Null);
        t.update("1");
        assert_eq!(t.data_type(), DataType::Int64);
        t.update("2.5");
        assert_eq!(t.data_type(), DataType::Float64);
        t.update("2020-01-01");
        assert_eq!(t.data_type(), DataType::Utf8);
        assert!(t.is_open(), "an integer and a date leave only the string type, without a string");
        t.update("x");
        assert!(!t.is_open());
        t.update("3");
        assert_eq!(t.data_type(), DataType::Utf8);
        let mut d = InferredType::default();
        d.update("2020-01-01");
        d.update("2020-01-01 00:00:00.5");
        assert_eq!(d.data_type(), DataType::Timestamp(TimeUnit::Millisecond, None));
    }

    proptest! {
        #[test]
        fn random_cells_match_arrow(cell in "[-+0-9.eEtTrRuUfFaAlLsSnNiI :Z\n٣]{0,24}") {
            prop_assert_eq!(cell_bit(&cell), reference(&cell), "{:?}", cell);
        }

        #[test]
        fn random_timestamps_match_arrow(
            cell in "[0-9]{4}-[0-9]{2}-[0-9]{2}([T x][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{0,11})?[Z+0-9:.\n]{0,4})?"
        ) {
            prop_assert_eq!(cell_bit(&cell), reference(&cell), "{:?}", cell);
        }
    }
}
