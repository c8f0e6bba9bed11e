-- Wire helpers shared by the scripts here: values as byte strings, so no
-- 64-bit arithmetic is needed (Lua 5.1 numbers).
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

return M
