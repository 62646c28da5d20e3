// The scheduler behind accel_runtime_t (docs/scheduler.md): tasks with
// dependencies, placed all-or-nothing by the planner on the instance's
// physical devices, run on worker threads under a libaccel tenant, retried on
// device loss; placement groups reserved atomically.
// Thread-safe: every member takes `mutex_` (taken before the handle table's);
// task functions run without it.
#ifndef ACCEL_RUNTIME_RUNTIME_H_
#define ACCEL_RUNTIME_RUNTIME_H_

#include <accel/runtime.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "planner.h"
#include "resources.h"

namespace accel::runtime {

class Runtime;
struct PlacementGroup;

// A validated request. Plain value.
struct Request {
  uint32_t device_count = 0;
  double share = 1.0;
  uint64_t memory = 0;  // per device, resolved (never 0 when device_count > 0 and share > 0)
  std::string selector;
  std::shared_ptr<PlacementGroup> group;
  uint32_t bundle = 0;
};

enum class TaskState : unsigned char { kWaiting, kPending, kRunning, kDone };

// One submitted task and its future. Fields under the runtime's mutex except
// where noted.
struct Task {
  uint64_t id = 0;
  const Runtime* owner = nullptr;
  std::string name;  // "task 7 ('load')"
  accel_task_function_t function = nullptr;
  void* user_data = nullptr;
  void (*release_user_data)(void*) = nullptr;
  Request request;
  std::vector<std::shared_ptr<Task>> dependencies;
  uint32_t max_retries = 0;
  uint32_t attempt = 0;

  TaskState state = TaskState::kWaiting;
  accel_status_t result = ACCEL_NOT_READY;
  std::string message;  // the error when done; why it waits otherwise
  std::atomic<bool> cancel_requested{false};

  // While placed: ranks, what each holds, the planner's placement (0 none).
  std::vector<uint32_t> ranks;
  std::vector<int64_t> shares;
  std::vector<uint64_t> memory;
  uint64_t placement = 0;
  accel_tenant_t tenant = nullptr;

  // Completion, for futures that outlive the runtime.
  std::mutex done_mutex;
  std::condition_variable done_cv;
  bool done = false;  // under done_mutex; mirrors state == kDone
  accel_status_t final_result = ACCEL_NOT_READY;
  std::string final_message;
};

// A reserved placement group. Fields under the runtime's mutex.
struct PlacementGroup {
  std::string name;
  uint64_t placement = 0;  // the planner's id
  bool destroyed = false;
  uint32_t running = 0;  // tasks running inside it
  struct Slot {
    uint32_t bundle = 0;
    uint32_t rank = 0;
    int64_t share = 0;       // held
    uint64_t memory = 0;     // held
    int64_t share_free = 0;  // left for tasks inside
    uint64_t memory_free = 0;
  };
  std::vector<Slot> slots;  // by rank, then bundle
  uint32_t bundle_count = 0;
  std::weak_ptr<Runtime> runtime;
};

class Runtime : public std::enable_shared_from_this<Runtime> {
 public:
  static planner::Expected<std::shared_ptr<Runtime>> Create(accel_instance_t instance, uint32_t workers);
  ~Runtime();

  // Cancels what has not started, waits for what runs, stops the workers.
  void Shutdown();

  // Queues a prepared task (function, request, dependencies set), or says
  // why it can never run.
  accel_status_t Submit(const std::shared_ptr<Task>& task, std::string* why);
  void Cancel(const std::shared_ptr<Task>& task);

  accel_status_t CreateGroup(const accel_placement_group_desc_t& desc, std::shared_ptr<PlacementGroup>* out,
                             std::string* why);
  void DestroyGroup(const std::shared_ptr<PlacementGroup>& group);

  // Why `task` waits ("capacity: ...", "waiting for dependency 0 (...)"), "" when it does not.
  std::string Explain(const Task& task) const;
  accel_runtime_counters_t Counters() const;
  size_t device_count() const { return resources_.devices.size(); }
  accel_runtime_device_t Device(uint32_t rank) const;
  const Resources& resources() const { return resources_; }

  // Validates a request struct into `out`; errors name `field` ("request->share").
  accel_status_t ReadRequest(const accel_resource_request_t* in, const std::string& field, bool in_group, Request* out,
                             std::string* why) const;

  // True on a worker thread of this runtime.
  bool OnWorker() const;

 private:
  Runtime(accel_instance_t instance, Resources resources);
  void WorkerLoop();
  // Tries to start every waiting and pending task, in submission order.
  void Schedule(std::unique_lock<std::mutex>& lock);
  // Places `task` or sets its message to why not. True when placed.
  bool TryPlace(Task& task);
  void Run(const std::shared_ptr<Task>& task);
  void ReleasePlacement(Task& task);
  void Finish(const std::shared_ptr<Task>& task, accel_status_t result, std::string message);
  // Calls release_user_data of the tasks Finish ended, without the lock.
  void FlushReleases();
  // Whether the request could ever be placed on the devices not lost; the reason when not.
  accel_status_t Feasible(const Request& request, std::string* why) const;
  planner::Gang GangOf(const Request& request) const;

  accel_instance_t instance_;
  Resources resources_;
  planner::Planner planner_;

  mutable std::mutex mutex_;
  std::condition_variable work_cv_;
  std::deque<std::shared_ptr<Task>> queue_;  // waiting and pending, submission order
  std::deque<std::shared_ptr<Task>> ready_;  // placed, for a worker
  std::vector<std::thread> workers_;
  bool stopping_ = false;
  uint64_t next_task_ = 1;
  uint32_t busy_ = 0;
  std::vector<std::shared_ptr<Task>> to_release_;
  accel_runtime_counters_t counters_{};
};

// The task running on this thread (null outside a task function): what
// accel_task_context_t handles resolve to.
Task* CurrentTask();

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_RUNTIME_H_
