//! 64-bit integers across Lua flavours.
//!
//! * Lua 5.3+: native integers; uint64 ≥ 2^63 travels as the wrapped
//!   negative integer (the Lua convention), both ways.
//! * LuaJIT: a number when |v| ≤ 2^53 (exact in a double), otherwise a
//!   `cdata<int64_t>` / `cdata<uint64_t>`.
//!
//! LuaJIT has no C API to make or inspect cdata, so at load time we keep a
//! small helper table made by Lua code (`ffi.typeof` constructors and an
//! `ffi.istype` classifier). Making a cdata calls the constructor and then
//! writes the payload through `lua_topointer` (which LuaJIT defines as the
//! cdata payload address). These are the rare path: most 64-bit values in
//! real data fit in 53 bits.

use std::os::raw::c_int;

use crate::lua::{self, ffi, lua_State};

/// Largest magnitude a double holds exactly.
const EXACT: u64 = 1 << 53;

/// Lua source of the LuaJIT helper table `{ int64_t, uint64_t, classify,
/// [9] = count, [10] = count_batch, [11] = make_fetcher, [14] =
/// next_compiles }`. The counters'
/// loops are `next` loops, which LuaJIT runs by table slot (`ITERN`);
/// `next`, `rawget`, `rawset`, `loadstring` and `getmetatable` are the
/// ones there when the module loads.
pub const LUAJIT_HELPERS: &str = r#"
local ffi = require('ffi')
local i64, u64 = ffi.typeof('int64_t'), ffi.typeof('uint64_t')
local istype = ffi.istype
local next, rawget, rawset, pcall, type, error = next, rawget, rawset, pcall, type, error
local getmetatable = getmetatable
local loadstring, format, concat = loadstring, string.format, table.concat
-- A message's fetchers: the key count of t, then t[k1], ..., t[kn] (raw:
-- the plain index only for a table without a metatable, for which
-- getmetatable, even with a __metatable field, is never nil), one call;
-- the batch one per table a[i..j], each preceded by the table, its
-- results built on the stack by recursion (no shared table).
-- Raised by `build` for a key id that names no key string: that message
-- can never be fetched.
local NOT_A_KEY = {}
-- The count slot's layout (`encode::FETCH_COUNT_BITS`, `FETCH_CODED`).
local CMAX, TYPES, CODED = 1048575, 1048576, 11
-- The type codes of the values named in `vals` (at most CODED), 3 bits
-- each, the first lowest: lua_type's number for nil, boolean, number,
-- string and table, 7 for any other type (asked with `type`: a NULL
-- cdata is `== nil`). A compiled fetcher knows each value's type from the
-- guard of its load, so the expression folds to a constant there.
local function coded(vals)
    local s = '0'
    local m = #vals
    if m > CODED then m = CODED end
    for i = m, 1, -1 do
        local x = vals[i]
        s = '(type(' .. x .. ') == "number" and 3 or type(' .. x .. ') == "string" and 4 or type('
            .. x .. ') == "table" and 5 or type(' .. x .. ') == "nil" and 0 or type(' .. x
            .. ') == "boolean" and 1 or 7) + 8 * (' .. s .. ')'
    end
    return s
end
-- The count slot: the key count (at most CMAX) plus TYPES * the type
-- codes of the first CODED values, 3 bits each (`coded`).
local function count(c, vals)
    return 'if ' .. c .. ' > CMAX then ' .. c .. ' = CMAX end\n'
        .. c .. ' = ' .. c .. ' + TYPES * (' .. coded(vals) .. ')\n'
end
-- The batch fetcher's source. Up to UNROLL fields, one straight block per
-- table, up to BATCH (`encode::MESSAGE_BATCH`) tables: LuaJIT compiles
-- each block's loop and the code between them, where the recursive
-- version's tail falls back to the interpreter (down-recursion). More
-- fields would pass the 250 slots a function may use (its locals and the
-- copies `return` makes of them), so those messages keep the recursion.
local BATCH, UNROLL = 8, 12
-- `reads`, `block` and `key` are made once, here, not inside `build`:
-- LuaJIT frees a closure whose upvalues ran out of memory while it was
-- made with the size of a closure without upvalues (`func_newL` keeps
-- `nupvalues` at 0 until they are set), so an allocation that fails there
-- leaves its GC accounting off (a debug build asserts at `lua_close`).
local function reads(ks, t)
    return t .. '[' .. concat(ks, '], ' .. t .. '[') .. ']',
        'rawget(' .. t .. ', ' .. concat(ks, '), rawget(' .. t .. ', ') .. ')'
end
local function block(ks, t, n, vs)
    local plain, raw = reads(ks, t)
    return '  local ' .. n .. ' = 0\n'
        .. '  for _ in next, ' .. t .. ' do ' .. n .. ' = ' .. n .. ' + 1 end\n'
        .. '  local ' .. concat(vs, ', ') .. '\n'
        .. '  if getmetatable(' .. t .. ') == nil then ' .. concat(vs, ', ') .. ' = ' .. plain .. '\n'
        .. '  else ' .. concat(vs, ', ') .. ' = ' .. raw .. ' end\n'
        .. count(n, vs)
end
local function batch(ks, nf)
    local vs = {}
    for i = 1, nf do vs[i] = 'v' .. i end
    if nf > UNROLL then
        return 'local function fetch_batch(a, i, j)\n'
            .. '  local t = rawget(a, i)\n'
            .. block(ks, 't', 'n', vs)
            .. '  if i == j then return t, n, ' .. concat(vs, ', ') .. ' end\n'
            .. '  return t, n, ' .. concat(vs, ', ') .. ', fetch_batch(a, i + 1, j)\n'
            .. 'end\n'
    end
    local src, rets = { 'local function fetch_batch(a, i, j)\n' }, {}
    for b = 1, BATCH do
        local t, n, bvs = 't' .. b, 'n' .. b, {}
        for i = 1, nf do bvs[i] = 'v' .. b .. '_' .. i end
        rets[#rets + 1] = t .. ', ' .. n .. ', ' .. concat(bvs, ', ')
        src[#src + 1] = '  local ' .. t .. ' = rawget(a, i + ' .. (b - 1) .. ')\n'
            .. block(ks, t, n, bvs)
            .. '  if i + ' .. (b - 1) .. ' == j then return ' .. concat(rets, ', ') .. ' end\n'
    end
    src[#src + 1] = '  error("protolua: batch too large")\nend\n' -- not called so
    return concat(src)
end
local function key(keys, id)
    local k = rawget(keys, id)
    if type(k) ~= 'string' then error(NOT_A_KEY) end
    return format('%q', k)
end
local function build(keys, nf, ...)
    local args = { ... }
    local ks, vs = {}, {}
    for i = 1, nf do ks[i], vs[i] = key(keys, args[i]), 'v' .. i end
    local plain = 't[' .. concat(ks, '], t[') .. ']'
    local raw = 'rawget(t, ' .. concat(ks, '), rawget(t, ') .. ')'
    -- Nested fields: (field index, field count, key ids...) after the ids.
    local nest, rets = {}, { 'n', concat(vs, ', ') }
    local p = nf + 1
    while args[p] do
        local x, m = 'v' .. (args[p] + 1), args[p + 1]
        local sk, sv = {}, {}
        for i = 1, m do sk[i], sv[i] = key(keys, args[p + 1 + i]), 's' .. p .. '_' .. i end
        local c = 'c' .. p
        nest[#nest + 1] = 'local ' .. c .. ', ' .. concat(sv, ', ') .. '\n'
            .. 'if type(' .. x .. ') == "table" then\n'
            .. '  ' .. c .. ' = 0\n'
            .. '  for _ in next, ' .. x .. ' do ' .. c .. ' = ' .. c .. ' + 1 end\n'
            .. '  if getmetatable(' .. x .. ') == nil then ' .. concat(sv, ', ') .. ' = '
            .. x .. '[' .. concat(sk, '], ' .. x .. '[') .. ']\n'
            .. '  else ' .. concat(sv, ', ') .. ' = rawget(' .. x .. ', '
            .. concat(sk, '), rawget(' .. x .. ', ') .. ') end\n'
            .. count(c, sv)
            .. 'end\n'
        rets[#rets + 1] = c .. ', ' .. concat(sv, ', ')
        p = p + 2 + m
    end
    local src = 'local next, rawget, getmetatable, type, error, CMAX, TYPES = ...\n'
        .. 'local function fetch(t)\n'
        .. 'local n = 0\n'
        .. 'for _ in next, t do n = n + 1 end\n'
        .. 'local ' .. concat(vs, ', ') .. '\n'
        .. 'if getmetatable(t) == nil then ' .. concat(vs, ', ') .. ' = ' .. plain .. '\n'
        .. 'else ' .. concat(vs, ', ') .. ' = ' .. raw .. ' end\n'
        .. count('n', vs)
        .. concat(nest)
        .. 'return ' .. concat(rets, ', ') .. '\n'
        .. 'end\n'
        .. batch(ks, nf)
        .. 'return fetch, fetch_batch\n'
    local chunk = loadstring and loadstring(src, '=protolua.fetch')
    if not chunk then return false end
    return chunk(next, rawget, getmetatable, type, error, CMAX, TYPES)
end
local function make_fetcher(keys, slot, bslot, ...)
    local ok, f, b = pcall(build, keys, ...)
    -- Any other error (a hook's, out of memory) is passing: raise it, so
    -- that nothing is stored and the next encode tries again.
    if not ok and f ~= NOT_A_KEY then error(f, 0) end
    rawset(keys, slot, ok and f or false)
    if bslot ~= 0 then rawset(keys, bslot, ok and b or false) end
end
-- The key counts of a[i], ..., a[j] as j - i + 1 results, built on the
-- stack (no shared table: a nested encode from a hook or a finalizer
-- cannot overwrite another call's counts).
local function count_batch(a, i, j)
    local n = 0
    for _ in next, rawget(a, i) do n = n + 1 end
    if i == j then return n end
    return n, count_batch(a, i + 1, j)
end
-- Whether a hot `next` loop gets a trace (see Helper::NextCompiles.at()).
local function next_compiles()
    local jit = rawget(_G, 'jit')
    if type(jit) ~= 'table' or not jit.status or not jit.status() or not jit.attach then return false end
    local function probe(t)
        local n = 0
        for _ in next, t do n = n + 1 end
        return n
    end
    local started, compiled = {}, false
    local function on_trace(what, tr, func)
        if what == 'start' and func == probe then
            started[tr] = true
        elseif what == 'stop' and started[tr] then
            compiled = true
        end
    end
    jit.attach(on_trace, 'trace')
    local t = { a = 1, b = 2, c = 3, d = 4 }
    local ok = pcall(function()
        for _ = 1, 300 do probe(t) end
    end)
    jit.attach(on_trace)
    return ok and compiled
end
return { i64, u64, function(v)
    if istype(i64, v) then return 1 elseif istype(u64, v) then return 2 end
    if v == nil then return 3 end -- a NULL pointer (box.NULL, msgpack.NULL)
    return 0
end, [9] = function(t)
    local n = 0
    for _ in next, t do n = n + 1 end
    return n
end, [10] = count_batch, [11] = make_fetcher, [14] = next_compiles() }
"#;

/// Push a signed 64-bit value; `helpers` indexes the helper table (LuaJIT).
///
/// # Safety
/// `L` valid with 2 free slots; `helpers` a valid index of the helper table
/// on LuaJIT. May raise on out-of-memory.
#[inline(always)]
pub unsafe fn push_i64(L: *mut lua_State, v: i64, helpers: c_int) {
    // SAFETY: caller's contract.
    unsafe {
        if lua::HAS_INTEGERS {
            ffi::lua_pushinteger(L, v as ffi::lua_Integer);
        } else if v.unsigned_abs() <= EXACT {
            ffi::lua_pushnumber(L, v as f64);
        } else {
            push_cdata(L, helpers, 1, v as u64);
        }
    }
}

/// Push an unsigned 64-bit value (see [`push_i64`]).
///
/// # Safety
/// As [`push_i64`].
#[inline(always)]
pub unsafe fn push_u64(L: *mut lua_State, v: u64, helpers: c_int) {
    // SAFETY: caller's contract.
    unsafe {
        if lua::HAS_INTEGERS {
            ffi::lua_pushinteger(L, v as i64 as ffi::lua_Integer);
        } else if v <= EXACT {
            ffi::lua_pushnumber(L, v as f64);
        } else {
            push_cdata(L, helpers, 2, v);
        }
    }
}

/// How decode returns 64-bit integers (option `int64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Int64Mode {
    /// Lua 5.4: integer. LuaJIT/5.1: a number when exact (|v| <= 2^53),
    /// else (LuaJIT) an `int64_t`/`uint64_t` cdata.
    Auto,
    /// Always a Lua number (may round above 2^53).
    Number,
    /// Always a decimal string.
    String,
    /// LuaJIT: always cdata; Lua 5.4: integer.
    Cdata,
}

/// Push `v` (signed when `signed`, else the bits of a u64) as `mode` says.
///
/// # Safety
/// As [`push_i64`].
#[inline]
pub unsafe fn push_with_mode(L: *mut lua_State, v: u64, signed: bool, mode: Int64Mode, helpers: c_int) {
    // SAFETY: caller's contract.
    unsafe {
        match mode {
            Int64Mode::Auto if signed => push_i64(L, v as i64, helpers),
            Int64Mode::Auto => push_u64(L, v, helpers),
            Int64Mode::Number => ffi::lua_pushnumber(L, if signed { v as i64 as f64 } else { v as f64 }),
            Int64Mode::String => {
                let mut buf = [0u8; 20];
                let s = if signed { fmt_i64(v as i64, &mut buf) } else { fmt_u64(v, &mut buf) };
                lua::push_bytes(L, s);
            }
            Int64Mode::Cdata if lua::HAS_INTEGERS || !lua::IS_LUAJIT => {
                if signed {
                    push_i64(L, v as i64, helpers)
                } else {
                    push_u64(L, v, helpers)
                }
            }
            Int64Mode::Cdata => push_cdata(L, helpers, if signed { 1 } else { 2 }, v),
        }
    }
}

/// Decimal digits of `v` in the tail of `buf`.
fn fmt_u64(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Decimal digits of `v` (with a sign when negative).
fn fmt_i64(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    if v >= 0 {
        return fmt_u64(v as u64, buf);
    }
    let n = fmt_u64(v.unsigned_abs(), buf).len();
    // u64::MAX has 20 digits but |i64::MIN| only 19, so there is room.
    let start = buf.len() - n - 1;
    buf[start] = b'-';
    &buf[start..]
}

#[cold]
unsafe fn push_cdata(L: *mut lua_State, helpers: c_int, ctor: i64, bits: u64) {
    // SAFETY: the helper table holds a ctype at `ctor`; calling a ctype with
    // no arguments makes a zeroed scalar cdata whose payload `lua_topointer`
    // returns (8 bytes, 8-aligned); we overwrite it with the value.
    unsafe {
        if lua::rawgeti(L, helpers, ctor) == ffi::LUA_TNIL {
            // No ffi library in this state (the helper chunk could not load
            // it): a decimal string, which encode takes back unchanged.
            ffi::lua_pop(L, 1);
            let mut buf = [0u8; 20];
            let s = if ctor == 1 { fmt_i64(bits as i64, &mut buf) } else { fmt_u64(bits, &mut buf) };
            lua::push_bytes(L, s);
            return;
        }
        ffi::lua_call(L, 0, 1);
        let p = ffi::lua_topointer(L, -1) as *mut u64;
        p.write_unaligned(bits);
    }
}

/// What a cdata value on the stack is, as an integer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CdataInt {
    /// `int64_t`.
    I64(i64),
    /// `uint64_t`.
    U64(u64),
    /// A NULL pointer (`box.NULL`).
    Null,
    /// Some other cdata.
    Other,
}

/// Classify the cdata at `idx` (LuaJIT only; elsewhere always `Other`).
///
/// Runs the Lua classifier in protected mode, so no Lua error escapes.
///
/// # Safety
/// `L` valid with 3 free slots; `idx` absolute; `helpers` the helper table index.
pub unsafe fn read_cdata(L: *mut lua_State, idx: c_int, helpers: c_int) -> CdataInt {
    if !lua::IS_LUAJIT {
        return CdataInt::Other;
    }
    // SAFETY: helper slot 3 is the classifier; pcall catches any error it
    // raises (including out-of-memory) and leaves one value on the stack.
    unsafe {
        if lua::rawgeti(L, helpers, 3) != ffi::LUA_TFUNCTION {
            ffi::lua_pop(L, 1);
            return CdataInt::Other;
        }
        ffi::lua_pushvalue(L, idx);
        if ffi::lua_pcall(L, 1, 1, 0) != 0 {
            ffi::lua_pop(L, 1);
            return CdataInt::Other;
        }
        let class = ffi::lua_tonumber(L, -1) as i32;
        ffi::lua_pop(L, 1);
        let p = ffi::lua_topointer(L, idx) as *const u64;
        match class {
            1 => CdataInt::I64(p.read_unaligned() as i64),
            2 => CdataInt::U64(p.read_unaligned()),
            3 => CdataInt::Null,
            _ => CdataInt::Other,
        }
    }
}

/// Parse an optionally negative decimal integer (for 64-bit fields given as
/// strings). Returns `(negative, magnitude)`; `None` if malformed or > u64.
pub fn parse_decimal(s: &[u8]) -> Option<(bool, u64)> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some((neg, v))
}

#[cfg(test)]
mod tests {
    use super::parse_decimal;

    #[test]
    fn decimal_strings() {
        assert_eq!(parse_decimal(b"0"), Some((false, 0)));
        assert_eq!(parse_decimal(b"-9223372036854775808"), Some((true, 1 << 63)));
        assert_eq!(parse_decimal(b"18446744073709551615"), Some((false, u64::MAX)));
        assert_eq!(parse_decimal(b"18446744073709551616"), None);
        assert_eq!(parse_decimal(b""), None);
        assert_eq!(parse_decimal(b"-"), None);
        assert_eq!(parse_decimal(b"12a"), None);
        assert_eq!(parse_decimal(b" 1"), None);
    }
}
