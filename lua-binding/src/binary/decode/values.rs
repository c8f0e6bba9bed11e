//! One field value: scalars, enums, 64-bit integers and strings pushed as
//! the options ask, and sub-messages.

use super::*;

impl<'a> DecodeCtx<'a> {
    /// Push the key string `key_id` from the key table.
    ///
    /// # Safety
    /// One free slot; `key_id` a key id of `self.plans` (a nil key would make
    /// the caller's `lua_rawset` raise).
    #[inline(always)]
    pub(in crate::binary::decode) unsafe fn push_key(&self, key_id: i32) {
        // SAFETY: `keys` is the key table; key ids are in range by construction.
        unsafe {
            lua::push_rawgeti(self.L, self.keys, key_id as i64);
        }
    }

    /// [`Self::push_varint`] with the kind given (a constant at the call
    /// sites, so the match folds away). The 32-bit kinds go through
    /// `lua::push_small_int` (`lua_pushinteger` wherever `lua_Integer` has
    /// 64 bits).
    ///
    /// # Safety
    /// One free stack slot (two for cdata).
    #[inline(always)]
    pub(crate) unsafe fn push_varint_as(&self, kind: Kind, f: &FieldPlan, v: u64) {
        let L = self.L;
        // SAFETY: one free slot (two for cdata), the caller's contract.
        unsafe {
            match kind {
                Kind::Int32 => lua::push_small_int(L, v as i32 as i64),
                Kind::UInt32 => lua::push_small_int(L, v as u32 as i64),
                Kind::SInt32 => lua::push_small_int(L, zigzag::decode_zigzag32(v as u32) as i64),
                Kind::Int64 => self.push_64(v, true),
                Kind::UInt64 => self.push_64(v, false),
                Kind::SInt64 => self.push_64(zigzag::decode_zigzag64(v) as u64, true),
                Kind::Bool => lua::push_bool(L, v != 0),
                Kind::Enum => self.push_enum(f, v as i32),
                _ => unreachable!("not a varint kind"),
            }
        }
    }

    /// Push the varint `v` as a value of `f`'s (varint) kind.
    ///
    /// # Safety
    /// As [`Self::push_varint_as`].
    #[inline(always)]
    pub(crate) unsafe fn push_varint(&self, f: &FieldPlan, v: u64) {
        // SAFETY: forwarded.
        unsafe { self.push_varint_as(f.kind, f, v) }
    }

    /// Push a 64-bit integer (bits `v`) as the `int64` option says.
    ///
    /// # Safety
    /// Two free slots; `helpers` the helper table. May raise on out-of-memory
    /// (a cdata or a string).
    #[inline(always)]
    pub(crate) unsafe fn push_64(&self, v: u64, signed: bool) {
        // SAFETY: one free slot (two for cdata), reserved by the frame.
        unsafe {
            if let Some(tt) = &self.module.tarantool {
                match self.opts.int64 {
                    // Within int32 Tarantool's `luaL_pushint64` and
                    // `luaL_pushuint64` push `lua_pushinteger`'s value (a
                    // number; an integer on dual-number builds): the same,
                    // without the call into Tarantool.
                    Int64Mode::Auto if signed && i32::try_from(v as i64).is_ok() => {
                        return lua::push_small_int(self.L, v as i64);
                    }
                    Int64Mode::Auto if !signed && v <= i32::MAX as u64 => return lua::push_small_int(self.L, v as i64),
                    Int64Mode::Auto if signed => return tt.push_i64(self.L, v as i64),
                    Int64Mode::Auto => return tt.push_u64(self.L, v),
                    Int64Mode::Cdata => return tt.push_cdata(self.L, v, signed),
                    _ => {}
                }
            }
            if self.opts.int64 == Int64Mode::Auto {
                if signed {
                    int64::push_i64(self.L, v as i64, self.helpers)
                } else {
                    int64::push_u64(self.L, v, self.helpers)
                }
            } else {
                int64::push_with_mode(self.L, v, signed, self.opts.int64, self.helpers)
            }
        }
    }

    /// Push value `v` of `f`'s enum: its name's key string, or the number
    /// (option `enums`, or a value the enum lacks).
    ///
    /// # Safety
    /// One free slot; `f` an enum field of `self.plans`. Raises nothing (a
    /// number, or a key string the key table holds).
    #[inline(always)]
    pub(in crate::binary::decode) unsafe fn push_enum(&self, f: &FieldPlan, v: i32) {
        // SAFETY: one free slot; key ids in range by construction.
        unsafe {
            if self.opts.enums_as_number {
                lua::push_small_int(self.L, v as i64);
                return;
            }
            match self.plans.enums[f.sub as usize].name_key(v) {
                Some(k) => self.push_key(k),
                None => lua::push_small_int(self.L, v as i64),
            }
        }
    }

    /// A sub-message (LEN) or group body; pushes its table (or fills the one
    /// on top with `merge`).
    ///
    /// # Safety
    /// As [`Self::walk_body`]; `f` a message or group field, with `merge` its
    /// table on top.
    pub(in crate::binary::decode) unsafe fn sub_message(
        &self,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        depth: u32,
        number: u32,
        merge: bool,
    ) -> WalkResult {
        // SAFETY: forwarded.
        unsafe {
            if f.kind == Kind::Group {
                self.decode_message(f.sub, r, depth + 1, Some(number), merge)
            } else {
                let mut sub = r.read_len_reader().map_err(|e| self.err.set(CodecError::wire(e)))?;
                self.decode_message(f.sub, &mut sub, depth + 1, None, merge)
            }
        }
    }

    /// Decode one `string`/`bytes` value and push it.
    ///
    /// # Safety
    /// One free slot. May raise on out-of-memory.
    #[inline(always)]
    pub(in crate::binary::decode) unsafe fn string(&self, f: &FieldPlan, r: &mut Reader<'_>) -> WalkResult {
        let bytes = r.read_len_bytes().map_err(|e| self.err.set(CodecError::wire(e)))?;
        if f.utf8 && self.opts.utf8 {
            utf8::validate_utf8(bytes, r.position() - bytes.len()).map_err(|e| self.err.set(CodecError::wire(e)))?;
        }
        // SAFETY: one free slot (the caller's contract).
        unsafe { lua::push_bytes(self.L, bytes) };
        Ok(())
    }

    /// Decode one value of `f` (wire type already checked) and push it.
    ///
    /// # Safety
    /// As [`Self::walk_body`] (its two free slots serve every kind).
    #[inline(always)]
    pub(crate) unsafe fn value(&self, f: &FieldPlan, r: &mut Reader<'_>, depth: u32, number: u32) -> WalkResult {
        // SAFETY: forwarded.
        unsafe {
            match f.kind {
                Kind::String | Kind::Bytes => self.string(f, r),
                Kind::Message | Kind::Group => self.sub_message(f, r, depth, number, false),
                _ => self.scalar(f, r),
            }
        }
    }

    /// Decode one numeric/bool/enum value and push it.
    ///
    /// # Safety
    /// Two free slots (one but for a 64-bit cdata); `helpers` the helper
    /// table. May raise on out-of-memory.
    #[inline(always)]
    pub(in crate::binary::decode) unsafe fn scalar(&self, f: &FieldPlan, r: &mut Reader<'_>) -> WalkResult {
        let L = self.L;
        // SAFETY: one free slot (reserved by the frame); helpers index valid.
        unsafe {
            match f.kind {
                // The varint kinds spell their pushes out instead of calling
                // push_varint per arm: in debug builds that inlines the whole
                // conversion eight times into the recursive message frame,
                // and 100 levels no longer fit a fiber-sized stack
                // (adversarial `default_max_depth_fits_a_fiber_stack`).
                Kind::Int32 => {
                    lua::push_small_int(L, varint(r).map_err(|e| self.err.set(CodecError::wire(e)))? as i32 as i64)
                }
                Kind::UInt32 => {
                    lua::push_small_int(L, varint(r).map_err(|e| self.err.set(CodecError::wire(e)))? as u32 as i64)
                }
                Kind::SInt32 => {
                    let v = varint(r).map_err(|e| self.err.set(CodecError::wire(e)))? as u32;
                    lua::push_small_int(L, zigzag::decode_zigzag32(v) as i64)
                }
                Kind::Int64 => self.push_64(varint(r).map_err(|e| self.err.set(CodecError::wire(e)))?, true),
                Kind::UInt64 => self.push_64(varint(r).map_err(|e| self.err.set(CodecError::wire(e)))?, false),
                Kind::SInt64 => {
                    let v = varint(r).map_err(|e| self.err.set(CodecError::wire(e)))?;
                    self.push_64(zigzag::decode_zigzag64(v) as u64, true)
                }
                Kind::Bool => lua::push_bool(L, varint(r).map_err(|e| self.err.set(CodecError::wire(e)))? != 0),
                Kind::Enum => {
                    let v = varint(r).map_err(|e| self.err.set(CodecError::wire(e)))? as i32;
                    self.push_enum(f, v)
                }
                Kind::Fixed32 => {
                    lua::push_small_int(L, r.read_fixed32().map_err(|e| self.err.set(CodecError::wire(e)))? as i64)
                }
                Kind::SFixed32 => lua::push_small_int(
                    L,
                    r.read_fixed32().map_err(|e| self.err.set(CodecError::wire(e)))? as i32 as i64,
                ),
                Kind::Float => lua::push_number(
                    L,
                    f32::from_bits(r.read_fixed32().map_err(|e| self.err.set(CodecError::wire(e)))?) as f64,
                ),
                Kind::Fixed64 => self.push_64(r.read_fixed64().map_err(|e| self.err.set(CodecError::wire(e)))?, false),
                Kind::SFixed64 => self.push_64(r.read_fixed64().map_err(|e| self.err.set(CodecError::wire(e)))?, true),
                Kind::Double => lua::push_number(
                    L,
                    f64::from_bits(r.read_fixed64().map_err(|e| self.err.set(CodecError::wire(e)))?),
                ),
                Kind::String | Kind::Bytes | Kind::Message | Kind::Group => unreachable!("not a scalar"),
            }
        }
        Ok(())
    }
}
