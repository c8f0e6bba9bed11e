-- The benchmark matrix inside Tarantool, with the rock-installed protolua
-- and Tarantool's own msgpack on the same Lua tables as a reference column.
--
--   tarantool bench-harness/tarantool/run.lua <repo root>
--
-- (`just bench-tarantool` builds the rock first.) Environment as for the
-- embedded harness: PROTOLUA_BENCH_BUDGET (s per repetition, 0.5),
-- PROTOLUA_BENCH_REPS (3). Prints a markdown table; writes
-- bench-harness/results/matrix-tarantool.json. Rust allocation counts are
-- not available here (no counting allocator in tarantool): those columns
-- come from the embedded harness.
local root = assert(arg[1], 'usage: run.lua <repo root>')
local clock = require('clock')
FIXTURES = root .. '/fixtures'
protolua = require('protolua')
MSGPACK = require('msgpack')
now = clock.monotonic
BUDGET = tonumber(os.getenv('PROTOLUA_BENCH_BUDGET')) or 0.5
REPS = tonumber(os.getenv('PROTOLUA_BENCH_REPS')) or 3
rust_allocs = function() return 0, 0 end

local rows = dofile(root .. '/bench-harness/lua/matrix.lua')

local version = require('tarantool').version
print(string.format('protolua matrix on Tarantool %s (%s): median of %d x %g s per cell; '
    .. 'vs msgpack = protolua msgs/s / msgpack msgs/s, median over repetitions (A B A B ...)\n',
    version, jit.version, REPS, BUDGET))
print('| message | size | bytes | direction | msgs/s | MB/s | spread | vs msgpack | ratio spread | Lua B/op | msgpack Lua B/op |')
print('|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|')
local json = {}
for _, r in ipairs(rows) do
    print(string.format('| %s | %s | %d | %s | %.0f | %.1f | %.1f %% | %.2f | %.1f %% | %.0f | %.0f |',
        r.schema, r.label, r.size, r.dir, r.msgs, r.mbs, r.spread * 100, r.msgpack_ratio,
        r.msgpack_ratio_spread * 100, r.lua_bytes, r.msgpack_lua_bytes))
    json[#json + 1] = string.format('  {"message": "%s", "size": "%s", "bytes": %d, "direction": "%s", '
        .. '"msgs_per_s": %.1f, "mb_per_s": %.3f, "spread": %.4f, "msgpack_ratio": %.4f, '
        .. '"msgpack_ratio_spread": %.4f, "lua_bytes_per_op": %.1f, "msgpack_lua_bytes_per_op": %.1f}',
        r.schema, r.label, r.size, r.dir, r.msgs, r.mbs, r.spread, r.msgpack_ratio, r.msgpack_ratio_spread,
        r.lua_bytes, r.msgpack_lua_bytes)
end
local path = root .. '/bench-harness/results/matrix-tarantool.json'
local f = assert(io.open(path, 'w'))
f:write('[\n', table.concat(json, ',\n'), '\n]\n')
f:close()
print('\nJSON: ' .. path)
os.exit(0)
