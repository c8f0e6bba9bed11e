//! ProtoJSON differential test against the PyPI `protobuf` package
//! (`json_format`): seeded random TestAllTypesProto2/3 messages, their
//! well-known-type fields mostly valid, go through `binary_to_json` and
//! `json_to_binary` and must agree with Python (see
//! `tests/differential/json_diff.py`); the round-trip laws are checked on
//! the way (`tests/differential/json_roundtrip.lua`).
//! `PROTOLUA_DIFF_SEED` / `PROTOLUA_JSON_DIFF_COUNT` override the seed and
//! the cases per type. Skipped (with a message) when Python's `protobuf` is
//! not installed, unless `PROTOLUA_REQUIRE_DIFFERENTIAL` is set (CI).

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{env_or, lua_with_protolua, python};

const SEED: u64 = 20_261_207;
const COUNT: u32 = 1500;

#[test]
fn json_differential_against_python_protobuf() {
    let start = std::time::Instant::now();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = root.join("tests/differential").canonicalize().expect("tests/differential");
    let required = std::env::var_os("PROTOLUA_REQUIRE_DIFFERENTIAL").is_some();
    let probe = Command::new("python3").args(["-c", "import google.protobuf.json_format"]).output();
    let missing = match probe {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("the Python `protobuf` package is missing: pip install protobuf\n{}", {
            String::from_utf8_lossy(&o.stderr)
        })),
        Err(e) => Some(format!("python3 not found ({e}): install Python 3, then pip install protobuf")),
    };
    if let Some(why) = missing {
        assert!(!required, "{why}");
        eprintln!("SKIPPED json differential test: {why}");
        return;
    }
    let seed: u64 = env_or("PROTOLUA_DIFF_SEED", SEED);
    let count: u32 = env_or("PROTOLUA_JSON_DIFF_COUNT", COUNT);
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("json-differential-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let path = |name: &str| tmp.join(name).to_str().unwrap().to_owned();
    let fds = root.join("fixtures/descriptors/conformance.fds").canonicalize().expect("conformance.fds");

    let (seed_s, count_s) = (seed.to_string(), count.to_string());
    python(&dir, &["json_diff.py", "gen", "--seed", &seed_s, "--count", &count_s, "--out", &path("cases.bin")]);
    let lua = lua_with_protolua();
    let vars = lua.create_table().unwrap();
    vars.set("fds", fds.to_str().unwrap()).unwrap();
    vars.set("cases", path("cases.bin")).unwrap();
    vars.set("results", path("results.bin")).unwrap();
    lua.globals().set("JDIFF", vars).unwrap();
    let script = std::fs::read_to_string(dir.join("json_roundtrip.lua")).unwrap();
    let summary = lua
        .load(script)
        .set_name("@json_roundtrip.lua")
        .eval::<String>()
        .unwrap_or_else(|e| panic!("json differential, Lua side failed:\n{e}"));
    println!("{summary}");
    let checked =
        python(&dir, &["json_diff.py", "check", "--cases", &path("cases.bin"), "--results", &path("results.bin")]);
    print!("{checked}");
    std::fs::remove_dir_all(&tmp).ok();
    println!("json differential: seed {seed}, {count} cases per type, {:.1?}", start.elapsed());
}
