//! bytes → Lua table: the plan walk.
//!
//! One recursive walk per message. Each level creates its table pre-sized
//! from the plan, fills a repeated field's new array on top of the stack
//! and stores it when its run ends (encoders write a field's elements
//! together), keeps the array (or map table) of a field met again, or of a
//! map, in one stack slot, and pushes strings straight from the input.
//! On LuaJIT a message whose plan allows it is instead read onto the stack
//! and its table made by a generated constructor of its shape
//! (`DecodeCtx::message_by_ctor`, `crate::binary::decode::ctor::shape`).
//! Frames hold only borrows and plain values, so a Lua error raised inside
//! an API call (out of memory) can cross them safely; codec errors travel
//! back as [`CodecError`] and are raised by the entry point.

mod containers;
#[cfg(feature = "luajit")]
pub mod ctor;
mod extras;
mod root_fast;
mod runs;
mod scan;
mod values;
mod walk;

#[cfg(feature = "luajit")]
use std::cell::Cell;
use std::mem::MaybeUninit;
use std::os::raw::c_int;

use pbwire::{Reader, Tag, WireType, packed, utf8, zigzag};

#[cfg(feature = "luajit")]
use crate::binary::decode::ctor::bulk::{self, BULK_MAX, BULK_MIN};
use crate::error::{CodecError, CodecFailure, EntryKey, ErrSlot, ErrorKind, MissingSet, Recorded};
use crate::lua::host::ModuleState;
use crate::lua::int64::{self, Int64Mode};
use crate::lua::{self, ffi, lua_State};
use crate::plan::options::{DefaultsMode, LoadOptions};
use crate::plan::{Card, DefaultValue, FieldPlan, Kind, MessagePlan, NO_ONEOF, PLAIN_REQUIRED, PlainTag, Plans};
use crate::slots::{HandleUp, Helper, KeySlot};

use containers::take_slots;
#[cfg(feature = "luajit")]
use runs::store;
use scan::*;

/// Repeated-field element counts kept in a frame-local array; fields whose
/// slot is beyond this ask Lua for the length instead.
const TRACKED_SLOTS: usize = 32;
/// Packed varint runs of at least this many values take the run loop
/// (`DecodeCtx::varints_into`); shorter ones stay on the element loop.
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
    /// (`crate::binary::decode::ctor::shape::find_message_ctor`).
    #[cfg(feature = "luajit")]
    pub ctor_memo: &'a [Cell<crate::binary::decode::ctor::shape::Shape>],
    /// Per message, the last whole-tree signature and its compile count
    /// (`crate::binary::decode::ctor::tree`).
    #[cfg(feature = "luajit")]
    pub tree: &'a [crate::binary::decode::ctor::tree::TreeMemo],
    /// Stack index of the schema's constructor table during the general
    /// walk, when messages may be built by constructor
    /// (`DecodeCtx::message_by_ctor`); 0 otherwise. The entry points leave it
    /// 0: [`Self::decode_root`] sets it.
    #[cfg(feature = "luajit")]
    pub ctors: c_int,
    /// State shared with the module (Tarantool API, unknown-store flag).
    pub module: &'a ModuleState,
}

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

type WalkResult<T = ()> = Result<T, Recorded>;

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
    pub unsafe fn decode_root(&mut self, msg: u32) -> Result<(), CodecFailure> {
        // SAFETY: forwarded contract; the helper table holds both
        // metatables; the four slots taken before the general walk (the
        // key table, the metatables, the constructor table) are within the
        // `LUA_MINSTACK` (20) a C function starts with (the entry points
        // use at most 8). `keys` is a positive index or an upvalue
        // pseudo-index (negative).
        let res = unsafe {
            match if self.opts.strategies.root_fast { self.root_fast(msg) } else { None } {
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
                        lua::push_rawgeti(L, self.helpers, Helper::MapMt.at());
                        lua::push_rawgeti(L, self.helpers, Helper::SeqMt.at());
                        self.seq_mt = ffi::lua_gettop(L);
                        self.map_mt = self.seq_mt - 1;
                    }
                    // The constructor table, when the options leave no
                    // work after a message's fields but the required check.
                    #[cfg(feature = "luajit")]
                    if self.opts.defaults == DefaultsMode::None && !self.opts.empty && self.opts.constructors {
                        if lua::rawgeti(L, self.keys, KeySlot::Ctors.at()) == ffi::LUA_TTABLE {
                            self.ctors = ffi::lua_gettop(L);
                        } else {
                            ffi::lua_pop(L, 1);
                        }
                    }
                    // The whole message through its tree's constructor
                    // when the walk covers it (`tree_ctor`).
                    #[cfg(feature = "luajit")]
                    if self.ctors != 0 && self.opts.strategies.tree_ctors && self.tree_root(msg) {
                        return Ok(());
                    }
                    self.decode_message(msg, &mut Reader::new(self.input), 1, None, false)
                }
            }
        };
        res.map_err(|_| self.err.take())
    }

    /// [`Self::walk_body`] in the frame the plan chose for message `mi`.
    ///
    /// # Safety
    /// As [`Self::walk_body`].
    #[inline(always)]
    unsafe fn decode_message(
        &self,
        mi: u32,
        r: &mut Reader<'_>,
        depth: u32,
        group: Option<u32>,
        merge: bool,
    ) -> WalkResult {
        // SAFETY: forwarded; a lean plan has what `walk_body::<true>` asks,
        // a `by_ctor` one what `message_by_ctor` does.
        unsafe {
            #[cfg(feature = "luajit")]
            if self.ctors != 0
                && !merge
                && group.is_none()
                && self.plans.messages[mi as usize].by_ctor
                && self.opts.strategies.message_ctors
            {
                match self.message_by_ctor(mi, r, depth)? {
                    ByCtor::Done => return Ok(()),
                    ByCtor::Merge => return self.walk_message(mi, r, depth, None, true),
                    ByCtor::Declined => {}
                }
            }
            self.walk_message(mi, r, depth, group, merge)
        }
    }

    /// [`Self::walk_body`] in its lean or full frame, as the plan chose.
    ///
    /// # Safety
    /// As [`Self::walk_body`].
    #[inline(always)]
    unsafe fn walk_message(
        &self,
        mi: u32,
        r: &mut Reader<'_>,
        depth: u32,
        group: Option<u32>,
        merge: bool,
    ) -> WalkResult {
        // SAFETY: forwarded; a lean plan has what `walk_body::<true>` asks.
        unsafe {
            if self.plans.messages[mi as usize].lean {
                self.walk_body::<true>(mi, r, depth, group, merge)
            } else {
                self.walk_body::<false>(mi, r, depth, group, merge)
            }
        }
    }
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
