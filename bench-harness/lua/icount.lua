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
-- One op before the loop, in the 0-op run too, so that one-time work (a
-- decode's shape constructors are compiled on first use: ~39,000
-- instructions each) cancels out and the count is the steady state's.
if op == 'encode' then Msg:encode(t) else Msg:decode(b) end
if op == 'encode' then for _ = 1, n do Msg:encode(t) end else for _ = 1, n do Msg:decode(b) end end
