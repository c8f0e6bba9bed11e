//! One Lua value read as a field's kind: strings, integers of every
//! width (numbers, int64 cdata, Tarantool's cdata), floats, booleans.

use super::*;

impl EncodeCtx<'_> {
    /// The bytes of a string/bytes value, UTF-8 checked for proto3 strings.
    ///
    /// # Safety
    /// `v` the index of a value of type `ty`. The slice borrows the Lua
    /// string: `'s` must not outlive its anchor (the slot, or an unmodified table).
    pub(in crate::binary::encode) unsafe fn string_value<'s>(
        &self,
        f: &FieldPlan,
        v: c_int,
        ty: c_int,
    ) -> WalkResult<&'s [u8]> {
        if ty != ffi::LUA_TSTRING {
            return Err(self.err.set(wrong("string", ty)));
        }
        // SAFETY: a string slot, anchored for the whole encode.
        let s = unsafe { lua::string_bytes(self.L, v) };
        if f.utf8 && self.utf8 && utf8::validate_utf8(s, 0).is_err() {
            return Err(self.err.set(CodecError::new(ErrorKind::InvalidUtf8, None)));
        }
        Ok(s)
    }

    /// Write one scalar value (no tag); returns whether it is the zero value.
    ///
    /// # Safety
    /// `v` the index of a value of type `ty`; `f` a scalar field (no string,
    /// bytes, message or group); three free slots (the cdata classifier).
    /// Raises nothing.
    #[inline]
    pub(in crate::binary::encode) unsafe fn scalar(
        &self,
        f: &FieldPlan,
        v: c_int,
        ty: c_int,
        w: &mut Writer,
    ) -> WalkResult<bool> {
        let L = self.L;
        // SAFETY: forwarded; numbers are read only after their type is checked.
        unsafe {
            match f.kind {
                Kind::Bool => {
                    if ty != ffi::LUA_TBOOLEAN {
                        return Err(self.err.set(wrong("boolean", ty)));
                    }
                    let b = ffi::lua_toboolean(L, v) != 0;
                    w.put_varint(b as u64);
                    Ok(!b)
                }
                Kind::Float => {
                    if ty != ffi::LUA_TNUMBER {
                        return Err(self.err.set(wrong("number", ty)));
                    }
                    let x = ffi::lua_tonumber(L, v) as f32;
                    w.put_fixed32(x.to_bits());
                    Ok(x.to_bits() == 0)
                }
                Kind::Double => {
                    if ty != ffi::LUA_TNUMBER {
                        return Err(self.err.set(wrong("number", ty)));
                    }
                    let x = ffi::lua_tonumber(L, v);
                    w.put_fixed64(x.to_bits());
                    Ok(x.to_bits() == 0)
                }
                Kind::Enum => {
                    let n = if ty == ffi::LUA_TSTRING {
                        let s = lua::string_bytes(L, v);
                        let e = &self.plans.enums[f.sub as usize];
                        match e.number_of(s) {
                            Some(n) => n,
                            None => {
                                return Err(self
                                    .err
                                    .set(CodecError::new(ErrorKind::UnknownEnumName(ShortStr::new(s), f.sub), None)));
                            }
                        }
                    } else {
                        match self.small_integer(Kind::Int32, v, ty) {
                            Some(i) => i as i32,
                            None => self.integer(Kind::Int32, v, ty)? as i32,
                        }
                    };
                    w.put_varint(n as i64 as u64);
                    Ok(n == 0)
                }
                kind => {
                    // Two's complement bits: every write below takes its width of them.
                    let x = match self.small_integer(kind, v, ty) {
                        Some(i) => i as u64,
                        None => self.integer(kind, v, ty)? as u64,
                    };
                    match kind {
                        Kind::Int32 | Kind::Int64 | Kind::UInt32 | Kind::UInt64 => w.put_varint(x),
                        Kind::SInt32 => w.put_varint(zigzag::encode_zigzag32(x as i32) as u64),
                        Kind::SInt64 => w.put_varint(zigzag::encode_zigzag64(x as i64)),
                        Kind::Fixed32 | Kind::SFixed32 => w.put_fixed32(x as u32),
                        Kind::Fixed64 | Kind::SFixed64 => w.put_fixed64(x),
                        _ => unreachable!("non-integer kinds handled above"),
                    }
                    Ok(x == 0)
                }
            }
        }
    }

    /// The common case of [`Self::integer`] in one C API call: a Lua number
    /// holding an integer in `kind`'s range. `None` leaves everything else
    /// (strings, cdata, fractions, NaN, out of range, 2^63 and up, negative
    /// native integers for the unsigned 64-bit wrap) to the general path,
    /// which also words the errors.
    ///
    /// # Safety
    /// `v` the index of a value of type `ty`. Raises nothing.
    #[inline(always)]
    pub(in crate::binary::encode) unsafe fn small_integer(&self, kind: Kind, v: c_int, ty: c_int) -> Option<i64> {
        if ty != ffi::LUA_TNUMBER {
            return None;
        }
        // SAFETY: `v` holds a number; neither call raises.
        let i = unsafe {
            if lua::HAS_INTEGERS {
                lua::number_as_integer(self.L, v)?
            } else {
                let x = ffi::lua_tonumber(self.L, v);
                if matches!(kind, Kind::Int32 | Kind::SInt32 | Kind::SFixed32 | Kind::Enum) {
                    // `as` saturates, and i32's bounds are exact doubles: a
                    // value out of range, a fraction or NaN does not survive
                    // the round trip, so this is the range check too.
                    let i = x as i32;
                    return (i as f64 == x).then_some(i as i64);
                }
                // `as` saturates, so i64::MAX also stands for 2^63 and up;
                // a fraction or NaN does not survive the round trip.
                let i = x as i64;
                if i == i64::MAX || i as f64 != x {
                    return None;
                }
                i
            }
        };
        let in_range = match kind {
            Kind::Int32 | Kind::SInt32 | Kind::SFixed32 | Kind::Enum => i as i32 as i64 == i,
            Kind::UInt32 | Kind::Fixed32 => i as u64 <= u32::MAX as u64,
            Kind::Int64 | Kind::SInt64 | Kind::SFixed64 => true,
            Kind::UInt64 | Kind::Fixed64 => i >= 0,
            _ => false,
        };
        in_range.then_some(i)
    }

    /// Read an integer for `kind`, range-checked; the result is the value
    /// (for uint64 on Lua 5.3+, a negative integer means its wrapped value).
    ///
    /// # Safety
    /// `v` the index of a value of type `ty`; three free slots (the cdata
    /// classifier). Raises nothing.
    pub(in crate::binary::encode) unsafe fn integer(&self, kind: Kind, v: c_int, ty: c_int) -> WalkResult<i128> {
        let L = self.L;
        let wide = kind.is_64bit_integer();
        // SAFETY: numbers and strings are read only after their type is checked.
        let (x, native_int) = unsafe {
            match ty {
                ffi::LUA_TNUMBER => {
                    let native = lua::HAS_INTEGERS && ffi::lua_isinteger(L, v) != 0;
                    match lua::number_to_int(L, v) {
                        Ok(NumInt::Int(i)) => (i as i128, native),
                        Ok(NumInt::UInt(u)) => (u as i128, false),
                        Ok(NumInt::Huge(h)) => {
                            return Err(self.err.set(CodecError::new(
                                ErrorKind::OutOfRange { value: IntValue::Float(h), ty: kind.proto_name() },
                                None,
                            )));
                        }
                        Err(fv) => return Err(self.err.set(CodecError::new(ErrorKind::NotIntegral(fv), None))),
                    }
                }
                ffi::LUA_TSTRING if wide => {
                    let s = lua::string_bytes(L, v);
                    let hash = || if self.plans.hash_int64 { int64::parse_hash(s) } else { None };
                    match int64::parse_decimal(s).or_else(hash) {
                        Some((neg, mag)) => (if neg { -(mag as i128) } else { mag as i128 }, false),
                        None => {
                            return Err(self.err.set(CodecError::new(ErrorKind::BadIntString(ShortStr::new(s)), None)));
                        }
                    }
                }
                lua::LUA_TCDATA => match self.read_cdata(v) {
                    CdataInt::I64(i) => (i as i128, false),
                    CdataInt::U64(u) => (u as i128, false),
                    CdataInt::Null | CdataInt::Other => return Err(self.err.set(wrong("integer", ty))),
                },
                _ => return Err(self.err.set(wrong(if wide { "integer or decimal string" } else { "integer" }, ty))),
            }
        };
        let (lo, hi): (i128, i128) = match kind {
            Kind::Int32 | Kind::SInt32 | Kind::SFixed32 | Kind::Enum => (i32::MIN as i128, i32::MAX as i128),
            Kind::UInt32 | Kind::Fixed32 => (0, u32::MAX as i128),
            Kind::Int64 | Kind::SInt64 | Kind::SFixed64 => (i64::MIN as i128, i64::MAX as i128),
            Kind::UInt64 | Kind::Fixed64 => {
                if native_int && x < 0 {
                    // Lua 5.3+ convention: uint64 >= 2^63 is the wrapped integer.
                    return Ok(x as i64 as u64 as i128);
                }
                (0, u64::MAX as i128)
            }
            _ => (i64::MIN as i128, u64::MAX as i128),
        };
        if x < lo || x > hi {
            let value = if x < 0 { IntValue::Signed(x as i64) } else { IntValue::Unsigned(x as u64) };
            let value = if x < i64::MIN as i128 { IntValue::Float(x as f64) } else { value };
            return Err(self.err.set(CodecError::new(ErrorKind::OutOfRange { value, ty: kind.proto_name() }, None)));
        }
        Ok(x)
    }

    /// Is the cdata at `v` a NULL pointer (`box.NULL`)?
    ///
    /// # Safety
    /// As [`Self::read_cdata`].
    #[cold]
    pub(in crate::binary::encode) unsafe fn is_null(&self, v: c_int) -> bool {
        // SAFETY: forwarded; the value is a cdata.
        unsafe { self.read_cdata(v) == CdataInt::Null }
    }

    /// Classify the cdata at `v`: Tarantool's C API when there, else the
    /// portable Lua classifier.
    ///
    /// # Safety
    /// `v` the index of a cdata; three free slots; `helpers` the helper table.
    /// Raises nothing (the classifier runs under `lua_pcall`).
    #[cold]
    pub(in crate::binary::encode) unsafe fn read_cdata(&self, v: c_int) -> CdataInt {
        // SAFETY: the value at `v` is a cdata; 3 free slots (frame reserve).
        unsafe {
            if let Some(tt) = &self.module.tarantool {
                match tt.read(self.L, v) {
                    Cdata::I64(i) => return CdataInt::I64(i),
                    Cdata::U64(u) => return CdataInt::U64(u),
                    Cdata::Null => return CdataInt::Null,
                    Cdata::Unknown => {}
                }
            }
            int64::read_cdata(self.L, lua::absindex(self.L, v), self.helpers)
        }
    }
}
