// Names for Accel's enums and bit sets, and formatting helpers.
#include "names.h"

#include <accel/runtime.h>

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>

namespace accel::info {
namespace {

constexpr FlagName kNumericFormats[] = {
    {ACCEL_NUMERIC_FORMAT_FP64, "fp64"},         {ACCEL_NUMERIC_FORMAT_FP32, "fp32"},
    {ACCEL_NUMERIC_FORMAT_TF32, "tf32"},         {ACCEL_NUMERIC_FORMAT_FP16, "fp16"},
    {ACCEL_NUMERIC_FORMAT_BF16, "bf16"},         {ACCEL_NUMERIC_FORMAT_FP8_E4M3, "fp8-e4m3"},
    {ACCEL_NUMERIC_FORMAT_FP8_E5M2, "fp8-e5m2"}, {ACCEL_NUMERIC_FORMAT_INT8, "int8"},
    {ACCEL_NUMERIC_FORMAT_INT4, "int4"},         {ACCEL_NUMERIC_FORMAT_INT64, "int64"},
};

constexpr FlagName kKernelFormats[] = {
    {ACCEL_KERNEL_FORMAT_NATIVE_HOST, "native-host"},
    {ACCEL_KERNEL_FORMAT_SPIRV_VULKAN, "spirv-vulkan"},
    {ACCEL_KERNEL_FORMAT_OPENCL_C, "opencl-c"},
    {ACCEL_KERNEL_FORMAT_SPIR, "spir"},
    {ACCEL_KERNEL_FORMAT_SPIRV_OPENCL, "spirv-opencl"},
    {ACCEL_KERNEL_FORMAT_PTX, "ptx"},
    {ACCEL_KERNEL_FORMAT_CUBIN, "cubin"},
    {ACCEL_KERNEL_FORMAT_HSACO, "hsaco"},
};

constexpr FlagName kDeviceFeatures[] = {
    {ACCEL_DEVICE_FEATURE_PEER_ACCESS, "peer-access"},
    {ACCEL_DEVICE_FEATURE_UNIFIED_MEMORY, "unified-memory"},
    {ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY, "host-mapped-memory"},
    {ACCEL_DEVICE_FEATURE_TIMELINE_EVENTS, "timeline-events"},
    {ACCEL_DEVICE_FEATURE_ATOMICS_64, "atomics-64"},
    {ACCEL_DEVICE_FEATURE_SUBGROUPS, "subgroups"},
    {ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES, "device-addresses"},
    {ACCEL_DEVICE_FEATURE_EVENT_TIMING, "event-timing"},
};

constexpr FlagName kDeviceFlags[] = {
    {ACCEL_DEVICE_FLAG_SIMULATED, "simulated"},
    {ACCEL_DEVICE_FLAG_UUID_UNIQUE, "uuid-unique"},
};

}  // namespace

std::span<const FlagName> NumericFormatNames() { return kNumericFormats; }
std::span<const FlagName> KernelFormatNames() { return kKernelFormats; }
std::span<const FlagName> DeviceFeatureNames() { return kDeviceFeatures; }
std::span<const FlagName> DeviceFlagNames() { return kDeviceFlags; }

std::span<const FlagName> FlagTableFor(accel_device_info_key_t key) {
  switch (key) {
    case ACCEL_DEVICE_INFO_NUMERIC_FORMATS: return kNumericFormats;
    case ACCEL_DEVICE_INFO_KERNEL_FORMATS:
    case ACCEL_DEVICE_INFO_MODELED_KERNEL_FORMATS: return kKernelFormats;
    case ACCEL_DEVICE_INFO_FEATURES: return kDeviceFeatures;
    case ACCEL_DEVICE_INFO_FLAGS: return kDeviceFlags;
    default: return {};
  }
}

std::vector<std::string> FlagNames(std::span<const FlagName> table, uint64_t bits) {
  std::vector<std::string> names;
  while (bits != 0) {
    const uint64_t bit = bits & (~bits + 1);  // lowest set bit
    bits &= ~bit;
    std::string name = fmt::format("bit{}", std::countr_zero(bit));
    for (const FlagName& f : table) {
      if (f.bit == bit) {
        name = f.name;
        break;
      }
    }
    names.push_back(std::move(name));
  }
  return names;
}

const char* KindName(uint32_t kind) {
  switch (kind) {
    case ACCEL_DEVICE_KIND_CPU: return "cpu";
    case ACCEL_DEVICE_KIND_GPU: return "gpu";
    case ACCEL_DEVICE_KIND_NPU: return "npu";
    case ACCEL_DEVICE_KIND_TPU: return "tpu";
    case ACCEL_DEVICE_KIND_FPGA: return "fpga";
    default: return "unknown";
  }
}

const char* LinkClassName(accel_link_class_t link_class) {
  switch (link_class) {
    case ACCEL_LINK_CLASS_UNKNOWN: return "UNKNOWN";
    case ACCEL_LINK_CLASS_SELF: return "SELF";
    case ACCEL_LINK_CLASS_FABRIC: return "FABRIC";
    case ACCEL_LINK_CLASS_PIX: return "PIX";
    case ACCEL_LINK_CLASS_PXB: return "PXB";
    case ACCEL_LINK_CLASS_PHB: return "PHB";
    case ACCEL_LINK_CLASS_NODE: return "NODE";
    case ACCEL_LINK_CLASS_SYS: return "SYS";
    case ACCEL_LINK_CLASS_HOST_STAGED: return "HOST_STAGED";
    case ACCEL_LINK_CLASS_NONE: return "NONE";
    default: return nullptr;
  }
}

const char* DomainLevelName(accel_domain_level_t level) {
  switch (level) {
    case ACCEL_DOMAIN_LEVEL_CLIQUE: return "clique";
    case ACCEL_DOMAIN_LEVEL_NODE: return "node";
    case ACCEL_DOMAIN_LEVEL_RACK: return "rack";
    case ACCEL_DOMAIN_LEVEL_BLOCK: return "block";
    case ACCEL_DOMAIN_LEVEL_SLICE: return "slice";
    case ACCEL_DOMAIN_LEVEL_ZONE: return "zone";
    default: return nullptr;
  }
}

const char* LoaderStateName(accel_loader_state_t state) {
  switch (state) {
    case ACCEL_LOADER_STATE_LOADED: return "loaded";
    case ACCEL_LOADER_STATE_SKIPPED: return "skipped";
    case ACCEL_LOADER_STATE_FAILED: return "failed";
    default: return "unknown";
  }
}

const char* RuntimeEventKindName(uint32_t kind) {
  switch (kind) {
    case ACCEL_RUNTIME_EVENT_SUBMITTED: return "submitted";
    case ACCEL_RUNTIME_EVENT_PLACED: return "placed";
    case ACCEL_RUNTIME_EVENT_STARTED: return "started";
    case ACCEL_RUNTIME_EVENT_FINISHED: return "finished";
    case ACCEL_RUNTIME_EVENT_FAILED: return "failed";
    case ACCEL_RUNTIME_EVENT_CANCELLED: return "cancelled";
    case ACCEL_RUNTIME_EVENT_RETRIED: return "retried";
    case ACCEL_RUNTIME_EVENT_PREEMPTED: return "preempted";
    case ACCEL_RUNTIME_EVENT_DEVICE_LOST: return "device_lost";
    case ACCEL_RUNTIME_EVENT_GROUP_CREATED: return "group_created";
    case ACCEL_RUNTIME_EVENT_GROUP_REFUSED: return "group_refused";
    case ACCEL_RUNTIME_EVENT_ACTOR_CREATED: return "actor_created";
    case ACCEL_RUNTIME_EVENT_ACTOR_RESTARTED: return "actor_restarted";
    case ACCEL_RUNTIME_EVENT_ACTOR_DIED: return "actor_died";
    default: return "unknown";
  }
}

std::string AbiString(uint32_t version) {
  return fmt::format("{}.{}", ACCEL_VERSION_MAJOR(version), ACCEL_VERSION_MINOR(version));
}

std::string VersionString(uint32_t version) {
  return fmt::format("{}.{}.{}", ACCEL_VERSION_MAJOR(version), ACCEL_VERSION_MINOR(version),
                     ACCEL_VERSION_PATCH(version));
}

std::string HumanBytes(uint64_t bytes) {
  constexpr std::array<const char*, 7> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

namespace {

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

struct ByteUnit {
  std::string_view name;
  double scale;
};

// kByteSizeUnits, and none.
constexpr ByteUnit kByteUnits[] = {{"", 1},
                                   {"B", 1},
                                   {"kB", 1e3},
                                   {"KB", 1e3},
                                   {"MB", 1e6},
                                   {"GB", 1e9},
                                   {"TB", 1e12},
                                   {"KiB", 1024.0},
                                   {"MiB", 1048576.0},
                                   {"GiB", 1073741824.0},
                                   {"TiB", 1099511627776.0}};

}  // namespace

ByteSize ParseByteSize(std::string_view text, std::chars_format format) {
  ByteSize out;
  const std::string_view t = TrimBlanks(text);
  if (t.empty() || t.front() == '-' || t.front() == '+') return out;
  double value = 0;
  const auto [end, error] = std::from_chars(t.data(), t.data() + t.size(), value, format);
  if (error != std::errc() || !std::isfinite(value)) return out;
  out.value = value;
  out.unit = TrimBlanks(std::string_view(end, static_cast<size_t>(t.data() + t.size() - end)));
  out.outcome = ByteSize::Outcome::kUnknownUnit;
  const std::string_view number(t.data(), static_cast<size_t>(end - t.data()));
  for (const ByteUnit& unit : kByteUnits) {
    if (unit.name != out.unit) continue;
    if (number.find_first_not_of("0123456789") == std::string_view::npos) {
      // A whole number is exact: a double holds integers exactly only up to 2^53 (found by the plan_input fuzzer:
      // "18446744073709440737" read as 18446744073709441024).
      uint64_t whole = 0;
      const auto parsed = std::from_chars(number.data(), number.data() + number.size(), whole);
      const bool too_large =
          parsed.ec != std::errc() || __builtin_mul_overflow(whole, static_cast<uint64_t>(unit.scale), &out.bytes);
      out.outcome = too_large ? ByteSize::Outcome::kTooLarge : ByteSize::Outcome::kBytes;
      if (too_large) out.bytes = 0;
      break;
    }
    const double bytes = std::floor(value * unit.scale);
    if (bytes >= 18446744073709549568.0) {
      out.outcome = ByteSize::Outcome::kTooLarge;
    } else {
      out.outcome = ByteSize::Outcome::kBytes;
      out.bytes = static_cast<uint64_t>(bytes);
    }
    break;
  }
  return out;
}

std::string UuidHex(const uint8_t (&uuid)[ACCEL_UUID_SIZE]) {
  std::string out;
  for (size_t i = 0; i < ACCEL_UUID_SIZE; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out += fmt::format("{:02x}", uuid[i]);
  }
  return out;
}

bool IsByteSize(accel_device_info_key_t key) {
  switch (key) {
    case ACCEL_DEVICE_INFO_MEMORY_TOTAL:
    case ACCEL_DEVICE_INFO_MEMORY_FREE:
    case ACCEL_DEVICE_INFO_MAX_ALLOCATION:
    case ACCEL_DEVICE_INFO_MAX_BUFFER_RANGE:
    case ACCEL_DEVICE_INFO_LOCAL_MEMORY_SIZE:
    case ACCEL_DEVICE_INFO_MAX_ARGUMENT_SIZE: return true;
    default: return false;
  }
}

std::string Join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out += separator;
    out += items[i];
  }
  return out;
}

}  // namespace accel::info
