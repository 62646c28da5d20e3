#!/usr/bin/env python3
"""Drives accel-conformance for ctest (docs/conformance.md) and checks what it
wrote: the exit code, the JSON certificate and the JUnit XML.

  certify     the backend passes the profile: rc 0, a complete certificate,
              zero skips and expected failures in `execution`
  faulty      the backend fails exactly the given stable ids (rc 1), and the
              output holds each --expect-message text (what to fix)
  rejects     an expectations file with an `unsupported` entry for a
              capability the device has is refused with a clear message
  xfails      expected failures: not run by default, an unexpected pass fails
              under --verify-xfails, a real failure is confirmed
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from backend_check import run_process  # noqa: E402

PROFILES = ["abi", "query", "memory", "streams", "execution", "multi-device"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(args, runner, extra):
    cmd = [runner, "--backend", args.backend] + extra
    print("+ " + " ".join(cmd), flush=True)
    p = run_process(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    # Keep the log short: the summary and failures, not every OK line.
    for line in p.stdout.splitlines():
        if not line.startswith("[       OK ]") and not line.startswith("[ RUN      ]"):
            print(line)
    return p


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def certify(args, tmp):
    cert_path = os.path.join(tmp, "certificate.json")
    junit_path = os.path.join(tmp, "results.xml")
    extra = ["--profile", args.profile, "--json", cert_path, "--junit", junit_path]
    if args.expectations:
        extra += ["--expectations", args.expectations]
    p = run(args, args.runner, extra)
    if p.returncode != 0:
        fail(f"accel-conformance exited {p.returncode}, expected 0")
    cert = json.load(open(cert_path))
    for key in ["suite_version", "abi_version", "backend", "runtime_versions", "devices", "profile_passed", "counts"]:
        if key not in cert:
            fail(f"the certificate lacks '{key}'")
    if cert["result"] != "pass" or cert["profile_passed"] != args.profile:
        fail(f"certificate result {cert['result']}, profile passed {cert['profile_passed']}, wanted {args.profile}")
    if not re.fullmatch(r"1\.\d+", cert["abi_version"]):
        fail(f"abi_version {cert['abi_version']!r}")
    backend = cert["backend"]
    if backend["sha256"] != sha256(backend["library"]):
        fail("the certificate's library sha256 is not the library's")
    if args.expectations:
        if cert["expectations"]["sha256"] != sha256(args.expectations):
            fail("the certificate's expectations sha256 is not the file's")
    if args.keep:
        os.makedirs(os.path.dirname(args.keep), exist_ok=True)
        shutil.copyfile(cert_path, args.keep)
    if not cert["devices"] or not all(d["stable_id"] for d in cert["devices"]):
        fail("the certificate names no devices, or a device without a stable id")
    if PROFILES.index(args.profile) >= PROFILES.index("execution"):
        e = cert["counts"]["execution"]
        if args.no_kernels:
            # A device that reports no kernel formats skips all of execution, saying so.
            if e["passed"] or not e["skipped"]:
                fail(f"a device without kernel formats ran execution tests: {e}")
        elif e["passed"] == 0 or e["skipped"] or e["unsupported"] or e["expected_failure"]:
            fail(f"execution must pass with zero skips and zero expected failures: {e}")
    for name, c in cert["counts"].items():
        if c["failed"]:
            fail(f"profile {name}: {c['failed']} failed")
    if args.max_skips is not None:
        skipped = sum(c["skipped"] + c["unsupported"] for c in cert["counts"].values())
        if skipped > args.max_skips:
            fail(f"{skipped} skips, at most {args.max_skips} allowed: {cert['skipped_tests']}")
    for s in cert["skipped_tests"]:
        if not s["reason"].startswith("capability absent: ") and not s["reason"].startswith("unsupported ("):
            fail(f"a skip without an absent capability: {s}")
    # The JUnit XML holds one testcase per result counted.
    root = ET.parse(junit_path).getroot()
    cases = root.findall(".//testcase")
    total = sum(sum(c.values()) for c in cert["counts"].values())
    if len(cases) != total:
        fail(f"JUnit has {len(cases)} test cases, the certificate counts {total}")
    print(f"PASS: {backend['name']} {backend['version']} certified at {args.profile} "
          f"({total} tests, {len(cert['devices'])} devices)")


def faulty(args, tmp):
    cert_path = os.path.join(tmp, "certificate.json")
    p = run(args, args.runner, ["--profile", args.profile, "--json", cert_path])
    if p.returncode != 1:
        fail(f"accel-conformance exited {p.returncode}, expected 1 (tests failed)")
    cert = json.load(open(cert_path))
    failed = {t.split("/")[0] for t in cert["failed_tests"]}
    want = set(args.expect_fail.split(","))
    if failed != want:
        fail(f"failed {sorted(failed)}, expected exactly {sorted(want)} "
             f"(missing {sorted(want - failed)}, unexpected {sorted(failed - want)})")
    for text in args.expect_message or []:
        if text not in p.stdout:
            fail(f"no failure message says {text!r}")
    said = f", saying {len(args.expect_message)} expected texts" if args.expect_message else ""
    print(f"PASS: the faulty backend fails exactly {sorted(want)}{said}")


def rejects(args, tmp):
    path = os.path.join(tmp, "expectations.json")
    cases = [
        ({"unsupported": [{"test": "memory.map.*", "capability": args.present_capability,
                           "reason": "claims the feature is absent"}]},
         ["unsupported[0]", args.present_capability, "reports it present"]),
        ({"unsupported": [{"test": "memory.map.*", "capability": "feature:warp-drive", "reason": "x"}]},
         ["unknown capability 'feature:warp-drive'"]),
        ({"unsupported": [{"test": "memory.nothing.here", "capability": "feature:peer-access", "reason": "x"}]},
         ["names no test"]),
        ({"expected-failure": [{"test": "memory.fill.patterns"}]}, ["expected-failure[0]", "'reason'"]),
        ({"unsupported": [], "skip": []}, ["unknown member 'skip'"]),
    ]
    for doc, needles in cases:
        with open(path, "w") as f:
            json.dump(doc, f)
        p = run(args, args.runner, ["--profile", "abi", "--expectations", path])
        if p.returncode != 2:
            fail(f"{doc}: exited {p.returncode}, expected 2 (rejected)")
        for n in needles + [path]:
            if n not in p.stdout:
                fail(f"{doc}: the message does not say {n!r}")
    print(f"PASS: {len(cases)} bad expectations files rejected, each with its reason")


def xfails(args, tmp):
    path = os.path.join(tmp, "expectations.json")
    cert_path = os.path.join(tmp, "certificate.json")
    with open(path, "w") as f:
        json.dump({"expected-failure": [{"test": "memory.fill.patterns", "reason": "pretend issue 99"}]}, f)
    # Not verified: not run, counted as an expected failure, the run passes.
    p = run(args, args.runner, ["--profile", "memory", "--expectations", path, "--json", cert_path])
    cert = json.load(open(cert_path))
    if p.returncode != 0 or cert["counts"]["memory"]["expected_failure"] != 1:
        fail(f"without --verify-xfails: rc {p.returncode}, counts {cert['counts']['memory']}")
    # Verified: it runs, passes, and that is a failure.
    p = run(args, args.runner, ["--profile", "memory", "--expectations", path, "--verify-xfails", "--json", cert_path])
    cert = json.load(open(cert_path))
    failed = {t.split("/")[0] for t in cert["failed_tests"]}
    if p.returncode != 1 or failed != {"memory.fill.patterns"} or "unexpected pass" not in p.stdout:
        fail(f"--verify-xfails on a passing test: rc {p.returncode}, failed {failed}")
    # A real failure listed as expected is confirmed under --verify-xfails.
    if args.failing_backend:
        with open(path, "w") as f:
            json.dump({"expected-failure": [{"test": args.failing_test, "reason": "known fault"}]}, f)
        saved = args.backend
        args.backend = args.failing_backend
        p = run(args, args.runner, ["--profile", "streams", "--expectations", path, "--verify-xfails", "--json", cert_path])
        args.backend = saved
        cert = json.load(open(cert_path))
        if p.returncode != 0 or cert["counts"]["streams"]["expected_failure"] != 1:
            fail(f"a confirmed expected failure: rc {p.returncode}, counts {cert['counts']['streams']}")
    print("PASS: expected failures are skipped, verified, and an unexpected pass fails")


def cli(args, tmp):
    # Usage errors and a backend that does not load exit 2 with a message.
    checks = [
        ([args.runner, "--backend", args.backend, "--profile", "everything"], "is not one of abi, query"),
        ([args.runner, "--profile", "abi"], "--backend is required"),
        ([args.runner, "--backend", os.path.join(tmp, "missing.so")], "did not load"),
        ([args.runner, "--backend", args.backend, "--device", "99"], "names no device"),
        ([args.runner, "--backend", args.backend, "--expectations", os.path.join(tmp, "none.json")], "cannot be read"),
    ]
    for cmd, needle in checks:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        if p.returncode != 2 or needle not in p.stdout:
            fail(f"{cmd[1:]}: rc {p.returncode} (want 2), output {p.stdout.strip()[:300]!r} (want {needle!r})")
    # The certificate is written whole or not at all: a --json that cannot be written is exit 2 with the reason
    # (it printed "result: pass" and exited 0); a --filter that is not UTF-8 is kept, as U+FFFD, in a certificate
    # that parses (the JSON writer threw after the run); one device named twice is tested once.
    one = ["--profile", "abi", "--filter", "abi.struct_size.capabilities_larger_and_smaller*"]
    cmd = [args.runner, "--backend", args.backend, *one, "--json", "/nonexistent-dir/c.json"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    if p.returncode != 2 or "cannot write --json /nonexistent-dir/c.json" not in p.stdout:
        fail(f"an unwritable --json: rc {p.returncode} (want 2), output {p.stdout.strip()[-300:]!r}")
    cert_path = os.path.join(tmp, "twice.json")
    cmd = [args.runner.encode(), b"--backend", args.backend.encode(), b"--profile", b"abi", b"--filter",
           b"abi.struct_size.capabilities_larger_and_smaller*:\xff", b"--device", b"0", b"--device", b"0",
           b"--json", cert_path.encode()]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    if p.returncode != 0:
        fail(f"{cmd[1:]}: rc {p.returncode}, output {p.stdout.decode(errors='replace')[-300:]!r}")
    with open(cert_path, encoding="utf-8") as f:
        cert = json.load(f)
    if "\ufffd" not in cert.get("filter", ""):
        fail(f"the filter's byte 0xff is not U+FFFD in the certificate: {cert.get('filter')!r}")
    if len(cert["devices"]) != 1 or sum(sum(c.values()) for c in cert["counts"].values()) != 1:
        fail(f"device 0 named twice: {len(cert['devices'])} devices, counts {cert['counts']}")
    p = subprocess.run([args.runner, "--list"], stdout=subprocess.PIPE, text=True, timeout=60)
    ids = p.stdout.split()
    if p.returncode != 0 or len(ids) != len(set(ids)) or not all(re.fullmatch(r"[a-z-]+\.[a-z_]+\.[a-z0-9_]+", i) for i in ids):
        fail(f"--list: rc {p.returncode}, ids {ids[:5]}...")
    for prefix in PROFILES:
        if not any(i.startswith(prefix + ".") for i in ids):
            fail(f"--list names no test of profile {prefix}")
    print(f"PASS: usage errors exit 2 with their reason; the certificate written whole; --list gives {len(ids)} "
          "unique stable ids")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["certify", "faulty", "rejects", "xfails", "cli"])
    ap.add_argument("--runner", required=True)
    ap.add_argument("--backend", required=True)
    ap.add_argument("--profile", default="streams")
    ap.add_argument("--expectations")
    ap.add_argument("--expect-fail")
    ap.add_argument("--expect-message", action="append",
                    help="faulty: a text the runner's output must hold (repeatable)")
    ap.add_argument("--max-skips", type=int)
    ap.add_argument("--present-capability", default="feature:host-mapped-memory")
    ap.add_argument("--failing-backend")
    ap.add_argument("--failing-test")
    ap.add_argument("--keep", help="certify: copy the certificate here")
    ap.add_argument("--no-kernels", action="store_true", help="certify: the devices report no kernel formats")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="accel-conformance-") as tmp:
        {"certify": certify, "faulty": faulty, "rejects": rejects, "xfails": xfails, "cli": cli}[args.mode](args, tmp)


if __name__ == "__main__":
    main()
