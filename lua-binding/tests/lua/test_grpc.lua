-- protolua.grpc: framing, status codes, grpc-timeout, grpc-message
-- percent-encoding, gRPC-Web trailers and base64 bodies, method helpers;
-- checked against bodies, trailers and headers captured from grpcio and
-- sonora (fixtures/gen_grpc_golden.py). Lua 5.1 compatible.

local grpc = protolua.grpc
local G = FIXTURES .. '/golden/grpc/'
local golden = dofile(G .. 'cases.lua')
local S = protolua.load_file(FIXTURES .. '/descriptors/svc.fds')
local SVC = '/svc.greet.v1.Greeter/'

T.test('grpc: frame and unframe', function()
    T.eq(grpc.frame('abc'), '\0\0\0\0\3abc', 'frame')
    T.eq(grpc.frame('', true), '\1\0\0\0\0', 'compressed empty frame')
    local two = grpc.frame('abc') .. grpc.frame('de')
    local p, c, nxt, tr = grpc.unframe(two)
    T.eq({ p, c, nxt, tr }, { 'abc', false, 9, false }, 'first')
    T.eq({ grpc.unframe(two, nxt) }, { 'de', false, 16, false }, 'second')
    T.eq(grpc.unframe(two, 16), nil, 'at the end: nothing yet')
    -- Streaming reassembly: every prefix short of a whole frame gives nil.
    for i = 0, 7 do T.eq(grpc.unframe(two:sub(1, i)), nil, 'prefix ' .. i) end
    T.eq(select(4, grpc.unframe('\128\0\0\0\0')), true, 'trailer flag')
    T.raises('grpc.unframe: frame at byte 1 of 5000000 bytes exceeds the limit of 4194304 bytes',
        grpc.unframe, '\0\0\76\75\64')
    T.raises('exceeds the limit of 2 bytes', grpc.unframe, grpc.frame('abc'), 1, 2)
    T.raises('grpc.unframe: frame at byte 1 has unknown flags 0x02', grpc.unframe, '\2\0\0\0\0')
    T.raises('grpc.unframe: pos 0 is outside the buffer', grpc.unframe, 'abc', 0)
    T.raises('grpc.frame: expected a string, got no value', grpc.frame)
end)

T.test('grpc: status codes both ways', function()
    T.eq(grpc.status.OK, 0, 'OK')
    T.eq(grpc.status.NOT_FOUND, 5, 'NOT_FOUND')
    T.eq(grpc.status.UNAUTHENTICATED, 16, 'UNAUTHENTICATED')
    T.eq(grpc.status[5], 'NOT_FOUND', 'back')
    T.eq(grpc.status[14], 'UNAVAILABLE', 'back 14')
end)

T.test('grpc: grpc-message percent-encoding as grpcio writes it', function()
    local n = 0
    for _, c in ipairs(golden.calls) do
        if c.raw_message then
            n = n + 1
            T.eq(grpc.percent_encode(c.message), c.raw_message, c.name .. ' encode')
            T.eq(grpc.percent_decode(c.raw_message), c.message, c.name .. ' decode')
        end
    end
    T.eq(n, 2, 'golden messages')
    T.eq(grpc.percent_decode('100%zz%4'), '100%zz%4', 'bad escapes stay')
    T.eq(grpc.percent_decode('%41%62'), 'Ab', 'mixed case hex')
end)

T.test('grpc: grpc-timeout as grpcio sends it', function()
    for _, t in ipairs(golden.timeouts) do
        local secs, header = t[1], t[2]
        local got = grpc.timeout_decode(header)
        -- grpcio rounds up (and adds its own slack): never below the timeout.
        T.eq(got >= secs - 1e-9 and got <= secs * 1.1 + 0.02, true, header .. ' decodes to ' .. got)
        local ours = grpc.timeout_encode(secs)
        local back = grpc.timeout_decode(ours)
        T.eq(#ours <= 9 and back >= secs - 1e-9 and back <= secs * 1.0001 + 1e-9, true, ours .. ' for ' .. secs)
    end
    T.eq(grpc.timeout_encode(0.05), '50000000n', 'finest unit that fits 8 digits')
    T.eq(grpc.timeout_encode(1), '1000000u', '1 s')
    T.eq(grpc.timeout_encode(1.5), '1500000u', '1.5 s')
    T.eq(grpc.timeout_encode(1000), '1000000m', '1000 s')
    T.eq(grpc.timeout_encode(1e6), '1000000S', '1e6 s')
    T.eq(grpc.timeout_encode(0), '1n', 'expired')
    T.eq(grpc.timeout_encode(1e12), '99999999H', 'beyond: the longest')
    T.eq(grpc.timeout_decode('3H'), 10800, 'hours')
    T.raises('grpc.timeout_decode: bad grpc-timeout "123456789S"', grpc.timeout_decode, '123456789S')
    T.raises('bad grpc-timeout "1x"', grpc.timeout_decode, '1x')
end)

T.test('grpc: encode_request is what grpcio sends', function()
    local m = S:method(SVC .. 'SayHello')
    T.eq(m:encode_request(golden.client_request), T.readfile(G .. 'client_request.bin'), 'request bytes')
    T.eq(m:decode_request(T.readfile(G .. 'client_request.bin')), golden.client_request, 'decode_request')
end)

local expected = {
    SayHello = { message = 'hello ana' },
    SayHellos = {
        { message = 'hello bo #0', at = {} },
        { message = 'hello bo #1', at = { seconds = 1 } },
        { message = 'hello bo #2', at = { seconds = 2 } },
    },
}

T.test('grpc: decode_response of grpcio (HTTP/2) and sonora (gRPC-Web) bodies', function()
    for _, c in ipairs(golden.calls) do
        local m = S:method(SVC .. c.method)
        local body = T.readfile(G .. c.body)
        local v, a, b
        if c.name ~= 'h2_unary_not_found' then v, a, b = m:decode_response(body, { text = c.text }) end
        if c.name:find('^web_') and c.status ~= 0 then
            T.eq({ v, a, b }, { nil, c.status, c.message }, c.name .. ': nil, status, message')
        elseif c.name == 'h2_stream_empty' then
            T.eq(v, {}, c.name)
        elseif c.name == 'h2_stream_error' then
            T.eq(#v, 2, c.name .. ': the messages before the error')
        elseif c.name == 'h2_unary_not_found' then
            T.eq(#body, 0, c.name .. ': no body, the status is in the HTTP/2 trailers')
        else
            T.eq(v, expected[c.method], c.name)
            if c.name:find('^web_') then T.eq(a, { ['grpc-status'] = 0 }, c.name .. ' trailers') end
        end
    end
    local m = S:method(SVC .. 'SayHello')
    T.raises('decode_response: svc.greet.v1.Greeter.SayHello is unary but the body holds 2 messages',
        m.decode_response, m, T.readfile(G .. 'h2_stream_error.bin'))
    T.raises('grpc.unframe_all: truncated frame at byte 1 of 3', m.decode_response, m, 'abc')
    T.raises('compressed frame', m.decode_response, m, grpc.frame('', true))
end)

T.test('grpc-web: trailers and base64 as sonora writes them', function()
    local ok = T.readfile(G .. 'web_unary_ok.bin')
    local m = S:method(SVC .. 'SayHello')
    -- Our body for the same answer is byte-identical to sonora's.
    T.eq(m:encode_response(expected.SayHello) .. grpc.trailers_frame({ ['grpc-status'] = 0 }), ok, 'OK body')
    T.eq(grpc.base64_encode(grpc.frame(m.output:encode(expected.SayHello)))
        .. grpc.base64_encode(grpc.trailers_frame({ ['grpc-status'] = 0 })),
        T.readfile(G .. 'web_unary_ok_text.bin'), 'text body: each frame base64 on its own')
    T.eq(grpc.base64_decode(T.readfile(G .. 'web_unary_ok_text.bin')), ok, 'base64 runs decode')
    local tr = grpc.trailers_frame({ ['grpc-status'] = 5, ['grpc-message'] = 'a b%\n' })
    T.eq(tr, grpc.frame('grpc-status: 5\r\ngrpc-message: a b%25%0A\r\n', false, true), 'trailer frame')
    local p = grpc.unframe(tr)
    T.eq(grpc.parse_trailers(p), { ['grpc-status'] = 5, ['grpc-message'] = 'a b%\n' }, 'parse_trailers')
    T.eq(grpc.parse_trailers('Grpc-Status:0\r\nX-A:  b \r\n'), { ['grpc-status'] = 0, ['x-a'] = 'b' }, 'lenient')
    T.raises('grpc.parse_trailers: bad trailer line "nocolon"', grpc.parse_trailers, 'nocolon')
    T.raises('grpc.b64decode: invalid base64 at byte 1', grpc.base64_decode, '!!!!')
    T.raises('data after the trailers', m.decode_response, m, tr .. grpc.frame(''))
end)

T.test('grpc: method tables', function()
    local m = S:method(SVC .. 'SayHellos')
    T.eq(getmetatable(m), 'protolua.Method', 'metatable')
    T.eq(m.server_streaming, true, 'fields still readable')
    T.raises('web_call: expected a method', grpc.web_call, 'http://x', {}, {})
    T.raises('web_call: svc.greet.v1.Greeter.SayHellos is a streaming method', grpc.web_call, 'http://x', m, {})
end)
