//! The binary protobuf codec: Lua tables to and from wire bytes, walking
//! the compiled plans ([`crate::plan`]).

pub mod decode;
pub mod encode;
