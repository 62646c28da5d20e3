"""The node side: ``ray start`` resources and labels from ``accel-info export --format ray --json``.

Thread safety: every function here is safe to call from any thread (each runs its own subprocess).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Mapping, Optional


def tool_path(name: str) -> str:
    """The path of an Accel command-line tool (``accel-info``, ``accel-plan``).

    Looked up in ``ACCEL_TOOLS_DIR`` when it is set, else on ``PATH``. The tools come with the SDK's install
    (docs/install.md), not with the Python wheel.
    """
    folder = os.environ.get("ACCEL_TOOLS_DIR")
    if folder:
        path = os.path.join(folder, name)
        if os.access(path, os.X_OK):
            return path
        raise FileNotFoundError(f"accel.ray: ACCEL_TOOLS_DIR={folder!r} has no executable {name!r}")
    path = shutil.which(name)
    if path is None:
        raise FileNotFoundError(
            f"accel.ray: {name!r} is not on PATH; install the Accel SDK's tools or set ACCEL_TOOLS_DIR to their folder"
        )
    return path


def run_tool(name: str, args, env: Optional[Mapping[str, str]] = None) -> str:
    """Runs an Accel tool and returns its standard output; a failure raises with the tool's own message."""
    command = [tool_path(name), *args]
    done = subprocess.run(command, capture_output=True, text=True, env=None if env is None else dict(env))
    if done.returncode != 0:
        raise RuntimeError(
            f"accel.ray: {' '.join(command)} exited with status {done.returncode}: {done.stderr.strip()}"
        )
    return done.stdout


def node_config(node_name: Optional[str] = None, env: Optional[Mapping[str, str]] = None) -> dict:
    """This node's Ray configuration: ``{"resources", "labels", "env", "command"}``.

    ``resources`` and ``labels`` are what ``ray start --resources/--labels`` (or ``ray.init``) take; ``env`` holds
    ``RAY_custom_unit_instance_resources``, which must be set for Ray's processes on this node so that Ray hands out
    instance ids of each ``accel_<kind>``. ``node_name`` sets the ``accel.dev/node`` label (default: the topology's
    node id), which must be unique in the cluster. ``env`` is the environment ``accel-info`` runs in (default: this
    process's), for instance a node's ``ACCEL_SIM_PROFILE``.

    Example::

        cfg = accel.ray.node_config()
        os.environ.update(cfg["env"])
        ray.init(resources=cfg["resources"], labels=cfg["labels"])
    """
    args = ["export", "--format", "ray", "--json"]
    if node_name:
        args += ["--node-name", node_name]
    return json.loads(run_tool("accel-info", args, env))


def start_command(node_name: Optional[str] = None) -> str:
    """The ``ray start`` command line for this node (add ``--head`` or ``--address``)."""
    return node_config(node_name)["command"]
