#include "host_callback.h"

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

}  // namespace accel::core
