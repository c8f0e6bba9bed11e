//! The general walk: one frame per message, each field dispatched by its
//! tag to the value, run, container and extras modules. It recurses for
//! sub-messages through `DecodeCtx::decode_message` (`mod.rs`), the only place a
//! strategy is chosen.

use super::*;

impl<'a> DecodeCtx<'a> {
    /// Decode one message body and push (or, with `merge`, fill the table
    /// already on top). `group` is the field number whose END_GROUP ends it.
    ///
    /// `LEAN` (only for a plan with `lean` set: no oneofs, no maps, at most
    /// `LEAN_FIELDS` fields) drops the code for oneofs and maps and sizes
    /// the table from the field count instead of scanning the body: the
    /// same result, in a smaller frame for small sub-messages.
    ///
    /// # Safety
    /// `L` valid with 2 free slots (the table, its metatable; the frame
    /// reserves the rest); `keys`, `helpers`, `seq_mt`/`map_mt` and `ctors` as
    /// [`Self::decode_root`] leaves them; with `merge`, the table to fill on
    /// top. May raise on out-of-memory: frames hold only borrows.
    pub(in crate::binary::decode) unsafe fn walk_body<const LEAN: bool>(
        &self,
        mi: u32,
        r: &mut Reader<'_>,
        depth: u32,
        group: Option<u32>,
        merge: bool,
    ) -> WalkResult {
        let L = self.L;
        let plan: &MessagePlan = &self.plans.messages[mi as usize];
        debug_assert!(!LEAN || plan.lean);
        if depth > self.opts.max_depth {
            return Err(self.err.set(CodecError::new(ErrorKind::DepthLimit(self.opts.max_depth), Some(r.position()))));
        }
        // SAFETY: (whole body) every stack index used is `t`, its container
        // and accumulator slots, or temporaries, reserved by lua_checkstack below
        // (the table and its metatable fit in the 9 spare slots the caller
        // reserved, or the 20 a C function starts with); `t` holds a table;
        // raw API calls run no metamethods.
        unsafe {
            if !merge {
                // Lean: every field gets a slot (at most `LEAN_FIELDS`),
                // bounded like `presize`'s estimate for a long body.
                let presize = if LEAN { plan.fields.len().min(r.remaining() / 2) } else { presize(plan, r) };
                ffi::lua_createtable(L, 0, presize as c_int);
                if self.map_mt != 0 {
                    self.set_mt(-1, self.map_mt);
                }
            }
            // Reserve only now: a GC step inside lua_createtable may shrink
            // LuaJIT's stack down to its top, dropping an earlier reservation.
            if ffi::lua_checkstack(L, 2 + 9) == 0 {
                return Err(self.err.set(CodecError::new(ErrorKind::StackOverflow, Some(r.position()))));
            }
            let t = ffi::lua_gettop(L);
            // Slots: t+1 the current repeated/map container, t+2 the
            // unknown-field accumulator, taken at the first repeated, map
            // or unknown field (the first container is created straight
            // into t+1, then t+2 is set to nil; see `switch_container`): a
            // message with none of them pays no lua_settop, neither here
            // nor at the end.
            let acc = t + 2;
            let mut run = UnknownRun::default();
            let mut seen_required = 0u64;
            // Singular message fields below 64 seen so far (see `first_sub`).
            let mut seen_sub = 0u64;
            let mut cs = Containers { slot: t + 1, field: usize::MAX, counts: [0; TRACKED_SLOTS], merge, taken: false };
            let mut oneof_cur = [0u16; TRACKED_ONEOFS];
            if merge {
                self.count_existing(plan, t, &mut cs);
                oneof_cur = [u16::MAX; TRACKED_ONEOFS];
            }
            let mut ended = group.is_none();
            while let Some(&b0) = r.rest().first() {
                // A one-byte tag of a plain field with its own wire type
                // (`MessagePlan::plain_by_tag`): straight to the store below.
                let plain = plan.plain_by_tag.get(usize::from(b0)).copied().unwrap_or(0);
                let fi = if plain != 0 {
                    let _ = r.advance(1);
                    let fi = usize::from(plain & !PLAIN_REQUIRED) - 1;
                    // The required bit (`PLAIN_REQUIRED`, bit 15) without a
                    // branch or a range check:
                    // `fi` < 15 (a one-byte tag names a field numbered
                    // below 16, and fields are sorted by number), so the
                    // mask changes nothing; it only keeps the shift in range.
                    seen_required |= u64::from(plain >> 15) << (fi & 63);
                    fi
                } else {
                    let tag_at = r.position();
                    let tag = r.read_tag().map_err(|e| self.err.set(CodecError::wire(e)))?;
                    let number = tag.field_number();
                    let wt = tag.wire_type();
                    if wt == WireType::EndGroup {
                        if group == Some(number) {
                            ended = true;
                            break;
                        }
                        return Err(self.end_group_error(group, tag, r));
                    }
                    let Some(fi) = plan.field_index(number) else {
                        take_slots(L, &mut cs.taken, acc);
                        self.skip_unknown(r, tag, depth, tag_at, &mut run, acc)?;
                        continue;
                    };
                    let f = &plan.fields[fi];
                    match f.card {
                        Card::Single => {
                            // A plain field (see `FieldPlan::plain_wire`) with its
                            // own wire type needs none of these checks.
                            if f.plain_wire != wt as u8
                                && !self.single_checked::<LEAN>(
                                    mi,
                                    fi,
                                    f,
                                    r,
                                    tag,
                                    tag_at,
                                    depth,
                                    t,
                                    merge,
                                    &mut cs,
                                    &mut run,
                                    acc,
                                    &mut seen_required,
                                    &mut seen_sub,
                                    &mut oneof_cur,
                                )?
                            {
                                continue;
                            }
                            fi
                        }
                        Card::Repeated => {
                            self.repeated_field(mi, fi, f, r, tag, tag_at, depth, t, &mut cs, &mut run, acc)?;
                            continue;
                        }
                        Card::Map if LEAN => {
                            // SAFETY: a lean plan has no map field (`plan::is_lean`).
                            core::hint::unreachable_unchecked()
                        }
                        Card::Map => {
                            self.map_field(mi, fi, f, r, tag, tag_at, depth, t, &mut cs, &mut run, acc)?;
                            continue;
                        }
                    }
                };
                // A singular field's value (a plain one, or one whose checks
                // above passed). Its number is the tag's: `value` uses it
                // for groups only.
                debug_assert!(fi < plan.fields.len());
                // SAFETY: `fi` is an index into `fields`, from
                // `plain_by_tag` (built from `fields`: index + 1) or from
                // `field_index`, both in range by construction.
                let f = plan.fields.get_unchecked(fi);
                self.push_key(f.key_id);
                self.value(f, r, depth, f.number).map_err(|_| self.err.with(|e| e.in_field(mi, fi)))?;
                ffi::lua_rawset(L, t);
            }
            if !ended {
                return Err(self.err.set(CodecError::wire(pbwire::Error::new(
                    pbwire::ErrorKind::UnterminatedGroup(group.unwrap_or(0)),
                    r.position(),
                ))));
            }
            self.finish_frame(mi, plan, r, t, acc, seen_required, merge, &mut run, &cs)?;
        }
        Ok(())
    }

    /// The checks of singular field `fi` whose wire type is not its plain
    /// one: `false` when the field was skipped as unknown, or merged into
    /// the message already in the table; `true` when its value is to be
    /// stored (the oneof switched, the required bit set).
    ///
    /// # Safety
    /// As [`Self::walk_body`]'s frame: `t` its table, `acc` its accumulator.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn single_checked<const LEAN: bool>(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        tag: Tag,
        tag_at: usize,
        depth: u32,
        t: c_int,
        merge: bool,
        cs: &mut Containers,
        run: &mut UnknownRun,
        acc: c_int,
        seen_required: &mut u64,
        seen_sub: &mut u64,
        oneof_cur: &mut [u16; TRACKED_ONEOFS],
    ) -> WalkResult<bool> {
        let L = self.L;
        let plan = &self.plans.messages[mi as usize];
        let number = tag.field_number();
        let wt = tag.wire_type();
        // SAFETY: as the frame's (`walk_body`).
        unsafe {
            if wt != f.kind.wire_type() || (f.kind == Kind::Enum && self.closed_miss(f, r)?) {
                take_slots(L, &mut cs.taken, acc);
                self.skip_unknown(r, tag, depth, tag_at, run, acc)?;
                return Ok(false);
            }
            if f.required && fi < 64 {
                *seen_required |= 1u64 << fi;
            }
            if !LEAN && f.oneof != NO_ONEOF {
                self.switch_oneof(plan, t, fi, oneof_cur);
            }
            if matches!(f.kind, Kind::Message | Kind::Group) && !self.first_sub(fi, merge, seen_sub) {
                self.push_key(f.key_id);
                if lua::rawget(L, t) == ffi::LUA_TTABLE {
                    // A repeated occurrence of a singular message merges.
                    self.push_key(f.key_id);
                    ffi::lua_insert(L, -2);
                    self.sub_message(f, r, depth, number, true).map_err(|_| self.err.with(|e| e.in_field(mi, fi)))?;
                    ffi::lua_rawset(L, t);
                    return Ok(false);
                }
                ffi::lua_pop(L, 1);
            }
        }
        Ok(true)
    }

    /// One entry of map field `fi`.
    ///
    /// # Safety
    /// As [`Self::walk_body`]'s frame: `t` its table, `acc` its accumulator.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn map_field(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        tag: Tag,
        tag_at: usize,
        depth: u32,
        t: c_int,
        cs: &mut Containers,
        run: &mut UnknownRun,
        acc: c_int,
    ) -> WalkResult {
        let L = self.L;
        let wt = tag.wire_type();
        // SAFETY: as the frame's (`walk_body`).
        unsafe {
            take_slots(L, &mut cs.taken, acc);
            if wt != WireType::Len {
                self.skip_unknown(r, tag, depth, tag_at, run, acc)?;
                return Ok(());
            }
            let kept = self.map_entry(fi, f, r, depth, t, cs).map_err(|_| self.entry_failed(mi, fi, tag_at))?;
            if !kept {
                // A closed-enum value the enum lacks: the whole
                // entry is an unknown field, as protobuf does.
                self.note_unknown(run, acc, tag_at, r.position());
            }
        }
        Ok(())
    }

    /// The rest of a run of repeated field `fi` (not a map) whose tag was
    /// just read: a packed run, or elements while the same tag comes next.
    ///
    /// # Safety
    /// As [`Self::walk_body`]'s frame: `t` its table, `acc` its accumulator.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn repeated_field(
        &self,
        mi: u32,
        fi: usize,
        f: &FieldPlan,
        r: &mut Reader<'_>,
        tag: Tag,
        tag_at: usize,
        depth: u32,
        t: c_int,
        cs: &mut Containers,
        run: &mut UnknownRun,
        acc: c_int,
    ) -> WalkResult {
        let L = self.L;
        let number = tag.field_number();
        let wt = tag.wire_type();
        // SAFETY: as the frame's (`walk_body`).
        unsafe {
            // The slots are taken by the first container
            // created (`switch_container`), or here.
            if wt == WireType::Len && f.kind.is_packable() {
                if f.kind == Kind::Enum && self.plans.enums[f.sub as usize].closed {
                    take_slots(L, &mut cs.taken, acc);
                    self.packed_closed_enum(mi, fi, f, r, t, cs, run, acc)?;
                } else {
                    self.packed_run(mi, fi, f, r, t, cs)?;
                }
            } else if wt == f.kind.wire_type() && !(f.kind == Kind::Enum && self.closed_miss(f, r)?) {
                // A field met for the first time in a new table
                // (the common case) fills an array of its own on
                // top (`fresh_array`), stored when the run ends.
                let fresh = cs.is_new(f);
                let (slot, mut n) = if fresh {
                    (self.fresh_array(f, t, cs, count_run(r, tag)), 1)
                } else {
                    (cs.slot, self.next_index(fi, f, t, cs, 0))
                };
                // The rest of the run: encoders write a field's
                // elements together, so while the next tag is this
                // one (one or two bytes), the lookup and checks
                // above hold for it too. Closed enums check every
                // value (`next_len` 0: no tag continues the run).
                let closed = f.kind == Kind::Enum && self.plans.enums[f.sub as usize].closed;
                let (next_len, next) = run_tag(tag, closed);
                loop {
                    self.value(f, r, depth, number).map_err(|_| self.err.with(|e| e.in_element(mi, fi, n as u64)))?;
                    lua::rawseti(L, slot, n);
                    if !run_continues(r, next_len, next) {
                        break;
                    }
                    if next_len == 1 && !matches!(f.kind, Kind::Message | Kind::Group) {
                        n = self.same_tag_run(mi, fi, f, r, slot, n, next as u8)?;
                        if !fresh && let Some(c) = cs.counts.get_mut(f.slot as usize) {
                            *c = n as u32;
                        }
                        break;
                    }
                    let _ = r.advance(next_len);
                    n = if fresh { n + 1 } else { self.next_index(fi, f, t, cs, 0) };
                }
                if fresh {
                    ffi::lua_rawset(L, t);
                    cs.counts[f.slot as usize] = n as u32;
                }
            } else {
                take_slots(L, &mut cs.taken, acc);
                self.skip_unknown(r, tag, depth, tag_at, run, acc)?;
            }
        }
        Ok(())
    }

    /// A frame's end: the required check, unknown bytes stored, the
    /// options' empty containers and defaults, its slots released.
    ///
    /// # Safety
    /// As [`Self::walk_body`]'s frame: `t` its table, `acc` its accumulator.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn finish_frame(
        &self,
        mi: u32,
        plan: &MessagePlan,
        r: &Reader<'_>,
        t: c_int,
        acc: c_int,
        seen_required: u64,
        merge: bool,
        run: &mut UnknownRun,
        cs: &Containers,
    ) -> WalkResult {
        let L = self.L;
        // SAFETY: as the frame's (`walk_body`).
        unsafe {
            // All seen (the common case): no call. Otherwise (or when the
            // seen-set does not cover them) the full check names the missing.
            let all = plan.required_mask;
            if self.opts.check_required
                && !plan.required.is_empty()
                && (merge || all == 0 || seen_required & all != all)
            {
                self.check_required(mi, plan, t, seen_required, merge, r.position())?;
            }
            if run.end != run.start {
                self.flush_unknown(run, acc);
            }
            if self.opts.empty && plan.n_slots != 0 {
                self.make_empty_containers(plan, t, cs);
            }
            if self.opts.defaults != DefaultsMode::None && !plan.is_map_entry {
                self.apply_defaults(mi, plan, t);
            }
            if run.pieces != 0 {
                self.store_unknown(t, acc, merge);
            }
            if cs.taken {
                ffi::lua_settop(L, t);
            }
            debug_assert_eq!(ffi::lua_gettop(L), t, "decode frame left its stack unbalanced");
        }
        Ok(())
    }

    /// The error for an END_GROUP tag that does not close `group`.
    #[cold]
    #[inline(never)]
    fn end_group_error(&self, group: Option<u32>, tag: Tag, r: &Reader<'_>) -> Recorded {
        let at = r.position() - tag_len(tag);
        let number = tag.field_number();
        let kind = match group {
            Some(g) => pbwire::ErrorKind::GroupMismatch { expected: g, found: number },
            None => pbwire::ErrorKind::UnexpectedEndGroup(number),
        };
        self.err.set(CodecError::wire(pbwire::Error::new(kind, at)))
    }

    /// Whether singular message field `fi` occurs for the first time in a
    /// new table, which then lacks it: no lookup for a table to merge
    /// into. Marks it seen. Fields from 64 on, and merges, always look.
    #[inline(always)]
    pub(in crate::binary::decode) fn first_sub(&self, fi: usize, merge: bool, seen: &mut u64) -> bool {
        let bit = 1u64.checked_shl(fi as u32).unwrap_or(0);
        let first = !merge && *seen & bit == 0 && bit != 0;
        *seen |= bit;
        first
    }
}
