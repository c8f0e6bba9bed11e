-- Instruction-count probe for map fields (the matrix has none): run under
-- valgrind --tool=callgrind with system luajit and a protolua.so built with
-- --no-default-features --features luajit,module, as icount.lua.
-- usage: luajit map_icount.lua <dir with protolua.so> int|string encode|decode <iters>
-- `int`: 50 entries whose order `next` gives is the same in every run
-- (int32, sint64 and bool keys); `string`: string keys too, whose order
-- follows the process's string hashes (so counts vary run to run).
-- Subtract a run with iters = 0 and divide by iters for instructions per op.
package.cpath = arg[1] .. '/?.so;' .. package.cpath
local protolua = require('protolua')
local keys, op, n = arg[2], arg[3], tonumber(arg[4])
local src = [[
syntax = "proto3";
package mp;
message Inner { int32 x = 1; string s = 2; }
message M {
  map<string, int32> counts = 1;
  map<int32, string> names = 2;
  map<string, Inner> m = 3;
  map<bool, int64> flags = 4;
  map<int32, Inner> mi = 5;
  map<sint64, int32> z = 6;
}
]]
local M = protolua.load(protolua.parse(src, { name = 'mp.proto' }):descriptor_set()):message('mp.M')
local t = { names = {}, flags = { [true] = 1, [false] = 2 } }
if keys == 'int' then
  t.mi, t.z = {}, {}
  for i = 1, 16 do t.names[i] = 'v' .. i; t.mi[i] = { x = i, s = 's' .. i }; t.z[i] = -i end
else
  t.counts, t.m = {}, {}
  for i = 1, 16 do t.counts['key' .. i] = i; t.names[i] = 'v' .. i; t.m['k' .. i] = { x = i, s = 's' .. i } end
end
local b = M:encode(t)
-- One op before the loop, in the 0-op run too (as icount.lua).
if op == 'encode' then M:encode(t) else M:decode(b) end
if op == 'encode' then for _ = 1, n do M:encode(t) end else for _ = 1, n do M:decode(b) end end
