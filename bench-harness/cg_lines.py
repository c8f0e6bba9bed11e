#!/usr/bin/env python3
"""Per-function and per-source-line self cost of protolua code from a
callgrind file, for valgrinds that read no line tables from rustc's output
(3.19 with rustc 1.95 shows `???` for every file).

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=X.cg \
        luajit bench-harness/lua/icount.lua DIR person 10KB decode 100
    bench-harness/cg_lines.py X.cg DIR/protolua.so decode 100 [TOP]

Arguments: the callgrind file, the protolua.so it ran (for
`llvm-addr2line -i`), a substring the function names must contain, the
divisor (ops run) and how many lines to print (default 60). Each
instruction's cost goes to the outermost `binary/decode/` frame of its inline
chain (the line of the walk it was inlined into), else its outermost one.
Costs of the 0-op run are not subtracted: run with enough ops.
"""
import collections
import json
import re
import subprocess
import sys

cg, so, fsub, div = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
top = int(sys.argv[5]) if len(sys.argv) > 5 else 60
names = {}


def nm(kind, s):
    m = re.match(r'\((\d+)\)(?: (.*))?', s)
    if not m:
        return s
    k = (kind, m.group(1))
    if m.group(2) is not None:
        names[k] = m.group(2)
    return names.get(k, '?')


ob = fn = None
addr = 0
after_calls = False
cost = collections.Counter()
for line in open(cg):
    line = line.rstrip('\n')
    if not line:
        continue
    if line[0].isalpha():
        key, _, val = line.partition('=')
        if key in ('ob', 'cob'):
            v = nm('ob', val)
            if key == 'ob':
                ob = v
        elif key in ('fn', 'cfn'):
            v = nm('fn', val)
            if key == 'fn':
                fn = v
        elif key in ('fl', 'fi', 'fe', 'cfi', 'cfl'):
            nm('fl', val)
        elif key == 'calls':
            after_calls = True
        continue
    parts = line.split()
    a = parts[0]
    if a.startswith('0x'):
        addr = int(a, 16)
    elif a.startswith('+'):
        addr += int(a[1:])
    elif a.startswith('-'):
        addr -= int(a[1:])
    if after_calls:  # the call line's cost is the callee's, inclusive
        after_calls = False
        continue
    if ob and ob.endswith('protolua.so') and fsub in (fn or '') and len(parts) >= 3:
        cost[(fn, addr)] += int(parts[2])

perfn = collections.Counter()
for (f, _), v in cost.items():
    perfn[f] += v
print('## self cost per op, by function')
for f, v in perfn.most_common():
    print(f'{v / div:10.1f}  {f}')
addrs = sorted({a for (_, a) in cost})
out = subprocess.run(['llvm-addr2line', '-f', '-i', '-C', '--output-style=JSON', '-e', so],
                     input='\n'.join(hex(a) for a in addrs) + '\n', capture_output=True, text=True).stdout
loc = {}
for l in out.splitlines():
    j = json.loads(l)
    loc[int(j['Address'], 16)] = [(x['FunctionName'], '%s:%d' % (x['FileName'], x['Line'])) for x in j['Symbol']]
byline = collections.Counter()
for (f, a), v in cost.items():
    fr = loc.get(a) or [('?', '?:0')]
    dl = [x for x in fr if '/binary/decode/' in x[1]]
    o = dl[-1] if dl else fr[-1]
    byline[(f, re.sub(r'.*/(src|library)/', '', o[1]))] += v
print('## self cost per op, by source line')
for (f, l), v in byline.most_common(top):
    print(f'{v / div:10.1f}  {l:32s} {f}')
