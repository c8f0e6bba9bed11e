-- Instruction-count probe: run under valgrind --tool=callgrind with system luajit and
-- a protolua.so built with --no-default-features --features luajit,module (or lua5.4
-- and --features lua54,module: see icount.sh's ICOUNT_LUA).
-- usage: luajit icount.lua <dir with protolua.so> person|bench <label> encode|decode <iters>
-- (subtract a run with iters = 0 and divide by iters for instructions per op)
package.cpath = arg[1] .. '/?.so;' .. package.cpath
local protolua = require('protolua')
local FIX = os.getenv('PROTOLUA_FIXTURES') or 'fixtures'
local M = dofile(FIX .. '/matrix.lua')
local which, label, op, n = arg[2], arg[3], arg[4], tonumber(arg[5])
-- ICOUNT_LOAD_OPTS: a Lua table literal of load options, e.g. "{ serialize = true }".
local opts = assert((loadstring or load)('return ' .. (os.getenv('ICOUNT_LOAD_OPTS') or 'nil')))()
local s, Msg, t
if which == 'person' then
  s = protolua.load_file(FIX .. '/descriptors/hello.fds', opts); Msg = s:message('hello.Person'); t = M.person(label)
else
  s = protolua.load_file(FIX .. '/descriptors/proto2_basic.fds', opts); Msg = s:message('proto2_basic.BenchPayload'); t = M.bench(label)
end
local b = Msg:encode(t)
-- The op's argument: the table, the bytes, or their JSON text.
local input = ({ encode = t, encode_json = t, decode = b, binary_to_json = b,
  decode_json = Msg:binary_to_json(b), json_to_binary = Msg:binary_to_json(b) })[op]
local f = Msg[op]
if input == nil or f == nil then error('icount.lua: unknown op ' .. tostring(op)) end
-- One op before the loop, in the 0-op run too, so that one-time work (a
-- decode's shape constructors are compiled on first use: ~39,000
-- instructions each) cancels out and the count is the steady state's.
f(Msg, input)
if op == 'encode' then for _ = 1, n do Msg:encode(t) end
elseif op == 'decode' then for _ = 1, n do Msg:decode(b) end
else for _ = 1, n do f(Msg, input) end end
