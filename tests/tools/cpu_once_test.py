#!/usr/bin/env python3
"""The CPU reached through host, PoCL (OpenCL) and lavapipe (Vulkan) is one
physical device, counted once with the host's memory and CPUs, with one access
path per backend, each with its own API's name, memory and compute units
(docs/devices.md). Runs accel-info --json with those three backends.

  cpu_once_test.py --accel-info PATH
"""
import argparse
import json
import subprocess
import sys

SKIP = 77


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-info", required=True)
    args = ap.parse_args()
    p = subprocess.run([args.accel_info, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=dict(__import__("os").environ, ACCEL_BACKENDS="host,opencl,vulkan"))
    if p.returncode != 0:
        print(f"FAIL: accel-info --json exited {p.returncode}: {p.stderr}")
        return 1
    doc = json.loads(p.stdout)
    loaded = {e["backend"] for e in doc["loader"] if e["state"] == "loaded" and e.get("device_count", 1) > 0}
    missing = {"host", "opencl", "vulkan"} - loaded
    if missing:
        print(f"SKIP: backends without devices here: {sorted(missing)} (loader: {doc['loader']})")
        return SKIP
    cpus = [d for d in doc["physical_devices"] if d["kind"] == "cpu"]
    if len(cpus) != 1:
        print(f"FAIL: {len(cpus)} physical CPU devices, expected one: {[d['stable_id'] for d in cpus]}")
        return 1
    cpu = cpus[0]
    paths = {a["backend"]: a for a in cpu["access_paths"]}
    if sorted(paths) != ["host", "opencl", "vulkan"]:
        print(f"FAIL: the CPU's access paths are {sorted(paths)}, expected host, opencl and vulkan")
        return 1
    host = paths["host"]
    if cpu["memory_total"] != host["memory_total"] or cpu["compute_units"] != host["compute_units"]:
        print(f"FAIL: the CPU is not counted once with the host's figures: physical {cpu['memory_total']} B, "
              f"{cpu['compute_units']} CPUs; host path {host['memory_total']} B, {host['compute_units']} CPUs")
        return 1
    names = {b: a["name"] for b, a in paths.items()}
    if len(set(names.values())) != 3:
        print(f"FAIL: the access paths do not carry their own API's names: {names}")
        return 1
    for b, a in paths.items():
        if a["stable_id"] != cpu["stable_id"] + "." + b or a["memory_total"] <= 0 or a["compute_units"] <= 0:
            print(f"FAIL: access path {b}: {a}")
            return 1
        print(f"ok: {a['stable_id']}: {a['name']!r}, {a['memory_total']} B, {a['compute_units']} compute units")
    print(f"PASS: one physical CPU {cpu['stable_id']} ({cpu['memory_total']} B, {cpu['compute_units']} CPUs) "
          "with three access paths")
    return 0


if __name__ == "__main__":
    sys.exit(main())
