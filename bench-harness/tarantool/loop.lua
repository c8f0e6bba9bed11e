-- A bare decode loop inside Tarantool, for callgrind (bench-harness/tarantool/icount.sh)
-- and `perf record`:
--
--   tarantool loop.lua <fixtures dir> person|bench <label> proto|mp|floor <iterations> [method]
--
-- `proto` decodes the cell's protobuf bytes with protolua, as the matrix
-- does (`local dec = Msg.decode; dec(Msg, b)`; `method` for `Msg:decode(b)`),
-- `mp` the same table encoded with Tarantool's msgpack through
-- `msgpack.decode`, `floor` the decode floor (the bench-only
-- protolua_floors.so in PROTOLUA_FLOORS=<dir>, see floors.sh) building the
-- table protolua decodes. Default load options. PROTOLUA_SO=<dir> loads
-- <dir>/protolua.so instead of the rock (run it from a directory without a
-- .rocks tree: Tarantool searches ./.rocks before package.cpath).
local so = os.getenv('PROTOLUA_SO')
if so then package.cpath = so .. '/?.so;' .. package.cpath end
local protolua = require('protolua')
local msgpack = require('msgpack')
local FIX = assert(arg[1], 'usage: loop.lua <fixtures> person|bench <label> proto|mp|floor <n> [method]')
local M = dofile(FIX .. '/matrix.lua')
local which, label, codec, n, style = arg[2], arg[3], arg[4], tonumber(arg[5]), arg[6]
local s, Msg, t
if which == 'person' then
    s = protolua.load_file(FIX .. '/descriptors/hello.fds')
    Msg, t = s:message('hello.Person'), M.person(label)
else
    s = protolua.load_file(FIX .. '/descriptors/proto2_basic.fds')
    Msg, t = s:message('proto2_basic.BenchPayload'), M.bench(label)
end
local b = Msg:encode(t)
local mb = msgpack.encode(t)
-- One decode before the loop, in the 0-iteration run too, so that one-time
-- work (shape constructors compiled on first use) cancels out.
Msg:decode(b)
msgpack.decode(mb)
if codec == 'proto' then
    if style == 'method' then
        for _ = 1, n do Msg:decode(b) end
    else
        local dec = Msg.decode
        for _ = 1, n do dec(Msg, b) end
    end
elseif codec == 'floor' then
    package.cpath = assert(os.getenv('PROTOLUA_FLOORS'), 'floor: set PROTOLUA_FLOORS') .. '/?.so;' .. package.cpath
    local dec = require('protolua_floors')(Msg:decode(b))
    for _ = 1, n do dec(nil, b) end
else
    local dec = msgpack.decode
    for _ = 1, n do dec(mb) end
end
os.exit(0)
