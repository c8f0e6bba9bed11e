-- `just bench-json`, its embedded part (bench-harness/src/bin/json.rs):
-- per matrix cell, the Rust heap allocations and bytes per call of the four
-- JSON methods (and of encode/decode beside them), and the Lua bytes per
-- call (collectgarbage('count'), GC stopped), steady state: each method
-- warmed up, then `N` calls counted. Globals from the host: FIXTURES,
-- protolua, rust_allocs() (Rust allocations, bytes so far). Returns an
-- array of rows { cell, op, allocs, alloc_bytes, lua_bytes }.
local M = dofile(FIXTURES .. '/matrix.lua')
local N = 64

local hello = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')
local p2 = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds')
local Person = hello:message('hello.Person')
local Bench = p2:message('proto2_basic.BenchPayload')

local cells = {}
for _, label in ipairs({ '10B', '100B', '1KB', '10KB', '100KB' }) do
    cells[#cells + 1] = { name = 'Person/' .. label, msg = Person, t = M.person(label) }
end
for _, label in ipairs({ 'min', 'mid' }) do
    cells[#cells + 1] = { name = 'BenchPayload/' .. label, msg = Bench, t = M.bench(label) }
end

local function count(f, m, x)
    for _ = 1, 8 do f(m, x) end
    collectgarbage('collect')
    collectgarbage('stop')
    local n0, b0 = rust_allocs()
    local k0 = collectgarbage('count')
    for _ = 1, N do f(m, x) end
    local k1 = collectgarbage('count')
    local n1, b1 = rust_allocs()
    collectgarbage('restart')
    return (n1 - n0) / N, (b1 - b0) / N, (k1 - k0) * 1024 / N
end

local rows = {}
for _, c in ipairs(cells) do
    local m = c.msg
    local b = m:encode(c.t)
    local s = m:encode_json(c.t)
    local args = {
        encode = c.t, decode = b, encode_json = c.t, decode_json = s, binary_to_json = b, json_to_binary = s,
    }
    for _, op in ipairs({ 'encode', 'decode', 'encode_json', 'decode_json', 'binary_to_json', 'json_to_binary' }) do
        local n, nb, lb = count(m[op], m, args[op])
        rows[#rows + 1] = { cell = c.name, op = op, allocs = n, alloc_bytes = nb, lua_bytes = lb }
    end
end
return rows
