#!/usr/bin/env python3
"""Tests of accel-info, run by ctest (tests/tools/CMakeLists.txt).

Usage: accel_info_test.py --accel-info PATH --schema PATH CHECK

Each CHECK is one ctest test:
  json          --json validates against docs/accel-info.schema.json, and the
                host CPU's figures match what this machine reports
  json-schema   --json validates (no device expected; for builds without host)
  table         the default table has one line per physical device
  verbose       -v prints every access path and every capability key
  loader-debug  --loader-debug lists the host backend as loaded
  no-devices    with the host deselected: exit 0 and a clear line, exit 3 with
                --require-devices, and a --json document that still validates
  bogus-option  an unknown option is a usage error: exit 1
"""

import argparse
import json
import os
import re
import subprocess
import sys

import jsonschema

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def run(tool, *args, env=None, expect_rc=0):
    """Runs accel-info and returns (stdout, stderr); fails on a wrong exit code
    or any sanitizer report."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run([tool, *args], capture_output=True, text=True, env=full_env, timeout=120)
    where = f"`accel-info {' '.join(args)}`"
    for marker in SANITIZER_MARKERS:
        check(marker not in proc.stderr, f"{where}: sanitizer report on stderr:\n{proc.stderr}")
    check(proc.returncode == expect_rc,
          f"{where}: exit code {proc.returncode}, expected {expect_rc}\n"
          f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
    return proc.stdout, proc.stderr


def load_json(tool, schema, env=None):
    stdout, _ = run(tool, "--json", env=env)
    try:
        doc = json.loads(stdout)  # exactly one document: json.loads rejects trailing data
    except json.JSONDecodeError as e:
        raise Failure(f"--json output is not one JSON document: {e}\n{stdout}")
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    check(not errors, "--json output does not match the schema:\n" + "\n".join(
        f"  at /{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors))
    return doc


def mem_total_bytes():
    with open("/proc/meminfo", encoding="ascii") as f:
        for line in f:
            m = re.match(r"MemTotal:\s+(\d+)\s+kB", line)
            if m:
                return int(m.group(1)) * 1024
    raise Failure("/proc/meminfo has no MemTotal line")


def host_physical_device(doc):
    hosts = [d for d in doc["physical_devices"]
             if d["kind"] == "cpu" and any(p["backend"] == "host" for p in d["access_paths"])]
    check(len(hosts) == 1,
          f"expected exactly one cpu physical device reached through the host backend, got {len(hosts)}: "
          f"{json.dumps(doc['physical_devices'], indent=2)}\nloader: {json.dumps(doc['loader'], indent=2)}")
    return hosts[0]


def check_json(tool, schema):
    doc = load_json(tool, schema)
    check([d["index"] for d in doc["physical_devices"]] == list(range(len(doc["physical_devices"]))),
          "physical device indices are not 0..n-1 in order")
    check(any(b["name"] == "host" for b in doc["backends"]), f"no host backend in {doc['backends']}")
    host = host_physical_device(doc)

    online = os.sysconf("SC_NPROCESSORS_ONLN")
    check(online == os.cpu_count(), f"os.cpu_count() {os.cpu_count()} != sysconf online CPUs {online}")
    check(host["compute_units"] == online,
          f"host CPU compute_units {host['compute_units']} != online CPUs {online} "
          f"(os.cpu_count(); affinity allows {len(os.sched_getaffinity(0))})")

    mem = mem_total_bytes()
    check(host["memory_total"] == mem,
          f"host CPU memory_total {host['memory_total']} != MemTotal {mem} bytes (/proc/meminfo)")
    path = next(p for p in host["access_paths"] if p["backend"] == "host")
    check(path["memory_total"] == mem,
          f"host access path memory_total {path['memory_total']} != MemTotal {mem} bytes")
    caps = path["capabilities"]
    check(caps["memory_total"] == path["memory_total"], "capabilities.memory_total != access path memory_total")
    check(caps["compute_units"] == path["compute_units"], "capabilities.compute_units != access path compute_units")
    check(caps["kind"] == "cpu", f"capabilities.kind is {caps['kind']!r}, expected 'cpu'")
    check(caps["backend_name"] == "host", f"capabilities.backend_name is {caps['backend_name']!r}")
    check(caps["physical_device_id"] == host["stable_id"],
          f"capabilities.physical_device_id {caps['physical_device_id']!r} != physical stable_id "
          f"{host['stable_id']!r}")
    check("native-host" in caps["kernel_formats"], f"host kernel_formats {caps['kernel_formats']} lack native-host")
    check(host["simulated"] is False, "the host CPU is flagged simulated")

    loaded = [e for e in doc["loader"] if e["backend"] == "host" and e["state"] == "loaded"]
    check(len(loaded) == 1, f"loader array has no loaded host entry: {doc['loader']}")
    check(loaded[0]["status"] == "ACCEL_SUCCESS" and loaded[0]["negotiated_abi_version"] is not None,
          f"loaded host entry is inconsistent: {loaded[0]}")


def check_json_schema(tool, schema):
    load_json(tool, schema)


def check_table(tool, schema):
    doc = load_json(tool, schema)
    stdout, _ = run(tool)
    lines = stdout.splitlines()
    check(lines and lines[0].split()[:3] == ["IDX", "STABLE", "ID"], f"table has no header line:\n{stdout}")
    rows = [line for line in lines[1:] if re.match(r"^\d+\s", line)]
    check(len(rows) == len(doc["physical_devices"]),
          f"table has {len(rows)} device lines, --json has {len(doc['physical_devices'])} physical devices:\n"
          f"{stdout}")
    for row, device in zip(rows, doc["physical_devices"]):
        check(device["stable_id"] in row, f"row {row!r} lacks stable id {device['stable_id']}")
        check(re.search(r"\d+(\.\d)? (B|KiB|MiB|GiB|TiB|PiB)", row), f"row {row!r} lacks a human memory size")
        for path in device["access_paths"]:
            check(path["backend"] in row, f"row {row!r} lacks backend {path['backend']}")


def check_verbose(tool, schema):
    doc = load_json(tool, schema)
    stdout, _ = run(tool, "-v")
    for device in doc["physical_devices"]:
        check(f"Physical device {device['index']}:" in stdout, f"-v lacks physical device {device['index']}")
        for path in device["access_paths"]:
            check(path["stable_id"] in stdout, f"-v lacks access path {path['stable_id']}")
            for key in path["capabilities"]:
                check(re.search(rf"^\s+{re.escape(key)}\s+: ", stdout, re.M), f"-v lacks capability key {key}")
    check(stdout.count("Access path ") == sum(len(d["access_paths"]) for d in doc["physical_devices"]),
          "-v prints a different number of access paths than --json")


def check_loader_debug(tool, schema):
    stdout, _ = run(tool, "--loader-debug")
    m = re.search(r"^\s+\[\d+\] host: (\w+) \((ACCEL_[A-Z_]+)\)$", stdout, re.M)
    check(m is not None, f"--loader-debug lists no host entry:\n{stdout}")
    check(m.group(1) == "loaded" and m.group(2) == "ACCEL_SUCCESS",
          f"host is {m.group(1)} ({m.group(2)}), expected loaded (ACCEL_SUCCESS):\n{stdout}")
    block = stdout[m.end():].split("\n  [", 1)[0]
    for field in ("manifest", "library", "abi", "devices", "reason"):
        check(re.search(rf"^\s+{field}\s+: ", block, re.M), f"host entry lacks '{field}':\n{block}")
    check(re.search(r"abi\s+: negotiated \d+\.\d+, backend \d+\.\d+", block), f"host entry lacks ABI versions:\n{block}")
    check(stdout.splitlines()[0].startswith("IDX"), "--loader-debug does not print the table first")
    # The JSON form carries the same report.
    doc = load_json(tool, schema)
    check(any(e["backend"] == "host" and e["state"] == "loaded" for e in doc["loader"]),
          f"JSON loader array disagrees: {doc['loader']}")


def check_no_devices(tool, schema):
    env = {"ACCEL_BACKENDS": "-host"}
    doc = load_json(tool, schema, env=env)
    check(doc["physical_devices"] == [], f"devices visible with the host deselected: {doc['physical_devices']}")
    stdout, _ = run(tool, env=env)
    check("No devices found" in stdout and "--loader-debug" in stdout, f"no clear no-device line:\n{stdout}")
    _, stderr = run(tool, "--require-devices", env=env, expect_rc=3)
    check("no device is visible" in stderr, f"--require-devices gave no reason on stderr: {stderr!r}")
    stdout, _ = run(tool, "--loader-debug", env=env)
    check(re.search(r"\[\d+\] host: skipped", stdout), f"--loader-debug does not show host skipped:\n{stdout}")


def check_bogus_option(tool, schema):
    _, stderr = run(tool, "--bogus", expect_rc=1)
    check("--bogus" in stderr, f"the usage error does not name the option: {stderr!r}")
    run(tool, "--json", "-v", expect_rc=1)
    stdout, _ = run(tool, "--version")
    check(stdout.startswith("accel-info "), f"--version prints {stdout!r}")


CHECKS = {
    "json": check_json,
    "json-schema": check_json_schema,
    "table": check_table,
    "verbose": check_verbose,
    "loader-debug": check_loader_debug,
    "no-devices": check_no_devices,
    "bogus-option": check_bogus_option,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accel-info", required=True, help="path of the accel-info executable")
    parser.add_argument("--schema", required=True, help="path of docs/accel-info.schema.json")
    parser.add_argument("check", choices=sorted(CHECKS))
    args = parser.parse_args()
    with open(args.schema, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    try:
        CHECKS[args.check](args.accel_info, schema)
    except Failure as e:
        print(f"FAIL {args.check}: {e}", file=sys.stderr)
        return 1
    print(f"PASS {args.check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
