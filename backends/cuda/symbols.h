// The CUDA driver API and NVML entry points the backend uses, declared here from the public CUDA Driver API and NVML
// reference documentation (docs.nvidia.com/cuda/cuda-driver-api, docs.nvidia.com/deploy/nvml-api), so that the
// backend builds without the CUDA toolkit: no vendor header is included. libcuda.so.1 and libnvidia-ml.so.1 are
// opened with dlopen at run time, never linked.
//
// Entry points are resolved through cuGetProcAddress_v2 (CUDA 12.0) at a pinned API version, kCudaApiVersion: the
// driver answers the variant of each function that CUDA 12.0 headers call by that name (cuMemAlloc is cuMemAlloc_v2,
// and so on), so the signatures below are those of CUDA 12.0. A few newer functions (kernel enumeration, CUDA 12.4)
// are resolved at kCudaApiVersionOptional and may be missing. cuInit, cuGetErrorName and cuGetProcAddress_v2 itself
// are looked up by dlsym: they exist under one name in every driver since CUDA 12.0.
#ifndef ACCEL_CUDA_SYMBOLS_H_
#define ACCEL_CUDA_SYMBOLS_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace accel::cuda {

// The driver's soname and the NVML soname, the libraries the backend opens.
inline constexpr const char* kDriverLibraryName = "libcuda.so.1";
inline constexpr const char* kNvmlLibraryName = "libnvidia-ml.so.1";
// The CUDA API version the entry points are resolved at (12.0), and the one for the optional ones (12.4).
inline constexpr int kCudaApiVersion = 12000;
inline constexpr int kCudaApiVersionOptional = 12040;

// --- Types (CUDA Driver API, "Data types used by CUDA driver") ------------------------------------------------------

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT(runtime/int): the driver's own type
using cuuint64_t = uint64_t;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
struct CUuuid {
  char bytes[16];
};

// CUresult values the backend names or acts on (cuGetErrorName names every other).
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
inline constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
inline constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
inline constexpr CUresult CUDA_ERROR_INVALID_CONTEXT = 201;
inline constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
inline constexpr CUresult CUDA_ERROR_ECC_UNCORRECTABLE = 214;
inline constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
inline constexpr CUresult CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
inline constexpr CUresult CUDA_ERROR_INVALID_SOURCE = 300;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
inline constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
inline constexpr CUresult CUDA_ERROR_LAUNCH_TIMEOUT = 702;
inline constexpr CUresult CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704;
inline constexpr CUresult CUDA_ERROR_HARDWARE_STACK_ERROR = 714;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_INSTRUCTION = 715;
inline constexpr CUresult CUDA_ERROR_MISALIGNED_ADDRESS = 716;
inline constexpr CUresult CUDA_ERROR_INVALID_ADDRESS_SPACE = 717;
inline constexpr CUresult CUDA_ERROR_INVALID_PC = 718;
inline constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;
inline constexpr CUresult CUDA_ERROR_NOT_PERMITTED = 800;
inline constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
inline constexpr CUresult CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803;
inline constexpr CUresult CUDA_ERROR_UNKNOWN = 999;

// CUdevice_attribute values used.
enum CuDeviceAttribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,  // kHz
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,      // the device (slot) number on its bus, not the PCI product id
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,  // kHz
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

// CUdevice_P2PAttribute values used.
inline constexpr int CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK = 1;
inline constexpr int CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED = 2;

// CUfunction_attribute values used.
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
inline constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// CUjit_option values used (cuModuleLoadDataEx).
inline constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// Flags.
inline constexpr unsigned int CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned int CU_EVENT_BLOCKING_SYNC = 0x1;
inline constexpr unsigned int CU_EVENT_DISABLE_TIMING = 0x2;
// cuda.h's CU_MEMHOSTALLOC_PORTABLE and CU_MEMHOSTALLOC_DEVICEMAP (macros there, so named otherwise here).
inline constexpr unsigned int kMemHostAllocPortable = 0x1;
inline constexpr unsigned int kMemHostAllocDeviceMap = 0x2;
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_DEFAULT = 0;

// --- Entry points -----------------------------------------------------------------------------------------------

// Looked up with dlsym.
using CuInitFn = CUresult (*)(unsigned int flags);
using CuGetErrorNameFn = CUresult (*)(CUresult error, const char** name);
using CuGetProcAddressV2Fn = CUresult (*)(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                          int* symbol_status);

// Every required entry point, as X(name, return type and parameters), resolved at kCudaApiVersion.
#define ACCEL_CUDA_ENTRY_POINTS(X)                                                                                 \
  X(cuDriverGetVersion, CUresult (*)(int*))                                                                        \
  X(cuGetErrorString, CUresult (*)(CUresult, const char**))                                                        \
  X(cuDeviceGetCount, CUresult (*)(int*))                                                                          \
  X(cuDeviceGet, CUresult (*)(CUdevice*, int))                                                                     \
  X(cuDeviceGetName, CUresult (*)(char*, int, CUdevice))                                                           \
  X(cuDeviceGetAttribute, CUresult (*)(int*, int, CUdevice))                                                       \
  X(cuDeviceTotalMem, CUresult (*)(size_t*, CUdevice))                                                             \
  X(cuDeviceGetUuid, CUresult (*)(CUuuid*, CUdevice))                                                              \
  X(cuDeviceCanAccessPeer, CUresult (*)(int*, CUdevice, CUdevice))                                                 \
  X(cuDeviceGetP2PAttribute, CUresult (*)(int*, int, CUdevice, CUdevice))                                          \
  X(cuDevicePrimaryCtxRetain, CUresult (*)(CUcontext*, CUdevice))                                                  \
  X(cuDevicePrimaryCtxRelease, CUresult (*)(CUdevice))                                                             \
  X(cuCtxGetCurrent, CUresult (*)(CUcontext*))                                                                     \
  X(cuCtxPushCurrent, CUresult (*)(CUcontext))                                                                     \
  X(cuCtxPopCurrent, CUresult (*)(CUcontext*))                                                                     \
  X(cuCtxEnablePeerAccess, CUresult (*)(CUcontext, unsigned int))                                                  \
  X(cuMemGetInfo, CUresult (*)(size_t*, size_t*))                                                                  \
  X(cuMemAlloc, CUresult (*)(CUdeviceptr*, size_t))                                                                \
  X(cuMemFree, CUresult (*)(CUdeviceptr))                                                                          \
  X(cuMemHostAlloc, CUresult (*)(void**, size_t, unsigned int))                                                    \
  X(cuMemFreeHost, CUresult (*)(void*))                                                                            \
  X(cuMemHostGetDevicePointer, CUresult (*)(CUdeviceptr*, void*, unsigned int))                                    \
  X(cuMemcpyHtoD, CUresult (*)(CUdeviceptr, const void*, size_t))                                                  \
  X(cuMemcpyDtoH, CUresult (*)(void*, CUdeviceptr, size_t))                                                        \
  X(cuMemcpyHtoDAsync, CUresult (*)(CUdeviceptr, const void*, size_t, CUstream))                                   \
  X(cuMemcpyDtoHAsync, CUresult (*)(void*, CUdeviceptr, size_t, CUstream))                                         \
  X(cuMemcpyDtoDAsync, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream))                                   \
  X(cuMemcpyPeerAsync, CUresult (*)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream))             \
  X(cuMemsetD8Async, CUresult (*)(CUdeviceptr, unsigned char, size_t, CUstream))                                   \
  X(cuMemsetD16Async, CUresult (*)(CUdeviceptr, unsigned short, size_t, CUstream)) /* NOLINT(runtime/int) */       \
  X(cuMemsetD32Async, CUresult (*)(CUdeviceptr, unsigned int, size_t, CUstream))                                   \
  X(cuStreamCreate, CUresult (*)(CUstream*, unsigned int))                                                         \
  X(cuStreamDestroy, CUresult (*)(CUstream))                                                                       \
  X(cuStreamSynchronize, CUresult (*)(CUstream))                                                                   \
  X(cuStreamQuery, CUresult (*)(CUstream))                                                                         \
  X(cuStreamWaitEvent, CUresult (*)(CUstream, CUevent, unsigned int))                                              \
  X(cuEventCreate, CUresult (*)(CUevent*, unsigned int))                                                           \
  X(cuEventDestroy, CUresult (*)(CUevent))                                                                         \
  X(cuEventRecord, CUresult (*)(CUevent, CUstream))                                                                \
  X(cuEventQuery, CUresult (*)(CUevent))                                                                           \
  X(cuEventSynchronize, CUresult (*)(CUevent))                                                                     \
  X(cuEventElapsedTime, CUresult (*)(float*, CUevent, CUevent))                                                    \
  X(cuModuleLoadDataEx, CUresult (*)(CUmodule*, const void*, unsigned int, int*, void**))                          \
  X(cuModuleUnload, CUresult (*)(CUmodule))                                                                        \
  X(cuModuleGetFunction, CUresult (*)(CUfunction*, CUmodule, const char*))                                         \
  X(cuFuncGetAttribute, CUresult (*)(int*, int, CUfunction))                                                       \
  X(cuFuncSetAttribute, CUresult (*)(CUfunction, int, int))                                                        \
  X(cuLaunchKernel, CUresult (*)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, \
                                 unsigned int, unsigned int, CUstream, void**, void**))

// Optional entry points (CUDA 12.3 / 12.4), resolved at kCudaApiVersionOptional: kernel enumeration and parameter
// layouts of cubin and fatbin modules. NULL when the driver is older.
#define ACCEL_CUDA_OPTIONAL_ENTRY_POINTS(X)                                        \
  X(cuModuleGetFunctionCount, CUresult (*)(unsigned int*, CUmodule))               \
  X(cuModuleEnumerateFunctions, CUresult (*)(CUfunction*, unsigned int, CUmodule)) \
  X(cuFuncGetName, CUresult (*)(const char**, CUfunction))                         \
  X(cuFuncGetParamInfo, CUresult (*)(CUfunction, size_t, size_t*, size_t*))

// The driver's entry points of one context. Immutable after loading.
struct CuApi {
  CuInitFn cuInit = nullptr;
  CuGetErrorNameFn cuGetErrorName = nullptr;
#define ACCEL_CUDA_MEMBER(name, type) std::type_identity_t<type> name = nullptr;
  ACCEL_CUDA_ENTRY_POINTS(ACCEL_CUDA_MEMBER)
  ACCEL_CUDA_OPTIONAL_ENTRY_POINTS(ACCEL_CUDA_MEMBER)
#undef ACCEL_CUDA_MEMBER
};

// --- NVML (NVIDIA Management Library) ---------------------------------------------------------------------------

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr unsigned int kNvmlNvLinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
inline constexpr int NVML_FEATURE_ENABLED = 1;           // nvmlEnableState_t
// nvmlPciInfo_t (version 3, NVML 11+).
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};

// The NVML entry points used, resolved with dlsym (NVML has no proc-address query).
struct NvmlApi {
  nvmlReturn_t (*nvmlInit_v2)() = nullptr;
  nvmlReturn_t (*nvmlShutdown)() = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByPciBusId_v2)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetNvLinkState)(nvmlDevice_t, unsigned int, int*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetNvLinkRemotePciInfo_v2)(nvmlDevice_t, unsigned int, nvmlPciInfo_t*) = nullptr;
};

}  // namespace accel::cuda

#endif  // ACCEL_CUDA_SYMBOLS_H_
