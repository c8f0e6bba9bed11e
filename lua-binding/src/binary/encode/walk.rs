//! Walking a message: its table's keys visited with `lua_next` and each
//! looked up in the key index, for tables that set few of their declared
//! fields.

use super::*;

impl EncodeCtx<'_> {
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
    ///
    /// # Safety
    /// As [`Self::message`]: `t` an absolute index of a table, unmodified while
    /// `lua_next` walks it, the stack room reserved. Raises nothing.
    #[inline(never)]
    pub(in crate::binary::encode) unsafe fn walk_fields(
        &self,
        mi: u32,
        plan: &MessagePlan,
        t: c_int,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> WalkResult<(usize, bool)> {
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
    pub(in crate::binary::encode) fn walk_spill(
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
    ///
    /// # Safety
    /// The field's value, of type `ty`, on top of the stack; as
    /// [`Self::message`]'s fields.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::binary::encode) unsafe fn walk_value(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        card: Card,
        ty: c_int,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> WalkResult {
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
}
