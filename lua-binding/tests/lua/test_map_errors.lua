-- Map errors name the entry by its key (issue 31): `field counts["a"]: ...`
-- for string keys (quoted, escaped, long ones cut), `field names[7]: ...`
-- for integer keys, `field flags[true]: ...` for bool keys; for bad keys
-- and bad values, on encode (every encode strategy) and decode (every
-- decode strategy). A decode failure before the entry's key was read
-- (value first on the wire, or no key) keeps `[<entry>]`.
-- Lua 5.1 compatible. Needs the globals set by harness.lua.

-- Tarantool 2.6's LuaJIT crashes assembling a trace of this file's loops
-- (SIGSEGV in asm_tvptr, with protolua's earlier releases too): interpret
-- them there.
if box and jit then jit.off(true, true) end

local varint, tag = T.varint, T.tag

local SRC3 = [[
syntax = "proto3";
package mk;
message Inner { int32 x = 1; string s = 2; }
message Wrap { map<string, Inner> m = 1; repeated Wrap list = 2; map<string, Wrap> sub = 3; }
message M {
  map<string, int32> counts = 1;
  map<int32, string> names = 2;
  map<bool, int32> flags = 3;
  map<string, Inner> m = 4;
  map<int64, int64> big = 5;
  map<uint64, Inner> u = 6;
  map<sint32, int32> z = 7;
  map<fixed32, int32> f = 8;
  Wrap w = 9;
  map<sfixed64, int32> sf = 10;
  map<uint32, int32> u32 = 11;
}
]]

local SRC2 = [[
syntax = "proto2";
package mk2;
enum E { A = 0; B = 1; }
message Req { required int32 id = 1; }
message P { map<string, E> e = 1; map<string, Req> r = 2; }
]]

local fds3 = protolua.parse(SRC3, { name = 'mk.proto' }):descriptor_set()
local fds2 = protolua.parse(SRC2, { name = 'mk2.proto' }):descriptor_set()

local names = { 'root_fast', 'root_ctors', 'message_ctors', 'tree_ctors', 'tree_program', 'bulk_arrays',
    'fetch', 'walk' }
local settings = { {} }
for _, n in ipairs(names) do settings[#settings + 1] = { [n] = false } end
local all_off = {}
for _, n in ipairs(names) do all_off[n] = false end
settings[#settings + 1] = all_off

-- Call fn(M, P, label) with the two schemas loaded under each strategy
-- setting, twice each (the memos of a second call take other paths).
local function each_setting(fn)
    for i, s in ipairs(settings) do
        local M = protolua.load(fds3, { strategies = s }):message('mk.M')
        local P = protolua.load(fds2, { strategies = s }):message('mk2.P')
        for pass = 1, 2 do fn(M, P, 'setting ' .. i .. ' pass ' .. pass) end
    end
end

-- `needle` must be in the error, and the error must not also name the
-- entry as `<entry>` unless the needle does.
local function raises(needle, fn)
    local err = T.raises(needle, fn)
    if not needle:find('<entry>', 1, true) and err:find('<entry>', 1, true) then
        error('error names <entry>: ' .. err, 2)
    end
    return err
end

local function len(s) return varint(#s) .. s end
-- One map entry of field `n`: the given fields' bytes, in wire order.
local function entry(n, ...) return tag(n, 2) .. len(table.concat({ ... })) end
local function str(n, s) return tag(n, 2) .. len(s) end
local function int(n, v) return tag(n, 0) .. varint(v) end
-- A negative int32/int64 varint: ten bytes, two's complement.
local function neg(n, v) return tag(n, 0) .. string.char(256 + v) .. string.rep('\255', 8) .. '\1' end
local TRUNC = tag(2, 0) .. '\128' -- a value varint cut short

local long_key = string.rep('k', 60)
local utf8_long = string.rep('a', 47) .. '\195\169' .. 'zz' -- 'é' at bytes 48..49

---------------------------------------------------------------------------
-- encode

T.test('map errors encode: bad values name the key', function()
    each_setting(function(M, P)
        raises('encode mk.M: field counts["a"]: expected integer, got boolean',
            function() return M:encode({ counts = { a = true } }) end)
        raises('field names[7]: expected string, got number', function() return M:encode({ names = { [7] = 5 } }) end)
        raises('field names[-3]: string is not valid UTF-8',
            function() return M:encode({ names = { [-3] = '\255' } }) end)
        raises('field flags[true]: expected integer, got string',
            function() return M:encode({ flags = { [true] = 'x' } }) end)
        raises('field flags[false]: number 0.5 has no integer representation',
            function() return M:encode({ flags = { [false] = 0.5 } }) end)
        raises('field big[-5]: expected integer or decimal string, got boolean',
            function() return M:encode({ big = { [-5] = true } }) end)
        raises('field big["12"]: string "x" is not a decimal integer',
            function() return M:encode({ big = { ['12'] = 'x' } }) end)
        raises('field f[4294967295]: value 4294967296 is out of range for int32',
            function() return M:encode({ f = { [4294967295] = 2 ^ 32 } }) end)
        raises('field z[-2]: expected integer, got table', function() return M:encode({ z = { [-2] = {} } }) end)
        -- One bad entry among good ones, in whichever order `next` gives.
        raises('field counts["bad"]: expected integer, got string',
            function() return M:encode({ counts = { a = 1, b = 2, bad = 'x', c = 3 } }) end)
    end)
end)

T.test('map errors encode: bad keys are named as given', function()
    each_setting(function(M)
        raises('field counts[true]: expected string key, got boolean',
            function() return M:encode({ counts = { [true] = 1 } }) end)
        raises('field counts[5]: expected string key, got number', function() return M:encode({ counts = { [5] = 1 } }) end)
        raises('field counts[<table>]: expected string key, got table',
            function() return M:encode({ counts = { [{}] = 1 } }) end)
        raises('field names[1.5]: number 1.5 has no integer representation',
            function() return M:encode({ names = { [1.5] = 'x' } }) end)
        raises('field names["x"]: expected integer key, got string',
            function() return M:encode({ names = { x = 'y' } }) end)
        raises('field names[false]: expected integer key, got boolean',
            function() return M:encode({ names = { [false] = 'y' } }) end)
        raises('field names[4294967296]: value 4294967296 is out of range for int32',
            function() return M:encode({ names = { [2 ^ 32] = 'y' } }) end)
        raises('field names[1e20]: value 1e20 is out of range for int32',
            function() return M:encode({ names = { [1e20] = 'y' } }) end)
        raises('field u32[-1]: value -1 is out of range for uint32',
            function() return M:encode({ u32 = { [-1] = 1 } }) end)
        raises('field big[true]: expected integer or decimal string key, got boolean',
            function() return M:encode({ big = { [true] = 1 } }) end)
        raises('field big["1x"]: string "1x" is not a decimal integer',
            function() return M:encode({ big = { ['1x'] = 1 } }) end)
        raises('field flags[1]: expected boolean key, got number',
            function() return M:encode({ flags = { [1] = 1 } }) end)
        raises('field flags["true"]: expected boolean key, got string',
            function() return M:encode({ flags = { ['true'] = 1 } }) end)
        raises('field counts["\\xff"]: string is not valid UTF-8',
            function() return M:encode({ counts = { ['\255'] = 1 } }) end)
        raises('field counts[<function>]: expected string key, got function',
            function() return M:encode({ counts = { [print] = 1 } }) end)
    end)
end)

T.test('map errors encode: string keys are escaped and cut', function()
    local M = protolua.load(fds3):message('mk.M')
    raises('field counts["a\\"b\\\\c\\nd\\te\\x00f\\x7f"]: expected integer, got boolean',
        function() return M:encode({ counts = { ['a"b\\c\nd\te\0f\127'] = true } }) end)
    raises('field counts["' .. string.rep('k', 48) .. '…"]: expected integer, got boolean',
        function() return M:encode({ counts = { [long_key] = true } }) end)
    -- Cut before a character that does not fit whole.
    raises('field counts["' .. string.rep('a', 47) .. '…"]: expected',
        function() return M:encode({ counts = { [utf8_long] = true } }) end)
    raises('field counts["é"]: expected', function() return M:encode({ counts = { ['é'] = true } }) end)
    raises('field counts[""]: expected', function() return M:encode({ counts = { [''] = true } }) end)
end)

T.test('map errors encode: nested paths', function()
    each_setting(function(M)
        raises('field m["k"].x: expected integer, got string',
            function() return M:encode({ m = { k = { x = 'no' } } }) end)
        raises('field m["k"]: expected table, got number', function() return M:encode({ m = { k = 5 } }) end)
        raises('field m["k"]: unknown field "y"', function() return M:encode({ m = { k = { y = 1 } } }) end)
        raises('field w.m["k"].s: expected string, got number',
            function() return M:encode({ w = { m = { k = { s = 5 } } } }) end)
        raises('field w.list[2].m["q"].x: expected integer, got boolean',
            function() return M:encode({ w = { list = { {}, { m = { q = { x = true } } } } } }) end)
        raises('field w.list[1].list[1].m["deep"].s: expected string, got table',
            function() return M:encode({ w = { list = { { list = { { m = { deep = { s = {} } } } } } } } }) end)
        raises('field u[7].x: expected integer, got string', function() return M:encode({ u = { [7] = { x = 'q' } } }) end)
        -- The map field itself not a table: no entry named.
        local err = raises('field counts: expected table, got number', function() return M:encode({ counts = 5 }) end)
        assert(not err:find('counts[', 1, true), err)
    end)
end)

T.test('map errors encode: proto2 enums and required fields in values', function()
    each_setting(function(_, P)
        raises('encode mk2.P: field e["k"]: "C" is not a value of enum mk2.E',
            function() return P:encode({ e = { k = 'C' } }) end)
        raises('field e["n"]: expected', function() return P:encode({ e = { n = true } }) end)
        raises('field r["k"]: missing required field id of mk2.Req', function() return P:encode({ r = { k = {} } }) end)
    end)
end)

if T.is_luajit then
    T.test('map errors encode: 64-bit cdata keys', function()
        local ffi = require('ffi')
        each_setting(function(M)
            raises('field big[-7]: expected integer or decimal string, got boolean',
                function() return M:encode({ big = { [ffi.new('int64_t', -7)] = true } }) end)
            raises('field u[18446744073709551615].x: expected integer, got string',
                function() return M:encode({ u = { [ffi.new('uint64_t', 0) - 1] = { x = 'q' } } }) end)
            raises('field counts[1]: expected string key, got cdata',
                function() return M:encode({ counts = { [ffi.new('int64_t', 1)] = 1 } }) end)
        end)
    end)
end

if math.type then
    T.test('map errors encode: Lua 5.3+ integer keys', function()
        local M = protolua.load(fds3):message('mk.M')
        raises('field big[9223372036854775807]: expected integer or decimal string, got boolean',
            function() return M:encode({ big = { [math.maxinteger] = true } }) end)
        raises('field big[-9223372036854775808]: expected', function()
            return M:encode({ big = { [math.mininteger] = true } })
        end)
        raises('field names[2]: expected string', function() return M:encode({ names = { [2.0] = true } }) end)
    end)
end

---------------------------------------------------------------------------
-- decode

T.test('map errors decode: bad values name the key', function()
    each_setting(function(M)
        -- counts["a"] = <truncated varint>
        raises('decode mk.M: field counts["a"]: ',
            function() return M:decode(entry(1, str(1, 'a'), TRUNC)) end)
        -- names[7] = "\xff"
        raises('field names[7]: invalid UTF-8 at byte 6',
            function() return M:decode(entry(2, int(1, 7), str(2, '\255'))) end)
        raises('field names[-1]: invalid UTF-8',
            function() return M:decode(entry(2, neg(1, -1), str(2, '\255'))) end)
        raises('field flags[true]: ', function() return M:decode(entry(3, int(1, 1), TRUNC)) end)
        raises('field flags[false]: ', function() return M:decode(entry(3, int(1, 0), TRUNC)) end)
        raises('field big[-5]: ', function() return M:decode(entry(5, neg(1, -5), TRUNC)) end)
        raises('field z[-3]: ', function() return M:decode(entry(7, int(1, 5), TRUNC)) end)
        raises('field f[4294967295]: ',
            function() return M:decode(entry(8, tag(1, 5) .. '\255\255\255\255', TRUNC)) end)
        raises('field sf[-2]: ',
            function() return M:decode(entry(10, tag(1, 1) .. '\254\255\255\255\255\255\255\255', TRUNC)) end)
        raises('field u32[4294967295]: ', function() return M:decode(entry(11, int(1, 4294967295), TRUNC)) end)
        -- A good entry first, then the bad one.
        raises('field counts["b"]: ', function()
            return M:decode(entry(1, str(1, 'a'), int(2, 1)) .. entry(1, str(1, 'b'), TRUNC))
        end)
        -- The last key before the failure (a repeated key: last one wins).
        raises('field counts["second"]: ',
            function() return M:decode(entry(1, str(1, 'first'), str(1, 'second'), TRUNC)) end)
        -- Unknown fields in the entry before the failure are skipped.
        raises('field counts["a"]: ',
            function() return M:decode(entry(1, int(3, 9), str(1, 'a'), int(4, 1), TRUNC)) end)
    end)
end)

T.test('map errors decode: nested paths', function()
    each_setting(function(M)
        local bad_inner = str(2, '\255') -- Inner.s not UTF-8
        raises('field m["k"].s: invalid UTF-8',
            function() return M:decode(entry(4, str(1, 'k'), str(2, bad_inner))) end)
        raises('field u[18446744073709551615].s: invalid UTF-8',
            function() return M:decode(entry(6, tag(1, 0) .. string.rep('\255', 9) .. '\1', str(2, bad_inner))) end)
        local w = entry(1, str(1, 'key'), str(2, bad_inner))
        raises('field w.m["key"].s: invalid UTF-8', function() return M:decode(str(9, w)) end)
        local list2 = str(2, '') .. str(2, entry(1, str(1, 'x'), str(2, int(1, 1) .. bad_inner)))
        raises('field w.list[2].m["x"].s: invalid UTF-8', function() return M:decode(str(9, list2)) end)
        -- A nested map inside a map value's message: both keys named.
        local inner_map = str(2, entry(1, str(1, 'in'), str(2, bad_inner)))
        raises('field w.list[1].m["in"].s', function() return M:decode(str(9, inner_map)) end)
    end)
end)

T.test('map errors decode: a bad key is named by its bytes', function()
    each_setting(function(M)
        raises('field counts["\\xff"]: invalid UTF-8 at byte 4',
            function() return M:decode(entry(1, str(1, '\255'), int(2, 1))) end)
        raises('field counts["ok\\xc3"]: invalid UTF-8',
            function() return M:decode(entry(1, str(1, 'ok\195'))) end)
        -- Its first key read, the second one bad.
        raises('field counts["a\\xff"]: invalid UTF-8',
            function() return M:decode(entry(1, str(1, 'a'), str(1, 'a\255'))) end)
    end)
end)

T.test('map errors decode: no key read yet keeps <entry>', function()
    each_setting(function(M)
        local bad_inner = str(2, '\255')
        -- The value before the key on the wire.
        raises('field m[<entry>].s: invalid UTF-8',
            function() return M:decode(entry(4, str(2, bad_inner), str(1, 'k'))) end)
        -- No key at all.
        raises('field names[<entry>]: invalid UTF-8',
            function() return M:decode(entry(2, str(2, '\255'))) end)
        raises('field counts[<entry>]: ', function() return M:decode(entry(1, TRUNC)) end)
        -- A key cut short by the entry's end.
        raises('field counts[<entry>]: ', function() return M:decode(entry(1, tag(1, 2) .. '\5ab')) end)
        -- The entry itself cut short: no key read.
        raises('field counts[<entry>]: ', function() return M:decode(tag(1, 2) .. '\9' .. str(1, 'a')) end)
    end)
end)

T.test('map errors decode: string keys are escaped and cut', function()
    local M = protolua.load(fds3):message('mk.M')
    raises('field counts["a\\"b\\\\c\\nd\\x01"]: ',
        function() return M:decode(entry(1, str(1, 'a"b\\c\nd\1'), TRUNC)) end)
    raises('field counts["' .. string.rep('k', 48) .. '…"]: ',
        function() return M:decode(entry(1, str(1, long_key), TRUNC)) end)
    raises('field counts["' .. string.rep('a', 47) .. '…"]: ',
        function() return M:decode(entry(1, str(1, utf8_long), TRUNC)) end)
    -- Many long keys on one path: the innermost ones are named in full,
    -- the outer ones cut shorter once the error's room for keys is used.
    local v = entry(1, str(1, long_key), str(2, str(2, '\255')))
    for _ = 1, 8 do v = entry(3, str(1, long_key), str(2, v)) end
    local err = raises('.m["' .. string.rep('k', 48) .. '…"].s: invalid UTF-8',
        function() return M:decode(str(9, v)) end)
    assert(err:find('field w.sub["', 1, true), err)
    assert(#err < 800, err)
end)

T.test('map errors decode: proto2 required fields in values', function()
    each_setting(function(_, P)
        raises('decode mk2.P: field r["k"]: missing required field id of mk2.Req',
            function() return P:decode(entry(2, str(1, 'k'), str(2, ''))) end)
        -- The value before the key: the check runs at the value's end.
        raises('field r[<entry>]: missing required field id of mk2.Req',
            function() return P:decode(entry(2, str(2, ''), str(1, 'k'))) end)
        -- A closed enum's unknown value is no error: the entry goes to the unknown fields.
        local t = P:decode(entry(1, str(1, 'k'), int(2, 7)))
        T.eq(t.e, nil)
    end)
end)

T.test('map errors: the schema still works after them', function()
    local M = protolua.load(fds3):message('mk.M')
    for _ = 1, 200 do
        pcall(M.encode, M, { counts = { [string.rep('x', 100)] = true } })
        pcall(M.decode, M, entry(1, str(1, long_key), TRUNC))
    end
    local t = { counts = { a = 1 }, names = { [7] = 'x' }, m = { k = { x = 1 } } }
    T.eq(M:decode(M:encode(t)), t)
end)
