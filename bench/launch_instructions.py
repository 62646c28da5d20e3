#!/usr/bin/env python3
"""Instructions Accel's own code spends per kernel launch (+ synchronize), by
callgrind (docs/overhead.md). Runs bench/launch_cost under
`valgrind --tool=callgrind --toggle-collect=measured` twice (N and 2N launches)
and reports, per launch, the instructions executed on the calling thread in
libaccel and in the backend library, and the total with the runtime below them.
The difference of the two runs removes the fixed cost. Instruction counts are
deterministic for one binary, input and environment.

  bench/launch_instructions.py --build build/default --backends host [--count 200] [--operation copy]

With --operation copy the operation is a 4 KiB copy from host memory into a
buffer (+ synchronize) instead of a launch.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def run(build, count, env, tmp, operation):
    out = os.path.join(tmp, f"callgrind.{count}")
    exe = os.path.join(build, "bench/launch_cost")
    corpus = os.path.join(build, "share/accel/conformance/corpus")
    cmd = ["valgrind", "--tool=callgrind", "--toggle-collect=measured", f"--callgrind-out-file={out}", exe, corpus,
           str(count), operation]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout[-3000:]}")
    return self_cost_by_object(out)


def self_cost_by_object(path):
    """Instructions executed in each object (self cost), and their sum, read from callgrind's output file itself:
    callgrind_annotate leaves the object off some lines (a "[clone .constprop.0]" function inlined from a header),
    which would hide where they ran."""
    objects = {}  # compressed ids of ob= and cob= names
    by_object = {}
    current = "???"
    after_calls = False  # the cost line after calls= is the call's inclusive cost, not self cost
    with open(path) as f:
        for line in f:
            if line.startswith(("ob=", "cob=")):
                m = re.match(r"c?ob=(?:\((\d+)\))?\s*(.*)", line.rstrip("\n"))
                ident, name = m.group(1), m.group(2)
                if ident is not None and name:
                    objects[ident] = name
                elif ident is not None:
                    name = objects.get(ident, "???")
                if line.startswith("ob="):
                    current = os.path.basename(name) or "???"
            elif line.startswith("calls="):
                after_calls = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if after_calls:
                    after_calls = False
                    continue
                fields = line.split()
                if len(fields) >= 2:
                    by_object[current] = by_object.get(current, 0) + int(fields[1])
    return by_object, sum(by_object.values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--backends", required=True)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--operation", choices=["launch", "copy"], default="launch")
    args = ap.parse_args()
    env = dict(os.environ, ACCEL_BACKENDS=args.backends, ACCEL_LOG="off")
    with tempfile.TemporaryDirectory() as tmp:
        small, small_total = run(args.build, args.count, env, tmp, args.operation)
        large, large_total = run(args.build, 2 * args.count, env, tmp, args.operation)
    per = {k: (large.get(k, 0) - small.get(k, 0)) / args.count for k in set(small) | set(large)}
    accel = sum(v for k, v in per.items() if k.startswith("libaccel.so"))
    backend = sum(v for k, v in per.items() if k.startswith("libaccel_backend_"))
    total = (large_total - small_total) / args.count
    print(f"backends={args.backends}: per {args.operation}+synchronize on the calling thread: "
          f"libaccel {accel:.0f} instructions, backend {backend:.0f}, everything {total:.0f}")
    for k, v in sorted(per.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {v:12.0f}  {k}")


if __name__ == "__main__":
    main()
