// Simulated devices: the descriptor from the profile, capacity accounting,
// the fault generator and the copy path between two devices.
#include <algorithm>
#include <string>

#include "sim_backend.h"

namespace accel::sim {

SimDevice::SimDevice(Context* context, size_t index) : context_(context), index_(index) {
  const DeviceSpec& s = context->profile().devices[index];
  engine.host = &context->host();
  engine.capabilities = s.caps;
  engine.placement.numa_node = s.caps.numa_node;
  if (const NumaNode* numa = context->Numa(s.caps.numa_node)) {
    engine.placement.local_cpus = numa->cpus;
    engine.placement.local_cpu_count = numa->cpu_count;
  }
  engine.hooks = this;
  label_ = "sim device " + std::to_string(index) + " '" + s.id + "' (" + s.caps.name + ")";
  const FaultSpec& f = context->profile().faults;
  faulty_ = f.Any() && (f.devices.empty() || std::find(f.devices.begin(), f.devices.end(), s.id) != f.devices.end());
  // One generator per device, seeded from the seed and the device's place: the same profile, seed and sequence of
  // calls per device give the same faults, whatever other devices do.
  rng_.seed(f.seed * 0x9E3779B97F4A7C15ULL + index + 1);
  copy_rng_.seed((f.seed * 0x9E3779B97F4A7C15ULL + index + 1) ^ 0xC2B2AE3D27D4EB4FULL);
  lossy_ = faulty_ && (f.lost_devices.empty() ||
                       std::find(f.lost_devices.begin(), f.lost_devices.end(), s.id) != f.lost_devices.end());
}

const DeviceSpec& SimDevice::spec() const { return context_->profile().devices[index_]; }

host::CopyPath SimDevice::PathBetween(const host::Device& src, const host::Device& dst) const {
  const auto* a = static_cast<const SimDevice*>(src.hooks);
  const auto* b = static_cast<const SimDevice*>(dst.hooks);
  if (a == nullptr || b == nullptr || a == b) return host::CopyPath::kLocal;
  return context_->Link(a->index(), b->index()).peer_access ? host::CopyPath::kPeer : host::CopyPath::kStaged;
}

accel_status_t SimDevice::CheckAlive() const {
  if (!lost_.load()) return ACCEL_SUCCESS;
  return context_->host().Fail(ACCEL_ERROR_DEVICE_LOST,
                               label_ + " is lost: the injected fault device_lost_after=" +
                                   std::to_string(context_->profile().faults.device_lost_after) + " fired (seed " +
                                   std::to_string(context_->profile().faults.seed) + ")");
}

accel_status_t SimDevice::Operate(const char* what) {
  if (accel_status_t s = CheckAlive(); s != ACCEL_SUCCESS) return s;
  const uint64_t n = operations_.fetch_add(1) + 1;
  const uint64_t limit = context_->profile().faults.device_lost_after;
  if (lossy_ && limit > 0 && n > limit) {
    // Operations on several threads may pass the limit together: the one that marks the device lost logs it, once.
    if (!lost_.exchange(true)) {
      context_->host().Log(ACCEL_LOG_LEVEL_WARN, label_ + " lost at operation " + std::to_string(n) + " (" + what +
                                                     "): injected fault device_lost_after=" + std::to_string(limit));
    }
    return CheckAlive();
  }
  return ACCEL_SUCCESS;
}

bool SimDevice::DrawAllocationFailure(uint64_t* allocation_number) {
  std::lock_guard lock(rng_mutex_);
  *allocation_number = ++allocations_;
  const double p = context_->profile().faults.allocation_failure_probability;
  if (!faulty_ || p <= 0.0) return false;
  // 53 random bits as a double in [0, 1).
  const double draw = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  return draw < p;
}

bool SimDevice::DrawSlowCopy(uint64_t* copy_number) {
  std::lock_guard lock(rng_mutex_);
  *copy_number = ++copies_;
  const double p = context_->profile().faults.slow_copy_probability;
  if (!faulty_ || p <= 0.0) return false;
  const double draw = static_cast<double>(copy_rng_() >> 11) * 0x1.0p-53;
  return draw < p;
}

bool SimDevice::Reserve(uint64_t size) {
  const uint64_t total = engine.capabilities.memory_total;
  uint64_t used = used_.load();
  do {
    if (size > total - used) return false;
  } while (!used_.compare_exchange_weak(used, used + size));
  return true;
}

const NumaNode* Context::Numa(int32_t id) const {
  for (const NumaNode& n : profile_.numa_nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

accel_status_t DeviceGetMemoryInfo(accel_bk_device_t handle, uint64_t* out_free, uint64_t* out_total) noexcept {
  const SimDevice* device = Sim(handle);
  if (accel_status_t s = device->CheckAlive(); s != ACCEL_SUCCESS) return s;
  const uint64_t total = device->engine.capabilities.memory_total;
  if (out_total != nullptr) *out_total = total;
  if (out_free != nullptr) *out_free = total - std::min(total, device->used());
  return ACCEL_SUCCESS;
}

}  // namespace accel::sim
