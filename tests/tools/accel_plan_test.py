#!/usr/bin/env python3
"""Tests of accel-plan, run by ctest (tests/tools/CMakeLists.txt).

Usage: accel_plan_test.py --accel-plan PATH --source-dir PATH CHECK

Each CHECK is one ctest test:
  sim-profile   on backends/sim/profiles/h100-sxm-8.json (one topology
                description, a one-node cluster): an 8-device STRICT_PACK at
                clique lands in the NVLink clique nvl0; a 3-device STRICT_SPREAD
                at numa is refused with the planner's reason (2 NUMA nodes);
                the worked example of docs/planner.md (plan_h100_gangs.json):
                a capacity refusal, a release, units of two bundles sharing a
                device; --explain adds every level's column and the freest
                domains of a refused gang when it was refused (also in --json)
  cluster-file  on plan_two_nodes.json (two nodes, racks r0 and r1 in block
                b0), which validates against docs/cluster.schema.json: cliques,
                selectors, memory and STRICT_SPREAD across nodes land where
                they must; the text and --json outputs agree
  json          --json: every field present with its type, devices in rank
                order, level_domains the distinct domains of the devices at the
                gang's level, the summary consistent with the gangs
  generate      --generate: a generated cluster's shape and placements, and
                its bad values (exit 2 naming the item)
  inputs        a whole `accel-info --json` document is read as its topology;
                `accel-info topo --json` output is refused with what to give
                instead; without --gangs the cluster is summarised
  bad-input     missing files, malformed JSON (with the line and column),
                unknown strategy and level, zero devices, a share out of range
                or not a number, bad memory, unknown fields, releases of
                unknown gangs: exit 2, nothing on stdout, and one line on
                stderr naming the file and the field; usage errors: exit 1
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


class Tool:
    def __init__(self, path, source_dir):
        self.path = path
        self.source_dir = source_dir
        self.tmp = tempfile.TemporaryDirectory(prefix="accel-plan-test-")

    def src(self, *parts):
        return os.path.join(self.source_dir, *parts)

    def write(self, name, content):
        """Writes a file under the temporary folder: a dict or list as JSON, a str as is."""
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def gangs(self, name, gangs):
        return self.write(name, {"format_version": "1.0", "gangs": gangs})

    def run(self, *args, expect_rc=0):
        """Runs accel-plan and returns (stdout, stderr); fails on a wrong exit
        code (a signal included) or any sanitizer report."""
        proc = subprocess.run([self.path, *args], capture_output=True, text=True, timeout=120)
        where = f"`accel-plan {' '.join(args)}`"
        for marker in SANITIZER_MARKERS:
            check(marker not in proc.stderr, f"{where}: sanitizer report on stderr:\n{proc.stderr}")
        check(proc.returncode == expect_rc,
              f"{where}: exit code {proc.returncode}, expected {expect_rc}\n"
              f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
        return proc.stdout, proc.stderr

    def json(self, *args):
        stdout, _ = self.run(*args, "--json")
        try:
            doc = json.loads(stdout)
        except json.JSONDecodeError as e:
            raise Failure(f"`accel-plan {' '.join(args)} --json` is not JSON: {e}\n{stdout}")
        check_doc(doc)
        return doc


def by_name(doc):
    return {g["name"]: g for g in doc["gangs"]}


def devices_of(gang):
    return [(d["node"], d["device"]) for d in gang["devices"]]


# --- the --json document ----------------------------------------------------

LEVELS = ["clique", "pcie_root", "numa", "node", "rack", "block"]
STRATEGIES = ["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"]


def check_keys(obj, keys, where):
    check(isinstance(obj, dict), f"{where}: not an object: {obj!r}")
    check(list(obj) == keys, f"{where}: fields {list(obj)}, expected {keys} in this order")


def check_doc(doc):
    """The shape docs/planner.md describes, and its internal consistency."""
    check_keys(doc, ["format_version", "cluster", "gangs", "summary"], "document")
    check(doc["format_version"] == "1.0", f"format_version {doc['format_version']!r}")
    cluster = doc["cluster"]
    check_keys(cluster, ["source", "nodes", "devices", "domains"], "cluster")
    check(isinstance(cluster["source"], str) and cluster["source"], "cluster.source: not a non-empty string")
    check_keys(cluster["domains"], LEVELS, "cluster.domains")
    check(all(isinstance(n, int) and n >= 0 for n in cluster["domains"].values()), "cluster.domains: not counts")
    check(cluster["domains"]["node"] == cluster["nodes"], "cluster.domains.node != cluster.nodes")
    placed = 0
    names = set()
    for i, g in enumerate(doc["gangs"]):
        where = f"gangs[{i}]"
        check_keys(g, ["name", "strategy", "level", "required", "released", "placed", "reason", "level_domains",
                       "devices", "freest"], where)
        check(g["name"] not in names, f"{where}: duplicate name {g['name']!r}")
        names.add(g["name"])
        check(g["strategy"] in STRATEGIES, f"{where}.strategy {g['strategy']!r}")
        check(g["level"] in LEVELS, f"{where}.level {g['level']!r}")
        check(isinstance(g["required"], bool) and isinstance(g["placed"], bool), f"{where}: required/placed not bool")
        check(all(r in names for r in g["released"]), f"{where}.released names a later gang: {g['released']}")
        if g["placed"]:
            placed += 1
            check(g["reason"] is None, f"{where}: placed with a reason {g['reason']!r}")
            check(g["devices"], f"{where}: placed without devices")
            check(g["freest"] == [], f"{where}: placed with freest domains")
        else:
            check(isinstance(g["reason"], str) and g["reason"], f"{where}: refused without a reason")
            check(g["devices"] == [] and g["level_domains"] == [], f"{where}: refused with devices")
            for k, r in enumerate(g["freest"]):
                check_keys(r, ["domain", "free_share", "devices_with_room"], f"{where}.freest[{k}]")
            shares = [r["free_share"] for r in g["freest"]]
            check(shares == sorted(shares, reverse=True), f"{where}.freest not freest first: {shares}")
            check(len(g["freest"]) <= min(5, cluster["domains"][g["level"]]), f"{where}.freest: too many")
        ranks = []
        for k, d in enumerate(g["devices"]):
            check_keys(d, ["rank", "node", "device", "bundle", "share", "memory", "domains"], f"{where}.devices[{k}]")
            check_keys(d["domains"], LEVELS, f"{where}.devices[{k}].domains")
            check(d["domains"]["node"] == d["node"], f"{where}.devices[{k}]: domains.node != node")
            check(0 < d["share"] <= 1, f"{where}.devices[{k}].share {d['share']}")
            check(isinstance(d["memory"], int) and d["memory"] >= 0, f"{where}.devices[{k}].memory")
            check(0 <= d["rank"] < cluster["devices"], f"{where}.devices[{k}].rank {d['rank']} out of range")
            ranks.append((d["rank"], d["bundle"]))
        check(ranks == sorted(ranks), f"{where}: devices not in rank order: {ranks}")
        level_domains = []
        for d in g["devices"]:
            if d["domains"][g["level"]] not in level_domains:
                level_domains.append(d["domains"][g["level"]])
        check(g["level_domains"] == level_domains,
              f"{where}.level_domains {g['level_domains']}, the devices' are {level_domains}")
    summary = doc["summary"]
    check_keys(summary, ["gangs", "placed", "refused", "devices_in_use", "free_share"], "summary")
    check(summary["gangs"] == len(doc["gangs"]) and summary["placed"] == placed
          and summary["refused"] == len(doc["gangs"]) - placed, f"summary {summary} disagrees with the gangs")
    check(0 <= summary["devices_in_use"] <= cluster["devices"], f"summary.devices_in_use {summary}")
    check(0 <= summary["free_share"] <= cluster["devices"] + 1e-9, f"summary.free_share {summary}")


def check_text_agrees(stdout, doc):
    """The text report says the same as --json: each gang placed or refused
    with the same reason, and the same devices in the same order."""
    lines = stdout.splitlines()
    for g in doc["gangs"]:
        if not g["placed"]:
            line = f"{g['name']}: refused: {g['reason']}"
            check(line in lines, f"text: no line {line!r}:\n{stdout}")
            continue
        head = [i for i, l in enumerate(lines) if l.startswith(f"{g['name']}: placed, ")]
        check(len(head) == 1, f"text: no single 'placed' line for {g['name']}:\n{stdout}")
        rows = lines[head[0] + 2: head[0] + 2 + len(g["devices"])]
        got = [(int(r.split()[0]), r.split()[1], r.split()[2]) for r in rows]
        want = [(d["rank"], d["node"], d["device"]) for d in g["devices"]]
        check(got == want, f"text: {g['name']}'s rows {got}, --json says {want}")
    summary = doc["summary"]
    check(f"{summary['placed']} placed, {summary['refused']} refused" in lines[-1], f"text: summary {lines[-1]!r}")


# --- checks -----------------------------------------------------------------

def check_sim_profile(tool):
    h100 = tool.src("backends", "sim", "profiles", "h100-sxm-8.json")
    gangs = tool.gangs("g.json", [
        {"name": "train", "strategy": "STRICT_PACK", "level": "clique", "bundles": [{"devices": 8}]},
    ])
    doc = tool.json("--cluster", h100, "--gangs", gangs)
    train = by_name(doc)["train"]
    check(train["placed"], f"train refused: {train['reason']}")
    check(train["level_domains"] == ["sim-h100-sxm-8/nvl0"], f"train not in the NVLink clique: {train}")
    check(devices_of(train) == [("sim-h100-sxm-8", f"gpu{i}") for i in range(8)], f"train's devices {train}")
    check(doc["cluster"]["nodes"] == 1 and doc["cluster"]["devices"] == 8, f"cluster {doc['cluster']}")
    check(doc["cluster"]["domains"]["numa"] == 2 and doc["cluster"]["domains"]["clique"] == 1, "h100 domains")

    spread = tool.gangs("s.json", [
        {"name": "wide", "strategy": "STRICT_SPREAD", "level": "numa", "bundles": [{"devices": 3, "share": 0.25}]},
    ])
    stdout, _ = tool.run("--cluster", h100, "--gangs", spread)
    want = "wide: refused: STRICT_SPREAD at numa: the gang needs 3 distinct numa domains with room; only 2 found"
    check(want in stdout.splitlines(), f"expected {want!r} in:\n{stdout}")
    # required: false falls back to SPREAD at numa: placed on three devices over both NUMA nodes.
    soft = tool.gangs("soft.json", [
        {"name": "wide", "strategy": "STRICT_SPREAD", "level": "numa", "required": False,
         "bundles": [{"devices": 3, "share": 0.25}]},
    ])
    wide = by_name(tool.json("--cluster", h100, "--gangs", soft))["wide"]
    check(wide["placed"] and len(wide["level_domains"]) == 2, f"preferred STRICT_SPREAD: {wide}")
    text, _ = tool.run("--cluster", h100, "--gangs", soft)
    check("wide: placed, STRICT_SPREAD at numa (preferred): 3 devices in 2 numa domains: " in text, text)

    # The worked example of docs/planner.md.
    example = tool.src("tests", "tools", "plan_h100_gangs.json")
    doc = tool.json("--cluster", h100, "--gangs", example)
    g = by_name(doc)
    check(g["train"]["placed"] and g["train"]["level_domains"] == ["sim-h100-sxm-8/nvl0"], f"train {g['train']}")
    check(all(d["memory"] == 40 << 30 for d in g["train"]["devices"]), "train: memory 40GiB per device")
    check(not g["eval"]["placed"] and g["eval"]["reason"].startswith("capacity: "), f"eval {g['eval']}")
    check(g["wide"]["released"] == ["train"], f"wide.released {g['wide']['released']}")
    check(g["wide"]["reason"] == want.split("refused: ", 1)[1], f"wide {g['wide']}")
    check(g["infer"]["placed"] and g["infer"]["level_domains"] == ["sim-h100-sxm-8/numa0"], f"infer {g['infer']}")
    infer = [(d["device"], d["bundle"], d["share"], d["memory"]) for d in g["infer"]["devices"]]
    check(infer == [("gpu0", 0, 0.5, 20 << 30), ("gpu0", 1, 0.5, 0), ("gpu1", 0, 0.5, 20 << 30)], f"infer {infer}")
    check(doc["summary"]["devices_in_use"] == 2 and doc["summary"]["free_share"] == 6.5, f"summary {doc['summary']}")
    stdout, _ = tool.run("--cluster", h100, "--gangs", example)
    check_text_agrees(stdout, doc)
    lines = stdout.splitlines()
    for line in ["train: placed, STRICT_PACK at clique: 8 devices in 1 clique: sim-h100-sxm-8/nvl0",
                 "train: released (8 devices)",
                 "infer: placed, PACK at numa: 3 units on 2 devices in 1 numa domain: sim-h100-sxm-8/numa0",
                 "4 gangs: 2 placed, 2 refused; 2 of 8 devices in use, 6.50 of 8 free"]:
        check(line in lines, f"expected {line!r} in:\n{stdout}")
    # Released, a gang of units that share devices says so as its placement did ("3 devices" counted units).
    shared = tool.write("plan_release_shared.json", json.dumps({"format_version": "1.0", "gangs": [
        {"name": "infer", "strategy": "PACK", "level": "numa",
         "bundles": [{"devices": 2, "share": 0.5}, {"devices": 1, "share": 0.5}]},
        {"name": "next", "strategy": "PACK", "level": "numa", "release": ["infer"], "bundles": [{"devices": 1}]}]}))
    released, _ = tool.run("--cluster", h100, "--gangs", shared)
    check("infer: released (3 units on 2 devices)" in released.splitlines(), f"released:\n{released}")
    header = lines[lines.index("train: placed, STRICT_PACK at clique: 8 devices in 1 clique: sim-h100-sxm-8/nvl0") + 1]
    check(header.split() == ["rank", "node", "device", "bundle", "share", "memory", "clique"], f"header {header!r}")

    # --explain: every level's column, and the freest domains of a refused gang.
    stdout, _ = tool.run("--cluster", h100, "--gangs", example, "--explain")
    lines = stdout.splitlines()
    header = lines[lines.index("train: placed, STRICT_PACK at clique: 8 devices in 1 clique: sim-h100-sxm-8/nvl0") + 1]
    check(header.split() == ["rank", "node", "device", "bundle", "share", "memory", "clique", "pcie_root", "numa",
                             "rack", "block"], f"--explain header {header!r}")
    row = lines[lines.index("train: placed, STRICT_PACK at clique: 8 devices in 1 clique: sim-h100-sxm-8/nvl0") + 2]
    check(row.split() == ["0", "sim-h100-sxm-8", "gpu0", "0", "1", "40.0", "GiB", "nvl0", "pci0000:15", "numa0", "-",
                          "-"], f"--explain row {row!r}")
    # The freest domains when the gang was refused: all free after the release before "wide", none before.
    freest = lines[lines.index("wide: refused: " + g["wide"]["reason"]) + 1]
    check(freest == "  freest 2 of 2 numa domains: sim-h100-sxm-8/numa0 4.00 free on 4 devices, "
                    "sim-h100-sxm-8/numa1 4.00 free on 4 devices", f"--explain freest {freest!r}")
    freest = lines[lines.index("eval: refused: " + g["eval"]["reason"]) + 1]
    check(freest.startswith("  freest 2 of 2 numa domains: sim-h100-sxm-8/numa0 0.00 free on 0 devices, "),
          f"--explain freest {freest!r}")
    check(all(g[n]["freest"] == [] for n in g), "freest listed without --explain")
    g = by_name(tool.json("--cluster", h100, "--gangs", example, "--explain"))
    check(g["wide"]["freest"] == [{"domain": "sim-h100-sxm-8/numa0", "free_share": 4.0, "devices_with_room": 4},
                                  {"domain": "sim-h100-sxm-8/numa1", "free_share": 4.0, "devices_with_room": 4}],
          f"--json --explain: wide.freest {g['wide']['freest']}")
    check(g["eval"]["freest"][0]["devices_with_room"] == 0, f"--json --explain: eval.freest {g['eval']['freest']}")


def load_cluster_schema(tool):
    with open(tool.src("docs", "cluster.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    with open(tool.src("docs", "topology.schema.json"), encoding="utf-8") as f:
        schema["properties"]["nodes"]["items"] = json.load(f)  # the $ref, resolved
    return schema


def check_cluster_file(tool):
    path = tool.src("tests", "tools", "plan_two_nodes.json")
    with open(path, encoding="utf-8") as f:
        jsonschema.Draft202012Validator(load_cluster_schema(tool)).validate(json.load(f))
    gangs = tool.gangs("g.json", [
        # Best fit at clique: the first 2-device clique, a/nvl0.
        {"name": "pair", "strategy": "STRICT_PACK", "level": "clique", "bundles": [{"devices": 2}]},
        # Only node a's GPUs have 80 GiB: by selector, then (b has share free) by memory.
        {"name": "big", "strategy": "STRICT_PACK", "level": "node", "bundles": [{"selector": "mem>=40GiB"}]},
        {"name": "small", "strategy": "STRICT_PACK", "level": "node",
         "bundles": [{"devices": 2, "share": 0.5, "selector": "sku==test-gpu-24g"}]},
        {"name": "roomy", "bundles": [{"memory": "60GiB"}]},
        # Node a is full: one node with room, not two.
        {"name": "across", "strategy": "STRICT_SPREAD", "level": "node", "bundles": [{"devices": 2, "share": 0.5}]},
        # After releasing "pair", one device on each node.
        {"name": "across2", "strategy": "STRICT_SPREAD", "level": "node", "release": ["pair"],
         "bundles": [{"devices": 2, "share": 0.5}]},
        # A rack holds at most 4 devices; the block holds both racks.
        {"name": "rack5", "strategy": "STRICT_PACK", "level": "rack", "bundles": [{"devices": 5, "share": 0.1}]},
        {"name": "block3", "strategy": "STRICT_PACK", "level": "block", "bundles": [{"devices": 3, "share": 0.5}]},
    ])
    doc = tool.json("--cluster", path, "--gangs", gangs)
    check(doc["cluster"]["source"] == path, f"cluster.source {doc['cluster']['source']!r}")
    check(doc["cluster"]["domains"] == {"clique": 3, "pcie_root": 3, "numa": 3, "node": 2, "rack": 2, "block": 1},
          f"cluster.domains {doc['cluster']['domains']}")
    g = by_name(doc)
    check(devices_of(g["pair"]) == [("a", "gpu0"), ("a", "gpu1")] and g["pair"]["level_domains"] == ["a/nvl0"],
          f"pair {g['pair']}")
    check(devices_of(g["big"]) == [("a", "gpu2")], f"big {g['big']}")
    check(devices_of(g["small"]) == [("b", "gpu0"), ("b", "gpu1")], f"small {g['small']}")
    check(devices_of(g["roomy"]) == [("a", "gpu3")] and g["roomy"]["devices"][0]["memory"] == 60 << 30,
          f"roomy {g['roomy']}")
    dom = g["small"]["devices"][0]["domains"]
    check(dom == {"clique": "b/nvl0", "pcie_root": "b/pci0", "numa": "b/numa0", "node": "b", "rack": "r1",
                  "block": "b0"}, f"small's domains {dom}")
    check(g["big"]["devices"][0]["domains"]["rack"] == "r0", f"big's domains {g['big']}")
    check(g["across"]["reason"] == "STRICT_SPREAD at node: the gang needs 2 distinct node domains with room; only 1 "
          "found", f"across {g['across']}")
    check(g["across2"]["released"] == ["pair"] and g["across2"]["level_domains"] == ["a", "b"],
          f"across2 {g['across2']}")
    check(devices_of(g["across2"]) == [("a", "gpu0"), ("b", "gpu0")], f"across2 {g['across2']}")
    check(g["rack5"]["reason"].startswith("STRICT_PACK at rack: no single rack can hold the gang (5 devices"),
          f"rack5 {g['rack5']}")
    check(g["block3"]["level_domains"] == ["b0"] and {d["node"] for d in g["block3"]["devices"]} == {"a", "b"},
          f"block3 {g['block3']}")
    check(doc["summary"] == {"gangs": 8, "placed": 6, "refused": 2, "devices_in_use": 6, "free_share": 0.5},
          f"summary {doc['summary']}")
    stdout, _ = tool.run("--cluster", path, "--gangs", gangs)
    check_text_agrees(stdout, doc)


def check_json(tool):
    h100 = tool.src("backends", "sim", "profiles", "h100-sxm-8.json")
    # Every strategy at every level, placed and refused, with a release: the document's shape each time.
    gangs = []
    for s in STRATEGIES:
        for level in LEVELS:
            gangs.append({"name": f"{s}-{level}", "strategy": s, "level": level,
                          "bundles": [{"devices": 2, "share": 0.5, "memory": 1 << 30}, {"share": 0.25}]})
    gangs.append({"name": "last", "release": [gangs[0]["name"], gangs[5]["name"]], "bundles": [{"devices": 8}]})
    path = tool.gangs("all.json", gangs)
    for cluster in (["--cluster", h100], ["--cluster", tool.src("tests", "tools", "plan_two_nodes.json")],
                    ["--generate", "4x8,cliques=2,rack=2"]):
        doc = tool.json(*cluster, "--gangs", path)
        check(len(doc["gangs"]) == len(gangs), "one entry per gang")
        check([g["name"] for g in doc["gangs"]] == [g["name"] for g in gangs], "gangs in the file's order")
        check(by_name(doc)["last"]["released"] == [gangs[0]["name"], gangs[5]["name"]], "released names")
        for g in doc["gangs"]:
            if g["placed"]:
                check(sorted(d["bundle"] for d in g["devices"]) == [0, 0, 1] or g["name"] == "last",
                      f"{g['name']}: bundles {g['devices']}")
        stdout, _ = tool.run(*cluster, "--gangs", path)
        check_text_agrees(stdout, doc)
        explained = tool.json(*cluster, "--gangs", path, "--explain")
        check([g["placed"] for g in explained["gangs"]] == [g["placed"] for g in doc["gangs"]], "--explain: same plan")
        check(all(g["freest"] for g in explained["gangs"] if not g["placed"]), "--explain: a refusal without freest")
    # JSON strings are escaped: a name with quotes and non-ASCII.
    odd = tool.gangs("odd.json", [{"name": "a \"quoted\" gäng", "bundles": [{}]}])
    doc = tool.json("--cluster", h100, "--gangs", odd)
    check(doc["gangs"][0]["name"] == "a \"quoted\" gäng", f"name {doc['gangs'][0]['name']!r}")


def check_generate(tool):
    gangs = tool.gangs("g.json", [
        {"name": "clique4", "strategy": "STRICT_PACK", "level": "clique", "bundles": [{"devices": 4}]},
        {"name": "clique8", "strategy": "STRICT_PACK", "level": "clique", "bundles": [{"devices": 8}]},
        {"name": "rack16", "strategy": "STRICT_PACK", "level": "rack", "bundles": [{"devices": 16}]},
        {"name": "big", "bundles": [{"memory": "100GiB"}]},
    ])
    doc = tool.json("--generate", "4x8,cliques=2,numa=4,rack=2,block=1,memory=80GiB", "--gangs", gangs)
    c = doc["cluster"]
    check(c["source"] == "generated 4x8 (cliques=2, numa=4, rack=2, block=1, memory=80.0 GiB)", f"source {c}")
    check(c["nodes"] == 4 and c["devices"] == 32, f"cluster {c}")
    check(c["domains"] == {"clique": 8, "pcie_root": 32, "numa": 16, "node": 4, "rack": 2, "block": 2},
          f"domains {c['domains']}")
    g = by_name(doc)
    check(g["clique4"]["placed"] and len(g["clique4"]["level_domains"]) == 1, f"clique4 {g['clique4']}")
    check(g["clique8"]["reason"].startswith("STRICT_PACK at clique: no single clique can hold the gang (8 devices"),
          f"clique8 {g['clique8']}")
    check(g["rack16"]["placed"] and len(g["rack16"]["level_domains"]) == 1, f"rack16 {g['rack16']}")
    check(g["big"]["reason"].startswith("capacity: "), f"big {g['big']}")
    # Defaults: 2 NUMA nodes (1 for an odd count), 8 nodes a rack, 16 racks a block.
    doc = tool.json("--generate", "20x3")
    check(doc["cluster"]["domains"] == {"clique": 20, "pcie_root": 60, "numa": 20, "node": 20, "rack": 3,
                                        "block": 1}, f"20x3 {doc['cluster']}")
    doc = tool.json("--generate", "1x8")
    check(doc["cluster"]["domains"]["numa"] == 2 and doc["gangs"] == [], f"1x8 {doc}")
    # Cliques spanning nodes: 36 nodes of 4 in fabric cliques of 18 (two NVL72 racks); 64 devices fit one.
    gangs = tool.gangs("nvl72.json", [
        {"name": "nvl64", "strategy": "STRICT_PACK", "level": "clique", "bundles": [{"devices": 64}]},
        {"name": "node4", "strategy": "STRICT_PACK", "level": "node", "bundles": [{"devices": 4}]},
    ])
    doc = tool.json("--generate", "36x4,numa=1,rack=18,fabric=18", "--gangs", gangs)
    check(doc["cluster"]["source"]
          == "generated 36x4 (cliques=1, numa=1, rack=18, block=16, fabric=18, memory=80.0 GiB)",
          f"source {doc['cluster']}")
    check(doc["cluster"]["domains"]["clique"] == 2, f"fabric domains {doc['cluster']['domains']}")
    g = by_name(doc)
    check(g["nvl64"]["placed"] and g["nvl64"]["level_domains"] == ["f0"], f"nvl64 {g['nvl64']}")
    check(g["node4"]["placed"] and len(g["node4"]["level_domains"]) == 1, f"node4 {g['node4']}")
    for spec, message in [
        ("8", "--generate: '8' is not NODESxDEVICES (such as 64x8)"),
        ("0x8", "--generate: NODES: 0 is out of range (must be in [1, 1048576])"),
        ("4xa", "--generate: DEVICES: 'a' is not a count (digits)"),
        ("4x-1", "--generate: DEVICES: '-1' is not a count (digits)"),
        ("2000x2000", "--generate: 2000x2000: 4000000 devices in all (at most 1048576)"),
        ("99999999999999999999x1", "--generate: NODES: '99999999999999999999' is not a count (digits)"),
        ("4x8,cliques=3", "--generate: cliques: 3 cliques do not split 8 devices evenly"),
        ("4x8,numa=16", "--generate: numa: 16 NUMA nodes do not split 8 devices evenly"),
        ("4x8,racks=2", "--generate: 'racks' is not a key (cliques, numa, rack, block, fabric, memory)"),
        ("4x8,rack", "--generate: 'rack' is not key=value (cliques, numa, rack, block, fabric, memory)"),
        ("4x8,rack=0", "--generate: rack: 0 is out of range (must be in [1, 1048576])"),
        ("4x8,memory=lots", "--generate: memory: 'lots' is not a size such as 40GiB"),
        ("4x8,", "--generate: '' is not key=value"),
    ]:
        stdout, stderr = tool.run("--generate", spec, expect_rc=2)
        check(stdout == "", f"--generate {spec}: stdout {stdout!r}")
        check(stderr.startswith("accel-plan: " + message) and stderr.count("\n") == 1,
              f"--generate {spec}: stderr {stderr!r}, expected 'accel-plan: {message}...'")


def check_inputs(tool):
    with open(tool.src("backends", "sim", "profiles", "h100-sxm-8.json"), encoding="utf-8") as f:
        h100 = json.load(f)
    info = tool.write("info.json", {"schema_version": "1.0", "accel": {}, "backends": [], "physical_devices": [],
                                    "loader": [], "topology": h100})
    gangs = tool.gangs("g.json", [{"name": "train", "strategy": "STRICT_PACK", "level": "clique",
                                   "bundles": [{"devices": 8}]}])
    doc = tool.json("--cluster", info, "--gangs", gangs)
    check(by_name(doc)["train"]["level_domains"] == ["sim-h100-sxm-8/nvl0"], f"accel-info --json document: {doc}")
    del h100["devices"][0]["memory"]
    info = tool.write("info-bad.json", {"physical_devices": [], "topology": h100})
    _, stderr = tool.run("--cluster", info, expect_rc=2)
    check(stderr == f"accel-plan: {info}: topology: devices[0].memory: missing (required)\n", f"stderr {stderr!r}")
    topo = tool.write("topo.json", {"schema_version": "1.0", "devices": [], "links": [], "nics": [], "nic_links": []})
    _, stderr = tool.run("--cluster", topo, expect_rc=2)
    check(stderr.startswith(f"accel-plan: {topo}: this is `accel-info topo --json` output"), f"stderr {stderr!r}")
    # Without --gangs: the cluster, summarised.
    stdout, _ = tool.run("--cluster", tool.src("tests", "tools", "plan_two_nodes.json"))
    check(stdout.splitlines()[-1] == "0 gangs: 0 placed, 0 refused; 0 of 6 devices in use, 6.00 of 6 free",
          f"no gangs: {stdout!r}")
    # Every shipped profile is a one-node cluster.
    profiles = tool.src("backends", "sim", "profiles")
    for name in sorted(os.listdir(profiles)):
        if name.endswith(".json"):
            doc = tool.json("--cluster", os.path.join(profiles, name))
            check(doc["cluster"]["nodes"] == 1 and doc["cluster"]["devices"] > 0, f"{name}: {doc['cluster']}")
    stdout, _ = tool.run("--version")
    check(stdout.startswith("accel-plan "), f"--version {stdout!r}")
    stdout, _ = tool.run("--help")
    check("--cluster FILE" in stdout and "Exit status:" in stdout, f"--help {stdout!r}")


def check_bad_input(tool):
    h100 = tool.src("backends", "sim", "profiles", "h100-sxm-8.json")

    def bad(gangs, message, cluster=h100, raw=False):
        path = tool.write("bad.json", gangs) if raw else tool.gangs("bad.json", gangs)
        stdout, stderr = tool.run("--cluster", cluster, "--gangs", path, expect_rc=2)
        check(stdout == "", f"{message}: something on stdout: {stdout!r}")
        want = f"accel-plan: {path}: {message}"
        check(stderr.startswith(want) and stderr.count("\n") == 1,
              f"gangs {gangs!r}:\n  stderr   {stderr!r}\n  expected {want!r}...")

    one = {"name": "g", "bundles": [{}]}
    # Files.
    missing = os.path.join(tool.tmp.name, "missing.json")
    _, stderr = tool.run("--cluster", missing, expect_rc=2)
    check(stderr == f"accel-plan: {missing}: cannot open: No such file or directory\n", f"stderr {stderr!r}")
    _, stderr = tool.run("--cluster", h100, "--gangs", missing, expect_rc=2)
    check(stderr == f"accel-plan: {missing}: cannot open: No such file or directory\n", f"stderr {stderr!r}")
    _, stderr = tool.run("--cluster", tool.tmp.name, expect_rc=2)
    check(stderr == f"accel-plan: {tool.tmp.name}: is a directory\n", f"stderr {stderr!r}")
    # An accel-info document whose topology nests 100000 arrays deep: refused with the field (its topology was
    # serialized again to be parsed, which recursed per level and overflowed the stack: exit 139).
    deep = tool.write("deep.json", '{"physical_devices": [], "topology": ' + "[" * 100000 + "]" * 100000 + "}")
    _, stderr = tool.run("--cluster", deep, "--gangs", tool.gangs("one.json", [{"name": "g", "bundles": [{}]}]),
                         expect_rc=2)
    check(stderr == f"accel-plan: {deep}: topology: (top level): expected an object, got an array\n",
          f"stderr {stderr!r}")
    # Malformed JSON, with the position.
    bad('{"format_version": "1.0",\n "gangs": [\n  {"name": "g",, }]}',
        "not valid JSON: [json.exception.parse_error.101] parse error at line 3, column 16: syntax error", raw=True)
    bad("", "not valid JSON: [json.exception.parse_error.101] parse error at line 1, column 1", raw=True)
    bad('{"format_version": "1.0", "gangs": [{"bundles": [{"share": NaN}]}]}',
        "not valid JSON: [json.exception.parse_error.101] parse error at line 1, column 60", raw=True)
    bad('{"format_version": "1.0", "gangs": [{"bundles": [{"share": 1e999}]}]}',
        "not valid JSON: [json.exception.out_of_range.406] number overflow parsing '1e999'", raw=True)
    cluster = tool.write("c.json", '{"format_version": "1.0", "nodes": [\n{"devices": [}]}')
    _, stderr = tool.run("--cluster", cluster, expect_rc=2)
    check(stderr.startswith(f"accel-plan: {cluster}: not valid JSON: [json.exception.parse_error.101] parse error at "
                            "line 2, column 14"), f"stderr {stderr!r}")
    cluster = tool.write("c2.json", '{"format_version": "1.0", "nodes": [{"devices": [{"memory": 1e999}]}]}')
    _, stderr = tool.run("--cluster", cluster, expect_rc=2)
    check(stderr.startswith(f"accel-plan: {cluster}: not valid JSON: "), f"stderr {stderr!r}")
    # The cluster file's own errors (planner::ParseCluster).
    with open(tool.src("tests", "tools", "plan_two_nodes.json"), encoding="utf-8") as f:
        two = json.load(f)
    del two["nodes"][1]["devices"][0]["memory"]
    cluster = tool.write("c3.json", two)
    _, stderr = tool.run("--cluster", cluster, expect_rc=2)
    check(stderr == f"accel-plan: {cluster}: nodes[1].devices[0].memory: missing (required)\n", f"stderr {stderr!r}")
    # The gangs file's structure.
    bad([1], "(top level): expected an object, got an array", raw=True)
    bad({"gangs": []}, "format_version: missing (required)", raw=True)
    bad({"format_version": "2.0", "gangs": []}, "format_version: '2.0' is not 1.x", raw=True)
    bad({"format_version": "1.0"}, "gangs: missing (required)", raw=True)
    bad({"format_version": "1.0", "gangs": {}}, "gangs: expected an array, got an object", raw=True)
    bad({"format_version": "1.0", "gangz": []}, "gangz: unknown field (expected one of format_version, comment, "
        "gangs)", raw=True)
    bad(["g"], "gangs[0]: expected an object, got a string")
    bad([{"name": "g", "stratgey": "PACK", "bundles": [{}]}],
        "gangs[0].stratgey: unknown field (expected one of name, strategy, level, required, bundles, release, comment)")
    bad([one, {"name": "h", "bundles": [{"device": 2}]}], "gangs[1].bundles[0].device: unknown field (expected one of "
        "devices, share, memory, selector, comment)")
    bad([{"name": 3, "bundles": [{}]}], "gangs[0].name: expected a string, got an unsigned integer")
    bad([{"name": "", "bundles": [{}]}], "gangs[0].name: empty")
    bad([one, one], "gangs[1].name: duplicate 'g' (also gangs[0])")
    bad([{"bundles": [{}]}, {"name": "gang0", "bundles": [{}]}], "gangs[1].name: duplicate 'gang0' (also gangs[0])")
    # Strategy, level, required.
    bad([{"strategy": "PACKED", "bundles": [{}]}],
        "gangs[0].strategy: 'PACKED' is not a strategy (PACK, SPREAD, STRICT_PACK, STRICT_SPREAD)")
    bad([{"strategy": "pack", "bundles": [{}]}], "gangs[0].strategy: 'pack' is not a strategy")
    bad([{"strategy": 1, "bundles": [{}]}], "gangs[0].strategy: expected a string, got an unsigned integer")
    bad([{"level": "host", "bundles": [{}]}],
        "gangs[0].level: 'host' is not a level (clique, pcie_root, numa, node, rack, block)")
    bad([{"required": "yes", "bundles": [{}]}], "gangs[0].required: expected a boolean, got a string")
    # Bundles.
    bad([{"name": "g"}], "gangs[0].bundles: missing (required)")
    bad([{"bundles": []}], "gangs[0].bundles: the gang has no bundles")
    bad([{"bundles": {}}], "gangs[0].bundles: expected an array, got an object")
    bad([{"bundles": [3]}], "gangs[0].bundles[0]: expected an object, got an unsigned integer")
    bad([one, {"bundles": [{}, {"devices": 0}]}], "gangs[1].bundles[1].devices: zero devices (must be at least 1)")
    bad([{"bundles": [{"devices": -1}]}], "gangs[0].bundles[0].devices: expected an unsigned integer, got a negative "
        "integer")
    bad([{"bundles": [{"devices": 1.5}]}], "gangs[0].bundles[0].devices: expected an unsigned integer, got a number")
    bad([{"bundles": [{"devices": 1048577}]}], "gangs[0].bundles[0].devices: 1048577 is too many (at most 1048576 "
        "in one gang)")
    bad([{"bundles": [{"devices": 18446744073709551615}]}], "gangs[0].bundles[0].devices: 18446744073709551615 is too "
        "many")
    bad([{"bundles": [{"devices": 1048576}, {"devices": 1}]}], "gangs[0].bundles: more than 1048576 devices in all")
    bad([{"bundles": [{"share": -0.5}]}], "gangs[0].bundles[0].share: -0.5 is out of range (must be in (0, 1])")
    bad([{"bundles": [{"share": 0}]}], "gangs[0].bundles[0].share: 0 is out of range (must be in (0, 1])")
    bad([{"bundles": [{"share": 1.5}]}], "gangs[0].bundles[0].share: 1.5 is out of range (must be in (0, 1])")
    bad([{"bundles": [{"share": 1e-9}]}], "gangs[0].bundles[0].share: 1e-09 is below the resolution 1e-6")
    bad([{"bundles": [{"share": "NaN"}]}], "gangs[0].bundles[0].share: expected a number, got a string")
    bad([{"bundles": [{"share": None}]}], "gangs[0].bundles[0].share: expected a number, got null")
    bad([{"bundles": [{"memory": -1}]}], "gangs[0].bundles[0].memory: expected bytes (an unsigned integer) or a size "
        "such as \"40GiB\", got a negative integer")
    bad([{"bundles": [{"memory": "lots"}]}], "gangs[0].bundles[0].memory: 'lots' is not a size such as 40GiB (B, kB, "
        "KB, MB, GB, TB, KiB, MiB, GiB, TiB)")
    bad([{"bundles": [{"memory": "-4GiB"}]}], "gangs[0].bundles[0].memory: '-4GiB' is not a size")
    bad([{"bundles": [{"memory": "40 GB/s"}]}], "gangs[0].bundles[0].memory: '40 GB/s': unknown unit 'GB/s'")
    bad([{"bundles": [{"memory": "20000000TiB"}]}], "gangs[0].bundles[0].memory: '20000000TiB' is 2^64 bytes or more")
    bad([{"bundles": [{"selector": "kind=="}]}], "gangs[0].bundles[0].selector: column ")
    bad([{"bundles": [{"selector": 1}]}], "gangs[0].bundles[0].selector: expected a string, got an unsigned integer")
    # Releases.
    bad([{"name": "a", "release": ["b"], "bundles": [{}]}, {"name": "b", "bundles": [{}]}],
        "gangs[0].release[0]: 'b' is not the name of an earlier gang")
    bad([{"name": "a", "release": ["a"], "bundles": [{}]}], "gangs[0].release[0]: 'a' is not the name of an earlier "
        "gang")
    bad([one, {"name": "h", "release": ["g"], "bundles": [{}]}, {"name": "i", "release": ["g"], "bundles": [{}]}],
        "gangs[2].release[0]: 'g' is already released by gangs[1]")
    bad([one, {"name": "h", "release": "g", "bundles": [{}]}], "gangs[1].release: expected an array, got a string")
    # Usage errors: exit 1.
    for args in (["--gangs", h100], ["--cluster", h100, "--generate", "1x8"], ["--bogus"],
                 ["--cluster"]):
        stdout, stderr = tool.run(*args, expect_rc=1)
        check(stdout == "" and stderr.startswith("accel-plan: "), f"{args}: stdout {stdout!r} stderr {stderr!r}")


CHECKS = {
    "sim-profile": check_sim_profile,
    "cluster-file": check_cluster_file,
    "json": check_json,
    "generate": check_generate,
    "inputs": check_inputs,
    "bad-input": check_bad_input,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accel-plan", required=True, help="path of the accel-plan executable")
    parser.add_argument("--source-dir", required=True, help="the source tree (profiles, docs, test data)")
    parser.add_argument("check", choices=sorted(CHECKS))
    args = parser.parse_args()
    tool = Tool(args.accel_plan, args.source_dir)
    try:
        CHECKS[args.check](tool)
    except Failure as e:
        print(f"FAIL {args.check}: {e}", file=sys.stderr)
        return 1
    finally:
        tool.tmp.cleanup()
    print(f"ok {args.check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
