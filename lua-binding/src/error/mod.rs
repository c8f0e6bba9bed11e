//! Codec errors that carry no heap memory, and raising them into Lua.
//!
//! A Lua error is a `longjmp` (PUC Lua) or a foreign unwind (LuaJIT): it must
//! never cross a Rust frame that owns heap memory. So the codec reports
//! failures as a [`CodecError`] — fixed size, `Copy`, no `Drop` — that travels
//! up by `Result`, gathering the field path on the way; the outermost
//! `extern "C-unwind"` frame formats it into a stack buffer ([`ErrBuf`]) and
//! only then calls `lua_error`.

use core::cell::Cell;
use core::fmt::{self, Write};
use core::mem::MaybeUninit;
use std::os::raw::c_int;

use mlua::ffi::{self, lua_State};

use crate::plan::Plans;

mod shown;
pub use shown::{ArrayKey, EntryKey, IntValue, ShortStr};

/// A fixed-capacity, truncating text buffer on the stack.
pub struct ErrBuf {
    buf: [u8; 768],
    len: usize,
}

impl ErrBuf {
    /// An empty buffer.
    pub const fn new() -> Self {
        ErrBuf { buf: [0; 768], len: 0 }
    }

    /// The text written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The text written so far, as `str` (truncation keeps it UTF-8 only
    /// up to the last whole character).
    pub fn as_str(&self) -> &str {
        match std::str::from_utf8(self.as_bytes()) {
            Ok(s) => s,
            Err(e) => std::str::from_utf8(&self.as_bytes()[..e.valid_up_to()]).unwrap_or(""),
        }
    }
}

impl Default for ErrBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl Write for ErrBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = self.buf.len() - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Push `msg` and raise it as a Lua error.
///
/// # Safety
/// `L` is a valid state with one free stack slot, and the caller's frames
/// (up to the Lua boundary) own no heap memory and hold no `RefCell` borrows.
pub unsafe fn raise(L: *mut lua_State, msg: &ErrBuf) -> ! {
    // SAFETY: per this function's contract; the bytes are copied by Lua.
    unsafe {
        ffi::lua_pushlstring(L, msg.as_bytes().as_ptr().cast(), msg.len);
        ffi::lua_error(L)
    }
}

/// Format `args` after the `protolua: ` prefix and raise it.
///
/// # Safety
/// As [`raise`].
pub unsafe fn raise_fmt(L: *mut lua_State, args: fmt::Arguments<'_>) -> ! {
    let mut buf = ErrBuf::new();
    let _ = buf.write_str("protolua: ");
    let _ = buf.write_fmt(args);
    // SAFETY: forwarded contract.
    unsafe { raise(L, &buf) }
}

/// What went wrong.
#[derive(Clone, Copy)]
pub enum ErrorKind {
    /// A wire-level decode error (the offset is in [`CodecError::offset`]).
    Wire(pbwire::ErrorKind),
    /// Nesting deeper than the limit.
    DepthLimit(u32),
    /// Encode: a value of the wrong Lua type.
    WrongType {
        /// What the field wants.
        expected: &'static str,
        /// The Lua type name found.
        got: &'static str,
    },
    /// Encode: a number with a fractional part (or NaN/inf) for an integer field.
    NotIntegral(f64),
    /// Encode: an integer outside the field type's range.
    OutOfRange {
        /// The value, as a float when it came as one.
        value: IntValue,
        /// The field's type name.
        ty: &'static str,
    },
    /// Encode: a string for a 64-bit field that is not a decimal integer.
    BadIntString(ShortStr),
    /// Encode: an enum name the enum does not have.
    UnknownEnumName(ShortStr, u32),
    /// Encode: a `string` value that is not valid UTF-8.
    InvalidUtf8,
    /// Encode: `t[i]` is nil for some `i` in `1..#t`, or (strict keys)
    /// for `i = #t + 1` while the array has a key past it.
    ArrayHole(u64),
    /// Encode, strict keys: an array table has a key that is no index
    /// `1..len` (and no positive integer past it: that is a hole).
    ArrayKey {
        /// The key.
        key: ArrayKey,
        /// The array's length (`#t`).
        len: u64,
    },
    /// Encode: a key that is not a field of the message.
    UnknownKey(ShortStr),
    /// Encode: a key of a non-string type in a message table.
    NonStringKey(&'static str),
    /// Encode: two members of one oneof are set.
    OneofConflict {
        /// The message the oneof belongs to.
        msg: u32,
        /// Index of the oneof in the message plan.
        oneof: u16,
        /// Field index of the first member found.
        first: u16,
        /// Field index of the second member found.
        second: u16,
    },
    /// A proto2 `required` field is absent.
    MissingRequired {
        /// The message missing them.
        msg: u32,
        /// Which of the message plan's `required` fields are absent.
        missing: MissingSet,
    },
    /// The Lua stack could not grow: `lua_checkstack` refuses both past
    /// Lua's stack limit (nesting too deep) and when the allocation fails
    /// (out of memory), and does not say which.
    StackOverflow,
    /// A walk failed without recording why (a protolua bug if ever seen).
    Internal,
}

/// The absent `required` fields of a message, as positions in its plan's
/// `required` list. Names up to 64 of them (the first absent one and the
/// 63 positions after it) and counts the rest, so the error stays `Copy`
/// and allocation-free for any number of required fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MissingSet {
    first: u32,
    bits: u64,
    beyond: u32,
}

impl MissingSet {
    /// Record that `required[i]` is absent; call with increasing `i`.
    pub fn add(&mut self, i: usize) {
        let i = i as u32;
        if self.bits == 0 {
            self.first = i;
        }
        match i - self.first {
            d @ 0..64 => self.bits |= 1 << d,
            _ => self.beyond += 1,
        }
    }

    /// Nothing recorded.
    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// How many were recorded.
    pub fn len(&self) -> usize {
        self.bits.count_ones() as usize + self.beyond as usize
    }

    /// The named positions, in order.
    pub fn named(&self) -> impl Iterator<Item = usize> + '_ {
        (0..64).filter(|d| self.bits & (1 << d) != 0).map(|d| (self.first + d) as usize)
    }

    /// How many were recorded but are not named.
    pub fn unnamed(&self) -> usize {
        self.beyond as usize
    }
}

/// What a [`PathSeg`] names inside its field; `value` holds the index or
/// the key.
mod step {
    /// The field itself.
    pub const FIELD: u8 = 0;
    /// Array element `value` (1-based).
    pub const INDEX: u8 = 1;
    /// A map entry whose key is not known.
    pub const ENTRY: u8 = 2;
    /// A map entry, key `value as i64`.
    pub const INT: u8 = 3;
    /// A map entry, key `value`.
    pub const UINT: u8 = 4;
    /// A map entry, key `f64::from_bits(value)`.
    pub const FLOAT: u8 = 5;
    /// A map entry, key `value != 0`.
    pub const BOOL: u8 = 6;
    /// A map entry, string key at `value & 0xff` in the key pool, `value >> 8` bytes.
    pub const STR: u8 = 7;
    /// A map entry whose key is of Lua type `value`.
    pub const OTHER: u8 = 8;
}

/// One step of a field path: message, field, and what inside it. Packed
/// in 16 bytes: every frame that makes an error holds a [`CodecError`].
#[derive(Clone, Copy)]
struct PathSeg {
    msg: u32,
    field: u16,
    /// One of [`step`]'s kinds.
    step: u8,
    /// A string key was cut.
    cut: bool,
    value: u64,
}

const _: () = assert!(size_of::<PathSeg>() == 16);

impl PathSeg {
    const fn new(step: u8, value: u64) -> Self {
        PathSeg { msg: 0, field: 0, step, cut: false, value }
    }
}

const MAX_PATH: usize = 12;
/// The longest string key an error path shows (longer ones are cut, `…`).
const KEY_CAP: usize = 48;
/// Room for the string keys of one error's path (innermost first).
const KEY_POOL: usize = 192;

/// A codec failure: kind, byte offset (decode), and the field path.
#[derive(Clone, Copy)]
pub struct CodecError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Absolute byte offset into the input (decode only).
    pub offset: Option<usize>,
    path: [PathSeg; MAX_PATH],
    path_len: u8,
    path_dropped: u32,
    /// The step [`Self::in_map`] adds next (its `msg` and `field` unset).
    pending: PathSeg,
}

impl CodecError {
    /// A new error with no path yet.
    #[cold]
    pub fn new(kind: ErrorKind, offset: Option<usize>) -> Self {
        CodecError {
            kind,
            offset,
            path: [PathSeg::new(step::FIELD, 0); MAX_PATH],
            path_len: 0,
            path_dropped: 0,
            pending: PathSeg::new(step::ENTRY, 0),
        }
    }

    /// From a wire error.
    #[cold]
    pub fn wire(e: pbwire::Error) -> Self {
        Self::new(ErrorKind::Wire(e.kind()), Some(e.offset()))
    }

    /// Prepend a path step (called while unwinding towards the root).
    #[cold]
    pub fn in_field(mut self, msg: u32, field: usize) -> Self {
        self.push(PathSeg { msg, field: field as u16, ..PathSeg::new(step::FIELD, 0) });
        self
    }

    /// Prepend an array-element path step. A hole in the array itself
    /// names the field only (its message gives the index), as the strict
    /// key check words a hole past `#t`, so every Lua words it the same.
    #[cold]
    pub fn in_element(mut self, msg: u32, field: usize, index: u64) -> Self {
        let step =
            if self.path_len == 0 && matches!(self.kind, ErrorKind::ArrayHole(_)) { step::FIELD } else { step::INDEX };
        self.push(PathSeg { msg, field: field as u16, ..PathSeg::new(step, index) });
        self
    }

    /// Prepend a map-entry path step, naming the key given by
    /// `with_entry_key` (`<entry>` when none was), or the map
    /// field alone after [`Self::not_in_entry`].
    #[cold]
    pub fn in_map(mut self, msg: u32, field: usize) -> Self {
        let seg = core::mem::replace(&mut self.pending, PathSeg::new(step::ENTRY, 0));
        self.push(PathSeg { msg, field: field as u16, ..seg });
        self
    }

    /// The key of the entry that failed, for the next [`Self::in_map`]
    /// (see [`ErrSlot::name_entry`], which keeps a string key's bytes).
    #[cold]
    fn with_entry_key(mut self, key: EntryKey<'_>, keys: &mut KeyPool) -> Self {
        self.pending = match key {
            EntryKey::Unknown => PathSeg::new(step::ENTRY, 0),
            EntryKey::Str(s) => keys.store(s),
            EntryKey::Int(i) => PathSeg::new(step::INT, i as u64),
            EntryKey::UInt(u) => PathSeg::new(step::UINT, u),
            EntryKey::Float(x) => PathSeg::new(step::FLOAT, x.to_bits()),
            EntryKey::Bool(b) => PathSeg::new(step::BOOL, b as u64),
            EntryKey::Other(t) => PathSeg::new(step::OTHER, t as u64),
        };
        self
    }

    /// The failure is a map field's own value (not a table), so the next
    /// [`Self::in_map`] names the field without an entry.
    #[cold]
    pub fn not_in_entry(mut self) -> Self {
        self.pending = PathSeg::new(step::FIELD, 0);
        self
    }

    /// For a failure in a map key's own value: `expected string` becomes
    /// `expected string key` (other kinds are kept).
    #[cold]
    pub fn as_key_error(mut self) -> Self {
        if let ErrorKind::WrongType { expected, got } = self.kind {
            let expected = match expected {
                "string" => "string key",
                "integer" => "integer key",
                "integer or decimal string" => "integer or decimal string key",
                "boolean" => "boolean key",
                e => e,
            };
            self.kind = ErrorKind::WrongType { expected, got };
        }
        self
    }

    fn push(&mut self, seg: PathSeg) {
        if (self.path_len as usize) < MAX_PATH {
            self.path[self.path_len as usize] = seg;
            self.path_len += 1;
        } else {
            // `path[0]` is the innermost step, the field that failed: keep
            // it, and drop the one above it to make room for this outer one.
            self.path.copy_within(2.., 1);
            self.path[MAX_PATH - 1] = seg;
            self.path_dropped += 1;
        }
    }

    /// Write the full message, the path's string keys in `keys`.
    fn format(&self, out: &mut ErrBuf, op: &str, plans: &Plans, root: u32, keys: &KeyPool) {
        let _ = write!(out, "protolua: {op} {}", plans.messages[root as usize].full_name);
        if self.path_len > 0 {
            let _ = out.write_str(": field ");
            for (i, seg) in self.path[..self.path_len as usize].iter().rev().enumerate() {
                if i > 0 {
                    let _ = out.write_char('.');
                }
                if i == self.path_len as usize - 1 && self.path_dropped > 0 {
                    let _ = write!(out, "(…{} more).", self.path_dropped);
                }
                let f = &plans.messages[seg.msg as usize].fields[seg.field as usize];
                let _ = out.write_str(&f.name);
                match seg.step {
                    step::FIELD => {}
                    step::INDEX => {
                        let _ = write!(out, "[{}]", seg.value);
                    }
                    _ => {
                        let _ = out.write_char('[');
                        write_key(out, seg, keys);
                        let _ = out.write_char(']');
                    }
                }
            }
        }
        let _ = out.write_str(": ");
        match self.kind {
            ErrorKind::Wire(k) => {
                let _ = write!(out, "{k}");
            }
            ErrorKind::DepthLimit(n) => {
                let _ = write!(out, "nesting deeper than the limit of {n}");
            }
            ErrorKind::WrongType { expected, got } => {
                let _ = write!(out, "expected {expected}, got {got}");
            }
            ErrorKind::NotIntegral(v) => {
                let _ = write!(out, "number {v} has no integer representation");
            }
            ErrorKind::OutOfRange { value, ty } => {
                let _ = write!(out, "value {value} is out of range for {ty}");
            }
            ErrorKind::BadIntString(s) => {
                let _ = write!(out, "string \"{s}\" is not a decimal integer");
            }
            ErrorKind::UnknownEnumName(s, e) => {
                let _ = write!(out, "\"{s}\" is not a value of enum {}", plans.enums[e as usize].full_name);
            }
            ErrorKind::InvalidUtf8 => {
                let _ = out.write_str("string is not valid UTF-8");
            }
            ErrorKind::ArrayHole(i) => {
                let _ = write!(out, "array has a nil hole at index {i}");
            }
            ErrorKind::ArrayKey { key, len } => {
                let _ = write!(out, "array has {key} outside 1..{len}");
            }
            ErrorKind::UnknownKey(s) => {
                let _ = write!(out, "unknown field \"{s}\"");
            }
            ErrorKind::NonStringKey(t) => {
                let _ = write!(out, "message table has a key of type {t}");
            }
            ErrorKind::OneofConflict { msg, oneof, first, second } => {
                let m = &plans.messages[msg as usize];
                let _ = write!(
                    out,
                    "oneof {} has both {} and {} set",
                    m.oneofs[oneof as usize].name, m.fields[first as usize].name, m.fields[second as usize].name
                );
            }
            ErrorKind::MissingRequired { msg, missing } => {
                let m = &plans.messages[msg as usize];
                let _ = out.write_str(if missing.len() > 1 {
                    "missing required fields "
                } else {
                    "missing required field "
                });
                let mut first = true;
                for i in missing.named() {
                    let fi = m.required[i] as usize;
                    let _ = write!(out, "{}{}", if first { "" } else { ", " }, m.fields[fi].name);
                    first = false;
                }
                if missing.unnamed() != 0 {
                    let _ = write!(out, " and {} more", missing.unnamed());
                }
                let _ = write!(out, " of {}", m.full_name);
            }
            ErrorKind::StackOverflow => {
                let _ = out.write_str("Lua stack cannot grow (nesting too deep, or not enough memory)");
            }
            ErrorKind::Internal => {
                let _ = out.write_str("internal error: the codec failed without a reason (please report)");
            }
        }
        if let Some(off) = self.offset {
            let _ = write!(out, " at byte {off}");
        }
    }
}

/// A map key as the path shows it: strings quoted, with `\"`, `\\`,
/// `\n`, `\r`, `\t` and `\xNN` for other control and non-UTF-8 bytes
/// (a Lua string literal's escapes); numbers and booleans as Lua prints them.
fn write_key(out: &mut ErrBuf, seg: &PathSeg, keys: &KeyPool) {
    let x = f64::from_bits(seg.value);
    let _ = match seg.step {
        step::INT => write!(out, "{}", seg.value as i64),
        step::UINT => write!(out, "{}", seg.value),
        step::FLOAT if x.is_finite() && (x == 0.0 || (1e-4..1e16).contains(&x.abs())) => write!(out, "{x}"),
        step::FLOAT if x.is_finite() => write!(out, "{x:e}"),
        step::FLOAT if x.is_nan() => out.write_str("nan"),
        step::FLOAT => out.write_str(if x > 0.0 { "inf" } else { "-inf" }),
        step::BOOL => write!(out, "{}", seg.value != 0),
        step::OTHER => write!(out, "<{}>", lua_type_name(seg.value as c_int)),
        step::STR => {
            let (at, len) = ((seg.value & 0xff) as usize, (seg.value >> 8) as usize);
            let _ = out.write_char('"');
            for chunk in keys.get(at, len).unwrap_or(b"").utf8_chunks() {
                for c in chunk.valid().chars() {
                    let _ = match c {
                        '"' => out.write_str("\\\""),
                        '\\' => out.write_str("\\\\"),
                        '\n' => out.write_str("\\n"),
                        '\r' => out.write_str("\\r"),
                        '\t' => out.write_str("\\t"),
                        c if c.is_control() => {
                            let mut b = [0u8; 4];
                            for byte in c.encode_utf8(&mut b).bytes() {
                                let _ = write!(out, "\\x{byte:02x}");
                            }
                            Ok(())
                        }
                        c => out.write_char(c),
                    };
                }
                for b in chunk.invalid() {
                    let _ = write!(out, "\\x{b:02x}");
                }
            }
            if seg.cut {
                let _ = out.write_str("…");
            }
            out.write_char('"')
        }
        _ => out.write_str("<entry>"),
    };
}

/// The string keys named in one error's path, kept beside it in its
/// [`ErrSlot`] rather than in the [`CodecError`] itself, which every frame
/// that makes an error holds.
#[derive(Clone, Copy)]
pub struct KeyPool {
    bytes: [MaybeUninit<u8>; KEY_POOL],
    len: u8,
}

impl Default for KeyPool {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl KeyPool {
    const EMPTY: KeyPool = KeyPool { bytes: [MaybeUninit::uninit(); KEY_POOL], len: 0 };

    /// The `len` bytes stored at `at`, if they were stored.
    fn get(&self, at: usize, len: usize) -> Option<&[u8]> {
        let stored = self.bytes.get(at..at + len).filter(|_| at + len <= self.len as usize)?;
        // SAFETY: `store` wrote every byte below `self.len`, and
        // `MaybeUninit<u8>` has `u8`'s layout.
        Some(unsafe { &*(stored as *const [MaybeUninit<u8>] as *const [u8]) })
    }

    /// Copy up to [`KEY_CAP`] bytes of `s` (cut at a character boundary
    /// when it is UTF-8) into the key pool, as much as it has room for.
    fn store(&mut self, s: &[u8]) -> PathSeg {
        let at = self.len as usize;
        let mut n = s.len().min(KEY_CAP).min(KEY_POOL - at);
        if n < s.len() {
            // Do not split a character: back off over continuation bytes.
            // `s[n]` is the first byte left out: cut before its character.
            let mut cut = n;
            while cut > 0 && n - cut < 3 && s[cut] & 0xc0 == 0x80 {
                cut -= 1;
            }
            if s[cut] & 0xc0 != 0x80 {
                n = cut;
            }
        }
        for (d, &b) in self.bytes[at..at + n].iter_mut().zip(&s[..n]) {
            d.write(b);
        }
        self.len = (at + n) as u8;
        PathSeg { cut: n < s.len(), ..PathSeg::new(step::STR, (at | n << 8) as u64) }
    }
}

/// A recorded codec failure as the entry point raises it: the error and
/// the string keys its path names.
#[derive(Clone, Copy)]
pub struct CodecFailure {
    /// The error.
    pub err: CodecError,
    keys: KeyPool,
}

impl CodecFailure {
    /// Write the full message: `protolua: <op> <Type>: field <path>: <what>[ at byte N]`.
    pub fn format(&self, out: &mut ErrBuf, op: &str, plans: &Plans, root: u32) {
        self.err.format(out, op, plans, root, &self.keys);
    }

    /// Raise this failure as a Lua error.
    ///
    /// # Safety
    /// As [`raise`].
    pub unsafe fn raise(self, L: *mut lua_State, op: &str, plans: &Plans, root: u32) -> ! {
        let mut buf = ErrBuf::new();
        self.format(&mut buf, op, plans, root);
        // SAFETY: forwarded contract.
        unsafe { raise(L, &buf) }
    }
}

impl From<CodecError> for CodecFailure {
    fn from(err: CodecError) -> Self {
        CodecFailure { err, keys: KeyPool::default() }
    }
}

/// The Lua type name of stack slot `idx`, for messages.
///
/// # Safety
/// `L` is valid and `idx` acceptable.
pub unsafe fn type_name(L: *mut lua_State, idx: c_int) -> &'static str {
    // SAFETY: caller's contract.
    let t = unsafe { ffi::lua_type(L, idx) };
    lua_type_name(t)
}

/// Name of a Lua type tag.
pub fn lua_type_name(t: c_int) -> &'static str {
    match t {
        ffi::LUA_TNIL => "nil",
        ffi::LUA_TBOOLEAN => "boolean",
        ffi::LUA_TLIGHTUSERDATA => "userdata",
        ffi::LUA_TNUMBER => "number",
        ffi::LUA_TSTRING => "string",
        ffi::LUA_TTABLE => "table",
        ffi::LUA_TFUNCTION => "function",
        ffi::LUA_TUSERDATA => "userdata",
        ffi::LUA_TTHREAD => "thread",
        #[cfg(feature = "luajit")]
        ffi::LUA_TCDATA => "cdata",
        _ => "no value",
    }
}

/// Marker that a [`CodecError`] was recorded in the walk's [`ErrSlot`].
///
/// The walk returns `Result<_, Recorded>` (one byte) instead of carrying the
/// error by value: recursive frames stay small, so deep nesting costs little
/// C stack even in debug builds.
#[derive(Clone, Copy, Debug)]
pub struct Recorded;

/// Where the walk records its error; one per encode/decode call. Empty,
/// it is two tags to write; the key pool is kept apart from the error so
/// that recording one copies no more than the [`CodecError`].
pub struct ErrSlot(Cell<Option<CodecError>>, Cell<Option<KeyPool>>);

impl ErrSlot {
    /// An empty slot.
    pub const fn new() -> Self {
        ErrSlot(Cell::new(None), Cell::new(None))
    }

    /// Record `e`.
    #[cold]
    pub fn set(&self, e: CodecError) -> Recorded {
        self.0.set(Some(e));
        Recorded
    }

    /// Record a failure taken from another slot, its keys with it.
    #[cold]
    pub fn put(&self, f: CodecFailure) -> Recorded {
        self.1.set(Some(f.keys));
        self.set(f.err)
    }

    /// Amend the recorded error (add a path step).
    #[cold]
    pub fn with(&self, f: impl FnOnce(CodecError) -> CodecError) -> Recorded {
        if let Some(e) = self.0.get() {
            self.0.set(Some(f(e)));
        }
        Recorded
    }

    /// The recorded error's byte offset.
    #[cold]
    pub fn offset(&self) -> Option<usize> {
        self.0.get().and_then(|e| e.offset)
    }

    /// Name the key of the map entry the recorded error is in, for its
    /// next [`CodecError::in_map`] (a string's first `KEY_CAP` bytes are
    /// kept, as room allows).
    #[cold]
    #[inline(never)]
    pub fn name_entry(&self, key: EntryKey<'_>) -> Recorded {
        let mut keys = self.1.get().unwrap_or_default();
        self.with(|e| e.with_entry_key(key, &mut keys));
        self.1.set(Some(keys));
        Recorded
    }

    /// Take the recorded error.
    #[cold]
    pub fn take(&self) -> CodecFailure {
        let err = self.0.take().unwrap_or_else(|| CodecError::new(ErrorKind::Internal, None));
        CodecFailure { err, keys: self.1.take().unwrap_or_default() }
    }
}

impl Default for ErrSlot {
    fn default() -> Self {
        Self::new()
    }
}
