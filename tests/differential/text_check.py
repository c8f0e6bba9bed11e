#!/usr/bin/env python3
"""The text-format differential test (lua-binding/tests/text_differential.rs).

    text_check.py print --cases cases.bin --out ref.bin [--cpp N]
        for every case of gen.py: Python's text (text_format.MessageToString)
        and, for the first N cases per type, protobuf C++'s text
        (`python3 -m grpc_tools.protoc --decode`, the C++ TextFormat printer),
        or an empty record part when not asked.
    text_check.py check --cases cases.bin --ref ref.bin --results res.bin
        protolua's outputs (text_roundtrip.lua) checked against them:
        - protolua's text (multi-line and single-line) parses in Python to
          the payload's message (unknown fields dropped);
        - protolua's parse of Python's text is that message too;
        - protolua's text is byte-identical to C++'s where C++ ran, with
          and without unknown fields;
        - how often it is byte-identical to Python's (informational: Python
          spells floats with repr, C++ with %g).
"""

import argparse
import os
import subprocess
import sys

from google.protobuf import text_format

import common

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_FILE = {
    common.P2: 'google/protobuf/test_messages_proto2.proto',
    common.P3: 'google/protobuf/test_messages_proto3.proto',
}


def cpp_text(type_name, payload):
    """protoc's --decode output: C++'s TextFormat printer (unknown fields
    included, as protoc prints them)."""
    out = subprocess.run(
        [sys.executable, '-m', 'grpc_tools.protoc', '--descriptor_set_in=' + common.FDS,
         '--decode=' + type_name, PROTO_FILE[type_name]],
        input=payload, capture_output=True, check=False)
    if out.returncode != 0:
        return b'!error ' + out.stderr
    return out.stdout


def do_print(args):
    pool = common.load_pool()
    classes = {t: common.message_class(pool, t) for t in common.TYPES}
    seen = {}
    records = []
    for rec in common.read_records(args.cases):
        type_name, payload = rec[0].decode(), rec[2]
        msg = classes[type_name]()
        msg.ParseFromString(payload)
        py = text_format.MessageToString(msg, descriptor_pool=pool).encode()
        n = seen.get(type_name, 0)
        seen[type_name] = n + 1
        cpp = cpp_text(type_name, payload) if n < args.cpp else b''
        records.append((py, cpp))
    common.write_records(args.out, records)


def first_line_diff(a, b):
    la, lb = a.split(b'\n'), b.split(b'\n')
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return 'line %d:\n  protolua: %r\n  C++:      %r' % (i + 1, x, y)
    return 'lengths differ: %d vs %d lines' % (len(la), len(lb))


def do_check(args):
    pool = common.load_pool()
    classes = {t: common.message_class(pool, t) for t in common.TYPES}
    cases = common.read_records(args.cases)
    refs = common.read_records(args.ref)
    results = common.read_records(args.results)
    assert len(cases) == len(refs) == len(results), (len(cases), len(refs), len(results))
    failures = []
    cpp_same = cpp_total = py_same = 0
    for case, ref, res in zip(cases, refs, results):
        type_name, index, payload = case[0].decode(), case[1].decode(), case[2]
        where = '%s #%s (payload %s)' % (type_name, index, payload.hex()[:200])
        text, text_unknown, one_line, from_py = res
        py_text, cpp = ref
        want = classes[type_name]()
        want.ParseFromString(payload)
        want.DiscardUnknownFields()
        want_view = common.view(want)
        for label, t in (('multi-line', text), ('single-line', one_line)):
            got = classes[type_name]()
            try:
                text_format.Parse(t.decode('utf-8'), got, descriptor_pool=pool)
            except Exception as e:  # noqa: BLE001 - any parse failure is a finding
                failures.append('%s: Python cannot parse protolua\'s %s text: %s\n%s' % (where, label, e, t[:400]))
                continue
            d = common.first_diff(common.view(got), want_view)
            if d:
                failures.append('%s: protolua\'s %s text parses to another message: %s' % (where, label, d))
        if from_py.startswith(b'!error '):
            failures.append('%s: protolua cannot parse Python\'s text: %s' % (where, from_py[7:].decode()))
        else:
            got = classes[type_name]()
            got.ParseFromString(from_py)
            d = common.first_diff(common.view(got), want_view)
            if d:
                failures.append('%s: protolua\'s parse of Python\'s text differs: %s' % (where, d))
        if cpp:
            cpp_total += 1
            if cpp.startswith(b'!error '):
                failures.append('%s: protoc failed: %s' % (where, cpp[7:].decode()))
            elif text_unknown != cpp:
                failures.append('%s: protolua\'s text is not C++\'s: %s' % (where, first_line_diff(text_unknown, cpp)))
            else:
                cpp_same += 1
        py_same += text == py_text
    print('text differential: %d cases; identical to C++ (protoc --decode) %d/%d; identical to Python %d/%d'
          % (len(cases), cpp_same, cpp_total, py_same, len(cases)))
    if failures:
        for f in failures[:20]:
            print('FAIL ' + f)
        print('text differential: %d failures' % len(failures))
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('print')
    p.add_argument('--cases', required=True)
    p.add_argument('--out', required=True)
    p.add_argument('--cpp', type=int, default=0)
    c = sub.add_parser('check')
    c.add_argument('--cases', required=True)
    c.add_argument('--ref', required=True)
    c.add_argument('--results', required=True)
    args = ap.parse_args()
    do_print(args) if args.cmd == 'print' else do_check(args)


if __name__ == '__main__':
    main()
