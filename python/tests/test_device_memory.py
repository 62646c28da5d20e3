"""Arrays in memory without a host address (OpenCL and Vulkan buffers here): copies, views, DLPack through the host.

python.pytest runs on the host backend, whose memory is host memory, so these tests skip there (with that reason);
python.device_memory.opencl and python.device_memory.vulkan run them on PoCL and lavapipe."""
import ctypes

import pytest

from dlpack_ctypes import DLManagedTensorVersioned, capsule_pointer

import accel

np = pytest.importorskip("numpy")

KDL = {"opencl": 4, "vulkan": 7}


@pytest.fixture
def device():
    d = accel.device()
    if accel.zeros(1, "uint8", device=d).host_visible:
        pytest.skip(f"{d} has host-visible memory; these tests are for memory without a host address")
    return d


def test_arrays_copy_in_and_out(device):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = accel.asarray(x, device=device)
    assert a.device == device and not a.host_visible
    np.testing.assert_array_equal(a.copy_to_host(), x)
    np.testing.assert_array_equal(np.asarray(a), x)  # __array__ copies
    np.testing.assert_array_equal(a[1:3, ::2].copy_to_host(), x[1:3, ::2])
    np.testing.assert_array_equal(a.T.copy_to_host(), x.T)
    np.testing.assert_array_equal(a.to(device).copy_to_host(), x)
    assert (accel.zeros((2, 3), "int16", device=device).copy_to_host() == 0).all()


def test_host_access_is_refused_with_the_reason(device):
    a = accel.zeros(8, "float32", device=device)
    with pytest.raises(accel.AccelError, match="has no host address .*buffer_get_host_address") as info:
        a.data_ptr
    assert info.value.status_name == "ACCEL_ERROR_UNSUPPORTED"
    with pytest.raises(AttributeError, match="not host-visible"):
        a.__array_interface__
    with pytest.raises(BufferError, match="not host-visible"):
        memoryview(a)
    with pytest.raises(accel.AccelError, match="device 0 cannot use this memory in place") as info:
        accel.asarray(np.zeros(8, np.float32), device=device, copy=False)
    assert info.value.status_name == "ACCEL_ERROR_UNSUPPORTED"


def test_dlpack_device_and_export_through_the_host(device):
    a = accel.asarray(np.arange(10, dtype=np.int32), device=device)
    assert a.__dlpack_device__() == (KDL[device.backend], 0)
    assert device.dlpack_device == (KDL[device.backend], 0)
    with pytest.raises(BufferError, match="no data-pointer convention"):
        a.__dlpack__()
    with pytest.raises(BufferError, match="copy=False"):
        a.__dlpack__(dl_device=(1, 0), copy=False)
    capsule = a.__dlpack__(max_version=(1, 0), dl_device=(1, 0))
    t = DLManagedTensorVersioned.from_address(capsule_pointer(capsule, b"dltensor_versioned"))
    assert t.dl_tensor.device.device_type == 1
    assert t.flags & 2, "a copy through the host sets DLPACK_FLAG_BITMASK_IS_COPIED"
    values = np.ctypeslib.as_array(ctypes.cast(t.dl_tensor.data, ctypes.POINTER(ctypes.c_int32)), shape=(10,))
    assert values.tolist() == list(range(10))
    del capsule
    # numpy asks for the host explicitly and gets the copy.
    v = np.from_dlpack(a, device="cpu")
    assert v.tolist() == list(range(10))


def test_kernel_writes_reach_host_copies(device):
    import json
    import os
    import pathlib

    root = pathlib.Path(os.environ["ACCEL_TEST_CORPUS"])
    entry = json.loads((root / "corpus.json").read_text())["kernels"]["fill_u32"]
    m = accel.load_module({fmt: str(root / rel) for fmt, rel in entry.items()}, device=device)
    out = accel.zeros(256, "uint32", device=device)
    with accel.Stream(device) as s:
        m["fill_u32"].launch(4, 64, out[64:], 4, 192, stream=s)
        got = out.copy_to_host()  # waits for the launch
    assert got[:64].tolist() == [0] * 64 and got[64:].tolist() == [4] * 192


def test_setitem_on_memory_without_a_host_address(device):
    a = accel.zeros((4, 6), "int16", device=device)
    a[1:3, ::2] = 5  # read, update, write back the span: the elements between keep their values
    a[0] = np.arange(6)
    expected = np.zeros((4, 6), np.int16)
    expected[1:3, ::2] = 5
    expected[0] = np.arange(6)
    np.testing.assert_array_equal(a.copy_to_host(), expected)


def test_from_dlpack_of_host_memory_copies_onto_the_device(device):
    x = np.arange(24, dtype=np.int32).reshape(4, 6)[:, ::-2]  # strided, negative steps
    a = accel.from_dlpack(x, device=device)
    assert a.device == device and not a.readonly
    np.testing.assert_array_equal(a.copy_to_host(), x)
    with pytest.raises(accel.AccelError, match="cannot use this memory in place"):
        accel.from_dlpack(x, device=device, copy=False)
