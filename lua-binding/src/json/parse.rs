//! JSON text → protobuf bytes, walking the message plans.
//!
//! Recursive descent straight into a `pbwire::Writer`: a nested message's
//! length is reserved before its body and filled in after. Keys are found
//! through per-message hash tables ([`tables`]); each message object keeps
//! the sets of fields and oneofs given so far (`parse/marks.rs`).

mod ints;
mod marks;
mod put;
pub mod tables;

use pbwire::Writer;
use pbwire::varint::int32_to_varint;

use super::JsonOptions;
use super::error::JsonError;
use super::lexer::{Lexer, Peek};
use super::number::{IntError, float_literal, int_literal};
use super::print::any_type;
use super::wkt::{self, Wkt};
use crate::plan::{Card, FieldPlan, Kind, MessagePlan, NO_ONEOF, Plans};
use ints::{RunEnd, int_fits, int_range, int_run, plain_int, put_int};
use marks::{Big, Marks, Small};
use put::{put_tagged_short, put_tagged_varint};
use tables::{MsgInfo, ParseTables};

type R<T = ()> = Result<T, JsonError>;

/// The parser.
pub struct Parser<'a, 'w> {
    plans: &'a Plans,
    opts: &'a JsonOptions,
    lx: Lexer<'a>,
    w: &'w mut Writer,
    depth: u32,
    b64: &'a mut Vec<u8>,
    /// Map keys (and other texts) kept while their value is parsed: a
    /// stack, each user truncating back to where it began.
    keys: &'a mut Vec<u8>,
    /// The messages' key tables and facts.
    tables: &'a mut ParseTables,
    /// The [`Big`] marks of the message objects being read (a stack).
    marks: &'a mut Vec<u64>,
}

/// The parser's buffers, kept between calls so that a steady state
/// allocates nothing (`super::JsonBuffers`).
#[derive(Default)]
pub struct ParseScratch {
    lex: Vec<u8>,
    b64: Vec<u8>,
    keys: Vec<u8>,
    tables: ParseTables,
    marks: Vec<u64>,
}

/// `Value`'s `null_value` field set to `NULL_VALUE`: tag 1 varint, 0.
const VALUE_NULL: [u8; 2] = [0x08, 0x00];

impl<'a, 'w> Parser<'a, 'w> {
    /// A parser of `text` writing to `w`, with `s` as its scratch buffers.
    pub fn new(
        plans: &'a Plans,
        opts: &'a JsonOptions,
        text: &'a [u8],
        w: &'w mut Writer,
        s: &'a mut ParseScratch,
    ) -> Self {
        s.keys.clear();
        s.marks.clear();
        s.tables.bind(plans);
        let ParseScratch { lex, b64, keys, tables, marks } = s;
        Parser { plans, opts, lx: Lexer::new(text, lex), w, depth: 0, b64, keys, tables, marks }
    }

    /// Parse the whole text as message `mi`.
    pub fn run(&mut self, mi: u32) -> R {
        self.message(mi)?;
        self.lx.end()
    }

    fn message(&mut self, mi: u32) -> R {
        if self.depth >= self.opts.max_depth {
            return Err(self.lx.err("nesting too deep"));
        }
        self.depth += 1;
        let plans = self.plans;
        let m = &plans.messages[mi as usize];
        let info = self.tables.info(plans, mi);
        let r = match info.wkt {
            Some(w) => self.wkt(w, m),
            None => self.object::<false>(m, &info),
        };
        self.depth -= 1;
        r
    }

    /// A JSON object as the fields of `m` (`ANY`: skip the `@type` key;
    /// a constant, so that a plain message's loop has no checks of it).
    #[inline]
    fn object<const ANY: bool>(&mut self, m: &MessagePlan, info: &MsgInfo) -> R {
        if info.small { self.members::<Small, ANY>(m, info) } else { self.members::<Big, ANY>(m, info) }
    }

    /// [`Parser::object`] with the sets kept as `M`.
    fn members<M: Marks, const ANY: bool>(&mut self, m: &MessagePlan, info: &MsgInfo) -> R {
        let any = ANY;
        self.lx.expect(b'{')?;
        let mut marks = M::begin(m, self.marks);
        // The field expected next: the one after the previous key's.
        let mut next = 0;
        // The check before the first member apart from the one after each:
        // each has its `first` constant.
        let mut more = self.lx.more_members(true)?;
        while more {
            'member: {
                // The key's field: in compact text the expected one compared in
                // place, or a short key found in place; `at`, its opening quote.
                // Then the colon: in the expected key's words when it fits.
                let mut at = self.lx.pos;
                let fi = match self.tables.expect(info, next) {
                    Some(e) if !any && self.lx.expected_key(e) => {
                        if !e.colon {
                            self.lx.expect(b':')?;
                        }
                        next
                    }
                    _ => {
                        let (fi, quote) = self.other_key(m, info, any)?;
                        at = quote;
                        let Some(fi) = fi else {
                            self.unknown_member(m, at, any)?;
                            break 'member;
                        };
                        self.lx.expect(b':')?;
                        fi
                    }
                };
                next = fi + 1;
                let f = &m.fields[fi];
                if marks.given(self.marks, fi) {
                    return Err(self.lx.err_at(at, format!("field {} given twice", f.name)));
                }
                if self.lx.at_null() && !self.null_is_value(f) {
                    // Absent: not given for the required check.
                    self.lx.expect_null()?;
                    marks.set_null(self.marks, fi);
                    break 'member;
                }
                marks.set(self.marks, fi);
                if f.oneof != NO_ONEOF && marks.set_oneof(self.marks, usize::from(f.oneof)) {
                    let name = &m.oneofs[usize::from(f.oneof)].name;
                    return Err(self.lx.err_at(at, format!("a second member of oneof {name}")));
                }
                self.field(f).map_err(|e| e.in_field(&f.json_name))?;
            }
            more = self.lx.more_members(false)?;
        }
        if self.opts.check_required && !marks.required_given(self.marks, m, info) {
            return Err(self.missing_required(m, |i| marks.has(self.marks, i)));
        }
        marks.end(self.marks);
        Ok(())
    }

    /// A member's key other than the expected one: a short key found in
    /// place, else [`Parser::key`]. Out of line: the member loop keeps
    /// the key table's values out of its registers and frame.
    #[inline(never)]
    fn other_key(&mut self, m: &MessagePlan, info: &MsgInfo, any: bool) -> R<(Option<usize>, usize)> {
        let at = self.lx.pos;
        match self.lx.short_key() {
            Some((w0, len)) if !any => Ok((self.tables.find_short(info, m, w0, len), at)),
            _ => {
                self.lx.pos = at;
                self.key(m, info, any)
            }
        }
    }

    /// A member's key in general (whitespace, escapes, long keys): its
    /// field (`None`: unknown, or `@type` when `any`) and its quote's offset.
    #[inline(never)]
    fn key(&mut self, m: &MessagePlan, info: &MsgInfo, any: bool) -> R<(Option<usize>, usize)> {
        let (ks, kw) = self.lx.key()?;
        let key = self.lx.text(&ks);
        if any && key == b"@type" {
            return Ok((None, ks.pos));
        }
        Ok((self.tables.find(info, m, &kw, key), ks.pos))
    }

    /// A member whose key (its quote at `at`) names no field of `m`: an
    /// error, or skipped with `ignore_unknown` (and `@type` when `any`).
    #[inline(never)]
    fn unknown_member(&mut self, m: &MessagePlan, at: usize, any: bool) -> R {
        // The key again, for its text.
        self.lx.pos = at;
        let ks = self.lx.string()?;
        let key = self.lx.text(&ks);
        let skip = (any && key == b"@type") || self.opts.ignore_unknown;
        let key_err = (!skip).then(|| format!("unknown field {:?} in {}", String::from_utf8_lossy(key), m.full_name));
        self.lx.expect(b':')?;
        if let Some(e) = key_err {
            return Err(self.lx.err_at(at, e));
        }
        self.lx.skip_value(self.opts.max_depth)
    }

    /// The error for proto2 `required` fields not given (`has`: whether
    /// field `i` was given with a value).
    #[cold]
    fn missing_required(&self, m: &MessagePlan, has: impl Fn(usize) -> bool) -> JsonError {
        let names: Vec<&str> =
            m.required.iter().filter(|&&i| !has(usize::from(i))).map(|&i| &*m.fields[usize::from(i)].name).collect();
        self.lx.err(format!("missing required fields {} of {}", names.join(", "), m.full_name))
    }

    /// Whether `null` for field `f` is a value (`Value` and `NullValue`)
    /// rather than "absent".
    fn null_is_value(&self, f: &FieldPlan) -> bool {
        f.card == Card::Single && self.null_is_element(f)
    }

    /// Whether `null` is a value of `f`'s type.
    fn null_is_element(&self, f: &FieldPlan) -> bool {
        match f.kind {
            Kind::Enum => wkt::is_null_value(self.plans, f.sub),
            Kind::Message => wkt::wkt_of(&self.plans.messages[f.sub as usize]) == Some(Wkt::Value),
            _ => false,
        }
    }

    #[inline(always)]
    fn field(&mut self, f: &FieldPlan) -> R {
        match f.card {
            Card::Single => match f.kind {
                Kind::String => self.string_field(f),
                Kind::Message | Kind::Group | Kind::Enum | Kind::Bytes | Kind::Bool | Kind::Float | Kind::Double => {
                    if f.implicit { self.implicit(f) } else { self.value(f, true).map(drop) }
                }
                _ => self.int_field(f),
            },
            Card::Repeated => self.repeated(f),
            Card::Map => self.map(f),
        }
    }

    /// A singular string field (an empty one left out when implicit).
    #[inline(always)]
    fn string_field(&mut self, f: &FieldPlan) -> R {
        if let Some((text, n)) = self.lx.short_string() {
            if !(f.implicit && n == 0) {
                put_tagged_short(self.w, &f.tag, text, n);
            }
            return Ok(());
        }
        let s = self.lx.string_inline()?;
        let text = self.lx.text(&s);
        if !(f.implicit && text.is_empty()) {
            self.w.put_tagged_len_bytes(&f.tag, text);
        }
        Ok(())
    }

    /// A singular integer field (0 left out when implicit).
    #[inline(always)]
    fn int_field(&mut self, f: &FieldPlan) -> R {
        // The common case: a plain literal right here, its range checked
        // in 64 bits (it has at most 18 digits).
        let v = match plain_int(&self.lx.src[self.lx.pos..]) {
            Some((v, n)) if int_fits(f.kind, v) => {
                self.lx.pos += n;
                i128::from(v)
            }
            _ => {
                let (lo, hi) = int_range(f.kind);
                self.int_spaced(lo, hi)?
            }
        };
        if !(f.implicit && v == 0) {
            match f.kind {
                // A plain varint: the value's two's complement in 64 bits
                // (`int32` sign-extended, as `put_int` writes it).
                Kind::Int32 | Kind::Int64 | Kind::UInt32 | Kind::UInt64 => put_tagged_varint(self.w, &f.tag, v as u64),
                kind => {
                    self.w.put_encoded_tag(&f.tag);
                    put_int(self.w, kind, v);
                }
            }
        }
        Ok(())
    }

    /// A field without presence: its zero value is not written, as the
    /// binary encoder (and protobuf) leave it out. A zero's encoding is
    /// all zero bytes after the tag (varint 0, fixed 0, empty LEN), and no
    /// other value's is (`-0.0` has its sign bit).
    fn implicit(&mut self, f: &FieldPlan) -> R {
        let before = self.w.len();
        self.value(f, true)?;
        let body = self.w.as_slice().get(before + f.tag.as_bytes().len()..).unwrap_or(&[]);
        if body.iter().all(|&b| b == 0) {
            self.w.truncate(before);
        }
        Ok(())
    }

    fn repeated(&mut self, f: &FieldPlan) -> R {
        self.lx.expect(b'[')?;
        let packed = f.packed && f.kind.is_packable();
        let before = self.w.len();
        let mark = packed.then(|| {
            self.w.put_encoded_tag(&f.tag);
            self.w.begin_len()
        });
        let mut first = true;
        let mut i = 0usize;
        // Integers: runs of plain in-range literals written straight.
        let ints = matches!(
            f.kind,
            Kind::Int32
                | Kind::Int64
                | Kind::UInt32
                | Kind::UInt64
                | Kind::SInt32
                | Kind::SInt64
                | Kind::Fixed32
                | Kind::Fixed64
                | Kind::SFixed32
                | Kind::SFixed64
        );
        let tag = (!packed).then_some(&f.tag);
        while self.lx.more(b']', first)? {
            first = false;
            if ints && matches!(self.lx.ws(), Some(b'0'..=b'9' | b'-')) {
                let (n, end) = int_run(self.lx.src, &mut self.lx.pos, f.kind, tag, self.w);
                i += n;
                match end {
                    RunEnd::Closed => break,
                    RunEnd::AfterElement => continue,
                    RunEnd::AtElement => {}
                }
            }
            if f.kind == Kind::String && self.lx.ws() == Some(b'"') {
                let (n, end) = self.string_run(f, i)?;
                i += n;
                match end {
                    RunEnd::Closed => break,
                    _ => continue,
                }
            }
            if self.lx.ws() == Some(b'n') && !self.null_is_element(f) {
                return Err(self.lx.err("null in a repeated field").in_index(i));
            }
            self.value(f, !packed).map_err(|e| e.in_index(i))?;
            i += 1;
        }
        if let Some(mark) = mark {
            if self.w.len_since(mark) == 0 {
                self.w.truncate(before);
            } else {
                self.w.end_len(mark);
            }
        }
        Ok(())
    }

    /// A run of a repeated string field's elements in compact text, from
    /// `self.lx.pos` (an element's quote), element `i` of the field:
    /// strings separated by `,` alone, each written as read. How many it
    /// wrote and where it stopped (never at an element); an error names
    /// its element's index. Why: the general loop's separator, `null` and
    /// kind checks cost about as much as a short string's scan.
    fn string_run(&mut self, f: &FieldPlan, mut i: usize) -> R<(usize, RunEnd)> {
        let start = i;
        loop {
            let s = self.lx.string_inline().map_err(|e| e.in_index(i))?;
            self.w.put_tagged_len_bytes(&f.tag, self.lx.text(&s));
            i += 1;
            let (src, p) = (self.lx.src, self.lx.pos);
            match src.get(p) {
                Some(b',') if src.get(p + 1) == Some(&b'"') => self.lx.pos = p + 1,
                Some(b']') => {
                    self.lx.pos = p + 1;
                    return Ok((i - start, RunEnd::Closed));
                }
                _ => return Ok((i - start, RunEnd::AfterElement)),
            }
        }
    }

    fn map(&mut self, f: &FieldPlan) -> R {
        let plans = self.plans;
        let entry = &plans.messages[f.sub as usize];
        let (kf, vf) = (&entry.fields[0], &entry.fields[1]);
        self.lx.expect(b'{')?;
        let mut first = true;
        while self.lx.more(b'}', first)? {
            first = false;
            let before = self.w.len();
            self.w.put_encoded_tag(&f.tag);
            let mark = self.w.begin_len();
            let ks = self.lx.string()?;
            // The key outlives the lexer's scratch (the value's strings).
            let k0 = self.keys.len();
            self.keys.extend_from_slice(self.lx.text(&ks));
            let key = &self.keys[k0..];
            map_key(self.w, kf, key).map_err(|e| e.at_text(self.lx.src, ks.pos).in_key(key))?;
            self.lx.expect(b':')?;
            if self.lx.ws() == Some(b'n') && !self.null_is_element(vf) {
                return Err(self.lx.err("null as a map value").in_key(&self.keys[k0..]));
            }
            if self.value(vf, true).map_err(|e| e.in_key(&self.keys[k0..]))? {
                self.w.end_len(mark);
            } else {
                self.w.truncate(before);
            }
            self.keys.truncate(k0);
        }
        Ok(())
    }

    /// One value of field `f`'s type (an element for repeated fields),
    /// with its tag when `tagged`. `Ok(false)`: skipped (an unknown enum
    /// name with `ignore_unknown`).
    fn value(&mut self, f: &FieldPlan, tagged: bool) -> R<bool> {
        if tagged && !matches!(f.kind, Kind::Enum) {
            self.w.put_encoded_tag(&f.tag);
        }
        match f.kind {
            Kind::Message => {
                if self.lx.null() {
                    // Only reached for Value (see null_is_element).
                    self.w.put_len_bytes(&VALUE_NULL);
                    return Ok(true);
                }
                let mark = self.w.begin_len();
                self.message(f.sub)?;
                self.w.end_len(mark);
            }
            Kind::Group => {
                self.message(f.sub)?;
                self.w.put_varint(u64::from(f.number) << 3 | 4);
            }
            Kind::String => {
                let s = self.lx.string()?;
                let text = self.lx.text(&s);
                self.w.put_len_bytes(text);
            }
            Kind::Bytes => {
                let s = self.lx.string()?;
                let text = self.lx.text(&s);
                self.b64.clear();
                decode_base64(text, self.b64).map_err(|e| self.lx.err_at(s.pos, e))?;
                self.w.put_len_bytes(self.b64);
            }
            Kind::Bool => {
                let b = self.lx.bool()?;
                self.w.put_varint(u64::from(b));
            }
            Kind::Float | Kind::Double => {
                let v = self.float(f.kind == Kind::Float)?;
                if f.kind == Kind::Float {
                    self.w.put_fixed32((v as f32).to_bits());
                } else {
                    self.w.put_fixed64(v.to_bits());
                }
            }
            Kind::Enum => {
                let Some(n) = self.enum_number(f.sub)? else { return Ok(false) };
                if tagged {
                    self.w.put_encoded_tag(&f.tag);
                }
                self.w.put_varint(int32_to_varint(n));
            }
            kind => {
                let (lo, hi) = int_range(kind);
                let v = self.int(lo, hi)?;
                put_int(self.w, kind, v);
            }
        }
        Ok(true)
    }

    /// An integer, as a JSON number or a string holding one, in `lo..=hi`.
    #[inline(always)]
    fn int(&mut self, lo: i128, hi: i128) -> R<i128> {
        // The common case first: a plain in-range literal right here, read
        // in one pass.
        if let Some((v, n)) = plain_int(&self.lx.src[self.lx.pos..]) {
            let v = i128::from(v);
            if v >= lo && v <= hi {
                self.lx.pos += n;
                return Ok(v);
            }
        }
        self.int_spaced(lo, hi)
    }

    /// [`Parser::int`] in general: whitespace, strings, other literals.
    #[inline(never)]
    fn int_spaced(&mut self, lo: i128, hi: i128) -> R<i128> {
        if let Some((v, n)) = self.lx.ws().and_then(|_| plain_int(&self.lx.src[self.lx.pos..])) {
            let v = i128::from(v);
            if v >= lo && v <= hi {
                self.lx.pos += n;
                return Ok(v);
            }
        }
        let at = self.lx.pos;
        let v = match self.lx.peek()? {
            Peek::Number => int_literal(self.lx.number()?),
            Peek::String => {
                let s = self.lx.string()?;
                int_literal(self.lx.text(&s))
            }
            _ => return Err(self.lx.err("expected an integer")),
        };
        match v {
            Ok(v) if v >= lo && v <= hi => Ok(v),
            Ok(_) => Err(self.lx.err_at(at, IntError::Range.what())),
            Err(e) => Err(self.lx.err_at(at, e.what())),
        }
    }

    /// A float or double: a JSON number, or a string holding one or
    /// `"NaN"`, `"Infinity"`, `"-Infinity"`.
    fn float(&mut self, single: bool) -> R<f64> {
        self.lx.ws();
        let at = self.lx.pos;
        let v = match self.lx.peek()? {
            Peek::Number => float_literal(self.lx.number()?),
            Peek::String => {
                let s = self.lx.string()?;
                match self.lx.text(&s) {
                    b"NaN" => Some(f64::NAN),
                    b"Infinity" => Some(f64::INFINITY),
                    b"-Infinity" => Some(f64::NEG_INFINITY),
                    t => float_literal(t),
                }
            }
            _ => return Err(self.lx.err("expected a number")),
        };
        match v {
            Some(v) if single && v.is_finite() && (v as f32).is_infinite() => {
                Err(self.lx.err_at(at, "number out of range for a float"))
            }
            Some(v) => Ok(v),
            None => Err(self.lx.err_at(at, "malformed or out-of-range number")),
        }
    }

    /// An enum value by name or number; `None` for an unknown name with
    /// `ignore_unknown`.
    fn enum_number(&mut self, e: u32) -> R<Option<i32>> {
        let plans = self.plans;
        let ep = &plans.enums[e as usize];
        match self.lx.peek()? {
            Peek::String => {
                let s = self.lx.string()?;
                let name = self.lx.text(&s);
                match ep.number_of(name) {
                    Some(n) => Ok(Some(n)),
                    None if self.opts.ignore_unknown => Ok(None),
                    None => Err(self.lx.err_at(
                        s.pos,
                        format!("{:?} is not a value of enum {}", String::from_utf8_lossy(name), ep.full_name),
                    )),
                }
            }
            Peek::Null if wkt::is_null_value(plans, e) => {
                self.lx.expect_null()?;
                Ok(Some(0))
            }
            _ => Ok(Some(self.int(i128::from(i32::MIN), i128::from(i32::MAX))? as i32)),
        }
    }

    /// The well-known types' special forms (out of line: `message`, on
    /// every message object's path, keeps a small frame).
    #[inline(never)]
    fn wkt(&mut self, w: Wkt, m: &MessagePlan) -> R {
        match w {
            Wkt::Wrapper => self.implicit(&m.fields[0]),
            Wkt::Timestamp | Wkt::Duration => {
                let s = self.lx.string()?;
                let text = self.lx.text(&s);
                let r = if w == Wkt::Timestamp { wkt::parse_timestamp(text) } else { wkt::parse_duration(text) };
                let (secs, nanos) = r.map_err(|e| self.lx.err_at(s.pos, e))?;
                if secs != 0 {
                    self.w.put_encoded_tag(&m.fields[0].tag);
                    self.w.put_varint(secs as u64);
                }
                if nanos != 0 {
                    self.w.put_encoded_tag(&m.fields[1].tag);
                    self.w.put_varint(nanos as u64);
                }
                Ok(())
            }
            Wkt::FieldMask => {
                let s = self.lx.string()?;
                let k0 = self.keys.len();
                self.keys.extend_from_slice(self.lx.text(&s));
                // "" is no path; otherwise every comma separates one (empty
                // paths included, so that the printed form reads back).
                let mut from = k0;
                while self.keys.len() > k0 {
                    let end = self.keys.len();
                    let to = self.keys[from..].iter().position(|&b| b == b',').map_or(end, |i| from + i);
                    self.b64.clear();
                    wkt::path_from_json(&self.keys[from..to], self.b64).map_err(|e| self.lx.err_at(s.pos, e))?;
                    self.w.put_encoded_tag(&m.fields[0].tag);
                    self.w.put_len_bytes(self.b64);
                    if to == end {
                        break;
                    }
                    from = to + 1;
                }
                self.keys.truncate(k0);
                Ok(())
            }
            Wkt::Struct => self.map(&m.fields[0]),
            Wkt::ListValue => self.repeated(&m.fields[0]),
            Wkt::Value => self.json_value(m),
            Wkt::Any => self.any(m),
        }
    }

    /// `google.protobuf.Value`: any JSON value.
    fn json_value(&mut self, m: &MessagePlan) -> R {
        let field = |n: u32| m.field_index(n).map(|i| &m.fields[i]);
        let number = match self.lx.peek()? {
            Peek::Null => 1,
            Peek::Number => 2,
            Peek::String => 3,
            Peek::Bool => 4,
            Peek::Object => 5,
            Peek::Array => 6,
        };
        let Some(f) = field(number) else { return Err(self.lx.err("google.protobuf.Value lacks a field")) };
        if number == 1 {
            self.lx.expect_null()?;
            self.w.put_encoded_tag(&f.tag);
            self.w.put_varint(0);
            return Ok(());
        }
        if number == 2 {
            let at = self.lx.pos;
            let v = float_literal(self.lx.number()?).ok_or_else(|| self.lx.err_at(at, "number out of range"))?;
            self.w.put_encoded_tag(&f.tag);
            self.w.put_fixed64(v.to_bits());
            return Ok(());
        }
        self.value(f, true).map(drop)
    }

    /// `google.protobuf.Any`: find `@type` first (it may come last), then
    /// parse the object again as the named type.
    fn any(&mut self, m: &MessagePlan) -> R {
        self.lx.ws();
        let start = self.lx.pos;
        self.lx.expect(b'{')?;
        // The URL's range in `keys`, and its position in the text.
        let mut url: Option<(usize, usize, usize)> = None;
        let mut first = true;
        let mut members = 0;
        while self.lx.more(b'}', first)? {
            first = false;
            members += 1;
            let ks = self.lx.string()?;
            let is_type = self.lx.text(&ks) == b"@type";
            self.lx.expect(b':')?;
            if is_type {
                let s = self.lx.string()?;
                if url.is_some() {
                    return Err(self.lx.err_at(ks.pos, "\"@type\" given twice"));
                }
                let k0 = self.keys.len();
                self.keys.extend_from_slice(self.lx.text(&s));
                url = Some((k0, self.keys.len(), s.pos));
            } else {
                self.lx.skip_value(self.opts.max_depth)?;
            }
        }
        let Some((k0, k1, at)) = url else {
            if members == 0 {
                return Ok(());
            }
            return Err(self.lx.err_at(start, "google.protobuf.Any without \"@type\""));
        };
        let end = self.lx.pos;
        let plans = self.plans;
        let url = &self.keys[k0..k1];
        let mi = any_type(plans, url).map_err(|e| e.at_text(self.lx.src, at))?;
        self.w.put_encoded_tag(&m.fields[0].tag);
        self.w.put_len_bytes(url);
        self.w.put_encoded_tag(&m.fields[1].tag);
        let mark = self.w.begin_len();
        self.lx.pos = start;
        let sub = &plans.messages[mi as usize];
        let info = self.tables.info(plans, mi);
        if info.wkt.is_some() {
            self.lx.expect(b'{')?;
            let mut first = true;
            while self.lx.more(b'}', first)? {
                first = false;
                let ks = self.lx.string()?;
                let key = self.lx.text(&ks);
                let (is_type, is_value) = (key == b"@type", key == b"value");
                self.lx.expect(b':')?;
                if is_type {
                    self.lx.skip_value(1)?;
                } else if is_value {
                    self.message(mi)?;
                } else {
                    return Err(self.lx.err_at(ks.pos, "unexpected key in an Any holding a well-known type"));
                }
            }
        } else {
            if self.depth >= self.opts.max_depth {
                return Err(self.lx.err("nesting too deep"));
            }
            self.depth += 1;
            self.object::<true>(sub, &info)?;
            self.depth -= 1;
        }
        debug_assert_eq!(self.lx.pos, end);
        self.w.end_len(mark);
        self.keys.truncate(k0);
        Ok(())
    }
}

/// A map key from its JSON text.
fn map_key(w: &mut Writer, kf: &FieldPlan, key: &[u8]) -> R {
    w.put_encoded_tag(&kf.tag);
    match kf.kind {
        Kind::String => w.put_len_bytes(key),
        Kind::Bool => match key {
            b"true" => w.put_varint(1),
            b"false" => w.put_varint(0),
            _ => return Err(JsonError::new("a bool map key must be \"true\" or \"false\"")),
        },
        kind => {
            let (lo, hi) = int_range(kind);
            let v = int_literal(key).map_err(|e| JsonError::new(e.what()))?;
            if v < lo || v > hi {
                return Err(JsonError::new(IntError::Range.what()));
            }
            put_int(w, kind, v);
        }
    }
    Ok(())
}

/// Decode standard or URL-safe base64, padded or not.
fn decode_base64(text: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const CFG: GeneralPurposeConfig = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    const STD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, CFG);
    const URL: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, CFG);
    let url = text.iter().any(|&b| b == b'-' || b == b'_');
    let engine = if url { &URL } else { &STD };
    engine.decode_vec(text, out).map_err(|_| "malformed base64")
}

#[cfg(test)]
mod tests;
