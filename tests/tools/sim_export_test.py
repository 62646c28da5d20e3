#!/usr/bin/env python3
"""Tests of the topology description, the sim profiles through accel-info, and
the exports for Kubernetes and Ray, run by ctest (tests/tools/CMakeLists.txt).

Usage: sim_export_test.py --accel-info PATH --topology-schema PATH
                          --topo-schema PATH --profiles DIR CHECK

Each CHECK is one ctest test:
  profiles     `accel-info profiles` and `accel-info --help` name every shipped
               profile; an unknown --sim-profile is reported in the loader report
  schema       every shipped profile, and the "topology" member of
               `accel-info --json` for each of them and for this machine,
               validate against docs/topology.schema.json
  topo         `accel-info --sim-profile P topo` (and its --json) for every
               shipped profile: one DEV row per simulated device
  round-trip   `accel-info --json` of a node, used as ACCEL_SIM_PROFILE,
               reproduces the same devices, links, NICs and domains: for every
               shipped profile, and for this machine's host CPU (with
               ACCEL_TOPOLOGY_DOMAINS levels)
  nfd          `export --format nfd` follows the NFD features.d line syntax and
               the Kubernetes label rules, with the H100 node's figures
  dra          `export --format dra` is a resource.k8s.io/v1 ResourceSlice:
               device names are DNS labels, at most 32 attributes and
               capacities per device, qualified attribute names, one typed value
               each, strings of at most 64 characters, memory as a quantity;
               long names from a profile are cut to fit
  ray          `export --format ray` is one `ray start` command line whose
               --resources and --labels parse as JSON and follow Ray's resource
               and label syntax, with a unit-instance resource per device kind
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import jsonschema

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
PROFILES = ["a100-pcie-4", "h100-sxm-8", "mi300x-8", "mixed-vendor", "tpu-2x2"]
DEVICE_COUNT = {"a100-pcie-4": 4, "h100-sxm-8": 8, "mi300x-8": 8, "mixed-vendor": 4, "tpu-2x2": 4}
# Variables that would change what accel-info sees; each check sets what it needs.
CLEARED = ["ACCEL_BACKEND_FILES", "ACCEL_ADD_BACKEND_FILES", "ACCEL_VISIBLE_DEVICES", "ACCEL_LOG", "ACCEL_SIM_PROFILE",
           "ACCEL_SIM_FAULTS", "ACCEL_TOPOLOGY_DOMAINS", "HWLOC_XMLFILE", "HWLOC_SYNTHETIC", "HWLOC_FSROOT"]

# Kubernetes label value / name part: at most 63, alphanumeric at both ends, [-_.A-Za-z0-9] between.
LABEL_PART = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
QUANTITY = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?[0-9]+))?$")


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def run(tool, *args, env=None, expect_rc=0):
    full_env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    full_env["ACCEL_BACKENDS"] = "sim"
    if env:
        full_env.update(env)
    proc = subprocess.run([tool, *args], capture_output=True, text=True, env=full_env, timeout=120)
    where = f"`accel-info {' '.join(args)}` (env {env or {}})"
    for marker in SANITIZER_MARKERS:
        check(marker not in proc.stderr, f"{where}: sanitizer report on stderr:\n{proc.stderr}")
    check(proc.returncode == expect_rc,
          f"{where}: exit code {proc.returncode}, expected {expect_rc}\n--- stdout\n{proc.stdout}\n--- stderr\n"
          f"{proc.stderr}")
    return proc.stdout


def validate(doc, schema, what):
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    check(not errors, f"{what} does not match the schema:\n" + "\n".join(
        f"  at /{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors))


def info_json(tool, profile=None, env=None):
    args = ["--json"] if profile is None else ["--sim-profile", profile, "--json"]
    return json.loads(run(tool, *args, env=env))


def check_profiles(tool, args):
    listing = run(tool, "profiles")
    helptext = run(tool, "--help")
    for name in PROFILES:
        check(re.search(rf"^\s+{re.escape(name)}\s+\S", listing, re.M), f"`accel-info profiles` does not list {name}:\n"
              f"{listing}")
        check(name in helptext, f"`accel-info --help` does not name {name}")
    doc = info_json(tool, "no-such-profile")
    sim = [e for e in doc["loader"] if e["backend"] == "sim"]
    check(sim and "no shipped profile 'no-such-profile'" in sim[0]["reason"], f"loader report: {sim}")
    check(not doc["physical_devices"], "an unknown profile simulates nothing")


def check_schema(tool, args):
    schema = json.load(open(args.topology_schema))
    for name in PROFILES:
        validate(json.load(open(os.path.join(args.profiles, name + ".json"))), schema, f"profile {name}")
        validate(info_json(tool, name)["topology"], schema, f"the description of {name}")
    validate(info_json(tool, env={"ACCEL_BACKENDS": "host"})["topology"], schema, "this machine's description")


def check_topo(tool, args):
    topo_schema = json.load(open(args.topo_schema))
    for name in PROFILES:
        doc = json.loads(run(tool, "--sim-profile", name, "topo", "--json"))
        validate(doc, topo_schema, f"`topo --json` of {name}")
        check(len(doc["devices"]) == DEVICE_COUNT[name], f"{name}: {len(doc['devices'])} devices in topo --json")
        table = run(tool, "--sim-profile", name, "topo")
        rows = [line for line in table.splitlines() if re.match(r"^DEV\d+\s", line)]
        check(len(rows) == DEVICE_COUNT[name], f"{name}: {len(rows)} DEV rows in\n{table}")
        check("Legend:" in table, f"{name}: no legend")


def normalised(description):
    """The description with device ids replaced by their position, so that two descriptions of one node compare
    equal although a device without a UUID gets another stable id when simulated."""
    d = json.loads(json.dumps(description))
    ids = {dev["id"]: f"dev{i}" for i, dev in enumerate(d["devices"])}
    for dev in d["devices"]:
        dev["id"] = ids[dev["id"]]
    for link in d.get("links", []):
        link["devices"] = sorted(ids[x] for x in link["devices"])
    for link in d.get("nic_links", []):
        link["device"] = ids[link["device"]]
    d["links"] = sorted(d.get("links", []), key=lambda l: l["devices"])
    d["nic_links"] = sorted(d.get("nic_links", []), key=lambda l: (l["device"], l["nic"]))
    return d


def compare(first, second, what):
    a = normalised(first)
    b = normalised(second)
    for key in sorted(set(a) | set(b)):
        check(a.get(key) == b.get(key), f"{what}: '{key}' differs after the round trip:\n  before: "
              f"{json.dumps(a.get(key))[:2000]}\n  after:  {json.dumps(b.get(key))[:2000]}")


def round_trip(tool, first_doc, what):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "node.json")
        with open(path, "w") as f:
            json.dump(first_doc, f)  # the whole accel-info document: the backend reads its "topology" member
        second = info_json(tool, env={"ACCEL_SIM_PROFILE": path})
    check(len(second["physical_devices"]) == len(first_doc["physical_devices"]),
          f"{what}: {len(second['physical_devices'])} devices after the round trip, "
          f"{len(first_doc['physical_devices'])} before")
    for before, after in zip(first_doc["physical_devices"], second["physical_devices"]):
        check(after["simulated"], f"{what}: the round trip's devices are simulated")
        for key in ("kind", "name", "memory_total", "compute_units", "numa_node", "pci_bus_id"):
            check(before[key] == after[key], f"{what}: physical device '{key}' {before[key]} became {after[key]}")
    compare(first_doc["topology"], second["topology"], what)
    return second


def check_round_trip(tool, args):
    for name in PROFILES:
        first = info_json(tool, name)
        check(len(first["physical_devices"]) == DEVICE_COUNT[name], f"{name}: device count")
        second = round_trip(tool, first, f"profile {name}")
        # Devices with a UUID keep their stable ids.
        check([d["stable_id"] for d in first["physical_devices"]] == [d["stable_id"] for d in second["physical_devices"]],
              f"{name}: stable ids changed")
    # This machine: the host CPU, with domains above the node.
    first = info_json(tool, env={"ACCEL_BACKENDS": "host", "ACCEL_TOPOLOGY_DOMAINS": "rack=r12,block=b3"})
    check(first["topology"]["node"].get("domain") == "r12", f"host description: {first['topology'].get('node')}")
    check([d["id"] for d in first["topology"]["domains"]] == ["r12", "b3"], f"domains {first['topology']['domains']}")
    round_trip(tool, first, "this machine")


def check_nfd(tool, args):
    text = run(tool, "--sim-profile", "h100-sxm-8", "export", "--format", "nfd",
               env={"ACCEL_TOPOLOGY_DOMAINS": "rack=r12"})
    features = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, eq, value = line.partition("=")
        prefix, slash, part = name.rpartition("/")
        check(not slash or (len(prefix) <= 253 and DNS_SUBDOMAIN.match(prefix)), f"bad NFD name prefix in '{line}'")
        check(part and LABEL_PART.match(part), f"bad NFD feature name in '{line}'")
        check(LABEL_PART.match(value), f"bad NFD value in '{line}'")
        check(name not in features, f"feature {name} twice")
        features[name] = value if eq else "true"
    expected = {"accel-gpu-count": "8", "accel-device-count": "8", "accel-sku-nvidia-h100-sxm5-80gb": "8",
                "accel-fabric-nvlink4": "true", "accel-numeric-fp8-e4m3": "true", "accel-kernel-format-ptx": "true",
                "accel-simulated": "true", "accel-domain-rack": "r12", "accel-gpu-memory-gib": "79"}
    for key, value in expected.items():
        check(features.get(key) == value, f"NFD {key}={features.get(key)}, expected {value}\n{text}")


def check_dra_doc(doc, what, slice_count=1):
    check(doc.get("apiVersion") == "resource.k8s.io/v1" and doc.get("kind") == "ResourceSlice", f"{what}: header")
    check(DNS_SUBDOMAIN.match(doc["metadata"]["name"]) and len(doc["metadata"]["name"]) <= 253, f"{what}: name")
    spec = doc["spec"]
    check(DNS_SUBDOMAIN.match(spec["driver"]) and len(spec["driver"]) <= 63, f"{what}: driver")
    check(spec["pool"]["resourceSliceCount"] == slice_count and spec["pool"]["generation"] >= 1, f"{what}: pool")
    check(1 <= len(spec["devices"]) <= 128, f"{what}: {len(spec['devices'])} devices in one slice")
    names = set()
    for dev in spec["devices"]:
        check(DNS_LABEL.match(dev["name"]), f"{what}: device name {dev['name']!r} is not a DNS label")
        check(dev["name"] not in names, f"{what}: device name {dev['name']} twice")
        names.add(dev["name"])
        attrs = dev.get("attributes", {})
        caps = dev.get("capacity", {})
        check(len(attrs) + len(caps) <= 32, f"{what}: {dev['name']} has {len(attrs) + len(caps)} attributes+capacities")
        for key, value in {**attrs, **caps}.items():
            domain, slash, ident = key.rpartition("/")
            check(C_IDENTIFIER.match(ident) and len(ident) <= 32, f"{what}: attribute name {key!r}")
            check(not slash or (DNS_SUBDOMAIN.match(domain) and len(domain) <= 63), f"{what}: attribute domain {key!r}")
        for key, value in attrs.items():
            check(len(value) == 1 and next(iter(value)) in ("string", "int", "bool", "version"),
                  f"{what}: attribute {key} has {value}")
            if "string" in value:
                check(isinstance(value["string"], str) and len(value["string"]) <= 64, f"{what}: {key} too long")
            if "int" in value:
                check(isinstance(value["int"], int), f"{what}: {key} not an int")
            if "bool" in value:
                check(isinstance(value["bool"], bool), f"{what}: {key} not a bool")
        for key, value in caps.items():
            check(QUANTITY.match(value["value"]), f"{what}: capacity {key}={value['value']} is not a quantity")
    return spec["devices"]


def check_dra(tool, args):
    devices = check_dra_doc(json.loads(run(tool, "--sim-profile", "h100-sxm-8", "export", "--format", "dra",
                                           "--node-name", "gpu-node-7")), "h100 ResourceSlice")
    check(len(devices) == 8, f"{len(devices)} DRA devices")
    first = devices[0]["attributes"]
    for key in ("productName", "sku", "uuid", "pciBusID", "pcieRoot", "numaNode"):
        check(key in first, f"DRA device lacks {key}: {first}")
    check(first["productName"]["string"] == "NVIDIA H100 80GB HBM3", f"productName {first['productName']}")
    check(first["pciBusID"]["string"] == "0000:1b:00.0" and first["numaNode"]["int"] == 0, f"placement {first}")
    check(devices[0]["capacity"]["memory"]["value"] == str(81559 * 2**20), f"memory {devices[0]['capacity']}")
    # Names longer than the limits are cut.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "long.json")
        long_name = "Accelerator " + "x" * 110
        with open(path, "w") as f:
            json.dump({"format_version": "1.0", "devices": [
                {"id": "d" * 60, "kind": "npu", "name": long_name, "vendor": "V" * 60, "sku": "s" * 63,
                 "memory": 4096, "compute_units": 1,
                 "numeric_formats": ["fp64", "fp32", "tf32", "fp16", "bf16", "fp8-e4m3", "fp8-e5m2", "int8", "int4",
                                     "int64"]}]}, f)
        doc = json.loads(run(tool, "--sim-profile", path, "export", "--format", "dra", "--node-name",
                             "Node_With.Odd*Chars"))
        devices = check_dra_doc(doc, "long-name ResourceSlice")
        check(devices[0]["attributes"]["productName"]["string"] == long_name[:64], "productName cut to 64")
        check(doc["spec"]["nodeName"] == "node-with.odd-chars", f"an odd node name made valid: {doc['spec']}")
        # A product name whose 64th byte is inside a character: cut before it (the export printed nothing before).
        accented = "A" * 63 + "\u00e9t\u00e9"
        with open(path, "w") as f:
            json.dump({"format_version": "1.0", "devices": [
                {"id": "e", "kind": "npu", "name": accented, "vendor": "V", "sku": "s", "memory": 4096,
                 "compute_units": 1}]}, f)
        devices = check_dra_doc(json.loads(run(tool, "--sim-profile", path, "export", "--format", "dra")),
                                "accented ResourceSlice")
        check(devices[0]["attributes"]["productName"]["string"] == "A" * 63, "cut at a character boundary")
        # More than a slice's 128 devices: one pool of several slices, printed as a List, every device once.
        with open(path, "w") as f:
            json.dump({"format_version": "1.0", "devices": [
                {"id": f"n{i}", "kind": "npu", "name": "Many", "vendor": "V", "sku": "s", "memory": 4096,
                 "compute_units": 1} for i in range(130)]}, f)
        doc = json.loads(run(tool, "--sim-profile", path, "export", "--format", "dra", "--node-name", "big"))
        check(doc.get("apiVersion") == "v1" and doc.get("kind") == "List", f"130 devices: not a List: {doc.keys()}")
        items = doc["items"]
        check(len(items) == 2, f"130 devices in {len(items)} slices")
        names = [check_dra_doc(item, f"slice {i} of 2", slice_count=2) for i, item in enumerate(items)]
        check([len(n) for n in names] == [128, 2], f"slices of {[len(n) for n in names]} devices")
        device_names = [d["name"] for n in names for d in n]
        check(len(set(device_names)) == 130, "a device name repeats across the pool's slices")
        check([i["metadata"]["name"] for i in items] == ["big-accel-0", "big-accel-1"],
              f"slice names {[i['metadata']['name'] for i in items]}")
        check(all(i["spec"]["pool"]["name"] == "big" and i["spec"]["nodeName"] == "big" for i in items), "one pool")
    # A node name with dots (as spec.nodeName gives on most clouds) is kept as it is: the slice names that node.
    doc = json.loads(run(tool, "--sim-profile", "h100-sxm-8", "export", "--format", "dra", "--node-name",
                         "ip-10-0-1-23.ec2.internal"))
    check(doc["spec"]["nodeName"] == "ip-10-0-1-23.ec2.internal", f"nodeName {doc['spec']['nodeName']}")
    check(doc["metadata"]["name"] == "ip-10-0-1-23.ec2.internal-accel", f"slice name {doc['metadata']['name']}")


def check_ray(tool, args):
    text = run(tool, "--sim-profile", "tpu-2x2", "export", "--format", "ray", env={"ACCEL_TOPOLOGY_DOMAINS": "zone=z1"})
    lines = [l for l in text.splitlines() if l and not l.startswith("#")]
    check(len(lines) == 1, f"expected one command line:\n{text}")
    words = shlex.split(lines[0])
    env = dict(w.split("=", 1) for w in words if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w))
    command = [w for w in words if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
    check(command[:2] == ["ray", "start"], f"not a ray start line: {lines[0]}")
    options = dict(w[2:].split("=", 1) for w in command[2:])
    resources = json.loads(options["resources"])
    labels = json.loads(options["labels"])
    for name, value in resources.items():
        check(re.match(r"^[A-Za-z0-9_][A-Za-z0-9_:.\-]*$", name), f"Ray resource name {name!r}")
        check(isinstance(value, (int, float)) and value >= 0, f"Ray resource {name}={value}")
    check(resources.get("accel_tpu") == 4, f"accel_tpu: {resources}")
    check(resources.get("accelerator_type:google-tpu-v4") == 1, f"accelerator_type: {resources}")
    check("accel_tpu" in env.get("RAY_custom_unit_instance_resources", "").split(","),
          f"accel_tpu is not a unit-instance resource: {env}")
    for key, value in labels.items():
        prefix, slash, name = key.rpartition("/")
        check(slash and DNS_SUBDOMAIN.match(prefix) and not prefix.startswith("ray.io"), f"Ray label prefix {key!r}")
        check(name and LABEL_PART.match(name), f"Ray label name {key!r}")
        check(isinstance(value, str) and LABEL_PART.match(value), f"Ray label value {key}={value!r}")
    check(labels.get("accel.dev/slice") == "slice-a" and labels.get("accel.dev/zone") == "z1", f"labels {labels}")
    check(labels.get("accel.dev/node") == "sim-tpu-host-0", f"labels {labels}")
    # Ray's instance k of accel_tpu is the k-th TPU: its label names that physical device (python/accel/ray).
    report = json.loads(run(tool, "--sim-profile", "tpu-2x2", "--json"))
    tpus = [p["stable_id"] for p in report["physical_devices"] if p["kind"] == "tpu"]
    check([labels.get(f"accel.dev/tpu-{k}") for k in range(len(tpus))] == tpus, f"instance labels {labels} vs {tpus}")
    # --json: the same resources, labels and environment, and the command line; --node-name sets the node label.
    doc = json.loads(run(tool, "--sim-profile", "tpu-2x2", "export", "--format", "ray", "--json", "--node-name", "n7",
                         env={"ACCEL_TOPOLOGY_DOMAINS": "zone=z1"}))
    check(doc["resources"] == resources, f"--json resources {doc['resources']} vs {resources}")
    check(doc["labels"] == dict(labels, **{"accel.dev/node": "n7"}), f"--json labels {doc['labels']}")
    check(doc["env"] == {"RAY_custom_unit_instance_resources": "accel_tpu"}, f"--json env {doc['env']}")
    check(doc["command"].startswith("RAY_custom_unit_instance_resources=accel_tpu ray start "), doc["command"])


CHECKS = {"profiles": check_profiles, "schema": check_schema, "topo": check_topo, "round-trip": check_round_trip,
          "nfd": check_nfd, "dra": check_dra, "ray": check_ray}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accel-info", required=True)
    parser.add_argument("--topology-schema", required=True)
    parser.add_argument("--topo-schema", required=True)
    parser.add_argument("--profiles", required=True)
    parser.add_argument("check", choices=sorted(CHECKS))
    args = parser.parse_args()
    try:
        CHECKS[args.check](args.accel_info, args)
    except Failure as e:
        print(f"FAIL {args.check}: {e}")
        return 1
    print(f"PASS {args.check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
