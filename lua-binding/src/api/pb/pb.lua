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

local type, pairs, ipairs, rawget, rawset, setmetatable, tostring, tonumber, error, pcall =
    type, pairs, ipairs, rawget, rawset, setmetatable, tostring, tonumber, error, pcall
local fmt, concat, floor = string.format, table.concat, math.floor

local pb = {}

local is_luajit = type(jit) == 'table'
local has_int = math.type ~= nil and math.type(1) == 'integer'

-- The descriptor schema: FileDescriptorSet bytes <-> tables.
local desc = protolua.parse('syntax = "proto2"; import "google/protobuf/descriptor.proto";',
    { name = 'protolua/pb_descriptor.proto', enums = 'number', int64 = 'string' })
local FDS = desc:message('google.protobuf.FileDescriptorSet')
local FDP = desc:message('google.protobuf.FileDescriptorProto')

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
    version = version + 1
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
        version = version + 1
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
        version = version + 1
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

local function add_message(st, m, prefix, file, proto3, out)
    local full = prefix .. '.' .. m.name
    local is_map = m.options ~= nil and m.options.map_entry == true
    local entry = {
        name = full, basename = m.name, kind = is_map and 'map' or 'message', full = full:sub(2),
        proto3 = proto3, fields = {}, by_name = {}, by_number = {}, file = file,
        oneofs = {}, -- names of the real (not proto3 optional) oneofs
    }
    local oneofs = m.oneof_decl or {}
    for _, f in ipairs(m.field or {}) do
        local t = f.type
        local repeated = f.label == 3
        local packed = false
        if repeated and PACKABLE[t] then
            if f.options and f.options.packed ~= nil then packed = f.options.packed else packed = proto3 end
        end
        local oneof_name, oneof_index
        if f.oneof_index then
            oneof_index = f.oneof_index
            oneof_name = oneofs[oneof_index + 1] and oneofs[oneof_index + 1].name
            if oneof_name and not entry.oneofs[oneof_name] then
                entry.oneofs[oneof_name] = true
                entry.has_oneof = true
            end
        end
        local item = {
            name = f.name, number = f.number, type_id = t,
            type = f.type_name or TYPE_NAMES[t] or '<unknown>',
            ref = f.type_name, default = f.default_value,
            label = repeated and (packed and 'packed' or 'repeated') or 'optional',
            repeated = repeated, oneof_name = oneof_name, oneof_index = oneof_index,
            is64 = IS64[t], unsigned = UNSIGNED64[t],
            is_msg = t == 11 or t == 10, is_enum = t == 14, p3opt = f.proto3_optional,
        }
        if f.proto3_optional then entry.p3opt = true end
        entry.fields[#entry.fields + 1] = item
        entry.by_name[item.name] = item
        entry.by_number[item.number] = item
    end
    out[#out + 1] = entry
    for _, n in ipairs(m.nested_type or {}) do add_message(st, n, full, file, proto3, out) end
    for _, e in ipairs(m.enum_type or {}) do out[#out + 1] = add_enum(st, e, full, file) end
end

local function index_types(st)
    local types, list = {}, {}
    for _, name in ipairs(st.order) do
        local f = st.files[name]
        local prefix = (f.package and f.package ~= '') and ('.' .. f.package) or ''
        local proto3 = f.syntax == 'proto3'
        local out = {}
        for _, m in ipairs(f.message_type or {}) do add_message(st, m, prefix, name, proto3, out) end
        for _, e in ipairs(f.enum_type or {}) do out[#out + 1] = add_enum(st, e, prefix, name) end
        for _, e in ipairs(out) do
            list[#list + 1] = e
            types[e.name] = e
            types[e.name:sub(2)] = e
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
    version = version + 1
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
        version = version + 1
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
    version = version + 1
end

local function find(name, fn)
    local st = cur or state()
    local e = type(name) == 'string' and st.types[name]
    if not e then
        error(fmt("bad argument #1 to '%s' (type '%s' does not exists)", fn, tostring(name)), 3)
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
    local sig = concat({ enums, int64, defaults, tostring(empty), tostring(lax) }, ',')
    local s = st.schemas[sig]
    if not s then
        s = protolua.load(st.bytes, {
            enums = enums, int64 = int64, defaults = defaults, empty = empty,
            unknown = 'drop', strict_keys = not lax, required = not lax, utf8 = not lax,
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

-- Whether a 64-bit integer field occurs in the message or below it.
local function reaches_int64(e, st, seen)
    seen[e] = true
    for _, f in ipairs(e.fields) do
        if f.is64 then return true end
        local sub = f.is_msg and st.types[f.ref]
        if sub and not seen[sub] and reaches_int64(sub, st, seen) then return true end
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

local function prepare(e, st)
    if e.native == nil then
        e.native = pure_proto3(e, st, {})
        e.p2 = pure_proto2(e, st, {})
        e.oneof_walk = reaches_oneof(e, st, {})
        -- Encode may meet '#' int64 strings or oneof name keys: it runs
        -- protected, to retry through the walk.
        e.enc_retry = e.oneof_walk or reaches_int64(e, st, {})
    end
    e.h = schema_for(st, e.native):message(e.full)
    -- The bound methods, fetched once (a handle's __index is a lookup).
    e.enc, e.dec = e.h.encode, e.h.decode
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
        or (opt.dec_hooks and next(st.hooks) ~= nil) or e.fill or e.oneof_walk
        or st.defs['*map'] ~= nil or st.defs['*array'] ~= nil
    e.enc_walk = (opt.enc_hooks and next(st.enchooks) ~= nil) or opt.int64 ~= 'number' or opt.lax
    e.enc_plain = not e.enc_walk and not e.enc_retry
    e.dec_plain = not e.walk
end

---------------------------------------------------------------------------
-- int64 as lua-protobuf's '#' strings

local INT_MIN, UINT_MAX = -2147483648, 4294967295

-- Decimal digits of |v| divided by 16: quotient digits and remainder.
local function div16(digits)
    local q, r = {}, 0
    for i = 1, #digits do
        local d = r * 10 + digits:byte(i) - 48
        q[#q + 1] = string.char(48 + floor(d / 16))
        r = d % 16
    end
    return (concat(q):gsub('^0+', '')), r
end

local function dec_to_hex(digits)
    if digits == '0' then return '' end
    local out = {}
    while digits ~= '' do
        local r
        digits, r = div16(digits)
        out[#out + 1] = ('0123456789ABCDEF'):sub(r + 1, r + 1)
    end
    return concat(out):reverse()
end

-- A decoded 64-bit value (a decimal string) in the current int64 mode.
local function int64_value(s)
    local n = tonumber(s)
    if n >= INT_MIN and n <= UINT_MAX then
        if has_int then return math.tointeger(n) or n end
        return n
    end
    local neg = s:sub(1, 1) == '-'
    local digits = neg and s:sub(2) or s
    if opt.int64 == 'string' then return '#' .. s end
    return '#' .. (neg and '-' or '') .. '0x' .. dec_to_hex(digits)
end

-- A '#'-prefixed string (decimal or 0x hex) as the decimal protolua takes.
local function from_hash(v)
    if type(v) ~= 'string' or v:sub(1, 1) ~= '#' then return v end
    local neg, body = v:match('^#(%-?)(.*)$')
    local hex = body:match('^0[xX](%x+)$')
    if not hex then return neg .. body end
    local digits = '0'
    for i = 1, #hex do
        -- digits = digits * 16 + hex digit, in decimal.
        local carry, out = tonumber(hex:sub(i, i), 16), {}
        for j = #digits, 1, -1 do
            local d = (digits:byte(j) - 48) * 16 + carry
            out[#out + 1] = string.char(48 + d % 10)
            carry = floor(d / 10)
        end
        while carry > 0 do
            out[#out + 1] = string.char(48 + carry % 10)
            carry = floor(carry / 10)
        end
        digits = (concat(out):reverse():gsub('^0+(%d)', '%1'))
    end
    return neg .. digits
end

---------------------------------------------------------------------------
-- Defaults tables (pb.defaults, use_default_metatable)

local function default_of(e, f, st)
    if f.repeated or f.oneof_index or f.p3opt or f.is_msg then return nil end
    local d = f.default
    local t = f.type_id
    if f.is_enum then
        local en = st.types[f.ref]
        if not en then return nil end
        local item = d and en.by_name[d] or (e.proto3 and en.values[1]) or nil
        if not item then return nil end
        return opt.enum_as_value and item.number or item.name
    elseif t == 9 or t == 12 then
        if d then return d end
        return e.proto3 and '' or nil
    elseif t == 8 then
        if d then return d == 'true' end
        if e.proto3 then return false end
    elseif t == 1 or t == 2 then
        if d then return tonumber(d) end
        if e.proto3 then return 0.0 end
    else
        if d then
            local n = tonumber(d)
            if n and f.is64 and opt.int64 ~= 'number' then return int64_value(d) end
            return n
        end
        if e.proto3 then return 0 end
    end
    return nil
end

local function defaults_table(e, st)
    local t = st.defs[e.name]
    if t == nil then
        t = {}
        for _, f in ipairs(e.fields) do
            local v = default_of(e, f, st)
            if v ~= nil then t[f.name] = v end
        end
        t.__index = t
        st.defs[e.name] = t
    end
    return t
end

--- pb.defaults(type [, t]): the table of a message type's default values
--- (its metatable under use_default_metatable); with `t`, set it (nil
--- clears it). '*map' and '*array' name the metatables of maps and arrays.
function pb.defaults(name, ...)
    local st = state()
    if name == '*map' or name == '*array' then
        local old = st.defs[name]
        if select('#', ...) > 0 then
            st.defs[name] = (...)
            version = version + 1
        end
        return old
    end
    local e = find(name, 'defaults')
    local old = defaults_table(e, st)
    if select('#', ...) > 0 then
        local t = ...
        if t ~= nil then t.__index = t.__index or t end
        st.defs[e.name] = t
        version = version + 1
    end
    return old
end

---------------------------------------------------------------------------
-- The decode walk (run only when an option needs it)

local post_message
-- Set by pb.decode for one call: fill declared defaults in the walk.
local fill_defaults = nil

local function post_value(f, v, st, depth)
    if f.is_msg then
        local sub = st.types[f.ref]
        if sub and type(v) == 'table' then return post_message(sub, v, st, depth + 1) end
    elseif f.is_enum then
        local h = opt.dec_hooks and st.hooks[f.ref]
        if h then
            local r = h(v)
            if r ~= nil then return r end
        end
    elseif f.is64 and opt.int64 ~= 'number' and type(v) == 'string' then
        return int64_value(v)
    end
    return v
end

post_message = function(e, t, st, depth)
    if depth > 200 then error('pb.decode: message nested too deeply', 0) end
    for _, f in ipairs(e.fields) do
        local v = rawget(t, f.name)
        if v ~= nil then
            local sub = f.is_msg and st.types[f.ref]
            if sub and sub.kind == 'map' then
                local vf = sub.by_number[2]
                local kf = sub.by_number[1]
                local fixed = {}
                for k, x in pairs(v) do
                    local nk = post_value(kf, k, st, depth)
                    fixed[#fixed + 1] = { k, nk, post_value(vf, x, st, depth) }
                end
                for _, kv in ipairs(fixed) do
                    if kv[1] ~= kv[2] then v[kv[1]] = nil end
                    v[kv[2]] = kv[3]
                end
                local mt = st.defs['*map']
                if mt then setmetatable(v, mt) end
            elseif f.repeated then
                for i = 1, #v do v[i] = post_value(f, v[i], st, depth) end
                local mt = st.defs['*array']
                if mt then setmetatable(v, mt) end
            else
                rawset(t, f.name, post_value(f, v, st, depth))
            end
        elseif f.is_msg and not f.repeated and not f.oneof_index and opt.decode_default_message then
            local sub = st.types[f.ref]
            if sub and sub.kind == 'message' then
                if sub.ver ~= version then prepare(sub, st) end
                local d = sub.h:decode('')
                if opt.defaults == 'metatable' then setmetatable(d, defaults_table(sub, st)) end
                rawset(t, f.name, d)
            end
        end
    end
    if e.has_oneof then
        for _, f in ipairs(e.fields) do
            if f.oneof_name and rawget(t, f.name) ~= nil then rawset(t, f.oneof_name, f.name) end
        end
    end
    if fill_defaults and (e.proto3 or fill_defaults == 'values') then
        if fill_defaults ~= 'arrays' then
            for k, v in pairs(defaults_table(e, st)) do
                if k ~= '__index' and rawget(t, k) == nil then rawset(t, k, v) end
            end
        end
        if e.proto3 then
            for _, f in ipairs(e.fields) do
                if f.repeated and rawget(t, f.name) == nil then rawset(t, f.name, {}) end
            end
        end
    end
    if opt.defaults == 'metatable' then setmetatable(t, defaults_table(e, st)) end
    local h = opt.dec_hooks and st.hooks[e.name]
    if h then
        local r = h(t)
        if r ~= nil then return r end
    end
    return t
end

---------------------------------------------------------------------------
-- The encode walk: encode hooks and '#' int64 strings, copy on write

local pre_message

local function pre_value(f, v, st, depth)
    if f.is_msg then
        local sub = st.types[f.ref]
        if sub and type(v) == 'table' then return pre_message(sub, v, st, depth + 1) end
        return v
    elseif f.is_enum then
        local h = opt.enc_hooks and st.enchooks[f.ref]
        if h then
            local r = h(v)
            if r ~= nil then return r end
        end
        return v
    elseif f.is64 then
        return from_hash(v)
    end
    return v
end

local function copy(t)
    local c = {}
    for k, v in pairs(t) do c[k] = v end
    return c
end

pre_message = function(e, t, st, depth)
    if depth > 200 then error('pb.encode: message nested too deeply', 0) end
    local h = opt.enc_hooks and st.enchooks[e.name]
    if h then
        local r = h(t)
        if r ~= nil then t = r end
        if type(t) ~= 'table' then return t end
    end
    local out = t
    if e.has_oneof then
        -- decode's `t[oneof] = member name` keys are not fields.
        for name in pairs(e.oneofs) do
            if rawget(t, name) ~= nil and e.by_name[name] == nil then
                if out == t then out = copy(t) end
                out[name] = nil
            end
        end
    end
    for _, f in ipairs(e.fields) do
        local v = rawget(t, f.name)
        if v ~= nil and (f.is_msg or f.is_enum or f.is64) then
            local nv = v
            local sub = f.is_msg and st.types[f.ref]
            if type(v) == 'table' and sub and sub.kind == 'map' then
                local vf = sub.by_number[2]
                local kf = sub.by_number[1]
                for k, x in pairs(v) do
                    local nk, nx = pre_value(kf, k, st, depth), pre_value(vf, x, st, depth)
                    if nk ~= k or nx ~= x then
                        if nv == v then nv = copy(v) end
                        nv[k] = nil
                        nv[nk] = nx
                    end
                end
            elseif f.repeated and type(v) == 'table' then
                for i = 1, #v do
                    local x = pre_value(f, v[i], st, depth)
                    if x ~= v[i] then
                        if nv == v then nv = copy(v) end
                        nv[i] = x
                    end
                end
            else
                nv = pre_value(f, v, st, depth)
            end
            if nv ~= v then
                if out == t then out = copy(t) end
                rawset(out, f.name, nv)
            end
        end
    end
    return out
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
    if e.enc_walk then return e.enc(e.h, pre_message(e, t, st, 1)) end
    if not e.enc_retry then return e.enc(e.h, t) end
    local ok, bytes = pcall(e.enc, e.h, t)
    if ok then return bytes end
    -- '#' int64 strings and decode's oneof name keys are taken by the walk,
    -- run only when the plain encode refuses the table.
    local ok2, walked = pcall(pre_message, e, t, st, 1)
    if not ok2 or walked == t then error(bytes, 0) end
    return e.enc(e.h, walked)
end

--- pb.encode(type, t): the message's bytes.
function pb.encode(name, t)
    local e = (cur or state()).types[name]
    if e and e.ver == version then
        if e.enc_plain then return e.enc(e.h, t) end
        if not e.enc_walk then
            local ok, bytes = pcall(e.enc, e.h, t)
            if ok then return bytes end
        end
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
    if e.walk then
        fill_defaults = e.fill
        t = post_message(e, t, st, 1)
    end
    return t
end

--- pb.decode(type, data [, t]): the decoded table (merged into `t` if given).
function pb.decode(name, data, into)
    local e = (cur or state()).types[name]
    if e and e.dec_plain and into == nil and data and e.ver == version then return e.dec(e.h, data) end
    return decode_slow(name, data, into)
end

local INTO_OPTS = { defaults = 'none', empty = false }

-- lua-protobuf fills no defaults when decoding into a given table.
decode_into = function(e, st, data, into)
    local t = e.h:decode(data or '', INTO_OPTS)
    if e.walk then
        fill_defaults = nil
        t = post_message(e, t, st, 1)
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

local function set_hook(tbl_name, fn_name, name, ...)
    local st = state()
    local e = find(name, fn_name)
    local hooks = st[tbl_name]
    local old = hooks[e.name]
    if select('#', ...) > 0 then
        local f = ...
        if f ~= nil and type(f) ~= 'function' then
            error(fmt("bad argument #2 to '%s' (function expected, got %s)", fn_name, type(f)), 3)
        end
        hooks[e.name] = f
        version = version + 1
    end
    return old
end

--- pb.hook(type [, fn]): get or set the decode hook of a type.
function pb.hook(name, ...) return set_hook('hooks', 'hook', name, ...) end

--- pb.encode_hook(type [, fn]): get or set the encode hook of a type.
function pb.encode_hook(name, ...) return set_hook('enchooks', 'encode_hook', name, ...) end

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
pb._FDP = FDP
pb._FDS = FDS

return pb
