-- A/B of two protolua builds in one process: each cell's decode (or
-- encode) timed in slices that alternate A B, B A, A B, … (thread CPU
-- time), so that drift and the load order weigh on both alike. Prints per
-- cell the median of B's speed ÷ A's (> 1: B faster) and [min..max].
--
--   tarantool bench-harness/tarantool/ab.lua <repo root> <dir A> <dir B> [decode|encode] [slices] [cells]
--   luajit    bench-harness/tarantool/ab.lua <repo root> <dir A> <dir B> …
--
-- Each dir holds a protolua.so for that host (LuaJIT builds: `cargo build
-- --release -p protolua --no-default-features --features luajit,module
-- --target-dir target/module`: not the workspace's target/, see
-- rock/build.sh).
-- [cells] is a comma list such as `person:100B,bench:mid` (default: all
-- seven). Option `serialize` as in the matrix (on inside Tarantool).
local root, dir_a, dir_b = arg[1], arg[2], arg[3]
assert(root and dir_a and dir_b, 'usage: ab.lua <repo root> <dir A> <dir B> [decode|encode] [slices] [cells]')
local op = arg[4] or 'decode'
local slices = tonumber(arg[5]) or 11
local now, in_tarantool = dofile(root .. '/bench-harness/lua/clock.lua')
local M = dofile(root .. '/fixtures/matrix.lua')
local opts = in_tarantool and { serialize = true } or nil

local function open(dir)
    local lib = assert(package.loadlib(dir .. '/protolua.so', 'luaopen_protolua'))()
    return {
        person = lib.load_file(root .. '/fixtures/descriptors/hello.fds', opts):message('hello.Person'),
        bench = lib.load_file(root .. '/fixtures/descriptors/proto2_basic.fds', opts):message('proto2_basic.BenchPayload'),
    }
end
local A, B = open(dir_a), open(dir_b)

local cells = {}
for c in (arg[6] or 'person:10B,person:100B,person:1KB,person:10KB,person:100KB,bench:min,bench:mid'):gmatch('[^,]+') do
    local which, label = c:match('^(%a+):(%w+)$')
    cells[#cells + 1] = { assert(which, 'bad cell ' .. c), label }
end

local function time(f, self, x, n)
    local t0 = now()
    for _ = 1, n do f(self, x) end
    return now() - t0
end

print(string.format('%s, B ÷ A speed, %d slices: median [min..max]', op, slices))
for _, c in ipairs(cells) do
    local which, label = c[1], c[2]
    local t = which == 'person' and M.person(label) or M.bench(label)
    local ma, mb = A[which], B[which]
    local x = op == 'encode' and t or ma:encode(t)
    if op == 'encode' then
        assert(ma:encode(t) == mb:encode(t), 'the builds disagree')
    else
        assert(mb:encode(mb:decode(x)) == ma:encode(ma:decode(x)), 'the builds disagree')
    end
    local fa, fb = ma[op], mb[op]
    local n = 1
    while time(fa, ma, x, n) < 0.02 do n = n * 2 end
    local r = {}
    for i = 1, slices do
        local ta, tb
        if i % 2 == 1 then
            ta = time(fa, ma, x, n); tb = time(fb, mb, x, n)
        else
            tb = time(fb, mb, x, n); ta = time(fa, ma, x, n)
        end
        r[i] = ta / tb
    end
    table.sort(r)
    print(string.format('%-7s %-6s %.3f [%.3f..%.3f]', which, label, r[math.floor((#r + 1) / 2)], r[1], r[#r]))
end
