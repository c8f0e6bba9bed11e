//! The Lua-facing API: the schema userdata and its methods, message
//! handles and the encode/decode entry points.

pub mod message;
pub mod options;
pub mod schema;
pub mod text;
