//! Shared by the codec targets: one embedded LuaJIT per process (per fuzzing
//! thread), `protolua` registered in `package.preload` as the Lua test suite
//! does, the fixture descriptor sets loaded once, and a Lua driver function
//! (`fuzz/lua/<target>.lua`) called once per input.
//!
//! Per input the driver runs under `lua_pcall` with a traceback handler; any
//! Lua error out of it is an assertion failure of the target and panics
//! (libFuzzer reports it as a crash). The Lua stack must be exactly as high
//! after the call as before.

use std::os::raw::c_int;

use mlua::{Function, Lua, ffi};

/// The descriptor sets of `fixtures/descriptors/`, embedded so the targets
/// do not depend on the working directory.
pub const HELLO_FDS: &[u8] = include_bytes!("../../../fixtures/descriptors/hello.fds");
/// proto2_basic.BenchPayload and friends.
pub const PROTO2_BASIC_FDS: &[u8] = include_bytes!("../../../fixtures/descriptors/proto2_basic.fds");
/// The conformance suite's messages (TestAllTypesProto2/3, editions).
pub const CONFORMANCE_FDS: &[u8] = include_bytes!("../../../fixtures/descriptors/conformance.fds");

/// LeakSanitizer off for the codec targets. LuaJIT (GC64) keeps references
/// to its objects NaN-tagged inside TValues, where LSan does not see them as
/// pointers, so every object held only from Lua looks leaked (false
/// positives on the first input). libFuzzer's `-detect_leaks` asks LSan,
/// which answers "no leaks" while this returns 1. Memory growth still shows
/// as `-rss_limit_mb`; leaks of the module are tested by
/// `lua-binding/tests/memory.rs`.
#[unsafe(no_mangle)]
pub extern "C" fn __lsan_is_turned_off() -> c_int {
    1
}

const COMMON_LUA: &str = include_str!("../../lua/common.lua");

/// A Lua state with protolua, the fixture schemas and a target's driver.
pub struct Harness {
    lua: Lua,
    driver: Function,
}

impl Harness {
    /// Build the state and run `script` (which returns the driver function).
    pub fn new(name: &str, script: &str) -> Harness {
        // SAFETY: the targets need the `ffi` library (int64 cdata, NULL).
        let lua = unsafe { Lua::unsafe_new() };
        // SAFETY: luaopen_protolua is a lua_CFunction following the C API rules.
        let open = unsafe { lua.create_c_function(protolua::luaopen_protolua) }.expect("c function");
        let package: mlua::Table = lua.globals().get("package").expect("package");
        let preload: mlua::Table = package.get("preload").expect("package.preload");
        preload.set("protolua", open).expect("preload protolua");
        let fds = lua.create_table().expect("table");
        for (k, v) in [("hello", HELLO_FDS), ("proto2_basic", PROTO2_BASIC_FDS), ("conformance", CONFORMANCE_FDS)] {
            fds.set(k, lua.create_string(v).expect("string")).expect("set");
        }
        lua.globals().set("FDS", fds).expect("set FDS");
        let common: mlua::Value =
            lua.load(COMMON_LUA).set_name("@fuzz/lua/common.lua").eval().expect("fuzz/lua/common.lua");
        package.get::<mlua::Table>("loaded").expect("package.loaded").set("fuzzcommon", common).expect("set");
        let driver: Function = lua
            .load(script)
            .set_name(format!("@fuzz/lua/{name}.lua"))
            .eval()
            .unwrap_or_else(|e| panic!("fuzz/lua/{name}.lua: {e}"));
        Harness { lua, driver }
    }

    /// Run the driver on one input.
    pub fn run(&self, data: &[u8]) {
        let s = self.lua.create_string(data).expect("input string");
        // SAFETY: raw calls on the state mlua hands us; the stack holds the
        // driver (1) and the input (2), and everything pushed is popped.
        let r = unsafe {
            self.lua.exec_raw::<()>((&self.driver, s), |state| {
                let top = ffi::lua_gettop(state);
                ffi::lua_pushvalue(state, 1);
                ffi::lua_pushvalue(state, 2);
                let rc: c_int = ffi::lua_pcall(state, 1, 0, 0);
                if rc != 0 {
                    let mut len = 0usize;
                    let p = ffi::lua_tolstring(state, -1, &mut len);
                    let msg = if p.is_null() {
                        "(non-string error)".to_owned()
                    } else {
                        String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len)).into_owned()
                    };
                    panic!("fuzz driver failed (rc {rc}):\n{msg}");
                }
                assert_eq!(ffi::lua_gettop(state), top, "Lua stack not balanced after the driver");
            })
        };
        r.expect("exec_raw");
    }
}
