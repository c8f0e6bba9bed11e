//! Descriptor set → [`Plans`].
//!
//! Parsing, name resolution and the "unresolved type / duplicate name"
//! checks are `prost-reflect`'s (a well-kept crate that implements
//! protobuf's own resolution rules); this module only flattens its view
//! into the index-linked plans of [`crate::plan`].

use std::collections::HashMap;

use pbwire::{Tag, WireType};
use prost_reflect::{
    Cardinality, DescriptorPool, ExtensionDescriptor, FieldDescriptor, Kind as PKind, MessageDescriptor, Syntax,
};

use crate::plan::features::{self, Presence, Resolver};
use crate::plan::{
    Card, DENSE_LIMIT, DefaultValue, EnumPlan, FieldPlan, Kind, MessagePlan, NO_ONEOF, NOT_PLAIN, OneofPlan, Plans,
    by_ctor, is_lean, plain_by_number, plain_by_tag, plain_wire_of,
};

/// Parse a serialized `FileDescriptorSet` and compile it.
pub fn compile_descriptor_set(bytes: &[u8]) -> Result<Plans, String> {
    let (set, editions) = features::rewrite_editions(bytes)?;
    let pool = DescriptorPool::decode(&set[..]).map_err(|e| format!("{e:?}"))?;
    compile_with(&pool, Resolver::new(editions))
}

/// Compile every message and enum of `pool` (proto2/proto3 files) into plans.
pub fn compile_pool(pool: &DescriptorPool) -> Result<Plans, String> {
    compile_with(pool, Resolver::new(Vec::new()))
}

fn compile_with(pool: &DescriptorPool, resolver: Resolver) -> Result<Plans, String> {
    let mut c = Compiler {
        plans: Plans::default(),
        key_ids: HashMap::new(),
        message_index: pool.all_messages().enumerate().map(|(i, m)| (m.full_name().to_owned(), i)).collect(),
        enum_index: pool.all_enums().enumerate().map(|(i, e)| (e.full_name().to_owned(), i)).collect(),
        extensions_of: HashMap::new(),
        resolver,
    };
    for e in pool.all_enums() {
        let plan = c.enum_plan(&e);
        c.plans.enums.push(plan);
    }
    for e in pool.all_extensions() {
        c.extensions_of.entry(e.containing_message().full_name().to_owned()).or_default().push(e);
    }
    for m in pool.all_messages() {
        let plan = c.message_plan(&m)?;
        c.plans.messages.push(plan);
    }
    check_map_entries(&c.plans)?;
    Ok(c.plans)
}

/// The state of one compilation: the plans so far and the indices that
/// link them.
struct Compiler {
    plans: Plans,
    /// Key string → its id (1-based index in `plans.keys`).
    key_ids: HashMap<String, i32>,
    message_index: HashMap<String, usize>,
    enum_index: HashMap<String, usize>,
    /// Message full name → the extensions of it declared anywhere in the set.
    extensions_of: HashMap<String, Vec<ExtensionDescriptor>>,
    resolver: Resolver,
}

/// Where a message's fields stand while they are compiled in number order.
struct MessageState {
    /// Oneof full name → its index among the message's real oneofs.
    oneof_of: HashMap<String, u16>,
    /// Per oneof, the indices of its members among the fields.
    members: Vec<Vec<u16>>,
    /// Repeated and map fields so far (each gets a container slot).
    n_slots: u16,
}

impl Compiler {
    /// The id of key string `name`, interned on first use.
    fn intern(&mut self, name: &str) -> i32 {
        let next = self.key_ids.len() as i32 + 1;
        let plans = &mut self.plans;
        *self.key_ids.entry(name.to_owned()).or_insert_with(|| {
            plans.keys.push(name.into());
            next
        })
    }

    fn enum_plan(&mut self, e: &prost_reflect::EnumDescriptor) -> EnumPlan {
        // Declaration order (prost-reflect's values() is in number order):
        // the first declared value is the enum's default.
        let values: Box<[(i32, Box<str>)]> =
            e.enum_descriptor_proto().value.iter().map(|v| (v.number(), Box::from(v.name()))).collect();
        let mut by_number: Vec<(i32, i32)> = values.iter().map(|(n, name)| (*n, self.intern(name))).collect();
        // Stable sort, then keep the first declared name of each number.
        by_number.sort_by_key(|&(n, _)| n);
        by_number.dedup_by_key(|&mut (n, _)| n);
        let mut by_name: Vec<(Box<str>, i32)> = values.iter().map(|(n, s)| (s.clone(), *n)).collect();
        by_name.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        EnumPlan {
            full_name: e.full_name().into(),
            values,
            by_number: by_number.into_boxed_slice(),
            by_name: by_name.into_boxed_slice(),
            closed: if self.resolver.is_editions(e.parent_file().name()) {
                !self.resolver.enumeration(e).open_enum
            } else {
                e.parent_file().syntax() == Syntax::Proto2
            },
        }
    }

    fn message_plan(&mut self, m: &MessageDescriptor) -> Result<MessagePlan, String> {
        let mut oneofs: Vec<OneofPlan> = Vec::new();
        let mut st = MessageState { oneof_of: HashMap::new(), members: Vec::new(), n_slots: 0 };
        for o in m.oneofs().filter(|o| !o.is_synthetic()) {
            st.oneof_of.insert(o.full_name().to_owned(), oneofs.len() as u16);
            oneofs.push(OneofPlan { name: o.name().into(), members: Box::new([]) });
        }
        st.members = vec![Vec::new(); oneofs.len()];
        // Fields and the extensions of this message (from any file of the
        // set), one number-ordered list.
        let mut descs: Vec<Member> = m.fields().map(Member::Field).collect();
        descs.extend(self.extensions_of.get(m.full_name()).into_iter().flatten().cloned().map(Member::Ext));
        descs.sort_by_key(|f| f.number());
        let mut fields = Vec::with_capacity(descs.len());
        for (i, f) in descs.iter().enumerate() {
            let mut plan = self.field_plan(m, f, i, &mut st)?;
            plan.plain_wire = plain_wire_of(&plan, &self.plans.enums);
            fields.push(plan);
        }
        for (o, mem) in oneofs.iter_mut().zip(st.members) {
            o.members = mem.into_boxed_slice();
        }
        let dense_len =
            fields.iter().map(|f| f.number).filter(|&n| n < DENSE_LIMIT).max().map_or(0, |n| n as usize + 1);
        let mut dense = vec![0u16; dense_len];
        for (i, f) in fields.iter().enumerate() {
            if f.number < DENSE_LIMIT {
                dense[f.number as usize] = i as u16 + 1;
            }
        }
        let required: Box<[u16]> =
            fields.iter().enumerate().filter(|(_, f)| f.required).map(|(i, _)| i as u16).collect();
        let required_mask =
            if required.iter().all(|&i| i < 64) { required.iter().fold(0u64, |m, &i| m | 1 << i) } else { 0 };
        let by_tag = plain_by_tag(&fields, &self.plans.enums);
        Ok(MessagePlan {
            full_name: m.full_name().into(),
            required,
            required_mask,
            plain_by_number: plain_by_number(&fields, &by_tag),
            plain_by_tag: by_tag,
            lean: is_lean(&fields, &oneofs, m.is_map_entry()),
            by_ctor: by_ctor(&fields, &oneofs, m.is_map_entry()),
            fields: fields.into_boxed_slice(),
            dense: dense.into_boxed_slice(),
            oneofs: oneofs.into_boxed_slice(),
            n_slots: st.n_slots,
            is_map_entry: m.is_map_entry(),
            reserved_names: m.descriptor_proto().reserved_name.iter().map(|n| n.as_str().into()).collect(),
        })
    }

    /// The plan of field or extension `f`, the `i`-th of message `m` by
    /// number (its `plain_wire` left for the caller).
    fn field_plan(
        &mut self,
        m: &MessageDescriptor,
        f: &Member,
        i: usize,
        st: &mut MessageState,
    ) -> Result<FieldPlan, String> {
        let feat = self.resolver.is_editions(f.parent_file().name()).then(|| {
            let scope = match f {
                Member::Field(_) => Some(m.clone()),
                Member::Ext(e) => e.parent_message(),
            };
            self.resolver.field(scope.as_ref(), &f.parent_file().options(), &f.options())
        });
        let (kind, sub) = match f.kind() {
            PKind::Enum(e) => (Kind::Enum, self.enum_index[e.full_name()] as u32),
            PKind::Message(sm) => {
                let delimited = feat.is_some_and(|x| x.delimited) && !f.is_map() && !m.is_map_entry();
                let k = if f.is_group() || delimited { Kind::Group } else { Kind::Message };
                (k, self.message_index[sm.full_name()] as u32)
            }
            scalar => (scalar_kind(&scalar), 0),
        };
        let card = if f.is_map() {
            Card::Map
        } else if f.is_list() {
            Card::Repeated
        } else {
            Card::Single
        };
        let packed = card == Card::Repeated && kind.is_packable() && feat.map_or_else(|| f.is_packed(), |x| x.packed);
        let wire = if packed { WireType::Len } else { kind.wire_type() };
        let tag = Tag::new(f.number(), wire).map_err(|e| format!("{}.{}: {e}", m.full_name(), f.name()))?.encode();
        let name = f.key_name();
        let key_id = self.intern(&name);
        let oneof = match f.containing_oneof() {
            Some(o) if !o.is_synthetic() => {
                let idx = st.oneof_of[o.full_name()];
                st.members[idx as usize].push(i as u16);
                idx
            }
            _ => NO_ONEOF,
        };
        let slot = if card == Card::Single {
            u16::MAX
        } else {
            st.n_slots += 1;
            st.n_slots - 1
        };
        let default =
            if card == Card::Single && oneof == NO_ONEOF { default_of(&f.default_value()) } else { DefaultValue::None };
        let implicit = card == Card::Single
            && match feat {
                Some(x) => {
                    x.presence == Presence::Implicit
                        && !matches!(kind, Kind::Message | Kind::Group)
                        && oneof == NO_ONEOF
                        && matches!(f, Member::Field(_))
                }
                None => !f.supports_presence(),
            };
        Ok(FieldPlan {
            number: f.number(),
            default,
            kind,
            card,
            packed,
            utf8: kind == Kind::String
                && feat.map_or_else(|| f.parent_file().syntax() == Syntax::Proto3, |x| x.verify_utf8),
            required: match feat {
                Some(x) => x.presence == Presence::LegacyRequired,
                None => f.cardinality() == Cardinality::Required,
            },
            implicit,
            skip_zero: implicit,
            key_id,
            sub,
            tag,
            oneof,
            slot,
            json_name: match f {
                Member::Field(d) => d.json_name().into(),
                Member::Ext(_) => name.as_str().into(),
            },
            name: name.into(),
            plain_wire: NOT_PLAIN,
        })
    }
}

/// The plan kind of a scalar field kind (not an enum or a message).
fn scalar_kind(k: &PKind) -> Kind {
    match k {
        PKind::Double => Kind::Double,
        PKind::Float => Kind::Float,
        PKind::Int32 => Kind::Int32,
        PKind::Int64 => Kind::Int64,
        PKind::Uint32 => Kind::UInt32,
        PKind::Uint64 => Kind::UInt64,
        PKind::Sint32 => Kind::SInt32,
        PKind::Sint64 => Kind::SInt64,
        PKind::Fixed32 => Kind::Fixed32,
        PKind::Fixed64 => Kind::Fixed64,
        PKind::Sfixed32 => Kind::SFixed32,
        PKind::Sfixed64 => Kind::SFixed64,
        PKind::Bool => Kind::Bool,
        PKind::String => Kind::String,
        PKind::Bytes => Kind::Bytes,
        PKind::Enum(_) | PKind::Message(_) => unreachable!("scalar_kind of an enum or message field"),
    }
}

/// Every map field's entry message is what protoc makes of `map<K, V>`:
/// exactly `key = 1` and `value = 2`, singular, outside any oneof, with an
/// integral, bool or string key. The codec relies on it (`fields[0]` is
/// the key, `fields[1]` the value); a hand-made or corrupt descriptor set
/// that breaks it is refused here, as protoc refuses it.
fn check_map_entries(plans: &Plans) -> Result<(), String> {
    for m in plans.messages.iter() {
        for f in m.fields.iter().filter(|f| f.card == Card::Map) {
            let entry = &plans.messages[f.sub as usize];
            let bad = |why: &str| format!("{}.{}: map entry {} {why}", m.full_name, f.name, entry.full_name);
            let [key, value] = &entry.fields[..] else {
                return Err(bad(&format!("has {} fields, not key = 1 and value = 2", entry.fields.len())));
            };
            for (member, number, name) in [(key, 1, "key"), (value, 2, "value")] {
                if member.number != number || member.card != Card::Single || member.oneof != NO_ONEOF {
                    return Err(bad(&format!("needs a singular field {name} = {number}")));
                }
            }
            if matches!(key.kind, Kind::Float | Kind::Double | Kind::Bytes | Kind::Enum | Kind::Message | Kind::Group) {
                return Err(bad("has a key type a map cannot have"));
            }
        }
    }
    Ok(())
}

/// A member of a message: a declared field or an extension of it.
#[derive(Clone)]
enum Member {
    Field(FieldDescriptor),
    Ext(ExtensionDescriptor),
}

macro_rules! both {
    ($self:ident, $f:ident => $e:expr) => {
        match $self {
            Member::Field($f) => $e,
            Member::Ext($f) => $e,
        }
    };
}

impl Member {
    fn number(&self) -> u32 {
        both!(self, f => f.number())
    }
    fn name(&self) -> &str {
        both!(self, f => f.name())
    }
    /// The table key: the field name, or `[full.name]` for an extension
    /// (brackets cannot collide with a field name).
    fn key_name(&self) -> String {
        match self {
            Member::Field(f) => f.name().to_owned(),
            Member::Ext(e) => format!("[{}]", e.full_name()),
        }
    }
    fn kind(&self) -> PKind {
        both!(self, f => f.kind())
    }
    fn is_group(&self) -> bool {
        both!(self, f => f.is_group())
    }
    fn is_map(&self) -> bool {
        both!(self, f => f.is_map())
    }
    fn is_list(&self) -> bool {
        both!(self, f => f.is_list())
    }
    fn is_packed(&self) -> bool {
        both!(self, f => f.is_packed())
    }
    fn cardinality(&self) -> Cardinality {
        both!(self, f => f.cardinality())
    }
    fn supports_presence(&self) -> bool {
        both!(self, f => f.supports_presence())
    }
    fn parent_file(&self) -> prost_reflect::FileDescriptor {
        both!(self, f => f.parent_file())
    }
    fn default_value(&self) -> prost_reflect::Value {
        both!(self, f => f.default_value())
    }
    fn options(&self) -> prost_reflect::DynamicMessage {
        both!(self, f => f.options())
    }
    fn containing_oneof(&self) -> Option<prost_reflect::OneofDescriptor> {
        match self {
            Member::Field(f) => f.containing_oneof(),
            Member::Ext(_) => None,
        }
    }
}

/// The plan form of a field's default value.
fn default_of(v: &prost_reflect::Value) -> DefaultValue {
    use prost_reflect::Value as V;
    match v {
        V::Bool(b) => DefaultValue::Bool(*b),
        V::I32(n) => DefaultValue::Int(*n as i64),
        V::I64(n) => DefaultValue::Int(*n),
        V::U32(n) => DefaultValue::UInt(*n as u64),
        V::U64(n) => DefaultValue::UInt(*n),
        V::F32(x) => DefaultValue::Float(*x as f64),
        V::F64(x) => DefaultValue::Float(*x),
        V::String(s) => DefaultValue::Bytes(s.as_bytes().into()),
        V::Bytes(b) => DefaultValue::Bytes(b.to_vec().into()),
        V::EnumNumber(n) => DefaultValue::Enum(*n),
        V::Message(_) | V::List(_) | V::Map(_) => DefaultValue::None,
    }
}

#[cfg(test)]
mod tests {
    use super::compile_descriptor_set;
    use prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
    use prost_reflect::prost_types::{
        DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet, MessageOptions,
    };

    /// A `schema_load` fuzz input (fuzz/regressions/schema_load/): a file
    /// whose `syntax` is the empty string (proto2, by descriptor.proto)
    /// makes prost-reflect 0.16 index an empty list and panic.
    #[test]
    fn empty_syntax_is_proto2() {
        let result = compile_descriptor_set(&[0x0a, 0x02, 0x62, 0x00]);
        assert!(result.is_ok(), "{:?}", result.err());
        // The fuzz input: then a second file, also without a name.
        let twice = compile_descriptor_set(&[0x0a, 0x02, 0x62, 0x00, 0x0a, 0x00]);
        assert!(twice.err().is_some_and(|e| e.contains("already been added")));
        // The last syntax wins, as for any singular field.
        let last_wins = [0x0a, 0x0a, 0x62, 0x06, b'p', b'r', b'o', b't', b'o', b'9', 0x62, 0x00];
        assert!(compile_descriptor_set(&last_wins).is_ok());
        let unknown = [0x0a, 0x08, 0x62, 0x06, b'p', b'r', b'o', b't', b'o', b'9'];
        assert!(compile_descriptor_set(&unknown).err().is_some_and(|e| e.contains("proto9")));
    }

    /// `message M { map<K, int32> m = 1; }` with the entry's key field
    /// given by `key` (name, number, type, label) and its `map_entry`
    /// option set, serialized as a FileDescriptorSet.
    fn map_set(key: (&str, i32, Type, Label)) -> Vec<u8> {
        use prost::Message as _;
        let field = |name: &str, number, ty: Type, label: Label, type_name: Option<&str>| FieldDescriptorProto {
            name: Some(name.into()),
            number: Some(number),
            r#type: Some(ty as i32),
            label: Some(label as i32),
            type_name: type_name.map(Into::into),
            ..Default::default()
        };
        let entry = DescriptorProto {
            name: Some("MEntry".into()),
            field: vec![field(key.0, key.1, key.2, key.3, None), field("value", 2, Type::Int32, Label::Optional, None)],
            options: Some(MessageOptions { map_entry: Some(true), ..Default::default() }),
            ..Default::default()
        };
        let m = DescriptorProto {
            name: Some("M".into()),
            field: vec![field("m", 1, Type::Message, Label::Repeated, Some(".M.MEntry"))],
            nested_type: vec![entry],
            ..Default::default()
        };
        let file = FileDescriptorProto {
            name: Some("m.proto".into()),
            message_type: vec![m],
            syntax: Some("proto3".into()),
            ..Default::default()
        };
        FileDescriptorSet { file: vec![file] }.encode_to_vec()
    }

    #[test]
    fn map_entry_shape_is_checked() {
        let ok = compile_descriptor_set(&map_set(("key", 1, Type::String, Label::Optional)));
        assert!(ok.is_ok(), "{:?}", ok.err());
        let err = |key| compile_descriptor_set(&map_set(key)).err().unwrap_or_default();
        let e = err(("key", 1, Type::Double, Label::Optional));
        assert!(e.contains("M.m: map entry M.MEntry has a key type a map cannot have"), "{e}");
        let e = err(("key", 1, Type::Bytes, Label::Optional));
        assert!(e.contains("has a key type a map cannot have"), "{e}");
        let e = err(("key", 3, Type::String, Label::Optional));
        assert!(e.contains("M.m: map entry M.MEntry needs a singular field key = 1"), "{e}");
        let e = err(("key", 1, Type::String, Label::Repeated));
        assert!(e.contains("needs a singular field key = 1"), "{e}");
    }

    /// A `schema_load` fuzz input (fuzz/regressions/schema_load/): a map
    /// entry message with only a key field, whose missing value field
    /// `Msg:fields()` (and decode) must not index.
    #[test]
    fn malformed_map_entry_is_an_error() {
        let set = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fuzz/regressions/schema_load/map_entry_without_value"
        ))
        .expect("the regression input");
        let err = compile_descriptor_set(&set).err().unwrap_or_default();
        assert!(err.contains("M.m: map entry M.MEntry has 1 fields"), "{err}");
    }
}
