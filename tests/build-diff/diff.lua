-- Differential test of two protolua builds (review-5): run this script once
-- per build, each in its own process, and compare the output files.
--
--   luajit tests/build-diff/diff.lua SODIR FDSDIR OUT SEED COUNT [PHASE]
--
-- SODIR holds the build as protolua.so; FDSDIR is fixtures/descriptors;
-- every line of OUT is one case: its input, then the result (bytes as hex,
-- a decoded table serialized with sorted keys, or the error message).
-- PHASE: 'all' (default), 'decode', 'encode', 'hooks'. Lua 5.1, LuaJIT
-- and 5.4. The generator only depends on SEED, so both builds see the same
-- cases; the output differs only where the builds behave differently.

local sodir, fdsdir, outpath, seed, count, phase = arg[1], arg[2], arg[3], tonumber(arg[4]), tonumber(arg[5]), arg[6] or 'all'
package.cpath = sodir .. '/?.so;' .. package.cpath
local protolua = require('protolua')
local is_luajit = type(jit) == 'table'
local ffi = is_luajit and require('ffi') or nil
local out = assert(io.open(outpath, 'wb'))
local ncases = 0

local wire = dofile((arg[0]:match('^(.*/)') or './') .. 'wire.lua')
local rnd, chance, pick = wire.rng(seed)
local hex = wire.hex

local function ser(v, seen)
    local ty = type(v)
    if ty == 'string' then return string.format('%q', v) end
    if ty == 'number' then
        local mt = math.type and math.type(v) or 'n'
        if v ~= v then return 'nan' end
        return mt .. ':' .. string.format('%.17g', v)
    end
    if ty == 'cdata' then return 'cdata:' .. tostring(v) end
    if ty == 'boolean' then return ty .. ':' .. tostring(v) end
    if ty ~= 'table' then return ty end
    seen = seen or {}
    if seen[v] then return '<cycle>' end
    seen[v] = true
    local keys = {}
    for k in next, v do keys[#keys + 1] = k end
    table.sort(keys, function(a, b)
        local ta, tb = type(a), type(b)
        if ta ~= tb then return ta < tb end
        if ta == 'number' or ta == 'string' then return a < b end
        return tostring(a) < tostring(b)
    end)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = ser(k, seen) .. "=" .. ser(rawget(v, k), seen) end
    local mt = debug.getmetatable(v)
    local extra = ''
    if mt then
        extra = ' mt(' .. tostring(rawget(mt, '__serialize')) .. ',' .. tostring(rawget(mt, '__index') ~= nil) .. ')'
    end
    local u = protolua.unknown(v)
    if u then extra = extra .. ' unk=' .. hex(u) end
    seen[v] = nil
    return '{' .. table.concat(parts, ',') .. '}' .. extra
end

local function optstr(o)
    if not o then return '-' end
    return ser(o)
end

-- Which metatable kind (mt_kinds index) each generated table got.
local MTK = setmetatable({}, { __mode = 'k' })

-- Lua source of a value (REPLAY: the case of output line REPLAY is dumped
-- with it to OUT .. '.replay.lua'; metatables are written as comments).
local function src(v, seen)
    local ty = type(v)
    if ty == 'string' then return string.format('%q', v) end
    if ty == 'number' then
        if v ~= v then return '(0/0)' end
        if v == 1 / 0 then return '(1/0)' end
        if v == -1 / 0 then return '(-1/0)' end
        return string.format('%.17g', v)
    end
    if ty == 'boolean' then return tostring(v) end
    if ty == 'cdata' then
        local s = tostring(v)
        return (s:find('ULL$') and "ffi.new('uint64_t', '" or "ffi.new('int64_t', '") .. s:gsub('U?LL$', '') .. "')"
    end
    if ty == 'function' then return 'function() end' end
    if ty ~= 'table' then return 'nil --[[' .. ty .. ']]' end
    local parts = {}
    for k, x in next, v do parts[#parts + 1] = '[' .. src(k) .. ']=' .. src(x) end
    local mt = debug.getmetatable(v)
    local s = '{' .. table.concat(parts, ',') .. '}'
    if mt then s = 'MT(' .. s .. ', ' .. tostring(MTK[v]) .. ')' end
    return s
end
local REPLAY = tonumber(os.getenv('REPLAY') or '')

-- ONLYFILE (env): run only the cases of that .fds (the others are still
-- generated, so the cases keep their inputs); KEEP (env, 'a-b,c'): run only
-- those emitted-case numbers (for bisecting a state-dependent difference).
local ONLYFILE = os.getenv('ONLYFILE')
local KEEP
if os.getenv('KEEP') then
    KEEP = {}
    for a, b in os.getenv('KEEP'):gmatch('(%d+)%-?(%d*)') do
        for i = tonumber(a), tonumber(b ~= '' and b or a) do KEEP[i] = true end
    end
end
local seq = 0
local function runs(file)
    if ONLYFILE and file ~= ONLYFILE then return false end
    seq = seq + 1
    return not KEEP or KEEP[seq] == true
end

local function emit(...)
    ncases = ncases + 1
    out:write(table.concat({ ... }, ' '), '\n')
end

-- Wire helpers (values as byte strings: no 64-bit arithmetic needed).
local varint, tag = wire.varint, wire.tag
local function rbytes(n)
    local b = {}
    for i = 1, n do b[i] = string.char(rnd(256) - 1) end
    return table.concat(b)
end

local function rvarint()
    local c = rnd(10)
    if c <= 4 then return varint(rnd(128) - 1) end
    if c == 5 then return varint(rnd(2 ^ 20)) end
    if c == 6 then return string.rep('\255', 9) .. '\1' end -- -1 as int64
    if c == 7 then -- random 2..10 byte varint
        local n = rnd(9) + 1
        local s = {}
        for i = 1, n - 1 do s[i] = string.char(128 + rnd(128) - 1) end
        s[n] = string.char(rnd(128) - 1)
        return table.concat(s)
    end
    if c == 8 then return string.rep('\128', 10) .. '\0' end -- 11 bytes: invalid
    if c == 9 then return string.rep('\255', 9) .. string.char(rnd(127)) end -- 10th byte may overflow
    return varint(2 ^ 31 + rnd(2 ^ 30)) -- above int32
end

local fault -- see BUDGET below
local function rstring()
    if fault and not fault(0.3) then
        return pick({ '', 'h\195\169llo', string.rep('x', rnd(70)), 'abc' })
    end
    local c = rnd(8)
    if c == 1 then return '' end
    if c == 2 then return '\255' end
    if c == 3 then return 'h\195\169llo' end
    if c == 4 then return '\237\160\128' end -- surrogate
    if c == 5 then return '\192\128' end -- overlong
    if c == 6 then return rbytes(rnd(10)) end
    if c == 7 then return string.rep('x', rnd(70)) end
    return 'abc'
end

local WT = {
    int32 = 0, int64 = 0, uint32 = 0, uint64 = 0, sint32 = 0, sint64 = 0, bool = 0, enum = 0,
    fixed32 = 5, sfixed32 = 5, float = 5, fixed64 = 1, sfixed64 = 1, double = 1,
    string = 2, bytes = 2, message = 2, map = 2, group = 3,
}

local schemas = {}
local function fields_of(s, name)
    local c = s.cache[name]
    if not c then
        c = s.schema:message(name):fields()
        s.cache[name] = c
    end
    return c
end

local function wire_value(s, f, wt, depth)
    if wt == 0 then return rvarint() end
    if wt == 1 then
        if chance(0.2) then return '\0\0\0\0\0\0\248\127' end
        return rbytes(8)
    end
    if wt == 5 then return rbytes(4) end
    if wt == 2 then
        local body
        if f and (f.type == 'message') and f.type_name and depth < 3 then
            body = s.gen_wire(f.type_name, depth + 1, 24)
        else
            body = rstring()
        end
        local len = #body
        if chance(0.05) then len = len + rnd(3) end
        return varint(len) .. body
    end
    if wt == 3 then return '' end
    return ''
end

local function gen_wire(s, name, depth, maxlen)
    local fl = fields_of(s, name)
    local parts = {}
    local n = rnd(10) - 1
    for _ = 1, n do
        local f = (#fl > 0 and chance(0.9)) and pick(fl) or nil
        local num = f and f.number or rnd(20)
        local wt = f and WT[f.type] or rnd(6) - 1
        if f and f.label == 'repeated' and f.type ~= 'map' and WT[f.type] ~= 2 and chance(0.5) then
            wt = 2 -- packed
            local body = {}
            for i = 1, rnd(4) - 1 do body[i] = wire_value(s, f, WT[f.type], depth) end
            body = table.concat(body)
            parts[#parts + 1] = tag(num, 2) .. varint(#body) .. body
        else
            if chance(0.08) then wt = pick({ 0, 1, 2, 5, 3, 4, 6, 7 }) end
            local v = wire_value(s, f, wt, depth)
            if wt == 3 then v = v .. tag(num, 4) end
            parts[#parts + 1] = tag(num, wt) .. v
        end
    end
    local b = table.concat(parts)
    if maxlen and #b > maxlen and chance(0.7) then b = b:sub(1, maxlen) end
    return b
end

local FILES = { 'hello.fds', 'proto2_basic.fds', 'alltypes3.fds', 'many_required.fds', 'all.fds', 'conformance.fds' }
-- EXTRA (env): more .fds paths, ':'-separated (e.g. make_fds.lua's); FILES
-- (env): only these of the fixtures, ':'-separated ('' for none).
if os.getenv('FILES') then
    FILES = {}
    for f in os.getenv('FILES'):gmatch('[^:]+') do FILES[#FILES + 1] = f end
end
local paths = {}
for _, file in ipairs(FILES) do paths[#paths + 1] = fdsdir .. '/' .. file end
for p in (os.getenv('EXTRA') or ''):gmatch('[^:]+') do
    FILES[#FILES + 1] = p:match('[^/]+$')
    paths[#paths + 1] = p
end
for i, file in ipairs(FILES) do
    local schema = protolua.load_file(paths[i])
    local s = { schema = schema, cache = {}, file = file, enums = {} }
    s.gen_wire = function(name, depth, maxlen) return gen_wire(s, name, depth, maxlen) end
    s.messages = schema:messages()
    for _, e in ipairs(schema:enums()) do
        local names = {}
        for k in pairs(schema:enum(e)) do names[#names + 1] = k end
        table.sort(names)
        s.enums[e] = names
    end
    schemas[#schemas + 1] = s
end

local DOPTS = {
    false, { int64 = 'string' }, { int64 = 'number' }, { int64 = 'cdata' }, { enums = 'number' },
    { required = false }, { utf8 = false }, { unknown = 'drop' }, { serialize = true }, { empty = true },
    { defaults = 'values' }, { defaults = 'metatable' }, { max_depth = 1 }, { max_depth = 2 },
    { serialize = true, required = false, int64 = 'string' },
}

-- Encode skips the recursive all-required conformance messages: a table
-- cut at the generator's depth misses required fields on several branches,
-- and which one is reported depends on key order (see BUDGET).
local function msgs_of(s, encode)
    if not encode then return s.messages end
    if not s.enc_messages then
        s.enc_messages = {}
        for _, m in ipairs(s.messages) do
            if not m:find('AllRequiredTypes') then s.enc_messages[#s.enc_messages + 1] = m end
        end
    end
    return s.enc_messages
end

local function try_decode(M, bin, o)
    local ok, t
    if o then ok, t = pcall(M.decode, M, bin, o) else ok, t = pcall(M.decode, M, bin) end
    return ok, t
end

local function decode_cases()
    for ci = 1, count do
        BUDGET = 1e9
        local s = pick(schemas)
        local ms = msgs_of(s)
        local name = pick(ms)
        local M = s.schema:message(name)
        local bin
        local c = rnd(10)
        if c <= 3 then
            -- random bytes, biased to this message's one-byte tags
            local fl = fields_of(s, name)
            local b = {}
            for i = 1, rnd(65) - 1 do
                if #fl > 0 and chance(0.4) then
                    local f = pick(fl)
                    b[i] = string.char((f.number * 8 + (WT[f.type] or 0)) % 256)
                else
                    b[i] = string.char(rnd(256) - 1)
                end
            end
            bin = table.concat(b)
        else
            bin = gen_wire(s, name, 1, chance(0.8) and 64 or nil)
            if chance(0.15) and #bin > 0 then bin = bin:sub(1, rnd(#bin)) end
        end
        for k = 1, 2 do
            local o = k == 1 and false or pick(DOPTS)
            if runs(s.file) then
            local ok, t = try_decode(M, bin, o or nil)
            local res = ok and ser(t) or ('ERR ' .. tostring(t))
            local re = ''
            if ok then
                local eok, e = pcall(M.encode, M, t)
                re = eok and ('ENC ' .. hex(e)) or ('ENCERR ' .. tostring(e))
            end
            emit('D', s.file, name, hex(bin), optstr(o), '=>', res, re)
            end
        end
    end
end

----------------------------------------------------------------------------
-- encode: random tables

local mt_kinds = {
    function(t) return setmetatable(t, { __index = { zz = 1, name = 'x', id = 1 } }) end,
    function(t) return setmetatable(t, { __metatable = false }) end,
    function(t) return setmetatable(t, { __metatable = 'locked' }) end,
    function(t) return setmetatable(t, { __index = function() error('__index called') end }) end,
    function(t) return setmetatable(t, { __newindex = function() error('__newindex') end, __len = function() return 3 end }) end,
}

local gen_table
-- At most one injected fault per top-level table (BUDGET): with two, which
-- one is reported depends on the table's key order when it is walked, and
-- LuaJIT randomizes string hashes per process.
BUDGET = 1
fault = function(p)
    if chance(p) and BUDGET > 0 then
        BUDGET = BUDGET - 1
        return true
    end
    return false
end
local function scalar(s, f, ty, tyname, depth)
    if fault(0.06) then
        return pick({ 'str', true, 1.5, -1, 2 ^ 64, 0 / 0, {}, function() end, 2 ^ 32, -2 ^ 63, 'x1', 'NOPE', 99 })
    end
    if ty == 'int32' or ty == 'sint32' or ty == 'sfixed32' then
        return pick({ 0, 1, -1, 2 ^ 31 - 1, -2 ^ 31, rnd(1000) - 500, rnd(2 ^ 30) })
    elseif ty == 'uint32' or ty == 'fixed32' then
        return pick({ 0, 1, 2 ^ 32 - 1, rnd(2 ^ 30) })
    elseif ty == 'int64' or ty == 'sint64' or ty == 'sfixed64' then
        local v = pick({ 0, 1, -1, 2 ^ 53, -2 ^ 53, rnd(2 ^ 30), '123', '-9223372036854775808', '9223372036854775807' })
        if is_luajit and chance(0.2) then v = pick({ ffi.new('int64_t', -5), ffi.new('uint64_t', 5), ffi.new('int64_t', 1), ffi.new('int64_t', -1) }) end
        return v
    elseif ty == 'uint64' or ty == 'fixed64' then
        local v = pick({ 0, 1, 2 ^ 53, rnd(2 ^ 30), '18446744073709551615', '5' })
        if is_luajit and chance(0.2) then v = pick({ ffi.new('uint64_t', -1), ffi.new('uint64_t', 7) }) end
        return v
    elseif ty == 'float' or ty == 'double' then
        return pick({ 0, -0.0, 1.5, 1 / 0, -1 / 0, 0 / 0, 1e300, 3.4e38 * 10, rnd(1000) / 7 })
    elseif ty == 'bool' then
        return pick({ true, false, true })
    elseif ty == 'enum' then
        local names = s.enums[(tyname or ''):gsub('^%.', '')] or {}
        if #names > 0 then
            if chance(0.8) then return pick(names) end
            return s.schema:enum((tyname:gsub('^%.', '')))[pick(names)]
        end
        return 0
    elseif ty == 'string' or ty == 'bytes' then
        return rstring()
    elseif ty == 'message' or ty == 'group' then
        if depth > 4 then return nil end
        return gen_table(s, tyname:gsub('^%.', ''), depth + 1)
    end
    return nil
end

local MAPKEY = {
    int32 = function() return rnd(5) - 2 end, int64 = function() return pick({ 1, 2, '3', 2 ^ 53 }) end,
    uint32 = function() return rnd(5) end, uint64 = function() return rnd(5) end,
    sint32 = function() return rnd(5) - 2 end, sint64 = function() return rnd(5) - 2 end,
    fixed32 = function() return rnd(5) end, fixed64 = function() return rnd(5) end,
    sfixed32 = function() return rnd(5) - 2 end, sfixed64 = function() return rnd(5) - 2 end,
    bool = function() return chance(0.5) end, string = function() return pick({ 'a', 'b', '', 'zz' }) end,
}

gen_table = function(s, name, depth)
    local fl = fields_of(s, name)
    local t = {}
    local density = pick({ 0.1, 0.5, 0.9, 1.0, 0.9 })
    local oneof_set = {}
    for _, f in ipairs(fl) do
        if chance(density) or (f.label == 'required' and not fault(0.05)) then
            local v
            if f.type == 'map' then
                v = {}
                for _ = 1, rnd(4) - 1 do
                    local k = (MAPKEY[f.key_type] or MAPKEY.string)()
                    if fault(0.03) then k = 1.5 end
                    v[k] = scalar(s, f, f.value_type, f.value_type_name, depth)
                end
            elseif f.label == 'repeated' then
                v = {}
                -- long arrays at the top only (nested message arrays multiply)
                local n = rnd((depth <= 1 or f.type ~= 'message') and 21 or 4) - 1
                for i = 1, n do
                    v[i] = scalar(s, f, f.type, f.type_name, depth)
                    if fault(0.02) then v[i] = nil end
                    if fault(0.02) then v[i] = pick({ 'str', 5, false }) end
                end
            else
                v = scalar(s, f, f.type, f.type_name, depth)
            end
            if f.oneof and v ~= nil then
                if oneof_set[f.oneof] then v = nil end
                oneof_set[f.oneof] = true
            end
            if v ~= nil then t[f.name] = v end
        end
    end
    if fault(0.06) then t.zz_unknown = 1 end
    if fault(0.02) then t[1] = 'one' end
    if fault(0.02) then t[true] = 1 end
    if chance(0.08) then
        local i = rnd(#mt_kinds)
        mt_kinds[i](t)
        MTK[t] = i
    end
    return t
end

local EOPTS = {
    false, { strict_keys = false }, { required = false }, { utf8 = false },
    { strict_keys = true, required = false },
}

local function try_encode(M, t, o)
    if o then return pcall(M.encode, M, t, o) end
    return pcall(M.encode, M, t)
end

local function encode_cases()
    for ci = 1, count do
        local s = pick(schemas)
        local name = pick(msgs_of(s, true))
        local M = s.schema:message(name)
        BUDGET = 1
        local t = gen_table(s, name, 1)
        local desc = ser(t)
        -- a few encodes in a row (hints move between probe/fetch and walk)
        for k = 1, 3 do
            local o = k == 1 and false or pick(EOPTS)
            if REPLAY == ncases + 1 then
                local f = assert(io.open(outpath .. '.replay.lua', 'wb'))
                f:write('return ', string.format('%q', s.file), ', ', string.format('%q', name), ', ', src(o), ', ', src(t), '\n')
                f:close()
            end
            local ok, b = true, ''
            if runs(s.file) then ok, b = try_encode(M, t, o or nil) end
            emit('E', s.file, name, optstr(o), desc, '=>', ok and hex(b) or ('ERR ' .. tostring(b)))
        end
        -- arrays of sub-messages with mixed elements (batch fetch)
        local fl = fields_of(s, name)
        for _, f in ipairs(fl) do
            if f.label == 'repeated' and f.type == 'message' and chance(0.5) then
                BUDGET = 1
                local arr = {}
                local n = rnd(20)
                for i = 1, n do
                    local c = rnd(20)
                    if c == 1 and fault(1) then arr[i] = 'notatable'
                    elseif c == 2 and fault(1) then arr[i] = 5
                    elseif c == 3 then arr[i] = setmetatable({}, { __index = function() error('x') end })
                    else arr[i] = gen_table(s, f.type_name:gsub('^%.', ''), 2) end
                end
                if fault(0.1) then arr[rnd(n)] = nil end
                local tt = { [f.name] = arr }
                for k = 1, 2 do
                    local ok, b = true, ''
                    if runs(s.file) then ok, b = try_encode(M, tt, k == 2 and { strict_keys = false } or nil) end
                    emit('A', s.file, name, f.name, k, ser(tt), '=>', ok and hex(b) or ('ERR ' .. tostring(b)))
                end
            end
        end
    end
end

----------------------------------------------------------------------------
-- hooks: a count hook that errors / collects garbage / encodes again inside
-- the generated fetchers (new build; the old one has none, so the hook
-- never fires there): the results must not change.

local function hook_cases()
    local function in_fetch()
        local info = debug.getinfo(2, 'S')
        return info and info.source == '=protolua.fetch'
    end
    for ci = 1, count do
        local s = pick(schemas)
        local name = pick(msgs_of(s, true))
        local M = s.schema:message(name)
        BUDGET = 1
        local t = gen_table(s, name, 1)
        local mode = rnd(3)
        BUDGET = 1
        local t2 = gen_table(s, name, 1)
        local fires = 0
        debug.sethook(function()
            if not in_fetch() then return end
            fires = fires + 1
            if mode == 1 then error('hook error') end
            if mode == 2 then collectgarbage() end
            if mode == 3 then pcall(M.encode, M, t2) end
        end, '', rnd(5))
        local ok, b = true, ''
        if runs(s.file) then ok, b = pcall(M.encode, M, t) end
        debug.sethook()
        emit('H', s.file, name, mode, ser(t), '=>', ok and hex(b) or ('ERR ' .. tostring(b)))
    end
end

if phase == 'all' or phase == 'decode' then decode_cases() end
if phase == 'all' or phase == 'encode' then encode_cases() end
if phase == 'all' or phase == 'hooks' then hook_cases() end
out:close()
io.stderr:write(string.format('%s: %d cases\n', outpath, ncases))
