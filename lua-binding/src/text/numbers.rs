//! Numbers as protobuf C++'s text format writes and reads them.
//!
//! Floats print as C's `%.*g` with the type's round-trip-free precision
//! (6 digits for `float`, 15 for `double`), widened to 9 / 17 digits when
//! the short form does not read back as the same value: C++'s
//! `SimpleFtoa`/`SimpleDtoa`. The formatting is libc's own `snprintf`, so
//! rounding and exponent spelling are exactly C's.

use std::os::raw::{c_char, c_int};

/// `snprintf(buf, "%.*g", prec, x)` as a `String`.
fn c_g(x: f64, prec: c_int) -> String {
    let mut buf = [0u8; 40];
    // SAFETY: the buffer is large enough for any `%.17g` of a double (at
    // most 24 bytes plus NUL) and snprintf never writes past its size.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast::<c_char>(), buf.len(), c"%.*g".as_ptr(), prec, x) };
    let n = (n.max(0) as usize).min(buf.len() - 1);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// The non-finite spellings, or `None` for a finite value.
fn non_finite(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some("nan")
    } else if x == f64::INFINITY {
        Some("inf")
    } else if x == f64::NEG_INFINITY {
        Some("-inf")
    } else {
        None
    }
}

/// A `double` as C++'s text format prints it.
pub fn format_double(x: f64) -> String {
    if let Some(s) = non_finite(x) {
        return s.to_owned();
    }
    let short = c_g(x, 15);
    if short.parse::<f64>().ok() == Some(x) { short } else { c_g(x, 17) }
}

/// A `float` as C++'s text format prints it.
pub fn format_float(x: f32) -> String {
    if let Some(s) = non_finite(f64::from(x)) {
        return s.to_owned();
    }
    let short = c_g(f64::from(x), 6);
    // C++ reads the short form back with a strtof that fails on underflow
    // (ERANGE), so subnormal floats always take the long form.
    if (x.is_normal() || x == 0.0) && short.parse::<f32>().ok() == Some(x) { short } else { c_g(f64::from(x), 9) }
}

/// An integer token's value: decimal, `0x` hex or leading-`0` octal, as the
/// tokenizer accepted it; `None` when it does not fit in `u64`.
pub fn parse_uint(text: &str) -> Option<u64> {
    let (digits, radix) = if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        (h, 16)
    } else if text.len() > 1 && text.starts_with('0') {
        (&text[1..], 8)
    } else {
        (text, 10)
    };
    u64::from_str_radix(digits, radix).ok()
}

/// A float token's value (C++'s `Tokenizer::ParseFloat`): an optional
/// `f`/`F` suffix is dropped; a bare exponent mark (`1e`) reads as if
/// followed by 0.
pub fn parse_float(text: &str) -> f64 {
    let t = text.trim_end_matches(['f', 'F']);
    let t = t.trim_end_matches(['e', 'E']);
    let t = if t.ends_with(['+', '-']) { &t[..t.len() - 1] } else { t };
    let t = t.trim_end_matches(['e', 'E']);
    let fixed;
    let t = if t.starts_with('.') {
        fixed = format!("0{t}");
        &fixed
    } else {
        t
    };
    t.parse::<f64>().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_cpp() {
        assert_eq!(format_double(0.1), "0.1");
        assert_eq!(format_double(1.0), "1");
        assert_eq!(format_double(-0.0), "-0");
        assert_eq!(format_double(1e20), "1e+20");
        assert_eq!(format_double(1e-5), "1e-05");
        assert_eq!(format_double(123456789012345678.0), "1.2345678901234568e+17");
        assert_eq!(format_double(0.30000000000000004), "0.30000000000000004");
        assert_eq!(format_double(f64::NAN), "nan");
        assert_eq!(format_double(f64::NEG_INFINITY), "-inf");
        assert_eq!(format_float(3.192837), "3.192837");
        assert_eq!(format_float(0.1), "0.1");
        assert_eq!(format_float(3.4028235e38), "3.40282347e+38");
        assert_eq!(format_float(1e10), "1e+10");
        assert_eq!(format_float(f32::from_bits(1)), "1.40129846e-45");
        assert_eq!(format_double(5e-324), "4.94065645841247e-324");
    }

    #[test]
    fn integer_tokens() {
        assert_eq!(parse_uint("0"), Some(0));
        assert_eq!(parse_uint("0x1F"), Some(31));
        assert_eq!(parse_uint("017"), Some(15));
        assert_eq!(parse_uint("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_uint("18446744073709551616"), None);
        assert_eq!(parse_float("1.5f"), 1.5);
        assert_eq!(parse_float(".5"), 0.5);
        assert_eq!(parse_float("1e"), 1.0);
    }
}
