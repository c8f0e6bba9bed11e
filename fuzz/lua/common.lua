-- Shared by the codec fuzz drivers (`require('fuzzcommon')`): the loaded
-- fixture schemas, deep equality, checked calls, the per-input wrapper.
-- A failed check raises a Lua error starting with "FUZZ:"; the Rust side
-- turns any error out of the driver into a crash.

local ffi = require('ffi')
local protolua = require('protolua')

local C = {}
C.ffi = ffi
C.protolua = protolua

-- The fixture descriptor sets (FDS, set by the Rust side) as schemas.
local function load_schemas()
    return {
        hello = protolua.load(FDS.hello),
        proto2_basic = protolua.load(FDS.proto2_basic),
        conformance = protolua.load(FDS.conformance),
    }
end

C.schemas = load_schemas()

--- The four message types the codec targets pick from (input byte 0 % 4).
C.targets = {
    { schema = C.schemas.hello, name = 'hello.Person' },
    { schema = C.schemas.proto2_basic, name = 'proto2_basic.BenchPayload' },
    { schema = C.schemas.conformance, name = 'protobuf_test_messages.proto2.TestAllTypesProto2' },
    { schema = C.schemas.conformance, name = 'protobuf_test_messages.proto3.TestAllTypesProto3' },
}
for _, t in ipairs(C.targets) do
    t.msg = t.schema:message(t.name)
end

local function is_int64_cdata(v)
    return type(v) == 'cdata' and (ffi.istype('int64_t', v) or ffi.istype('uint64_t', v))
end
C.is_int64_cdata = is_int64_cdata

-- Safe for any value: never runs a metamethod (__tostring of tables and of
-- metatype'd cdata may raise on purpose in codec_encode).
local function describe(v)
    local t = type(v)
    if t == 'string' then
        return (string.format('%q', v):gsub('[\128-\255]', function(c) return string.format('\\x%02x', c:byte()) end))
    elseif t == 'cdata' then
        if is_int64_cdata(v) then return tostring(v) end
        return 'cdata<' .. tostring(ffi.typeof(v)):gsub('^ctype<', ''):gsub('>$', '') .. '>'
    elseif t == 'table' or t == 'userdata' then
        return t
    end
    return tostring(v)
end
C.describe = describe

local function hex(s)
    if s == nil then return 'nil' end
    return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
end
C.hex = hex

--- An options table as text, keys sorted: `{int64=string, utf8=false}`.
function C.describe_opts(o)
    local parts = {}
    for k, v in pairs(o) do parts[#parts + 1] = k .. '=' .. tostring(v) end
    table.sort(parts)
    return '{' .. table.concat(parts, ', ') .. '}'
end

function C.fail(fmt, ...)
    error('FUZZ: ' .. string.format(fmt, ...), 2)
end

--- `pcall(f, ...)` that also checks the call returned exactly one value on
--- success, and that an error is a string starting with "protolua:".
--- Returns ok, value.
local function count(...) return select('#', ...), ... end
function C.call(what, f, ...)
    local n, ok, v = count(pcall(f, ...))
    if ok then
        if n ~= 2 then C.fail('%s returned %d values, expected 1', what, n - 1) end
        return true, v
    end
    if type(v) ~= 'string' then C.fail('%s raised a non-string error: %s', what, describe(v)) end
    if v:sub(1, 9) ~= 'protolua:' then C.fail('%s raised an error not starting with protolua: %s', what, v) end
    return false, v
end

local function is_nan(v) return type(v) == 'number' and v ~= v end

--- Deep equality of two decoded values. NaN equals NaN, -0.0 differs from
--- +0.0, 64-bit cdata equals the same value as cdata or number (LuaJIT
--- compares them by value), and tables also compare their unknown-field
--- bytes (`protolua.unknown`) and whether they carry a metatable.
--- Tables with 64-bit cdata keys (hashed by identity) are compared as sets
--- of (key, value) pairs matched by value. Returns ok, why, saw_cdata_key.
local deep_eq
local state = { cdata_key = false }

local function find_pair(t, k, v, path)
    local tk = type(k)
    if tk ~= 'cdata' then
        local vv = rawget(t, k)
        if vv ~= nil then return deep_eq(v, vv, path) end
        if tk ~= 'number' then return false, path .. ': missing' end
    end
    for kk, vv in next, t do
        local tkk = type(kk)
        if (tkk == 'cdata' or tkk == 'number') and (tk == 'cdata' or tk == 'number') and kk == k then
            if deep_eq(v, vv, path) then return true end
        end
    end
    return false, path .. ': missing (keys compared by value)'
end

deep_eq = function(a, b, path)
    if is_nan(a) and is_nan(b) then return true end
    local ta, tb = type(a), type(b)
    if ta == 'cdata' or tb == 'cdata' then
        if (ta == 'cdata' or ta == 'number') and (tb == 'cdata' or tb == 'number') and a == b then return true end
        return false, path .. ': ' .. describe(a) .. ' ~= ' .. describe(b)
    end
    if ta ~= tb then
        return false, path .. ': type ' .. ta .. ' (' .. describe(a) .. ') ~= ' .. tb .. ' (' .. describe(b) .. ')'
    end
    if ta == 'number' then
        if a == b and (a ~= 0 or 1 / a == 1 / b) then return true end
        return false, path .. ': ' .. string.format('%.17g ~= %.17g', a, b)
    end
    if ta ~= 'table' then
        if a == b then return true end
        return false, path .. ': ' .. describe(a) .. ' ~= ' .. describe(b)
    end
    if (getmetatable(a) == nil) ~= (getmetatable(b) == nil) then
        return false, path .. ': one table has a metatable, the other not'
    end
    local ua, ub = protolua.unknown(a), protolua.unknown(b)
    if ua ~= ub then
        return false, path .. ': unknown fields ' .. hex(ua) .. ' ~= ' .. hex(ub)
    end
    local na, nb = 0, 0
    for k, v in next, a do
        na = na + 1
        if type(k) == 'cdata' then state.cdata_key = true end
        local ok, why = find_pair(b, k, v, path .. '[' .. describe(k) .. ']')
        if not ok then return false, why end
    end
    for _ in next, b do nb = nb + 1 end
    if na ~= nb then return false, path .. ': ' .. na .. ' keys ~= ' .. nb .. ' keys' end
    return true
end

--- Returns ok, why, saw_cdata_key.
function C.deep_eq(a, b)
    state.cdata_key = false
    local ok, why = deep_eq(a, b, 'value')
    return ok, why, state.cdata_key
end

--- `f(schema, name)` memoised per schema object (weakly) and name; `f`
--- must not return nil.
function C.per_schema(f)
    local cache = setmetatable({}, { __mode = 'k' })
    return function(schema, name)
        local per = cache[schema]
        if not per then per = {}; cache[schema] = per end
        local v = per[name]
        if v == nil then
            v = f(schema, name)
            per[name] = v
        end
        return v
    end
end

--- The field list of message `name`, from Msg:fields(), cached per schema.
C.fields_of = C.per_schema(function(schema, name) return schema:message(name):fields() end)

--- The types whose values are 64 bits wide (int64 cdata, 'string' mode).
C.WIDE = { int64 = true, uint64 = true, sint64 = true, fixed64 = true, sfixed64 = true }

-- Messages of proto3 files reachable from the four targets (the rest are
-- proto2). Their singular non-oneof scalar fields have implicit presence.
local function is_proto3(name)
    return name:sub(1, 6) == 'hello.' or name:sub(1, 30) == 'protobuf_test_messages.proto3.'
        or name:sub(1, 16) == 'google.protobuf.'
end

local enum_of = C.per_schema(function(schema, enum_name) return schema:enum(enum_name) end)
local function enum_number(schema, enum_name, v)
    if type(v) ~= 'string' then return v end
    return enum_of(schema, enum_name)[v]
end

local function is_zero(schema, f, v)
    if f.type == 'bool' then return v == false end
    if f.type == 'string' or f.type == 'bytes' then return v == '' end
    if f.type == 'enum' then return enum_number(schema, f.type_name, v) == 0 end
    if f.type == 'float' or f.type == 'double' then return v == 0 and 1 / v > 0 end
    if type(v) == 'cdata' then return v == 0 end
    return v == 0 or v == '0'
end

--- Normalise, in place, the decoded message `t` and its sub-messages: a
--- proto3 implicit-presence field holding its zero value is removed.
--- Decode shows a zero written on the wire, encode leaves zero values out,
--- and both mean the same (by design: docs/LUA_API.md, Representation).
--- Applied to both sides of a comparison. Returns the count.
local function strip(schema, name, t, n, seen)
    if type(t) ~= 'table' or seen[t] then return n end
    seen[t] = true
    local p3 = is_proto3(name)
    for _, f in ipairs(C.fields_of(schema, name)) do
        local v = rawget(t, f.name)
        if type(v) == 'table' then
            if f.type == 'map' then
                if f.value_type == 'message' then
                    for _, x in next, v do n = strip(schema, f.value_type_name, x, n, seen) end
                end
            elseif f.label == 'repeated' then
                if f.type == 'message' or f.type == 'group' then
                    for _, x in ipairs(v) do n = strip(schema, f.type_name, x, n, seen) end
                end
            elseif f.type == 'message' or f.type == 'group' then
                n = strip(schema, f.type_name, v, n, seen)
            end
        elseif v ~= nil and p3 and f.label ~= 'repeated' and not f.oneof and is_zero(schema, f, v) then
            rawset(t, f.name, nil)
            n = n + 1
        end
    end
    return n
end
function C.normalize(schema, name, t)
    return strip(schema, name, t, 0, {})
end

--- A human-readable dump of a value (for failure messages), depth-limited.
local function dump(v, depth, seen)
    if type(v) ~= 'table' then return describe(v) end
    if seen[v] then return '<cycle>' end
    if depth > 6 then return '{...}' end
    seen[v] = true
    local parts = {}
    for k, x in next, v do
        parts[#parts + 1] = '[' .. describe(k) .. ']=' .. dump(x, depth + 1, seen)
        if #parts > 40 then parts[#parts + 1] = '...'; break end
    end
    seen[v] = nil
    local u = protolua.unknown(v)
    if u then parts[#parts + 1] = '<unknown ' .. hex(u) .. '>' end
    return '{' .. table.concat(parts, ', ') .. '}'
end
function C.dump(v) return dump(v, 0, {}) end

local iterations = 0

--- The per-input entry point: runs `body(data)` under xpcall with a
--- traceback, steps the collector every 16 inputs (so __gc paths, the weak
--- unknown-field store and handle finalizers run between inputs).
function C.driver(body)
    return function(data)
        iterations = iterations + 1
        local ok, err = xpcall(body, debug.traceback, data)
        if iterations % 16 == 0 then collectgarbage('step') end
        if not ok then error(tostring(err), 0) end
    end
end

return C
