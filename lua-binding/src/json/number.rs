//! Numbers: exact integer parsing of JSON number literals (so that
//! `9223372036854775807` and `1e5` are read without going through a
//! double), float parsing, and shortest round-trip printing (`ryu`: for a
//! `float` field, the shortest text that reads back as the same `f32`).

use super::lexer::number_len;

/// Why a literal is not an integer of the wanted type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntError {
    /// Not a JSON number at all.
    Syntax,
    /// Has a nonzero fraction.
    Fraction,
    /// Outside the type's range.
    Range,
}

impl IntError {
    /// A short description.
    pub fn what(self) -> &'static str {
        match self {
            IntError::Syntax => "not a number",
            IntError::Fraction => "not an integer",
            IntError::Range => "integer out of range",
        }
    }
}

/// The integer a whole JSON number literal denotes (`-12`, `1.0`, `1e5`,
/// `100000.000`), as `i128` (enough for every 64-bit type); fractions and
/// values beyond 2^96 are refused.
pub fn int_literal(s: &[u8]) -> Result<i128, IntError> {
    if number_len(s) != Some(s.len()) {
        return Err(IntError::Syntax);
    }
    let neg = s[0] == b'-';
    let body = &s[usize::from(neg)..];
    // The common case, a plain integer (below 10^20: fits without checks).
    if body.len() <= 20 && body.iter().all(u8::is_ascii_digit) {
        let v = body.iter().fold(0i128, |v, &d| v * 10 + i128::from(d - b'0'));
        return Ok(if neg { -v } else { v });
    }
    let (mant, exp) = match body.iter().position(|&b| b == b'e' || b == b'E') {
        Some(p) => (&body[..p], &body[p + 1..]),
        None => (body, &b""[..]),
    };
    let (int_part, frac) = match mant.iter().position(|&b| b == b'.') {
        Some(p) => (&mant[..p], &mant[p + 1..]),
        None => (mant, &b""[..]),
    };
    // Exponent, saturated (a huge one only matters when digits are nonzero).
    let mut e: i64 = 0;
    let (eneg, edigits) = match exp.first() {
        Some(b'-') => (true, &exp[1..]),
        Some(b'+') => (false, &exp[1..]),
        _ => (false, exp),
    };
    for &d in edigits {
        e = (e * 10 + i64::from(d - b'0')).min(1 << 40);
    }
    if eneg {
        e = -e;
    }
    let digits = int_part.iter().chain(frac.iter()).copied();
    if digits.clone().all(|d| d == b'0') {
        return Ok(0);
    }
    // value = D * 10^(e - frac.len()), D the digit string.
    let scale = e - frac.len() as i64;
    let all: Vec<u8> = digits.collect();
    let (keep, shift) = if scale < 0 {
        let drop = (-scale) as usize;
        if drop >= all.len() {
            return Err(IntError::Fraction);
        }
        if all[all.len() - drop..].iter().any(|&d| d != b'0') {
            return Err(IntError::Fraction);
        }
        (&all[..all.len() - drop], 0)
    } else {
        (&all[..], scale as u64)
    };
    let mut v: u128 = 0;
    for &d in keep {
        v = v.checked_mul(10).and_then(|v| v.checked_add(u128::from(d - b'0'))).ok_or(IntError::Range)?;
        if v > 1 << 96 {
            return Err(IntError::Range);
        }
    }
    for _ in 0..shift {
        v = v.checked_mul(10).ok_or(IntError::Range)?;
        if v > 1 << 96 {
            return Err(IntError::Range);
        }
    }
    let v = v as i128;
    Ok(if neg { -v } else { v })
}

/// The `f64` a JSON number literal denotes; `None` when it is no JSON
/// number or overflows to infinity.
pub fn float_literal(s: &[u8]) -> Option<f64> {
    if number_len(s) != Some(s.len()) {
        return None;
    }
    // The grammar check above leaves only ASCII.
    let v: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
    v.is_finite().then_some(v)
}

/// Append the JSON text of a `double`: shortest round trip, integers
/// without `.0`; NaN and the infinities as protobuf's quoted names.
pub fn put_f64(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        let mut b = ryu::Buffer::new();
        put_trimmed(out, b.format_finite(v));
    } else {
        put_non_finite(out, v.is_nan(), v > 0.0);
    }
}

/// Append the JSON text of a `float`: the shortest text that reads back
/// as the same `f32`.
pub fn put_f32(out: &mut Vec<u8>, v: f32) {
    if v.is_finite() {
        let mut b = ryu::Buffer::new();
        put_trimmed(out, b.format_finite(v));
    } else {
        put_non_finite(out, v.is_nan(), v > 0.0);
    }
}

/// `1.0` → `1`, but `-0.0` stays (a JSON `-0` reads as the integer 0 in
/// some parsers, losing the sign).
fn put_trimmed(out: &mut Vec<u8>, s: &str) {
    let t = if s == "-0.0" { s } else { s.strip_suffix(".0").unwrap_or(s) };
    out.extend_from_slice(t.as_bytes());
}

fn put_non_finite(out: &mut Vec<u8>, nan: bool, pos: bool) {
    out.extend_from_slice(match (nan, pos) {
        (true, _) => b"\"NaN\"",
        (false, true) => b"\"Infinity\"",
        (false, false) => b"\"-Infinity\"",
    });
}

/// An integer the printer writes in decimal: its sign and magnitude.
pub trait Dec: Copy {
    /// Whether it is negative, and its absolute value.
    fn parts(self) -> (bool, u64);
}

impl Dec for i32 {
    #[inline(always)]
    fn parts(self) -> (bool, u64) {
        (self < 0, u64::from(self.unsigned_abs()))
    }
}

impl Dec for u32 {
    #[inline(always)]
    fn parts(self) -> (bool, u64) {
        (false, u64::from(self))
    }
}

impl Dec for i64 {
    #[inline(always)]
    fn parts(self) -> (bool, u64) {
        (self < 0, self.unsigned_abs())
    }
}

impl Dec for u64 {
    #[inline(always)]
    fn parts(self) -> (bool, u64) {
        (false, self)
    }
}

/// The most bytes [`put_dec_at`] writes: a sign and 20 digits.
pub const DEC_MAX: usize = 21;

/// The digit pairs `00` to `99`.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes the decimal text of `v` at `p` (no call, no intermediate
/// buffer: the printer's integers go straight into its output); returns
/// its length.
///
/// # Safety
/// [`DEC_MAX`] bytes writable at `p`.
#[inline(always)]
pub unsafe fn put_dec_at(p: *mut u8, v: impl Dec) -> usize {
    let (neg, mut a) = v.parts();
    let s = usize::from(neg);
    // SAFETY: at most DEC_MAX bytes from `p` are written (a sign and the
    // digits), the digits from the end back; the pair reads are within
    // PAIRS (indices below 200).
    unsafe {
        if neg {
            *p = b'-';
        }
        // Small values (the common ones) without counting digits.
        if a < 10 {
            *p.add(s) = b'0' + a as u8;
            return s + 1;
        }
        if a < 100 {
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(a as usize * 2), p.add(s), 2);
            return s + 2;
        }
        if a < 10_000 {
            let (hi, lo) = ((a / 100) as usize, (a % 100) as usize);
            let d = s + usize::from(hi >= 10);
            if hi >= 10 {
                std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(hi * 2), p.add(s), 2);
            } else {
                *p.add(s) = b'0' + hi as u8;
            }
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(lo * 2), p.add(d + 1), 2);
            return d + 3;
        }
        let n = s + a.ilog10() as usize + 1;
        let mut end = p.add(n);
        while a >= 100 {
            let r = (a % 100) as usize * 2;
            a /= 100;
            end = end.sub(2);
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(r), end, 2);
        }
        if a >= 10 {
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(a as usize * 2), end.sub(2), 2);
        } else {
            *end.sub(1) = b'0' + a as u8;
        }
        n
    }
}

/// Append an integer.
#[inline]
pub fn put_int(out: &mut Vec<u8>, v: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Append an integer as a JSON string (64-bit kinds, map keys).
#[inline]
pub fn put_quoted_int(out: &mut Vec<u8>, v: impl itoa::Integer) {
    out.push(b'"');
    put_int(out, v);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_literals() {
        assert_eq!(int_literal(b"9223372036854775807"), Ok(i64::MAX as i128));
        assert_eq!(int_literal(b"-9223372036854775808"), Ok(i64::MIN as i128));
        assert_eq!(int_literal(b"1e5"), Ok(100000));
        assert_eq!(int_literal(b"100000.000"), Ok(100000));
        assert_eq!(int_literal(b"1.5e1"), Ok(15));
        assert_eq!(int_literal(b"0.5"), Err(IntError::Fraction));
        assert_eq!(int_literal(b"1e-1"), Err(IntError::Fraction));
        assert_eq!(int_literal(b"0e-99999999999"), Ok(0));
        assert_eq!(int_literal(b"1e999999999999"), Err(IntError::Range));
        assert_eq!(int_literal(b"01"), Err(IntError::Syntax));
        assert_eq!(int_literal(b" 1"), Err(IntError::Syntax));
        assert_eq!(int_literal(b"+1"), Err(IntError::Syntax));
    }

    #[test]
    fn decimal_integers() {
        fn check(v: impl Dec + itoa::Integer) {
            let mut b = [0u8; DEC_MAX];
            // SAFETY: DEC_MAX bytes writable.
            let n = unsafe { put_dec_at(b.as_mut_ptr(), v) };
            assert_eq!(&b[..n], itoa::Buffer::new().format(v).as_bytes());
        }
        let mut x = 1u64;
        for _ in 0..20 {
            for d in [x - 1, x, x + 1, x.wrapping_mul(7)] {
                check(d);
                check(d as u32);
                check(d as i32);
                check(d as i64);
                check((d as i64).wrapping_neg());
                check((d as i32).wrapping_neg());
            }
            x = x.wrapping_mul(10);
        }
        for v in [i64::MIN, i64::MAX] {
            check(v);
        }
        for v in [i32::MIN, i32::MAX] {
            check(v);
        }
        check(u64::MAX);
        check(u32::MAX);
    }

    #[test]
    fn float_printing() {
        let s = |v: f64| {
            let mut o = Vec::new();
            put_f64(&mut o, v);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(s(1.0), "1");
        assert_eq!(s(-0.0), "-0.0");
        assert_eq!(s(0.1), "0.1");
        assert_eq!(s(f64::NAN), "\"NaN\"");
        let mut o = Vec::new();
        put_f32(&mut o, 0.1f32);
        assert_eq!(o, b"0.1");
        o.clear();
        put_f32(&mut o, f32::MAX);
        assert_eq!(o, b"3.4028235e38");
    }
}
