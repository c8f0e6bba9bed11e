#!/bin/sh
# End-to-end gRPC-Web test: start lua-binding/tests/grpc_web/server.py
# (sonora + grpcio-style handler) on 127.0.0.1, run the Lua suite inside
# tarantool with PROTOLUA_GRPC_WEB_URL set (test_grpc_web.lua calls it with
# grpc.web_call), stop the server.
#   run.sh <dir holding protolua.so>     (default: the rock tree ./.rocks)
# Needs tarantool and `pip install grpcio sonora protobuf`.
set -eu
cd "$(dirname "$0")/../../.."
ROOT="$(pwd)"
SODIR="${1:-$ROOT/.rocks/lib/tarantool}"
LOG="$(mktemp)"
python3 lua-binding/tests/grpc_web/server.py "$ROOT/fixtures" > "$LOG" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 50); do
    PORT="$(head -1 "$LOG" | tr -dc 0-9)"
    [ -n "$PORT" ] && break
    sleep 0.2
done
[ -n "${PORT:-}" ] || { echo "grpc_web/run.sh: the server did not start:" >&2; cat "$LOG" >&2; exit 1; }
export PROTOLUA_GRPC_WEB_URL="http://127.0.0.1:$PORT"
(cd "$(mktemp -d)" && LUA_CPATH="$SODIR/?.so;;" PROTOLUA_REQUIRE_GRPC_WEB=1 \
    timeout "${SUITE_TIMEOUT:-600}" tarantool "$ROOT/lua-binding/tests/lua/run.lua" "$ROOT/fixtures")
