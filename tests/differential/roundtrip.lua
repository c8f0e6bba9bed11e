-- Lua side of the differential test (see README.md). The host sets the
-- global DIFF = { phase = 'roundtrip' | 'verify', fds = path, seed = n,
-- count = n, cases = path, results = path, lua_cases = path,
-- py_cases = path } and runs this file; it returns a summary string, and
-- raises an error describing the first mismatch.
--
-- phase 'roundtrip': decode each payload of `cases` (made by gen.py) and
--   re-encode it; write (type, index, 'ok'|'err', bytes|message) records to
--   `results`. Then generate `count` random tables per type, encode them and
--   write (type, index, bytes) records to `lua_cases`.
-- phase 'verify': decode the re-serializations Python wrote to `py_cases`
--   and deep-compare them with the same tables, generated again from the
--   seed.

local protolua = require('protolua')
local D = assert(DIFF, 'DIFF not set')

local P2 = 'protobuf_test_messages.proto2.TestAllTypesProto2'
local P3 = 'protobuf_test_messages.proto3.TestAllTypesProto3'
local TYPES = { P2, P3 }

local schema = protolua.load_file(D.fds)

----------------------------------------------------------------------------
-- record files: u32 LE part count, then (u32 LE length, bytes) per part

local function u32(n)
    return string.char(n % 256, math.floor(n / 256) % 256, math.floor(n / 65536) % 256,
        math.floor(n / 16777216) % 256)
end

local function read_u32(s, i)
    local a, b, c, d = s:byte(i, i + 3)
    return a + b * 256 + c * 65536 + d * 16777216
end

local function read_records(path)
    local f = assert(io.open(path, 'rb'))
    local s = f:read('*a')
    f:close()
    local out, i = {}, 1
    while i <= #s do
        local n = read_u32(s, i)
        i = i + 4
        local rec = {}
        for k = 1, n do
            local len = read_u32(s, i)
            i = i + 4
            rec[k] = s:sub(i, i + len - 1)
            i = i + len
        end
        out[#out + 1] = rec
    end
    return out
end

local function writer(path)
    local f = assert(io.open(path, 'wb'))
    return {
        put = function(_, ...)
            local parts = { ... }
            local buf = { u32(#parts) }
            for _, p in ipairs(parts) do
                buf[#buf + 1] = u32(#p)
                buf[#buf + 1] = p
            end
            f:write(table.concat(buf))
        end,
        close = function() f:close() end,
    }
end

local function hex(s)
    return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
end

----------------------------------------------------------------------------
-- seeded generator (Park-Miller; exact in doubles, same on LuaJIT and 5.4)

local state = 1

local function reseed(seed, type_index, index)
    state = (seed * 1000003 + type_index * 7919 + index * 104729) % 2147483646 + 1
    for _ = 1, 3 do state = (state * 48271) % 2147483647 end
end

local function rand(n) -- 1..n
    state = (state * 48271) % 2147483647
    return state % n + 1
end

local function chance(p)
    state = (state * 48271) % 2147483647
    return state / 2147483647 < p
end

local function pick(list) return list[rand(#list)] end

local I32 = { 0, 1, -1, 2, 127, 128, -128, 2147483647, -2147483648, 300, -300 }
local U32 = { 0, 1, 2, 127, 128, 2147483647, 2147483648, 4294967295 }
local I64 = { '0', '1', '-1', '9223372036854775807', '-9223372036854775808', '9007199254740991',
    '9007199254740992', '9007199254740993', '-9007199254740993', '4294967296', '-2147483649' }
local U64 = { '0', '1', '18446744073709551615', '9223372036854775808', '9007199254740993',
    '9007199254740992', '4294967296' }
local FLT = { 0.0, 1.0, -1.0, 0.5, 1 / 0, -1 / 0, 3.4028234663852886e38, 1.401298464324817e-45,
    1.1754943508222875e-38, 16777216.0, -0.0, 0 / 0 }
local DBL = { 0.0, 1.0, -1.0, 0.1, 1 / 0, -1 / 0, 1.7976931348623157e308, 5e-324,
    2.2250738585072014e-308, 2 ^ 53, 2 ^ 53 + 2, -0.0, 0 / 0 }
local STR = { '', 'a', 'h\195\169llo', '\230\151\165\230\156\172', '\240\159\152\128', 'nul\0nul',
    string.rep('x', 150), '\223\191\224\160\128\239\191\191\240\144\128\128\244\143\191\191' }
local CHARS = { 'a', 'b', 'Z', '0', ' ', '_', '\195\169', '\208\150', '\228\184\173', '\240\159\154\128', '\0' }

local function digits(n, first_max)
    local t = { tostring(rand(first_max) % 10) }
    for k = 2, n do t[k] = tostring(rand(10) - 1) end
    local s = table.concat(t):gsub('^0+', '')
    if s == '' then s = '0' end
    return s
end

local function gen_i64()
    if chance(0.5) then return pick(I64) end
    local s = digits(rand(19), 8) -- 19 digits starting with <= 8 fit int64
    if s ~= '0' and chance(0.5) then s = '-' .. s end
    return s
end

local function gen_u64()
    if chance(0.5) then return pick(U64) end
    return digits(rand(19), 9)
end

local function small_or(list, lo, hi)
    if chance(0.5) then return pick(list) end
    if chance(0.5) then return rand(2001) - 1001 end
    return lo + math.floor((rand(2147483647) - 1) / 2147483647 * (hi - lo + 1))
end

local function gen_str()
    if chance(0.5) then return pick(STR) end
    local t = {}
    for k = 1, rand(16) - 1 do t[k] = pick(CHARS) end
    return table.concat(t)
end

local function gen_bytes()
    local t = {}
    for k = 1, rand(20) - 1 do t[k] = string.char(rand(256) - 1) end
    return table.concat(t)
end

local function float32(x) -- values exactly representable as float32
    if chance(0.6) then return pick(FLT) end
    return (rand(2 ^ 24) - 2 ^ 23) * 2 ^ (rand(40) - 20)
end

local function gen_double()
    if chance(0.6) then return pick(DBL) end
    return (rand(2147483647) - 1073741824) / (rand(2147483647)) * 10 ^ (rand(40) - 20)
end

local enum_cache = {}
local function enum_values(name)
    local e = enum_cache[name]
    if not e then
        e = { names = {}, numbers = {} }
        for k, v in pairs(schema:enum(name)) do
            e.names[#e.names + 1] = k
            e.numbers[k] = v
        end
        table.sort(e.names)
        enum_cache[name] = e
    end
    return e
end

local function is_open(type_name) return not type_name:find('^protobuf_test_messages%.proto2%.') end

-- (value to encode, value expected back from decode{int64='string', enums='number'})
local function gen_scalar(kind, type_name)
    if kind == 'int32' or kind == 'sint32' or kind == 'sfixed32' then
        local v = small_or(I32, -2147483648, 2147483647)
        return v, v
    elseif kind == 'uint32' or kind == 'fixed32' then
        local v = small_or(U32, 0, 4294967295)
        if v < 0 then v = -v end
        return v, v
    elseif kind == 'int64' or kind == 'sint64' or kind == 'sfixed64' then
        local s = gen_i64()
        local n = tonumber(s)
        if math.abs(n) < 2 ^ 53 and chance(0.5) then return n, s end
        return s, s
    elseif kind == 'uint64' or kind == 'fixed64' then
        local s = gen_u64()
        local n = tonumber(s)
        if n < 2 ^ 53 and chance(0.5) then return n, s end
        return s, s
    elseif kind == 'float' then
        local v = float32()
        return v, v
    elseif kind == 'double' then
        local v = gen_double()
        return v, v
    elseif kind == 'bool' then
        local v = chance(0.5)
        return v, v
    elseif kind == 'string' then
        local v = gen_str()
        return v, v
    elseif kind == 'bytes' then
        local v = gen_bytes()
        return v, v
    elseif kind == 'enum' then
        local e = enum_values(type_name)
        if is_open(type_name) and chance(0.2) then
            local v = pick({ 3, 77, 12345, -7, 2147483647, -2147483648 })
            return v, v
        end
        local name = pick(e.names)
        if chance(0.5) then return name, e.numbers[name] end
        return e.numbers[name], e.numbers[name]
    end
    error('unexpected kind ' .. tostring(kind))
end

local function is_zero(kind, v)
    if kind == 'string' or kind == 'bytes' then return v == '' end
    return v == 0 and 1 / v > 0 or v == '0' or v == false
end

local SKIP = { message_set_correct = true }
local EXTENSIONS = {
    [P2] = {
        { key = '[protobuf_test_messages.proto2.extension_int32]', type = 'int32' },
        { key = '[protobuf_test_messages.proto2.groupfield]', type = 'group',
            type_name = 'protobuf_test_messages.proto2.GroupField' },
    },
}
local fields_cache = {}
local function fields_of(name)
    local f = fields_cache[name]
    if not f then
        f = schema:message(name):fields()
        fields_cache[name] = f
    end
    return f
end

local gen_msg

local function gen_value(kind, type_name, depth)
    if kind == 'message' or kind == 'group' then return gen_msg(type_name, depth + 1) end
    return gen_scalar(kind, type_name)
end

function gen_msg(name, depth)
    local enc, exp = {}, {}
    local implicit = not name:find('^protobuf_test_messages%.proto2%.')
    local p = 0.25 / (1 + depth * 1.5)
    local oneofs, order = {}, {}
    for _, f in ipairs(fields_of(name)) do
        if f.oneof then
            if not oneofs[f.oneof] then
                oneofs[f.oneof] = {}
                order[#order + 1] = f.oneof
            end
            table.insert(oneofs[f.oneof], f)
        end
    end
    local chosen = {}
    for _, o in ipairs(order) do
        if chance(0.5) then chosen[pick(oneofs[o])] = true end
    end
    local sub_ok = depth < 4
    for _, f in ipairs(fields_of(name)) do
        local take = (f.oneof and chosen[f]) or (not f.oneof and chance(p))
        if SKIP[f.name] or ((f.type == 'message' or f.type == 'group' or f.value_type == 'message') and not sub_ok) then
            take = false
        end
        if take then
            if f.type == 'map' then
                local e, x, enc_key = {}, {}, {}
                for _ = 1, rand(5) - 1 do
                    local ke, kx = gen_scalar(f.key_type)
                    if type(ke) == 'number' and type(kx) == 'string' and chance(0.5) then ke = kx end
                    local ve, vx = gen_value(f.value_type, f.value_type_name, depth)
                    -- A later key wins; the number and the string form of one
                    -- 64-bit key must not both be in the encoded table.
                    if enc_key[kx] ~= nil then e[enc_key[kx]] = nil end
                    enc_key[kx] = ke
                    e[ke], x[kx] = ve, vx
                end
                enc[f.name] = e
                if next(x) ~= nil then exp[f.name] = x end
            elseif f.label == 'repeated' then
                local e, x = {}, {}
                for k = 1, pick({ 0, 1, 1, 2, 3, 5, 8 }) do
                    e[k], x[k] = gen_value(f.type, f.type_name, depth)
                end
                if #e > 0 or chance(0.3) then enc[f.name], exp[f.name] = e, x end
                if #x == 0 then exp[f.name] = nil end
            else
                local e, x = gen_value(f.type, f.type_name, depth)
                enc[f.name] = e
                -- proto3 implicit presence: a zero is not written
                if not (implicit and not f.oneof and f.type ~= 'message' and is_zero(f.type, x)) then
                    exp[f.name] = x
                end
            end
        end
    end
    if EXTENSIONS[name] and chance(0.3) then
        for _, x in ipairs(EXTENSIONS[name]) do
            if chance(0.5) then enc[x.key], exp[x.key] = gen_value(x.type, x.type_name, depth) end
        end
    end
    return enc, exp
end

----------------------------------------------------------------------------
-- comparison: NaN == NaN, -0.0 ~= 0.0, 64-bit as decimal strings

local function same(a, b)
    if type(a) == 'number' and type(b) == 'number' then
        if a ~= a then return b ~= b end
        if a == 0 and b == 0 then return 1 / a == 1 / b end
        return a == b
    end
    return a == b
end

local function show(v)
    if type(v) == 'string' then return string.format('%q', v) end
    if type(v) == 'number' then return string.format('%.17g', v) end
    return tostring(v)
end

local function diff(a, b, path)
    if type(a) == 'table' and type(b) == 'table' then
        local keys = {}
        for k in pairs(a) do keys[#keys + 1] = k end
        for k in pairs(b) do
            if a[k] == nil then keys[#keys + 1] = k end
        end
        for _, k in ipairs(keys) do
            local d = diff(a[k], b[k], path .. '.' .. tostring(k))
            if d then return d end
        end
        return nil
    end
    if not same(a, b) then
        return path .. ': expected ' .. show(a) .. ', got ' .. show(b)
    end
    return nil
end

----------------------------------------------------------------------------

local DECODE = { int64 = 'string', enums = 'number' }

if D.phase == 'roundtrip' then
    local out = writer(D.results)
    local n, errs = 0, 0
    for _, rec in ipairs(read_records(D.cases)) do
        local tname, index, payload = rec[1], rec[2], rec[3]
        local M = schema:message(tname)
        local ok, res = pcall(function() return M:encode(M:decode(payload)) end)
        if not ok then errs = errs + 1 end
        out:put(tname, index, ok and 'ok' or 'err', tostring(res))
        n = n + 1
    end
    out:close()
    local lout = writer(D.lua_cases)
    for ti, tname in ipairs(TYPES) do
        local M = schema:message(tname)
        for i = 0, tonumber(D.count) - 1 do
            reseed(tonumber(D.seed), ti, i)
            local enc = gen_msg(tname, 0)
            local ok, bytes = pcall(M.encode, M, enc)
            if not ok then
                error(string.format('lua-generated case seed=%d type=%s index=%d: encode failed: %s',
                    tonumber(D.seed), tname, i, tostring(bytes)), 0)
            end
            lout:put(tname, tostring(i), bytes)
        end
    end
    lout:close()
    return string.format('roundtrip: %d payloads (%d decode/encode errors); %d lua cases per type', n, errs,
        tonumber(D.count))
elseif D.phase == 'verify' then
    local n = 0
    local type_index = { [P2] = 1, [P3] = 2 }
    for _, rec in ipairs(read_records(D.py_cases)) do
        local tname, index, pybytes, luabytes = rec[1], tonumber(rec[2]), rec[3], rec[4]
        reseed(tonumber(D.seed), type_index[tname], index)
        local _, exp = gen_msg(tname, 0)
        local ok, got = pcall(schema.decode, schema, tname, pybytes, DECODE)
        local where = string.format('lua-generated case seed=%d type=%s index=%d\n  protolua bytes: %s\n'
            .. '  python bytes:   %s\n', tonumber(D.seed), tname, index, hex(luabytes), hex(pybytes))
        if not ok then error(where .. '  decode of the python bytes failed: ' .. tostring(got), 0) end
        local d = diff(exp, got, '$')
        if d then error(where .. '  ' .. d, 0) end
        n = n + 1
    end
    return string.format('verify: %d lua-generated cases equal after the python round trip', n)
end
error('unknown phase ' .. tostring(D.phase))
