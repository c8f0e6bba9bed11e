-- A first look at the JSON methods against Tarantool's `json` module on
-- the Person cells of the matrix (ops/s, one run, monotonic clock; not the
-- bench-json matrix of issue 29):
--
--   cargo build --release -p protolua --no-default-features --features luajit,module
--   mkdir -p /tmp/jmod && cp target/release/libprotolua.so /tmp/jmod/protolua.so
--   tarantool bench-harness/tarantool/json_quick.lua <repo root> /tmp/jmod
--
-- Columns: json.encode(t) vs encode_json(t), json.decode(s) vs
-- decode_json(s), json.encode(Msg:decode(b)) vs binary_to_json(b),
-- Msg:encode(json.decode(s')) vs json_to_binary(s') (s': proto names).
local root, dir = arg[1], arg[2]
package.cpath = dir .. '/?.so;' .. package.cpath
local clock = require('clock')
local json = require('json')
FIXTURES = root .. '/fixtures'
local protolua = require('protolua')
local matrix = dofile(root .. '/fixtures/matrix.lua')
local hello = protolua.load_file(root .. '/fixtures/descriptors/hello.fds', { serialize = false })
local P = hello:message('hello.Person')
local function bench(f, a)
    local n, t0 = 0, clock.monotonic()
    repeat
        for _ = 1, 50 do f(a) end
        n = n + 50
    until clock.monotonic() - t0 > 0.4
    return n / (clock.monotonic() - t0)
end
print('cell | bytes(json) | json.encode | encode_json | ratio | json.decode | decode_json | ratio | json.encode(decode(b)) | binary_to_json | ratio | encode(json.decode(s)) | json_to_binary | ratio')
for _, size in ipairs({ '10B', '100B', '1KB', '10KB', '100KB' }) do
    local t = matrix.person(size)
    local b = P:encode(t)
    local s = P:encode_json(t)
    local t2 = P:decode(b)
    local r = {}
    local je = bench(function(x) return json.encode(x) end, t2)
    local pe = bench(function(x) return P:encode_json(x) end, t2)
    local jd = bench(function(x) return json.decode(x) end, s)
    local pd = bench(function(x) return P:decode_json(x) end, s)
    local jb = bench(function(x) return json.encode(P:decode(x)) end, b)
    local pb = bench(function(x) return P:binary_to_json(x) end, b)
    local sp = P:encode_json(t, { json_names = false })
    local js = bench(function(x) return P:encode(json.decode(x)) end, sp)
    local ps = bench(function(x) return P:json_to_binary(x) end, s)
    print(string.format('Person/%s | %d | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f', size, #s,
        je, pe, pe / je, jd, pd, pd / jd, jb, pb, pb / jb, js, ps, ps / js))
end
os.exit(0)
