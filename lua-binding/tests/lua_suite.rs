//! Runs the Lua test suite (`tests/lua/test_*.lua`) inside an embedded Lua
//! (vendored LuaJIT by default, Lua 5.4 with `--no-default-features
//! --features lua54,vendored`), with `protolua` registered in
//! `package.preload` exactly as `require` would load the shared library.

use std::path::PathBuf;

use mlua::Lua;

fn lua_with_protolua() -> Lua {
    // SAFETY: the tests need the `ffi` library (LuaJIT) and `debug`.
    let lua = unsafe { Lua::unsafe_new() };
    // SAFETY: luaopen_protolua is a lua_CFunction following the C API rules.
    let open = unsafe { lua.create_c_function(protolua::luaopen_protolua) }.expect("c function");
    let preload: mlua::Table = lua.globals().get::<mlua::Table>("package").unwrap().get("preload").unwrap();
    preload.set("protolua", open).unwrap();
    lua
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn lua_suite() {
    let lua = lua_with_protolua();
    let fixtures = root().join("../fixtures").canonicalize().expect("fixtures folder");
    let tests = root().join("tests/lua");
    lua.globals().set("FIXTURES", fixtures.to_str().unwrap()).unwrap();
    lua.load("protolua = require('protolua')").exec().unwrap();
    lua.load(std::fs::read_to_string(tests.join("harness.lua")).unwrap()).set_name("@harness.lua").exec().unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("test_"))
        .collect();
    files.sort();
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap().to_owned();
        lua.load(std::fs::read_to_string(f).unwrap())
            .set_name(format!("@{name}"))
            .exec()
            .unwrap_or_else(|e| panic!("{name} failed to run: {e}"));
    }
    if let Err(e) = lua.load("T.finish()").exec() {
        panic!("Lua tests failed:\n{e}");
    }
}
