// The scheduler behind accel_runtime_t (docs/scheduler.md): tasks with
// dependencies, placed all-or-nothing by the planner on the instance's
// physical devices in queue order (quota, limit, weighted dominant-resource
// fair share, priority), run on worker threads under a libaccel tenant,
// retried on device loss, preempted to give a queue its quota; actors with
// ordered calls on one reservation; placement groups reserved atomically.
// Thread-safe: every member takes `mutex_` (taken before the handle table's
// and before `ready_mutex_`) except the direct path, which takes only
// `ready_mutex_` and atomics; task functions run without either.
#ifndef ACCEL_RUNTIME_RUNTIME_H_
#define ACCEL_RUNTIME_RUNTIME_H_

#include <accel/runtime.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "block_cache.h"
#include "event_log.h"
#include "light_lane.h"
#include "object_store.h"
#include "planner.h"
#include "pointer_ring.h"
#include "resources.h"
#include "spin_lock.h"

namespace accel::runtime {

class Runtime;
struct PlacementGroup;
struct Queue;
struct Actor;

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

// What a Task object is: a submitted task, an actor's call, or the internal
// work that places an actor and runs its init (kActorInit) or finalize.
enum class TaskKind : unsigned char { kTask, kActorCall, kActorInit, kActorFinalize };

// A task group (1.4; docs/scheduler.md, "Task groups"): counts its tasks that have not ended, keeps the first
// failure, and is cancelled as a whole. Its tasks each hold a reference.
//
//   group->Add();  task->task_group = group;  // at submission
//   group->End(result, message);              // at the task's end (Runtime::Publish)
//
// Its counts are kept per thread slot, a cache line each, so that a client that submits and the workers that end
// its tasks write no common line; Open() adds them up.
//
// Thread-safe: the counts, `waiters`, `cancelled` and `runtime_gone` are atomics; the failures are under `mutex`.
struct TaskGroup : std::enable_shared_from_this<TaskGroup> {
  static constexpr size_t kCountShards = 8;
  // Light tasks (docs/scheduler.md, "Light group tasks"): one lane per thread slot below kLightSlots, made by
  // that slot's thread at its first light submission, freed with the group.
  static constexpr size_t kLightSlots = 16;
  struct alignas(64) Counts {
    std::atomic<uint64_t> submitted{0};
    std::atomic<uint64_t> ended{0};
  };
  std::array<Counts, kCountShards> counts;
  alignas(64) std::atomic<uint32_t> waiters{0};  // threads blocked (or about to block) on ended_cv
  std::atomic<bool> cancelled{false};
  uint64_t runtime_handle = 0;  // its runtime's handle value (RuntimeRef finds nothing once its destroy began)
  // Its runtime, for a submission that pinned the group (docs/threading.md, "Pinned task groups"): valid while
  // `runtime_gone` is false after the pin, since the runtime's destroy sets it first and then waits for the pins.
  Runtime* runtime = nullptr;
  std::atomic<bool> runtime_gone{false};
  std::string label;  // "task group 'g'" or "task group"
  std::mutex mutex;
  std::condition_variable ended_cv;
  uint64_t failures = 0;  // since the last wait returned
  accel_status_t first_error = ACCEL_SUCCESS;
  std::string first_message;
  alignas(64) std::array<std::atomic<LightLane*>, kLightSlots> lanes{};
  // In its runtime's list of groups with light tasks (Runtime::light_groups_), which holds it there.
  std::atomic<bool> listed{false};

  TaskGroup() = default;
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;
  ~TaskGroup();

  // Counts one task submitted (before it can end).
  void Add();
  // Counts one of its tasks ended with `result` (or refused: ACCEL_SUCCESS); wakes the waiters when none is open.
  void End(accel_status_t result, std::string_view message);
  // Counts `n` of its tasks ended, their failures (if any) recorded already: End's count, and a batch of light
  // tasks' successes counted at once (Runtime::RunLightBatch).
  void CountEnded(uint64_t n);
  // Its tasks submitted and not ended. 0 means every task whose Add happened before this call has ended.
  uint64_t Open() const;
};

// How many direct shards a runtime has (Runtime::direct_): one per submitting thread slot, modulo this.
inline constexpr size_t kDirectShardCount = 8;

// The task-group clients of one runtime (docs/scheduler.md, "Client slots"): threads that submitted group tasks and
// have not waited for them since, each counted in the direct shard of its thread slot. Held by the runtime and by
// each counted thread, so that a thread that exits while counted leaves after the runtime is gone.
//
// Thread-safe: atomics.
struct GroupClients {
  struct alignas(64) Count {
    std::atomic<uint32_t> n{0};
  };
  alignas(64) std::atomic<uint32_t> total{0};
  std::array<Count, kDirectShardCount> shards;
};

// One submitted task and its future. Fields under the runtime's mutex except
// where noted.
struct Task {
  // The fields a direct task's path touches come first and together: a worker that takes it from another core then
  // fetches a few cache lines, not the whole object (docs/scheduler.md, "Figures").
  //
  // A direct task (docs/scheduler.md, "The direct path"): no dependencies,
  // no devices, no retries. It goes to a worker without the runtime's lock;
  // whoever sets `claimed` first (a worker, a thread waiting for it, a
  // cancel, the shutdown) runs or ends it. Set before it is published.
  std::atomic<bool> claimed{false};
  // Completion, for futures that outlive the runtime: final_* are written
  // before `done` is set and never after.
  std::atomic<bool> done{false};
  bool direct = false;
  TaskKind kind = TaskKind::kTask;
  // Set (under the runtime's lock) when a waiting task depends on this one
  // while it may end without that lock: its end then schedules.
  std::atomic<bool> has_dependents{false};
  std::atomic<bool> cancel_requested{false};
  std::atomic<bool> preempt_requested{false};
  bool remake = false;
  uint32_t shard = 0;  // its shard of Runtime::direct_
  // 1.4: the task group it was submitted into (accel_task_group_submit), else null; it then has no future.
  std::shared_ptr<TaskGroup> task_group;
  // A light task's group while a thread runs it in this frame (Runtime::RunLight), else null.
  TaskGroup* light_group = nullptr;
  std::atomic<uint32_t> waiters{0};  // threads blocked (or about to block) on its DoneWait
  accel_status_t result = ACCEL_NOT_READY;
  accel_status_t final_result = ACCEL_NOT_READY;
  std::atomic<int> result_holders{2};  // its future and its end: the later one drops `result_object`'s reference
  TaskState state = TaskState::kWaiting;
  uint64_t id = 0;
  const Runtime* owner = nullptr;
  accel_task_function_t function = nullptr;
  void* user_data = nullptr;
  void (*release_user_data)(void*) = nullptr;
  accel_tenant_t tenant = nullptr;
  std::shared_ptr<Queue> queue;  // never null for kTask and kActorInit, but a direct task's of the default queue
  // While in a DirectShard: the shard's reference (see there).
  std::shared_ptr<Task> queued;
  std::string message;  // the error when done; why it waits otherwise
  std::string final_message;
  // While placed: ranks, what each holds, the planner's placement (0 none).
  std::vector<uint32_t> ranks;
  // 1.2 objects (docs/objectstore.md, "Tasks and objects"): the ones it reads, a reference each while it lives
  // (devices holding one of these are tried first); its result (accel_task_context_set_result), a reference the
  // future holds until released; results of attempts that did not end it, released at its end; and, for a run
  // that makes a lost object again through its lineage, that object.
  std::vector<HeldObject> near;
  HeldObject result_object;
  std::vector<HeldObject> drop_later;
  std::shared_ptr<Lineage>
      unused_lineage;  // made for `result_object` but refused (it had one): destroyed without locks
  std::weak_ptr<Object> remake_for;
  // A re-run's lineage, whose user data the task uses: kept until the task ended even if its object went meanwhile
  // (the lineage's destructor releases the user data); dropped without locks.
  std::shared_ptr<Lineage> remake_lineage;

  // The rest: the scheduler's path, under the runtime's lock.
  std::string name;  // "task 7 ('load')"; empty for an unnamed direct task: use Name()
  Request request;
  std::vector<std::shared_ptr<Task>> dependencies;
  // Blocked: a task of kTask kind kept out of the queue the scheduling passes read until `unmet` of its
  // dependencies (those not ended when it was submitted) have ended, or one ended without success.
  bool blocked = false;
  uint32_t unmet = 0;
  uint32_t max_retries = 0;
  uint32_t attempt = 0;
  int32_t priority = 0;
  bool preemptible = false;
  bool charged = false;          // its placement counts in its queue's usage
  std::shared_ptr<Actor> actor;  // the actor of a call, init or finalize
  std::vector<int64_t> shares;
  std::vector<uint64_t> memory;
  uint64_t placement = 0;

  // The runtime's handle value, for the task's future (RuntimeRef: it finds nothing once the destroy began); set with
  // the future. A value, not a weak_ptr: every weak_ptr of a runtime counts on the line its other references do.
  uint64_t runtime_handle = 0;

  // "task 7 ('load')", "call 3 of actor 1", or "task 9" for an unnamed direct task.
  std::string Name() const { return name.empty() ? "task " + std::to_string(id) : name; }
  // Whether its task group (if any) was cancelled: it then does not start, or is asked to stop.
  // Its task group (submitted into one, or a light task's frame), else null.
  TaskGroup* group() const { return task_group ? task_group.get() : light_group; }
  bool GroupCancelled() const {
    const TaskGroup* g = group();
    return g != nullptr && g->cancelled.load(std::memory_order_acquire);
  }

  Task() = default;
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  // Drops its dependencies without recursing through them (DropDependencies).
  ~Task();
};

// Where threads block until a task is done: one of a fixed set of lock and condition pairs, chosen by the task's
// address, so that a task carries none (a waiter checks its own task's `done`; a wakeup meant for another task that
// shares the pair is spurious). Only a task with `waiters` is notified.
struct DoneWait {
  std::mutex mutex;
  std::condition_variable cv;
  static DoneWait& For(const Task* task);
};

// Drops references to tasks, the last of which may drop their own dependencies and so on: done in a loop on the
// calling thread, not by recursion, so that the end of a chain of 100,000 tasks does not run out of stack.
void DropDependencies(std::vector<std::shared_ptr<Task>>& dependencies);

// A new task, its memory from the thread's block cache (block_cache.h): one is made per submission.
inline std::shared_ptr<Task> NewTask() { return std::allocate_shared<Task>(CachingAllocator<Task>{}); }

// A queue of the hierarchy (docs/scheduler.md, "Queues"). Amounts in the
// planner's share units and bytes; usage includes the descendants'. Fields
// under the runtime's mutex.
struct Queue {
  std::string name;  // the path: "research/vision"
  std::shared_ptr<Queue> parent;
  std::atomic<uint32_t> children{0};  // atomic: read on the direct path
  int64_t quota_share = 0;
  int64_t limit_share = 0;  // 0: none
  uint64_t quota_memory = 0;
  uint64_t limit_memory = 0;  // 0: none
  double weight = 1.0;
  int64_t used_share = 0;
  uint64_t used_memory = 0;
  uint64_t running = 0, preempted = 0;  // with descendants
  // With descendants; atomic: direct tasks end without the runtime's lock.
  std::atomic<uint64_t> finished{0};
  // Its own tasks and actors not ended; atomic for the same reason.
  std::atomic<uint64_t> open_work{0};
  bool destroyed = false;
  const Runtime* owner = nullptr;
  std::weak_ptr<Runtime> runtime;
};

// An actor (docs/scheduler.md, "Actors"). Fields under the runtime's mutex.
struct Actor {
  std::string name;  // "actor 2 ('kv')"
  accel_actor_state_t state = ACCEL_ACTOR_STATE_PENDING;
  std::string message;  // why it died, or why it waits
  accel_task_function_t init = nullptr;
  accel_task_function_t finalize = nullptr;
  void* user_data = nullptr;
  void (*release_user_data)(void*) = nullptr;
  uint32_t max_restarts = 0;
  uint32_t restarts = 0;
  std::shared_ptr<Task> holder;  // the kActorInit task: holds the reservation while alive
  accel_tenant_t tenant = nullptr;
  bool busy = false;       // a call, init or finalize is ready or running
  bool destroyed = false;  // by its owner
  bool ended = false;      // finalize has run (or was not needed); nothing runs again
  bool placed_once = false;
  uint64_t calls_pending = 0, calls_done = 0;
  const Runtime* owner = nullptr;
  std::weak_ptr<Runtime> runtime;
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
  // 1.1: the queue its reservation counts against (null: none), and what it charged.
  std::shared_ptr<Queue> queue;
  int64_t charged_share = 0;
  uint64_t charged_memory = 0;
  // 1.2 (ACCEL_PLACEMENT_GROUP_WAIT): not placed yet. Its gang is kept for the scheduling passes that try it; its
  // message says why it waits; placed_cv (with the runtime's mutex) wakes accel_placement_group_wait.
  bool pending = false;
  planner::Gang gang;
  std::string label;  // "placement group 'g': " or ""
  std::string message;
  std::condition_variable placed_cv;
};

class Runtime : public std::enable_shared_from_this<Runtime> {
 public:
  // How long a task-group client may stay away from its queued tasks before the workers take them whatever the
  // CPUs (docs/scheduler.md, "Client slots").
  static constexpr std::chrono::microseconds kDefaultClientLease{1000};
  static planner::Expected<std::shared_ptr<Runtime>> Create(
      accel_instance_t instance, uint32_t workers, ObjectStore::Options store_options = {},
      std::chrono::microseconds client_lease = kDefaultClientLease);
  ~Runtime();

  // Cancels what has not started, waits for what runs, stops the workers.
  void Shutdown();

  // Queues a prepared task (function, request, dependencies set), or says
  // why it can never run.
  accel_status_t Submit(const std::shared_ptr<Task>& task, std::string* why);
  void Cancel(const std::shared_ptr<Task>& task);
  // Runs a direct task that is not started yet on the calling thread; false
  // when another thread has it (docs/scheduler.md, "The direct path").
  bool RunIfUnclaimed(const std::shared_ptr<Task>& task);
  // Runs up to `most` of the direct tasks the calling thread submitted that no other thread has taken: its group
  // tasks newest first, then what its shard holds, oldest first; returns how many ran (a task group's wait:
  // docs/scheduler.md, "Task groups").
  size_t RunOwnQueued(size_t most);
  // Light group tasks (docs/scheduler.md, "Light group tasks"). SubmitLight queues one into `group`'s lane of the
  // calling thread: false when it does not qualify there (no lane for its slot, the lane full, events on, the
  // runtime stopping): the caller then submits it as any task. RunOwnLight runs the calling thread's queued light
  // tasks of `group`, newest first, and returns how many ran (a group wait).
  bool SubmitLight(TaskGroup& group, const LightTask& task);
  size_t RunOwnLight(TaskGroup& group);
  // The task groups made on this runtime (docs/threading.md, "Pinned task groups"). AddGroup registers one at its
  // creation (false once MarkGroupsGone ran); MarkGroupsGone, in the runtime's destroy, sets `runtime_gone` on each
  // still alive and returns them, so that the destroy then waits for the calls that pinned one.
  bool AddGroup(const std::shared_ptr<TaskGroup>& group);
  std::vector<std::shared_ptr<TaskGroup>> MarkGroupsGone();
  // The calling thread runs none of its queued group tasks for now (a group wait blocks, has a timeout, or
  // returned): it gives up its client slot, and a worker wakes for what may be taken now (docs/scheduler.md,
  // "Client slots").
  void ClientWaits();
  // Ends `group`'s tasks that wait in the scheduler's queue (cancelled); its direct tasks end so when taken.
  void CancelGroupTasks(const TaskGroup& group);

  // Queues: validated desc in, queue out; errors name the field.
  accel_status_t CreateQueue(const accel_queue_desc_t& desc, std::shared_ptr<Queue> parent, std::shared_ptr<Queue>* out,
                             std::string* why);
  accel_status_t DestroyQueue(const std::shared_ptr<Queue>& queue, std::string* why);
  accel_queue_usage_t Usage(const Queue& queue) const;
  const std::shared_ptr<Queue>& default_queue() const { return default_queue_; }

  // Actors: `actor` filled by the caller (functions, user data, restarts);
  // `holder` carries its request, queue and priority.
  accel_status_t CreateActor(const std::shared_ptr<Actor>& actor, const std::shared_ptr<Task>& holder,
                             std::string* why);
  // Queues a call (kind kActorCall, actor set).
  accel_status_t Call(const std::shared_ptr<Task>& call, std::string* why);
  void DestroyActor(const std::shared_ptr<Actor>& actor);
  accel_actor_info_t Info(const Actor& actor) const;
  std::string ActorMessage(const Actor& actor) const;

  // `queue` (may be null): a leaf queue of this runtime the reservation counts against.
  accel_status_t CreateGroup(const accel_placement_group_desc_t& desc, std::shared_ptr<Queue> queue,
                             std::shared_ptr<PlacementGroup>* out, std::string* why);
  void DestroyGroup(const std::shared_ptr<PlacementGroup>& group);
  // Under the lock: places `group`'s gang now, charges its queue, fills its slots; or says why not (nothing held).
  accel_status_t PlaceGroup(PlacementGroup& group, std::string* why);
  // Waits until `group` is placed: ACCEL_SUCCESS, ACCEL_ERROR_TIMEOUT, or ACCEL_ERROR_CANCELLED (destroyed first).
  accel_status_t WaitGroup(const std::shared_ptr<PlacementGroup>& group, uint64_t timeout_ns, std::string* why);
  // A copy of the group's slots under the lock; false while it is pending.
  bool GroupSlots(const PlacementGroup& group, std::vector<PlacementGroup::Slot>* out) const;
  // "placed", or why it waits.
  std::string GroupMessage(const PlacementGroup& group) const;

  // Why `task` waits ("capacity: ...", "waiting for dependency 0 (...)"), "" when it does not.
  std::string Explain(const Task& task) const;
  accel_runtime_counters_t Counters() const;
  // The decision log (docs/scheduler.md, "Events").
  EventLog& events() { return events_; }
  size_t device_count() const { return resources_.devices.size(); }
  accel_runtime_device_t Device(uint32_t rank) const;
  const Resources& resources() const { return resources_; }
  // The runtime's object store (1.2); shut down with the runtime.
  ObjectStore& store() { return *store_; }

  // Validates a request struct into `out`; errors name `field` ("request->share").
  accel_status_t ReadRequest(const accel_resource_request_t* in, std::string_view field, bool in_group, Request* out,
                             std::string* why) const;

  // True on a worker thread of this runtime.
  bool OnWorker() const;
  // True once Shutdown began.
  bool stopping() const { return stopping_; }
  // The handle value accel_runtime_create gave out for this runtime (set before it is given out).
  uint64_t handle() const { return handle_; }
  void set_handle(uint64_t handle) { handle_ = handle; }

 private:
  Runtime(accel_instance_t instance, Resources resources);
  void WorkerLoop();
  // Queues a placed task for a worker and wakes one when none looks for work.
  void MakeReady(std::shared_ptr<Task> task);
  // Wakes a sleeping worker unless one spins (and so takes what comes).
  void WakeOne();
  // What one worker saw of the direct shards (client slots: when each shard's client last showed activity).
  struct WorkerView;
  struct DirectShard;  // below, with direct_
  // Whether a worker may take from direct shard `s`, holding `n` (docs/scheduler.md, "Client slots"): kFree, kHelp
  // (as one of the helpers the CPUs left free by the clients allow: counted in helping_), or kNo (then
  // `view.held_back` is set).
  enum class MayTake : unsigned char { kNo, kHelp, kFree };
  MayTake MayTakeFrom(size_t s, size_t n, WorkerView& view);
  // Counts one more helper in helping_ if the clients leave a CPU for it.
  bool TryHelp();
  // A take's answer: MayTakeFrom's, with a helper counted (TryHelp) for kHelp, or kNo (and `view.held_back`) when
  // no CPU is left for one.
  MayTake Admit(size_t s, size_t n, WorkerView& view);
  // How many tasks a worker takes at once from a shard or lane holding `n`.
  size_t Share(size_t n) const;
  // The next task id from the calling thread's block of this runtime's ids (SubmitDirect).
  uint64_t NextTaskId();
  // Takes the oldest task (a few from a deep shard) of the first direct shard holding `at_least` that the worker
  // may take from, from `view.start` on, into `batch`; false when none had any. `*helping`: counted in helping_.
  bool StealDirect(WorkerView& view, size_t at_least, std::vector<std::shared_ptr<Task>>* batch, bool* helping);
  // How many tasks the direct shards hold (claimed ones included).
  size_t DirectWaiting() const;
  // The most tasks one direct shard holds that the worker may take from.
  size_t StealableMost(WorkerView& view);
  // After a task-group client's submission (its shard or lane now holding `queued`): wakes a worker when the
  // clients leave a CPU free, when no worker watches the shards, or when the shard is deep.
  void WakeForClient(size_t queued);
  // For a direct task claimed by a thread that runs it inline: out of its shard when it is the newest or the oldest
  // there, so that no worker looks at it again (the shard's reference dropped); else a taker drops it later.
  void LeaveShard(Task& task);
  // At a task's end, under any lock: records the lineage of its result, or hands a remake's result to the store.
  void RecordObjects(Task& task, accel_status_t result);
  // After a task's end, without the runtime's lock: drops the object references it held (its result's only when
  // its future was released already, or when it is a remake's). True when it had any.
  bool ReleaseObjects(Task& task);
  // Whether a task ending holds objects ReleaseObjects must drop.
  static bool HoldsObjects(const Task& task) {
    return !task.near.empty() || !task.drop_later.empty() || task.unused_lineage || task.remake_lineage ||
           task.result_object.object;
  }
  // Takes every task out of the direct shards.
  std::vector<std::shared_ptr<Task>> DrainDirect();
  // Runs (or, `cancel`, ends as cancelled by the shutdown) a light task of `group` in a frame of the calling thread.
  // With `defer`, a success is not counted in the group: it returns true, and the caller counts its batch at once
  // (TaskGroup::CountEnded).
  bool RunLight(TaskGroup& group, const LightTask& task, bool cancel, bool defer = false);
  // Runs `n` light tasks of `group` (ended as cancelled once the runtime stops), beating `beat` before each when
  // given (a client running its own: client slots), and counts their successes in the group at once.
  void RunLightBatch(TaskGroup& group, const LightTask* tasks, size_t n, DirectShard* beat);
  // Lists `group` among those with light tasks (held there) unless it is.
  void ListLight(TaskGroup& group);
  // A worker's take of light tasks: from the first lane it may take from (client slots), up to a few, into
  // `batch`, with their group in `*group`; unlists groups with nothing open. `*helping` as StealDirect's.
  bool StealLight(WorkerView& view, std::shared_ptr<TaskGroup>* group, std::vector<LightTask>* batch, bool* helping);
  // The most light tasks one lane holds that the worker may take from.
  size_t LightMost(WorkerView& view);
  // Shutdown: ends every queued light task as cancelled and empties the list.
  void DrainLight();
  // Ends a direct task that is not started as cancelled by the shutdown (when it gets the claim).
  void CancelForShutdown(const std::shared_ptr<Task>& task);
  // Submit's direct path (the task qualifies; the caller checked stopping_).
  accel_status_t SubmitDirect(const std::shared_ptr<Task>& task, std::string* why);
  // Runs a claimed direct task and ends it.
  void RunDirect(const std::shared_ptr<Task>& task);
  // Ends a claimed direct task; schedules its dependents, if any.
  void FinishDirect(const std::shared_ptr<Task>& task, accel_status_t result, std::string message);
  // Under mutex_: `task` (submitted, kTask) goes to blocked_ when some of its dependencies have not ended, else to
  // queue_.
  void Enqueue(const std::shared_ptr<Task>& task);
  // Under mutex_: `dependency` ended: its blocked dependents whose dependencies all ended, or that one failed, move
  // to queue_.
  void ReleaseDependents(const Task& dependency);
  // Under mutex_: a blocked task moves to queue_.
  void Unblock(const std::shared_ptr<Task>& task);
  // Under mutex_: marks the direct dependencies of `task` as watched.
  static void WatchDependencies(const Task& task);
  // A placed task (or actor init) starts: running, counted as placed, to a worker.
  void Start(const std::shared_ptr<Task>& task);
  // Tries to start every waiting and pending task, in submission order.
  void Schedule(std::unique_lock<std::mutex>& lock);
  // The pass after `task`'s submission (it is queue_'s last): only `task` is tried when the last full pass left
  // nothing that orders it after the others and nothing gave capacity back since (delta_ok_); else a full pass.
  // docs/scheduler.md, "Scheduling passes".
  void ScheduleSubmitted(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Task>& task);
  // ScheduleSubmitted's try of the new task alone.
  void TrySubmittedAlone(const std::shared_ptr<Task>& task);
  // The pass after a task that held devices ended, `clean` when the passes' state was delta_ok_ before its release:
  // then, queue by queue in pass order, only the first waiting task of each request shape is tried, the next of a
  // shape after one is placed (waiting_); else a full pass. docs/scheduler.md, "Scheduling passes".
  void ScheduleEnded(std::unique_lock<std::mutex>& lock, bool clean);
  // ScheduleEnded's tries by shape over waiting_; false when a full pass must follow (a task asked to stop without
  // one).
  bool TryEndedByShape();
  // Forgets what the cheaper passes rely on (delta_ok_, waiting_, no_room_, a hold in place): the next pass is a full
  // one. On an exception in them, and at shutdown.
  void DropDelta() noexcept;
  // Whether something pending makes the next pass a full one whatever happened: a shutdown, a placement group that
  // waits, dependents released, devices held.
  bool FullPassDue() const;
  // Adds a waiting task to waiting_, in its queue's and shape's order; false (nothing added) when its queue has a
  // quota, which waiting_ does not cover.
  bool AddWaiting(const std::shared_ptr<Task>& task);
  // Fills waiting_ from queue_ when every task there waits for capacity alone: each a plain task of a leaf queue
  // without quota. False (waiting_ left empty) otherwise.
  bool BuildWaiting();
  // Places the device-needing pending tasks in queue order; preempts for
  // queues under their quota. False when something this pass decided orders later requests after earlier ones
  // (a queue under its quota waits, or devices are held for a large task).
  bool PlaceByQueue(const std::vector<const std::shared_ptr<Task>*>& candidates);
  // Places `task` or sets its message to why not. True when placed.
  bool TryPlace(Task& task);
  // Asks running preemptible tasks of queues over their quota to stop when
  // that makes room for `gang` (a task's or a pending group's, of `queue`,
  // under its quota). True when some were asked (or already were).
  bool Reclaim(const planner::Gang& gang, const Queue* queue);
  // Sets the devices the oldest pending placement group waits for aside from
  // the placements of this scheduling pass (tasks, and groups made after it),
  // so that a stream of smaller work cannot keep it waiting forever
  // (docs/scheduler.md, "Placement groups"); ReleaseHold gives them back. Called with no hold in
  // place, and paired with ReleaseHold before the runtime's lock is let go.
  void HoldForPendingGroup();
  // Sets aside, the same way, the devices of a waiting task of two or more devices that found no room in this
  // pass (the first such task in the pass's fair-share order, when nothing is held yet), so that smaller tasks
  // after it cannot keep taking them (docs/scheduler.md, "Large tasks").
  void HoldForTask(const Task& task);
  void Hold(const planner::Gang& gang, std::string what);
  void ReleaseHold();
  // "; device(s) 0, 1 are held for placement group 'g', which waits for them", or "" with no hold.
  std::string HoldNote() const;
  void Charge(Task& task, int sign);
  bool UnderQuota(const Queue& q) const;
  double Dominant(const Queue& q) const;
  // A queue's place among its siblings in a pass (smallest first): under its quota first (the least used fraction of
  // it first), then weighted dominant-resource fair share; the name breaks ties.
  std::tuple<int, double, const std::string&> SiblingOrder(const Queue& q) const;
  // Why `share` and `memory` more would take `leaf` or an ancestor past its limit ("... and the <asker> asks ..."),
  // or "".
  std::string OverLimit(const Queue* leaf, int64_t share, uint64_t memory, const char* asker) const;
  // Why `share` and `memory` could never fit `leaf` or an ancestor, past their limits even when empty; "" when
  // they could.
  std::string BeyondLimits(const Queue* leaf, int64_t share, uint64_t memory) const;
  // `gang` placed on a scratch planner with every device in service free: whether it could ever fit.
  planner::Expected<planner::Placement> PlaceAllFree(const planner::Gang& gang) const;
  // Adds (`sign` > 0) or removes `share` and `memory` in the usage of `leaf` and its ancestors.
  static void ChargePath(Queue* leaf, int64_t share, uint64_t memory, int sign);
  // After a call, init or finalize ended: the actor's next step.
  void AfterActorWork(const std::shared_ptr<Task>& task, accel_status_t result, std::string message);
  void KillActor(Actor& actor, std::string message);
  // A device loss seen by `actor`'s work: restarts it (true) or kills it.
  bool RestartOrKill(const std::shared_ptr<Actor>& actor, const std::string& why);
  // Probes `ranks` after ACCEL_ERROR_DEVICE_LOST; takes lost ones out of
  // service. True when one of them is lost.
  bool ProbeLost(const std::vector<uint32_t>& ranks);
  // Queues the actor's finalize (or ends it when none is due).
  void EndActor(const std::shared_ptr<Actor>& actor);
  void CompleteActorEnd(Actor& actor);
  // Runs a placed task's function (or an actor's init, call or finalize)
  // without the lock; its result and message.
  accel_status_t Execute(const std::shared_ptr<Task>& task, std::string* message);
  accel_status_t ExecuteActorWork(const std::shared_ptr<Task>& task, std::string* message);
  // Under the lock, after Execute: frees the placement, retries, requeues a
  // preempted task or finishes it, and schedules.
  void Complete(const std::shared_ptr<Task>& task, accel_status_t result, std::string message,
                std::unique_lock<std::mutex>& lock);
  void ReleasePlacement(Task& task);
  // Frees a destroyed group's reservation once nothing runs inside it, and its queue's charge.
  void ReleaseGroup(PlacementGroup& group);
  // Runs the task's function under `tenant` with the context set.
  accel_status_t CallFunction(const std::shared_ptr<Task>& task, accel_task_function_t function, void* user_data,
                              accel_tenant_t tenant, std::string* message);
  void Finish(const std::shared_ptr<Task>& task, accel_status_t result, std::string message);
  // Calls release_user_data of the tasks Finish ended, without the lock.
  void FlushReleases();
  // Whether the request could ever be placed on the devices not lost; the reason when not.
  accel_status_t Feasible(const Request& request, std::string* why) const;
  planner::Gang GangOf(const Request& request) const;

  accel_instance_t instance_;
  Resources resources_;
  std::unique_ptr<ObjectStore> store_;
  planner::Planner planner_;

  // Counters bumped on the task path without the runtime's lock: one block
  // per thread slot (a cache line each), summed by Counters().
  // Counters of the threads that use one shard. A thread whose slot (ThreadSlot: numbers reused as threads exit) is
  // below kOwnedShards is the only writer of shard `slot` and adds with a load and a store: a locked add costs some
  // 20 cycles and drains the core's store buffer, and a direct task counts 7 times. Other threads share the rest
  // with locked adds. Readers add them all up with relaxed loads.
  struct alignas(128) CounterShard {  // 128: the adjacent-line prefetcher pulls lines in pairs
    std::atomic<uint64_t> submitted{0}, placed{0}, started{0}, finished{0}, failed{0}, cancelled{0};
    std::atomic<uint64_t> run_in{0}, run_out{0};  // made ready / ended: their difference is `running`
    std::atomic<uint64_t> default_finished{0};    // direct tasks of the default queue ended (SubmitDirect)
    bool shared = false;                          // set before the workers start
    [[gnu::always_inline]] void Add(std::atomic<uint64_t> CounterShard::*field) {
      std::atomic<uint64_t>& c = this->*field;
      if (shared) {
        c.fetch_add(1, std::memory_order_relaxed);
      } else {
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      }
    }
  };
  static constexpr size_t kOwnedShards = 16;
  static constexpr size_t kCounterShards = kOwnedShards + 8;
  CounterShard& Shard();
  // Ends a task with `result`: counts it, publishes `final_*` and wakes its waiters.
  void Publish(Task& task, accel_status_t result);
  // Counts a task's end with `result` in `shard` and logs it.
  void CountEnd(CounterShard& shard, const Task& task, accel_status_t result);

  mutable std::mutex mutex_;
  std::deque<std::shared_ptr<Task>> queue_;  // waiting and pending, submission order, but the blocked ones
  // Tasks waiting for dependencies that have not ended (Task::blocked): no scheduling pass reads them; the end of a
  // dependency moves them to queue_ (ReleaseDependents). docs/scheduler.md, "Dependencies".
  std::unordered_set<std::shared_ptr<Task>> blocked_;
  // The blocked tasks each unended dependency will release, by dependency.
  std::unordered_map<const Task*, std::vector<std::shared_ptr<Task>>> dependents_;
  std::vector<std::shared_ptr<Task>> unblocked_;  // out of blocked_, for the next pass to move to queue_
  std::vector<std::thread> workers_;
  uint32_t worker_count_ = 1;                       // set before the workers start
  alignas(64) std::atomic<uint64_t> next_task_{1};  // its own line: submitters bump it, workers read what lies near
  // Tells this runtime's blocks of task ids (SubmitDirect) from those of an earlier runtime at the same address.
  static uint64_t NextSerial();
  const uint64_t serial_ = NextSerial();
  std::vector<std::shared_ptr<Task>> to_release_;
  std::vector<std::shared_ptr<Actor>> actors_to_release_;
  std::atomic<bool> releases_due_{false};                          // to_release_ or actors_to_release_ holds something
  std::vector<const std::shared_ptr<Task>*> schedule_candidates_;  // Schedule's, reused: elements of queue_
  // Requests (device count, share, memory, selector) that found no room since the last full pass, with why: capacity
  // only shrinks until something gives some back, so an identical request fails the same way without asking the
  // planner again. Under mutex_.
  using Shape = std::tuple<uint32_t, double, uint64_t, std::string>;  // device count, share, memory, selector
  std::map<Shape, std::string, std::less<>> no_room_;
  // Every task that waits for capacity, by leaf queue and request shape, each shape's in the order a pass tries them
  // (highest priority first, then oldest), while waiting_built_: built by the first pass after an ending that may
  // use it, kept by the passes of submissions and endings, dropped by a full pass. Under mutex_.
  using WaitOrder = std::pair<int64_t, uint64_t>;  // -priority, id
  using WaitingShapes = std::map<Shape, std::map<WaitOrder, std::shared_ptr<Task>>, std::less<>>;
  std::unordered_map<const Queue*, WaitingShapes> waiting_;
  bool waiting_built_ = false;
  // Whether the cheaper passes may run (ScheduleSubmitted; ScheduleEnded, read before the ending's release): set by
  // a pass that left nothing ordering later requests after earlier ones, cleared by the next full pass and whenever
  // capacity comes back (ReleasePlacement, ReleaseGroup). Under mutex_.
  bool delta_ok_ = false;
  accel_tenant_t no_device_tenant_ = nullptr;  // shared by tasks without devices: may allocate nothing
  // Records a decision about a task in the event log when it is on (one relaxed load when off).
  void LogTask(accel_runtime_event_kind_t kind, const Task& task, accel_status_t status = ACCEL_SUCCESS) {
    if (events_.enabled()) LogTaskOn(kind, task, status);
  }
  void LogTaskOn(accel_runtime_event_kind_t kind, const Task& task, accel_status_t status);
  EventLog events_;
  accel_runtime_counters_t counters_{};  // the counters not in shards_, under mutex_
  std::array<CounterShard, kCounterShards> shards_;

  // Work for the workers: placed tasks and actor work in ready_ (its lock
  // taken after mutex_ when both are held), direct tasks in direct_, one
  // shard per submitting thread slot, taken one at a time (a few from a deep shard).
  alignas(64) std::mutex ready_mutex_;
  std::condition_variable ready_cv_;
  std::deque<std::shared_ptr<Task>> ready_;
  // Read by workers looking for work: apart from the lock's line.
  alignas(64) std::atomic<size_t> ready_size_{0};  // ready_.size(), written under ready_mutex_
  std::atomic<uint32_t> spinning_{0};              // workers spinning before they sleep: they take what comes
  std::atomic<uint32_t> sleeping_{0};              // workers in (or entering) ready_cv_'s wait
  std::atomic<uint32_t> watching_{0};  // of those, workers in a timed wait: they watch tasks left to clients
  uint64_t handle_ = 0;
  alignas(64) std::atomic<bool> stopping_{false};  // set under mutex_ and ready_mutex_
  // The direct tasks submitted by the threads of one slot. The newest waits in
  // `newest`, where a submit-then-wait stream takes it back without touching
  // anything a worker reads; older ones go to a lock-free ring, and to
  // `overflow` when that is full. A queued task holds itself (Task::queued):
  // whoever takes it out (exchange, pop) drops that reference. Entries may be
  // claimed already (a waiter ran them): takers skip those.
  struct alignas(64) DirectShard {
    static constexpr size_t kRingSlots = 1024;
    std::atomic<Task*> newest{nullptr};
    // Bumped by its task-group clients at each submission and each task they run themselves: a worker that sees
    // it still for the client lease takes the shard's tasks (docs/scheduler.md, "Client slots"). On a line of its
    // own: workers read the line above at every look for work, and only read this one once every CPU has a client.
    alignas(64) std::atomic<uint64_t> beat{0};
    void Beat() { beat.store(beat.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
    PointerRing<Task> ring{kRingSlots};
    SpinLock overflow_lock;
    std::deque<std::shared_ptr<Task>> overflow;  // under overflow_lock
    std::atomic<size_t> overflow_size{0};        // overflow.size(), written under overflow_lock
    // How many it holds (claimed ones included); a snapshot.
    size_t Size() const {
      return ring.Size() + overflow_size.load(std::memory_order_relaxed) +
             (newest.load(std::memory_order_relaxed) != nullptr ? 1 : 0);
    }
    // Takes the oldest task out: the ring's, else the overflow's, else (when `newest_too`) the newest. Null
    // when there is none.
    std::shared_ptr<Task> Take(bool newest_too);
  };
  static constexpr size_t kDirectShards = kDirectShardCount;
  std::array<DirectShard, kDirectShards> direct_;
  // Client slots (docs/scheduler.md, "Client slots"): the task-group clients, the CPUs this process may run on
  // (its affinity when created), how long a client's idle shard is left to it, and the workers taking from the
  // shards of clients as helpers (their own line: workers write it at each such take).
  std::shared_ptr<GroupClients> clients_ = std::make_shared<GroupClients>();
  uint32_t cpus_ = 1;
  std::chrono::steady_clock::duration client_lease_ = kDefaultClientLease;
  alignas(64) std::atomic<uint32_t> helping_{0};
  // Light group tasks: the groups that have some (each held here until nothing of it is open), under light_lock_.
  alignas(64) SpinLock light_lock_;
  std::vector<std::shared_ptr<TaskGroup>> light_groups_;
  std::atomic<size_t> light_listed_{0};  // light_groups_.size(), written under light_lock_
  size_t light_next_ = 0;                // where the next worker's look starts, under light_lock_
  // The task groups made on it (AddGroup), under groups_mutex_; expired ones are dropped as the list grows.
  std::mutex groups_mutex_;
  std::vector<std::weak_ptr<TaskGroup>> groups_;
  bool groups_gone_ = false;  // MarkGroupsGone ran
  // Direct tasks waiting threads run now (RunIfUnclaimed), counted in the shard of the thread's slot: two clients
  // that each run their own tasks touch no common line. Shutdown waits for every shard to reach 0.
  class InlineScope;
  class OwnTenant;
  struct alignas(64) InlineCount {
    std::atomic<int> running{0};
  };
  std::array<InlineCount, kDirectShards> inline_running_;
  std::shared_ptr<Queue> default_queue_;
  std::vector<std::weak_ptr<Queue>> queues_;  // every queue made, for sibling names
  std::vector<std::weak_ptr<Actor>> actors_;
  std::deque<std::shared_ptr<PlacementGroup>> pending_groups_;  // ACCEL_PLACEMENT_GROUP_WAIT, oldest first
  std::string holding_;               // what the held devices wait for ("placement group 'g'"), while held
  std::vector<uint32_t> held_ranks_;  // and the devices held
  // Placed preemptible tasks, by id: the candidates of Reclaim.
  std::unordered_map<uint64_t, std::shared_ptr<Task>> preemptible_;
  uint64_t next_actor_ = 1;
  int64_t total_share_ = 0;
  uint64_t total_memory_ = 0;
};

// The task running on this thread (null outside a task function): what
// accel_task_context_t handles resolve to.
Task* CurrentTask();

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_RUNTIME_H_
