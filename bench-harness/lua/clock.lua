-- The thread's CPU time in seconds, for the A/B scripts run by both hosts
-- (tarantool/ab.lua, tarantool/ctor_floor.lua): Tarantool's clock.thread,
-- else clock_gettime(CLOCK_THREAD_CPUTIME_ID) through LuaJIT's FFI.
-- Returns now, in_tarantool.
local in_tarantool = rawget(_G, 'box') ~= nil or package.loaded['tarantool'] ~= nil or pcall(require, 'tarantool')
if in_tarantool then
    return require('clock').thread, true
end
local ffi = require('ffi')
ffi.cdef('typedef struct { long s; long ns; } pl_clock_ts; int clock_gettime(int, pl_clock_ts *);')
local ts = ffi.new('pl_clock_ts')
return function() ffi.C.clock_gettime(3, ts) return tonumber(ts.s) + tonumber(ts.ns) * 1e-9 end, false
