-- Lua side of the ProtoJSON differential test (json_diff.py, run by
-- lua-binding/tests/json_differential.rs). The host sets the global
-- JDIFF = { fds = path, cases = path, results = path } and runs this file;
-- it returns a summary string and raises on the first broken law.
--
-- For each case (type, index, payload, Python's JSON or ''), writes
-- (type, index, 'ok'|'err', binary_to_json(payload) or the error,
--  'ok'|'err', json_to_binary(Python's JSON) or the error) to `results`,
-- and checks the round-trip laws on the way:
--   binary_to_json(b) == encode_json(decode(b))       (byte for byte)
--   binary_to_json(json_to_binary(j)) == j            (j: protolua's JSON;
--     a fixpoint after one more round where a NullValue field held junk)

local protolua = require('protolua')
local D = assert(JDIFF, 'JDIFF not set')
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

local out = {}
local function put(...)
    local parts = { ... }
    out[#out + 1] = u32(#parts)
    for _, p in ipairs(parts) do
        out[#out + 1] = u32(#p)
        out[#out + 1] = p
    end
end

local function hex(s)
    return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
end

local n, printed, laws = 0, 0, 0
for _, rec in ipairs(read_records(D.cases)) do
    local tname, index, payload, py_json = rec[1], rec[2], rec[3], rec[4]
    local M = schema:message(tname)
    local where = tname .. ' #' .. index .. ' (payload ' .. hex(payload) .. ')'
    local ok, j = pcall(M.binary_to_json, M, payload)
    if ok then
        printed = printed + 1
        local t = M:decode(payload)
        local j2 = M:encode_json(t)
        if j2 ~= j then
            error(where .. ': encode_json(decode(b)) ~= binary_to_json(b):\n' .. j2 .. '\n' .. j)
        end
        local j3 = M:binary_to_json(M:json_to_binary(j))
        -- A NullValue field holding a number the enum lacks prints as null,
        -- which reads back as NULL_VALUE (0): then only the second round is
        -- a fixpoint.
        if j3 ~= j and not j:find('NullValue":null', 1, true) then
            error(where .. ': binary_to_json(json_to_binary(j)) ~= j:\n' .. j3 .. '\n' .. j)
        end
        local j4 = M:binary_to_json(M:json_to_binary(j3))
        if j4 ~= j3 then
            error(where .. ': binary_to_json(json_to_binary(j)) is no fixpoint:\n' .. j4 .. '\n' .. j3)
        end
        laws = laws + 2
    end
    local ok2, b = true, ''
    if py_json ~= '' then
        ok2, b = pcall(M.json_to_binary, M, py_json)
    end
    put(tname, index, ok and 'ok' or 'err', tostring(j), ok2 and 'ok' or 'err', tostring(b))
    n = n + 1
end
local f = assert(io.open(D.results, 'wb'))
f:write(table.concat(out))
f:close()
return string.format('json differential (Lua): %d cases, %d printed, %d round-trip laws held', n, printed, laws)
