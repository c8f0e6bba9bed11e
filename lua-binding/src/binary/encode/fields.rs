//! One field of a message: singular values, repeated fields and maps.

use super::*;

impl EncodeCtx<'_> {
    /// The common singular fields, inline in the field loops: a number for
    /// an integer kind in range (what [`Self::small_integer`] takes), a
    /// `double` or `float`, a `bool`, or a string for a string/bytes field that needs
    /// no UTF-8 check or passes it. The value is at index `v` (−1 when
    /// it is on top of the stack).
    /// Returns `false`, having written nothing, for anything else, which
    /// [`Self::single`] then handles (and words the errors of).
    ///
    /// # Safety
    /// The value at `v` has type `ty` (its `lua_type`); no free slot needed.
    /// Raises nothing; a string is read in place (anchored at `v`).
    #[inline(always)]
    pub(in crate::binary::encode) unsafe fn single_fast(
        &self,
        f: &FieldPlan,
        v: c_int,
        ty: c_int,
        w: &mut Writer,
    ) -> bool {
        let L = self.L;
        // SAFETY: the value is at index `v`; it is read as a
        // number/boolean/string only after its type is checked.
        unsafe {
            if ty == ffi::LUA_TNUMBER {
                let x = match f.kind {
                    Kind::Int32 | Kind::Enum => self.small_integer(Kind::Int32, v, ty).map(|i| i as u64),
                    Kind::Int64 => self.small_integer(Kind::Int64, v, ty).map(|i| i as u64),
                    Kind::UInt32 => self.small_integer(Kind::UInt32, v, ty).map(|i| i as u64),
                    Kind::UInt64 => self.small_integer(Kind::UInt64, v, ty).map(|i| i as u64),
                    Kind::SInt32 => {
                        self.small_integer(Kind::SInt32, v, ty).map(|i| zigzag::encode_zigzag32(i as i32) as u64)
                    }
                    Kind::SInt64 => self.small_integer(Kind::SInt64, v, ty).map(zigzag::encode_zigzag64),
                    Kind::Double => {
                        let x = ffi::lua_tonumber(L, v).to_bits();
                        if !(f.skip_zero && x == 0) {
                            w.put_encoded_tag(&f.tag);
                            w.put_fixed64(x);
                        }
                        return true;
                    }
                    Kind::Float => {
                        let x = (ffi::lua_tonumber(L, v) as f32).to_bits();
                        if !(f.skip_zero && x == 0) {
                            w.put_encoded_tag(&f.tag);
                            w.put_fixed32(x);
                        }
                        return true;
                    }
                    Kind::Fixed32 | Kind::SFixed32 | Kind::Fixed64 | Kind::SFixed64 => {
                        let i = match f.kind {
                            Kind::Fixed32 => self.small_integer(Kind::Fixed32, v, ty),
                            Kind::SFixed32 => self.small_integer(Kind::SFixed32, v, ty),
                            Kind::Fixed64 => self.small_integer(Kind::Fixed64, v, ty),
                            _ => self.small_integer(Kind::SFixed64, v, ty),
                        };
                        let Some(i) = i else { return false };
                        if !(f.skip_zero && i == 0) {
                            w.put_encoded_tag(&f.tag);
                            if matches!(f.kind, Kind::Fixed32 | Kind::SFixed32) {
                                w.put_fixed32(i as u32);
                            } else {
                                w.put_fixed64(i as u64);
                            }
                        }
                        return true;
                    }
                    _ => None,
                };
                let Some(x) = x else { return false };
                if !(f.skip_zero && x == 0) {
                    w.put_encoded_tag(&f.tag);
                    w.put_varint(x);
                }
                true
            } else if ty == ffi::LUA_TSTRING && matches!(f.kind, Kind::String | Kind::Bytes) {
                let s = lua::string_bytes(L, v);
                if f.utf8 && self.utf8 && utf8::validate_utf8(s, 0).is_err() {
                    return false;
                }
                if !(f.skip_zero && s.is_empty()) {
                    w.put_tagged_len_bytes(&f.tag, s);
                }
                true
            } else if ty == ffi::LUA_TBOOLEAN && f.kind == Kind::Bool {
                let b = ffi::lua_toboolean(L, v) != 0;
                if b || !f.skip_zero {
                    w.put_encoded_tag(&f.tag);
                    w.put_varint(b as u64);
                }
                true
            } else {
                false
            }
        }
    }

    /// A singular field: tag and value, skipping proto3 zero values.
    /// `pre`, when not 0, is the slot of a sub-message's count slot
    /// ([`FETCH_COUNT_BITS`]), its field values after it, fetched with the
    /// caller's fields.
    ///
    /// # Safety
    /// As [`Self::message`]'s fields: `v` an absolute index holding the value,
    /// `ty` its type; `pre` 0 or a fetched sub-message's count slot.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::binary::encode) unsafe fn single(
        &self,
        f: &FieldPlan,
        v: c_int,
        ty: c_int,
        depth: u32,
        pre: c_int,
        out: &mut EncodeBuffers,
    ) -> WalkResult {
        // SAFETY: forwarded; `pre` is passed on only for a table value,
        // whose count slot the fetch then set.
        unsafe {
            // `message` reads the count at `pre`.
            let vals = if pre != 0 && ty == ffi::LUA_TTABLE { pre + 1 } else { 0 };
            let keys = usize::MAX;
            match f.kind {
                Kind::Message => {
                    if ty != ffi::LUA_TTABLE {
                        return Err(self.err.set(wrong("table", ty)));
                    }
                    out.w.put_encoded_tag(&f.tag);
                    let mark = out.w.begin_len();
                    self.message(f.sub, v, depth + 1, keys, vals, out)?;
                    out.w.end_len(mark);
                    Ok(())
                }
                Kind::Group => {
                    if ty != ffi::LUA_TTABLE {
                        return Err(self.err.set(wrong("table", ty)));
                    }
                    out.w.put_encoded_tag(&f.tag);
                    self.message(f.sub, v, depth + 1, keys, vals, out)?;
                    let end = Tag::new(f.number, WireType::EndGroup).expect("valid field number");
                    out.w.put_tag(end);
                    Ok(())
                }
                Kind::String | Kind::Bytes => {
                    let s = self.string_value(f, v, ty)?;
                    if f.skip_zero && s.is_empty() {
                        return Ok(());
                    }
                    out.w.put_tagged_len_bytes(&f.tag, s);
                    Ok(())
                }
                _ => {
                    let mark = out.w.len();
                    out.w.put_encoded_tag(&f.tag);
                    let zero = self.scalar(f, v, ty, &mut out.w)?;
                    if f.skip_zero && zero {
                        out.w.truncate(mark);
                    }
                    Ok(())
                }
            }
        }
    }

    /// A repeated field: packed run or one tagged value per element.
    ///
    /// # Safety
    /// As [`Self::message`]'s fields: `arr` an absolute index holding the
    /// value, `ty` its type. Each batch reserves its own slots.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::binary::encode) unsafe fn repeated(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        arr: c_int,
        ty: c_int,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> WalkResult {
        let L = self.L;
        if ty != ffi::LUA_TTABLE {
            return Err(self.err.set(wrong("array (table)", ty).in_field(mi, fi)));
        }
        // SAFETY: `arr` is an absolute table index; each element is popped;
        // the check's two slots are the frame's reserve.
        unsafe {
            let n = lua::rawlen(L, arr);
            if n != 0 {
                self.repeated_elements(mi, fi, f, arr, n, depth, out)?;
            }
            if self.strict_keys {
                self.check_array_keys(mi, fi, arr, n)?;
            }
        }
        Ok(())
    }

    /// The elements `arr[1..=n]` (`n > 0`) of repeated field `f`.
    ///
    /// # Safety
    /// As [`Self::repeated`], `arr` a table.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn repeated_elements(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        arr: c_int,
        n: usize,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> WalkResult {
        // SAFETY: forwarded.
        unsafe {
            if f.packed {
                out.w.put_encoded_tag(&f.tag);
                let fixed = match f.kind.wire_type() {
                    WireType::I32 => Some(4),
                    WireType::I64 => Some(8),
                    _ => None,
                };
                let mark = match fixed {
                    Some(width) => {
                        out.w.put_varint((n * width) as u64);
                        None
                    }
                    None => Some(out.w.begin_len()),
                };
                self.scalar_elements::<false>(mi, fi, f, arr, n, &mut out.w)?;
                if let Some(mark) = mark {
                    out.w.end_len(mark);
                }
                return Ok(());
            }
            match f.kind {
                // The element loop calls `message` itself (`single` would
                // add a frame and a kind dispatch per element).
                Kind::Message if self.fetches_batch(f.sub, depth + 1) => {
                    self.fetched_elements(mi, fi, f, arr, n, depth, out)?
                }
                // Elements that fetch count their own keys: no batch count.
                Kind::Message => self.each_element::<MESSAGE_BATCH, true>(
                    mi,
                    fi,
                    arr,
                    n,
                    !self.fetches(&self.plans.messages[f.sub as usize], depth + 1),
                    |v, ety, keys| {
                        if ety != ffi::LUA_TTABLE {
                            return Err(self.err.set(wrong("table", ety)));
                        }
                        out.w.put_encoded_tag(&f.tag);
                        let mark = out.w.begin_len();
                        self.message(f.sub, v, depth + 1, keys, 0, out)?;
                        out.w.end_len(mark);
                        Ok(())
                    },
                )?,
                Kind::Group => self.each_element::<MESSAGE_BATCH, false>(mi, fi, arr, n, false, |v, ety, _| {
                    self.element(f, v, ety, depth, out)
                })?,
                Kind::String | Kind::Bytes => self.string_elements(mi, fi, f, arr, n, &mut out.w)?,
                _ => self.scalar_elements::<true>(mi, fi, f, arr, n, &mut out.w)?,
            }
        }
        Ok(())
    }

    /// One element of an unpacked repeated field (always written, zero or not).
    ///
    /// # Safety
    /// As [`Self::single`] (with `pre` 0).
    pub(in crate::binary::encode) unsafe fn element(
        &self,
        f: &FieldPlan,
        v: c_int,
        ty: c_int,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> WalkResult {
        // SAFETY: forwarded.
        unsafe {
            match f.kind {
                Kind::Message | Kind::Group => self.single(f, v, ty, depth, 0, out),
                Kind::String | Kind::Bytes => {
                    let s = self.string_value(f, v, ty)?;
                    out.w.put_tagged_len_bytes(&f.tag, s);
                    Ok(())
                }
                _ => {
                    out.w.put_encoded_tag(&f.tag);
                    self.scalar(f, v, ty, &mut out.w).map(|_| ())
                }
            }
        }
    }

    /// Call `each(index, type)` on `arr[1..=n]`, pushing the elements in
    /// batches of `BATCH` ([`ELEMENT_BATCH`] or [`MESSAGE_BATCH`]) and
    /// popping each batch with one `lua_settop` (two C API calls per element
    /// instead of four). A nil is a hole: an error naming the index.
    /// With `COUNT_KEYS` and `count` (sub-message elements that do not
    /// fetch their own count, strict keys, LuaJIT), each batch of
    /// `MIN_COUNTED_BATCH` or more elements has their keys counted by one
    /// Lua call ([`Self::count_batch_keys`]), passed to `each` as its third
    /// argument (`usize::MAX`: not counted).
    ///
    /// # Safety
    /// `arr` an absolute index of a table; `each` leaves the stack as it found
    /// it (the batch's slots are absolute). Raises nothing of its own.
    #[inline(always)]
    pub(in crate::binary::encode) unsafe fn each_element<const BATCH: usize, const COUNT_KEYS: bool>(
        &self,
        mi: u32,
        fi: usize,
        arr: c_int,
        n: usize,
        count: bool,
        mut each: impl FnMut(c_int, c_int, usize) -> WalkResult,
    ) -> WalkResult {
        let L = self.L;
        // SAFETY: `arr` is a table; the batch's slots are reserved before
        // it is pushed, again for each batch. (A GC step inside `each`, such
        // as the cdata classifier's, may shrink LuaJIT's stack below that
        // reservation mid-batch; LuaJIT's API pushes grow the stack
        // themselves, and Lua 5.1/5.4 keep the reservation.) The stack is
        // back at `base` on every exit.
        unsafe {
            let base = ffi::lua_gettop(L);
            let mut i = 1;
            while i <= n {
                if ffi::lua_checkstack(L, BATCH as c_int + 8) == 0 {
                    return Err(self.err.set(CodecError::new(ErrorKind::StackOverflow, None)));
                }
                let end = n.min(i + BATCH - 1);
                // Only read with `COUNT_KEYS` (a batch of `MESSAGE_BATCH`).
                let mut keys = [usize::MAX; MESSAGE_BATCH];
                if COUNT_KEYS && count && lua::IS_LUAJIT && self.strict_keys && end >= i + MIN_COUNTED_BATCH - 1 {
                    self.count_batch_keys(arr, i, end, &mut keys);
                }
                // An exclusive range: `..=` keeps an exhausted flag.
                for j in i..end + 1 {
                    let ety = lua::rawgeti(L, arr, j as i64);
                    let r = if ety == ffi::LUA_TNIL {
                        Err(self.err.set(CodecError::new(ErrorKind::ArrayHole(j as u64), None)))
                    } else {
                        each(base + 1 + (j - i) as c_int, ety, if COUNT_KEYS { keys[j - i] } else { usize::MAX })
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

    /// A map field: entries written as iterated, then put in key order.
    ///
    /// # Safety
    /// As [`Self::message`]'s fields: `m` an absolute index holding the value,
    /// `ty` its type. The table is read raw, unmodified while `lua_next` walks
    /// it. Raises nothing.
    pub(in crate::binary::encode) unsafe fn map(
        &self,
        f: &FieldPlan,
        m: c_int,
        ty: c_int,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> WalkResult {
        let L = self.L;
        if ty != ffi::LUA_TTABLE {
            return Err(self.err.set(wrong("table", ty).not_in_entry()));
        }
        let entry = &self.plans.messages[f.sub as usize];
        let (kf, vf) = (&entry.fields[0], &entry.fields[1]);
        let first_entry = out.entries.len();
        let region = out.w.len();
        // SAFETY: raw iteration of an unmodified table; key and value are
        // inspected by type before any conversion (so lua_next stays valid).
        unsafe {
            ffi::lua_pushnil(L);
            while ffi::lua_next(L, m) != 0 {
                let (k, vi) = (ffi::lua_gettop(L) - 1, ffi::lua_gettop(L));
                let r = self.map_entry(f, kf, vf, k, vi, depth, out);
                match r {
                    Ok(e) => out.entries.push(e),
                    Err(_) => return Err(self.entry_failed(kf, k, first_entry, out)),
                }
                ffi::lua_pop(L, 1);
            }
        }
        let entries = &mut out.entries[first_entry..];
        let sorted = entries.windows(2).all(|w| w[0].key.cmp(&w[1].key) != Ordering::Greater);
        if !sorted {
            entries.sort_unstable_by(|a, b| a.key.cmp(&b.key).then(a.start.cmp(&b.start)));
            reorder_parts(out.w.as_mut_vec(), region, entries.iter().map(|e| (e.start, e.end)));
        }
        out.entries.truncate(first_entry);
        Ok(())
    }

    /// One entry of map field `f` (`kf`, `vf`: its key and value fields):
    /// written at the end of `out.w`, returned with its key for sorting.
    ///
    /// # Safety
    /// As [`Self::map`]'s loop: `k`, `v` absolute indices of the entry's key
    /// and value; a string key stays anchored in the map while the entry is
    /// in `out.entries` (kept by address).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::binary::encode) unsafe fn map_entry(
        &self,
        f: &FieldPlan,
        kf: &FieldPlan,
        vf: &FieldPlan,
        k: c_int,
        v: c_int,
        depth: u32,
        out: &mut EncodeBuffers,
    ) -> WalkResult<MapEntry> {
        let L = self.L;
        // An entry is a nested message on the wire, and decode counts it
        // as a level: a table that encodes must decode with the same limit.
        if depth + 1 > self.max_depth {
            return Err(self.err.set(CodecError::new(ErrorKind::DepthLimit(self.max_depth), None)));
        }
        let start = out.w.len();
        // SAFETY: forwarded; k and v are live stack slots.
        unsafe {
            let kty = ffi::lua_type(L, k);
            let key = match kf.kind {
                Kind::String => {
                    let s = self.string_value(kf, k, kty)?;
                    MapKey::Str(s.as_ptr(), s.len())
                }
                Kind::Bool => {
                    if kty != ffi::LUA_TBOOLEAN {
                        return Err(self.err.set(wrong("boolean key", kty)));
                    }
                    MapKey::Bool(ffi::lua_toboolean(L, k) != 0)
                }
                _ => MapKey::Int(match self.small_integer(kf.kind, k, kty) {
                    Some(i) => i as i128,
                    None => self.integer(kf.kind, k, kty)?,
                }),
            };
            out.w.put_encoded_tag(&f.tag);
            let mark = out.w.begin_len();
            self.element(kf, k, kty, depth + 1, out)?;
            let vty = ffi::lua_type(L, v);
            self.element(vf, v, vty, depth + 1, out)?;
            out.w.end_len(mark);
            Ok(MapEntry { key, start, end: out.w.len() })
        }
    }

    /// [`Self::map`]'s loop after a failed entry: name its key in the
    /// recorded error (for the caller's [`CodecError::in_map`]), as given,
    /// whatever its type (a key of a type `kf` cannot take failed itself,
    /// and its error says so: `expected string key`); pop the entry and
    /// drop the map's entries from `out`.
    ///
    /// # Safety
    /// `k` the entry's key, `k + 1` its value; the frame's reserve above
    /// them, as when the key was read (the cdata classifier's three slots).
    #[cold]
    #[inline(never)]
    unsafe fn entry_failed(&self, kf: &FieldPlan, k: c_int, first_entry: usize, out: &mut EncodeBuffers) -> Recorded {
        let L = self.L;
        // SAFETY: each read follows the type check; none raises. The
        // stack top goes back to the entry's value, so the reserve is there.
        let (key, kty) = unsafe {
            ffi::lua_settop(L, k + 1);
            let kty = ffi::lua_type(L, k);
            let key = match kty {
                ffi::LUA_TSTRING => EntryKey::Str(lua::string_bytes(L, k)),
                ffi::LUA_TBOOLEAN => EntryKey::Bool(ffi::lua_toboolean(L, k) != 0),
                ffi::LUA_TNUMBER => match lua::number_to_int(L, k) {
                    Ok(NumInt::Int(i)) => EntryKey::Int(i),
                    Ok(NumInt::UInt(u)) => EntryKey::UInt(u),
                    Ok(NumInt::Huge(x)) | Err(x) => EntryKey::Float(x),
                },
                lua::LUA_TCDATA => match self.read_cdata(k) {
                    CdataInt::I64(i) => EntryKey::Int(i),
                    CdataInt::U64(u) => EntryKey::UInt(u),
                    CdataInt::Null | CdataInt::Other => EntryKey::Other(kty),
                },
                t => EntryKey::Other(t),
            };
            (key, kty)
        };
        let key_failed = match kf.kind {
            Kind::String => kty != ffi::LUA_TSTRING,
            Kind::Bool => kty != ffi::LUA_TBOOLEAN,
            kind => {
                !(kty == ffi::LUA_TNUMBER
                    || (kty == ffi::LUA_TSTRING && kind.is_64bit_integer())
                    || matches!(key, EntryKey::Int(_) | EntryKey::UInt(_)))
            }
        };
        if key_failed {
            self.err.with(CodecError::as_key_error);
        }
        self.err.name_entry(key);
        // SAFETY: the entry's two slots, above the map's iteration.
        unsafe { ffi::lua_settop(L, k - 1) };
        out.entries.truncate(first_entry);
        Recorded
    }
}
