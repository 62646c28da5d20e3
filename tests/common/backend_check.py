"""What the vendor backends' accel-info checks share (tests/cuda/cuda_test.py, tests/hip/hip_test.py,
tests/level_zero/level_zero_test.py), and the OpenCL, Vulkan and conformance drivers' runs of a sanitized process
(run_process): accel-info run in a fresh process with a chosen environment, and the check that a backend without its
runtime reports zero devices and the exact reason while the host backend loads beside it.
"""
import json
import os
import subprocess
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def lsan_failed_itself(output):
    """LeakSanitizer's own exit-time failure (its tracer thread crashing while it stops a process with many runtime
    threads, seen rarely under load with PoCL): no leak report, and nothing the code under test did."""
    return ("LeakSanitizer has encountered a fatal error" in output and "Direct leak" not in output
            and "Indirect leak" not in output)


def run_process(cmd, **kwargs):
    """subprocess.run(cmd, **kwargs), once more, saying so, when LeakSanitizer itself failed at exit."""
    p = subprocess.run(cmd, **kwargs)
    if lsan_failed_itself((p.stdout or "") + (p.stderr or "")):
        print("note: LeakSanitizer itself failed at exit (no leak reported); running once more", flush=True)
        p = subprocess.run(cmd, **kwargs)
    return p


def run(cmd, env, timeout=300):
    print("+ " + " ".join(cmd), flush=True)
    p = run_process(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=timeout)
    if p.stderr.strip():
        print(p.stderr.strip()[-4000:])
    return p


def environment(backends, **changes):
    """This process's environment with ACCEL_BACKENDS=`backends`, no backend-file overrides, and `changes` (a None
    value removes the variable)."""
    env = dict(os.environ)
    env["ACCEL_BACKENDS"] = backends
    env.pop("ACCEL_BACKEND_FILES", None)
    env.pop("ACCEL_ADD_BACKEND_FILES", None)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def accel_info_json(accel_info, env):
    p = run([accel_info, "--json"], env)
    if p.returncode != 0:
        fail(f"accel-info --json exited {p.returncode}")
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        fail(f"accel-info --json printed no JSON: {e}")


def check_unavailable(accel_info, backend, label, needles, **settings):
    """With `settings` in the environment, `backend` (shown as `label`) reports zero devices and
    ACCEL_ERROR_BACKEND_UNAVAILABLE with every needle in its reason, in --json's loader entry and in --loader-debug;
    the host backend beside it still loads (the failure takes nothing else down)."""
    doc = accel_info_json(accel_info, environment(backend + ",host", **settings))
    paths = [a for d in doc["physical_devices"] for a in d["access_paths"]]
    if [a for a in paths if a["backend"] == backend]:
        fail(f"{label} access paths without a runtime: {paths}")
    if not [a for a in paths if a["backend"] == "host"]:
        fail(f"the host backend reported no device beside the failed {label} backend: {doc['loader']}")
    entries = [e for e in doc["loader"] if e["backend"] == backend]
    if len(entries) != 1:
        fail(f"the loader report has {len(entries)} {backend} entries: {doc['loader']}")
    entry = entries[0]
    if entry["device_count"] != 0 or entry["status"] != "ACCEL_ERROR_BACKEND_UNAVAILABLE":
        fail(f"loader entry {entry}: expected 0 devices and ACCEL_ERROR_BACKEND_UNAVAILABLE")
    for n in needles:
        if n not in entry["reason"]:
            fail(f"the loader entry's reason {entry['reason']!r} does not say {n!r}")
    p = run([accel_info, "--loader-debug"], environment(backend, **settings))
    if p.returncode != 0:
        fail(f"accel-info --loader-debug exited {p.returncode}: a missing runtime is not an error")
    if "No devices found" not in p.stdout:
        fail("accel-info does not say it found no devices")
    for n in needles:
        if n not in p.stdout:
            fail(f"accel-info --loader-debug does not show the reason ({n!r}):\n{p.stdout}")
    print(f"PASS: zero {label} devices, reason: {entry['reason']}")
