#!/usr/bin/env python3
"""Tests of accel-info, run by ctest (tests/tools/CMakeLists.txt).

Usage: accel_info_test.py --accel-info PATH --schema PATH --topo-schema PATH
                          [--add-backends FILES] CHECK

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
  topo          `topo`: one DEVn row and column per device with X on the
                diagonal, one NICk column per NIC of `topo --json` (and the NICs
                are hwloc's), cells, affinity and domains as in `topo --json`;
                the host's CPU affinity is hwloc's CPU set, its NUMA affinity
                hwloc's NUMA node (N/A for several); the legends; --loader-debug
                appends the loader report; `--json topo` is `topo --json`;
                `topo -v` is a usage error
  topo-json     `topo --json` validates against docs/accel-info-topo.schema.json;
                links is square and symmetric in class with SELF (X) on the
                diagonal; domains are the node (the machine id), then
                ACCEL_TOPOLOGY_DOMAINS' levels innermost first; with the host
                deselected the document still validates and has no devices
  topo-paths    with --add-backends (fake backends of tests/backends): access
                paths of one chip are SELF to each other, paths of different
                backends HOST_STAGED, both ways, in --json and in the table
  topo-fixture  on the two-NUMA, three-NIC machine of topo_two_numa.xml
                (HWLOC_XMLFILE): the host's CPUs 0-3,8-11, NUMA N/A, and the
                NICs in PCI order with the RDMA device's name; on a synthetic
                machine without NICs (HWLOC_SYNTHETIC): no NIC column or legend
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

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


def load_json(tool, schema, env=None, args=("--json",)):
    stdout, _ = run(tool, *args, env=env)
    where = f"`accel-info {' '.join(args)}`"
    try:
        doc = json.loads(stdout)  # exactly one document: json.loads rejects trailing data
    except json.JSONDecodeError as e:
        raise Failure(f"{where} output is not one JSON document: {e}\n{stdout}")
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    check(not errors, f"{where} output does not match the schema:\n" + "\n".join(
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


# Every backend that lists devices on this machine deselected (host, and the
# CPU through PoCL and lavapipe): the sim backend lists none without a profile.
NO_DEVICES = {"ACCEL_BACKENDS": "-host,-opencl,-vulkan"}


def check_no_devices(tool, schema):
    env = NO_DEVICES
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


# --- topo -------------------------------------------------------------------------------------------------------

# The matrix cell of each link class (docs/topology.md); FABRIC is the fabric's leading letters and the count.
SHORT_OF_CLASS = {"SELF": "X", "PIX": "PIX", "PXB": "PXB", "PHB": "PHB", "NODE": "NODE", "SYS": "SYS",
                  "HOST_STAGED": "HOST", "NONE": "-", "UNKNOWN": "?"}
# The cells the legend explains, in its order.
TOPO_LEGEND = ("X", "NAME#", "PIX", "PXB", "PHB", "NODE", "SYS", "HOST", "-", "?")
TOPO_FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "topo_two_numa.xml")


def load_topo_json(tool, topo_schema, env=None):
    return load_json(tool, topo_schema, env=env, args=("topo", "--json"))


def parse_cpulist(text, what):
    """The CPUs of a Linux cpulist ("0-3,8,10-11")."""
    cpus = set()
    for item in text.strip().split(",") if text.strip() else []:
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
        check(m is not None, f"{what} {text!r} is not a Linux cpulist")
        low, high = int(m.group(1)), int(m.group(2) or m.group(1))
        check(low <= high, f"{what} {text!r} has a descending range {item!r}")
        cpus.update(range(low, high + 1))
    return cpus


def expected_short(link):
    if link["class"] == "FABRIC":
        letters = re.match(r"[A-Za-z]*", link["fabric"]).group(0).upper()
        return f"{letters or 'FAB'}{link['link_count']}"
    return SHORT_OF_CLASS.get(link["class"], "?")


def affinity_cell(value, numa=False):
    if numa:
        return str(value) if value >= 0 else "N/A"
    return value or "N/A"


def hwloc_tool(*args, env=None):
    """The stdout of hwloc tool args[0], or None when it is not installed."""
    exe = shutil.which(args[0])
    if exe is None:
        return None
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run([exe, *args[1:]], capture_output=True, text=True, env=full_env, timeout=120)
    check(proc.returncode == 0, f"`{' '.join(args)}` failed with exit code {proc.returncode}:\n{proc.stderr}")
    return proc.stdout


def machine_cpus_and_nodes(env=None):
    """(the CPUs, the NUMA nodes, the source): hwloc-calc's physical PU and NUMA indices, as the host backend
    sees the machine through hwloc; sysfs when hwloc-calc is not installed."""
    pus = hwloc_tool("hwloc-calc", "--physical-output", "--intersect", "pu", "all", env=env)
    if pus is not None:
        numa = hwloc_tool("hwloc-calc", "--physical-output", "--intersect", "numa", "all", env=env)
        return (parse_cpulist(pus, "hwloc-calc's PU list"), parse_cpulist(numa, "hwloc-calc's NUMA node list"),
                "hwloc-calc --physical-output --intersect pu|numa all")
    print("note: hwloc-calc is not installed; the CPU and NUMA sets come from /sys/devices/system")
    with open("/sys/devices/system/cpu/online", encoding="ascii") as f:
        cpus = parse_cpulist(f.read(), "/sys/devices/system/cpu/online")
    try:
        with open("/sys/devices/system/node/online", encoding="ascii") as f:
            nodes = parse_cpulist(f.read(), "/sys/devices/system/node/online")
    except OSError:
        nodes = {0}  # no NUMA support: hwloc reports one node 0
    return cpus, nodes, "/sys/devices/system/{cpu,node}/online"


def hwloc_nics():
    """The NICs lstopo reports, as (pci_bus_id, name, kind) in PCI order, by docs/topology.md's rule: one per PCI
    function with a network or OpenFabrics OS device, the RDMA device's name winning. None, with the reason
    printed, when lstopo-no-graphics is not installed."""
    xml = hwloc_tool("lstopo-no-graphics", "--of", "xml", "-")
    if xml is None:
        print("note: lstopo-no-graphics is not installed; the NIC list is not compared with hwloc's")
        return None
    by_bus = {}

    def walk(obj, pci):
        if obj.get("type") == "PCIDev":
            pci = obj.get("pci_busid")
        if obj.get("type") == "OSDev" and pci is not None and obj.get("osdev_type") in ("2", "3"):
            kind = "rdma" if obj.get("osdev_type") == "3" else "ethernet"
            if pci not in by_bus or kind == "rdma":
                by_bus[pci] = (obj.get("name"), kind)
        for child in obj.findall("object"):
            walk(child, pci)

    for top in ElementTree.fromstring(xml).findall("object"):
        walk(top, None)
    return [(bus, name, kind) for bus, (name, kind) in sorted(by_bus.items())]


def machine_id():
    """The node domain's id: docs/devices.md's machine id, as long as accel_domain_t.id holds."""
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                line = f.readline().rstrip("\n\r ")
        except OSError:
            continue
        if line:
            return line[:63]
    host = socket.gethostname()
    return (f"host:{host}" if host else "unknown-machine")[:63]


def host_topo_device(doc):
    hosts = [d for d in doc["devices"] if d["backend"] == "host"]
    check(len(hosts) == 1, f"expected one device of the host backend, got {len(hosts)}: "
          f"{json.dumps(doc['devices'], indent=2)}")
    return hosts[0]


def check_topo_doc(doc):
    """What holds for every `topo --json` document beyond its schema."""
    devices, nics, links, nic_links = doc["devices"], doc["nics"], doc["links"], doc["nic_links"]
    n, m = len(devices), len(nics)
    check([d["index"] for d in devices] == list(range(n)), "device indices are not 0..n-1 in order")
    check([k["index"] for k in nics] == list(range(m)), "NIC indices are not 0..m-1 in order")
    check([k["pci_bus_id"] for k in nics] == sorted(k["pci_bus_id"] for k in nics),
          f"NICs are not in PCI order: {[k['pci_bus_id'] for k in nics]}")
    check(len(links) == n and all(len(row) == n for row in links),
          f"links is not {n}x{n}: {[len(row) for row in links]} for {n} devices")
    check(len(nic_links) == n and all(len(row) == m for row in nic_links),
          f"nic_links is not {n}x{m}: {[len(row) for row in nic_links]}")
    for i in range(n):
        self_link = links[i][i]
        check(self_link["class"] == "SELF" and self_link["short"] == "X" and self_link["peer_access"] is True,
              f"links[{i}][{i}] is not SELF with peer access: {self_link}")
        for j in range(n):
            link = links[i][j]
            check(link["class"] == links[j][i]["class"],
                  f"links[{i}][{j}] is {link['class']} but links[{j}][{i}] is {links[j][i]['class']}")
            check(link["short"] == expected_short(link), f"links[{i}][{j}]: short {link['short']!r} for {link}")
            check(link["class"] == "FABRIC" or (link["link_count"] == 0 and link["fabric"] == ""),
                  f"links[{i}][{j}] is {link['class']} with a fabric or link count: {link}")
        for k in range(m):
            link = nic_links[i][k]
            check(link["short"] == expected_short(link), f"nic_links[{i}][{k}]: short {link['short']!r} for {link}")
        d = devices[i]
        check(-1 <= d["nearest_nic"] < m, f"devices[{i}].nearest_nic {d['nearest_nic']} with {m} NICs")
        cpus = parse_cpulist(d["local_cpus"], f"devices[{i}].local_cpus")
        check(d["local_cpu_count"] == len(cpus),
              f"devices[{i}].local_cpu_count {d['local_cpu_count']} but local_cpus {d['local_cpus']!r} has "
              f"{len(cpus)} CPUs")


def parse_topo_table(stdout):
    """The matrix of `accel-info topo`: (column labels, {row label: {column label: cell}}, the text after it).
    Cells are cut at the header's column starts, so a misaligned cell fails."""
    lines = stdout.splitlines()
    check(lines, "`accel-info topo` printed nothing")
    header = lines[0]
    found = list(re.finditer(r"(?:DEV|NIC)\d+|CPU Affinity|NUMA Affinity", header))
    check(found and re.sub(r"(?:DEV|NIC)\d+|CPU Affinity|NUMA Affinity", "", header).strip() == "",
          f"the first line is not a matrix header:\n{stdout}")
    labels = [f.group(0) for f in found]
    starts = [f.start() for f in found]
    rows = {}
    end = 1
    for end, line in enumerate(lines[1:], start=1):
        if not line:
            break
        label = line[:starts[0]].strip()
        check(re.fullmatch(r"(?:DEV|NIC)\d+", label), f"matrix line {line!r} has no DEVn/NICk label")
        check(label not in rows, f"row {label} is printed twice")
        for start in starts:
            check(len(line) <= start or line[start - 2:start] == "  ",
                  f"row {label} is not aligned with the header at column {start}:\n{header}\n{line}")
        rows[label] = {c: line[s:starts[i + 1] if i + 1 < len(starts) else None].strip()
                       for i, (c, s) in enumerate(zip(labels, starts))}
    return labels, rows, "\n".join(lines[end:]) + "\n"


def check_topo_table(stdout, doc):
    """The table of `accel-info topo` shows what `topo --json` says."""
    devices, nics = doc["devices"], doc["nics"]
    n, m = len(devices), len(nics)
    dev = [f"DEV{i}" for i in range(n)]
    nic = [f"NIC{k}" for k in range(m)]
    labels, rows, rest = parse_topo_table(stdout)
    check(labels == dev + nic + ["CPU Affinity", "NUMA Affinity"],
          f"columns {labels} for {n} devices and {m} NICs (topo --json):\n{stdout}")
    check(list(rows) == dev + nic, f"rows {list(rows)} for {n} devices and {m} NICs (topo --json):\n{stdout}")
    for i, d in enumerate(devices):
        row = rows[dev[i]]
        check(row[dev[i]] == "X", f"{dev[i]} has {row[dev[i]]!r} on the diagonal, not X:\n{stdout}")
        for j in range(n):
            check(row[dev[j]] == doc["links"][i][j]["short"],
                  f"{dev[i]}/{dev[j]} is {row[dev[j]]!r}, topo --json says {doc['links'][i][j]['short']!r}")
        for k in range(m):
            check(row[nic[k]] == doc["nic_links"][i][k]["short"],
                  f"{dev[i]}/{nic[k]} is {row[nic[k]]!r}, topo --json says {doc['nic_links'][i][k]['short']!r}")
        check(row["CPU Affinity"] == affinity_cell(d["local_cpus"]),
              f"{dev[i]} CPU Affinity {row['CPU Affinity']!r}, topo --json local_cpus {d['local_cpus']!r}")
        check(row["NUMA Affinity"] == affinity_cell(d["numa_node"], numa=True),
              f"{dev[i]} NUMA Affinity {row['NUMA Affinity']!r}, topo --json numa_node {d['numa_node']}")
    for k in range(m):
        row = rows[nic[k]]
        for j in range(n):
            check(row[dev[j]] == rows[dev[j]][nic[k]],
                  f"{nic[k]}/{dev[j]} is {row[dev[j]]!r} but {dev[j]}/{nic[k]} is {rows[dev[j]][nic[k]]!r}")
        for other in range(m):
            want = "X" if other == k else ""
            check(row[nic[other]] == want, f"{nic[k]}/{nic[other]} is {row[nic[other]]!r}, expected {want!r}")
        check(row["CPU Affinity"] == "" and row["NUMA Affinity"] == "", f"{nic[k]} row has affinity cells: {row}")

    sections = ["Legend:", "Device Legend:"] + (["NIC Legend:"] if m else []) + ["Domains (innermost first):"]
    found = re.findall(r"^(\S.*:)$", rest, re.M)
    check(found == sections, f"sections after the matrix are {found}, expected {sections}:\n{rest}")
    legend = rest.split("Device Legend:")[0]
    for short in TOPO_LEGEND:
        check(re.search(rf"^  {re.escape(short)} +=  ?\S", legend, re.M), f"the legend does not explain {short!r}")
    for cell in {rows[r][c] for r in dev for c in dev + nic}:
        check(cell in TOPO_LEGEND or re.fullmatch(r"[A-Z]+\d+", cell), f"cell {cell!r} is not in the legend")
    check(("NIC-to-NIC paths are not reported" in legend) == (m > 1),
          f"the NIC-to-NIC note should appear exactly when there are several NICs ({m}):\n{legend}")
    for i, d in enumerate(devices):
        bus = f", {d['pci_bus_id']}" if d["pci_bus_id"] else ""
        line = f"  {dev[i]}: {d['stable_id']} ({d['backend']}: {d['name']}{bus})"
        check(line in rest.splitlines(), f"the device legend lacks {line!r}:\n{rest}")
        domains = ", ".join(f"{x['level']}={x['id']}" for x in d["domains"]) or "-"
        line = f"  {dev[i]}: {domains}"
        check(line in rest.splitlines(), f"the domains lack {line!r}:\n{rest}")
    for k, x in enumerate(nics):
        details = ", ".join([v for v in (x["kind"], x["pci_bus_id"]) if v] +
                            [f"NUMA {affinity_cell(x['numa_node'], numa=True)}"])
        line = f"  {nic[k]}: {x['name']} ({details})"
        check(line in rest.splitlines(), f"the NIC legend lacks {line!r}:\n{rest}")


def check_topo(tool, topo_schema):
    doc = load_topo_json(tool, topo_schema)
    check_topo_doc(doc)
    stdout, _ = run(tool, "topo")
    check_topo_table(stdout, doc)
    _, rows, _ = parse_topo_table(stdout)
    host = host_topo_device(doc)
    host_row = rows[f"DEV{host['index']}"]

    cpus, nodes, source = machine_cpus_and_nodes()
    cell = host_row["CPU Affinity"]
    shown = set() if cell == "N/A" else parse_cpulist(cell, "the host's CPU Affinity")
    check(shown == cpus, f"the host's CPU Affinity {host_row['CPU Affinity']!r} is not the machine's CPUs "
          f"{sorted(cpus)} ({source})")
    check(host["local_cpu_count"] == len(cpus),
          f"host local_cpu_count {host['local_cpu_count']} != {len(cpus)} CPUs ({source})")
    want_numa = str(next(iter(nodes))) if len(nodes) == 1 else "N/A"  # numa_node -1: several nodes
    check(host_row["NUMA Affinity"] == want_numa,
          f"the host's NUMA Affinity {host_row['NUMA Affinity']!r}, expected {want_numa!r}: the machine's NUMA "
          f"nodes are {sorted(nodes)} ({source})")

    nics = hwloc_nics()
    if nics is not None:
        listed = [(k["pci_bus_id"], k["name"], k["kind"]) for k in doc["nics"]]
        check(listed == nics, f"topo --json lists the NICs {listed}, lstopo-no-graphics {nics}")

    # The same matrix with the loader report after it; `accel-info --json topo` is `topo --json`.
    debug, _ = run(tool, "topo", "--loader-debug")
    check(debug.startswith(stdout + "\n"), f"--loader-debug changes the matrix or does not follow it:\n{debug}")
    check(re.search(r"^\s+\[\d+\] host: loaded \(ACCEL_SUCCESS\)$", debug[len(stdout):], re.M),
          f"topo --loader-debug lists no loaded host:\n{debug}")
    check(load_json(tool, topo_schema, args=("--json", "topo")) == doc, "`--json topo` differs from `topo --json`")
    check(load_json(tool, topo_schema, args=("topo", "--json", "--loader-debug")) == doc,
          "`topo --json --loader-debug` differs from `topo --json`")
    run(tool, "topo", "--require-devices")
    _, stderr = run(tool, "topo", "-v", expect_rc=1)
    check("excludes" in stderr, f"topo -v gave no reason: {stderr!r}")
    run(tool, "topo", "--bogus", expect_rc=1)


def check_topo_json(tool, topo_schema):
    doc = load_topo_json(tool, topo_schema)
    check_topo_doc(doc)
    host_topo_device(doc)
    node_id = machine_id()
    for d in doc["devices"]:
        levels = [x["level"] for x in d["domains"]]
        check("node" in levels and set(levels[:levels.index("node")]) <= {"clique"},
              f"{d['stable_id']}: domains {levels}, expected [clique,] node first")
        node = d["domains"][levels.index("node")]
        check(node["id"] == node_id, f"{d['stable_id']}: node id {node['id']!r}, machine id {node_id!r}")

    # ACCEL_TOPOLOGY_DOMAINS adds levels outside the node, innermost first whatever their order in the variable.
    for value in ("rack=r12,zone=z1", "zone=z1,rack=r12"):
        env = {"ACCEL_TOPOLOGY_DOMAINS": value}
        with_domains = load_topo_json(tool, topo_schema, env=env)
        check_topo_doc(with_domains)
        check(len(with_domains["devices"]) == len(doc["devices"]), "ACCEL_TOPOLOGY_DOMAINS changed the devices")
        for before, after in zip(doc["devices"], with_domains["devices"]):
            want = before["domains"] + [{"level": "rack", "id": "r12"}, {"level": "zone", "id": "z1"}]
            check(after["domains"] == want, f"ACCEL_TOPOLOGY_DOMAINS={value}: {after['stable_id']} domains "
                  f"{after['domains']}, expected {want}")
        stdout, _ = run(tool, "topo", env=env)
        check_topo_table(stdout, with_domains)

    # Without the host: still a valid document, no devices, and the machine's NICs all the same.
    env = NO_DEVICES
    empty = load_topo_json(tool, topo_schema, env=env)
    check(empty["devices"] == [] and empty["links"] == [] and empty["nic_links"] == [],
          f"devices or links with the host deselected: {json.dumps(empty, indent=2)}")
    check(empty["nics"] == doc["nics"], f"the NICs depend on the backends: {empty['nics']} vs {doc['nics']}")
    stdout, _ = run(tool, "topo", env=env)
    check("No devices found" in stdout and "--loader-debug" in stdout, f"topo: no clear no-device line:\n{stdout}")
    _, stderr = run(tool, "topo", "--json", "--require-devices", env=env, expect_rc=3)
    check("no device is visible" in stderr, f"topo --require-devices gave no reason on stderr: {stderr!r}")


def check_topo_paths(tool, topo_schema, add_backends):
    check(add_backends, "topo-paths needs --add-backends")
    names = [re.sub(r"^libaccel_backend_|\.so$", "", os.path.basename(f)) for f in add_backends.split(":")]
    env = {"ACCEL_ADD_BACKEND_FILES": add_backends, "ACCEL_BACKENDS": ",".join(["host"] + names)}
    doc = load_topo_json(tool, topo_schema, env=env)
    check_topo_doc(doc)
    devices = doc["devices"]
    check(sorted(d["backend"] for d in devices) == sorted(["host"] + names),
          f"devices of {[d['backend'] for d in devices]}, expected one of each of {['host'] + names}")
    chip = [d["stable_id"].rsplit(".", 1)[0] for d in devices]  # the physical id: docs/devices.md
    check(len(set(chip)) < len(chip), f"no two access paths share a chip ({chip}): the SELF pair is not covered")
    for i, a in enumerate(devices):
        for j, b in enumerate(devices):
            want = "SELF" if chip[i] == chip[j] else "HOST_STAGED" if a["backend"] != b["backend"] else None
            got = doc["links"][i][j]["class"]
            check(want is None or got == want, f"links[{i}][{j}] ({a['stable_id']} to {b['stable_id']}) is {got}, "
                  f"expected {want}")
    stdout, _ = run(tool, "topo", env=env)
    check_topo_table(stdout, doc)


def check_topo_fixture(tool, topo_schema):
    env = {"HWLOC_XMLFILE": TOPO_FIXTURE}
    if shutil.which("hwloc-calc"):
        cpus, nodes, source = machine_cpus_and_nodes(env=env)
        check(cpus == {0, 1, 2, 3, 8, 9, 10, 11} and nodes == {0, 1},
              f"hwloc does not read the fixture as expected: CPUs {sorted(cpus)}, nodes {sorted(nodes)} ({source})")
    else:
        print("note: hwloc-calc is not installed; the fixture is not cross-checked with hwloc")
    doc = load_topo_json(tool, topo_schema, env=env)
    check_topo_doc(doc)
    host = host_topo_device(doc)
    check(host["local_cpus"] == "0-3,8-11" and host["local_cpu_count"] == 8,
          f"the host's CPUs on the fixture are {host['local_cpus']!r} ({host['local_cpu_count']}), "
          f"expected '0-3,8-11' (8)")
    check(host["numa_node"] == -1, f"the host spans NUMA nodes 0 and 1 but says numa_node {host['numa_node']}")
    want = [
        {"index": 0, "name": "eth0", "kind": "ethernet", "pci_bus_id": "0000:00:03.0", "pcie_root": "pci0000:00",
         "numa_node": 0},
        {"index": 1, "name": "mlx5_0", "kind": "rdma", "pci_bus_id": "0000:81:00.0", "pcie_root": "pci0000:80",
         "numa_node": 1},
        {"index": 2, "name": "ens1f1", "kind": "ethernet", "pci_bus_id": "0000:81:00.1", "pcie_root": "pci0000:80",
         "numa_node": 1},
    ]
    check(doc["nics"] == want, f"the fixture's NICs are {json.dumps(doc['nics'], indent=2)}, expected "
          f"{json.dumps(want, indent=2)}")
    stdout, _ = run(tool, "topo", env=env)
    check_topo_table(stdout, doc)
    _, rows, _ = parse_topo_table(stdout)
    row = rows[f"DEV{host['index']}"]
    check(row["CPU Affinity"] == "0-3,8-11" and row["NUMA Affinity"] == "N/A",
          f"the host's affinity cells on the fixture: {row}")

    # A machine without NICs (hwloc's synthetic topologies have no I/O): no NIC column, row or legend.
    env = {"HWLOC_SYNTHETIC": "node:2 core:2 pu:1"}
    doc = load_topo_json(tool, topo_schema, env=env)
    check_topo_doc(doc)
    check(doc["nics"] == [] and doc["nic_links"] == [[]], f"NICs on a synthetic machine: {json.dumps(doc, indent=2)}")
    host = host_topo_device(doc)
    check(host["local_cpus"] == "0-3" and host["numa_node"] == -1,
          f"the host on HWLOC_SYNTHETIC={env['HWLOC_SYNTHETIC']!r}: local_cpus {host['local_cpus']!r}, "
          f"numa_node {host['numa_node']}; expected '0-3' and -1")
    stdout, _ = run(tool, "topo", env=env)
    check_topo_table(stdout, doc)


CHECKS = {
    "json": check_json,
    "json-schema": check_json_schema,
    "table": check_table,
    "verbose": check_verbose,
    "loader-debug": check_loader_debug,
    "no-devices": check_no_devices,
    "bogus-option": check_bogus_option,
}
# The checks of `accel-info topo`: given the topo schema instead.
TOPO_CHECKS = {
    "topo": check_topo,
    "topo-json": check_topo_json,
    "topo-paths": check_topo_paths,
    "topo-fixture": check_topo_fixture,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accel-info", required=True, help="path of the accel-info executable")
    parser.add_argument("--schema", required=True, help="path of docs/accel-info.schema.json")
    parser.add_argument("--topo-schema", required=True, help="path of docs/accel-info-topo.schema.json")
    parser.add_argument("--add-backends", default="",
                        help="':'-separated backend libraries for topo-paths (ACCEL_ADD_BACKEND_FILES)")
    parser.add_argument("check", choices=sorted([*CHECKS, *TOPO_CHECKS]))
    args = parser.parse_args()
    schemas = []
    for path in (args.schema, args.topo_schema):
        with open(path, encoding="utf-8") as f:
            schemas.append(json.load(f))
        jsonschema.Draft202012Validator.check_schema(schemas[-1])
    schema, topo_schema = schemas
    try:
        if args.check == "topo-paths":
            check_topo_paths(args.accel_info, topo_schema, args.add_backends)
        elif args.check in TOPO_CHECKS:
            TOPO_CHECKS[args.check](args.accel_info, topo_schema)
        else:
            CHECKS[args.check](args.accel_info, schema)
    except Failure as e:
        print(f"FAIL {args.check}: {e}", file=sys.stderr)
        return 1
    print(f"PASS {args.check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
