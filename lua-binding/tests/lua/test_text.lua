-- The text format (issue 30): Msg:encode_text / decode_text /
-- binary_to_text / text_to_binary and the schema forms. The golden
-- `.txtpb` files (written for protoc) must parse to the tables the golden
-- `.bin` files decode to; printing is checked line by line against
-- protobuf C++'s output here and, on random messages, in
-- tests/text_differential.rs.
-- Lua 5.1 compatible. Needs the globals set by harness.lua.

local cases = dofile(FIXTURES .. '/golden/cases.lua')

for _, c in ipairs(cases) do
    T.test('text golden ' .. c.name, function()
        local M = T.schema(c.fds):message(c.type)
        local txt = T.readfile(FIXTURES .. '/golden/' .. c.name .. '.txtpb')
        local bin = T.readfile(FIXTURES .. '/golden/' .. c.name .. '.bin')
        local expected = M:decode(bin)
        -- protoc's input parses to what protoc's bytes decode to
        T.eq(M:decode_text(txt), expected, c.name .. ' decode_text')
        T.eq(M:decode(M:text_to_binary(txt)), expected, c.name .. ' text_to_binary')
        -- printing and parsing back is the identity, both layouts
        local printed = M:binary_to_text(bin)
        T.eq(M:decode_text(printed), expected, c.name .. ' binary_to_text round trip')
        T.eq(M:decode_text(M:binary_to_text(bin, { single_line = true })), expected, c.name .. ' single line')
        T.eq(M:decode_text(M:encode_text(expected)), expected, c.name .. ' encode_text round trip')
        T.eq(M:encode_text(expected), printed, c.name .. ' encode_text = binary_to_text')
    end)
end

local hello = T.schema('hello.fds')
local Person = hello:message('hello.Person')
local all3 = T.schema('alltypes3.fds')
local AllTypes = all3:message('protolua.test.AllTypes')

T.test('text prints as protobuf C++ does', function()
    local t = { name = 'Ann "A"\n', age = 42, emails = { 'a@x', 'b@y' }, address = { city = 'Z\195\188rich' },
        lucky_numbers = { 7, -1 } }
    T.eq(Person:encode_text(t), table.concat({
        'name: "Ann \\"A\\"\\n"',
        'age: 42',
        'emails: "a@x"',
        'emails: "b@y"',
        'address {',
        '  city: "Z\\303\\274rich"',
        '}',
        'lucky_numbers: 7',
        'lucky_numbers: -1',
        '',
    }, '\n'))
    T.eq(Person:encode_text(t, { single_line = true }),
        'name: "Ann \\"A\\"\\n" age: 42 emails: "a@x" emails: "b@y" address { city: "Z\\303\\274rich" } '
        .. 'lucky_numbers: 7 lucky_numbers: -1')
    T.eq(Person:encode_text({}), '')
    T.eq(hello:encode_text('hello.Person', { age = 1 }), 'age: 1\n')
    T.eq(AllTypes:encode_text({ f_float = 0.1, f_double = 0.1, f_mood = 'MOOD_SAD', f_bool = true }),
        'f_float: 0.1\nf_double: 0.1\nf_bool: true\nf_mood: MOOD_SAD\n')
    T.eq(AllTypes:encode_text({ f_mood = 'MOOD_SAD' }, { enums = 'number' }), 'f_mood: 2\n')
    T.eq(AllTypes:encode_text({ f_double = 1 / 0, f_float = -1 / 0 }), 'f_float: -inf\nf_double: inf\n')
    T.eq(AllTypes:encode_text({ f_double = 1e300, f_int64 = '-9223372036854775808' }),
        'f_int64: -9223372036854775808\nf_double: 1e+300\n')
end)

T.test('text unknown fields print by number when asked', function()
    local bytes = Person:encode({ age = 1 }) .. T.tag(99, 0) .. T.varint(5) .. T.tag(98, 2) .. '\1x'
        .. T.tag(97, 5) .. '\1\0\0\0'
    T.eq(Person:binary_to_text(bytes), 'age: 1\n')
    T.eq(Person:binary_to_text(bytes, { print_unknown = true }), 'age: 1\n99: 5\n98: "x"\n97: 0x00000001\n')
    -- unknown fields kept by decode print from the table too
    T.eq(Person:encode_text(Person:decode(bytes), { print_unknown = true, single_line = true }),
        'age: 1 99: 5 98: "x" 97: 0x00000001')
end)

T.test('text parses the whole grammar', function()
    local txt = [[
        # a comment
        name: 'single' "double"   # adjacent strings concatenate
        age: 0x10;
        emails: ["a", 'b'], emails: "c"
        address < street: "\x41\101\u00e9\U0001F600" >
        lucky_numbers: [-0, 017, 5]
    ]]
    T.eq(Person:decode_text(txt), {
        name = 'singledouble', age = 16, emails = { 'a', 'b', 'c' },
        address = { street = 'AA\195\169\240\159\152\128' }, lucky_numbers = { 0, 15, 5 },
    })
    T.eq(Person:decode_text('address: { city: "x" }'), { address = { city = 'x' } })
    T.eq(Person:decode_text('address {}'), { address = {} })
    T.eq(Person:decode_text(''), {})
    local t = AllTypes:decode_text('f_float: 1.5f f_double: -inf f_bool: t f_mood: 2 r_double: [nan, 1e3, .5]')
    T.eq(t.f_float, 1.5)
    T.eq(t.f_double, -1 / 0)
    T.eq(t.f_bool, true)
    T.eq(t.f_mood, 'MOOD_SAD')
    T.eq(t.r_double[2], 1000)
    T.eq(t.r_double[3], 0.5)
    T.eq(AllTypes:decode_text('f_mood: MOOD_HAPPY', { enums = 'number' }).f_mood, 1)
    T.eq(hello:decode_text('hello.Person', 'age: 3'), { age = 3 })
    T.eq(hello:text_to_binary('hello.Person', 'age: 3'), Person:encode({ age = 3 }))
    T.eq(hello:binary_to_text('hello.Person', Person:encode({ age = 3 })), 'age: 3\n')
end)

T.test('text errors name the line, column and field', function()
    T.raises('protolua: decode_text hello.Person: line 2 column 6: field age: Integer out of range (2147483648)',
        Person.decode_text, Person, 'name: "x"\nage: 2147483648')
    T.raises('line 1 column 1: Message type "hello.Person" has no field named "nope".',
        Person.decode_text, Person, 'nope: 1')
    T.raises('line 1 column 28: field address.city: Expected string, got: 5',
        Person.decode_text, Person, 'address { street: "" city: 5 }')
    T.raises('Non-repeated field "age" is specified multiple times.', Person.decode_text, Person, 'age: 1 age: 2')
    T.raises('Expected "}".', Person.decode_text, Person, 'address {')
    T.raises('String literals cannot cross line boundaries.', Person.decode_text, Person, 'name: "a\nb"')
    T.raises('Invalid escape sequence in string literal.', Person.decode_text, Person, 'name: "\\q"')
    T.raises('protolua: text_to_binary hello.Person: line 1 column 6: field age: Expected integer, got: 1.5',
        Person.text_to_binary, Person, 'age: 1.5')
    T.raises('Unknown enumeration value of "MOOD_NONE" for field "f_mood".',
        AllTypes.decode_text, AllTypes, 'f_mood: MOOD_NONE')
    T.raises('binary_to_text: expected a string, got table', Person.binary_to_text, Person, {})
    T.raises('protolua: binary_to_text hello.Person:', Person.binary_to_text, Person, '\255')
    T.raises('single_line must be a boolean', Person.binary_to_text, Person, '', { single_line = 1 })
    T.raises('expected a message handle', Person.decode_text, 'age: 1')
    local BP = T.schema('proto2_basic.fds'):message('proto2_basic.BenchPayload')
    T.raises('protolua: text_to_binary proto2_basic.BenchPayload: line 1 column 1: Message missing required fields: id, name',
        BP.text_to_binary, BP, '')
    T.eq(BP:text_to_binary('', { required = false }), '')
    T.raises('max_depth must be an integer', Person.text_to_binary, Person, '', { max_depth = 1e6 })
end)

T.test('text nesting is bounded and long input is linear', function()
    local Node = all3:message('protolua.test.Node')
    local field
    for _, f in ipairs(Node:fields()) do
        if f.type == 'message' and f.label ~= 'repeated' then field = f.name end
    end
    local deep = string.rep(field .. ' { ', 5000) .. string.rep('} ', 5000)
    T.raises('Message is nested deeper than max_depth', Node.decode_text, Node, deep)
    local ok = string.rep(field .. ' { ', 50) .. string.rep('} ', 50)
    T.eq(Node:text_to_binary(Node:binary_to_text(Node:text_to_binary(ok))), Node:text_to_binary(ok))
    local big = string.rep('\\001\\x02', 200000)
    T.eq(#Person:decode_text('name: "' .. big .. '"').name, 400000)
end)
