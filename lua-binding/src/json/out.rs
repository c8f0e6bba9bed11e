//! JSON text out: string escaping and the compact or indented layout.

use super::lexer::plain_run;

/// The output buffer and its layout state.
pub struct Out<'a> {
    /// The text so far.
    pub buf: &'a mut Vec<u8>,
    indent: Option<u8>,
    level: usize,
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl<'a> Out<'a> {
    /// Write into `buf`, compact (`indent` None) or indented.
    pub fn new(buf: &'a mut Vec<u8>, indent: Option<u8>) -> Self {
        Out { buf, indent, level: 0 }
    }

    /// Open an object or array (`{` / `[`).
    #[inline]
    pub fn open(&mut self, b: u8) {
        self.buf.push(b);
        self.level += 1;
    }

    /// Close an object or array; `empty` when it got no member.
    #[inline]
    pub fn close(&mut self, b: u8, empty: bool) {
        self.level -= 1;
        if !empty {
            self.newline();
        }
        self.buf.push(b);
    }

    fn newline(&mut self) {
        if let Some(n) = self.indent {
            self.buf.push(b'\n');
            let width = self.level * n as usize;
            self.buf.resize(self.buf.len() + width, b' ');
        }
    }

    /// Before a member or element: the comma (unless `first`), then the
    /// line break of the indented layout.
    #[inline]
    pub fn sep(&mut self, first: &mut bool) {
        if !*first {
            self.buf.push(b',');
        }
        *first = false;
        self.newline();
    }

    /// An object key and its colon.
    #[inline]
    pub fn key(&mut self, k: &[u8]) {
        if self.indent.is_none() && plain_run(k, 0).0 == k.len() {
            self.quoted(k, b":");
        } else {
            self.string(k);
            self.colon();
        }
    }

    /// `"s"` then `tail`, for an `s` with nothing to escape: one reserve,
    /// no per-byte capacity checks.
    #[inline]
    fn quoted(&mut self, s: &[u8], tail: &[u8]) {
        let n = s.len() + 2 + tail.len();
        self.buf.reserve(n);
        let len = self.buf.len();
        // SAFETY: `n` bytes are reserved past `len`, and all of them are
        // written before the length moves over them.
        unsafe {
            let p = self.buf.as_mut_ptr().add(len);
            p.write(b'"');
            std::ptr::copy_nonoverlapping(s.as_ptr(), p.add(1), s.len());
            p.add(1 + s.len()).write(b'"');
            std::ptr::copy_nonoverlapping(tail.as_ptr(), p.add(2 + s.len()), tail.len());
            self.buf.set_len(len + n);
        }
    }

    /// A JSON string of the bytes `s`, which must be UTF-8: the error
    /// when they are not. ASCII text with nothing to escape (the common
    /// case) is copied without a separate UTF-8 pass.
    #[inline]
    pub fn checked_string(&mut self, s: &[u8]) -> Result<(), usize> {
        let (plain, high) = plain_run(s, 0);
        if plain == s.len() && !high {
            self.quoted(s, b"");
            return Ok(());
        }
        match simdutf8::compat::from_utf8(s) {
            Ok(_) => {
                self.string(s);
                Ok(())
            }
            Err(e) => Err(e.valid_up_to()),
        }
    }

    /// The colon after a key.
    #[inline]
    pub fn colon(&mut self) {
        self.buf.push(b':');
        if self.indent.is_some() {
            self.buf.push(b' ');
        }
    }

    /// A JSON string of the UTF-8 text `s` (checked by the caller).
    pub fn string(&mut self, s: &[u8]) {
        // Most strings need no escape: one copy.
        let (plain, _) = plain_run(s, 0);
        if plain == s.len() {
            self.quoted(s, b"");
            return;
        }
        self.buf.reserve(s.len() + 2);
        self.buf.push(b'"');
        self.buf.extend_from_slice(&s[..plain]);
        let mut from = plain;
        for (i, &b) in s.iter().enumerate().skip(plain) {
            let esc: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                8 => b"\\b",
                12 => b"\\f",
                0..=0x1f => b"",
                _ => continue,
            };
            self.buf.extend_from_slice(&s[from..i]);
            from = i + 1;
            if esc.is_empty() {
                self.buf.extend_from_slice(b"\\u00");
                self.buf.push(HEX[(b >> 4) as usize]);
                self.buf.push(HEX[(b & 15) as usize]);
            } else {
                self.buf.extend_from_slice(esc);
            }
        }
        self.buf.extend_from_slice(&s[from..]);
        self.buf.push(b'"');
    }

    /// Raw text (numbers, literals).
    #[inline]
    pub fn raw(&mut self, s: &[u8]) {
        self.buf.extend_from_slice(s);
    }
}
