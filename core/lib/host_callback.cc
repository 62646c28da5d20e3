#include "host_callback.h"

#include <system_error>
#include <thread>

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
  const accel_status_t result = callback->callback(callback->user_data, status);
  t_running = callback->outer;
  return result;
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
  auto destroy = device->backend->api().stream_destroy;
  if (destroy == nullptr) return;
  try {
    // The device (and with it the backend) stays alive until the destroy returned.
    std::thread([device = device, bk = bk, destroy] { destroy(bk); }).detach();
  } catch (const std::system_error&) {
    destroy(bk);  // no thread: the backend refuses a destroy from the stream's own callback and says so
  }
}

}  // namespace accel::core
