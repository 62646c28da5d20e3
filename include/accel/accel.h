/*
 * Accel application C API, ABI 1.0.
 *
 * Rules that apply to every function here are stated once, in docs/. A
 * docs/<name>.md named in this header is in Accel's source tree and installed
 * as <prefix>/share/doc/accel/<name>.md:
 *   - docs/abi.md        versioning, the struct header, extension chains
 *   - docs/errors.md     status codes, the thread-local last-error message
 *   - docs/ownership.md  who frees what, how long returned pointers live
 *   - docs/threading.md  every function may be called from any thread unless
 *                        its comment says otherwise
 *   - docs/handles.md    handles are validated ids, never dereferenced
 *
 * Ownership, in short: every object created by accel_<object>_create is
 * released by accel_<object>_destroy; accel_instance_destroy releases every
 * object still alive under that instance. Strings and arrays returned through
 * `const char*` outputs are owned by the instance and live until it is
 * destroyed. The library never prints unless ACCEL_LOG is set or the
 * application installed a log callback.
 */
#ifndef ACCEL_ACCEL_H_
#define ACCEL_ACCEL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ACCEL_BUILDING_LIBRARY) && defined(__GNUC__)
#define ACCEL_API __attribute__((visibility("default")))
#else
#define ACCEL_API
#endif

/*===----------------------------------------------------------------------===*/
/* Versions                                                                   */
/*===----------------------------------------------------------------------===*/

/* A version is packed as major(10 bits).minor(10 bits).patch(12 bits). */
#define ACCEL_MAKE_VERSION(major, minor, patch) \
  ((UINT32_C(0) + (major)) << 22 | (UINT32_C(0) + (minor)) << 12 | (UINT32_C(0) + (patch)))
#define ACCEL_VERSION_MAJOR(v) ((UINT32_C(0) + (v)) >> 22)
#define ACCEL_VERSION_MINOR(v) (((UINT32_C(0) + (v)) >> 12) & 0x3FFu)
#define ACCEL_VERSION_PATCH(v) ((UINT32_C(0) + (v)) & 0xFFFu)

/* The ABI this header describes. */
#define ACCEL_ABI_VERSION_MAJOR 1
#define ACCEL_ABI_VERSION_MINOR 4
#define ACCEL_ABI_VERSION ACCEL_MAKE_VERSION(ACCEL_ABI_VERSION_MAJOR, ACCEL_ABI_VERSION_MINOR, 0)

/* Waits with this timeout never time out. */
#define ACCEL_TIMEOUT_INFINITE UINT64_MAX

/* Fixed sizes of the character arrays in descriptors (including the NUL). */
#define ACCEL_NAME_SIZE 256
#define ACCEL_SHORT_STRING_SIZE 64
#define ACCEL_PCI_BUS_ID_SIZE 32
#define ACCEL_BACKEND_NAME_SIZE 32
#define ACCEL_UUID_SIZE 16

/*===----------------------------------------------------------------------===*/
/* Status codes (docs/errors.md)                                              */
/*===----------------------------------------------------------------------===*/

/* 0 is success, positive values are non-error states, negative are errors. */
typedef enum accel_status_t {
  ACCEL_SUCCESS = 0,
  ACCEL_NOT_READY = 1,                    /* an event or stream still has work pending */
  ACCEL_ERROR_INVALID_ARGUMENT = -1,      /* NULL, out-of-range or inconsistent argument */
  ACCEL_ERROR_INVALID_HANDLE = -2,        /* garbage, stale or wrong-type handle */
  ACCEL_ERROR_INVALID_ENUM = -3,          /* query key or enum value this version does not know */
  ACCEL_ERROR_UNSUPPORTED = -4,           /* a known feature this device lacks */
  ACCEL_ERROR_UNIMPLEMENTED = -5,         /* the backend left this table slot NULL */
  ACCEL_ERROR_NOT_FOUND = -6,             /* a named thing does not exist */
  ACCEL_ERROR_RESOURCE_EXHAUSTED = -7,    /* out of memory, or past a share's limit */
  ACCEL_ERROR_FAILED_PRECONDITION = -8,   /* the object is in the wrong state for this call */
  ACCEL_ERROR_TIMEOUT = -9,               /* a wait ran past its timeout */
  ACCEL_ERROR_DEVICE_LOST = -10,          /* the device stopped working */
  ACCEL_ERROR_BACKEND_UNAVAILABLE = -11,  /* the backend's runtime or driver is not present */
  ACCEL_ERROR_INCOMPATIBLE_VERSION = -12, /* ABI major mismatch or unreadable manifest format */
  ACCEL_ERROR_INTERNAL = -13,             /* a bug in Accel or a backend */
  ACCEL_ERROR_CANCELLED = -14,            /* 1.2: the work was cancelled before it finished */
  ACCEL_STATUS_FORCE32 = 0x7FFFFFFF
} accel_status_t;

/* The name of `status` ("ACCEL_ERROR_INVALID_HANDLE"), or
 * "ACCEL_STATUS_UNKNOWN" for a value this version does not know. Never NULL;
 * the string is static. */
ACCEL_API const char* accel_status_name(accel_status_t status);

/* The calling thread's last error message: what failed and where, e.g.
 * "accel_buffer_create: device 0 (host: AMD EPYC 7B13): 90 GiB requested,
 * 24 GiB total". Set by every call that returns an error; left alone by calls
 * that succeed. Never NULL ("" when no call on this thread has failed). The
 * pointer lives until the next failing call on this thread. */
ACCEL_API const char* accel_last_error(void);

/* The status that went with accel_last_error() (ACCEL_SUCCESS when none). */
ACCEL_API accel_status_t accel_last_error_status(void);

/* (1.2) Sets the calling thread's last error to `status` and `message` (NULL:
 * ""), copied, and returns `status`: for libraries built over Accel (the
 * runtime, a task function) whose callers read accel_last_error(). Never
 * fails. */
ACCEL_API accel_status_t accel_set_last_error(accel_status_t status, const char* message); /* [in][optional] */

/*===----------------------------------------------------------------------===*/
/* Common types                                                               */
/*===----------------------------------------------------------------------===*/

/* Every struct that crosses the ABI starts with these three fields
 * (docs/abi.md): `stype` names the struct, `struct_size` is sizeof() as the
 * sender compiled it, `next` chains extension structs with the same header. */
typedef enum accel_structure_type_t {
  ACCEL_STRUCTURE_TYPE_VERSION_INFO = 1,
  ACCEL_STRUCTURE_TYPE_INSTANCE_DESC = 2,
  ACCEL_STRUCTURE_TYPE_LOADER_ENTRY = 3,
  ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES = 4,
  ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES = 5,
  ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES = 6,
  ACCEL_STRUCTURE_TYPE_BUFFER_DESC = 7,
  ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES = 8,
  ACCEL_STRUCTURE_TYPE_STREAM_DESC = 9,
  ACCEL_STRUCTURE_TYPE_EVENT_DESC = 10,
  ACCEL_STRUCTURE_TYPE_MODULE_SOURCE = 11,
  ACCEL_STRUCTURE_TYPE_MODULE_DESC = 12,
  ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES = 13,
  ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES = 14,
  ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO = 15,
  ACCEL_STRUCTURE_TYPE_KERNEL_ARG = 16,
  ACCEL_STRUCTURE_TYPE_LAUNCH_DESC = 17,
  ACCEL_STRUCTURE_TYPE_NATIVE_KERNEL_DESC = 18,
  ACCEL_STRUCTURE_TYPE_NATIVE_MODULE = 19,
  ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY = 20,
  ACCEL_STRUCTURE_TYPE_DEVICE_LINK = 21,
  ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES = 22,
  ACCEL_STRUCTURE_TYPE_DOMAIN = 23,
  ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC = 24,
  ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY = 25,
  ACCEL_STRUCTURE_TYPE_COPY_STATISTICS = 26,
  ACCEL_STRUCTURE_TYPE_LOADER_WARNING = 27, /* 1.1 */
  ACCEL_STRUCTURE_TYPE_MEMORY_USAGE = 28,   /* 1.2 */
  ACCEL_STRUCTURE_TYPE_TENANT_DESC = 29,    /* 1.2 */
  /* 1000..1999: the backend plugin ABI (abi/accel_backend.h). */
  ACCEL_STRUCTURE_TYPE_FORCE32 = 0x7FFFFFFF
} accel_structure_type_t;

/* The common header, for code that walks `next` chains. */
typedef struct accel_struct_header_t {
  uint32_t stype;
  uint32_t struct_size;
  const void* next;
} accel_struct_header_t;

/* Whether the struct at `ptr`, of type `type` as this header declares it,
 * holds `field` by the struct_size its sender set: a struct from an older
 * peer is smaller (read only the fields it has; default the others), one
 * from a newer peer larger (ignore the tail). `ptr` is evaluated once; C99
 * and C++ (docs/abi.md). */
#define ACCEL_STRUCT_HAS_FIELD(ptr, type, field) \
  (offsetof(type, field) + sizeof(((type*)NULL)->field) <= (size_t)(ptr)->struct_size)

typedef enum accel_log_level_t {
  ACCEL_LOG_LEVEL_OFF = 0,
  ACCEL_LOG_LEVEL_ERROR = 1,
  ACCEL_LOG_LEVEL_WARN = 2,
  ACCEL_LOG_LEVEL_INFO = 3,
  ACCEL_LOG_LEVEL_DEBUG = 4,
  ACCEL_LOG_LEVEL_FORCE32 = 0x7FFFFFFF
} accel_log_level_t;

/* Receives every log message at or above the instance's level. Called from
 * any thread, possibly concurrently; must not call back into Accel. */
typedef void (*accel_log_callback_t)(void* user_data, accel_log_level_t level, const char* message);

/* Handles: typed opaque values, validated on every call (docs/handles.md). */
typedef struct accel_instance_s* accel_instance_t;
typedef struct accel_backend_s* accel_backend_t;
typedef struct accel_device_s* accel_device_t;
typedef struct accel_physical_device_s* accel_physical_device_t;
typedef struct accel_buffer_s* accel_buffer_t;
typedef struct accel_stream_s* accel_stream_t;
typedef struct accel_event_s* accel_event_t;
typedef struct accel_module_s* accel_module_t;
typedef struct accel_kernel_s* accel_kernel_t;
typedef struct accel_tenant_s* accel_tenant_t;                   /* 1.2 */
typedef struct accel_prepared_launch_s* accel_prepared_launch_t; /* 1.3 */

/*===----------------------------------------------------------------------===*/
/* Library version                                                            */
/*===----------------------------------------------------------------------===*/

typedef struct accel_version_info_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_VERSION_INFO */
  uint32_t struct_size;
  const void* next;
  uint32_t library_version; /* ACCEL_MAKE_VERSION of libaccel */
  uint32_t abi_version;     /* ACCEL_ABI_VERSION libaccel implements */
  uint32_t backend_abi_min; /* oldest backend ABI the loader accepts */
  uint32_t backend_abi_max; /* newest backend ABI the loader speaks */
  const char* build;        /* static: compiler and build type */
} accel_version_info_t;

/* Fills `out_info` (caller sets stype and struct_size; a smaller, older
 * struct gets its known prefix, as for every output struct). Thread-safe.
 * Returns ACCEL_ERROR_INVALID_ARGUMENT when `out_info` is NULL, has another
 * stype, or a struct_size smaller than the struct header. */
ACCEL_API accel_status_t accel_version_get(accel_version_info_t* out_info); /* [out] */

/*===----------------------------------------------------------------------===*/
/* Instances                                                                  */
/*===----------------------------------------------------------------------===*/

/* Ignore ACCEL_BACKEND_FILES, ACCEL_ADD_BACKEND_FILES, ACCEL_BACKENDS,
 * ACCEL_VISIBLE_DEVICES, ACCEL_LOG and ACCEL_CACHE_DIR for this instance. */
#define ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT (UINT64_C(1) << 0)

typedef struct accel_instance_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_INSTANCE_DESC */
  uint32_t struct_size;
  const void* next;
  uint64_t flags; /* ACCEL_INSTANCE_FLAG_* */
  /* Each string below, when non-NULL, replaces the environment variable of
   * the same meaning (docs/loader.md); NULL leaves the variable in force. */
  const char* backend_files;     /* ACCEL_BACKEND_FILES: ':'-separated manifests or .so files */
  const char* add_backend_files; /* ACCEL_ADD_BACKEND_FILES */
  const char* backends;          /* ACCEL_BACKENDS: "host,sim" or "-sim" */
  const char* visible_devices;   /* ACCEL_VISIBLE_DEVICES: "0,2" or stable ids */
  accel_log_level_t log_level;   /* OFF: ACCEL_LOG decides */
  uint32_t reserved0;
  accel_log_callback_t log_callback; /* NULL: messages go to stderr */
  void* log_user_data;
} accel_instance_desc_t;

/* Creates an instance: discovers, loads and initialises backends, and builds
 * the device registry. A backend that fails never fails the instance; its
 * reason is in the loader report. Thread-safe; instances are independent.
 * Returns ACCEL_ERROR_INVALID_ARGUMENT when `out_instance` is NULL, `desc` has
 *         a wrong stype or struct_size, or unknown flag bits,
 *         ACCEL_ERROR_INVALID_ENUM for an unknown log level,
 *         ACCEL_ERROR_RESOURCE_EXHAUSTED when host memory runs out.
 * Overrides that name nothing (a selection entry matching no backend, a
 * visible-device entry matching no device, a missing file) are not errors:
 * they are kept as setting warnings (accel_instance_get_loader_warning). */
ACCEL_API accel_status_t accel_instance_create(const accel_instance_desc_t* desc, /* [in][optional] NULL: defaults */
                                               accel_instance_t* out_instance);   /* [out] */

/* Destroys `instance` and every object still alive under it: streams are
 * drained, buffers and events freed, backends shut down and unloaded. Every
 * handle of the instance becomes stale. Must not race other calls on objects
 * of the same instance.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `instance` is not a live instance,
 *         ACCEL_ERROR_FAILED_PRECONDITION when called from a host callback
 *         running on one of its streams (nothing is destroyed). */
ACCEL_API accel_status_t accel_instance_destroy(accel_instance_t instance);

/*===----------------------------------------------------------------------===*/
/* Loader report (docs/loader.md)                                             */
/*===----------------------------------------------------------------------===*/

typedef enum accel_loader_state_t {
  ACCEL_LOADER_STATE_LOADED = 0,  /* loaded, negotiated and initialised */
  ACCEL_LOADER_STATE_SKIPPED = 1, /* not opened: deselected by ACCEL_BACKENDS or a duplicate */
  ACCEL_LOADER_STATE_FAILED = 2,  /* refused or failed; `status` and `reason` say why */
  ACCEL_LOADER_STATE_FORCE32 = 0x7FFFFFFF
} accel_loader_state_t;

/* One candidate backend the loader considered. Strings are owned by the
 * instance. */
typedef struct accel_loader_entry_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_LOADER_ENTRY */
  uint32_t struct_size;
  const void* next;
  const char* backend_name;  /* from the manifest or the library; "" unknown */
  const char* manifest_path; /* "" when a library was named directly */
  const char* library_path;  /* resolved path; "" when the manifest had none */
  const char* reason;        /* why it failed or was skipped; "" when loaded */
  accel_loader_state_t state;
  accel_status_t status;           /* ACCEL_SUCCESS when loaded; the failure's code otherwise */
  uint32_t negotiated_abi_version; /* 0 when negotiation did not happen */
  uint32_t backend_abi_version;    /* what the backend declared; 0 unknown */
  uint32_t device_count;           /* devices it reported */
  uint32_t reserved0;
} accel_loader_entry_t;

/* Writes the number of loader entries. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `instance` is not live,
 *         ACCEL_ERROR_INVALID_ARGUMENT when `out_count` is NULL. */
ACCEL_API accel_status_t accel_instance_get_loader_entry_count(accel_instance_t instance,
                                                               uint32_t* out_count); /* [out] */

/* Fills entry `index` (caller sets stype and struct_size). Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `instance` is not live,
 *         ACCEL_ERROR_INVALID_ARGUMENT when `index` is out of range or
 *         `out_entry` is NULL or too small. */
ACCEL_API accel_status_t accel_instance_get_loader_entry(accel_instance_t instance, uint32_t index,
                                                         accel_loader_entry_t* out_entry); /* [out] */

/* Setting warnings (ABI 1.1): the parts of the overrides the instance was
 * created with that name nothing or cannot be parsed -- an ACCEL_BACKENDS
 * name no manifest or library has, an ACCEL_VISIBLE_DEVICES entry that
 * matches no device, a file in ACCEL_BACKEND_FILES that does not exist, an
 * unknown ACCEL_LOG level, an ACCEL_TOPOLOGY_DOMAINS entry ignored. The
 * instance is created all the same; each warning is also logged at warn
 * level (docs/loader.md, "Setting warnings"). Strings are owned by the
 * instance. */
typedef struct accel_loader_warning_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_LOADER_WARNING */
  uint32_t struct_size;
  const void* next;
  const char* setting; /* "ACCEL_BACKENDS", or "desc->backends" when the instance description gave it */
  const char* value;   /* the setting's whole value */
  const char* item;    /* the part that is wrong ("h0st"); "" when it is the whole value */
  const char* message; /* what is wrong: "'h0st' names no backend that was found (found: host, sim)" */
} accel_loader_warning_t;

/* Writes the number of setting warnings (0 when every override was used).
 * Thread-safe. ABI 1.1.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `instance` is not live,
 *         ACCEL_ERROR_INVALID_ARGUMENT when `out_count` is NULL. */
ACCEL_API accel_status_t accel_instance_get_loader_warning_count(accel_instance_t instance,
                                                                 uint32_t* out_count); /* [out] */

/* Fills warning `index` (caller sets stype and struct_size). Thread-safe.
 * ABI 1.1.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `instance` is not live,
 *         ACCEL_ERROR_INVALID_ARGUMENT when `index` is out of range or
 *         `out_warning` is NULL or too small. */
ACCEL_API accel_status_t accel_instance_get_loader_warning(accel_instance_t instance, uint32_t index,
                                                           accel_loader_warning_t* out_warning); /* [out] */

/*===----------------------------------------------------------------------===*/
/* Backends                                                                   */
/*===----------------------------------------------------------------------===*/

/* Enumerations follow one pattern: with `out_array` NULL, `inout_count`
 * receives the total; otherwise `*inout_count` is the array's capacity and
 * must be at least the total (ACCEL_ERROR_INVALID_ARGUMENT otherwise, with the
 * total written back), and the array is filled. */

/* The backends that loaded and initialised, in load order. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_instance_enumerate_backends(accel_instance_t instance,
                                                           uint32_t* inout_count,       /* [in,out] */
                                                           accel_backend_t* out_array); /* [out][optional] */

typedef struct accel_backend_properties_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES */
  uint32_t struct_size;
  const void* next;
  const char* name;    /* "host" */
  const char* version; /* the backend's own version string */
  const char* library_path;
  uint32_t abi_version;  /* negotiated */
  uint32_t device_count; /* devices it reported, before ACCEL_VISIBLE_DEVICES */
} accel_backend_properties_t;

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. Thread-safe. */
ACCEL_API accel_status_t accel_backend_get_properties(accel_backend_t backend,
                                                      accel_backend_properties_t* out_properties);

/* The visible devices reached through `backend`, in the stable order.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_backend_enumerate_devices(accel_backend_t backend, uint32_t* inout_count,
                                                         accel_device_t* out_array);

/*===----------------------------------------------------------------------===*/
/* Devices and capabilities (docs/capability-keys.md, docs/devices.md)        */
/*===----------------------------------------------------------------------===*/

typedef enum accel_device_kind_t {
  ACCEL_DEVICE_KIND_UNKNOWN = 0,
  ACCEL_DEVICE_KIND_CPU = 1,
  ACCEL_DEVICE_KIND_GPU = 2,
  ACCEL_DEVICE_KIND_NPU = 3,
  ACCEL_DEVICE_KIND_TPU = 4,
  ACCEL_DEVICE_KIND_FPGA = 5,
  ACCEL_DEVICE_KIND_FORCE32 = 0x7FFFFFFF
} accel_device_kind_t;

/* Numeric formats the device computes in (ACCEL_DEVICE_INFO_NUMERIC_FORMATS). */
typedef uint64_t accel_numeric_formats_t;
#define ACCEL_NUMERIC_FORMAT_FP64 (UINT64_C(1) << 0)
#define ACCEL_NUMERIC_FORMAT_FP32 (UINT64_C(1) << 1)
#define ACCEL_NUMERIC_FORMAT_TF32 (UINT64_C(1) << 2)
#define ACCEL_NUMERIC_FORMAT_FP16 (UINT64_C(1) << 3)
#define ACCEL_NUMERIC_FORMAT_BF16 (UINT64_C(1) << 4)
#define ACCEL_NUMERIC_FORMAT_FP8_E4M3 (UINT64_C(1) << 5)
#define ACCEL_NUMERIC_FORMAT_FP8_E5M2 (UINT64_C(1) << 6)
#define ACCEL_NUMERIC_FORMAT_INT8 (UINT64_C(1) << 7)
#define ACCEL_NUMERIC_FORMAT_INT4 (UINT64_C(1) << 8)
#define ACCEL_NUMERIC_FORMAT_INT64 (UINT64_C(1) << 9)

/* Kernel formats a device executes (ACCEL_DEVICE_INFO_KERNEL_FORMATS). */
typedef uint64_t accel_kernel_formats_t;
#define ACCEL_KERNEL_FORMAT_NATIVE_HOST (UINT64_C(1) << 0)
#define ACCEL_KERNEL_FORMAT_SPIRV_VULKAN (UINT64_C(1) << 1)
#define ACCEL_KERNEL_FORMAT_OPENCL_C (UINT64_C(1) << 2)
#define ACCEL_KERNEL_FORMAT_SPIR (UINT64_C(1) << 3)
#define ACCEL_KERNEL_FORMAT_SPIRV_OPENCL (UINT64_C(1) << 4)
#define ACCEL_KERNEL_FORMAT_PTX (UINT64_C(1) << 5)
#define ACCEL_KERNEL_FORMAT_CUBIN (UINT64_C(1) << 6)
#define ACCEL_KERNEL_FORMAT_HSACO (UINT64_C(1) << 7)

/* The name of one kernel format bit ("native-host", "spirv-vulkan", "opencl-c",
 * "spir", "spirv-opencl", "ptx", "cubin", "hsaco"), or NULL when `format` is
 * not exactly one known bit. The string is static. Thread-safe. */
ACCEL_API const char* accel_kernel_format_name(accel_kernel_formats_t format);

/* Feature flags (ACCEL_DEVICE_INFO_FEATURES). */
typedef uint64_t accel_device_features_t;
#define ACCEL_DEVICE_FEATURE_PEER_ACCESS (UINT64_C(1) << 0)
#define ACCEL_DEVICE_FEATURE_UNIFIED_MEMORY (UINT64_C(1) << 1)
#define ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY (UINT64_C(1) << 2)
#define ACCEL_DEVICE_FEATURE_TIMELINE_EVENTS (UINT64_C(1) << 3)
#define ACCEL_DEVICE_FEATURE_ATOMICS_64 (UINT64_C(1) << 4)
#define ACCEL_DEVICE_FEATURE_SUBGROUPS (UINT64_C(1) << 5)
#define ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES (UINT64_C(1) << 6)
#define ACCEL_DEVICE_FEATURE_EVENT_TIMING (UINT64_C(1) << 7)

/* Identity flags (ACCEL_DEVICE_INFO_FLAGS); 64-bit like every flag type. */
#define ACCEL_DEVICE_FLAG_SIMULATED (UINT64_C(1) << 0)   /* no hardware behind it */
#define ACCEL_DEVICE_FLAG_UUID_UNIQUE (UINT64_C(1) << 1) /* `uuid` is unique across machines */

/* The typed capability snapshot: plain data, serialisable, the same struct a
 * backend fills (docs/capability-keys.md lists each field's key). */
typedef struct accel_device_capabilities_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES */
  uint32_t struct_size;
  const void* next;
  accel_device_kind_t kind;
  uint32_t vendor_id; /* PCI vendor id; 0 unknown */
  uint64_t flags;     /* ACCEL_DEVICE_FLAG_* */
  uint32_t device_id; /* PCI device id; 0 unknown */
  uint32_t reserved0;
  uint64_t memory_total;      /* bytes this access path exposes */
  uint64_t max_allocation;    /* largest single buffer, bytes */
  uint64_t max_buffer_range;  /* largest range one kernel argument may bind */
  uint64_t local_memory_size; /* work-group local memory, bytes */
  accel_numeric_formats_t numeric_formats;
  accel_kernel_formats_t kernel_formats;         /* what this device executes */
  accel_kernel_formats_t modeled_kernel_formats; /* simulated: the modeled part's formats */
  accel_device_features_t features;
  uint32_t compute_units;
  uint32_t clock_mhz; /* 0 unknown */
  uint32_t max_work_group_size;
  uint32_t max_work_group_dims[3];
  uint32_t max_grid_dims[3];
  uint32_t max_argument_size;    /* bytes of kernel arguments */
  uint32_t subgroup_size;        /* 0 unknown or none */
  int32_t numa_node;             /* -1 unknown */
  uint8_t uuid[ACCEL_UUID_SIZE]; /* all zero when none */
  char name[ACCEL_NAME_SIZE];
  char vendor[ACCEL_SHORT_STRING_SIZE];
  char architecture[ACCEL_SHORT_STRING_SIZE];
  char sku[ACCEL_SHORT_STRING_SIZE]; /* normalised SKU id */
  char driver_version[ACCEL_SHORT_STRING_SIZE];
  char pci_bus_id[ACCEL_PCI_BUS_ID_SIZE];     /* "0000:3b:00.0"; "" none */
  char stable_id[ACCEL_SHORT_STRING_SIZE];    /* filled by the core */
  char backend_name[ACCEL_BACKEND_NAME_SIZE]; /* filled by the core */
} accel_device_capabilities_t;

/* Registered capability keys. Each key's value type is fixed forever
 * (accel_device_info_key_describe tells it); docs/capability-keys.md lists
 * them. New keys get new numbers; numbers are never reused. */
typedef enum accel_device_info_key_t {
  ACCEL_DEVICE_INFO_KIND = 1,                    /* uint32 accel_device_kind_t */
  ACCEL_DEVICE_INFO_NAME = 2,                    /* string */
  ACCEL_DEVICE_INFO_VENDOR = 3,                  /* string */
  ACCEL_DEVICE_INFO_VENDOR_ID = 4,               /* uint32 */
  ACCEL_DEVICE_INFO_DEVICE_ID = 5,               /* uint32 */
  ACCEL_DEVICE_INFO_ARCHITECTURE = 6,            /* string */
  ACCEL_DEVICE_INFO_SKU = 7,                     /* string */
  ACCEL_DEVICE_INFO_DRIVER_VERSION = 8,          /* string */
  ACCEL_DEVICE_INFO_BACKEND_NAME = 9,            /* string */
  ACCEL_DEVICE_INFO_STABLE_ID = 10,              /* string */
  ACCEL_DEVICE_INFO_PHYSICAL_DEVICE_ID = 11,     /* string: the physical device's stable id */
  ACCEL_DEVICE_INFO_UUID = 12,                   /* bytes[16] */
  ACCEL_DEVICE_INFO_PCI_BUS_ID = 13,             /* string */
  ACCEL_DEVICE_INFO_NUMA_NODE = 14,              /* int32 */
  ACCEL_DEVICE_INFO_FLAGS = 15,                  /* uint64 ACCEL_DEVICE_FLAG_* */
  ACCEL_DEVICE_INFO_SIMULATED = 16,              /* uint32 0 or 1 */
  ACCEL_DEVICE_INFO_COMPUTE_UNITS = 17,          /* uint32 */
  ACCEL_DEVICE_INFO_CLOCK_MHZ = 18,              /* uint32 */
  ACCEL_DEVICE_INFO_MEMORY_TOTAL = 19,           /* uint64 */
  ACCEL_DEVICE_INFO_MEMORY_FREE = 20,            /* uint64, read live */
  ACCEL_DEVICE_INFO_MAX_ALLOCATION = 21,         /* uint64 */
  ACCEL_DEVICE_INFO_MAX_BUFFER_RANGE = 22,       /* uint64 */
  ACCEL_DEVICE_INFO_LOCAL_MEMORY_SIZE = 23,      /* uint64 */
  ACCEL_DEVICE_INFO_MAX_WORK_GROUP_SIZE = 24,    /* uint32 */
  ACCEL_DEVICE_INFO_MAX_WORK_GROUP_DIMS = 25,    /* uint32[3] */
  ACCEL_DEVICE_INFO_MAX_GRID_DIMS = 26,          /* uint32[3] */
  ACCEL_DEVICE_INFO_MAX_ARGUMENT_SIZE = 27,      /* uint32 */
  ACCEL_DEVICE_INFO_SUBGROUP_SIZE = 28,          /* uint32 */
  ACCEL_DEVICE_INFO_NUMERIC_FORMATS = 29,        /* uint64 ACCEL_NUMERIC_FORMAT_* */
  ACCEL_DEVICE_INFO_KERNEL_FORMATS = 30,         /* uint64 ACCEL_KERNEL_FORMAT_* */
  ACCEL_DEVICE_INFO_MODELED_KERNEL_FORMATS = 31, /* uint64 ACCEL_KERNEL_FORMAT_* */
  ACCEL_DEVICE_INFO_FEATURES = 32,               /* uint64 ACCEL_DEVICE_FEATURE_* */
  ACCEL_DEVICE_INFO_BACKEND_INDEX = 33,          /* uint32: its place in its backend's own list (1.4) */
  ACCEL_DEVICE_INFO_FORCE32 = 0x7FFFFFFF
} accel_device_info_key_t;

typedef enum accel_value_type_t {
  ACCEL_VALUE_TYPE_STRING = 1, /* NUL-terminated; size includes the NUL */
  ACCEL_VALUE_TYPE_UINT32 = 2,
  ACCEL_VALUE_TYPE_INT32 = 3,
  ACCEL_VALUE_TYPE_UINT64 = 4,
  ACCEL_VALUE_TYPE_UINT32_3 = 5, /* uint32_t[3] */
  ACCEL_VALUE_TYPE_BYTES_16 = 6, /* uint8_t[16] */
  ACCEL_VALUE_TYPE_FLAGS64 = 7,  /* uint64 bit set */
  ACCEL_VALUE_TYPE_FORCE32 = 0x7FFFFFFF
} accel_value_type_t;

/* Names a key ("memory_total") and its value type, for tools that list every
 * key: iterate keys from 1 until ACCEL_ERROR_INVALID_ENUM. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_ENUM for a key this version does not know,
 *         ACCEL_ERROR_INVALID_ARGUMENT when both outputs are NULL. */
ACCEL_API accel_status_t accel_device_info_key_describe(accel_device_info_key_t key,
                                                        const char** out_name,         /* [out][optional] static */
                                                        accel_value_type_t* out_type); /* [out][optional] */

/* Reads one capability. With `value` NULL, writes the size the value needs to
 * `out_size`; otherwise `size` must be at least that size. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `device` is not live,
 *         ACCEL_ERROR_INVALID_ENUM for an unknown key,
 *         ACCEL_ERROR_INVALID_ARGUMENT when `value` and `out_size` are both
 *         NULL or `size` is too small (the needed size goes to `out_size`). */
ACCEL_API accel_status_t accel_device_get_info(accel_device_t device, accel_device_info_key_t key,
                                               size_t size,       /* [in] bytes at `value` */
                                               void* value,       /* [out][optional] */
                                               size_t* out_size); /* [out][optional] */

/* Fills the typed snapshot (caller sets stype and struct_size; a smaller,
 * older struct gets its known prefix). Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_device_get_capabilities(accel_device_t device,
                                                       accel_device_capabilities_t* out_capabilities);

/* Live free and total memory of the device. Under an ACCEL_MEMORY_LIMIT
 * (1.2) the total is the limit and the free memory what the limit leaves.
 * Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT when both
 * outputs are NULL, ACCEL_ERROR_UNIMPLEMENTED. */
ACCEL_API accel_status_t accel_device_get_memory_info(accel_device_t device, uint64_t* out_free, /* [out][optional] */
                                                      uint64_t* out_total);                      /* [out][optional] */

/* The visible devices of every backend, in the stable order (docs/devices.md).
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_instance_enumerate_devices(accel_instance_t instance, uint32_t* inout_count,
                                                          accel_device_t* out_array);

/* The backend a device is reached through.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_device_get_backend(accel_device_t device, accel_backend_t* out_backend);

/*===----------------------------------------------------------------------===*/
/* Physical devices: identity and accounting (docs/devices.md)                */
/*===----------------------------------------------------------------------===*/

typedef struct accel_physical_device_properties_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES */
  uint32_t struct_size;
  const void* next;
  accel_device_kind_t kind;
  uint32_t index;         /* position in the stable order */
  uint64_t flags;         /* ACCEL_DEVICE_FLAG_* */
  uint64_t memory_total;  /* counted once: for a CPU the host's memory */
  uint32_t compute_units; /* for a CPU the host's logical CPUs */
  uint32_t device_count;  /* visible access paths */
  int32_t numa_node;      /* -1 unknown or several */
  uint32_t reserved0;
  char name[ACCEL_NAME_SIZE];
  char stable_id[ACCEL_SHORT_STRING_SIZE];
  char pci_bus_id[ACCEL_PCI_BUS_ID_SIZE];
} accel_physical_device_properties_t;

/* Physical devices with at least one visible access path, in the stable order.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_instance_enumerate_physical_devices(accel_instance_t instance, uint32_t* inout_count,
                                                                   accel_physical_device_t* out_array);

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_physical_device_get_properties(accel_physical_device_t physical_device,
                                                              accel_physical_device_properties_t* out_properties);

/* The access paths (backend devices) of one physical device.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_physical_device_enumerate_devices(accel_physical_device_t physical_device,
                                                                 uint32_t* inout_count, accel_device_t* out_array);

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_device_get_physical_device(accel_device_t device,
                                                          accel_physical_device_t* out_physical_device);

/*===----------------------------------------------------------------------===*/
/* Capability selectors (docs/selectors.md), ABI 1.1                         */
/*===----------------------------------------------------------------------===*/

/* A selector picks devices by capability, never by vendor:
 * "kind==gpu && mem>=40GiB && fp8 && format:spirv-vulkan". Selectors are
 * passed as text; each call parses and type-checks it against the registered
 * capability keys. A physical device is seen as the union of its visible
 * access paths, with its own memory and compute units. */

/* Checks that `selector` parses. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_ARGUMENT when it is NULL or does not parse:
 *         the message names the column and what was expected ("'selector'
 *         column 20: expected a value after '>=', found ')'"), and
 *         `*out_error_column` (when given) receives that 1-based column; it
 *         is 0 after a success. */
ACCEL_API accel_status_t accel_selector_check(const char* selector,        /* [in] */
                                              uint32_t* out_error_column); /* [out][optional] */

/* Writes 1 to `*out_matches` when `physical_device` matches `selector`, else
 * 0. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `physical_device` is not live,
 *         ACCEL_ERROR_INVALID_ARGUMENT when `out_matches` is NULL or the
 *         selector is NULL or does not parse (as accel_selector_check). */
ACCEL_API accel_status_t accel_physical_device_matches(accel_physical_device_t physical_device,
                                                       const char* selector,   /* [in] */
                                                       uint32_t* out_matches); /* [out] */

/* Why `physical_device` does not match `selector`: each part that decides
 * the miss with the device's value, "; "-separated ("mem >= 80GiB: the device
 * has 23.5 GiB"); "" when it matches. Follows accel_device_get_info's
 * pattern: `*out_size` receives the bytes needed (with the NUL); with
 * `out_text` non-NULL, `size` must hold them. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `physical_device` is not live,
 *         ACCEL_ERROR_INVALID_ARGUMENT when `out_text` and `out_size` are
 *         both NULL, `size` is too small, or the selector is NULL or does not
 *         parse. */
ACCEL_API accel_status_t accel_physical_device_explain(accel_physical_device_t physical_device,
                                                       const char* selector,        /* [in] */
                                                       size_t size, char* out_text, /* [out][optional] */
                                                       size_t* out_size);           /* [out][optional] */

/*===----------------------------------------------------------------------===*/
/* Memory limits and tenants (docs/memory-limits.md), ABI 1.2                 */
/*===----------------------------------------------------------------------===*/

/* Every device buffer a process creates (accel_buffer_create with
 * ACCEL_MEMORY_KIND_DEVICE) is counted against its physical device, across
 * access paths and instances. ACCEL_MEMORY_LIMIT ("20GiB" for every device,
 * "0=20GiB,gpu-3f2a=25%" per device) caps what the process may hold there, as
 * an orchestrator sets it for a fractional share; a tenant caps a part of the
 * process (a task, an actor) below that. An allocation past either limit
 * fails with ACCEL_ERROR_RESOURCE_EXHAUSTED naming the limit, and nothing
 * else changes. accel_device_get_memory_info reports the process limit as the
 * device's total. */

/* A limit that is not set. */
#define ACCEL_MEMORY_UNLIMITED UINT64_MAX

typedef struct accel_memory_usage_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_MEMORY_USAGE */
  uint32_t struct_size;
  const void* next;
  uint64_t used;    /* bytes of live device buffers counted */
  uint64_t peak;    /* the largest `used` so far */
  uint64_t limit;   /* ACCEL_MEMORY_UNLIMITED when none */
  uint64_t refused; /* allocations refused by this limit so far */
  uint64_t buffers; /* live device buffers counted */
} accel_memory_usage_t;

/* What this process holds on `physical_device` and its ACCEL_MEMORY_LIMIT.
 * Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT when
 *         `out_usage` is NULL or its header is wrong. */
ACCEL_API accel_status_t accel_physical_device_get_memory_usage(accel_physical_device_t physical_device,
                                                                accel_memory_usage_t* out_usage); /* [out] */

/* One device's limit for a tenant. Plain array element (no header). */
typedef struct accel_tenant_limit_t {
  accel_physical_device_t physical_device;
  uint64_t bytes; /* ACCEL_MEMORY_UNLIMITED: no limit of the tenant's own */
} accel_tenant_limit_t;

typedef struct accel_tenant_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_TENANT_DESC */
  uint32_t struct_size;
  const void* next;
  const char* name;                   /* [optional] for messages: "task 17" */
  const accel_tenant_limit_t* limits; /* [optional] `limit_count` entries, each device at most once */
  uint32_t limit_count;
  uint32_t reserved0;   /* 0 */
  uint64_t other_limit; /* bytes on devices `limits` does not name: 0 refuses them, ACCEL_MEMORY_UNLIMITED allows */
} accel_tenant_desc_t;

/* Creates a tenant of `instance`: device memory limits for a part of the
 * process. A thread allocates as the tenant after accel_thread_set_tenant.
 * Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE (the instance, or a physical device in
 *         `limits` that is not one of the instance's), ACCEL_ERROR_INVALID_ARGUMENT
 *         (NULL `desc` or `out_tenant`, a wrong header, `limit_count` > 0
 *         with NULL `limits`, a device named twice, `reserved0` != 0). */
ACCEL_API accel_status_t accel_tenant_create(accel_instance_t instance, const accel_tenant_desc_t* desc, /* [in] */
                                             accel_tenant_t* out_tenant);                                /* [out] */

/* Destroys the handle. Buffers the tenant allocated stay valid and stay
 * counted until they are freed; a thread still bound to it can no longer
 * allocate device memory (ACCEL_ERROR_FAILED_PRECONDITION) until it binds
 * another tenant or none. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_tenant_destroy(accel_tenant_t tenant);

/* What `tenant` holds on `physical_device` and its limit there. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE (either handle, or a device of another
 *         instance), ACCEL_ERROR_INVALID_ARGUMENT (`out_usage`). */
ACCEL_API accel_status_t accel_tenant_get_memory_usage(accel_tenant_t tenant, accel_physical_device_t physical_device,
                                                       accel_memory_usage_t* out_usage); /* [out] */

/* Makes `tenant` the calling thread's tenant (NULL: none): the thread's
 * device allocations on the tenant's instance count against it and its
 * limits. Writes the previous one (or NULL) to `out_previous` when given.
 * Other instances' allocations on this thread are not affected.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `tenant` is neither NULL nor live. */
ACCEL_API accel_status_t accel_thread_set_tenant(accel_tenant_t tenant,         /* [in][optional] */
                                                 accel_tenant_t* out_previous); /* [out][optional] */

/*===----------------------------------------------------------------------===*/
/* Memory (docs/ownership.md: stream-ordered free)                            */
/*===----------------------------------------------------------------------===*/

typedef enum accel_memory_kind_t {
  ACCEL_MEMORY_KIND_DEVICE = 0,      /* device memory; mappable only where the device allows */
  ACCEL_MEMORY_KIND_HOST_PINNED = 1, /* page-locked host memory the device reaches; always mappable */
  ACCEL_MEMORY_KIND_FORCE32 = 0x7FFFFFFF
} accel_memory_kind_t;

typedef struct accel_buffer_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_BUFFER_DESC */
  uint32_t struct_size;
  const void* next;
  uint64_t size; /* bytes, > 0 */
  accel_memory_kind_t memory_kind;
  uint32_t reserved0;
  uint64_t flags; /* reserved, 0 */
} accel_buffer_desc_t;

typedef struct accel_buffer_properties_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES */
  uint32_t struct_size;
  const void* next;
  uint64_t size;
  accel_memory_kind_t memory_kind;
  uint32_t mapped; /* 1 while mapped */
  accel_device_t device;
} accel_buffer_properties_t;

/* Allocates a buffer on `device`. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `device` is not live,
 *         ACCEL_ERROR_INVALID_ARGUMENT when `desc` or `out_buffer` is NULL,
 *         the size is 0 or the flags are not 0,
 *         ACCEL_ERROR_INVALID_ENUM for an unknown memory kind,
 *         ACCEL_ERROR_UNSUPPORTED when the device lacks that memory kind,
 *         ACCEL_ERROR_RESOURCE_EXHAUSTED when the size is past the device's
 *         max allocation or memory runs out. */
ACCEL_API accel_status_t accel_buffer_create(accel_device_t device, const accel_buffer_desc_t* desc, /* [in] */
                                             accel_buffer_t* out_buffer);                            /* [out] */

/* Releases the handle now; the memory is released when work already enqueued
 * that uses the buffer completes. A mapping ends with it. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `buffer` is not live. */
ACCEL_API accel_status_t accel_buffer_destroy(accel_buffer_t buffer);

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_buffer_get_properties(accel_buffer_t buffer, accel_buffer_properties_t* out_properties);

#define ACCEL_MAP_READ (UINT64_C(1) << 0)
#define ACCEL_MAP_WRITE (UINT64_C(1) << 1)

/* Maps [offset, offset+size) for host access. One mapping per buffer at a
 * time. Work on the buffer must be complete (synchronize first); the mapping
 * is coherent with later stream work after unmap. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT for a NULL
 *         output, a range past the end, or flags outside ACCEL_MAP_*,
 *         ACCEL_ERROR_FAILED_PRECONDITION when already mapped,
 *         ACCEL_ERROR_UNSUPPORTED when the memory is not host-mappable. */
ACCEL_API accel_status_t accel_buffer_map(accel_buffer_t buffer, uint64_t offset, uint64_t size,
                                          uint64_t flags,  /* ACCEL_MAP_* */
                                          void** out_ptr); /* [out] */

/* Returns ACCEL_ERROR_INVALID_HANDLE,
 *         ACCEL_ERROR_FAILED_PRECONDITION when the buffer is not mapped. */
ACCEL_API accel_status_t accel_buffer_unmap(accel_buffer_t buffer);

/*===----------------------------------------------------------------------===*/
/* Memory interop: external memory in and out (docs/interop.md)               */
/*===----------------------------------------------------------------------===*/

/* What an external memory handle is. Each backend documents the types it
 * imports and exports (backends/<name>/README.md). */
typedef enum accel_external_memory_type_t {
  ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER = 1,        /* `handle` is a host address */
  ACCEL_EXTERNAL_MEMORY_TYPE_DMA_BUF_FD = 2,          /* `handle` is a Linux dma-buf file descriptor */
  ACCEL_EXTERNAL_MEMORY_TYPE_OPAQUE_FD = 3,           /* `handle` is a vendor opaque file descriptor */
  ACCEL_EXTERNAL_MEMORY_TYPE_CUDA_DEVICE_POINTER = 4, /* CUdeviceptr */
  ACCEL_EXTERNAL_MEMORY_TYPE_HIP_DEVICE_POINTER = 5,  /* hipDeviceptr_t */
  ACCEL_EXTERNAL_MEMORY_TYPE_OPENCL_MEM = 6,          /* cl_mem */
  ACCEL_EXTERNAL_MEMORY_TYPE_VULKAN_BUFFER = 7,       /* VkBuffer (with its VkDeviceMemory in `handle2`) */
  ACCEL_EXTERNAL_MEMORY_TYPE_LEVEL_ZERO_POINTER = 8,  /* a Level Zero device or shared allocation */
  ACCEL_EXTERNAL_MEMORY_TYPE_FORCE32 = 0x7FFFFFFF
} accel_external_memory_type_t;

/* Kernels and copies may only read an imported read-only buffer. */
#define ACCEL_IMPORT_FLAG_READ_ONLY (UINT64_C(1) << 0)

/* Called exactly once when Accel no longer uses imported memory: after the
 * buffer was destroyed (or its instance) and the work enqueued before that
 * completed (the stream-ordered free rule). Called from any thread; must not
 * call back into Accel. */
typedef void (*accel_release_callback_t)(void* user_data);

typedef struct accel_buffer_import_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC */
  uint32_t struct_size;
  const void* next;
  accel_external_memory_type_t type;
  uint32_t reserved0;
  uint64_t handle;                  /* the address, descriptor or native handle, as `type` says */
  uint64_t handle2;                 /* a second native handle where `type` needs one; else 0 */
  uint64_t offset;                  /* bytes into the external allocation */
  uint64_t size;                    /* bytes, > 0 */
  uint64_t flags;                   /* ACCEL_IMPORT_FLAG_* */
  accel_release_callback_t release; /* [optional] */
  void* release_user_data;
} accel_buffer_import_desc_t;

/* Wraps external memory as a buffer, without copying: for a host pointer the
 * buffer's bytes are the caller's bytes (accel_buffer_get_host_address
 * returns `handle`). The memory must stay valid until `release` runs (or, with
 * no callback, until the buffer is destroyed and its work completed).
 * Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `device` is not live,
 *         ACCEL_ERROR_INVALID_ARGUMENT when `desc` or `out_buffer` is NULL,
 *         the size is 0, `handle` is 0 for a pointer type, or flags are unknown,
 *         ACCEL_ERROR_INVALID_ENUM for an unknown type,
 *         ACCEL_ERROR_UNSUPPORTED when the device cannot use that kind of
 *         memory in place (the message says which types it imports).
 * On failure `release` is not called: the memory stays the caller's. */
ACCEL_API accel_status_t accel_buffer_import(accel_device_t device, const accel_buffer_import_desc_t* desc, /* [in] */
                                             accel_buffer_t* out_buffer);                                   /* [out] */

typedef struct accel_external_memory_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY */
  uint32_t struct_size;
  const void* next;
  accel_external_memory_type_t type;
  uint32_t reserved0;
  uint64_t handle; /* valid while the buffer lives; a descriptor is the caller's to close */
  uint64_t handle2;
  uint64_t offset; /* where the buffer starts within the handle's allocation */
  uint64_t size;
} accel_external_memory_t;

/* Exports `buffer` as a native handle of `type`. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (NULL or
 *         malformed output), ACCEL_ERROR_INVALID_ENUM (unknown type),
 *         ACCEL_ERROR_UNSUPPORTED when the backend cannot export that type. */
ACCEL_API accel_status_t accel_buffer_export(accel_buffer_t buffer, accel_external_memory_type_t type,
                                             accel_external_memory_t* out_memory); /* [out] */

/* The host address of the buffer's first byte, where the host can read and
 * write it directly (host-pinned, unified or host-backed memory) without a
 * map; valid while the buffer lives. Ordering with stream work is the
 * caller's (synchronize first). Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (NULL
 *         output), ACCEL_ERROR_UNSUPPORTED when the memory has no host address. */
ACCEL_API accel_status_t accel_buffer_get_host_address(accel_buffer_t buffer, void** out_address); /* [out] */

/* The device address of the buffer's first byte, for ACCEL_KERNEL_ARG_KIND_
 * DEVICE_ADDRESS arguments (devices with ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES).
 * Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (NULL
 *         output), ACCEL_ERROR_UNSUPPORTED when the device has no device
 *         addresses. */
ACCEL_API accel_status_t accel_buffer_get_device_address(accel_buffer_t buffer, uint64_t* out_address); /* [out] */

/*===----------------------------------------------------------------------===*/
/* Streams (docs/streams.md)                                                  */
/*===----------------------------------------------------------------------===*/

typedef struct accel_stream_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_STREAM_DESC */
  uint32_t struct_size;
  const void* next;
  uint64_t flags;   /* reserved, 0 */
  int32_t priority; /* 0 normal; backends may ignore */
  uint32_t reserved0;
} accel_stream_desc_t;

/* Runs exactly once, on the stream's worker, in stream order. `status` is
 * ACCEL_SUCCESS when the work before it succeeded; otherwise it is the
 * stream's asynchronous error, the callback's work is skipped and it should
 * only release what `user_data` owns (its return value is then ignored).
 * Called with ACCEL_SUCCESS, a negative return becomes the stream's
 * asynchronous error. Must not wait for later work of the same stream. */
typedef accel_status_t (*accel_host_callback_t)(void* user_data, accel_status_t status);

/* Creates an in-order stream on `device`. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `device` is not live,
 *         ACCEL_ERROR_INVALID_ARGUMENT when `out_stream` is NULL or `desc`
 *         is malformed. */
ACCEL_API accel_status_t accel_stream_create(accel_device_t device,
                                             const accel_stream_desc_t* desc, /* [in][optional] */
                                             accel_stream_t* out_stream);     /* [out] */

/* Releases the stream after its enqueued work completes (this call waits for
 * it). Returns ACCEL_ERROR_INVALID_HANDLE,
 *         ACCEL_ERROR_FAILED_PRECONDITION when called from a host callback
 *         running on `stream` itself (the stream is left as it was; destroy it
 *         from another thread or after the callback returns). */
ACCEL_API accel_status_t accel_stream_destroy(accel_stream_t stream);

/* Enqueues a copy from host memory. `src` must stay valid until the copy
 * completes. Returns ACCEL_ERROR_INVALID_HANDLE (stream or buffer),
 * ACCEL_ERROR_INVALID_ARGUMENT (NULL `src`, range past the buffer's end,
 * buffer of another device). */
ACCEL_API accel_status_t accel_stream_copy_host_to_buffer(accel_stream_t stream, const void* src, accel_buffer_t dst,
                                                          uint64_t dst_offset, uint64_t size);

/* Enqueues a copy to host memory; `dst` must stay valid until it completes. */
ACCEL_API accel_status_t accel_stream_copy_buffer_to_host(accel_stream_t stream, accel_buffer_t src,
                                                          uint64_t src_offset, void* dst, uint64_t size);

/* Enqueues a device-to-device copy. Both buffers must belong to devices of
 * the stream's backend; overlapping ranges of one buffer are rejected. */
ACCEL_API accel_status_t accel_stream_copy_buffer(accel_stream_t stream, accel_buffer_t src, uint64_t src_offset,
                                                  accel_buffer_t dst, uint64_t dst_offset, uint64_t size);

/* Enqueues a fill of [offset, offset+size) with a 1, 2 or 4 byte pattern
 * (copied at enqueue); offset and size must be multiples of pattern_size. */
ACCEL_API accel_status_t accel_stream_fill_buffer(accel_stream_t stream, accel_buffer_t buffer, uint64_t offset,
                                                  uint64_t size, const void* pattern, uint32_t pattern_size);

/* Enqueues `callback(user_data, status)`. Returns ACCEL_ERROR_INVALID_HANDLE,
 * ACCEL_ERROR_INVALID_ARGUMENT (NULL callback). */
ACCEL_API accel_status_t accel_stream_enqueue_host_callback(accel_stream_t stream, accel_host_callback_t callback,
                                                            void* user_data); /* [optional] */

/* Stream-ordered free: releases the handle now and the memory once the work
 * enqueued on `stream` before this call completes. */
ACCEL_API accel_status_t accel_stream_free_buffer(accel_stream_t stream, accel_buffer_t buffer);

/* Records `event` at this point of the stream; the event completes when the
 * work before it does. Re-recording replaces the earlier record. Event and
 * stream must belong to the same backend. */
ACCEL_API accel_status_t accel_stream_record_event(accel_stream_t stream, accel_event_t event);

/* Later work on `stream` waits until `event` (as last recorded) completes. An
 * event never recorded is complete. If the event completes with an error, the
 * error passes to this stream. */
ACCEL_API accel_status_t accel_stream_wait_event(accel_stream_t stream, accel_event_t event);

/* ACCEL_SUCCESS when all enqueued work completed, ACCEL_NOT_READY while some
 * is pending, or the stream's asynchronous error (message via
 * accel_last_error). Never blocks. */
ACCEL_API accel_status_t accel_stream_query(accel_stream_t stream);

/* Waits for all enqueued work. Returns ACCEL_SUCCESS, the stream's
 * asynchronous error, ACCEL_ERROR_TIMEOUT when `timeout_ns` passed first,
 * ACCEL_ERROR_INVALID_HANDLE, or ACCEL_ERROR_FAILED_PRECONDITION when called
 * from a host callback running on `stream` (it would wait for itself). */
ACCEL_API accel_status_t accel_stream_synchronize(accel_stream_t stream, uint64_t timeout_ns);

/* After an asynchronous error, work enqueued later on the stream is skipped
 * (host callbacks still run, told the error) and completes with that error
 * until this call clears it. Returns
 * ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_FAILED_PRECONDITION while work is
 * pending. */
ACCEL_API accel_status_t accel_stream_clear_error(accel_stream_t stream);

/* What the copies a stream has executed did, by path (docs/streams.md): a
 * copy between two devices goes peer-to-peer where the topology allows it,
 * else through host memory. Counts only completed copies. */
typedef struct accel_copy_statistics_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_COPY_STATISTICS */
  uint32_t struct_size;
  const void* next;
  uint64_t host_to_device_copies;
  uint64_t host_to_device_bytes;
  uint64_t device_to_host_copies;
  uint64_t device_to_host_bytes;
  uint64_t local_copies; /* both buffers on the stream's device */
  uint64_t local_bytes;
  uint64_t peer_copies; /* between two devices, directly */
  uint64_t peer_bytes;
  uint64_t staged_copies; /* between two devices, through host memory */
  uint64_t staged_bytes;
} accel_copy_statistics_t;

/* The stream's copy counters since it was created. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (NULL or
 * malformed output), ACCEL_ERROR_UNIMPLEMENTED (the backend keeps none). */
ACCEL_API accel_status_t accel_stream_get_copy_statistics(accel_stream_t stream,
                                                          accel_copy_statistics_t* out_statistics); /* [out] */

/*===----------------------------------------------------------------------===*/
/* Events                                                                     */
/*===----------------------------------------------------------------------===*/

#define ACCEL_EVENT_FLAG_TIMING (UINT64_C(1) << 0) /* record a timestamp at completion */

typedef struct accel_event_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_EVENT_DESC */
  uint32_t struct_size;
  const void* next;
  uint64_t flags; /* ACCEL_EVENT_FLAG_* */
} accel_event_desc_t;

/* Creates an event on `device`. Returns ACCEL_ERROR_INVALID_HANDLE,
 * ACCEL_ERROR_INVALID_ARGUMENT (NULL output, unknown flags),
 * ACCEL_ERROR_UNSUPPORTED (timing on a device without event timing). */
ACCEL_API accel_status_t accel_event_create(accel_device_t device, const accel_event_desc_t* desc, /* [in][optional] */
                                            accel_event_t* out_event);                             /* [out] */

/* Returns ACCEL_ERROR_INVALID_HANDLE. Pending records still complete. */
ACCEL_API accel_status_t accel_event_destroy(accel_event_t event);

/* ACCEL_SUCCESS when complete (or never recorded), ACCEL_NOT_READY while
 * pending, or the error the work before it failed with. Never blocks. */
ACCEL_API accel_status_t accel_event_query(accel_event_t event);

/* Waits for the event. Returns as accel_event_query, or ACCEL_ERROR_TIMEOUT. */
ACCEL_API accel_status_t accel_event_synchronize(accel_event_t event, uint64_t timeout_ns);

/* Nanoseconds between two completed timing events (may be 0, never negative
 * for events recorded in order on one stream).
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (NULL
 * output, events of different devices), ACCEL_NOT_READY when either is
 * pending, ACCEL_ERROR_FAILED_PRECONDITION when
 * either was never recorded or was created without ACCEL_EVENT_FLAG_TIMING. */
ACCEL_API accel_status_t accel_event_elapsed_time(accel_event_t start, accel_event_t end,
                                                  uint64_t* out_nanoseconds); /* [out] */

/*===----------------------------------------------------------------------===*/
/* Modules and kernels (docs/kernels.md: launch model, arguments, formats)    */
/*===----------------------------------------------------------------------===*/

/* One compiled or source form of a module. */
typedef struct accel_module_source_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_MODULE_SOURCE */
  uint32_t struct_size;
  const void* next;
  accel_kernel_formats_t format; /* exactly one ACCEL_KERNEL_FORMAT_* bit */
  /* The blob, copied or consumed during accel_module_create. native-host: an
   * accel_native_module_t (in-process functions) or the bytes of a shared
   * library exporting ACCEL_NATIVE_MODULE_ENTRY_POINT_NAME. */
  const void* data;
  uint64_t size;       /* bytes at `data` */
  const char* path;    /* [optional] read the blob from this file instead (data NULL) */
  const char* options; /* [optional] build options for source formats ("-DN=4") */
} accel_module_source_t;

typedef struct accel_module_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_MODULE_DESC */
  uint32_t struct_size;
  const void* next;
  const accel_module_source_t* sources; /* the same kernels in one or more formats; stride sources[0].struct_size */
  uint32_t source_count;                /* >= 1 */
  uint32_t reserved0;
  const char* name; /* [optional] for messages and tools */
  uint64_t flags;   /* reserved, 0 */
} accel_module_desc_t;

/* Loads a module on `device`: takes the first source, in the caller's order,
 * whose format the device executes (ACCEL_DEVICE_INFO_KERNEL_FORMATS); if the
 * backend cannot build it, tries the next such source. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `device` is not live,
 *         ACCEL_ERROR_INVALID_ARGUMENT for a NULL or malformed `desc`, a source
 *         with no or several format bits, no blob, or a blob that is not a
 *         valid module of its format (the message names the source index),
 *         ACCEL_ERROR_NOT_FOUND when a source's `path` cannot be read,
 *         ACCEL_ERROR_UNSUPPORTED when no source has a format the device
 *         executes (the message lists the formats the module has and the
 *         ones the device executes). */
ACCEL_API accel_status_t accel_module_create(accel_device_t device, const accel_module_desc_t* desc, /* [in] */
                                             accel_module_t* out_module);                            /* [out] */

/* Releases the module and makes its kernel handles stale. Launches already
 * enqueued still run. Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_module_destroy(accel_module_t module);

typedef struct accel_module_properties_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES */
  uint32_t struct_size;
  const void* next;
  accel_kernel_formats_t format;            /* the source that was loaded */
  accel_kernel_formats_t available_formats; /* every source's format */
  uint32_t source_index;                    /* index of the loaded source in the desc */
  uint32_t kernel_count;
  accel_device_t device;
  const char* name; /* the desc's name or ""; owned by the module */
} accel_module_properties_t;

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_module_get_properties(accel_module_t module,
                                                     accel_module_properties_t* out_properties); /* [out] */

/* The name of kernel `index` (< kernel_count); the string lives as long as the
 * module. Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_module_get_kernel_name(accel_module_t module, uint32_t index,
                                                      const char** out_name); /* [out] */

/* The kernel named `name`. Every call with one name returns the same handle;
 * it lives as long as the module. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (NULL
 *         `name` or output), ACCEL_ERROR_NOT_FOUND when the module has no
 *         kernel of that name (the message lists the ones it has). */
ACCEL_API accel_status_t accel_module_get_kernel(accel_module_t module, const char* name,
                                                 accel_kernel_t* out_kernel); /* [out] */

/* How a kernel argument is passed (docs/kernels.md). */
typedef enum accel_kernel_arg_kind_t {
  ACCEL_KERNEL_ARG_KIND_BUFFER = 1,         /* a buffer range: handle, offset, size, access */
  ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS = 2, /* a 64-bit device address (accel_buffer_get_device_address) */
  ACCEL_KERNEL_ARG_KIND_SCALAR = 3,         /* bytes, copied at launch */
  ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY = 4,   /* work-group local memory of a size given at launch */
  ACCEL_KERNEL_ARG_KIND_FORCE32 = 0x7FFFFFFF
} accel_kernel_arg_kind_t;

/* How a kernel uses a buffer argument. */
typedef enum accel_access_t {
  ACCEL_ACCESS_READ = 1,
  ACCEL_ACCESS_WRITE = 2,
  ACCEL_ACCESS_READ_WRITE = 3,
  ACCEL_ACCESS_FORCE32 = 0x7FFFFFFF
} accel_access_t;

/* One declared argument of a kernel. Also the element type of a native-host
 * kernel's argument table (ACCEL_KERNEL_ARGUMENT_INFO_INIT fills the header). */
typedef struct accel_kernel_argument_info_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO */
  uint32_t struct_size;
  const void* next;
  accel_kernel_arg_kind_t kind;
  accel_access_t access; /* buffers: the declared use; others: ACCEL_ACCESS_READ */
  uint32_t size;         /* scalars: bytes (0: any size); others 0 */
  uint32_t reserved0;
  const char* name; /* [optional] "x"; NULL or "" unnamed */
} accel_kernel_argument_info_t;

#define ACCEL_KERNEL_ARGUMENT_INFO_INIT(kind, access, size, name)                                               \
  {                                                                                                             \
    (uint32_t) ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO, (uint32_t)sizeof(accel_kernel_argument_info_t), NULL, \
        (kind), (access), (size), 0u, (name)                                                                    \
  }

typedef struct accel_kernel_properties_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES */
  uint32_t struct_size;
  const void* next;
  const char* name; /* owned by the module */
  uint32_t argument_count;
  uint32_t max_work_group_size;         /* largest block (product of its sizes) this kernel launches with */
  uint32_t required_work_group_size[3]; /* the only block it launches with; all 0 when any block fits */
  uint32_t reserved0;
  uint64_t local_memory_size; /* static local memory per work-group, bytes */
  accel_module_t module;
} accel_kernel_properties_t;

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_kernel_get_properties(accel_kernel_t kernel,
                                                     accel_kernel_properties_t* out_properties); /* [out] */

/* Argument `index` (< argument_count) as the kernel declares it.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_kernel_get_argument_info(accel_kernel_t kernel, uint32_t index,
                                                        accel_kernel_argument_info_t* out_info); /* [out] */

/* One argument of a launch; fields its kind does not use are ignored. */
typedef struct accel_kernel_arg_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_KERNEL_ARG */
  uint32_t struct_size;
  const void* next;
  accel_kernel_arg_kind_t kind;
  accel_access_t access;   /* BUFFER: within the declared access; 0 means the declared one */
  accel_buffer_t buffer;   /* BUFFER */
  uint64_t offset;         /* BUFFER: bytes */
  uint64_t size;           /* BUFFER: bytes bound, 0 to the end; SCALAR: bytes at `value`; LOCAL_MEMORY: bytes */
  const void* value;       /* SCALAR */
  uint64_t device_address; /* DEVICE_ADDRESS */
} accel_kernel_arg_t;

typedef struct accel_launch_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_LAUNCH_DESC */
  uint32_t struct_size;
  const void* next;
  uint32_t grid[3];               /* work-groups per dimension, each >= 1 */
  uint32_t block[3];              /* work-group size per dimension, each >= 1 */
  const accel_kernel_arg_t* args; /* arg_count entries, stride args[0].struct_size (docs/abi.md) */
  uint32_t arg_count;
  uint32_t reserved0;
  uint64_t flags; /* reserved, 0 */
} accel_launch_desc_t;

/* Enqueues one launch of `kernel` (docs/kernels.md). Arguments are checked
 * against the kernel's declaration and copied at enqueue; buffers stay alive
 * for the launch even if destroyed after this call. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE for a stale stream, kernel or argument
 *         buffer (the message names the argument),
 *         ACCEL_ERROR_INVALID_ARGUMENT for a wrong argument count, a kind that
 *         differs from the declared one, a scalar of the wrong size, a buffer
 *         range past its end or on another device, wider access than declared,
 *         a write to a read-only buffer, a zero grid or block dimension, a
 *         block past the kernel's or device's limits or different from the
 *         required one, or local memory past the device's (each message names
 *         the argument: "'desc->args[2]' ..."),
 *         ACCEL_ERROR_UNSUPPORTED for a device-address argument on a device
 *         without device addresses.
 * Errors while the kernel runs land on the stream. */
ACCEL_API accel_status_t accel_stream_launch_kernel(accel_stream_t stream, accel_kernel_t kernel,
                                                    const accel_launch_desc_t* desc); /* [in] */

/* 1.3: a launch checked once and enqueued many times (docs/kernels.md,
 * "Prepared launches"). `desc` is checked as accel_stream_launch_kernel
 * checks it, against the kernel's device; scalars are copied now; the kernel
 * and the bound buffers stay alive while the prepared launch does, even if
 * their handles are destroyed meanwhile. Immutable, so thread-safe.
 * Returns what accel_stream_launch_kernel returns for `kernel` and `desc`. */
ACCEL_API accel_status_t accel_kernel_prepare_launch(accel_kernel_t kernel, const accel_launch_desc_t* desc, /* [in] */
                                                     accel_prepared_launch_t* out_prepared);                 /* [out] */

/* 1.3: launches already enqueued still run. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_prepared_launch_destroy(accel_prepared_launch_t prepared);

/* 1.3: enqueues the prepared launch once, as accel_stream_launch_kernel would
 * with the kernel and desc it was prepared from. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE for a stale stream or prepared launch,
 *         ACCEL_ERROR_INVALID_ARGUMENT for a stream of another device than
 *         the kernel's. Errors while the kernel runs land on the stream. */
ACCEL_API accel_status_t accel_stream_launch_prepared(accel_stream_t stream, accel_prepared_launch_t prepared);

/*===----------------------------------------------------------------------===*/
/* native-host kernels (docs/kernels.md)                                      */
/*===----------------------------------------------------------------------===*/

/* What a native-host kernel is told about its work-group. Each call gets a
 * local-memory block of its own, private to the work-group while it runs:
 * not zeroed, not kept from one call to the next, NULL when
 * local_memory_size is 0. The kernel's static part comes first, then each
 * LOCAL_MEMORY argument's region in argument order (the host and sim
 * backends start each region on a 64-byte boundary; local_memory_size
 * counts the padding). */
typedef struct accel_native_work_group_t {
  uint32_t group_id[3];   /* this work-group's index in the grid */
  uint32_t group_size[3]; /* the launch's block */
  uint32_t grid_size[3];  /* the launch's grid */
  uint32_t reserved0;
  void* local_memory;         /* this work-group's local memory: static part first, then LOCAL_MEMORY args */
  uint64_t local_memory_size; /* bytes at `local_memory` */
} accel_native_work_group_t;

/* One argument as the kernel receives it. BUFFER: `pointer` is the first byte
 * of the bound range and `size` its length. SCALAR: `pointer` points at a copy
 * of the bytes. LOCAL_MEMORY: this work-group's region. DEVICE_ADDRESS:
 * `pointer` is the address. */
typedef struct accel_native_arg_t {
  void* pointer;
  uint64_t size;
} accel_native_arg_t;

/* A native-host kernel: called once per work-group, possibly concurrently for
 * different work-groups on different threads. It loops over its own
 * work-items; a barrier is the boundary between two such loops. A negative
 * return becomes the stream's asynchronous error. */
typedef accel_status_t (*accel_native_kernel_fn)(const accel_native_work_group_t* group,
                                                 const accel_native_arg_t* args);

/* One kernel of a native-host module. `arguments` holds argument_count
 * entries at a stride of arguments[0].struct_size; every entry has that
 * struct_size and stype ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO
 * (ACCEL_KERNEL_ARGUMENT_INFO_INIT sets both). A table that breaks a rule
 * here fails accel_module_create with ACCEL_ERROR_INVALID_ARGUMENT naming
 * the field. */
typedef struct accel_native_kernel_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_NATIVE_KERNEL_DESC */
  uint32_t struct_size;
  const void* next;
  const char* name;                              /* non-empty, unique in the module */
  accel_native_kernel_fn function;               /* non-NULL */
  const accel_kernel_argument_info_t* arguments; /* argument_count entries, stride arguments[0].struct_size */
  uint32_t argument_count;
  uint32_t max_work_group_size;         /* 0: the device's */
  uint32_t required_work_group_size[3]; /* all 0: any */
  uint32_t reserved0;
  uint64_t local_memory_size; /* static local memory, bytes */
} accel_native_kernel_desc_t;

/* The blob of a native-host module source. Must stay valid, with the
 * functions it names, until the module is destroyed and its launches ran.
 * `kernels` holds kernel_count entries at a stride of kernels[0].struct_size;
 * every entry has that struct_size and stype
 * ACCEL_STRUCTURE_TYPE_NATIVE_KERNEL_DESC. */
typedef struct accel_native_module_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_NATIVE_MODULE */
  uint32_t struct_size;
  const void* next;
  const accel_native_kernel_desc_t* kernels; /* kernel_count entries, stride kernels[0].struct_size */
  uint32_t kernel_count;
  uint32_t reserved0;
} accel_native_module_t;

/* A shared library that is a native-host module exports this function. */
#define ACCEL_NATIVE_MODULE_ENTRY_POINT_NAME "accel_native_module_get"
typedef const accel_native_module_t* (*accel_native_module_get_fn)(void);

/*===----------------------------------------------------------------------===*/
/* Topology (docs/topology.md)                                                */
/*===----------------------------------------------------------------------===*/

/* Longest CPU list string ("0-15,32-47"), including the NUL. */
#define ACCEL_CPU_LIST_SIZE 1024

typedef struct accel_device_topology_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY */
  uint32_t struct_size;
  const void* next;
  char pci_bus_id[ACCEL_PCI_BUS_ID_SIZE]; /* "0000:3b:00.0"; "" none */
  char pcie_root[ACCEL_PCI_BUS_ID_SIZE];  /* the PCIe root complex above it, "pci0000:3a"; "" none */
  int32_t numa_node;                      /* -1 unknown or several */
  uint32_t local_cpu_count;               /* CPUs in `local_cpus` */
  char local_cpus[ACCEL_CPU_LIST_SIZE];   /* the CPUs nearest the device, Linux cpulist format */
  int32_t nearest_nic;                    /* index of the closest NIC (accel_instance_get_nic); -1 none */
  uint32_t domain_count;                  /* levels for accel_device_get_domain */
} accel_device_topology_t;

/* Where the device sits in the machine. Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_device_get_topology(accel_device_t device,
                                                   accel_device_topology_t* out_topology); /* [out] */

/* The path between two devices, or between a device and a NIC, nearest first
 * (the classes of `nvidia-smi topo -m`). */
typedef enum accel_link_class_t {
  ACCEL_LINK_CLASS_UNKNOWN = 0,
  ACCEL_LINK_CLASS_SELF = 1,        /* the same physical device */
  ACCEL_LINK_CLASS_FABRIC = 2,      /* a device fabric (NVLink, xGMI, ICI), `link_count` links */
  ACCEL_LINK_CLASS_PIX = 3,         /* at most one PCIe bridge */
  ACCEL_LINK_CLASS_PXB = 4,         /* several PCIe bridges, no host bridge */
  ACCEL_LINK_CLASS_PHB = 5,         /* through a PCIe host bridge */
  ACCEL_LINK_CLASS_NODE = 6,        /* between host bridges within one NUMA node */
  ACCEL_LINK_CLASS_SYS = 7,         /* across NUMA nodes (the SMP interconnect) */
  ACCEL_LINK_CLASS_HOST_STAGED = 8, /* no direct path: copies go through host memory */
  ACCEL_LINK_CLASS_NONE = 9,        /* no path at all */
  ACCEL_LINK_CLASS_FORCE32 = 0x7FFFFFFF
} accel_link_class_t;

typedef struct accel_device_link_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_DEVICE_LINK */
  uint32_t struct_size;
  const void* next;
  accel_link_class_t link_class;
  uint32_t link_count;  /* FABRIC: links between the two; else 0 */
  uint64_t bandwidth;   /* bytes/s one way, 0 unknown */
  uint32_t peer_access; /* 1: each can use the other's memory directly */
  uint32_t reserved0;
  char fabric[ACCEL_SHORT_STRING_SIZE]; /* FABRIC: "nvlink4", "xgmi3", "ici"; else "" */
} accel_device_link_t;

/* The path from `device` to `peer` (the same device gives SELF). Thread-safe.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (NULL
 *         output, devices of different instances). */
ACCEL_API accel_status_t accel_device_get_link(accel_device_t device, accel_device_t peer,
                                               accel_device_link_t* out_link); /* [out] */

typedef struct accel_nic_properties_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES */
  uint32_t struct_size;
  const void* next;
  char name[ACCEL_SHORT_STRING_SIZE];     /* "mlx5_0", "eth0" */
  char kind[ACCEL_SHORT_STRING_SIZE];     /* "ethernet", "infiniband", "rdma" */
  char pci_bus_id[ACCEL_PCI_BUS_ID_SIZE]; /* "" virtual */
  char pcie_root[ACCEL_PCI_BUS_ID_SIZE];
  int32_t numa_node; /* -1 unknown */
  uint32_t reserved0;
} accel_nic_properties_t;

/* NICs of the machine (physical ones, with a PCI address), in PCI order.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_instance_get_nic_count(accel_instance_t instance, uint32_t* out_count); /* [out] */

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (index out
 * of range, NULL or malformed output). */
ACCEL_API accel_status_t accel_instance_get_nic(accel_instance_t instance, uint32_t index,
                                                accel_nic_properties_t* out_properties); /* [out] */

/* The path from `device` to NIC `nic_index`; a NIC is affine to the device
 * when the class is PIX or PXB (they share a PCIe root).
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_device_get_nic_link(accel_device_t device, uint32_t nic_index,
                                                   accel_device_link_t* out_link); /* [out] */

/* Levels above the single device, innermost first. */
typedef enum accel_domain_level_t {
  ACCEL_DOMAIN_LEVEL_CLIQUE = 1, /* devices joined by one fabric (an NVLink domain) */
  ACCEL_DOMAIN_LEVEL_NODE = 2,   /* this machine; the id is the machine's */
  ACCEL_DOMAIN_LEVEL_RACK = 3,
  ACCEL_DOMAIN_LEVEL_BLOCK = 4,
  ACCEL_DOMAIN_LEVEL_SLICE = 5, /* a multi-host accelerator slice */
  ACCEL_DOMAIN_LEVEL_ZONE = 6,
  ACCEL_DOMAIN_LEVEL_FORCE32 = 0x7FFFFFFF
} accel_domain_level_t;

typedef struct accel_domain_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_DOMAIN */
  uint32_t struct_size;
  const void* next;
  accel_domain_level_t level;
  uint32_t reserved0;
  char id[ACCEL_SHORT_STRING_SIZE]; /* unique within its level: "r12" */
} accel_domain_t;

/* Domain `index` (< domain_count of accel_device_get_topology), ordered
 * innermost first: the backend's fabric clique, the node, then the levels
 * ACCEL_TOPOLOGY_DOMAINS ("rack=r12,block=b3") names.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_device_get_domain(accel_device_t device, uint32_t index,
                                                 accel_domain_t* out_domain); /* [out] */

/* The name of a link class ("PIX", "FABRIC", "HOST_STAGED") or of a domain
 * level ("rack"); NULL for a value this version does not know. Static. */
ACCEL_API const char* accel_link_class_name(accel_link_class_t link_class);
ACCEL_API const char* accel_domain_level_name(accel_domain_level_t level);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ACCEL_ACCEL_H_ */
