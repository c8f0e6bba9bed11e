-- The benchmark matrix inside Tarantool, with the rock-installed protolua
-- and Tarantool's own msgpack on the same Lua tables as a reference column.
--
--   tarantool bench-harness/tarantool/run.lua <repo root>
--
-- (`just bench-tarantool` builds the rock first.) Environment as for the
-- embedded harness: PROTOLUA_BENCH_BUDGET (s per repetition, 0.5),
-- PROTOLUA_BENCH_REPS (3), PROTOLUA_BENCH_CELLS, PROTOLUA_BENCH_CLOCK (below). Prints a markdown table; writes
-- bench-harness/results/matrix-tarantool.json. Rust allocation counts are
-- not available here (no counting allocator in tarantool): those columns
-- come from the embedded harness.
--
-- PROTOLUA_FLOORS=<dir> (`just bench-tarantool-floor`): <dir> holds the
-- bench-only protolua_floors.so (bench-harness/tarantool/floors.sh builds
-- it: the embedded harness's floors, bench-harness/src/floor.rs). The
-- floor then runs in the same repetitions as protolua and msgpack, and
-- three columns are added: floor/msgpack (floor msgs/s / msgpack msgs/s:
-- the best a codec building the same tables reaches against msgpack),
-- time/floor (protolua's time / the floor's, as the embedded harness
-- reports it) and the floor's Lua bytes per op. Results then go to
-- matrix-tarantool-floor.json.
local root = assert(arg[1], 'usage: run.lua <repo root>')
local clock = require('clock')
FIXTURES = root .. '/fixtures'
protolua = require('protolua')
MSGPACK = require('msgpack')
-- PROTOLUA_BENCH_CLOCK=thread: time with this thread's CPU time
-- (CLOCK_THREAD_CPUTIME_ID) instead of the monotonic clock, so that time
-- the thread spends descheduled on a loaded machine does not count.
local thread_clock = os.getenv('PROTOLUA_BENCH_CLOCK') == 'thread'
now = thread_clock and clock.thread or clock.monotonic
BUDGET = tonumber(os.getenv('PROTOLUA_BENCH_BUDGET')) or 0.5
REPS = tonumber(os.getenv('PROTOLUA_BENCH_REPS')) or 3
CELLS = os.getenv('PROTOLUA_BENCH_CELLS') -- only these cells (results to cells-tarantool*.json)
rust_allocs = function() return 0, 0 end
local floors_dir = os.getenv('PROTOLUA_FLOORS')
if floors_dir and floors_dir ~= '' then
    package.cpath = floors_dir .. '/?.so;' .. package.cpath
    protolua_floors = require('protolua_floors')
end

local rows = dofile(root .. '/bench-harness/lua/matrix.lua')

local version = require('tarantool').version
print(string.format('protolua matrix on Tarantool %s (%s): median of %d x %g s%s per cell; '
    .. 'vs msgpack = protolua msgs/s / msgpack msgs/s, median over repetitions (A B A B ...)%s\n',
    version, jit.version, REPS, BUDGET, thread_clock and ' (thread CPU time)' or '', protolua_floors and '; floor/msgpack = floor msgs/s / msgpack msgs/s, '
        .. 'time/floor = floor msgs/s / protolua msgs/s, same repetitions' or ''))
if protolua_floors then
    print('| message | size | bytes | direction | msgs/s | MB/s | spread | vs msgpack | ratio spread '
        .. '| floor/msgpack | its spread | time/floor | its spread | Lua B/op | floor Lua B/op | msgpack Lua B/op |')
    print('|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
else
    print('| message | size | bytes | direction | msgs/s | MB/s | spread | vs msgpack | ratio spread | Lua B/op | msgpack Lua B/op |')
    print('|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|')
end
local json = {}
local ctor_rows = {}
for _, r in ipairs(rows) do
    local floor_json = ''
    if r.ctor_ratio then
        -- The parse + constructor floor's columns, when the floors have a parser.
        local function opt(x, scale, fmt) return x and string.format(fmt, x * scale) or '–' end
        ctor_rows[#ctor_rows + 1] = string.format('| %s | %s | %.2f | %.2f | %.1f %% | %.2f | %.2f | %.1f %% '
            .. '| %s | %s | %.0f | %.0f |',
            r.schema, r.label, r.msgpack_ratio, r.floor_msgpack_ratio, r.floor_msgpack_ratio_spread * 100,
            r.ctor_msgpack_ratio, r.ctor_ratio, r.ctor_ratio_spread * 100,
            opt(r.pctor_msgpack_ratio, 1, '%.2f'), opt(r.pctor_ratio, 1, '%.2f'), r.lua_bytes, r.ctor_lua_bytes)
        floor_json = string.format(', "ctor_msgpack_ratio": %.4f, "ctor_msgpack_ratio_spread": %.4f, '
            .. '"ctor_ratio": %.4f, "ctor_ratio_spread": %.4f, "ctor_lua_bytes_per_op": %.1f',
            r.ctor_msgpack_ratio, r.ctor_msgpack_ratio_spread, r.ctor_ratio, r.ctor_ratio_spread, r.ctor_lua_bytes)
        if r.pctor_msgpack_ratio then
            floor_json = floor_json .. string.format(', "pctor_msgpack_ratio": %.4f, "pctor_msgpack_ratio_spread": %.4f, '
                .. '"pctor_ratio": %.4f, "pctor_ratio_spread": %.4f', r.pctor_msgpack_ratio,
                r.pctor_msgpack_ratio_spread, r.pctor_ratio, r.pctor_ratio_spread)
        end
    end
    if protolua_floors then
        print(string.format('| %s | %s | %d | %s | %.0f | %.1f | %.1f %% | %.2f | %.1f %% | %.2f | %.1f %% '
            .. '| %.2f | %.1f %% | %.0f | %.0f | %.0f |',
            r.schema, r.label, r.size, r.dir, r.msgs, r.mbs, r.spread * 100, r.msgpack_ratio,
            r.msgpack_ratio_spread * 100, r.floor_msgpack_ratio, r.floor_msgpack_ratio_spread * 100,
            r.floor_ratio, r.floor_ratio_spread * 100, r.lua_bytes, r.floor_lua_bytes, r.msgpack_lua_bytes))
        floor_json = floor_json .. string.format(', "floor_msgpack_ratio": %.4f, "floor_msgpack_ratio_spread": %.4f, '
            .. '"floor_ratio": %.4f, "floor_ratio_spread": %.4f, "floor_lua_bytes_per_op": %.1f',
            r.floor_msgpack_ratio, r.floor_msgpack_ratio_spread, r.floor_ratio, r.floor_ratio_spread,
            r.floor_lua_bytes)
    else
        print(string.format('| %s | %s | %d | %s | %.0f | %.1f | %.1f %% | %.2f | %.1f %% | %.0f | %.0f |',
            r.schema, r.label, r.size, r.dir, r.msgs, r.mbs, r.spread * 100, r.msgpack_ratio,
            r.msgpack_ratio_spread * 100, r.lua_bytes, r.msgpack_lua_bytes))
    end
    json[#json + 1] = string.format('  {"message": "%s", "size": "%s", "bytes": %d, "direction": "%s", '
        .. '"msgs_per_s": %.1f, "mb_per_s": %.3f, "spread": %.4f, "msgpack_ratio": %.4f, '
        .. '"msgpack_ratio_spread": %.4f, "lua_bytes_per_op": %.1f, "msgpack_lua_bytes_per_op": %.1f%s}',
        r.schema, r.label, r.size, r.dir, r.msgs, r.mbs, r.spread, r.msgpack_ratio, r.msgpack_ratio_spread,
        r.lua_bytes, r.msgpack_lua_bytes, floor_json)
end
if #ctor_rows > 0 then
    print('\nDecode against the constructor floor and the parse + constructor floor (bench-harness/src/floor.rs), '
        .. 'same repetitions: '
        .. 'ctor floor/msgpack = its msgs/s / msgpack msgs/s, time/ctor floor = its msgs/s / protolua msgs/s\n')
    print('| message | size | vs msgpack | floor/msgpack | its spread | ctor floor/msgpack | time/ctor floor '
        .. '| its spread | parse+ctor floor/msgpack | time/parse+ctor floor | Lua B/op | ctor floor Lua B/op |')
    print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    print(table.concat(ctor_rows, '\n'))
end
local path = root .. '/bench-harness/results/' .. (CELLS and 'cells' or 'matrix') .. '-tarantool'
    .. (protolua_floors and '-floor' or '') .. '.json'
require('fio').mktree(root .. '/bench-harness/results')
local f = assert(io.open(path, 'w'))
f:write('[\n', table.concat(json, ',\n'), '\n]\n')
f:close()
print('\nJSON: ' .. path)
os.exit(0)
