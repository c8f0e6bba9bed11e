-- The benchmark matrix (../shared/matrix/MATRIX.md) as a user runs it:
-- a Lua loop calling Msg:encode(t) / Msg:decode(s). Globals from the host:
-- FIXTURES, protolua, now() (monotonic seconds), BUDGET (seconds per rep),
-- REPS, rust_allocs() (allocations, bytes so far), and optionally
-- protolua_floors (the embedded harness, or Tarantool's run.lua with the
-- bench-only protolua_floors module), MSGPACK (Tarantool's msgpack,
-- timed on the same tables as a reference) and CELLS (a comma-separated
-- list such as "Person/10B,BenchPayload/min": only those cells run) and
-- STRICT (encode rows also time the strict-key floors, walk and count:
-- see bench-harness/src/floor.rs). With floors, decode rows also time the
-- constructor floor (ctor_ratio, and ctor_msgpack_ratio with msgpack) and
-- the parse + constructor floor (pctor_ratio, pctor_msgpack_ratio).
-- Returns an array of rows.
local M = dofile(FIXTURES .. '/matrix.lua')

local hello = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')
local p2 = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds')
local Person = hello:message('hello.Person')
local Bench = p2:message('proto2_basic.BenchPayload')

local cells = {}
for _, label in ipairs({ '10B', '100B', '1KB', '10KB', '100KB' }) do
    cells[#cells + 1] = { schema = 'hello.Person', label = label, msg = Person, t = M.person(label),
        size = M.person_sizes[label], vary = 'age' }
end
for _, label in ipairs({ 'min', 'mid' }) do
    cells[#cells + 1] = { schema = 'proto2_basic.BenchPayload', label = label, msg = Bench, t = M.bench(label),
        size = M.bench_sizes[label], vary = 'id' }
end

-- Run `op` in batches until `budget` seconds pass; return ops/second.
local function rate(op, arg, msg, budget)
    local n, batch = 0, 16
    local t0 = now()
    local t1 = t0
    repeat
        for _ = 1, batch do op(msg, arg) end
        n = n + batch
        t1 = now()
        if batch < 65536 then batch = batch * 2 end
    until t1 - t0 >= budget
    return n / (t1 - t0)
end

local function median(xs)
    table.sort(xs)
    return xs[math.floor((#xs + 1) / 2)]
end

-- row[key] = the median of the ratios xs, row[key .. '_spread'] = their
-- (max - min) / median.
local function put_ratio(row, key, xs)
    local m = median(xs)
    row[key] = m
    row[key .. '_spread'] = (xs[#xs] - xs[1]) / m
end

-- VARIANTS copies of the cell's table, each with a different value of one
-- integer field (same encoded size): their encodings are distinct strings,
-- so the allocation count includes the output string (LuaJIT interns
-- strings: encoding one table N times would allocate its result once).
local VARIANTS = 64
-- The bytes are made only for the decode measurement: while they are
-- alive, encoding a variant would find its string already interned.
-- Both are made only after the timed loops of their direction: a Person
-- variant's encoding differs from the cell's only in `age`'s byte, which
-- LuaJIT's sparse string hash does not read (it reads 16 bytes: the first
-- and last four, two more at 1/4 and 1/2), so 64 live variants put more
-- than 32 same-hash strings in one chain of the string table. LuaJIT then
-- switches that chain to its dense hash (LUAJIT_SECURITY_STRHASH) until
-- the table is next resized, and every later encode of the cell's table
-- hashes its whole output again (Person 100KB: ~150,000 instructions,
-- ~25 % of the encode's time), while the floor's output, whose variants
-- are not made before its timing, keeps the sparse hash.
local function variants(c)
    local ts = {}
    for i = 1, VARIANTS do
        local v = {}
        for k, x in pairs(c.t) do v[k] = x end
        v[c.vary] = c.t[c.vary] + i - 1
        ts[i] = v
        assert(#c.msg:encode(v) == c.size, c.schema .. ' ' .. c.label .. ': variant changes the size')
    end
    return ts
end
local function variant_bytes(c, ts)
    local bs = {}
    for i = 1, #ts do bs[i] = c.msg:encode(ts[i]) end
    return bs
end

-- Lua bytes and Rust allocations per op over the variants, GC stopped.
-- Decode results of identical strings reuse interned strings (LuaJIT and
-- 5.4 short strings): that is the steady state of a real decode loop too.
local function allocs(op, args, msg)
    for i = 1, #args do op(msg, args[i]) end -- warm (traces, buffers)
    collectgarbage('collect')
    collectgarbage('stop')
    local n0, b0 = rust_allocs()
    local k0 = collectgarbage('count')
    for i = 1, #args do op(msg, args[i]) end
    local k1 = collectgarbage('count')
    local n1, b1 = rust_allocs()
    collectgarbage('restart')
    return (k1 - k0) * 1024 / #args, (n1 - n0) / #args, (b1 - b0) / #args
end

-- Deep equality of two decoded tables, metatables included (the decode
-- floor must build the same).
local function same(a, b)
    if type(a) ~= 'table' or type(b) ~= 'table' then return a == b end
    if getmetatable(a) ~= getmetatable(b) then return false end
    for k, v in pairs(a) do if not same(v, b[k]) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
end

if CELLS then
    local wanted = {}
    for _, c in ipairs(cells) do
        if string.find(',' .. CELLS .. ',', ',' .. c.schema:match('[^.]+$') .. '/' .. c.label .. ',', 1, true) then
            wanted[#wanted + 1] = c
        end
    end
    cells = wanted
end

local rows = {}
for _, c in ipairs(cells) do
    local bytes = c.msg:encode(c.t)
    assert(#bytes == c.size, string.format('%s %s encodes to %d bytes, the matrix says %d', c.schema, c.label,
        #bytes, c.size))
    local enc, dec = c.msg.encode, c.msg.decode
    local decoded = dec(c.msg, bytes)
    local dec_floor, enc_floor, walk_floor, count_floor, ctor_floor, parse_ctor_floor
    if protolua_floors then
        local _
        dec_floor, enc_floor, walk_floor, count_floor, ctor_floor, _, parse_ctor_floor = protolua_floors(decoded,
            c.schema)
        assert(same(dec_floor(nil, bytes), decoded), c.schema .. ' ' .. c.label .. ': decode floor builds another table')
        -- (A floors module from before the constructor floor returns four,
        -- one from before the parse floors five.)
        assert(not ctor_floor or same(ctor_floor(nil, bytes), decoded),
            c.schema .. ' ' .. c.label .. ': constructor floor builds another table')
        assert(not parse_ctor_floor or same(parse_ctor_floor(nil, bytes), decoded),
            c.schema .. ' ' .. c.label .. ': parse + constructor floor builds another table')
    end
    -- Tarantool's msgpack on the same Lua tables: a schema-less C codec.
    local mp_enc, mp_dec, mp_bytes
    if MSGPACK then
        mp_enc = function(_, t) return MSGPACK.encode(t) end
        mp_dec = function(_, s) return MSGPACK.decode(s) end
        mp_bytes = MSGPACK.encode(c.t)
    end
    local vts -- after the encode timing (see `variants`)
    for _, dir in ipairs({ 'encode', 'decode' }) do
        local op, arg, fop, mop, marg = enc, c.t, enc_floor, mp_enc, c.t
        if dir == 'decode' then
            op, arg, fop, mop, marg = dec, bytes, dec_floor, mp_dec, mp_bytes
        end
        rate(op, arg, c.msg, 0.1) -- warm-up (JIT, caches, buffer growth)
        if fop then rate(fop, arg, nil, 0.1) end
        -- Decode rows also time the constructor floor (floor.rs): the
        -- cheapest table building known on LuaJIT; and the parse +
        -- constructor floor: that, after the cheapest read of the wire.
        local cop = dir == 'decode' and ctor_floor or nil
        local pop = dir == 'decode' and parse_ctor_floor or nil
        if cop then rate(cop, arg, nil, 0.1) end
        if pop then rate(pop, arg, nil, 0.1) end
        if mop then rate(mop, marg, nil, 0.1) end
        -- A B A B ...: each repetition times protolua, then the floor
        -- and/or msgpack, for the same budget.
        local strict = STRICT and fop and dir == 'encode'
        if strict then
            rate(walk_floor, arg, nil, 0.1)
            rate(count_floor, arg, nil, 0.1)
        end
        local rs, ratios, mp_ratios, floor_mp_ratios = {}, {}, {}, {}
        local ctor_ratios, ctor_mp_ratios, pctor_ratios, pctor_mp_ratios = {}, {}, {}, {}
        local walk_ratios, count_ratios, strict_ratios = {}, {}, {}
        for i = 1, REPS do
            rs[i] = rate(op, arg, c.msg, BUDGET)
            local f
            if fop then
                f = rate(fop, arg, nil, BUDGET)
                ratios[i] = f / rs[i]
            end
            local cf = cop and rate(cop, arg, nil, BUDGET)
            if cf then ctor_ratios[i] = cf / rs[i] end
            local pf = pop and rate(pop, arg, nil, BUDGET)
            if pf then pctor_ratios[i] = pf / rs[i] end
            if mop then
                local m = rate(mop, marg, nil, BUDGET)
                mp_ratios[i] = rs[i] / m
                -- The floor against msgpack: the best a codec building
                -- these tables can reach relative to msgpack.
                if f then floor_mp_ratios[i] = f / m end
                if cf then ctor_mp_ratios[i] = cf / m end
                if pf then pctor_mp_ratios[i] = pf / m end
            end
            if strict then
                -- Each strict floor against the floor of this repetition;
                -- protolua against the faster of the two.
                local w, k = rate(walk_floor, arg, nil, BUDGET), rate(count_floor, arg, nil, BUDGET)
                walk_ratios[i], count_ratios[i] = f / w, f / k
                strict_ratios[i] = math.max(w, k) / rs[i]
            end
        end
        vts = vts or variants(c)
        local vargs = dir == 'decode' and variant_bytes(c, vts) or vts
        local med = median(rs)
        local lo, hi = rs[1], rs[#rs]
        local lua_b, rust_n, rust_b = allocs(op, vargs, c.msg)
        local row = { schema = c.schema, label = c.label, dir = dir, size = c.size, msgs = med,
            mbs = med * c.size / 1e6, spread = (hi - lo) / med, lua_bytes = lua_b, rust_allocs = rust_n,
            rust_bytes = rust_b }
        if fop then
            put_ratio(row, 'floor_ratio', ratios)
            row.floor_lua_bytes = allocs(fop, vargs, nil)
        end
        if cop then
            put_ratio(row, 'ctor_ratio', ctor_ratios)
            row.ctor_lua_bytes = allocs(cop, vargs, nil)
            if mop then
                put_ratio(row, 'ctor_msgpack_ratio', ctor_mp_ratios)
            end
        end
        if pop then
            put_ratio(row, 'pctor_ratio', pctor_ratios)
            if mop then
                put_ratio(row, 'pctor_msgpack_ratio', pctor_mp_ratios)
            end
        end
        if strict then
            row.walk_floor_ratio = median(walk_ratios)
            row.count_floor_ratio = median(count_ratios)
            put_ratio(row, 'strict_ratio', strict_ratios)
        end
        if mop then
            put_ratio(row, 'msgpack_ratio', mp_ratios)
            row.msgpack_lua_bytes = allocs(mop, dir == 'decode' and { mp_bytes } or vargs, nil)
            if fop then
                put_ratio(row, 'floor_msgpack_ratio', floor_mp_ratios)
            end
        end
        rows[#rows + 1] = row
    end
end
return rows
