//! Lua-state safety: out of memory in the middle of a decode or encode
//! (mlua's memory-limited allocator, on LuaJIT and Lua 5.4; where a Lua's
//! allocator cannot be limited, the test says so and skips), independent states in
//! several threads at once, and 10,000 schemas loaded and dropped. Memory is
//! checked numerically: `collectgarbage('count')` for Lua and a counting
//! global allocator for Rust.
//!
//! Run on both runtimes: `cargo test -p protolua --test state` (LuaJIT) and
//! `cargo test -p protolua --no-default-features --features lua54,vendored
//! --test state`.

mod common;

use std::sync::Mutex;

use common::{FIXTURES, live_bytes, lua_with_protolua};
use mlua::Lua;

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

/// The heap checks read one process-wide counter: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn new_lua() -> Lua {
    let lua = lua_with_protolua();
    lua.globals().set("FIXTURES", FIXTURES).unwrap();
    lua.load("protolua = require('protolua')").exec().unwrap();
    lua
}

// The sweep runs with LuaJIT's compiler off: under out-of-memory LuaJIT's
// trace compiler leaves its own GC accounting off (lj_opt_loop.c sets
// `sizesubst` before the allocation that fails, then frees NULL with that
// size), which its debug build asserts at `lua_close`. That is LuaJIT's
// accounting, not protolua's memory; the codec's paths are the same
// interpreted (the fetchers then run in the interpreter).
const OOM_SETUP: &str = r#"
if jit then jit.off(); jit.flush() end
local s = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')
P = s:message('hello.Person')
big = { name = string.rep('n', 300), age = 7, emails = {}, address = { street = 's', city = 'c', zip = 'z' },
        lucky_numbers = {} }
for i = 1, 300 do big.emails[i] = 'user' .. i .. '@example.com'; big.lucky_numbers[i] = i * 7 end
big_bytes = P:encode(big)
-- One attempt under the current limit: each call either works or fails
-- with a memory error (or, for decode, a protolua error that could not be
-- formatted for lack of memory, which is also a memory error).
function attempt()
    local ok, e = pcall(P.decode, P, big_bytes)
    if not ok and not tostring(e):find('memory') then error('decode: unexpected error: ' .. tostring(e)) end
    local ok2, e2 = pcall(P.encode, P, big)
    if not ok2 and not tostring(e2):find('memory') then error('encode: unexpected error: ' .. tostring(e2)) end
    return (ok and 1 or 0) + (ok2 and 2 or 0)
end
function check_working()
    assert(same(P:decode(big_bytes), big), 'decode after OOM')
    assert(P:encode(big) == big_bytes, 'encode after OOM')
    assert(P:encode({ name = 'x' }) == '\10\1x', 'small encode after OOM')
end
"#;

/// `same(a, b)`, deep equality of decoded tables, for the OOM setups.
const SAME_LUA: &str = r#"
function same(a, b)
    if type(a) ~= 'table' or type(b) ~= 'table' then return a == b end
    for k, v in pairs(a) do if not same(v, b[k]) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
end
"#;

/// Lua's and Rust's heap sizes after two full collections.
fn settled_heaps(lua: &Lua) -> (usize, isize) {
    lua.gc_collect().unwrap();
    lua.gc_collect().unwrap();
    (lua.used_memory(), live_bytes())
}

/// Neither heap grew by 16 KiB or more from `before` to `after`.
fn assert_heaps_flat((lua0, rust0): (usize, isize), (lua1, rust1): (usize, isize)) {
    assert!(lua1 < lua0 + 16 * 1024, "Lua heap grew by {} B", lua1 as isize - lua0 as isize);
    assert!(rust1 - rust0 < 16 * 1024, "Rust heap grew by {} B", rust1 - rust0);
}

/// A state with `setup` run (it defines `attempt()` and `check_working()`),
/// or `None` where this Lua's allocator cannot be limited (said on stderr).
fn oom_lua(setup: &str) -> Option<Lua> {
    let lua = new_lua();
    lua.load(SAME_LUA).exec().unwrap();
    lua.load(setup).exec().unwrap();
    if lua.set_memory_limit(0).is_err() {
        eprintln!("memory limits are not available for this Lua (LuaJIT's allocator): OOM test skipped");
        return None;
    }
    Some(lua)
}

/// `attempt()` with Lua's memory limited to `limit(used)` bytes, `used`
/// read after a full collection; then `check_working()`. Its outcome, or 0
/// when there was so little room that the call itself (outside
/// `attempt`'s pcalls) failed.
fn attempt_limited(lua: &Lua, limit: impl FnOnce(usize) -> usize) -> u32 {
    let attempt: mlua::Function = lua.globals().get("attempt").unwrap();
    lua.gc_collect().unwrap();
    let limit = limit(lua.used_memory());
    lua.set_memory_limit(limit).unwrap();
    let r = attempt.call::<u32>(());
    lua.set_memory_limit(0).unwrap();
    let r = match r {
        Ok(r) => r,
        Err(mlua::Error::MemoryError(_)) => 0,
        Err(e) => panic!("limit {limit}: {e}"),
    };
    lua.load("check_working()").exec().unwrap();
    r
}

#[test]
fn out_of_memory_mid_decode_or_encode_leaks_nothing_and_the_state_keeps_working() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(lua) = oom_lua(OOM_SETUP) else { return };
    let attempt = |limit: usize| attempt_limited(&lua, |_| limit);
    // Limits from "no room at all" up to "enough": every allocation point in
    // between fails once somewhere in a sweep.
    // After a full collection, so that the setup's garbage is not headroom.
    lua.gc_collect().unwrap();
    lua.gc_collect().unwrap();
    let base = lua.used_memory();
    let sweep = || {
        let (mut failed, mut worked) = (0, 0);
        // 32-byte steps over the first 16 KiB, where a decode or encode
        // runs out (the constructor path's decode needs ~5 KiB there), then
        // 128-byte ones.
        for extra in (0..16 * 1024).step_by(32).chain((16 * 1024..96 * 1024).step_by(128)) {
            match attempt(base + extra) {
                3 => worked += 1,
                _ => failed += 1,
            }
        }
        (failed, worked)
    };
    // The first sweeps are the warm-up (interned strings, buffers, caches,
    // the string table's size; measured on LuaJIT: memory stops moving
    // after the second or third); the next must leave memory where it was.
    for _ in 0..3 {
        sweep();
    }
    let before = settled_heaps(&lua);
    let (failed, worked) = sweep();
    assert!(failed > 50, "the sweep should hit out-of-memory often (failed {failed})");
    assert!(worked > 0, "the sweep should reach a limit where both calls work");
    let after = settled_heaps(&lua);
    eprintln!("OOM sweep: {failed} limits failed, {worked} worked; (Lua B, Rust heap B) {before:?} -> {after:?}");
    assert_heaps_flat(before, after);
}

// Out of memory while a small decode makes its shape constructor (LuaJIT:
// src/shape_ctor.rs; on Lua 5.4 the same decodes take the C API path):
// each attempt gets a fresh schema, so its handle's cache is empty and the
// decode under the limit generates, compiles and caches the constructor.
// Where that runs out of memory, the decode takes the C API path (and
// works if that has room): `attempt` tells the three outcomes apart by the
// cache, `Msg:decode`'s upvalue 21.
const CTOR_OOM_SETUP: &str = r#"
if jit then jit.off(); jit.flush() end
local fds = FIXTURES .. '/descriptors/hello.fds'
small = { name = 'Alexey', age = 30 }
small_bytes = protolua.load_file(fds):message('hello.Person'):encode(small)
function prepare() P = protolua.load_file(fds):message('hello.Person') end
-- 0: a memory error; 1: decoded, no constructor cached; 2: decoded with one.
function attempt()
    local ok, e = pcall(P.decode, P, small_bytes)
    if not ok and not tostring(e):find('memory') then error('decode: unexpected error: ' .. tostring(e)) end
    if not ok then return 0 end
    local name, cache = debug.getupvalue(P.decode, 21)
    return (name and cache[0] == 1) and 2 or 1
end
function check_working()
    for _ = 1, 2 do
        local t = P:decode(small_bytes)
        assert(t.name == 'Alexey' and t.age == 30 and next(t, next(t, next(t))) == nil, 'decode after OOM')
    end
    P = nil
end
"#;

// The same for the constructors of the general walk (LuaJIT): a Person
// whose constructors are cached in the schema's constructor table (the
// key table's [-1], the key table being `Msg:decode`'s upvalue 1, its [0]
// their count). With `EMAILS` emails it is over 2 KB (70: the whole-tree
// constructor is skipped, and the root and the address each get one from
// `shape_ctor::find_message_ctor`) or under (1: one whole-tree constructor,
// src/tree_ctor.rs); `BUILT` is the count once they are made. Where making
// one runs out of memory, the table is made through the C API.
const PERSON_CTOR_OOM_SETUP: &str = r#"
if jit then jit.off(); jit.flush() end
local fds = FIXTURES .. '/descriptors/hello.fds'
local emails = {}
for i = 1, EMAILS do emails[i] = string.format('person.name.%04d@mail.example.com', i) end
mid = { name = 'Alexey', age = 30, emails = emails,
        address = { street = 'Lenina 12', city = 'Moscow', zip = '101000' }, lucky_numbers = { 0, 37, 74, 111 } }
mid_bytes = protolua.load_file(fds):message('hello.Person'):encode(mid)
assert((#mid_bytes > 2048) == (EMAILS == 70))
function prepare() P = protolua.load_file(fds):message('hello.Person') end
-- 0: a memory error; 1: decoded, not all constructors cached; 2: all.
function attempt()
    local ok, e = pcall(P.decode, P, mid_bytes)
    if not ok and not tostring(e):find('memory') then error('decode: unexpected error: ' .. tostring(e)) end
    if not ok then return 0 end
    assert(same(e, mid), 'decoded under the limit')
    local name, keys = debug.getupvalue(P.decode, 1)
    local ctors = name and keys[-1]
    return (ctors and ctors[0] == BUILT) and 2 or 1
end
function check_working()
    for _ = 1, 2 do assert(same(P:decode(mid_bytes), mid), 'decode after OOM') end
    P = nil
end
"#;

/// [`PERSON_CTOR_OOM_SETUP`] with `emails` emails, `built` constructors
/// once made.
fn person_ctor_setup(emails: u32, built: u32) -> String {
    format!("EMAILS, BUILT = {emails}, {built}\n{PERSON_CTOR_OOM_SETUP}")
}

/// Sweep limits of +0..+8 KiB over `setup`'s `attempt` (outcomes 0, 1
/// and 2: failed, decoded without its constructors, decoded with them),
/// a fresh schema each (`prepare`), twice to warm up and once measured;
/// the heaps must stay flat, and on LuaJIT every outcome must occur.
fn constructor_oom_sweep(setup: &str, what: &str) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(lua) = oom_lua(setup) else { return };
    let prepare: mlua::Function = lua.globals().get("prepare").unwrap();
    let sweep = || {
        let mut outcomes = [0u32; 3];
        for extra in (0..8 * 1024).step_by(32) {
            prepare.call::<()>(()).unwrap();
            outcomes[attempt_limited(&lua, |used| used + extra) as usize] += 1;
        }
        outcomes
    };
    for _ in 0..2 {
        sweep();
    }
    let before = settled_heaps(&lua);
    let [failed, fallback, built] = sweep();
    // (Lua 5.4's decodes here fit in what its emergency collection frees.)
    if cfg!(feature = "luajit") {
        assert!(failed > 0, "{what}: the sweep should reach limits where the decode fails");
        assert!(fallback > 0, "{what}: some limits should leave a constructor unmade and the C API path working");
        assert!(built > 0, "{what}: the sweep should reach limits where the constructors are made");
    }
    let after = settled_heaps(&lua);
    eprintln!(
        "{what} OOM sweep: {failed} limits failed, {fallback} decoded without a constructor, {built} with; \
         (Lua B, Rust heap B) {before:?} -> {after:?}"
    );
    assert_heaps_flat(before, after);
}

#[test]
fn out_of_memory_making_a_shape_constructor_leaks_nothing_and_the_state_keeps_working() {
    constructor_oom_sweep(CTOR_OOM_SETUP, "root constructor");
}

#[test]
fn out_of_memory_making_a_message_constructor_leaks_nothing_and_the_state_keeps_working() {
    constructor_oom_sweep(&person_ctor_setup(70, 2), "message constructors");
}

#[test]
fn out_of_memory_making_a_tree_constructor_leaks_nothing_and_the_state_keeps_working() {
    constructor_oom_sweep(&person_ctor_setup(1, 1), "tree constructor");
}

const THREAD_BODY: &str = r#"
local hello = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')
local p2 = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds')
local P, B = hello:message('hello.Person'), p2:message('proto2_basic.BenchPayload')
local id = ...
for i = 1, 20000 do
    local t = { name = 'thread' .. id, age = i, emails = { tostring(id), tostring(i) } }
    local d = P:decode(P:encode(t))
    assert(d.name == t.name and d.age == i and d.emails[2] == tostring(i), 'thread ' .. id .. ' Person ' .. i)
    local b = B:decode(B:encode({ id = id * 100000 + i, name = 'b' .. i }))
    assert(b.id == id * 100000 + i and b.name == 'b' .. i, 'thread ' .. id .. ' BenchPayload ' .. i)
end
return id
"#;

#[test]
fn independent_states_in_several_threads_do_not_interfere() {
    let threads: Vec<_> = (1..=4)
        .map(|id: u32| {
            std::thread::spawn(move || {
                let lua = new_lua();
                lua.load(THREAD_BODY).call::<u32>(id).unwrap()
            })
        })
        .collect();
    for (i, t) in threads.into_iter().enumerate() {
        assert_eq!(t.join().expect("thread panicked"), i as u32 + 1);
    }
}

const SCHEMAS: &str = r#"
local f = assert(io.open(FIXTURES .. '/descriptors/proto2_basic.fds', 'rb'))
fds = f:read('*a')
f:close()
function load_drop(n)
    for i = 1, n do
        local s = protolua.load(fds)
        local B = s:message('proto2_basic.BenchPayload')
        assert(B:decode(B:encode({ id = i, name = 'x' })).id == i)
        if i % 100 == 0 then collectgarbage('collect') end
    end
    collectgarbage('collect')
    collectgarbage('collect')
    return collectgarbage('count')
end
"#;

#[test]
fn loading_and_dropping_10000_schemas_leaves_memory_flat() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lua = new_lua();
    lua.load(SCHEMAS).exec().unwrap();
    let round = |n: u32| -> (f64, isize) {
        let kb: f64 = lua.load(format!("return load_drop({n})")).eval().unwrap();
        (kb, live_bytes())
    };
    // The first rounds grow the state once (string table, GC pace) and then
    // stay put: measure after a warm-up of its own size.
    round(5_000);
    let (lua0, rust0) = round(5_000);
    let (lua1, rust1) = round(10_000);
    eprintln!("10,000 schemas: Lua {lua0:.1} -> {lua1:.1} KB, Rust heap {rust0} -> {rust1} B");
    assert!(lua1 - lua0 < 64.0, "Lua heap grew by {} KB", lua1 - lua0);
    assert!(rust1 - rust0 < 64 * 1024, "Rust heap grew by {} B", rust1 - rust0);
}
