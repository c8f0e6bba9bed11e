//! The benchmark matrix runner: embedded vendored LuaJIT, the matrix of
//! `../shared/matrix/MATRIX.md` run as a user would (a Lua loop calling
//! `Msg:encode(t)` / `Msg:decode(s)`), each cell warmed up, then
//! `REPS` repetitions of at least `BUDGET` seconds; prints the median and
//! the spread as a markdown table and writes JSON to `bench-harness/results/`.
//!
//! Allocation columns: Lua bytes per op (`collectgarbage('count')` with the
//! GC stopped, over 64 variants of each cell so every encode makes a new
//! string) and heap allocations per op (a counting global allocator, which
//! sees Lua's allocations too: mlua gives Lua a Rust allocator).
//!
//! Environment: `PROTOLUA_BENCH_BUDGET` (seconds per repetition, default
//! 0.5), `PROTOLUA_BENCH_REPS` (default 3).

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use mlua::{Lua, Table};

/// The system allocator, counting allocations (and reallocations) and
/// their bytes: the "heap allocs/op" column. mlua hands Lua a Rust
/// allocator, so this counts Lua's objects (tables, new strings) as well as
/// any Rust allocation of the codec: encode at 1/op is the result string
/// alone, i.e. the codec itself allocates nothing.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static ALLOC_BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to `System`, only adding counters.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        ALLOC_BYTES.fetch_add(layout.size() as u64, Relaxed);
        // SAFETY: caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        ALLOC_BYTES.fetch_add(new_size as u64, Relaxed);
        // SAFETY: caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() -> mlua::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let fixtures = root.join("../fixtures").canonicalize().expect("fixtures folder next to bench-harness");
    let budget: f64 = std::env::var("PROTOLUA_BENCH_BUDGET").ok().and_then(|v| v.parse().ok()).unwrap_or(0.5);
    let reps: u32 = std::env::var("PROTOLUA_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);

    // SAFETY: the harness needs the full standard library (jit, ffi).
    let lua = unsafe { Lua::unsafe_new() };
    // SAFETY: luaopen_protolua follows the lua_CFunction contract.
    let open = unsafe { lua.create_c_function(protolua::luaopen_protolua) }?;
    let preload: Table = lua.globals().get::<Table>("package")?.get("preload")?;
    preload.set("protolua", open)?;
    let start = Instant::now();
    lua.globals().set("now", lua.create_function(move |_, ()| Ok(start.elapsed().as_secs_f64()))?)?;
    lua.globals().set(
        "rust_allocs",
        lua.create_function(|_, ()| Ok((ALLOCS.load(Relaxed) as f64, ALLOC_BYTES.load(Relaxed) as f64)))?,
    )?;
    lua.globals().set("FIXTURES", fixtures.to_str().expect("utf-8 path"))?;
    lua.globals().set("BUDGET", budget)?;
    lua.globals().set("REPS", reps)?;
    lua.load("protolua = require('protolua')").exec()?;
    let version: String = lua.load("return jit and jit.version or _VERSION").eval()?;

    let rows: Table = lua.load(include_str!("../lua/matrix.lua")).set_name("@matrix.lua").eval()?;
    let mut table = String::new();
    let mut json = String::from("[\n");
    writeln!(table, "| message | size | bytes | direction | msgs/s | MB/s | Lua B/op | heap allocs/op | spread |")
        .unwrap();
    writeln!(table, "|---|---|---:|---|---:|---:|---:|---:|---:|").unwrap();
    for (i, row) in rows.sequence_values::<Table>().enumerate() {
        let row = row?;
        let schema: String = row.get("schema")?;
        let label: String = row.get("label")?;
        let dir: String = row.get("dir")?;
        let size: u64 = row.get("size")?;
        let msgs: f64 = row.get("msgs")?;
        let mbs: f64 = row.get("mbs")?;
        let spread: f64 = row.get("spread")?;
        let lua_bytes: f64 = row.get("lua_bytes")?;
        let rust_allocs: f64 = row.get("rust_allocs")?;
        let rust_bytes: f64 = row.get("rust_bytes")?;
        writeln!(
            table,
            "| {schema} | {label} | {size} | {dir} | {msgs:.0} | {mbs:.1} | {lua_bytes:.0} | {rust_allocs:.2} | {:.1} % |",
            spread * 100.0
        )
        .unwrap();
        if i > 0 {
            json.push_str(",\n");
        }
        write!(
            json,
            "  {{\"message\": \"{schema}\", \"size\": \"{label}\", \"bytes\": {size}, \"direction\": \"{dir}\", \
             \"msgs_per_s\": {msgs:.1}, \"mb_per_s\": {mbs:.3}, \"spread\": {spread:.4}, \
             \"lua_bytes_per_op\": {lua_bytes:.1}, \"heap_allocs_per_op\": {rust_allocs:.3}, \
             \"heap_bytes_per_op\": {rust_bytes:.1}}}"
        )
        .unwrap();
    }
    json.push_str("\n]\n");
    println!("protolua matrix on {version}: median of {reps} x {budget} s per cell, spread = (max-min)/median\n");
    print!("{table}");
    let out = root.join("results");
    std::fs::create_dir_all(&out).expect("results folder");
    let path = out.join("matrix-luajit.json");
    std::fs::write(&path, json).expect("write results");
    println!("\nJSON: {}", path.display());
    Ok(())
}
