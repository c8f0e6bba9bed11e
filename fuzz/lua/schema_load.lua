-- schema_load: protolua.load on arbitrary bytes. Either a "protolua:" error,
-- or a schema; then schema:messages() and schema:enums() are arrays of
-- strings, and for each message (the first 20) message(name) works, encode
-- of {} gives a string or a "protolua:" error (required fields), decode of
-- '' gives a table or a "protolua:" error, and fields() gives an array;
-- when {} encodes, its bytes decode (with the default options). Each enum
-- (the first 20) gives a table from schema:enum(name).

local C = require('fuzzcommon')
local protolua = C.protolua

local MAX = 20

local function body(data)
    local ok, schema = C.call('load', protolua.load, data)
    if not ok then return end
    if type(schema) ~= 'userdata' then C.fail('load gave a %s', type(schema)) end
    local okm, names = C.call('messages', schema.messages, schema)
    if not okm then C.fail('messages() failed: %s', names) end
    for i = 1, math.min(#names, MAX) do
        local name = names[i]
        if type(name) ~= 'string' then C.fail('messages()[%d] is a %s', i, type(name)) end
        local okh, msg = C.call('message', schema.message, schema, name)
        if not okh then C.fail('message(%q) failed: %s', name, msg) end
        local okf, fields = C.call('fields', msg.fields, msg)
        if not okf or type(fields) ~= 'table' then C.fail('fields() of %s failed: %s', name, tostring(fields)) end
        local oke, bytes = C.call('encode', msg.encode, msg, {})
        local okd, t = C.call('decode', msg.decode, msg, '')
        if okd and type(t) ~= 'table' then C.fail('decode of %s gave a %s', name, type(t)) end
        if oke then
            if type(bytes) ~= 'string' then C.fail('encode of %s gave a %s', name, type(bytes)) end
            local ok2, t2 = C.call('decode', msg.decode, msg, bytes)
            if not ok2 then C.fail('encode({}) of %s = %s does not decode: %s', name, C.hex(bytes), t2) end
        end
        -- Also through the schema methods, with per-call options.
        C.call('schema:encode', schema.encode, schema, name, {}, { required = false })
        C.call('schema:decode', schema.decode, schema, name, '', { defaults = 'values', empty = true })
    end
    local okn, enums = C.call('enums', schema.enums, schema)
    if not okn then C.fail('enums() failed: %s', enums) end
    for i = 1, math.min(#enums, MAX) do
        local oke, e = C.call('enum', schema.enum, schema, enums[i])
        if not oke or type(e) ~= 'table' then C.fail('enum(%q) failed: %s', tostring(enums[i]), tostring(e)) end
    end
end

return C.driver(body)
