-- Runs of repeated fields with one-byte tags, every scalar kind: the run
-- loops of src/binary/decode/runs.rs (`same_tag_strings`, `varints_into`
-- over scan.rs's `varint_run` for unpacked runs after their first
-- element, `packed_fixed` for packed fixed-width runs)
-- against the element-by-element results and errors (review-7; the
-- fixtures' repeated fields of most kinds have two-byte tags, which never
-- reach those loops). Lua 5.1 compatible.

local tag, varint = T.tag, T.varint
local function len(num, s) return tag(num, 2) .. varint(#s) .. s end
local function vint(num, v) return tag(num, 0) .. varint(v) end
local TY = { double = 1, float = 2, int64 = 3, uint64 = 4, int32 = 5, fixed64 = 6, fixed32 = 7, bool = 8,
    string = 9, message = 11, bytes = 12, uint32 = 13, enum = 14, sfixed32 = 15, sfixed64 = 16, sint32 = 17,
    sint64 = 18 }
local function field(name, number, ty, label, tyname)
    return len(2, len(1, name) .. vint(3, number) .. vint(4, label) .. vint(5, TY[ty])
        .. (tyname and len(6, tyname) or ''))
end
-- rl.R (proto3) and rl2.R (proto2, closed enum, no UTF-8 check): the
-- kinds at one-byte numbers, fixed64/sfixed64 at 16/17, a sub-message at 14
local KIND_AT = { 'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'bool', 'enum', 'string', 'bytes',
    'fixed32', 'sfixed32', 'float', 'message', 'double', 'fixed64', 'sfixed64' }
local function file(pkg, syntax)
    local f = {}
    for i, k in ipairs(KIND_AT) do
        local tyname = (k == 'enum' and '.' .. pkg .. '.E') or (k == 'message' and '.' .. pkg .. '.R') or nil
        f[#f + 1] = field('f' .. i, i, k, k == 'message' and 1 or 3, tyname)
    end
    local vals = len(2, len(1, 'E_ONE') .. vint(2, 1)) .. len(2, len(1, 'E_TWO') .. vint(2, 2))
    if syntax then vals = len(2, len(1, 'E_ZERO') .. vint(2, 0)) .. vals end
    local body = len(1, pkg .. '.proto') .. len(2, pkg) .. len(4, len(1, 'R') .. table.concat(f))
        .. len(5, len(1, 'E') .. vals) .. (syntax and len(12, syntax) or '')
    return len(1, body)
end
local S = protolua.load(file('rl', 'proto3') .. file('rl2', nil))
local R3, R2 = S:message('rl.R'), S:message('rl2.R')

local NEG1 = '\255\255\255\255\255\255\255\255\255\1'
local function run(num, wt, encs)
    local t = {}
    for i, e in ipairs(encs) do t[i] = tag(num, wt) .. e end
    return table.concat(t)
end

T.test('decode runs: varints of every kind and width (varints_into)', function()
    local big5 = '\128\128\128\128\8' -- 2^31
    local wrap5 = '\133\128\128\128\16' -- 2^32 + 5
    local n70000 = '\144\221\251\255\255\255\255\255\255\1'
    local m2_63 = '\128\128\128\128\128\128\128\128\128\1' -- 2^63
    -- int32: sign-extended 10-byte negatives, 5-byte values above 2^31 truncated
    T.eq(R3:decode(run(1, 0, { '\1', '\172\2', NEG1, big5, wrap5, n70000, '\0' })),
        { f1 = { 1, 300, -1, -2147483648, 5, -70000, 0 } })
    -- uint32 truncates, sint32 unzigzags the low 32 bits
    T.eq(R3:decode(run(3, 0, { '\1', NEG1, wrap5, '\255\255\255\255\15' })), { f3 = { 1, 4294967295, 5, 4294967295 } })
    T.eq(R3:decode(run(5, 0, { '\1', '\2', '\255\255\255\255\15', '\254\255\255\255\15', wrap5 })),
        { f5 = { -1, 1, -2147483648, 2147483647, -3 } })
    -- 64-bit kinds as decimal strings (the same on every host)
    local s = { int64 = 'string' }
    T.eq(R3:decode(run(2, 0, { '\1', NEG1, m2_63, '\172\2' }), s), { f2 = { '1', '-1', '-9223372036854775808', '300' } })
    T.eq(R3:decode(run(4, 0, { '\0', NEG1, m2_63 }), s), { f4 = { '0', '18446744073709551615', '9223372036854775808' } })
    T.eq(R3:decode(run(6, 0, { '\1', '\2', NEG1, '\254' .. NEG1:sub(2) }), s),
        { f6 = { '-1', '1', '-9223372036854775808', '9223372036854775807' } })
    -- bool from multi-byte and non-canonical varints
    T.eq(R3:decode(run(7, 0, { '\1', '\128\0', '\128\1', m2_63, '\0', '\128\128\0', '\2' })),
        { f7 = { true, false, true, true, false, false, true } })
    -- open enum: names, unnamed numbers, negatives; numbers with enums = 'number'
    local e = run(8, 0, { '\1', '\0', '\2', '\7', NEG1, big5 })
    T.eq(R3:decode(e), { f8 = { 'E_ONE', 'E_ZERO', 'E_TWO', 7, -1, -2147483648 } })
    T.eq(R3:decode(e, { enums = 'number' }), { f8 = { 1, 0, 2, 7, -1, -2147483648 } })
    -- closed enum (proto2): values the enum lacks go to the unknown fields
    local t = R2:decode(run(8, 0, { '\1', '\7', '\2', '\1' }))
    T.eq(t, { f8 = { 'E_ONE', 'E_TWO', 'E_ONE' } })
    T.eq(protolua.unknown(t), '\64\7')
    -- a run broken by another field and resumed appends; at the very end
    for _, tail in ipairs({ '', '\74\1x' }) do
        T.eq(R3:decode(run(1, 0, { NEG1, '\1' }) .. '\24\9' .. run(1, 0, { '\2', NEG1 }) .. tail),
            { f1 = { -1, 1, 2, -1 }, f3 = { 9 }, f9 = tail ~= '' and { 'x' } or nil })
    end
end)

T.test('decode runs: a bad varint in element k names it (varint_run stops short)', function()
    for k = 2, 5 do
        local good = {}
        for i = 1, k - 1 do good[i] = i % 2 == 0 and NEG1 or '\172\2' end
        for _, bad in ipairs({
            { '\255\255\255', 'truncated input' },
            { string.rep('\255', 10) .. '\1', 'varint longer than 64 bits' },
            { string.rep('\255', 9) .. '\2', 'varint' },
        }) do
            local bin = run(1, 0, good) .. tag(1, 0) .. bad[1]
            T.raises('field f1[' .. k .. ']: ' .. bad[2], function() return R3:decode(bin) end)
            T.raises('field f7[' .. k .. ']: ' .. bad[2], function() return R3:decode(run(7, 0, good) .. tag(7, 0) .. bad[1]) end)
            -- inside a sub-message: the path names it
            T.raises('field f14.f1[' .. k .. ']: ' .. bad[2], function() return R3:decode(len(14, bin)) end)
        end
    end
end)

T.test('decode runs: strings (same_tag_strings) with one- and two-byte lengths and invalid UTF-8 in element k', function()
    local s127, s128 = string.rep('a', 127), string.rep('b', 128)
    local function str(x) return varint(#x) .. x end
    local vals = { 'a', '', s127, '\195\169', s128, 'z', s127 }
    local encs = {}
    for i, v in ipairs(vals) do encs[i] = str(v) end
    T.eq(R3:decode(run(9, 2, encs)), { f9 = vals })
    T.eq(R3:decode(run(10, 2, encs) .. '\8\1'), { f10 = vals, f1 = { 1 } })
    for k = 2, 4 do
        for _, bad in ipairs({ '\192\128', '\237\160\128', '\244\144\128\128', '\255', '\128', '\226\130' }) do
            local e = {}
            for i = 1, k - 1 do e[i] = str('x' .. i) end
            e[k] = str('ok' .. bad)
            e[k + 1] = str('y')
            local bin = run(9, 2, e)
            -- the offset: the bad byte's, past the tags, lengths and values before it
            local at = 0
            for i = 1, k - 1 do at = at + 1 + #e[i] end
            at = at + 2 + 2
            T.raises('field f9[' .. k .. ']: invalid UTF-8 at byte ' .. at, function() return R3:decode(bin) end)
            T.raises('field f14.f9[' .. k .. ']: invalid UTF-8 at byte ' .. (at + 2),
                function() return R3:decode(len(14, bin)) end)
            -- not checked: bytes, proto2 strings, utf8 = false
            T.eq(#R3:decode(run(10, 2, e)).f10, k + 1)
            T.eq(#R2:decode(bin).f9, k + 1)
            T.eq(#R3:decode(bin, { utf8 = false }).f9, k + 1)
        end
    end
    -- a length that does not fit, in element 3
    T.raises('field f9[3]: length 5 exceeds the 2 bytes remaining',
        function() return R3:decode(run(9, 2, { '\1a', '\1b', '\5cd' })) end)
end)

T.test('decode runs: a run inside a sub-message stops at its end, the parent goes on with the same tag', function()
    local inner = run(1, 0, { '\1', '\2', '\3' })
    local t = R3:decode(len(14, inner) .. run(1, 0, { '\4', '\5' }))
    T.eq(t, { f14 = { f1 = { 1, 2, 3 } }, f1 = { 4, 5 } })
    local si = run(9, 2, { '\1a', '\1b' })
    T.eq(R3:decode(len(14, si) .. run(9, 2, { '\1c' })), { f14 = { f9 = { 'a', 'b' } }, f9 = { 'c' } })
    -- the sub-message's length cuts its last element: an error, not a read past it
    local cut = len(14, run(9, 2, { '\1a', '\1b' }):sub(1, -2)) .. 'b'
    T.raises('field f14.f9[2]: length 1 exceeds the 0 bytes remaining', function() return R3:decode(cut) end)
    local vcut = len(14, run(1, 0, { '\1', '\172\2' }):sub(1, -2)) .. '\2'
    T.raises('field f14.f1[2]: truncated input', function() return R3:decode(vcut) end)
    local fcut = len(14, tag(11, 2) .. '\8' .. '\1\0\0\0\2\0\0') .. '\0'
    T.raises('field f14.f11: length 8 exceeds the 7 bytes remaining at byte 3', function() return R3:decode(fcut) end)
end)

T.test('decode runs: packed fixed-width runs (packed_fixed), a partial last value', function()
    local function le(n, bytes)
        local t = {}
        for i = 1, bytes do
            t[i] = string.char(n % 256)
            n = math.floor(n / 256)
        end
        return table.concat(t)
    end
    local function packed(num, body) return len(num, body) end
    T.eq(R3:decode(packed(11, le(1, 4) .. le(4294967295, 4) .. le(2147483648, 4))), { f11 = { 1, 4294967295, 2147483648 } })
    T.eq(R3:decode(packed(12, le(1, 4) .. le(4294967295, 4) .. le(2147483648, 4))), { f12 = { 1, -1, -2147483648 } })
    local f = R3:decode(packed(13, '\0\0\128\63' .. '\0\0\128\255' .. '\0\0\192\127' .. '\0\0\0\128'))
    T.eq(#f.f13, 4)
    T.eq(f.f13[1], 1)
    T.eq(f.f13[2], -1 / 0)
    T.eq(f.f13[3] ~= f.f13[3], true, 'NaN')
    T.eq(1 / f.f13[4], -1 / 0, '-0.0')
    local d = R3:decode(packed(15, '\0\0\0\0\0\0\240\63' .. '\0\0\0\0\0\0\248\127' .. '\0\0\0\0\0\0\0\192'))
    T.eq(d.f15[1], 1)
    T.eq(d.f15[2] ~= d.f15[2], true, 'NaN')
    T.eq(d.f15[3], -2)
    local s = { int64 = 'string' }
    local ones = string.rep('\255', 8)
    T.eq(R3:decode(packed(16, le(5, 8) .. ones), s), { f16 = { '5', '18446744073709551615' } })
    T.eq(R3:decode(packed(17, le(5, 8) .. ones .. '\0\0\0\0\0\0\0\128'), s),
        { f17 = { '5', '-1', '-9223372036854775808' } })
    -- a partial last value: element n + 1 is named, at the run's end
    for extra = 1, 3 do
        local body = le(1, 4) .. le(2, 4) .. string.rep('\9', extra)
        for _, num in ipairs({ 11, 12, 13 }) do
            T.raises('field f' .. num .. '[3]: truncated input at byte 10',
                function() return R3:decode(packed(num, body)) end)
        end
    end
    for extra = 1, 7 do
        local body = le(1, 8) .. string.rep('\9', extra)
        for _, num in ipairs({ 15, 16, 17 }) do
            T.raises('field f' .. num .. '[2]: truncated input at byte ' .. (2 + 8 + (num > 15 and 1 or 0)),
                function() return R3:decode(packed(num, body)) end)
        end
    end
    -- only a partial value; packed runs append to an unpacked one
    T.raises('field f11[1]: truncated input', function() return R3:decode(packed(11, '\1\2')) end)
    T.eq(R3:decode(tag(11, 5) .. le(7, 4) .. packed(11, le(8, 4) .. le(9, 4)) .. tag(11, 5) .. le(10, 4)),
        { f11 = { 7, 8, 9, 10 } })
end)
