// The OpenCL backend's table called directly, with host services of the
// test's own (no libaccel in between): what the public API cannot reach.
// Here: why PoCL's device does not list the `spir` format although PoCL builds
// SPIR bitcode, that a context releases every OpenCL object it made, and a
// stream waiting for an event recorded in another cl_context (two backend
// contexts stand for two OpenCL platforms, which this machine does not have).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <latch>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "native_kernels.h"
#include "opencl_backend.h"

namespace accel::opencl {
namespace {

// Host services that keep the log and the last error.
class RawHost {
 public:
  RawHost() {
    services_.stype = ACCEL_STRUCTURE_TYPE_HOST_SERVICES;
    services_.struct_size = sizeof(services_);
    services_.context = this;
    services_.log = [](void* self, accel_log_level_t, const char* message) {
      auto* host = static_cast<RawHost*>(self);
      std::lock_guard lock(host->mutex_);
      host->logs_.emplace_back(message);
    };
    services_.set_error = [](void* self, accel_status_t, const char* message) {
      auto* host = static_cast<RawHost*>(self);
      std::lock_guard lock(host->mutex_);
      host->last_error_ = message;
    };
    services_.allocate = [](void*, size_t size, size_t alignment) { return std::aligned_alloc(alignment, size); };
    services_.deallocate = [](void*, void* p) { std::free(p); };
    const char* cache = std::getenv("ACCEL_CACHE_DIR");  // ctest keeps PoCL's cache in the build tree
    cache_dir_ = cache != nullptr ? cache : "";
    services_.cache_dir = cache_dir_.empty() ? nullptr : cache_dir_.c_str();
    services_.machine_id = "raw-backend-test";
    services_.get_setting = [](void*, const char*) -> const char* { return nullptr; };
  }
  const accel_host_services_t* services() const { return &services_; }
  std::string last_error() {
    std::lock_guard lock(mutex_);
    return last_error_;
  }
  bool Logged(const std::string& needle) {
    std::lock_guard lock(mutex_);
    for (const std::string& m : logs_) {
      if (m.find(needle) != std::string::npos) return true;
    }
    return false;
  }

 private:
  accel_host_services_t services_{};
  std::string cache_dir_;
  std::mutex mutex_;
  std::vector<std::string> logs_;
  std::string last_error_;
};

const accel_backend_api_t* Api(RawHost& host) {
  accel_backend_get_api_args_t args{};
  args.stype = ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS;
  args.struct_size = sizeof(args);
  args.core_abi_version_min = ACCEL_BACKEND_ABI_VERSION;
  args.core_abi_version_max = ACCEL_BACKEND_ABI_VERSION;
  args.host = host.services();
  EXPECT_EQ(accel_backend_get_api(&args), ACCEL_SUCCESS) << host.last_error();
  return args.out_api;
}

// A backend context over `host`'s services, or null (the failure recorded).
accel_bk_context_t NewContext(const accel_backend_api_t* api, RawHost& host) {
  accel_bk_context_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_BACKEND_CONTEXT_DESC;
  desc.struct_size = sizeof(desc);
  desc.host = host.services();
  desc.abi_version = ACCEL_BACKEND_ABI_VERSION;
  accel_bk_context_t context = nullptr;
  EXPECT_EQ(api->context_create(&desc, &context), ACCEL_SUCCESS) << host.last_error();
  return context;
}

TEST(OpenclRaw, PoclBuildsSpirBitcodeButKeepsNoArgumentInformationForIt) {
  const std::filesystem::path bitcode = std::filesystem::path(ACCEL_TEST_CORPUS_DIR) / "spir" / "corpus.bc";
  if (!std::filesystem::exists(bitcode)) GTEST_SKIP() << bitcode << " was not built (no clang)";
  RawHost host;
  const accel_backend_api_t* api = Api(host);
  ASSERT_NE(api, nullptr);
  accel_bk_context_t context = NewContext(api, host);
  ASSERT_NE(context, nullptr);
  uint32_t count = 0;
  ASSERT_EQ(api->context_get_devices(context, &count, nullptr), ACCEL_SUCCESS);
  std::vector<accel_bk_device_t> devices(count);
  ASSERT_EQ(api->context_get_devices(context, &count, devices.data()), ACCEL_SUCCESS);
  ASSERT_GE(count, 1u);
  Device* device = Unwrap(devices[0]);
  if (device->properties.name.rfind("pthread-", 0) != 0) {
    api->context_destroy(context);
    GTEST_SKIP() << "not PoCL's pthread device: " << device->properties.name;
  }
  EXPECT_TRUE(HasExtension(device->properties.extensions, "cl_khr_spir"));
  EXPECT_EQ(device->properties.spir_versions, "") << "PoCL lists no SPIR version";
  EXPECT_EQ(device->capabilities.kernel_formats & ACCEL_KERNEL_FORMAT_SPIR, 0u);
  // Pretend the device listed SPIR 1.2: the bitcode builds, but reflection finds no argument information, so the
  // module is refused with UNSUPPORTED (and the core would try the module's next source).
  device->capabilities.kernel_formats |= ACCEL_KERNEL_FORMAT_SPIR;
  const std::string path = bitcode.string();
  accel_module_source_t source{};
  source.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
  source.struct_size = sizeof(source);
  source.format = ACCEL_KERNEL_FORMAT_SPIR;
  source.path = path.c_str();
  accel_bk_module_t module = nullptr;
  EXPECT_EQ(api->module_create(devices[0], &source, &module), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_NE(host.last_error().find("CL_KERNEL_ARG_INFO_NOT_AVAILABLE"), std::string::npos) << host.last_error();
  EXPECT_NE(host.last_error().find("spir modules"), std::string::npos) << host.last_error();
  if (module != nullptr) api->module_destroy(module);
  // A blob that is no bitcode at all: INVALID_ARGUMENT, saying so.
  const char junk[] = "not bitcode";
  source.path = nullptr;
  source.data = junk;
  source.size = sizeof(junk);
  const accel_status_t junk_status = api->module_create(devices[0], &source, &module);
  EXPECT_EQ(junk_status, ACCEL_ERROR_INVALID_ARGUMENT) << host.last_error();
  if (junk_status == ACCEL_SUCCESS) api->module_destroy(module);
  api->context_destroy(context);
  EXPECT_FALSE(host.Logged("still alive")) << "the context left OpenCL objects behind";
}

// A backend context's first device, or null.
accel_bk_device_t FirstDevice(const accel_backend_api_t* api, accel_bk_context_t context) {
  uint32_t count = 1;
  accel_bk_device_t device = nullptr;
  if (api->context_get_devices(context, &count, &device) != ACCEL_SUCCESS || count == 0) return nullptr;
  return device;
}

// One entry point of the runtime's table (`*entry`) replaced by `stand_in` until the scope ends: for one test only
// (the runtime may be the process's), restored however the test ends.
template <typename F>
class SwappedEntry {
 public:
  SwappedEntry(F* entry, F stand_in) : entry_(entry), saved_(*entry) { *entry_ = stand_in; }
  SwappedEntry(const SwappedEntry&) = delete;
  SwappedEntry& operator=(const SwappedEntry&) = delete;
  ~SwappedEntry() { *entry_ = saved_; }
  F saved() const { return saved_; }

 private:
  F* entry_;
  F saved_;
};

// The backend's table, a context over the test's host services and the context's first device (destroyed with the
// fixture), and a buffer of the device on request.
class OpenclRawDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    api = Api(host);
    ASSERT_NE(api, nullptr);
    context = NewContext(api, host);
    ASSERT_NE(context, nullptr);
    device = FirstDevice(api, context);
    ASSERT_NE(device, nullptr) << "the context has no device";
  }
  void TearDown() override {
    if (context != nullptr) api->context_destroy(context);
  }
  // A buffer of `size` bytes, or null (the failure recorded).
  accel_bk_buffer_t NewBuffer(uint64_t size) {
    accel_buffer_desc_t desc{};
    desc.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
    desc.struct_size = sizeof(desc);
    desc.size = size;
    accel_bk_buffer_t buffer = nullptr;
    EXPECT_EQ(api->buffer_create(device, &desc, &buffer), ACCEL_SUCCESS) << host.last_error();
    return buffer;
  }

  // Builds OpenCL C `source_text` into `*module` and looks up `name` into `*kernel` (the failures recorded).
  void NewKernel(std::string_view source_text, const char* name, accel_bk_module_t* module, accel_bk_kernel_t* kernel) {
    const accel_module_source_t source =
        accel_test::ModuleSource(ACCEL_KERNEL_FORMAT_OPENCL_C, source_text.data(), source_text.size());
    ASSERT_EQ(api->module_create(device, &source, module), ACCEL_SUCCESS) << host.last_error();
    ASSERT_EQ(api->module_get_kernel(*module, name, kernel), ACCEL_SUCCESS) << host.last_error();
  }

  RawHost host;
  const accel_backend_api_t* api = nullptr;
  accel_bk_context_t context = nullptr;
  accel_bk_device_t device = nullptr;
};

struct CrossContextSteps {
  std::latch gate{1};
  std::atomic<bool> first_ran{false};
  std::atomic<int> second_saw{-1};  // -1: not run; 0/1: whether the first had run
};

// A stream of one cl_context waits for an event recorded on a stream of another: nothing of the device can wait
// across contexts, so the waiting stream's worker waits for the record on the host. It must not depend on anyone else
// looking at the record (an event_query, the recording stream's synchronize): here nobody does, and the waiting
// stream's synchronize still returns, after the recording stream's work before the record, in order.
TEST(OpenclRaw, AWaitOnAnEventOfAnotherContextCompletesWithoutAnyoneAskingTheEvent) {
  RawHost host;
  const accel_backend_api_t* api = Api(host);
  ASSERT_NE(api, nullptr);
  accel_bk_context_t contexts[2] = {NewContext(api, host), NewContext(api, host)};
  ASSERT_NE(contexts[0], nullptr);
  ASSERT_NE(contexts[1], nullptr);
  accel_bk_device_t d0 = FirstDevice(api, contexts[0]);
  accel_bk_device_t d1 = FirstDevice(api, contexts[1]);
  ASSERT_NE(d0, nullptr);
  ASSERT_NE(d1, nullptr);
  ASSERT_NE(Unwrap(d0)->platform->context.get(), Unwrap(d1)->platform->context.get()) << "one cl_context for both";
  for (const bool behind_host_work : {false, true}) {
    SCOPED_TRACE(behind_host_work ? "the record queued behind a host callback" : "the record enqueued at once");
    accel_bk_stream_t recording = nullptr;
    accel_bk_stream_t waiting = nullptr;
    accel_bk_event_t event = nullptr;
    ASSERT_EQ(api->stream_create(d0, nullptr, &recording), ACCEL_SUCCESS) << host.last_error();
    ASSERT_EQ(api->stream_create(d1, nullptr, &waiting), ACCEL_SUCCESS) << host.last_error();
    ASSERT_EQ(api->event_create(d0, nullptr, &event), ACCEL_SUCCESS) << host.last_error();
    CrossContextSteps steps;
    if (behind_host_work) {
      ASSERT_EQ(api->stream_enqueue_host_callback(
                    recording,
                    [](void* p, accel_status_t) {
                      auto* s = static_cast<CrossContextSteps*>(p);
                      s->gate.wait();
                      s->first_ran = true;
                      return ACCEL_SUCCESS;
                    },
                    &steps),
                ACCEL_SUCCESS)
          << host.last_error();
    } else {
      steps.gate.count_down();
      steps.first_ran = true;
    }
    ASSERT_EQ(api->stream_record_event(recording, event), ACCEL_SUCCESS) << host.last_error();
    ASSERT_EQ(api->stream_wait_event(waiting, event), ACCEL_SUCCESS) << host.last_error();
    ASSERT_EQ(api->stream_enqueue_host_callback(
                  waiting,
                  [](void* p, accel_status_t) {
                    auto* s = static_cast<CrossContextSteps*>(p);
                    s->second_saw = s->first_ran ? 1 : 0;
                    return ACCEL_SUCCESS;
                  },
                  &steps),
              ACCEL_SUCCESS)
        << host.last_error();
    if (behind_host_work) {
      EXPECT_EQ(api->stream_synchronize(waiting, 0), ACCEL_ERROR_TIMEOUT) << "the wait passed a pending record";
      steps.gate.count_down();
    }
    EXPECT_EQ(api->stream_synchronize(waiting, 10'000'000'000ULL), ACCEL_SUCCESS)
        << "the waiting stream never learnt that the record completed: " << host.last_error();
    EXPECT_EQ(steps.second_saw.load(), 1)
        << "-1: the work after the wait never ran; 0: it ran before the work before the record";
    steps.gate.count_down();  // never leave the recording stream blocked
    EXPECT_EQ(api->event_synchronize(event, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << host.last_error();
    api->stream_destroy(waiting);
    api->stream_destroy(recording);
    api->event_destroy(event);
  }
  api->context_destroy(contexts[1]);
  api->context_destroy(contexts[0]);
}

// event_synchronize with a timeout waits on the marker's completion callback. When OpenCL cannot register it
// (clSetEventCallback fails: out of host memory), the wait polls the marker instead: it must neither report a record
// complete while the work before it still runs nor miss its completion. The entry point is swapped for one that
// fails, for this test only; the marker is kept running by a kernel that spins for a while.
TEST_F(OpenclRawDevice, ABoundedEventWaitWithoutItsCallbackPollsTheMarker) {
  const char source_text[] =
      "__kernel void spin(__global uint* out, uint n) {\n"
      "  uint x = out[0];\n"
      "  for (uint i = 0; i < n; ++i) x = x * 1664525u + 1013904223u;\n"
      "  out[0] = x;\n"
      "}\n";
  accel_bk_module_t module = nullptr;
  accel_bk_kernel_t kernel = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewKernel(source_text, "spin", &module, &kernel));
  accel_bk_buffer_t buffer = NewBuffer(4);
  ASSERT_NE(buffer, nullptr);
  accel_bk_stream_t stream = nullptr;
  ASSERT_EQ(api->stream_create(device, nullptr, &stream), ACCEL_SUCCESS) << host.last_error();
  accel_bk_event_t event = nullptr;
  ASSERT_EQ(api->event_create(device, nullptr, &event), ACCEL_SUCCESS) << host.last_error();

  std::optional<SwappedEntry<decltype(ClApi::SetEventCallback)>> failing(
      std::in_place, &Unwrap(device)->runtime->cl.SetEventCallback,
      [](cl_event, cl_int, void(CL_CALLBACK*)(cl_event, cl_int, void*), void*) -> cl_int {
        return CL_OUT_OF_HOST_MEMORY;
      });
  const uint32_t iterations = 400'000'000;  // a second or so on one core: far longer than the waits below
  accel_bk_kernel_arg_t args[2]{};
  for (accel_bk_kernel_arg_t& a : args) {
    a.stype = ACCEL_STRUCTURE_TYPE_BACKEND_KERNEL_ARG;
    a.struct_size = sizeof(a);
    a.access = ACCEL_ACCESS_READ;
  }
  args[0].kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
  args[0].access = ACCEL_ACCESS_READ_WRITE;
  args[0].buffer = buffer;
  args[0].size = 4;
  args[1].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  args[1].value = &iterations;
  args[1].size = sizeof(iterations);
  accel_bk_launch_t launch{};
  launch.stype = ACCEL_STRUCTURE_TYPE_BACKEND_LAUNCH;
  launch.struct_size = sizeof(launch);
  for (int d = 0; d < 3; ++d) launch.grid[d] = launch.block[d] = 1;
  launch.args = args;
  launch.arg_count = 2;
  ASSERT_EQ(api->stream_launch_kernel(stream, kernel, &launch), ACCEL_SUCCESS) << host.last_error();
  ASSERT_EQ(api->stream_record_event(stream, event), ACCEL_SUCCESS) << host.last_error();
  // The kernel runs for about a second: a 20 ms wait times out (it reported success at once before), as does a second
  // one, which polls without registering again.
  EXPECT_EQ(api->event_synchronize(event, 20'000'000), ACCEL_ERROR_TIMEOUT) << "complete while its work still ran";
  EXPECT_EQ(api->event_synchronize(event, 20'000'000), ACCEL_ERROR_TIMEOUT) << "complete while its work still ran";
  // A long enough bounded wait sees the completion by polling.
  EXPECT_EQ(api->event_synchronize(event, 60'000'000'000ULL), ACCEL_SUCCESS) << host.last_error();
  EXPECT_EQ(api->event_query(event), ACCEL_SUCCESS) << host.last_error();
  failing.reset();
  uint32_t out = 0;
  ASSERT_EQ(api->stream_copy_buffer_to_host(stream, buffer, 0, &out, sizeof(out)), ACCEL_SUCCESS) << host.last_error();
  ASSERT_EQ(api->stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << host.last_error();
  EXPECT_NE(out, 0u) << "the kernel did not run";
  api->event_destroy(event);
  api->stream_destroy(stream);
  api->buffer_destroy(buffer);
  api->kernel_destroy(kernel);
  api->module_destroy(module);
}

// The clFinish of the next drain swapped for one that fails after waiting (a command that failed on the device), or
// that first runs `before` (work enqueued while a drain waits): for one call, restored however the test ends.
class SwappedFinish {
 public:
  SwappedFinish(ClApi& cl, bool fail_it, std::function<void()> run_before)
      : swapped_(&cl.Finish, [](cl_command_queue queue) -> cl_int {
          if (before) std::exchange(before, nullptr)();
          const cl_int err = real(queue);
          return std::exchange(fail, false) ? CL_OUT_OF_RESOURCES : err;
        }) {
    real = swapped_.saved();
    fail = fail_it;
    before = std::move(run_before);
  }
  ~SwappedFinish() {
    before = nullptr;
    fail = false;
  }

 private:
  static inline std::function<void()> before;
  static inline bool fail = false;
  static inline decltype(ClApi::Finish) real = nullptr;  // what swapped_ keeps, for the stand-in (no captures)
  SwappedEntry<decltype(ClApi::Finish)> swapped_;
};

// A stream waits on the device (a barrier on the marker) for an event whose recording stream then fails: the barrier
// passes, and the wait fails only when the waiting stream's drain completes it. What the waiting stream did after
// the wait reports that error: a record in the same drain, and one enqueued while that drain waited (submitted before
// the failure was known, completed by a later drain).
TEST_F(OpenclRawDevice, WorkAfterAWaitThatFailsAtCompletionReportsTheError) {
  accel_bk_buffer_t buffer = NewBuffer(4096);
  ASSERT_NE(buffer, nullptr);
  accel_bk_stream_t recording = nullptr;
  accel_bk_stream_t waiting = nullptr;
  ASSERT_EQ(api->stream_create(device, nullptr, &recording), ACCEL_SUCCESS) << host.last_error();
  ASSERT_EQ(api->stream_create(device, nullptr, &waiting), ACCEL_SUCCESS) << host.last_error();
  accel_bk_event_t recorded = nullptr;  // on `recording`, behind the work that fails
  accel_bk_event_t after = nullptr;     // on `waiting`, after the wait, in the same drain
  accel_bk_event_t later = nullptr;     // on `waiting`, enqueued while that drain waits
  for (accel_bk_event_t* e : {&recorded, &after, &later}) {
    ASSERT_EQ(api->event_create(device, nullptr, e), ACCEL_SUCCESS) << host.last_error();
  }
  const uint32_t pattern = 7;
  ASSERT_EQ(api->stream_fill_buffer(recording, buffer, 0, 4096, &pattern, sizeof(pattern)), ACCEL_SUCCESS)
      << host.last_error();
  ASSERT_EQ(api->stream_record_event(recording, recorded), ACCEL_SUCCESS) << host.last_error();
  ASSERT_EQ(api->stream_wait_event(waiting, recorded), ACCEL_SUCCESS) << host.last_error();
  ASSERT_EQ(api->stream_record_event(waiting, after), ACCEL_SUCCESS) << host.last_error();
  ClApi& cl = Unwrap(device)->runtime->cl;
  {
    SwappedFinish failing(cl, true, nullptr);
    EXPECT_EQ(api->stream_synchronize(recording, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL) << "no failure seen";
  }
  EXPECT_EQ(api->event_synchronize(recorded, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL) << host.last_error();
  accel_status_t later_enqueued = ACCEL_ERROR_INTERNAL;  // until the swapped clFinish enqueues it
  {
    SwappedFinish enqueue_meanwhile(cl, false, [&] { later_enqueued = api->stream_record_event(waiting, later); });
    EXPECT_EQ(api->stream_synchronize(waiting, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL)
        << "the wait for a failed record succeeded";
  }
  EXPECT_NE(host.last_error().find("waited for an event"), std::string::npos) << host.last_error();
  ASSERT_EQ(later_enqueued, ACCEL_SUCCESS) << host.last_error();
  EXPECT_EQ(api->event_synchronize(after, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL)
      << "a record after the failed wait, in its drain, completed without the error";
  EXPECT_NE(host.last_error().find("waited for an event"), std::string::npos) << host.last_error();
  EXPECT_EQ(api->event_synchronize(later, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL)
      << "a record enqueued while the failed wait's drain ran completed without the error";
  // Cleared, both streams work again.
  EXPECT_EQ(api->stream_clear_error(recording), ACCEL_SUCCESS) << host.last_error();
  EXPECT_EQ(api->stream_clear_error(waiting), ACCEL_SUCCESS) << host.last_error();
  ASSERT_EQ(api->stream_record_event(recording, recorded), ACCEL_SUCCESS) << host.last_error();
  ASSERT_EQ(api->stream_wait_event(waiting, recorded), ACCEL_SUCCESS) << host.last_error();
  ASSERT_EQ(api->stream_record_event(waiting, after), ACCEL_SUCCESS) << host.last_error();
  EXPECT_EQ(api->stream_synchronize(recording, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << host.last_error();
  EXPECT_EQ(api->stream_synchronize(waiting, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << host.last_error();
  EXPECT_EQ(api->event_synchronize(after, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << host.last_error();
  for (accel_bk_event_t e : {recorded, after, later}) api->event_destroy(e);
  api->stream_destroy(waiting);
  api->stream_destroy(recording);
  api->buffer_destroy(buffer);
}

// A prepared launch enqueued right behind another runs on that one's operation; when its clEnqueueNDRangeKernel
// fails there, it is tried again as an operation of its own, whose failure is the stream's error (with the call's
// message). Later prepared launches are skipped until the error is cleared; the first launch still ran.
TEST_F(OpenclRawDevice, APreparedLaunchThatFailsBehindAnotherMakesTheStreamsError) {
  accel_bk_module_t module = nullptr;
  accel_bk_kernel_t kernel = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      NewKernel("__kernel void count(__global uint* c) { c[0] += 1u; }\n", "count", &module, &kernel));
  accel_bk_buffer_t buffer = NewBuffer(4);
  ASSERT_NE(buffer, nullptr);
  accel_bk_kernel_arg_t arg{};
  arg.stype = ACCEL_STRUCTURE_TYPE_BACKEND_KERNEL_ARG;
  arg.struct_size = sizeof(arg);
  arg.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
  arg.access = ACCEL_ACCESS_READ_WRITE;
  arg.buffer = buffer;
  arg.size = 4;
  accel_bk_launch_t launch{};
  launch.stype = ACCEL_STRUCTURE_TYPE_BACKEND_LAUNCH;
  launch.struct_size = sizeof(launch);
  for (int d = 0; d < 3; ++d) launch.grid[d] = launch.block[d] = 1;
  launch.args = &arg;
  launch.arg_count = 1;
  accel_bk_prepared_launch_t prepared = nullptr;
  ASSERT_EQ(api->kernel_prepare_launch(kernel, &launch, &prepared), ACCEL_SUCCESS) << host.last_error();
  accel_bk_stream_t stream = nullptr;
  ASSERT_EQ(api->stream_create(device, nullptr, &stream), ACCEL_SUCCESS) << host.last_error();
  const uint32_t zero = 0;
  ASSERT_EQ(api->stream_fill_buffer(stream, buffer, 0, 4, &zero, sizeof(zero)), ACCEL_SUCCESS) << host.last_error();
  ASSERT_EQ(api->stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << host.last_error();
  auto count = [&] {
    uint32_t out = 0;
    EXPECT_EQ(api->stream_copy_buffer_to_host(stream, buffer, 0, &out, sizeof(out)), ACCEL_SUCCESS);
    EXPECT_EQ(api->stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << host.last_error();
    return out;
  };

  ASSERT_EQ(api->stream_launch_prepared(stream, prepared), ACCEL_SUCCESS) << host.last_error();  // an operation
  static int failures_left = 0;  // the stand-in fails this many enqueues, then forwards
  static decltype(ClApi::EnqueueNDRangeKernel) real = nullptr;
  failures_left = 2;
  {
    SwappedEntry<decltype(ClApi::EnqueueNDRangeKernel)> failing(
        &Unwrap(device)->runtime->cl.EnqueueNDRangeKernel,
        [](cl_command_queue q, cl_kernel k, cl_uint dims, const size_t* offset, const size_t* global,
           const size_t* local, cl_uint waits, const cl_event* wait_list, cl_event* event) -> cl_int {
          if (failures_left > 0) {
            --failures_left;
            return CL_OUT_OF_RESOURCES;
          }
          return real(q, k, dims, offset, global, local, waits, wait_list, event);
        });
    real = failing.saved();
    // Behind the first launch's operation: fails there, then as its own operation (the stream's error).
    EXPECT_EQ(api->stream_launch_prepared(stream, prepared), ACCEL_SUCCESS) << host.last_error();
    EXPECT_EQ(failures_left, 0) << "not tried behind the first launch, then on its own";
    // After the error: skipped, not enqueued.
    EXPECT_EQ(api->stream_launch_prepared(stream, prepared), ACCEL_SUCCESS) << host.last_error();
  }
  EXPECT_EQ(api->stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(host.last_error().find("clEnqueueNDRangeKernel"), std::string::npos) << host.last_error();
  ASSERT_EQ(api->stream_clear_error(stream), ACCEL_SUCCESS) << host.last_error();
  EXPECT_EQ(count(), 1u) << "the first launch ran, the failed and the skipped ones did not";
  ASSERT_EQ(api->stream_launch_prepared(stream, prepared), ACCEL_SUCCESS) << host.last_error();
  ASSERT_EQ(api->stream_launch_prepared(stream, prepared), ACCEL_SUCCESS) << host.last_error();
  EXPECT_EQ(count(), 3u) << "cleared, the stream launches again";
  api->prepared_launch_destroy(prepared);
  api->stream_destroy(stream);
  api->buffer_destroy(buffer);
  api->kernel_destroy(kernel);
  api->module_destroy(module);
}

}  // namespace
}  // namespace accel::opencl
