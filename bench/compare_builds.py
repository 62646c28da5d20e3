#!/usr/bin/env python3
"""Before/after figures of two builds of accel-bench, interleaved in one session
(docs/overhead.md, "Before and after"). Each round runs the "before" build,
then the "after" one (the next round the other way round), with the same
arguments; every figure printed is the median over the rounds of each run's
median (Accel, native and the thread hand-off) or of each run's paired ratio
(accel/native, accel/handoff, which accel-bench takes per interleaved
repetition), with after/before. Ratios of bandwidths for copies, of times for
latency, as accel-bench prints them.

A build is a folder holding bin/accel-bench, lib/ and share/ (a build tree, or a
copy of its lib, share and bin folders: libaccel finds its backends relative to
itself, and the script puts the folder's lib/ first on LD_LIBRARY_PATH). Give
both the same accel-bench binary (copy the newer one into the older folder's
bin/): the tool's own paths (the hand-off baseline) change what stays in cache.

  bench/compare_builds.py --before /tmp/hot-base --after build/default --rounds 3 -- \\
      --backends host,opencl,vulkan --native --sizes 4K,1M,16M,256M

--before-env and --after-env set environment variables for one side, so that one
build compares two settings (--before build/default --before-env
ACCEL_HANDLE_HAZARDS=0 --after build/default).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(build, args, tmp, tag, extra_env=()):
    out = os.path.join(tmp, f"{tag}.json")
    env = dict(os.environ)
    for assignment in extra_env:
        name, _, value = assignment.partition("=")
        env[name] = value
    env["LD_LIBRARY_PATH"] = os.path.join(build, "lib") + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    cmd = [os.path.join(build, "bin/accel-bench"), "--json", out] + args
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout[-3000:]}")
    with open(out) as f:
        return json.load(f)


def figures(report):
    """{(backend, row): {"accel": s, "native": s, "handoff": s, "bytes": n}} from one accel-bench report."""
    rows = {}
    for dev in report["devices"]:
        for key, value in dev.items():
            if not isinstance(value, dict) or "accel" not in value:
                continue
            row = {"bytes": value.get("bytes", 0)}
            for path in ("accel", "native", "handoff"):
                if path in value:
                    row[path] = value[path]["median_s"]
            # The run's paired ratios (accel-bench takes them per interleaved repetition): better than a ratio of
            # medians taken from different runs.
            for ratio in ("accel_over_native", "accel_over_handoff"):
                if ratio in value:
                    row[ratio] = value[ratio]["median"]
            rows[(dev["backend"], key)] = row
    return rows


def show(seconds, nbytes):
    if seconds is None:
        return "-"
    if nbytes:
        return f"{nbytes / seconds / 1e9:.2f} GB/s"
    return f"{seconds * 1e6:.1f} us"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before-env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable for the before runs only (repeatable)")
    parser.add_argument("--after-env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable for the after runs only (repeatable)")
    parser.add_argument("bench_args", nargs=argparse.REMAINDER)
    o = parser.parse_args()
    args = [a for a in o.bench_args if a != "--"]
    for assignment in o.before_env + o.after_env:
        if "=" not in assignment or assignment.startswith("="):
            parser.error(f"'{assignment}' is not NAME=VALUE")
    runs = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(o.rounds):
            order = ("before", "after") if i % 2 == 0 else ("after", "before")
            for tag in order:
                extra_env = o.before_env if tag == "before" else o.after_env
                runs[tag].append(figures(run(getattr(o, tag), args, tmp, f"{tag}{i}", extra_env)))
    keys = [k for k in runs["after"][0] if k in runs["before"][0]]

    def median(tag, key, path):
        values = [r[key][path] for r in runs[tag] if key in r and path in r[key]]
        return statistics.median(values) if values else None

    print("| backend | row | before | after | after/before | native | accel/native before | accel/native after | "
          "handoff | accel/handoff after |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in keys:
        nbytes = runs["after"][0][key]["bytes"]
        before, after = median("before", key, "accel"), median("after", key, "accel")
        native = median("after", key, "native")
        handoff = median("after", key, "handoff")
        # after/before: time ratio for latency (lower is better), bandwidth ratio for copies (higher is better).
        change = (before / after if nbytes else after / before) if before and after else None
        fmt = (lambda r: f"{r:.3f}" if r is not None else "-")
        print(f"| {key[0]} | {key[1]} | {show(before, nbytes)} | {show(after, nbytes)} | {fmt(change)} | "
              f"{show(native, nbytes)} | {fmt(median('before', key, 'accel_over_native'))} | "
              f"{fmt(median('after', key, 'accel_over_native'))} | {show(handoff, nbytes)} | "
              f"{fmt(median('after', key, 'accel_over_handoff'))} |")


if __name__ == "__main__":
    main()
