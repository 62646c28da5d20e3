// Struct-size prefix handling (docs/abi.md): what a backend may read of a peer's struct and write into it, whatever
// the peer's version. Part of accel_backend_support (backend_support.h).
#ifndef ACCEL_BACKENDS_COMMON_PREFIX_H_
#define ACCEL_BACKENDS_COMMON_PREFIX_H_

#include <accel_backend.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace accel::backend {

// Whether a struct whose struct_size is `struct_size` holds the member at [offset, offset + size).
constexpr bool Covers(uint32_t struct_size, size_t offset, size_t size) { return offset + size <= struct_size; }

// Whether `*pointer`, a struct of type `type` from a peer of any version, holds `member`: an older peer's struct is
// smaller (read only the fields it has), a newer peer's larger (ignore the tail).
#define ACCEL_BACKEND_HAS_FIELD(pointer, type, member)                      \
  (::accel::backend::Covers((pointer)->struct_size, offsetof(type, member), \
                            sizeof(static_cast<type*>(nullptr)->member)))

// A peer's struct of type T, read into a zeroed T as far as its `struct_size` reaches (a smaller struct from an older
// peer leaves the newer fields 0; a larger one from a newer peer has its unknown tail ignored). `source` holds at
// least `struct_size` bytes; it need not be aligned.
template <typename T>
T ReadPrefix(const void* source, uint32_t struct_size) {
  T value{};
  std::memcpy(&value, source, struct_size < sizeof(T) ? struct_size : sizeof(T));
  return value;
}

// Copies the bytes of `from` after the struct header into `to`, up to `end` and never past `to_struct_size` (an
// older peer's output struct gets its known prefix only). The header of `to` stays as the caller set it.
inline void WritePrefix(const void* from, void* to, uint32_t to_struct_size, size_t end) {
  constexpr size_t kHeader = sizeof(accel_struct_header_t);
  if (to_struct_size < end) end = to_struct_size;
  if (end <= kHeader) return;
  std::memcpy(static_cast<char*>(to) + kHeader, static_cast<const char*>(from) + kHeader, end - kHeader);
}

// Copies what follows the struct header of `from` into `*to`, never past to->struct_size.
template <typename T>
void WritePrefix(const T& from, T* to) {
  WritePrefix(&from, to, to->struct_size, sizeof(T));
}

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_PREFIX_H_
