//! The elements of a repeated field written by per-kind loops: strings
//! and scalars, tagged or packed.

use super::*;

impl EncodeCtx<'_> {
    /// The elements of a repeated string/bytes field, each with its tag:
    /// what [`Self::element`] and [`Self::string_value`] do per element,
    /// in one loop without their two calls (see [`Self::string_run`]).
    ///
    /// # Safety
    /// `arr` an absolute index of a table (its elements `1..=n` read raw and
    /// left unmodified), `f` a string/bytes field; the batches reserve their
    /// own slots. Raises no Lua error.
    #[inline(never)]
    pub(in crate::binary::encode) unsafe fn string_elements(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        arr: c_int,
        n: usize,
        w: &mut Writer,
    ) -> WalkResult {
        // SAFETY: forwarded.
        unsafe {
            if f.utf8 && self.utf8 {
                self.string_run::<true>(mi, fi, f.tag, arr, n, w)
            } else {
                self.string_run::<false>(mi, fi, f.tag, arr, n, w)
            }
        }
    }

    /// The loop of [`Self::string_elements`], with the UTF-8 check a
    /// constant: per element `rawgeti`, `lua_type`, `lua_tolstring`, the
    /// check and one [`Writer::put_tagged_len_bytes`], the elements popped
    /// in batches as in [`Self::each_element`]. Anything that is not a
    /// valid string goes to [`Self::string_run_error`], out of line.
    ///
    /// # Safety
    /// As [`Self::string_elements`].
    #[inline(always)]
    pub(in crate::binary::encode) unsafe fn string_run<const UTF8: bool>(
        &self,
        mi: u32,
        fi: usize,
        tag: EncodedTag,
        arr: c_int,
        n: usize,
        w: &mut Writer,
    ) -> WalkResult {
        let L = self.L;
        // SAFETY: `arr` is a table (checked by `repeated`); the batch's
        // slots are reserved before it is pushed; a slot is read as a
        // string only after its type is checked (`lua_tolstring` would
        // convert a number), and the string stays anchored in `arr` for
        // the whole encode; the stack is back at `base` on every exit.
        unsafe {
            let base = ffi::lua_gettop(L);
            let mut i = 1;
            while i <= n {
                if ffi::lua_checkstack(L, ELEMENT_BATCH as c_int + 8) == 0 {
                    return Err(self.err.set(CodecError::new(ErrorKind::StackOverflow, None)));
                }
                let end = n.min(i + ELEMENT_BATCH - 1);
                // An exclusive range: `..=` keeps an exhausted flag.
                for j in i..end + 1 {
                    lua::push_rawgeti(L, arr, j as i64);
                    let ety = ffi::lua_type(L, -1);
                    if ety != ffi::LUA_TSTRING {
                        return Err(self.string_run_error(mi, fi, base, j, ety));
                    }
                    let s = lua::string_bytes(L, -1);
                    if UTF8 && utf8::validate_utf8(s, 0).is_err() {
                        return Err(self.string_run_error(mi, fi, base, j, ety));
                    }
                    w.put_tagged_len_bytes(&tag, s);
                }
                ffi::lua_settop(L, base);
                i = end + 1;
            }
        }
        Ok(())
    }

    /// Element `j` of a string run (on top of the stack, of type `ety`)
    /// is not a valid string: record the error with the element's path and
    /// pop the stack back to `base`.
    ///
    /// # Safety
    /// The run's elements pushed above `base`, which it pops.
    #[cold]
    #[inline(never)]
    pub(in crate::binary::encode) unsafe fn string_run_error(
        &self,
        mi: u32,
        fi: usize,
        base: c_int,
        j: usize,
        ety: c_int,
    ) -> Recorded {
        let e = match ety {
            ffi::LUA_TNIL => CodecError::new(ErrorKind::ArrayHole(j as u64), None),
            ffi::LUA_TSTRING => CodecError::new(ErrorKind::InvalidUtf8, None),
            _ => wrong("string", ety),
        };
        // SAFETY: the stack holds the run's pushed elements above `base`.
        unsafe { ffi::lua_settop(self.L, base) };
        self.err.set(e.in_element(mi, fi, j as u64))
    }

    /// The elements of a repeated scalar field (packed run, or each with
    /// its tag when `TAGGED`). The kind is matched once per field, not per
    /// element: each integer kind gets its own loop, in which the one-call
    /// read ([`Self::small_integer`]) and the write are inlined, and only
    /// the values it leaves (strings, cdata, errors) go through
    /// [`Self::scalar`]. Other kinds take `scalar` for every element.
    ///
    /// # Safety
    /// `arr` an absolute index of a table, `f` a scalar field (no string,
    /// bytes, message or group); the batches reserve their own slots. Raises
    /// no Lua error (the cdata classifier runs under `lua_pcall`).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::binary::encode) unsafe fn scalar_elements<const TAGGED: bool>(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        arr: c_int,
        n: usize,
        w: &mut Writer,
    ) -> WalkResult {
        // One loop per kind, `$kind` a constant so that the range check of
        // `small_integer` folds; `$put` writes the value read.
        macro_rules! ints {
            ($kind:expr, $put:expr) => {
                self.each_element::<ELEMENT_BATCH, false>(mi, fi, arr, n, false, |v, ety, _| {
                    if TAGGED {
                        w.put_encoded_tag(&f.tag);
                    }
                    // The element is also on top: -1 needs no index arithmetic.
                    match self.small_integer($kind, -1, ety) {
                        Some(i) => {
                            #[allow(clippy::redundant_closure_call)]
                            ($put)(&mut *w, i);
                            Ok(())
                        }
                        None => self.scalar(f, v, ety, w).map(|_| ()),
                    }
                })
            };
        }
        // SAFETY: forwarded from `repeated` (`arr` a table, stack reserved
        // by `each_element`).
        unsafe {
            match f.kind {
                Kind::Int32 => ints!(Kind::Int32, |w: &mut Writer, i: i64| w.put_varint(i as u64)),
                Kind::Int64 => ints!(Kind::Int64, |w: &mut Writer, i: i64| w.put_varint(i as u64)),
                Kind::UInt32 => ints!(Kind::UInt32, |w: &mut Writer, i: i64| w.put_varint(i as u64)),
                Kind::UInt64 => ints!(Kind::UInt64, |w: &mut Writer, i: i64| w.put_varint(i as u64)),
                Kind::SInt32 => {
                    ints!(Kind::SInt32, |w: &mut Writer, i: i64| w.put_varint(zigzag::encode_zigzag32(i as i32) as u64))
                }
                Kind::SInt64 => ints!(Kind::SInt64, |w: &mut Writer, i: i64| w.put_varint(zigzag::encode_zigzag64(i))),
                Kind::Fixed32 => ints!(Kind::Fixed32, |w: &mut Writer, i: i64| w.put_fixed32(i as u32)),
                Kind::SFixed32 => ints!(Kind::SFixed32, |w: &mut Writer, i: i64| w.put_fixed32(i as u32)),
                Kind::Fixed64 => ints!(Kind::Fixed64, |w: &mut Writer, i: i64| w.put_fixed64(i as u64)),
                Kind::SFixed64 => ints!(Kind::SFixed64, |w: &mut Writer, i: i64| w.put_fixed64(i as u64)),
                _ => self.each_element::<ELEMENT_BATCH, false>(mi, fi, arr, n, false, |v, ety, _| {
                    if TAGGED {
                        w.put_encoded_tag(&f.tag);
                    }
                    self.scalar(f, v, ety, w).map(|_| ())
                }),
            }
        }
    }
}
