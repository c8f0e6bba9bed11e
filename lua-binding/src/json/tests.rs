//! Unit tests of the JSON codec on the conformance test messages (pure
//! Rust; the Lua-facing tests are `tests/lua/test_json.lua`).

use super::{JsonOptions, binary_to_json, json_to_binary};
use crate::compile::compile_descriptor_set;
use crate::plan::Plans;

fn plans() -> Plans {
    let fds = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/descriptors/conformance.fds")).unwrap();
    compile_descriptor_set(&fds).unwrap()
}

const P3: &str = "protobuf_test_messages.proto3.TestAllTypesProto3";

/// JSON → bytes → JSON.
fn j2j(plans: &Plans, json: &str) -> Result<String, String> {
    let opts = JsonOptions::default();
    let mi = plans.message_index(P3).unwrap() as u32;
    let mut w = pbwire::Writer::new();
    json_to_binary(plans, mi, json.as_bytes(), &opts, &mut w).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    binary_to_json(plans, mi, w.as_slice(), &opts, &mut out).map_err(|e| e.to_string())?;
    Ok(String::from_utf8(out).unwrap())
}

#[test]
fn fixpoints() {
    let p = plans();
    for j in [
        r#"{"optionalStruct":{"a":"","b":{}}}"#,
        r#"{"repeatedAny":[{}]}"#,
        r#"{"optionalFieldMask":""}"#,
        r#"{"repeatedDoubleWrapper":[0]}"#,
        r#"{"optionalStringWrapper":"x"}"#,
        r#"{"optionalStruct":{"a":""},"repeatedAny":[{}]}"#,
        r#"{"repeatedUint64Wrapper":["0","7748063500900570521"],"repeatedDoubleWrapper":[0],"optionalFieldMask":""}"#,
        r#"{"optionalValue":null}"#,
        r#"{"repeatedValue":[null,1]}"#,
        r#"{"mapStringString":{"a":"2","b":"1"}}"#,
    ] {
        assert_eq!(j2j(&p, j).as_deref(), Ok(j), "{j}");
    }
    // null for a NullValue field is its zero value: absent when implicit.
    assert_eq!(j2j(&p, r#"{"optionalNullValue":null}"#).as_deref(), Ok("{}"));
}
