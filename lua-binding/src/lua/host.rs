//! The process that hosts the Lua state, and the per-module state shared by
//! every schema of one `require('protolua')`.
//!
//! Inside Tarantool, the binary exports part of its own C API (`module.h`):
//! at `luaopen` we look up `luaL_pushint64`, `luaL_pushuint64`,
//! `luaL_pushcdata`, `luaL_checkcdata` and `luaL_ctypeid` with `dlsym`. With
//! them, decode returns 64-bit integers exactly as Tarantool's own `msgpack`
//! does (a number when small, `cdata<int64_t>`/`cdata<uint64_t>` otherwise),
//! and encode reads int64 cdata and recognises `box.NULL` without calling
//! back into Lua. Elsewhere (plain LuaJIT, Lua 5.1/5.4, the embedded test
//! runtime) the lookups fail and the portable paths in [`crate::lua::int64`] are
//! used.
//!
//! [`ModuleState`] lives in a userdata in the module's helper table and is
//! shared (`Rc`) with every schema, so the codec reads it without a Lua API
//! call.

use std::cell::Cell;
use std::os::raw::{c_char, c_int, c_void};
use std::rc::Rc;

use crate::lua::{self, ffi, lua_State};
use crate::slots::Helper;

type PushI64 = unsafe extern "C-unwind" fn(*mut lua_State, i64);
type PushU64 = unsafe extern "C-unwind" fn(*mut lua_State, u64);
type PushCdata = unsafe extern "C-unwind" fn(*mut lua_State, u32) -> *mut c_void;
type CheckCdata = unsafe extern "C-unwind" fn(*mut lua_State, c_int, *mut u32) -> *mut c_void;
type CtypeId = unsafe extern "C-unwind" fn(*mut lua_State, *const c_char) -> u32;

/// Tarantool's exported Lua helpers, resolved at load time.
#[derive(Clone, Copy)]
pub struct Tarantool {
    push_int64: PushI64,
    push_uint64: PushU64,
    push_cdata: PushCdata,
    check_cdata: CheckCdata,
    ctid_int64: u32,
    ctid_uint64: u32,
    ctid_void_ptr: u32,
}

/// A cdata value as the encoder sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cdata {
    /// `int64_t`.
    I64(i64),
    /// `uint64_t`.
    U64(u64),
    /// A NULL pointer (`box.NULL`, `msgpack.NULL`).
    Null,
    /// Some other cdata: ask the portable classifier.
    Unknown,
}

impl Tarantool {
    /// Look the API up in the running process; `None` outside Tarantool.
    ///
    /// # Safety
    /// `L` valid with 4 free slots; may raise a Lua error (from
    /// `luaL_ctypeid`) while no Rust heap memory is owned.
    unsafe fn resolve(L: *mut lua_State) -> Option<Tarantool> {
        // `luaT_state` only exists in Tarantool: without it, a same-named
        // symbol in some other host is not trusted.
        sym(c"luaT_state")?;
        // SAFETY: the symbols come from Tarantool's module API, whose C
        // signatures are the function types above (module.h, 2.x and 3.x).
        unsafe {
            let t = Tarantool {
                push_int64: std::mem::transmute::<*mut c_void, PushI64>(sym(c"luaL_pushint64")?),
                push_uint64: std::mem::transmute::<*mut c_void, PushU64>(sym(c"luaL_pushuint64")?),
                push_cdata: std::mem::transmute::<*mut c_void, PushCdata>(sym(c"luaL_pushcdata")?),
                check_cdata: std::mem::transmute::<*mut c_void, CheckCdata>(sym(c"luaL_checkcdata")?),
                ctid_int64: 0,
                ctid_uint64: 0,
                ctid_void_ptr: 0,
            };
            let ctypeid = std::mem::transmute::<*mut c_void, CtypeId>(sym(c"luaL_ctypeid")?);
            Some(Tarantool {
                ctid_int64: ctypeid(L, c"int64_t".as_ptr()),
                ctid_uint64: ctypeid(L, c"uint64_t".as_ptr()),
                ctid_void_ptr: ctypeid(L, c"void *".as_ptr()),
                ..t
            })
        }
    }

    /// Push a signed 64-bit value the way Tarantool's msgpack does.
    ///
    /// # Safety
    /// `L` valid with 2 free slots. May raise on out-of-memory.
    #[inline]
    pub unsafe fn push_i64(&self, L: *mut lua_State, v: i64) {
        // SAFETY: Tarantool's function, called as module.h documents.
        unsafe { (self.push_int64)(L, v) }
    }

    /// Push an unsigned 64-bit value the way Tarantool's msgpack does.
    ///
    /// # Safety
    /// As [`Tarantool::push_i64`].
    #[inline]
    pub unsafe fn push_u64(&self, L: *mut lua_State, v: u64) {
        // SAFETY: as push_i64.
        unsafe { (self.push_uint64)(L, v) }
    }

    /// Push `bits` as a `cdata<int64_t>` (`signed`) or `cdata<uint64_t>`.
    ///
    /// # Safety
    /// As [`Tarantool::push_i64`].
    pub unsafe fn push_cdata(&self, L: *mut lua_State, bits: u64, signed: bool) {
        // SAFETY: luaL_pushcdata returns the 8-byte payload of a new scalar
        // cdata of the given (64-bit integer) type, uninitialised.
        unsafe {
            let p = (self.push_cdata)(L, if signed { self.ctid_int64 } else { self.ctid_uint64 }) as *mut u64;
            p.write_unaligned(bits);
        }
    }

    /// Read the cdata at `idx`.
    ///
    /// # Safety
    /// `L` valid; the value at `idx` is a cdata (`lua_type` said so), so
    /// `luaL_checkcdata` does not raise.
    #[inline]
    pub unsafe fn read(&self, L: *mut lua_State, idx: c_int) -> Cdata {
        let mut id = 0u32;
        // SAFETY: the payload of an int64/uint64 cdata is 8 bytes, of a
        // `void *` cdata one pointer.
        unsafe {
            let p = (self.check_cdata)(L, idx, &mut id);
            if id == self.ctid_int64 {
                Cdata::I64((p as *const i64).read_unaligned())
            } else if id == self.ctid_uint64 {
                Cdata::U64((p as *const u64).read_unaligned())
            } else if id == self.ctid_void_ptr {
                if (p as *const *const c_void).read_unaligned().is_null() { Cdata::Null } else { Cdata::Unknown }
            } else {
                Cdata::Unknown
            }
        }
    }
}

/// `dlsym(RTLD_DEFAULT, name)`, `None` when absent.
fn sym(name: &std::ffi::CStr) -> Option<*mut c_void> {
    #[cfg(unix)]
    {
        // SAFETY: dlsym with RTLD_DEFAULT only reads the loaded objects'
        // symbol tables; `name` is NUL-terminated.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        if p.is_null() { None } else { Some(p) }
    }
    #[cfg(not(unix))]
    {
        let _ = name;
        None
    }
}

/// State shared by the module and every schema it loads.
pub struct ModuleState {
    /// Tarantool's C API, when the host is Tarantool.
    pub tarantool: Option<Tarantool>,
    /// Set once a decode has put an entry in the unknown-field store: until
    /// then encode need not look there. Entries are weak, so this may stay
    /// set after they are collected; that only costs the lookups.
    pub unknown_stored: Cell<bool>,
    /// Set while a decode fills a long array on the parked thread
    /// (`crate::binary::decode::ctor::bulk`): a decode inside it (a finalizer's) keeps its
    /// own long arrays on its own stack.
    pub bulk_busy: Cell<bool>,
    /// LuaJIT: whether a `next` loop was compiled when the module loaded
    /// (`int64::HELPER_NEXT_COMPILES`), so that encode's fetchers run as
    /// traces; `true` elsewhere (unused).
    pub next_compiles: bool,
}

impl ModuleState {
    /// Whether the default of option `serialize` is on: inside Tarantool,
    /// whose serializers read `__serialize`.
    pub fn serialize_default(&self) -> bool {
        self.tarantool.is_some()
    }
}

/// Userdata payload holding the module state.
struct ModuleUd(Option<Rc<ModuleState>>);

/// Create the module state and the serializer metatables and store them in
/// the helper table at `helpers`.
///
/// # Safety
/// `L` valid with 8 free slots; `helpers` absolute. May raise (out of
/// memory, or inside `luaL_ctypeid`) before any Rust heap memory is owned.
pub unsafe fn create(L: *mut lua_State, helpers: c_int) {
    // SAFETY: table and userdata construction; the payload is written only
    // after the userdata has its __gc metatable, with no Lua call between
    // the allocation of the Rc and the write.
    unsafe {
        for (slot, kind) in [(Helper::SeqMt.at(), &b"seq"[..]), (Helper::MapMt.at(), &b"map"[..])] {
            ffi::lua_createtable(L, 0, 1);
            lua::push_bytes(L, b"__serialize");
            lua::push_bytes(L, kind);
            ffi::lua_rawset(L, -3);
            lua::rawseti(L, helpers, slot);
        }
        let tarantool = Tarantool::resolve(L);
        let next_compiles = !lua::IS_LUAJIT || {
            lua::rawgeti(L, helpers, Helper::NextCompiles.at());
            let b = ffi::lua_toboolean(L, -1) != 0;
            ffi::lua_pop(L, 1);
            b
        };
        ffi::lua_createtable(L, 0, 1);
        lua::push_bytes(L, b"__gc");
        ffi::lua_pushcfunction(L, module_gc);
        ffi::lua_rawset(L, -3);
        let ud = ffi::lua_newuserdata(L, std::mem::size_of::<ModuleUd>()) as *mut ModuleUd;
        ud.write(ModuleUd(None));
        ffi::lua_insert(L, -2);
        ffi::lua_setmetatable(L, -2);
        (*ud).0 = Some(Rc::new(ModuleState {
            tarantool,
            unknown_stored: Cell::new(false),
            bulk_busy: Cell::new(false),
            next_compiles,
        }));
        lua::rawseti(L, helpers, Helper::Module.at());
    }
}

/// The module state from the helper table at `helpers`.
///
/// # Safety
/// `L` valid with one free slot; `helpers` indexes the helper table made by
/// `luaopen_protolua`.
pub unsafe fn get(L: *mut lua_State, helpers: c_int) -> Rc<ModuleState> {
    // SAFETY: slot `Helper::Module` holds a ModuleUd made by `create`, set
    // before the helper table is handed to any Lua code.
    unsafe {
        lua::rawgeti(L, helpers, Helper::Module.at());
        let ud = ffi::lua_touserdata(L, -1) as *const ModuleUd;
        ffi::lua_pop(L, 1);
        let state = ud.as_ref().and_then(|u| u.0.clone());
        state.unwrap_or_else(|| {
            Rc::new(ModuleState {
                tarantool: None,
                unknown_stored: Cell::new(true),
                bulk_busy: Cell::new(false),
                next_compiles: true,
            })
        })
    }
}

/// `__gc` of the module-state userdata.
///
/// # Safety
/// Called by Lua only, as the `__gc` of the module-state userdata
/// (argument 1), whose metatable [`create`] sets.
unsafe extern "C-unwind" fn module_gc(L: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with our userdata as argument 1.
    unsafe {
        let ud = ffi::lua_touserdata(L, 1) as *mut ModuleUd;
        if let Some(ud) = ud.as_mut() {
            drop(ud.0.take());
        }
    }
    0
}
