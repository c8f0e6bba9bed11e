//! Unit tests of the JSON codec on the conformance test messages (pure
//! Rust; the Lua-facing tests are `tests/lua/test_json.lua`).

use super::{JsonOptions, binary_to_json, json_to_binary};
use crate::plan::Plans;
use crate::plan::compile::compile_descriptor_set;

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

/// Parse `json` as TestAllTypesProto3 with `opts`.
fn parse(plans: &Plans, json: &[u8], opts: &JsonOptions) -> Result<Vec<u8>, String> {
    let mi = plans.message_index(P3).unwrap() as u32;
    let mut w = pbwire::Writer::new();
    json_to_binary(plans, mi, json, opts, &mut w).map_err(|e| e.to_string())?;
    Ok(w.into_vec())
}

#[test]
fn adversarial_nesting() {
    let p = plans();
    let o = JsonOptions::default();
    let n = 1_000_000;
    let deep = |open: &str, close: &str, head: &str, tail: &str| {
        let mut s = String::from(head);
        s.push_str(&open.repeat(n));
        s.push_str(&close.repeat(n));
        s.push_str(tail);
        s.into_bytes()
    };
    // Messages, Value lists and Struct objects, and an ignored unknown value.
    let cases = [
        deep(r#"{"recursiveMessage":"#, "}", "", ""),
        deep("[", "]", r#"{"optionalValue":"#, "}"),
        deep(r#"{"a":"#, "}", r#"{"optionalStruct":"#, "}"),
        deep("[", "]", r#"{"unknownField":"#, "}"),
    ];
    let ignore = JsonOptions { ignore_unknown: true, ..o };
    for (i, c) in cases.iter().enumerate() {
        let e = parse(&p, c, if i == 3 { &ignore } else { &o }).unwrap_err();
        assert!(e.contains("nesting too deep"), "case {i}: {e}");
    }
    // Below the limit: fine.
    // (each array is two levels: a ListValue and its Value)
    let ok = format!("{}1{}", r#"{"optionalValue":"#.to_owned() + &"[".repeat(45), "]".repeat(45) + "}");
    assert!(parse(&p, ok.as_bytes(), &o).is_ok());
}

#[test]
fn adversarial_sizes() {
    let p = plans();
    let o = JsonOptions::default();
    // A 20 MB string (100 MB in release builds is the same code path).
    let mut s = br#"{"optionalString":""#.to_vec();
    s.resize(s.len() + (20 << 20), b'a');
    s.extend_from_slice(br#""}"#);
    let b = parse(&p, &s, &o).unwrap();
    assert_eq!(b.len(), 1 + 4 + (20 << 20));
    // 10^6 unknown keys, skipped.
    let mut s = String::from("{");
    for i in 0..1_000_000 {
        s.push_str(&format!("\"k{i}\":{i},"));
    }
    s.push_str("\"optionalInt32\":1}");
    let ignore = JsonOptions { ignore_unknown: true, ..o };
    assert_eq!(parse(&p, s.as_bytes(), &ignore).unwrap(), [0x08, 0x01]);
    assert!(parse(&p, s.as_bytes(), &o).unwrap_err().contains("unknown field \"k0\""));
    // 10^6 map entries.
    let mut s = String::from(r#"{"mapInt32Int32":{"#);
    for i in 0..1_000_000 {
        s.push_str(&format!("\"{i}\":{i},"));
    }
    s.push_str("\"-1\":1}}");
    let b = parse(&p, s.as_bytes(), &o).unwrap();
    let mut out = Vec::new();
    let mi = p.message_index(P3).unwrap() as u32;
    binary_to_json(&p, mi, &b, &o, &mut out).unwrap();
    assert!(out.starts_with(br#"{"mapInt32Int32":{"-1":1,"0":0,"1":1,"#));
}

#[test]
fn adversarial_numbers() {
    let p = plans();
    let o = JsonOptions::default();
    let e = |j: &str| parse(&p, j.as_bytes(), &o).unwrap_err();
    assert!(e(r#"{"optionalInt32":1e999999999999999999}"#).contains("out of range"));
    assert!(e(r#"{"optionalInt64":"1e99999"}"#).contains("out of range"));
    assert!(e(r#"{"optionalDouble":1e400}"#).contains("out-of-range"));
    assert!(e(r#"{"optionalFloat":1e39}"#).contains("out of range for a float"));
    assert!(e(r#"{"optionalInt32":1e-99999999999}"#).contains("not an integer"));
    assert_eq!(parse(&p, br#"{"optionalInt32":0e-99999999999}"#, &o).unwrap(), b"");
    assert_eq!(parse(&p, br#"{"optionalDouble":1e-400}"#, &o).unwrap(), b"");
    let digits = "1".repeat(100_000);
    assert!(e(&format!(r#"{{"optionalUint64":{digits}}}"#)).contains("out of range"));
}

/// The word-at-a-time scan finds what a byte-at-a-time one finds: the
/// first `"`, `\` or control byte, and whether a byte before it is not
/// ASCII, from every start, on strings mixing all the byte classes.
#[test]
fn plain_run_matches_a_bytewise_scan() {
    use super::lexer::plain_run;
    let naive = |s: &[u8], start: usize| {
        let end = s[start..].iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).map_or(s.len(), |p| start + p);
        (end, s[start..end].iter().any(|&b| b >= 0x80))
    };
    let alphabet = [b'a', b'"', b'\\', 0, 0x1f, 0x20, 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xa0, 0xc3, 0xdf, 0xff, b'Z'];
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..20_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = (seed % 40) as usize;
        let mut s = Vec::with_capacity(len);
        let mut x = seed;
        for _ in 0..len {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            // Mostly plain letters, so that runs are long enough to span words.
            let b =
                if x >> 60 < 12 { b'a' + (x >> 33) as u8 % 26 } else { alphabet[(x >> 40) as usize % alphabet.len()] };
            s.push(b);
        }
        for start in 0..=len {
            assert_eq!(plain_run(&s, start), naive(&s, start), "{s:?} from {start}");
        }
    }
}
