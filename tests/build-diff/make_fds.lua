-- Writes a FileDescriptorSet (proto3 and proto2 files) with messages at the
-- encode fetchers' limits (64 fields, nested sub-messages of 16 fields,
-- results near FETCH_MAX_RESULTS, 65 fields, deep recursion) and decode's
-- fast path (every scalar kind at numbers 1..15, proto2 required and open
-- enums). Usage: lua make_fds.lua OUT.fds
-- The wire helpers shared by the scripts here.
local wire = dofile((arg[0]:match('^(.*/)') or './') .. 'wire.lua')
local varint, len, vint, T, KINDS = wire.varint, wire.len, wire.vint, wire.T, wire.KINDS
local field, msg, file = wire.field, wire.msg, wire.file

-- proto3 file
local p3 = {}
local s16 = {}
for i = 1, 16 do s16[#s16 + 1] = field('s' .. i, i, KINDS[(i - 1) % #KINDS + 1]) end
p3[#p3 + 1] = msg('S16', s16)
local big = {}
for i = 1, 60 do big[#big + 1] = field('f' .. i, i, KINDS[(i - 1) % #KINDS + 1]) end
for i = 61, 64 do big[#big + 1] = field('m' .. i, i, 'message', 1, '.g3.S16') end
p3[#p3 + 1] = msg('Big', big)
local big2 = {}
for i = 1, 4 do big2[#big2 + 1] = field('m' .. i, i, 'message', 1, '.g3.S16') end
for i = 5, 64 do big2[#big2 + 1] = field('f' .. i, i, KINDS[(i - 1) % #KINDS + 1]) end
p3[#p3 + 1] = msg('Big2', big2)
local m65 = {}
for i = 1, 65 do m65[#m65 + 1] = field('f' .. i, i, KINDS[(i - 1) % #KINDS + 1]) end
m65[#m65 + 1] = field('sub', 66, 'message', 1, '.g3.S16')
p3[#p3 + 1] = msg('M65', m65)
p3[#p3 + 1] = msg('Deep', {
    field('v', 1, 'int32'), field('s', 2, 'string'), field('child', 3, 'message', 1, '.g3.Deep'),
    field('kids', 4, 'message', 3, '.g3.Deep'), field('leaf', 5, 'message', 1, '.g3.S16'),
    field('leaves', 6, 'message', 3, '.g3.S16'), field('e', 7, 'enum', 1, '.g3.E'),
})
p3[#p3 + 1] = msg('R', {
    field('items', 1, 'message', 3, '.g3.S16'), field('bigs', 2, 'message', 3, '.g3.Big'),
    field('deeps', 3, 'message', 3, '.g3.Deep'), field('one', 4, 'message', 1, '.g3.S16'),
})
local all15 = {}
for i = 1, 15 do all15[#all15 + 1] = field('k' .. i, i, KINDS[i]) end
all15[#all15 + 1] = field('e', 16, 'enum', 1, '.g3.E')
p3[#p3 + 1] = msg('All15', all15)
local lowe = { field('e', 1, 'enum', 1, '.g3.E'), field('x', 2, 'int32') }
p3[#p3 + 1] = msg('LowEnum', lowe)
local enum = len(5, len(1, 'E') .. len(2, len(1, 'E_ZERO') .. vint(2, 0)) .. len(2, len(1, 'E_ONE') .. vint(2, 1))
    .. len(2, len(1, 'E_BIG') .. vint(2, 1000)))
local f3 = file('g3.proto', 'g3', 'proto3', table.concat(p3) .. enum)

-- proto2 file: required plain fields at low numbers, a closed enum, defaults
local p2 = {}
local req = {}
for i = 1, 15 do req[#req + 1] = field('r' .. i, i, KINDS[i], (i % 3 == 0) and 2 or 1) end
req[#req + 1] = field('ce', 16, 'enum', 1, '.g2.CE')
req[#req + 1] = field('ce2', 14 + 3, 'enum', 2, '.g2.CE')
p2[#p2 + 1] = msg('Req', req)
p2[#p2 + 1] = msg('LowClosed', { field('ce', 1, 'enum', 1, '.g2.CE'), field('x', 2, 'int32', 2) })
local cenum = len(5, len(1, 'CE') .. len(2, len(1, 'CE_A') .. vint(2, 1)) .. len(2, len(1, 'CE_B') .. vint(2, 2)))
local f2 = file('g2.proto', 'g2', 'proto2', table.concat(p2) .. cenum)

local out = assert(io.open(arg[1], 'wb'))
out:write(f3 .. f2)
out:close()
