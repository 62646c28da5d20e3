"""Loads the conformance corpus's vadd_f32 kernel, launches c = a + b on a stream and checks it against numpy.

    python vector_add.py [CORPUS_DIR]

CORPUS_DIR is the built kernel corpus (<build>/share/accel/conformance/corpus); without it the environment
variable ACCEL_TEST_CORPUS names it. The module is given in two formats, native-host (a shared library) and
opencl-c (source); accel.load_module loads the first one the device executes. Exits 0 when every element
matches, 1 on a mismatch or when an Accel call fails, 2 when no corpus is found.
"""

import os
import sys

import numpy as np

import accel

N = 1000  # not a multiple of the block size: the kernel skips work-items with i >= n

# Where each format of the corpus's kernels lives under the corpus folder (its corpus.json says the same).
SOURCES = {"native-host": "native/libaccel_corpus_native.so", "opencl-c": "opencl-c/corpus.cl"}


def corpus_dir():
    if len(sys.argv) > 2:
        print(f"usage: {sys.argv[0]} [CORPUS_DIR]", file=sys.stderr)
        sys.exit(2)
    path = sys.argv[1] if len(sys.argv) == 2 else os.environ.get("ACCEL_TEST_CORPUS")
    if not path:
        print(f"usage: {sys.argv[0]} CORPUS_DIR (or set ACCEL_TEST_CORPUS to the kernel corpus folder, "
              "<build>/share/accel/conformance/corpus)", file=sys.stderr)
        sys.exit(2)
    return path


def main():
    root = corpus_dir()
    # {format: path}: load_module tries them in this order and loads the first the device can execute.
    sources = {fmt: os.path.join(root, rel) for fmt, rel in SOURCES.items() if os.path.exists(os.path.join(root, rel))}
    if not sources:
        print(f"vector_add: {root} holds none of {', '.join(SOURCES.values())}", file=sys.stderr)
        return 2
    device = accel.device()  # the first visible device
    module = accel.load_module(sources, device=device)
    kernel = module["vadd_f32"]
    print(f"device: {device}")
    print(f"module: {module.format} from {sources[module.format]} (offered: {', '.join(sources)})")
    print(f"kernel: {kernel.name}(" + ", ".join(f"{a['kind']} {a['name']}" for a in kernel.arguments) + ")")

    rng = np.random.default_rng(7)
    a_host = rng.standard_normal(N, dtype=np.float32)
    b_host = rng.standard_normal(N, dtype=np.float32)
    c_host = np.full(N, np.nan, dtype=np.float32)  # NaN: an element the kernel does not write cannot match
    a = accel.asarray(a_host)  # host-visible devices use numpy's memory in place; others get a copy
    b = accel.asarray(b_host)
    c = accel.asarray(c_host)

    # Geometry (docs/kernels.md): `grid` counts work-groups, `block` is the work-group size.
    block = min(256, kernel.max_work_group_size)
    grid = (N + block - 1) // block
    with accel.Stream(device) as stream:  # leaving the block waits for the stream
        # Arguments in the kernel's order: buffers take accel arrays, the 4-byte scalar n takes an int.
        stream.launch(kernel, grid, block, a, b, c, N)
    print(f"launched grid={grid} x block={block} for n={N}")

    result = c.copy_to_host()
    expected = a_host + b_host
    bad = np.flatnonzero(result != expected)
    if bad.size:
        print(f"MISMATCH at {bad.size} of {N} elements; first: " +
              ", ".join(f"c[{i}] = {result[i]} (expected {expected[i]})" for i in bad[:5]), file=sys.stderr)
        return 1
    print(f"ok: all {N} elements of c equal a + b (c[:3] = {result[:3]})")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except accel.AccelError as e:
        print(f"vector_add: {e.status_name}: {e}", file=sys.stderr)
        sys.exit(1)
