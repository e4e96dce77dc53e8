//! Times and durations for human text (CLI text, reason details): epoch nanoseconds as UTC (`2026-05-05 12:00:01Z`,
//! sub-second digits only when present) and spans in seconds (`600.0 s`). Integer arithmetic
//! on the `u64` nanoseconds, so every digit shown is exact (no f64 above 2^53).

use crate::wire::EpochNs;

const NS_PER_S: u64 = 1_000_000_000;

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

/// `.123` for a sub-second part (trailing zeros dropped), empty when it is zero.
fn fraction(ns: u64) -> String {
    if ns == 0 {
        return String::new();
    }
    let digits = format!("{ns:09}");
    format!(".{}", digits.trim_end_matches('0'))
}

/// An epoch-ns instant in UTC: `2026-05-05 12:00:01Z`, `2026-05-05 12:00:01.25Z`.
pub fn utc(ns: u64) -> String {
    let secs = ns / NS_PER_S;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let sod = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}{}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        fraction(ns % NS_PER_S)
    )
}

/// A span of nanoseconds in seconds, at least one decimal: `600.0 s`, `0.000000001 s`.
pub fn seconds(ns: u64) -> String {
    let frac = match fraction(ns % NS_PER_S) {
        f if f.is_empty() => ".0".to_string(),
        f => f,
    };
    format!("{}{frac} s", ns / NS_PER_S)
}

/// A time given in epoch seconds (e.g. `process_start_time_seconds`) in UTC, to the
/// millisecond; `None` when it is not a finite non-negative number.
pub fn utc_seconds(s: f64) -> Option<String> {
    let ms = (s * 1e3).round();
    (0.0..1.8e16).contains(&ms).then(|| utc(ms as u64 * 1_000_000))
}

/// A window: `start + length` when both ends are known and ordered, else what is known.
pub fn window(start: Option<u64>, end: Option<u64>) -> String {
    match (start, end) {
        (Some(s), Some(e)) if e >= s => format!("{} + {}", utc(s), seconds(e - s)),
        (Some(s), Some(e)) => format!("{} .. {} (end before start)", utc(s), utc(e)),
        (Some(s), None) => format!("{} .. end unknown", utc(s)),
        (None, Some(e)) => format!("start unknown .. {}", utc(e)),
        (None, None) => "-".to_string(),
    }
}

/// [`window`] of two epoch-ns fields as the results hold them.
pub fn window_of(start: impl Into<Option<EpochNs>>, end: impl Into<Option<EpochNs>>) -> String {
    window(start.into().map(|n| n.0), end.into().map(|n| n.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_seconds_to_the_millisecond() {
        assert_eq!(
            utc_seconds(1_781_776_717.356).as_deref(),
            Some("2026-06-18 09:58:37.356Z")
        );
        assert_eq!(utc_seconds(f64::NAN), None);
        assert_eq!(utc_seconds(-1.0), None);
        assert_eq!(utc_seconds(f64::INFINITY), None);
    }

    #[test]
    fn instants() {
        assert_eq!(utc(0), "1970-01-01 00:00:00Z");
        // 2026-05-05 12:00:01 UTC = 1777982401 s.
        assert_eq!(utc(1_777_982_401 * NS_PER_S), "2026-05-05 12:00:01Z");
        assert_eq!(
            utc(1_777_982_401 * NS_PER_S + 250_000_000),
            "2026-05-05 12:00:01.25Z"
        );
        // Exact at full ns precision, above 2^53.
        assert_eq!(
            utc(1_783_588_550_633_024_589),
            "2026-07-09 09:15:50.633024589Z"
        );
        // Leap days and year ends.
        assert_eq!(utc(951_782_400 * NS_PER_S), "2000-02-29 00:00:00Z");
        assert_eq!(utc(1_735_689_599 * NS_PER_S), "2024-12-31 23:59:59Z");
        assert_eq!(utc(u64::MAX), "2554-07-21 23:34:33.709551615Z");
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        // Days from civil (the inverse) must give back the day count for 1970..2370.
        let mut days = 0i64;
        for year in 1970..2370i64 {
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
            let lengths = [
                31,
                if leap { 29 } else { 28 },
                31,
                30,
                31,
                30,
                31,
                31,
                30,
                31,
                30,
                31,
            ];
            for (m, len) in lengths.iter().enumerate() {
                for d in 1..=*len {
                    assert_eq!(civil_from_days(days), (year, m as u32 + 1, d), "day {days}");
                    days += 1;
                }
            }
        }
    }

    #[test]
    fn spans_and_windows() {
        assert_eq!(seconds(600 * NS_PER_S), "600.0 s");
        assert_eq!(seconds(1), "0.000000001 s");
        assert_eq!(seconds(3_542_818_609_764), "3542.818609764 s");
        let s = 1_777_982_401 * NS_PER_S;
        assert_eq!(
            window(Some(s), Some(s + 600 * NS_PER_S)),
            "2026-05-05 12:00:01Z + 600.0 s"
        );
        assert_eq!(window(None, None), "-");
        assert_eq!(window(Some(s), None), "2026-05-05 12:00:01Z .. end unknown");
    }
}
