//! What the printer works out once per message type, on its first print
//! of one, and keeps with its scratch (`super::PrintScratch`) for the
//! schema's later calls: the special form (well-known types), whether the
//! wire-order fast path may print it, and each field's key as JSON text
//! (`"jsonName":` and `"name":`), so that a key is one copy.

use super::super::out::{KEY_PAD, Out};
use super::super::wkt::{self, Wkt};
use crate::plan::{Kind, MessagePlan, PLAIN_REQUIRED, Plans};

/// One message type's precomputed facts.
#[derive(Clone, Copy, Default)]
pub(super) struct Meta {
    /// The rest is valid.
    pub built: bool,
    /// Its special JSON form, if any.
    pub wkt: Option<Wkt>,
    /// The wire-order fast path may print it: its oneofs fit the fast
    /// path's 64-bit set of oneofs seen.
    pub fast: bool,
    /// Index in [`Metas::spans`] of its field 0's keys: field `i`'s
    /// `json_name` key at `keys + 2i`, its proto name key next.
    pub keys: u32,
    /// Index in [`Metas::leans`] of its [`LeanTable`].
    pub lean: u32,
}

/// A plain field (`MessagePlan::plain_by_tag`) of a kind the lean lane
/// prints, with a key of one fixed-size copy: what the lane needs of it
/// in one load.
#[derive(Clone, Copy)]
pub(super) struct LeanField {
    /// Its one-byte tag (field number and own wire type); 0xff in the
    /// entries of other numbers, which no one-byte tag matches.
    pub tag: u8,
    /// A string (else an int).
    pub string: bool,
    /// An int printed in quotes (a 64-bit kind).
    pub quote: bool,
    /// It has no presence: a zero is left out.
    pub implicit: bool,
    /// Its key texts' lengths (`,"k":`), `json_name`'s then the proto
    /// name's: at most [`KEY_PAD`].
    pub key_len: [u8; 2],
    /// Its field index.
    pub fi: u16,
    /// Where its key texts start in [`Metas::text`].
    pub key: [u32; 2],
}

/// A message's [`LeanField`]s by field number (the lane's fields are
/// numbered below 16).
pub(super) type LeanTable = [LeanField; 16];

const NO_LEAN: LeanField =
    LeanField { tag: 0xff, string: false, quote: false, implicit: false, key_len: [0; 2], fi: 0, key: [0; 2] };

/// The [`Meta`] of every message type printed so far, and the key text.
#[derive(Default)]
pub(super) struct Metas {
    /// The plans these were made from (their message array's address and
    /// length): other plans start afresh.
    plans: (usize, usize),
    metas: Vec<Meta>,
    /// The key texts, then [`KEY_PAD`] bytes of padding.
    pub text: Vec<u8>,
    spans: Vec<(u32, u32)>,
    /// The [`LeanTable`]s of the message types built.
    pub leans: Vec<LeanTable>,
}

impl Metas {
    /// Ready for `plans` (forgetting what was made from other plans).
    #[inline]
    pub fn sync(&mut self, plans: &Plans) {
        let id = (plans.messages.as_ptr() as usize, plans.messages.len());
        if self.plans != id {
            self.plans = id;
            self.metas.clear();
            self.metas.resize(plans.messages.len(), Meta::default());
            self.text.clear();
            self.spans.clear();
            self.leans.clear();
        }
    }

    /// The facts of message `mi` of the plans last given to [`Metas::sync`].
    #[inline]
    pub fn get(&mut self, plans: &Plans, mi: u32) -> Meta {
        match self.metas.get(mi as usize) {
            Some(m) if m.built => *m,
            _ => self.build(plans, mi),
        }
    }

    #[cold]
    #[inline(never)]
    fn build(&mut self, plans: &Plans, mi: u32) -> Meta {
        let m: &MessagePlan = &plans.messages[mi as usize];
        let keys = self.spans.len() as u32;
        self.text.truncate(self.text.len().saturating_sub(KEY_PAD));
        for f in &m.fields {
            for name in [&f.json_name, &f.name] {
                let a = self.text.len() as u32;
                Out::key_text(name.as_bytes(), &mut self.text);
                self.spans.push((a, self.text.len() as u32));
            }
        }
        self.text.resize(self.text.len() + KEY_PAD, 0);
        let mut lean = [NO_LEAN; 16];
        for (tag, &e) in m.plain_by_tag.iter().enumerate().filter(|&(_, &e)| e != 0) {
            let fi = usize::from(e & !PLAIN_REQUIRED) - 1;
            let f = &m.fields[fi];
            let (string, quote) = match f.kind {
                Kind::Int32 | Kind::UInt32 => (false, false),
                Kind::Int64 => (false, true),
                Kind::String => (true, false),
                _ => continue,
            };
            let span = |i: usize| self.spans[keys as usize + 2 * fi + i];
            let (j, p) = (span(0), span(1));
            let (jn, pn) = ((j.1 - j.0) as usize, (p.1 - p.0) as usize);
            if tag < 128 && jn <= KEY_PAD && pn <= KEY_PAD {
                lean[tag >> 3] = LeanField {
                    tag: tag as u8,
                    string,
                    quote,
                    implicit: f.implicit,
                    key_len: [jn as u8, pn as u8],
                    fi: fi as u16,
                    key: [j.0, p.0],
                };
            }
        }
        self.leans.push(lean);
        let lean = self.leans.len() as u32 - 1;
        let meta = Meta { built: true, wkt: wkt::wkt_of(m), fast: m.oneofs.len() <= 64, keys, lean };
        if let Some(slot) = self.metas.get_mut(mi as usize) {
            *slot = meta;
        }
        meta
    }

    /// The key text (`,"k":`) of field `fi` of the message whose
    /// [`Meta::keys`] is `keys`, its JSON name's or its proto name's: the
    /// text from its start (the padding included) and its length, as
    /// [`Out::member_key`] takes them.
    #[inline]
    pub fn key(&self, keys: u32, fi: usize, json_names: bool) -> (&[u8], usize) {
        let (a, b) = self.spans[keys as usize + 2 * fi + usize::from(!json_names)];
        (&self.text[a as usize..], (b - a) as usize)
    }
}
