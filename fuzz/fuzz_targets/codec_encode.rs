//! Encodes Lua tables built from the fuzz input (`fuzz/lua/codec_encode.lua`)
//! with the real codec inside an embedded LuaJIT: every Lua value type, real
//! field names and junk keys, metatables, int64 cdata, NULL cdata, cycles.
//! The result is a "protolua:" error or bytes that decode back and re-encode
//! to identical bytes.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

thread_local! {
    static HARNESS: common::Harness = common::Harness::new("codec_encode", include_str!("../lua/codec_encode.lua"));
}

fuzz_target!(|data: &[u8]| {
    HARNESS.with(|h| h.run(data));
});
