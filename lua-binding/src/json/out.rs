//! JSON text out: string escaping and the compact or indented layout.

use super::lexer::plain_run;
use super::number::{DEC_MAX, Dec, put_dec_at};

/// The output buffer and its layout state.
pub struct Out<'a> {
    /// The text so far.
    pub buf: &'a mut Vec<u8>,
    indent: Option<u8>,
    level: usize,
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// [`Out::member_key`] copies keys of up to this many bytes in one move.
pub const KEY_PAD: usize = 32;

const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// Nonzero when a byte of `w` is `"`, `\\`, a control character (below
/// 0x20) or not ASCII (a borrow can only mark a byte above a marked one).
#[inline(always)]
fn special_or_high(w: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(splat(1)) & !v;
    (zero(w ^ splat(b'"')) | zero(w ^ splat(b'\\')) | w.wrapping_sub(splat(0x20)) | w) & splat(0x80)
}

/// The bytes [`plain_ascii`] passes: printable ASCII but `"` and `\\`.
static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0x20;
    while b < 0x80 {
        t[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    t
};

/// Whether `s` is ASCII with nothing to escape: words of eight bytes, the
/// last one overlapping; a short `s` in one word of overlapping pieces.
#[inline]
fn plain_ascii(s: &[u8]) -> bool {
    plain_ascii_in::<true>(s)
}

/// [`plain_ascii`], its loop over strings of more than 16 bytes inlined
/// (`LOOP`: in loops over strings, its constants hoisted out of them) or
/// called.
#[inline(always)]
fn plain_ascii_in<const LOOP: bool>(s: &[u8]) -> bool {
    let n = s.len();
    let word = |i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("eight bytes"));
    let half = |i: usize| u64::from(u32::from_le_bytes(s[i..i + 4].try_into().expect("four bytes")));
    let w = if n > 16 {
        return if LOOP { plain_ascii_loop(s) } else { plain_ascii_long(s) };
    } else if n >= 8 {
        return special_or_high(word(0)) | special_or_high(word(n - 8)) == 0;
    } else if n >= 4 {
        half(0) | half(n - 4) << 32
    } else if n > 0 {
        // Three bytes (overlapping), by table.
        return PLAIN[usize::from(s[0])] & PLAIN[usize::from(s[n / 2])] & PLAIN[usize::from(s[n - 1])];
    } else {
        return true;
    };
    special_or_high(w) == 0
}

/// [`plain_ascii_loop`] kept out of the caller (where its vector
/// constants would load on every entry).
#[inline(never)]
fn plain_ascii_long(s: &[u8]) -> bool {
    plain_ascii_loop(s)
}

/// [`plain_ascii`] of an `s` of more than 8 bytes.
#[inline(always)]
fn plain_ascii_loop(s: &[u8]) -> bool {
    let n = s.len();
    let word = |i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("eight bytes"));
    let mut acc = 0;
    let mut i = 0;
    while i + 8 < n {
        acc |= special_or_high(word(i));
        i += 8;
    }
    acc | special_or_high(word(n - 8)) == 0
}

/// Copies `s` to `dst`: up to 16 bytes in two overlapping moves (no call).
///
/// # Safety
/// `s.len()` bytes writable at `dst`, not overlapping `s`.
#[inline(always)]
unsafe fn copy_to(dst: *mut u8, s: &[u8]) {
    use std::ptr::{read_unaligned as rd, write_unaligned as wr};
    let (n, p) = (s.len(), s.as_ptr());
    // SAFETY: every access is within the first `n` bytes of `s` and of
    // `dst` (the pieces overlap instead of running past the end).
    unsafe {
        if n > 16 {
            std::ptr::copy_nonoverlapping(p, dst, n);
        } else if n >= 8 {
            wr(dst.cast::<u64>(), rd(p.cast::<u64>()));
            wr(dst.add(n - 8).cast::<u64>(), rd(p.add(n - 8).cast::<u64>()));
        } else if n >= 4 {
            wr(dst.cast::<u32>(), rd(p.cast::<u32>()));
            wr(dst.add(n - 4).cast::<u32>(), rd(p.add(n - 4).cast::<u32>()));
        } else if n > 0 {
            *dst = *p;
            *dst.add(n / 2) = *p.add(n / 2);
            *dst.add(n - 1) = *p.add(n - 1);
        }
    }
}

/// The decimal text of `v` at `p`, in quotes when `quote`; its length.
///
/// # Safety
/// [`DEC_MAX`] + 2 bytes writable at `p`.
#[inline(always)]
unsafe fn put_quotable_dec(p: *mut u8, v: impl Dec, quote: bool) -> usize {
    let q = usize::from(quote);
    // SAFETY: the digits take at most DEC_MAX bytes after the opening
    // quote, the closing one comes after them (the caller's DEC_MAX + 2).
    unsafe {
        let d = put_dec_at(p.add(q), v);
        if quote {
            p.write(b'"');
            p.add(d + 1).write(b'"');
        }
        d + 2 * q
    }
}

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

    /// A member's separator and key, from its text `,"k":` (made by
    /// [`Out::key_text`]): the first `n` bytes of `text`. With at least
    /// [`KEY_PAD`] bytes of `text` readable (padding after the last key
    /// text) a short key is one fixed-size copy.
    #[inline(always)]
    pub fn member_key(&mut self, text: &[u8], n: usize, first: &mut bool) {
        if self.indent.is_some() {
            self.member_key_indented(&text[1..n], first);
            return;
        }
        let skip = usize::from(*first);
        *first = false;
        let k = &text[skip..];
        let n = n - skip;
        if n <= KEY_PAD && k.len() >= KEY_PAD {
            self.buf.reserve(KEY_PAD);
            let len = self.buf.len();
            // SAFETY: KEY_PAD bytes are readable from `k` (checked) and
            // reserved past `len`; the length moves over the first `n`
            // of them only, all written.
            unsafe {
                std::ptr::copy_nonoverlapping(k.as_ptr(), self.buf.as_mut_ptr().add(len), KEY_PAD);
                self.buf.set_len(len + n);
            }
        } else {
            self.buf.extend_from_slice(&k[..n]);
        }
    }

    #[cold]
    fn member_key_indented(&mut self, k: &[u8], first: &mut bool) {
        self.sep(first);
        self.buf.extend_from_slice(k);
        self.buf.push(b' ');
    }

    /// Appends the text [`Out::member_key`] takes for the key `k`: a
    /// comma, then what [`Out::key`] writes in the compact layout.
    pub fn key_text(k: &[u8], into: &mut Vec<u8>) {
        into.push(b',');
        Out::new(into, None).key(k);
    }

    /// Where the text is (its length and nesting), for [`Out::reset`].
    #[inline]
    pub fn mark(&self) -> (usize, usize) {
        (self.buf.len(), self.level)
    }

    /// Back to a [`Out::mark`]: the text written since is dropped.
    #[inline]
    pub fn reset(&mut self, (len, level): (usize, usize)) {
        self.buf.truncate(len);
        self.level = level;
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
            copy_to(p.add(1), s);
            p.add(1 + s.len()).write(b'"');
            copy_to(p.add(2 + s.len()), tail);
            self.buf.set_len(len + n);
        }
    }

    /// A JSON string of `s` if it is ASCII with nothing to escape (true),
    /// else nothing.
    #[inline(always)]
    pub fn plain_string(&mut self, s: &[u8]) -> bool {
        let plain = plain_ascii(s);
        if plain {
            self.quoted(s, b"");
        }
        plain
    }

    /// A JSON string of the bytes `s`, which must be UTF-8: the error
    /// when they are not. ASCII text with nothing to escape (the common
    /// case) is copied without a separate UTF-8 pass.
    #[inline]
    pub fn checked_string(&mut self, s: &[u8]) -> Result<(), usize> {
        if plain_ascii(s) {
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

    /// An integer, in decimal; `quote`: as a JSON string.
    #[inline]
    pub fn int(&mut self, v: impl Dec, quote: bool) {
        self.buf.reserve(DEC_MAX + 2);
        let len = self.buf.len();
        // SAFETY: DEC_MAX + 2 bytes are reserved past `len`: the digits and
        // the quotes around them when quoting; the length moves over
        // exactly the bytes written.
        unsafe {
            let n = put_quotable_dec(self.buf.as_mut_ptr().add(len), v, quote);
            self.buf.set_len(len + n);
        }
    }

    /// Whether the layout is the compact one.
    #[inline(always)]
    pub fn compact(&self) -> bool {
        self.indent.is_none()
    }

    /// An array element that is an integer (as [`Out::int`]), its comma
    /// before it unless `first`, in one reserve. Compact layout only.
    #[inline(always)]
    pub fn element_int(&mut self, first: &mut bool, v: impl Dec, quote: bool) {
        debug_assert!(self.indent.is_none());
        self.buf.reserve(DEC_MAX + 3);
        let len = self.buf.len();
        let c = usize::from(!*first);
        *first = false;
        // SAFETY: DEC_MAX + 3 bytes are reserved past `len`: the comma (`c`
        // bytes), the digits and their quotes; the length moves over
        // exactly the bytes written.
        unsafe {
            let p = self.buf.as_mut_ptr().add(len);
            p.write(b',');
            let d = put_quotable_dec(p.add(c), v, quote);
            self.buf.set_len(len + c + d);
        }
    }

    /// An array element that is the string `s` (its comma before it
    /// unless `first`), in one reserve, if `s` is ASCII with nothing to
    /// escape (true); else nothing. Compact layout only.
    #[inline(always)]
    pub fn element_plain_string(&mut self, first: &mut bool, s: &[u8]) -> bool {
        debug_assert!(self.indent.is_none());
        if !plain_ascii(s) {
            return false;
        }
        let c = usize::from(!*first);
        *first = false;
        let total = c + s.len() + 2;
        self.buf.reserve(total);
        let len = self.buf.len();
        // SAFETY: `total` bytes are reserved past `len`, all written (the
        // comma when `c`, the quotes, the string) before the length moves
        // over them.
        unsafe {
            let p = self.buf.as_mut_ptr().add(len);
            p.write(b',');
            p.add(c).write(b'"');
            copy_to(p.add(c + 1), s);
            p.add(total - 1).write(b'"');
            self.buf.set_len(len + total);
        }
        true
    }

    /// A member whose value is an integer, in one reserve: the first `n`
    /// bytes of `k` are its separator (if any) and key, as
    /// [`Out::member_key`] writes them. Compact layout only.
    #[inline(always)]
    pub fn member_int(&mut self, k: &[u8; KEY_PAD], n: usize, v: impl Dec, quote: bool) {
        debug_assert!(self.indent.is_none() && n <= KEY_PAD);
        self.buf.reserve(KEY_PAD + DEC_MAX + 2);
        let len = self.buf.len();
        // SAFETY: KEY_PAD + DEC_MAX + 2 bytes are reserved past `len`; the
        // length moves over the key's `n` (<= KEY_PAD) bytes and the
        // value's, all written.
        unsafe {
            let p = self.buf.as_mut_ptr().add(len);
            std::ptr::copy_nonoverlapping(k.as_ptr(), p, KEY_PAD);
            let d = put_quotable_dec(p.add(n), v, quote);
            self.buf.set_len(len + n + d);
        }
    }

    /// A member (as [`Out::member_int`]) whose value is the string `s`,
    /// if it is ASCII with nothing to escape (true); else nothing.
    /// Compact layout only.
    #[inline(always)]
    pub fn member_plain_string(&mut self, k: &[u8; KEY_PAD], n: usize, s: &[u8]) -> bool {
        debug_assert!(self.indent.is_none() && n <= KEY_PAD);
        if !plain_ascii_in::<false>(s) {
            return false;
        }
        let total = n + s.len() + 2;
        self.buf.reserve(KEY_PAD.max(total));
        let len = self.buf.len();
        // SAFETY: at least KEY_PAD and `total` bytes are reserved past
        // `len`; the length moves over the key's `n` bytes and the quoted
        // string's, all written.
        unsafe {
            let p = self.buf.as_mut_ptr().add(len);
            std::ptr::copy_nonoverlapping(k.as_ptr(), p, KEY_PAD);
            p.add(n).write(b'"');
            copy_to(p.add(n + 1), s);
            p.add(total - 1).write(b'"');
            self.buf.set_len(len + total);
        }
        true
    }

    /// Raw text (numbers, literals).
    #[inline]
    pub fn raw(&mut self, s: &[u8]) {
        self.buf.extend_from_slice(s);
    }
}

#[cfg(test)]
mod tests {
    use super::{Out, copy_to, plain_ascii};

    #[test]
    fn plain_ascii_matches_a_bytewise_check() {
        let bytewise = |s: &[u8]| s.iter().all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\');
        for n in 0..40 {
            for at in 0..n.max(1) {
                for b in [0x00, 0x1f, 0x20, b'"', b'\\', b'a', 0x7f, 0x80, 0xa2, 0xdc, 0xff] {
                    let mut s = vec![b'x'; n];
                    if n > 0 {
                        s[at] = b;
                    }
                    assert_eq!(plain_ascii(&s), bytewise(&s), "{s:02x?}");
                    let mut dst = vec![0u8; n];
                    // SAFETY: `n` bytes writable, separate buffers.
                    unsafe { copy_to(dst.as_mut_ptr(), &s) };
                    assert_eq!(dst, s);
                }
            }
        }
    }

    #[test]
    fn member_keys() {
        let mut text = Vec::new();
        Out::key_text(b"abc", &mut text);
        Out::key_text(&[b'k'; 40], &mut text);
        let n = (5 + 2, text.len() - 7);
        text.resize(text.len() + super::KEY_PAD, 0);
        for indent in [None, Some(2)] {
            let mut buf = Vec::new();
            let mut o = Out::new(&mut buf, indent);
            let mut first = true;
            o.open(b'{');
            o.member_key(&text, n.0, &mut first);
            o.raw(b"1");
            o.member_key(&text[n.0..], n.1, &mut first);
            o.raw(b"2");
            o.close(b'}', first);
            let k = "k".repeat(40);
            let want = match indent {
                None => format!(r#"{{"abc":1,"{k}":2}}"#),
                Some(_) => format!("{{\n  \"abc\": 1,\n  \"{k}\": 2\n}}"),
            };
            assert_eq!(String::from_utf8(buf).unwrap(), want);
        }
    }
}
