//! [`ByteSize`] and [`Duration`]: sizes and spans of time as every entry
//! point writes them (`1GiB`, `512 MiB`, `90s`, `365d`), parsed here once.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

use crate::ParseError;

/// A number of bytes, written `1GiB`, `512 MiB`, `800M`, `1.5k` or
/// `1073741824` (units are binary: k = KiB = 1024; case is ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

const BYTE_UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];

impl ByteSize {
    /// The bytes.
    pub fn bytes(self) -> u64 {
        self.0
    }
}

impl FromStr for ByteSize {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        let t = text.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let shift = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => Some(0),
            "k" | "kb" | "kib" => Some(10),
            "m" | "mb" | "mib" => Some(20),
            "g" | "gb" | "gib" => Some(30),
            "t" | "tb" | "tib" => Some(40),
            _ => None,
        };
        match (number.parse::<f64>(), shift) {
            // A fraction of a byte is no size either.
            (Ok(v), Some(shift)) if v.is_finite() && v * (1u64 << shift) as f64 >= 1.0 => {
                Ok(ByteSize((v * (1u64 << shift) as f64) as u64))
            }
            _ => Err(ParseError::ByteSize(text.into())),
        }
    }
}

/// The largest binary unit the size is a whole number of (`1536` is
/// `1536`, `1073741824` is `1GiB`): it reads back to the same bytes.
impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit =
            BYTE_UNITS.iter().find(|(_, shift)| self.0 > 0 && self.0.is_multiple_of(1 << shift));
        match unit {
            Some((name, shift)) => write!(f, "{}{name}", self.0 >> shift),
            None => write!(f, "{}", self.0),
        }
    }
}

/// A span of time, written `90s`, `10m` (or `10min`), `2h`, `1d`, `52w`
/// or plain seconds: whole numbers of the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub std::time::Duration);

const TIME_UNITS: [(&str, u64); 4] = [("w", 604_800), ("d", 86_400), ("h", 3600), ("m", 60)];

impl Duration {
    /// The span.
    pub fn get(self) -> std::time::Duration {
        self.0
    }

    /// The span in whole days, if it is a whole number of them.
    pub fn whole_days(self) -> Option<u64> {
        let secs = self.0.as_secs();
        (secs.is_multiple_of(86_400) && self.0.subsec_nanos() == 0).then_some(secs / 86_400)
    }
}

impl FromStr for Duration {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        let bad = || ParseError::Duration(text.into());
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let n: u64 = number.parse().map_err(|_| bad())?;
        let scale = match unit.trim() {
            "" | "s" => 1,
            "m" | "min" => 60,
            "h" => 3600,
            "d" => 86_400,
            "w" => 604_800,
            _ => return Err(bad()),
        };
        let secs = n.checked_mul(scale).ok_or_else(bad)?;
        Ok(Duration(std::time::Duration::from_secs(secs)))
    }
}

/// The largest unit the span is a whole number of (`90s`, `10m`, `365d`).
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.as_secs();
        match TIME_UNITS.iter().find(|(_, scale)| secs > 0 && secs.is_multiple_of(*scale)) {
            Some((name, scale)) => write!(f, "{}{name}", secs / scale),
            None => write!(f, "{secs}s"),
        }
    }
}

/// Written and read as its text (`"1GiB"`, `"90s"`), through `FromStr`.
macro_rules! as_text {
    ($($ty:ty),*) => {$(
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d)?.parse().map_err(de::Error::custom)
            }
        }
    )*};
}

as_text!(ByteSize, Duration);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them_and_read_back() {
        let size = |t: &str| t.parse::<ByteSize>().map(ByteSize::bytes);
        assert_eq!(size("1GiB"), Ok(1 << 30));
        assert_eq!(size("512 MiB"), Ok(512 << 20));
        assert_eq!(size("1.5k"), Ok(1536));
        assert_eq!(size("4096"), Ok(4096));
        assert_eq!(size("800M"), Ok(800 << 20));
        for bad in ["", "lots", "-1G", "0", "0.5", "1.5.2G", "3PB", "NaN", "GiB", "12 parsecs"] {
            assert_eq!(size(bad), Err(ParseError::ByteSize(bad.into())), "{bad}");
        }
        assert_eq!(
            size("huge").unwrap_err().to_string(),
            "'huge' is not a memory size (use e.g. 1GiB, 512MiB, 800M)"
        );
        for bytes in [1, 1000, 1536, 1 << 30, 3 << 40, (1 << 30) + 1] {
            let text = ByteSize(bytes).to_string();
            assert_eq!(size(&text), Ok(bytes), "{text}");
        }
        assert_eq!(ByteSize(1 << 30).to_string(), "1GiB");
    }

    #[test]
    fn durations_read_as_people_write_them_and_read_back() {
        let secs = |t: &str| t.parse::<Duration>().map(|d| d.get().as_secs());
        assert_eq!(secs("90s"), Ok(90));
        assert_eq!(secs("90"), Ok(90));
        assert_eq!(secs("10m"), Ok(600));
        assert_eq!(secs("10min"), Ok(600));
        assert_eq!(secs("2 h"), Ok(7200));
        assert_eq!(secs("365d"), Ok(365 * 86_400));
        assert_eq!(secs("52w"), Ok(52 * 7 * 86_400));
        for bad in ["", "soon", "1.5h", "-1d", "1y", "99999999999999999999w"] {
            assert_eq!(secs(bad), Err(ParseError::Duration(bad.into())), "{bad}");
        }
        for text in ["90s", "10m", "2h", "365d", "52w", "0s"] {
            assert_eq!(text.parse::<Duration>().unwrap().to_string(), text);
        }
        assert_eq!("14d".parse::<Duration>().unwrap().whole_days(), Some(14));
        assert_eq!("12h".parse::<Duration>().unwrap().whole_days(), None);
    }
}
