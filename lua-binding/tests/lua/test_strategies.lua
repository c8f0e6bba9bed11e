-- Every strategy switch (option `strategies`, docs/ARCHITECTURE.md's
-- strategy table) gives the result the cascade gives with all on: each
-- golden payload decoded and encoded with each switch off alone and with
-- all off, against protoc's bytes and the expected table. Lua 5.1
-- compatible. Needs the globals set by harness.lua.

local cases = dofile(FIXTURES .. '/golden/cases.lua')
local names = { 'root_fast', 'root_ctors', 'message_ctors', 'tree_ctors', 'tree_program', 'bulk_arrays',
    'fetch', 'walk' }

local settings = {}
for _, n in ipairs(names) do settings[#settings + 1] = { [n] = false } end
local all_off = {}
for _, n in ipairs(names) do all_off[n] = false end
settings[#settings + 1] = all_off

local function label(s)
    local off = {}
    for _, n in ipairs(names) do
        if s[n] == false then off[#off + 1] = n end
    end
    return table.concat(off, '+') .. ' off'
end

for _, c in ipairs(cases) do
    if not c.later then
        T.test('strategies: golden ' .. c.name, function()
            local bin = T.readfile(FIXTURES .. '/golden/' .. c.name .. '.bin')
            local expected = dofile(FIXTURES .. '/golden/' .. c.name .. '.lua').value
            for _, s in ipairs(settings) do
                -- A fresh schema per setting, loaded with it: the memos
                -- (shapes, trees, walk hints) start empty under the switch.
                local M = protolua.load_file(FIXTURES .. '/descriptors/' .. c.fds, { strategies = s }):message(c.type)
                for pass = 1, 3 do
                    local what = c.name .. ', ' .. label(s) .. ', pass ' .. pass
                    T.eq(M:decode(bin), expected, what .. ' decode')
                    local enc = M:encode(expected)
                    if c.nan then
                        T.eq(#enc, #bin, what .. ' encoded length')
                    elseif enc ~= bin then
                        error(what .. ': encode is not byte-identical to protoc\n' .. T.bytes_diff(enc, bin), 0)
                    end
                end
                -- The per-call form of the option: the same result.
                local D = T.schema(c.fds):message(c.type)
                T.eq(D:decode(bin, { strategies = s }), expected, c.name .. ', ' .. label(s) .. ' per call')
            end
        end)
    end
end

T.test('strategies: bad switches are refused with their name', function()
    local fds = T.readfile(FIXTURES .. '/descriptors/hello.fds')
    local ok, err = pcall(protolua.load, fds, { strategies = { root_fast = false, treee = false } })
    assert(not ok and err:find("load: strategies has no switch 'treee'", 1, true), err)
    ok, err = pcall(protolua.load, fds, { strategies = { walk = 'no' } })
    assert(not ok and err:find('load: walk must be a boolean', 1, true), err)
    ok, err = pcall(protolua.load, fds, { strategies = false })
    assert(not ok and err:find('load: strategies must be a table', 1, true), err)
end)
