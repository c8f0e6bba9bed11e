//! `protolua.pb`'s `encode_default_values` against Python protobuf
//! (`tests/differential/pb_zeros.py`): a TestAllTypesProto3 table whose
//! implicit-presence fields hold zeros, encoded through the facade, parses
//! to the same message in Python and carries each zero on the wire.
//! Skipped without Python's `protobuf` unless `PROTOLUA_REQUIRE_DIFFERENTIAL`.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{lua_with_protolua, python};

const SCRIPT: &str = r#"
local pb = require('protolua.pb')
local fh = assert(io.open(FDS, 'rb'))
assert(pb.load(fh:read('*a')))
fh:close()
pb.option('encode_default_values')
local zeros = {
    optional_int32 = 0, optional_int64 = 0, optional_uint32 = 0, optional_uint64 = 0,
    optional_sint32 = 0, optional_sint64 = 0, optional_fixed32 = 0, optional_fixed64 = 0,
    optional_sfixed32 = 0, optional_sfixed64 = 0, optional_float = 0, optional_double = 0,
    optional_bool = false, optional_string = '', optional_bytes = '',
    optional_nested_enum = 'FOO', optional_foreign_enum = 'FOREIGN_FOO',
    optional_nested_message = { a = 0 }, oneof_uint32 = 0,
}
local bytes = pb.encode('protobuf_test_messages.proto3.TestAllTypesProto3', zeros)
pb.option('no_encode_default_values')
local out = assert(io.open(OUT, 'wb'))
out:write(bytes)
out:close()
return #bytes
"#;

#[test]
fn encode_default_values_against_python() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = root.join("tests/differential").canonicalize().expect("tests/differential");
    let required = std::env::var_os("PROTOLUA_REQUIRE_DIFFERENTIAL").is_some();
    let probe = Command::new("python3").args(["-c", "import google.protobuf"]).output();
    if !matches!(probe, Ok(ref o) if o.status.success()) {
        assert!(!required, "the Python `protobuf` package is missing: pip install protobuf");
        eprintln!("SKIPPED pb_python: the Python `protobuf` package is missing");
        return;
    }
    let fds = root.join("fixtures/descriptors/conformance.fds").canonicalize().expect("conformance.fds");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("pb-zeros-{}.bin", std::process::id()));
    let lua = lua_with_protolua();
    lua.globals().set("FDS", fds.to_str().unwrap()).unwrap();
    lua.globals().set("OUT", out.to_str().unwrap()).unwrap();
    let n: i64 = lua.load(SCRIPT).set_name("@pb_zeros.lua").eval().unwrap_or_else(|e| panic!("{e}"));
    assert!(n > 0);
    println!("{}", python(&dir, &["pb_zeros.py", out.to_str().unwrap()]));
    let _ = std::fs::remove_file(&out);
}
