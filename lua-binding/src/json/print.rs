//! Protobuf bytes → JSON text, walking the message plans.
//!
//! A message body whose fields come in the order every encoder writes
//! them (ascending numbers, each singular field once, repeated fields in
//! one run, one member per oneof) is printed as it is read (`print/fast.rs`).
//! Any other body is scanned once into its field occurrences; they are
//! then printed in field-number order with protobuf's merge rules: the
//! last value of a singular scalar wins, the occurrences of a singular
//! message field merge (their bytes concatenated are the merged message),
//! repeated fields gather packed and unpacked runs, a oneof keeps the
//! member set last, a map keeps the last entry of each key. Unknown
//! fields, and closed-enum values the enum lacks, are not printed.

use pbwire::varint::encoded_len_varint;
use pbwire::zigzag::{decode_zigzag32, decode_zigzag64};
use pbwire::{Reader, WireType};

use super::JsonOptions;
use super::error::{At, JsonError};
use super::number::{Dec, put_f32, put_f64, put_int};
use super::out::Out;
use super::wkt::{self, Wkt};
use crate::plan::{Card, FieldPlan, Kind, MessagePlan, NO_ONEOF, Plans};

mod fast;
mod meta;
#[cfg(test)]
mod tests;

type R = Result<(), JsonError>;

/// One occurrence of a known field in a message body.
#[derive(Clone, Copy)]
struct Occ<'b> {
    /// Index of the field in the message's `fields`.
    fi: u16,
    /// Order of appearance.
    seq: u32,
    wt: WireType,
    /// Varint or fixed-width value.
    val: u64,
    /// LEN payload or group body.
    data: &'b [u8],
}

/// A map entry being printed: its key's numeric order and text (a range
/// of the key buffer), its value occurrences (a range of the value
/// buffer), its place on the wire.
#[derive(Clone, Copy)]
struct Entry {
    num: i128,
    key: (usize, usize),
    vals: (usize, usize),
    i: usize,
}

/// The printer's buffers, kept between calls so that a steady state
/// allocates nothing (`super::JsonBuffers`): pools of vectors (each user
/// takes one and gives it back, so nesting takes as many as it is deep)
/// and the stack of oneof states.
#[derive(Default)]
pub struct PrintScratch {
    occs: Vec<Vec<Occ<'static>>>,
    bytes: Vec<Vec<u8>>,
    entries: Vec<Vec<Entry>>,
    oneofs: Vec<(u16, u32)>,
    metas: meta::Metas,
    /// Bodies the fast path printed, and gave back (the tests' counts).
    #[cfg(test)]
    fast: (u32, u32),
}

/// An empty vector of occurrences of another lifetime, in the same
/// allocation (an in-place collect of no element).
fn recycle<'x, 'y>(mut v: Vec<Occ<'x>>) -> Vec<Occ<'y>> {
    v.clear();
    v.into_iter().map(|_| -> Occ<'y> { unreachable!("the vector is empty") }).collect()
}

/// The printer.
pub struct Printer<'a> {
    plans: &'a Plans,
    opts: &'a JsonOptions,
    o: Out<'a>,
    depth: u32,
    s: &'a mut PrintScratch,
    /// Never take the fast path (the tests compare the two paths).
    slow_only: bool,
    /// The compact layout without `emit_defaults`: the fast path's lean
    /// form ([`Printer::members_lean`]).
    lean: bool,
}

fn wire_err(e: pbwire::Error) -> JsonError {
    let mut j = JsonError::new(format!("malformed protobuf: {}", e.kind()));
    j.at = At::Wire(e.offset());
    j
}

fn utf8(s: &[u8]) -> Result<&[u8], JsonError> {
    match simdutf8::basic::from_utf8(s) {
        Ok(_) => Ok(s),
        Err(_) => Err(JsonError::new("string field holds invalid UTF-8")),
    }
}

impl<'a> Printer<'a> {
    /// A printer appending to `out`, with `s` as its scratch buffers
    /// (kept between calls so that a steady state allocates nothing).
    pub fn new(plans: &'a Plans, opts: &'a JsonOptions, out: &'a mut Vec<u8>, s: &'a mut PrintScratch) -> Self {
        s.oneofs.clear();
        s.metas.sync(plans);
        let lean = opts.indent.is_none() && !opts.emit_defaults;
        Printer { plans, opts, o: Out::new(out, opts.indent), depth: 0, s, slow_only: false, lean }
    }

    /// Print message `msg` from its encoding `bytes`.
    pub fn run(&mut self, msg: u32, bytes: &[u8]) -> R {
        self.message(msg, bytes)
    }

    fn take_occ<'b>(&mut self) -> Vec<Occ<'b>> {
        recycle(self.s.occs.pop().unwrap_or_default())
    }

    fn give_occ(&mut self, v: Vec<Occ<'_>>) {
        self.s.occs.push(recycle(v));
    }

    fn take_bytes(&mut self) -> Vec<u8> {
        let mut v = self.s.bytes.pop().unwrap_or_default();
        v.clear();
        v
    }

    /// The message made of all of `run`'s bodies (their concatenation is
    /// their merge), printed.
    fn merged(&mut self, mi: u32, run: &[Occ<'_>]) -> R {
        if let [one] = run {
            return self.message(mi, one.data);
        }
        let mut buf = self.take_bytes();
        for o in run {
            buf.extend_from_slice(o.data);
        }
        let r = self.message(mi, &buf);
        self.s.bytes.push(buf);
        r
    }

    fn message(&mut self, mi: u32, bytes: &[u8]) -> R {
        if self.depth >= self.opts.max_depth {
            return Err(JsonError::new("nesting too deep"));
        }
        self.depth += 1;
        let plans = self.plans;
        let m = &plans.messages[mi as usize];
        let meta = self.s.metas.get(plans, mi);
        let r = match meta.wkt {
            Some(w) => self.wkt(w, m, bytes),
            None => {
                self.o.open(b'{');
                let mut first = true;
                let r = self.members(m, meta, bytes, &mut first);
                self.o.close(b'}', first);
                r
            }
        };
        self.depth -= 1;
        r
    }

    /// The occurrences of `m`'s known fields in `bytes`, in order.
    fn scan<'b>(&mut self, m: &MessagePlan, bytes: &'b [u8]) -> Result<Vec<Occ<'b>>, JsonError> {
        let mut occ = self.take_occ();
        let mut r = Reader::new(bytes);
        let mut seq = 0u32;
        while !r.is_empty() {
            if let Some((fi, wt, val, data)) = self.next_field(m, &mut r, bytes)? {
                occ.push(Occ { fi: fi as u16, seq, wt, val, data });
                seq += 1;
            }
        }
        Ok(occ)
    }

    /// The next field occurrence of `m` in `r` (reading `bytes`): its
    /// field index, wire type and value, or None for a field `m` lacks, a
    /// wire type the field does not take, a closed enum's unknown value.
    #[inline(always)]
    #[allow(clippy::type_complexity)] // one occurrence, spelled out
    fn next_field<'b>(
        &self,
        m: &MessagePlan,
        r: &mut Reader<'b>,
        bytes: &'b [u8],
    ) -> Result<Option<(usize, WireType, u64, &'b [u8])>, JsonError> {
        let tag = r.read_tag().map_err(wire_err)?;
        let number = tag.field_number();
        let wt = tag.wire_type();
        let (mut val, mut data) = (0u64, &b""[..]);
        match wt {
            WireType::Varint => val = r.read_varint().map_err(wire_err)?,
            WireType::I64 => val = r.read_fixed64().map_err(wire_err)?,
            WireType::I32 => val = u64::from(r.read_fixed32().map_err(wire_err)?),
            WireType::Len => data = r.read_len_bytes().map_err(wire_err)?,
            WireType::StartGroup => {
                let start = r.position();
                r.skip_group(number, self.opts.max_depth).map_err(wire_err)?;
                let end = r.position() - encoded_len_varint(u64::from(number) << 3 | 4);
                data = &bytes[start..end];
            }
            WireType::EndGroup => {
                return Err(wire_err(pbwire::Error::new(pbwire::ErrorKind::UnexpectedEndGroup(number), r.position())));
            }
        }
        let Some(fi) = m.field_index(number) else { return Ok(None) };
        let f = &m.fields[fi];
        let fits = match f.card {
            Card::Map => wt == WireType::Len,
            Card::Repeated => wt == f.kind.wire_type() || (f.kind.is_packable() && wt == WireType::Len),
            Card::Single => wt == f.kind.wire_type(),
        };
        if !fits || (wt == WireType::Varint && f.kind == Kind::Enum && !self.enum_accepts(f.sub, val as i32)) {
            return Ok(None);
        }
        Ok(Some((fi, wt, val, data)))
    }

    /// Whether enum `e` takes `v` (open enums take every value).
    fn enum_accepts(&self, e: u32, v: i32) -> bool {
        let e = &self.plans.enums[e as usize];
        !e.closed || e.by_number.binary_search_by_key(&v, |&(n, _)| n).is_ok()
    }

    /// Print `m`'s fields as object members (no braces); `meta` is its
    /// [`meta::Meta`].
    #[inline]
    fn members(&mut self, m: &MessagePlan, meta: meta::Meta, bytes: &[u8], first: &mut bool) -> R {
        if meta.fast && !self.slow_only {
            let done = if self.lean {
                self.members_lean(m, (meta.keys, meta.lean), bytes, first)?
            } else {
                self.members_fast(m, meta.keys, bytes, first)?
            };
            if done {
                return Ok(());
            }
        }
        self.members_sorted(m, meta.keys, bytes, first)
    }

    /// [`Printer::members`] by the occurrences sorted into field order,
    /// with the merge rules; `keys` is `m`'s [`meta::Meta::keys`].
    #[inline(never)]
    fn members_sorted(&mut self, m: &MessagePlan, keys: u32, bytes: &[u8], first: &mut bool) -> R {
        let mut occ = self.scan(m, bytes)?;
        // Per oneof: the member set last and where its run began (on the
        // stack of oneof states, above `base`).
        let base = self.s.oneofs.len();
        if !m.oneofs.is_empty() {
            self.s.oneofs.resize(base + m.oneofs.len(), (u16::MAX, 0));
            let cur = &mut self.s.oneofs[base..];
            for o in &occ {
                let f = &m.fields[o.fi as usize];
                if f.oneof != NO_ONEOF && cur[f.oneof as usize].0 != o.fi {
                    cur[f.oneof as usize] = (o.fi, o.seq);
                }
            }
        }
        // Field order, each field's occurrences in wire order (`seq` makes
        // the key unique: an unstable sort, which allocates nothing).
        if !occ.is_sorted_by_key(|o| o.fi) {
            occ.sort_unstable_by_key(|o| (o.fi, o.seq));
        }
        // Every field with `emit_defaults`; else only those that occur.
        let (mut i, mut fi) = (0, 0);
        loop {
            if !self.opts.emit_defaults {
                match occ.get(i) {
                    Some(o) => fi = o.fi as usize,
                    None => break,
                }
            } else if fi == m.fields.len() {
                break;
            }
            let (this, f) = (fi, &m.fields[fi]);
            let j = i;
            while i < occ.len() && occ[i].fi as usize == this {
                i += 1;
            }
            fi += 1;
            let mut run = &occ[j..i];
            if f.oneof != NO_ONEOF {
                let (member, start) = self.s.oneofs[base + f.oneof as usize];
                if member as usize != this {
                    continue;
                }
                run = &run[run.partition_point(|o| o.seq < start)..];
            }
            self.field(f, keys, this, run, first).map_err(|e| e.in_field(self.name(f)))?;
        }
        self.s.oneofs.truncate(base);
        self.give_occ(occ);
        Ok(())
    }

    /// The name of `f` in the output (and in error paths).
    fn name<'f>(&self, f: &'f FieldPlan) -> &'f str {
        if self.opts.json_names { &f.json_name } else { &f.name }
    }

    /// The separator and the key of field `fi` of the message whose
    /// [`meta::Meta::keys`] is `keys`.
    #[inline]
    fn key(&mut self, keys: u32, fi: usize, first: &mut bool) {
        let (text, n) = self.s.metas.key(keys, fi, self.opts.json_names);
        self.o.member_key(text, n, first);
    }

    /// Field `fi` (`f`) from its occurrences `run`, if it is printed.
    fn field(&mut self, f: &FieldPlan, keys: u32, fi: usize, run: &[Occ<'_>], first: &mut bool) -> R {
        match f.card {
            Card::Repeated => {
                if run.is_empty() && !self.opts.emit_defaults {
                    return Ok(());
                }
                // Occurrences may hold no element (an empty packed run, a
                // closed enum's unknown values): no element, no field, as
                // decode gives none.
                let (mark, first0) = (self.o.mark(), *first);
                self.key(keys, fi, first);
                if self.repeated(f, run)? == 0 && !self.opts.emit_defaults {
                    self.o.reset(mark);
                    *first = first0;
                }
                Ok(())
            }
            Card::Map => {
                if run.is_empty() && !self.opts.emit_defaults {
                    return Ok(());
                }
                self.map(f, run, Some((keys, fi, first)))
            }
            Card::Single => {
                let Some(last) = run.last() else {
                    if self.opts.emit_defaults && f.implicit {
                        self.key(keys, fi, first);
                        return self.scalar(f.kind, f.sub, 0, b"");
                    }
                    return Ok(());
                };
                if matches!(f.kind, Kind::Message | Kind::Group) {
                    self.key(keys, fi, first);
                    return self.merged(f.sub, run);
                }
                self.single(f, keys, fi, last.val, last.data, first)
            }
        }
    }

    /// A singular scalar field's value, unless it is an implicit field's
    /// zero left out.
    #[inline(always)]
    fn single(&mut self, f: &FieldPlan, keys: u32, fi: usize, val: u64, data: &[u8], first: &mut bool) -> R {
        if f.implicit && !self.opts.emit_defaults && val == 0 && data.is_empty() {
            return Ok(());
        }
        self.key(keys, fi, first);
        self.scalar(f.kind, f.sub, val, data)
    }

    /// A repeated field's elements as an array; how many.
    fn repeated(&mut self, f: &FieldPlan, run: &[Occ<'_>]) -> Result<usize, JsonError> {
        self.o.open(b'[');
        let mut first = true;
        let mut n = 0usize;
        for o in run {
            self.elements(f, o.wt, o.val, o.data, &mut first, &mut n)?;
        }
        self.o.close(b']', first);
        Ok(n)
    }

    /// The elements of one occurrence of repeated field `f` (one value, or
    /// a packed run of them); `n` counts the elements so far.
    #[inline]
    fn elements(&mut self, f: &FieldPlan, wt: WireType, val: u64, data: &[u8], first: &mut bool, n: &mut usize) -> R {
        if wt == WireType::Len && f.kind.is_packable() {
            if self.o.compact() {
                // The integer kinds in loops of their own.
                match f.kind {
                    Kind::Int32 => return self.packed_ints(data, first, n, |x| x as i32, false),
                    Kind::UInt32 => return self.packed_ints(data, first, n, |x| x as u32, false),
                    Kind::SInt32 => return self.packed_ints(data, first, n, |x| decode_zigzag32(x as u32), false),
                    Kind::Int64 => return self.packed_ints(data, first, n, |x| x as i64, true),
                    Kind::UInt64 => return self.packed_ints(data, first, n, |x| x, true),
                    Kind::SInt64 => return self.packed_ints(data, first, n, decode_zigzag64, true),
                    _ => {}
                }
            }
            let mut r = Reader::new(data);
            while !r.is_empty() {
                let val = match f.kind.wire_type() {
                    WireType::I64 => r.read_fixed64(),
                    WireType::I32 => r.read_fixed32().map(u64::from),
                    _ => r.read_varint(),
                }
                .map_err(wire_err)?;
                if f.kind == Kind::Enum && !self.enum_accepts(f.sub, val as i32) {
                    continue;
                }
                self.o.sep(first);
                self.scalar(f.kind, f.sub, val, b"").map_err(|e| e.in_index(*n))?;
                *n += 1;
            }
        } else {
            self.o.sep(first);
            let r = if matches!(f.kind, Kind::Message | Kind::Group) {
                self.message(f.sub, data)
            } else {
                self.scalar(f.kind, f.sub, val, data)
            };
            r.map_err(|e| e.in_index(*n))?;
            *n += 1;
        }
        Ok(())
    }

    /// [`Printer::elements`] of a packed run of varint integers, each
    /// printed as `conv` makes it (in quotes when `quote`), in the compact
    /// layout.
    #[inline(always)]
    fn packed_ints<D: Dec>(
        &mut self,
        data: &[u8],
        first: &mut bool,
        n: &mut usize,
        conv: impl Fn(u64) -> D,
        quote: bool,
    ) -> R {
        let mut r = Reader::new(data);
        while let Some(&b) = r.rest().first() {
            let x = if b < 0x80 {
                let _ = r.advance(1);
                u64::from(b)
            } else {
                r.read_varint().map_err(wire_err)?
            };
            self.o.element_int(first, conv(x), quote);
            *n += 1;
        }
        Ok(())
    }

    /// A map field's entries as an object; the last entry of a key wins.
    /// With `key` (its message's keys, its index, the `first` flag) also
    /// its key, unless no entry is left to print (all dropped as decode
    /// drops them) and `emit_defaults` is off: then nothing.
    fn map(&mut self, f: &FieldPlan, run: &[Occ<'_>], key: Option<(u32, usize, &mut bool)>) -> R {
        let plans = self.plans;
        let entry = &plans.messages[f.sub as usize];
        let (kf, vf) = (&entry.fields[0], &entry.fields[1]);
        let (mut keys, mut vals) = (self.take_bytes(), self.take_occ());
        let mut entries = self.s.entries.pop().unwrap_or_default();
        entries.clear();
        let closed = vf.kind == Kind::Enum && plans.enums[vf.sub as usize].closed;
        for (i, o) in run.iter().enumerate() {
            let occ = self.scan(entry, o.data)?;
            if closed && self.unknown_enum_value(vf.sub, o.data) {
                // Its value is a closed-enum value the enum lacks: decode
                // keeps the whole entry as an unknown field.
                self.give_occ(occ);
                continue;
            }
            let k = occ.iter().rev().find(|o| o.fi == 0).copied();
            let k = k.unwrap_or(Occ { fi: 0, seq: 0, wt: kf.kind.wire_type(), val: 0, data: b"" });
            let k0 = keys.len();
            let num = match kf.kind {
                Kind::String => {
                    keys.extend_from_slice(utf8(k.data)?);
                    0
                }
                Kind::Bool => {
                    keys.extend_from_slice(if k.val != 0 { b"true" } else { b"false" });
                    i128::from(k.val != 0)
                }
                kind => int_text(kind, k.val, &mut keys),
            };
            let v0 = vals.len();
            vals.extend(occ.iter().filter(|o| o.fi == 1).copied());
            self.give_occ(occ);
            entries.push(Entry { num, key: (k0, keys.len()), vals: (v0, vals.len()), i });
        }
        // Keys are printed sorted, so that the output does not depend on
        // the order of the entries on the wire (or in a Lua table); of
        // equal keys the last on the wire wins.
        let text = |e: &Entry| &keys[e.key.0..e.key.1];
        entries.sort_unstable_by(|a, b| (a.num, text(a), a.i).cmp(&(b.num, text(b), b.i)));
        let shown = match key {
            Some(_) if entries.is_empty() && !self.opts.emit_defaults => false,
            Some((k, fi, first)) => {
                self.key(k, fi, first);
                true
            }
            None => true,
        };
        let mut first = true;
        if shown {
            self.o.open(b'{');
        }
        for (j, e) in entries.iter().enumerate() {
            let k = text(e);
            if entries.get(j + 1).is_some_and(|n| n.num == e.num && text(n) == k) {
                continue;
            }
            self.o.sep(&mut first);
            self.o.key(k);
            let v = &vals[e.vals.0..e.vals.1];
            let r = if matches!(vf.kind, Kind::Message | Kind::Group) {
                self.merged(vf.sub, v)
            } else {
                let (val, data) = v.last().map_or((0, &b""[..]), |o| (o.val, o.data));
                self.scalar(vf.kind, vf.sub, val, data)
            };
            r.map_err(|e| e.in_key(k))?;
        }
        if shown {
            self.o.close(b'}', first);
        }
        self.s.bytes.push(keys);
        self.give_occ(vals);
        self.s.entries.push(entries);
        Ok(())
    }

    /// Whether the last value (field 2, a varint) of the map entry
    /// `entry` (read cleanly by `scan` already) is one the closed enum `e`
    /// lacks.
    #[cold]
    fn unknown_enum_value(&self, e: u32, entry: &[u8]) -> bool {
        let mut r = Reader::new(entry);
        let mut last = None;
        while let Ok(tag) = r.read_tag() {
            if tag.field_number() == 2 && tag.wire_type() == WireType::Varint {
                last = r.read_varint().ok();
            } else if r.skip_field(tag, self.opts.max_depth).is_err() {
                break;
            }
        }
        last.is_some_and(|v| !self.enum_accepts(e, v as i32))
    }

    /// One scalar value (not a message): the common kinds here, inlined
    /// into the loops; the others in [`Printer::scalar_rest`].
    #[inline(always)]
    fn scalar(&mut self, kind: Kind, sub: u32, x: u64, data: &[u8]) -> R {
        match kind {
            Kind::Int32 => self.o.int(x as i32, false),
            Kind::UInt32 => self.o.int(x as u32, false),
            Kind::Int64 => self.o.int(x as i64, true),
            Kind::String if self.o.plain_string(data) => {}
            _ => return self.scalar_rest(kind, sub, x, data),
        }
        Ok(())
    }

    /// [`Printer::scalar`] of every kind.
    #[inline(never)]
    fn scalar_rest(&mut self, kind: Kind, sub: u32, x: u64, data: &[u8]) -> R {
        let b = &mut *self.o.buf;
        match kind {
            Kind::Double => put_f64(b, f64::from_bits(x)),
            Kind::Float => put_f32(b, f32::from_bits(x as u32)),
            Kind::Int32 | Kind::SFixed32 => self.o.int(x as i32, false),
            Kind::UInt32 | Kind::Fixed32 => self.o.int(x as u32, false),
            Kind::SInt32 => self.o.int(decode_zigzag32(x as u32), false),
            Kind::Int64 | Kind::SFixed64 => self.o.int(x as i64, true),
            Kind::UInt64 | Kind::Fixed64 => self.o.int(x, true),
            Kind::SInt64 => self.o.int(decode_zigzag64(x), true),
            Kind::Bool => b.extend_from_slice(if x != 0 { b"true" } else { b"false" }),
            Kind::String => {
                self.o.checked_string(data).map_err(|_| JsonError::new("string field holds invalid UTF-8"))?;
            }
            Kind::Bytes => {
                use base64::Engine as _;
                b.push(b'"');
                let start = b.len();
                let n = base64::encoded_len(data.len(), true).unwrap_or(0);
                b.resize(start + n, 0);
                let w = base64::engine::general_purpose::STANDARD.encode_slice(data, &mut b[start..]);
                b.truncate(start + w.unwrap_or(0));
                b.push(b'"');
            }
            Kind::Enum => self.enum_value(sub, x as i32),
            Kind::Message | Kind::Group => return self.message(sub, data),
        }
        Ok(())
    }

    fn enum_value(&mut self, e: u32, n: i32) {
        let plans = self.plans;
        if wkt::is_null_value(plans, e) {
            self.o.raw(b"null");
            return;
        }
        if !self.opts.enums_as_number
            && let Some(k) = plans.enums[e as usize].name_key(n)
        {
            self.o.string(plans.keys[k as usize - 1].as_bytes());
            return;
        }
        put_int(self.o.buf, n);
    }

    /// The special forms of the well-known types.
    #[inline(never)]
    fn wkt(&mut self, w: Wkt, m: &MessagePlan, bytes: &[u8]) -> R {
        let occ = self.scan(m, bytes)?;
        let r = self.wkt_form(w, m, &occ);
        self.give_occ(occ);
        r
    }

    /// [`Printer::wkt`] on the scanned occurrences.
    fn wkt_form(&mut self, w: Wkt, m: &MessagePlan, occ: &[Occ<'_>]) -> R {
        let last = |fi: u16| occ.iter().rev().find(|o| o.fi == fi).copied();
        match w {
            Wkt::Wrapper => {
                let f = &m.fields[0];
                let (val, data) = last(0).map_or((0, &b""[..]), |o| (o.val, o.data));
                self.scalar(f.kind, f.sub, val, data)
            }
            Wkt::Timestamp | Wkt::Duration => {
                let secs = last(0).map_or(0, |o| o.val as i64);
                let nanos = last(1).map_or(0, |o| i64::from(o.val as i32));
                let r = if w == Wkt::Timestamp {
                    wkt::put_timestamp(self.o.buf, secs, nanos)
                } else {
                    wkt::put_duration(self.o.buf, secs, nanos)
                };
                r.map_err(JsonError::unprintable)
            }
            Wkt::FieldMask => {
                let mut text = self.take_bytes();
                for (i, o) in occ.iter().filter(|o| o.fi == 0).enumerate() {
                    if i > 0 {
                        text.push(b',');
                    }
                    wkt::path_to_json(utf8(o.data)?, &mut text).map_err(JsonError::unprintable)?;
                }
                self.o.string(&text);
                self.s.bytes.push(text);
                Ok(())
            }
            Wkt::Struct | Wkt::ListValue => {
                let mut run = self.take_occ();
                run.extend(occ.iter().filter(|o| o.fi == 0).copied());
                let r = if w == Wkt::Struct {
                    self.map(&m.fields[0], &run, None)
                } else {
                    self.repeated(&m.fields[0], &run).map(drop)
                };
                self.give_occ(run);
                r.map_err(|e| e.in_field(&m.fields[0].name))
            }
            Wkt::Value => self.value(m, occ),
            Wkt::Any => self.any(last(0).map_or(&b""[..], |o| o.data), last(1).map_or(&b""[..], |o| o.data)),
        }
    }

    /// `google.protobuf.Value`: the member of its `kind` oneof set last.
    fn value(&mut self, m: &MessagePlan, occ: &[Occ<'_>]) -> R {
        // No kind set: `null`, as Python's json_format prints it (upb
        // refuses; reading it back gives null_value).
        let Some(chosen) = occ.iter().max_by_key(|o| o.seq) else {
            self.o.raw(b"null");
            return Ok(());
        };
        let f = &m.fields[chosen.fi as usize];
        // The member's run since another member was last set.
        let start = occ.iter().filter(|o| o.fi != chosen.fi).map(|o| o.seq + 1).max().unwrap_or(0);
        match f.kind {
            Kind::Message | Kind::Group => {
                let mut run = self.take_occ();
                run.extend(occ.iter().filter(|o| o.fi == chosen.fi && o.seq >= start).copied());
                let r = self.merged(f.sub, &run);
                self.give_occ(run);
                r
            }
            Kind::Double if !f64::from_bits(chosen.val).is_finite() => {
                Err(JsonError::unprintable("google.protobuf.Value number_value is not finite"))
            }
            _ => self.scalar(f.kind, f.sub, chosen.val, chosen.data),
        }
    }

    /// `google.protobuf.Any`: `{"@type": url, <fields>}`, or for a type
    /// with a special form `{"@type": url, "value": <form>}`.
    fn any(&mut self, url: &[u8], value: &[u8]) -> R {
        if url.is_empty() && value.is_empty() {
            self.o.raw(b"{}");
            return Ok(());
        }
        let url = utf8(url)?;
        let plans = self.plans;
        let mi = any_type(plans, url)?;
        let m = &plans.messages[mi as usize];
        self.o.open(b'{');
        let mut first = false;
        self.o.sep(&mut true);
        self.o.key(b"@type");
        self.o.string(url);
        let meta = self.s.metas.get(plans, mi);
        if meta.wkt.is_some() {
            self.o.sep(&mut first);
            self.o.key(b"value");
            self.message(mi, value)?;
        } else {
            if self.depth >= self.opts.max_depth {
                return Err(JsonError::new("nesting too deep"));
            }
            self.depth += 1;
            self.members(m, meta, value, &mut first)?;
            self.depth -= 1;
        }
        self.o.close(b'}', false);
        Ok(())
    }
}

/// The message an Any's type URL names (the part after the last `/`).
pub fn any_type(plans: &Plans, url: &[u8]) -> Result<u32, JsonError> {
    let name = match url.iter().rposition(|&b| b == b'/') {
        Some(p) => &url[p + 1..],
        None => return Err(JsonError::new(format!("Any type URL {:?} has no '/'", String::from_utf8_lossy(url)))),
    };
    let name = std::str::from_utf8(name).unwrap_or("");
    plans
        .message_index(name)
        .map(|i| i as u32)
        .ok_or_else(|| JsonError::new(format!("Any type {name:?} is not in the schema")))
}

/// The decimal text of an integer map key of `kind`; its value.
fn int_text(kind: Kind, x: u64, out: &mut Vec<u8>) -> i128 {
    let v = match kind {
        Kind::Int32 | Kind::SFixed32 => i128::from(x as i32),
        Kind::UInt32 | Kind::Fixed32 => i128::from(x as u32),
        Kind::SInt32 => i128::from(decode_zigzag32(x as u32)),
        Kind::Int64 | Kind::SFixed64 => i128::from(x as i64),
        Kind::SInt64 => i128::from(decode_zigzag64(x)),
        _ => i128::from(x),
    };
    put_int(out, v);
    v
}
