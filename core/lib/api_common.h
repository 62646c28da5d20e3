// Helpers shared by the C entry points: exception fencing, handle and
// argument checks with messages that name the argument, and the struct
// header rules for input and output structs (docs/abi.md).
#ifndef ACCEL_CORE_API_COMMON_H_
#define ACCEL_CORE_API_COMMON_H_

#include <algorithm>
#include <cstring>
#include <new>

#include "handle_table.h"
#include "instance.h"
#include "objects.h"
#include "status.h"

namespace accel::core {

inline constexpr uint32_t kHeaderSize = sizeof(accel_struct_header_t);

// Runs `body` (returning Status); sets the last error on failure. No
// exception leaves it.
template <typename F>
accel_status_t Guarded(const char* function, F&& body) noexcept {
  try {
    Status s = body();
    if (!s.ok()) return SetLastError(function, s);
    return s.code();
  } catch (const HandlesExhausted& e) {
    return SetLastError(function, Status(ACCEL_ERROR_RESOURCE_EXHAUSTED, e.what()));
  } catch (const std::bad_alloc&) {
    return SetLastError(function, Status(ACCEL_ERROR_RESOURCE_EXHAUSTED, "out of host memory"));
  } catch (const std::exception& e) {
    return SetLastError(function, Error(ACCEL_ERROR_INTERNAL, "internal error: {}", e.what()));
  } catch (...) {
    return SetLastError(function, Status(ACCEL_ERROR_INTERNAL, "internal error: unknown exception"));
  }
}

// Guarded, for an entry point with a handle, pointer or address output: on
// failure sets `*output` (when `output` is not NULL) to NULL or 0, whatever
// failed, so a failed call never leaves a value that looks live
// (docs/errors.md, "Outputs on failure").
template <typename T, typename F>
accel_status_t GuardedOutput(const char* function, T* output, F&& body) noexcept {
  const accel_status_t status = Guarded(function, std::forward<F>(body));
  if (status < 0 && output != nullptr) *output = T{};
  return status;
}

// Checks an output struct's header: non-NULL, its stype, a size that holds
// at least the header.
template <typename T>
Status CheckOutStruct(const T* out, uint32_t stype, const char* argument) {
  if (out == nullptr) return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' is NULL", argument);
  if (out->stype != stype) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' has stype {}, expected {}", argument, out->stype, stype);
  }
  if (out->struct_size < kHeaderSize) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' has struct_size {}, smaller than the {}-byte header", argument,
                 out->struct_size, kHeaderSize);
  }
  return Status::Ok();
}

// Copies `value` into `out` past the header, up to the caller's struct_size
// (an older, smaller struct gets its known prefix).
template <typename T>
void FillOutStruct(T* out, const T& value) {
  size_t n = std::min<size_t>(out->struct_size, sizeof(T));
  if (n > kHeaderSize) {
    std::memcpy(reinterpret_cast<char*>(out) + kHeaderSize, reinterpret_cast<const char*>(&value) + kHeaderSize,
                n - kHeaderSize);
  }
}

// Reads an optional input struct into `*value` (zero defaults for fields an
// older caller did not have). NULL leaves `*value` as it is. `argument` is
// anything fmt formats, formatted only into a failure's message.
template <typename T, typename Name>
Status ReadInStruct(const T* in, uint32_t stype, const Name& argument, T* value) {
  if (in == nullptr) return Status::Ok();
  if (in->stype != stype) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' has stype {}, expected {}", argument, in->stype, stype);
  }
  if (in->struct_size < kHeaderSize) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' has struct_size {}, smaller than the {}-byte header", argument,
                 in->struct_size, kHeaderSize);
  }
  if (in->struct_size >= sizeof(T)) {
    // A caller built against this header or a newer one (the common case): one copy of a known size, inlined.
    std::memcpy(static_cast<void*>(value), in, sizeof(T));
  } else {
    std::memset(static_cast<void*>(value), 0, sizeof(T));
    std::memcpy(static_cast<void*>(value), in, in->struct_size);
  }
  value->struct_size = sizeof(T);
  return Status::Ok();
}

// Element `index` of an array of headered structs. The stride is the first
// element's struct_size, which every element must share (docs/abi.md).
template <typename T>
Status ArrayElement(const T* array, uint32_t count, uint32_t index, const char* argument, const T** out) {
  (void)count;
  const uint32_t stride = array[0].struct_size;
  if (stride < kHeaderSize) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}[0]' has struct_size {}, smaller than the {}-byte header", argument,
                 stride, kHeaderSize);
  }
  const T* element = reinterpret_cast<const T*>(reinterpret_cast<const char*>(array) + size_t{index} * stride);
  if (element->struct_size != stride) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT,
                 "'{}[{}]' has struct_size {}, but '{}[0]' has {}: the elements of one array share one size", argument,
                 index, element->struct_size, argument, stride);
  }
  *out = element;
  return Status::Ok();
}

// "native-host, spirv-vulkan"; "none" for an empty set.
std::string FormatList(accel_kernel_formats_t formats);

// CheckWritable's failure: `argument` names a buffer imported read-only.
Status ReadOnlyError(const char* argument);

// INVALID_ARGUMENT when `buffer` was imported read-only. Inline: the check
// that passes costs a load.
inline Status CheckWritable(const Buffer& buffer, const char* argument) {
  if (buffer.read_only) return ReadOnlyError(argument);
  return Status::Ok();
}

// Writes handles to an enumeration output (docs: the enumeration pattern).
template <typename H, typename List>
Status FillHandles(const List& list, uint32_t* inout_count, H* out_array, const char* count_argument) {
  if (inout_count == nullptr) return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' is NULL", count_argument);
  auto total = static_cast<uint32_t>(list.size());
  if (out_array == nullptr) {
    *inout_count = total;
    return Status::Ok();
  }
  if (*inout_count < total) {
    uint32_t given = *inout_count;
    *inout_count = total;
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' is {}, smaller than the {} entries to return", count_argument,
                 given, total);
  }
  for (uint32_t i = 0; i < total; ++i) out_array[i] = ToHandle<H>(list[i]->handle());
  *inout_count = total;
  return Status::Ok();
}

// "90 GiB", "1.5 MiB", "512 bytes": sizes in messages.
std::string FormatBytes(uint64_t bytes);

// CheckRange's failure: [offset, offset+size) is not within `buffer`.
Status RangeError(const Buffer& buffer, uint64_t offset, uint64_t size, const char* buffer_argument,
                  const char* offset_argument);

// INVALID_ARGUMENT unless [offset, offset+size) lies within `buffer`. Inline:
// the check that passes costs two comparisons.
inline Status CheckRange(const Buffer& buffer, uint64_t offset, uint64_t size, const char* buffer_argument,
                         const char* offset_argument) {
  if (offset > buffer.size || size > buffer.size - offset) {
    return RangeError(buffer, offset, size, buffer_argument, offset_argument);
  }
  return Status::Ok();
}

// The owning instance of a child object's device.
inline Instance& InstanceOf(const Device& device) { return *device.instance; }

// Prefixes a failure with the device label ("device 0 (host: ...): ...").
inline Status OnDevice(const Device& device, Status status) {
  if (status.ok()) return status;
  return Status(status.code(), device.label + ": " + status.message());
}

}  // namespace accel::core

// Declares `var`, the object `handle` names, or returns the status that says
// why there is none (a Ref: see handle_table.h). The common case is one Pin and no Expected. `handle`
// is evaluated again when the lookup fails: pass a plain name.
#define ACCEL_RESOLVE(var, Type, handle)                                                           \
  ::accel::core::Ref<Type> var = ::accel::core::Pin<Type>(handle);                                 \
  if (var == nullptr) {                                                                            \
    ::accel::core::Status var##_status = ::accel::core::ResolveAgain<Type>(handle, #handle, &var); \
    if (!var##_status.ok()) return var##_status;                                                   \
  }                                                                                                \
  static_assert(true)

#define ACCEL_REQUIRE(condition, code, ...) \
  if (!(condition)) return ::accel::core::Error((code), __VA_ARGS__)

#define ACCEL_NOT_NULL(pointer) \
  ACCEL_REQUIRE((pointer) != nullptr, ACCEL_ERROR_INVALID_ARGUMENT, "'{}' is NULL", #pointer)

#define ACCEL_TRY(expression)                \
  do {                                       \
    ::accel::core::Status _s = (expression); \
    if (!_s.ok()) return _s;                 \
  } while (0)

#endif  // ACCEL_CORE_API_COMMON_H_
