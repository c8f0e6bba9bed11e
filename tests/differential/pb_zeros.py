"""protolua.pb's `encode_default_values` against Python protobuf: the bytes
protolua wrote for a TestAllTypesProto3 whose proto3 implicit-presence
fields all hold zero must parse (upb) to the message with those values,
and must hold every one of those fields on the wire (Python's own
unknown-field parser lists them). Usage: pb_zeros.py BYTES_FILE."""

import sys

import common
from google.protobuf import empty_pb2, unknown_fields

# Field numbers of TestAllTypesProto3's zero-valued singular fields that
# the Lua side set: optional_int32 .. optional_bytes (1-15 but for the
# message and enum numbers), the two enums (21, 22), and the nested
# message's `a` inside field 18.
ZERO_FIELDS = list(range(1, 16)) + [21, 22]


def main():
    with open(sys.argv[1], 'rb') as f:
        data = f.read()
    cls = common.message_class(common.load_pool(), common.P3)
    got = cls()
    got.ParseFromString(data)
    want = cls()
    want.optional_nested_message.a = 0
    want.oneof_uint32 = 0
    assert got == want, f'parsed {got} != expected {want}'
    assert got.HasField('optional_nested_message') and got.WhichOneof('oneof_field') == 'oneof_uint32'
    empty = empty_pb2.Empty()
    empty.ParseFromString(data)
    wire = {}
    for u in unknown_fields.UnknownFieldSet(empty):
        wire.setdefault(u.field_number, []).append(u)
    missing = [n for n in ZERO_FIELDS if n not in wire]
    assert not missing, f'zero fields not on the wire: {missing}'
    nested = empty_pb2.Empty()
    nested.ParseFromString(wire[18][0].data)
    assert [u.field_number for u in unknown_fields.UnknownFieldSet(nested)] == [1], 'nested a=0 not written'
    # Python itself leaves these zeros out: the bytes differ, the messages not.
    assert len(want.SerializeToString()) < len(data)
    print(f'pb_zeros: {len(ZERO_FIELDS) + 1} zero fields on the wire, message equal ({len(data)} bytes)')


if __name__ == '__main__':
    main()
