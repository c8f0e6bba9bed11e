//! The `.proto` front end (`protolua::proto`, behind `load_proto`/`parse`)
//! against protoc: for every fixture set that protoc built from `.proto`
//! files, compiling the same files gives equivalent descriptors (every
//! message, field, enum, service and option, json names and defaults),
//! options compared as their encoded bytes so that custom options count;
//! float defaults spelled as protoc spells them).

use std::path::PathBuf;

use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, ReflectMessage};
use prost_types::{FileDescriptorProto, FileDescriptorSet};
use protolua::proto::{Request, compile};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

fn on_disk(files: &[&str], import_paths: &[&str]) -> Request {
    Request {
        files: files.iter().map(|s| s.to_string()).collect(),
        import_paths: import_paths.iter().map(|s| s.to_string()).collect(),
        files_on_disk: true,
        ..Default::default()
    }
}

/// The file, without source info, re-encoded through reflection (so that
/// extension options survive) and decoded back as a plain message and the
/// per-element options bytes.
fn normal(pool: &DescriptorPool, name: &str) -> (FileDescriptorProto, Vec<u8>) {
    let f = pool.get_file_by_name(name).unwrap_or_else(|| panic!("{name} missing"));
    let mut dynf =
        DynamicMessage::decode(prost_types::FileDescriptorProto::default().descriptor(), f.encode_to_vec().as_slice())
            .unwrap();
    dynf.clear_field_by_name("source_code_info");
    let bytes = dynf.encode_to_vec();
    let mut plain = FileDescriptorProto::decode(bytes.as_slice()).unwrap();
    plain.source_code_info = None;
    (plain, bytes)
}

/// Panic with the first differing lines of the pretty-printed files.
fn assert_same(t: &FileDescriptorProto, o: &FileDescriptorProto, what: &str) {
    if t == o {
        return;
    }
    let (a, b) = (format!("{t:#?}"), format!("{o:#?}"));
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let from = i.saturating_sub(12);
    panic!(
        "{what} differs at line {i}:\nprotoc:\n{}\nours:\n{}",
        a[from..(i + 3).min(a.len())].join("\n"),
        b[from..(i + 3).min(b.len())].join("\n")
    );
}

/// Compare every file of protoc's `fds` with ours.
fn assert_equivalent(fds: &str, ours: &[u8]) {
    let theirs = std::fs::read(fixtures().join("descriptors").join(fds)).unwrap();
    let theirs_pool = DescriptorPool::decode(theirs.as_slice()).unwrap();
    let ours_pool = DescriptorPool::decode(ours).unwrap();
    let their_names: Vec<String> =
        FileDescriptorSet::decode(theirs.as_slice()).unwrap().file.into_iter().map(|f| f.name().to_owned()).collect();
    let our_names: Vec<String> =
        FileDescriptorSet::decode(ours).unwrap().file.into_iter().map(|f| f.name().to_owned()).collect();
    let mut a = their_names.clone();
    let mut b = our_names.clone();
    a.sort();
    b.sort();
    assert_eq!(a, b, "{fds}: the same files");
    for name in &their_names {
        // protoc's descriptor.proto is its own release's, protox's is
        // prost-types': both describe the options, at different versions.
        if name == "google/protobuf/descriptor.proto" {
            continue;
        }
        let (t, tb) = normal(&theirs_pool, name);
        let (o, ob) = normal(&ours_pool, name);
        assert_same(&t, &o, &format!("{fds}: {name}"));
        // The bytes also hold the custom options (extensions, which the
        // plain message drops).
        assert!(tb == ob, "{fds}: {name}: the encoded files differ");
    }
}

#[test]
fn fixtures_match_protoc() {
    let proto = fixtures().join("proto");
    let p = proto.to_str().unwrap();
    let one = |f: &str| format!("{p}/{f}");
    for (fds, files) in [
        ("hello.fds", vec!["hello.proto"]),
        ("proto2_basic.fds", vec!["proto2_basic.proto"]),
        ("alltypes3.fds", vec!["alltypes3.proto"]),
        ("many_required.fds", vec!["many_required.proto"]),
        ("svc.fds", vec!["svc/greeter.proto", "svc/legacy.proto"]),
        ("all.fds", vec!["hello.proto", "proto2_basic.proto", "alltypes3.proto", "imported.proto"]),
    ] {
        let paths: Vec<String> = files.iter().map(|f| one(f)).collect();
        let paths: Vec<&str> = paths.iter().map(|s| s.as_str()).collect();
        let include = if fds == "svc.fds" { format!("{p}/svc") } else { p.to_owned() };
        let ours = compile(&on_disk(&paths, &[&include])).unwrap_or_else(|e| panic!("{fds}: {e}"));
        assert_equivalent(fds, &ours);
        // Default import paths (each file's directory) give the same.
        let ours = compile(&on_disk(&paths, &[])).unwrap_or_else(|e| panic!("{fds}: {e}"));
        assert_equivalent(fds, &ours);
    }
}

#[test]
fn conformance_protos_match_protoc() {
    let dir = fixtures().join("proto/conformance");
    let d = dir.to_str().unwrap();
    let files = [
        "conformance/conformance.proto",
        "google/protobuf/test_messages_proto2.proto",
        "google/protobuf/test_messages_proto3.proto",
    ];
    let ours = compile(&on_disk(&files.map(|f| format!("{d}/{f}")).each_ref().map(|s| s.as_str()), &[d])).unwrap();
    let ours_pool = DescriptorPool::decode(ours.as_slice()).unwrap();
    let our_names: Vec<String> = ours_pool.files().map(|f| f.name().to_owned()).collect();
    // protoc's set also holds editions files (which prost-reflect cannot
    // take as they are): keep the files we compiled, with their imports.
    let theirs = std::fs::read(fixtures().join("descriptors/conformance.fds")).unwrap();
    let mut theirs = FileDescriptorSet::decode(theirs.as_slice()).unwrap();
    theirs.file.retain(|f| our_names.iter().any(|n| n == f.name()));
    assert_eq!(theirs.file.len(), our_names.len(), "the same files");
    let theirs_pool = DescriptorPool::from_file_descriptor_set(theirs).unwrap();
    for name in &our_names {
        let (t, tb) = normal(&theirs_pool, name);
        let (o, ob) = normal(&ours_pool, name);
        assert_same(&t, &o, &format!("conformance: {name}"));
        assert!(tb == ob, "conformance: {name}: the encoded files differ");
    }
}

/// Every prefix (at 3-byte steps) of the fixture sources, and each with
/// one byte changed, compiles or fails with a positioned error; never
/// panics (a cheap stand-in for the `proto_parse` fuzz target).
#[test]
fn truncated_and_mangled_sources_never_panic() {
    let dir = fixtures().join("proto/svc");
    let mut sources = Vec::new();
    for name in ["greeter.proto", "legacy.proto", "opts.proto", "common.proto", "reexport.proto"] {
        sources.push((name.to_owned(), std::fs::read(dir.join(name)).unwrap()));
    }
    let (name, full) = sources[0].clone();
    let mut errors = 0;
    for cut in (0..full.len()).step_by(3) {
        for mangle in [None, Some(b'{'), Some(b'"'), Some(b'\xff'), Some(b'9')] {
            let mut src = full[..cut].to_vec();
            if let (Some(b), Some(last)) = (mangle, src.last_mut()) {
                *last = b;
            }
            let mut srcs = sources.clone();
            srcs[0].1 = src;
            let req = Request { files: vec![name.clone()], sources: srcs, ..Default::default() };
            match std::panic::catch_unwind(|| compile(&req)) {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    errors += 1;
                    assert!(e.starts_with("greeter.proto"), "error without its file: {e}");
                }
                Err(_) => panic!("the parser panicked on greeter.proto cut at {cut}, mangle {mangle:?}"),
            }
        }
    }
    assert!(errors > 100);
}
