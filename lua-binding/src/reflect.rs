//! Schema reflection: `schema:descriptor_set()` and the descriptor views
//! (files, services, methods, options) as plain Lua tables.

use std::os::raw::c_int;

use crate::lua::{self, ffi, lua_State};
use crate::schema::{S_FDS, check_schema};

/// Methods added to the schema metatable (each gets the metatable as
/// upvalue 1, as the others).
pub const SCHEMA_METHODS: &[(&str, ffi::lua_CFunction)] = &[("descriptor_set", schema_descriptor_set)];

/// `schema:descriptor_set()`: the bytes of the `FileDescriptorSet` the
/// schema was built from (imports included; loadable by `protolua.load`).
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_descriptor_set(L: *mut lua_State) -> c_int {
    // SAFETY: checked schema; raw read of its own state table.
    unsafe {
        check_schema(L, "descriptor_set");
        ffi::lua_getuservalue(L, 1);
        lua::rawgeti(L, -1, S_FDS);
        1
    }
}
