// libFuzzer target for SPIR-V modules, the spirv-vulkan kernels of the
// conformance corpus (backends/vulkan/reflect.cc): any bytes either reflect
// into kernels or are rejected with a message; nothing crashes, leaks or
// reads out of bounds in Accel's word scan or in SPIRV-Cross under it. A
// reflected module has at least one kernel, each with a unique non-empty
// name, and every buffer argument at a binding below its buffer count.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "symbols.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint32_t> words(size / 4);
  if (!words.empty()) std::memcpy(words.data(), data, words.size() * 4);
  accel::vulkan::ReflectedModule module;
  std::string error;
  if (!accel::vulkan::ReflectSpirv(words.data(), words.size(), &module, &error)) {
    if (error.empty()) __builtin_trap();  // every rejection says why
    return 0;
  }
  if (module.kernels.empty()) __builtin_trap();
  std::set<std::string> names;
  for (const auto& kernel : module.kernels) {
    if (kernel.name.empty() || !names.insert(kernel.name).second) __builtin_trap();
    for (const auto& argument : kernel.arguments) {
      if (argument.kind == ACCEL_KERNEL_ARG_KIND_BUFFER && argument.binding >= kernel.storage_buffer_count) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
