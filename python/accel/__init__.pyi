"""Type stubs of the accel package (python/accel/__init__.py and the accel._accel extension)."""

import enum
from types import TracebackType
from os import PathLike
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence, SupportsIndex, TypedDict, TypeVar, overload

_DType = str | type | Any  # "float32", "<f4", numpy.float32, numpy.dtype("float32")
_DeviceLike = Device | int | str | None  # an index, a stable id, or None (the first device)
_Shape = SupportsIndex | Sequence[SupportsIndex]
_Dims = int | Sequence[int]  # 1 to 3 dimensions, each >= 1
_Blob = bytes | bytearray | memoryview | str | PathLike[str]  # a blob, or a path the core reads

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
    ACCEL_ERROR_CANCELLED = -14

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
    @property
    def topology(self) -> dict[str, Any]:
        """pci_bus_id, pcie_root, numa_node, local_cpus (cpulist), local_cpu_count, nearest_nic (index or None),
        domains ([{"level": "clique" | "node" | "rack" | ..., "id": str}], innermost first); docs/topology.md."""
    def link(self, peer: _DeviceLike) -> dict[str, Any]:
        """The path to `peer`: link_class ("SELF", "FABRIC", "PIX", ..., "HOST_STAGED"), link_count, bandwidth
        (bytes/s, 0 unknown), peer_access, fabric ("nvlink4")."""
    def nic_link(self, nic: int) -> dict[str, Any]:
        """The path to NIC `nic` (an index of accel.nics()), as link()."""
    @property
    def dlpack_device(self) -> tuple[int, int]:
        """The DLPack (device_type, device_id) of its arrays: kDLCPU (1) for the host backend, kDLExtDev (12) for
        simulated devices, kDLOpenCL (4), kDLVulkan (7), kDLCUDA (2), kDLROCM (10), kDLOneAPI (14)."""
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
    def matches(self, selector: str) -> bool:
        """Whether this device matches a capability selector (docs/selectors.md)."""
    def explain(self, selector: str) -> str:
        """Why this device does not match a selector; '' when it does."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Array:
    """An n-d array in an accel buffer. Strides are in bytes (numpy's convention).

    Host-visible arrays expose the buffer protocol and __array_interface__
    (numpy.asarray gives a view, no copy); every array speaks DLPack
    (__dlpack__, __dlpack_device__). Basic indexing (a[1:3, ::2], a[..., 0],
    a[None]) and .T give views of the same buffer. Host access to an array
    waits for the kernel launches that bound its buffer (python/README.md,
    "Streams and pending work").
    """

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def strides(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> str:
        """"float32", "int64", "bool", "complex64", "bfloat16", ..."""
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
    @property
    def T(self) -> Array:
        """The transposed view (axes reversed)."""
    def __setitem__(self, key: Any, value: Any) -> None:
        """Assigns through numpy (broadcasting, casting) into the view a[key], on any memory; ValueError when read-only."""
    def __getitem__(self, key: Any) -> Array:
        """A view: ints, slices, ... and None (numpy's basic indexing); an int per axis gives a 0-d array."""
    def synchronize(self) -> None:
        """Waits for the launches that bound this array's buffer; raises their stream's error."""
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
        when max_version >= (1, 0), a legacy "dltensor" otherwise.

        stream: None waits on the host for pending launches, -1 does not wait,
        an accel.Stream enqueues the wait on that stream; other values raise
        BufferError for CPU and ExtDev arrays. dl_device: the array's own
        DLPack device or (1, 0), the host; the host gets the memory in place
        when it has a host address, else a copy (is-copied flag; copy=False
        raises BufferError). copy=True always copies."""
    def __dlpack_device__(self) -> tuple[int, int]:
        """The device's DLPack (device_type, device_id) (Device.dlpack_device)."""
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
    @overload
    def launch(self, kernel: Kernel, grid: _Dims, block: _Dims, *args: Any) -> None:
        """Enqueues `kernel` over `grid` work-groups of `block` work-items (Kernel.launch)."""
    @overload
    def launch(self, prepared: PreparedLaunch) -> None:
        """Enqueues a prepared launch (PreparedLaunch.launch)."""
    def close(self) -> None:
        """Destroys the stream after its work completes (idempotent)."""
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> Stream:
        """Makes this the current stream of its device on this thread (accel.current_stream)."""
    def __exit__(self, *exc: object) -> Literal[False]:
        """Synchronizes the stream and restores the previous current stream."""

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

def current_stream(device: _DeviceLike = None) -> Stream | None:
    """The stream of the innermost `with accel.Stream(...)` block on this thread for `device`, or None."""

class LocalMemory:
    """Work-group local memory of `nbytes` bytes, for a kernel's local-memory argument."""

    def __init__(self, nbytes: int) -> None: ...
    @property
    def nbytes(self) -> int: ...

class Kernel:
    """One kernel of a module; lives as long as its module is open."""

    @property
    def name(self) -> str: ...
    @property
    def module(self) -> Module: ...
    @property
    def arguments(self) -> list[dict[str, Any]]:
        """The declared arguments: name, kind ("buffer", "scalar", "local_memory", "device_address"),
        access ("read", "write", "read_write" for buffers, else None), size (scalar bytes, 0 any)."""
    @property
    def max_work_group_size(self) -> int: ...
    @property
    def required_work_group_size(self) -> tuple[int, int, int]:
        """The only block it launches with; (0, 0, 0) when any fits."""
    @property
    def local_memory_size(self) -> int:
        """Static local memory per work-group, bytes."""
    def launch(self, grid: _Dims, block: _Dims, *args: Any, stream: Stream | None = None) -> None:
        """Enqueues one launch on `stream` (None: the current stream, else the package's own stream).

        Arguments match the declaration: accel.Array for buffers (the array's span is bound) and device
        addresses; int, float, bool, numpy scalars or bytes for scalars (packed to the declared size);
        accel.LocalMemory for local memory. AccelError (INVALID_ARGUMENT) names the argument that is wrong.
        The launch is asynchronous; host access to the bound arrays waits for it."""
    def prepare(self, grid: _Dims, block: _Dims, *args: Any) -> PreparedLaunch:
        """The launch checked once, as launch() checks it (docs/kernels.md, "Prepared launches"); it keeps the
        bound arrays' buffers. PreparedLaunch.launch() enqueues it."""

class PreparedLaunch:
    """A launch checked once (Kernel.prepare) and enqueued by each launch(). `with` closes it at the end."""

    @property
    def kernel(self) -> Kernel: ...
    def launch(self, stream: Stream | None = None) -> None:
        """Enqueues it once on `stream` (None: the current stream, else the package's own stream).
        Asynchronous; host access to the bound arrays waits for it. AccelError when closed or when a bound
        array's buffer was freed."""
    def close(self) -> None:
        """Destroys it; launches already enqueued still run (idempotent)."""
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> PreparedLaunch: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

class Module:
    """Kernels loaded on one device (accel.load_module). `with module:` closes it at the end of the block."""

    @property
    def device(self) -> Device: ...
    @property
    def name(self) -> str: ...
    @property
    def format(self) -> str:
        """The kernel format of the source that was loaded."""
    @property
    def available_formats(self) -> list[str]:
        """Every source's format, in the order given."""
    @property
    def source_index(self) -> int: ...
    @property
    def kernel_names(self) -> list[str]: ...
    def kernel(self, name: str) -> Kernel:
        """The kernel `name`; AccelError (NOT_FOUND) lists the ones the module has."""
    def __getitem__(self, name: str) -> Kernel: ...
    def close(self) -> None:
        """Destroys the module; its kernels raise afterwards. Launches already enqueued still run."""
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> Module: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

def load_module(
    sources: Mapping[str, _Blob] | Sequence[tuple[str, _Blob] | tuple[str, _Blob, str]],
    *,
    device: _DeviceLike = None,
    name: str | None = None,
    options: str | None = None,
) -> Module:
    """Loads the first source, in order, whose kernel format the device executes."""

def kernel_formats() -> list[str]:
    """Every kernel format name this version knows."""

def nics() -> list[dict[str, Any]]:
    """The machine's NICs: index, name, kind, pci_bus_id, pcie_root, numa_node."""

def loader_report() -> list[dict[str, Any]]:
    """Each backend the loader considered: backend, manifest, library, state ("loaded", "skipped", "failed"),
    status, status_name, reason, negotiated_abi_version, backend_abi_version, device_count (docs/loader.md)."""

def loader_warnings() -> list[dict[str, Any]]:
    """The overrides that named nothing or could not be parsed: setting ("ACCEL_BACKENDS"), value, item (the part that
    is wrong), message (docs/loader.md, "Setting warnings")."""

# ---- the scheduler (libaccel-runtime; python/README.md, "Scheduling"; docs/scheduler.md) ----

_T = TypeVar("_T")
_Strategy = Literal["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"]
_Level = Literal["clique", "pcie_root", "numa", "node", "rack", "block"]

class _Bundle(TypedDict, total=False):
    devices: int  # default 1
    share: float  # of each device's compute, in (0, 1]; default 1.0
    memory: int  # bytes per device; 0 (default): share * the device's memory
    selector: str | None  # a capability selector (docs/selectors.md); None or "": any device

class TaskError(AccelError):
    """A task, actor call or actor __init__ raised a Python exception. str(e) is the task's message:
    "<name> raised ValueError: boom (at file.py:12 in f)"; __cause__ is the exception itself; .status is the
    exception's own status for an AccelError (DEVICE_LOST retries the task), else ACCEL_ERROR_INTERNAL."""

class SelectorError(AccelError, ValueError):
    """A capability selector does not parse. str(e) names the field and what was expected."""

    column: int
    """The 1-based column of the error."""

def check_selector(selector: str) -> None:
    """Raises SelectorError (with .column) when `selector` does not parse (accel_selector_check)."""

class TaskContext:
    """What a running task (or actor __init__/method) knows of itself; valid only during that call, on its thread.
    A function gets it as its first argument (after self) when that parameter is named `ctx`."""

    @property
    def devices(self) -> list[Device]:
        """The devices the task got, in topology rank order; allocations on them count against its share."""
    def memory_limit(self, index: int = 0) -> int:
        """Bytes the task may allocate on devices[index]."""
    @property
    def attempt(self) -> int:
        """0 for the first attempt; counts retries (device loss) and actor restarts."""
    @property
    def cancelled(self) -> bool:
        """True once Future.cancel, the runtime's close or a preemption asked the task to stop."""
    @property
    def preempted(self) -> bool:
        """True once the task was preempted: raising then queues it again instead of failing it."""
    @property
    def runtime(self) -> Runtime | None: ...

class Future:
    """The result of a task or actor call."""

    def result(self, timeout: float | None = None) -> Any:
        """Waits (without the GIL; Ctrl-C interrupts) and returns the function's return value. Raises TaskError when it
        raised, AccelError with the task's status and message otherwise (CANCELLED, FAILED_PRECONDITION for a failed
        dependency, ...), AccelError TIMEOUT when `timeout` seconds passed first (the task goes on)."""
    def done(self) -> bool: ...
    def cancel(self) -> None:
        """A task not started ends CANCELLED (and its dependents); a running one sees ctx.cancelled."""
    @property
    def message(self) -> str:
        """After a failure, its message; while waiting, why it waits ("capacity: ...", "waiting for dependency ...")."""
    @property
    def name(self) -> str: ...

class PlacementGroup:
    """Devices reserved all at once, bundle by bundle; destroyed by destroy(), `with`, or when it and the Futures of
    the tasks run in it are gone."""

    def devices(self) -> list[dict[str, Any]]:
        """Each device held, in topology rank order: bundle, rank, share, memory, device (a Device); none while
        pending."""
    def wait(self, timeout: float | None = None) -> bool:
        """Waits until it is placed (placement_group(..., wait=True)); False when `timeout` seconds passed first;
        AccelError CANCELLED when it was destroyed first."""
    @property
    def message(self) -> str:
        """"placed", or why it waits."""
    def destroy(self) -> None:
        """Frees the reservation once its running tasks end; its waiting tasks end CANCELLED."""
    @property
    def name(self) -> str: ...
    @property
    def bundle_count(self) -> int: ...
    @property
    def destroyed(self) -> bool: ...
    def __enter__(self) -> PlacementGroup: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

class Queue:
    """A scheduling queue (docs/scheduler.md, "Queues"): quota and limit in device equivalents, a weight."""

    def usage(self) -> dict[str, Any]:
        """devices, memory, pending, running, finished, preempted, dominant_share, over_quota (descendants included)."""
    def destroy(self) -> None:
        """AccelError FAILED_PRECONDITION while it has children or unfinished work."""
    @property
    def name(self) -> str: ...

class TaskGroup:
    """Tasks without a Future each, waited for together (Runtime.task_group; docs/scheduler.md, "Task groups").
    `with rt.task_group() as g:` waits for them at the end of the block (raising the first failure), or cancels them
    and waits for the running ones when an exception leaves it."""

    def submit(
        self,
        function: Callable[..., Any],
        /,
        *args: Any,
        devices: int = 0,
        share: float | None = None,
        memory: int = 0,
        selector: str | None = None,
        placement_group: PlacementGroup | None = None,
        bundle: int = 0,
        after: Future | Iterable[Future] = (),
        max_retries: int = 0,
        queue: Queue | None = None,
        priority: int = 0,
        preemptible: bool = False,
        near: Iterable[ObjectRef] = (),
        name: str | None = None,
    ) -> None:
        """As Runtime.submit, into the group: no Future, and the return value is dropped."""
    def wait(self, timeout: float | None = None) -> bool:
        """True once every task ended; False when `timeout` seconds passed first (they go on). Raises TaskError for
        the first failure (its status; the count of failures and that task's name and message), or CANCELLED after
        cancel(); either way the group is clear again."""
    def done(self) -> bool:
        """Whether every task submitted so far has ended."""
    def cancel(self) -> None:
        """Tasks not started end CANCELLED, running ones see ctx.cancelled, and so do tasks submitted until a wait
        returns."""
    def destroy(self) -> None:
        """Releases the group; its tasks go on and end as usual."""
    def __enter__(self) -> TaskGroup: ...
    def __exit__(self, *exc_info: Any) -> bool: ...
    @property
    def name(self) -> str: ...

class Runtime:
    """The scheduler over this process's devices. `with accel.Runtime() as rt:` makes it the current runtime
    (accel.current_runtime) and closes it at the end: tasks not started are cancelled, running ones awaited."""

    def __init__(
        self,
        workers: int = 0,
        *,
        store_host_capacity: int = 0,
        store_device_capacity: int = 0,
        spill_directory: str | None = None,
    ) -> None:
        """workers: worker threads (0: the CPUs this process may run on, at least 2). The object store's capacity on the
        host and on each device (0: defaults) and its spill directory (None: $ACCEL_SPILL_DIR or a temporary one)."""
    def put(self, data: Any, *, name: str | None = None) -> ObjectRef:
        """A copy of `data` (bytes, a C-contiguous buffer-protocol object, or an accel.Array) in the object store."""
    def import_object(self, token: str) -> ObjectRef:
        """The object another process shared (ObjectRef.share()), mapped read-only here without a copy (uint8)."""
    def put_file(
        self,
        path: str,
        *,
        devices: list[int] | None = None,
        offset: int = 0,
        size: int = 0,
        chunk_size: int = 0,
        progress: Callable[[int, int], object] | None = None,
        name: str | None = None,
    ) -> list[ObjectRef]:
        """Streams a file's bytes into the store, one ObjectRef per entry of `devices` (device indices, -1 the host;
        None: one object on the host); reads overlap the copies; progress(done, total) after each chunk."""
    def object_store_usage(self, device: int | None = None) -> dict[str, int]:
        """capacity, used, replicas, transfers_in, evicted, moved_out, restored on the host (None) or a device."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def workers(self) -> int: ...
    def devices(self) -> list[dict[str, Any]]:
        """Each physical device: device (a Device), share_free, memory_free, memory_total, lost."""
    def counters(self) -> dict[str, int]:
        """submitted, placed, started, finished, failed, cancelled, retried, devices_lost, pending, running,
        placement_groups_created, placement_groups_refused, preempted, actors_created, actors_restarted, actors_died."""
    def set_event_log(self, capacity: int) -> None:
        """Keeps the last `capacity` decisions (0: off); docs/scheduler.md, "Events"."""
    def events(self, after: int = 0, max: int = 4096) -> list[dict[str, Any]]:
        """The decisions after sequence `after`, oldest first: sequence, time_ns, kind ("submitted", "placed",
        "started", "finished", "failed", ...), status, id, device (None: none), device_count, name."""
    def submit(
        self,
        function: Callable[..., Any],
        /,
        *args: Any,
        devices: int = 0,
        share: float | None = None,
        memory: int = 0,
        selector: str | None = None,
        placement_group: PlacementGroup | None = None,
        bundle: int = 0,
        after: Future | Iterable[Future] = (),
        max_retries: int = 0,
        queue: Queue | None = None,
        priority: int = 0,
        preemptible: bool = False,
        near: Iterable[ObjectRef] = (),
        name: str | None = None,
    ) -> Future:
        """Runs function(*args) (function(ctx, *args) when its first parameter is named ctx) as a task on `devices`
        devices matching `selector`, each with `share` of its compute (None: 1.0, or the bundle's share in a placement
        group) and `memory` bytes (0: share * its memory). Futures in `after` or among `args` are dependencies (an
        argument Future is replaced by its value). AccelError NOT_FOUND / RESOURCE_EXHAUSTED when no device could ever
        hold it, SelectorError for a selector that does not parse."""
    def actor(
        self,
        cls: type | ActorClass,
        /,
        *args: Any,
        devices: int = 0,
        share: float | None = None,
        memory: int = 0,
        selector: str | None = None,
        placement_group: PlacementGroup | None = None,
        bundle: int = 0,
        max_restarts: int = 0,
        queue: Queue | None = None,
        priority: int = 0,
        name: str | None = None,
    ) -> ActorHandle:
        """Creates an actor: cls(*args) runs on its reservation (again after each restart)."""
    def task_group(self, name: str | None = None) -> TaskGroup:
        """A TaskGroup (tbb::task_group's counterpart): group.submit(...) without a Future each, group.wait()."""
    def placement_group(
        self,
        bundles: list[_Bundle],
        strategy: _Strategy = "PACK",
        level: _Level = "clique",
        required: bool = True,
        name: str | None = None,
        queue: Queue | None = None,
        wait: bool = False,
    ) -> PlacementGroup:
        """Reserves every bundle or none, now, counted against `queue` while it lives; AccelError RESOURCE_EXHAUSTED
        names the constraint, capacity or queue limit that decided. With wait=True a group that does not fit now is
        pending (it holds nothing) and placed whole once it fits: PlacementGroup.wait()."""
    def queue(
        self,
        name: str,
        parent: Queue | None = None,
        quota: float = 0.0,
        limit: float = 0.0,
        quota_memory: int = 0,
        limit_memory: int = 0,
        weight: float = 1.0,
    ) -> Queue:
        """A queue (quota and limit in device equivalents; limit 0: none) under `parent` (None: top level)."""
    def __enter__(self) -> Runtime: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

class ObjectRef:
    """A reference to an immutable object in a runtime's object store (docs/objectstore.md)."""

    @property
    def size(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def released(self) -> bool: ...
    def get(self, device: int | None = None, *, timeout: float | None = None) -> ObjectView | Array:
        """A read-only view: on the host an ObjectView (zero-copy), on a runtime device index a read-only Array
        over the replica there (made when missing, by the best path)."""
    def info(self) -> dict[str, Any]:
        """size, references, views, on_host, on_disk, device_replicas."""
    def on_device(self, device: int) -> bool: ...
    def share(self) -> str:
        """A token for Runtime.import_object in another process of this user on this node (the same each time)."""
    def release(self) -> None: ...
    def __enter__(self) -> ObjectRef: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

class ObjectView:
    """Read-only bytes of an object's host replica: the buffer protocol and DLPack (read-only flag set)."""

    @property
    def nbytes(self) -> int: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def released(self) -> bool: ...
    def tobytes(self) -> bytes: ...
    def __dlpack__(
        self, *, stream: Any = None, max_version: tuple[int, int] | None = None, dl_device: Any = None, copy: Any = None
    ) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def release(self) -> None: ...
    def __enter__(self) -> ObjectView: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

def put(data: Any, *, name: str | None = None) -> ObjectRef:
    """current_runtime().put(data, name=name)."""

def get(ref: ObjectRef, device: int | None = None, *, timeout: float | None = None) -> ObjectView | Array:
    """ref.get(device, timeout=timeout)."""

def current_runtime() -> Runtime:
    """Inside a task: its runtime; elsewhere the innermost open `with accel.Runtime()`; AccelError otherwise."""

def placement_group(
    bundles: list[_Bundle],
    strategy: _Strategy = "PACK",
    level: _Level = "clique",
    required: bool = True,
    name: str | None = None,
    queue: Queue | None = None,
    wait: bool = False,
) -> PlacementGroup:
    """current_runtime().placement_group(...)."""

class RemoteFunction:
    """A function made a task by @accel.task. Calling it directly runs the plain function."""

    def remote(self, *args: Any, **kwargs: Any) -> Future:
        """Submits it to current_runtime() with the decorator's options; Futures among the arguments are
        dependencies."""
    def options(self, **options: Any) -> RemoteFunction:
        """A copy with these options (those of Runtime.submit) replacing the decorator's."""
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

@overload
def task(function: Callable[..., Any], /) -> RemoteFunction: ...
@overload
def task(
    *,
    devices: int = 0,
    share: float | None = None,
    memory: int = 0,
    selector: str | None = None,
    placement_group: PlacementGroup | None = None,
    bundle: int = 0,
    after: Future | Iterable[Future] = (),
    max_retries: int = 0,
    queue: Queue | None = None,
    priority: int = 0,
    preemptible: bool = False,
    near: Iterable[ObjectRef] = (),
    name: str | None = None,
) -> Callable[[Callable[..., Any]], RemoteFunction]: ...

class ActorClass:
    """A class made an actor by @accel.actor."""

    def remote(self, *args: Any, **kwargs: Any) -> ActorHandle:
        """Creates the actor in current_runtime(); cls(*args, **kwargs) runs on its reservation."""
    def options(self, **options: Any) -> ActorClass: ...

@overload
def actor(cls: type, /) -> ActorClass: ...
@overload
def actor(
    *,
    devices: int = 0,
    share: float | None = None,
    memory: int = 0,
    selector: str | None = None,
    placement_group: PlacementGroup | None = None,
    bundle: int = 0,
    max_restarts: int = 0,
    queue: Queue | None = None,
    priority: int = 0,
    name: str | None = None,
) -> Callable[[type], ActorClass]: ...

class ActorMethod:
    """handle.method of an ActorHandle."""

    def remote(self, *args: Any, **kwargs: Any) -> Future:
        """Queues a call; calls run one at a time, in the order made, on the actor's devices."""
    def options(
        self, *, name: str | None = None, after: Future | Iterable[Future] = (), max_retries: int = 0
    ) -> ActorMethod: ...

class ActorHandle:
    """An actor. handle.m.remote(...) (an ActorMethod) or handle.call("m", ...) return Futures. Destroyed by destroy(),
    `with`, or when the handle and the Futures of its calls are gone."""

    def call(self, method: str, /, *args: Any, **kwargs: Any) -> Future: ...
    def info(self) -> dict[str, Any]:
        """state ("PENDING", "ALIVE", "RESTARTING", "DEAD"), restarts, calls_pending, calls_done."""
    @property
    def message(self) -> str:
        """Why it is DEAD or PENDING; "" otherwise."""
    @property
    def name(self) -> str: ...
    def destroy(self) -> None:
        """Cancels the calls not started, lets the running one end, drops the instance (finalize) and frees the
        reservation; returns once that is done (from inside a task: at once)."""
    def __enter__(self) -> ActorHandle: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...
    def __getattr__(self, name: str) -> ActorMethod: ...
