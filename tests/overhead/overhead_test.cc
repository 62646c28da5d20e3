// Which native calls each Accel operation makes on the hot path
// (docs/overhead.md). The backend loads a counting stand-in for its runtime
// library (gen_counting_shim.py), and each test asserts the exact multiset of
// native calls one operation, followed by a synchronize, costs: no extra
// queries, flushes or waits. An idle synchronize is measured too.
//
// Run with ACCEL_OVERHEAD_BACKEND=opencl|vulkan and the backend's library
// setting (ACCEL_OPENCL_LIBRARY / ACCEL_VULKAN_LOADER) at the stand-in;
// ACCEL_OVERHEAD_PRINT=1 prints the observed calls.
#include <accel/accel.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gate.h"

namespace {

using Calls = std::map<std::string, uint64_t>;

struct Shim {
  void (*reset)() = nullptr;
  size_t (*dump)(char*, size_t) = nullptr;
};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

class Overhead : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = Env("ACCEL_OVERHEAD_BACKEND");
    const std::string shim = Env(backend_ == "opencl" ? "ACCEL_OPENCL_LIBRARY" : "ACCEL_VULKAN_LOADER");
    ASSERT_FALSE(shim.empty()) << "set ACCEL_OVERHEAD_BACKEND and the backend's library setting";
    void* lib = dlopen(shim.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) lib = dlopen(shim.c_str(), RTLD_NOW);
    ASSERT_NE(lib, nullptr) << dlerror();
    shim_.reset = reinterpret_cast<void (*)()>(dlsym(lib, "accel_count_reset"));
    shim_.dump = reinterpret_cast<size_t (*)(char*, size_t)>(dlsym(lib, "accel_count_dump"));
    ASSERT_NE(shim_.reset, nullptr);
    accel_instance_desc_t desc{};
    desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
    desc.struct_size = sizeof(desc);
    desc.backends = backend_.c_str();
    ASSERT_EQ(accel_instance_create(&desc, &instance_), ACCEL_SUCCESS) << accel_last_error();
    uint32_t count = 1;
    ASSERT_EQ(accel_instance_enumerate_devices(instance_, &count, nullptr), ACCEL_SUCCESS);
    ASSERT_GE(count, 1u) << "no " << backend_ << " device";
    count = 1;
    ASSERT_EQ(accel_instance_enumerate_devices(instance_, &count, &device_), ACCEL_SUCCESS);
    accel_buffer_desc_t bd{};
    bd.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
    bd.struct_size = sizeof(bd);
    bd.size = kSize;
    ASSERT_EQ(accel_buffer_create(device_, &bd, &a_), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_buffer_create(device_, &bd, &b_), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_stream_create(device_, nullptr, &stream_), ACCEL_SUCCESS) << accel_last_error();
    // fill_u32 from the corpus, in the backend's format.
    const std::string corpus = ACCEL_OVERHEAD_CORPUS;
    accel_module_source_t src{};
    src.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
    src.struct_size = sizeof(src);
    const std::string path =
        backend_ == "opencl" ? corpus + "/opencl-c/corpus.cl" : corpus + "/spirv-vulkan/fill_u32.spv";
    src.format = backend_ == "opencl" ? ACCEL_KERNEL_FORMAT_OPENCL_C : ACCEL_KERNEL_FORMAT_SPIRV_VULKAN;
    src.path = path.c_str();
    accel_module_desc_t md{};
    md.stype = ACCEL_STRUCTURE_TYPE_MODULE_DESC;
    md.struct_size = sizeof(md);
    md.sources = &src;
    md.source_count = 1;
    ASSERT_EQ(accel_module_create(device_, &md, &module_), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_module_get_kernel(module_, "fill_u32", &kernel_), ACCEL_SUCCESS) << accel_last_error();
    for (auto& arg : args_) {
      arg = {};
      arg.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
      arg.struct_size = sizeof(arg);
    }
    args_[0].kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
    args_[0].buffer = a_;
    args_[1].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
    args_[1].value = &value_;
    args_[1].size = 4;
    args_[2].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
    args_[2].value = &n_;
    args_[2].size = 4;
    launch_.stype = ACCEL_STRUCTURE_TYPE_LAUNCH_DESC;
    launch_.struct_size = sizeof(launch_);
    for (int d = 0; d < 3; ++d) launch_.grid[d] = launch_.block[d] = 1;
    launch_.grid[0] = 4;
    launch_.block[0] = 16;
    launch_.args = args_;
    launch_.arg_count = 3;
    // Warm up every path once: pipelines, staging, pools.
    host_.assign(kSize, 1);
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(accel_stream_launch_kernel(stream_, kernel_, &launch_), ACCEL_SUCCESS) << accel_last_error();
      ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, host_.data(), a_, 0, kSize), ACCEL_SUCCESS);
      ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, a_, 0, host_.data(), kSize), ACCEL_SUCCESS);
      ASSERT_EQ(accel_stream_copy_buffer(stream_, a_, 0, b_, 0, kSize), ACCEL_SUCCESS);
      ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
    }
  }

  void TearDown() override {
    if (stream_ != nullptr) accel_stream_destroy(stream_);
    if (a_ != nullptr) accel_buffer_destroy(a_);
    if (b_ != nullptr) accel_buffer_destroy(b_);
    if (module_ != nullptr) accel_module_destroy(module_);
    if (instance_ != nullptr) accel_instance_destroy(instance_);
  }

  // The native calls `op` and one synchronize cost.
  template <typename Op>
  Calls Count(Op op) {
    shim_.reset();
    op();
    EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
    std::vector<char> buf(16384);
    const size_t n = shim_.dump(buf.data(), buf.size());
    Calls calls;
    std::istringstream in(std::string(buf.data(), std::min(n, buf.size())));
    std::string line;
    while (std::getline(in, line)) {
      const auto eq = line.find('=');
      if (eq != std::string::npos) calls[line.substr(0, eq)] = std::stoull(line.substr(eq + 1));
    }
    if (!Env("ACCEL_OVERHEAD_PRINT").empty()) {
      std::printf("%s %s:", backend_.c_str(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
      for (const auto& [k, v] : calls) std::printf(" %s=%llu", k.c_str(), static_cast<unsigned long long>(v));
      std::printf("\n");
    }
    return calls;
  }

  const Calls& Expected(const std::string& op) const;

  static constexpr uint64_t kSize = 65536;
  std::string backend_;
  Shim shim_;
  accel_instance_t instance_ = nullptr;
  accel_device_t device_ = nullptr;
  accel_buffer_t a_ = nullptr;
  accel_buffer_t b_ = nullptr;
  accel_stream_t stream_ = nullptr;
  accel_module_t module_ = nullptr;
  accel_kernel_t kernel_ = nullptr;
  accel_kernel_arg_t args_[3];
  accel_launch_desc_t launch_{};
  uint32_t value_ = 7;
  uint32_t n_ = 64;
  std::vector<uint8_t> host_;
};

// The exact calls, per backend and operation (docs/overhead.md explains each).
const std::map<std::string, std::map<std::string, Calls>>& Table() {
  static const auto* table = new std::map<std::string, std::map<std::string, Calls>>{
#include "overhead_expected.inc"
  };
  return *table;
}

const Calls& Overhead::Expected(const std::string& op) const {
  static const Calls kNone;
  const auto b = Table().find(backend_);
  if (b == Table().end()) return kNone;
  const auto o = b->second.find(op);
  return o == b->second.end() ? kNone : o->second;
}

TEST_F(Overhead, IdleSynchronize) {
  EXPECT_EQ(Count([] {}), Expected("idle_synchronize"));
}

TEST_F(Overhead, Launch) {
  EXPECT_EQ(Count([&] { ASSERT_EQ(accel_stream_launch_kernel(stream_, kernel_, &launch_), ACCEL_SUCCESS); }),
            Expected("launch"));
}

TEST_F(Overhead, CopyHostToDevice) {
  EXPECT_EQ(
      Count([&] { ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, host_.data(), a_, 0, kSize), ACCEL_SUCCESS); }),
      Expected("copy_host_to_device"));
}

TEST_F(Overhead, CopyDeviceToHost) {
  EXPECT_EQ(
      Count([&] { ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, a_, 0, host_.data(), kSize), ACCEL_SUCCESS); }),
      Expected("copy_device_to_host"));
}

TEST_F(Overhead, CopyDeviceToDevice) {
  EXPECT_EQ(Count([&] { ASSERT_EQ(accel_stream_copy_buffer(stream_, a_, 0, b_, 0, kSize), ACCEL_SUCCESS); }),
            Expected("copy_device_to_device"));
}

TEST_F(Overhead, Fill) {
  const uint32_t pattern = 0x01020304;
  EXPECT_EQ(Count([&] { ASSERT_EQ(accel_stream_fill_buffer(stream_, a_, 0, kSize, &pattern, 4), ACCEL_SUCCESS); }),
            Expected("fill"));
}

TEST_F(Overhead, LaunchWithANewValue) {
  // One argument differs from the launch before: only it is bound again, and the kernel sees the new value.
  value_ = 9;
  EXPECT_EQ(Count([&] { ASSERT_EQ(accel_stream_launch_kernel(stream_, kernel_, &launch_), ACCEL_SUCCESS); }),
            Expected("launch_new_value"));
  std::vector<uint32_t> out(n_, 0);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, a_, 0, out.data(), out.size() * 4), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(out, std::vector<uint32_t>(n_, 9u));
  value_ = 7;
  ASSERT_EQ(accel_stream_launch_kernel(stream_, kernel_, &launch_), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, a_, 0, out.data(), out.size() * 4), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(out, std::vector<uint32_t>(n_, 7u)) << "and back to the old one";
}

// Calls a backend makes once per submission, where it may record several queued launches into one
// (the table's "per_submission"): how many launches a submission takes depends on how far the enqueuing thread got
// ahead, so these counts may be lower than the table's, down to one, and equal to each other.
Calls PerSubmissionAsInTable(Calls calls, const Calls& per_submission, const Calls& expected) {
  if (per_submission.empty()) return calls;
  const uint64_t n = calls[per_submission.begin()->first];
  for (const auto& [name, count] : per_submission) {
    EXPECT_EQ(calls[name], n * count) << name << ": once per submission, like the other calls of a submission";
    EXPECT_GE(calls[name], count) << name;
    const auto e = expected.find(name);
    EXPECT_LE(calls[name], e != expected.end() ? e->second : 0) << name << ": more than one per launch";
    calls[name] = e != expected.end() ? e->second : 0;
  }
  return calls;
}

TEST_F(Overhead, TenLaunches) {
  const Calls calls = Count([&] {
    for (int i = 0; i < 10; ++i) ASSERT_EQ(accel_stream_launch_kernel(stream_, kernel_, &launch_), ACCEL_SUCCESS);
  });
  EXPECT_EQ(PerSubmissionAsInTable(calls, Expected("per_submission"), Expected("ten_launches")),
            Expected("ten_launches"));
}

// A launch prepared once (its checks, and on OpenCL its own cl_kernel with the arguments set), then enqueued ten
// times: the preparation's calls apart, each launch is the native enqueue alone, with no argument set.
TEST_F(Overhead, TenPreparedLaunches) {
  accel_prepared_launch_t prepared = nullptr;
  EXPECT_EQ(Count([&] { ASSERT_EQ(accel_kernel_prepare_launch(kernel_, &launch_, &prepared), ACCEL_SUCCESS); }),
            Expected("prepare_launch"));
  ASSERT_NE(prepared, nullptr);
  const Calls calls = Count([&] {
    for (int i = 0; i < 10; ++i) ASSERT_EQ(accel_stream_launch_prepared(stream_, prepared), ACCEL_SUCCESS);
  });
  EXPECT_EQ(PerSubmissionAsInTable(calls, Expected("per_submission"), Expected("ten_prepared_launches")),
            Expected("ten_prepared_launches"));
  EXPECT_EQ(accel_prepared_launch_destroy(prepared), ACCEL_SUCCESS);
}

// Ten launches queued behind a host callback that holds the stream until all ten are enqueued: a backend that
// batches what is queued records them into one submission.
TEST_F(Overhead, TenQueuedLaunches) {
  accel_test::Gate gate;
  EXPECT_EQ(Count([&] {
              ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, accel_test::Gate::Wait, &gate), ACCEL_SUCCESS)
                  << accel_last_error();
              for (int i = 0; i < 10; ++i) {
                EXPECT_EQ(accel_stream_launch_kernel(stream_, kernel_, &launch_), ACCEL_SUCCESS) << accel_last_error();
              }
              gate.Open();  // before Count's synchronize, whatever the launches returned
            }),
            Expected("ten_queued_launches"));
}

// Launches, buffer copies and fills queued together behind a host callback that holds the stream: a backend that
// batches what is queued records all ten into one submission.
TEST_F(Overhead, TenQueuedMixedOperations) {
  accel_test::Gate gate;
  const uint32_t pattern = 0x01020304;
  EXPECT_EQ(Count([&] {
              ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, accel_test::Gate::Wait, &gate), ACCEL_SUCCESS)
                  << accel_last_error();
              for (int i = 0; i < 3; ++i) {
                EXPECT_EQ(accel_stream_launch_kernel(stream_, kernel_, &launch_), ACCEL_SUCCESS) << accel_last_error();
                EXPECT_EQ(accel_stream_copy_buffer(stream_, a_, 0, b_, 0, kSize), ACCEL_SUCCESS) << accel_last_error();
                EXPECT_EQ(accel_stream_fill_buffer(stream_, b_, 0, kSize, &pattern, 4), ACCEL_SUCCESS)
                    << accel_last_error();
              }
              EXPECT_EQ(accel_stream_launch_kernel(stream_, kernel_, &launch_), ACCEL_SUCCESS) << accel_last_error();
              gate.Open();  // before Count's synchronize, whatever the operations returned
            }),
            Expected("ten_queued_mixed"));
}

}  // namespace
