"""Shared helpers of the differential tests: schema loading, the case-file
format, a wire-format writer, and a NaN-aware structural view of a message."""

import math
import os
import struct
import sys

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError:  # pragma: no cover - reported to the Rust test
    sys.stderr.write('differential: the Python `protobuf` package is missing: pip install protobuf\n')
    sys.exit(3)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FDS = os.path.join(ROOT, 'fixtures', 'descriptors', 'conformance.fds')

P2 = 'protobuf_test_messages.proto2.TestAllTypesProto2'
P3 = 'protobuf_test_messages.proto3.TestAllTypesProto3'
TYPES = (P2, P3)

F = descriptor_pb2.FieldDescriptorProto


def load_pool():
    fds = descriptor_pb2.FileDescriptorSet()
    with open(FDS, 'rb') as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file in fds.file:
        pool.Add(file)
    return pool


def message_class(pool, name):
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


# --- case files: records of (u32 LE length, bytes) fields ------------------

def write_records(path, records):
    """records: iterable of tuples of bytes; each tuple is one record."""
    with open(path, 'wb') as f:
        for rec in records:
            f.write(struct.pack('<I', len(rec)))
            for part in rec:
                f.write(struct.pack('<I', len(part)))
                f.write(part)


def read_records(path):
    out = []
    with open(path, 'rb') as f:
        data = f.read()
    i = 0
    while i < len(data):
        (n,) = struct.unpack_from('<I', data, i)
        i += 4
        rec = []
        for _ in range(n):
            (ln,) = struct.unpack_from('<I', data, i)
            i += 4
            rec.append(data[i:i + ln])
            i += ln
        out.append(tuple(rec))
    return out


# --- wire writer -----------------------------------------------------------

def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(number, wt):
    return varint((number << 3) | wt)


def zigzag(v, bits):
    return ((v << 1) ^ (v >> (bits - 1))) & ((1 << bits) - 1)


def encode_scalar(ftype, v):
    """(wire type, payload bytes) of one scalar value of `ftype`."""
    if ftype in (F.TYPE_INT32, F.TYPE_INT64, F.TYPE_UINT32, F.TYPE_UINT64, F.TYPE_ENUM):
        return 0, varint(v)
    if ftype == F.TYPE_BOOL:
        return 0, varint(1 if v else 0)
    if ftype == F.TYPE_SINT32:
        return 0, varint(zigzag(v, 32))
    if ftype == F.TYPE_SINT64:
        return 0, varint(zigzag(v, 64))
    if ftype == F.TYPE_FIXED32:
        return 5, struct.pack('<I', v)
    if ftype == F.TYPE_SFIXED32:
        return 5, struct.pack('<i', v)
    if ftype == F.TYPE_FLOAT:
        return 5, struct.pack('<f', v)
    if ftype == F.TYPE_FIXED64:
        return 1, struct.pack('<Q', v)
    if ftype == F.TYPE_SFIXED64:
        return 1, struct.pack('<q', v)
    if ftype == F.TYPE_DOUBLE:
        return 1, struct.pack('<d', v)
    raise ValueError(ftype)


# --- NaN-aware structural view ---------------------------------------------

def _scalar_view(v):
    if isinstance(v, float):
        if math.isnan(v):
            return ('nan',)
        return ('f', v, math.copysign(1.0, v))
    return v


def unknown_bytes(msg):
    """The raw unknown-field bytes kept by `msg` itself (not its children)."""
    c = type(msg)()
    c.CopyFrom(msg)
    for fd, _ in c.ListFields():
        if fd.is_extension:
            c.ClearExtension(fd)
        else:
            c.ClearField(fd.name)
    return c.SerializeToString()


def split_fields(data):
    """The raw bytes of each top-level field record in `data`."""
    out, i = [], 0

    def read_varint(i):
        v, shift = 0, 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v, i

    def skip(i, wt, number):
        if wt == 0:
            return read_varint(i)[1]
        if wt == 1:
            return i + 8
        if wt == 5:
            return i + 4
        if wt == 2:
            n, i = read_varint(i)
            return i + n
        if wt == 3:
            while True:
                t, i = read_varint(i)
                if t & 7 == 4:
                    assert t >> 3 == number
                    return i
                i = skip(i, t & 7, t >> 3)
        raise ValueError('wire type %d' % wt)

    while i < len(data):
        start = i
        t, i = read_varint(i)
        i = skip(i, t & 7, t >> 3)
        out.append(data[start:i])
    return out


def view(msg, unknown_order=True):
    """A comparable (==) nested dict of `msg`, NaN == NaN, -0.0 != 0.0,
    with the unknown-field bytes of every message under key '?unknown'
    (without `unknown_order`: as a sorted list of field records)."""
    out = {}
    for fd, value in msg.ListFields():
        key = ('[%s]' % fd.full_name) if fd.is_extension else fd.name
        is_map = fd.message_type is not None and fd.message_type.GetOptions().map_entry
        if is_map:
            vfd = fd.message_type.fields_by_name['value']
            if vfd.message_type is not None:
                out[key] = {k: view(v, unknown_order) for k, v in value.items()}
            else:
                out[key] = {k: _scalar_view(v) for k, v in value.items()}
        elif fd.is_repeated:
            if fd.message_type is not None:
                out[key] = [view(v, unknown_order) for v in value]
            else:
                out[key] = [_scalar_view(v) for v in value]
        elif fd.message_type is not None:
            out[key] = view(value, unknown_order)
        else:
            out[key] = _scalar_view(value)
    unk = unknown_bytes(msg)
    if unk:
        out['?unknown'] = unk.hex() if unknown_order else sorted(r.hex() for r in split_fields(unk))
    return out


def first_diff(a, b, path='$'):
    """Path and values of the first difference between two views, or None."""
    if type(a) is not type(b):
        return '%s: %r != %r' % (path, a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b), key=repr):
            if k not in a:
                return '%s.%s: missing on the left, right has %r' % (path, k, b[k])
            if k not in b:
                return '%s.%s: missing on the right, left has %r' % (path, k, a[k])
            d = first_diff(a[k], b[k], '%s.%s' % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, '%s[%d]' % (path, i))
            if d:
                return d
        if len(a) != len(b):
            return '%s: length %d != %d' % (path, len(a), len(b))
        return None
    if a != b:
        return '%s: %r != %r' % (path, a, b)
    return None
