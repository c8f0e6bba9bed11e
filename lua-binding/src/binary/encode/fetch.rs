//! Fetching (LuaJIT): a message's key count and field values read by one
//! call of a generated Lua function, its fetcher, instead of one C API
//! read per field.

use super::*;

/// Lua source of encode's LuaJIT helpers: the key counters, the fetcher
/// maker and the `next` probe.
#[cfg(feature = "luajit")]
const FETCH_SOURCE: &str = include_str!("fetch.lua");

/// Put encode's LuaJIT helpers in the helper table at `helpers`
/// ([`Helper::CountKeys`], [`Helper::CountBatchKeys`],
/// [`Helper::MakeFetcher`], [`Helper::NextCompiles`]). Where the chunk
/// cannot run, the slots stay nil and encode takes its C API paths. Other
/// hosts have no fetchers: nothing is done.
///
/// # Safety
/// `L` valid with 5 free slots; `helpers` an absolute index of a table.
/// May raise on out-of-memory.
pub unsafe fn install_helpers(L: *mut lua_State, helpers: c_int) {
    #[cfg(feature = "luajit")]
    // SAFETY: loading and running our own constant chunk; its four results
    // are stored and popped.
    unsafe {
        let name = c"=protolua.fetch";
        if ffi::luaL_loadbuffer(L, FETCH_SOURCE.as_ptr().cast(), FETCH_SOURCE.len(), name.as_ptr()) == 0
            && ffi::lua_pcall(L, 0, 4, 0) == 0
        {
            for slot in [Helper::NextCompiles, Helper::MakeFetcher, Helper::CountBatchKeys, Helper::CountKeys] {
                lua::rawseti(L, helpers, slot.at());
            }
        } else {
            ffi::lua_pop(L, 1);
        }
    }
    #[cfg(not(feature = "luajit"))]
    let _ = (L, helpers);
}

/// Split a fetch's count slot (see [`FETCH_COUNT_BITS`]) into the key
/// count and the values' type codes.
#[inline(always)]
pub(in crate::binary::encode) fn unpack_count(slot: f64) -> (usize, u64) {
    let x = slot as u64;
    ((x & ((1 << FETCH_COUNT_BITS) - 1)) as usize, x >> FETCH_COUNT_BITS)
}

impl EncodeCtx<'_> {
    /// Strict keys, LuaJIT: call message `mi`'s fetcher (made on first use
    /// by the helper's `make_fetcher`, kept in the key table after the key
    /// strings) on `t`, under `lua_pcall`: it leaves `t`'s key count and
    /// then the raw value of each declared field, in field order, on the
    /// stack. Returns the slot of the first value (the count slot,
    /// [`FETCH_COUNT_BITS`], is just below it); 0 when there is no
    /// fetcher, the stack cannot grow or the call failed (a hook's error,
    /// out of memory), the stack then as it was.
    ///
    /// # Safety
    /// `t` an absolute index of a table; `keys`, `helpers` the schema's
    /// tables; `plan` message `mi`'s. Reserves its own slots; raises nothing.
    /// On success the caller pops the results (`lua_settop(result - 2)`).
    #[inline(never)]
    pub(in crate::binary::encode) unsafe fn fetch_fields(&self, mi: u32, plan: &MessagePlan, t: c_int) -> c_int {
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
    ///
    /// # Safety
    /// `slot` a valid stack index; one free slot (the fetch's reserve).
    #[cold]
    #[inline(never)]
    pub(in crate::binary::encode) unsafe fn drop_codes(&self, slot: c_int) {
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
    pub(in crate::binary::encode) fn fetcher_slot(&self, mi: u32, batch: bool) -> i64 {
        let per = if batch { self.plans.messages.len() } else { 0 };
        (self.plans.keys.len() + 1 + per + mi as usize) as i64
    }

    /// Make message `mi`'s fetchers and store them in the key table
    /// (`false` if they cannot be made), by the helper's `make_fetcher`
    /// under `lua_pcall`; on an error nothing is stored (tried again next
    /// time). The batch fetcher only for messages it may serve.
    ///
    /// # Safety
    /// `keys`, `helpers` the schema's tables; `plan` message `mi`'s. Reserves
    /// its own slots and leaves the stack as it was; raises nothing.
    #[cold]
    #[inline(never)]
    pub(in crate::binary::encode) unsafe fn make_fetcher(&self, mi: u32, plan: &MessagePlan) {
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

    /// The elements `arr[1..=n]` of a repeated field `f` of message type
    /// `f.sub`, each with its tag: what `each_element` and `message` do,
    /// with each batch of up to [`MESSAGE_BATCH`] tables fetched by one
    /// Lua call (the batch fetcher: per table the table, its key count and
    /// its fields' values). A batch the fetcher fails on (an element that
    /// is not a table, a hook's error) takes the per-element path, which
    /// words the errors.
    ///
    /// # Safety
    /// As [`Self::message`]'s fields: `arr` an absolute index of a table,
    /// `f` a repeated message field of message `mi`. Reserves each batch's
    /// slots; raises nothing.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::binary::encode) unsafe fn fetched_elements(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        arr: c_int,
        n: usize,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> WalkResult {
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
    ///
    /// # Safety
    /// `arr` an absolute index of a table; one free slot (the nested
    /// [`Self::message`] reserves its own). Raises nothing.
    #[cold]
    #[inline(never)]
    pub(in crate::binary::encode) unsafe fn unfetched_element(
        &self,
        f: &FieldPlan,
        arr: c_int,
        j: usize,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> WalkResult {
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
}
