//! Link flags for the loadable module: on macOS a cdylib must be told that
//! the Lua C API symbols come from the host process at load time.
fn main() {
    let module = std::env::var_os("CARGO_FEATURE_MODULE").is_some();
    let macos = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("macos");
    if module && macos {
        println!("cargo:rustc-cdylib-link-arg=-undefined");
        println!("cargo:rustc-cdylib-link-arg=dynamic_lookup");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
