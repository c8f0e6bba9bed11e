-- Golden payloads: every case in fixtures/golden/cases.lua is decoded from
-- protoc's bytes and compared with the expected table, and the expected
-- table is encoded back to byte-identical output. See fixtures/README.md.
-- Lua 5.1 compatible. Needs the globals set by harness.lua.

local cases = dofile(FIXTURES .. '/golden/cases.lua')

local skipped = {}

for _, c in ipairs(cases) do
    if c.later then
        skipped[#skipped + 1] = c.name
    else
        T.test('golden ' .. c.name, function()
            local M = T.schema(c.fds):message(c.type)
            local bin = T.readfile(FIXTURES .. '/golden/' .. c.name .. '.bin')
            local expected = dofile(FIXTURES .. '/golden/' .. c.name .. '.lua').value

            -- decode(protoc bytes) == expectation
            T.eq(M:decode(bin), expected, c.name .. ' decode')

            -- encode(expectation) == protoc bytes
            local enc = M:encode(expected)
            if c.nan then
                -- protoc writes the positive quiet NaN; a Lua NaN's sign and
                -- payload are not portable, so only the length is checked.
                T.eq(#enc, #bin, c.name .. ' encoded length')
            elseif enc ~= bin then
                error(c.name .. ': encode is not byte-identical to protoc\n' .. T.bytes_diff(enc, bin), 0)
            end

            -- decode(encode(x)) == x
            T.eq(M:decode(enc), expected, c.name .. ' decode(encode(x))')

            -- The same bytes whichever way encode visits the fields (probe
            -- or walk, see src/binary/encode/mod.rs): in a fresh schema whose first encode
            -- saw an empty table the top level is walked; on the next pass
            -- every sparse nested message is walked too.
            local W = protolua.load_file(FIXTURES .. '/descriptors/' .. c.fds):message(c.type)
            pcall(W.encode, W, {})
            for pass = 1, 3 do
                local e = W:encode(expected)
                if c.nan then
                    T.eq(#e, #bin, c.name .. ' encoded length, pass ' .. pass)
                elseif e ~= bin then
                    error(c.name .. ': encode pass ' .. pass .. ' (walked) is not byte-identical\n' .. T.bytes_diff(e, bin), 0)
                end
            end
        end)
    end
end

if #skipped > 0 then
    io.stdout:write('test_golden: skipped ', #skipped, ' proto2 group/extension case(s), ',
        'they belong to the proto2 issue: ', table.concat(skipped, ', '), '\n')
end
