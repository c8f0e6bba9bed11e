-- decode's root fast path (DecodeCtx::root_fast in src/binary/decode/root_fast.rs): an input
-- of at most 64 bytes made only of plain singular fields with one-byte tags
-- is read whole before its table is made. Each test decodes such an input
-- (the fast path) and the same fields where the fast path must give up: an
-- unknown field after them (dropped with `unknown = 'drop'`), or more than
-- 64 bytes. Both must give the same table, and the same error. Lua 5.1
-- compatible.

local unhex, tag, varint = T.unhex, T.tag, T.varint
local ALL = 'protolua.test.AllTypes'

-- An unknown field (number 999, varint): never a plain tag.
local UNKNOWN = tag(999, 0) .. varint(1)

-- Decode `bin` both ways and check both against `want`.
local function both_ways(M, bin, want, opts)
    assert(#bin <= 64, 'the fast path needs at most 64 bytes')
    local o = { unknown = 'drop' }
    for k, v in pairs(opts or {}) do o[k] = v end
    local fast = M:decode(bin, o)
    local slow = M:decode(bin .. UNKNOWN, o)
    T.eq(fast, want, 'fast path')
    T.eq(slow, want, 'general path')
    return fast
end

-- The error of `bin` and of `bin` padded past 64 bytes by `pad` (fields
-- after the bad one, never reached): the same message.
local function same_error(M, needle, bin, pad)
    assert(#bin <= 64 and #bin + #pad > 64)
    local fast = T.raises(needle, M.decode, M, bin)
    local slow = T.raises(needle, M.decode, M, bin .. pad)
    T.eq(fast, slow, 'error')
    return fast
end

local function str(n, s) return tag(n, 2) .. varint(#s) .. s end
local function vint(n, v) return tag(n, 0) .. varint(v) end

T.test('root fast path: every scalar kind as the general path decodes it', function()
    local M = T.schema('alltypes3.fds'):message(ALL)
    -- f_int32 = -1 (10 bytes), f_int64 = 2^40, f_uint32 = 2^32 - 1,
    -- f_uint64 = 300, f_sint32 = -3, f_sint64 = 5.
    local ints = vint(1, 0) .. unhex('08 ffffffffffffffffff01') .. vint(2, 2 ^ 40) .. vint(3, 2 ^ 32 - 1)
        .. vint(4, 300) .. vint(5, 5) .. vint(6, 10)
    both_ways(M, ints, {
        f_int32 = -1, f_int64 = T.i64('1099511627776'), f_uint32 = 4294967295,
        f_uint64 = T.u64('300'), f_sint32 = -3, f_sint64 = T.i64('5'),
    })
    -- fixed32, fixed64, sfixed32, sfixed64, float, double, bool.
    local fixed = unhex('3d 78563412  41 0100000000000000  4d feffffff  51 fdffffffffffffff'
        .. '  5d 0000c03f  61 000000000000f83f  68 01')
    both_ways(M, fixed, {
        f_fixed32 = 0x12345678, f_fixed64 = T.u64('1'), f_sfixed32 = -2, f_sfixed64 = T.i64('-3'),
        f_float = 1.5, f_double = 1.5, f_bool = true,
    })
    -- string and bytes, the string with a multi-byte character, and a
    -- 2-byte length (130 bytes would pass 64: 60 bytes of bytes instead).
    local long = string.rep('z', 60)
    both_ways(M, str(14, 'h\195\169') .. str(15, '\0\255'), { f_string = 'h\195\169', f_bytes = '\0\255' })
    both_ways(M, str(15, long), { f_bytes = long })
    -- Empty strings and zeros are stored as on the wire.
    both_ways(M, str(14, '') .. vint(1, 0) .. vint(13, 0), { f_string = '', f_int32 = 0, f_bool = false })
end)

T.test('root fast path: int64 options', function()
    local M = T.schema('alltypes3.fds'):message(ALL)
    local bin = vint(2, 2 ^ 40) .. vint(4, 7) .. unhex('41 0100000000000000  51 fdffffffffffffff')
    both_ways(M, bin, { f_int64 = '1099511627776', f_uint64 = '7', f_fixed64 = '1', f_sfixed64 = '-3' },
        { int64 = 'string' })
    both_ways(M, bin, { f_int64 = 2 ^ 40, f_uint64 = 7, f_fixed64 = 1, f_sfixed64 = -3 }, { int64 = 'number' })
    if T.is_luajit then
        local fast = M:decode(bin, { int64 = 'cdata' })
        local slow = M:decode(bin .. UNKNOWN, { int64 = 'cdata', unknown = 'drop' })
        for k, want in pairs({ f_int64 = '1099511627776LL', f_uint64 = '7ULL', f_fixed64 = '1ULL', f_sfixed64 = '-3LL' }) do
            T.eq(tostring(fast[k]), want, k)
            T.eq(tostring(slow[k]), want, k)
        end
    end
end)

T.test('root fast path: the last of a repeated singular field wins; 32 fields', function()
    local M = T.schema('alltypes3.fds'):message(ALL)
    both_ways(M, vint(1, 1) .. str(14, 'a') .. vint(1, 2) .. str(14, 'b'), { f_int32 = 2, f_string = 'b' })
    -- 32 two-byte fields: 64 bytes, the most the fast path takes.
    local bin = string.rep(vint(1, 1), 31) .. vint(1, 9)
    T.eq(#bin, 64)
    T.eq(M:decode(bin), { f_int32 = 9 })
    T.eq(M:decode(bin .. vint(1, 8)), { f_int32 = 8 })
end)

T.test('root fast path: a small message (lean plan) and Person', function()
    local N = T.schema('alltypes3.fds'):message(ALL .. '.Nested')
    both_ways(N, vint(1, 7) .. str(2, 'x'), { a = 7, b = 'x' })
    local P = T.schema('hello.fds'):message('hello.Person')
    both_ways(P, str(1, 'Alice') .. vint(2, 30), { name = 'Alice', age = 30 })
    -- A field the fast path does not take (repeated, sub-message) first,
    -- in the middle, last: the general path decodes the whole input.
    T.eq(P:decode(str(3, 'a@b') .. str(1, 'A')), { emails = { 'a@b' }, name = 'A' })
    T.eq(P:decode(str(1, 'A') .. str(4, str(2, 'c')) .. vint(2, 3)), { name = 'A', age = 3, address = { city = 'c' } })
    T.eq(P:decode(str(1, 'A') .. vint(2, 3) .. str(3, 'e')), { name = 'A', age = 3, emails = { 'e' } })
    -- The wrong wire type for a plain field: an unknown field (kept).
    local odd = str(1, 'A') .. tag(2, 2) .. varint(1) .. 'x'
    T.eq(P:decode(odd, { unknown = 'drop' }), { name = 'A' })
    T.eq(P:encode(P:decode(odd)), odd)
end)

T.test('root fast path: open enums (names, unknown numbers, enums = number)', function()
    -- message M { E e = 1; string s = 2; } enum E { E_A = 0; E_B = 1; }
    local function len(n, s) return tag(n, 2) .. varint(#s) .. s end
    local enum = len(1, 'E') .. len(2, len(1, 'E_A') .. vint(2, 0)) .. len(2, len(1, 'E_B') .. vint(2, 1))
    local function field(name, number, ty, tyname)
        return len(2, len(1, name) .. vint(3, number) .. vint(4, 1) .. vint(5, ty) .. (tyname and len(6, tyname) or ''))
    end
    local msg = len(1, 'M') .. field('e', 1, 14, '.E') .. field('s', 2, 9)
    local fds = len(1, len(1, 'e.proto') .. len(4, msg) .. len(5, enum) .. len(12, 'proto3'))
    local M = protolua.load(fds):message('M')
    both_ways(M, vint(1, 1) .. str(2, 'x'), { e = 'E_B', s = 'x' })
    both_ways(M, vint(1, 7), { e = 7 })
    both_ways(M, vint(1, 1), { e = 1 }, { enums = 'number' })
end)

T.test('root fast path: proto2 required fields', function()
    local B = T.schema('proto2_basic.fds'):message('proto2_basic.BenchPayload')
    both_ways(B, vint(1, 1) .. str(2, 'n'), { id = 1, name = 'n' })
    -- A missing required field: the fast path's own check.
    local pre = 'protolua: decode proto2_basic.BenchPayload: missing required field '
    T.eq(select(2, pcall(B.decode, B, vint(1, 1))), pre .. 'name of proto2_basic.BenchPayload at byte 2')
    T.eq(select(2, pcall(B.decode, B, str(2, 'n'))), pre .. 'id of proto2_basic.BenchPayload at byte 3')
    T.raises('missing required field name', B.decode, B, vint(1, 1) .. UNKNOWN)
    T.eq(B:decode(vint(1, 1), { required = false }), { id = 1 })
    -- Optional fields with defaults: only with option defaults, which the
    -- fast path leaves to the general one.
    T.eq(B:decode(vint(1, 1) .. str(2, 'n'), { defaults = 'values' }).note, 'hello')
end)

T.test('root fast path: errors are the general path\'s', function()
    local M = T.schema('alltypes3.fds'):message(ALL)
    local pad = string.rep(vint(1, 1), 40)
    -- Invalid UTF-8 in a proto3 string, with and without the check.
    same_error(M, 'UTF-8', vint(1, 1) .. str(14, '\255'), pad)
    T.eq(M:decode(str(14, '\255'), { utf8 = false }), { f_string = '\255' })
    -- Truncated values (a varint, a LEN past the end, fixed32, fixed64)
    -- and a bad tag after a good field: the messages the general path
    -- gave before the fast path existed.
    local pre = 'protolua: decode protolua.test.AllTypes: '
    T.eq(select(2, pcall(M.decode, M, unhex('0801 0880'))), pre .. 'field f_int32: truncated input at byte 3')
    T.eq(select(2, pcall(M.decode, M, unhex('72 05 6162'))),
        pre .. 'field f_string: length 5 exceeds the 2 bytes remaining at byte 1')
    T.eq(select(2, pcall(M.decode, M, unhex('3d 0102'))), pre .. 'field f_fixed32: truncated input at byte 1')
    T.eq(select(2, pcall(M.decode, M, unhex('41 01020304'))), pre .. 'field f_fixed64: truncated input at byte 1')
    T.eq(select(2, pcall(M.decode, M, unhex('0801 0001'))), pre .. 'field number 0 in tag at byte 2')
    same_error(M, 'field number 0 in tag at byte 2', unhex('0801 0001'), pad)
    T.eq(select(2, pcall(M.decode, M, unhex('0801 72 01 ff'))), pre .. 'field f_string: invalid UTF-8 at byte 4')
end)

T.test('root fast path: options the fast path leaves to the general one', function()
    local M = T.schema('alltypes3.fds'):message(ALL)
    local bin = vint(1, 5)
    local t = M:decode(bin, { empty = true })
    T.eq(t.f_int32, 5)
    T.eq(t.r_int32, {})
    T.eq(M:decode(bin, { defaults = 'values' }).f_string, '')
    T.eq(M:decode(bin, { defaults = 'metatable' }).f_bool, false)
    -- serialize: the fast path gives the table its metatable.
    local s = M:decode(bin, { serialize = true })
    T.eq(s.f_int32, 5)
    T.eq(getmetatable(s).__serialize, 'map')
    T.eq(getmetatable(M:decode(bin .. UNKNOWN, { serialize = true, unknown = 'drop' })), getmetatable(s))
    -- An empty input: an empty table either way.
    T.eq(M:decode(''), {})
    T.eq(getmetatable(M:decode('', { serialize = true })), getmetatable(s))
end)

-- LuaJIT: the fast path's table comes from a constructor per shape (the
-- field numbers in wire order: src/binary/decode/ctor/shape.rs), cached per handle, at
-- most 64, the last one used kept apart. Every shape must give the table
-- the C API path gives (`schema:decode`, which takes no constructor).
T.test('root fast path: shape constructors, every order, the cache full, switching shapes', function()
    local S = T.schema('alltypes3.fds')
    local M = S:message(ALL)
    local fields = { vint(1, 7), vint(2, 2 ^ 40), str(14, 'str'), unhex('5d 0000c03f'), unhex('68 01') }
    local want = { f_int32 = 7, f_int64 = T.i64('1099511627776'), f_string = 'str', f_float = 1.5, f_bool = true }
    -- Every ordered choice of 1 to 5 of the fields: 325 shapes, five times
    -- the cache; each decoded twice in a row (a hit of the last shape)
    -- and once more at the end (after the cache filled up).
    local shapes = {}
    local function choose(prefix, used, depth)
        if depth > 0 then shapes[#shapes + 1] = prefix end
        for i = 1, #fields do
            if not used[i] then
                used[i] = true
                local p = {}
                for k, v in ipairs(prefix) do p[k] = v end
                p[#p + 1] = i
                choose(p, used, depth + 1)
                used[i] = false
            end
        end
    end
    choose({}, {}, 0)
    T.eq(#shapes, 325)
    local function check(shape)
        local bin, expect = '', {}
        for _, i in ipairs(shape) do
            bin = bin .. fields[i]
            local k = ({ 'f_int32', 'f_int64', 'f_string', 'f_float', 'f_bool' })[i]
            expect[k] = want[k]
        end
        local general = S:decode(ALL, bin)
        T.eq(general, expect, 'general path')
        for _ = 1, 2 do
            local t = M:decode(bin)
            T.eq(t, expect, 'constructor')
            T.eq(getmetatable(t), getmetatable(general), 'metatable')
            local n = 0
            for _ in pairs(t) do n = n + 1 end
            T.eq(n, #shape, 'keys')
        end
    end
    for _, shape in ipairs(shapes) do check(shape) end
    for i = #shapes, 1, -7 do check(shapes[i]) end
    -- Two shapes taking turns, and 7 fields (the longest shape) against 8.
    for _ = 1, 3 do
        T.eq(M:decode(fields[1] .. fields[3]), { f_int32 = 7, f_string = 'str' })
        T.eq(M:decode(fields[3] .. fields[1]), { f_int32 = 7, f_string = 'str' })
    end
    local seven = table.concat(fields) .. vint(3, 1) .. vint(4, 2)
    local eight = seven .. vint(5, 3)
    T.eq(M:decode(seven), S:decode(ALL, seven))
    T.eq(M:decode(eight), S:decode(ALL, eight))
    T.eq(M:decode(eight).f_sint32, -2)
end)

T.test('root fast path: shape constructors with option serialize, and another handle of the message', function()
    local S = T.schema('alltypes3.fds')
    local M = S:message(ALL)
    local bin = vint(1, 5) .. str(14, 'x')
    local plain = M:decode(bin, { serialize = false })
    local ser = M:decode(bin, { serialize = true })
    T.eq(plain, ser)
    T.eq(getmetatable(plain), nil)
    T.eq(getmetatable(ser).__serialize, 'map')
    -- The same shape again, the option the other way round: the memo of the
    -- last shape holds the constructor, the metatable follows the option.
    T.eq(getmetatable(M:decode(bin, { serialize = false })), nil)
    T.eq(getmetatable(M:decode(bin, { serialize = true })).__serialize, 'map')
    -- A second schema loaded from the same file: its own handles and caches.
    local M2 = T.schema('alltypes3.fds'):message(ALL)
    T.eq(M2:decode(bin), M:decode(bin))
    -- Required fields missing still raise through the constructor path.
    local P2 = T.schema('proto2_basic.fds'):message('proto2_basic.BenchPayload')
    local ok = P2:decode(vint(1, 1) .. str(2, 'a'))
    T.eq(ok, { id = 1, name = 'a' })
end)

-- review8: a descriptor built here, with field names no .proto allows (the
-- constructor's key literals must take any byte), proto2 required fields.
local function ld(n, s) return tag(n, 2) .. varint(#s) .. s end
local function fdesc(name, num, ty, label) return ld(2, ld(1, name) .. vint(3, num) .. vint(4, label) .. vint(5, ty)) end
local ODD = { 'a"]', 'b\\', 'c\n', 'd\0e', '', 'end', '1', ('x'):rep(300) }

T.test('root fast path: shape constructors with odd key bytes, required fields, hooks', function()
    local fields = {}
    for i, name in ipairs(ODD) do fields[i] = fdesc(name, i, 5, 1) end -- int32, optional
    fields[#fields + 1] = fdesc('req', 9, 9, 2) -- string, required
    local S = protolua.load(ld(1, ld(1, 'odd.proto') .. ld(2, 'odd') .. ld(4, ld(1, 'M') .. table.concat(fields))))
    local M = S:message('odd.M')
    for i = 1, #ODD do
        local bin = vint(i, i) .. str(9, 'r') .. vint((i % #ODD) + 1, 40 + i)
        local t = M:decode(bin)
        T.eq(t, S:decode('odd.M', bin))
        T.eq(t[ODD[i]], i)
    end
    -- Missing required field through the constructor: the same error.
    local e1 = T.raises('missing required field req', M.decode, M, vint(1, 1) .. vint(2, 2))
    local e2 = T.raises('missing required field req', S.decode, S, 'odd.M', vint(1, 1) .. vint(2, 2))
    T.eq(e1, e2)
    if not T.is_luajit then return end
    -- A debug hook that raises inside the constructor: the error leaves
    -- decode, the handle's memo of its last constructor stays usable.
    local bin = vint(1, 1) .. str(9, 'r')
    debug.sethook(function()
        local i = debug.getinfo(2, 'S')
        if i and i.source == '=protolua.ctor' and i.what ~= 'main' then error('hook') end
    end, '', 1)
    local ok, err = pcall(M.decode, M, bin)
    debug.sethook()
    T.eq(ok, false)
    T.eq(tostring(err):match('hook') ~= nil, true)
    T.eq(M:decode(bin), S:decode('odd.M', bin))
    -- A hook decoding new shapes with the same handle while a miss compiles
    -- (the chunk runs Lua code): the cache must stay at 64 entries.
    local M2 = protolua.load(ld(1, ld(1, 'odd.proto') .. ld(2, 'odd') .. ld(4, ld(1, 'M') .. table.concat(fields)))):message('odd.M')
    local j, busy = 100, false
    local function shape(k) -- three distinct fields of 1..8 in an order (336 shapes)
        local a = k % 8
        local b = (a + 1 + math.floor(k / 8) % 7) % 8
        local c = a
        for _ = 0, math.floor(k / 56) % 6 do
            c = (c + 1) % 8
            while c == a or c == b do c = (c + 1) % 8 end
        end
        return vint(a + 1, 1) .. vint(b + 1, 2) .. vint(c + 1, 3) .. str(9, 'r')
    end
    debug.sethook(function()
        local i = debug.getinfo(2, 'S')
        if not busy and i and i.source == '=protolua.ctor' and i.what == 'main' then
            busy = true
            for _ = 1, 3 do j = j + 1; M2:decode(shape(j)) end
            busy = false
        end
    end, '', 1)
    for k = 1, 60 do M2:decode(shape(k)) end
    debug.sethook()
    local name, cache
    for u = 1, 40 do
        local n, v = debug.getupvalue(M2.decode, u)
        if n == nil then break end
        if type(v) == 'table' and v[0] then name, cache = n, v end
    end
    T.eq(name ~= nil, true, 'cache upvalue found')
    local entries = 0
    for k in pairs(cache) do if k ~= 0 then entries = entries + 1 end end
    T.eq(entries <= 64, true, 'cache entries ' .. entries)
end)

T.test('root fast path: a hook decoding the same shape while its constructor compiles', function()
    if not T.is_luajit then return end
    -- A handle of its own: its constructor cache starts empty.
    local P = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
    local bin = str(1, 'Alexey') .. vint(2, 30)
    local t, inner = T.decode_while_ctor_compiles(function() return P:decode(bin) end,
        function() T.eq(P:decode(bin), { name = 'Alexey', age = 30 }, 'inside the hook') end)
    T.eq(t, { name = 'Alexey', age = 30 })
    T.eq(inner > 0, true, 'the hook decoded')
    -- One constructor cached for the one shape, and counted once.
    local cache
    for u = 1, 40 do
        local n, v = debug.getupvalue(P.decode, u)
        if n == nil then break end
        if type(v) == 'table' and v[0] then cache = v end
    end
    local entries = 0
    for k in pairs(cache) do if k ~= 0 then entries = entries + 1 end end
    T.eq(entries, 1, 'cached constructors')
    T.eq(cache[0], 1, 'their count')
end)
