"""Accel for Python: devices, arrays on accelerator memory, streams, events, kernels, DLPack, and the scheduler.

The package wraps the Accel C ABI (include/accel/accel.h) through the extension
module ``accel._accel``. See python/README.md for what works so far.
"""

from __future__ import annotations

import enum as _enum
import pkgutil as _pkgutil

# A build tree keeps the compiled module in <build>/python/accel/ while this
# file stays in the source tree: every accel/ folder on sys.path is part of
# the package (PYTHONPATH=<source>/python:<build>/python).
__path__ = _pkgutil.extend_path(__path__, __name__)

from . import _accel  # noqa: E402
from ._accel import (  # noqa: E402,F401
    AccelError,
    Array,
    Device,
    Event,
    Future,
    Kernel,
    LocalMemory,
    Module,
    ObjectRef,
    ObjectView,
    PhysicalDevice,
    PlacementGroup,
    PreparedLaunch,
    Queue,
    Runtime,
    SelectorError,
    Stream,
    TaskContext,
    TaskError,
    TaskGroup,
    check_selector,
    current_stream,
    device,
    devices,
    kernel_formats,
    loader_report,
    loader_warnings,
    nics,
    physical_devices,
    version,
)

from ._runtime import (  # noqa: E402,F401
    ActorClass,
    ActorHandle,
    ActorMethod,
    RemoteFunction,
    actor,
    current_runtime,
    get,
    placement_group,
    put,
    task,
)

AccelError.__module__ = "accel"

__all__ = [
    "AccelError",
    "ActorClass",
    "ActorHandle",
    "ActorMethod",
    "Array",
    "Device",
    "Event",
    "Future",
    "Kernel",
    "LocalMemory",
    "Module",
    "ObjectRef",
    "ObjectView",
    "PhysicalDevice",
    "PlacementGroup",
    "PreparedLaunch",
    "Queue",
    "RemoteFunction",
    "Runtime",
    "SelectorError",
    "Status",
    "Stream",
    "TaskContext",
    "TaskError",
    "TaskGroup",
    "actor",
    "asarray",
    "check_selector",
    "current_runtime",
    "current_stream",
    "device",
    "devices",
    "dtype_name",
    "empty",
    "from_dlpack",
    "get",
    "kernel_formats",
    "load_module",
    "loader_report",
    "loader_warnings",
    "nics",
    "physical_devices",
    "placement_group",
    "put",
    "task",
    "version",
    "zeros",
]

Status = _enum.IntEnum(
    "Status", {_accel.status_name(code): code for code in range(1, -15, -1)} | {"ACCEL_SUCCESS": 0}
)
Status.__doc__ = "accel_status_t values (AccelError.status is one of them)."
Status.__module__ = __name__


def _numpy():
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - numpy is optional
        raise ImportError("this accel operation needs numpy (pip install numpy)") from e
    return numpy


def dtype_name(dtype) -> str:
    """The accel name of `dtype` ("float32"): a name, a typestr ("<f4") or a numpy dtype/type."""
    return _accel.dtype_name(dtype)


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


def empty(shape, dtype="float32", *, device=None) -> Array:
    """An uninitialised array on `device` (None: the first visible device)."""
    return _accel.empty(_shape(shape), dtype, device)


def zeros(shape, dtype="float32", *, device=None) -> Array:
    """A zero-filled array on `device` (None: the first visible device)."""
    return _accel.zeros(_shape(shape), dtype, device)


def _bfloat16():
    try:
        import ml_dtypes
    except ImportError as e:  # pragma: no cover - ml_dtypes is optional
        raise ImportError("bfloat16 arrays need ml_dtypes on the numpy side (pip install ml_dtypes)") from e
    return ml_dtypes.bfloat16


def _is_bfloat16(dtype) -> bool:
    return getattr(dtype, "name", None) == "bfloat16"


def load_module(sources, *, device=None, name=None, options=None) -> Module:
    """Loads a module of kernels on `device` (None: the first visible device).

    `sources` maps kernel formats ("native-host", "opencl-c", "spirv-vulkan",
    "spir", "ptx", ...; accel.kernel_formats() lists them) to a blob (bytes)
    or a path (str or os.PathLike), or is a list of (format, blob or path[,
    options]) tuples. The first source, in that order, whose format the
    device executes is loaded; `options` are build options for source
    formats ("-DN=4"). Raises AccelError (UNSUPPORTED) when the device
    executes none of them, with the formats on both sides.
    """
    return _accel.load_module(sources, device, name, options)


def _buffer_dtype(obj):
    try:
        with memoryview(obj) as view:
            return _accel.format_dtype(view.format)
    except TypeError:
        return None


def asarray(obj, dtype=None, *, device=None, copy=None) -> Array:
    """`obj` as an accel array on `device`.

    Buffer-protocol objects (numpy arrays, bytes, array.array, memoryview) are
    imported without a copy when the device uses host memory in place (the
    array then shares the object's memory and keeps it alive); otherwise, or
    with copy=True, their bytes are copied. copy=False raises AccelError
    when the device cannot import host memory. Anything else (lists, scalars)
    goes through numpy.asarray first; DLPack producers without the buffer
    protocol (jax, torch, cupy arrays) go through from_dlpack. An
    accel.Array is returned as is, or copied to `device`.
    """
    if dtype is not None:
        dtype = _accel.dtype_name(dtype)
    if _is_bfloat16(getattr(obj, "dtype", None)) and hasattr(obj, "view") and dtype in (None, "bfloat16"):
        # No buffer-protocol format says bfloat16: import its bits as uint16.
        return _accel.from_buffer(obj.view("uint16"), device, copy)._view_as("bfloat16")
    if isinstance(obj, Array):
        if dtype is not None and dtype != obj.dtype:
            obj = obj.copy_to_host().astype(dtype)
        else:
            target = obj.device if device is None else _accel.device(device)
            if target == obj.device:
                return obj.copy() if copy else obj
            if copy is False:
                raise ValueError("asarray(copy=False): the array lives on another device")
            return obj.to(target)
    source_dtype = _buffer_dtype(obj)
    if source_dtype is None and dtype is None and hasattr(obj, "__dlpack__") and not isinstance(obj, type):
        return from_dlpack(obj, device=device, copy=copy)  # jax, torch, cupy: their memory in place
    if source_dtype is None or (dtype is not None and dtype != source_dtype):
        obj = _numpy().asarray(obj, dtype=dtype)
        if copy is False:
            copy = None  # numpy made a new array; importing it is still zero-copy
    return _accel.from_buffer(obj, device, copy)


def from_dlpack(x, *, device=None, copy=None) -> Array:
    """An accel array sharing the memory of a DLPack producer (or capsule).

    Host-visible tensors (kDLCPU, kDLCUDAHost, kDLROCMHost) are imported with
    accel_buffer_import as host pointers, without a copy, when the device
    allows it; the producer's deleter runs when the last accel user is gone.
    Read-only tensors (DLPack 1.x flag) become read-only arrays.
    """
    if isinstance(x, Array):  # accel to accel: the same buffer (a view), on any device
        return asarray(x, device=device, copy=copy)
    if hasattr(x, "__dlpack__"):
        try:
            capsule = x.__dlpack__(max_version=(1, 0))
        except TypeError:  # a producer from before DLPack 1.0 (numpy < 2)
            capsule = x.__dlpack__()
    else:
        capsule = x
    return _accel.from_dlpack_capsule(capsule, device, copy)


def _numpy_dtype(self):
    return _bfloat16() if self.dtype == "bfloat16" else self.dtype


def _span_copy(self):
    """(raw, view): the bytes of the array's span copied to host memory (a bytearray), and a numpy view of the
    array's elements in them. Needs a non-empty array."""
    raw, offset = self._copy_span()
    view = _numpy().ndarray(self.shape, dtype=_numpy_dtype(self), buffer=raw, offset=offset, strides=self.strides)
    return raw, view


def _copy_to_host(self):
    """A new numpy array with the array's contents (works for any memory)."""
    if self.size == 0:
        return _numpy().empty(self.shape, dtype=_numpy_dtype(self))
    return _span_copy(self)[1].copy()


def _array(self, dtype=None, copy=None):
    """numpy.asarray(a): a view when host-visible (__array_interface__), else a copy."""
    np = _numpy()
    if not self.host_visible:
        out = self.copy_to_host()
    elif self.dtype == "bfloat16":
        out = np.asarray(self._view_as("uint16")).view(_bfloat16())
    else:
        out = np.asarray(memoryview(self))
    if copy:
        out = out.copy()
    return out if dtype is None else out.astype(dtype)


Array.copy_to_host = _copy_to_host
Array.__array__ = _array


def _setitem(self, key, value):
    """a[key] = value (numpy's broadcasting and casting rules): in place for host-visible memory; otherwise the
    view's span is read, updated and written back (elements of the span outside the view keep their values)."""
    np = _numpy()
    view = self[key]
    if view.readonly:
        raise ValueError("assignment destination is read-only")
    if view.size == 0:
        return
    if view.host_visible:
        np.asarray(view)[...] = value
        return
    raw, elements = _span_copy(view)
    elements[...] = value
    view._write_span(bytes(raw))


Array.__setitem__ = _setitem
