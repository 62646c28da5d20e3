"""What a DLPack round trip through accel costs, next to numpy's own DLPack exchange.

``python -m accel.bench`` measures, for float32 arrays of a few sizes (1, 1 Ki and 1 Mi elements by default):

- **accel round trip**: ``numpy.from_dlpack(accel.from_dlpack(x))``, numpy -> accel -> numpy: numpy exports a
  capsule, accel imports it (``accel_buffer_import`` of the host pointer) as an ``accel.Array``, the array
  exports a capsule of its own and numpy imports that;
- **numpy.from_dlpack**: ``numpy.from_dlpack(x)``, numpy's export and import of the same array, the floor any
  DLPack exchange starts from.

Each timed call also drops its result, so the release chain (numpy's view, the accel export, the accel buffer,
numpy's original capsule) is part of the time. Both paths share memory instead of copying it, so the time is
per-call overhead and should not grow with the size; the bench checks that, for each size, before timing: ``x``,
the accel array and the result have one data pointer (``x.ctypes.data == Array.data_ptr == result.ctypes.data``)
and a write to ``x`` is seen through the result. A size that is not zero-copy is reported as such and makes the
exit status 1.

Timing is timeit's: ``--repeat`` runs of ``--iterations`` calls each, with the garbage collector off; the
report gives, per call in microseconds, the best run and the median run. It has no thresholds: it reports and
does not judge. The numbers depend on the build: a sanitized or Debug build of Accel (the report names it) is
many times slower than a Release one.

    python -m accel.bench [--iterations N] [--repeat R] [--sizes 1,1Ki,1Mi] [--device D] [--json]

``--device`` is an index or a stable id (default: the first visible device). For a device whose DLPack device
is not the host's ``(kDLCPU, 0)`` (simulated devices are ``kDLExtDev``), numpy is asked for host memory with
``numpy.from_dlpack(..., device="cpu")`` on both paths. ``--json`` prints one JSON object instead of the table.
Only the standard library and numpy are used.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
import timeit

import numpy

import accel

DTYPE = "float32"
DEFAULT_SIZES = (1, 1 << 10, 1 << 20)
_UNITS = {"": 1, "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30}
_KDLCPU = 1


def parse_sizes(text: str) -> list[int]:
    """'1,1Ki,1Mi' (or one of them) as element counts; Ki, Mi, Gi are powers of 1024."""
    sizes = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*([KkMmGg]i)?\s*", part)
        if match is None:
            raise argparse.ArgumentTypeError(f"{part!r} is not a size (an integer, optionally with Ki, Mi or Gi)")
        count = int(match.group(1)) * _UNITS[(match.group(2) or "").lower()]
        if count < 1:
            raise argparse.ArgumentTypeError(f"{part!r}: a size is at least 1 element")
        sizes.append(count)
    return sizes


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def _device_arg(text: str):
    return int(text) if text.isdigit() else text


def _version(triple) -> str:
    return ".".join(str(part) for part in triple)


def _times_us(call, iterations: int, repeat: int) -> dict[str, float]:
    """Best and median, over `repeat` runs of `iterations` calls, of one call in microseconds."""
    runs = timeit.Timer(call).repeat(repeat=repeat, number=iterations)
    per_call = [run / iterations * 1e6 for run in runs]
    return {"best": min(per_call), "median": statistics.median(per_call)}


def zero_copy_check(x, device, numpy_kwargs: dict) -> dict:
    """Whether the round trip of `x` shares its memory: one data pointer, and a write to `x` read back through the
    result (the result may be read-only: numpy < 2 makes every DLPack import read-only)."""
    a = accel.from_dlpack(x, device=device)
    y = numpy.from_dlpack(a, **numpy_kwargs)
    # Memory without a host address (a device that copied instead of importing) has no data_ptr.
    pointers = {"numpy": x.ctypes.data, "accel": a.data_ptr if a.host_visible else None,
                "round_trip": y.ctypes.data}
    same_pointer = len(set(pointers.values())) == 1
    old = x[-1].copy()
    x[-1] = numpy.float32(-12345.5)
    shared_write = bool(y[-1] == x[-1])
    x[-1] = old
    return {
        "zero_copy": same_pointer and shared_write,
        "same_pointer": same_pointer,
        "shared_write": shared_write,
        "pointers": pointers,
    }


def bench_size(n: int, iterations: int, repeat: int, device, numpy_kwargs: dict) -> dict:
    x = numpy.arange(n, dtype=DTYPE)
    check = zero_copy_check(x, device, numpy_kwargs)

    def accel_round_trip():
        numpy.from_dlpack(accel.from_dlpack(x, device=device), **numpy_kwargs)

    def numpy_only():
        numpy.from_dlpack(x, **numpy_kwargs)

    accel_us = _times_us(accel_round_trip, iterations, repeat)
    numpy_us = _times_us(numpy_only, iterations, repeat)
    return {
        "elements": n,
        "dtype": DTYPE,
        "nbytes": int(x.nbytes),
        **check,
        "accel_round_trip_us": accel_us,
        "numpy_from_dlpack_us": numpy_us,
        "median_ratio": accel_us["median"] / numpy_us["median"] if numpy_us["median"] > 0 else None,
    }


def run(iterations: int, repeat: int, sizes: list[int], device) -> dict:
    dev = accel.device(device)
    dl_device = tuple(dev.dlpack_device)
    # numpy imports kDLCPU tensors only; other DLPack devices are asked for host memory (a copy where the
    # memory has no host address, which the zero-copy check then reports).
    numpy_kwargs = {} if dl_device == (_KDLCPU, 0) else {"device": "cpu"}
    version = accel.version()
    return {
        "benchmark": "accel.bench: DLPack round trip numpy -> accel -> numpy vs numpy.from_dlpack",
        "unit": "microseconds per call",
        "accel": {"library_version": _version(version["library_version"]), "build": version["build"]},
        "numpy": numpy.__version__,
        "python": platform.python_version(),
        "device": {
            "index": dev.index,
            "name": dev.name,
            "backend": dev.backend,
            "kind": dev.kind,
            "stable_id": dev.stable_id,
            "dlpack_device": list(dl_device),
        },
        "numpy_from_dlpack_kwargs": numpy_kwargs,
        "iterations": iterations,
        "repeat": repeat,
        "results": [bench_size(n, iterations, repeat, dev, numpy_kwargs) for n in sizes],
    }


def _size_name(n: int) -> str:
    for suffix, unit in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if n % unit == 0:
            return f"{n // unit} {suffix}"
    return str(n)


def print_table(report: dict, out=sys.stdout) -> None:
    d = report["device"]
    kwargs = ", ".join(f"{k}={v!r}" for k, v in report["numpy_from_dlpack_kwargs"].items())
    call = f"numpy.from_dlpack(..{', ' + kwargs if kwargs else ''})"
    print("DLPack round trip numpy -> accel -> numpy, next to numpy's own numpy.from_dlpack", file=out)
    print(f"  accel round trip : {call.replace('..', 'accel.from_dlpack(x)')}", file=out)
    print(f"  numpy.from_dlpack: {call.replace('..', 'x')}", file=out)
    print(f"accel {report['accel']['library_version']} ({report['accel']['build']}), numpy {report['numpy']}, "
          f"Python {report['python']}", file=out)
    print(f"device {d['index']}: {d['name']} ({d['backend']}, {d['kind']}), DLPack device "
          f"{tuple(d['dlpack_device'])}", file=out)
    print(f"{DTYPE}; per call in microseconds, best / median of {report['repeat']} runs x "
          f"{report['iterations']} calls (each call includes releasing its result)", file=out)
    print(file=out)
    header = (f"{'elements':>10} {'bytes':>10}  {'zero-copy':<9}  {'accel round trip':>21}  "
              f"{'numpy.from_dlpack':>21}  {'median ratio':>12}")
    print(header, file=out)
    print("-" * len(header), file=out)
    for r in report["results"]:
        a, n = r["accel_round_trip_us"], r["numpy_from_dlpack_us"]
        zero_copy = "yes" if r["zero_copy"] else "NO"
        ratio = f"{r['median_ratio']:.1f}x" if r["median_ratio"] is not None else "-"
        print(f"{_size_name(r['elements']):>10} {r['nbytes']:>10}  {zero_copy:<9}  "
              f"{a['best']:>9.2f} / {a['median']:>9.2f}  {n['best']:>9.2f} / {n['median']:>9.2f}  {ratio:>12}",
              file=out)
    print(file=out)
    bad = [r for r in report["results"] if not r["zero_copy"]]
    if not bad:
        print("zero-copy: every round trip returned the original memory (x.ctypes.data == Array.data_ptr == "
              "result.ctypes.data, and a write to x was seen through the result)", file=out)
    for r in bad:
        print(f"NOT zero-copy at {r['elements']} elements: pointers {r['pointers']}, same pointer "
              f"{r['same_pointer']}, write to x seen through the result {r['shared_write']}", file=out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m accel.bench",
        description="Times a DLPack round trip numpy -> accel -> numpy next to numpy.from_dlpack of the same "
        "array, and checks that it is zero-copy.")
    parser.add_argument("--iterations", type=_positive, default=1000, help="calls per timing run (default 1000)")
    parser.add_argument("--repeat", type=_positive, default=5,
                        help="timing runs; the best and the median are reported (default 5)")
    parser.add_argument("--sizes", type=parse_sizes, action="extend", metavar="N[,N...]",
                        help="float32 element counts, comma-separated, with optional Ki/Mi/Gi suffixes; "
                        "may repeat (default 1,1Ki,1Mi)")
    parser.add_argument("--device", type=_device_arg, default=None,
                        help="device index or stable id (default: the first visible device)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args(argv)
    try:
        report = run(args.iterations, args.repeat, args.sizes or list(DEFAULT_SIZES), args.device)
    except (accel.AccelError, BufferError, RuntimeError, TypeError) as e:
        print(f"accel.bench: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        print_table(report)
    return 0 if all(r["zero_copy"] for r in report["results"]) else 1


if __name__ == "__main__":
    sys.exit(main())
