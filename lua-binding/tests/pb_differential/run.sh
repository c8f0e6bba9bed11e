#!/bin/sh
# protolua.pb against lua-protobuf itself: run cases.lua on both and compare
# every line (encode results, decodes under each option, reflection, hooks).
#
#   run.sh <lua> <dir holding protolua.so> <dir holding lua-protobuf's pb.so and protoc.lua>
#
# lua-protobuf comes from `luarocks install lua-protobuf` (or a build of its
# pb.c against the same Lua's headers). Exits non-zero on any difference.
set -eu
lua="$1" ours="$2" theirs="$3"
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d)"
(cd "$here" && LUA_PATH="$theirs/?.lua;;" LUA_CPATH="$theirs/?.so" "$lua" cases.lua lua-protobuf > "$out/theirs.txt")
(cd "$here" && LUA_PATH=";;" LUA_CPATH="$ours/?.so" "$lua" cases.lua protolua > "$out/ours.txt")
if diff -a "$out/theirs.txt" "$out/ours.txt"; then
    echo "pb_differential: $(wc -l < "$out/ours.txt") results identical to lua-protobuf on $("$lua" -e 'io.write(jit and jit.version or _VERSION)')"
else
    echo "pb_differential: protolua.pb differs from lua-protobuf (< lua-protobuf, > protolua)" >&2
    exit 1
fi
