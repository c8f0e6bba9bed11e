-- decode's root fast path against the general path, in one build: each
-- input of at most 64 bytes is decoded as it is (the fast path when it is
-- all plain one-byte-tag fields) and with an unknown field appended under
-- unknown = 'drop' (always the general path). The results must be equal;
-- errors must be equal up to 'at byte N' for a missing required field (the
-- position is the input's end). Every case is also written to OUT, so two
-- builds can be compared.
--   luajit tests/build-diff/fastpath.lua SODIR FDSDIR GENFDS OUT SEED COUNT
local sodir, fdsdir, genfds, outpath, seed, count = arg[1], arg[2], arg[3], arg[4], tonumber(arg[5]), tonumber(arg[6])
package.cpath = sodir .. '/?.so;' .. package.cpath
local protolua = require('protolua')
local out = assert(io.open(outpath, 'wb'))
local wire = dofile((arg[0]:match('^(.*/)') or './') .. 'wire.lua')
local rnd, _, pick = wire.rng(seed)
local hex = wire.hex
local function ser(v)
    local ty = type(v)
    if ty == 'string' then return string.format('%q', v) end
    if ty == 'number' then
        if v ~= v then return 'nan' end
        return (math.type and math.type(v) or 'n') .. ':' .. string.format('%.17g', v)
    end
    if ty == 'cdata' then return 'cdata:' .. tostring(v) end
    if ty ~= 'table' then return ty .. ':' .. tostring(v) end
    local keys = {}
    for k in next, v do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. '=' .. ser(rawget(v, k)) end
    local mt = debug.getmetatable(v)
    return '{' .. table.concat(parts, ',') .. '}' .. (mt and ('mt:' .. tostring(rawget(mt, '__serialize'))) or '')
end
-- The wire helpers shared by the scripts here.
local varint = dofile((arg[0]:match('^(.*/)') or './') .. 'wire.lua').varint
local function rbytes(n)
    local b = {}
    for i = 1, n do b[i] = string.char(rnd(256) - 1) end
    return table.concat(b)
end
local WT = { int32 = 0, int64 = 0, uint32 = 0, uint64 = 0, sint32 = 0, sint64 = 0, bool = 0, enum = 0,
    fixed32 = 5, sfixed32 = 5, float = 5, fixed64 = 1, sfixed64 = 1, double = 1, string = 2, bytes = 2,
    message = 2, group = 3 }
local function value(wt)
    if wt == 0 then
        local c = rnd(8)
        if c <= 3 then return varint(rnd(128) - 1) end
        if c == 4 then return string.rep('\255', 9) .. '\1' end
        if c == 5 then return varint(rnd(2 ^ 40)) end
        if c == 6 then return string.rep('\255', 9) .. string.char(rnd(128) - 1) end -- maybe overflow
        if c == 7 then return '\128\128\0' end -- overlong zero
        local n = rnd(10)
        local s = {}
        for i = 1, n - 1 do s[i] = string.char(128 + rnd(128) - 1) end
        s[n] = string.char(rnd(128) - 1)
        return table.concat(s)
    elseif wt == 1 then return rbytes(8)
    elseif wt == 5 then return rbytes(4)
    elseif wt == 2 then
        local s = pick({ '', 'abc', 'h\195\169', '\255', '\237\160\128', '\192\128', rbytes(rnd(6)), string.rep('y', rnd(40)) })
        local l = #s
        if rnd(20) == 1 then l = l + rnd(3) end
        if rnd(20) == 1 then return '\128' .. string.char(l) .. s end -- 2-byte length
        return varint(l) .. s
    end
    return ''
end

local schemas = {
    { protolua.load_file(fdsdir .. '/hello.fds'), { 'hello.Person', 'hello.Address' } },
    { protolua.load_file(fdsdir .. '/proto2_basic.fds'), { 'proto2_basic.BenchPayload', 'proto2_basic.Inner', 'proto2_basic.BenchPayload.Meta' } },
    { protolua.load_file(fdsdir .. '/alltypes3.fds'), { 'protolua.test.AllTypes', 'protolua.imp.ImpMsg', 'protolua.test.AllTypes.Nested', 'protolua.test.Node' } },
    { protolua.load_file(fdsdir .. '/many_required.fds'), { 'protolua.test.ManyRequired' } },
    { protolua.load_file(genfds), { 'g3.All15', 'g3.LowEnum', 'g2.Req', 'g2.LowClosed', 'g3.S16', 'g3.Deep' } },
}
local OPTS = { {}, { int64 = 'string' }, { int64 = 'number' }, { int64 = 'cdata' }, { enums = 'number' },
    { required = false }, { utf8 = false }, { serialize = true }, { empty = true }, { defaults = 'values' } }
local UNKNOWN = varint(999 * 8) .. varint(1)
local bad, n = 0, 0
for ci = 1, count do
    local sc = pick(schemas)
    local name = pick(sc[2])
    local M = sc[1]:message(name)
    local fl = M:fields()
    local b = {}
    local total = 0
    for _ = 1, rnd(12) - 1 do
        local f = pick(fl)
        local wt = WT[f.type] or 0
        if rnd(25) == 1 then wt = rnd(8) - 1 end
        local num = f.number
        if rnd(40) == 1 then num = rnd(16) - 1 end
        local piece = varint(num * 8 + wt) .. value(wt)
        if total + #piece > 64 then break end
        b[#b + 1] = piece
        total = total + #piece
    end
    local bin = table.concat(b)
    if rnd(10) == 1 and #bin > 0 then bin = bin:sub(1, rnd(#bin)) end
    local o = pick(OPTS)
    local ok1, r1 = pcall(M.decode, M, bin, o)
    local o2 = {}
    for k, v in pairs(o) do o2[k] = v end
    o2.unknown = 'drop'
    local ok2, r2 = pcall(M.decode, M, bin .. UNKNOWN, o2)
    local s1 = ok1 and ser(r1) or ('ERR ' .. tostring(r1))
    local s2 = ok2 and ser(r2) or ('ERR ' .. tostring(r2))
    local n1, n2 = s1:gsub('at byte %d+', 'at byte N'), s2:gsub('at byte %d+', 'at byte N')
    if not (ok1 and ok2) and s1:find('missing required') then s1, s2 = n1, n2 end
    n = n + 1
    -- Two errors may differ (the appended bytes change what is left); those
    -- are compared between builds through OUT.
    if ok1 and s1 ~= s2 then
        bad = bad + 1
        if bad <= 10 then print('MISMATCH', name, hex(bin), ser(o), '\n  fast:', s1, '\n  gen: ', s2) end
    end
    out:write(name, ' ', hex(bin), ' ', ser(o), ' => ', ok1 and ser(r1) or ('ERR ' .. tostring(r1)), '\n')
end
out:close()
print(string.format('%d cases, %d mismatches', n, bad))
