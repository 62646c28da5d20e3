"""Accel under Ray: node resources and labels, worker device mapping, topology-aware placement groups.

Ray schedules; Accel tells it what a node has and confines each worker to what Ray gave it (docs/ray.md):

- ``node_config()`` / ``start_command()``: the ``ray start`` resources and labels of this node
  (``accel-info export --format ray``): a unit-instance resource ``accel_<kind>`` per device kind, and a label
  ``accel.dev/<kind>-<k>`` naming the physical device behind Ray's instance ``k``.
- ``init_worker()`` and ``remote()``: in a worker, Ray's assigned instances of ``accel_<kind>`` become
  ``ACCEL_VISIBLE_DEVICES`` and a fractional share becomes ``ACCEL_MEMORY_LIMIT``, so the task sees only its devices
  and allocates no more than its share of their memory.
- ``cluster_description()`` / ``placement_group()``: every node's topology gathered through Ray, the Accel planner's
  answer for a gang, and a Ray placement group whose bundles carry label selectors pinning each to its node.

Importing this module does not import Ray; each function imports it when called.
"""

from __future__ import annotations

from .node import node_config, start_command, tool_path
from .placement import Plan, cluster_description, placement_group, plan_gang
from .worker import assigned_devices, init_worker, remote

__all__ = [
    "Plan",
    "assigned_devices",
    "cluster_description",
    "init_worker",
    "node_config",
    "placement_group",
    "plan_gang",
    "remote",
    "start_command",
    "tool_path",
]
