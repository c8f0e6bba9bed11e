-- The protolua side of the text-format differential test
-- (lua-binding/tests/text_differential.rs, text_check.py): for every case
-- of gen.py, protolua's text of the payload (multi-line, with unknown
-- fields, single-line) and protolua's parse of Python's text.
-- Records: text, text with unknown fields, single-line text, wire bytes
-- from Python's text (or "!error <message>").

local protolua = require('protolua')
local D = assert(DIFF, 'DIFF not set')
local schema = protolua.load_file(D.fds)

local function u32(n)
    return string.char(n % 256, math.floor(n / 256) % 256, math.floor(n / 65536) % 256,
        math.floor(n / 16777216) % 256)
end

local function read_u32(s, i)
    local a, b, c, d = s:byte(i, i + 3)
    return a + b * 256 + c * 65536 + d * 16777216
end

local function read_records(path)
    local f = assert(io.open(path, 'rb'))
    local s = f:read('*a')
    f:close()
    local out, i = {}, 1
    while i <= #s do
        local n = read_u32(s, i)
        i = i + 4
        local rec = {}
        for k = 1, n do
            local len = read_u32(s, i)
            i = i + 4
            rec[k] = s:sub(i, i + len - 1)
            i = i + len
        end
        out[#out + 1] = rec
    end
    return out
end

local cases, refs = read_records(D.cases), read_records(D.ref)
local out = assert(io.open(D.results, 'wb'))
for k, c in ipairs(cases) do
    local M = schema:message(c[1])
    local payload, py_text = c[3], refs[k][1]
    local text = M:binary_to_text(payload)
    local with_unknown = M:binary_to_text(payload, { print_unknown = true })
    local one_line = M:binary_to_text(payload, { single_line = true })
    local ok, from_py = pcall(M.text_to_binary, M, py_text)
    if not ok then
        from_py = '!error ' .. tostring(from_py)
    end
    local parts = { text, with_unknown, one_line, from_py }
    local buf = { u32(#parts) }
    for _, p in ipairs(parts) do
        buf[#buf + 1] = u32(#p)
        buf[#buf + 1] = p
    end
    out:write(table.concat(buf))
end
out:close()
return 'text roundtrip: ' .. #cases .. ' cases'
