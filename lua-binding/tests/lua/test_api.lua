-- The Lua API surface of issue 3: loading, handles, conveniences,
-- introspection, several schemas, GC, and the decode/encode semantics that
-- the golden files do not cover (oneof last-wins, packed/unpacked, wire
-- type mismatch, map duplicate keys, enums, 64-bit values).
-- Lua 5.1 compatible. Needs the globals set by harness.lua.

local DESC = FIXTURES .. '/descriptors/'
local hello_bytes = T.readfile(DESC .. 'hello.fds')
local all3_bytes = T.readfile(DESC .. 'alltypes3.fds')

local hello = protolua.load(hello_bytes)
local all3 = protolua.load_file(DESC .. 'alltypes3.fds')
local Person = hello:message('hello.Person')
local AllTypes = all3:message('protolua.test.AllTypes')

-- Unsigned varint of a non-negative Lua number (< 2^53).
local varint, tag = T.varint, T.tag

local function contains(arr, v)
    for _, x in ipairs(arr) do if x == v then return true end end
    return false
end

local function fields_by_name(M)
    local by = {}
    for _, f in ipairs(M:fields()) do by[f.name] = f end
    return by
end

-- Split a FileDescriptorSet into its FileDescriptorProto payloads (field 1).
local function split_fds(bytes)
    local files, i = {}, 1
    while i <= #bytes do
        assert(bytes:byte(i) == 10, 'expected tag 1/LEN in the descriptor set')
        i = i + 1
        local len, shift = 0, 1
        while true do
            local b = bytes:byte(i)
            i = i + 1
            len = len + (b % 128) * shift
            shift = shift * 128
            if b < 128 then break end
        end
        files[#files + 1] = bytes:sub(i, i + len - 1)
        i = i + len
    end
    return files
end

local function join_fds(files)
    local out = {}
    for _, f in ipairs(files) do out[#out + 1] = '\10' .. varint(#f) .. f end
    return table.concat(out)
end

---------------------------------------------------------------------------
-- load / load_file / message handles

T.test('api load bytes and load_file give working schemas', function()
    local a = protolua.load(hello_bytes)
    local b = protolua.load_file(DESC .. 'hello.fds')
    local t = { name = 'Ann', age = 7, emails = { 'a@x', 'b@y' }, address = { city = 'Oslo' }, lucky_numbers = { 1, 2, 3 } }
    local ea = a:message('hello.Person'):encode(t)
    local eb = b:message('hello.Person'):encode(t)
    T.eq(ea, eb, 'same bytes from both schemas')
    T.eq(b:message('hello.Person'):decode(ea), t, 'round trip')
end)

T.test('api message by name and by dotted name', function()
    local h1 = hello:message('hello.Person')
    local h2 = hello:message('hello.Person')
    T.eq(rawequal(h1, h2), true, 'same handle twice')
    local d = hello:message('.hello.Person')
    local bytes = h1:encode({ name = 'x', age = 3 })
    T.eq(d:encode({ name = 'x', age = 3 }), bytes, 'dotted handle encodes the same')
    T.eq(d:decode(bytes), { name = 'x', age = 3 }, 'dotted handle decodes')
    T.eq(rawequal(hello:message('.hello.Person'), d), true, 'dotted handle cached too')
    T.eq(d:name(), 'hello.Person', 'name()')
    T.eq(tostring(h1):find('hello.Person', 1, true) ~= nil, true, 'tostring names the type')
end)

T.test('api unknown message is an error', function()
    T.raises('unknown message type "hello.Nope"', function() return hello:message('hello.Nope') end)
    T.raises('unknown message type', function() return hello:message('Person') end)
    T.raises('unknown message type', function() return hello:encode('hello.Nope', {}) end)
    T.raises('unknown message type', function() return hello:decode('hello.Nope', '') end)
    T.raises('expected a message name, got number', function() return hello:message(5) end)
    -- an enum name is not a message
    T.raises('unknown message type', function() return all3:message('protolua.test.Color') end)
end)

T.test('api schema:encode/decode equal Msg:encode/decode', function()
    local t = { name = 'Bob', emails = { 'e' }, address = { street = 'S', zip = '1' }, lucky_numbers = { -1, 300 } }
    local e1 = Person:encode(t)
    T.eq(hello:encode('hello.Person', t), e1, 'schema:encode')
    T.eq(hello:encode('.hello.Person', t), e1, 'schema:encode dotted')
    T.eq(hello:decode('hello.Person', e1), Person:decode(e1), 'schema:decode')
    T.eq(hello:decode('hello.Person', e1), t, 'schema:decode value')
    local at = { f_int32 = -5, f_string = 'hé', m_int32 = { [1] = 2, [3] = 4 }, r_color = { 'COLOR_RED', 'COLOR_BLUE' } }
    local e2 = AllTypes:encode(at)
    T.eq(all3:encode('protolua.test.AllTypes', at), e2, 'alltypes encode')
    T.eq(all3:decode('protolua.test.AllTypes', e2), at, 'alltypes decode')
    -- the same error semantics
    T.raises('encode hello.Person: field name: expected string, got number',
        function() return hello:encode('hello.Person', { name = 5 }) end)
    T.raises('decode hello.Person', function() return hello:decode('hello.Person', '\10\5ab') end)
end)

T.test('api schema:messages() lists names without map entries', function()
    local m = hello:messages()
    T.eq(#m, 2, 'hello has two messages')
    T.eq(contains(m, 'hello.Person'), true, 'Person listed')
    T.eq(contains(m, 'hello.Address'), true, 'Address listed')
    local m3 = all3:messages()
    for _, n in ipairs({ 'protolua.test.AllTypes', 'protolua.test.AllTypes.Nested', 'protolua.test.Node',
        'protolua.imp.ImpMsg' }) do
        T.eq(contains(m3, n), true, n .. ' listed')
    end
    for _, n in ipairs(m3) do
        T.eq(type(n), 'string', 'name is a string')
        T.eq(n:sub(1, 1) ~= '.', true, 'no leading dot: ' .. n)
        T.eq(n:find('Entry$') == nil, true, 'no map entry: ' .. n)
    end
    T.eq(#m3, 4, 'alltypes3 message count')
    -- each listed name resolves
    for _, n in ipairs(m3) do all3:message(n) end
end)

T.test('api schema:enums() and schema:enum()', function()
    T.eq(#hello:enums(), 0, 'hello has no enums')
    local e = all3:enums()
    T.eq(contains(e, 'protolua.test.Color'), true, 'Color')
    T.eq(contains(e, 'protolua.test.AllTypes.Mood'), true, 'Mood')
    T.eq(contains(e, 'protolua.imp.ImpEnum'), true, 'ImpEnum')
    T.eq(#e, 3, 'enum count')
    T.eq(all3:enum('protolua.test.Color'),
        { COLOR_UNSPECIFIED = 0, COLOR_RED = 1, COLOR_GREEN = 2, COLOR_BLUE = 3, COLOR_NEG = -1 }, 'Color values')
    T.eq(all3:enum('.protolua.test.AllTypes.Mood'), { MOOD_UNSPECIFIED = 0, MOOD_HAPPY = 1, MOOD_SAD = 2 }, 'Mood')
    T.eq(all3:enum('protolua.imp.ImpEnum'), { IMP_ZERO = 0, IMP_ONE = 1, IMP_TWO = 2 }, 'ImpEnum')
    T.raises('unknown enum type', function() return all3:enum('protolua.test.Nope') end)
    T.raises('unknown enum type', function() return all3:enum('protolua.test.AllTypes') end)
    T.raises('expected an enum name', function() return all3:enum(1) end)
end)

T.test('api Msg:fields()', function()
    local pf = Person:fields()
    T.eq(#pf, 5, 'Person has 5 fields')
    local numbers = {}
    for i, f in ipairs(pf) do numbers[i] = f.number end
    T.eq(numbers, { 1, 2, 3, 4, 5 }, 'fields in number order')
    local p = fields_by_name(Person)
    T.eq(p.name, { name = 'name', number = 1, type = 'string', label = 'optional', json_name = 'name', default = '', options = {} }, 'name')
    T.eq(p.age, { name = 'age', number = 2, type = 'int32', label = 'optional', json_name = 'age', default = 0, options = {} }, 'age')
    T.eq(p.emails, { name = 'emails', number = 3, type = 'string', label = 'repeated', json_name = 'emails', options = {} }, 'emails')
    T.eq(p.address, { name = 'address', number = 4, type = 'message', label = 'optional', type_name = 'hello.Address', json_name = 'address', options = {} },
        'address')
    T.eq(p.lucky_numbers, { name = 'lucky_numbers', number = 5, type = 'int32', label = 'repeated', packed = true, json_name = 'luckyNumbers', options = {} },
        'lucky_numbers')

    local a = fields_by_name(AllTypes)
    T.eq(a.f_color.type, 'enum', 'enum type')
    T.eq(a.f_color.type_name, 'protolua.test.Color', 'enum type_name')
    T.eq(a.f_mood.type_name, 'protolua.test.AllTypes.Mood', 'nested enum type_name')
    T.eq(a.f_imported.type_name, 'protolua.imp.ImpMsg', 'imported type_name')
    T.eq(a.f_imp_enum.type_name, 'protolua.imp.ImpEnum', 'imported enum type_name')
    T.eq(a.f_sfixed64.type, 'sfixed64', 'sfixed64')
    T.eq(a.f_int32.type_name, nil, 'scalars have no type_name')
    T.eq(a.r_int32.packed, true, 'proto3 repeated packed')
    T.eq(a.u_int32.packed, nil, 'packed=false not packed')
    T.eq(a.r_string.packed, nil, 'strings never packed')
    T.eq(a.r_nested.label, 'repeated', 'repeated message label')
    T.eq(a.r_nested.type_name, 'protolua.test.AllTypes.Nested', 'repeated message type_name')
    T.eq(a.m_int32.type, 'map', 'map type')
    T.eq(a.m_int32.label, 'repeated', 'map label')
    T.eq(a.m_int32.key_type, 'int32', 'map key_type')
    T.eq(a.m_int32.value_type, 'int32', 'map value_type')
    T.eq(a.m_string_nested.key_type, 'string', 'map string key')
    T.eq(a.m_string_nested.value_type, 'message', 'map message value')
    T.eq(a.m_string_nested.value_type_name, 'protolua.test.AllTypes.Nested', 'map value_type_name')
    T.eq(a.m_int32_color.value_type, 'enum', 'map enum value')
    T.eq(a.m_int32_color.value_type_name, 'protolua.test.Color', 'map enum value_type_name')
    T.eq(a.m_bool.key_type, 'bool', 'bool key')
    T.eq(a.o_int32.oneof, 'choice', 'oneof member')
    T.eq(a.o_string.oneof, 'choice', 'oneof member 2')
    T.eq(a.o_nested.oneof, 'choice', 'oneof member 3')
    T.eq(a.f_int32.oneof, nil, 'not in a oneof')
    T.eq(a.n_max.number, 536870911, 'largest field number')
    T.eq(#AllTypes:fields(), 70, 'AllTypes field count')
end)

T.test('api two schemas side by side', function()
    local h2 = protolua.load(hello_bytes)
    local P2 = h2:message('hello.Person')
    T.eq(rawequal(P2, Person), false, 'handles of different schemas differ')
    for i = 1, 50 do
        local t = { name = 'n' .. i, age = i }
        local a = Person:encode(t)
        local b = AllTypes:encode({ f_int32 = i, f_string = 's' .. i })
        local c = P2:encode(t)
        T.eq(a, c, 'same bytes from both hello schemas')
        T.eq(P2:decode(a), t, 'cross decode')
        T.eq(AllTypes:decode(b), { f_int32 = i, f_string = 's' .. i }, 'alltypes decode')
    end
    -- a combined set with every file works too
    local all = protolua.load_file(DESC .. 'all.fds')
    T.eq(all:message('hello.Person'):decode(Person:encode({ name = 'z' })), { name = 'z' }, 'all.fds hello')
    T.eq(all:message('protolua.test.Node'):decode(all3:encode('protolua.test.Node', { value = 1, child = { value = 2 } })),
        { value = 1, child = { value = 2 } }, 'all.fds node')
end)

T.test('api a handle keeps its schema alive', function()
    local M = protolua.load(hello_bytes):message('hello.Address')
    collectgarbage('collect')
    collectgarbage('collect')
    T.eq(M:decode(M:encode({ city = 'Rome' })), { city = 'Rome' }, 'handle usable after the schema object is gone')
end)

T.test('api a method taken from its handle keeps the handle alive', function()
    local s = protolua.load(hello_bytes)
    local M = s:message('hello.Address')
    local enc, dec, name = M.encode, M.decode, M.name
    local weak = setmetatable({ M }, { __mode = 'v' })
    s, M = nil, nil
    collectgarbage('collect')
    collectgarbage('collect')
    -- the handle is reachable only through the methods now
    local self = weak[1]
    T.eq(type(self), 'userdata', 'the methods keep their handle')
    T.eq(dec(self, enc(self, { zip = '1' })), { zip = '1' }, 'bound methods still work')
    T.eq(name(self), 'hello.Address', 'name')
    T.raises('encode: expected a message handle', function() return enc(nil, {}) end)
end)

T.test('api each handle has its methods, one handle per name', function()
    local A, A2, P = hello:message('hello.Address'), hello:message('hello.Address'), hello:message('hello.Person')
    T.eq(rawequal(A, A2), true, 'handles are cached by name')
    T.eq(rawequal(A, hello:message('.hello.Address')), true, "'.pkg.Msg' gives the same handle")
    local fresh = protolua.load(hello_bytes)
    local dotted = fresh:message('.hello.Person')
    T.eq(rawequal(dotted, fresh:message('hello.Person')), true, 'either spelling first')
    T.eq(fresh:message('hello.Person').encode(dotted, { name = 'x' }), P:encode({ name = 'x' }), 'methods accept it')
    T.eq(rawequal(A.encode, A2.encode), true, 'same handle, same methods')
    T.eq(rawequal(A.encode, P.encode), false, 'methods are bound per handle')
    T.eq(getmetatable(A), 'protolua.Message', 'metatable hidden')
    T.eq(tostring(P), 'protolua.Message<hello.Person>', 'tostring')
end)

T.test('api schemas are collected by the GC', function()
    collectgarbage('collect')
    collectgarbage('collect')
    local base = collectgarbage('count')
    for i = 1, 1000 do
        local s = protolua.load(all3_bytes)
        local M = s:message('protolua.test.AllTypes')
        M:decode(M:encode({ f_int32 = i, m_string = { a = 'b' } }))
        if i % 100 == 0 then collectgarbage('step') end
    end
    collectgarbage('collect')
    collectgarbage('collect')
    local after = collectgarbage('count')
    if not (after < base * 2 + 256) then
        error(string.format('Lua memory %.0f KB -> %.0f KB after 1000 schemas', base, after))
    end
end)

---------------------------------------------------------------------------
-- load errors

T.test('api load of garbage bytes is refused', function()
    T.raises('protolua: load', function() return protolua.load('\255\255\255\255\255') end)
    T.raises('protolua: load', function() return protolua.load(hello_bytes:sub(1, #hello_bytes - 7)) end)
    T.raises('protolua: load', function() return protolua.load('\10\200\1abc') end)
    T.raises('load: expected the bytes of a FileDescriptorSet, got number', function() return protolua.load(5) end)
    T.raises('load: expected the bytes of a FileDescriptorSet, got nil', function() return protolua.load(nil) end)
end)

T.test('api load of a set with an unresolved type is refused', function()
    local files = split_fds(all3_bytes)
    T.eq(#files, 2, 'alltypes3.fds holds two files')
    T.eq(join_fds(files), all3_bytes, 'split/join is lossless')
    local kept = {}
    for _, f in ipairs(files) do
        if not f:find('protolua.imp', 1, true) or f:find('protolua.test', 1, true) then kept[#kept + 1] = f end
    end
    T.eq(#kept, 1, 'dropped imported.proto')
    local err = T.raises('protolua: load', function() return protolua.load(join_fds(kept)) end)
    T.eq((err:find('protolua.imp', 1, true) or err:find('imported.proto', 1, true)) ~= nil, true,
        'error names what is missing: ' .. err)
end)

T.test('api load of a set with duplicate names is refused', function()
    T.raises('protolua: load', function() return protolua.load(hello_bytes .. hello_bytes) end)
end)

T.test('api load_file of a missing path is refused', function()
    T.raises('protolua: load_file: cannot read', function()
        return protolua.load_file(DESC .. 'does_not_exist.fds')
    end)
    T.raises('load_file: expected a path, got nil', function() return protolua.load_file(nil) end)
end)

T.test('api load options are checked', function()
    T.raises('max_depth must be an integer', function() return protolua.load(hello_bytes, { max_depth = 0 }) end)
    T.raises('strict_keys must be a boolean', function() return protolua.load(hello_bytes, { strict_keys = 1 }) end)
    T.raises('options must be a table', function() return protolua.load(hello_bytes, 5) end)
    local lax = protolua.load(hello_bytes, { strict_keys = false })
    T.eq(lax:encode('hello.Person', { name = 'a', junk = 1 }), Person:encode({ name = 'a' }), 'strict_keys=false')
end)

---------------------------------------------------------------------------
-- decode/encode semantics

T.test('api oneof: the last member on the wire wins', function()
    local a = AllTypes:encode({ o_int32 = 5 })
    local b = AllTypes:encode({ o_string = 'x' })
    local c = AllTypes:encode({ o_nested = { a = 1 } })
    T.eq(AllTypes:decode(a .. b), { o_string = 'x' }, 'int32 then string')
    T.eq(AllTypes:decode(b .. a), { o_int32 = 5 }, 'string then int32')
    T.eq(AllTypes:decode(a .. c), { o_nested = { a = 1 } }, 'int32 then nested')
    T.eq(AllTypes:decode(c .. b .. a), { o_int32 = 5 }, 'three members')
    T.eq(AllTypes:decode(b .. c .. AllTypes:encode({ o_nested = { b = 'y' } })), { o_nested = { a = 1, b = 'y' } },
        'repeated nested member merges')
    T.eq(AllTypes:decode(a .. AllTypes:encode({ f_int32 = 3 }) .. b), { o_string = 'x', f_int32 = 3 },
        'other fields untouched')
end)

T.test('api: a singular message field seen again merges, wherever it recurs', function()
    -- The first occurrence in a new table skips the lookup for a table to
    -- merge into (src/binary/decode/walk.rs `first_sub`); later ones must still find it.
    local a1 = Person:encode({ address = { street = 's' } })
    local a2 = Person:encode({ address = { city = 'c' } })
    local a3 = Person:encode({ address = { zip = 'z', street = 't' } })
    local n = Person:encode({ name = 'n', lucky_numbers = { 1 }, emails = { 'e' } })
    T.eq(Person:decode(a1 .. a2), { address = { street = 's', city = 'c' } }, 'adjacent')
    T.eq(Person:decode(a1 .. n .. a2 .. n .. a3), {
        address = { street = 't', city = 'c', zip = 'z' }, name = 'n', lucky_numbers = { 1, 1 }, emails = { 'e', 'e' },
    }, 'interleaved')
    local c1 = AllTypes:encode({ o_nested = { a = 1 } })
    local c2 = AllTypes:encode({ o_nested = { b = 'y' } })
    local b = AllTypes:encode({ o_string = 'x' })
    T.eq(AllTypes:decode(c1 .. b .. c2), { o_nested = { b = 'y' } }, 'oneof member cleared, then set anew')
    T.eq(AllTypes:decode(c1 .. c2 .. b .. c1 .. c2), { o_nested = { a = 1, b = 'y' } }, 'oneof member set again')
end)

T.test('api oneof: encode refuses two members', function()
    T.raises('oneof choice has both', function() return AllTypes:encode({ o_int32 = 1, o_string = 'a' }) end)
    T.raises('oneof', function() return AllTypes:encode({ o_string = 'a', o_nested = {} }) end)
    T.raises('encode protolua.test.AllTypes', function() return AllTypes:encode({ o_int32 = 0, o_nested = {} }) end)
    -- one member set is fine, even with its zero value
    T.eq(AllTypes:decode(AllTypes:encode({ o_int32 = 0 })), { o_int32 = 0 }, 'zero member kept')
end)

T.test('api packed and unpacked both decode', function()
    local packed = Person:encode({ lucky_numbers = { 1, 2, 300 } })
    T.eq(packed, tag(5, 2) .. '\4\1\2\172\2', 'encode packs proto3 repeated')
    local unpacked = tag(5, 0) .. '\1' .. tag(5, 0) .. '\2' .. tag(5, 0) .. '\172\2'
    T.eq(Person:decode(unpacked), Person:decode(packed), 'same result')
    T.eq(Person:decode(unpacked), { lucky_numbers = { 1, 2, 300 } }, 'unpacked value')
    T.eq(Person:decode(packed .. unpacked), { lucky_numbers = { 1, 2, 300, 1, 2, 300 } }, 'mixed runs append')
    -- a [packed=false] field accepts a packed run
    local u = AllTypes:encode({ u_int32 = { 7, 8 } })
    T.eq(u, tag(51, 0) .. '\7' .. tag(51, 0) .. '\8', 'packed=false encodes unpacked')
    T.eq(AllTypes:decode(tag(51, 2) .. '\2\7\8'), { u_int32 = { 7, 8 } }, 'packed run into unpacked field')
    -- fixed-width packed vs unpacked
    local pf = AllTypes:encode({ r_fixed32 = { 1, 2 } })
    T.eq(pf, tag(37, 2) .. '\8\1\0\0\0\2\0\0\0', 'packed fixed32')
    T.eq(AllTypes:decode(tag(37, 5) .. '\1\0\0\0' .. tag(37, 5) .. '\2\0\0\0'), { r_fixed32 = { 1, 2 } }, 'unpacked fixed32')
    -- an empty packed run gives an empty array (or nothing), never an error
    local e = AllTypes:decode(tag(31, 2) .. '\0')
    T.eq(e.r_int32 == nil or #e.r_int32 == 0, true, 'empty packed run')
end)

T.test('api a known field with the wrong wire type is skipped', function()
    -- age (int32, varint) sent as fixed32; name (LEN) sent as varint
    local bytes = tag(2, 5) .. '\1\2\3\4' .. tag(1, 0) .. '\5' .. tag(1, 2) .. '\1x'
    T.eq(Person:decode(bytes), { name = 'x' }, 'mistyped fields skipped')
    -- address (message) sent as fixed64
    T.eq(Person:decode(tag(4, 1) .. '12345678' .. tag(2, 0) .. '\9'), { age = 9 }, 'message as I64 skipped')
    -- repeated string as varint, map as varint
    T.eq(Person:decode(tag(3, 0) .. '\1'), {}, 'repeated string as varint skipped')
    T.eq(AllTypes:decode(tag(61, 0) .. '\1' .. tag(1, 0) .. '\2'), { f_int32 = 2 }, 'map as varint skipped')
    -- unknown field numbers are skipped too
    T.eq(Person:decode(tag(99, 2) .. '\3abc' .. tag(98, 0) .. '\1' .. tag(1, 2) .. '\1y'), { name = 'y' },
        'unknown fields skipped')
end)

T.test('api map: later duplicate key wins', function()
    local a = AllTypes:encode({ m_int32 = { [1] = 10, [2] = 5 } })
    local b = AllTypes:encode({ m_int32 = { [1] = 20 } })
    T.eq(AllTypes:decode(a .. b), { m_int32 = { [1] = 20, [2] = 5 } }, 'int32 keys')
    local c = AllTypes:encode({ m_string = { k = 'first' } })
    local d = AllTypes:encode({ m_string = { k = 'second' } })
    T.eq(AllTypes:decode(c .. d), { m_string = { k = 'second' } }, 'string keys')
    T.eq(AllTypes:decode(d .. c), { m_string = { k = 'first' } }, 'string keys reversed')
    local e = AllTypes:encode({ m_string_nested = { k = { a = 1 } } })
    local f = AllTypes:encode({ m_string_nested = { k = { b = 'z' } } })
    T.eq(AllTypes:decode(e .. f), { m_string_nested = { k = { b = 'z' } } }, 'message values replaced')
end)

T.test('api map: deterministic order', function()
    local t = { m_int32 = {}, m_string = {} }
    for i = 1, 50 do
        t.m_int32[(i * 37) % 101 - 50] = i
        t.m_string['k' .. ((i * 13) % 50)] = 'v'
    end
    local first = AllTypes:encode(t)
    for _ = 1, 5 do
        local copy = { m_int32 = {}, m_string = {} }
        for k, v in pairs(t.m_int32) do copy.m_int32[k] = v end
        for k, v in pairs(t.m_string) do copy.m_string[k] = v end
        T.eq(AllTypes:encode(copy), first, 'same bytes')
    end
    T.eq(AllTypes:decode(first), t, 'round trip')
end)

T.test('api enum encode accepts name or number', function()
    local by_name = AllTypes:encode({ f_color = 'COLOR_BLUE' })
    T.eq(AllTypes:encode({ f_color = 3 }), by_name, 'number == name')
    T.eq(by_name, tag(16, 0) .. '\3', 'bytes')
    T.eq(AllTypes:decode(by_name), { f_color = 'COLOR_BLUE' }, 'decodes to the name')
    T.eq(AllTypes:decode(AllTypes:encode({ f_color = 42 })), { f_color = 42 }, 'unknown number kept as number')
    T.eq(AllTypes:decode(AllTypes:encode({ f_color = 'COLOR_NEG' })), { f_color = 'COLOR_NEG' }, 'negative enum')
    T.eq(#AllTypes:encode({ f_color = -1 }), 2 + 10, 'negative enum is a 10-byte varint')
    T.eq(AllTypes:decode(AllTypes:encode({ r_color = { 'COLOR_RED', 2, 99 } })), { r_color = { 'COLOR_RED', 'COLOR_GREEN', 99 } },
        'repeated enum mix')
    T.eq(AllTypes:decode(AllTypes:encode({ m_int32_color = { [1] = 'COLOR_RED', [2] = 3 } })),
        { m_int32_color = { [1] = 'COLOR_RED', [2] = 'COLOR_BLUE' } }, 'map enum values')
    T.eq(AllTypes:decode(AllTypes:encode({ f_mood = 'MOOD_SAD', f_imp_enum = 'IMP_TWO' })),
        { f_mood = 'MOOD_SAD', f_imp_enum = 'IMP_TWO' }, 'nested and imported enums')
    T.raises('"COLOR_NOPE" is not a value of enum protolua.test.Color',
        function() return AllTypes:encode({ f_color = 'COLOR_NOPE' }) end)
    T.raises('field f_mood: "COLOR_RED" is not a value of enum protolua.test.AllTypes.Mood',
        function() return AllTypes:encode({ f_mood = 'COLOR_RED' }) end)
    T.raises('field r_color[2]', function() return AllTypes:encode({ r_color = { 1, 'X' } }) end)
    T.raises('field f_color', function() return AllTypes:encode({ f_color = 1.5 }) end)
    T.raises('field f_color', function() return AllTypes:encode({ f_color = true }) end)
end)

local BIG = '9007199254740993' -- 2^53 + 1: not representable as a double

T.test('api 64-bit fields accept decimal strings', function()
    local bytes = AllTypes:encode({ f_int64 = BIG })
    T.eq(bytes, tag(2, 0) .. '\129\128\128\128\128\128\128\16', 'int64 varint of 2^53+1')
    local v = AllTypes:decode(bytes).f_int64
    T.eq(v, T.i64(BIG), 'decoded value')
    if jit then
        T.eq(type(v), 'cdata', 'big int64 decodes to cdata on LuaJIT')
        T.eq(tostring(v), BIG .. 'LL', 'cdata value')
    elseif math.type then
        T.eq(math.type(v), 'integer', 'big int64 decodes to an integer')
        T.eq(tostring(v), BIG, 'integer value')
    else
        T.eq(v, BIG, 'big int64 decodes to its decimal string on PUC Lua 5.1')
    end
    local cases = {
        { 'f_int64', '-9223372036854775808' }, { 'f_int64', '9223372036854775807' },
        { 'f_sint64', '-' .. BIG }, { 'f_sfixed64', '-' .. BIG }, { 'n_max', BIG },
    }
    for _, c in ipairs(cases) do
        local got = AllTypes:decode(AllTypes:encode({ [c[1]] = c[2] }))[c[1]]
        T.eq(got, T.i64(c[2]), c[1] .. ' = ' .. c[2])
    end
    for _, c in ipairs({ { 'f_uint64', '18446744073709551615' }, { 'f_fixed64', BIG }, { 'f_uint64', '9223372036854775808' } }) do
        local got = AllTypes:decode(AllTypes:encode({ [c[1]] = c[2] }))[c[1]]
        T.eq(got, T.u64(c[2]), c[1] .. ' = ' .. c[2])
    end
    -- small values come back as plain numbers
    local small = AllTypes:decode(AllTypes:encode({ f_int64 = '12345', f_uint64 = '7' }))
    T.eq(type(small.f_int64), 'number', 'small int64 is a number')
    T.eq(small, { f_int64 = 12345, f_uint64 = 7 }, 'small values')
    -- strings in repeated and map 64-bit fields
    T.eq(AllTypes:decode(AllTypes:encode({ m_int64 = { ['5'] = BIG, ['-3'] = '4' } })).m_int64,
        { [5] = T.i64(BIG), [-3] = 4 }, 'map int64 strings')
    local d = AllTypes:decode(AllTypes:encode({ r_int64 = { BIG, '-1' } }))
    T.eq(d.r_int64, { T.i64(BIG), -1 }, 'repeated int64 strings')
    T.raises('field f_int64: string "12x" is not a decimal integer', function() return AllTypes:encode({ f_int64 = '12x' }) end)
    T.raises('field f_int32: expected integer, got string', function() return AllTypes:encode({ f_int32 = '5' }) end)
    T.raises('out of range for uint64', function() return AllTypes:encode({ f_uint64 = '-1' }) end)
    T.raises('out of range for int64', function() return AllTypes:encode({ f_int64 = '9223372036854775808' }) end)
end)

T.test('api 64-bit fields accept integer cdata on LuaJIT', function()
    if not jit then
        -- Lua 5.3+: native integers are exact.
        local big = T.i64(BIG)
        T.eq(AllTypes:encode({ f_int64 = big }), AllTypes:encode({ f_int64 = BIG }), 'native integer == string')
        return
    end
    local ffi = require('ffi')
    local i = ffi.new('int64_t', 2 ^ 53) + 1
    T.eq(AllTypes:encode({ f_int64 = i }), AllTypes:encode({ f_int64 = BIG }), 'int64_t cdata == string')
    local u = ffi.new('uint64_t', 0) - 1
    T.eq(AllTypes:encode({ f_uint64 = u }), AllTypes:encode({ f_uint64 = '18446744073709551615' }), 'uint64_t cdata')
    local back = AllTypes:decode(AllTypes:encode({ f_uint64 = u, f_sint64 = -i, r_int64 = { i, 3 } }))
    T.eq(type(back.f_uint64), 'cdata', 'uint64 cdata back')
    T.eq(back.f_uint64 == u, true, 'uint64 value')
    T.eq(back.f_sint64 == -i, true, 'sint64 value')
    T.eq(back.r_int64[1] == i, true, 'repeated int64 value')
    T.eq(back.r_int64[2], 3, 'small element is a number')
    -- small cdata for a 32-bit field
    T.eq(AllTypes:encode({ f_int32 = ffi.new('int64_t', 7) }), AllTypes:encode({ f_int32 = 7 }), 'cdata for int32')
    T.raises('out of range for int32', function() return AllTypes:encode({ f_int32 = i }) end)
    T.raises('field f_int64', function() return AllTypes:encode({ f_int64 = ffi.new('double', 1) }) end)
end)

T.test('api input tables are read raw: __index, __len, __pairs are not consulted', function()
    local P = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
    local proxy = setmetatable({}, { __index = { name = 'hidden', age = 5 } })
    T.eq(P:encode(proxy), '', 'fields behind __index are not seen')
    local trap = setmetatable({ name = 'x' }, { __index = function() error('__index called') end,
        __pairs = function() error('__pairs called') end, __newindex = function() error('__newindex called') end })
    T.eq(P:encode(trap), P:encode({ name = 'x' }), 'no metamethod runs, strict keys included')
    local arr = setmetatable({ 'a' }, { __len = function() return 5 end, __index = function() return 'z' end })
    T.eq(P:decode(P:encode({ emails = arr })).emails, { 'a' }, '__len and __index of an array are ignored')
    local d = P:decode(P:encode({ name = 'n' }), { defaults = 'metatable' })
    T.eq(P:encode(d), P:encode({ name = 'n' }), 'a defaults metatable adds nothing to encode')
end)

T.test('api an empty packed run leaves the repeated field absent (found by fuzzing)', function()
    local d = AllTypes:decode('\250\1\0') -- r_int32 (31), LEN 0
    T.eq(d.r_int32, nil, 'absent, so decode -> encode -> decode is stable')
    T.eq(AllTypes:encode(d), '')
    T.eq(AllTypes:decode('\250\1\0', { empty = true }).r_int32, {}, 'empty = true still gives {}')
    T.eq(AllTypes:decode('\250\1\0\250\1\1\7').r_int32, { 7 }, 'a later run still appends')
end)

T.test('encode: any two fields of a table come out in number order, whatever order pairs() gives', function()
    -- Two-field tables are walked (lua_next order) and put in number order
    -- by one rotation of their bytes; each field's own encoding, joined in
    -- number order, is the answer. Values of several sizes on both sides.
    local values = {
        -- name of 12/13 bytes + age 1: 16 and 17 bytes in all, the edge of
        -- the in-register swap; age 0 writes nothing.
        { 'name', { 'A', string.rep('n', 200), string.rep('n', 12), string.rep('n', 13) } },
        { 'age', { 1, 300, -1, 0 } },
        { 'emails', { { 'x@y' }, { 'a', string.rep('b', 130), 'c' } } },
        { 'address', { { city = 'M' }, { street = string.rep('s', 150), zip = '1' } } },
        { 'lucky_numbers', { { 7 }, { 1, 2, 3000, -4 } } },
    }
    local n = 0
    for i = 1, #values do
        for j = i + 1, #values do
            local ki, kj = values[i][1], values[j][1]
            for _, vi in ipairs(values[i][2]) do
                for _, vj in ipairs(values[j][2]) do
                    local want = Person:encode({ [ki] = vi }) .. Person:encode({ [kj] = vj })
                    -- Both insertion orders, so that pairs() order varies too.
                    local a, b = {}, {}
                    a[ki] = vi; a[kj] = vj
                    b[kj] = vj; b[ki] = vi
                    T.eq(Person:encode(a), want, ki .. ' + ' .. kj)
                    T.eq(Person:encode(b), want, kj .. ' + ' .. ki)
                    n = n + 1
                end
            end
        end
    end
    T.eq(n, 76, 'pairs tried')
end)
