-- Tarantool-only tests: run by tests/lua/run.lua inside `tarantool` with the
-- rock-installed module; a no-op elsewhere.
if not box then return end

local ffi = require('ffi')
local fiber = require('fiber')
local fio = require('fio')
local json = require('json')
local msgpack = require('msgpack')

local S = protolua.load_file(FIXTURES .. '/descriptors/alltypes3.fds')
local A = S:message('protolua.test.AllTypes')
local H = protolua.load_file(FIXTURES .. '/descriptors/hello.fds')
local P = H:message('hello.Person')

-- What Tarantool's own msgpack makes of an integer: the convention decode follows.
local function tarantool_style(v) return msgpack.decode(msgpack.encode(v)) end

T.test('tarantool: int64/uint64 cdata round-trip at the edges, as msgpack returns them', function()
    local I, U = ffi.typeof('int64_t'), ffi.typeof('uint64_t')
    local signed = { I(2 ^ 53) - 1, I(2 ^ 53), I(2 ^ 53) + 1, -I(2 ^ 53) - 1, I(2 ^ 63 - 1024) + 1023,
        I(-2 ^ 63), I(0), I(-1), I(1000) }
    for _, v in ipairs(signed) do
        for _, f in ipairs({ 'f_int64', 'f_sint64', 'f_sfixed64' }) do
            local d = A:decode(A:encode({ [f] = v }))[f]
            local want = tarantool_style(v)
            if v == 0 then want = nil end -- proto3 implicit presence
            T.eq(type(d), type(want), f .. ' ' .. tostring(v) .. ' type')
            T.eq(d == want, true, f .. ' ' .. tostring(v) .. ' value')
        end
    end
    local unsigned = { U(2 ^ 53) - 1, U(2 ^ 53) + 1, U(2 ^ 63), U(0) - 1, U(7) }
    for _, v in ipairs(unsigned) do
        for _, f in ipairs({ 'f_uint64', 'f_fixed64' }) do
            local d = A:decode(A:encode({ [f] = v }))[f]
            local want = tarantool_style(v)
            T.eq(type(d), type(want), f .. ' ' .. tostring(v) .. ' type')
            T.eq(d == want, true, f .. ' ' .. tostring(v) .. ' value')
        end
    end
    -- numbers and decimal strings encode the same as cdata
    T.eq(A:encode({ f_int64 = '-9223372036854775808' }), A:encode({ f_int64 = I(-2 ^ 63) }))
    T.eq(A:encode({ f_uint64 = 2 ^ 40 }), A:encode({ f_uint64 = U(2 ^ 40) }))
    T.raises('out of range', function() return A:encode({ f_int64 = U(0) - 1 }) end)
    T.raises('out of range', function() return A:encode({ f_uint32 = I(-1) }) end)
    T.eq(type(A:decode(A:encode({ f_int64 = 5 }), { int64 = 'cdata' }).f_int64), 'cdata', 'int64 = cdata')
end)

T.test('tarantool: box.NULL and msgpack.NULL mean absent', function()
    T.eq(P:encode({ name = 'n', age = box.NULL, emails = box.NULL, address = msgpack.NULL }), P:encode({ name = 'n' }))
    T.eq(A:encode({ f_int64 = box.NULL, m_int32 = box.NULL, f_nested = box.NULL }), '')
    -- A required field set to box.NULL is absent, and the error names it.
    local P2 = protolua.load_file(FIXTURES .. '/descriptors/proto2_basic.fds')
    T.raises('missing required field name of proto2_basic.BenchPayload',
        function() return P2:encode('proto2_basic.BenchPayload', { id = 1, name = box.NULL }) end)
end)

T.test('tarantool: serializer metatables are on by default; json/msgpack keep shapes', function()
    local d = A:decode(A:encode({ m_int32 = { [1] = 10, [2] = 20 }, r_int32 = { 1 } }), { empty = true })
    T.eq(getmetatable(d).__serialize, 'map')
    local j = json.decode(json.encode(d))
    T.eq(j.m_int32, { ['1'] = 10, ['2'] = 20 }, 'integer-keyed map stays an object')
    T.eq(json.encode(d.r_string), '[]', 'empty repeated stays an array')
    T.eq(json.encode(d.m_string), '{}', 'empty map stays an object')
    T.eq(msgpack.encode(A:decode('')), '\128', 'empty message is a msgpack map')
    T.eq(getmetatable(A:decode('', { serialize = false })), nil, 'option off')
    local off = protolua.load_file(FIXTURES .. '/descriptors/hello.fds', { serialize = false })
    T.eq(getmetatable(off:decode('hello.Person', '')), nil, 'off per schema')
end)

T.test('tarantool: unknown fields are invisible to json and msgpack, and survive re-encode', function()
    local bin = P:encode({ name = 'n' }) .. '\200\6\42' -- field 100, varint 42
    local d = P:decode(bin)
    T.eq(json.encode(d), '{"name":"n"}')
    T.eq(msgpack.decode(msgpack.encode(d)), { name = 'n' })
    T.eq(P:encode(d), bin)
end)

T.test('tarantool: many fibers share one schema', function()
    local done, bad = 0, {}
    local N = 20
    for k = 1, N do
        fiber.create(function()
            -- A fiber's error would only end it: record it.
            local ok, err = pcall(function()
                for i = 1, 200 do
                    local p = { name = 'fiber' .. k, age = i, emails = { tostring(k), tostring(i) } }
                    local a = { f_int64 = ffi.new('int64_t', 2 ^ 60) + k, f_string = string.rep('x', k * i % 97) }
                    local pb, ab = P:encode(p), A:encode(a)
                    fiber.yield()
                    local p2, a2 = P:decode(pb), A:decode(ab)
                    if p2.name ~= p.name or p2.age ~= i or p2.emails[2] ~= tostring(i) or a2.f_int64 ~= a.f_int64
                        or (a2.f_string or '') ~= a.f_string then
                        bad[#bad + 1] = k .. ':' .. i
                    end
                    if i % 7 == 0 then fiber.yield() end
                end
            end)
            if not ok then bad[#bad + 1] = k .. ': ' .. tostring(err) end
            done = done + 1
        end)
    end
    local deadline = fiber.clock() + 30
    while done < N and fiber.clock() < deadline do fiber.sleep(0.001) end
    T.eq(bad, {}, 'no fiber failed or saw another one\'s data')
    T.eq(done, N, 'all fibers finished')
end)

T.test('tarantool: a decoded message stored in a space reads back and re-encodes', function()
    if type(box.cfg) == 'function' then
        local dir = fio.tempdir()
        box.cfg({ work_dir = dir, wal_mode = 'none', log = dir .. '/tarantool.log', memtx_memory = 64 * 1024 * 1024 })
    end
    local sp = box.schema.space.create('protolua_test', { if_not_exists = true })
    sp:create_index('pk', { if_not_exists = true })
    local orig = { name = 'stored', age = 42, emails = { 'a@b', 'c@d' }, address = { city = 'Moscow' } }
    local bin = P:encode(orig)
    sp:replace({ 1, P:decode(bin) })
    local back = sp:get(1)[2]
    T.eq(P:encode(back), bin, 'a tuple field encodes to the same bytes')
    local big = A:decode(A:encode({ f_int64 = ffi.new('int64_t', -2 ^ 63), f_uint64 = ffi.new('uint64_t', 0) - 1 }))
    sp:replace({ 2, big })
    local b2 = sp:get(2)[2]
    T.eq(b2.f_int64 == ffi.new('int64_t', -2 ^ 63), true, 'int64 min through a tuple')
    T.eq(A:encode(b2), A:encode(big), 'cdata values through a tuple')
    sp:drop()
end)
