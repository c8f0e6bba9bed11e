//! Decodes arbitrary bytes with the real codec inside an embedded LuaJIT.
//! Byte 0 picks the message type (hello.Person, proto2_basic.BenchPayload,
//! TestAllTypesProto2, TestAllTypesProto3) and the decode options; the rest
//! is the payload. The checks are in `fuzz/lua/codec_decode.lua`: a
//! "protolua:" error or a table that re-encodes, decodes back equal
//! (unknown fields included) and re-encodes to the same bytes.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

thread_local! {
    static HARNESS: common::Harness = common::Harness::new("codec_decode", include_str!("../lua/codec_decode.lua"));
}

fuzz_target!(|data: &[u8]| {
    HARNESS.with(|h| h.run(data));
});
