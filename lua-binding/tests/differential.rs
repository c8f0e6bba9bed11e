//! Differential test against the PyPI `protobuf` package (upb), see
//! `tests/differential/README.md`: random TestAllTypesProto2/3 payloads made
//! by Python go through protolua decode + encode and must parse back equal;
//! random Lua tables encoded by protolua must survive a Python parse +
//! deterministic re-serialization. `PROTOLUA_DIFF_SEED` and
//! `PROTOLUA_DIFF_COUNT` override the seed and the number of cases per type;
//! with `PROTOLUA_DIFF_KEEP` set the case files are kept (the path is printed).
//! Skipped (with a message) when Python's `protobuf` is not installed, unless
//! `PROTOLUA_REQUIRE_DIFFERENTIAL` is set (CI sets it).

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{env_or, lua_with_protolua, python};
use mlua::Lua;

const SEED: u64 = 20_260_301;
const COUNT: u32 = 1500;

fn run_lua(lua: &Lua, script: &str, phase: &str, vars: &[(&str, String)]) -> String {
    let t = lua.create_table().unwrap();
    t.set("phase", phase).unwrap();
    for (k, v) in vars {
        t.set(*k, v.as_str()).unwrap();
    }
    lua.globals().set("DIFF", t).unwrap();
    lua.load(script)
        .set_name("@roundtrip.lua")
        .eval::<String>()
        .unwrap_or_else(|e| panic!("differential {phase} phase failed:\n{e}"))
}

#[test]
fn differential_against_python_protobuf() {
    let start = std::time::Instant::now();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = root.join("tests/differential").canonicalize().expect("tests/differential");
    // Without Python's `protobuf` the test is skipped (the README's test
    // command needs only the Rust toolchain), unless
    // PROTOLUA_REQUIRE_DIFFERENTIAL is set, as CI does: then it fails.
    let required = std::env::var_os("PROTOLUA_REQUIRE_DIFFERENTIAL").is_some();
    let probe = Command::new("python3").args(["-c", "import google.protobuf"]).output();
    let missing = match probe {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!(
            "the Python `protobuf` package is missing: pip install protobuf\n{}",
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Some(format!("python3 not found ({e}): install Python 3, then pip install protobuf")),
    };
    if let Some(why) = missing {
        assert!(!required, "{why}");
        eprintln!("SKIPPED differential test: {why}");
        return;
    }

    let seed: u64 = env_or("PROTOLUA_DIFF_SEED", SEED);
    let count: u32 = env_or("PROTOLUA_DIFF_COUNT", COUNT);
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("differential-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let path = |name: &str| tmp.join(name).to_str().unwrap().to_owned();
    let fds = root.join("fixtures/descriptors/conformance.fds").canonicalize().expect("conformance.fds");

    python(&dir, &["gen.py", "--seed", &seed.to_string(), "--count", &count.to_string(), "--out", &path("cases.bin")]);

    let script = std::fs::read_to_string(dir.join("roundtrip.lua")).unwrap();
    let lua = lua_with_protolua();
    let vars = [
        ("fds", fds.to_str().unwrap().to_owned()),
        ("seed", seed.to_string()),
        ("count", count.to_string()),
        ("cases", path("cases.bin")),
        ("results", path("results.bin")),
        ("lua_cases", path("lua_cases.bin")),
        ("py_cases", path("py_cases.bin")),
    ];
    println!("{}", run_lua(&lua, &script, "roundtrip", &vars));
    let checked = python(
        &dir,
        &[
            "check.py",
            "--seed",
            &seed.to_string(),
            "--cases",
            &path("cases.bin"),
            "--results",
            &path("results.bin"),
            "--lua-cases",
            &path("lua_cases.bin"),
            "--out",
            &path("py_cases.bin"),
        ],
    );
    print!("{checked}");
    println!("{}", run_lua(&lua, &script, "verify", &vars));
    if std::env::var_os("PROTOLUA_DIFF_KEEP").is_some() {
        println!("differential: case files kept in {}", tmp.display());
    } else {
        std::fs::remove_dir_all(&tmp).ok();
    }
    println!("differential: seed {seed}, {count} cases per type and direction, {:.1?}", start.elapsed());
}
