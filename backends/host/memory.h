// Host buffers: an aligned host allocation shared by the buffer handle and by
// every queued operation that uses it, which is what makes freeing stream-ordered.
#ifndef ACCEL_BACKENDS_HOST_MEMORY_H_
#define ACCEL_BACKENDS_HOST_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>

#include "host_backend.h"

namespace accel::host {

// Every buffer starts on a 64-byte boundary (a cache line; enough for AVX-512 loads).
inline constexpr size_t kBufferAlignment = 64;

// The bytes behind one buffer, released when the last reference drops: the handle's or a queued operation's.
// Either an allocation of its own, or imported memory the caller owns, whose release callback runs exactly once, when
// the storage is destroyed. The object is immutable; access to the bytes is ordered by the streams and mappings that
// use them.
class Storage {
 public:
  struct FreeDeleter {
    void operator()(std::byte* pointer) const noexcept { std::free(pointer); }
  };
  using Bytes = std::unique_ptr<std::byte[], FreeDeleter>;

  // Allocates `size` bytes aligned to kBufferAlignment; nullptr when host memory runs out. Throws std::bad_alloc
  // only when the bookkeeping itself cannot be allocated.
  static std::shared_ptr<Storage> Allocate(uint64_t size);

  // Wraps `size` bytes at `data`, which stay the caller's; `release(release_user_data)` runs when the storage is
  // destroyed (when `release` is not NULL). Throws std::bad_alloc when the bookkeeping cannot be allocated, and then
  // never calls `release`.
  static std::shared_ptr<Storage> Import(std::byte* data, uint64_t size, accel_release_callback_t release,
                                         void* release_user_data);

  Storage(Bytes bytes, uint64_t size) : bytes_(std::move(bytes)), data_(bytes_.get()), size_(size) {}
  Storage(std::byte* data, uint64_t size, accel_release_callback_t release, void* release_user_data)
      : data_(data), size_(size), release_(release), release_user_data_(release_user_data) {}
  ~Storage() {
    if (release_ != nullptr) release_(release_user_data_);
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::byte* data() const { return data_; }
  uint64_t size() const { return size_; }
  bool imported() const { return bytes_ == nullptr; }

 private:
  Bytes bytes_;  // the own allocation; NULL for imported memory
  std::byte* data_;
  uint64_t size_;
  accel_release_callback_t release_ = nullptr;
  void* release_user_data_ = nullptr;
};

// A buffer handle: its device, its memory kind (HOST_PINNED for imported host memory) and one reference to its
// storage.
// Immutable after creation; destroying it while queued work still uses the storage is safe, because each queued
// operation holds its own reference.
struct Buffer {
  Device* device = nullptr;
  accel_memory_kind_t memory_kind = ACCEL_MEMORY_KIND_DEVICE;
  std::shared_ptr<Storage> storage;
};

}  // namespace accel::host

#endif  // ACCEL_BACKENDS_HOST_MEMORY_H_
