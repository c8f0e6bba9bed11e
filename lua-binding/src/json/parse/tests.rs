//! The parser's key tables and member sets: every spelling of every
//! field found as a plain scan finds it, near misses not found; both
//! spellings accepted and refused together; oneofs, nulls and required
//! fields in messages of up to 64 fields (one word per set) and more.

use super::ParseScratch;
use super::tables::ParseTables;
use crate::json::lexer::KeyWords;
use crate::json::{JsonBuffers, JsonOptions, binary_to_json, json_to_binary_into};
use crate::plan::Plans;
use crate::plan::compile::compile_descriptor_set;

fn fixture(name: &str) -> Plans {
    let path = format!("{}/../fixtures/descriptors/{name}", env!("CARGO_MANIFEST_DIR"));
    compile_descriptor_set(&std::fs::read(path).unwrap()).unwrap()
}

/// A schema from `.proto` text (file `t.proto`).
fn schema(text: &str) -> Plans {
    use prost::Message as _;
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("protolua-json-keys-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.proto"), text).unwrap();
    let set = protox::compile(["t.proto"], [&dir]).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    compile_descriptor_set(&set.encode_to_vec()).unwrap()
}

const SMALL_AND_WIDE: &str = r#"
syntax = "proto2";
package kt;
message Small {
  optional int32 foo_bar = 1;
  optional string name = 2;
  optional string name_long_enough_key = 3;
  optional string name_long_enough_kez = 4;
  oneof pick { int32 a = 5; string b = 6; }
  required int32 req = 7;
  optional int32 x = 8 [json_name = "customName"];
  optional Small child = 9;
  optional int32 n = 10;
  optional int32 uni = 11 [json_name = "ñame"];
  optional string a_rather_long_field_name = 12;
  optional int32 eightch = 13;
  optional int32 ninechar = 14;
}
message Wide {
  optional int32 f1 = 1; optional int32 f2 = 2; optional int32 f3 = 3; optional int32 f4 = 4;
  optional int32 f5 = 5; optional int32 f6 = 6; optional int32 f7 = 7; optional int32 f8 = 8;
  optional int32 f9 = 9; optional int32 f10 = 10; optional int32 f11 = 11; optional int32 f12 = 12;
  optional int32 f13 = 13; optional int32 f14 = 14; optional int32 f15 = 15; optional int32 f16 = 16;
  optional int32 f17 = 17; optional int32 f18 = 18; optional int32 f19 = 19; optional int32 f20 = 20;
  optional int32 f21 = 21; optional int32 f22 = 22; optional int32 f23 = 23; optional int32 f24 = 24;
  optional int32 f25 = 25; optional int32 f26 = 26; optional int32 f27 = 27; optional int32 f28 = 28;
  optional int32 f29 = 29; optional int32 f30 = 30; optional int32 f31 = 31; optional int32 f32 = 32;
  optional int32 f33 = 33; optional int32 f34 = 34; optional int32 f35 = 35; optional int32 f36 = 36;
  optional int32 f37 = 37; optional int32 f38 = 38; optional int32 f39 = 39; optional int32 f40 = 40;
  optional int32 f41 = 41; optional int32 f42 = 42; optional int32 f43 = 43; optional int32 f44 = 44;
  optional int32 f45 = 45; optional int32 f46 = 46; optional int32 f47 = 47; optional int32 f48 = 48;
  optional int32 f49 = 49; optional int32 f50 = 50; optional int32 f51 = 51; optional int32 f52 = 52;
  optional int32 f53 = 53; optional int32 f54 = 54; optional int32 f55 = 55; optional int32 f56 = 56;
  optional int32 f57 = 57; optional int32 f58 = 58; optional int32 f59 = 59; optional int32 f60 = 60;
  optional int32 f61 = 61; optional int32 f62 = 62; optional int32 f63 = 63; optional int32 f64 = 64;
  optional int32 last_field = 65;
  oneof pick { int32 a = 70; string b = 71; }
  required int32 req = 80;
  optional Wide child = 81;
}
"#;

/// The field a plain scan finds for `key`: the first whose JSON or proto
/// name it is.
fn scan(plans: &Plans, mi: usize, key: &[u8]) -> Option<usize> {
    plans.messages[mi].fields.iter().position(|f| f.json_name.as_bytes() == key || f.name.as_bytes() == key)
}

fn check_tables(plans: &Plans) {
    let mut t = ParseTables::default();
    t.bind(plans);
    let mut keys = 0;
    for (mi, m) in plans.messages.iter().enumerate() {
        let info = t.info(plans, mi as u32);
        let probe = |key: &[u8]| {
            let k = KeyWords::of(key);
            let found = t.find(&info, m, &k, key);
            assert_eq!(found, scan(plans, mi, key), "{} key {:?}", m.full_name, String::from_utf8_lossy(key));
            if key.len() < 8 {
                assert_eq!(t.find_short(&info, m, k.w0, k.len), found, "{} key {key:?}", m.full_name);
            }
        };
        for f in &m.fields {
            for name in [f.json_name.as_bytes(), f.name.as_bytes()] {
                probe(name);
                // Near misses: shorter, longer, one byte changed (first,
                // middle, last), the case of the first letter.
                probe(&name[..name.len() - 1]);
                probe(&[name, b"x"].concat());
                probe(&[b"x", name].concat());
                for i in [0, name.len() / 2, name.len() - 1] {
                    let mut k = name.to_vec();
                    k[i] ^= 1;
                    probe(&k);
                }
                let mut k = name.to_vec();
                k[0] ^= 0x20;
                probe(&k);
                keys += 1;
            }
        }
        probe(b"");
        probe(b"@type");
    }
    assert!(keys > 0);
}

#[test]
fn tables_find_what_a_scan_finds() {
    for f in ["conformance.fds", "all.fds", "proto2_basic.fds", "many_required.fds"] {
        check_tables(&fixture(f));
    }
    check_tables(&schema(SMALL_AND_WIDE));
}

#[test]
fn key_words_are_the_key_bytes() {
    for key in [&b""[..], b"a", b"abcdefg", b"abcdefgh", b"abcdefghi", b"abcdefghijklmnop", b"abcdefghijklmnopq"] {
        let k = KeyWords::of(key);
        assert_eq!(k.len, key.len());
        let mut w0 = [0u8; 8];
        let n = key.len().min(8);
        w0[..n].copy_from_slice(&key[..n]);
        assert_eq!(k.w0, u64::from_le_bytes(w0));
        let w1 = if key.len() > 8 { u64::from_le_bytes(key[key.len() - 8..].try_into().unwrap()) } else { 0 };
        assert_eq!(k.w1, w1);
    }
}

#[test]
fn expected_keys_take_their_colon_when_it_fits() {
    use crate::json::lexer::Expect;
    // Quote, 13 bytes, quote and colon: 16 bytes, the colon compared.
    let e = Expect::of(b"abcdefghijklm");
    assert!(e.colon && e.n == 16);
    // 14 bytes: the quoted key alone fits; the colon is read after it.
    let e = Expect::of(b"abcdefghijklmn");
    assert!(!e.colon && e.n == 16);
    assert_eq!(Expect::of(b"abcdefghijklmno").n, 0);
    assert!(Expect::of(b"a").colon && Expect::of(b"a").n == 4);
    assert_eq!(Expect::of(b"a\\b").n, 0);
}

/// Parse `json` as `msg` with the buffers kept across calls (as a schema
/// does), or fresh ones; both must agree.
fn parse(plans: &Plans, msg: &str, json: &str, opts: &JsonOptions) -> Result<Vec<u8>, String> {
    let mi = plans.message_index(msg).unwrap() as u32;
    thread_local! {
        static BUFS: std::cell::RefCell<JsonBuffers> = std::cell::RefCell::new(JsonBuffers::default());
    }
    let kept = BUFS.with(|b| {
        let b = &mut *b.borrow_mut();
        json_to_binary_into(plans, mi, json.as_bytes(), opts, b).map(|()| b.bytes.as_slice().to_vec())
    });
    let mut w = pbwire::Writer::new();
    let fresh = super::Parser::new(plans, opts, json.as_bytes(), &mut w, &mut ParseScratch::default())
        .run(mi)
        .map(|()| w.into_vec());
    assert_eq!(kept, fresh, "{json}");
    kept.map_err(|e| e.to_string())
}

fn members_and_spellings(plans: &Plans, msg: &str, big: bool) {
    let o = JsonOptions::default();
    let ok = |j: &str| parse(plans, msg, j, &o).unwrap_or_else(|e| panic!("{j}: {e}"));
    let err = |j: &str| parse(plans, msg, j, &o).unwrap_err();
    let (f, f_json, f_other) = if big { ("last_field", "lastField", "f1") } else { ("foo_bar", "fooBar", "n") };
    // Either spelling, the same bytes; both: refused as a duplicate.
    let one = ok(&format!(r#"{{"req":1,"{f}":7}}"#));
    assert_eq!(ok(&format!(r#"{{"req":1,"{f_json}":7}}"#)), one);
    assert_eq!(ok(&format!(r#"{{ "req" : 1 , "{f_json}" : 7 }}"#)), one);
    let e = err(&format!(r#"{{"req":1,"{f}":7,"{f_json}":8}}"#));
    assert!(e.contains(&format!("field {f} given twice")), "{e}");
    let e = err(&format!(r#"{{"{f_json}":null,"req":1,"{f}":8}}"#));
    assert!(e.contains("given twice"), "{e}");
    // Escaped keys are the same keys.
    let escaped = f_json.replacen(&f_json[1..2], &format!("\\u{:04x}", f_json.as_bytes()[1]), 1);
    assert_eq!(ok(&format!(r#"{{"req":1,"{escaped}":7}}"#)), one);
    // Near misses are unknown: an error naming the key, or skipped.
    let short = &f_json[..f_json.len() - 1];
    for k in [short, &format!("{f_json}x"), &f_json.to_uppercase(), "", "@type"] {
        let j = format!(r#"{{"req":1,"{k}":7,"{f}":7}}"#);
        let e = err(&j);
        assert!(e.contains(&format!("unknown field {k:?}")), "{e}");
        let ignore = JsonOptions { ignore_unknown: true, ..o };
        assert_eq!(parse(plans, msg, &j, &ignore).unwrap(), one, "{j}");
    }
    // Other fields, the oneof, nulls.
    ok(&format!(r#"{{"req":1,"{f_other}":2,"{f}":7}}"#));
    let e = err(r#"{"req":1,"a":1,"b":"x"}"#);
    assert!(e.contains("a second member of oneof pick"), "{e}");
    assert_eq!(ok(r#"{"req":1,"a":null,"b":"x"}"#), ok(r#"{"req":1,"b":"x"}"#));
    // Required: given, given as null (absent), missing; in a child too.
    let e = err(r#"{"a":1}"#);
    assert!(e.contains(&format!("missing required fields req of {msg}")), "{e}");
    let e = err(r#"{"req":null}"#);
    assert!(e.contains("missing required fields req"), "{e}");
    let e = err(r#"{"req":1,"child":{"child":{}}}"#);
    assert!(e.contains("missing required fields req"), "{e}");
    ok(r#"{"req":1,"child":{"req":2,"child":{"req":3}}}"#);
    // Sets are per message object: the same keys in a child are fine.
    ok(&format!(r#"{{"req":1,"{f}":1,"a":1,"child":{{"req":2,"{f}":2,"a":2}}}}"#));
    // A key at the end of the input (fewer than 8 bytes after it).
    assert_eq!(ok(&format!(r#"{{"{f}":7,"req":1}}"#)), ok(&format!(r#"{{"{f_json}":7,"r\u0065q":1}}"#)));
}

#[test]
fn members_of_small_and_wide_messages() {
    let p = schema(SMALL_AND_WIDE);
    let mut t = ParseTables::default();
    t.bind(&p);
    for (name, big) in [("kt.Small", false), ("kt.Wide", true)] {
        let mi = p.message_index(name).unwrap() as u32;
        assert_eq!(t.info(&p, mi).small, !big, "{name}");
        members_and_spellings(&p, name, big);
    }
    let o = JsonOptions::default();
    let ok = |j: &str| parse(&p, "kt.Small", j, &o).unwrap_or_else(|e| panic!("{j}: {e}"));
    // json_name: its own spelling and the proto name.
    assert_eq!(ok(r#"{"req":1,"customName":3}"#), ok(r#"{"req":1,"x":3}"#));
    assert!(parse(&p, "kt.Small", r#"{"req":1,"customName":3,"x":3}"#, &o).unwrap_err().contains("given twice"));
    // Long keys that share their first and last eight bytes' length.
    let a = ok(r#"{"req":1,"nameLongEnoughKey":"k"}"#);
    let b = ok(r#"{"req":1,"nameLongEnoughKez":"k"}"#);
    assert_ne!(a, b);
    assert_eq!(a, ok(r#"{"req":1,"name_long_enough_key":"k"}"#));
    // A key that is a prefix of another.
    assert_ne!(ok(r#"{"req":1,"n":5}"#), ok(r#"{"req":1,"name":"5"}"#));
    assert!(parse(&p, "kt.Small", r#"{"req":1,"n":5,"name":"5"}"#, &o).is_ok());
}

#[test]
fn tables_rebind_to_other_plans() {
    let (a, b) = (schema(SMALL_AND_WIDE), fixture("hello.fds"));
    let mut s = ParseScratch::default();
    let o = JsonOptions::default();
    for (plans, msg, json) in [(&a, "kt.Small", r#"{"req":1,"name":"x"}"#), (&b, "hello.Person", r#"{"name":"x"}"#)] {
        let mi = plans.message_index(msg).unwrap() as u32;
        let mut w = pbwire::Writer::new();
        super::Parser::new(plans, &o, json.as_bytes(), &mut w, &mut s).run(mi).unwrap();
        assert!(w.as_slice().ends_with(b"\x01x"), "{msg}");
    }
}

/// Members in field order (each key the expected one), in other orders,
/// in either spelling, spaced: the same message.
#[test]
fn members_in_any_order_and_spelling() {
    let p = schema(SMALL_AND_WIDE);
    let o = JsonOptions::default();
    let mi = p.message_index("kt.Small").unwrap() as u32;
    // (JSON name, proto name, value), in field order.
    let fields = [
        ("fooBar", "foo_bar", "1"),
        ("name", "name", "\"nm\""),
        ("nameLongEnoughKey", "name_long_enough_key", "\"k\""),
        ("nameLongEnoughKez", "name_long_enough_kez", "\"z\""),
        ("a", "a", "5"),
        ("req", "req", "7"),
        ("customName", "x", "8"),
        ("n", "n", "10"),
        ("ñame", "uni", "11"),
        ("aRatherLongFieldName", "a_rather_long_field_name", "\"l\""),
        ("eightch", "eightch", "13"),
        ("ninechar", "ninechar", "14"),
    ];
    let canon = |text: &str| {
        let b = parse(&p, "kt.Small", text, &o).unwrap_or_else(|e| panic!("{text}: {e}"));
        let mut out = Vec::new();
        binary_to_json(&p, mi, &b, &o, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    let text = |order: &[usize], proto: &dyn Fn(usize) -> bool, sep: &str| {
        let members: Vec<String> = order
            .iter()
            .map(|&i| {
                let (j, n, v) = fields[i];
                format!("\"{}\":{sep}{v}", if proto(i) { n } else { j })
            })
            .collect();
        format!("{{{}}}", members.join(&format!(",{sep}")))
    };
    let in_order: Vec<usize> = (0..fields.len()).collect();
    let want = canon(&text(&in_order, &|_| false, ""));
    assert!(want.contains("\"ñame\":11"), "{want}");
    let reversed: Vec<usize> = in_order.iter().rev().copied().collect();
    let rotated: Vec<usize> = (0..fields.len()).map(|i| (i + 5) % fields.len()).collect();
    let pairs: Vec<usize> = (0..fields.len()).map(|i| i ^ 1).collect();
    for order in [&in_order, &reversed, &rotated, &pairs] {
        for proto in [&|_| false, &|_| true, &|i: usize| i.is_multiple_of(2)] as [&dyn Fn(usize) -> bool; 3] {
            for sep in ["", " ", "\n  "] {
                let t = text(order, proto, sep);
                assert_eq!(canon(&t), want, "{t}");
            }
        }
    }
    // The expected key as a prefix of the one given, and the reverse.
    let e = parse(&p, "kt.Small", r#"{"req":1,"fooBarx":1}"#, &o).unwrap_err();
    assert!(e.contains("unknown field \"fooBarx\""), "{e}");
    let e = parse(&p, "kt.Small", r#"{"fooBa":1}"#, &o).unwrap_err();
    assert!(e.contains("unknown field \"fooBa\""), "{e}");
    let e = parse(&p, "kt.Small", r#"{"fooBar":1,"nam":1}"#, &o).unwrap_err();
    assert!(e.contains("unknown field \"nam\""), "{e}");
    // Cut short right after an expected key, or inside it.
    for t in [r#"{"fooBar""#, r#"{"fooBar"#, r#"{"fooBar":"#, r#"{"nameLongEnoughKe"#] {
        assert!(parse(&p, "kt.Small", t, &o).is_err(), "{t}");
    }
}

/// Singular integer fields: their wire forms at the edges of each kind.
#[test]
fn singular_integers() {
    let p = fixture("conformance.fds");
    let o = JsonOptions::default();
    let m = "protobuf_test_messages.proto3.TestAllTypesProto3";
    let ok = |j: &str| parse(&p, m, j, &o).unwrap_or_else(|e| panic!("{j}: {e}"));
    let ten = |last: u8| [vec![0xff; 9], vec![last]].concat();
    assert_eq!(ok(r#"{"optionalInt32":-1}"#), [vec![0x08], ten(0x01)].concat());
    assert_eq!(
        ok(r#"{"optionalInt32":-2147483648}"#),
        [vec![0x08, 0x80, 0x80, 0x80, 0x80], vec![0xf8], vec![0xff; 4], vec![0x01]].concat()
    );
    assert_eq!(ok(r#"{"optionalInt64":"-1"}"#), [vec![0x10], ten(0x01)].concat());
    assert_eq!(ok(r#"{"optionalUint32":4294967295}"#), [0x18, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    assert_eq!(ok(r#"{"optionalUint64":"18446744073709551615"}"#), [vec![0x20], ten(0x01)].concat());
    assert_eq!(ok(r#"{"optionalSint32":-1}"#), [0x28, 0x01]);
    assert_eq!(ok(r#"{"optionalFixed32":1}"#), [0x3d, 1, 0, 0, 0]);
    assert_eq!(ok(r#"{"optionalInt32":0,"optionalUint64":"0"}"#), b"");
    assert!(parse(&p, m, r#"{"optionalUint32":-1}"#, &o).unwrap_err().contains("out of range"));
    assert!(parse(&p, m, r#"{"optionalInt32":2147483648}"#, &o).unwrap_err().contains("out of range"));
}

/// Keys mutated at random (letters, digits, `_`, `@`, a space, a control
/// byte, UTF-8 and invalid bytes; never a quote or backslash, so the
/// structure stands): the compact text, read by the in-place paths, and
/// the same text spaced out, read by the general ones, agree.
#[test]
fn mutated_keys_compact_and_spaced_agree() {
    let p = fixture("conformance.fds");
    let m = "protobuf_test_messages.proto3.TestAllTypesProto3";
    let keys = [
        ("optionalInt32", "1"),
        ("optionalString", "\"s\""),
        ("a", "1"),
        ("b", "2"),
        ("oneofUint32", "3"),
        ("optional_bool", "true"),
        ("optionalNestedMessage", "{\"a\":1,\"corecursive\":{\"optionalInt64\":\"2\"}}"),
        ("repeatedInt32", "[1,2]"),
        ("fieldname1", "4"),
        ("FieldName13", "5"),
        ("field0name5", "6"),
        ("Field_Name17__", "7"),
        ("x", "8"),
    ];
    let alphabet: &[u8] = b"aeioAOtxyz_019@ \x01\xc3\xa9\xff";
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut agreed = (0, 0);
    for _ in 0..3000 {
        // A few members, keys mutated in a byte or two, values intact.
        let n = 1 + rand() as usize % 5;
        let mut members: Vec<(Vec<u8>, &str)> = Vec::new();
        for _ in 0..n {
            let (k, v) = keys[rand() as usize % keys.len()];
            let mut k = k.as_bytes().to_vec();
            for _ in 0..rand() % 3 {
                let r = rand() as usize;
                match r % 4 {
                    0 if k.len() > 1 => {
                        k.remove(r / 4 % k.len());
                    }
                    1 => k.insert(r / 4 % (k.len() + 1), alphabet[r / 64 % alphabet.len()]),
                    _ => {
                        let i = r / 4 % k.len();
                        k[i] = alphabet[r / 64 % alphabet.len()];
                    }
                }
            }
            members.push((k, v));
        }
        let text = |sep: &[u8]| {
            let mut t = b"{".to_vec();
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    t.push(b',');
                }
                t.extend_from_slice(sep);
                t.push(b'"');
                t.extend_from_slice(k);
                t.extend_from_slice(b"\":");
                t.extend_from_slice(sep);
                t.extend_from_slice(v.as_bytes());
            }
            t.extend_from_slice(sep);
            t.push(b'}');
            t
        };
        for ignore_unknown in [false, true] {
            let o = JsonOptions { ignore_unknown, ..JsonOptions::default() };
            let run = |t: &[u8]| {
                let mi = p.message_index(m).unwrap() as u32;
                let mut w = pbwire::Writer::new();
                super::Parser::new(&p, &o, t, &mut w, &mut ParseScratch::default())
                    .run(mi)
                    .map(|()| w.into_vec())
                    .map_err(|e| e.what.clone())
            };
            let (compact, spaced) = (text(b""), text(b" \n "));
            let (a, b) = (run(&compact), run(&spaced));
            assert_eq!(a, b, "{}", String::from_utf8_lossy(&compact));
            if a.is_ok() { agreed.0 += 1 } else { agreed.1 += 1 }
        }
    }
    // Both outcomes were exercised.
    assert!(agreed.0 > 500 && agreed.1 > 500, "{agreed:?}");
}

/// Repeated integer and string fields: the compact runs, the same text
/// spaced out and the elements as strings (the general loop) give the
/// same bytes, packed and not; errors inside or right after a run name
/// the element.
#[test]
fn repeated_runs_and_the_general_loop_agree() {
    let p = fixture("conformance.fds");
    let o = JsonOptions::default();
    let kinds =
        ["Int32", "Int64", "Uint32", "Uint64", "Sint32", "Sint64", "Fixed32", "Fixed64", "Sfixed32", "Sfixed64"];
    for (m, prefixes) in [
        ("protobuf_test_messages.proto3.TestAllTypesProto3", ["repeated", "packed", "unpacked"].as_slice()),
        ("protobuf_test_messages.proto2.TestAllTypesProto2", ["repeated", "packed", "unpacked"].as_slice()),
    ] {
        for prefix in prefixes {
            for kind in kinds {
                let key = format!("{prefix}{kind}");
                let signed = kind.starts_with('I') || kind.starts_with('S');
                let vals: &[&str] = if signed {
                    &["0", "1", "-1", "127", "128", "-300", "2147483647"]
                } else {
                    &["0", "1", "127", "128", "300", "4294967295"]
                };
                let compact = format!(r#"{{"{key}":[{}]}}"#, vals.join(","));
                let spaced = format!("{{ \"{key}\" : [ {} ] }}", vals.join(" ,\n "));
                let quoted = format!(r#"{{"{key}":["{}"]}}"#, vals.join(r#"",""#));
                let mixed = format!(r#"{{"{key}":[{},"{}",{}]}}"#, vals[0], vals[1], vals[2..].join(","));
                let want = parse(&p, m, &quoted, &o).unwrap_or_else(|e| panic!("{quoted}: {e}"));
                assert!(!want.is_empty());
                for text in [&compact, &spaced, &mixed] {
                    assert_eq!(parse(&p, m, text, &o).as_ref(), Ok(&want), "{text}");
                }
                for (bad, at) in [
                    ("1,2,3.5", "[2]"),
                    ("1,2,1e400", "[2]"),
                    ("1,\"x\"", "[1]"),
                    ("1,2,true", "[2]"),
                    ("5,null", "[1]"),
                ] {
                    let e = parse(&p, m, &format!(r#"{{"{key}":[{bad}]}}"#), &o).unwrap_err();
                    assert!(e.contains(at), "{bad}: {e}");
                }
                for bad in ["1,2,", "1,,2", "1 2", ",1", "1,2"] {
                    assert!(parse(&p, m, &format!(r#"{{"{key}":[{bad}}}"#), &o).is_err(), "{bad}");
                }
            }
        }
        let strings = parse(&p, m, r#"{"repeatedString":["a","","b\u00e9\"c"]}"#, &o).unwrap();
        assert_eq!(parse(&p, m, "{\"repeatedString\": [ \"a\" , \"\",\n\"b\u{e9}\\\"c\" ] }", &o), Ok(strings));
        for (bad, at) in [(r#""a","b",1"#, "[2]"), (r#""a","\ud800""#, "[1]"), (r#""a",null"#, "[1]")] {
            let e = parse(&p, m, &format!(r#"{{"repeatedString":[{bad}]}}"#), &o).unwrap_err();
            assert!(e.contains(at), "{bad}: {e}");
        }
        for bad in [r#""a","#, r#""a""b""#, r#""a",,"b""#, r#""a""#] {
            assert!(parse(&p, m, &format!(r#"{{"repeatedString":[{bad}}}"#), &o).is_err(), "{bad}");
        }
    }
}
