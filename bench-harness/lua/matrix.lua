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
        size = M.person_sizes[label] }
end
for _, label in ipairs({ 'min', 'mid' }) do
    cells[#cells + 1] = { schema = 'proto2_basic.BenchPayload', label = label, msg = Bench, t = M.bench(label),
        size = M.bench_sizes[label] }
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

local rows = {}
for _, c in ipairs(cells) do
    local bytes = c.msg:encode(c.t)
    assert(#bytes == c.size, string.format('%s %s encodes to %d bytes, the matrix says %d', c.schema, c.label,
        #bytes, c.size))
    local enc, dec = c.msg.encode, c.msg.decode
    for _, dir in ipairs({ 'encode', 'decode' }) do
        local op, arg = enc, c.t
        if dir == 'decode' then op, arg = dec, bytes end
        rate(op, arg, c.msg, 0.1) -- warm-up (JIT, caches, buffer growth)
        local rs = {}
        for i = 1, REPS do rs[i] = rate(op, arg, c.msg, BUDGET) end
        local med = median(rs)
        local lo, hi = rs[1], rs[#rs]
        rows[#rows + 1] = { schema = c.schema, label = c.label, dir = dir, size = c.size, msgs = med,
            mbs = med * c.size / 1e6, spread = (hi - lo) / med }
    end
end
return rows
