-- protolua.protoc: lua-protobuf's `protoc.lua` API, parsing `.proto` text
-- with protolua's own front end (protox) and loading into protolua.pb
-- (docs/PB_COMPAT.md).
local protolua = require('protolua')
local pb = require('protolua.pb')

local type, pairs, ipairs, error, pcall, setmetatable = type, pairs, ipairs, error, pcall, setmetatable

local Parser = {}
Parser.__index = Parser
Parser.__name = 'Parser'

local FDS = pb._FDS

--- protoc.new(): a compiler instance; `paths` is searched for files and
--- imports, `loaded` holds every parsed file's descriptor table.
function Parser.new()
    return setmetatable({
        paths = { '', '.' }, loaded = {}, typemap = {}, sources = {},
        include_imports = false, unnamed = 0,
    }, Parser)
end

-- Calls on the module itself (`protoc:load(src)`) use a fresh instance.
local function inst(self)
    if self == Parser or self == nil then return Parser.new() end
    return self
end

function Parser:reset()
    self.loaded, self.typemap, self.sources = {}, {}, {}
    return self
end

function Parser:addpath(path)
    self.paths[#self.paths + 1] = path
end

function Parser:error(msg)
    error(msg, 2)
end

local function import_paths(self)
    local out, seen = {}, {}
    for _, p in ipairs(self.paths or {}) do
        if p == '' then p = '.' end
        if not seen[p] then
            seen[p] = true
            out[#out + 1] = p
        end
    end
    return out
end

local function find_file(self, name)
    for _, p in ipairs(self.paths or {}) do
        local fn = p ~= '' and (p .. '/' .. name) or name
        local fh = io.open(fn, 'rb')
        if fh then
            local src = fh:read('*a')
            fh:close()
            return src
        end
    end
    return nil
end

local STUB = 'syntax = "proto2";\n'

-- Imports neither given, on disk nor built in, offered to unknown_import.
local function resolve_imports(self, src, sources)
    local handler = self.unknown_import
    if not handler then return end
    for name in src:gmatch('import%s+[%a]*%s*["\']([^"\']+)["\']') do
        if not sources[name] and not name:match('^google/protobuf/') and not find_file(self, name) then
            if handler == true then
                sources[name] = STUB
            elseif type(handler) == 'string' then
                if name:match(handler) then sources[name] = STUB end
            elseif type(handler) == 'function' then
                local r = handler(self, name)
                if type(r) == 'string' then
                    sources[name] = r
                elseif type(r) == 'table' then
                    sources[name] = (r.name and self.sources[r.name]) or STUB
                elseif r then
                    sources[name] = STUB
                end
            end
        end
    end
end

-- The whole FileDescriptorSet (imports included) of `src` and its name.
local function build(self, src, name)
    if type(src) ~= 'string' then error('protoc: source string expected, got ' .. type(src), 3) end
    if name == nil then
        self.unnamed = (self.unnamed or 0) + 1
        name = self.unnamed == 1 and '<input>' or ('<input' .. self.unnamed .. '>')
    end
    local sources = {}
    for k, v in pairs(self.sources) do sources[k] = v end
    resolve_imports(self, src, sources)
    sources[name] = nil
    local ok, schema = pcall(protolua.parse, src, { name = name, sources = sources, import_paths = import_paths(self) })
    if not ok then error(schema, 3) end
    self.sources[name] = src
    local set = schema:descriptor_set()
    local files = FDS:decode(set).file or {}
    local main
    for _, f in ipairs(files) do
        if f.name == name then main = f end
        self.loaded[f.name] = self.loaded[f.name] or f
    end
    self.loaded[name] = main
    return set, main, files
end

--- p:parse(src [, name]): the file's FileDescriptorProto as a table
--- (enum-typed fields such as `type` and `label` as numbers).
function Parser:parse(src, name)
    self = inst(self)
    local _, main = build(self, src, name)
    return main
end

--- p:compile(src [, name]): FileDescriptorSet bytes (imports included
--- when `p.include_imports`).
function Parser:compile(src, name)
    self = inst(self)
    local set, main = build(self, src, name)
    if self.include_imports then return set end
    return FDS:encode({ file = { main } })
end

--- p:load(src [, name]): compile and load into protolua.pb (imports are
--- loaded with the file: protolua resolves every type at load time).
function Parser:load(src, name)
    self = inst(self)
    local set = build(self, src, name)
    local ok, pos, err = pb.load(set)
    if ok then return ok, pos end
    error('load failed at offset ' .. tostring(pos) .. (err and (': ' .. tostring(err)) or ''), 2)
end

local function read(self, fn)
    local src = find_file(self, fn)
    if not src then
        local tried = {}
        for _, p in ipairs(self.paths or {}) do tried[#tried + 1] = p ~= '' and (p .. '/' .. fn) or fn end
        error('module load error: ' .. fn .. '\n\t' .. table.concat(tried, '\n\t'), 3)
    end
    return src
end

--- p:parsefile(fn), p:compilefile(fn), p:loadfile(fn): the same, for a
--- file found under `p.paths`.
function Parser:parsefile(fn)
    self = inst(self)
    return self:parse(read(self, fn), fn)
end

function Parser:compilefile(fn)
    self = inst(self)
    return self:compile(read(self, fn), fn)
end

function Parser:loadfile(fn)
    self = inst(self)
    return self:load(read(self, fn), fn)
end

--- protoc.reload(): load google/protobuf/descriptor.proto into the pb state.
function Parser.reload()
    assert(pb.load(pb._desc:descriptor_set()), 'load descriptor msg failed')
    return true
end

Parser.reload()

return Parser
