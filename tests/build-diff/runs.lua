-- Decode of repeated-field runs, for two builds compared case by case
-- (perf-dec: the unpacked string/varint run loops `leaf_strings` and
-- `leaf_varints`, and the packed fixed-width loop `packed_fixed`). A
-- proto3 and a proto2 message with a repeated field of every scalar kind
-- at numbers 1..15 (one-byte tags; proto2's unpacked by default, proto3's
-- packed) and at 16+ (two-byte tags); runs of 0..40 values, unpacked and
-- packed, with every kind of value width, and one fault at a random place:
-- a cut input, a bad or overlong varint, a length that does not fit, a
-- length of two bytes, invalid UTF-8, a partial fixed value, another tag
-- between elements. One line per case: input hex `=>` the decoded table
-- (sorted keys) or the error.
-- usage: luajit runs.lua DIR_WITH_protolua.so OUT SEED COUNT
package.cpath = arg[1] .. '/?.so;' .. package.cpath
local protolua = require('protolua')
local wire = dofile((arg[0]:match('^(.*/)') or './') .. 'wire.lua')
local varint, len, vint, T, KINDS, hex = wire.varint, wire.len, wire.vint, wire.T, wire.KINDS, wire.hex
local rnd, chance, pick = wire.rng(tonumber(arg[3]))
local COUNT = tonumber(arg[4])

local field, msg, file = wire.field, wire.msg, wire.file
-- KINDS 1..15 and an open/closed enum at 16 (tags of two bytes from 16 on)
local function fields()
    local f = {}
    for i = 1, 15 do f[#f + 1] = field('r' .. i, i, KINDS[i], 3) end
    for i = 1, 15 do f[#f + 1] = field('w' .. i, 16 + i, KINDS[i], 3) end
    return f
end
local f3 = fields()
f3[#f3 + 1] = field('e', 40, 'enum', 3, '.r3.E')
local e3 = len(5, len(1, 'E') .. len(2, len(1, 'E_ZERO') .. vint(2, 0)) .. len(2, len(1, 'E_ONE') .. vint(2, 1)))
local f2 = fields()
f2[#f2 + 1] = field('e', 40, 'enum', 3, '.r2.CE')
local e2 = len(5, len(1, 'CE') .. len(2, len(1, 'CE_A') .. vint(2, 1)) .. len(2, len(1, 'CE_B') .. vint(2, 2)))
local fds = file('r3.proto', 'r3', 'proto3', msg('R', f3) .. e3) .. file('r2.proto', 'r2', nil, msg('R', f2) .. e2)
local s = protolua.load(fds)
local M3, M2 = s:message('r3.R'), s:message('r2.R')

local WT = wire.WT

local function rvarint()
    local n = pick({ 1, 1, 1, 2, 2, 3, 4, 5, 9, 10 })
    local b = {}
    for i = 1, n do b[i] = string.char(i < n and 128 + rnd(128) - 1 or rnd(128) - 1) end
    if n == 10 then b[10] = '\1' end -- a negative int32/int64
    return table.concat(b)
end
local function rstring()
    local n = pick({ 0, 1, 3, 7, 15, 16, 17, 31, 32, 33, 48, 63, 64, 127, 128, 200 })
    local b = {}
    for i = 1, n do b[i] = string.char(rnd(94) + 31) end
    if n > 0 and chance(0.05) then b[rnd(n)] = pick({ '\255', '\192', '\195\169' }) end
    return varint(n) .. table.concat(b)
end
local function rvalue(kind)
    local wt = WT[kind]
    if wt == 0 then return rvarint() end
    if wt == 2 then return rstring() end
    local b = {}
    for i = 1, (wt == 5 and 4 or 8) do b[i] = string.char(rnd(256) - 1) end
    return table.concat(b)
end
-- A fault in the byte string `x` (one element's encoding).
local function fault(x)
    local k = rnd(6)
    if k == 1 then return x:sub(1, math.max(0, #x - rnd(3))) end -- cut
    if k == 2 then return string.rep('\255', 10) .. '\1' end -- overlong varint
    if k == 3 then return '\130' end -- a continuation byte, then whatever follows
    if k == 4 then return varint(1000) .. 'ab' end -- a length that does not fit
    if k == 5 then return '\255\1' .. x end -- a two-byte length or value prefix
    return x .. '\0'
end

local function run(number, kind, packed, n, bad)
    local wt = WT[kind]
    local parts = {}
    if packed then
        for i = 1, n do parts[i] = (i == bad) and fault(rvalue(kind)) or rvalue(kind) end
        local body = table.concat(parts)
        if bad == 0 and chance(0.2) then body = body .. ('\1'):rep(rnd(3)) end -- a partial last value
        return varint(number * 8 + 2) .. varint(#body) .. body
    end
    local t = varint(number * 8 + wt)
    for i = 1, n do
        local v = rvalue(kind)
        if i == bad then v = fault(v) end
        parts[i] = t .. v
        if chance(0.03) then parts[i] = parts[i] .. vint(15, 1) end -- another field between elements
    end
    return table.concat(parts)
end

local dump = wire.dump

local o = assert(io.open(arg[2], 'w'))
for _ = 1, COUNT do
    local M = chance(0.5) and M3 or M2
    local i = rnd(31)
    local number, kind
    if i == 31 then number, kind = 40, 'enum' else number, kind = (i > 15) and i + 1 or i, KINDS[(i - 1) % 15 + 1] end
    local packed = WT[kind] ~= 2 and chance(0.4)
    local n = rnd(41) - 1
    local bad = chance(0.5) and rnd(math.max(n, 1)) or 0
    local input = run(number, kind, packed, n, bad)
    if chance(0.3) then input = input .. run(number, kind, not packed and WT[kind] ~= 2, rnd(5), 0) end
    local opts = pick({ nil, { int64 = 'string' }, { enums = 'number' }, { utf8 = false } })
    local ok, res = pcall(M.decode, M, input, opts)
    local out = {}
    if ok then dump(res, out) else out[1] = 'ERR ' .. tostring(res) end
    o:write(hex(input), ' => ', table.concat(out), '\n')
end
o:close()
