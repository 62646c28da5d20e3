// The Vulkan backend through Accel's C API on lavapipe (VK_DRIVER_FILES, set
// by tests/vulkan/CMakeLists.txt): what the conformance suite does not reach —
// fixed work-group sizes, scalar packing in push constants and in a uniform
// buffer, device addresses, several LOCAL_MEMORY arguments, modules of several
// entry points, refusals with their messages, staging copies and mapping for
// memory that is not host-visible (ACCEL_VULKAN_STAGING=always), fills at odd
// offsets, bindings past maxStorageBufferRange, and the caches under
// ACCEL_CACHE_DIR.
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gate.h"
#include "native_kernels.h"
#include "test_util.h"

namespace {

using accel_test::BufferArg;
using accel_test::BufferDesc;
using accel_test::Launch;
using accel_test::LocalArg;
using accel_test::ModuleDesc;
using accel_test::ScopedInstance;

constexpr uint32_t kPipelineCacheHeaderVersionOne = 1;  // VK_PIPELINE_CACHE_HEADER_VERSION_ONE
const std::filesystem::path kShaders = ACCEL_VULKAN_TEST_SHADERS;
const std::filesystem::path kCorpus = std::filesystem::path(ACCEL_CONFORMANCE_CORPUS_DIR) / "spirv-vulkan";

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

accel_module_source_t SpirvSource(const std::string& bytes) {
  return accel_test::ModuleSource(ACCEL_KERNEL_FORMAT_SPIRV_VULKAN, bytes.data(), bytes.size());
}

accel_kernel_arg_t Scalar(const void* value, uint64_t size) {
  accel_kernel_arg_t a{};
  a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
  a.struct_size = sizeof(a);
  a.kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  a.value = value;
  a.size = size;
  return a;
}

accel_kernel_arg_t Address(uint64_t address) {
  accel_kernel_arg_t a{};
  a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
  a.struct_size = sizeof(a);
  a.kind = ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS;
  a.device_address = address;
  return a;
}

// One instance over the environment's backends (ACCEL_BACKENDS=vulkan), its Vulkan device and one stream; what a
// test creates is destroyed with the fixture.
class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    instance_ = std::make_unique<ScopedInstance>(nullptr);
    device_ = instance_->DeviceOf("vulkan");
    ASSERT_NE(device_, nullptr) << "no Vulkan device: is VK_DRIVER_FILES lavapipe's?";
    caps_ = ScopedInstance::Capabilities(device_);
    ASSERT_EQ(accel_stream_create(device_, nullptr, &stream_), ACCEL_SUCCESS) << accel_last_error();
  }
  void TearDown() override {
    if (stream_ != nullptr) {
      EXPECT_EQ(accel_stream_destroy(stream_), ACCEL_SUCCESS) << accel_last_error();
    }
    for (accel_buffer_t b : buffers_) EXPECT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS) << accel_last_error();
    for (accel_module_t m : modules_) EXPECT_EQ(accel_module_destroy(m), ACCEL_SUCCESS) << accel_last_error();
    instance_.reset();
  }

  accel_module_t Module(const std::filesystem::path& path) {
    const std::string bytes = ReadFile(path);
    EXPECT_FALSE(bytes.empty()) << path;
    accel_module_source_t source = SpirvSource(bytes);
    const std::string name = path.stem().string();
    accel_module_desc_t desc = ModuleDesc(&source, 1, name.c_str());
    accel_module_t m = nullptr;
    EXPECT_EQ(accel_module_create(device_, &desc, &m), ACCEL_SUCCESS) << accel_last_error();
    if (m != nullptr) modules_.push_back(m);
    return m;
  }
  accel_kernel_t Kernel(accel_module_t module, const char* name) {
    accel_kernel_t k = nullptr;
    EXPECT_EQ(accel_module_get_kernel(module, name, &k), ACCEL_SUCCESS) << accel_last_error();
    return k;
  }
  accel_buffer_t Buffer(uint64_t bytes, accel_memory_kind_t kind = ACCEL_MEMORY_KIND_DEVICE) {
    accel_buffer_desc_t d = BufferDesc(bytes, kind);
    accel_buffer_t b = nullptr;
    EXPECT_EQ(accel_buffer_create(device_, &d, &b), ACCEL_SUCCESS) << accel_last_error();
    if (b != nullptr) buffers_.push_back(b);
    return b;
  }
  void Put(accel_buffer_t b, const std::vector<uint32_t>& words, uint64_t offset = 0) {
    ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, words.data(), b, offset, words.size() * 4), ACCEL_SUCCESS)
        << accel_last_error();
    ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  }
  std::vector<uint32_t> Get(accel_buffer_t b, uint64_t words, uint64_t offset = 0) {
    std::vector<uint32_t> out(words, 0);
    EXPECT_EQ(accel_stream_copy_buffer_to_host(stream_, b, offset, out.data(), words * 4), ACCEL_SUCCESS)
        << accel_last_error();
    EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
    return out;
  }
  accel_status_t Run(accel_kernel_t k, const uint32_t (&grid)[3], const uint32_t (&block)[3],
                     const std::vector<accel_kernel_arg_t>& args) {
    accel_launch_desc_t d = Launch(grid, block, args.data(), static_cast<uint32_t>(args.size()));
    const accel_status_t s = accel_stream_launch_kernel(stream_, k, &d);
    if (s != ACCEL_SUCCESS) return s;
    return accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE);
  }

  // Fills, buffer copies and launches interleaved on one stream, behind a gate when `queued` (the worker records them
  // into shared command buffers) or on an idle stream (each runs inline or is recorded by this thread): every one
  // must see the writes of those before it and none of those after it.
  void MixedOperationsKeepStreamOrder(bool queued) {
    accel_module_t fill_m = Module(kCorpus / "fill_u32.spv");
    ASSERT_NE(fill_m, nullptr);
    accel_kernel_t fill = Kernel(fill_m, "fill_u32");
    constexpr uint32_t n = 256;
    accel_buffer_t a = Buffer(n * 4);
    accel_buffer_t b = Buffer(n * 4);
    accel_buffer_t c = Buffer(n * 4);
    ASSERT_TRUE(a != nullptr && b != nullptr && c != nullptr);
    for (accel_buffer_t x : {a, b, c}) Put(x, std::vector<uint32_t>(n, 0));
    const uint32_t five = 5;
    const uint32_t one = 1;
    const uint32_t seven = 7;
    const uint8_t byte = 0xab;
    std::unique_ptr<accel_test::Gate> gate;
    if (queued) {
      gate = std::make_unique<accel_test::Gate>();
      ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, accel_test::Gate::Wait, gate.get()), ACCEL_SUCCESS);
    }
    const std::vector<accel_kernel_arg_t> args = {BufferArg(a), Scalar(&five, 4), Scalar(&n, 4)};
    accel_launch_desc_t d = Launch({n / 64, 1, 1}, {64, 1, 1}, args.data(), 3);
    EXPECT_EQ(accel_stream_fill_buffer(stream_, a, 0, n * 4, &one, 4), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_stream_fill_buffer(stream_, b, 0, n * 4, &one, 4), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_stream_launch_kernel(stream_, fill, &d), ACCEL_SUCCESS) << accel_last_error();  // a = 5
    EXPECT_EQ(accel_stream_copy_buffer(stream_, a, 0, b, 16, n * 4 - 32), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_stream_fill_buffer(stream_, a, 0, n * 4, &seven, 4), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_stream_copy_buffer(stream_, b, 0, c, 0, n * 4), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_stream_fill_buffer(stream_, c, 5, 2, &byte, 1), ACCEL_SUCCESS) << accel_last_error();
    // Host copies in the middle: a read of c as it is now, then a write of its last four words.
    std::vector<uint32_t> c_seen(n, 0);
    const std::vector<uint32_t> nines(4, 9);
    EXPECT_EQ(accel_stream_copy_buffer_to_host(stream_, c, 0, c_seen.data(), n * 4), ACCEL_SUCCESS)
        << accel_last_error();
    EXPECT_EQ(accel_stream_copy_host_to_buffer(stream_, nines.data(), c, n * 4 - 16, 16), ACCEL_SUCCESS)
        << accel_last_error();
    EXPECT_EQ(accel_stream_fill_buffer(stream_, b, 0, n * 4, &seven, 4), ACCEL_SUCCESS) << accel_last_error();
    void* c_host = nullptr;  // host-visible buffers only: nothing behind the gate may have run before it opens
    if (gate != nullptr && accel_buffer_get_host_address(c, &c_host) == ACCEL_SUCCESS) {
      std::vector<uint32_t> early(n, 1);
      std::memcpy(early.data(), c_host, n * 4);
      EXPECT_EQ(early, std::vector<uint32_t>(n, 0)) << "an operation queued behind a running callback ran before it";
    }
    if (gate != nullptr) gate->Open();
    ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(Get(a, n), std::vector<uint32_t>(n, 7)) << "the last fill of a ran after the launch and the copy";
    EXPECT_EQ(Get(b, n), std::vector<uint32_t>(n, 7));
    std::vector<uint32_t> expect(n, 5);  // b before its last fill: 1 around the copied 5s
    for (uint32_t i : {0u, 1u, 2u, 3u, n - 4, n - 3, n - 2, n - 1}) expect[i] = 1;
    uint8_t* bytes = reinterpret_cast<uint8_t*>(expect.data());
    bytes[5] = bytes[6] = byte;
    EXPECT_EQ(c_seen, expect) << "a copy or fill ran out of stream order around a read to the host";
    for (uint32_t i = n - 4; i < n; ++i) expect[i] = 9;
    EXPECT_EQ(Get(c, n), expect) << "a write from the host ran out of stream order";
    accel_copy_statistics_t st{};
    st.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
    st.struct_size = sizeof(st);
    ASSERT_EQ(accel_stream_get_copy_statistics(stream_, &st), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(st.local_copies, 2u);
    EXPECT_EQ(st.local_bytes, uint64_t{n * 4 - 32 + n * 4});
  }

  std::unique_ptr<ScopedInstance> instance_;
  accel_device_t device_ = nullptr;
  accel_device_capabilities_t caps_{};
  accel_stream_t stream_ = nullptr;
  std::vector<accel_buffer_t> buffers_;
  std::vector<accel_module_t> modules_;
};

TEST_F(VulkanTest, LavapipeIsAnAccessPathOfTheHostCpu) {
  EXPECT_EQ(caps_.kind, ACCEL_DEVICE_KIND_CPU);
  EXPECT_EQ(caps_.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE, 0u) << "lavapipe's UUID is the same on every machine";
  EXPECT_EQ(std::string(caps_.stable_id).rfind("cpu-", 0), 0u) << caps_.stable_id;
  EXPECT_EQ(caps_.kernel_formats, ACCEL_KERNEL_FORMAT_SPIRV_VULKAN);
}

TEST_F(VulkanTest, FixedLocalSizeIsTheRequiredWorkGroupSize) {
  accel_module_t m = Module(kShaders / "fixed_size.spv");
  ASSERT_NE(m, nullptr);
  accel_kernel_t k = Kernel(m, "fixed_size");
  accel_kernel_properties_t p{};
  p.stype = ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES;
  p.struct_size = sizeof(p);
  ASSERT_EQ(accel_kernel_get_properties(k, &p), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(p.required_work_group_size[0], 64u);
  EXPECT_EQ(p.required_work_group_size[1], 1u);
  EXPECT_EQ(p.required_work_group_size[2], 1u);
  EXPECT_EQ(p.max_work_group_size, 64u);
  accel_buffer_t out = Buffer(200 * 4);
  Put(out, std::vector<uint32_t>(200, 0xDEADBEEF));
  const uint32_t n = 150;
  const std::vector<accel_kernel_arg_t> args = {BufferArg(out), Scalar(&n, 4)};
  EXPECT_EQ(Run(k, {3, 1, 1}, {32, 1, 1}, args), ACCEL_ERROR_INVALID_ARGUMENT) << "a block other than 64x1x1";
  EXPECT_TRUE(Contains(accel_last_error(), "64x1x1")) << accel_last_error();
  ASSERT_EQ(Run(k, {3, 1, 1}, {64, 1, 1}, args), ACCEL_SUCCESS) << accel_last_error();
  const std::vector<uint32_t> got = Get(out, 200);
  for (uint32_t i = 0; i < 200; ++i) ASSERT_EQ(got[i], i < n ? i : 0xDEADBEEF) << "element " << i;
}

TEST_F(VulkanTest, ScalarsOfEverySizeLandAtTheirDeclaredOffsets) {
  accel_module_t m = Module(kShaders / "packing.spv");
  ASSERT_NE(m, nullptr);
  accel_kernel_t k = Kernel(m, "packing");
  const char* names[] = {"out_", "a", "b", "c", "d", "e"};
  const uint32_t sizes[] = {0, 4, 4, 8, 16, 4};
  for (uint32_t i = 0; i < 6; ++i) {
    accel_kernel_argument_info_t info{};
    info.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO;
    info.struct_size = sizeof(info);
    ASSERT_EQ(accel_kernel_get_argument_info(k, i, &info), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_STREQ(info.name, names[i]);
    EXPECT_EQ(info.size, sizes[i]) << names[i];
  }
  accel_buffer_t out = Buffer(16 * 4);
  Put(out, std::vector<uint32_t>(16, 0));
  const uint32_t a = 11;
  const float b = 2.5f;
  const uint32_t c[2] = {33, 44};
  const float d[4] = {1.0f, -2.0f, 3.5f, 8.0f};
  const uint32_t e = 55;
  ASSERT_EQ(Run(k, {1, 1, 1}, {1, 1, 1},
                {BufferArg(out), Scalar(&a, 4), Scalar(&b, 4), Scalar(c, 8), Scalar(d, 16), Scalar(&e, 4)}),
            ACCEL_SUCCESS)
      << accel_last_error();
  const std::vector<uint32_t> got = Get(out, 9);
  uint32_t bits[5];
  std::memcpy(&bits[0], &b, 4);
  std::memcpy(&bits[1], d, 16);
  EXPECT_EQ(got, (std::vector<uint32_t>{a, bits[0], c[0], c[1], bits[1], bits[2], bits[3], bits[4], e}));
}

TEST_F(VulkanTest, ScalarsInAUniformBlockReachTheKernel) {
  accel_module_t m = Module(kShaders / "uniform_scalars.spv");
  ASSERT_NE(m, nullptr);
  accel_kernel_t k = Kernel(m, "uniform_scalars");
  accel_buffer_t out = Buffer(100 * 4);
  Put(out, std::vector<uint32_t>(100, 0));
  for (uint32_t value : {1000u, 5000u}) {  // twice: the stream's uniform buffer is rewritten for each launch
    const uint32_t n = 90;
    ASSERT_EQ(Run(k, {4, 1, 1}, {32, 1, 1}, {BufferArg(out), Scalar(&value, 4), Scalar(&n, 4)}), ACCEL_SUCCESS)
        << accel_last_error();
    const std::vector<uint32_t> got = Get(out, 100);
    for (uint32_t i = 0; i < 100; ++i) ASSERT_EQ(got[i], i < n ? value + i : 0u) << "element " << i;
  }
}

// Launches queued behind a busy stream share command buffers (README.md, "Hot path"): each still sees the writes of
// the launches before it (a fill, then a copy of its result, then a fill over the copy's source) and its own scalars
// in the uniform buffer the launches rewrite in turn; more launches than one command buffer takes go on in the next.
TEST_F(VulkanTest, QueuedLaunchesKeepStreamOrderWithinASubmission) {
  accel_module_t fill_m = Module(kCorpus / "fill_u32.spv");
  accel_module_t copy_m = Module(kCorpus / "copy_offset_u32.spv");
  accel_module_t uniform_m = Module(kShaders / "uniform_scalars.spv");
  ASSERT_NE(fill_m, nullptr);
  ASSERT_NE(copy_m, nullptr);
  ASSERT_NE(uniform_m, nullptr);
  accel_kernel_t fill = Kernel(fill_m, "fill_u32");
  accel_kernel_t copy = Kernel(copy_m, "copy_offset_u32");
  accel_kernel_t uniform = Kernel(uniform_m, "uniform_scalars");
  constexpr uint32_t n = 256;
  constexpr int kUniformLaunches = 40;  // more than one command buffer records
  accel_buffer_t a = Buffer(n * 4);
  accel_buffer_t b = Buffer(n * 4);
  accel_buffer_t c = Buffer(n * 4);
  std::vector<accel_buffer_t> outs;
  for (int i = 0; i < kUniformLaunches; ++i) outs.push_back(Buffer(n * 4));
  for (accel_buffer_t x : {a, b, c}) Put(x, std::vector<uint32_t>(n, 0));
  for (accel_buffer_t x : outs) Put(x, std::vector<uint32_t>(n, 0));
  const uint32_t five = 5;
  const uint32_t six = 6;
  const uint32_t zero = 0;
  const auto launch = [&](accel_kernel_t k, const std::vector<accel_kernel_arg_t>& args) {
    accel_launch_desc_t d = Launch({n / 64, 1, 1}, {64, 1, 1}, args.data(), static_cast<uint32_t>(args.size()));
    EXPECT_EQ(accel_stream_launch_kernel(stream_, k, &d), ACCEL_SUCCESS) << accel_last_error();
  };
  std::vector<uint32_t> values(kUniformLaunches);
  {
    accel_test::Gate gate;  // everything below queues behind it, so that the worker finds it all at once
    ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, accel_test::Gate::Wait, &gate), ACCEL_SUCCESS);
    launch(fill, {BufferArg(a), Scalar(&five, 4), Scalar(&n, 4)});
    launch(copy, {BufferArg(a), BufferArg(b), Scalar(&zero, 4), Scalar(&zero, 4), Scalar(&n, 4)});  // b = 5
    launch(fill, {BufferArg(a), Scalar(&six, 4), Scalar(&n, 4)});  // after the copy read a
    launch(copy, {BufferArg(b), BufferArg(c), Scalar(&zero, 4), Scalar(&zero, 4), Scalar(&n, 4)});  // c = 5
    for (int i = 0; i < kUniformLaunches; ++i) {
      values[i] = 1000 * (i + 1);
      launch(uniform, {BufferArg(outs[i]), Scalar(&values[i], 4), Scalar(&n, 4)});
    }
    gate.Open();
    ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  }
  EXPECT_EQ(Get(a, n), std::vector<uint32_t>(n, 6));
  EXPECT_EQ(Get(b, n), std::vector<uint32_t>(n, 5)) << "the copy ran after the first fill and before the second";
  EXPECT_EQ(Get(c, n), std::vector<uint32_t>(n, 5)) << "the second copy read what the first wrote";
  for (int i = 0; i < kUniformLaunches; ++i) {
    const std::vector<uint32_t> got = Get(outs[i], n);
    for (uint32_t j = 0; j < n; ++j) ASSERT_EQ(got[j], values[i] + j) << "launch " << i << ", element " << j;
  }
}

TEST_F(VulkanTest, DeviceAddressArgumentsReachTheBuffer) {
  ASSERT_NE(caps_.features & ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES, 0u) << "lavapipe has bufferDeviceAddress";
  accel_module_t m = Module(kShaders / "device_address.spv");
  ASSERT_NE(m, nullptr);
  accel_kernel_t k = Kernel(m, "device_address");
  accel_buffer_t target = Buffer(64 * 4);
  Put(target, std::vector<uint32_t>(64, 1));
  uint64_t address = 0;
  ASSERT_EQ(accel_buffer_get_device_address(target, &address), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_NE(address, 0u);
  const uint32_t n = 40;
  ASSERT_EQ(Run(k, {2, 1, 1}, {32, 1, 1}, {Address(address), Scalar(&n, 4)}), ACCEL_SUCCESS) << accel_last_error();
  const std::vector<uint32_t> got = Get(target, 64);
  for (uint32_t i = 0; i < 64; ++i) ASSERT_EQ(got[i], i < n ? 7 * i : 1u) << "element " << i;
}

TEST_F(VulkanTest, EachLocalMemoryArgumentSizesItsOwnArray) {
  accel_module_t m = Module(kShaders / "two_locals.spv");
  ASSERT_NE(m, nullptr);
  accel_kernel_t k = Kernel(m, "two_locals");
  accel_buffer_t out = Buffer(4 * 4);
  // Two sizes, then two others: one pipeline per distinct set of sizes.
  for (const auto& [first, second] : {std::pair<uint32_t, uint32_t>{16, 8}, {5, 40}}) {
    ASSERT_EQ(Run(k, {1, 1, 1}, {64, 1, 1}, {BufferArg(out), LocalArg(first * 4), LocalArg(second * 4)}), ACCEL_SUCCESS)
        << accel_last_error();
    EXPECT_EQ(Get(out, 4), (std::vector<uint32_t>{first, second, first - 1 + 100, second - 1 + 200}));
  }
  EXPECT_EQ(Run(k, {1, 1, 1}, {64, 1, 1}, {BufferArg(out), LocalArg(6), LocalArg(8)}), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "not a multiple of 4")) << accel_last_error();
}

TEST_F(VulkanTest, ModuleKernelsAreItsEntryPoints) {
  accel_module_t m = Module(kShaders / "multi.spv");
  ASSERT_NE(m, nullptr);
  accel_module_properties_t p{};
  p.stype = ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES;
  p.struct_size = sizeof(p);
  ASSERT_EQ(accel_module_get_properties(m, &p), ACCEL_SUCCESS);
  ASSERT_EQ(p.kernel_count, 2u);
  const char* name = nullptr;
  ASSERT_EQ(accel_module_get_kernel_name(m, 1, &name), ACCEL_SUCCESS);
  EXPECT_STREQ(name, "second");
  accel_kernel_t first = Kernel(m, "first");
  accel_kernel_t second = Kernel(m, "second");
  accel_buffer_t io = Buffer(32 * 4);
  accel_buffer_t add = Buffer(32 * 4);
  const uint32_t n = 32;
  ASSERT_EQ(Run(first, {1, 1, 1}, {32, 1, 1}, {BufferArg(io), Scalar(&n, 4)}), ACCEL_SUCCESS) << accel_last_error();
  Put(add, std::vector<uint32_t>(32, 10));
  ASSERT_EQ(Run(second, {1, 1, 1}, {32, 1, 1}, {BufferArg(io), BufferArg(add)}), ACCEL_SUCCESS) << accel_last_error();
  const std::vector<uint32_t> got = Get(io, 32);
  for (uint32_t i = 0; i < 32; ++i) ASSERT_EQ(got[i], 11 + i) << "element " << i;
  accel_kernel_t none = nullptr;
  EXPECT_EQ(accel_module_get_kernel(m, "main", &none), ACCEL_ERROR_NOT_FOUND);
  EXPECT_TRUE(Contains(accel_last_error(), "'first', 'second'")) << accel_last_error();
}

TEST_F(VulkanTest, InvalidModulesAreRefusedWithTheReason) {
  struct Case {
    std::string bytes;
    const char* says;
  };
  const std::string fill = ReadFile(kCorpus / "fill_u32.spv");
  const Case cases[] = {
      {"not a module!", "32-bit words"},
      {std::string(32, 'x'), "magic number"},
      {fill.substr(0, fill.size() / 2 & ~size_t{3}), "SPIR-V"},
      {ReadFile(kShaders / "uses_image.spv"), "storage image ('picture')"},
  };
  for (const Case& c : cases) {
    accel_module_source_t source = SpirvSource(c.bytes);
    accel_module_desc_t desc = ModuleDesc(&source, 1, "bad");
    accel_module_t m = nullptr;
    EXPECT_EQ(accel_module_create(device_, &desc, &m), ACCEL_ERROR_INVALID_ARGUMENT) << c.says;
    EXPECT_TRUE(Contains(accel_last_error(), c.says));
    EXPECT_EQ(m, nullptr);
  }
}

TEST_F(VulkanTest, UnalignedBindingOffsetIsRefused) {
  accel_module_t m = Module(kCorpus / "fill_u32.spv");
  ASSERT_NE(m, nullptr);
  accel_kernel_t k = Kernel(m, "fill_u32");
  accel_buffer_t out = Buffer(1024);
  const uint32_t value = 1;
  const uint32_t n = 4;
  EXPECT_EQ(Run(k, {1, 1, 1}, {4, 1, 1}, {BufferArg(out, 4, 64), Scalar(&value, 4), Scalar(&n, 4)}),
            ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "minStorageBufferOffsetAlignment")) << accel_last_error();
}

TEST_F(VulkanTest, BuffersPastOneBindingsRangeExistButBindOnlyThatRange) {
  // A buffer may be larger than maxStorageBufferRange (up to max_allocation); one argument binds at most that.
  const uint64_t range = caps_.max_buffer_range;
  ASSERT_LT(range, caps_.max_allocation);
  accel_buffer_t big = Buffer(range + 4096);
  ASSERT_NE(big, nullptr);
  accel_module_t m = Module(kCorpus / "fill_u32.spv");
  accel_kernel_t k = Kernel(m, "fill_u32");
  const uint32_t value = 0xABCD;
  const uint32_t n = 64;
  EXPECT_EQ(Run(k, {1, 1, 1}, {64, 1, 1}, {BufferArg(big, 0, 0), Scalar(&value, 4), Scalar(&n, 4)}),
            ACCEL_ERROR_INVALID_ARGUMENT)
      << "the whole buffer is past max_buffer_range";
  EXPECT_TRUE(Contains(accel_last_error(), "max buffer range")) << accel_last_error();
  // The last max_buffer_range bytes bind (the offset is a multiple of the binding alignment).
  ASSERT_EQ(Run(k, {1, 1, 1}, {64, 1, 1}, {BufferArg(big, 4096, range), Scalar(&value, 4), Scalar(&n, 4)}),
            ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_EQ(Get(big, 64, 4096), std::vector<uint32_t>(64, value));
}

TEST_F(VulkanTest, FillsOfEveryPatternAtOddOffsets) {
  const uint64_t size = 3 * 4096 + 5;
  accel_buffer_t b = Buffer(size);
  std::vector<uint8_t> expect(size, 0);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, expect.data(), b, 0, size), ACCEL_SUCCESS);
  struct Fill {
    uint64_t offset, size;
    uint32_t pattern_size;
  };
  const uint8_t pattern[4] = {0x11, 0x22, 0x33, 0x44};
  for (const Fill f : {Fill{1, 4099, 1}, Fill{5000, 3, 1}, Fill{6, 2050, 2}, Fill{8190, 2, 2}, Fill{9000, 3000, 4},
                       Fill{size - 1, 1, 1}}) {
    ASSERT_EQ(accel_stream_fill_buffer(stream_, b, f.offset, f.size, pattern, f.pattern_size), ACCEL_SUCCESS)
        << accel_last_error();
    for (uint64_t i = 0; i < f.size; ++i) expect[f.offset + i] = pattern[i % f.pattern_size];
  }
  std::vector<uint8_t> got(size, 0);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, b, 0, got.data(), size), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(got, expect);
}

TEST_F(VulkanTest, MemoryFreeCountsTheBuffers) {
  uint64_t before = 0;
  uint64_t total = 0;
  ASSERT_EQ(accel_device_get_memory_info(device_, &before, &total), ACCEL_SUCCESS);
  EXPECT_EQ(total, caps_.memory_total);
  accel_buffer_desc_t d = BufferDesc(uint64_t{8} << 20);
  accel_buffer_t b = nullptr;
  ASSERT_EQ(accel_buffer_create(device_, &d, &b), ACCEL_SUCCESS) << accel_last_error();
  uint64_t during = 0;
  ASSERT_EQ(accel_device_get_memory_info(device_, &during, nullptr), ACCEL_SUCCESS);
  EXPECT_LE(during + (uint64_t{8} << 20), before);
  ASSERT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
  uint64_t after = 0;
  ASSERT_EQ(accel_device_get_memory_info(device_, &after, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(after, before);
}

TEST_F(VulkanTest, AllocationPastTheFreeMemoryNamesRequestAndFree) {
  // Within max_allocation, past what the heap has left: the backend's own refusal, before any memory is touched.
  const uint64_t first = caps_.memory_total / 2 + (uint64_t{64} << 20);
  accel_buffer_t held = Buffer(first);
  ASSERT_NE(held, nullptr);
  accel_buffer_desc_t d = BufferDesc(caps_.memory_total / 2);
  ASSERT_LE(d.size, caps_.max_allocation);
  accel_buffer_t b = nullptr;
  EXPECT_EQ(accel_buffer_create(device_, &d, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(b, nullptr);
  const std::string message = accel_last_error();
  EXPECT_TRUE(Contains(message, "device 0 (vulkan: ")) << "the core names the device";
  EXPECT_TRUE(Contains(message, std::to_string(d.size) + " bytes")) << "the request";
  EXPECT_TRUE(Contains(message, "requested")) << message;
  EXPECT_TRUE(Contains(message, std::to_string(caps_.memory_total - first) + " bytes")) << "what is free";
}

TEST_F(VulkanTest, HostPinnedBuffersHaveAHostAddress) {
  accel_buffer_t b = Buffer(4096, ACCEL_MEMORY_KIND_HOST_PINNED);
  void* address = nullptr;
  ASSERT_EQ(accel_buffer_get_host_address(b, &address), ACCEL_SUCCESS) << accel_last_error();
  Put(b, std::vector<uint32_t>(1024, 0x5A5A5A5A));
  EXPECT_EQ(static_cast<const uint32_t*>(address)[1023], 0x5A5A5A5Au);
  accel_external_memory_t e{};
  e.stype = ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY;
  e.struct_size = sizeof(e);
  ASSERT_EQ(accel_buffer_export(b, ACCEL_EXTERNAL_MEMORY_TYPE_VULKAN_BUFFER, &e), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_NE(e.handle, 0u);
  EXPECT_NE(e.handle2, 0u);
  EXPECT_EQ(e.size, 4096u);
  EXPECT_EQ(accel_buffer_export(b, ACCEL_EXTERNAL_MEMORY_TYPE_OPAQUE_FD, &e), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_TRUE(Contains(accel_last_error(), "VULKAN_BUFFER")) << accel_last_error();
}

TEST_F(VulkanTest, CopyStatisticsCountEachDirection) {
  accel_buffer_t a = Buffer(4096);
  accel_buffer_t b = Buffer(4096);
  std::vector<uint8_t> host(4096, 3);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, host.data(), a, 0, 4096), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer(stream_, a, 0, b, 0, 1000), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, b, 0, host.data(), 100), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  accel_copy_statistics_t s{};
  s.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
  s.struct_size = sizeof(s);
  ASSERT_EQ(accel_stream_get_copy_statistics(stream_, &s), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(s.host_to_device_copies, 1u);
  EXPECT_EQ(s.host_to_device_bytes, 4096u);
  EXPECT_EQ(s.local_copies, 1u);
  EXPECT_EQ(s.local_bytes, 1000u);
  EXPECT_EQ(s.device_to_host_copies, 1u);
  EXPECT_EQ(s.device_to_host_bytes, 100u);
  EXPECT_EQ(s.staged_copies, 0u);
}

TEST_F(VulkanTest, QueuedFillsAndCopiesShareSubmissionsWithLaunchesInStreamOrder) {
  MixedOperationsKeepStreamOrder(true);
}

TEST_F(VulkanTest, FillsAndCopiesOnAnIdleStreamKeepStreamOrder) { MixedOperationsKeepStreamOrder(false); }

// A synchronize of a stream that an earlier synchronize found settled returns without taking the stream's lock
// (backends/vulkan/README.md, "Hot path"): work and errors enqueued after it must still be waited for and reported.
TEST_F(VulkanTest, SettledStreamsStillWaitForLaterWorkAndReportLaterErrors) {
  accel_buffer_t b = Buffer(4096);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_synchronize(stream_, 0), ACCEL_SUCCESS) << accel_last_error();

  // Copies queued behind a slow host callback: neither may run before it, and the synchronize waits for all three.
  struct Slow {
    std::atomic<bool> done{false};
  } slow;
  const auto sleep_then_mark = [](void* user, accel_status_t) -> accel_status_t {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    static_cast<Slow*>(user)->done.store(true);
    return ACCEL_SUCCESS;
  };
  const std::vector<uint8_t> data(4096, 7);
  std::vector<uint8_t> out(4096, 0);
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, sleep_then_mark, &slow), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, data.data(), b, 0, 4096), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, b, 0, out.data(), 4096), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_TRUE(slow.done.load()) << "the synchronize returned before the host callback ran";
  EXPECT_EQ(out, data) << "the synchronize returned before the copies behind the callback ran";

  // An error after the stream settled is reported by every synchronize until it is cleared.
  const auto fail = [](void*, accel_status_t) -> accel_status_t { return ACCEL_ERROR_INTERNAL; };
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, fail, nullptr), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL)
      << "a second synchronize forgot the stream's error";
  EXPECT_EQ(accel_stream_synchronize(stream_, 0), ACCEL_ERROR_INTERNAL);
  ASSERT_EQ(accel_stream_clear_error(stream_), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();

  // A small inline copy that follows still lands, and the settled stream's synchronize sees it.
  const std::vector<uint8_t> again(4096, 9);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, again.data(), b, 0, 4096), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, b, 0, out.data(), 4096), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(out, again);
}

// A plain event recorded on an idle stream completes before the record returns (no hand-off to the worker); a wait on
// a record that completed without error enqueues nothing, and one that completed with an error still passes it on.
TEST_F(VulkanTest, RecordsOnAnIdleStreamCompleteAtOnceAndWaitsSeeTheirErrors) {
  accel_event_t event = nullptr;
  accel_event_t failed = nullptr;
  accel_stream_t other = nullptr;
  ASSERT_EQ(accel_event_create(device_, nullptr, &event), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_event_create(device_, nullptr, &failed), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_create(device_, nullptr, &other), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_record_event(stream_, event), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_event_query(event), ACCEL_SUCCESS) << "a record on an idle stream is complete when it returns";
  ASSERT_EQ(accel_stream_wait_event(other, event), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(other, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();

  // A record behind a failure completes with the error (not at once: the stream holds an error), and a wait on it
  // gives the waiting stream that error, also once the record is complete.
  const auto fail = [](void*, accel_status_t) -> accel_status_t { return ACCEL_ERROR_INTERNAL; };
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, fail, nullptr), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_record_event(stream_, failed), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_event_synchronize(failed, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  ASSERT_EQ(accel_stream_wait_event(other, failed), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(other, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL)
      << "a wait on a record that completed with an error did not pass it on";
  EXPECT_TRUE(Contains(accel_last_error(), "waited for an event that completed with an error")) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  EXPECT_EQ(accel_stream_destroy(other), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_event_destroy(event), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_event_destroy(failed), ACCEL_SUCCESS) << accel_last_error();
}

// A plain record behind device work that is still running does not hold the stream's worker (README.md, "Hot
// path"): it completes once the stream's timeline passes that work, learnt by whoever asks first: an event wait, an
// event query, another stream's wait, the stream's synchronize, the stream's destruction. Each sees the work's result
// (a kernel that runs long enough to be running when the record reaches the worker; the test holds whether or not it
// still is, and so would a record that waited on the worker as before: what deferral saves shows in time, in
// `bench/launch_cost ... record`, docs/overhead.md).
TEST_F(VulkanTest, RecordsBehindRunningWorkCompleteWithItWhoeverAsks) {
  accel_module_t m = Module(kShaders / "spin.spv");
  ASSERT_NE(m, nullptr);
  accel_kernel_t spin = Kernel(m, "spin");
  constexpr uint32_t kGroups = 256;
  constexpr uint32_t kCount = kGroups * 64;
  constexpr uint32_t kSteps = 60000;  // about 1G generator steps a launch, tens of milliseconds on lavapipe
  accel_buffer_t out = Buffer(kCount * 4);
  ASSERT_NE(out, nullptr);
  std::vector<uint32_t> initial(kCount);
  for (uint32_t i = 0; i < kCount; ++i) initial[i] = i;
  Put(out, initial);
  void* host = nullptr;
  ASSERT_EQ(accel_buffer_get_host_address(out, &host), ACCEL_SUCCESS) << "lavapipe's device memory is host-visible";
  const uint32_t sampled[3] = {0, kCount / 2 + 3, kCount - 1};  // the elements the host follows
  uint32_t expect[3] = {sampled[0], sampled[1], sampled[2]};
  const auto launch = [&](accel_stream_t s) {
    const std::vector<accel_kernel_arg_t> args = {BufferArg(out), Scalar(&kSteps, 4)};
    const accel_launch_desc_t d = Launch({kGroups, 1, 1}, {64, 1, 1}, args.data(), 2);
    EXPECT_EQ(accel_stream_launch_kernel(s, spin, &d), ACCEL_SUCCESS) << accel_last_error();
    for (uint32_t& x : expect) {
      for (uint32_t k = 0; k < kSteps; ++k) x = x * 1664525U + 1013904223U;
    }
  };
  const auto matches = [&](const uint32_t* words) {
    for (int j = 0; j < 3; ++j) {
      if (words[sampled[j]] != expect[j]) return false;
    }
    return true;
  };
  const auto seen = [&] { return matches(static_cast<const uint32_t*>(host)); };
  accel_event_t events[5] = {};
  for (accel_event_t& e : events) ASSERT_EQ(accel_event_create(device_, nullptr, &e), ACCEL_SUCCESS);

  launch(stream_);
  ASSERT_EQ(accel_stream_record_event(stream_, events[0]), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_event_synchronize(events[0], ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_TRUE(seen()) << "event_synchronize returned before the kernel before the record ran";

  launch(stream_);
  ASSERT_EQ(accel_stream_record_event(stream_, events[1]), ACCEL_SUCCESS) << accel_last_error();
  accel_status_t queried = ACCEL_NOT_READY;
  for (int i = 0; i < 200000 && queried == ACCEL_NOT_READY; ++i) {
    queried = accel_event_query(events[1]);
    if (queried == ACCEL_NOT_READY) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ASSERT_EQ(queried, ACCEL_SUCCESS) << accel_last_error();
  EXPECT_TRUE(seen()) << "event_query said complete before the kernel before the record ran";

  // Another stream waits for the record, then reads the kernel's output.
  accel_stream_t other = nullptr;
  ASSERT_EQ(accel_stream_create(device_, nullptr, &other), ACCEL_SUCCESS) << accel_last_error();
  launch(stream_);
  ASSERT_EQ(accel_stream_record_event(stream_, events[2]), ACCEL_SUCCESS) << accel_last_error();
  std::vector<uint32_t> read(kCount, 0);
  ASSERT_EQ(accel_stream_wait_event(other, events[2]), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_copy_buffer_to_host(other, out, 0, read.data(), kCount * 4), ACCEL_SUCCESS)
      << accel_last_error();
  ASSERT_EQ(accel_stream_synchronize(other, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_TRUE(matches(read.data())) << "a stream that waited for the record read the buffer before the kernel wrote it";

  // The stream's synchronize completes what it waited for.
  launch(stream_);
  ASSERT_EQ(accel_stream_record_event(stream_, events[3]), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_event_query(events[3]), ACCEL_SUCCESS) << accel_last_error();

  // A stream destroyed while its record waits for its kernel: the record completes, and stays readable.
  launch(other);
  ASSERT_EQ(accel_stream_record_event(other, events[4]), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_destroy(other), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_event_query(events[4]), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_event_synchronize(events[4], ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_TRUE(seen());
  for (accel_event_t e : events) EXPECT_EQ(accel_event_destroy(e), ACCEL_SUCCESS) << accel_last_error();
}

// Timing records behind running work are deferred too: each reads its timestamp once the timeline passes its own
// submission. More records than the stream's ring of 64 queries follow a long kernel (at most 16 submissions are in
// flight at once; the worker waits for a free command buffer), so every query is reused: each interval is then
// consistent with the whole, and their sum equals it within rounding (a timestamp read after its query was rewritten
// by a later record would add the gap between the two).
TEST_F(VulkanTest, TimingRecordsBehindRunningWorkReadTheirTimestampsWhenItEnds) {
  ASSERT_NE(caps_.features & ACCEL_DEVICE_FEATURE_EVENT_TIMING, 0u) << "lavapipe has timestamps";
  accel_module_t spin_m = Module(kShaders / "spin.spv");
  accel_module_t fill_m = Module(kCorpus / "fill_u32.spv");
  ASSERT_TRUE(spin_m != nullptr && fill_m != nullptr);
  accel_kernel_t spin = Kernel(spin_m, "spin");
  accel_kernel_t fill = Kernel(fill_m, "fill_u32");
  constexpr uint32_t kGroups = 256;
  constexpr uint32_t kSteps = 60000;
  accel_buffer_t busy = Buffer(kGroups * 64 * 4);
  accel_buffer_t small = Buffer(64 * 4);
  ASSERT_TRUE(busy != nullptr && small != nullptr);
  constexpr int kEvents = 150;  // past the ring of 64 twice
  std::vector<accel_event_t> events(kEvents, nullptr);
  accel_event_desc_t timing{ACCEL_STRUCTURE_TYPE_EVENT_DESC, sizeof(timing), nullptr, ACCEL_EVENT_FLAG_TIMING};
  for (accel_event_t& e : events) ASSERT_EQ(accel_event_create(device_, &timing, &e), ACCEL_SUCCESS);

  ASSERT_EQ(accel_stream_record_event(stream_, events[0]), ACCEL_SUCCESS) << accel_last_error();
  const std::vector<accel_kernel_arg_t> spin_args = {BufferArg(busy), Scalar(&kSteps, 4)};
  const accel_launch_desc_t spin_d = Launch({kGroups, 1, 1}, {64, 1, 1}, spin_args.data(), 2);
  ASSERT_EQ(accel_stream_launch_kernel(stream_, spin, &spin_d), ACCEL_SUCCESS) << accel_last_error();
  const uint32_t seven = 7;
  const uint32_t n = 64;
  const std::vector<accel_kernel_arg_t> fill_args = {BufferArg(small), Scalar(&seven, 4), Scalar(&n, 4)};
  const accel_launch_desc_t fill_d = Launch({1, 1, 1}, {64, 1, 1}, fill_args.data(), 3);
  for (int i = 1; i < kEvents; ++i) {
    ASSERT_EQ(accel_stream_record_event(stream_, events[i]), ACCEL_SUCCESS) << accel_last_error();
    if (i % 2 == 0) {
      ASSERT_EQ(accel_stream_launch_kernel(stream_, fill, &fill_d), ACCEL_SUCCESS) << accel_last_error();
    }
  }
  ASSERT_EQ(accel_event_synchronize(events[1], ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  uint64_t spun = 0;
  ASSERT_EQ(accel_event_elapsed_time(events[0], events[1], &spun), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_GT(spun, 0u) << "the kernel between the first two records took no time";
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  uint64_t whole = 0;
  ASSERT_EQ(accel_event_elapsed_time(events[0], events[kEvents - 1], &whole), ACCEL_SUCCESS) << accel_last_error();
  uint64_t sum = 0;
  for (int i = 0; i + 1 < kEvents; ++i) {
    uint64_t step = 0;
    ASSERT_EQ(accel_event_elapsed_time(events[i], events[i + 1], &step), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_LE(step, whole) << "the interval after record " << i << " is longer than the whole";
    sum += step;
  }
  EXPECT_LE(sum, whole + kEvents) << "the intervals add up to more than the whole (each rounds to whole ns)";
  EXPECT_GE(sum + kEvents, whole);
  EXPECT_EQ(Get(small, 1)[0], 7u);
  for (accel_event_t e : events) EXPECT_EQ(accel_event_destroy(e), ACCEL_SUCCESS) << accel_last_error();
}

// Records and launches interleaved from two threads, queried and waited on from a third, while the streams are
// destroyed: every record completes without error, and nothing is used after it is gone (ASan, TSan).
TEST_F(VulkanTest, DeferredRecordsSurviveTheirStreamWhileQueried) {
  accel_module_t m = Module(kShaders / "spin.spv");
  ASSERT_NE(m, nullptr);
  accel_kernel_t spin = Kernel(m, "spin");
  constexpr int kStreams = 2;
  constexpr int kRounds = 20;
  constexpr uint32_t kSteps = 1000;
  accel_buffer_t outs[kStreams] = {Buffer(64 * 4), Buffer(64 * 4)};
  ASSERT_TRUE(outs[0] != nullptr && outs[1] != nullptr);
  accel_event_t events[kStreams] = {};
  for (accel_event_t& e : events) ASSERT_EQ(accel_event_create(device_, nullptr, &e), ACCEL_SUCCESS);
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::mutex first_mutex;
  std::string first;  // the first failure, with the failing thread's last error
  const auto fail = [&](const char* what) {
    std::lock_guard lock(first_mutex);
    if (failures++ == 0) first = std::string(what) + ": " + accel_last_error();
  };
  std::thread asker([&] {
    while (!done.load()) {
      for (accel_event_t e : events) {
        const accel_status_t q = accel_event_query(e);
        if (q != ACCEL_SUCCESS && q != ACCEL_NOT_READY) fail("event_query");
      }
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kStreams; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        accel_stream_t s = nullptr;
        if (accel_stream_create(device_, nullptr, &s) != ACCEL_SUCCESS) {
          fail("stream_create");
          return;
        }
        const std::vector<accel_kernel_arg_t> args = {BufferArg(outs[t]), Scalar(&kSteps, 4)};
        const accel_launch_desc_t d = Launch({1, 1, 1}, {64, 1, 1}, args.data(), 2);
        for (int i = 0; i < 3; ++i) {
          if (accel_stream_launch_kernel(s, spin, &d) != ACCEL_SUCCESS) fail("stream_launch_kernel");
          if (accel_stream_record_event(s, events[t]) != ACCEL_SUCCESS) fail("stream_record_event");
        }
        if (accel_stream_destroy(s) != ACCEL_SUCCESS) fail("stream_destroy");
        if (accel_event_synchronize(events[t], ACCEL_TIMEOUT_INFINITE) != ACCEL_SUCCESS) fail("event_synchronize");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  done.store(true);
  asker.join();
  EXPECT_EQ(failures.load(), 0) << first;
  for (accel_event_t e : events) {
    EXPECT_EQ(accel_event_query(e), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_event_destroy(e), ACCEL_SUCCESS) << accel_last_error();
  }
}

// With ACCEL_VULKAN_STAGING=always, device buffers are treated as not host-visible: host copies go through the
// stream's staging buffer in 8 MiB pieces, buffer_map through a staging copy.
class VulkanStagingTest : public VulkanTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(setenv("ACCEL_VULKAN_STAGING", "always", 1), 0);
    VulkanTest::SetUp();
  }
  void TearDown() override {
    VulkanTest::TearDown();
    unsetenv("ACCEL_VULKAN_STAGING");
  }
};

TEST_F(VulkanStagingTest, DeviceBuffersHaveNoHostAddress) {
  accel_buffer_t b = Buffer(4096);
  void* address = nullptr;
  EXPECT_EQ(accel_buffer_get_host_address(b, &address), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_TRUE(Contains(accel_last_error(), "not host-visible")) << accel_last_error();
}

// Buffers that are not host-visible: fills and copies are vkCmdFillBuffer and vkCmdCopyBuffer, recorded by the
// enqueuing thread on an idle stream and device, else by the worker with the launches around them.
TEST_F(VulkanStagingTest, QueuedFillsAndCopiesShareSubmissionsWithLaunchesInStreamOrder) {
  MixedOperationsKeepStreamOrder(true);
}

TEST_F(VulkanStagingTest, FillsAndCopiesOnAnIdleStreamKeepStreamOrder) { MixedOperationsKeepStreamOrder(false); }

TEST_F(VulkanStagingTest, LargeCopiesGoThroughStagingInPieces) {
  const uint64_t size = (uint64_t{20} << 20) + 12;  // more than two 8 MiB pieces
  accel_buffer_t a = Buffer(size);
  accel_buffer_t b = Buffer(size);
  std::vector<uint8_t> data(size);
  for (uint64_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>(i * 131 + (i >> 20));
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, data.data(), a, 0, size), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer(stream_, a, 0, b, 0, size), ACCEL_SUCCESS);
  std::vector<uint8_t> got(size, 0);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, b, 0, got.data(), size), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_TRUE(got == data) << "the round trip through staging changed the bytes";
}

TEST_F(VulkanStagingTest, MapReadsAndWritesBackThroughACopy) {
  accel_buffer_t b = Buffer(8192);
  std::vector<uint32_t> words(2048);
  for (uint32_t i = 0; i < 2048; ++i) words[i] = i;
  Put(b, words);
  void* p = nullptr;
  ASSERT_EQ(accel_buffer_map(b, 400, 800, ACCEL_MAP_READ | ACCEL_MAP_WRITE, &p), ACCEL_SUCCESS) << accel_last_error();
  auto* mapped = static_cast<uint32_t*>(p);
  EXPECT_EQ(mapped[0], 100u);
  EXPECT_EQ(mapped[199], 299u);
  mapped[10] = 0xFFFFFFFF;  // only one word written: the rest of the range must stay as it was
  ASSERT_EQ(accel_buffer_unmap(b), ACCEL_SUCCESS) << accel_last_error();
  words[110] = 0xFFFFFFFF;
  EXPECT_EQ(Get(b, 2048), words);
}

TEST_F(VulkanStagingTest, KernelsRunOnBuffersThatAreNotMapped) {
  accel_module_t m = Module(kCorpus / "fill_u32.spv");
  accel_kernel_t k = Kernel(m, "fill_u32");
  accel_buffer_t out = Buffer(256 * 4);
  Put(out, std::vector<uint32_t>(256, 0));
  const uint32_t value = 77;
  const uint32_t n = 200;
  ASSERT_EQ(Run(k, {4, 1, 1}, {64, 1, 1}, {BufferArg(out), Scalar(&value, 4), Scalar(&n, 4)}), ACCEL_SUCCESS)
      << accel_last_error();
  const std::vector<uint32_t> got = Get(out, 256);
  for (uint32_t i = 0; i < 256; ++i) ASSERT_EQ(got[i], i < n ? value : 0u) << "element " << i;
}

// Two Vulkan devices: lavapipe listed twice in VK_DRIVER_FILES (the loader opens it as two drivers). A copy between
// them goes through host memory, directly between mapped memory or, with ACCEL_VULKAN_STAGING=always, through each
// device's staging copies; an event of one device orders a stream of the other.
TEST(VulkanTwoDevices, CopiesAndEventWaitsBetweenDevices) {
  accel_test::TempDir dir;
  const char* icd = std::getenv("VK_DRIVER_FILES");
  ASSERT_NE(icd, nullptr) << "the test runs with lavapipe's VK_DRIVER_FILES";
  const std::string first = icd;
  const std::string second = dir.Write("lavapipe_again.json", ReadFile(first));
  ASSERT_EQ(setenv("VK_DRIVER_FILES", (first + ":" + second).c_str(), 1), 0);
  for (const char* staging : {"", "always"}) {
    ASSERT_EQ(setenv("ACCEL_VULKAN_STAGING", staging, 1), 0);
    ScopedInstance instance(nullptr);
    std::vector<accel_device_t> devices;
    for (accel_device_t d : instance.Devices()) {
      if (std::string(ScopedInstance::Capabilities(d).backend_name) == "vulkan") devices.push_back(d);
    }
    ASSERT_EQ(devices.size(), 2u) << "lavapipe twice is two devices";
    const uint64_t size = (uint64_t{9} << 20) + 3;  // past one 8 MiB piece
    accel_buffer_desc_t d = BufferDesc(size);
    accel_buffer_t a = nullptr;
    accel_buffer_t b = nullptr;
    ASSERT_EQ(accel_buffer_create(devices[0], &d, &a), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_buffer_create(devices[1], &d, &b), ACCEL_SUCCESS) << accel_last_error();
    accel_stream_t s0 = nullptr;
    accel_stream_t s1 = nullptr;
    ASSERT_EQ(accel_stream_create(devices[0], nullptr, &s0), ACCEL_SUCCESS);
    ASSERT_EQ(accel_stream_create(devices[1], nullptr, &s1), ACCEL_SUCCESS);
    accel_event_desc_t ed{ACCEL_STRUCTURE_TYPE_EVENT_DESC, sizeof(ed), nullptr, ACCEL_EVENT_FLAG_TIMING};
    accel_event_t written = nullptr;
    accel_event_t other = nullptr;
    ASSERT_EQ(accel_event_create(devices[0], &ed, &written), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_event_create(devices[1], &ed, &other), ACCEL_SUCCESS) << accel_last_error();
    std::vector<uint8_t> data(size);
    for (uint64_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>(i * 7 + (i >> 16));
    std::vector<uint8_t> got(size, 0);
    {
      accel_test::Gate gate;
      ASSERT_EQ(accel_stream_enqueue_host_callback(s0, accel_test::Gate::Wait, &gate), ACCEL_SUCCESS);
      ASSERT_EQ(accel_stream_copy_host_to_buffer(s0, data.data(), a, 0, size), ACCEL_SUCCESS);
      ASSERT_EQ(accel_stream_record_event(s0, written), ACCEL_SUCCESS);
      ASSERT_EQ(accel_stream_wait_event(s1, written), ACCEL_SUCCESS);
      ASSERT_EQ(accel_stream_copy_buffer(s1, a, 0, b, 0, size), ACCEL_SUCCESS) << accel_last_error();
      ASSERT_EQ(accel_stream_record_event(s1, other), ACCEL_SUCCESS);
      ASSERT_EQ(accel_stream_copy_buffer_to_host(s1, b, 0, got.data(), size), ACCEL_SUCCESS);
      EXPECT_EQ(accel_stream_query(s1), ACCEL_NOT_READY) << "device 1 waits for device 0's event";
      gate.Open();
      ASSERT_EQ(accel_stream_synchronize(s1, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
    }
    EXPECT_TRUE(got == data) << "the copy between devices changed the bytes (staging '" << staging << "')";
    accel_copy_statistics_t stats{};
    stats.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
    stats.struct_size = sizeof(stats);
    ASSERT_EQ(accel_stream_get_copy_statistics(s1, &stats), ACCEL_SUCCESS);
    EXPECT_EQ(stats.staged_copies, 1u);
    EXPECT_EQ(stats.staged_bytes, size);
    EXPECT_EQ(stats.peer_copies, 0u);
    uint64_t ns = 0;
    EXPECT_EQ(accel_event_elapsed_time(written, other, &ns), ACCEL_ERROR_INVALID_ARGUMENT)
        << "timestamps of two devices' clocks";
    EXPECT_EQ(accel_stream_synchronize(s0, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
    accel_event_destroy(written);
    accel_event_destroy(other);
    accel_stream_destroy(s0);
    accel_stream_destroy(s1);
    accel_buffer_destroy(a);
    accel_buffer_destroy(b);
  }
  unsetenv("ACCEL_VULKAN_STAGING");
  setenv("VK_DRIVER_FILES", first.c_str(), 1);
}

// ACCEL_CACHE_DIR: Mesa's shader cache goes under <dir>/mesa (unless MESA_SHADER_CACHE_DIR was set), and the
// device's pipeline cache is written to <dir>/vulkan/ when the instance closes, and read by the next one.
TEST(VulkanCaches, PipelineAndShaderCachesGoUnderAccelCacheDir) {
  accel_test::TempDir dir;
  ASSERT_EQ(setenv("ACCEL_CACHE_DIR", dir.path().c_str(), 1), 0);
  ASSERT_EQ(unsetenv("MESA_SHADER_CACHE_DIR"), 0);
  for (int round = 0; round < 2; ++round) {
    ScopedInstance instance(nullptr);
    accel_device_t device = instance.DeviceOf("vulkan");
    ASSERT_NE(device, nullptr);
    const char* mesa = std::getenv("MESA_SHADER_CACHE_DIR");
    ASSERT_NE(mesa, nullptr);
    EXPECT_EQ(std::string(mesa), (dir.path() / "mesa").string());
    const std::string bytes = ReadFile(kCorpus / "vadd_f32.spv");
    accel_module_source_t source = SpirvSource(bytes);
    accel_module_desc_t desc = ModuleDesc(&source, 1, "vadd");
    accel_module_t m = nullptr;
    ASSERT_EQ(accel_module_create(device, &desc, &m), ACCEL_SUCCESS) << accel_last_error();
    accel_kernel_t k = nullptr;
    ASSERT_EQ(accel_module_get_kernel(m, "vadd_f32", &k), ACCEL_SUCCESS);
    accel_stream_t stream = nullptr;
    ASSERT_EQ(accel_stream_create(device, nullptr, &stream), ACCEL_SUCCESS);
    accel_buffer_desc_t bd = BufferDesc(256);
    accel_buffer_t a = nullptr;
    ASSERT_EQ(accel_buffer_create(device, &bd, &a), ACCEL_SUCCESS);
    const uint32_t n = 64;
    const accel_kernel_arg_t args[] = {BufferArg(a), BufferArg(a), BufferArg(a), Scalar(&n, 4)};
    accel_launch_desc_t launch = Launch({1, 1, 1}, {64, 1, 1}, args, 4);
    ASSERT_EQ(accel_stream_launch_kernel(stream, k, &launch), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
    accel_stream_destroy(stream);
    accel_buffer_destroy(a);
    accel_module_destroy(m);
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "vulkan")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u) << "one pipeline cache file per device, no temporary left";
  EXPECT_EQ(files[0].extension(), ".bin");
  // At least VkPipelineCacheHeaderVersionOne (lavapipe keeps no pipelines in it; GPU drivers do).
  const std::string cache = ReadFile(files[0]);
  ASSERT_GE(cache.size(), 32u);
  uint32_t header[2] = {};
  std::memcpy(header, cache.data(), sizeof(header));
  EXPECT_EQ(header[0], 32u) << "headerSize";
  EXPECT_EQ(header[1], static_cast<uint32_t>(kPipelineCacheHeaderVersionOne)) << "headerVersion";
  unsetenv("ACCEL_CACHE_DIR");
}

TEST(VulkanCaches, AUsersMesaShaderCacheDirIsKept) {
  accel_test::TempDir dir;
  ASSERT_EQ(setenv("ACCEL_CACHE_DIR", dir.path().c_str(), 1), 0);
  ASSERT_EQ(setenv("MESA_SHADER_CACHE_DIR", "/tmp/the-users-own-choice", 1), 0);
  {
    ScopedInstance instance(nullptr);
    ASSERT_NE(instance.DeviceOf("vulkan"), nullptr);
  }
  EXPECT_STREQ(std::getenv("MESA_SHADER_CACHE_DIR"), "/tmp/the-users-own-choice");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "mesa"));
  unsetenv("MESA_SHADER_CACHE_DIR");
  unsetenv("ACCEL_CACHE_DIR");
}

}  // namespace
