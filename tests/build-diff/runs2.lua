-- Decode of repeated-field runs in the shapes `runs.lua` does not make
-- (review-7, of perf-dec's `leaf_strings`, `leaf_varints`, `packed_fixed`),
-- for two builds compared case by case:
--   * an open enum with a one-byte tag (runs.lua's enum is at 40, a
--     two-byte tag, so its runs never reach `leaf_run`), and a closed one;
--   * runs inside a sub-message (singular, repeated) and a proto2 group,
--     with the parent going on with the run's tag byte right after the
--     sub-message's end (the loops must stop at the sub-message's end);
--   * varints of 1..11 bytes with random overflow bits in the 10th byte,
--     values at the 32-bit edges (2^31, 2^32, 2^32+1, -1 as 5 and 10
--     bytes), non-canonical zeros (80 00) for bool;
--   * strings with invalid UTF-8 of every kind (overlong, surrogate, above
--     U+10FFFF, cut multi-byte at the string's end, stray continuation)
--     in element k, with lengths 126..129 around the one-byte boundary;
--   * packed fixed runs whose last value is partial (1..W-1 bytes), empty;
--   * every option set: int64 auto/number/string/cdata, enums, utf8 =
--     false, empty, defaults, serialize, unknown = 'drop'. The unknown
--     bytes kept are printed too.
-- One line per case: input hex `=>` the decoded table (sorted keys) and the
-- unknown bytes, or the error.
-- usage: luajit runs2.lua DIR_WITH_protolua.so OUT SEED COUNT
-- Tarantool 2.6's LuaJIT crashes compiling this script's traces (SEGV in
-- asm_tvptr, with decode replaced by a stub too): the generator runs
-- interpreted there (protolua's C calls are the same either way).
if rawget(_G, 'box') and jit then jit.off() end
package.cpath = arg[1] .. '/?.so;' .. package.cpath
local protolua = require('protolua')
local wire = dofile((arg[0]:match('^(.*/)') or './') .. 'wire.lua')
local varint, len, vint, T, KINDS, hex = wire.varint, wire.len, wire.vint, wire.T, wire.KINDS, wire.hex
local rnd, chance, pick = wire.rng(tonumber(arg[3]))
local COUNT = tonumber(arg[4])

local field, msg, file = wire.field, wire.msg, wire.file
-- R: KINDS at 1..15 (one-byte tags). T: the enum at 1 (tag 08, the same
-- byte as R's int32 run), R at 2, repeated R at 3, (proto2) group G at 4
-- holding R's fields, and R's kinds again at 5..15 under other numbers
-- so that a run of R's tag in the parent is an unknown field or another
-- kind.
local function rfields()
    local f = {}
    for i = 1, 15 do f[#f + 1] = field('r' .. i, i, KINDS[i], 3) end
    return f
end
local function tfields(pkg, enum, proto2)
    local f = {
        field('e', 1, 'enum', 3, '.' .. pkg .. '.' .. enum),
        field('sub', 2, 'message', 1, '.' .. pkg .. '.R'),
        field('subs', 3, 'message', 3, '.' .. pkg .. '.R'),
    }
    if proto2 then f[#f + 1] = field('g', 4, 10, 1, '.' .. pkg .. '.T.G') end
    for i = 5, 15 do f[#f + 1] = field('t' .. i, i, KINDS[16 - i], 3) end
    return f
end
local e3 = len(5, len(1, 'E') .. len(2, len(1, 'E_ZERO') .. vint(2, 0)) .. len(2, len(1, 'E_ONE') .. vint(2, 1))
    .. len(2, len(1, 'E_NEG') .. vint(2, 2 ^ 32 - 5 + 0)))
local e2 = len(5, len(1, 'CE') .. len(2, len(1, 'CE_A') .. vint(2, 1)) .. len(2, len(1, 'CE_B') .. vint(2, 2)))
local g = len(3, len(1, 'G') .. table.concat(rfields())) -- nested_type
local fds = file('q3.proto', 'q3', 'proto3', msg('R', rfields()) .. msg('T', tfields('q3', 'E', false)) .. e3)
    .. file('q2.proto', 'q2', nil, msg('R', rfields()) .. msg('T', tfields('q2', 'CE', true), g) .. e2)
local s = protolua.load(fds)
local T3, T2 = s:message('q3.T'), s:message('q2.T')

local WT = wire.WT

local EDGE = {
    '\128\128\128\128\8', -- 2^31
    '\128\128\128\128\16', -- 2^32
    '\129\128\128\128\16', -- 2^32 + 1
    '\255\255\255\255\15', -- 2^32 - 1 (-1 as 5 bytes)
    '\255\255\255\255\255\255\255\255\255\1', -- -1
    '\128\128\128\128\128\128\128\128\128\1', -- 2^63
    '\128\128\128\128\248\255\255\255\255\1', -- int32 min
    '\128\0', '\128\128\0', -- non-canonical zeros
    '\130\0', -- non-canonical 2
}
local function rvarint()
    if chance(0.25) then return pick(EDGE) end
    local n = chance(0.02) and 11 or pick({ 1, 1, 1, 2, 2, 3, 5, 8, 9, 10, 10 })
    local b = {}
    for i = 1, n do b[i] = string.char(i < n and 128 + rnd(128) - 1 or rnd(128) - 1) end
    if n == 10 and chance(0.9) then b[10] = string.char(rnd(2) - 1) end
    return table.concat(b)
end
local BADUTF = { '\192\128', '\237\160\128', '\244\144\128\128', '\255', '\128', '\226\130', '\240\159\152', '\195' }
local GOODUTF = { '\195\169', '\226\130\172', '\240\159\152\128', 'a' }
local function rstring(bad)
    local n = pick({ 0, 1, 2, 5, 14, 15, 16, 126, 127, 128, 129 })
    local b = {}
    for i = 1, n do b[i] = chance(0.1) and pick(GOODUTF) or string.char(rnd(94) + 31) end
    if bad then
        local at = rnd(n + 1)
        b[at] = pick(BADUTF) -- at n + 1: a multi-byte sequence cut by the string's end
    end
    local x = table.concat(b)
    return varint(#x) .. x
end
local function rvalue(kind, bad)
    local wt = WT[kind]
    if wt == 0 then return rvarint() end
    if wt == 2 then return rstring(bad) end
    local b = {}
    for i = 1, (wt == 5 and 4 or 8) do b[i] = string.char(rnd(256) - 1) end
    if chance(0.1) then b[wt == 5 and 4 or 8] = wt == 5 and '\127' or '\255' end -- NaNs, infinities
    return table.concat(b)
end

-- A run of field `number` (kind `kind`): unpacked (`n` elements under the
-- tag, one of them `bad`: invalid UTF-8 for strings, a cut value else) or
-- packed (a partial last value of `part` bytes).
local function run(number, kind, packed, n, bad)
    local wt = WT[kind]
    local parts = {}
    if packed and wt ~= 2 then
        for i = 1, n do parts[i] = rvalue(kind) end
        local body = table.concat(parts)
        if bad > 0 then
            if wt == 0 then body = body .. '\255' else body = body .. ('\7'):rep(rnd(wt == 5 and 3 or 7)) end
        end
        return varint(number * 8 + 2) .. varint(#body) .. body
    end
    local t = varint(number * 8 + wt)
    for i = 1, n do
        local v = rvalue(kind, i == bad and wt == 2)
        if i == bad and wt ~= 2 then v = v:sub(1, rnd(#v) - 1) end
        parts[i] = t .. v
    end
    return table.concat(parts)
end

local function rrun(proto2)
    local i = rnd(15)
    local kind = KINDS[i]
    local n = rnd(30) - 1
    local bad = chance(0.3) and rnd(math.max(n, 1)) or 0
    return run(i, kind, chance(0.3), n, bad), i, kind
end

local function case(proto2)
    local shape = rnd(5)
    local body, i, kind = rrun(proto2)
    local tail = chance(0.5) and run(i, kind, false, rnd(4), 0) or '' -- the same tag after the end
    if shape == 1 then -- top-level enum run (open in q3, closed in q2)
        local parts = {}
        for k = 1, rnd(30) do parts[k] = '\8' .. (chance(0.3) and pick({ '\0', '\1', '\2', '\3' }) or rvarint()) end
        if chance(0.05) then parts[#parts] = '\8' .. '\255' end
        return table.concat(parts) .. tail
    elseif shape == 2 then -- in the singular sub-message
        return len(2, body) .. tail
    elseif shape == 3 then -- in repeated sub-messages
        local parts = {}
        for k = 1, rnd(3) do parts[k] = len(3, k == 1 and body or (rrun(proto2))) end
        return table.concat(parts) .. tail
    elseif shape == 4 and proto2 then -- in a group
        return '\35' .. body .. (chance(0.9) and '\36' or '') .. tail
    end
    return body .. tail
end

local function dump(v, out) wire.dump(v, out, protolua.unknown) end

local OPTS = {
    {}, { int64 = 'string' }, { int64 = 'number' }, { int64 = 'cdata' }, { enums = 'number' }, { utf8 = false },
    { empty = true }, { defaults = 'values' }, { serialize = true }, { unknown = 'drop' },
    { int64 = 'cdata', enums = 'number', empty = true },
}
local o = assert(io.open(arg[2], 'w'))
for _ = 1, COUNT do
    local proto2 = chance(0.5)
    local M = proto2 and T2 or T3
    local input = case(proto2)
    local opts = pick(OPTS)
    local ok, res = pcall(M.decode, M, input, opts)
    local out = {}
    if ok then dump(res, out) else out[1] = 'ERR ' .. tostring(res) end
    o:write(hex(input), ' => ', table.concat(out), '\n')
end
o:close()
