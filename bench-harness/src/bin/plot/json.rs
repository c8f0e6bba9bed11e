//! A minimal JSON reader for the results files: an array of flat objects
//! with string, number, boolean and null values, exactly what the matrix
//! runner and the peers script write.

use std::collections::BTreeMap;
use std::error::Error;

use crate::Res;

/// One JSON value of the flat result format.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A string.
    Str(String),
    /// A number.
    Num(f64),
    /// `true`, `false` or `null`: accepted, never used.
    Other,
}

/// One JSON object: key to value.
pub(crate) type Object = BTreeMap<String, Value>;

/// A minimal parser for an array of flat objects with string, number,
/// boolean and null values: exactly the runner's output format.
pub(crate) struct Parser<'a> {
    /// The text.
    s: &'a [u8],
    /// Current byte offset.
    i: usize,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Parser { s: text.as_bytes(), i: 0 }
    }

    /// An error naming the offset.
    fn err(&self, what: &str) -> Box<dyn Error> {
        format!("JSON: {what} at byte {}", self.i).into()
    }

    /// Skips whitespace.
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    /// Skips whitespace and consumes `c`, or fails.
    fn expect(&mut self, c: u8) -> Res<()> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected '{}'", c as char)))
        }
    }

    /// Skips whitespace and consumes `c` if it is next.
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// The whole document: `[ {..}, ... ]`.
    pub(crate) fn array(&mut self) -> Res<Vec<Object>> {
        let mut rows = Vec::new();
        self.expect(b'[')?;
        if !self.eat(b']') {
            loop {
                rows.push(self.object()?);
                if self.eat(b']') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        self.ws();
        if self.i != self.s.len() {
            return Err(self.err("trailing data"));
        }
        Ok(rows)
    }

    /// One flat object.
    fn object(&mut self) -> Res<Object> {
        let mut obj = Object::new();
        self.expect(b'{')?;
        if self.eat(b'}') {
            return Ok(obj);
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.expect(b':')?;
            let value = self.value()?;
            obj.insert(key, value);
            if self.eat(b'}') {
                return Ok(obj);
            }
            self.expect(b',')?;
        }
    }

    /// A scalar value.
    fn value(&mut self) -> Res<Value> {
        self.ws();
        match self.s.get(self.i) {
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b't') => self.word("true"),
            Some(b'f') => self.word("false"),
            Some(b'n') => self.word("null"),
            Some(c) if *c == b'-' || c.is_ascii_digit() => {
                let start = self.i;
                while self.i < self.s.len() && matches!(self.s[self.i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i])?;
                text.parse().map(Value::Num).map_err(|_| self.err("bad number"))
            }
            _ => Err(self.err("expected a string, number, true, false or null (nested values are not supported)")),
        }
    }

    /// The literal `w`.
    fn word(&mut self, w: &str) -> Res<Value> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(Value::Other)
        } else {
            Err(self.err("bad literal"))
        }
    }

    /// A string with the usual escapes (`\uXXXX` outside the BMP as a pair).
    fn string(&mut self) -> Res<String> {
        if self.s.get(self.i) != Some(&b'"') {
            return Err(self.err("expected a string"));
        }
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else { return Err(self.err("unterminated string")) };
            self.i += 1;
            match c {
                b'"' => return Ok(String::from_utf8(out)?),
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else { return Err(self.err("unterminated escape")) };
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) && self.s[self.i..].starts_with(b"\\u") {
                                self.i += 2;
                                let lo = self.hex4()?;
                                0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF)
                            } else {
                                hi
                            };
                            char::from_u32(code).unwrap_or('\u{FFFD}')
                        }
                        _ => return Err(self.err("bad escape")),
                    };
                    out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                }
                _ => out.push(c),
            }
        }
    }

    /// Four hex digits of a `\u` escape.
    fn hex4(&mut self) -> Res<u32> {
        let digits = self.s.get(self.i..self.i + 4).ok_or_else(|| self.err("short \\u escape"))?;
        let v = u32::from_str_radix(std::str::from_utf8(digits)?, 16).map_err(|_| self.err("bad \\u escape"))?;
        self.i += 4;
        Ok(v)
    }
}
