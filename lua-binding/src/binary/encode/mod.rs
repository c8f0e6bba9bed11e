//! Lua table → bytes: the plan walk.
//!
//! Two ways to visit a message's fields, chosen per message from how many
//! fields its last encode found set ([`KeyIndex::walks`]):
//! - **probe** (dense tables): every declared field in field-number order,
//!   `rawgeti` of the interned key then `rawget`; the output is canonical
//!   as written. Three C API calls per declared field, set or not.
//! - **walk** (sparse tables): `lua_next` over the keys the table has, each
//!   key string mapped to its field by address ([`crate::binary::encode::keys`]);
//!   each field is written where it falls and the fields are then put in
//!   number order (a copy of the message's bytes, only if out of order).
//!   About five calls per set field and none for absent ones.
//!
//! Both write the same bytes. Nested
//! lengths are backpatched in one pass ([`pbwire::Writer::begin_len`]); map
//! entries are written as they come from `lua_next`, then reordered by key
//! (deterministic serialization). No Lua error can be raised while the
//! shared buffer is borrowed: values are type-checked before any conversion,
//! access is raw, and the only Lua call (the LuaJIT cdata classifier) is
//! protected.

pub mod keys;

use std::cmp::Ordering;
use std::mem::MaybeUninit;
use std::os::raw::c_int;

use pbwire::{EncodedTag, Tag, WireType, Writer, utf8, zigzag};

use crate::binary::encode::keys::KeyIndex;
use crate::error::{CodecError, ErrSlot, ErrorKind, Fail, IntValue, MissingSet, ShortStr, lua_type_name};
use crate::lua::host::{Cdata, ModuleState};
use crate::lua::int64;
use crate::lua::int64::CdataInt;
use crate::lua::{self, NumInt, ffi, lua_State};
use crate::plan::{Card, FieldPlan, Kind, MessagePlan, NO_ONEOF, Plans};
use crate::slots::Helper;

/// Oneofs whose set member is tracked in a frame-local array.
const TRACKED_ONEOFS: usize = 8;

/// Fields the walk keeps on its own frame before it uses
/// `EncodeBuffers::fields` (see [`EncodeCtx::walk_fields`]).
const WALK_LOCAL: usize = 8;

/// A map entry already written, waiting to be put in key order.
#[derive(Clone, Copy)]
pub struct MapEntry {
    key: MapKey,
    start: usize,
    end: usize,
}

#[derive(Clone, Copy)]
enum MapKey {
    Int(i128),
    Bool(bool),
    /// Pointer and length of a key string anchored in the map table.
    Str(*const u8, usize),
}

impl MapKey {
    fn cmp(&self, other: &MapKey) -> Ordering {
        match (self, other) {
            (MapKey::Int(a), MapKey::Int(b)) => a.cmp(b),
            (MapKey::Bool(a), MapKey::Bool(b)) => a.cmp(b),
            (MapKey::Str(pa, la), MapKey::Str(pb, lb)) => {
                // SAFETY: both strings are keys of the map table being encoded,
                // which is on the Lua stack and not modified during the encode.
                let (a, b) = unsafe { (std::slice::from_raw_parts(*pa, *la), std::slice::from_raw_parts(*pb, *lb)) };
                a.cmp(b)
            }
            _ => Ordering::Equal,
        }
    }
}

/// The bytes of one field written by the walk, waiting to be put in
/// field-number order.
#[derive(Clone, Copy)]
pub struct FieldBytes {
    number: u32,
    start: usize,
    end: usize,
}

/// The reusable state of an encode: output buffer and reordering scratch.
#[derive(Default)]
pub struct EncodeBuffers {
    /// Output.
    pub w: Writer,
    /// Map entries being sorted (stack discipline across nesting).
    pub entries: Vec<MapEntry>,
    /// Fields written by the walk (stack discipline across nesting).
    pub fields: Vec<FieldBytes>,
}

impl EncodeBuffers {
    /// Empty the buffers for a new encode (capacity is kept).
    pub fn clear(&mut self) {
        self.w.clear();
        self.entries.clear();
        self.fields.clear();
    }
}

/// Rewrite `buf[region..]`, made of the byte ranges `parts` (in write
/// order, covering it exactly), in the order `parts` now has: append the
/// parts in order, then move the result down over the original.
fn reorder_parts(buf: &mut Vec<u8>, region: usize, parts: impl Iterator<Item = (usize, usize)>) {
    let end = buf.len();
    for (start, stop) in parts {
        buf.extend_from_within(start..stop);
    }
    buf.copy_within(end.., region);
    buf.truncate(end);
}

/// Swap the two parts of `buf[region..]`: its first `first` bytes and the
/// rest (either may be empty: a proto3 zero value writes nothing). Up to
/// 16 bytes (two small fields, the sparse tables' common case) it is three
/// 16-byte copies through a 32-byte stack buffer holding the region twice
/// over, whose window at `first` is the rotated region; the copies may
/// carry bytes of the vector's spare capacity (16 bytes are reserved),
/// which stay past its length. `rotate_left` would make three libc calls
/// (copy out, move down, copy back) for a few bytes.
fn rotate_region(buf: &mut Vec<u8>, region: usize, first: usize) {
    let len = buf.len();
    let m = len - region;
    if first == 0 || first >= m {
        return;
    }
    if m > 16 {
        buf[region..].rotate_left(first);
        return;
    }
    buf.reserve(16);
    let mut twice = MaybeUninit::<[u8; 32]>::uninit();
    // SAFETY: `region + 16 <= len + 16 <= capacity`, so the 16 bytes read
    // and written at `region` are inside the allocation; `m <= 16` and
    // `first < m` keep both copies into `twice` (at 0 and `m`) and the
    // copy out of it (at `first`) inside its 32 bytes. The copies move
    // possibly uninitialised bytes as raw memory, never read as values;
    // bytes `region..len` all come from the initialised region, the rest
    // land past `len`.
    unsafe {
        let p = buf.as_mut_ptr().add(region);
        let t = twice.as_mut_ptr().cast::<u8>();
        std::ptr::copy_nonoverlapping(p, t, 16);
        std::ptr::copy_nonoverlapping(p, t.add(m), 16);
        std::ptr::copy_nonoverlapping(t.add(first), p, 16);
    }
}

/// Everything an encode needs besides the buffers.
pub struct EncodeCtx<'a> {
    /// The Lua state.
    pub L: *mut lua_State,
    /// Compiled schema.
    pub plans: &'a Plans,
    /// Index of the key-string table.
    pub keys: c_int,
    /// Index of the int64 helper table (LuaJIT).
    pub helpers: c_int,
    /// Nesting limit.
    pub max_depth: u32,
    /// Where the walk records its error.
    pub err: ErrSlot,
    /// Refuse keys that are not fields.
    pub strict_keys: bool,
    /// Fail on absent proto2 `required` fields.
    pub check_required: bool,
    /// Check UTF-8 where the schema asks for it.
    pub utf8: bool,
    /// Absolute index of the unknown-field store, 0 when it is empty.
    pub unknown: c_int,
    /// State shared with the module (Tarantool API).
    pub module: &'a ModuleState,
    /// Key-string addresses → fields, for the walk (`None`: always probe).
    pub index: Option<&'a KeyIndex>,
}

type Res<T = ()> = Result<T, Fail>;

fn wrong(expected: &'static str, got: c_int) -> CodecError {
    CodecError::new(ErrorKind::WrongType { expected, got: lua_type_name(got) }, None)
}

/// A message is walked (not probed) when its last encode found fewer than
/// one set field in this many declared ones.
const WALK_RATIO: usize = 2;

/// Strict keys: tables with at least this many fields set have their keys
/// counted by a Lua loop (one `lua_pcall`) rather than `lua_next` calls.
const KEYS_COUNTED_IN_LUA: usize = 6;

/// Strict keys, LuaJIT: a probed message of at most this many declared
/// fields, at a depth of at most [`FETCH_MAX_DEPTH`], has its key count and
/// its fields' values fetched by one Lua call ([`EncodeCtx::fetch_fields`]).
/// The values stay on the stack while the message is encoded: the two
/// limits bound what the fetches hold at once (8 × 65 slots) below the
/// 8,000 slots one C call may use (see [`MESSAGE_BATCH`]).
const FETCH_MAX_FIELDS: usize = 64;

/// See [`FETCH_MAX_FIELDS`].
const FETCH_MAX_DEPTH: u32 = 8;

/// Where this LuaJIT does not compile the fetchers' `next` loops
/// (`ModuleState::next_compiles`), only messages of at least this many
/// declared fields are fetched: interpreted inside Tarantool 2.6, the
/// fetch cost Person (5 fields) 23 % more instructions than the C API
/// reads and saved BenchPayload (18 fields) 7.5 % once its 3-field `Inner`
/// items were read through the C API too (PERF_LOG, thirteenth session).
const FETCH_INTERPRETED_MIN_FIELDS: usize = 8;

/// Repeated sub-messages of at most this many declared fields (at most
/// [`FETCH_MAX_DEPTH`] deep) are fetched a batch of [`MESSAGE_BATCH`]
/// elements per Lua call ([`EncodeCtx::fetched_elements`]): at most
/// 8 × 18 slots a level.
const FETCH_BATCH_MAX_FIELDS: usize = 16;

/// A fetch's count slot (see `int64::HELPER_MAKE_FETCHER`): the key
/// count in its low bits (at most `2^FETCH_COUNT_BITS − 1`: a larger count
/// is clamped, which only a table with far more keys than fields has, so
/// it fails the strict-key comparison either way), then 3 bits per value
/// for the first [`FETCH_CODED`] values: their `lua_type`, or 7 for a type
/// the fetcher does not name (the probe then asks `lua_type`). The probe
/// trusts only the nil, boolean and number codes (see `probe_fields`):
/// Lua code may change the fetcher's locals after they were coded.
const FETCH_COUNT_BITS: u32 = 20;

/// See [`FETCH_COUNT_BITS`]: 20 + 3 × 11 = 53 bits, exact in a double.
const FETCH_CODED: usize = 11;

/// Type codes that name no type: every value's type is asked of Lua.
const FETCH_NO_CODES: u64 = (1 << (3 * FETCH_CODED)) - 1;

/// Split a fetch's count slot (see [`FETCH_COUNT_BITS`]) into the key
/// count and the values' type codes.
#[inline(always)]
fn unpack_count(slot: f64) -> (usize, u64) {
    let x = slot as u64;
    ((x & ((1 << FETCH_COUNT_BITS) - 1)) as usize, x >> FETCH_COUNT_BITS)
}

/// Scalar and string array elements pushed before one pop (see
/// `EncodeCtx::each_element`): one `lua_settop` and one `lua_checkstack`
/// per batch.
const ELEMENT_BATCH: usize = 32;

/// The same for sub-message elements. Each nesting level holds its batch
/// on the Lua stack while the element is encoded, and one C call may use
/// at most `LUAI_MAXCSTACK` (8,000) slots on LuaJIT and 5.1: a small batch
/// keeps 200 levels (`max_depth`'s ceiling) well inside it. The batch
/// fetcher's Lua source (`int64::LUAJIT_HELPERS`, `BATCH`) is unrolled
/// for this many tables: change both together.
const MESSAGE_BATCH: usize = 8;

/// Strict keys, LuaJIT: a batch of sub-message elements has its tables'
/// keys counted by one Lua call when it has at least this many. Measured
/// on BenchPayload mid's six 3-key items: the call costs ~2,000
/// instructions (~400 fixed, ~250 per table), a 3-key table's `lua_next`
/// count ~420.
const MIN_COUNTED_BATCH: usize = 3;

/// Free stack slots [`EncodeCtx::encode_root`] needs from its caller: what
/// a message reserves for itself with `lua_checkstack` at the other levels.
/// A C function called from Lua has `LUA_MINSTACK` (20) free slots above
/// its arguments; the encode entry points use at most 10 of them before
/// the root message (`schema:encode` its 4 arguments and 4 tables, then
/// the unknown-field store or a temporary buffer: see `encode_with`).
pub const ROOT_STACK_FREE: c_int = 8;

impl EncodeCtx<'_> {
    /// Encode the table at absolute index `t` as message `msg` into `out.w`.
    ///
    /// # Safety
    /// `L` valid; `t` absolute; `keys`/`helpers` index the schema's tables;
    /// at least [`ROOT_STACK_FREE`] free stack slots (the root message does
    /// not call `lua_checkstack`).
    #[inline(always)]
    pub unsafe fn encode_root(&self, msg: u32, t: c_int, out: &mut EncodeBuffers) -> Result<(), CodecError> {
        // SAFETY: forwarded.
        unsafe {
            let ty = ffi::lua_type(self.L, t);
            if ty != ffi::LUA_TTABLE {
                return Err(wrong("table", ty));
            }
            // A walked root (a sparse table: the walked cells' usual case)
            // skips `message`'s frame: the same steps as its walk branch
            // at depth 1 (no `lua_checkstack` there either).
            if self.max_depth >= 1 && self.walks(msg) {
                let plan = &self.plans.messages[msg as usize];
                return self.walked_message(msg, plan, t, 1, out).map_err(|_| self.err.take());
            }
            self.message(msg, t, 1, usize::MAX, 0, out).map_err(|_| self.err.take())
        }
    }

    /// Is message `mi` walked (not probed)? Its last encode found fewer
    /// than one set field in [`WALK_RATIO`] declared ones.
    #[inline]
    fn walks(&self, mi: u32) -> bool {
        match self.index {
            Some(ix) => ix.walks(mi),
            None => false,
        }
    }

    /// Record how many fields this encode of message `mi` found set, and
    /// with it whether its next encode walks ([`Self::walks`]).
    #[inline]
    fn set_hint(&self, mi: u32, plan: &MessagePlan, present: usize) {
        if let Some(ix) = self.index {
            let hint = KeyIndex::clamp_hint(present);
            ix.set_hint(mi, hint, hint * WALK_RATIO < plan.fields.len());
        }
    }

    /// `message`'s walk branch for the root: walk `t`'s keys, then what
    /// `message` does after a walk.
    #[inline(always)]
    unsafe fn walked_message(&self, mi: u32, plan: &MessagePlan, t: c_int, depth: u32, out: &mut EncodeBuffers) -> Res {
        // SAFETY: forwarded (`message`'s contract; the stack room checked
        // by the caller).
        unsafe {
            let (present, missing_required) = self.walk_fields(mi, plan, t, depth, out)?;
            self.set_hint(mi, plan, present);
            if missing_required && self.check_required {
                return Err(self.err.set(self.missing_required(mi, plan, t)));
            }
            // No key count: the walk checked strict keys itself.
            self.put_unknown(t, out);
        }
        Ok(())
    }

    #[inline(always)]
    unsafe fn push_key(&self, key_id: i32) {
        // SAFETY: `keys` is the key table; key ids are in range by construction.
        unsafe {
            lua::push_rawgeti(self.L, self.keys, key_id as i64);
        }
    }

    /// Encode table `t` as message `mi`. `keys` is the number of keys `t`
    /// has when the caller counted them already (strict keys), else
    /// `usize::MAX`. `vals`, when not 0, is the slot of the first of `t`'s
    /// field values, fetched by the caller ([`Self::fetched_elements`]),
    /// just above the fetch's count slot ([`FETCH_COUNT_BITS`]), which
    /// then gives the count (`keys` is not read).
    unsafe fn message(&self, mi: u32, t: c_int, depth: u32, keys: usize, vals: c_int, out: &mut EncodeBuffers) -> Res {
        let L = self.L;
        let plan: &MessagePlan = &self.plans.messages[mi as usize];
        if depth > self.max_depth {
            return Err(self.err.set(CodecError::new(ErrorKind::DepthLimit(self.max_depth), None)));
        }
        // SAFETY: (whole body) `t` is an absolute index of a table; each
        // pushed value is popped before the next field; stack room checked.
        unsafe {
            let walk = self.walks(mi);
            let fetched = if walk {
                0
            } else if vals != 0 {
                vals
            } else if keys == usize::MAX && self.fetches(plan, depth) {
                self.fetch_fields(mi, plan, t)
            } else {
                0
            };
            let (keys, codes) = if fetched != 0 { unpack_count(ffi::lua_tonumber(L, fetched - 1)) } else { (keys, 0) };
            // The root's slots are the caller's (`ROOT_STACK_FREE`); a
            // fetch reserved its own.
            if fetched == 0 && depth > 1 && ffi::lua_checkstack(L, ROOT_STACK_FREE) == 0 {
                return Err(self.err.set(CodecError::new(ErrorKind::StackOverflow, None)));
            }
            let (present, missing_required) = if walk {
                self.walk_fields(mi, plan, t, depth, out)?
            } else if fetched != 0 {
                // Nested values only in this message's own fetch.
                let r = self.probe_fields::<true>(mi, plan, t, fetched, codes, vals == 0, depth, out);
                if vals == 0 {
                    // The count and the values go (`fetched - 2` is the
                    // top the fetch started from); the caller's stay.
                    ffi::lua_settop(L, fetched - 2);
                }
                r?
            } else {
                self.probe_fields::<false>(mi, plan, t, 0, 0, false, depth, out)?
            };
            self.set_hint(mi, plan, present);
            if missing_required && self.check_required {
                return Err(self.err.set(self.missing_required(mi, plan, t)));
            }
            if self.strict_keys && !walk && keys != present {
                self.check_keys(plan, t, present)?;
            }
            self.put_unknown(t, out);
        }
        Ok(())
    }

    /// Append `t`'s stored unknown fields, if any (`self.unknown`: the
    /// unknown-field store, when loaded with them kept).
    #[inline(always)]
    unsafe fn put_unknown(&self, t: c_int, out: &mut EncodeBuffers) {
        let L = self.L;
        // SAFETY: `t` is an absolute index of a table; the store's value
        // is popped; one free slot (the message's reserve).
        unsafe {
            if self.unknown != 0 {
                ffi::lua_pushvalue(L, t);
                match lua::rawget(L, self.unknown) {
                    ffi::LUA_TSTRING => out.w.put_bytes(lua::string_bytes(L, -1)),
                    ffi::LUA_TTABLE => crate::unknown::for_each_piece(L, -1, |b| out.w.put_bytes(b)),
                    _ => {}
                }
                ffi::lua_pop(L, 1);
            }
        }
    }

    /// Visit every declared field in number order (see the module doc).
    /// Returns how many are set and whether a required one is absent.
    /// With `FETCHED`, field `fi`'s value is already at `vals + fi` (see
    /// [`Self::fetch_fields`]), its type in `codes` for the first
    /// [`FETCH_CODED`] fields, and with `nested` the fetch also holds the
    /// key counts and values of the singular sub-messages
    /// [`KeyIndex::nested`] names; otherwise each is pushed with `rawget`
    /// and popped before the next field.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn probe_fields<const FETCHED: bool>(
        &self,
        mi: u32,
        plan: &MessagePlan,
        t: c_int,
        vals: c_int,
        codes: u64,
        nested: bool,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> Res<(usize, bool)> {
        let L = self.L;
        // SAFETY: `t` is an absolute table index; each pushed value is
        // popped before the next field (fetched values stay in their
        // slots, which the caller pops); the caller reserved the stack.
        unsafe {
            let mut present = 0usize;
            let mut missing_required = false;
            let mut oneof_set = [0u16; TRACKED_ONEOFS];
            // Every field leaves the stack as it found it, so each value
            // lands in the same slot: one `lua_gettop` per message.
            let top = if FETCHED { 0 } else { ffi::lua_gettop(L) + 1 };
            for (fi, f) in plan.fields.iter().enumerate() {
                // The value's absolute slot, and the index `single_fast`
                // reads it at (the top needs no index arithmetic).
                let (v, at, ty) = if FETCHED {
                    let v = vals + fi as c_int;
                    // The fetcher's type code when it names nil, a boolean
                    // or a number, else ask Lua. Only those are trusted:
                    // their reads (`lua_toboolean`, `lua_tonumber`) are
                    // safe on a value of any type, while a string or table
                    // code read on another type is not, and Lua code can
                    // change the fetcher's locals after they were coded
                    // without a hook being set (`debug.setlocal` from a
                    // `jit.attach` handler, or a hook it installs).
                    let code = if fi < FETCH_CODED { (codes >> (3 * fi)) as c_int & 7 } else { 7 };
                    let ty = if code <= ffi::LUA_TNUMBER && code != ffi::LUA_TLIGHTUSERDATA {
                        code
                    } else {
                        ffi::lua_type(L, v)
                    };
                    debug_assert_eq!(ty, ffi::lua_type(L, v));
                    (v, v, ty)
                } else {
                    self.push_key(f.key_id);
                    let ty = lua::rawget(L, t);
                    debug_assert_eq!(ffi::lua_gettop(L), top);
                    (top, -1, ty)
                };
                if ty == ffi::LUA_TNIL {
                    if !FETCHED {
                        ffi::lua_pop(L, 1);
                    }
                    missing_required |= f.required;
                    continue;
                }
                present += 1;
                if ty == lua::LUA_TCDATA && self.is_null(at) {
                    // box.NULL / msgpack.NULL: absent.
                    if !FETCHED {
                        ffi::lua_pop(L, 1);
                    }
                    missing_required |= f.required;
                    continue;
                }
                if f.oneof != NO_ONEOF
                    && let Err(e) = self.check_oneof(mi, plan, t, fi, &mut oneof_set, false)
                {
                    if !FETCHED {
                        ffi::lua_pop(L, 1);
                    }
                    return Err(e);
                }
                let r = match f.card {
                    Card::Single => {
                        if self.single_fast(f, at, ty, &mut out.w) {
                            if !FETCHED {
                                ffi::lua_pop(L, 1);
                            }
                            continue;
                        }
                        let pre = match self.index {
                            Some(ix) if FETCHED && nested => match ix.nested(mi, fi) {
                                Some(off) => vals + (plan.fields.len() + off) as c_int,
                                None => 0,
                            },
                            _ => 0,
                        };
                        self.single(f, v, ty, depth, pre, out).map_err(|_| self.err.with(|e| e.in_field(mi, fi)))
                    }
                    Card::Repeated => self.repeated(mi, fi, f, v, ty, depth, out),
                    Card::Map => self.map(f, v, ty, depth, out).map_err(|_| self.err.with(|e| e.in_map(mi, fi))),
                };
                if !FETCHED {
                    ffi::lua_pop(L, 1);
                }
                r?;
            }
            Ok((present, missing_required))
        }
    }

    /// Whether a probed message `plan` at `depth` has its key count and
    /// values fetched by [`Self::fetch_fields`] (strict keys, LuaJIT).
    /// Not on Lua 5.4: there the fetch, and the Lua key counters, measured
    /// slower than the C API reads (docs/PERF_LOG.md, perf-fetch-54).
    #[inline(always)]
    fn fetches(&self, plan: &MessagePlan, depth: u32) -> bool {
        lua::IS_LUAJIT
            && self.strict_keys
            && depth <= FETCH_MAX_DEPTH
            && !plan.fields.is_empty()
            && plan.fields.len() <= FETCH_MAX_FIELDS
            && (self.module.next_compiles || plan.fields.len() >= FETCH_INTERPRETED_MIN_FIELDS)
    }

    /// Strict keys, LuaJIT: call message `mi`'s fetcher (made on first use
    /// by the helper's `make_fetcher`, kept in the key table after the key
    /// strings) on `t`, under `lua_pcall`: it leaves `t`'s key count and
    /// then the raw value of each declared field, in field order, on the
    /// stack. Returns the slot of the first value (the count slot,
    /// [`FETCH_COUNT_BITS`], is just below it); 0 when there is no
    /// fetcher, the stack cannot grow or the call failed (a hook's error,
    /// out of memory), the stack then as it was.
    #[inline(never)]
    unsafe fn fetch_fields(&self, mi: u32, plan: &MessagePlan, t: c_int) -> c_int {
        let L = self.L;
        let Some(ix) = self.index else { return 0 };
        let results = ix.fetch_len(mi) as c_int;
        // SAFETY: room for the fetcher, its argument and its results, and
        // `ROOT_STACK_FREE` above them for the fields' own use, is reserved
        // first; pcall catches any error; every failure leaves the stack at
        // `top`.
        unsafe {
            if ffi::lua_checkstack(L, results + ROOT_STACK_FREE) == 0 {
                return 0;
            }
            let top = ffi::lua_gettop(L);
            let slot = self.fetcher_slot(mi, false);
            let mut ty = lua::rawgeti(L, self.keys, slot);
            if ty == ffi::LUA_TNIL {
                ffi::lua_settop(L, top);
                self.make_fetcher(mi, plan);
                ty = lua::rawgeti(L, self.keys, slot);
            }
            if ty != ffi::LUA_TFUNCTION {
                ffi::lua_settop(L, top);
                return 0;
            }
            ffi::lua_pushvalue(L, t);
            let hooked = ffi::lua_gethookmask(L) != 0;
            if ffi::lua_pcall(L, 1, results, 0) != 0 {
                ffi::lua_settop(L, top);
                return 0;
            }
            if hooked {
                self.drop_codes(top + 1);
                for fi in 0..plan.fields.len() {
                    if let Some(off) = ix.nested(mi, fi) {
                        self.drop_codes(top + 2 + (plan.fields.len() + off) as c_int);
                    }
                }
            }
            top + 2
        }
    }

    /// A fetch made while a debug hook was set: the hook may have changed
    /// the fetcher's locals after their types were coded
    /// (`debug.setlocal`), so the count slot at `slot` keeps its count
    /// (0 for a value that is no number or numeric string: a nested
    /// sub-message's slot is nil when the value is no table) and loses its
    /// type codes: the probe asks Lua.
    #[cold]
    #[inline(never)]
    unsafe fn drop_codes(&self, slot: c_int) {
        let L = self.L;
        // SAFETY: `slot` is a valid stack slot; one value is pushed and
        // moved into it (the fetch reserved the room).
        unsafe {
            // Whatever the slot holds: a hook may have made the count a
            // numeric string, which `lua_tonumber` (in `message`) would
            // read with its codes.
            let (keys, _) = unpack_count(ffi::lua_tonumber(L, slot));
            ffi::lua_pushnumber(L, (keys as u64 | (FETCH_NO_CODES << FETCH_COUNT_BITS)) as f64);
            ffi::lua_replace(L, slot);
        }
    }

    /// Where message `mi`'s fetcher (`batch`: its batch fetcher) is kept
    /// in the key table: after the key strings, one slot per message each.
    #[inline(always)]
    fn fetcher_slot(&self, mi: u32, batch: bool) -> i64 {
        let per = if batch { self.plans.messages.len() } else { 0 };
        (self.plans.keys.len() + 1 + per + mi as usize) as i64
    }

    /// Make message `mi`'s fetchers and store them in the key table
    /// (`false` if they cannot be made), by the helper's `make_fetcher`
    /// under `lua_pcall`; on an error nothing is stored (tried again next
    /// time). The batch fetcher only for messages it may serve.
    #[cold]
    #[inline(never)]
    unsafe fn make_fetcher(&self, mi: u32, plan: &MessagePlan) {
        let L = self.L;
        let Some(ix) = self.index else { return };
        let bslot = if plan.fields.len() <= FETCH_BATCH_MAX_FIELDS { self.fetcher_slot(mi, true) } else { 0 };
        // The arguments: 5, a key id per field, and per nested field its
        // index, its field count and their key ids (`fetch_len` counts one
        // slot fewer per nested field).
        let nested = (0..plan.fields.len()).filter(|&fi| ix.nested(mi, fi).is_some()).count();
        let args = 5 + ix.fetch_len(mi) + 2 * nested;
        // SAFETY: the arguments' slots are reserved first; pcall catches
        // any error; the stack is back at `top` on return.
        unsafe {
            if ffi::lua_checkstack(L, args as c_int) == 0 {
                return;
            }
            let top = ffi::lua_gettop(L);
            if lua::rawgeti(L, self.helpers, Helper::MakeFetcher.at()) == ffi::LUA_TFUNCTION {
                ffi::lua_pushvalue(L, self.keys);
                ffi::lua_pushnumber(L, self.fetcher_slot(mi, false) as f64);
                ffi::lua_pushnumber(L, bslot as f64);
                ffi::lua_pushnumber(L, plan.fields.len() as f64);
                for f in plan.fields.iter() {
                    ffi::lua_pushnumber(L, f.key_id as f64);
                }
                for (fi, f) in plan.fields.iter().enumerate() {
                    if ix.nested(mi, fi).is_some() {
                        let sub = &self.plans.messages[f.sub as usize];
                        ffi::lua_pushnumber(L, fi as f64);
                        ffi::lua_pushnumber(L, sub.fields.len() as f64);
                        for sf in sub.fields.iter() {
                            ffi::lua_pushnumber(L, sf.key_id as f64);
                        }
                    }
                }
                let _ = ffi::lua_pcall(L, ffi::lua_gettop(L) - top - 1, 0, 0);
            }
            ffi::lua_settop(L, top);
        }
    }

    /// Whether the elements of a repeated field of message `sub` at
    /// `depth` (the elements') go through [`Self::fetched_elements`]:
    /// strict keys, LuaJIT, a small message, and probed at its last encode.
    #[inline(always)]
    fn fetches_batch(&self, sub: u32, depth: u32) -> bool {
        let plan = &self.plans.messages[sub as usize];
        self.fetches(plan, depth) && plan.fields.len() <= FETCH_BATCH_MAX_FIELDS && !self.walks(sub)
    }

    /// The elements `arr[1..=n]` of a repeated field `f` of message type
    /// `f.sub`, each with its tag: what `each_element` and `message` do,
    /// with each batch of up to [`MESSAGE_BATCH`] tables fetched by one
    /// Lua call (the batch fetcher: per table the table, its key count and
    /// its fields' values). A batch the fetcher fails on (an element that
    /// is not a table, a hook's error) takes the per-element path, which
    /// words its errors as before.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn fetched_elements(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        arr: c_int,
        n: usize,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> Res {
        let L = self.L;
        let nf = self.plans.messages[f.sub as usize].fields.len();
        let stride = nf as c_int + 2;
        let bslot = self.fetcher_slot(f.sub, true);
        // SAFETY: `arr` is a table; a batch's results and `ROOT_STACK_FREE`
        // slots above them are reserved before the call; pcall catches any
        // error; the fetched tables are anchored on the stack while they
        // are encoded; the stack is back at `base` on every exit.
        unsafe {
            let base = ffi::lua_gettop(L);
            let mut i = 1;
            while i <= n {
                let end = n.min(i + MESSAGE_BATCH - 1);
                let m = (end - i + 1) as c_int;
                if ffi::lua_checkstack(L, m * stride + ROOT_STACK_FREE + 4) == 0 {
                    return Err(self.err.set(CodecError::new(ErrorKind::StackOverflow, None)));
                }
                let mut ty = lua::rawgeti(L, self.keys, bslot);
                if ty == ffi::LUA_TNIL {
                    ffi::lua_settop(L, base);
                    self.make_fetcher(f.sub, &self.plans.messages[f.sub as usize]);
                    ty = lua::rawgeti(L, self.keys, bslot);
                }
                let fetched = ty == ffi::LUA_TFUNCTION && {
                    ffi::lua_pushvalue(L, arr);
                    ffi::lua_pushnumber(L, i as f64);
                    ffi::lua_pushnumber(L, end as f64);
                    let hooked = ffi::lua_gethookmask(L) != 0;
                    let ok = ffi::lua_pcall(L, 3, m * stride, 0) == 0;
                    if ok && hooked {
                        for k in 0..m {
                            self.drop_codes(base + 2 + k * stride);
                        }
                    }
                    ok
                };
                for j in i..end + 1 {
                    let r = if fetched {
                        let t = base + 1 + (j - i) as c_int * stride;
                        out.w.put_encoded_tag(&f.tag);
                        let mark = out.w.begin_len();
                        // The count is read from `t + 1` by `message`.
                        let r = self.message(f.sub, t, depth + 1, usize::MAX, t + 2, out);
                        if r.is_ok() {
                            out.w.end_len(mark);
                        }
                        r
                    } else {
                        if j == i {
                            ffi::lua_settop(L, base);
                        }
                        self.unfetched_element(f, arr, j, depth, out)
                    };
                    if r.is_err() {
                        ffi::lua_settop(L, base);
                        return r.map_err(|_| self.err.with(|e| e.in_element(mi, fi, j as u64)));
                    }
                }
                ffi::lua_settop(L, base);
                i = end + 1;
            }
        }
        Ok(())
    }

    /// Element `j` of a repeated sub-message field whose batch fetch
    /// failed: what `each_element` and the element closure of
    /// [`Self::repeated`] do for it (the element is popped again).
    #[cold]
    #[inline(never)]
    unsafe fn unfetched_element(
        &self,
        f: &FieldPlan,
        arr: c_int,
        j: usize,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> Res {
        let L = self.L;
        // SAFETY: `arr` is a table; the caller reserved the stack.
        unsafe {
            let ety = lua::rawgeti(L, arr, j as i64);
            let r = if ety == ffi::LUA_TNIL {
                Err(self.err.set(CodecError::new(ErrorKind::ArrayHole(j as u64), None)))
            } else if ety != ffi::LUA_TTABLE {
                Err(self.err.set(wrong("table", ety)))
            } else {
                out.w.put_encoded_tag(&f.tag);
                let mark = out.w.begin_len();
                let v = ffi::lua_gettop(L);
                let r = self.message(f.sub, v, depth + 1, usize::MAX, 0, out);
                if r.is_ok() {
                    out.w.end_len(mark);
                }
                r
            };
            ffi::lua_pop(L, 1);
            r
        }
    }

    /// Visit the keys `t` has with `lua_next` (see the module doc), then
    /// put the fields' bytes in number order. Returns how many fields are
    /// set and whether a required one is absent. Checks strict keys too.
    ///
    /// The fields' bytes tile the region from where the message starts, so
    /// each is known by its number and where it ends. The first
    /// [`WALK_LOCAL`] are kept in arrays on this frame (a sparse table's
    /// usual case: no `Vec` push per field), the rest go to `out.fields`
    /// (stack discipline across nesting). Only fields that came out of
    /// number order are moved afterwards.
    #[inline(never)]
    unsafe fn walk_fields(
        &self,
        mi: u32,
        plan: &MessagePlan,
        t: c_int,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> Res<(usize, bool)> {
        let L = self.L;
        let Some(index) = self.index else { return Ok((0, false)) };
        let keys = index.message(mi);
        let region = out.w.len();
        let first = out.fields.len();
        // Written before read: entry `i` once field `i` is done.
        let mut ends = [MaybeUninit::<usize>::uninit(); WALK_LOCAL];
        let mut numbers = [MaybeUninit::<u32>::uninit(); WALK_LOCAL];
        let mut present = 0usize;
        let mut required = 0usize;
        let mut last = 0u32;
        let mut sorted = true;
        let mut oneof_set = [0u16; TRACKED_ONEOFS];
        // SAFETY: raw iteration of a table the walk does not modify; a key
        // is read as a string only after its type is checked (lua_tolstring
        // would convert a number in place and break lua_next); after
        // `lua_next` the key is at -2 and the value at -1 (the absolute
        // slot is asked for only where a callee needs it); the caller
        // reserved the stack.
        unsafe {
            ffi::lua_pushnil(L);
            while ffi::lua_next(L, t) != 0 {
                let kty = ffi::lua_type(L, -2);
                let mut fi = None;
                if kty == ffi::LUA_TSTRING {
                    fi = keys.by_address(lua::string_id(L, -2));
                    if fi.is_none() {
                        fi = keys.by_bytes(plan, lua::string_bytes(L, -2));
                    }
                }
                let Some(fi) = fi else {
                    if self.strict_keys {
                        let e = if kty == ffi::LUA_TSTRING {
                            ErrorKind::UnknownKey(ShortStr::new(lua::string_bytes(L, -2)))
                        } else {
                            ErrorKind::NonStringKey(lua_type_name(kty))
                        };
                        ffi::lua_settop(L, -3);
                        out.fields.truncate(first);
                        return Err(self.err.set(CodecError::new(e, None)));
                    }
                    ffi::lua_settop(L, -2);
                    continue;
                };
                let f = &plan.fields[fi];
                let ty = ffi::lua_type(L, -1);
                if ty == lua::LUA_TCDATA && self.is_null(-1) {
                    // box.NULL / msgpack.NULL: absent.
                    ffi::lua_settop(L, -2);
                    continue;
                }
                required += f.required as usize;
                let mut r = Ok(());
                if f.oneof != NO_ONEOF {
                    r = self.check_oneof(mi, plan, t, fi, &mut oneof_set, true);
                }
                if r.is_ok() {
                    r = match f.card {
                        Card::Single if self.single_fast(f, -1, ty, &mut out.w) => Ok(()),
                        card => self.walk_value(mi, fi, f, card, ty, depth, out),
                    };
                }
                if r.is_err() {
                    ffi::lua_settop(L, -3);
                    out.fields.truncate(first);
                    return r.map(|_| (0, false));
                }
                let end = out.w.len();
                sorted &= f.number > last;
                last = f.number;
                if present < WALK_LOCAL {
                    ends[present].write(end);
                    numbers[present].write(f.number);
                } else {
                    self.walk_spill(present, &ends, &numbers, region, Some((f.number, end)), out);
                }
                present += 1;
                ffi::lua_settop(L, -2);
            }
        }
        if !sorted {
            if present == 2 {
                // Two fields (a sparse table's common case) that came out
                // of order: their bytes tile the region, so one rotation in
                // place puts them right, without the sort and the copy out
                // and back.
                // SAFETY: field 0 is done.
                rotate_region(out.w.as_mut_vec(), region, unsafe { ends[0].assume_init() } - region);
            } else {
                if present <= WALK_LOCAL {
                    self.walk_spill(present, &ends, &numbers, region, None, out);
                }
                let fields = &mut out.fields[first..];
                fields.sort_unstable_by_key(|f| f.number);
                reorder_parts(out.w.as_mut_vec(), region, fields.iter().map(|f| (f.start, f.end)));
            }
        }
        out.fields.truncate(first);
        Ok((present, required < plan.required.len()))
    }

    /// Moves the walk's fields to `out.fields`: the first `n` (at most
    /// [`WALK_LOCAL`]), kept on the walk's frame, when `n` reaches
    /// [`WALK_LOCAL`] or the fields must be sorted, then `extra` (number,
    /// end), a field past the frame's.
    #[cold]
    fn walk_spill(
        &self,
        n: usize,
        ends: &[MaybeUninit<usize>; WALK_LOCAL],
        numbers: &[MaybeUninit<u32>; WALK_LOCAL],
        region: usize,
        extra: Option<(u32, usize)>,
        out: &mut EncodeBuffers,
    ) {
        if n <= WALK_LOCAL {
            let mut start = region;
            for i in 0..n {
                // SAFETY: the walk wrote entries `0..n` (its fields done).
                let (number, end) = unsafe { (numbers[i].assume_init(), ends[i].assume_init()) };
                out.fields.push(FieldBytes { number, start, end });
                start = end;
            }
        }
        if let Some((number, end)) = extra {
            // At least WALK_LOCAL of this walk's fields are there.
            let start = out.fields.last().map_or(region, |f| f.end);
            out.fields.push(FieldBytes { number, start, end });
        }
    }

    /// A walked field's value (at the top of the stack) that
    /// [`Self::single_fast`] did not take.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn walk_value(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        card: Card,
        ty: c_int,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> Res {
        // SAFETY: the value is at the top of the stack; the callees take
        // its absolute slot.
        unsafe {
            let v = ffi::lua_gettop(self.L);
            match card {
                Card::Single => self.single(f, v, ty, depth, 0, out).map_err(|_| self.err.with(|e| e.in_field(mi, fi))),
                Card::Repeated => self.repeated(mi, fi, f, v, ty, depth, out),
                Card::Map => self.map(f, v, ty, depth, out).map_err(|_| self.err.with(|e| e.in_map(mi, fi))),
            }
        }
    }

    /// Is the cdata at `v` a NULL pointer (`box.NULL`)?
    #[cold]
    unsafe fn is_null(&self, v: c_int) -> bool {
        // SAFETY: forwarded; the value is a cdata.
        unsafe { self.read_cdata(v) == CdataInt::Null }
    }

    /// Classify the cdata at `v`: Tarantool's C API when there, else the
    /// portable Lua classifier.
    #[cold]
    unsafe fn read_cdata(&self, v: c_int) -> CdataInt {
        // SAFETY: the value at `v` is a cdata; 3 free slots (frame reserve).
        unsafe {
            if let Some(tt) = &self.module.tarantool {
                match tt.read(self.L, v) {
                    Cdata::I64(i) => return CdataInt::I64(i),
                    Cdata::U64(u) => return CdataInt::U64(u),
                    Cdata::Null => return CdataInt::Null,
                    Cdata::Unknown => {}
                }
            }
            int64::read_cdata(self.L, lua::absindex(self.L, v), self.helpers)
        }
    }

    /// The error naming every absent `required` field of `t`.
    #[cold]
    unsafe fn missing_required(&self, mi: u32, plan: &MessagePlan, t: c_int) -> CodecError {
        let mut missing = MissingSet::default();
        for (i, &fi) in plan.required.iter().enumerate() {
            // SAFETY: `t` is a table; a few free slots (frame reserve).
            let absent = unsafe {
                self.push_key(plan.fields[fi as usize].key_id);
                let ty = lua::rawget(self.L, t);
                // box.NULL counts as absent, as in the field walk.
                let absent = ty == ffi::LUA_TNIL || (ty == lua::LUA_TCDATA && self.is_null(-1));
                ffi::lua_pop(self.L, 1);
                absent
            };
            if absent {
                missing.add(i);
            }
        }
        CodecError::new(ErrorKind::MissingRequired { msg: mi, missing }, None)
    }

    /// Two members of one oneof set is an error.
    unsafe fn check_oneof(
        &self,
        mi: u32,
        plan: &MessagePlan,
        t: c_int,
        fi: usize,
        set: &mut [u16; TRACKED_ONEOFS],
        any_order: bool,
    ) -> Res {
        let o = plan.fields[fi].oneof;
        let conflict = |first: usize| {
            CodecError::new(
                ErrorKind::OneofConflict { msg: mi, oneof: o, first: first as u16, second: fi as u16 },
                None,
            )
        };
        if (o as usize) < TRACKED_ONEOFS {
            let prev = set[o as usize];
            if prev != 0 {
                return Err(self.err.set(conflict(prev as usize - 1)));
            }
            set[o as usize] = fi as u16 + 1;
            return Ok(());
        }
        // Untracked: look at the other members (the probe visits in field
        // order, so the earlier ones are enough there).
        for &m in
            plan.oneofs[o as usize].members.iter().filter(|&&m| (m as usize) < fi || any_order && m as usize != fi)
        {
            // SAFETY: `t` is a table; one free slot.
            let ty = unsafe {
                self.push_key(plan.fields[m as usize].key_id);
                let ty = lua::rawget(self.L, t);
                ffi::lua_pop(self.L, 1);
                ty
            };
            if ty != ffi::LUA_TNIL {
                return Err(self.err.set(conflict(m as usize)));
            }
        }
        Ok(())
    }

    /// The number of keys of table `t`, counted by the helper's Lua loop
    /// (LuaJIT's `next` loop steps through the table by slot, where each
    /// `lua_next` call looks its key up again). `None` if it failed.
    #[cold]
    unsafe fn count_keys_lua(&self, t: c_int) -> Option<usize> {
        let L = self.L;
        // SAFETY: two free slots (frame reserve); the helper only reads the
        // table, and pcall catches any error (a hook's, out of memory).
        unsafe {
            if lua::rawgeti(L, self.helpers, Helper::CountKeys.at()) != ffi::LUA_TFUNCTION {
                ffi::lua_pop(L, 1);
                return None;
            }
            ffi::lua_pushvalue(L, t);
            if ffi::lua_pcall(L, 1, 1, 0) != 0 {
                ffi::lua_pop(L, 1);
                return None;
            }
            let n = ffi::lua_tonumber(L, -1);
            ffi::lua_pop(L, 1);
            Some(n as usize)
        }
    }

    /// The key counts of the tables `arr[i..=end]` (at most
    /// `keys.len()`), by the helper's Lua loop in one `lua_pcall`: what
    /// [`Self::check_keys`] would count with `lua_next`, per table. On any
    /// failure (an element that is not a table, a hook's error) `keys` is
    /// left as it is (not counted).
    #[cold]
    unsafe fn count_batch_keys(&self, arr: c_int, i: usize, end: usize, keys: &mut [usize]) {
        let L = self.L;
        let m = end - i + 1;
        // SAFETY: the caller reserved a batch and 8 more slots, none used
        // yet: 4 for the call, then `m` results; pcall catches any error;
        // the stack is back at `top` on return.
        unsafe {
            let top = ffi::lua_gettop(L);
            if lua::rawgeti(L, self.helpers, Helper::CountBatchKeys.at()) == ffi::LUA_TFUNCTION {
                ffi::lua_pushvalue(L, arr);
                ffi::lua_pushnumber(L, i as f64);
                ffi::lua_pushnumber(L, end as f64);
                if ffi::lua_pcall(L, 3, m as c_int, 0) == 0 {
                    for (k, slot) in keys[..m].iter_mut().enumerate() {
                        *slot = ffi::lua_tonumber(L, top + 1 + k as c_int) as usize;
                    }
                }
            }
            ffi::lua_settop(L, top);
        }
    }

    /// Strict keys: every key of the table must be a field.
    unsafe fn check_keys(&self, plan: &MessagePlan, t: c_int, present: usize) -> Res {
        let L = self.L;
        // SAFETY: raw iteration of a table we do not modify; keys are only
        // inspected by type and, for strings, by their bytes.
        unsafe {
            let counted = if lua::IS_LUAJIT && present >= KEYS_COUNTED_IN_LUA { self.count_keys_lua(t) } else { None };
            let count = match counted {
                Some(n) => n,
                None => {
                    let mut n = 0usize;
                    ffi::lua_pushnil(L);
                    while ffi::lua_next(L, t) != 0 {
                        ffi::lua_pop(L, 1);
                        n += 1;
                    }
                    n
                }
            };
            if count == present {
                return Ok(());
            }
            ffi::lua_pushnil(L);
            while ffi::lua_next(L, t) != 0 {
                ffi::lua_pop(L, 1);
                let kt = ffi::lua_type(L, -1);
                if kt != ffi::LUA_TSTRING {
                    ffi::lua_pop(L, 1);
                    return Err(self.err.set(CodecError::new(ErrorKind::NonStringKey(lua_type_name(kt)), None)));
                }
                let k = lua::string_bytes(L, -1);
                if !plan.fields.iter().any(|f| f.name.as_bytes() == k) {
                    let s = ShortStr::new(k);
                    ffi::lua_pop(L, 1);
                    return Err(self.err.set(CodecError::new(ErrorKind::UnknownKey(s), None)));
                }
            }
        }
        Ok(())
    }

    /// The common singular fields, inline in the field loops: a number for
    /// an integer kind in range (what [`Self::small_integer`] takes), a
    /// `double` or `float`, a `bool`, or a string for a string/bytes field that needs
    /// no UTF-8 check or passes it. The value is at index `v` (−1 when
    /// it is on top of the stack).
    /// Returns `false`, having written nothing, for anything else, which
    /// [`Self::single`] then handles (and words the errors of).
    #[inline(always)]
    unsafe fn single_fast(&self, f: &FieldPlan, v: c_int, ty: c_int, w: &mut Writer) -> bool {
        let L = self.L;
        // SAFETY: the value is at index `v`; it is read as a
        // number/boolean/string only after its type is checked.
        unsafe {
            if ty == ffi::LUA_TNUMBER {
                let x = match f.kind {
                    Kind::Int32 | Kind::Enum => self.small_integer(Kind::Int32, v, ty).map(|i| i as u64),
                    Kind::Int64 => self.small_integer(Kind::Int64, v, ty).map(|i| i as u64),
                    Kind::UInt32 => self.small_integer(Kind::UInt32, v, ty).map(|i| i as u64),
                    Kind::UInt64 => self.small_integer(Kind::UInt64, v, ty).map(|i| i as u64),
                    Kind::SInt32 => {
                        self.small_integer(Kind::SInt32, v, ty).map(|i| zigzag::encode_zigzag32(i as i32) as u64)
                    }
                    Kind::SInt64 => self.small_integer(Kind::SInt64, v, ty).map(zigzag::encode_zigzag64),
                    Kind::Double => {
                        let x = ffi::lua_tonumber(L, v).to_bits();
                        if !(f.implicit && x == 0) {
                            w.put_encoded_tag(&f.tag);
                            w.put_fixed64(x);
                        }
                        return true;
                    }
                    Kind::Float => {
                        let x = (ffi::lua_tonumber(L, v) as f32).to_bits();
                        if !(f.implicit && x == 0) {
                            w.put_encoded_tag(&f.tag);
                            w.put_fixed32(x);
                        }
                        return true;
                    }
                    Kind::Fixed32 | Kind::SFixed32 | Kind::Fixed64 | Kind::SFixed64 => {
                        let i = match f.kind {
                            Kind::Fixed32 => self.small_integer(Kind::Fixed32, v, ty),
                            Kind::SFixed32 => self.small_integer(Kind::SFixed32, v, ty),
                            Kind::Fixed64 => self.small_integer(Kind::Fixed64, v, ty),
                            _ => self.small_integer(Kind::SFixed64, v, ty),
                        };
                        let Some(i) = i else { return false };
                        if !(f.implicit && i == 0) {
                            w.put_encoded_tag(&f.tag);
                            if matches!(f.kind, Kind::Fixed32 | Kind::SFixed32) {
                                w.put_fixed32(i as u32);
                            } else {
                                w.put_fixed64(i as u64);
                            }
                        }
                        return true;
                    }
                    _ => None,
                };
                let Some(x) = x else { return false };
                if !(f.implicit && x == 0) {
                    w.put_encoded_tag(&f.tag);
                    w.put_varint(x);
                }
                true
            } else if ty == ffi::LUA_TSTRING && matches!(f.kind, Kind::String | Kind::Bytes) {
                let s = lua::string_bytes(L, v);
                if f.utf8 && self.utf8 && utf8::validate_utf8(s, 0).is_err() {
                    return false;
                }
                if !(f.implicit && s.is_empty()) {
                    w.put_tagged_len_bytes(&f.tag, s);
                }
                true
            } else if ty == ffi::LUA_TBOOLEAN && f.kind == Kind::Bool {
                let b = ffi::lua_toboolean(L, v) != 0;
                if b || !f.implicit {
                    w.put_encoded_tag(&f.tag);
                    w.put_varint(b as u64);
                }
                true
            } else {
                false
            }
        }
    }

    /// A singular field: tag and value, skipping proto3 zero values.
    /// `pre`, when not 0, is the slot of a sub-message's count slot
    /// ([`FETCH_COUNT_BITS`]), its field values after it, fetched with the
    /// caller's fields.
    #[allow(clippy::too_many_arguments)]
    unsafe fn single(
        &self,
        f: &FieldPlan,
        v: c_int,
        ty: c_int,
        depth: u32,
        pre: c_int,
        out: &mut EncodeBuffers,
    ) -> Res {
        // SAFETY: forwarded; `pre` is passed on only for a table value,
        // whose count slot the fetch then set.
        unsafe {
            // `message` reads the count at `pre`.
            let vals = if pre != 0 && ty == ffi::LUA_TTABLE { pre + 1 } else { 0 };
            let keys = usize::MAX;
            match f.kind {
                Kind::Message => {
                    if ty != ffi::LUA_TTABLE {
                        return Err(self.err.set(wrong("table", ty)));
                    }
                    out.w.put_encoded_tag(&f.tag);
                    let mark = out.w.begin_len();
                    self.message(f.sub, v, depth + 1, keys, vals, out)?;
                    out.w.end_len(mark);
                    Ok(())
                }
                Kind::Group => {
                    if ty != ffi::LUA_TTABLE {
                        return Err(self.err.set(wrong("table", ty)));
                    }
                    out.w.put_encoded_tag(&f.tag);
                    self.message(f.sub, v, depth + 1, keys, vals, out)?;
                    let end = Tag::new(f.number, WireType::EndGroup).expect("valid field number");
                    out.w.put_tag(end);
                    Ok(())
                }
                Kind::String | Kind::Bytes => {
                    let s = self.string_value(f, v, ty)?;
                    if f.implicit && s.is_empty() {
                        return Ok(());
                    }
                    out.w.put_tagged_len_bytes(&f.tag, s);
                    Ok(())
                }
                _ => {
                    let mark = out.w.len();
                    out.w.put_encoded_tag(&f.tag);
                    let zero = self.scalar(f, v, ty, &mut out.w)?;
                    if f.implicit && zero {
                        out.w.truncate(mark);
                    }
                    Ok(())
                }
            }
        }
    }

    /// A repeated field: packed run or one tagged value per element.
    #[allow(clippy::too_many_arguments)]
    unsafe fn repeated(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        arr: c_int,
        ty: c_int,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> Res {
        let L = self.L;
        if ty != ffi::LUA_TTABLE {
            return Err(self.err.set(wrong("array (table)", ty).in_field(mi, fi)));
        }
        // SAFETY: `arr` is an absolute table index; each element is popped.
        unsafe {
            let n = lua::rawlen(L, arr);
            if n == 0 {
                return Ok(());
            }
            if f.packed {
                out.w.put_encoded_tag(&f.tag);
                let fixed = match f.kind.wire_type() {
                    WireType::I32 => Some(4),
                    WireType::I64 => Some(8),
                    _ => None,
                };
                let mark = match fixed {
                    Some(width) => {
                        out.w.put_varint((n * width) as u64);
                        None
                    }
                    None => Some(out.w.begin_len()),
                };
                self.scalar_elements::<false>(mi, fi, f, arr, n, &mut out.w)?;
                if let Some(mark) = mark {
                    out.w.end_len(mark);
                }
                return Ok(());
            }
            match f.kind {
                // The element loop calls `message` itself (`single` would
                // add a frame and a kind dispatch per element).
                Kind::Message if self.fetches_batch(f.sub, depth + 1) => {
                    self.fetched_elements(mi, fi, f, arr, n, depth, out)?
                }
                // Elements that fetch count their own keys: no batch count.
                Kind::Message => self.each_element::<MESSAGE_BATCH, true>(
                    mi,
                    fi,
                    arr,
                    n,
                    !self.fetches(&self.plans.messages[f.sub as usize], depth + 1),
                    |v, ety, keys| {
                        if ety != ffi::LUA_TTABLE {
                            return Err(self.err.set(wrong("table", ety)));
                        }
                        out.w.put_encoded_tag(&f.tag);
                        let mark = out.w.begin_len();
                        self.message(f.sub, v, depth + 1, keys, 0, out)?;
                        out.w.end_len(mark);
                        Ok(())
                    },
                )?,
                Kind::Group => self.each_element::<MESSAGE_BATCH, false>(mi, fi, arr, n, false, |v, ety, _| {
                    self.element(f, v, ety, depth, out)
                })?,
                Kind::String | Kind::Bytes => self.string_elements(mi, fi, f, arr, n, &mut out.w)?,
                _ => self.scalar_elements::<true>(mi, fi, f, arr, n, &mut out.w)?,
            }
        }
        Ok(())
    }

    /// The elements of a repeated string/bytes field, each with its tag:
    /// what [`Self::element`] and [`Self::string_value`] do per element,
    /// in one loop without their two calls (see [`Self::string_run`]).
    #[inline(never)]
    unsafe fn string_elements(&self, mi: u32, fi: usize, f: &FieldPlan, arr: c_int, n: usize, w: &mut Writer) -> Res {
        // SAFETY: forwarded.
        unsafe {
            if f.utf8 && self.utf8 {
                self.string_run::<true>(mi, fi, f.tag, arr, n, w)
            } else {
                self.string_run::<false>(mi, fi, f.tag, arr, n, w)
            }
        }
    }

    /// The loop of [`Self::string_elements`], with the UTF-8 check a
    /// constant: per element `rawgeti`, `lua_type`, `lua_tolstring`, the
    /// check and one [`Writer::put_tagged_len_bytes`], the elements popped
    /// in batches as in [`Self::each_element`]. Anything that is not a
    /// valid string goes to [`Self::string_run_error`], out of line.
    #[inline(always)]
    unsafe fn string_run<const UTF8: bool>(
        &self,
        mi: u32,
        fi: usize,
        tag: EncodedTag,
        arr: c_int,
        n: usize,
        w: &mut Writer,
    ) -> Res {
        let L = self.L;
        // SAFETY: `arr` is a table (checked by `repeated`); the batch's
        // slots are reserved before it is pushed; a slot is read as a
        // string only after its type is checked (`lua_tolstring` would
        // convert a number), and the string stays anchored in `arr` for
        // the whole encode; the stack is back at `base` on every exit.
        unsafe {
            let base = ffi::lua_gettop(L);
            let mut i = 1;
            while i <= n {
                if ffi::lua_checkstack(L, ELEMENT_BATCH as c_int + 8) == 0 {
                    return Err(self.err.set(CodecError::new(ErrorKind::StackOverflow, None)));
                }
                let end = n.min(i + ELEMENT_BATCH - 1);
                // An exclusive range: `..=` keeps an exhausted flag.
                for j in i..end + 1 {
                    lua::push_rawgeti(L, arr, j as i64);
                    let ety = ffi::lua_type(L, -1);
                    if ety != ffi::LUA_TSTRING {
                        return Err(self.string_run_error(mi, fi, base, j, ety));
                    }
                    let s = lua::string_bytes(L, -1);
                    if UTF8 && utf8::validate_utf8(s, 0).is_err() {
                        return Err(self.string_run_error(mi, fi, base, j, ety));
                    }
                    w.put_tagged_len_bytes(&tag, s);
                }
                ffi::lua_settop(L, base);
                i = end + 1;
            }
        }
        Ok(())
    }

    /// Element `j` of a string run (on top of the stack, of type `ety`)
    /// is not a valid string: record the error with the element's path and
    /// pop the stack back to `base`.
    #[cold]
    #[inline(never)]
    unsafe fn string_run_error(&self, mi: u32, fi: usize, base: c_int, j: usize, ety: c_int) -> Fail {
        let e = match ety {
            ffi::LUA_TNIL => CodecError::new(ErrorKind::ArrayHole(j as u64), None),
            ffi::LUA_TSTRING => CodecError::new(ErrorKind::InvalidUtf8, None),
            _ => wrong("string", ety),
        };
        // SAFETY: the stack holds the run's pushed elements above `base`.
        unsafe { ffi::lua_settop(self.L, base) };
        self.err.set(e.in_element(mi, fi, j as u64))
    }

    /// The elements of a repeated scalar field (packed run, or each with
    /// its tag when `TAGGED`). The kind is matched once per field, not per
    /// element: each integer kind gets its own loop, in which the one-call
    /// read ([`Self::small_integer`]) and the write are inlined, and only
    /// the values it leaves (strings, cdata, errors) go through
    /// [`Self::scalar`]. Other kinds take `scalar` for every element.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn scalar_elements<const TAGGED: bool>(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        arr: c_int,
        n: usize,
        w: &mut Writer,
    ) -> Res {
        // One loop per kind, `$kind` a constant so that the range check of
        // `small_integer` folds; `$put` writes the value read.
        macro_rules! ints {
            ($kind:expr, $put:expr) => {
                self.each_element::<ELEMENT_BATCH, false>(mi, fi, arr, n, false, |v, ety, _| {
                    if TAGGED {
                        w.put_encoded_tag(&f.tag);
                    }
                    // The element is also on top: -1 needs no index arithmetic.
                    match self.small_integer($kind, -1, ety) {
                        Some(i) => {
                            #[allow(clippy::redundant_closure_call)]
                            ($put)(&mut *w, i);
                            Ok(())
                        }
                        None => self.scalar(f, v, ety, w).map(|_| ()),
                    }
                })
            };
        }
        // SAFETY: forwarded from `repeated` (`arr` a table, stack reserved
        // by `each_element`).
        unsafe {
            match f.kind {
                Kind::Int32 => ints!(Kind::Int32, |w: &mut Writer, i: i64| w.put_varint(i as u64)),
                Kind::Int64 => ints!(Kind::Int64, |w: &mut Writer, i: i64| w.put_varint(i as u64)),
                Kind::UInt32 => ints!(Kind::UInt32, |w: &mut Writer, i: i64| w.put_varint(i as u64)),
                Kind::UInt64 => ints!(Kind::UInt64, |w: &mut Writer, i: i64| w.put_varint(i as u64)),
                Kind::SInt32 => {
                    ints!(Kind::SInt32, |w: &mut Writer, i: i64| w.put_varint(zigzag::encode_zigzag32(i as i32) as u64))
                }
                Kind::SInt64 => ints!(Kind::SInt64, |w: &mut Writer, i: i64| w.put_varint(zigzag::encode_zigzag64(i))),
                Kind::Fixed32 => ints!(Kind::Fixed32, |w: &mut Writer, i: i64| w.put_fixed32(i as u32)),
                Kind::SFixed32 => ints!(Kind::SFixed32, |w: &mut Writer, i: i64| w.put_fixed32(i as u32)),
                Kind::Fixed64 => ints!(Kind::Fixed64, |w: &mut Writer, i: i64| w.put_fixed64(i as u64)),
                Kind::SFixed64 => ints!(Kind::SFixed64, |w: &mut Writer, i: i64| w.put_fixed64(i as u64)),
                _ => self.each_element::<ELEMENT_BATCH, false>(mi, fi, arr, n, false, |v, ety, _| {
                    if TAGGED {
                        w.put_encoded_tag(&f.tag);
                    }
                    self.scalar(f, v, ety, w).map(|_| ())
                }),
            }
        }
    }

    /// Call `each(index, type)` on `arr[1..=n]`, pushing the elements in
    /// batches of `BATCH` ([`ELEMENT_BATCH`] or [`MESSAGE_BATCH`]) and
    /// popping each batch with one `lua_settop` (two C API calls per element
    /// instead of four). A nil is a hole: an error naming the index.
    /// With `COUNT_KEYS` and `count` (sub-message elements that do not
    /// fetch their own count, strict keys, LuaJIT), each batch of
    /// `MIN_COUNTED_BATCH` or more elements has their keys counted by one
    /// Lua call ([`Self::count_batch_keys`]), passed to `each` as its third
    /// argument (`usize::MAX`: not counted).
    #[inline(always)]
    unsafe fn each_element<const BATCH: usize, const COUNT_KEYS: bool>(
        &self,
        mi: u32,
        fi: usize,
        arr: c_int,
        n: usize,
        count: bool,
        mut each: impl FnMut(c_int, c_int, usize) -> Res,
    ) -> Res {
        let L = self.L;
        // SAFETY: `arr` is a table; the batch's slots are reserved before
        // it is pushed, again for each batch. (A GC step inside `each`, such
        // as the cdata classifier's, may shrink LuaJIT's stack below that
        // reservation mid-batch; LuaJIT's API pushes grow the stack
        // themselves, and Lua 5.1/5.4 keep the reservation.) The stack is
        // back at `base` on every exit.
        unsafe {
            let base = ffi::lua_gettop(L);
            let mut i = 1;
            while i <= n {
                if ffi::lua_checkstack(L, BATCH as c_int + 8) == 0 {
                    return Err(self.err.set(CodecError::new(ErrorKind::StackOverflow, None)));
                }
                let end = n.min(i + BATCH - 1);
                // Only read with `COUNT_KEYS` (a batch of `MESSAGE_BATCH`).
                let mut keys = [usize::MAX; MESSAGE_BATCH];
                if COUNT_KEYS && count && lua::IS_LUAJIT && self.strict_keys && end >= i + MIN_COUNTED_BATCH - 1 {
                    self.count_batch_keys(arr, i, end, &mut keys);
                }
                // An exclusive range: `..=` keeps an exhausted flag.
                for j in i..end + 1 {
                    let ety = lua::rawgeti(L, arr, j as i64);
                    let r = if ety == ffi::LUA_TNIL {
                        Err(self.err.set(CodecError::new(ErrorKind::ArrayHole(j as u64), None)))
                    } else {
                        each(base + 1 + (j - i) as c_int, ety, if COUNT_KEYS { keys[j - i] } else { usize::MAX })
                    };
                    if r.is_err() {
                        ffi::lua_settop(L, base);
                        return r.map_err(|_| self.err.with(|e| e.in_element(mi, fi, j as u64)));
                    }
                }
                ffi::lua_settop(L, base);
                i = end + 1;
            }
        }
        Ok(())
    }

    /// One element of an unpacked repeated field (always written, zero or not).
    unsafe fn element(&self, f: &FieldPlan, v: c_int, ty: c_int, depth: u32, out: &mut EncodeBuffers) -> Res {
        // SAFETY: forwarded.
        unsafe {
            match f.kind {
                Kind::Message | Kind::Group => self.single(f, v, ty, depth, 0, out),
                Kind::String | Kind::Bytes => {
                    let s = self.string_value(f, v, ty)?;
                    out.w.put_tagged_len_bytes(&f.tag, s);
                    Ok(())
                }
                _ => {
                    out.w.put_encoded_tag(&f.tag);
                    self.scalar(f, v, ty, &mut out.w).map(|_| ())
                }
            }
        }
    }

    /// A map field: entries written as iterated, then put in key order.
    unsafe fn map(&self, f: &FieldPlan, m: c_int, ty: c_int, depth: u32, out: &mut EncodeBuffers) -> Res {
        let L = self.L;
        if ty != ffi::LUA_TTABLE {
            return Err(self.err.set(wrong("table", ty)));
        }
        let entry = &self.plans.messages[f.sub as usize];
        let (kf, vf) = (&entry.fields[0], &entry.fields[1]);
        let first_entry = out.entries.len();
        let region = out.w.len();
        // SAFETY: raw iteration of an unmodified table; key and value are
        // inspected by type before any conversion (so lua_next stays valid).
        unsafe {
            ffi::lua_pushnil(L);
            while ffi::lua_next(L, m) != 0 {
                let (k, vi) = (ffi::lua_gettop(L) - 1, ffi::lua_gettop(L));
                let r = self.map_entry(f, kf, vf, k, vi, depth, out);
                match r {
                    Ok(e) => out.entries.push(e),
                    Err(e) => {
                        ffi::lua_pop(L, 2);
                        out.entries.truncate(first_entry);
                        return Err(e);
                    }
                }
                ffi::lua_pop(L, 1);
            }
        }
        let entries = &mut out.entries[first_entry..];
        let sorted = entries.windows(2).all(|w| w[0].key.cmp(&w[1].key) != Ordering::Greater);
        if !sorted {
            entries.sort_unstable_by(|a, b| a.key.cmp(&b.key).then(a.start.cmp(&b.start)));
            reorder_parts(out.w.as_mut_vec(), region, entries.iter().map(|e| (e.start, e.end)));
        }
        out.entries.truncate(first_entry);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    unsafe fn map_entry(
        &self,
        f: &FieldPlan,
        kf: &FieldPlan,
        vf: &FieldPlan,
        k: c_int,
        v: c_int,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> Res<MapEntry> {
        let L = self.L;
        // An entry is a nested message on the wire, and decode counts it
        // as a level: a table that encodes must decode with the same limit.
        if depth + 1 > self.max_depth {
            return Err(self.err.set(CodecError::new(ErrorKind::DepthLimit(self.max_depth), None)));
        }
        let start = out.w.len();
        // SAFETY: forwarded; k and v are live stack slots.
        unsafe {
            let kty = ffi::lua_type(L, k);
            let key = match kf.kind {
                Kind::String => {
                    let s = self.string_value(kf, k, kty)?;
                    MapKey::Str(s.as_ptr(), s.len())
                }
                Kind::Bool => {
                    if kty != ffi::LUA_TBOOLEAN {
                        return Err(self.err.set(wrong("boolean key", kty)));
                    }
                    MapKey::Bool(ffi::lua_toboolean(L, k) != 0)
                }
                _ => MapKey::Int(match self.small_integer(kf.kind, k, kty) {
                    Some(i) => i as i128,
                    None => self.integer(kf.kind, k, kty)?,
                }),
            };
            out.w.put_encoded_tag(&f.tag);
            let mark = out.w.begin_len();
            self.element(kf, k, kty, depth + 1, out)?;
            let vty = ffi::lua_type(L, v);
            self.element(vf, v, vty, depth + 1, out)?;
            out.w.end_len(mark);
            Ok(MapEntry { key, start, end: out.w.len() })
        }
    }

    /// The bytes of a string/bytes value, UTF-8 checked for proto3 strings.
    unsafe fn string_value<'s>(&self, f: &FieldPlan, v: c_int, ty: c_int) -> Res<&'s [u8]> {
        if ty != ffi::LUA_TSTRING {
            return Err(self.err.set(wrong("string", ty)));
        }
        // SAFETY: a string slot, anchored for the whole encode.
        let s = unsafe { lua::string_bytes(self.L, v) };
        if f.utf8 && self.utf8 && utf8::validate_utf8(s, 0).is_err() {
            return Err(self.err.set(CodecError::new(ErrorKind::InvalidUtf8, None)));
        }
        Ok(s)
    }

    /// Write one scalar value (no tag); returns whether it is the zero value.
    #[inline]
    unsafe fn scalar(&self, f: &FieldPlan, v: c_int, ty: c_int, w: &mut Writer) -> Res<bool> {
        let L = self.L;
        // SAFETY: forwarded; numbers are read only after their type is checked.
        unsafe {
            match f.kind {
                Kind::Bool => {
                    if ty != ffi::LUA_TBOOLEAN {
                        return Err(self.err.set(wrong("boolean", ty)));
                    }
                    let b = ffi::lua_toboolean(L, v) != 0;
                    w.put_varint(b as u64);
                    Ok(!b)
                }
                Kind::Float => {
                    if ty != ffi::LUA_TNUMBER {
                        return Err(self.err.set(wrong("number", ty)));
                    }
                    let x = ffi::lua_tonumber(L, v) as f32;
                    w.put_fixed32(x.to_bits());
                    Ok(x.to_bits() == 0)
                }
                Kind::Double => {
                    if ty != ffi::LUA_TNUMBER {
                        return Err(self.err.set(wrong("number", ty)));
                    }
                    let x = ffi::lua_tonumber(L, v);
                    w.put_fixed64(x.to_bits());
                    Ok(x.to_bits() == 0)
                }
                Kind::Enum => {
                    let n = if ty == ffi::LUA_TSTRING {
                        let s = lua::string_bytes(L, v);
                        let e = &self.plans.enums[f.sub as usize];
                        match e.number_of(s) {
                            Some(n) => n,
                            None => {
                                return Err(self
                                    .err
                                    .set(CodecError::new(ErrorKind::UnknownEnumName(ShortStr::new(s), f.sub), None)));
                            }
                        }
                    } else {
                        match self.small_integer(Kind::Int32, v, ty) {
                            Some(i) => i as i32,
                            None => self.integer(Kind::Int32, v, ty)? as i32,
                        }
                    };
                    w.put_varint(n as i64 as u64);
                    Ok(n == 0)
                }
                kind => {
                    // Two's complement bits: every write below takes its width of them.
                    let x = match self.small_integer(kind, v, ty) {
                        Some(i) => i as u64,
                        None => self.integer(kind, v, ty)? as u64,
                    };
                    match kind {
                        Kind::Int32 | Kind::Int64 | Kind::UInt32 | Kind::UInt64 => w.put_varint(x),
                        Kind::SInt32 => w.put_varint(zigzag::encode_zigzag32(x as i32) as u64),
                        Kind::SInt64 => w.put_varint(zigzag::encode_zigzag64(x as i64)),
                        Kind::Fixed32 | Kind::SFixed32 => w.put_fixed32(x as u32),
                        Kind::Fixed64 | Kind::SFixed64 => w.put_fixed64(x),
                        _ => unreachable!("non-integer kinds handled above"),
                    }
                    Ok(x == 0)
                }
            }
        }
    }

    /// Read an integer for `kind`, range-checked; the result is the value
    /// (for uint64 on Lua 5.3+, a negative integer means its wrapped value).
    /// The common case of [`Self::integer`] in one C API call: a Lua number
    /// holding an integer in `kind`'s range. `None` leaves everything else
    /// (strings, cdata, fractions, NaN, out of range, 2^63 and up, negative
    /// native integers for the unsigned 64-bit wrap) to the general path,
    /// which also words the errors.
    #[inline(always)]
    unsafe fn small_integer(&self, kind: Kind, v: c_int, ty: c_int) -> Option<i64> {
        if ty != ffi::LUA_TNUMBER {
            return None;
        }
        // SAFETY: `v` holds a number; neither call raises.
        let i = unsafe {
            if lua::HAS_INTEGERS {
                lua::number_as_integer(self.L, v)?
            } else {
                let x = ffi::lua_tonumber(self.L, v);
                if matches!(kind, Kind::Int32 | Kind::SInt32 | Kind::SFixed32 | Kind::Enum) {
                    // `as` saturates, and i32's bounds are exact doubles: a
                    // value out of range, a fraction or NaN does not survive
                    // the round trip, so this is the range check too.
                    let i = x as i32;
                    return (i as f64 == x).then_some(i as i64);
                }
                // `as` saturates, so i64::MAX also stands for 2^63 and up;
                // a fraction or NaN does not survive the round trip.
                let i = x as i64;
                if i == i64::MAX || i as f64 != x {
                    return None;
                }
                i
            }
        };
        let in_range = match kind {
            Kind::Int32 | Kind::SInt32 | Kind::SFixed32 | Kind::Enum => i as i32 as i64 == i,
            Kind::UInt32 | Kind::Fixed32 => i as u64 <= u32::MAX as u64,
            Kind::Int64 | Kind::SInt64 | Kind::SFixed64 => true,
            Kind::UInt64 | Kind::Fixed64 => i >= 0,
            _ => false,
        };
        in_range.then_some(i)
    }

    unsafe fn integer(&self, kind: Kind, v: c_int, ty: c_int) -> Res<i128> {
        let L = self.L;
        let wide = kind.is_64bit_integer();
        // SAFETY: numbers and strings are read only after their type is checked.
        let (x, native_int) = unsafe {
            match ty {
                ffi::LUA_TNUMBER => {
                    let native = lua::HAS_INTEGERS && ffi::lua_isinteger(L, v) != 0;
                    match lua::number_to_int(L, v) {
                        Ok(NumInt::Int(i)) => (i as i128, native),
                        Ok(NumInt::UInt(u)) => (u as i128, false),
                        Ok(NumInt::Huge(h)) => {
                            return Err(self.err.set(CodecError::new(
                                ErrorKind::OutOfRange { value: IntValue::Float(h), ty: kind.proto_name() },
                                None,
                            )));
                        }
                        Err(fv) => return Err(self.err.set(CodecError::new(ErrorKind::NotIntegral(fv), None))),
                    }
                }
                ffi::LUA_TSTRING if wide => {
                    let s = lua::string_bytes(L, v);
                    match int64::parse_decimal(s) {
                        Some((neg, mag)) => (if neg { -(mag as i128) } else { mag as i128 }, false),
                        None => {
                            return Err(self.err.set(CodecError::new(ErrorKind::BadIntString(ShortStr::new(s)), None)));
                        }
                    }
                }
                lua::LUA_TCDATA => match self.read_cdata(v) {
                    CdataInt::I64(i) => (i as i128, false),
                    CdataInt::U64(u) => (u as i128, false),
                    CdataInt::Null | CdataInt::Other => return Err(self.err.set(wrong("integer", ty))),
                },
                _ => return Err(self.err.set(wrong(if wide { "integer or decimal string" } else { "integer" }, ty))),
            }
        };
        let (lo, hi): (i128, i128) = match kind {
            Kind::Int32 | Kind::SInt32 | Kind::SFixed32 | Kind::Enum => (i32::MIN as i128, i32::MAX as i128),
            Kind::UInt32 | Kind::Fixed32 => (0, u32::MAX as i128),
            Kind::Int64 | Kind::SInt64 | Kind::SFixed64 => (i64::MIN as i128, i64::MAX as i128),
            Kind::UInt64 | Kind::Fixed64 => {
                if native_int && x < 0 {
                    // Lua 5.3+ convention: uint64 >= 2^63 is the wrapped integer.
                    return Ok(x as i64 as u64 as i128);
                }
                (0, u64::MAX as i128)
            }
            _ => (i64::MIN as i128, u64::MAX as i128),
        };
        if x < lo || x > hi {
            let value = if x < 0 { IntValue::Signed(x as i64) } else { IntValue::Unsigned(x as u64) };
            let value = if x < i64::MIN as i128 { IntValue::Float(x as f64) } else { value };
            return Err(self.err.set(CodecError::new(ErrorKind::OutOfRange { value, ty: kind.proto_name() }, None)));
        }
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::rotate_region;

    #[test]
    fn rotate_region_matches_rotate_left() {
        for cap_extra in [0usize, 3, 40] {
            for region in [0usize, 5] {
                for m in 0..=20usize {
                    for first in 0..=m {
                        let mut buf: Vec<u8> = Vec::with_capacity(region + m + cap_extra);
                        buf.extend((0..region + m).map(|i| i as u8 + 1));
                        let mut want = buf.clone();
                        want[region..].rotate_left(first);
                        rotate_region(&mut buf, region, first);
                        assert_eq!(buf, want, "region {region} m {m} first {first}");
                    }
                }
            }
        }
    }
}
