// The HIP runtime entry points the backend uses, declared here from AMD's public HIP API reference
// (rocm.docs.amd.com/projects/HIP, "HIP runtime API reference": hip_runtime_api.h's types, hipError_t,
// hipDeviceAttribute_t, hipFunction_attribute and the flags), so that the backend builds without ROCm: no vendor
// header is included. libamdhip64.so.6 (or .so.5) is opened with dlopen at run time, never linked.
//
// HIP has no versioned proc-address query that both ROCm 5 and 6 offer, so every entry point is looked up with dlsym
// by its exported C name; the signatures below are the same in ROCm 5 and 6. The one structure whose layout changed
// between them, hipDeviceProp_t, is read for one field only (gcnArchName, the "gfx942" name no attribute gives), at
// the offset of the layout the library exports (kPropsR0600GcnArchNameOffset for ROCm 6's
// hipGetDevicePropertiesR0600, kPropsR0000GcnArchNameOffset for ROCm 5's hipGetDeviceProperties).
#ifndef ACCEL_HIP_SYMBOLS_H_
#define ACCEL_HIP_SYMBOLS_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace accel::hip {

// The sonames the backend tries, in order: ROCm 6, then ROCm 5 (Debian 12's libamdhip64-5).
inline constexpr const char* kRuntimeLibraryNames[] = {"libamdhip64.so.6", "libamdhip64.so.5"};

// --- Types (HIP runtime API, "Data types") ---------------------------------------------------------------------

using hipError_t = int;
using hipDevice_t = int;
using hipDeviceptr_t = void*;
struct ihipStream_t;
struct ihipEvent_t;
struct ihipModule_t;
struct ihipModuleSymbol_t;
using hipStream_t = ihipStream_t*;
using hipEvent_t = ihipEvent_t*;
using hipModule_t = ihipModule_t*;
using hipFunction_t = ihipModuleSymbol_t*;
struct hipUUID {
  char bytes[16];
};

// hipError_t values the backend names or acts on (hipGetErrorName names every other).
inline constexpr hipError_t hipSuccess = 0;
inline constexpr hipError_t hipErrorInvalidValue = 1;
inline constexpr hipError_t hipErrorOutOfMemory = 2;
inline constexpr hipError_t hipErrorNotInitialized = 3;
inline constexpr hipError_t hipErrorDeinitialized = 4;
inline constexpr hipError_t hipErrorInsufficientDriver = 35;
inline constexpr hipError_t hipErrorInvalidDeviceFunction = 98;
inline constexpr hipError_t hipErrorNoDevice = 100;
inline constexpr hipError_t hipErrorInvalidDevice = 101;
inline constexpr hipError_t hipErrorInvalidImage = 200;
inline constexpr hipError_t hipErrorInvalidContext = 201;
inline constexpr hipError_t hipErrorNoBinaryForGpu = 209;
inline constexpr hipError_t hipErrorECCNotCorrectable = 214;
inline constexpr hipError_t hipErrorInvalidKernelFile = 218;
inline constexpr hipError_t hipErrorInvalidSource = 300;
inline constexpr hipError_t hipErrorSharedObjectInitFailed = 303;
inline constexpr hipError_t hipErrorInvalidHandle = 400;
inline constexpr hipError_t hipErrorNotFound = 500;
inline constexpr hipError_t hipErrorNotReady = 600;
inline constexpr hipError_t hipErrorIllegalAddress = 700;
inline constexpr hipError_t hipErrorLaunchOutOfResources = 701;
inline constexpr hipError_t hipErrorLaunchTimeOut = 702;
inline constexpr hipError_t hipErrorPeerAccessAlreadyEnabled = 704;
inline constexpr hipError_t hipErrorLaunchFailure = 719;
inline constexpr hipError_t hipErrorNotSupported = 801;
inline constexpr hipError_t hipErrorUnknown = 999;

// hipDeviceAttribute_t values used (the CUDA-compatible range, numbered alike in ROCm 5 and 6).
enum HipDeviceAttribute : int {
  hipDeviceAttributeCanMapHostMemory = 3,
  hipDeviceAttributeClockRate = 5,  // kHz
  hipDeviceAttributeIntegrated = 16,
  hipDeviceAttributeL2CacheSize = 19,
  hipDeviceAttributeComputeCapabilityMajor = 23,
  hipDeviceAttributeMaxBlockDimX = 26,
  hipDeviceAttributeMaxBlockDimY = 27,
  hipDeviceAttributeMaxBlockDimZ = 28,
  hipDeviceAttributeMaxGridDimX = 29,
  hipDeviceAttributeMaxGridDimY = 30,
  hipDeviceAttributeMaxGridDimZ = 31,
  hipDeviceAttributeMaxThreadsPerBlock = 56,
  hipDeviceAttributeComputeCapabilityMinor = 61,
  hipDeviceAttributeMultiprocessorCount = 63,  // compute units
  hipDeviceAttributePciBusId = 67,
  hipDeviceAttributePciDeviceId = 68,  // the device (slot) number on its bus, not the PCI product id
  hipDeviceAttributePciDomainId = 69,
  hipDeviceAttributeMaxSharedMemoryPerBlock = 74,  // LDS bytes per work-group
  hipDeviceAttributeUnifiedAddressing = 85,
  hipDeviceAttributeWarpSize = 87,  // the wavefront size
};

// hipFunction_attribute values used.
inline constexpr int HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
inline constexpr int HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;

// Flags.
inline constexpr unsigned int hipStreamNonBlocking = 0x1;
inline constexpr unsigned int hipEventBlockingSync = 0x1;
inline constexpr unsigned int hipEventDisableTiming = 0x2;
inline constexpr unsigned int hipHostMallocPortable = 0x1;
inline constexpr unsigned int hipHostMallocMapped = 0x2;

// hipDeviceProp_t: where gcnArchName (char[256]) sits in the two layouts. ROCm 6's hipDeviceProp_tR0600: name[256],
// hipUUID, luid[8], the CUDA-compatible fields, reserved[63] and hipReserved[32], then gcnArchName at byte 1160 of
// 1480. ROCm 5's layout (R0000): name[256] and the older field list, gcnArchName at byte 396 of 1472. The backend
// passes a zeroed buffer of kPropsBufferSize bytes, larger than either.
inline constexpr size_t kPropsR0600GcnArchNameOffset = 1160;
inline constexpr size_t kPropsR0000GcnArchNameOffset = 396;
inline constexpr size_t kPropsGcnArchNameSize = 256;
inline constexpr size_t kPropsBufferSize = 4096;

// --- Entry points -----------------------------------------------------------------------------------------------

using HipGetErrorNameFn = const char* (*)(hipError_t);
using HipGetDevicePropertiesFn = hipError_t (*)(void* prop, int device);

// Every required entry point, as X(name, return type and parameters), looked up with dlsym.
#define ACCEL_HIP_ENTRY_POINTS(X)                                                                                     \
  X(hipInit, hipError_t (*)(unsigned int))                                                                            \
  X(hipGetErrorString, const char* (*)(hipError_t))                                                                   \
  X(hipDriverGetVersion, hipError_t (*)(int*))                                                                        \
  X(hipRuntimeGetVersion, hipError_t (*)(int*))                                                                       \
  X(hipGetDeviceCount, hipError_t (*)(int*))                                                                          \
  X(hipGetDevice, hipError_t (*)(int*))                                                                               \
  X(hipSetDevice, hipError_t (*)(int))                                                                                \
  X(hipDeviceGet, hipError_t (*)(hipDevice_t*, int))                                                                  \
  X(hipDeviceGetName, hipError_t (*)(char*, int, hipDevice_t))                                                        \
  X(hipDeviceGetAttribute, hipError_t (*)(int*, int, int))                                                            \
  X(hipDeviceTotalMem, hipError_t (*)(size_t*, hipDevice_t))                                                          \
  X(hipDeviceGetPCIBusId, hipError_t (*)(char*, int, int))                                                            \
  X(hipDeviceCanAccessPeer, hipError_t (*)(int*, int, int))                                                           \
  X(hipDeviceEnablePeerAccess, hipError_t (*)(int, unsigned int))                                                     \
  X(hipMemGetInfo, hipError_t (*)(size_t*, size_t*))                                                                  \
  X(hipMalloc, hipError_t (*)(void**, size_t))                                                                        \
  X(hipFree, hipError_t (*)(void*))                                                                                   \
  X(hipHostMalloc, hipError_t (*)(void**, size_t, unsigned int))                                                      \
  X(hipHostFree, hipError_t (*)(void*))                                                                               \
  X(hipHostGetDevicePointer, hipError_t (*)(void**, void*, unsigned int))                                             \
  X(hipMemcpyHtoD, hipError_t (*)(hipDeviceptr_t, void*, size_t))                                                     \
  X(hipMemcpyDtoH, hipError_t (*)(void*, hipDeviceptr_t, size_t))                                                     \
  X(hipMemcpyHtoDAsync, hipError_t (*)(hipDeviceptr_t, void*, size_t, hipStream_t))                                   \
  X(hipMemcpyDtoHAsync, hipError_t (*)(void*, hipDeviceptr_t, size_t, hipStream_t))                                   \
  X(hipMemcpyDtoDAsync, hipError_t (*)(hipDeviceptr_t, hipDeviceptr_t, size_t, hipStream_t))                          \
  X(hipMemcpyPeerAsync, hipError_t (*)(void*, int, const void*, int, size_t, hipStream_t))                            \
  X(hipMemsetD8Async, hipError_t (*)(hipDeviceptr_t, unsigned char, size_t, hipStream_t))                             \
  X(hipMemsetD16Async, hipError_t (*)(hipDeviceptr_t, unsigned short, size_t, hipStream_t)) /* NOLINT(runtime/int) */ \
  X(hipMemsetD32Async, hipError_t (*)(hipDeviceptr_t, int, size_t, hipStream_t))                                      \
  X(hipStreamCreateWithFlags, hipError_t (*)(hipStream_t*, unsigned int))                                             \
  X(hipStreamDestroy, hipError_t (*)(hipStream_t))                                                                    \
  X(hipStreamSynchronize, hipError_t (*)(hipStream_t))                                                                \
  X(hipStreamQuery, hipError_t (*)(hipStream_t))                                                                      \
  X(hipStreamWaitEvent, hipError_t (*)(hipStream_t, hipEvent_t, unsigned int))                                        \
  X(hipEventCreateWithFlags, hipError_t (*)(hipEvent_t*, unsigned int))                                               \
  X(hipEventDestroy, hipError_t (*)(hipEvent_t))                                                                      \
  X(hipEventRecord, hipError_t (*)(hipEvent_t, hipStream_t))                                                          \
  X(hipEventQuery, hipError_t (*)(hipEvent_t))                                                                        \
  X(hipEventSynchronize, hipError_t (*)(hipEvent_t))                                                                  \
  X(hipEventElapsedTime, hipError_t (*)(float*, hipEvent_t, hipEvent_t))                                              \
  X(hipModuleLoadData, hipError_t (*)(hipModule_t*, const void*))                                                     \
  X(hipModuleUnload, hipError_t (*)(hipModule_t))                                                                     \
  X(hipModuleGetFunction, hipError_t (*)(hipFunction_t*, hipModule_t, const char*))                                   \
  X(hipFuncGetAttribute, hipError_t (*)(int*, int, hipFunction_t))                                                    \
  X(hipModuleLaunchKernel, hipError_t (*)(hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int,      \
                                          unsigned int, unsigned int, unsigned int, hipStream_t, void**, void**))

// Optional entry points, NULL when the library lacks them: the UUID (ROCm 5.2+) and the AMD extension that says
// whether two GPUs are joined by xGMI (Infinity Fabric).
#define ACCEL_HIP_OPTIONAL_ENTRY_POINTS(X)                   \
  X(hipDeviceGetUuid, hipError_t (*)(hipUUID*, hipDevice_t)) \
  X(hipExtGetLinkTypeAndHopCount, hipError_t (*)(int, int, uint32_t*, uint32_t*))

// The runtime's entry points of one context. Immutable after loading.
struct HipApi {
  HipGetErrorNameFn hipGetErrorName = nullptr;
  HipGetDevicePropertiesFn get_device_properties = nullptr;  // R0600 or R0000, as `props_arch_offset` says
  size_t props_arch_offset = 0;
#define ACCEL_HIP_MEMBER(name, type) std::type_identity_t<type> name = nullptr;
  ACCEL_HIP_ENTRY_POINTS(ACCEL_HIP_MEMBER)
  ACCEL_HIP_OPTIONAL_ENTRY_POINTS(ACCEL_HIP_MEMBER)
#undef ACCEL_HIP_MEMBER
};

}  // namespace accel::hip

#endif  // ACCEL_HIP_SYMBOLS_H_
