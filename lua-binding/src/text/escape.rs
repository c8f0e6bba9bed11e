//! String escapes of the text format: C-style escaping on output (as
//! protobuf C++'s `CEscape` and Python's `text_encoding.CEscape` write it)
//! and every escape the C++ tokenizer reads on input.

/// Append `b` escaped: `\n \r \t \" \' \\` by name, other bytes below 0x20
/// or from 0x7F up as three octal digits, the rest as they are.
pub fn escape_into(b: &[u8], out: &mut String) {
    for &c in b {
        match c {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7E => out.push(c as char),
            _ => {
                out.push('\\');
                out.push((b'0' + (c >> 6)) as char);
                out.push((b'0' + ((c >> 3) & 7)) as char);
                out.push((b'0' + (c & 7)) as char);
            }
        }
    }
}

fn hex(c: u8) -> Option<u32> {
    (c as char).to_digit(16)
}

/// Read exactly `n` hex digits at `s[i..]`.
fn hex_n(s: &[u8], i: usize, n: usize) -> Option<u32> {
    let d = s.get(i..i + n)?;
    d.iter().try_fold(0u32, |acc, &c| Some(acc << 4 | hex(c)?))
}

/// Append code point `cp` as UTF-8; a surrogate (alone or in a pair) is
/// refused, as protobuf's recommended behaviour is.
fn push_utf8(cp: u32, out: &mut Vec<u8>) -> Result<(), &'static str> {
    let ch = char::from_u32(cp).ok_or("Invalid Unicode escape: surrogate code points are not allowed.")?;
    let mut buf = [0u8; 4];
    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    Ok(())
}

/// Decode the body of a string literal (between its quotes). Errors name
/// the bad escape.
pub fn unescape(s: &[u8]) -> Result<Vec<u8>, &'static str> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        i += 1;
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = s.get(i) else { return Err("Invalid escape sequence in string literal.") };
        i += 1;
        match e {
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'\\' | b'?' | b'\'' | b'"' => out.push(e),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match s.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            b'x' | b'X' => {
                let Some(mut v) = s.get(i).and_then(|&d| hex(d)) else {
                    return Err("Expected hex digits for escape sequence.");
                };
                i += 1;
                if let Some(d) = s.get(i).and_then(|&d| hex(d)) {
                    v = v * 16 + d;
                    i += 1;
                }
                out.push(v as u8);
            }
            b'u' => {
                let Some(cp) = hex_n(s, i, 4) else {
                    return Err("Expected four hex digits for \\u escape sequence.");
                };
                i += 4;
                push_utf8(cp, &mut out)?;
            }
            b'U' => {
                let Some(cp) = hex_n(s, i, 8).filter(|&cp| cp <= 0x10FFFF) else {
                    return Err("Expected eight hex digits up to 10ffff for \\U escape sequence");
                };
                i += 8;
                push_utf8(cp, &mut out)?;
            }
            _ => return Err("Invalid escape sequence in string literal."),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_round_trip() {
        let all: Vec<u8> = (0..=255).collect();
        let mut s = String::new();
        escape_into(&all, &mut s);
        assert_eq!(unescape(s.as_bytes()).unwrap(), all);
        let mut s = String::new();
        escape_into(b"a\"b'\\\n\x01\xff", &mut s);
        assert_eq!(s, "a\\\"b\\'\\\\\\n\\001\\377");
    }

    #[test]
    fn every_escape_reads() {
        assert_eq!(
            unescape(b"\\a\\b\\f\\v\\?\\x41\\101\\u00e9\\U0001F600").unwrap(),
            b"\x07\x08\x0c\x0b?AA\xc3\xa9\xf0\x9f\x98\x80"
        );
        assert!(unescape(b"\\ud83d\\ude00").is_err());
        assert!(unescape(b"\\ud800").is_err());
        assert!(unescape(b"\\U0000dc00").is_err());
        assert!(unescape(b"\\q").is_err());
        assert!(unescape(b"\\u12").is_err());
        assert!(unescape(b"\\U00110000").is_err());
    }
}
