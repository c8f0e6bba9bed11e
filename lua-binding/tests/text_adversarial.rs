//! Adversarial inputs for the text format (`crate::text`), in an embedded
//! Lua state: a string literal of 8 MiB of escapes, 10^6 list elements,
//! 10^5 repeated fields, 10^6 one-byte wire fields printed, a comment of
//! 8 MiB, and nesting past `max_depth`. Each case checks the result, that
//! doubling the input at most about doubles the time (linear), and that
//! the memory the call takes at its peak is a bounded multiple of the
//! input (flat). Timings go to stderr (`--nocapture`).

mod common;

use std::sync::Mutex;
use std::time::Instant;

use common::{FIXTURES, live_bytes, lua_with_protolua, peak_bytes, reset_peak};
use mlua::Lua;

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

/// The memory checks read process-wide counters: one case at a time.
static SERIAL: Mutex<()> = Mutex::new(());

const PRELUDE: &str = r#"
protolua = require('protolua')
H = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')
A = protolua.load_file(FIXTURES .. '/descriptors/alltypes3.fds')
Person = H:message('hello.Person')
Node = A:message('protolua.test.Node')
"#;

fn lua() -> Lua {
    let lua = lua_with_protolua();
    lua.globals().set("FIXTURES", FIXTURES).unwrap();
    lua.load(PRELUDE).exec().unwrap();
    lua
}

/// Run `call` (Lua code using the global `input`, returning a number that
/// describes the result) on the input `make(n)` builds: seconds, the peak
/// of memory above what was live before the call, and the result.
fn measure(lua: &Lua, make: &str, call: &str, n: usize) -> (f64, isize, f64) {
    lua.load(format!("input = ({make})({n}) collectgarbage('collect')")).exec().unwrap();
    let before = reset_peak();
    let t0 = Instant::now();
    let got: f64 = lua.load(call).eval().unwrap_or_else(|e| panic!("{e}"));
    let secs = t0.elapsed().as_secs_f64();
    let peak = peak_bytes() - before;
    lua.load("input = nil collectgarbage('collect')").exec().unwrap();
    let _ = live_bytes();
    (secs, peak, got)
}

/// The case at sizes `n` and `2n`: the result is `want(n)`, the time grows
/// at most 3x (linear, with room for noise), the peak memory stays under
/// `per_byte` times the input's length plus 1 MiB.
fn linear(name: &str, make: &str, call: &str, n: usize, want: impl Fn(usize) -> f64, per_byte: f64) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lua = lua();
    let len = |n: usize| -> f64 { lua.load(format!("return #(({make})({n}))")).eval().unwrap() };
    let (t1, p1, g1) = measure(&lua, make, call, n);
    let (t2, p2, g2) = measure(&lua, make, call, 2 * n);
    eprintln!("text adversarial {name}: n {n}: {t1:.3} s, peak {p1} B; 2n: {t2:.3} s, peak {p2} B");
    assert_eq!(g1, want(n), "{name}: result at n");
    assert_eq!(g2, want(2 * n), "{name}: result at 2n");
    assert!(t2 < 3.0 * t1 + 0.05, "{name}: not linear: {t1:.3} s at n, {t2:.3} s at 2n");
    for (p, n) in [(p1, n), (p2, 2 * n)] {
        let bound = per_byte * len(n) + (1 << 20) as f64;
        assert!((p as f64) < bound, "{name}: peak {p} B over {bound} B at n = {n}");
    }
}

#[test]
fn long_escape_run() {
    linear(
        "escapes",
        "function(n) return 'name: \"' .. ('\\\\001\\\\x02\\\\u00e9'):rep(n) .. '\"' end",
        "return #Person:decode_text(input).name",
        1 << 19,
        |n| (4 * n) as f64,
        6.0,
    );
}

#[test]
fn long_list() {
    linear(
        "list",
        "function(n) local t = {} for i = 1, n do t[i] = tostring(i % 1000) end \
         return 'lucky_numbers: [' .. table.concat(t, ', ') .. ']' end",
        "return #Person:text_to_binary(input)",
        1 << 18,
        |n| {
            let body: usize = (1..=n).map(|i| if i % 1000 < 128 { 1 } else { 2 }).sum();
            let mut len_bytes = 1;
            while body >> (7 * len_bytes) != 0 {
                len_bytes += 1;
            }
            (1 + len_bytes + body) as f64
        },
        40.0,
    );
}

#[test]
fn many_fields() {
    linear(
        "fields",
        "function(n) return ('emails: \"x\"\\n'):rep(n) end",
        "return #Person:decode_text(input).emails",
        1 << 16,
        |n| n as f64,
        60.0,
    );
}

#[test]
fn many_wire_fields_printed() {
    linear(
        "print",
        "function(n) return ('\\16\\1'):rep(n) end",
        "return #Person:binary_to_text(input)",
        1 << 18,
        |_| 7.0,
        40.0,
    );
}

#[test]
fn long_comment() {
    linear(
        "comment",
        "function(n) return '# ' .. ('x'):rep(n) .. '\\nage: 5' end",
        "return Person:decode_text(input).age",
        1 << 22,
        |_| 5.0,
        2.0,
    );
}

/// Runs on a thread with a 64 MiB stack: a debug build's frames are
/// several times a release build's (see `adversarial.rs`).
#[test]
fn nesting_past_max_depth() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let r = std::thread::Builder::new().stack_size(64 << 20).spawn(nesting_cases).unwrap().join();
    if let Err(panic) = r {
        std::panic::resume_unwind(panic);
    }
}

fn nesting_cases() {
    let lua = lua();
    let got: String =
        lua.load("local ok, e = pcall(Node.decode_text, Node, ('child { '):rep(100000)) return e").eval().unwrap();
    assert_eq!(
        got,
        "protolua: decode_text protolua.test.Node: line 1 column 799: field child.child.child.child.child.child.child.\
         child.child.child.child.(…88 more).child: Message is nested deeper than max_depth"
    );
    let got: String = lua
        .load("local ok, e = pcall(Node.text_to_binary, Node, ('child { '):rep(300), { max_depth = 200 }) return e")
        .eval()
        .unwrap();
    assert!(got.contains("line 1 column 1599: field child.") && got.contains("(…188 more)"), "{got}");
}

/// Every kind of failing call, 10^4 times: the memory live after a full
/// collection does not grow (errors are raised after the Rust side has
/// dropped what it held).
#[test]
fn errors_do_not_leak() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lua = lua();
    let round = r#"
        for _ = 1, 10000 do
            pcall(Person.decode_text, Person, 'name: "abc" age: 1 nope: 2')
            pcall(Person.text_to_binary, Person, 'address { city: "x" street: 5 }')
            pcall(Person.binary_to_text, Person, '\255\255')
            pcall(Person.encode_text, Person, { age = 'x' })
            pcall(Person.decode_text, Person, 'name: "\\q"')
            pcall(Person.binary_to_text, Person, '', { single_line = 1 })
            pcall(Node.decode_text, Node, ('child { '):rep(300))
        end
        collectgarbage('collect') collectgarbage('collect')
    "#;
    lua.load(round).exec().unwrap();
    let before = live_bytes();
    lua.load(round).exec().unwrap();
    let after = live_bytes();
    assert!(after - before < 64 << 10, "live memory grew by {} B over 70,000 failing calls", after - before);
}
