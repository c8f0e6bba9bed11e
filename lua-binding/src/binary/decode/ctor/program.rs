//! The memoised tree as a program of expected fields (LuaJIT): the
//! signature a root type's tree constructor was made for (`tree_ctor`),
//! compiled to flat steps — "this field's tag, then its value", "a
//! sub-message of this tag", "the end of a message" — that the next decode
//! of the type runs first. Each step compares the tag bytes it expects
//! with the input and reads its value with the kind's own code, so that
//! a message of the memoised shape is walked without the tag lookup, the
//! duplicate and required checks, the signature bytes and their compare
//! of the signature walk: each of those is implied by the input following
//! a signature that passed them. Input that departs from the program at
//! any byte (another field, another array length, a packed field sent
//! unpacked, trailing bytes) stops it, with the stack left for the
//! signature walk to start over from the first byte.

use std::cell::{Cell, OnceCell};

use pbwire::{utf8, zigzag};

use crate::binary::decode::DecodeCtx;
use crate::binary::decode::scan::{eat_tag, slice_varint};
use crate::lua;
use crate::plan::{Card, Kind};

/// Most steps of a program: a signature byte makes at most one, and an
/// element of an array of messages one more (its `Sub`). A signature
/// needing more gets no program (the signature walk serves it).
pub const PROGRAM_MAX: usize = 512;
/// Decodes of its own signature a program may miss before it is dropped.
pub const PROGRAM_WASTED: u32 = 16;
/// Deepest nesting of sub-messages a program takes.
const PROGRAM_DEPTH: usize = 16;

/// What a step does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// The current message ends: no bytes left in it.
    End,
    /// A sub-message (its tag, then its length) starts.
    Sub,
    /// `count` elements, each its tag and a value (`count` 1 for a
    /// singular field).
    Leaf,
    /// One packed run (its tag, then its length) of exactly `count` values.
    Packed,
}

/// One step.
#[derive(Clone, Copy)]
struct Step {
    /// The tag's bytes as the field's encoder writes them (1 or 2).
    tag: [u8; 2],
    tag_len: u8,
    form: Form,
    kind: Kind,
    /// `string` validated as UTF-8 (when the decode options say so).
    utf8: bool,
    count: u8,
    /// The field, for the conversions that need its plan (enums).
    fi: u8,
    mi: u32,
}

const NO_STEP: Step =
    Step { tag: [0; 2], tag_len: 0, form: Form::End, kind: Kind::Bool, utf8: false, count: 0, fi: 0, mi: 0 };

/// A root type's program, next to its memoised signature.
///
/// Its steps are cells in a buffer allocated once (the first time a
/// program is made for the type) and never moved: a decode re-entered
/// from a string push (a finalizer) may rewrite them while an outer decode
/// is running them, which then sees the memo's generation changed after
/// that push and gives up.
#[derive(Default)]
pub struct Program {
    steps: OnceCell<Box<[Cell<Step>]>>,
    /// Steps in use; 0 for none (no program, or switched off).
    len: Cell<usize>,
    /// The signature's first byte (the metatables flag) it was made for.
    flag: Cell<u8>,
    /// Decodes of the memoised signature that the program missed.
    wasted: Cell<u32>,
    /// Every message of the signature holds its `required` fields (a
    /// decode without the check may have memoised one that does not).
    required_ok: Cell<bool>,
    /// The deepest message's depth (the root's is 1), for the decode's
    /// `max_depth`.
    depth: Cell<u32>,
}

impl Program {
    /// A decode of the memoised signature that the program did not
    /// follow (an empty packed run, the other encoding of a packed
    /// field): past [`PROGRAM_WASTED`] of them the program is dropped
    /// (until the memo changes), since running it first would only cost.
    pub fn missed_own_signature(&self) {
        self.wasted.set(self.wasted.get() + 1);
        if self.wasted.get() > PROGRAM_WASTED {
            self.len.set(0);
        }
    }

    /// Whether there is a program for a decode with metatables flag
    /// `flag` and the checks of `opts`: one whose signature that decode's
    /// own signature walk would accept.
    #[inline(always)]
    pub fn runs_for(&self, flag: u8, opts: &crate::plan::options::LoadOptions) -> bool {
        self.len.get() != 0
            && self.flag.get() == flag
            && self.depth.get() <= opts.max_depth
            && (self.required_ok.get() || !opts.check_required)
    }
}

/// A program being made from a signature.
struct Builder<'s> {
    sig: &'s [u8],
    /// Next signature byte.
    pos: usize,
    steps: &'s [Cell<Step>],
    /// Steps written.
    len: usize,
    /// What the signature asks of the decode options (see [`Program`]).
    required_ok: bool,
    depth: usize,
}

impl Builder<'_> {
    fn next_byte(&mut self) -> Option<u8> {
        let b = *self.sig.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn emit(&mut self, step: Step) -> Option<()> {
        self.steps.get(self.len)?.set(step);
        self.len += 1;
        Some(())
    }
}

// Signature forms, as `tree_ctor` writes them.
use crate::binary::decode::ctor::tree::{ARRAY, ARRAY_SUB, END, SCALAR, SUB};

impl DecodeCtx<'_> {
    /// Make `prog` the program of root `mi`'s signature `sig`, or clear it
    /// when a step cannot express the signature (a tag longer than two
    /// bytes, a deeper nesting).
    pub(crate) fn make_program(&self, mi: u32, sig: &[u8], prog: &Program) {
        let steps = prog.steps.get_or_init(|| (0..PROGRAM_MAX).map(|_| Cell::new(NO_STEP)).collect());
        let mut b = Builder { sig, pos: 1, steps, len: 0, required_ok: true, depth: 0 };
        let made = !sig.is_empty() && self.program_message(mi, &mut b, 0).is_some();
        prog.len.set(if made { b.len } else { 0 });
        prog.wasted.set(0);
        prog.required_ok.set(b.required_ok);
        prog.depth.set(b.depth as u32 + 1);
        prog.flag.set(sig.first().copied().unwrap_or(0));
    }

    /// The steps of the message (type `mi`, at `depth` below the root) at
    /// the builder's signature byte.
    fn program_message(&self, mi: u32, b: &mut Builder<'_>, depth: usize) -> Option<()> {
        let plan = &self.plans.messages[mi as usize];
        b.depth = b.depth.max(depth);
        let mut seen = 0u64;
        loop {
            let byte = b.next_byte()?;
            if byte == END {
                // As the signature walk's check.
                let all = plan.required_mask;
                b.required_ok &= plan.required.is_empty() || (all != 0 && seen & all == all);
                return b.emit(NO_STEP);
            }
            let fi = byte & 0x3F;
            seen |= 1 << fi;
            let f = plan.fields.get(usize::from(fi))?;
            let (bytes, tag_len) = f.tag.parts();
            if tag_len > 2 {
                return None;
            }
            let mut step = Step {
                tag: [bytes[0], bytes[1]],
                tag_len: tag_len as u8,
                form: Form::Leaf,
                kind: f.kind,
                utf8: f.utf8 && f.kind == Kind::String,
                count: 1,
                fi,
                mi,
            };
            match byte & 0xC0 {
                SCALAR => b.emit(step)?,
                SUB => {
                    if depth + 1 >= PROGRAM_DEPTH {
                        return None;
                    }
                    step.form = Form::Sub;
                    b.emit(step)?;
                    self.program_message(f.sub, b, depth + 1)?;
                }
                ARRAY => {
                    step.count = b.next_byte()?;
                    // The field's declared encoding (its tag in the plan
                    // says which): a sender that uses the other one departs
                    // from the program at the tag.
                    if f.card == Card::Repeated && f.packed && f.kind.is_packable() {
                        step.form = Form::Packed;
                    }
                    b.emit(step)?;
                }
                ARRAY_SUB => {
                    if depth + 1 >= PROGRAM_DEPTH {
                        return None;
                    }
                    step.form = Form::Sub;
                    for _ in 0..b.next_byte()? {
                        b.emit(step)?;
                        self.program_message(f.sub, b, depth + 1)?;
                    }
                }
                _ => unreachable!("two bits"),
            }
        }
    }

    /// Run `prog` on the whole input, pushing every leaf: `Some`
    /// when the input followed it to its last byte and no decode
    /// re-entered meanwhile changed the memo (`generation` still its
    /// value). On `None` the caller drops what was pushed.
    ///
    /// # Safety
    /// As `tree_root`: its stack reserve (the program's leaves are a
    /// signature's, at most `TREE_LEAVES`).
    pub(crate) unsafe fn run_program(&self, prog: &Program, generation: &Cell<u32>) -> Option<()> {
        let steps = prog.steps.get()?;
        let steps = steps.get(..prog.len.get())?;
        let gen0 = generation.get();
        let mut rest: &[u8] = self.input;
        let mut outer: [&[u8]; PROGRAM_DEPTH] = [&[]; PROGRAM_DEPTH];
        let mut depth = 0;
        for step in steps {
            let step = step.get();
            match step.form {
                Form::End => {
                    if !rest.is_empty() {
                        return None;
                    }
                    if depth == 0 {
                        return Some(());
                    }
                    depth -= 1;
                    rest = outer[depth];
                }
                Form::Sub => {
                    let (len, tail) = slice_varint(eat_step_tag(rest, &step)?)?;
                    let (body, after) = tail.split_at_checked(usize::try_from(len).ok()?)?;
                    *outer.get_mut(depth)? = after;
                    depth += 1;
                    rest = body;
                }
                Form::Leaf => {
                    // SAFETY: one free slot a leaf (caller's reserve).
                    rest = unsafe {
                        if step.tag_len == 1 {
                            self.program_values::<1>(&step, rest, generation, gen0)?
                        } else {
                            self.program_values::<2>(&step, rest, generation, gen0)?
                        }
                    };
                }
                Form::Packed => {
                    let (len, tail) = slice_varint(eat_step_tag(rest, &step)?)?;
                    let (run, after) = tail.split_at_checked(usize::try_from(len).ok()?)?;
                    // SAFETY: as above.
                    if !unsafe { self.program_values::<0>(&step, run, generation, gen0)? }.is_empty() {
                        return None;
                    }
                    rest = after;
                }
            }
        }
        None
    }

    /// `step.count` values of `step`'s kind from the front of `b`, each
    /// after the step's `TAG`-byte tag (none for 0), pushed: the bytes after them, or
    /// `None` when one is bad, a closed enum lacks it, or a push that can
    /// allocate let a decode change the memo (`generation` no longer
    /// `gen0`). The kind is matched once a step, each with its own loop.
    ///
    /// # Safety
    /// `step.count` free stack slots (one more for cdata).
    #[inline(always)]
    unsafe fn program_values<'b, const TAG: usize>(
        &self,
        step: &Step,
        b: &'b [u8],
        generation: &Cell<u32>,
        gen0: u32,
    ) -> Option<&'b [u8]> {
        let L = self.L;
        // SAFETY: (every arm) one free slot a value, the caller's contract.
        unsafe {
            match step.kind {
                Kind::String | Kind::Bytes => {
                    let check = step.utf8 && self.opts.utf8;
                    each_varint::<TAG>(b, step, |len, tail| {
                        let (bytes, tail) = tail.split_at_checked(usize::try_from(len).ok()?)?;
                        if check && utf8::validate_utf8(bytes, 0).is_err() {
                            return None;
                        }
                        lua::push_bytes(L, bytes);
                        (generation.get() == gen0).then_some(tail)
                    })
                }
                Kind::Int32 => each_varint::<TAG>(b, step, |v, tail| {
                    lua::push_small_int(L, i64::from(v as i32));
                    Some(tail)
                }),
                Kind::UInt32 => each_varint::<TAG>(b, step, |v, tail| {
                    lua::push_small_int(L, i64::from(v as u32));
                    Some(tail)
                }),
                Kind::SInt32 => each_varint::<TAG>(b, step, |v, tail| {
                    lua::push_small_int(L, i64::from(zigzag::decode_zigzag32(v as u32)));
                    Some(tail)
                }),
                Kind::Bool => each_varint::<TAG>(b, step, |v, tail| {
                    lua::push_bool(L, v != 0);
                    Some(tail)
                }),
                Kind::Int64 | Kind::UInt64 | Kind::SInt64 => {
                    let (signed, zz) = (step.kind != Kind::UInt64, step.kind == Kind::SInt64);
                    each_varint::<TAG>(b, step, |v, tail| {
                        self.push_64(if zz { zigzag::decode_zigzag64(v) as u64 } else { v }, signed);
                        (generation.get() == gen0).then_some(tail)
                    })
                }
                Kind::Enum => {
                    let f = &self.plans.messages[step.mi as usize].fields[usize::from(step.fi)];
                    let e = &self.plans.enums[f.sub as usize];
                    each_varint::<TAG>(b, step, |v, tail| {
                        if e.closed && e.name_key(v as i32).is_none() {
                            return None;
                        }
                        self.push_varint_as(Kind::Enum, f, v);
                        Some(tail)
                    })
                }
                Kind::Double => each_fixed::<TAG, 8>(b, step, |v, tail| {
                    lua::push_number(L, f64::from_le_bytes(v));
                    Some(tail)
                }),
                Kind::Float => each_fixed::<TAG, 4>(b, step, |v, tail| {
                    lua::push_number(L, f64::from(f32::from_le_bytes(v)));
                    Some(tail)
                }),
                Kind::Fixed32 => each_fixed::<TAG, 4>(b, step, |v, tail| {
                    lua::push_small_int(L, i64::from(u32::from_le_bytes(v)));
                    Some(tail)
                }),
                Kind::SFixed32 => each_fixed::<TAG, 4>(b, step, |v, tail| {
                    lua::push_small_int(L, i64::from(i32::from_le_bytes(v)));
                    Some(tail)
                }),
                Kind::Fixed64 | Kind::SFixed64 => {
                    let signed = step.kind == Kind::SFixed64;
                    each_fixed::<TAG, 8>(b, step, |v, tail| {
                        self.push_64(u64::from_le_bytes(v), signed);
                        (generation.get() == gen0).then_some(tail)
                    })
                }
                Kind::Message | Kind::Group => None,
            }
        }
    }
}

/// `step.count` varints from the front of `b` (each after the step's
/// `TAG`-byte tag), each handed to `value` with the bytes after it, which
/// returns where to go on.
#[inline(always)]
fn each_varint<'b, const TAG: usize>(
    mut b: &'b [u8],
    step: &Step,
    mut value: impl FnMut(u64, &'b [u8]) -> Option<&'b [u8]>,
) -> Option<&'b [u8]> {
    let tag = step.tag;
    for _ in 0..step.count {
        let (v, tail) = slice_varint(eat_tag::<TAG>(b, tag)?)?;
        b = value(v, tail)?;
    }
    Some(b)
}

/// `step.count` `N`-byte values from the front of `b` (each after the
/// step's `TAG`-byte tag), each handed to `value` with the bytes after
/// it, which returns where to go on.
#[inline(always)]
fn each_fixed<'b, const TAG: usize, const N: usize>(
    mut b: &'b [u8],
    step: &Step,
    mut value: impl FnMut([u8; N], &'b [u8]) -> Option<&'b [u8]>,
) -> Option<&'b [u8]> {
    let tag = step.tag;
    for _ in 0..step.count {
        let (v, tail) = eat_tag::<TAG>(b, tag)?.split_first_chunk::<N>()?;
        b = value(*v, tail)?;
    }
    Some(b)
}

/// `b` after `step`'s tag, or `None` when it does not start with it.
#[inline(always)]
fn eat_step_tag<'b>(b: &'b [u8], step: &Step) -> Option<&'b [u8]> {
    if step.tag_len == 1 { eat_tag::<1>(b, step.tag) } else { eat_tag::<2>(b, step.tag) }
}
