//! `just bench-text`: the text format on the benchmark matrix, beside the
//! binary codec, on embedded LuaJIT (`bench-harness/lua/text.lua`). Prints
//! a markdown table of operations per second (median of
//! `PROTOLUA_BENCH_REPS` runs, each `PROTOLUA_BENCH_BUDGET` seconds).

use std::path::PathBuf;
use std::time::Instant;

use mlua::{Lua, Table};

const COLUMNS: [&str; 6] = ["encode", "decode", "encode_text", "decode_text", "binary_to_text", "text_to_binary"];

fn main() -> mlua::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let fixtures = root.join("../fixtures").canonicalize().expect("fixtures folder next to bench-harness");
    let budget: f64 = std::env::var("PROTOLUA_BENCH_BUDGET").ok().and_then(|v| v.parse().ok()).unwrap_or(0.3);
    let reps: usize = std::env::var("PROTOLUA_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    // SAFETY: the benchmark needs the full standard library (jit, ffi).
    let lua = unsafe { Lua::unsafe_new() };
    // SAFETY: luaopen_protolua follows the lua_CFunction contract.
    let open = unsafe { lua.create_c_function(protolua::luaopen_protolua) }?;
    let preload: Table = lua.globals().get::<Table>("package")?.get("preload")?;
    preload.set("protolua", open)?;
    let start = Instant::now();
    lua.globals().set("now", lua.create_function(move |_, ()| Ok(start.elapsed().as_secs_f64()))?)?;
    lua.globals().set("FIXTURES", fixtures.to_str().expect("utf-8 path"))?;
    lua.globals().set("BUDGET", budget)?;
    lua.load("protolua = require('protolua')").exec()?;
    let script = include_str!("../../lua/text.lua");
    let runs: Vec<Table> =
        (0..reps).map(|_| lua.load(script).set_name("@text.lua").eval::<Table>()).collect::<mlua::Result<_>>()?;
    println!("| cell | bytes | text bytes | {} |", COLUMNS.join(" | "));
    println!("|---|---:|---:|{}", "---:|".repeat(COLUMNS.len()));
    for i in 1..=runs[0].raw_len() {
        let row: Table = runs[0].get(i)?;
        let mut line = format!(
            "| {} | {} | {} |",
            row.get::<String>("cell")?,
            row.get::<u64>("bytes")?,
            row.get::<u64>("text_bytes")?
        );
        for col in COLUMNS {
            let mut xs: Vec<f64> = runs
                .iter()
                .map(|r| r.get::<Table>(i).and_then(|row| row.get::<f64>(col)))
                .collect::<mlua::Result<_>>()?;
            xs.sort_by(f64::total_cmp);
            line.push_str(&format!(" {:.0} |", xs[xs.len() / 2]));
        }
        println!("{line}");
    }
    println!(
        "\nops/second, median of {reps} runs of {budget} s each ({})",
        lua.load("return jit and jit.version or _VERSION").eval::<String>()?
    );
    Ok(())
}
