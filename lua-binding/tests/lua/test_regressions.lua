-- Regressions found by fuzzing (fuzz/regressions/). Lua 5.1 compatible.

T.test('regression: a finalizer that encodes during the result push does not clobber the result', function()
    local P = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
    local want = P:encode({ name = string.rep('a', 200) })
    local other = { name = string.rep('b', 300) }
    for _ = 1, 200 do
        -- Garbage with a finalizer that encodes with the same schema; a GC
        -- step inside the result push may run it.
        for _ = 1, 20 do
            local u = newproxy and newproxy(true) or setmetatable({}, {})
            if newproxy then getmetatable(u).__gc = function() P:encode(other) end
            else setmetatable(u, { __gc = function() P:encode(other) end }) end
        end
        T.eq(P:encode({ name = string.rep('a', 200) }), want)
    end
end)
