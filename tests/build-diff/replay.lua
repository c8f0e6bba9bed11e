package.cpath = arg[1] .. '/?.so;' .. package.cpath
local protolua = require('protolua')
ffi = type(jit) == 'table' and require('ffi') or nil
local kinds = {
    function(t) return setmetatable(t, { __index = { zz = 1, name = 'x', id = 1 } }) end,
    function(t) return setmetatable(t, { __metatable = false }) end,
    function(t) return setmetatable(t, { __metatable = 'locked' }) end,
    function(t) return setmetatable(t, { __index = function() error('__index called') end }) end,
    function(t) return setmetatable(t, { __newindex = function() error('__newindex') end, __len = function() return 3 end }) end,
}
function MT(t, k) return kinds[k](t) end
local file, name, o, t = dofile(arg[2])
local s = protolua.load_file('/work/wt-review/fixtures/descriptors/' .. file)
local M = s:message(name)
for i = 1, tonumber(arg[3] or 1) do
  if i == 1 and arg[4] then local ok, b = pcall(M.encode, M, t, {max_depth = tonumber(arg[4])}); print("first", ok and ("ok " .. #b) or b) end
  local ok, b = pcall(M.encode, M, t, o or nil)
  print(ok and ('ok ' .. #b) or b)
end
