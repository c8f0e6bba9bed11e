//! The compiled schema: flat, index-linked plans the codec walks.
//!
//! In the spirit of upb's mini-tables: each message is a [`MessagePlan`]
//! holding its fields sorted by number, a direct-index table for small
//! field numbers and a binary-search fallback for the rest. Fields refer to
//! sub-messages and enums by index into the [`Plans`] arrays and to their
//! Lua key by `key_id` (a slot of the per-schema table of interned key
//! strings), so the hot loops never touch a name or a hash map.

pub mod compile;
pub mod features;
pub mod options;

use pbwire::{EncodedTag, WireType};

/// Field numbers below this are found by direct indexing.
pub const DENSE_LIMIT: u32 = 64;

/// What a field holds on the wire and in Lua.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `double`: fixed64 bits, Lua number.
    Double,
    /// `float`: fixed32 bits, Lua number.
    Float,
    /// `int64`: varint, two's complement.
    Int64,
    /// `uint64`: varint.
    UInt64,
    /// `int32`: varint, negative values sign-extended to 10 bytes.
    Int32,
    /// `fixed64`: 8 bytes little endian.
    Fixed64,
    /// `fixed32`: 4 bytes little endian.
    Fixed32,
    /// `bool`: varint 0/1.
    Bool,
    /// `string`: LEN, UTF-8 (validated when the plan says so).
    String,
    /// `bytes`: LEN.
    Bytes,
    /// `uint32`: varint.
    UInt32,
    /// `sfixed32`: 4 bytes, signed.
    SFixed32,
    /// `sfixed64`: 8 bytes, signed.
    SFixed64,
    /// `sint32`: zigzag varint.
    SInt32,
    /// `sint64`: zigzag varint.
    SInt64,
    /// An enum: varint int32; `sub` is the enum index.
    Enum,
    /// A nested message in a LEN; `sub` is the message index.
    Message,
    /// A group (START_GROUP … END_GROUP); `sub` is the message index.
    Group,
}

impl Kind {
    /// The wire type one (unpacked) value of this kind uses.
    pub const fn wire_type(self) -> WireType {
        match self {
            Kind::Double | Kind::Fixed64 | Kind::SFixed64 => WireType::I64,
            Kind::Float | Kind::Fixed32 | Kind::SFixed32 => WireType::I32,
            Kind::String | Kind::Bytes | Kind::Message => WireType::Len,
            Kind::Group => WireType::StartGroup,
            _ => WireType::Varint,
        }
    }

    /// Whether values of this kind may be packed into one LEN run.
    pub const fn is_packable(self) -> bool {
        !matches!(self, Kind::String | Kind::Bytes | Kind::Message | Kind::Group)
    }

    /// Whether the kind is a varint whose every value is valid (not an
    /// enum, whose closed form rejects values).
    pub const fn is_plain_varint(self) -> bool {
        matches!(
            self,
            Kind::Int32 | Kind::Int64 | Kind::UInt32 | Kind::UInt64 | Kind::SInt32 | Kind::SInt64 | Kind::Bool
        )
    }

    /// Whether the kind is a 64-bit integer (needs the int64 representation).
    pub const fn is_64bit_integer(self) -> bool {
        matches!(self, Kind::Int64 | Kind::UInt64 | Kind::Fixed64 | Kind::SFixed64 | Kind::SInt64)
    }

    /// The `.proto` spelling, for `fields()` and error messages.
    pub const fn proto_name(self) -> &'static str {
        match self {
            Kind::Double => "double",
            Kind::Float => "float",
            Kind::Int64 => "int64",
            Kind::UInt64 => "uint64",
            Kind::Int32 => "int32",
            Kind::Fixed64 => "fixed64",
            Kind::Fixed32 => "fixed32",
            Kind::Bool => "bool",
            Kind::String => "string",
            Kind::Bytes => "bytes",
            Kind::UInt32 => "uint32",
            Kind::SFixed32 => "sfixed32",
            Kind::SFixed64 => "sfixed64",
            Kind::SInt32 => "sint32",
            Kind::SInt64 => "sint64",
            Kind::Enum => "enum",
            Kind::Message => "message",
            Kind::Group => "group",
        }
    }
}

/// How many values a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Card {
    /// One value (proto3 implicit presence, proto2/proto3 `optional`, `required`).
    Single,
    /// `repeated`: a Lua array.
    Repeated,
    /// `map<K, V>`: a Lua table; `sub` is the entry message (fields 1 and 2).
    Map,
}

/// Sentinel for "no oneof".
pub const NO_ONEOF: u16 = u16::MAX;

/// A singular field's default: its declared `[default = …]` or the type's
/// zero value (option `defaults`). `None` for fields that take no default
/// (messages, repeated, maps, oneof members).
#[derive(Clone, Debug, PartialEq)]
pub enum DefaultValue {
    /// No default is materialized.
    None,
    /// `bool`.
    Bool(bool),
    /// Signed integers (32- and 64-bit).
    Int(i64),
    /// Unsigned integers (32- and 64-bit).
    UInt(u64),
    /// `float`/`double`.
    Float(f64),
    /// `string`/`bytes`.
    Bytes(Box<[u8]>),
    /// Enum number.
    Enum(i32),
}

/// One field of a message plan.
#[derive(Clone, Debug)]
pub struct FieldPlan {
    /// Field number.
    pub number: u32,
    /// Default for option `defaults`.
    pub default: DefaultValue,
    /// Value kind.
    pub kind: Kind,
    /// Cardinality.
    pub card: Card,
    /// Encode repeated scalars packed.
    pub packed: bool,
    /// Validate UTF-8 of `string` values.
    pub utf8: bool,
    /// `required` (proto2); checked by the later proto2 work.
    pub required: bool,
    /// Singular field without explicit presence (proto3 plain scalar):
    /// it holds the zero value when absent.
    pub implicit: bool,
    /// Binary encode leaves the field out when it holds the zero value:
    /// [`Self::implicit`], unless the schema was loaded with
    /// `encode_zeros` (see [`Plans::write_zeros`]).
    pub skip_zero: bool,
    /// Index of the Lua key string in the schema's key table (1-based).
    pub key_id: i32,
    /// Sub-message or enum index (see [`Kind`]); for maps the entry message.
    pub sub: u32,
    /// The tag written before each value (for packed fields: the LEN tag).
    pub tag: EncodedTag,
    /// Index into the message's oneof list, or [`NO_ONEOF`].
    pub oneof: u16,
    /// For repeated and map fields: ordinal among them (decode tracks
    /// element counts by it).
    pub slot: u16,
    /// Field name as written in the `.proto` (also the Lua key).
    pub name: Box<str>,
    /// The ProtoJSON name (`json_name`, or protoc's lowerCamel of the
    /// name); for extensions the key name `[full.name]`.
    pub json_name: Box<str>,
    /// For a *plain* field — singular, not `required`, in no oneof, not a
    /// message or group, not a closed enum — its wire type's bits; for any
    /// other field [`NOT_PLAIN`]. Decode stores a plain field's value
    /// after one compare with the tag's wire type (see [`plain_wire_of`]).
    pub plain_wire: u8,
}

/// [`FieldPlan::plain_wire`] of a field that is not plain (no wire type
/// has these bits).
pub const NOT_PLAIN: u8 = 0xFF;

/// The [`FieldPlan::plain_wire`] of `f` (`enums`: the schema's enums).
pub fn plain_wire_of(f: &FieldPlan, enums: &[EnumPlan]) -> u8 {
    if !f.required && plain_but_required(f, enums) { f.kind.wire_type() as u8 } else { NOT_PLAIN }
}

/// Whether `f` is plain, `required` aside: singular, in no oneof, not a
/// message or group, not a closed enum.
fn plain_but_required(f: &FieldPlan, enums: &[EnumPlan]) -> bool {
    f.card == Card::Single
        && f.oneof == NO_ONEOF
        && !matches!(f.kind, Kind::Message | Kind::Group)
        && !(f.kind == Kind::Enum && enums.get(f.sub as usize).is_none_or(|e| e.closed))
}

/// One oneof of a message (synthetic proto3-optional oneofs are left out).
#[derive(Clone, Debug)]
pub struct OneofPlan {
    /// Oneof name.
    pub name: Box<str>,
    /// Indices into the message's `fields` of the members.
    pub members: Box<[u16]>,
}

/// One message type.
#[derive(Clone, Debug)]
pub struct MessagePlan {
    /// Full name without the leading dot (`hello.Person`).
    pub full_name: Box<str>,
    /// Fields sorted by number.
    pub fields: Box<[FieldPlan]>,
    /// `dense[n]` = index+1 of the field numbered `n`, 0 when none (n < DENSE_LIMIT).
    pub dense: Box<[u16]>,
    /// Oneofs.
    pub oneofs: Box<[OneofPlan]>,
    /// Number of repeated + map fields.
    pub n_slots: u16,
    /// For map entry messages: true.
    pub is_map_entry: bool,
    /// Indices (into `fields`) of the proto2 `required` fields.
    pub required: Box<[u16]>,
    /// Bit `i` for each required field `fields[i]`, when all of them have
    /// an index below 64 (decode's seen-set covers them); 0 otherwise.
    pub required_mask: u64,
    /// Decode's fast path: indexed by a one-byte tag, index+1 of the field
    /// that the tag names with that field's own wire type, when the field
    /// is *plain* (see [`FieldPlan::plain_wire`]) or would be but for
    /// `required` (then with [`PLAIN_REQUIRED`] set); 0 for any other tag.
    /// 128 entries, or none when the message has no such field numbered
    /// below 16.
    pub plain_by_tag: Box<[u16]>,
    /// The fields of [`Self::plain_by_tag`] again, indexed by field number
    /// (16 entries, or none when that table has none), with what decode's
    /// root fast path needs of them (see [`PlainTag`]).
    pub plain_by_number: Box<[PlainTag]>,
    /// Decode takes its lean frame for this message (see [`is_lean`]).
    pub lean: bool,
    /// Decode may build this message's table with a shape constructor
    /// (LuaJIT; see [`by_ctor`]).
    pub by_ctor: bool,
    /// Field names declared `reserved` (the text format skips them).
    pub reserved_names: Box<[Box<str>]>,
}

/// Whether decode may build a message's table with a shape constructor
/// (`crate::binary::decode::ctor::shape`): no oneofs and no map fields (whose bookkeeping
/// needs the table as it fills), not itself a map entry, and at most 64
/// fields (the walk's seen-set is one `u64` by field index).
pub fn by_ctor(fields: &[FieldPlan], oneofs: &[OneofPlan], is_map_entry: bool) -> bool {
    !is_map_entry && oneofs.is_empty() && fields.len() <= 64 && fields.iter().all(|f| f.card != Card::Map)
}

/// Messages with at most this many fields may take decode's lean frame.
pub const LEAN_FIELDS: usize = 4;

/// Whether decode may take its lean frame for a message: no oneofs, no
/// map fields, not itself a map entry, and at most [`LEAN_FIELDS`] fields
/// (its table is then pre-sized for all of them without scanning the body).
pub fn is_lean(fields: &[FieldPlan], oneofs: &[OneofPlan], is_map_entry: bool) -> bool {
    !is_map_entry
        && oneofs.is_empty()
        && fields.len() <= LEAN_FIELDS
        && fields.iter().all(|f| f.card != Card::Map && f.oneof == NO_ONEOF)
}

/// One entry of [`MessagePlan::plain_by_number`]: a plain (or plain but
/// `required`) field numbered below 16, or none.
#[derive(Clone, Copy, Debug)]
pub struct PlainTag {
    /// The field's key id (0 for no field).
    pub key_id: i32,
    /// The wire type bits of the field's tag; [`NOT_PLAIN`] for no field.
    pub wire: u8,
    /// Index of the field in `fields` (below 16: fields are sorted by
    /// number).
    pub fi: u8,
    /// The field's kind.
    pub kind: Kind,
    /// The field is `required`.
    pub required: bool,
    /// Check the UTF-8 of its values ([`FieldPlan::utf8`]).
    pub utf8: bool,
}

/// An empty [`PlainTag`].
const NO_PLAIN_TAG: PlainTag =
    PlainTag { key_id: 0, wire: NOT_PLAIN, fi: 0, kind: Kind::Bool, required: false, utf8: false };

/// [`MessagePlan::plain_by_number`] for `fields` and their `plain_by_tag`.
pub fn plain_by_number(fields: &[FieldPlan], plain_by_tag: &[u16]) -> Box<[PlainTag]> {
    if plain_by_tag.is_empty() {
        return Box::new([]);
    }
    let mut table = [NO_PLAIN_TAG; 16];
    for (tag, &e) in plain_by_tag.iter().enumerate().filter(|&(_, &e)| e != 0) {
        let fi = usize::from(e & !PLAIN_REQUIRED) - 1;
        let f = &fields[fi];
        table[tag >> 3] = PlainTag {
            key_id: f.key_id,
            wire: tag as u8 & 7,
            fi: fi as u8,
            kind: f.kind,
            required: e & PLAIN_REQUIRED != 0,
            utf8: f.utf8,
        };
    }
    Box::new(table)
}

/// Flag of a [`MessagePlan::plain_by_tag`] entry: the field is `required`.
pub const PLAIN_REQUIRED: u16 = 0x8000;

/// [`MessagePlan::plain_by_tag`] for `fields` (`enums`: the schema's enums).
pub fn plain_by_tag(fields: &[FieldPlan], enums: &[EnumPlan]) -> Box<[u16]> {
    // Indices fit below the flag bit: a one-byte tag names a field numbered
    // below 16, and fields are sorted by number.
    let entry = |f: &FieldPlan| f.number < 16 && plain_but_required(f, enums);
    if !fields.iter().any(entry) {
        return Box::new([]);
    }
    let mut table = vec![0u16; 128];
    for (i, f) in fields.iter().enumerate().filter(|(_, f)| entry(f)) {
        let tag = f.number << 3 | f.kind.wire_type() as u32;
        table[tag as usize] = (i as u16 + 1) | if f.required { PLAIN_REQUIRED } else { 0 };
    }
    table.into_boxed_slice()
}

impl MessagePlan {
    /// The field with this number, if any: direct index below
    /// [`DENSE_LIMIT`], binary search above.
    #[inline(always)]
    pub fn field_index(&self, number: u32) -> Option<usize> {
        if number < DENSE_LIMIT {
            match self.dense.get(number as usize) {
                Some(&i) if i != 0 => Some(i as usize - 1),
                _ => None,
            }
        } else {
            self.fields.binary_search_by_key(&number, |f| f.number).ok()
        }
    }
}

/// One enum type.
#[derive(Clone, Debug)]
pub struct EnumPlan {
    /// Full name without the leading dot.
    pub full_name: Box<str>,
    /// `(number, name)` in declaration order.
    pub values: Box<[(i32, Box<str>)]>,
    /// `(number, key id of the name)` sorted by number; for aliases the
    /// first declared name wins (as protobuf's text and JSON output do).
    pub by_number: Box<[(i32, i32)]>,
    /// `(name, number)` sorted by name bytes.
    pub by_name: Box<[(Box<str>, i32)]>,
    /// Closed (proto2) enum: unknown numbers are not valid values.
    pub closed: bool,
}

impl EnumPlan {
    /// Key id of the name of `number`, if the enum has it.
    #[inline]
    pub fn name_key(&self, number: i32) -> Option<i32> {
        self.by_number.binary_search_by_key(&number, |&(n, _)| n).ok().map(|i| self.by_number[i].1)
    }

    /// The number named `name`, if any.
    #[inline]
    pub fn number_of(&self, name: &[u8]) -> Option<i32> {
        self.by_name.binary_search_by(|(n, _)| n.as_bytes().cmp(name)).ok().map(|i| self.by_name[i].1)
    }

    /// The default value: the first declared (proto3: the zero value).
    pub fn first_number(&self) -> i32 {
        self.values.first().map_or(0, |v| v.0)
    }
}

/// Every plan of a schema, index-linked.
#[derive(Debug, Default)]
pub struct Plans {
    /// Message plans; `Kind::Message`/`Group`/maps refer here by index.
    pub messages: Vec<MessagePlan>,
    /// Enum plans; `Kind::Enum` refers here by index.
    pub enums: Vec<EnumPlan>,
    /// Interned Lua key strings (field names, then enum value names) in
    /// key-id order (key id = index + 1).
    pub keys: Vec<Box<str>>,
    /// Option `hash_int64`: encode also takes lua-protobuf's `'#'` strings
    /// for 64-bit integer fields.
    pub hash_int64: bool,
}

impl Plans {
    /// Index of the message named `name` (leading dot optional).
    pub fn message_index(&self, name: &str) -> Option<usize> {
        let name = name.strip_prefix('.').unwrap_or(name);
        self.messages.iter().position(|m| &*m.full_name == name)
    }

    /// Index of the enum named `name` (leading dot optional).
    pub fn enum_index(&self, name: &str) -> Option<usize> {
        let name = name.strip_prefix('.').unwrap_or(name);
        self.enums.iter().position(|e| &*e.full_name == name)
    }

    /// Option `encode_zeros`: binary encode writes every implicit-presence
    /// field the table holds, zero or not (lua-protobuf's
    /// `encode_default_values`). Map entries keep leaving zeros out, as
    /// lua-protobuf's do.
    pub fn write_zeros(&mut self) {
        for m in self.messages.iter_mut().filter(|m| !m.is_map_entry) {
            for f in m.fields.iter_mut() {
                f.skip_zero = false;
            }
        }
    }

    /// The Lua key of field `f` of these plans: its name, unless
    /// [`Self::short_ext_keys`] gave it another.
    pub fn key_of<'a>(&'a self, f: &'a FieldPlan) -> &'a str {
        self.keys.get((f.key_id as usize).wrapping_sub(1)).map_or(&f.name, |k| k)
    }

    /// Option `ext_keys = 'short'`: an extension's Lua key is its short
    /// name (`note` for `[pkg.note]`), as lua-protobuf has it, when no
    /// field and no other extension of the message has that name (those
    /// keep the full key). Only the key changes: [`FieldPlan::name`] stays
    /// the bracketed full name, which the text format and reflection use.
    pub fn short_ext_keys(&mut self) {
        let mut ids: std::collections::HashMap<Box<str>, i32> =
            self.keys.iter().enumerate().map(|(i, k)| (k.clone(), i as i32 + 1)).collect();
        for m in self.messages.iter_mut() {
            let short = |f: &FieldPlan| -> Option<Box<str>> {
                let full = f.name.strip_prefix('[')?.strip_suffix(']')?;
                Some(full.rsplit('.').next().unwrap_or(full).into())
            };
            let taken =
                |name: &str| m.fields.iter().filter(|g| short(g).as_deref() == Some(name) || *g.name == *name).count();
            let renames: Vec<(usize, Box<str>)> = m
                .fields
                .iter()
                .enumerate()
                .filter_map(|(i, f)| short(f).map(|n| (i, n)))
                .filter(|(_, n)| taken(n) == 1)
                .collect();
            for (i, n) in renames {
                let next = self.keys.len() as i32 + 1;
                let id = *ids.entry(n.clone()).or_insert_with(|| {
                    self.keys.push(n);
                    next
                });
                m.fields[i].key_id = id;
            }
        }
    }
}
