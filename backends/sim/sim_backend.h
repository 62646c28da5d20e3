// What every file of the sim backend shares: the context built from a profile,
// the simulated device (an engine device with capacity, faults and its place in
// the profile's topology), the stream wrapper that counts operations, and the
// slot functions backend.cc puts into its table. Memory, events, modules and
// stream execution are the host engine's (backends/host).
#ifndef ACCEL_BACKENDS_SIM_SIM_BACKEND_H_
#define ACCEL_BACKENDS_SIM_SIM_BACKEND_H_

#include <atomic>
#include <charconv>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "device.h"
#include "host_backend.h"
#include "profile.h"
#include "thread_pool.h"

namespace accel::sim {

inline constexpr const char* kBackendName = "sim";
inline constexpr const char* kBackendVersion = "1.0.0";

class Context;

// One simulated device: the engine device the shared slots see, its profile entry and its live state. The engine
// device's hooks point back here. Thread-safe: counters are atomic, the fault generator is under its mutex.
class SimDevice final : public host::DeviceHooks {
 public:
  SimDevice(Context* context, size_t index);

  host::CopyPath PathBetween(const host::Device& src, const host::Device& dst) const override;

  // Counts one operation (an allocation or a stream operation) against the device-lost fault. Returns
  // ACCEL_SUCCESS, or ACCEL_ERROR_DEVICE_LOST (after host->set_error) once the device is lost.
  accel_status_t Operate(const char* what);
  // ACCEL_ERROR_DEVICE_LOST (after host->set_error) when the device is lost, else ACCEL_SUCCESS; counts nothing.
  accel_status_t CheckAlive() const;
  // Whether this allocation is one the fault generator fails.
  bool DrawAllocationFailure(uint64_t* allocation_number);
  // Whether this copy is one the fault generator slows down (slow_copy); sets the copy's number on the device.
  bool DrawSlowCopy(uint64_t* copy_number);
  // Reserves `size` bytes of the device's capacity; false when they do not fit.
  bool Reserve(uint64_t size);
  void Unreserve(uint64_t size) { used_.fetch_sub(size); }
  uint64_t used() const { return used_.load(); }

  const DeviceSpec& spec() const;
  const std::string& label() const { return label_; }  // "sim device 3 'gpu3' (NVIDIA H100 80GB HBM3)"
  bool faulty() const { return faulty_; }
  Context* context() const { return context_; }
  size_t index() const { return index_; }

  host::Device engine;  // handed to the core as the accel_bk_device_t

 private:
  Context* context_;
  size_t index_;
  std::string label_;
  bool faulty_ = false;  // the profile's or ACCEL_SIM_FAULTS' faults apply to this device
  bool lossy_ = false;   // ... and device_lost_after too (lost_devices)
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> operations_{0};
  std::atomic<bool> lost_{false};
  std::mutex rng_mutex_;
  std::mt19937_64 rng_;
  std::mt19937_64 copy_rng_;  // slow copies draw from their own generator: allocation failures stay as they were
  uint64_t allocations_ = 0;
  uint64_t copies_ = 0;
};

// One opened instance of the backend: the profile, its devices and the thread pool that runs kernels. Immutable
// after creation; destroyed once, after all its objects.
class Context {
 public:
  Context(const accel_host_services_t* services, Profile profile, std::string source);
  const host::HostServices& host() const { return host_; }
  const Profile& profile() const { return profile_; }
  const std::string& source() const { return source_; }
  std::vector<std::unique_ptr<SimDevice>>& devices() { return devices_; }
  const SimDevice& device(size_t i) const { return *devices_[i]; }
  // The link between devices a and b (a != b): the profile's, else derived from the placements (peer access off).
  LinkSpec Link(size_t a, size_t b) const;
  // The link from device `device` to NIC `nic`.
  LinkSpec NicLink(size_t device, size_t nic) const;
  const NumaNode* Numa(int32_t id) const;

 private:
  host::HostServices host_;
  Profile profile_;
  std::string source_;
  host::ThreadPool pool_;
  std::vector<std::unique_ptr<SimDevice>> devices_;  // after the pool: destroyed first
};

// A stream: the engine's, and the simulated device it belongs to with the count of its operations.
struct SimStream {
  accel_bk_stream_t engine = nullptr;
  SimDevice* device = nullptr;
  std::atomic<uint64_t> operations{0};
};

// A fault probability as docs/sim.md writes it: the shortest text that reads back to it ("0.25", "1"), not
// std::to_string's "0.250000".
inline std::string ProbabilityText(double p) {
  char text[32];
  const auto r = std::to_chars(text, text + sizeof(text), p);
  return std::string(text, r.ptr);
}

inline SimDevice* Sim(accel_bk_device_t handle) {
  // The engine device's hooks are its SimDevice (const in the engine's view only).
  return const_cast<SimDevice*>(static_cast<const SimDevice*>(host::Unwrap(handle)->hooks));
}
inline SimStream* Unwrap(accel_bk_stream_t handle) { return reinterpret_cast<SimStream*>(handle); }
inline accel_bk_stream_t Wrap(SimStream* stream) { return reinterpret_cast<accel_bk_stream_t>(stream); }

// Finds a profile: `name_or_path` names a shipped profile ("h100-sxm-8") or is a path (it holds '/' or ends in
// ".json"). On success returns the text and sets *source to the file read; else sets *error.
std::optional<std::string> LoadProfileText(const std::string& name_or_path, std::string* source, std::string* error);
// The folder of the shipped profiles, relative to this library (share/accel/sim/profiles).
std::string ShippedProfileDir();

// --- Slots ------------------------------------------------------------------------------------------------------
// device.cc
accel_status_t DeviceGetMemoryInfo(accel_bk_device_t handle, uint64_t* out_free, uint64_t* out_total) noexcept;
// memory.cc
accel_status_t BufferCreate(accel_bk_device_t handle, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept;
// stream.cc
accel_status_t StreamCreate(accel_bk_device_t device_handle, const accel_stream_desc_t* desc,
                            accel_bk_stream_t* out_stream) noexcept;
void StreamDestroy(accel_bk_stream_t handle) noexcept;
accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t stream, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept;
accel_status_t StreamCopyBufferToHost(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset, void* dst,
                                      uint64_t size) noexcept;
accel_status_t StreamCopyBuffer(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept;
accel_status_t StreamFillBuffer(accel_bk_stream_t stream, accel_bk_buffer_t buffer, uint64_t offset, uint64_t size,
                                const void* pattern, uint32_t pattern_size) noexcept;
accel_status_t StreamEnqueueHostCallback(accel_bk_stream_t stream, accel_host_callback_t callback,
                                         void* user_data) noexcept;
accel_status_t StreamFreeBuffer(accel_bk_stream_t stream, accel_bk_buffer_t buffer) noexcept;
accel_status_t StreamRecordEvent(accel_bk_stream_t stream, accel_bk_event_t event) noexcept;
accel_status_t StreamWaitEvent(accel_bk_stream_t stream, accel_bk_event_t event) noexcept;
accel_status_t StreamQuery(accel_bk_stream_t handle) noexcept;
accel_status_t StreamSynchronize(accel_bk_stream_t handle, uint64_t timeout_ns) noexcept;
accel_status_t StreamClearError(accel_bk_stream_t handle) noexcept;
accel_status_t StreamLaunchKernel(accel_bk_stream_t stream, accel_bk_kernel_t kernel,
                                  const accel_bk_launch_t* launch) noexcept;
accel_status_t StreamGetCopyStatistics(accel_bk_stream_t handle, accel_copy_statistics_t* out) noexcept;
// topology.cc
accel_status_t DeviceGetTopology(accel_bk_device_t handle, accel_device_topology_t* out_topology) noexcept;
accel_status_t DeviceGetLink(accel_bk_device_t handle, accel_bk_device_t peer, accel_device_link_t* out_link) noexcept;
accel_status_t ContextGetNics(accel_bk_context_t handle, uint32_t* inout_count,
                              accel_nic_properties_t* out_nics) noexcept;
accel_status_t DeviceGetNicLink(accel_bk_device_t handle, uint32_t nic_index, accel_device_link_t* out_link) noexcept;
accel_status_t DeviceGetDomains(accel_bk_device_t handle, uint32_t* inout_count, accel_domain_t* out_domains) noexcept;

inline Context* Unwrap(accel_bk_context_t handle) { return reinterpret_cast<Context*>(handle); }
inline accel_bk_context_t Wrap(Context* context) { return reinterpret_cast<accel_bk_context_t>(context); }

}  // namespace accel::sim

#endif  // ACCEL_BACKENDS_SIM_SIM_BACKEND_H_
