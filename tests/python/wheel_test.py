"""python.wheel: `pip wheel ./python` builds a wheel that installs into a fresh virtual environment and finds its
backends relative to the installed library (python/README.md, "As a package").

Usage: wheel_test.py SOURCE_DIR WORK_DIR. Builds with the running interpreter's scikit-build-core and pybind11
(build/pyenv has them: python/requirements-test.txt), without build isolation, so no network is needed;
installs the wheel with --no-index into WORK_DIR/venv (no numpy there: the package works without it), then runs
a check from WORK_DIR with a clean environment.
"""
import glob
import os
import shutil
import subprocess
import sys
import textwrap

CHECK = textwrap.dedent(
    """
    import os, sys
    import accel
    site = os.path.dirname(os.path.dirname(accel.__file__))
    assert accel.__file__.startswith(sys.prefix), (accel.__file__, sys.prefix)
    report = {e["backend"]: e for e in accel.loader_report()}
    for name in os.environ["ACCEL_BACKENDS"].split(","):
        entry = report[name]
        assert entry["state"] == "loaded", entry
        assert entry["library"].startswith(os.path.join(site, "accel", "lib")), entry
        assert entry["manifest"].startswith(os.path.join(site, "accel", "share")), entry
    devices = accel.devices()
    backends = sorted({d.backend for d in devices})
    if os.environ.get("ACCEL_SIM_PROFILE"):
        assert backends == ["sim"] and len(devices) == 8, devices
        assert devices[0].link(1)["link_class"] == "FABRIC"
    else:
        assert backends == ["host"], devices
    a = accel.zeros(16, "uint8")
    assert bytes(memoryview(a)) == bytes(16)
    assert type(a.__dlpack__(max_version=(1, 0))).__name__ == "PyCapsule"
    print("wheel ok:", accel.__file__, [(d.index, d.name, d.backend) for d in devices[:2]])
    """
)


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def main():
    source, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCEL_", "LD_PRELOAD", "ASAN_", "PYTHONPATH"))}
    # python/ (python/pyproject.toml) and the repository root (pyproject.toml) build the same package; the
    # second build mostly hits ccache.
    for name, project in (("python", os.path.join(source, "python")), ("root", source)):
        wheels = os.path.join(work, name, "wheels")
        build_args = [
            sys.executable, "-m", "pip", "wheel", project, "--no-build-isolation", "--no-deps", "-w", wheels,
            f"--config-settings=build-dir={os.path.join(work, name, 'build')}",
        ]
        if shutil.which("ccache"):
            build_args.append("--config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache")
            build_args.append("--config-settings=cmake.define.CMAKE_C_COMPILER_LAUNCHER=ccache")
        run(build_args, env=env)
        (wheel,) = glob.glob(os.path.join(wheels, "accel-*.whl"))
        venv = os.path.join(work, name, "venv")
        run(["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable, "-m", "venv", venv],
            env=env)
        python = os.path.join(venv, "bin", "python")
        run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheel], env=env)
        # From another folder, with nothing of the build tree in the environment.
        run([python, "-c", CHECK], cwd=work, env=dict(env, ACCEL_BACKENDS="host,sim"))
        run([python, "-c", CHECK], cwd=work, env=dict(env, ACCEL_BACKENDS="sim", ACCEL_SIM_PROFILE="h100-sxm-8"))


if __name__ == "__main__":
    main()
