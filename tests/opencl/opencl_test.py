#!/usr/bin/env python3
"""Checks the OpenCL backend from the outside, through accel-info and
accel-conformance, for ctest (tests/opencl/CMakeLists.txt):

  clinfo          accel-info --json's OpenCL access paths (name, memory,
                  compute units) match what clinfo reports for each device
  absent          with OCL_ICD_VENDORS at an empty folder the ICD loader finds
                  no platform: zero OpenCL devices, and the reason in the
                  --json loader entry and in --loader-debug
  missing-loader  with ACCEL_OPENCL_LIBRARY naming no file: the same, with the
                  dlopen failure as the reason
  cache           ACCEL_CACHE_DIR steers PoCL's kernel cache to
                  <ACCEL_CACHE_DIR>/pocl, unless POCL_CACHE_DIR is set

Each case runs the tools in fresh processes: the ICD loader reads its vendors,
and PoCL its cache folder, once per process.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from backend_check import run_process  # noqa: E402


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(cmd, env, timeout=300):
    print("+ " + " ".join(cmd), flush=True)
    p = run_process(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=timeout)
    if p.stderr.strip():
        print(p.stderr.strip()[-4000:])
    return p


def environment(**changes):
    env = dict(os.environ)
    env["ACCEL_BACKENDS"] = "opencl"
    env.pop("ACCEL_BACKEND_FILES", None)
    env.pop("ACCEL_ADD_BACKEND_FILES", None)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def accel_info_json(args, env):
    p = run([args.accel_info, "--json"], env)
    if p.returncode != 0:
        fail(f"accel-info --json exited {p.returncode}")
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        fail(f"accel-info --json printed no JSON: {e}")


def opencl_paths(doc):
    return [a for d in doc["physical_devices"] for a in d["access_paths"] if a["backend"] == "opencl"]


def opencl_loader_entry(doc):
    entries = [e for e in doc["loader"] if e["backend"] == "opencl"]
    if len(entries) != 1:
        fail(f"the loader report has {len(entries)} opencl entries: {doc['loader']}")
    return entries[0]


# --- clinfo ----------------------------------------------------------------------------------------------------

def clinfo_devices_json(clinfo, env):
    """Every device clinfo lists, in platform order, from `clinfo --json`; None when this clinfo has no --json."""
    p = run([clinfo, "--json"], env)
    if p.returncode != 0 or not p.stdout.lstrip().startswith("{"):
        return None
    # clinfo's JSON repeats keys inside some objects (e.g. CL_DEVICE_OPENCL_C_ALL_VERSIONS); json keeps the last.
    doc = json.loads(p.stdout)
    devices = []
    for platform in doc.get("devices", []):
        for device in platform.get("online", []):
            devices.append({"name": device["CL_DEVICE_NAME"], "memory": int(device["CL_DEVICE_GLOBAL_MEM_SIZE"]),
                            "compute_units": int(device["CL_DEVICE_MAX_COMPUTE_UNITS"])})
    return devices


def clinfo_devices_raw(clinfo, env):
    """The same from `clinfo --raw`: lines '[<platform>/<device>] CL_DEVICE_NAME <value>'."""
    p = run([clinfo, "--raw"], env)
    if p.returncode != 0:
        fail(f"clinfo --raw exited {p.returncode}")
    devices = {}
    order = []
    for line in p.stdout.splitlines():
        m = re.match(r"\s*\[([^/\]]+)/(\d+)\]\s+(CL_DEVICE_NAME|CL_DEVICE_GLOBAL_MEM_SIZE|CL_DEVICE_MAX_COMPUTE_UNITS)"
                     r"\s+(.*)$", line)
        if not m:
            continue
        key = (m.group(1), int(m.group(2)))
        if key not in devices:
            devices[key] = {}
            order.append(key)
        devices[key][m.group(3)] = m.group(4).strip()
    return [{"name": devices[k]["CL_DEVICE_NAME"], "memory": int(devices[k]["CL_DEVICE_GLOBAL_MEM_SIZE"]),
             "compute_units": int(devices[k]["CL_DEVICE_MAX_COMPUTE_UNITS"])} for k in order]


def check_clinfo(args):
    # PoCL derives its global memory size from the memory it sees free when it starts, which differs between two
    # processes; POCL_MEMORY_LIMIT (GiB) pins it for both (other drivers ignore it).
    env = environment(POCL_MEMORY_LIMIT=os.environ.get("POCL_MEMORY_LIMIT", "2"))
    expected = clinfo_devices_json(args.clinfo, env)
    source = "clinfo --json"
    if expected is None:
        expected = clinfo_devices_raw(args.clinfo, env)
        source = "clinfo --raw"
    if not expected:
        fail(f"{source} lists no OpenCL device; this test needs one (PoCL: pocl-opencl-icd)")
    paths = opencl_paths(accel_info_json(args, env))
    # accel-info lists access paths in the stable order (by kind, then backend order); match each by name and
    # figures, as a multiset, so that the order of either tool does not matter.
    got = sorted((a["name"], a["memory_total"], a["compute_units"]) for a in paths)
    want = sorted((d["name"], d["memory"], d["compute_units"]) for d in expected)
    if got != want:
        fail(f"accel-info's OpenCL access paths {got} differ from {source}'s devices {want}")
    for a in paths:
        if not re.fullmatch(r"[a-z]+-[0-9a-f]+(\.opencl)(\.\d+)?", a["stable_id"]):
            fail(f"access path stable id {a['stable_id']!r} is not <physical id>.opencl")
    print(f"PASS: {len(paths)} OpenCL access path(s) match {source}: {got}")


# --- absent ----------------------------------------------------------------------------------------------------

def check_unavailable(args, env, needles):
    doc = accel_info_json(args, env)
    if opencl_paths(doc):
        fail(f"OpenCL access paths without a driver: {opencl_paths(doc)}")
    entry = opencl_loader_entry(doc)
    if entry["device_count"] != 0 or entry["status"] != "ACCEL_ERROR_BACKEND_UNAVAILABLE":
        fail(f"loader entry {entry}: expected 0 devices and ACCEL_ERROR_BACKEND_UNAVAILABLE")
    for n in needles:
        if n not in entry["reason"]:
            fail(f"the loader entry's reason {entry['reason']!r} does not say {n!r}")
    p = run([args.accel_info, "--loader-debug"], env)
    if p.returncode != 0:
        fail(f"accel-info --loader-debug exited {p.returncode}: a missing driver is not an error")
    if "No devices found" not in p.stdout:
        fail("accel-info does not say it found no devices")
    for n in needles:
        if n not in p.stdout:
            fail(f"accel-info --loader-debug does not show the reason ({n!r}):\n{p.stdout}")
    print(f"PASS: zero OpenCL devices, reason: {entry['reason']}")


def check_absent(args):
    with tempfile.TemporaryDirectory(prefix="accel-opencl-vendors-") as empty:
        check_unavailable(args, environment(OCL_ICD_VENDORS=empty),
                          ["the OpenCL ICD loader found no platform", "CL_PLATFORM_NOT_FOUND_KHR"])


def check_missing_loader(args):
    with tempfile.TemporaryDirectory(prefix="accel-opencl-loader-") as tmp:
        missing = os.path.join(tmp, "libOpenCL.so.1")
        check_unavailable(args, environment(ACCEL_OPENCL_LIBRARY=missing),
                          ["cannot load the OpenCL ICD loader " + missing])


# --- cache -----------------------------------------------------------------------------------------------------

def files_under(path):
    return [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]


def build_kernels(args, env):
    # The execution profile builds the corpus's OpenCL C modules: PoCL compiles them into its cache.
    # LeakSanitizer (GCC 12's) reads a garbage dynamic-TLS range after PoCL compiled into some fresh cache folders
    # ("DTLS 8 at 0x000000000324-..." with verbosity=1, then "Tracer caught signal 11" at exit, every run): its
    # dynamic-TLS tracking is off for this process; its leak check of everything else stays.
    env = dict(env, ASAN_OPTIONS=env.get("ASAN_OPTIONS", "") + ":intercept_tls_get_addr=0")
    p = run([args.runner, "--backend", args.manifest, "--profile", "execution", "--filter", "execution.*"], env)
    if p.returncode != 0:
        print(p.stdout[-4000:])
        fail(f"accel-conformance exited {p.returncode}")


def check_cache(args):
    with tempfile.TemporaryDirectory(prefix="accel-opencl-cache-") as tmp:
        accel_cache = os.path.join(tmp, "accel")
        build_kernels(args, environment(ACCEL_CACHE_DIR=accel_cache, POCL_CACHE_DIR=None, ACCEL_LOG="off"))
        pocl = os.path.join(accel_cache, "pocl")
        if not files_under(pocl):
            fail(f"PoCL cached nothing under {pocl} (ACCEL_CACHE_DIR={accel_cache})")
        # The user's POCL_CACHE_DIR wins.
        other = os.path.join(tmp, "accel-other")
        user = os.path.join(tmp, "user-pocl")
        os.makedirs(user)
        build_kernels(args, environment(ACCEL_CACHE_DIR=other, POCL_CACHE_DIR=user, ACCEL_LOG="off"))
        if not files_under(user):
            fail(f"PoCL cached nothing in POCL_CACHE_DIR={user}")
        if os.path.exists(os.path.join(other, "pocl")):
            fail(f"the backend overrode POCL_CACHE_DIR: {other}/pocl exists")
    print("PASS: PoCL's cache follows ACCEL_CACHE_DIR, and POCL_CACHE_DIR when the user set it")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["clinfo", "absent", "missing-loader", "cache"])
    ap.add_argument("--accel-info", required=True)
    ap.add_argument("--clinfo", default="clinfo")
    ap.add_argument("--runner", help="accel-conformance (cache)")
    ap.add_argument("--manifest", help="the backend's manifest (cache)")
    args = ap.parse_args()
    {"clinfo": check_clinfo, "absent": check_absent, "missing-loader": check_missing_loader,
     "cache": check_cache}[args.mode](args)


if __name__ == "__main__":
    main()
