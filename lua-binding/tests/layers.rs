//! The layout's rules, checked on the source tree (docs/ARCHITECTURE.md):
//!
//! * dependencies point one way: `slots` ← `lua` ← `plan` ← `error`,
//!   `unknown` ← the codecs and front ends (`binary`, `json`, `text`,
//!   `proto`) ← `api` ← `lib.rs`; a codec never names another codec;
//! * no source file over 800 lines, no function over 150;
//! * every `unsafe fn` states its caller's contract in a `# Safety`
//!   section of its doc comment.

use std::fs;
use std::path::{Path, PathBuf};

/// A top-level module's layer: a module may name only modules of a lower
/// layer, or its own.
fn layer(module: &str) -> Option<u32> {
    Some(match module {
        "slots" => 0,
        "lua" => 1,
        "plan" => 2,
        "error" | "unknown" => 3,
        "binary" | "json" | "text" | "proto" => 4,
        "api" => 5,
        "lib" => 6,
        _ => return None,
    })
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level module a source file belongs to (`lib` for lib.rs).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component").as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_string()
}

/// The code of a line: nothing for a comment line, the part before a
/// trailing `//` comment otherwise.
fn code(line: &str) -> &str {
    let t = line.trim_start();
    if t.starts_with("//") {
        return "";
    }
    match line.find("// ") {
        Some(i) if !line[..i].contains('"') => &line[..i],
        _ => line,
    }
}

#[test]
fn dependencies_point_one_way() {
    let src = src_dir();
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut bad = Vec::new();
    for file in &files {
        let own = module_of(&src, file);
        let own_layer =
            layer(&own).unwrap_or_else(|| panic!("{}: module {own} has no layer in tests/layers.rs", file.display()));
        let text = fs::read_to_string(file).expect("read");
        for (n, line) in text.lines().enumerate() {
            let code = code(line);
            let mut rest = code;
            while let Some(i) = rest.find("crate::") {
                rest = &rest[i + "crate::".len()..];
                let named: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if named == own {
                    continue;
                }
                match layer(&named) {
                    Some(l) if l < own_layer => {}
                    Some(_) => bad.push(format!("{}:{}: {own} names crate::{named}", file.display(), n + 1)),
                    None => {}
                }
            }
            // `super::super` out of a top-level module would dodge the check.
            if own != "lib" && code.contains("super::super::super") {
                bad.push(format!("{}:{}: reaches three levels up", file.display(), n + 1));
            }
        }
    }
    assert!(bad.is_empty(), "layer rule broken:\n{}", bad.join("\n"));
}

/// Where each function of `text` starts and how many lines it spans
/// (rustfmt layout: the closing brace at the `fn` line's indentation).
fn functions(text: &str) -> Vec<(usize, usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let is_fn = t.starts_with("fn ")
            || (t.starts_with("pub") || t.starts_with("unsafe") || t.starts_with("const") || t.starts_with("extern"))
                && t.contains(" fn ")
                && !t.contains('=');
        if !is_fn || t.ends_with(';') {
            continue;
        }
        let close = format!("{}}}", " ".repeat(indent));
        if let Some(end) = lines[i + 1..].iter().position(|l| *l == close || l.starts_with(&format!("{close} "))) {
            out.push((i + 1, end + 2, t.chars().take(60).collect()));
        }
    }
    out
}

#[test]
fn files_and_functions_stay_small() {
    let src = src_dir();
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut bad = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("read");
        let n = text.lines().count();
        if n > 800 {
            bad.push(format!("{}: {n} lines (limit 800)", file.display()));
        }
        for (line, len, head) in functions(&text) {
            if len > 150 {
                bad.push(format!("{}:{line}: {len} lines (limit 150): {head}", file.display()));
            }
        }
    }
    assert!(bad.is_empty(), "size limits broken:\n{}", bad.join("\n"));
}

/// The name of the `unsafe fn` that `line` (code, comments stripped)
/// declares, if it declares one: optional `pub`/`pub(..)`, `const`,
/// `async`, then `unsafe`, an optional `extern "ABI"` and `fn`. A type
/// alias or a parameter of `unsafe fn` pointer type does not start so.
fn unsafe_fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if let Some(r) = rest.strip_prefix("pub") {
        rest = if r.starts_with('(') { &r[r.find(')')? + 1..] } else { r };
        rest = rest.trim_start();
    }
    for kw in ["const ", "async "] {
        if let Some(r) = rest.strip_prefix(kw) {
            rest = r.trim_start();
        }
    }
    rest = rest.strip_prefix("unsafe ")?.trim_start();
    if let Some(r) = rest.strip_prefix("extern ") {
        let r = r.trim_start().strip_prefix('"')?;
        rest = r[r.find('"')? + 1..].trim_start();
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Whether the doc comment above line `i` has a `# Safety` heading. Walks
/// up over attributes (one or several lines each) and plain comments to
/// the `///` lines, and stops at anything else.
fn has_safety_section(lines: &[&str], i: usize) -> bool {
    let mut j = i;
    while j > 0 {
        j -= 1;
        let t = lines[j].trim();
        if let Some(doc) = t.strip_prefix("///") {
            let doc = doc.trim();
            if doc.starts_with('#') && doc.trim_start_matches('#').trim() == "Safety" {
                return true;
            }
            continue;
        }
        let attribute_or_comment = t.starts_with("#[") || (t.starts_with("//") && !t.starts_with("//!"));
        if attribute_or_comment {
            continue;
        }
        if !t.ends_with(']') {
            return false;
        }
        // The last line of an attribute spread over several lines.
        while j > 0 && !lines[j].trim_start().starts_with("#[") {
            j -= 1;
        }
    }
    false
}

#[test]
fn every_unsafe_fn_has_a_safety_section() {
    // The declarations the scan must see, and the lines it must not take.
    assert_eq!(unsafe_fn_name("    pub(in crate::binary) unsafe fn a<'x>("), Some("a"));
    assert_eq!(unsafe_fn_name("pub unsafe extern \"C-unwind\" fn b(L: *mut lua_State)"), Some("b"));
    assert_eq!(unsafe_fn_name("unsafe fn c()"), Some("c"));
    assert_eq!(unsafe_fn_name("type F = unsafe extern \"C\" fn();"), None);
    assert_eq!(unsafe_fn_name("pub fn d()"), None);
    let lines =
        ["/// Doc.", "///", "/// # Safety", "/// Contract.", "#[inline]", "#[allow(", "    x,", ")]", "unsafe fn e()"];
    assert!(has_safety_section(&lines, 8));
    assert!(!has_safety_section(&["}", "/// Doc.", "#[inline]", "unsafe fn f()"], 3));

    let src = src_dir();
    let mut files = Vec::new();
    sources(&src, &mut files);
    let (mut seen, mut bad) = (0, Vec::new());
    for file in &files {
        let text = fs::read_to_string(file).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(name) = unsafe_fn_name(code(line)) else { continue };
            seen += 1;
            if !has_safety_section(&lines, i) {
                bad.push(format!("{}:{}: unsafe fn {name}", file.display(), i + 1));
            }
        }
    }
    assert!(seen > 0, "no unsafe fn found: the scan is broken");
    assert!(bad.is_empty(), "unsafe fn without a `# Safety` section in its doc comment:\n{}", bad.join("\n"));
}
