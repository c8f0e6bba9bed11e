//! The Lua-facing API: the schema userdata and its methods, message
//! handles and the encode/decode entry points.

pub mod grpc;
pub mod json;
pub mod message;
pub mod options;
pub mod pb;
pub mod proto;
pub mod reflect;
pub mod schema;
pub mod text;
