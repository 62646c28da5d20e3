// The OpenCL backend on the machine's OpenCL runtime (PoCL in CI), through the
// public API: identity with the host CPU, module builds and their messages,
// argument reflection, launches with buffers at any offset, launches of one
// kernel from many threads, ordering across streams, stream-ordered frees,
// errors and copy statistics, capacity, and no OpenCL object left behind.
// What the conformance suite already checks is not repeated here.
#include <accel/accel.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gate.h"
#include "native_kernels.h"
#include "test_util.h"

namespace {

using accel_test::Gate;

// Messages the instance logs, for the leak check.
struct LogSink {
  std::mutex mutex;
  std::vector<std::string> messages;
  static void Callback(void* user, accel_log_level_t, const char* message) {
    auto* sink = static_cast<LogSink*>(user);
    std::lock_guard lock(sink->mutex);
    sink->messages.emplace_back(message);
  }
  bool Contains(const std::string& needle) {
    std::lock_guard lock(mutex);
    for (const std::string& m : messages) {
      if (m.find(needle) != std::string::npos) return true;
    }
    return false;
  }
};

// An instance over the given manifests. The environment stays in force, so ACCEL_CACHE_DIR (set by ctest) keeps
// PoCL's cache in the build tree.
class Instance {
 public:
  explicit Instance(const std::string& files, LogSink* sink = nullptr) : files_(files) {
    accel_instance_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
    d.struct_size = sizeof(d);
    d.backend_files = files_.c_str();
    d.add_backend_files = "";
    d.backends = "";
    if (sink != nullptr) {
      d.log_level = ACCEL_LOG_LEVEL_DEBUG;
      d.log_callback = LogSink::Callback;
      d.log_user_data = sink;
    }
    EXPECT_EQ(accel_instance_create(&d, &instance_), ACCEL_SUCCESS) << accel_last_error();
  }
  ~Instance() {
    if (instance_ != nullptr) {
      EXPECT_EQ(accel_instance_destroy(instance_), ACCEL_SUCCESS) << accel_last_error();
    }
  }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  accel_instance_t get() const { return instance_; }

  // The first device of `backend`, or NULL.
  accel_device_t DeviceOf(const std::string& backend) const {
    uint32_t n = 0;
    accel_instance_enumerate_devices(instance_, &n, nullptr);
    std::vector<accel_device_t> devices(n);
    if (n > 0) accel_instance_enumerate_devices(instance_, &n, devices.data());
    for (accel_device_t d : devices) {
      if (backend == Caps(d).backend_name) return d;
    }
    return nullptr;
  }
  static accel_device_capabilities_t Caps(accel_device_t d) {
    accel_device_capabilities_t c{};
    c.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
    c.struct_size = sizeof(c);
    EXPECT_EQ(accel_device_get_capabilities(d, &c), ACCEL_SUCCESS) << accel_last_error();
    return c;
  }

 private:
  std::string files_;
  accel_instance_t instance_ = nullptr;
};

// The OpenCL backend's device, in an instance of that backend alone.
class OpenclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    instance_ = std::make_unique<Instance>(ACCEL_TEST_OPENCL_MANIFEST, &log_);
    device_ = instance_->DeviceOf("opencl");
    ASSERT_NE(device_, nullptr) << "no OpenCL device; the loader report says why (accel-info --loader-debug)";
    ASSERT_EQ(accel_stream_create(device_, nullptr, &stream_), ACCEL_SUCCESS) << accel_last_error();
  }
  void TearDown() override {
    for (accel_module_t m : modules_) accel_module_destroy(m);
    for (accel_buffer_t b : buffers_) accel_buffer_destroy(b);
    if (stream_ != nullptr) accel_stream_destroy(stream_);
    instance_.reset();
    // Every cl_mem, cl_event, cl_kernel, cl_program and queue the backend made was released.
    EXPECT_FALSE(log_.Contains("still alive")) << "the backend left OpenCL objects behind";
  }

  accel_buffer_t NewBuffer(uint64_t size) {
    accel_buffer_desc_t d = accel_test::BufferDesc(size);
    accel_buffer_t b = nullptr;
    EXPECT_EQ(accel_buffer_create(device_, &d, &b), ACCEL_SUCCESS) << accel_last_error();
    if (b != nullptr) buffers_.push_back(b);
    return b;
  }
  void Forget(accel_buffer_t b) { std::erase(buffers_, b); }

  // Builds `source`; ACCEL_SUCCESS or the failure (the module is kept for TearDown).
  accel_status_t Build(const std::string& source, accel_module_t* out, const char* options = nullptr) {
    accel_module_source_t s = accel_test::ModuleSource(ACCEL_KERNEL_FORMAT_OPENCL_C, source.data(), source.size());
    s.options = options;
    accel_module_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_MODULE_DESC;
    d.struct_size = sizeof(d);
    d.sources = &s;
    d.source_count = 1;
    d.name = "test";
    *out = nullptr;
    const accel_status_t status = accel_module_create(device_, &d, out);
    if (*out != nullptr) modules_.push_back(*out);
    return status;
  }
  accel_kernel_t Kernel(const std::string& source, const char* name, const char* options = nullptr) {
    accel_module_t m = nullptr;
    EXPECT_EQ(Build(source, &m, options), ACCEL_SUCCESS) << accel_last_error();
    if (m == nullptr) return nullptr;
    accel_kernel_t k = nullptr;
    EXPECT_EQ(accel_module_get_kernel(m, name, &k), ACCEL_SUCCESS) << accel_last_error();
    return k;
  }

  void Upload(accel_buffer_t b, const std::vector<uint32_t>& v, accel_stream_t s = nullptr) {
    s = s != nullptr ? s : stream_;
    ASSERT_EQ(accel_stream_copy_host_to_buffer(s, v.data(), b, 0, v.size() * 4), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  }
  std::vector<uint32_t> Download(accel_buffer_t b, size_t count, accel_stream_t s = nullptr) {
    s = s != nullptr ? s : stream_;
    std::vector<uint32_t> v(count, 0);
    EXPECT_EQ(accel_stream_copy_buffer_to_host(s, b, 0, v.data(), count * 4), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
    return v;
  }

  static accel_kernel_arg_t BufferArg(accel_buffer_t b, uint64_t offset = 0, uint64_t size = 0) {
    accel_kernel_arg_t a{};
    a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
    a.struct_size = sizeof(a);
    a.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
    a.buffer = b;
    a.offset = offset;
    a.size = size;
    return a;
  }
  static accel_kernel_arg_t ScalarArg(const void* value, uint64_t size) {
    accel_kernel_arg_t a{};
    a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
    a.struct_size = sizeof(a);
    a.kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
    a.value = value;
    a.size = size;
    return a;
  }
  // A 1-D launch of `groups` x `block` with `args` (which it points into).
  static accel_launch_desc_t Desc(uint32_t groups, uint32_t block, const std::vector<accel_kernel_arg_t>& args) {
    accel_launch_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_LAUNCH_DESC;
    d.struct_size = sizeof(d);
    d.grid[0] = groups;
    d.grid[1] = d.grid[2] = 1;
    d.block[0] = block;
    d.block[1] = d.block[2] = 1;
    d.args = args.data();
    d.arg_count = static_cast<uint32_t>(args.size());
    return d;
  }
  static accel_status_t Launch(accel_stream_t s, accel_kernel_t k, uint32_t groups, uint32_t block,
                               const std::vector<accel_kernel_arg_t>& args) {
    const accel_launch_desc_t d = Desc(groups, block, args);
    return accel_stream_launch_kernel(s, k, &d);
  }
  // accel_kernel_prepare_launch of `k`; the prepared launch, or NULL with the failure reported.
  static accel_prepared_launch_t Prepare(accel_kernel_t k, uint32_t groups, uint32_t block,
                                         const std::vector<accel_kernel_arg_t>& args) {
    const accel_launch_desc_t d = Desc(groups, block, args);
    accel_prepared_launch_t p = nullptr;
    EXPECT_EQ(accel_kernel_prepare_launch(k, &d, &p), ACCEL_SUCCESS) << accel_last_error();
    return p;
  }

  LogSink log_;
  std::unique_ptr<Instance> instance_;
  accel_device_t device_ = nullptr;
  accel_stream_t stream_ = nullptr;
  std::vector<accel_buffer_t> buffers_;
  std::vector<accel_module_t> modules_;
};

const char* const kFill = R"CL(
__kernel void fill(__global uint* out, uint value, uint n) {
  const size_t i = get_global_id(0);
  if (i < n) out[i] = value;
}
)CL";

const char* const kAddOne = R"CL(
__kernel void add_one(__global uint* dst, __global const uint* src, uint n) {
  const size_t i = get_global_id(0);
  if (i < n) dst[i] = src[i] + 1u;
}
)CL";

TEST(OpenclIdentity, PoclsCpuDeviceIsAnAccessPathOfTheHostCpu) {
  Instance instance(std::string(ACCEL_TEST_OPENCL_MANIFEST) + ":" + ACCEL_TEST_HOST_MANIFEST);
  accel_device_t opencl = instance.DeviceOf("opencl");
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(opencl, nullptr);
  ASSERT_NE(host, nullptr);
  const accel_device_capabilities_t caps = Instance::Caps(opencl);
  if (caps.kind != ACCEL_DEVICE_KIND_CPU) GTEST_SKIP() << "the OpenCL device '" << caps.name << "' is not a CPU";
  accel_physical_device_t a = nullptr;
  accel_physical_device_t b = nullptr;
  ASSERT_EQ(accel_device_get_physical_device(opencl, &a), ACCEL_SUCCESS);
  ASSERT_EQ(accel_device_get_physical_device(host, &b), ACCEL_SUCCESS);
  EXPECT_EQ(a, b) << "the OpenCL CPU device and the host backend's CPU are one physical device";
  accel_physical_device_properties_t p{};
  p.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
  p.struct_size = sizeof(p);
  ASSERT_EQ(accel_physical_device_get_properties(a, &p), ACCEL_SUCCESS);
  EXPECT_EQ(p.device_count, 2u);
  EXPECT_EQ(std::string(caps.stable_id), std::string(p.stable_id) + ".opencl");
}

TEST_F(OpenclTest, PoclDeclaresOpenclCButNotSpir) {
  const accel_device_capabilities_t caps = Instance::Caps(device_);
  if (std::string(caps.name).rfind("pthread-", 0) != 0) GTEST_SKIP() << "not PoCL's pthread device: " << caps.name;
  // PoCL lists cl_khr_spir but no SPIR version (CL_DEVICE_SPIR_VERSIONS is empty), and keeps no argument
  // information for SPIR binaries; nor does it take SPIR-V (no CL_DEVICE_IL_VERSION).
  EXPECT_EQ(caps.kernel_formats, ACCEL_KERNEL_FORMAT_OPENCL_C);
  EXPECT_EQ(caps.kind, ACCEL_DEVICE_KIND_CPU);
  EXPECT_STREQ(caps.pci_bus_id, "");
}

TEST_F(OpenclTest, BuildFailureGivesTheCompilersError) {
  accel_module_t m = nullptr;
  EXPECT_EQ(Build("__kernel void k(__global int* x) { x[0] = undeclared_y; }", &m), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  const std::string message = accel_last_error();
  EXPECT_NE(message.find("clBuildProgram failed with CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << message;
  EXPECT_NE(message.find("undeclared_y"), std::string::npos) << "the build log's gist: " << message;
  EXPECT_NE(message.find("'desc->sources[0]' (opencl-c)"), std::string::npos) << message;
}

TEST_F(OpenclTest, BuildOptionsReachTheCompiler) {
  const char* source = "__kernel void k(__global uint* out) { out[get_global_id(0)] = VALUE; }";
  accel_kernel_t k = Kernel(source, "k", "-DVALUE=7u");
  ASSERT_NE(k, nullptr);
  accel_buffer_t out = NewBuffer(16);
  Upload(out, {0, 0, 0, 0});
  ASSERT_EQ(Launch(stream_, k, 1, 4, {BufferArg(out)}), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(Download(out, 4), (std::vector<uint32_t>{7, 7, 7, 7}));
  accel_module_t m = nullptr;
  EXPECT_EQ(Build(source, &m), ACCEL_ERROR_INVALID_ARGUMENT) << "without the option VALUE is undeclared";
}

TEST_F(OpenclTest, ReflectsArgumentKindsAccessAndSizes) {
  const char* source = R"CL(
__kernel void many(__global const float* in, __global int* out, __constant uint* table, __local float* scratch,
                   uchar a, ushort b, ulong c, float4 d, int3 e) {
  out[0] = (int)(in[0] + table[0] + a + b + c + d.x + e.y);
  scratch[0] = 0.0f;
}
)CL";
  accel_kernel_t k = Kernel(source, "many");
  ASSERT_NE(k, nullptr);
  accel_kernel_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES;
  props.struct_size = sizeof(props);
  ASSERT_EQ(accel_kernel_get_properties(k, &props), ACCEL_SUCCESS);
  ASSERT_EQ(props.argument_count, 9u);
  EXPECT_GE(props.max_work_group_size, 1u);
  EXPECT_EQ(props.required_work_group_size[0], 0u) << "no reqd_work_group_size: any block";
  struct Want {
    accel_kernel_arg_kind_t kind;
    accel_access_t access;
    uint32_t size;
    const char* name;
  };
  const Want want[] = {
      {ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "in"},
      {ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ_WRITE, 0, "out"},
      {ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "table"},
      {ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY, ACCEL_ACCESS_READ, 0, "scratch"},
      {ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 1, "a"},
      {ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 2, "b"},
      {ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 8, "c"},
      {ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 16, "d"},
      {ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 16, "e"},
  };
  for (uint32_t i = 0; i < 9; ++i) {
    accel_kernel_argument_info_t info{};
    info.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO;
    info.struct_size = sizeof(info);
    ASSERT_EQ(accel_kernel_get_argument_info(k, i, &info), ACCEL_SUCCESS);
    EXPECT_EQ(info.kind, want[i].kind) << "argument " << i;
    EXPECT_EQ(info.access, want[i].access) << "argument " << i;
    EXPECT_EQ(info.size, want[i].size) << "argument " << i;
    ASSERT_NE(info.name, nullptr);
    EXPECT_STREQ(info.name, want[i].name);
  }
  // A scalar of the wrong size is refused by the core against the reflected size.
  accel_buffer_t buf = NewBuffer(64);
  const uint32_t four = 0;
  accel_kernel_arg_t local{};
  local.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
  local.struct_size = sizeof(local);
  local.kind = ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY;
  local.size = 16;
  EXPECT_EQ(Launch(stream_, k, 1, 1,
                   {BufferArg(buf), BufferArg(buf), BufferArg(buf), local, ScalarArg(&four, 4), ScalarArg(&four, 2),
                    ScalarArg(&four, 4), ScalarArg(&four, 4), ScalarArg(&four, 4)}),
            ACCEL_ERROR_INVALID_ARGUMENT)
      << "a 4-byte scalar for the uchar 'a'";
}

TEST_F(OpenclTest, RequiredWorkGroupSizeIsReportedAndEnforced) {
  const char* source = R"CL(
__kernel __attribute__((reqd_work_group_size(8, 1, 1))) void fixed(__global uint* out) {
  out[get_global_id(0)] = (uint)get_local_size(0);
}
)CL";
  accel_kernel_t k = Kernel(source, "fixed");
  ASSERT_NE(k, nullptr);
  accel_kernel_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES;
  props.struct_size = sizeof(props);
  ASSERT_EQ(accel_kernel_get_properties(k, &props), ACCEL_SUCCESS);
  EXPECT_EQ(props.required_work_group_size[0], 8u);
  EXPECT_EQ(props.required_work_group_size[1], 1u);
  EXPECT_EQ(props.required_work_group_size[2], 1u);
  accel_buffer_t out = NewBuffer(64);
  EXPECT_EQ(Launch(stream_, k, 4, 4, {BufferArg(out)}), ACCEL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(Launch(stream_, k, 2, 8, {BufferArg(out)}), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(Download(out, 16), std::vector<uint32_t>(16, 8));
}

TEST_F(OpenclTest, KernelsWithImagesAreRefusedByName) {
  const char* source = R"CL(
__kernel void image_kernel(__read_only image2d_t img, __global float4* out) {
  out[0] = read_imagef(img, (int2)(0, 0));
}
__kernel void plain(__global uint* out) { out[0] = 1u; }
)CL";
  accel_module_t m = nullptr;
  ASSERT_EQ(Build(source, &m), ACCEL_SUCCESS) << accel_last_error();
  accel_kernel_t k = nullptr;
  EXPECT_EQ(accel_module_get_kernel(m, "image_kernel", &k), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_NE(std::string(accel_last_error()).find("image2d_t"), std::string::npos) << accel_last_error();
  EXPECT_EQ(accel_module_get_kernel(m, "plain", &k), ACCEL_SUCCESS) << accel_last_error();
}

TEST_F(OpenclTest, BuffersAtAnyOffsetBindTheirRange) {
  // Offsets that meet CL_DEVICE_MEM_BASE_ADDR_ALIGN become sub-buffers; others bounce through a copy, written back
  // only where the kernel may write. Neighbouring bytes stay as they were either way.
  accel_kernel_t k = Kernel(kAddOne, "add_one");
  ASSERT_NE(k, nullptr);
  constexpr uint32_t kCount = 512;
  constexpr uint32_t kN = 64;
  for (const uint64_t dst_offset : {uint64_t{0}, uint64_t{4}, uint64_t{128}, uint64_t{1024}, uint64_t{1028}}) {
    for (const uint64_t src_offset : {uint64_t{0}, uint64_t{12}, uint64_t{256}}) {
      accel_buffer_t dst = NewBuffer(kCount * 4);
      accel_buffer_t src = NewBuffer(kCount * 4);
      std::vector<uint32_t> src_values(kCount);
      for (uint32_t i = 0; i < kCount; ++i) src_values[i] = 1000 + i;
      Upload(dst, std::vector<uint32_t>(kCount, 0xDEADBEEF));
      Upload(src, src_values);
      const uint32_t n = kN;
      ASSERT_EQ(Launch(stream_, k, kN / 16, 16,
                       {BufferArg(dst, dst_offset, kN * 4), BufferArg(src, src_offset, kN * 4), ScalarArg(&n, 4)}),
                ACCEL_SUCCESS)
          << accel_last_error();
      const std::vector<uint32_t> got = Download(dst, kCount);
      for (uint32_t i = 0; i < kCount; ++i) {
        const uint64_t first = dst_offset / 4;
        const uint32_t want =
            (i >= first && i < first + kN) ? src_values[src_offset / 4 + (i - first)] + 1 : 0xDEADBEEF;
        ASSERT_EQ(got[i], want) << "dst offset " << dst_offset << ", src offset " << src_offset << ", element " << i;
      }
      EXPECT_EQ(Download(src, kCount), src_values) << "a read-only binding was written back";
    }
  }
}

TEST_F(OpenclTest, PreparedLaunchesKeepTheirOwnArgumentsBesidePlainLaunchesOfTheKernel) {
  // A prepared launch has a cl_kernel of its own, its arguments set once: plain launches of the same kernel between
  // its launches (setting the kernel's shared arguments to others) change nothing of it. dst at offset 0 is the whole
  // buffer, at 128 a sub-buffer, at 4 a bounce buffer per launch (not prepared by the backend: the core enqueues the
  // checked launch each time). P: dst = src + 1; Q: src = dst + 1; P Q P Q P leaves dst = src0 + 5, src = src0 + 4.
  accel_kernel_t k = Kernel(kAddOne, "add_one");
  ASSERT_NE(k, nullptr);
  constexpr uint32_t kCount = 256;
  constexpr uint32_t kN = 64;
  for (const uint64_t dst_offset : {uint64_t{0}, uint64_t{128}, uint64_t{4}}) {
    accel_buffer_t dst = NewBuffer(kCount * 4);
    accel_buffer_t src = NewBuffer(kN * 4);
    std::vector<uint32_t> src_values(kN);
    for (uint32_t i = 0; i < kN; ++i) src_values[i] = 100 * i;
    Upload(dst, std::vector<uint32_t>(kCount, 0xDEADBEEF));
    Upload(src, src_values);
    uint32_t n = kN;
    accel_prepared_launch_t p =
        Prepare(k, kN / 16, 16, {BufferArg(dst, dst_offset, kN * 4), BufferArg(src), ScalarArg(&n, 4)});
    ASSERT_NE(p, nullptr);
    n = 1;  // copied when prepared
    for (int round = 0; round < 3; ++round) {
      ASSERT_EQ(accel_stream_launch_prepared(stream_, p), ACCEL_SUCCESS) << accel_last_error();
      if (round == 2) break;
      const uint32_t all = kN;
      ASSERT_EQ(
          Launch(stream_, k, kN / 16, 16, {BufferArg(src), BufferArg(dst, dst_offset, kN * 4), ScalarArg(&all, 4)}),
          ACCEL_SUCCESS)
          << accel_last_error();
    }
    const std::vector<uint32_t> got = Download(dst, kCount);
    const std::vector<uint32_t> got_src = Download(src, kN);
    for (uint32_t i = 0; i < kCount; ++i) {
      const uint64_t first = dst_offset / 4;
      const uint32_t want = (i >= first && i < first + kN) ? src_values[i - first] + 5 : 0xDEADBEEF;
      ASSERT_EQ(got[i], want) << "dst offset " << dst_offset << ", element " << i;
    }
    for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(got_src[i], src_values[i] + 4) << "dst offset " << dst_offset;
    EXPECT_EQ(accel_prepared_launch_destroy(p), ACCEL_SUCCESS) << accel_last_error();
  }
}

const char* const kAtomicAdd = R"CL(
__kernel void atomic_add_u32(__global const uint* values, volatile __global uint* sums, uint n, uint bins) {
  const size_t i = get_global_id(0);
  if (i < n) atomic_add(&sums[i % bins], values[i]);
}
)CL";

TEST_F(OpenclTest, OnePreparedLaunchEnqueuedFromManyThreads) {
  // Its cl_kernel's arguments never change after it is prepared: streams on several threads enqueue it at once
  // (clEnqueueNDRangeKernel of one cl_kernel on several queues, no lock). Each launch adds the values into the bins
  // atomically, so the sums count the launches that ran.
  accel_kernel_t k = Kernel(kAtomicAdd, "atomic_add_u32");
  ASSERT_NE(k, nullptr);
  constexpr int kThreads = 4;
  constexpr int kRounds = 50;
  constexpr uint32_t kN = 256;
  constexpr uint32_t kBins = 8;
  accel_buffer_t values = NewBuffer(kN * 4);
  accel_buffer_t sums = NewBuffer(kBins * 4);
  std::vector<uint32_t> v(kN);
  for (uint32_t i = 0; i < kN; ++i) v[i] = i + 1;
  Upload(values, v);
  Upload(sums, std::vector<uint32_t>(kBins, 0));
  const uint32_t n = kN;
  const uint32_t bins = kBins;
  accel_prepared_launch_t p =
      Prepare(k, kN / 64, 64, {BufferArg(values), BufferArg(sums), ScalarArg(&n, 4), ScalarArg(&bins, 4)});
  ASSERT_NE(p, nullptr);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      accel_stream_t s = nullptr;
      if (accel_stream_create(device_, nullptr, &s) != ACCEL_SUCCESS) return void(++failures);
      for (int r = 0; r < kRounds; ++r) {
        if (accel_stream_launch_prepared(s, p) != ACCEL_SUCCESS) ++failures;
      }
      if (accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE) != ACCEL_SUCCESS) ++failures;
      accel_stream_destroy(s);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<uint32_t> want(kBins, 0);
  for (uint32_t i = 0; i < kN; ++i) want[i % kBins] += kThreads * kRounds * v[i];
  EXPECT_EQ(Download(sums, kBins), want);
  EXPECT_EQ(accel_prepared_launch_destroy(p), ACCEL_SUCCESS) << accel_last_error();
}

TEST_F(OpenclTest, OneKernelLaunchesFromManyThreads) {
  // A cl_kernel's arguments are shared state: the backend sets them and enqueues under the kernel's lock.
  accel_kernel_t k = Kernel(kFill, "fill");
  ASSERT_NE(k, nullptr);
  constexpr int kThreads = 6;
  constexpr int kRounds = 20;
  constexpr uint32_t kCount = 256;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      accel_stream_t s = nullptr;
      if (accel_stream_create(device_, nullptr, &s) != ACCEL_SUCCESS) {
        ++failures;
        return;
      }
      accel_buffer_desc_t d = accel_test::BufferDesc(kCount * 4);
      accel_buffer_t b = nullptr;
      if (accel_buffer_create(device_, &d, &b) != ACCEL_SUCCESS) {
        ++failures;
        accel_stream_destroy(s);
        return;
      }
      std::vector<uint32_t> out(kCount);
      for (int r = 0; r < kRounds; ++r) {
        const uint32_t value = static_cast<uint32_t>(t * 1000 + r);
        const uint32_t n = kCount;
        if (Launch(s, k, kCount / 64, 64, {BufferArg(b), ScalarArg(&value, 4), ScalarArg(&n, 4)}) != ACCEL_SUCCESS ||
            accel_stream_copy_buffer_to_host(s, b, 0, out.data(), kCount * 4) != ACCEL_SUCCESS ||
            accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE) != ACCEL_SUCCESS ||
            out != std::vector<uint32_t>(kCount, value)) {
          ++failures;
        }
      }
      accel_buffer_destroy(b);
      accel_stream_destroy(s);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(OpenclTest, WaitOnAnotherStreamsEventOrdersKernels) {
  accel_kernel_t k = Kernel(kFill, "fill");
  ASSERT_NE(k, nullptr);
  accel_stream_t consumer = nullptr;
  ASSERT_EQ(accel_stream_create(device_, nullptr, &consumer), ACCEL_SUCCESS);
  accel_event_t event = nullptr;
  ASSERT_EQ(accel_event_create(device_, nullptr, &event), ACCEL_SUCCESS);
  constexpr uint32_t kCount = 1024;
  accel_buffer_t b = NewBuffer(kCount * 4);
  Upload(b, std::vector<uint32_t>(kCount, 0));
  std::vector<uint32_t> out(kCount, 0);
  const uint32_t value = 42;
  const uint32_t n = kCount;
  {
    Gate gate;
    ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, Gate::Wait, &gate), ACCEL_SUCCESS);
    ASSERT_EQ(Launch(stream_, k, kCount / 64, 64, {BufferArg(b), ScalarArg(&value, 4), ScalarArg(&n, 4)}),
              ACCEL_SUCCESS);
    ASSERT_EQ(accel_stream_record_event(stream_, event), ACCEL_SUCCESS);
    ASSERT_EQ(accel_stream_wait_event(consumer, event), ACCEL_SUCCESS);
    ASSERT_EQ(accel_stream_copy_buffer_to_host(consumer, b, 0, out.data(), kCount * 4), ACCEL_SUCCESS);
    EXPECT_EQ(accel_stream_query(consumer), ACCEL_NOT_READY) << "the consumer did not wait";
    gate.Open();
    EXPECT_EQ(accel_stream_synchronize(consumer, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  }
  EXPECT_EQ(out, std::vector<uint32_t>(kCount, value));
  // Waiting again on the event, now complete, passes at once; a later launch on the consumer still runs.
  ASSERT_EQ(accel_stream_wait_event(consumer, event), ACCEL_SUCCESS);
  const uint32_t seven = 7;
  ASSERT_EQ(Launch(consumer, k, kCount / 64, 64, {BufferArg(b), ScalarArg(&seven, 4), ScalarArg(&n, 4)}),
            ACCEL_SUCCESS);
  EXPECT_EQ(Download(b, kCount, consumer), std::vector<uint32_t>(kCount, 7));
  EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  accel_event_destroy(event);
  accel_stream_destroy(consumer);
}

TEST_F(OpenclTest, FreeingABufferAKernelStillUsesIsStreamOrdered) {
  accel_kernel_t k = Kernel(kAddOne, "add_one");
  ASSERT_NE(k, nullptr);
  constexpr uint32_t kCount = 256;
  accel_buffer_t src = NewBuffer(kCount * 4);
  accel_buffer_t dst = NewBuffer(kCount * 4);
  std::vector<uint32_t> values(kCount);
  for (uint32_t i = 0; i < kCount; ++i) values[i] = i * 3;
  Upload(src, values);
  const uint32_t n = kCount;
  {
    Gate gate;
    ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, Gate::Wait, &gate), ACCEL_SUCCESS);
    ASSERT_EQ(Launch(stream_, k, kCount / 64, 64, {BufferArg(dst), BufferArg(src), ScalarArg(&n, 4)}), ACCEL_SUCCESS);
    ASSERT_EQ(accel_stream_free_buffer(stream_, src), ACCEL_SUCCESS);
    Forget(src);
    gate.Open();
    ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  }
  std::vector<uint32_t> want(kCount);
  for (uint32_t i = 0; i < kCount; ++i) want[i] = values[i] + 1;
  EXPECT_EQ(Download(dst, kCount), want);
}

accel_status_t Fail(void*, accel_status_t) { return ACCEL_ERROR_INTERNAL; }

TEST_F(OpenclTest, AnErrorSkipsLaterWorkAndCopiesUntilCleared) {
  accel_kernel_t k = Kernel(kFill, "fill");
  ASSERT_NE(k, nullptr);
  constexpr uint32_t kCount = 64;
  accel_buffer_t b = NewBuffer(kCount * 4);
  accel_buffer_t c = NewBuffer(kCount * 4);
  Upload(b, std::vector<uint32_t>(kCount, 1));                                          // 1 host-to-device copy
  ASSERT_EQ(accel_stream_copy_buffer(stream_, b, 0, c, 0, kCount * 4), ACCEL_SUCCESS);  // 1 local copy
  std::vector<uint32_t> out(kCount, 0);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, c, 0, out.data(), kCount * 4), ACCEL_SUCCESS);  // 1 d2h
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, Fail, nullptr), ACCEL_SUCCESS);
  const uint32_t value = 9;
  const uint32_t n = kCount;
  ASSERT_EQ(Launch(stream_, k, 1, kCount, {BufferArg(b), ScalarArg(&value, 4), ScalarArg(&n, 4)}), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer(stream_, b, 0, c, 0, kCount * 4), ACCEL_SUCCESS);  // skipped: not counted
  EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  const std::string message = accel_last_error();
  EXPECT_NE(message.find("operation #4 (host callback) returned ACCEL_ERROR_INTERNAL"), std::string::npos) << message;
  EXPECT_EQ(out, std::vector<uint32_t>(kCount, 1));
  accel_copy_statistics_t stats{};
  stats.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(accel_stream_get_copy_statistics(stream_, &stats), ACCEL_SUCCESS);
  EXPECT_EQ(stats.host_to_device_copies, 1u);
  EXPECT_EQ(stats.host_to_device_bytes, kCount * 4u);
  EXPECT_EQ(stats.local_copies, 1u);
  EXPECT_EQ(stats.device_to_host_copies, 1u);
  EXPECT_EQ(stats.peer_copies + stats.staged_copies, 0u);
  ASSERT_EQ(accel_stream_clear_error(stream_), ACCEL_SUCCESS);
  EXPECT_EQ(Download(b, kCount), std::vector<uint32_t>(kCount, 1)) << "the launch after the error ran";
  ASSERT_EQ(Launch(stream_, k, 1, kCount, {BufferArg(b), ScalarArg(&value, 4), ScalarArg(&n, 4)}), ACCEL_SUCCESS);
  EXPECT_EQ(Download(b, kCount), std::vector<uint32_t>(kCount, 9)) << "cleared, the stream launches again";
}

TEST_F(OpenclTest, PreparedLaunchesRunOnEachOthersOperationsInOrderAndStopAtAnError) {
  // Prepared launches enqueued one after another share the first one's operation (its clFinish, its completion):
  // A then B alternated, both destroyed before the stream drains (B then lives only as a reference of A's
  // operation), still run in order and with their own arguments. A: mid = src + 1; B: out = mid + 1, on the same
  // queue; the last of each wins: out = src + 2. 300 of them: past the 64 changes of prepared launch one operation
  // keeps references for, the next takes an operation of its own, and on it the rest run on. After an error the stream
  // skips them as any operation until cleared (raw_backend_test.cc has a launch that fails on another's operation).
  accel_kernel_t k = Kernel(kAddOne, "add_one");
  ASSERT_NE(k, nullptr);
  constexpr uint32_t kN = 128;
  accel_buffer_t src = NewBuffer(kN * 4);
  accel_buffer_t mid = NewBuffer(kN * 4);
  accel_buffer_t out = NewBuffer(kN * 4);
  std::vector<uint32_t> values(kN);
  for (uint32_t i = 0; i < kN; ++i) values[i] = 3 * i;
  Upload(src, values);
  Upload(mid, std::vector<uint32_t>(kN, 0));
  Upload(out, std::vector<uint32_t>(kN, 0));
  const uint32_t n = kN;
  const std::vector<accel_kernel_arg_t> a_args = {BufferArg(mid), BufferArg(src), ScalarArg(&n, 4)};
  const std::vector<accel_kernel_arg_t> b_args = {BufferArg(out), BufferArg(mid), ScalarArg(&n, 4)};
  accel_prepared_launch_t a = Prepare(k, kN / 32, 32, a_args);
  accel_prepared_launch_t b = Prepare(k, kN / 32, 32, b_args);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  for (int i = 0; i < 300; ++i) {
    ASSERT_EQ(accel_stream_launch_prepared(stream_, i % 2 == 0 ? a : b), ACCEL_SUCCESS) << accel_last_error();
  }
  ASSERT_EQ(accel_prepared_launch_destroy(a), ACCEL_SUCCESS);
  ASSERT_EQ(accel_prepared_launch_destroy(b), ACCEL_SUCCESS);
  std::vector<uint32_t> want(kN);
  for (uint32_t i = 0; i < kN; ++i) want[i] = values[i] + 2;
  EXPECT_EQ(Download(out, kN), want);

  // An error: the prepared launches after it are skipped (the buffer keeps its value), then run once cleared.
  accel_prepared_launch_t again = Prepare(k, kN / 32, 32, b_args);
  ASSERT_NE(again, nullptr);
  Upload(out, std::vector<uint32_t>(kN, 0));
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, Fail, nullptr), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_launch_prepared(stream_, again), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_launch_prepared(stream_, again), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  ASSERT_EQ(accel_stream_clear_error(stream_), ACCEL_SUCCESS);
  EXPECT_EQ(Download(out, kN), std::vector<uint32_t>(kN, 0)) << "a prepared launch after the error ran";
  ASSERT_EQ(accel_stream_launch_prepared(stream_, again), ACCEL_SUCCESS);
  EXPECT_EQ(Download(out, kN), want) << "cleared, the stream launches again";
  ASSERT_EQ(accel_prepared_launch_destroy(again), ACCEL_SUCCESS);
}

TEST_F(OpenclTest, PreparedLaunchesLeftAtInstanceDestroyGoWithIt) {
  // A prepared launch (the backend's own) still holding a kernel of a destroyed module and a buffer freed on a
  // stream: the instance's teardown releases it, frees the buffer on its stream while the stream lives, and leaves
  // no OpenCL object behind (TearDown checks the log; ASan the rest).
  accel_kernel_t k = Kernel(kAddOne, "add_one");
  ASSERT_NE(k, nullptr);
  accel_buffer_t dst = NewBuffer(256);
  accel_buffer_t src = NewBuffer(256);
  const uint32_t n = 32;  // the bound range's elements: dst's second half
  accel_prepared_launch_t p = Prepare(k, 1, 32, {BufferArg(dst, 128, 128), BufferArg(src), ScalarArg(&n, 4)});
  ASSERT_NE(p, nullptr);
  accel_stream_t s = nullptr;  // left to the instance's teardown, as `p` is
  ASSERT_EQ(accel_stream_create(device_, nullptr, &s), ACCEL_SUCCESS) << accel_last_error();
  for (int i = 0; i < 4; ++i) ASSERT_EQ(accel_stream_launch_prepared(s, p), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_free_buffer(s, dst), ACCEL_SUCCESS) << accel_last_error();
  Forget(dst);
  for (accel_module_t m : modules_) ASSERT_EQ(accel_module_destroy(m), ACCEL_SUCCESS);
  modules_.clear();
  ASSERT_EQ(accel_stream_launch_prepared(s, p), ACCEL_SUCCESS) << accel_last_error();
}

TEST_F(OpenclTest, CapacityIsCountedAgainstGlobalMemory) {
  // ctest runs this binary with POCL_MEMORY_LIMIT=1: PoCL reports 1 GiB of global memory and 256 MiB allocations
  // (PoCL allocates lazily, so the buffers below cost nothing until used).
  const accel_device_capabilities_t caps = Instance::Caps(device_);
  uint64_t free = 0;
  uint64_t total = 0;
  ASSERT_EQ(accel_device_get_memory_info(device_, &free, &total), ACCEL_SUCCESS);
  EXPECT_EQ(total, caps.memory_total);
  EXPECT_EQ(free, total) << "no buffer yet";
  const uint64_t chunk = caps.max_allocation;
  std::vector<accel_buffer_t> held;
  accel_status_t status = ACCEL_SUCCESS;
  for (int i = 0; i < 64 && status == ACCEL_SUCCESS; ++i) {
    accel_buffer_desc_t d = accel_test::BufferDesc(chunk);
    accel_buffer_t b = nullptr;
    status = accel_buffer_create(device_, &d, &b);
    if (status == ACCEL_SUCCESS) held.push_back(b);
  }
  ASSERT_EQ(status, ACCEL_ERROR_RESOURCE_EXHAUSTED) << accel_last_error();
  const std::string message = accel_last_error();
  EXPECT_NE(message.find(std::to_string(chunk) + " bytes requested"), std::string::npos) << message;
  EXPECT_NE(message.find("free of " + std::to_string(total) + " bytes"), std::string::npos) << message;
  EXPECT_NE(message.find(caps.name), std::string::npos) << "the message names the device: " << message;
  ASSERT_EQ(accel_device_get_memory_info(device_, &free, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(free, total - held.size() * chunk);
  EXPECT_LT(free, chunk) << "refused while a chunk still fit";
  ASSERT_FALSE(held.empty());
  accel_buffer_destroy(held.back());
  held.pop_back();
  ASSERT_EQ(accel_device_get_memory_info(device_, &free, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(free, total - held.size() * chunk) << "destroying gives the bytes back";
  for (accel_buffer_t b : held) accel_buffer_destroy(b);
}

TEST_F(OpenclTest, HostPinnedBuffersMapAndDestroyingAMappedBufferUnmapsIt) {
  accel_buffer_desc_t d = accel_test::BufferDesc(4096, ACCEL_MEMORY_KIND_HOST_PINNED);
  accel_buffer_t b = nullptr;
  ASSERT_EQ(accel_buffer_create(device_, &d, &b), ACCEL_SUCCESS) << accel_last_error();
  Upload(b, std::vector<uint32_t>(1024, 5));
  void* p = nullptr;
  ASSERT_EQ(accel_buffer_map(b, 0, 4096, ACCEL_MAP_READ | ACCEL_MAP_WRITE, &p), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(static_cast<uint32_t*>(p)[1023], 5u);
  static_cast<uint32_t*>(p)[0] = 6;
  EXPECT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS) << "destroyed while mapped";
}

TEST_F(OpenclTest, ManyModulesAndLaunchesLeaveNothingBehind) {
  // TearDown checks that the backend released every OpenCL object; this test makes many of each kind.
  for (int round = 0; round < 3; ++round) {
    accel_kernel_t k = Kernel(kAddOne, "add_one");
    ASSERT_NE(k, nullptr);
    accel_buffer_t src = NewBuffer(1024);
    accel_buffer_t dst = NewBuffer(1024);
    Upload(src, std::vector<uint32_t>(256, static_cast<uint32_t>(round)));
    const uint32_t n = 32;
    accel_event_desc_t ed{};
    ed.stype = ACCEL_STRUCTURE_TYPE_EVENT_DESC;
    ed.struct_size = sizeof(ed);
    ed.flags = ACCEL_EVENT_FLAG_TIMING;
    accel_event_t start = nullptr;
    accel_event_t end = nullptr;
    ASSERT_EQ(accel_event_create(device_, &ed, &start), ACCEL_SUCCESS);
    ASSERT_EQ(accel_event_create(device_, &ed, &end), ACCEL_SUCCESS);
    ASSERT_EQ(accel_stream_record_event(stream_, start), ACCEL_SUCCESS);
    for (uint64_t offset : {uint64_t{0}, uint64_t{4}, uint64_t{128}}) {
      ASSERT_EQ(Launch(stream_, k, 2, 16, {BufferArg(dst, offset, 512), BufferArg(src, offset, 512), ScalarArg(&n, 4)}),
                ACCEL_SUCCESS);
    }
    ASSERT_EQ(accel_stream_record_event(stream_, end), ACCEL_SUCCESS);
    ASSERT_EQ(accel_stream_fill_buffer(stream_, src, 0, 64, &n, 4), ACCEL_SUCCESS);
    ASSERT_EQ(accel_event_synchronize(end, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
    uint64_t ns = 0;
    EXPECT_EQ(accel_event_elapsed_time(start, end, &ns), ACCEL_SUCCESS) << accel_last_error();
    void* p = nullptr;
    ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
    ASSERT_EQ(accel_buffer_map(dst, 0, 1024, ACCEL_MAP_READ, &p), ACCEL_SUCCESS);
    EXPECT_EQ(static_cast<uint32_t*>(p)[32 + 1], static_cast<uint32_t>(round) + 1);  // offset 128: elements 32..63
    ASSERT_EQ(accel_buffer_unmap(dst), ACCEL_SUCCESS);
    accel_event_destroy(start);
    accel_event_destroy(end);
  }
}

}  // namespace
