#!/usr/bin/env python3
"""Checks of the conformance kernel corpus (README.md), run by ctest.

  corpus_test.py manifest <corpus.json> --kernels K...
      corpus.json has format_version 1, exactly the kernels K, native-host for each, only format names
      accel_kernel_format_name knows, every listed file present, and each of the five formats this corpus builds
      either listed for every kernel or named in "missing" with a reason.

  corpus_test.py cuda <corpus.json> --kernels K...
      the PTX nvcc built declares a PTX version and target and has each kernel K as a visible .entry, and the
      cubin, when built, is an ELF file; exit 77 (a skip, with the reason corpus.json gives) when there is no PTX.

The build itself runs spirv-val on every spirv-vulkan file it makes (CMakeLists.txt), so an invalid one never
reaches corpus.json.
"""
import argparse
import json
import os
import re
import sys

# What accel_kernel_format_name returns; this corpus builds the first five and cubin.
KNOWN_FORMATS = ("native-host", "spirv-vulkan", "opencl-c", "spir", "ptx", "spirv-opencl", "cubin", "hsaco")
FORMATS = KNOWN_FORMATS[:5] + ("cubin",)


def fail(message):
    print(f"FAIL: {message}")
    return 1


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check_manifest(args):
    corpus = load(args.corpus_json)
    root = os.path.dirname(os.path.abspath(args.corpus_json))
    errors = []
    if corpus.get("format_version") != 1:
        errors.append(f"format_version is {corpus.get('format_version')!r}, expected 1")
    kernels = corpus.get("kernels")
    missing = corpus.get("missing")
    if not isinstance(kernels, dict) or not isinstance(missing, dict):
        return fail("'kernels' and 'missing' must both be objects")
    if sorted(kernels) != sorted(args.kernels):
        errors.append(f"kernels are {sorted(kernels)}, expected {sorted(args.kernels)}")
    for kernel, files in sorted(kernels.items()):
        if "native-host" not in files:
            errors.append(f"{kernel}: no native-host file")
        for fmt, rel in sorted(files.items()):
            if fmt not in KNOWN_FORMATS:
                errors.append(f"{kernel}: unknown format {fmt!r} (known: {', '.join(KNOWN_FORMATS)})")
            if os.path.isabs(rel) or not os.path.isfile(os.path.join(root, rel)):
                errors.append(f"{kernel}: {fmt} file {rel!r} is not a file relative to corpus.json")
    for fmt in FORMATS:
        listed = [k for k, files in kernels.items() if fmt in files]
        if fmt in missing:
            if listed:
                errors.append(f"{fmt} is both missing ({missing[fmt]!r}) and listed for {', '.join(sorted(listed))}")
            if not isinstance(missing[fmt], str) or not missing[fmt]:
                errors.append(f"missing {fmt} has no reason")
        elif len(listed) != len(kernels):
            errors.append(f"{fmt} is listed for {sorted(listed)} only, and not missing")
    for fmt in missing:
        if fmt not in KNOWN_FORMATS:
            errors.append(f"missing names an unknown format {fmt!r}")
    for e in errors:
        print(f"FAIL: {e}")
    if errors:
        return 1
    built = sorted({f for files in kernels.values() for f in files}, key=KNOWN_FORMATS.index)
    print(f"corpus.json: {len(kernels)} kernels in {', '.join(built)}"
          + "".join(f"; no {f}: {why}" for f, why in sorted(missing.items())))
    return 0


def check_cuda(args):
    corpus = load(args.corpus_json)
    root = os.path.dirname(os.path.abspath(args.corpus_json))
    missing = corpus.get("missing", {})
    files = {f for k in args.kernels for f in [corpus["kernels"].get(k, {}).get("ptx")] if f}
    if "ptx" in missing or not files:
        print(f"SKIP: no PTX in the corpus: {missing.get('ptx', 'corpus.json lists none')}")
        return 77
    errors = []
    for rel in sorted(files):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        if not re.search(r"^\.version \d+\.\d+", text, re.M) or not re.search(r"^\.target sm_\d+", text, re.M):
            errors.append(f"{rel}: no .version / .target line: not PTX")
        entries = re.findall(r"^\.visible \.entry (\w+)\(", text, re.M)
        for k in args.kernels:
            if corpus["kernels"][k].get("ptx") == rel and k not in entries:
                errors.append(f"{rel}: no visible .entry {k} (entries: {', '.join(entries) or 'none'})")
    cubins = {corpus["kernels"][k].get("cubin") for k in args.kernels} - {None}
    for rel in sorted(cubins):
        with open(os.path.join(root, rel), "rb") as f:
            if f.read(4) != b"\x7fELF":
                errors.append(f"{rel}: not an ELF file")
    for e in errors:
        print(f"FAIL: {e}")
    if errors:
        return 1
    print(f"PTX {', '.join(sorted(files))}: {len(args.kernels)} entries"
          + (f"; cubin {', '.join(sorted(cubins))}" if cubins else f"; no cubin: {missing.get('cubin', '?')}"))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="check", required=True)
    manifest = sub.add_parser("manifest")
    manifest.add_argument("corpus_json")
    manifest.add_argument("--kernels", nargs="+", required=True)
    manifest.set_defaults(run=check_manifest)
    cuda = sub.add_parser("cuda")
    cuda.add_argument("corpus_json")
    cuda.add_argument("--kernels", nargs="+", required=True)
    cuda.set_defaults(run=check_cuda)
    args = parser.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
