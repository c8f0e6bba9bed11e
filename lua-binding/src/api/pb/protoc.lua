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

---------------------------------------------------------------------------
-- unknown_type: a type name that does not resolve is offered to the
-- handler (`true`, a Lua pattern, or `function(self, name)` returning the
-- full name, or true, and optionally 'message' or 'enum'). The reference is
-- rewritten to that full name where protolua's parser reported it; when the
-- name is then still not defined, an empty stand-in type is declared for
-- it in a file of its own (`protolua/unknown/<package>.proto`, imported by
-- the file that needs it), shared by every compiler of this Lua state.

local STUB_DIR = 'protolua/unknown/'
-- package -> { name -> 'message' | 'enum' }, and the stub file each needs.
local stubs = {}

local function stub_file(pkg, kind)
    return STUB_DIR .. (pkg ~= '' and pkg or '_') .. (kind == 'enum' and '.enums' or '') .. '.proto'
end

-- The source of one stub file: stand-in messages take any extension
-- (proto2); stand-in enums are open (proto3) so proto3 fields may use them.
local function stub_source(pkg, kind)
    local out = { kind == 'enum' and 'syntax = "proto3";' or 'syntax = "proto2";' }
    if pkg ~= '' then out[#out + 1] = 'package ' .. pkg .. ';' end
    local names = {}
    for n, k in pairs(stubs[pkg] or {}) do
        if k == kind then names[#names + 1] = n end
    end
    table.sort(names)
    for _, n in ipairs(names) do
        if kind == 'enum' then
            out[#out + 1] = 'enum ' .. n .. ' { _unknown_' .. n .. ' = 0; }'
        else
            out[#out + 1] = 'message ' .. n .. ' { extensions 1 to max; }'
        end
    end
    return table.concat(out, '\n') .. '\n'
end

-- Every stub file into `sources`.
local function add_stubs(sources)
    for pkg, names in pairs(stubs) do
        local kinds = {}
        for _, k in pairs(names) do kinds[k] = true end
        for k in pairs(kinds) do sources[stub_file(pkg, k)] = stub_source(pkg, k) end
    end
end

local function is_stub(name)
    return name:sub(1, #STUB_DIR) == STUB_DIR
end

-- The handler's answer for `tname`: the full name (leading dot) and kind.
local function ask(self, tname)
    local h = self.unknown_type
    local tn, kind
    if h == true then
        tn = true
    elseif type(h) == 'string' then
        tn = tname:match(h) and true
    elseif type(h) == 'function' then
        tn, kind = h(self, tname)
    end
    if not tn then return nil end
    if tn == true then tn = '.' .. tname end
    if type(tn) ~= 'string' or not tn:match('^%.?[%a_][%w_.]*$') then
        error('protoc: unknown_type for ' .. tname .. ' returned ' .. tostring(tn) .. ', not a type name', 0)
    end
    if kind ~= nil and kind ~= 'message' and kind ~= 'enum' then
        error("protoc: unknown_type for " .. tname .. " returned kind '" .. tostring(kind) .. "', not 'message' or 'enum'", 0)
    end
    if tn:sub(1, 1) ~= '.' then tn = '.' .. tn end
    return tn, kind or 'message'
end

local function escape(s)
    return (s:gsub('[%^%$%(%)%%%.%[%]%*%+%-%?]', '%%%0'))
end

-- `src` with the reference to `tname` at line:col (or, for a map value,
-- which the parser reports with no position, in `map<K, tname>`) as `tn`.
local function rewrite(src, line, col, tname, tn)
    if line then
        local pos, l = 1, 1
        while l < line do
            pos = src:find('\n', pos, true)
            if not pos then return nil end
            pos, l = pos + 1, l + 1
        end
        pos = pos + col - 1
        if src:sub(pos, pos + #tname - 1) ~= tname then return nil end
        return src:sub(1, pos - 1) .. tn .. src:sub(pos + #tname)
    end
    local out, n = src:gsub('(map%s*<%s*[%w_]+%s*,%s*)' .. escape(tname) .. '(%s*>)', '%1' .. tn .. '%2')
    if n == 0 then return nil end
    return out
end

-- After a failed parse (`err`): ask unknown_type and fix the source it
-- names in `texts` (file name -> source), or return nil (raise `err`).
-- `st` tracks what was done: each retry rewrites one reference (to a
-- full name, which is never asked about) or declares one stand-in for a
-- full name it wrote; at most 1,000 retries.
local function fix_unknown(self, err, texts, st)
    local file, line, col, tname = tostring(err):match("parse: (.-):(%d+):(%d+): name '([^']+)' is not defined")
    if not file then
        file, tname = tostring(err):match("parse: (.-): name '([^']+)' is not defined")
        if not file then return nil end
    end
    line, col = tonumber(line), tonumber(col)
    local src = texts[file] or find_file(self, file)
    if not src then return nil end
    st.n = st.n + 1
    if st.n > 1000 then return nil end
    local tn, kind
    if tname:sub(1, 1) == '.' then
        -- A name we wrote in that is still not defined: declare it.
        kind = st.rewritten[tname]
        if not kind or st.stubbed[file .. ' ' .. tname] then return nil end
        tn = tname
    else
        tn, kind = ask(self, tname)
        if not tn then return nil end
        src = rewrite(src, line, col, tname, tn)
        if not src then return nil end
        st.rewritten[tn] = st.rewritten[tn] or kind
        texts[file], st.changed[file] = src, true
        return true
    end
    -- The stand-in type, and the import of its file.
    st.stubbed[file .. ' ' .. tn] = true
    local pkg, base = tn:match('^%.(.*)%.([^.]+)$')
    if not pkg then pkg, base = '', tn:sub(2) end
    stubs[pkg] = stubs[pkg] or {}
    stubs[pkg][base] = kind
    local imp = stub_file(pkg, kind)
    if not src:find('"' .. imp .. '"', 1, true) then src = src .. '\nimport "' .. imp .. '";\n' end
    texts[file], st.changed[file] = src, true
    return true
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
    sources[name] = src
    local st = { n = 0, rewritten = {}, stubbed = {}, changed = {} }
    local schema
    while true do
        add_stubs(sources)
        local text = sources[name]
        sources[name] = nil
        local ok
        ok, schema = pcall(protolua.parse, text, { name = name, sources = sources, import_paths = import_paths(self) })
        sources[name] = text
        if ok then break end
        local fixed = self.unknown_type and fix_unknown(self, schema, sources, st)
        if not fixed then error(schema, 3) end
    end
    -- Sources are kept as rewritten (with their stub imports).
    self.sources[name] = sources[name]
    for k in pairs(st.changed) do self.sources[k] = sources[k] end
    local set = schema:descriptor_set()
    local files = FDS:decode(set).file or {}
    local main, shown = nil, {}
    for _, f in ipairs(files) do
        if not is_stub(f.name) then
            -- As lua-protobuf's: the stand-in files are not imports.
            if f.dependency then
                local deps = {}
                for _, d in ipairs(f.dependency) do
                    if not is_stub(d) then deps[#deps + 1] = d end
                end
                f.dependency = deps
            end
            shown[#shown + 1] = f
            if f.name == name then main = f end
            self.loaded[f.name] = self.loaded[f.name] or f
        end
    end
    self.loaded[name] = main
    return set, main, shown, #shown < #files
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
    local set, main, files, stubbed = build(self, src, name)
    if self.include_imports then
        if not stubbed then return set end
        return FDS:encode({ file = files })
    end
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
