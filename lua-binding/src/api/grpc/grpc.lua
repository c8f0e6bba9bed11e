-- protolua.grpc: the Lua half (see grpc/mod.rs). Receives the native
-- functions (frame, unframe, b64encode, b64decode, max_frame); returns the
-- module table and the metatable of method tables (schema:method()).
-- Lua 5.1 compatible; needs nothing but the string library (and, for
-- web_call only, Tarantool's http.client).
local native = ...
local frame, unframe = native.frame, native.unframe
local b64encode, b64decode = native.b64encode, native.b64decode
local byte, char, format, sub = string.byte, string.char, string.format, string.sub
local concat = table.concat

local M = {}
M.frame, M.unframe = frame, unframe
M.base64_encode, M.base64_decode = b64encode, b64decode
M.max_frame = native.max_frame

local function fail(fmt, ...)
    error('protolua: grpc.' .. format(fmt, ...), 3)
end

-- Status codes, both ways: status.NOT_FOUND == 5, status[5] == 'NOT_FOUND'.
local names = {
    'OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND',
    'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED',
    'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED',
}
M.status = {}
for i, n in ipairs(names) do
    M.status[n] = i - 1
    M.status[i - 1] = n
end

-- grpc-message: percent-encode bytes outside printable ASCII and '%'.
function M.percent_encode(s)
    if type(s) ~= 'string' then fail('percent_encode: expected a string, got %s', type(s)) end
    return (s:gsub('[^\32-\36\38-\126]', function(c) return format('%%%02X', byte(c)) end))
end

-- The reverse; a '%' not followed by two hex digits stays as it is (as
-- the gRPC spec asks of receivers).
function M.percent_decode(s)
    if type(s) ~= 'string' then fail('percent_decode: expected a string, got %s', type(s)) end
    return (s:gsub('%%(%x%x)', function(h) return char(tonumber(h, 16)) end))
end

-- grpc-timeout: at most 8 digits and a unit (H, M, S, m, u, n). Encode a
-- timeout in seconds with the finest unit that fits, rounding up (a
-- deadline is never made shorter).
local units = { { 'n', 1e9 }, { 'u', 1e6 }, { 'm', 1e3 }, { 'S', 1 }, { 'M', 1 / 60 }, { 'H', 1 / 3600 } }
function M.timeout_encode(seconds)
    if type(seconds) ~= 'number' or seconds ~= seconds then
        fail('timeout_encode: expected a number of seconds, got %s', tostring(seconds))
    end
    if seconds <= 0 then return '1n' end
    for _, u in ipairs(units) do
        local v = math.ceil(seconds * u[2] - 1e-9)
        if v < 1e8 then return format('%d%s', v, u[1]) end
    end
    return '99999999H'
end

local scale = { n = 1e-9, u = 1e-6, m = 1e-3, S = 1, M = 60, H = 3600 }
function M.timeout_decode(s)
    if type(s) ~= 'string' then fail('timeout_decode: expected a string, got %s', type(s)) end
    local digits, unit = s:match('^(%d+)([HMSmun])$')
    if not digits or #digits > 8 then fail('timeout_decode: bad grpc-timeout %q', s) end
    return tonumber(digits) * scale[unit]
end

-- gRPC-Web trailers: a frame with flag 0x80 holding HTTP/1 header lines.
-- `t` maps names to values; grpc-status first, grpc-message
-- percent-encoded here. Names are lowercased.
function M.trailers_frame(t)
    if type(t) ~= 'table' then fail('trailers_frame: expected a table, got %s', type(t)) end
    local lines, keys = {}, {}
    for k in pairs(t) do
        if type(k) ~= 'string' then fail('trailers_frame: trailer names must be strings') end
        keys[#keys + 1] = k
    end
    table.sort(keys, function(a, b)
        local ra, rb = a:lower() == 'grpc-status' and 0 or 1, b:lower() == 'grpc-status' and 0 or 1
        if ra ~= rb then return ra < rb end
        return a < b
    end)
    for _, k in ipairs(keys) do
        local v = tostring(t[k])
        if k:lower() == 'grpc-message' then v = M.percent_encode(v) end
        if v:find('[\r\n]') or k:find('[:%s]') then fail('trailers_frame: bad trailer %q', k) end
        lines[#lines + 1] = k:lower() .. ': ' .. v .. '\r\n'
    end
    return frame(concat(lines), false, true)
end

-- Parse the payload of a trailer frame: names lowercased, grpc-status as a
-- number, grpc-message percent-decoded.
function M.parse_trailers(payload)
    if type(payload) ~= 'string' then fail('parse_trailers: expected a string, got %s', type(payload)) end
    local t = {}
    for line in payload:gmatch('[^\r\n]+') do
        local k, v = line:match('^([^:]+):%s*(.-)%s*$')
        if not k then fail('parse_trailers: bad trailer line %q', line) end
        k = k:lower()
        if k == 'grpc-status' then
            v = tonumber(v)
            if not v then fail('parse_trailers: grpc-status is not a number in %q', line) end
        elseif k == 'grpc-message' then
            v = M.percent_decode(v)
        end
        t[k] = v
    end
    return t
end

-- Split a whole body into its message payloads and (gRPC-Web) trailers.
-- opts: text = true for application/grpc-web-text (base64), max = frame
-- size limit. Compressed frames are refused (no compression is set up).
function M.unframe_all(body, opts)
    if type(body) ~= 'string' then fail('unframe_all: expected a string, got %s', type(body)) end
    local max = opts and opts.max or M.max_frame
    if opts and opts.text then body = b64decode(body) end
    local msgs, trailers, pos = {}, nil, 1
    while pos <= #body do
        local payload, compressed, nextpos, is_trailer = unframe(body, pos, max)
        if not payload then fail('unframe_all: truncated frame at byte %d of %d', pos, #body) end
        if compressed then fail('unframe_all: compressed frame at byte %d (no grpc-encoding is supported)', pos) end
        if is_trailer then
            trailers = M.parse_trailers(payload)
            if nextpos <= #body then fail('unframe_all: data after the trailers at byte %d', nextpos) end
        else
            msgs[#msgs + 1] = payload
        end
        pos = nextpos
    end
    return msgs, trailers
end

-- Methods of schema:method() tables.
local method = {}

--- The framed request body for `t`.
function method:encode_request(t, opts)
    return frame(self.input:encode(t, opts))
end

--- Decode a response body: the message (unary) or an array of them
--- (server streaming); for a gRPC-Web body whose trailers carry a non-OK
--- status, nil, status, message. Also returns the trailers, if any.
function method:decode_response(body, opts)
    local msgs, trailers = M.unframe_all(body, opts)
    if trailers and trailers['grpc-status'] and trailers['grpc-status'] ~= 0 then
        return nil, trailers['grpc-status'], trailers['grpc-message'] or ''
    end
    local out = self.output
    if self.server_streaming then
        local list = {}
        for i, m in ipairs(msgs) do list[i] = out:decode(m, opts) end
        return list, trailers
    end
    if #msgs ~= 1 then
        fail('decode_response: %s is unary but the body holds %d messages', self.full_name, #msgs)
    end
    return out:decode(msgs[1], opts), trailers
end

--- Frame a response (server side): one message, or with `trailers` a
--- gRPC-Web body ending in a trailer frame.
function method:encode_response(t, opts)
    return frame(self.output:encode(t, opts))
end

function method:decode_request(body, opts)
    local msgs = M.unframe_all(body, opts)
    if #msgs ~= 1 then fail('decode_request: expected one message, the body holds %d', #msgs) end
    return self.input:decode(msgs[1], opts)
end

local method_mt = { __index = method, __metatable = 'protolua.Method' }

-- HTTP status of a failed gRPC-Web call -> gRPC status (the gRPC spec's
-- "HTTP to gRPC status code mapping").
local http_status = { [400] = 13, [401] = 16, [403] = 7, [404] = 12, [429] = 14, [502] = 14, [503] = 14, [504] = 14 }

--- Unary gRPC-Web call over Tarantool's http.client:
--- web_call(url, method, request [, { headers, timeout, text, client }])
--- -> response table, or nil, status, message.
function M.web_call(url, m, request, opts)
    opts = opts or {}
    if type(url) ~= 'string' then fail('web_call: expected a URL, got %s', type(url)) end
    if getmetatable(m) ~= 'protolua.Method' then fail('web_call: expected a method from schema:method()') end
    if m.client_streaming or m.server_streaming then
        fail('web_call: %s is a streaming method; web_call makes unary calls', m.full_name)
    end
    local ok, http = pcall(require, 'http.client')
    if not ok then fail('web_call: needs Tarantool\'s http.client') end
    M._http = M._http or http.new()
    local client = opts.client or M._http
    local text = opts.text
    local ctype = text and 'application/grpc-web-text' or 'application/grpc-web+proto'
    local headers = { ['content-type'] = ctype, accept = ctype, ['x-grpc-web'] = '1', ['x-user-agent'] = 'protolua' }
    if opts.timeout then headers['grpc-timeout'] = M.timeout_encode(opts.timeout) end
    for k, v in pairs(opts.headers or {}) do headers[k] = v end
    local body = m:encode_request(request)
    if text then body = b64encode(body) end
    local r = client:request('POST', url:gsub('/$', '') .. m.path, body, { headers = headers, timeout = opts.timeout })
    if r.status ~= 200 then
        if r.status == 595 or r.status == 408 then
            return nil, M.status.DEADLINE_EXCEEDED, tostring(r.reason)
        end
        return nil, http_status[r.status] or M.status.UNKNOWN, format('HTTP %s %s', r.status, tostring(r.reason))
    end
    local hs = r.headers or {}
    -- A trailers-only response carries the status in the headers.
    if hs['grpc-status'] and tonumber(hs['grpc-status']) ~= 0 then
        return nil, tonumber(hs['grpc-status']), M.percent_decode(hs['grpc-message'] or '')
    end
    local res_text = (hs['content-type'] or ''):find('grpc%-web%-text') ~= nil
    local msgs, trailers = M.unframe_all(r.body or '', { text = res_text })
    local st = trailers and trailers['grpc-status'] or tonumber(hs['grpc-status'])
    if st == nil then return nil, M.status.INTERNAL, 'no grpc-status in the response' end
    if st ~= 0 then return nil, st, trailers and trailers['grpc-message'] or '' end
    if #msgs ~= 1 then return nil, M.status.INTERNAL, format('unary response with %d messages', #msgs) end
    return m.output:decode(msgs[1])
end

return M, method_mt
