-- protolua.pb's walks over Lua tables (docs/PB_COMPAT.md): what protolua's
-- own options cannot express, run only when an option asks for it. Decode:
-- hooks, lua-protobuf's '#' int64 strings, default metatables and values,
-- default sub-messages, oneof name keys. Encode: hooks and '#' strings
-- (which the schema also takes itself), oneof name keys; the caller's
-- tables copied where changed, never written.
--
-- This chunk returns a constructor; pb.lua calls it with its option table
-- and helpers. Lua 5.1 compatible.
return function(env)
local opt, has_int, ready = env.opt, env.has_int, env.ready
local type, pairs, ipairs, rawget, rawset, setmetatable, tonumber, error =
    type, pairs, ipairs, rawget, rawset, setmetatable, tonumber, error
local concat, floor = table.concat, math.floor
---------------------------------------------------------------------------
-- int64 as lua-protobuf's '#' strings

local INT_MIN, UINT_MAX = -2147483648, 4294967295

-- Decimal digits of |v| divided by 16: quotient digits and remainder.
local function div16(digits)
    local q, r = {}, 0
    for i = 1, #digits do
        local d = r * 10 + digits:byte(i) - 48
        q[#q + 1] = string.char(48 + floor(d / 16))
        r = d % 16
    end
    return (concat(q):gsub('^0+', '')), r
end

local function dec_to_hex(digits)
    if digits == '0' then return '' end
    local out = {}
    while digits ~= '' do
        local r
        digits, r = div16(digits)
        out[#out + 1] = ('0123456789ABCDEF'):sub(r + 1, r + 1)
    end
    return concat(out):reverse()
end

-- A decoded 64-bit value (a decimal string) in the current int64 mode.
local function int64_value(s)
    local n = tonumber(s)
    if n >= INT_MIN and n <= UINT_MAX then
        if has_int then return math.tointeger(n) or n end
        return n
    end
    local neg = s:sub(1, 1) == '-'
    local digits = neg and s:sub(2) or s
    if opt.int64 == 'string' then return '#' .. s end
    return '#' .. (neg and '-' or '') .. '0x' .. dec_to_hex(digits)
end

-- A '#'-prefixed string (decimal or 0x hex) as the decimal protolua takes.
local function from_hash(v)
    if type(v) ~= 'string' or v:sub(1, 1) ~= '#' then return v end
    local neg, body = v:match('^#(%-?)(.*)$')
    local hex = body:match('^0[xX](%x+)$')
    if not hex then return neg .. body end
    local digits = '0'
    for i = 1, #hex do
        -- digits = digits * 16 + hex digit, in decimal.
        local carry, out = tonumber(hex:sub(i, i), 16), {}
        for j = #digits, 1, -1 do
            local d = (digits:byte(j) - 48) * 16 + carry
            out[#out + 1] = string.char(48 + d % 10)
            carry = floor(d / 10)
        end
        while carry > 0 do
            out[#out + 1] = string.char(48 + carry % 10)
            carry = floor(carry / 10)
        end
        digits = (concat(out):reverse():gsub('^0+(%d)', '%1'))
    end
    return neg .. digits
end

---------------------------------------------------------------------------
-- Defaults tables (pb.defaults, use_default_metatable)

local function default_of(e, f, st)
    if f.repeated or f.oneof_index or f.p3opt or f.is_msg then return nil end
    local d = f.default
    local t = f.type_id
    if f.is_enum then
        local en = st.types[f.ref]
        if not en then return nil end
        local item = d and en.by_name[d] or (e.proto3 and en.values[1]) or nil
        if not item then return nil end
        return opt.enum_as_value and item.number or item.name
    elseif t == 9 or t == 12 then
        if d then return d end
        return e.proto3 and '' or nil
    elseif t == 8 then
        if d then return d == 'true' end
        if e.proto3 then return false end
    elseif t == 1 or t == 2 then
        if d then return tonumber(d) end
        if e.proto3 then return 0.0 end
    else
        if d then
            local n = tonumber(d)
            if n and f.is64 and opt.int64 ~= 'number' then return int64_value(d) end
            return n
        end
        if e.proto3 then return 0 end
    end
    return nil
end

local function defaults_table(e, st)
    local t = st.defs[e.name]
    if t == nil then
        t = {}
        for _, f in ipairs(e.fields) do
            local v = default_of(e, f, st)
            if v ~= nil then t[f.name] = v end
        end
        t.__index = t
        st.defs[e.name] = t
    end
    return t
end


---------------------------------------------------------------------------
-- The decode walk (run only when an option needs it)

local post_message
-- Set by pb.decode for one call: fill declared defaults in the walk.
local fill_defaults = nil

local function post_value(f, v, st, depth)
    if f.is_msg then
        local sub = st.types[f.ref]
        if sub and type(v) == 'table' then return post_message(sub, v, st, depth + 1) end
    elseif f.is_enum then
        local h = opt.dec_hooks and st.hooks[f.ref]
        if h then
            local r = h(v)
            if r ~= nil then return r end
        end
    elseif f.is64 and opt.int64 ~= 'number' and type(v) == 'string' then
        return int64_value(v)
    end
    return v
end

post_message = function(e, t, st, depth)
    if depth > 200 then error('pb.decode: message nested too deeply', 0) end
    for _, f in ipairs(e.fields) do
        local v = rawget(t, f.name)
        if v ~= nil then
            local sub = f.is_msg and st.types[f.ref]
            if sub and sub.kind == 'map' then
                local vf = sub.by_number[2]
                local kf = sub.by_number[1]
                local fixed = {}
                for k, x in pairs(v) do
                    local nk = post_value(kf, k, st, depth)
                    fixed[#fixed + 1] = { k, nk, post_value(vf, x, st, depth) }
                end
                for _, kv in ipairs(fixed) do
                    if kv[1] ~= kv[2] then v[kv[1]] = nil end
                    v[kv[2]] = kv[3]
                end
                local mt = st.defs['*map']
                if mt then setmetatable(v, mt) end
            elseif f.repeated then
                for i = 1, #v do v[i] = post_value(f, v[i], st, depth) end
                local mt = st.defs['*array']
                if mt then setmetatable(v, mt) end
            else
                rawset(t, f.name, post_value(f, v, st, depth))
            end
        elseif f.is_msg and not f.repeated and not f.oneof_index and opt.decode_default_message then
            local sub = st.types[f.ref]
            if sub and sub.kind == 'message' then
                ready(sub, st)
                local d = sub.h:decode('')
                if opt.defaults == 'metatable' then setmetatable(d, defaults_table(sub, st)) end
                rawset(t, f.name, d)
            end
        end
    end
    if e.has_oneof then
        for _, f in ipairs(e.fields) do
            if f.oneof_name and rawget(t, f.name) ~= nil then rawset(t, f.oneof_name, f.name) end
        end
    end
    if fill_defaults and (e.proto3 or fill_defaults == 'values') then
        if fill_defaults ~= 'arrays' then
            for k, v in pairs(defaults_table(e, st)) do
                if k ~= '__index' and rawget(t, k) == nil then rawset(t, k, v) end
            end
        end
        if e.proto3 then
            for _, f in ipairs(e.fields) do
                if f.repeated and rawget(t, f.name) == nil then rawset(t, f.name, {}) end
            end
        end
    end
    if opt.defaults == 'metatable' then setmetatable(t, defaults_table(e, st)) end
    local h = opt.dec_hooks and st.hooks[e.name]
    if h then
        local r = h(t)
        if r ~= nil then return r end
    end
    return t
end

---------------------------------------------------------------------------
-- The encode walk: encode hooks and '#' int64 strings, copy on write

local pre_message

local function pre_value(f, v, st, depth)
    if f.is_msg then
        local sub = st.types[f.ref]
        if sub and type(v) == 'table' then return pre_message(sub, v, st, depth + 1) end
        return v
    elseif f.is_enum then
        local h = opt.enc_hooks and st.enchooks[f.ref]
        if h then
            local r = h(v)
            if r ~= nil then return r end
        end
        return v
    elseif f.is64 then
        return from_hash(v)
    end
    return v
end

local function copy(t)
    local c = {}
    for k, v in pairs(t) do c[k] = v end
    return c
end

pre_message = function(e, t, st, depth)
    if depth > 200 then error('pb.encode: message nested too deeply', 0) end
    local h = opt.enc_hooks and st.enchooks[e.name]
    if h then
        local r = h(t)
        if r ~= nil then t = r end
        if type(t) ~= 'table' then return t end
    end
    local out = t
    if e.has_oneof then
        -- decode's `t[oneof] = member name` keys are not fields.
        for name in pairs(e.oneofs) do
            if rawget(t, name) ~= nil and e.by_name[name] == nil then
                if out == t then out = copy(t) end
                out[name] = nil
            end
        end
    end
    for _, f in ipairs(e.fields) do
        local v = rawget(t, f.name)
        if v ~= nil and (f.is_msg or f.is_enum or f.is64) then
            local nv = v
            local sub = f.is_msg and st.types[f.ref]
            if type(v) == 'table' and sub and sub.kind == 'map' then
                local vf = sub.by_number[2]
                local kf = sub.by_number[1]
                for k, x in pairs(v) do
                    local nk, nx = pre_value(kf, k, st, depth), pre_value(vf, x, st, depth)
                    if nk ~= k or nx ~= x then
                        if nv == v then nv = copy(v) end
                        nv[k] = nil
                        nv[nk] = nx
                    end
                end
            elseif f.repeated and type(v) == 'table' then
                for i = 1, #v do
                    local x = pre_value(f, v[i], st, depth)
                    if x ~= v[i] then
                        if nv == v then nv = copy(v) end
                        nv[i] = x
                    end
                end
            else
                nv = pre_value(f, v, st, depth)
            end
            if nv ~= v then
                if out == t then out = copy(t) end
                rawset(out, f.name, nv)
            end
        end
    end
    return out
end

---------------------------------------------------------------------------
-- The light decode walk: only lua-protobuf's oneof name keys, descending
-- only into fields whose type can hold one.

-- The message type of a field's values (a map's value type), or nil.
local function value_type(f, st)
    local sub = f.is_msg and st.types[f.ref]
    if sub and sub.kind == 'map' then
        local vf = sub.by_number[2]
        sub = vf and vf.is_msg and st.types[vf.ref]
    end
    return sub or nil
end

-- The fields of `e` the light walk descends into, computed once per type.
local function light_subs(e, st)
    local subs = e.light_subs
    if subs then return subs end
    subs = {}
    -- Flat arrays: the walk indexes plainly (decoded tables have no
    -- __index or __newindex), which interpreted Lua runs far faster than
    -- rawget calls.
    e.oneof_members, e.oneof_names = {}, {}
    for _, f in ipairs(e.fields) do
        if f.oneof_name then
            e.oneof_members[#e.oneof_members + 1] = f.name
            e.oneof_names[#e.oneof_names + 1] = f.oneof_name
        end
        local sub = value_type(f, st)
        if sub and sub.oneof_walk == nil then env.classify(sub, st) end
        if sub and sub.oneof_walk then subs[#subs + 1] = { f, sub, st.types[f.ref].kind == 'map' } end
    end
    e.light_subs = subs
    return subs
end

local function light_message(e, t, st, depth)
    if depth > 200 then error('pb.decode: message nested too deeply', 0) end
    local subs = e.light_subs or light_subs(e, st)
    local keys, names = e.oneof_members, e.oneof_names
    for i = 1, #keys do
        if t[keys[i]] ~= nil then t[names[i]] = keys[i] end
    end
    for i = 1, #subs do
        local s = subs[i]
        local v = t[s[1].name]
        if type(v) == 'table' then
            if s[3] then
                for _, x in pairs(v) do
                    if type(x) == 'table' then light_message(s[2], x, st, depth + 1) end
                end
            elseif s[1].repeated then
                for j = 1, #v do light_message(s[2], v[j], st, depth + 1) end
            else
                light_message(s[2], v, st, depth + 1)
            end
        end
    end
    return t
end

---------------------------------------------------------------------------

return {
    -- The light walk from a root message (hooks off, no '#' strings, no
    -- defaults to fill: only oneof name keys).
    light = function(e, t, st) return light_message(e, t, st, 1) end,
    -- The decode walk from a root message; `fill` is what it fills ('auto',
    -- 'values', 'arrays' or nil, see pb.lua's prepare).
    post = function(e, t, st, fill)
        fill_defaults = fill
        return post_message(e, t, st, 1)
    end,
    -- The encode walk from a root message: the table to encode.
    pre = function(e, t, st) return pre_message(e, t, st, 1) end,
    defaults_table = defaults_table,
}
end
