//! Long arrays built in bulk: the run loops that push an array's values
//! for one call of the pack helper, on the parked thread (`super::bulk`).

use crate::binary::decode::*;

/// `push` each of `values` and store it at index 1, 2, … of the array at
/// `slot` (`DecodeCtx::fresh_varint_run`; [`store`]).
///
/// # Safety
/// `values` initialised; `slot` holds the array; `push` pushes one value
/// (one free slot, two for cdata), which `rawseti` pops.
#[cfg(feature = "luajit")]
#[inline(always)]
pub(in crate::binary::decode) unsafe fn store_values(
    L: *mut lua_State,
    slot: c_int,
    values: &[MaybeUninit<u64>],
    push: impl Fn(u64),
) {
    for (i, v) in values.iter().enumerate() {
        // SAFETY: caller's contract.
        unsafe {
            push(v.assume_init());
            store(L, slot, i as i64 + 1);
        }
    }
}

impl<'a> DecodeCtx<'a> {
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
    pub(in crate::binary::decode) unsafe fn bulk_run(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        run: Option<&[u8]>,
        r: &mut Reader<'_>,
        depth: u32,
        tag: Tag,
        presize: usize,
    ) -> Option<WalkResult<i64>> {
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
    /// given, returning its last index (`crate::binary::decode::ctor::bulk`). An array of
    /// scalars or strings is filled on the parked thread when it is free,
    /// and moved here; any other on this stack. `None` (nothing pushed, the
    /// input not read) when this stack cannot take it.
    ///
    /// # Safety
    /// As `message_by_ctor`; `fill` as above.
    #[cfg(feature = "luajit")]
    pub(in crate::binary::decode) unsafe fn long_array(
        &self,
        f: &FieldPlan,
        n: usize,
        fill: &mut dyn FnMut(&DecodeCtx<'a>) -> WalkResult<i64>,
    ) -> Option<WalkResult<i64>> {
        let L = self.L;
        // SAFETY: caller's contract; on the parked thread, `fill` runs
        // inside `run_parked`'s `lua_pcall` with the helper and key tables
        // at the indices `on_thread` gives.
        unsafe {
            if !matches!(f.kind, Kind::Message | Kind::Group)
                && let Some(T) = bulk::claim(L, self.helpers, &self.module.bulk_busy)
            {
                let mut last = 0;
                let mut on_parked = |T: *mut lua_State| -> bool {
                    let c = self.on_thread(T);
                    if ffi::lua_checkstack(T, n as c_int + 8) == 0 {
                        self.err.set(CodecError::new(ErrorKind::Internal, None));
                        return false;
                    }
                    ffi::lua_pushnil(T);
                    ffi::lua_pushvalue(T, bulk::FILL_PACK);
                    match fill(&c) {
                        Ok(n) => {
                            bulk::finish_here(T, n);
                            last = n;
                            true
                        }
                        Err(_) => {
                            self.err.put(c.err.take());
                            false
                        }
                    }
                };
                let ok = bulk::run_parked(L, T, self.helpers, self.keys, &self.module.bulk_busy, &mut on_parked);
                return Some(if ok { Ok(last) } else { Err(Recorded) });
            }
            if !bulk::begin_here(L, self.helpers, n) {
                return None;
            }
            let last = fill(self);
            if let Ok(last) = last {
                bulk::finish_here(L, last);
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
    pub(in crate::binary::decode) fn on_thread(&self, T: *mut lua_State) -> DecodeCtx<'a> {
        DecodeCtx {
            L: T,
            plans: self.plans,
            keys: bulk::FILL_KEYS,
            helpers: bulk::FILL_HELPERS,
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
    pub(in crate::binary::decode) unsafe fn packed_run_into(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        run: &[u8],
        end: usize,
        slot: c_int,
        n: i64,
        presize: usize,
    ) -> WalkResult<i64> {
        let mut sub = Reader::with_offset(run, end - run.len());
        // SAFETY: forwarded.
        unsafe { self.packed_fill(mi, fi, f, &mut sub, slot, n, presize) }
    }

    /// A run of the unpacked repeated field `f` into the array at `slot`
    /// whose last index is `n`, its first tag (`tag`) read: the element
    /// after it, and more while the next tag is the same (as
    /// [`Self::walk_body`]'s run). Returns the new last index. Out of line,
    /// like [`Self::packed_run_into`]: with both inline the recursive
    /// frame takes 1,480 bytes (x86_64), 808 without (PERF_LOG).
    ///
    /// # Safety
    /// `slot` holds the array; the frame's free slots.
    #[cfg(feature = "luajit")]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::binary::decode) unsafe fn unpacked_run(
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
    ) -> WalkResult<i64> {
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
                    n = self.same_tag_run(mi, fi, f, r, slot, n, next as u8)?;
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
    pub(in crate::binary::decode) unsafe fn fresh_varint_run(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        depth: u32,
        tag: Tag,
    ) -> WalkResult<i64> {
        const RUN_BUFFER: usize = 64;
        let L = self.L;
        let next = tag.raw() as u8;
        // Not zeroed (32 stores on aarch64): `buf[..k]` is written before read.
        let mut buf = [MaybeUninit::<u64>::uninit(); RUN_BUFFER];
        let mut k = 0;
        let b = r.rest();
        // The first value (its tag read), then the run's tagged ones by
        // the scanning layer's `varint_run` until the buffer is full.
        // `more`: `rest` is at a value whose tag was read but which is not
        // in `buf` (a bad varint, or past the buffer).
        let (rest, more) = match slice_varint(b) {
            None => (b, true),
            Some((v, tail)) => {
                buf[0].write(v);
                k = 1;
                let rest = varint_run::<1>(tail, [next, 0], |v| {
                    // SAFETY: `k < RUN_BUFFER`: the run stops when it is not.
                    unsafe { buf.get_unchecked_mut(k).write(v) };
                    k += 1;
                    k < RUN_BUFFER
                });
                match eat_tag::<1>(rest, [next, 0]) {
                    Some(after) => (after, true),
                    None => (rest, false),
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
        // `varints_into`): matched per value, it cost ~6 a value. The
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
}
