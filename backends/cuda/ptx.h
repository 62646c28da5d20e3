// The CUDA backend's PTX reflection (pure functions, unit-tested in tests/cuda and fuzzed in tests/fuzz): the kernels
// of a PTX module and their arguments, read from its text. PTX comes from the application (a module's source), so
// every input is outside input: it gives entries or none, never a crash.
#ifndef ACCEL_BACKENDS_CUDA_PTX_H_
#define ACCEL_BACKENDS_CUDA_PTX_H_

#include <accel/accel.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace accel::cuda {

// One kernel argument as the backend declares it (docs/kernels.md), and the kernel parameter it fills.
struct ArgumentDeclaration {
  accel_kernel_arg_kind_t kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  accel_access_t access = ACCEL_ACCESS_READ;
  uint32_t size = 0;  // SCALAR: bytes of the parameter
  std::string name;
};

// A kernel of a PTX module: its `.entry` name and its arguments. A `.u64` parameter is a BUFFER when the kernel
// uses it as an address (cvta.to.global, or an address operand) or never loads it, else an 8-byte SCALAR; every
// other parameter is a SCALAR of its size; a kernel that uses the module's dynamic shared memory (`.extern
// .shared`) gets one LOCAL_MEMORY argument last, which has no parameter (the launch's dynamic shared memory).
struct PtxEntry {
  std::string name;
  std::vector<ArgumentDeclaration> arguments;
};
std::vector<PtxEntry> ParsePtxEntries(std::string_view ptx);

}  // namespace accel::cuda

#endif  // ACCEL_BACKENDS_CUDA_PTX_H_
