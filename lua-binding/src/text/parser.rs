//! The text parser: text format → [`Msg`], with protobuf C++'s
//! `TextFormat::Parser` grammar and checks (a singular field or a second
//! oneof member given twice is an error; a field whose name is reserved is
//! skipped whatever its value; any other unknown name is an error).

use super::names::{field_text_name, find_field};
use super::tokenizer::{Tok, TokError, Token, Tokenizer};
use super::tree::{self, Msg, Value};
use crate::plan::{Card, Kind, MessagePlan, NO_ONEOF, Plans};

/// A parse error: where, in which field, what.
#[derive(Debug)]
pub struct ParseError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// The field path (`a.b.c`), empty at the top level.
    pub path: String,
    /// What is wrong.
    pub what: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {} column {}: ", self.line, self.col)?;
        if !self.path.is_empty() {
            write!(f, "field {}: ", self.path)?;
        }
        f.write_str(&self.what)
    }
}

type Res<T> = Result<T, ParseError>;

/// How to parse.
#[derive(Clone, Copy, Debug)]
pub struct ParseOptions {
    /// Nesting limit.
    pub max_depth: u32,
    /// Refuse a message (at any depth) without its `required` fields.
    pub check_required: bool,
}

/// Parse `text` as message `mi`.
pub fn parse(plans: &Plans, mi: usize, text: &[u8], opts: ParseOptions) -> Res<Msg> {
    let mut tz = Tokenizer::new(text);
    let cur = tz.next_token().map_err(|e| tok_err(e, ""))?;
    // The root counts as one level, as in the binary codec.
    let depth = opts.max_depth.saturating_sub(1);
    let mut p = Parser { plans, tz, cur, path: Vec::new(), depth, check_required: opts.check_required };
    p.body(mi, None)
}

/// A token or name as an error message shows it: C-escaped, at most 40
/// bytes of it.
pub(super) fn shown(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::new();
    super::escape::escape_into(&b[..b.len().min(40)], &mut out);
    if b.len() > 40 {
        out.push_str("...");
    }
    out
}

/// The field path as errors show it (as the binary codec's): at most 12
/// steps, the ones past the 11th but the last folded into `(…k more)`.
fn fold_path(p: &[String]) -> String {
    if p.len() <= 12 {
        return p.join(".");
    }
    format!("{}.(…{} more).{}", p[..11].join("."), p.len() - 12, p[p.len() - 1])
}

fn tok_err(e: TokError, path: &str) -> ParseError {
    ParseError { line: e.line, col: e.col, path: path.to_owned(), what: e.what }
}

/// The parser's state: the current token, the field path, the depth left.
pub(super) struct Parser<'a> {
    pub(super) plans: &'a Plans,
    tz: Tokenizer<'a>,
    pub(super) cur: Token,
    pub(super) path: Vec<String>,
    pub(super) depth: u32,
    check_required: bool,
}

impl Parser<'_> {
    pub(super) fn err_at(&self, t: &Token, what: impl Into<String>) -> ParseError {
        ParseError { line: t.line, col: t.col, path: fold_path(&self.path), what: what.into() }
    }

    pub(super) fn err(&self, what: impl Into<String>) -> ParseError {
        self.err_at(&self.cur, what)
    }

    /// Move to the next token; returns the one left.
    pub(super) fn advance(&mut self) -> Res<Token> {
        let next = self.tz.next_token().map_err(|e| tok_err(e, &fold_path(&self.path)))?;
        Ok(std::mem::replace(&mut self.cur, next))
    }

    pub(super) fn at(&self, sym: &str) -> bool {
        self.cur.kind == Tok::Symbol && self.cur.text == sym
    }

    pub(super) fn try_consume(&mut self, sym: &str) -> Res<bool> {
        if self.at(sym) {
            self.advance()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    pub(super) fn expect(&mut self, sym: &str) -> Res<()> {
        if self.try_consume(sym)? {
            Ok(())
        } else {
            Err(self.err(format!("Expected \"{sym}\", found \"{}\".", shown(&self.cur.text))))
        }
    }

    pub(super) fn ident(&mut self) -> Res<String> {
        if self.cur.kind != Tok::Ident {
            return Err(self.err(format!("Expected identifier, got: {}", shown(&self.cur.text))));
        }
        Ok(self.advance()?.text)
    }

    /// Fields until `end` (a closing symbol), or the end of input.
    fn body(&mut self, mi: usize, end: Option<&str>) -> Res<Msg> {
        let mut m = Msg::default();
        loop {
            match end {
                None if self.cur.kind == Tok::End => return self.required(mi, m),
                Some(e) if self.at(e) => {
                    let m = self.required(mi, m)?;
                    self.advance()?;
                    return Ok(m);
                }
                Some(e) if self.cur.kind == Tok::End => return Err(self.err(format!("Expected \"{e}\"."))),
                _ => self.field(mi, &mut m)?,
            }
        }
    }

    /// `m` if it has every `required` field of message `mi` (or the check
    /// is off); an error at the current token naming the missing ones.
    fn required(&self, mi: usize, m: Msg) -> Res<Msg> {
        let plan = &self.plans.messages[mi];
        if !self.check_required || plan.required.iter().all(|&i| m.fields.contains_key(&(i as usize))) {
            return Ok(m);
        }
        let missing: Vec<String> = plan
            .required
            .iter()
            .filter(|&&i| !m.fields.contains_key(&(i as usize)))
            .map(|&i| field_text_name(self.plans, plan, i as usize).into_owned())
            .collect();
        Err(self.err(format!("Message missing required fields: {}", missing.join(", "))))
    }

    /// An opening `{` or `<`: the matching closing symbol.
    pub(super) fn open(&mut self) -> Res<&'static str> {
        if self.try_consume("{")? {
            Ok("}")
        } else if self.try_consume("<")? {
            Ok(">")
        } else {
            Err(self.err(format!("Expected \"{{\", found \"{}\".", shown(&self.cur.text))))
        }
    }

    /// One nested message value, `{ … }` or `< … >`.
    fn message_value(&mut self, mi: usize) -> Res<Msg> {
        if self.depth == 0 {
            return Err(self.err("Message is nested deeper than max_depth"));
        }
        let end = self.open()?;
        self.depth -= 1;
        let m = self.body(mi, Some(end));
        self.depth += 1;
        m
    }

    /// One field (name, value, optional separator) into `m`.
    fn field(&mut self, mi: usize, m: &mut Msg) -> Res<()> {
        let plans = self.plans;
        let plan = &plans.messages[mi];
        let name_tok = self.cur.clone();
        let fi = if self.try_consume("[")? {
            let mut name = self.ident()?;
            let mut url = false;
            while self.at(".") || self.at("/") {
                url |= self.at("/");
                name.push_str(&self.advance()?.text);
                name.push_str(&self.ident()?);
            }
            self.expect("]")?;
            if url {
                return self.any(plan, m, &name, &name_tok);
            }
            let key = format!("[{name}]");
            match plan.fields.iter().position(|f| *f.name == key) {
                Some(fi) => fi,
                None => {
                    let what = format!(
                        "Extension \"{}\" is not defined or is not an extension of \"{}\".",
                        shown(&name),
                        plan.full_name
                    );
                    return Err(self.err_at(&name_tok, what));
                }
            }
        } else {
            let name = self.ident()?;
            match find_field(plans, plan, &name) {
                Some(fi) => fi,
                None if plan.reserved_names.iter().any(|r| **r == name) => {
                    self.skip_field()?;
                    return Ok(());
                }
                None => {
                    let what = format!("Message type \"{}\" has no field named \"{}\".", plan.full_name, shown(&name));
                    return Err(self.err_at(&name_tok, what));
                }
            }
        };
        self.check_single(plan, fi, m, &name_tok)?;
        let text_name = field_text_name(plans, plan, fi).into_owned();
        self.path.push(text_name);
        let r = self.field_value(plan, fi, m);
        self.path.pop();
        r?;
        if !self.try_consume(";")? {
            self.try_consume(",")?;
        }
        Ok(())
    }

    /// A singular field given twice, or a second member of a oneof.
    fn check_single(&self, plan: &MessagePlan, fi: usize, m: &Msg, at: &Token) -> Res<()> {
        let f = &plan.fields[fi];
        if f.card != Card::Single {
            return Ok(());
        }
        let name = field_text_name(self.plans, plan, fi);
        if m.fields.contains_key(&fi) {
            return Err(self.err_at(at, format!("Non-repeated field \"{name}\" is specified multiple times.")));
        }
        if f.oneof != NO_ONEOF {
            let o = &plan.oneofs[f.oneof as usize];
            if let Some(&other) = o.members.iter().find(|&&o| m.fields.contains_key(&(o as usize))) {
                let other = &plan.fields[other as usize].name;
                let what = format!(
                    "Field \"{name}\" is specified along with field \"{other}\", another member of oneof \"{}\".",
                    o.name
                );
                return Err(self.err_at(at, what));
            }
        }
        Ok(())
    }

    /// The value(s) after a field name.
    fn field_value(&mut self, plan: &MessagePlan, fi: usize, m: &mut Msg) -> Res<()> {
        let f = &plan.fields[fi];
        let many = f.card != Card::Single;
        if matches!(f.kind, Kind::Message | Kind::Group) {
            self.try_consume(":")?;
            if many && self.try_consume("[")? {
                if self.try_consume("]")? {
                    return Ok(());
                }
                loop {
                    let v = self.message_value(f.sub as usize)?;
                    m.push(fi, Value::Msg(Box::new(v)));
                    if self.try_consume("]")? {
                        return Ok(());
                    }
                    self.expect(",")?;
                }
            }
            let v = Value::Msg(Box::new(self.message_value(f.sub as usize)?));
            if many {
                m.push(fi, v);
            } else {
                m.fields.insert(fi, vec![v]);
            }
            return Ok(());
        }
        self.expect(":")?;
        if many && self.try_consume("[")? {
            if self.try_consume("]")? {
                return Ok(());
            }
            loop {
                let v = self.scalar(plan, fi)?;
                m.push(fi, v);
                if self.try_consume("]")? {
                    return Ok(());
                }
                self.expect(",")?;
            }
        }
        let v = self.scalar(plan, fi)?;
        if many {
            m.push(fi, v);
        } else {
            m.fields.insert(fi, vec![v]);
        }
        Ok(())
    }

    /// `[type.googleapis.com/pkg.Msg] { … }` inside an `Any`.
    fn any(&mut self, plan: &MessagePlan, m: &mut Msg, url: &str, at: &Token) -> Res<()> {
        let plans = self.plans;
        if &*plan.full_name != "google.protobuf.Any" {
            return Err(self
                .err_at(at, format!("Message type \"{}\" has no field named \"[{}]\".", plan.full_name, shown(url))));
        }
        let (Some(url_fi), Some(value_fi)) = (plan.field_index(1), plan.field_index(2)) else {
            return Err(self.err_at(at, "google.protobuf.Any has no type_url and value fields"));
        };
        if m.fields.contains_key(&url_fi) || m.fields.contains_key(&value_fi) {
            return Err(self.err_at(at, "Expect type_url or value, not both."));
        }
        let ty = &url[url.rfind('/').map_or(0, |i| i + 1)..];
        let Some(ti) = plans.message_index(ty) else {
            return Err(
                self.err_at(at, format!("Could not find type \"{}\" stored in google.protobuf.Any.", shown(url)))
            );
        };
        self.try_consume(":")?;
        self.path.push(format!("[{}]", shown(url)));
        let inner = self.message_value(ti);
        self.path.pop();
        let mut w = pbwire::Writer::new();
        tree::write(plans, ti, &inner?, &mut w);
        m.fields.insert(url_fi, vec![Value::Bytes(url.as_bytes().to_vec())]);
        m.fields.insert(value_fi, vec![Value::Bytes(w.into_vec())]);
        if !self.try_consume(";")? {
            self.try_consume(",")?;
        }
        Ok(())
    }
}
