// libFuzzer target for the CUDA backend's PTX reflection (backends/cuda/ptx.h):
// PTX is a module source the application gives, so any text gives kernels or
// none: each argument a BUFFER (READ_WRITE, no size), a SCALAR, or one
// LOCAL_MEMORY argument last; the same text gives the same kernels. Nothing
// throws, crashes, leaks or reads out of bounds (ASan and UBSan).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ptx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto entries = accel::cuda::ParsePtxEntries(text);
  for (const auto& e : entries) {
    for (size_t i = 0; i < e.arguments.size(); ++i) {
      const auto& a = e.arguments[i];
      switch (a.kind) {
        case ACCEL_KERNEL_ARG_KIND_BUFFER:
          if (a.access != ACCEL_ACCESS_READ_WRITE || a.size != 0) __builtin_trap();
          break;
        case ACCEL_KERNEL_ARG_KIND_SCALAR:
          if (a.access != ACCEL_ACCESS_READ) __builtin_trap();
          break;
        case ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY:
          if (i + 1 != e.arguments.size() || a.name.empty()) __builtin_trap();  // one, last, named after the memory
          break;
        default: __builtin_trap();
      }
    }
  }
  // Deterministic: the same kernels and arguments again.
  const auto again = accel::cuda::ParsePtxEntries(text);
  if (again.size() != entries.size()) __builtin_trap();
  for (size_t k = 0; k < entries.size(); ++k) {
    if (again[k].name != entries[k].name || again[k].arguments.size() != entries[k].arguments.size()) __builtin_trap();
    for (size_t i = 0; i < entries[k].arguments.size(); ++i) {
      const auto& a = entries[k].arguments[i];
      const auto& b = again[k].arguments[i];
      if (a.kind != b.kind || a.size != b.size || a.name != b.name) __builtin_trap();
    }
  }
  return 0;
}
