-- Differential fuzz of LuaJIT's constructor decode path
-- (DecodeCtx::message_by_ctor, the root fast path's shape constructors)
-- against the C API path, in one process: every input is decoded with the
-- options drawn and again with `constructors = false` added, and the two
-- results (tables, keys, metatables, unknown fields) or error strings must
-- be the same. Inputs are generated from the fixture schemas' fields, then
-- mutated (cuts, splices, merges, wrong wire types, unknown fields, bad
-- varints). A third of the draws also switch a random part of the
-- cascade off (option `strategies`).
--
--   luajit fuzz/lua/ctor_diff.lua DIR [SECONDS] [SEED] [MODE]    (`just fuzz-ctor`)
--
-- DIR holds protolua.so built for LuaJIT (`cargo build --release -p
-- protolua --no-default-features --features luajit,module --target-dir
-- target/module`, the .so copied as protolua.so). MODE: 'plain' (default), 'hooks' (a count hook
-- and __gc finalizers decode with the same schemas while the decodes run:
-- re-entrancy), 'nomemo' (schemas reloaded every few inputs, so the
-- memo and the constructor cache start cold). FAIL_LOG=<file>: mismatching
-- inputs are appended to it (tab-separated, hex). Exits 1 on a mismatch.

local SO_DIR, SECS, SEED, MODE = arg[1], tonumber(arg[2] or 60), tonumber(arg[3] or 1), arg[4] or 'plain'
assert(SO_DIR, 'usage: luajit fuzz/lua/ctor_diff.lua DIR [SECONDS] [SEED] [MODE]')
local A = assert(package.loadlib(SO_DIR .. '/protolua.so', 'luaopen_protolua'))()
local B = A
local ffi = require('ffi')
local DIR = os.getenv('FDS_DIR') or ((arg[0]:match('^(.*/)fuzz/lua/[^/]*$') or './') .. 'fixtures/descriptors/')

local STRATEGIES = { 'root_fast', 'root_ctors', 'message_ctors', 'tree_ctors', 'tree_program', 'bulk_arrays' }
local function rd(p) local f = assert(io.open(p, 'rb')); local s = f:read('*a'); f:close(); return s end
local FILES = {
    hello = rd(DIR .. 'hello.fds'), proto2_basic = rd(DIR .. 'proto2_basic.fds'),
    alltypes3 = rd(DIR .. 'alltypes3.fds'), many_required = rd(DIR .. 'many_required.fds'),
    conformance = rd(DIR .. 'conformance.fds'),
}
local TARGETS = {
    { 'hello', 'hello.Person', 4 }, { 'hello', 'hello.Address', 1 },
    { 'proto2_basic', 'proto2_basic.BenchPayload', 4 }, { 'proto2_basic', 'proto2_basic.Inner', 1 },
    { 'alltypes3', 'protolua.test.AllTypes', 3 }, { 'alltypes3', 'protolua.test.Node', 3 },
    { 'many_required', 'protolua.test.Wide', 3 }, { 'many_required', 'protolua.test.ManyRequired', 1 },
    { 'conformance', 'protobuf_test_messages.proto2.TestAllTypesProto2', 2 },
    { 'conformance', 'protobuf_test_messages.proto3.TestAllTypesProto3', 1 },
    { 'conformance', 'protobuf_test_messages.proto2.TestAllRequiredTypesProto2', 1 },
    { 'conformance', 'protobuf_test_messages.editions.TestAllTypesEdition2023', 1 },
}
local WEIGHTED = {}
for i, t in ipairs(TARGETS) do for _ = 1, t[3] do WEIGHTED[#WEIGHTED + 1] = i end end

local rand = math.random
math.randomseed(SEED)

-- Schemas, loaded in both modules (reloaded in 'nomemo' mode).
local SA, SB
local load_opts
local function load_all()
    SA, SB = {}, {}
    load_opts = nil
    if rand(4) == 1 then load_opts = { serialize = rand(2) == 1, unknown = rand(2) == 1 and 'drop' or 'keep' } end
    for k, bytes in pairs(FILES) do
        SA[k] = A.load(bytes, load_opts)
        SB[k] = SA[k]
    end
end
load_all()

-- Field tables per message (from A; identical in B), enums' value sets.
local FIELDS, ENUMV, LOOKUP = {}, {}, {}
local function fields_of(file, name)
    local key = file .. '|' .. name
    local f = FIELDS[key]
    if not f then f = SA[file]:message(name):fields(); FIELDS[key] = f end
    return f
end
local function enum_values(file, name)
    local key = file .. '|' .. name
    local v = ENUMV[key]
    if not v then
        v = {}
        for _, n in pairs(SA[file]:enum(name)) do v[#v + 1] = n end
        ENUMV[key] = v
    end
    return v
end

---------------------------------------------------------------------------
-- Wire writing.
local char, concat = string.char, table.concat

local function varint(n) -- n: non-negative Lua number < 2^53
    local t = {}
    repeat
        local b = n % 128
        n = (n - b) / 128
        if n > 0 then b = b + 128 end
        t[#t + 1] = char(b)
    until n == 0
    return concat(t)
end
local function rand_varint()
    local r = rand(20)
    if r == 18 and rand(5) > 1 then r = 19 end
    if r <= 8 then return varint(rand(0, 127)) end
    if r <= 12 then return varint(rand(0, 2 ^ 20)) end
    if r <= 14 then return varint(rand(0, 2 ^ 31 - 1) * 2 ^ 20 + rand(0, 2 ^ 20)) end
    if r <= 16 then -- 10-byte (negative)
        local t = {}
        for i = 1, 9 do t[i] = char(rand(128, 255)) end
        t[10] = char(rand(0, 1))
        return concat(t)
    end
    if r == 17 then return char(0x80 + rand(0, 127), 0) end -- overlong
    if r == 18 then -- bad: 10th byte too big or unterminated
        local t = {}
        for i = 1, 10 do t[i] = char(rand(128, 255)) end
        if rand(2) == 1 then t[10] = char(rand(2, 127)) end
        return concat(t)
    end
    if r == 19 then return varint(1) end
    return varint(0)
end
local function rbytes(n)
    local t = {}
    for i = 1, n do t[i] = char(rand(0, 255)) end
    return concat(t)
end
local function tag(num, wt)
    local s = varint(num * 8 + wt)
    if rand(60) == 1 and #s < 5 then -- overlong tag encoding
        local b = { s:byte(1, -1) }
        b[#b] = b[#b] + 128
        b[#b + 1] = 0
        s = char(unpack(b))
    end
    return s
end
local function len(s) return varint(#s) .. s end

local WT = {
    int32 = 0, int64 = 0, uint32 = 0, uint64 = 0, sint32 = 0, sint64 = 0, bool = 0, enum = 0,
    fixed64 = 1, sfixed64 = 1, double = 1, fixed32 = 5, sfixed32 = 5, float = 5,
    string = 2, bytes = 2, message = 2, map = 2, group = 3,
}
local STRINGS = { '', 'a', 'hello', 'héllo', '\255\254', 'x\0y', string.rep('z', 40), string.rep('q', 130) }

local gen_body
local function scalar_value(file, f, ty, tyname)
    ty = ty or f.type
    local wt = WT[ty]
    if ty == 'enum' then
        local vs = enum_values(file, tyname or f.type_name)
        if rand(4) == 1 then return rand_varint() end
        local v = vs[rand(#vs)]
        if v < 0 then return string.rep('\255', 9) .. '\1' end
        return varint(v)
    elseif ty == 'bool' then
        return rand(5) == 1 and rand_varint() or varint(rand(0, 1))
    elseif wt == 0 then
        return rand_varint()
    elseif wt == 1 then
        return rbytes(8)
    elseif wt == 5 then
        return rbytes(4)
    elseif ty == 'string' or ty == 'bytes' then
        return len(rand(12) == 1 and rbytes(rand(0, 12)) or STRINGS[rand(#STRINGS)])
    end
    error('scalar of ' .. tostring(ty))
end

local function unknown_field(depth)
    local num = ({ 9, 50, 99, 1234, 536870911, rand(1, 300) })[rand(6)]
    local wt = ({ 0, 1, 2, 5, 3 })[rand(5)]
    if wt == 0 then return tag(num, 0) .. rand_varint() end
    if wt == 1 then return tag(num, 1) .. rbytes(8) end
    if wt == 5 then return tag(num, 5) .. rbytes(4) end
    if wt == 2 then return tag(num, 2) .. len(rbytes(rand(0, 6))) end
    local inner = (depth < 3 and rand(2) == 1) and unknown_field(depth + 1) or ''
    return tag(num, 3) .. inner .. tag(num, 4)
end

-- One field occurrence (or a run of them) of field f, as a list of segments.
local function field_occ(file, name, f, depth, segs)
    local ty = f.type
    local num = f.number
    if rand(25) == 1 then -- wrong wire type
        local wt = ({ 0, 1, 2, 5 })[rand(4)]
        if wt == 0 then segs[#segs + 1] = tag(num, 0) .. rand_varint()
        elseif wt == 1 then segs[#segs + 1] = tag(num, 1) .. rbytes(8)
        elseif wt == 5 then segs[#segs + 1] = tag(num, 5) .. rbytes(4)
        else segs[#segs + 1] = tag(num, 2) .. len(rbytes(rand(0, 5))) end
        return
    end
    if ty == 'map' then
        local n = rand(0, 3)
        for _ = 1, n do
            local e = {}
            if rand(6) > 1 then e[#e + 1] = tag(1, WT[f.key_type]) .. scalar_value(file, f, f.key_type) end
            if rand(6) > 1 then
                local vt = f.value_type
                if vt == 'message' then
                    e[#e + 1] = tag(2, 2) .. len(gen_body(file, f.value_type_name, depth + 1))
                else
                    e[#e + 1] = tag(2, WT[vt]) .. scalar_value(file, f, vt, f.value_type_name)
                end
            end
            if rand(8) == 1 then e[#e + 1] = unknown_field(depth) end
            segs[#segs + 1] = tag(num, 2) .. len(concat(e))
        end
        return
    end
    local function one()
        if ty == 'message' then
            return tag(num, 2) .. len(gen_body(file, f.type_name, depth + 1))
        elseif ty == 'group' then
            local endnum = rand(30) == 1 and num + 1 or num
            local trail = rand(40) == 1 and '' or tag(endnum, 4)
            return tag(num, 3) .. gen_body(file, f.type_name, depth + 1) .. trail
        else
            return tag(num, WT[ty]) .. scalar_value(file, f)
        end
    end
    if f.label == 'repeated' then
        local packable = WT[ty] ~= 2 and WT[ty] ~= 3
        if packable and rand(2) == 1 then
            local vals = {}
            -- Now and then a long run: an array made by one call
            -- (src/binary/decode/ctor/bulk.rs, 32 values or more).
            local n = rand(5) == 1 and 0 or rand(30) == 1 and rand(30, 200) or rand(1, 6)
            for i = 1, n do vals[i] = scalar_value(file, f) end
            local body = concat(vals)
            if rand(20) == 1 and #body > 0 then body = body:sub(1, -2) end
            segs[#segs + 1] = tag(num, 2) .. len(body)
        else
            -- Now and then a long run of a scalar: past the 64 values
            -- that `fresh_varint_run` reads before it makes the array.
            -- Sub-messages now and then a run of 30-40: arrays of messages
            -- made by one call on the caller's stack.
            local n = (ty ~= 'message' and ty ~= 'group' and depth < 3 and rand(40) == 1) and rand(60, 140)
                or (depth < 2 and rand(60) == 1) and rand(30, 40) or rand(1, 4)
            for _ = 1, n do segs[#segs + 1] = one() end
        end
    else
        segs[#segs + 1] = one()
    end
end

gen_body = function(file, name, depth, segs_out)
    local fl = fields_of(file, name)
    local segs = segs_out or {}
    if depth > 6 or #fl == 0 then
        if rand(3) == 1 and #fl > 0 then field_occ(file, name, fl[rand(#fl)], 99, segs) end
        if depth > 8 then segs = {} end
        return concat(segs)
    end
    local n = rand(0, depth <= 1 and 40 or math.max(2, 12 - 2 * depth))
    if rand(6) == 1 then n = rand(0, 3) end
    -- Sometimes a message's every field once, in order (shapes with many fields).
    if rand(8) == 1 then
        for _, f in ipairs(fl) do
            if rand(3) > 1 then field_occ(file, name, f, depth, segs) end
        end
    end
    for _ = 1, n do
        local r = rand(30)
        if r == 1 then
            segs[#segs + 1] = unknown_field(depth)
        elseif r == 2 and rand(3) == 1 then
            segs[#segs + 1] = rbytes(rand(1, 3)) -- garbage
        else
            local f = fl[rand(#fl)]
            if f.type == 'message' or f.type == 'group' or f.type == 'map' then
                if rand(depth + 1) == 1 then field_occ(file, name, f, depth, segs) end
            else
                field_occ(file, name, f, depth, segs)
            end
        end
    end
    return concat(segs)
end

---------------------------------------------------------------------------
-- Mutations on the top level's segment list and the bytes.
local function mutate(segs, pool)
    local op = rand(9)
    if op == 1 and #segs > 0 then -- duplicate a segment
        local i = rand(#segs)
        table.insert(segs, rand(#segs + 1), segs[i])
    elseif op == 2 and #segs > 1 then -- reorder
        for i = #segs, 2, -1 do
            if rand(3) == 1 then local j = rand(i); segs[i], segs[j] = segs[j], segs[i] end
        end
    elseif op == 3 then -- insert unknown
        table.insert(segs, rand(#segs + 1), unknown_field(1))
    elseif op == 4 and #segs > 0 then -- drop
        table.remove(segs, rand(#segs))
    end
    local s = concat(segs)
    local op2 = rand(10)
    if op2 == 1 and #s > 0 then -- byte flips
        for _ = 1, rand(1, 3) do local i = rand(#s); s = s:sub(1, i - 1) .. char(rand(0, 255)) .. s:sub(i + 1) end
    elseif op2 == 2 and #s > 0 then -- truncate
        s = s:sub(1, rand(0, #s - 1))
    elseif op2 == 3 and #pool > 0 then -- splice
        local o = pool[rand(#pool)]
        s = s:sub(1, rand(0, #s)) .. o:sub(rand(1, #o + 1))
    elseif op2 == 4 and #s > 0 then -- bit flip
        local i = rand(#s)
        s = s:sub(1, i - 1) .. char(bit.bxor(s:byte(i), 2 ^ rand(0, 7))) .. s:sub(i + 1)
    end
    return s
end

---------------------------------------------------------------------------
-- Deep comparison.
local function hex(s)
    if s == nil then return 'nil' end
    return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
end
local function describe(v)
    if type(v) == 'string' then return string.format('%q', v) end
    return tostring(v)
end
local function mt_sig(t)
    local mt = getmetatable(t)
    if mt == nil then return 'nil' end
    if type(mt) ~= 'table' then return type(mt) end
    local idx = rawget(mt, '__index')
    return 'mt(' .. tostring(rawget(mt, '__serialize')) .. ',' .. type(idx) .. ')'
end
local deq
deq = function(a, b, path)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return false, path .. ': type ' .. ta .. ' ~= ' .. tb end
    if ta == 'number' then
        if a ~= a and b ~= b then return true end
        if a == b and (a ~= 0 or 1 / a == 1 / b) then return true end
        return false, path .. string.format(': %.17g ~= %.17g', a, b)
    end
    if ta == 'cdata' then
        if ffi.typeof(a) ~= ffi.typeof(b) or a ~= b then return false, path .. ': ' .. tostring(a) .. ' ~= ' .. tostring(b) end
        return true
    end
    if ta ~= 'table' then
        if a == b then return true end
        return false, path .. ': ' .. describe(a) .. ' ~= ' .. describe(b)
    end
    if mt_sig(a) ~= mt_sig(b) then return false, path .. ': metatable ' .. mt_sig(a) .. ' ~= ' .. mt_sig(b) end
    local ma, mb = getmetatable(a), getmetatable(b)
    if type(ma) == 'table' and type(mb) == 'table' and type(rawget(ma, '__index')) == 'table' then
        local ok, why = deq(rawget(ma, '__index'), rawget(mb, '__index'), path .. '<__index>')
        if not ok then return false, why end
    end
    local ua, ub = A.unknown(a), B.unknown(b)
    if ua ~= ub then return false, path .. ': unknown ' .. hex(ua) .. ' ~= ' .. hex(ub) end
    local na, nb = 0, 0
    for k, v in next, a do
        na = na + 1
        local bv
        if type(k) == 'cdata' then
            for kk, vv in next, b do if type(kk) == 'cdata' and kk == k and deq(v, vv, '') then bv = vv end end
        else
            bv = rawget(b, k)
        end
        if bv == nil then return false, path .. '[' .. describe(k) .. ']: missing in B' end
        local ok, why = deq(v, bv, path .. '[' .. describe(k) .. ']')
        if not ok then return false, why end
    end
    for _ in next, b do nb = nb + 1 end
    if na ~= nb then return false, path .. ': ' .. na .. ' keys ~= ' .. nb end
    if #a ~= #b then return false, path .. ': # ' .. #a .. ' ~= ' .. #b end
    return true
end

---------------------------------------------------------------------------
-- Options.
local INT64 = { 'auto', 'number', 'string', 'cdata' }
local function rand_opts()
    if rand(5) == 1 then return nil end
    local o = {}
    if rand(2) == 1 then o.serialize = rand(2) == 1 end
    if rand(3) == 1 then o.unknown = rand(2) == 1 and 'drop' or 'keep' end
    if rand(8) == 1 then o.empty = rand(2) == 1 end
    if rand(8) == 1 then o.defaults = ({ 'none', 'values', 'metatable' })[rand(3)] end
    if rand(3) == 1 then o.required = rand(2) == 1 end
    if rand(4) == 1 then o.max_depth = rand(3) == 1 and rand(1, 4) or rand(1, 200) end
    if rand(2) == 1 then o.int64 = INT64[rand(4)] end
    if rand(3) == 1 then o.enums = rand(2) == 1 and 'name' or 'number' end
    if rand(5) == 1 then o.utf8 = rand(2) == 1 end
    -- A random part of the cascade switched off (option `strategies`): the
    -- rest must still give what the C API path gives.
    if rand(3) == 1 then
        o.strategies = {}
        for _, n in ipairs(STRATEGIES) do
            if rand(3) == 1 then o.strategies[n] = false end
        end
    end
    return o
end
local function describe_opts(o)
    if o == nil then return 'nil' end
    local parts = {}
    for k, v in pairs(o) do
        parts[#parts + 1] = k .. '=' .. (type(v) == 'table' and describe_opts(v) or describe(v))
    end
    table.sort(parts)
    return '{' .. table.concat(parts, ', ') .. '}'
end

---------------------------------------------------------------------------
local stats = { n = 0, ok = 0, err = 0, fail = 0, errs = {} }
local FAILS = {}
local check_results
local function decode_both(ti, input, opts, via)
    local file, name = TARGETS[ti][1], TARGETS[ti][2]
    local ra, rb
    -- B: the same options, the C API path.
    local off = { constructors = false }
    for k, v in pairs(opts or {}) do off[k] = v end
    if via == 1 then
        ra = { pcall(SA[file].decode, SA[file], name, input, opts) }
        rb = { pcall(SB[file].decode, SB[file], name, input, off) }
    else
        local ma, mb = SA[file]:message(name), SB[file]:message(name)
        ra = { pcall(ma.decode, ma, input, opts) }
        rb = { pcall(mb.decode, mb, input, off) }
    end
    return ra, rb
end

local function check(ti, input, opts, via)
    local ra, rb = decode_both(ti, input, opts, via)
    -- Compare without a hook (under a call hook this LuaJIT's `next` loops
    -- miscount: false mismatches even between two identical builds).
    local hook = { debug.gethook() }
    debug.sethook()
    local r = { pcall(function() return check_results(ti, input, opts, via, ra, rb) end) }
    if hook[1] then debug.sethook(unpack(hook)) end
    if not r[1] then error(r[2], 0) end
    return r[2]
end
check_results = function(ti, input, opts, via, ra, rb)
    stats.n = stats.n + 1
    local why
    if ra[1] ~= rb[1] then
        why = 'status ' .. tostring(ra[1]) .. ' ~= ' .. tostring(rb[1]) .. ' (' .. tostring(ra[2]) .. ' | ' .. tostring(rb[2]) .. ')'
    elseif not ra[1] then
        stats.err = stats.err + 1
        local e = tostring(ra[2]):gsub('^protolua: decode [%w_.]+: ', ''):gsub('%d+', 'N'):sub(1, 50)
        stats.errs[e] = (stats.errs[e] or 0) + 1
        if ra[2] ~= rb[2] then why = 'errors differ: ' .. tostring(ra[2]) .. ' | ' .. tostring(rb[2]) end
    else
        stats.ok = stats.ok + 1
        local ok, w = deq(ra[2], rb[2], 'value')
        if not ok then why = w end
    end
    if why then
        stats.fail = stats.fail + 1
        local line = string.format('FAIL %s via=%s opts=%s load_opts=%s input=%s\n  %s', TARGETS[ti][2],
            via == 1 and 'schema:decode' or 'Msg:decode', describe_opts(opts), describe_opts(load_opts), hex(input), why)
        if #FAILS < 50 then
            FAILS[#FAILS + 1] = line
            local f = os.getenv('FAIL_LOG') and io.open(os.getenv('FAIL_LOG'), 'a')
            if f then
                f:write(string.format('%s\t%s\t%d\t%s\t%s\t%s\n', TARGETS[ti][1], TARGETS[ti][2], via,
                    describe_opts(opts), describe_opts(load_opts), hex(input)))
                f:close()
            end
        end
        if stats.fail <= 20 then print(line) end
        if os.getenv('FAIL_DUMP') and stats.fail <= 3 then
            local function show(t, d) d = d or 0 if type(t) ~= 'table' then return tostring(t) end if d > 3 then return '{..}' end local k = {} for a, v in pairs(t) do k[#k+1] = tostring(a) .. '=' .. show(v, d+1) end table.sort(k) return '{' .. table.concat(k, ' ') .. '}' end
            print('  A:', show(ra[2])) print('  B:', show(rb[2]))
            local ra2 = decode_both(ti, input, opts, via)
            print('  A again:', show(ra2[2]))
            local h = { debug.gethook() }
            debug.sethook()
            local ra3 = decode_both(ti, input, opts, via)
            print('  A nohook:', show(ra3[2]))
            debug.sethook(unpack(h))
        end
    end
    return ra[1] and ra[2]
end

---------------------------------------------------------------------------
-- Re-entrancy (MODE 'hooks'): a count hook and __gc finalizers decoding.
local nested_inputs = {}
local in_hook = false
local function nested_decode()
    if in_hook or #nested_inputs == 0 then return end
    in_hook = true
    local ti = WEIGHTED[rand(#WEIGHTED)]
    local file, name = TARGETS[ti][1], TARGETS[ti][2]
    local s = nested_inputs[rand(#nested_inputs)]
    local sa, sb = SA and SA[file], SB and SB[file]
    if not (sa and sb) then in_hook = false return end
    pcall(sa.decode, sa, name, s)
    pcall(sb.decode, sb, name, s)
    in_hook = false
end
if MODE == 'hooks' then
    debug.sethook(function() if rand(3) == 1 then nested_decode() end end, '', 7)
end
local function gc_bomb()
    local p = newproxy(true)
    getmetatable(p).__gc = function() nested_decode() end
end

local pool = {}
local t0 = os.time()
local iter = 0
while os.time() - t0 < SECS do
    iter = iter + 1
    if MODE == 'nomemo' and iter % 5 == 0 then load_all() end
    if MODE ~= 'nomemo' and iter % 20000 == 0 then load_all() end
    local ti = WEIGHTED[rand(#WEIGHTED)]
    local file, name = TARGETS[ti][1], TARGETS[ti][2]
    local segs = {}
    gen_body(file, name, 1, segs)
    local input
    if rand(3) == 1 then input = concat(segs) else input = mutate(segs, pool) end
    if #pool < 200 then pool[#pool + 1] = input else pool[rand(#pool)] = input end
    if MODE == 'hooks' then
        nested_inputs[#nested_inputs + 1 > 50 and rand(50) or #nested_inputs + 1] = input
        for _ = 1, rand(0, 3) do gc_bomb() end
    end
    local opts = rand_opts()
    local via = rand(2)
    local t = check(ti, input, opts, via)
    -- A canonical encoding of what decoded (valid encodes of random tables).
    if t and rand(2) == 1 then
        local ma = SA[file]:message(name)
        local ok, bytes = pcall(ma.encode, ma, t, { required = false })
        if ok then
            check(ti, bytes, rand_opts(), rand(2))
            if rand(2) == 1 then
                local s2 = {}
                s2[1] = bytes
                check(ti, mutate(s2, pool), rand_opts(), rand(2))
            end
        end
    end
end
debug.sethook()

print(string.format('mode=%s seed=%d: %d decodes (%d ok, %d errors), %d mismatches', MODE, SEED, stats.n, stats.ok,
    stats.err, stats.fail))
local es = {}
for e, c in pairs(stats.errs) do es[#es + 1] = { e, c } end
table.sort(es, function(x, y) return x[2] > y[2] end)
for i = 1, math.min(12, #es) do print(string.format('  %7d  %s', es[i][2], es[i][1])) end
if stats.fail > 0 then os.exit(1) end
