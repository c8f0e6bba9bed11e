//! The root fast path: a root message whose fields are all plain, with
//! one-byte tags, read in one pass onto the stack and its table made at
//! the end (by a constructor of its shape on LuaJIT).

use super::*;

impl<'a> DecodeCtx<'a> {
    /// The root fast path: a short input (at most [`SCAN_PRESIZE`] bytes)
    /// made only of plain fields with one-byte tags
    /// ([`MessagePlan::plain_by_number`]), at most [`FAST_FIELDS`] of
    /// them, is read whole before its table is made, so that the table is
    /// sized from the fields read instead of a scan of the body. The table
    /// then gets the same size, the same keys and values in the same
    /// order, through the same Lua calls as [`Self::walk_body`] gives it;
    /// on LuaJIT, `Msg:decode` takes the shape's constructor instead
    /// ([`Self::root_by_ctor`]): the same keys and values, in a table sized
    /// for exactly those keys.
    /// `None`, with nothing pushed: anything else (another tag, a bad
    /// value, an option with work after the fields), for [`Self::decode_message`]
    /// to decode from the start, which also reports any error.
    ///
    /// # Safety
    /// As [`Self::decode_root`].
    #[inline(always)]
    pub(in crate::binary::decode) unsafe fn root_fast(&self, mi: u32) -> Option<WalkResult> {
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
            let key = if self.root_up { HandleUp::FieldKeys.number() + c_int::from(b0 >> 3) } else { e.key_id };
            vals[n].write(Pending { key, fi: e.fi, kind: e.kind, x, end });
            n += 1;
            p = end;
        }
        // LuaJIT: the table from the shape's constructor, when there is one.
        #[cfg(feature = "luajit")]
        if self.root_up && self.opts.constructors && self.opts.strategies.root_ctors {
            // SAFETY: `vals[..n]` were written above.
            let read = unsafe { &*(&vals[..n] as *const [MaybeUninit<Pending>] as *const [Pending]) };
            // SAFETY: forwarded contract.
            if let Some(res) = unsafe { self.root_by_ctor(mi, plan, read, seen_required) } {
                return Some(res);
            }
        }
        // `walk_body`'s pre-size for this body: a lean plan's, or the scan's
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
                    ffi::lua_pushvalue(L, HandleUp::MapMt.index());
                } else {
                    lua::push_rawgeti(L, self.helpers, Helper::MapMt.at());
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
    pub(in crate::binary::decode) unsafe fn push_pending(&self, plan: &MessagePlan, v: &Pending) {
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
    /// ([`crate::binary::decode::ctor::shape`]): the constructor, then the values in wire
    /// order, one `lua_call`. `None`, with nothing pushed, when the fields
    /// read have no shape (a repeat, more than
    /// [`crate::binary::decode::ctor::shape::CTOR_FIELDS`]) or the handle's cache is full,
    /// for the C API path.
    ///
    /// # Safety
    /// As [`Self::root_fast`], with `root_up`; `read` the fields it read.
    #[cfg(feature = "luajit")]
    #[inline(always)]
    pub(in crate::binary::decode) unsafe fn root_by_ctor(
        &self,
        mi: u32,
        plan: &MessagePlan,
        read: &[Pending],
        seen_required: u64,
    ) -> Option<WalkResult> {
        use crate::binary::decode::ctor::shape;
        let last = self.last_shape?;
        let shape = shape::shape_of(read.iter().map(|v| (v.key - HandleUp::FieldKeys.number()) as u8))?;
        // With `serialize`, the constructor that sets the map metatable.
        let shape = if self.opts.serialize { shape | shape::SERIALIZE } else { shape };
        let L = self.L;
        // SAFETY: slots: the constructor and at most `CTOR_FIELDS` (7)
        // values, above the at most 8 the entry points use, within the
        // LUA_MINSTACK (20) a C function starts with (the stack argument
        // of `root_fast`); a miss takes 5 of those first. The upvalues are
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
                ffi::lua_pushvalue(L, HandleUp::LastCtor.index());
            } else {
                let key_of = |num| lua::upvalue(HandleUp::FieldKeys.number() + c_int::from(num));
                if !shape::push_ctor(L, HandleUp::Ctors.index(), shape, key_of, HandleUp::MapMt.index()) {
                    return None;
                }
                ffi::lua_pushvalue(L, -1);
                ffi::lua_replace(L, HandleUp::LastCtor.index());
                last.set(shape);
            }
            for v in read {
                self.push_pending(plan, v);
            }
            ffi::lua_call(L, read.len() as c_int, 1);
            let all = plan.required_mask;
            if self.opts.check_required && !plan.required.is_empty() && (all == 0 || seen_required & all != all) {
                let t = ffi::lua_gettop(L);
                return Some(self.check_required(mi, plan, t, seen_required, false, self.input.len()));
            }
        }
        Some(Ok(()))
    }
}
