-- Encode's helpers on LuaJIT (crate::binary::encode::fetch): the key
-- counters and the maker of fetchers, and whether this LuaJIT compiles a
-- `next` loop. Returns count, count_batch, make_fetcher, next_compiles,
-- stored at their crate::slots::Helper slots. `next`, `rawget`, `rawset`,
-- `loadstring` and `getmetatable` are the ones there when the module loads.
local next, rawget, rawset, pcall, type, error = next, rawget, rawset, pcall, type, error
local getmetatable = getmetatable
local loadstring, format, concat = loadstring, string.format, table.concat
-- A message's fetchers: the key count of t, then t[k1], ..., t[kn] (raw:
-- the plain index only for a table without a metatable, for which
-- getmetatable, even with a __metatable field, is never nil), one call;
-- the batch one per table a[i..j], each preceded by the table, its
-- results built on the stack by recursion (no shared table).
-- Raised by `build` for a key id that names no key string: that message
-- can never be fetched.
local NOT_A_KEY = {}
-- The count slot's layout (`encode::FETCH_COUNT_BITS`, `FETCH_CODED`).
local CMAX, TYPES, CODED = 1048575, 1048576, 11
-- The type codes of the values named in `vals` (at most CODED), 3 bits
-- each, the first lowest: lua_type's number for nil, boolean, number,
-- string and table, 7 for any other type (asked with `type`: a NULL
-- cdata is `== nil`). A compiled fetcher knows each value's type from the
-- guard of its load, so the expression folds to a constant there.
local function coded(vals)
    local s = '0'
    local m = #vals
    if m > CODED then m = CODED end
    for i = m, 1, -1 do
        local x = vals[i]
        s = '(type(' .. x .. ') == "number" and 3 or type(' .. x .. ') == "string" and 4 or type('
            .. x .. ') == "table" and 5 or type(' .. x .. ') == "nil" and 0 or type(' .. x
            .. ') == "boolean" and 1 or 7) + 8 * (' .. s .. ')'
    end
    return s
end
-- The count slot: the key count (at most CMAX) plus TYPES * the type
-- codes of the first CODED values, 3 bits each (`coded`).
local function count(c, vals)
    return 'if ' .. c .. ' > CMAX then ' .. c .. ' = CMAX end\n'
        .. c .. ' = ' .. c .. ' + TYPES * (' .. coded(vals) .. ')\n'
end
-- The batch fetcher's source. Up to UNROLL fields, one straight block per
-- table, up to BATCH (`encode::MESSAGE_BATCH`) tables: LuaJIT compiles
-- each block's loop and the code between them, where the recursive
-- version's tail falls back to the interpreter (down-recursion). More
-- fields would pass the 250 slots a function may use (its locals and the
-- copies `return` makes of them), so those messages keep the recursion.
local BATCH, UNROLL = 8, 12
-- `reads`, `block` and `key` are made once, here, not inside `build`:
-- LuaJIT frees a closure whose upvalues ran out of memory while it was
-- made with the size of a closure without upvalues (`func_newL` keeps
-- `nupvalues` at 0 until they are set), so an allocation that fails there
-- leaves its GC accounting off (a debug build asserts at `lua_close`).
local function reads(ks, t)
    return t .. '[' .. concat(ks, '], ' .. t .. '[') .. ']',
        'rawget(' .. t .. ', ' .. concat(ks, '), rawget(' .. t .. ', ') .. ')'
end
local function block(ks, t, n, vs)
    local plain, raw = reads(ks, t)
    return '  local ' .. n .. ' = 0\n'
        .. '  for _ in next, ' .. t .. ' do ' .. n .. ' = ' .. n .. ' + 1 end\n'
        .. '  local ' .. concat(vs, ', ') .. '\n'
        .. '  if getmetatable(' .. t .. ') == nil then ' .. concat(vs, ', ') .. ' = ' .. plain .. '\n'
        .. '  else ' .. concat(vs, ', ') .. ' = ' .. raw .. ' end\n'
        .. count(n, vs)
end
local function batch(ks, nf)
    local vs = {}
    for i = 1, nf do vs[i] = 'v' .. i end
    if nf > UNROLL then
        return 'local function fetch_batch(a, i, j)\n'
            .. '  local t = rawget(a, i)\n'
            .. block(ks, 't', 'n', vs)
            .. '  if i == j then return t, n, ' .. concat(vs, ', ') .. ' end\n'
            .. '  return t, n, ' .. concat(vs, ', ') .. ', fetch_batch(a, i + 1, j)\n'
            .. 'end\n'
    end
    local src, rets = { 'local function fetch_batch(a, i, j)\n' }, {}
    for b = 1, BATCH do
        local t, n, bvs = 't' .. b, 'n' .. b, {}
        for i = 1, nf do bvs[i] = 'v' .. b .. '_' .. i end
        rets[#rets + 1] = t .. ', ' .. n .. ', ' .. concat(bvs, ', ')
        src[#src + 1] = '  local ' .. t .. ' = rawget(a, i + ' .. (b - 1) .. ')\n'
            .. block(ks, t, n, bvs)
            .. '  if i + ' .. (b - 1) .. ' == j then return ' .. concat(rets, ', ') .. ' end\n'
    end
    src[#src + 1] = '  error("protolua: batch too large")\nend\n' -- not called so
    return concat(src)
end
local function key(keys, id)
    local k = rawget(keys, id)
    if type(k) ~= 'string' then error(NOT_A_KEY) end
    return format('%q', k)
end
local function build(keys, nf, ...)
    local args = { ... }
    local ks, vs = {}, {}
    for i = 1, nf do ks[i], vs[i] = key(keys, args[i]), 'v' .. i end
    local plain = 't[' .. concat(ks, '], t[') .. ']'
    local raw = 'rawget(t, ' .. concat(ks, '), rawget(t, ') .. ')'
    -- Nested fields: (field index, field count, key ids...) after the ids.
    local nest, rets = {}, { 'n', concat(vs, ', ') }
    local p = nf + 1
    while args[p] do
        local x, m = 'v' .. (args[p] + 1), args[p + 1]
        local sk, sv = {}, {}
        for i = 1, m do sk[i], sv[i] = key(keys, args[p + 1 + i]), 's' .. p .. '_' .. i end
        local c = 'c' .. p
        nest[#nest + 1] = 'local ' .. c .. ', ' .. concat(sv, ', ') .. '\n'
            .. 'if type(' .. x .. ') == "table" then\n'
            .. '  ' .. c .. ' = 0\n'
            .. '  for _ in next, ' .. x .. ' do ' .. c .. ' = ' .. c .. ' + 1 end\n'
            .. '  if getmetatable(' .. x .. ') == nil then ' .. concat(sv, ', ') .. ' = '
            .. x .. '[' .. concat(sk, '], ' .. x .. '[') .. ']\n'
            .. '  else ' .. concat(sv, ', ') .. ' = rawget(' .. x .. ', '
            .. concat(sk, '), rawget(' .. x .. ', ') .. ') end\n'
            .. count(c, sv)
            .. 'end\n'
        rets[#rets + 1] = c .. ', ' .. concat(sv, ', ')
        p = p + 2 + m
    end
    local src = 'local next, rawget, getmetatable, type, error, CMAX, TYPES = ...\n'
        .. 'local function fetch(t)\n'
        .. 'local n = 0\n'
        .. 'for _ in next, t do n = n + 1 end\n'
        .. 'local ' .. concat(vs, ', ') .. '\n'
        .. 'if getmetatable(t) == nil then ' .. concat(vs, ', ') .. ' = ' .. plain .. '\n'
        .. 'else ' .. concat(vs, ', ') .. ' = ' .. raw .. ' end\n'
        .. count('n', vs)
        .. concat(nest)
        .. 'return ' .. concat(rets, ', ') .. '\n'
        .. 'end\n'
        .. batch(ks, nf)
        .. 'return fetch, fetch_batch\n'
    local chunk = loadstring and loadstring(src, '=protolua.fetch')
    if not chunk then return false end
    return chunk(next, rawget, getmetatable, type, error, CMAX, TYPES)
end
local function make_fetcher(keys, slot, bslot, ...)
    local ok, f, b = pcall(build, keys, ...)
    -- Any other error (a hook's, out of memory) is passing: raise it, so
    -- that nothing is stored and the next encode tries again.
    if not ok and f ~= NOT_A_KEY then error(f, 0) end
    rawset(keys, slot, ok and f or false)
    if bslot ~= 0 then rawset(keys, bslot, ok and b or false) end
end
-- The key counts of a[i], ..., a[j] as j - i + 1 results, built on the
-- stack (no shared table: a nested encode from a hook or a finalizer
-- cannot overwrite another call's counts).
local function count_batch(a, i, j)
    local n = 0
    for _ in next, rawget(a, i) do n = n + 1 end
    if i == j then return n end
    return n, count_batch(a, i + 1, j)
end
-- Whether a hot `next` loop gets a trace (Helper::NextCompiles).
local function next_compiles()
    local jit = rawget(_G, 'jit')
    if type(jit) ~= 'table' or not jit.status or not jit.status() or not jit.attach then return false end
    local function probe(t)
        local n = 0
        for _ in next, t do n = n + 1 end
        return n
    end
    local started, compiled = {}, false
    local function on_trace(what, tr, func)
        if what == 'start' and func == probe then
            started[tr] = true
        elseif what == 'stop' and started[tr] then
            compiled = true
        end
    end
    jit.attach(on_trace, 'trace')
    local t = { a = 1, b = 2, c = 3, d = 4 }
    local ok = pcall(function()
        for _ = 1, 300 do probe(t) end
    end)
    jit.attach(on_trace)
    return ok and compiled
end
local function count(t)
    local n = 0
    for _ in next, t do n = n + 1 end
    return n
end
return count, count_batch, make_fetcher, next_compiles()
