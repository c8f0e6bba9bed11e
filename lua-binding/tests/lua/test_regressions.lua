-- Regressions found by fuzzing (fuzz/regressions/). Lua 5.1 compatible.

T.test('regression: a finalizer that encodes during the result push does not clobber the result', function()
    local P = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
    local want = P:encode({ name = string.rep('a', 200) })
    local other = { name = string.rep('b', 300) }
    for _ = 1, 200 do
        -- Garbage with a finalizer that encodes with the same schema; a GC
        -- step inside the result push may run it.
        for _ = 1, 20 do
            local u = newproxy and newproxy(true) or setmetatable({}, {})
            if newproxy then getmetatable(u).__gc = function() P:encode(other) end
            else setmetatable(u, { __gc = function() P:encode(other) end }) end
        end
        T.eq(P:encode({ name = string.rep('a', 200) }), want)
    end
end)

-- Fuzz findings 2, 5 and 6 of docs/ROBUSTNESS.md, and the required-field
-- set that had room for 64.

local unhex = T.unhex
local CONF = FIXTURES .. '/descriptors/conformance.fds'
local P2 = 'protobuf_test_messages.proto2.TestAllTypesProto2'
local P3 = 'protobuf_test_messages.proto3.TestAllTypesProto3'

T.test('regression: a map whose only entries went to the unknown fields stays absent', function()
    local C = protolua.load_file(CONF)
    -- map_string_nested_enum { "k" = 74 }: 74 is not a NestedEnum value.
    local bin = unhex('ca04 05 0a016b 104a')
    local dropped = C:decode(P2, bin, { unknown = 'drop' })
    T.eq(dropped, {})
    T.eq(C:encode(P2, dropped), '')
    local kept = C:decode(P2, bin)
    T.eq(kept.map_string_nested_enum, nil)
    T.eq(C:encode(P2, kept), bin)
    -- With a known entry beside it, the map holds just that one.
    local mixed = C:decode(P2, unhex('ca04 05 0a016b 104a ca04 05 0a016a 1001'), { unknown = 'drop' })
    T.eq(mixed, { map_string_nested_enum = { j = 'BAR' } })
    -- Option empty still gives the empty map.
    T.eq(C:decode(P2, bin, { unknown = 'drop', empty = true }).map_string_nested_enum, {})
end)

T.test('regression: a map entry without key or value takes the int64 option', function()
    local C = protolua.load_file(CONF)
    local bin = unhex('fa03 00') -- map_fixed64_fixed64: an empty entry
    T.eq(C:decode(P3, bin, { int64 = 'string' }), { map_fixed64_fixed64 = { ['0'] = '0' } })
    T.eq(C:decode(P3, bin, { int64 = 'number' }), { map_fixed64_fixed64 = { [0] = 0 } })
    -- The same as an entry that spells out zeros.
    T.eq(C:decode(P3, unhex('fa03 12 09 0000000000000000 11 0000000000000000'), { int64 = 'string' }),
        { map_fixed64_fixed64 = { ['0'] = '0' } })
    -- map_int64_int64 (signed), key present, value absent.
    T.eq(C:decode(P3, unhex('ca03 02 0807'), { int64 = 'string' }), { map_int64_int64 = { ['7'] = '0' } })
    if T.is_luajit then
        local t = C:decode(P3, bin, { int64 = 'cdata' })
        local k, v = next(t.map_fixed64_fixed64)
        T.eq(type(k), 'cdata')
        T.eq(tostring(v), '0ULL')
    end
end)

T.test('regression: a map counts as a nesting level on encode as on decode', function()
    local C = protolua.load_file(CONF)
    local t = { map_int32_int32 = { [1] = 2 } }
    T.raises('field map_int32_int32[1]: nesting deeper than the limit of 1',
        function() return C:encode(P3, t, { max_depth = 1 }) end)
    local bin = C:encode(P3, t, { max_depth = 2 })
    T.eq(C:decode(P3, bin, { max_depth = 2 }), t)
    -- Decode stops at the entry, before its key is read.
    T.raises('field map_int32_int32[<entry>]: nesting deeper than the limit of 1 at byte 3',
        function() return C:decode(P3, bin, { max_depth = 1 }) end)
    -- An empty map writes nothing, so it fits any limit.
    T.eq(C:encode(P3, { map_int32_int32 = {} }, { max_depth = 1 }), '')
end)

T.test('regression: more than 64 required fields are all checked and named', function()
    local S = protolua.load_file(FIXTURES .. '/descriptors/many_required.fds')
    local M = 'protolua.test.ManyRequired'
    local full = {}
    for i = 1, 70 do full['r' .. i] = i end
    local bin = S:encode(M, full)
    T.eq(S:decode(M, bin), full)
    -- Each one alone missing, on encode and decode, including r1..r6,
    -- whose bits r65..r70 once shared.
    for _, i in ipairs({ 1, 6, 7, 64, 65, 70 }) do
        local t = {}
        for k, v in pairs(full) do t[k] = v end
        t['r' .. i] = nil
        T.raises('missing required field r' .. i .. ' of ' .. M, function() return S:encode(M, t) end)
        local b = S:encode(M, t, { required = false })
        T.raises('missing required field r' .. i .. ' of ' .. M, function() return S:decode(M, b) end)
    end
    -- None set: 64 named, the rest counted.
    local err = T.raises('missing required fields r1, r2, ', function() return S:encode(M, {}) end)
    T.eq(err:find('r64 and 6 more of ' .. M, 1, true) ~= nil, true, err)
    T.eq(err:find('r65', 1, true), nil, err)
    T.raises('r64 and 6 more of ' .. M, function() return S:decode(M, '') end)
end)

T.test('decode: repeated and map fields interleaved on the wire, and merged sub-messages', function()
    local C = protolua.load_file(CONF)
    local Msg = C:message(P3)
    -- repeated_int32 (31, slot < 32), unpacked_int32 (89, slot >= 32),
    -- repeated_string (44), map_int32_int32 (56), interleaved element by element.
    local want = {
        repeated_int32 = { 1, 2, 3 },
        unpacked_int32 = { 10, 20, 30 },
        repeated_string = { 'a', 'b' },
        map_int32_int32 = { [1] = 2, [3] = 4 },
    }
    local bin = unhex('f80101 c8050a e20201 61 c2030408011002 f80102 c80514 e20201 62 c2030408031004 f80103 c8051e')
    T.eq(Msg:decode(bin), want)
    T.eq(Msg:decode(Msg:encode(want)), want)
    -- recursive_message (27) twice: the second merges into the first, and
    -- its arrays go on after the first's elements.
    local inner1 = Msg:encode({ repeated_int32 = { 1 }, unpacked_int32 = { 5 }, map_int32_int32 = { [1] = 1 } })
    local inner2 = Msg:encode({ repeated_int32 = { 2 }, unpacked_int32 = { 6 }, map_int32_int32 = { [2] = 2 } })
    local function len(s) return string.char(#s) end
    local merged = Msg:decode('\218\001' .. len(inner1) .. inner1 .. '\218\001' .. len(inner2) .. inner2)
    T.eq(merged.recursive_message, {
        repeated_int32 = { 1, 2 },
        unpacked_int32 = { 5, 6 },
        map_int32_int32 = { [1] = 1, [2] = 2 },
    })
end)

T.test('encode walk (sparse tables): same checks and errors as the probe', function()
    -- A fresh message handle whose last encode saw an empty table walks
    -- the next one with lua_next (src/binary/encode/probe.rs); each case runs both ways.
    local function both(fds, name, fn)
        for _, warm in ipairs({ false, true }) do
            local M = protolua.load_file(FIXTURES .. '/descriptors/' .. fds):message(name)
            if warm then pcall(M.encode, M, {}) end
            fn(M, warm and 'walk' or 'probe')
        end
    end
    both('hello.fds', 'hello.Person', function(M, how)
        T.raises('unknown field "nmae"', function() return M:encode({ nmae = 'x' }) end)
        T.raises('message table has a key of type number', function() return M:encode({ name = 'x', [1] = 2 }) end)
        T.raises('field age: expected integer, got string', function() return M:encode({ age = 'x' }) end)
        T.raises('field lucky_numbers[2]: expected integer, got string', function() return M:encode({ lucky_numbers = { 1, 'x' } }) end)
        T.eq(M:encode({ name = 'a', age = 3 }), '\10\1a\16\3', how)
        -- An unknown key beside set fields, after a sparse table (not an
        -- empty one) set the hint: the same error however the table is read
        -- (walked, or probed over rawget or fetched values on LuaJIT).
        T.eq(M:encode({ age = 3, name = 'a' }), '\10\1a\16\3', how)
        T.raises('unknown field "nmae"', function() return M:encode({ name = 'x', age = 1, nmae = 'y' }) end)
        T.raises('field address: unknown field "town"',
            function() return M:encode({ name = 'x', address = { town = 'y' } }) end)
        -- Non-strict: unknown and non-string keys are ignored.
        T.eq(M:encode({ name = 'a', nmae = 1, [1] = 2, [true] = 3 }, { strict_keys = false }), '\10\1a', how)
        -- The state is fine after errors: the stack is back in place.
        T.eq(M:decode(M:encode({ address = { city = 'c' }, name = 'n' })), { address = { city = 'c' }, name = 'n' }, how)
    end)
    both('proto2_basic.fds', 'proto2_basic.BenchPayload', function(M, how)
        T.raises('missing required field name of proto2_basic.BenchPayload',
            function() return M:encode({ id = 1 }) end)
        local t = { id = 1, name = 'n', ['[proto2_basic.ext_comment]'] = 'c', note = 'x' }
        T.eq(M:decode(M:encode(t)), t, how)
        T.eq(M:decode(M:encode({ id = 1, name = 'n' })), { id = 1, name = 'n' }, how)
        T.raises('encode proto2_basic.BenchPayload: unknown field "extra"',
            function() return M:encode({ id = 1, name = 'n', extra = 1 }) end)
    end)
    both('conformance.fds', 'protobuf_test_messages.proto3.TestAllTypesProto3', function(M, how)
        T.raises('oneof oneof_field has both', function() return M:encode({ oneof_uint32 = 1, oneof_string = 'x' }) end)
        T.eq(M:encode({ optional_int32 = 0, optional_string = '' }), '', how)
    end)
end)

T.test('encode walk: many set fields and any key order give the probe\'s bytes', function()
    -- The walk keeps its first 8 fields on its frame and the rest in a
    -- shared vector (src/binary/encode/walk.rs walk_fields); the fields are put in number
    -- order afterwards (two by a rotation, more by a sort). A handle whose
    -- last encode saw 2 of BenchPayload's 18 fields walks the next table,
    -- however many fields it has; a fresh handle probes it.
    local S = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds')
    local W = S:message('proto2_basic.BenchPayload')
    local all = {
        id = 7, name = 'nm', timestamp = 123456789, score = 2.5, active = false, kind = 2,
        note = string.rep('n', 200), delta = -300, ratio = 0.5, big = 2 ^ 40, stamp64 = 99,
        blob = '\0\1', values = { 1, 300 }, codes = { 4, 5 }, tags = { 'a', 'bb' },
        inner = { id = 1, label = 'l', deltas = { -1, 1 } }, items = { { id = 2 }, { id = 3 } },
        meta = { source = 's', version = 4 },
    }
    local names = {}
    for k in pairs(all) do names[#names + 1] = k end
    table.sort(names)
    -- Every prefix of several orders of the names: 2..18 fields, inserted
    -- (and so iterated) in different orders.
    local orders = { names, {}, {} }
    for i = #names, 1, -1 do orders[2][#orders[2] + 1] = names[i] end
    for i = 1, #names do orders[3][i] = names[(i * 7) % #names + 1] end
    for _, order in ipairs(orders) do
        for n = 2, #order do
            local t = { id = 1, name = 'x' }
            for i = 1, n do t[order[i]] = all[order[i]] end
            W:encode({ id = 2, name = 'y' })
            local P = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds'):message('proto2_basic.BenchPayload')
            T.eq(W:encode(t), P:encode(t), n .. ' fields')
        end
    end
end)

T.test('encode walk: an error before or after the 8th field, in a walked sub-message, then the same handle', function()
    -- review-6: the walk keeps 8 fields on its frame, spills to a shared
    -- vector past 8, and a sub-message walked inside a field keeps its own
    -- fields above the outer ones; an error anywhere in the walk truncates
    -- them. One fault per table, so the walk (key order) and the probe
    -- (field order) report the same error; the next encode on the same
    -- handle must give the probe's bytes. NULL cdata (box.NULL) is absent.
    local fds = FIXTURES .. '/descriptors/proto2_basic.fds'
    local W = protolua.load_file(fds):message('proto2_basic.BenchPayload')
    local NULL = type(jit) == 'table' and require('ffi').cast('void *', 0) or nil
    local function all()
        return {
            id = 7, name = 'nm', timestamp = 123456789, score = 2.5, active = false, kind = 2,
            note = string.rep('n', 50), delta = -300, ratio = 0.5, big = 2 ^ 40, stamp64 = NULL or 99,
            blob = '\0\1', values = { 1, 300 }, codes = { 4, 5 }, tags = { 'a', 'bb' },
            -- Inner has 3 fields: after the first 1-field item the others walk.
            inner = { id = 1 }, items = { { id = 2 }, { id = 3, label = NULL }, { id = 4 } },
            meta = { source = 's', version = 4 },
        }
    end
    local faults = {
        { 'delta', 'x', 'field delta: expected integer, got string' },
        { 'items', { { id = 2 }, { id = 3 }, { id = 'x' } }, 'field items[3].id: expected integer, got string' },
        { 'items', { { id = 2 }, { id = 3 }, { label = 'l' } }, 'field items[3]: missing required field id' },
        { 'tags', { 'a', 5 }, 'field tags[2]: expected string, got number' },
        { 'zzz', 1, 'unknown field "zzz"' },
        { 'inner', { id = 1, nope = 2 }, 'field inner: unknown field "nope"' },
    }
    for _, f in ipairs(faults) do
        for seed = 1, 12 do
            local t = all()
            -- Drop some fields (a different count and key layout each time).
            local k = 0
            for _, name in ipairs({ 'timestamp', 'score', 'active', 'kind', 'note', 'ratio', 'big', 'blob', 'codes', 'meta' }) do
                k = k + 1
                if (k * seed) % 3 == 0 then t[name] = nil end
            end
            t[f[1]] = f[2]
            local P = protolua.load_file(fds):message('proto2_basic.BenchPayload')
            W:encode({ id = 2, name = 'y' })
            local ok, err = pcall(W.encode, W, t)
            local pok, perr = pcall(P.encode, P, t)
            T.eq(ok, false, f[3])
            T.eq(pok, false, f[3])
            T.eq(err, perr, f[3])
            T.raises(f[3], error, err)
            -- The same handle, walking again: right bytes.
            local good = all()
            good.kind = seed % 3
            W:encode({ id = 2, name = 'y' })
            local P2h = protolua.load_file(fds):message('proto2_basic.BenchPayload')
            T.eq(W:encode(good), P2h:encode(good), f[3] .. ' then a good table')
        end
    end
end)

T.test('regression: a file with syntax = "" loads as proto2; two nameless files are an error', function()
    -- fuzz/regressions/schema_load/empty_syntax_string: prost-reflect
    -- panicked on the empty syntax string.
    local S = protolua.load(unhex('0a026200'))
    T.eq(#S:messages(), 0)
    T.raises("protolua: load:", function() return protolua.load(unhex('0a0262000a00')) end)
    -- the last syntax wins; "editions" then "" is proto2
    local fds = unhex('0a1a0a07782e70726f746f22030a014d620865646974696f6e736200')
    T.eq(protolua.load(fds):message('M'):encode({}), '')
end)

T.test('regression: a map entry message without its value field is refused at load', function()
    -- fuzz/regressions/schema_load/map_entry_without_value: M.m is
    -- map<string, ?> whose entry M.MEntry has only `key`; Msg:fields()
    -- and decode indexed the missing value field.
    local f = assert(io.open(FIXTURES .. '/../fuzz/regressions/schema_load/map_entry_without_value', 'rb'))
    local fds = f:read('*a')
    f:close()
    T.raises('protolua: load: M.m: map entry M.MEntry has 1 fields, not key = 1 and value = 2', function()
        return protolua.load(fds)
    end)
end)

T.test('decode: varints at the end of the input, and runs of one field', function()
    local P = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
    -- age last: 2, 3 and 5 bytes with fewer than 10 bytes left (varint_long)
    T.eq(P:decode('\16\172\2'), { age = 300 })
    T.eq(P:decode('\16\255\255\1'), { age = 32767 })
    T.eq(P:decode('\16\255\255\255\255\7'), { age = 2147483647 })
    T.eq(P:decode('\16\255\127'), { age = 16383 })
    -- an unpacked run of lucky_numbers, with 2-byte values, then a packed run appends
    T.eq(P:decode('\40\1\40\172\2\40\3\42\2\4\5\10\1x'), { lucky_numbers = { 1, 300, 3, 4, 5 }, name = 'x' })
    -- runs of emails broken by another field continue the same array
    T.eq(P:decode('\26\1a\26\1b\10\1n\26\1c'), { emails = { 'a', 'b', 'c' }, name = 'n' })
end)

T.test('decode: unpacked runs of varints of every length (the run count skips them unread)', function()
    local P = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
    local enc = {
        [1] = '\1', [300] = '\172\2', [70000] = '\240\162\4', [2147483647] = '\255\255\255\255\7',
        [-70000] = '\144\221\251\255\255\255\255\255\255\1',
        [-1] = '\255\255\255\255\255\255\255\255\255\1',
        [-2147483648] = '\128\128\128\128\248\255\255\255\255\1',
    }
    local order = { 1, -70000, 300, -1, 70000, 2147483647, -2147483648, 1 }
    local function run(vals)
        local s = {}
        for i, v in ipairs(vals) do s[i] = '\40' .. enc[v] end
        return table.concat(s)
    end
    -- every prefix, so that the run's last values sit in the input's last 8 bytes
    for n = 1, #order do
        local vals = { (table.unpack or unpack)(order, 1, n) }
        T.eq(P:decode(run(vals)), { lucky_numbers = vals })
        T.eq(P:decode(run(vals) .. '\10\1x'), { lucky_numbers = vals, name = 'x' })
    end
    -- a run broken by another field and resumed appends
    T.eq(P:decode(run({ -1, 300 }) .. '\16\7' .. run({ -70000 })), { age = 7, lucky_numbers = { -1, 300, -70000 } })
    -- a run ending in a truncated or overlong varint: the element is named
    T.raises('field lucky_numbers[3]: truncated input', function()
        return P:decode(run({ -1, 300 }) .. '\40\255\255\255')
    end)
    T.raises('field lucky_numbers[2]: varint longer than 64 bits', function()
        return P:decode(run({ 70000 }) .. '\40' .. string.rep('\255', 10) .. '\1' .. run({ 1 }))
    end)
end)

T.test('decode: the first container of a frame, before and after unknown fields and sub-messages', function()
    -- The first array a frame creates lands in its container slot without
    -- a settop (src/binary/decode/containers.rs `switch_container`); unknown fields take the
    -- slots first. Each order must decode the same table and keep the
    -- unknown bytes.
    local P = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
    local unk = '\184\6\9' -- field 103, varint 9
    local em = '\26\1a\26\1b'
    local lu = '\40\1\42\2\2\3'
    local ad = '\34\5\10\3xyz'
    local want = { emails = { 'a', 'b' }, lucky_numbers = { 1, 2, 3 }, address = { street = 'xyz' } }
    for _, parts in ipairs({
        { em, lu, ad }, { lu, em, ad }, { ad, em, lu }, { unk, em, lu, ad }, { em, unk, lu, ad },
        { ad, lu, unk, em }, { em, lu, ad, unk },
    }) do
        local bin = table.concat(parts)
        local t = P:decode(bin)
        T.eq(t, want)
        T.eq(protolua.unknown(t), bin:find(unk, 1, true) and unk or nil)
        local s = P:decode(bin, { serialize = true })
        T.eq(getmetatable(s.emails).__serialize, 'seq')
        T.eq(getmetatable(s.lucky_numbers).__serialize, 'seq')
        T.eq(s.address.street, 'xyz')
    end
    -- the first container inside a sub-message, next to its parent's
    local C = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds')
    local B = 'proto2_basic.BenchPayload'
    local bin = C:encode(B, { id = 1, name = 'n', items = { { id = 2, deltas = { 1, -1 } }, { id = 3 } },
        inner = { id = 4, deltas = { 5 } }, values = { 7 } })
    T.eq(C:decode(B, bin).items, { { id = 2, deltas = { 1, -1 } }, { id = 3 } })
    T.eq(C:decode(B, bin).inner, { id = 4, deltas = { 5 } })
    T.eq(C:decode(B, bin).values, { 7 })
end)

T.test('decode: runs of strings with one- and two-byte lengths, cut anywhere', function()
    -- count_run's LEN loop reads a one-byte length inline and others
    -- through the varint scan; a run cut inside a length or a value must
    -- still decode up to it and report the same error.
    local P = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
    local long = string.rep('e', 200)
    local function email(s)
        local n = #s
        local len = n < 128 and string.char(n) or string.char(n % 128 + 128, math.floor(n / 128))
        return '\26' .. len .. s
    end
    local vals = { 'a', long, '', 'bc', long .. 'x', 'd' }
    local parts = {}
    for i, v in ipairs(vals) do parts[i] = email(v) end
    local bin = table.concat(parts)
    T.eq(P:decode(bin), { emails = vals })
    T.eq(P:decode(bin .. '\16\5'), { emails = vals, age = 5 })
    for cut = 1, #bin - 1 do
        local ok = pcall(P.decode, P, bin:sub(1, cut))
        local whole = false
        local at = 0
        for _, p in ipairs(parts) do
            at = at + #p
            if at == cut then whole = true end
        end
        T.eq(ok, whole, 'cut at ' .. cut)
    end
    T.raises('field emails[2]: length 200 exceeds the 199 bytes remaining',
        function() return P:decode(email('a') .. email(long):sub(1, -2)) end)
end)
