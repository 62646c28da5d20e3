#!/usr/bin/env python3
"""Checks the Level Zero backend from the outside, through accel-info, for ctest (tests/level_zero/CMakeLists.txt),
on a machine without an Intel GPU:

  no-loader        with ACCEL_LEVEL_ZERO_LIBRARY naming no file: zero Level Zero devices,
                   ACCEL_ERROR_BACKEND_UNAVAILABLE with the dlopen failure as the reason in the --json loader entry and
                   in --loader-debug, and the host backend still loads beside it
  no-driver        the real loader, libze_loader.so.1 (Debian's libze1), with no driver installed: zero devices and
                   zeInit's ZE_RESULT_ERROR_UNINITIALIZED as the reason. Fails, naming what to install, when the
                   loader is missing (scripts/install-deps.sh installs it); skipped (exit 77, with the reason) when a
                   Level Zero driver is present, since the machine then has devices
  fake-info        with ACCEL_LEVEL_ZERO_LIBRARY at tests/level_zero's fake loader: two devices with the fake's
                   descriptor (name, sku, architecture xe-hpc, PCI bus id, formats, spirv-opencl)
  fake-no-device   the fake with ACCEL_FAKE_ZE_DEVICES=0: zero devices, zeInit's failure as the reason

Each case runs accel-info in a fresh process: a loader is loaded once per process.
"""
import argparse
import ctypes
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from backend_check import accel_info_json, environment, fail  # noqa: E402
from backend_check import check_unavailable as check_unavailable_backend  # noqa: E402


def check_unavailable(args, needles, **settings):
    check_unavailable_backend(args.accel_info, "level_zero", "Level Zero", needles, **settings)


def check_no_loader(args):
    with tempfile.TemporaryDirectory(prefix="accel-ze-loader-") as tmp:
        missing = os.path.join(tmp, "libze_loader.so.1")
        check_unavailable(args, ["cannot load the Level Zero loader " + missing, "No such file",
                                 "ACCEL_LEVEL_ZERO_LIBRARY"], ACCEL_LEVEL_ZERO_LIBRARY=missing)


def check_no_driver(args):
    try:
        loader = ctypes.CDLL("libze_loader.so.1")
    except OSError as e:
        fail(f"the Level Zero loader is not installed ({e}): run scripts/install-deps.sh (Debian: libze1)")
    if loader.zeInit(ctypes.c_uint32(0)) == 0:
        print("SKIP: zeInit succeeded: this machine has a Level Zero driver, so the no-driver check does not apply")
        sys.exit(77)
    check_unavailable(args, ["zeInit failed with ZE_RESULT_ERROR_UNINITIALIZED (0x78000001)",
                             "the Level Zero loader found no driver"], ACCEL_LEVEL_ZERO_LIBRARY=None)


def fake_env(args, devices, **extra):
    return environment("level_zero", ACCEL_LEVEL_ZERO_LIBRARY=args.fake, ACCEL_FAKE_ZE_DEVICES=str(devices), **extra)


def check_fake_info(args):
    doc = accel_info_json(args.accel_info, fake_env(args, 2))
    paths = [a for d in doc["physical_devices"] for a in d["access_paths"] if a["backend"] == "level_zero"]
    if len(doc["physical_devices"]) != 2 or len(paths) != 2:
        fail(f"expected 2 physical devices with one Level Zero path each: {json.dumps(doc['physical_devices'])[:2000]}")
    entry = [e for e in doc["loader"] if e["backend"] == "level_zero"][0]
    if entry["state"] != "loaded" or entry["device_count"] != 2:
        fail(f"loader entry {entry}: expected loaded with 2 devices")
    text = json.dumps(doc)
    for needle in ["Fake Level Zero GPU 0", "Fake Level Zero GPU 1", "intel-fake-level-zero-gpu-0", "00fa:20:00.0",
                   "00fa:21:00.0", "xe-hpc", "spirv-opencl", "bf16", "tf32", "fp64", "Intel", "1.3.27421"]:
        if needle not in text:
            fail(f"accel-info --json does not show {needle!r}: {text[:3000]}")
    print("PASS: two fake Level Zero devices with the expected descriptor")


def check_fake_no_device(args):
    entry = [e for e in accel_info_json(args.accel_info, fake_env(args, 0))["loader"] if e["backend"] == "level_zero"][0]
    if entry["status"] != "ACCEL_ERROR_BACKEND_UNAVAILABLE" or entry["device_count"] != 0 or \
            "zeInit failed with ZE_RESULT_ERROR_UNINITIALIZED (0x78000001)" not in entry["reason"]:
        fail(f"with no device: loader entry {entry}")
    print(f"PASS: without devices: {entry['reason']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["no-loader", "no-driver", "fake-info", "fake-no-device"])
    ap.add_argument("--accel-info", required=True)
    ap.add_argument("--fake", help="tests/level_zero's fake loader (fake-*)")
    args = ap.parse_args()
    {"no-loader": check_no_loader, "no-driver": check_no_driver, "fake-info": check_fake_info,
     "fake-no-device": check_fake_no_device}[args.mode](args)


if __name__ == "__main__":
    main()
