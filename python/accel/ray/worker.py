"""The worker side: Ray's assigned ``accel_<kind>`` instances become ``ACCEL_VISIBLE_DEVICES`` and
``ACCEL_MEMORY_LIMIT`` before Accel reads them.

Accel reads its ``ACCEL_*`` variables once, when the process makes its instance (the first device query), so
``init_worker()`` must run first in the worker, and a worker must not be reused for a task with other devices:
``remote()`` does both (``max_calls=1`` for tasks, the setup in ``__init__`` for actors).

Thread safety: ``init_worker`` changes the process environment; call it before starting threads that use Accel.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
from typing import Dict, List

_KINDS = ("gpu", "npu", "tpu", "fpga", "dev")


def _ray():
    import ray  # noqa: PLC0415 (Ray is optional: imported when a function needs it)

    return ray


def _format_fraction(fraction: float) -> str:
    text = f"{fraction * 100:.4f}".rstrip("0").rstrip(".")
    return text + "%"


def assigned_devices() -> Dict[str, List[dict]]:
    """The Accel devices Ray gave the calling worker, per kind: ``{"gpu": [{"instance", "fraction", "stable_id"}]}``.

    Reads the worker's assigned unit instances of every ``accel_<kind>`` (also through a placement group's bundle)
    and the node's ``accel.dev/<kind>-<instance>`` labels that name the physical device behind each instance. Raises
    ``RuntimeError`` when an instance has no label (the node was not started with ``accel.ray.node_config()``'s
    labels) and when called outside a Ray worker.
    """
    ray = _ray()
    worker = ray._private.worker.global_worker  # the assigned instance ids are not in Ray's public API
    if worker.mode != ray._private.worker.WORKER_MODE:
        raise RuntimeError("accel.ray.assigned_devices: not in a Ray worker (call it inside a task or an actor)")
    resource_ids = worker.core_worker.resource_ids()
    labels = ray.get_runtime_context().get_node_labels()
    result: Dict[str, List[dict]] = {}
    for kind in _KINDS:
        name = f"accel_{kind}"
        # The plain resource, or a placement group's (accel_gpu_group_<group id>, not the per-bundle one), as
        # Ray itself reads GPU ids.
        pattern = re.compile(rf"^{name}(_group_[0-9A-Za-z]+)?$")
        fractions: Dict[int, float] = {}
        for resource, assignment in resource_ids.items():
            if pattern.match(resource):
                for instance, amount in assignment:
                    fractions[int(instance)] = max(fractions.get(int(instance), 0.0), float(amount))
        devices = []
        for instance in sorted(fractions):
            label = f"accel.dev/{kind}-{instance}"
            if label not in labels:
                raise RuntimeError(
                    f"accel.ray: Ray gave this worker {name} instance {instance}, but the node has no label "
                    f"{label!r} naming its device: start the node with accel.ray.node_config()'s labels "
                    f"(`accel-info export --format ray`)"
                )
            devices.append({"instance": instance, "fraction": fractions[instance], "stable_id": labels[label]})
        if devices:
            result[kind] = devices
    return result


def _restore_vendor_visibility() -> Dict[str, object]:
    """Undoes Ray's emptying of a vendor's own visibility variable (``CUDA_VISIBLE_DEVICES=''``,
    ``HIP_VISIBLE_DEVICES``, ``ONEAPI_DEVICE_SELECTOR``...) in a task that holds none of Ray's resource of that
    kind (``GPU``): Ray does it with ``RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=1``, and older Ray always, and the vendor's
    runtime would then show Accel's backend no device at all. The variable gets back the value the worker started
    with (Ray's record of it), or goes when it had none. Returns what it changed (None: removed)."""
    ray = _ray()
    try:  # Ray's accelerator managers and its record of the original values are not in its public API
        from ray._private import accelerators  # noqa: PLC0415

        original = ray._private.worker.global_worker.original_visible_accelerator_ids
        names = accelerators.get_all_accelerator_resource_names()
    except (ImportError, AttributeError):
        return {}
    held = ray.get_runtime_context().get_accelerator_ids()
    changed: Dict[str, object] = {}
    for name in names:
        if held.get(name):
            continue  # Ray gave this task some of its own: the variable is Ray's choice
        variable = accelerators.get_accelerator_manager_for_resource(name).get_visible_accelerator_ids_env_var()
        if variable is None or os.environ.get(variable) != "":
            continue
        ids = original.get(name)
        if ids is None:
            del os.environ[variable]
            changed[variable] = None
        else:
            os.environ[variable] = changed[variable] = ",".join(str(i) for i in ids)
    return changed


def init_worker() -> dict:
    """Confines this worker to the devices Ray assigned it; returns the variables it set.

    ``ACCEL_VISIBLE_DEVICES`` shows the CPU and the assigned devices (none when the task asked for no
    accelerator); ``ACCEL_MEMORY_LIMIT`` limits a device held at a fraction below 1 to that fraction of its memory
    (``accel_gpu=0.25``: 25%), enforced by libaccel's allocator for every allocation in this process
    (docs/memory-limits.md). A vendor variable Ray emptied (``CUDA_VISIBLE_DEVICES=''`` in a task that asked Ray
    for no ``GPU``) gets back the worker's original value when the task holds Accel devices, since Accel's backend
    opens the device through that vendor's runtime (in the returned dict; None: removed). Raises ``RuntimeError`` when this process has already made its Accel instance (the
    variables would be ignored), or when ``ACCEL_MEMORY_LIMIT`` is already set and a fraction would change it.
    """
    from accel import _accel  # noqa: PLC0415

    if _accel._has_instance():
        raise RuntimeError(
            "accel.ray.init_worker: this process already made its Accel instance, which read ACCEL_VISIBLE_DEVICES "
            "and ACCEL_MEMORY_LIMIT then; call init_worker before any device query (accel.ray.remote does)"
        )
    devices = assigned_devices()
    held = [d for kind in devices for d in devices[kind]]
    ids = [d["stable_id"] for d in held]
    quoted = ", ".join(f'"{i}"' for i in ids)
    visible = f"kind==cpu || stable_id in ({quoted})" if ids else "kind==cpu"
    limits = [f"{d['stable_id']}={_format_fraction(d['fraction'])}" for d in held if d["fraction"] < 1]
    env = {"ACCEL_VISIBLE_DEVICES": visible}
    if limits:
        if os.environ.get("ACCEL_MEMORY_LIMIT"):
            raise RuntimeError(
                f"accel.ray.init_worker: ACCEL_MEMORY_LIMIT is already set ({os.environ['ACCEL_MEMORY_LIMIT']!r}); "
                f"not replacing it with this task's share ({','.join(limits)})"
            )
        env["ACCEL_MEMORY_LIMIT"] = ",".join(limits)
    os.environ.update(env)
    if held:
        env.update(_restore_vendor_visibility())
    return env


def remote(function_or_class=None, /, *, accelerators: float = 1, kind: str = "gpu", **options):
    """``ray.remote`` for work on Accel devices: asks Ray for ``accelerators`` of ``accel_<kind>`` and runs
    ``init_worker()`` in the worker before the function (or the actor's ``__init__``).

    A task gets ``max_calls=1`` unless given (a fresh worker process per task, since Accel reads its settings once
    per process). Other options go to ``ray.remote`` as they are.

    Example::

        @accel.ray.remote(accelerators=0.25)
        def step():
            (dev,) = [d for d in accel.devices() if d.kind == "gpu"]   # only the device Ray gave this task
            return accel.zeros(1 << 20, device=dev)                    # at most 25% of its memory in all
    """
    if kind not in _KINDS:
        raise ValueError(f"accel.ray.remote: kind {kind!r} is not one of {', '.join(_KINDS)}")
    if not accelerators >= 0:
        raise ValueError(f"accel.ray.remote: accelerators={accelerators!r} (must be a number >= 0)")

    def wrap(target):
        ray = _ray()
        # A copy per target: one decorator used twice must give the second the same options (popping from the
        # decorator's own dict dropped the second's resources, and set max_calls for a class, which Ray refuses).
        target_options = dict(options)
        resources = dict(target_options.pop("resources", None) or {})
        if accelerators > 0:
            resources[f"accel_{kind}"] = accelerators
        if inspect.isclass(target):
            original_init = target.__init__

            @functools.wraps(original_init)
            def __init__(self, *args, **kwargs):
                init_worker()
                original_init(self, *args, **kwargs)

            target = type(target.__name__, (target,), {"__init__": __init__, "__module__": target.__module__})
            return ray.remote(resources=resources, **target_options)(target)
        target_options.setdefault("max_calls", 1)

        @functools.wraps(target)
        def run(*args, **kwargs):
            init_worker()
            return target(*args, **kwargs)

        return ray.remote(resources=resources, **target_options)(run)

    if function_or_class is not None:
        return wrap(function_or_class)
    return wrap
