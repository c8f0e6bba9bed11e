-- The benchmark matrix (../shared/matrix/MATRIX.md): each payload built in
-- Lua by fixtures/matrix.lua encodes to exactly the contract's size, is
-- byte-identical to protoc's golden .bin, and round-trips.
-- Lua 5.1 compatible. Needs the globals set by harness.lua.

local matrix = dofile(FIXTURES .. '/matrix.lua')
local cases = dofile(FIXTURES .. '/golden/cases.lua')

local case_by_name = {}
for _, c in ipairs(cases) do case_by_name[c.name] = c end

local skipped = {}

local function check(kind, label, size)
    local name = matrix.golden_name(kind, label)
    local c = case_by_name[name]
    if c.later then
        skipped[#skipped + 1] = name
        return
    end
    T.test('matrix ' .. name, function()
        local golden = T.readfile(FIXTURES .. '/golden/' .. name .. '.bin')
        T.eq(#golden, size, name .. ' golden size')
        local M = T.schema(c.fds):message(c.type)
        local tbl = matrix[kind](label)
        local bytes = M:encode(tbl)
        T.eq(#bytes, size, name .. ' encoded size')
        if bytes ~= golden then
            error(name .. ': encode is not byte-identical to protoc\n' .. T.bytes_diff(bytes, golden), 0)
        end
        T.eq(M:decode(bytes), tbl, name .. ' decode(encode(x))')
    end)
end

for _, label in ipairs(matrix.person_labels) do
    check('person', label, matrix.person_sizes[label])
end
for _, label in ipairs(matrix.bench_labels) do
    check('bench', label, matrix.bench_sizes[label])
end

if #skipped > 0 then
    io.stdout:write('test_matrix: skipped ', #skipped, ' proto2 group/extension payload(s), ',
        'they belong to the proto2 issue: ', table.concat(skipped, ', '), '\n')
end
