// libFuzzer target for capability selectors (core/selector/selector.h): any
// text either parses, or is rejected with a position inside the text (or at
// its end) and a message saying what was expected there. A parsed selector
// evaluates any device without crashing, and a device it does not match gets
// a non-empty explanation (an empty one exactly when it matches).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "selector.h"

namespace {

using accel::selector::MapAttributes;
using accel::selector::NameSet;

MapAttributes Gpu() {
  MapAttributes a;
  a.Set("kind", std::string("gpu"));
  a.Set("name", std::string("NVIDIA H100 80GB HBM3"));
  a.Set("vendor", std::string("NVIDIA"));
  a.Set("sku", std::string("nvidia-h100-sxm5-80gb"));
  a.Set("architecture", std::string("hopper"));
  a.Set("vendor_id", uint64_t{0x10de});
  a.Set("memory_total", uint64_t{85899345920});
  a.Set("memory_free", uint64_t{80000000000});
  a.Set("compute_units", uint64_t{132});
  a.Set("clock_mhz", uint64_t{1980});
  a.Set("numa_node", int64_t{1});
  a.Set("simulated", true);
  a.Set("physical_device_id", std::string("gpu-3f2a"));
  a.Set("backend_name", std::string("sim"));
  a.Set("kernel_formats", NameSet{{"native-host"}});
  a.Set("modeled_kernel_formats", NameSet{{"ptx", "cubin"}});
  a.Set("numeric_formats", NameSet{{"fp64", "fp32", "tf32", "fp16", "bf16", "fp8-e4m3", "fp8-e5m2", "int8"}});
  a.Set("features", NameSet{{"peer-access", "timeline-events", "atomics-64"}});
  a.Set("flags", NameSet{{"simulated"}});
  return a;
}

MapAttributes Cpu() {
  MapAttributes a;
  a.Set("kind", std::string("cpu"));
  a.Set("vendor", std::string("AMD"));
  a.Set("memory_total", uint64_t{137438953472});
  a.Set("compute_units", uint64_t{16});
  a.Set("numa_node", int64_t{-1});
  a.Set("simulated", false);
  a.Set("kernel_formats", NameSet{{"native-host", "opencl-c", "spirv-vulkan"}});
  a.Set("flags", NameSet{{}});
  return a;
}

void CheckEvaluation(const accel::selector::Selector& selector, const MapAttributes& device) {
  const bool matches = selector.Matches(device);
  const std::string why = selector.Explain(device);
  if (matches != why.empty()) __builtin_trap();  // "" exactly when the device matches
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto result = accel::selector::Parse(text);
  if (!result) {
    const auto& e = result.error();
    if (e.position > text.size()) __builtin_trap();              // inside the text, or at its end
    if (e.message.empty() || e.found.empty()) __builtin_trap();  // says what it found there
    if (e.ToString().rfind("column " + std::to_string(e.column()) + ": ", 0) != 0) __builtin_trap();
    // Parsing is a pure function: the same text fails at the same place.
    const auto again = accel::selector::Parse(text);
    if (again || again.error().position != e.position || again.error().message != e.message) __builtin_trap();
    return 0;
  }
  if (result->text() != text) __builtin_trap();
  static const MapAttributes gpu = Gpu();
  static const MapAttributes cpu = Cpu();
  static const MapAttributes nothing;
  CheckEvaluation(result.value(), gpu);
  CheckEvaluation(result.value(), cpu);
  CheckEvaluation(result.value(), nothing);
  return 0;
}
