-- codec_decode: byte 0 picks the message type (bits 0-1) and the options
-- (bits 2-7), the rest is decoded. Either decode raises a "protolua:" error,
-- or it gives a table that
--   * re-encodes without error (with the same options),
--   * decodes back from that encoding to an equal table (NaN = NaN, -0.0 ~=
--     +0.0, int64 cdata by value, unknown-field bytes compared too),
--   * and re-encodes once more to the identical bytes (the encoding is a
--     fixed point; skipped when a map has 64-bit cdata keys, which Lua
--     hashes by identity, so duplicate keys on the wire survive as several
--     entries in undefined order: docs/LUA_API.md).

local C = require('fuzzcommon')

local INT64 = { 'auto', 'string', 'cdata', 'auto' }

-- Options from the 6 high bits of byte 0. (int64 = 'number' is left out: it
-- rounds above 2^53 by design, so the table need not re-encode.)
local function options(bits)
    local o = {}
    if bits % 2 == 1 then o.enums = 'number' end
    o.int64 = INT64[math.floor(bits / 2) % 4 + 1]
    if math.floor(bits / 8) % 2 == 1 then o.empty = true end
    local mode = math.floor(bits / 16) % 4
    if mode == 1 then
        o.defaults = 'values'
    elseif mode == 2 then
        o.defaults = 'metatable'
        o.serialize = true
    elseif mode == 3 then
        o.unknown = 'drop'
        o.required = false
        o.utf8 = false
        o.max_depth = 8
    end
    return o
end

-- The option tables, built once (64 of them).
local OPTS = {}
for bits = 0, 63 do OPTS[bits] = options(bits) end

local function body(data)
    local b0 = data:byte(1) or 0
    local target = C.targets[b0 % 4 + 1]
    local msg = target.msg
    local opts = OPTS[math.floor(b0 / 4)]
    local input = data:sub(2)
    local ctx = function() return target.name .. ' opts ' .. C.describe_opts(opts) .. ' input ' .. C.hex(input) end

    local ok, t = C.call('decode', msg.decode, msg, input, opts)
    if not ok then
        local okS, eS = C.call('decode', target.schema.decode, target.schema, target.name, input, opts)
        if okS or eS ~= t then C.fail('errors differ: %s vs %s\n  %s', t, tostring(eS), ctx()) end
        return
    end
    if type(t) ~= 'table' then C.fail('decode gave a %s, not a table: %s', type(t), ctx()) end
    -- review8: Msg:decode (LuaJIT shape constructors) against schema:decode (C API path).
    do
        local okS, tS = C.call('decode', target.schema.decode, target.schema, target.name, input, opts)
        if not okS then C.fail('schema:decode raised where Msg:decode did not: %s\n  %s', tS, ctx()) end
        local eqS, whyS = C.deep_eq(t, tS)
        if not eqS then C.fail('Msg:decode ~= schema:decode: %s\n  %s', whyS, ctx()) end
        if getmetatable(t) ~= getmetatable(tS) then C.fail('metatables differ: %s', ctx()) end
    end
    -- Bit 7 of the last byte: a collector step between decode and encode
    -- (the unknown-field store is weak-keyed: t must keep its entry).
    if (input:byte(-1) or 0) >= 128 then collectgarbage('step') end

    local ok2, bytes = C.call('encode', msg.encode, msg, t, opts)
    if not ok2 then
        C.fail('decoded table does not re-encode: %s\n  %s\n  table %s', bytes, ctx(), C.dump(t))
    end
    if type(bytes) ~= 'string' then C.fail('encode gave a %s', type(bytes)) end
    local ok3, t2 = C.call('decode', msg.decode, msg, bytes, opts)
    if not ok3 then
        C.fail('re-encoded bytes do not decode: %s\n  %s\n  encoding %s', t2, ctx(), C.hex(bytes))
    end
    -- proto3 zero values written on the wire: see C.normalize.
    C.normalize(target.schema, target.name, t)
    C.normalize(target.schema, target.name, t2)
    local eq, why, cdata_key = C.deep_eq(t, t2)
    if not eq then
        C.fail('decode(encode(t)) ~= t: %s\n  %s\n  encoding %s\n  t  %s\n  t2 %s', why, ctx(), C.hex(bytes),
            C.dump(t), C.dump(t2))
    end
    local ok4, bytes2 = C.call('encode', msg.encode, msg, t2, opts)
    if not ok4 then C.fail('second re-encode failed: %s\n  %s', bytes2, ctx()) end
    if bytes2 ~= bytes and not cdata_key then
        C.fail('encoding is not a fixed point:\n  %s\n  first  %s\n  second %s', ctx(), C.hex(bytes), C.hex(bytes2))
    end
end

return C.driver(body)
