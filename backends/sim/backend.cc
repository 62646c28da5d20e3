// The sim backend's entry point: ABI negotiation, the function table, and the
// context built from the profile that ACCEL_SIM_PROFILE names. Without it the
// backend reports no devices, so a real machine never shows simulated ones.
#include <dlfcn.h>
#include <algorithm>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "sim_backend.h"

namespace accel::sim {

std::string ShippedProfileDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&ShippedProfileDir), &info) == 0 || info.dli_fname == nullptr) return "";
  // <prefix>/lib/accel/backends/libaccel_backend_sim.so -> <prefix>/share/accel/sim/profiles
  const std::filesystem::path library = std::filesystem::absolute(info.dli_fname);
  return (library.parent_path().parent_path().parent_path().parent_path() / "share/accel/sim/profiles").string();
}

std::optional<std::string> LoadProfileText(const std::string& name_or_path, std::string* source, std::string* error) {
  const bool is_path =
      name_or_path.find('/') != std::string::npos || (name_or_path.size() > 5 && name_or_path.ends_with(".json"));
  if (is_path) {
    *source = name_or_path;
  } else {
    const std::string dir = ShippedProfileDir();
    *source = dir + "/" + name_or_path + ".json";
    if (!std::filesystem::exists(*source)) {
      std::string names;
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.path().extension() != ".json") continue;
        names += (names.empty() ? "" : ", ") + entry.path().stem().string();
      }
      *error = "no shipped profile '" + name_or_path + "' in " + dir +
               " (shipped: " + (names.empty() ? "none" : names) + "); a path to a profile file also works";
      return std::nullopt;
    }
  }
  std::ifstream in(*source, std::ios::binary);
  if (!in) {
    *error = *source + ": cannot be read";
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Context::Context(const accel_host_services_t* services, Profile profile, std::string source)
    : host_(services, kBackendName), profile_(std::move(profile)), source_(std::move(source)), pool_(&host_, 0) {
  for (size_t i = 0; i < profile_.devices.size(); ++i) devices_.push_back(std::make_unique<SimDevice>(this, i));
  for (auto& d : devices_) d->engine.pool = &pool_;
}

namespace {

accel_status_t ContextCreate(const accel_bk_context_desc_t* desc, accel_bk_context_t* out_context) noexcept {
  if (desc == nullptr || !ACCEL_BACKEND_HAS_FIELD(desc, accel_bk_context_desc_t, host) || desc->host == nullptr) {
    return ACCEL_ERROR_INVALID_ARGUMENT;  // no host services to report through
  }
  const host::HostServices host(desc->host, kBackendName);
  return host::Guard(host, "context_create", [&]() -> accel_status_t {
    const char* name = host.Setting("ACCEL_SIM_PROFILE");
    Profile profile;
    std::string source;
    if (name == nullptr || *name == '\0') {
      host.Log(ACCEL_LOG_LEVEL_INFO, "ACCEL_SIM_PROFILE is unset: no simulated devices (shipped profiles are in " +
                                         ShippedProfileDir() + "; `accel-info profiles` lists them)");
    } else {
      std::string error;
      auto text = LoadProfileText(name, &source, &error);
      if (!text) return host.Fail(ACCEL_ERROR_NOT_FOUND, "ACCEL_SIM_PROFILE='" + std::string(name) + "': " + error);
      auto parsed = ParseProfile(*text, source, &error);
      if (!parsed) return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "ACCEL_SIM_PROFILE: " + error);
      profile = std::move(*parsed);
      if (const char* faults = host.Setting("ACCEL_SIM_FAULTS")) {
        if (!ParseFaults(faults, &profile.faults, &error)) return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, error);
      }
      // lost_devices are "those of them" (docs/sim.md): one outside a non-empty `devices` is never lost, silently.
      for (const std::string& id : profile.faults.lost_devices) {
        const auto& faulty = profile.faults.devices;
        if (!faulty.empty() && std::find(faulty.begin(), faulty.end(), id) == faulty.end()) {
          return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                           "ACCEL_SIM_FAULTS: lost_devices: '" + id +
                               "' is not one of 'devices' (only faulty devices are lost; add it there)");
        }
      }
      for (const auto* ids : {&profile.faults.devices, &profile.faults.lost_devices}) {
        for (const std::string& id : *ids) {
          bool known = false;
          for (const auto& d : profile.devices) known = known || d.id == id;
          if (!known) {
            return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                             std::string("ACCEL_SIM_FAULTS: ") +
                                 (ids == &profile.faults.devices ? "devices" : "lost_devices") + ": '" + id +
                                 "' is not a device of " + source);
          }
        }
      }
    }
    auto context = std::make_unique<Context>(desc->host, std::move(profile), source);
    if (!source.empty()) {
      host.Log(ACCEL_LOG_LEVEL_DEBUG, "profile '" + context->profile().name + "' from " + source + ": " +
                                          std::to_string(context->devices().size()) + " simulated device(s)");
    }
    *out_context = Wrap(context.release());
    return ACCEL_SUCCESS;
  });
}

void ContextDestroy(accel_bk_context_t handle) noexcept {
  std::unique_ptr<Context> context(Unwrap(handle));
  if (context == nullptr) return;
  const host::HostServices host = context->host();
  host::GuardVoid(host, "context_destroy", [&] { context.reset(); });
}

accel_status_t ContextGetDevices(accel_bk_context_t handle, uint32_t* inout_count,
                                 accel_bk_device_t* out_devices) noexcept {
  Context* context = Unwrap(handle);
  const auto count = static_cast<uint32_t>(context->devices().size());
  if (out_devices == nullptr) {
    *inout_count = count;
    return ACCEL_SUCCESS;
  }
  if (*inout_count < count) {
    const uint32_t capacity = *inout_count;
    *inout_count = count;
    return context->host().Fail(ACCEL_ERROR_INVALID_ARGUMENT, "room for " + std::to_string(capacity) +
                                                                  " devices, the profile has " + std::to_string(count));
  }
  for (uint32_t i = 0; i < count; ++i) out_devices[i] = host::Wrap(&context->devices()[i]->engine);
  *inout_count = count;
  return ACCEL_SUCCESS;
}

// The function table: device descriptors, memory accounting, stream operation counting and topology are the sim
// backend's; buffers, events, modules and kernel execution are the host engine's.
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
    .device_get_capabilities = host::DeviceGetCapabilities,
    .device_get_memory_info = DeviceGetMemoryInfo,
    .buffer_create = BufferCreate,
    .buffer_destroy = host::BufferDestroy,
    .buffer_map = host::BufferMap,
    .buffer_unmap = host::BufferUnmap,
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
    .event_create = host::EventCreate,
    .event_destroy = host::EventDestroy,
    .event_query = host::EventQuery,
    .event_synchronize = host::EventSynchronize,
    .event_elapsed_time = host::EventElapsedTime,
    .module_create = host::ModuleCreate,
    .module_destroy = host::ModuleDestroy,
    .module_enumerate_kernels = host::ModuleEnumerateKernels,
    .module_get_kernel = host::ModuleGetKernel,
    .kernel_destroy = host::KernelDestroy,
    .kernel_get_properties = host::KernelGetProperties,
    .kernel_get_argument_info = host::KernelGetArgumentInfo,
    .stream_launch_kernel = StreamLaunchKernel,
    .buffer_import = host::BufferImport,
    .buffer_export = host::BufferExport,
    .buffer_get_host_address = host::BufferGetHostAddress,
    .buffer_get_device_address = host::BufferGetDeviceAddress,
    .device_get_topology = DeviceGetTopology,
    .device_get_link = DeviceGetLink,
    .device_get_clique = nullptr,
    .context_get_nics = ContextGetNics,
    .device_get_nic_link = DeviceGetNicLink,
    .device_get_domains = DeviceGetDomains,
    .stream_get_copy_statistics = StreamGetCopyStatistics,
    // 1.1 prepared launches: the core keeps each checked launch and enqueues it through stream_launch_kernel
    .kernel_prepare_launch = nullptr,
    .prepared_launch_destroy = nullptr,
    .stream_launch_prepared = nullptr,
};

}  // namespace
}  // namespace accel::sim

extern "C" ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {
  return accel::backend::NegotiateApi(args, &accel::sim::kApi, accel::sim::kBackendName);
}
