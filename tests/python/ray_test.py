"""python.ray: accel.ray on a real local Ray cluster (PyPI ray) of simulated nodes (docs/ray.md).

Run by ctest (tests/python/CMakeLists.txt) with ACCEL_TOOLS_DIR naming the build's accel-info and accel-plan.
Each Ray node is a raylet of its own on this machine with its own ACCEL_* environment (ray.cluster_utils.Cluster),
so every node is a different simulated machine.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

ray = pytest.importorskip("ray", reason="PyPI ray is not installed (python/requirements-test.txt installs it)")
from ray.cluster_utils import Cluster  # noqa: E402
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy  # noqa: E402

import accel  # noqa: E402
import accel.ray as aray  # noqa: E402

GIB = 1 << 30


def sim_env(profile, **extra):
    env = {"ACCEL_BACKENDS": "sim,host", "ACCEL_SIM_PROFILE": profile}
    env.update(extra)
    return env


def add_node(cluster, name, env):
    """A raylet whose devices are those `env` makes accel-info see, configured by accel.ray.node_config."""
    full = dict(os.environ)
    full.update(env)
    config = aray.node_config(node_name=name, env=full)
    os.environ.update(config["env"])  # RAY_custom_unit_instance_resources, for the GCS too
    return cluster.add_node(
        num_cpus=2, resources=config["resources"], labels=config["labels"], env_vars={**env, **config["env"]}
    ), config


@pytest.fixture(scope="module")
def cluster():
    os.environ["RAY_custom_unit_instance_resources"] = "accel_gpu"
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    c = Cluster()
    configs = {}
    # n0: four A100 PCIe cards, no NVLink (each card a clique of its own); n1: four H100 SXM of one NVLink clique,
    # whose Ray empties CUDA_VISIBLE_DEVICES in a task asking for no Ray GPU (RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO).
    _, configs["n0"] = add_node(c, "n0", sim_env("a100-pcie-4", ACCEL_TOPOLOGY_DOMAINS="rack=r0"))
    _, configs["n1"] = add_node(
        c,
        "n1",
        sim_env(
            "h100-sxm-8",
            ACCEL_VISIBLE_DEVICES="0,1,2,3,4",
            ACCEL_TOPOLOGY_DOMAINS="rack=r1",
            RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO="1",
        ),
    )
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    c.wait_for_nodes()
    yield c, configs
    ray.shutdown()
    c.shutdown()


def test_node_config_names_every_device_by_its_physical_id():
    env = dict(os.environ, **sim_env("h100-sxm-8"))
    config = aray.node_config(node_name="node-a", env=env)
    report = json.loads(subprocess.run([aray.tool_path("accel-info"), "--json"], env=env, capture_output=True,
                                       text=True, check=True).stdout)
    gpus = [p["stable_id"] for p in report["physical_devices"] if p["kind"] == "gpu"]
    assert len(gpus) == 8
    assert config["resources"]["accel_gpu"] == 8
    assert config["resources"]["accelerator_type:nvidia-h100-sxm5-80gb"] == 1
    assert [config["labels"][f"accel.dev/gpu-{k}"] for k in range(8)] == gpus
    assert config["labels"]["accel.dev/node"] == "node-a"
    assert config["env"] == {"RAY_custom_unit_instance_resources": "accel_gpu"}
    assert config["command"].startswith("RAY_custom_unit_instance_resources=accel_gpu ray start --resources=")


@aray.remote(accelerators=0.25, num_cpus=0, label_selector={"accel.dev/node": "n1"})
def quarter_task():
    import accel as a

    gpus = [p.properties for p in a.physical_devices() if p.properties["kind"] == "gpu"]
    mine = aray.assigned_devices()["gpu"]
    device = [d for d in a.devices() if d.kind == "gpu"][0]
    total = device.memory_info()[1]
    within = a.empty(int(total * 0.9), dtype="uint8", device=device)  # 90% of the share: fits
    try:
        a.empty(total // 5, dtype="uint8", device=device)  # another 20% of the share: past it
        refused = None
    except a.AccelError as e:
        refused = (e.status_name, str(e))
    del within
    return {
        "visible_gpus": [p["stable_id"] for p in gpus],
        "assigned": mine,
        "total": total,
        "physical_total": gpus[0]["memory_total"] if gpus else 0,
        "refused": refused,
        "env": {k: os.environ.get(k) for k in ("ACCEL_VISIBLE_DEVICES", "ACCEL_MEMORY_LIMIT", "CUDA_VISIBLE_DEVICES")},
    }


def test_a_quarter_task_sees_only_its_device_and_is_stopped_at_its_share(cluster):
    _, configs = cluster
    result = ray.get(quarter_task.remote(), timeout=120)
    (assigned,) = result["assigned"]
    assert assigned["fraction"] == pytest.approx(0.25)
    expected = configs["n1"]["labels"][f"accel.dev/gpu-{assigned['instance']}"]
    assert result["visible_gpus"] == [expected], result
    assert result["total"] == result["physical_total"] // 4, result  # the limit reads as the device's total
    assert result["refused"] is not None, result
    status, message = result["refused"]
    assert status == "ACCEL_ERROR_RESOURCE_EXHAUSTED", message
    assert "ACCEL_MEMORY_LIMIT" in message, message
    assert result["env"]["ACCEL_MEMORY_LIMIT"] == f"{expected}=25%"
    # Ray emptied it on n1 (no Ray GPU asked for); init_worker removed it again, as the worker had none: a real
    # node's CUDA backend would have seen no GPU.
    assert result["env"]["CUDA_VISIBLE_DEVICES"] is None, result["env"]


@aray.remote(accelerators=0.5, num_cpus=0, label_selector={"accel.dev/node": "n0"})
class HalfActor:
    def __init__(self, size):
        import accel as a

        (self.device,) = [d for d in a.devices() if d.kind == "gpu"]
        self.kept = a.empty(size, dtype="uint8", device=self.device)  # allocated in __init__, after the setup

    def where(self):
        physical = self.device.physical_device.properties["stable_id"]
        return physical, self.device.memory_info()[1], aray.assigned_devices()["gpu"]


def test_an_actor_is_set_up_before_its_init_runs(cluster):
    _, configs = cluster
    actor = HalfActor.remote(1 << 20)
    stable_id, total, assigned = ray.get(actor.where.remote(), timeout=120)
    (mine,) = assigned
    assert mine["fraction"] == pytest.approx(0.5)
    assert stable_id == configs["n0"]["labels"][f"accel.dev/gpu-{mine['instance']}"]
    assert total == (40 << 30) // 2  # a100-pcie-4: 40 GiB, half of it
    ray.kill(actor)


@aray.remote(accelerators=1, num_cpus=0)
def bundle_task():
    import accel as a

    labels = ray.get_runtime_context().get_node_labels()
    gpus = [p.properties["stable_id"] for p in a.physical_devices() if p.properties["kind"] == "gpu"]
    return {"node": labels["accel.dev/node"], "gpus": gpus}


def test_a_four_bundle_gang_lands_inside_one_clique(cluster):
    _, configs = cluster
    description = aray.cluster_description()
    assert sorted(n["node"]["id"] for n in description["nodes"]) == ["n0", "n1"]
    group, plan = aray.placement_group([{"devices": 1}] * 4, strategy="STRICT_PACK", level="clique")
    assert plan.placed and len(plan.devices) == 4
    assert {d["node"] for d in plan.devices} == {"n1"}  # n0's cards are four cliques of one
    assert len(plan.domains) == 1 and plan.domains[0].startswith("n1/")
    ray.get(group.ready(), timeout=60)
    results = ray.get(
        [
            bundle_task.options(scheduling_strategy=PlacementGroupSchedulingStrategy(group, i)).remote()
            for i in range(4)
        ],
        timeout=180,
    )
    assert {r["node"] for r in results} == {"n1"}, results
    seen = [g for r in results for g in r["gpus"]]
    assert all(len(r["gpus"]) == 1 for r in results), results
    assert len(set(seen)) == 4, results  # four distinct devices
    (n1,) = [n for n in description["nodes"] if n["node"]["id"] == "n1"]
    clique = {d["id"]: d.get("clique") for d in n1["devices"]}  # a device's id is its physical id
    cliques = {clique.get(g) for g in seen}
    assert len(cliques) == 1 and None not in cliques, (cliques, clique)
    ray.util.remove_placement_group(group)


@ray.remote(resources={"accel_gpu": 2}, num_cpus=0, label_selector={"accel.dev/node": "n1"})
class Holder:
    def ready(self):
        return True


def test_devices_ray_has_handed_out_are_not_planned_again(cluster):
    holder = Holder.remote()
    ray.get(holder.ready.remote(), timeout=60)
    try:
        description = aray.cluster_description()
        (n1,) = [n for n in description["nodes"] if n["node"]["id"] == "n1"]
        assert len([d for d in n1["devices"] if d["kind"] == "gpu"]) == 2  # 4 GPUs, 2 held
        with pytest.raises(RuntimeError, match="STRICT_PACK at clique"):
            aray.placement_group([{"devices": 1}] * 3, strategy="STRICT_PACK", level="clique", cluster=description)
        plan = aray.plan_gang([{"devices": 1}] * 2, strategy="STRICT_PACK", level="clique", cluster=description)
        assert plan.placed and {d["node"] for d in plan.devices} == {"n1"}
    finally:
        ray.kill(holder)


def test_a_gang_no_clique_can_hold_is_refused_with_the_planners_reason(cluster):
    with pytest.raises(RuntimeError, match="STRICT_PACK at clique"):
        aray.placement_group([{"devices": 1}] * 6, strategy="STRICT_PACK", level="clique")


def test_bad_gangs_are_refused_before_ray_is_asked():
    with pytest.raises(ValueError, match="strategy 'TIGHT'"):
        aray.plan_gang([{"devices": 1}], strategy="TIGHT", cluster={"format_version": "1.0", "nodes": []})
    with pytest.raises(ValueError, match="no bundles"):
        aray.plan_gang([], cluster={"format_version": "1.0", "nodes": []})
    with pytest.raises(ValueError, match="unknown field 'gpus'"):
        aray.plan_gang([{"gpus": 1}], cluster={"format_version": "1.0", "nodes": []})
    with pytest.raises(RuntimeError, match="share"):
        aray.plan_gang([{"devices": 1, "share": 2}], cluster={"format_version": "1.0", "nodes": []})


def test_init_worker_outside_a_worker_says_so():
    with pytest.raises(RuntimeError, match="not in a Ray worker"):
        aray.assigned_devices()
