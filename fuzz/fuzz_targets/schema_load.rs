//! `protolua.load` on arbitrary bytes (`fuzz/lua/schema_load.lua`): a
//! "protolua:" error or a schema whose messages (up to 20) encode `{}`
//! and decode `""` without crashing.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

thread_local! {
    static HARNESS: common::Harness = common::Harness::new("schema_load", include_str!("../lua/schema_load.lua"));
}

fuzz_target!(|data: &[u8]| {
    HARNESS.with(|h| h.run(data));
});
