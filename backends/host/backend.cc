// The host backend's entry point: ABI negotiation, the function table, and the
// context that owns the machine's topology, its one device (the CPU) and the
// thread pool that runs kernels.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "device.h"
#include "host_backend.h"
#include "thread_pool.h"

namespace accel::host {

// --- Context -----------------------------------------------------------------------------------------------------

// One opened instance of the backend: the core's services, the machine's topology, the CPU device and the thread
// pool (std::thread::hardware_concurrency() workers, started by the first launch that has several work-groups).
// Immutable after creation (every slot may read it concurrently; the pool is thread-safe); destroyed once, after all
// its objects, which joins the pool's workers.
class Context {
 public:
  Context(const accel_host_services_t* services, uint32_t abi_version, std::unique_ptr<Topology> topology)
      : host_(services, kBackendName), abi_version_(abi_version), topology_(std::move(topology)), pool_(&host_, 0) {
    device_.host = &host_;
    device_.capabilities = {};
    device_.capabilities.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
    device_.capabilities.struct_size = sizeof(accel_device_capabilities_t);
    DescribeMachine(*topology_, host_, &device_.capabilities);
    device_.placement = DescribePlacement(*topology_, device_.capabilities.numa_node, host_);
    device_.pool = &pool_;
  }

  const HostServices& host() const { return host_; }
  uint32_t abi_version() const { return abi_version_; }
  Device* device() { return &device_; }

 private:
  HostServices host_;
  uint32_t abi_version_;
  std::unique_ptr<Topology> topology_;
  Device device_;
  ThreadPool pool_;  // last: its workers are joined first
};

namespace {

accel_status_t ContextCreate(const accel_bk_context_desc_t* desc, accel_bk_context_t* out_context) noexcept {
  if (desc == nullptr || !ACCEL_BACKEND_HAS_FIELD(desc, accel_bk_context_desc_t, host) || desc->host == nullptr) {
    return ACCEL_ERROR_INVALID_ARGUMENT;  // no host services to report through
  }
  const HostServices host(desc->host, kBackendName);
  return Guard(host, "context_create", [&]() -> accel_status_t {
    if (desc->stype != ACCEL_STRUCTURE_TYPE_BACKEND_CONTEXT_DESC) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "context description has stype " + std::to_string(desc->stype) +
                                                         ", expected " +
                                                         std::to_string(ACCEL_STRUCTURE_TYPE_BACKEND_CONTEXT_DESC));
    }
    const uint32_t abi_version = ACCEL_BACKEND_HAS_FIELD(desc, accel_bk_context_desc_t, abi_version)
                                     ? desc->abi_version
                                     : ACCEL_BACKEND_ABI_VERSION;
    std::string error;
    std::unique_ptr<Topology> topology = Topology::Load(&error);
    if (topology == nullptr) return host.Fail(ACCEL_ERROR_BACKEND_UNAVAILABLE, error);
    auto context = std::make_unique<Context>(desc->host, abi_version, std::move(topology));
    const accel_device_capabilities_t& caps = context->device()->capabilities;
    context->host().Log(ACCEL_LOG_LEVEL_DEBUG, std::to_string(caps.compute_units) + " CPUs, " +
                                                   std::to_string(caps.memory_total) + " bytes (" + caps.name + ", " +
                                                   caps.driver_version + ", ABI " + VersionString(abi_version) + ")");
    *out_context = Wrap(context.release());
    return ACCEL_SUCCESS;
  });
}

void ContextDestroy(accel_bk_context_t handle) noexcept {
  std::unique_ptr<Context> context(Unwrap(handle));
  if (context == nullptr) return;
  const HostServices host = context->host();
  GuardVoid(host, "context_destroy", [&] { context.reset(); });
}

accel_status_t ContextGetDevices(accel_bk_context_t handle, uint32_t* inout_count,
                                 accel_bk_device_t* out_devices) noexcept {
  Context* context = Unwrap(handle);
  constexpr uint32_t kDeviceCount = 1;
  if (out_devices == nullptr) {
    *inout_count = kDeviceCount;
    return ACCEL_SUCCESS;
  }
  if (*inout_count < kDeviceCount) {
    const uint32_t capacity = *inout_count;
    *inout_count = kDeviceCount;
    return Guard(context->host(), "context_get_devices", [&] {
      return context->host().Fail(
          ACCEL_ERROR_INVALID_ARGUMENT,
          "room for " + std::to_string(capacity) + " devices, the host backend has " + std::to_string(kDeviceCount));
    });
  }
  out_devices[0] = Wrap(context->device());
  *inout_count = kDeviceCount;
  return ACCEL_SUCCESS;
}

// The function table: static, immutable. Every 1.0 slot is filled but device_get_link (the host backend has one
// device, so the core never asks for a link between two of its devices), context_get_nics and device_get_nic_link
// (the machine's NICs are the core's, from hwloc) and device_get_domains (the core's node and
// ACCEL_TOPOLOGY_DOMAINS levels are the host's).
const accel_backend_api_t kApi = {
    .stype = ACCEL_STRUCTURE_TYPE_BACKEND_API,
    .struct_size = sizeof(accel_backend_api_t),
    .next = nullptr,
    .abi_version = ACCEL_BACKEND_ABI_VERSION,
    .reserved0 = 0,
    .name = kBackendName,
    .version = kBackendVersion,
    .context_create = ContextCreate,
    .context_destroy = ContextDestroy,
    .context_get_devices = ContextGetDevices,
    .device_get_capabilities = DeviceGetCapabilities,
    .device_get_memory_info = DeviceGetMemoryInfo,
    .buffer_create = BufferCreate,
    .buffer_destroy = BufferDestroy,
    .buffer_map = BufferMap,
    .buffer_unmap = BufferUnmap,
    .stream_create = StreamCreate,
    .stream_destroy = StreamDestroy,
    .stream_copy_host_to_buffer = StreamCopyHostToBuffer,
    .stream_copy_buffer_to_host = StreamCopyBufferToHost,
    .stream_copy_buffer = StreamCopyBuffer,
    .stream_fill_buffer = StreamFillBuffer,
    .stream_enqueue_host_callback = StreamEnqueueHostCallback,
    .stream_free_buffer = StreamFreeBuffer,
    .stream_record_event = StreamRecordEvent,
    .stream_wait_event = StreamWaitEvent,
    .stream_query = StreamQuery,
    .stream_synchronize = StreamSynchronize,
    .stream_clear_error = StreamClearError,
    .event_create = EventCreate,
    .event_destroy = EventDestroy,
    .event_query = EventQuery,
    .event_synchronize = EventSynchronize,
    .event_elapsed_time = EventElapsedTime,
    .module_create = ModuleCreate,
    .module_destroy = ModuleDestroy,
    .module_enumerate_kernels = ModuleEnumerateKernels,
    .module_get_kernel = ModuleGetKernel,
    .kernel_destroy = KernelDestroy,
    .kernel_get_properties = KernelGetProperties,
    .kernel_get_argument_info = KernelGetArgumentInfo,
    .stream_launch_kernel = StreamLaunchKernel,
    .buffer_import = BufferImport,
    .buffer_export = BufferExport,
    .buffer_get_host_address = BufferGetHostAddress,
    .buffer_get_device_address = BufferGetDeviceAddress,
    .device_get_topology = DeviceGetTopology,
    .device_get_link = nullptr,
    .device_get_clique = DeviceGetClique,
    .context_get_nics = nullptr,
    .device_get_nic_link = nullptr,
    .device_get_domains = nullptr,
    .stream_get_copy_statistics = StreamGetCopyStatistics,
    // 1.1 prepared launches: the core keeps each checked launch and enqueues it through stream_launch_kernel
    .kernel_prepare_launch = nullptr,
    .prepared_launch_destroy = nullptr,
    .stream_launch_prepared = nullptr,
};

}  // namespace
}  // namespace accel::host

extern "C" ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {
  return accel::backend::NegotiateApi(args, &accel::host::kApi, accel::host::kBackendName);
}
