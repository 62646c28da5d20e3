/*
 * Accel backend plugin ABI, 1.1. For backend authors; applications use
 * include/accel/accel.h, which this header includes for shared types.
 *
 * A backend is a shared object exporting exactly one symbol,
 * accel_backend_get_api. The core calls it with the range of ABI versions it
 * speaks and its host services; the backend answers with the highest version
 * both speak and a pointer to its function table (docs/abi.md,
 * docs/backend-abi.md). A docs/<name>.md named here is in Accel's source tree
 * and installed as <prefix>/share/doc/accel/<name>.md; the manifest schema
 * (abi/manifest.schema.json) as <prefix>/share/doc/accel/abi/, and the
 * linker version script that exports only the entry point as
 * <prefix>/share/accel/backend-kit/backend.map (docs/backend-checklist.md
 * builds a backend with or without CMake).
 *
 * Rules, stated once; each slot's comment adds its own contract:
 *   - The table only grows at its end. The core treats every slot past the
 *     table's struct_size, and every NULL slot, as "not implemented" and
 *     returns ACCEL_ERROR_UNIMPLEMENTED without calling it. Slots marked
 *     REQUIRED must be non-NULL or the backend is refused.
 *   - The core validates handles and arguments before calling a slot: offsets
 *     and sizes are within the buffer, outputs are non-NULL, objects belong to
 *     this backend. Slots need not repeat those checks.
 *   - Structs in: the core passes its own copy, never NULL, at its own size
 *     (struct_size is the core's sizeof; fields an older caller lacked are
 *     0). Structs out: zeroed at the core's size with the header set (a
 *     slot's comment names any other preset field); a slot writes only what
 *     follows the header, no further than struct_size (ACCEL_STRUCT_HAS_FIELD
 *     in accel.h). Pointers passed in are valid for the call only unless the
 *     slot's comment says otherwise.
 *   - Zero sizes never reach a slot: a zero-size copy or fill succeeds in
 *     the core without calling the backend; zero-size buffers, maps, imports
 *     and module blobs are refused before it.
 *   - On failure a slot returns a negative accel_status_t and first calls
 *     host->set_error with a message saying what was wrong; the core prefixes
 *     the API function and the device. A create slot that fails leaves its
 *     output NULL, as the core passed it (the core may destroy what it finds
 *     there). A slot that fails because the device stopped working returns
 *     ACCEL_ERROR_DEVICE_LOST (docs/errors.md).
 *   - Enqueue slots (stream_copy_*, stream_fill_buffer,
 *     stream_enqueue_host_callback, stream_free_buffer, stream_record_event,
 *     stream_wait_event, stream_launch_kernel, stream_launch_prepared) queue
 *     the work in stream order and return; they fail only when it cannot be
 *     queued. A failure of the work itself becomes the stream's asynchronous
 *     error. Queued work keeps alive what it uses: the core may destroy a
 *     buffer, event, kernel, module or prepared launch right after the
 *     enqueue returns.
 *   - Ownership: objects a slot creates belong to the backend and are
 *     released by the matching destroy slot. buffer_destroy may be called
 *     while enqueued work still uses the buffer: the backend releases the
 *     memory when that work completes (stream-ordered free).
 *   - Threading: every slot may be called from any thread concurrently,
 *     except context_destroy, which is called once, after every other object
 *     of the context was destroyed. Destroy slots are called once per object.
 *     A slot never calls the application API (accel_*); nothing in a backend
 *     is global, since several instances load one library (docs/threading.md).
 *   - Asynchronous errors: a failed operation's status and message stay on its
 *     stream (and events recorded after it) and are returned, with
 *     host->set_error called on the querying thread, by stream_query,
 *     stream_synchronize, event_query and event_synchronize. Work enqueued
 *     after the failure is skipped (host callbacks still run, told the
 *     error); events recorded after it complete with it, until
 *     stream_clear_error (docs/streams.md).
 */
#ifndef ACCEL_ACCEL_BACKEND_H_
#define ACCEL_ACCEL_BACKEND_H_

#include "accel/accel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACCEL_BACKEND_ABI_VERSION_MAJOR 1
#define ACCEL_BACKEND_ABI_VERSION_MINOR 1
#define ACCEL_BACKEND_ABI_VERSION \
  ACCEL_MAKE_VERSION(ACCEL_BACKEND_ABI_VERSION_MAJOR, ACCEL_BACKEND_ABI_VERSION_MINOR, 0)

/* The one exported symbol's name. */
#define ACCEL_BACKEND_ENTRY_POINT_NAME "accel_backend_get_api"

#if defined(__GNUC__)
#define ACCEL_BACKEND_EXPORT __attribute__((visibility("default")))
#else
#define ACCEL_BACKEND_EXPORT
#endif

/* Structure types of this ABI (1000..1999). */
/* Plain macros, not accel_structure_type_t values: the application enum
 * stays free of plugin-only types. */
#define ACCEL_STRUCTURE_TYPE_HOST_SERVICES UINT32_C(1000)
#define ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS UINT32_C(1001)
#define ACCEL_STRUCTURE_TYPE_BACKEND_API UINT32_C(1002)
#define ACCEL_STRUCTURE_TYPE_BACKEND_CONTEXT_DESC UINT32_C(1003)
#define ACCEL_STRUCTURE_TYPE_BACKEND_KERNEL_ARG UINT32_C(1004)
#define ACCEL_STRUCTURE_TYPE_BACKEND_LAUNCH UINT32_C(1005)

/* Backend-side objects: opaque to the core, never dereferenced by it. */
typedef struct accel_bk_context_s* accel_bk_context_t;
typedef struct accel_bk_device_s* accel_bk_device_t;
typedef struct accel_bk_buffer_s* accel_bk_buffer_t;
typedef struct accel_bk_stream_s* accel_bk_stream_t;
typedef struct accel_bk_event_s* accel_bk_event_t;
typedef struct accel_bk_module_s* accel_bk_module_t;
typedef struct accel_bk_kernel_s* accel_bk_kernel_t;
typedef struct accel_bk_prepared_launch_s* accel_bk_prepared_launch_t; /* 1.1 */

/*===----------------------------------------------------------------------===*/
/* Host services: what the core offers a backend                              */
/*===----------------------------------------------------------------------===*/

/* Passed to accel_backend_get_api (valid for that call) and, through
 * accel_bk_context_desc_t.host, to context_create: there the struct, its
 * strings and its services live as long as the context. Every service may
 * be called from any thread. */
typedef struct accel_host_services_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_HOST_SERVICES */
  uint32_t struct_size;
  const void* next;
  void* context; /* pass as the first argument of every service */
  /* Logs `message` (copied; NULL is ignored) through the instance's sink,
   * prefixed with the backend's name; cheap when the level is filtered. */
  void (*log)(void* context, accel_log_level_t level, const char* message);
  /* Sets the message (copied; NULL is "") of the slot call in progress. Call
   * it on the thread running that slot, before returning the negative
   * status; the returned status is the code, `status` is informative. */
  void (*set_error)(void* context, accel_status_t status, const char* message);
  /* Host memory for the backend's own bookkeeping: `size` bytes aligned to
   * `alignment`, a power of two (raised to at least sizeof(void*)); NULL when
   * out of memory or `alignment` is not a power of two. */
  void* (*allocate)(void* context, size_t size, size_t alignment);
  /* Frees what `allocate` returned; NULL is ignored. */
  void (*deallocate)(void* context, void* pointer);
  const char* cache_dir;  /* ACCEL_CACHE_DIR, or NULL: where compiler caches go */
  const char* machine_id; /* stable id of this machine, never NULL */
  /* The value of an ACCEL_* setting as this instance sees it ("ACCEL_SIM_PROFILE"),
   * or NULL when it is unset, `name` does not start with "ACCEL_", or the
   * instance ignores the environment (a privileged process,
   * ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT). Each name is read once; the
   * string lives as long as the context. Backends read their settings only
   * here, never with getenv. */
  const char* (*get_setting)(void* context, const char* name);
} accel_host_services_t;

/*===----------------------------------------------------------------------===*/
/* Launches as the core hands them over                                       */
/*===----------------------------------------------------------------------===*/

/* One launch argument, checked by the core against the kernel's declaration
 * and the device: `kind` is the declared one. BUFFER: a buffer of the
 * stream's device, [offset, offset + size) within it and within
 * max_buffer_range, `access` within the declared one and never WRITE on a
 * read-only import. SCALAR: `value` non-NULL, `size` the declared one (when
 * declared) and within max_argument_size. LOCAL_MEMORY: `size` > 0 bytes.
 * DEVICE_ADDRESS (only on devices with ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES):
 * `device_address` as the application gave it, `size` 0. */
typedef struct accel_bk_kernel_arg_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_BACKEND_KERNEL_ARG */
  uint32_t struct_size;
  const void* next;
  accel_kernel_arg_kind_t kind;
  accel_access_t access; /* BUFFER: the effective access; others ACCEL_ACCESS_READ */
  accel_bk_buffer_t buffer;
  uint64_t offset;
  uint64_t size;     /* BUFFER: bytes bound; SCALAR: bytes at `value`; LOCAL_MEMORY: bytes */
  const void* value; /* SCALAR: valid for the call only; the backend copies it */
  uint64_t device_address;
} accel_bk_kernel_arg_t;

/* A launch as stream_launch_kernel receives it, valid for the call only
 * (docs/kernels.md). Each work-group gets local memory of its own: the
 * kernel's static local_memory_size plus dynamic_local_memory_size, which
 * fit the device's local_memory_size together (core-checked). */
typedef struct accel_bk_launch_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_BACKEND_LAUNCH */
  uint32_t struct_size;
  const void* next;
  uint32_t grid[3];                  /* each >= 1, within the device's max_grid_dims (0: no limit) */
  uint32_t block[3];                 /* each >= 1, within the kernel's and device's limits */
  const accel_bk_kernel_arg_t* args; /* as many as the kernel declares, stride args[0].struct_size */
  uint32_t arg_count;
  uint32_t reserved0;
  uint64_t dynamic_local_memory_size; /* sum of the LOCAL_MEMORY arguments */
} accel_bk_launch_t;

/*===----------------------------------------------------------------------===*/
/* The function table                                                         */
/*===----------------------------------------------------------------------===*/

/* What context_create receives. */
typedef struct accel_bk_context_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_BACKEND_CONTEXT_DESC */
  uint32_t struct_size;
  const void* next;
  const accel_host_services_t* host; /* lives as long as the context */
  uint32_t abi_version;              /* negotiated */
  uint32_t reserved0;
} accel_bk_context_desc_t;

typedef struct accel_backend_api_t {
  uint32_t stype;       /* ACCEL_STRUCTURE_TYPE_BACKEND_API */
  uint32_t struct_size; /* sizeof the table as the backend compiled it */
  const void* next;
  uint32_t abi_version; /* the newest ABI this table's layout implements */
  uint32_t reserved0;
  const char* name;    /* short lowercase name, e.g. "host" */
  const char* version; /* the backend's own version string */

  /* --- Contexts and devices ---------------------------------------------- */
  /* REQUIRED. Opens the backend for one instance. A missing runtime is not a
   * failure: succeed and report zero devices, after logging the reason; or
   * return ACCEL_ERROR_BACKEND_UNAVAILABLE with the reason. Any failure
   * refuses the backend ("initialisation failed: <message>" in the loader
   * report), and context_destroy is then not called. */
  accel_status_t (*context_create)(const accel_bk_context_desc_t* desc, accel_bk_context_t* out_context);
  /* REQUIRED. Called once, after every object of the context was destroyed,
   * also when the core refuses the backend after context_create succeeded;
   * the core then unloads the library. */
  void (*context_destroy)(accel_bk_context_t context);
  /* REQUIRED. The device list, fixed for the context's life, by the
   * enumeration pattern of accel.h: with `out_devices` NULL write the count;
   * otherwise *inout_count is the capacity (ACCEL_ERROR_INVALID_ARGUMENT,
   * with the count written back, when it is too small). Called at load
   * (count, then list); a failure refuses the backend. */
  accel_status_t (*context_get_devices)(accel_bk_context_t context, uint32_t* inout_count,
                                        accel_bk_device_t* out_devices);
  /* REQUIRED. Called once per device, at instance creation; the core keeps
   * the result. It passes a zeroed struct of its own size with the header
   * set and numa_node -1. The backend writes what it knows of: kind,
   * vendor_id, flags, device_id, memory_total, max_allocation,
   * max_buffer_range, local_memory_size, numeric_formats, kernel_formats,
   * modeled_kernel_formats, features, compute_units, clock_mhz,
   * max_work_group_size, max_work_group_dims, max_grid_dims,
   * max_argument_size, subgroup_size, numa_node, uuid, and the NUL-terminated
   * name, vendor, architecture, sku, driver_version and pci_bus_id
   * (docs/capability-keys.md). The core owns the header (stype,
   * struct_size, next), stable_id and backend_name, and overwrites them.
   * The core enforces from here: max_allocation and local_memory_size (0
   * refuses every buffer_create, and local memory in launches);
   * max_grid_dims, max_work_group_dims, max_work_group_size,
   * max_buffer_range and max_argument_size (0: no limit); kernel_formats
   * and features gate the slots that need them. A failure drops the device
   * (logged, and noted in the loader report), not the backend. */
  accel_status_t (*device_get_capabilities)(accel_bk_device_t device, accel_device_capabilities_t* out_capabilities);
  /* Live free and total bytes; both outputs non-NULL. Called for every
   * accel_device_get_memory_info and ACCEL_DEVICE_INFO_MEMORY_FREE query. */
  accel_status_t (*device_get_memory_info)(accel_bk_device_t device, uint64_t* out_free, uint64_t* out_total);

  /* --- Memory ------------------------------------------------------------ */
  /* Allocates desc->size bytes of desc->memory_kind. The core checked: size
   * > 0 and <= max_allocation, flags 0, memory_kind DEVICE or HOST_PINNED.
   * ACCEL_ERROR_RESOURCE_EXHAUSTED when out of memory (say the figures),
   * ACCEL_ERROR_UNSUPPORTED for a memory kind the device lacks. */
  accel_status_t (*buffer_create)(accel_bk_device_t device, const accel_buffer_desc_t* desc,
                                  accel_bk_buffer_t* out_buffer);
  /* Called once per buffer (also for a failed stream_free_buffer, never
   * after a successful one). Work queued on any stream may still use it, and
   * it may be mapped: release the memory once that work completes. */
  void (*buffer_destroy)(accel_bk_buffer_t buffer);
  /* Maps [offset, offset + size) and returns its host address, valid until
   * buffer_unmap or buffer_destroy. Synchronous: the application completed
   * the buffer's work first. The core checked the range, that the buffer is
   * not mapped, and passes flags ACCEL_MAP_READ and/or ACCEL_MAP_WRITE
   * (never 0, no WRITE on a read-only import); it serialises map and unmap
   * of one buffer. ACCEL_ERROR_UNSUPPORTED for memory the device cannot map. */
  accel_status_t (*buffer_map)(accel_bk_buffer_t buffer, uint64_t offset, uint64_t size, uint64_t flags,
                               void** out_ptr);
  /* Ends the mapping; called only for a mapped buffer. What the host wrote
   * is visible to work enqueued afterwards. */
  accel_status_t (*buffer_unmap)(accel_bk_buffer_t buffer);

  /* --- Streams (docs/streams.md) ------------------------------------------ */
  /* Creates an in-order stream. desc->flags is 0 (core-checked);
   * desc->priority may be ignored. ACCEL_ERROR_RESOURCE_EXHAUSTED when its
   * queue or worker cannot be made. */
  accel_status_t (*stream_create)(accel_bk_device_t device, const accel_stream_desc_t* desc,
                                  accel_bk_stream_t* out_stream);
  /* Waits for the stream's enqueued work, then releases it. Called once. */
  void (*stream_destroy)(accel_bk_stream_t stream);
  /* Enqueues a copy of `size` bytes from host `src` to `dst` at dst_offset.
   * The core checked: `src` non-NULL; `dst` on the stream's device, writable,
   * holding the range; `size` > 0 (a zero-size copy succeeds in the core and
   * never reaches the slot). `src` is the application's memory: the
   * application keeps it valid until the copy completes (docs/ownership.md),
   * so read it when the copy runs, never after. */
  accel_status_t (*stream_copy_host_to_buffer)(accel_bk_stream_t stream, const void* src, accel_bk_buffer_t dst,
                                               uint64_t dst_offset, uint64_t size);
  /* Enqueues a copy of `size` bytes from `src` at src_offset to host `dst`.
   * The core checked: `dst` non-NULL; `src` on the stream's device, holding
   * the range; `size` > 0 (a zero-size copy succeeds in the core and never
   * reaches the slot). `dst` is the application's memory: the application
   * keeps it valid until the copy completes (docs/ownership.md), so write
   * it when the copy runs, never after. */
  accel_status_t (*stream_copy_buffer_to_host)(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset,
                                               void* dst, uint64_t size);
  /* Enqueues a copy between two buffers of this backend, of the stream's
   * device or others (a peer or host-staged copy). The core checked both
   * ranges, that `dst` is writable and that ranges of one buffer do not
   * overlap; `size` > 0 (a zero-size copy succeeds in the core and never
   * reaches the slot). */
  accel_status_t (*stream_copy_buffer)(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset,
                                       accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size);
  /* Enqueues a fill of [offset, offset + size) with the pattern. The core
   * checked the pattern: non-NULL, pattern_size 1, 2 or 4, offset and size
   * multiples of pattern_size; and the buffer: the stream's device's,
   * writable, holding the range; `size` > 0 (a zero-size fill succeeds in
   * the core and never reaches the slot). `pattern` is valid for the call
   * only: copy it. */
  accel_status_t (*stream_fill_buffer)(accel_bk_stream_t stream, accel_bk_buffer_t buffer, uint64_t offset,
                                       uint64_t size, const void* pattern, uint32_t pattern_size);
  /* Enqueues callback(user_data, status); both are opaque to the backend
   * (the core may pass a trampoline of its own). Call it exactly once, in
   * stream order, on the stream's worker thread: normally with
   * ACCEL_SUCCESS, and a negative return becomes the stream's asynchronous
   * error (the host backend also maps a positive one to
   * ACCEL_ERROR_INTERNAL); when the stream holds an error and skips its
   * place, with that error, ignoring the return. */
  accel_status_t (*stream_enqueue_host_callback)(accel_bk_stream_t stream, accel_host_callback_t callback,
                                                 void* user_data);
  /* Releases `buffer` (of any device of this backend) once the work
   * enqueued on this stream before the call completes. After success the
   * core never uses or destroys the buffer; on failure leave it as it was:
   * the core then calls buffer_destroy on it. */
  accel_status_t (*stream_free_buffer)(accel_bk_stream_t stream, accel_bk_buffer_t buffer);
  /* Records `event` (of any device of this backend) here: it completes when
   * the work before it does, with the stream's error if that work failed.
   * Re-recording replaces the record later queries and waits see; a wait
   * enqueued earlier keeps the record it saw. */
  accel_status_t (*stream_record_event)(accel_bk_stream_t stream, accel_bk_event_t event);
  /* Later work on the stream waits until the event's current record
   * completes (a later re-record does not change this wait). An event never
   * recorded is complete: nothing to wait for. A record that completed with
   * an error passes that error to this stream. */
  accel_status_t (*stream_wait_event)(accel_bk_stream_t stream, accel_bk_event_t event);
  /* Never blocks: ACCEL_SUCCESS when all enqueued work completed,
   * ACCEL_NOT_READY while some is pending, or the stream's asynchronous error
   * as soon as it is set, even while later work is still being skipped.
   * Pending means enqueued and not completed: work that is running (a host
   * callback that has not returned) is pending, not only work still queued. */
  accel_status_t (*stream_query)(accel_bk_stream_t stream);
  /* Waits for all enqueued work: ACCEL_SUCCESS, the asynchronous error (once
   * the stream is idle), or ACCEL_ERROR_TIMEOUT when timeout_ns passed first
   * (0 checks without waiting; ACCEL_TIMEOUT_INFINITE never times out).
   * Called from a host callback of the same stream, it would wait for
   * itself: ACCEL_ERROR_FAILED_PRECONDITION. */
  accel_status_t (*stream_synchronize)(accel_bk_stream_t stream, uint64_t timeout_ns);
  /* Clears the asynchronous error, so later work runs again. The core does
   * not check for pending work: the backend returns
   * ACCEL_ERROR_FAILED_PRECONDITION while work is pending, running work
   * included (as stream_query counts it). */
  accel_status_t (*stream_clear_error)(accel_bk_stream_t stream);

  /* --- Events (docs/streams.md) ------------------------------------------- */
  /* Creates an event, not yet recorded. The core checked desc->flags: only
   * ACCEL_EVENT_FLAG_TIMING, and that only on devices with
   * ACCEL_DEVICE_FEATURE_EVENT_TIMING. */
  accel_status_t (*event_create)(accel_bk_device_t device, const accel_event_desc_t* desc, accel_bk_event_t* out_event);
  /* Records still pending complete all the same, and streams waiting on
   * them keep waiting. */
  void (*event_destroy)(accel_bk_event_t event);
  /* Never blocks: ACCEL_SUCCESS when the current record completed (an event
   * never recorded is complete), ACCEL_NOT_READY while it is pending, or the
   * error the work before it failed with. */
  accel_status_t (*event_query)(accel_bk_event_t event);
  /* Waits for the current record, then answers as event_query (an event
   * never recorded is complete at once); ACCEL_ERROR_TIMEOUT when timeout_ns
   * passed first (0 checks, ACCEL_TIMEOUT_INFINITE never times out). */
  accel_status_t (*event_synchronize)(accel_bk_event_t event, uint64_t timeout_ns);
  /* Nanoseconds from `start` to `end`, never negative (clamp at 0). The core
   * checked: both events of one device, both created with
   * ACCEL_EVENT_FLAG_TIMING. The backend returns
   * ACCEL_ERROR_FAILED_PRECONDITION when either was never recorded and
   * ACCEL_NOT_READY while either is pending. */
  accel_status_t (*event_elapsed_time)(accel_bk_event_t start, accel_bk_event_t end, uint64_t* out_nanoseconds);

  /* --- Modules and kernels (docs/kernels.md) ------------------------------ */
  /* Builds `source`, whose format the device's kernel_formats lists. Exactly
   * one of source->data (with size > 0) and source->path is set (the core
   * checked that `path` is readable). The blob is valid for the call only,
   * except a native-host table, which the application keeps valid until the
   * module is destroyed and its launches ran. A blob that is not a valid
   * module of its format: ACCEL_ERROR_INVALID_ARGUMENT with the build log's
   * gist in the message. On any failure but ACCEL_ERROR_UNIMPLEMENTED the
   * core tries the caller's next source the device executes. */
  accel_status_t (*module_create)(accel_bk_device_t device, const accel_module_source_t* source,
                                  accel_bk_module_t* out_module);
  /* Called once, after every kernel of the module was destroyed; launches
   * still enqueued must keep what they need alive. */
  void (*module_destroy)(accel_bk_module_t module);
  /* Kernel names, by the enumeration pattern (context_get_devices); called
   * in module_create (count, then names), whose failure it becomes. The
   * strings live as long as the module. */
  accel_status_t (*module_enumerate_kernels)(accel_bk_module_t module, uint32_t* inout_count, const char** out_names);
  /* The kernel `name` (valid for the call only), always one that
   * module_enumerate_kernels listed: the core answers
   * ACCEL_ERROR_NOT_FOUND for others. Called once per name and module, then
   * kernel_get_properties and kernel_get_argument_info for each argument;
   * if one fails, the core calls kernel_destroy. */
  accel_status_t (*module_get_kernel)(accel_bk_module_t module, const char* name, accel_bk_kernel_t* out_kernel);
  /* Called once, before its module's module_destroy; launches of the kernel
   * may still be enqueued. */
  void (*kernel_destroy)(accel_bk_kernel_t kernel);
  /* Fills argument_count, max_work_group_size (0: the device's; the core
   * lowers a larger one to the device's), required_work_group_size (all 0:
   * any) and local_memory_size (static, per work-group); `name` and `module`
   * are the core's. */
  accel_status_t (*kernel_get_properties)(accel_bk_kernel_t kernel, accel_kernel_properties_t* out_properties);
  /* Fills kind, access, size and name (NULL, or a string the core copies) of
   * argument `index`, < argument_count (core-checked), as accel.h's
   * accel_kernel_argument_info_t describes them. */
  accel_status_t (*kernel_get_argument_info)(accel_bk_kernel_t kernel, uint32_t index,
                                             accel_kernel_argument_info_t* out_info);
  /* Enqueues one launch of `kernel`, of the stream's device. The core checked
   * `launch` against the kernel's declaration and the device's limits
   * (accel_bk_launch_t). `launch`, its args and scalar values are valid for
   * the call only: copy what the launch needs, and keep its buffers alive
   * until it ran. Errors while it runs become the stream's asynchronous
   * error. */
  accel_status_t (*stream_launch_kernel)(accel_bk_stream_t stream, accel_bk_kernel_t kernel,
                                         const accel_bk_launch_t* launch);

  /* --- Memory interop (docs/interop.md) ----------------------------------- */
  /* Wraps external memory without copying. The core checked desc: a known
   * type, size > 0, flags within ACCEL_IMPORT_FLAG_READ_ONLY (which the core
   * enforces: no write reaches a read-only import), a non-NULL handle for
   * pointer types, no wrap of handle + offset + size. On success the backend
   * owns desc->release and calls it exactly once, when the memory is no
   * longer used (after buffer_destroy and the work enqueued before it); on
   * failure it never calls it. ACCEL_ERROR_UNSUPPORTED for a type it cannot
   * import. */
  accel_status_t (*buffer_import)(accel_bk_device_t device, const accel_buffer_import_desc_t* desc,
                                  accel_bk_buffer_t* out_buffer);
  /* Fills handle, handle2, offset and size (docs/interop.md); the core
   * checked that `type` is known and sets the `type` field itself.
   * ACCEL_ERROR_UNSUPPORTED for a type it cannot export. The handle is valid
   * while the buffer lives; a file descriptor is a new one the caller
   * closes. */
  accel_status_t (*buffer_export)(accel_bk_buffer_t buffer, accel_external_memory_type_t type,
                                  accel_external_memory_t* out_memory);
  /* The host address of the buffer's first byte, valid while the buffer
   * lives; ACCEL_ERROR_UNSUPPORTED for memory without one. */
  accel_status_t (*buffer_get_host_address)(accel_bk_buffer_t buffer, void** out_address);
  /* The device address of the buffer's first byte; called only on devices
   * with ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES (core-checked). */
  accel_status_t (*buffer_get_device_address)(accel_bk_buffer_t buffer, uint64_t* out_address);

  /* --- Topology (docs/topology.md) ---------------------------------------- */
  /* Fills what the backend knows (pci_bus_id, pcie_root, numa_node,
   * local_cpus and local_cpu_count). The core passes a zeroed struct of its
   * own size with numa_node and nearest_nic -1, and completes nearest_nic,
   * domain_count and what the backend left empty from the PCI tree. Not
   * cached: called for each query that needs the placement. Without the
   * slot the core starts from the capabilities' pci_bus_id and numa_node. */
  accel_status_t (*device_get_topology)(accel_bk_device_t device, accel_device_topology_t* out_topology);
  /* Both devices are this backend's and different (not two access paths of
   * one physical device); the struct is zeroed. A class of
   * ACCEL_LINK_CLASS_UNKNOWN leaves the core to derive one from the PCI tree
   * (keeping the backend's peer_access and bandwidth). Answer the same link
   * both ways. */
  accel_status_t (*device_get_link)(accel_bk_device_t device, accel_bk_device_t peer, accel_device_link_t* out_link);
  /* The fabric clique the device belongs to (level ACCEL_DOMAIN_LEVEL_CLIQUE,
   * preset; the backend fills `id`), or ACCEL_ERROR_NOT_FOUND when it has
   * none. */
  accel_status_t (*device_get_clique)(accel_bk_device_t device, accel_domain_t* out_domain);
  /* NICs the backend describes itself (a simulated node's), as the
   * enumeration pattern of context_get_devices (entries preset with their
   * header and numa_node -1); the core lists them after the machine's, with
   * indices past the machine's. Asked once per instance; a failure is
   * logged, and the backend then has no NICs. */
  accel_status_t (*context_get_nics)(accel_bk_context_t context, uint32_t* inout_count,
                                     accel_nic_properties_t* out_nics);
  /* The path from `device` to the backend's own NIC `nic_index` (an index
   * into context_get_nics); the struct is zeroed. ACCEL_LINK_CLASS_UNKNOWN
   * leaves the core to classify it from the two placements. */
  accel_status_t (*device_get_nic_link)(accel_bk_device_t device, uint32_t nic_index, accel_device_link_t* out_link);
  /* The domain levels the backend knows for the device, innermost first, as
   * the enumeration pattern; a level given here replaces the core's (a
   * simulated node has its own node, rack and slice ids); entries are preset
   * with their header, level NODE and an empty id, and one with an unknown
   * level or an empty id is dropped. When set, the core does not call
   * device_get_clique. */
  accel_status_t (*device_get_domains)(accel_bk_device_t device, uint32_t* inout_count, accel_domain_t* out_domains);

  /* --- Streams, continued -------------------------------------------------- */
  /* The stream's copy counters (accel_stream_get_copy_statistics); the core
   * passes a zeroed struct of its own size. Completed copies only, not the
   * ones skipped after an asynchronous error. */
  accel_status_t (*stream_get_copy_statistics)(accel_bk_stream_t stream, accel_copy_statistics_t* out_statistics);

  /* --- 1.1: prepared launches (docs/kernels.md, "Prepared launches") ------ */
  /* A launch of `kernel` checked once by the core and enqueued any number of
   * times by stream_launch_prepared: the backend does once what each
   * stream_launch_kernel would (resolve buffers, set arguments). Optional:
   * the core uses the three slots only when all three are set, and otherwise
   * (or when kernel_prepare_launch returns ACCEL_ERROR_UNSUPPORTED, for a
   * launch the backend does not prepare; no message needed) keeps the
   * checked launch itself and passes it to stream_launch_kernel each time.
   * `launch` is as stream_launch_kernel receives it, valid for the call
   * only: the prepared launch copies what it needs and keeps the kernel and
   * the buffers alive until prepared_launch_destroy (the core may destroy
   * them first). */
  accel_status_t (*kernel_prepare_launch)(accel_bk_kernel_t kernel, const accel_bk_launch_t* launch,
                                          accel_bk_prepared_launch_t* out_prepared);
  /* Called once; launches of it already enqueued still run (they keep what
   * they use, as every enqueue does). */
  void (*prepared_launch_destroy)(accel_bk_prepared_launch_t prepared);
  /* Enqueues one launch as prepared, on a stream of the kernel's device
   * (core-checked): an enqueue slot, as stream_launch_kernel. */
  accel_status_t (*stream_launch_prepared)(accel_bk_stream_t stream, accel_bk_prepared_launch_t prepared);
  /* New slots go here, at the end, with the minor version that added them. */
} accel_backend_api_t;

/*===----------------------------------------------------------------------===*/
/* Negotiation: the one exported entry point                                  */
/*===----------------------------------------------------------------------===*/

/* The entry point's arguments, at the core's size: read them only as far as
 * struct_size reaches (ACCEL_STRUCT_HAS_FIELD). */
typedef struct accel_backend_get_api_args_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS */
  uint32_t struct_size;
  const void* next;
  uint32_t core_abi_version_min;     /* [in] oldest ABI the core accepts */
  uint32_t core_abi_version_max;     /* [in] newest ABI the core speaks */
  const accel_host_services_t* host; /* [in] valid for the call */
  uint32_t out_abi_version;          /* [out] highest version both speak */
  uint32_t reserved0;
  const accel_backend_api_t* out_api; /* [out] static table */
} accel_backend_get_api_args_t;

/* Negotiates; called once for each instance that loads the library (several
 * may at once), before any slot. On success sets out_abi_version to the
 * highest version both speak (the lower of core_abi_version_max and the
 * backend's own, at least core_abi_version_min) and out_api to a static
 * table, and returns ACCEL_SUCCESS. A backend whose major differs from
 * core_abi_version_max's returns ACCEL_ERROR_INCOMPATIBLE_VERSION after
 * host->set_error. The core then checks the table (docs/backend-abi.md
 * lists each check and the loader report's reason). */
typedef accel_status_t (*accel_backend_get_api_fn)(accel_backend_get_api_args_t* args);

ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ACCEL_ACCEL_BACKEND_H_ */
