//! What the walk does besides storing known fields: unknown fields kept
//! as bytes, proto2 required fields checked, declared defaults applied.

use super::*;

impl<'a> DecodeCtx<'a> {
    /// Skip a field the plan does not take (unknown number, wrong wire type,
    /// closed-enum value it lacks) and keep its bytes.
    ///
    /// # Safety
    /// As [`Self::note_unknown`].
    #[inline]
    pub(in crate::binary::decode) unsafe fn skip_unknown(
        &self,
        r: &mut Reader<'_>,
        tag: Tag,
        depth: u32,
        tag_at: usize,
        run: &mut UnknownRun,
        acc: c_int,
    ) -> WalkResult {
        self.skip(r, tag, depth)?;
        // SAFETY: forwarded (acc is the frame's accumulator slot).
        unsafe { self.note_unknown(run, acc, tag_at, r.position()) };
        Ok(())
    }

    /// Keep `start..end` of the input as unknown-field bytes.
    ///
    /// # Safety
    /// `acc` the frame's accumulator slot, taken ([`take_slots`]), `run` the
    /// frame's run; as [`Self::append_unknown`].
    #[inline]
    pub(in crate::binary::decode) unsafe fn note_unknown(
        &self,
        run: &mut UnknownRun,
        acc: c_int,
        start: usize,
        end: usize,
    ) {
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
    ///
    /// # Safety
    /// As [`Self::append_unknown`].
    #[cold]
    pub(in crate::binary::decode) unsafe fn flush_unknown(&self, run: &mut UnknownRun, acc: c_int) {
        // SAFETY: the run lies inside the input (it was read from it).
        unsafe { self.append_unknown(&self.input[run.start..run.end], run, acc) };
        run.start = run.end;
    }

    /// Append `bytes` to the accumulator at `acc` (see [`UnknownRun`]).
    ///
    /// # Safety
    /// `acc` the frame's accumulator slot, taken and holding what `run.pieces`
    /// says (nothing, a string, a table of pieces); three free slots. May
    /// raise on out-of-memory.
    #[cold]
    pub(in crate::binary::decode) unsafe fn append_unknown(&self, bytes: &[u8], run: &mut UnknownRun, acc: c_int) {
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
    ///
    /// # Safety
    /// At the frame's end: `t` its table, `acc` its accumulator holding at
    /// least one piece; `helpers` the helper table; five free slots. May raise
    /// on out-of-memory.
    #[cold]
    pub(in crate::binary::decode) unsafe fn store_unknown(&self, t: c_int, acc: c_int, merge: bool) {
        let L = self.L;
        // SAFETY: the helper table holds the store (created at luaopen);
        // five free slots (the frame reserves 9).
        unsafe {
            if lua::rawgeti(L, self.helpers, Helper::Unknown.at()) != ffi::LUA_TTABLE {
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
    ///
    /// # Safety
    /// At the frame's end: `t` its table, `plan` message `mi`'s; `keys` the
    /// key table; 8 free slots of the frame's reserve. May raise on out-of-memory.
    #[cold]
    pub(in crate::binary::decode) unsafe fn apply_defaults(&self, mi: u32, plan: &MessagePlan, t: c_int) {
        let L = self.L;
        // SAFETY: the frame reserved 8 slots above its own; `keys` is the
        // schema's key table (slot 0 of which is ours to use as the cache).
        unsafe {
            let base = ffi::lua_gettop(L);
            if lua::rawgeti(L, self.keys, KeySlot::DefaultsCache.at()) != ffi::LUA_TTABLE {
                ffi::lua_pop(L, 1);
                ffi::lua_createtable(L, 0, 0);
                ffi::lua_pushvalue(L, -1);
                lua::rawseti(L, self.keys, KeySlot::DefaultsCache.at());
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
    ///
    /// # Safety
    /// `plan` a message of `self.plans`; four free slots (the table, a key, a
    /// cdata value's two). May raise on out-of-memory.
    #[cold]
    pub(in crate::binary::decode) unsafe fn build_defaults(&self, plan: &MessagePlan) {
        let L = self.L;
        // SAFETY: four free slots (reserved by the frame).
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

    /// Every `required` field of `plan` present in `t`?
    ///
    /// # Safety
    /// `t` the frame's table (read where `seen` does not tell); one free slot.
    /// Raw reads only: raises nothing.
    #[cold]
    pub(in crate::binary::decode) unsafe fn check_required(
        &self,
        mi: u32,
        plan: &MessagePlan,
        t: c_int,
        seen: u64,
        merge: bool,
        at: usize,
    ) -> WalkResult {
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

    /// Closed enum: does the varint ahead name a value the enum lacks?
    /// (Such a value goes to the unknown fields.) Does not move `r`.
    #[inline]
    pub(crate) fn closed_miss(&self, f: &FieldPlan, r: &Reader<'_>) -> WalkResult<bool> {
        let e = &self.plans.enums[f.sub as usize];
        if !e.closed {
            return Ok(false);
        }
        let mut peek = r.clone();
        let v = peek.read_varint().map_err(|e| self.err.set(CodecError::wire(e)))? as i32;
        Ok(e.name_key(v).is_none())
    }

    /// Push the proto3 zero value of a map key/value field that was absent.
    ///
    /// # Safety
    /// As [`Self::walk_body`] (a message's zero value is an empty frame): two
    /// free slots. May raise on out-of-memory.
    pub(in crate::binary::decode) unsafe fn push_default(&self, f: &FieldPlan, depth: u32) -> WalkResult {
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
                    self.decode_message(f.sub, &mut empty, depth + 1, None, false)?;
                }
                _ => lua::push_small_int(L, 0),
            }
        }
        Ok(())
    }

    /// Skip an unknown (or mistyped) field.
    #[inline]
    pub(in crate::binary::decode) fn skip(&self, r: &mut Reader<'_>, tag: Tag, depth: u32) -> WalkResult {
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
}
