-- protolua's JSON methods against the JSON codec a Lua user has today, in
-- one process: lua-cjson on LuaJIT and Lua 5.4, Tarantool's built-in `json`
-- inside Tarantool. Every matrix cell, four comparisons (issue #29):
--
--   encode_json(t)       vs peer.encode(t)                (the same table)
--   decode_json(s)       vs peer.decode(s)                (the same text)
--   binary_to_json(b)    vs peer.encode(Msg:decode(b))
--   json_to_binary(s)    vs Msg:encode(peer.decode(s'))
--
-- s is protolua's JSON of the cell; s' is the peer's own text of it
-- (peer.encode(Msg:decode(b))), the text a user of the peer stores and
-- reads back: it decodes to a table Msg:encode takes (field names, int64
-- as numbers, bytes as raw strings), which protolua's JSON (lowerCamel
-- names, quoted int64, base64 bytes) does not always.
--
--   luajit    bench-harness/json/json.lua <repo root> <protolua dir> [slices] [slice s] [cells] [json]
--   lua5.4    bench-harness/json/json.lua …
--   tarantool bench-harness/json/json.lua …
--
-- <protolua dir> holds protolua.so built for the host (bench-harness/json/
-- run.sh builds it; `just bench-json`). Timing as bench-harness/peers/
-- peers.lua, each side in a timing loop of its own: per comparison, n ops per slice (n doubled until protolua's
-- slice takes [slice s], 0.05 by default), a warm-up of each, then
-- [slices] (9) rounds A B / B A alternating; per round the speedup = peer
-- time ÷ protolua time (> 1: protolua faster); the table gives its median
-- over the rounds and [min..max]. Clock: the thread's CPU time (LuaJIT,
-- Tarantool) or os.clock (Lua 5.4: no FFI; the process has one thread).
-- [cells] a comma list such as `person:100B,bench:mid` (default all seven).
-- [json] (optional): a path to also write the results to, as an array of
-- flat objects, one per cell and method (run.sh's header lists the keys;
-- `just bench-plot` draws them).
local root, dir_p = arg[1], arg[2]
assert(root and dir_p, 'usage: json.lua <repo root> <protolua dir> [slices] [slice s] [cells] [json]')
local slices = tonumber(arg[3]) or 9
local slice_s = tonumber(arg[4]) or 0.05
local cell_list = arg[5] or 'person:10B,person:100B,person:1KB,person:10KB,person:100KB,bench:min,bench:mid'
local json_path = arg[6]

local in_tarantool = rawget(_G, 'box') ~= nil or package.loaded['tarantool'] ~= nil
local now, host, peer, peer_name
if rawget(_G, 'jit') then
    now = dofile(root .. '/bench-harness/lua/clock.lua')
    host = in_tarantool and ('Tarantool ' .. require('tarantool').version) or jit.version
else
    now, host = os.clock, _VERSION
end
if in_tarantool then
    peer, peer_name = require('json'), 'json'
else
    local ok, cjson = pcall(require, 'cjson')
    assert(ok, 'lua-cjson is not installed for ' .. host .. ' (apt install lua-cjson): ' .. tostring(cjson))
    peer, peer_name = cjson, 'cjson'
end

local M = dofile(root .. '/fixtures/matrix.lua')
local protolua = assert(package.loadlib(dir_p .. '/protolua.so', 'luaopen_protolua'))()
local fds = { person = root .. '/fixtures/descriptors/hello.fds', bench = root .. '/fixtures/descriptors/proto2_basic.fds' }
local names = { person = 'hello.Person', bench = 'proto2_basic.BenchPayload' }
local msgs = {}
for which, path in pairs(fds) do
    msgs[which] = protolua.load_file(path):message(names[which])
end

-- A timing loop of its own for each side of each comparison: a chunk
-- compiled anew, so that on LuaJIT every loop is a trace of its own that
-- calls one function, as a user's call site does. One loop shared by all
-- 56 functions made its call site polymorphic (a chain of side traces)
-- and the cells' results depended on the cells run before them
-- (PERF_LOG).
local timer_src = 'local now = ...\n'
    .. 'return function(f, x, n) local t0 = now(); for _ = 1, n do f(x) end; return now() - t0 end'
local function new_timer()
    return assert((loadstring or load)(timer_src, '=timer'))(now)
end

local function median(xs)
    local s = {}
    for i = 1, #xs do s[i] = xs[i] end
    table.sort(s)
    return s[math.floor((#s + 1) / 2)], s[1], s[#s]
end

-- { label, protolua function, peer function, argument of protolua, argument of the peer }
local function comparisons(msg, t, b, s, s_peer)
    local enc, dec = peer.encode, peer.decode
    return {
        { 'encode_json', function(x) return msg:encode_json(x) end, function(x) return enc(x) end, t, t },
        { 'decode_json', function(x) return msg:decode_json(x) end, function(x) return dec(x) end, s, s },
        { 'binary_to_json', function(x) return msg:binary_to_json(x) end, function(x) return enc(msg:decode(x)) end, b, b },
        { 'json_to_binary', function(x) return msg:json_to_binary(x) end, function(x) return msg:encode(dec(x)) end, s,
            s_peer },
    }
end

local function measure(which, label)
    local msg = msgs[which]
    local t = which == 'person' and M.person(label) or M.bench(label)
    local b = msg:encode(t)
    local s = msg:encode_json(t)
    -- Each side computes the same thing: checked before timing.
    assert(msg:json_to_binary(s) == b, label .. ': json_to_binary(encode_json(t)) ~= encode(t)')
    assert(msg:binary_to_json(b) == s, label .. ': binary_to_json(encode(t)) ~= encode_json(t)')
    local s_peer = peer.encode(msg:decode(b))
    assert(msg:encode(peer.decode(s_peer)) == b, label .. ': Msg:encode(peer.decode(s\')) ~= encode(t)')
    local rows = {}
    for _, c in ipairs(comparisons(msg, t, b, s, s_peer)) do
        local op, fp, fq, xp, xq = c[1], c[2], c[3], c[4], c[5]
        local time_p, time_q = new_timer(), new_timer()
        local n = 1
        while time_p(fp, xp, n) < slice_s do n = n * 2 end
        time_q(fq, xq, n) -- warm-up (traces, buffers)
        local tp, tq, speed = {}, {}, {}
        for i = 1, slices do
            if i % 2 == 1 then
                tp[i] = time_p(fp, xp, n)
                tq[i] = time_q(fq, xq, n)
            else
                tq[i] = time_q(fq, xq, n)
                tp[i] = time_p(fp, xp, n)
            end
            speed[i] = tq[i] / tp[i]
        end
        local m, lo, hi = median(speed)
        rows[#rows + 1] = { op = op, ns_p = median(tp) / n * 1e9, ns_q = median(tq) / n * 1e9, r = m, lo = lo, hi = hi }
    end
    return #b, #s, rows
end

print(string.format('protolua JSON vs %s on %s: %d rounds of %g s slices (A B / B A), '
    .. 'speedup = %s time / protolua time (> 1: protolua faster), median [min..max]\n', peer_name, host, slices,
    slice_s, peer_name))
print('| message | size | bytes | JSON bytes | op | protolua ns/op | ' .. peer_name .. ' ns/op | speedup | [min..max] |')
print('|---|---|---:|---:|---|---:|---:|---:|---|')
-- One JSON object per row: the matrix runner's cell keys (bytes: the
-- binary size), the method, both sides' median ns/op and the speedup.
local function json_row(which, label, nb, ns, r)
    return string.format('  {"message": "%s", "size": "%s", "bytes": %d, "json_bytes": %d, "method": "%s", '
        .. '"host": "%s", "peer": "%s", "rounds": %d, "protolua_ns_per_op": %.1f, "peer_ns_per_op": %.1f, '
        .. '"speedup": %.4f, "speedup_min": %.4f, "speedup_max": %.4f, "speedup_spread": %.4f}',
        names[which], label, nb, ns, r.op, host, peer_name, slices, r.ns_p, r.ns_q, r.r, r.lo, r.hi,
        (r.hi - r.lo) / r.r)
end

local json = {}
for c in cell_list:gmatch('[^,]+') do
    local which, label = c:match('^(%a+):(%w+)$')
    assert(names[which], 'bad cell ' .. c .. ' (person:<size> or bench:<min|mid>)')
    local nb, ns, rows = measure(which, label)
    for _, r in ipairs(rows) do
        print(string.format('| %s | %s | %d | %d | %s | %.0f | %.0f | %.2f | [%.2f..%.2f] |',
            names[which]:match('[^.]+$'), label, nb, ns, r.op, r.ns_p, r.ns_q, r.r, r.lo, r.hi))
        json[#json + 1] = json_row(which, label, nb, ns, r)
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
