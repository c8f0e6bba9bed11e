//! Schema load cost (`just bench-load`): `protolua.load_proto` of the
//! conformance suite's proto2/proto3 test protos (parsing the `.proto`
//! text with protox) against `protolua.load` of protoc's descriptor set of
//! the same files (`fixtures/descriptors/conformance_p23.fds`), in one
//! embedded LuaJIT (or Lua 5.4 with `--no-default-features --features
//! lua54`), as time per load and their ratio; then the Lua and Rust bytes
//! one loaded schema holds (100 schemas kept alive, divided), before and
//! after a reflection call decodes its descriptor pool.
//!
//! Each timing is the median of 7 samples; a sample repeats the load until
//! it lasts 100 ms.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

use mlua::{Function, Lua, Table};

/// Counts live heap bytes: the Rust side of a schema on LuaJIT (whose
/// allocator is its own); on Lua 5.4 mlua allocates Lua's memory here
/// too, so the Rust figure also holds the Lua one.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator, only counting sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        // SAFETY: same layout, forwarded.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LIVE.fetch_add(n as isize - l.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const SETUP: &str = r#"
local fixtures = ...
protolua = require('protolua')
local dir = fixtures .. '/proto/conformance'
local files = {
    dir .. '/conformance/conformance.proto',
    dir .. '/google/protobuf/test_messages_proto2.proto',
    dir .. '/google/protobuf/test_messages_proto3.proto',
}
local f = assert(io.open(fixtures .. '/descriptors/conformance_p23.fds', 'rb'))
local fds = f:read('*a')
f:close()
local ways = {
    load = function() return protolua.load(fds) end,
    load_proto = function() return protolua.load_proto(files, { import_paths = { dir } }) end,
}
function run(way, n)
    local fn = ways[way]
    for _ = 1, n do fn() end
end
kept = {}
function keep(way, n, reflect)
    kept = {}
    collectgarbage('collect')
    collectgarbage('collect')
    local before = collectgarbage('count')
    for i = 1, n do
        local s = ways[way]()
        if reflect then s:files() end
        kept[i] = s
    end
    collectgarbage('collect')
    collectgarbage('collect')
    return (collectgarbage('count') - before) * 1024 / n
end
function drop()
    kept = {}
    collectgarbage('collect')
    collectgarbage('collect')
end
"#;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Microseconds per load by `way`.
fn time(run: &Function, way: &str) -> mlua::Result<f64> {
    let mut n = 1u32;
    loop {
        let t = Instant::now();
        run.call::<()>((way, n))?;
        if t.elapsed().as_secs_f64() > 0.1 {
            break;
        }
        n *= 2;
    }
    let mut samples = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        run.call::<()>((way, n))?;
        samples.push(t.elapsed().as_secs_f64() * 1e6 / n as f64);
    }
    Ok(median(samples))
}

fn main() -> mlua::Result<()> {
    // SAFETY: the module needs the C API as a C module would.
    let lua = unsafe { Lua::unsafe_new() };
    // SAFETY: luaopen_protolua follows the lua_CFunction contract.
    let open = unsafe { lua.create_c_function(protolua::luaopen_protolua) }?;
    let preload: Table = lua.globals().get::<Table>("package")?.get("preload")?;
    preload.set("protolua", open)?;
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures");
    lua.load(SETUP).call::<()>(fixtures)?;
    let run: Function = lua.globals().get("run")?;
    let keep: Function = lua.globals().get("keep")?;
    let drop: Function = lua.globals().get("drop")?;
    let host = if cfg!(feature = "lua54") { "Lua 5.4" } else { "LuaJIT" };
    println!("schema load, conformance proto2/proto3 test protos ({host}, one process)");
    let load = time(&run, "load")?;
    let proto = time(&run, "load_proto")?;
    println!("  load(protoc set)        {load:>10.1} us");
    println!("  load_proto(.proto)      {proto:>10.1} us   ({:.2}x load)", proto / load);
    const N: i64 = 100;
    for (way, reflect) in [("load", false), ("load", true), ("load_proto", false), ("load_proto", true)] {
        drop.call::<()>(())?;
        let rust_before = LIVE.load(Ordering::Relaxed);
        let lua_bytes: f64 = keep.call((way, N, reflect))?;
        let rust = (LIVE.load(Ordering::Relaxed) - rust_before) as f64 / N as f64;
        let what = if reflect { " + reflection" } else { "" };
        println!("  held per schema, {way}{what}: Lua {:.1} KB, Rust {:.1} KB", lua_bytes / 1024.0, rust / 1024.0);
    }
    Ok(())
}
