//! Message constructors in the general walk: a message whose fields fit a
//! shape is read onto the stack and its table made by one call of the
//! shape's generated constructor (`super::shape`).

use crate::binary::decode::ctor::shape::{SHAPE_FIELDS, Shape};
use crate::binary::decode::*;

/// The constructor's arguments read so far by
/// [`DecodeCtx::message_by_ctor`]: the shape (`shape[1..=n]`, their field
/// indices), and per field index whether it was seen (also the required
/// check's seen set: a required field is singular) and for a repeated one
/// its array's argument; per argument, its array's element count.
pub(in crate::binary::decode) struct CtorArgs {
    shape: Shape,
    n: usize,
    seen: u64,
    arg_of: [MaybeUninit<u8>; 64],
    count: [MaybeUninit<u32>; SHAPE_FIELDS],
}

impl CtorArgs {
    #[inline(always)]
    fn new() -> Self {
        CtorArgs {
            shape: [0; SHAPE_FIELDS + 1],
            n: 0,
            seen: 0,
            arg_of: [MaybeUninit::uninit(); 64],
            count: [MaybeUninit::uninit(); SHAPE_FIELDS],
        }
    }

    /// The field indices of the arguments read.
    #[inline(always)]
    fn read(&self) -> &[u8] {
        &self.shape[1..=self.n]
    }

    /// Singular field `fi` (< 64) is the next argument. The caller checked
    /// `n < SHAPE_FIELDS`.
    #[inline(always)]
    fn add(&mut self, fi: usize) {
        self.seen |= 1u64 << fi;
        // SAFETY: `n < SHAPE_FIELDS` (caller), so `1 + n` is in `shape`.
        unsafe { *self.shape.get_unchecked_mut(1 + self.n) = fi as u8 };
        self.n += 1;
    }

    /// Repeated field `fi` (< 64) gets the next argument, an array of
    /// `count` elements. The caller checked `n < SHAPE_FIELDS`.
    #[inline(always)]
    fn add_array(&mut self, fi: usize, count: u32) {
        // SAFETY: `fi` < 64 and `n < SHAPE_FIELDS` (caller).
        unsafe {
            self.arg_of.get_unchecked_mut(fi).write(self.n as u8);
            self.count.get_unchecked_mut(self.n).write(count);
        }
        self.add(fi);
    }
}

impl<'a> DecodeCtx<'a> {
    /// [`Self::walk_body`] for a new table of a `by_ctor` plan (LuaJIT, with
    /// the constructor table at `ctors`): the fields' values are pushed as
    /// they are read, a repeated field's array taking one slot at its
    /// first occurrence, and at the end the constructor of the shape
    /// (`crate::binary::decode::ctor::shape::find_message_ctor`) makes the table from them
    /// in one `lua_call`: each key costs one `TSETS` into a template that
    /// already holds it, instead of a key push, `lua_rawset` and
    /// `lj_tab_newkey` (PERF_LOG).
    ///
    /// What the shape does not cover (an unknown field, a wrong wire type,
    /// a singular field met again, a closed-enum value the enum lacks,
    /// more than `SHAPE_FIELDS` fields) makes the table from what was read
    /// so far, through the C API, and returns [`ByCtor::Merge`] with `r`
    /// at that field: [`Self::decode_message`] then walks the rest of the body
    /// merging into the table, once this frame is gone: the same result,
    /// each byte read once. No room on the stack: [`ByCtor::Declined`],
    /// nothing read. Errors are the general walk's, from the same calls in
    /// the same order.
    ///
    /// # Safety
    /// As [`Self::walk_body`]; `self.ctors` set.
    #[cfg(feature = "luajit")]
    #[inline(never)]
    pub(in crate::binary::decode) unsafe fn message_by_ctor(
        &self,
        mi: u32,
        r: &mut Reader<'_>,
        depth: u32,
    ) -> WalkResult<ByCtor> {
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
            let mut args = CtorArgs::new();
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
                        return Ok(self.ctor_bail(plan, base, args.read(), at, r));
                    };
                    (fi, Some(tag))
                };
                let f = plan.fields.get_unchecked(fi);
                let bit = 1u64 << fi;
                match (f.card, tag) {
                    (Card::Single, _) => {
                        if args.seen & bit != 0 || args.n == SHAPE_FIELDS {
                            return Ok(self.ctor_bail(plan, base, args.read(), at, r));
                        }
                        if let Some(tag) = tag {
                            let wt = tag.wire_type();
                            if f.plain_wire != wt as u8
                                && (wt != f.kind.wire_type() || (f.kind == Kind::Enum && self.closed_miss(f, r)?))
                            {
                                return Ok(self.ctor_bail(plan, base, args.read(), at, r));
                            }
                        }
                        self.value(f, r, depth, f.number).map_err(|_| self.err.with(|e| e.in_field(mi, fi)))?;
                    }
                    (Card::Repeated, Some(tag)) => {
                        if !self.ctor_repeated(mi, fi, f, r, depth, tag, base, &mut args)? {
                            return Ok(self.ctor_bail(plan, base, args.read(), at, r));
                        }
                        continue;
                    }
                    // A plain field is singular; a by_ctor plan has no map.
                    (Card::Repeated, None) | (Card::Map, _) => core::hint::unreachable_unchecked(),
                }
                args.add(fi);
            }
            let n = args.n;
            args.shape[0] = n as u8;
            let all = plan.required_mask;
            if self.opts.check_required && !plan.required.is_empty() && (all == 0 || args.seen & all != all) {
                self.ctor_table(plan, base, args.read());
                return self.check_required(mi, plan, base, args.seen, false, r.position()).map(|()| ByCtor::Done);
            }
            // A memo hit: the constructor at `base` is the shape's (no type
            // check: see `shape::find_message_ctor`). A miss: the
            // shape's from the cache or compiled, in its place.
            let hit = n != 0 && speculated == args.shape;
            if !hit {
                if n == 0
                    || !crate::binary::decode::ctor::shape::find_message_ctor(
                        L,
                        self.ctors,
                        self.keys,
                        memo,
                        mi,
                        &args.shape,
                        |fi| i64::from(plan.fields.get_unchecked(usize::from(fi)).key_id),
                    )
                {
                    self.ctor_table(plan, base, args.read());
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

    /// One run of repeated field `fi` (its `tag` just read) in a message
    /// built by constructor: its array made or extended as an argument of
    /// the constructor. `false` when the shape cannot cover it (the caller
    /// bails out), nothing read.
    ///
    /// # Safety
    /// As [`Self::message_by_ctor`]'s frame; `base` its constructor slot.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn ctor_repeated(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        depth: u32,
        tag: Tag,
        base: c_int,
        args: &mut CtorArgs,
    ) -> WalkResult<bool> {
        let L = self.L;
        let bit = 1u64 << fi;
        // SAFETY: as `message_by_ctor`'s; `fi` < 64 (a by_ctor plan); an
        // argument's count is written when its array is made.
        unsafe {
            let wt = tag.wire_type();
            let packed = wt == WireType::Len && f.kind.is_packable();
            let closed = f.kind == Kind::Enum && self.plans.enums[f.sub as usize].closed;
            if (packed && closed)
                || (!packed && (wt != f.kind.wire_type() || (closed && self.closed_miss(f, r)?)))
                || (args.seen & bit == 0 && args.n == SHAPE_FIELDS)
            {
                return Ok(false);
            }
            if !packed && args.seen & bit == 0 && tag.raw() < 0x80 && f.kind.is_plain_varint() {
                // A new array of varints: read, then made at
                // its size, without a counting pass.
                let last = self.fresh_varint_run(mi, fi, f, r, depth, tag)?;
                args.add_array(fi, last as u32);
                return Ok(true);
            }
            let run = if packed {
                let run = r.read_len_bytes().map_err(|e| self.err.set(CodecError::wire(e).in_field(mi, fi)))?;
                if run.is_empty() {
                    // No element: the field stays absent.
                    return Ok(true);
                }
                Some(run)
            } else {
                None
            };
            let presize = match run {
                Some(run) => packed_count(f, run),
                None => count_run(r, tag),
            };
            if args.seen & bit == 0
                && !closed
                && (BULK_MIN..=BULK_MAX).contains(&presize)
                && self.opts.strategies.bulk_arrays
                && let Some(last) = self.bulk_run(mi, fi, f, run, r, depth, tag, presize)
            {
                args.add_array(fi, last? as u32);
                return Ok(true);
            }
            let arg = if args.seen & bit != 0 {
                usize::from(args.arg_of.get_unchecked(fi).assume_init())
            } else {
                ffi::lua_createtable(L, presize.min(1 << 26) as c_int, 0);
                if self.seq_mt != 0 {
                    self.set_mt(-1, self.seq_mt);
                }
                args.add_array(fi, 0);
                args.n - 1
            };
            let slot = base + 1 + arg as c_int;
            let last = i64::from(args.count.get_unchecked(arg).assume_init());
            let last = match run {
                Some(run) => self.packed_run_into(mi, fi, f, run, r.position(), slot, last, presize)?,
                None => self.unpacked_run(mi, fi, f, r, depth, tag, slot, last, closed)?,
            };
            args.count.get_unchecked_mut(arg).write(last as u32);
        }
        Ok(true)
    }

    /// [`Self::message_by_ctor`] meets what its shape does not cover, at
    /// the field that starts at `at`: the table from the fields read so
    /// far (`read`, their indices; [`Self::ctor_table`]), and `r` back at
    /// that field, for [`Self::decode_message`] to walk the rest of the body merging
    /// into the table (as protobuf merges a message's fields met again)
    /// once `message_by_ctor`'s frame is gone: run from here, the general
    /// frame would sit on top of it at every level (~2.6 KiB of C
    /// stack a level for input that bails at every level).
    ///
    /// # Safety
    /// As `message_by_ctor`, with the values read at `base + 1 ..`; `at` a
    /// copy of `r` before the field.
    #[cfg(feature = "luajit")]
    #[cold]
    #[inline(never)]
    pub(in crate::binary::decode) unsafe fn ctor_bail<'b>(
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
    /// `base + 1 ..`) through the C API, as [`Self::walk_body`] makes one,
    /// left at `base` (where the speculated constructor was), the top.
    ///
    /// # Safety
    /// As `message_by_ctor`; three free slots.
    #[cfg(feature = "luajit")]
    #[cold]
    pub(in crate::binary::decode) unsafe fn ctor_table(&self, plan: &MessagePlan, base: c_int, read: &[u8]) {
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
}
