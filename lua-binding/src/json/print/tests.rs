//! The wire-order fast path against the sorted path: the same text, or
//! the same error, for bodies in and out of canonical order.

use super::{PrintScratch, Printer};
use crate::json::JsonOptions;
use crate::plan::Plans;
use crate::plan::compile::compile_descriptor_set;

const P3: &str = "protobuf_test_messages.proto3.TestAllTypesProto3";
const P2: &str = "protobuf_test_messages.proto2.TestAllTypesProto2";

fn plans() -> Plans {
    let fds = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/descriptors/conformance.fds")).unwrap();
    compile_descriptor_set(&fds).unwrap()
}

fn print(plans: &Plans, ty: &str, bytes: &[u8], opts: &JsonOptions, slow: bool) -> Result<String, String> {
    print_counted(plans, ty, bytes, opts, slow).0
}

/// [`print`], and how many bodies the fast path printed and gave back.
fn print_counted(
    plans: &Plans,
    ty: &str,
    bytes: &[u8],
    opts: &JsonOptions,
    slow: bool,
) -> (Result<String, String>, (u32, u32)) {
    let mi = plans.message_index(ty).unwrap() as u32;
    let (mut out, mut s) = (Vec::new(), PrintScratch::default());
    let mut p = Printer::new(plans, opts, &mut out, &mut s);
    p.slow_only = slow;
    let r = p.run(mi, bytes).map_err(|e| e.to_string());
    (r.map(|()| String::from_utf8(out).unwrap()), s.fast)
}

/// The text (or error) of `bytes` as `ty`, after checking that both
/// paths give it, under each layout and naming option.
fn both(plans: &Plans, ty: &str, bytes: &[u8]) -> Result<String, String> {
    let d = JsonOptions::default();
    for o in [
        d,
        JsonOptions { emit_defaults: true, ..d },
        JsonOptions { indent: Some(2), ..d },
        JsonOptions { json_names: false, enums_as_number: true, ..d },
    ] {
        let (fast, slow) = (print(plans, ty, bytes, &o, false), print(plans, ty, bytes, &o, true));
        assert_eq!(fast, slow, "{ty} {bytes:02x?} {o:?}");
    }
    print(plans, ty, bytes, &d, false)
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint field.
fn v(n: u32, x: u64) -> Vec<u8> {
    let mut b = Vec::new();
    varint(u64::from(n) << 3, &mut b);
    varint(x, &mut b);
    b
}

/// A LEN field.
fn l(n: u32, data: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    varint(u64::from(n) << 3 | 2, &mut b);
    varint(data.len() as u64, &mut b);
    b.extend_from_slice(data);
    b
}

fn cat(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.concat()
}

/// A map<string, string> entry.
fn ss(k: &str, val: &str) -> Vec<u8> {
    cat(&[l(1, k.as_bytes()), l(2, val.as_bytes())])
}

#[test]
fn canonical_bodies() {
    let p = plans();
    let nested = cat(&[v(1, 7)]);
    let body = cat(&[
        v(1, 5),
        l(14, b"hi"),
        l(18, &nested),
        l(31, &[1, 2, 3]),
        l(44, b"a"),
        l(44, b"b"),
        l(48, &nested),
        l(48, b""),
        l(69, &ss("k", "x")),
        l(69, &ss("a", "y")),
        v(111, 9),
    ]);
    assert_eq!(
        both(&p, P3, &body).unwrap(),
        r#"{"optionalInt32":5,"optionalString":"hi","optionalNestedMessage":{"a":7},"repeatedInt32":[1,2,3],"repeatedString":["a","b"],"repeatedNestedMessage":[{"a":7},{}],"mapStringString":{"a":"y","k":"x"},"oneofUint32":9}"#
    );
    // The root and its three sub-messages, all on the fast path.
    assert_eq!(print_counted(&p, P3, &body, &JsonOptions::default(), false).1, (4, 0));
    assert_eq!(both(&p, P3, b"").unwrap(), "{}");
    // Implicit zeros are left out; unknown fields skipped.
    let body = cat(&[v(1, 0), l(14, b""), v(5000, 1), v(2, 3)]);
    assert_eq!(both(&p, P3, &body).unwrap(), r#"{"optionalInt64":"3"}"#);
}

#[test]
fn out_of_order_bodies() {
    let p = plans();
    let nested = |a: u64| cat(&[v(1, a)]);
    let cases: &[(&[Vec<u8>], &str)] = &[
        // Out of order.
        (&[l(14, b"x"), v(1, 5)], r#"{"optionalInt32":5,"optionalString":"x"}"#),
        // A singular field twice: the last wins.
        (&[v(1, 5), v(1, 7)], r#"{"optionalInt32":7}"#),
        (&[v(1, 5), l(14, b"x"), v(1, 7)], r#"{"optionalInt32":7,"optionalString":"x"}"#),
        // A message twice: merged.
        (
            &[l(18, &nested(1)), l(18, &cat(&[l(2, &v(1, 4))]))],
            r#"{"optionalNestedMessage":{"a":1,"corecursive":{"optionalInt32":4}}}"#,
        ),
        // Two oneof members: the last wins (either order).
        (&[v(111, 9), l(113, b"s")], r#"{"oneofString":"s"}"#),
        (&[l(113, b"s"), v(111, 9)], r#"{"oneofUint32":9}"#),
        (&[l(112, &nested(1)), v(111, 9), l(112, &nested(2))], r#"{"oneofNestedMessage":{"a":2}}"#),
        // A repeated field in two runs.
        (&[l(31, &[1]), l(14, b"x"), l(31, &[2]), v(31, 3)], r#"{"optionalString":"x","repeatedInt32":[1,2,3]}"#),
        (&[l(44, b"a"), v(1, 1), l(44, b"b")], r#"{"optionalInt32":1,"repeatedString":["a","b"]}"#),
        // A map: one key twice (the last wins), in two runs.
        (&[l(69, &ss("k", "1")), l(69, &ss("k", "2"))], r#"{"mapStringString":{"k":"2"}}"#),
        (&[l(69, &ss("k", "1")), v(1, 1), l(69, &ss("k", "3"))], r#"{"optionalInt32":1,"mapStringString":{"k":"3"}}"#),
        // A break after a sub-message was printed.
        (&[l(18, &nested(1)), v(1, 2)], r#"{"optionalInt32":2,"optionalNestedMessage":{"a":1}}"#),
        (
            &[l(18, &cat(&[l(2, &cat(&[v(2, 1), v(1, 1)]))])), v(1, 2)],
            r#"{"optionalInt32":2,"optionalNestedMessage":{"corecursive":{"optionalInt32":1,"optionalInt64":"1"}}}"#,
        ),
    ];
    for (parts, want) in cases {
        assert_eq!(both(&p, P3, &cat(parts)).as_deref(), Ok(*want), "{parts:02x?}");
        // The root gives back (a map's one run with a key twice is
        // canonical: the map merges).
        let (_, (_, back)) = print_counted(&p, P3, &cat(parts), &JsonOptions::default(), false);
        let canonical = parts.len() == 2 && parts[0][0] == parts[1][0] && parts[0][0] == 0xaa;
        assert_eq!(back >= 1, !canonical, "{parts:02x?}");
    }
}

#[test]
fn errors_match() {
    let p = plans();
    let bad = &[0xff_u8, 0xfe][..];
    for parts in [
        // Invalid UTF-8, then a later value of the field that wins.
        vec![l(14, bad), v(1, 1), l(14, b"ok")],
        // Invalid UTF-8, then a truncated field: the wire error wins.
        vec![l(14, bad), vec![0x08]],
        vec![l(14, bad), v(15, 1)],
        // Invalid UTF-8 in a sub-message, then out of order.
        vec![l(18, &l(2, &l(14, bad))), v(1, 1)],
        vec![l(18, &l(2, &l(14, bad))), l(18, &l(2, &l(14, b"ok")))],
        // A bad packed run, then a later wire error.
        vec![l(31, &[0x80]), vec![0x08]],
        vec![l(31, &[0x80]), v(1, 1)],
        vec![l(31, &[0x80])],
        // A map entry with a bad key.
        vec![l(69, &ss("k", "1")), l(69, &cat(&[l(1, bad)]))],
        // An end-group tag out of place.
        vec![v(1, 1), vec![0x0c]],
    ] {
        let body = cat(&parts);
        let _ = both(&p, P3, &body);
    }
    assert!(both(&p, P3, &cat(&[l(14, bad), v(1, 1), l(14, b"ok")])).is_ok());
    assert!(both(&p, P3, &cat(&[l(14, bad), vec![0x08]])).unwrap_err().contains("malformed"));
}

#[test]
fn proto2_closed_enums_and_groups() {
    let p = plans();
    // optional_nested_enum = 21 (closed): unknown 99 dropped; the group
    // `data` = 201 with group_int32 = 202.
    let mut g = Vec::new();
    varint(201 << 3 | 3, &mut g);
    g.extend(v(202, 5));
    varint(201 << 3 | 4, &mut g);
    for parts in [
        vec![v(1, 1), v(21, 99), v(21, 1)],
        vec![v(1, 1), v(21, 1), v(21, 99)],
        vec![v(21, 99), v(1, 1)],
        vec![v(1, 1), g.clone()],
        vec![g.clone(), v(1, 1)],
        vec![g.clone(), g.clone()],
    ] {
        both(&p, P2, &cat(&parts)).unwrap();
    }
    assert_eq!(both(&p, P2, &cat(&[v(1, 1), v(21, 99)])).unwrap(), r#"{"optionalInt32":1}"#);
}

/// Seeded shuffles, duplicates and splits of a canonical body: the paths
/// agree on every one.
#[test]
fn shuffled_bodies() {
    let p = plans();
    let nested = cat(&[v(1, 7), l(2, &cat(&[v(1, 1), l(14, b"z")]))]);
    let records = [
        v(1, 5),
        v(2, 6),
        v(13, 1),
        l(14, b"hi"),
        l(18, &nested),
        l(31, &[1, 2, 3]),
        v(31, 4),
        l(44, b"a"),
        l(44, b"b"),
        l(48, &nested),
        l(48, b""),
        l(56, &cat(&[v(1, 1), v(2, 2)])),
        l(56, &cat(&[v(1, 1), v(2, 3)])),
        l(69, &ss("k", "x")),
        l(69, &ss("a", "y")),
        v(111, 9),
        l(112, &nested),
        l(113, b"s"),
        v(5000, 1),
    ];
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut rand = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for _ in 0..400 {
        let mut pick: Vec<&Vec<u8>> = records.iter().filter(|_| rand(3) > 0).collect();
        match rand(4) {
            0 => {
                let (i, j) = (rand(pick.len().max(1)), rand(pick.len().max(1)));
                if i < pick.len() && j < pick.len() {
                    pick.swap(i, j);
                }
            }
            1 if !pick.is_empty() => {
                let i = rand(pick.len());
                pick.insert(rand(pick.len() + 1), pick[i]);
            }
            _ => {}
        }
        let body: Vec<u8> = pick.into_iter().flatten().copied().collect();
        let _ = both(&p, P3, &body);
    }
}

/// Every level of a deep chain out of order after its sub-message: each
/// body is read at most twice, never its sub-messages (no blow-up).
#[test]
fn deep_breaks_stay_linear() {
    let p = plans();
    let mut body = v(1, 1);
    for _ in 0..48 {
        // optional_nested_message { corecursive { body } }, then a field
        // out of order.
        body = cat(&[l(18, &l(2, &body)), v(1, 2)]);
    }
    let t = std::time::Instant::now();
    let out = both(&p, P3, &body).unwrap();
    assert!(out.starts_with(r#"{"optionalInt32":2,"optionalNestedMessage":{"corecursive":{"optionalInt32":2,"#));
    assert!(t.elapsed().as_secs() < 5);
}

/// A map entry whose last value is a closed-enum value the enum lacks is
/// dropped whole, as decode drops it; a map left empty is not printed.
#[test]
fn closed_enum_map_values() {
    let p = plans();
    // map_string_nested_enum = 73 (proto2: NestedEnum is closed).
    let e = |k: &str, vals: &[u64]| {
        let mut body = l(1, k.as_bytes());
        for &x in vals {
            body.extend(v(2, x));
        }
        l(73, &body)
    };
    let cases: &[(&[Vec<u8>], &str)] = &[
        (&[e("a", &[1]), e("b", &[99])], r#"{"mapStringNestedEnum":{"a":"BAR"}}"#),
        (&[e("b", &[99])], "{}"),
        (&[v(1, 1), e("b", &[1, 99])], r#"{"optionalInt32":1}"#),
        (&[e("b", &[99, 2])], r#"{"mapStringNestedEnum":{"b":"BAZ"}}"#),
        // A later entry dropped leaves the earlier one of its key.
        (&[e("b", &[1]), e("b", &[99])], r#"{"mapStringNestedEnum":{"b":"BAR"}}"#),
        (&[e("b", &[1]), v(1, 1), e("b", &[99])], r#"{"optionalInt32":1,"mapStringNestedEnum":{"b":"BAR"}}"#),
    ];
    for (parts, want) in cases {
        assert_eq!(both(&p, P2, &cat(parts)).as_deref(), Ok(*want), "{parts:02x?}");
    }
    let o = JsonOptions { emit_defaults: true, ..JsonOptions::default() };
    assert!(print(&p, P2, &e("b", &[99]), &o, false).unwrap().contains(r#""mapStringNestedEnum":{}"#));
}

/// A repeated field whose occurrences hold no element (empty packed runs,
/// closed-enum values the enum lacks) is absent, as decode has it; with
/// `emit_defaults` it prints `[]`.
#[test]
fn repeated_fields_without_elements() {
    let p = plans();
    // packed_sint32 = 75, repeated_int32 = 31 (proto3); packed_nested_enum
    // = 88 and repeated_nested_enum = 51 (proto2: NestedEnum is closed).
    let cases: &[(&str, &[Vec<u8>], &str)] = &[
        (P3, &[l(75, b"")], "{}"),
        (P3, &[l(31, b""), v(1, 1)], r#"{"optionalInt32":1}"#),
        (P3, &[v(1, 1), l(31, b""), l(75, b""), v(111, 2)], r#"{"optionalInt32":1,"oneofUint32":2}"#),
        (P3, &[l(31, b""), l(31, &[4])], r#"{"repeatedInt32":[4]}"#),
        (P2, &[l(88, &[99, 98])], "{}"),
        (P2, &[v(51, 99), v(1, 1)], r#"{"optionalInt32":1}"#),
        (P2, &[v(1, 1), v(51, 99), v(51, 1)], r#"{"optionalInt32":1,"repeatedNestedEnum":["BAR"]}"#),
    ];
    for (ty, parts, want) in cases {
        assert_eq!(both(&p, ty, &cat(parts)).as_deref(), Ok(*want), "{parts:02x?}");
    }
    let o = JsonOptions { emit_defaults: true, ..JsonOptions::default() };
    for slow in [false, true] {
        assert!(print(&p, P3, &l(75, b""), &o, slow).unwrap().contains(r#""packedSint32":[]"#));
    }
}

/// The lean lane (compact, no `emit_defaults`) at its edges: one-byte and
/// longer varints and lengths, signs, strings it leaves to the walk
/// (escapes, non-ASCII, invalid UTF-8), truncated values, order breaks.
/// Every tag byte (one-byte tags, and the first byte of longer ones,
/// 0xff included) before every value byte, alone and after a plain field:
/// both paths agree, and nothing is read from an empty table entry (the
/// `codec_json` fuzz target found `ff 0d` taken for one).
#[test]
fn lean_lane_every_tag_byte() {
    let p = plans();
    for tag in 0..=255u8 {
        for val in [0u8, 0x0d, 0x7b, 0x80] {
            for body in [vec![tag, val, 0x10, 0x7b], cat(&[v(1, 5), vec![tag, val, 0x10]])] {
                for ty in [P3, P2] {
                    let _ = both(&p, ty, &body);
                }
            }
        }
    }
}

#[test]
fn lean_lane_edges() {
    let p = plans();
    let long = "x".repeat(200);
    let strings: [&[u8]; 9] =
        [b"", b"a", b"abc", b"abcd", b"a\"b", b"tab\there", "caf\u{e9}".as_bytes(), b"\xff\xfe", long.as_bytes()];
    let ints = [0u64, 1, 9, 10, 99, 100, 127, 128, 300, 1 << 31, u64::from(u32::MAX), u64::MAX, (-5i64) as u64];
    for &s in &strings {
        for &x in &ints {
            for body in [
                cat(&[v(1, x), v(2, x), v(3, x), l(14, s)]),
                cat(&[l(14, s), v(1, x)]),
                cat(&[v(3, x), v(1, x), l(14, s), v(2, x)]),
                cat(&[v(1, x), l(14, s), l(18, &v(1, x))]),
                cat(&[v(1, x), v(1, x), l(14, s)]),
            ] {
                for ty in [P3, P2] {
                    let _ = both(&p, ty, &body);
                    for cut in [1, 2, 3] {
                        let _ = both(&p, ty, &body[..body.len().saturating_sub(cut)]);
                    }
                }
            }
        }
    }
    let body = cat(&[v(1, (-5i64) as u64), v(2, 1 << 40), v(3, 7), l(14, b"a\"b")]);
    assert_eq!(
        both(&p, P3, &body).unwrap(),
        r#"{"optionalInt32":-5,"optionalInt64":"1099511627776","optionalUint32":7,"optionalString":"a\"b"}"#
    );
    // Packed integer runs of each varint kind, truncated too.
    let mut run = Vec::new();
    for &x in &ints {
        varint(x, &mut run);
    }
    for n in 31..=36 {
        let body = cat(&[l(n, &run), v(n, 5), l(n, &run[..run.len() - 1])]);
        for ty in [P3, P2] {
            let _ = both(&p, ty, &body);
            let _ = both(&p, ty, &body[..body.len() - 1]);
        }
    }
    assert_eq!(
        both(&p, P3, &cat(&[l(31, &[1, 0x7f, 0x80, 1]), l(35, &[3, 4]), l(36, &[3])])).unwrap(),
        r#"{"repeatedInt32":[1,127,128],"repeatedSint32":[-2,2],"repeatedSint64":["-2"]}"#
    );
    // Explicit presence: zeros printed.
    assert_eq!(both(&p, P2, &cat(&[v(1, 0), l(14, b"")])).unwrap(), r#"{"optionalInt32":0,"optionalString":""}"#);
    let o = JsonOptions { json_names: false, ..JsonOptions::default() };
    assert_eq!(
        print(&p, P3, &cat(&[v(1, 12), l(14, b"hi")]), &o, false).unwrap(),
        r#"{"optional_int32":12,"optional_string":"hi"}"#
    );
}

/// Runs of a repeated string numbered below 16 (`hello.Person.emails`),
/// whose plain elements the walk prints in a loop of its own: elements to
/// escape or check between them, other and unknown fields, truncations.
#[test]
fn repeated_string_runs() {
    let fds = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/descriptors/hello.fds")).unwrap();
    let p = compile_descriptor_set(&fds).unwrap();
    let ty = "hello.Person";
    let long = "y".repeat(130);
    let els: [&[u8]; 7] = [b"a@b", b"", b"q\"x", "\u{e9}".as_bytes(), b"\xff", long.as_bytes(), b"plain.address@x.org"];
    for i in 0..els.len() {
        for j in 0..els.len() {
            for tail in [vec![], v(2, 5), v(5000, 1), l(3, b"z"), l(5, &[1, 2])] {
                let body = cat(&[l(1, b"n"), l(3, els[i]), l(3, els[j]), l(3, b"c"), v(4000, 3), l(3, els[i]), tail]);
                let _ = both(&p, ty, &body);
                for cut in [1, 2, 5] {
                    let _ = both(&p, ty, &body[..body.len().saturating_sub(cut)]);
                }
            }
        }
    }
    let body = cat(&[l(1, b"n"), l(3, b"a"), l(3, b"b\"c"), l(3, b"d"), l(3, b"e")]);
    assert_eq!(both(&p, ty, &body).unwrap(), r#"{"name":"n","emails":["a","b\"c","d","e"]}"#);
}
