//! Dates for people: a run's start in ISO 8601, in the suite's time zone
//! (`time-zone = "Europe/Paris"`, an IANA name) or UTC. The history keeps
//! Unix seconds; only what is shown is converted.

use chrono::{DateTime, SecondsFormat, Utc};
pub use chrono_tz::Tz;

/// Parses an IANA time zone name (`Europe/Paris`, `UTC`).
pub fn parse_zone(name: &str) -> Result<Tz, String> {
    name.parse::<Tz>().map_err(|_| {
        format!("time-zone '{name}' is not an IANA time zone name (e.g. \"Europe/Paris\", \"UTC\")")
    })
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
        assert!(parse_zone("Mars/Olympus").unwrap_err().contains("IANA"));
    }
}
