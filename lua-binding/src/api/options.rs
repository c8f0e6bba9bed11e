//! Reading option tables from Lua (`protolua.load(bytes, opts)` and the
//! per-call `opts` of every codec entry point) into [`LoadOptions`].

use std::os::raw::c_int;

use crate::error::{ErrBuf, raise_fmt, type_name};
use crate::lua::host;
use crate::lua::int64::Int64Mode;
use crate::lua::{self, ffi, lua_State, upvalue};
use crate::plan::options::{DefaultsMode, LoadOptions, MAX_MAX_DEPTH, Strategies};

/// The defaults of every option in this host (upvalue 2: the helpers).
///
/// # Safety
/// Called from `load`/`load_file` with their upvalues; one free slot.
pub unsafe fn base_options(L: *mut lua_State) -> LoadOptions {
    // SAFETY: upvalue 2 is the helper table.
    let module = unsafe { host::get(L, upvalue(2)) };
    LoadOptions { serialize: module.serialize_default(), ..LoadOptions::default() }
}

/// Read an options table at `idx` (optional) over `base`; `what` names the
/// call in errors. See [`LoadOptions`] and docs/LUA_API.md.
///
/// # Safety
/// `L` valid with 2 free slots; raises on a bad option (no Rust heap is
/// held by the callers at that point).
pub unsafe fn read_options(L: *mut lua_State, idx: c_int, base: LoadOptions, what: &str) -> LoadOptions {
    let mut o = base;
    // SAFETY: option parsing; field reads are raw.
    unsafe {
        match ffi::lua_type(L, idx) {
            ffi::LUA_TNONE | ffi::LUA_TNIL => {}
            ffi::LUA_TTABLE => {
                lua::push_bytes(L, b"max_depth");
                match lua::rawget(L, idx) {
                    ffi::LUA_TNIL => {}
                    ffi::LUA_TNUMBER => {
                        let d = ffi::lua_tonumber(L, -1);
                        if !(1.0..=MAX_MAX_DEPTH as f64).contains(&d) || d.trunc() != d {
                            raise_fmt(L, format_args!("{what}: max_depth must be an integer in 1..{MAX_MAX_DEPTH}"))
                        }
                        o.max_depth = d as u32;
                    }
                    _ => raise_fmt(L, format_args!("{what}: max_depth must be a number")),
                }
                ffi::lua_pop(L, 1);
                o.strict_keys = read_bool(L, idx, "strict_keys", o.strict_keys, what);
                o.check_required = read_bool(L, idx, "required", o.check_required, what);
                o.utf8 = read_bool(L, idx, "utf8", o.utf8, what);
                o.empty = read_bool(L, idx, "empty", o.empty, what);
                o.serialize = read_bool(L, idx, "serialize", o.serialize, what);
                o.constructors = read_bool(L, idx, "constructors", o.constructors, what);
                read_strategies(L, idx, &mut o.strategies, what);
                o.json = crate::api::json::read_json_options(L, idx, o.json, what);
                if let Some(i) = read_choice(L, idx, "unknown", &["keep", "drop"], what) {
                    o.keep_unknown = i == 0;
                }
                if let Some(i) = read_choice(L, idx, "enums", &["name", "number"], what) {
                    o.enums_as_number = i == 1;
                }
                if let Some(i) = read_choice(L, idx, "defaults", &["none", "values", "metatable"], what) {
                    o.defaults = [DefaultsMode::None, DefaultsMode::Values, DefaultsMode::Metatable][i];
                }
                if let Some(i) = read_choice(L, idx, "int64", &["auto", "number", "string", "cdata"], what) {
                    o.int64 = [Int64Mode::Auto, Int64Mode::Number, Int64Mode::String, Int64Mode::Cdata][i];
                }
            }
            _ => {
                let got = type_name(L, idx);
                raise_fmt(L, format_args!("{what}: options must be a table, got {got}"))
            }
        }
    }
    o
}

/// The options of a load (`protolua.load`, `load_file`, `load_proto`,
/// `parse`): [`read_options`] over the host's defaults, and those only a
/// load takes (they shape the plans: `encode_zeros`, `hash_int64`,
/// `ext_keys`).
///
/// # Safety
/// As [`read_options`], called with the load functions' upvalues.
pub unsafe fn read_load_options(L: *mut lua_State, idx: c_int, what: &str) -> LoadOptions {
    // SAFETY: option parsing; read_options has checked `idx` is a table
    // or nothing.
    unsafe {
        let mut o = read_options(L, idx, base_options(L), what);
        if ffi::lua_type(L, idx) == ffi::LUA_TTABLE {
            o.encode_zeros = read_bool(L, idx, "encode_zeros", o.encode_zeros, what);
            o.hash_int64 = read_bool(L, idx, "hash_int64", o.hash_int64, what);
            if let Some(i) = read_choice(L, idx, "ext_keys", &["full", "short"], what) {
                o.short_ext_keys = i == 1;
            }
        }
        o
    }
}

/// Read the boolean option `name` of the table at `idx`, or `default`.
///
/// # Safety
/// `L` valid with one free slot, `idx` a table; raises on a value of
/// another type.
pub(crate) unsafe fn read_bool(L: *mut lua_State, idx: c_int, name: &str, default: bool, what: &str) -> bool {
    // SAFETY: option parsing; one free slot.
    unsafe {
        lua::push_bytes(L, name.as_bytes());
        let v = match lua::rawget(L, idx) {
            ffi::LUA_TNIL => default,
            ffi::LUA_TBOOLEAN => ffi::lua_toboolean(L, -1) != 0,
            _ => raise_fmt(L, format_args!("{what}: {name} must be a boolean")),
        };
        ffi::lua_pop(L, 1);
        v
    }
}

/// Read the string option `name` (one of `choices`): its index, or `None`.
///
/// # Safety
/// `L` valid with one free slot, `idx` a table; raises on a value that is
/// not one of `choices`.
unsafe fn read_choice(L: *mut lua_State, idx: c_int, name: &str, choices: &[&str], what: &str) -> Option<usize> {
    // SAFETY: option parsing; one free slot.
    unsafe {
        lua::push_bytes(L, name.as_bytes());
        let ty = lua::rawget(L, idx);
        let found = match ty {
            ffi::LUA_TNIL => None,
            ffi::LUA_TSTRING => {
                let s = lua::string_bytes(L, -1);
                choices.iter().position(|c| c.as_bytes() == s)
            }
            _ => Some(usize::MAX),
        };
        ffi::lua_pop(L, 1);
        match found {
            Some(i) if i != usize::MAX => Some(i),
            None if ty == ffi::LUA_TNIL => None,
            _ => {
                let mut list = ErrBuf::new();
                for (i, c) in choices.iter().enumerate() {
                    let _ = std::fmt::Write::write_fmt(
                        &mut list,
                        format_args!(
                            "{}'{c}'",
                            if i == 0 {
                                ""
                            } else if i + 1 == choices.len() {
                                " or "
                            } else {
                                ", "
                            }
                        ),
                    );
                }
                raise_fmt(L, format_args!("{what}: {name} must be {}", list.as_str()))
            }
        }
    }
}

/// [`Strategies::NAMES`] as an error message lists them.
const STRATEGY_LIST: &str = "root_fast, root_ctors, message_ctors, tree_ctors, tree_program, bulk_arrays, fetch, walk";

/// Read option `strategies` (a table of booleans named by
/// [`Strategies::NAMES`]) of the options table at `idx` over `s`.
///
/// # Safety
/// `L` valid with 3 free slots, `idx` a table; raises on a value that is
/// not a table, a switch that is not a boolean, or an unknown switch (no
/// borrow is held across the raising calls).
unsafe fn read_strategies(L: *mut lua_State, idx: c_int, s: &mut Strategies, what: &str) {
    // SAFETY: option parsing; raw reads and `lua_next` over a table.
    unsafe {
        lua::push_bytes(L, b"strategies");
        match lua::rawget(L, idx) {
            ffi::LUA_TNIL => {}
            ffi::LUA_TTABLE => {
                let t = ffi::lua_gettop(L);
                ffi::lua_pushnil(L);
                while ffi::lua_next(L, t) != 0 {
                    let known = ffi::lua_type(L, -2) == ffi::LUA_TSTRING
                        && Strategies::NAMES.iter().any(|n| n.as_bytes() == lua::string_bytes(L, -2));
                    if !known {
                        let key = if ffi::lua_type(L, -2) == ffi::LUA_TSTRING {
                            std::str::from_utf8(lua::string_bytes(L, -2)).unwrap_or("?")
                        } else {
                            type_name(L, -2)
                        };
                        raise_fmt(
                            L,
                            format_args!("{what}: strategies has no switch '{key}' (switches: {})", STRATEGY_LIST),
                        )
                    }
                    ffi::lua_pop(L, 1);
                }
                for i in 0..Strategies::NAMES.len() {
                    let current = *s.flags_mut()[i];
                    let name = Strategies::NAMES[i];
                    let v = read_bool(L, t, name, current, what);
                    *s.flags_mut()[i] = v;
                }
            }
            _ => raise_fmt(L, format_args!("{what}: strategies must be a table")),
        }
        ffi::lua_pop(L, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_lists_every_switch() {
        assert_eq!(STRATEGY_LIST, Strategies::NAMES.join(", "));
    }
}
