-- protolua: a protobuf codec for Lua, as a rock for Tarantool
-- (`tarantoolctl rocks make` on 2.x, `tt rocks make` on 3.x) and for plain
-- LuaRocks on LuaJIT, Lua 5.1 and Lua 5.4 (`luarocks make`).
--
-- The module is a Rust cdylib. rock/build.sh runs cargo with the feature set
-- that matches the Lua it is built for, and links no Lua into it: the host
-- (tarantool, luajit, lua5.x) supplies the C API when it loads the library.
-- Needs cargo (the Rust toolchain) on PATH.
rockspec_format = "3.0"
package = "protolua"
version = "scm-1"
source = {
    url = "git+https://git.sr.ht/~protolua/protolua",
    branch = "main",
}
description = {
    summary = "Fast protobuf encode/decode for Lua and Tarantool, schemas loaded at run time",
    detailed = [[
protolua loads a FileDescriptorSet at run time, compiles it into flat
plans, and encodes Lua tables to protobuf bytes (and back) in one C call
per message. proto2, proto3 and editions; Tarantool-native int64 cdata,
box.NULL and serializer metatables.
]],
    license = "MIT OR Apache-2.0",
    homepage = "https://git.sr.ht/~protolua/protolua",
}
dependencies = {
    "lua >= 5.1",
}
build = {
    type = "command",
    build_command = [[LUA="$(LUA)" sh rock/build.sh]],
    install = {
        lib = { protolua = "target/rock/protolua.so" },
    },
}
