// Stress (docs/reliability.md, "Stress"): 8 threads on one instance, then 8
// threads on two instances, each for a bounded time, mixing buffers, copies
// (host to device, device to host, peer), native-host kernel launches, events
// across streams, tenants with limits, stream churn, runtime tasks (direct
// and on devices) and objects (own and shared, on the host and devices), on
// the host backend and the sim backend's h100-sxm-8 node. Every call returns
// ACCEL_SUCCESS or the documented refusal the operation provokes (a tenant's
// limit, another instance's buffer); afterwards every physical device holds
// no buffer, the stores are empty and the runtimes' counters add up. Run under
// ASan/LSan and TSan (label tsan). ACCEL_STRESS_SECONDS sets each run's length
// (default 2).
#include <accel/object_store.h>
#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "native_kernels.h"
#include "object_fixture.h"
#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

constexpr uint32_t kThreads = 8;

enum Op : uint32_t {
  kBufferChurn,    // create and destroy, or fill and free in stream order
  kRoundTrip,      // host to device and back, bytes compared
  kPeerCopy,       // device to device between two simulated GPUs
  kLaunch,         // vadd, checked
  kEvents,         // an event recorded on one device's stream and waited for by another's
  kTenant,         // a tenant with a limit: an allocation within it, one past it refused
  kTask,           // a runtime task, direct or on a GPU
  kObject,         // put, get somewhere, compare, release
  kSharedObject,   // a get of an object every thread reads
  kStreamChurn,    // a stream created, used and destroyed
  kCrossInstance,  // a copy between two instances' buffers, refused (two instances only)
  kOpCount
};
constexpr const char* kOpNames[kOpCount] = {
    "buffer churn",  "round trip",   "peer copy",          "launch", "events", "tenant", "task", "object",
    "shared object", "stream churn", "cross-instance copy"};

// One instance with its runtime: the host CPU and the 8 simulated GPUs, a vadd kernel on each, shared objects.
struct Node {
  std::unique_ptr<accel_test::ScopedInstance> instance;
  accel_runtime_t runtime = nullptr;
  accel_device_t host = nullptr;
  std::vector<accel_device_t> gpus;
  std::vector<accel_module_t> modules;
  std::vector<std::pair<accel_device_t, accel_kernel_t>> kernels;
  std::vector<int32_t> gpu_location;  // runtime device index of gpus[i]
  std::vector<accel_object_t> shared;
  std::vector<std::vector<uint8_t>> shared_bytes;
  std::atomic<uint64_t> tasks_submitted{0};

  accel_kernel_t Kernel(accel_device_t d) const {
    for (const auto& [device, kernel] : kernels) {
      if (device == d) return kernel;
    }
    return nullptr;
  }
};

accel_physical_device_t PhysicalOf(accel_device_t d) {
  accel_physical_device_t p = nullptr;
  EXPECT_EQ(accel_device_get_physical_device(d, &p), ACCEL_SUCCESS) << accel_last_error();
  return p;
}

void MakeNode(Node* node) {
  accel_instance_desc_t d = accel_test::ScopedInstance::Backends("host,sim");
  node->instance = std::make_unique<accel_test::ScopedInstance>(&d);
  for (accel_device_t dev : node->instance->Devices()) {
    accel_device_capabilities_t props{};
    props.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
    props.struct_size = sizeof(props);
    ASSERT_EQ(accel_device_get_capabilities(dev, &props), ACCEL_SUCCESS) << accel_last_error();
    if (props.kind == ACCEL_DEVICE_KIND_CPU && node->host == nullptr) node->host = dev;
    if (props.kind == ACCEL_DEVICE_KIND_GPU) node->gpus.push_back(dev);
  }
  ASSERT_NE(node->host, nullptr);
  ASSERT_EQ(node->gpus.size(), 8U);
  const accel_module_source_t source = accel_test::NativeSource(accel_test::TestModule());
  const accel_module_desc_t md = accel_test::ModuleDesc(&source, 1, "stress");
  std::vector<accel_device_t> all = node->gpus;
  all.push_back(node->host);
  for (accel_device_t dev : all) {
    accel_module_t m = nullptr;
    ASSERT_EQ(accel_module_create(dev, &md, &m), ACCEL_SUCCESS) << accel_last_error();
    accel_kernel_t k = nullptr;
    ASSERT_EQ(accel_module_get_kernel(m, "vadd", &k), ACCEL_SUCCESS) << accel_last_error();
    node->modules.push_back(m);
    node->kernels.emplace_back(dev, k);
  }
  accel_runtime_desc_t rd{};
  rd.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DESC;
  rd.struct_size = sizeof(rd);
  rd.worker_threads = 4;
  ASSERT_EQ(accel_runtime_create(node->instance->get(), &rd, &node->runtime), ACCEL_SUCCESS) << accel_last_error();
  uint32_t count = 0;
  ASSERT_EQ(accel_runtime_get_device_count(node->runtime, &count), ACCEL_SUCCESS);
  for (accel_device_t gpu : node->gpus) {
    const accel_physical_device_t p = PhysicalOf(gpu);
    int32_t location = -2;
    for (uint32_t i = 0; i < count; ++i) {
      accel_runtime_device_t r{};
      r.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE;
      r.struct_size = sizeof(r);
      ASSERT_EQ(accel_runtime_get_device(node->runtime, i, &r), ACCEL_SUCCESS);
      if (r.physical_device == p) location = static_cast<int32_t>(i);
    }
    ASSERT_GE(location, 0);
    node->gpu_location.push_back(location);
  }
  for (uint32_t i = 0; i < 16; ++i) {
    node->shared_bytes.push_back(Pattern(1024 + i * 4096, 9000 + i));
    accel_object_put_desc_t pd{};
    pd.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
    pd.struct_size = sizeof(pd);
    pd.data = node->shared_bytes.back().data();
    pd.size = node->shared_bytes.back().size();
    accel_object_t o = nullptr;
    ASSERT_EQ(accel_object_put(node->runtime, &pd, &o), ACCEL_SUCCESS) << accel_last_error();
    node->shared.push_back(o);
  }
}

// Releases the node's objects and runtime, checking that its store is empty and that every task ended as it
// should.
void CheckAndDestroyRuntime(Node* node, uint64_t tasks_submitted) {
  for (accel_object_t o : node->shared) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
  node->shared.clear();
  uint32_t count = 0;
  ASSERT_EQ(accel_runtime_get_device_count(node->runtime, &count), ACCEL_SUCCESS);
  for (int32_t loc = -1; loc < static_cast<int32_t>(count); ++loc) {
    accel_object_store_usage_t u{};
    u.stype = ACCEL_STRUCTURE_TYPE_OBJECT_STORE_USAGE;
    u.struct_size = sizeof(u);
    ASSERT_EQ(accel_object_store_get_usage(node->runtime, loc, &u), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(u.used, 0U) << "location " << loc;
    EXPECT_EQ(u.replicas, 0U) << "location " << loc;
  }
  accel_runtime_counters_t c{};
  c.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS;
  c.struct_size = sizeof(c);
  ASSERT_EQ(accel_runtime_get_counters(node->runtime, &c), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(c.submitted, tasks_submitted);
  EXPECT_EQ(c.finished, tasks_submitted);
  EXPECT_EQ(c.failed + c.cancelled + c.pending + c.running, 0U);
  for (uint32_t i = 0; i < count; ++i) {
    accel_runtime_device_t r{};
    r.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE;
    r.struct_size = sizeof(r);
    ASSERT_EQ(accel_runtime_get_device(node->runtime, i, &r), ACCEL_SUCCESS);
    EXPECT_EQ(r.share_free, 1.0) << "runtime device " << i;
    EXPECT_EQ(r.memory_free, r.memory_total) << "runtime device " << i;
  }
  EXPECT_EQ(accel_runtime_destroy(node->runtime), ACCEL_SUCCESS) << accel_last_error();
  node->runtime = nullptr;
  for (accel_module_t m : node->modules) EXPECT_EQ(accel_module_destroy(m), ACCEL_SUCCESS);
  node->modules.clear();
}

// Checks that memory usage is back to zero on every physical device (the host CPU and the GPUs) and destroys the
// instance. The usage is the process's (docs/memory-limits.md): every node's runtime must be gone first.
void CheckAndDestroyInstance(Node* node) {
  uint32_t physical_count = 0;
  ASSERT_EQ(accel_instance_enumerate_physical_devices(node->instance->get(), &physical_count, nullptr), ACCEL_SUCCESS);
  std::vector<accel_physical_device_t> physical(physical_count);
  ASSERT_EQ(accel_instance_enumerate_physical_devices(node->instance->get(), &physical_count, physical.data()),
            ACCEL_SUCCESS);
  for (accel_physical_device_t p : physical) {
    accel_memory_usage_t u{};
    u.stype = ACCEL_STRUCTURE_TYPE_MEMORY_USAGE;
    u.struct_size = sizeof(u);
    ASSERT_EQ(accel_physical_device_get_memory_usage(p, &u), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(u.used, 0U) << PhysicalId(p);
    EXPECT_EQ(u.buffers, 0U) << PhysicalId(p);
    EXPECT_GT(u.peak, 0U) << PhysicalId(p) << " was used";
  }
  for (accel_device_t gpu : node->gpus) {
    uint64_t free = 0, total = 0;
    EXPECT_EQ(accel_device_get_memory_info(gpu, &free, &total), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(free, total) << "the sim backend's own count";
  }
  node->instance.reset();
}

// What every thread adds up.
struct Stats {
  std::array<std::atomic<uint64_t>, kOpCount> ops{};
  std::atomic<uint64_t> refused{0};  // documented refusals the operations provoke
  std::atomic<uint64_t> unexpected{0};
  std::mutex mutex;
  std::string first_unexpected;
};

// One thread's place on one node: the host and two GPUs, a stream on each.
struct Lane {
  Node* node = nullptr;
  std::array<accel_device_t, 3> devices{};  // host, gpu a, gpu b
  std::array<uint32_t, 2> gpu_index{};
  std::array<accel_stream_t, 3> streams{};
};

class Worker {
 public:
  Worker(std::vector<Node*> nodes, uint32_t index, Stats* stats) : stats_(stats), rng_(1000 + index) {
    for (size_t n = 0; n < nodes.size(); ++n) {
      Lane lane;
      lane.node = nodes[n];
      lane.gpu_index = {index % 8, (index + 3) % 8};
      lane.devices = {nodes[n]->host, nodes[n]->gpus[lane.gpu_index[0]], nodes[n]->gpus[lane.gpu_index[1]]};
      for (size_t i = 0; i < 3; ++i) {
        Check(accel_stream_create(lane.devices[i], nullptr, &lane.streams[i]), "stream_create");
      }
      lanes_.push_back(lane);
    }
  }
  ~Worker() {
    for (Lane& lane : lanes_) {
      for (accel_stream_t s : lane.streams) {
        if (s != nullptr) Check(accel_stream_destroy(s), "stream_destroy");
      }
    }
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void Run(std::chrono::steady_clock::time_point deadline) {
    const uint32_t ops = lanes_.size() > 1 ? kOpCount : kOpCount - 1;
    while (std::chrono::steady_clock::now() < deadline && stats_->unexpected.load() < 20) {
      Lane& lane = lanes_[rng_() % lanes_.size()];
      const auto op = static_cast<Op>(rng_() % ops);
      switch (op) {
        case kBufferChurn: BufferChurn(lane); break;
        case kRoundTrip: RoundTrip(lane); break;
        case kPeerCopy: PeerCopy(lane); break;
        case kLaunch: LaunchVadd(lane); break;
        case kEvents: Events(lane); break;
        case kTenant: Tenant(lane); break;
        case kTask: Task(lane); break;
        case kObject: Object(lane); break;
        case kSharedObject: SharedObject(lane); break;
        case kStreamChurn: StreamChurn(lane); break;
        case kCrossInstance: CrossInstance(); break;
        case kOpCount: break;
      }
      ++stats_->ops[op];
    }
  }

 private:
  // Records a call that did not return what the operation expects.
  bool Check(accel_status_t s, const char* what, accel_status_t expected = ACCEL_SUCCESS) {
    if (s == expected) return true;
    ++stats_->unexpected;
    std::lock_guard lock(stats_->mutex);
    if (stats_->first_unexpected.empty()) {
      stats_->first_unexpected = std::string(what) + " returned " + std::to_string(s) + " (expected " +
                                 std::to_string(expected) + "): " + accel_last_error();
    }
    return false;
  }
  bool Expect(bool condition, const std::string& what) {
    if (condition) return true;
    ++stats_->unexpected;
    std::lock_guard lock(stats_->mutex);
    if (stats_->first_unexpected.empty()) stats_->first_unexpected = what;
    return false;
  }

  std::vector<uint8_t> Bytes(size_t size) {
    std::vector<uint8_t> v(size);
    const uint32_t seed = rng_();
    for (size_t i = 0; i < size; ++i) v[i] = static_cast<uint8_t>(seed + i * 31 + (i >> 8));
    return v;
  }
  accel_buffer_t Buffer(accel_device_t device, uint64_t size) {
    const accel_buffer_desc_t d = BufferDesc(size);
    accel_buffer_t b = nullptr;
    Check(accel_buffer_create(device, &d, &b), "buffer_create");
    return b;
  }
  void Destroy(accel_buffer_t b) {
    if (b != nullptr) Check(accel_buffer_destroy(b), "buffer_destroy");
  }

  void BufferChurn(Lane& lane) {
    const size_t i = rng_() % 3;
    accel_buffer_t b = Buffer(lane.devices[i], 1 + rng_() % 65536);
    if (b == nullptr) return;
    if (rng_() % 2 == 0) {
      Destroy(b);
      return;
    }
    const uint8_t pattern = 0x5A;
    accel_buffer_properties_t props{};
    props.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
    props.struct_size = sizeof(props);
    Check(accel_buffer_get_properties(b, &props), "buffer_get_properties");
    Check(accel_stream_fill_buffer(lane.streams[i], b, 0, props.size, &pattern, 1), "stream_fill_buffer");
    Check(accel_stream_free_buffer(lane.streams[i], b), "stream_free_buffer");  // released when the fill is done
  }

  void RoundTrip(Lane& lane) {
    const size_t i = rng_() % 3;
    const std::vector<uint8_t> in = Bytes(1 + rng_() % 32768);
    std::vector<uint8_t> out(in.size());
    accel_buffer_t b = Buffer(lane.devices[i], in.size());
    if (b == nullptr) return;
    Check(accel_stream_copy_host_to_buffer(lane.streams[i], in.data(), b, 0, in.size()), "copy_host_to_buffer");
    Check(accel_stream_copy_buffer_to_host(lane.streams[i], b, 0, out.data(), out.size()), "copy_buffer_to_host");
    Check(accel_stream_synchronize(lane.streams[i], ACCEL_TIMEOUT_INFINITE), "stream_synchronize");
    Expect(out == in, "round trip: bytes differ");
    Destroy(b);
  }

  void PeerCopy(Lane& lane) {
    const std::vector<uint8_t> in = Bytes(1 + rng_() % 65536);
    std::vector<uint8_t> out(in.size());
    accel_buffer_t a = Buffer(lane.devices[1], in.size());
    accel_buffer_t b = Buffer(lane.devices[2], in.size());
    if (a != nullptr && b != nullptr) {
      Check(accel_stream_copy_host_to_buffer(lane.streams[1], in.data(), a, 0, in.size()), "copy_host_to_buffer");
      Check(accel_stream_copy_buffer(lane.streams[1], a, 0, b, 0, in.size()), "copy_buffer");
      Check(accel_stream_synchronize(lane.streams[1], ACCEL_TIMEOUT_INFINITE), "stream_synchronize");
      Check(accel_stream_copy_buffer_to_host(lane.streams[2], b, 0, out.data(), out.size()), "copy_buffer_to_host");
      Check(accel_stream_synchronize(lane.streams[2], ACCEL_TIMEOUT_INFINITE), "stream_synchronize");
      Expect(out == in, "peer copy: bytes differ");
    }
    Destroy(a);
    Destroy(b);
  }

  void LaunchVadd(Lane& lane) {
    const size_t i = rng_() % 3;
    const uint32_t n = 64 + rng_() % 4096;
    std::vector<float> a(n), b(n), c(n, -1.0f);
    for (uint32_t k = 0; k < n; ++k) {
      a[k] = static_cast<float>(k % 1000);
      b[k] = static_cast<float>(rng_() % 1000);
    }
    const uint64_t bytes = uint64_t{n} * sizeof(float);
    accel_buffer_t ba = Buffer(lane.devices[i], bytes);
    accel_buffer_t bb = Buffer(lane.devices[i], bytes);
    accel_buffer_t bc = Buffer(lane.devices[i], bytes);
    if (ba != nullptr && bb != nullptr && bc != nullptr) {
      accel_stream_t s = lane.streams[i];
      Check(accel_stream_copy_host_to_buffer(s, a.data(), ba, 0, bytes), "copy_host_to_buffer");
      Check(accel_stream_copy_host_to_buffer(s, b.data(), bb, 0, bytes), "copy_host_to_buffer");
      const accel_kernel_arg_t args[] = {accel_test::BufferArg(ba), accel_test::BufferArg(bb),
                                         accel_test::BufferArg(bc), accel_test::ScalarArg(&n)};
      const accel_launch_desc_t launch = accel_test::Launch({(n + 63) / 64, 1, 1}, {64, 1, 1}, args, 4);
      Check(accel_stream_launch_kernel(s, lane.node->Kernel(lane.devices[i]), &launch), "stream_launch_kernel");
      Check(accel_stream_copy_buffer_to_host(s, bc, 0, c.data(), bytes), "copy_buffer_to_host");
      Check(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE), "stream_synchronize");
      bool right = true;
      for (uint32_t k = 0; k < n; ++k) right = right && c[k] == a[k] + b[k];
      Expect(right, "vadd: wrong sums");
    }
    Destroy(ba);
    Destroy(bb);
    Destroy(bc);
  }

  void Events(Lane& lane) {
    // gpu a fills, records; gpu b's stream waits for the event, then copies the filled bytes over (peer) and back.
    const uint64_t size = 4 * (1 + rng_() % 4096);
    const uint32_t pattern = rng_();
    accel_buffer_t a = Buffer(lane.devices[1], size);
    accel_buffer_t b = Buffer(lane.devices[2], size);
    accel_event_t event = nullptr;
    Check(accel_event_create(lane.devices[1], nullptr, &event), "event_create");
    if (a != nullptr && b != nullptr && event != nullptr) {
      std::vector<uint32_t> out(size / 4, 0);
      Check(accel_stream_fill_buffer(lane.streams[1], a, 0, size, &pattern, 4), "stream_fill_buffer");
      Check(accel_stream_record_event(lane.streams[1], event), "stream_record_event");
      Check(accel_stream_wait_event(lane.streams[2], event), "stream_wait_event");
      Check(accel_stream_copy_buffer(lane.streams[2], a, 0, b, 0, size), "copy_buffer");
      Check(accel_stream_copy_buffer_to_host(lane.streams[2], b, 0, out.data(), size), "copy_buffer_to_host");
      Check(accel_stream_synchronize(lane.streams[2], ACCEL_TIMEOUT_INFINITE), "stream_synchronize");
      Check(accel_event_query(event), "event_query");
      Check(accel_event_synchronize(event, ACCEL_TIMEOUT_INFINITE), "event_synchronize");
      bool right = true;
      for (uint32_t v : out) right = right && v == pattern;
      Expect(right, "events: the waiting stream copied before the fill");
    }
    if (event != nullptr) Check(accel_event_destroy(event), "event_destroy");
    Destroy(a);
    Destroy(b);
  }

  void Tenant(Lane& lane) {
    const accel_physical_device_t p = PhysicalOf(lane.devices[1]);
    const accel_tenant_limit_t limit{p, kMiB};
    accel_tenant_desc_t td{};
    td.stype = ACCEL_STRUCTURE_TYPE_TENANT_DESC;
    td.struct_size = sizeof(td);
    td.name = "stress";
    td.limits = &limit;
    td.limit_count = 1;
    td.other_limit = ACCEL_MEMORY_UNLIMITED;
    accel_tenant_t tenant = nullptr;
    if (!Check(accel_tenant_create(lane.node->instance->get(), &td, &tenant), "tenant_create")) return;
    accel_tenant_t previous = nullptr;
    Check(accel_thread_set_tenant(tenant, &previous), "thread_set_tenant");
    accel_buffer_t within = Buffer(lane.devices[1], kMiB / 2);
    const accel_buffer_desc_t past = BufferDesc(kMiB * 3 / 4);
    accel_buffer_t refused = nullptr;
    // Documented: past the tenant's limit, RESOURCE_EXHAUSTED for this tenant alone.
    if (Check(accel_buffer_create(lane.devices[1], &past, &refused), "buffer_create past the tenant's limit",
              ACCEL_ERROR_RESOURCE_EXHAUSTED)) {
      ++stats_->refused;
      Expect(std::string(accel_last_error()).find("stress") != std::string::npos,
             std::string("the refusal names the tenant: ") + accel_last_error());
    }
    Destroy(refused);
    accel_memory_usage_t u{};
    u.stype = ACCEL_STRUCTURE_TYPE_MEMORY_USAGE;
    u.struct_size = sizeof(u);
    Check(accel_tenant_get_memory_usage(tenant, p, &u), "tenant_get_memory_usage");
    Expect(u.used == kMiB / 2 && u.buffers == 1 && u.refused == 1, "tenant usage while holding a buffer");
    Destroy(within);
    Check(accel_tenant_get_memory_usage(tenant, p, &u), "tenant_get_memory_usage");
    Expect(u.used == 0 && u.buffers == 0, "tenant usage back to zero");
    Check(accel_thread_set_tenant(previous, nullptr), "thread_set_tenant");
    Check(accel_tenant_destroy(tenant), "tenant_destroy");
  }

  static accel_status_t TaskBody(accel_task_context_t ctx, void*) {
    uint32_t count = 0;
    if (accel_task_context_get_device_count(ctx, &count) != ACCEL_SUCCESS) return ACCEL_ERROR_INTERNAL;
    if (count == 0) return ACCEL_SUCCESS;
    accel_device_t device = nullptr;
    if (accel_task_context_get_device(ctx, 0, &device) != ACCEL_SUCCESS) return ACCEL_ERROR_INTERNAL;
    const accel_buffer_desc_t d = BufferDesc(4096);
    accel_buffer_t b = nullptr;
    accel_status_t s = accel_buffer_create(device, &d, &b);
    accel_stream_t stream = nullptr;
    if (s == ACCEL_SUCCESS) s = accel_stream_create(device, nullptr, &stream);
    const uint8_t pattern = 7;
    if (s == ACCEL_SUCCESS) s = accel_stream_fill_buffer(stream, b, 0, 4096, &pattern, 1);
    if (s == ACCEL_SUCCESS) s = accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE);
    if (stream != nullptr) accel_stream_destroy(stream);
    if (b != nullptr) accel_buffer_destroy(b);
    return s;
  }

  void Task(Lane& lane) {
    const bool on_gpu = rng_() % 2 == 0;
    const accel_resource_request_t request = Request(1, 0.25, 16 * kMiB, "kind == gpu");
    accel_task_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
    d.struct_size = sizeof(d);
    d.name = "stress";
    d.function = &Worker::TaskBody;
    d.request = on_gpu ? &request : nullptr;
    accel_future_t f = nullptr;
    if (!Check(accel_task_submit(lane.node->runtime, &d, &f), "task_submit")) return;
    ++lane.node->tasks_submitted;
    Check(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), "future_wait");
    Check(accel_future_release(f), "future_release");
  }

  int32_t SomeLocation(Lane& lane) {
    const uint32_t k = rng_() % 3;
    return k == 0 ? kHost : lane.node->gpu_location[lane.gpu_index[k - 1]];
  }

  bool ReadAndCompare(accel_object_t o, int32_t location, const std::vector<uint8_t>& want, const char* what) {
    accel_object_view_t view = nullptr;
    if (!Check(accel_object_get(o, location, ACCEL_TIMEOUT_INFINITE, &view), "object_get")) return false;
    const std::vector<uint8_t> got = Read(view);
    Check(accel_object_view_release(view), "object_view_release");
    return Expect(got == want, std::string(what) + ": bytes differ at location " + std::to_string(location));
  }

  void Object(Lane& lane) {
    const std::vector<uint8_t> bytes = Bytes(1 + rng_() % 65536);
    accel_object_put_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
    d.struct_size = sizeof(d);
    d.data = bytes.data();
    d.size = bytes.size();
    accel_object_t o = nullptr;
    if (!Check(accel_object_put(lane.node->runtime, &d, &o), "object_put")) return;
    ReadAndCompare(o, SomeLocation(lane), bytes, "object");
    Check(accel_object_release(o), "object_release");
  }

  void SharedObject(Lane& lane) {
    const size_t k = rng_() % lane.node->shared.size();
    accel_object_t o = lane.node->shared[k];
    Check(accel_object_retain(o), "object_retain");
    ReadAndCompare(o, SomeLocation(lane), lane.node->shared_bytes[k], "shared object");
    Check(accel_object_release(o), "object_release");
  }

  void StreamChurn(Lane& lane) {
    const size_t i = rng_() % 3;
    accel_stream_t s = nullptr;
    if (!Check(accel_stream_create(lane.devices[i], nullptr, &s), "stream_create")) return;
    accel_buffer_t b = Buffer(lane.devices[i], 4096);
    if (b != nullptr) {
      const uint8_t pattern = 1;
      Check(accel_stream_fill_buffer(s, b, 0, 4096, &pattern, 1), "stream_fill_buffer");
      Check(accel_stream_free_buffer(s, b), "stream_free_buffer");
    }
    Check(accel_stream_destroy(s), "stream_destroy");  // waits for its work
  }

  void CrossInstance() {
    // A copy on the first instance's stream into the second instance's buffer: refused, nothing copied.
    Lane& here = lanes_[0];
    Lane& there = lanes_[1];
    accel_buffer_t a = Buffer(here.devices[1], 4096);
    accel_buffer_t b = Buffer(there.devices[1], 4096);
    if (a != nullptr && b != nullptr) {
      const accel_status_t s = accel_stream_copy_buffer(here.streams[1], a, 0, b, 0, 4096);
      if (Expect(s == ACCEL_ERROR_INVALID_HANDLE || s == ACCEL_ERROR_INVALID_ARGUMENT,
                 "a copy into another instance's buffer returned " + std::to_string(s) + ": " + accel_last_error())) {
        ++stats_->refused;
        Expect(accel_last_error()[0] != '\0', "the refusal has a message");
      }
    }
    Destroy(a);
    Destroy(b);
  }

  Stats* stats_;
  std::mt19937 rng_;
  std::vector<Lane> lanes_;
};

double Seconds() {
  const char* v = std::getenv("ACCEL_STRESS_SECONDS");
  return v != nullptr && *v != '\0' ? std::strtod(v, nullptr) : 2.0;
}

void RunStress(uint32_t node_count) {
  unsetenv("ACCEL_SIM_FAULTS");
  ScopedEnv profile("ACCEL_SIM_PROFILE", "h100-sxm-8");
  std::vector<std::unique_ptr<Node>> nodes;
  for (uint32_t n = 0; n < node_count; ++n) {
    nodes.push_back(std::make_unique<Node>());
    MakeNode(nodes.back().get());
    if (::testing::Test::HasFatalFailure()) return;
  }
  Stats stats;
  const double seconds = Seconds();
  const auto start = std::chrono::steady_clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  {
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < kThreads; ++t) {
      // Each thread works on every node, its first lane on node t % node_count (so with two nodes half the
      // threads start on each).
      std::vector<Node*> mine;
      for (uint32_t n = 0; n < node_count; ++n) mine.push_back(nodes[(t + n) % node_count].get());
      threads.emplace_back([mine, t, &stats, deadline] {
        Worker worker(mine, t, &stats);
        worker.Run(deadline);
      });
    }
    for (std::thread& t : threads) t.join();
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(stats.unexpected.load(), 0U) << stats.first_unexpected;
  uint64_t total = 0;
  std::string per_op;
  for (uint32_t op = 0; op < kOpCount; ++op) {
    total += stats.ops[op].load();
    if (op == kCrossInstance && node_count == 1) continue;
    per_op += std::string(per_op.empty() ? "" : ", ") + kOpNames[op] + " " + std::to_string(stats.ops[op].load());
    EXPECT_GT(stats.ops[op].load(), 0U) << kOpNames[op] << " never ran";
  }
  std::printf(
      "stress figures: %u threads on %u instance(s) for %.1f s: %llu operations (%.0f/s), %llu documented "
      "refusals, %llu unexpected\n  %s\n",
      kThreads, node_count, elapsed, static_cast<unsigned long long>(total), total / elapsed,
      static_cast<unsigned long long>(stats.refused.load()), static_cast<unsigned long long>(stats.unexpected.load()),
      per_op.c_str());
  uint64_t tasks = 0;
  for (uint32_t n = 0; n < node_count; ++n) {
    tasks += nodes[n]->tasks_submitted.load();
    CheckAndDestroyRuntime(nodes[n].get(), nodes[n]->tasks_submitted.load());
  }
  for (uint32_t n = 0; n < node_count; ++n) CheckAndDestroyInstance(nodes[n].get());
  EXPECT_EQ(tasks, stats.ops[kTask].load());
}

TEST(Stress, EightThreadsOnOneInstance) { RunStress(1); }

TEST(Stress, EightThreadsOnTwoInstances) { RunStress(2); }

}  // namespace
