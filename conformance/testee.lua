-- The protolua conformance testee (run by the `protolua-testee` binary,
-- see docs/CONFORMANCE.md). Speaks the conformance_test_runner protocol on
-- stdin/stdout:
--   loop: 4-byte little-endian length, ConformanceRequest bytes
--         -> 4-byte little-endian length, ConformanceResponse bytes
-- End of file before a length ends the loop (exit status 0).
-- Requests and responses are decoded/encoded with protolua itself.
-- Binary, JSON and text format, in and out, are answered (JSON through
-- Msg:json_to_binary / Msg:binary_to_json, text through Msg:text_to_binary
-- / Msg:binary_to_text); JSPB requests are `skipped`.

local protolua = require('protolua')

assert(CONFORMANCE_FDS, 'CONFORMANCE_FDS not set')
local schema = protolua.load(CONFORMANCE_FDS)
local Request = schema:message('conformance.ConformanceRequest')
local Response = schema:message('conformance.ConformanceResponse')
local FailureSet = schema:message('conformance.FailureSet')

local stdin, stdout, stderr = io.stdin, io.stdout, io.stderr
stdout:setvbuf('full')

local byte, char, floor = string.byte, string.char, math.floor

local function read_u32le()
    local s = stdin:read(4)
    if s == nil or #s == 0 then
        return nil -- clean end of file
    end
    if #s < 4 then
        error('truncated length prefix (' .. #s .. ' bytes)')
    end
    local a, b, c, d = byte(s, 1, 4)
    return a + b * 0x100 + c * 0x10000 + d * 0x1000000
end

local function u32le(n)
    return char(n % 0x100, floor(n / 0x100) % 0x100, floor(n / 0x10000) % 0x100, floor(n / 0x1000000) % 0x100)
end

-- Message handles by full name; false for names the schema doesn't have.
local handles = {}
local function handle_of(name)
    local h = handles[name]
    if h == nil then
        local ok, res = pcall(schema.message, schema, name)
        h = ok and res or false
        handles[name] = h
    end
    return h
end

local function handle(req)
    -- The runner's first request asks which tests the testee expects to
    -- fail; the failure list is kept on the runner side (--failure_list),
    -- so the answer is an empty FailureSet.
    if req.message_type == 'conformance.FailureSet' then
        return { protobuf_payload = FailureSet:encode({}) }
    end
    local out = req.requested_output_format
    if out ~= 'PROTOBUF' and out ~= 'JSON' and out ~= 'TEXT_FORMAT' then
        return { skipped = 'protolua testee: output format ' .. tostring(out or 'UNSPECIFIED') .. ' not supported' }
    end
    local payload, json, text = req.protobuf_payload, req.json_payload, req.text_payload
    if payload == nil and json == nil and text == nil then
        local which = req.jspb_payload and 'jspb' or 'no'
        return { skipped = 'protolua testee: ' .. which .. ' input not supported' }
    end
    local msg = handle_of(req.message_type or '')
    if not msg then
        return { skipped = 'protolua testee: unknown message type ' .. tostring(req.message_type) }
    end
    if json ~= nil then
        local opts = req.test_category == 'JSON_IGNORE_UNKNOWN_PARSING_TEST' and { ignore_unknown = true } or nil
        local ok, bytes = pcall(msg.json_to_binary, msg, json, opts)
        if not ok then
            return { parse_error = tostring(bytes) }
        end
        payload = bytes
    elseif text ~= nil then
        -- Text in: parsed to wire bytes (any parse error is the answer).
        local ok, bytes = pcall(msg.text_to_binary, msg, text)
        if not ok then
            return { parse_error = tostring(bytes) }
        end
        payload = bytes
    end
    if out == 'TEXT_FORMAT' then
        local opts = { print_unknown = req.print_unknown_fields == true }
        local ok, s = pcall(msg.binary_to_text, msg, payload, opts)
        if not ok then
            return { parse_error = tostring(s) }
        end
        return { text_payload = s }
    end
    -- Binary input is checked by decode (a parse error); what binary_to_json
    -- refuses after that has no JSON form (a serialize error).
    local ok, value = pcall(msg.decode, msg, payload)
    if not ok then
        return { parse_error = tostring(value) }
    end
    if out == 'JSON' then
        local ok2, s = pcall(msg.binary_to_json, msg, payload)
        if not ok2 then
            return { serialize_error = tostring(s) }
        end
        return { json_payload = s }
    end
    local ok2, bytes = pcall(msg.encode, msg, value)
    if not ok2 then
        return { serialize_error = tostring(bytes) }
    end
    return { protobuf_payload = bytes }
end

while true do
    local len = read_u32le()
    if len == nil then
        break
    end
    local data = len > 0 and stdin:read(len) or ''
    if data == nil or #data ~= len then
        error('truncated request: wanted ' .. len .. ' bytes, got ' .. (data and #data or 0))
    end
    local ok, req = pcall(Request.decode, Request, data)
    local resp
    if not ok then
        resp = { runtime_error = 'protolua testee: cannot decode ConformanceRequest: ' .. tostring(req) }
    else
        local ok2, res = pcall(handle, req)
        resp = ok2 and res or { runtime_error = 'protolua testee: ' .. tostring(res) }
    end
    local ok3, out = pcall(Response.encode, Response, resp)
    if not ok3 then
        stderr:write('protolua testee: cannot encode ConformanceResponse: ', tostring(out), '\n')
        out = Response:encode({ runtime_error = 'protolua testee: cannot encode response' })
    end
    stdout:write(u32le(#out), out)
    stdout:flush()
end
