-- The text format on the benchmark matrix (`just bench-text`): per cell,
-- ops/second of the binary codec (encode, decode) beside the text codec
-- (encode_text, decode_text, binary_to_text, text_to_binary), and the text
-- size. Globals from the host: FIXTURES, protolua, now(), BUDGET (seconds
-- per measurement). Returns an array of rows.
local M = dofile(FIXTURES .. '/matrix.lua')

local hello = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')
local p2 = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds')
local Person = hello:message('hello.Person')
local Bench = p2:message('proto2_basic.BenchPayload')

local cells = {}
for _, label in ipairs({ '10B', '100B', '1KB', '10KB', '100KB' }) do
    cells[#cells + 1] = { name = 'Person/' .. label, msg = Person, t = M.person(label) }
end
for _, label in ipairs({ 'min', 'mid' }) do
    cells[#cells + 1] = { name = 'BenchPayload/' .. label, msg = Bench, t = M.bench(label) }
end

-- Run `op(msg, arg)` in growing batches until BUDGET seconds pass.
local function rate(op, msg, arg)
    local n, batch = 0, 8
    local t0 = now()
    local t1 = t0
    repeat
        for _ = 1, batch do op(msg, arg) end
        n = n + batch
        t1 = now()
        if batch < 65536 then batch = batch * 2 end
    until t1 - t0 >= BUDGET
    return n / (t1 - t0)
end

local rows = {}
for _, c in ipairs(cells) do
    local m = c.msg
    local bytes = m:encode(c.t)
    local text = m:encode_text(c.t)
    assert(m:text_to_binary(text) == bytes, c.name .. ': text_to_binary(encode_text(t)) ~= encode(t)')
    rows[#rows + 1] = {
        cell = c.name,
        bytes = #bytes,
        text_bytes = #text,
        encode = rate(m.encode, m, c.t),
        decode = rate(m.decode, m, bytes),
        encode_text = rate(m.encode_text, m, c.t),
        decode_text = rate(m.decode_text, m, text),
        binary_to_text = rate(m.binary_to_text, m, bytes),
        text_to_binary = rate(m.text_to_binary, m, text),
    }
end
return rows
