import importlib
import os
import subprocess
import sys
import textwrap

import pytest

# What this run must have (tests/python/CMakeLists.txt sets it when the
# interpreter is build/pyenv's): a missing one fails instead of skipping.
REQUIRED = {name for name in os.environ.get("ACCEL_PYTHON_REQUIRE", "").split(",") if name}


def optional_module(name, why, installed_here=True):
    """Imports `name`, or skips the test with `why`; fails where ACCEL_PYTHON_REQUIRE names it.

    `installed_here`: python/requirements-test.txt lists it (the skip says where it comes from)."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        if name in REQUIRED:
            pytest.fail(f"{name} is required here (ACCEL_PYTHON_REQUIRE) but does not import: {e}")
        where = "; scripts/install-deps.sh installs it in build/pyenv" if installed_here else ""
        pytest.skip(f"{name} is not installed ({why}){where}")


def numpy2():
    """numpy, skipping (with the reason) when it is older than 2.0: DLPack 1.x needs numpy 2."""
    import numpy

    if int(numpy.__version__.split(".")[0]) < 2:
        if "numpy2" in REQUIRED:
            pytest.fail(f"numpy 2 is required here (ACCEL_PYTHON_REQUIRE) but numpy is {numpy.__version__}")
        pytest.skip(f"numpy {numpy.__version__} has legacy DLPack only (versioned capsules need numpy >= 2)")
    return numpy


@pytest.fixture
def run_python():
    """Runs a snippet in a fresh interpreter (ACCEL_* variables are read when the instance is created)."""

    def run(code, **env):
        full_env = dict(os.environ)
        full_env.update(env)
        result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    return run
