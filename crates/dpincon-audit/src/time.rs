//! Dates for people: a run's start in ISO 8601, in the suite's time zone
//! (`time-zone = "Europe/Paris"`, an IANA name) or UTC. The history keeps
//! Unix seconds; only what is shown is converted.

use chrono::{DateTime, NaiveDate, SecondsFormat, TimeDelta, TimeZone, Utc};
pub use chrono_tz::Tz;

/// A refused time zone or test clock, naming the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// Not an IANA time zone name.
    #[error("time-zone '{0}' is not an IANA time zone name (e.g. \"Europe/Paris\", \"UTC\")")]
    Zone(String),
    /// `--as-of` is neither a date nor an RFC 3339 instant.
    #[error(
        "--as-of '{text}' is neither a date YYYY-MM-DD nor an RFC 3339 instant \
         (2026-03-01T02:00:00Z)"
    )]
    AsOf {
        /// The value given.
        text: String,
        /// Why it is not a date.
        #[source]
        source: chrono::ParseError,
    },
    /// The date has no local time in the zone from 00:00 on.
    #[error("--as-of '{text}': no such local time in {zone}")]
    NoLocalTime {
        /// The value given.
        text: String,
        /// The suite's zone.
        zone: Tz,
    },
    /// The instant is before the Unix epoch.
    #[error("--as-of '{0}' is before 1970")]
    BeforeEpoch(String),
}

/// Parses an IANA time zone name (`Europe/Paris`, `UTC`).
pub fn parse_zone(name: &str) -> Result<Tz, TimeError> {
    name.parse::<Tz>().map_err(|_| TimeError::Zone(name.into()))
}

/// `unix` seconds as `2026-03-01T02:00:00+01:00` in `zone`, or
/// `2026-03-01T01:00:00Z` without one.
pub fn iso8601(unix: u64, zone: Option<Tz>) -> String {
    let Some(utc) = DateTime::<Utc>::from_timestamp(unix.min(i64::MAX as u64) as i64, 0) else {
        return unix.to_string();
    };
    match zone {
        Some(tz) => utc.with_timezone(&tz).to_rfc3339_opts(SecondsFormat::Secs, false),
        None => utc.to_rfc3339_opts(SecondsFormat::Secs, true),
    }
}

/// The instant `--as-of` names, in seconds since the epoch: a date
/// `YYYY-MM-DD` at 00:00 in `zone` (UTC without one), or an RFC 3339
/// instant (`2026-03-01T02:00:00+01:00`). Where the zone skips midnight
/// (a daylight-saving gap) the date starts at its first minute that exists.
pub fn parse_as_of(text: &str, zone: Option<Tz>) -> Result<u64, TimeError> {
    let instant = match DateTime::parse_from_rfc3339(text) {
        Ok(t) => t.timestamp(),
        Err(_) => {
            let date = NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .map_err(|source| TimeError::AsOf { text: text.into(), source })?;
            let midnight = date.and_time(chrono::NaiveTime::MIN);
            let zone = zone.unwrap_or(Tz::UTC);
            // No gap is longer than a day; chrono answers `None` inside one.
            (0..24 * 60)
                .find_map(|m| {
                    zone.from_local_datetime(&(midnight + TimeDelta::minutes(m))).earliest()
                })
                .map(|t| t.timestamp())
                .ok_or_else(|| TimeError::NoLocalTime { text: text.into(), zone })?
        }
    };
    u64::try_from(instant).map_err(|_| TimeError::BeforeEpoch(text.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_iso8601_in_the_zone_or_utc() {
        // 2024-01-15 12:30:00 UTC.
        let t = 1_705_321_800;
        assert_eq!(iso8601(t, None), "2024-01-15T12:30:00Z");
        let paris = parse_zone("Europe/Paris").unwrap();
        assert_eq!(iso8601(t, Some(paris)), "2024-01-15T13:30:00+01:00");
        // Summer time is the zone's business.
        assert_eq!(iso8601(1_721_046_600, Some(paris)), "2024-07-15T14:30:00+02:00");
        assert!(parse_zone("Mars/Olympus").unwrap_err().to_string().contains("IANA"));
    }

    #[test]
    fn as_of_is_midnight_in_the_zone_or_an_rfc3339_instant() {
        // 2026-03-01T00:00:00Z.
        let utc_midnight = 1_772_323_200;
        assert_eq!(parse_as_of("2026-03-01", None), Ok(utc_midnight));
        let paris = parse_zone("Europe/Paris").unwrap();
        assert_eq!(parse_as_of("2026-03-01", Some(paris)), Ok(utc_midnight - 3600));
        assert_eq!(parse_as_of("2026-03-01T02:00:00+01:00", Some(paris)), Ok(utc_midnight + 3600));
        // Santiago skips from 00:00 to 01:00 on 2024-09-08: the day starts at 01:00 (-03:00).
        let santiago = parse_zone("America/Santiago").unwrap();
        assert_eq!(parse_as_of("2024-09-08", Some(santiago)), Ok(1_725_768_000));
        assert!(
            parse_as_of("2026-13-01", None).unwrap_err().to_string().contains("neither a date")
        );
        assert!(
            parse_as_of("yesterday", None).unwrap_err().to_string().contains("--as-of 'yesterday'")
        );
        assert!(parse_as_of("1969-12-31", None).unwrap_err().to_string().contains("before 1970"));
    }
}
