//! bytes → Lua table: the plan walk.
//!
//! One recursive walk per message. Each level creates its table pre-sized
//! from the plan, fills a repeated field's new array on top of the stack
//! and stores it when its run ends (encoders write a field's elements
//! together), keeps the array (or map table) of a field met again, or of a
//! map, in one stack slot, and pushes strings straight from the input.
//! On LuaJIT a message whose plan allows it is instead read onto the stack
//! and its table made by a generated constructor of its shape
//! (`DecodeCtx::message_by_ctor`, `crate::shape_ctor`).
//! Frames hold only borrows and plain values, so a Lua error raised inside
//! an API call (out of memory) can cross them safely; codec errors travel
//! back as [`CodecError`] and are raised by the entry point.

#[cfg(feature = "luajit")]
use std::cell::Cell;
use std::mem::MaybeUninit;
use std::os::raw::c_int;

use pbwire::{Reader, Tag, WireType, packed, utf8, zigzag};

#[cfg(feature = "luajit")]
use crate::bulk_array::{self, BULK_MAX, BULK_MIN};
use crate::error::{CodecError, ErrSlot, ErrorKind, Fail, MissingSet};
use crate::host::ModuleState;
use crate::int64::{self, Int64Mode};
use crate::lua::{self, ffi, lua_State};
use crate::message_api::{DECODE_UP_KEYS, DECODE_UP_MAP_MT};
use crate::plan::{Card, DefaultValue, FieldPlan, Kind, MessagePlan, NO_ONEOF, PLAIN_REQUIRED, PlainTag, Plans};
use crate::schema::{DefaultsMode, LoadOptions};

/// Repeated-field element counts kept in a frame-local array; fields whose
/// slot is beyond this ask Lua for the length instead.
const TRACKED_SLOTS: usize = 32;
/// Packed varint runs of at least this many values take the run loop
/// (`DecodeCtx::packed_varints`); shorter ones stay on the element loop.
const PACKED_LOOP_MIN: usize = 4;
/// Oneofs whose current member is tracked in a frame-local array.
const TRACKED_ONEOFS: usize = 8;
// The plain path takes the required flag as `plain >> 15`.
const _: () = assert!(PLAIN_REQUIRED == 1 << 15);
/// Upper bound on the hash part pre-sized for a message table.
const MAX_PRESIZE: usize = 32;
/// Message bodies up to this many bytes are pre-scanned for their field
/// count (see [`presize`]).
const SCAN_PRESIZE: usize = 64;

/// How many hash slots to give a new message table. A short body is
/// scanned for its field count (tags and lengths only, ~10 instructions a
/// field): a small message then gets the hash part it fills, as a decoder
/// that knows its map sizes (msgpack) does, not one sized for every
/// declared field. A long body gets min(declared fields, body / 2), since
/// a field takes at least two bytes.
#[inline]
fn presize(plan: &MessagePlan, r: &Reader<'_>) -> usize {
    let cap = plan.fields.len().min(MAX_PRESIZE);
    let estimate = cap.min(r.remaining() / 2);
    if r.remaining() > SCAN_PRESIZE {
        return estimate;
    }
    // On the bytes, not through `Reader`: the count is only a size hint,
    // so the scan needs no error values (the decode reports bad input).
    let b = r.rest();
    let (mut p, mut n) = (0, 0);
    while n < cap && p < b.len() {
        let wt = b[p] & 7;
        let Some((tag, q)) = scan_varint(b, p) else { break };
        match wt {
            // The end of this group's body.
            4 => break,
            3 => return estimate,
            _ if tag >> 3 == 0 => break,
            _ => {}
        }
        let Some(e) = scan_value(b, q, wt) else { break };
        p = e;
        n += 1;
    }
    n
}

/// The varint at `b[p..]` and the position after it, for the size scans:
/// one-byte values inline, longer ones through pbwire out of line.
#[inline(always)]
fn scan_varint(b: &[u8], p: usize) -> Option<(u64, usize)> {
    match b.get(p) {
        Some(&x) if x < 0x80 => Some((u64::from(x), p + 1)),
        Some(_) => scan_varint_long(b, p),
        None => None,
    }
}

#[inline(never)]
fn scan_varint_long(b: &[u8], p: usize) -> Option<(u64, usize)> {
    let (v, n) = pbwire::varint::decode_varint(b.get(p..)?).ok()?;
    Some((v, p + n))
}

/// The position after the varint at `b[p..]`, for the size scans, which
/// need its end but not its value: one-byte values inline, longer ones by
/// the first byte below 0x80 among the next 8 (then 2), without pbwire's
/// decoder (callgrind: 24 calls a BenchPayload mid decode, ~60
/// instructions each, for the 2–10 byte `values`). It does not reject an
/// overlong 10th byte: the decode that follows reports that.
#[inline(always)]
fn skip_varint(b: &[u8], p: usize) -> Option<usize> {
    match b.get(p) {
        Some(&x) if x < 0x80 => Some(p + 1),
        Some(_) => skip_varint_long(b, p),
        None => None,
    }
}

#[inline]
fn skip_varint_long(b: &[u8], p: usize) -> Option<usize> {
    let rest = b.get(p..)?;
    if let Some(w) = rest.first_chunk::<8>() {
        let ends = !u64::from_le_bytes(*w) & 0x8080_8080_8080_8080;
        if ends != 0 {
            return Some(p + (ends.trailing_zeros() / 8) as usize + 1);
        }
        let i = rest[8..].iter().take(2).position(|&x| x < 0x80)?;
        return Some(p + 9 + i);
    }
    let i = rest.iter().take(10).position(|&x| x < 0x80)?;
    Some(p + i + 1)
}

/// The position after the value of wire type `wt` (VARINT, I64, LEN or
/// I32) starting at `b[p..]`; `None` for anything else or a value that
/// does not fit.
#[inline(always)]
fn scan_value(b: &[u8], p: usize, wt: u8) -> Option<usize> {
    let end = match wt {
        0 => return skip_varint(b, p),
        1 => p + 8,
        5 => p + 4,
        2 => {
            let (len, q) = scan_varint(b, p)?;
            q.checked_add(usize::try_from(len).ok()?)?
        }
        _ => return None,
    };
    (end <= b.len()).then_some(end)
}

/// Most fields the root fast path reads before it makes the table (see
/// `DecodeCtx::root_fast`).
const FAST_FIELDS: usize = SCAN_PRESIZE / 2;

/// A field the root fast path has read, to be stored once its table is
/// made (see `DecodeCtx::root_fast`).
#[derive(Clone, Copy)]
struct Pending {
    /// The field's key id, or with `root_up` the upvalue holding its key.
    key: i32,
    /// Its index in the plan's `fields`.
    fi: u8,
    /// Its kind.
    kind: Kind,
    /// The value's bits as read (varint, fixed32 or fixed64), or where a
    /// LEN value's bytes start.
    x: u64,
    /// The input position after the value.
    end: usize,
}

/// Everything a decode needs besides the input.
pub struct DecodeCtx<'a> {
    /// The Lua state.
    pub L: *mut lua_State,
    /// Compiled schema.
    pub plans: &'a Plans,
    /// Index (absolute or upvalue) of the key-string table.
    pub keys: c_int,
    /// Index of the int64 helper table (LuaJIT).
    pub helpers: c_int,
    /// Where the walk records its error.
    pub err: ErrSlot,
    /// The whole input (unknown-field spans are offsets into it).
    pub input: &'a [u8],
    /// The options in force (the schema's, or the call's).
    pub opts: LoadOptions,
    /// Stack indices of the `__serialize = 'seq'`/`'map'` metatables given
    /// to new arrays and maps/messages (option `serialize`); 0 when off.
    /// The entry points leave both 0: [`Self::decode_root`] pushes them
    /// when option `serialize` is on and the general walk is to run.
    pub seq_mt: c_int,
    /// See `seq_mt`.
    pub map_mt: c_int,
    /// Called from `Msg:decode`: the root fast path takes the map
    /// metatable and the root's key strings from that closure's upvalues
    /// (`message_api`'s module doc).
    pub root_up: bool,
    /// With `root_up`, the handle's memo of the shape of its last
    /// constructor (`message_api::DECODE_UP_LAST_CTOR`).
    #[cfg(feature = "luajit")]
    pub last_shape: Option<&'a Cell<c_int>>,
    /// The schema's memo of each message's last shape
    /// (`crate::shape_ctor::find_message_ctor`).
    #[cfg(feature = "luajit")]
    pub ctor_memo: &'a [Cell<crate::shape_ctor::Shape>],
    /// Per message, the last whole-tree signature and its compile count
    /// (`crate::tree_ctor`).
    #[cfg(feature = "luajit")]
    pub tree: &'a [crate::tree_ctor::TreeMemo],
    /// Stack index of the schema's constructor table during the general
    /// walk, when messages may be built by constructor
    /// (`DecodeCtx::message_by_ctor`); 0 otherwise. The entry points leave it
    /// 0: [`Self::decode_root`] sets it.
    #[cfg(feature = "luajit")]
    pub ctors: c_int,
    /// State shared with the module (Tarantool API, unknown-store flag).
    pub module: &'a ModuleState,
}

/// Slot of the key table that caches the defaults tables (built on first use).
const KEYS_DEFAULTS_CACHE: i64 = 0;

/// The unknown-field bytes of the message being decoded: the current run of
/// adjacent spans (`start..end` in the input), appended to the frame's
/// accumulator slot when a known field breaks the run. The accumulator
/// holds nothing (`pieces == 0`), one string, or a table of `pieces`
/// strings: appending never copies what is already there, so interleaved
/// unknown fields cost linear time. `pieces` is frame-local, so a message
/// without unknown fields pays no Lua API call to find out.
#[derive(Clone, Copy, Default)]
struct UnknownRun {
    start: usize,
    end: usize,
    pieces: u32,
}

type Res<T = ()> = Result<T, Fail>;

/// How [`DecodeCtx::message_by_ctor`] left a message (LuaJIT).
#[cfg(feature = "luajit")]
enum ByCtor {
    /// Its table is on top.
    Done,
    /// The table of the fields read so far is on top and the reader at
    /// the first field the shape does not cover: the general frame merges
    /// the rest of the body into it.
    Merge,
    /// Nothing pushed, nothing read (no stack room): the general frame
    /// decodes it.
    Declined,
}

/// The repeated/map containers of one message frame. A repeated field's
/// first run into a new table fills an array of its own on top of the
/// stack (`DecodeCtx::fresh_array`); otherwise only the container of the
/// field filled last sits on the stack (at `slot`), and switching fields
/// fetches or creates the other one. A frame thus takes three stack slots
/// (five while a new array's run is filled) whatever its message
/// declares, so LuaJIT's per-call slot limit (8,000) is not what bounds
/// nesting, and a frame has no slots to clear.
struct Containers {
    /// Stack index of the current container.
    slot: c_int,
    /// Field index whose container is at `slot`, or `usize::MAX`.
    field: usize,
    /// Per plan slot (`FieldPlan::slot`) below [`TRACKED_SLOTS`]: elements
    /// stored so far for repeated fields, 1 once a map exists; 0 = the
    /// container does not exist yet (unless `merge`).
    counts: [u32; TRACKED_SLOTS],
    /// Merging into an existing table: containers may already be in it.
    merge: bool,
    /// Whether the frame has taken its container and accumulator slots
    /// (see [`take_slots`]); until then the stack top is the frame's table.
    taken: bool,
}

/// `r.read_varint()` with the one-byte case inline: values below 128 are
/// most of what a decode reads, and LLVM did not inline the general
/// decoder into the walk (callgrind: 17 % of Person 1KB decode in the
/// call). pbwire keeps its `read_varint` whole, which is what its own
/// callers' tight loops want (iai).
#[inline(always)]
fn varint(r: &mut Reader<'_>) -> pbwire::Result<u64> {
    if let Some(&b) = r.rest().first()
        && b < 0x80
        && r.advance(1).is_ok()
    {
        return Ok(u64::from(b));
    }
    varint_long(r)
}

/// Out of line, so that the walk's loops stay small (measured: inlining
/// pbwire's whole decoder here costs up to 8 % on Person 100KB decode).
#[inline(never)]
fn varint_long(r: &mut Reader<'_>) -> pbwire::Result<u64> {
    // Two bytes (values below 2^14) without pbwire's general decoder,
    // which near the end of the input (fewer than 10 bytes left) takes
    // its slow byte-by-byte path: the tail of every message.
    if let [b0, b1, ..] = *r.rest()
        && b1 < 0x80
        && r.advance(2).is_ok()
    {
        return Ok(u64::from(b0 & 0x7f) | u64::from(b1) << 7);
    }
    varint_general(r)
}

/// The rest of [`varint_long`], apart so that its two-byte path saves and
/// restores no registers. With 8 bytes of input left, a varint is decoded
/// from one word load without a branch per byte: the first byte below
/// 0x80 ends it, and the 7-bit groups of the bytes up to it are joined in
/// three mask-and-shift steps; a 9- or 10-byte one (a negative `int32`)
/// adds its last two bytes. (pbwire's decoder goes byte by byte: ~70
/// instructions for the 3-byte `values` of BenchPayload mid, 17 per
/// decode.) What is left — near the end of the input, or an overlong
/// 10th byte — goes to pbwire, which also reports the errors.
#[inline(never)]
fn varint_general(r: &mut Reader<'_>) -> pbwire::Result<u64> {
    let rest = r.rest();
    if let Some(w) = rest.first_chunk::<8>() {
        let w = u64::from_le_bytes(*w);
        let ends = !w & 0x8080_8080_8080_8080;
        if ends != 0 {
            // The bytes up to and including the first end byte.
            let len = ends.trailing_zeros() as usize / 8 + 1;
            let x = join_groups(w & (ends ^ (ends - 1)));
            if r.advance(len).is_ok() {
                return Ok(x);
            }
        } else if let Some(&[b8, b9]) = rest.get(8..10) {
            let x = join_groups(w);
            if b8 < 0x80 {
                if r.advance(9).is_ok() {
                    return Ok(x | u64::from(b8) << 56);
                }
            } else if b9 <= 1 && r.advance(10).is_ok() {
                return Ok(x | u64::from(b8 & 0x7f) << 56 | u64::from(b9) << 63);
            }
        }
    }
    varint_pbwire(r)
}

/// The 7-bit groups of the 8 bytes of `w` (little-endian), continuation
/// bits dropped, joined into a 56-bit value.
#[inline(always)]
fn join_groups(w: u64) -> u64 {
    let mut x = w & 0x7f7f_7f7f_7f7f_7f7f;
    x = (x & 0x007f_007f_007f_007f) | (x & 0x7f00_7f00_7f00_7f00) >> 1;
    x = (x & 0x0000_3fff_0000_3fff) | (x & 0x3fff_0000_3fff_0000) >> 2;
    (x & 0x0000_0000_0fff_ffff) | (x & 0x0fff_ffff_0000_0000) >> 4
}

/// pbwire's decoder, apart so that [`varint_general`]'s word path is a
/// leaf that saves no registers (a tail call here).
#[inline(never)]
fn varint_pbwire(r: &mut Reader<'_>) -> pbwire::Result<u64> {
    r.read_varint()
}

/// The tag that continues a run of a repeated field whose tag is `tag`,
/// as its length (1 or 2 bytes) and its bytes (little-endian); length 0
/// when no tag continues it (a closed enum checks every value, and longer
/// tags are rare).
#[inline(always)]
fn run_tag(tag: Tag, closed: bool) -> (usize, u16) {
    let raw = tag.raw();
    match raw {
        _ if closed => (0, 0),
        0..0x80 => (1, raw as u16),
        0x80..0x4000 => (2, (raw as u16 & 0x7f | 0x80) | ((raw >> 7) as u16) << 8),
        _ => (0, 0),
    }
}

/// Whether the next bytes of `r` are the run's tag ([`run_tag`]).
#[inline(always)]
fn run_continues(r: &Reader<'_>, next_len: usize, next: u16) -> bool {
    let rest = r.rest();
    match next_len {
        1 => rest.first() == Some(&(next as u8)),
        2 => rest.first_chunk::<2>().is_some_and(|b| u16::from_le_bytes(*b) == next),
        _ => false,
    }
}

/// How many values the packed run `run` of `f` holds (a fixed-width
/// kind's by its length; varints counted), to pre-size its array.
#[inline(always)]
fn packed_count(f: &FieldPlan, run: &[u8]) -> usize {
    match f.kind.wire_type() {
        WireType::I32 => run.len() / 4,
        WireType::I64 => run.len() / 8,
        _ => packed::count_packed_varints(run),
    }
}

impl Containers {
    /// Whether `f`'s container does not exist yet (known only for tracked
    /// slots outside merge mode; otherwise `false`).
    #[inline(always)]
    fn is_new(&self, f: &FieldPlan) -> bool {
        !self.merge && self.counts.get(f.slot as usize).is_some_and(|&n| n == 0)
    }
}

/// `push` each of `values` and store it at index 1, 2, … of the array at
/// `slot` (`DecodeCtx::fresh_varint_run`; [`store`]).
///
/// # Safety
/// `values` initialised; `slot` holds the array; `push` pushes one value
/// (one free slot, two for cdata), which `rawseti` pops.
#[cfg(feature = "luajit")]
#[inline(always)]
unsafe fn store_values(L: *mut lua_State, slot: c_int, values: &[MaybeUninit<u64>], push: impl Fn(u64)) {
    for (i, v) in values.iter().enumerate() {
        // SAFETY: caller's contract.
        unsafe {
            push(v.assume_init());
            store(L, slot, i as i64 + 1);
        }
    }
}

/// `rawseti(slot, n)`: the value on top into the array at `slot`; with
/// `slot` 0 (a long array, `crate::bulk_array`) the value stays on the
/// stack as an argument of the array's constructor.
///
/// # Safety
/// `slot` 0, or it holds the array and a value is on top.
#[inline(always)]
unsafe fn store(L: *mut lua_State, slot: c_int, n: i64) {
    if slot != 0 {
        // SAFETY: caller's contract.
        unsafe { lua::rawseti(L, slot, n) }
    }
}

/// The varint at the start of `b` and the bytes after it, `None` when it
/// is bad or cut: 1- to 3-byte values (below 2^21) inline, longer ones
/// through `varint_general`. For the loops that keep their position in a
/// slice ([`DecodeCtx::leaf_varints`], `DecodeCtx::fresh_varint_run`).
#[inline(always)]
pub(crate) fn slice_varint(b: &[u8]) -> Option<(u64, &[u8])> {
    Some(match *b {
        [b0, ref tail @ ..] if b0 < 0x80 => (u64::from(b0), tail),
        [b0, b1, ref tail @ ..] if b1 < 0x80 => (u64::from(b0 & 0x7f) | u64::from(b1) << 7, tail),
        [b0, b1, b2, ref tail @ ..] if b2 < 0x80 => {
            (u64::from(b0 & 0x7f) | u64::from(b1 & 0x7f) << 7 | u64::from(b2) << 14, tail)
        }
        _ => {
            let mut long = Reader::new(b);
            let v = varint_general(&mut long).ok()?;
            (v, long.rest())
        }
    })
}

/// Elements an unpacked repeated field's array will get from the run of
/// `tag` starting here (`r` is at the first value): the first value and
/// every value right after it under the same tag, counted from tags and
/// lengths only, so the array is created at its size and never regrown.
/// Encoders write a field's elements together; later ones, if any, grow
/// the array as usual. Stops early at anything unexpected (the decode
/// reports it).
#[inline(never)]
fn count_run(r: &Reader<'_>, tag: Tag) -> usize {
    // On the bytes, like `presize`: the next tag is compared as encoded.
    let b = r.rest();
    let raw = tag.raw();
    let wt = raw as u8 & 7;
    // One loop per tag length: a two-byte tag (field numbers 16–2047)
    // compares two bytes, not a `starts_with` (a memcmp call per element:
    // BenchPayload's `items`). The one- and two-byte encodings are spelled
    // out: `Tag::encode` cost ~35 instructions of byte shuffling per call
    // (a third of a one-element run's count).
    if raw < 0x80 {
        let t0 = raw as u8;
        run_of(b, wt, |p| (b.get(p) == Some(&t0)).then_some(p + 1))
    } else if raw < 0x4000 {
        let (t0, t1) = (raw as u8 | 0x80, (raw >> 7) as u8);
        run_of(b, wt, |p| (b.get(p) == Some(&t0) && b.get(p + 1) == Some(&t1)).then_some(p + 2))
    } else {
        let enc = tag.encode();
        let enc = enc.as_bytes();
        run_of(b, wt, |p| b[p..].starts_with(enc).then_some(p + enc.len()))
    }
}

/// [`run_of`] for LEN values: the length read inline when it is one byte.
#[inline(always)]
fn len_run_of(b: &[u8], next_tag: impl Fn(usize) -> Option<usize>) -> usize {
    let (mut p, mut n) = (0, 0);
    loop {
        let e = match b.get(p) {
            // `p` indexes a slice, so `p + 1 + 127` cannot overflow: no
            // checked add on the common path (2 of its ~17 instructions a
            // value; Person 10KB's 250 `emails`).
            Some(&x) if x < 0x80 => p + 1 + usize::from(x),
            _ => match scan_varint(b, p).and_then(|(l, q)| q.checked_add(usize::try_from(l).ok()?)) {
                Some(e) => e,
                None => return n.max(1),
            },
        };
        if e > b.len() {
            return n.max(1);
        }
        n += 1;
        match next_tag(e) {
            Some(q) => p = q,
            None => return n,
        }
    }
}

/// [`count_run`]'s loop: values of wire type `wt` from `b[0..]`, each
/// followed by the tag that `next_tag` recognises at a position (giving the
/// position after it).
#[inline(always)]
fn run_of(b: &[u8], wt: u8, next_tag: impl Fn(usize) -> Option<usize>) -> usize {
    // LEN (strings, bytes, sub-messages), the commonest run, without the
    // per-value wire-type dispatch of `scan_value`.
    // The other wire types, likewise each with its own loop (callgrind:
    // the dispatch per value was ~8 of the ~30 instructions a value of
    // BenchPayload mid's 24 `values`).
    match wt {
        2 => len_run_of(b, next_tag),
        0 => value_run_of(next_tag, |p| skip_varint(b, p)),
        1 => value_run_of(next_tag, |p| (p + 8 <= b.len()).then_some(p + 8)),
        5 => value_run_of(next_tag, |p| (p + 4 <= b.len()).then_some(p + 4)),
        _ => value_run_of(next_tag, |p| scan_value(b, p, wt)),
    }
}

/// [`run_of`] for one wire type: `value_end` gives the position after the
/// value at a position (`None`: it does not fit).
#[inline(always)]
fn value_run_of(next_tag: impl Fn(usize) -> Option<usize>, value_end: impl Fn(usize) -> Option<usize>) -> usize {
    let (mut p, mut n) = (0, 0);
    loop {
        let Some(e) = value_end(p) else { return n.max(1) };
        n += 1;
        match next_tag(e) {
            Some(q) => p = q,
            None => return n,
        }
    }
}

impl<'a> DecodeCtx<'a> {
    /// Decode `buf` as message `msg` and push the resulting table.
    ///
    /// # Safety
    /// `L` is valid; `keys`/`helpers` index the schema's tables; the input
    /// stays anchored (it is a Lua string argument) for the call.
    ///
    /// With option `serialize`, the metatables are fetched here, from the
    /// helper table: the root fast path sets the map metatable on its table
    /// straight from there (it makes no array); before the general walk
    /// both are pushed, into `map_mt` and `seq_mt` (both 0 on entry).
    #[inline(always)]
    pub unsafe fn decode_root(&mut self, msg: u32) -> Result<(), CodecError> {
        // SAFETY: forwarded contract; the helper table holds both
        // metatables; the four slots taken before the general walk (the
        // key table, the metatables, the constructor table) are within the
        // `LUA_MINSTACK` (20) a C function starts with (the entry points
        // use at most 8). `keys` is a positive index or an upvalue
        // pseudo-index (negative).
        let res = unsafe {
            match self.root_fast(msg) {
                Some(res) => res,
                None => {
                    let L = self.L;
                    if self.keys < 0 {
                        // The key table (an upvalue of `Msg:decode`) in a
                        // slot: `lua_rawgeti` reaches a positive index with
                        // one load from the stack base, an upvalue through
                        // the C function and its upvalue array (~14
                        // instructions and two dependent loads more per key
                        // string). The root fast path, with few keys, keeps
                        // the upvalue (the copy costs ~31).
                        ffi::lua_pushvalue(L, self.keys);
                        self.keys = ffi::lua_gettop(L);
                    }
                    if self.opts.serialize {
                        lua::push_rawgeti(L, self.helpers, crate::host::HELPER_MAP_MT);
                        lua::push_rawgeti(L, self.helpers, crate::host::HELPER_SEQ_MT);
                        self.seq_mt = ffi::lua_gettop(L);
                        self.map_mt = self.seq_mt - 1;
                    }
                    // The constructor table, when the options leave no
                    // work after a message's fields but the required check.
                    #[cfg(feature = "luajit")]
                    if self.opts.defaults == DefaultsMode::None && !self.opts.empty && self.opts.constructors {
                        if lua::rawgeti(L, self.keys, crate::shape_ctor::KEYS_CTORS) == ffi::LUA_TTABLE {
                            self.ctors = ffi::lua_gettop(L);
                        } else {
                            ffi::lua_pop(L, 1);
                        }
                    }
                    // The whole message through its tree's constructor
                    // when the walk covers it (`tree_ctor`).
                    #[cfg(feature = "luajit")]
                    if self.ctors != 0 && self.tree_root(msg) {
                        return Ok(());
                    }
                    self.frame(msg, &mut Reader::new(self.input), 1, None, false)
                }
            }
        };
        res.map_err(|_| self.err.take())
    }

    /// The root fast path: a short input (at most [`SCAN_PRESIZE`] bytes)
    /// made only of plain fields with one-byte tags
    /// ([`MessagePlan::plain_by_number`]), at most [`FAST_FIELDS`] of
    /// them, is read whole before its table is made, so that the table is
    /// sized from the fields read instead of a scan of the body. The table
    /// then gets the same size, the same keys and values in the same
    /// order, through the same Lua calls as [`Self::message`] gives it;
    /// on LuaJIT, `Msg:decode` takes the shape's constructor instead
    /// ([`Self::root_by_ctor`]): the same keys and values, in a table sized
    /// for exactly those keys.
    /// `None`, with nothing pushed: anything else (another tag, a bad
    /// value, an option with work after the fields), for [`Self::frame`]
    /// to decode from the start, which also reports any error.
    ///
    /// # Safety
    /// As [`Self::decode_root`].
    #[inline(always)]
    unsafe fn root_fast(&self, mi: u32) -> Option<Res> {
        let plan: &MessagePlan = &self.plans.messages[mi as usize];
        let b = self.input;
        if b.len() > SCAN_PRESIZE
            || self.opts.max_depth == 0
            || self.opts.defaults != DefaultsMode::None
            || (self.opts.empty && plan.n_slots != 0)
        {
            return None;
        }
        // 16 entries when there are any.
        let by_number: &[PlainTag; 16] = plan.plain_by_number.as_ref().try_into().ok()?;
        let mut vals = [MaybeUninit::<Pending>::uninit(); FAST_FIELDS];
        let (mut n, mut p, mut seen_required) = (0usize, 0usize, 0u64);
        while let Some(&b0) = b.get(p) {
            if b0 >= 0x80 {
                return None;
            }
            let e = &by_number[usize::from(b0 >> 3)];
            if e.wire != b0 & 7 || n == FAST_FIELDS {
                return None;
            }
            // The value's bits (a LEN value's start) and its end; the
            // kind's conversion is left to the push below.
            let (x, end) = match e.wire {
                0 => scan_varint(b, p + 1)?,
                2 => {
                    let (len, q) = match b.get(p + 1) {
                        Some(&l) if l < 0x80 => (usize::from(l), p + 2),
                        _ => {
                            let (len, q) = scan_varint(b, p + 1)?;
                            (usize::try_from(len).ok()?, q)
                        }
                    };
                    let end = q.checked_add(len)?;
                    let s = b.get(q..end)?;
                    if e.utf8 && self.opts.utf8 && utf8::validate_utf8(s, q).is_err() {
                        return None;
                    }
                    (q as u64, end)
                }
                5 => {
                    let s = b.get(p + 1..p + 5)?;
                    (u64::from(u32::from_le_bytes(s.try_into().ok()?)), p + 5)
                }
                _ => {
                    let s = b.get(p + 1..p + 9)?;
                    (u64::from_le_bytes(s.try_into().ok()?), p + 9)
                }
            };
            if e.required {
                seen_required |= 1u64 << e.fi;
            }
            let key = if self.root_up { DECODE_UP_KEYS + c_int::from(b0 >> 3) } else { e.key_id };
            vals[n].write(Pending { key, fi: e.fi, kind: e.kind, x, end });
            n += 1;
            p = end;
        }
        // LuaJIT: the table from the shape's constructor, when there is one.
        #[cfg(feature = "luajit")]
        if self.root_up && self.opts.constructors {
            // SAFETY: `vals[..n]` were written above.
            let read = unsafe { &*(&vals[..n] as *const [MaybeUninit<Pending>] as *const [Pending]) };
            // SAFETY: forwarded contract.
            if let Some(res) = unsafe { self.root_by_ctor(mi, plan, read, seen_required) } {
                return Some(res);
            }
        }
        // `message`'s pre-size for this body: a lean plan's, or the scan's
        // count (every field here, up to the cap).
        let presize =
            if plan.lean { plan.fields.len().min(b.len() / 2) } else { n.min(plan.fields.len().min(MAX_PRESIZE)) };
        let L = self.L;
        // SAFETY: at most 3 slots above what the entry points use (at most
        // 8: `schema:decode`'s): the table, then a key and a value (or the
        // map metatable, fetched from the helper table; or push_cdata's
        // constructor, which `lua_call` gives a stack of its own), all
        // within the LUA_MINSTACK (20) a C function starts with, so no
        // `lua_checkstack`. A GC step inside these calls cannot take those
        // slots away: Lua 5.1 and 5.4 shrink a stack only down to the
        // highest `ci->top` in use, which for this C call is its base + 20,
        // and LuaJIT's pushes grow the stack themselves when they reach its
        // end (`incr_top`). Each value is popped by its rawset; every
        // `vals[..n]` was written above, a LEN value's span inside `b`.
        unsafe {
            ffi::lua_createtable(L, 0, presize as c_int);
            if self.opts.serialize {
                if self.root_up {
                    ffi::lua_pushvalue(L, lua::upvalue(DECODE_UP_MAP_MT));
                } else {
                    lua::push_rawgeti(L, self.helpers, crate::host::HELPER_MAP_MT);
                }
                ffi::lua_setmetatable(L, -2);
            }
            for v in &vals[..n] {
                let v = v.assume_init_ref();
                if self.root_up {
                    ffi::lua_pushvalue(L, lua::upvalue(v.key));
                } else {
                    self.push_key(v.key);
                }
                self.push_pending(plan, v);
                ffi::lua_rawset(L, -3);
            }
            let all = plan.required_mask;
            if self.opts.check_required && !plan.required.is_empty() && (all == 0 || seen_required & all != all) {
                let t = ffi::lua_gettop(L);
                return Some(self.check_required(mi, plan, t, seen_required, false, b.len()));
            }
        }
        Some(Ok(()))
    }

    /// Push the value of a field the root fast path read.
    ///
    /// # Safety
    /// A free slot; `v` read from `self.input` by [`Self::root_fast`].
    #[inline(always)]
    unsafe fn push_pending(&self, plan: &MessagePlan, v: &Pending) {
        let (L, x) = (self.L, v.x);
        // SAFETY: caller's contract; a LEN value's span is inside the input.
        unsafe {
            match v.kind {
                Kind::String | Kind::Bytes => lua::push_bytes(L, self.input.get_unchecked(x as usize..v.end)),
                Kind::Fixed32 => lua::push_small_int(L, x as u32 as i64),
                Kind::SFixed32 => lua::push_small_int(L, x as u32 as i32 as i64),
                Kind::Float => lua::push_number(L, f32::from_bits(x as u32) as f64),
                Kind::Fixed64 => self.push_64(x, false),
                Kind::SFixed64 => self.push_64(x, true),
                Kind::Double => lua::push_number(L, f64::from_bits(x)),
                // The varint kinds as `push_varint_as` pushes them.
                Kind::Int32 => lua::push_small_int(L, x as i32 as i64),
                Kind::UInt32 => lua::push_small_int(L, x as u32 as i64),
                Kind::SInt32 => lua::push_small_int(L, zigzag::decode_zigzag32(x as u32) as i64),
                Kind::Bool => lua::push_bool(L, x != 0),
                // The rest (a plain field is no message or group).
                _ => self.push_varint(&plan.fields[usize::from(v.fi)], x),
            }
        }
    }

    /// The root fast path's table made by the constructor of its shape
    /// ([`crate::shape_ctor`]): the constructor, then the values in wire
    /// order, one `lua_call`. `None`, with nothing pushed, when the fields
    /// read have no shape (a repeat, more than
    /// [`crate::shape_ctor::CTOR_FIELDS`]) or the handle's cache is full,
    /// for the C API path.
    ///
    /// # Safety
    /// As [`Self::root_fast`], with `root_up`; `read` the fields it read.
    #[cfg(feature = "luajit")]
    #[inline(always)]
    unsafe fn root_by_ctor(&self, mi: u32, plan: &MessagePlan, read: &[Pending], seen_required: u64) -> Option<Res> {
        use crate::message_api::{DECODE_UP_CTORS, DECODE_UP_LAST_CTOR};
        use crate::shape_ctor;
        let last = self.last_shape?;
        let shape = shape_ctor::shape_of(read.iter().map(|v| (v.key - DECODE_UP_KEYS) as u8))?;
        let L = self.L;
        // SAFETY: slots: the constructor and at most `CTOR_FIELDS` (7)
        // values, above the at most 8 the entry points use, within the
        // LUA_MINSTACK (20) a C function starts with (the stack argument
        // of `root_fast`); a miss takes 4 of those first. The upvalues are
        // `Msg:decode`'s (`root_up`), key upvalues strings for every number
        // read (plain fields). `lua_call` runs our generated constructor,
        // which only builds a table: it may raise out-of-memory, like
        // `lua_createtable`, and nothing of ours needs dropping here. A
        // debug hook may run inside it: its error crosses us the same way;
        // a decode it makes with this handle finds the memo and its upvalue
        // consistent (both set above, before the call); and after the call
        // only the input's length is used, so a hook that replaced our
        // argument slots (`debug.setlocal`) cannot make us read a collected
        // string.
        unsafe {
            if last.get() == shape {
                ffi::lua_pushvalue(L, lua::upvalue(DECODE_UP_LAST_CTOR));
            } else {
                let key_of = |num| lua::upvalue(DECODE_UP_KEYS + c_int::from(num));
                if !shape_ctor::push_ctor(L, lua::upvalue(DECODE_UP_CTORS), shape, key_of) {
                    return None;
                }
                ffi::lua_pushvalue(L, -1);
                ffi::lua_replace(L, lua::upvalue(DECODE_UP_LAST_CTOR));
                last.set(shape);
            }
            for v in read {
                self.push_pending(plan, v);
            }
            ffi::lua_call(L, read.len() as c_int, 1);
            if self.opts.serialize {
                ffi::lua_pushvalue(L, lua::upvalue(DECODE_UP_MAP_MT));
                ffi::lua_setmetatable(L, -2);
            }
            let all = plan.required_mask;
            if self.opts.check_required && !plan.required.is_empty() && (all == 0 || seen_required & all != all) {
                let t = ffi::lua_gettop(L);
                return Some(self.check_required(mi, plan, t, seen_required, false, self.input.len()));
            }
        }
        Some(Ok(()))
    }

    /// [`Self::message`] for a new table of a `by_ctor` plan (LuaJIT, with
    /// the constructor table at `ctors`): the fields' values are pushed as
    /// they are read, a repeated field's array taking one slot at its
    /// first occurrence, and at the end the constructor of the shape
    /// (`crate::shape_ctor::find_message_ctor`) makes the table from them
    /// in one `lua_call`: each key costs one `TSETS` into a template that
    /// already holds it, instead of a key push, `lua_rawset` and
    /// `lj_tab_newkey` (PERF_LOG, ninth session).
    ///
    /// What the shape does not cover (an unknown field, a wrong wire type,
    /// a singular field met again, a closed-enum value the enum lacks,
    /// more than `SHAPE_FIELDS` fields) makes the table from what was read
    /// so far, through the C API, and returns [`ByCtor::Merge`] with `r`
    /// at that field: [`Self::frame`] then walks the rest of the body
    /// merging into the table, once this frame is gone: the same result,
    /// each byte read once. No room on the stack: [`ByCtor::Declined`],
    /// nothing read. Errors are the general walk's, from the same calls in
    /// the same order.
    ///
    /// # Safety
    /// As [`Self::message`]; `self.ctors` set.
    #[cfg(feature = "luajit")]
    #[inline(never)]
    unsafe fn message_by_ctor(&self, mi: u32, r: &mut Reader<'_>, depth: u32) -> Res<ByCtor> {
        use crate::shape_ctor::{SHAPE_FIELDS, Shape};
        let L = self.L;
        let plan: &MessagePlan = &self.plans.messages[mi as usize];
        debug_assert!(plan.by_ctor && plan.fields.len() <= 64);
        if depth > self.opts.max_depth {
            return Err(self.err.set(CodecError::new(ErrorKind::DepthLimit(self.opts.max_depth), Some(r.position()))));
        }
        // SAFETY: (whole body) the constructor takes the slot `base` and
        // the values `base + 1 ..= base + n`, reserved below with room for
        // `find_message_ctor`'s and a value's temporaries; raw API calls run
        // no metamethods; every index into `fields` is from `plain_by_tag`
        // or `field_index`.
        unsafe {
            // The constructor and the values, plus the constructor lookup's
            // slots (a key each and 4), plus a value's own (the general
            // frame's 11).
            if ffi::lua_checkstack(L, 1 + 2 * SHAPE_FIELDS as c_int + 4 + 11) == 0 {
                return Ok(ByCtor::Declined);
            }
            // The constructor of the message's memoised shape (or nil), at
            // `base`, below the values: when the shape read matches, the
            // call needs no `lua_insert` (~29 instructions a message). The
            // shape it is for is taken now: by the end, a nested message
            // of the same type (or a hook's decode) may have memoised
            // another, while this slot keeps the one pushed.
            let memo = self.ctor_memo.get_unchecked(mi as usize);
            let speculated = memo.get();
            lua::push_rawgeti(L, self.ctors, i64::from(mi) + 1);
            let base = ffi::lua_gettop(L);
            let mut shape: Shape = [0; SHAPE_FIELDS + 1];
            let mut n = 0usize;
            // Per field index: seen yet (also the required check's seen
            // set: a required field is singular), and for a repeated one
            // its array's argument (written when first seen); per argument,
            // its array's element count (written when it is made).
            let mut seen = 0u64;
            let mut arg_of = [MaybeUninit::<u8>::uninit(); 64];
            let mut count = [MaybeUninit::<u32>::uninit(); SHAPE_FIELDS];
            while let Some(&b0) = r.rest().first() {
                let at = r.clone();
                // A plain field (one-byte tag, its own wire type, singular)
                // needs no checks; others come with their tag.
                let plain = plan.plain_by_tag.get(usize::from(b0)).copied().unwrap_or(0);
                let (fi, tag) = if plain != 0 {
                    let _ = r.advance(1);
                    (usize::from(plain & !PLAIN_REQUIRED) - 1, None)
                } else {
                    let tag = r.read_tag().map_err(|e| self.err.set(CodecError::wire(e)))?;
                    let Some(fi) = plan.field_index(tag.field_number()) else {
                        return Ok(self.ctor_bail(plan, base, &shape[1..=n], at, r));
                    };
                    (fi, Some(tag))
                };
                let f = plan.fields.get_unchecked(fi);
                let bit = 1u64 << fi;
                match (f.card, tag) {
                    (Card::Single, _) => {
                        if seen & bit != 0 || n == SHAPE_FIELDS {
                            return Ok(self.ctor_bail(plan, base, &shape[1..=n], at, r));
                        }
                        if let Some(tag) = tag {
                            let wt = tag.wire_type();
                            if f.plain_wire != wt as u8
                                && (wt != f.kind.wire_type() || (f.kind == Kind::Enum && self.closed_miss(f, r)?))
                            {
                                return Ok(self.ctor_bail(plan, base, &shape[1..=n], at, r));
                            }
                        }
                        self.value(f, r, depth, f.number).map_err(|_| self.err.with(|e| e.in_field(mi, fi)))?;
                    }
                    (Card::Repeated, Some(tag)) => {
                        let wt = tag.wire_type();
                        let packed = wt == WireType::Len && f.kind.is_packable();
                        let closed = f.kind == Kind::Enum && self.plans.enums[f.sub as usize].closed;
                        if (packed && closed)
                            || (!packed && (wt != f.kind.wire_type() || (closed && self.closed_miss(f, r)?)))
                            || (seen & bit == 0 && n == SHAPE_FIELDS)
                        {
                            return Ok(self.ctor_bail(plan, base, &shape[1..=n], at, r));
                        }
                        if !packed && seen & bit == 0 && tag.raw() < 0x80 && f.kind.is_plain_varint() {
                            // A new array of varints: read, then made at
                            // its size, without a counting pass.
                            let last = self.fresh_varint_run(mi, fi, f, r, depth, tag)?;
                            seen |= bit;
                            arg_of.get_unchecked_mut(fi).write(n as u8);
                            count.get_unchecked_mut(n).write(last as u32);
                            *shape.get_unchecked_mut(1 + n) = fi as u8;
                            n += 1;
                            continue;
                        }
                        let run = if packed {
                            let run =
                                r.read_len_bytes().map_err(|e| self.err.set(CodecError::wire(e).in_field(mi, fi)))?;
                            if run.is_empty() {
                                // No element: the field stays absent.
                                continue;
                            }
                            Some(run)
                        } else {
                            None
                        };
                        let presize = match run {
                            Some(run) => packed_count(f, run),
                            None => count_run(r, tag),
                        };
                        if seen & bit == 0
                            && !closed
                            && (BULK_MIN..=BULK_MAX).contains(&presize)
                            && let Some(last) = self.bulk_run(mi, fi, f, run, r, depth, tag, presize)
                        {
                            let last = last?;
                            seen |= bit;
                            arg_of.get_unchecked_mut(fi).write(n as u8);
                            count.get_unchecked_mut(n).write(last as u32);
                            *shape.get_unchecked_mut(1 + n) = fi as u8;
                            n += 1;
                            continue;
                        }
                        let arg = if seen & bit != 0 {
                            usize::from(arg_of.get_unchecked(fi).assume_init())
                        } else {
                            ffi::lua_createtable(L, presize.min(1 << 26) as c_int, 0);
                            if self.seq_mt != 0 {
                                self.set_mt(-1, self.seq_mt);
                            }
                            seen |= bit;
                            arg_of.get_unchecked_mut(fi).write(n as u8);
                            count.get_unchecked_mut(n).write(0);
                            *shape.get_unchecked_mut(1 + n) = fi as u8;
                            n += 1;
                            n - 1
                        };
                        let slot = base + 1 + arg as c_int;
                        let last = i64::from(count.get_unchecked(arg).assume_init());
                        let last = match run {
                            Some(run) => self.packed_run_into(mi, fi, f, run, r.position(), slot, last, presize)?,
                            None => self.unpacked_run(mi, fi, f, r, depth, tag, slot, last, closed)?,
                        };
                        count.get_unchecked_mut(arg).write(last as u32);
                        continue;
                    }
                    // A plain field is singular; a by_ctor plan has no map.
                    (Card::Repeated, None) | (Card::Map, _) => core::hint::unreachable_unchecked(),
                }
                seen |= bit;
                *shape.get_unchecked_mut(1 + n) = fi as u8;
                n += 1;
            }
            shape[0] = n as u8;
            let all = plan.required_mask;
            if self.opts.check_required && !plan.required.is_empty() && (all == 0 || seen & all != all) {
                self.ctor_table(plan, base, &shape[1..=n]);
                return self.check_required(mi, plan, base, seen, false, r.position()).map(|()| ByCtor::Done);
            }
            // A memo hit: the constructor at `base` is the shape's (no type
            // check: see `shape_ctor::find_message_ctor`). A miss: the
            // shape's from the cache or compiled, in its place.
            let hit = n != 0 && speculated == shape;
            if !hit {
                if n == 0
                    || !crate::shape_ctor::find_message_ctor(L, self.ctors, self.keys, memo, mi, &shape, |fi| {
                        i64::from(plan.fields.get_unchecked(usize::from(fi)).key_id)
                    })
                {
                    self.ctor_table(plan, base, &shape[1..=n]);
                    return Ok(ByCtor::Done);
                }
                ffi::lua_replace(L, base);
            }
            ffi::lua_call(L, n as c_int, 1);
            if self.map_mt != 0 {
                self.set_mt(-1, self.map_mt);
            }
            debug_assert_eq!(ffi::lua_gettop(L), base, "constructor frame left its stack unbalanced");
        }
        Ok(ByCtor::Done)
    }

    /// [`Self::message_by_ctor`] meets what its shape does not cover, at
    /// the field that starts at `at`: the table from the fields read so
    /// far (`read`, their indices; [`Self::ctor_table`]), and `r` back at
    /// that field, for [`Self::frame`] to walk the rest of the body merging
    /// into the table (as protobuf merges a message's fields met again)
    /// once `message_by_ctor`'s frame is gone: run from here, the general
    /// frame would sit on top of it at every level (review9: ~2.6 KiB of C
    /// stack a level for input that bails at every level).
    ///
    /// # Safety
    /// As `message_by_ctor`, with the values read at `base + 1 ..`; `at` a
    /// copy of `r` before the field.
    #[cfg(feature = "luajit")]
    #[cold]
    #[inline(never)]
    unsafe fn ctor_bail<'b>(
        &self,
        plan: &MessagePlan,
        base: c_int,
        read: &[u8],
        at: Reader<'b>,
        r: &mut Reader<'b>,
    ) -> ByCtor {
        // SAFETY: forwarded.
        unsafe { self.ctor_table(plan, base, read) };
        *r = at;
        ByCtor::Merge
    }

    /// The table of the fields `read` (their indices; their values at
    /// `base + 1 ..`) through the C API, as [`Self::message`] makes one,
    /// left at `base` (where the speculated constructor was), the top.
    ///
    /// # Safety
    /// As `message_by_ctor`; three free slots.
    #[cfg(feature = "luajit")]
    #[cold]
    unsafe fn ctor_table(&self, plan: &MessagePlan, base: c_int, read: &[u8]) {
        let (L, n) = (self.L, read.len());
        // SAFETY: caller's contract; `shape` holds indices into `fields`.
        unsafe {
            ffi::lua_createtable(L, 0, n as c_int);
            if self.map_mt != 0 {
                self.set_mt(-1, self.map_mt);
            }
            for (i, &fi) in read.iter().enumerate() {
                self.push_key(plan.fields.get_unchecked(usize::from(fi)).key_id);
                ffi::lua_pushvalue(L, base + 1 + i as c_int);
                ffi::lua_rawset(L, -3);
            }
            ffi::lua_replace(L, base);
            ffi::lua_settop(L, base);
        }
    }

    /// A new array of `f` from its first run (`run` its packed bytes, or
    /// `None`: an unpacked run whose first tag `tag` was read; `presize`
    /// elements, within `BULK_MIN..=BULK_MAX`) pushed, made by one call
    /// ([`Self::long_array`]). Returns its last index; `None` (nothing
    /// read or pushed) when the stack cannot take it.
    ///
    /// # Safety
    /// As `message_by_ctor`.
    #[cfg(feature = "luajit")]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn bulk_run(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        run: Option<&[u8]>,
        r: &mut Reader<'_>,
        depth: u32,
        tag: Tag,
        presize: usize,
    ) -> Option<Res<i64>> {
        let end = r.position();
        // SAFETY: caller's contract; slot 0 leaves each value for the call.
        unsafe {
            let last = self.long_array(f, presize, &mut |c| match run {
                Some(run) => c.packed_run_into(mi, fi, f, run, end, 0, 0, presize),
                None => c.unpacked_run(mi, fi, f, r, depth, tag, 0, 0, false),
            })?;
            if last.is_ok() && self.seq_mt != 0 {
                self.set_mt(-1, self.seq_mt);
            }
            Some(last)
        }
    }

    /// Push a long array of `f` of `n` values (`BULK_MIN..=BULK_MAX`) that
    /// `fill` pushes with slot 0 on the Lua state of the context it is
    /// given, returning its last index (`crate::bulk_array`). An array of
    /// scalars or strings is filled on the parked thread when it is free,
    /// and moved here; any other on this stack. `None` (nothing pushed, the
    /// input not read) when this stack cannot take it.
    ///
    /// # Safety
    /// As `message_by_ctor`; `fill` as above.
    #[cfg(feature = "luajit")]
    unsafe fn long_array(
        &self,
        f: &FieldPlan,
        n: usize,
        fill: &mut dyn FnMut(&DecodeCtx<'a>) -> Res<i64>,
    ) -> Option<Res<i64>> {
        let L = self.L;
        // SAFETY: caller's contract; on the parked thread, `fill` runs
        // inside `run_parked`'s `lua_pcall` with the helper and key tables
        // at the indices `on_thread` gives.
        unsafe {
            if !matches!(f.kind, Kind::Message | Kind::Group)
                && let Some(T) = bulk_array::claim(L, self.helpers, &self.module.bulk_busy)
            {
                let mut last = 0;
                let mut on_parked = |T: *mut lua_State| -> bool {
                    let c = self.on_thread(T);
                    if ffi::lua_checkstack(T, n as c_int + 8) == 0 {
                        self.err.set(CodecError::new(ErrorKind::Internal, None));
                        return false;
                    }
                    ffi::lua_pushnil(T);
                    ffi::lua_pushvalue(T, bulk_array::FILL_PACK);
                    match fill(&c) {
                        Ok(n) => {
                            bulk_array::finish_here(T, n);
                            last = n;
                            true
                        }
                        Err(_) => {
                            self.err.set(c.err.take());
                            false
                        }
                    }
                };
                let ok = bulk_array::run_parked(L, T, self.helpers, self.keys, &self.module.bulk_busy, &mut on_parked);
                return Some(if ok { Ok(last) } else { Err(Fail) });
            }
            if !bulk_array::begin_here(L, self.helpers, n) {
                return None;
            }
            let last = fill(self);
            if let Ok(last) = last {
                bulk_array::finish_here(L, last);
            }
            Some(last)
        }
    }

    /// This decode's context with `T` (the parked thread, inside a fill of
    /// [`Self::long_array`]) as its Lua state: the helper and key tables
    /// at the fill's arguments, its own error slot, and none of the
    /// stack slots of this thread (metatables, constructors), which the
    /// fill of a scalar or string array does not use.
    #[cfg(feature = "luajit")]
    fn on_thread(&self, T: *mut lua_State) -> DecodeCtx<'a> {
        DecodeCtx {
            L: T,
            plans: self.plans,
            keys: bulk_array::FILL_KEYS,
            helpers: bulk_array::FILL_HELPERS,
            err: ErrSlot::new(),
            input: self.input,
            opts: self.opts,
            seq_mt: 0,
            map_mt: 0,
            root_up: false,
            last_shape: None,
            ctor_memo: self.ctor_memo,
            tree: self.tree,
            ctors: 0,
            module: self.module,
        }
    }

    /// [`Self::packed_fill`] of the packed run `run` (its bytes end at
    /// input position `end`), out of line: the run's temporaries stay out
    /// of `message_by_ctor`'s frame, which the recursion stacks.
    ///
    /// # Safety
    /// As `packed_fill`.
    #[cfg(feature = "luajit")]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn packed_run_into(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        run: &[u8],
        end: usize,
        slot: c_int,
        n: i64,
        presize: usize,
    ) -> Res<i64> {
        let mut sub = Reader::with_offset(run, end - run.len());
        // SAFETY: forwarded.
        unsafe { self.packed_fill(mi, fi, f, &mut sub, slot, n, presize) }
    }

    /// A run of the unpacked repeated field `f` into the array at `slot`
    /// whose last index is `n`, its first tag (`tag`) read: the element
    /// after it, and more while the next tag is the same (as
    /// [`Self::message`]'s run). Returns the new last index. Out of line,
    /// like [`Self::packed_run_into`]: with both inline the recursive
    /// frame was 1,480 bytes (x86_64), 808 without (PERF_LOG, ninth
    /// session).
    ///
    /// # Safety
    /// `slot` holds the array; the frame's free slots.
    #[cfg(feature = "luajit")]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn unpacked_run(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        depth: u32,
        tag: Tag,
        slot: c_int,
        mut n: i64,
        closed: bool,
    ) -> Res<i64> {
        let (next_len, next) = run_tag(tag, closed);
        // SAFETY: caller's contract; each value is popped by its rawseti.
        unsafe {
            loop {
                n += 1;
                self.value(f, r, depth, f.number).map_err(|_| self.err.with(|e| e.in_element(mi, fi, n as u64)))?;
                store(self.L, slot, n);
                if !run_continues(r, next_len, next) {
                    break;
                }
                if next_len == 1 && !matches!(f.kind, Kind::Message | Kind::Group) {
                    n = self.leaf_run(mi, fi, f, r, slot, n, next as u8)?;
                    break;
                }
                let _ = r.advance(next_len);
            }
        }
        Ok(n)
    }

    /// A new array for the unpacked varint field `f` (not an enum), its
    /// first tag (`tag`, one byte) read: the run's values are read into a
    /// buffer first, so the array is made at its size without
    /// [`count_run`]'s pass over the run (up to `RUN_BUFFER` values; the
    /// rest of a longer run is counted), then pushed and stored. A bad
    /// varint is left to [`Self::unpacked_run`], which reports it. Pushes
    /// the array and returns its last index.
    ///
    /// # Safety
    /// As [`Self::unpacked_run`], the array's slot free.
    #[cfg(feature = "luajit")]
    #[inline(never)]
    unsafe fn fresh_varint_run(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        depth: u32,
        tag: Tag,
    ) -> Res<i64> {
        const RUN_BUFFER: usize = 64;
        let L = self.L;
        let next = tag.raw() as u8;
        // Not zeroed (32 stores on aarch64): `buf[..k]` is written before read.
        let mut buf = [MaybeUninit::<u64>::uninit(); RUN_BUFFER];
        let mut k = 0;
        let mut rest = r.rest();
        // `more`: `rest` is at a value whose tag was read but which is not
        // in `buf` (a bad varint, or past the buffer).
        let more = loop {
            let Some((v, tail)) = slice_varint(rest) else { break true };
            // SAFETY: `k < RUN_BUFFER` (checked below before the next).
            unsafe { buf.get_unchecked_mut(k).write(v) };
            k += 1;
            match *tail {
                [t, ref after @ ..] if t == next => {
                    rest = after;
                    if k == RUN_BUFFER {
                        break true;
                    }
                }
                _ => {
                    rest = tail;
                    break false;
                }
            }
        };
        let _ = r.advance(r.remaining() - rest.len());
        let presize = if !more {
            k
        } else if k == RUN_BUFFER {
            k + count_run(r, tag)
        } else {
            k + 1
        };
        // The kind's conversion chosen once, each arm its own loop (as
        // `packed_varints`): matched per value, it cost ~6 a value. The
        // rest of a run past the buffer (`more`) from `r`.
        let values = &buf[..k];
        let body = |c: &DecodeCtx<'a>, slot: c_int, r: &mut Reader<'_>|
        // SAFETY: `buf[..k]` was written above; called with the array at
        // `slot` (or slot 0, a long array) and a free slot a value.
        unsafe {
            let L = c.L;
            match f.kind {
                Kind::Int32 => store_values(L, slot, values, |v| c.push_varint_as(Kind::Int32, f, v)),
                Kind::UInt32 => store_values(L, slot, values, |v| c.push_varint_as(Kind::UInt32, f, v)),
                Kind::SInt32 => store_values(L, slot, values, |v| c.push_varint_as(Kind::SInt32, f, v)),
                Kind::Bool => store_values(L, slot, values, |v| c.push_varint_as(Kind::Bool, f, v)),
                _ => store_values(L, slot, values, |v| c.push_varint(f, v)),
            }
            if more { c.unpacked_run(mi, fi, f, r, depth, tag, slot, k as i64, false) } else { Ok(k as i64) }
        };
        // SAFETY: caller's contract: the array's slot, then one for each
        // value, popped by its rawseti (a long array: `long_array` makes
        // room for its values).
        unsafe {
            if (BULK_MIN..=BULK_MAX).contains(&presize)
                && let Some(last) = self.long_array(f, presize, &mut |c| body(c, 0, r))
            {
                let last = last?;
                if self.seq_mt != 0 {
                    self.set_mt(-1, self.seq_mt);
                }
                return Ok(last);
            }
            ffi::lua_createtable(L, presize.min(1 << 26) as c_int, 0);
            if self.seq_mt != 0 {
                self.set_mt(-1, self.seq_mt);
            }
            body(self, ffi::lua_gettop(L), r)
        }
    }

    #[inline(always)]
    unsafe fn push_key(&self, key_id: i32) {
        // SAFETY: `keys` is the key table; key ids are in range by construction.
        unsafe {
            lua::push_rawgeti(self.L, self.keys, key_id as i64);
        }
    }

    /// [`Self::message`] in the frame the plan chose for message `mi`.
    ///
    /// # Safety
    /// As [`Self::message`].
    #[inline(always)]
    unsafe fn frame(&self, mi: u32, r: &mut Reader<'_>, depth: u32, group: Option<u32>, merge: bool) -> Res {
        // SAFETY: forwarded; a lean plan has what `message::<true>` asks,
        // a `by_ctor` one what `message_by_ctor` does.
        unsafe {
            #[cfg(feature = "luajit")]
            if self.ctors != 0 && !merge && group.is_none() && self.plans.messages[mi as usize].by_ctor {
                match self.message_by_ctor(mi, r, depth)? {
                    ByCtor::Done => return Ok(()),
                    ByCtor::Merge => return self.frame_walk(mi, r, depth, None, true),
                    ByCtor::Declined => {}
                }
            }
            self.frame_walk(mi, r, depth, group, merge)
        }
    }

    /// [`Self::message`] in its lean or full frame, as the plan chose.
    ///
    /// # Safety
    /// As [`Self::message`].
    #[inline(always)]
    unsafe fn frame_walk(&self, mi: u32, r: &mut Reader<'_>, depth: u32, group: Option<u32>, merge: bool) -> Res {
        // SAFETY: forwarded; a lean plan has what `message::<true>` asks.
        unsafe {
            if self.plans.messages[mi as usize].lean {
                self.message::<true>(mi, r, depth, group, merge)
            } else {
                self.message::<false>(mi, r, depth, group, merge)
            }
        }
    }

    /// Decode one message body and push (or, with `merge`, fill the table
    /// already on top). `group` is the field number whose END_GROUP ends it.
    ///
    /// `LEAN` (only for a plan with `lean` set: no oneofs, no maps, at most
    /// `LEAN_FIELDS` fields) drops the code for oneofs and maps and sizes
    /// the table from the field count instead of scanning the body: the
    /// same result, in a smaller frame for small sub-messages.
    unsafe fn message<const LEAN: bool>(
        &self,
        mi: u32,
        r: &mut Reader<'_>,
        depth: u32,
        group: Option<u32>,
        merge: bool,
    ) -> Res {
        let L = self.L;
        let plan: &MessagePlan = &self.plans.messages[mi as usize];
        debug_assert!(!LEAN || plan.lean);
        if depth > self.opts.max_depth {
            return Err(self.err.set(CodecError::new(ErrorKind::DepthLimit(self.opts.max_depth), Some(r.position()))));
        }
        // SAFETY: (whole body) every stack index used is `t`, its container
        // and accumulator slots, or temporaries, reserved by lua_checkstack below
        // (the table and its metatable fit in the 9 spare slots the caller
        // reserved, or the 20 a C function starts with); `t` holds a table;
        // raw API calls run no metamethods.
        unsafe {
            if !merge {
                // Lean: every field gets a slot (at most `LEAN_FIELDS`),
                // bounded like `presize`'s estimate for a long body.
                let presize = if LEAN { plan.fields.len().min(r.remaining() / 2) } else { presize(plan, r) };
                ffi::lua_createtable(L, 0, presize as c_int);
                if self.map_mt != 0 {
                    self.set_mt(-1, self.map_mt);
                }
            }
            // Reserve only now: a GC step inside lua_createtable may shrink
            // LuaJIT's stack down to its top, dropping an earlier reservation.
            if ffi::lua_checkstack(L, 2 + 9) == 0 {
                return Err(self.err.set(CodecError::new(ErrorKind::StackOverflow, Some(r.position()))));
            }
            let t = ffi::lua_gettop(L);
            // Slots: t+1 the current repeated/map container, t+2 the
            // unknown-field accumulator, taken at the first repeated, map
            // or unknown field (the first container is created straight
            // into t+1, then t+2 is set to nil; see `switch_container`): a
            // message with none of them pays no lua_settop, neither here
            // nor at the end.
            let acc = t + 2;
            let mut run = UnknownRun::default();
            let mut seen_required = 0u64;
            // Singular message fields below 64 seen so far (see `first_sub`).
            let mut seen_sub = 0u64;
            let mut cs = Containers { slot: t + 1, field: usize::MAX, counts: [0; TRACKED_SLOTS], merge, taken: false };
            let mut oneof_cur = [0u16; TRACKED_ONEOFS];
            if merge {
                self.count_existing(plan, t, &mut cs);
                oneof_cur = [u16::MAX; TRACKED_ONEOFS];
            }
            let mut ended = group.is_none();
            while let Some(&b0) = r.rest().first() {
                // A one-byte tag of a plain field with its own wire type
                // (`MessagePlan::plain_by_tag`): straight to the store below.
                let plain = plan.plain_by_tag.get(usize::from(b0)).copied().unwrap_or(0);
                let fi = if plain != 0 {
                    let _ = r.advance(1);
                    let fi = usize::from(plain & !PLAIN_REQUIRED) - 1;
                    // The required bit (`PLAIN_REQUIRED`, bit 15) without a
                    // branch or a range check:
                    // `fi` < 15 (a one-byte tag names a field numbered
                    // below 16, and fields are sorted by number), so the
                    // mask changes nothing; it only keeps the shift in range.
                    seen_required |= u64::from(plain >> 15) << (fi & 63);
                    fi
                } else {
                    let tag_at = r.position();
                    let tag = r.read_tag().map_err(|e| self.err.set(CodecError::wire(e)))?;
                    let number = tag.field_number();
                    let wt = tag.wire_type();
                    if wt == WireType::EndGroup {
                        match group {
                            Some(g) if g == number => {
                                ended = true;
                                break;
                            }
                            Some(g) => {
                                let at = r.position() - tag_len(tag);
                                return Err(self.err.set(CodecError::wire(pbwire::Error::new(
                                    pbwire::ErrorKind::GroupMismatch { expected: g, found: number },
                                    at,
                                ))));
                            }
                            None => {
                                let at = r.position() - tag_len(tag);
                                return Err(self.err.set(CodecError::wire(pbwire::Error::new(
                                    pbwire::ErrorKind::UnexpectedEndGroup(number),
                                    at,
                                ))));
                            }
                        }
                    }
                    let Some(fi) = plan.field_index(number) else {
                        take_slots(L, &mut cs.taken, acc);
                        self.skip_unknown(r, tag, depth, tag_at, &mut run, acc)?;
                        continue;
                    };
                    let f = &plan.fields[fi];
                    match f.card {
                        Card::Single => {
                            // A plain field (see `FieldPlan::plain_wire`) with its
                            // own wire type needs none of these checks.
                            if f.plain_wire != wt as u8 {
                                if wt != f.kind.wire_type() || (f.kind == Kind::Enum && self.closed_miss(f, r)?) {
                                    take_slots(L, &mut cs.taken, acc);
                                    self.skip_unknown(r, tag, depth, tag_at, &mut run, acc)?;
                                    continue;
                                }
                                if f.required && fi < 64 {
                                    seen_required |= 1u64 << fi;
                                }
                                if !LEAN && f.oneof != NO_ONEOF {
                                    self.switch_oneof(plan, t, fi, &mut oneof_cur);
                                }
                                if matches!(f.kind, Kind::Message | Kind::Group)
                                    && !self.first_sub(fi, merge, &mut seen_sub)
                                {
                                    self.push_key(f.key_id);
                                    if lua::rawget(L, t) == ffi::LUA_TTABLE {
                                        // A repeated occurrence of a singular message merges.
                                        self.push_key(f.key_id);
                                        ffi::lua_insert(L, -2);
                                        self.sub_message(f, r, depth, number, true)
                                            .map_err(|_| self.err.with(|e| e.in_field(mi, fi)))?;
                                        ffi::lua_rawset(L, t);
                                        continue;
                                    }
                                    ffi::lua_pop(L, 1);
                                }
                            }
                            fi
                        }
                        Card::Repeated => {
                            // The slots are taken by the first container
                            // created (`switch_container`), or here.
                            if wt == WireType::Len && f.kind.is_packable() {
                                if f.kind == Kind::Enum && self.plans.enums[f.sub as usize].closed {
                                    take_slots(L, &mut cs.taken, acc);
                                    self.packed_closed_enum(mi, fi, f, r, t, &mut cs, &mut run, acc)?;
                                } else {
                                    self.packed_run(mi, fi, f, r, t, &mut cs)?;
                                }
                            } else if wt == f.kind.wire_type() && !(f.kind == Kind::Enum && self.closed_miss(f, r)?) {
                                // A field met for the first time in a new table
                                // (the common case) fills an array of its own on
                                // top (`fresh_array`), stored when the run ends.
                                let fresh = cs.is_new(f);
                                let (slot, mut n) = if fresh {
                                    (self.fresh_array(f, t, &cs, count_run(r, tag)), 1)
                                } else {
                                    (cs.slot, self.next_index(fi, f, t, &mut cs, 0))
                                };
                                // The rest of the run: encoders write a field's
                                // elements together, so while the next tag is this
                                // one (one or two bytes), the lookup and checks
                                // above hold for it too. Closed enums check every
                                // value (`next_len` 0: no tag continues the run).
                                let closed = f.kind == Kind::Enum && self.plans.enums[f.sub as usize].closed;
                                let (next_len, next) = run_tag(tag, closed);
                                loop {
                                    self.value(f, r, depth, number)
                                        .map_err(|_| self.err.with(|e| e.in_element(mi, fi, n as u64)))?;
                                    lua::rawseti(L, slot, n);
                                    if !run_continues(r, next_len, next) {
                                        break;
                                    }
                                    if next_len == 1 && !matches!(f.kind, Kind::Message | Kind::Group) {
                                        n = self.leaf_run(mi, fi, f, r, slot, n, next as u8)?;
                                        if !fresh && let Some(c) = cs.counts.get_mut(f.slot as usize) {
                                            *c = n as u32;
                                        }
                                        break;
                                    }
                                    let _ = r.advance(next_len);
                                    n = if fresh { n + 1 } else { self.next_index(fi, f, t, &mut cs, 0) };
                                }
                                if fresh {
                                    ffi::lua_rawset(L, t);
                                    cs.counts[f.slot as usize] = n as u32;
                                }
                            } else {
                                take_slots(L, &mut cs.taken, acc);
                                self.skip_unknown(r, tag, depth, tag_at, &mut run, acc)?;
                            }
                            continue;
                        }
                        Card::Map if LEAN => {
                            // SAFETY: a lean plan has no map field (`plan::is_lean`).
                            core::hint::unreachable_unchecked()
                        }
                        Card::Map => {
                            take_slots(L, &mut cs.taken, acc);
                            if wt != WireType::Len {
                                self.skip_unknown(r, tag, depth, tag_at, &mut run, acc)?;
                                continue;
                            }
                            let kept = self
                                .map_entry(fi, f, r, depth, t, &mut cs)
                                .map_err(|_| self.err.with(|e| e.in_map(mi, fi)))?;
                            if !kept {
                                // A closed-enum value the enum lacks: the whole
                                // entry is an unknown field, as protobuf does.
                                self.note_unknown(&mut run, acc, tag_at, r.position());
                            }
                            continue;
                        }
                    }
                };
                // A singular field's value (a plain one, or one whose checks
                // above passed). Its number is the tag's: `value` uses it
                // for groups only.
                debug_assert!(fi < plan.fields.len());
                // SAFETY: `fi` is an index into `fields`, from
                // `plain_by_tag` (built from `fields`: index + 1) or from
                // `field_index`, both in range by construction.
                let f = plan.fields.get_unchecked(fi);
                self.push_key(f.key_id);
                self.value(f, r, depth, f.number).map_err(|_| self.err.with(|e| e.in_field(mi, fi)))?;
                ffi::lua_rawset(L, t);
            }
            if !ended {
                return Err(self.err.set(CodecError::wire(pbwire::Error::new(
                    pbwire::ErrorKind::UnterminatedGroup(group.unwrap_or(0)),
                    r.position(),
                ))));
            }
            // All seen (the common case): no call. Otherwise (or when the
            // seen-set does not cover them) the full check names the missing.
            let all = plan.required_mask;
            if self.opts.check_required
                && !plan.required.is_empty()
                && (merge || all == 0 || seen_required & all != all)
            {
                self.check_required(mi, plan, t, seen_required, merge, r.position())?;
            }
            if run.end != run.start {
                self.flush_unknown(&mut run, acc);
            }
            if self.opts.empty && plan.n_slots != 0 {
                self.make_empty_containers(plan, t, &cs);
            }
            if self.opts.defaults != DefaultsMode::None && !plan.is_map_entry {
                self.apply_defaults(mi, plan, t);
            }
            if run.pieces != 0 {
                self.store_unknown(t, acc, merge);
            }
            if cs.taken {
                ffi::lua_settop(L, t);
            }
            debug_assert_eq!(ffi::lua_gettop(L), t, "decode frame left its stack unbalanced");
        }
        Ok(())
    }

    /// Whether singular message field `fi` occurs for the first time in a
    /// new table, which then lacks it: no lookup for a table to merge
    /// into. Marks it seen. Fields from 64 on, and merges, always look.
    #[inline(always)]
    fn first_sub(&self, fi: usize, merge: bool, seen: &mut u64) -> bool {
        let bit = 1u64.checked_shl(fi as u32).unwrap_or(0);
        let first = !merge && *seen & bit == 0 && bit != 0;
        *seen |= bit;
        first
    }

    /// Skip a field the plan does not take (unknown number, wrong wire type,
    /// closed-enum value it lacks) and keep its bytes.
    #[inline]
    unsafe fn skip_unknown(
        &self,
        r: &mut Reader<'_>,
        tag: Tag,
        depth: u32,
        tag_at: usize,
        run: &mut UnknownRun,
        acc: c_int,
    ) -> Res {
        self.skip(r, tag, depth)?;
        // SAFETY: forwarded (acc is the frame's accumulator slot).
        unsafe { self.note_unknown(run, acc, tag_at, r.position()) };
        Ok(())
    }

    /// Keep `start..end` of the input as unknown-field bytes.
    #[inline]
    unsafe fn note_unknown(&self, run: &mut UnknownRun, acc: c_int, start: usize, end: usize) {
        if !self.opts.keep_unknown {
            return;
        }
        if run.end == start && run.start != run.end {
            run.end = end;
        } else {
            if run.start != run.end {
                // SAFETY: forwarded.
                unsafe { self.flush_unknown(run, acc) };
            }
            run.start = start;
            run.end = end;
        }
    }

    /// Append the current run to the accumulator and empty it.
    #[cold]
    unsafe fn flush_unknown(&self, run: &mut UnknownRun, acc: c_int) {
        // SAFETY: the run lies inside the input (it was read from it).
        unsafe { self.append_unknown(&self.input[run.start..run.end], run, acc) };
        run.start = run.end;
    }

    /// Append `bytes` to the accumulator at `acc` (see [`UnknownRun`]).
    #[cold]
    unsafe fn append_unknown(&self, bytes: &[u8], run: &mut UnknownRun, acc: c_int) {
        let L = self.L;
        // SAFETY: `acc` is the frame's reserved slot; three free slots.
        unsafe {
            match run.pieces {
                0 => {
                    lua::push_bytes(L, bytes);
                    ffi::lua_replace(L, acc);
                }
                1 => {
                    ffi::lua_createtable(L, 4, 0);
                    ffi::lua_pushvalue(L, acc);
                    lua::rawseti(L, -2, 1);
                    lua::push_bytes(L, bytes);
                    lua::rawseti(L, -2, 2);
                    ffi::lua_replace(L, acc);
                }
                n => {
                    lua::push_bytes(L, bytes);
                    lua::rawseti(L, acc, n as i64 + 1);
                }
            }
        }
        run.pieces += 1;
    }

    /// `store[t] = acc`, after what `t` already had when merging (a
    /// repeated singular sub-message): then both become one table of
    /// pieces, appended to in place, so repeated merges stay linear.
    #[cold]
    unsafe fn store_unknown(&self, t: c_int, acc: c_int, merge: bool) {
        let L = self.L;
        // SAFETY: the helper table holds the store (created at luaopen);
        // four free slots (the frame reserves 9).
        unsafe {
            if lua::rawgeti(L, self.helpers, crate::unknown::HELPER_UNKNOWN) != ffi::LUA_TTABLE {
                ffi::lua_pop(L, 1);
                return;
            }
            let store = ffi::lua_gettop(L);
            ffi::lua_pushvalue(L, t);
            let old = if merge { lua::rawget(L, store) } else { ffi::LUA_TNIL };
            if !merge {
                ffi::lua_pushnil(L);
            }
            let old_idx = ffi::lua_gettop(L);
            ffi::lua_pushvalue(L, t);
            if old == ffi::LUA_TSTRING || old == ffi::LUA_TTABLE {
                // Merge into a pieces table.
                if old == ffi::LUA_TTABLE {
                    ffi::lua_pushvalue(L, old_idx);
                } else {
                    ffi::lua_createtable(L, 4, 0);
                    ffi::lua_pushvalue(L, old_idx);
                    lua::rawseti(L, -2, 1);
                }
                let dst = ffi::lua_gettop(L);
                let mut n = lua::rawlen(L, dst) as i64;
                if ffi::lua_type(L, acc) == ffi::LUA_TSTRING {
                    ffi::lua_pushvalue(L, acc);
                    n += 1;
                    lua::rawseti(L, dst, n);
                } else {
                    for i in 1..=lua::rawlen(L, acc) as i64 {
                        lua::rawgeti(L, acc, i);
                        n += 1;
                        lua::rawseti(L, dst, n);
                    }
                }
            } else {
                ffi::lua_pushvalue(L, acc);
            }
            ffi::lua_rawset(L, store);
            ffi::lua_settop(L, store - 1);
            self.module.unknown_stored.set(true);
        }
    }

    /// Option `defaults`: fill absent fields of `t` from the message's
    /// defaults table, or give `t` the shared metatable over it.
    #[cold]
    unsafe fn apply_defaults(&self, mi: u32, plan: &MessagePlan, t: c_int) {
        let L = self.L;
        // SAFETY: the frame reserved 8 slots above its own; `keys` is the
        // schema's key table (slot 0 of which is ours to use as the cache).
        unsafe {
            let base = ffi::lua_gettop(L);
            if lua::rawgeti(L, self.keys, KEYS_DEFAULTS_CACHE) != ffi::LUA_TTABLE {
                ffi::lua_pop(L, 1);
                ffi::lua_createtable(L, 0, 0);
                ffi::lua_pushvalue(L, -1);
                lua::rawseti(L, self.keys, KEYS_DEFAULTS_CACHE);
            }
            let cache = base + 1;
            let variant = self.opts.enums_as_number as i64 | (self.opts.int64 as i64) << 1;
            let slot = (mi as i64 * 8 + variant) * 2 + 1;
            if lua::rawgeti(L, cache, slot) != ffi::LUA_TTABLE {
                ffi::lua_pop(L, 1);
                self.build_defaults(plan);
                // stack: cache, D; make mt = { __index = D, __serialize =
                // 'map' } (the latter for Tarantool's serializers).
                ffi::lua_createtable(L, 0, 2);
                lua::push_bytes(L, b"__index");
                ffi::lua_pushvalue(L, -3);
                ffi::lua_rawset(L, -3);
                lua::push_bytes(L, b"__serialize");
                lua::push_bytes(L, b"map");
                ffi::lua_rawset(L, -3);
                lua::rawseti(L, cache, slot + 1);
                ffi::lua_pushvalue(L, -1);
                lua::rawseti(L, cache, slot);
            }
            let d = base + 2;
            if self.opts.defaults == DefaultsMode::Metatable {
                lua::rawgeti(L, cache, slot + 1);
                ffi::lua_setmetatable(L, t);
            } else {
                ffi::lua_pushnil(L);
                while ffi::lua_next(L, d) != 0 {
                    ffi::lua_pushvalue(L, -2);
                    if lua::rawget(L, t) == ffi::LUA_TNIL {
                        ffi::lua_pop(L, 1);
                        ffi::lua_pushvalue(L, -2);
                        ffi::lua_insert(L, -2);
                        ffi::lua_rawset(L, t);
                    } else {
                        ffi::lua_pop(L, 2);
                    }
                }
            }
            ffi::lua_settop(L, base);
        }
    }

    /// Push a new table of the defaults of `plan`'s singular fields.
    #[cold]
    unsafe fn build_defaults(&self, plan: &MessagePlan) {
        let L = self.L;
        // SAFETY: three free slots (reserved by the frame).
        unsafe {
            ffi::lua_createtable(L, 0, plan.fields.len().min(MAX_PRESIZE) as c_int);
            for f in plan.fields.iter() {
                self.push_key(f.key_id);
                match &f.default {
                    DefaultValue::None => {
                        ffi::lua_pop(L, 1);
                        continue;
                    }
                    DefaultValue::Bool(b) => lua::push_bool(L, *b),
                    DefaultValue::Int(n) if f.kind.is_64bit_integer() => self.push_64(*n as u64, true),
                    DefaultValue::UInt(n) if f.kind.is_64bit_integer() => self.push_64(*n, false),
                    DefaultValue::Int(n) => lua::push_small_int(L, *n),
                    DefaultValue::UInt(n) => lua::push_small_int(L, *n as i64),
                    DefaultValue::Float(x) => lua::push_number(L, *x),
                    DefaultValue::Bytes(b) => lua::push_bytes(L, b),
                    DefaultValue::Enum(n) => self.push_enum(f, *n),
                }
                ffi::lua_rawset(L, -3);
            }
        }
    }

    /// Option `empty`: absent repeated/map fields become empty tables.
    #[cold]
    unsafe fn make_empty_containers(&self, plan: &MessagePlan, t: c_int, cs: &Containers) {
        let L = self.L;
        for f in plan.fields.iter().filter(|f| f.card != Card::Single) {
            // SAFETY: the frame's slots are reserved; `t` is a table.
            unsafe {
                if cs.counts.get(f.slot as usize).is_some_and(|&n| n != 0) {
                    continue;
                }
                self.push_key(f.key_id);
                if lua::rawget(L, t) == ffi::LUA_TNIL {
                    ffi::lua_pop(L, 1);
                    self.push_key(f.key_id);
                    ffi::lua_createtable(L, 0, 0);
                    if self.seq_mt != 0 {
                        self.set_mt(-1, if f.card == Card::Map { self.map_mt } else { self.seq_mt });
                    }
                    ffi::lua_rawset(L, t);
                } else {
                    ffi::lua_pop(L, 1);
                }
            }
        }
    }

    /// Closed enum: does the varint ahead name a value the enum lacks?
    /// (Such a value goes to the unknown fields.) Does not move `r`.
    #[inline]
    pub(crate) fn closed_miss(&self, f: &FieldPlan, r: &Reader<'_>) -> Res<bool> {
        let e = &self.plans.enums[f.sub as usize];
        if !e.closed {
            return Ok(false);
        }
        let mut peek = r.clone();
        let v = peek.read_varint().map_err(|e| self.err.set(CodecError::wire(e)))? as i32;
        Ok(e.name_key(v).is_none())
    }

    /// Every `required` field of `plan` present in `t`?
    #[cold]
    unsafe fn check_required(&self, mi: u32, plan: &MessagePlan, t: c_int, seen: u64, merge: bool, at: usize) -> Res {
        let mut missing = MissingSet::default();
        for (i, &fi) in plan.required.iter().enumerate() {
            let fi = fi as usize;
            let present = if fi < 64 && !merge {
                seen & (1 << fi) != 0
            } else {
                // SAFETY: `t` is a table; one free slot.
                unsafe {
                    self.push_key(plan.fields[fi].key_id);
                    let ty = lua::rawget(self.L, t);
                    ffi::lua_pop(self.L, 1);
                    ty != ffi::LUA_TNIL
                }
            };
            if !present {
                missing.add(i);
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        Err(self.err.set(CodecError::new(ErrorKind::MissingRequired { msg: mi, missing }, Some(at))))
    }

    /// A packed run of a closed enum: values the enum lacks go to the
    /// unknown fields, each as its own varint field (as protobuf C++ does).
    #[cold]
    #[allow(clippy::too_many_arguments)]
    unsafe fn packed_closed_enum(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        t: c_int,
        cs: &mut Containers,
        run: &mut UnknownRun,
        acc: c_int,
    ) -> Res {
        let L = self.L;
        let e = &self.plans.enums[f.sub as usize];
        let bytes = r.read_len_bytes().map_err(|e| self.err.set(CodecError::wire(e).in_field(mi, fi)))?;
        let mut sub = Reader::with_offset(bytes, r.position() - bytes.len());
        while !sub.is_empty() {
            let raw = sub.read_varint().map_err(|e| self.err.set(CodecError::wire(e).in_field(mi, fi)))?;
            let v = raw as i32;
            // SAFETY: slots reserved by the frame; the accumulator is `acc`.
            unsafe {
                if e.name_key(v).is_some() {
                    let n = self.next_index(fi, f, t, cs, 0);
                    self.push_enum(f, v);
                    lua::rawseti(L, cs.slot, n);
                } else if self.opts.keep_unknown {
                    if run.start != run.end {
                        self.flush_unknown(run, acc);
                    }
                    let (mut tag, mut val) = ([0u8; 10], [0u8; 10]);
                    let key = (f.number as u64) << 3; // wire type 0
                    let nt = pbwire::varint::encode_varint(key, &mut tag);
                    let nv = pbwire::varint::encode_varint(raw, &mut val);
                    let mut w = [0u8; 20];
                    w[..nt].copy_from_slice(&tag[..nt]);
                    w[nt..nt + nv].copy_from_slice(&val[..nv]);
                    self.append_unknown(&w[..nt + nv], run, acc);
                }
            }
        }
        Ok(())
    }

    /// Skip an unknown (or mistyped) field.
    #[inline]
    fn skip(&self, r: &mut Reader<'_>, tag: Tag, depth: u32) -> Res {
        r.skip_field(tag, self.opts.max_depth.saturating_sub(depth)).map_err(|e| {
            // pbwire counts the levels left; the user set the whole limit.
            let e = match e.kind() {
                pbwire::ErrorKind::DepthLimitExceeded(_) => {
                    CodecError::new(ErrorKind::DepthLimit(self.opts.max_depth), Some(e.offset()))
                }
                _ => CodecError::wire(e),
            };
            self.err.set(e)
        })
    }

    /// In merge mode, count the elements of the arrays `t` already has (and
    /// mark its maps), so appending continues after them.
    #[cold]
    unsafe fn count_existing(&self, plan: &MessagePlan, t: c_int, cs: &mut Containers) {
        let L = self.L;
        for f in plan.fields.iter().filter(|f| f.card != Card::Single && (f.slot as usize) < TRACKED_SLOTS) {
            // SAFETY: one free slot (frame reserve); `t` is a table.
            unsafe {
                self.push_key(f.key_id);
                if lua::rawget(L, t) == ffi::LUA_TTABLE {
                    cs.counts[f.slot as usize] = if f.card == Card::Repeated { lua::rawlen(L, -1) as u32 } else { 1 };
                }
                ffi::lua_pop(L, 1);
            }
        }
    }

    /// Clear the previously set member of `fi`'s oneof (last one wins).
    #[inline]
    unsafe fn switch_oneof(&self, plan: &MessagePlan, t: c_int, fi: usize, cur: &mut [u16; TRACKED_ONEOFS]) {
        let o = plan.fields[fi].oneof as usize;
        let prev = if o < TRACKED_ONEOFS { cur[o] } else { u16::MAX };
        if prev == fi as u16 + 1 {
            return;
        }
        // SAFETY: `t` is a table; two free slots reserved.
        unsafe {
            if prev == u16::MAX {
                // Unknown (merge mode or untracked): clear every other member.
                for &m in plan.oneofs[o].members.iter().filter(|&&m| m as usize != fi) {
                    self.push_key(plan.fields[m as usize].key_id);
                    ffi::lua_pushnil(self.L);
                    ffi::lua_rawset(self.L, t);
                }
            } else if prev != 0 {
                self.push_key(plan.fields[prev as usize - 1].key_id);
                ffi::lua_pushnil(self.L);
                ffi::lua_rawset(self.L, t);
            }
        }
        if o < TRACKED_ONEOFS {
            cur[o] = fi as u16 + 1;
        }
    }

    /// Make field `fi`'s array/map the current container (`cs.slot`),
    /// creating it (and storing it in `t`) on first use.
    #[inline(always)]
    unsafe fn ensure_container(&self, fi: usize, f: &FieldPlan, t: c_int, cs: &mut Containers, presize: usize) {
        if cs.field != fi {
            // SAFETY: forwarded.
            unsafe { self.switch_container(fi, f, t, cs, presize) };
        }
    }

    #[inline(never)]
    unsafe fn switch_container(&self, fi: usize, f: &FieldPlan, t: c_int, cs: &mut Containers, presize: usize) {
        let L = self.L;
        let s = f.slot as usize;
        cs.field = fi;
        // SAFETY: `cs.slot` is the frame's container slot, two free slots
        // above the frame (reserve); `t` is a table; raw access only.
        unsafe {
            let fresh = s < TRACKED_SLOTS && cs.counts[s] == 0 && !cs.merge;
            if !fresh {
                take_slots(L, &mut cs.taken, cs.slot + 1);
                self.push_key(f.key_id);
                if lua::rawget(L, t) == ffi::LUA_TTABLE {
                    ffi::lua_replace(L, cs.slot);
                    return;
                }
                ffi::lua_pop(L, 1);
            }
            debug_assert!(cs.taken || ffi::lua_gettop(L) == cs.slot - 1, "untaken slots: the top is the frame's table");
            let (narr, nrec) = if f.card == Card::Map { (0, presize) } else { (presize, 0) };
            ffi::lua_createtable(L, narr.min(1 << 26) as c_int, nrec as c_int);
            if self.seq_mt != 0 {
                self.set_mt(-1, if f.card == Card::Map { self.map_mt } else { self.seq_mt });
            }
            if cs.taken {
                ffi::lua_replace(L, cs.slot);
            }
            self.push_key(f.key_id);
            ffi::lua_pushvalue(L, cs.slot);
            ffi::lua_rawset(L, t);
            if !cs.taken {
                // The frame's first container: the stack top was the
                // frame's table, so the new one landed in the container
                // slot itself; the accumulator slot follows. (Saves the
                // `lua_settop` that takes the slots and a `lua_replace`.)
                cs.taken = true;
                ffi::lua_pushnil(L);
            }
            if f.card == Card::Map && s < TRACKED_SLOTS {
                cs.counts[s] = 1;
            }
        }
    }

    /// Push `f`'s key and a new array for it (pre-sized for `presize`
    /// elements) on top of the frame, for a field met for the first time
    /// in a new table (`Containers::is_new`), and return the array's stack
    /// index. The caller fills it and stores it with one `lua_rawset(t)`,
    /// which pops both. The array thus never takes the container slot: no
    /// `lua_pushvalue` to store it, no slot to take or clear, and the
    /// current container stays current. A later occurrence of the field
    /// finds the array in `t` (its count is no longer 0).
    ///
    /// # Safety
    /// Between fields (the stack top is the frame's table, or its
    /// accumulator slot once taken); two free slots, from the frame's
    /// reserve.
    #[inline(always)]
    unsafe fn fresh_array(&self, f: &FieldPlan, t: c_int, cs: &Containers, presize: usize) -> c_int {
        let L = self.L;
        // SAFETY: the caller's contract.
        unsafe {
            debug_assert_eq!(ffi::lua_gettop(L), if cs.taken { t + 2 } else { t }, "not between fields");
            self.push_key(f.key_id);
            ffi::lua_createtable(L, presize.min(1 << 26) as c_int, 0);
            if self.seq_mt != 0 {
                self.set_mt(-1, self.seq_mt);
            }
        }
        if cs.taken { t + 4 } else { t + 2 }
    }

    /// Make `fi`'s array current and return the Lua index its next
    /// element goes to.
    #[inline(always)]
    unsafe fn next_index(&self, fi: usize, f: &FieldPlan, t: c_int, cs: &mut Containers, presize: usize) -> i64 {
        // SAFETY: forwarded.
        unsafe { self.ensure_container(fi, f, t, cs, presize) };
        let s = f.slot as usize;
        if s < TRACKED_SLOTS {
            cs.counts[s] += 1;
            cs.counts[s] as i64
        } else {
            // SAFETY: the container slot holds the array once ensured.
            unsafe { lua::rawlen(self.L, cs.slot) as i64 + 1 }
        }
    }

    /// A packed run of scalars.
    #[allow(clippy::too_many_arguments)]
    unsafe fn packed_run(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        t: c_int,
        cs: &mut Containers,
    ) -> Res {
        let L = self.L;
        let run = r.read_len_bytes().map_err(|e| self.err.set(CodecError::wire(e).in_field(mi, fi)))?;
        let base = r.position() - run.len();
        let mut sub = Reader::with_offset(run, base);
        let presize = packed_count(f, run);
        // An empty run adds no element: the field stays absent (as in
        // protobuf, and so decode → encode → decode gives the same table).
        if sub.is_empty() {
            return Ok(());
        }
        // The container and the next index once per run, not per element.
        // SAFETY: the container slot holds the array once ensured, or the
        // fresh array is on top (see `fresh_array`); one free slot per
        // element, popped by rawseti.
        unsafe {
            let s = f.slot as usize;
            let fresh = cs.is_new(f);
            let (slot, n) = if fresh {
                (self.fresh_array(f, t, cs, presize), 0)
            } else {
                self.ensure_container(fi, f, t, cs, presize);
                let n = if s < TRACKED_SLOTS { cs.counts[s] as i64 } else { lua::rawlen(L, cs.slot) as i64 };
                (cs.slot, n)
            };
            let n = self.packed_fill(mi, fi, f, &mut sub, slot, n, presize)?;
            if fresh {
                ffi::lua_rawset(L, t);
            }
            if s < TRACKED_SLOTS {
                cs.counts[s] = n as u32;
            }
        }
        Ok(())
    }

    /// The values of the packed run `sub` of `f` (`presize` of them, see
    /// [`packed_count`]) into the array at `slot` after its index `n`;
    /// returns the new last index.
    ///
    /// # Safety
    /// `slot` holds the array; one free slot per element (two for cdata),
    /// popped by rawseti.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn packed_fill(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        sub: &mut Reader<'_>,
        slot: c_int,
        mut n: i64,
        presize: usize,
    ) -> Res<i64> {
        let L = self.L;
        // SAFETY: caller's contract.
        unsafe {
            // Runs of 1–3 values stay on the element loop (icount: the
            // run loop's call costs more than it saves there, +0.3 % on
            // BenchPayload mid with its 3-value `deltas`).
            if f.kind.wire_type() == WireType::Varint {
                if presize >= PACKED_LOOP_MIN {
                    n = self.packed_varints(f, sub, slot, n);
                }
            } else {
                // Fixed-width values: whole words, each kind its own loop
                // (the element loop matched the kind and checked the
                // reader per value: ~36 instructions a `codes` value of
                // BenchPayload mid). A partial last value is left to the
                // element loop to report.
                match f.kind {
                    Kind::Fixed32 => {
                        n = self
                            .packed_fixed::<4>(sub, slot, n, |b| lua::push_small_int(L, u32::from_le_bytes(b) as i64))
                    }
                    Kind::SFixed32 => {
                        n = self
                            .packed_fixed::<4>(sub, slot, n, |b| lua::push_small_int(L, i32::from_le_bytes(b) as i64))
                    }
                    Kind::Float => {
                        n = self.packed_fixed::<4>(sub, slot, n, |b| lua::push_number(L, f32::from_le_bytes(b) as f64))
                    }
                    Kind::Fixed64 => {
                        n = self.packed_fixed::<8>(sub, slot, n, |b| self.push_64(u64::from_le_bytes(b), false))
                    }
                    Kind::SFixed64 => {
                        n = self.packed_fixed::<8>(sub, slot, n, |b| self.push_64(u64::from_le_bytes(b), true))
                    }
                    Kind::Double => {
                        n = self.packed_fixed::<8>(sub, slot, n, |b| lua::push_number(L, f64::from_le_bytes(b)))
                    }
                    _ => {}
                }
            }
            while !sub.is_empty() {
                n += 1;
                self.scalar(f, sub).map_err(|_| self.err.with(|e| e.in_element(mi, fi, n as u64)))?;
                store(L, slot, n);
            }
        }
        Ok(n)
    }

    /// Push the varints of a packed run into the array at `slot` (its last
    /// index is `n`) and return the new last index. One pass over the
    /// bytes, each value pushed as soon as it is read: 1- and 2-byte
    /// values inline, longer ones through `varint_general`. Stops at a
    /// bad varint, leaving `sub` there for the caller's element loop to
    /// report. Out of line, so the recursive message frame does not grow.
    ///
    /// # Safety
    /// `slot` holds the array; one free stack slot (two for cdata).
    #[inline(never)]
    unsafe fn packed_varints(&self, f: &FieldPlan, sub: &mut Reader<'_>, slot: c_int, mut n: i64) -> i64 {
        // The kind's conversion is chosen once per run, not per element:
        // each arm is its own loop.
        // SAFETY: caller's contract (one free slot per push, popped by
        // rawseti).
        unsafe {
            match f.kind {
                Kind::Int32 => self.push_each(sub, slot, &mut n, |v| self.push_varint_as(Kind::Int32, f, v)),
                Kind::UInt32 => self.push_each(sub, slot, &mut n, |v| self.push_varint_as(Kind::UInt32, f, v)),
                Kind::SInt32 => self.push_each(sub, slot, &mut n, |v| self.push_varint_as(Kind::SInt32, f, v)),
                Kind::Bool => self.push_each(sub, slot, &mut n, |v| self.push_varint_as(Kind::Bool, f, v)),
                _ => self.push_each(sub, slot, &mut n, |v| self.push_varint(f, v)),
            }
        }
        n
    }

    /// Push the `W`-byte values of a packed run into the array at `slot`
    /// (its last index is `n`) and return the new last index; a partial
    /// last value is left in `sub` for the caller's element loop to
    /// report. Out of line, like [`Self::packed_varints`].
    ///
    /// # Safety
    /// `slot` holds the array; `push` pushes exactly one value; one free
    /// stack slot (two for cdata).
    #[inline(never)]
    unsafe fn packed_fixed<const W: usize>(
        &self,
        sub: &mut Reader<'_>,
        slot: c_int,
        mut n: i64,
        push: impl Fn([u8; W]),
    ) -> i64 {
        let L = self.L;
        let rest = sub.rest();
        let (words, tail) = rest.as_chunks::<W>();
        for &w in words {
            n += 1;
            push(w);
            // SAFETY: caller's contract; rawseti pops the value pushed.
            unsafe { store(L, slot, n) };
        }
        let _ = sub.advance(rest.len() - tail.len());
        n
    }

    /// One map entry into field `fi`'s map. `Ok(false)`: the entry
    /// was not stored because its value is a closed-enum value the enum
    /// lacks (the caller keeps it as an unknown field).
    unsafe fn map_entry(
        &self,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        depth: u32,
        t: c_int,
        cs: &mut Containers,
    ) -> Res<bool> {
        let L = self.L;
        let entry = &self.plans.messages[f.sub as usize];
        let (kf, vf) = (&entry.fields[0], &entry.fields[1]);
        let mut er = r.read_len_reader().map_err(|e| self.err.set(CodecError::wire(e)))?;
        if depth + 1 > self.opts.max_depth {
            return Err(self.err.set(CodecError::new(ErrorKind::DepthLimit(self.opts.max_depth), Some(er.position()))));
        }
        // SAFETY: two slots (key, value) plus temporaries are within the
        // reserve of the enclosing message frame (checkstack + 8).
        unsafe {
            let base = ffi::lua_gettop(L);
            ffi::lua_pushnil(L);
            ffi::lua_pushnil(L);
            let mut unknown_value = false;
            while !er.is_empty() {
                let tag = er.read_tag().map_err(|e| self.err.set(CodecError::wire(e)))?;
                let (which, fld) = match tag.field_number() {
                    1 => (base + 1, kf),
                    2 => (base + 2, vf),
                    _ => {
                        self.skip(&mut er, tag, depth + 1)?;
                        continue;
                    }
                };
                if tag.wire_type() != fld.kind.wire_type() {
                    self.skip(&mut er, tag, depth + 1)?;
                    continue;
                }
                if fld.kind == Kind::Enum && which == base + 2 && self.closed_miss(fld, &er)? {
                    // Last value wins: an unknown one after a known one too.
                    unknown_value = true;
                    ffi::lua_pushnil(L);
                    ffi::lua_replace(L, base + 2);
                    self.skip(&mut er, tag, depth + 1)?;
                    continue;
                }
                if fld.kind == Kind::Message && ffi::lua_type(L, which) == ffi::LUA_TTABLE {
                    ffi::lua_pushvalue(L, which);
                    self.sub_message(fld, &mut er, depth + 1, 2, true)?;
                    ffi::lua_pop(L, 1);
                    continue;
                }
                self.value(fld, &mut er, depth + 1, tag.field_number())?;
                ffi::lua_replace(L, which);
                if which == base + 2 {
                    unknown_value = false;
                }
            }
            if ffi::lua_type(L, base + 1) == ffi::LUA_TNIL {
                self.push_default(kf, depth + 1)?;
                ffi::lua_replace(L, base + 1);
            }
            if unknown_value && ffi::lua_type(L, base + 2) == ffi::LUA_TNIL {
                ffi::lua_settop(L, base);
                return Ok(false);
            }
            if ffi::lua_type(L, base + 2) == ffi::LUA_TNIL {
                self.push_default(vf, depth + 1)?;
                ffi::lua_replace(L, base + 2);
            }
            // Only now: a map whose every entry went to the unknown fields
            // stays absent, as protobuf has it.
            self.ensure_container(fi, f, t, cs, 0);
            ffi::lua_rawset(L, cs.slot);
        }
        Ok(true)
    }

    /// Push the proto3 zero value of a map key/value field that was absent.
    unsafe fn push_default(&self, f: &FieldPlan, depth: u32) -> Res {
        let L = self.L;
        // SAFETY: one free slot (reserved by the frame).
        unsafe {
            match f.kind {
                Kind::String | Kind::Bytes => lua::push_bytes(L, b""),
                Kind::Bool => lua::push_bool(L, false),
                Kind::Float | Kind::Double => lua::push_number(L, 0.0),
                Kind::Enum => self.push_enum(f, self.plans.enums[f.sub as usize].first_number()),
                // The same representation as a wire zero (option `int64`),
                // so a map's key type does not depend on the input.
                Kind::Int64 | Kind::SInt64 | Kind::SFixed64 => self.push_64(0, true),
                Kind::UInt64 | Kind::Fixed64 => self.push_64(0, false),
                Kind::Message | Kind::Group => {
                    let mut empty = Reader::new(&[]);
                    self.frame(f.sub, &mut empty, depth + 1, None, false)?;
                }
                _ => lua::push_small_int(L, 0),
            }
        }
        Ok(())
    }

    /// Give the table at `idx` the metatable at `mt` (option `serialize`).
    #[inline(always)]
    unsafe fn set_mt(&self, idx: c_int, mt: c_int) {
        // SAFETY: one free slot; `mt` holds a table (decode_with put it there).
        unsafe {
            ffi::lua_pushvalue(self.L, mt);
            ffi::lua_setmetatable(self.L, if idx < 0 { idx - 1 } else { idx });
        }
    }

    /// `push(v)` then `rawseti(slot, n + 1)` for each varint of `sub`, `n`
    /// counting; stops at the end of `sub` or before a bad varint.
    ///
    /// # Safety
    /// `slot` holds the array; `push` pushes exactly one value.
    #[inline(always)]
    unsafe fn push_each(&self, sub: &mut Reader<'_>, slot: c_int, n: &mut i64, push: impl Fn(u64)) {
        let L = self.L;
        let mut rest = sub.rest();
        loop {
            let v = match *rest {
                [] => break,
                [b0, ref tail @ ..] if b0 < 0x80 => {
                    rest = tail;
                    u64::from(b0)
                }
                [b0, b1, ref tail @ ..] if b1 < 0x80 => {
                    rest = tail;
                    u64::from(b0 & 0x7f) | u64::from(b1) << 7
                }
                [b0, b1, b2, ref tail @ ..] if b2 < 0x80 => {
                    rest = tail;
                    u64::from(b0 & 0x7f) | u64::from(b1 & 0x7f) << 7 | u64::from(b2) << 14
                }
                _ => {
                    let mut r = Reader::new(rest);
                    let Ok(v) = varint_general(&mut r) else { break };
                    rest = r.rest();
                    v
                }
            };
            *n += 1;
            push(v);
            // SAFETY: caller's contract; rawseti pops the value.
            unsafe { store(L, slot, *n) };
        }
        let _ = sub.advance(sub.remaining() - rest.len());
    }

    /// [`Self::push_varint`] with the kind given (a constant at the call
    /// sites, so the match folds away). The 32-bit kinds go through
    /// `lua::push_small_int` (`lua_pushinteger` wherever `lua_Integer` has
    /// 64 bits).
    ///
    /// # Safety
    /// One free stack slot (two for cdata).
    #[inline(always)]
    pub(crate) unsafe fn push_varint_as(&self, kind: Kind, f: &FieldPlan, v: u64) {
        let L = self.L;
        // SAFETY: one free slot (two for cdata), the caller's contract.
        unsafe {
            match kind {
                Kind::Int32 => lua::push_small_int(L, v as i32 as i64),
                Kind::UInt32 => lua::push_small_int(L, v as u32 as i64),
                Kind::SInt32 => lua::push_small_int(L, zigzag::decode_zigzag32(v as u32) as i64),
                Kind::Int64 => self.push_64(v, true),
                Kind::UInt64 => self.push_64(v, false),
                Kind::SInt64 => self.push_64(zigzag::decode_zigzag64(v) as u64, true),
                Kind::Bool => lua::push_bool(L, v != 0),
                Kind::Enum => self.push_enum(f, v as i32),
                _ => unreachable!("not a varint kind"),
            }
        }
    }

    /// Push the varint `v` as a value of `f`'s (varint) kind.
    #[inline(always)]
    pub(crate) unsafe fn push_varint(&self, f: &FieldPlan, v: u64) {
        // SAFETY: forwarded.
        unsafe { self.push_varint_as(f.kind, f, v) }
    }

    /// Push a 64-bit integer (bits `v`) as the `int64` option says.
    #[inline(always)]
    pub(crate) unsafe fn push_64(&self, v: u64, signed: bool) {
        // SAFETY: one free slot (two for cdata), reserved by the frame.
        unsafe {
            if let Some(tt) = &self.module.tarantool {
                match self.opts.int64 {
                    // Within int32 Tarantool's `luaL_pushint64` and
                    // `luaL_pushuint64` push `lua_pushinteger`'s value (a
                    // number; an integer on dual-number builds): the same,
                    // without the call into Tarantool.
                    Int64Mode::Auto if signed && i32::try_from(v as i64).is_ok() => {
                        return lua::push_small_int(self.L, v as i64);
                    }
                    Int64Mode::Auto if !signed && v <= i32::MAX as u64 => return lua::push_small_int(self.L, v as i64),
                    Int64Mode::Auto if signed => return tt.push_i64(self.L, v as i64),
                    Int64Mode::Auto => return tt.push_u64(self.L, v),
                    Int64Mode::Cdata => return tt.push_cdata(self.L, v, signed),
                    _ => {}
                }
            }
            if self.opts.int64 == Int64Mode::Auto {
                if signed {
                    int64::push_i64(self.L, v as i64, self.helpers)
                } else {
                    int64::push_u64(self.L, v, self.helpers)
                }
            } else {
                int64::push_with_mode(self.L, v, signed, self.opts.int64, self.helpers)
            }
        }
    }

    #[inline(always)]
    unsafe fn push_enum(&self, f: &FieldPlan, v: i32) {
        // SAFETY: one free slot; key ids in range by construction.
        unsafe {
            if self.opts.enums_as_number {
                lua::push_small_int(self.L, v as i64);
                return;
            }
            match self.plans.enums[f.sub as usize].name_key(v) {
                Some(k) => self.push_key(k),
                None => lua::push_small_int(self.L, v as i64),
            }
        }
    }

    /// A sub-message (LEN) or group body; pushes its table (or fills the one
    /// on top with `merge`).
    unsafe fn sub_message(&self, f: &FieldPlan, r: &mut Reader<'_>, depth: u32, number: u32, merge: bool) -> Res {
        // SAFETY: forwarded.
        unsafe {
            if f.kind == Kind::Group {
                self.frame(f.sub, r, depth + 1, Some(number), merge)
            } else {
                let mut sub = r.read_len_reader().map_err(|e| self.err.set(CodecError::wire(e)))?;
                self.frame(f.sub, &mut sub, depth + 1, None, merge)
            }
        }
    }

    /// The rest of an unpacked run of the scalar, string or bytes field `f`
    /// whose element `n` is stored in the array at `slot`: while the next
    /// byte is the run's one-byte tag `next`, decode and store one more.
    /// Returns the index of the last element stored. Out of line, so that
    /// this loop gets registers of its own (inside `message` it paid
    /// spills for that function's state); no message is decoded here, so
    /// it is no frame of the recursion. Strings and varints first go
    /// through a loop on the bytes ([`leaf_strings`],
    /// [`Self::leaf_varints`]): through `r`, whose two words live in the
    /// caller's frame, every read stored them back to memory, and `L`,
    /// the tag and the position were reloaded around the two Lua calls
    /// (callgrind: ~63 → ~47 instructions an element of Person 10KB's
    /// `emails`). What those loops stop at, and the other kinds, go
    /// element by element through the reader, which reports errors.
    ///
    /// # Safety
    /// `slot` holds the array; one free stack slot (two for cdata).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn leaf_run(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        slot: c_int,
        mut n: i64,
        next: u8,
    ) -> Res<i64> {
        let L = self.L;
        if matches!(f.kind, Kind::String | Kind::Bytes) {
            // SAFETY: caller's contract.
            unsafe {
                n = if f.utf8 && self.opts.utf8 {
                    leaf_strings::<true>(L, r, slot, n, next)
                } else {
                    leaf_strings::<false>(L, r, slot, n, next)
                }
            };
        } else if f.kind.wire_type() == WireType::Varint {
            // SAFETY: caller's contract (a closed enum never gets here:
            // its run checks every value, `message`'s `next_len` 0).
            unsafe {
                n = match f.kind {
                    Kind::Int32 => self.leaf_varints(r, slot, n, next, |v| self.push_varint_as(Kind::Int32, f, v)),
                    _ => self.leaf_varints(r, slot, n, next, |v| self.push_varint(f, v)),
                };
            }
        }
        // SAFETY: caller's contract; each `push` pushes one value, which
        // `leaf_each`'s rawseti pops.
        let res = unsafe {
            if matches!(f.kind, Kind::String | Kind::Bytes) {
                leaf_each(L, r, slot, &mut n, next, |r| self.string(f, r))
            } else {
                leaf_each(L, r, slot, &mut n, next, |r| self.scalar(f, r))
            }
        };
        res.map_err(|_| self.err.with(|e| e.in_element(mi, fi, n as u64)))?;
        Ok(n)
    }

    /// [`leaf_strings`] for a run of varints: while the next byte is the
    /// run's one-byte tag `next` and a varint follows, `push` its value
    /// and store it after element `n` of the array at `slot` (1- and
    /// 2-byte values inline, longer ones through `varint_general`). Stops
    /// short of a bad varint, leaving `r` at that element for the general
    /// loop, which reports it. Returns the index of the last element
    /// stored.
    ///
    /// # Safety
    /// `slot` holds the array; `push` pushes exactly one value; one free
    /// stack slot (two for cdata).
    #[inline(never)]
    unsafe fn leaf_varints(&self, r: &mut Reader<'_>, slot: c_int, mut n: i64, next: u8, push: impl Fn(u64)) -> i64 {
        let L = self.L;
        let mut rest = r.rest();
        while let [t, ref tail @ ..] = *rest
            && t == next
        {
            let Some((v, tail)) = slice_varint(tail) else { break };
            n += 1;
            push(v);
            // SAFETY: caller's contract; rawseti pops the value pushed.
            unsafe { store(L, slot, n) };
            rest = tail;
        }
        let _ = r.advance(r.remaining() - rest.len());
        n
    }

    /// Decode one `string`/`bytes` value and push it.
    #[inline(always)]
    unsafe fn string(&self, f: &FieldPlan, r: &mut Reader<'_>) -> Res {
        let bytes = r.read_len_bytes().map_err(|e| self.err.set(CodecError::wire(e)))?;
        if f.utf8 && self.opts.utf8 {
            utf8::validate_utf8(bytes, r.position() - bytes.len()).map_err(|e| self.err.set(CodecError::wire(e)))?;
        }
        // SAFETY: one free slot (the caller's contract).
        unsafe { lua::push_bytes(self.L, bytes) };
        Ok(())
    }

    /// Decode one value of `f` (wire type already checked) and push it.
    #[inline(always)]
    pub(crate) unsafe fn value(&self, f: &FieldPlan, r: &mut Reader<'_>, depth: u32, number: u32) -> Res {
        // SAFETY: forwarded.
        unsafe {
            match f.kind {
                Kind::String | Kind::Bytes => self.string(f, r),
                Kind::Message | Kind::Group => self.sub_message(f, r, depth, number, false),
                _ => self.scalar(f, r),
            }
        }
    }

    /// Decode one numeric/bool/enum value and push it.
    #[inline(always)]
    unsafe fn scalar(&self, f: &FieldPlan, r: &mut Reader<'_>) -> Res {
        let L = self.L;
        // SAFETY: one free slot (reserved by the frame); helpers index valid.
        unsafe {
            match f.kind {
                // The varint kinds spell their pushes out instead of calling
                // push_varint per arm: in debug builds that inlines the whole
                // conversion eight times into the recursive message frame,
                // and 100 levels no longer fit a fiber-sized stack
                // (adversarial `default_max_depth_fits_a_fiber_stack`).
                Kind::Int32 => {
                    lua::push_small_int(L, varint(r).map_err(|e| self.err.set(CodecError::wire(e)))? as i32 as i64)
                }
                Kind::UInt32 => {
                    lua::push_small_int(L, varint(r).map_err(|e| self.err.set(CodecError::wire(e)))? as u32 as i64)
                }
                Kind::SInt32 => {
                    let v = varint(r).map_err(|e| self.err.set(CodecError::wire(e)))? as u32;
                    lua::push_small_int(L, zigzag::decode_zigzag32(v) as i64)
                }
                Kind::Int64 => self.push_64(varint(r).map_err(|e| self.err.set(CodecError::wire(e)))?, true),
                Kind::UInt64 => self.push_64(varint(r).map_err(|e| self.err.set(CodecError::wire(e)))?, false),
                Kind::SInt64 => {
                    let v = varint(r).map_err(|e| self.err.set(CodecError::wire(e)))?;
                    self.push_64(zigzag::decode_zigzag64(v) as u64, true)
                }
                Kind::Bool => lua::push_bool(L, varint(r).map_err(|e| self.err.set(CodecError::wire(e)))? != 0),
                Kind::Enum => {
                    let v = varint(r).map_err(|e| self.err.set(CodecError::wire(e)))? as i32;
                    self.push_enum(f, v)
                }
                Kind::Fixed32 => {
                    lua::push_small_int(L, r.read_fixed32().map_err(|e| self.err.set(CodecError::wire(e)))? as i64)
                }
                Kind::SFixed32 => lua::push_small_int(
                    L,
                    r.read_fixed32().map_err(|e| self.err.set(CodecError::wire(e)))? as i32 as i64,
                ),
                Kind::Float => lua::push_number(
                    L,
                    f32::from_bits(r.read_fixed32().map_err(|e| self.err.set(CodecError::wire(e)))?) as f64,
                ),
                Kind::Fixed64 => self.push_64(r.read_fixed64().map_err(|e| self.err.set(CodecError::wire(e)))?, false),
                Kind::SFixed64 => self.push_64(r.read_fixed64().map_err(|e| self.err.set(CodecError::wire(e)))?, true),
                Kind::Double => lua::push_number(
                    L,
                    f64::from_bits(r.read_fixed64().map_err(|e| self.err.set(CodecError::wire(e)))?),
                ),
                Kind::String | Kind::Bytes | Kind::Message | Kind::Group => unreachable!("not a scalar"),
            }
        }
        Ok(())
    }
}

/// The common case of an unpacked run of strings, for
/// [`DecodeCtx::leaf_run`]: while the next bytes are the run's one-byte
/// tag `next` and a one-byte length that fits, push the string (checked
/// with `CHECK`) and store it after element `n` of the array at `slot`.
/// Works on the bytes, so that the position stays in a register, and out
/// of line, so that its six live values fit the callee-saved registers
/// (inlined, `next` and the position were spilled around the calls); stops
/// short of anything else (a longer length, a bad one, invalid UTF-8),
/// leaving `r` at that element for the general loop, which reports it.
/// Returns the index of the last element stored.
///
/// # Safety
/// `slot` holds the array; one free stack slot.
#[inline(never)]
unsafe fn leaf_strings<const CHECK: bool>(
    L: *mut lua_State,
    r: &mut Reader<'_>,
    slot: c_int,
    mut n: i64,
    next: u8,
) -> i64 {
    let mut rest = r.rest();
    while let [t, len, ref tail @ ..] = *rest
        && t == next
        && len < 0x80
        && usize::from(len) <= tail.len()
    {
        let (bytes, tail) = tail.split_at(usize::from(len));
        if CHECK && utf8::validate_utf8(bytes, 0).is_err() {
            break;
        }
        n += 1;
        // SAFETY: caller's contract; rawseti pops the string.
        unsafe {
            lua::push_bytes(L, bytes);
            store(L, slot, n);
        }
        rest = tail;
    }
    let _ = r.advance(r.remaining() - rest.len());
    n
}

/// [`DecodeCtx::leaf_run`]'s loop: while the next byte of `r` is `next`,
/// step over it, count the element in `n`, `push` its value and store it
/// at index `n` of the array at `slot`. On an error `n` is the index of
/// the element that failed.
///
/// # Safety
/// `slot` holds the array; `push` pushes exactly one value when it
/// returns `Ok` (two free slots for cdata).
#[inline(always)]
unsafe fn leaf_each<'a>(
    L: *mut lua_State,
    r: &mut Reader<'a>,
    slot: c_int,
    n: &mut i64,
    next: u8,
    mut push: impl FnMut(&mut Reader<'a>) -> Res,
) -> Res {
    while r.rest().first() == Some(&next) {
        let _ = r.advance(1);
        *n += 1;
        push(r)?;
        // SAFETY: caller's contract; rawseti pops the value pushed.
        unsafe { store(L, slot, *n) };
    }
    Ok(())
}

/// Take the frame's container and accumulator slots (`acc - 1`, `acc`) if
/// not yet taken. The stack top is the frame's table then (between fields).
///
/// # Safety
/// `acc` is the frame's table index + 2; the frame reserved the slots.
#[inline(always)]
unsafe fn take_slots(L: *mut lua_State, slots: &mut bool, acc: c_int) {
    if !*slots {
        *slots = true;
        // SAFETY: within the frame's lua_checkstack reserve; fills with nil.
        unsafe { ffi::lua_settop(L, acc) };
    }
}

/// Encoded length of a tag (to point errors at the tag's first byte).
fn tag_len(tag: Tag) -> usize {
    pbwire::varint::encoded_len_varint(tag.raw() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `varint` (one-byte, two-byte, word and pbwire paths) against
    /// pbwire's `read_varint`, for values of every length, followed by 0
    /// to 12 bytes (so that each path meets the end of the input), and
    /// for the malformed inputs each path hands to pbwire.
    #[test]
    fn varint_paths_agree_with_pbwire() {
        let mut values = vec![0u64, 1, 127, 128, 300, 16383, 16384, 70000, u32::MAX as u64, u64::MAX, 1 << 63];
        for shift in 0..64 {
            values.push(1u64 << shift);
            values.push((1u64 << shift) - 1);
            values.push(-(1i64 << (shift % 63)) as u64);
        }
        for &v in &values {
            let mut enc = [0u8; 10];
            let n = pbwire::varint::encode_varint(v, &mut enc);
            for tail in 0..=12 {
                let mut buf = enc[..n].to_vec();
                buf.extend(std::iter::repeat_n(0xAAu8, tail));
                let mut r = Reader::new(&buf);
                assert_eq!(varint(&mut r).ok(), Some(v), "value {v:#x}, tail {tail}");
                assert_eq!(r.position(), n, "value {v:#x}, tail {tail}");
            }
        }
        // Truncated, overlong (11 bytes) and an out-of-range 10th byte:
        // the same error and offset as pbwire's.
        let bad: [&[u8]; 5] = [
            &[0x80, 0x80, 0x80],
            &[0xff; 11],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0, 0],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        ];
        for b in bad {
            let mut fast = Reader::with_offset(b, 5);
            let mut slow = Reader::with_offset(b, 5);
            assert_eq!(varint(&mut fast).map_err(|e| e.offset()), slow.read_varint().map_err(|e| e.offset()));
            assert!(varint(&mut Reader::new(b)).is_err(), "{b:?}");
        }
    }
}
