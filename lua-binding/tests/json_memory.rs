//! The JSON methods' memory: steady-state calls of all four entry points
//! (`encode_json`, `decode_json`, `binary_to_json`, `json_to_binary`) make
//! no Rust heap allocation (the allocator counting Lua's own allocations
//! apart), on the matrix cells and on a message with maps, oneofs, nested
//! messages and the well-known types; failing calls, repeated, leave both
//! heaps flat and give the schema's buffers back (calls after them still
//! allocate nothing).

mod common;

use common::{FIXTURES, live_bytes, lua_with_protolua};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

const SETUP: &str = r#"
protolua = require('protolua')
local M = dofile(FIXTURES .. '/matrix.lua')
P = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
B = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds'):message('proto2_basic.BenchPayload')
T = protolua.load_file(FIXTURES .. '/descriptors/conformance.fds')
    :message('protobuf_test_messages.proto3.TestAllTypesProto3')
-- Maps (string and integer keys, message values), a oneof, repeated and
-- nested messages, escapes, bytes, and the well-known types.
local rich = [[{"optionalInt32": 7, "optionalString": "a\"b\\c\u00e9\n",
  "optionalBytes": "AAECAwQ=", "optionalNestedMessage": {"a": 5, "corecursive": {"optionalInt64": "-9"}},
  "repeatedInt32": [1, 2, 3], "repeatedString": ["x", "y"], "repeatedNestedMessage": [{"a": 1}, {"a": 2}],
  "mapInt32Int32": {"3": 4, "-1": 2}, "mapStringString": {"k": "v", "a\tb": "c"},
  "mapStringNestedMessage": {"m": {"a": 9}, "n": {"a": 10}},
  "oneofUint32": 12, "optionalTimestamp": "2020-01-02T03:04:05.5Z", "optionalDuration": "-1.25s",
  "optionalFieldMask": "fooBar,baz", "optionalStruct": {"a": [1, "two", true, null, {"b": {}}]},
  "optionalValue": {"x": 1.5}, "optionalAny": {"@type": "type.googleapis.com/protobuf_test_messages.proto3.TestAllTypesProto3",
  "optionalInt32": 3, "mapStringString": {"q": "r"}},
  "optionalInt64Wrapper": "5", "repeatedValue": [1, "s", null]}]]
cases = {
    { P, M.person('10B') }, { P, M.person('100B') }, { P, M.person('1KB') }, { P, M.person('10KB') },
    { B, M.bench('min') }, { B, M.bench('mid') }, { T, T:decode_json(rich) },
}
for _, c in ipairs(cases) do
    local msg, t = c[1], c[2]
    c.bytes = msg:encode(t)
    c.text = msg:encode_json(t)
    assert(msg:json_to_binary(c.text) == c.bytes, 'json_to_binary(encode_json(t)) ~= encode(t)')
    assert(msg:binary_to_json(c.bytes) == c.text, 'binary_to_json(encode(t)) ~= encode_json(t)')
end
function round(n)
    for _ = 1, n do
        for _, c in ipairs(cases) do
            local msg = c[1]
            msg:encode_json(c[2])
            msg:decode_json(c.text)
            msg:binary_to_json(c.bytes)
            msg:json_to_binary(c.text)
        end
    end
end
function steady_rust_allocs(n)
    round(20) -- warm: buffers grown, constructors cached
    local a = rust_allocs()
    local call = rust_allocs() - a -- what a call of rust_allocs costs
    local before = rust_allocs()
    round(n)
    return rust_allocs() - before - call
end
-- Failures half-way: bad text deep in a message, bad bytes, a bad table.
bad_texts = { '{"name": "x", "address": {"city": 5}}', '{"emails": ["a", 1]}', '{"name": "\255"}',
              '{"address": {"street": "s", "nope": 1}}', '{"luckyNumbers": [1, 2, 1e99]}', '{"name": "x"' }
bad_bytes = { '\10\200\1abc', '\34\3\10\1\255', '\255\255\255\255\255\255\255\255\255\255\255', '\10\2\255\254' }
bad_tables = { { name = 5 }, { address = { city = {} } }, { emails = { 'x', 7 } } }
function fail_round(n)
    for i = 1, n do
        local s = bad_texts[i % #bad_texts + 1]
        assert(not pcall(P.json_to_binary, P, s))
        assert(not pcall(P.decode_json, P, s))
        assert(not pcall(P.binary_to_json, P, bad_bytes[i % #bad_bytes + 1]))
        assert(not pcall(P.encode_json, P, bad_tables[i % #bad_tables + 1]))
    end
    collectgarbage('collect')
    collectgarbage('collect')
    return collectgarbage('count')
end
"#;

/// One test: the failing half reads the process-wide live bytes, so no
/// other test of this binary may allocate beside it.
#[test]
fn json_calls_allocate_nothing_in_rust_and_failures_leave_memory_flat() {
    let lua = lua_with_protolua();
    common::count_lua_apart(&lua);
    lua.globals().set("FIXTURES", FIXTURES).unwrap();
    lua.load(SETUP).exec().unwrap();
    let made: f64 = lua.load("return steady_rust_allocs(200)").eval().unwrap();
    assert_eq!(made, 0.0, "Rust allocations over 5,600 steady JSON calls");

    let round = |n: u32| -> (f64, isize) {
        let kb: f64 = lua.load(format!("return fail_round({n})")).eval().unwrap();
        (kb, live_bytes())
    };
    let (lua_before, rust_before) = round(2_000); // warm-up: buffers, interned strings
    let (lua_after, rust_after) = round(50_000);
    eprintln!("Lua heap {lua_before:.1} KB -> {lua_after:.1} KB; Rust heap {rust_before} B -> {rust_after} B");
    assert!(lua_after - lua_before < 64.0, "Lua heap grew by {} KB", lua_after - lua_before);
    assert!(rust_after - rust_before < 64 * 1024, "Rust heap grew by {} B", rust_after - rust_before);
    // The failures gave the schema's buffers back: calls after them reuse them.
    let made: f64 = lua.load("return steady_rust_allocs(50)").eval().unwrap();
    assert_eq!(made, 0.0, "Rust allocations over steady JSON calls after failures");
}
