-- Test harness shared by every `test_*.lua` file.
--
-- Hosts (the Rust test runner, tarantool, plain luajit/lua5.4) set the
-- globals `FIXTURES` (absolute path of the fixtures folder, no trailing
-- slash) and `protolua` (the loaded module), then `dofile` this file, then
-- each test file, then call `T.finish()`. Lua 5.1 compatible.

local T = {}
_G.T = T

local passed, failed, failures = 0, 0, {}
local is_luajit = type(jit) == 'table'
local ffi = is_luajit and require('ffi') or nil
local LIMIT_I = is_luajit and ffi.new('int64_t', 2 ^ 53)
local NEG_LIMIT_I = is_luajit and ffi.new('int64_t', -2 ^ 53)
local LIMIT_U = is_luajit and ffi.new('uint64_t', 2 ^ 53)

local trace = os.getenv('PROTOLUA_TRACE_TESTS')
trace = trace ~= nil and trace ~= ''

--- Run one named test; errors are caught and reported, not fatal.
--- With PROTOLUA_TRACE_TESTS set, each name goes to stderr first (a hung
--- suite's log then ends at the test that hung).
function T.test(name, fn)
    if trace then
        io.stderr:write('test: ', name, '\n')
        io.stderr:flush()
    end
    local ok, err = xpcall(fn, debug.traceback)
    if ok then
        passed = passed + 1
    else
        failed = failed + 1
        failures[#failures + 1] = name .. ': ' .. tostring(err)
        io.stderr:write('FAIL ', name, '\n', tostring(err), '\n')
    end
end

local function is_nan(v) return type(v) == 'number' and v ~= v end

local function describe(v)
    if type(v) == 'string' then return string.format('%q', v) end
    return tostring(v)
end

-- t[k], except that 64-bit cdata keys (which Lua hashes by identity) match
-- an equal cdata or number key.
local function lookup(t, k)
    local v = t[k]
    if v ~= nil or (type(k) ~= 'cdata' and type(k) ~= 'number') then return v end
    for kk, vv in pairs(t) do
        local tk = type(kk)
        if (tk == 'cdata' or (tk == 'number' and type(k) == 'cdata')) and kk == k then return vv end
    end
    return nil
end

local function deep_eq(a, b, path)
    if is_nan(a) and is_nan(b) then return true end
    local ta, tb = type(a), type(b)
    if ta == 'cdata' or tb == 'cdata' then
        if (ta == 'cdata' or ta == 'number') and (tb == 'cdata' or tb == 'number') then
            -- LuaJIT compares 64-bit cdata with numbers and with each other by value.
            if a == b then return true end
        end
        return false, path .. ': ' .. describe(a) .. ' ~= ' .. describe(b)
    end
    if ta ~= tb then
        return false, path .. ': type ' .. ta .. ' (' .. describe(a) .. ') ~= ' .. tb .. ' (' .. describe(b) .. ')'
    end
    if ta ~= 'table' then
        if a == b then return true end
        if ta == 'number' and math.type and math.type(a) ~= math.type(b) and a == b then return true end
        return false, path .. ': ' .. describe(a) .. ' ~= ' .. describe(b)
    end
    for k, v in pairs(a) do
        local ok, why = deep_eq(v, lookup(b, k), path .. '.' .. tostring(k))
        if not ok then return false, why end
    end
    for k, v in pairs(b) do
        if lookup(a, k) == nil then
            return false, path .. '.' .. tostring(k) .. ': missing (expected ' .. describe(v) .. ')'
        end
    end
    return true
end

--- Deep equality (NaN equals NaN; 64-bit cdata equals the same number).
function T.eq(actual, expected, msg)
    local ok, why = deep_eq(actual, expected, msg or 'value')
    if not ok then error(why, 2) end
end

--- Assert that `fn(...)` raises an error whose message contains `needle`
--- (plain substring match) and starts with "protolua:".
function T.raises(needle, fn, ...)
    local ok, err = pcall(fn, ...)
    if ok then error('expected an error containing ' .. describe(needle), 2) end
    err = tostring(err)
    if not err:find('protolua:', 1, true) then
        error('error does not start with protolua: ' .. err, 2)
    end
    if not err:find(needle, 1, true) then
        error('error ' .. describe(err) .. ' does not contain ' .. describe(needle), 2)
    end
    return err
end

local function parse_int64(s, unsigned)
    local neg = false
    local i = 1
    if s:sub(1, 1) == '-' then neg = true; i = 2 end
    if is_luajit then
        local v = unsigned and ffi.new('uint64_t', 0) or ffi.new('int64_t', 0)
        for j = i, #s do v = v * 10 + (s:byte(j) - 48) end
        if neg then v = -v end
        return v
    end
    if not math.tointeger then
        -- PUC Lua 5.1 (no ffi, no integers): a number when exact, else the
        -- canonical decimal string, which is what protolua decodes there.
        local digits = s:sub(i):gsub('^0+(%d)', '%1')
        if #digits < 16 or (#digits == 16 and digits <= '9007199254740992') then
            return (neg and -1 or 1) * tonumber(digits)
        end
        return (neg and '-' or '') .. digits
    end
    -- Lua 5.3+: integer arithmetic wraps, which gives the two's-complement
    -- reading of uint64 values >= 2^63 (the Lua convention).
    local v = math.tointeger(0)
    for j = i, #s do v = v * 10 + (s:byte(j) - 48) end
    if neg then v = -v end
    return v
end

-- Inside Tarantool, decode follows Tarantool's msgpack: ask it.
local tarantool_msgpack = rawget(_G, 'box') and require('msgpack')

--- The int64 whose decimal form is `s`, as protolua decodes it: a number when
--- |v| <= 2^53, else cdata<int64_t> (LuaJIT) or a native integer (5.3+);
--- inside Tarantool, whatever Tarantool's msgpack makes of it.
function T.i64(s)
    local v = parse_int64(s, false)
    if tarantool_msgpack then return (tarantool_msgpack.decode(tarantool_msgpack.encode(v))) end
    if is_luajit and v >= NEG_LIMIT_I and v <= LIMIT_I then return tonumber(v) end
    return v
end

--- The uint64 whose decimal form is `s` (see `T.i64`).
function T.u64(s)
    local v = parse_int64(s, true)
    if tarantool_msgpack then return (tarantool_msgpack.decode(tarantool_msgpack.encode(v))) end
    if is_luajit and v <= LIMIT_U then return tonumber(v) end
    return v
end

--- Whole contents of a file as a string.
--- Call `decode()` with a count hook that, each time a generated
--- constructor's chunk (`=protolua.ctor`) starts running, calls `inside()`
--- once (not re-entered). Returns decode's result and how many times
--- `inside` ran.
function T.decode_while_ctor_compiles(decode, inside)
    local busy, inner = false, 0
    debug.sethook(function()
        local i = debug.getinfo(2, 'S')
        if not busy and i and i.source == '=protolua.ctor' and i.what == 'main' then
            busy = true
            inner = inner + 1
            inside()
            busy = false
        end
    end, '', 1)
    local ok, t = pcall(decode)
    debug.sethook()
    if not ok then error(t, 0) end
    return t, inner
end

function T.readfile(path)
    local f = assert(io.open(path, 'rb'))
    local s = f:read('*a')
    f:close()
    return s
end

--- Hex dump, for failure messages.
function T.hex(s)
    return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
end

--- Bytes from hex digits (whitespace ignored): `T.unhex('0a 01 78')`.
function T.unhex(s)
    return (s:gsub('%s', ''):gsub('%x%x', function(h) return string.char(tonumber(h, 16)) end))
end

--- How two byte strings differ, for failure messages: both in hex when
--- short, else a window around the first difference.
function T.bytes_diff(actual, expected)
    if #actual <= 256 and #expected <= 256 then
        return 'got      ' .. T.hex(actual) .. '\nexpected ' .. T.hex(expected)
    end
    local i = 1
    while i <= #actual and i <= #expected and actual:byte(i) == expected:byte(i) do i = i + 1 end
    local from = i > 16 and i - 16 or 1
    return string.format('%d vs %d bytes, first difference at offset %d\ngot      ...%s\nexpected ...%s',
        #actual, #expected, i - 1, T.hex(actual:sub(from, i + 32)), T.hex(expected:sub(from, i + 32)))
end

--- The unsigned varint of a non-negative Lua number (< 2^53).
function T.varint(n)
    local out = {}
    while n >= 128 do
        out[#out + 1] = string.char(n % 128 + 128)
        n = math.floor(n / 128)
    end
    out[#out + 1] = string.char(n)
    return table.concat(out)
end

--- A field tag: field number and wire type, as a varint.
function T.tag(number, wt) return T.varint(number * 8 + wt) end

local schemas = {}
--- The schema loaded from `fixtures/descriptors/<fds>`, loaded once per run.
function T.schema(fds)
    local s = schemas[fds]
    if not s then
        s = protolua.load_file(FIXTURES .. '/descriptors/' .. fds)
        schemas[fds] = s
    end
    return s
end

T.is_luajit = is_luajit

--- Whether this LuaJIT compiled a hot `next` loop when protolua loaded:
--- the module's own probe, read from its helper table (upvalue 1 of
--- `protolua.unknown`; slot 14, src/slots.rs Helper::NextCompiles). Where
--- it did not (Tarantool 2.6's LuaJIT, or the JIT off), encode fetches
--- only messages of 8 or more fields (src/binary/encode/mod.rs,
--- FETCH_INTERPRETED_MIN_FIELDS).
function T.next_compiles()
    if not is_luajit then return false end
    local _, helpers = debug.getupvalue(protolua.unknown, 1)
    return type(helpers) == 'table' and helpers[14] == true
end

--- Print the summary; error if anything failed (hosts turn that into a failure).
function T.finish()
    io.stdout:write(string.format('lua tests: %d passed, %d failed\n', passed, failed))
    if failed > 0 then error(table.concat(failures, '\n\n'), 0) end
end

-- Golden expectation files call these as globals.
_G.i64 = T.i64
_G.u64 = T.u64

return T
