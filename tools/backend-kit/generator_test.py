#!/usr/bin/env python3
"""The backend kit's generator test (ctest backend_kit_generator).

Runs accel-backend-new from the source tree into a work folder and checks that
  - the copy has every file of the template, with every spelling of the
    template's name renamed (template/TEMPLATE/Template -> name/NAME/Name) and
    the vendor string replaced, and no "template" left in any form;
  - the default --output is the current folder and the default vendor the
    CamelCase name;
  - bad names and vendors are rejected with exit status 2 and a message, and
    create nothing;
  - an existing folder is refused (exit status 1) and left as it was;
  - the template's sources are the same in its CMakeLists.txt and in the kit's
    in-tree build (tools/backend-kit/CMakeLists.txt).

Usage: generator_test.py --generator PATH --template DIR --work-dir DIR
"""

import argparse
import os
import re
import shutil
import subprocess
import sys


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def generate(args, *extra, cwd=None):
    proc = subprocess.run([sys.executable, args.generator, *extra], cwd=cwd or args.work_dir, capture_output=True,
                          text=True, timeout=60)
    return proc


def read_tree(folder):
    tree = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                tree[os.path.relpath(path, folder)] = f.read()
    return tree


def check_renamed(args):
    proc = generate(args, "acme_npu", "--output", "out", "--vendor", "Acme Corp")
    check(proc.returncode == 0, f"generator failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    check("Next steps" in proc.stdout and "acme_npu.json" in proc.stdout,
          f"the generator printed no next steps:\n{proc.stdout}")
    out = os.path.join(args.work_dir, "out", "acme_npu")
    original, copy = read_tree(args.template), read_tree(out)
    check(sorted(copy) == sorted(original), f"files differ: template {sorted(original)}, copy {sorted(copy)}")
    for required in ("README.md", "backend.cc", "device.cc", "memory.cc", "stream.cc", "module.cc", "topology.cc",
                     "symbols.h", "expectations.json", "CMakeLists.txt"):
        check(required in copy, f"the copy lacks {required}")
    check(re.search("template", "".join(original.values()), re.IGNORECASE), "the template names no 'template'")
    for name, text in copy.items():
        left = [m.start() for m in re.finditer("template", text, re.IGNORECASE)]
        if left:
            raise Failure(f"{name} still says 'template' at offsets {left}: ...{text[max(0, left[0] - 60):left[0] + 60]}...")
    cmake = copy["CMakeLists.txt"]
    check(len(re.findall(r"accel_add_backend\(", cmake)) == 1, f"not exactly one accel_add_backend call:\n{cmake}")
    check("accel_add_backend(NAME acme_npu" in cmake, f"CMakeLists.txt does not build acme_npu:\n{cmake}")
    check("find_package(Accel 1.0 REQUIRED COMPONENTS backend_kit)" in cmake, "CMakeLists.txt finds no backend kit")
    check("project(accel_backend_acme_npu " in cmake, "the project is not renamed")
    check('kBackendName = "acme_npu"' in copy["symbols.h"], "kBackendName is not renamed")
    check("namespace accel::acme_npu_backend" in copy["symbols.h"], "the namespace is not renamed")
    check("ACCEL_ACME_NPU_SYMBOLS_H_" in copy["symbols.h"] and "ACCEL_ACME_NPU_HAS_FIELD" in copy["symbols.h"],
          "the uppercase identifiers are not renamed")
    check('"AcmeNpu device"' in copy["device.cc"], "the device name is not renamed")
    check('"Acme Corp"' in copy["device.cc"], "the vendor is not replaced")
    check("# AcmeNpu backend" in copy["README.md"], "the README's title is not renamed")
    check(copy["expectations.json"] == original["expectations.json"], "expectations.json changed")
    leftovers = [n for n in os.listdir(os.path.join(args.work_dir, "out")) if n != "acme_npu"]
    check(not leftovers, f"the generator left {leftovers} beside the new folder")
    print("renamed: every file copied, every spelling renamed, no 'template' left")
    return out


def check_defaults(args):
    proc = generate(args, "acme")
    check(proc.returncode == 0, f"generator without options failed ({proc.returncode}):\n{proc.stderr}")
    device = os.path.join(args.work_dir, "acme", "device.cc")
    check(os.path.isfile(device), "the default --output is not the current folder")
    with open(device, encoding="utf-8") as f:
        text = f.read()
    check('"Acme device"' in text and '"Acme"' in text, "the default vendor is not the CamelCase name")
    print("defaults: output in the current folder, vendor 'Acme'")


def check_rejected(args):
    for bad in ("Acme", "1npu", "my-npu", "my npu", "_npu", "", "a" * 32, "npü"):
        proc = generate(args, bad, "--output", "rejected")
        check(proc.returncode == 2, f"name {bad!r}: exit status {proc.returncode}, expected 2")
        check("invalid NAME" in proc.stderr and ("lowercase letters" in proc.stderr or "at most" in proc.stderr),
              f"name {bad!r}: unclear message:\n{proc.stderr}")
    for bad in ('Ac"me', "Ac\\me", "x" * 64):
        proc = generate(args, "npu", "--output", "rejected", "--vendor", bad)
        check(proc.returncode == 2 and "invalid --vendor" in proc.stderr,
              f"vendor {bad!r}: exit status {proc.returncode}, message:\n{proc.stderr}")
    proc = generate(args, "npu", "--output", "rejected", "--template", os.path.join(args.work_dir, "nowhere"))
    check(proc.returncode == 1 and "no backend template" in proc.stderr,
          f"a missing --template: exit status {proc.returncode}, message:\n{proc.stderr}")
    check(not os.path.exists(os.path.join(args.work_dir, "rejected", "npu")), "a rejected run created a folder")
    print("rejected: bad names and vendors (exit status 2), a missing template (1)")


def check_existing(args, out):
    marker = os.path.join(out, "mine.txt")
    with open(marker, "w", encoding="utf-8") as f:
        f.write("keep me\n")
    before = read_tree(out)
    proc = generate(args, "acme_npu", "--output", "out")
    check(proc.returncode == 1 and "already exists" in proc.stderr,
          f"an existing folder: exit status {proc.returncode}, message:\n{proc.stderr}")
    check(read_tree(out) == before, "the existing folder was changed")
    print("existing folder: refused and left as it was")


def check_source_lists(args):
    def sources(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        call = re.search(r"accel_add_backend\((.*?)\)", text, re.DOTALL)
        check(call, f"{path} has no accel_add_backend call")
        block = call.group(1).split("SOURCES", 1)[1]
        block = re.split(r"\b(LIBRARIES|NO_INSTALL|OUTPUT_DIR|MANIFEST_DIR|MANIFEST_NAME|NO_MANIFEST)\b", block)[0]
        return sorted(os.path.basename(s) for s in block.split())
    files = sorted(n for n in os.listdir(args.template) if n.endswith(".cc"))
    own = sources(os.path.join(args.template, "CMakeLists.txt"))
    kit = sources(os.path.join(os.path.dirname(os.path.abspath(args.template)), "CMakeLists.txt"))
    check(own == files, f"template/CMakeLists.txt builds {own}, the folder has {files}")
    check(kit == files, f"tools/backend-kit/CMakeLists.txt builds {kit}, the template has {files}")
    print(f"sources: {len(files)} files, listed alike in both CMakeLists.txt")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--generator", required=True)
    p.add_argument("--template", required=True)
    p.add_argument("--work-dir", required=True)
    args = p.parse_args()
    args.generator = os.path.abspath(args.generator)
    args.template = os.path.abspath(args.template)
    args.work_dir = os.path.abspath(args.work_dir)
    if os.path.exists(args.work_dir):
        shutil.rmtree(args.work_dir)
    os.makedirs(args.work_dir)
    try:
        out = check_renamed(args)
        check_defaults(args)
        check_rejected(args)
        check_existing(args, out)
        check_source_lists(args)
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
