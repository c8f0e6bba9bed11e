-- protolua.load_proto / protolua.parse / schema:descriptor_set(): schemas
-- from .proto sources (no protoc) behave as protoc's descriptor sets of the
-- same files (descriptor equivalence is checked in tests/proto_front.rs).
-- Lua 5.1 compatible. Needs the globals set by harness.lua.

local P = FIXTURES .. '/proto/'
local SVC = P .. 'svc/'

-- The .proto files behind each descriptor set of the golden cases.
local sources_of = {
    ['hello.fds'] = { P .. 'hello.proto' },
    ['proto2_basic.fds'] = { P .. 'proto2_basic.proto' },
    ['alltypes3.fds'] = { P .. 'alltypes3.proto' },
}
local loaded = {}
local function from_proto(fds)
    if not loaded[fds] then loaded[fds] = protolua.load_proto(sources_of[fds]) end
    return loaded[fds]
end

for _, c in ipairs(dofile(FIXTURES .. '/golden/cases.lua')) do
    if not c.later then
        T.test('load_proto golden ' .. c.name, function()
            local M = from_proto(c.fds):message(c.type)
            local bin = T.readfile(FIXTURES .. '/golden/' .. c.name .. '.bin')
            local expected = dofile(FIXTURES .. '/golden/' .. c.name .. '.lua').value
            T.eq(M:decode(bin), expected, c.name .. ' decode')
            local enc = M:encode(expected)
            if c.nan then
                T.eq(#enc, #bin, c.name .. ' encoded length')
            elseif enc ~= bin then
                error(c.name .. ': encode is not byte-identical to protoc\n' .. T.bytes_diff(enc, bin), 0)
            end
        end)
    end
end

-- Names outside descriptor.proto (protoc's is its own release's, the
-- built-in one prost-types'), sorted.
local function sorted(t)
    local out = {}
    for _, n in ipairs(t) do
        if not n:find('^google%.protobuf%.') or n == 'google.protobuf.Timestamp' or n == 'google.protobuf.Empty' then
            out[#out + 1] = n
        end
    end
    table.sort(out)
    return out
end

T.test('load_proto: same messages and enums as protoc; descriptor_set reloads', function()
    local s = protolua.load_proto({ SVC .. 'greeter.proto', SVC .. 'legacy.proto' })
    local p = protolua.load_file(FIXTURES .. '/descriptors/svc.fds')
    T.eq(sorted(s:messages()), sorted(p:messages()), 'messages')
    T.eq(sorted(s:enums()), sorted(p:enums()), 'enums')
    local again = protolua.load(s:descriptor_set())
    T.eq(sorted(again:messages()), sorted(p:messages()), 'reloaded messages')
    local fds = T.readfile(FIXTURES .. '/descriptors/svc.fds')
    T.eq(p:descriptor_set(), fds, 'load keeps the given bytes')
    -- Same bytes for a message using a public import, a well-known type
    -- with no file on disk, maps, optional and a oneof.
    local v = {
        name = 'x', mood = 'MOOD_SAD', times = 0, counts = { a = 1 },
        at = { seconds = 5, nanos = 1 }, page = { size = 2, token = 't' }, user = 'u',
        codes = { 1, 2 }, inner = { kind = 'KIND_X' },
    }
    local M, N = s:message('svc.greet.v1.HelloRequest'), p:message('svc.greet.v1.HelloRequest')
    T.eq(M:encode(v), N:encode(v), 'HelloRequest bytes')
    T.eq(M:decode(N:encode(v)), v, 'HelloRequest round trip')
    -- proto2: group, extensions, declared defaults.
    local L1 = s:message('svc.legacy.Old')
    local o = { id = 1, meta = { a = 2 }, ['[svc.legacy.note]'] = 'n', ['[svc.legacy.marks]'] = { 3, 4 } }
    T.eq(L1:encode(o), p:message('svc.legacy.Old'):encode(o), 'Old bytes')
    local d = protolua.load_proto(SVC .. 'legacy.proto', { defaults = 'values' }):decode('svc.legacy.Old', T.varint(8) .. T.varint(1))
    local e = protolua.load_file(FIXTURES .. '/descriptors/svc.fds', { defaults = 'values' }):decode('svc.legacy.Old', T.varint(8) .. T.varint(1))
    T.eq(d, e, 'declared defaults')
end)

T.test('load_proto: import paths, default directory, schema options', function()
    local s = protolua.load_proto('greeter.proto', { import_paths = { SVC }, enums = 'number' })
    local M = s:message('svc.greet.v1.HelloRequest')
    T.eq(M:decode(M:encode({ mood = 'MOOD_HAPPY' })), { mood = 1 }, 'enums = number applies')
    -- No import_paths: the file's own directory.
    T.eq(#protolua.load_proto(SVC .. 'greeter.proto'):messages() > 0, true, 'default import path')
end)

T.test('parse: sources, well-known types built in, public imports', function()
    local s = protolua.parse([[
        syntax = "proto3";
        package p;
        import "google/protobuf/timestamp.proto";
        import "dep.proto";
        message A { google.protobuf.Timestamp at = 1; q.B b = 2; q.C c = 3; }
    ]], {
        name = 'a.proto',
        sources = {
            ['dep.proto'] = 'syntax = "proto3"; package q; import public "c.proto"; message B { int32 x = 1; }',
            ['c.proto'] = 'syntax = "proto3"; package q; message C { string y = 1; }',
        },
    })
    local A = s:message('p.A')
    local v = { at = { seconds = 1 }, b = { x = 2 }, c = { y = 'z' } }
    T.eq(A:decode(A:encode(v)), v, 'round trip')
    local names = {}
    for _, f in ipairs(protolua.load(s:descriptor_set()):messages()) do names[f] = true end
    T.eq(names['google.protobuf.Timestamp'], true, 'imports in the set')
    -- A source without a name is input.proto.
    T.eq(protolua.parse('syntax = "proto3"; message M {}'):messages(), { 'M' }, 'unnamed')
end)

T.test('load_proto/parse errors: file:line:col, nothing loaded', function()
    T.raises('protolua: parse: x.proto:2:', protolua.parse, 'syntax = "proto3";\nmessage M { int32 a = ; }', { name = 'x.proto' })
    T.raises('x.proto:1:32: name \'Nope\' is not defined', protolua.parse, 'syntax = "proto3"; message M { Nope a = 1; }', { name = 'x.proto' })
    T.raises("import 'missing.proto' not found", protolua.parse, 'syntax = "proto3"; import "missing.proto";', { name = 'x.proto' })
    local err = T.raises('searched:', protolua.load_proto, SVC .. 'greeter.proto', { import_paths = { P .. 'nowhere', SVC .. 'google' } })
    T.eq(err:find('nowhere', 1, true) ~= nil, true, 'names the paths searched: ' .. err)
    T.eq(err:find('built-in google/protobuf', 1, true) ~= nil, true, 'names the built-in files: ' .. err)
    T.raises("x.proto:1:52: name 'p.M' is defined twice", protolua.parse, 'syntax = "proto3"; package p; message M {} message M {}', { name = 'x.proto' })
    T.raises('x.proto:1:', protolua.parse, 'syntax = "proto3"; message M { int32 a = 1 [no_such_option = true]; }', { name = 'x.proto' })
    local ed = T.raises('x.proto:2:1: editions', protolua.parse, '// c\nedition = "2023";\nmessage M {}', { name = 'x.proto' })
    T.eq(ed:find('protoc', 1, true) ~= nil and ed:find('protolua.load', 1, true) ~= nil, true, 'points to protoc + load: ' .. ed)
    -- An error at the end of the file still has its position.
    T.raises('x.proto:2:11: expected string terminator', protolua.parse, 'syntax = "proto3";\npackage "p', { name = 'x.proto' })
    T.raises('protolua: load_proto: cannot read', protolua.load_proto, P .. 'no_such.proto')
    T.raises('load_proto: expected a path', protolua.load_proto, 42)
    T.raises('load_proto: paths[2] must be a string', protolua.load_proto, { 'a.proto', 1 })
    T.raises('load_proto: import_paths must be an array', protolua.load_proto, 'a.proto', { import_paths = 'x' })
    T.raises('parse: sources must map', protolua.parse, '', { sources = { 1 } })
    T.raises('parse: name must be a string', protolua.parse, '', { name = 1 })
    T.raises('parse: max_depth must be', protolua.parse, 'syntax = "proto3";', { max_depth = 0 })
    T.raises('not valid UTF-8', protolua.parse, 'syntax = "proto3"; // \255')
end)
