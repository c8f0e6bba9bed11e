-- Per-schema (load) and per-call options. Lua 5.1 compatible.
-- Needs the globals set by harness.lua.

local fds = T.readfile(FIXTURES .. '/descriptors/alltypes3.fds')
local S = protolua.load(fds)
local A = 'protolua.test.AllTypes'
local H = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')

local unhex = T.unhex

T.test('option enums: name (default) or number, per call and per schema', function()
    local bin = S:encode(A, { f_color = 'COLOR_GREEN' })
    T.eq(S:decode(A, bin).f_color, 'COLOR_GREEN')
    local n = S:decode(A, bin, { enums = 'number' }).f_color
    T.eq(type(n), 'number')
    T.eq(S:encode(A, { f_color = n }), bin)
    local Snum = protolua.load(fds, { enums = 'number' })
    T.eq(Snum:decode(A, bin).f_color, n)
    T.eq(Snum:decode(A, bin, { enums = 'name' }).f_color, 'COLOR_GREEN')
    T.raises("decode: enums must be 'name' or 'number'", function() return S:decode(A, bin, { enums = 'x' }) end)
end)

T.test('option int64: auto, number, string, cdata', function()
    local bin = S:encode(A, { f_int64 = '-9007199254740993', f_uint64 = '18446744073709551615', f_sint64 = 5 })
    local s = S:decode(A, bin, { int64 = 'string' })
    T.eq(s.f_int64, '-9007199254740993')
    T.eq(s.f_uint64, '18446744073709551615')
    T.eq(s.f_sint64, '5')
    local n = S:decode(A, bin, { int64 = 'number' })
    T.eq(type(n.f_int64), 'number')
    T.eq(n.f_sint64, 5)
    local c = S:decode(A, bin, { int64 = 'cdata' })
    if T.is_luajit then
        T.eq(type(c.f_sint64), 'cdata')
        T.eq(tostring(c.f_sint64), '5LL')
    elseif math.type then
        T.eq(math.type(c.f_sint64), 'integer')
    else
        T.eq(c.f_sint64, 5, 'PUC Lua 5.1: a number when exact')
    end
    local a = S:decode(A, bin)
    T.eq(a.f_sint64, 5)
    -- every form encodes back to the same bytes
    T.eq(S:encode(A, s), bin)
    T.eq(S:encode(A, c), bin)
    T.eq(S:encode(A, a), bin)
    T.raises("int64 must be 'auto', 'number', 'string' or 'cdata'", function() return S:decode(A, bin, { int64 = 1 }) end)
end)

T.test('option utf8: off skips the UTF-8 check both ways', function()
    local bad = unhex('0a02c328') -- hello.Person.name = "\xc3\x28"
    T.raises('invalid UTF-8 at byte 2', function() return H:decode('hello.Person', bad) end)
    T.eq(H:decode('hello.Person', bad, { utf8 = false }).name, '\195\040')
    T.raises('not valid UTF-8', function() return H:encode('hello.Person', { name = '\195\040' }) end)
    T.eq(H:encode('hello.Person', { name = '\195\040' }, { utf8 = false }), bad)
    local lax = protolua.load_file(FIXTURES .. '/descriptors/hello.fds', { utf8 = false })
    T.eq(lax:decode('hello.Person', bad).name, '\195\040')
end)

T.test('option empty: absent repeated and map fields decode as empty tables', function()
    T.eq(H:decode('hello.Person', ''), {})
    T.eq(H:decode('hello.Person', '', { empty = true }), { emails = {}, lucky_numbers = {} })
    local t = H:decode('hello.Person', unhex('1a0161'), { empty = true })
    T.eq(t, { emails = { 'a' }, lucky_numbers = {} })
    T.eq(H:encode('hello.Person', { emails = {}, lucky_numbers = {} }), '')
end)

T.test('option strict_keys, max_depth, required, unknown per call', function()
    T.raises('unknown field "nope"', function() return H:encode('hello.Person', { nope = 1 }) end)
    T.eq(H:encode('hello.Person', { nope = 1 }, { strict_keys = false }), '')
    T.raises('nesting deeper than the limit of 1',
        function() return H:encode('hello.Person', { address = {} }, { max_depth = 1 }) end)
    T.raises('nesting deeper than the limit of 1',
        function() return H:decode('hello.Person', unhex('2200'), { max_depth = 1 }) end)
    local t = H:decode('hello.Person', unhex('980605'), { unknown = 'drop' })
    T.eq(protolua.unknown(t), nil)
    local P2 = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds')
    T.eq(P2:encode('proto2_basic.BenchPayload', {}, { required = false }), '')
    T.raises('encode: options must be a table, got string', function() return H:encode('hello.Person', {}, 'x') end)
    T.raises('decode: strict_keys must be a boolean', function() return H:decode('hello.Person', '', { strict_keys = 1 }) end)
end)

T.test('options work through message handles too', function()
    local M = S:message(A)
    local bin = M:encode({ f_color = 'COLOR_GREEN', f_int64 = 7 })
    local t = M:decode(bin, { enums = 'number', int64 = 'string' })
    T.eq(t.f_int64, '7')
    T.eq(type(t.f_color), 'number')
    T.eq(M:encode({ zzz = 1 }, { strict_keys = false }), '')
end)

T.test('option defaults: none, values (declared proto2 defaults, proto3 zeros), metatable', function()
    local P2 = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds')
    local B = 'proto2_basic.BenchPayload'
    local bin = P2:encode(B, { id = 1, name = 'x' })
    T.eq(P2:decode(B, bin), { id = 1, name = 'x' })
    local v = P2:decode(B, bin, { defaults = 'values' })
    T.eq(v.score, 1.5)
    T.eq(v.active, true)
    T.eq(v.kind, 'KIND_ALPHA')
    T.eq(v.note, 'hello')
    T.eq(v.delta, -1)
    T.eq(v.ratio, 0.25)
    T.eq(v.timestamp, 0)
    T.eq(v.blob, '')
    T.eq(v.inner, nil)  -- messages stay absent
    T.eq(v.values, nil) -- repeated too (see `empty`)
    T.eq(P2:decode(B, bin, { defaults = 'values', enums = 'number' }).kind, 1)
    local m = P2:decode(B, bin, { defaults = 'metatable' })
    local n = 0
    for _ in pairs(m) do n = n + 1 end
    T.eq(n, 2)
    T.eq(m.note, 'hello')
    T.eq(getmetatable(m), getmetatable(P2:decode(B, bin, { defaults = 'metatable' })))
    T.eq(P2:encode(B, m), bin) -- encode reads raw: defaults are not written
    -- proto3: zero values
    local z = S:decode(A, '', { defaults = 'values' })
    T.eq(z.f_int32, 0)
    T.eq(z.f_string, '')
    T.eq(z.f_bool, false)
    T.eq(z.f_color, 'COLOR_UNSPECIFIED')
    T.eq(S:decode(A, '', { defaults = 'values', int64 = 'string' }).f_int64, '0')
    T.raises("defaults must be 'none', 'values' or 'metatable'", function() return S:decode(A, '', { defaults = true }) end)
end)

T.test('map entry without a value: an enum defaults to its first declared value', function()
    -- m_int32_color (77) entry { key = 1 }: value absent -> COLOR_UNSPECIFIED (0), not COLOR_NEG (-1)
    local t = S:decode(A, '\234\004\002\008\001')
    T.eq(t.m_int32_color, { [1] = 'COLOR_UNSPECIFIED' })
    T.eq(S:enum('protolua.test.Color').COLOR_NEG, -1)
end)

T.test('option serialize: __serialize metatables on messages, arrays and maps', function()
    local P = H:message('hello.Person')
    local bin = P:encode({ name = 'n', emails = { 'a' }, address = { city = 'c' } })
    local plain = P:decode(bin)
    if not box then T.eq(getmetatable(plain), nil, 'off by default outside Tarantool') end
    local d = P:decode(bin, { serialize = true })
    T.eq(getmetatable(d).__serialize, 'map', 'message')
    T.eq(getmetatable(d.emails).__serialize, 'seq', 'repeated')
    T.eq(getmetatable(d.address).__serialize, 'map', 'nested message')
    T.eq(d, plain, 'same contents')
    local m = S:decode(A, S:encode(A, { m_int32 = { [1] = 2 } }), { serialize = true })
    T.eq(getmetatable(m.m_int32).__serialize, 'map', 'map field')
    local e = S:decode(A, '', { serialize = true, empty = true })
    T.eq(getmetatable(e.r_int32).__serialize, 'seq', 'empty repeated')
    T.eq(getmetatable(e.m_int32).__serialize, 'map', 'empty map')
    local dm = S:decode(A, '', { serialize = true, defaults = 'metatable' })
    T.eq(getmetatable(dm).__serialize, 'map', 'defaults metatable serializes as a map')
    T.eq(dm.f_int32, 0, 'and still gives defaults')
    T.eq(getmetatable(S:decode(A, '', { defaults = 'metatable', serialize = false })).__serialize, 'map', 'always on the defaults mt')
    T.eq(getmetatable(protolua.load(fds, { serialize = true }):decode(A, '')).__serialize, 'map', 'per schema')
    T.raises('decode: serialize must be a boolean', function() return S:decode(A, '', { serialize = 'yes' }) end)
end)

T.test('option serialize on a flat message: per call, both ways, whatever setmetatable is', function()
    -- The root fast path builds {name, age} by a constructor of its shape;
    -- with serialize that constructor sets the map metatable itself.
    local saved = setmetatable
    for round = 1, 3 do
        -- Round 2: a fresh handle compiles its constructors while the
        -- global is a Lua function, which is never called.
        local called = false
        if round == 2 then
            rawset(_G, 'setmetatable', function(...) called = true; return saved(...) end)
        end
        local P = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
        local bin = P:encode({ name = 'n', age = 3 })
        local json = P:encode_json({ name = 'n', age = 3 })
        local got = {}
        for _, ser in ipairs({ true, false, true, false }) do
            got[#got + 1] = { ser, P:decode(bin, { serialize = ser }) }
            got[#got + 1] = { ser, P:decode_json(json, { serialize = ser }) }
        end
        rawset(_G, 'setmetatable', saved)
        T.eq(called, false, 'the replacement is not called')
        for _, g in ipairs(got) do
            local mt = getmetatable(g[2])
            T.eq(g[2], { name = 'n', age = 3 }, 'round ' .. round)
            T.eq(mt and mt.__serialize, g[1] and 'map' or nil, 'round ' .. round)
        end
    end
end)

T.test('a NULL cdata (box.NULL, msgpack.NULL) in an input table means absent', function()
    if not jit then return end
    local NULL = require('ffi').cast('void *', 0)
    local P = H:message('hello.Person')
    T.eq(P:encode({ name = 'n', age = NULL, emails = NULL }), P:encode({ name = 'n' }), 'scalar and repeated')
    T.eq(S:encode(A, { f_nested = NULL, m_int32 = NULL, f_int64 = NULL }), '', 'message, map, int64')
    T.raises('field r_int32[1]', function() return S:encode(A, { r_int32 = { NULL } }) end)
end)
