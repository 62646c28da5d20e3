"""Type stubs of the accel package (python/accel/__init__.py and the accel._accel extension)."""

import enum
from types import TracebackType
from typing import Any, Literal, Sequence, SupportsIndex

_DType = str | type | Any  # "float32", "<f4", numpy.float32, numpy.dtype("float32")
_DeviceLike = Device | int | str | None  # an index, a stable id, or None (the first device)
_Shape = SupportsIndex | Sequence[SupportsIndex]

class AccelError(RuntimeError):
    """An Accel call failed. str(e) is Accel's own message (accel_last_error)."""

    status: int | None
    """The accel_status_t value (negative; see accel.Status)."""
    status_name: str | None
    """Its name: "ACCEL_ERROR_NOT_FOUND"."""

class Status(enum.IntEnum):
    """accel_status_t values."""

    ACCEL_SUCCESS = 0
    ACCEL_NOT_READY = 1
    ACCEL_ERROR_INVALID_ARGUMENT = -1
    ACCEL_ERROR_INVALID_HANDLE = -2
    ACCEL_ERROR_INVALID_ENUM = -3
    ACCEL_ERROR_UNSUPPORTED = -4
    ACCEL_ERROR_UNIMPLEMENTED = -5
    ACCEL_ERROR_NOT_FOUND = -6
    ACCEL_ERROR_RESOURCE_EXHAUSTED = -7
    ACCEL_ERROR_FAILED_PRECONDITION = -8
    ACCEL_ERROR_TIMEOUT = -9
    ACCEL_ERROR_DEVICE_LOST = -10
    ACCEL_ERROR_BACKEND_UNAVAILABLE = -11
    ACCEL_ERROR_INCOMPATIBLE_VERSION = -12
    ACCEL_ERROR_INTERNAL = -13

class Device:
    """One visible device (an access path: a backend's view of a physical device)."""

    @property
    def index(self) -> int:
        """Position in the stable device order (accel.devices())."""
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> Literal["cpu", "gpu", "npu", "tpu", "fpga", "unknown"]: ...
    @property
    def vendor(self) -> str: ...
    @property
    def backend(self) -> str:
        """The backend's name: "host", "sim", "opencl", "vulkan"."""
    @property
    def stable_id(self) -> str:
        """An id stable across runs; accel.device(stable_id) finds the device."""
    @property
    def simulated(self) -> bool: ...
    @property
    def capabilities(self) -> dict[str, Any]:
        """Every registered capability key (docs/capability-keys.md) by name: str, int, (x, y, z) tuples, 16 bytes."""
    @property
    def kernel_formats(self) -> list[str]:
        """Kernel formats the device executes: "native-host", "spirv-vulkan", ..."""
    @property
    def features(self) -> list[str]:
        """ACCEL_DEVICE_FEATURE_* names: "unified_memory", "event_timing", ..."""
    def memory_info(self) -> tuple[int, int]:
        """(free, total) bytes, read live."""
    @property
    def physical_device(self) -> PhysicalDevice: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class PhysicalDevice:
    """A piece of hardware, counted once, with its access paths."""

    @property
    def name(self) -> str: ...
    @property
    def properties(self) -> dict[str, Any]:
        """index, kind, name, stable_id, pci_bus_id, flags, simulated, memory_total, compute_units, device_count, numa_node."""
    @property
    def devices(self) -> list[Device]:
        """The access paths (backend devices) of this physical device."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Array:
    """An n-d array in an accel buffer. Strides are in bytes (numpy's convention).

    Host-visible arrays expose __array_interface__ (numpy.asarray gives a view,
    no copy) and DLPack (__dlpack__, __dlpack_device__).
    """

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def strides(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> str:
        """"float32", "int64", "bool", "complex64", ..."""
    @property
    def ndim(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def device(self) -> Device: ...
    @property
    def readonly(self) -> bool:
        """True when imported from read-only memory (ACCEL_IMPORT_FLAG_READ_ONLY)."""
    @property
    def is_c_contiguous(self) -> bool: ...
    @property
    def host_visible(self) -> bool:
        """Whether the host reads the memory in place (accel_buffer_get_host_address)."""
    @property
    def data_ptr(self) -> int:
        """Host address of element [0, ..., 0]; AccelError when the memory has none."""
    @property
    def __array_interface__(self) -> dict[str, Any]:
        """numpy's array interface (version 3); AttributeError when not host-visible."""
    def copy_to_host(self) -> Any:
        """A new numpy.ndarray with the contents (needs numpy; works for any memory)."""
    def to(self, device: _DeviceLike) -> Array:
        """A copy on `device`, with the same layout."""
    def copy(self) -> Array:
        """A copy on the same device."""
    def free(self) -> None:
        """Destroys the buffer now. Later use raises AccelError (stale handle); views
        exported earlier (numpy, DLPack) must not be used after it."""
    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """A DLPack capsule: "dltensor_versioned" (1.0, read-only and is-copied flags)
        when max_version >= (1, 0), a legacy "dltensor" otherwise. BufferError when
        the memory is not host-visible or dl_device is not the CPU."""
    def __dlpack_device__(self) -> tuple[int, int]:
        """(kDLCPU = 1, 0) for host-visible memory."""
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any: ...
    def __len__(self) -> int: ...

class Stream:
    """An in-order stream. `with stream:` synchronizes it at the end of the block."""

    def __init__(self, device: _DeviceLike = None) -> None: ...
    @property
    def device(self) -> Device: ...
    def synchronize(self, timeout: float | None = None) -> None:
        """Waits for the enqueued work (timeout in seconds; AccelError TIMEOUT past it)."""
    def query(self) -> bool:
        """True when all enqueued work is complete."""
    def record(self, event: Event | None = None) -> Event:
        """Records `event` (a new one when None) at this point of the stream."""
    def wait(self, event: Event) -> None:
        """Later work of this stream waits for `event`."""
    def close(self) -> None:
        """Destroys the stream after its work completes (idempotent)."""
    def __enter__(self) -> Stream: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

class Event:
    """An event. `with accel.Event() as e:` closes it at the end of the block."""

    def __init__(self, device: _DeviceLike = None, timing: bool = False) -> None: ...
    @property
    def device(self) -> Device: ...
    def query(self) -> bool: ...
    def synchronize(self, timeout: float | None = None) -> None: ...
    def elapsed_time(self, end: Event) -> int:
        """Nanoseconds from this event to `end` (both recorded, created with timing=True)."""
    def close(self) -> None: ...
    def __enter__(self) -> Event: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

def devices() -> list[Device]:
    """The visible devices in the stable order (ACCEL_BACKENDS, ACCEL_VISIBLE_DEVICES apply)."""

def device(device: _DeviceLike = None) -> Device:
    """One device by index or stable id; AccelError (NOT_FOUND) when there is none."""

def physical_devices() -> list[PhysicalDevice]: ...
def version() -> dict[str, Any]:
    """library_version and abi_version as (major, minor, patch), and the build string."""

def dtype_name(dtype: _DType) -> str: ...
def empty(shape: _Shape, dtype: _DType = "float32", *, device: _DeviceLike = None) -> Array:
    """An uninitialised array."""

def zeros(shape: _Shape, dtype: _DType = "float32", *, device: _DeviceLike = None) -> Array:
    """A zero-filled array."""

def asarray(obj: Any, dtype: _DType | None = None, *, device: _DeviceLike = None, copy: bool | None = None) -> Array:
    """`obj` as an accel array; buffer-protocol objects are imported without a copy where the device allows."""

def from_dlpack(x: Any, *, device: _DeviceLike = None, copy: bool | None = None) -> Array:
    """An array sharing a DLPack producer's host-visible memory (zero-copy), or a copy with copy=True."""
