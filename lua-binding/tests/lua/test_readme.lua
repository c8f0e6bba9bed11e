-- The README's example, as written there (with the fixture's person
-- .proto), and the outputs its comments claim. Lua 5.1 compatible.

T.test('README example', function()
    local schema = protolua.load_proto(FIXTURES .. '/proto/hello.proto')
    local Person = schema:message('hello.Person')
    local bytes = Person:encode({ name = 'Alexey', age = 30, emails = { 'a@example.com' } })
    local t = Person:decode(bytes)
    T.eq(t, { name = 'Alexey', age = 30, emails = { 'a@example.com' } }, 'decode')
    T.eq(Person:binary_to_json(bytes), '{"name":"Alexey","age":30,"emails":["a@example.com"]}', 'binary_to_json')
    T.eq(Person:encode_text(t), 'name: "Alexey"\nage: 30\nemails: "a@example.com"\n', 'encode_text')
    -- The same schema from protoc's descriptor set.
    local P2 = protolua.load_file(FIXTURES .. '/descriptors/hello.fds'):message('hello.Person')
    T.eq(P2:encode(t), bytes, 'load_file gives the same bytes')
end)
