-- text_decode: byte 0 picks the message type (bits 0-1), the rest is text.
-- Either text_to_binary raises a "protolua:" error (and decode_text raises
-- the same one), or it gives bytes such that
--   * binary_to_text prints them, multi-line and single-line, and both
--     parse back to the same bytes, which print to the same text (the
--     printed form is a fixed point);
--   * decode_text gives a table (or a "protolua:" error from decode itself,
--     e.g. a missing required field) whose encode_text parses back to an
--     equal table.

local C = require('fuzzcommon')

local function body(data)
    local b0 = data:byte(1) or 0
    local target = C.targets[b0 % 4 + 1]
    local msg = target.msg
    local input = data:sub(2)
    local ctx = function() return target.name .. ' input ' .. C.hex(input) end

    local ok, bytes = C.call('text_to_binary', msg.text_to_binary, msg, input)
    local okD, t = C.call('decode_text', msg.decode_text, msg, input)
    if not ok then
        if okD then C.fail('decode_text accepted what text_to_binary refused: %s\n  %s', bytes, ctx()) end
        -- The same message after the call's name (errors are truncated to
        -- a fixed size, so a longer name leaves a few bytes less of it).
        local a = bytes:gsub('^protolua: text_to_binary ', '', 1)
        local b = t:gsub('^protolua: decode_text ', '', 1)
        local n = math.min(#a, #b)
        if a:sub(1, n) ~= b:sub(1, n) or math.abs(#a - #b) > 3 then
            C.fail('errors differ: %s vs %s\n  %s', bytes, t, ctx())
        end
        return
    end
    local okP, text = C.call('binary_to_text', msg.binary_to_text, msg, bytes)
    if not okP then C.fail('parsed bytes do not print: %s\n  %s', text, ctx()) end
    local ok2, bytes2 = C.call('text_to_binary', msg.text_to_binary, msg, text)
    if not ok2 then C.fail('printed text does not parse: %s\n  %s\n  text %s', bytes2, ctx(), text) end
    local ok3, text2 = C.call('binary_to_text', msg.binary_to_text, msg, bytes2)
    if not ok3 or text2 ~= text then C.fail('printing is not a fixed point\n  %s\n  %s\n  %s', ctx(), text, tostring(text2)) end
    local okS, line = C.call('binary_to_text', msg.binary_to_text, msg, bytes, { single_line = true })
    if not okS then C.fail('single-line print failed: %s', line) end
    local ok4, bytes3 = C.call('text_to_binary', msg.text_to_binary, msg, line)
    if not ok4 or bytes3 ~= bytes2 then C.fail('single-line text parses differently\n  %s\n  %s', ctx(), line) end

    if not okD then return end
    local okE, text3 = C.call('encode_text', msg.encode_text, msg, t)
    if not okE then C.fail('decoded table does not encode_text: %s\n  %s', text3, ctx()) end
    local okR, t2 = C.call('decode_text', msg.decode_text, msg, text3)
    if not okR then C.fail('encode_text output does not decode_text: %s\n  %s\n  text %s', t2, ctx(), text3) end
    C.normalize(target.schema, target.name, t)
    C.normalize(target.schema, target.name, t2)
    local eq, why = C.deep_eq(t, t2)
    if not eq then C.fail('decode_text(encode_text(t)) ~= t: %s\n  %s', why, ctx()) end
end

return C.driver(body)
