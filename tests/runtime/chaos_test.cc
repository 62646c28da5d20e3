// Chaos (docs/reliability.md, "Chaos"): 10,000 tasks with objects on the sim
// backend's 8-GPU node while ACCEL_SIM_FAULTS fails allocations, slows copies
// and loses two devices. Every task finishes or fails with a documented status
// and a message; every object still referenced reads back with exactly the
// bytes put or made by its task (lost results made again by lineage); the
// runtime's and the store's counters add up; nothing is left held (ASan/LSan).
// ACCEL_CHAOS_TASKS scales the run (default 10000), ACCEL_CHAOS_SEED picks the
// faults (default 1). The figures are printed for docs/reliability.md.
#include <accel/object_store.h>
#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "object_fixture.h"
#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 10);
}

// What task `i` is, by i % 20.
enum class Kind {
  kDevice,     // 0-9, 16, 18-19: reads its object on its device, puts its result from a device buffer; 3 retries
  kHost,       // 10-12: no device (the direct path), reads and puts on the host
  kFragile,    // 13: like kDevice without retries of any kind: an injected fault fails it
  kOnPurpose,  // 14: fails with FAILED_PRECONDITION and its own message
  kAfterFail,  // 15: depends on task i-1 (kOnPurpose): fails naming that dependency
  kCancelled,  // 17: cancelled right after its submission (or ends first)
};

Kind KindOf(uint32_t i) {
  switch (i % 20) {
    case 10:
    case 11:
    case 12: return Kind::kHost;
    case 13: return Kind::kFragile;
    case 14: return Kind::kOnPurpose;
    case 15: return Kind::kAfterFail;
    case 17: return Kind::kCancelled;
    default: return Kind::kDevice;
  }
}

bool MakesAResult(Kind k) { return k == Kind::kDevice || k == Kind::kHost || k == Kind::kFragile; }

// Size of task i's object: 64 B to 4 KiB.
size_t SizeOf(uint32_t i) { return 64 + (static_cast<size_t>(i) * 2654435761u) % (4 << 10); }

// What task i makes of its object's bytes: reversed, each byte XORed with a key of the task.
std::vector<uint8_t> Transform(const std::vector<uint8_t>& bytes, uint32_t i) {
  std::vector<uint8_t> out(bytes.size());
  const auto key = static_cast<uint8_t>((i & 0xFF) | 1);
  const size_t n = bytes.size();
  const uint8_t* in = bytes.data();
  uint8_t* o = out.data();
  for (size_t k = 0; k < n; ++k) o[k] = static_cast<uint8_t>(in[n - 1 - k] ^ key);
  return out;
}

// Counts the faults the sim backend injects, from its log lines (docs/sim.md, "Faults").
struct FaultLog {
  std::atomic<uint64_t> allocations{0};
  std::atomic<uint64_t> slow_copies{0};
  std::atomic<uint64_t> devices_lost{0};
  static void Collect(void* user_data, accel_log_level_t, const char* message) {
    auto* self = static_cast<FaultLog*>(user_data);
    const std::string_view m(message);
    if (m.find("failed by injection (alloc_fail=") != std::string_view::npos) ++self->allocations;
    if (m.find("by injection (slow_copy=") != std::string_view::npos) ++self->slow_copies;
    if (m.find("): injected fault device_lost_after=") != std::string_view::npos) ++self->devices_lost;
  }
};

// What the test and every task share.
struct Chaos {
  accel_runtime_t runtime = nullptr;
  std::vector<accel_physical_device_t> devices;  // by runtime device index
  std::atomic<uint64_t> runs{0};                 // task function calls
  std::atomic<uint64_t> op_retries{0};           // calls a task repeated after an injected RESOURCE_EXHAUSTED
  std::atomic<uint64_t> released{0};             // user data released
  std::atomic<uint64_t> adopted_host{0};         // host memory adopted by puts
  std::atomic<uint64_t> given_back{0};           // ... and given back by the store
  std::atomic<uint64_t> unexpected{0};           // a call inside a task that returned something undocumented
  std::string first_unexpected;
  std::mutex mutex;

  // Streams tasks borrow, per device (a stream is a thread: making one per task would cost more than the task).
  std::mutex streams_mutex;
  std::vector<std::pair<accel_device_t, accel_stream_t>> idle_streams;
  std::vector<accel_stream_t> all_streams;

  accel_status_t BorrowStream(accel_device_t device, accel_stream_t* out) {
    {
      std::lock_guard lock(streams_mutex);
      for (auto it = idle_streams.begin(); it != idle_streams.end(); ++it) {
        if (it->first == device) {
          *out = it->second;
          idle_streams.erase(it);
          return ACCEL_SUCCESS;
        }
      }
    }
    const accel_status_t s = accel_stream_create(device, nullptr, out);
    if (s == ACCEL_SUCCESS) {
      std::lock_guard lock(streams_mutex);
      all_streams.push_back(*out);
    }
    return s;
  }
  // Returns a stream whose work is done; one with an error (its device lost) is not lent again.
  void ReturnStream(accel_device_t device, accel_stream_t stream, bool healthy) {
    if (!healthy) return;
    std::lock_guard lock(streams_mutex);
    idle_streams.emplace_back(device, stream);
  }

  int32_t LocationOf(accel_physical_device_t p) const {
    for (size_t i = 0; i < devices.size(); ++i) {
      if (devices[i] == p) return static_cast<int32_t>(i);
    }
    return -2;
  }
  void Unexpected(const std::string& what) {
    ++unexpected;
    std::lock_guard lock(mutex);
    if (first_unexpected.empty()) first_unexpected = what;
  }
};

// One task's user data; released by the runtime (with the object, for a task whose result lives).
struct TaskData {
  Chaos* chaos;
  uint32_t index;
  Kind kind;
};

// Calls `f` until it returns anything but RESOURCE_EXHAUSTED, at most `tries` times.
template <typename F>
accel_status_t Retrying(Chaos& c, int tries, F&& f) {
  accel_status_t s = f();
  for (int t = 1; t < tries && s == ACCEL_ERROR_RESOURCE_EXHAUSTED; ++t) {
    ++c.op_retries;
    s = f();
  }
  return s;
}

// The task's status, keeping the message of the call that failed (cleanup calls may overwrite the thread's).
accel_status_t Fail(accel_status_t s, const std::string& message) { return accel_set_last_error(s, message.c_str()); }

void GiveBack(void* user_data, const void* data) {
  ++static_cast<Chaos*>(user_data)->given_back;
  std::free(const_cast<void*>(data));  // NOLINT(cppcoreguidelines-no-malloc): malloc'd below
}

// Host kinds: read the object on the host, put the result from host memory (adopted for odd tasks).
accel_status_t RunOnHost(TaskData& t, accel_task_context_t ctx, accel_object_t in) {
  Chaos& c = *t.chaos;
  accel_object_view_t view = nullptr;
  accel_status_t s = accel_object_get(in, kHost, ACCEL_TIMEOUT_INFINITE, &view);
  if (s != ACCEL_SUCCESS) return Fail(s, accel_last_error());
  const std::vector<uint8_t> bytes = Read(view);
  accel_object_view_release(view);
  const std::vector<uint8_t> out = Transform(bytes, t.index);
  accel_object_put_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
  d.struct_size = sizeof(d);
  d.size = out.size();
  void* adopted = nullptr;
  if (t.index % 2 == 1) {
    adopted = std::malloc(out.size());  // NOLINT(cppcoreguidelines-no-malloc): given back through GiveBack
    std::memcpy(adopted, out.data(), out.size());
    d.data = adopted;
    d.flags = ACCEL_OBJECT_PUT_ADOPT;
    d.release_data = &GiveBack;
    d.release_user_data = &c;
  } else {
    d.data = out.data();
  }
  accel_object_t result = nullptr;
  s = accel_object_put(c.runtime, &d, &result);
  if (s != ACCEL_SUCCESS) {
    std::free(adopted);  // NOLINT(cppcoreguidelines-no-malloc): a refused adopt leaves it ours
    return Fail(s, accel_last_error());
  }
  if (adopted != nullptr) ++c.adopted_host;
  s = accel_task_context_set_result(ctx, result);
  accel_object_release(result);
  return s;
}

// Device kinds: read the object on the task's device, transform it on the host, copy the result into a new
// buffer there and put it from that buffer (adopted for odd tasks). Injected allocation failures are retried
// (kDevice) or fail the task (kFragile); a lost device fails it with DEVICE_LOST (the runtime retries kDevice).
accel_status_t RunOnDevice(TaskData& t, accel_task_context_t ctx, accel_object_t in) {
  Chaos& c = *t.chaos;
  const int tries = t.kind == Kind::kFragile ? 1 : 8;
  accel_device_t device = nullptr;
  accel_physical_device_t physical = nullptr;
  if (accel_task_context_get_device(ctx, 0, &device) != ACCEL_SUCCESS ||
      accel_task_context_get_physical_device(ctx, 0, &physical) != ACCEL_SUCCESS) {
    c.Unexpected(std::string("task context: ") + accel_last_error());
    return ACCEL_ERROR_INTERNAL;
  }
  const int32_t location = c.LocationOf(physical);
  accel_object_view_t view = nullptr;
  accel_status_t s = Retrying(c, tries, [&] { return accel_object_get(in, location, ACCEL_TIMEOUT_INFINITE, &view); });
  if (s != ACCEL_SUCCESS) return Fail(s, accel_last_error());
  const accel_object_view_info_t vi = ViewInfo(view);
  std::vector<uint8_t> bytes(vi.size);
  accel_stream_t stream = nullptr;
  accel_buffer_t buffer = nullptr;
  std::string why;
  s = c.BorrowStream(device, &stream);
  if (s == ACCEL_SUCCESS) s = accel_stream_copy_buffer_to_host(stream, vi.buffer, vi.offset, bytes.data(), vi.size);
  if (s == ACCEL_SUCCESS) s = accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE);
  if (s != ACCEL_SUCCESS) why = accel_last_error();
  accel_object_view_release(view);
  const std::vector<uint8_t> out = Transform(bytes, t.index);
  if (s == ACCEL_SUCCESS) {
    const accel_buffer_desc_t bd = BufferDesc(out.size());
    s = Retrying(c, tries, [&] { return accel_buffer_create(device, &bd, &buffer); });
    if (s == ACCEL_SUCCESS) s = accel_stream_copy_host_to_buffer(stream, out.data(), buffer, 0, out.size());
    if (s == ACCEL_SUCCESS) s = accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE);
    if (s != ACCEL_SUCCESS) why = accel_last_error();
  }
  accel_object_t result = nullptr;
  if (s == ACCEL_SUCCESS) {
    accel_object_put_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
    d.struct_size = sizeof(d);
    d.buffer = buffer;
    d.size = out.size();
    d.flags = t.index % 2 == 1 ? ACCEL_OBJECT_PUT_ADOPT : 0;
    s = Retrying(c, tries, [&] { return accel_object_put(c.runtime, &d, &result); });
    if (s != ACCEL_SUCCESS) why = accel_last_error();
    if (s == ACCEL_SUCCESS && d.flags == ACCEL_OBJECT_PUT_ADOPT) buffer = nullptr;  // the store's now
  }
  if (buffer != nullptr) accel_buffer_destroy(buffer);
  if (stream != nullptr) c.ReturnStream(device, stream, s == ACCEL_SUCCESS);
  if (s != ACCEL_SUCCESS) return Fail(s, why);
  s = accel_task_context_set_result(ctx, result);
  accel_object_release(result);
  return s;
}

accel_status_t RunTask(accel_task_context_t ctx, void* p) {
  auto& t = *static_cast<TaskData*>(p);
  ++t.chaos->runs;
  if (t.kind == Kind::kOnPurpose) {
    return Fail(ACCEL_ERROR_FAILED_PRECONDITION, "chaos task " + std::to_string(t.index) + " fails on purpose");
  }
  if (t.kind == Kind::kCancelled) {
    uint32_t cancelled = 0;
    accel_task_context_is_cancelled(ctx, &cancelled);
    if (cancelled != 0) return Fail(ACCEL_ERROR_CANCELLED, "chaos task saw its cancellation");
    return ACCEL_SUCCESS;
  }
  accel_object_t in = nullptr;
  if (accel_task_context_get_object(ctx, 0, &in) != ACCEL_SUCCESS) {
    t.chaos->Unexpected(std::string("get_object: ") + accel_last_error());
    return ACCEL_ERROR_INTERNAL;
  }
  const accel_status_t s = t.kind == Kind::kHost ? RunOnHost(t, ctx, in) : RunOnDevice(t, ctx, in);
  const std::string why = s == ACCEL_SUCCESS ? "" : accel_last_error();
  accel_object_release(in);
  return s == ACCEL_SUCCESS ? s : Fail(s, why);
}

// A get of `object` at `location` that must succeed, retried when an injected fault fails it; the bytes.
// Gets that failed and were repeated, by why.
struct GetRetries {
  uint64_t rerun_failed = 0;  // DEVICE_LOST: the lineage re-run met an injected fault (a fragile task's)
  uint64_t no_room = 0;       // RESOURCE_EXHAUSTED: the new replica's allocation failed by injection
  uint64_t target_lost = 0;   // DEVICE_LOST: the device asked for was lost meanwhile (not repeated)
  uint64_t other = 0;
};

// The bytes of a view; DEVICE_LOST when the view's device was lost before they could be read.
accel_status_t ReadView(accel_object_view_t view, std::vector<uint8_t>* out) {
  const accel_object_view_info_t info = ViewInfo(view);
  out->assign(info.size, 0);
  if (info.location == kHost) {
    std::memcpy(out->data(), info.host_address, info.size);
    return ACCEL_SUCCESS;
  }
  accel_buffer_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
  props.struct_size = sizeof(props);
  EXPECT_EQ(accel_buffer_get_properties(info.buffer, &props), ACCEL_SUCCESS) << accel_last_error();
  accel_stream_t stream = nullptr;
  accel_status_t s = accel_stream_create(props.device, nullptr, &stream);
  if (s == ACCEL_SUCCESS)
    s = accel_stream_copy_buffer_to_host(stream, info.buffer, info.offset, out->data(), info.size);
  if (s == ACCEL_SUCCESS) s = accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE);
  if (stream != nullptr) accel_stream_destroy(stream);
  return s;
}

// A get of `object` at `location`, repeated when an injected fault failed it (a get never loops by itself: each
// runs at most one re-run); the bytes, or none with *error set. A device location that is lost meanwhile (gpu2 and
// gpu5 may still be reached by the reads' own operations) ends it with *target_lost set.
std::vector<uint8_t> ReadBack(accel_object_t object, int32_t location, GetRetries* retries, std::string* error,
                              bool* target_lost) {
  *target_lost = false;
  const std::string target = "device " + std::to_string(location) + " ";
  for (int attempt = 0; attempt < 8; ++attempt) {
    accel_object_view_t view = nullptr;
    accel_status_t s = accel_object_get(object, location, ACCEL_TIMEOUT_INFINITE, &view);
    std::vector<uint8_t> bytes;
    if (s == ACCEL_SUCCESS) {
      s = ReadView(view, &bytes);
      accel_object_view_release(view);
      if (s == ACCEL_SUCCESS) return bytes;
    }
    *error = std::to_string(s) + ": " + accel_last_error();
    if (s == ACCEL_ERROR_DEVICE_LOST && location != kHost && error->find(target) != std::string::npos &&
        error->find("is lost: the injected fault") != std::string::npos) {
      ++retries->target_lost;
      *target_lost = true;
      return {};
    }
    if (s == ACCEL_ERROR_DEVICE_LOST && error->find("has no copy left") != std::string::npos &&
        error->find("by re-running task") != std::string::npos && error->find("by injection") != std::string::npos) {
      ++retries->rerun_failed;
    } else if (s == ACCEL_ERROR_RESOURCE_EXHAUSTED && error->find("by injection") != std::string::npos) {
      ++retries->no_room;
    } else {
      ++retries->other;
      break;
    }
  }
  return {};
}

// The backend device behind physical device `p`.
accel_device_t StoreDevice(accel_physical_device_t p) {
  uint32_t n = 1;
  accel_device_t device = nullptr;
  EXPECT_EQ(accel_physical_device_enumerate_devices(p, &n, &device), ACCEL_SUCCESS) << accel_last_error();
  return device;
}

// The store's figures summed over the host and every device, and what the live objects say of themselves.
struct StoreFigures {
  uint64_t host_replicas = 0, host_used = 0, device_replicas = 0, device_used = 0;
  uint64_t transfers_in = 0, evicted = 0, moved_out = 0;
};

StoreFigures Usage(accel_runtime_t rt, uint32_t device_count) {
  StoreFigures f;
  for (int32_t loc = -1; loc < static_cast<int32_t>(device_count); ++loc) {
    accel_object_store_usage_t u{};
    u.stype = ACCEL_STRUCTURE_TYPE_OBJECT_STORE_USAGE;
    u.struct_size = sizeof(u);
    EXPECT_EQ(accel_object_store_get_usage(rt, loc, &u), ACCEL_SUCCESS) << accel_last_error();
    if (loc == kHost) {
      f.host_replicas = u.replicas;
      f.host_used = u.used;
    } else {
      f.device_replicas += u.replicas;
      f.device_used += u.used;
    }
    f.transfers_in += u.transfers_in;
    f.evicted += u.evicted;
    f.moved_out += u.moved_out;
  }
  return f;
}

// The store's counts against the live objects' own infos: every ready replica counted once, at its size.
void ExpectStoreMatchesObjects(accel_runtime_t rt, uint32_t device_count, const std::vector<accel_object_t>& objects,
                               const char* when) {
  const StoreFigures f = Usage(rt, device_count);
  uint64_t on_host = 0, host_bytes = 0, device_replicas = 0, device_bytes = 0;
  for (accel_object_t o : objects) {
    const accel_object_info_t info = Info(o);
    EXPECT_EQ(info.views, 0U) << when;
    on_host += info.on_host;
    host_bytes += info.on_host * info.size;
    device_replicas += info.device_replicas;
    device_bytes += info.device_replicas * info.size;
  }
  EXPECT_EQ(f.host_replicas, on_host) << when;
  EXPECT_EQ(f.host_used, host_bytes) << when;
  EXPECT_EQ(f.device_replicas, device_replicas) << when;
  EXPECT_EQ(f.device_used, device_bytes) << when;
}

TEST(Chaos, TenThousandTasksWithObjectsUnderInjectedFaultsLoseNothing) {
  const auto start = std::chrono::steady_clock::now();
  const auto task_count = static_cast<uint32_t>(EnvNumber("ACCEL_CHAOS_TASKS", 10000));
  const uint64_t seed = EnvNumber("ACCEL_CHAOS_SEED", 1);
  ASSERT_GE(task_count, 40U);
  // About 5 device operations per device task, 0.7 of the tasks on 8 devices: gpu2 and gpu5 go about a third of
  // the way through.
  const uint64_t lost_after = std::max<uint64_t>(100, task_count * 5 * 7 / 10 / 8 / 3);
  const std::string faults =
      "seed=" + std::to_string(seed) +
      ",alloc_fail=0.02,slow_copy=0.02,slow_copy_us=200,device_lost_after=" + std::to_string(lost_after) +
      ",lost_devices=gpu2+gpu5";
  ScopedEnv env_faults("ACCEL_SIM_FAULTS", faults);
  ScopedEnv env_profile("ACCEL_SIM_PROFILE", "h100-sxm-8");
  TempDir spill;

  FaultLog log;
  accel_instance_desc_t id = ScopedInstance::Backends("sim");
  id.log_level = ACCEL_LOG_LEVEL_INFO;
  id.log_callback = &FaultLog::Collect;
  id.log_user_data = &log;
  ScopedInstance instance(&id);
  ASSERT_NE(instance.get(), nullptr);

  // A small store on each device (ACCEL_CHAOS_STORE_MIB, default 2: replicas are evicted and last copies moved to
  // the host throughout the run and in the reads on devices), the host's default.
  accel_object_store_desc_t sd{};
  sd.stype = ACCEL_STRUCTURE_TYPE_OBJECT_STORE_DESC;
  sd.struct_size = sizeof(sd);
  sd.device_capacity = EnvNumber("ACCEL_CHAOS_STORE_MIB", 2) * kMiB;
  const std::string spill_dir = spill.path().string();
  sd.spill_directory = spill_dir.c_str();
  accel_runtime_desc_t rd{};
  rd.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DESC;
  rd.struct_size = sizeof(rd);
  rd.next = &sd;
  rd.worker_threads = 8;
  accel_runtime_t rt = nullptr;
  ASSERT_EQ(accel_runtime_create(instance.get(), &rd, &rt), ACCEL_SUCCESS) << accel_last_error();

  Chaos chaos;
  chaos.runtime = rt;
  uint32_t device_count = 0;
  ASSERT_EQ(accel_runtime_get_device_count(rt, &device_count), ACCEL_SUCCESS);
  ASSERT_EQ(device_count, 8U);
  for (uint32_t i = 0; i < device_count; ++i) {
    accel_runtime_device_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE;
    d.struct_size = sizeof(d);
    ASSERT_EQ(accel_runtime_get_device(rt, i, &d), ACCEL_SUCCESS);
    chaos.devices.push_back(d.physical_device);
  }

  // The inputs: one host object per task.
  std::vector<accel_object_t> inputs(task_count, nullptr);
  for (uint32_t i = 0; i < task_count; ++i) {
    const std::vector<uint8_t> bytes = Pattern(SizeOf(i), i);
    accel_object_put_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
    d.struct_size = sizeof(d);
    d.data = bytes.data();
    d.size = bytes.size();
    ASSERT_EQ(accel_object_put(rt, &d, &inputs[i]), ACCEL_SUCCESS) << accel_last_error();
  }

  // The tasks, at most `window` in flight (the scheduler scans its waiting tasks on each pass).
  const accel_resource_request_t one = Request(1, 0.5, 64 * kMiB);
  std::vector<accel_future_t> futures(task_count, nullptr);
  std::map<std::string, uint64_t> submit_refused;
  const uint32_t window = 256;
  uint64_t submitted = 0;
  for (uint32_t i = 0; i < task_count; ++i) {
    if (i >= window) accel_future_wait(futures[i - window], ACCEL_TIMEOUT_INFINITE);
    const Kind kind = KindOf(i);
    accel_task_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
    d.struct_size = sizeof(d);
    d.name = "chaos";
    d.function = &RunTask;
    d.user_data = new TaskData{&chaos, i, kind};
    d.release_user_data = [](void* p) {
      auto* t = static_cast<TaskData*>(p);
      ++t->chaos->released;
      delete t;
    };
    const bool on_device = kind == Kind::kDevice || kind == Kind::kFragile || kind == Kind::kCancelled;
    d.request = on_device ? &one : nullptr;
    d.max_retries = kind == Kind::kDevice ? 3 : 0;
    d.near_objects = &inputs[i];
    d.near_object_count = 1;
    accel_future_t dependency = nullptr;
    if (kind == Kind::kAfterFail) dependency = futures[i - 1];
    if (i % 20 == 16) dependency = futures[i - 5];  // a host task, which succeeds
    if (dependency != nullptr) {
      d.dependencies = &dependency;
      d.dependency_count = 1;
    }
    const accel_status_t s = accel_task_submit(rt, &d, &futures[i]);
    if (s != ACCEL_SUCCESS) {
      // Only a request no device can hold any more is refused (NOT_FOUND); the test never asks for one.
      ++submit_refused[std::to_string(s) + ": " + accel_last_error()];
      delete static_cast<TaskData*>(d.user_data);
      continue;
    }
    ++submitted;
    if (kind == Kind::kCancelled) {
      EXPECT_EQ(accel_future_cancel(futures[i]), ACCEL_SUCCESS);
    }
  }
  EXPECT_TRUE(submit_refused.empty()) << (submit_refused.empty() ? "" : submit_refused.begin()->first);

  // Every task ends, with a documented status and a message when it failed.
  std::map<accel_status_t, uint64_t> by_status;
  std::vector<accel_object_t> results(task_count, nullptr);
  uint64_t lost_failures = 0;
  for (uint32_t i = 0; i < task_count; ++i) {
    if (futures[i] == nullptr) continue;
    const accel_status_t s = accel_future_wait(futures[i], ACCEL_TIMEOUT_INFINITE);
    ++by_status[s];
    const Kind kind = KindOf(i);
    const std::string message = s == ACCEL_SUCCESS ? "" : Message(futures[i]);
    const std::string what = "task " + std::to_string(i) + ": status " + std::to_string(s) + ", '" + message + "'";
    if (s != ACCEL_SUCCESS) {
      EXPECT_FALSE(message.empty()) << what;
    }
    switch (kind) {
      case Kind::kDevice:
      case Kind::kHost:
        // Faults are retried: only a device lost on every retry fails one.
        EXPECT_TRUE(s == ACCEL_SUCCESS || s == ACCEL_ERROR_DEVICE_LOST) << what;
        if (s == ACCEL_ERROR_DEVICE_LOST) ++lost_failures;
        break;
      case Kind::kFragile:
        EXPECT_TRUE(s == ACCEL_SUCCESS || s == ACCEL_ERROR_RESOURCE_EXHAUSTED || s == ACCEL_ERROR_DEVICE_LOST) << what;
        if (s == ACCEL_ERROR_RESOURCE_EXHAUSTED) {
          EXPECT_NE(message.find("by injection"), std::string::npos) << what;
        }
        if (s == ACCEL_ERROR_DEVICE_LOST) {
          EXPECT_NE(message.find("lost"), std::string::npos) << what;
        }
        break;
      case Kind::kOnPurpose:
        EXPECT_EQ(s, ACCEL_ERROR_FAILED_PRECONDITION) << what;
        EXPECT_NE(message.find("fails on purpose"), std::string::npos) << what;
        break;
      case Kind::kAfterFail:
        EXPECT_EQ(s, ACCEL_ERROR_FAILED_PRECONDITION) << what;
        EXPECT_NE(message.find("dependency"), std::string::npos) << what;
        break;
      case Kind::kCancelled: EXPECT_TRUE(s == ACCEL_ERROR_CANCELLED || s == ACCEL_SUCCESS) << what; break;
    }
    if (MakesAResult(kind) && s == ACCEL_SUCCESS) {
      EXPECT_EQ(accel_future_get_object(futures[i], &results[i]), ACCEL_SUCCESS) << what << accel_last_error();
    }
    EXPECT_EQ(accel_future_release(futures[i]), ACCEL_SUCCESS);
  }
  EXPECT_EQ(chaos.unexpected.load(), 0U) << chaos.first_unexpected;

  // The runtime's counters add up against what the futures said.
  const auto counters = [&] {
    accel_runtime_counters_t c{};
    c.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS;
    c.struct_size = sizeof(c);
    EXPECT_EQ(accel_runtime_get_counters(rt, &c), ACCEL_SUCCESS) << accel_last_error();
    return c;
  };
  const accel_runtime_counters_t after_tasks = counters();
  EXPECT_EQ(after_tasks.submitted, submitted);
  EXPECT_EQ(after_tasks.finished + after_tasks.failed + after_tasks.cancelled, after_tasks.submitted);
  EXPECT_EQ(after_tasks.finished, by_status[ACCEL_SUCCESS]);
  EXPECT_EQ(after_tasks.cancelled, by_status[ACCEL_ERROR_CANCELLED]);
  EXPECT_EQ(after_tasks.pending, 0U);
  EXPECT_EQ(after_tasks.running, 0U);
  if (task_count >= 1000) {  // shorter runs may end before a device reaches its operation count
    EXPECT_EQ(after_tasks.devices_lost, 2U) << "gpu2 and gpu5";
    EXPECT_EQ(log.devices_lost.load(), 2U);
  }

  // The live objects: every input, every result.
  std::vector<accel_object_t> live;
  for (accel_object_t o : inputs) live.push_back(o);
  for (accel_object_t o : results) {
    if (o != nullptr) live.push_back(o);
  }
  ExpectStoreMatchesObjects(rt, device_count, live, "after the tasks");

  const auto tasks_done = std::chrono::steady_clock::now();
  // Every object reads back exactly: on the host, and every 16th also on a device still in service. A result whose
  // copies were all on a lost device is made again by its task (lineage).
  std::vector<bool> lost(device_count, false);
  for (uint32_t d = 0; d < device_count; ++d) {
    accel_runtime_device_t rdv{};
    rdv.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE;
    rdv.struct_size = sizeof(rdv);
    EXPECT_EQ(accel_runtime_get_device(rt, d, &rdv), ACCEL_SUCCESS);
    lost[d] = rdv.lost != 0;
  }
  // Four reader threads, each taking every 4th task.
  std::atomic<uint64_t> read_back{0}, bytes_read{0}, mismatches{0}, device_reads{0};
  GetRetries get_retries;
  std::mutex retries_mutex;
  const uint64_t runs_before = chaos.runs.load();
  const auto reader = [&](uint32_t first, uint32_t step) {
    GetRetries mine;
    for (uint32_t i = first; i < task_count && mismatches.load() <= 10; i += step) {
      const std::vector<uint8_t> input = Pattern(SizeOf(i), i);
      const std::vector<uint8_t> expected = Transform(input, i);
      for (int which = 0; which < 2; ++which) {
        accel_object_t o = which == 0 ? inputs[i] : results[i];
        if (o == nullptr) continue;
        const std::vector<uint8_t>& want = which == 0 ? input : expected;
        std::string error;
        bool target_lost = false;
        std::vector<uint8_t> got = ReadBack(o, kHost, &mine, &error, &target_lost);
        ++read_back;
        bytes_read += got.size();
        if (got != want) {
          ++mismatches;
          ADD_FAILURE() << (which == 0 ? "input " : "result ") << i << " reads back wrong (" << got.size() << " of "
                        << want.size() << " bytes): " << error;
        }
        const auto d = static_cast<uint32_t>((i / 16 + which) % device_count);
        if (i % 16 == 0 && !lost[d]) {
          got = ReadBack(o, static_cast<int32_t>(d), &mine, &error, &target_lost);
          ++device_reads;
          if (!target_lost && got != want) {
            ++mismatches;
            ADD_FAILURE() << (which == 0 ? "input " : "result ") << i << " reads back wrong on device " << d << ": "
                          << error;
          }
        }
      }
    }
    std::lock_guard lock(retries_mutex);
    get_retries.rerun_failed += mine.rerun_failed;
    get_retries.no_room += mine.no_room;
    get_retries.target_lost += mine.target_lost;
    get_retries.other += mine.other;
  };
  {
    constexpr uint32_t kReaders = 4;
    std::vector<std::thread> readers;
    for (uint32_t t = 0; t < kReaders; ++t) readers.emplace_back(reader, t, kReaders);
    for (std::thread& t : readers) t.join();
  }
  const accel_runtime_counters_t after_reads = counters();
  // Each re-run is a task; one fails only on an injected fault (a fragile task's allocation), and the get that
  // ran it says so and is repeated.
  const uint64_t reruns = after_reads.submitted - after_tasks.submitted;
  EXPECT_EQ(after_reads.started - after_tasks.started, chaos.runs.load() - runs_before);
  EXPECT_EQ(after_reads.failed - after_tasks.failed, get_retries.rerun_failed);
  EXPECT_EQ(after_reads.finished - after_tasks.finished + get_retries.rerun_failed, reruns);
  EXPECT_EQ(get_retries.other, 0U);
  EXPECT_EQ(after_reads.finished + after_reads.failed + after_reads.cancelled, after_reads.submitted);
  EXPECT_EQ(after_reads.pending + after_reads.running, 0U);
  ExpectStoreMatchesObjects(rt, device_count, live, "after the reads");
  const StoreFigures store = Usage(rt, device_count);

  // Release everything: the store is empty, every device in service has all its memory free.
  for (accel_object_t o : live) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
  const StoreFigures empty = Usage(rt, device_count);
  EXPECT_EQ(empty.host_replicas + empty.device_replicas, 0U);
  EXPECT_EQ(empty.host_used + empty.device_used, 0U);
  EXPECT_EQ(chaos.given_back.load(), chaos.adopted_host.load()) << "adopted host memory given back once each";
  for (uint32_t d = 0; d < device_count; ++d) {
    uint64_t free = 0, total = 0;
    const accel_status_t s = accel_device_get_memory_info(StoreDevice(chaos.devices[d]), &free, &total);
    if (lost[d] || ((d == 2 || d == 5) && s == ACCEL_ERROR_DEVICE_LOST)) {  // gpu2 and gpu5 may be lost
      EXPECT_EQ(s, ACCEL_ERROR_DEVICE_LOST);
    } else {
      EXPECT_EQ(s, ACCEL_SUCCESS) << accel_last_error();
      EXPECT_EQ(free, total) << "device " << d << " holds nothing";
    }
  }
  // The runtime hands out every device in service whole again.
  for (uint32_t d = 0; d < device_count; ++d) {
    accel_runtime_device_t rdv{};
    rdv.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE;
    rdv.struct_size = sizeof(rdv);
    EXPECT_EQ(accel_runtime_get_device(rt, d, &rdv), ACCEL_SUCCESS);
    if (rdv.lost == 0) {
      EXPECT_EQ(rdv.share_free, 1.0) << "device " << d;
      EXPECT_EQ(rdv.memory_free, rdv.memory_total) << "device " << d;
    }
  }
  EXPECT_EQ(accel_runtime_destroy(rt), ACCEL_SUCCESS) << accel_last_error();
  for (accel_stream_t stream : chaos.all_streams) accel_stream_destroy(stream);  // lost devices' ones fail; still go
  EXPECT_EQ(chaos.released.load(), submitted) << "every task's user data released once";

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double task_seconds = std::chrono::duration<double>(tasks_done - start).count();
  std::printf(
      "chaos figures: %u tasks (seed %llu, ACCEL_SIM_FAULTS=%s) in %.1f s (%.1f s to the tasks' end)\n"
      "  ended: %llu finished, %llu failed (%llu device lost, %llu resource exhausted, %llu failed precondition), "
      "%llu cancelled\n"
      "  faults injected: %llu allocation failures, %llu slowed copies, %llu devices lost\n"
      "  recovered: %llu task retries after a device loss (runtime), %llu calls repeated in tasks after an injected "
      "allocation failure, %llu lineage re-runs (%llu failed by injection), %llu gets repeated (%llu after a failed "
      "re-run, %llu for no room by injection), %llu device reads ended by their device's loss\n"
      "  objects read back: %llu (%llu bytes, %llu more on devices), %llu wrong\n"
      "  store: %llu transfers in, %llu evicted, %llu moved out; %llu host replicas, %llu device replicas before "
      "the release\n",
      task_count, static_cast<unsigned long long>(seed), faults.c_str(), seconds, task_seconds,
      static_cast<unsigned long long>(after_tasks.finished), static_cast<unsigned long long>(after_tasks.failed),
      static_cast<unsigned long long>(by_status[ACCEL_ERROR_DEVICE_LOST]),
      static_cast<unsigned long long>(by_status[ACCEL_ERROR_RESOURCE_EXHAUSTED]),
      static_cast<unsigned long long>(by_status[ACCEL_ERROR_FAILED_PRECONDITION]),
      static_cast<unsigned long long>(after_tasks.cancelled), static_cast<unsigned long long>(log.allocations.load()),
      static_cast<unsigned long long>(log.slow_copies.load()), static_cast<unsigned long long>(log.devices_lost.load()),
      static_cast<unsigned long long>(after_tasks.retried), static_cast<unsigned long long>(chaos.op_retries.load()),
      static_cast<unsigned long long>(reruns), static_cast<unsigned long long>(after_reads.failed - after_tasks.failed),
      static_cast<unsigned long long>(get_retries.rerun_failed + get_retries.no_room),
      static_cast<unsigned long long>(get_retries.rerun_failed), static_cast<unsigned long long>(get_retries.no_room),
      static_cast<unsigned long long>(get_retries.target_lost), static_cast<unsigned long long>(read_back.load()),
      static_cast<unsigned long long>(bytes_read.load()), static_cast<unsigned long long>(device_reads.load()),
      static_cast<unsigned long long>(mismatches.load()), static_cast<unsigned long long>(store.transfers_in),
      static_cast<unsigned long long>(store.evicted), static_cast<unsigned long long>(store.moved_out),
      static_cast<unsigned long long>(store.host_replicas), static_cast<unsigned long long>(store.device_replicas));
  EXPECT_GT(log.allocations.load(), 0U);
  EXPECT_GT(log.slow_copies.load(), 0U);
  EXPECT_EQ(lost_failures, 0U) << "3 retries outlast 2 lost devices";
}

}  // namespace
