"""accel_info_k8s_schema: the Kubernetes outputs checked against the Kubernetes API models (PyPI kubernetes).

- `accel-info export --format dra` for every sim profile: a resource.k8s.io/v1 ResourceSlice that the client's
  V1ResourceSlice model reads with client-side validation and writes back unchanged (an unknown or misnamed field,
  a wrong type or a missing required field fails), within DRA's per-device limits.
- `accel-info export --format nfd`: every line a feature whose label feature.node.kubernetes.io/<name>=<value>
  passes Kubernetes' label syntax (apimachinery's qualified name and label value rules), read into a V1Node.
- deploy/kubernetes/accel-export.yaml: every object read by its model and written back unchanged, and the
  accel-info commands its containers run succeed and print what their consumer reads.

Usage: k8s_schema_test.py --accel-info PATH --profiles DIR --manifest FILE
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys

import kubernetes.client as k8s
import yaml

# apimachinery/pkg/util/validation: a label value / a qualified name's name part, and a DNS-1123 subdomain prefix.
NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


API = k8s.ApiClient()


def round_trip(doc, model):
    """Reads `doc` into `model` (client-side validation on) and writes it back: the same document, or a failure."""
    try:
        obj = API.deserialize(json.dumps(doc), model, "application/json")
    except (ValueError, TypeError) as e:
        check(False, f"{model}: the model refuses the document: {e}")
        return None
    back = API.sanitize_for_serialization(obj)
    check(back == doc, f"{model}: not the same document after the model read it (an unknown, misnamed or "
                       f"mistyped field):\n  in:  {json.dumps(doc, sort_keys=True)[:2000]}\n  out: "
                       f"{json.dumps(back, sort_keys=True)[:2000]}")
    return obj


def accel_info(tool, *args, profile=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCEL_")}
    env["ACCEL_BACKENDS"] = "sim"
    if profile:
        env["ACCEL_SIM_PROFILE"] = profile
    proc = subprocess.run([tool, *args], capture_output=True, text=True, env=env, timeout=120)
    check(proc.returncode == 0, f"accel-info {' '.join(args)} ({profile}): exit {proc.returncode}: {proc.stderr}")
    check("Sanitizer" not in proc.stderr, f"accel-info {' '.join(args)}: sanitizer report:\n{proc.stderr}")
    return proc.stdout


def check_dra(text, where):
    doc = json.loads(text)
    check(doc.get("apiVersion") == "resource.k8s.io/v1" and doc.get("kind") == "ResourceSlice", f"{where}: {doc}")
    obj = round_trip(doc, "V1ResourceSlice")
    if obj is None:
        return
    spec = obj.spec
    check(DNS_SUBDOMAIN.match(spec.driver) and len(spec.driver) <= 63, f"{where}: driver {spec.driver!r}")
    check(DNS_SUBDOMAIN.match(obj.metadata.name), f"{where}: metadata.name {obj.metadata.name!r}")
    check(spec.node_name and DNS_SUBDOMAIN.match(spec.node_name), f"{where}: nodeName {spec.node_name!r}")
    check(spec.pool.resource_slice_count >= 1 and spec.pool.generation >= 0, f"{where}: pool {spec.pool}")
    check(1 <= len(spec.devices) <= 128, f"{where}: {len(spec.devices)} devices (a slice holds 1 to 128)")
    names = [d.name for d in spec.devices]
    check(len(set(names)) == len(names), f"{where}: duplicate device names {names}")
    for d in spec.devices:
        check(DNS_LABEL.match(d.name), f"{where}: device name {d.name!r} is not a DNS label")
        attrs = d.attributes or {}
        caps = d.capacity or {}
        check(len(attrs) + len(caps) <= 32, f"{where}: {d.name}: {len(attrs)} attributes + {len(caps)} capacities")
        for key, value in attrs.items():
            check(C_IDENTIFIER.match(key) and len(key) <= 32, f"{where}: {d.name}: attribute name {key!r}")
            set_fields = [f for f in ("bool", "int", "string", "version") if getattr(value, f) is not None]
            check(len(set_fields) == 1, f"{where}: {d.name}.{key}: exactly one value type, got {set_fields}")
            if value.string is not None:
                check(len(value.string) <= 64, f"{where}: {d.name}.{key}: string longer than 64")
        check("memory" in caps and int(caps["memory"].value) > 0, f"{where}: {d.name}: memory capacity {caps}")


def check_nfd(text, where):
    labels = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, eq, value = line.partition("=")
        check(eq == "=", f"{where}: not a <name>=<value> line: {line!r}")
        key = f"feature.node.kubernetes.io/{name}"
        prefix, _, part = key.partition("/")
        check(len(prefix) <= 253 and DNS_SUBDOMAIN.match(prefix), f"{where}: label prefix of {key!r}")
        check(len(part) <= 63 and NAME_PART.match(part), f"{where}: label name {key!r}")
        check(value == "" or (len(value) <= 63 and NAME_PART.match(value)), f"{where}: label value {key}={value!r}")
        check(key not in labels, f"{where}: {key} twice")
        labels[key] = value
    check(len(labels) > 0, f"{where}: no features")
    round_trip({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1", "labels": labels}}, "V1Node")
    return labels


MODELS = {
    ("v1", "ServiceAccount"): "V1ServiceAccount",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "V1ClusterRole",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "V1ClusterRoleBinding",
    ("apps/v1", "DaemonSet"): "V1DaemonSet",
}


def check_manifest(tool, path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    kinds = [(d.get("apiVersion"), d.get("kind")) for d in docs]
    check(("apps/v1", "DaemonSet") in kinds, f"{path}: no DaemonSet ({kinds})")
    for doc in docs:
        model = MODELS.get((doc.get("apiVersion"), doc.get("kind")))
        if not check(model is not None, f"{path}: unexpected object {doc.get('apiVersion')} {doc.get('kind')}"):
            continue
        round_trip(doc, model)
        if doc["kind"] != "DaemonSet":
            continue
        spec = doc["spec"]
        check(spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items(),
              f"{path}: the selector does not match the pod template's labels")
        mounts = {v["name"] for v in spec["template"]["spec"]["volumes"]}
        commands = []
        for container in spec["template"]["spec"]["containers"]:
            for mount in container.get("volumeMounts", []):
                check(mount["name"] in mounts, f"{path}: {container['name']} mounts unknown volume {mount['name']}")
            script = "\n".join(container.get("args", []))
            commands += [line.strip() for line in script.splitlines() if line.strip().startswith("accel-info ")]
        check(len(commands) == 2, f"{path}: expected the nfd and dra accel-info commands, got {commands}")
        for command in commands:
            words = shlex.split(command.split("|")[0].split(">")[0].replace('"$NODE_NAME"', "worker-1"))
            out = accel_info(tool, *words[1:], profile="h100-sxm-8")
            if "nfd" in words:
                check_nfd(out, f"{path}: `{command}`")
            elif "dra" in words:
                check_dra(out, f"{path}: `{command}`")
                check(json.loads(out)["spec"]["nodeName"] == "worker-1", f"{path}: --node-name not applied")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accel-info", required=True)
    parser.add_argument("--profiles", required=True)
    parser.add_argument("--manifest", required=True)
    args = parser.parse_args()
    profiles = sorted(p[:-5] for p in os.listdir(args.profiles) if p.endswith(".json"))
    check(len(profiles) >= 5, f"{args.profiles}: {profiles}")
    for profile in profiles:
        check_dra(accel_info(args.accel_info, "export", "--format", "dra", "--node-name", "worker-1",
                             profile=profile), f"dra {profile}")
        check_nfd(accel_info(args.accel_info, "export", "--format", "nfd", profile=profile), f"nfd {profile}")
    check_manifest(args.accel_info, args.manifest)
    # The checks can fail: a slice with a field the API does not have is refused.
    bad = json.loads(accel_info(args.accel_info, "export", "--format", "dra", profile="h100-sxm-8"))
    bad["spec"]["devices"][0]["attributez"] = {}
    before = len(failures)
    round_trip(bad, "V1ResourceSlice")
    check(len(failures) == before + 1, "a misnamed field was not noticed")
    del failures[before:]
    for f in failures:
        print(f"FAIL {f}")
    print(f"{'FAIL' if failures else 'PASS'}: {len(profiles)} profiles (dra, nfd) and {args.manifest}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
