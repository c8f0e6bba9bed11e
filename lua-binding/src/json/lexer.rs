//! Strict JSON (RFC 8259) tokens over a byte slice.
//!
//! No comments, trailing commas, single quotes, leading zeros or `+`
//! signs; strings must be valid UTF-8, escapes well formed, surrogates
//! paired. Strings without escapes are returned as slices of the input;
//! escaped ones are unescaped into a scratch buffer.

use super::error::JsonError;

/// What the next value is, judged by its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peek {
    /// `{`
    Object,
    /// `[`
    Array,
    /// `"`
    String,
    /// `-` or a digit
    Number,
    /// `true` / `false`
    Bool,
    /// `null`
    Null,
}

/// A string token: where its text lives.
#[derive(Clone, Copy, Debug)]
pub struct Str {
    start: usize,
    end: usize,
    /// The text is in the scratch buffer (it had escapes).
    escaped: bool,
    /// Byte offset of the opening quote.
    pub pos: usize,
}

/// An object key's identity for the field tables: its length, its first
/// eight bytes and (when longer than eight) its last eight, as
/// little-endian words, zero beyond the key. Keys of up to 16 bytes are
/// equal when their words are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyWords {
    /// The first eight bytes (fewer: zero above them).
    pub w0: u64,
    /// The last eight bytes when the key is longer than eight, else 0.
    pub w1: u64,
    /// The key's length.
    pub len: usize,
}

impl KeyWords {
    /// The words of `key`.
    pub fn of(key: &[u8]) -> Self {
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("eight bytes"));
        let len = key.len();
        if len >= 8 {
            let w1 = if len > 8 { word(&key[len - 8..]) } else { 0 };
            return KeyWords { w0: word(&key[..8]), w1, len };
        }
        let w0 = key.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b));
        KeyWords { w0, w1: 0, len }
    }
}

/// A field's JSON name as compact text spells a key: the quoted name and
/// (when it fits) the colon after it, as words to compare with the input
/// in place (fields mostly come in order, so the parser expects the one
/// after the previous key's first).
#[derive(Clone, Copy, Debug, Default)]
pub struct Expect {
    /// The first eight bytes, under `m0`.
    pub w0: u64,
    /// Which bytes of the first word count.
    pub m0: u64,
    /// With `n` over 8: the last eight bytes.
    pub w1: u64,
    /// The bytes compared, up to 16; 0: none (the name is longer or
    /// holds a byte that JSON escapes).
    pub n: u32,
    /// The colon is among the bytes compared (else it is still to read).
    pub colon: bool,
}

impl Expect {
    /// The words of `name`'s quoted key and colon.
    pub fn of(name: &[u8]) -> Self {
        let mut q: Vec<u8> = [&b"\""[..], name, b"\":"].concat();
        let colon = q.len() <= 16;
        if !colon {
            q.pop();
        }
        let n = q.len();
        if n > 16 || name.iter().any(|&b| b == b'"' || b == b'\\' || b < 0x20) {
            return Expect::default();
        }
        let word = |b: &[u8]| b.iter().rev().fold(0u64, |w, &x| w << 8 | u64::from(x));
        let m0 = if n >= 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 };
        let w1 = if n > 8 { word(&q[n - 8..]) } else { 0 };
        Expect { w0: word(&q[..n.min(8)]), m0, w1, n: n as u32, colon }
    }
}

/// The tokenizer.
pub struct Lexer<'a> {
    /// The whole input.
    pub src: &'a [u8],
    /// The next byte to read.
    pub pos: usize,
    /// The text of the last string with escapes.
    scratch: &'a mut Vec<u8>,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`, unescaping strings into `scratch`
    /// (kept between calls so that a steady state allocates nothing).
    pub fn new(src: &'a [u8], scratch: &'a mut Vec<u8>) -> Self {
        Lexer { src, pos: 0, scratch }
    }

    /// An error at byte `pos`.
    pub fn err_at(&self, pos: usize, what: impl Into<String>) -> JsonError {
        JsonError::new(what).at_text(self.src, pos)
    }

    /// An error at the current position.
    pub fn err(&self, what: impl Into<String>) -> JsonError {
        self.err_at(self.pos, what)
    }

    /// Skip whitespace; the next byte, if any.
    #[inline]
    pub fn ws(&mut self) -> Option<u8> {
        while let Some(&b) = self.src.get(self.pos) {
            if !is_ws(b) {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    /// The kind of the next value.
    pub fn peek(&mut self) -> Result<Peek, JsonError> {
        match self.ws() {
            Some(b'{') => Ok(Peek::Object),
            Some(b'[') => Ok(Peek::Array),
            Some(b'"') => Ok(Peek::String),
            Some(b'-' | b'0'..=b'9') => Ok(Peek::Number),
            Some(b't' | b'f') => Ok(Peek::Bool),
            Some(b'n') => Ok(Peek::Null),
            Some(_) => Err(self.err("expected a JSON value")),
            None => Err(self.err("unexpected end of input")),
        }
    }

    /// Consume `byte` (after whitespace) or fail.
    #[inline]
    pub fn expect(&mut self, byte: u8) -> Result<(), JsonError> {
        // Compact text: the byte comes next.
        if self.src.get(self.pos) == Some(&byte) {
            self.pos += 1;
            return Ok(());
        }
        self.expect_spaced(byte)
    }

    /// [`Lexer::expect`] after whitespace, or its error.
    #[inline(never)]
    fn expect_spaced(&mut self, byte: u8) -> Result<(), JsonError> {
        if self.ws() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(format!("expected '{}'", byte as char)))
        }
    }

    /// After the opening `{`/`[` or a member: `true` if another member
    /// follows (its comma consumed), `false` at `close` (consumed).
    /// `first` is true right after the opening bracket.
    #[inline]
    pub fn more(&mut self, close: u8, first: bool) -> Result<bool, JsonError> {
        // Compact text: a comma right before the next value, the closing
        // bracket, or (first) the first value.
        match self.src.get(self.pos) {
            Some(b',') if !first && self.src.get(self.pos + 1).is_some_and(|&b| !is_ws(b) && b != close) => {
                self.pos += 1;
                return Ok(true);
            }
            Some(&b) if b == close => {
                self.pos += 1;
                return Ok(false);
            }
            Some(&b) if first && !is_ws(b) => return Ok(true),
            _ => {}
        }
        self.more_spaced(close, first)
    }

    /// [`Lexer::more`] for an object's members (`}`): in compact text the
    /// next key's quote comes right after the comma.
    #[inline(always)]
    pub fn more_members(&mut self, first: bool) -> Result<bool, JsonError> {
        match self.src.get(self.pos) {
            Some(b',') if !first && self.src.get(self.pos + 1) == Some(&b'"') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b'}') => {
                self.pos += 1;
                Ok(false)
            }
            Some(b'"') if first => Ok(true),
            _ => self.more_spaced(b'}', first),
        }
    }

    /// [`Lexer::more`] in general: whitespace, trailing commas, errors.
    #[inline(never)]
    fn more_spaced(&mut self, close: u8, first: bool) -> Result<bool, JsonError> {
        match self.ws() {
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            Some(b',') if !first => {
                self.pos += 1;
                if self.ws() == Some(close) {
                    return Err(self.err("trailing comma"));
                }
                Ok(true)
            }
            _ if first => Ok(true),
            None => Err(self.err("unexpected end of input")),
            _ => Err(self.err(format!("expected ',' or '{}'", close as char))),
        }
    }

    /// Consume a literal word (`true`, `false`, `null`).
    fn word(&mut self, w: &[u8]) -> bool {
        if self.src[self.pos..].starts_with(w) {
            let next = self.src.get(self.pos + w.len()).copied();
            if !next.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
                self.pos += w.len();
                return true;
            }
        }
        false
    }

    /// Consume `null` if it comes next.
    pub fn null(&mut self) -> bool {
        self.ws() == Some(b'n') && self.word(b"null")
    }

    /// Consume `true`/`false`.
    pub fn bool(&mut self) -> Result<bool, JsonError> {
        self.ws();
        if self.word(b"true") {
            Ok(true)
        } else if self.word(b"false") {
            Ok(false)
        } else {
            Err(self.err("expected true or false"))
        }
    }

    /// Consume `null` or fail.
    pub fn expect_null(&mut self) -> Result<(), JsonError> {
        if self.null() { Ok(()) } else { Err(self.err("expected null")) }
    }

    /// Consume a number; its text (validated against the JSON grammar).
    pub fn number(&mut self) -> Result<&'a [u8], JsonError> {
        self.ws();
        let start = self.pos;
        match number_len(&self.src[start..]) {
            Some(n) => {
                self.pos += n;
                if self.src.get(self.pos).is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))
                {
                    return Err(self.err_at(start, "malformed number"));
                }
                Ok(&self.src[start..start + n])
            }
            None => Err(self.err_at(start, "malformed number")),
        }
    }

    /// The text of a string token.
    pub fn text(&self, s: &Str) -> &[u8] {
        if s.escaped { &self.scratch[s.start..s.end] } else { &self.src[s.start..s.end] }
    }

    /// Consume a string (the scratch buffer is reused by the next one).
    #[inline(never)]
    pub fn string(&mut self) -> Result<Str, JsonError> {
        if let Some((open, w, special)) = self.first_word() {
            if special == 0 {
                return self.plain_string(open, w);
            }
            if let Some((s, _)) = self.short_end(open, w, special) {
                return Ok(s);
            }
        }
        self.long_string()
    }

    /// [`Lexer::string`] with its short case inline, for the hottest callers.
    #[inline(always)]
    pub fn string_inline(&mut self) -> Result<Str, JsonError> {
        if let Some((open, w, special)) = self.first_word()
            && let Some((s, _)) = self.short_end(open, w, special)
        {
            return Ok(s);
        }
        self.string()
    }

    /// Consume an object's key: its string and its [`KeyWords`].
    pub fn key(&mut self) -> Result<(Str, KeyWords), JsonError> {
        let s = self.string()?;
        Ok((s, KeyWords::of(self.text(&s))))
    }

    /// A key right here (compact text) of under eight ASCII bytes without
    /// escapes: consumed; its bytes as a word (zero above them) and its
    /// length. `None` (nothing consumed) for any other key.
    #[inline(always)]
    pub fn short_key(&mut self) -> Option<(u64, usize)> {
        self.short_string()
    }

    /// A string right here (compact text) of under eight ASCII bytes
    /// without escapes: consumed; its bytes as a word (zero above them)
    /// and its length. `None` (nothing consumed) for any other string.
    #[inline(always)]
    pub fn short_string(&mut self) -> Option<(u64, usize)> {
        let (open, w, special) = self.first_word()?;
        let (s, w0) = self.short_end(open, w, special)?;
        Some((w0, s.end - s.start))
    }

    /// The key spelled as `e` (and its colon with `e.colon`) comes right
    /// here (compact text): consumed.
    #[inline(always)]
    pub fn expected_key(&mut self, e: &Expect) -> bool {
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("eight bytes"));
        let (open, n) = (self.pos, e.n as usize);
        if n == 0 {
            return false;
        }
        match self.src.get(open..open + 8) {
            Some(a) if word(a) & e.m0 == e.w0 => {}
            _ => return false,
        }
        if n > 8 {
            match self.src.get(open + n - 8..open + n) {
                Some(b) if word(b) == e.w1 => {}
                _ => return false,
            }
        }
        self.pos = open + n;
        true
    }

    /// Whether `null` comes next (after whitespace).
    #[inline(always)]
    pub fn at_null(&mut self) -> bool {
        match self.src.get(self.pos) {
            Some(b'n') => true,
            Some(&b) if is_ws(b) => self.ws() == Some(b'n'),
            _ => false,
        }
    }

    /// In compact text, a string starts here: the quote's offset, the
    /// eight bytes after it as a word (zero past the end of the input,
    /// which marks as a control byte) and their [`special_bytes`].
    #[inline(always)]
    fn first_word(&self) -> Option<(usize, u64, u64)> {
        let open = self.pos;
        if self.src.get(open) != Some(&b'"') {
            return None;
        }
        let w = match self.src.get(open + 1..open + 9) {
            Some(word) => u64::from_le_bytes(word.try_into().expect("eight bytes")),
            None => tail_word(self.src, open + 1),
        };
        Some((open, w, special_bytes(w)))
    }

    /// The string whose first word is `w`: consumed if a special byte
    /// (`special`) is in the word, the first one is its closing quote and
    /// the bytes before it are ASCII. Its bytes as a word, zero above them.
    #[inline(always)]
    fn short_end(&mut self, open: usize, w: u64, special: u64) -> Option<(Str, u64)> {
        if special == 0 {
            return None;
        }
        // The lowest mark is exact (see `special_bytes`): bytes 0..k are plain.
        let k = (special.trailing_zeros() / 8) as usize;
        let text = w & ((1u64 << (8 * k)) - 1);
        let start = open + 1;
        if self.src.get(start + k) != Some(&b'"') || text & splat(0x80) != 0 {
            return None;
        }
        self.pos = start + k + 1;
        Some((Str { start, end: start + k, escaped: false, pos: open }, text))
    }

    /// [`Lexer::string`] of eight plain bytes or more, `w` the first eight.
    #[inline(always)]
    fn plain_string(&mut self, open: usize, w: u64) -> Result<Str, JsonError> {
        let start = open + 1;
        let (i, high) = plain_run(self.src, start + 8);
        if high || w & splat(0x80) != 0 || self.src.get(i) != Some(&b'"') {
            return self.long_string();
        }
        self.pos = i + 1;
        Ok(Str { start, end: i, escaped: false, pos: open })
    }

    /// [`Lexer::string`] in general: whitespace first, long strings,
    /// escapes, UTF-8, errors.
    #[inline(never)]
    fn long_string(&mut self) -> Result<Str, JsonError> {
        if self.ws() != Some(b'"') {
            return Err(self.err("expected a string"));
        }
        let open = self.pos;
        self.pos += 1;
        let start = self.pos;
        // Fast path: no escapes. UTF-8 is checked only if a byte is not ASCII.
        let (i, high) = plain_run(self.src, start);
        if high {
            self.check_utf8(start, i)?;
        }
        match self.src.get(i) {
            Some(b'"') => {
                self.pos = i + 1;
                return Ok(Str { start, end: i, escaped: false, pos: open });
            }
            Some(b'\\') => {}
            Some(_) => return Err(self.err_at(i, "control character in string")),
            None => return Err(self.err_at(open, "unterminated string")),
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.src[start..i]);
        self.pos = i;
        self.escaped_rest(open)
    }

    fn check_utf8(&self, start: usize, end: usize) -> Result<(), JsonError> {
        match simdutf8::compat::from_utf8(&self.src[start..end]) {
            Ok(_) => Ok(()),
            Err(e) => Err(self.err_at(start + e.valid_up_to(), "invalid UTF-8 in string")),
        }
    }

    /// The rest of a string with escapes, into the scratch buffer.
    fn escaped_rest(&mut self, open: usize) -> Result<Str, JsonError> {
        loop {
            let seg = self.pos;
            let (end, high) = plain_run(self.src, seg);
            self.pos = end;
            if high {
                self.check_utf8(seg, end)?;
            }
            self.scratch.extend_from_slice(&self.src[seg..self.pos]);
            match self.src.get(self.pos) {
                None => return Err(self.err_at(open, "unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Str { start: 0, end: self.scratch.len(), escaped: true, pos: open });
                }
                Some(b'\\') => self.escape()?,
                Some(_) => return Err(self.err("control character in string")),
            }
        }
    }

    /// One escape sequence (at the backslash).
    fn escape(&mut self) -> Result<(), JsonError> {
        let at = self.pos;
        let c = self.src.get(self.pos + 1).copied();
        self.pos += 2;
        let byte = match c {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 8,
            Some(b'f') => 12,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => {
                let hi = self.hex4(at)?;
                let cp = if (0xD800..0xDC00).contains(&hi) {
                    if self.src.get(self.pos) != Some(&b'\\') || self.src.get(self.pos + 1) != Some(&b'u') {
                        return Err(self.err_at(at, "unpaired surrogate in string"));
                    }
                    self.pos += 2;
                    let lo = self.hex4(at)?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return Err(self.err_at(at, "unpaired surrogate in string"));
                    }
                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                } else if (0xDC00..0xE000).contains(&hi) {
                    return Err(self.err_at(at, "unpaired surrogate in string"));
                } else {
                    hi
                };
                let ch = char::from_u32(cp).ok_or_else(|| self.err_at(at, "invalid \\u escape"))?;
                let mut b = [0u8; 4];
                self.scratch.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                return Ok(());
            }
            _ => return Err(self.err_at(at, "invalid escape in string")),
        };
        self.scratch.push(byte);
        Ok(())
    }

    fn hex4(&mut self, at: usize) -> Result<u32, JsonError> {
        let digits = self.src.get(self.pos..self.pos + 4).ok_or_else(|| self.err_at(at, "invalid \\u escape"))?;
        let mut v = 0u32;
        for &d in digits {
            let n = (d as char).to_digit(16).ok_or_else(|| self.err_at(at, "invalid \\u escape"))?;
            v = v << 4 | n;
        }
        self.pos += 4;
        Ok(v)
    }

    /// Skip one value of any kind (for ignored fields), nesting bounded
    /// by `depth`.
    pub fn skip_value(&mut self, depth: u32) -> Result<(), JsonError> {
        if depth == 0 {
            return Err(self.err("nesting too deep"));
        }
        match self.peek()? {
            Peek::Object => {
                self.pos += 1;
                let mut first = true;
                while self.more(b'}', first)? {
                    first = false;
                    self.string()?;
                    self.expect(b':')?;
                    self.skip_value(depth - 1)?;
                }
            }
            Peek::Array => {
                self.pos += 1;
                let mut first = true;
                while self.more(b']', first)? {
                    first = false;
                    self.skip_value(depth - 1)?;
                }
            }
            Peek::String => {
                self.string()?;
            }
            Peek::Number => {
                self.number()?;
            }
            Peek::Bool => {
                self.bool()?;
            }
            Peek::Null => self.expect_null()?,
        }
        Ok(())
    }

    /// Only whitespace remains.
    pub fn end(&mut self) -> Result<(), JsonError> {
        match self.ws() {
            None => Ok(()),
            Some(_) => Err(self.err("unexpected text after the JSON value")),
        }
    }
}

/// The fewer than eight bytes of `src` from `from` to its end as a
/// little-endian word (zero above them). Mostly the input has eight bytes
/// or more: its last word, shifted down, is one load.
#[inline(always)]
fn tail_word(src: &[u8], from: usize) -> u64 {
    let n = src.len() - from;
    match src.len().checked_sub(8) {
        Some(at) if n > 0 => u64::from_le_bytes(src[at..].try_into().expect("eight bytes")) >> (8 * (8 - n)),
        _ => tail_word_short(&src[from..]),
    }
}

/// [`tail_word`] of an input under eight bytes, or of nothing.
#[inline(never)]
fn tail_word_short(s: &[u8]) -> u64 {
    s.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b))
}

/// Bytes with every byte of the word `b` (`0x0101… * b`).
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// The bytes of `w` that are `"`, `\\` or a control character (below
/// 0x20), as their high bits: the classic "has a zero byte" and "has a
/// byte less than n" word tests. A borrow can mark a byte above a marked
/// one, never below, so the lowest mark is exact.
#[inline(always)]
fn special_bytes(w: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(splat(1)) & !v & splat(0x80);
    let quote = zero(w ^ splat(b'"'));
    let backslash = zero(w ^ splat(b'\\'));
    let control = w.wrapping_sub(splat(0x20)) & !w & splat(0x80);
    quote | backslash | control
}

/// From `start`, the index of the first `"`, `\\` or control byte of
/// `src` (or its end), and whether a byte before it is not ASCII. Eight
/// bytes a step (the input's bytes in memory order, little-endian words).
#[inline]
pub fn plain_run(src: &[u8], start: usize) -> (usize, bool) {
    let mut i = start;
    let mut high = 0u64;
    while let Some(word) = src.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let special = special_bytes(w);
        if special != 0 {
            let k = special.trailing_zeros() / 8;
            // The bytes before the first special one.
            high |= w & ((1u64 << (8 * k)) - 1);
            return (i + k as usize, high & splat(0x80) != 0);
        }
        high |= w;
        i += 8;
    }
    let mut high = high & splat(0x80) != 0;
    while let Some(&b) = src.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        high |= b >= 0x80;
        i += 1;
    }
    (i, high)
}

/// The length of the JSON number at the start of `s`, if one is there:
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
pub fn number_len(s: &[u8]) -> Option<usize> {
    let digits = |i: usize| s[i.min(s.len())..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut i = usize::from(s.first() == Some(&b'-'));
    match s.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i += digits(i),
        _ => return None,
    }
    if s.get(i) == Some(&b'.') {
        let n = digits(i + 1);
        if n == 0 {
            return None;
        }
        i += 1 + n;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let n = digits(i);
        if n == 0 {
            return None;
        }
        i += n;
    }
    Some(i)
}
