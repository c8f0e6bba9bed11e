//! Scalar values in the text parser (integers with range checks, floats
//! with `inf`/`nan`, bools, enums by name or number, concatenated
//! strings), and skipping the value of a reserved field.

use super::numbers::{parse_float, parse_uint};
use super::parser::{ParseError, Parser, shown};
use super::tokenizer::Tok;
use super::tree::Value;
use crate::plan::{Kind, MessagePlan};

type Res<T> = Result<T, ParseError>;

impl Parser<'_> {
    /// One scalar value of field `fi`.
    pub(super) fn scalar(&mut self, plan: &MessagePlan, fi: usize) -> Res<Value> {
        let f = &plan.fields[fi];
        Ok(match f.kind {
            Kind::Int32 | Kind::SInt32 | Kind::SFixed32 => Value::Int(self.signed(i32::MAX as u64)?),
            Kind::Int64 | Kind::SInt64 | Kind::SFixed64 => Value::Int(self.signed(i64::MAX as u64)?),
            Kind::UInt32 | Kind::Fixed32 => Value::UInt(self.unsigned(u64::from(u32::MAX))?),
            Kind::UInt64 | Kind::Fixed64 => Value::UInt(self.unsigned(u64::MAX)?),
            Kind::Float => Value::F32(self.double()? as f32),
            Kind::Double => Value::F64(self.double()?),
            Kind::Bool => Value::UInt(u64::from(self.boolean()?)),
            Kind::String | Kind::Bytes => {
                let b = self.string()?;
                if f.utf8 && std::str::from_utf8(&b).is_err() {
                    return Err(self.err("String field contains invalid UTF-8 data."));
                }
                Value::Bytes(b)
            }
            Kind::Enum => Value::Int(self.enum_value(plan, fi)?),
            Kind::Message | Kind::Group => return Err(self.err("Expected \"{\".")),
        })
    }

    /// An integer token's value, or an error naming it.
    fn integer_token(&mut self, max: u64) -> Res<u64> {
        if self.cur.kind != Tok::Int {
            return Err(self.err(format!("Expected integer, got: {}", shown(&self.cur.text))));
        }
        let t = self.advance()?;
        match parse_uint(&t.text) {
            Some(v) if v <= max => Ok(v),
            _ => Err(self.err_at(&t, format!("Integer out of range ({})", shown(&t.text)))),
        }
    }

    /// An optionally negative integer in `-(max+1) ..= max`.
    fn signed(&mut self, max: u64) -> Res<i64> {
        let neg = self.try_consume("-")?;
        let v = self.integer_token(if neg { max + 1 } else { max })?;
        Ok(if neg { (v as i64).wrapping_neg() } else { v as i64 })
    }

    fn unsigned(&mut self, max: u64) -> Res<u64> {
        self.integer_token(max)
    }

    /// A float or double: decimal integers and floats, `inf`, `infinity`
    /// and `nan` in any case, with an optional `-`.
    fn double(&mut self) -> Res<f64> {
        let neg = self.try_consume("-")?;
        let v = match self.cur.kind {
            Tok::Int => {
                let t = &self.cur.text;
                if t.len() > 1 && t.starts_with('0') {
                    return Err(self.err(format!("Expect a decimal number, got: {t}")));
                }
                let v = t.parse::<f64>().unwrap_or(0.0);
                self.advance()?;
                v
            }
            Tok::Float => {
                let v = parse_float(&self.cur.text);
                self.advance()?;
                v
            }
            Tok::Ident => {
                let lower = self.cur.text.to_ascii_lowercase();
                let v = match &*lower {
                    "inf" | "infinity" => f64::INFINITY,
                    "nan" => f64::NAN,
                    _ => return Err(self.err(format!("Expected double, got: {}", shown(&self.cur.text)))),
                };
                self.advance()?;
                v
            }
            _ => return Err(self.err(format!("Expected double, got: {}", shown(&self.cur.text)))),
        };
        Ok(if neg { -v } else { v })
    }

    fn boolean(&mut self) -> Res<bool> {
        if self.cur.kind == Tok::Int {
            return Ok(self.integer_token(1)? == 1);
        }
        let v = match (&self.cur.kind, &*self.cur.text) {
            (Tok::Ident, "true" | "True" | "t") => true,
            (Tok::Ident, "false" | "False" | "f") => false,
            _ => {
                let name = self.path.last().cloned().unwrap_or_default();
                return Err(self.err(format!(
                    "Invalid value for boolean field \"{name}\". Value: \"{}\".",
                    shown(&self.cur.text)
                )));
            }
        };
        self.advance()?;
        Ok(v)
    }

    /// One or more adjacent string literals, concatenated.
    fn string(&mut self) -> Res<Vec<u8>> {
        if self.cur.kind != Tok::Str {
            return Err(self.err(format!("Expected string, got: {}", shown(&self.cur.text))));
        }
        let mut out = Vec::new();
        while self.cur.kind == Tok::Str {
            out.extend_from_slice(&self.advance()?.bytes);
        }
        Ok(out)
    }

    /// An enum value by name, or by number (any int32 for an open enum, a
    /// declared one for a closed enum).
    fn enum_value(&mut self, plan: &MessagePlan, fi: usize) -> Res<i64> {
        let f = &plan.fields[fi];
        let e = &self.plans.enums[f.sub as usize];
        let unknown = |p: &Self, v: &str| {
            let field = p.path.last().cloned().unwrap_or_default();
            format!("Unknown enumeration value of \"{v}\" for field \"{field}\".")
        };
        if self.cur.kind == Tok::Ident {
            let t = self.advance()?;
            return match e.number_of(t.text.as_bytes()) {
                Some(n) => Ok(i64::from(n)),
                None => Err(self.err_at(&t, unknown(self, &shown(&t.text)))),
            };
        }
        let at = self.cur.clone();
        let n = self.signed(i32::MAX as u64)?;
        if e.closed && e.name_key(n as i32).is_none() {
            return Err(self.err_at(&at, unknown(self, &n.to_string())));
        }
        Ok(n)
    }

    /// Skip the value of a reserved field (its name already read).
    pub(super) fn skip_field(&mut self) -> Res<()> {
        if self.try_consume(":")? {
            if self.try_consume("[")? {
                if !self.try_consume("]")? {
                    loop {
                        if self.at("{") || self.at("<") {
                            self.skip_message()?;
                        } else {
                            self.skip_value()?;
                        }
                        if self.try_consume("]")? {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
            } else if self.at("{") || self.at("<") {
                self.skip_message()?;
            } else {
                self.skip_value()?;
            }
        } else if self.try_consume("[")? {
            if !self.try_consume("]")? {
                loop {
                    self.skip_message()?;
                    if self.try_consume("]")? {
                        break;
                    }
                    self.expect(",")?;
                }
            }
        } else {
            self.skip_message()?;
        }
        if !self.try_consume(";")? {
            self.try_consume(",")?;
        }
        Ok(())
    }

    /// Skip `{ … }` or `< … >`: any field names, any values.
    fn skip_message(&mut self) -> Res<()> {
        if self.depth == 0 {
            return Err(self.err("Message is nested deeper than max_depth"));
        }
        let end = self.open()?;
        self.depth -= 1;
        let r = loop {
            if self.try_consume(end)? {
                break Ok(());
            }
            if self.cur.kind == Tok::End {
                break Err(self.err(format!("Expected \"{end}\".")));
            }
            if let Err(e) = self.skip_name().and_then(|()| self.skip_field()) {
                break Err(e);
            }
        };
        self.depth += 1;
        r
    }

    /// Skip a field name: an identifier, or `[a.b/c.d]`.
    fn skip_name(&mut self) -> Res<()> {
        if self.try_consume("[")? {
            self.ident()?;
            while self.at(".") || self.at("/") {
                self.advance()?;
                self.ident()?;
            }
            return self.expect("]");
        }
        if self.cur.kind == Tok::Int {
            self.advance()?;
            return Ok(());
        }
        self.ident().map(drop)
    }

    /// Skip one scalar value.
    fn skip_value(&mut self) -> Res<()> {
        if self.cur.kind == Tok::Str {
            while self.cur.kind == Tok::Str {
                self.advance()?;
            }
            return Ok(());
        }
        let neg = self.try_consume("-")?;
        match self.cur.kind {
            Tok::Int | Tok::Float => {}
            Tok::Ident if !neg || matches!(&*self.cur.text.to_ascii_lowercase(), "inf" | "infinity" | "nan") => {}
            _ => return Err(self.err(format!("Invalid field value: {}", shown(&self.cur.text)))),
        }
        self.advance()?;
        Ok(())
    }
}
