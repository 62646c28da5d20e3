#!/usr/bin/env python3
"""Checks the CUDA backend from the outside, through accel-info, for ctest (tests/cuda/CMakeLists.txt), on a
machine without a GPU:

  no-driver    with ACCEL_CUDA_LIBRARY naming no file: zero CUDA devices, ACCEL_ERROR_BACKEND_UNAVAILABLE with
               the dlopen failure as the reason in the --json loader entry and in --loader-debug, and the host
               backend still loads beside it
  stub-driver  with ACCEL_CUDA_LIBRARY at the CUDA toolkit's stub libcuda.so: the same, with cuInit's
               CUDA_ERROR_STUB_LIBRARY as the reason
  fake-driver  with ACCEL_CUDA_LIBRARY at tests/cuda's fake driver: two CUDA devices with the fake's descriptor
               (name, sku, PCI bus id, UUID, formats), ACCEL_FAKE_CUDA_DEVICES=0 gives zero devices and cuInit's
               CUDA_ERROR_NO_DEVICE as the reason

Each case runs accel-info in a fresh process: a driver is loaded once per process.
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from backend_check import accel_info_json, environment, fail  # noqa: E402
from backend_check import check_unavailable as check_unavailable_backend  # noqa: E402


def check_unavailable(args, library, needles):
    check_unavailable_backend(args.accel_info, "cuda", "CUDA", needles, ACCEL_CUDA_LIBRARY=library)


def check_no_driver(args):
    with tempfile.TemporaryDirectory(prefix="accel-cuda-driver-") as tmp:
        missing = os.path.join(tmp, "libcuda.so.1")
        check_unavailable(args, missing, ["cannot load the CUDA driver " + missing, "No such file"])


def check_stub_driver(args):
    check_unavailable(args, args.stub, ["cuInit failed with CUDA_ERROR_STUB_LIBRARY (34)",
                                        args.stub + " is the CUDA toolkit's stub library"])


def check_fake_driver(args):
    doc = accel_info_json(args.accel_info, environment("cuda", ACCEL_CUDA_LIBRARY=args.fake, ACCEL_FAKE_CUDA_DEVICES="2"))
    paths = [a for d in doc["physical_devices"] for a in d["access_paths"] if a["backend"] == "cuda"]
    if len(doc["physical_devices"]) != 2 or len(paths) != 2:
        fail(f"expected 2 physical devices with one CUDA path each: {json.dumps(doc['physical_devices'])[:2000]}")
    entry = [e for e in doc["loader"] if e["backend"] == "cuda"][0]
    if entry["state"] != "loaded" or entry["device_count"] != 2:
        fail(f"loader entry {entry}: expected loaded with 2 devices")
    text = json.dumps(doc)
    for needle in ["Fake CUDA GPU 0", "nvidia-fake-cuda-gpu-0", "00fa:10:00.0", "00fa:11:00.0", "sm_90", "ptx", "cubin"]:
        if needle not in text:
            fail(f"accel-info --json does not show {needle!r}: {text[:3000]}")
    # The driver hides every device (as CUDA_VISIBLE_DEVICES= does): the reason names CUDA_ERROR_NO_DEVICE.
    env = environment("cuda", ACCEL_CUDA_LIBRARY=args.fake, ACCEL_FAKE_CUDA_DEVICES="0")
    entry = [e for e in accel_info_json(args.accel_info, env)["loader"] if e["backend"] == "cuda"][0]
    if entry["status"] != "ACCEL_ERROR_BACKEND_UNAVAILABLE" or "CUDA_ERROR_NO_DEVICE (100)" not in entry["reason"]:
        fail(f"with no device: loader entry {entry}")
    print(f"PASS: two fake CUDA devices; without devices: {entry['reason']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["no-driver", "stub-driver", "fake-driver"])
    ap.add_argument("--accel-info", required=True)
    ap.add_argument("--stub", help="the toolkit's stub libcuda.so (stub-driver)")
    ap.add_argument("--fake", help="tests/cuda's fake driver (fake-driver)")
    args = ap.parse_args()
    {"no-driver": check_no_driver, "stub-driver": check_stub_driver, "fake-driver": check_fake_driver}[args.mode](args)


if __name__ == "__main__":
    main()
