-- gRPC-Web end to end inside Tarantool: grpc.web_call and http.client
-- against a real gRPC-Web server (sonora, tests/grpc_web/server.py, started
-- by tests/grpc_web/run.sh which sets PROTOLUA_GRPC_WEB_URL). A no-op
-- elsewhere; skipped with a note when the URL is not set (an error with
-- PROTOLUA_REQUIRE_GRPC_WEB=1).
if not box then return end
local url = os.getenv('PROTOLUA_GRPC_WEB_URL')
if not url then
    if os.getenv('PROTOLUA_REQUIRE_GRPC_WEB') then error('PROTOLUA_GRPC_WEB_URL is not set') end
    io.stdout:write('test_grpc_web: skipped (no server; run lua-binding/tests/grpc_web/run.sh)\n')
    return
end

local grpc = protolua.grpc
local S = protolua.load_proto(FIXTURES .. '/proto/svc/greeter.proto')
local hello = S:method('/svc.greet.v1.Greeter/SayHello')
local hellos = S:method('/svc.greet.v1.Greeter/SayHellos')
local ERR = 'no user \194\171missing\194\187: 100% gone\nbye'

T.test('grpc-web e2e: unary OK (binary and text)', function()
    T.eq(grpc.web_call(url, hello, { name = 'ana' }), { message = 'hello ana' }, 'binary')
    T.eq(grpc.web_call(url, hello, { name = 'ana' }, { text = true }), { message = 'hello ana' }, 'text')
end)

T.test('grpc-web e2e: unary error status and message', function()
    T.eq({ grpc.web_call(url, hello, { name = 'missing' }) }, { nil, grpc.status.NOT_FOUND, ERR }, 'NOT_FOUND')
    T.eq({ grpc.web_call(url, hello, { name = 'missing' }, { text = true }) }, { nil, 5, ERR }, 'text')
    local v, st = grpc.web_call(url .. '/nowhere', hello, { name = 'x' })
    T.eq(v == nil and st ~= 0, true, 'unknown path fails: ' .. tostring(st))
end)

T.test('grpc-web e2e: server streaming over http.client + decode_response', function()
    local http = require('http.client').new()
    local function call(req)
        local r = http:request('POST', url .. hellos.path, hellos:encode_request(req), {
            headers = { ['content-type'] = 'application/grpc-web+proto', accept = 'application/grpc-web+proto',
                        ['x-grpc-web'] = '1' },
        })
        T.eq(r.status, 200, 'HTTP status')
        return hellos:decode_response(r.body)
    end
    T.eq(call({ name = 'bo', times = 3 }), {
        { message = 'hello bo #0', at = {} },
        { message = 'hello bo #1', at = { seconds = 1 } },
        { message = 'hello bo #2', at = { seconds = 2 } },
    }, 'three replies')
    T.eq(call({ name = 'bo', times = 0 }), {}, 'none')
    T.eq({ call({ name = 'missing', times = 2 }) }, { nil, grpc.status.PERMISSION_DENIED, ERR }, 'error after replies')
end)

T.test('grpc-web e2e: deadlines', function()
    local v = grpc.web_call(url, hello, { name = 'remaining' }, { timeout = 5 })
    T.eq(grpc.timeout_decode(v.message), 5, 'the server got the grpc-timeout: ' .. v.message)
    local t0 = require('clock').monotonic()
    local _, st = grpc.web_call(url, hello, { name = 'slow' }, { timeout = 0.3 })
    T.eq(st, grpc.status.DEADLINE_EXCEEDED, 'expired call')
    T.eq(require('clock').monotonic() - t0 < 1.5, true, 'returned at the deadline')
end)
