// Modules and kernels on the host device: native-host kernels from an
// in-process table and from a shared library, launched over many geometries;
// argument checking against the kernel's declaration; format selection.
#include <atomic>
#include <fstream>
#include <iterator>
#include <numeric>
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
using accel_test::NativeSource;
using accel_test::ScalarArg;
using accel_test::ScopedInstance;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

class KernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = instance_.DeviceOf("host");
    ASSERT_NE(device_, nullptr);
    ASSERT_EQ(accel_stream_create(device_, nullptr, &stream_), ACCEL_SUCCESS) << accel_last_error();
    accel_module_source_t source = NativeSource(accel_test::TestModule());
    accel_module_desc_t desc = ModuleDesc(&source, 1, "test kernels");
    ASSERT_EQ(accel_module_create(device_, &desc, &module_), ACCEL_SUCCESS) << accel_last_error();
  }
  void TearDown() override {
    if (stream_ != nullptr) {
      EXPECT_EQ(accel_stream_destroy(stream_), ACCEL_SUCCESS) << accel_last_error();
    }
    if (module_ != nullptr) {
      EXPECT_EQ(accel_module_destroy(module_), ACCEL_SUCCESS) << accel_last_error();
    }
  }
  accel_kernel_t Kernel(const char* name) {
    accel_kernel_t k = nullptr;
    EXPECT_EQ(accel_module_get_kernel(module_, name, &k), ACCEL_SUCCESS) << accel_last_error();
    return k;
  }
  accel_buffer_t Buffer(uint64_t bytes) {
    accel_buffer_desc_t d = BufferDesc(bytes);
    accel_buffer_t b = nullptr;
    EXPECT_EQ(accel_buffer_create(device_, &d, &b), ACCEL_SUCCESS) << accel_last_error();
    buffers_.push_back(b);
    return b;
  }
  void Upload(accel_buffer_t b, const void* data, uint64_t bytes) {
    ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, data, b, 0, bytes), ACCEL_SUCCESS) << accel_last_error();
  }
  void Sync() {
    ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  }

  // Runs vadd over `n` floats with the given geometry and checks every element.
  void CheckVectorAdd(uint32_t n, const uint32_t (&grid)[3], const uint32_t (&block)[3]) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " grid=" << grid[0] << "x" << grid[1] << "x" << grid[2]
                                      << " block=" << block[0] << "x" << block[1] << "x" << block[2]);
    std::vector<float> a(n), b(n), c(n + 16, -1.0f);
    for (uint32_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i) * 0.5f;
      b[i] = 1000.0f - static_cast<float>(i);
    }
    const uint64_t bytes = uint64_t{n} * sizeof(float);
    accel_buffer_t ba = Buffer(bytes), bb = Buffer(bytes), bc = Buffer(bytes + 16 * sizeof(float));
    Upload(ba, a.data(), bytes);
    Upload(bb, b.data(), bytes);
    Upload(bc, c.data(), c.size() * sizeof(float));
    accel_kernel_arg_t args[] = {BufferArg(ba), BufferArg(bb), BufferArg(bc), ScalarArg(&n)};
    accel_launch_desc_t launch = Launch(grid, block, args, 4);
    ASSERT_EQ(accel_stream_launch_kernel(stream_, Kernel("vadd"), &launch), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, bc, 0, c.data(), c.size() * sizeof(float)), ACCEL_SUCCESS);
    Sync();
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
    for (uint32_t i = n; i < n + 16; ++i) ASSERT_EQ(c[i], -1.0f) << "element " << i << " past n was written";
  }

  // Sums 1..n over a grid of work-groups; checks each group's partial sum and the total.
  void CheckReduction(uint64_t n, const uint32_t (&grid)[3], const uint32_t (&shape)[3]) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " grid=" << grid[0] << "x" << grid[1] << "x" << grid[2]
                                      << " block=" << shape[0] << "x" << shape[1] << "x" << shape[2]);
    const uint32_t groups = grid[0] * grid[1] * grid[2];
    const uint32_t block = shape[0] * shape[1] * shape[2];
    std::vector<uint64_t> in(n);
    std::iota(in.begin(), in.end(), uint64_t{1});
    std::vector<uint64_t> partial(groups, ~uint64_t{0});
    accel_buffer_t bin = Buffer(n * sizeof(uint64_t)), bpart = Buffer(groups * sizeof(uint64_t));
    Upload(bin, in.data(), n * sizeof(uint64_t));
    accel_kernel_arg_t args[] = {BufferArg(bin), BufferArg(bpart), LocalArg(block * sizeof(uint64_t)), ScalarArg(&n)};
    accel_launch_desc_t launch = Launch(grid, shape, args, 4);
    ASSERT_EQ(accel_stream_launch_kernel(stream_, Kernel("reduce"), &launch), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, bpart, 0, partial.data(), groups * sizeof(uint64_t)),
              ACCEL_SUCCESS);
    Sync();
    uint64_t total = 0;
    for (uint32_t g = 0; g < groups; ++g) {
      uint64_t expected = 0;
      for (uint64_t i = uint64_t{g} * block; i < std::min<uint64_t>(n, uint64_t{g + 1} * block); ++i) expected += i + 1;
      ASSERT_EQ(partial[g], expected) << "work-group " << g;
      total += partial[g];
    }
    EXPECT_EQ(total, n * (n + 1) / 2);
  }

  accel_status_t LaunchVadd(const accel_kernel_arg_t* args, uint32_t count, const uint32_t (&block)[3] = {64, 1, 1}) {
    accel_launch_desc_t launch = Launch({1, 1, 1}, block, args, count);
    return accel_stream_launch_kernel(stream_, Kernel("vadd"), &launch);
  }

  ScopedInstance instance_{nullptr};
  accel_device_t device_ = nullptr;
  accel_stream_t stream_ = nullptr;
  accel_module_t module_ = nullptr;
  std::vector<accel_buffer_t> buffers_;
};

TEST_F(KernelTest, VectorAddIsCorrectOverManyGeometries) {
  CheckVectorAdd(1000, {4, 1, 1}, {256, 1, 1});
  CheckVectorAdd(1000, {1000, 1, 1}, {1, 1, 1});
  CheckVectorAdd(1023, {11, 1, 1}, {93, 1, 1});  // non-power-of-two block and grid
  CheckVectorAdd(1, {1, 1, 1}, {1, 1, 1});
  CheckVectorAdd(4096, {4, 4, 4}, {4, 4, 4});  // 3-D grid and block
  CheckVectorAdd(1200, {3, 5, 7}, {2, 3, 2});  // 3-D, odd sizes, n short of the 1260 work-items
  CheckVectorAdd(777, {7, 3, 1}, {37, 1, 1});  // 2-D grid
}

TEST_F(KernelTest, LocalMemoryReductionIsCorrectOverManyShapes) {
  CheckReduction(10007, {40, 1, 1}, {256, 1, 1});  // prime n, last group partly empty
  CheckReduction(5000, {52, 1, 1}, {97, 1, 1});    // non-power-of-two block
  CheckReduction(1, {1, 1, 1}, {1, 1, 1});
  CheckReduction(4096, {4, 1, 1}, {1024, 1, 1});
  CheckReduction(999, {1000, 1, 1}, {1, 1, 1});  // more groups than items: empty groups sum to 0
  CheckReduction(5000, {4, 3, 4}, {8, 4, 4});    // 3-D grid and block
  CheckReduction(4321, {5, 5, 5}, {7, 3, 2});    // 3-D, odd sizes, the last groups partly empty
}

TEST_F(KernelTest, KernelQueriesReportTheDeclaration) {
  accel_module_properties_t mp{};
  mp.stype = ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES;
  mp.struct_size = sizeof(mp);
  ASSERT_EQ(accel_module_get_properties(module_, &mp), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(mp.format, ACCEL_KERNEL_FORMAT_NATIVE_HOST);
  EXPECT_EQ(mp.kernel_count, 4u);
  EXPECT_EQ(mp.device, device_);
  EXPECT_STREQ(mp.name, "test kernels");
  std::vector<std::string> names;
  for (uint32_t i = 0; i < mp.kernel_count; ++i) {
    const char* name = nullptr;
    ASSERT_EQ(accel_module_get_kernel_name(module_, i, &name), ACCEL_SUCCESS) << accel_last_error();
    names.emplace_back(name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"vadd", "reduce", "fail_at", "fixed"}));

  accel_kernel_t vadd = Kernel("vadd");
  EXPECT_EQ(Kernel("vadd"), vadd) << "one name, one handle";
  accel_kernel_properties_t kp{};
  kp.stype = ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES;
  kp.struct_size = sizeof(kp);
  ASSERT_EQ(accel_kernel_get_properties(vadd, &kp), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_STREQ(kp.name, "vadd");
  EXPECT_EQ(kp.argument_count, 4u);
  EXPECT_EQ(kp.module, module_);
  EXPECT_EQ(kp.required_work_group_size[0], 0u);
  EXPECT_EQ(kp.max_work_group_size, ScopedInstance::Capabilities(device_).max_work_group_size);
  const char* expected_names[] = {"a", "b", "c", "n"};
  const accel_kernel_arg_kind_t expected_kinds[] = {ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_KERNEL_ARG_KIND_BUFFER,
                                                    ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_KERNEL_ARG_KIND_SCALAR};
  const accel_access_t expected_access[] = {ACCEL_ACCESS_READ, ACCEL_ACCESS_READ, ACCEL_ACCESS_WRITE,
                                            ACCEL_ACCESS_READ};
  for (uint32_t i = 0; i < 4; ++i) {
    accel_kernel_argument_info_t info{};
    info.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO;
    info.struct_size = sizeof(info);
    ASSERT_EQ(accel_kernel_get_argument_info(vadd, i, &info), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_STREQ(info.name, expected_names[i]);
    EXPECT_EQ(info.kind, expected_kinds[i]);
    EXPECT_EQ(info.access, expected_access[i]);
    EXPECT_EQ(info.size, i == 3 ? 4u : 0u);
  }

  accel_kernel_properties_t fixed{};
  fixed.stype = ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES;
  fixed.struct_size = sizeof(fixed);
  ASSERT_EQ(accel_kernel_get_properties(Kernel("fixed"), &fixed), ACCEL_SUCCESS);
  EXPECT_EQ(fixed.required_work_group_size[0], 8u);
  EXPECT_EQ(fixed.required_work_group_size[1], 1u);
  EXPECT_EQ(fixed.local_memory_size, 64u);
}

TEST_F(KernelTest, UnknownKernelNameIsNotFoundAndListsTheKernels) {
  accel_kernel_t k = reinterpret_cast<accel_kernel_t>(1);
  EXPECT_EQ(accel_module_get_kernel(module_, "vmul", &k), ACCEL_ERROR_NOT_FOUND);
  EXPECT_EQ(k, nullptr);
  const std::string message = accel_last_error();
  EXPECT_TRUE(Contains(message, "no kernel 'vmul'"));
  EXPECT_TRUE(Contains(message, "'vadd', 'reduce', 'fail_at', 'fixed'"));
}

TEST_F(KernelTest, WrongArgumentCountNamesTheCountAndTheSignature) {
  uint32_t n = 4;
  accel_buffer_t b = Buffer(64);
  accel_kernel_arg_t args[] = {BufferArg(b), BufferArg(b), ScalarArg(&n)};
  EXPECT_EQ(LaunchVadd(args, 3), ACCEL_ERROR_INVALID_ARGUMENT);
  const std::string message = accel_last_error();
  EXPECT_TRUE(Contains(message, "accel_stream_launch_kernel: 'desc->arg_count' is 3"));
  EXPECT_TRUE(Contains(message, "kernel 'vadd' takes 4 argument(s) (BUFFER a, BUFFER b, BUFFER c, SCALAR n)"));
}

TEST_F(KernelTest, WrongArgumentKindNamesTheArgument) {
  uint32_t n = 4;
  accel_buffer_t b = Buffer(64);
  accel_kernel_arg_t args[] = {BufferArg(b), ScalarArg(&n), BufferArg(b), ScalarArg(&n)};
  EXPECT_EQ(LaunchVadd(args, 4), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(),
                       "'desc->args[1]' is a SCALAR argument, but kernel 'vadd' declares argument 1 ('b') a BUFFER"));

  accel_kernel_arg_t bad_kind[] = {BufferArg(b), BufferArg(b), BufferArg(b), ScalarArg(&n)};
  bad_kind[2].kind = static_cast<accel_kernel_arg_kind_t>(99);
  EXPECT_EQ(LaunchVadd(bad_kind, 4), ACCEL_ERROR_INVALID_ENUM);
  EXPECT_TRUE(Contains(accel_last_error(), "'desc->args[2].kind' 99"));
}

TEST_F(KernelTest, ArgumentValuesAreCheckedAgainstTheDeclaration) {
  uint32_t n = 4;
  uint64_t wide = 4;
  accel_buffer_t b = Buffer(64);
  accel_buffer_t stale = Buffer(64);
  ASSERT_EQ(accel_buffer_destroy(stale), ACCEL_SUCCESS);
  buffers_.pop_back();

  accel_kernel_arg_t scalar_size[] = {BufferArg(b), BufferArg(b), BufferArg(b), ScalarArg(&wide)};
  EXPECT_EQ(LaunchVadd(scalar_size, 4), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(),
                       "'desc->args[3].size' is 8 bytes, but kernel 'vadd' declares argument 3 ('n') of 4 bytes"));

  accel_kernel_arg_t range[] = {BufferArg(b, 32, 64), BufferArg(b), BufferArg(b), ScalarArg(&n)};
  EXPECT_EQ(LaunchVadd(range, 4), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "'desc->args[0]' binds [32, 96) of a 64-byte buffer"));
  accel_kernel_arg_t wrapping[] = {BufferArg(b, 8, UINT64_MAX), BufferArg(b), BufferArg(b), ScalarArg(&n)};
  EXPECT_EQ(LaunchVadd(wrapping, 4), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(),
                       "'desc->args[0]' binds 18446744073709551615 bytes at offset 8: the range "
                       "wraps around"))
      << accel_last_error();

  accel_kernel_arg_t access[] = {BufferArg(b, 0, 0, ACCEL_ACCESS_READ_WRITE), BufferArg(b), BufferArg(b),
                                 ScalarArg(&n)};
  EXPECT_EQ(LaunchVadd(access, 4), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "'desc->args[0].access' asks for read-write access"));

  accel_kernel_arg_t dead[] = {BufferArg(b), BufferArg(stale), BufferArg(b), ScalarArg(&n)};
  EXPECT_EQ(LaunchVadd(dead, 4), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(Contains(accel_last_error(), "'desc->args[1].buffer'"));

  accel_kernel_arg_t ok[] = {BufferArg(b), BufferArg(b), BufferArg(b), ScalarArg(&n)};
  accel_launch_desc_t zero = Launch({1, 0, 1}, {1, 1, 1}, ok, 4);
  EXPECT_EQ(accel_stream_launch_kernel(stream_, Kernel("vadd"), &zero), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "'desc->grid[1]' (y) is 0"));

  const uint32_t too_big = ScopedInstance::Capabilities(device_).max_work_group_size + 1;
  EXPECT_EQ(LaunchVadd(ok, 4, {too_big, 1, 1}), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "'desc->block[0]'")) << "past the device's limit";

  EXPECT_EQ(LaunchVadd(ok, 4), ACCEL_SUCCESS) << accel_last_error();
  Sync();
}

TEST_F(KernelTest, RequiredWorkGroupSizeAndLocalMemoryLimitsAreEnforced) {
  accel_buffer_t b = Buffer(64 * sizeof(uint32_t));
  accel_kernel_arg_t args[] = {BufferArg(b)};
  accel_launch_desc_t wrong = Launch({8, 1, 1}, {16, 1, 1}, args, 1);
  EXPECT_EQ(accel_stream_launch_kernel(stream_, Kernel("fixed"), &wrong), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "'desc->block' is 16x1x1, but kernel 'fixed' requires 8x1x1"));
  accel_launch_desc_t right = Launch({8, 1, 1}, {8, 1, 1}, args, 1);
  EXPECT_EQ(accel_stream_launch_kernel(stream_, Kernel("fixed"), &right), ACCEL_SUCCESS) << accel_last_error();
  std::vector<uint32_t> out(64, 0);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, b, 0, out.data(), out.size() * sizeof(uint32_t)), ACCEL_SUCCESS);
  Sync();
  EXPECT_EQ(std::accumulate(out.begin(), out.end(), 0u), 64u);

  const uint64_t local = ScopedInstance::Capabilities(device_).local_memory_size;
  uint64_t n = 1;
  accel_buffer_t in = Buffer(8), part = Buffer(8);
  accel_kernel_arg_t reduce_args[] = {BufferArg(in), BufferArg(part), LocalArg(local + 1), ScalarArg(&n)};
  accel_launch_desc_t launch = Launch({1, 1, 1}, {1, 1, 1}, reduce_args, 4);
  EXPECT_EQ(accel_stream_launch_kernel(stream_, Kernel("reduce"), &launch), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "kernel 'reduce' needs"));
  EXPECT_TRUE(Contains(accel_last_error(), "of local memory"));
}

// Local-memory sizes whose sum wraps past 2^64 (two of 2^63; one that wraps with the kernel's static 64 bytes) are
// refused as too much local memory, not passed to the backend as a small total with huge arguments.
accel_status_t NoWork(const accel_native_work_group_t*, const accel_native_arg_t*) { return ACCEL_SUCCESS; }
const accel_kernel_argument_info_t kTwoLocalsArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY, ACCEL_ACCESS_READ, 0, "a"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY, ACCEL_ACCESS_READ, 0, "b"),
};

TEST_F(KernelTest, LocalMemorySizesThatWrapAreRefused) {
  accel_native_kernel_desc_t kernels[2] = {accel_test::NativeKernel("two_locals", NoWork, kTwoLocalsArgs, 2),
                                           accel_test::NativeKernel("one_local", NoWork, kTwoLocalsArgs, 1)};
  kernels[1].local_memory_size = 64;
  accel_native_module_t table = {
      ACCEL_STRUCTURE_TYPE_NATIVE_MODULE, sizeof(accel_native_module_t), nullptr, kernels, 2, 0};
  accel_module_source_t source = NativeSource(table);
  accel_module_desc_t desc = ModuleDesc(&source, 1, nullptr);
  accel_module_t m = nullptr;
  ASSERT_EQ(accel_module_create(device_, &desc, &m), ACCEL_SUCCESS) << accel_last_error();
  accel_kernel_t two = nullptr, one = nullptr;
  ASSERT_EQ(accel_module_get_kernel(m, "two_locals", &two), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_module_get_kernel(m, "one_local", &one), ACCEL_SUCCESS) << accel_last_error();
  accel_kernel_arg_t halves[] = {LocalArg(uint64_t{1} << 63), LocalArg(uint64_t{1} << 63)};
  accel_launch_desc_t launch = Launch({1, 1, 1}, {1, 1, 1}, halves, 2);
  EXPECT_EQ(accel_stream_launch_kernel(stream_, two, &launch), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "kernel 'two_locals' needs")) << accel_last_error();
  accel_kernel_arg_t wraps[] = {LocalArg(UINT64_MAX - 63)};
  launch = Launch({1, 1, 1}, {1, 1, 1}, wraps, 1);
  EXPECT_EQ(accel_stream_launch_kernel(stream_, one, &launch), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "kernel 'one_local' needs")) << accel_last_error();
  // Sizes that fit still launch.
  accel_kernel_arg_t fit[] = {LocalArg(64), LocalArg(64)};
  launch = Launch({1, 1, 1}, {1, 1, 1}, fit, 2);
  EXPECT_EQ(accel_stream_launch_kernel(stream_, two, &launch), ACCEL_SUCCESS) << accel_last_error();
  Sync();
  EXPECT_EQ(accel_module_destroy(m), ACCEL_SUCCESS) << accel_last_error();
}

TEST_F(KernelTest, AFailingWorkGroupBecomesTheStreamsError) {
  uint32_t group = 5;
  accel_kernel_arg_t args[] = {ScalarArg(&group)};
  accel_launch_desc_t launch = Launch({16, 1, 1}, {1, 1, 1}, args, 1);
  ASSERT_EQ(accel_stream_launch_kernel(stream_, Kernel("fail_at"), &launch), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  const std::string message = accel_last_error();
  EXPECT_TRUE(Contains(message, "launch kernel 'fail_at'"));
  EXPECT_TRUE(Contains(message, "work-group (5,0,0)"));
  EXPECT_EQ(accel_stream_clear_error(stream_), ACCEL_SUCCESS) << accel_last_error();
  group = 1000;  // no work-group fails
  ASSERT_EQ(accel_stream_launch_kernel(stream_, Kernel("fail_at"), &launch), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
}

TEST_F(KernelTest, ScalarsAreCopiedAtEnqueueAndBuffersOutliveTheirHandles) {
  accel_test::Gate gate;
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, accel_test::Gate::Wait, &gate), ACCEL_SUCCESS);
  uint32_t n = 256;
  std::vector<float> a(n, 1.5f), b(n, 2.0f), c(n, 0.0f);
  accel_buffer_t ba = Buffer(n * 4), bb = Buffer(n * 4), bc = Buffer(n * 4);
  Upload(ba, a.data(), n * 4);
  Upload(bb, b.data(), n * 4);
  accel_kernel_arg_t args[] = {BufferArg(ba), BufferArg(bb), BufferArg(bc), ScalarArg(&n)};
  accel_launch_desc_t launch = Launch({4, 1, 1}, {64, 1, 1}, args, 4);
  ASSERT_EQ(accel_stream_launch_kernel(stream_, Kernel("vadd"), &launch), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, bc, 0, c.data(), n * 4), ACCEL_SUCCESS);
  n = 0;  // the launch keeps the value it was given
  for (accel_buffer_t buffer : {ba, bb}) ASSERT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
  buffers_.erase(buffers_.begin(), buffers_.begin() + 2);
  EXPECT_EQ(accel_module_destroy(module_), ACCEL_SUCCESS) << accel_last_error();
  accel_module_t destroyed = module_;
  module_ = nullptr;
  gate.Open();
  Sync();
  for (float v : c) ASSERT_EQ(v, 3.5f);
  // The module's kernels went with it.
  accel_kernel_t k = nullptr;
  EXPECT_EQ(accel_module_get_kernel(destroyed, "vadd", &k), ACCEL_ERROR_INVALID_HANDLE);
}

// accel_kernel_prepare_launch with the same arguments as Launch; the status, *out NULL on failure.
accel_status_t Prepare(accel_kernel_t kernel, const uint32_t (&grid)[3], const uint32_t (&block)[3],
                       const accel_kernel_arg_t* args, uint32_t count, accel_prepared_launch_t* out) {
  accel_launch_desc_t launch = Launch(grid, block, args, count);
  return accel_kernel_prepare_launch(kernel, &launch, out);
}

TEST_F(KernelTest, PreparedLaunchesRunInOrderAndKeepTheirKernelAndBuffers) {
  // The host backend prepares nothing itself: the core keeps the checked launch and enqueues it each time.
  uint32_t n = 256;
  std::vector<float> a(n, 1.5f), c(n, 0.0f);
  accel_buffer_t ba = Buffer(n * 4), bc = Buffer(n * 4);
  Upload(ba, a.data(), n * 4);
  accel_kernel_arg_t args[] = {BufferArg(ba), BufferArg(bc), BufferArg(bc), ScalarArg(&n)};  // c = a + c
  accel_prepared_launch_t accumulate = nullptr;
  ASSERT_EQ(Prepare(Kernel("vadd"), {4, 1, 1}, {64, 1, 1}, args, 4, &accumulate), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_NE(accumulate, nullptr);
  n = 0;  // copied when prepared
  // The handles go; the prepared launch keeps the kernel (and its module) and the buffer.
  ASSERT_EQ(accel_buffer_destroy(ba), ACCEL_SUCCESS);
  std::erase(buffers_, ba);
  ASSERT_EQ(accel_module_destroy(module_), ACCEL_SUCCESS) << accel_last_error();
  module_ = nullptr;
  accel_test::Gate gate;  // everything below is enqueued before any of it runs
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, accel_test::Gate::Wait, &gate), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, c.data(), bc, 0, 256 * 4), ACCEL_SUCCESS);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(accel_stream_launch_prepared(stream_, accumulate), ACCEL_SUCCESS) << accel_last_error();
  }
  std::vector<float> after_three(256, -1.0f);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, bc, 0, after_three.data(), 256 * 4), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_launch_prepared(stream_, accumulate), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_prepared_launch_destroy(accumulate), ACCEL_SUCCESS) << accel_last_error();  // enqueued: still runs
  std::vector<float> after_four(256, -1.0f);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, bc, 0, after_four.data(), 256 * 4), ACCEL_SUCCESS);
  gate.Open();
  Sync();
  EXPECT_EQ(after_three, std::vector<float>(256, 4.5f));
  EXPECT_EQ(after_four, std::vector<float>(256, 6.0f));
  EXPECT_EQ(accel_stream_launch_prepared(stream_, accumulate), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(Contains(accel_last_error(), "stale prepared launch handle")) << accel_last_error();
}

TEST_F(KernelTest, PreparingChecksAsALaunchDoesAndAStreamMustBeOnTheKernelsDevice) {
  uint32_t n = 64;
  accel_buffer_t b = Buffer(n * 4);
  accel_kernel_t vadd = Kernel("vadd");
  // The same refusals and messages as accel_stream_launch_kernel, with nothing made.
  accel_kernel_arg_t three[] = {BufferArg(b), BufferArg(b), BufferArg(b)};
  accel_prepared_launch_t p = reinterpret_cast<accel_prepared_launch_t>(uintptr_t{1});
  EXPECT_EQ(Prepare(vadd, {1, 1, 1}, {64, 1, 1}, three, 3, &p), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(p, nullptr);
  const std::string prepare_message = accel_last_error();
  EXPECT_EQ(LaunchVadd(three, 3), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(prepare_message, "'desc->arg_count' is 3, but kernel 'vadd' takes 4")) << prepare_message;
  // The same message after the function's name.
  const std::string launch_message = accel_last_error();
  EXPECT_EQ(prepare_message.substr(prepare_message.find(": ")), launch_message.substr(launch_message.find(": ")));
  accel_kernel_arg_t wide[] = {BufferArg(b), BufferArg(b), BufferArg(b, 8, n * 4), ScalarArg(&n)};
  EXPECT_EQ(Prepare(vadd, {1, 1, 1}, {64, 1, 1}, wide, 4, &p), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "'desc->args[2]' binds [8, 264) of a 256-byte buffer"))
      << accel_last_error();
  EXPECT_EQ(accel_kernel_prepare_launch(vadd, nullptr, &p), ACCEL_ERROR_INVALID_ARGUMENT);
  accel_kernel_arg_t ok[] = {BufferArg(b), BufferArg(b), BufferArg(b), ScalarArg(&n)};
  accel_launch_desc_t launch = Launch({1, 1, 1}, {64, 1, 1}, ok, 4);
  EXPECT_EQ(accel_kernel_prepare_launch(vadd, &launch, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);

  // A stream of another device (here: the host device of another instance) is refused.
  ASSERT_EQ(Prepare(vadd, {1, 1, 1}, {64, 1, 1}, ok, 4, &p), ACCEL_SUCCESS) << accel_last_error();
  {
    ScopedInstance other(nullptr);
    accel_device_t device = other.DeviceOf("host");
    ASSERT_NE(device, nullptr);
    accel_stream_t s = nullptr;
    ASSERT_EQ(accel_stream_create(device, nullptr, &s), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_stream_launch_prepared(s, p), ACCEL_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(Contains(accel_last_error(), "'prepared' launches kernel 'vadd' on")) << accel_last_error();
    EXPECT_EQ(accel_stream_destroy(s), ACCEL_SUCCESS);
  }
  EXPECT_EQ(accel_stream_launch_prepared(nullptr, p), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_stream_launch_prepared(stream_, reinterpret_cast<accel_prepared_launch_t>(b)),
            ACCEL_ERROR_INVALID_HANDLE)
      << "a buffer handle is not a prepared launch";
  EXPECT_EQ(accel_prepared_launch_destroy(p), ACCEL_SUCCESS);
  EXPECT_EQ(accel_prepared_launch_destroy(p), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(Contains(accel_last_error(), "already destroyed")) << accel_last_error();
}

TEST_F(KernelTest, PreparedLaunchesLeftAtInstanceDestroyGoWithIt) {
  // Under ASan, a leak or a use after free of the kernel or buffers it kept fails the run.
  ScopedInstance other(nullptr);
  accel_device_t device = other.DeviceOf("host");
  ASSERT_NE(device, nullptr);
  accel_module_source_t source = NativeSource(accel_test::TestModule());
  accel_module_desc_t desc = ModuleDesc(&source, 1, "test kernels");
  accel_module_t module = nullptr;
  ASSERT_EQ(accel_module_create(device, &desc, &module), ACCEL_SUCCESS) << accel_last_error();
  accel_kernel_t vadd = nullptr;
  ASSERT_EQ(accel_module_get_kernel(module, "vadd", &vadd), ACCEL_SUCCESS);
  accel_buffer_desc_t bd = BufferDesc(256);
  accel_buffer_t b = nullptr;
  ASSERT_EQ(accel_buffer_create(device, &bd, &b), ACCEL_SUCCESS);
  uint32_t n = 64;
  accel_kernel_arg_t args[] = {BufferArg(b), BufferArg(b), BufferArg(b), ScalarArg(&n)};
  accel_prepared_launch_t p = nullptr;
  ASSERT_EQ(Prepare(vadd, {1, 1, 1}, {64, 1, 1}, args, 4, &p), ACCEL_SUCCESS) << accel_last_error();
  accel_stream_t s = nullptr;
  ASSERT_EQ(accel_stream_create(device, nullptr, &s), ACCEL_SUCCESS);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(accel_stream_launch_prepared(s, p), ACCEL_SUCCESS) << accel_last_error();
  // Freed on the stream while the prepared launch keeps it: the teardown frees it on the stream, which must still be
  // alive then.
  ASSERT_EQ(accel_stream_free_buffer(s, b), ACCEL_SUCCESS) << accel_last_error();
  // `other` goes with its stream, prepared launch and module still live.
}

TEST_F(KernelTest, OnePreparedLaunchFromManyThreads) {
  // Threads enqueue one prepared launch on one stream at once (the stream orders them): each runs exactly once.
  constexpr int kThreads = 4;
  constexpr int kRounds = 20;
  constexpr uint32_t kN = 512;
  std::vector<float> in(kN, 2.0f), zero(kN, 0.0f);
  accel_buffer_t a = Buffer(kN * 4), c = Buffer(kN * 4);
  Upload(a, in.data(), kN * 4);
  Upload(c, zero.data(), kN * 4);
  Sync();
  uint32_t n = kN;
  accel_kernel_arg_t args[] = {BufferArg(a), BufferArg(c), BufferArg(c), ScalarArg(&n)};  // c = a + c
  accel_prepared_launch_t p = nullptr;
  ASSERT_EQ(Prepare(Kernel("vadd"), {8, 1, 1}, {64, 1, 1}, args, 4, &p), ACCEL_SUCCESS) << accel_last_error();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        if (accel_stream_launch_prepared(stream_, p) != ACCEL_SUCCESS) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<float> out(kN, -1.0f);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, c, 0, out.data(), kN * 4), ACCEL_SUCCESS);
  Sync();
  EXPECT_EQ(out, std::vector<float>(kN, 2.0f * kThreads * kRounds));
  EXPECT_EQ(accel_prepared_launch_destroy(p), ACCEL_SUCCESS);
}

TEST_F(KernelTest, DestroyingAModuleMakesItsKernelsStale) {
  accel_kernel_t vadd = Kernel("vadd");
  ASSERT_EQ(accel_module_destroy(module_), ACCEL_SUCCESS);
  module_ = nullptr;
  accel_kernel_properties_t kp{};
  kp.stype = ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES;
  kp.struct_size = sizeof(kp);
  EXPECT_EQ(accel_kernel_get_properties(vadd, &kp), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(Contains(accel_last_error(), "stale kernel handle"));
}

TEST_F(KernelTest, NoExecutableFormatIsUnsupportedAndNamesBothSides) {
  const char spirv[] = "not really spir-v";
  accel_module_source_t sources[2] = {};
  for (auto& s : sources) {
    s.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
    s.struct_size = sizeof(s);
    s.data = spirv;
    s.size = sizeof(spirv);
  }
  sources[0].format = ACCEL_KERNEL_FORMAT_SPIRV_VULKAN;
  sources[1].format = ACCEL_KERNEL_FORMAT_PTX;
  accel_module_desc_t desc = ModuleDesc(sources, 2, "gpu only");
  accel_module_t m = nullptr;
  EXPECT_EQ(accel_module_create(device_, &desc, &m), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_EQ(m, nullptr);
  const std::string message = accel_last_error();
  EXPECT_TRUE(Contains(message, "accel_module_create: device 0"));
  EXPECT_TRUE(Contains(message, "the module 'gpu only' has spirv-vulkan, ptx; the device executes native-host"));
}

TEST_F(KernelTest, SeveralFormatsPickTheFirstTheDeviceExecutes) {
  const char spirv[] = "not really spir-v";
  accel_module_source_t sources[2] = {};
  sources[0].stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
  sources[0].struct_size = sizeof(sources[0]);
  sources[0].format = ACCEL_KERNEL_FORMAT_SPIRV_VULKAN;
  sources[0].data = spirv;
  sources[0].size = sizeof(spirv);
  sources[1] = NativeSource(accel_test::TestModule());
  accel_module_desc_t desc = ModuleDesc(sources, 2, nullptr);
  accel_module_t m = nullptr;
  ASSERT_EQ(accel_module_create(device_, &desc, &m), ACCEL_SUCCESS) << accel_last_error();
  accel_module_properties_t mp{};
  mp.stype = ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES;
  mp.struct_size = sizeof(mp);
  ASSERT_EQ(accel_module_get_properties(m, &mp), ACCEL_SUCCESS);
  EXPECT_EQ(mp.format, ACCEL_KERNEL_FORMAT_NATIVE_HOST);
  EXPECT_EQ(mp.source_index, 1u);
  EXPECT_EQ(mp.available_formats, ACCEL_KERNEL_FORMAT_NATIVE_HOST | ACCEL_KERNEL_FORMAT_SPIRV_VULKAN);
  EXPECT_STREQ(mp.name, "");
  EXPECT_EQ(accel_module_destroy(m), ACCEL_SUCCESS);
}

TEST_F(KernelTest, MalformedNativeModulesAreRejectedWithTheField) {
  accel_native_kernel_desc_t kernels[2] = {
      accel_test::NativeKernel("vadd", accel_test::VectorAdd, accel_test::kVectorAddArgs, 4),
      accel_test::NativeKernel("vadd", accel_test::VectorAdd, accel_test::kVectorAddArgs, 4)};
  accel_native_module_t table = {
      ACCEL_STRUCTURE_TYPE_NATIVE_MODULE, sizeof(accel_native_module_t), nullptr, kernels, 2, 0};
  accel_module_source_t source = NativeSource(table);
  accel_module_desc_t desc = ModuleDesc(&source, 1, nullptr);
  accel_module_t m = nullptr;
  EXPECT_EQ(accel_module_create(device_, &desc, &m), ACCEL_ERROR_INVALID_ARGUMENT) << "duplicate kernel name";
  EXPECT_TRUE(Contains(accel_last_error(), "vadd"));
  kernels[1].name = "other";
  kernels[1].function = nullptr;
  EXPECT_EQ(accel_module_create(device_, &desc, &m), ACCEL_ERROR_INVALID_ARGUMENT) << "NULL function";
  EXPECT_TRUE(Contains(accel_last_error(), "kernels[1]"));

  const char junk[] = "neither a table nor ELF";
  source.data = junk;
  source.size = sizeof(junk);
  EXPECT_EQ(accel_module_create(device_, &desc, &m), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(accel_last_error(), "'desc->sources[0]' (native-host)"));

  source.data = nullptr;
  source.path = "/nonexistent/module.so";
  EXPECT_EQ(accel_module_create(device_, &desc, &m), ACCEL_ERROR_NOT_FOUND);
  EXPECT_TRUE(Contains(accel_last_error(), "'desc->sources[0].path' '/nonexistent/module.so' cannot be read"));
}

// vsub from tests/kernels/native_module.cc, loaded by path or from its bytes.
void CheckSharedLibraryModule(KernelTest* t, accel_device_t device, accel_stream_t stream,
                              const accel_module_source_t& source) {
  accel_module_desc_t desc = ModuleDesc(&source, 1, "vsub library");
  accel_module_t m = nullptr;
  ASSERT_EQ(accel_module_create(device, &desc, &m), ACCEL_SUCCESS) << accel_last_error();
  accel_kernel_t k = nullptr;
  ASSERT_EQ(accel_module_get_kernel(m, "vsub", &k), ACCEL_SUCCESS) << accel_last_error();
  uint32_t n = 100;
  std::vector<float> a(n, 5.0f), b(n), c(n, 0.0f);
  for (uint32_t i = 0; i < n; ++i) b[i] = static_cast<float>(i);
  accel_buffer_desc_t bd = BufferDesc(n * 4);
  accel_buffer_t ba = nullptr, bb = nullptr, bc = nullptr;
  for (accel_buffer_t* p : {&ba, &bb, &bc}) ASSERT_EQ(accel_buffer_create(device, &bd, p), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, a.data(), ba, 0, n * 4), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, b.data(), bb, 0, n * 4), ACCEL_SUCCESS);
  accel_kernel_arg_t args[] = {BufferArg(ba), BufferArg(bb), BufferArg(bc), ScalarArg(&n)};
  accel_launch_desc_t launch = Launch({7, 1, 1}, {16, 1, 1}, args, 4);
  ASSERT_EQ(accel_stream_launch_kernel(stream, k, &launch), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream, bc, 0, c.data(), n * 4), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], 5.0f - static_cast<float>(i)) << i;
  for (accel_buffer_t buffer : {ba, bb, bc}) EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
  EXPECT_EQ(accel_module_destroy(m), ACCEL_SUCCESS);
  (void)t;
}

TEST_F(KernelTest, NativeModuleFromASharedLibraryPath) {
  accel_module_source_t source{};
  source.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
  source.struct_size = sizeof(source);
  source.format = ACCEL_KERNEL_FORMAT_NATIVE_HOST;
  source.path = ACCEL_TEST_NATIVE_MODULE;
  CheckSharedLibraryModule(this, device_, stream_, source);
}

TEST_F(KernelTest, NativeModuleFromSharedLibraryBytes) {
  std::ifstream file(ACCEL_TEST_NATIVE_MODULE, std::ios::binary);
  ASSERT_TRUE(file) << ACCEL_TEST_NATIVE_MODULE;
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CheckSharedLibraryModule(this, device_, stream_,
                           accel_test::ModuleSource(ACCEL_KERNEL_FORMAT_NATIVE_HOST, bytes.data(), bytes.size()));
}

TEST_F(KernelTest, LaunchesFromManyThreadsAllComplete) {
  constexpr int kThreads = 4;
  constexpr uint32_t kN = 512;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  accel_kernel_t vadd = Kernel("vadd");
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      accel_stream_t s = nullptr;
      if (accel_stream_create(device_, nullptr, &s) != ACCEL_SUCCESS) return void(++failures);
      accel_buffer_desc_t bd = BufferDesc(kN * 4);
      accel_buffer_t a = nullptr, c = nullptr;
      accel_buffer_create(device_, &bd, &a);
      accel_buffer_create(device_, &bd, &c);
      std::vector<float> in(kN, static_cast<float>(t)), out(kN, -1.0f);
      uint32_t n = kN;
      accel_stream_copy_host_to_buffer(s, in.data(), a, 0, kN * 4);
      for (int i = 0; i < 20; ++i) {
        accel_kernel_arg_t args[] = {BufferArg(a), BufferArg(a), BufferArg(c), ScalarArg(&n)};
        accel_launch_desc_t launch = Launch({8, 1, 1}, {64, 1, 1}, args, 4);
        if (accel_stream_launch_kernel(s, vadd, &launch) != ACCEL_SUCCESS) ++failures;
      }
      accel_stream_copy_buffer_to_host(s, c, 0, out.data(), kN * 4);
      if (accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE) != ACCEL_SUCCESS) ++failures;
      for (float v : out) {
        if (v != 2.0f * static_cast<float>(t)) ++failures;
      }
      accel_buffer_destroy(a);
      accel_buffer_destroy(c);
      accel_stream_destroy(s);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
