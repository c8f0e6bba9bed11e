//! Floors: the Lua side of a decode or an encode with the codec taken out,
//! the physical limit a one-call codec can approach.
//!
//! * **Decode floor:** replays a tape recorded from the decoded table:
//!   create each table (exactly pre-sized), push each key from a key-string
//!   table (`rawgeti`, as protolua does), push each string from bytes
//!   (`lua_pushlstring`, as protolua does from the input), each number and
//!   boolean, and `rawset`/`rawseti` it. No parsing, no plan.
//! * **Encode floor:** reads every value of the input table along a read
//!   plan recorded from it (key push + `rawget`, `rawgeti` for arrays),
//!   copies string bytes and 8-byte numbers into a reused buffer, and makes
//!   one Lua string. No wire format, no schema, no absent-field probes.
//!
//! `protolua_floors(t)` (a global the harness installs) returns
//! `decode_floor, encode_floor`, both called as `f(_, arg)` like
//! `Msg:decode(s)` / `Msg:encode(t)`.

use std::os::raw::c_int;

use protolua::lua::{self, ffi, lua_State, upvalue};

/// One step of the decode tape.
enum Op {
    /// `lua_createtable(narr, nrec)`.
    Table(c_int, c_int),
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
    arena: Vec<u8>,
    read: Read,
    out: Vec<u8>,
}

/// Recorder state while walking the sample table.
struct Recorder {
    tape: Vec<Op>,
    arena: Vec<u8>,
    keys: Vec<Vec<u8>>,
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

/// `protolua_floors(t)`: returns `decode_floor, encode_floor` for tables shaped like `t`.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn make_floors(L: *mut lua_State) -> c_int {
    // SAFETY: setup-time walk of a table argument; the userdata gets its
    // __gc before its payload is written.
    unsafe {
        ffi::luaL_checktype(L, 1, ffi::LUA_TTABLE);
        ffi::luaL_checkstack(L, 64, c"floor".as_ptr());
        let mut rec = Recorder { tape: Vec::new(), arena: Vec::new(), keys: Vec::new() };
        let read = rec.value(L, 1);
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
        *ud = Some(Floors { tape: rec.tape, arena: rec.arena, read, out: Vec::with_capacity(1 << 16) });
        let u = ffi::lua_gettop(L);
        for f in [decode_floor as ffi::lua_CFunction, encode_floor] {
            ffi::lua_pushvalue(L, u);
            ffi::lua_pushvalue(L, keys);
            ffi::lua_pushcclosure(L, f, 2);
        }
        2
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

/// The decode floor: build the recorded table.
unsafe extern "C-unwind" fn decode_floor(L: *mut lua_State) -> c_int {
    // SAFETY: upvalue 1 is our userdata (set by make_floors), upvalue 2 the
    // key table; the tape is balanced (each value is consumed by its Set).
    unsafe {
        let f = (*(ffi::lua_touserdata(L, upvalue(1)) as *const Option<Floors>)).as_ref().expect("floors");
        let keys = upvalue(2);
        ffi::luaL_checkstack(L, 64, c"floor".as_ptr());
        for op in &f.tape {
            match *op {
                Op::Table(a, r) => ffi::lua_createtable(L, a, r),
                Op::Key(id) => lua::push_rawgeti(L, keys, id),
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

/// Read every value of the table at `t` along `read`, copying into `out`.
unsafe fn read_table(L: *mut lua_State, t: c_int, read: &Read, keys: c_int, out: &mut Vec<u8>) {
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
                Read::Record(_) => read_table(L, v, r, keys, out),
            }
            ffi::lua_settop(L, v - 1);
        }
    }
}

/// The encode floor: read the input table (argument 2), make one string.
unsafe extern "C-unwind" fn encode_floor(L: *mut lua_State) -> c_int {
    // SAFETY: as decode_floor; argument 2 must be a table shaped like the
    // sample (the harness passes the cell's table or one of its variants).
    unsafe {
        let f = (*(ffi::lua_touserdata(L, upvalue(1)) as *mut Option<Floors>)).as_mut().expect("floors");
        ffi::luaL_checktype(L, 2, ffi::LUA_TTABLE);
        ffi::luaL_checkstack(L, 64, c"floor".as_ptr());
        f.out.clear();
        read_table(L, 2, &f.read, upvalue(2), &mut f.out);
        lua::push_bytes(L, &f.out);
        1
    }
}
