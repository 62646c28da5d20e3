/*
 * SYNTHETIC "future 1.1" copy of abi/accel_backend.h, kept for the skew tests
 * (tests/skew): ABI 1.1 adds one table slot and one field of
 * accel_backend_get_api_args_t. Never installed, never used outside tests.
 * Regenerate with tests/skew/future/regenerate.py.
 *
 * Accel backend plugin ABI, 1.1. For backend authors; applications use
 * include/accel/accel.h, which this header includes for shared types.
 *
 * A backend is a shared object exporting exactly one symbol,
 * accel_backend_get_api. The core calls it with the range of ABI versions it
 * speaks and its host services; the backend answers with the highest version
 * both speak and a pointer to its function table (docs/abi.md).
 *
 * Rules, stated once:
 *   - The table only grows at its end. The core treats every slot past the
 *     table's struct_size, and every NULL slot, as "not implemented" and
 *     returns ACCEL_ERROR_UNIMPLEMENTED without calling it. Slots marked
 *     REQUIRED must be non-NULL or the backend is refused.
 *   - The core validates handles and arguments before calling a slot: offsets
 *     and sizes are within the buffer, outputs are non-NULL, objects belong to
 *     this backend. Slots need not repeat those checks.
 *   - On failure a slot returns a negative accel_status_t and first calls
 *     host->set_error with a message saying what was wrong; the core prefixes
 *     the API function and the device.
 *   - Ownership: objects a slot creates belong to the backend and are
 *     released by the matching destroy slot. buffer_destroy may be called
 *     while enqueued work still uses the buffer: the backend releases the
 *     memory when that work completes (stream-ordered free).
 *   - Threading: every slot may be called from any thread concurrently,
 *     except context_destroy, which is called once, after every other object
 *     of the context was destroyed.
 *   - Asynchronous errors: a failed operation's status and message stay on its
 *     stream (and events recorded after it) and are returned, with
 *     host->set_error called on the querying thread, by stream_query,
 *     stream_synchronize, event_query and event_synchronize.
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

/*===----------------------------------------------------------------------===*/
/* Host services: what the core offers a backend                              */
/*===----------------------------------------------------------------------===*/

typedef struct accel_host_services_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_HOST_SERVICES */
  uint32_t struct_size;
  const void* next;
  void* context; /* pass as the first argument of every service */
  /* Logs through the instance's sink; cheap when the level is filtered. */
  void (*log)(void* context, accel_log_level_t level, const char* message);
  /* Sets the calling thread's last-error message for the call in progress. */
  void (*set_error)(void* context, accel_status_t status, const char* message);
  /* Host allocation for the backend's own bookkeeping; alignment is a power
   * of two. Either may be used from any thread. */
  void* (*allocate)(void* context, size_t size, size_t alignment);
  void (*deallocate)(void* context, void* pointer);
  const char* cache_dir;  /* ACCEL_CACHE_DIR, or NULL: where compiler caches go */
  const char* machine_id; /* stable id of this machine, never NULL */
  /* The value of an ACCEL_* setting as this instance sees it ("ACCEL_SIM_PROFILE"),
   * or NULL when it is unset or the instance ignores the environment (a
   * privileged process, ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT). The string
   * lives as long as the context. Backends read their settings only here. */
  const char* (*get_setting)(void* context, const char* name);
} accel_host_services_t;

/*===----------------------------------------------------------------------===*/
/* Launches as the core hands them over                                       */
/*===----------------------------------------------------------------------===*/

/* One argument, checked against the kernel's declaration by the core:
 * buffers are this device's, ranges lie within them and `size` is never 0. */
typedef struct accel_bk_kernel_arg_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_BACKEND_KERNEL_ARG */
  uint32_t struct_size;
  const void* next;
  accel_kernel_arg_kind_t kind;
  accel_access_t access; /* BUFFER: the effective access */
  accel_bk_buffer_t buffer;
  uint64_t offset;
  uint64_t size;     /* BUFFER: bytes bound; SCALAR: bytes at `value`; LOCAL_MEMORY: bytes */
  const void* value; /* SCALAR: valid for the call only; the backend copies it */
  uint64_t device_address;
} accel_bk_kernel_arg_t;

typedef struct accel_bk_launch_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_BACKEND_LAUNCH */
  uint32_t struct_size;
  const void* next;
  uint32_t grid[3];                  /* each >= 1, within the device's max_grid_dims */
  uint32_t block[3];                 /* each >= 1, within the kernel's and device's limits */
  const accel_bk_kernel_arg_t* args; /* as many as the kernel declares, valid for the call only */
  uint32_t arg_count;
  uint32_t reserved0;
  uint64_t dynamic_local_memory_size; /* sum of the LOCAL_MEMORY arguments */
} accel_bk_launch_t;

/*===----------------------------------------------------------------------===*/
/* The function table                                                         */
/*===----------------------------------------------------------------------===*/

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
   * return ACCEL_ERROR_BACKEND_UNAVAILABLE with the reason. */
  accel_status_t (*context_create)(const accel_bk_context_desc_t* desc, accel_bk_context_t* out_context);
  /* REQUIRED. */
  void (*context_destroy)(accel_bk_context_t context);
  /* REQUIRED. Device list, fixed for the context's life. With `out_devices`
   * NULL writes the count; otherwise *inout_count is the capacity. */
  accel_status_t (*context_get_devices)(accel_bk_context_t context, uint32_t* inout_count,
                                        accel_bk_device_t* out_devices);
  /* REQUIRED. Fills the descriptor; stable_id and backend_name are the
   * core's. The core passes a struct of its own size, zeroed. */
  accel_status_t (*device_get_capabilities)(accel_bk_device_t device, accel_device_capabilities_t* out_capabilities);
  accel_status_t (*device_get_memory_info)(accel_bk_device_t device, uint64_t* out_free, uint64_t* out_total);

  /* --- Memory ------------------------------------------------------------ */
  accel_status_t (*buffer_create)(accel_bk_device_t device, const accel_buffer_desc_t* desc,
                                  accel_bk_buffer_t* out_buffer);
  void (*buffer_destroy)(accel_bk_buffer_t buffer);
  accel_status_t (*buffer_map)(accel_bk_buffer_t buffer, uint64_t offset, uint64_t size, uint64_t flags,
                               void** out_ptr);
  accel_status_t (*buffer_unmap)(accel_bk_buffer_t buffer);

  /* --- Streams ----------------------------------------------------------- */
  accel_status_t (*stream_create)(accel_bk_device_t device, const accel_stream_desc_t* desc,
                                  accel_bk_stream_t* out_stream);
  /* Waits for the stream's enqueued work, then releases it. */
  void (*stream_destroy)(accel_bk_stream_t stream);
  accel_status_t (*stream_copy_host_to_buffer)(accel_bk_stream_t stream, const void* src, accel_bk_buffer_t dst,
                                               uint64_t dst_offset, uint64_t size);
  accel_status_t (*stream_copy_buffer_to_host)(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset,
                                               void* dst, uint64_t size);
  accel_status_t (*stream_copy_buffer)(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset,
                                       accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size);
  accel_status_t (*stream_fill_buffer)(accel_bk_stream_t stream, accel_bk_buffer_t buffer, uint64_t offset,
                                       uint64_t size, const void* pattern, uint32_t pattern_size);
  accel_status_t (*stream_enqueue_host_callback)(accel_bk_stream_t stream, accel_host_callback_t callback,
                                                 void* user_data);
  /* Releases `buffer` once the work enqueued before this call completes.
   * The buffer is not used by the core afterwards. */
  accel_status_t (*stream_free_buffer)(accel_bk_stream_t stream, accel_bk_buffer_t buffer);
  accel_status_t (*stream_record_event)(accel_bk_stream_t stream, accel_bk_event_t event);
  accel_status_t (*stream_wait_event)(accel_bk_stream_t stream, accel_bk_event_t event);
  /* ACCEL_SUCCESS, ACCEL_NOT_READY or the stream's asynchronous error. */
  accel_status_t (*stream_query)(accel_bk_stream_t stream);
  accel_status_t (*stream_synchronize)(accel_bk_stream_t stream, uint64_t timeout_ns);
  accel_status_t (*stream_clear_error)(accel_bk_stream_t stream);

  /* --- Events ------------------------------------------------------------ */
  accel_status_t (*event_create)(accel_bk_device_t device, const accel_event_desc_t* desc, accel_bk_event_t* out_event);
  void (*event_destroy)(accel_bk_event_t event);
  accel_status_t (*event_query)(accel_bk_event_t event);
  accel_status_t (*event_synchronize)(accel_bk_event_t event, uint64_t timeout_ns);
  /* Both events completed, recorded and created with timing (core-checked
   * for recorded-ness only through this slot's return). */
  accel_status_t (*event_elapsed_time)(accel_bk_event_t start, accel_bk_event_t end, uint64_t* out_nanoseconds);

  /* --- Modules and kernels (docs/kernels.md) ------------------------------ */
  /* Builds `source`, whose format the device's capabilities list. Exactly one
   * of source->data and source->path is set (the core checked that `path` is
   * readable). A blob that is not a valid module of its format:
   * ACCEL_ERROR_INVALID_ARGUMENT with the build log's gist in the message. */
  accel_status_t (*module_create)(accel_bk_device_t device, const accel_module_source_t* source,
                                  accel_bk_module_t* out_module);
  /* Called after every kernel of the module was destroyed; launches still
   * enqueued keep what they need alive. */
  void (*module_destroy)(accel_bk_module_t module);
  /* Kernel names, as the enumeration pattern of accel.h; the strings live as
   * long as the module. */
  accel_status_t (*module_enumerate_kernels)(accel_bk_module_t module, uint32_t* inout_count, const char** out_names);
  /* ACCEL_ERROR_NOT_FOUND for an unknown name. Called once per name. */
  accel_status_t (*module_get_kernel)(accel_bk_module_t module, const char* name, accel_bk_kernel_t* out_kernel);
  void (*kernel_destroy)(accel_bk_kernel_t kernel);
  /* Fills everything but `name` and `module` (the core's). */
  accel_status_t (*kernel_get_properties)(accel_bk_kernel_t kernel, accel_kernel_properties_t* out_properties);
  /* index < argument_count. */
  accel_status_t (*kernel_get_argument_info)(accel_bk_kernel_t kernel, uint32_t index,
                                             accel_kernel_argument_info_t* out_info);
  accel_status_t (*stream_launch_kernel)(accel_bk_stream_t stream, accel_bk_kernel_t kernel,
                                         const accel_bk_launch_t* launch);

  /* --- Memory interop (docs/interop.md) ----------------------------------- */
  /* Wraps external memory without copying. On success the backend owns
   * desc->release and calls it exactly once, when the memory is no longer
   * used (after buffer_destroy and the work enqueued before it); on failure
   * it never calls it. ACCEL_ERROR_UNSUPPORTED for a type it cannot import. */
  accel_status_t (*buffer_import)(accel_bk_device_t device, const accel_buffer_import_desc_t* desc,
                                  accel_bk_buffer_t* out_buffer);
  accel_status_t (*buffer_export)(accel_bk_buffer_t buffer, accel_external_memory_type_t type,
                                  accel_external_memory_t* out_memory);
  accel_status_t (*buffer_get_host_address)(accel_bk_buffer_t buffer, void** out_address);
  accel_status_t (*buffer_get_device_address)(accel_bk_buffer_t buffer, uint64_t* out_address);

  /* --- Topology (docs/topology.md) ---------------------------------------- */
  /* Fills what the backend knows (pci_bus_id, pcie_root, numa_node,
   * local_cpus and local_cpu_count). The core passes a zeroed struct of its
   * own size with numa_node and nearest_nic -1, and completes nearest_nic,
   * domain_count and what the backend left empty from the PCI tree. */
  accel_status_t (*device_get_topology)(accel_bk_device_t device, accel_device_topology_t* out_topology);
  /* Both devices are this backend's and different. A class of
   * ACCEL_LINK_CLASS_UNKNOWN leaves the core to derive one from the PCI tree
   * (keeping the backend's peer_access and bandwidth). */
  accel_status_t (*device_get_link)(accel_bk_device_t device, accel_bk_device_t peer, accel_device_link_t* out_link);
  /* The fabric clique the device belongs to (level ACCEL_DOMAIN_LEVEL_CLIQUE),
   * or ACCEL_ERROR_NOT_FOUND when it has none. */
  accel_status_t (*device_get_clique)(accel_bk_device_t device, accel_domain_t* out_domain);
  /* NICs the backend describes itself (a simulated node's), as the
   * enumeration pattern of context_get_devices; the core lists them after the
   * machine's, with indices past the machine's. */
  accel_status_t (*context_get_nics)(accel_bk_context_t context, uint32_t* inout_count,
                                     accel_nic_properties_t* out_nics);
  /* The path from `device` to the backend's own NIC `nic_index` (an index
   * into context_get_nics). */
  accel_status_t (*device_get_nic_link)(accel_bk_device_t device, uint32_t nic_index, accel_device_link_t* out_link);
  /* The domain levels the backend knows for the device, innermost first, as
   * the enumeration pattern; a level given here replaces the core's (a
   * simulated node has its own node, rack and slice ids). When set, the core
   * does not call device_get_clique. */
  accel_status_t (*device_get_domains)(accel_bk_device_t device, uint32_t* inout_count, accel_domain_t* out_domains);

  /* --- Streams, continued -------------------------------------------------- */
  /* The stream's copy counters (accel_stream_get_copy_statistics); the core
   * passes a zeroed struct of its own size. */
  accel_status_t (*stream_get_copy_statistics)(accel_bk_stream_t stream, accel_copy_statistics_t* out_statistics);
  /* --- 1.1 ---------------------------------------------------------------- */
  accel_status_t (*device_get_future_value)(accel_bk_device_t device, uint32_t* out_value);
  /* New slots go here, at the end, with the minor version that added them. */
} accel_backend_api_t;

/*===----------------------------------------------------------------------===*/
/* Negotiation: the one exported entry point                                  */
/*===----------------------------------------------------------------------===*/

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
  uint64_t core_features;             /* [in] 1.1: bit set of core features */
} accel_backend_get_api_args_t;

/* Negotiates. A backend whose major differs from core_abi_version_max's
 * returns ACCEL_ERROR_INCOMPATIBLE_VERSION after host->set_error. */
typedef accel_status_t (*accel_backend_get_api_fn)(accel_backend_get_api_args_t* args);

ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ACCEL_ACCEL_BACKEND_H_ */
