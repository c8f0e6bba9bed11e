//! The options a codec runs with: set at load (`protolua.load(bytes, opts)`)
//! and per call. Read from Lua by `crate::api::options`; every codec takes
//! them as a plain value.

use crate::lua::int64::Int64Mode;

/// Default nesting limit for decode and encode.
pub const DEFAULT_MAX_DEPTH: u32 = 100;
/// Largest accepted `max_depth`. The walk recurses on the C stack, up to
/// about 1.6 KiB per level in release builds (measured in tests/adversarial.rs),
/// and a Tarantool fiber has 512 KiB: 200 levels (~330 KiB) leave room for
/// the Lua and Tarantool frames below. 300 and more overflowed it.
pub const MAX_MAX_DEPTH: u32 = 200;

/// Per-schema options (`protolua.load(bytes, opts)`).
#[derive(Clone, Copy, Debug)]
pub struct LoadOptions {
    /// Nesting limit (`max_depth`).
    pub max_depth: u32,
    /// Refuse unknown keys on encode (`strict_keys`).
    pub strict_keys: bool,
    /// Keep unknown fields on decode and write them back on encode
    /// (`unknown = 'keep'|'drop'`).
    pub keep_unknown: bool,
    /// Check proto2 `required` fields on encode and decode (`required`).
    pub check_required: bool,
    /// Decode enum values as numbers (`enums = 'name'|'number'`).
    pub enums_as_number: bool,
    /// How decode returns 64-bit integers (`int64 = 'auto'|'number'|'string'|'cdata'`).
    pub int64: Int64Mode,
    /// Check UTF-8 of proto3/editions `string` fields (`utf8`).
    pub utf8: bool,
    /// Decode absent repeated/map fields as empty tables (`empty`).
    pub empty: bool,
    /// What decode does for absent singular fields (`defaults`).
    pub defaults: DefaultsMode,
    /// Give decoded messages, maps and repeated fields Tarantool's
    /// serializer metatables (`serialize`; default on inside Tarantool).
    pub serialize: bool,
    /// Build decoded message tables with generated Lua constructors where
    /// a shape allows (`constructors`; LuaJIT only, see `shape_ctor`);
    /// off, every table is built through the C API. Same result.
    pub constructors: bool,
    /// Each codec strategy on or off (`strategies = { ... }`): for tests,
    /// differential fuzzing and measuring; every setting gives the same
    /// result.
    pub strategies: Strategies,
    /// The JSON methods' own options (`json_names`, `emit_defaults`,
    /// `ignore_unknown`, `indent`: `crate::api::json`).
    pub json: JsonLoadOptions,
    /// Binary encode writes implicit-presence fields the table holds even
    /// when zero (`encode_zeros`; load only: it is in the plans).
    pub encode_zeros: bool,
    /// Encode takes lua-protobuf's `'#'`-prefixed 64-bit integer strings
    /// (`hash_int64`; load only).
    pub hash_int64: bool,
    /// Extensions' Lua keys are their short names where unique
    /// (`ext_keys = 'short'`; load only).
    pub short_ext_keys: bool,
}

/// The JSON options, at load and per call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonLoadOptions {
    /// `json_names`.
    pub json_names: bool,
    /// `emit_defaults`.
    pub emit_defaults: bool,
    /// `ignore_unknown`.
    pub ignore_unknown: bool,
    /// `indent` (nil: compact).
    pub indent: Option<u8>,
}

impl JsonLoadOptions {
    /// The defaults: JSON names, no defaults printed, unknown keys refused,
    /// compact output.
    pub const DEFAULT: JsonLoadOptions =
        JsonLoadOptions { json_names: true, emit_defaults: false, ignore_unknown: false, indent: None };
}

/// The codec's strategies, each switchable off (docs/ARCHITECTURE.md's
/// strategy table). Off, the next strategy of the cascade (finally the
/// general walk, or encode's probe) does the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strategies {
    /// Decode: the root fast path (`binary::decode::root_fast`).
    pub root_fast: bool,
    /// Decode, LuaJIT: the root fast path's constructors by shape.
    pub root_ctors: bool,
    /// Decode, LuaJIT: messages of the general walk built by constructor.
    pub message_ctors: bool,
    /// Decode, LuaJIT: whole trees built by one constructor.
    pub tree_ctors: bool,
    /// Decode, LuaJIT: the memoised tree's program, run before its
    /// signature walk.
    pub tree_program: bool,
    /// Decode, LuaJIT: long arrays built by one call, on the parked thread.
    pub bulk_arrays: bool,
    /// Encode, LuaJIT: fields fetched by a generated Lua function.
    pub fetch: bool,
    /// Encode: sparse tables walked with `lua_next` instead of probed.
    pub walk: bool,
}

impl Strategies {
    /// Every strategy on.
    pub const ALL: Strategies = Strategies {
        root_fast: true,
        root_ctors: true,
        message_ctors: true,
        tree_ctors: true,
        tree_program: true,
        bulk_arrays: true,
        fetch: true,
        walk: true,
    };

    /// The option names, in the order of [`Self::flags_mut`].
    pub const NAMES: [&'static str; 8] =
        ["root_fast", "root_ctors", "message_ctors", "tree_ctors", "tree_program", "bulk_arrays", "fetch", "walk"];

    /// The switches, in the order of [`Self::NAMES`].
    pub fn flags_mut(&mut self) -> [&mut bool; 8] {
        [
            &mut self.root_fast,
            &mut self.root_ctors,
            &mut self.message_ctors,
            &mut self.tree_ctors,
            &mut self.tree_program,
            &mut self.bulk_arrays,
            &mut self.fetch,
            &mut self.walk,
        ]
    }
}

/// Option `defaults = 'none'|'values'|'metatable'`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultsMode {
    /// Absent fields stay nil.
    None,
    /// Absent scalar/enum/string fields (outside oneofs) get their declared
    /// default or the type's zero value, in the table itself.
    Values,
    /// The table gets a metatable, shared by every table of the message type,
    /// whose `__index` holds those defaults: no per-message copy, `pairs()`
    /// shows only what was on the wire.
    Metatable,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_depth: DEFAULT_MAX_DEPTH,
            strict_keys: true,
            keep_unknown: true,
            check_required: true,
            enums_as_number: false,
            int64: Int64Mode::Auto,
            utf8: true,
            empty: false,
            defaults: DefaultsMode::None,
            serialize: false,
            constructors: true,
            strategies: Strategies::ALL,
            json: JsonLoadOptions::DEFAULT,
            encode_zeros: false,
            hash_int64: false,
            short_ext_keys: false,
        }
    }
}
