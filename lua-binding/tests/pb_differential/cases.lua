-- Differential cases for protolua.pb against lua-protobuf itself: run with
-- `pb`/`protoc` being either implementation, print one line per result;
-- pb_differential.sh runs both and compares the lines. Lua 5.1-5.4.
--   lua cases.lua protolua   (needs protolua.so on LUA_CPATH)
--   lua cases.lua lua-protobuf   (needs pb.so and protoc.lua on the paths)
local which = arg[1] or 'protolua'
local pb, protoc
if which == 'protolua' then
    pb, protoc = require('protolua.pb'), require('protolua.protoc')
else
    pb, protoc = require('pb'), require('protoc')
end

local function dump(v, seen)
    seen = seen or {}
    local t = type(v)
    if t == 'number' then
        local mt = math.type and math.type(v) or 'number'
        if v == math.floor(v) and v > -1e15 and v < 1e15 then return string.format('%s:%d', mt, v) end
        return string.format('%s:%.17g', mt, v)
    elseif t == 'string' then
        return string.format('%q', v)
    elseif t ~= 'table' then
        return tostring(v)
    end
    if seen[v] then return '<cycle>' end
    seen[v] = true
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return dump(a) < dump(b) end)
    local out = {}
    for _, k in ipairs(keys) do out[#out + 1] = dump(k) .. '=' .. dump(rawget(v, k), seen) end
    seen[v] = nil
    return '{' .. table.concat(out, ',') .. '}'
end

local n = 0
local P = protoc.new()
P.proto3_optional = true
local function out(name, ...)
    local parts = {}
    for i = 1, select('#', ...) do parts[i] = dump((select(i, ...))) end
    n = n + 1
    print(name .. ': ' .. table.concat(parts, ' '))
end
local function unpack_(t, i) return (table.unpack or unpack)(t, i, t.n or #t) end
local function try(name, f, ...)
    local r = { pcall(f, ...) }
    if r[1] then out(name, unpack_(r, 2)) else out(name, 'ERROR') end
end

assert(P:load([[
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
  sint64 s64 = 12;
  fixed64 f64 = 13;
  double d = 14;
  float f = 15;
  bool ok = 16;
  bytes raw = 17;
  map<int32, Phone> book = 18;
  repeated Kind kinds = 19;
}
]], 'person.proto'))
assert(P:load([[
syntax = "proto2";
message Old {
  optional int32 a = 1 [default = 777];
  optional bool b = 2 [default = true];
  optional string s = 3 [default = "foo"];
  optional float f = 4 [default = 0.125];
  optional int32 plain = 5;
  repeated int32 list = 6;
  optional Color color = 7 [default = GREEN];
  optional int64 i64 = 8 [default = -5];
  optional uint64 u64 = 9;
  optional Old child = 10;
  optional string nodef = 11;
  oneof o { int32 x = 12; }
}
enum Color { RED = 1; GREEN = 2; BLUE = 3; }
]], 'old.proto'))

assert(P:load([[
syntax = "proto3";
package more;
import "old.proto";
message Wide {
  map<int64, string> by_id = 1;
  repeated sint64 deltas = 2;
  repeated uint32 flags = 3 [packed = false];
  double inf = 4;
  Old legacy = 5;
  map<uint64, Inner> inner = 6;
  message Inner { repeated fixed64 xs = 1; Color c = 2; }
  optional int32 maybe = 7;
}
]], 'more.proto'))

assert(P:load([[
syntax = "proto2";
package ex;
message Base { optional int32 a = 1; extensions 100 to 200; }
extend Base { optional string note = 100; repeated int64 big = 102; }
message Holder { extend Base { optional Base inner_ext = 101; } }
]], 'ex.proto'))

pb.option('encode_order')
local msgs = {
    { 'demo.Person', { name = 'Ann', id = 150, emails = { 'a', 'b' }, phones = { { number = '1', kind = 'WORK' } } } },
    { 'demo.Person', { big = -1, ubig = 1, s64 = -3, f64 = 5, d = 1.5, f = 0.25, ok = true, raw = '\0\1' } },
    { 'demo.Person', { big = 9007199254740993, ubig = 4294967296, nums = { 1, 2, 300 }, kinds = { 'HOME', 2 } } },
    { 'demo.Person', { mail = 'm', main = { number = '', kind = 'MOBILE' } } },
    { 'demo.Person', { pager = 0, id = 0, name = '' } },
    { 'demo.Person', { scores = { z = 1 }, book = { [3] = { number = 'x' } } } },
    { 'demo.Person', { big = -2147483648, ubig = 4294967295 } },
    { 'demo.Person', { big = 2147483648 } },
    { 'Old', { a = 0, plain = 0, list = { 1 }, color = 'RED', child = { a = 1 } } },
    { 'Old', { i64 = -1, u64 = 0, x = 0, nodef = '' } },
    { 'Old', {} },
    { 'more.Wide', { by_id = { [-7] = 'neg', [9007199254740993] = 'big' }, deltas = { -1, 1, -9007199254740993 } } },
    { 'more.Wide', { flags = { 0, 4294967295 }, inf = 1 / 0, legacy = { a = 1, color = 'BLUE' } } },
    { 'more.Wide', { inner = { ['#4294967297'] = { xs = { 1, 4294967296 }, c = 'RED' } }, maybe = 0 } },
    { 'more.Wide', { inf = -0.0 } },
    { 'ex.Base', { a = 1, note = 'n', big = { 1, 9007199254740993 }, inner_ext = { note = 'deep' } } },
}
local encoded = {}
for i, m in ipairs(msgs) do
    local ok, bytes = pcall(pb.encode, m[1], m[2])
    encoded[i] = ok and bytes or ''
    encoded[i] = ok and bytes or ''
end
pb.option('no_encode_order')
-- lua-protobuf's encode_order is its own field order, not numbers: the
-- bytes are compared by length and by what they decode to.
pb.option('no_default_values')
for i, m in ipairs(msgs) do
    out('encode ' .. i, #encoded[i], pb.decode(m[1], encoded[i]))
end
pb.option('auto_default_values')

local modes = {
    {}, { 'enum_as_value' }, { 'int64_as_string' }, { 'int64_as_hexstring' }, { 'no_default_values' },
    { 'use_default_values' }, { 'use_default_metatable' }, { 'no_default_values', 'decode_default_array' },
    { 'decode_default_message' }, { 'use_default_values', 'decode_default_message' },
}
local resets = { 'enum_as_name', 'int64_as_number', 'auto_default_values', 'no_decode_default_array',
    'no_decode_default_message' }
for mi, mode in ipairs(modes) do
    for _, o in ipairs(mode) do pb.option(o) end
    local default_messages = mode[1] == 'decode_default_message' or mode[2] == 'decode_default_message'
    for i, m in ipairs(msgs) do
        -- lua-protobuf recurses without end filling a recursive type's
        -- default sub-messages (Old.child is an Old; Wide holds an Old; Base's
        -- extension inner_ext is a Base): skipped.
        if not (default_messages and (m[1] == 'Old' or m[1] == 'more.Wide' or m[1] == 'ex.Base')) then
            local ok, t = pcall(pb.decode, m[1], encoded[i])
            local name = 'decode ' .. table.concat(mode, '+') .. ' ' .. i
            if ok then
                local mt = getmetatable(t)
                out(name, t, mt and rawget(mt, '__index') and 'meta' or 'nometa')
            else
                out(name, 'ERROR')
            end
        end
    end
    for _, o in ipairs(resets) do pb.option(o) end
end

-- Reflection.
for _, name in ipairs({ 'demo.Person', '.demo.Phone', 'demo.Kind', '.demo.Person.ScoresEntry', 'Old', 'Color', 'nope' }) do
    out('type ' .. name, pb.type(name))
end
for _, tname in ipairs({ 'demo.Person', 'Old', 'more.Wide', 'ex.Base' }) do
    local fields = {}
    for name, number, ftype in pb.fields(tname) do fields[#fields + 1] = name .. '/' .. number .. '/' .. ftype end
    table.sort(fields)
    out('fields ' .. tname, fields)
end
for _, f in ipairs({ 'name', 'phones', 'scores', 'big', 'pager', 'nums', 'kinds', 'main', 'book', 12, 'nope' }) do
    out('field Person ' .. tostring(f), pb.field('demo.Person', f))
end
out('field Wide maybe', pb.field('more.Wide', 'maybe'))
out('field Base inner_ext', pb.field('ex.Base', 'inner_ext'))
out('field Wide by_id', pb.field('more.Wide', 'by_id'))
out('defaults Wide', pb.defaults('more.Wide'))
for _, f in ipairs({ 'a', 'b', 's', 'f', 'plain', 'list', 'color', 'i64', 'x' }) do
    out('field Old ' .. f, pb.field('Old', f))
end
out('enum', pb.enum('demo.Kind', 'WORK'), pb.enum('demo.Kind', 1), pb.enum('.Color', 'BLUE'), pb.enum('Color', 9))
out('defaults Old', pb.defaults('Old'))
out('defaults Person', pb.defaults('demo.Person'))
out('defaults Phone', pb.defaults('.demo.Phone'))

-- Hooks.
pb.hook('demo.Phone', function(t) t.hooked = true end)
pb.hook('demo.Kind', function(v) return 'k:' .. tostring(v) end)
pb.option('enable_hooks')
out('hooks decode', pb.decode('demo.Person', encoded[1]))
pb.option('disable_hooks')
pb.hook('demo.Phone', nil)
pb.hook('demo.Kind', nil)
pb.encode_hook('demo.Phone', function(t) return { number = 'E' .. tostring(t.number) } end)
pb.option('enable_enchooks')
pb.option('encode_order')
out('hooks encode', pb.decode('demo.Person', pb.encode('demo.Person', { id = 1, phones = { { number = '1' } }, main = { number = '2' } })))
pb.option('disable_enchooks')
out('int64 hash strings', pb.tohex(pb.encode('demo.Person', { big = '#-2', ubig = '#0xFF' })))
local t = pb.decode('demo.Person', encoded[4])
out('oneof key round trip', pb.decode('demo.Person', pb.encode('demo.Person', t)))
pb.option('no_encode_order')

-- encode_default_values: one field per table (lua-protobuf writes fields
-- in table order), zero values and not.
pb.option('encode_default_values')
for _, f in ipairs({ { name = '' }, { id = 0 }, { big = 0 }, { ubig = 0 }, { s64 = 0 }, { f64 = 0 }, { d = 0 },
    { f = 0 }, { ok = false }, { raw = '' }, { main = { number = '' } }, { nums = { 0 } }, { pager = 0 }, { id = 5 },
    { phones = { { kind = 'MOBILE' } } } }) do
    local k = next(f)
    out('encode_default_values ' .. k, pb.tohex(pb.encode('demo.Person', f)))
end
out('encode_default_values Old', pb.tohex(pb.encode('Old', { plain = 0 })))
pb.option('no_encode_default_values')
out('no_encode_default_values', pb.tohex(pb.encode('demo.Person', { id = 0, name = '', main = { number = '' } })))

-- protoc's unknown_type: what the parsed descriptor says of each reference.
local function refs(info)
    local r = {}
    for _, m in ipairs(info.message_type or {}) do
        for _, f in ipairs(m.field or {}) do r[#r + 1] = m.name .. '.' .. f.name .. '=' .. tostring(f.type) .. ':' .. tostring(f.type_name) end
    end
    return r
end
local UT = [[
syntax = "proto3";
package ut;
message M { Ext.Thing t = 1; repeated Other o = 2; int32 n = 3; }
]]
for _, h in ipairs({ 'true', 'pattern', 'function', 'nil' }) do
    local q = protoc.new()
    if h == 'true' then q.unknown_type = true
    elseif h == 'pattern' then q.unknown_type = '^%u'
    elseif h == 'function' then q.unknown_type = function(_, name) return '.far.' .. name end
    end
    local ok, info = pcall(q.parse, q, UT, 'ut_' .. h .. '.proto')
    out('unknown_type ' .. h, ok and refs(info) or 'ERROR')
end
local qp = protoc.new()
qp.unknown_type = '^Ext'
out('unknown_type pattern miss', (pcall(qp.parse, qp, UT, 'ut_miss.proto')))

-- Hex and load results.
out('tohex', pb.tohex('\0\1\171\255'), pb.fromhex('00 01 ab FF'), pb.fromhex('0aB'))
out('load garbage', (select(1, pb.load('\10\5ab'))), (select(2, pb.load('\10\5ab'))))
out('decode into', pb.decode('demo.Person', encoded[1], { extra = 1 }))
try('decode truncated', pb.decode, 'demo.Person', '\10\5ab')
out('cases', n)
