// Host callbacks as the core hands them to backends: a trampoline that
// records, per thread, which stream's callback is running, so that calls a
// callback must not make on its own stream (destroying it, destroying its
// instance) are refused instead of deadlocking or leaking (docs/streams.md).
#ifndef ACCEL_CORE_HOST_CALLBACK_H_
#define ACCEL_CORE_HOST_CALLBACK_H_

#include <memory>

#include "accel/accel.h"

namespace accel::core {

class Instance;
class Stream;

// One enqueued callback: the application's function and the stream it runs
// on. Owned by the backend from a successful enqueue until it runs (exactly
// once); the trampoline frees it.
struct HostCallback {
  accel_host_callback_t callback = nullptr;
  void* user_data = nullptr;
  const Stream* stream = nullptr;
  const Instance* instance = nullptr;
  const HostCallback* outer = nullptr;  // a callback running further out on this thread
};

// The function the backend calls with a HostCallback* as user data: runs the
// application's callback with the record marked as running on this thread.
accel_status_t RunHostCallback(void* record, accel_status_t status);

// True when a host callback of `stream` is running on the calling thread.
bool InCallbackOf(const Stream* stream);

// True when a host callback of any stream of `instance` is running on the
// calling thread.
bool InCallbackOf(const Instance* instance);

}  // namespace accel::core

#endif  // ACCEL_CORE_HOST_CALLBACK_H_
