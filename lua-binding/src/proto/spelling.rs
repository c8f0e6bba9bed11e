//! protoc's spelling of float and double defaults in the descriptor set.
//!
//! protox writes a declared float default as Rust prints it (`9000000000`),
//! protoc as C's `%g` does (`9e+09`: `%.15g` for double, `%.6g` for float,
//! more digits when those do not round-trip; `inf`, `-inf`, `nan`). Same
//! value, different bytes: respelling makes `schema:descriptor_set()` what
//! `protoc --include_imports --descriptor_set_out` writes. The set is
//! rewritten through reflection so that custom options (extensions, kept
//! as unknown fields) survive.

use std::os::raw::{c_char, c_int};

use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, Value};

const TYPE_DOUBLE: i32 = 1;
const TYPE_FLOAT: i32 = 2;

/// `set` (whose files are `pool.files()`, in order, as protox writes
/// them) with every float/double `default_value` in protoc's spelling. Only
/// the files holding such a default are decoded and re-encoded; the set
/// is returned as it was if it cannot be read that way.
pub fn respell(set: Vec<u8>, pool: &DescriptorPool) -> Vec<u8> {
    let float_default = |f: &prost_types::FieldDescriptorProto| {
        matches!(f.r#type, Some(TYPE_DOUBLE | TYPE_FLOAT)) && f.default_value.is_some()
    };
    let needs: Vec<bool> = pool
        .files()
        .map(|f| {
            f.messages().any(|m| any_in(&m, &float_default))
                || f.file_descriptor_proto().extension.iter().any(float_default)
        })
        .collect();
    if !needs.contains(&true) {
        return set;
    }
    respell_files(&set, &needs).unwrap_or(set)
}

/// Whether `m` or a nested message has a field or extension `pred` holds for.
fn any_in(m: &prost_reflect::MessageDescriptor, pred: &dyn Fn(&prost_types::FieldDescriptorProto) -> bool) -> bool {
    let p = m.descriptor_proto();
    p.field.iter().any(pred) || p.extension.iter().any(pred) || m.child_messages().any(|c| any_in(&c, pred))
}

/// Re-encode the files of `set` marked in `needs` (field 1 entries, in order).
fn respell_files(set: &[u8], needs: &[bool]) -> Option<Vec<u8>> {
    use prost::encoding::{decode_varint, encode_varint};
    let desc = DescriptorPool::global().get_message_by_name("google.protobuf.FileDescriptorProto")?;
    let mut out = Vec::with_capacity(set.len() + 64);
    let mut rest = set;
    let mut i = 0;
    while !rest.is_empty() {
        if decode_varint(&mut rest).ok()? != (1 << 3 | 2) {
            return None;
        }
        let len = usize::try_from(decode_varint(&mut rest).ok()?).ok()?;
        let file = rest.get(..len)?;
        rest = &rest[len..];
        let file = if *needs.get(i)? {
            let mut msg = DynamicMessage::decode(desc.clone(), file).ok()?;
            let mut changed = false;
            each_field(&mut msg, "extension", &mut changed);
            for_each_message(&mut msg, "message_type", &mut |m| in_message(m, &mut changed));
            msg.encode_to_vec()
        } else {
            file.to_vec()
        };
        encode_varint(1 << 3 | 2, &mut out);
        encode_varint(file.len() as u64, &mut out);
        out.extend_from_slice(&file);
        i += 1;
    }
    (i == needs.len()).then_some(out)
}

fn for_each_message(m: &mut DynamicMessage, list: &str, f: &mut dyn FnMut(&mut DynamicMessage)) {
    if let Some(Value::List(items)) = m.get_field_by_name_mut(list) {
        for v in items {
            if let Value::Message(x) = v {
                f(x);
            }
        }
    }
}

fn in_message(m: &mut DynamicMessage, changed: &mut bool) {
    each_field(m, "field", changed);
    each_field(m, "extension", changed);
    for_each_message(m, "nested_type", &mut |n| in_message(n, changed));
}

fn each_field(m: &mut DynamicMessage, list: &str, changed: &mut bool) {
    for_each_message(m, list, &mut |f| {
        let ty = match f.get_field_by_name("type").as_deref() {
            Some(Value::EnumNumber(n)) => *n,
            _ => return,
        };
        if (ty != TYPE_DOUBLE && ty != TYPE_FLOAT) || !f.has_field_by_name("default_value") {
            return;
        }
        let Some(Value::String(s)) = f.get_field_by_name_mut("default_value") else { return };
        if let Some(p) = protoc_spelling(s, ty == TYPE_FLOAT)
            && p != *s
        {
            *s = p;
            *changed = true;
        }
    });
}

/// The spelling protoc gives the default `s` of a float (`single`) or
/// double field.
pub fn protoc_spelling(s: &str, single: bool) -> Option<String> {
    let v: f64 = if single { s.parse::<f32>().ok()? as f64 } else { s.parse().ok()? };
    if v.is_nan() {
        return Some("nan".into());
    }
    if v.is_infinite() {
        return Some(if v > 0.0 { "inf" } else { "-inf" }.into());
    }
    let (short, long) = if single { (6, 9) } else { (15, 17) };
    let a = c_g(v, short);
    let round_trips = if single { a.parse::<f32>().ok() == Some(v as f32) } else { a.parse::<f64>().ok() == Some(v) };
    Some(if round_trips { a } else { c_g(v, long) })
}

/// C's `%.{prec}g` of `v`.
fn c_g(v: f64, prec: c_int) -> String {
    let mut buf = [0u8; 64];
    // SAFETY: snprintf writes at most buf.len() bytes including the NUL;
    // the format takes exactly an int and a double.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr() as *mut c_char, buf.len(), c"%.*g".as_ptr(), prec, v) };
    let n = (n.max(0) as usize).min(buf.len() - 1);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::protoc_spelling;

    #[test]
    fn spellings_as_protoc() {
        assert_eq!(protoc_spelling("9000000000", true).as_deref(), Some("9e+09"));
        assert_eq!(protoc_spelling("70000000000000000000000", false).as_deref(), Some("7e+22"));
        assert_eq!(protoc_spelling("0.0000001", false).as_deref(), Some("1e-07"));
        assert_eq!(protoc_spelling("350000000000000000000", true).as_deref(), Some("3.5e+20"));
        assert_eq!(protoc_spelling("1.5", false).as_deref(), Some("1.5"));
        assert_eq!(protoc_spelling("0.1", true).as_deref(), Some("0.1"));
        assert_eq!(protoc_spelling("-inf", false).as_deref(), Some("-inf"));
        assert_eq!(protoc_spelling("nan", true).as_deref(), Some("nan"));
    }
}
