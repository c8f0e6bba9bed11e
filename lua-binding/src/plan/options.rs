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
        }
    }
}
