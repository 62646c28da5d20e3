// accel.hpp against the host backend: RAII ownership, exceptions that carry
// the status and the C message, host callbacks from lambdas, modules, kernels
// and launches, host-pointer import, topology.
#include <gtest/gtest.h>
#include <accel/accel.hpp>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "native_kernels.h"

namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The status and message `fn` throws as accel::Error; fails the test when it
// throws nothing.
template <class Fn>
accel::Error Thrown(Fn&& fn) {
  try {
    fn();
  } catch (const accel::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no accel::Error thrown";
  return accel::Error(ACCEL_SUCCESS, "");
}

accel::Module TestModule(accel::Device device) {
  return accel::Module(device, accel::ModuleSource::native(accel_test::TestModule()), "hpp kernels");
}

TEST(Hpp, RoundTripThroughOwners) {
  accel::Instance instance;
  std::vector<accel::Device> devices = instance.devices();
  ASSERT_FALSE(devices.empty());
  accel::Device device = devices[0];
  accel::Buffer a(device, 1024), b(device, 1024);
  accel::Stream stream(device);
  std::vector<uint32_t> in(256), out(256, 0);
  for (uint32_t i = 0; i < 256; ++i) in[i] = i * 3;
  stream.copy_from_host(in.data(), a, 1024);
  stream.copy(a, b, 1024);
  stream.copy_to_host(b, out.data(), 1024);
  std::atomic<int> ran{0};
  stream.host_callback([&ran] { ++ran; });
  stream.free(std::move(a));
  ASSERT_TRUE(stream.synchronize());
  EXPECT_EQ(out, in);
  EXPECT_EQ(ran.load(), 1);
}

TEST(Hpp, ErrorsCarryStatusAndMessage) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  try {
    accel::Buffer huge(device, uint64_t{1} << 62);
    FAIL() << "allocation past the device succeeded";
  } catch (const accel::Error& e) {
    EXPECT_EQ(e.status(), ACCEL_ERROR_RESOURCE_EXHAUSTED);
    EXPECT_STREQ(e.status_name(), "ACCEL_ERROR_RESOURCE_EXHAUSTED");
    EXPECT_NE(std::string(e.what()).find("accel_buffer_create: device 0 (host: "), std::string::npos) << e.what();
  }
}

TEST(Hpp, AsynchronousErrorThrowsFromSynchronizeAndSkippedCallablesAreFreed) {
  accel::Instance instance;
  accel::Stream stream(instance.devices().at(0));
  auto shared = std::make_shared<int>(1);
  stream.host_callback([]() -> accel_status_t { return ACCEL_ERROR_DEVICE_LOST; });
  stream.host_callback([shared] { *shared = 2; });  // skipped: must not run, must be freed
  try {
    stream.synchronize();
    FAIL() << "no asynchronous error";
  } catch (const accel::Error& e) {
    EXPECT_EQ(e.status(), ACCEL_ERROR_DEVICE_LOST);
    EXPECT_NE(std::string(e.what()).find("accel_stream_synchronize"), std::string::npos) << e.what();
  }
  EXPECT_EQ(*shared, 1);
  EXPECT_EQ(shared.use_count(), 1) << "the skipped callable was not destroyed";
  stream.clear_error();
  EXPECT_TRUE(stream.synchronize());
}

TEST(Hpp, LoaderReportAndCapabilities) {
  accel::Instance instance;
  auto report = instance.loader_report();
  ASSERT_FALSE(report.empty());
  bool host_loaded = false;
  for (const auto& entry : report) host_loaded = host_loaded || entry.backend_name == "host";
  EXPECT_TRUE(host_loaded);
  accel::Device device = instance.devices().at(0);
  EXPECT_EQ(device.info<uint64_t>(ACCEL_DEVICE_INFO_MEMORY_TOTAL), device.capabilities().memory_total);
  EXPECT_EQ(device.stable_id(), device.capabilities().stable_id);
  EXPECT_THROW(device.info<uint32_t>(ACCEL_DEVICE_INFO_MEMORY_TOTAL), accel::Error) << "size mismatch must throw";
}

TEST(Hpp, ModuleFromNativeSourceReportsItsKernelsAndTheirDeclarations) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  accel::Module module = TestModule(device);
  ASSERT_TRUE(module);
  accel_module_properties_t props = module.properties();
  EXPECT_EQ(props.format, ACCEL_KERNEL_FORMAT_NATIVE_HOST);
  EXPECT_EQ(props.available_formats, ACCEL_KERNEL_FORMAT_NATIVE_HOST);
  EXPECT_EQ(props.source_index, 0u);
  EXPECT_EQ(props.kernel_count, 4u);
  EXPECT_STREQ(props.name, "hpp kernels");
  EXPECT_EQ(module.device(), device);
  EXPECT_EQ(module.kernel_names(), (std::vector<std::string>{"vadd", "reduce", "fail_at", "fixed"}));

  accel::Kernel vadd = module.kernel("vadd");
  ASSERT_TRUE(vadd);
  EXPECT_EQ(module.kernel("vadd"), vadd) << "one name, one kernel";
  EXPECT_NE(module.kernel("reduce"), vadd);
  EXPECT_EQ(vadd.name(), "vadd");
  accel_kernel_properties_t kp = vadd.properties();
  EXPECT_EQ(kp.argument_count, 4u);
  EXPECT_EQ(kp.module, module.handle());
  EXPECT_EQ(kp.required_work_group_size[0], 0u);
  EXPECT_EQ(kp.max_work_group_size, device.capabilities().max_work_group_size);

  const std::vector<accel_kernel_argument_info_t> args = vadd.arguments();
  ASSERT_EQ(args.size(), 4u);
  const char* names[] = {"a", "b", "c", "n"};
  const accel_kernel_arg_kind_t kinds[] = {ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_KERNEL_ARG_KIND_BUFFER,
                                           ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_KERNEL_ARG_KIND_SCALAR};
  const accel_access_t access[] = {ACCEL_ACCESS_READ, ACCEL_ACCESS_READ, ACCEL_ACCESS_WRITE, ACCEL_ACCESS_READ};
  for (uint32_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_STREQ(args[i].name, names[i]);
    EXPECT_EQ(args[i].kind, kinds[i]);
    EXPECT_EQ(args[i].access, access[i]);
    EXPECT_EQ(args[i].size, i == 3 ? 4u : 0u);
    EXPECT_STREQ(vadd.argument_info(i).name, names[i]);
  }
  accel::Error out_of_range = Thrown([&] { vadd.argument_info(4); });
  EXPECT_EQ(out_of_range.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(out_of_range.what(), "'index' 4 is out of range")) << out_of_range.what();

  accel_kernel_properties_t fixed = module.kernel("fixed").properties();
  EXPECT_EQ(fixed.required_work_group_size[0], 8u);
  EXPECT_EQ(fixed.required_work_group_size[1], 1u);
  EXPECT_EQ(fixed.required_work_group_size[2], 1u);
  EXPECT_EQ(fixed.local_memory_size, 64u);
}

TEST(Hpp, ModuleIsDestroyedOnceByItsLastOwnerAndItsKernelsGoStale) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  accel::Module first = TestModule(device);
  const accel_module_t handle = first.handle();
  accel::Kernel vadd = first.kernel("vadd");
  accel::Module second = std::move(first);
  EXPECT_FALSE(first);  // NOLINT(bugprone-use-after-move): moved-from owners are empty
  EXPECT_EQ(second.handle(), handle);
  first = accel::Module();  // destroying the empty owner must not destroy the moved handle
  EXPECT_EQ(second.properties().kernel_count, 4u);
  EXPECT_EQ(vadd.name(), "vadd");
  {
    accel::Module third = accel::Module::adopt(second.release());
    EXPECT_FALSE(second);
    EXPECT_EQ(third.handle(), handle);
  }
  accel_module_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES;
  props.struct_size = sizeof(props);
  EXPECT_EQ(accel_module_get_properties(handle, &props), ACCEL_ERROR_INVALID_HANDLE) << "the destructor destroyed it";
  EXPECT_EQ(Thrown([&] { vadd.properties(); }).status(), ACCEL_ERROR_INVALID_HANDLE);
}

TEST(Hpp, UnknownKernelNameThrowsNotFoundListingTheKernels) {
  accel::Instance instance;
  accel::Module module = TestModule(instance.devices().at(0));
  accel::Error e = Thrown([&] { module.kernel("vmul"); });
  EXPECT_EQ(e.status(), ACCEL_ERROR_NOT_FOUND);
  EXPECT_STREQ(e.status_name(), "ACCEL_ERROR_NOT_FOUND");
  EXPECT_TRUE(Contains(e.what(), "accel_module_get_kernel: ")) << e.what();
  EXPECT_TRUE(Contains(e.what(), "module 'hpp kernels' has no kernel 'vmul'")) << e.what();
  EXPECT_TRUE(Contains(e.what(), "'vadd', 'reduce', 'fail_at', 'fixed'")) << e.what();
}

TEST(Hpp, NoExecutableFormatThrowsUnsupportedNamingBothSides) {
  accel::Instance instance;
  const char blob[] = "__kernel void k() {}";
  accel::Error e = Thrown([&] {
    accel::Module(instance.devices().at(0), accel::ModuleSource::from_data(ACCEL_KERNEL_FORMAT_PTX, blob, sizeof blob),
                  "ptx only");
  });
  EXPECT_EQ(e.status(), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_TRUE(Contains(e.what(), "the module 'ptx only' has ptx; the device executes native-host")) << e.what();
}

TEST(Hpp, SeveralSourcesLoadTheFirstTheDeviceExecutes) {
  accel::Instance instance;
  const char blob[] = "__kernel void k() {}";
  accel::Module module(instance.devices().at(0),
                       {accel::ModuleSource::from_data(ACCEL_KERNEL_FORMAT_OPENCL_C, blob, sizeof blob, "-DN=4"),
                        accel::ModuleSource::native(accel_test::TestModule())});
  accel_module_properties_t props = module.properties();
  EXPECT_EQ(props.format, ACCEL_KERNEL_FORMAT_NATIVE_HOST);
  EXPECT_EQ(props.source_index, 1u);
  EXPECT_EQ(props.available_formats, ACCEL_KERNEL_FORMAT_NATIVE_HOST | ACCEL_KERNEL_FORMAT_OPENCL_C);
  EXPECT_STREQ(props.name, "") << "no name given";
}

TEST(Hpp, LaunchRunsVectorAddWithCorrectResults) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  accel::Module module = TestModule(device);
  accel::Kernel vadd = module.kernel("vadd");
  const uint32_t n = 1000;
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(3 * i) + 0.5f;
  }
  const uint64_t bytes = n * sizeof(float);
  accel::Buffer da(device, bytes), db(device, bytes), dc(device, bytes);
  accel::Stream stream(device);
  stream.copy_from_host(a.data(), da, bytes);
  stream.copy_from_host(b.data(), db, bytes);
  stream.fill(dc, 0.0f);
  stream.launch(vadd, (n + 63) / 64, 64,
                {accel::Arg::buffer(da), accel::Arg::buffer(db), accel::Arg::buffer(dc), accel::Arg::scalar(n)});
  stream.copy_to_host(dc, c.data(), bytes);
  ASSERT_TRUE(stream.synchronize());
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;

  // A 2-D geometry through the vector overload; the kernel sees only the
  // bound halves, so half the work-items add the second half of the inputs.
  const uint32_t half = n / 2;
  const uint64_t half_bytes = half * sizeof(float);
  stream.fill(dc, 0.0f);
  std::vector<accel::Arg> args = {accel::Arg::buffer(da, half_bytes), accel::Arg::buffer(db, half_bytes, half_bytes),
                                  accel::Arg::buffer(dc, 0, half_bytes, ACCEL_ACCESS_WRITE), accel::Arg::scalar(half)};
  stream.launch(vadd, {4, 2}, {8, 8}, args);
  stream.copy_to_host(dc, c.data(), bytes);
  ASSERT_TRUE(stream.synchronize());
  for (uint32_t i = 0; i < half; ++i) ASSERT_EQ(c[i], a[half + i] + b[half + i]) << "element " << i;
  for (uint32_t i = half; i < n; ++i) ASSERT_EQ(c[i], 0.0f) << "element " << i << " is past the bound range";
}

TEST(Hpp, PreparedLaunchRunsOnEachEnqueueAndRefusesWhatALaunchRefuses) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  accel::Module module = TestModule(device);
  accel::Kernel vadd = module.kernel("vadd");
  const uint32_t n = 256;
  const uint64_t bytes = n * sizeof(float);
  std::vector<float> ones(n, 1.0f), c(n, -1.0f);
  accel::Buffer da(device, bytes), dc(device, bytes);
  accel::Stream stream(device);
  stream.copy_from_host(ones.data(), da, bytes);
  stream.fill(dc, 0.0f);
  // c = a + c, five times.
  accel::PreparedLaunch step(
      vadd, n / 64, 64,
      {accel::Arg::buffer(da), accel::Arg::buffer(dc), accel::Arg::buffer(dc), accel::Arg::scalar(n)});
  for (int i = 0; i < 5; ++i) stream.launch(step);
  stream.copy_to_host(dc, c.data(), bytes);
  ASSERT_TRUE(stream.synchronize());
  EXPECT_EQ(c, std::vector<float>(n, 5.0f));
  accel::Error count = Thrown([&] { accel::PreparedLaunch bad(vadd, 1, 16, {accel::Arg::buffer(da)}); });
  EXPECT_EQ(count.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(count.what(), "accel_kernel_prepare_launch: 'desc->arg_count' is 1")) << count.what();
}

TEST(Hpp, LaunchPassesLocalMemoryForTheReduction) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  accel::Module module = TestModule(device);
  const uint64_t n = 1000;
  const uint32_t block = 64, groups = 16;
  std::vector<uint64_t> in(n);
  for (uint64_t i = 0; i < n; ++i) in[i] = i * i;
  accel::Buffer din(device, n * sizeof(uint64_t)), dpartial(device, groups * sizeof(uint64_t));
  accel::Stream stream(device);
  stream.copy_from_host(in.data(), din, din.size());
  stream.launch(module.kernel("reduce"), groups, block,
                {accel::Arg::buffer(din), accel::Arg::buffer(dpartial), accel::Arg::local(block * sizeof(uint64_t)),
                 accel::Arg::scalar(n)});
  std::vector<uint64_t> partial(groups);
  stream.copy_to_host(dpartial, partial.data(), dpartial.size());
  ASSERT_TRUE(stream.synchronize());
  uint64_t sum = 0, expected = 0;
  for (uint64_t p : partial) sum += p;
  for (uint64_t v : in) expected += v;
  EXPECT_EQ(sum, expected);
  EXPECT_EQ(partial[0], [&] {
    uint64_t first = 0;
    for (uint64_t i = 0; i < block; ++i) first += in[i];
    return first;
  }());
}

TEST(Hpp, WrongArgumentCountThrowsInvalidArgumentNamingTheArgument) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  accel::Module module = TestModule(device);
  accel::Kernel vadd = module.kernel("vadd");
  accel::Buffer buffer(device, 64);
  accel::Stream stream(device);
  const uint32_t n = 16;
  accel::Error count = Thrown([&] {
    stream.launch(vadd, 1, 16, {accel::Arg::buffer(buffer), accel::Arg::buffer(buffer), accel::Arg::scalar(n)});
  });
  EXPECT_EQ(count.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(count.what(), "accel_stream_launch_kernel: 'desc->arg_count' is 3")) << count.what();
  EXPECT_TRUE(Contains(count.what(), "kernel 'vadd' takes 4 argument(s) (BUFFER a, BUFFER b, BUFFER c, SCALAR n)"))
      << count.what();

  accel::Error none = Thrown([&] { stream.launch(vadd, 1, 16, {}); });
  EXPECT_EQ(none.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(none.what(), "'desc->arg_count' is 0")) << none.what();

  accel::Error kind = Thrown([&] {
    stream.launch(
        vadd, 1, 16,
        {accel::Arg::buffer(buffer), accel::Arg::scalar(n), accel::Arg::buffer(buffer), accel::Arg::scalar(n)});
  });
  EXPECT_EQ(kind.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(
      Contains(kind.what(), "'desc->args[1]' is a SCALAR argument, but kernel 'vadd' declares argument 1 ('b')"))
      << kind.what();

  accel::Error size = Thrown([&] {
    stream.launch(vadd, 1, 16,
                  {accel::Arg::buffer(buffer), accel::Arg::buffer(buffer), accel::Arg::buffer(buffer),
                   accel::Arg::scalar(uint64_t{n})});
  });
  EXPECT_EQ(size.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(size.what(), "'desc->args[3].size' is 8 bytes")) << size.what();
  EXPECT_TRUE(stream.synchronize()) << "rejected launches leave no error on the stream";
}

TEST(Hpp, LaunchPassesEachDimensionOfTheGeometry) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  accel::Module module = TestModule(device);
  accel::Kernel fixed = module.kernel("fixed");
  accel::Buffer data(device, 64 * sizeof(uint32_t));
  accel::Stream stream(device);
  accel::Error block = Thrown([&] { stream.launch(fixed, 8, {8, 1, 2}, {accel::Arg::buffer(data)}); });
  EXPECT_EQ(block.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(block.what(), "'desc->block' is 8x1x2, but kernel 'fixed' requires 8x1x1")) << block.what();
  accel::Error grid = Thrown([&] { stream.launch(fixed, {8, 1, 0}, 8, {accel::Arg::buffer(data)}); });
  EXPECT_EQ(grid.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(grid.what(), "'desc->grid[2]' (z) is 0")) << grid.what();

  stream.fill(data, uint32_t{0});
  stream.launch(fixed, 8, 8, {accel::Arg::buffer(data)});
  std::vector<uint32_t> out(64, 0);
  stream.copy_to_host(data, out.data(), data.size());
  ASSERT_TRUE(stream.synchronize());
  EXPECT_EQ(out, std::vector<uint32_t>(64, 1u));
}

TEST(Hpp, AFailingWorkGroupThrowsFromSynchronize) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  accel::Module module = TestModule(device);
  accel::Stream stream(device);
  stream.launch(module.kernel("fail_at"), 16, 1, {accel::Arg::scalar(uint32_t{5})});
  accel::Error e = Thrown([&] { stream.synchronize(); });
  EXPECT_EQ(e.status(), ACCEL_ERROR_INTERNAL);
  EXPECT_TRUE(Contains(e.what(), "launch kernel 'fail_at'")) << e.what();
  EXPECT_TRUE(Contains(e.what(), "work-group (5,0,0)")) << e.what();
  stream.clear_error();
  stream.launch(module.kernel("fail_at"), 16, 1, {accel::Arg::scalar(uint32_t{1000})});
  EXPECT_TRUE(stream.synchronize());
}

TEST(Hpp, HostPointerImportIsZeroCopyAndReleasedOnce) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  std::vector<uint32_t> memory(256);
  for (uint32_t i = 0; i < 256; ++i) memory[i] = i;
  const uint64_t bytes = memory.size() * sizeof(uint32_t);
  auto released = std::make_shared<int>(0);
  {
    accel::Buffer buffer = accel::Buffer::import_host(device, memory.data(), bytes, [released] { ++*released; });
    ASSERT_TRUE(buffer);
    EXPECT_EQ(buffer.size(), bytes);
    EXPECT_EQ(buffer.properties().size, bytes);
    EXPECT_EQ(buffer.properties().memory_kind, ACCEL_MEMORY_KIND_HOST_PINNED);
    EXPECT_EQ(buffer.host_address(), memory.data()) << "the buffer's bytes are the caller's bytes";
    EXPECT_EQ(buffer.device_address(), reinterpret_cast<uint64_t>(memory.data()));
    accel_external_memory_t exported = buffer.export_handle(ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER);
    EXPECT_EQ(exported.type, ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER);
    EXPECT_EQ(exported.handle, reinterpret_cast<uint64_t>(memory.data()));
    EXPECT_EQ(exported.size, bytes);

    accel::Stream stream(device);
    stream.fill(buffer, uint32_t{0xABCD1234u}, 0, 64);
    ASSERT_TRUE(stream.synchronize());
    for (int i = 0; i < 16; ++i) EXPECT_EQ(memory[i], 0xABCD1234u) << "the fill ran on the caller's memory";
    EXPECT_EQ(memory[16], 16u);

    accel::Buffer moved = std::move(buffer);
    EXPECT_FALSE(buffer);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(moved.size(), bytes);
    EXPECT_EQ(*released, 0) << "released while the buffer lives";
  }
  EXPECT_EQ(*released, 1) << "released once, when the last owner went";
  EXPECT_EQ(released.use_count(), 1) << "the release callable was destroyed";

  accel::Buffer plain = accel::Buffer::import_host(device, memory.data(), bytes, ACCEL_IMPORT_FLAG_READ_ONLY);
  EXPECT_EQ(plain.host_address(), memory.data());
  accel::Stream stream(device);
  accel::Error read_only = Thrown([&] { stream.fill(plain, uint32_t{0}); });
  EXPECT_EQ(read_only.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(read_only.what(), "read-only")) << read_only.what();
}

TEST(Hpp, FailedImportNeverRunsTheReleaseCallable) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  uint32_t word = 0;
  auto released = std::make_shared<int>(0);
  accel::Error e = Thrown([&] { accel::Buffer::import_host(device, &word, 0, [released] { ++*released; }); });
  EXPECT_EQ(e.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(e.what(), "accel_buffer_import: 'desc->size' is 0")) << e.what();
  EXPECT_EQ(*released, 0);
  EXPECT_EQ(released.use_count(), 1) << "the callable was destroyed without being called";
}

TEST(Hpp, ImportAndExportOfTypesTheHostLacksThrowUnsupported) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  auto desc = accel::detail::sized<accel_buffer_import_desc_t>(ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC);
  desc.type = ACCEL_EXTERNAL_MEMORY_TYPE_DMA_BUF_FD;
  desc.handle = 3;
  desc.size = 4096;
  accel::Error import = Thrown([&] { accel::Buffer::import(device, desc); });
  EXPECT_EQ(import.status(), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_TRUE(Contains(import.what(), "accel_buffer_import: device 0")) << import.what();

  uint32_t words[16] = {};
  accel::Buffer buffer = accel::Buffer::import_host(device, words, sizeof words);
  accel::Error exported = Thrown([&] { buffer.export_handle(ACCEL_EXTERNAL_MEMORY_TYPE_OPENCL_MEM); });
  EXPECT_EQ(exported.status(), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_TRUE(Contains(exported.what(), "accel_buffer_export: ")) << exported.what();
}

TEST(Hpp, TopologyOfTheHostDevice) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  const accel_device_capabilities_t caps = device.capabilities();
  const accel_device_topology_t topology = device.topology();
  EXPECT_EQ(topology.stype, ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY);
  EXPECT_EQ(topology.struct_size, sizeof(topology));
  EXPECT_STREQ(topology.pci_bus_id, "") << "the CPU has no PCI address";
  EXPECT_EQ(topology.local_cpu_count, caps.compute_units);
  EXPECT_GT(std::strlen(topology.local_cpus), 0u);
  EXPECT_EQ(topology.numa_node, caps.numa_node);

  const accel_device_link_t self = device.link(device);
  EXPECT_EQ(self.link_class, ACCEL_LINK_CLASS_SELF);
  EXPECT_EQ(self.peer_access, 1u);

  const std::vector<accel_domain_t> domains = device.domains();
  ASSERT_EQ(domains.size(), topology.domain_count);
  ASSERT_FALSE(domains.empty());
  EXPECT_EQ(domains[0].level, ACCEL_DOMAIN_LEVEL_NODE);
  EXPECT_GT(std::strlen(domains[0].id), 0u);

  const std::vector<accel_nic_properties_t> nics = instance.nics();
  for (uint32_t i = 0; i < nics.size(); ++i) {
    EXPECT_EQ(nics[i].stype, ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES);
    auto expected = accel::detail::sized<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
    ASSERT_EQ(accel_device_get_nic_link(device.handle(), i, &expected), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(device.nic_link(i).link_class, expected.link_class) << nics[i].name;
  }
  if (topology.nearest_nic >= 0) {
    ASSERT_LT(static_cast<size_t>(topology.nearest_nic), nics.size());
    EXPECT_NE(device.nic_link(static_cast<uint32_t>(topology.nearest_nic)).link_class, ACCEL_LINK_CLASS_UNKNOWN);
  } else {
    EXPECT_TRUE(nics.empty());
  }
  accel::Error past = Thrown([&] { device.nic_link(static_cast<uint32_t>(nics.size())); });
  EXPECT_EQ(past.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(past.what(), "'nic_index'")) << past.what();

  accel::Instance other;
  accel::Error apart = Thrown([&] { device.link(other.devices().at(0)); });
  EXPECT_EQ(apart.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(apart.what(), "different instances")) << apart.what();
}

}  // namespace
