//! Runs of one repeated field: packed runs and runs of the same tag, read
//! by per-kind loops into the field's array.

use super::*;

/// `rawseti(slot, n)`: the value on top into the array at `slot`; with
/// `slot` 0 (a long array, `crate::binary::decode::ctor::bulk`) the value stays on the
/// stack as an argument of the array's constructor.
///
/// # Safety
/// `slot` 0, or it holds the array and a value is on top.
#[inline(always)]
pub(in crate::binary::decode) unsafe fn store(L: *mut lua_State, slot: c_int, n: i64) {
    if slot != 0 {
        // SAFETY: caller's contract.
        unsafe { lua::rawseti(L, slot, n) }
    }
}

/// [`varint_run`] with a sink that pushes each value (`push`) and stores
/// it after element `*n` of the array at `slot`, counting in `n`.
///
/// # Safety
/// As [`store`] for each value; `push` pushes exactly one value (one free
/// slot, two for cdata).
#[inline(always)]
pub(in crate::binary::decode) unsafe fn store_run<'b, const TAG: usize>(
    L: *mut lua_State,
    b: &'b [u8],
    tag: [u8; 2],
    slot: c_int,
    n: &mut i64,
    push: impl Fn(u64),
) -> &'b [u8] {
    varint_run::<TAG>(b, tag, |v| {
        *n += 1;
        push(v);
        // SAFETY: caller's contract; rawseti pops the value pushed.
        unsafe { store(L, slot, *n) };
        true
    })
}

/// The common case of an unpacked run of strings, for
/// [`DecodeCtx::same_tag_run`]: while the next bytes are the run's one-byte
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
pub(in crate::binary::decode) unsafe fn same_tag_strings<const CHECK: bool>(
    L: *mut lua_State,
    r: &mut Reader<'_>,
    slot: c_int,
    mut n: i64,
    next: u8,
) -> i64 {
    let mut rest = r.rest();
    // The tag and the length matched in one pattern, not through
    // `eat_tag`: that checks the length of the input twice, measured +0.1 %
    // on Person 10KB decode (PERF_LOG, #27 scanning layer).
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

/// [`DecodeCtx::same_tag_run`]'s loop: while the next byte of `r` is `next`,
/// step over it, count the element in `n`, `push` its value and store it
/// at index `n` of the array at `slot`. On an error `n` is the index of
/// the element that failed.
///
/// # Safety
/// `slot` holds the array; `push` pushes exactly one value when it
/// returns `Ok` (two free slots for cdata).
#[inline(always)]
pub(in crate::binary::decode) unsafe fn same_tag_each<'a>(
    L: *mut lua_State,
    r: &mut Reader<'a>,
    slot: c_int,
    n: &mut i64,
    next: u8,
    mut push: impl FnMut(&mut Reader<'a>) -> WalkResult,
) -> WalkResult {
    while eat_tag::<1>(r.rest(), [next, 0]).is_some() {
        let _ = r.advance(1);
        *n += 1;
        push(r)?;
        // SAFETY: caller's contract; rawseti pops the value pushed.
        unsafe { store(L, slot, *n) };
    }
    Ok(())
}

impl<'a> DecodeCtx<'a> {
    /// A packed run of scalars.
    ///
    /// # Safety
    /// As [`Self::walk_body`]'s frame, between fields: `t` its table, `cs` its
    /// containers; four free slots of its reserve (a new array, its key, a
    /// cdata value's two). May raise on out-of-memory.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::binary::decode) unsafe fn packed_run(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        t: c_int,
        cs: &mut Containers,
    ) -> WalkResult {
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
    pub(in crate::binary::decode) unsafe fn packed_fill(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        sub: &mut Reader<'_>,
        slot: c_int,
        mut n: i64,
        presize: usize,
    ) -> WalkResult<i64> {
        let L = self.L;
        // SAFETY: caller's contract.
        unsafe {
            // Runs of 1–3 values stay on the element loop (icount: the
            // run loop's call costs more than it saves there, +0.3 % on
            // BenchPayload mid with its 3-value `deltas`).
            if f.kind.wire_type() == WireType::Varint {
                if presize >= PACKED_LOOP_MIN {
                    n = self.varints_into::<0>(f, sub, slot, n, 0);
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

    /// Push the varints of a run into the array at `slot` (its last index
    /// is `n`) and return the new last index: a packed run (`TAG` 0, the
    /// bytes of `r`) or the rest of an unpacked run (`TAG` 1: while the
    /// next byte is the run's one-byte tag `next`), read by [`varint_run`],
    /// each value pushed as soon as it is read. Stops short of a bad
    /// varint, leaving `r` at that element for the caller's element loop,
    /// which reports it. Out of line, so that the recursive message frame
    /// does not grow and this loop gets registers of its own.
    ///
    /// # Safety
    /// `slot` holds the array; one free stack slot (two for cdata).
    #[inline(never)]
    pub(in crate::binary::decode) unsafe fn varints_into<const TAG: usize>(
        &self,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        slot: c_int,
        mut n: i64,
        next: u8,
    ) -> i64 {
        let L = self.L;
        let n = &mut n;
        let b = r.rest();
        let tag = [next, 0];
        // The kind's conversion is chosen once per run, not per element:
        // each arm is its own loop.
        // SAFETY: caller's contract (one free slot per push, popped by
        // rawseti).
        let rest = unsafe {
            match f.kind {
                Kind::Int32 => store_run::<TAG>(L, b, tag, slot, n, |v| self.push_varint_as(Kind::Int32, f, v)),
                Kind::UInt32 => store_run::<TAG>(L, b, tag, slot, n, |v| self.push_varint_as(Kind::UInt32, f, v)),
                Kind::SInt32 => store_run::<TAG>(L, b, tag, slot, n, |v| self.push_varint_as(Kind::SInt32, f, v)),
                Kind::Bool => store_run::<TAG>(L, b, tag, slot, n, |v| self.push_varint_as(Kind::Bool, f, v)),
                _ => store_run::<TAG>(L, b, tag, slot, n, |v| self.push_varint(f, v)),
            }
        };
        let _ = r.advance(b.len() - rest.len());
        *n
    }

    /// Push the `W`-byte values of a packed run into the array at `slot`
    /// (its last index is `n`) and return the new last index; a partial
    /// last value is left in `sub` for the caller's element loop to
    /// report. Out of line, like [`Self::varints_into`].
    ///
    /// # Safety
    /// `slot` holds the array; `push` pushes exactly one value; one free
    /// stack slot (two for cdata).
    #[inline(never)]
    pub(in crate::binary::decode) unsafe fn packed_fixed<const W: usize>(
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

    /// A packed run of a closed enum: values the enum lacks go to the
    /// unknown fields, each as its own varint field (as protobuf C++ does).
    ///
    /// # Safety
    /// As [`Self::walk_body`]'s frame, its slots taken: `t` its table, `cs` its
    /// containers, `acc` its accumulator; three free slots. May raise on
    /// out-of-memory.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::binary::decode) unsafe fn packed_closed_enum(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        t: c_int,
        cs: &mut Containers,
        run: &mut UnknownRun,
        acc: c_int,
    ) -> WalkResult {
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

    /// The rest of an unpacked run of the scalar, string or bytes field `f`
    /// whose element `n` is stored in the array at `slot`: while the next
    /// byte is the run's one-byte tag `next`, decode and store one more.
    /// Returns the index of the last element stored. Out of line, so that
    /// this loop gets registers of its own (inside `walk_body` it paid
    /// spills for that function's state); no message is decoded here, so
    /// it is no frame of the recursion. Strings and varints first go
    /// through a loop on the bytes ([`same_tag_strings`],
    /// [`Self::varints_into`]): through `r`, whose two words live in the
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
    pub(in crate::binary::decode) unsafe fn same_tag_run(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        slot: c_int,
        mut n: i64,
        next: u8,
    ) -> WalkResult<i64> {
        let L = self.L;
        if matches!(f.kind, Kind::String | Kind::Bytes) {
            // SAFETY: caller's contract.
            unsafe {
                n = if f.utf8 && self.opts.utf8 {
                    same_tag_strings::<true>(L, r, slot, n, next)
                } else {
                    same_tag_strings::<false>(L, r, slot, n, next)
                }
            };
        } else if f.kind.wire_type() == WireType::Varint {
            // SAFETY: caller's contract (a closed enum never gets here:
            // its run checks every value, `walk_body`'s `next_len` 0).
            unsafe {
                n = self.varints_into::<1>(f, r, slot, n, next);
            }
        }
        // SAFETY: caller's contract; each `push` pushes one value, which
        // `same_tag_each`'s rawseti pops.
        let res = unsafe {
            if matches!(f.kind, Kind::String | Kind::Bytes) {
                same_tag_each(L, r, slot, &mut n, next, |r| self.string(f, r))
            } else {
                same_tag_each(L, r, slot, &mut n, next, |r| self.scalar(f, r))
            }
        };
        res.map_err(|_| self.err.with(|e| e.in_element(mi, fi, n as u64)))?;
        Ok(n)
    }
}
