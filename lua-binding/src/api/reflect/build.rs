//! Descriptor pool → [`LValue`] trees: services, methods, enums, field
//! details and options.
//!
//! Options are decoded (by `prost-reflect`, against the descriptor pool of
//! the schema, so custom options defined in it are known) into the shape
//! `decode` gives a message: fields by name, custom options (extensions)
//! under `'[full.name]'`, enum values by name (or number with
//! `enums = 'number'`), 64-bit integers as the `int64` option says.

use prost_reflect::{
    DescriptorPool, DynamicMessage, EnumDescriptor, Kind, MapKey, MethodDescriptor, ServiceDescriptor, Value,
};

use super::value::{LValue, Record};
use crate::plan::{Card, DefaultValue, Kind as PlanKind, Plans};

/// Schema options that shape reflection answers.
#[derive(Clone, Copy)]
pub struct Shape {
    /// Enum values as numbers (`enums = 'number'`).
    pub enums_as_number: bool,
}

/// An options message as a table.
pub fn options(msg: &DynamicMessage, s: Shape) -> LValue {
    let mut out: Vec<(LValue, LValue)> = Vec::new();
    for (f, v) in msg.fields() {
        out.push((LValue::str(f.name()), value(v, &f.kind(), s)));
    }
    for (e, v) in msg.extensions() {
        out.push((LValue::Str(format!("[{}]", e.full_name()).into_bytes().into()), value(v, &e.kind(), s)));
    }
    LValue::Map(out)
}

fn value(v: &Value, kind: &Kind, s: Shape) -> LValue {
    match v {
        Value::Bool(b) => LValue::Bool(*b),
        Value::I32(n) => LValue::Int(*n as i64),
        Value::U32(n) => LValue::Int(*n as i64),
        Value::I64(n) => LValue::I64(*n),
        Value::U64(n) => LValue::U64(*n),
        Value::F32(x) => LValue::Num(*x as f64),
        Value::F64(x) => LValue::Num(*x),
        Value::String(t) => LValue::str(t),
        Value::Bytes(b) => LValue::Str(b.to_vec().into()),
        Value::EnumNumber(n) => match kind {
            Kind::Enum(e) if !s.enums_as_number => {
                e.get_value(*n).map_or(LValue::Int(*n as i64), |ev| LValue::str(ev.name()))
            }
            _ => LValue::Int(*n as i64),
        },
        Value::Message(m) => options(m, s),
        Value::List(l) => LValue::Arr(l.iter().map(|e| value(e, kind, s)).collect()),
        Value::Map(m) => {
            let vk = match kind {
                Kind::Message(entry) => entry.map_entry_value_field().kind(),
                other => other.clone(),
            };
            LValue::Map(m.iter().map(|(k, e)| (map_key(k), value(e, &vk, s))).collect())
        }
    }
}

fn map_key(k: &MapKey) -> LValue {
    match k {
        MapKey::Bool(b) => LValue::Bool(*b),
        MapKey::I32(n) => LValue::Int(*n as i64),
        MapKey::U32(n) => LValue::Int(*n as i64),
        MapKey::I64(n) => LValue::I64(*n),
        MapKey::U64(n) => LValue::U64(*n),
        MapKey::String(t) => LValue::str(t),
    }
}

/// The gRPC path of a method: `/pkg.Service/Method`.
pub fn method_path(m: &MethodDescriptor) -> String {
    format!("/{}/{}", m.parent_service().full_name(), m.name())
}

/// A method's description (without its message handles).
pub fn method(m: &MethodDescriptor, s: Shape) -> Record {
    let mut r = Record::default();
    r.set("name", LValue::str(m.name()))
        .set("full_name", LValue::str(m.full_name()))
        .set("path", LValue::str(&method_path(m)))
        .set("input", LValue::str(m.input().full_name()))
        .set("output", LValue::str(m.output().full_name()))
        .set("input_type", LValue::str(m.input().full_name()))
        .set("output_type", LValue::str(m.output().full_name()))
        .set("client_streaming", LValue::Bool(m.is_client_streaming()))
        .set("server_streaming", LValue::Bool(m.is_server_streaming()))
        .set("options", options(&m.options(), s));
    r
}

/// A service's description with its methods.
pub fn service(svc: &ServiceDescriptor, s: Shape) -> LValue {
    let mut r = Record::default();
    r.set("name", LValue::str(svc.name()))
        .set("full_name", LValue::str(svc.full_name()))
        .set("file", LValue::str(svc.parent_file().name()))
        .set("options", options(&svc.options(), s))
        .set("methods", LValue::Arr(svc.methods().map(|m| method(&m, s).done()).collect()));
    r.done()
}

/// Find a method by full name (`pkg.Svc.Method`) or path (`/pkg.Svc/Method`,
/// `pkg.Svc/Method`).
pub fn find_method(pool: &DescriptorPool, name: &str) -> Option<MethodDescriptor> {
    let name = name.strip_prefix('/').unwrap_or(name);
    let (svc, m) = match name.split_once('/') {
        Some(parts) => parts,
        None => name.rsplit_once('.')?,
    };
    let svc = svc.strip_prefix('.').unwrap_or(svc);
    pool.get_service_by_name(svc)?.methods().find(|x| x.name() == m)
}

/// An enum's description: options, and each value's number and options.
pub fn enum_info(e: &EnumDescriptor, s: Shape) -> LValue {
    let values = e
        .values()
        .map(|v| {
            let mut r = Record::default();
            r.set("name", LValue::str(v.name()))
                .set("number", LValue::Int(v.number() as i64))
                .set("options", options(&v.options(), s));
            r.done()
        })
        .collect();
    let mut r = Record::default();
    r.set("name", LValue::str(e.name()))
        .set("full_name", LValue::str(e.full_name()))
        .set("file", LValue::str(e.parent_file().name()))
        .set("options", options(&e.options(), s))
        .set("values", LValue::Arr(values));
    r.done()
}

/// Per field of message `index` of `plans` (in its plan's order): the
/// extra keys of `Msg:fields()` entries (`json_name`, `default`, `options`).
pub fn field_details(pool: &DescriptorPool, plans: &Plans, index: usize, s: Shape) -> Vec<Record> {
    let m = &plans.messages[index];
    let desc = pool.get_message_by_name(&m.full_name);
    m.fields
        .iter()
        .map(|f| {
            let mut r = Record::default();
            if let Some(name) = f.name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
                if let Some(e) = pool.get_extension_by_name(name) {
                    r.set("json_name", LValue::str(e.json_name())).set("options", options(&e.options(), s));
                }
            } else if let Some(fd) = desc.as_ref().and_then(|d| d.get_field(f.number)) {
                r.set("json_name", LValue::str(fd.json_name())).set("options", options(&fd.options(), s));
            }
            if f.card == Card::Single
                && let Some(d) = default(plans, f, s)
            {
                r.set("default", d);
            }
            r
        })
        .collect()
}

/// A field's default as decode with `defaults = 'values'` gives it.
fn default(plans: &Plans, f: &crate::plan::FieldPlan, s: Shape) -> Option<LValue> {
    let wide = f.kind.is_64bit_integer();
    Some(match &f.default {
        DefaultValue::None => return None,
        DefaultValue::Bool(b) => LValue::Bool(*b),
        DefaultValue::Int(n) if wide => LValue::I64(*n),
        DefaultValue::UInt(n) if wide => LValue::U64(*n),
        DefaultValue::Int(n) => LValue::Int(*n),
        DefaultValue::UInt(n) => LValue::Int(*n as i64),
        DefaultValue::Float(x) => LValue::Num(*x),
        DefaultValue::Bytes(b) => LValue::Str(b.clone()),
        DefaultValue::Enum(n) => {
            let e = &plans.enums[f.sub as usize];
            match e.values.iter().find(|(v, _)| v == n) {
                Some((_, name)) if !s.enums_as_number && f.kind == PlanKind::Enum => LValue::str(name),
                _ => LValue::Int(*n as i64),
            }
        }
    })
}
