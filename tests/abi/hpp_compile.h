// The body of the accel.hpp compile tests (hpp_cxx17.cc, hpp_cxx20.cc).
//
// exercise() uses every class and member of accel.hpp, so each template is
// instantiated and type-checked; it is an inline function nobody calls, so
// nothing of it is emitted and the tests link without libaccel. main() then
// checks the parts that need no library at run time (owners are left out:
// their destructors reference the C destroy functions). Behaviour against a
// real backend is tested elsewhere (tests/hpp/).
#ifndef ACCEL_TESTS_ABI_HPP_COMPILE_H_
#define ACCEL_TESTS_ABI_HPP_COMPILE_H_

#include "accel/accel.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hpp_compile {

// Owners are move-only and never throw on move or destruction.
template <class T>
constexpr bool kMoveOnlyOwner = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                                std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T> &&
                                std::is_nothrow_destructible_v<T> && std::is_nothrow_default_constructible_v<T>;
static_assert(kMoveOnlyOwner<accel::Buffer>);
static_assert(kMoveOnlyOwner<accel::Stream>);
static_assert(kMoveOnlyOwner<accel::Event>);
static_assert(!std::is_copy_constructible_v<accel::Instance> && !std::is_copy_assignable_v<accel::Instance> &&
              std::is_nothrow_move_constructible_v<accel::Instance> &&
              std::is_nothrow_move_assignable_v<accel::Instance> && std::is_nothrow_destructible_v<accel::Instance>);
static_assert(!std::is_copy_constructible_v<accel::Mapping> && std::is_nothrow_move_constructible_v<accel::Mapping> &&
              std::is_nothrow_destructible_v<accel::Mapping>);
// No accidental conversions from raw handles or descriptors.
static_assert(!std::is_convertible_v<accel_instance_desc_t, accel::Instance>);
static_assert(!std::is_convertible_v<accel_device_t, accel::Device>);
static_assert(!std::is_convertible_v<accel_device_t, accel::Stream>);
static_assert(!std::is_constructible_v<accel::Instance, accel_instance_t>);  // adopt() says so instead

// Non-owning wrappers are a handle and nothing more.
template <class T, class Handle>
constexpr bool kHandleValue = std::is_trivially_copyable_v<T> &&
                              sizeof(T) == sizeof(Handle) && std::is_nothrow_default_constructible_v<T>;
static_assert(kHandleValue<accel::Device, accel_device_t>);
static_assert(kHandleValue<accel::PhysicalDevice, accel_physical_device_t>);
static_assert(kHandleValue<accel::Backend, accel_backend_t>);
static_assert(sizeof(accel::Stream) == sizeof(accel_stream_t) && sizeof(accel::Event) == sizeof(accel_event_t));

static_assert(std::is_base_of_v<std::runtime_error, accel::Error>);
static_assert(std::is_nothrow_copy_constructible_v<accel::Error>);

inline accel_status_t plain_callback() { return ACCEL_SUCCESS; }

struct MoveOnlyCallable {
  std::vector<int> data;
  MoveOnlyCallable() = default;
  MoveOnlyCallable(MoveOnlyCallable&&) = default;
  MoveOnlyCallable(const MoveOnlyCallable&) = delete;
  void operator()() {}
};

// Never called: instantiates the whole wrapper.
inline void exercise() {
  accel::VersionInfo version = accel::version();
  static_cast<void>(ACCEL_VERSION_MAJOR(version.library_version));

  accel::Instance defaults;
  accel::Instance instance(accel::InstanceDesc()
                               .ignore_environment()
                               .backend_files("/opt/accel/host.json")
                               .add_backend_files("")
                               .backends("host,-sim")
                               .visible_devices("0")
                               .log_level(ACCEL_LOG_LEVEL_WARN)
                               .log_callback([](void*, accel_log_level_t, const char*) {}));
  accel_instance_desc_t raw{};
  raw.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  raw.struct_size = sizeof raw;
  accel::Instance from_c(raw);
  defaults = std::move(from_c);
  accel::Instance adopted = accel::Instance::adopt(defaults.release());

  for (const accel::LoaderEntry& entry : instance.loader_report()) {
    std::printf("%s %s %s %s %d %d %u %u %u\n", entry.backend_name.c_str(), entry.manifest_path.c_str(),
                entry.library_path.c_str(), entry.reason.c_str(), static_cast<int>(entry.state),
                static_cast<int>(entry.status), entry.negotiated_abi_version, entry.backend_abi_version,
                entry.device_count);
  }
  for (accel::Backend backend : instance.backends()) {
    accel::BackendInfo info = backend.info();
    std::printf("%s %s %s %u %u %zu\n", info.name.c_str(), info.version.c_str(), info.library_path.c_str(),
                info.abi_version, info.device_count, backend.devices().size());
  }
  for (accel::PhysicalDevice chip : instance.physical_devices()) {
    accel_physical_device_properties_t props = chip.properties();
    std::printf("%s %s %s %zu\n", props.pci_bus_id, chip.name().c_str(), chip.stable_id().c_str(),
                chip.devices().size());
  }

  accel::Device device = instance.devices().at(0);
  accel_device_capabilities_t caps = device.capabilities();
  auto kind = device.info<accel_device_kind_t>(ACCEL_DEVICE_INFO_KIND);
  auto units = device.info<uint32_t>(ACCEL_DEVICE_INFO_COMPUTE_UNITS);
  auto numa = device.info<int32_t>(ACCEL_DEVICE_INFO_NUMA_NODE);
  auto memory_total = device.info<uint64_t>(ACCEL_DEVICE_INFO_MEMORY_TOTAL);
  auto dims = device.info<std::array<uint32_t, 3>>(ACCEL_DEVICE_INFO_MAX_WORK_GROUP_DIMS);
  auto uuid = device.info<std::array<uint8_t, 16>>(ACCEL_DEVICE_INFO_UUID);
  std::string sku = device.info_string(ACCEL_DEVICE_INFO_SKU);
  accel::MemoryInfo memory = device.memory_info();
  std::printf("%s %d %u %d %llu %u %u %s %s %s %llu %llu\n", caps.name, static_cast<int>(kind), units, numa,
              static_cast<unsigned long long>(memory_total), dims[0], uuid[0], sku.c_str(), device.name().c_str(),
              device.stable_id().c_str(), static_cast<unsigned long long>(memory.free),
              static_cast<unsigned long long>(memory.total));
  if (device.backend() != instance.backends().at(0) || !device.physical_device() || device == accel::Device()) {
    return;
  }

  accel::Buffer buffer(device, 4096);
  accel::Buffer pinned(device, 4096, ACCEL_MEMORY_KIND_HOST_PINNED);
  accel::Buffer adopted_buffer = accel::Buffer::adopt(pinned.release());
  static_cast<void>(buffer.properties().mapped + buffer.device().capabilities().compute_units);
  void* raw_map = buffer.map(0, accel::whole_size, ACCEL_MAP_READ);
  static_cast<void>(raw_map);
  buffer.unmap();

  accel::Stream stream(device);
  accel::Stream high_priority(device, 1);
  accel::Event start(device, ACCEL_EVENT_FLAG_TIMING);
  accel::Event end(device, ACCEL_EVENT_FLAG_TIMING);
  std::vector<float> host(1024);
  stream.record(start);
  stream.fill(buffer, uint32_t{0});
  stream.fill(buffer, uint16_t{7}, 2, 8);
  stream.fill(buffer, uint8_t{1});
  stream.fill(buffer, 1.0f);
  stream.copy_from_host(host.data(), buffer, host.size() * sizeof(float));
  stream.copy(buffer, adopted_buffer, 1024, 0, 0);
  stream.copy_to_host(buffer, host.data(), host.size() * sizeof(float), 0);
  int counter = 0;
  stream.host_callback([&counter] { ++counter; });
  stream.host_callback([]() -> accel_status_t { return ACCEL_ERROR_INTERNAL; });
  stream.host_callback(plain_callback);
  stream.host_callback(&plain_callback);
  stream.host_callback(MoveOnlyCallable{});
  stream.host_callback([big = std::vector<int>(100)]() mutable { big.push_back(1); });
  stream.record(end);
  high_priority.wait(end);
  stream.free(std::move(adopted_buffer));
  bool idle = stream.query() && start.query();
  bool done = stream.synchronize() && stream.synchronize(std::chrono::milliseconds(10)) &&
              end.synchronize(std::chrono::seconds(1)) && end.synchronize();
  std::chrono::nanoseconds took = accel::Event::elapsed(start, end);
  stream.clear_error();
  {
    accel::Mapping view(buffer, 0, accel::whole_size, ACCEL_MAP_READ);
    accel::Mapping moved(std::move(view));
    const float* values = moved.as<const float>();
    std::printf("%d %d %d %lld %f %llu %p\n", counter, idle, done, static_cast<long long>(took.count()),
                static_cast<double>(values[0]), static_cast<unsigned long long>(moved.size()), moved.data());
  }

  accel::Stream moved_stream = std::move(stream);
  accel::Event moved_event;
  moved_event = std::move(end);
  accel_stream_t raw_stream = moved_stream.release();
  accel::Stream readopted = accel::Stream::adopt(raw_stream);
  accel::Event readopted_event = accel::Event::adopt(moved_event.release());
  try {
    accel::check(ACCEL_ERROR_INVALID_ARGUMENT);
  } catch (const accel::Error& e) {
    std::printf("%s %s %d\n", e.what(), e.status_name(), static_cast<int>(e.status()));
  }
  static_cast<void>(adopted);
  static_cast<void>(readopted_event);
}

// The parts of accel.hpp that run without libaccel. Returns the failures.
inline int run_checks() {
  int failures = 0;
  auto expect = [&failures](bool ok, const char* what) {
    if (!ok) {
      std::printf("FAIL %s\n", what);
      ++failures;
    }
  };

  const accel::Error error(ACCEL_ERROR_TIMEOUT, "accel_stream_synchronize: 10 ms passed");
  expect(error.status() == ACCEL_ERROR_TIMEOUT, "Error keeps its status");
  expect(std::strcmp(error.what(), "accel_stream_synchronize: 10 ms passed") == 0, "Error keeps the C message as is");

  expect(accel::detail::to_timeout_ns(accel::infinite) == ACCEL_TIMEOUT_INFINITE, "infinite maps to the C constant");
  expect(accel::detail::to_timeout_ns(std::chrono::milliseconds(3)) == 3000000u, "milliseconds become nanoseconds");
  expect(accel::detail::to_timeout_ns(std::chrono::nanoseconds(-5)) == 0u, "a negative timeout polls");

  const auto caps = accel::detail::sized<accel_device_capabilities_t>(ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES);
  expect(caps.stype == ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES && caps.struct_size == sizeof caps &&
             caps.next == nullptr && caps.name[0] == '\0' && caps.memory_total == 0,
         "sized<T> fills the header and zeroes the rest");

  char full[4] = {'a', 'b', 'c', 'd'};
  char shorter[4] = {'x', '\0', 'y', 'z'};
  expect(accel::detail::from_array(full) == "abcd", "a full char array is read to its end");
  expect(accel::detail::from_array(shorter) == "x", "a char array is read to its NUL");
  expect(accel::detail::to_string(nullptr).empty(), "a NULL string reads as empty");

  accel::InstanceDesc builder;
  const accel_instance_desc_t plain = builder.c_desc();
  expect(plain.stype == ACCEL_STRUCTURE_TYPE_INSTANCE_DESC && plain.struct_size == sizeof plain && plain.flags == 0 &&
             plain.backends == nullptr && plain.backend_files == nullptr && plain.log_level == ACCEL_LOG_LEVEL_OFF &&
             plain.log_callback == nullptr,
         "an empty InstanceDesc leaves everything to the environment");
  int user_data = 0;
  builder.backends("host")
      .visible_devices("")
      .ignore_environment()
      .log_level(ACCEL_LOG_LEVEL_DEBUG)
      .log_callback([](void*, accel_log_level_t, const char*) {}, &user_data);
  const accel_instance_desc_t set = builder.c_desc();
  expect(set.backends != nullptr && std::strcmp(set.backends, "host") == 0, "backends() is passed on");
  expect(set.visible_devices != nullptr && set.visible_devices[0] == '\0', "an empty selection is not NULL");
  expect(set.add_backend_files == nullptr, "an unset string stays NULL");
  expect(set.flags == ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT && set.log_level == ACCEL_LOG_LEVEL_DEBUG &&
             set.log_callback != nullptr && set.log_user_data == &user_data,
         "flags, level and callback are passed on");
  builder.ignore_environment(false);
  expect(builder.c_desc().flags == 0, "ignore_environment(false) clears the flag");

  accel::Device none;
  expect(!none && none.handle() == nullptr && none == accel::Device(), "a default Device is null");

  return failures;
}

}  // namespace hpp_compile

#endif  // ACCEL_TESTS_ABI_HPP_COMPILE_H_
