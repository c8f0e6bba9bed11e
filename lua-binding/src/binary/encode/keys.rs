//! Key string → field, by address: the lookup of encode's table walk.
//!
//! Field names are interned in the schema's key table. Lua interns short
//! strings (LuaJIT every string, Lua 5.4 those up to 40 bytes), so the key
//! of a user's table that names a field is the very string object in the
//! key table, and its address ([`crate::lua::string_id`]: the object on
//! LuaJIT and 5.4, the bytes on 5.1) identifies it. Each message gets a
//! small open-addressing table from that pointer to the field index: one
//! multiply and usually one probe. A key that misses there (not a field of
//! this message, or a Lua 5.4 long string, which is not interned) is then
//! looked up by its bytes, a binary search over the names.
//!
//! The pointers stay valid for the schema's life: the key table anchors the
//! strings, and neither LuaJIT's nor Lua 5.4's collector moves objects.
//!
//! The index also keeps, per message, how many fields the last encode
//! found set and, decided from it, whether the next encode walks the
//! table ([`KeyIndex::walks`]); encode picks its strategy from it, and
//! the layout of a fetch's results ([`KeyIndex::fetch_len`],
//! [`KeyIndex::nested`]): which singular sub-messages a message's fetch
//! (LuaJIT, strict keys) reads one level into.

use std::cell::Cell;

use crate::plan::{Card, Kind, MessagePlan, Plans};

/// A fetch reads into a singular sub-message field's table when that
/// message has at most this many declared fields...
pub const NEST_MAX_FIELDS: usize = 16;

/// ...and while its results (key count, values, then per nested field
/// its key count and values) stay within this many.
pub const FETCH_MAX_RESULTS: usize = 96;

/// Per-schema lookup from key-string address to field index.
pub struct KeyIndex {
    messages: Box<[MessageKeys]>,
}

/// One message's part of a [`KeyIndex`] ([`KeyIndex::message`]).
pub struct MessageKeys {
    /// `(address, field index)`; address 0 is an empty slot. Length is a
    /// power of two, at least twice the field count.
    slots: Box<[(usize, u16)]>,
    /// `64 - log2(slots.len())`: the hash keeps the top bits.
    shift: u32,
    /// Field indices sorted by Lua key bytes (the by-bytes fallback).
    by_name: Box<[u16]>,
    /// Each field's Lua key when some differs from its name (extensions
    /// under `ext_keys = 'short'`); empty otherwise.
    keys: Box<[Box<str>]>,
    /// Fields found set by the last encode of this message.
    present: Cell<u16>,
    /// Whether the next encode of this message walks its table (decided
    /// from `present` when it is recorded: see [`KeyIndex::set_hint`]).
    walk: Cell<bool>,
    /// How many results this message's fetch returns.
    fetch_len: u16,
    /// Per field: 1 + the offset past the fetched values of its nested
    /// key count (its values follow), or 0 when not nested.
    nested: Box<[u16]>,
}

impl KeyIndex {
    /// Build the index. `key_addr[id - 1]` is the data address of key
    /// string `id` as it sits in the schema's key table.
    pub fn new(plans: &Plans, key_addr: &[usize]) -> KeyIndex {
        let messages = plans.messages.iter().map(|m| MessageKeys::new(plans, m, key_addr)).collect();
        KeyIndex { messages }
    }

    /// How many results a fetch of message `mi` returns: its key count,
    /// a value per declared field, then the nested fields' (see
    /// [`Self::nested`]).
    #[inline(always)]
    pub fn fetch_len(&self, mi: u32) -> usize {
        self.messages[mi as usize].fetch_len as usize
    }

    /// For field `fi` of message `mi`, a singular sub-message whose key
    /// count and values the fetch of `mi` also returns: the offset of that
    /// count past the last field value (the sub-message's values follow
    /// it, in its field order). `None` for other fields.
    #[inline(always)]
    pub fn nested(&self, mi: u32, fi: usize) -> Option<usize> {
        let n = self.messages[mi as usize].nested[fi];
        (n != 0).then(|| n as usize - 1)
    }

    /// The field of message `mi` named by the key string at `addr` with
    /// bytes `bytes`, if any.
    #[inline(always)]
    pub fn field(&self, mi: u32, plan: &MessagePlan, addr: usize, bytes: &[u8]) -> Option<usize> {
        self.messages[mi as usize].field(plan, addr, bytes)
    }

    /// Message `mi`'s keys, for a walk's repeated lookups.
    #[inline(always)]
    pub fn message(&self, mi: u32) -> &MessageKeys {
        &self.messages[mi as usize]
    }

    /// How many fields the last encode of message `mi` found set
    /// (`u16::MAX` before the first).
    #[cfg(test)]
    pub fn hint(&self, mi: u32) -> u16 {
        self.messages[mi as usize].present.get()
    }

    /// Whether the next encode of message `mi` walks its table: the `walk`
    /// its last encode recorded (`false` before the first).
    #[inline(always)]
    pub fn walks(&self, mi: u32) -> bool {
        self.messages[mi as usize].walk.get()
    }

    /// Record how many fields this encode of message `mi` found set
    /// (clamped below `u16::MAX`), and whether the next encode walks
    /// (the caller decides it from the clamped count: [`KeyIndex::clamp_hint`]).
    #[inline(always)]
    pub fn set_hint(&self, mi: u32, present: usize, walk: bool) {
        let m = &self.messages[mi as usize];
        m.present.set(Self::clamp_hint(present) as u16);
        m.walk.set(walk);
    }

    /// The count [`KeyIndex::set_hint`] records for `present` set fields.
    #[inline(always)]
    pub fn clamp_hint(present: usize) -> usize {
        present.min(u16::MAX as usize - 1)
    }
}

impl MessageKeys {
    /// The field whose key string is the object at `addr` (not 0), if any.
    #[inline(always)]
    pub fn by_address(&self, addr: usize) -> Option<usize> {
        // 0 marks an empty slot: it would match one and name field 0.
        // `lua::string_id` is never 0 on the Luas this builds for; a Lua
        // whose `lua_topointer` gives strings none (5.1, 5.2, 5.3) must
        // take its bytes branch.
        debug_assert_ne!(addr, 0, "string address 0");
        let mask = self.slots.len() - 1;
        let mut i = hash(addr, self.shift);
        loop {
            let (a, fi) = self.slots[i & mask];
            if a == addr {
                return Some(fi as usize);
            }
            if a == 0 {
                return None;
            }
            i += 1;
        }
    }

    /// The field of this message (`plan`) named by the key string at
    /// `addr` with bytes `bytes`, if any: by address, then by name.
    #[inline(always)]
    pub fn field(&self, plan: &MessagePlan, addr: usize, bytes: &[u8]) -> Option<usize> {
        self.by_address(addr).or_else(|| self.by_bytes(plan, bytes))
    }

    fn new(plans: &Plans, plan: &MessagePlan, key_addr: &[usize]) -> MessageKeys {
        let len = (plan.fields.len() * 2).next_power_of_two().max(4);
        let shift = 64 - len.trailing_zeros();
        let mut slots = vec![(0usize, 0u16); len].into_boxed_slice();
        for (fi, f) in plan.fields.iter().enumerate() {
            let addr = key_addr[f.key_id as usize - 1];
            let mut i = hash(addr, shift);
            while slots[i].0 != 0 {
                i = (i + 1) & (len - 1);
            }
            slots[i] = (addr, fi as u16);
        }
        let keys: Box<[Box<str>]> = if plan.fields.iter().all(|f| plans.key_of(f) == &*f.name) {
            Box::new([])
        } else {
            plan.fields.iter().map(|f| plans.key_of(f).into()).collect()
        };
        let mut by_name: Vec<u16> = (0..plan.fields.len() as u16).collect();
        let name = |fi: u16| if keys.is_empty() { &plan.fields[fi as usize].name } else { &keys[fi as usize] };
        by_name.sort_unstable_by(|&a, &b| name(a).cmp(name(b)));
        // The fetch layout: nested fields in field order, while they fit.
        let mut len = 1 + plan.fields.len();
        let mut nested = vec![0u16; plan.fields.len()];
        for (fi, f) in plan.fields.iter().enumerate() {
            if f.card != Card::Single || !matches!(f.kind, Kind::Message | Kind::Group) {
                continue;
            }
            let sub = plans.messages[f.sub as usize].fields.len();
            if (1..=NEST_MAX_FIELDS).contains(&sub) && len + 1 + sub <= FETCH_MAX_RESULTS {
                nested[fi] = (len - plan.fields.len()) as u16;
                len += 1 + sub;
            }
        }
        MessageKeys {
            slots,
            shift,
            by_name: by_name.into_boxed_slice(),
            keys,
            present: Cell::new(u16::MAX),
            walk: Cell::new(false),
            fetch_len: len.min(u16::MAX as usize) as u16,
            nested: nested.into_boxed_slice(),
        }
    }

    /// The field named `bytes`, if any.
    #[cold]
    pub fn by_bytes(&self, plan: &MessagePlan, bytes: &[u8]) -> Option<usize> {
        let name =
            |fi: u16| if self.keys.is_empty() { &plan.fields[fi as usize].name } else { &self.keys[fi as usize] };
        self.by_name.binary_search_by(|&fi| name(fi).as_bytes().cmp(bytes)).ok().map(|i| self.by_name[i] as usize)
    }
}

/// Fibonacci hashing of an address: the multiply spreads the low bits
/// (allocation alignment leaves the lowest ones zero) into the top ones.
#[inline(always)]
fn hash(addr: usize, shift: u32) -> usize {
    ((addr as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Card, DefaultValue, FieldPlan, Kind, NO_ONEOF};

    fn field(name: &str, key_id: i32) -> FieldPlan {
        FieldPlan {
            number: key_id as u32,
            default: DefaultValue::None,
            kind: Kind::Int32,
            card: Card::Single,
            packed: false,
            utf8: false,
            required: false,
            implicit: true,
            skip_zero: true,
            key_id,
            sub: 0,
            tag: pbwire::Tag::new(key_id as u32, pbwire::WireType::Varint).unwrap().encode(),
            oneof: NO_ONEOF,
            slot: 0,
            name: name.into(),
            json_name: name.into(),
            plain_wire: crate::plan::NOT_PLAIN,
        }
    }

    fn plans(names: &[&str]) -> Plans {
        let fields: Vec<FieldPlan> = names.iter().enumerate().map(|(i, n)| field(n, i as i32 + 1)).collect();
        Plans {
            messages: vec![MessagePlan {
                full_name: "t.M".into(),
                fields: fields.into_boxed_slice(),
                dense: Box::new([]),
                oneofs: Box::new([]),
                n_slots: 0,
                is_map_entry: false,
                required: Box::new([]),
                required_mask: 0,
                plain_by_tag: Box::new([]),
                plain_by_number: Box::new([]),
                lean: false,
                by_ctor: false,
                reserved_names: Box::new([]),
            }],
            enums: vec![],
            keys: names.iter().map(|&n| n.into()).collect(),
            hash_int64: false,
        }
    }

    #[test]
    fn finds_every_field_by_address_and_falls_back_to_bytes() {
        let names = ["id", "name", "a_much_longer_field_name_than_forty_bytes_is_long", "z"];
        let p = plans(&names);
        // Distinct, 16-aligned fake addresses, as an allocator would give.
        let addrs: Vec<usize> = (0..names.len()).map(|i| 0x7f00_0000_0000 + i * 48).collect();
        let idx = KeyIndex::new(&p, &addrs);
        let m = &p.messages[0];
        for (i, n) in names.iter().enumerate() {
            assert_eq!(idx.field(0, m, addrs[i], n.as_bytes()), Some(i));
            // Same bytes at another address (a Lua 5.4 long string).
            assert_eq!(idx.field(0, m, 0x1234_5670, n.as_bytes()), Some(i));
        }
        assert_eq!(idx.field(0, m, 0x1234_5670, b"nope"), None);
        assert_eq!(idx.field(0, m, 0x1234_5670, b""), None);
    }

    #[test]
    fn fetch_layout_nests_small_singular_sub_messages_in_field_order() {
        // M: a (int32), b (message S), c (repeated S), d (message S), e (message Big);
        // S has 3 fields, Big 17.
        let mut p = plans(&["a", "b", "c", "d", "e"]);
        let sub = |mut f: FieldPlan, sub: u32, card: Card| {
            f.kind = Kind::Message;
            f.sub = sub;
            f.card = card;
            f
        };
        let mut fields = p.messages[0].fields.to_vec();
        fields[1] = sub(fields[1].clone(), 1, Card::Single);
        fields[2] = sub(fields[2].clone(), 1, Card::Repeated);
        fields[3] = sub(fields[3].clone(), 1, Card::Single);
        fields[4] = sub(fields[4].clone(), 2, Card::Single);
        p.messages[0].fields = fields.into_boxed_slice();
        let s = plans(&["x", "y", "z"]).messages.remove(0);
        let names: Vec<String> = (0..17).map(|i| format!("f{i}")).collect();
        let big = plans(&names.iter().map(String::as_str).collect::<Vec<_>>()).messages.remove(0);
        p.messages.push(s);
        p.messages.push(big);
        let addrs: Vec<usize> = (0..32).map(|i| 0x7f00_0000_0000 + i * 48).collect();
        let idx = KeyIndex::new(&p, &addrs);
        // count + 5 values, then b's count and 3 values, then d's.
        assert_eq!(idx.fetch_len(0), 1 + 5 + 4 + 4);
        assert_eq!(idx.nested(0, 0), None);
        assert_eq!(idx.nested(0, 1), Some(0));
        assert_eq!(idx.nested(0, 2), None, "repeated");
        assert_eq!(idx.nested(0, 3), Some(4));
        assert_eq!(idx.nested(0, 4), None, "more than NEST_MAX_FIELDS fields");
        assert_eq!(idx.fetch_len(1), 4);
        assert_eq!(idx.fetch_len(2), 18);
    }

    #[test]
    fn hint_starts_unknown_and_keeps_the_last_count() {
        let p = plans(&["a"]);
        let idx = KeyIndex::new(&p, &[0x1000]);
        assert_eq!(idx.hint(0), u16::MAX);
        assert!(!idx.walks(0));
        idx.set_hint(0, 3, true);
        assert_eq!(idx.hint(0), 3);
        assert!(idx.walks(0));
        idx.set_hint(0, 1 << 20, false);
        assert_eq!(idx.hint(0), u16::MAX - 1);
        assert!(!idx.walks(0));
    }
}
