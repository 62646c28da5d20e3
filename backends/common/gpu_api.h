// The function-table slots that the GPU backends sharing gpu_stream.h and gpu_storage.h (cuda, hip, level_zero) fill
// with the shared code as it is: buffers but their creation, streams and events but the copies and fills, the
// capabilities and topology slots of a device that holds its descriptor. Part of accel_backend_support
// (backend_support.h); header-only, since it is templates.
//
// What the traits struct T supplies beyond gpu_stream.h's and gpu_storage.h's lists: a Device with
// `accel_device_capabilities_t capabilities` (its descriptor, pci_bus_id included) filled at context creation.
#ifndef ACCEL_BACKENDS_COMMON_GPU_API_H_
#define ACCEL_BACKENDS_COMMON_GPU_API_H_

#include <accel_backend.h>

#include <cstring>
#include <memory>
#include <string>

#include "common/gpu_storage.h"
#include "common/gpu_stream.h"
#include "common/prefix.h"

namespace accel::backend {

// device_get_capabilities and device_get_topology of a device that holds its descriptor.
template <typename Device>
struct GpuDeviceSlots {
  static accel_status_t DeviceGetCapabilities(accel_bk_device_t handle, accel_device_capabilities_t* out) noexcept {
    // The core passes a zeroed struct of its own size, numa_node preset; write only what it covers.
    WritePrefix(reinterpret_cast<const Device*>(handle)->capabilities, out);
    return ACCEL_SUCCESS;
  }
  // The PCI bus id; the core completes the root, NUMA node and CPUs from the PCI tree.
  static accel_status_t DeviceGetTopology(accel_bk_device_t handle, accel_device_topology_t* out_topology) noexcept {
    const Device* device = reinterpret_cast<const Device*>(handle);
    accel_device_topology_t t = *out_topology;  // the core's presets (numa_node and nearest_nic -1)
    std::memcpy(t.pci_bus_id, device->capabilities.pci_bus_id, sizeof(t.pci_bus_id));
    WritePrefix(&t, out_topology, out_topology->struct_size, sizeof(t));
    return ACCEL_SUCCESS;
  }
};

// The body of context_create: a Context made from the core's services (Context(const accel_host_services_t*), with a
// `host` member) and opened by `open(context, &reason)` (the runtime, then its devices); a failure is logged at info
// and returned with the reason as the message, which the loader report shows.
template <typename Context, typename Open>
accel_status_t CreateGpuContext(const accel_bk_context_desc_t* desc, const char* backend_name, Open&& open,
                                accel_bk_context_t* out_context) noexcept {
  const accel_host_services_t* services =
      ACCEL_BACKEND_HAS_FIELD(desc, accel_bk_context_desc_t, host) ? desc->host : nullptr;
  const HostServices host(services, backend_name);
  return Guard(host, "context_create", [&] {
    auto context = std::make_unique<Context>(services);
    std::string reason;
    const accel_status_t status = open(*context, &reason);
    if (status != ACCEL_SUCCESS) {
      context->host.Log(ACCEL_LOG_LEVEL_INFO, "no devices: " + reason);
      return host.Fail(status, reason);
    }
    *out_context = reinterpret_cast<accel_bk_context_t>(context.release());
    return ACCEL_SUCCESS;
  });
}

// Fills the shared slots of `api`; the backend fills the rest (context, memory info, buffer creation, copies, fills,
// modules, kernels, links).
template <typename T>
constexpr void SetGpuSlots(accel_backend_api_t* api) {
  using Buffers = GpuBufferSlots<T>;
  using Streams = GpuStreamSlots<T>;
  using Devices = GpuDeviceSlots<typename T::Device>;
  api->device_get_capabilities = Devices::DeviceGetCapabilities;
  api->device_get_topology = Devices::DeviceGetTopology;
  api->buffer_destroy = Buffers::BufferDestroy;
  api->buffer_map = Buffers::BufferMap;
  api->buffer_unmap = Buffers::BufferUnmap;
  api->buffer_get_host_address = Buffers::BufferGetHostAddress;
  api->buffer_get_device_address = Buffers::BufferGetDeviceAddress;
  api->stream_create = Streams::StreamCreateSlot;
  api->stream_destroy = Streams::StreamDestroy;
  api->stream_enqueue_host_callback = Streams::StreamEnqueueHostCallback;
  api->stream_free_buffer = Streams::StreamFreeBuffer;
  api->stream_record_event = Streams::StreamRecordEvent;
  api->stream_wait_event = Streams::StreamWaitEvent;
  api->stream_query = Streams::StreamQuery;
  api->stream_synchronize = Streams::StreamSynchronize;
  api->stream_clear_error = Streams::StreamClearError;
  api->stream_get_copy_statistics = Streams::StreamGetCopyStatistics;
  api->event_create = Streams::EventCreateSlot;
  api->event_destroy = Streams::EventDestroy;
  api->event_query = Streams::EventQuery;
  api->event_synchronize = Streams::EventSynchronize;
  api->event_elapsed_time = Streams::EventElapsedTime;
}

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_GPU_API_H_
