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

mod arrays;
mod buffers;
mod elements;
pub mod fetch;
mod fields;
pub mod keys;
mod probe;
mod values;
mod walk;

use std::cmp::Ordering;
use std::mem::MaybeUninit;
use std::os::raw::c_int;

use pbwire::{EncodedTag, Tag, WireType, Writer, utf8, zigzag};

use crate::binary::encode::keys::KeyIndex;
use crate::error::{
    CodecError, CodecFailure, EntryKey, ErrSlot, ErrorKind, IntValue, MissingSet, Recorded, ShortStr, lua_type_name,
};
use crate::lua::host::{Cdata, ModuleState};
use crate::lua::int64;
use crate::lua::int64::CdataInt;
use crate::lua::{self, NumInt, ffi, lua_State};
use crate::plan::{Card, FieldPlan, Kind, MessagePlan, NO_ONEOF, Plans};
use crate::slots::Helper;

use buffers::*;
pub use buffers::{EncodeBuffers, FieldBytes, MapEntry};
use fetch::unpack_count;

/// Oneofs whose set member is tracked in a frame-local array.
const TRACKED_ONEOFS: usize = 8;

/// Fields the walk keeps on its own frame before it uses
/// `EncodeBuffers::fields` (see [`EncodeCtx::walk_fields`]).
const WALK_LOCAL: usize = 8;

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
    /// Recorded on absent proto2 `required` fields.
    pub check_required: bool,
    /// Check UTF-8 where the schema asks for it.
    pub utf8: bool,
    /// Absolute index of the unknown-field store, 0 when it is empty.
    pub unknown: c_int,
    /// State shared with the module (Tarantool API).
    pub module: &'a ModuleState,
    /// Key-string addresses → fields, for the walk (`None`: always probe).
    pub index: Option<&'a KeyIndex>,
    /// Fetchers allowed (option `strategies.fetch`).
    pub fetch: bool,
    /// Walking sparse tables allowed (option `strategies.walk`).
    pub walk: bool,
}

type WalkResult<T = ()> = Result<T, Recorded>;

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
/// fetch costs Person (5 fields) 23 % more instructions than the C API
/// reads and saves BenchPayload (18 fields) 7.5 % with its 3-field `Inner`
/// items read through the C API (PERF_LOG).
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

/// Scalar and string array elements pushed before one pop (see
/// `EncodeCtx::each_element`): one `lua_settop` and one `lua_checkstack`
/// per batch.
const ELEMENT_BATCH: usize = 32;

/// The same for sub-message elements. Each nesting level holds its batch
/// on the Lua stack while the element is encoded, and one C call may use
/// at most `LUAI_MAXCSTACK` (8,000) slots on LuaJIT and 5.1: a small batch
/// keeps 200 levels (`max_depth`'s ceiling) well inside it. The batch
/// fetcher's Lua source (`fetch.lua`, `BATCH`) is unrolled
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
    pub unsafe fn encode_root(&self, msg: u32, t: c_int, out: &mut EncodeBuffers) -> Result<(), CodecFailure> {
        // SAFETY: forwarded.
        unsafe {
            let ty = ffi::lua_type(self.L, t);
            if ty != ffi::LUA_TTABLE {
                return Err(wrong("table", ty).into());
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
        if !self.walk {
            return false;
        }
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
    ///
    /// # Safety
    /// As [`Self::message`] at depth 1: `t` absolute, a table, with
    /// [`ROOT_STACK_FREE`] free slots.
    #[inline(always)]
    unsafe fn walked_message(
        &self,
        mi: u32,
        plan: &MessagePlan,
        t: c_int,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> WalkResult {
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

    /// Encode table `t` as message `mi`. `keys` is the number of keys `t`
    /// has when the caller counted them already (strict keys), else
    /// `usize::MAX`. `vals`, when not 0, is the slot of the first of `t`'s
    /// field values, fetched by the caller ([`Self::fetched_elements`]),
    /// just above the fetch's count slot ([`FETCH_COUNT_BITS`]), which
    /// then gives the count (`keys` is not read).
    ///
    /// # Safety
    /// `t` an absolute index of a table, read raw and left unmodified; at
    /// depth 1 or with `vals`, [`ROOT_STACK_FREE`] free slots (else the frame
    /// reserves its own). Raises no Lua error (see the module doc).
    unsafe fn message(
        &self,
        mi: u32,
        t: c_int,
        depth: u32,
        keys: usize,
        vals: c_int,
        out: &mut EncodeBuffers,
    ) -> WalkResult {
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

    /// Whether a probed message `plan` at `depth` has its key count and
    /// values fetched by [`Self::fetch_fields`] (strict keys, LuaJIT).
    /// Not on Lua 5.4: there the fetch, and the Lua key counters, measured
    /// slower than the C API reads (docs/PERF_LOG.md, perf-fetch-54).
    #[inline(always)]
    fn fetches(&self, plan: &MessagePlan, depth: u32) -> bool {
        lua::IS_LUAJIT
            && self.fetch
            && self.strict_keys
            && depth <= FETCH_MAX_DEPTH
            && !plan.fields.is_empty()
            && plan.fields.len() <= FETCH_MAX_FIELDS
            && (self.module.next_compiles || plan.fields.len() >= FETCH_INTERPRETED_MIN_FIELDS)
    }

    /// Whether the elements of a repeated field of message `sub` at
    /// `depth` (the elements') go through [`Self::fetched_elements`]:
    /// strict keys, LuaJIT, a small message, and probed at its last encode.
    #[inline(always)]
    fn fetches_batch(&self, sub: u32, depth: u32) -> bool {
        let plan = &self.plans.messages[sub as usize];
        self.fetches(plan, depth) && plan.fields.len() <= FETCH_BATCH_MAX_FIELDS && !self.walks(sub)
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
