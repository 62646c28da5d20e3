import os
import subprocess
import sys
import textwrap

import pytest


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
