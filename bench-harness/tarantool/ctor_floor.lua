-- Decode floors against msgpack inside Tarantool: the C-API decode floor,
-- the constructor decode floor, the parse + constructor floor, the tree
-- constructor floor (bench-harness/src/floor.rs: the whole table from one
-- generated function of all its leaf values; only for tables of at most
-- 200 leaves, else "–"), that after the parse floor, and protolua, each as
-- msgs/s ÷ msgpack.decode's on the same table, timed in slices
-- (thread CPU time),
-- median and [min..max] over the slices.
--
--   PROTOLUA_FLOORS=<dir> tarantool bench-harness/tarantool/ctor_floor.lua <repo root> [slices]
--
-- <dir> holds protolua_floors.so (bench-harness/tarantool/floors.sh);
-- protolua is the rock in <repo root>/.rocks (`just rock`). Option
-- `serialize` as in the matrix. Each floor's table is checked against
-- protolua's decode first (its encoding and its metatable).
--
-- Under plain LuaJIT (`luajit ctor_floor.lua <root> [slices]`, with
-- PROTOLUA_SO=<dir> holding a protolua.so built for LuaJIT) there is no
-- msgpack: the columns are then msgs/s ÷ the C-API floor's.
local root = assert(arg[1], 'usage: ctor_floor.lua <repo root> [slices]')
local slices = tonumber(arg[2]) or 9
package.cpath = assert(os.getenv('PROTOLUA_FLOORS'), 'set PROTOLUA_FLOORS') .. '/?.so;'
    .. (os.getenv('PROTOLUA_SO') and os.getenv('PROTOLUA_SO') .. '/?.so;' or '') .. root
    .. '/.rocks/lib/tarantool/?.so;' .. package.cpath
local protolua = require('protolua')
local floors = require('protolua_floors')
local now, in_tarantool = dofile(root .. '/bench-harness/lua/clock.lua')
local msgpack = in_tarantool and require('msgpack') or nil
local FIX = root .. '/fixtures'
local M = dofile(FIX .. '/matrix.lua')
local opts = in_tarantool and { serialize = true } or nil
local P = protolua.load_file(FIX .. '/descriptors/hello.fds', opts):message('hello.Person')
local B = protolua.load_file(FIX .. '/descriptors/proto2_basic.fds', opts):message('proto2_basic.BenchPayload')

-- `f(self, arg)` n times, as the matrix calls `Msg.decode(Msg, s)`: no
-- wrapper function around protolua's.
local function time(f, self, arg, n)
    local t0 = now()
    for _ = 1, n do f(self, arg) end
    return now() - t0
end

local base = msgpack and 'msgpack' or 'floor'
print(string.format('| cell | floor ÷ %s | constructor floor ÷ %s | protolua ÷ %s | constructor floor ÷ floor '
    .. '| parse + constructor floor ÷ %s | tree constructor floor ÷ %s | parse + tree floor ÷ %s |',
    base, base, base, base, base, base))
print('|---|---:|---:|---:|---:|---:|---:|---:|')
for _, cell in ipairs({ { P, 'person', '10B' }, { P, 'person', '100B' }, { P, 'person', '1KB' },
        { P, 'person', '10KB' }, { P, 'person', '100KB' }, { B, 'bench', 'min' }, { B, 'bench', 'mid' } }) do
    local Msg, which, label = cell[1], cell[2], cell[3]
    local t = which == 'person' and M.person(label) or M.bench(label)
    local b = Msg:encode(t)
    local decoded = Msg:decode(b)
    local mp = msgpack and msgpack.encode(decoded)
    local dec_floor, _, _, _, ctor_floor, _, parse_ctor_floor, tree_floor, parse_tree_floor =
        floors(decoded, which == 'person' and 'hello.Person' or 'proto2_basic.BenchPayload')
    -- The floors build the table protolua decodes: the same bytes when
    -- encoded, the same metatable (each floor sets them as it recorded).
    for name, f in pairs({ floor = dec_floor, ['constructor floor'] = ctor_floor,
            ['parse + constructor floor'] = parse_ctor_floor, ['tree floor'] = tree_floor or dec_floor,
            ['parse + tree floor'] = parse_tree_floor or dec_floor }) do
        local got = f(nil, b)
        assert(Msg:encode(got) == b and getmetatable(got) == getmetatable(decoded), name .. ': another table')
    end
    local proto = Msg.decode
    -- Without msgpack, the C-API floor is the reference.
    local mpdec = msgpack and function(_, s) return msgpack.decode(s) end or dec_floor
    local mparg = msgpack and mp or b
    local n = 1
    while time(proto, Msg, b, n) < 0.02 do n = n * 2 end
    local r = { {}, {}, {}, {}, {}, {}, {} }
    for i = 1, slices do
        local tm = time(mpdec, nil, mparg, n)
        local tf = time(dec_floor, nil, b, n)
        local tc = time(ctor_floor, nil, b, n)
        local tp = time(proto, Msg, b, n)
        local tpc = time(parse_ctor_floor, nil, b, n)
        local tt = tree_floor and time(tree_floor, nil, b, n)
        r[1][i], r[2][i], r[3][i], r[4][i], r[5][i] = tm / tf, tm / tc, tm / tp, tf / tc, tm / tpc
        if tt then r[6][i] = tm / tt end
        local tpt = parse_tree_floor and time(parse_tree_floor, nil, b, n)
        if tpt then r[7][i] = tm / tpt end
    end
    local out = {}
    for j = 1, 7 do
        table.sort(r[j])
        out[j] = #r[j] == 0 and '–'
            or string.format('%.2f [%.2f..%.2f]', r[j][math.ceil(slices / 2)], r[j][1], r[j][slices])
    end
    print(string.format('| %s %s | %s |', which, label, table.concat(out, ' | ')))
end
