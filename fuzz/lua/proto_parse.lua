-- proto_parse: protolua.parse on arbitrary bytes (as the source of
-- 'f.proto', which may import 'dep.proto' and the well-known types). Either
-- a "protolua:" error, or a schema; then descriptor_set() reloads with
-- protolua.load, and for each message (the first 20) fields() and
-- options() are tables, for each service (the first 5) service() and
-- method(path) of each of its methods work.

local C = require('fuzzcommon')
local protolua = C.protolua

local MAX = 20
local DEP = 'syntax = "proto2"; package dep; import "google/protobuf/descriptor.proto"; '
    .. 'message D { optional int32 x = 1; } extend google.protobuf.FieldOptions { optional D d = 5000; }'

local function body(data)
    local ok, schema = C.call('parse', protolua.parse, data, { name = 'f.proto', sources = { ['dep.proto'] = DEP } })
    if not ok then return end
    local okr, again = C.call('load(descriptor_set())', protolua.load, schema:descriptor_set())
    if not okr then C.fail('descriptor_set() does not reload: %s', again) end
    local names = schema:messages()
    for i = 1, math.min(#names, MAX) do
        local msg = schema:message(names[i])
        local okf, fields = C.call('fields', msg.fields, msg)
        if not okf or type(fields) ~= 'table' then C.fail('fields() of %s failed: %s', names[i], tostring(fields)) end
        local oko, o = C.call('options', msg.options, msg)
        if not oko or type(o) ~= 'table' then C.fail('options() of %s failed: %s', names[i], tostring(o)) end
    end
    local services = schema:services()
    for i = 1, math.min(#services, 5) do
        local oks, svc = C.call('service', schema.service, schema, services[i])
        if not oks then C.fail('service(%q) failed: %s', services[i], svc) end
        for _, m in ipairs(svc.methods) do
            local okm, h = C.call('method', schema.method, schema, m.path)
            if not okm or type(h.input) ~= 'userdata' then C.fail('method(%q) failed: %s', m.path, tostring(h)) end
        end
    end
end

return C.driver(body)
