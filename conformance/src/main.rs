//! `protolua-testee`: the program Google's `conformance_test_runner` runs
//! (see `docs/CONFORMANCE.md`).
//!
//! It embeds vendored LuaJIT with `protolua` registered in
//! `package.preload`, and runs `conformance/testee.lua`, which speaks the
//! runner's protocol on stdin/stdout: a 4-byte little-endian length, then a
//! `conformance.ConformanceRequest`; the answer is framed the same way and
//! holds a `conformance.ConformanceResponse`. Both are decoded and encoded
//! by protolua itself, from `fixtures/descriptors/conformance.fds`, which is
//! embedded in the binary, so the binary is standalone.
//!
//! Exit status: 0 when stdin reaches end of file between two requests,
//! 1 on any other error (printed on stderr).

use std::process::ExitCode;

use mlua::{Lua, Table};

/// The descriptor set holding `conformance.proto` and the test messages.
const CONFORMANCE_FDS: &[u8] = include_bytes!("../../fixtures/descriptors/conformance.fds");

/// The protocol loop, run inside the embedded Lua.
const TESTEE_LUA: &str = include_str!("../testee.lua");

fn run() -> mlua::Result<()> {
    // SAFETY: the script needs the full standard library (io, and ffi for
    // protolua's 64-bit integers on LuaJIT).
    let lua = unsafe { Lua::unsafe_new() };
    // SAFETY: luaopen_protolua follows the lua_CFunction contract.
    let open = unsafe { lua.create_c_function(protolua::luaopen_protolua) }?;
    let preload: Table = lua.globals().get::<Table>("package")?.get("preload")?;
    preload.set("protolua", open)?;
    lua.globals().set("CONFORMANCE_FDS", lua.create_string(CONFORMANCE_FDS)?)?;
    lua.load(TESTEE_LUA).set_name("@conformance/testee.lua").exec()
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("protolua-testee: {e}");
            ExitCode::FAILURE
        }
    }
}
