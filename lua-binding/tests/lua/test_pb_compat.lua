-- protolua.pb / protolua.protoc: lua-protobuf's API (docs/PB_COMPAT.md),
-- checked against lua-protobuf's documented behaviour (its README and
-- test.lua) and protobuf's wire format. Lua 5.1 compatible. Runs in its
-- own pb state and restores the options it changes.

local pb = require('protolua.pb')
local protoc = require('protolua.protoc')
local has_int = math.type ~= nil

local PERSON = [[
syntax = "proto3";
package demo;
message Phone { string number = 1; Kind kind = 2; }
enum Kind { MOBILE = 0; HOME = 1; WORK = 2; }
message Person {
  string name = 1;
  int32 id = 2;
  repeated string emails = 3;
  repeated Phone phones = 4;
  map<string, int32> scores = 5;
  int64 big = 6;
  uint64 ubig = 7;
  oneof contact { string mail = 8; int32 pager = 9; }
  Phone main = 10;
  repeated int32 nums = 11;
}
]]

local P2 = [[
syntax = "proto2";
message Old {
  optional int32 a = 1 [default = 777];
  optional bool b = 2 [default = true];
  optional string s = 3 [default = "foo"];
  optional float f = 4 [default = 0.125];
  optional int32 plain = 5;
  repeated int32 list = 6;
  optional Color color = 7 [default = GREEN];
}
enum Color { RED = 1; GREEN = 2; BLUE = 3; }
]]

-- Each test runs in a fresh pb state with lua-protobuf's default options.
local function fresh(fn)
    return function()
        local old = pb.state(nil)
        protoc.reload()
        local ok, err = pcall(fn)
        for _, o in ipairs({ 'enum_as_name', 'int64_as_number', 'auto_default_values', 'disable_hooks',
            'disable_enchooks', 'no_decode_default_array', 'no_decode_default_message', 'strict',
            'no_encode_default_values' }) do
            pb.option(o)
        end
        pb.state(old)
        if not ok then error(err, 0) end
    end
end

local function load_person()
    local p = protoc.new()
    assert(p:load(PERSON, 'person.proto'))
end

T.test('pb: require from the same library', function()
    T.eq(type(pb.encode), 'function')
    T.eq(type(protoc.new), 'function')
    T.eq(require('protolua.pb'), pb)
end)

T.test('pb: encode/decode proto3, names with or without the dot', fresh(function()
    load_person()
    local msg = { name = 'Ann', id = 150, emails = { 'a@x' }, phones = { { number = '1', kind = 'WORK' } } }
    local bytes = pb.encode('demo.Person', msg)
    -- 0a 03 'Ann' | 10 96 01 | 1a 03 'a@x' | 22 05 (0a 01 '1' 10 02)
    T.eq(T.hex(bytes), '0a03416e6e109601' .. '1a0361407822050a01311002')
    T.eq(pb.encode('.demo.Person', msg), bytes)
    local t = pb.decode('.demo.Person', bytes)
    T.eq(t.name, 'Ann')
    T.eq(t.id, 150)
    T.eq(t.phones[1].kind, 'WORK')
    -- proto3 under auto_default_values: absent scalars get their zero,
    -- repeated fields and maps an empty table; sub-messages stay nil.
    T.eq(t.big, 0)
    T.eq(t.nums, {})
    T.eq(t.scores, {})
    T.eq(t.main, nil)
    T.eq(t.mail, nil)
    T.eq(t.phones[1].number, '1')
end))

T.test('pb: oneof name keys, as lua-protobuf sets them', fresh(function()
    load_person()
    local bytes = pb.encode('demo.Person', { pager = 0, phones = { { number = '1' } } })
    local t = pb.decode('demo.Person', bytes)
    T.eq(t.contact, 'pager')
    T.eq(t.pager, 0)
    -- The key is taken back by encode (not a field, not an error).
    T.eq(pb.encode('demo.Person', t), bytes)
    pb.option('no_default_values')
    T.eq(pb.decode('demo.Person', bytes), { contact = 'pager', pager = 0, phones = { { number = '1' } } })
    assert(protoc.new():load('syntax = "proto3"; message Opt { optional int32 maybe = 1; int32 plain = 2; }', 'opt.proto'))
    pb.option('auto_default_values')
    -- proto3 optional: a synthetic oneof, no default.
    T.eq(pb.decode('Opt', ''), { plain = 0 })
    T.eq(pb.decode('Opt', '\8\0'), { plain = 0, maybe = 0, _maybe = 'maybe' })
    T.eq({ pb.field('Opt', 'maybe') }, { 'maybe', 1, 'int32', nil, 'optional', '_maybe', 0 })
end))

T.test('pb: extensions are fields under their own name', fresh(function()
    assert(protoc.new():load([[
syntax = "proto2";
package ex;
message Base { optional int32 a = 1; extensions 100 to 200; }
extend Base { optional string note = 100; }
message Holder { extend Base { optional int32 inner_ext = 101; } }
]], 'ex.proto'))
    local bytes = pb.encode('ex.Base', { a = 1, note = 'n', inner_ext = 5 })
    T.eq(T.hex(bytes), '0801a206016ea80605')
    T.eq(pb.decode('ex.Base', bytes), { a = 1, note = 'n', inner_ext = 5 })
    T.eq({ pb.field('ex.Base', 'note') }, { 'note', 100, 'string', nil, 'optional' })
    T.eq(pb.field('ex.Base', 101), 'inner_ext')
    -- protolua's bracketed key is not a field here (lua-protobuf ignores it).
    T.eq(pcall(pb.encode, 'ex.Base', { ['[ex.note]'] = 'n' }), false)
    pb.option('lax')
    T.eq(pb.encode('ex.Base', { a = 1, ['[ex.note]'] = 'n' }), '\8\1')
    pb.option('strict')
    -- Two extensions of one message with the same name: both keep the
    -- bracketed key.
    assert(protoc.new():load([[
syntax = "proto2";
package dup;
message Base { extensions 100 to 200; }
extend Base { optional string same = 100; }
message In { extend Base { optional int32 same = 101; } }
]], 'dup.proto'))
    T.eq(pb.field('dup.Base', 'same'), nil)
    local b = pb.encode('dup.Base', { ['[dup.same]'] = 's', ['[dup.In.same]'] = 3 })
    T.eq(T.hex(b), 'a2060173a80603')
    T.eq(pb.decode('dup.Base', b), { ['[dup.same]'] = 's', ['[dup.In.same]'] = 3 })
end))

T.test('pb: encode_default_values writes the zeros a table holds', fresh(function()
    assert(protoc.new():load([[
syntax = "proto3";
enum E { ZERO = 0; ONE = 1; }
message Z {
  int32 i = 1; string s = 2; bool b = 3; double d = 4; E e = 5; float f = 6;
  sint64 z = 7; bytes y = 8; fixed32 x = 9; int64 big = 10;
  Z sub = 11; repeated int32 r = 12; map<int32, int32> m = 13;
  optional int32 o = 14; oneof k { int32 u = 15; }
}
]], 'zeros.proto'))
    local zeros = { i = 0, s = '', b = false, d = 0, e = 'ZERO', f = 0, z = 0, y = '', x = 0, big = 0 }
    T.eq(pb.encode('Z', zeros), '')
    pb.option('encode_default_values')
    -- lua-protobuf (pb.c lpbE_ignorezero): every proto3 singular scalar
    -- or enum present in the table, zero or not; absent ones still not.
    local all = '0800' .. '1200' .. '1800' .. '210000000000000000' .. '2800' .. '3500000000'
        .. '3800' .. '4200' .. '4d00000000' .. '5000'
    T.eq(T.hex(pb.encode('Z', zeros)), all)
    T.eq(T.hex(pb.encode('.Z', zeros)), all)
    T.eq(T.hex(pb.encode('Z', { i = 0 })), '0800')
    T.eq(pb.encode('Z', {}), '')
    -- Sub-messages too; proto3 optional and oneof members are written
    -- either way; repeated zeros always were.
    T.eq(T.hex(pb.encode('Z', { sub = { i = 0, s = '' } })), '5a0408001200')
    T.eq(T.hex(pb.encode('Z', { o = 0, u = 0, r = { 0 } })), '6201007000' .. '7800')
    T.eq(pb.decode('Z', pb.encode('Z', { m = { [0] = 0 } })).m, { [0] = 0 })
    local t = pb.decode('Z', pb.fromhex(all))
    T.eq(t.e, 'ZERO')
    T.eq(t.s, '')
    pb.option('no_encode_default_values')
    T.eq(pb.encode('Z', zeros), '')
    T.eq(T.hex(pb.encode('Z', { sub = { i = 0, s = '' } })), '5a00')
end))

T.test('pb: decode into a table fills no defaults', fresh(function()
    load_person()
    local into = pb.decode('demo.Person', '\16\1', {})
    T.eq(into, { id = 1 })
end))

T.test('pb: load returns true/false and a position', fresh(function()
    local set = protoc.new():compile(PERSON, 'person.proto')
    local ok, pos = pb.load(set)
    T.eq(ok, true)
    T.eq(pos, #set + 1)
    local bad, bpos = pb.load('\10\5ab')
    T.eq(bad, false)
    T.eq(type(bpos), 'number')
end))

T.test('pb: type, types, fields, field, enum', fresh(function()
    load_person()
    T.eq({ pb.type('demo.Person') }, { '.demo.Person', 'Person', 'message' })
    T.eq({ pb.type('.demo.Kind') }, { '.demo.Kind', 'Kind', 'enum' })
    T.eq({ pb.type('.demo.Person.ScoresEntry') }, { '.demo.Person.ScoresEntry', 'ScoresEntry', 'map' })
    T.eq(pb.type('demo.Nope'), nil)
    local seen = {}
    for name, basename, kind in pb.types() do seen[name] = kind end
    T.eq(seen['.demo.Person'], 'message')
    T.eq(seen['.google.protobuf.FileDescriptorSet'], 'message')
    T.eq({ pb.field('demo.Person', 'id') }, { 'id', 2, 'int32', nil, 'optional' })
    T.eq({ pb.field('demo.Person', 'phones') }, { 'phones', 4, '.demo.Phone', nil, 'repeated' })
    T.eq({ pb.field('demo.Person', 'nums') }, { 'nums', 11, 'int32', nil, 'packed' })
    T.eq({ pb.field('demo.Person', 'pager') }, { 'pager', 9, 'int32', nil, 'optional', 'contact', 0 })
    T.eq({ pb.field('demo.Person', 7) }, { 'ubig', 7, 'uint64', nil, 'optional' })
    local names = {}
    for name, number in pb.fields('demo.Person') do names[#names + 1] = name .. '=' .. number end
    T.eq(names[1], 'name=1')
    T.eq(#names, 11)
    T.eq(pb.enum('demo.Kind', 'WORK'), 2)
    T.eq(pb.enum('.demo.Kind', 1), 'HOME')
    T.eq(pb.enum('demo.Kind', 'NOPE'), nil)
    local ok, err = pcall(pb.encode, 'demo.Nope', {})
    T.eq(ok, false)
    assert(tostring(err):find("type 'demo.Nope' does not exists", 1, true), err)
    -- Names that are not strings, extra arguments, data that is not a
    -- string, right after a type the entry points remember.
    T.eq(pb.decode('demo.Person', pb.encode('demo.Person', { id = 1 })).id, 1)
    for _, bad in ipairs({ 1, true, {}, nil }) do
        T.eq(pcall(pb.encode, bad, {}), false)
        T.eq(pcall(pb.decode, bad, ''), false)
    end
    T.eq(pb.encode('demo.Person', { id = 1 }, nil), '\16\1')
    T.eq(pb.decode('demo.Person', nil).id, 0)
    T.eq(pcall(pb.encode, 'demo.Person', 5), false)
    T.eq(pcall(pb.decode, 'demo.Person', 5), false)
    -- A long name (not interned on 5.4) and one reached through another.
    local long = 'demo.' .. string.rep('L', 60)
    assert(protoc.new():load('syntax = "proto3"; package demo; message ' .. long:sub(6) .. ' { int32 v = 1; }', 'long.proto'))
    for _ = 1, 3 do
        T.eq(pb.decode(long, pb.encode(long, { v = 2 })).v, 2)
        T.eq(pb.decode('demo.Person', pb.encode('demo.Person', { id = 3 })).id, 3)
    end
end))

T.test('pb: proto2 defaults and the default-value options', fresh(function()
    assert(protoc.new():load(P2, 'old.proto'))
    -- auto: proto2 messages get no defaults.
    T.eq(pb.decode('Old', ''), {})
    T.eq(pb.defaults('Old').a, 777)
    T.eq(pb.defaults('.Old').s, 'foo')
    T.eq(pb.defaults('Old').color, 'GREEN')
    T.eq(pb.defaults('Old').plain, nil)
    pb.option('use_default_values')
    local t = pb.decode('Old', '')
    -- Declared defaults only: `plain` has none, `list` stays absent.
    T.eq(t, { a = 777, b = true, s = 'foo', f = 0.125, color = 'GREEN' })
    pb.option('use_default_metatable')
    t = pb.decode('Old', '\8\5')
    T.eq(rawget(t, 'a'), 5)
    T.eq(rawget(t, 's'), nil)
    T.eq(t.s, 'foo')
    T.eq(getmetatable(t) == pb.defaults('Old'), true)
    pb.option('no_default_values')
    pb.option('decode_default_array')
    T.eq(pb.decode('Old', ''), { list = {} })
    pb.option('enum_as_value')
    T.eq(pb.decode('Old', '\56\3').color, 3)
    T.eq(pb.defaults('Old').color, 'GREEN') -- cached before the option changed
end))

T.test('pb: decode_default_message and decode into a table', fresh(function()
    load_person()
    pb.option('decode_default_message')
    local t = pb.decode('demo.Person', '')
    T.eq(t.main, { number = '', kind = 'MOBILE' })
    pb.option('no_decode_default_message')
    local into = { keep = 1 }
    local r = pb.decode('demo.Person', '\10\1x', into)
    T.eq(r == into, true)
    T.eq(into.keep, 1)
    T.eq(into.name, 'x')
end))

T.test('pb: int64 modes', fresh(function()
    load_person()
    local big = pb.encode('demo.Person', { big = '9007199254740993', ubig = '18446744073709551615' })
    local small = pb.encode('demo.Person', { big = -5, ubig = 4294967295 })
    pb.option('int64_as_string')
    local t = pb.decode('demo.Person', big)
    T.eq(t.big, '#9007199254740993')
    T.eq(t.ubig, '#18446744073709551615')
    t = pb.decode('demo.Person', small)
    T.eq(t.big, -5)
    T.eq(t.ubig, 4294967295)
    if has_int then T.eq(math.type(t.big), 'integer') end
    pb.option('int64_as_hexstring')
    t = pb.decode('demo.Person', big)
    T.eq(t.big, '#0x20000000000001')
    T.eq(t.ubig, '#0xFFFFFFFFFFFFFFFF')
    -- '#' strings (decimal or hex) are taken back by encode.
    T.eq(pb.encode('demo.Person', t), big)
    T.eq(pb.encode('demo.Person', { big = '#9007199254740993', ubig = '#18446744073709551615' }), big)
    T.eq(pb.encode('demo.Person', { big = '#-0x10' }), pb.encode('demo.Person', { big = -16 }))
    pb.option('int64_as_number')
    -- ... whatever the int64 option.
    T.eq(pb.encode('demo.Person', { big = '#9007199254740993', ubig = '#0xFFFFFFFFFFFFFFFF' }), big)
    local ok, err = pcall(pb.encode, 'demo.Person', { big = '#zz' })
    T.eq(ok, false)
    assert(tostring(err):find('protolua: encode demo.Person: field big', 1, true), err)
    t = pb.decode('demo.Person', small)
    T.eq(t.big, -5)
    if has_int then T.eq(math.type(t.ubig), 'integer') end
end))

T.test('pb: enum_as_value and map values', fresh(function()
    load_person()
    local bytes = pb.encode('demo.Person', { phones = { { kind = 2 } }, scores = { a = 1 } })
    pb.option('enum_as_value')
    T.eq(pb.decode('demo.Person', bytes).phones[1].kind, 2)
    pb.option('enum_as_name')
    local t = pb.decode('demo.Person', bytes)
    T.eq(t.phones[1].kind, 'WORK')
    T.eq(t.scores, { a = 1 })
end))

T.test('pb: decode and encode hooks', fresh(function()
    load_person()
    local bytes = pb.encode('demo.Person', { name = 'n', phones = { { number = '7', kind = 'HOME' } } })
    local calls = 0
    T.eq(pb.hook('demo.Phone', function(t)
        calls = calls + 1
        t.seen = true
    end), nil)
    -- Hooks run only with enable_hooks.
    T.eq(pb.decode('demo.Person', bytes).phones[1].seen, nil)
    pb.option('enable_hooks')
    T.eq(pb.decode('demo.Person', bytes).phones[1].seen, true)
    T.eq(calls, 1)
    pb.hook('demo.Kind', function(v) return 'kind:' .. v end)
    pb.hook('.demo.Person', function(t) return { wrapped = t } end)
    local t = pb.decode('demo.Person', bytes)
    T.eq(t.wrapped.phones[1].kind, 'kind:HOME')
    T.eq(type(pb.hook('demo.Person', nil)), 'function')
    T.eq(pb.hook('demo.Person'), nil)
    pb.hook('demo.Phone', nil)
    pb.hook('demo.Kind', nil)
    pb.option('disable_hooks')

    pb.encode_hook('demo.Phone', function(t) return { number = t.n } end)
    pb.encode_hook('demo.Kind', function(v) if v == 'home' then return 'HOME' end end)
    local input = { name = 'n', phones = { { n = '7', kind = 'x' } } }
    pb.option('enable_enchooks')
    local out = pb.encode('demo.Person', input)
    T.eq(pb.decode('demo.Person', out).phones[1].number, '7')
    T.eq(input.phones[1].n, '7') -- the input is not changed
    pb.encode_hook('demo.Phone', nil)
    T.eq(pb.encode('demo.Person', { phones = { { kind = 'home' } } }),
        pb.encode('demo.Person', { phones = { { kind = 'HOME' } } }))

    -- Argument errors point at the caller's line, as lua-protobuf's do.
    local ok, err = pcall(function() pb.hook('demo.Nope', print) end)
    T.eq(ok, false)
    assert(tostring(err):find("^[^:]*test_pb_compat%.lua:%d+: bad argument #1 to 'hook' %(type 'demo.Nope' does not exists%)"), err)
    ok, err = pcall(function() pb.encode_hook('demo.Kind', 5) end)
    T.eq(ok, false)
    assert(tostring(err):find("^[^:]*test_pb_compat%.lua:%d+: bad argument #2 to 'encode_hook' %(function expected, got number%)"), err)
    -- An explicit nil clears the hook; no argument only reads it.
    local h = function() end
    T.eq(type(pb.encode_hook('demo.Kind', h)), 'function') -- the 'home' hook above
    T.eq(pb.encode_hook('demo.Kind'), h)
    T.eq(pb.encode_hook('demo.Kind', nil), h)
    T.eq(pb.encode_hook('demo.Kind', h), nil)
    T.eq(pb.encode_hook('demo.Kind'), h)
    T.eq(pb.encode_hook('demo.Kind', nil), h)
    T.eq(pb.encode_hook('demo.Kind'), nil)
end))

T.test('pb: strict by default, lax on request', fresh(function()
    load_person()
    local ok, err = pcall(pb.encode, 'demo.Person', { nope = 1 })
    T.eq(ok, false)
    assert(tostring(err):find('nope', 1, true), err)
    pcall(pb.option, 'lax')
    pb.option('lax')
    T.eq(pb.encode('demo.Person', { nope = 1, id = 1 }), '\16\1')
    pb.option('strict')
    T.eq(pcall(pb.option, 'no_such_option'), false)
end))

T.test('pb: states and clear', fresh(function()
    load_person()
    local s1 = pb.state()
    local old = pb.state(nil)
    T.eq(old, s1)
    T.eq(pb.type('demo.Person'), nil)
    pb.state(s1)
    T.eq(pb.type('demo.Person'), '.demo.Person')
    pb.clear('demo.Phone')
    T.eq(pb.type('demo.Phone'), nil)
    T.eq(pb.type('demo.Person'), '.demo.Person')
    pb.clear()
    T.eq(pb.type('demo.Person'), nil)
    T.eq(tostring(pb.state()):match('^pb.State') ~= nil, true)
end))

T.test('pb: loadfile, replacing a file, unresolved sets', fresh(function()
    T.eq(pb.loadfile(FIXTURES .. '/descriptors/hello.fds'), true)
    T.eq(pb.type('hello.Person'), '.hello.Person')
    T.eq(pb.decode('hello.Person', pb.encode('hello.Person', { name = 'x', age = 3 })).age, 3)
    local p = protoc.new()
    p:load('syntax = "proto3"; message R { int32 a = 1; }', 'r.proto')
    T.eq(pb.field('R', 'b'), nil)
    -- A file of the same name replaces the earlier one.
    p:load('syntax = "proto3"; message R { int32 a = 1; string b = 2; }', 'r.proto')
    T.eq(pb.field('R', 'b'), 'b')
    T.eq(pb.decode('R', pb.encode('R', { b = 'y' })).b, 'y')
    -- A set whose imports were never loaded is refused, with the reason.
    local q = protoc.new()
    q:load('syntax = "proto3"; package dep2; message D { int32 x = 1; }', 'dep2.proto')
    local lone = q:compile('syntax = "proto3"; import "dep2.proto"; message U2 { dep2.D d = 1; }', 'u2.proto')
    pb.clear()
    local ok, pos, err = pb.load(lone)
    T.eq(ok, false)
    T.eq(pos, #lone + 1)
    assert(tostring(err):find('dep2', 1, true), err)
    T.eq(pcall(pb.loadfile, FIXTURES .. '/nope.fds'), false)
end))

T.test('pb: defaults set and cleared, *array and *map metatables', fresh(function()
    assert(protoc.new():load(P2, 'old.proto'))
    local mine = { a = 1 }
    T.eq(pb.defaults('Old', mine).a, 777)
    T.eq(pb.defaults('Old') == mine, true)
    pb.option('use_default_metatable')
    T.eq(pb.decode('Old', '').a, 1)
    pb.defaults('Old', nil)
    T.eq(pb.decode('Old', '').a, 777)
    pb.option('no_default_values')
    local arr, map = { __name = 'array' }, { __name = 'map' }
    pb.defaults('*array', arr)
    T.eq(pb.defaults('*array') == arr, true)
    local t = pb.decode('Old', '\48\1\48\2')
    T.eq(getmetatable(t.list) == arr, true)
    pb.defaults('*array', nil)
    T.eq(getmetatable(pb.decode('Old', '\48\1').list) == arr, false)
    load_person()
    pb.defaults('*map', map)
    local p = pb.decode('demo.Person', pb.encode('demo.Person', { scores = { a = 1 } }))
    T.eq(getmetatable(p.scores) == map, true)
    pb.defaults('*map', nil)
end))

T.test('pb: lax accepts what lua-protobuf does not check', fresh(function()
    assert(protoc.new():load('syntax = "proto2"; message Req { required int32 id = 1; optional int32 n = 2; }', 'req.proto'))
    assert(protoc.new():load('syntax = "proto3"; message Txt { string s = 1; }', 'txt.proto'))
    local ok, err = pcall(pb.encode, 'Req', { n = 1 })
    T.eq(ok, false)
    assert(tostring(err):find('missing required field id', 1, true), err)
    T.eq(pcall(pb.decode, 'Req', '\16\1'), false)
    T.eq(pcall(pb.encode, 'Txt', { s = '\255' }), false)
    pb.option('lax')
    T.eq(pb.encode('Req', { n = 1 }), '\16\1')
    T.eq(pb.decode('Req', '\16\1'), { n = 1 })
    T.eq(pb.encode('Txt', { s = '\255' }), '\10\1\255')
    T.eq(pb.decode('Txt', '\10\1\255').s, '\255')
    pb.option('strict')
    T.eq(pcall(pb.encode, 'Req', { n = 1 }), false)
end))

T.test('pb: tohex and fromhex', function()
    T.eq(pb.tohex('\1\171\255'), '01 AB FF')
    T.eq(pb.tohex(''), '')
    T.eq(pb.fromhex('01 ab FF'), '\1\171\255')
    T.eq(pb.fromhex('0aB'), '\10')
end)

T.test('protoc: compile, parse, include_imports, paths, loadfile', fresh(function()
    local p = protoc.new()
    local dep = 'syntax = "proto3"; package dep; message D { int32 x = 1; }'
    p:load(dep, 'dep.proto')
    local src = 'syntax = "proto3"; import "dep.proto"; message U { dep.D d = 1; }'
    local one = p:compile(src, 'use.proto')
    local set = pb.decode('google.protobuf.FileDescriptorSet', one)
    T.eq(#set.file, 1)
    T.eq(set.file[1].name, 'use.proto')
    p.include_imports = true
    set = pb.decode('google.protobuf.FileDescriptorSet', p:compile(src, 'use.proto'))
    T.eq(#set.file, 2)
    local info = p:parse(src, 'use.proto')
    T.eq(info.name, 'use.proto')
    T.eq(info.message_type[1].field[1].type, 11)
    T.eq(info.message_type[1].field[1].type_name, '.dep.D')
    T.eq(p.loaded['use.proto'].name, 'use.proto')
    assert(p:load(src, 'use.proto'))
    T.eq(pb.decode('U', pb.encode('U', { d = { x = 3 } })).d.x, 3)

    local q = protoc.new()
    q.paths[#q.paths + 1] = FIXTURES .. '/proto'
    assert(q:loadfile('hello.proto'))
    T.eq(pb.type('hello.Person'), '.hello.Person')
    local ok, err = pcall(q.loadfile, q, 'missing.proto')
    T.eq(ok, false)
    assert(tostring(err):find('missing.proto', 1, true), err)
    ok = pcall(protoc.new().load, protoc.new(), 'message {')
    T.eq(ok, false)
end))

T.test('protoc: unknown_import', fresh(function()
    local p = protoc.new()
    local src = 'syntax = "proto3"; import "gone.proto"; message G { int32 a = 1; }'
    T.eq(pcall(p.load, p, src, 'g.proto'), false)
    p.unknown_import = true
    assert(p:load(src, 'g.proto'))
    local q = protoc.new()
    q.unknown_import = function(self, name)
        T.eq(name, 'gone.proto')
        return 'syntax = "proto3"; message Gone { int32 z = 1; }'
    end
    assert(q:load('syntax = "proto3"; import "gone.proto"; message H { Gone g = 1; }', 'h.proto'))
    T.eq(pb.decode('H', pb.encode('H', { g = { z = 2 } })).g.z, 2)
end))

T.test('protoc: unknown_type', fresh(function()
    local src = [[
syntax = "proto3";
package app;
message M {
  Ext.Thing t = 1;
  repeated Other o = 2;
  map<string, Other> m = 3;
  Kind k = 4;
}
service S { rpc Get(Req) returns (M); }
]]
    local p = protoc.new()
    T.eq(pcall(p.parse, p, src, 'u.proto'), false)
    -- true: each unknown name is a message of that name from the root.
    p.unknown_type = true
    local info = p:parse(src, 'u.proto')
    local f = info.message_type[1].field
    T.eq({ f[1].type, f[1].type_name }, { 11, '.Ext.Thing' })
    T.eq({ f[2].type, f[2].type_name }, { 11, '.Other' })
    T.eq({ f[4].type, f[4].type_name }, { 11, '.Kind' })
    T.eq(info.service[1].method[1].input_type, '.Req')
    -- The stand-ins are not imports of the file, as with lua-protobuf.
    T.eq(info.dependency or {}, {})
    -- A pattern: only matching names.
    local q = protoc.new()
    q.unknown_type = '^Ext%.'
    local ok, err = pcall(q.parse, q, src, 'u.proto')
    T.eq(ok, false)
    assert(tostring(err):find("'Other'", 1, true), err)
    -- A function: its name (with or without the dot) and kind; nil refuses.
    local asked = {}
    local r = protoc.new()
    r.unknown_type = function(self, name)
        T.eq(self, r)
        asked[#asked + 1] = name
        if name == 'Kind' then return 'ext.Kind', 'enum' end
        if name == 'Nope' then return nil end
        return '.ext.' .. name:gsub('%.', '_')
    end
    info = r:parse(src, 'u.proto')
    f = info.message_type[1].field
    T.eq({ f[1].type, f[1].type_name }, { 11, '.ext.Ext_Thing' })
    T.eq({ f[4].type, f[4].type_name }, { 14, '.ext.Kind' })
    T.eq(info.message_type[1].nested_type[1].field[2].type_name, '.ext.Other')
    table.sort(asked)
    T.eq(asked, { 'Ext.Thing', 'Kind', 'Other', 'Other', 'Req' })
    ok, err = pcall(r.parse, r, 'syntax = "proto3"; message N { Nope n = 1; }', 'n.proto')
    T.eq(ok, false)
    assert(tostring(err):find("'Nope' is not defined", 1, true), err)
    -- A full name is never asked about, as with lua-protobuf.
    ok = pcall(r.parse, r, 'syntax = "proto3"; message F { .gone.X x = 1; }', 'f.proto')
    T.eq(ok, false)
    -- A bad answer is an error, not a loop.
    local b = protoc.new()
    b.unknown_type = function() return 'not a name!' end
    ok, err = pcall(b.parse, b, src, 'u.proto')
    T.eq(ok, false)
    assert(tostring(err):find('not a type name', 1, true), err)
    b.unknown_type = function() return 'M' end
    T.eq(b:parse('syntax = "proto3"; message M { Self s = 1; }', 's.proto').message_type[1].field[1].type_name, '.M')
    -- Loaded: the stand-ins are empty messages (an enum: one zero value),
    -- so the fields encode and decode.
    assert(r:load(src, 'u.proto'))
    local bytes = pb.encode('app.M', { t = {}, o = { {}, {} }, k = 0 })
    T.eq(T.hex(bytes), '0a00' .. '1200' .. '1200')
    T.eq(pb.decode('app.M', bytes).o, { {}, {} })
    -- An extension of an unknown message: the stand-in takes any.
    local e = protoc.new()
    e.unknown_type = true
    assert(e:load('syntax = "proto2"; message Holder { extend Nest { optional string ext_name = 100; } optional int32 id = 1; }', 'ext.proto'))
    T.eq(pb.type('Holder'), '.Holder')
    T.eq(pb.decode('Nest', pb.encode('Nest', { ext_name = 'x' })).ext_name, 'x')
end))

T.test('pb: the migration program runs unchanged', function()
    local saved_pb, saved_protoc = package.loaded.pb, package.loaded.protoc
    local old = pb.state(nil)
    protoc.reload()
    package.loaded.pb, package.loaded.protoc = pb, protoc
    local dir = debug.getinfo(1, 'S').source:match('^@(.*/)') or ''
    local path = FIXTURES .. '/../lua-binding/tests/lua/pb_migration.lua'
    if dir ~= '' then path = dir .. 'pb_migration.lua' end
    local ok, err = pcall(dofile, path)
    package.loaded.pb, package.loaded.protoc = saved_pb, saved_protoc
    for _, o in ipairs({ 'enum_as_name', 'int64_as_number', 'auto_default_values', 'disable_hooks',
        'disable_enchooks' }) do
        pb.option(o)
    end
    pb.state(old)
    if not ok then error(err, 0) end
    T.eq(err, 'migration ok')
end)
