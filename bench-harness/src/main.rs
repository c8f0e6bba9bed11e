//! The benchmark matrix runner: embedded vendored LuaJIT (or Lua 5.4 with
//! `--no-default-features --features lua54`), the matrix of
//! `../shared/matrix/MATRIX.md` run as a user would (a Lua loop calling
//! `Msg:encode(t)` / `Msg:decode(s)`), each cell warmed up, then `REPS`
//! repetitions of at least `BUDGET` seconds; prints the median and the
//! spread as a markdown table and writes JSON to `bench-harness/results/`.
//!
//! Floors ([`floor`]): in every repetition the cell's floor runs right after
//! protolua for the same budget (A B A B …); the floor ratio is the median
//! of the per-repetition protolua-time / floor-time ratios.
//!
//! Allocation columns, GC stopped, over 64 variants of each cell so that
//! every encode makes a new string: Lua bytes per op
//! (`collectgarbage('count')`), and Rust heap allocations and bytes per op.
//! mlua gives Lua a Rust allocator, so the counting global allocator sees
//! Lua's objects too; the harness wraps the state's allocator to count
//! those separately and reports the difference: what Rust code (the codec,
//! mlua) allocated.
//!
//! Environment: `PROTOLUA_BENCH_BUDGET` (seconds per repetition, default
//! 0.5), `PROTOLUA_BENCH_REPS` (default 3), `PROTOLUA_BENCH_CELLS` (only
//! these cells, e.g. `Person/10B,BenchPayload/min`; for profiling one cell
//! with its floor under callgrind; the JSON then goes to
//! `cells-<host>.json`, not over the full matrix's), `PROTOLUA_BENCH_STRICT`
//! (set: encode rows also time the strict-key floors, walk and count, and
//! a second table gives them against the floor and protolua against the
//! faster of them; see [`floor`]), `PROTOLUA_BENCH_CLOCK` (`thread`: time
//! with this thread's CPU time, `CLOCK_THREAD_CPUTIME_ID`, so time spent
//! descheduled on a loaded machine does not count; default: the monotonic
//! clock).

// `L` is the Lua state, as in the C API.
#![allow(non_snake_case)]

mod counting;
mod floor;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use mlua::{Lua, Table};

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
    // SAFETY: the state is this thread's only one, used by no one else yet.
    let lua_via_rust = unsafe { counting::count_lua_allocs(&lua) }?;
    lua.globals().set(
        "protolua_floors",
        // SAFETY: make_floors follows the lua_CFunction contract.
        unsafe { lua.create_c_function(floor::make_floors) }?,
    )?;
    let thread_clock = std::env::var("PROTOLUA_BENCH_CLOCK").is_ok_and(|c| c == "thread");
    if thread_clock {
        lua.globals().set("now", lua.create_function(|_, ()| Ok(thread_cpu_seconds()))?)?;
    } else {
        let start = Instant::now();
        lua.globals().set("now", lua.create_function(move |_, ()| Ok(start.elapsed().as_secs_f64()))?)?;
    }
    lua.globals().set("rust_allocs", lua.create_function(move |_, ()| Ok(counting::rust_counts(lua_via_rust)))?)?;
    lua.globals().set("FIXTURES", fixtures.to_str().expect("utf-8 path"))?;
    lua.globals().set("BUDGET", budget)?;
    lua.globals().set("REPS", reps)?;
    if std::env::var_os("PROTOLUA_BENCH_STRICT").is_some() {
        lua.globals().set("STRICT", true)?;
    }
    let cells_only = match std::env::var("PROTOLUA_BENCH_CELLS") {
        Ok(cells) => {
            lua.globals().set("CELLS", cells)?;
            true
        }
        Err(_) => false,
    };
    lua.load("protolua = require('protolua')").exec()?;
    let version: String = lua.load("return jit and jit.version or _VERSION").eval()?;

    let rows: Table = lua.load(include_str!("../lua/matrix.lua")).set_name("@matrix.lua").eval()?;
    let mut table = String::new();
    let mut strict = String::new();
    let mut ctor = String::new();
    let mut json = String::from("[\n");
    writeln!(
        table,
        "| message | size | bytes | direction | msgs/s | MB/s | spread | time / floor | ratio spread | Lua B/op | floor Lua B/op | Rust allocs/op | Rust B/op |"
    )
    .unwrap();
    writeln!(table, "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|").unwrap();
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
        let ratio: f64 = row.get("floor_ratio")?;
        let ratio_spread: f64 = row.get("floor_ratio_spread")?;
        let floor_lua: f64 = row.get("floor_lua_bytes")?;
        writeln!(
            table,
            "| {schema} | {label} | {size} | {dir} | {msgs:.0} | {mbs:.1} | {:.1} % | {ratio:.2} | {:.1} % | {lua_bytes:.0} | {floor_lua:.0} | {rust_allocs:.2} | {rust_bytes:.0} |",
            spread * 100.0,
            ratio_spread * 100.0
        )
        .unwrap();
        if let Ok(strict_ratio) = row.get::<f64>("strict_ratio") {
            let walk: f64 = row.get("walk_floor_ratio")?;
            let count: f64 = row.get("count_floor_ratio")?;
            let strict_spread: f64 = row.get("strict_ratio_spread")?;
            writeln!(
                strict,
                "| {schema} | {label} | {ratio:.2} | {walk:.2} | {count:.2} | {:.2} | {strict_ratio:.2} | {:.1} % |",
                walk.min(count),
                strict_spread * 100.0
            )
            .unwrap();
        }
        // Decode rows: the constructor floor too (see `floor`).
        let mut ctor_json = String::new();
        if let Ok(ctor_ratio) = row.get::<f64>("ctor_ratio") {
            let ctor_spread: f64 = row.get("ctor_ratio_spread")?;
            let ctor_lua: f64 = row.get("ctor_lua_bytes")?;
            // The parse + constructor floor, when the floors have a parser.
            let pctor: Option<f64> = row.get("pctor_ratio")?;
            let pctor_spread: Option<f64> = row.get("pctor_ratio_spread")?;
            let cell = |x: Option<f64>, scale: f64, digits: usize, unit: &str| {
                x.map_or_else(|| "–".to_string(), |x| format!("{:.digits$}{unit}", x * scale))
            };
            writeln!(
                ctor,
                "| {schema} | {label} | {ratio:.2} | {ctor_ratio:.2} | {:.1} % | {} | {} | {lua_bytes:.0} | {ctor_lua:.0} |",
                ctor_spread * 100.0,
                cell(pctor, 1.0, 2, ""),
                cell(pctor_spread, 100.0, 1, " %"),
            )
            .unwrap();
            ctor_json = format!(
                ", \"ctor_ratio\": {ctor_ratio:.4}, \"ctor_ratio_spread\": {ctor_spread:.4}, \
                 \"ctor_lua_bytes_per_op\": {ctor_lua:.1}"
            );
            if let (Some(p), Some(ps)) = (pctor, pctor_spread) {
                write!(ctor_json, ", \"pctor_ratio\": {p:.4}, \"pctor_ratio_spread\": {ps:.4}").unwrap();
            }
        }
        if i > 0 {
            json.push_str(",\n");
        }
        write!(
            json,
            "  {{\"message\": \"{schema}\", \"size\": \"{label}\", \"bytes\": {size}, \"direction\": \"{dir}\", \
             \"msgs_per_s\": {msgs:.1}, \"mb_per_s\": {mbs:.3}, \"spread\": {spread:.4}, \
             \"floor_ratio\": {ratio:.4}, \"floor_ratio_spread\": {ratio_spread:.4}, \
             \"lua_bytes_per_op\": {lua_bytes:.1}, \"floor_lua_bytes_per_op\": {floor_lua:.1}, \
             \"rust_allocs_per_op\": {rust_allocs:.3}, \"rust_bytes_per_op\": {rust_bytes:.1}{ctor_json}}}"
        )
        .unwrap();
    }
    json.push_str("\n]\n");
    println!(
        "protolua matrix on {version}: median of {reps} x {budget} s per cell{clock}, spread = (max-min)/median; \
         time / floor = median over repetitions of floor msgs/s / protolua msgs/s (A B A B ...)\n",
        clock = if thread_clock { " (thread CPU time)" } else { "" }
    );
    print!("{table}");
    if !strict.is_empty() {
        println!(
            "\nStrict-key encode floors (medians over the same repetitions): the walk and count floors' time \
             against the floor's, and protolua's time against the faster strict floor's.\n"
        );
        println!(
            "| message | size | protolua / floor | walk floor / floor | count floor / floor | best strict floor / floor | protolua / best strict floor | its spread |"
        );
        println!("|---|---|---:|---:|---:|---:|---:|---:|");
        print!("{strict}");
    }
    if !ctor.is_empty() {
        println!(
            "\nDecode against the constructor floor and the parse + constructor floor (floor.rs; medians over \
             the same repetitions): time / constructor floor = constructor floor msgs/s / protolua msgs/s.\n"
        );
        println!(
            "| message | size | time / floor | time / constructor floor | its spread | time / parse + constructor floor | its spread | Lua B/op | constructor floor Lua B/op |"
        );
        println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
        print!("{ctor}");
    }
    let out = root.join("results");
    std::fs::create_dir_all(&out).expect("results folder");
    let host = if cfg!(feature = "lua54") { "lua54" } else { "luajit" };
    // A run of some cells only must not replace the full matrix the chart
    // is drawn from.
    let name = if cells_only { format!("cells-{host}.json") } else { format!("matrix-{host}.json") };
    let path = out.join(name);
    std::fs::write(&path, json).expect("write results");
    println!("\nJSON: {}", path.display());
    Ok(())
}

/// This thread's CPU time in seconds (`PROTOLUA_BENCH_CLOCK=thread`).
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID
    // exists on every Linux the harness runs on.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
