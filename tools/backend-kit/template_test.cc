// The in-tree template backend through the public C API: its device, capacity
// accounting, copies and maps, stream order, host callbacks, sticky
// asynchronous errors, events (waits across streams, timing), timeouts and
// stream-ordered free. Usage: backend_kit_template_test (the manifest comes
// from ACCEL_BACKEND_FILES, which ctest sets to the in-tree template's).
// The conformance suite (accel-conformance) is the full check; this is the
// quick one that needs nothing but libaccel.
#include <accel/accel.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

int g_failures = 0;

#define CHECK(condition)                                                                                 \
  do {                                                                                                   \
    if (!(condition)) {                                                                                  \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, #condition, \
                   accel_last_error());                                                                  \
      ++g_failures;                                                                                      \
    }                                                                                                    \
  } while (0)
#define CHECK_STATUS(expr, expected) CHECK((expr) == (expected))
#define CHECK_OK(expr) CHECK_STATUS(expr, ACCEL_SUCCESS)

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kOneMillisecond = 1000000;

bool Contains(const char* text, const char* part) { return text != nullptr && std::strstr(text, part) != nullptr; }

// A host callback that blocks its stream until Open().
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  static accel_status_t Callback(void* user_data, accel_status_t /*status*/) {
    auto* gate = static_cast<Gate*>(user_data);
    std::unique_lock lock(gate->mutex);
    gate->cv.wait(lock, [gate] { return gate->open; });
    return ACCEL_SUCCESS;
  }
  void Open() {
    {
      std::lock_guard lock(mutex);
      open = true;
    }
    cv.notify_all();
  }
};

// Records each call's status; returns `result`.
struct Probe {
  std::vector<accel_status_t> calls;
  accel_status_t result = ACCEL_SUCCESS;
  static accel_status_t Callback(void* user_data, accel_status_t status) {
    auto* probe = static_cast<Probe*>(user_data);
    probe->calls.push_back(status);
    return probe->result;
  }
};

accel_buffer_t Create(accel_device_t device, uint64_t size, accel_status_t* status = nullptr) {
  accel_buffer_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
  desc.struct_size = sizeof(desc);
  desc.size = size;
  desc.memory_kind = ACCEL_MEMORY_KIND_DEVICE;
  accel_buffer_t buffer = nullptr;
  const accel_status_t s = accel_buffer_create(device, &desc, &buffer);
  if (status != nullptr) *status = s;
  return buffer;
}

uint64_t FreeMemory(accel_device_t device) {
  uint64_t free_bytes = 0;
  CHECK_OK(accel_device_get_memory_info(device, &free_bytes, nullptr));
  return free_bytes;
}

void CheckDevice(accel_device_t device) {
  accel_device_capabilities_t caps{};
  caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  caps.struct_size = sizeof(caps);
  CHECK_OK(accel_device_get_capabilities(device, &caps));
  CHECK(std::string(caps.name) == "Template device");
  CHECK(std::string(caps.backend_name) == "template");
  CHECK(caps.kind == ACCEL_DEVICE_KIND_CPU);
  CHECK(caps.memory_total == 1024 * kMiB);
  CHECK(caps.kernel_formats == 0);
  CHECK(caps.features == (ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY | ACCEL_DEVICE_FEATURE_EVENT_TIMING));
  CHECK(FreeMemory(device) == caps.memory_total);
}

void CheckCapacity(accel_device_t device) {
  accel_buffer_t big = Create(device, 768 * kMiB);
  CHECK(big != nullptr);
  CHECK(FreeMemory(device) == 256 * kMiB);
  accel_status_t status = ACCEL_SUCCESS;
  CHECK(Create(device, 512 * kMiB, &status) == nullptr);
  CHECK(status == ACCEL_ERROR_RESOURCE_EXHAUSTED);
  CHECK(Contains(accel_last_error(), "bytes free of"));
  CHECK_OK(accel_buffer_destroy(big));
  CHECK(FreeMemory(device) == 1024 * kMiB);
}

void CheckCopies(accel_device_t device, accel_stream_t stream) {
  accel_buffer_t a = Create(device, 64);
  accel_buffer_t b = Create(device, 64);
  std::vector<uint8_t> data(64), back(64, 0);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  const uint32_t pattern = 0xA1B2C3D4u;
  CHECK_OK(accel_stream_copy_host_to_buffer(stream, data.data(), a, 0, 64));
  CHECK_OK(accel_stream_fill_buffer(stream, a, 32, 16, &pattern, 4));
  CHECK_OK(accel_stream_copy_buffer(stream, a, 0, b, 0, 64));
  CHECK_OK(accel_stream_copy_buffer_to_host(stream, b, 0, back.data(), 64));
  CHECK_OK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  for (size_t i = 0; i < 32; ++i) CHECK(back[i] == data[i]);
  for (size_t i = 32; i < 48; i += 4) CHECK(std::memcmp(&back[i], &pattern, 4) == 0);
  void* mapped = nullptr;
  CHECK_OK(accel_buffer_map(b, 8, 8, ACCEL_MAP_READ | ACCEL_MAP_WRITE, &mapped));
  CHECK(mapped != nullptr && std::memcmp(mapped, &data[8], 8) == 0);
  CHECK_OK(accel_buffer_unmap(b));
  accel_copy_statistics_t stats{};
  stats.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
  stats.struct_size = sizeof(stats);
  CHECK_OK(accel_stream_get_copy_statistics(stream, &stats));
  CHECK(stats.host_to_device_copies == 1 && stats.device_to_host_copies == 1 && stats.local_copies == 1);
  CHECK(stats.local_bytes == 64);
  CHECK_OK(accel_buffer_destroy(a));
  CHECK_OK(accel_buffer_destroy(b));
}

void CheckOrderAndTimeout(accel_stream_t stream) {
  Gate gate;
  Probe probe;
  CHECK_OK(accel_stream_enqueue_host_callback(stream, Gate::Callback, &gate));
  CHECK_OK(accel_stream_enqueue_host_callback(stream, Probe::Callback, &probe));
  CHECK_STATUS(accel_stream_query(stream), ACCEL_NOT_READY);
  CHECK_STATUS(accel_stream_synchronize(stream, kOneMillisecond), ACCEL_ERROR_TIMEOUT);
  CHECK(Contains(accel_last_error(), "pending after 1000000 ns"));
  gate.Open();
  CHECK_OK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  CHECK(probe.calls == std::vector<accel_status_t>{ACCEL_SUCCESS});
  CHECK_OK(accel_stream_query(stream));
}

void CheckStickyErrors(accel_device_t device, accel_stream_t stream, accel_stream_t other) {
  Probe failing;
  failing.result = ACCEL_ERROR_DEVICE_LOST;
  Probe skipped;
  accel_event_t event = nullptr;
  CHECK_OK(accel_event_create(device, nullptr, &event));
  CHECK_OK(accel_stream_enqueue_host_callback(stream, Probe::Callback, &failing));
  CHECK_OK(accel_stream_enqueue_host_callback(stream, Probe::Callback, &skipped));
  CHECK_OK(accel_stream_record_event(stream, event));
  CHECK_OK(accel_stream_wait_event(other, event));  // the error passes to the waiting stream
  CHECK_STATUS(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_DEVICE_LOST);
  CHECK(Contains(accel_last_error(), "(host callback) returned -10"));
  CHECK(skipped.calls == std::vector<accel_status_t>{ACCEL_ERROR_DEVICE_LOST});
  CHECK_STATUS(accel_event_query(event), ACCEL_ERROR_DEVICE_LOST);
  CHECK(Contains(accel_last_error(), "recorded after an asynchronous error"));
  CHECK_STATUS(accel_stream_synchronize(other, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_DEVICE_LOST);
  CHECK_OK(accel_stream_clear_error(stream));
  CHECK_OK(accel_stream_clear_error(other));
  CHECK_OK(accel_stream_query(stream));
  Probe after;
  CHECK_OK(accel_stream_enqueue_host_callback(stream, Probe::Callback, &after));
  CHECK_OK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  CHECK(after.calls == std::vector<accel_status_t>{ACCEL_SUCCESS});
  CHECK_OK(accel_event_destroy(event));
}

void CheckEvents(accel_device_t device, accel_stream_t stream, accel_stream_t other) {
  accel_event_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_EVENT_DESC;
  desc.struct_size = sizeof(desc);
  desc.flags = ACCEL_EVENT_FLAG_TIMING;
  accel_event_t start = nullptr, end = nullptr, plain = nullptr;
  CHECK_OK(accel_event_create(device, &desc, &start));
  CHECK_OK(accel_event_create(device, &desc, &end));
  CHECK_OK(accel_event_create(device, nullptr, &plain));
  CHECK_OK(accel_event_query(plain));  // never recorded: complete

  Gate gate;
  Probe waiter;
  CHECK_OK(accel_stream_record_event(stream, start));
  CHECK_OK(accel_stream_enqueue_host_callback(stream, Gate::Callback, &gate));
  CHECK_OK(accel_stream_record_event(stream, end));
  CHECK_OK(accel_stream_wait_event(other, end));
  CHECK_OK(accel_stream_enqueue_host_callback(other, Probe::Callback, &waiter));
  uint64_t elapsed = 0;
  CHECK_STATUS(accel_event_elapsed_time(start, end, &elapsed), ACCEL_NOT_READY);
  CHECK_STATUS(accel_event_synchronize(end, kOneMillisecond), ACCEL_ERROR_TIMEOUT);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(waiter.calls.empty());  // `other` waits for `end`
  gate.Open();
  CHECK_OK(accel_event_synchronize(end, ACCEL_TIMEOUT_INFINITE));
  CHECK_OK(accel_stream_synchronize(other, ACCEL_TIMEOUT_INFINITE));
  CHECK(waiter.calls == std::vector<accel_status_t>{ACCEL_SUCCESS});
  CHECK_OK(accel_event_elapsed_time(start, end, &elapsed));
  CHECK(elapsed >= 20 * kOneMillisecond);
  CHECK_OK(accel_stream_record_event(stream, plain));
  CHECK_OK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  CHECK_STATUS(accel_event_elapsed_time(start, plain, &elapsed), ACCEL_ERROR_FAILED_PRECONDITION);
  CHECK(Contains(accel_last_error(), "created without ACCEL_EVENT_FLAG_TIMING"));
  for (accel_event_t e : {start, end, plain}) CHECK_OK(accel_event_destroy(e));
}

void CheckStreamOrderedFree(accel_device_t device, accel_stream_t stream) {
  accel_buffer_t buffer = Create(device, 64 * kMiB);
  Gate gate;
  CHECK_OK(accel_stream_enqueue_host_callback(stream, Gate::Callback, &gate));
  CHECK_OK(accel_stream_fill_buffer(stream, buffer, 0, 64 * kMiB, "\x5a", 1));
  CHECK_OK(accel_stream_free_buffer(stream, buffer));
  CHECK(FreeMemory(device) == 960 * kMiB);  // still in use by the queued fill
  gate.Open();
  CHECK_OK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  CHECK(FreeMemory(device) == 1024 * kMiB);
}

}  // namespace

int main() {
  accel_instance_t instance = nullptr;
  if (accel_instance_create(nullptr, &instance) != ACCEL_SUCCESS) {
    std::fprintf(stderr, "accel_instance_create: %s\n", accel_last_error());
    return 1;
  }
  uint32_t count = 1;
  accel_device_t device = nullptr;
  if (accel_instance_enumerate_devices(instance, &count, &device) != ACCEL_SUCCESS || count != 1) {
    std::fprintf(stderr, "expected the template's one device (ACCEL_BACKEND_FILES), found %u: %s\n", count,
                 accel_last_error());
    return 1;
  }
  accel_stream_t stream = nullptr, other = nullptr;
  CHECK_OK(accel_stream_create(device, nullptr, &stream));
  CHECK_OK(accel_stream_create(device, nullptr, &other));
  CheckDevice(device);
  CheckCapacity(device);
  CheckCopies(device, stream);
  CheckOrderAndTimeout(stream);
  CheckStickyErrors(device, stream, other);
  CheckEvents(device, stream, other);
  CheckStreamOrderedFree(device, stream);
  CHECK_OK(accel_stream_destroy(stream));
  CHECK_OK(accel_stream_destroy(other));
  CHECK_OK(accel_instance_destroy(instance));
  if (g_failures != 0) {
    std::fprintf(stderr, "FAIL: %d checks failed\n", g_failures);
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}
