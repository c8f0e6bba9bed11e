//! Floors: the Lua side of a decode or an encode with the codec taken out,
//! the physical limit a one-call codec can approach.
//!
//! * **Decode floor:** replays a tape recorded from the decoded table:
//!   create each table (exactly pre-sized), push each key from a key-string
//!   table (`rawgeti`, as protolua does), push each string from bytes
//!   (`lua_pushlstring`, as protolua does from the input), each number and
//!   boolean, and `rawset`/`rawseti` it. No parsing, no plan. A table
//!   that had a metatable (protolua's and msgpack's `__serialize`
//!   metatables inside Tarantool) gets the same one right after it is made,
//!   pushed from a stack slot (`lua_pushvalue`, as protolua does); the
//!   embedded harness's tables have none.
//! * **Encode floor:** reads every value of the input table along a read
//!   plan recorded from it (key push + `rawget`, `rawgeti` for arrays),
//!   copies string bytes and 8-byte numbers into a reused buffer, and makes
//!   one Lua string. No wire format, no schema, no absent-field probes.
//!
//! * **Strict-key encode floors** (a lower bound for the default
//!   `strict_keys`, reported by `PROTOLUA_BENCH_STRICT=1`): the encode
//!   floor knows from its recorded plan which keys a table has. A codec
//!   does not: it must find the set fields and prove that no other key is
//!   there. The cheapest two ways through the C API, each still without a
//!   schema, a lookup or a wire format:
//!   - *walk floor:* every table read with `lua_next`, each key's type
//!     checked and a string key's bytes taken (what identifies a field),
//!     each value read as the encode floor reads it;
//!   - *count floor:* the encode floor's reads, plus a count of each
//!     message table's keys (arrays are not counted) the cheapest way
//!     known: a `lua_next` loop, or on LuaJIT for tables of 6 or more
//!     keys one `lua_pcall` of a Lua `next` loop (LuaJIT steps it by slot;
//!     protolua counts the same way). It still skips the absent fields'
//!     probes a real codec makes, so it is below what probing costs.
//!
//! * **Constructor decode floor:** the decode floor's tape with each
//!   table that has only string keys made by a Lua constructor of its
//!   keys, `function(a1, …) return {["k1"] = a1, …} end` (on LuaJIT, `TDUP`
//!   of a template holding the keys, then one `TSETS` a value), called with
//!   its values pushed (`lua_call`); arrays and their elements as in the
//!   decode floor. The cheapest table building found so far on LuaJIT
//!   (protolua's decode has built tables this way since the ninth
//!   session), so the bound the C-API decode floor no longer is there.
//!
//! * **Parse + constructor floor:** the payload's bytes (the call's
//!   argument) read by a parser written for the schema (`parse_floor.rs`:
//!   tags, lengths, varints, proto3 UTF-8, each value folded into a
//!   checksum), then the constructor floor's tape. The constructor floor
//!   skips the wire format; this one pays for the cheapest read of it known,
//!   so it bounds a one-call decode from below more tightly. Without the
//!   tape, the *parse floor* alone.
//!
//! * **Tree constructor floor:** one generated Lua function of all the
//!   table's leaf values builds the whole tree in one expression (on
//!   LuaJIT: `TDUP` a message table, `TSETB` an array element, one call in
//!   all), for tables of at most 200 leaves. With the parse floor first,
//!   the *parse + tree floor*.
//!
//! `protolua_floors(t [, message name])` (a global the harness installs)
//! returns `decode_floor, encode_floor, walk_floor, count_floor, ctor_floor,
//! parse_floor, parse_ctor_floor, tree_floor, parse_tree_floor`, all called
//! as `f(_, arg)` like `Msg:decode(s)` / `Msg:encode(t)`; the parse floors
//! only for the matrix's messages (`hello.Person`,
//! `proto2_basic.BenchPayload`), the tree floors only for tables of at most
//! 200 leaves, else nil.

use std::os::raw::c_int;

use protolua::lua::{self, ffi, lua_State, upvalue};

#[path = "parse_floor.rs"]
mod parse_floor;
use parse_floor::Schema;

/// One step of the decode tape.
#[derive(Clone, Copy)]
enum Op {
    /// `lua_createtable(narr, nrec)`.
    Table(c_int, c_int),
    /// Give the new table on top metatable `id` (`lua_pushvalue` from its
    /// stack slot, `lua_setmetatable`).
    Meta(c_int),
    /// Push key string `id` from the key table.
    Key(i64),
    /// Push `arena[start..end]` as a string.
    Str(usize, usize),
    /// Push a float.
    Num(f64),
    /// Push an integer (Lua 5.3+).
    Int(i64),
    /// Push a boolean.
    Bool(bool),
    /// `rawset(-3)`: key and value on top, table below.
    Set,
    /// `rawseti(-2, i)`: value on top, table below.
    SetIndex(i64),
    /// Push constructor `id` (constructor floor).
    Ctor(i64),
    /// `lua_call` the constructor under the `n` values on top.
    Call(c_int),
}

impl Op {
    /// Whether this op pushes a value (a string, number or boolean).
    fn is_leaf(self) -> bool {
        matches!(self, Op::Str(..) | Op::Num(_) | Op::Int(_) | Op::Bool(_))
    }
}

/// Push the value of leaf op `op` (its string's bytes in `arena`).
///
/// # Safety
/// `L` valid with a free slot; `op` a leaf ([`Op::is_leaf`]).
#[inline(always)]
unsafe fn push_leaf(L: *mut lua_State, arena: &[u8], op: Op) {
    // SAFETY: caller's contract.
    unsafe {
        match op {
            Op::Str(s, e) => lua::push_bytes(L, &arena[s..e]),
            Op::Num(x) => ffi::lua_pushnumber(L, x),
            Op::Int(i) => ffi::lua_pushinteger(L, i as ffi::lua_Integer),
            Op::Bool(b) => ffi::lua_pushboolean(L, b as c_int),
            _ => unreachable!("a leaf"),
        }
    }
}

/// How the encode floor reads one value.
enum Read {
    /// A table read field by field.
    Record(Vec<(Slot, Read)>),
    /// A string: copy its bytes.
    Str,
    /// A number: copy 8 bytes.
    Num,
    /// A boolean: copy 1 byte.
    Bool,
}

/// Where a value sits in its table.
enum Slot {
    /// Under key string `id` of the key table.
    Key(i64),
    /// At array index `i`.
    Index(i64),
}

/// Userdata payload: both floors of one cell.
struct Floors {
    tape: Vec<Op>,
    /// The constructor floor's tape (see [`ctor_tape`]).
    ctor_tape: Vec<Op>,
    /// How many distinct metatables the tape sets (upvalue 4 holds them).
    metas: c_int,
    arena: Vec<u8>,
    read: Read,
    out: Vec<u8>,
    /// The parse floor's parser, for a matrix message.
    schema: Option<Schema>,
    /// The tree constructor floor's arguments: every leaf value of the
    /// table in order (empty when there are more than [`TREE_ARGS`]).
    tree_leaves: Vec<Op>,
}

/// Most leaf values the tree constructor floor takes as arguments (a Lua
/// function has at most ~250 slots).
const TREE_ARGS: usize = 200;

/// A table's head at `tape[*i]`: its sizes and metatable id, `*i` moved
/// past them to its first entry; `None` for a leaf (then `*i` stays).
fn table_head(tape: &[Op], i: &mut usize) -> Option<(c_int, c_int, Option<c_int>)> {
    let Op::Table(narr, nrec) = tape[*i] else {
        assert!(tape[*i].is_leaf(), "a value op");
        return None;
    };
    *i += 1;
    let meta = match tape.get(*i) {
        Some(&Op::Meta(id)) => {
            *i += 1;
            Some(id)
        }
        _ => None,
    };
    Some((narr, nrec, meta))
}

/// The tree constructor floor's Lua expression for the value starting at
/// `i` of `tape` (a table constructor, with `smt(…, Mn)` for a metatable,
/// or an argument `aN` for a leaf, which goes to `leaves`); returns where
/// that value ends.
fn tree_expr(tape: &[Op], mut i: usize, keys: &[Vec<u8>], leaves: &mut Vec<Op>, out: &mut String) -> usize {
    let Some((narr, nrec, meta)) = table_head(tape, &mut i) else {
        leaves.push(tape[i]);
        out.push_str(&format!("a{}", leaves.len()));
        return i + 1;
    };
    if meta.is_some() {
        out.push_str("smt(");
    }
    out.push('{');
    for pos in 1..=i64::from(narr + nrec) {
        let mut value = String::new();
        if let Op::Key(k) = tape[i] {
            value.push_str("[\"");
            for &b in &keys[k as usize - 1] {
                value.push_str(&format!("\\{b:03}"));
            }
            value.push_str("\"]=");
            i += 1;
        }
        i = tree_expr(tape, i, keys, leaves, &mut value);
        match tape[i] {
            Op::SetIndex(n) if n != pos => out.push_str(&format!("[{n}]=")),
            Op::Set | Op::SetIndex(_) => {}
            _ => unreachable!("a store"),
        }
        i += 1;
        out.push_str(&value);
        out.push(',');
    }
    out.push('}');
    if let Some(id) = meta {
        out.push_str(&format!(", M{})", id + 1));
    }
    i
}

/// Recorder state while walking the sample table.
struct Recorder {
    tape: Vec<Op>,
    arena: Vec<u8>,
    keys: Vec<Vec<u8>>,
    /// Stack index of the table collecting the distinct metatables.
    meta_table: c_int,
    /// Their identities (`lua_topointer`), in that table's order.
    metas: Vec<*const std::ffi::c_void>,
}

impl Recorder {
    fn key_id(&mut self, k: &[u8]) -> i64 {
        let i = self.keys.iter().position(|x| x == k).unwrap_or_else(|| {
            self.keys.push(k.to_vec());
            self.keys.len() - 1
        });
        i as i64 + 1
    }

    /// Record the value at `idx` (absolute) onto the tape; return its read plan.
    unsafe fn value(&mut self, L: *mut lua_State, idx: c_int) -> Read {
        // SAFETY: `idx` is a valid absolute index; tables are walked raw with
        // one key/value pair on the stack at a time.
        unsafe {
            match ffi::lua_type(L, idx) {
                ffi::LUA_TSTRING => {
                    let s = lua::string_bytes(L, idx);
                    let start = self.arena.len();
                    self.arena.extend_from_slice(s);
                    self.tape.push(Op::Str(start, self.arena.len()));
                    Read::Str
                }
                ffi::LUA_TNUMBER => {
                    if lua::HAS_INTEGERS && ffi::lua_isinteger(L, idx) != 0 {
                        self.tape.push(Op::Int(ffi::lua_tointeger(L, idx) as i64));
                    } else {
                        self.tape.push(Op::Num(ffi::lua_tonumber(L, idx)));
                    }
                    Read::Num
                }
                ffi::LUA_TBOOLEAN => {
                    self.tape.push(Op::Bool(ffi::lua_toboolean(L, idx) != 0));
                    Read::Bool
                }
                ffi::LUA_TTABLE => {
                    let at = self.tape.len();
                    self.tape.push(Op::Table(0, 0));
                    if ffi::lua_getmetatable(L, idx) != 0 {
                        let p = ffi::lua_topointer(L, -1);
                        let id = match self.metas.iter().position(|&m| m == p) {
                            Some(i) => {
                                ffi::lua_pop(L, 1);
                                i
                            }
                            None => {
                                self.metas.push(p);
                                lua::rawseti(L, self.meta_table, self.metas.len() as i64);
                                self.metas.len() - 1
                            }
                        };
                        self.tape.push(Op::Meta(id as c_int));
                    }
                    let (mut narr, mut nrec) = (0, 0);
                    let mut fields = Vec::new();
                    ffi::lua_pushnil(L);
                    while ffi::lua_next(L, idx) != 0 {
                        let v = ffi::lua_gettop(L);
                        let slot = if ffi::lua_type(L, v - 1) == ffi::LUA_TSTRING {
                            let id = self.key_id(lua::string_bytes(L, v - 1));
                            self.tape.push(Op::Key(id));
                            nrec += 1;
                            Slot::Key(id)
                        } else {
                            narr += 1;
                            Slot::Index(ffi::lua_tonumber(L, v - 1) as i64)
                        };
                        let read = self.value(L, v);
                        self.tape.push(match slot {
                            Slot::Key(_) => Op::Set,
                            Slot::Index(i) => Op::SetIndex(i),
                        });
                        fields.push((slot, read));
                        ffi::lua_pop(L, 1);
                    }
                    self.tape[at] = Op::Table(narr, nrec);
                    Read::Record(fields)
                }
                t => panic!("floor: unexpected Lua type {t} in a matrix table"),
            }
        }
    }
}

/// `protolua_floors(t)`: returns `decode_floor, encode_floor, walk_floor,
/// count_floor` for tables shaped like `t`.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn make_floors(L: *mut lua_State) -> c_int {
    // SAFETY: setup-time walk of a table argument; the userdata gets its
    // __gc before its payload is written.
    unsafe {
        ffi::luaL_checktype(L, 1, ffi::LUA_TTABLE);
        ffi::luaL_checkstack(L, 64, c"floor".as_ptr());
        let schema =
            if ffi::lua_type(L, 2) == ffi::LUA_TSTRING { Schema::by_name(lua::string_bytes(L, 2)) } else { None };
        // Metatable table (upvalue 4), at index 3.
        ffi::lua_settop(L, 2);
        ffi::lua_createtable(L, 0, 0);
        let meta_table = 3;
        let mut rec = Recorder { tape: Vec::new(), arena: Vec::new(), keys: Vec::new(), meta_table, metas: Vec::new() };
        let read = rec.value(L, 1);
        let metas = rec.metas.len() as c_int;
        let mut shapes: Vec<Vec<i64>> = Vec::new();
        let mut ctape = Vec::new();
        ctor_tape(&rec.tape, 0, &mut ctape, &mut shapes);
        // Key table (upvalue 2 of both closures).
        ffi::lua_createtable(L, rec.keys.len() as c_int, 0);
        let keys = ffi::lua_gettop(L);
        for (i, k) in rec.keys.iter().enumerate() {
            lua::push_bytes(L, k);
            lua::rawseti(L, keys, i as i64 + 1);
        }
        let ud = ffi::lua_newuserdata(L, std::mem::size_of::<Option<Floors>>()) as *mut Option<Floors>;
        ud.write(None);
        ffi::lua_createtable(L, 0, 1);
        lua::push_bytes(L, b"__gc");
        ffi::lua_pushcfunction(L, floors_gc);
        ffi::lua_rawset(L, -3);
        ffi::lua_setmetatable(L, -2);
        // The constructors (upvalue 5), compiled with the JIT off for them
        // (compiled, a call from C ends in a trace exit: PERF_LOG, eighth
        // session), by the key strings of their shapes.
        ffi::lua_createtable(L, shapes.len() as c_int, 0);
        let ctors = ffi::lua_gettop(L);
        for (i, shape) in shapes.iter().enumerate() {
            let args: Vec<String> = (1..=shape.len()).map(|j| format!("a{j}")).collect();
            let mut src = format!("local f = function({}) return {{", args.join(","));
            for (j, &k) in shape.iter().enumerate() {
                src.push_str("[\"");
                for &b in &rec.keys[k as usize - 1] {
                    src.push_str(&format!("\\{b:03}"));
                }
                src.push_str(&format!("\"]={},", args[j]));
            }
            src.push_str("} end if jit then jit.off(f) end return f");
            if ffi::luaL_loadbuffer(L, src.as_ptr().cast(), src.len(), c"=floor.ctor".as_ptr()) != 0 {
                ffi::lua_error(L);
            }
            ffi::lua_call(L, 0, 1);
            lua::rawseti(L, ctors, i as i64 + 1);
        }
        // The tree constructor (`ctors[0]`): one function of every leaf
        // value that builds the whole table.
        let mut tree_leaves = Vec::new();
        let mut expr = String::new();
        tree_expr(&rec.tape, 0, &rec.keys, &mut tree_leaves, &mut expr);
        if tree_leaves.len() <= TREE_ARGS {
            let args: Vec<String> = (1..=tree_leaves.len()).map(|j| format!("a{j}")).collect();
            let metas_src: String = (1..=metas).map(|j| format!("local M{j} = M[{j}] ")).collect();
            let src = format!(
                "local smt, M = setmetatable, ... {metas_src}local f = function({}) return {expr} end \
                 if jit then jit.off(f) end return f",
                args.join(",")
            );
            if ffi::luaL_loadbuffer(L, src.as_ptr().cast(), src.len(), c"=floor.tree".as_ptr()) != 0 {
                ffi::lua_error(L);
            }
            ffi::lua_pushvalue(L, meta_table);
            ffi::lua_call(L, 1, 1);
            lua::rawseti(L, ctors, 0);
        } else {
            tree_leaves.clear();
        }
        let ud = {
            ffi::lua_pushvalue(L, ctors - 1);
            ffi::lua_remove(L, ctors - 1);
            ffi::lua_touserdata(L, -1) as *mut Option<Floors>
        };
        let ctors = ctors - 1;
        *ud = Some(Floors {
            tape: rec.tape,
            ctor_tape: ctape,
            metas,
            arena: rec.arena,
            read,
            out: Vec::with_capacity(1 << 16),
            schema,
            tree_leaves,
        });
        let u = ffi::lua_gettop(L);
        // The Lua key counter (upvalue 3).
        let counter =
            c"local next = next return function(t) local n = 0 for _ in next, t do n = n + 1 end return n end";
        if ffi::luaL_loadstring(L, counter.as_ptr()) != 0 {
            ffi::lua_error(L);
        }
        ffi::lua_call(L, 0, 1);
        let counter = ffi::lua_gettop(L);
        // The parse floors only with a parser for the message; the tree
        // floor only for a table of at most TREE_ARGS leaves.
        let tree = !(*ud).as_ref().expect("floors").tree_leaves.is_empty();
        let fs: [(ffi::lua_CFunction, bool); 9] = [
            (decode_floor::<false, false>, true),
            (encode_floor::<PLAN>, true),
            (encode_floor::<WALK>, true),
            (encode_floor::<PLAN_COUNT>, true),
            (decode_floor::<true, false>, true),
            (parse_floor, schema.is_some()),
            (decode_floor::<true, true>, schema.is_some()),
            (tree_floor::<false>, tree),
            (tree_floor::<true>, tree && schema.is_some()),
        ];
        for (f, available) in fs {
            if !available {
                ffi::lua_pushnil(L);
                continue;
            }
            ffi::lua_pushvalue(L, u);
            ffi::lua_pushvalue(L, keys);
            ffi::lua_pushvalue(L, counter);
            ffi::lua_pushvalue(L, meta_table);
            ffi::lua_pushvalue(L, ctors);
            ffi::lua_pushcclosure(L, f, 5);
        }
        fs.len() as c_int
    }
}

/// The tree constructor floor: every leaf value pushed, then one call of
/// the generated function that builds the whole table (`ctors[0]`);
/// `PARSE`: after the parse floor's read of argument 2.
unsafe extern "C-unwind" fn tree_floor<const PARSE: bool>(L: *mut lua_State) -> c_int {
    // SAFETY: upvalue 1 is our userdata, upvalue 5 the constructors with
    // the tree's at 0; the stack is grown for the arguments first.
    unsafe {
        let f = (*(ffi::lua_touserdata(L, upvalue(1)) as *const Option<Floors>)).as_ref().expect("floors");
        if PARSE {
            ffi::luaL_checktype(L, 2, ffi::LUA_TSTRING);
            parse_arg(L, f);
        }
        ffi::luaL_checkstack(L, f.tree_leaves.len() as c_int + 8, c"floor".as_ptr());
        lua::push_rawgeti(L, upvalue(5), 0);
        for &op in &f.tree_leaves {
            push_leaf(L, &f.arena, op);
        }
        ffi::lua_call(L, f.tree_leaves.len() as c_int, 1);
        1
    }
}

unsafe extern "C-unwind" fn floors_gc(L: *mut lua_State) -> c_int {
    // SAFETY: our userdata, argument 1.
    unsafe {
        if let Some(p) = (ffi::lua_touserdata(L, 1) as *mut Option<Floors>).as_mut() {
            drop(p.take());
        }
    }
    0
}

/// The parse floor's read of the string argument 2 by `f`'s parser (a
/// checksum), or a Lua error.
///
/// # Safety
/// A Lua C function's context, argument 2 a string.
unsafe fn parse_arg(L: *mut lua_State, f: &Floors) -> u64 {
    // SAFETY: caller's contract; the error is raised with no Rust value
    // owning memory live (the message is pushed first).
    unsafe {
        let b = lua::string_bytes(L, 2);
        match f.schema.expect("a parse floor has a schema").parse(b) {
            Some(sum) => std::hint::black_box(sum),
            None => {
                lua::push_bytes(L, b"parse floor: bad payload");
                ffi::lua_error(L)
            }
        }
    }
}

/// The parse floor alone: the checksum of the payload (argument 2).
unsafe extern "C-unwind" fn parse_floor(L: *mut lua_State) -> c_int {
    // SAFETY: upvalue 1 is our userdata (set by make_floors).
    unsafe {
        ffi::luaL_checktype(L, 2, ffi::LUA_TSTRING);
        let f = (*(ffi::lua_touserdata(L, upvalue(1)) as *const Option<Floors>)).as_ref().expect("floors");
        ffi::lua_pushnumber(L, parse_arg(L, f) as f64);
        1
    }
}

/// The decode floor: build the recorded table (`CTOR`: the constructor
/// floor's tape, constructors in upvalue 5; `PARSE`: after the parse
/// floor's read of argument 2).
unsafe extern "C-unwind" fn decode_floor<const CTOR: bool, const PARSE: bool>(L: *mut lua_State) -> c_int {
    // SAFETY: upvalue 1 is our userdata (set by make_floors), upvalue 2 the
    // key table, upvalue 4 the metatables (pushed into slots `base + 1..`
    // first); the tape is balanced (each value is consumed by its Set) and
    // leaves the root table on top.
    unsafe {
        let f = (*(ffi::lua_touserdata(L, upvalue(1)) as *const Option<Floors>)).as_ref().expect("floors");
        if PARSE {
            ffi::luaL_checktype(L, 2, ffi::LUA_TSTRING);
            parse_arg(L, f);
        }
        let keys = upvalue(2);
        ffi::luaL_checkstack(L, 64, c"floor".as_ptr());
        let base = if f.metas > 0 { ffi::lua_gettop(L) } else { 0 };
        for i in 1..=f.metas {
            lua::push_rawgeti(L, upvalue(4), i as i64);
        }
        for op in if CTOR { &f.ctor_tape } else { &f.tape } {
            match *op {
                Op::Ctor(id) => lua::push_rawgeti(L, upvalue(5), id),
                Op::Call(n) => ffi::lua_call(L, n, 1),
                Op::Table(a, r) => ffi::lua_createtable(L, a, r),
                Op::Meta(id) => {
                    ffi::lua_pushvalue(L, base + 1 + id);
                    ffi::lua_setmetatable(L, -2);
                }
                Op::Key(id) => lua::push_rawgeti(L, keys, id),
                // Spelled out, not `push_leaf`: through it the tape loop
                // compiled to ~3 % more instructions (Person 10KB), and a
                // floor must stay the cheapest.
                Op::Str(s, e) => lua::push_bytes(L, &f.arena[s..e]),
                Op::Num(x) => ffi::lua_pushnumber(L, x),
                Op::Int(i) => ffi::lua_pushinteger(L, i as ffi::lua_Integer),
                Op::Bool(b) => ffi::lua_pushboolean(L, b as c_int),
                Op::Set => ffi::lua_rawset(L, -3),
                Op::SetIndex(i) => lua::rawseti(L, -2, i),
            }
        }
        1
    }
}

/// The constructor floor's tape from the decode floor's `tape`, from the
/// value starting at `i`; returns where that value ends. A table with only
/// string keys becomes its constructor (`shapes`: the key ids of each, in
/// tape order), its values and one call, then its metatable; the rest is
/// copied.
fn ctor_tape(tape: &[Op], mut i: usize, out: &mut Vec<Op>, shapes: &mut Vec<Vec<i64>>) -> usize {
    let Some((narr, nrec, meta)) = table_head(tape, &mut i) else {
        out.push(tape[i]);
        return i + 1;
    };
    if narr == 0 && nrec > 0 {
        let at = out.len();
        out.push(Op::Ctor(0));
        let mut keys = Vec::new();
        for _ in 0..nrec {
            let Op::Key(k) = tape[i] else { unreachable!("a key") };
            keys.push(k);
            i = ctor_tape(tape, i + 1, out, shapes);
            i += 1; // Set
        }
        let id = shapes.iter().position(|s| *s == keys).unwrap_or_else(|| {
            shapes.push(keys);
            shapes.len() - 1
        });
        out[at] = Op::Ctor(id as i64 + 1);
        out.push(Op::Call(nrec));
    } else {
        out.push(Op::Table(narr, nrec));
        if let Some(id) = meta {
            out.push(Op::Meta(id));
        }
        for _ in 0..narr + nrec {
            match tape[i] {
                Op::Key(k) => {
                    out.push(Op::Key(k));
                    i = ctor_tape(tape, i + 1, out, shapes);
                }
                _ => i = ctor_tape(tape, i, out, shapes),
            }
            out.push(match tape[i] {
                Op::Set => Op::Set,
                Op::SetIndex(n) => Op::SetIndex(n),
                _ => unreachable!("a store"),
            });
            i += 1;
        }
        return i;
    }
    if let Some(id) = meta {
        out.push(Op::Meta(id));
    }
    i
}

/// Read every value of the table at `t` along `read`, copying into `out`.
/// With `COUNT`, a message table's keys are counted too (the count floor,
/// with the Lua counter at `counter`).
unsafe fn read_table<const COUNT: bool>(
    L: *mut lua_State,
    t: c_int,
    read: &Read,
    keys: c_int,
    counter: c_int,
    out: &mut Vec<u8>,
) {
    let Read::Record(fields) = read else { return };
    // SAFETY: `t` holds a table; each read value is popped before the next.
    unsafe {
        for (slot, r) in fields {
            match *slot {
                Slot::Key(id) => {
                    lua::push_rawgeti(L, keys, id);
                    ffi::lua_rawget(L, t);
                }
                Slot::Index(i) => {
                    lua::rawgeti(L, t, i);
                }
            }
            let v = ffi::lua_gettop(L);
            match r {
                Read::Str => out.extend_from_slice(lua::string_bytes(L, v)),
                Read::Num => out.extend_from_slice(&ffi::lua_tonumber(L, v).to_le_bytes()),
                Read::Bool => out.push(ffi::lua_toboolean(L, v) as u8),
                Read::Record(_) => read_table::<COUNT>(L, v, r, keys, counter, out),
            }
            ffi::lua_settop(L, v - 1);
        }
        // A message table (any string key, or none at all): count its keys,
        // as strict keys must to find one that is not a field.
        if COUNT && (fields.is_empty() || fields.iter().any(|(slot, _)| matches!(slot, Slot::Key(_)))) {
            let mut n = 0u32;
            if lua::IS_LUAJIT && fields.len() >= 6 {
                ffi::lua_pushvalue(L, counter);
                ffi::lua_pushvalue(L, t);
                if ffi::lua_pcall(L, 1, 1, 0) == 0 {
                    n = ffi::lua_tonumber(L, -1) as u32;
                }
                ffi::lua_settop(L, -2);
            } else {
                ffi::lua_pushnil(L);
                while ffi::lua_next(L, t) != 0 {
                    ffi::lua_settop(L, -2);
                    n += 1;
                }
            }
            out.push(n as u8);
        }
    }
}

/// Walk the table at `t` with `lua_next`: a string key's bytes are taken
/// (as a codec identifies the field), each value read like the encode
/// floor reads it, tables recursively.
unsafe fn walk_table(L: *mut lua_State, t: c_int, out: &mut Vec<u8>) {
    // SAFETY: `t` holds a table not modified during the walk; a key is read
    // as a string only after its type is checked (lua_tolstring would
    // convert a number key in place and break lua_next); key and value sit
    // at `base + 1`, `base + 2`; the caller checked the stack (8 slots a
    // level, 64 in all, more than the matrix's nesting needs).
    unsafe {
        let base = ffi::lua_gettop(L);
        let (k, v) = (base + 1, base + 2);
        ffi::lua_pushnil(L);
        while ffi::lua_next(L, t) != 0 {
            if ffi::lua_type(L, k) == ffi::LUA_TSTRING {
                let key = lua::string_bytes(L, k);
                out.push(key.len() as u8);
            }
            match ffi::lua_type(L, v) {
                ffi::LUA_TSTRING => out.extend_from_slice(lua::string_bytes(L, v)),
                ffi::LUA_TNUMBER => out.extend_from_slice(&ffi::lua_tonumber(L, v).to_le_bytes()),
                ffi::LUA_TBOOLEAN => out.push(ffi::lua_toboolean(L, v) as u8),
                ffi::LUA_TTABLE => walk_table(L, v, out),
                _ => {}
            }
            ffi::lua_settop(L, k);
        }
    }
}

/// How an encode floor reads its input: along the recorded plan (the
/// encode floor), walking it (the walk floor), or along the plan with a key
/// count per message table (the count floor).
const PLAN: u8 = 0;
const WALK: u8 = 1;
const PLAN_COUNT: u8 = 2;

/// An encode floor: read the input table (argument 2) as `HOW` says, make
/// one string.
unsafe extern "C-unwind" fn encode_floor<const HOW: u8>(L: *mut lua_State) -> c_int {
    // SAFETY: as decode_floor; argument 2 must be a table shaped like the
    // sample (the harness passes the cell's table or one of its variants).
    unsafe {
        let f = (*(ffi::lua_touserdata(L, upvalue(1)) as *mut Option<Floors>)).as_mut().expect("floors");
        ffi::luaL_checktype(L, 2, ffi::LUA_TTABLE);
        ffi::luaL_checkstack(L, 64, c"floor".as_ptr());
        f.out.clear();
        match HOW {
            PLAN => read_table::<false>(L, 2, &f.read, upvalue(2), upvalue(3), &mut f.out),
            WALK => walk_table(L, 2, &mut f.out),
            _ => read_table::<true>(L, 2, &f.read, upvalue(2), upvalue(3), &mut f.out),
        }
        lua::push_bytes(L, &f.out);
        1
    }
}
