"""Modules, kernels and launches from Python, on the conformance corpus (conformance/corpus/README.md)."""
import json
import os
import pathlib

import pytest

import accel

np = pytest.importorskip("numpy")


def corpus_dir():
    path = os.environ.get("ACCEL_TEST_CORPUS")
    if not path or not (pathlib.Path(path) / "corpus.json").exists():
        pytest.skip("ACCEL_TEST_CORPUS does not name a built kernel corpus (tests/python/CMakeLists.txt sets it)")
    return pathlib.Path(path)


class Corpus:
    """The corpus kernels on the first device, each loaded from every format the corpus has for it."""

    def __init__(self, root):
        self.root = root
        self.manifest = json.loads((root / "corpus.json").read_text())
        self.modules = {}

    def module(self, kernel):
        if kernel not in self.modules:
            sources = {fmt: str(self.root / rel) for fmt, rel in self.manifest["kernels"][kernel].items()}
            self.modules[kernel] = accel.load_module(sources, name="corpus")
        return self.modules[kernel]

    def __getitem__(self, kernel):
        return self.module(kernel)[kernel]


@pytest.fixture(scope="module")
def corpus():
    return Corpus(corpus_dir())


def test_module_properties(corpus):
    m = corpus.module("vadd_f32")
    assert m.format in accel.device().kernel_formats
    assert m.name == "corpus"
    assert "vadd_f32" in m.kernel_names
    assert set(m.kernel_names) <= {"fill_u32", "copy_offset_u32", "vadd_f32", "reduce_u32", "atomic_add_u32"}
    assert m.format in m.available_formats
    assert set(m.available_formats) <= set(accel.kernel_formats())
    assert m.available_formats.index(m.format) == m.source_index


def test_kernel_arguments(corpus):
    k = corpus["vadd_f32"]
    assert [a["name"] for a in k.arguments] == ["a", "b", "c", "n"]
    assert [a["kind"] for a in k.arguments] == ["buffer", "buffer", "buffer", "scalar"]
    # OpenCL cannot declare a buffer write-only (conformance/corpus/README.md)
    assert [a["access"] for a in k.arguments][:2] == ["read", "read"]
    assert k.arguments[2]["access"] in ("write", "read_write") and k.arguments[3]["access"] is None
    assert k.arguments[3]["size"] == 4
    assert k.max_work_group_size >= 64
    assert corpus.module("vadd_f32").kernel("vadd_f32").name == "vadd_f32"


def test_vadd_on_a_stream(corpus):
    n = 1000
    a = accel.asarray(np.arange(n, dtype=np.float32))
    b = accel.asarray(np.full(n, 0.5, dtype=np.float32))
    c = accel.zeros(n, "float32")
    with accel.Stream() as s:
        s.launch(corpus["vadd_f32"], (n + 63) // 64, 64, a, b, c, n)
        # Host access waits for the launch that bound the buffer.
        np.testing.assert_array_equal(np.asarray(c), np.arange(n, dtype=np.float32) + 0.5)


def test_launch_uses_the_current_stream(corpus):
    n = 256
    out = accel.zeros(n, "uint32")
    with accel.Stream() as s:
        assert accel.current_stream() is s
        corpus["fill_u32"].launch(4, 64, out, 7, n)
        assert out.copy_to_host().tolist() == [7] * n
    assert accel.current_stream() is None


def test_launch_on_the_packages_stream(corpus):
    out = accel.zeros((2, 64), "uint32")
    corpus["fill_u32"].launch((2, 1, 1), (64, 1, 1), out, np.uint32(0xDEADBEEF), 128)
    assert (np.asarray(out) == 0xDEADBEEF).all()


def test_a_read_only_array_is_never_bound_for_writing(corpus):
    # An object store replica (ref.get(i)) is shared by every reader of the object: a kernel that writes its
    # argument was given it (the C layer refuses read-only imports only).
    with accel.Runtime(workers=1) as rt:
        ref = rt.put(np.arange(64, dtype=np.uint32))
        replica = ref.get(0)
        assert replica.readonly
        with pytest.raises(accel.AccelError, match="is (write|read_write), and the array is read-only") as info:
            corpus["fill_u32"].launch(1, 64, replica, 5, 64)
        assert info.value.status == accel.Status.ACCEL_ERROR_INVALID_ARGUMENT
        assert np.frombuffer(ref.get().tobytes(), np.uint32).tolist() == list(range(64))
        del replica


def test_views_bind_their_span(corpus):
    # A sliced view binds its own range: the kernel writes only there.
    base = accel.zeros(96, "uint32")
    view = base[32:64]  # the same buffer: the launch is tracked on it
    corpus["fill_u32"].launch(1, 32, view, 5, 32)
    got = np.asarray(base)
    assert got[:32].tolist() == [0] * 32 and got[32:64].tolist() == [5] * 32 and got[64:].tolist() == [0] * 32


def test_reduce_with_local_memory(corpus):
    n, block = 1000, 64
    groups = (n + block - 1) // block
    x = accel.asarray(np.arange(n, dtype=np.uint32))
    partial = accel.zeros(groups, "uint32")
    corpus["reduce_u32"].launch(groups, block, x, partial, n, accel.LocalMemory(block * 4))
    assert int(np.asarray(partial).sum()) == n * (n - 1) // 2
    assert accel.LocalMemory(256).nbytes == 256


def test_work_on_two_streams_is_ordered_by_the_buffers(corpus):
    n = 4096
    data = accel.zeros(n, "uint32")
    out = accel.zeros(n, "uint32")
    s1, s2 = accel.Stream(), accel.Stream()
    corpus["fill_u32"].launch(n // 64, 64, data, 3, n, stream=s1)
    # s2 waits for s1's fill because it binds the same buffer.
    corpus["copy_offset_u32"].launch(n // 64, 64, data, out, 0, 0, n, stream=s2)
    assert (np.asarray(out) == 3).all()
    s1.close()
    s2.close()


@pytest.mark.parametrize(
    "args, message",
    [
        (lambda a, c, n: (a, a, c), "takes 4 arguments, 3 given"),
        (lambda a, c, n: (a, a, c, 2**40), "does not fit in a 4-byte integer"),
        (lambda a, c, n: (a, a, c, np.float64(1)), "declares a 4-byte scalar but the float64 value has 8"),
        (lambda a, c, n: (a, a, 3, n), "argument 2 ('c') of kernel 'vadd_f32' is a buffer and takes an accel.Array"),
        (lambda a, c, n: (a, a, c, "n"), "a scalar argument takes an int, float, bool, numpy scalar or bytes"),
        (lambda a, c, n: (a, a, c, np.zeros(2, np.uint32)), "takes a scalar, not an array"),
    ],
)
def test_bad_arguments_raise_with_the_argument(corpus, args, message):
    a = accel.zeros(64, "float32")
    c = accel.zeros(64, "float32")
    with pytest.raises(accel.AccelError, match=None) as info:
        corpus["vadd_f32"].launch(1, 64, *args(a, c, 64))
    assert message in str(info.value)
    assert info.value.status_name == "ACCEL_ERROR_INVALID_ARGUMENT"


def test_core_checks_reach_python(corpus):
    a = accel.zeros(64, "float32")
    c = accel.zeros(64, "float32")
    k = corpus["vadd_f32"]
    with pytest.raises(accel.AccelError, match="grid"):
        k.launch(0, 64, a, a, c, 64)
    with pytest.raises(accel.AccelError, match="block"):
        k.launch(1, 1 << 20, a, a, c, 64)
    c.free()
    with pytest.raises(accel.AccelError, match="buffer was freed") as info:
        k.launch(1, 64, a, a, c, 64)
    assert info.value.status_name == "ACCEL_ERROR_INVALID_HANDLE"
    with pytest.raises(TypeError, match="unexpected keyword argument 'streams'"):
        k.launch(1, 64, a, a, a, 64, streams=None)


def test_read_only_arrays_are_not_written(corpus):
    frozen = np.zeros(64, np.float32)
    frozen.flags.writeable = False
    ro = accel.asarray(frozen)
    if not ro.readonly:
        pytest.skip(f"{accel.device()} cannot import host memory, so asarray copied: no read-only array exists")
    a = accel.zeros(64, "float32")
    # Refused by the package for every read-only array (the C layer guards read-only imports like this one too).
    with pytest.raises(accel.AccelError, match=r"argument 2 \('c'\) of kernel 'vadd_f32' is write, and the array is read-only"):
        corpus["vadd_f32"].launch(1, 64, a, a, ro, 64)


def test_module_errors(corpus):
    with pytest.raises(accel.AccelError, match="has no kernel 'nope'; it has .*'vadd_f32'") as info:
        corpus.module("vadd_f32")["nope"]
    assert info.value.status_name == "ACCEL_ERROR_NOT_FOUND"
    with pytest.raises(accel.AccelError, match="unknown kernel format 'bogus'"):
        accel.load_module({"bogus": b"x"})
    foreign = "hsaco"  # no backend here executes it
    with pytest.raises(accel.AccelError, match=f"the module has {foreign}; the device executes") as info:
        accel.load_module({foreign: b"\x7fELF"})
    assert info.value.status_name == "ACCEL_ERROR_UNSUPPORTED"
    own = accel.device().kernel_formats[0]
    with pytest.raises(accel.AccelError) as info:
        accel.load_module({own: "/nonexistent/kernels.bin"})
    assert info.value.status_name == "ACCEL_ERROR_NOT_FOUND"
    with pytest.raises(accel.AccelError, match=f"{own} source is empty"):
        accel.load_module({own: b""})
    with pytest.raises(accel.AccelError, match=r"sources\[0\]|source 0") as info:
        accel.load_module({own: b"this is not a module"})
    assert info.value.status_name == "ACCEL_ERROR_INVALID_ARGUMENT"
    with pytest.raises(TypeError, match="bytes .* or a path"):
        accel.load_module({own: 3})
    with pytest.raises(accel.AccelError, match="no sources"):
        accel.load_module({})


def test_closed_module_and_stream(corpus):
    entries = corpus.manifest["kernels"]["fill_u32"].items()
    m = accel.load_module([(fmt, corpus.root / rel) for fmt, rel in entries])  # tuples, os.PathLike paths
    k = m["fill_u32"]
    out = accel.zeros(64, "uint32")
    with m:
        k.launch(1, 64, out, 1, 64)
    assert m.closed
    with pytest.raises(accel.AccelError, match="Module was closed"):
        k.launch(1, 64, out, 1, 64)
    s = accel.Stream()
    s.close()
    with pytest.raises(accel.AccelError, match="Stream was closed"):
        corpus["fill_u32"].launch(1, 64, out, 1, 64, stream=s)
    assert np.asarray(out).tolist() == [1] * 64


def test_threads_launch_and_read_concurrently(corpus):
    # Each thread its own stream and arrays (numpy-owned, imported, then dropped while launches may be pending):
    # the release callbacks take the GIL on the stream workers while the threads wait without it.
    import threading

    errors = []

    def work(seed):
        try:
            with accel.Stream() as s:
                for i in range(20):
                    out = accel.asarray(np.zeros(256, np.uint32))
                    corpus["fill_u32"].launch(4, 64, out, seed * 100 + i, 256, stream=s)
                    if i % 2:
                        del out  # dropped with the launch possibly still pending
                        continue
                    assert (np.asarray(out) == seed * 100 + i).all()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert errors == []


def test_a_prepared_launch_runs_on_each_launch_and_orders_host_access(corpus):
    # Checked once (Kernel.prepare); each launch() enqueues it; host access to a bound array waits for the last one.
    n = 256
    values = accel.asarray(np.arange(1, n + 1, dtype=np.uint32))
    sums = accel.zeros(4, "uint32")
    add = corpus["atomic_add_u32"].prepare(n // 64, 64, values, sums, n, 4)
    assert add.kernel.name == "atomic_add_u32" and not add.closed
    with accel.Stream() as s:
        for _ in range(3):
            add.launch()  # the current stream
        s.launch(add)
        want = [4 * sum(range(b + 1, n + 1, 4)) for b in range(4)]
        assert np.asarray(sums).tolist() == want
    add.launch(stream=accel.Stream())
    assert np.asarray(sums).tolist() == [5 * w // 4 for w in want]
    add.close()
    with pytest.raises(accel.AccelError, match="was closed"):
        add.launch()


def test_preparing_checks_as_a_launch_does(corpus):
    a = accel.zeros(16, "float32")
    with pytest.raises(accel.AccelError, match="takes 4 arguments, 3 given"):
        corpus["vadd_f32"].prepare(1, 16, a, a, a)
    with pytest.raises(accel.AccelError, match="past"):
        corpus["vadd_f32"].prepare(1, 2**20, a, a, a, 16)
    with corpus["vadd_f32"].prepare(1, 16, a, a, a, 16) as p:
        a.free()
        with pytest.raises(accel.AccelError, match="was freed"):
            p.launch()
    assert p.closed
