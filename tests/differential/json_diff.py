#!/usr/bin/env python3
"""ProtoJSON differential test against Python's `protobuf` (json_format).

    json_diff.py gen --seed N --count C --out cases.bin
    json_diff.py check --cases cases.bin --results results.bin

gen: C random TestAllTypesProto2/3 messages per type (gen.py's generator),
whose well-known-type fields are mostly given valid values (set with
json_format.Parse from random JSON forms), the rest left as gen.py made
them (often without a JSON form). A record is (type, index, payload,
Python's JSON text or b'' when MessageToJson refuses the message).

check: reads the Lua side's records (type, index, binary_to_json result,
json_to_binary of Python's text), each result b'ok' or b'err' plus the
bytes or the message, and checks:
  * binary_to_json fails exactly when MessageToJson does;
  * Python's Parse of protolua's JSON is the message (unknown fields
    dropped), compared by deterministic serialization;
  * protolua's json_to_binary of Python's JSON parses to the same message.
Prints a summary; exits 1 with the first mismatches."""

import argparse
import json
import random
import struct
import sys

import common
import gen
from google.protobuf import json_format

WKT = {
    'google.protobuf.Timestamp', 'google.protobuf.Duration', 'google.protobuf.FieldMask',
    'google.protobuf.Struct', 'google.protobuf.Value', 'google.protobuf.ListValue', 'google.protobuf.Any',
    'google.protobuf.DoubleValue', 'google.protobuf.FloatValue', 'google.protobuf.Int64Value',
    'google.protobuf.UInt64Value', 'google.protobuf.Int32Value', 'google.protobuf.UInt32Value',
    'google.protobuf.BoolValue', 'google.protobuf.StringValue', 'google.protobuf.BytesValue',
    'google.protobuf.Empty',
}


def rand_json(rng, depth=0):
    r = rng.random()
    if depth >= 2 or r < 0.5:
        return rng.choice([None, True, False, 0, 1.5, -2e10, 'x', '\u00e9\U0001f600', '', 12345678901])
    if r < 0.75:
        return [rand_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(['a', 'b', 'k_1', 'Z', '']): rand_json(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def rand_path(rng):
    words = ['foo', 'bar', 'baz', 'x', 'long_name']
    return '.'.join(rng.choice(words) + rng.choice(['', '_bar', '_qux_x']) for _ in range(rng.randint(1, 3)))


def snake_to_camel(p):
    out, up = [], False
    for c in p:
        if c == '_':
            up = True
        else:
            out.append(c.upper() if up else c)
            up = False
    return ''.join(out)


def wkt_json(rng, name):
    """A random JSON form of well-known type `name`."""
    if name == 'google.protobuf.Timestamp':
        s = rng.randint(-62135596800, 253402300799)
        n = rng.choice([0, 0, rng.randint(0, 999) * 1000000, rng.randint(0, 999999999)])
        from datetime import datetime, timezone, timedelta
        d = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=s)
        frac = ('.%09d' % n) if n else ''
        return '"%s%sZ"' % (d.strftime('%Y-%m-%dT%H:%M:%S').rjust(19, '0'), frac)
    if name == 'google.protobuf.Duration':
        s = rng.choice([0, 1, -1, rng.randint(-315576000000, 315576000000)])
        n = rng.choice([0, rng.randint(0, 999999999)])
        sign = '-' if (s < 0 or (s == 0 and rng.random() < 0.3 and n)) else ''
        return '"%s%d%ss"' % (sign, abs(s), ('.%09d' % n) if n else '')
    if name == 'google.protobuf.FieldMask':
        return json.dumps(','.join(snake_to_camel(rand_path(rng)) for _ in range(rng.randint(0, 3))))
    if name == 'google.protobuf.Struct':
        return json.dumps({k: rand_json(rng, 1) for k in ['a', 'b', 'c'][:rng.randint(0, 3)]})
    if name == 'google.protobuf.ListValue':
        return json.dumps([rand_json(rng, 1) for _ in range(rng.randint(0, 3))])
    if name == 'google.protobuf.Value':
        return json.dumps(rand_json(rng))
    if name == 'google.protobuf.Any':
        inner = rng.choice(['dur', 'msg', 'int', 'empty'])
        if inner == 'dur':
            return '{"@type":"type.googleapis.com/google.protobuf.Duration","value":"1.5s"}'
        if inner == 'int':
            return '{"@type":"type.googleapis.com/google.protobuf.Int32Value","value":%d}' % rng.randint(-9, 9)
        if inner == 'empty':
            return '{}'
        return ('{"optionalString":%s,"@type":"type.googleapis.com/%s","optionalInt64":"%d"}'
                % (json.dumps(rng.choice(gen.STR)), common.P3, rng.randint(-2**63, 2**63 - 1)))
    if name in ('google.protobuf.DoubleValue', 'google.protobuf.FloatValue'):
        return rng.choice(['1.5', '"NaN"', '0', '-0.25', '"Infinity"'])
    if name in ('google.protobuf.Int64Value', 'google.protobuf.UInt64Value'):
        return '"%d"' % rng.randint(0, 2**63 - 1)
    if name in ('google.protobuf.Int32Value', 'google.protobuf.UInt32Value'):
        return str(rng.randint(0, 2**31 - 1))
    if name == 'google.protobuf.BoolValue':
        return rng.choice(['true', 'false'])
    if name == 'google.protobuf.StringValue':
        return json.dumps(rng.choice(gen.STR))
    if name == 'google.protobuf.BytesValue':
        return rng.choice(['""', '"AAEC/w=="', '"aGk="'])
    return '{}'


def fix_wkt(msg, rng, pool):
    """Give most well-known-type fields under `msg` valid values."""
    for fd, value in msg.ListFields():
        mt = fd.message_type
        if mt is None:
            continue
        if mt.GetOptions().map_entry:
            vfd = mt.fields_by_name['value']
            if vfd.message_type is not None:
                for k in list(value.keys()):
                    fix_one(value[k], vfd.message_type.full_name, rng, pool)
            continue
        subs = list(value) if fd.is_repeated else [value]
        for sub in subs:
            fix_one(sub, mt.full_name, rng, pool)


def fix_one(sub, name, rng, pool):
    if name in WKT:
        if rng.random() < 0.85:
            sub.Clear()
            json_format.Parse(wkt_json(rng, name), sub, descriptor_pool=pool)
    else:
        fix_wkt(sub, rng, pool)


def to_json(msg, pool):
    try:
        return json_format.MessageToJson(msg, indent=None, descriptor_pool=pool).encode()
    except Exception:  # noqa: BLE001 - any refusal is what we compare
        return b''


F = common.F
KEYS64 = (F.TYPE_INT64, F.TYPE_UINT64, F.TYPE_SINT64, F.TYPE_FIXED64, F.TYPE_SFIXED64)


def do_gen(args):
    pool = common.load_pool()
    classes = {t: common.message_class(pool, t) for t in common.TYPES}
    records = []
    for t in common.TYPES:
        for i in range(args.count):
            rng = random.Random('%d/json/%s/%d' % (args.seed, t, i))
            g = gen.Gen(pool, rng)
            msg = classes[t]()
            g.fill_msg(msg, 0)
            fix_wkt(msg, rng, pool)
            payload = msg.SerializeToString()
            r = rng.random()
            if r < 0.15:
                # A body out of canonical order: another message's bytes
                # first (the concatenation is their merge: fields out of
                # order, singular fields twice, two members of a oneof,
                # repeated fields and maps in two runs, map keys twice).
                other = classes[t]()
                g.fill_msg(other, 0)
                fix_wkt(other, rng, pool)
                # Not its maps with 64-bit keys: on LuaJIT, decode gives a
                # key met twice two table keys (int64 cdata), and the law
                # binary_to_json(b) == encode_json(decode(b)) would then
                # test that, not the printer.
                for fd in other.DESCRIPTOR.fields:
                    if fd.message_type is not None and fd.message_type.GetOptions().map_entry \
                            and fd.message_type.fields_by_name['key'].type in KEYS64:
                        other.ClearField(fd.name)
                payload = other.SerializeToString() + payload
            elif r < 0.3:
                payload += g.extra_known(msg.DESCRIPTOR)
            if rng.random() < 0.2:
                payload += g.unknown_fields()
            msg = classes[t].FromString(payload)
            records.append((t.encode(), b'%d' % i, payload, to_json(msg, pool)))
    common.write_records(args.out, records)


def known(msg):
    m = type(msg)()
    m.CopyFrom(msg)
    m.DiscardUnknownFields()
    return m


def canon(msg):
    return known(msg).SerializeToString(deterministic=True)


def diff(a, b):
    return common.first_diff(common.view(known(a)), common.view(known(b)))


def f32(v):
    try:
        return struct.unpack('<f', struct.pack('<f', v))[0]
    except (OverflowError, struct.error):
        return None


def same_json(a, b):
    """JSON values equal, numbers also when they name the same float32
    (protolua prints float fields shortest as float32, Python with its
    own digit count)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        return a == b or (f32(a) is not None and f32(a) == f32(b))
    return a == b


def parses(text, cls, pool):
    try:
        json_format.Parse(text, cls(), descriptor_pool=pool)
        return True
    except Exception:  # noqa: BLE001
        return False


def do_check(args):
    pool = common.load_pool()
    classes = {t: common.message_class(pool, t) for t in common.TYPES}
    cases = common.read_records(args.cases)
    results = common.read_records(args.results)
    assert len(cases) == len(results), (len(cases), len(results))
    bad = []
    stats = {'cases': 0, 'json ok': 0, 'both refused': 0, 'python refuses both': 0, 'text equal': 0}
    for (t, i, payload, py_json), (t2, i2, st, ours, st2, bin_) in zip(cases, results):
        assert (t, i) == (t2, i2)
        stats['cases'] += 1
        cls = classes[t.decode()]
        msg = cls.FromString(payload)
        where = '%s #%s (payload %s)' % (t.decode(), i.decode(), payload.hex()[:200])
        if not py_json:
            if st == b'ok':
                bad.append('%s: Python refuses MessageToJson, protolua printed %s' % (where, ours[:300]))
            else:
                stats['both refused'] += 1
            continue
        if st != b'ok':
            bad.append('%s: protolua refused binary_to_json: %s\nPython: %s' % (where, ours, py_json[:300]))
            continue
        try:
            back = json_format.Parse(ours, cls(), descriptor_pool=pool)
        except Exception as e:  # noqa: BLE001
            # Python refuses some of its own output (a float field holding
            # FLT_MAX prints as 3.4028235e+38, which its range check then
            # rejects): then the texts must be equal as JSON values.
            if not parses(py_json, cls, pool) and same_json(json.loads(ours), json.loads(py_json)):
                stats['python refuses both'] += 1
                continue
            bad.append('%s: Python cannot parse protolua JSON (%s): %s' % (where, e, ours[:300]))
            continue
        # The reference is what Python reads back from its own JSON, where
        # it can (JSON loses a NullValue field's junk number, and a Value
        # without a kind reads back as null_value).
        try:
            ref = json_format.Parse(py_json, cls(), descriptor_pool=pool)
        except Exception:  # noqa: BLE001
            ref = msg
        if canon(back) != canon(ref):
            bad.append('%s: protolua JSON parses to another message: %s' % (where, diff(back, ref)))
            continue
        if same_json(json.loads(ours), json.loads(py_json)):
            stats['text equal'] += 1
        if st2 != b'ok':
            bad.append('%s: protolua json_to_binary refused Python JSON: %s\n%s' % (where, bin_, py_json[:400]))
            continue
        try:
            got = cls.FromString(bin_)
        except Exception as e:  # noqa: BLE001
            bad.append('%s: json_to_binary wrote unparsable bytes (%s)' % (where, e))
            continue
        if canon(got) != canon(ref):
            bad.append('%s: json_to_binary of Python JSON is another message: %s' % (where, diff(got, ref)))
            continue
        stats['json ok'] += 1
    print('json differential: ' + ', '.join('%s %d' % kv for kv in stats.items()))
    if bad:
        print('json differential: %d mismatches; first ones:' % len(bad))
        for b in bad[:8]:
            print(' -', b)
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('cmd', choices=['gen', 'check'])
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--count', type=int, default=100)
    ap.add_argument('--out')
    ap.add_argument('--cases')
    ap.add_argument('--results')
    args = ap.parse_args()
    if args.cmd == 'gen':
        do_gen(args)
    else:
        do_check(args)


if __name__ == '__main__':
    main()
