//! Editions: `syntax = "editions"` files, resolved into the same plan
//! properties proto2 and proto3 files get.
//!
//! `prost-reflect` only knows proto2 and proto3, so [`rewrite_editions`]
//! hands it each editions file marked as proto2 and remembers which files
//! they were (it also normalises every file's `syntax`: last one wins, an
//! empty one, which prost-reflect 0.16 panics on, is dropped). [`Resolver`] then computes the resolved feature set of every
//! field and enum of those files (edition defaults, then the file's,
//! each enclosing message's and the element's own `features` option), and
//! the compiler takes presence, packing, UTF-8 checks, delimited encoding
//! and enum openness from it instead of from the syntax.

use std::collections::HashMap;

use pbwire::{Reader, Tag, WireType, Writer};
use prost::Message as _;
use prost_reflect::{DynamicMessage, EnumDescriptor, MessageDescriptor};

/// `FeatureSet.field_presence`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Presence {
    /// Has-bit presence.
    Explicit,
    /// proto3-style: zero means absent.
    Implicit,
    /// proto2 `required`.
    LegacyRequired,
}

/// A resolved `FeatureSet` (the parts the codec uses).
#[derive(Clone, Copy, Debug)]
pub struct Features {
    /// Field presence.
    pub presence: Presence,
    /// Enums are open (unknown values kept in the field).
    pub open_enum: bool,
    /// Repeated scalars are packed.
    pub packed: bool,
    /// Strings are checked for UTF-8.
    pub verify_utf8: bool,
    /// Sub-messages are group-encoded (DELIMITED).
    pub delimited: bool,
}

impl Features {
    /// Edition 2023 defaults (also what 2024 changes nothing of here).
    pub const EDITION_2023: Features =
        Features { presence: Presence::Explicit, open_enum: true, packed: true, verify_utf8: true, delimited: false };

    /// Apply a serialized `FeatureSet` over `self`.
    fn merge(mut self, bytes: &[u8]) -> Features {
        let mut r = Reader::new(bytes);
        while !r.is_empty() {
            let Ok(tag) = r.read_tag() else { break };
            if tag.wire_type() != WireType::Varint {
                if r.skip_field(tag, 64).is_err() {
                    break;
                }
                continue;
            }
            let Ok(v) = r.read_varint() else { break };
            match (tag.field_number(), v) {
                (1, 1) => self.presence = Presence::Explicit,
                (1, 2) => self.presence = Presence::Implicit,
                (1, 3) => self.presence = Presence::LegacyRequired,
                (2, 1) => self.open_enum = true,
                (2, 2) => self.open_enum = false,
                (3, 1) => self.packed = true,
                (3, 2) => self.packed = false,
                (4, 2) => self.verify_utf8 = true,
                (4, 3) => self.verify_utf8 = false,
                (5, 1) => self.delimited = false,
                (5, 2) => self.delimited = true,
                _ => {}
            }
        }
        self
    }
}

/// Copy of a `FileDescriptorSet` with every editions file marked proto2,
/// and the names of those files.
pub fn rewrite_editions(set: &[u8]) -> Result<(Vec<u8>, Vec<String>), String> {
    let bad = |e: pbwire::Error| format!("malformed FileDescriptorSet: {e}");
    let mut out = Writer::new();
    let mut names = Vec::new();
    let mut r = Reader::new(set);
    while !r.is_empty() {
        let at = r.position();
        let tag = r.read_tag().map_err(bad)?;
        if tag.field_number() != 1 || tag.wire_type() != WireType::Len {
            r.skip_field(tag, 64).map_err(bad)?;
            out.put_bytes(&set[at..r.position()]);
            continue;
        }
        let file = r.read_len_bytes().map_err(bad)?;
        let (bytes, editions_name) =
            rewrite_file(file).map_err(bad)?.map_err(|syntax| format!("unknown syntax \"{syntax}\""))?;
        out.put_tag(tag);
        out.put_len_bytes(&bytes);
        names.extend(editions_name);
    }
    Ok((out.into_vec(), names))
}

/// The file with its `syntax` normalised, and its name when it is an
/// editions file; the inner `Err` is a syntax this crate does not know.
type Rewritten = Result<(Vec<u8>, Option<String>), String>;

/// Copy `file` with its `syntax` fields replaced by one that prost-reflect
/// accepts: the last one wins (as for any non-repeated field), `editions`
/// becomes `proto2`, and an empty or absent syntax (proto2, by
/// descriptor.proto) is left out — prost-reflect 0.16 panics on `""`.
fn rewrite_file(file: &[u8]) -> Result<Rewritten, pbwire::Error> {
    let mut r = Reader::new(file);
    let mut name = String::new();
    let mut syntax: &[u8] = b"";
    let mut out = Writer::new();
    while !r.is_empty() {
        let at = r.position();
        let tag = r.read_tag()?;
        match (tag.field_number(), tag.wire_type()) {
            (1, WireType::Len) => {
                name = String::from_utf8_lossy(r.read_len_bytes()?).into_owned();
                out.put_bytes(&file[at..r.position()]);
            }
            (12, WireType::Len) => syntax = r.read_len_bytes()?,
            _ => {
                r = Reader::with_offset(&file[at..], at);
                r.read_tag()?;
                r.skip_field(tag, 64)?;
                out.put_bytes(&file[at..r.position()]);
            }
        }
    }
    let syntax_tag = Tag::new(12, WireType::Len).expect("a valid tag");
    let editions = match syntax {
        b"" => false,
        b"proto2" | b"proto3" => {
            out.put_tag(syntax_tag);
            out.put_len_bytes(syntax);
            false
        }
        b"editions" => {
            out.put_tag(syntax_tag);
            out.put_len_bytes(b"proto2");
            true
        }
        other => return Ok(Err(String::from_utf8_lossy(other).into_owned())),
    };
    Ok(Ok((out.into_vec(), editions.then_some(name))))
}

/// Resolves features for the elements of editions files.
pub struct Resolver {
    editions_files: Vec<String>,
    cache: HashMap<String, Features>,
}

impl Resolver {
    /// A resolver for the files `rewrite_editions` reported.
    pub fn new(editions_files: Vec<String>) -> Self {
        Resolver { editions_files, cache: HashMap::new() }
    }

    /// Is `file` an editions file?
    pub fn is_editions(&self, file: &str) -> bool {
        self.editions_files.iter().any(|f| f == file)
    }

    /// Features in effect inside message `m` (file, then each enclosing
    /// message, then `m` itself).
    pub fn message(&mut self, m: &MessageDescriptor) -> Features {
        if let Some(f) = self.cache.get(m.full_name()) {
            return *f;
        }
        let outer = match m.parent_message() {
            Some(p) => self.message(&p),
            None => Features::EDITION_2023.merge(&features_of(&m.parent_file().options(), 50)),
        };
        let f = outer.merge(&features_of(&m.options(), 12));
        self.cache.insert(m.full_name().to_owned(), f);
        f
    }

    /// Features of a field (or extension) declared in scope `scope`
    /// (`None`: at file level, with that file's options).
    pub fn field(
        &mut self,
        scope: Option<&MessageDescriptor>,
        file_opts: &DynamicMessage,
        opts: &DynamicMessage,
    ) -> Features {
        let outer = match scope {
            Some(m) => self.message(m),
            None => Features::EDITION_2023.merge(&features_of(file_opts, 50)),
        };
        outer.merge(&features_of(opts, 21))
    }

    /// Features of an enum.
    pub fn enumeration(&mut self, e: &EnumDescriptor) -> Features {
        let outer = match e.parent_message() {
            Some(m) => self.message(&m),
            None => Features::EDITION_2023.merge(&features_of(&e.parent_file().options(), 50)),
        };
        outer.merge(&features_of(&e.options(), 7))
    }
}

/// The serialized `features` field (number `field`) of an options message.
fn features_of(opts: &DynamicMessage, field: u32) -> Vec<u8> {
    let bytes = opts.encode_to_vec();
    let mut r = Reader::new(&bytes);
    let mut out = Vec::new();
    while !r.is_empty() {
        let Ok(tag) = r.read_tag() else { break };
        if tag.field_number() == field && tag.wire_type() == WireType::Len {
            match r.read_len_bytes() {
                // Repeated occurrences of a message field merge.
                Ok(b) => out.extend_from_slice(b),
                Err(_) => break,
            }
        } else if r.skip_field(tag, 64).is_err() {
            break;
        }
    }
    out
}
