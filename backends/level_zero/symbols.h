// The oneAPI Level Zero core API the backend uses, declared here from the public Level Zero specification
// (oneapi-src.github.io/level-zero-spec, "Core API", version 1.0 to 1.4: ze_result_t, ze_structure_type_t, the
// property and descriptor structures and the entry points below), so that the backend builds without Level Zero's
// headers (libze-dev): no vendor header is included. The loader, libze_loader.so.1 (Debian: libze1), is opened with
// dlopen at run time, never linked; it forwards each call to the installed drivers (Intel's compute runtime).
//
// Every entry point is looked up with dlsym by its exported C name: the loader exports the whole 1.x core API under
// those names, and the structures below are 1.0's, which later versions only extend through `pNext` chains.
#ifndef ACCEL_LEVEL_ZERO_SYMBOLS_H_
#define ACCEL_LEVEL_ZERO_SYMBOLS_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace accel::level_zero {

// The loader's soname (Debian 12: libze1).
inline constexpr const char* kLoaderLibraryName = "libze_loader.so.1";

// --- Types ----------------------------------------------------------------------------------------------------

using ze_result_t = uint32_t;
using ze_bool_t = uint8_t;
using ze_structure_type_t = uint32_t;
struct _ze_driver_handle_t;
struct _ze_device_handle_t;
struct _ze_context_handle_t;
struct _ze_command_list_handle_t;
struct _ze_event_pool_handle_t;
struct _ze_event_handle_t;
struct _ze_module_handle_t;
struct _ze_module_build_log_handle_t;
struct _ze_kernel_handle_t;
using ze_driver_handle_t = _ze_driver_handle_t*;
using ze_device_handle_t = _ze_device_handle_t*;
using ze_context_handle_t = _ze_context_handle_t*;
using ze_command_list_handle_t = _ze_command_list_handle_t*;
using ze_event_pool_handle_t = _ze_event_pool_handle_t*;
using ze_event_handle_t = _ze_event_handle_t*;
using ze_module_handle_t = _ze_module_handle_t*;
using ze_module_build_log_handle_t = _ze_module_build_log_handle_t*;
using ze_kernel_handle_t = _ze_kernel_handle_t*;

// ze_result_t values the backend names or acts on.
inline constexpr ze_result_t ZE_RESULT_SUCCESS = 0;
inline constexpr ze_result_t ZE_RESULT_NOT_READY = 1;
inline constexpr ze_result_t ZE_RESULT_ERROR_DEVICE_LOST = 0x70000001;
inline constexpr ze_result_t ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY = 0x70000002;
inline constexpr ze_result_t ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY = 0x70000003;
inline constexpr ze_result_t ZE_RESULT_ERROR_MODULE_BUILD_FAILURE = 0x70000004;
inline constexpr ze_result_t ZE_RESULT_ERROR_MODULE_LINK_FAILURE = 0x70000005;
inline constexpr ze_result_t ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET = 0x70000006;
inline constexpr ze_result_t ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE = 0x70000007;
inline constexpr ze_result_t ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS = 0x70010000;
inline constexpr ze_result_t ZE_RESULT_ERROR_NOT_AVAILABLE = 0x70010001;
inline constexpr ze_result_t ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE = 0x70020000;
inline constexpr ze_result_t ZE_RESULT_ERROR_UNINITIALIZED = 0x78000001;
inline constexpr ze_result_t ZE_RESULT_ERROR_UNSUPPORTED_VERSION = 0x78000002;
inline constexpr ze_result_t ZE_RESULT_ERROR_UNSUPPORTED_FEATURE = 0x78000003;
inline constexpr ze_result_t ZE_RESULT_ERROR_INVALID_ARGUMENT = 0x78000004;
inline constexpr ze_result_t ZE_RESULT_ERROR_INVALID_NULL_HANDLE = 0x78000005;
inline constexpr ze_result_t ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE = 0x78000006;
inline constexpr ze_result_t ZE_RESULT_ERROR_INVALID_NULL_POINTER = 0x78000007;
inline constexpr ze_result_t ZE_RESULT_ERROR_INVALID_SIZE = 0x78000008;
inline constexpr ze_result_t ZE_RESULT_ERROR_UNSUPPORTED_SIZE = 0x78000009;
inline constexpr ze_result_t ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT = 0x7800000a;
inline constexpr ze_result_t ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT = 0x7800000b;
inline constexpr ze_result_t ZE_RESULT_ERROR_INVALID_ENUMERATION = 0x7800000c;
inline constexpr ze_result_t ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION = 0x7800000d;
inline constexpr ze_result_t ZE_RESULT_ERROR_INVALID_NATIVE_BINARY = 0x7800000f;
inline constexpr ze_result_t ZE_RESULT_ERROR_INVALID_KERNEL_NAME = 0x78000011;
inline constexpr ze_result_t ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION = 0x78000013;
inline constexpr ze_result_t ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX = 0x78000015;
inline constexpr ze_result_t ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE = 0x78000016;
inline constexpr ze_result_t ZE_RESULT_ERROR_UNKNOWN = 0x7ffffffe;

// ze_structure_type_t values of the structures below.
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES = 0x1;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES = 0x3;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES = 0x4;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES = 0x5;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES = 0x7;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_CONTEXT_DESC = 0xd;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC = 0xe;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_EVENT_POOL_DESC = 0x10;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_EVENT_DESC = 0x11;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC = 0x15;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC = 0x16;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_MODULE_DESC = 0x1b;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_KERNEL_DESC = 0x1d;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES = 0x1e;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES = 0x10008;

// Enum and flag values used.
inline constexpr uint32_t ZE_DEVICE_TYPE_GPU = 1;
inline constexpr uint32_t ZE_DEVICE_TYPE_CPU = 2;
inline constexpr uint32_t ZE_DEVICE_TYPE_FPGA = 3;
inline constexpr uint32_t ZE_DEVICE_TYPE_MCA = 4;
inline constexpr uint32_t ZE_DEVICE_TYPE_VPU = 5;
inline constexpr uint32_t ZE_DEVICE_PROPERTY_FLAG_INTEGRATED = 1u << 0;
inline constexpr uint32_t ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE = 1u << 1;
inline constexpr uint32_t ZE_DEVICE_PROPERTY_FLAG_ECC = 1u << 2;
inline constexpr uint32_t ZE_DEVICE_PROPERTY_FLAG_ONDEMANDPAGING = 1u << 3;
inline constexpr uint32_t ZE_DEVICE_MODULE_FLAG_FP16 = 1u << 0;
inline constexpr uint32_t ZE_DEVICE_MODULE_FLAG_FP64 = 1u << 1;
inline constexpr uint32_t ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS = 1u << 2;
inline constexpr uint32_t ZE_DEVICE_MODULE_FLAG_DP4A = 1u << 3;
inline constexpr uint32_t ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS = 1;
inline constexpr uint32_t ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS = 2;
inline constexpr uint32_t ZE_EVENT_POOL_FLAG_HOST_VISIBLE = 1u << 0;
inline constexpr uint32_t ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP = 1u << 2;
inline constexpr uint32_t ZE_EVENT_SCOPE_FLAG_DEVICE = 1u << 1;
inline constexpr uint32_t ZE_EVENT_SCOPE_FLAG_HOST = 1u << 2;
inline constexpr uint32_t ZE_MODULE_FORMAT_IL_SPIRV = 0;

inline constexpr size_t ZE_MAX_DEVICE_NAME = 256;
inline constexpr size_t ZE_SUBGROUPSIZE_COUNT = 8;

// --- Structures (1.0 layouts) -----------------------------------------------------------------------------------

struct ze_driver_properties_t {
  ze_structure_type_t stype;
  void* pNext;
  uint8_t uuid[16];
  uint32_t driverVersion;
};

struct ze_device_properties_t {
  ze_structure_type_t stype;
  void* pNext;
  uint32_t type;  // ZE_DEVICE_TYPE_*
  uint32_t vendorId;
  uint32_t deviceId;  // the PCI device (product) id
  uint32_t flags;     // ZE_DEVICE_PROPERTY_FLAG_*
  uint32_t subdeviceId;
  uint32_t coreClockRate;  // MHz
  uint64_t maxMemAllocSize;
  uint32_t maxHardwareContexts;
  uint32_t maxCommandQueuePriority;
  uint32_t numThreadsPerEU;
  uint32_t physicalEUSimdWidth;
  uint32_t numEUsPerSubslice;
  uint32_t numSubslicesPerSlice;
  uint32_t numSlices;
  uint64_t timerResolution;  // nanoseconds per timer tick (ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES)
  uint32_t timestampValidBits;
  uint32_t kernelTimestampValidBits;
  uint8_t uuid[16];
  char name[ZE_MAX_DEVICE_NAME];
};

struct ze_device_compute_properties_t {
  ze_structure_type_t stype;
  void* pNext;
  uint32_t maxTotalGroupSize;
  uint32_t maxGroupSizeX;
  uint32_t maxGroupSizeY;
  uint32_t maxGroupSizeZ;
  uint32_t maxGroupCountX;
  uint32_t maxGroupCountY;
  uint32_t maxGroupCountZ;
  uint32_t maxSharedLocalMemory;
  uint32_t numSubGroupSizes;
  uint32_t subGroupSizes[ZE_SUBGROUPSIZE_COUNT];
};

struct ze_device_module_properties_t {
  ze_structure_type_t stype;
  void* pNext;
  uint32_t spirvVersionSupported;
  uint32_t flags;  // ZE_DEVICE_MODULE_FLAG_*
  uint32_t fp16flags;
  uint32_t fp32flags;
  uint32_t fp64flags;
  uint32_t maxArgumentsSize;
  uint32_t printfBufferSize;
  uint8_t nativeKernelSupported[16];
};

struct ze_device_memory_properties_t {
  ze_structure_type_t stype;
  void* pNext;
  uint32_t flags;
  uint32_t maxClockRate;
  uint32_t maxBusWidth;
  uint64_t totalSize;
  char name[ZE_MAX_DEVICE_NAME];
};

struct ze_pci_ext_properties_t {
  ze_structure_type_t stype;
  void* pNext;
  uint32_t domain;  // ze_pci_address_ext_t
  uint32_t bus;
  uint32_t device;
  uint32_t function;
  int32_t genVersion;  // ze_pci_speed_ext_t
  int32_t width;
  int64_t maxBandwidth;
};

struct ze_context_desc_t {
  ze_structure_type_t stype;
  const void* pNext;
  uint32_t flags;
};

struct ze_command_queue_desc_t {
  ze_structure_type_t stype;
  const void* pNext;
  uint32_t ordinal;
  uint32_t index;
  uint32_t flags;
  uint32_t mode;      // ZE_COMMAND_QUEUE_MODE_*
  uint32_t priority;  // 0: normal
};

struct ze_event_pool_desc_t {
  ze_structure_type_t stype;
  const void* pNext;
  uint32_t flags;  // ZE_EVENT_POOL_FLAG_*
  uint32_t count;
};

struct ze_event_desc_t {
  ze_structure_type_t stype;
  const void* pNext;
  uint32_t index;
  uint32_t signal;  // ZE_EVENT_SCOPE_FLAG_*
  uint32_t wait;
};

struct ze_device_mem_alloc_desc_t {
  ze_structure_type_t stype;
  const void* pNext;
  uint32_t flags;
  uint32_t ordinal;
};

struct ze_host_mem_alloc_desc_t {
  ze_structure_type_t stype;
  const void* pNext;
  uint32_t flags;
};

struct ze_module_desc_t {
  ze_structure_type_t stype;
  const void* pNext;
  uint32_t format;  // ZE_MODULE_FORMAT_*
  size_t inputSize;
  const uint8_t* pInputModule;
  const char* pBuildFlags;
  const void* pConstants;  // ze_module_constants_t; unused
};

struct ze_kernel_desc_t {
  ze_structure_type_t stype;
  const void* pNext;
  uint32_t flags;
  const char* pKernelName;
};

struct ze_kernel_properties_t {
  ze_structure_type_t stype;
  void* pNext;
  uint32_t numKernelArgs;
  uint32_t requiredGroupSizeX;
  uint32_t requiredGroupSizeY;
  uint32_t requiredGroupSizeZ;
  uint32_t requiredNumSubGroups;
  uint32_t requiredSubgroupSize;
  uint32_t maxSubgroupSize;
  uint32_t maxNumSubgroups;
  uint32_t localMemSize;
  uint32_t privateMemSize;
  uint32_t spillMemSize;
  uint8_t uuid[32];  // kernel and module ids
};

struct ze_group_count_t {
  uint32_t groupCountX;
  uint32_t groupCountY;
  uint32_t groupCountZ;
};

struct ze_kernel_timestamp_result_t {
  uint64_t globalStart;  // global: device timer ticks
  uint64_t globalEnd;
  uint64_t contextStart;  // context: ticks while the context was active
  uint64_t contextEnd;
};

// --- Entry points ---------------------------------------------------------------------------------------------

// Every required entry point, as X(name, return type and parameters), looked up with dlsym.
#define ACCEL_ZE_ENTRY_POINTS(X)                                                                                   \
  X(zeInit, ze_result_t (*)(uint32_t))                                                                             \
  X(zeDriverGet, ze_result_t (*)(uint32_t*, ze_driver_handle_t*))                                                  \
  X(zeDriverGetProperties, ze_result_t (*)(ze_driver_handle_t, ze_driver_properties_t*))                           \
  X(zeDeviceGet, ze_result_t (*)(ze_driver_handle_t, uint32_t*, ze_device_handle_t*))                              \
  X(zeDeviceGetSubDevices, ze_result_t (*)(ze_device_handle_t, uint32_t*, ze_device_handle_t*))                    \
  X(zeDeviceGetProperties, ze_result_t (*)(ze_device_handle_t, ze_device_properties_t*))                           \
  X(zeDeviceGetComputeProperties, ze_result_t (*)(ze_device_handle_t, ze_device_compute_properties_t*))            \
  X(zeDeviceGetModuleProperties, ze_result_t (*)(ze_device_handle_t, ze_device_module_properties_t*))              \
  X(zeDeviceGetMemoryProperties, ze_result_t (*)(ze_device_handle_t, uint32_t*, ze_device_memory_properties_t*))   \
  X(zeDeviceCanAccessPeer, ze_result_t (*)(ze_device_handle_t, ze_device_handle_t, ze_bool_t*))                    \
  X(zeContextCreate, ze_result_t (*)(ze_driver_handle_t, const ze_context_desc_t*, ze_context_handle_t*))          \
  X(zeContextDestroy, ze_result_t (*)(ze_context_handle_t))                                                        \
  X(zeCommandListCreateImmediate, ze_result_t (*)(ze_context_handle_t, ze_device_handle_t,                         \
                                                  const ze_command_queue_desc_t*, ze_command_list_handle_t*))      \
  X(zeCommandListDestroy, ze_result_t (*)(ze_command_list_handle_t))                                               \
  X(zeCommandListAppendMemoryCopy, ze_result_t (*)(ze_command_list_handle_t, void*, const void*, size_t,           \
                                                   ze_event_handle_t, uint32_t, ze_event_handle_t*))               \
  X(zeCommandListAppendMemoryFill, ze_result_t (*)(ze_command_list_handle_t, void*, const void*, size_t, size_t,   \
                                                   ze_event_handle_t, uint32_t, ze_event_handle_t*))               \
  X(zeCommandListAppendBarrier,                                                                                    \
    ze_result_t (*)(ze_command_list_handle_t, ze_event_handle_t, uint32_t, ze_event_handle_t*))                    \
  X(zeCommandListAppendWaitOnEvents, ze_result_t (*)(ze_command_list_handle_t, uint32_t, ze_event_handle_t*))      \
  X(zeCommandListAppendLaunchKernel,                                                                               \
    ze_result_t (*)(ze_command_list_handle_t, ze_kernel_handle_t, const ze_group_count_t*, ze_event_handle_t,      \
                    uint32_t, ze_event_handle_t*))                                                                 \
  X(zeEventPoolCreate, ze_result_t (*)(ze_context_handle_t, const ze_event_pool_desc_t*, uint32_t,                 \
                                       ze_device_handle_t*, ze_event_pool_handle_t*))                              \
  X(zeEventPoolDestroy, ze_result_t (*)(ze_event_pool_handle_t))                                                   \
  X(zeEventCreate, ze_result_t (*)(ze_event_pool_handle_t, const ze_event_desc_t*, ze_event_handle_t*))            \
  X(zeEventDestroy, ze_result_t (*)(ze_event_handle_t))                                                            \
  X(zeEventHostSynchronize, ze_result_t (*)(ze_event_handle_t, uint64_t))                                          \
  X(zeEventQueryStatus, ze_result_t (*)(ze_event_handle_t))                                                        \
  X(zeEventHostReset, ze_result_t (*)(ze_event_handle_t))                                                          \
  X(zeEventQueryKernelTimestamp, ze_result_t (*)(ze_event_handle_t, ze_kernel_timestamp_result_t*))                \
  X(zeMemAllocDevice, ze_result_t (*)(ze_context_handle_t, const ze_device_mem_alloc_desc_t*, size_t, size_t,      \
                                      ze_device_handle_t, void**))                                                 \
  X(zeMemAllocHost, ze_result_t (*)(ze_context_handle_t, const ze_host_mem_alloc_desc_t*, size_t, size_t, void**)) \
  X(zeMemFree, ze_result_t (*)(ze_context_handle_t, void*))                                                        \
  X(zeModuleCreate, ze_result_t (*)(ze_context_handle_t, ze_device_handle_t, const ze_module_desc_t*,              \
                                    ze_module_handle_t*, ze_module_build_log_handle_t*))                           \
  X(zeModuleDestroy, ze_result_t (*)(ze_module_handle_t))                                                          \
  X(zeModuleBuildLogDestroy, ze_result_t (*)(ze_module_build_log_handle_t))                                        \
  X(zeModuleBuildLogGetString, ze_result_t (*)(ze_module_build_log_handle_t, size_t*, char*))                      \
  X(zeKernelCreate, ze_result_t (*)(ze_module_handle_t, const ze_kernel_desc_t*, ze_kernel_handle_t*))             \
  X(zeKernelDestroy, ze_result_t (*)(ze_kernel_handle_t))                                                          \
  X(zeKernelSetGroupSize, ze_result_t (*)(ze_kernel_handle_t, uint32_t, uint32_t, uint32_t))                       \
  X(zeKernelSetArgumentValue, ze_result_t (*)(ze_kernel_handle_t, uint32_t, size_t, const void*))                  \
  X(zeKernelGetProperties, ze_result_t (*)(ze_kernel_handle_t, ze_kernel_properties_t*))

// Optional entry points, NULL when the loader lacks them: the PCI address (the ze_pci_properties_ext extension,
// 1.3; without it the descriptor has no PCI bus id).
#define ACCEL_ZE_OPTIONAL_ENTRY_POINTS(X) \
  X(zeDevicePciGetPropertiesExt, ze_result_t (*)(ze_device_handle_t, ze_pci_ext_properties_t*))

// The loader's entry points of one context. Immutable after loading.
struct ZeApi {
#define ACCEL_ZE_MEMBER(name, type) std::type_identity_t<type> name = nullptr;
  ACCEL_ZE_ENTRY_POINTS(ACCEL_ZE_MEMBER)
  ACCEL_ZE_OPTIONAL_ENTRY_POINTS(ACCEL_ZE_MEMBER)
#undef ACCEL_ZE_MEMBER
};

}  // namespace accel::level_zero

#endif  // ACCEL_LEVEL_ZERO_SYMBOLS_H_
