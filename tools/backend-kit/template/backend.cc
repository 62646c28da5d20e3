// The entry point: ABI negotiation, the function table, and the context that
// one Accel instance opens (the core's services and the device list).
#include <memory>
#include <string>

#include "symbols.h"

namespace accel::template_backend {

// One opened instance of the backend: the core's services and the one device. A backend over a vendor runtime opens
// the runtime here and lists its devices. Immutable after creation; destroyed once, after every object it made.
struct Context {
  explicit Context(const accel_host_services_t* services) : host(services) {
    device.host = &host;
    DescribeDevice(&device.capabilities);
  }
  Host host;
  Device device;
};

namespace {

std::string VersionString(uint32_t version) {
  return std::to_string(ACCEL_VERSION_MAJOR(version)) + "." + std::to_string(ACCEL_VERSION_MINOR(version));
}

accel_status_t ContextCreate(const accel_bk_context_desc_t* desc, accel_bk_context_t* out_context) noexcept {
  if (desc == nullptr || !ACCEL_TEMPLATE_HAS_FIELD(desc, accel_bk_context_desc_t, host) || desc->host == nullptr) {
    return ACCEL_ERROR_INVALID_ARGUMENT;  // no host services to report through
  }
  const Host host(desc->host);
  return Guard(host, "context_create", [&] {
    // A missing vendor runtime is not a failure: log why and report zero devices, or fail with
    // ACCEL_ERROR_BACKEND_UNAVAILABLE and the reason.
    auto context = std::make_unique<Context>(desc->host);
    context->host.Log(ACCEL_LOG_LEVEL_DEBUG, std::string("one device: ") + context->device.capabilities.name);
    *out_context = Wrap(context.release());
    return ACCEL_SUCCESS;
  });
}

void ContextDestroy(accel_bk_context_t context) noexcept { std::unique_ptr<Context> owned(Unwrap(context)); }

accel_status_t ContextGetDevices(accel_bk_context_t handle, uint32_t* inout_count,
                                 accel_bk_device_t* out_devices) noexcept {
  Context* context = Unwrap(handle);
  constexpr uint32_t kDeviceCount = 1;
  if (out_devices == nullptr) {
    *inout_count = kDeviceCount;
    return ACCEL_SUCCESS;
  }
  if (*inout_count < kDeviceCount) {
    *inout_count = kDeviceCount;
    return context->host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "room for fewer devices than the backend has");
  }
  out_devices[0] = Wrap(&context->device);
  *inout_count = kDeviceCount;
  return ACCEL_SUCCESS;
}

// The function table: static and immutable. A NULL slot means "not implemented": the core answers
// ACCEL_ERROR_UNIMPLEMENTED without calling it.
const accel_backend_api_t kApi = {
    .stype = ACCEL_STRUCTURE_TYPE_BACKEND_API,
    .struct_size = sizeof(accel_backend_api_t),
    .next = nullptr,
    .abi_version = ACCEL_BACKEND_ABI_VERSION,
    .reserved0 = 0,
    .name = kBackendName,
    .version = kBackendVersion,
    // backend.cc
    .context_create = ContextCreate,
    .context_destroy = ContextDestroy,
    .context_get_devices = ContextGetDevices,
    // device.cc
    .device_get_capabilities = DeviceGetCapabilities,
    .device_get_memory_info = DeviceGetMemoryInfo,
    // memory.cc
    .buffer_create = BufferCreate,
    .buffer_destroy = BufferDestroy,
    .buffer_map = BufferMap,
    .buffer_unmap = BufferUnmap,
    // stream.cc
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
    // module.cc: no kernel formats yet (README.md, "Adding a kernel format")
    .module_create = nullptr,
    .module_destroy = nullptr,
    .module_enumerate_kernels = nullptr,
    .module_get_kernel = nullptr,
    .kernel_destroy = nullptr,
    .kernel_get_properties = nullptr,
    .kernel_get_argument_info = nullptr,
    .stream_launch_kernel = nullptr,
    // memory interop (docs/interop.md): not implemented
    .buffer_import = nullptr,
    .buffer_export = nullptr,
    .buffer_get_host_address = nullptr,
    .buffer_get_device_address = nullptr,
    // topology.cc: one device, so no links, no fabric clique, no NICs or domains of its own
    .device_get_topology = DeviceGetTopology,
    .device_get_link = nullptr,
    .device_get_clique = nullptr,
    .context_get_nics = nullptr,
    .device_get_nic_link = nullptr,
    .device_get_domains = nullptr,
    // stream.cc
    .stream_get_copy_statistics = StreamGetCopyStatistics,
    // 1.1 prepared launches: the core keeps each checked launch and enqueues it through stream_launch_kernel
    .kernel_prepare_launch = nullptr,
    .prepared_launch_destroy = nullptr,
    .stream_launch_prepared = nullptr,
};

// Negotiation: the core's newest version must have our major; the answer is the older of the two newest, and it
// must not be older than the oldest the core accepts. Reads only what the core's struct_size covers.
accel_status_t Negotiate(accel_backend_get_api_args_t* args) noexcept {
  if (args == nullptr) return ACCEL_ERROR_INVALID_ARGUMENT;
  const Host host(ACCEL_TEMPLATE_HAS_FIELD(args, accel_backend_get_api_args_t, host) ? args->host : nullptr);
  return Guard(host, ACCEL_BACKEND_ENTRY_POINT_NAME, [&] {
    if (args->stype != ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "arguments have stype " + std::to_string(args->stype) +
                                                         ", expected " +
                                                         std::to_string(ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS));
    }
    if (!ACCEL_TEMPLATE_HAS_FIELD(args, accel_backend_get_api_args_t, out_api)) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                       "arguments are " + std::to_string(args->struct_size) + " bytes, too small for ABI 1.0");
    }
    args->out_abi_version = 0;
    args->out_api = nullptr;
    const uint32_t core_min = args->core_abi_version_min;
    const uint32_t core_max = args->core_abi_version_max;
    const std::string versions = "the core speaks backend ABI " + VersionString(core_min) + " to " +
                                 VersionString(core_max) + ", the " + kBackendName + " backend " +
                                 VersionString(ACCEL_BACKEND_ABI_VERSION);
    if (ACCEL_VERSION_MAJOR(core_max) != ACCEL_BACKEND_ABI_VERSION_MAJOR) {
      return host.Fail(ACCEL_ERROR_INCOMPATIBLE_VERSION, versions + ": the major versions differ");
    }
    const uint32_t negotiated = core_max < ACCEL_BACKEND_ABI_VERSION ? core_max : ACCEL_BACKEND_ABI_VERSION;
    if (negotiated < core_min) {
      return host.Fail(ACCEL_ERROR_INCOMPATIBLE_VERSION, versions + ": no version in common");
    }
    args->out_abi_version = negotiated;
    args->out_api = &kApi;
    return ACCEL_SUCCESS;
  });
}

}  // namespace
}  // namespace accel::template_backend

// The one exported symbol (hidden visibility and the kit's linker version script hide everything else).
extern "C" ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {
  return accel::template_backend::Negotiate(args);
}
