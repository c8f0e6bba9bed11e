//! The protobuf text format, a sibling of the binary codec reading the
//! same plans.
//!
//! Both directions go through [`tree::Msg`], the message as protobuf C++
//! holds it after a parse (merged, last-wins, unknown fields apart):
//!
//! ```text
//! wire bytes --tree::read--> Msg --printer::print--> text
//! text --parser::parse--> Msg --tree::write--> wire bytes
//! ```
//!
//! Lua tables reach it through the binary codec (`encode` then print,
//! parse then `decode`; see `crate::api::text`), so every option of the
//! binary codec applies unchanged.
//!
//! | file | job |
//! |---|---|
//! | `tree.rs` | the message model, wire bytes in and out |
//! | `printer.rs` | `Msg` → text, as C++'s `TextFormat::Printer` |
//! | `tokenizer.rs` | text → tokens, as C++'s `io::Tokenizer` |
//! | `parser.rs` | tokens → `Msg`: fields, messages, lists, `Any`, extensions |
//! | `values.rs` | scalar values, and skipping reserved fields |
//! | `names.rs` | field names: extensions, group-like fields |
//! | `escape.rs` | string escapes both ways |
//! | `numbers.rs` | float printing, integer and float tokens |

pub mod escape;
pub mod names;
pub mod numbers;
pub mod parser;
pub mod printer;
pub mod tokenizer;
pub mod tree;
mod values;

pub use parser::{ParseError, ParseOptions};
pub use printer::PrintOptions;

use crate::plan::Plans;

/// Print the wire bytes of message `mi` as text.
pub fn binary_to_text(plans: &Plans, mi: usize, bytes: &[u8], opts: PrintOptions) -> Result<String, String> {
    let m = tree::read(plans, mi, bytes, opts.max_depth).map_err(|e| e.0)?;
    Ok(printer::print(plans, mi, &m, opts))
}

/// Parse text as message `mi` and write its wire bytes.
pub fn text_to_binary(plans: &Plans, mi: usize, text: &[u8], opts: ParseOptions) -> Result<Vec<u8>, ParseError> {
    let m = parser::parse(plans, mi, text, opts)?;
    let mut w = pbwire::Writer::new();
    tree::write(plans, mi, &m, &mut w);
    Ok(w.into_vec())
}
