-- The benchmark matrix (../shared/matrix/MATRIX.md) as a user runs it:
-- a Lua loop calling Msg:encode(t) / Msg:decode(s). Globals from the host:
-- FIXTURES, protolua, now() (monotonic seconds), BUDGET (seconds per rep),
-- REPS. Returns an array of result rows.
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

-- VARIANTS copies of the cell's table, each with a different value of one
-- integer field (same encoded size): their encodings are distinct strings,
-- so the allocation count includes the output string (LuaJIT interns
-- strings: encoding one table N times would allocate its result once).
local VARIANTS = 64
-- The bytes are made only for the decode measurement: while they are
-- alive, encoding a variant would find its string already interned.
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

local rows = {}
for _, c in ipairs(cells) do
    local bytes = c.msg:encode(c.t)
    assert(#bytes == c.size, string.format('%s %s encodes to %d bytes, the matrix says %d', c.schema, c.label,
        #bytes, c.size))
    local enc, dec = c.msg.encode, c.msg.decode
    local vts = variants(c)
    for _, dir in ipairs({ 'encode', 'decode' }) do
        local op, arg, vargs = enc, c.t, vts
        if dir == 'decode' then op, arg, vargs = dec, bytes, variant_bytes(c, vts) end
        rate(op, arg, c.msg, 0.1) -- warm-up (JIT, caches, buffer growth)
        local rs = {}
        for i = 1, REPS do rs[i] = rate(op, arg, c.msg, BUDGET) end
        local med = median(rs)
        local lo, hi = rs[1], rs[#rs]
        local lua_b, rust_n, rust_b = allocs(op, vargs, c.msg)
        rows[#rows + 1] = { schema = c.schema, label = c.label, dir = dir, size = c.size, msgs = med,
            mbs = med * c.size / 1e6, spread = (hi - lo) / med, lua_bytes = lua_b, rust_allocs = rust_n,
            rust_bytes = rust_b }
    end
end
return rows
