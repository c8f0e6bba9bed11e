-- Lua bytes allocated per op, each matrix cell, with each strategy of the
-- codec switched off in turn (option `strategies`), for the strategy table
-- of docs/ARCHITECTURE.md. Lua's own count (collectgarbage('count')) with
-- the collector stopped: deterministic for a given build and host.
-- usage: <lua> strategy_bytes.lua <dir with protolua.so> [fixtures dir]
-- (luajit or tarantool with the rock's protolua.so, lua5.4 with a lua54 build)
package.cpath = arg[1] .. '/?.so;' .. package.cpath
local protolua = require('protolua')
local FIX = arg[2] or os.getenv('PROTOLUA_FIXTURES') or 'fixtures'
local M = dofile(FIX .. '/matrix.lua')
local N = 200
local names = { 'root_fast', 'root_ctors', 'message_ctors', 'tree_ctors', 'tree_program', 'bulk_arrays',
    'fetch', 'walk' }
local cells = { { 'person', '10B' }, { 'person', '100B' }, { 'person', '1KB' }, { 'person', '10KB' },
    { 'person', '100KB' }, { 'bench', 'min' }, { 'bench', 'mid' } }

local function setup(which, label, opts)
    local s, Msg, t
    if which == 'person' then
        s = protolua.load_file(FIX .. '/descriptors/hello.fds', opts)
        Msg, t = s:message('hello.Person'), M.person(label)
    else
        s = protolua.load_file(FIX .. '/descriptors/proto2_basic.fds', opts)
        Msg, t = s:message('proto2_basic.BenchPayload'), M.bench(label)
    end
    return Msg, t, Msg:encode(t)
end

local function bytes_per_op(Msg, t, b, op)
    local f = op == 'encode' and function() return Msg:encode(t) end or function() return Msg:decode(b) end
    for _ = 1, 20 do f() end -- warm: memos and constructors made
    collectgarbage('collect')
    collectgarbage('stop')
    local before = collectgarbage('count')
    for _ = 1, N do f() end
    local after = collectgarbage('count')
    collectgarbage('restart')
    return math.floor((after - before) * 1024 / N + 0.5)
end

local header = { 'cell', 'op', 'all on' }
for _, n in ipairs(names) do header[#header + 1] = n .. ' off' end
print('| ' .. table.concat(header, ' | ') .. ' |')
print('|' .. string.rep('---|', #header))
for _, c in ipairs(cells) do
    for _, op in ipairs({ 'decode', 'encode' }) do
        local row = { c[1] .. ' ' .. c[2], op }
        local Msg, t, b = setup(c[1], c[2], nil)
        row[#row + 1] = bytes_per_op(Msg, t, b, op)
        for _, n in ipairs(names) do
            Msg, t, b = setup(c[1], c[2], { strategies = { [n] = false } })
            row[#row + 1] = bytes_per_op(Msg, t, b, op)
        end
        print('| ' .. table.concat(row, ' | ') .. ' |')
    end
end
