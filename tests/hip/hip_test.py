#!/usr/bin/env python3
"""Checks the HIP backend from the outside, through accel-info, for ctest (tests/hip/CMakeLists.txt), on a machine
without an AMD GPU:

  no-runtime       with ACCEL_HIP_LIBRARY naming no file: zero HIP devices, ACCEL_ERROR_BACKEND_UNAVAILABLE with
                   the dlopen failure as the reason in the --json loader entry and in --loader-debug, and the host
                   backend still loads beside it
  fake-info        with ACCEL_HIP_LIBRARY at tests/hip's fake runtime: two HIP devices with the fake's descriptor
                   (name, architecture gfx942, sku, PCI bus id, formats, xGMI link)
  fake-no-device   the fake with ACCEL_FAKE_HIP_DEVICES=0: zero devices, hipInit's hipErrorNoDevice as the reason
  fake-rocm5       the fake without hipGetDevicePropertiesR0600 (ROCm 5's layout): the architecture still read

Each case runs accel-info in a fresh process: a runtime is loaded once per process.
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from backend_check import accel_info_json, environment, fail, run  # noqa: E402
from backend_check import check_unavailable as check_unavailable_backend  # noqa: E402


def check_unavailable(args, library, needles):
    check_unavailable_backend(args.accel_info, "hip", "HIP", needles, ACCEL_HIP_LIBRARY=library)


def check_no_runtime(args):
    with tempfile.TemporaryDirectory(prefix="accel-hip-runtime-") as tmp:
        missing = os.path.join(tmp, "libamdhip64.so.6")
        check_unavailable(args, missing, ["cannot load the HIP runtime " + missing, "No such file",
                                          "ACCEL_HIP_LIBRARY"])


def fake_env(args, devices, **extra):
    return environment("hip", ACCEL_HIP_LIBRARY=args.fake, ACCEL_FAKE_HIP_DEVICES=str(devices), **extra)


def check_fake_info(args, **extra):
    doc = accel_info_json(args.accel_info, fake_env(args, 2, **extra))
    paths = [a for d in doc["physical_devices"] for a in d["access_paths"] if a["backend"] == "hip"]
    if len(doc["physical_devices"]) != 2 or len(paths) != 2:
        fail(f"expected 2 physical devices with one HIP path each: {json.dumps(doc['physical_devices'])[:2000]}")
    entry = [e for e in doc["loader"] if e["backend"] == "hip"][0]
    if entry["state"] != "loaded" or entry["device_count"] != 2:
        fail(f"loader entry {entry}: expected loaded with 2 devices")
    text = json.dumps(doc)
    for needle in ["Fake HIP GPU 0", "Fake HIP GPU 1", "amd-fake-hip-gpu-0", "00fa:10:00.0", "00fa:11:00.0",
                   "gfx942", "hsaco", "fp8-e4m3", "bf16", "tf32", "AMD", "6.3"]:
        if needle not in text:
            fail(f"accel-info --json does not show {needle!r}: {text[:3000]}")
    p = run([args.accel_info, "topo"], fake_env(args, 2, **extra))
    if p.returncode != 0 or "xgmi" not in p.stdout.lower():
        fail(f"accel-info topo does not show the xGMI link:\n{p.stdout}")
    print("PASS: two fake HIP devices with the expected descriptor")


def check_fake_no_device(args):
    entry = [e for e in accel_info_json(args.accel_info, fake_env(args, 0))["loader"] if e["backend"] == "hip"][0]
    if entry["status"] != "ACCEL_ERROR_BACKEND_UNAVAILABLE" or entry["device_count"] != 0 or \
            "hipInit failed with hipErrorNoDevice (100)" not in entry["reason"] or \
            "sees no AMD GPU" not in entry["reason"]:
        fail(f"with no device: loader entry {entry}")
    print(f"PASS: without devices: {entry['reason']}")


def check_fake_rocm5(args):
    check_fake_info(args)  # --fake is the build of the fake without hipGetDevicePropertiesR0600


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["no-runtime", "fake-info", "fake-no-device", "fake-rocm5"])
    ap.add_argument("--accel-info", required=True)
    ap.add_argument("--fake", help="tests/hip's fake runtime (fake-*)")
    args = ap.parse_args()
    {"no-runtime": check_no_runtime, "fake-info": check_fake_info, "fake-no-device": check_fake_no_device,
     "fake-rocm5": check_fake_rocm5}[args.mode](args)


if __name__ == "__main__":
    main()
