//! The JSON codec's error: what went wrong, in which field, where.
//!
//! Unlike the binary codec's heap-free `CodecError`, this one owns a
//! `String`: the JSON codec never calls Lua, so the api layer formats the
//! error into a stack buffer and drops it before raising.

use std::fmt;

/// Longest field path an error spells out in full (see [`JsonError::in_field`]).
pub const PATH_MAX: usize = 200;

/// Where in the input an error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// Not tied to a position.
    Nowhere,
    /// A position in JSON text (line and column 1-based, column in bytes).
    Text {
        /// Byte offset.
        byte: usize,
        /// Line, 1-based.
        line: usize,
        /// Column, 1-based, in bytes.
        col: usize,
    },
    /// A byte offset in protobuf bytes.
    Wire(usize),
}

/// A JSON encode/decode failure: boxed, so that the codec's results are
/// a word or two wide and cost nothing to pass up on success.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError(Box<ErrorInfo>);

/// What a [`JsonError`] says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorInfo {
    /// What went wrong.
    pub what: String,
    /// The field path (`items[3].when`, `labels["k"]`), empty at the root.
    pub path: String,
    /// Where.
    pub at: At,
    /// The input was malformed (false: it was well formed but has no JSON
    /// form, e.g. a Timestamp out of range).
    pub input: bool,
}

impl std::ops::Deref for JsonError {
    type Target = ErrorInfo;
    fn deref(&self) -> &ErrorInfo {
        &self.0
    }
}

impl std::ops::DerefMut for JsonError {
    fn deref_mut(&mut self) -> &mut ErrorInfo {
        &mut self.0
    }
}

impl JsonError {
    /// An error about malformed input.
    #[cold]
    pub fn new(what: impl Into<String>) -> Self {
        JsonError(Box::new(ErrorInfo { what: what.into(), path: String::new(), at: At::Nowhere, input: true }))
    }

    /// An error about a value that has no JSON form.
    #[cold]
    pub fn unprintable(what: impl Into<String>) -> Self {
        let mut e = Self::new(what);
        e.input = false;
        e
    }

    /// The same error at byte `byte` of the JSON text `src`.
    pub fn at_text(mut self, src: &[u8], byte: usize) -> Self {
        let byte = byte.min(src.len());
        let before = &src[..byte];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = byte - before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
        self.at = At::Text { byte, line, col };
        self
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "field {}: ", self.path)?;
        }
        f.write_str(&self.what)?;
        match self.at {
            At::Nowhere => Ok(()),
            At::Text { byte, line, col } => write!(f, " at line {line} column {col} (byte {byte})"),
            At::Wire(byte) => write!(f, " (byte {byte})"),
        }
    }
}

impl JsonError {
    /// The same error one level down: inside field `name`.
    #[cold]
    pub fn in_field(mut self, name: &str) -> Self {
        if self.elided() {
            return self;
        }
        if self.path.is_empty() || self.path.starts_with('[') {
            self.path.insert_str(0, name);
        } else {
            self.path.insert(0, '.');
            self.path.insert_str(0, name);
        }
        self
    }

    /// The same error one level down: inside element `i` of a repeated
    /// field (the field's own name is added by [`Self::in_field`]).
    #[cold]
    pub fn in_index(mut self, i: usize) -> Self {
        let step = format!("[{i}]");
        self.join(&step);
        self
    }

    /// The same error one level down: inside the map entry of key `k`.
    #[cold]
    pub fn in_key(mut self, k: &[u8]) -> Self {
        let step = format!("[{:?}]", String::from_utf8_lossy(&k[..k.len().min(40)]));
        self.join(&step);
        self
    }

    /// A deep path keeps its innermost [`PATH_MAX`] bytes, after `...`.
    fn elided(&mut self) -> bool {
        if self.path.starts_with("...") {
            return true;
        }
        if self.path.len() > PATH_MAX {
            self.path.insert_str(0, "...");
            return true;
        }
        false
    }

    fn join(&mut self, step: &str) {
        if self.elided() {
            return;
        }
        if !self.path.is_empty() && !self.path.starts_with('[') {
            self.path.insert(0, '.');
        }
        self.path.insert_str(0, step);
    }
}
