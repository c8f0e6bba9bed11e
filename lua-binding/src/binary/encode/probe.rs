//! Probing a message: each declared field looked up in the table by its
//! interned key, then the key count checked (strict keys), oneofs and
//! required fields checked, unknown bytes written back.

use super::*;

impl EncodeCtx<'_> {
    /// Push the key string `key_id` from the key table.
    ///
    /// # Safety
    /// One free slot; `key_id` a key id of `self.plans`.
    #[inline(always)]
    pub(in crate::binary::encode) unsafe fn push_key(&self, key_id: i32) {
        // SAFETY: `keys` is the key table; key ids are in range by construction.
        unsafe {
            lua::push_rawgeti(self.L, self.keys, key_id as i64);
        }
    }

    /// Append `t`'s stored unknown fields, if any (`self.unknown`: the
    /// unknown-field store, when loaded with them kept).
    ///
    /// # Safety
    /// `t` an absolute index of a table; `self.unknown` 0 or the store's
    /// absolute index; two free slots. Raises nothing.
    #[inline(always)]
    pub(in crate::binary::encode) unsafe fn put_unknown(&self, t: c_int, out: &mut EncodeBuffers) {
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
    ///
    /// # Safety
    /// As [`Self::message`]: `t` an absolute index of a table, the stack room
    /// reserved; with `FETCHED`, `vals`, `codes` and `nested` from a fetch
    /// whose values are still in their slots.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::binary::encode) unsafe fn probe_fields<const FETCHED: bool>(
        &self,
        mi: u32,
        plan: &MessagePlan,
        t: c_int,
        vals: c_int,
        codes: u64,
        nested: bool,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> WalkResult<(usize, bool)> {
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

    /// The error naming every absent `required` field of `t`.
    ///
    /// # Safety
    /// `t` a table; four free slots (a value, and 3 for the cdata
    /// classifier). Raises nothing.
    #[cold]
    pub(in crate::binary::encode) unsafe fn missing_required(
        &self,
        mi: u32,
        plan: &MessagePlan,
        t: c_int,
    ) -> CodecError {
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
    ///
    /// # Safety
    /// `t` a table; `fi` a field of `plan` in a oneof; one free slot. Raises
    /// nothing.
    pub(in crate::binary::encode) unsafe fn check_oneof(
        &self,
        mi: u32,
        plan: &MessagePlan,
        t: c_int,
        fi: usize,
        set: &mut [u16; TRACKED_ONEOFS],
        any_order: bool,
    ) -> WalkResult {
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
    ///
    /// # Safety
    /// `t` an absolute index of a table; `helpers` the helper table; two free
    /// slots. Raises nothing (the helper runs under `lua_pcall`).
    #[cold]
    pub(in crate::binary::encode) unsafe fn count_keys_lua(&self, t: c_int) -> Option<usize> {
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
    ///
    /// # Safety
    /// `arr` an absolute index of a table; `i <= end`, `end - i < keys.len()`;
    /// `max(4, end - i + 1)` free slots. Raises nothing (`lua_pcall`).
    #[cold]
    pub(in crate::binary::encode) unsafe fn count_batch_keys(
        &self,
        arr: c_int,
        i: usize,
        end: usize,
        keys: &mut [usize],
    ) {
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
    ///
    /// # Safety
    /// `t` an absolute index of a table; two free slots. Raw iteration only:
    /// raises nothing.
    pub(in crate::binary::encode) unsafe fn check_keys(
        &self,
        plan: &MessagePlan,
        t: c_int,
        present: usize,
    ) -> WalkResult {
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
                if !plan.fields.iter().any(|f| self.plans.key_of(f).as_bytes() == k) {
                    let s = ShortStr::new(k);
                    ffi::lua_pop(L, 1);
                    return Err(self.err.set(CodecError::new(ErrorKind::UnknownKey(s), None)));
                }
            }
        }
        Ok(())
    }
}
