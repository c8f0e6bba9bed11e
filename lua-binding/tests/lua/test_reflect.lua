-- Reflection: files, services, methods, options (custom ones under
-- '[full.name]'), enum options, and the json_name/default/options keys of
-- Msg:fields(). Every answer is the same for protoc's descriptor set
-- (fixtures/descriptors/svc.fds) and for load_proto of the same files.
-- Lua 5.1 compatible. Needs the globals set by harness.lua.

local SVC = FIXTURES .. '/proto/svc/'
local from_protoc = protolua.load_file(FIXTURES .. '/descriptors/svc.fds')
local from_source = protolua.load_proto({ SVC .. 'greeter.proto', SVC .. 'legacy.proto' })

local function both(name, fn)
    T.test('reflect (protoc set) ' .. name, function() fn(from_protoc) end)
    T.test('reflect (load_proto) ' .. name, function() fn(from_source) end)
end

both('files and services', function(s)
    local files = {}
    for _, f in ipairs(s:files()) do files[f] = true end
    for _, f in ipairs({ 'greeter.proto', 'legacy.proto', 'opts.proto', 'common.proto', 'reexport.proto',
        'google/api/http.proto', 'google/api/annotations.proto', 'google/protobuf/timestamp.proto',
        'google/protobuf/empty.proto', 'google/protobuf/descriptor.proto' }) do
        T.eq(files[f], true, 'file ' .. f)
    end
    T.eq(s:services(), { 'svc.greet.v1.Greeter' }, 'services')
end)

both('service', function(s)
    local svc = s:service('svc.greet.v1.Greeter')
    T.eq(svc.name, 'Greeter', 'name')
    T.eq(svc.full_name, 'svc.greet.v1.Greeter', 'full_name')
    T.eq(svc.file, 'greeter.proto', 'file')
    T.eq(svc.options, { ['[svc.opts.service_owner]'] = 'greeters', deprecated = false }, 'options')
    T.eq(#svc.methods, 5, 'methods')
    local m = svc.methods[1]
    T.eq(m.name, 'SayHello', 'method name')
    T.eq(m.path, '/svc.greet.v1.Greeter/SayHello', 'path')
    T.eq(m.input, 'svc.greet.v1.HelloRequest', 'input')
    T.eq(m.output, 'svc.greet.v1.HelloReply', 'output')
    T.eq(m.options['[google.api.http]'], {
        post = '/v1/hello', body = '*', additional_bindings = { { get = '/v1/hello/{name}' } },
    }, 'http rule')
    T.eq(m.options['[svc.opts.cost]'], 7, 'cost')
    local kinds = {}
    for _, x in ipairs(svc.methods) do
        kinds[x.name] = (x.client_streaming and 'c' or '-') .. (x.server_streaming and 's' or '-')
    end
    T.eq(kinds, { SayHello = '--', SayHellos = '-s', Collect = 'c-', Chat = 'cs', Ping = '--' }, 'streaming')
    T.eq(svc.methods[5].options, { idempotency_level = 'NO_SIDE_EFFECTS' }, 'enum-valued option by name')
    T.raises('service: unknown service "nope"', s.service, s, 'nope')
end)

both('method handles', function(s)
    for _, name in ipairs({ 'svc.greet.v1.Greeter.SayHello', '/svc.greet.v1.Greeter/SayHello', 'svc.greet.v1.Greeter/SayHello' }) do
        local m = s:method(name)
        T.eq(m.full_name, 'svc.greet.v1.Greeter.SayHello', name)
        T.eq(m.input, s:message('svc.greet.v1.HelloRequest'), 'input handle')
        T.eq(m.output, s:message('svc.greet.v1.HelloReply'), 'output handle')
        T.eq(m.input_type, 'svc.greet.v1.HelloRequest', 'input_type')
        T.eq(m.options['[google.api.http]'].post, '/v1/hello', 'http post')
    end
    T.raises('method: unknown method "svc.greet.v1.Greeter.Nope"', s.method, s, 'svc.greet.v1.Greeter.Nope')
    T.raises('method: expected a method name or path, got nil', s.method, s)
end)

both('message and field options', function(s)
    local M = s:message('svc.greet.v1.HelloRequest')
    T.eq(M:options(), {
        ['[svc.opts.rule]'] = {
            name = 'hello', weight = 3, tags = { 'a', 'b' }, level = 'HIGH',
            child = { name = 'inner', weight = -1 },
        },
        ['[svc.opts.audited]'] = true,
    }, 'message options (aggregate value)')
    local by = {}
    for _, f in ipairs(M:fields()) do by[f.name] = f end
    T.eq(by.name.json_name, 'userName', 'explicit json_name')
    T.eq(by.counts.json_name, 'counts', 'json_name')
    T.eq(by.group_id.json_name, 'groupId', 'camel json_name')
    T.eq(by.name.options, { ['[svc.opts.label]'] = 'Name', ['[svc.opts.max_len]'] = 64 }, 'field options')
    T.eq(by.mood.options, { ['[svc.opts.levels]'] = { 'LOW', 'HIGH' } }, 'repeated enum option')
    T.eq(by.group_id.options, { deprecated = true }, 'deprecated')
    T.eq(by.codes.options, { packed = false }, 'packed = false')
    T.eq(by.name.default, '', 'proto3 string default')
    T.eq(by.mood.default, 'MOOD_UNSPECIFIED', 'proto3 enum default')
    T.eq(by.at.default, nil, 'no default for a message')
    T.eq(by.user.default, nil, 'no default in a oneof')
    T.eq(by.times.options, {}, 'no options')
end)

both('proto2 declared defaults, as decode gives them', function(s)
    local by = {}
    for _, f in ipairs(s:message('svc.legacy.Old'):fields()) do by[f.name] = f end
    T.eq(by.name.default, 'none', 'string')
    T.eq(by.ratio.default, 1e-7, 'double')
    T.eq(by.raw.default, '\001\255x', 'bytes')
    T.eq(by.kind.default, 'KIND_B', 'enum')
    T.eq(by.inf.default, -math.huge, '-inf')
    T.eq(by.id.default, 0, 'required without a declared default')
    local d = s:decode('svc.legacy.Old', T.varint(8) .. T.varint(1), { defaults = 'values' })
    for _, k in ipairs({ 'name', 'ratio', 'raw', 'kind', 'inf', 'big', 'minimum', 'maximum' }) do
        T.eq(by[k].default, d[k], 'default of ' .. k .. ' equals decode')
    end
    T.eq(by['[svc.legacy.note]'] ~= nil and by['[svc.legacy.note]'].json_name, '[svc.legacy.note]', 'extension json_name')
end)

both('enum options', function(s)
    local e = s:enum_info('svc.greet.v1.Mood')
    T.eq(e.options, { ['[svc.opts.enum_tag]'] = 'mood' }, 'enum options')
    T.eq(e.file, 'greeter.proto', 'file')
    T.eq(e.values[2], { name = 'MOOD_HAPPY', number = 1, options = { ['[svc.opts.display]'] = 'Happy :)' } }, 'value')
    T.eq(e.values[3].options, { ['[svc.opts.display]'] = 'Sad', deprecated = true }, 'value options')
    T.raises('enum_info: unknown enum type "x"', s.enum_info, s, 'x')
end)

T.test('reflect: enums = number and int64 = string apply to options', function()
    local s = protolua.load_file(FIXTURES .. '/descriptors/svc.fds', { enums = 'number', int64 = 'string' })
    local by = {}
    for _, f in ipairs(s:message('svc.greet.v1.HelloRequest'):fields()) do by[f.name] = f end
    T.eq(by.name.options['[svc.opts.max_len]'], '64', 'int64 option as string')
    T.eq(by.mood.options['[svc.opts.levels]'], { 0, 1 }, 'enum option as numbers')
    T.eq(s:message('svc.legacy.Old'):fields()[11].default ~= nil, true, 'defaults present')
end)

T.test('reflect: a schema without services', function()
    local s = T.schema('hello.fds')
    T.eq(s:services(), {}, 'no services')
    T.eq(s:files(), { 'hello.proto' }, 'files')
    T.eq(s:message('hello.Person'):options(), {}, 'no options')
end)
