//! LuaJIT's table constructors: decode builds message tables and long
//! arrays by calling generated Lua functions instead of one C API call per
//! field or element.

pub mod bulk;
mod bulk_runs;
mod message;
pub mod program;
pub mod shape;
pub mod tree;
