-- Differential cases for the encode walk (review-6): sparse tables of
-- 1..20 set fields in random key orders, so that `walk_fields` runs (the
-- handle's previous encode of the message saw few fields), with nested
-- walked sub-messages, a oneof, a map, a field name longer than 40 bytes
-- (a Lua 5.4 long string: found by its bytes), unknown and non-string
-- keys, NULL cdata (box.NULL-like, LuaJIT), proto2 required fields, and at
-- most one fault per table (a wrong value, a second oneof member, an
-- unknown key, a missing required field) so that which error is reported
-- does not depend on the key order.
--
--   lua walkdiff.lua SODIR OUT SEED COUNT
--
-- Each case is written as one line: the case number, then `=>` and, for
-- the walked encode, a second encode of the same table, and an encode by a
-- fresh schema (its first encode probes every field), the hex bytes or the
-- error (normalised: see `norm`). A line `WP` also marks a case where the
-- walked and the probed encode disagree in this build. Compare the files
-- of two builds with `sed 's/.* => //'` as run.sh does (walk.sh).
local sodir, outpath, seed, count = arg[1], arg[2], tonumber(arg[3]), tonumber(arg[4])
package.cpath = sodir .. '/?.so;' .. package.cpath
local protolua = require('protolua')
local ffi = type(jit) == 'table' and require('ffi') or nil
local here = arg[0]:match('^(.*/)') or './'
local wire = dofile(here .. 'wire.lua')
local varint, len, vint, T, KINDS = wire.varint, wire.len, wire.vint, wire.T, wire.KINDS
local LONG = string.rep('long_', 9) .. 'name' -- 49 bytes

-- field(name, number, kind, label, typename, oneof_index)
local function field(f)
    return len(2, len(1, f.name) .. vint(3, f.number) .. vint(4, f.label or 1) .. vint(5, T[f.kind])
        .. (f.tyname and len(6, f.tyname) or '') .. (f.oneof and vint(9, f.oneof) or ''))
end

-- The schema: message W (proto3, 40 fields), S (16 scalars), P (proto2,
-- 12 fields, 4 required).
local W = {}
for i, k in ipairs(KINDS) do W[#W + 1] = { name = 'k_' .. k, number = i, kind = k } end
W[#W + 1] = { name = LONG, number = 16, kind = 'string' }
W[#W + 1] = { name = 'child', number = 17, kind = 'message', tyname = '.wd.W' }
W[#W + 1] = { name = 'kids', number = 18, kind = 'message', label = 3, tyname = '.wd.W' }
W[#W + 1] = { name = 'sub', number = 19, kind = 'message', tyname = '.wd.S' }
W[#W + 1] = { name = 'subs', number = 20, kind = 'message', label = 3, tyname = '.wd.S' }
W[#W + 1] = { name = 'o_int', number = 21, kind = 'int32', oneof = 0 }
W[#W + 1] = { name = 'o_str', number = 22, kind = 'string', oneof = 0 }
W[#W + 1] = { name = 'o_msg', number = 23, kind = 'message', tyname = '.wd.S', oneof = 0 }
W[#W + 1] = { name = 'mp', number = 24, kind = 'message', label = 3, tyname = '.wd.W.MpEntry', map = true }
W[#W + 1] = { name = 'ri', number = 25, kind = 'int32', label = 3 }
W[#W + 1] = { name = 'rs', number = 26, kind = 'string', label = 3 }
W[#W + 1] = { name = 'e', number = 27, kind = 'enum', tyname = '.wd.E' }
for i = 28, 40 do W[#W + 1] = { name = 'x' .. i, number = 16 + (i * 37) % 300, kind = 'int32' } end
local S = {}
for i = 1, 16 do S[i] = { name = 's' .. i, number = 17 - i, kind = KINDS[(i - 1) % #KINDS + 1] } end
local P = {}
for i = 1, 12 do
    P[i] = { name = 'p' .. i, number = i * 3, kind = (i % 2 == 0) and 'string' or 'int32', label = (i <= 4) and 2 or 1 }
end
P[#P + 1] = { name = 'pc', number = 40, kind = 'message', tyname = '.wd.P' }

local function msgbytes(name, fields, extra)
    local parts = { len(1, name) }
    for _, f in ipairs(fields) do parts[#parts + 1] = field(f) end
    return len(4, table.concat(parts) .. (extra or ''))
end
local entry = len(3, len(1, 'MpEntry') .. field({ name = 'key', number = 1, kind = 'string' })
    .. field({ name = 'value', number = 2, kind = 'int32' }) .. len(7, vint(7, 1)))
local oneof = len(8, len(1, 'pick'))
local enum = len(5, len(1, 'E') .. len(2, len(1, 'E_ZERO') .. vint(2, 0)) .. len(2, len(1, 'E_ONE') .. vint(2, 1)))
local f3 = len(1, len(1, 'wd3.proto') .. len(2, 'wd') .. msgbytes('W', W, entry .. oneof) .. msgbytes('S', S)
    .. enum .. len(12, 'proto3'))
local f2 = len(1, len(1, 'wd2.proto') .. len(2, 'wd') .. msgbytes('P', P) .. len(12, 'proto2'))
local FDS = f3 .. f2

local rnd, chance = wire.rng(seed)
local hex = wire.hex

local faults -- faults left for the current case
local function fault(p)
    if faults > 0 and chance(p) then
        faults = faults - 1
        return true
    end
    return false
end

local NULL = ffi and ffi.cast('void *', 0) or nil

local gen_msg
local function scalar(kind)
    if fault(0.02) then
        local bad = { 'str', {}, true, 1.5, 2 ^ 70, -1 }
        return bad[rnd(#bad)]
    end
    if kind == 'string' or kind == 'bytes' then
        if kind == 'string' and fault(0.02) then return '\255\254' end
        return string.rep(string.char(96 + rnd(26)), rnd(20) - 1)
    elseif kind == 'bool' then
        return rnd(2) == 1
    elseif kind == 'float' or kind == 'double' then
        return (rnd(2001) - 1001) / 8
    elseif kind == 'enum' then
        return rnd(3) == 1 and 'E_ONE' or rnd(2) - 1
    elseif kind:match('^u') or kind:match('^fixed') then
        return rnd(3) == 1 and 0 or rnd(100000)
    else
        return rnd(200001) - 100001
    end
end

local function value(f, depth)
    -- NULL is absent: a fault for a required field.
    if NULL and chance(0.03) and (f.label ~= 2 or fault(1)) then return NULL end
    if f.kind == 'message' then
        if f.map then
            local m = {}
            for _ = 1, rnd(4) - 1 do m['k' .. rnd(50)] = rnd(1000) end
            if fault(0.02) then m[rnd(5)] = 1 end
            return m
        end
        local sub = f.tyname:match('%.(%w+)$')
        if f.label == 3 then
            local a = {}
            for i = 1, rnd(4) - 1 do a[i] = gen_msg(sub, depth + 1) end
            return a
        end
        return gen_msg(sub, depth + 1)
    end
    if f.label == 3 then
        local a = {}
        for i = 1, rnd(5) - 1 do a[i] = scalar(f.kind) end
        return a
    end
    return scalar(f.kind)
end

local FIELDS = { W = W, S = S, P = P }
LIMIT, MAXD = 3, nil
function gen_msg(name, depth)
    local fields = FIELDS[name]
    local t = {}
    if depth > LIMIT then
        -- Past the generator's depth: a valid leaf, or (a fault) one more
        -- level, which max_depth = LIMIT + 1 refuses.
        if name == 'P' then t = { p1 = 1, p2 = 'a', p3 = 3, p4 = 'b' } end
        if MAXD == LIMIT + 1 and fault(0.3) then
            if name == 'P' then t.pc = { p1 = 1, p2 = 'a', p3 = 3, p4 = 'b' } else t.child = {} end
        end
        return t
    end
    -- Dead keys first, for other iteration orders.
    local dead = rnd(3) == 1 and rnd(12) or 0
    for i = 1, dead do t['dead' .. i] = i end
    local n = math.min(rnd(20), #fields)
    if depth > 1 then n = rnd(6) - 1 end
    local used, oneof_used = {}, false
    for _ = 1, n do
        local f = fields[rnd(#fields)]
        if not used[f] then
            if f.oneof and oneof_used and not fault(0.3) then
                -- one member only
            else
                used[f] = true
                oneof_used = oneof_used or f.oneof ~= nil
                t[f.name] = value(f, depth)
            end
        end
    end
    if name == 'P' then
        for i = 1, 4 do
            if t[P[i].name] == nil and not fault(0.05) then t[P[i].name] = value(P[i], depth) end
        end
    end
    if fault(0.02) then t['nokey' .. rnd(9)] = 1 end
    if fault(0.02) then
        local ks = { 1, 2.5, true }
        t[ks[rnd(#ks)]] = 'v'
    end
    for i = 1, dead do t['dead' .. i] = nil end
    return t
end

local OPTS = { false, false, { strict_keys = false }, { required = false }, { utf8 = false }, { max_depth = 4 } }
local out = assert(io.open(outpath, 'wb'))
local schema = protolua.load(FDS)
local handles = { W = schema:message('wd.W'), S = schema:message('wd.S'), P = schema:message('wd.P') }

-- Errors whose wording follows the key order (which LuaJIT 2.1 and 5.4
-- randomize per process): the two members of a oneof conflict are sorted,
-- the path of a depth error is dropped.
local function norm(e)
    e = e:gsub('oneof ([%w_]+) has both ([%w_]+) and ([%w_]+) set', function(o, a, b)
        if b < a then a, b = b, a end
        return 'oneof ' .. o .. ' has both ' .. a .. '+' .. b .. ' set'
    end)
    return (e:gsub('field [^:]*: nesting deeper than the limit', 'field *: nesting deeper than the limit'))
end

local function enc(h, t, o)
    local ok, r
    if o then ok, r = pcall(h.encode, h, t, o) else ok, r = pcall(h.encode, h, t) end
    if ok then return true, hex(r) end
    return false, norm(tostring(r))
end

local wp = 0
for c = 1, count do
    faults = 1
    local o = OPTS[rnd(#OPTS)] or nil
    MAXD = o and o.max_depth
    local name = rnd(5) == 1 and 'P' or 'W'
    local h = handles[name]
    -- A primer with few fields: the next encode of the message walks.
    local saved = faults
    faults = 0
    local primer = gen_msg(name, LIMIT + 1)
    if name == 'P' then primer = { p1 = 1, p2 = 'a', p3 = 3, p4 = 'b' } end
    faults = saved
    enc(h, primer, o)
    -- Sub-message hints low as well, sometimes.
    if rnd(2) == 1 then enc(handles.S, {}, nil) end
    local t = gen_msg(name, 1)
    local ok1, r1 = enc(h, t, o)
    local _, r2 = enc(h, t, o)
    local fresh = protolua.load(FDS):message('wd.' .. name)
    local ok3, r3 = enc(fresh, t, o)
    out:write(c, ' ', name, ' => ', r1, ' | ', r2, ' | ', r3, '\n')
    if ok1 ~= ok3 or r1 ~= r3 then
        wp = wp + 1
        out:write('WP ', c, ' => walked ', r1, ' probed ', r3, '\n')
    end
end
out:close()
print(string.format('walkdiff: %d cases, %d walked/probed disagreements', count, wp))
