#!/usr/bin/env python3
"""Instruction-count regression check against a committed baseline.

    bench-harness/bench_check.py [--update] [--wire-only | --matrix-only]

Runs two instruction-count sources, both under valgrind's callgrind:

  wire    pbwire's iai-callgrind benches (`cargo bench -p pbwire --bench
          wire_iai -- --output-format=json`), the "Ir" total of each
          benchmark id, keyed `group/function.id` (iai's own directory name).
  matrix  `bench-harness/icount.sh .`: instructions per op of every matrix
          cell of the working tree, for encode and decode and the four
          JSON methods (MATRIX_OPS), keyed `message/size/op`; the median of
          BENCH_CHECK_MATRIX_RUNS (default 5) runs, since the system LuaJIT
          randomizes its string hash per process (see DEFAULT_MATRIX_RUNS).

and compares them with bench-harness/baseline/instructions.json. Exits 1 if
any benchmark is more than the tolerance (env BENCH_CHECK_TOLERANCE, percent,
default 2.0) above its baseline, or if a baselined benchmark is missing from
the run. Improvements beyond the tolerance are reported, with a hint to
refresh the baseline, but do not fail. A benchmark may carry its own
"tolerance_pct" in the baseline file; it replaces the global tolerance for
that benchmark and survives --update.

--update rewrites the baseline (only the sections that were run) from this
run, together with the machine info (valgrind, luajit, rustc, date, git rev).

Exit status: 0 pass, 1 regression/missing, 2 usage or tool failure.
Python 3 standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE = os.path.join(ROOT, "bench-harness", "baseline", "instructions.json")
SCHEMA = 1
DEFAULT_TOLERANCE = 2.0
# icount.sh knobs pinned so that the numbers mean the same thing run to run.
ICOUNT_ITERS = "200"
# The system LuaJIT (2.1 git20220320) seeds its string hash from /dev/urandom,
# so the counts vary per process: typically within +-1 % (up to 2.6 % on the
# ~3-6k-instruction BenchPayload/min cells), and rarely (3 runs in 52 measured)
# a hash chain makes Person/100KB/encode compare a 100KB string on every encode,
# +15 %. Measured on 12 runs of one build: one run against another fails a 2 %
# check 1 time in 12, a median of 3 against a median of 3 about 1 in 120, and a
# median of 5 against a median of 5 never in 20000 resamplings (max |change|
# 0.81 %). Env BENCH_CHECK_MATRIX_RUNS overrides, e.g. 1 for a quick look.
DEFAULT_MATRIX_RUNS = 5
# icount.sh's scratch dir (its build, protolua.so copy and callgrind output):
# our own, so a check does not clobber a `just icount` running at the same time.
DEFAULT_ICOUNT_WORK = "/tmp/protolua-icount-check"


def die(msg, code=2):
    print(f"bench-check: {msg}", file=sys.stderr)
    sys.exit(code)


def tool_version(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError:
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None


def git(*args):
    out = subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True, check=False)
    # Only trailing newlines: `status --porcelain` lines start with a space.
    return out.stdout.rstrip("\n") if out.returncode == 0 else None


def machine_info():
    dirty = [line[3:] for line in (git("status", "--porcelain", "--untracked-files=no") or "").splitlines()]
    luajit = tool_version(["luajit", "-v"])
    if luajit:  # drop the copyright notice
        luajit = luajit.split(" -- ")[0]
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_rev": git("rev-parse", "--short", "HEAD"),
        "git_dirty": bool(dirty),
        "git_dirty_files": dirty,
        "rustc": tool_version(["rustc", "--version"]),
        "valgrind": tool_version(["valgrind", "--version"]),
        "luajit": luajit,
        "arch": platform.machine(),
        "os": platform.system() + " " + platform.release(),
    }


# What the measured code is built from; compared before and after a run.
SOURCES = ["wire", "lua-binding/src", "fixtures", "bench-harness/icount.sh", "bench-harness/lua/icount.lua",
           "Cargo.toml", "Cargo.lock"]


def source_state():
    """HEAD, plus the uncommitted diff and untracked files under SOURCES."""
    return (git("rev-parse", "HEAD"), git("diff", "HEAD", "--", *SOURCES),
            git("ls-files", "--others", "--exclude-standard", "--", *SOURCES))


def target_dir():
    return os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")


def run_logged(cmd, env, log_path, what):
    """Run cmd, stdout returned, stderr to log_path; die with its tail on failure."""
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    with open(log_path, "w") as log:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log, text=True, check=False)
    if proc.returncode != 0:
        with open(log_path) as log:
            tail = log.read().splitlines()[-30:]
        print("\n".join(tail), file=sys.stderr)
        die(f"{what} failed (exit {proc.returncode}); full log: {log_path}")
    return proc.stdout


def run_wire():
    """{key: {"instructions": Ir, "details": setup call}} from the iai benches."""
    tdir = target_dir()
    env = dict(os.environ)
    # Our own iai home, so that a check does not rotate the old/new callgrind
    # files `just bench-wire` compares against.
    env["IAI_CALLGRIND_HOME"] = os.path.join(tdir, "iai-bench-check")
    # Whatever the caller set for iai must not change what is measured or printed.
    for var in ("IAI_CALLGRIND_SAVE_BASELINE", "IAI_CALLGRIND_BASELINE", "IAI_CALLGRIND_LOAD_BASELINE",
                "IAI_CALLGRIND_CALLGRIND_ARGS", "IAI_CALLGRIND_FILTER", "IAI_CALLGRIND_OUTPUT_FORMAT"):
        env.pop(var, None)
    cmd = ["cargo", "bench", "-p", "pbwire", "--bench", "wire_iai", "--", "--output-format=json"]
    out = run_logged(cmd, env, os.path.join(tdir, "bench-check", "wire_iai.log"), "cargo bench --bench wire_iai")
    results = {}
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        group = d["module_path"].split("::")[-2]
        key = f"{group}/{d['function_name']}"
        if d.get("id"):
            key += "." + d["id"]
        ir = None
        for prof in d["profiles"]:
            if prof["tool"] != "Callgrind":
                continue
            metrics = prof["summaries"]["total"]["summary"]["Callgrind"]["Ir"]["metrics"]
            # EitherOrBoth: {"Left": new} | {"Both": [new, old]} | {"Right": old}
            new = metrics.get("Left") or (metrics.get("Both") or [None])[0]
            if new is not None:
                ir = new["Int"]
        if ir is None:
            die(f"no callgrind Ir for {key} in the iai output")
        if key in results:
            die(f"duplicate iai benchmark key {key}")
        results[key] = {"instructions": ir, "details": d.get("details")}
    if not results:
        die("wire_iai produced no JSON summaries (is iai-callgrind-runner 0.16.1 installed?)")
    return results


# The ops measured per cell: the binary codec's and the JSON methods' (#29).
MATRIX_OPS = ["encode", "decode", "encode_json", "decode_json", "binary_to_json", "json_to_binary"]
ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|\s*(" + "|".join(MATRIX_OPS) + r")\s*\|\s*(-?\d+)\s*\|\s*$")


def run_matrix(runs):
    """{message/size/op: {"instructions": median, "samples": [...]}} from `runs` runs of icount.sh."""
    env = dict(os.environ)
    env["ICOUNT_ITERS"] = ICOUNT_ITERS
    env["ICOUNT_OPS"] = " ".join(MATRIX_OPS)
    env.setdefault("ICOUNT_WORK", DEFAULT_ICOUNT_WORK)
    env.pop("ICOUNT_LOAD_OPTS", None)
    env.pop("ICOUNT_CELLS", None)
    cmd = [os.path.join(ROOT, "bench-harness", "icount.sh"), "."]
    samples = {}
    for i in range(runs):
        out = run_logged(cmd, env, os.path.join(target_dir(), "bench-check", "icount.log"), "icount.sh")
        got = 0
        for line in out.splitlines():
            m = ROW.match(line)
            if m:
                msg, size, op, n = m.groups()
                samples.setdefault(f"{msg}/{size}/{op}", []).append(int(n))
                got += 1
        if not got:
            die("could not parse any row of icount.sh's table:\n" + out)
        print(f"bench-check: matrix: run {i + 1}/{runs} done", file=sys.stderr, flush=True)
    return {k: {"instructions": int(statistics.median_low(v)), "samples": v} for k, v in samples.items()}


def load_baseline():
    if not os.path.exists(BASELINE):
        return None
    with open(BASELINE) as f:
        base = json.load(f)
    if base.get("schema") != SCHEMA:
        die(f"{BASELINE}: schema {base.get('schema')!r}, expected {SCHEMA}")
    return base


def write_baseline(old, current, info):
    base = old or {"schema": SCHEMA}
    base["schema"] = SCHEMA
    base["machine"] = info
    base.setdefault(
        "note",
        "Written by `just bench-check-update` (bench-harness/bench_check.py --update). "
        "wire: callgrind Ir per iai-callgrind benchmark id; matrix: instructions/op from icount.sh. "
        "An entry may carry \"tolerance_pct\" to override BENCH_CHECK_TOLERANCE for it; it is kept on update.",
    )
    for section, results in current.items():
        old_entries = (base.get(section) or {}).get("benches", {})
        entries = {}
        for key, val in sorted(results.items()):
            e = dict(val)
            if "tolerance_pct" in old_entries.get(key, {}):
                e["tolerance_pct"] = old_entries[key]["tolerance_pct"]
            entries[key] = e
        sec = {"updated": {"date": info["date"], "git_rev": info["git_rev"], "git_dirty": info["git_dirty"]}}
        if section == "matrix":
            sec["icount_iters"] = int(ICOUNT_ITERS)
            sec["runs"] = len(next(iter(results.values()))["samples"])
        sec["benches"] = entries
        base[section] = sec
    os.makedirs(os.path.dirname(BASELINE), exist_ok=True)
    tmp = BASELINE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(base, f, indent=2, sort_keys=False)
        f.write("\n")
    os.replace(tmp, BASELINE)


def compare(section, base_sec, results, tolerance):
    """Rows (section, key, baseline, now, pct, verdict), counts by verdict, notes on regressions."""
    rows, notes = [], []
    counts = {"regression": 0, "missing": 0, "improved": 0, "new": 0}
    benches = base_sec.get("benches", {}) if base_sec else {}
    for key in sorted(set(benches) | set(results)):
        b = benches.get(key)
        n = results.get(key)
        if b is None:
            rows.append((section, key, None, n["instructions"], None, "NEW (not in baseline)"))
            counts["new"] += 1
            continue
        if n is None:
            rows.append((section, key, b["instructions"], None, None, "MISSING from this run"))
            counts["missing"] += 1
            continue
        tol = float(b.get("tolerance_pct", tolerance))
        old, now = b["instructions"], n["instructions"]
        pct = (now - old) * 100.0 / old if old else (0.0 if now == old else float("inf"))
        mark = "" if tol == tolerance else f" (tol {tol:g}%)"
        if pct > tol:
            verdict = "REGRESSION" + mark
            counts["regression"] += 1
        elif pct < -tol:
            verdict = "improved" + mark
            counts["improved"] += 1
        else:
            verdict = "ok" + mark
        rows.append((section, key, old, now, pct, verdict))
        if verdict.startswith("REGRESSION") and "samples" in n:
            notes.append(f"  {section} {key}: this run's samples {n['samples']}, "
                         f"baseline's {b.get('samples', [old])}")
    return rows, counts, notes


def print_table(rows):
    def fmt(v):
        return "-" if v is None else f"{v:,}"

    header = ("section", "bench", "baseline", "now", "change %", "verdict")
    cells = [
        (s, k, fmt(b), fmt(n), "-" if p is None else f"{p:+.2f}", v) for s, k, b, n, p, v in rows
    ]
    widths = [max(len(str(r[i])) for r in [header, *cells]) for i in range(len(header))]
    right = {2, 3, 4}

    def line(r):
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in cells:
        print(line(r))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite the baseline from this run")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--wire-only", action="store_true", help="only pbwire's iai-callgrind benches")
    which.add_argument("--matrix-only", action="store_true", help="only the icount.sh matrix")
    args = ap.parse_args()

    try:
        tolerance = float(os.environ.get("BENCH_CHECK_TOLERANCE", DEFAULT_TOLERANCE))
    except ValueError:
        die(f"BENCH_CHECK_TOLERANCE={os.environ['BENCH_CHECK_TOLERANCE']!r} is not a number")
    if tolerance < 0:
        die("BENCH_CHECK_TOLERANCE must be >= 0")
    try:
        matrix_runs = int(os.environ.get("BENCH_CHECK_MATRIX_RUNS", DEFAULT_MATRIX_RUNS))
    except ValueError:
        die(f"BENCH_CHECK_MATRIX_RUNS={os.environ['BENCH_CHECK_MATRIX_RUNS']!r} is not an integer")
    if matrix_runs < 1:
        die("BENCH_CHECK_MATRIX_RUNS must be >= 1")

    sections = []
    if not args.matrix_only:
        sections.append(("wire", run_wire, "pbwire iai-callgrind benches (cargo bench -p pbwire --bench wire_iai)"))
    if not args.wire_only:
        sections.append(("matrix", lambda: run_matrix(matrix_runs),
                         f"protolua matrix instructions/op (bench-harness/icount.sh ., median of {matrix_runs})"))

    base = load_baseline()
    if base is None and not args.update:
        die(f"no baseline at {os.path.relpath(BASELINE, ROOT)}; create it with `just bench-check-update`")

    t0 = time.monotonic()
    info = machine_info()
    state = source_state()
    current = {}
    for name, fn, desc in sections:
        t = time.monotonic()
        print(f"bench-check: running {desc} ...", file=sys.stderr, flush=True)
        current[name] = fn()
        print(f"bench-check: {name}: {len(current[name])} benchmarks in {time.monotonic() - t:.0f}s",
              file=sys.stderr, flush=True)
    if source_state() != state:
        msg = ("the sources (HEAD, or uncommitted changes under " + ", ".join(SOURCES) +
               ") changed during the run, so its numbers may mix two versions")
        if args.update:
            die(msg + "; baseline not written, run again")
        print(f"bench-check: warning: {msg}", file=sys.stderr)

    if args.update:
        write_baseline(base, current, info)
        total = sum(len(v) for v in current.values())
        print(f"bench-check: wrote {os.path.relpath(BASELINE, ROOT)} ({', '.join(current)}: {total} benchmarks, "
              f"rev {info['git_rev']}{' +dirty' if info['git_dirty'] else ''}) in {time.monotonic() - t0:.0f}s")
        return 0

    # Counts depend on the toolchain; a different one explains a wholesale shift.
    old_info = base.get("machine", {})
    for k in ("rustc", "valgrind", "luajit", "arch"):
        if old_info.get(k) != info.get(k):
            print(f"bench-check: warning: {k} differs from the baseline's: {old_info.get(k)!r} -> {info.get(k)!r}",
                  file=sys.stderr)

    rows, notes, totals = [], [], {"regression": 0, "missing": 0, "improved": 0, "new": 0}
    for name, _, _ in sections:
        r, c, n = compare(name, base.get(name), current[name], tolerance)
        rows += r
        notes += n
        for k in totals:
            totals[k] += c[k]
    print()
    print_table(rows)
    print()
    if notes:
        print("bench-check: matrix cells are the median of several icount.sh runs:")
        print("\n".join(notes))
    changes = [abs(p) for *_, p, _ in rows if p is not None]
    rev = base.get("machine", {}).get("git_rev")
    print(f"bench-check: {len(changes)} compared against baseline of rev {rev}; tolerance {tolerance:g}%; "
          f"max |change| {max(changes, default=0.0):.2f}%; {time.monotonic() - t0:.0f}s")
    if totals["improved"]:
        print(f"bench-check: {totals['improved']} improved by more than the tolerance: "
              "refresh the baseline with `just bench-check-update` and commit it.")
    if totals["new"]:
        print(f"bench-check: {totals['new']} not in the baseline (not checked): `just bench-check-update` adds them.")
    failed = totals["regression"] + totals["missing"]
    if totals["missing"]:
        print(f"bench-check: {totals['missing']} in the baseline but not in this run: renamed or removed? "
              "Refresh the baseline with `just bench-check-update`.")
    if failed:
        print(f"bench-check: FAIL: {totals['regression']} regression(s) above tolerance, {totals['missing']} missing.")
        return 1
    print("bench-check: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
