-- Standalone runner for the Lua suite, for hosts that load protolua.so the
-- way users do: tarantool (the rock), luajit, lua5.1, lua5.4 (LuaRocks).
--
--   <lua> tests/lua/run.lua <fixtures dir>
--
-- `require('protolua')` must find the installed module (package.cpath /
-- LUA_CPATH). Exits non-zero if a test fails. Lua 5.1 compatible.
local fixtures = assert(arg[1], 'usage: run.lua <fixtures dir>')
local dir = arg[0]:match('^(.*/)') or './'
FIXTURES = fixtures:gsub('/$', '')
protolua = require('protolua')
dofile(dir .. 'harness.lua')
local files = {}
local ls = io.popen('ls "' .. dir .. '"')
for f in ls:lines() do
    if f:match('^test_.*%.lua$') then files[#files + 1] = f end
end
ls:close()
table.sort(files)
local host = (box and 'tarantool ' .. require('tarantool').version) or (jit and jit.version) or _VERSION
print('protolua ' .. protolua._VERSION .. ' on ' .. host .. ': ' .. #files .. ' test files')
for _, f in ipairs(files) do
    local ok, err = pcall(dofile, dir .. f)
    if not ok then
        io.stderr:write(f, ' failed to run: ', tostring(err), '\n')
        os.exit(1)
    end
end
local ok, err = pcall(T.finish)
if not ok then
    io.stderr:write(tostring(err), '\n')
    os.exit(1)
end
os.exit(0)
