-- Strict keys on arrays: a repeated field's table holds the keys 1..#t and
-- nothing else, whatever the table's layout (array part, hash part, built
-- by a constructor or by assignment), for every repeated kind and every
-- encode strategy; with strict_keys = false encode reads 1..#t. Lua 5.1
-- compatible. Needs the globals set by harness.lua.

local SRC = [[
syntax = "proto2";
package extra;
enum E { E_ZERO = 0; E_ONE = 1; }
message Sub {
  optional int32 x = 1;
  repeated string tags = 2;
}
message All {
  repeated int32 r_int32 = 1;
  repeated sint64 p_sint64 = 2 [packed = true];
  repeated fixed32 p_fixed32 = 3 [packed = true];
  repeated double r_double = 4;
  repeated bool r_bool = 5;
  repeated string r_string = 6;
  repeated bytes r_bytes = 7;
  repeated E r_enum = 8;
  repeated Sub r_sub = 9;
  repeated group Item = 10 { optional int32 y = 11; }
  optional Sub sub = 12;
  repeated All kids = 13;
  optional int32 a = 14;
  optional int32 b = 15;
  optional int32 c = 16;
}
]]

-- Each encode strategy off alone, both off, and all on.
local settings = { {}, { fetch = false }, { walk = false }, { fetch = false, walk = false } }

local function label(s)
    local off = {}
    for k in pairs(s) do off[#off + 1] = k end
    table.sort(off)
    return #off == 0 and 'all on' or table.concat(off, '+') .. ' off'
end

-- One schema per setting; `warm` tables set the walk hint (a sparse table:
-- the next encode of All walks) or the probe hint (a dense one).
local schemas = {}
for i, s in ipairs(settings) do
    schemas[i] = { All = protolua.parse(SRC, { name = 'extra.proto', strategies = s }):message('extra.All'), s = s }
end
local SPARSE = { a = 1 }
local DENSE = { a = 1, b = 2, c = 3, r_int32 = { 1 }, r_string = { 's' }, r_bool = { true }, r_double = { 1 },
    r_enum = { 'E_ONE' }, r_bytes = { 'b' }, p_sint64 = { 1 }, p_fixed32 = { 1 }, sub = { x = 1 } }

-- `needle` (a plain substring, or a Lua pattern when `pattern`) in the error
-- of encoding `t`, on every strategy setting, after a sparse and after a
-- dense warm-up, three times each.
local function refused(needle, t, pattern)
    for _, sc in ipairs(schemas) do
        for _, warm in ipairs({ SPARSE, DENSE }) do
            sc.All:encode(warm)
            for pass = 1, 3 do
                local ok, err = pcall(sc.All.encode, sc.All, t)
                local what = label(sc.s) .. ', pass ' .. pass
                if ok then error(what .. ': expected an error containing ' .. needle, 2) end
                err = tostring(err)
                if not err:find(needle, 1, not pattern) or not err:find('^protolua: encode extra.All: ') then
                    error(what .. ': error ' .. err .. ' does not contain ' .. needle, 2)
                end
            end
        end
    end
end

-- `t` encodes, on every setting, to the bytes `expected` encodes to.
local function same_bytes(t, expected, what)
    for _, sc in ipairs(schemas) do
        for _, warm in ipairs({ SPARSE, DENSE }) do
            sc.All:encode(warm)
            local want = sc.All:encode(expected)
            for pass = 1, 3 do
                local got = sc.All:encode(t)
                if got ~= want then
                    error(what .. ', ' .. label(sc.s) .. ', pass ' .. pass .. ':\n' .. T.bytes_diff(got, want), 2)
                end
            end
        end
    end
end

-- A valid element per repeated field, and the field path the error names.
local FIELDS = {
    { 'r_int32', 7 }, { 'p_sint64', -7 }, { 'p_fixed32', 7 }, { 'r_double', 1.5 }, { 'r_bool', true },
    { 'r_string', 'a' }, { 'r_bytes', '\0' }, { 'r_enum', 'E_ONE' }, { 'r_sub', { x = 1 } }, { 'item', { y = 1 } },
}

T.test('arrays: the issue table, refused with the field and key named', function()
    refused('field r_string: array has key "x" outside 1..2', { r_string = { 'a', 'b', x = 'c' } })
    refused('field r_string: array has a nil hole at index 2', { r_string = { 'a', nil, 'c' } })
    refused('field r_int32: array has a nil hole at index 2', { r_int32 = { [1] = 1, [3] = 3 } })
    refused('field r_int32: array has a nil hole at index 1', { r_int32 = { [2] = 5 } })
end)

T.test('arrays: every repeated kind refuses every kind of stray key', function()
    for _, f in ipairs(FIELDS) do
        local name, v = f[1], f[2]
        local p = 'field ' .. name .. ': '
        refused(p .. 'array has key "x" outside 1..2', { [name] = { v, v, x = v } })
        refused(p .. 'array has key "x" outside 1..0', { [name] = { x = v } })
        refused(p .. 'array has key 0 outside 1..2', { [name] = { v, v, [0] = v } })
        refused(p .. 'array has key -1 outside 1..1', { [name] = { v, [-1] = v } })
        refused(p .. 'array has key 1.5 outside 1..1', { [name] = { v, [1.5] = v } })
        refused(p .. 'array has key 1e-20 outside 1..1', { [name] = { v, [1e-20] = v } })
        refused(p .. 'array has key -inf outside 1..1', { [name] = { v, [-math.huge] = v } })
        refused(p .. 'array has key true outside 1..1', { [name] = { v, [true] = v } })
        refused(p .. 'array has a key of type table outside 1..1', { [name] = { v, [{}] = v } })
        refused(p .. 'array has a nil hole at index 2', { [name] = { [1] = v, [3] = v } })
        refused(p .. 'array has a nil hole at index 1', { [name] = { [2] = v } })
        refused(p .. 'array has a nil hole at index 2', { [name] = { v, nil, v } })
        refused(p .. 'array has a nil hole at index 3', { [name] = { v, v, nil, v, v } })
        refused(p .. 'array has key 1e300 outside 1..0', { [name] = { [1e300] = v } })
        -- Long arrays (LuaJIT counts their keys in Lua) and long strings.
        local long = {}
        for i = 1, 40 do long[i] = v end
        long.key = v
        refused(p .. 'array has key "key" outside 1..40', { [name] = long })
        long.key = nil
        long[42] = v
        refused(p .. 'array has a nil hole at index 41', { [name] = long })
        long[42] = nil
        long[string.rep('k', 100)] = v
        refused(p .. 'array has key "' .. string.rep('k', 48) .. '…" outside 1..40', { [name] = long })
    end
end)

T.test('arrays: keys in the hash part are found in any layout', function()
    for _, f in ipairs(FIELDS) do
        local name, v = f[1], f[2]
        local p = 'field ' .. name .. ': '
        -- A constructor template: LuaJIT keeps these integer keys in the hash part.
        refused(p .. 'array has a nil hole at index 3', { [name] = { [1] = v, [2] = v, [4] = v } })
        refused(p .. 'array has key "z" outside 1..3', { [name] = { [1] = v, [2] = v, [3] = v, z = v } })
        -- Keys assigned into a table that has free hash nodes: t[1] lands in
        -- one, after (or before) the string keys' nodes.
        local t = { x = v, y = v, z = v }
        t[1] = v
        refused(p .. 'array has key "[xyz]" outside 1%.%.1', { [name] = t }, true)
        t = { x = v, y = v, z = v, w = v }
        t.w = nil
        t[1], t[2] = v, v
        refused(p .. 'array has key "[xyz]" outside 1%.%.2', { [name] = t }, true)
        -- Filled backwards: the high keys go to the hash part first.
        t = {}
        for i = 10, 1, -1 do t[i] = v end
        t[0] = v
        refused(p .. 'array has key 0 outside 1..10', { [name] = t })
        t[0] = nil
        t[-5] = v
        refused(p .. 'array has key -5 outside 1..10', { [name] = t })
    end
end)

T.test('arrays: valid arrays in any layout encode as 1..n', function()
    for _, f in ipairs(FIELDS) do
        local name, v = f[1], f[2]
        local plain = { [name] = { v, v, v } }
        same_bytes({ [name] = { [1] = v, [2] = v, [3] = v } }, plain, name .. ' template')
        local t = {}
        for i = 3, 1, -1 do t[i] = v end
        same_bytes({ [name] = t }, plain, name .. ' backwards')
        t = { x = v, y = v }
        t.x, t.y = nil, nil
        t[1], t[2], t[3] = v, v, v
        same_bytes({ [name] = t }, plain, name .. ' after removed string keys')
        t = { v, v, v, v }
        t[4] = nil
        same_bytes({ [name] = t }, plain, name .. ' shortened')
        same_bytes({ [name] = {} }, {}, name .. ' empty')
        local long, long_t = {}, {}
        for i = 1, 100 do long[i] = v end
        for i = 100, 1, -1 do long_t[i] = v end
        same_bytes({ [name] = long_t }, { [name] = long }, name .. ' long, backwards')
    end
end)

T.test('arrays: the path names the outer fields', function()
    refused('field sub.tags: array has key "x" outside 1..1', { sub = { tags = { 'a', x = 'b' } } })
    refused('field r_sub[2].tags: array has a nil hole at index 2', { r_sub = { {}, { tags = { [1] = 'a', [3] = 'c' } } } })
    refused('field kids[1].kids[2].r_int32: array has key 0 outside 1..1',
        { kids = { { kids = { {}, { r_int32 = { 1, [0] = 0 } } } } } })
    refused('field kids: array has key "x" outside 1..1', { kids = { {}, x = {} } })
    -- A batch of sub-message elements (LuaJIT fetches them 8 at a time).
    local items = {}
    for i = 1, 20 do items[i] = { x = i, tags = { 'a', 'b' } } end
    items[17].tags.extra = 'c'
    refused('field r_sub[17].tags: array has key "extra" outside 1..2', { r_sub = items })
    items[17].tags.extra = nil
    items[21], items[23] = items[1], items[1]
    refused('field r_sub: array has a nil hole at index 22', { r_sub = items })
end)

T.test('arrays: strict_keys = false reads 1..#t', function()
    local All = protolua.parse(SRC, { name = 'extra.proto', strict_keys = false }):message('extra.All')
    local Strict = schemas[1].All
    T.eq(All:encode({ r_string = { 'a', 'b', x = 'c' } }), Strict:encode({ r_string = { 'a', 'b' } }))
    T.eq(All:encode({ r_int32 = { 1, 2, [0] = 0, [-1] = 1, [1.5] = 2 } }), Strict:encode({ r_int32 = { 1, 2 } }))
    T.eq(All:encode({ r_int32 = { [2] = 5 } }), Strict:encode({}))
    local t = { [1] = 1, [3] = 3 }
    local want = {}
    for i = 1, #t do want[i] = t[i] end
    T.eq(All:encode({ r_int32 = t }), Strict:encode({ r_int32 = want }), '1..#t')
    T.eq(All:encode({ r_sub = { { x = 1 }, y = { x = 2 } } }), Strict:encode({ r_sub = { { x = 1 } } }))
end)

T.test('arrays: 20000 refused arrays leak nothing', function()
    local All = schemas[1].All
    local bad = {
        { r_string = { 'a', 'b', x = 'c' } },
        { r_int32 = { [1] = 1, [3] = 3 } },
        { r_sub = { { x = 1 }, { tags = { 'a', [0] = 'b' } } } },
        { kids = { { r_double = { 1, [1.5] = 2 } } } },
    }
    local long = {}
    for i = 1, 50 do long[i] = 'x' end
    long[string.rep('k', 100)] = 1
    bad[#bad + 1] = { r_string = long }
    local function run(n)
        for i = 1, n do
            if pcall(All.encode, All, bad[i % #bad + 1]) then error('encode should fail') end
        end
    end
    run(1000)
    collectgarbage('collect')
    collectgarbage('collect')
    local before = collectgarbage('count')
    run(20000)
    collectgarbage('collect')
    collectgarbage('collect')
    local grew = collectgarbage('count') - before
    if grew >= 50 then error(string.format('Lua memory grew by %.1f KB over 20000 failing encodes', grew)) end
    T.eq(All:decode(All:encode({ r_string = { 'a' } })), { r_string = { 'a' } })
end)

T.test('arrays: the host\'s array-part size field is found (one `next` checks an array)', function()
    -- lua/array_part.rs: without it the check counts every key (exact, slower).
    local at = protolua._array_size_at
    assert(type(at) == 'number', 'no array-size field found on ' .. ((jit and jit.version) or _VERSION))
    -- Arrays made every way a user makes them: the same bytes, and a stray
    -- key refused, whichever path the check takes.
    local S = protolua.parse(SRC, { name = 'extra.proto' }):message('extra.All')
    local want = S:encode({ r_int32 = { 1, 2, 3, 4, 5, 6, 7 } })
    local made = {
        { 1, 2, 3, 4, 5, 6, 7 },
        (function() local t = {} for i = 1, 7 do t[i] = i end return t end)(),
        (function() local t = {} for i = 7, 1, -1 do t[i] = i end return t end)(),
        { [1] = 1, [2] = 2, [3] = 3, [4] = 4, [5] = 5, [6] = 6, [7] = 7 },
        (function() local t = { x = 1, y = 2, z = 3 } for i = 1, 7 do t[i] = i end t.x, t.y, t.z = nil, nil, nil return t end)(),
    }
    for i, arr in ipairs(made) do
        T.eq(S:encode({ r_int32 = arr }), want, 'layout ' .. i)
        arr.k = 1
        local ok, err = pcall(S.encode, S, { r_int32 = arr })
        T.eq(ok, false, 'layout ' .. i .. ' with a stray key')
        assert(tostring(err):find('array has key "k" outside 1..7', 1, true), err)
        arr.k = nil
        arr[9] = 9
        ok, err = pcall(S.encode, S, { r_int32 = arr })
        T.eq(ok, false, 'layout ' .. i .. ' with a key past a hole')
        assert(tostring(err):find('array has a nil hole at index 8', 1, true), err)
        arr[9] = nil
    end
end)
