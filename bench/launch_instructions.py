#!/usr/bin/env python3
"""Instructions Accel's own code spends per kernel launch (+ synchronize), by
callgrind (docs/overhead.md). Runs bench/launch_cost under
`valgrind --tool=callgrind --toggle-collect=measured` twice (N and 2N launches)
and reports, per launch, the instructions executed on the calling thread in
libaccel and in the backend library, and the total with the runtime below them.
The difference of the two runs removes the fixed cost. Instruction counts are
deterministic for one binary, input and environment.

  bench/launch_instructions.py --build build/default --backends host [--count 200]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def run(build, count, env, tmp):
    out = os.path.join(tmp, f"callgrind.{count}")
    exe = os.path.join(build, "bench/launch_cost")
    corpus = os.path.join(build, "share/accel/conformance/corpus")
    cmd = ["valgrind", "--tool=callgrind", "--toggle-collect=measured", f"--callgrind-out-file={out}", exe, corpus,
           str(count)]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout[-3000:]}")
    ann = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", out], stdout=subprocess.PIPE,
                         text=True).stdout
    by_object = {}
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\))?\s*\S*:\S.*?\[(.*?)\]\s*$", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        obj = os.path.basename(m.group(2))
        by_object[obj] = by_object.get(obj, 0) + ir
    total = re.search(r"([\d,]+)\s+(?:\(\s*100\.0%\)\s+)?PROGRAM TOTALS", ann)
    return by_object, int(total.group(1).replace(",", "")) if total else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--backends", required=True)
    ap.add_argument("--count", type=int, default=200)
    args = ap.parse_args()
    env = dict(os.environ, ACCEL_BACKENDS=args.backends, ACCEL_LOG="off")
    with tempfile.TemporaryDirectory() as tmp:
        small, small_total = run(args.build, args.count, env, tmp)
        large, large_total = run(args.build, 2 * args.count, env, tmp)
    per = {k: (large.get(k, 0) - small.get(k, 0)) / args.count for k in set(small) | set(large)}
    accel = sum(v for k, v in per.items() if k.startswith("libaccel.so"))
    backend = sum(v for k, v in per.items() if k.startswith("libaccel_backend_"))
    total = (large_total - small_total) / args.count
    print(f"backends={args.backends}: per launch+synchronize on the calling thread: "
          f"libaccel {accel:.0f} instructions, backend {backend:.0f}, everything {total:.0f}")
    for k, v in sorted(per.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {v:12.0f}  {k}")


if __name__ == "__main__":
    main()
