//! `protolua.grpc`: gRPC and gRPC-Web framing above the transport.
//!
//! The byte work (frames, base64 of `application/grpc-web-text`) is here in
//! Rust; status codes, `grpc-timeout`, `grpc-message` percent-encoding,
//! trailers, method helpers and Tarantool's `web_call` are the Lua chunk
//! `grpc.lua`, which receives these functions as its argument.

use std::os::raw::c_int;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::error::{raise_fmt, type_name};
use crate::lua::{self, ffi, lua_State, upvalue};

/// The Lua half of the module.
const GRPC_LUA: &str = include_str!("grpc.lua");

/// Default largest frame `unframe` accepts (gRPC's default receive limit).
pub const DEFAULT_MAX_FRAME: usize = 4 << 20;

/// Registry key of the metatable `schema:method()` gives method tables.
pub static METHOD_MT: u8 = 0;

/// Frame flag: the payload is compressed.
const FLAG_COMPRESSED: u8 = 0x01;
/// Frame flag (gRPC-Web): the payload is the trailers.
const FLAG_TRAILER: u8 = 0x80;

/// Push the `protolua.grpc` table. `helpers` is the module's helper table.
///
/// # Safety
/// `L` valid with 8 free slots; setup time (may raise on out-of-memory).
pub unsafe fn push_module(L: *mut lua_State, helpers: c_int) {
    // SAFETY: loading and running our own constant chunk.
    unsafe {
        let name = c"=protolua.grpc";
        if ffi::luaL_loadbuffer(L, GRPC_LUA.as_ptr().cast(), GRPC_LUA.len(), name.as_ptr()) != 0 {
            ffi::lua_error(L);
        }
        ffi::lua_createtable(L, 0, 4);
        let fns: [(&str, ffi::lua_CFunction); 4] =
            [("frame", frame), ("unframe", unframe), ("b64encode", b64encode), ("b64decode", b64decode)];
        for (n, f) in fns {
            lua::push_bytes(L, n.as_bytes());
            ffi::lua_pushvalue(L, helpers);
            ffi::lua_pushcclosure(L, f, 1);
            ffi::lua_rawset(L, -3);
        }
        ffi::lua_pushnumber(L, DEFAULT_MAX_FRAME as f64);
        ffi::lua_setfield(L, -2, c"max_frame".as_ptr());
        // grpc.lua returns the module table and the method metatable.
        ffi::lua_call(L, 1, 2);
        ffi::lua_pushlightuserdata(L, lua::static_key(&METHOD_MT));
        ffi::lua_insert(L, -2);
        ffi::lua_rawset(L, ffi::LUA_REGISTRYINDEX);
    }
}

/// Give the table at `idx` the method metatable (if the module made one).
///
/// # Safety
/// `L` valid with 2 free slots, `idx` absolute.
pub unsafe fn set_method_metatable(L: *mut lua_State, idx: c_int) {
    // SAFETY: raw registry read; setmetatable on our own table.
    unsafe {
        ffi::lua_pushlightuserdata(L, lua::static_key(&METHOD_MT));
        if lua::rawget(L, ffi::LUA_REGISTRYINDEX) == ffi::LUA_TTABLE {
            ffi::lua_setmetatable(L, idx);
        } else {
            ffi::lua_pop(L, 1);
        }
    }
}

/// The string argument `idx` of `what`, or raise.
///
/// # Safety
/// `L` valid, `idx` acceptable; raises on a non-string (no Rust heap is
/// held by the callers then). The bytes live while the value is on the stack.
unsafe fn bytes_arg<'a>(L: *mut lua_State, idx: c_int, what: &str) -> &'a [u8] {
    // SAFETY: type-checked slot.
    unsafe {
        if ffi::lua_type(L, idx) != ffi::LUA_TSTRING {
            let got = type_name(L, idx);
            raise_fmt(L, format_args!("grpc.{what}: expected a string, got {got}"))
        }
        lua::string_bytes(L, idx)
    }
}

/// `grpc.frame(bytes [, compressed [, trailer]])`: the 5-byte prefix
/// (flags, big-endian length) and the bytes.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn frame(L: *mut lua_State) -> c_int {
    // SAFETY: checked argument; the header lives on the stack.
    unsafe {
        let b = bytes_arg(L, 1, "frame");
        let Ok(len) = u32::try_from(b.len()) else {
            raise_fmt(L, format_args!("grpc.frame: {} bytes do not fit a frame (at most 4 GiB)", b.len()))
        };
        let mut flags = 0u8;
        if ffi::lua_toboolean(L, 2) != 0 {
            flags |= FLAG_COMPRESSED;
        }
        if ffi::lua_toboolean(L, 3) != 0 {
            flags |= FLAG_TRAILER;
        }
        let l = len.to_be_bytes();
        let head = [flags, l[0], l[1], l[2], l[3]];
        ffi::lua_settop(L, 1);
        lua::push_bytes(L, &head);
        ffi::lua_insert(L, 1);
        ffi::lua_concat(L, 2);
        1
    }
}

/// `grpc.unframe(buf [, pos [, max]])`: the frame starting at byte `pos`
/// (1-based, default 1): `payload, compressed, next_pos, trailer`, or nil
/// when `buf` does not hold the whole frame yet. A frame longer than `max`
/// (default [`DEFAULT_MAX_FRAME`]) or with unknown flags is an error.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn unframe(L: *mut lua_State) -> c_int {
    // SAFETY: checked arguments; the payload is pushed from the borrowed buffer.
    unsafe {
        let buf = bytes_arg(L, 1, "unframe");
        let pos = match ffi::lua_type(L, 2) {
            ffi::LUA_TNONE | ffi::LUA_TNIL => 1.0,
            ffi::LUA_TNUMBER => ffi::lua_tonumber(L, 2),
            _ => raise_fmt(L, format_args!("grpc.unframe: pos must be a number")),
        };
        if !(pos >= 1.0 && pos.trunc() == pos && pos <= buf.len() as f64 + 1.0) {
            raise_fmt(L, format_args!("grpc.unframe: pos {pos} is outside the buffer (1..{})", buf.len() + 1))
        }
        let max = match ffi::lua_type(L, 3) {
            ffi::LUA_TNONE | ffi::LUA_TNIL => DEFAULT_MAX_FRAME as f64,
            ffi::LUA_TNUMBER => ffi::lua_tonumber(L, 3),
            _ => raise_fmt(L, format_args!("grpc.unframe: max must be a number")),
        };
        let start = pos as usize - 1;
        let rest = &buf[start..];
        if rest.len() < 5 {
            ffi::lua_pushnil(L);
            return 1;
        }
        let flags = rest[0];
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        if flags & !(FLAG_COMPRESSED | FLAG_TRAILER) != 0 {
            raise_fmt(L, format_args!("grpc.unframe: frame at byte {} has unknown flags 0x{flags:02x}", start + 1))
        }
        if len as f64 > max {
            raise_fmt(
                L,
                format_args!(
                    "grpc.unframe: frame at byte {} of {len} bytes exceeds the limit of {max} bytes",
                    start + 1
                ),
            )
        }
        if rest.len() - 5 < len {
            ffi::lua_pushnil(L);
            return 1;
        }
        lua::push_bytes(L, &rest[5..5 + len]);
        lua::push_bool(L, flags & FLAG_COMPRESSED != 0);
        ffi::lua_pushnumber(L, (start + 5 + len + 1) as f64);
        lua::push_bool(L, flags & FLAG_TRAILER != 0);
        4
    }
}

/// `grpc.b64encode(s)`: standard base64 with padding.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn b64encode(L: *mut lua_State) -> c_int {
    // SAFETY: checked argument; the output is copied in protected mode so
    // out-of-memory there frees the String before raising.
    unsafe {
        let b = bytes_arg(L, 1, "b64encode");
        let out = STANDARD.encode(b);
        ffi::lua_settop(L, 1);
        let ok = lua::push_bytes_protected(L, upvalue(1), out.as_bytes());
        drop(out);
        if !ok {
            ffi::lua_error(L);
        }
        1
    }
}

/// `grpc.b64decode(s)`: base64 as gRPC-Web text bodies carry it: runs of
/// padded base64 one after another (each frame encoded on its own),
/// whitespace ignored. Invalid input is an error naming the offset.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn b64decode(L: *mut lua_State) -> c_int {
    // SAFETY: as b64encode; the error is formatted after the Vec is dropped.
    unsafe {
        let b = bytes_arg(L, 1, "b64decode");
        let decoded = decode_runs(b);
        ffi::lua_settop(L, 1);
        match decoded {
            Ok(out) => {
                let ok = lua::push_bytes_protected(L, upvalue(1), &out);
                drop(out);
                if !ok {
                    ffi::lua_error(L);
                }
                1
            }
            Err(at) => raise_fmt(L, format_args!("grpc.b64decode: invalid base64 at byte {}", at + 1)),
        }
    }
}

/// Decode concatenated padded base64 runs; the error is the byte offset of
/// the run that failed.
pub fn decode_runs(input: &[u8]) -> Result<Vec<u8>, usize> {
    let clean: Vec<(usize, u8)> = input.iter().copied().enumerate().filter(|(_, c)| !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(clean.len() / 4 * 3);
    let mut run: Vec<u8> = Vec::new();
    let mut run_start = 0;
    let mut i = 0;
    while i < clean.len() {
        if run.is_empty() {
            run_start = clean[i].0;
        }
        run.push(clean[i].1);
        // A run ends after its padding (or at the end of the input).
        let ends = clean[i].1 == b'=' && clean.get(i + 1).is_none_or(|&(_, c)| c != b'=');
        if ends || i + 1 == clean.len() {
            decode_padded(&run, &mut out).map_err(|_| run_start)?;
            run.clear();
        }
        i += 1;
    }
    Ok(out)
}

fn decode_padded(run: &[u8], out: &mut Vec<u8>) -> Result<(), base64::DecodeError> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    LENIENT.decode_vec(run, out)
}

#[cfg(test)]
mod tests {
    use super::decode_runs;

    #[test]
    fn base64_runs() {
        assert_eq!(decode_runs(b"AAAAAAE=gAAAAA9ncnBjLXN0YXR1czowDQo=").unwrap().len(), 5 + 20);
        assert_eq!(decode_runs(b"aGk=aGk").unwrap(), b"hihi");
        assert_eq!(decode_runs(b" aGk=\r\n").unwrap(), b"hi");
        assert_eq!(decode_runs(b"aGk=a!k="), Err(4));
    }
}
