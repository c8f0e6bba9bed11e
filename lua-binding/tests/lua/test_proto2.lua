-- proto2 semantics and unknown fields: required checks, closed enums,
-- unknown-field retention and the `unknown` / `required` load options.
-- Lua 5.1 compatible. Needs the globals set by harness.lua.

local P2 = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds')
local P2lax = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds', { required = false })
local H = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')
local Hdrop = protolua.load_file(FIXTURES .. '/descriptors/hello.fds', { unknown = 'drop' })

local unhex = T.unhex

local function hx(s) return (s:gsub('%s', '')) end

local function keys_of(t)
    local ks = {}
    for k in pairs(t) do ks[#ks + 1] = tostring(k) end
    table.sort(ks)
    return table.concat(ks, ',')
end

T.test('proto2 required: encode names every missing field', function()
    T.raises('encode proto2_basic.BenchPayload: missing required fields id, name of proto2_basic.BenchPayload',
        function() return P2:encode('proto2_basic.BenchPayload', {}) end)
    T.raises('missing required field name of proto2_basic.BenchPayload',
        function() return P2:encode('proto2_basic.BenchPayload', { id = 1 }) end)
    T.raises('field inner: missing required field id of proto2_basic.Inner',
        function() return P2:encode('proto2_basic.BenchPayload', { id = 1, name = 'x', inner = {} }) end)
    T.raises('field items[2]: missing required field id',
        function() return P2:encode('proto2_basic.BenchPayload', { id = 1, name = 'x', items = { { id = 1 }, {} } }) end)
    T.eq(T.hex(P2:encode('proto2_basic.BenchPayload', { id = 1, name = 'x' })), '0801120178')
end)

T.test('proto2 required: decode names the missing field and its byte offset', function()
    T.raises('decode proto2_basic.BenchPayload: missing required field name of proto2_basic.BenchPayload at byte 2',
        function() return P2:decode('proto2_basic.BenchPayload', unhex('0801')) end)
    -- inner = {} (field 16, empty): Inner.id missing, at the inner message's end.
    T.raises('field inner: missing required field id of proto2_basic.Inner at byte 8',
        function() return P2:decode('proto2_basic.BenchPayload', unhex('08011201788201 00')) end)
end)

T.test('proto2 required: the option turns the check off', function()
    T.eq(P2lax:encode('proto2_basic.BenchPayload', {}), '')
    T.eq(P2lax:decode('proto2_basic.BenchPayload', ''), {})
    T.eq(P2lax:decode('proto2_basic.BenchPayload', unhex('820100')), { inner = {} })
    T.raises('required must be a boolean', function() return protolua.load('', { required = 1 }) end)
end)

T.test('proto2 closed enum: an unknown value goes to the unknown fields', function()
    local bin = unhex('0801 120178 3007') -- id, name, kind = 7 (not a Kind)
    local t = P2:decode('proto2_basic.BenchPayload', bin)
    T.eq(t, { id = 1, name = 'x' })
    T.eq(T.hex(protolua.unknown(t)), '3007')
    T.eq(P2:encode('proto2_basic.BenchPayload', t), bin)
    -- a known value decodes to its name
    T.eq(P2:decode('proto2_basic.BenchPayload', unhex('08011201783002')).kind, 'KIND_BETA')
end)

T.test('unknown fields: kept out of pairs(), returned by protolua.unknown, written back', function()
    -- name = "a" (1), field 99 varint 5, age = 2 (2), field 100 LEN "zz"
    local bin = unhex('0a0161 98060 5 1002 a2060 27a7a')
    local t = H:decode('hello.Person', bin)
    T.eq(keys_of(t), 'age,name')
    T.eq(T.hex(protolua.unknown(t)), hx('9806 05 a206 02 7a7a'))
    -- C++ order: known fields in number order, then unknown fields as read.
    T.eq(T.hex(H:encode('hello.Person', t)), hx('0a0161 1002 9806 05 a206 02 7a7a'))
end)

T.test('unknown fields: nested messages, groups and fixed widths keep their own bytes', function()
    -- address (4) = { street = "s", field 9 fixed32 }, field 7 group { field 1 varint 1 }, field 8 fixed64
    local addr = unhex('0a0173 4d01020304')
    local bin = unhex('22') .. string.char(#addr) .. addr .. unhex('3b 0801 3c 41 0102030405060708')
    local t = H:decode('hello.Person', bin)
    T.eq(t, { address = { street = 's' } })
    T.eq(T.hex(protolua.unknown(t.address)), '4d01020304')
    T.eq(T.hex(protolua.unknown(t)), '3b08013c410102030405060708')
    T.eq(H:encode('hello.Person', t), bin)
end)

T.test('unknown fields: a field with the wrong wire type is kept as unknown', function()
    local bin = unhex('1501000000') -- age (2) as fixed32
    local t = H:decode('hello.Person', bin)
    T.eq(t, {})
    T.eq(H:encode('hello.Person', t), bin)
end)

T.test('unknown fields: unknown = "drop" discards them', function()
    local bin = unhex('0a0161 980605')
    local t = Hdrop:decode('hello.Person', bin)
    T.eq(t, { name = 'a' })
    T.eq(protolua.unknown(t), nil)
    T.eq(T.hex(Hdrop:encode('hello.Person', t)), '0a0161')
    T.raises("unknown must be 'keep' or 'drop'", function() return protolua.load('', { unknown = 'yes' }) end)
end)

T.test('unknown fields: protolua.unknown of a table without any is nil', function()
    T.eq(protolua.unknown({}), nil)
    T.eq(protolua.unknown(H:decode('hello.Person', unhex('0a0161'))), nil)
    T.eq(protolua.unknown('x'), nil)
end)

T.test('unknown fields: merged singular message occurrences concatenate', function()
    -- address twice, each with an unknown field
    local bin = unhex('2202 2801 2202 3002')
    local t = H:decode('hello.Person', bin)
    T.eq(T.hex(protolua.unknown(t.address)), '28013002')
    T.eq(T.hex(H:encode('hello.Person', t)), '220428013002')
end)

T.test('unknown fields: a failing decode repeated leaves no entries behind', function()
    collectgarbage('collect')
    local before = collectgarbage('count')
    for _ = 1, 2000 do
        pcall(H.decode, H, 'hello.Person', unhex('980605 0a05'))
    end
    collectgarbage('collect')
    T.eq(collectgarbage('count') - before < 16, true)
end)

T.test('extensions: read and written under [full.name], in field-number order', function()
    local t = { id = 1, name = 'x', ['[proto2_basic.ext_comment]'] = 'c', ['[proto2_basic.ext_ids]'] = { 5, 6 } }
    local bin = P2:encode('proto2_basic.BenchPayload', t)
    T.eq(T.hex(bin), hx('0801 120178 a20601 63 a80605 a80606'))
    T.eq(P2:decode('proto2_basic.BenchPayload', bin), t)
    T.eq(protolua.unknown(P2:decode('proto2_basic.BenchPayload', bin)), nil)
    T.raises('field [proto2_basic.ext_inner]: missing required field id',
        function() return P2:encode('proto2_basic.BenchPayload', { id = 1, name = 'x', ['[proto2_basic.ext_inner]'] = {} }) end)
end)

T.test("load options for protolua.pb: ext_keys = 'short', hash_int64", function()
    local S = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds', { ext_keys = 'short', hash_int64 = true })
    local B = S:message('proto2_basic.BenchPayload')
    local t = { id = 1, name = 'x', ext_comment = 'c', ext_ids = { 5, 6 } }
    local bin = B:encode(t)
    -- The same bytes as under the full keys; decode gives the short keys.
    T.eq(T.hex(bin), hx('0801 120178 a20601 63 a80605 a80606'))
    T.eq(B:decode(bin), t)
    T.raises('unknown field "[proto2_basic.ext_comment]"',
        function() return B:encode({ id = 1, name = 'x', ['[proto2_basic.ext_comment]'] = 'c' }) end)
    -- The text format and JSON still name extensions in full.
    assert(B:binary_to_text(bin):find('[proto2_basic.ext_comment]', 1, true))
    assert(B:encode_json(t):find('[proto2_basic.ext_comment]', 1, true))
    -- '#' strings (lua-protobuf's 64-bit form), decimal or hex, range-checked.
    T.eq(B:encode({ id = 1, name = 'x', big = '#0x20000000000001' }), B:encode({ id = 1, name = 'x', big = '9007199254740993' }))
    T.eq(B:encode({ id = 1, name = 'x', timestamp = '#-16' }), B:encode({ id = 1, name = 'x', timestamp = -16 }))
    T.raises('out of range', function() return B:encode({ id = 1, name = 'x', big = '#-1' }) end)
    T.raises('#12x', function() return B:encode({ id = 1, name = 'x', big = '#12x' }) end)
    -- Off by default.
    T.raises('#5', function() return P2:encode('proto2_basic.BenchPayload', { id = 1, name = 'x', big = '#5' }) end)
    T.raises('unknown field "ext_comment"',
        function() return P2:encode('proto2_basic.BenchPayload', { id = 1, name = 'x', ext_comment = 'c' }) end)
    T.raises('ext_keys', function() return protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds', { ext_keys = 'x' }) end)
end)

T.test('editions 2023: features resolve packing, delimited encoding, presence', function()
    local C = protolua.load_file(FIXTURES .. '/descriptors/conformance.fds')
    local M = 'protobuf_test_messages.editions.TestAllTypesEdition2023'
    -- repeated_int32 (31): packed by the 2023 default; unpacked_int32 (89): EXPANDED
    T.eq(T.hex(C:encode(M, { repeated_int32 = { 1, 2 } })), 'fa01020102')
    T.eq(T.hex(C:encode(M, { unpacked_int32 = { 1, 2 } })), 'c80501c80502')
    -- explicit presence: a zero is written
    T.eq(T.hex(C:encode(M, { optional_int32 = 0 })), '0800')
    -- file-level DELIMITED: delimited_field (202) is a group; field 18 is overridden to LEN
    T.eq(T.hex(C:encode(M, { delimited_field = { group_int32 = 1 } })), hx('d30c d00c01 d40c'))
    T.eq(T.hex(C:encode(M, { optional_nested_message = { a = 1 } })), '9201020801')
    T.eq(C:decode(M, unhex('d30cd00c01d40c')), { delimited_field = { group_int32 = 1 } })
    -- proto3-style editions file: implicit presence drops zeros
    local P3E = 'protobuf_test_messages.editions.proto3.TestAllTypesProto3'
    T.eq(C:encode(P3E, { optional_int32 = 0 }), '')
end)

T.test('load: an unknown syntax is an error, not a crash', function()
    local fds = unhex('0a190a07782e70726f746f12017822030a014d620670726f746f34') -- syntax = "proto4"
    T.raises('protolua: load: unknown syntax "proto4"', function() return protolua.load(fds) end)
end)

T.test('proto2 closed enum in a map value: the whole entry goes to the unknown fields', function()
    local C = protolua.load_file(FIXTURES .. '/descriptors/conformance.fds')
    local M = 'protobuf_test_messages.proto2.TestAllTypesProto2'
    local bin = unhex('9803b960 ca04050a016b1063') -- field 19 = 12345, map_string_nested_enum { k = 99 }
    local t = C:decode(M, bin)
    T.eq(t.map_string_nested_enum, nil) -- absent, not an empty map
    T.eq(T.hex(protolua.unknown(t)), hx('9803b960 ca04050a016b1063'))
    T.eq(C:encode(M, t), bin)
    -- a known value is stored
    T.eq(C:decode(M, unhex('ca04050a016b1001')).map_string_nested_enum, { k = 'BAR' })
end)

T.test('proto2: an unpacked run under a two-byte tag, broken by a tag sharing its first byte', function()
    -- items (17) is tagged 8a 01; unknown field 33 (LEN) is tagged 8a 02:
    -- the run count compares both bytes (src/binary/decode/scan.rs `count_run`).
    local B = 'proto2_basic.BenchPayload'
    local function item(id) return '\138\1' .. string.char(2) .. '\8' .. string.char(id) end
    local head = '\8\1\18\1x'
    local t = P2lax:decode(B, head .. item(1) .. item(2) .. '\138\2\1z' .. item(3) .. item(4))
    T.eq(t.items, { { id = 1 }, { id = 2 }, { id = 3 }, { id = 4 } })
    T.eq(P2lax:encode(B, t), head .. item(1) .. item(2) .. item(3) .. item(4) .. '\138\2\1z')
    -- the run at the very end, then cut inside its last tag and value
    T.eq(P2lax:decode(B, head .. item(5) .. item(6)).items, { { id = 5 }, { id = 6 } })
    T.raises('truncated input', function() return P2lax:decode(B, head .. item(5) .. '\138') end)
    T.raises('items[2]: length 2 exceeds the 1 bytes remaining',
        function() return P2lax:decode(B, head .. item(5) .. '\138\1\2\8') end)
end)

T.test('proto2: the one-byte-tag fast path (plain and required fields) keeps every check', function()
    -- binary/decode/walk.rs looks one-byte tags up in MessagePlan::plain_by_tag; a
    -- required field found there must still count as seen, a wrong wire
    -- type must still go to the unknown fields, and the last value wins.
    local B = 'proto2_basic.BenchPayload'
    T.eq(P2:decode(B, '\8\1\18\1x'), { id = 1, name = 'x' })
    T.eq(P2:decode(B, '\18\1x\8\1\8\2\18\1y'), { id = 2, name = 'y' }, 'last wins')
    T.raises('missing required field name of proto2_basic.BenchPayload', function() return P2:decode(B, '\8\1\8\2') end)
    T.raises('missing required field id of proto2_basic.BenchPayload', function() return P2:decode(B, '\18\1x') end)
    -- id (1) as LEN and name (2) as varint: unknown fields, so both missing
    T.raises('missing required fields id, name', function() return P2:decode(B, '\10\1x\16\1') end)
    local t = P2lax:decode(B, '\10\1x\16\1\40\1')
    T.eq(t, { active = true })
    T.eq(T.hex(protolua.unknown(t)), '0a01781001')
    -- required inside a repeated occurrence of a singular sub-message (a merge)
    local inner1, inner2 = '\8\7', '\18\1l'
    T.eq(P2:decode(B, '\8\1\18\1x\130\1\2' .. inner1 .. '\130\1\3' .. inner2).inner, { id = 7, label = 'l' })
    T.raises('missing required field id of proto2_basic.Inner',
        function() return P2:decode(B, '\8\1\18\1x\130\1\3' .. inner2) end)
    -- proto3: a plain string with the wrong wire type is unknown
    local P = H:message('hello.Person')
    local u = P:decode('\8\5\16\30')
    T.eq(u, { age = 30 })
    T.eq(T.hex(protolua.unknown(u)), '0805')
end)
