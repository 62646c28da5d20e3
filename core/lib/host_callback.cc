#include "host_callback.h"

#include <system_error>
#include <thread>

#include "backend.h"
#include "objects.h"

namespace accel::core {
namespace {

// The innermost callback running on this thread; each record links to the
// one further out (a backend may run a callback inline, inside another).
thread_local const HostCallback* t_running = nullptr;

}  // namespace

accel_status_t RunHostCallback(void* record, accel_status_t status) {
  std::unique_ptr<HostCallback> callback(static_cast<HostCallback*>(record));
  callback->outer = t_running;
  t_running = callback.get();
  // Put back however the callback ends: one that throws (the host and Vulkan backends catch it and fail the stream)
  // left t_running at the freed record, which every later check on this thread walked.
  struct Restore {
    const HostCallback* outer;
    ~Restore() { t_running = outer; }
  } restore{callback->outer};
  return callback->callback(callback->user_data, status);
}

bool InCallbackOf(const Stream* stream) {
  for (const HostCallback* c = t_running; c != nullptr; c = c->outer) {
    if (c->stream == stream) return true;
  }
  return false;
}

bool InCallbackOf(const Instance* instance) {
  for (const HostCallback* c = t_running; c != nullptr; c = c->outer) {
    if (c->instance == instance) return true;
  }
  return false;
}

Stream::~Stream() {
  if (bk == nullptr || !InCallbackOf(this) || released.exchange(true)) return;  // else ~DeviceObject releases it
  Backend& backend = *device->backend;
  auto destroy = backend.api().stream_destroy;
  if (destroy == nullptr) return;
  // Counted from before the thread starts until the destroy returned: the instance's shutdown of the backend waits
  // for it, so the library stays loaded under it; the device reference keeps the objects alive.
  backend.BeginHelperDestroy();
  try {
    std::thread([device = device, bk = bk, destroy] {
      destroy(bk);
      device->backend->EndHelperDestroy();
    }).detach();
  } catch (const std::system_error&) {
    backend.EndHelperDestroy();
    destroy(bk);  // no thread: the backend refuses a destroy from the stream's own callback and says so
  }
}

}  // namespace accel::core
