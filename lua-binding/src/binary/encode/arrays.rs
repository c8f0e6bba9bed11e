//! Strict keys on arrays: a repeated field's table holds the keys `1..n`
//! (`n = #t`) and nothing else.
//!
//! The elements `1..n` are read (and checked non-nil) by the element
//! loops; what is left is whether the table has any other key. No C API
//! call says where a key lives: a table's integer keys may sit in its hash
//! part (LuaJIT keeps a constructor's `[1] = ..` there, PUC Lua fills a
//! free hash node with an assigned `t[1]`), so `lua_next` from key `n`
//! alone can miss keys whose nodes come first. So: when the host's table
//! object says key `n` is in the array part ([`lua::array_part`]), one
//! `lua_next` from `n` is exact; otherwise every key is counted and the
//! count compared with `n`. Only on a mismatch a second walk names the
//! offender.

use super::*;
use crate::error::ArrayKey;

/// Strict keys, LuaJIT: arrays of at least this many elements have their
/// keys counted by the helper's Lua loop (one `lua_pcall`, ~30
/// instructions a key once its loop is compiled) rather than by
/// `lua_next` calls (~95 a key: the call, `lj_tab_keyindex`,
/// `lj_tab_next` and the pop). Measured, docs/PERF_LOG.md.
const ARRAY_KEYS_COUNTED_IN_LUA: usize = 6;

impl EncodeCtx<'_> {
    /// Strict keys: the array `arr` of field `fi` of message `mi`, whose
    /// elements `1..=n` were read, has no other key. The error names the
    /// field and the key (a positive integer past `n` is a hole at `n + 1`).
    ///
    /// # Safety
    /// `arr` an absolute index of a table, unmodified; two free slots.
    /// Raises nothing (the Lua count runs under `lua_pcall`).
    #[inline(always)]
    pub(in crate::binary::encode) unsafe fn check_array_keys(
        &self,
        mi: u32,
        fi: usize,
        arr: c_int,
        n: usize,
    ) -> WalkResult {
        let L = self.L;
        // SAFETY: raw iteration of a table nobody modifies meanwhile; each
        // key is popped; the caller left two free slots.
        unsafe {
            if n > 0 && lua::array_part::holds(L, arr, n) {
                // Keys 1..=n all live in the array part: `next` from `n`
                // meets every other key there is but LuaJIT's key 0, whose
                // array slot comes first.
                let zero = lua::IS_LUAJIT && lua::rawgeti(L, arr, 0) != ffi::LUA_TNIL;
                if lua::IS_LUAJIT {
                    ffi::lua_settop(L, -2);
                }
                if !zero {
                    ffi::lua_pushinteger(L, n as ffi::lua_Integer);
                    if ffi::lua_next(L, arr) == 0 {
                        return Ok(());
                    }
                    ffi::lua_settop(L, -3);
                }
                return self.array_key_error(mi, fi, arr, n);
            }
            let counted =
                if lua::IS_LUAJIT && n >= ARRAY_KEYS_COUNTED_IN_LUA { self.count_keys_lua(arr) } else { None };
            let count = match counted {
                Some(c) => c,
                None => {
                    let mut c = 0usize;
                    ffi::lua_pushnil(L);
                    while ffi::lua_next(L, arr) != 0 {
                        ffi::lua_settop(L, -2);
                        c += 1;
                        if c > n {
                            ffi::lua_settop(L, -2);
                            break;
                        }
                    }
                    c
                }
            };
            if count == n {
                return Ok(());
            }
            self.array_key_error(mi, fi, arr, n)
        }
    }

    /// The array has a key besides `1..=n`: find it and record the error.
    /// A positive integer key (past `n`: `1..=n` are all there) is a hole
    /// at `n + 1` and wins, so the error does not depend on the table's key
    /// order; otherwise the first other key met. `Ok` if none is found (a
    /// count the Lua loop got wrong: a hook's doing).
    ///
    /// # Safety
    /// As [`Self::check_array_keys`].
    #[cold]
    #[inline(never)]
    pub(in crate::binary::encode) unsafe fn array_key_error(
        &self,
        mi: u32,
        fi: usize,
        arr: c_int,
        n: usize,
    ) -> WalkResult {
        let L = self.L;
        let mut bad = None;
        // SAFETY: as `check_array_keys`; a key is read as a string only
        // when it is one, and as a number only when it is one.
        unsafe {
            ffi::lua_pushnil(L);
            while ffi::lua_next(L, arr) != 0 {
                ffi::lua_settop(L, -2);
                let key = match ffi::lua_type(L, -1) {
                    ffi::LUA_TNUMBER => match lua::number_to_int(L, -1) {
                        Ok(NumInt::Int(i)) if i >= 1 && i as u64 <= n as u64 => None,
                        Ok(NumInt::Int(i)) if i < 1 => Some(ArrayKey::Int(i)),
                        Ok(NumInt::Int(_) | NumInt::UInt(_)) => {
                            ffi::lua_settop(L, -2);
                            let e = CodecError::new(ErrorKind::ArrayHole(n as u64 + 1), None);
                            return Err(self.err.set(e.in_field(mi, fi)));
                        }
                        Ok(NumInt::Huge(v)) | Err(v) => Some(ArrayKey::Num(v)),
                    },
                    ffi::LUA_TSTRING => Some(ArrayKey::Str(ShortStr::new(lua::string_bytes(L, -1)))),
                    ffi::LUA_TBOOLEAN => Some(ArrayKey::Bool(ffi::lua_toboolean(L, -1) != 0)),
                    ty => Some(ArrayKey::Other(lua_type_name(ty))),
                };
                if bad.is_none() {
                    bad = key;
                }
            }
        }
        match bad {
            Some(key) => {
                let e = CodecError::new(ErrorKind::ArrayKey { key, len: n as u64 }, None);
                Err(self.err.set(e.in_field(mi, fi)))
            }
            None => Ok(()),
        }
    }
}
