// The harness: registry, skips, owning wrappers and the raw backend.
#include "harness.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "names.h"

namespace accel::conformance {

const char* ProfileName(Profile profile) {
  switch (profile) {
    case Profile::kAbi: return "abi";
    case Profile::kQuery: return "query";
    case Profile::kMemory: return "memory";
    case Profile::kStreams: return "streams";
    case Profile::kExecution: return "execution";
    case Profile::kMultiDevice: return "multi-device";
  }
  return "?";
}

std::optional<Profile> ParseProfile(std::string_view name) {
  for (Profile p : kAllProfiles) {
    if (name == ProfileName(p)) return p;
  }
  return std::nullopt;
}

Target& TheTarget() {
  static Target target;
  return target;
}

std::vector<Case>& Registry() {
  static std::vector<Case> cases;
  return cases;
}

int RegisterDeviceCase(Profile profile, const char* id, DeviceCaseFn fn, const char* file, int line) {
  Registry().push_back({profile, std::string(ProfileName(profile)) + "." + id, fn, nullptr, file, line});
  return 0;
}

int RegisterBackendCase(Profile profile, const char* id, BackendCaseFn fn, const char* file, int line) {
  Registry().push_back({profile, std::string(ProfileName(profile)) + "." + id, nullptr, fn, file, line});
  return 0;
}

std::string AbsentFeature(const DeviceUnderTest& dut, uint64_t feature_bit) {
  std::string name = "?";
  for (const auto& f : accel::info::DeviceFeatureNames()) {
    if (f.bit == feature_bit) name = f.name;
  }
  return std::string(kAbsentPrefix) + dut.label + " reports feature '" + name + "' absent (ACCEL_DEVICE_INFO_FEATURES)";
}

std::string Why(accel_status_t status) { return std::string(accel_status_name(status)) + ": " + accel_last_error(); }

// --- Wrappers ----------------------------------------------------------------------------------------------------

Buffer::Buffer(accel_device_t device, uint64_t size) {
  accel_buffer_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
  desc.struct_size = sizeof(desc);
  desc.size = size;
  const accel_status_t s = accel_buffer_create(device, &desc, &handle_);
  if (s != ACCEL_SUCCESS) {
    ADD_FAILURE() << "accel_buffer_create(" << size << " bytes): " << Why(s);
    handle_ = nullptr;
  }
}

Buffer::~Buffer() {
  if (handle_ != nullptr) accel_buffer_destroy(handle_);
}

Stream::Stream(accel_device_t device) {
  const accel_status_t s = accel_stream_create(device, nullptr, &handle_);
  if (s != ACCEL_SUCCESS) {
    ADD_FAILURE() << "accel_stream_create: " << Why(s);
    handle_ = nullptr;
  }
}

Stream::~Stream() {
  if (handle_ != nullptr) accel_stream_destroy(handle_);
}

accel_status_t Stream::Sync() const { return accel_stream_synchronize(handle_, ACCEL_TIMEOUT_INFINITE); }

Event::Event(accel_device_t device, uint64_t flags) {
  accel_event_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_EVENT_DESC;
  desc.struct_size = sizeof(desc);
  desc.flags = flags;
  const accel_status_t s = accel_event_create(device, &desc, &handle_);
  if (s != ACCEL_SUCCESS) {
    ADD_FAILURE() << "accel_event_create: " << Why(s);
    handle_ = nullptr;
  }
}

Event::~Event() {
  if (handle_ != nullptr) accel_event_destroy(handle_);
}

accel_status_t Gate::EnqueueOn(accel_stream_t stream) {
  return accel_stream_enqueue_host_callback(stream, Callback, this);
}

void Gate::Open() {
  std::lock_guard lock(mutex_);
  open_ = true;
  cv_.notify_all();
}

bool Gate::WaitUntilEntered(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, timeout, [this] { return entered_; });
}

accel_status_t Gate::Callback(void* user_data, accel_status_t /*status*/) {
  auto* gate = static_cast<Gate*>(user_data);
  std::unique_lock lock(gate->mutex_);
  gate->entered_ = true;
  gate->cv_.notify_all();
  gate->cv_.wait(lock, [gate] { return gate->open_; });
  return ACCEL_SUCCESS;
}

void Upload(const Stream& stream, accel_buffer_t buffer, uint64_t offset, const void* data, uint64_t size) {
  ACCEL_ASSERT_OK(accel_stream_copy_host_to_buffer(stream.get(), data, buffer, offset, size));
  ACCEL_ASSERT_OK(stream.Sync());
}

std::vector<uint8_t> Download(const Stream& stream, accel_buffer_t buffer, uint64_t offset, uint64_t size) {
  std::vector<uint8_t> out(size, 0xEE);
  const accel_status_t s = accel_stream_copy_buffer_to_host(stream.get(), buffer, offset, out.data(), size);
  EXPECT_EQ(s, ACCEL_SUCCESS) << "accel_stream_copy_buffer_to_host: " << Why(s);
  const accel_status_t sync = stream.Sync();
  EXPECT_EQ(sync, ACCEL_SUCCESS) << "accel_stream_synchronize: " << Why(sync);
  return out;
}

accel_device_link_t Link(accel_device_t a, accel_device_t b) {
  accel_device_link_t link{};
  link.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
  link.struct_size = sizeof(link);
  EXPECT_EQ(accel_device_get_link(a, b, &link), ACCEL_SUCCESS) << accel_last_error();
  return link;
}

std::vector<uint8_t> Pattern(uint64_t size, uint32_t seed) {
  std::vector<uint8_t> out(size);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<uint8_t>(x >> 24);
  }
  return out;
}

// --- Raw backend -------------------------------------------------------------------------------------------------

RawBackend::RawBackend() {
  host_.stype = ACCEL_STRUCTURE_TYPE_HOST_SERVICES;
  host_.struct_size = sizeof(host_);
  host_.context = this;
  host_.log = Log;
  host_.set_error = SetError;
  host_.allocate = Allocate;
  host_.deallocate = Deallocate;
  host_.cache_dir = nullptr;
  host_.machine_id = "accel-conformance";
  host_.get_setting = GetSetting;
  const std::string& path = TheTarget().library_path;
  library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    const char* e = dlerror();
    load_error_ = "dlopen(" + path + "): " + (e != nullptr ? e : "unknown error");
    return;
  }
  entry_ = reinterpret_cast<accel_backend_get_api_fn>(dlsym(library_, ACCEL_BACKEND_ENTRY_POINT_NAME));
  if (entry_ == nullptr) load_error_ = path + " does not export " ACCEL_BACKEND_ENTRY_POINT_NAME;
}

RawBackend::~RawBackend() {
  // Not dlclose'd: libaccel keeps the same library loaded, and a backend's
  // threads may still be winding down.
}

const accel_backend_api_t* RawBackend::Api() {
  if (entry_ == nullptr) {
    ADD_FAILURE() << load_error_;
    return nullptr;
  }
  accel_backend_get_api_args_t args{};
  args.stype = ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS;
  args.struct_size = sizeof(args);
  args.core_abi_version_min = ACCEL_MAKE_VERSION(1, 0, 0);
  args.core_abi_version_max = ACCEL_BACKEND_ABI_VERSION;
  args.host = &host_;
  const accel_status_t s = entry_(&args);
  if (s != ACCEL_SUCCESS || args.out_api == nullptr) {
    ADD_FAILURE() << "negotiating ABI 1.0: " << accel_status_name(s) << ": " << last_error();
    return nullptr;
  }
  return args.out_api;
}

std::string RawBackend::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

void RawBackend::Log(void* /*context*/, accel_log_level_t /*level*/, const char* /*message*/) {}

void RawBackend::SetError(void* context, accel_status_t /*status*/, const char* message) {
  auto* self = static_cast<RawBackend*>(context);
  std::lock_guard lock(self->mutex_);
  self->last_error_ = message != nullptr ? message : "";
  self->set_error_calls_.fetch_add(1);
}

void* RawBackend::Allocate(void* /*context*/, size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  void* p = nullptr;
  return posix_memalign(&p, alignment, size == 0 ? 1 : size) == 0 ? p : nullptr;
}

void RawBackend::Deallocate(void* /*context*/, void* pointer) { std::free(pointer); }

const char* RawBackend::GetSetting(void* /*context*/, const char* name) {
  if (name == nullptr || std::strncmp(name, "ACCEL_", 6) != 0) return nullptr;
  return std::getenv(name);
}

bool HasSlot(const accel_backend_api_t* api, size_t offset) {
  if (api == nullptr || offset + sizeof(void*) > api->struct_size) return false;
  void* slot = nullptr;
  std::memcpy(&slot, reinterpret_cast<const char*>(api) + offset, sizeof(slot));
  return slot != nullptr;
}

}  // namespace accel::conformance
