//! The fast path of [`Printer::members`]: a body in canonical order is
//! printed as it is read, without collecting and sorting its occurrences.
//!
//! Canonical is what every encoder writes: known fields in ascending
//! order, each singular field once, each repeated or map field in one run,
//! at most one member of each oneof. Then the merge rules have nothing to
//! merge and the sorted path prints the same text. The first occurrence
//! that breaks the order sends the body back to the sorted path, its text
//! so far dropped. So that this costs at most a second reading of the
//! body's own bytes, never of its sub-messages, the rest of the body is
//! checked for order before the first sub-message or map is printed.
//!
//! Errors are the sorted path's too: that path reads the whole body (wire
//! errors first) and then prints in field order. A wire error met while
//! printing is the first one in the body either way; a print error met
//! before the rest was checked stands only if the rest reads cleanly (a
//! later wire error wins) and in order (else the sorted path decides).

use pbwire::{Reader, WireType};

use super::meta::{LeanField, LeanTable};
use super::{Occ, Printer, wire_err};
use crate::json::JsonError;
use crate::json::out::{KEY_PAD, Out};
use crate::plan::{Card, FieldPlan, Kind, MessagePlan, NO_ONEOF, PLAIN_REQUIRED};

/// Where the canonical order stands.
#[derive(Clone, Copy)]
struct Order {
    /// The lowest field index a new field may have.
    next: usize,
    /// The field before `next` is repeated or a map: it may go on.
    run: bool,
    /// The oneofs a member of which was seen (bit by oneof index).
    oneofs: u64,
}

/// How an occurrence stands with the order.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Another value of the repeated or map field before it.
    Same,
    /// The first of a field.
    New,
    /// Out of order.
    Break,
}

impl Order {
    #[inline(always)]
    fn step(&mut self, m: &MessagePlan, fi: usize) -> Step {
        if fi + 1 == self.next && self.run {
            return Step::Same;
        }
        if fi < self.next {
            return Step::Break;
        }
        let f = &m.fields[fi];
        if f.oneof != NO_ONEOF {
            let bit = 1u64 << f.oneof;
            if self.oneofs & bit != 0 {
                return Step::Break;
            }
            self.oneofs |= bit;
        }
        self.next = fi + 1;
        self.run = f.card != Card::Single;
        Step::New
    }
}

/// The fast path's state.
struct Walk<'b> {
    ord: Order,
    /// The rest of the body was found in order (see [`Printer::in_order`]).
    checked: bool,
    run: Run<'b>,
}

/// The field index of a plain field's one-byte `tag` in `m`, if it is one.
#[inline(always)]
fn plain(m: &MessagePlan, tag: u8) -> Option<usize> {
    match m.plain_by_tag.get(usize::from(tag)) {
        Some(&e) if e != 0 => Some(usize::from(e & !PLAIN_REQUIRED) - 1),
        _ => None,
    }
}

/// A plain field's value after its tag (wire type `wt`: not a group).
#[inline(always)]
fn plain_value<'b>(r: &mut Reader<'b>, wt: u8) -> Result<(u64, &'b [u8]), JsonError> {
    Ok(match wt {
        0 => match r.rest().first() {
            Some(&b) if b < 0x80 => {
                let _ = r.advance(1);
                (u64::from(b), &[][..])
            }
            _ => (r.read_varint().map_err(wire_err)?, &[][..]),
        },
        1 => (r.read_fixed64().map_err(wire_err)?, &[][..]),
        5 => (u64::from(r.read_fixed32().map_err(wire_err)?), &[][..]),
        _ => (0, r.read_len_bytes().map_err(wire_err)?),
    })
}

/// Where [`lean_run`] stopped.
enum Lean {
    /// At the end of the body.
    Done,
    /// At a field out of order.
    Break,
    /// At a field it does not print (the reader before its tag).
    Other,
}

/// The plain fields at the start of `rest` of the commonest kinds (32- and
/// 64-bit `int`s, ASCII strings with nothing to escape: `table`'s fields),
/// each member written in one reserve, until the body ends or another field
/// (or value: a long varint or length, a string to escape or check) comes;
/// `rest` then starts at its tag. `next` and `first` as
/// [`Printer::members_fast`] keeps them. `text`: the key texts; `names`: 0
/// for `json_name`s, 1 for proto names. No `Printer` borrowed: its state
/// stays in registers.
#[inline(always)]
fn lean_run(
    o: &mut Out<'_>,
    (text, table, names): (&[u8], &LeanTable, usize),
    rest: &mut &[u8],
    next: &mut usize,
    first: &mut bool,
) -> Lean {
    let mut fst = *first;
    let stop = loop {
        let Some(&tag) = rest.first() else { break Lean::Done };
        // A byte of 0x80 and up starts a longer tag: never the table's.
        // (Its slot would be `tag >> 3 & 15`, whose empty entries hold
        // 0xff: a byte 0xff read there would match one.)
        let Some(e) = table.get(usize::from(tag >> 3)) else { break Lean::Other };
        if e.tag != tag {
            break Lean::Other;
        }
        let fi = usize::from(e.fi);
        if fi < *next {
            break Lean::Break;
        }
        // The value, from its byte after the tag: a one-byte varint (the
        // same text for every int kind but for the 64-bit kinds' quotes),
        // or a string of a one-byte length.
        let Some(&b) = rest.get(1).filter(|&&b| b < 0x80) else { break Lean::Other };
        let used = if e.string {
            let Some(data) = rest.get(2..2 + usize::from(b)) else { break Lean::Other };
            if !(e.implicit && data.is_empty()) {
                let Some((k, n)) = lean_key(text, e, names, fst) else { break Lean::Other };
                if !o.member_plain_string(k, n, data) {
                    // Printed by the walk, from its tag.
                    break Lean::Other;
                }
                fst = false;
            }
            2 + data.len()
        } else {
            if !(e.implicit && b == 0) {
                let Some((k, n)) = lean_key(text, e, names, fst) else { break Lean::Other };
                o.member_int(k, n, u32::from(b), e.quote);
                fst = false;
            }
            2
        };
        *next = fi + 1;
        *rest = &rest[used..];
    };
    *first = fst;
    stop
}

/// The key text of `e` ([`lean_run`]'s `text` and `names`) from its comma,
/// or after it for the `first` member: [`KEY_PAD`] bytes, and the length
/// of the key in them.
#[inline(always)]
fn lean_key<'t>(text: &'t [u8], e: &LeanField, names: usize, first: bool) -> Option<(&'t [u8; KEY_PAD], usize)> {
    let a = e.key[names] as usize + usize::from(first);
    // (A table entry's key text is never empty: at least `,"":`.)
    let n = usize::from(e.key_len[names]).checked_sub(usize::from(first))?;
    // (Always there: the texts end in KEY_PAD bytes of padding.)
    Some((text.get(a..a + KEY_PAD)?.try_into().ok()?, n))
}

/// No one-byte tag (see `run_tag` in [`Printer::walk`]).
const NO_RUN_TAG: u16 = 0x100;

/// The elements of `run` (a repeated string with a one-byte tag) at the
/// start of `rest` printed while they are ASCII with nothing to escape and
/// of a one-byte length; how many bytes they took. Compact layout only.
#[inline(never)]
fn plain_string_run(o: &mut Out<'_>, rest: &[u8], run: &mut Run<'_>) -> usize {
    let mut at = 0;
    while let [tag, n, more @ ..] = &rest[at..]
        && u16::from(*tag) == run.tag
        && *n < 0x80
        && let Some(data) = more.get(..usize::from(*n))
        && o.element_plain_string(&mut run.first, data)
    {
        run.n += 1;
        at += 2 + data.len();
    }
    at
}

/// The open run of a repeated or map field.
struct Run<'b> {
    /// Its field index, or `usize::MAX` when none is open.
    fi: usize,
    /// When it is a repeated string field numbered below 16 printed in the
    /// compact layout: its one-byte tag (with the LEN wire type), else
    /// [`NO_RUN_TAG`].
    tag: u16,
    /// No element printed yet.
    first: bool,
    /// Elements printed so far.
    n: usize,
    /// A map's entries so far.
    entries: Vec<Occ<'b>>,
    /// Where the text was before a repeated field's key, and the member
    /// state then: a run of no element is taken back.
    before: ((usize, usize), bool),
}

impl<'a> Printer<'a> {
    /// [`Printer::members`] in wire order: Ok(false) when the body is not
    /// in canonical order (nothing printed then).
    pub(super) fn members_fast(
        &mut self,
        m: &MessagePlan,
        keys: u32,
        bytes: &[u8],
        first: &mut bool,
    ) -> Result<bool, JsonError> {
        let (mark, first0) = (self.o.mark(), *first);
        let mut r = Reader::new(bytes);
        let mut next = 0;
        // Plain fields (as decode's fast path has them: singular, in no
        // oneof, not a message, not a closed enum, numbered below 16, in
        // their own wire type) in a lean loop; the first other field hands
        // the rest to the full walk.
        let done = loop {
            let Some(&tag) = r.rest().first() else {
                if self.opts.emit_defaults {
                    self.defaults(m, keys, next..m.fields.len(), first);
                }
                break true;
            };
            let Some(fi) = plain(m, tag) else {
                break self.walk(m, keys, bytes, r, next, first)?;
            };
            if fi < next {
                break false;
            }
            let _ = r.advance(1);
            let (val, data) = plain_value(&mut r, tag & 7)?;
            if self.opts.emit_defaults {
                self.defaults(m, keys, next..fi, first);
            }
            next = fi + 1;
            let f = &m.fields[fi];
            if let Err(e) = self.single(f, keys, fi, val, data, first) {
                // See the module doc: the error stands if the rest of the
                // body reads cleanly and in order.
                if !self.in_order(m, &r, bytes, Order { next, run: false, oneofs: 0 })? {
                    break false;
                }
                return Err(e.in_field(self.name(f)));
            }
        };
        Ok(self.fast_end(done, mark, first, first0))
    }

    /// The end of a fast-path body: when it fell back (`done` false), its
    /// text dropped back to `mark` and the member state to `first0`.
    /// Returns `done`.
    #[inline(always)]
    fn fast_end(&mut self, done: bool, mark: (usize, usize), first: &mut bool, first0: bool) -> bool {
        #[cfg(test)]
        if done {
            self.s.fast.0 += 1;
        } else {
            self.s.fast.1 += 1;
        }
        if !done {
            self.o.reset(mark);
            *first = first0;
        }
        done
    }

    /// [`Printer::members_fast`] in the compact layout without
    /// `emit_defaults` (the common options): [`lean_run`] prints what it
    /// can, [`Printer::walk`] the rest.
    pub(super) fn members_lean(
        &mut self,
        m: &MessagePlan,
        (keys, lean): (u32, u32),
        bytes: &[u8],
        first: &mut bool,
    ) -> Result<bool, JsonError> {
        let (mark, first0) = (self.o.mark(), *first);
        let (mut rest, mut next) = (bytes, 0);
        let metas = &self.s.metas;
        let lane = (&metas.text[..], &metas.leans[lean as usize], usize::from(!self.opts.json_names));
        let done = match lean_run(&mut self.o, lane, &mut rest, &mut next, first) {
            Lean::Done => true,
            Lean::Break => false,
            Lean::Other => {
                let r = Reader::with_offset(rest, bytes.len() - rest.len());
                self.walk(m, keys, bytes, r, next, first)?
            }
        };
        Ok(self.fast_end(done, mark, first, first0))
    }

    /// The rest of [`Printer::members_fast`] from `r`, any field: Ok(false)
    /// when the body is not in canonical order (its text then dropped by
    /// the caller).
    #[inline(never)]
    fn walk<'b>(
        &mut self,
        m: &MessagePlan,
        keys: u32,
        bytes: &'b [u8],
        mut r: Reader<'b>,
        next: usize,
        first: &mut bool,
    ) -> Result<bool, JsonError> {
        let mut w = Walk {
            ord: Order { next, run: false, oneofs: 0 },
            checked: false,
            run: Run {
                fi: usize::MAX,
                tag: NO_RUN_TAG,
                first: true,
                n: 0,
                entries: Vec::new(),
                before: ((0, 0), true),
            },
        };
        let fallback = loop {
            let Some(&tag) = r.rest().first() else { break false };
            let res = if let Some(fi) = plain(m, tag) {
                if fi < w.ord.next {
                    break true;
                }
                let _ = r.advance(1);
                let (val, data) = plain_value(&mut r, tag & 7)?;
                if w.run.fi != usize::MAX {
                    self.end_run(m, keys, &mut w.run, first)?;
                }
                if self.opts.emit_defaults {
                    self.defaults(m, keys, w.ord.next..fi, first);
                }
                (w.ord.next, w.ord.run) = (fi + 1, false);
                let f = &m.fields[fi];
                self.single(f, keys, fi, val, data, first).map_err(|e| e.in_field(self.name(f)))
            } else {
                let Some(occ) = self.next_field(m, &mut r, bytes)? else { continue };
                let res = match self.general(m, keys, occ, (&r, bytes), &mut w, first)? {
                    Some(res) => res,
                    None => break true,
                };
                if w.run.tag != NO_RUN_TAG && r.rest().first().is_some_and(|&t| u16::from(t) == w.run.tag) {
                    // The run's next elements, when plain strings, printed
                    // here (`Step::Same`, as the full walk finds them).
                    let used = plain_string_run(&mut self.o, r.rest(), &mut w.run);
                    let _ = r.advance(used);
                }
                res
            };
            if let Err(e) = res {
                // Before the check only this body's scalars were printed:
                // the sorted path would report this error if the rest of
                // the body reads cleanly and in order.
                if !w.checked && !self.in_order(m, &r, bytes, w.ord)? {
                    break true;
                }
                return Err(e);
            }
        };
        let r = if fallback { Ok(false) } else { self.end_run(m, keys, &mut w.run, first).map(|()| true) };
        if w.run.entries.capacity() > 0 {
            self.give_occ(w.run.entries);
        }
        if r.as_ref().is_ok_and(|&done| done) && self.opts.emit_defaults {
            self.defaults(m, keys, w.ord.next..m.fields.len(), first);
        }
        r
    }

    /// An occurrence off the plain lane: None when it breaks the order,
    /// else the result of printing it (Err for the errors that stand as
    /// they are: wire errors, errors after the check).
    #[allow(clippy::type_complexity)] // one occurrence, spelled out
    fn general<'b>(
        &mut self,
        m: &MessagePlan,
        keys: u32,
        (fi, wt, val, data): (usize, WireType, u64, &'b [u8]),
        (r, bytes): (&Reader<'b>, &'b [u8]),
        w: &mut Walk<'b>,
        first: &mut bool,
    ) -> Result<Option<Result<(), JsonError>>, JsonError> {
        let next = w.ord.next;
        let f = &m.fields[fi];
        Ok(Some(match w.ord.step(m, fi) {
            Step::Break => return Ok(None),
            Step::Same => self.element(f, &mut w.run, wt, val, data),
            Step::New => {
                if !w.checked && (matches!(f.kind, Kind::Message | Kind::Group) || f.card == Card::Map) {
                    if !self.in_order(m, r, bytes, w.ord)? {
                        return Ok(None);
                    }
                    w.checked = true;
                }
                self.end_run(m, keys, &mut w.run, first)?;
                if self.opts.emit_defaults {
                    self.defaults(m, keys, next..fi, first);
                }
                self.start(f, keys, fi, &mut w.run, first, wt, val, data)
            }
        }))
    }

    /// Whether the rest of the body after `r` is in order after `ord`
    /// (its wire errors are errors).
    fn in_order(&self, m: &MessagePlan, r: &Reader<'_>, bytes: &[u8], mut ord: Order) -> Result<bool, JsonError> {
        let mut r = r.clone();
        while !r.is_empty() {
            if let Some((fi, ..)) = self.next_field(m, &mut r, bytes)?
                && ord.step(m, fi) == Step::Break
            {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The first occurrence of field `fi` (`f`): its key and value, or the
    /// start of its run.
    #[allow(clippy::too_many_arguments)] // one occurrence, spelled out
    #[inline]
    fn start<'b>(
        &mut self,
        f: &FieldPlan,
        keys: u32,
        fi: usize,
        run: &mut Run<'b>,
        first: &mut bool,
        wt: WireType,
        val: u64,
        data: &'b [u8],
    ) -> Result<(), JsonError> {
        match f.card {
            Card::Single => {
                let r = if matches!(f.kind, Kind::Message | Kind::Group) {
                    self.key(keys, fi, first);
                    self.message(f.sub, data)
                } else {
                    self.single(f, keys, fi, val, data, first)
                };
                r.map_err(|e| e.in_field(self.name(f)))
            }
            Card::Repeated => {
                run.before = (self.o.mark(), *first);
                self.key(keys, fi, first);
                self.o.open(b'[');
                (run.fi, run.first, run.n) = (fi, true, 0);
                run.tag = if f.kind == Kind::String && f.number < 16 && self.o.compact() {
                    (f.number << 3 | 2) as u16
                } else {
                    NO_RUN_TAG
                };
                self.element(f, run, wt, val, data)
            }
            Card::Map => {
                // The key comes with the entries, at the run's end.
                if run.entries.capacity() == 0 {
                    run.entries = self.take_occ();
                }
                run.fi = fi;
                self.element(f, run, wt, val, data)
            }
        }
    }

    /// Another occurrence of the open run's field `f`.
    #[inline]
    fn element<'b>(
        &mut self,
        f: &FieldPlan,
        run: &mut Run<'b>,
        wt: WireType,
        val: u64,
        data: &'b [u8],
    ) -> Result<(), JsonError> {
        if f.card == Card::Map {
            run.entries.push(Occ { fi: 0, seq: 0, wt, val, data });
            return Ok(());
        }
        self.elements(f, wt, val, data, &mut run.first, &mut run.n).map_err(|e| e.in_field(self.name(f)))
    }

    /// The end of the open run, if one is: the array closed, the map
    /// printed (with its key: see [`Printer::map`]).
    fn end_run(&mut self, m: &MessagePlan, keys: u32, run: &mut Run<'_>, first: &mut bool) -> Result<(), JsonError> {
        let Some(f) = m.fields.get(run.fi) else { return Ok(()) };
        let fi = std::mem::replace(&mut run.fi, usize::MAX);
        run.tag = NO_RUN_TAG;
        if f.card == Card::Map {
            let r = self.map(f, &run.entries, Some((keys, fi, first)));
            run.entries.clear();
            return r.map_err(|e| e.in_field(self.name(f)));
        }
        if run.first && !self.opts.emit_defaults {
            // No element (empty packed runs, closed-enum values dropped):
            // no field, as the sorted path has it.
            self.o.reset(run.before.0);
            *first = run.before.1;
            return Ok(());
        }
        self.o.close(b']', run.first);
        Ok(())
    }

    /// With `emit_defaults`: the absent fields `range` at their defaults,
    /// as the sorted path prints them (nothing for a oneof's members).
    #[cold]
    fn defaults(&mut self, m: &MessagePlan, keys: u32, range: std::ops::Range<usize>, first: &mut bool) {
        for fi in range {
            let f = &m.fields[fi];
            if f.oneof == NO_ONEOF {
                // An empty run prints a zero, `[]` or `{}`: no error.
                let _ = self.field(f, keys, fi, &[], first);
            }
        }
    }
}
