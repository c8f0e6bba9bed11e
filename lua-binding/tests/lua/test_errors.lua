-- Every encode/decode error of issue 3, with its message asserted
-- ("protolua: <op> <Type>: field <path>: <what>[ at byte N]"), the schema
-- still usable afterwards, and no Lua memory growth over many failures.
-- Lua 5.1 compatible. Needs the globals set by harness.lua.

local DESC = FIXTURES .. '/descriptors/'
local hello = protolua.load_file(DESC .. 'hello.fds')
local all3 = protolua.load_file(DESC .. 'alltypes3.fds')
local Person = hello:message('hello.Person')
local AllTypes = all3:message('protolua.test.AllTypes')
local Node = all3:message('protolua.test.Node')
-- A schema with a low nesting limit, to test the limit option itself.
local ShallowNode = protolua.load_file(DESC .. 'alltypes3.fds', { max_depth = 10 }):message('protolua.test.Node')

local varint, tag = T.varint, T.tag

-- A Node nested `levels` deep through field 2 (child).
local function deep_node(levels)
    local s = ''
    for _ = 1, levels do s = tag(2, 2) .. varint(#s) .. s end
    return s
end

-- Assert the error contains `needle` and names byte `offset`.
local function raises_at(needle, offset, fn, ...)
    local err = T.raises(needle, fn, ...)
    local want = ' at byte ' .. tostring(offset)
    if offset and not err:find(want, 1, true) then
        error('error ' .. string.format('%q', err) .. ' does not contain ' .. string.format('%q', want), 2)
    end
    return err
end

local function still_works()
    local t = { name = 'ok', age = 1, emails = { 'a' }, address = { city = 'c' }, lucky_numbers = { 1, 2 } }
    T.eq(Person:decode(Person:encode(t)), t, 'Person still works')
    T.eq(AllTypes:decode(AllTypes:encode({ f_int32 = 1, m_string = { a = 'b' } })), { f_int32 = 1, m_string = { a = 'b' } },
        'AllTypes still works')
end

---------------------------------------------------------------------------
-- encode

T.test('errors encode wrong Lua type', function()
    T.raises('protolua: encode hello.Person: field name: expected string, got number',
        function() return Person:encode({ name = 5 }) end)
    T.raises('field age: expected integer, got string', function() return Person:encode({ age = 'x' }) end)
    T.raises('field age: expected integer, got boolean', function() return Person:encode({ age = true }) end)
    T.raises('field address: expected table, got string', function() return Person:encode({ address = 'x' }) end)
    T.raises('field emails: expected array (table), got string', function() return Person:encode({ emails = 'x' }) end)
    T.raises('field f_bool: expected boolean, got number', function() return AllTypes:encode({ f_bool = 1 }) end)
    T.raises('field f_double: expected number, got string', function() return AllTypes:encode({ f_double = '1' }) end)
    T.raises('field f_float: expected number, got table', function() return AllTypes:encode({ f_float = {} }) end)
    T.raises('field f_bytes: expected string, got number', function() return AllTypes:encode({ f_bytes = 1 }) end)
    T.raises('field m_int32', function() return AllTypes:encode({ m_int32 = 5 }) end)
    T.raises('protolua: encode hello.Person: expected table, got number', function() return Person:encode(5) end)
    T.raises('protolua: encode hello.Person: expected table, got nil', function() return Person:encode(nil) end)
    T.raises('protolua: encode hello.Person: expected table, got no value', function() return Person:encode() end)
    T.raises('message table has a key of type number', function() return Person:encode({ [1] = 'x' }) end)
end)

T.test('errors encode non-integral number', function()
    T.raises('encode hello.Person: field age: number 1.5 has no integer representation',
        function() return Person:encode({ age = 1.5 }) end)
    T.raises('no integer representation', function() return AllTypes:encode({ f_int64 = 0.25 }) end)
    T.raises('no integer representation', function() return AllTypes:encode({ f_uint32 = 0 / 0 }) end)
    T.raises('field f_fixed32', function() return AllTypes:encode({ f_fixed32 = 1 / 0 }) end)
end)

T.test('errors encode integer out of range', function()
    T.raises('field age: value 1099511627776 is out of range for int32',
        function() return Person:encode({ age = 2 ^ 40 }) end)
    T.raises('out of range for int32', function() return Person:encode({ age = 2 ^ 31 }) end)
    T.raises('out of range for int32', function() return Person:encode({ age = -2 ^ 31 - 1 }) end)
    T.raises('field f_uint32: value -1 is out of range for uint32', function() return AllTypes:encode({ f_uint32 = -1 }) end)
    T.raises('out of range for uint32', function() return AllTypes:encode({ f_uint32 = 2 ^ 32 }) end)
    T.raises('out of range for sint32', function() return AllTypes:encode({ f_sint32 = 2 ^ 31 }) end)
    T.raises('out of range for fixed32', function() return AllTypes:encode({ f_fixed32 = -1 }) end)
    T.raises('out of range for sfixed32', function() return AllTypes:encode({ f_sfixed32 = 2 ^ 31 }) end)
    if math.type then
        -- Lua 5.3+: a negative integer is the wrapped uint64 (the Lua convention).
        T.eq(AllTypes:decode(AllTypes:encode({ f_uint64 = -1 })), { f_uint64 = -1 }, 'uint64 wrapped')
        T.raises('out of range for uint64', function() return AllTypes:encode({ f_uint64 = -1.0 }) end)
    else
        T.raises('out of range for uint64', function() return AllTypes:encode({ f_uint64 = -1 }) end)
    end
    T.raises('out of range for int64', function() return AllTypes:encode({ f_int64 = 2 ^ 63 }) end)
    T.raises('field r_int32[3]: value', function() return AllTypes:encode({ r_int32 = { 1, 2, 2 ^ 40 } }) end)
    -- the bounds themselves are fine
    T.eq(Person:decode(Person:encode({ age = 2 ^ 31 - 1 })), { age = 2 ^ 31 - 1 }, 'int32 max')
    T.eq(Person:decode(Person:encode({ age = -2 ^ 31 })), { age = -2 ^ 31 }, 'int32 min')
    T.eq(AllTypes:decode(AllTypes:encode({ f_uint32 = 2 ^ 32 - 1 })), { f_uint32 = 2 ^ 32 - 1 }, 'uint32 max')
end)

T.test('errors encode invalid UTF-8 in a proto3 string', function()
    T.raises('encode hello.Person: field name: string is not valid UTF-8',
        function() return Person:encode({ name = 'a\255b' }) end)
    T.raises('field emails[2]: string is not valid UTF-8', function() return Person:encode({ emails = { 'ok', '\192\128' } }) end)
    T.raises('not valid UTF-8', function() return AllTypes:encode({ m_string = { k = '\237\160\128' } }) end)
    T.raises('not valid UTF-8', function() return AllTypes:encode({ m_string = { ['\255'] = 'v' } }) end)
    -- every length tier of the short ASCII check (1-64 bytes), the bad
    -- byte first, in the middle and last, singular and repeated; valid
    -- multibyte text encodes (the decode side is in the decode test below)
    for _, len in ipairs({ 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 47, 48, 49, 63, 64, 65 }) do
        for _, at in ipairs({ 1, math.floor((len + 1) / 2), len }) do
            local str = string.rep('a', at - 1) .. '\255' .. string.rep('b', len - at)
            T.raises('field name: string is not valid UTF-8', function() return Person:encode({ name = str }) end)
            T.raises('field emails[2]: string is not valid UTF-8',
                function() return Person:encode({ emails = { 'ok', str } }) end)
        end
        local ok = string.rep('a', len - 2) .. '\195\169' -- ends in U+00E9
        if len >= 2 then T.eq(Person:decode(Person:encode({ name = ok, emails = { ok } })), { name = ok, emails = { ok } }) end
    end
    -- bytes fields take anything
    T.eq(AllTypes:decode(AllTypes:encode({ f_bytes = '\255\0\254' })), { f_bytes = '\255\0\254' }, 'bytes')
end)

T.test('encode: repeated strings (one tag+length word per element) at the length edges and errors inside a run', function()
    -- emails is field 3: tag byte 0x1a; the length is a 1-, 2- or 3-byte varint
    local lens = { 0, 1, 127, 128, 16383, 16384, 20000 }
    local arr, want = {}, {}
    for i, len in ipairs(lens) do
        arr[i] = string.rep(string.char(97 + i), len)
        want[i] = '\26' .. varint(len) .. arr[i]
    end
    T.eq(Person:encode({ emails = arr }), table.concat(want), 'bytes of a run of every length class')
    T.eq(Person:decode(Person:encode({ emails = arr })), { emails = arr }, 'round trip')
    for _, len in ipairs(lens) do
        local v = string.rep('z', len)
        T.eq(Person:encode({ name = v }), len == 0 and '' or '\10' .. varint(len) .. v, 'singular, ' .. len .. ' bytes')
    end
    -- a wrong type or invalid UTF-8 at positions of a 70-element run
    -- (batches of 32: first, inside, last and first of the next batch,
    -- and the last element of a short last batch)
    for _, at in ipairs({ 1, 2, 8, 9, 31, 32, 33, 64, 65, 70 }) do
        for _, bad in ipairs({ { 5, 'expected string, got number' }, { true, 'expected string, got boolean' },
            { 'ok\255', 'string is not valid UTF-8' }, { string.rep('a', 200) .. '\192', 'string is not valid UTF-8' } }) do
            local a = {}
            for i = 1, 70 do a[i] = string.rep('x', i * 3) end
            a[at] = bad[1]
            T.raises('field emails[' .. at .. ']: ' .. bad[2], function() return Person:encode({ emails = a }) end)
        end
    end
    -- the schema still encodes after those errors
    T.eq(Person:decode(Person:encode({ emails = { 'a', '' } })), { emails = { 'a', '' } })
    -- the same for repeated integers and sub-messages, across batch ends
    for _, at in ipairs({ 1, 32, 33, 64, 65, 70 }) do
        local nums, msgs = {}, {}
        for i = 1, 70 do nums[i], msgs[i] = i * 1000, { a = i } end
        T.eq(Person:decode(Person:encode({ lucky_numbers = nums })).lucky_numbers, nums)
        T.eq(AllTypes:decode(AllTypes:encode({ r_nested = msgs })).r_nested, msgs)
        nums[at], msgs[at] = 0.5, 'x'
        T.raises('field lucky_numbers[' .. at .. ']: number 0.5', function() return Person:encode({ lucky_numbers = nums }) end)
        T.raises('field r_nested[' .. at .. ']: expected table, got string', function() return AllTypes:encode({ r_nested = msgs }) end)
    end
    -- an unpacked repeated integer (u_int32, field 51: tag byte pair 152 3): a tag per element
    local u = {}
    for i = 1, 40 do u[i] = (i - 20) * 300 end
    T.eq(AllTypes:decode(AllTypes:encode({ u_int32 = u })).u_int32, u, 'unpacked round trip')
    local enc = AllTypes:encode({ u_int32 = { 1, 300 } })
    T.eq(enc, '\152\3\1\152\3\172\2', 'unpacked bytes')
    u[33] = 'x'
    T.raises('field u_int32[33]: expected integer, got string', function() return AllTypes:encode({ u_int32 = u }) end)
end)

T.test('encode: 32-bit integer kinds at their bounds, singular and repeated (the one-cast range check)', function()
    local kinds = {
        { 'int32', -2 ^ 31, 2 ^ 31 - 1 }, { 'sint32', -2 ^ 31, 2 ^ 31 - 1 }, { 'sfixed32', -2 ^ 31, 2 ^ 31 - 1 },
        { 'uint32', 0, 2 ^ 32 - 1 }, { 'fixed32', 0, 2 ^ 32 - 1 },
    }
    for _, k in ipairs(kinds) do
        local name, lo, hi = k[1], k[2], k[3]
        local f, r = 'f_' .. name, 'r_' .. name
        for _, v in ipairs({ lo, hi, 0, -0.0, 1 }) do
            T.eq(AllTypes:decode(AllTypes:encode({ [r] = { v, v } }))[r], { v, v }, r .. ' ' .. v)
            if v ~= 0 then T.eq(AllTypes:decode(AllTypes:encode({ [f] = v }))[f], v, f .. ' ' .. v) end
        end
        for _, v in ipairs({ lo - 1, hi + 1, 2 ^ 40, -2 ^ 40 }) do
            T.raises('field ' .. r .. '[2]: value', function() return AllTypes:encode({ [r] = { 1, v } }) end)
            T.raises('field ' .. f .. ': value', function() return AllTypes:encode({ [f] = v }) end)
        end
        for _, v in ipairs({ 0.5, lo + 0.5, hi - 0.5, 0 / 0 }) do
            T.raises('field ' .. r .. '[2]: number', function() return AllTypes:encode({ [r] = { 1, v } }) end)
            T.raises('field ' .. f .. ': number', function() return AllTypes:encode({ [f] = v }) end)
        end
        T.raises('field ' .. r .. '[2]', function() return AllTypes:encode({ [r] = { 1, 1 / 0 } }) end)
        T.raises('field ' .. r .. '[2]', function() return AllTypes:encode({ [r] = { 1, -1 / 0 } }) end)
    end
end)

T.test('encode: singular scalars and strings (the inline fast path), probed and walked, zero values', function()
    local neg1 = '\255\255\255\255\255\255\255\255\255\1'
    -- -0.0 made at run time: PUC Lua 5.1 keeps one constant for 0 and
    -- -0.0 in a function, so a literal -0.0 would turn every 0 below into -0.0.
    local NEG0 = -tonumber('0.0')
    local cases = {
        { 'f_int32', 1, '\8\1' }, { 'f_int32', -1, '\8' .. neg1 }, { 'f_int32', 300, '\8\172\2' },
        { 'f_int64', 2 ^ 40, '\16' .. varint(2 ^ 40) }, { 'f_int64', -1, '\16' .. neg1 },
        { 'f_uint32', 2 ^ 32 - 1, '\24\255\255\255\255\15' }, { 'f_uint64', 2 ^ 53, '\32' .. varint(2 ^ 53) },
        { 'f_sint32', -1, '\40\1' }, { 'f_sint32', 1, '\40\2' }, { 'f_sint64', -2 ^ 40, '\48' .. varint(2 ^ 41 - 1) },
        { 'f_double', 1.5, '\97\0\0\0\0\0\0\248\63' }, { 'f_double', NEG0, '\97\0\0\0\0\0\0\0\128' },
        { 'f_bool', true, '\104\1' }, { 'f_string', 'x', '\114\1x' }, { 'f_bytes', '\255', '\122\1\255' },
        { 'f_float', 1.5, '\93\0\0\192\63' }, { 'f_float', NEG0, '\93\0\0\0\128' },
        { 'f_fixed32', 7, '\61\7\0\0\0' }, { 'f_fixed32', 2 ^ 32 - 1, '\61\255\255\255\255' },
        { 'f_sfixed32', -1, '\77\255\255\255\255' }, { 'f_fixed64', 1, '\65\1\0\0\0\0\0\0\0' },
        { 'f_sfixed64', -2, '\81\254\255\255\255\255\255\255\255' },
        { 'f_float', 0, '' }, { 'f_fixed32', 0, '' }, { 'f_sfixed32', 0, '' }, { 'f_fixed64', 0, '' }, { 'f_sfixed64', 0, '' },
        { 'f_color', 2, '\128\1\2' }, { 'f_color', -1, '\128\1' .. neg1 },
        { 'opt_int32', 0, '\216\5\0' }, { 'opt_string', '', '\226\5\0' },
        -- zero values of implicit presence are left out
        { 'f_int32', 0, '' }, { 'f_int64', 0, '' }, { 'f_uint32', 0, '' }, { 'f_uint64', 0, '' }, { 'f_sint32', 0, '' },
        { 'f_sint64', 0, '' }, { 'f_double', 0, '' }, { 'f_bool', false, '' }, { 'f_string', '', '' },
        { 'f_bytes', '', '' }, { 'f_color', 0, '' },
    }
    local full = { f_int32 = 1, f_int64 = 1, f_uint32 = 1, f_uint64 = 1, f_sint32 = 1, f_sint64 = 1, f_double = 1,
        f_bool = true, f_string = 's', f_bytes = 'b', f_float = 1, f_fixed32 = 1 }
    for _, c in ipairs(cases) do
        AllTypes:encode(full) -- the next encode probes (the last one found many fields set)
        T.eq(AllTypes:encode({ [c[1]] = c[2] }), c[3], 'probed ' .. c[1] .. ' = ' .. tostring(c[2]))
        T.eq(AllTypes:encode({ [c[1]] = c[2] }), c[3], 'walked ' .. c[1] .. ' = ' .. tostring(c[2]))
    end
    -- what the fast path leaves to the general one: same errors, either way
    for _ = 1, 2 do
        AllTypes:encode(full)
        T.raises('field f_int32: value', function() return AllTypes:encode({ f_int32 = 2 ^ 31 }) end)
        T.raises('field f_uint64: value -1', function() return AllTypes:encode({ f_uint64 = -1.5 + 0.5 }) end)
        T.raises('field f_string: string is not valid UTF-8', function() return AllTypes:encode({ f_string = '\255' }) end)
        T.raises('field f_bool: expected boolean, got number', function() return AllTypes:encode({ f_bool = 1 }) end)
        T.raises('field f_double: expected number, got string', function() return AllTypes:encode({ f_double = '1' }) end)
        T.raises('field f_string: expected string, got number', function() return AllTypes:encode({ f_string = 1 }) end)
        T.raises('field f_int32: expected integer, got boolean', function() return AllTypes:encode({ f_int32 = true }) end)
        T.raises('field f_fixed32: value -1', function() return AllTypes:encode({ f_fixed32 = -1 }) end)
        T.raises('field f_sfixed32: number 0.5', function() return AllTypes:encode({ f_sfixed32 = 0.5 }) end)
        T.raises('field f_float: expected number, got boolean', function() return AllTypes:encode({ f_float = true }) end)
    end
    T.eq(AllTypes:decode(AllTypes:encode({ f_int64 = '-5' })).f_int64, -5, 'decimal string for int64')
    T.eq(AllTypes:decode(AllTypes:encode({ f_color = 'COLOR_NEG' })).f_color, 'COLOR_NEG', 'enum by name')
end)

T.test('encode: repeated sub-messages (the element loop calls message directly)', function()
    T.raises('field r_nested[2]: expected table, got number', function() return AllTypes:encode({ r_nested = { {}, 5 } }) end)
    T.raises('field r_nested[9]: expected table, got string',
        function() return AllTypes:encode({ r_nested = { {}, {}, {}, {}, {}, {}, {}, {}, 'x' } }) end)
    T.raises('field r_nested[3].a: value', function() return AllTypes:encode({ r_nested = { {}, {}, { a = 2 ^ 31 } } }) end)
    -- bytes: each element is tag 48 (2 bytes), a length, the body; empty elements are kept
    T.eq(AllTypes:encode({ r_nested = { {}, { a = 1 }, {} } }), '\130\3\0\130\3\2\8\1\130\3\0')
    -- a long element body moves its length prefix (begin_len/end_len)
    local long = string.rep('q', 300)
    T.eq(AllTypes:decode(AllTypes:encode({ r_nested = { { b = long }, { a = 3 } } })).r_nested, { { b = long }, { a = 3 } })
    -- nesting through repeated fields counts toward the depth limit
    local t = {}
    local cur = t
    for _ = 1, 12 do
        cur.kids = { {} }
        cur = cur.kids[1]
    end
    T.raises('nesting', function() return ShallowNode:encode(t) end)
end)

T.test('errors encode nil hole in a repeated array', function()
    -- A border of # is implementation-defined with holes (LuaJIT gives 1
    -- for {1, nil, 3}, PUC Lua 3): within 1..#t the read finds the hole,
    -- past it the strict key check does, and both word it the same.
    local arr = { 1, nil, 3, 4 }
    T.raises('encode hello.Person: field lucky_numbers: array has a nil hole at index 2',
        function() return Person:encode({ lucky_numbers = arr }) end)
    T.raises('field emails: array has a nil hole at index 2',
        function() return Person:encode({ emails = { 'a', nil, 'c', 'd' } }) end)
    T.raises('field r_nested: array has a nil hole at index 2', function() return AllTypes:encode({ r_nested = { {}, nil, {}, {} } }) end)
    T.raises('field emails: array has a nil hole at index 2', function() return Person:encode({ emails = { 'a', nil, 'c' } }) end)
end)

T.test('errors encode unknown key', function()
    T.raises('protolua: encode hello.Person: unknown field "nmae"', function() return Person:encode({ nmae = 'x' }) end)
    T.raises('field address: unknown field "town"', function() return Person:encode({ address = { town = 'x' } }) end)
    T.raises('field r_nested[1]: unknown field "c"', function() return AllTypes:encode({ r_nested = { { c = 1 } } }) end)
end)

T.test('errors encode unknown key in dense tables (strict keys counted in Lua)', function()
    -- Nine fields set: the probe visits BenchPayload, and LuaJIT counts the
    -- keys with the helper's loop. Items: the repeated-message batches.
    local Bench = protolua.load_file(DESC .. 'proto2_basic.fds'):message('proto2_basic.BenchPayload')
    local function dense(k, v)
        local t = { id = 1, name = 'n', timestamp = 2, score = 1, active = true, kind = 1, note = 'x', delta = 1, ratio = 1 }
        if k ~= nil then t[k] = v end
        return t
    end
    T.eq(#Bench:encode(dense()) > 0, true)
    T.raises('encode proto2_basic.BenchPayload: unknown field "nope"', function() return Bench:encode(dense('nope', 1)) end)
    T.raises('message table has a key of type number', function() return Bench:encode(dense(1, 1)) end)
    T.raises('message table has a key of type boolean', function() return Bench:encode(dense(true, 1)) end)
    local function items(bad_at, k)
        local t = dense()
        t.items = {}
        for i = 1, 11 do
            t.items[i] = { id = i, label = 'x' }
            if i == bad_at then t.items[i][k] = 1 end
        end
        return t
    end
    T.eq(#Bench:encode(items()) > 0, true)
    for _, at in ipairs({ 1, 2, 8, 9, 11 }) do
        T.raises('field items[' .. at .. ']: unknown field "zz"', function() return Bench:encode(items(at, 'zz')) end)
        T.raises('field items[' .. at .. ']: message table has a key of type number',
            function() return Bench:encode(items(at, 7)) end)
    end
    -- A non-table element among tables: the batch count fails, each element
    -- is checked on its own, the error is the element's.
    local t = items()
    t.items[3] = 5
    T.raises('field items[3]: expected table, got number', function() return Bench:encode(t) end)
    t.items[3] = { id = 3, zz = 1 }
    t.items[2] = 'x'
    T.raises('field items[2]: expected table, got string', function() return Bench:encode(t) end)
    t.items[2] = { id = 2 }
    T.raises('field items[3]: unknown field "zz"', function() return Bench:encode(t) end)
end)

T.test('errors encode: a nested encode from a debug hook does not change the batch key counts', function()
    -- The batch counter runs as Lua code, where a count hook can run a whole
    -- encode of its own. The outer counts must stay the outer's: the third
    -- item has an unknown key, which a count overwritten by the nested
    -- encode's (all 2) would hide.
    if not T.is_luajit then return end
    local Bench = protolua.load_file(DESC .. 'proto2_basic.fds'):message('proto2_basic.BenchPayload')
    local good = { id = 1, name = 'n', items = {} }
    for i = 1, 8 do good.items[i] = { id = i, label = 'x' } end
    local bad = { id = 1, name = 'n', items = { { id = 1, label = 'x' }, { id = 2, label = 'x' }, { id = 3, label = 'x', zz = 1 } } }
    local nested = 0
    local ok, err
    jit.off()
    debug.sethook(function()
        nested = nested + 1
        assert(#Bench:encode(good) > 0)
    end, '', 1)
    ok, err = pcall(Bench.encode, Bench, bad)
    debug.sethook()
    jit.on()
    T.eq(nested > 0, true, 'the hook ran')
    T.eq(ok, false, 'the unknown key is found')
    T.eq(tostring(err):find('field items[3]: unknown field "zz"', 1, true) ~= nil, true, tostring(err))
end)

T.test('errors encode paths name nested fields', function()
    T.raises('encode hello.Person: field address.city: expected string, got number',
        function() return Person:encode({ address = { city = 5 } }) end)
    T.raises('encode hello.Person: field emails[2]: expected string, got number',
        function() return Person:encode({ emails = { 'a', 5 } }) end)
    T.raises('field lucky_numbers[3]: number 0.5 has no integer representation',
        function() return Person:encode({ lucky_numbers = { 1, 2, 0.5 } }) end)
    T.raises('field r_nested[2].b: expected string, got boolean',
        function() return AllTypes:encode({ r_nested = { {}, { b = true } } }) end)
    T.raises('field m_string_nested["k"].a: expected integer, got string', function()
        return AllTypes:encode({ m_string_nested = { k = { a = 'x' } } })
    end)
    T.raises('field f_imported.id', function() return AllTypes:encode({ f_imported = { id = {} } }) end)
    T.raises('field child.child.value: value', function()
        return Node:encode({ child = { child = { value = 2 ^ 40 } } })
    end)
    T.raises('field o_nested.a', function() return AllTypes:encode({ o_nested = { a = 'x' } }) end)
end)

T.test('errors encode deeper than the limit', function()
    local t = {}
    local cur = t
    for _ = 1, 150 do
        cur.child = {}
        cur = cur.child
    end
    T.raises('encode protolua.test.Node: field child.child', function() return Node:encode(t) end)
    T.raises('nesting deeper than the limit of 100', function() return Node:encode(t) end)
    -- a cycle is caught by the same limit
    local cyc = {}
    cyc.child = cyc
    T.raises('nesting deeper than the limit of 100', function() return Node:encode(cyc) end)
    local shallow = protolua.load_file(DESC .. 'alltypes3.fds', { max_depth = 10 })
    T.raises('encode protolua.test.Node: field child.child.child.child.child.child.child.child.child.child: '
        .. 'nesting deeper than the limit of 10', function() return shallow:encode('protolua.test.Node', t) end)
    local ok = {}
    cur = ok
    for _ = 1, 8 do
        cur.child = { value = 1 }
        cur = cur.child
    end
    T.eq(Node:decode(Node:encode(ok)), ok, '8 levels are fine')
end)

T.test('errors encode oneof and enum', function()
    T.raises('encode protolua.test.AllTypes', function() return AllTypes:encode({ o_int32 = 1, o_string = 'a' }) end)
    T.raises('oneof choice has both', function() return AllTypes:encode({ o_int32 = 1, o_string = 'a' }) end)
    T.raises('is not a value of enum protolua.test.Color', function() return AllTypes:encode({ f_color = 'RED' }) end)
end)

---------------------------------------------------------------------------
-- decode

T.test('errors decode truncated input', function()
    raises_at('protolua: decode hello.Person: field age: truncated input', nil, function()
        return Person:decode(tag(2, 0) .. '\128')
    end)
    raises_at('field f_fixed32: truncated input', nil, function() return AllTypes:decode(tag(7, 5) .. '\1\2') end)
    T.raises('truncated input', function() return AllTypes:decode(tag(8, 1) .. '\1\2\3') end)
    T.raises('truncated input', function() return Person:decode('\128') end)
    T.raises('truncated input', function() return Person:decode(tag(1, 2)) end)
end)

T.test('errors decode bad varint', function()
    local ff = string.rep('\255', 11)
    raises_at('field age: varint longer than 64 bits', nil, function() return Person:decode(tag(2, 0) .. ff) end)
    T.raises('varint longer than 64 bits', function() return Person:decode(ff) end)
    T.raises('varint longer than 64 bits', function() return Person:decode(tag(1, 2) .. ff) end)
end)

T.test('errors decode bad tags', function()
    raises_at('protolua: decode hello.Person: field number 0 in tag', 0, function() return Person:decode('\0\0') end)
    raises_at('field number 0 in tag', 2, function() return Person:decode(tag(2, 0) .. '\1\0\0') end)
    raises_at('invalid wire type 6', 0, function() return Person:decode(tag(1, 6) .. '\0') end)
    raises_at('invalid wire type 7', 0, function() return Person:decode(tag(1, 7) .. '\0') end)
    T.raises('invalid wire type 6', function() return Person:decode(tag(99, 6)) end)
    -- after a run of one repeated field (the run's fast path must not take a 0 byte for its tag)
    raises_at('field number 0 in tag', 8, function() return Person:decode(tag(3, 2) .. '\2ok' .. tag(3, 2) .. '\2ok\0') end)
    T.raises('field lucky_numbers[2]: truncated input',
        function() return Person:decode(tag(5, 0) .. '\1' .. tag(5, 0) .. '\128') end)
    -- inside a sub-message: offset is absolute, path names the field
    local inner = tag(2, 7) .. '\0'
    raises_at('field address: invalid wire type 7', 2,
        function() return Person:decode(tag(4, 2) .. varint(#inner) .. inner) end)
end)

T.test('errors decode LEN past the end', function()
    raises_at('protolua: decode hello.Person: field name: length 5 exceeds the 2 bytes remaining', 1,
        function() return Person:decode(tag(1, 2) .. '\5ab') end)
    T.raises('exceeds the', function() return Person:decode(tag(4, 2) .. '\100') end)
    T.raises('exceeds the', function() return Person:decode(tag(99, 2) .. '\9abc') end)
    T.raises('exceeds the', function() return Person:decode(tag(5, 2) .. '\3\1') end)
    T.raises('exceeds the', function() return Person:decode(tag(1, 2) .. '\255\255\255\255\255\255\255\255\127') end)
    -- a LEN inside a sub-message may not run past the sub-message
    local inner = tag(2, 2) .. '\9x'
    T.raises('field address', function() return Person:decode(tag(4, 2) .. varint(#inner) .. inner .. 'padding..') end)
end)

T.test('errors decode invalid UTF-8 in a proto3 string', function()
    -- name: tag at 0, length at 1, 'a' at 2, 0xff at 3
    raises_at('protolua: decode hello.Person: field name: invalid UTF-8', 3,
        function() return Person:decode(tag(1, 2) .. '\3a\255b') end)
    -- address.city: address tag 0, len 1, city tag 2, len 3, 'a' 4, 0xff 5
    local inner = tag(2, 2) .. '\3a\255b'
    raises_at('field address.city: invalid UTF-8', 5,
        function() return Person:decode(tag(4, 2) .. varint(#inner) .. inner) end)
    -- emails[2]: first element 'ok' occupies bytes 0..3, second: tag 4, len 5, 'xy' 6..7, 0xc0 at 8
    raises_at('field emails[2]: invalid UTF-8', 8,
        function() return Person:decode(tag(3, 2) .. '\2ok' .. tag(3, 2) .. '\3xy\192') end)
    -- a long string (past the SIMD threshold, if any)
    local long = string.rep('a', 100) .. '\255'
    raises_at('field name: invalid UTF-8', 102,
        function() return Person:decode(tag(1, 2) .. varint(#long) .. long) end)
    T.raises('invalid UTF-8', function() return AllTypes:decode(tag(72, 2) .. '\5' .. tag(1, 2) .. '\1\255' .. tag(2, 2) .. '\0') end)
    -- every length tier of the short ASCII check (1-64 bytes), the bad
    -- byte first, in the middle and last; and valid multibyte text passes
    for _, len in ipairs({ 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 47, 48, 49, 63, 64, 65 }) do
        for _, at in ipairs({ 1, math.floor((len + 1) / 2), len }) do
            local str = string.rep('a', at - 1) .. '\255' .. string.rep('b', len - at)
            raises_at('field name: invalid UTF-8', 1 + #varint(len) + at - 1,
                function() return Person:decode(tag(1, 2) .. varint(len) .. str) end)
        end
        local ok = string.rep('a', len - 2) .. '\195\169' -- ends in U+00E9
        if len >= 2 then T.eq(Person:decode(tag(1, 2) .. varint(len) .. ok), { name = ok }) end
    end
    -- bytes fields take anything
    T.eq(AllTypes:decode(tag(15, 2) .. '\1\255'), { f_bytes = '\255' }, 'bytes')
end)

T.test('errors decode nesting deeper than the limit', function()
    local bytes = deep_node(150)
    T.raises('nesting deeper than the limit of 100', function() return Node:decode(bytes) end)
    T.eq(type(Node:decode(deep_node(99))), 'table', '99 levels are within the default limit')
    T.raises('protolua: decode protolua.test.Node', function() return ShallowNode:decode(bytes) end)
    T.raises('nesting deeper than the limit of 10', function() return ShallowNode:decode(bytes) end)
    -- the root is level 1, so 9 children are still within the limit
    local ok = ShallowNode:decode(deep_node(9))
    local n, cur = 0, ok
    while cur.child do
        n = n + 1
        cur = cur.child
    end
    T.eq(n, 9, '9 levels decoded')
    T.raises('nesting deeper', function() return ShallowNode:decode(deep_node(10)) end)
    -- through the repeated field too
    local s = ''
    for _ = 1, 150 do s = tag(3, 2) .. varint(#s) .. s end
    T.raises('nesting deeper', function() return ShallowNode:decode(s) end)
    -- and through unknown (skipped) groups in an unknown field
    local g = string.rep(tag(9, 3), 150) .. string.rep(tag(9, 4), 150)
    T.raises('nesting deeper', function() return ShallowNode:decode(g) end)
end)

T.test('errors decode of a non-string argument', function()
    T.raises('protolua: decode hello.Person: expected string, got number', function() return Person:decode(5) end)
    T.raises('decode hello.Person: expected string, got nil', function() return Person:decode(nil) end)
    T.raises('decode hello.Person: expected string, got no value', function() return Person:decode() end)
    T.raises('decode hello.Person: expected string, got table', function() return Person:decode({}) end)
    T.raises('expected string, got table', function() return hello:decode('hello.Person', {}) end)
end)

T.test('errors bad self', function()
    T.raises('encode: expected a message handle', function() return Person.encode(nil, {}) end)
    T.raises('encode: expected a message handle', function() return Person.encode({}, {}) end)
    T.raises('decode: expected a message handle', function() return Person.decode('x', '') end)
    T.raises('expected a message handle', function() return Person.decode(hello, '') end)
    T.raises('fields: expected a message handle', function() return Person.fields(5) end)
    T.raises('expected a message handle', function() return Person.encode(AllTypes and 5, {}) end)
    -- methods are bound to their own handle: another handle is not `self`
    T.raises('encode: expected a message handle', function() return Person.encode(AllTypes, {}) end)
    T.raises('decode: expected a message handle', function() return AllTypes.decode(Person, '') end)
    T.raises('name: expected a message handle', function() return Node.name(AllTypes) end)
    T.raises('fields: expected a message handle', function() return Person.fields(hello:message('hello.Address')) end)
    T.raises('expected a schema', function() return hello.message(nil, 'hello.Person') end)
    T.raises('expected a schema', function() return hello.encode(Person, 'hello.Person', {}) end)
    T.raises('expected a schema', function() return hello.messages({}) end)
    T.raises('expected a schema', function() return hello.enum(5, 'x') end)
end)

T.test('errors leave the schema usable', function()
    for _ = 1, 3 do
        pcall(Person.encode, Person, { name = 5 })
        pcall(Person.encode, Person, { address = { city = {} }, emails = { 'a', 'b', 3 } })
        pcall(Person.decode, Person, '\0\0')
        pcall(ShallowNode.decode, ShallowNode, deep_node(150))
        pcall(Node.encode, Node, { child = { child = { value = 0.5 } } })
        pcall(AllTypes.encode, AllTypes, { m_string = { a = 'b', c = 5 } })
        still_works()
    end
    -- an error in the middle of an encode does not leave stale bytes behind
    local clean = Person:encode({ name = 'x' })
    pcall(Person.encode, Person, { name = string.rep('y', 1000), emails = { 'a', 5 } })
    T.eq(Person:encode({ name = 'x' }), clean, 'buffer reset after a failed encode')
end)

local function kb_growth(fn, n)
    collectgarbage('collect')
    collectgarbage('collect')
    local before = collectgarbage('count')
    fn(n)
    collectgarbage('collect')
    collectgarbage('collect')
    return collectgarbage('count') - before
end

T.test('errors 100000 failing decodes leak nothing', function()
    local bad = { '\0\0', tag(1, 2) .. '\5ab', tag(1, 2) .. '\3a\255b', string.rep('\255', 11) }
    local deep = deep_node(120)
    local grew = kb_growth(function(n)
        for i = 1, n do
            local ok = pcall(Person.decode, Person, bad[i % 4 + 1])
            if ok then error('decode should fail') end
            if i % 1000 == 0 and pcall(ShallowNode.decode, ShallowNode, deep) then error('deep decode should fail') end
        end
    end, 100000)
    if grew >= 100 then error(string.format('Lua memory grew by %.1f KB over 100000 failing decodes', grew)) end
    still_works()
end)

T.test('errors 100000 failing encodes leak nothing', function()
    local bad = {
        { name = 5 },
        { age = 2 ^ 40 },
        { address = { city = false } },
        { emails = { 'a', 'b', 7 } },
        { lucky_numbers = { 1, 2.5 } },
        { nmae = 'x' },
        { name = 'ok', address = { street = 'a\255' } },
    }
    local grew = kb_growth(function(n)
        for i = 1, n do
            local ok = pcall(Person.encode, Person, bad[i % #bad + 1])
            if ok then error('encode should fail') end
        end
    end, 100000)
    if grew >= 100 then error(string.format('Lua memory grew by %.1f KB over 100000 failing encodes', grew)) end
    still_works()
end)

T.test('errors: a bad varint deep in a long packed run names its element and byte', function()
    -- 100 good values, then an 11-byte varint, then more: the run loop
    -- must hand the error to the element loop.
    local body = string.rep('\1', 100) .. string.rep('\255', 10) .. '\1' .. string.rep('\2', 50)
    local bin = tag(5, 2) .. varint(#body) .. body
    T.raises('field lucky_numbers[101]: varint', function() return Person:decode(bin) end)
    T.raises('at byte 103', function() return Person:decode(bin) end)
    -- cut inside the last value
    body = string.rep('\1', 100) .. '\130'
    T.raises('field lucky_numbers[101]: truncated input at byte 102', function()
        return Person:decode(tag(5, 2) .. varint(#body) .. body)
    end)
    -- long runs of mixed widths, and two runs of one field append
    local vals, parts = {}, {}
    for i = 1, 300 do
        vals[i] = (i * 7919) % 70000 - (i % 3 == 0 and 70000 or 0)
    end
    local t = Person:decode(Person:encode({ lucky_numbers = vals }) .. Person:encode({ lucky_numbers = { 1, 2, 3 } }))
    T.eq(#t.lucky_numbers, 303)
    for i = 1, 300 do parts[i] = t.lucky_numbers[i] end
    T.eq(parts, vals)
    T.eq(t.lucky_numbers[303], 3)
end)

T.test('errors: a bad or cut varint in a short packed run (4-6 values, the run loop) names its element', function()
    -- runs at the run loop's threshold (4 values) and just above, the bad
    -- value at every position: 1-byte, 2-byte and 3-byte neighbours
    for _, good in ipairs({ '\1', '\130\1', '\130\130\1' }) do
        for len = 4, 6 do
            for bad = 1, len do
                local parts = {}
                for i = 1, len do parts[i] = i == bad and string.rep('\255', 10) .. '\1' or good end
                local body = table.concat(parts)
                local at = 2 + (bad - 1) * #good
                T.raises(string.format('field lucky_numbers[%d]: varint', bad), function()
                    return Person:decode(tag(5, 2) .. varint(#body) .. body)
                end)
                T.raises(string.format('at byte %d', at), function()
                    return Person:decode(tag(5, 2) .. varint(#body) .. body)
                end)
            end
            -- cut inside the last value: a continuation byte ends the run
            -- (the error names where that value starts)
            local body = string.rep(good, len - 1) .. '\130'
            T.raises(string.format('field lucky_numbers[%d]: truncated input at byte %d', len, 1 + #body),
                function() return Person:decode(tag(5, 2) .. varint(#body) .. body) end)
            local t = Person:decode(tag(5, 2) .. varint(#good * len) .. string.rep(good, len))
            T.eq(#t.lucky_numbers, len)
            T.eq(t.lucky_numbers[len], #good == 1 and 1 or #good == 2 and 130 or 16642)
        end
    end
end)

T.test('errors encode: fields fetched in one Lua call (LuaJIT, strict keys) are raw, and keys still checked', function()
    -- Probed tables of at most 64 fields, nested at most 8 deep, have their
    -- key count and values fetched by one generated Lua function on LuaJIT;
    -- elsewhere (and on every other Lua) each field is read by rawget.
    -- Both must give the same bytes and the same errors.
    local Bench = protolua.load_file(DESC .. 'proto2_basic.fds'):message('proto2_basic.BenchPayload')
    -- Twelve of BenchPayload's 21 fields (18 and 3 extensions) set: the
    -- root is probed (a table with fewer than half its fields set is
    -- walked, in hash order, and its errors come in that order).
    local function payload()
        return {
            id = 1, name = 'n', timestamp = 2, score = 1, active = true, kind = 'KIND_BETA', note = 'x',
            delta = 3, ratio = 0.5, big = 4,
            inner = { id = 7, label = 'in', deltas = { 1, -2 } },
            items = { { id = 1, label = 'a' }, { id = 2, deltas = { 3 } } },
        }
    end
    local plain = Bench:encode(payload())
    -- Raw reads: an __index (even behind a __metatable field) supplies nothing.
    for _, mt in ipairs({
        { __index = function(_, k) return (k == 'stamp64' or k == 'label') and 5 or nil end },
        { __index = { stamp64 = 5, label = 'mt' }, __metatable = false },
        { __index = { stamp64 = 5, label = 'mt' }, __metatable = 'locked' },
    }) do
        local t = payload()
        setmetatable(t, mt)
        setmetatable(t.inner, mt)
        t.inner.label = nil
        local expect = payload()
        expect.inner.label = nil
        T.eq(Bench:encode(t), Bench:encode(expect))
    end
    -- Unknown keys and non-string keys, in the root, a singular and a
    -- repeated sub-message; the first error in field order is the one.
    local t = payload()
    t.inner.zz = 1
    T.raises('field inner: unknown field "zz"', function() return Bench:encode(t) end)
    t.items[2].yy = 1
    T.raises('field inner: unknown field "zz"', function() return Bench:encode(t) end)
    t.inner.zz = nil
    T.raises('field items[2]: unknown field "yy"', function() return Bench:encode(t) end)
    t.items[2].yy = nil
    t.inner[1] = true
    T.raises('field inner: message table has a key of type number', function() return Bench:encode(t) end)
    t.inner[1] = nil
    t.extra = 1
    T.raises('encode proto2_basic.BenchPayload: unknown field "extra"', function() return Bench:encode(t) end)
    t.extra = nil
    T.eq(Bench:encode(t), plain)
    -- A field error comes before the table's unknown key, as in the probe.
    t.zz = 1
    t.note = 5
    T.raises('field note: expected string, got number', function() return Bench:encode(t) end)
    -- A group and a sub-message whose fields the parent's fetch reads
    -- too (one level into a singular sub-message of at most 16 fields).
    local g = payload()
    g.meta = { source = 's', version = 2, zz = 1 }
    T.raises('field meta: unknown field "zz"', function() return Bench:encode(g) end)
    g.meta = { source = 's', version = 'x' }
    T.raises('field meta.version: expected integer, got string', function() return Bench:encode(g) end)
    g.meta = setmetatable({ source = 's' }, { __index = { version = 9 } })
    local h = payload()
    h.meta = { source = 's' }
    T.eq(Bench:encode(g), Bench:encode(h))
    g.meta = 'x'
    T.raises('field meta: expected table, got string', function() return Bench:encode(g) end)
    local addr = setmetatable({ city = 'c' }, { __index = { zip = 'z' }, __metatable = false })
    T.eq(Person:encode({ name = 'a', age = 3, address = addr }),
        Person:encode({ name = 'a', age = 3, address = { city = 'c' } }))
    T.raises('field address: message table has a key of type boolean',
        function() return Person:encode({ name = 'a', age = 3, address = { city = 'c', [true] = 1 } }) end)
    T.raises('field address: unknown field "town"',
        function() return Person:encode({ name = 'a', age = 3, address = { city = 'c', town = 1 } }) end)
    -- More than 64 fields: read one by one; the unknown key is still named.
    local S = protolua.load_file(FIXTURES .. '/descriptors/many_required.fds')
    local full = {}
    for i = 1, 70 do full['r' .. i] = i end
    full.r71 = 1
    T.raises('unknown field "r71"', function() return S:encode('protolua.test.ManyRequired', full) end)
end)

T.test('errors encode: fetched values of every type, in the type-coded slots and past them', function()
    -- A fetch hands the probe the types of the first 11 values as codes in
    -- its count slot (nil, boolean, number, string, table; 7 = ask Lua),
    -- the others' types are read in their slots: both must name the same
    -- type and treat a NULL cdata (which is `== nil`) as absent.
    local Bench = protolua.load_file(DESC .. 'proto2_basic.fds'):message('proto2_basic.BenchPayload')
    local function payload()
        return {
            id = 1, name = 'n', timestamp = 2, score = 1, active = true, kind = 'KIND_BETA', note = 'x',
            delta = 3, ratio = 0.5, big = 4, stamp64 = 6, blob = 'b',
            values = { 1 }, tags = { 't' }, inner = { id = 7, label = 'in' },
            items = { { id = 1, label = 'a' }, { id = 2, deltas = { 3 } } },
        }
    end
    local co = coroutine.create(function() end)
    -- Fields 1 (coded), 10 (the last coded one: big, field index 9),
    -- 12 (blob, index 11: past the codes) and 16 (inner).
    for i = 1, 3 do -- again, once the fetchers are compiled
        for _ = 1, 60 do Bench:encode(payload()) end
        local t = payload()
        t.note = print
        T.raises('field note: expected string, got function', function() return Bench:encode(t) end)
        t = payload()
        t.big = co
        T.raises('field big: expected integer or decimal string, got thread', function() return Bench:encode(t) end)
        t = payload()
        t.blob = co
        T.raises('field blob: expected string, got thread', function() return Bench:encode(t) end)
        t = payload()
        t.inner = print
        T.raises('field inner: expected table, got function', function() return Bench:encode(t) end)
        t = payload()
        t.items[2].label = co
        T.raises('field items[2].label: expected string, got thread', function() return Bench:encode(t) end)
        if T.is_luajit then
            local null = require('ffi').cast('void *', 0)
            t = payload()
            t.timestamp, t.stamp64, t.blob = null, null, null
            t.inner.label, t.items[1].label = null, null
            local expect = payload()
            expect.timestamp, expect.stamp64, expect.blob = nil, nil, nil
            expect.inner.label, expect.items[1].label = nil, nil
            T.eq(Bench:encode(t), Bench:encode(expect), 'NULL cdata absent, run ' .. i)
        end
    end
    -- A key count past the count slot's 2^20 - 1 still fails strict keys.
    local big = payload()
    for k = 1, 1100000 do big[k] = true end
    T.raises('message table has a key of type number', function() return Bench:encode(big) end)
end)

-- Lua code that changes a fetcher's locals after their types were coded
-- (review-6b): the count slot's codes must not make the probe read a
-- number as a table. `kids` (field index 2, coded at bits 26-28) is a
-- number; the edit recodes it as a table (3 -> 5).
-- `level` counts from the caller: the count local's index and new value.
local function recode_kids(level)
    local i = 1
    while true do
        local name, val = debug.getlocal(level + 1, i)
        if not name then return false end
        if name == 'n' and type(val) == 'number' and val >= 2 ^ 20 and math.floor(val / 2 ^ 26) % 8 == 3 then
            return i, val + 2 * 2 ^ 26
        end
        i = i + 1
    end
end

T.test('encode: LuaJIT compiles the fetchers\' `next` loops outside Tarantool 2.6 (else the fetch tests skip)', function()
    -- The vendored LuaJIT and Debian's compile them; Tarantool 2.6's does
    -- not ("NYI: bytecode 72"), where encode fetches only wide messages.
    if T.is_luajit and not rawget(_G, 'box') then T.eq(T.next_compiles(), true) end
end)

T.test('errors encode: a hook that turns the fetch count slot into a numeric string (LuaJIT)', function()
    -- Node (3 fields) is fetched only where LuaJIT compiles the fetchers'
    -- `next` loops (T.next_compiles).
    if not (T.is_luajit and T.next_compiles()) then return end
    -- A schema of its own: no encode hints from the tests above.
    local Node = protolua.load_file(DESC .. 'alltypes3.fds'):message('protolua.test.Node')
    for _ = 1, 5 do Node:encode({ value = 1, kids = { { value = 2 } } }) end
    local fired = 0
    jit.off() -- hooks run in the interpreter only
    debug.sethook(function()
        local info = debug.getinfo(2, 'S')
        if info and info.source == '=protolua.fetch' then
            local i, v = recode_kids(2)
            if i then
                debug.setlocal(2, i, string.format('%.0f', v))
                fired = fired + 1
            end
        end
    end, '', 1)
    local ok, err = pcall(Node.encode, Node, { value = 1, kids = 12345 })
    debug.sethook()
    jit.on()
    T.eq(fired, 1, 'the hook edited the count slot (no type codes before 177c9ef)')
    T.eq(ok, false)
    T.eq(tostring(err):find('field kids: expected array (table), got number', 1, true) ~= nil, true, tostring(err))
end)

T.test('errors encode: a jit.attach handler that recodes a fetched type without a hook (LuaJIT)', function()
    if not (T.is_luajit and jit.attach) then return end
    local Node = protolua.load_file(DESC .. 'alltypes3.fds'):message('protolua.test.Node')
    local fired = 0
    local function handler()
        for lv = 1, 12 do
            local info = debug.getinfo(lv, 'S')
            if not info then break end
            if info.source == '=protolua.fetch' and fired == 0 then
                local i, v = recode_kids(lv)
                if i then
                    debug.setlocal(lv, i, v)
                    fired = fired + 1
                end
            end
        end
    end
    jit.attach(handler, 'record')
    local ok, err
    for _ = 1, 2000 do
        ok, err = pcall(Node.encode, Node, { value = 1, kids = 12345 })
        if fired > 0 then break end
    end
    jit.attach(handler)
    -- No trace recorded (e.g. the JIT off or the vendored build's
    -- thresholds): nothing to check.
    if fired == 0 then return end
    T.eq(ok, false)
    T.eq(tostring(err):find('field kids: expected array (table), got number', 1, true) ~= nil, true, tostring(err))
end)

T.test('errors encode: below the fetch depth, repeated sub-messages are batch-counted and checked', function()
    -- Node nested 12 deep through `child`; the fetch stops at depth 8, so
    -- the kids at depth 11 take the batch count (LuaJIT) or lua_next.
    local function chain(bad)
        local root = { value = 1 }
        local cur = root
        for d = 2, 10 do
            cur.child = { value = d }
            cur = cur.child
        end
        cur.kids = {}
        for i = 1, 5 do cur.kids[i] = { value = i, kids = {} } end
        if bad then cur.kids[4].zz = 1 end
        return root
    end
    local bin = Node:encode(chain())
    local back = Node:decode(bin)
    local cur = back
    for _ = 2, 10 do cur = cur.child end
    T.eq(cur.value, 10)
    T.eq(#cur.kids, 5)
    T.eq(cur.kids[5].value, 5)
    T.raises('kids[4]: unknown field "zz"', function() return Node:encode(chain(true)) end)
end)

T.test('errors encode: the fetch under a debug hook (nested encode, error) keeps bytes and errors', function()
    if not T.is_luajit then return end
    local Bench = protolua.load_file(DESC .. 'proto2_basic.fds'):message('proto2_basic.BenchPayload')
    local function payload(bad)
        local t = { id = 1, name = 'n', timestamp = 2, score = 1, active = true, note = 'x', kind = 1,
            delta = 3, ratio = 0.5, big = 4, inner = { id = 7, label = 'in' },
            items = { { id = 1 }, { id = 2 }, { id = 3 } } }
        if bad then t.items[3].zz = 1 end
        return t
    end
    local plain = Bench:encode(payload())
    local in_fetch = function()
        -- Level 1 is this function, 2 the hook, 3 the function it stopped.
        local info = debug.getinfo(3, 'S')
        return info and info.source == '=protolua.fetch'
    end
    -- Encode a good and a bad payload with `hook` run at every line (the
    -- JIT off, so that compiled fetchers reach it too): same bytes, same
    -- error as without it.
    local function same_under(hook)
        jit.off()
        debug.sethook(hook, '', 1)
        local ok1, r1 = pcall(Bench.encode, Bench, payload())
        local ok2, r2 = pcall(Bench.encode, Bench, payload(true))
        debug.sethook()
        jit.on()
        T.eq(ok1, true, tostring(r1))
        T.eq(r1, plain)
        T.eq(ok2, false)
        T.eq(tostring(r2):find('field items[3]: unknown field "zz"', 1, true) ~= nil, true, tostring(r2))
    end
    -- A hook that runs a whole encode inside each fetcher: the outer values
    -- and counts are the outer call's own.
    local nested = 0
    same_under(function()
        if in_fetch() then
            nested = nested + 1
            assert(Bench:encode(payload()) == plain)
        end
    end)
    T.eq(nested > 0, true, 'the hook ran in a fetcher')
    -- A hook that raises inside each fetcher: the fetch fails, the fields
    -- are read one by one, same bytes, same errors.
    local raised = 0
    same_under(function()
        if in_fetch() then
            raised = raised + 1
            error('hook')
        end
    end)
    T.eq(raised > 0, true, 'the hook raised in a fetcher')
end)

T.test('errors encode: an error while a fetcher is made does not turn fetching off', function()
    if not T.is_luajit then return end
    -- A schema of its own: its fetchers are not made yet.
    local Bench = protolua.load_file(DESC .. 'proto2_basic.fds'):message('proto2_basic.BenchPayload')
    local function payload()
        return { id = 1, name = 'n', timestamp = 2, score = 1, active = true, note = 'x', kind = 1,
            delta = 3, ratio = 0.5, big = 4, inner = { id = 7, label = 'in' },
            items = { { id = 1 }, { id = 2 }, { id = 3 } } }
    end
    -- The first line of protolua.fetch a hook sees is the generated chunk
    -- being run by make_fetcher: raise there once.
    local seen, raised = 0, false
    jit.off()
    debug.sethook(function()
        local info = debug.getinfo(2, 'S')
        if info and info.source == '=protolua.fetch' then
            seen = seen + 1
            if not raised then
                raised = true
                error('hook')
            end
        end
    end, '', 1)
    local ok1, r1 = pcall(Bench.encode, Bench, payload())
    seen = 0
    local ok2, r2 = pcall(Bench.encode, Bench, payload())
    debug.sethook()
    jit.on()
    T.eq(raised, true, 'the hook raised while the fetcher was made')
    T.eq(ok1, true, tostring(r1))
    T.eq(ok2, true, tostring(r2))
    T.eq(r1, r2)
    T.eq(seen > 0, true, 'the next encode made the fetchers and ran them')
    -- The key table (the methods' upvalue 1) keeps the fetchers after the
    -- key strings: none may be `false` (given up) after a passing error.
    local _, keys = debug.getupvalue(Bench.encode, 1)
    T.eq(type(keys), 'table')
    for k, v in pairs(keys) do
        T.eq(v ~= false, true, 'fetcher slot ' .. tostring(k) .. ' given up')
    end
end)
