-- codec_json: byte 0 picks the message type (bits 0-1) and the JSON options
-- (bits 2-5); with bit 6 set the rest is protobuf bytes for binary_to_json
-- (see `printed` below), else JSON text. Either json_to_binary raises a
-- "protolua:" error, and decode_json raises too, or it gives bytes that
--   * decode (and decode_json gives the same table as decode of them),
--   * print with binary_to_json, identical to encode_json(decode(bytes)),
--   * and reach a fixpoint: binary_to_json(json_to_binary(j)) == j after
--     at most one more round (a NullValue field given a number the enum
--     lacks prints as null, which reads back as 0).

local C = require('fuzzcommon')

local function options(bits)
    local o = {}
    if bits % 2 == 1 then o.ignore_unknown = true end
    if math.floor(bits / 2) % 2 == 1 then o.json_names = false end
    if math.floor(bits / 4) % 2 == 1 then o.emit_defaults = true end
    if math.floor(bits / 8) % 2 == 1 then o.indent = 2 end
    return o
end

local OPTS, LAX = {}, {}
for bits = 0, 15 do
    OPTS[bits] = options(bits)
    -- Printing does not check proto2 `required` fields, parsing does.
    LAX[bits] = options(bits)
    LAX[bits].required = false
end

-- Arbitrary bytes (merged, out of order, malformed: the printer's sorted
-- path and the fallback of its wire-order one): binary_to_json raises a
-- "protolua:" error, or prints JSON that parses back and prints the same
-- after at most one more round (see the fixpoint below).
local function printed(msg, opts, lax, input, ctx)
    local ok, j = C.call('binary_to_json', msg.binary_to_json, msg, input, opts)
    if not ok then return end
    opts = lax
    local ok2, b = C.call('json_to_binary', msg.json_to_binary, msg, j, opts)
    if not ok2 then C.fail('json_to_binary refused what binary_to_json printed: %s\n  %s\n  %s', b, ctx(), j) end
    local j3 = msg:binary_to_json(b, opts)
    local j4 = msg:binary_to_json(msg:json_to_binary(j3, opts), opts)
    if j4 ~= j3 or (j3 ~= j and not j:find('null', 1, true)) then
        C.fail('printed JSON is no fixpoint\n  %s\n  %s\n  %s\n  %s', ctx(), j, j3, j4)
    end
end

local function body(data)
    local b0 = data:byte(1) or 0
    local target = C.targets[b0 % 4 + 1]
    local msg = target.msg
    local opts = OPTS[math.floor(b0 / 4) % 16]
    local input = data:sub(2)
    local ctx = function() return target.name .. ' opts ' .. C.describe_opts(opts) .. ' input ' .. C.describe(input) end
    if math.floor(b0 / 64) % 2 == 1 then return printed(msg, opts, LAX[math.floor(b0 / 4) % 16], input, ctx) end

    local ok, bytes = C.call('json_to_binary', msg.json_to_binary, msg, input, opts)
    local okT, t = C.call('decode_json', msg.decode_json, msg, input, opts)
    if not ok then
        if okT then C.fail('decode_json accepted what json_to_binary refused (%s)\n  %s', bytes, ctx()) end
        return
    end
    if not okT then C.fail('decode_json refused what json_to_binary accepted (%s)\n  %s', t, ctx()) end
    local ok2, t2 = C.call('decode', msg.decode, msg, bytes)
    if not ok2 then C.fail('json_to_binary wrote bytes decode refuses: %s\n  %s %s', t2, ctx(), C.hex(bytes)) end
    local eq, why = C.deep_eq(t, t2)
    if not eq then C.fail('decode_json(s) ~= decode(json_to_binary(s)): %s\n  %s', why, ctx()) end
    local ok3, j = C.call('binary_to_json', msg.binary_to_json, msg, bytes, opts)
    if not ok3 then C.fail('binary_to_json refused json_to_binary output: %s\n  %s %s', j, ctx(), C.hex(bytes)) end
    local ok4, j2 = C.call('encode_json', msg.encode_json, msg, t2, opts)
    if not ok4 then C.fail('encode_json refused a decoded table: %s\n  %s', j2, ctx()) end
    if j2 ~= j then C.fail('encode_json(decode(b)) ~= binary_to_json(b)\n  %s\n  %s\n  %s', ctx(), j, j2) end
    local j3 = msg:binary_to_json(msg:json_to_binary(j, opts), opts)
    local j4 = msg:binary_to_json(msg:json_to_binary(j3, opts), opts)
    if j4 ~= j3 or (j3 ~= j and not j:find('null', 1, true)) then
        C.fail('printed JSON is no fixpoint\n  %s\n  %s\n  %s\n  %s', ctx(), j, j3, j4)
    end
end

return C.driver(body)
