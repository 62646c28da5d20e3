// The body of the accel.hpp compile tests (hpp_cxx17.cc, hpp_cxx20.cc).
//
// exercise() uses every class and member of accel.hpp, so each template is
// instantiated and type-checked; it is an inline function nobody calls, so
// nothing of it is emitted and the tests link without libaccel. main() then
// checks the parts that need no library at run time (owners are left out:
// their destructors reference the C destroy functions). Behaviour against a
// real backend is tested in tests/api/hpp_test.cc.
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
static_assert(kMoveOnlyOwner<accel::Module>);
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
static_assert(!std::is_convertible_v<accel_kernel_t, accel::Kernel>);
static_assert(!std::is_convertible_v<accel_module_t, accel::Module>);
static_assert(!std::is_constructible_v<accel::Module, accel_module_t>);
// A native-host table is not copied, so a temporary one would dangle.
template <class T, class = void>
struct NativeAccepts : std::false_type {};
template <class T>
struct NativeAccepts<T, std::void_t<decltype(accel::ModuleSource::native(std::declval<T>()))>> : std::true_type {};
static_assert(NativeAccepts<const accel_native_module_t&>::value && NativeAccepts<accel_native_module_t&>::value);
static_assert(!NativeAccepts<accel_native_module_t>::value && !NativeAccepts<const accel_native_module_t&&>::value);

// Non-owning wrappers are a handle and nothing more.
template <class T, class Handle>
constexpr bool kHandleValue = std::is_trivially_copyable_v<T> &&
                              sizeof(T) == sizeof(Handle) && std::is_nothrow_default_constructible_v<T>;
static_assert(kHandleValue<accel::Device, accel_device_t>);
static_assert(kHandleValue<accel::PhysicalDevice, accel_physical_device_t>);
static_assert(kHandleValue<accel::Backend, accel_backend_t>);
static_assert(kHandleValue<accel::Kernel, accel_kernel_t>);
static_assert(sizeof(accel::Stream) == sizeof(accel_stream_t) && sizeof(accel::Event) == sizeof(accel_event_t));
static_assert(sizeof(accel::Module) == sizeof(accel_module_t));
// Plain values: launch geometry, module sources, launch arguments.
static_assert(std::is_trivially_copyable_v<accel::Dim3> && std::is_nothrow_default_constructible_v<accel::Dim3>);
static_assert(std::is_convertible_v<uint32_t, accel::Dim3>);  // `256` means 256x1x1
static_assert(std::is_copy_constructible_v<accel::ModuleSource> &&
              std::is_nothrow_move_constructible_v<accel::ModuleSource>);
static_assert(std::is_copy_constructible_v<accel::Arg> && std::is_nothrow_move_constructible_v<accel::Arg>);

static_assert(std::is_base_of_v<std::runtime_error, accel::Error>);
static_assert(std::is_nothrow_copy_constructible_v<accel::Error>);

inline accel_status_t plain_callback() { return ACCEL_SUCCESS; }
inline void plain_release() {}

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

  // Memory interop.
  accel::Buffer imported = accel::Buffer::import_host(device, host.data(), host.size() * sizeof(float));
  accel::Buffer read_only =
      accel::Buffer::import_host(device, host.data(), host.size() * sizeof(float), ACCEL_IMPORT_FLAG_READ_ONLY);
  accel::Buffer released = accel::Buffer::import_host(device, host.data(), 64, [&counter] { ++counter; });
  accel::Buffer released_read_only =
      accel::Buffer::import_host(device, host.data(), 64, MoveOnlyCallable{}, ACCEL_IMPORT_FLAG_READ_ONLY);
  accel::Buffer released_by_function = accel::Buffer::import_host(device, host.data(), 64, &plain_release);
  accel_buffer_import_desc_t import_desc{};
  import_desc.stype = ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC;
  import_desc.struct_size = sizeof import_desc;
  import_desc.type = ACCEL_EXTERNAL_MEMORY_TYPE_DMA_BUF_FD;
  import_desc.handle = 3;
  import_desc.size = 4096;
  accel::Buffer from_fd = accel::Buffer::import(device, import_desc);
  accel_external_memory_t exported = imported.export_handle(ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER);
  void* host_address = imported.host_address();
  uint64_t device_address = imported.device_address();
  std::printf("%p %llu %llu %llu\n", host_address, static_cast<unsigned long long>(exported.handle),
              static_cast<unsigned long long>(device_address),
              static_cast<unsigned long long>(read_only.size() + released.size() + released_read_only.size() +
                                              released_by_function.size() + from_fd.size()));

  // Modules and kernels.
  static const accel_native_module_t table{};
  accel::Module natives(device, accel::ModuleSource::native(table), "compile");
  accel::Module unnamed(device, accel::ModuleSource::native(table));
  const char blob[] = "kernel void k() {}";
  std::vector<accel::ModuleSource> sources = {
      accel::ModuleSource::from_file(ACCEL_KERNEL_FORMAT_SPIRV_VULKAN, "scale.spv"),
      accel::ModuleSource::from_file(ACCEL_KERNEL_FORMAT_OPENCL_C, "scale.cl", "-DN=4"),
      accel::ModuleSource::from_data(ACCEL_KERNEL_FORMAT_OPENCL_C, blob, sizeof blob, "-DN=4"),
      accel::ModuleSource::from_data(ACCEL_KERNEL_FORMAT_PTX, blob, sizeof blob),
      accel::ModuleSource::native(table),
  };
  accel::Module several(device, sources, "several");
  accel::Module from_list(device, {sources[0], sources[4]});
  accel::Module adopted_module = accel::Module::adopt(several.release());
  unnamed = std::move(from_list);
  accel_module_properties_t module_props = natives.properties();
  std::vector<std::string> kernel_names = natives.kernel_names();
  accel::Kernel vadd = natives.kernel("vadd");
  accel_kernel_properties_t kernel_props = vadd.properties();
  accel_kernel_argument_info_t first = vadd.argument_info(0);
  std::vector<accel_kernel_argument_info_t> arguments = vadd.arguments();
  std::printf("%s %u %zu %s %u %s %s %u %d\n", module_props.name, module_props.kernel_count, kernel_names.size(),
              vadd.name().c_str(), kernel_props.argument_count, first.name, arguments.at(0).name,
              adopted_module.device().capabilities().compute_units + unnamed.properties().source_index,
              vadd == accel::Kernel() || vadd != natives.kernel("reduce") || !vadd);
  const uint32_t n = 1024;
  stream.launch(vadd, (n + 255) / 256, 256,
                {accel::Arg::buffer(buffer), accel::Arg::buffer(buffer, 0, 2048),
                 accel::Arg::buffer(buffer, 2048, accel::whole_size, ACCEL_ACCESS_WRITE), accel::Arg::scalar(n)});
  std::vector<accel::Arg> args = {accel::Arg::buffer(imported), accel::Arg::local(256), accel::Arg::scalar(1.0f),
                                  accel::Arg::scalar(uint64_t{n}), accel::Arg::device_address(device_address)};
  stream.launch(vadd, {4, 2}, {8, 8, 1}, args);
  stream.launch(vadd, accel::Dim3(), accel::Dim3(1, 1, 1), args.data(), args.size());
  stream.launch(natives.kernel("none"), 1, 1, {});
  accel_kernel_arg_t c_arg = args.at(0).c_arg();
  std::printf("%d %d\n", static_cast<int>(c_arg.kind), static_cast<int>(args.at(1).kind()));

  // Topology.
  accel_device_topology_t topology = device.topology();
  accel_device_link_t self_link = device.link(device);
  std::vector<accel_nic_properties_t> nics = instance.nics();
  accel_device_link_t nic_link = device.nic_link(0);
  std::vector<accel_domain_t> domains = device.domains();
  std::printf("%s %d %u %s %zu %d %zu %s\n", topology.local_cpus, topology.numa_node, self_link.link_count,
              self_link.fabric, nics.size(), static_cast<int>(nic_link.link_class), domains.size(), domains.at(0).id);

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
  accel::Kernel no_kernel;
  expect(!no_kernel && no_kernel.handle() == nullptr && no_kernel == accel::Kernel(), "a default Kernel is null");

  constexpr accel::Dim3 unit;
  constexpr accel::Dim3 line = 256;
  constexpr accel::Dim3 plane(4, 2);
  static_assert(unit.x == 1 && unit.y == 1 && unit.z == 1, "a default Dim3 is 1x1x1");
  static_assert(line.x == 256 && line.y == 1 && line.z == 1, "one number is x, the rest 1");
  static_assert(plane.x == 4 && plane.y == 2 && plane.z == 1, "two numbers are x and y");

  static const accel_native_module_t table{};
  const accel_module_source_t native = accel::ModuleSource::native(table).c_source();
  expect(native.stype == ACCEL_STRUCTURE_TYPE_MODULE_SOURCE && native.struct_size == sizeof native &&
             native.next == nullptr,
         "ModuleSource::c_source fills the header");
  expect(native.format == ACCEL_KERNEL_FORMAT_NATIVE_HOST && native.data == &table &&
             native.size == sizeof(accel_native_module_t) && native.path == nullptr && native.options == nullptr,
         "a native source points at the table, not a copy");
  const accel::ModuleSource file = accel::ModuleSource::from_file(ACCEL_KERNEL_FORMAT_SPIRV_VULKAN, "k.spv", "-O2");
  const accel_module_source_t from_file = file.c_source();
  expect(from_file.format == ACCEL_KERNEL_FORMAT_SPIRV_VULKAN && from_file.data == nullptr && from_file.size == 0 &&
             from_file.path != nullptr && std::strcmp(from_file.path, "k.spv") == 0 && from_file.options != nullptr &&
             std::strcmp(from_file.options, "-O2") == 0,
         "a file source has a path and options, no data");
  const char blob[] = "kernel void k() {}";
  const accel::ModuleSource data = accel::ModuleSource::from_data(ACCEL_KERNEL_FORMAT_OPENCL_C, blob, sizeof blob);
  const accel::ModuleSource copied = data;
  const accel_module_source_t from_data = copied.c_source();
  expect(from_data.format == ACCEL_KERNEL_FORMAT_OPENCL_C && from_data.data == blob && from_data.size == sizeof blob &&
             from_data.path == nullptr && from_data.options == nullptr,
         "a data source has data and size, no path; empty options are NULL");

  const uint32_t n = 0xC0FFEEu;
  const accel::Arg scalar = accel::Arg::scalar(n);
  const accel::Arg scalar_copy = scalar;
  const accel_kernel_arg_t c_scalar = scalar_copy.c_arg();
  uint32_t scalar_value = 0;
  if (c_scalar.value != nullptr) std::memcpy(&scalar_value, c_scalar.value, sizeof scalar_value);
  expect(c_scalar.stype == ACCEL_STRUCTURE_TYPE_KERNEL_ARG && c_scalar.struct_size == sizeof c_scalar &&
             c_scalar.next == nullptr,
         "Arg::c_arg fills the header");
  expect(c_scalar.kind == ACCEL_KERNEL_ARG_KIND_SCALAR && c_scalar.size == sizeof n && c_scalar.value != &n &&
             scalar_value == n && c_scalar.buffer == nullptr,
         "a scalar is copied into the Arg (and its copies)");
  const accel_kernel_arg_t c_local = accel::Arg::local(512).c_arg();
  expect(accel::Arg::local(512).kind() == ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY &&
             c_local.kind == ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY && c_local.size == 512 && c_local.value == nullptr,
         "local memory is a size");
  const accel_kernel_arg_t c_address = accel::Arg::device_address(0x1000).c_arg();
  expect(c_address.kind == ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS && c_address.device_address == 0x1000 &&
             c_address.size == 0 && c_address.value == nullptr,
         "a device address is the address");

  return failures;
}

}  // namespace hpp_compile

#endif  // ACCEL_TESTS_ABI_HPP_COMPILE_H_
