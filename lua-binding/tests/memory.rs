//! Failing (and succeeding) encodes and decodes, repeated many times, leave
//! both the Rust heap and the Lua heap flat: checked numerically with a
//! counting global allocator and `collectgarbage('count')`. Steady-state
//! decodes make no Rust allocation at all (the allocator counting Lua's
//! own allocations apart).

mod common;

use common::{FIXTURES, live_bytes, lua_with_protolua};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

const SETUP: &str = r#"
protolua = require('protolua')
local s = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')
Person = s:message('hello.Person')
good = { name = 'Alexey', age = 30, emails = { 'a@b.c', 'd@e.f' }, address = { city = 'Moscow' },
         lucky_numbers = { 1, 2, 3 } }
good_bytes = Person:encode(good)
bad_tables = {
    { name = 5 },
    { age = 2 ^ 40 },
    { emails = { 'x', 7 } },
    { address = { city = '\255' } },
    { nope = 1 },
    { lucky_numbers = { 1.5 } },
}
bad_bytes = { good_bytes:sub(1, #good_bytes - 1), '\0\0', '\255\255\255\255\255\255\255\255\255\255\255',
              '\10\200\1abc', '\34\3\10\1\255' }
function round(n)
    for i = 1, n do
        local t = bad_tables[i % #bad_tables + 1]
        assert(not pcall(Person.encode, Person, t))
        local b = bad_bytes[i % #bad_bytes + 1]
        assert(not pcall(Person.decode, Person, b))
        if i % 10 == 0 then
            assert(Person:decode(Person:encode(good)).name == 'Alexey')
        end
    end
    collectgarbage('collect')
    collectgarbage('collect')
    return collectgarbage('count')
end
"#;

#[test]
fn failing_codec_calls_leave_memory_flat() {
    let lua = lua_with_protolua();
    lua.globals().set("FIXTURES", FIXTURES).unwrap();
    lua.load(SETUP).exec().unwrap();

    let round = |n: u32| -> (f64, isize) {
        let kb: f64 = lua.load(format!("return round({n})")).eval().unwrap();
        (kb, live_bytes())
    };
    let (lua_before, rust_before) = round(20_000); // warm-up: buffers, interned strings
    let (lua_after, rust_after) = round(1_000_000);
    eprintln!("Lua heap {lua_before:.1} KB -> {lua_after:.1} KB; Rust heap {rust_before} B -> {rust_after} B");
    assert!(lua_after - lua_before < 64.0, "Lua heap grew by {} KB", lua_after - lua_before);
    assert!(rust_after - rust_before < 64 * 1024, "Rust heap grew by {} B", rust_after - rust_before);
}

/// Steady-state decodes make no Rust allocation, also when they alternate
/// between cached whole-tree constructors (each switch rewrites the
/// memoised signature and its program in their own buffers), go through
/// the per-message constructors, or build arrays in bulk.
#[test]
fn steady_decodes_allocate_nothing_in_rust() {
    let lua = lua_with_protolua();
    common::count_lua_apart(&lua);
    lua.globals().set("FIXTURES", FIXTURES).unwrap();
    let made: f64 = lua
        .load(
            r#"
local protolua = require('protolua')
local M = dofile(FIXTURES .. '/matrix.lua')
local P = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
local B = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds'):message('proto2_basic.BenchPayload')
local inputs = {
    { P, P:encode({ name = 'x', lucky_numbers = { 1, 2, 3 } }) },
    { P, P:encode({ name = 'y', emails = { 'a', 'b' }, address = { city = 'c' } }) },
    { P, P:encode(M.person('1KB')) },
    { P, P:encode(M.person('10KB')) },
    { B, B:encode(M.bench('mid')) },
    { B, B:encode(M.bench('min')) },
}
local function round(n)
    for _ = 1, n do
        for _, c in ipairs(inputs) do c[1]:decode(c[2]) end
    end
end
round(50) -- warm: constructors compiled and cached, memo buffers grown
local a = rust_allocs()
local call = rust_allocs() - a -- what a call of rust_allocs costs
local before = rust_allocs()
round(500)
return rust_allocs() - before - call
"#,
        )
        .eval()
        .unwrap();
    assert_eq!(made, 0.0, "Rust allocations over 3,000 steady decodes");
}
