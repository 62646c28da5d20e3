// Modules and kernels (docs/kernels.md): the kernel formats the device
// executes. None yet, so kernel_formats is 0 and every module slot of the table
// stays NULL; the core then builds no module for this device.
//
// Adding a format (README.md, "Adding a kernel format"): return its
// ACCEL_KERNEL_FORMAT_* bit here, implement module_create, module_destroy,
// module_enumerate_kernels, module_get_kernel, kernel_destroy,
// kernel_get_properties, kernel_get_argument_info and stream_launch_kernel in
// this file (a launch is one more stream Operation, see stream.cc), and fill
// the numeric formats, local memory and launch limits in device.cc.
#include "symbols.h"

namespace accel::template_backend {

accel_kernel_formats_t KernelFormats() { return 0; }

}  // namespace accel::template_backend
