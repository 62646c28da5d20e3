import ctypes
import pytest

import accel

np = pytest.importorskip("numpy")

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
          "float32", "float64", "complex64", "complex128"]


def sample(dtype, shape=(3, 4)):
    return (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)


def test_empty_and_zeros():
    a = accel.empty((2, 3), "int32")
    assert a.shape == (2, 3) and a.dtype == "int32" and a.strides == (12, 4)
    assert a.ndim == 2 and a.size == 6 and a.nbytes == 24 and a.itemsize == 4 and len(a) == 2
    assert a.device == accel.devices()[0] and not a.readonly and a.host_visible
    z = accel.zeros(5, dtype=np.float64)
    assert z.shape == (5,) and z.dtype == "float64"
    assert (z.copy_to_host() == 0).all()


def test_a_shape_past_the_address_space_is_refused_not_wrapped():
    # (2^62 + 1) * 4 elements wrap to 4: a 16-byte buffer under a huge shape, whose views reach past it.
    with pytest.raises(accel.AccelError, match="more than 2\\^63 - 1 bytes"):
        accel.empty((2**62 + 1, 4), "float32")
    with pytest.raises(accel.AccelError, match="more than 2\\^63 - 1 bytes"):
        accel.empty((2**31, 2**31, 4), "uint8")


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_zero_copy(dtype):
    host = sample(dtype)
    a = accel.asarray(host)
    assert a.dtype == dtype and a.shape == host.shape and a.strides == host.strides
    assert a.data_ptr == host.ctypes.data
    back = np.asarray(a)
    assert back.ctypes.data == host.ctypes.data
    assert back.dtype == host.dtype
    np.testing.assert_array_equal(back, host)
    np.testing.assert_array_equal(a.copy_to_host(), host)
    host.flat[0] = 1
    assert np.asarray(a).flat[0] == 1  # shared memory


@pytest.mark.parametrize("view", ["step", "transpose", "reverse", "column"])
def test_non_contiguous(view):
    base = sample("float32", (6, 8))
    host = {"step": base[::2, 1::3], "transpose": base.T, "reverse": base[::-1, ::-2], "column": base[:, 3]}[view]
    a = accel.asarray(host)
    assert a.strides == host.strides and not a.is_c_contiguous
    assert a.data_ptr == host.ctypes.data
    back = np.asarray(a)
    assert back.ctypes.data == host.ctypes.data and back.strides == host.strides
    np.testing.assert_array_equal(back, host)
    np.testing.assert_array_equal(a.copy_to_host(), host)
    copied = accel.asarray(host, copy=True)
    assert copied.data_ptr != host.ctypes.data
    np.testing.assert_array_equal(copied.copy_to_host(), host)


def test_zero_size_and_0d():
    empty = np.zeros((0, 3), dtype=np.float32)
    a = accel.asarray(empty)
    assert a.shape == (0, 3) and a.size == 0 and a.nbytes == 0
    assert np.asarray(a).shape == (0, 3)
    assert a.copy_to_host().shape == (0, 3)
    assert accel.zeros((4, 0)).copy_to_host().shape == (4, 0)
    scalar = np.array(3.5, dtype=np.float64)
    s = accel.asarray(scalar)
    assert s.shape == () and s.ndim == 0 and s.size == 1
    assert s.data_ptr == scalar.ctypes.data
    assert np.asarray(s).ctypes.data == scalar.ctypes.data
    assert s.copy_to_host() == 3.5
    with pytest.raises(TypeError):
        len(s)


def test_copies_and_to():
    host = sample("int64")
    a = accel.asarray(host, copy=True)
    assert a.data_ptr != host.ctypes.data
    np.testing.assert_array_equal(a.copy_to_host(), host)
    b = a.to(accel.devices()[0])
    assert b.data_ptr != a.data_ptr
    np.testing.assert_array_equal(b.copy_to_host(), host)
    assert accel.asarray(a) is a
    np.testing.assert_array_equal(accel.asarray(a, copy=True).copy_to_host(), host)


def test_from_python_objects():
    a = accel.asarray([[1, 2], [3, 4]], dtype="int16")
    assert a.dtype == "int16" and a.shape == (2, 2)
    np.testing.assert_array_equal(a.copy_to_host(), [[1, 2], [3, 4]])
    b = accel.asarray(bytearray(b"abc"))
    assert b.dtype == "uint8" and b.shape == (3,)
    c = accel.asarray(np.arange(3, dtype=np.int32), dtype="float64")  # converted: a copy
    assert c.dtype == "float64"


def test_readonly_source():
    host = sample("float32")
    host.flags.writeable = False
    a = accel.asarray(host)
    assert a.readonly
    interface = a.__array_interface__
    assert interface["data"] == (host.ctypes.data, True)
    assert not np.asarray(a).flags.writeable


def test_array_interface():
    a = accel.zeros((2, 3), "uint16")
    interface = a.__array_interface__
    assert interface["shape"] == (2, 3) and interface["typestr"] == "<u2" and interface["version"] == 3
    assert interface["strides"] is None
    assert interface["data"] == (a.data_ptr, False)
    view = np.asarray(a)
    view[1, 2] = 7
    assert a.copy_to_host()[1, 2] == 7


def test_wrong_dtype():
    for bad in ("float128", "nonsense", object):
        with pytest.raises(accel.AccelError) as info:
            accel.empty(3, bad)
        assert info.value.status == accel.Status.ACCEL_ERROR_INVALID_ARGUMENT
        assert "unsupported dtype" in str(info.value)
    with pytest.raises(accel.AccelError):
        accel.asarray([1, 2], dtype="int3")
    with pytest.raises(accel.AccelError) as info:
        accel.empty(-1)
    assert "negative dimension" in str(info.value)


def test_freed_buffer():
    a = accel.zeros(8)
    a.free()
    a.free()  # idempotent
    with pytest.raises(accel.AccelError) as info:
        a.copy_to_host()
    assert info.value.status == accel.Status.ACCEL_ERROR_INVALID_HANDLE
    assert "stale buffer handle" in str(info.value)
    with pytest.raises(accel.AccelError):
        a.data_ptr
    with pytest.raises(accel.AccelError):
        a.to(0)
    with pytest.raises(accel.AccelError):
        a.host_visible


def test_out_of_memory_on_sim(run_python):
    out = run_python("""
        import accel
        d = accel.devices()[0]
        assert d.backend == "sim", d
        total = d.capabilities["memory_total"]
        try:
            accel.empty(total * 4, "uint8", device=d)
        except accel.AccelError as e:
            assert e.status == accel.Status.ACCEL_ERROR_RESOURCE_EXHAUSTED, e.status_name
            print("OK", e.status_name, e)
        else:
            raise SystemExit("no error")
        """, ACCEL_BACKENDS="sim", ACCEL_SIM_PROFILE="h100-sxm-8")
    assert out.startswith("OK ACCEL_ERROR_RESOURCE_EXHAUSTED")


def test_basic_indexing_makes_views():
    base = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    a = accel.asarray(base.copy())
    keys = [
        (1,), (slice(None), 2), (Ellipsis, 3), (slice(None, None, -1),), (slice(1, 3), slice(None, None, 2), -1),
        (None, 0), (0, 0, 0), (slice(5, 9),), (Ellipsis,), (slice(None), None, slice(1, 4, 2)),
    ]
    for key in keys:
        view = a[key]
        expected = np.asarray(base[key])
        assert view.shape == expected.shape, key
        np.testing.assert_array_equal(view.copy_to_host(), expected, err_msg=str(key))
        if expected.size and expected.base is not None:  # a numpy view: the same offset into the accel buffer
            assert view.data_ptr == a.data_ptr + (expected.ctypes.data - base.ctypes.data), key
    np.testing.assert_array_equal(a.T.copy_to_host(), base.T)
    assert a.T.strides == base.T.strides
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        a[0, 4]
    with pytest.raises(IndexError, match="too many indices"):
        a[0, 0, 0, 0]
    with pytest.raises(IndexError, match="basic indices only"):
        a[[0, 1]]
    with pytest.raises(IndexError, match="single ellipsis"):
        a[..., ...]


def test_setitem_writes_through_views():
    a = accel.zeros((3, 4), "int32")
    a[1] = 7
    a[:, 2] = np.array([1, 2, 3])
    a[2, ::2] = -1
    expected = np.zeros((3, 4), np.int32)
    expected[1] = 7
    expected[:, 2] = [1, 2, 3]
    expected[2, ::2] = -1
    np.testing.assert_array_equal(a.copy_to_host(), expected)
    frozen = np.zeros(4, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        accel.asarray(frozen)[0] = 1


class _PyBuffer(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.py_object), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)), ("suboffsets", ctypes.POINTER(ctypes.c_ssize_t)),
                ("internal", ctypes.c_void_p)]


_C_CONTIGUOUS, _F_CONTIGUOUS, _ANY_CONTIGUOUS = 0x38, 0x58, 0x98  # PyBUF_{C,F,ANY}_CONTIGUOUS


def _exports(obj, flags):
    """Whether the buffer protocol gives `obj` to a consumer asking with `flags` (BufferError: no)."""
    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
    release = ctypes.pythonapi.PyBuffer_Release
    release.argtypes = [ctypes.POINTER(_PyBuffer)]
    view = _PyBuffer()
    try:
        get(obj, ctypes.byref(view), flags)
    except BufferError:
        return False
    release(ctypes.byref(view))
    return True


def test_buffer_protocol_contiguity_requests():
    # A Fortran request on a C-contiguous 2-D array got C strides; a 1-D strided view passed Fortran and any.
    c = accel.zeros((2, 3), "float32")
    assert _exports(c, _C_CONTIGUOUS) and _exports(c, _ANY_CONTIGUOUS)
    assert not _exports(c, _F_CONTIGUOUS)
    f = c.T  # (3, 2), Fortran order
    assert _exports(f, _F_CONTIGUOUS) and _exports(f, _ANY_CONTIGUOUS)
    assert not _exports(f, _C_CONTIGUOUS)
    strided = accel.zeros(8, "float32")[::2]
    for flags in (_C_CONTIGUOUS, _F_CONTIGUOUS, _ANY_CONTIGUOUS):
        assert not _exports(strided, flags), hex(flags)
    column = accel.zeros((3, 1), "float32")  # both orders
    assert _exports(column, _C_CONTIGUOUS) and _exports(column, _F_CONTIGUOUS)
