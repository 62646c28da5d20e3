"""accel <-> jax round trips through DLPack (jax on the CPU; python/requirements-test.txt)."""
import pytest

from conftest import optional_module

import accel

np = pytest.importorskip("numpy")

# Every dtype jax exchanges through DLPack (jax._src.dlpack.SUPPORTED_DTYPES).
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


@pytest.fixture(scope="module")
def jax():
    jax = optional_module("jax", "the accel <-> jax round trips need it")
    jax.config.update("jax_enable_x64", True)  # 64-bit dtypes stay 64-bit
    return jax


def pointer(j):
    return j.unsafe_buffer_pointer()


def pattern(shape, dtype):
    n = int(np.prod(shape))
    values = np.arange(n) % 7
    if dtype == "bool":
        return (values % 2 == 1).reshape(shape)
    if dtype == "bfloat16":
        import ml_dtypes
        return values.astype(ml_dtypes.bfloat16).reshape(shape)
    return values.astype(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES)
def test_accel_to_jax_to_accel_shares_memory(jax, dtype):
    a = accel.empty((3, 5), dtype)  # accel allocations are 64-byte aligned, as XLA requires for zero-copy
    np.asarray(a)[...] = pattern((3, 5), dtype)
    j = jax.numpy.from_dlpack(a)
    assert pointer(j) == a.data_ptr, "jax copied instead of sharing accel's memory"
    assert str(j.dtype) == dtype
    back = accel.from_dlpack(j)
    assert back.data_ptr == a.data_ptr
    assert back.dtype == dtype and back.shape == (3, 5)
    np.testing.assert_array_equal(np.asarray(back), pattern((3, 5), dtype))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "complex64"])
def test_jax_to_accel_shares_memory(jax, dtype):
    j = jax.numpy.asarray(pattern((4, 4), dtype))
    a = accel.from_dlpack(j)
    assert a.data_ptr == pointer(j)
    np.testing.assert_array_equal(a.copy_to_host(), np.asarray(j))


def test_asarray_of_a_jax_array_goes_through_dlpack(jax):
    j = jax.numpy.arange(64, dtype="float32")
    a = accel.asarray(j)
    assert a.data_ptr == pointer(j)
    assert accel.asarray(j, copy=True).data_ptr != pointer(j)


def test_transposed_view_round_trips(jax):
    # jax takes compact permutations of its buffer (a transpose) without a copy.
    base = accel.empty((4, 6), "float32")
    np.asarray(base)[...] = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = accel.asarray(np.asarray(base).T)
    assert t.strides == (4, 24) and not t.is_c_contiguous
    j = jax.numpy.from_dlpack(t)
    assert pointer(j) == base.data_ptr
    np.testing.assert_array_equal(np.asarray(j), np.arange(24, dtype=np.float32).reshape(4, 6).T)
    back = accel.from_dlpack(j)
    assert back.data_ptr == base.data_ptr
    np.testing.assert_array_equal(np.asarray(back), np.asarray(j))


def test_sliced_view_is_refused_by_jax_not_corrupted(jax):
    # Strides that skip elements are beyond what XLA imports: jax raises, and
    # the accel array is untouched.
    base = accel.empty((4, 6), "float32")
    np.asarray(base)[...] = 1
    v = accel.asarray(np.asarray(base)[:, ::2])
    with pytest.raises(Exception, match="striding"):
        jax.numpy.from_dlpack(v)
    assert (np.asarray(base) == 1).all()


def test_zero_size_and_0d(jax):
    z = accel.zeros((0, 3), "float32")
    jz = jax.numpy.from_dlpack(z)
    assert jz.shape == (0, 3)
    assert accel.from_dlpack(jz).shape == (0, 3)
    s = accel.empty((), "float64")
    np.asarray(s)[...] = 2.5
    js = jax.numpy.from_dlpack(s)
    assert js.shape == () and float(js) == 2.5
    assert pointer(js) == s.data_ptr
    back = accel.from_dlpack(js)
    assert back.shape == () and back.data_ptr == s.data_ptr


def test_jax_results_keep_their_memory_alive(jax):
    a = accel.from_dlpack(jax.numpy.arange(1000, dtype="int32") * 3)
    import gc

    gc.collect()
    assert np.asarray(a)[999] == 2997


def test_kernel_output_to_jax(jax):
    # A launch's output, handed to jax: __dlpack__ waits for the launch first.
    import json
    import os
    import pathlib

    root = os.environ.get("ACCEL_TEST_CORPUS")
    if not root:
        pytest.skip("ACCEL_TEST_CORPUS does not name a built kernel corpus")
    lib = pathlib.Path(root) / json.loads((pathlib.Path(root) / "corpus.json").read_text())["kernels"]["fill_u32"][
        "native-host"]
    m = accel.load_module({"native-host": str(lib)})
    out = accel.empty(4096, "uint32")
    with accel.Stream() as s:
        m["fill_u32"].launch(64, 64, out, 9, 4096, stream=s)
        j = jax.numpy.from_dlpack(out)
        assert int(j.sum()) == 9 * 4096
