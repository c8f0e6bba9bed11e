-- What the lua-protobuf facade costs (docs/PB_COMPAT.md): ops/second of
-- pb.encode/pb.decode beside Msg:encode/Msg:decode of the same protolua
-- handle (the one the facade calls, so the options are the same), on the
-- matrix payloads. Plain LuaJIT or Lua 5.x with the module on LUA_CPATH:
--
--   LUA_CPATH='target/rock/?.so' luajit bench-harness/lua/pb_facade.lua fixtures [seconds]
--
-- Prints one line per cell and operation: both rates and their ratio.
local fixtures = assert(arg[1], 'usage: pb_facade.lua <fixtures dir> [seconds per measurement]')
local budget = tonumber(arg[2]) or 0.5
local pb = require('protolua.pb')
local M = dofile(fixtures .. '/matrix.lua')

local now = os.clock
if jit then
    local ok, ffi = pcall(require, 'ffi')
    if ok then
        ffi.cdef('typedef struct { long s; long ns; } pbf_ts; int clock_gettime(int, pbf_ts *);')
        local ts = ffi.new('pbf_ts')
        now = function() ffi.C.clock_gettime(3, ts) return tonumber(ts.s) + tonumber(ts.ns) * 1e-9 end
    end
end

local function read(path)
    local f = assert(io.open(path, 'rb'))
    local s = f:read('*a')
    f:close()
    return s
end
assert(pb.load(read(fixtures .. '/descriptors/hello.fds')))
assert(pb.load(read(fixtures .. '/descriptors/proto2_basic.fds')))

-- The facade's own handle for a type (so both sides run the same options).
local function handle_of(name)
    pcall(pb.decode, name, '')
    local st = pb.state()
    return st.types[name].h
end

local cells = {}
for _, label in ipairs({ '10B', '100B', '1KB', '10KB' }) do
    cells[#cells + 1] = { name = 'Person/' .. label, type = 'hello.Person', t = M.person(label) }
end
for _, label in ipairs({ 'min', 'mid' }) do
    cells[#cells + 1] = { name = 'BenchPayload/' .. label, type = 'proto2_basic.BenchPayload', t = M.bench(label) }
end

-- Best of 5 runs of `f` in batches until `budget` seconds pass, in ops/s.
local function rate(f, a, b)
    local best = 0
    for _ = 1, 5 do
        local n, batch = 0, 16
        local t0 = now()
        local t1 = t0
        repeat
            for _ = 1, batch do f(a, b) end
            n = n + batch
            t1 = now()
            if batch < 65536 then batch = batch * 2 end
        until t1 - t0 >= budget / 5
        local r = n / (t1 - t0)
        if r > best then best = r end
    end
    return best
end

print(string.format('%-20s %-7s %12s %12s %7s', 'cell', 'op', 'Msg ops/s', 'pb ops/s', 'Msg/pb'))
local worst = 0
for _, c in ipairs(cells) do
    local h = handle_of(c.type)
    local bytes = h:encode(c.t)
    assert(pb.encode(c.type, c.t) == bytes)
    local direct_enc = rate(h.encode, h, c.t)
    local facade_enc = rate(pb.encode, c.type, c.t)
    local direct_dec = rate(h.decode, h, bytes)
    local facade_dec = rate(pb.decode, c.type, bytes)
    for _, row in ipairs({ { 'encode', direct_enc, facade_enc }, { 'decode', direct_dec, facade_dec } }) do
        local ratio = row[2] / row[3]
        if ratio > worst then worst = ratio end
        print(string.format('%-20s %-7s %12.0f %12.0f %7.3f', c.name, row[1], row[2], row[3], ratio))
    end
end
print(string.format('worst Msg/pb ratio: %.3f (%s)', worst, jit and jit.version or _VERSION))
