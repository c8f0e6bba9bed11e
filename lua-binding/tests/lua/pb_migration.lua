-- A small program written against lua-protobuf's documented API (its
-- README's example, options and hooks). test_pb_compat.lua runs it
-- unchanged with `pb` and `protoc` being protolua.pb and protolua.protoc.
-- Returns 'migration ok'.
local pb = require "pb"
local protoc = require "protoc"

-- load schema from text (just for demo, use protoc.new() to create a new compiler)
assert(protoc:load [[
   message Phone {
      optional string name        = 1;
      optional int64  phonenumber = 2;
   }
   message Person {
      optional string name     = 1;
      optional int32  age      = 2;
      optional string address  = 3;
      repeated Phone  contacts = 4;
   } ]])

-- lua table data
local data = {
   name = "ilse",
   age  = 18,
   contacts = {
      { name = "alice", phonenumber = 12312341234 },
      { name = "bob",   phonenumber = 45645674567 }
   }
}

-- encode lua table data into binary format in lua string and return
-- (in field number order, so the bytes can be checked)
pb.option "encode_order"
local bytes = assert(pb.encode("Person", data))
assert(pb.tohex(bytes):sub(1, 17) == "0A 04 69 6C 73 65", pb.tohex(bytes))

-- and decode the binary data back into lua table
local data2 = assert(pb.decode("Person", bytes))
assert(data2.name == "ilse" and data2.age == 18)
assert(#data2.contacts == 2 and data2.contacts[2].phonenumber == 45645674567)
assert(data2.address == nil) -- proto2: no default values by default

-- a compiler of its own, proto3, enums, a map and a oneof
local p = protoc.new()
p.include_imports = true
assert(p:load([[
   syntax = "proto3";
   package game;
   enum Class { WARRIOR = 0; MAGE = 1; }
   message Item { string id = 1; uint32 count = 2; }
   message Player {
      uint64 uid = 1;
      Class class = 2;
      map<string, Item> bag = 3;
      oneof where { string zone = 4; int32 room = 5; }
      repeated int32 scores = 6;
   }
]], "game.proto"))

local player = { uid = 42, class = "MAGE", bag = { sword = { id = "s", count = 1 } }, room = 7 }
local pbytes = pb.encode(".game.Player", player)
local back = pb.decode("game.Player", pbytes)
assert(back.class == "MAGE" and back.bag.sword.count == 1 and back.room == 7)
assert(back.zone == nil)
assert(back.scores and #back.scores == 0) -- proto3 defaults filled in
for name, number, ftype in pb.fields "game.Player" do
   assert(type(name) == "string" and type(number) == "number" and type(ftype) == "string")
end
assert(pb.enum("game.Class", "MAGE") == 1 and pb.enum("game.Class", 0) == "WARRIOR")
assert(select(3, pb.type "game.Player") == "message")

-- options: enums as numbers, default values off
pb.option "enum_as_value"
assert(pb.decode("game.Player", pbytes).class == 1)
pb.option "enum_as_name"
pb.option "no_default_values"
assert(pb.decode("game.Player", pbytes).scores == nil)
pb.option "auto_default_values"

-- hooks: decode items into "objects", encode them back
local Item = {}
Item.__index = Item
function Item:total() return self.count end
pb.hook("game.Item", function(t) return setmetatable(t, Item) end)
pb.option "enable_hooks"
local hooked = pb.decode("game.Player", pbytes)
assert(hooked.bag.sword:total() == 1)
pb.option "disable_hooks"

pb.encode_hook("game.Class", function(v) if v == "mage" then return "MAGE" end end)
pb.option "enable_enchooks"
assert(pb.encode("game.Player", { uid = 42, class = "mage", bag = player.bag, room = 7 }) == pbytes)
pb.option "disable_enchooks"

-- 64-bit values as strings
pb.option "int64_as_string"
local big = pb.decode("game.Player", pb.encode("game.Player", { uid = "#18446744073709551615" }))
assert(big.uid == "#18446744073709551615", tostring(big.uid))
pb.option "int64_as_number"

pb.option "no_encode_order"

-- the default table
assert(pb.defaults("game.Item").count == 0)

return "migration ok"
