-- The LuaJIT int64 helpers: the int64_t and uint64_t ctypes and a
-- classifier of cdata values, at slots 1, 2, 3 of the module's helper
-- table (crate::slots::Helper).
local ffi = require('ffi')
local i64, u64 = ffi.typeof('int64_t'), ffi.typeof('uint64_t')
local istype = ffi.istype
return { i64, u64, function(v)
    if istype(i64, v) then return 1 elseif istype(u64, v) then return 2 end
    if v == nil then return 3 end -- a NULL pointer (box.NULL, msgpack.NULL)
    return 0
end }
