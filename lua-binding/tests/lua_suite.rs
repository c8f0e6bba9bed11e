//! Runs the Lua test suite (`tests/lua/test_*.lua`) inside an embedded Lua
//! (vendored LuaJIT by default, Lua 5.4 with `--no-default-features
//! --features lua54,vendored`), with `protolua` registered in
//! `package.preload` exactly as `require` would load the shared library.

mod common;

use std::path::PathBuf;

use common::lua_with_protolua;

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
