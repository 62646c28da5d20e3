"""The ctest python.bench: runs `python -m accel.bench` and checks what it reports, not how fast.

    python check_bench.py [bench arguments...]

Runs the bench in a child interpreter (this one, with this environment) with the arguments given, adding
--json when they lack it, parses its JSON report and checks that it has at least one size and that every size
is zero-copy (one data pointer, a write to the original seen through the result) with positive, finite times
(best and median) for both paths, the accel round trip and numpy.from_dlpack. There are no thresholds on the
times: a slow machine or a sanitized build passes. Exits 0 when every check holds, 1 otherwise, saying which
failed.
"""

import json
import math
import subprocess
import sys


def _us(times):
    value = (times or {}).get("median")
    return f"{value:.2f} us" if isinstance(value, (int, float)) else repr(value)


def main(argv):
    args = list(argv)
    if "--json" not in args:
        args.append("--json")
    command = [sys.executable, "-m", "accel.bench", *args]
    print("running:", " ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    sys.stderr.write(result.stderr)
    failures = []
    if result.returncode != 0:
        failures.append(f"the bench exited with status {result.returncode}")
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError as e:
        print(result.stdout)
        print(f"FAIL: the bench's output is not JSON ({e}); it exited with status {result.returncode}")
        return 1

    results = report.get("results") or []
    if not results:
        failures.append("the report has no results")
    for r in results:
        size = f"{r.get('elements')} elements"
        if r.get("zero_copy") is not True:
            failures.append(f"{size}: not zero-copy (same_pointer={r.get('same_pointer')}, "
                            f"shared_write={r.get('shared_write')}, pointers={r.get('pointers')})")
        for path in ("accel_round_trip_us", "numpy_from_dlpack_us"):
            times = r.get(path) or {}
            for stat in ("best", "median"):
                value = times.get(stat)
                if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                    failures.append(f"{size}: {path}[{stat!r}] is {value!r}, not a positive time")
        print(f"{size}: zero_copy={r.get('zero_copy')}, medians: accel round trip "
              f"{_us(r.get('accel_round_trip_us'))}, numpy.from_dlpack {_us(r.get('numpy_from_dlpack_us'))}")

    for failure in failures:
        print("FAIL:", failure)
    if failures:
        return 1
    print(f"OK: {len(results)} size(s), each zero-copy with positive times on both paths")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
