import ctypes

import pytest

import accel

np = pytest.importorskip("numpy")

DTYPES = ["int8", "uint8", "int16", "int32", "int64", "uint64", "float16", "float32", "float64", "complex64",
          "complex128"]


# ---- a small DLPack 1.x consumer (numpy 1.24 only speaks legacy capsules) ----

from dlpack_ctypes import DLManagedTensorVersioned, _api  # noqa: E402

VERSIONED = b"dltensor_versioned"
USED_VERSIONED = b"used_dltensor_versioned"  # must outlive the capsules


def consume_versioned(capsule):
    """Reads a versioned capsule like a C consumer: takes ownership, reads, runs the deleter."""
    assert _api.PyCapsule_IsValid(capsule, VERSIONED) == 1
    pointer = _api.PyCapsule_GetPointer(capsule, VERSIONED)
    assert _api.PyCapsule_SetName(capsule, USED_VERSIONED) == 0
    managed = ctypes.cast(pointer, ctypes.POINTER(DLManagedTensorVersioned))
    m = managed.contents
    t = m.dl_tensor
    info = {
        "version": (m.version.major, m.version.minor),
        "flags": m.flags,
        "device": (t.device.device_type, t.device.device_id),
        "data": t.data + t.byte_offset,
        "shape": tuple(t.shape[i] for i in range(t.ndim)),
        "strides": tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None,
        "dtype": (t.dtype.code, t.dtype.bits, t.dtype.lanes),
    }
    m.deleter(managed)
    return info


# ---- export ----

def test_dlpack_device():
    assert accel.zeros(3).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_from_dlpack_zero_copy(dtype):
    host = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    a = accel.asarray(host)
    out = np.from_dlpack(a)
    assert out.ctypes.data == host.ctypes.data
    assert out.dtype == host.dtype
    np.testing.assert_array_equal(out, host)


def test_numpy_from_dlpack_strided_and_0d():
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    host = base[::2, ::-3]
    out = np.from_dlpack(accel.asarray(host))
    assert out.ctypes.data == host.ctypes.data and out.strides == host.strides
    np.testing.assert_array_equal(out, host)
    scalar = np.array(2.0)
    out0 = np.from_dlpack(accel.asarray(scalar))
    assert out0.shape == () and out0 == 2.0
    empty = np.from_dlpack(accel.zeros((0, 2)))
    assert empty.shape == (0, 2)


def test_legacy_capsule_by_default():
    capsule = accel.zeros(3).__dlpack__()
    assert _api.PyCapsule_IsValid(capsule, b"dltensor") == 1
    capsule = accel.zeros(3).__dlpack__(max_version=(0, 8))
    assert _api.PyCapsule_IsValid(capsule, b"dltensor") == 1
    del capsule  # unconsumed: the capsule's destructor runs the deleter


def test_versioned_capsule():
    host = np.arange(6, dtype=np.int32).reshape(2, 3)[:, ::2]
    a = accel.asarray(host)
    info = consume_versioned(a.__dlpack__(max_version=(1, 0)))
    assert info["version"] == (1, 0)
    assert info["flags"] & 1 == 0  # writable
    assert info["device"] == (1, 0)
    assert info["data"] == host.ctypes.data
    assert info["shape"] == (2, 2)
    assert info["strides"] == (3, 2)  # in elements
    assert info["dtype"] == (0, 32, 1)
    unconsumed = a.__dlpack__(max_version=(1, 2))
    del unconsumed


def test_read_only_flag():
    host = np.arange(4, dtype=np.float64)
    host.flags.writeable = False
    a = accel.asarray(host)
    info = consume_versioned(a.__dlpack__(max_version=(1, 0)))
    assert info["flags"] & 1 == 1
    # accel -> accel through a versioned capsule keeps the flag.
    b = accel.from_dlpack(a)
    assert b.readonly and b.data_ptr == host.ctypes.data


def test_copy_and_dl_device():
    host = np.arange(4, dtype=np.float32)
    a = accel.asarray(host)
    info = consume_versioned(a.__dlpack__(max_version=(1, 0), copy=True))
    assert info["flags"] & 2 == 2 and info["data"] != host.ctypes.data
    info = consume_versioned(a.__dlpack__(max_version=(1, 0), dl_device=(1, 0)))
    assert info["data"] == host.ctypes.data
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(2, 0))


# ---- import ----

@pytest.mark.parametrize("dtype", DTYPES)
def test_from_dlpack_numpy_zero_copy(dtype):
    host = (np.arange(10) % 3).astype(dtype)
    a = accel.from_dlpack(host)
    assert a.data_ptr == host.ctypes.data
    assert a.dtype == dtype and a.shape == (10,)
    np.testing.assert_array_equal(a.copy_to_host(), host)


def test_from_dlpack_strided_zero_size_and_copy():
    base = np.arange(24, dtype=np.int16).reshape(4, 6)
    host = base[1:, ::-2]
    a = accel.from_dlpack(host)
    assert a.data_ptr == host.ctypes.data and a.strides == host.strides
    np.testing.assert_array_equal(a.copy_to_host(), host)
    z = accel.from_dlpack(np.zeros((3, 0), dtype=np.float32))
    assert z.shape == (3, 0) and z.size == 0
    c = accel.from_dlpack(host, copy=True)
    assert c.data_ptr != host.ctypes.data
    np.testing.assert_array_equal(c.copy_to_host(), host)


def test_from_dlpack_keeps_producer_alive():
    import gc
    import weakref

    class Producer:
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    host = np.arange(5, dtype=np.float64)
    ref = weakref.ref(host)
    a = accel.from_dlpack(Producer(host))
    del host
    gc.collect()
    assert ref() is not None  # numpy's capsule holds the array until accel releases it
    np.testing.assert_array_equal(a.copy_to_host(), np.arange(5))
    del a
    gc.collect()
    assert ref() is None


def test_from_dlpack_raw_capsule_and_errors():
    host = np.arange(3, dtype=np.uint8)
    a = accel.from_dlpack(host.__dlpack__())
    assert a.data_ptr == host.ctypes.data
    with pytest.raises(TypeError):
        accel.from_dlpack(object())
    used = host.__dlpack__()
    accel.from_dlpack(used)
    with pytest.raises(TypeError):
        accel.from_dlpack(used)  # already consumed
