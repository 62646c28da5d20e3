#!/usr/bin/env python3
"""Checks what accel-info shows of the Vulkan backend against the Vulkan tools
(tests/vulkan/CMakeLists.txt runs each check as a ctest):

  compare   every Vulkan access path of `accel-info --json` is a device of
            `vulkaninfo --summary` (name, UUID, kind) with the device-local
            heaps, limits and compute units that `vulkaninfo` shows (for a CPU
            device, whose compute units Vulkan does not report, the CPUs this
            process may use: what the backend counts, README.md)
  grouping  with the host backend too, lavapipe is an access path of the
            host CPU's physical device
  absent    no driver (VK_DRIVER_FILES at an empty folder or a missing file)
            or no loader (ACCEL_VULKAN_LOADER at a missing file): zero Vulkan
            devices, and the loader entry says why
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from backend_check import run_process  # noqa: E402

SKIP = 77


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(cmd, env_extra=None, check=True):
    env = dict(os.environ)
    env.update(env_extra or {})
    print("+ " + " ".join(f"{k}={v}" for k, v in (env_extra or {}).items()) + " " + " ".join(cmd), flush=True)
    p = run_process(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=300)
    if check and p.returncode != 0:
        fail(f"{cmd[0]} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p


def accel_info_json(args, env_extra):
    p = run([args.accel_info, "--json", "--loader-debug"], env_extra)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        fail(f"accel-info --json printed no JSON ({e}): {p.stdout[:500]}")


def vulkan_paths(doc):
    for physical in doc["physical_devices"]:
        for path in physical["access_paths"]:
            if path["backend"] == "vulkan":
                yield physical, path


def blocks(text, header):
    """Splits vulkaninfo's text at its 'GPU<n>:' lines after `header`; {n: block text}."""
    at = text.find(header)
    if at < 0:
        fail(f"vulkaninfo printed no '{header}' section")
    parts = re.split(r"^GPU(\d+):\s*$", text[at:], flags=re.M)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def field(block, name):
    m = re.search(r"^\s*" + re.escape(name) + r"\s*=\s*(.+?)\s*$", block, flags=re.M)
    return m.group(1) if m else None


def number(block, name):
    v = field(block, name)
    if v is None:
        return None
    return int(v.split()[0], 0)


def device_local_bytes(block):
    total = 0
    heaps = re.split(r"^\s*memoryHeaps\[\d+\]:\s*$", block, flags=re.M)[1:]
    for heap in heaps:
        heap = re.split(r"^\s*memoryTypes", heap, flags=re.M)[0]
        size = number(heap, "size")
        if size is not None and "MEMORY_HEAP_DEVICE_LOCAL_BIT" in heap:
            total += size
    return total


def compare(args):
    if not args.vulkaninfo:
        print("SKIP: vulkaninfo not found (vulkan-tools)")
        sys.exit(SKIP)
    doc = accel_info_json(args, {"ACCEL_BACKENDS": "vulkan"})
    paths = list(vulkan_paths(doc))
    if not paths:
        fail(f"accel-info shows no Vulkan device; loader: {doc['loader']}")
    summary = blocks(run([args.vulkaninfo, "--summary"]).stdout, "Devices:")
    full = blocks(run([args.vulkaninfo]).stdout, "Device Properties and Extensions:")
    if len(summary) != len(full):
        fail(f"vulkaninfo --summary lists {len(summary)} devices, vulkaninfo {len(full)}")
    for physical, path in paths:
        caps = path["capabilities"]
        match = [n for n, b in summary.items()
                 if field(b, "deviceName") == path["name"] and field(b, "deviceUUID") == caps["uuid"]]
        if len(match) != 1:
            fail(f"'{path['name']}' (uuid {caps['uuid']}) is {len(match)} devices of vulkaninfo --summary")
        n = match[0]
        s, b = summary[n], full[n]
        device_type = field(s, "deviceType")
        want_kind = "cpu" if device_type == "PHYSICAL_DEVICE_TYPE_CPU" else "gpu"
        checks = [
            ("kind", caps["kind"], want_kind),
            ("memory_total", path["memory_total"], device_local_bytes(b)),
            ("max_buffer_range", caps["max_buffer_range"],
             min(number(b, "maxStorageBufferRange"), caps["max_allocation"])),
            ("local_memory_size", caps["local_memory_size"], number(b, "maxComputeSharedMemorySize")),
            ("max_work_group_size", caps["max_work_group_size"], number(b, "maxComputeWorkGroupInvocations")),
            ("max_allocation", caps["max_allocation"],
             min(number(b, "maxMemoryAllocationSize"), device_local_bytes(b))),
        ]
        if "subgroups" in caps["features"]:
            checks.append(("subgroup_size", caps["subgroup_size"], number(b, "subgroupSize")))
        # Compute units: Vulkan reports none for a CPU device; the backend counts the CPUs this process may use.
        if want_kind == "cpu":
            checks.append(("compute_units", path["compute_units"], len(os.sched_getaffinity(0))))
            if "uuid-unique" in caps["flags"]:
                fail(f"'{path['name']}': a CPU device's UUID is marked unique")
        else:
            units = number(b, "shaderSMCount") or number(b, "activeComputeUnitCount") or 1
            checks.append(("compute_units", path["compute_units"], units))
        for name, got, want in checks:
            if got != want:
                fail(f"'{path['name']}' (vulkaninfo GPU{n}): accel-info {name} {got}, vulkaninfo says {want}")
            print(f"ok: GPU{n} {name} {got}")
        if path["name"] != physical["name"] and len(physical["access_paths"]) == 1:
            fail(f"a physical device of one access path is named '{physical['name']}', its path '{path['name']}'")
    print(f"PASS: {len(paths)} Vulkan access path(s) match vulkaninfo")


def grouping(args):
    doc = accel_info_json(args, {"ACCEL_BACKENDS": "host,vulkan"})
    loaded = {e["backend"] for e in doc["loader"] if e["state"] == "loaded"}
    if "host" not in loaded:
        print("SKIP: the host backend is not built")
        sys.exit(SKIP)
    cpu_paths = [(p, a) for p, a in vulkan_paths(doc) if a["capabilities"]["kind"] == "cpu"]
    if not cpu_paths:
        fail("no Vulkan CPU device (lavapipe) in accel-info's output")
    for physical, path in cpu_paths:
        backends = sorted(a["backend"] for a in physical["access_paths"])
        if "host" not in backends:
            fail(f"'{path['name']}' is physical device {physical['stable_id']} with paths {backends}, not the host's")
        if not physical["stable_id"].startswith("cpu-") or path["stable_id"] != physical["stable_id"] + ".vulkan":
            fail(f"ids: physical {physical['stable_id']}, path {path['stable_id']}")
        host = [a for a in physical["access_paths"] if a["backend"] == "host"][0]
        if physical["memory_total"] < path["memory_total"] or physical["compute_units"] != host["compute_units"]:
            fail(f"the CPU is not counted with the host's figures: {physical}")
        print(f"ok: {path['stable_id']} is an access path of {physical['stable_id']} ({', '.join(backends)})")
    print("PASS: lavapipe is grouped with the host CPU")


def absent(args):
    os.makedirs(args.scratch, exist_ok=True)
    empty = os.path.join(args.scratch, "no-drivers")
    os.makedirs(empty, exist_ok=True)
    for f in os.listdir(empty):
        os.remove(os.path.join(empty, f))
    cases = [
        ({"VK_DRIVER_FILES": empty}, "vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER"),
        ({"VK_DRIVER_FILES": os.path.join(args.scratch, "missing_icd.json")},
         "vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER"),
        ({"ACCEL_VULKAN_LOADER": os.path.join(args.scratch, "missing", "libvulkan.so.1")},
         "cannot load the Vulkan loader " + os.path.join(args.scratch, "missing", "libvulkan.so.1")),
    ]
    for env, says in cases:
        env = dict(env, ACCEL_BACKENDS="vulkan")
        doc = accel_info_json(args, env)
        if list(vulkan_paths(doc)):
            fail(f"{env}: accel-info shows Vulkan devices")
        entries = [e for e in doc["loader"] if e["backend"] == "vulkan"]
        if len(entries) != 1:
            fail(f"{env}: {len(entries)} loader entries for vulkan")
        e = entries[0]
        if e["device_count"] != 0 or e["status"] != "ACCEL_ERROR_BACKEND_UNAVAILABLE" or says not in e["reason"]:
            fail(f"{env}: loader entry {e}, expected BACKEND_UNAVAILABLE, no devices and a reason with '{says}'")
        text = run([args.accel_info, "--loader-debug"], env).stdout
        if says not in text:
            fail(f"{env}: accel-info --loader-debug does not show the reason '{says}':\n{text}")
        print(f"ok: {env}: {e['reason']}")
    print(f"PASS: {len(cases)} missing drivers or loaders give zero devices and the reason")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accel-info", required=True)
    parser.add_argument("--vulkaninfo", default="")
    parser.add_argument("--lavapipe", required=True, help="lavapipe's driver manifest")
    parser.add_argument("--scratch", required=True, help="a folder the test may write")
    parser.add_argument("check", choices=["compare", "grouping", "absent"])
    args = parser.parse_args()
    os.environ["VK_DRIVER_FILES"] = args.lavapipe
    os.environ.pop("ACCEL_VULKAN_LOADER", None)
    {"compare": compare, "grouping": grouping, "absent": absent}[args.check](args)


if __name__ == "__main__":
    main()
