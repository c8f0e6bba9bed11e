//! Parses arbitrary text as ProtoJSON with the real codec inside an
//! embedded LuaJIT. Byte 0 picks the message type (hello.Person,
//! proto2_basic.BenchPayload, TestAllTypesProto2, TestAllTypesProto3) and
//! the JSON options; the rest is the text. The checks are in
//! `fuzz/lua/codec_json.lua`: a "protolua:" error from both json_to_binary
//! and decode_json, or bytes that decode, print back (binary_to_json ==
//! encode_json of the table) and reach a JSON fixpoint.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

thread_local! {
    static HARNESS: common::Harness = common::Harness::new("codec_json", include_str!("../lua/codec_json.lua"));
}

fuzz_target!(|data: &[u8]| {
    HARNESS.with(|h| h.run(data));
});
