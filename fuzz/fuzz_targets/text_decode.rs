//! Parses arbitrary text with the text-format codec inside an embedded
//! LuaJIT. Byte 0 picks the message type (as the codec targets do); the rest
//! is the text. The checks are in `fuzz/lua/text_decode.lua`: a "protolua:"
//! error, the same for `decode_text` and `text_to_binary`, or bytes whose
//! printed text parses back to the same bytes (printing is a fixed point),
//! and a table that `encode_text` / `decode_text` round-trip.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

thread_local! {
    static HARNESS: common::Harness = common::Harness::new("text_decode", include_str!("../lua/text_decode.lua"));
}

fuzz_target!(|data: &[u8]| {
    HARNESS.with(|h| h.run(data));
});
