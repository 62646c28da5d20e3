// The OpenCL entry points the backend uses, resolved at load time from the ICD
// loader (libOpenCL.so.1, opened with dlopen: the backend never links it, so it
// builds and loads on a machine without OpenCL). Types come from the Khronos
// headers at OpenCL 1.2, the version every entry point below belongs to; the
// one newer entry point (clCreateProgramWithIL, 2.1) is optional.
#ifndef ACCEL_OPENCL_SYMBOLS_H_
#define ACCEL_OPENCL_SYMBOLS_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <string>

namespace accel::opencl {

// The soname of the ICD loader, the one library the backend opens.
inline constexpr const char* kIcdLoaderName = "libOpenCL.so.1";

// Every required entry point, as X(name without the "cl" prefix).
#define ACCEL_OPENCL_ENTRY_POINTS(X) \
  X(GetPlatformIDs)                  \
  X(GetPlatformInfo)                 \
  X(GetDeviceIDs)                    \
  X(GetDeviceInfo)                   \
  X(CreateContext)                   \
  X(ReleaseContext)                  \
  X(CreateCommandQueue)              \
  X(ReleaseCommandQueue)             \
  X(Flush)                           \
  X(Finish)                          \
  X(CreateBuffer)                    \
  X(CreateSubBuffer)                 \
  X(ReleaseMemObject)                \
  X(EnqueueReadBuffer)               \
  X(EnqueueWriteBuffer)              \
  X(EnqueueCopyBuffer)               \
  X(EnqueueFillBuffer)               \
  X(EnqueueMapBuffer)                \
  X(EnqueueUnmapMemObject)           \
  X(EnqueueMarkerWithWaitList)       \
  X(EnqueueBarrierWithWaitList)      \
  X(WaitForEvents)                   \
  X(GetEventInfo)                    \
  X(GetEventProfilingInfo)           \
  X(ReleaseEvent)                    \
  X(SetEventCallback)                \
  X(CreateProgramWithSource)         \
  X(CreateProgramWithBinary)         \
  X(BuildProgram)                    \
  X(GetProgramInfo)                  \
  X(GetProgramBuildInfo)             \
  X(ReleaseProgram)                  \
  X(CreateKernel)                    \
  X(GetKernelInfo)                   \
  X(GetKernelArgInfo)                \
  X(GetKernelWorkGroupInfo)          \
  X(SetKernelArg)                    \
  X(EnqueueNDRangeKernel)            \
  X(ReleaseKernel)                   \
  X(GetExtensionFunctionAddressForPlatform)

// The resolved table. Immutable once Load succeeded; shared by every thread of a context.
struct ClApi {
#define ACCEL_OPENCL_DECLARE_ENTRY_POINT(name) decltype(&::cl##name) name = nullptr;
  ACCEL_OPENCL_ENTRY_POINTS(ACCEL_OPENCL_DECLARE_ENTRY_POINT)
#undef ACCEL_OPENCL_DECLARE_ENTRY_POINT

  // OpenCL 2.1 (or cl_khr_il_program's clCreateProgramWithILKHR, same signature); NULL when absent.
  using CreateProgramWithILFn = cl_program(CL_API_CALL*)(cl_context, const void*, size_t, cl_int*);
  CreateProgramWithILFn CreateProgramWithIL = nullptr;
};

// Resolves every entry point of ACCEL_OPENCL_ENTRY_POINTS from `library` (a dlopen handle); on failure names the
// first one missing in `*missing` and returns false. The optional ones are looked up too.
bool ResolveEntryPoints(void* library, ClApi* api, std::string* missing);

// "CL_INVALID_VALUE (-30)", or "OpenCL error -1234" for a code the headers do not name.
std::string ClErrorName(cl_int code);

// Device-info keys newer than the 1.2 headers declare.
inline constexpr cl_device_info kClDeviceSpirVersions = 0x40E0;  // CL_DEVICE_SPIR_VERSIONS (cl_khr_spir)
inline constexpr cl_device_info kClDeviceIlVersion = 0x105B;     // CL_DEVICE_IL_VERSION (2.1), CL_DEVICE_IL_VERSION_KHR
inline constexpr cl_device_info kClDeviceUuid = 0x106A;          // CL_DEVICE_UUID_KHR (cl_khr_device_uuid)
inline constexpr cl_device_info kClDevicePciBusInfo = 0x410F;    // CL_DEVICE_PCI_BUS_INFO_KHR (cl_khr_pci_bus_info)
inline constexpr cl_device_info kClDevicePciBusIdNv = 0x4008;  // CL_DEVICE_PCI_BUS_ID_NV (cl_nv_device_attribute_query)
inline constexpr cl_device_info kClDevicePciSlotIdNv = 0x4009;
inline constexpr cl_device_info kClDevicePciDomainIdNv = 0x400A;
inline constexpr cl_device_info kClDeviceComputeCapabilityMajorNv = 0x4000;
inline constexpr cl_device_info kClDeviceComputeCapabilityMinorNv = 0x4001;
inline constexpr cl_device_info kClDeviceTopologyAmd =
    0x4037;  // CL_DEVICE_TOPOLOGY_AMD (cl_amd_device_attribute_query)
inline constexpr cl_kernel_arg_type_qualifier kClKernelArgTypePipe = 1 << 3;  // CL_KERNEL_ARG_TYPE_PIPE (2.0)
inline constexpr cl_int kClPlatformNotFoundKhr = -1001;                       // CL_PLATFORM_NOT_FOUND_KHR (cl_khr_icd)

}  // namespace accel::opencl

#endif  // ACCEL_OPENCL_SYMBOLS_H_
