//! The text format's tokens, as protobuf C++'s `io::Tokenizer` reads them
//! for `TextFormat`: `#` comments, identifiers, integers (decimal, `0x`
//! hex, leading-`0` octal), floats (with an optional `f`/`F` suffix),
//! single- or double-quoted strings with every C escape, and one-character
//! symbols. Positions are 1-based line and column.

use super::escape::unescape;

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An identifier (`[A-Za-z_][A-Za-z0-9_]*`).
    Ident,
    /// An integer literal.
    Int,
    /// A float literal.
    Float,
    /// A string literal; its decoded bytes are in [`Token::bytes`].
    Str,
    /// Any other single character.
    Symbol,
    /// The end of the input.
    End,
}

/// One token.
#[derive(Clone, Debug)]
pub struct Token {
    /// Its kind.
    pub kind: Tok,
    /// Its text as written (for strings: with the quotes).
    pub text: String,
    /// A string literal's decoded bytes.
    pub bytes: Vec<u8>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

/// A tokenizer error: where and what.
#[derive(Debug)]
pub struct TokError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// What is wrong.
    pub what: String,
}

/// A cursor over the input.
pub struct Tokenizer<'a> {
    s: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
}

impl<'a> Tokenizer<'a> {
    /// A tokenizer over `s`.
    pub fn new(s: &'a [u8]) -> Self {
        Tokenizer { s, pos: 0, line: 1, line_start: 0 }
    }

    fn col(&self, at: usize) -> u32 {
        (at - self.line_start) as u32 + 1
    }

    fn err(&self, at: usize, what: impl Into<String>) -> TokError {
        TokError { line: self.line, col: self.col(at), what: what.into() }
    }

    fn peek(&self, k: usize) -> u8 {
        self.s.get(self.pos + k).copied().unwrap_or(0)
    }

    /// Skip whitespace and comments.
    fn skip_blank(&mut self) {
        while self.pos < self.s.len() {
            match self.s[self.pos] {
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.pos;
                }
                b' ' | b'\t' | b'\r' | 0x0B | 0x0C => self.pos += 1,
                b'#' => {
                    while self.pos < self.s.len() && self.s[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// The next token.
    pub fn next_token(&mut self) -> Result<Token, TokError> {
        self.skip_blank();
        let start = self.pos;
        let (line, col) = (self.line, self.col(start));
        let tok = |kind, this: &Self, bytes| Token {
            kind,
            text: String::from_utf8_lossy(&this.s[start..this.pos]).into_owned(),
            bytes,
            line,
            col,
        };
        let Some(&c) = self.s.get(self.pos) else { return Ok(tok(Tok::End, self, Vec::new())) };
        if c.is_ascii_alphabetic() || c == b'_' {
            while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
                self.pos += 1;
            }
            return Ok(tok(Tok::Ident, self, Vec::new()));
        }
        if c.is_ascii_digit() || (c == b'.' && self.peek(1).is_ascii_digit()) {
            let kind = self.number()?;
            return Ok(tok(kind, self, Vec::new()));
        }
        if c == b'"' || c == b'\'' {
            let bytes = self.string(c)?;
            return Ok(tok(Tok::Str, self, bytes));
        }
        if !(0x20..0x80).contains(&c) {
            return Err(self.err(start, format!("Invalid control characters encountered in text (byte 0x{c:02x}).")));
        }
        self.pos += 1;
        Ok(tok(Tok::Symbol, self, Vec::new()))
    }

    fn digits(&mut self, ok: fn(u8) -> bool) -> usize {
        let from = self.pos;
        while ok(self.peek(0)) {
            self.pos += 1;
        }
        self.pos - from
    }

    /// A number starting at `pos`: its kind, with C++'s checks.
    fn number(&mut self) -> Result<Tok, TokError> {
        let start = self.pos;
        let mut kind = Tok::Int;
        if self.peek(0) == b'0' && matches!(self.peek(1), b'x' | b'X') {
            self.pos += 2;
            if self.digits(|c| c.is_ascii_hexdigit()) == 0 {
                return Err(self.err(self.pos, "\"0x\" must be followed by hex digits."));
            }
        } else if self.peek(0) == b'0' && self.peek(1).is_ascii_digit() {
            self.pos += 1;
            self.digits(|c| c.is_ascii_digit());
            if self.s[start + 1..self.pos].iter().any(|&c| c > b'7') {
                return Err(self.err(start, "Numbers starting with leading zero must be in octal."));
            }
        } else {
            self.digits(|c| c.is_ascii_digit());
            if self.peek(0) == b'.' {
                self.pos += 1;
                kind = Tok::Float;
                self.digits(|c| c.is_ascii_digit());
            }
            if matches!(self.peek(0), b'e' | b'E') {
                self.pos += 1;
                kind = Tok::Float;
                if matches!(self.peek(0), b'+' | b'-') {
                    self.pos += 1;
                }
                if self.digits(|c| c.is_ascii_digit()) == 0 {
                    return Err(self.err(self.pos, "\"e\" must be followed by exponent."));
                }
            }
            if matches!(self.peek(0), b'f' | b'F') {
                self.pos += 1;
                kind = Tok::Float;
            }
        }
        let c = self.peek(0);
        if c.is_ascii_alphanumeric() || c == b'_' {
            return Err(self.err(self.pos, "Need space between number and identifier."));
        }
        if c == b'.' {
            return Err(self.err(self.pos, "Already saw decimal point or exponent; can't have another one."));
        }
        Ok(kind)
    }

    /// A string literal quoted by `q`, decoded.
    fn string(&mut self, q: u8) -> Result<Vec<u8>, TokError> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.s.get(self.pos) {
                None => return Err(self.err(start, "Unexpected end of string.")),
                Some(b'\n') => return Err(self.err(self.pos, "String literals cannot cross line boundaries.")),
                Some(b'\\') => self.pos += 2,
                Some(&c) if c == q => break,
                Some(_) => self.pos += 1,
            }
        }
        if self.pos > self.s.len() {
            return Err(self.err(start, "Unexpected end of string."));
        }
        let body = &self.s[start + 1..self.pos];
        self.pos += 1;
        unescape(body).map_err(|e| self.err(start, e))
    }
}
