//! The text printer: a [`Msg`] as protobuf C++'s `TextFormat::Printer`
//! writes it. Fields in number order (extensions among them as
//! `[pkg.ext]`), group-like fields by their type name, map entries sorted
//! by key, an `Any` whose type is in the schema expanded as
//! `[type.googleapis.com/pkg.Msg] { … }`, unknown fields last (when asked)
//! by number.

use std::cmp::Ordering;

use pbwire::Reader;

use super::escape::escape_into;
use super::names::field_text_name;
use super::numbers::{format_double, format_float};
use super::tree::{self, Msg, Unknown, Value, is_zero};
use crate::plan::{Card, Kind, Plans};

/// How to print.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrintOptions {
    /// All on one line, fields separated by one space.
    pub single_line: bool,
    /// Print unknown fields by number.
    pub print_unknown: bool,
    /// Nesting limit for expanding `Any` values.
    pub max_depth: u32,
    /// Print enum values as numbers, not names.
    pub enums_as_number: bool,
}

/// The output and where it is.
struct Printer<'a> {
    plans: &'a Plans,
    opts: PrintOptions,
    out: String,
    indent: usize,
}

/// Print `m` (of message `mi`).
pub fn print(plans: &Plans, mi: usize, m: &Msg, opts: PrintOptions) -> String {
    let mut p = Printer { plans, opts, out: String::new(), indent: 0 };
    p.message(mi, m, opts.max_depth);
    if opts.single_line {
        let n = p.out.trim_end_matches(' ').len();
        p.out.truncate(n);
    }
    p.out
}

impl Printer<'_> {
    fn start_line(&mut self) {
        if !self.opts.single_line {
            for _ in 0..self.indent {
                self.out.push_str("  ");
            }
        }
    }

    fn end_field(&mut self) {
        self.out.push(if self.opts.single_line { ' ' } else { '\n' });
    }

    fn open(&mut self, name: &str) {
        self.start_line();
        self.out.push_str(name);
        self.out.push_str(if self.opts.single_line { " { " } else { " {\n" });
        self.indent += 1;
    }

    fn close(&mut self) {
        self.indent -= 1;
        self.start_line();
        self.out.push('}');
        self.end_field();
    }

    fn message(&mut self, mi: usize, m: &Msg, depth: u32) {
        let plans = self.plans;
        let plan = &plans.messages[mi];
        if &*plan.full_name == "google.protobuf.Any" && depth > 0 && self.any(m, depth) {
            return;
        }
        for (&fi, vals) in m.fields.iter() {
            let f = &plan.fields[fi];
            if f.card == Card::Single && f.implicit && vals.first().is_some_and(is_zero) {
                continue;
            }
            let name = field_text_name(plans, plan, fi);
            if f.card == Card::Map {
                let entry = f.sub as usize;
                for e in sorted_entries(plans, entry, vals) {
                    self.open(&name);
                    self.map_entry(entry, e, depth);
                    self.close();
                }
                continue;
            }
            for v in vals {
                self.field(&name, f.kind, f.sub as usize, v, depth);
            }
        }
        if self.opts.print_unknown {
            self.unknown(&m.unknown, depth);
        }
    }

    /// A map entry prints its key and value even when they are zero.
    fn map_entry(&mut self, entry: usize, m: &Msg, depth: u32) {
        let plans = self.plans;
        let plan = &plans.messages[entry];
        for (fi, f) in plan.fields.iter().enumerate() {
            let v = m.fields.get(&fi).and_then(|l| l.last()).cloned();
            let v = v.unwrap_or_else(|| tree::zero_of(plans, f.kind, f.sub as usize));
            self.field(&f.name, f.kind, f.sub as usize, &v, depth);
        }
    }

    fn field(&mut self, name: &str, kind: Kind, sub: usize, v: &Value, depth: u32) {
        if let Value::Msg(m) = v {
            self.open(name);
            self.message(sub, m, depth.saturating_sub(1));
            self.close();
            return;
        }
        self.start_line();
        self.out.push_str(name);
        self.out.push_str(": ");
        self.scalar(kind, sub, v);
        self.end_field();
    }

    fn scalar(&mut self, kind: Kind, sub: usize, v: &Value) {
        match (kind, v) {
            (Kind::Bool, Value::UInt(n)) => self.out.push_str(if *n != 0 { "true" } else { "false" }),
            (Kind::Enum, Value::Int(n)) => {
                let e = &self.plans.enums[sub];
                match e.name_key(*n as i32).filter(|_| !self.opts.enums_as_number) {
                    Some(k) => self.out.push_str(&self.plans.keys[k as usize - 1]),
                    None => self.out.push_str(&n.to_string()),
                }
            }
            (_, Value::Int(n)) => self.out.push_str(&n.to_string()),
            (_, Value::UInt(n)) => self.out.push_str(&n.to_string()),
            (_, Value::F32(x)) => self.out.push_str(&format_float(*x)),
            (_, Value::F64(x)) => self.out.push_str(&format_double(*x)),
            (_, Value::Bytes(b)) => {
                self.out.push('"');
                escape_into(b, &mut self.out);
                self.out.push('"');
            }
            (_, Value::Msg(_)) => {}
        }
    }

    /// An `Any` whose type is in the schema and whose value parses, as
    /// `[url] { … }`; false (print it as a plain message) otherwise.
    fn any(&mut self, m: &Msg, depth: u32) -> bool {
        let plans = self.plans;
        let plan = &plans.messages[plans.message_index("google.protobuf.Any").unwrap_or(0)];
        let get = |n: u32| plan.field_index(n).and_then(|fi| m.fields.get(&fi)).and_then(|l| l.last());
        let Some(Value::Bytes(url)) = get(1) else { return false };
        let empty = Value::Bytes(Vec::new());
        let Value::Bytes(value) = get(2).unwrap_or(&empty) else { return false };
        let Ok(url) = std::str::from_utf8(url) else { return false };
        let Some(slash) = url.rfind('/') else { return false };
        let Some(ti) = plans.message_index(&url[slash + 1..]) else { return false };
        let Ok(inner) = tree::read(plans, ti, value, depth) else { return false };
        self.open(&format!("[{url}]"));
        self.message(ti, &inner, depth - 1);
        self.close();
        true
    }

    fn unknown(&mut self, list: &[(u32, Unknown)], depth: u32) {
        for (n, u) in list {
            match u {
                Unknown::Group(g) => {
                    self.open(&n.to_string());
                    self.unknown(g, depth);
                    self.close();
                }
                Unknown::Len(b) if depth > 0 && !b.is_empty() => {
                    match tree::read_unknown_group(&mut Reader::new(b), None, depth) {
                        Ok(g) => {
                            self.open(&n.to_string());
                            self.unknown(&g, depth - 1);
                            self.close();
                        }
                        Err(_) => self.unknown_scalar(*n, u),
                    }
                }
                _ => self.unknown_scalar(*n, u),
            }
        }
    }

    fn unknown_scalar(&mut self, n: u32, u: &Unknown) {
        self.start_line();
        self.out.push_str(&n.to_string());
        self.out.push_str(": ");
        match u {
            Unknown::Varint(v) => self.out.push_str(&v.to_string()),
            Unknown::Fixed32(v) => self.out.push_str(&format!("0x{v:08x}")),
            Unknown::Fixed64(v) => self.out.push_str(&format!("0x{v:016x}")),
            Unknown::Len(b) => {
                self.out.push('"');
                escape_into(b, &mut self.out);
                self.out.push('"');
            }
            Unknown::Group(_) => {}
        }
        self.end_field();
    }
}

/// A map's entries, last one per key, sorted by key.
fn sorted_entries<'v>(plans: &Plans, entry: usize, vals: &'v [Value]) -> Vec<&'v Msg> {
    let key_kind = plans.messages[entry].fields.first().map_or(Kind::Int32, |f| f.kind);
    let key_of =
        |m: &Msg| m.fields.get(&0).and_then(|l| l.last()).cloned().unwrap_or(tree::zero_of(plans, key_kind, 0));
    let mut list: Vec<(Value, &Msg)> =
        vals.iter().filter_map(|v| if let Value::Msg(m) = v { Some((key_of(m), &**m)) } else { None }).collect();
    // Stable sort, then keep the last of each key.
    list.sort_by(|a, b| cmp_key(&a.0, &b.0));
    let mut out: Vec<(Value, &Msg)> = Vec::with_capacity(list.len());
    for (k, m) in list {
        match out.last_mut() {
            Some(last) if cmp_key(&last.0, &k) == Ordering::Equal => last.1 = m,
            _ => out.push((k, m)),
        }
    }
    out.into_iter().map(|(_, m)| m).collect()
}

fn cmp_key(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::UInt(x), Value::UInt(y)) => x.cmp(y),
        (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}
