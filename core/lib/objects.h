// Buffers, streams and events: the per-device objects an application
// creates. Each wraps one backend object and releases it exactly once.
#ifndef ACCEL_CORE_OBJECTS_H_
#define ACCEL_CORE_OBJECTS_H_

#include <atomic>
#include <memory>
#include <mutex>

#include "device.h"

namespace accel::core {

// A device buffer. Thread-safe: the mapping state is under `mutex`.
class Buffer : public Object {
 public:
  static constexpr HandleType kHandleType = HandleType::kBuffer;
  ~Buffer() override { Release(); }

  // Frees the backend buffer (the backend defers it past queued work).
  void Release() {
    if (!released.exchange(true) && bk != nullptr && device->backend->api().buffer_destroy != nullptr) {
      device->backend->api().buffer_destroy(bk);
    }
  }

  std::shared_ptr<Device> device;
  accel_bk_buffer_t bk = nullptr;
  uint64_t size = 0;
  accel_memory_kind_t memory_kind = ACCEL_MEMORY_KIND_DEVICE;
  std::mutex mutex;
  bool mapped = false;
  std::atomic<bool> released{false};
};

// An in-order stream. Thread-safe: the backend serialises enqueues.
class Stream : public Object {
 public:
  static constexpr HandleType kHandleType = HandleType::kStream;
  ~Stream() override { Release(); }
  void Release() {
    if (!released.exchange(true) && bk != nullptr && device->backend->api().stream_destroy != nullptr) {
      device->backend->api().stream_destroy(bk);
    }
  }

  std::shared_ptr<Device> device;
  accel_bk_stream_t bk = nullptr;
  std::atomic<bool> released{false};
};

// A completion marker recorded on streams. Thread-safe.
class Event : public Object {
 public:
  static constexpr HandleType kHandleType = HandleType::kEvent;
  ~Event() override { Release(); }
  void Release() {
    if (!released.exchange(true) && bk != nullptr && device->backend->api().event_destroy != nullptr) {
      device->backend->api().event_destroy(bk);
    }
  }

  std::shared_ptr<Device> device;
  accel_bk_event_t bk = nullptr;
  uint64_t flags = 0;
  std::atomic<bool> released{false};
};

}  // namespace accel::core

#endif  // ACCEL_CORE_OBJECTS_H_
