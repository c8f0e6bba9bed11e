//! The text format against protobuf's own implementations (see
//! `tests/differential/text_check.py`): seeded random TestAllTypesProto2/3
//! payloads from `gen.py`, printed by protolua and checked byte for byte
//! against protobuf C++'s printer (`python3 -m grpc_tools.protoc --decode`)
//! on the first `PROTOLUA_TEXT_CPP` cases per type, parsed back by Python's
//! `text_format`; and Python's text parsed by protolua. Seed and count as
//! `differential.rs` (`PROTOLUA_DIFF_SEED`, `PROTOLUA_TEXT_COUNT`).
//! Skipped when Python's `protobuf` (or `grpcio-tools`) is missing, unless
//! `PROTOLUA_REQUIRE_DIFFERENTIAL` is set.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{env_or, lua_with_protolua, python};

const SEED: u64 = 20_261_207;
const COUNT: u32 = 300;
const CPP: u32 = 100;

#[test]
fn text_format_against_cpp_and_python() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = root.join("tests/differential").canonicalize().expect("tests/differential");
    let required = std::env::var_os("PROTOLUA_REQUIRE_DIFFERENTIAL").is_some();
    let probe = Command::new("python3").args(["-c", "import google.protobuf, grpc_tools"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        let why = "Python's `protobuf` and `grpcio-tools` are needed: pip install protobuf grpcio-tools";
        assert!(!required, "{why}");
        eprintln!("SKIPPED text differential test: {why}");
        return;
    }
    let seed: u64 = env_or("PROTOLUA_DIFF_SEED", SEED);
    let count: u32 = env_or("PROTOLUA_TEXT_COUNT", COUNT);
    let cpp: u32 = env_or("PROTOLUA_TEXT_CPP", CPP);
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("text-differential-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let path = |name: &str| tmp.join(name).to_str().unwrap().to_owned();
    let fds = root.join("fixtures/descriptors/conformance.fds").canonicalize().expect("conformance.fds");

    python(&dir, &["gen.py", "--seed", &seed.to_string(), "--count", &count.to_string(), "--out", &path("cases.bin")]);
    python(
        &dir,
        &[
            "text_check.py",
            "print",
            "--cases",
            &path("cases.bin"),
            "--out",
            &path("ref.bin"),
            "--cpp",
            &cpp.to_string(),
        ],
    );
    let lua = lua_with_protolua();
    let t = lua.create_table().unwrap();
    t.set("fds", fds.to_str().unwrap()).unwrap();
    t.set("cases", path("cases.bin")).unwrap();
    t.set("ref", path("ref.bin")).unwrap();
    t.set("results", path("results.bin")).unwrap();
    lua.globals().set("DIFF", t).unwrap();
    let script = std::fs::read_to_string(dir.join("text_roundtrip.lua")).unwrap();
    let said: String = lua.load(&script).set_name("@text_roundtrip.lua").eval().unwrap_or_else(|e| panic!("{e}"));
    println!("{said}");
    let checked = python(
        &dir,
        &[
            "text_check.py",
            "check",
            "--cases",
            &path("cases.bin"),
            "--ref",
            &path("ref.bin"),
            "--results",
            &path("results.bin"),
        ],
    );
    print!("{checked}");
    if std::env::var_os("PROTOLUA_DIFF_KEEP").is_some() {
        println!("text differential: case files kept in {}", tmp.display());
    } else {
        std::fs::remove_dir_all(&tmp).ok();
    }
}
