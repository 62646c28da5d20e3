"""Topology-aware placement under Ray: the Accel planner's answer as a Ray placement group.

``cluster_description()`` gathers every Accel node's topology description through Ray (one probe task per node
runs ``accel-info --json`` there); ``plan_gang()`` runs the planner (``accel-plan``, docs/planner.md) over it for one
gang; ``placement_group()`` turns the answer into a Ray placement group with one bundle per planned device, each
with a bundle label selector on ``accel.dev/node`` that pins it to the node the planner chose.

What Ray can and cannot be told (docs/ray.md): a label selector names nodes, and Ray hands out a node's
``accel_<kind>`` instances itself. So the planner's choice of nodes (and so of racks, blocks and node-wide cliques)
is exact; which devices inside a node a bundle gets is Ray's (its instance order is the node's topology rank).

Thread safety: each call is independent; Ray's own calls are thread-safe.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from .node import run_tool
from .worker import _KINDS, _ray

_STRATEGIES = ("PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD")


def _probe_topology(node_name: str) -> dict:
    """In a task on the node: its topology description (``accel-info --json``'s ``topology`` member)."""
    report = json.loads(run_tool("accel-info", ["--json"]))
    description = report["topology"]
    description.setdefault("node", {})["id"] = node_name  # the planner's node id: the accel.dev/node label
    return description


def cluster_description(timeout: float = 120) -> dict:
    """The cluster description (docs/planner.md) of every live Ray node with an ``accel.dev/node`` label.

    Each node's description comes from the node itself; devices Ray has already handed out are left out (Ray says
    how many instances of ``accel_<kind>`` a node has free, not which: the description drops that many of the
    node's devices of that kind, last in rank first, so node-level figures are exact). A node is ``id``-ed by its
    ``accel.dev/node`` label, which must be unique.
    """
    ray = _ray()
    nodes = [n for n in ray.nodes() if n.get("Alive") and "accel.dev/node" in (n.get("Labels") or {})]
    names = [n["Labels"]["accel.dev/node"] for n in nodes]
    duplicates = sorted({x for x in names if names.count(x) > 1})
    if duplicates:
        raise RuntimeError(f"accel.ray.cluster_description: several nodes have accel.dev/node={duplicates[0]!r}")
    probe = ray.remote(num_cpus=0, max_calls=1)(_probe_topology)
    futures = [
        probe.options(label_selector={"accel.dev/node": name}, name=f"accel-topology-{name}").remote(name)
        for name in names
    ]
    descriptions = ray.get(futures, timeout=timeout)
    available = ray._private.state.available_resources_per_node()
    for node, description in zip(nodes, descriptions):
        free = available.get(node["NodeID"], {})
        for kind in _KINDS:
            total = int(node["Resources"].get(f"accel_{kind}", 0))
            if total == 0:
                continue
            busy = total - math.floor(free.get(f"accel_{kind}", 0) + 1e-9)
            if busy <= 0:
                continue
            of_kind = [d for d in description["devices"] if d.get("kind") == kind]
            drop = {id(d) for d in of_kind[-busy:]}  # the last in rank first
            description["devices"] = [d for d in description["devices"] if id(d) not in drop]
    return {"format_version": "1.0", "nodes": descriptions}


@dataclass
class Plan:
    """The planner's answer for one gang: ``placed``, the ``reason`` when refused, and per planned device its
    ``node``, ``device`` (the description's device id), ``bundle`` (the index in the gang's bundles) and ``share``,
    in topology rank order; ``domains``: the gang's level domains it uses."""

    placed: bool
    reason: Optional[str]
    devices: List[dict] = field(default_factory=list)
    domains: List[str] = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False)


def _gang(bundles: Sequence[dict], strategy: str, level: str, required: bool, kind: str, name: str) -> dict:
    if strategy not in _STRATEGIES:
        raise ValueError(f"accel.ray: strategy {strategy!r} is not one of {', '.join(_STRATEGIES)}")
    if kind not in _KINDS:
        raise ValueError(f"accel.ray: kind {kind!r} is not one of {', '.join(_KINDS)}")
    if not bundles:
        raise ValueError("accel.ray: the gang has no bundles")
    out = []
    for i, bundle in enumerate(bundles):
        unknown = set(bundle) - {"devices", "share", "memory", "selector"}
        if unknown:
            raise ValueError(f"accel.ray: bundles[{i}]: unknown field {sorted(unknown)[0]!r}")
        selector = f"kind=={kind}"
        if bundle.get("selector"):
            selector = f"({selector}) && ({bundle['selector']})"
        out.append({**bundle, "selector": selector})
    return {"name": name, "strategy": strategy, "level": level, "required": required, "bundles": out}


def plan_gang(
    bundles: Sequence[dict],
    strategy: str = "PACK",
    level: str = "node",
    required: bool = True,
    kind: str = "gpu",
    cluster: Optional[dict] = None,
    name: str = "gang",
) -> Plan:
    """Plans one gang over ``cluster`` (default: ``cluster_description()``) with ``accel-plan``.

    ``bundles`` are the planner's (``{"devices": 1, "share": 1.0, "memory": "40GiB", "selector": "..."}``), on
    devices of ``kind``; ``strategy`` and ``level`` as docs/planner.md defines them. Bad input raises
    ``ValueError`` or ``RuntimeError`` with the planner's message.
    """
    gangs = {"format_version": "1.0", "gangs": [_gang(bundles, strategy, level, required, kind, name)]}
    if cluster is None:
        cluster = cluster_description()
    with tempfile.TemporaryDirectory(prefix="accel-ray-") as folder:
        cluster_file = os.path.join(folder, "cluster.json")
        gangs_file = os.path.join(folder, "gangs.json")
        with open(cluster_file, "w") as f:
            json.dump(cluster, f)
        with open(gangs_file, "w") as f:
            json.dump(gangs, f)
        answer = json.loads(run_tool("accel-plan", ["--cluster", cluster_file, "--gangs", gangs_file, "--json"]))
    gang = answer["gangs"][0]
    return Plan(gang["placed"], gang["reason"], gang["devices"], gang["level_domains"], gang)


def placement_group(
    bundles: Sequence[dict],
    strategy: str = "PACK",
    level: str = "node",
    required: bool = True,
    kind: str = "gpu",
    cluster: Optional[dict] = None,
    name: str = "",
    **options,
):
    """A Ray placement group for a gang placed by the Accel planner: returns ``(group, plan)``.

    One Ray bundle per planned device (a gang bundle of n devices becomes n Ray bundles, in rank order), asking
    ``{"accel_<kind>": share}`` with ``bundle_label_selector`` ``{"accel.dev/node": <its node>}``; Ray's strategy
    is ``PACK`` (the label selectors already decide the nodes). ``plan.devices[i]`` is Ray bundle ``i``. A gang the
    planner refuses raises ``RuntimeError`` with its reason and makes no group. ``options`` go to
    ``ray.util.placement_group`` (``lifetime``...).

    Example::

        group, plan = accel.ray.placement_group([{"devices": 1}] * 4, strategy="STRICT_PACK", level="rack")
        ray.get(group.ready())
        futures = [step.options(scheduling_strategy=PlacementGroupSchedulingStrategy(group, i)).remote()
                   for i in range(len(plan.devices))]
    """
    ray = _ray()
    plan = plan_gang(bundles, strategy, level, required, kind, cluster, name or "gang")
    if not plan.placed:
        raise RuntimeError(f"accel.ray.placement_group: the planner refused the gang: {plan.reason}")
    ray_bundles: List[Dict[str, float]] = []
    selectors: List[Dict[str, str]] = []
    for device in plan.devices:
        ray_bundles.append({f"accel_{kind}": float(device["share"])})
        selectors.append({"accel.dev/node": device["node"]})
    from ray.util.placement_group import placement_group as ray_placement_group  # noqa: PLC0415

    group = ray_placement_group(ray_bundles, strategy="PACK", name=name, bundle_label_selector=selectors, **options)
    return group, plan
