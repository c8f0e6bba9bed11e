-- protolua.pb: lua-protobuf's `pb` API over protolua schemas (docs/PB_COMPAT.md).
--
-- A state holds the loaded files (FileDescriptorProto tables, by name) and
-- one protolua schema built from all of them; each pb.load merges its files
-- in and rebuilds that schema. lua-protobuf's options map onto protolua's
-- load options; a schema is built per distinct option set (lazily, kept
-- while the state lives), so pb.encode/pb.decode pass no option table.
-- What protolua cannot express in its options (hooks, '#' int64 strings,
-- default metatables, default sub-messages) is done by a walk over the
-- decoded table, run only when one of those is enabled.
local protolua = require('protolua')
-- The walks' constructor (walk.lua) and the native entry points'
-- constructors (mod.rs: native.encode(fast, slow), native.decode), passed
-- by the loader.
local make_walk, native = ...
-- The fast paths: type name (both spellings) -> bound encode/decode method
-- and handle of each type whose plain call is the whole job (try_fn: an
-- encode that retries through the walk when refused). Cleared by bump().
-- enc_c/dec_c: the same plain types' entries for the native entry points.
local fast = { enc_fn = {}, enc_h = {}, dec_fn = {}, dec_h = {}, try_fn = {}, lit_e = {}, enc_c = {}, dec_c = {} }

local type, pairs, ipairs, rawget, rawset, setmetatable, tostring, tonumber, error, pcall =
    type, pairs, ipairs, rawget, rawset, setmetatable, tostring, tonumber, error, pcall
local fmt, concat = string.format, table.concat

local pb = {}

local has_int = math.type ~= nil and math.type(1) == 'integer'

-- The descriptor schema: FileDescriptorSet bytes <-> tables.
local desc = protolua.parse('syntax = "proto2"; import "google/protobuf/descriptor.proto";',
    { name = 'protolua/pb_descriptor.proto', enums = 'number', int64 = 'string' })
local FDS = desc:message('google.protobuf.FileDescriptorSet')

-- pb.encode, and pb.decode but on LuaJIT, are C entry points (below),
-- which remember the last type each served (`last`, reset with the
-- entries). LuaJIT's decode stays the Lua function: Msg:decode's own
-- upvalues give its root fast path cached table constructors, which the
-- entry point cannot reach. (PROTOLUA_PB_NATIVE=0/1 forces either way,
-- for tests and measuring.)
local force = os.getenv('PROTOLUA_PB_NATIVE')
local use_native = native and force ~= '0'
local native_decode = use_native and (not jit or force == '1')
local last = use_native and native.last() or nil

-- Field type numbers (FieldDescriptorProto.Type) to lua-protobuf's names.
local TYPE_NAMES = {
    'double', 'float', 'int64', 'uint64', 'int32', 'fixed64', 'fixed32', 'bool', 'string',
    'group', 'message', 'bytes', 'uint32', 'enum', 'sfixed32', 'sfixed64', 'sint32', 'sint64',
}
local IS64 = { [3] = true, [4] = true, [6] = true, [16] = true, [18] = true }
local UNSIGNED64 = { [4] = true, [6] = true }
local PACKABLE = {}
for i = 1, 18 do PACKABLE[i] = not (i == 9 or i == 10 or i == 11 or i == 12) end

-- Options (per Lua state, as lua-protobuf's).
local opt = {
    enum_as_value = false, int64 = 'number', defaults = 'auto',
    decode_default_array = false, decode_default_message = false,
    encode_default_values = false, encode_order = false,
    dec_hooks = false, enc_hooks = false, lax = false,
}
-- Bumped by every pb.option and state change: type entries re-derive
-- their handle and walk flags when it differs from theirs.
local version = 0

local function bump()
    version = version + 1
    for _, t in pairs(fast) do
        for k in pairs(t) do t[k] = nil end
    end
    if last then native.reset(last) end
end

local OPTIONS = {
    enum_as_name = function() opt.enum_as_value = false end,
    enum_as_value = function() opt.enum_as_value = true end,
    int64_as_number = function() opt.int64 = 'number' end,
    int64_as_string = function() opt.int64 = 'string' end,
    int64_as_hexstring = function() opt.int64 = 'hexstring' end,
    encode_order = function() opt.encode_order = true end,
    no_encode_order = function() opt.encode_order = false end,
    encode_default_values = function() opt.encode_default_values = true end,
    no_encode_default_values = function() opt.encode_default_values = false end,
    auto_default_values = function() opt.defaults = 'auto' end,
    no_default_values = function() opt.defaults = 'none' end,
    use_default_values = function() opt.defaults = 'values' end,
    use_default_metatable = function() opt.defaults = 'metatable' end,
    decode_default_array = function() opt.decode_default_array = true end,
    no_decode_default_array = function() opt.decode_default_array = false end,
    decode_default_message = function() opt.decode_default_message = true end,
    no_decode_default_message = function() opt.decode_default_message = false end,
    enable_hooks = function() opt.dec_hooks = true end,
    disable_hooks = function() opt.dec_hooks = false end,
    enable_enchooks = function() opt.enc_hooks = true end,
    disable_enchooks = function() opt.enc_hooks = false end,
    -- protolua's own: lua-protobuf's laxness where protolua is strict.
    lax = function() opt.lax = true end,
    strict = function() opt.lax = false end,
}

--- pb.option(name): set one decoder/encoder option.
function pb.option(name)
    local f = OPTIONS[name]
    if not f then
        error(fmt("bad argument #1 to 'option' (invalid option '%s')", tostring(name)), 2)
    end
    f()
    bump()
end

---------------------------------------------------------------------------
-- States

local State = { __name = 'pb.State' }
State.__index = State
State.__tostring = function(s) return fmt('pb.State: %s', s.id) end

local function new_state()
    local s = setmetatable({
        files = {}, -- name -> FileDescriptorProto table
        order = {}, -- file names, load order
        types = {}, -- '.pkg.T' and 'pkg.T' -> entry
        list = {}, -- entries in load order
        schemas = {}, -- option signature -> protolua schema
        bytes = nil, -- the merged FileDescriptorSet
        hooks = {}, enchooks = {}, defs = {},
    }, State)
    s.id = tostring({}):match('0x%x+') or tostring(#s.order)
    return s
end

local cur = nil
local function state()
    if not cur then
        cur = new_state()
        bump()
    end
    return cur
end

--- pb.state([s]): the current state; with an argument, set it (nil
--- discards it) and return the old one.
function pb.state(...)
    local old = cur or state()
    if select('#', ...) > 0 then
        local s = ...
        if s ~= nil and getmetatable(s) ~= State then
            error("bad argument #1 to 'state' (pb.State expected, got " .. type(s) .. ')', 2)
        end
        cur = s
        bump()
    end
    return old
end

---------------------------------------------------------------------------
-- Type index, built from the loaded files' descriptors

local function add_enum(st, e, prefix, file)
    local full = prefix .. '.' .. e.name
    local entry = { name = full, basename = e.name, kind = 'enum', values = {}, by_name = {}, by_number = {}, file = file }
    for _, v in ipairs(e.value or {}) do
        local item = { name = v.name, number = v.number }
        entry.values[#entry.values + 1] = item
        entry.by_name[v.name] = item
        if entry.by_number[v.number] == nil then entry.by_number[v.number] = item end
    end
    return entry
end

-- One field's description (pb.field's values and what the walks need).
local function field_item(f, proto3, oneofs)
    local t = f.type
    local repeated = f.label == 3
    local packed = false
    if repeated and PACKABLE[t] then
        if f.options and f.options.packed ~= nil then packed = f.options.packed else packed = proto3 end
    end
    local oneof_index = f.oneof_index
    return {
        name = f.name, number = f.number, type_id = t,
        type = f.type_name or TYPE_NAMES[t] or '<unknown>',
        ref = f.type_name, default = f.default_value,
        label = repeated and (packed and 'packed' or 'repeated') or 'optional',
        repeated = repeated, oneof_index = oneof_index,
        oneof_name = oneof_index and oneofs[oneof_index + 1] and oneofs[oneof_index + 1].name,
        is64 = IS64[t], unsigned = UNSIGNED64[t],
        is_msg = t == 11 or t == 10, is_enum = t == 14, p3opt = f.proto3_optional,
    }
end

local function add_message(st, m, prefix, file, proto3, out, exts)
    local full = prefix .. '.' .. m.name
    local is_map = m.options ~= nil and m.options.map_entry == true
    local entry = {
        name = full, basename = m.name, kind = is_map and 'map' or 'message', full = full:sub(2),
        proto3 = proto3, fields = {}, by_name = {}, by_number = {}, file = file,
        oneofs = {}, -- names of the real (not proto3 optional) oneofs
    }
    local oneofs = m.oneof_decl or {}
    for _, f in ipairs(m.field or {}) do
        local item = field_item(f, proto3, oneofs)
        if item.oneof_name and not entry.oneofs[item.oneof_name] then
            entry.oneofs[item.oneof_name] = true
            entry.has_oneof = true
        end
        if f.proto3_optional then entry.p3opt = true end
        entry.fields[#entry.fields + 1] = item
        entry.by_name[item.name] = item
        entry.by_number[item.number] = item
    end
    for _, x in ipairs(m.extension or {}) do exts[#exts + 1] = { x, full, proto3 } end
    out[#out + 1] = entry
    for _, n in ipairs(m.nested_type or {}) do add_message(st, n, full, file, proto3, out, exts) end
    for _, e in ipairs(m.enum_type or {}) do out[#out + 1] = add_enum(st, e, full, file) end
end

local function index_types(st)
    local types, list, exts = {}, {}, {}
    for _, name in ipairs(st.order) do
        local f = st.files[name]
        local prefix = (f.package and f.package ~= '') and ('.' .. f.package) or ''
        local proto3 = f.syntax == 'proto3'
        local out = {}
        for _, x in ipairs(f.extension or {}) do exts[#exts + 1] = { x, prefix, proto3 } end
        for _, m in ipairs(f.message_type or {}) do add_message(st, m, prefix, name, proto3, out, exts) end
        for _, e in ipairs(f.enum_type or {}) do out[#out + 1] = add_enum(st, e, prefix, name) end
        for _, e in ipairs(out) do
            list[#list + 1] = e
            types[e.name] = e
            types[e.name:sub(2)] = e
        end
    end
    -- Extensions are fields of the extended message under their own name,
    -- as lua-protobuf has them, where no field and no other extension of
    -- the message has that name (protolua's ext_keys = 'short' rule); the
    -- others keep protolua's key '[full.name]' and are not listed.
    local count = {}
    for _, x in ipairs(exts) do
        local k = (x[1].extendee or '') .. ' ' .. x[1].name
        count[k] = (count[k] or 0) + 1
    end
    for _, x in ipairs(exts) do
        local f, scope = x[1], x[2]
        local target = types[f.extendee or '']
        if target and target.by_name[f.name] == nil and count[f.extendee .. ' ' .. f.name] == 1 then
            local item = field_item(f, x[3], {})
            item.ext_key = '[' .. (scope .. '.' .. f.name):gsub('^%.', '') .. ']'
            target.fields[#target.fields + 1] = item
            target.by_name[item.name] = item
            target.by_number[item.number] = item
            target.has_ext = true
        end
    end
    st.types, st.list = types, list
end

-- Rebuild the merged set from `files`/`order`; on success install it.
local function rebuild(st, files, order)
    local set = {}
    for i, name in ipairs(order) do set[i] = files[name] end
    local ok, bytes = pcall(FDS.encode, FDS, { file = set })
    if not ok then return nil, bytes end
    -- Resolution check now (with protolua's defaults), so pb.load reports it.
    local built, err = pcall(protolua.load, bytes)
    if not built then return nil, err end
    st.files, st.order, st.bytes, st.schemas = files, order, bytes, {}
    index_types(st)
    bump()
    return true
end

local function byte_of(err)
    return tonumber(tostring(err):match('at byte (%d+)')) or 0
end

--- pb.load(data): merge a FileDescriptorSet into the state. Returns
--- `true, pos` or `false, pos` (and, past lua-protobuf, the error).
function pb.load(data)
    if type(data) ~= 'string' then
        error("bad argument #1 to 'load' (string expected, got " .. type(data) .. ')', 2)
    end
    local st = state()
    local ok, set = pcall(FDS.decode, FDS, data)
    if not ok then return false, byte_of(set) + 1, set end
    local files, order = {}, {}
    for _, name in ipairs(st.order) do
        files[name] = st.files[name]
        order[#order + 1] = name
    end
    for _, f in ipairs(set.file or {}) do
        local name = f.name or ''
        if files[name] == nil then order[#order + 1] = name end
        files[name] = f
    end
    local done, err = rebuild(st, files, order)
    if not done then return false, #data + 1, err end
    return true, #data + 1
end

--- pb.loadfile(path): pb.load of a file's bytes.
function pb.loadfile(path)
    local fh, err = io.open(path, 'rb')
    if not fh then error(err, 2) end
    local data = fh:read('*a')
    fh:close()
    return pb.load(data)
end

--- pb.clear(): forget every type; pb.clear(type): forget one type.
function pb.clear(name)
    local st = state()
    if name == nil then
        cur = new_state()
        bump()
        return
    end
    local e = st.types[name]
    if not e then return end
    st.types[e.name], st.types[e.name:sub(2)] = nil, nil
    for i, x in ipairs(st.list) do
        if x == e then
            table.remove(st.list, i)
            break
        end
    end
    bump()
end

-- `level`: where the error points (default 3: the caller of find's caller).
local function find(name, fn, level)
    local st = cur or state()
    local e = type(name) == 'string' and st.types[name]
    if not e then
        error(fmt("bad argument #1 to '%s' (type '%s' does not exists)", fn, tostring(name)), level or 3)
    end
    return e, st
end

---------------------------------------------------------------------------
-- Per-type derived data: the handle for the current options, walk flags

local int64_mode_native = has_int and 'auto' or 'number'

-- `native`: the whole tree is proto3 without proto3 `optional` fields, so
-- protolua's own defaults (zeros, the first enum value, empty arrays and
-- maps) are lua-protobuf's; otherwise the walk fills them per message.
local function schema_for(st, native)
    local defaults, empty = 'none', opt.decode_default_array
    if native and (opt.defaults == 'values' or opt.defaults == 'auto') then
        defaults = 'values'
        empty = true
    elseif native and opt.defaults == 'metatable' then
        empty = true
    end
    local lax = opt.lax
    local int64 = opt.int64 == 'number' and int64_mode_native or 'string'
    local enums = opt.enum_as_value and 'number' or 'name'
    local zeros = opt.encode_default_values
    local sig = concat({ enums, int64, defaults, tostring(empty), tostring(lax), tostring(zeros) }, ',')
    local s = st.schemas[sig]
    if not s then
        s = protolua.load(st.bytes, {
            enums = enums, int64 = int64, defaults = defaults, empty = empty,
            unknown = 'drop', strict_keys = not lax, required = not lax, utf8 = not lax,
            encode_zeros = zeros, hash_int64 = true, ext_keys = 'short',
        })
        st.schemas[sig] = s
    end
    return s
end

-- Whether a oneof occurs in the message or below it.
local function reaches_oneof(e, st, seen)
    if e.has_oneof then return true end
    seen[e] = true
    for _, f in ipairs(e.fields) do
        local sub = f.is_msg and st.types[f.ref]
        if sub and not seen[sub] and reaches_oneof(sub, st, seen) then return true end
    end
    return false
end

-- Whether every message in the tree is proto3 with no proto3 `optional`.
local function pure_proto3(e, st, seen)
    if not e.proto3 or e.p3opt then return false end
    seen[e] = true
    for _, f in ipairs(e.fields) do
        local sub = f.is_msg and st.types[f.ref]
        if sub and not seen[sub] and not pure_proto3(sub, st, seen) then return false end
    end
    return true
end

-- Whether no message in the tree is proto3 (so 'auto' fills nothing).
local function pure_proto2(e, st, seen)
    if e.proto3 then return false end
    seen[e] = true
    for _, f in ipairs(e.fields) do
        local sub = f.is_msg and st.types[f.ref]
        if sub and not seen[sub] and not pure_proto2(sub, st, seen) then return false end
    end
    return true
end

-- A type's option-independent flags, computed once.
local function classify(e, st)
    e.native = pure_proto3(e, st, {})
    e.p2 = pure_proto2(e, st, {})
    -- Decode sets oneof name keys, which encode may meet again.
    e.oneof_walk = reaches_oneof(e, st, {})
end

local function prepare(e, st)
    if e.native == nil then classify(e, st) end
    e.h = schema_for(st, e.native):message(e.full)
    -- The bound methods, fetched once (a handle's __index is a lookup).
    e.enc, e.dec = e.h.encode, e.h.decode
    e.entry = last and native.entry(e.enc) or nil
    e.ver = version
    -- What the walk fills: nothing, 'auto' (proto3 messages), 'values'
    -- (every message), 'arrays' (proto3 arrays and maps, for metatables).
    local d = opt.defaults
    e.fill = nil
    if not e.native then
        if d == 'values' then
            e.fill = 'values'
        elseif d == 'auto' and not e.p2 then
            e.fill = 'auto'
        elseif d == 'metatable' and not e.p2 then
            e.fill = 'arrays'
        end
    end
    e.walk = opt.int64 ~= 'number' or opt.defaults == 'metatable' or opt.decode_default_message
        or (opt.dec_hooks and next(st.hooks) ~= nil) or e.fill
        or st.defs['*map'] ~= nil or st.defs['*array'] ~= nil
    -- Only oneof name keys to set: the light walk.
    e.light = not e.walk and e.oneof_walk
    e.walk = e.walk or e.oneof_walk
    -- '#' int64 strings and extension short names are the schema's own
    -- (hash_int64, ext_keys = 'short'): only encode hooks need the walk,
    -- and only oneof name keys (refused when strict) a protected retry.
    e.enc_walk = opt.enc_hooks and next(st.enchooks) ~= nil
    e.enc_retry = e.oneof_walk and not opt.lax
    e.enc_plain = not e.enc_walk and not e.enc_retry
    e.dec_plain = not e.walk
    if st == cur then
        for _, n in ipairs({ e.name, e.name:sub(2) }) do
            if e.enc_plain then fast.enc_fn[n], fast.enc_h[n], fast.enc_c[n] = e.enc, e.h, e.entry end
            if not e.enc_walk and e.enc_retry then fast.try_fn[n], fast.enc_h[n] = e.enc, e.h end
            if e.dec_plain then fast.dec_fn[n], fast.dec_h[n], fast.dec_c[n] = e.dec, e.h, e.entry end
            if e.light then fast.lit_e[n] = e end
        end
    end
end

local W = make_walk({
    opt = opt,
    classify = classify,
    has_int = has_int,
    -- A type's handle and flags for the current options.
    ready = function(e, st)
        if e.ver ~= version then prepare(e, st) end
    end,
})
local defaults_table = W.defaults_table

--- pb.defaults(type [, t]): the table of a message type's default values
--- (its metatable under use_default_metatable); with `t`, set it (nil
--- clears it). '*map' and '*array' name the metatables of maps and arrays.
function pb.defaults(name, ...)
    local st = state()
    if name == '*map' or name == '*array' then
        local old = st.defs[name]
        if select('#', ...) > 0 then
            st.defs[name] = (...)
            bump()
        end
        return old
    end
    local e = find(name, 'defaults')
    local old = defaults_table(e, st)
    if select('#', ...) > 0 then
        local t = ...
        if t ~= nil then t.__index = t.__index or t end
        st.defs[e.name] = t
        bump()
    end
    return old
end

---------------------------------------------------------------------------
-- Encode / decode

local function not_message(name, fn)
    error(fmt("bad argument #1 to '%s' (type '%s' is not a message type)", fn, tostring(name)), 3)
end

local function encode_slow(name, t)
    local st = cur or state()
    local e = st.types[name]
    if not e then e, st = find(name, 'encode') end
    if e.ver ~= version then
        if e.kind == 'enum' then not_message(name, 'encode') end
        prepare(e, st)
    end
    if e.enc_walk then return e.enc(e.h, W.pre(e, t, st)) end
    if not e.enc_retry then return e.enc(e.h, t) end
    local ok, bytes = pcall(e.enc, e.h, t)
    if ok then return bytes end
    -- Decode's oneof name keys are taken by the walk, run only when the
    -- plain encode refuses the table.
    local ok2, walked = pcall(W.pre, e, t, st)
    if not ok2 or walked == t then error(bytes, 0) end
    return e.enc(e.h, walked)
end

--- pb.encode(type, t): the message's bytes.
local enc_fn, enc_h, dec_fn, dec_h, try_fn = fast.enc_fn, fast.enc_h, fast.dec_fn, fast.dec_h, fast.try_fn

local function lua_encode(name, t)
    local f = enc_fn[name]
    if f then return f(enc_h[name], t) end
    f = try_fn[name]
    if f then
        local ok, bytes = pcall(f, enc_h[name], t)
        if ok then return bytes end
    end
    return encode_slow(name, t)
end

local decode_into

local function decode_slow(name, data, into)
    local st = cur or state()
    local e = st.types[name]
    if not e then e, st = find(name, 'decode') end
    if e.ver ~= version then
        if e.kind == 'enum' then not_message(name, 'decode') end
        prepare(e, st)
    end
    if into ~= nil then return decode_into(e, st, data, into) end
    local t = e.dec(e.h, data or '')
    if e.light then
        t = W.light(e, t, st)
    elseif e.walk then
        t = W.post(e, t, st, e.fill)
    end
    return t
end

--- pb.decode(type, data [, t]): the decoded table (merged into `t` if given).
local lit_e, light = fast.lit_e, W.light

local function lua_decode(name, data, into)
    local f = dec_fn[name]
    if f and into == nil and data then return f(dec_h[name], data) end
    local e = lit_e[name]
    if e and into == nil and data then return light(e, e.dec(e.h, data), cur) end
    return decode_slow(name, data, into)
end

-- The C entry points serve the types in enc_c/dec_c with no Lua call in
-- between (on an interpreted Lua that call costs about a fifth of
-- encoding a small message) and call the Lua functions above for the
-- rest.
pb.encode = use_native and native.encode(fast.enc_c, lua_encode, FDS.encode, last) or lua_encode
pb.decode = native_decode and native.decode(fast.dec_c, lua_decode, FDS.encode, last) or lua_decode

local INTO_OPTS = { defaults = 'none', empty = false }

-- lua-protobuf fills no defaults when decoding into a given table.
decode_into = function(e, st, data, into)
    local t = e.h:decode(data or '', INTO_OPTS)
    if e.walk then
        t = W.post(e, t, st, nil)
    end
    for k, v in pairs(t) do into[k] = v end
    local mt = getmetatable(t)
    if mt and getmetatable(into) == nil then setmetatable(into, mt) end
    return into
end

---------------------------------------------------------------------------
-- Reflection

local function push_type(e)
    if e == nil then return end
    return e.name, e.basename, e.kind
end

--- pb.type(name): full name (with the leading dot), basename, and
--- 'message' | 'map' | 'enum'; nothing for an unknown type.
function pb.type(name)
    local st = cur or state()
    return push_type(st.types[name])
end

--- pb.types(): an iterator over every type, as pb.type gives them.
function pb.types()
    local st = cur or state()
    local list, i = st.list, 0
    return function()
        i = i + 1
        return push_type(list[i])
    end
end

local function push_field(f)
    if f == nil then return end
    if f.type_id == nil then
        -- An enum value.
        return f.name, f.number, 'enum'
    end
    if f.oneof_name then
        return f.name, f.number, f.type, f.default, f.label, f.oneof_name, f.oneof_index
    end
    return f.name, f.number, f.type, f.default, f.label
end

local function items_of(e)
    return e.kind == 'enum' and e.values or e.fields
end

--- pb.fields(type): an iterator over a message's fields (name, number,
--- type, default, label, oneof name, oneof index) or an enum's values.
function pb.fields(name)
    local e = find(name, 'fields')
    local items, i = items_of(e), 0
    return function()
        i = i + 1
        return push_field(items[i])
    end
end

--- pb.field(type, name_or_number): one field's information, as pb.fields.
function pb.field(name, key)
    local e = find(name, 'field')
    local f = type(key) == 'number' and e.by_number[key] or e.by_name[key]
    return push_field(f)
end

--- pb.enum(type, name | number): the number of a name, the name of a number.
function pb.enum(name, key)
    local e = find(name, 'enum')
    local item
    if type(key) == 'number' then
        item = e.by_number[key]
        if item then return item.name end
        return
    end
    item = e.by_name[key]
    if item then return item.number end
end

---------------------------------------------------------------------------
-- Hooks

-- Fixed parameters and no tail call from the vararg entry points: Debian
-- 12's LuaJIT 2.1.0-beta3 now and then handed `set_hook` itself to a
-- vararg tail callee as its `...` (seen as a hook that was set_hook).
local function set_hook(tbl_name, fn_name, name, has_f, f)
    local st = state()
    local e = find(name, fn_name, 4)
    local hooks = st[tbl_name]
    local old = hooks[e.name]
    if has_f then
        if f ~= nil and type(f) ~= 'function' then
            error(fmt("bad argument #2 to '%s' (function expected, got %s)", fn_name, type(f)), 3)
        end
        hooks[e.name] = f
        bump()
    end
    return old
end

--- pb.hook(type [, fn]): get or set the decode hook of a type.
function pb.hook(name, ...)
    local old = set_hook('hooks', 'hook', name, select('#', ...) > 0, (...))
    return old
end

--- pb.encode_hook(type [, fn]): get or set the encode hook of a type.
function pb.encode_hook(name, ...)
    local old = set_hook('enchooks', 'encode_hook', name, select('#', ...) > 0, (...))
    return old
end

---------------------------------------------------------------------------
-- Hex helpers

--- pb.tohex(s): 'HH HH ...', uppercase.
function pb.tohex(s)
    return (s:gsub('.', function(c) return fmt('%02X ', c:byte()) end):gsub(' $', ''))
end

--- pb.fromhex(s): the bytes of the hex digit pairs in `s` (other characters skipped).
function pb.fromhex(s)
    local digits = s:gsub('%X', '')
    if #digits % 2 == 1 then digits = digits:sub(1, -2) end
    return (digits:gsub('(%x)(%x)', function(a, b) return string.char(tonumber(a .. b, 16)) end))
end

-- The descriptor set of the state's files (protolua's own, for protoc).
function pb._descriptor_set()
    return (cur or state()).bytes
end

pb._desc = desc
pb._FDS = FDS

return pb
