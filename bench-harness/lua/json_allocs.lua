-- `just bench-json`, its embedded part (bench-harness/src/bin/json.rs):
-- per matrix cell, the Rust heap allocations and bytes per call of the four
-- JSON methods (and of encode/decode beside them), and the Lua bytes per
-- call (collectgarbage('count'), GC stopped), steady state: each method
-- warmed up on 64 variants of the cell, then counted over them. Globals from the host: FIXTURES,
-- protolua, rust_allocs() (Rust allocations, bytes so far). Returns an
-- array of rows { cell, op, allocs, alloc_bytes, lua_bytes }.
local M = dofile(FIXTURES .. '/matrix.lua')
-- Distinct inputs per call (variants of the cell's table): LuaJIT and Lua
-- 5.4 intern strings, so repeating one input would find its output (and
-- decode_json's intermediate bytes) already made and count no Lua bytes.
local VARIANTS = 64

local hello = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')
local p2 = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds')
local Person = hello:message('hello.Person')
local Bench = p2:message('proto2_basic.BenchPayload')

local cells = {}
for _, label in ipairs({ '10B', '100B', '1KB', '10KB', '100KB' }) do
    cells[#cells + 1] = { name = 'Person/' .. label, msg = Person, t = M.person(label), vary = 'age' }
end
for _, label in ipairs({ 'min', 'mid' }) do
    cells[#cells + 1] = { name = 'BenchPayload/' .. label, msg = Bench, t = M.bench(label), vary = 'id' }
end

local function variants(c)
    local ts = {}
    for i = 1, VARIANTS do
        local v = {}
        for k, x in pairs(c.t) do v[k] = x end
        v[c.vary] = c.t[c.vary] + i - 1
        ts[i] = v
    end
    return ts
end

-- Each op's inputs, made just before it is counted (no other op's input
-- or output is alive then to be found interned).
local inputs = {
    encode = function(m, ts) return ts end,
    decode = function(m, ts) local r = {} for i, t in ipairs(ts) do r[i] = m:encode(t) end return r end,
    encode_json = function(m, ts) return ts end,
    decode_json = function(m, ts) local r = {} for i, t in ipairs(ts) do r[i] = m:encode_json(t) end return r end,
}
inputs.binary_to_json = inputs.decode
inputs.json_to_binary = inputs.decode_json

local function count(f, m, args)
    for i = 1, #args do f(m, args[i]) end -- warm (traces, buffers)
    collectgarbage('collect')
    collectgarbage('stop')
    local n0, b0 = rust_allocs()
    local k0 = collectgarbage('count')
    for i = 1, #args do f(m, args[i]) end
    local k1 = collectgarbage('count')
    local n1, b1 = rust_allocs()
    collectgarbage('restart')
    return (n1 - n0) / #args, (b1 - b0) / #args, (k1 - k0) * 1024 / #args
end

local rows = {}
for _, c in ipairs(cells) do
    local m = c.msg
    local ts = variants(c)
    for _, op in ipairs({ 'encode', 'decode', 'encode_json', 'decode_json', 'binary_to_json', 'json_to_binary' }) do
        local args = inputs[op](m, ts)
        local n, nb, lb = count(m[op], m, args)
        rows[#rows + 1] = { cell = c.name, op = op, allocs = n, alloc_bytes = nb, lua_bytes = lb }
        args = nil
        collectgarbage('collect')
    end
end
return rows
