//! ProtoJSON: protobuf's canonical JSON mapping, a sibling codec of the
//! binary one, walking the same compiled [`crate::plan`]s.
//!
//! | file | job |
//! |---|---|
//! | [`lexer`] | JSON text → tokens: strict grammar, string escapes, UTF-8, positions |
//! | [`number`] | integers and floats: exact literal parsing, shortest printing |
//! | [`out`] | JSON text out: escaping, compact or indented layout |
//! | [`print`](mod@print) | protobuf bytes → JSON text (`binary_to_json`) |
//! | [`parse`] | JSON text → protobuf bytes (`json_to_binary`) |
//! | [`wkt`] | the well-known types' special forms (Timestamp, Duration, ...) |
//! | [`error`] | the error type: what, field path, line/column |
//!
//! The codec is plain Rust: it never calls Lua, so the api layer
//! (`crate::api::json`) runs it, drops its memory, and only then raises.

pub mod error;
pub mod lexer;
pub mod number;
pub mod out;
pub mod parse;
pub mod print;
pub mod wkt;

pub use error::JsonError;

use crate::plan::Plans;

/// Options of the JSON codec (per schema, overridable per call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonOptions {
    /// Print `json_name`/lowerCamel keys (true) or the proto field names.
    pub json_names: bool,
    /// Print fields without presence at their zero values, empty repeated
    /// fields as `[]` and empty maps as `{}`.
    pub emit_defaults: bool,
    /// Print enum values as numbers.
    pub enums_as_number: bool,
    /// Parse: skip unknown fields and unknown enum names.
    pub ignore_unknown: bool,
    /// `None`: compact output; `Some(n)`: one member per line, `n` spaces
    /// per level.
    pub indent: Option<u8>,
    /// Nesting limit, on both sides.
    pub max_depth: u32,
    /// Parse: refuse a message without its proto2 `required` fields.
    pub check_required: bool,
}

impl Default for JsonOptions {
    fn default() -> Self {
        JsonOptions {
            json_names: true,
            emit_defaults: false,
            enums_as_number: false,
            ignore_unknown: false,
            indent: None,
            max_depth: 100,
            check_required: true,
        }
    }
}

/// Buffers reused across calls (a schema owns one set, `crate::api::json`):
/// the output of either direction and the printer's and parser's scratch,
/// so that a steady state of calls allocates nothing.
#[derive(Default)]
pub struct JsonBuffers {
    /// JSON text out ([`binary_to_json_into`]).
    pub text: Vec<u8>,
    /// Protobuf bytes out ([`json_to_binary_into`]).
    pub bytes: pbwire::Writer,
    print: print::PrintScratch,
    parse: parse::ParseScratch,
}

impl JsonBuffers {
    /// After a call: let go of an output buffer over 4 MiB of which the
    /// call used less than a quarter (one huge message does not pin its
    /// memory), as the binary encoder does.
    pub fn trim(&mut self) {
        let big = |len: usize, cap: usize| cap > (4 << 20) && len < cap / 4;
        if big(self.text.len(), self.text.capacity()) {
            self.text = Vec::new();
        }
        if big(self.bytes.len(), self.bytes.capacity()) {
            self.bytes = pbwire::Writer::new();
        }
    }
}

/// [`binary_to_json`] into `b.text` (emptied first), with `b`'s scratch.
pub fn binary_to_json_into(
    plans: &Plans,
    msg: u32,
    bytes: &[u8],
    opts: &JsonOptions,
    b: &mut JsonBuffers,
) -> Result<(), JsonError> {
    b.text.clear();
    print::Printer::new(plans, opts, &mut b.text, &mut b.print).run(msg, bytes)
}

/// [`json_to_binary`] into `b.bytes` (emptied first), with `b`'s scratch.
pub fn json_to_binary_into(
    plans: &Plans,
    msg: u32,
    text: &[u8],
    opts: &JsonOptions,
    b: &mut JsonBuffers,
) -> Result<(), JsonError> {
    b.bytes.clear();
    parse::Parser::new(plans, opts, text, &mut b.bytes, &mut b.parse).run(msg)
}

/// Print the protobuf encoding `bytes` of message `msg` as JSON into `out`.
pub fn binary_to_json(
    plans: &Plans,
    msg: u32,
    bytes: &[u8],
    opts: &JsonOptions,
    out: &mut Vec<u8>,
) -> Result<(), JsonError> {
    print::Printer::new(plans, opts, out, &mut print::PrintScratch::default()).run(msg, bytes)
}

/// Parse the JSON `text` as message `msg`, appending its protobuf encoding
/// to `out`.
pub fn json_to_binary(
    plans: &Plans,
    msg: u32,
    text: &[u8],
    opts: &JsonOptions,
    out: &mut pbwire::Writer,
) -> Result<(), JsonError> {
    parse::Parser::new(plans, opts, text, out, &mut parse::ParseScratch::default()).run(msg)
}
#[cfg(test)]
mod tests;
