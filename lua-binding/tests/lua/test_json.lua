-- ProtoJSON: Msg:binary_to_json / Msg:json_to_binary. Expected texts are
-- protobuf's canonical output (as protobuf C++ and Python print them);
-- errors name the field path and the line/column. The conformance suite
-- (conformance/run.sh) and tests/differential.rs check the rest.
-- Lua 5.1 compatible. Needs the globals set by harness.lua.

local DESC = FIXTURES .. '/descriptors/'
local hello = protolua.load_file(DESC .. 'hello.fds')
local conf = protolua.load_file(DESC .. 'conformance.fds')
local Person = hello:message('hello.Person')
local T3 = conf:message('protobuf_test_messages.proto3.TestAllTypesProto3')
local T2 = conf:message('protobuf_test_messages.proto2.TestAllTypesProto2')

-- JSON text → bytes → JSON text.
local function j2j(M, s, opts)
    return M:binary_to_json(M:json_to_binary(s), opts)
end

T.test('json: Person to JSON and back', function()
    local t = { name = 'Ann "A"', age = 30, emails = { 'a@x', 'b@x' }, address = { city = 'Oslo' }, lucky_numbers = { 1, -2 } }
    local s = Person:binary_to_json(Person:encode(t))
    T.eq(s, '{"name":"Ann \\"A\\"","age":30,"emails":["a@x","b@x"],"address":{"city":"Oslo"},"luckyNumbers":[1,-2]}')
    T.eq(Person:decode(Person:json_to_binary(s)), t)
    T.eq(Person:binary_to_json(''), '{}')
end)

T.test('json: scalar forms', function()
    T.eq(j2j(T3, '{"optionalInt64":1,"optionalUint64":"18446744073709551615","optionalInt32":-5}'),
        '{"optionalInt32":-5,"optionalInt64":"1","optionalUint64":"18446744073709551615"}')
    T.eq(j2j(T3, '{"optionalFloat":0.1,"optionalDouble":0.1}'), '{"optionalFloat":0.1,"optionalDouble":0.1}')
    T.eq(j2j(T3, '{"optionalDouble":"NaN","optionalFloat":"-Infinity"}'),
        '{"optionalFloat":"-Infinity","optionalDouble":"NaN"}')
    T.eq(j2j(T3, '{"optionalInt32":1e5,"optionalUint32":"7","optionalSint32":100000.000}'),
        '{"optionalInt32":100000,"optionalUint32":7,"optionalSint32":100000}')
    T.eq(j2j(T3, '{"optionalBytes":"-_8","optionalString":"\\u00e9\\ud83d\\ude00"}'),
        '{"optionalString":"é😀","optionalBytes":"+/8="}')
    T.eq(j2j(T3, '{"optionalNestedEnum":"BAZ","optionalBool":true}'), '{"optionalBool":true,"optionalNestedEnum":"BAZ"}')
    T.eq(j2j(T3, '{"optionalNestedEnum":7}'), '{"optionalNestedEnum":7}')
    -- proto names are accepted too; zero values of implicit fields vanish
    T.eq(j2j(T3, '{"optional_int32":0,"optional_string":"","repeated_int32":[]}'), '{}')
    T.eq(j2j(T3, '{"optionalInt32":null}'), '{}')
end)

T.test('json: maps, oneofs, repeated', function()
    T.eq(j2j(T3, '{"mapInt32Int32":{"1":2,"-3":4},"mapBoolBool":{"true":false},"mapStringString":{"k":"v"}}'),
        '{"mapInt32Int32":{"-3":4,"1":2},"mapBoolBool":{"true":false},"mapStringString":{"k":"v"}}')
    T.eq(j2j(T3, '{"oneofUint32":5}'), '{"oneofUint32":5}')
    T.eq(j2j(T3, '{"repeatedNestedMessage":[{"a":1},{}]}'), '{"repeatedNestedMessage":[{"a":1},{}]}')
    T.eq(j2j(T3, '{"repeatedInt32":[1,2],"repeatedInt64":["3"]}'), '{"repeatedInt32":[1,2],"repeatedInt64":["3"]}')
end)

T.test('json: well-known types', function()
    local cases = {
        '{"optionalTimestamp":"1970-01-01T00:00:00Z"}',
        '{"optionalTimestamp":"2000-02-29T23:59:59.100Z"}',
        '{"optionalDuration":"-1.000340012s"}',
        '{"optionalFieldMask":"fooBar,baz.quxQuux"}',
        '{"optionalStruct":{"a":[1,"x",true,null,{}]}}',
        '{"optionalValue":null}',
        '{"optionalBoolWrapper":false,"optionalInt64Wrapper":"0","optionalStringWrapper":""}',
        '{"optionalAny":{"@type":"type.googleapis.com/protobuf_test_messages.proto3.TestAllTypesProto3","optionalInt32":1}}',
        '{"optionalAny":{"@type":"type.googleapis.com/google.protobuf.Duration","value":"1s"}}',
    }
    for _, s in ipairs(cases) do
        T.eq(j2j(T3, s), s, s)
    end
    -- offsets are applied; @type may come last
    T.eq(j2j(T3, '{"optionalTimestamp":"1970-01-01T01:00:00+01:00"}'), '{"optionalTimestamp":"1970-01-01T00:00:00Z"}')
    T.eq(j2j(T3, '{"optionalAny":{"optionalInt32":1,"@type":"x/protobuf_test_messages.proto3.TestAllTypesProto3"}}'),
        '{"optionalAny":{"@type":"x/protobuf_test_messages.proto3.TestAllTypesProto3","optionalInt32":1}}')
end)

T.test('json: options', function()
    local b = T3:json_to_binary('{"optionalInt32":1,"optionalNestedEnum":"BAR"}')
    T.eq(T3:binary_to_json(b, { json_names = false }), '{"optional_int32":1,"optional_nested_enum":"BAR"}')
    T.eq(T3:binary_to_json(b, { enums = 'number' }), '{"optionalInt32":1,"optionalNestedEnum":1}')
    T.eq(Person:binary_to_json(Person:encode({ name = 'a', address = {} }), { indent = 2 }),
        '{\n  "name": "a",\n  "address": {}\n}')
    T.eq(Person:binary_to_json('', { emit_defaults = true }),
        '{"name":"","age":0,"emails":[],"luckyNumbers":[]}')
    T.eq(T3:json_to_binary('{"nope":1,"optionalNestedEnum":"NOPE"}', { ignore_unknown = true }), '')
    T.raises('indent must be', T3.binary_to_json, T3, '', { indent = -1 })
    T.raises('json_names must be a boolean', T3.binary_to_json, T3, '', { json_names = 1 })
    -- at load, overridable per call
    local loaded = protolua.load_file(DESC .. 'hello.fds', { json_names = false, emit_defaults = true, indent = 0 })
    local P = loaded:message('hello.Person')
    T.eq(P:binary_to_json(''), '{\n"name": "",\n"age": 0,\n"emails": [],\n"lucky_numbers": []\n}')
    T.eq(P:binary_to_json('', { json_names = true, emit_defaults = false }), '{}')
    T.eq(P:encode_json({ age = 1 }, { emit_defaults = false }), '{\n"age": 1\n}')
    local lax = protolua.load_file(DESC .. 'hello.fds', { ignore_unknown = true }):message('hello.Person')
    T.eq(lax:decode_json('{"x":1,"age":2}'), { age = 2 })
end)

T.test('json: errors name the field and the position', function()
    T.raises('json_to_binary protobuf_test_messages.proto3.TestAllTypesProto3: field repeatedNestedMessage[1].a: '
        .. 'integer out of range at line 2 column 34 (byte 35)',
        T3.json_to_binary, T3, '{\n"repeatedNestedMessage":[{},{"a":1e10}]}')
    T.raises('unknown field "nope"', T3.json_to_binary, T3, '{"nope":1}')
    T.raises('given twice', T3.json_to_binary, T3, '{"optionalInt32":1,"optional_int32":2}')
    T.raises('a second member of oneof', T3.json_to_binary, T3, '{"oneofUint32":1,"oneofString":"x"}')
    T.raises('trailing comma', T3.json_to_binary, T3, '{"optionalInt32":1,}')
    T.raises('malformed number', T3.json_to_binary, T3, '{"optionalInt32":01}')
    T.raises('unpaired surrogate', T3.json_to_binary, T3, '{"optionalString":"\\ud800"}')
    T.raises('invalid UTF-8', T3.json_to_binary, T3, '{"optionalString":"\255"}')
    T.raises('not an integer', T3.json_to_binary, T3, '{"optionalInt32":0.5}')
    T.raises('null in a repeated field', T3.json_to_binary, T3, '{"repeatedInt32":[null]}')
    T.raises('Timestamp', T3.json_to_binary, T3, '{"optionalTimestamp":"1970-01-01T00:00:00z"}')
    T.raises('is not in the schema', T3.json_to_binary, T3, '{"optionalAny":{"@type":"x/no.Such"}}')
    T.raises('nesting too deep', T3.json_to_binary, T3, string.rep('{"recursiveMessage":', 200) .. '{}'
        .. string.rep('}', 200))
    T.raises('Duration', T3.binary_to_json, T3, T3:encode({ optional_duration = { seconds = 1, nanos = -1 } }))
    T.raises('malformed protobuf', T3.binary_to_json, T3, '\10\5ab')
    T.raises('expected string, got nil', T3.json_to_binary, T3, nil)
    -- still usable
    T.eq(j2j(T3, '{"optionalInt32":1}'), '{"optionalInt32":1}')
end)

T.test('json: proto2 required fields', function()
    local basic = protolua.load_file(DESC .. 'proto2_basic.fds')
    local B = basic:message('proto2_basic.BenchPayload')
    T.raises('json_to_binary proto2_basic.BenchPayload: missing required fields id, name of proto2_basic.BenchPayload'
        .. ' at line 1 column 3 (byte 2)', B.json_to_binary, B, '{}')
    T.raises('missing required fields name', B.json_to_binary, B, '{"id":1,"name":null}')
    T.eq(B:json_to_binary('{}', { required = false }), '')
    T.raises('missing required fields', B.decode_json, B, '{"id":1}')
end)

T.test('json: proto2 presence and groups', function()
    T.eq(j2j(T2, '{"optionalInt32":0,"optionalString":""}'), '{"optionalInt32":0,"optionalString":""}')
    T.eq(j2j(T2, '{"data":{"groupInt32":1}}'), '{"data":{"groupInt32":1}}')
end)

T.test('json: memory stays flat over failing calls', function()
    collectgarbage('collect')
    local before = collectgarbage('count')
    for _ = 1, 20000 do
        pcall(T3.json_to_binary, T3, '{"optionalInt32":"x"}')
        pcall(T3.binary_to_json, T3, '\255')
    end
    collectgarbage('collect')
    T.eq(collectgarbage('count') - before < 64, true, 'Lua memory growth over 40000 failing calls')
end)

T.test('json: encode_json / decode_json on tables', function()
    local t = { name = 'Ann', age = 30, emails = { 'a@x' }, address = { city = 'Oslo' } }
    local s = Person:encode_json(t)
    T.eq(s, '{"name":"Ann","age":30,"emails":["a@x"],"address":{"city":"Oslo"}}')
    T.eq(Person:decode_json(s), t)
    T.eq(Person:decode_json(s), Person:decode(Person:encode(t)))
    T.eq(hello:encode_json('hello.Person', t), s)
    T.eq(hello:decode_json('hello.Person', s), t)
    T.eq(hello:binary_to_json('hello.Person', Person:encode(t)), s)
    T.eq(hello:json_to_binary('hello.Person', s), Person:encode(t))
    T.eq(Person:encode_json(t, { json_names = false, indent = 1 }),
        '{\n "name": "Ann",\n "age": 30,\n "emails": [\n  "a@x"\n ],\n "address": {\n  "city": "Oslo"\n }\n}')
    -- the table forms of decode: enums, 64-bit integers, well-known types
    local v = T3:decode_json('{"optionalNestedEnum":"BAR","optionalInt64":"-5","optionalTimestamp":"1970-01-01T00:00:01Z"}')
    T.eq(v.optional_nested_enum, 'BAR')
    T.eq(v.optional_timestamp, { seconds = 1 })
    T.eq(v.optional_int64 == -5, true)
    T.eq(T3:decode_json('{"optionalNestedEnum":"BAR"}', { enums = 'number' }).optional_nested_enum, 1)
    T.eq(T3:encode_json(v), '{"optionalInt64":"-5","optionalNestedEnum":"BAR","optionalTimestamp":"1970-01-01T00:00:01Z"}')
    -- errors name the operation
    T.raises('protolua: encode_json hello.Person: field age: expected integer', Person.encode_json, Person, { age = 'x' })
    T.raises('protolua: decode_json hello.Person: field age: ', Person.decode_json, Person, '{"age":"x"}')
    T.raises('protolua: encode_json protobuf_test_messages.proto3.TestAllTypesProto3: field optionalDuration:',
        T3.encode_json, T3, { optional_duration = { seconds = 1, nanos = -1 } })
    T.raises('unknown message type', hello.encode_json, hello, 'no.Such', {})
end)

-- Integer arrays (packed fields take a fast path for plain literals):
-- each spelling accepted or refused as Python's json_format (upb) does.
T.test('json: integer arrays, every spelling', function()
    local ok = {
        { '{"repeatedInt32":[1,-2,0,1.0,1e2,"3",2147483647,-2147483648,-0]}',
          '{"repeatedInt32":[1,-2,0,1,100,3,2147483647,-2147483648,0]}' },
        { '{"repeatedInt32":[ 1 , 2 ,\n3 ]}', '{"repeatedInt32":[1,2,3]}' },
        { '{"repeatedInt64":[9223372036854775807,-9223372036854775808,"123456789012345678",123456789012345678]}',
          '{"repeatedInt64":["9223372036854775807","-9223372036854775808","123456789012345678","123456789012345678"]}' },
        { '{"repeatedUint32":[4294967295]}', '{"repeatedUint32":[4294967295]}' },
        { '{"repeatedSint64":[-5,999999999999999999]}', '{"repeatedSint64":["-5","999999999999999999"]}' },
        { '{"repeatedFixed32":[7,0]}', '{"repeatedFixed32":[7,0]}' },
        { '{"repeatedSfixed64":[-1]}', '{"repeatedSfixed64":["-1"]}' },
        { '{"repeatedUint64":[18446744073709551615]}', '{"repeatedUint64":["18446744073709551615"]}' },
    }
    for _, c in ipairs(ok) do T.eq(j2j(T3, c[1]), c[2]) end
    local bad = {
        { '{"repeatedInt32":[2147483648]}', 'field repeatedInt32[0]: integer out of range at line 1 column 19' },
        { '{"repeatedInt32":[1,2147483648]}', 'field repeatedInt32[1]: integer out of range at line 1 column 21' },
        { '{"repeatedInt64":[9223372036854775808]}', 'field repeatedInt64[0]: integer out of range' },
        { '{"repeatedUint32":[-1]}', 'field repeatedUint32[0]: integer out of range' },
        { '{"repeatedInt32":[1.5]}', 'field repeatedInt32[0]: not an integer' },
        { '{"repeatedInt32":[null]}', 'null in a repeated field' },
        { '{"repeatedInt32":[01]}', 'repeatedInt32[0]: ' },
        { '{"repeatedInt32":[-01]}', 'repeatedInt32[0]: ' },
        { '{"repeatedInt32":[1a]}', 'repeatedInt32[0]: ' },
        { '{"repeatedInt32":[1e]}', 'repeatedInt32[0]: ' },
        { '{"repeatedInt32":[1-]}', 'repeatedInt32[0]: ' },
        { '{"repeatedInt32":[-]}', 'repeatedInt32[0]: ' },
        { '{"repeatedInt32":[1,]}', 'trailing comma' },
        { '{"repeatedInt32":[1,,2]}', 'repeatedInt32[1]: ' },
        { '{"repeatedInt32":[1,2', 'unexpected end of input' },
    }
    for _, c in ipairs(bad) do T.raises(c[2], T3.json_to_binary, T3, c[1]) end
end)

-- decode_json shares decode's root fast path (its own constructor cache):
-- alternating shapes across the two methods never mixes them up.
T.test('json: decode_json and decode alternate shapes on one handle', function()
    local shapes = {
        { name = 'a' }, { age = 3 }, { name = 'b', age = 4 }, { emails = { 'x' } },
        { name = 'c', lucky_numbers = { 1, 2 } }, {},
    }
    for round = 1, 3 do
        for i, t in ipairs(shapes) do
            local u = shapes[(i + round) % #shapes + 1]
            T.eq(Person:decode_json(Person:encode_json(t)), t)
            T.eq(Person:decode(Person:encode(u)), u)
            T.eq(hello:decode_json('hello.Person', Person:encode_json(u)), u)
        end
    end
end)

-- A JSON call from a finalizer that runs inside another JSON call (while
-- that one holds the schema's buffers) takes buffers of its own: both
-- results stay right.
T.test('json: calls nested in finalizers take buffers of their own', function()
    local t = { name = 'outer', age = 7, emails = {}, lucky_numbers = {} }
    for i = 1, 300 do t.emails[i] = 'e' .. i .. '@x'; t.lucky_numbers[i] = i end
    local s = Person:encode_json(t)
    local inside, nested, runs = false, 0, 0
    local fin
    local function arm()
        if newproxy then
            local u = newproxy(true)
            getmetatable(u).__gc = fin
        else
            setmetatable({}, { __gc = fin })
        end
    end
    fin = function()
        if inside then nested = nested + 1 end
        runs = runs + 1
        T.eq(Person:decode_json('{"name":"n","age":1}'), { name = 'n', age = 1 })
        T.eq(Person:encode_json({ name = 'm' }), '{"name":"m"}')
        if runs < 2000 then arm() end
    end
    local pause = collectgarbage('setpause', 10)
    for _ = 1, 20 do arm() end
    -- Until finalizers have run inside the calls a few times (they run
    -- at GC steps, which allocation inside the calls brings on).
    for _ = 1, 5000 do
        if nested >= 3 then break end
        inside = true
        local d = Person:decode_json(s)
        local e = Person:encode_json(t)
        inside = false
        T.eq(d, t)
        T.eq(e, s)
    end
    collectgarbage('setpause', pause)
    runs = 2000
    collectgarbage()
    T.eq(nested > 0, true)
end)
