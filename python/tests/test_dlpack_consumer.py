"""A ctypes DLPack consumer of capsules exported by accel arrays, legacy ("dltensor") and DLPack 1.x
("dltensor_versioned"): a capsule is consumed once, its deleter runs exactly once (by the consumer, or by the
capsule's destructor when nobody consumed it), and the memory outlives every Python reference to the producer
until the deleter runs.

Observables: an array made by accel.asarray(numpy_array) keeps the numpy array alive until Accel releases the
memory, and an exported capsule keeps the accel array (so the memory) alive until its deleter runs, so a weakref
to that numpy array says whether the deleter has run. Where the test swaps the tensor's deleter for a counting
wrapper, the count says how often it ran. A second run of a deleter would be a double free (ASan, in ctest).
"""
import ctypes
import gc
import weakref

import pytest

import accel

np = pytest.importorskip("numpy")


from dlpack_ctypes import (DLManagedTensor, DLManagedTensorVersioned, DLTensor, LEGACY_DELETER,  # noqa: E402
                           VERSIONED_DELETER, _api, kDLCPU, kDLFloat, kDLInt)


class Kind:
    def __init__(self, versioned):
        self.versioned = versioned
        self.name = b"dltensor_versioned" if versioned else b"dltensor"
        self.used = b"used_dltensor_versioned" if versioned else b"used_dltensor"  # module-level: outlives capsules
        self.struct = DLManagedTensorVersioned if versioned else DLManagedTensor
        self.deleter_type = VERSIONED_DELETER if versioned else LEGACY_DELETER

    def export(self, array):
        capsule = array.__dlpack__(max_version=(1, 0)) if self.versioned else array.__dlpack__()
        assert _api.PyCapsule_GetName(capsule) == self.name
        return capsule

    def managed(self, capsule):
        """The capsule's managed tensor, without taking it."""
        return ctypes.cast(_api.PyCapsule_GetPointer(capsule, self.name), ctypes.POINTER(self.struct))

    def consume(self, capsule):
        """Takes the managed tensor as a C consumer does: the capsule is renamed and no longer owns it."""
        assert _api.PyCapsule_IsValid(capsule, self.name) == 1
        managed = self.managed(capsule)
        assert _api.PyCapsule_SetName(capsule, self.used) == 0
        return managed

    def __repr__(self):
        return self.name.decode()


KINDS = [Kind(True), Kind(False)]
KIND_IDS = [repr(k) for k in KINDS]


def counting_deleter(kind, managed, keep):
    """Swaps the tensor's deleter for one that counts its calls and then runs the original."""
    # A copy of the pointer: a field read shares the struct's memory, which the swap below overwrites.
    original = kind.deleter_type(ctypes.cast(managed.contents.deleter, ctypes.c_void_p).value)
    calls = []

    def deleter(self):
        calls.append(ctypes.addressof(self.contents))
        original(self)

    wrapper = kind.deleter_type(deleter)
    keep.append(wrapper)  # the C side holds only the function pointer
    managed.contents.deleter = wrapper
    return calls


def numpy_backed(values):
    """An accel array on a numpy array's memory, and a weakref to that numpy array (alive while Accel uses it)."""
    host = np.array(values, dtype=np.float64)
    a = accel.asarray(host)
    assert a.data_ptr == host.ctypes.data
    return a, weakref.ref(host)


# ---- 1. a capsule is consumed once ----

@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_consumed_capsule_is_not_imported_again(kind):
    a, ref = numpy_backed([1.0, 2.0, 3.0])
    capsule = kind.export(a)
    managed = kind.consume(capsule)
    assert _api.PyCapsule_GetName(capsule) == kind.used
    assert _api.PyCapsule_IsValid(capsule, kind.name) == 0
    with pytest.raises((BufferError, ValueError, TypeError), match="consumed|dltensor"):
        accel.from_dlpack(capsule)
    assert _api.PyCapsule_GetName(capsule) == kind.used  # the failed import left it alone
    managed.contents.deleter(managed)
    del a, capsule
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_consumed_capsule_is_not_consumed_again(kind):
    a, _ = numpy_backed([4.0, 5.0])
    capsule = kind.export(a)
    managed = kind.consume(capsule)
    assert _api.PyCapsule_IsValid(capsule, kind.name) == 0
    # CPython refuses the pointer under the consumed name: a second consumer cannot take it.
    with pytest.raises(ValueError, match="incorrect name"):
        _api.PyCapsule_GetPointer(capsule, kind.name)
    managed.contents.deleter(managed)


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_capsule_taken_by_from_dlpack_is_not_consumed_again(kind):
    a, _ = numpy_backed([6.0, 7.0])
    capsule = kind.export(a)
    b = accel.from_dlpack(capsule)
    assert b.data_ptr == a.data_ptr
    assert _api.PyCapsule_GetName(capsule) == kind.used
    with pytest.raises((BufferError, ValueError, TypeError), match="consumed|dltensor"):
        accel.from_dlpack(capsule)
    with pytest.raises(ValueError, match="incorrect name"):
        _api.PyCapsule_GetPointer(capsule, kind.name)
    np.testing.assert_array_equal(b.copy_to_host(), [6.0, 7.0])


# ---- 2. the deleter runs exactly once ----

@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_consumer_runs_deleter_once(kind):
    keep = []
    a, ref = numpy_backed([1.0, 2.0])
    capsule = kind.export(a)
    managed = kind.consume(capsule)
    address = ctypes.addressof(managed.contents)
    calls = counting_deleter(kind, managed, keep)
    del a
    gc.collect()
    assert ref() is not None  # the exported tensor keeps the producer's memory alive
    del capsule  # consumed: its destructor must not run the deleter
    gc.collect()
    assert calls == [] and ref() is not None
    managed.contents.deleter(managed)
    assert calls == [address]
    gc.collect()
    assert ref() is None  # collectable right after the deleter ran


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_unconsumed_capsule_runs_deleter_when_collected(kind):
    keep = []
    a, ref = numpy_backed([3.0, 4.0, 5.0])
    capsule = kind.export(a)
    managed = kind.managed(capsule)  # a peek: the capsule still owns the tensor
    address = ctypes.addressof(managed.contents)
    calls = counting_deleter(kind, managed, keep)
    del managed, a
    gc.collect()
    assert calls == [] and ref() is not None
    del capsule
    gc.collect()
    assert calls == [address]
    assert ref() is None


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_unconsumed_capsule_in_a_cycle_runs_deleter_on_gc(kind):
    keep = []
    a, ref = numpy_backed([8.0])
    holder = {"capsule": kind.export(a)}
    holder["self"] = holder  # only the cycle collector frees it
    calls = counting_deleter(kind, kind.managed(holder["capsule"]), keep)
    del a, holder
    assert calls == [] and ref() is not None
    gc.collect()
    assert len(calls) == 1
    assert ref() is None


# ---- 3. the memory outlives the producer ----

def read_tensor(managed):
    t = managed.contents.dl_tensor
    assert (t.device.device_type, t.device.device_id) == (kDLCPU, 0)
    assert t.ndim == 2
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim))  # in elements
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) in [(kDLInt, 32, 1), (kDLFloat, 64, 1)]
    ctype = ctypes.c_int32 if t.dtype.code == kDLInt else ctypes.c_double
    base = t.data + t.byte_offset
    size = ctypes.sizeof(ctype)
    return [[ctype.from_address(base + (i * strides[0] + j * strides[1]) * size).value for j in range(shape[1])]
            for i in range(shape[0])]


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_memory_outlives_accel_owned_producer(kind):
    a = accel.asarray(np.arange(12, dtype=np.int32).reshape(3, 4)).copy()  # Accel's own allocation
    capsule = kind.export(a)
    del a
    gc.collect()
    managed = kind.consume(capsule)
    del capsule
    gc.collect()
    assert read_tensor(managed) == np.arange(12).reshape(3, 4).tolist()
    managed.contents.deleter(managed)


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_memory_outlives_numpy_backed_strided_producer(kind):
    host = np.arange(24, dtype=np.float64).reshape(4, 6).copy()  # owns its memory: the view's base
    assert host[1:, ::-2].base is host
    expected = host[1:, ::-2].tolist()
    ref = weakref.ref(host)
    a = accel.asarray(host[1:, ::-2])
    capsule = kind.export(a)
    managed = kind.consume(capsule)
    del host, a, capsule
    gc.collect()
    assert ref() is not None
    assert read_tensor(managed) == expected
    managed.contents.deleter(managed)
    gc.collect()
    assert ref() is None
