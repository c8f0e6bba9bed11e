//! A frame's repeated and map containers and its oneofs: which table the
//! next element goes into, made or fetched as fields switch.

use super::*;

impl Containers {
    /// Whether `f`'s container does not exist yet (known only for tracked
    /// slots outside merge mode; otherwise `false`).
    #[inline(always)]
    pub(in crate::binary::decode) fn is_new(&self, f: &FieldPlan) -> bool {
        !self.merge && self.counts.get(f.slot as usize).is_some_and(|&n| n == 0)
    }
}

/// Take the frame's container and accumulator slots (`acc - 1`, `acc`) if
/// not yet taken. The stack top is the frame's table then (between fields).
///
/// # Safety
/// `acc` is the frame's table index + 2; the frame reserved the slots.
#[inline(always)]
pub(in crate::binary::decode) unsafe fn take_slots(L: *mut lua_State, slots: &mut bool, acc: c_int) {
    if !*slots {
        *slots = true;
        // SAFETY: within the frame's lua_checkstack reserve; fills with nil.
        unsafe { ffi::lua_settop(L, acc) };
    }
}

impl<'a> DecodeCtx<'a> {
    /// In merge mode, count the elements of the arrays `t` already has (and
    /// mark its maps), so appending continues after them.
    ///
    /// # Safety
    /// As [`Self::walk_body`]'s frame, merging: `t` its table; one free slot of
    /// its reserve. Raw reads only: raises nothing.
    #[cold]
    pub(in crate::binary::decode) unsafe fn count_existing(&self, plan: &MessagePlan, t: c_int, cs: &mut Containers) {
        let L = self.L;
        for f in plan.fields.iter().filter(|f| f.card != Card::Single && (f.slot as usize) < TRACKED_SLOTS) {
            // SAFETY: one free slot (frame reserve); `t` is a table.
            unsafe {
                self.push_key(f.key_id);
                if lua::rawget(L, t) == ffi::LUA_TTABLE {
                    cs.counts[f.slot as usize] = if f.card == Card::Repeated { lua::rawlen(L, -1) as u32 } else { 1 };
                }
                ffi::lua_pop(L, 1);
            }
        }
    }

    /// Clear the previously set member of `fi`'s oneof (last one wins).
    ///
    /// # Safety
    /// As [`Self::walk_body`]'s frame: `t` its table, `plan` its message, `fi` a
    /// oneof member; two free slots. May raise on out-of-memory.
    #[inline]
    pub(in crate::binary::decode) unsafe fn switch_oneof(
        &self,
        plan: &MessagePlan,
        t: c_int,
        fi: usize,
        cur: &mut [u16; TRACKED_ONEOFS],
    ) {
        let o = plan.fields[fi].oneof as usize;
        let prev = if o < TRACKED_ONEOFS { cur[o] } else { u16::MAX };
        if prev == fi as u16 + 1 {
            return;
        }
        // SAFETY: `t` is a table; two free slots reserved.
        unsafe {
            if prev == u16::MAX {
                // Unknown (merge mode or untracked): clear every other member.
                for &m in plan.oneofs[o].members.iter().filter(|&&m| m as usize != fi) {
                    self.push_key(plan.fields[m as usize].key_id);
                    ffi::lua_pushnil(self.L);
                    ffi::lua_rawset(self.L, t);
                }
            } else if prev != 0 {
                self.push_key(plan.fields[prev as usize - 1].key_id);
                ffi::lua_pushnil(self.L);
                ffi::lua_rawset(self.L, t);
            }
        }
        if o < TRACKED_ONEOFS {
            cur[o] = fi as u16 + 1;
        }
    }

    /// Make field `fi`'s array/map the current container (`cs.slot`),
    /// creating it (and storing it in `t`) on first use.
    ///
    /// # Safety
    /// As [`Self::walk_body`]'s frame: `t` its table, `cs` its containers, whose
    /// slots are taken unless the stack top is `t`; three free slots (a new
    /// container, its key and metatable). May raise on out-of-memory.
    #[inline(always)]
    pub(in crate::binary::decode) unsafe fn ensure_container(
        &self,
        fi: usize,
        f: &FieldPlan,
        t: c_int,
        cs: &mut Containers,
        presize: usize,
    ) {
        if cs.field != fi {
            // SAFETY: forwarded.
            unsafe { self.switch_container(fi, f, t, cs, presize) };
        }
    }

    /// [`Self::ensure_container`]'s switch, out of line: fetch field `fi`'s
    /// container from `t` into `cs.slot`, or create it there.
    ///
    /// # Safety
    /// As [`Self::ensure_container`].
    #[inline(never)]
    pub(in crate::binary::decode) unsafe fn switch_container(
        &self,
        fi: usize,
        f: &FieldPlan,
        t: c_int,
        cs: &mut Containers,
        presize: usize,
    ) {
        let L = self.L;
        let s = f.slot as usize;
        cs.field = fi;
        // SAFETY: `cs.slot` is the frame's container slot, two free slots
        // above the frame (reserve); `t` is a table; raw access only.
        unsafe {
            let fresh = s < TRACKED_SLOTS && cs.counts[s] == 0 && !cs.merge;
            if !fresh {
                take_slots(L, &mut cs.taken, cs.slot + 1);
                self.push_key(f.key_id);
                if lua::rawget(L, t) == ffi::LUA_TTABLE {
                    ffi::lua_replace(L, cs.slot);
                    return;
                }
                ffi::lua_pop(L, 1);
            }
            debug_assert!(cs.taken || ffi::lua_gettop(L) == cs.slot - 1, "untaken slots: the top is the frame's table");
            let (narr, nrec) = if f.card == Card::Map { (0, presize) } else { (presize, 0) };
            ffi::lua_createtable(L, narr.min(1 << 26) as c_int, nrec as c_int);
            if self.seq_mt != 0 {
                self.set_mt(-1, if f.card == Card::Map { self.map_mt } else { self.seq_mt });
            }
            if cs.taken {
                ffi::lua_replace(L, cs.slot);
            }
            self.push_key(f.key_id);
            ffi::lua_pushvalue(L, cs.slot);
            ffi::lua_rawset(L, t);
            if !cs.taken {
                // The frame's first container: the stack top was the
                // frame's table, so the new one landed in the container
                // slot itself; the accumulator slot follows. (Saves the
                // `lua_settop` that takes the slots and a `lua_replace`.)
                cs.taken = true;
                ffi::lua_pushnil(L);
            }
            if f.card == Card::Map && s < TRACKED_SLOTS {
                cs.counts[s] = 1;
            }
        }
    }

    /// Push `f`'s key and a new array for it (pre-sized for `presize`
    /// elements) on top of the frame, for a field met for the first time
    /// in a new table (`Containers::is_new`), and return the array's stack
    /// index. The caller fills it and stores it with one `lua_rawset(t)`,
    /// which pops both. The array thus never takes the container slot: no
    /// `lua_pushvalue` to store it, no slot to take or clear, and the
    /// current container stays current. A later occurrence of the field
    /// finds the array in `t` (its count is no longer 0).
    ///
    /// # Safety
    /// Between fields (the stack top is the frame's table, or its
    /// accumulator slot once taken); two free slots, from the frame's
    /// reserve.
    #[inline(always)]
    pub(in crate::binary::decode) unsafe fn fresh_array(
        &self,
        f: &FieldPlan,
        t: c_int,
        cs: &Containers,
        presize: usize,
    ) -> c_int {
        let L = self.L;
        // SAFETY: the caller's contract.
        unsafe {
            debug_assert_eq!(ffi::lua_gettop(L), if cs.taken { t + 2 } else { t }, "not between fields");
            self.push_key(f.key_id);
            ffi::lua_createtable(L, presize.min(1 << 26) as c_int, 0);
            if self.seq_mt != 0 {
                self.set_mt(-1, self.seq_mt);
            }
        }
        if cs.taken { t + 4 } else { t + 2 }
    }

    /// Make `fi`'s array current and return the Lua index its next
    /// element goes to.
    ///
    /// # Safety
    /// As [`Self::ensure_container`].
    #[inline(always)]
    pub(in crate::binary::decode) unsafe fn next_index(
        &self,
        fi: usize,
        f: &FieldPlan,
        t: c_int,
        cs: &mut Containers,
        presize: usize,
    ) -> i64 {
        // SAFETY: forwarded.
        unsafe { self.ensure_container(fi, f, t, cs, presize) };
        let s = f.slot as usize;
        if s < TRACKED_SLOTS {
            cs.counts[s] += 1;
            cs.counts[s] as i64
        } else {
            // SAFETY: the container slot holds the array once ensured.
            unsafe { lua::rawlen(self.L, cs.slot) as i64 + 1 }
        }
    }

    /// One map entry into field `fi`'s map. `Ok(false)`: the entry
    /// was not stored because its value is a closed-enum value the enum
    /// lacks (the caller keeps it as an unknown field).
    ///
    /// # Safety
    /// As [`Self::walk_body`]'s frame, its slots taken: `t` its table, `cs` its
    /// containers; four free slots (the key, the value, a sub-message frame's
    /// two). May raise on out-of-memory.
    pub(in crate::binary::decode) unsafe fn map_entry(
        &self,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        depth: u32,
        t: c_int,
        cs: &mut Containers,
    ) -> WalkResult<bool> {
        let L = self.L;
        let entry = &self.plans.messages[f.sub as usize];
        let (kf, vf) = (&entry.fields[0], &entry.fields[1]);
        let mut er = r.read_len_reader().map_err(|e| self.err.set(CodecError::wire(e)))?;
        if depth + 1 > self.opts.max_depth {
            return Err(self.err.set(CodecError::new(ErrorKind::DepthLimit(self.opts.max_depth), Some(er.position()))));
        }
        // SAFETY: two slots (key, value) plus temporaries are within the
        // reserve of the enclosing message frame (checkstack + 8).
        unsafe {
            let base = ffi::lua_gettop(L);
            ffi::lua_pushnil(L);
            ffi::lua_pushnil(L);
            let mut unknown_value = false;
            while !er.is_empty() {
                let tag = er.read_tag().map_err(|e| self.err.set(CodecError::wire(e)))?;
                let (which, fld) = match tag.field_number() {
                    1 => (base + 1, kf),
                    2 => (base + 2, vf),
                    _ => {
                        self.skip(&mut er, tag, depth + 1)?;
                        continue;
                    }
                };
                if tag.wire_type() != fld.kind.wire_type() {
                    self.skip(&mut er, tag, depth + 1)?;
                    continue;
                }
                if fld.kind == Kind::Enum && which == base + 2 && self.closed_miss(fld, &er)? {
                    // Last value wins: an unknown one after a known one too.
                    unknown_value = true;
                    ffi::lua_pushnil(L);
                    ffi::lua_replace(L, base + 2);
                    self.skip(&mut er, tag, depth + 1)?;
                    continue;
                }
                if fld.kind == Kind::Message && ffi::lua_type(L, which) == ffi::LUA_TTABLE {
                    ffi::lua_pushvalue(L, which);
                    self.sub_message(fld, &mut er, depth + 1, 2, true)?;
                    ffi::lua_pop(L, 1);
                    continue;
                }
                self.value(fld, &mut er, depth + 1, tag.field_number())?;
                ffi::lua_replace(L, which);
                if which == base + 2 {
                    unknown_value = false;
                }
            }
            if ffi::lua_type(L, base + 1) == ffi::LUA_TNIL {
                self.push_default(kf, depth + 1)?;
                ffi::lua_replace(L, base + 1);
            }
            if unknown_value && ffi::lua_type(L, base + 2) == ffi::LUA_TNIL {
                ffi::lua_settop(L, base);
                return Ok(false);
            }
            if ffi::lua_type(L, base + 2) == ffi::LUA_TNIL {
                self.push_default(vf, depth + 1)?;
                ffi::lua_replace(L, base + 2);
            }
            // Only now: a map whose every entry went to the unknown fields
            // stays absent, as protobuf has it.
            self.ensure_container(fi, f, t, cs, 0);
            ffi::lua_rawset(L, cs.slot);
        }
        Ok(true)
    }

    /// Add the path step of the failed entry of map field `fi` of message
    /// `mi` (its tag at `tag_at`) to the recorded error, naming its key.
    #[cold]
    #[inline(never)]
    pub(in crate::binary::decode) fn entry_failed(&self, mi: u32, fi: usize, tag_at: usize) -> Recorded {
        let f = &self.plans.messages[mi as usize].fields[fi];
        self.err.name_entry(self.wire_entry_key(f, tag_at, self.err.offset()));
        self.err.with(|e| e.in_map(mi, fi))
    }

    /// The key of the entry of map field `f` whose tag is at `tag_at`, for
    /// an error at byte `err_at` inside it: read again from the input (the
    /// Lua stack no longer says which key the walk had reached). The key is
    /// the last one before the failure; one failing itself (a string key
    /// that is not UTF-8) is named by its bytes. `Unknown` when no key
    /// came before the failure (value first on the wire, or none at all)
    /// or when the entry cannot be read again.
    fn wire_entry_key(&self, f: &FieldPlan, tag_at: usize, err_at: Option<usize>) -> EntryKey<'a> {
        let kf = &self.plans.messages[f.sub as usize].fields[0];
        let (Some(err_at), Some(bytes)) = (err_at, self.input.get(tag_at..)) else {
            return EntryKey::Unknown;
        };
        let mut r = Reader::with_offset(bytes, tag_at);
        let Ok(mut er) = r.read_tag().and_then(|_| r.read_len_reader()) else {
            return EntryKey::Unknown;
        };
        let mut key = EntryKey::Unknown;
        // Field by field, as `map_entry` reads them, up to the one the
        // failure is in: a failure at a tag's first byte is before it.
        while !er.is_empty() && err_at > er.position() {
            let Ok(tag) = er.read_tag() else { break };
            if tag.field_number() == 1 && tag.wire_type() == kf.kind.wire_type() {
                match wire_key(kf.kind, &mut er) {
                    Some(k) => key = k,
                    None => return EntryKey::Unknown,
                }
            } else if er.skip_field(tag, self.opts.max_depth).is_err() {
                break;
            }
            if err_at < er.position() {
                break;
            }
        }
        key
    }

    /// Option `empty`: absent repeated/map fields become empty tables.
    ///
    /// # Safety
    /// As [`Self::walk_body`]'s frame at its end: `t` its table, `cs` its
    /// containers; three free slots. May raise on out-of-memory.
    #[cold]
    pub(in crate::binary::decode) unsafe fn make_empty_containers(
        &self,
        plan: &MessagePlan,
        t: c_int,
        cs: &Containers,
    ) {
        let L = self.L;
        for f in plan.fields.iter().filter(|f| f.card != Card::Single) {
            // SAFETY: the frame's slots are reserved; `t` is a table.
            unsafe {
                if cs.counts.get(f.slot as usize).is_some_and(|&n| n != 0) {
                    continue;
                }
                self.push_key(f.key_id);
                if lua::rawget(L, t) == ffi::LUA_TNIL {
                    ffi::lua_pop(L, 1);
                    self.push_key(f.key_id);
                    ffi::lua_createtable(L, 0, 0);
                    if self.seq_mt != 0 {
                        self.set_mt(-1, if f.card == Card::Map { self.map_mt } else { self.seq_mt });
                    }
                    ffi::lua_rawset(L, t);
                } else {
                    ffi::lua_pop(L, 1);
                }
            }
        }
    }

    /// Give the table at `idx` the metatable at `mt` (option `serialize`).
    ///
    /// # Safety
    /// `idx` a table (relative to the top when negative), `mt` the index of
    /// the `seq_mt`/`map_mt` metatable; one free slot.
    #[inline(always)]
    pub(in crate::binary::decode) unsafe fn set_mt(&self, idx: c_int, mt: c_int) {
        // SAFETY: one free slot; `mt` holds a table (decode_with put it there).
        unsafe {
            ffi::lua_pushvalue(self.L, mt);
            ffi::lua_setmetatable(self.L, if idx < 0 { idx - 1 } else { idx });
        }
    }
}

/// A map key of `kind` read from the wire, as an error path names it.
fn wire_key<'i>(kind: Kind, r: &mut Reader<'i>) -> Option<EntryKey<'i>> {
    Some(match kind {
        Kind::String | Kind::Bytes => EntryKey::Str(r.read_len_bytes().ok()?),
        Kind::Fixed32 => EntryKey::UInt(r.read_fixed32().ok()? as u64),
        Kind::SFixed32 => EntryKey::Int(r.read_fixed32().ok()? as i32 as i64),
        Kind::Fixed64 => EntryKey::UInt(r.read_fixed64().ok()?),
        Kind::SFixed64 => EntryKey::Int(r.read_fixed64().ok()? as i64),
        kind => {
            let v = r.read_varint().ok()?;
            match kind {
                Kind::Bool => EntryKey::Bool(v != 0),
                Kind::UInt32 => EntryKey::UInt(v as u32 as u64),
                Kind::UInt64 => EntryKey::UInt(v),
                Kind::SInt32 => EntryKey::Int(zigzag::decode_zigzag32(v as u32) as i64),
                Kind::SInt64 => EntryKey::Int(zigzag::decode_zigzag64(v)),
                Kind::Int64 => EntryKey::Int(v as i64),
                _ => EntryKey::Int(v as i32 as i64),
            }
        }
    })
}
