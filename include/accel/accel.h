/*
 * Accel application C API, ABI 1.0.
 *
 * Rules that apply to every function here are stated once, in docs/:
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
#define ACCEL_ABI_VERSION_MINOR 0
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
  /* 1000..1999: the backend plugin ABI (abi/accel_backend.h). */
  ACCEL_STRUCTURE_TYPE_FORCE32 = 0x7FFFFFFF
} accel_structure_type_t;

/* The common header, for code that walks `next` chains. */
typedef struct accel_struct_header_t {
  uint32_t stype;
  uint32_t struct_size;
  const void* next;
} accel_struct_header_t;

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
 * Selection entries that match nothing are logged, not errors. */
ACCEL_API accel_status_t accel_instance_create(const accel_instance_desc_t* desc, /* [in][optional] NULL: defaults */
                                               accel_instance_t* out_instance);   /* [out] */

/* Destroys `instance` and every object still alive under it: streams are
 * drained, buffers and events freed, backends shut down and unloaded. Every
 * handle of the instance becomes stale. Must not race other calls on objects
 * of the same instance.
 * Returns ACCEL_ERROR_INVALID_HANDLE when `instance` is not a live instance. */
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

/* Live free and total memory of the device. Thread-safe.
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
 * it). Returns ACCEL_ERROR_INVALID_HANDLE. */
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
 * asynchronous error, ACCEL_ERROR_TIMEOUT when `timeout_ns` passed first, or
 * ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_stream_synchronize(accel_stream_t stream, uint64_t timeout_ns);

/* After an asynchronous error, work enqueued later on the stream is skipped
 * (host callbacks still run, told the error) and completes with that error
 * until this call clears it. Returns
 * ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_FAILED_PRECONDITION while work is
 * pending. */
ACCEL_API accel_status_t accel_stream_clear_error(accel_stream_t stream);

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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ACCEL_ACCEL_H_ */
