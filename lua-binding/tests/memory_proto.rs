//! `protolua.parse` (succeeding and failing) and reflection calls, repeated
//! 10,000 times each, leave the Rust and Lua heaps flat (a counting global
//! allocator and `collectgarbage('count')`).

mod common;

use common::{FIXTURES, live_bytes, lua_with_protolua};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

const SETUP: &str = r#"
protolua = require('protolua')
good = [[
syntax = "proto3";
package m;
import "google/protobuf/timestamp.proto";
import "dep.proto";
message A { int32 a = 1; google.protobuf.Timestamp at = 2; B b = 3; map<string, B> m = 4; }
service S { rpc Call(A) returns (B); }
]]
sources = { ['dep.proto'] = 'syntax = "proto3"; package m; message B { string s = 1 [deprecated = true]; }' }
bad = {
    'syntax = "proto3"; message A { int32 a = ; }',
    'syntax = "proto3"; message A { Nope a = 1; }',
    'syntax = "proto3"; import "missing.proto";',
    'edition = "2023";',
    'syntax = "proto3"; message A {} message A {}',
}
function round(n)
    for i = 1, n do
        local s = protolua.parse(good, { name = 'a.proto', sources = sources })
        if i % 10 == 0 then
            assert(s:method('/m.S/Call').input == s:message('m.A'))
            assert(s:message('m.B'):fields()[1].options.deprecated == true)
            assert(#s:descriptor_set() > 0)
        end
        assert(not pcall(protolua.parse, bad[i % #bad + 1], { name = 'x.proto' }))
    end
    -- LuaJIT's traces keep the closures they were recorded with (each
    -- handle's bound methods) until flushed: flush, so that only leaks count.
    if jit then jit.flush() end
    collectgarbage('collect')
    collectgarbage('collect')
    return collectgarbage('count')
end
"#;

#[test]
fn parse_and_reflection_leave_memory_flat() {
    let lua = lua_with_protolua();
    lua.globals().set("FIXTURES", FIXTURES).unwrap();
    lua.load(SETUP).exec().unwrap();
    let round = |n: u32| -> (f64, isize) {
        let kb: f64 = lua.load(format!("return round({n})")).eval().unwrap();
        (kb, live_bytes())
    };
    let (lua_before, rust_before) = round(500); // warm-up: the global well-known pool, interned strings
    let (lua_after, rust_after) = round(10_000);
    eprintln!("Lua heap {lua_before:.1} KB -> {lua_after:.1} KB; Rust heap {rust_before} B -> {rust_after} B");
    assert!(lua_after - lua_before < 64.0, "Lua heap grew by {} KB", lua_after - lua_before);
    assert!(rust_after - rust_before < 64 * 1024, "Rust heap grew by {} B", rust_after - rust_before);
}
