// `accel-info serve --demo`: a small continuous workload so that the
// dashboard's figures move (serve.h, docs/dashboard.md). Each lane, on its own
// thread bound to its tenant, allocates a buffer of 1 to 8 MiB every step,
// fills it and copies part of it back on its stream, keeps the last six (the
// oldest freed in stream order), and keeps up to four tasks in its queue,
// each holding 16 MiB on the device the scheduler gave it for a while.
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <deque>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "report.h"
#include "serve.h"

namespace accel::info::serve {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr size_t kKeptBuffers = 6;
constexpr size_t kTasksPerLane = 4;
constexpr auto kStep = std::chrono::milliseconds(150);
constexpr auto kTaskHold = std::chrono::milliseconds(400);

// A task of the demo: holds a 16 MiB buffer on its device for kTaskHold, or
// until it is cancelled.
accel_status_t HoldMemory(accel_task_context_t context, void* /*user_data*/) {
  accel_device_t device = nullptr;
  accel_status_t status = accel_task_context_get_device(context, 0, &device);
  if (status != ACCEL_SUCCESS) return status;
  accel_buffer_desc_t desc{
      ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), nullptr, 16 * kMiB, ACCEL_MEMORY_KIND_DEVICE, 0, 0};
  accel_buffer_t buffer = nullptr;
  status = accel_buffer_create(device, &desc, &buffer);
  if (status != ACCEL_SUCCESS) return status;
  const auto until = std::chrono::steady_clock::now() + kTaskHold;
  uint32_t cancelled = 0;
  while (std::chrono::steady_clock::now() < until && cancelled == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    accel_task_context_is_cancelled(context, &cancelled);
  }
  accel_buffer_destroy(buffer);
  return ACCEL_SUCCESS;
}

}  // namespace

struct Demo::Lane {
  std::string name;
  accel_device_t device = nullptr;
  accel_queue_t queue = nullptr;
  accel_tenant_t tenant = nullptr;
  accel_stream_t stream = nullptr;
  std::deque<accel_buffer_t> buffers;
  std::deque<accel_future_t> tasks;
  std::array<uint8_t, 4096> readback{};
};

Demo::Demo(accel_instance_t instance, accel_runtime_t runtime, Watch& watch) : watch_(watch), runtime_(runtime) {
  uint32_t count = 0;
  Check(accel_instance_enumerate_physical_devices(instance, &count, nullptr),
        "accel_instance_enumerate_physical_devices");
  std::vector<accel_physical_device_t> physical(count);
  Check(accel_instance_enumerate_physical_devices(instance, &count, physical.data()),
        "accel_instance_enumerate_physical_devices");
  if (count == 0) {
    throw std::runtime_error(
        "--demo needs at least one device; none is visible (try ACCEL_BACKENDS=sim ACCEL_SIM_PROFILE=h100-sxm-8)");
  }
  try {
    for (uint32_t k = 0; k < 2; ++k) {
      // In lanes_ before anything is made for it: a failure below finds what this lane made in the catch.
      lanes_.push_back(std::make_unique<Lane>());
      Lane* lane = lanes_.back().get();
      lane->name = fmt::format("demo-{}", static_cast<char>('a' + k));
      accel_physical_device_t pd = physical[k % count];
      uint32_t paths = 1;
      Check(accel_physical_device_enumerate_devices(pd, &paths, &lane->device),
            "accel_physical_device_enumerate_devices");

      accel_queue_desc_t queue{
          ACCEL_STRUCTURE_TYPE_QUEUE_DESC, sizeof(queue), nullptr, lane->name.c_str(), nullptr, 0.5, 0, 0, 0, 1};
      Check(accel_queue_create(runtime, &queue, &lane->queue), "accel_queue_create");
      const accel_tenant_limit_t limit{pd, 256 * kMiB};
      accel_tenant_desc_t tenant{
          ACCEL_STRUCTURE_TYPE_TENANT_DESC, sizeof(tenant), nullptr, lane->name.c_str(), &limit, 1, 0, 0};
      Check(accel_tenant_create(instance, &tenant, &lane->tenant), "accel_tenant_create");
      Check(accel_stream_create(lane->device, nullptr, &lane->stream), "accel_stream_create");
    }
  } catch (...) {
    for (auto& lane : lanes_) {
      if (lane->stream != nullptr) accel_stream_destroy(lane->stream);
      if (lane->tenant != nullptr) accel_tenant_destroy(lane->tenant);
      if (lane->queue != nullptr) accel_queue_destroy(lane->queue);
    }
    throw;
  }
  for (auto& lane : lanes_) {
    watch_.AddTenant(lane->name, lane->tenant);
    watch_.AddQueue(lane->name, lane->queue);
    watch_.AddStream(lane->name, lane->stream);
  }
  for (auto& lane : lanes_) threads_.emplace_back([this, &lane] { Run(*lane); });
}

Demo::~Demo() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
  watch_.RemovePrefix("demo-");
  for (auto& lane : lanes_) {
    accel_stream_destroy(lane->stream);
    accel_tenant_destroy(lane->tenant);
    accel_queue_destroy(lane->queue);
  }
}

void Demo::Run(Lane& lane) {
  // Every device allocation of this thread counts against the lane's tenant.
  accel_thread_set_tenant(lane.tenant, nullptr);
  for (uint64_t step = 0;; ++step) {
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_for(lock, kStep, [this] { return stopping_; })) break;
    }
    const uint64_t size = (1 + step % 8) * kMiB;
    accel_buffer_desc_t desc{
        ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), nullptr, size, ACCEL_MEMORY_KIND_DEVICE, 0, 0};
    accel_buffer_t buffer = nullptr;
    // A refusal (the tenant's limit) only skips this step's buffer.
    if (accel_buffer_create(lane.device, &desc, &buffer) == ACCEL_SUCCESS) {
      const auto pattern = static_cast<uint32_t>(step);
      accel_stream_fill_buffer(lane.stream, buffer, 0, size, &pattern, sizeof(pattern));
      accel_stream_copy_buffer_to_host(lane.stream, buffer, 0, lane.readback.data(), lane.readback.size());
      lane.buffers.push_back(buffer);
      if (lane.buffers.size() > kKeptBuffers) {
        accel_stream_free_buffer(lane.stream, lane.buffers.front());
        lane.buffers.pop_front();
      }
    }
    // The readback's host memory must outlive the copy.
    accel_stream_synchronize(lane.stream, ACCEL_TIMEOUT_INFINITE);
    accel_stream_clear_error(lane.stream);

    while (!lane.tasks.empty() && accel_future_query(lane.tasks.front()) != ACCEL_NOT_READY) {
      accel_future_release(lane.tasks.front());
      lane.tasks.pop_front();
    }
    if (lane.tasks.size() < kTasksPerLane) {
      accel_resource_request_t request{};
      request.stype = ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST;
      request.struct_size = sizeof(request);
      request.device_count = 1;
      request.share = 0.25;
      request.memory = 64 * kMiB;
      const std::string name = fmt::format("{} task {}", lane.name, step);
      accel_task_desc_t task{};
      task.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
      task.struct_size = sizeof(task);
      task.name = name.c_str();
      task.function = HoldMemory;
      task.request = &request;
      task.queue = lane.queue;
      accel_future_t future = nullptr;
      if (accel_task_submit(runtime_, &task, &future) == ACCEL_SUCCESS) lane.tasks.push_back(future);
    }
  }
  accel_stream_synchronize(lane.stream, ACCEL_TIMEOUT_INFINITE);
  for (accel_buffer_t buffer : lane.buffers) accel_buffer_destroy(buffer);
  lane.buffers.clear();
  for (accel_future_t future : lane.tasks) accel_future_cancel(future);
  for (accel_future_t future : lane.tasks) {
    accel_future_wait(future, ACCEL_TIMEOUT_INFINITE);
    accel_future_release(future);
  }
  lane.tasks.clear();
  accel_thread_set_tenant(nullptr, nullptr);
}

}  // namespace accel::info::serve
