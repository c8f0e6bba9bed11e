-- protolua against lua-protobuf (starwing's `pb` C module) in one process:
-- every matrix cell's encode and decode, timed in interleaved slices.
--
--   luajit    bench-harness/peers/peers.lua <repo root> <protolua dir> <pb dir> [slices] [slice s] [cells]
--   lua5.4    bench-harness/peers/peers.lua …
--   tarantool bench-harness/peers/peers.lua …
--
-- <protolua dir> holds protolua.so and <pb dir> pb.so, both built for the
-- host running this script (bench-harness/peers/run.sh builds them; `just
-- bench-peers PB_SRC=...`). Three contenders per cell and direction:
--   protolua    Msg:encode(t) / Msg:decode(s), load options left at their
--               defaults (so `serialize = true` inside Tarantool, as in
--               `just bench-tarantool`);
--   pb nodef    pb.encode(name, t) / pb.decode(name, s) after
--               pb.option('no_default_values'): absent fields stay nil, as
--               protolua leaves them;
--   pb default  the same with pb's default options ('auto_default_values':
--               proto3 messages get every absent scalar filled in).
-- Before timing, each cell is checked: pb's and protolua's bytes decode to
-- the same table, and pb's decoded tables are the ones protolua builds (no
-- defaults) or encode back to the same bytes (defaults).
--
-- Timing: for each cell and direction, n ops per slice (n doubled until
-- protolua's slice takes [slice s], 0.05 by default), then [slices] (9)
-- rounds, each timing the three contenders once, in an order that rotates
-- and reverses round to round, so drift and order weigh on all alike. The
-- clock is the thread's CPU time (LuaJIT, Tarantool) or os.clock (the
-- process's CPU time: Lua 5.4 has no FFI; the process has one thread).
-- Per round the ratio protolua time ÷ pb time (< 1: protolua faster); the
-- table gives the median over the rounds and [min..max].
-- [cells] is a comma list such as `person:100B,bench:mid` (default: all seven).
-- [json] (optional): a path to also write the results to, as an array of
-- flat objects, one per cell and direction (run.sh's header lists the keys;
-- `just bench-plot` draws them).
local root, dir_p, dir_pb = arg[1], arg[2], arg[3]
assert(root and dir_p and dir_pb,
    'usage: peers.lua <repo root> <protolua dir> <pb dir> [slices] [slice s] [cells] [json]')
local slices = tonumber(arg[4]) or 9
local slice_s = tonumber(arg[5]) or 0.05
local cell_list = arg[6] or 'person:10B,person:100B,person:1KB,person:10KB,person:100KB,bench:min,bench:mid'
local json_path = arg[7]

local in_tarantool = rawget(_G, 'box') ~= nil or package.loaded['tarantool'] ~= nil
local now, host
if rawget(_G, 'jit') then
    now = dofile(root .. '/bench-harness/lua/clock.lua')
    host = in_tarantool and ('Tarantool ' .. require('tarantool').version) or jit.version
else
    now, host = os.clock, _VERSION
end

local M = dofile(root .. '/fixtures/matrix.lua')
local protolua = assert(package.loadlib(dir_p .. '/protolua.so', 'luaopen_protolua'))()
local pb = assert(package.loadlib(dir_pb .. '/pb.so', 'luaopen_pb'))()

local function slurp(path)
    local f = assert(io.open(path, 'rb'))
    local s = f:read('*a')
    f:close()
    return s
end

local fds = { person = root .. '/fixtures/descriptors/hello.fds', bench = root .. '/fixtures/descriptors/proto2_basic.fds' }
local names = { person = 'hello.Person', bench = 'proto2_basic.BenchPayload' }
local msgs = {}
for which, path in pairs(fds) do
    msgs[which] = protolua.load_file(path):message(names[which])
    local ok, pos = pb.load(slurp(path))
    assert(ok, string.format('pb.load(%s) failed at byte %s', path, tostring(pos)))
end

-- Where two values differ ('' when equal): metatables are not compared
-- (protolua's `serialize` tables inside Tarantool carry one, pb's do not).
local function diff(a, b, path)
    if type(a) ~= 'table' or type(b) ~= 'table' then
        if a == b then return '' end
        return string.format('%s: %s ~= %s', path, tostring(a), tostring(b))
    end
    for k, v in pairs(a) do
        local d = diff(v, b[k], path .. '.' .. tostring(k))
        if d ~= '' then return d end
    end
    for k, v in pairs(b) do
        if a[k] == nil then return string.format('%s.%s: nil ~= %s', path, tostring(k), tostring(v)) end
    end
    return ''
end

-- The contenders' equal results for one cell (errors name the cell).
local function check(which, label, t)
    local msg, name = msgs[which], names[which]
    local where = name .. ' ' .. label
    local ours = msg:encode(t)
    pb.option('no_default_values')
    local theirs = pb.encode(name, t)
    if theirs ~= ours then
        -- pb writes fields in the order lua_next finds them: the same
        -- message in another field order.
        local d = diff(msg:decode(theirs), msg:decode(ours), where)
        assert(d == '', 'pb.encode gives another message: ' .. d)
    end
    local d = diff(pb.decode(name, ours), msg:decode(ours), where)
    assert(d == '', 'pb.decode (no_default_values) builds another table: ' .. d)
    pb.option('auto_default_values')
    assert(pb.encode(name, t) == theirs, where .. ': pb.encode depends on the default-values option')
    assert(msg:encode(pb.decode(name, ours)) == ours,
        where .. ': pb.decode (default options) does not encode back to the same bytes')
    return ours
end

local function time(f, self, x, n)
    local t0 = now()
    for _ = 1, n do f(self, x) end
    return now() - t0
end

local function median(xs)
    table.sort(xs)
    return xs[math.floor((#xs + 1) / 2)]
end

-- Each contender: { name, function, self, option to set before its slice }.
local function contenders(which, op)
    local msg = msgs[which]
    return {
        { 'protolua', msg[op], msg },
        { 'pb nodef', pb[op], names[which], 'no_default_values' },
        { 'pb default', pb[op], names[which], 'auto_default_values' },
    }
end

local function measure(which, label)
    local t = which == 'person' and M.person(label) or M.bench(label)
    local bytes = check(which, label, t)
    local rows = {}
    for _, op in ipairs({ 'encode', 'decode' }) do
        local x = op == 'encode' and t or bytes
        local cs = contenders(which, op)
        local n = 1
        while time(cs[1][2], cs[1][3], x, n) < slice_s do n = n * 2 end
        -- ratios: protolua time / pb time (the table); speeds: pb time /
        -- protolua time, i.e. protolua ops/s / pb ops/s (the JSON, the chart).
        local ts, ratios, speeds = {}, { {}, {} }, { {}, {} }
        for k, c in ipairs(cs) do
            ts[k] = {}
            if c[4] then pb.option(c[4]) end
            time(c[2], c[3], x, n) -- warm-up (traces, buffers)
        end
        for i = 1, slices do
            for j = 1, #cs do
                -- Rotate by round, reverse every other round.
                local k = (i + j) % #cs + 1
                if i % 2 == 0 then k = #cs - k + 1 end
                local c = cs[k]
                if c[4] then pb.option(c[4]) end
                ts[k][i] = time(c[2], c[3], x, n) / n
            end
            for k = 1, 2 do
                ratios[k][i] = ts[1][i] / ts[k + 1][i]
                speeds[k][i] = ts[k + 1][i] / ts[1][i]
            end
        end
        local row = { which = which, label = label, op = op, size = #bytes }
        for k = 1, #cs do row['ns' .. k] = median(ts[k]) * 1e9 end
        for k = 1, 2 do
            local m = median(ratios[k])
            row['r' .. k], row['lo' .. k], row['hi' .. k] = m, ratios[k][1], ratios[k][#ratios[k]]
            local v = median(speeds[k])
            row['s' .. k], row['slo' .. k], row['shi' .. k] = v, speeds[k][1], speeds[k][#speeds[k]]
        end
        rows[#rows + 1] = row
    end
    pb.option('auto_default_values')
    return rows
end

print(string.format('protolua vs lua-protobuf on %s: %d rounds of %g s slices (A B C, rotated), '
    .. 'ratio = protolua time / pb time (< 1: protolua faster), median [min..max]\n', host, slices, slice_s))
print('| message | size | bytes | op | protolua ns/op | pb nodef ns/op | protolua/pb nodef | [min..max] '
    .. '| pb default ns/op | protolua/pb default | [min..max] |')
print('|---|---|---:|---|---:|---:|---:|---|---:|---:|---|')
-- One JSON object per row: the matrix runner's cell keys, then the
-- contenders' ns/op and, per pb option set, protolua ops/s / pb ops/s.
local function json_row(r)
    local s = string.format('  {"message": "%s", "size": "%s", "bytes": %d, "direction": "%s", "host": "%s", '
        .. '"rounds": %d, "protolua_ns_per_op": %.1f, "pb_nodef_ns_per_op": %.1f, "pb_default_ns_per_op": %.1f',
        names[r.which], r.label, r.size, r.op, host, slices, r.ns1, r.ns2, r.ns3)
    for k, set in ipairs({ 'pb_nodef', 'pb_default' }) do
        local v, lo, hi = r['s' .. k], r['slo' .. k], r['shi' .. k]
        s = s .. string.format(', "%s_ratio": %.4f, "%s_ratio_min": %.4f, "%s_ratio_max": %.4f, '
            .. '"%s_ratio_spread": %.4f', set, v, set, lo, set, hi, set, (hi - lo) / v)
    end
    return s .. '}'
end

local json = {}
for c in cell_list:gmatch('[^,]+') do
    local which, label = c:match('^(%a+):(%w+)$')
    assert(names[which], 'bad cell ' .. c .. ' (person:<size> or bench:<min|mid>)')
    for _, r in ipairs(measure(which, label)) do
        print(string.format('| %s | %s | %d | %s | %.0f | %.0f | %.2f | [%.2f..%.2f] | %.0f | %.2f | [%.2f..%.2f] |',
            names[r.which]:match('[^.]+$'), r.label, r.size, r.op, r.ns1, r.ns2, r.r1, r.lo1, r.hi1, r.ns3, r.r2,
            r.lo2, r.hi2))
        json[#json + 1] = json_row(r)
    end
end
if json_path then
    -- Written whole, then renamed: an interrupted run leaves the last file.
    local f = assert(io.open(json_path .. '.tmp', 'wb'))
    f:write('[\n', table.concat(json, ',\n'), '\n]\n')
    f:close()
    assert(os.rename(json_path .. '.tmp', json_path))
    print('\nJSON: ' .. json_path)
end
if in_tarantool then os.exit(0) end
