-- Helpers shared by the scripts here: wire values as byte strings, so no
-- 64-bit arithmetic is needed (Lua 5.1 numbers); descriptor fields; the
-- seeded generator; hex.
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

return M
