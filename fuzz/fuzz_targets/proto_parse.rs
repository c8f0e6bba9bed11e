//! `protolua.parse` on arbitrary `.proto` text (`fuzz/lua/proto_parse.lua`):
//! a "protolua:" error or a schema whose reflection answers are well formed.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

thread_local! {
    static HARNESS: common::Harness = common::Harness::new("proto_parse", include_str!("../lua/proto_parse.lua"));
}

fuzz_target!(|data: &[u8]| {
    HARNESS.with(|h| h.run(data));
});
