-- codec_encode: build a Lua value from the fuzz input and encode it.
--
-- Byte 0: bits 0-1 the message type, bits 2-7 the encode options. Byte 1:
-- bit 0 aggressive collector for this input (and, with bits 1-2, how many
-- finalizers are left as garbage); byte 1 % 16 == 2: a finalizer encoding a
-- 1 MB table with the same schema runs at the first collector check inside
-- the encode. The remaining bytes drive a builder (read from the front,
-- zeros once exhausted, so generation always ends) that makes a table of
-- real field names of the message (from Msg:fields()) and junk keys, with
-- values of every Lua type: nil holes, booleans, integers, floats (NaN,
-- +-inf, huge, -0.0, NaN payloads), strings (invalid UTF-8 too), nested
-- tables, arrays with holes and stray keys, tables with metatables whose
-- metamethods raise (encode reads raw, so they must never run), int64 and
-- uint64 cdata, NULL cdata (box.NULL stand-in), other cdata, functions,
-- coroutines, userdata, protolua's own handles, shared subtables and cycles.
-- Some cdata carry an `__eq` metamethod (protolua's cdata classifier
-- compares with nil) and some objects a finalizer; those run "mischief":
-- collect garbage, clear or grow the tables being encoded, re-enter the
-- codec, raise.
--
-- Checks: encode raises a "protolua:" error or returns a string; the string
-- decodes (same options); the decoded table re-encodes to identical bytes.
-- Three legitimate exceptions, where only the weaker property is checked
-- (decode(b2) equals decode(b) and b2 is a fixed point):
--   * a NaN other than LuaJIT's canonical one (a payload made through ffi):
--     encode writes its bits, decode canonicalizes it (lua_pushnumber);
--   * a closed-enum field was given a number the enum lacks: decode moves it
--     to the unknown fields, which encode writes after the known fields;
--   * an integer-keyed map was given a cdata or string key: two keys that are
--     distinct in Lua (1 and 1LL, or 1 and '1') can be the same protobuf
--     key, so the first encoding has a duplicate entry.

local C = require('fuzzcommon')
local ffi = C.ffi
local protolua = C.protolua

local DATA, POS, LEN = '', 1, 0
local BUDGET = 0
local MIXED_KEYS = false
local BUILT = {}      -- tables made for this input (for aliasing, cycles, mischief)
local MSG = nil       -- the handle being encoded
local ACTIONS = 0     -- mischief seed (byte 1)

local MAX_NODES = 3000
local MAX_DEPTH = 24

local function u8()
    if POS > LEN then return 0 end
    local b = DATA:byte(POS)
    POS = POS + 1
    return b
end

local function u16() return u8() * 256 + u8() end

-- Spend one node of the input's budget; false once it is used up.
local function spend()
    BUDGET = BUDGET - 1
    return BUDGET > 0
end

-- Collector pace (LuaJIT's defaults are 200, 200).
local function gc_pace(pause, stepmul)
    collectgarbage('setpause', pause)
    collectgarbage('setstepmul', stepmul)
end

-- ---------------------------------------------------------------- mischief

local in_mischief = false

-- `from_gc`: called by a finalizer (re-entering the schema mid-encode; the
-- result push once ran finalizers on a released buffer, finding 7).
local function mischief(action, from_gc)
    if in_mischief then return end
    local M = MSG
    in_mischief = true
    local a = action % 10
    if a == 1 then
        in_mischief = false
        error('mischief raises')
    elseif a == 2 then
        collectgarbage('collect')
    elseif a == 3 then
        for _, t in ipairs(BUILT) do
            for k in next, t do rawset(t, k, nil) end
        end
        collectgarbage('collect')
    elseif a == 4 then
        for i, t in ipairs(BUILT) do
            for j = 1, 40 do rawset(t, 'grow' .. i .. '_' .. j, j) end
            for j = 1, 40 do rawset(t, j + 1000, j) end
        end
    elseif a == 5 then
        if M then
            pcall(M.encode, M, BUILT[1] or {})
            pcall(M.encode, M, { [1] = 1 }, { strict_keys = false })
            pcall(M.decode, M, '\8\1\18\1a')
        end
    elseif a == 6 then
        for _, t in ipairs(BUILT) do
            local keys = {}
            for k in next, t do keys[#keys + 1] = k end
            for _, k in ipairs(keys) do
                rawset(t, k, nil)
                if type(k) == 'string' then rawset(t, k .. '_', 1) end
            end
        end
        collectgarbage('collect')
    elseif a == 7 then
        local co = coroutine.wrap(function()
            if M then pcall(M.encode, M, BUILT[#BUILT] or {}) end
            coroutine.yield(1)
        end)
        pcall(co)
    elseif a == 8 then
        -- A collector step inside a step is not possible; a full cycle from a
        -- metamethod is.
        collectgarbage('step', 1000)
    end
    in_mischief = false
end

-- A struct cdata whose __eq runs mischief (the classifier does `v == nil`).
ffi.cdef('struct protolua_fuzz_evil { int action; };')
local Evil = ffi.metatype('struct protolua_fuzz_evil', {
    __eq = function(a, b)
        local x = type(a) == 'cdata' and ffi.istype('struct protolua_fuzz_evil', a) and a or b
        mischief(x.action)
        return false
    end,
    __tostring = function() error('evil __tostring called') end,
    __len = function() error('evil __len called') end,
})
local NumUnion = ffi.typeof('union { uint64_t u; double d; float f; uint32_t w; }')

local function finalized(action)
    -- garbage with a finalizer (not referenced from anywhere)
    local p = newproxy(true)
    getmetatable(p).__gc = function() mischief(action, true) end
    return nil
end

-- Metatables whose metamethods must never run (encode reads raw).
local function boom(name) return function() error('metamethod ' .. name .. ' ran (encode must read raw)') end end
local EVIL_MT = {
    __index = boom('__index'),
    __newindex = boom('__newindex'),
    __len = boom('__len'),
    __pairs = boom('__pairs'),
    __ipairs = boom('__ipairs'),
    __call = boom('__call'),
    __eq = boom('__eq'),
    __lt = boom('__lt'),
    __le = boom('__le'),
    __concat = boom('__concat'),
    __tostring = boom('__tostring'),
}
local INDEX_MT = { __index = function(_, k) return 42 end }
local WEAK_K_MT = { __mode = 'k' }
local WEAK_V_MT = { __mode = 'v' }
local PROTECTED_MT = { __metatable = 'locked', __index = boom('__index') }

local function decorate(t)
    local b = u8()
    if b < 232 then return t end
    local which = b % 6
    if which == 0 then
        setmetatable(t, EVIL_MT)
    elseif which == 1 then
        setmetatable(t, INDEX_MT)
    elseif which == 2 then
        setmetatable(t, WEAK_K_MT)
    elseif which == 3 then
        setmetatable(t, WEAK_V_MT)
    elseif which == 4 then
        setmetatable(t, PROTECTED_MT)
    else
        setmetatable(t, { __serialize = 'map', __index = t })
    end
    return t
end

-- ---------------------------------------------------------------- schema info

local function enum_info(schema, name)
    local ok, e = pcall(schema.enum, schema, name)
    local names, numbers = {}, {}
    if ok then
        for k, v in pairs(e) do names[#names + 1] = k end
        table.sort(names)
        for i, k in ipairs(names) do numbers[i] = e[k] end
    end
    return { names = names, numbers = numbers }
end

-- The fields of message `name` (a list of its own, not C.fields_of's),
-- each enum field with the names and numbers of its enum.
local message_info = C.per_schema(function(schema, name)
    local msg = schema:message(name)
    local mi = { msg = msg, fields = msg:fields(), name = name, schema = schema }
    for _, f in ipairs(mi.fields) do
        if f.type == 'enum' then f.enum = enum_info(schema, f.type_name) end
        if f.value_type == 'enum' then f.value_enum = enum_info(schema, f.value_type_name) end
    end
    return mi
end)

-- ---------------------------------------------------------------- values

local I64 = ffi.typeof('int64_t')
local U64 = ffi.typeof('uint64_t')
local NULL = ffi.cast('void*', 0)

local function cdata64(ctype)
    local v = ctype(0)
    for _ = 1, 8 do v = v * 256 + u8() end
    return v
end

local INTS = {
    0, 1, -1, 2, 127, 128, -128, 255, 256, 16383, 16384, 65535, 2 ^ 31 - 1, 2 ^ 31, -2 ^ 31, -2 ^ 31 - 1,
    2 ^ 32 - 1, 2 ^ 32, -2 ^ 32, 2 ^ 53 - 1, 2 ^ 53, -2 ^ 53, 2 ^ 53 + 2, 2 ^ 62, 2 ^ 63, -2 ^ 63, 2 ^ 64,
    -2 ^ 64, 1e19, -1e19, 1e300, -1e300, math.huge, -math.huge, 0 / 0, 0.5, -0.5, 1.5, -0.0, 2 ^ 31 - 0.5,
    4294967295.5, 2 ^ 52 + 0.5,
}
local INT_STRINGS = {
    '0', '1', '-1', '+1', '-0', '+0', '01', '007', '', '-', '+', ' 1', '1 ', '0x10', '1e3', '1.0', '1.5',
    '2147483647', '2147483648', '-2147483648', '-2147483649', '4294967295', '4294967296',
    '9007199254740993', '9223372036854775807', '9223372036854775808', '-9223372036854775808',
    '-9223372036854775809', '18446744073709551615', '18446744073709551616', '-18446744073709551615',
    '99999999999999999999', '000000000000000000001', '100000000000000000000', '1\0', '\0', 'nan', 'inf',
}
local FLOATS = {
    0, -0.0, 1, -1, 0.1, 0.25, 1.5, -2.5, 0 / 0, -(0 / 0), math.huge, -math.huge, 1e308, -1e308, 5e-324,
    -5e-324, 2.2250738585072014e-308, 3.4028234663852886e38, 3.4028235677973366e38, 3.4028235677973362e38,
    1e39, -1e39, 1.401298464324817e-45, 7.006492321624085e-46, 7.006492321624087e-46, 1e-300, 2 ^ 53,
    2 ^ 53 + 2, 2 ^ 63, 2 ^ 64, 16777217, 0.1 + 0.2,
}

-- Doubles and floats from raw bits, NaN payloads included. A NaN is made
-- positive: LuaJIT NaN-tags its other values in the negative quiet-NaN
-- range, and the FFI does not canonicalize a double it converts to a Lua
-- number, so a negative NaN there would be read as another type (LuaJIT
-- asserts "non-canonical NaN passed"). A harness constraint, not protolua's.
local function raw_double()
    local u = NumUnion()
    u.u = cdata64(U64)
    if bit.band(u.u, 0x7ff0000000000000ULL) == 0x7ff0000000000000ULL and bit.band(u.u, 0xfffffffffffffULL) ~= 0 then
        u.u = bit.band(u.u, 0x7fffffffffffffffULL)
    end
    return tonumber(u.d)
end

local function raw_float()
    local u = NumUnion()
    u.w = u8() * 16777216 + u8() * 65536 + u8() * 256 + u8()
    if bit.band(u.w, 0x7f800000) == 0x7f800000 and bit.band(u.w, 0x7fffff) ~= 0 then
        u.w = bit.band(u.w, 0x7fffffff)
    end
    return tonumber(u.f)
end

local gen_any, gen_message

local function gen_string()
    local b = u8()
    local n
    if b < 192 then
        n = b % 24
    elseif b < 240 then
        n = (b % 16) * 16 + u8()
    elseif b < 252 then
        -- long, not taken from the input
        return string.rep(string.char(u8()), u16() * 4)
    else
        n = u16()
    end
    local s = DATA:sub(POS, POS + n - 1)
    POS = POS + n
    return s
end

local function wrong_type(b)
    local w = b % 12
    if w == 0 then return true
    elseif w == 1 then return false
    elseif w == 2 then return {}
    elseif w == 3 then return 'abc'
    elseif w == 4 then return NULL
    elseif w == 5 then return Evil(u8())
    elseif w == 6 then return ffi.new('double', 1)
    elseif w == 7 then return ffi.new('int32_t', 5)
    elseif w == 8 then return ffi.cast('void*', 1)
    elseif w == 9 then return print
    elseif w == 10 then return 1.25
    else return newproxy(false)
    end
end

local function gen_int(wide, lohi)
    local b = u8()
    if b < 64 then
        return b - 32
    elseif b < 100 then
        return INTS[b % #INTS + 1]
    elseif b < 112 then
        return cdata64(I64)
    elseif b < 124 then
        return cdata64(U64)
    elseif b < 128 then
        -- a struct cdata with a finalizer running mischief (ffi.gc does
        -- not take scalar int64 cdata)
        local action = u8()
        return ffi.gc(Evil(u8()), function() mischief(action, true) end)
    elseif b < 140 then
        return INT_STRINGS[u8() % #INT_STRINGS + 1]
    elseif b < 144 then
        local v = cdata64(I64)
        return (tostring(v):gsub('U?LL$', ''))
    elseif b < 152 then
        return wrong_type(u8())
    elseif wide and b >= 224 then
        -- up to 2^53 in magnitude, exact
        local v = 0
        for _ = 1, 7 do v = v * 256 + u8() end
        v = v % 2 ^ 53
        if b % 2 == 1 then v = -v end
        return v
    else
        local v = u8() * 16777216 + u8() * 65536 + u8() * 256 + u8()
        if lohi and b % 3 == 0 then v = v - 2 ^ 31 end
        return v - (b % 2) * 2 ^ 32
    end
end

local function gen_float()
    local b = u8()
    if b < 64 then
        return FLOATS[b % #FLOATS + 1]
    elseif b < 80 then
        return raw_double()
    elseif b < 88 then
        return raw_float()
    elseif b < 96 then
        return wrong_type(u8())
    elseif b < 104 then
        return cdata64(I64)
    else
        return (u16() - 32768) / (u8() + 1)
    end
end

local function gen_bool()
    local b = u8()
    if b < 120 then return true end
    if b < 240 then return false end
    return wrong_type(b)
end

local function gen_enum(e)
    local b = u8()
    local n = #e.names
    if b < 128 and n > 0 then
        return e.names[b % n + 1]
    elseif b < 176 and n > 0 then
        return e.numbers[b % n + 1]
    elseif b < 200 then
        return gen_int(false, true)
    elseif b < 212 then
        return gen_string()
    elseif b < 220 and n > 0 then
        return e.names[b % n + 1]:lower()
    else
        return (b % 8) - 2
    end
end

-- A value for a field of type `ty` (message/group/enum via `tn`/`e`).
local function gen_typed(schema, ty, tn, e, depth)
    local b = u8()
    if b >= 248 then return gen_any(depth) end
    if b >= 244 then return NULL end
    if ty == 'message' or ty == 'group' then
        return gen_message(schema, tn, depth + 1)
    elseif ty == 'string' or ty == 'bytes' then
        if b < 8 then return wrong_type(u8()) end
        return gen_string()
    elseif ty == 'bool' then
        return gen_bool()
    elseif ty == 'float' or ty == 'double' then
        return gen_float()
    elseif ty == 'enum' then
        return gen_enum(e)
    else
        local signed = ty == 'int32' or ty == 'sint32' or ty == 'sfixed32'
        return gen_int(C.WIDE[ty], signed)
    end
end

-- A value that can be a table key (not nil, not NaN); no `==` on it, which
-- would run an evil cdata's __eq.
local function usable_key(k)
    local t = type(k)
    return t ~= 'nil' and not (t == 'number' and k ~= k)
end

local function register(t)
    BUILT[#BUILT + 1] = t
    return t
end

-- The length of a generated array or map: up to `small` - 1, or `small`
-- + a byte; or nil and a wrong-typed value to use instead of the container.
local function gen_size(small)
    local b = u8()
    if b < 6 then return nil, wrong_type(u8()) end
    if b >= 250 then return u8() + small end
    return b % small
end

local function gen_array(schema, f, depth)
    local n, instead = gen_size(12)
    if not n then return instead end
    local a = {}
    for i = 1, n do
        if not spend() then break end
        a[i] = gen_typed(schema, f.type, f.type_name, f.enum, depth)
    end
    local x = u8()
    if x >= 200 then
        local s = x % 8
        if s == 0 then a[n + 2] = 1              -- a gap: rawlen is a border, either one
        elseif s == 1 then a[0] = 1
        elseif s == 2 then a.n = n
        elseif s == 3 then a[1.5] = 2
        elseif s == 4 then a[-1] = 3
        elseif s == 5 and n > 1 then a[u8() % n + 1] = nil -- a hole
        elseif s == 6 then a[n + 1] = NULL
        else a[true] = 1
        end
    end
    return register(decorate(a))
end

local INT_KEY = {
    int32 = true, int64 = true, uint32 = true, uint64 = true, sint32 = true, sint64 = true,
    fixed32 = true, fixed64 = true, sfixed32 = true, sfixed64 = true,
}

local function gen_key(kt)
    local b = u8()
    if kt == 'string' then
        if b < 8 then return wrong_type(u8()) end
        return gen_string()
    elseif kt == 'bool' then
        if b < 8 then return 1 end
        return b % 2 == 0
    end
    if b < 200 then
        local v = b - 100
        if b >= 180 then v = INTS[u8() % #INTS + 1] end
        return v
    end
    return gen_int(C.WIDE[kt])
end

local function gen_map(schema, f, depth)
    local n, instead = gen_size(10)
    if not n then return instead end
    local m = {}
    for _ = 1, n do
        if not spend() then break end
        local k = gen_key(f.key_type)
        if usable_key(k) then
            if INT_KEY[f.key_type] and type(k) ~= 'number' then MIXED_KEYS = true end
            m[k] = gen_typed(schema, f.value_type, f.value_type_name, f.value_enum, depth + 1)
        end
    end
    return register(decorate(m))
end

local function gen_field(schema, f, depth)
    if f.type == 'map' then return gen_map(schema, f, depth) end
    if f.label == 'repeated' then return gen_array(schema, f, depth) end
    return gen_typed(schema, f.type, f.type_name, f.enum, depth)
end

local function junk_key(fields)
    local b = u8()
    local w = b % 10
    if w == 0 then return gen_string()
    elseif w == 1 and #fields > 0 then return fields[u8() % #fields + 1].name .. '_'
    elseif w == 2 and #fields > 0 then return fields[u8() % #fields + 1].name:upper()
    elseif w == 3 then return 1
    elseif w == 4 then return 1.5
    elseif w == 5 then return true
    elseif w == 6 then return {}
    elseif w == 7 then return I64(7)
    elseif w == 8 then return '[' .. (fields[1] and fields[1].name or 'x') .. ']'
    else return print
    end
end

gen_message = function(schema, name, depth)
    local b = u8()
    if b == 255 and #BUILT > 0 then
        -- a table made earlier: sharing, or a cycle when it is an ancestor
        return BUILT[u8() % #BUILT + 1]
    end
    local t = register({})
    if depth > MAX_DEPTH or BUDGET <= 0 then return t end
    local mi = message_info(schema, name)
    local fields = mi.fields
    local n = b % 12
    for _ = 1, n do
        if not spend() then break end
        local k = u8()
        if k < 232 and #fields > 0 then
            local f = fields[k % #fields + 1]
            t[f.name] = gen_field(schema, f, depth)
        else
            local key = junk_key(fields)
            if usable_key(key) then t[key] = gen_any(depth + 1) end
        end
    end
    return decorate(t)
end

gen_any = function(depth)
    BUDGET = BUDGET - 1
    local b = u8()
    local w = b % 26
    if w == 0 then return nil
    elseif w == 1 then return b >= 128
    elseif w == 2 then return gen_int(true, true)
    elseif w == 3 then return gen_float()
    elseif w == 4 then return gen_string()
    elseif w == 5 then
        local t = {}
        if depth < MAX_DEPTH and BUDGET > 0 then
            for i = 1, u8() % 6 do t[i] = gen_any(depth + 1) end
            for _ = 1, u8() % 4 do
                local k = gen_any(depth + 1)
                if usable_key(k) then t[k] = gen_any(depth + 1) end
            end
        end
        return register(decorate(t))
    elseif w == 6 then return print
    elseif w == 7 then return coroutine.create(print)
    elseif w == 8 then return newproxy(true)
    elseif w == 9 then return cdata64(I64)
    elseif w == 10 then return cdata64(U64)
    elseif w == 11 then return NULL
    elseif w == 12 then return Evil(u8())
    elseif w == 13 then
        local x = gen_float()
        return ffi.new('double', type(x) == 'number' and x or 1)
    elseif w == 14 then return #BUILT > 0 and BUILT[u8() % #BUILT + 1] or {}
    elseif w == 15 then return MSG
    elseif w == 16 then return C.schemas.hello
    elseif w == 17 then return ffi.cast('void*', u8())
    elseif w == 18 then return protolua
    elseif w == 19 then return setmetatable({}, EVIL_MT)
    elseif w == 20 then return ffi.new('char[4]')
    elseif w == 21 then return string.rep('\255', u8())
    elseif w == 22 then return ffi.new('struct protolua_fuzz_evil[1]')
    elseif w == 23 then return finalized(u8())
    elseif w == 24 then return ffi.cast('int64_t *', 0)
    else return raw_double()
    end
end

-- ---------------------------------------------------------------- checks

-- Does the decoded table hold unknown fields or a NaN anywhere (the two
-- legitimate reasons for encode(decode(b)) ~= b besides mixed map keys)?
local function relaxed(t, seen)
    if t ~= t then return true end
    if type(t) ~= 'table' or seen[t] then return false end
    seen[t] = true
    if protolua.unknown(t) then return true end
    for _, v in next, t do
        if relaxed(v, seen) then return true end
    end
    return false
end

local function options(bits)
    local o = {}
    if bits % 2 == 1 then o.strict_keys = false end
    if math.floor(bits / 2) % 2 == 1 then o.required = false end
    if math.floor(bits / 4) % 2 == 1 then o.utf8 = false end
    local d = math.floor(bits / 8) % 8
    if d > 0 then o.max_depth = ({ 1, 2, 3, 5, 8, 24, 100 })[d] end
    return o
end
local OPTS = {}
for bits = 0, 63 do
    OPTS[bits] = options(bits)
end

-- Per target, a table whose encoding is large (1 MB), for finalizers.
local BIG = {}
do
    local long = string.rep('x', 2 ^ 20)
    BIG['hello.Person'] = { name = long }
    BIG['proto2_basic.BenchPayload'] = { id = 1, name = long }
    BIG['protobuf_test_messages.proto2.TestAllTypesProto2'] = { optional_string = long }
    BIG['protobuf_test_messages.proto3.TestAllTypesProto3'] = { optional_string = long }
end

local function body(data)
    DATA, POS, LEN = data, 1, #data
    BUDGET, MIXED_KEYS, BUILT = MAX_NODES, false, {}
    local b0, b1 = u8(), u8()
    local target = C.targets[b0 % 4 + 1]
    local opts = OPTS[math.floor(b0 / 4)]
    MSG = target.msg
    ACTIONS = b1
    local aggressive = b1 % 2 == 1
    if aggressive then
        gc_pace(50, 1000)
        for i = 1, b1 % 8 do finalized(b1 + i) end
    end
    local ctx = function() return target.name .. ' opts ' .. C.describe_opts(opts) .. ' input ' .. C.hex(data) end

    -- The value: usually a message table; sometimes any value at all.
    local value
    if u8() < 248 then
        value = gen_message(target.schema, target.name, 1)
    else
        value = gen_any(1)
    end

    local msg = MSG
    local at_push = b1 % 16 == 2
    if at_push then
        -- A finalizer that encodes a large table with the same schema, run
        -- by the first collector check inside this encode: with pause 0
        -- every check runs a whole cycle. (The first allocation of an
        -- encode is the result string, in lua_pushlstring.)
        gc_pace(0, 1000000)
        collectgarbage('collect')
        local p = newproxy(true)
        getmetatable(p).__gc = function() pcall(msg.encode, msg, BIG[target.name]) end
        p = nil
        -- No mischief in this window: with pause 0 each of its allocations
        -- would cost a whole collection.
        in_mischief = true
    end
    -- (No options table when there are none: reading one pushes strings,
    -- a collector check before the encode starts.)
    local ok, bytes = C.call('encode', msg.encode, msg, value, next(opts) ~= nil and opts or nil)
    if at_push then
        in_mischief = false
        gc_pace(200, 200)
    end
    local ok2, t2, ok3, bytes2
    if ok then
        if type(bytes) ~= 'string' then C.fail('encode gave a %s: %s', type(bytes), ctx()) end
        local dopts = opts
        ok2, t2 = C.call('decode', msg.decode, msg, bytes, dopts)
        if not ok2 then
            C.fail('encoded bytes do not decode: %s\n  %s\n  encoding %s\n  value %s', t2, ctx(), C.hex(bytes),
                C.dump(value))
        end
        ok3, bytes2 = C.call('encode', msg.encode, msg, t2, opts)
        if not ok3 then
            C.fail('decoded table does not re-encode: %s\n  %s\n  encoding %s\n  decoded %s', bytes2, ctx(),
                C.hex(bytes), C.dump(t2))
        end
        if bytes2 ~= bytes then
            if not (MIXED_KEYS or relaxed(t2, {})) then
                C.fail('encode(decode(b)) ~= b:\n  %s\n  b  %s\n  b2 %s\n  value %s\n  decoded %s', ctx(),
                    C.hex(bytes), C.hex(bytes2), C.dump(value), C.dump(t2))
            end
            -- The weaker property: same table, and b2 is a fixed point.
            local ok4, t3 = C.call('decode', msg.decode, msg, bytes2, dopts)
            if not ok4 then C.fail('b2 does not decode: %s\n  %s', t3, ctx()) end
            local eq, why = C.deep_eq(t2, t3)
            if not eq and not MIXED_KEYS then
                C.fail('decode(b2) ~= decode(b): %s\n  %s\n  b %s\n  b2 %s', why, ctx(), C.hex(bytes), C.hex(bytes2))
            end
            local ok5, bytes3 = C.call('encode', msg.encode, msg, t3, opts)
            if not ok5 or (bytes3 ~= bytes2 and not MIXED_KEYS) then
                C.fail('b2 is not a fixed point: %s\n  b2 %s\n  b3 %s', ctx(), C.hex(bytes2), tostring(bytes3 and C.hex(bytes3)))
            end
        end
    end
    if aggressive then
        gc_pace(200, 200)
    end
    MSG = nil
    BUILT = {}
end

return C.driver(body)
