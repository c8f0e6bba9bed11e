//! What the parser needs of each message, computed on its first use and
//! kept with the schema's parse scratch (the plans are shared by every
//! codec and hold nothing JSON-specific): the well-known form, whether
//! one word holds its seen set, its required fields as bits, and a hash
//! table from each spelling of each field's key (JSON name and proto
//! name) to the field.

use crate::json::lexer::{Expect, KeyWords};
use crate::json::wkt::{self, Wkt};
use crate::plan::{MessagePlan, Plans};

/// One message's facts (a copy per message object parsed).
#[derive(Clone, Copy, Debug, Default)]
pub struct MsgInfo {
    /// The rest is filled in.
    built: bool,
    /// At most 64 fields and 64 oneofs: a word holds each set.
    pub small: bool,
    /// Its special JSON form, if it is a well-known type.
    pub wkt: Option<Wkt>,
    /// With `small`: the bits of its `required` fields.
    pub required: u64,
    /// Where its key table starts in [`ParseTables::slots`].
    off: u32,
    /// Where its fields' [`Expect`]s start in [`ParseTables::expects`]
    /// (one per field, then one that never matches).
    eoff: u32,
    /// Its key table's size minus one (a power of two minus one).
    mask: u32,
    /// 64 minus the table's size in bits: a hash's top bits index it.
    shift: u32,
}

/// A key table slot: one spelling of one field's key.
#[derive(Clone, Copy, Debug)]
struct Slot {
    w0: u64,
    w1: u64,
    /// The key's length; [`EMPTY`] for a free slot.
    len: u32,
    /// The field's index in its message.
    field: u32,
    /// The spelling is the proto name (else the JSON name).
    proto: bool,
}

const EMPTY: u32 = u32::MAX;
const FREE: Slot = Slot { w0: 0, w1: 0, len: EMPTY, field: 0, proto: false };

/// The tables of one schema's messages, built as messages are first
/// parsed (a steady state of calls allocates nothing).
#[derive(Default)]
pub struct ParseTables {
    /// Per message index.
    msgs: Vec<MsgInfo>,
    /// Every built message's key table, one after another.
    slots: Vec<Slot>,
    /// Every built message's [`Expect`]s, one after another.
    expects: Vec<Expect>,
    /// The plans the tables were built for (identity only).
    plans: usize,
}

#[inline(always)]
fn hash(k: &KeyWords) -> u64 {
    (k.w0 ^ k.w1.rotate_left(32) ^ k.len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl ParseTables {
    /// Start over if these tables were built for other plans.
    pub fn bind(&mut self, plans: &Plans) {
        let id = plans as *const Plans as usize;
        if self.plans != id || self.msgs.len() != plans.messages.len() {
            self.msgs.clear();
            self.msgs.resize(plans.messages.len(), MsgInfo::default());
            self.slots.clear();
            self.expects.clear();
            self.plans = id;
        }
    }

    /// Message `mi`'s facts, built on first use.
    #[inline]
    pub fn info(&mut self, plans: &Plans, mi: u32) -> MsgInfo {
        let i = self.msgs[mi as usize];
        if i.built { i } else { self.build(plans, mi) }
    }

    #[cold]
    fn build(&mut self, plans: &Plans, mi: u32) -> MsgInfo {
        let m = &plans.messages[mi as usize];
        let small = m.fields.len() <= 64 && m.oneofs.len() <= 64;
        let required = if small { m.required.iter().fold(0u64, |r, &i| r | 1 << i) } else { 0 };
        let spellings = m.fields.iter().map(|f| 1 + usize::from(f.name != f.json_name)).sum::<usize>();
        // At most half full: probes stay short and always meet a free slot.
        let size = (2 * spellings).next_power_of_two().max(2);
        let mut info = MsgInfo {
            built: false,
            small,
            wkt: wkt::wkt_of(m),
            required,
            off: u32::try_from(self.slots.len()).expect("key tables under 4G slots"),
            eoff: u32::try_from(self.expects.len()).expect("expects under 4G"),
            mask: size as u32 - 1,
            shift: 64 - size.trailing_zeros(),
        };
        self.slots.resize(self.slots.len() + size, FREE);
        self.expects.extend(m.fields.iter().map(|f| Expect::of(f.json_name.as_bytes())));
        self.expects.push(Expect::default());
        for (fi, f) in m.fields.iter().enumerate() {
            self.insert(&info, m, f.json_name.as_bytes(), fi, false);
            if f.name != f.json_name {
                self.insert(&info, m, f.name.as_bytes(), fi, true);
            }
        }
        // Set only now: a table is complete before it is used.
        info.built = true;
        self.msgs[mi as usize] = info;
        info
    }

    /// Add `key` for field `fi`, unless an earlier field spells a key so
    /// (the first field keeps it).
    fn insert(&mut self, info: &MsgInfo, m: &MessagePlan, key: &[u8], fi: usize, proto: bool) {
        let k = KeyWords::of(key);
        let slots = &mut self.slots[info.off as usize..=(info.off + info.mask) as usize];
        let mut i = (hash(&k) >> info.shift) as usize;
        loop {
            let s = &mut slots[i & info.mask as usize];
            if s.len == EMPTY {
                let len = u32::try_from(k.len).expect("a field name under 4 GiB");
                *s = Slot { w0: k.w0, w1: k.w1, len, field: fi as u32, proto };
                return;
            }
            if s.len as usize == k.len && s.w0 == k.w0 && s.w1 == k.w1 && spelling(m, s) == key {
                return;
            }
            i += 1;
        }
    }

    /// How compact text spells field `fi`'s key (`fi` up to the number
    /// of fields: one past the last never matches).
    #[inline(always)]
    pub fn expect(&self, info: &MsgInfo, fi: usize) -> Option<&Expect> {
        self.expects.get(info.eoff as usize + fi)
    }

    /// [`ParseTables::find`] for a key of under eight bytes, `w0` (zero
    /// above them).
    #[inline(always)]
    pub fn find_short(&self, info: &MsgInfo, m: &MessagePlan, w0: u64, len: usize) -> Option<usize> {
        let k = KeyWords { w0, w1: 0, len };
        let i = (hash(&k) >> info.shift) as usize;
        let s = self.slots.get(info.off as usize + i)?;
        // A slot of a key under eight bytes has w1 0.
        if s.len as usize == len && s.w0 == w0 {
            return Some(s.field as usize);
        }
        if s.len == EMPTY {
            return None;
        }
        let slots = &self.slots[info.off as usize..=(info.off + info.mask) as usize];
        probe(slots, i + 1, info.mask as usize, m, &k, &[])
    }

    /// The field of the message of `info` (`m`) whose JSON or proto name
    /// is `key` (with words `k`).
    #[inline(always)]
    pub fn find(&self, info: &MsgInfo, m: &MessagePlan, k: &KeyWords, key: &[u8]) -> Option<usize> {
        let i = (hash(k) >> info.shift) as usize;
        let s = self.slots.get(info.off as usize + i)?;
        // Mostly the first slot holds the key.
        if s.len as usize == k.len && s.w0 == k.w0 && s.w1 == k.w1 && k.len <= 16 {
            return Some(s.field as usize);
        }
        if s.len == EMPTY {
            return None;
        }
        let slots = &self.slots[info.off as usize..=(info.off + info.mask) as usize];
        probe(slots, i, info.mask as usize, m, k, key)
    }
}

/// [`ParseTables::find`] past the first slot.
#[inline(never)]
fn probe(slots: &[Slot], mut i: usize, mask: usize, m: &MessagePlan, k: &KeyWords, key: &[u8]) -> Option<usize> {
    loop {
        let s = &slots[i & mask];
        if s.len as usize == k.len && s.w0 == k.w0 && s.w1 == k.w1 {
            if k.len <= 16 || spelling(m, s) == key {
                return Some(s.field as usize);
            }
        } else if s.len == EMPTY {
            return None;
        }
        i += 1;
    }
}

/// The key a slot stands for.
fn spelling<'m>(m: &'m MessagePlan, s: &Slot) -> &'m [u8] {
    let f = &m.fields[s.field as usize];
    if s.proto { f.name.as_bytes() } else { f.json_name.as_bytes() }
}
