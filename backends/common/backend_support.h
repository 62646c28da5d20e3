// What the in-tree backends (host and its engine, sim, opencl, vulkan, cuda, hip, level_zero) share,
// one concept a header:
//   prefix.h     struct_size prefix handling: ACCEL_BACKEND_HAS_FIELD, ReadPrefix, WritePrefix
//   services.h   the core's host services, the guard that keeps exceptions from crossing the C ABI, status names
//   handles.h    Wrap / Unwrap between a backend's objects and the opaque accel_bk_* handles
//   device_list.h  the body of context_get_devices over a vector of devices (CUDA, HIP, Level Zero)
//   descriptor_text.h  CopyString into a descriptor's fixed fields, NormaliseSku
//   negotiate.h  the body of accel_backend_get_api
//   ring.h       Ring, the FIFO of a stream's operations that allocates nothing once grown
//   fill.h       FillPattern, a host range filled with a 1, 2 or 4 byte pattern (host, Vulkan inline fills)
//   recorded_events.h  deadlines, copy-statistics sums, and the event slots of backends whose events point at shared
//                records (OpenCL, Vulkan)
//   gpu_stream.h streams, events, records and their slots over a traits struct of vendor calls (CUDA, HIP, Level
//                Zero); not included here: each of those backends includes it
//   gpu_storage.h  buffer storage, maps and the buffer slots over the same traits; not included here
//   gpu_kernels.h  kernel slots and launch argument packing of those backends; not included here
//   gpu_api.h    the function-table slots those backends fill with the shared code as it is; not included here
// Namespace accel::backend; the library is accel_backend_support (static, hidden visibility). Messages name the
// backend, which each backend passes in.
// The template backend (tools/backend-kit/template) keeps its own copies on purpose: it is the copyable minimal
// driver that builds out of tree against the installed kit only.
#ifndef ACCEL_BACKENDS_COMMON_BACKEND_SUPPORT_H_
#define ACCEL_BACKENDS_COMMON_BACKEND_SUPPORT_H_

#include "common/descriptor_text.h"
#include "common/device_list.h"
#include "common/fill.h"
#include "common/handles.h"
#include "common/negotiate.h"
#include "common/prefix.h"
#include "common/recorded_events.h"
#include "common/ring.h"
#include "common/services.h"

#endif  // ACCEL_BACKENDS_COMMON_BACKEND_SUPPORT_H_
