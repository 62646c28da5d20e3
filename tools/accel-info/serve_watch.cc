// The named tenants, queues and streams the dashboard shows (serve.h).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "serve.h"

namespace accel::info::serve {
namespace {

template <typename Handle>
void ErasePrefix(std::vector<Watch::Entry<Handle>>& entries, const std::string& prefix) {
  std::erase_if(entries, [&](const Watch::Entry<Handle>& e) { return e.name.starts_with(prefix); });
}

}  // namespace

void Watch::AddTenant(std::string name, accel_tenant_t tenant) {
  const std::lock_guard lock(mutex_);
  tenants_.push_back({std::move(name), tenant});
}

void Watch::AddQueue(std::string name, accel_queue_t queue) {
  const std::lock_guard lock(mutex_);
  queues_.push_back({std::move(name), queue});
}

void Watch::AddStream(std::string name, accel_stream_t stream) {
  const std::lock_guard lock(mutex_);
  streams_.push_back({std::move(name), stream});
}

void Watch::RemovePrefix(const std::string& prefix) {
  const std::lock_guard lock(mutex_);
  ErasePrefix(tenants_, prefix);
  ErasePrefix(queues_, prefix);
  ErasePrefix(streams_, prefix);
}

std::vector<Watch::Entry<accel_tenant_t>> Watch::Tenants() const {
  const std::lock_guard lock(mutex_);
  return tenants_;
}

std::vector<Watch::Entry<accel_queue_t>> Watch::Queues() const {
  const std::lock_guard lock(mutex_);
  return queues_;
}

std::vector<Watch::Entry<accel_stream_t>> Watch::Streams() const {
  const std::lock_guard lock(mutex_);
  return streams_;
}

}  // namespace accel::info::serve
