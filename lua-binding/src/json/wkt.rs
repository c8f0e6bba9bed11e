//! The well-known types whose JSON form is special, and the text forms of
//! Timestamp (RFC 3339), Duration (`"1.5s"`) and FieldMask paths.

use crate::plan::{MessagePlan, Plans};

/// A message type with a special JSON form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wkt {
    /// `google.protobuf.Any`: `{"@type": url, ...}`.
    Any,
    /// `google.protobuf.Timestamp`: an RFC 3339 string.
    Timestamp,
    /// `google.protobuf.Duration`: `"<seconds>[.<fraction>]s"`.
    Duration,
    /// `google.protobuf.FieldMask`: comma-separated lowerCamel paths.
    FieldMask,
    /// `google.protobuf.Struct`: a JSON object.
    Struct,
    /// `google.protobuf.Value`: any JSON value.
    Value,
    /// `google.protobuf.ListValue`: a JSON array.
    ListValue,
    /// The nine wrappers: their `value` field's JSON form.
    Wrapper,
}

/// The special form of the message `m`, if it has one (checked against
/// the field layout too, so a look-alike type in another file is not
/// mistaken for one).
pub fn wkt_of(m: &MessagePlan) -> Option<Wkt> {
    let name = m.full_name.strip_prefix("google.protobuf.")?;
    let w = match name {
        "Any" => Wkt::Any,
        "Timestamp" => Wkt::Timestamp,
        "Duration" => Wkt::Duration,
        "FieldMask" => Wkt::FieldMask,
        "Struct" => Wkt::Struct,
        "Value" => Wkt::Value,
        "ListValue" => Wkt::ListValue,
        "DoubleValue" | "FloatValue" | "Int64Value" | "UInt64Value" | "Int32Value" | "UInt32Value" | "BoolValue"
        | "StringValue" | "BytesValue" => Wkt::Wrapper,
        _ => return None,
    };
    let shape_ok = match w {
        Wkt::Wrapper | Wkt::FieldMask | Wkt::Struct | Wkt::ListValue => m.fields.first().is_some_and(|f| f.number == 1),
        Wkt::Any | Wkt::Timestamp | Wkt::Duration => {
            m.fields.len() == 2 && m.fields[0].number == 1 && m.fields[1].number == 2
        }
        Wkt::Value => m.fields.len() == 6,
    };
    shape_ok.then_some(w)
}

/// Whether enum `e` is `google.protobuf.NullValue` (printed as `null`).
pub fn is_null_value(plans: &Plans, e: u32) -> bool {
    plans.enums.get(e as usize).is_some_and(|e| &*e.full_name == "google.protobuf.NullValue")
}

/// Seconds of 0001-01-01T00:00:00Z.
pub const TIMESTAMP_MIN: i64 = -62_135_596_800;
/// Seconds of 9999-12-31T23:59:59Z.
pub const TIMESTAMP_MAX: i64 = 253_402_300_799;
/// Duration bound in seconds (10,000 years), both signs.
pub const DURATION_MAX: i64 = 315_576_000_000;

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (inverse of [`days_from_civil`]).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn put_digits(out: &mut Vec<u8>, v: i64, width: usize) {
    let mut buf = itoa::Buffer::new();
    let s = buf.format(v).as_bytes();
    out.resize(out.len() + width.saturating_sub(s.len()), b'0');
    out.extend_from_slice(s);
}

/// Append `.fff`, `.ffffff` or `.fffffffff` (nothing for 0): the
/// fewest groups of three digits that show `nanos` exactly.
fn put_fraction(out: &mut Vec<u8>, nanos: i64) {
    if nanos == 0 {
        return;
    }
    out.push(b'.');
    if nanos % 1_000_000 == 0 {
        put_digits(out, nanos / 1_000_000, 3);
    } else if nanos % 1000 == 0 {
        put_digits(out, nanos / 1000, 6);
    } else {
        put_digits(out, nanos, 9);
    }
}

/// Append the quoted RFC 3339 form of a Timestamp.
pub fn put_timestamp(out: &mut Vec<u8>, secs: i64, nanos: i64) -> Result<(), String> {
    if !(TIMESTAMP_MIN..=TIMESTAMP_MAX).contains(&secs) {
        return Err(format!("Timestamp seconds {secs} out of range"));
    }
    if !(0..1_000_000_000).contains(&nanos) {
        return Err(format!("Timestamp nanos {nanos} out of range"));
    }
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    out.push(b'"');
    put_digits(out, y, 4);
    out.push(b'-');
    put_digits(out, m, 2);
    out.push(b'-');
    put_digits(out, d, 2);
    out.push(b'T');
    put_digits(out, t / 3600, 2);
    out.push(b':');
    put_digits(out, t / 60 % 60, 2);
    out.push(b':');
    put_digits(out, t % 60, 2);
    put_fraction(out, nanos);
    out.extend_from_slice(b"Z\"");
    Ok(())
}

/// Append the quoted form of a Duration.
pub fn put_duration(out: &mut Vec<u8>, secs: i64, nanos: i64) -> Result<(), String> {
    if !(-DURATION_MAX..=DURATION_MAX).contains(&secs) {
        return Err(format!("Duration seconds {secs} out of range"));
    }
    if !(-999_999_999..=999_999_999).contains(&nanos) || (secs > 0 && nanos < 0) || (secs < 0 && nanos > 0) {
        return Err(format!("Duration nanos {nanos} out of range or of another sign than its seconds"));
    }
    out.push(b'"');
    if secs < 0 || nanos < 0 {
        out.push(b'-');
    }
    put_digits(out, secs.abs(), 1);
    put_fraction(out, nanos.abs());
    out.extend_from_slice(b"s\"");
    Ok(())
}

/// Parse fixed-width decimal digits.
fn digits(s: &[u8], width: usize) -> Option<i64> {
    let d = s.get(..width)?;
    d.iter().try_fold(0i64, |v, &b| b.is_ascii_digit().then(|| v * 10 + i64::from(b - b'0')))
}

/// Parse a fraction `.d{1,9}` at the start of `s`: (nanos, length).
fn fraction(s: &[u8]) -> Result<(i64, usize), String> {
    if s.first() != Some(&b'.') {
        return Ok((0, 0));
    }
    let n = s[1..].iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || n > 9 {
        return Err("a fraction needs 1 to 9 digits".into());
    }
    let mut v = digits(&s[1..], n).unwrap_or(0);
    for _ in n..9 {
        v *= 10;
    }
    Ok((v, n + 1))
}

/// Parse an RFC 3339 timestamp (`Z` or a `±HH:MM` offset): (seconds, nanos).
pub fn parse_timestamp(s: &[u8]) -> Result<(i64, i64), String> {
    let bad = || String::from("malformed Timestamp (want RFC 3339, e.g. \"1972-01-01T10:00:20.021Z\")");
    if s.len() < 20 || s[4] != b'-' || s[7] != b'-' || s[10] != b'T' || s[13] != b':' || s[16] != b':' {
        return Err(bad());
    }
    let (y, mo, d) = (digits(s, 4).ok_or_else(bad)?, digits(&s[5..], 2).ok_or_else(bad)?, digits(&s[8..], 2));
    let d = d.ok_or_else(bad)?;
    let (h, mi, se) = (digits(&s[11..], 2).ok_or_else(bad)?, digits(&s[14..], 2).ok_or_else(bad)?, digits(&s[17..], 2));
    let se = se.ok_or_else(bad)?;
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mdays = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if y < 1 || !(1..=12).contains(&mo) || d < 1 || d > mdays[mo as usize - 1] || h > 23 || mi > 59 || se > 59 {
        return Err(bad());
    }
    let (nanos, flen) = fraction(&s[19..])?;
    let rest = &s[19 + flen..];
    let offset = match rest {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), oh1, oh2, b':', om1, om2] => {
            let oh = digits(&[*oh1, *oh2], 2).ok_or_else(bad)?;
            let om = digits(&[*om1, *om2], 2).ok_or_else(bad)?;
            if oh > 23 || om > 59 {
                return Err(bad());
            }
            let o = oh * 3600 + om * 60;
            if *sign == b'-' { -o } else { o }
        }
        _ => return Err(bad()),
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se - offset;
    if !(TIMESTAMP_MIN..=TIMESTAMP_MAX).contains(&secs) {
        return Err("Timestamp out of range (0001-01-01 to 9999-12-31)".into());
    }
    Ok((secs, nanos))
}

/// Parse a Duration (`"-1.5s"`): (seconds, nanos), both of one sign.
pub fn parse_duration(s: &[u8]) -> Result<(i64, i64), String> {
    let bad = || String::from("malformed Duration (want e.g. \"1.5s\")");
    let body = s.strip_suffix(b"s").ok_or_else(bad)?;
    let (neg, body) = match body.strip_prefix(b"-") {
        Some(b) => (true, b),
        None => (false, body),
    };
    let n = body.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || n > 12 {
        return Err(if n > 12 { "Duration out of range".into() } else { bad() });
    }
    let secs = digits(body, n).ok_or_else(bad)?;
    let (nanos, flen) = fraction(&body[n..])?;
    if n + flen != body.len() {
        return Err(bad());
    }
    if secs > DURATION_MAX {
        return Err("Duration out of range".into());
    }
    Ok(if neg { (-secs, -nanos) } else { (secs, nanos) })
}

/// A FieldMask path in its JSON form: `foo_bar.baz` → `fooBar.baz`;
/// an error when it would not read back the same.
pub fn path_to_json(path: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let bad = || format!("FieldMask path {:?} has no JSON form", String::from_utf8_lossy(path));
    let mut upper = false;
    for &b in path {
        if b == b'_' {
            if upper {
                return Err(bad());
            }
            upper = true;
        } else if b.is_ascii_uppercase() {
            return Err(bad());
        } else if upper {
            if !b.is_ascii_lowercase() {
                return Err(bad());
            }
            out.push(b.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(b);
        }
    }
    if upper { Err(bad()) } else { Ok(()) }
}

/// A FieldMask path from its JSON form: `fooBar.baz` → `foo_bar.baz`.
pub fn path_from_json(path: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    for &b in path {
        if b == b'_' {
            return Err(format!("FieldMask path {:?} is not lowerCamel", String::from_utf8_lossy(path)));
        }
        if b.is_ascii_uppercase() {
            out.push(b'_');
            out.push(b.to_ascii_lowercase());
        } else {
            out.push(b);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        let f = |s: i64, n: i64| {
            let mut o = Vec::new();
            put_timestamp(&mut o, s, n).map(|_| String::from_utf8(o).unwrap())
        };
        assert_eq!(f(0, 0).unwrap(), "\"1970-01-01T00:00:00Z\"");
        assert_eq!(f(TIMESTAMP_MIN, 0).unwrap(), "\"0001-01-01T00:00:00Z\"");
        assert_eq!(f(TIMESTAMP_MAX, 999_999_999).unwrap(), "\"9999-12-31T23:59:59.999999999Z\"");
        assert_eq!(f(1, 10_000_000).unwrap(), "\"1970-01-01T00:00:01.010Z\"");
        assert!(f(TIMESTAMP_MAX + 1, 0).is_err());
        assert_eq!(parse_timestamp(b"1970-01-01T00:00:00Z"), Ok((0, 0)));
        assert_eq!(parse_timestamp(b"1970-01-01T08:00:01.5+08:00"), Ok((1, 500_000_000)));
        assert!(parse_timestamp(b"1970-01-01t00:00:00Z").is_err());
        assert!(parse_timestamp(b"1970-01-01T00:00:00z").is_err());
        assert!(parse_timestamp(b"0000-12-31T23:59:59Z").is_err());
        for s in [-5_000_000_000i64, 1_234_567_890, TIMESTAMP_MIN] {
            let mut o = Vec::new();
            put_timestamp(&mut o, s, 0).unwrap();
            assert_eq!(parse_timestamp(&o[1..o.len() - 1]), Ok((s, 0)));
        }
    }

    #[test]
    fn durations() {
        let f = |s: i64, n: i64| {
            let mut o = Vec::new();
            put_duration(&mut o, s, n).map(|_| String::from_utf8(o).unwrap())
        };
        assert_eq!(f(1, 340_012).unwrap(), "\"1.000340012s\"");
        assert_eq!(f(0, -500_000_000).unwrap(), "\"-0.500s\"");
        assert!(f(1, -1).is_err());
        assert_eq!(parse_duration(b"-0.5s"), Ok((0, -500_000_000)));
        assert!(parse_duration(b"1.5").is_err());
        assert!(parse_duration(b"315576000001s").is_err());
    }

    #[test]
    fn field_mask_paths() {
        let mut o = Vec::new();
        path_to_json(b"foo_bar.baz_qux", &mut o).unwrap();
        assert_eq!(o, b"fooBar.bazQux");
        assert!(path_to_json(b"foo__bar", &mut Vec::new()).is_err());
        assert!(path_to_json(b"foo_3_bar", &mut Vec::new()).is_err());
        let mut o = Vec::new();
        path_from_json(b"fooBar", &mut o).unwrap();
        assert_eq!(o, b"foo_bar");
    }
}
