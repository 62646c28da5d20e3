#!/usr/bin/env python3
"""The ABI baseline check (docs/abi.md, "The ABI baseline").

  check      libaccel and the backend ABI against abi/baseline/: fails on an
             incompatible change (abidiff's ABIDIFF_ABI_INCOMPATIBLE_CHANGE);
             compatible additions are printed and pass
  self-test  proves the gate: a test copy of the headers with a field inserted
             into a released struct fails it, a copy with an appended
             function passes it
  update     rewrites the baselines (only with an abi/CHANGELOG.md entry)

The backend ABI is a header, so its binary is tests/abi/backend_abi_probe.c
compiled here with -g; libaccel is the built library.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ABIDIFF_ERROR = 1
ABIDIFF_USAGE_ERROR = 2
ABIDIFF_ABI_CHANGE = 4
ABIDIFF_ABI_INCOMPATIBLE_CHANGE = 8
ABIDW_FLAGS = ["--no-corpus-path", "--no-comp-dir-path", "--no-show-locs", "--drop-private-types",
               "--exported-interfaces-only", "--drop-undefined-syms",
               "--type-id-style", "hash"]


def die(message):
    print("FAIL: " + message)
    sys.exit(1)


def abidw(binary, headers, out):
    cmd = ["abidw", *ABIDW_FLAGS, "--out-file", out, binary]
    for h in headers:
        cmd[1:1] = ["--headers-dir", h]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        die(f"{' '.join(cmd)} failed ({p.returncode}): {p.stdout}")


def abidiff(baseline, current):
    p = subprocess.run(["abidiff", "--no-show-locs", baseline, current], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def probe(cc, include_dir, abi_dir, source, out):
    cmd = [cc, "-g", "-O0", "-shared", "-fPIC", "-std=c99", "-I", include_dir, "-I", abi_dir, source, "-o", out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        die(f"compiling the backend ABI probe failed: {p.stdout}")


def current_backend(args, tmp, include_dir, abi_dir, name):
    so = os.path.join(tmp, name + ".so")
    probe(args.cc, include_dir, abi_dir, os.path.join(args.source_dir, "tests/abi/backend_abi_probe.c"), so)
    xml = os.path.join(tmp, name + ".abi")
    abidw(so, [include_dir, abi_dir], xml)
    return xml


# abidiff calls a layout change of a type reached through a pointer parameter a
# mere "ABI change"; Accel's rules (docs/abi.md) make these incompatible:
# released members move, vanish or change type, enumerators change value,
# functions or variables disappear. A member appended at a struct's end (the
# struct_size rule) or a new function is compatible.
INCOMPATIBLE_PATTERNS = [
    r"[1-9]\d* Removed",
    r"offset changed from",
    r"data members? deletion",
    r"type of '[^']*' changed",
    r"enumerator '[^']*' value changed",
    r"name of '[^']*' changed",
    r"parameter \d+ of type '[^']*' changed",
    r"return type changed",
]


def judge(what, rc, report):
    if rc & (ABIDIFF_ERROR | ABIDIFF_USAGE_ERROR):
        die(f"{what}: abidiff failed ({rc}): {report}")
    if rc & ABIDIFF_ABI_INCOMPATIBLE_CHANGE:
        return "incompatible"
    if any(re.search(p, report) for p in INCOMPATIBLE_PATTERNS):
        return "incompatible"
    if rc & ABIDIFF_ABI_CHANGE:
        return "changed"
    return "same"


def check(args, tmp):
    baseline = os.path.join(args.source_dir, "abi/baseline")
    lib_xml = os.path.join(tmp, "libaccel.abi")
    abidw(args.lib, [os.path.join(args.source_dir, "include/accel")], lib_xml)
    backend_xml = current_backend(args, tmp, os.path.join(args.source_dir, "include"),
                                  os.path.join(args.source_dir, "abi"), "backend-abi")
    failed = False
    for name, current in [("libaccel", lib_xml), ("backend-abi", backend_xml)]:
        rc, report = abidiff(os.path.join(baseline, name + ".abi"), current)
        verdict = judge(name, rc, report)
        print(f"{name}: {verdict} against abi/baseline/{name}.abi")
        if verdict != "same":
            print(report[:20000])
        if verdict == "incompatible":
            failed = True
    if failed:
        die("an incompatible ABI change (docs/abi.md: released structs and functions never change; new fields go at "
            "the end of extension structs, new functions and slots are added)")
    print("PASS: no incompatible ABI change")


def self_test(args, tmp):
    baseline = os.path.join(args.source_dir, "abi/baseline/backend-abi.abi")

    def copy_headers(name):
        root = os.path.join(tmp, name)
        shutil.copytree(os.path.join(args.source_dir, "include"), os.path.join(root, "include"))
        shutil.copytree(os.path.join(args.source_dir, "abi"), os.path.join(root, "abi"),
                        ignore=shutil.ignore_patterns("baseline"))
        return root

    def edit(path, pattern, replacement):
        text = open(path).read()
        new, n = re.subn(pattern, replacement, text, count=1, flags=re.S)
        if n != 1:
            die(f"the test edit found no match for {pattern!r} in {path}")
        open(path, "w").write(new)

    cases = [
        # A field inserted into the released function table: every later slot moves.
        ("inserted-slot", "abi/accel_backend.h", r"(const char\* version; /\* the backend's own version string \*/)",
         r"\1\n  void* inserted_by_the_abi_self_test;", "incompatible"),
        # A field inserted into the middle of the capability descriptor.
        ("inserted-field", "include/accel/accel.h", r"(  uint64_t memory_total;)", r"  uint64_t inserted;\n\1",
         "incompatible"),
        # A slot appended at the end of the table, where new slots go: compatible.
        ("appended-slot", "abi/accel_backend.h", r"(  /\* New slots go here, at the end)",
         r"  void (*appended_by_the_abi_self_test)(void);\n\1", "compatible"),
    ]
    for name, header, pattern, replacement, want in cases:
        root = copy_headers(name)
        edit(os.path.join(root, header), pattern, replacement)
        xml = current_backend(args, tmp, os.path.join(root, "include"), os.path.join(root, "abi"), name)
        rc, report = abidiff(baseline, xml)
        verdict = judge(name, rc, report)
        ok = verdict == "incompatible" if want == "incompatible" else verdict in ("same", "changed")
        print(f"{name}: {verdict} (want {want})")
        if not ok:
            die(f"the gate misjudged {name}: {report[:3000]}")
    print("PASS: the gate fails on incompatible changes in a test copy and passes an appended slot")


def update(args, tmp):
    baseline = os.path.join(args.source_dir, "abi/baseline")
    os.makedirs(baseline, exist_ok=True)
    abidw(args.lib, [os.path.join(args.source_dir, "include/accel")], os.path.join(baseline, "libaccel.abi"))
    xml = current_backend(args, tmp, os.path.join(args.source_dir, "include"), os.path.join(args.source_dir, "abi"),
                          "backend-abi")
    shutil.copyfile(xml, os.path.join(baseline, "backend-abi.abi"))
    print(f"wrote {baseline}/libaccel.abi and backend-abi.abi")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["check", "self-test", "update"])
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--lib", help="the built libaccel.so.1")
    ap.add_argument("--cc", default="cc")
    args = ap.parse_args()
    if shutil.which("abidw") is None or shutil.which("abidiff") is None:
        die("abidw/abidiff not found: install Debian's abigail-tools (scripts/install-deps.sh)")
    with tempfile.TemporaryDirectory(prefix="accel-abi-") as tmp:
        {"check": check, "self-test": self_test, "update": update}[args.mode](args, tmp)


if __name__ == "__main__":
    main()
