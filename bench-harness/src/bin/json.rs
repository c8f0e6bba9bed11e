//! `just bench-json`, its embedded part: Rust heap allocations per call of
//! the JSON methods on the matrix cells (steady state, the harness's
//! counting allocator), and Lua bytes per call, `decode_json` beside
//! `decode` (`bench-harness/lua/json_allocs.lua`). Embedded vendored LuaJIT,
//! or Lua 5.4 with `--no-default-features --features lua54`. The timed
//! comparison against cjson / Tarantool's json runs in the hosts
//! (`bench-harness/json/run.sh`).

use std::path::PathBuf;

use mlua::{Lua, Table};

#[path = "../counting.rs"]
mod counting;

fn main() -> mlua::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let fixtures = root.join("../fixtures").canonicalize().expect("fixtures folder next to bench-harness");
    // SAFETY: the benchmark needs the full standard library (jit, ffi).
    let lua = unsafe { Lua::unsafe_new() };
    // SAFETY: luaopen_protolua follows the lua_CFunction contract.
    let open = unsafe { lua.create_c_function(protolua::luaopen_protolua) }?;
    let preload: Table = lua.globals().get::<Table>("package")?.get("preload")?;
    preload.set("protolua", open)?;
    // SAFETY: this thread's only state, used by no one else.
    let lua_via_rust = unsafe { counting::count_lua_allocs(&lua) }?;
    lua.globals().set("rust_allocs", lua.create_function(move |_, ()| Ok(counting::rust_counts(lua_via_rust)))?)?;
    lua.globals().set("FIXTURES", fixtures.to_str().expect("utf-8 path"))?;
    lua.load("protolua = require('protolua')").exec()?;
    let rows: Table = lua.load(include_str!("../../lua/json_allocs.lua")).set_name("@json_allocs.lua").eval()?;
    let version: String = lua.load("return jit and jit.version or _VERSION").eval()?;
    println!("Per call, steady state, embedded {version}: Rust heap allocations (and bytes), Lua bytes\n");
    println!("| cell | op | Rust allocs/call | Rust B/call | Lua B/call |");
    println!("|---|---|---:|---:|---:|");
    for row in rows.sequence_values::<Table>() {
        let row = row?;
        println!(
            "| {} | {} | {:.2} | {:.0} | {:.0} |",
            row.get::<String>("cell")?,
            row.get::<String>("op")?,
            row.get::<f64>("allocs")?,
            row.get::<f64>("alloc_bytes")?,
            row.get::<f64>("lua_bytes")?
        );
    }
    Ok(())
}
