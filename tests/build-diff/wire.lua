-- Helpers shared by the scripts here: wire values as byte strings, so no
-- 64-bit arithmetic is needed (Lua 5.1 numbers); descriptor builders; the
-- seeded generator; hex; a decoded table as text.
local M = {}

--- The varint of `n`, 0 <= n < 2^53.
function M.varint(n)
    local b = {}
    repeat
        local x = n % 128
        n = (n - x) / 128
        b[#b + 1] = string.char(n > 0 and x + 128 or x)
    until n == 0
    return table.concat(b)
end

--- The tag of field `num` with wire type `wt`.
function M.tag(num, wt) return M.varint(num * 8 + wt) end

--- A LEN field `num` holding `s`; a varint field `num` holding `v`.
function M.len(num, s) return M.varint(num * 8 + 2) .. M.varint(#s) .. s end
function M.vint(num, v) return M.varint(num * 8) .. M.varint(v) end

--- FieldDescriptorProto.Type numbers, and the scalar kinds.
M.T = { double = 1, float = 2, int64 = 3, uint64 = 4, int32 = 5, fixed64 = 6, fixed32 = 7, bool = 8,
    string = 9, message = 11, bytes = 12, uint32 = 13, enum = 14, sfixed32 = 15, sfixed64 = 16, sint32 = 17, sint64 = 18 }
M.KINDS = { 'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32',
    'sfixed64', 'float', 'double', 'bool', 'string', 'bytes' }
--- Each scalar kind's (and enum's) wire type.
M.WT = { int32 = 0, int64 = 0, uint32 = 0, uint64 = 0, sint32 = 0, sint64 = 0, bool = 0, fixed32 = 5,
    sfixed32 = 5, float = 5, fixed64 = 1, sfixed64 = 1, double = 1, string = 2, bytes = 2, enum = 0 }

--- A FieldDescriptorProto: `ty` a name in `T` or a type number, `label`
--- 1 (optional, the default) or 3 (repeated), `tyname` the type's full
--- name, `opts` raw bytes appended (e.g. an options field).
function M.field(name, number, ty, label, tyname, opts)
    return M.len(2, M.len(1, name) .. M.vint(3, number) .. M.vint(4, label or 1) .. M.vint(5, M.T[ty] or ty)
        .. (tyname and M.len(6, tyname) or '') .. (opts or ''))
end

--- A DescriptorProto with `fields`; `nested`: raw bytes appended (nested
--- types, enums).
function M.msg(name, fields, nested)
    return M.len(4, M.len(1, name) .. table.concat(fields) .. (nested or ''))
end

--- A FileDescriptorProto as a FileDescriptorSet entry; `syntax` nil for
--- proto2.
function M.file(fname, pkg, syntax, body)
    return M.len(1, M.len(1, fname) .. M.len(2, pkg) .. body .. (syntax and M.len(12, syntax) or ''))
end

--- A generator seeded with `seed` (Park-Miller: exact in doubles and in
--- 5.4 integers): `rnd(n)` in 1..n, `chance(p)`, `pick(t)`.
function M.rng(seed)
    local state = seed % 2147483646 + 1
    local function rnd(n)
        state = state * 16807 % 2147483647
        return state % n + 1
    end
    local function chance(p) return rnd(10000) <= p * 10000 end
    local function pick(t) return t[rnd(#t)] end
    return rnd, chance, pick
end

--- `s` as lowercase hex.
function M.hex(s) return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end)) end

--- `v` as text appended to `out`: tables with their keys sorted, strings
--- as hex; `unknown`, if given, returns a table's kept unknown bytes
--- (`protolua.unknown`), printed as `U:hex` after its fields.
function M.dump(v, out, unknown)
    local ty = type(v)
    if ty == 'table' then
        local keys = {}
        for k in pairs(v) do keys[#keys + 1] = k end
        table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
        out[#out + 1] = '{'
        for _, k in ipairs(keys) do
            out[#out + 1] = tostring(k) .. '='
            M.dump(v[k], out, unknown)
            out[#out + 1] = ','
        end
        local u = unknown and unknown(v)
        if u then out[#out + 1] = 'U:' .. M.hex(u) end
        out[#out + 1] = '}'
    elseif ty == 'string' then
        out[#out + 1] = M.hex(v)
    else
        out[#out + 1] = tostring(v)
    end
end

return M
