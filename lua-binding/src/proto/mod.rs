//! `.proto` sources → the bytes of a `FileDescriptorSet`, with no protoc.
//!
//! Parsing, name resolution and the semantic checks are `protox`'s (a pure
//! Rust protobuf compiler built on `prost-reflect`, which the compile path
//! already uses). This module only decides where files come from (in-memory
//! sources, then the import paths on disk, then the built-in
//! `google/protobuf/*.proto`), refuses editions files plainly (protox has no
//! editions support), and words every error as `file:line:col: what`.
//! Its output is what `protoc --include_imports --descriptor_set_out`
//! writes, and goes through the same [`crate::plan::compile`] path as
//! `protolua.load`. It depends on no Lua or api-layer code.

mod resolve;
mod spelling;

use std::path::{Path, PathBuf};

use protox::Compiler;

use resolve::Resolver;

/// What to compile: top-level files plus where their imports come from.
#[derive(Debug, Default)]
pub struct Request {
    /// Files to compile: paths on disk (`load_proto`) or names of `sources`
    /// (`parse`).
    pub files: Vec<String>,
    /// Directories searched for imports, in order. Empty with
    /// `files_on_disk`: the directory of each file.
    pub import_paths: Vec<String>,
    /// In-memory sources by file name, searched before the import paths.
    pub sources: Vec<(String, Vec<u8>)>,
    /// True when `files` are paths on disk (`load_proto`), false when they
    /// name entries of `sources` (`parse`).
    pub files_on_disk: bool,
}

/// Compile `req` into the encoded `FileDescriptorSet` (imports included,
/// no source info). The error is `file:line:col: what` where a position is
/// known; nothing is returned unless every file compiled.
pub fn compile(req: &Request) -> Result<Vec<u8>, String> {
    let mut includes: Vec<PathBuf> = req.import_paths.iter().map(PathBuf::from).collect();
    if includes.is_empty() && req.files_on_disk {
        for f in &req.files {
            let dir = match Path::new(f).parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            if !includes.contains(&dir) {
                includes.push(dir);
            }
        }
    }
    if req.files.is_empty() {
        return Err("no files given".into());
    }
    let mut sources = Vec::with_capacity(req.sources.len());
    for (name, src) in &req.sources {
        match std::str::from_utf8(src) {
            Ok(s) => sources.push((name.clone(), s.to_owned())),
            Err(e) => return Err(format!("{name}: the source is not valid UTF-8 (byte {})", e.valid_up_to())),
        }
    }
    if req.files_on_disk {
        // A path on disk, or a file name found under an import path (as
        // protoc takes `-I dir file.proto`).
        for f in &req.files {
            if let Err(e) = std::fs::metadata(f)
                && !includes.iter().any(|inc| inc.join(f).is_file())
            {
                return Err(format!("cannot read {f}: {e}"));
            }
        }
    }
    let resolver = Resolver::new(sources, includes.clone());
    let mut compiler = Compiler::with_file_resolver(resolver);
    compiler.include_imports(true).include_source_info(false);
    for f in &req.files {
        if let Err(e) = compiler.open_file(f) {
            return Err(describe(&e, f, &includes, req));
        }
    }
    Ok(spelling::respell(compiler.encode_file_descriptor_set(), &compiler.descriptor_pool()))
}

/// Word a protox error: positions as `file:line:col:`, missing files with
/// the places searched.
fn describe(e: &protox::Error, opened: &str, includes: &[PathBuf], req: &Request) -> String {
    let text = format!("{e:?}");
    if !e.is_file_not_found() {
        return positioned(e, text, includes, req);
    }
    let mut searched: Vec<String> = Vec::new();
    if !req.sources.is_empty() {
        searched.push("the sources given".into());
    }
    searched.extend(includes.iter().map(|p| format!("'{}'", p.display())));
    searched.push("the built-in google/protobuf/*.proto".into());
    let text = if text.contains("is not in any include path") {
        format!("{opened}: not found under the import paths")
    } else {
        text
    };
    format!("{text} (searched: {})", searched.join(", "))
}

/// Make sure an error names its file, line and column: protox leaves the
/// position out when it cannot show the span (one at the end of the file).
fn positioned(e: &protox::Error, text: String, includes: &[PathBuf], req: &Request) -> String {
    use miette::Diagnostic;
    let Some(file) = e.file() else { return text };
    if text.starts_with(&format!("{file}:")) {
        return text;
    }
    let offset = e.labels().and_then(|mut l| l.next()).map(|l| l.offset());
    let source = req
        .sources
        .iter()
        .find(|(n, _)| n == file)
        .map(|(_, s)| String::from_utf8_lossy(s).into_owned())
        .or_else(|| includes.iter().find_map(|inc| std::fs::read_to_string(inc.join(file)).ok()));
    // Errors at the end of the input carry no span: point at the end.
    let offset = offset.or_else(|| text.contains("end of file").then_some(usize::MAX));
    match (offset, source) {
        (Some(off), Some(src)) => {
            let (line, col) = line_col(&src, off);
            format!("{file}:{line}:{col}: {text}")
        }
        _ => format!("{file}: {text}"),
    }
}

/// 1-based line and column (in characters) of byte `offset` of `src`
/// (clamped to its end).
fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let mut off = offset.min(src.len());
    while !src.is_char_boundary(off) {
        off -= 1;
    }
    let before = &src[..off];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}
