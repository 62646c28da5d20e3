// Shared by the libaccel-runtime tests: a runtime over a fresh instance,
// task submission from lambdas, gates, polling and environment helpers.
// Header-only; each test binary includes it once.
#ifndef ACCEL_TESTS_RUNTIME_RUNTIME_FIXTURE_H_
#define ACCEL_TESTS_RUNTIME_RUNTIME_FIXTURE_H_

#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace accel_runtime_test {

using accel_test::BufferDesc;
using accel_test::ScopedInstance;
using accel_test::TempDir;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

inline const bool kProfileSet = setenv("ACCEL_SIM_PROFILE", "h100-sxm-8", 0) == 0;

using Body = std::function<accel_status_t(accel_task_context_t)>;

inline accel_status_t Trampoline(accel_task_context_t context, void* user_data) {
  return (*static_cast<Body*>(user_data))(context);
}
inline void DeleteBody(void* user_data) { delete static_cast<Body*>(user_data); }

inline accel_resource_request_t Request(uint32_t devices, double share = 1.0, uint64_t memory = 0,
                                        const char* selector = nullptr) {
  accel_resource_request_t r{};
  r.stype = ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST;
  r.struct_size = sizeof(r);
  r.device_count = devices;
  r.share = share;
  r.memory = memory;
  r.selector = selector;
  return r;
}

// A task desc that runs `owned` (a heap Body the runtime deletes once the submission succeeded).
inline accel_task_desc_t BodyDesc(Body* owned, const accel_resource_request_t* request = nullptr,
                                  const char* name = nullptr) {
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.name = name;
  d.function = Trampoline;
  d.user_data = owned;
  d.release_user_data = DeleteBody;
  d.request = request;
  return d;
}

// A runtime over `instance` with `workers` worker threads, for tests that destroy it themselves.
inline accel_status_t CreateRuntime(accel_instance_t instance, uint32_t workers, accel_runtime_t* out) {
  accel_runtime_desc_t rd{};
  rd.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DESC;
  rd.struct_size = sizeof(rd);
  rd.worker_threads = workers;
  return accel_runtime_create(instance, &rd, out);
}

// A runtime over a fresh instance, destroyed in order.
class RuntimeFixture {
 public:
  explicit RuntimeFixture(const accel_instance_desc_t* desc = nullptr, uint32_t workers = 8) : instance_(desc) {
    EXPECT_EQ(CreateRuntime(instance_.get(), workers, &runtime_), ACCEL_SUCCESS) << accel_last_error();
  }
  ~RuntimeFixture() {
    for (accel_future_t f : futures_) EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_runtime_destroy(runtime_), ACCEL_SUCCESS) << accel_last_error();
  }
  RuntimeFixture(const RuntimeFixture&) = delete;
  RuntimeFixture& operator=(const RuntimeFixture&) = delete;

  accel_runtime_t get() const { return runtime_; }
  accel_instance_t instance() const { return instance_.get(); }

  // Submits `body`; the future is released with the fixture.
  accel_status_t Submit(const accel_resource_request_t* request, Body body, accel_future_t* out,
                        std::vector<accel_future_t> deps = {}, uint32_t max_retries = 0, const char* name = nullptr,
                        accel_queue_t queue = nullptr, int32_t priority = 0, uint32_t preemptible = 0) {
    auto* owned = new Body(std::move(body));
    accel_task_desc_t d = BodyDesc(owned, request, name);
    d.queue = queue;
    d.priority = priority;
    d.preemptible = preemptible;
    d.dependencies = deps.data();
    d.dependency_count = static_cast<uint32_t>(deps.size());
    d.max_retries = max_retries;
    const accel_status_t status = accel_task_submit(runtime_, &d, out);
    if (status == ACCEL_SUCCESS) {
      futures_.push_back(*out);
    } else {
      delete owned;  // not the runtime's on failure
    }
    return status;
  }

  std::vector<accel_runtime_device_t> Devices() const {
    uint32_t n = 0;
    EXPECT_EQ(accel_runtime_get_device_count(runtime_, &n), ACCEL_SUCCESS);
    std::vector<accel_runtime_device_t> v(n);
    for (uint32_t i = 0; i < n; ++i) {
      v[i].stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE;
      v[i].struct_size = sizeof(v[i]);
      EXPECT_EQ(accel_runtime_get_device(runtime_, i, &v[i]), ACCEL_SUCCESS) << accel_last_error();
    }
    return v;
  }

  accel_runtime_counters_t Counters() const {
    accel_runtime_counters_t c{};
    c.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS;
    c.struct_size = sizeof(c);
    EXPECT_EQ(accel_runtime_get_counters(runtime_, &c), ACCEL_SUCCESS) << accel_last_error();
    return c;
  }

 private:
  ScopedInstance instance_;
  accel_runtime_t runtime_ = nullptr;
  std::vector<accel_future_t> futures_;
};

inline std::string Message(accel_future_t f) {
  size_t size = 0;
  EXPECT_EQ(accel_future_get_message(f, 0, nullptr, &size), ACCEL_SUCCESS) << accel_last_error();
  std::string text(size, '\0');
  EXPECT_EQ(accel_future_get_message(f, size, text.data(), nullptr), ACCEL_SUCCESS) << accel_last_error();
  text.resize(size > 0 ? size - 1 : 0);
  return text;
}

// The index of the physical device a first task with `request` gets on a fresh runtime (99 on failure): the planner
// is deterministic, so a test can then make that device fail.
inline uint32_t FirstDeviceIndex(const accel_resource_request_t& request) {
  uint32_t first = 99;
  RuntimeFixture probe;
  accel_future_t f = nullptr;
  EXPECT_EQ(probe.Submit(
                &request,
                [&](accel_task_context_t ctx) {
                  accel_physical_device_t p = nullptr;
                  EXPECT_EQ(accel_task_context_get_physical_device(ctx, 0, &p), ACCEL_SUCCESS);
                  accel_physical_device_properties_t props{};
                  props.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
                  props.struct_size = sizeof(props);
                  EXPECT_EQ(accel_physical_device_get_properties(p, &props), ACCEL_SUCCESS);
                  first = props.index;
                  return ACCEL_SUCCESS;
                },
                &f),
            ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  return first;
}

inline std::string PhysicalId(accel_physical_device_t p) {
  accel_physical_device_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
  props.struct_size = sizeof(props);
  EXPECT_EQ(accel_physical_device_get_properties(p, &props), ACCEL_SUCCESS);
  return props.name;
}

inline int NumaOf(accel_physical_device_t p) {
  accel_physical_device_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
  props.struct_size = sizeof(props);
  EXPECT_EQ(accel_physical_device_get_properties(p, &props), ACCEL_SUCCESS);
  return props.numa_node;
}

inline std::vector<accel_bundle_device_t> GroupDevices(accel_placement_group_t g) {
  uint32_t n = 0;
  EXPECT_EQ(accel_placement_group_get_devices(g, &n, nullptr), ACCEL_SUCCESS) << accel_last_error();
  std::vector<accel_bundle_device_t> v(n);
  for (auto& d : v) {
    d.stype = ACCEL_STRUCTURE_TYPE_BUNDLE_DEVICE;
    d.struct_size = sizeof(d);
  }
  EXPECT_EQ(accel_placement_group_get_devices(g, &n, v.data()), ACCEL_SUCCESS) << accel_last_error();
  return v;
}

inline accel_status_t MakeGroup(accel_runtime_t rt, std::vector<accel_resource_request_t> bundles,
                                accel_placement_strategy_t strategy, accel_topology_level_t level,
                                accel_placement_group_t* out, uint32_t required = 1, uint32_t flags = 0,
                                const char* name = "g") {
  accel_placement_group_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC;
  d.struct_size = sizeof(d);
  d.flags = flags;
  d.name = name;
  d.bundles = bundles.data();
  d.bundle_count = static_cast<uint32_t>(bundles.size());
  d.strategy = strategy;
  d.level = level;
  d.required = required;
  return accel_placement_group_create(rt, &d, out);
}

// A gate tasks wait on until the test opens it.
class Gate {
 public:
  void Open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

// A task body that waits until `gate` opens, then succeeds.
inline Body WaitFor(Gate& gate) {
  return [&gate](accel_task_context_t) {
    gate.Wait();
    return ACCEL_SUCCESS;
  };
}

// A task group of `rt` (named when `name` is not null).
inline accel_task_group_t NewTaskGroup(accel_runtime_t rt, const char* name = nullptr) {
  accel_task_group_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_GROUP_DESC;
  d.struct_size = sizeof(d);
  d.name = name;
  accel_task_group_t g = nullptr;
  EXPECT_EQ(accel_task_group_create(rt, name != nullptr ? &d : nullptr, &g), ACCEL_SUCCESS) << accel_last_error();
  return g;
}

// Waits until `predicate` holds (the runtime's work is asynchronous); fails after 30 s.
template <typename P>
inline bool Eventually(P predicate) {
  for (int i = 0; i < 3000; ++i) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return predicate();
}

// Occupies `workers` workers of `rt` with tasks that wait for `gate`; returns once all of them run.
inline void BlockWorkers(RuntimeFixture& rt, uint32_t workers, Gate& gate, std::atomic<int>& started) {
  for (uint32_t i = 0; i < workers; ++i) {
    accel_future_t f = nullptr;
    ASSERT_EQ(rt.Submit(
                  nullptr,
                  [&](accel_task_context_t) {
                    ++started;
                    gate.Wait();
                    return ACCEL_SUCCESS;
                  },
                  &f),
              ACCEL_SUCCESS);
  }
  ASSERT_TRUE(Eventually([&] { return started.load() == static_cast<int>(workers); }));
}

// A profile file: h100-sxm-8 with device 0 at exactly 80 GiB.
inline std::string EightyGiBProfile(const TempDir& dir) {
  std::ifstream in(std::string(ACCEL_TEST_SOURCE_DIR) + "/backends/sim/profiles/h100-sxm-8.json");
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const std::string from = "85520809984";
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos);
  s.replace(at, from.size(), std::to_string(80 * kGiB));
  const std::string path = dir.path().string() + "/h100-80gib.json";
  std::ofstream(path) << s;
  return path;
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// Devices `visible` (ACCEL_VISIBLE_DEVICES) and, among them, the one a first task with `request` gets lost after
// `operations` of its operations (ACCEL_SIM_FAULTS device_lost_after), for the object's life. `first` is its index
// (>= the visible count when it could not be found).
class LoseFirstDevice {
 public:
  LoseFirstDevice(const char* visible, const accel_resource_request_t& request, uint32_t operations)
      : visible_("ACCEL_VISIBLE_DEVICES", visible),
        first(FirstDeviceIndex(request)),
        faults_("ACCEL_SIM_FAULTS",
                "device_lost_after=" + std::to_string(operations) + ",devices=gpu" + std::to_string(first)) {}

 private:
  ScopedEnv visible_;

 public:
  const uint32_t first;

 private:
  ScopedEnv faults_;
};

// A task body's work on its first device: two 4 KiB buffers made and destroyed. Returns the first failure (a loss
// injected at the second operation, say) with its message as the task's.
inline accel_status_t AllocateTwice(accel_task_context_t ctx) {
  accel_device_t d = nullptr;
  EXPECT_EQ(accel_task_context_get_device(ctx, 0, &d), ACCEL_SUCCESS);
  const accel_buffer_desc_t bd = accel_test::BufferDesc(4096);
  accel_buffer_t b[2] = {nullptr, nullptr};
  accel_status_t s = ACCEL_SUCCESS;
  for (int i = 0; i < 2 && s == ACCEL_SUCCESS; ++i) s = accel_buffer_create(d, &bd, &b[i]);
  const std::string why = accel_last_error();
  for (accel_buffer_t x : b) {
    if (x != nullptr) accel_buffer_destroy(x);
  }
  return s == ACCEL_SUCCESS ? s : accel_set_last_error(s, why.c_str());
}

}  // namespace accel_runtime_test

#endif  // ACCEL_TESTS_RUNTIME_RUNTIME_FIXTURE_H_
