// Names Accel prints and reads for its enums and bit sets (accel-info, the sim
// backend's topology descriptions), and small formatting and parsing helpers.
// Everything here is a pure function over constant tables: thread-safe.
#ifndef ACCEL_CORE_NAMES_NAMES_H_
#define ACCEL_CORE_NAMES_NAMES_H_

#include <accel/accel.h>

#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace accel::info {

// One named bit of a flag set.
struct FlagName {
  uint64_t bit;
  const char* name;
};

// ACCEL_NUMERIC_FORMAT_*: fp64, fp32, tf32, fp16, bf16, fp8-e4m3, fp8-e5m2,
// int8, int4, int64.
std::span<const FlagName> NumericFormatNames();
// ACCEL_KERNEL_FORMAT_*: native-host, spirv-vulkan, opencl-c, spir,
// spirv-opencl, ptx, cubin, hsaco.
std::span<const FlagName> KernelFormatNames();
// ACCEL_DEVICE_FEATURE_*: peer-access, unified-memory, ...
std::span<const FlagName> DeviceFeatureNames();
// ACCEL_DEVICE_FLAG_*: simulated, uuid-unique.
std::span<const FlagName> DeviceFlagNames();

// The table that names the bits of capability `key`'s value, or an empty span
// when the key is not a bit set this tool knows.
std::span<const FlagName> FlagTableFor(accel_device_info_key_t key);

// The names of the bits set in `bits`, lowest bit first; a bit the table does
// not name comes out as "bit<N>", so nothing set is ever hidden.
std::vector<std::string> FlagNames(std::span<const FlagName> table, uint64_t bits);

// "cpu", "gpu", "npu", "tpu", "fpga", or "unknown".
const char* KindName(uint32_t kind);

// "PIX", "FABRIC", "HOST_STAGED"...; nullptr for a value this version does not know. libaccel's
// accel_link_class_name answers from this table.
const char* LinkClassName(accel_link_class_t link_class);
// "clique", "node", "rack", "block", "slice", "zone"; nullptr for an unknown level (accel_domain_level_name).
const char* DomainLevelName(accel_domain_level_t level);

// "loaded", "skipped", "failed", or "unknown".
const char* LoaderStateName(accel_loader_state_t state);

// accel_runtime_event_kind_t (accel/runtime.h): "submitted", "placed", ..., "group_created", "actor_died";
// "unknown" for another value.
const char* RuntimeEventKindName(uint32_t kind);

// "1.0" for a packed ACCEL_MAKE_VERSION value.
std::string AbiString(uint32_t version);
// "1.0.0" for a packed ACCEL_MAKE_VERSION value.
std::string VersionString(uint32_t version);

// "23.4 GiB", "512 B": binary units, one decimal from KiB upward.
std::string HumanBytes(uint64_t bytes);

// The units ParseByteSize reads, for messages.
inline constexpr const char* kByteSizeUnits = "B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB";

// What ParseByteSize read. Plain value; `unit` views the parsed text.
struct ByteSize {
  enum class Outcome {
    kBytes,        // `bytes` holds the size
    kNotANumber,   // empty, signed (+ or -), or not a finite number where the size starts
    kUnknownUnit,  // a number, then a unit not in kByteSizeUnits (`value` and `unit` say which)
    kTooLarge,     // 2^64 bytes or more
  };
  Outcome outcome = Outcome::kNotANumber;
  uint64_t bytes = 0;     // when kBytes
  double value = 0;       // the number, but for kNotANumber
  std::string_view unit;  // the unit as written, without blanks, but for kNotANumber
};

// Reads a byte size: a number and an optional unit of kByteSizeUnits (powers
// of 1000, then of 1024; none means bytes), blanks (spaces, tabs) allowed
// around both: "40GiB", "1.5 TB", "4096". `format` is std::from_chars's:
// fixed, digits with an optional fraction; general, an exponent too ("1e9").
// Fractions of a byte are dropped. ACCEL_MEMORY_LIMIT and accel-plan's sizes.
ByteSize ParseByteSize(std::string_view text, std::chars_format format = std::chars_format::fixed);

// The canonical 8-4-4-4-12 lowercase hex form of a 16-byte UUID.
std::string UuidHex(const uint8_t (&uuid)[ACCEL_UUID_SIZE]);

// Whether capability `key` is a size in bytes (printed with HumanBytes too).
bool IsByteSize(accel_device_info_key_t key);

// A fixed-size character array of a descriptor as a string, up to its NUL
// (or its whole size when the sender left no NUL).
template <size_t N>
std::string FixedString(const char (&chars)[N]) {
  size_t length = 0;
  while (length < N && chars[length] != '\0') ++length;
  return std::string(chars, length);
}

// `items` joined by `separator`.
std::string Join(const std::vector<std::string>& items, const char* separator);

}  // namespace accel::info

#endif  // ACCEL_CORE_NAMES_NAMES_H_
