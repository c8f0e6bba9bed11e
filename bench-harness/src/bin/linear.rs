//! Linear-cost check (`just bench-linear`): decode time per input byte of
//! the adversarial shapes of `lua-binding/tests/adversarial.rs`, at input
//! sizes 1 KB, 10 KB, 100 KB, 1 MB, 10 MB and 100 MB, in one embedded,
//! vendored LuaJIT (or Lua 5.4 with `--no-default-features --features
//! lua54`) with protolua registered as `require` would load it.
//!
//! Each cell is the median of at least 3 samples (5 up to 1 MB); a sample
//! repeats the decode until it lasts 50 ms (once for the large sizes, with
//! a full GC before it). The table prints ns/byte per size, the max/min
//! ratio over the sizes measured, and flags a shape as superlinear when its
//! ns/byte at the largest size measured is more than 3x that at 1 KB.
//!
//! A shape stops growing when the next size would take longer than
//! `PROTOLUA_LINEAR_MAX_SECS` (default 20) per decode, predicted from the
//! last size and the last step's ns/byte growth; such cells print as
//! `skip` and the shape is flagged when it had already grown past 3x.
//!
//! Shapes: nesting (chains 100 levels deep, the default `max_depth`, the
//! breadth varying; up to 10 MB, as 100 MB would make 50 million tables),
//! one-byte fields (a singular bool, last wins; an unpacked repeated int32),
//! one big bytes field, a packed int32 run, a map with one key repeated and
//! one with distinct keys, a oneof switched between two members, unknown
//! fields interleaved with a known one, the same unknown fields in one run
//! (the control), a singular sub-message repeated (each occurrence merges),
//! and the same holding an unknown field.

use std::fmt::Write as _;
use std::time::Instant;

use mlua::{Function, Lua, Table};

const SIZES: [usize; 6] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];
const LABELS: [&str; 6] = ["1 KB", "10 KB", "100 KB", "1 MB", "10 MB", "100 MB"];
const FLAG_RATIO: f64 = 3.0;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_len(v: u64) -> usize {
    let mut n = 1;
    let mut v = v >> 7;
    while v != 0 {
        n += 1;
        v >>= 7;
    }
    n
}

/// Repeat `unit(i)` until the output holds at least `target` bytes.
fn fill(target: usize, mut unit: impl FnMut(usize, &mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::with_capacity(target + 64);
    let mut i = 0;
    while out.len() < target {
        unit(i, &mut out);
        i += 1;
    }
    out
}

/// A Node nested `levels` deep through `child` (field 2), innermost empty.
fn chain(levels: usize) -> Vec<u8> {
    let mut body = Vec::new();
    for _ in 0..levels {
        let mut outer = vec![0x12];
        varint(&mut outer, body.len() as u64);
        outer.extend_from_slice(&body);
        body = outer;
    }
    body
}

struct Shape {
    name: &'static str,
    /// Global name of the message handle (set up in `SETUP`).
    msg: &'static str,
    /// Largest size generated.
    max: usize,
    generate: fn(usize) -> Vec<u8>,
}

const SETUP: &str = r#"
protolua = require('protolua')
local C = protolua.load_file(FIXTURES .. '/descriptors/conformance.fds')
local A = protolua.load_file(FIXTURES .. '/descriptors/alltypes3.fds')
local H = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')
P3 = C:message('protobuf_test_messages.proto3.TestAllTypesProto3')
Node = A:message('protolua.test.Node')
Person = H:message('hello.Person')
-- One sample: `n` decodes of `s`; returns the seconds taken.
function sample(M, s, n, full_gc)
    if full_gc then collectgarbage('collect') end
    local t0 = now()
    for _ = 1, n do M:decode(s) end
    return now() - t0
end
"#;

fn shapes() -> Vec<Shape> {
    vec![
        Shape {
            name: "nesting 100 deep, breadth varies",
            msg: "Node",
            max: 10_000_000,
            generate: |target| {
                // Root (depth 1) → kid (2) → 98 more levels: depth 100.
                let kid = chain(98);
                fill(target, |_, out| {
                    out.push(0x1a); // kids = 3, LEN
                    varint(out, kid.len() as u64);
                    out.extend_from_slice(&kid);
                })
            },
        },
        Shape {
            name: "1-byte fields: bool, last wins",
            msg: "P3",
            max: usize::MAX,
            generate: |target| fill(target, |i, out| out.extend_from_slice(&[0x68, (i & 1) as u8])),
        },
        Shape {
            name: "1-byte fields: unpacked repeated",
            msg: "Person",
            max: usize::MAX,
            generate: |target| fill(target, |i, out| out.extend_from_slice(&[0x28, (i % 128) as u8])),
        },
        Shape {
            name: "big bytes field",
            msg: "P3",
            max: usize::MAX,
            generate: |target| {
                let n = target - 1 - varint_len(target as u64);
                let mut out = vec![0x7a];
                varint(&mut out, n as u64);
                out.extend((0..n).map(|i| (i as u32).wrapping_mul(2654435761).rotate_right(13) as u8));
                out
            },
        },
        Shape {
            name: "packed int32 run",
            msg: "P3",
            max: usize::MAX,
            generate: |target| {
                let n = target - 2 - varint_len(target as u64);
                let mut out = vec![0xfa, 0x01];
                varint(&mut out, n as u64);
                out.extend((0..n).map(|i| (i % 128) as u8));
                out
            },
        },
        Shape {
            name: "map: one key repeated",
            msg: "P3",
            max: usize::MAX,
            generate: |target| {
                fill(target, |i, out| out.extend_from_slice(&[0xc2, 0x03, 0x04, 0x08, 0x07, 0x10, (i % 128) as u8]))
            },
        },
        Shape {
            name: "map: distinct keys",
            msg: "P3",
            max: usize::MAX,
            generate: |target| {
                fill(target, |i, out| {
                    out.extend_from_slice(&[0xc2, 0x03]);
                    let len = 1 + varint_len(i as u64) + 2;
                    out.push(len as u8);
                    out.push(0x08);
                    varint(out, i as u64);
                    out.extend_from_slice(&[0x10, 0x01]);
                })
            },
        },
        Shape {
            name: "oneof switched",
            msg: "P3",
            max: usize::MAX,
            generate: |target| {
                fill(target, |i, out| {
                    if i % 2 == 0 {
                        out.extend_from_slice(&[0xf8, 0x06, (i % 128) as u8]) // oneof_uint32
                    } else {
                        out.extend_from_slice(&[0x8a, 0x07, 0x01, b'x']) // oneof_string
                    }
                })
            },
        },
        Shape {
            name: "unknown fields interleaved",
            msg: "P3",
            max: usize::MAX,
            generate: |target| {
                // optional_int32 = 1, then field 1000 (unknown) = i % 128.
                fill(target, |i, out| out.extend_from_slice(&[0x08, 0x01, 0xc0, 0x3e, (i % 128) as u8]))
            },
        },
        Shape {
            name: "unknown fields in one run",
            msg: "P3",
            max: usize::MAX,
            generate: |target| fill(target, |i, out| out.extend_from_slice(&[0xc0, 0x3e, (i % 128) as u8])),
        },
        Shape {
            name: "sub-message repeated (merge)",
            msg: "Node",
            max: usize::MAX,
            generate: |target| fill(target, |_, out| out.extend_from_slice(&[0x12, 0x00])),
        },
        Shape {
            name: "sub-message repeated, with unknown",
            msg: "Node",
            max: usize::MAX,
            generate: |target| fill(target, |i, out| out.extend_from_slice(&[0x12, 0x03, 0xc0, 0x3e, (i % 128) as u8])),
        },
    ]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

enum Cell {
    NsPerByte(f64),
    Skipped,
    NotApplicable,
}

fn main() -> mlua::Result<()> {
    let max_secs: f64 = std::env::var("PROTOLUA_LINEAR_MAX_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(20.0);
    let fixtures = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .canonicalize()
        .expect("fixtures folder next to bench-harness");

    // SAFETY: the harness needs the full standard library.
    let lua = unsafe { Lua::unsafe_new() };
    // SAFETY: luaopen_protolua follows the lua_CFunction contract.
    let open = unsafe { lua.create_c_function(protolua::luaopen_protolua) }?;
    let preload: Table = lua.globals().get::<Table>("package")?.get("preload")?;
    preload.set("protolua", open)?;
    let start = Instant::now();
    lua.globals().set("now", lua.create_function(move |_, ()| Ok(start.elapsed().as_secs_f64()))?)?;
    lua.globals().set("FIXTURES", fixtures.to_str().expect("utf-8 path"))?;
    lua.load(SETUP).set_name("@linear-setup").exec()?;
    let version: String = lua.load("return jit and jit.version or _VERSION").eval()?;
    let sample: Function = lua.globals().get("sample")?;

    let mut table = String::new();
    write!(table, "| shape |").unwrap();
    for l in LABELS {
        write!(table, " {l} |").unwrap();
    }
    writeln!(table, " max/min | largest / 1 KB | verdict |").unwrap();
    writeln!(table, "|---|{}---:|---:|---|", "---:|".repeat(LABELS.len())).unwrap();
    let mut flagged = Vec::new();

    for shape in shapes() {
        let msg: mlua::Value = lua.globals().get(shape.msg)?;
        let mut cells = Vec::new();
        let mut last: Option<(usize, f64, f64)> = None; // (bytes, seconds per decode, ns/B)
        let mut growth = 1.0f64;
        let mut stopped = false;
        for &target in &SIZES {
            if target > shape.max {
                cells.push(Cell::NotApplicable);
                continue;
            }
            if let Some((bytes, secs, _)) = last {
                let predicted = secs * (target as f64 / bytes as f64) * growth.max(1.0);
                if stopped || predicted > max_secs {
                    stopped = true;
                    cells.push(Cell::Skipped);
                    continue;
                }
            }
            let input = (shape.generate)(target);
            let bytes = input.len();
            let s = lua.create_string(&input)?;
            drop(input);
            let big = bytes >= 1_000_000;
            // Warm-up and calibration: one decode.
            let once: f64 = sample.call((&msg, &s, 1, big))?;
            let reps = if big { 1 } else { ((0.05 / once.max(1e-9)).ceil() as u32).clamp(1, 1_000_000) };
            let n_samples = if bytes <= 1_000_000 { 5 } else { 3 };
            let mut per_decode = Vec::new();
            for _ in 0..n_samples {
                let t: f64 = sample.call((&msg, &s, reps, big))?;
                per_decode.push(t / reps as f64);
            }
            let secs = median(per_decode);
            let ns_b = secs * 1e9 / bytes as f64;
            if let Some((_, _, prev)) = last {
                growth = ns_b / prev;
            }
            last = Some((bytes, secs, ns_b));
            cells.push(Cell::NsPerByte(ns_b));
            eprintln!("{:<36} {:>11} B  {:>10.3} ms/decode  {:>8.3} ns/B", shape.name, bytes, secs * 1e3, ns_b);
            drop(s);
            lua.gc_collect()?;
        }
        let measured: Vec<f64> = cells
            .iter()
            .filter_map(|c| match c {
                Cell::NsPerByte(v) => Some(*v),
                _ => None,
            })
            .collect();
        let (min, max) = measured.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let first_to_last = measured.last().unwrap() / measured[0];
        let superlinear = first_to_last > FLAG_RATIO || (stopped && growth > 1.5);
        let verdict = if superlinear {
            flagged.push(shape.name);
            if stopped { "**SUPERLINEAR** (stopped: next size too slow)" } else { "**SUPERLINEAR**" }
        } else {
            "linear"
        };
        write!(table, "| {} |", shape.name).unwrap();
        for c in &cells {
            match c {
                Cell::NsPerByte(v) => write!(table, " {v:.2} |").unwrap(),
                Cell::Skipped => write!(table, " skip |").unwrap(),
                Cell::NotApplicable => write!(table, " — |").unwrap(),
            }
        }
        writeln!(table, " {:.1} | {first_to_last:.1} | {verdict} |", max / min).unwrap();
    }

    println!(
        "protolua decode cost per byte on {version}: ns/byte, median of >= 3 samples per cell; \
         superlinear = ns/byte at the largest size measured > {FLAG_RATIO}x that at 1 KB\n"
    );
    print!("{table}");
    if flagged.is_empty() {
        println!("\nNo superlinear shape.");
    } else {
        println!("\nSuperlinear: {}", flagged.join("; "));
    }
    Ok(())
}
