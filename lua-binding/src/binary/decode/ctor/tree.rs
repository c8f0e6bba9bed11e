//! Whole-message constructors (LuaJIT): a root message whose tree the walk
//! fully covers is decoded by pushing only its leaf values, recording the
//! tree's *signature* (each message's fields in wire order, sub-messages
//! nested, array lengths), and calling one generated Lua function of all
//! the leaves that builds every table of the tree in one expression:
//! `function(a1, …) return {["name"]=a1, ["tags"]={a2, a3}, ["inner"]={…}} end`.
//! LuaJIT runs a message table as one `TDUP` of a template holding its keys
//! and an array element as one `TSETB`, with one call for the whole tree,
//! where the per-message constructors (`shape_ctor`) pay a call per
//! message and a `lua_rawseti` per element (PERF_LOG: the tree
//! constructor floor).
//!
//! Only an input of at most [`TREE_INPUT`] bytes is tried. Anything the
//! signature does not cover (an unknown field, a field met
//! twice, a group, a map, a closed-enum value the enum lacks, a missing
//! required field, an array longer than [`TREE_ARRAY`], more than
//! [`TREE_LEAVES`] leaves, a bad value) leaves the stack as it was for the
//! general walk to decode from the start, which also reports any error.
//! The last signature per root message is memoised with its function; the
//! rest are cached in the constructor table under a string key. A message
//! type that keeps needing new signatures is switched off
//! ([`TREE_MISSES`]): its decodes would otherwise pay a walk twice.
//! The memoised signature is also made a program (`tree_program`) that
//! the next decode of the type runs first, without a signature.

use std::cell::{Cell, RefCell};
use std::mem::MaybeUninit;
use std::os::raw::c_int;

use pbwire::{Reader, WireType};

use crate::binary::decode::DecodeCtx;
use crate::binary::decode::scan::{same_tag_next, varint_run};
use crate::lua::{self, ffi};
use crate::plan::{Card, FieldPlan, Kind, PLAIN_REQUIRED};

/// Most leaf values of a tree (a Lua function has at most ~250 slots).
pub const TREE_LEAVES: usize = 180;
/// Longest array taken inline (a signature byte; the leaves cap it too).
pub const TREE_ARRAY: usize = TREE_LEAVES;
/// Longest input taken: a longer one would mostly give up past
/// [`TREE_LEAVES`] after a walk (Person 10KB: 250 strings), or hold long
/// strings whose copies outweigh what the tree saves.
pub const TREE_INPUT: usize = 2048;
/// Longest signature, in bytes.
const SIG_MAX: usize = 512;
/// Most misses (a walk that had to give up, or a signature compiled) for
/// one message type before it is switched off: past them its decodes would
/// mostly pay a walk twice, or a compile.
pub const TREE_MISSES: u32 = 16;

// Signature bytes: a field index (below 64) with its form in the top bits.
pub(crate) const SCALAR: u8 = 0x00;
pub(crate) const SUB: u8 = 0x40;
pub(crate) const ARRAY: u8 = 0x80;
pub(crate) const ARRAY_SUB: u8 = 0xC0;
/// The end of a message's fields.
pub(crate) const END: u8 = 0xFF;

/// Per message type: the last signature (its constructor is the
/// constructor table's `[-(mi + 1)]`) and its misses so far.
#[derive(Default)]
pub struct TreeMemo {
    sig: RefCell<Vec<u8>>,
    misses: Cell<u32>,
    /// Bumped whenever `sig` changes: a decode that pushed the memoised
    /// constructor before its walk trusts it only if no decode run
    /// meanwhile (a finalizer, a hook) memoised another.
    generation: Cell<u32>,
    /// `sig` as steps, run before the signature walk (`tree_program`).
    program: crate::binary::decode::ctor::program::Program,
}

/// The signature being recorded (`bytes[..len]` written).
struct Sig {
    bytes: [MaybeUninit<u8>; SIG_MAX],
    len: usize,
    leaves: usize,
}

impl Sig {
    #[inline(always)]
    fn push(&mut self, b: u8) -> Option<()> {
        self.bytes.get_mut(self.len)?.write(b);
        self.len += 1;
        Some(())
    }

    /// Overwrite byte `at` (written before).
    #[inline(always)]
    fn set(&mut self, at: usize, b: u8) {
        self.bytes[at].write(b);
    }

    /// The bytes recorded.
    #[inline(always)]
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: `bytes[..len]` were written by `push`.
        unsafe { std::slice::from_raw_parts(self.bytes.as_ptr().cast(), self.len) }
    }

    /// Count one leaf pushed.
    #[inline(always)]
    fn leaf(&mut self) -> Option<()> {
        self.leaves += 1;
        (self.leaves <= TREE_LEAVES).then_some(())
    }
}

impl DecodeCtx<'_> {
    /// Decode the root message `mi` through its tree's constructor: the
    /// table pushed, `true`; or `false` with the stack as it was.
    ///
    /// # Safety
    /// As `decode_root`'s general walk, with the constructor table at
    /// `self.ctors`.
    pub(crate) unsafe fn tree_root(&self, mi: u32) -> bool {
        let L = self.L;
        let memo = &self.tree[mi as usize];
        if memo.misses.get() > TREE_MISSES || self.input.len() > TREE_INPUT {
            return false;
        }
        // SAFETY: (whole body) the reserve covers the memoised constructor,
        // every leaf and a value's temporaries; raw API calls only.
        unsafe {
            if ffi::lua_checkstack(L, TREE_LEAVES as c_int + 24) == 0 {
                return false;
            }
            let top = ffi::lua_gettop(L);
            let generation = memo.generation.get();
            lua::push_rawgeti(L, self.ctors, -i64::from(mi) - 1);
            // The metatables are part of the constructor: a flag first.
            let flag = u8::from(self.map_mt != 0);
            // The memoised shape again: its program, without a signature.
            let predicted = self.opts.strategies.tree_program
                && memo.program.runs_for(flag, &self.opts)
                && ffi::lua_type(L, top + 1) == ffi::LUA_TFUNCTION;
            if predicted {
                if self.run_program(&memo.program, &memo.generation).is_some() {
                    ffi::lua_call(L, ffi::lua_gettop(L) - top - 1, 1);
                    return true;
                }
                ffi::lua_settop(L, top + 1);
            }
            let mut sig = Sig { bytes: [MaybeUninit::uninit(); SIG_MAX], len: 0, leaves: 0 };
            let walked = sig.push(flag).and_then(|()| self.tree_message(mi, &mut Reader::new(self.input), 1, &mut sig));
            if walked.is_none() {
                memo.misses.set(memo.misses.get() + 1);
                ffi::lua_settop(L, top);
                let _ = self.err.take();
                return false;
            }
            let sig = sig.as_bytes();
            let hit = ffi::lua_type(L, top + 1) == ffi::LUA_TFUNCTION
                && memo.generation.get() == generation
                && *memo.sig.borrow() == sig;
            if hit && predicted {
                memo.program.missed_own_signature();
            }
            if !hit {
                if !self.find_tree_ctor(mi, sig, top + 1) {
                    ffi::lua_settop(L, top);
                    return false;
                }
                // Into the memo's own buffer: no allocation once it has
                // held a signature this long (decodes alternating between
                // cached trees land here every time).
                let mut m = memo.sig.borrow_mut();
                m.clear();
                m.extend_from_slice(sig);
                drop(m);
                self.make_program(mi, sig, &memo.program);
                memo.generation.set(memo.generation.get().wrapping_add(1));
            }
            ffi::lua_call(L, (ffi::lua_gettop(L) - top - 1) as c_int, 1);
        }
        true
    }

    /// Message `mi`'s fields from `r`: leaves pushed, signature recorded.
    ///
    /// # Safety
    /// As [`Self::tree_root`].
    unsafe fn tree_message(&self, mi: u32, r: &mut Reader<'_>, depth: u32, sig: &mut Sig) -> Option<()> {
        if depth > self.opts.max_depth {
            return None;
        }
        let plan = &self.plans.messages[mi as usize];
        if !plan.by_ctor {
            return None;
        }
        let mut seen = 0u64;
        while let Some(&b0) = r.rest().first() {
            // A plain field (one-byte tag, its own wire type, singular, not
            // a message or closed enum): its value at once.
            let plain = plan.plain_by_tag.get(usize::from(b0)).copied().unwrap_or(0);
            if plain != 0 {
                let fi = usize::from(plain & !PLAIN_REQUIRED) - 1;
                let bit = 1u64 << fi;
                if seen & bit != 0 {
                    return None;
                }
                seen |= bit;
                let _ = r.advance(1);
                sig.leaf()?;
                let f = &plan.fields[fi];
                // SAFETY: one free slot a leaf, reserved by `tree_root`.
                unsafe { self.value(f, r, depth, f.number).ok()? };
                sig.push(SCALAR | fi as u8)?;
                continue;
            }
            let tag = r.read_tag().ok()?;
            let fi = plan.field_index(tag.field_number())?;
            let f = &plan.fields[fi];
            let bit = 1u64 << fi;
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            let wt = tag.wire_type();
            let closed = f.kind == Kind::Enum && self.plans.enums[f.sub as usize].closed;
            let fi = fi as u8;
            // SAFETY: one free slot a leaf, reserved by `tree_root`.
            unsafe {
                match (f.card, f.kind) {
                    (Card::Map, _) | (_, Kind::Group) => return None,
                    (Card::Single, Kind::Message) => {
                        if wt != WireType::Len {
                            return None;
                        }
                        let mut sub = r.read_len_reader().ok()?;
                        sig.push(SUB | fi)?;
                        self.tree_message(f.sub, &mut sub, depth + 1, sig)?;
                    }
                    (Card::Single, _) => {
                        if wt != f.kind.wire_type() || (closed && self.closed_miss(f, r).ok()?) {
                            return None;
                        }
                        sig.leaf()?;
                        self.value(f, r, depth, f.number).ok()?;
                        sig.push(SCALAR | fi)?;
                    }
                    (Card::Repeated, Kind::Message) => {
                        if wt != WireType::Len {
                            return None;
                        }
                        sig.push(ARRAY_SUB | fi)?;
                        let at = sig.len;
                        sig.push(0)?;
                        let mut n = 0;
                        loop {
                            let mut sub = r.read_len_reader().ok()?;
                            self.tree_message(f.sub, &mut sub, depth + 1, sig)?;
                            n += 1;
                            if n > TREE_ARRAY || !same_tag_next(r, tag.raw()) {
                                break;
                            }
                        }
                        if n > TREE_ARRAY {
                            return None;
                        }
                        sig.set(at, n as u8);
                    }
                    (Card::Repeated, _) if wt == WireType::Len && f.kind.is_packable() => {
                        if closed {
                            return None;
                        }
                        self.tree_packed(f, fi, r, depth, sig)?;
                    }
                    (Card::Repeated, _) => {
                        if wt != f.kind.wire_type() {
                            return None;
                        }
                        let mut n = 0;
                        loop {
                            if closed && self.closed_miss(f, r).ok()? {
                                return None;
                            }
                            n += 1;
                            if n > TREE_ARRAY {
                                return None;
                            }
                            sig.leaf()?;
                            self.value(f, r, depth, f.number).ok()?;
                            if !same_tag_next(r, tag.raw()) {
                                break;
                            }
                        }
                        sig.push(ARRAY | fi)?;
                        sig.push(n as u8)?;
                    }
                }
            }
        }
        let all = plan.required_mask;
        if self.opts.check_required && !plan.required.is_empty() && (all == 0 || seen & all != all) {
            return None;
        }
        sig.push(END)
    }

    /// A packed run of repeated field `fi` (its tag read): leaves pushed,
    /// signature recorded.
    ///
    /// # Safety
    /// As [`Self::tree_root`].
    #[inline(always)]
    unsafe fn tree_packed(&self, f: &FieldPlan, fi: u8, r: &mut Reader<'_>, depth: u32, sig: &mut Sig) -> Option<()> {
        // SAFETY: one free slot a leaf, reserved by `tree_root`.
        unsafe {
            let run = r.read_len_bytes().ok()?;
            if run.is_empty() {
                // No element: the field stays absent (met again,
                // the general walk takes it).
                return Some(());
            }
            let mut n = 0;
            if f.kind.wire_type() == WireType::Varint {
                // Counted first, so that the loop pushes
                // within the reserve without a check a value;
                // then read off the bytes by the scanning layer's
                // `varint_run`, the kind's conversion chosen once; all
                // `n` read when it reads the whole run.
                n = pbwire::packed::count_packed_varints(run);
                if n > TREE_ARRAY || sig.leaves + n > TREE_LEAVES {
                    return None;
                }
                sig.leaves += n;
                let rest = match f.kind {
                    Kind::Int32 => varint_run::<0>(run, [0; 2], |v| {
                        self.push_varint_as(Kind::Int32, f, v);
                        true
                    }),
                    Kind::UInt32 => varint_run::<0>(run, [0; 2], |v| {
                        self.push_varint_as(Kind::UInt32, f, v);
                        true
                    }),
                    Kind::SInt32 => varint_run::<0>(run, [0; 2], |v| {
                        self.push_varint_as(Kind::SInt32, f, v);
                        true
                    }),
                    Kind::Bool => varint_run::<0>(run, [0; 2], |v| {
                        self.push_varint_as(Kind::Bool, f, v);
                        true
                    }),
                    _ => varint_run::<0>(run, [0; 2], |v| {
                        self.push_varint(f, v);
                        true
                    }),
                };
                if !rest.is_empty() {
                    return None;
                }
            } else {
                let mut sub = Reader::with_offset(run, r.position() - run.len());
                while !sub.is_empty() {
                    n += 1;
                    if n > TREE_ARRAY {
                        return None;
                    }
                    sig.leaf()?;
                    self.value(f, &mut sub, depth, f.number).ok()?;
                }
            }
            sig.push(ARRAY | fi)?;
            sig.push(n as u8)?;
        }
        Some(())
    }

    /// The constructor of signature `sig` of root `mi` into slot `slot`
    /// (from the cache, else compiled and cached) and memoised; `false`
    /// when there is none (compiling failed, or `mi` is switched off).
    ///
    /// # Safety
    /// As [`Self::tree_root`]; `slot` the memo's slot below the leaves.
    unsafe fn find_tree_ctor(&self, mi: u32, sig: &[u8], slot: c_int) -> bool {
        let L = self.L;
        let memo = &self.tree[mi as usize];
        // SAFETY: a few slots above the leaves, within `tree_root`'s reserve;
        // no Rust heap is alive across a call that can raise (the key is on
        // the C stack, the source is dropped once loaded).
        unsafe {
            let mut key = [0u8; 8 + SIG_MAX];
            key[..4].copy_from_slice(&[0xFF; 4]);
            key[4..8].copy_from_slice(&mi.to_le_bytes());
            key[8..8 + sig.len()].copy_from_slice(sig);
            lua::push_bytes(L, &key[..8 + sig.len()]);
            let k = ffi::lua_gettop(L);
            ffi::lua_pushvalue(L, k);
            if lua::rawget(L, self.ctors) != ffi::LUA_TFUNCTION {
                ffi::lua_pop(L, 1);
                memo.misses.set(memo.misses.get() + 1);
                if memo.misses.get() > TREE_MISSES {
                    ffi::lua_settop(L, k - 1);
                    return false;
                }
                let source = || {
                    let mut expr = String::new();
                    let (mut pos, mut args) = (1, 0);
                    if !self.tree_expr(mi, sig, &mut pos, &mut args, &mut expr) {
                        return None;
                    }
                    let names: Vec<String> = (1..=args).map(|i| format!("a{i}")).collect();
                    Some(
                        format!(
                            "local smt, MT, ST = setmetatable, ... return function({}) return {expr} end",
                            names.join(",")
                        )
                        .into_bytes(),
                    )
                };
                if !crate::binary::decode::ctor::shape::compile_source_and_cache(
                    L,
                    self.ctors,
                    k,
                    crate::binary::decode::ctor::shape::MAX_MESSAGE_SHAPES,
                    source,
                    &[self.map_mt, self.seq_mt],
                ) {
                    ffi::lua_settop(L, k - 1);
                    return false;
                }
            }
            // The constructor on top: memoised, and into `slot`.
            ffi::lua_pushvalue(L, -1);
            lua::rawseti(L, self.ctors, -i64::from(mi) - 1);
            ffi::lua_replace(L, slot);
            ffi::lua_settop(L, k - 1);
        }
        true
    }

    /// The Lua expression building the message at `sig[*pos..]` (type
    /// `mi`), its leaves `a(*args + 1)…`; `false` for a key that is not a
    /// string.
    fn tree_expr(&self, mi: u32, sig: &[u8], pos: &mut usize, args: &mut usize, out: &mut String) -> bool {
        let plan = &self.plans.messages[mi as usize];
        let mt = self.map_mt != 0;
        out.push_str(if mt { "smt({" } else { "{" });
        loop {
            let b = sig[*pos];
            *pos += 1;
            if b == END {
                break;
            }
            let f = &plan.fields[usize::from(b & 0x3F)];
            // SAFETY: the key table is at `self.keys`; one slot, popped.
            let key_ok = unsafe {
                let ok = lua::rawgeti(self.L, self.keys, i64::from(f.key_id)) == ffi::LUA_TSTRING;
                if ok {
                    out.push_str("[\"");
                    for &byte in lua::string_bytes(self.L, -1) {
                        out.push_str(&format!("\\{byte:03}"));
                    }
                    out.push_str("\"]=");
                }
                ffi::lua_pop(self.L, 1);
                ok
            };
            if !key_ok {
                return false;
            }
            match b & 0xC0 {
                SCALAR => {
                    *args += 1;
                    out.push_str(&format!("a{args}"));
                }
                SUB => {
                    if !self.tree_expr(f.sub, sig, pos, args, out) {
                        return false;
                    }
                }
                form => {
                    let n = sig[*pos];
                    *pos += 1;
                    out.push_str(if self.seq_mt != 0 { "smt({" } else { "{" });
                    for _ in 0..n {
                        if form == ARRAY {
                            *args += 1;
                            out.push_str(&format!("a{args}"));
                        } else if !self.tree_expr(f.sub, sig, pos, args, out) {
                            return false;
                        }
                        out.push(',');
                    }
                    out.push_str(if self.seq_mt != 0 { "}, ST)" } else { "}" });
                }
            }
            out.push(',');
        }
        out.push_str(if mt { "}, MT)" } else { "}" });
        true
    }
}
