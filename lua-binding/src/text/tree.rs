//! The text codec's in-memory message: what protobuf C++ holds after a
//! parse, so the printer sees merged sub-messages, last-wins singular
//! fields, one oneof member, and unknown fields apart, whatever order the
//! wire had. Built from wire bytes ([`read`]) or by the text parser, and
//! written back as wire bytes ([`write()`]).

use std::collections::BTreeMap;

use pbwire::{Reader, Tag, WireType, Writer};

use crate::plan::{Card, Kind, MessagePlan, NO_ONEOF, Plans};

/// One value of a known field.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `int32`, `int64`, `sint*`, `sfixed*` and enum numbers.
    Int(i64),
    /// `uint32`, `uint64`, `fixed32`, `fixed64`, and `bool` (0/1).
    UInt(u64),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
    /// `string` and `bytes`.
    Bytes(Vec<u8>),
    /// A message, group or map entry.
    Msg(Box<Msg>),
}

/// One unknown field's value, as C++'s `UnknownFieldSet` keeps it.
#[derive(Clone, Debug, PartialEq)]
pub enum Unknown {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 5.
    Fixed32(u32),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2.
    Len(Vec<u8>),
    /// Wire types 3/4, with what was inside.
    Group(Vec<(u32, Unknown)>),
}

/// A message: known fields by index into its plan's `fields` (so in field
/// number order), each a list of values (one for singular fields), then the
/// unknown fields in wire order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Msg {
    /// Known fields present, by field index.
    pub fields: BTreeMap<usize, Vec<Value>>,
    /// Unknown fields, in order.
    pub unknown: Vec<(u32, Unknown)>,
}

/// Why wire bytes could not be read.
#[derive(Debug)]
pub struct WireError(pub String);

type Res<T> = Result<T, WireError>;

fn wire_err(e: pbwire::Error) -> WireError {
    WireError(e.to_string())
}

impl Msg {
    /// Store a singular value: the last one wins (messages merge), and a
    /// oneof member clears the others.
    pub fn set_single(&mut self, plans: &Plans, plan: &MessagePlan, fi: usize, v: Value) {
        let f = &plan.fields[fi];
        if f.oneof != NO_ONEOF {
            for &m in plan.oneofs[f.oneof as usize].members.iter() {
                if m as usize != fi {
                    self.fields.remove(&(m as usize));
                }
            }
        }
        match (self.fields.get_mut(&fi).and_then(|l| l.last_mut()), v) {
            (Some(Value::Msg(old)), Value::Msg(new)) => old.merge(plans, f.sub as usize, *new),
            (_, v) => {
                self.fields.insert(fi, vec![v]);
            }
        }
    }

    /// Merge `other` (of message `mi`) into `self` as protobuf's
    /// `MergeFrom` does.
    fn merge(&mut self, plans: &Plans, mi: usize, other: Msg) {
        let plan = &plans.messages[mi];
        for (fi, vals) in other.fields {
            if plan.fields[fi].card == Card::Single {
                for v in vals {
                    self.set_single(plans, plan, fi, v);
                }
            } else {
                self.fields.entry(fi).or_default().extend(vals);
            }
        }
        self.unknown.extend(other.unknown);
    }

    /// Append a value to a repeated or map field.
    pub fn push(&mut self, fi: usize, v: Value) {
        self.fields.entry(fi).or_default().push(v);
    }
}

/// Read `bytes` as message `mi`. `depth` is the nesting budget.
pub fn read(plans: &Plans, mi: usize, bytes: &[u8], depth: u32) -> Res<Msg> {
    let mut r = Reader::new(bytes);
    read_body(plans, mi, &mut r, None, depth)
}

/// Read fields until the end of `r`, or until the END_GROUP of `group`.
fn read_body(plans: &Plans, mi: usize, r: &mut Reader<'_>, group: Option<u32>, depth: u32) -> Res<Msg> {
    if depth == 0 {
        return Err(WireError(format!("nesting deeper than the limit at byte {}", r.position())));
    }
    let plan = &plans.messages[mi];
    let mut m = Msg::default();
    loop {
        if r.is_empty() {
            return match group {
                None => Ok(m),
                Some(n) => Err(WireError(format!("group {n} is not closed"))),
            };
        }
        let tag = r.read_tag().map_err(wire_err)?;
        let (n, wt) = (tag.field_number(), tag.wire_type());
        if wt == WireType::EndGroup {
            return match group {
                Some(g) if g == n => Ok(m),
                _ => Err(WireError(format!("unexpected end of group {n} at byte {}", r.position()))),
            };
        }
        match plan.field_index(n) {
            Some(fi) if wire_fits(plan.fields[fi].kind, plan.fields[fi].card, wt) => {
                read_known(plans, plan, fi, &mut m, r, wt, depth)?
            }
            _ => {
                let u = read_unknown(r, tag, depth)?;
                m.unknown.push((n, u));
            }
        }
    }
}

/// Whether a value of wire type `wt` can be read into a field of `kind`.
fn wire_fits(kind: Kind, card: Card, wt: WireType) -> bool {
    wt == kind.wire_type() || (card == Card::Repeated && kind.is_packable() && wt == WireType::Len)
}

/// Read one occurrence of known field `fi` (its tag already read).
fn read_known(
    plans: &Plans,
    plan: &MessagePlan,
    fi: usize,
    m: &mut Msg,
    r: &mut Reader<'_>,
    wt: WireType,
    depth: u32,
) -> Res<()> {
    let f = &plan.fields[fi];
    if f.kind.is_packable() && wt == WireType::Len && f.kind.wire_type() != WireType::Len {
        let run = r.read_len_bytes().map_err(wire_err)?;
        let mut rr = Reader::new(run);
        while !rr.is_empty() {
            scalar_into(plans, plan, fi, m, &mut rr)?;
        }
        return Ok(());
    }
    match f.kind {
        Kind::Message => {
            let body = r.read_len_bytes().map_err(wire_err)?;
            let sub = read(plans, f.sub as usize, body, depth - 1)?;
            // A map entry whose closed-enum value the enum lacks goes,
            // whole, to the unknown fields (as protobuf does).
            if f.card == Card::Map && sub.unknown.iter().any(|&(n, _)| n == 2) {
                m.unknown.push((f.number, Unknown::Len(body.to_vec())));
                return Ok(());
            }
            store(plans, plan, fi, m, Value::Msg(Box::new(sub)));
        }
        Kind::Group => {
            let sub = read_body(plans, f.sub as usize, r, Some(f.number), depth - 1)?;
            store(plans, plan, fi, m, Value::Msg(Box::new(sub)));
        }
        Kind::String | Kind::Bytes => {
            let b = r.read_len_bytes().map_err(wire_err)?;
            if f.utf8 && std::str::from_utf8(b).is_err() {
                return Err(WireError(format!("field {}: invalid UTF-8", f.name)));
            }
            store(plans, plan, fi, m, Value::Bytes(b.to_vec()));
        }
        _ => scalar_into(plans, plan, fi, m, r)?,
    }
    Ok(())
}

/// Store `v` in field `fi` by its cardinality.
fn store(plans: &Plans, plan: &MessagePlan, fi: usize, m: &mut Msg, v: Value) {
    if plan.fields[fi].card == Card::Single {
        m.set_single(plans, plan, fi, v);
    } else {
        m.push(fi, v);
    }
}

/// Read one scalar of field `fi` and store it (a closed enum's unknown
/// number goes to the unknown fields, as protobuf does).
fn scalar_into(plans: &Plans, plan: &MessagePlan, fi: usize, m: &mut Msg, r: &mut Reader<'_>) -> Res<()> {
    let f = &plan.fields[fi];
    let v = match f.kind {
        Kind::Double => Value::F64(f64::from_bits(r.read_fixed64().map_err(wire_err)?)),
        Kind::Float => Value::F32(f32::from_bits(r.read_fixed32().map_err(wire_err)?)),
        Kind::Fixed64 => Value::UInt(r.read_fixed64().map_err(wire_err)?),
        Kind::Fixed32 => Value::UInt(u64::from(r.read_fixed32().map_err(wire_err)?)),
        Kind::SFixed64 => Value::Int(r.read_fixed64().map_err(wire_err)? as i64),
        Kind::SFixed32 => Value::Int(i64::from(r.read_fixed32().map_err(wire_err)? as i32)),
        _ => {
            let v = r.read_varint().map_err(wire_err)?;
            match f.kind {
                Kind::Int64 => Value::Int(v as i64),
                Kind::Int32 => Value::Int(i64::from(v as i32)),
                Kind::UInt64 => Value::UInt(v),
                Kind::UInt32 => Value::UInt(u64::from(v as u32)),
                Kind::Bool => Value::UInt(u64::from(v != 0)),
                Kind::SInt32 => Value::Int(i64::from(pbwire::zigzag::decode_zigzag32(v as u32))),
                Kind::SInt64 => Value::Int(pbwire::zigzag::decode_zigzag64(v)),
                _ => {
                    let n = v as i32;
                    let e = &plans.enums[f.sub as usize];
                    if e.closed && e.name_key(n).is_none() {
                        m.unknown.push((f.number, Unknown::Varint(v)));
                        return Ok(());
                    }
                    Value::Int(i64::from(n))
                }
            }
        }
    };
    store(plans, plan, fi, m, v);
    Ok(())
}

/// Read the value of an unknown field whose tag was just read.
fn read_unknown(r: &mut Reader<'_>, tag: Tag, depth: u32) -> Res<Unknown> {
    Ok(match tag.wire_type() {
        WireType::Varint => Unknown::Varint(r.read_varint().map_err(wire_err)?),
        WireType::I32 => Unknown::Fixed32(r.read_fixed32().map_err(wire_err)?),
        WireType::I64 => Unknown::Fixed64(r.read_fixed64().map_err(wire_err)?),
        WireType::Len => Unknown::Len(r.read_len_bytes().map_err(wire_err)?.to_vec()),
        WireType::StartGroup => Unknown::Group(read_unknown_group(r, Some(tag.field_number()), depth)?),
        WireType::EndGroup => return Err(WireError(format!("unexpected end of group at byte {}", r.position()))),
    })
}

/// Read unknown fields until the END_GROUP of `group` (or the end, for
/// `None`).
pub fn read_unknown_group(r: &mut Reader<'_>, group: Option<u32>, depth: u32) -> Res<Vec<(u32, Unknown)>> {
    if depth == 0 {
        return Err(WireError("nesting deeper than the limit".into()));
    }
    let mut out = Vec::new();
    loop {
        if r.is_empty() {
            return match group {
                None => Ok(out),
                Some(n) => Err(WireError(format!("group {n} is not closed"))),
            };
        }
        let tag = r.read_tag().map_err(wire_err)?;
        if tag.wire_type() == WireType::EndGroup {
            return match group {
                Some(g) if g == tag.field_number() => Ok(out),
                _ => Err(WireError("unexpected end of group".into())),
            };
        }
        let u = read_unknown(r, tag, depth - 1)?;
        out.push((tag.field_number(), u));
    }
}

/// Write `m` (of message `mi`) as wire bytes: known fields in number
/// order (repeated fields packed as the plan says), then unknown fields.
pub fn write(plans: &Plans, mi: usize, m: &Msg, out: &mut Writer) {
    let plan = &plans.messages[mi];
    for (&fi, vals) in m.fields.iter() {
        let f = &plan.fields[fi];
        if f.card == Card::Single && f.implicit && vals.first().is_some_and(is_zero) {
            continue;
        }
        if f.packed && f.card == Card::Repeated {
            let mut run = Writer::new();
            for v in vals {
                put_scalar(f.kind, v, &mut run);
            }
            out.put_encoded_tag(&f.tag);
            put_len_bytes(out, run.as_slice());
            continue;
        }
        for v in vals {
            write_value(plans, f.kind, f.number, f.sub as usize, f.card == Card::Map, v, out);
        }
    }
    write_unknown(&m.unknown, out);
}

fn put_len_bytes(out: &mut Writer, b: &[u8]) {
    out.put_varint(b.len() as u64);
    out.put_bytes(b);
}

fn put_tag(out: &mut Writer, n: u32, wt: WireType) {
    if let Ok(t) = Tag::new(n, wt) {
        out.put_tag(t);
    }
}

/// Write one value of a field numbered `n` with its tag.
fn write_value(plans: &Plans, kind: Kind, n: u32, sub: usize, is_map: bool, v: &Value, out: &mut Writer) {
    match (kind, v) {
        (Kind::Group, Value::Msg(m)) => {
            put_tag(out, n, WireType::StartGroup);
            write(plans, sub, m, out);
            put_tag(out, n, WireType::EndGroup);
        }
        (Kind::Message, Value::Msg(m)) => {
            let mut body = Writer::new();
            if is_map {
                write_map_entry(plans, sub, m, &mut body);
            } else {
                write(plans, sub, m, &mut body);
            }
            put_tag(out, n, WireType::Len);
            put_len_bytes(out, body.as_slice());
        }
        _ => {
            put_tag(out, n, kind.wire_type());
            put_scalar(kind, v, out);
        }
    }
}

/// A map entry: key and value always written (as protobuf does).
fn write_map_entry(plans: &Plans, entry: usize, m: &Msg, out: &mut Writer) {
    let plan = &plans.messages[entry];
    for (fi, f) in plan.fields.iter().enumerate() {
        let v = match m.fields.get(&fi).and_then(|l| l.last()) {
            Some(v) => v.clone(),
            None => zero_of(plans, f.kind, f.sub as usize),
        };
        write_value(plans, f.kind, f.number, f.sub as usize, false, &v, out);
    }
}

/// The zero (default) value of a map entry member of `kind`.
pub fn zero_of(plans: &Plans, kind: Kind, sub: usize) -> Value {
    match kind {
        Kind::Double => Value::F64(0.0),
        Kind::Float => Value::F32(0.0),
        Kind::String | Kind::Bytes => Value::Bytes(Vec::new()),
        Kind::Message | Kind::Group => Value::Msg(Box::default()),
        Kind::Enum => Value::Int(i64::from(plans.enums[sub].first_number())),
        Kind::UInt32 | Kind::UInt64 | Kind::Fixed32 | Kind::Fixed64 | Kind::Bool => Value::UInt(0),
        _ => Value::Int(0),
    }
}

/// Whether a singular value is its type's zero (implicit presence drops it).
pub fn is_zero(v: &Value) -> bool {
    match v {
        Value::Int(n) => *n == 0,
        Value::UInt(n) => *n == 0,
        Value::F32(x) => x.to_bits() == 0,
        Value::F64(x) => x.to_bits() == 0,
        Value::Bytes(b) => b.is_empty(),
        Value::Msg(_) => false,
    }
}

/// Write a scalar's payload (no tag).
fn put_scalar(kind: Kind, v: &Value, out: &mut Writer) {
    match (kind, v) {
        (Kind::Double, Value::F64(x)) => out.put_fixed64(x.to_bits()),
        (Kind::Float, Value::F32(x)) => out.put_fixed32(x.to_bits()),
        (Kind::Fixed64, Value::UInt(n)) => out.put_fixed64(*n),
        (Kind::Fixed32, Value::UInt(n)) => out.put_fixed32(*n as u32),
        (Kind::SFixed64, Value::Int(n)) => out.put_fixed64(*n as u64),
        (Kind::SFixed32, Value::Int(n)) => out.put_fixed32(*n as u32),
        (Kind::SInt32, Value::Int(n)) => out.put_varint(u64::from(pbwire::zigzag::encode_zigzag32(*n as i32))),
        (Kind::SInt64, Value::Int(n)) => out.put_varint(pbwire::zigzag::encode_zigzag64(*n)),
        (_, Value::Int(n)) => out.put_varint(*n as u64),
        (_, Value::UInt(n)) => out.put_varint(*n),
        (_, Value::Bytes(b)) => put_len_bytes(out, b),
        _ => {}
    }
}

/// Write unknown fields back as they came.
pub fn write_unknown(list: &[(u32, Unknown)], out: &mut Writer) {
    for (n, u) in list {
        match u {
            Unknown::Varint(v) => {
                put_tag(out, *n, WireType::Varint);
                out.put_varint(*v);
            }
            Unknown::Fixed32(v) => {
                put_tag(out, *n, WireType::I32);
                out.put_fixed32(*v);
            }
            Unknown::Fixed64(v) => {
                put_tag(out, *n, WireType::I64);
                out.put_fixed64(*v);
            }
            Unknown::Len(b) => {
                put_tag(out, *n, WireType::Len);
                put_len_bytes(out, b);
            }
            Unknown::Group(g) => {
                put_tag(out, *n, WireType::StartGroup);
                write_unknown(g, out);
                put_tag(out, *n, WireType::EndGroup);
            }
        }
    }
}
