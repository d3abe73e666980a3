//! PostgreSQL column types → the Arrow types the CSV path produces, and
//! the binary wire format of each (PostgreSQL's `send` functions).
//!
//! The Arrow types are chosen so that detection sees what it would see
//! reading a CSV export of the same rows (SPEC §1, types): integers stay
//! integers, `numeric` becomes float64 (what CSV inference gives decimal
//! text), dates are Date32 (days since 1970, as CSV inference gives
//! `YYYY-MM-DD`), timestamps microseconds since 1970; every compared column
//! is then encoded by the same code as a CSV column.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanBuilder, Date32Builder, Float32Builder, Float64Builder, Int16Builder,
    Int32Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow::datatypes::{DataType, TimeUnit};
use tokio_postgres::types::Type;

/// Days from 1970-01-01 to PostgreSQL's epoch 2000-01-01.
const EPOCH_DAYS: i32 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
const EPOCH_MICROS: i64 = 946_684_800_000_000;

/// The PostgreSQL types a source reads, as one enum (by type OID).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PgKind {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric,
    Text,
    Date,
    Timestamp,
    TimestampTz,
}

/// The type names a source supports, for the error message.
pub(crate) const SUPPORTED: &str = "boolean, smallint, integer, bigint, real, double precision, \
    numeric, text, varchar, char, name, date, timestamp, timestamptz";

impl PgKind {
    /// The kind of a column type, `None` when it is not supported.
    pub(crate) fn of(t: &Type) -> Option<PgKind> {
        Some(match *t {
            Type::BOOL => PgKind::Bool,
            Type::INT2 => PgKind::Int2,
            Type::INT4 => PgKind::Int4,
            Type::INT8 => PgKind::Int8,
            Type::FLOAT4 => PgKind::Float4,
            Type::FLOAT8 => PgKind::Float8,
            Type::NUMERIC => PgKind::Numeric,
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => PgKind::Text,
            Type::DATE => PgKind::Date,
            Type::TIMESTAMP => PgKind::Timestamp,
            Type::TIMESTAMPTZ => PgKind::TimestampTz,
            _ => return None,
        })
    }

    /// The Arrow type of the column.
    pub(crate) fn arrow_type(self) -> DataType {
        match self {
            PgKind::Bool => DataType::Boolean,
            PgKind::Int2 => DataType::Int16,
            PgKind::Int4 => DataType::Int32,
            PgKind::Int8 => DataType::Int64,
            PgKind::Float4 => DataType::Float32,
            PgKind::Float8 | PgKind::Numeric => DataType::Float64,
            PgKind::Text => DataType::Utf8,
            PgKind::Date => DataType::Date32,
            PgKind::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
            PgKind::TimestampTz => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        }
    }
}

/// One column's values as they arrive.
pub(crate) enum ColumnBuilder {
    Bool(BooleanBuilder),
    Int2(Int16Builder),
    Int4(Int32Builder),
    Int8(Int64Builder),
    Float4(Float32Builder),
    Float8(Float64Builder),
    Text(StringBuilder),
    Date(Date32Builder),
    Timestamp(TimestampMicrosecondBuilder, bool),
}

impl ColumnBuilder {
    pub(crate) fn new(kind: PgKind) -> Self {
        match kind {
            PgKind::Bool => ColumnBuilder::Bool(BooleanBuilder::new()),
            PgKind::Int2 => ColumnBuilder::Int2(Int16Builder::new()),
            PgKind::Int4 => ColumnBuilder::Int4(Int32Builder::new()),
            PgKind::Int8 => ColumnBuilder::Int8(Int64Builder::new()),
            PgKind::Float4 => ColumnBuilder::Float4(Float32Builder::new()),
            PgKind::Float8 | PgKind::Numeric => ColumnBuilder::Float8(Float64Builder::new()),
            PgKind::Text => ColumnBuilder::Text(StringBuilder::new()),
            PgKind::Date => ColumnBuilder::Date(Date32Builder::new()),
            PgKind::Timestamp => {
                ColumnBuilder::Timestamp(TimestampMicrosecondBuilder::new(), false)
            }
            PgKind::TimestampTz => {
                ColumnBuilder::Timestamp(TimestampMicrosecondBuilder::new(), true)
            }
        }
    }

    /// A NULL (and, for text, the empty string: a CSV export writes both
    /// as an empty field, which the CSV path reads as NULL).
    pub(crate) fn append_null(&mut self) {
        match self {
            ColumnBuilder::Bool(b) => b.append_null(),
            ColumnBuilder::Int2(b) => b.append_null(),
            ColumnBuilder::Int4(b) => b.append_null(),
            ColumnBuilder::Int8(b) => b.append_null(),
            ColumnBuilder::Float4(b) => b.append_null(),
            ColumnBuilder::Float8(b) => b.append_null(),
            ColumnBuilder::Text(b) => b.append_null(),
            ColumnBuilder::Date(b) => b.append_null(),
            ColumnBuilder::Timestamp(b, _) => b.append_null(),
        }
    }

    /// Decodes one value in PostgreSQL's binary format.
    pub(crate) fn append(&mut self, kind: PgKind, bytes: &[u8]) -> Result<(), ValueError> {
        let wrong = || ValueError::Size { bytes: bytes.len(), kind };
        macro_rules! be {
            ($t:ty) => {
                <$t>::from_be_bytes(bytes.try_into().map_err(|_| wrong())?)
            };
        }
        match self {
            ColumnBuilder::Bool(b) => match bytes {
                [v] => b.append_value(*v != 0),
                _ => return Err(wrong()),
            },
            ColumnBuilder::Int2(b) => b.append_value(be!(i16)),
            ColumnBuilder::Int4(b) => b.append_value(be!(i32)),
            ColumnBuilder::Int8(b) => b.append_value(be!(i64)),
            ColumnBuilder::Float4(b) => b.append_value(f32::from_bits(be!(u32))),
            ColumnBuilder::Float8(b) if kind == PgKind::Numeric => {
                b.append_value(numeric_to_f64(bytes)?);
            }
            ColumnBuilder::Float8(b) => b.append_value(f64::from_bits(be!(u64))),
            ColumnBuilder::Text(b) => {
                let s = std::str::from_utf8(bytes).map_err(ValueError::NotUtf8)?;
                if s.is_empty() { b.append_null() } else { b.append_value(s) }
            }
            ColumnBuilder::Date(b) => {
                let days = be!(i32);
                let finite = days != i32::MAX && days != i32::MIN;
                let days = days.checked_add(EPOCH_DAYS).filter(|_| finite);
                b.append_value(days.ok_or(ValueError::InfiniteDate)?);
            }
            ColumnBuilder::Timestamp(b, _) => {
                let micros = be!(i64);
                let finite = micros != i64::MAX && micros != i64::MIN;
                let at = micros.checked_add(EPOCH_MICROS).filter(|_| finite);
                b.append_value(at.ok_or(ValueError::InfiniteTimestamp)?);
            }
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> ArrayRef {
        match self {
            ColumnBuilder::Bool(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Int2(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Int4(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Int8(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Float4(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Float8(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Text(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Date(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Timestamp(mut b, tz) => {
                let array = b.finish();
                if tz { Arc::new(array.with_timezone("UTC")) } else { Arc::new(array) }
            }
        }
    }
}

/// A binary `numeric` as f64, through its exact decimal text, so the value
/// is the one the CSV path parses from the same digits.
///
/// Wire format (PostgreSQL `numeric_send`): ndigits, weight, sign, dscale
/// as i16/u16, then ndigits base-10000 digits; the value is
/// Σ digit[i] · 10000^(weight − i).
pub(crate) fn numeric_to_f64(bytes: &[u8]) -> Result<f64, ValueError> {
    let word = |i: usize| -> Result<u16, ValueError> {
        let b = bytes.get(2 * i..2 * i + 2).ok_or(ValueError::TruncatedNumeric)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    };
    let ndigits = word(0)? as usize;
    let weight = word(1)? as i16 as i32;
    let sign = word(2)?;
    match sign {
        0x0000 | 0x4000 => {}
        0xC000 => return Ok(f64::NAN),
        0xD000 => return Ok(f64::INFINITY),
        0xF000 => return Ok(f64::NEG_INFINITY),
        other => return Err(ValueError::NumericSign(other)),
    }
    if ndigits == 0 {
        return Ok(0.0);
    }
    let mut text = String::with_capacity(4 * ndigits + 8);
    if sign == 0x4000 {
        text.push('-');
    }
    for i in 0..ndigits {
        let digit = word(4 + i)?;
        if digit >= 10_000 {
            return Err(ValueError::NumericDigit(digit));
        }
        text.push_str(&format!("{digit:04}"));
    }
    // The digits are an integer; the first group is worth 10000^weight.
    let exponent = 4 * (weight - (ndigits as i32 - 1));
    text.push_str(&format!("e{exponent}"));
    text.parse::<f64>().map_err(|source| ValueError::Numeric { text, source })
}

/// Why a value of a binary COPY stream cannot be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ValueError {
    #[error("a {bytes}-byte value is not a binary {kind:?}")]
    Size { bytes: usize, kind: PgKind },
    #[error("text that is not UTF-8")]
    NotUtf8(#[source] std::str::Utf8Error),
    #[error("an infinite or out-of-range date")]
    InfiniteDate,
    #[error("an infinite or out-of-range timestamp")]
    InfiniteTimestamp,
    #[error("a truncated numeric")]
    TruncatedNumeric,
    #[error("a numeric with sign word {0:#x}")]
    NumericSign(u16),
    #[error("a numeric digit {0} ≥ 10000")]
    NumericDigit(u16),
    #[error("numeric {text}: {source}")]
    Numeric {
        text: String,
        #[source]
        source: std::num::ParseFloatError,
    },
}

#[cfg(test)]
mod tests {
    use super::numeric_to_f64;

    fn numeric(weight: i16, negative: bool, digits: &[u16]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend((digits.len() as u16).to_be_bytes());
        b.extend(weight.to_be_bytes());
        b.extend(if negative { 0x4000u16 } else { 0 }.to_be_bytes());
        b.extend(0u16.to_be_bytes());
        for d in digits {
            b.extend(d.to_be_bytes());
        }
        b
    }

    #[test]
    fn numerics_decode_to_the_nearest_double() {
        // 12345.678 = 1·10000 + 2345 + 6780/10000: weight 1.
        assert_eq!(numeric_to_f64(&numeric(1, false, &[1, 2345, 6780])).unwrap(), 12345.678);
        assert_eq!(numeric_to_f64(&numeric(-1, true, &[5000])).unwrap(), -0.5);
        assert_eq!(numeric_to_f64(&numeric(2, false, &[7])).unwrap(), 7e8);
        assert_eq!(numeric_to_f64(&numeric(0, false, &[])).unwrap(), 0.0);
        // 0.1 parsed from its digits, not 1 × 0.1 computed in floats.
        assert_eq!(
            numeric_to_f64(&numeric(-1, false, &[1000])).unwrap(),
            "0.1".parse::<f64>().unwrap()
        );
        assert!(numeric_to_f64(&[0, 1, 0, 0]).is_err());
        let nan = [0, 0, 0, 0, 0xC0, 0, 0, 0];
        assert!(numeric_to_f64(&nan).unwrap().is_nan());
    }
}
