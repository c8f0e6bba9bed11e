//! Field names in the text format: a field's own name, an extension's
//! `[full.name]`, and a *group-like* field's type name (`Data` for
//! `optional group Data = 201`), as protobuf C++ spells them.

use std::borrow::Cow;

use crate::plan::{FieldPlan, Kind, MessagePlan, Plans};

/// The scope a full name is declared in (`a.b` for `a.b.C`).
fn scope(full: &str) -> &str {
    full.rfind('.').map_or("", |i| &full[..i])
}

/// The last component of a full name.
fn short(full: &str) -> &str {
    full.rfind('.').map_or(full, |i| &full[i + 1..])
}

/// Whether `f` (of `plan`) is group-like: a group (or delimited message)
/// whose type is declared beside it and named as the field capitalised.
/// Such fields are written with the type's name.
pub fn is_group_like(plans: &Plans, plan: &MessagePlan, f: &FieldPlan) -> bool {
    if f.kind != Kind::Group {
        return false;
    }
    let ty = &*plans.messages[f.sub as usize].full_name;
    let field_scope = match f.name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
        Some(ext) => scope(ext),
        None => &plan.full_name,
    };
    short(ty).to_ascii_lowercase() == *f.name && scope(ty) == field_scope
}

/// The name field `fi` of `plan` is written with.
pub fn field_text_name<'p>(plans: &'p Plans, plan: &'p MessagePlan, fi: usize) -> Cow<'p, str> {
    let f = &plan.fields[fi];
    if is_group_like(plans, plan, f) {
        Cow::Borrowed(short(&plans.messages[f.sub as usize].full_name))
    } else {
        Cow::Borrowed(&f.name)
    }
}

/// The field a text name refers to: a field by its own name (extensions
/// are found by `[full.name]`), or a group-like field by its type name.
/// As protobuf C++: a group-like field is not found by its lowercase
/// field name unless that is also how the type is spelled.
pub fn find_field(plans: &Plans, plan: &MessagePlan, name: &str) -> Option<usize> {
    if let Some(fi) = plan.fields.iter().position(|f| &*f.name == name) {
        return Some(fi);
    }
    let lower = name.to_ascii_lowercase();
    plan.fields
        .iter()
        .position(|f| *f.name == lower && is_group_like(plans, plan, f))
        .filter(|&fi| short(&plans.messages[plan.fields[fi].sub as usize].full_name) == name)
}
