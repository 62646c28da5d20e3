"""from_dlpack of malformed tensors from a C producer (ctypes): each is refused with a BufferError whose message
names the field (python/src/dlpack_check.h, docs/interop.md "DLPack"), before anything of the tensor is read or
imported, and the producer's deleter runs exactly once; the capsule is consumed all the same. A well-formed
tensor made the same way imports and reads back its values.

The tensors are ctypes structures over ctypes memory; the deleter is a ctypes callback that counts its calls. In
ctest the extension runs under ASan, so a read past `shape` or `strides` or of the data would fail the run.
"""
import ctypes
import gc
import time

import pytest

import accel

np = pytest.importorskip("numpy")

from dlpack_ctypes import (DLManagedTensor, DLManagedTensorVersioned, LEGACY_DELETER,  # noqa: E402
                           VERSIONED_DELETER, _api, kDLCPU, kDLFloat)

_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

kDLCUDA = 2
LEGACY_NAME, VERSIONED_NAME = b"dltensor", b"dltensor_versioned"  # module-level: outlive the capsules


class Producer:
    """One DLManagedTensor(Versioned) in ctypes memory, its shape, strides and data kept alive with it, and a
    deleter that counts its calls."""

    def __init__(self, versioned, ndim, shape, strides=None, data=None, byte_offset=0, bits=64,
                 device_type=kDLCPU, shape_null=False):
        self.versioned = versioned
        self.calls = 0
        self.managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        if versioned:
            self.managed.version.major, self.managed.version.minor = 1, 0
        t = self.managed.dl_tensor
        self.data = data
        t.data = ctypes.addressof(data) if isinstance(data, ctypes.Array) else data
        t.device.device_type, t.device.device_id = device_type, 0
        t.ndim = ndim
        t.dtype.code, t.dtype.bits, t.dtype.lanes = kDLFloat, bits, 1
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
        t.shape = None if shape_null else ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = None if strides is None else ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset

        def deleter(_self):
            self.calls += 1

        self.deleter = (VERSIONED_DELETER if versioned else LEGACY_DELETER)(deleter)  # the C side holds a pointer
        self.managed.deleter = self.deleter

    def capsule(self):
        name = VERSIONED_NAME if self.versioned else LEGACY_NAME
        return _api.PyCapsule_New(ctypes.addressof(self.managed), name, None)


KINDS = [True, False]
KIND_IDS = ["dltensor_versioned", "dltensor"]


def refused(producer, match):
    capsule = producer.capsule()
    with pytest.raises(BufferError, match=match) as info:
        accel.from_dlpack(capsule)
    assert str(info.value).startswith("from_dlpack: ")
    # Consumed (renamed), and the deleter ran once: the refusal owns the tensor.
    assert _api.PyCapsule_GetName(capsule) == (b"used_dltensor_versioned" if producer.versioned else b"used_dltensor")
    assert producer.calls == 1
    del capsule
    gc.collect()
    assert producer.calls == 1
    return str(info.value)


def doubles(*values):
    return (ctypes.c_double * len(values))(*values)


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
def test_negative_ndim_is_refused(versioned):
    refused(Producer(versioned, -1, [2, 3], data=doubles(0.0)), r"'ndim' is -1 \(0 to 64 dimensions")


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
def test_ndim_past_64_is_refused(versioned):
    refused(Producer(versioned, 65, [1] * 65, data=doubles(0.0)), r"'ndim' is 65")
    refused(Producer(versioned, 2**31 - 1, [1], data=doubles(0.0)), r"'ndim' is 2147483647")


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
def test_null_shape_is_refused(versioned):
    refused(Producer(versioned, 2, [2, 3], data=doubles(*range(6)), shape_null=True), r"'shape' is NULL with 'ndim' 2")


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
def test_negative_dimension_is_refused(versioned):
    refused(Producer(versioned, 3, [2, 3, -4], data=doubles(0.0)), r"shape\[2\] is -4")


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
def test_overflowing_extent_is_refused(versioned):
    # (2^31 - 1) x 2^40 elements x 8 bytes: past int64.
    refused(Producer(versioned, 2, [2**31, 2], strides=[2**40, 1], data=doubles(0.0)),
            r"the extent of shape\[0\] x strides\[0\] overflows int64")
    # Each dimension fits, their sum does not.
    refused(Producer(versioned, 2, [2, 2], strides=[2**59, 2**59], data=doubles(0.0)),
            r"the extent of shape\[1\] x strides\[1\] overflows int64")


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
def test_overflowing_stride_bytes_are_refused(versioned):
    refused(Producer(versioned, 2, [2, 3], strides=[3, 2**62], data=doubles(*range(6))),
            r"strides\[1\] \(4611686018427387904\) x the item size \(8\) overflows int64")


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
def test_overflowing_size_is_refused(versioned):
    refused(Producer(versioned, 2, [2**40, 2**40], data=doubles(0.0)),
            r"size in bytes overflows int64 at shape\[1\]")


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
def test_overflowing_byte_offset_is_refused(versioned):
    refused(Producer(versioned, 1, [2], data=doubles(1.0, 2.0), byte_offset=2**64 - 8), r"'byte_offset'.*overflows")


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
def test_null_data_is_refused(versioned):
    refused(Producer(versioned, 1, [4], data=None), r"'data' is NULL for a tensor of 32 bytes")


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
def test_device_tensor_is_checked_before_its_device(versioned):
    # No CUDA device here: the malformed field is what the message names.
    refused(Producer(versioned, 2, [2, -1], data=0x1000, device_type=kDLCUDA), r"shape\[1\] is -1")


def wait_for(predicate):
    deadline = time.monotonic() + 10
    while not predicate() and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.01)
    return predicate()


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "reversed_with_offset", "broadcast"])
def test_valid_ctypes_tensor_imports_and_reads_back(versioned, layout):
    memory = doubles(*[float(v) for v in range(6)])
    values = np.arange(6, dtype=np.float64)
    if layout == "contiguous":
        producer = Producer(versioned, 2, [2, 3], data=memory)
        expected = values.reshape(2, 3)
    elif layout == "transposed":
        producer = Producer(versioned, 2, [3, 2], strides=[1, 3], data=memory)
        expected = values.reshape(2, 3).T
    elif layout == "reversed_with_offset":  # element 0 is the last double; the extent reaches back to the first
        producer = Producer(versioned, 1, [6], strides=[-1], data=memory, byte_offset=40)
        expected = values[::-1]
    else:
        producer = Producer(versioned, 2, [4, 3], strides=[0, 1], data=memory, byte_offset=8)
        expected = np.broadcast_to(values[1:4], (4, 3))
    a = accel.from_dlpack(producer.capsule())
    assert a.shape == expected.shape
    assert a.data_ptr == ctypes.addressof(memory) + producer.managed.dl_tensor.byte_offset  # zero-copy
    np.testing.assert_array_equal(a.copy_to_host(), expected)
    assert producer.calls == 0  # the array uses the memory
    del a
    assert wait_for(lambda: producer.calls == 1)


@pytest.mark.parametrize("versioned", KINDS, ids=KIND_IDS)
def test_empty_tensor_with_null_data_imports(versioned):
    producer = Producer(versioned, 2, [0, 5], data=None)
    a = accel.from_dlpack(producer.capsule())
    assert a.shape == (0, 5)
    assert producer.calls == 1  # nothing imported: the deleter ran at once
