// The scheduler (docs/scheduler.md).
#include "runtime.h"

#include <fmt/format.h>

#include <sched.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "handles.h"
#include "lineage.h"
#include "selector.h"

namespace accel::runtime {

namespace {

thread_local Task* t_current_task = nullptr;        // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
thread_local const Runtime* t_worker_of = nullptr;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
// A worker's thread tenant between tasks (CallFunction).
thread_local accel_tenant_t t_worker_tenant = nullptr;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
// The runtime whose queued tasks the thread runs in RunOwnQueued, with its shared tenant bound for all of them.
thread_local const Runtime* t_running_own_of = nullptr;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

std::string Bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  double v = static_cast<double>(bytes);
  int unit = -1;
  while (v >= 1024.0 && unit < 4) {
    v /= 1024.0;
    ++unit;
  }
  return fmt::format("{:g} {}", std::round(v * 10.0) / 10.0, kUnits[unit]);
}

int64_t ShareUnits(double share) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::llround(share * static_cast<double>(planner::kShareUnits))));
}

double Devices(int64_t share_units) {
  return static_cast<double>(share_units) / static_cast<double>(planner::kShareUnits);
}

// What a request holds in all: share units and bytes over its devices.
std::pair<int64_t, uint64_t> Need(const Request& r) {
  if (r.device_count == 0) return {0, 0};
  return {ShareUnits(r.share) * r.device_count, r.memory * r.device_count};
}

// What a gang holds in all: share units and bytes over its bundles' devices.
std::pair<int64_t, uint64_t> GangNeed(const planner::Gang& gang) {
  int64_t share = 0;
  uint64_t memory = 0;
  for (const auto& b : gang.bundles) {
    share += ShareUnits(b.share) * b.devices;
    memory += b.memory * b.devices;
  }
  return {share, memory};
}

// Whether `ancestor` is `q` or one of its parents.
bool Within(const Queue* q, const Queue* ancestor) {
  for (; q != nullptr; q = q->parent.get()) {
    if (q == ancestor) return true;
  }
  return false;
}

bool Counted(const Task& task) { return task.kind == TaskKind::kTask || task.kind == TaskKind::kActorCall; }

// The node of queue `q` in a pass's tree of queues (`nodes`, whose top level, the null queue, is made first): made
// with its ancestors' on first use, each linked to its parent's. `Node` has `queue`, `parent` and `children`.
template <typename Node>
Node& TreeNode(std::unordered_map<const Queue*, Node>& nodes, const Queue* q) {
  auto [it, made] = nodes.try_emplace(q);
  if (made) {
    it->second.queue = q;
    it->second.parent = &TreeNode(nodes, q->parent.get());  // references into an unordered_map stay valid
    it->second.parent->children.push_back(&it->second);
  }
  return it->second;
}

// A request's shape, the key of Runtime::no_room_ and Runtime::waiting_, looked up without copying its selector.
std::tuple<uint32_t, double, uint64_t, std::string_view> ShapeOf(const Request& r) {
  return {r.device_count, r.share, r.memory, r.selector};
}

// Why `task` waits, naming its dependency `i`: "waiting for dependency 1 (task 7 ('load'))".
std::string WaitingFor(const Task& task, size_t i) {
  return fmt::format("waiting for dependency {} ({})", i, task.dependencies[i]->Name());
}

// Thread slots: small numbers for the threads alive now, each thread's own while it lives (the lowest free one when
// it first asks), given back when it exits. The hand-over goes through the mutex, so a thread that takes a slot sees
// every count its previous owner made in a shard it wrote alone (Runtime::CounterShard).
class ThreadSlots {
 public:
  size_t Take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) return next_++;
    std::pop_heap(free_.begin(), free_.end(), std::greater<>());
    const size_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  void GiveBack(size_t slot) {
    std::lock_guard lock(mutex_);
    free_.push_back(slot);
    std::push_heap(free_.begin(), free_.end(), std::greater<>());
  }

 private:
  std::mutex mutex_;
  std::vector<size_t> free_;  // a min-heap
  size_t next_ = 0;
};

ThreadSlots& Slots() {
  static auto* slots = new ThreadSlots;  // leaked: threads exit during the process's exit too
  return *slots;
}

// A slot no thread owns, for the calls a thread makes after its thread-locals were destroyed: past the owned
// counter shards, so that it adds with locked adds.
constexpr size_t kOrphanSlot = size_t{1} << 20;
constexpr size_t kNoSlot = ~size_t{0};
thread_local size_t t_slot = kNoSlot;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

struct SlotOwner {
  SlotOwner() = default;
  SlotOwner(const SlotOwner&) = delete;
  SlotOwner& operator=(const SlotOwner&) = delete;
  ~SlotOwner() {
    Slots().GiveBack(t_slot);
    t_slot = kOrphanSlot;
  }
};

// Takes the calling thread's slot at its first call: out of line, so that ThreadSlot's common path, inlined into
// the task path's several calls, saves no registers.
[[gnu::noinline]] size_t TakeThreadSlot() {
  t_slot = Slots().Take();
  thread_local SlotOwner owner;
  return t_slot;
}

// This thread's slot (ThreadSlots).
inline size_t ThreadSlot() {
  const size_t slot = t_slot;
  if (slot == kNoSlot) [[unlikely]]
    return TakeThreadSlot();
  return slot;
}

// Direct tasks take their ids from a block of the runtime's counter that their submitting thread holds, not one
// at a time: two clients bumping one counter for each task pass its cache line back and forth. Ids stay unique
// within a runtime and rise within each thread; tasks ordered by id (the scheduler's, within a priority) all
// take theirs from the counter under the runtime's lock.
constexpr uint64_t kTaskIdBlock = 256;
std::atomic<uint64_t> g_next_runtime_serial{1};
struct TaskIdBlock {
  uint64_t runtime = 0;  // Runtime::serial_
  uint64_t next = 0;
  uint64_t end = 0;
};
thread_local TaskIdBlock t_task_ids;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

// A thread as a task-group client of one runtime. `tasks`: the group tasks it submitted there and has not run
// itself, newest last: its group waits run them newest first (RunOwnQueued), as a work-stealing deque's owner does,
// while the workers take the oldest. The references keep them until then; past kMostOwnTasks the oldest half is
// forgotten (they run as any other). `clients`: set while it holds a client slot (docs/scheduler.md, "Client
// slots"), from its first group submission until a group wait of its blocks or returns, or the thread exits.
struct OwnTasks {
  uint64_t runtime = 0;  // Runtime::serial_
  std::vector<std::shared_ptr<Task>> tasks;
  std::shared_ptr<GroupClients> clients;
  uint32_t shard = 0;  // where it is counted in `clients`

  OwnTasks() = default;
  OwnTasks(const OwnTasks&) = delete;
  OwnTasks& operator=(const OwnTasks&) = delete;
  ~OwnTasks() { Leave(); }
  void Enter(const std::shared_ptr<GroupClients>& all, uint32_t in_shard) {
    clients = all;
    shard = in_shard;
    clients->shards[shard].n.fetch_add(1, std::memory_order_seq_cst);
    clients->total.fetch_add(1, std::memory_order_seq_cst);
  }
  void Leave() {
    if (!clients) return;
    clients->shards[shard].n.fetch_sub(1, std::memory_order_seq_cst);
    clients->total.fetch_sub(1, std::memory_order_seq_cst);
    clients.reset();
  }
};
thread_local OwnTasks t_own_tasks;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
constexpr size_t kMostOwnTasks = 4096;

// The calling thread's OwnTasks for the runtime numbered `serial` (what it kept for another runtime dropped), in a
// client slot of `clients` counted at `shard` unless `on_worker`: worker threads (a task submitting into a group)
// hold a CPU as workers already (docs/scheduler.md, "Client slots").
[[gnu::always_inline]] inline OwnTasks& ClientTasks(uint64_t serial, const std::shared_ptr<GroupClients>& clients,
                                                    uint32_t shard, bool on_worker) {
  OwnTasks& own = t_own_tasks;
  if (own.runtime != serial) {
    own.Leave();
    own.tasks.clear();
    own.runtime = serial;
  }
  if (!own.clients && !on_worker) [[unlikely]]
    own.Enter(clients, shard);
  return own;
}

// Ends a task of `group` (a direct one's Publish, a light one's RunLight): a failure's message is named, unless it
// names the task already ("task 7 was cancelled: ...").
[[gnu::noinline]] void EndFailedInGroup(TaskGroup& group, const Task& task, accel_status_t result,
                                        const std::string& message) {
  const std::string name = task.Name();
  group.End(result, message.rfind(name, 0) == 0 ? message : fmt::format("{}: {}", name, message));
}
[[gnu::always_inline]] inline void EndInGroup(TaskGroup& group, const Task& task, accel_status_t result,
                                              const std::string& message) {
  if (result == ACCEL_SUCCESS) {
    group.End(result, "");
  } else {
    EndFailedInGroup(group, task, result, message);
  }
}

// The Task objects a thread runs light group tasks in (Runtime::RunLight), one per nesting level (a light task that
// waits for a group runs others inside it): what the task's context and the end's bookkeeping read. Made on first
// use, kept for the thread's life.
struct LightFrames {
  static constexpr size_t kFixed = 4;
  std::array<std::shared_ptr<Task>, kFixed> fixed;  // the first levels
  std::deque<std::shared_ptr<Task>> deeper;         // a deque: a deeper level's frame moves no shallower one
  size_t depth = 0;
  // The frame of `level`, made on first use.
  std::shared_ptr<Task>& At(size_t level) {
    while (level >= kFixed && deeper.size() <= level - kFixed) deeper.emplace_back();
    std::shared_ptr<Task>& frame = level < kFixed ? fixed[level] : deeper[level - kFixed];
    if (!frame) frame = std::make_shared<Task>();
    return frame;
  }
};
thread_local std::unique_ptr<LightFrames> t_light_frames;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

// How long a worker with nothing to do spins before it sleeps, and how long
// of that it leaves a lone direct task to its submitter (pauses, each some
// 10-40 ns).
constexpr int kWorkerSpins = 2000;
constexpr int kLoneTaskSpins = 256;
// A worker takes more than one direct task at a time only from a shard
// holding kDeepShard or more, and then at most kMostTaken.
constexpr size_t kDeepShard = 32;
constexpr size_t kMostTaken = 16;
// A client's shard this deep is the workers' whatever the CPUs (docs/scheduler.md, "Client slots"): a client that
// submits without waiting keeps a bounded backlog.
constexpr size_t kClientDeep = 2048;

// The CPUs this process may run on: its affinity, else the machine's.
uint32_t AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1U, std::thread::hardware_concurrency());
}

// Claims a direct task: true for the one caller that gets to run or end it.
bool Claim(Task& task) {
  return !task.claimed.load(std::memory_order_relaxed) && !task.claimed.exchange(true, std::memory_order_acq_rel);
}

}  // namespace

Task* CurrentTask() { return t_current_task; }

DoneWait& DoneWait::For(const Task* task) {
  static constexpr size_t kPairs = 64;
  static auto* pairs = new std::array<DoneWait, kPairs>;  // leaked: futures may be waited on during exit
  return (*pairs)[(reinterpret_cast<uintptr_t>(task) / alignof(Task)) % kPairs];
}

void DropDependencies(std::vector<std::shared_ptr<Task>>& dependencies) {
  // The list the outermost call on this thread drains; a task it drops adds its own dependencies to it.
  thread_local std::vector<std::shared_ptr<Task>>* draining = nullptr;  // NOLINT(misc-use-anonymous-namespace)
  if (dependencies.empty()) return;
  if (draining != nullptr) {
    for (auto& dep : dependencies) draining->push_back(std::move(dep));
    dependencies.clear();
    return;
  }
  std::vector<std::shared_ptr<Task>> list = std::move(dependencies);
  dependencies.clear();
  draining = &list;
  while (!list.empty()) {
    std::shared_ptr<Task> last = std::move(list.back());
    list.pop_back();
    last.reset();  // may add to `list`
  }
  draining = nullptr;
}

Task::~Task() { DropDependencies(dependencies); }

planner::Expected<std::shared_ptr<Runtime>> Runtime::Create(accel_instance_t instance, uint32_t workers,
                                                            ObjectStore::Options store_options,
                                                            std::chrono::microseconds client_lease) {
  auto resources = ReadResources(instance);
  if (!resources) return resources.error();
  std::shared_ptr<Runtime> runtime(new Runtime(instance, std::move(resources).value()));
  std::string why;
  if (ObjectStore::Create(instance, runtime->resources_, std::move(store_options), &runtime->store_, &why) !=
      ACCEL_SUCCESS) {
    return planner::Error{why};
  }
  // A device the store finds lost (reading a replica there) is lost to placement too: a lineage's re-run goes
  // elsewhere.
  runtime->store_->SetDeviceLostHandler([weak = std::weak_ptr<Runtime>(runtime)](uint32_t device) {
    if (auto rt = weak.lock()) {
      std::lock_guard lock(rt->mutex_);
      rt->ProbeLost({device});
    }
  });
  // One tenant with no memory anywhere for every task without devices: a tenant per such task cost more than
  // the task (docs/scheduler.md, "Figures"), and sharing one that may allocate nothing changes no limit.
  accel_tenant_desc_t td{};
  td.stype = ACCEL_STRUCTURE_TYPE_TENANT_DESC;
  td.struct_size = sizeof(td);
  td.name = "accel-runtime: tasks without devices";
  if (accel_tenant_create(instance, &td, &runtime->no_device_tenant_) != ACCEL_SUCCESS) {
    return planner::Error{
        fmt::format("the tenant for tasks without devices could not be made: {}", accel_last_error())};
  }
  runtime->cpus_ = AllowedCpus();
  runtime->client_lease_ = client_lease;
  if (workers == 0) workers = std::max(2U, runtime->cpus_);
  runtime->worker_count_ = workers;
  runtime->workers_.reserve(workers);
  for (uint32_t i = 0; i < workers; ++i) runtime->workers_.emplace_back([r = runtime.get()] { r->WorkerLoop(); });
  return runtime;
}

uint64_t Runtime::NextSerial() { return g_next_runtime_serial.fetch_add(1, std::memory_order_relaxed); }

Runtime::Runtime(accel_instance_t instance, Resources resources)
    : instance_(instance), resources_(std::move(resources)), planner_(*resources_.cluster) {
  counters_.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS;
  counters_.struct_size = sizeof(counters_);
  for (size_t i = kOwnedShards; i < kCounterShards; ++i) shards_[i].shared = true;
  default_queue_ = std::make_shared<Queue>();
  default_queue_->name = "default";
  default_queue_->owner = this;
  queues_.push_back(default_queue_);
  for (const auto& d : resources_.devices) {
    total_share_ += planner::kShareUnits;
    total_memory_ += d.memory;
  }
}

Runtime::~Runtime() {
  Shutdown();
  // What a submit racing with the shutdown queued after its drains: cancelled by its submitter (the claim), but
  // still in a shard, holding itself. No submit runs now (each holds the runtime).
  for (auto& task : DrainDirect()) CancelForShutdown(task);
  if (no_device_tenant_ != nullptr) accel_tenant_destroy(no_device_tenant_);
}

bool Runtime::OnWorker() const {
  // A thread running one of this runtime's tasks inline (a wait ran it) counts too: destroying would wait for it.
  return t_worker_of == this || (t_current_task != nullptr && t_current_task->owner == this);
}

void Runtime::Shutdown() {
  std::vector<std::shared_ptr<Task>> direct;  // ended outside the lock (their end may schedule)
  {
    std::unique_lock lock(mutex_);
    if (stopping_ && workers_.empty()) return;
    std::deque<std::shared_ptr<Task>> ready;
    {
      std::lock_guard ready_lock(ready_mutex_);
      stopping_.store(true, std::memory_order_seq_cst);
      ready.swap(ready_);
      // Finalizers still run (they free the actors' memory); the rest is cancelled.
      for (auto& task : ready) {
        if (task->kind == TaskKind::kActorFinalize) ready_.push_back(task);
      }
      ready_size_.store(ready_.size(), std::memory_order_relaxed);
    }
    // A direct task queued after this sees stopping_ and ends itself (SubmitDirect); a light one too (SubmitLight).
    direct = DrainDirect();
    auto queued = std::move(queue_);
    queue_.clear();
    DropDelta();  // what it indexes ends here
    for (const auto& task : blocked_) {
      task->blocked = false;
      queued.push_back(task);
    }
    blocked_.clear();
    dependents_.clear();
    for (auto& task : unblocked_) queued.push_back(std::move(task));
    unblocked_.clear();
    for (auto& task : queued) {
      Finish(task, ACCEL_ERROR_CANCELLED,
             fmt::format("{} was cancelled: the runtime was destroyed first", task->Name()));
    }
    for (auto& task : ready) {
      if (task->kind == TaskKind::kActorFinalize) continue;
      Shard().Add(&CounterShard::run_out);
      ReleasePlacement(*task);
      if (task->kind == TaskKind::kActorCall || task->kind == TaskKind::kActorInit) task->actor->busy = false;
      Finish(task, ACCEL_ERROR_CANCELLED,
             fmt::format("{} was cancelled: the runtime was destroyed first", task->Name()));
    }
    // A snapshot: ending an actor without a finalize prunes actors_ (CompleteActorEnd), which would move entries
    // under this loop and skip the actor after an expired one.
    const std::vector<std::weak_ptr<Actor>> actors = actors_;
    for (const auto& weak : actors) {
      auto actor = weak.lock();
      if (!actor || actor->ended) continue;
      actor->destroyed = true;
      EndActor(actor);
    }
    // Pending placement groups never get placed now: their waits end (ACCEL_ERROR_CANCELLED).
    for (auto& group : pending_groups_) group->placed_cv.notify_all();
    pending_groups_.clear();
  }
  for (auto& task : direct) CancelForShutdown(task);
  DrainLight();
  { std::lock_guard ready_lock(ready_mutex_); }
  ready_cv_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
  // Tasks that waiting threads run themselves end too (stopping_ was set before this read: see RunIfUnclaimed).
  for (InlineCount& count : inline_running_) {
    for (int n = count.running.load(std::memory_order_seq_cst); n != 0; n = count.running.load()) {
      count.running.wait(n);
    }
  }
  FlushReleases();
  if (store_) store_->Shutdown();
}

void Runtime::CancelForShutdown(const std::shared_ptr<Task>& task) {
  if (Claim(*task)) {
    FinishDirect(task, ACCEL_ERROR_CANCELLED,
                 fmt::format("{} was cancelled: the runtime was destroyed first", task->Name()));
  }
}

std::shared_ptr<Task> Runtime::DirectShard::Take(bool newest_too) {
  Task* task = ring.Pop();
  if (task == nullptr && overflow_size.load(std::memory_order_relaxed) > 0) {
    std::lock_guard lock(overflow_lock);
    if (!overflow.empty()) {
      std::shared_ptr<Task> oldest = std::move(overflow.front());
      overflow.pop_front();
      overflow_size.store(overflow.size(), std::memory_order_relaxed);
      return oldest;
    }
  }
  if (task == nullptr && newest_too) task = newest.exchange(nullptr, std::memory_order_acq_rel);
  return task != nullptr ? std::move(task->queued) : nullptr;
}

std::vector<std::shared_ptr<Task>> Runtime::DrainDirect() {
  std::vector<std::shared_ptr<Task>> tasks;
  for (DirectShard& shard : direct_) {
    while (auto task = shard.Take(true)) tasks.push_back(std::move(task));
  }
  return tasks;
}

size_t Runtime::DirectWaiting() const {
  size_t n = 0;
  for (const DirectShard& shard : direct_) n += shard.Size();
  return n;
}

struct Runtime::WorkerView {
  size_t start = 0;  // the first shard it looks at
  // Per shard: its beat when last seen, and since when the worker has seen that beat.
  std::array<uint64_t, kDirectShards> beat{};
  std::array<std::chrono::steady_clock::time_point, kDirectShards> since{};
  bool held_back = false;  // the last look found tasks it left to their clients
};

Runtime::MayTake Runtime::MayTakeFrom(size_t s, size_t n, WorkerView& view) {
  if (clients_->shards[s].n.load(std::memory_order_relaxed) == 0 || n >= kClientDeep ||
      stopping_.load(std::memory_order_relaxed)) {
    return MayTake::kFree;
  }
  const uint32_t clients = clients_->total.load(std::memory_order_relaxed);
  if (clients < cpus_ && helping_.load(std::memory_order_relaxed) < cpus_ - clients) return MayTake::kHelp;
  // Every CPU has a client: the shard is its client's while the client keeps submitting or running its tasks.
  const uint64_t beat = direct_[s].beat.load(std::memory_order_relaxed);
  const auto now = std::chrono::steady_clock::now();
  if (beat != view.beat[s] || view.since[s] == std::chrono::steady_clock::time_point{}) {
    view.beat[s] = beat;
    view.since[s] = now;
  } else if (now - view.since[s] >= client_lease_) {
    return MayTake::kFree;  // its client is away (computing, blocked, gone): the tasks are anyone's
  }
  view.held_back = true;
  return MayTake::kNo;
}

bool Runtime::TryHelp() {
  const uint32_t clients = clients_->total.load(std::memory_order_relaxed);
  const uint32_t allowed = clients < cpus_ ? cpus_ - clients : 0;
  uint32_t helping = helping_.load(std::memory_order_relaxed);
  while (helping < allowed) {
    if (helping_.compare_exchange_weak(helping, helping + 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

Runtime::MayTake Runtime::Admit(size_t s, size_t n, WorkerView& view) {
  const MayTake may = MayTakeFrom(s, n, view);
  if (may == MayTake::kHelp && !TryHelp()) {
    view.held_back = true;
    return MayTake::kNo;
  }
  return may;
}

size_t Runtime::Share(size_t n) const {
  // One at a time unless many wait: a task taken is no other worker's, and a batch of long tasks on one worker
  // would run one after the other while workers idle. From a deep shard or lane, a small share each.
  return n >= kDeepShard ? std::max<size_t>(std::min<size_t>(n / (2 * worker_count_), kMostTaken), 1) : 1;
}

size_t Runtime::StealableMost(WorkerView& view) {
  size_t most = 0;
  for (size_t s = 0; s < kDirectShards; ++s) {
    const size_t n = direct_[s].Size();
    if (n > most && MayTakeFrom(s, n, view) != MayTake::kNo) most = n;
  }
  return most;
}

void Runtime::WakeForClient(size_t queued) {
  if (clients_->total.load(std::memory_order_seq_cst) < cpus_ || watching_.load(std::memory_order_seq_cst) == 0 ||
      queued >= kClientDeep) {
    WakeOne();
  }
}

void Runtime::ClientWaits() {
  t_own_tasks.Leave();
  // The CPU it gave up (or one a client gave up by exiting) may take what waits.
  if (DirectWaiting() > 0 || light_listed_.load(std::memory_order_seq_cst) > 0) WakeOne();
}

bool Runtime::StealDirect(WorkerView& view, size_t at_least, std::vector<std::shared_ptr<Task>>* batch, bool* helping) {
  *helping = false;
  for (size_t i = 0; i < kDirectShards; ++i) {
    const size_t s = (view.start + i) % kDirectShards;
    DirectShard& shard = direct_[s];
    const size_t n = shard.Size();
    if (n < at_least) continue;
    const MayTake may = Admit(s, n, view);
    if (may == MayTake::kNo) continue;
    // Oldest first; the newest only when the grace of a lone task is over (at_least 1).
    for (size_t take = Share(n); take > 0;) {
      std::shared_ptr<Task> task = shard.Take(at_least <= 1);
      if (!task) break;
      if (!task->claimed.load(std::memory_order_relaxed)) {
        batch->push_back(std::move(task));
        --take;
      }
    }
    if (!batch->empty()) {
      *helping = may == MayTake::kHelp;
      return true;
    }
    if (may == MayTake::kHelp) helping_.fetch_sub(1, std::memory_order_relaxed);
  }
  return false;
}

void Runtime::WorkerLoop() {
  t_worker_of = this;
  static std::atomic<size_t> next_start{0};
  WorkerView view;
  view.start = next_start.fetch_add(1, std::memory_order_relaxed);
  std::vector<std::shared_ptr<Task>> batch;
  std::shared_ptr<TaskGroup> light_group;
  std::vector<LightTask> light_batch;
  bool lone_ok = true;
  for (;;) {
    std::shared_ptr<Task> task;
    bool more = false;
    if (ready_size_.load(std::memory_order_relaxed) > 0 || stopping_.load(std::memory_order_relaxed)) {
      std::unique_lock ready_lock(ready_mutex_);
      if (!ready_.empty()) {
        task = std::move(ready_.front());
        ready_.pop_front();
        ready_size_.store(ready_.size(), std::memory_order_relaxed);
        more = !ready_.empty();
      }
    }
    // More than this worker takes: pass the wakeup on (submitters woke no one while this worker spun).
    if (more) WakeOne();
    if (task) {
      std::string message;
      const accel_status_t result = Execute(task, &message);
      {
        std::unique_lock lock(mutex_);
        Shard().Add(&CounterShard::run_out);
        Complete(task, result, std::move(message), lock);
      }
      FlushReleases();
      continue;
    }
    // A lone direct task is left to its submitter for a short grace (it usually waits for it next and runs it
    // itself); two or more, or a lone one after the grace, are stolen.
    bool helping = false;
    if (StealDirect(view, lone_ok ? 1 : 2, &batch, &helping)) {
      lone_ok = false;
      if (StealableMost(view) > 0) WakeOne();  // more than this worker's batch: pass the wakeup on
      for (auto& t : batch) {
        if (stopping_.load(std::memory_order_relaxed)) {
          CancelForShutdown(t);
        } else if (Claim(*t)) {
          RunDirect(t);  // else a waiter or a cancel has it
        }
      }
      batch.clear();
      if (helping) helping_.fetch_sub(1, std::memory_order_relaxed);
      continue;
    }
    if (light_listed_.load(std::memory_order_relaxed) > 0 && StealLight(view, &light_group, &light_batch, &helping)) {
      lone_ok = false;
      RunLightBatch(*light_group, light_batch.data(), light_batch.size(), nullptr);
      light_batch.clear();
      light_group.reset();
      if (helping) helping_.fetch_sub(1, std::memory_order_relaxed);
      continue;
    }
    if (stopping_.load(std::memory_order_seq_cst)) {
      std::lock_guard ready_lock(ready_mutex_);
      if (ready_.empty() && DirectWaiting() == 0 && light_listed_.load() == 0) return;  // nothing left to run
      lone_ok = true;
      continue;
    }
    // A short spin before sleeping: the next task of a stream of small ones usually comes within it, and while
    // a worker spins, submitters wake no one.
    bool found = false;
    spinning_.fetch_add(1, std::memory_order_seq_cst);
    for (int i = 0; i < kWorkerSpins && !found; ++i) {
      if ((i & 127) == 0) {
        // As StealDirect sees it: a shard with two, or with one once the grace is over.
        view.held_back = false;
        const size_t most = std::max(StealableMost(view), LightMost(view));
        lone_ok = i >= kLoneTaskSpins;
        found = ready_size_.load(std::memory_order_relaxed) > 0 || stopping_.load(std::memory_order_relaxed) ||
                most >= 2 || (most == 1 && lone_ok);
        // What waits is its clients' (client slots): watch it asleep, not on a CPU they need.
        if (!found && most == 0 && view.held_back) break;
      }
      // Now and then the core goes to another runnable thread: with more threads than cores (clients and workers),
      // a spinning worker would otherwise take the time of the client whose tasks it waits for.
      if ((i & 127) == 127) {
        std::this_thread::yield();
      } else {
        SpinPause();
      }
    }
    spinning_.fetch_sub(1, std::memory_order_seq_cst);
    if (found) continue;
    std::unique_lock ready_lock(ready_mutex_);
    sleeping_.fetch_add(1, std::memory_order_seq_cst);
    // Pairs with the submitters' check of sleeping_ (and watching_) after their push: one of the two sees the other.
    if (ready_.empty() && !stopping_.load(std::memory_order_seq_cst)) {
      view.held_back = false;
      if (StealableMost(view) == 0 && LightMost(view) == 0) {
        if (view.held_back) {
          // Tasks left to their clients: look again after the lease, when a client that stayed away loses them.
          watching_.fetch_add(1, std::memory_order_seq_cst);
          ready_cv_.wait_for(ready_lock, client_lease_);
          watching_.fetch_sub(1, std::memory_order_seq_cst);
        } else {
          ready_cv_.wait(ready_lock);
        }
      }
    }
    sleeping_.fetch_sub(1, std::memory_order_seq_cst);
    lone_ok = true;  // woken for work: take what there is
  }
}

void Runtime::WakeOne() {
  if (sleeping_.load(std::memory_order_seq_cst) == 0 || spinning_.load(std::memory_order_seq_cst) > 0) return;
  { std::lock_guard ready_lock(ready_mutex_); }  // the sleeper is in its wait, or will see the work
  ready_cv_.notify_one();
}

void Runtime::MakeReady(std::shared_ptr<Task> task) {
  Shard().Add(&CounterShard::run_in);
  {
    std::lock_guard ready_lock(ready_mutex_);
    ready_.push_back(std::move(task));
    ready_size_.store(ready_.size(), std::memory_order_seq_cst);
  }
  // One worker per task made ready, and only when none looks for work: a wakeup costs more than the empty task
  // it starts.
  WakeOne();
}

Runtime::CounterShard& Runtime::Shard() {
  const size_t slot = ThreadSlot();
  return shards_[slot < kOwnedShards ? slot : kOwnedShards + slot % (kCounterShards - kOwnedShards)];
}

// Counts the tasks a waiting thread runs itself, so that Shutdown waits for them as for a worker's.
class Runtime::InlineScope {
 public:
  explicit InlineScope(Runtime& rt) : rt_(rt), running_(rt.inline_running_[ThreadSlot() % kDirectShards].running) {
    running_.fetch_add(1, std::memory_order_seq_cst);
  }
  ~InlineScope() {
    if (running_.fetch_sub(1, std::memory_order_seq_cst) == 1 && rt_.stopping_.load(std::memory_order_seq_cst)) {
      running_.notify_all();
    }
  }
  InlineScope(const InlineScope&) = delete;
  InlineScope& operator=(const InlineScope&) = delete;

 private:
  const Runtime& rt_;
  std::atomic<int>& running_;
};

bool Runtime::RunIfUnclaimed(const std::shared_ptr<Task>& task) {
  if (!task->direct) return false;
  // Counted before the claim (seq_cst both), as in RunOwnQueued: either Shutdown waits for this count, or this sees
  // `stopping_` and leaves the task to the shutdown's cancel (claimed first, it could run on past the shutdown).
  const InlineScope counted(*this);
  if (stopping_.load(std::memory_order_seq_cst) || !Claim(*task)) return false;
  LeaveShard(*task);  // the newest of a submit-then-wait stream, or the oldest of waits in submission order
  RunDirect(task);
  return true;
}

void Runtime::LeaveShard(Task& task) {
  DirectShard& shard = direct_[task.shard];
  Task* expected = &task;
  if (shard.newest.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel) || shard.ring.PopIf(&task)) {
    task.queued.reset();  // the shard's reference; the caller holds another
  }
}

// The shared tenant of tasks without devices, bound once for all the tasks a waiting thread runs itself
// (RunOwnQueued, RunOwnLight), not twice per task.
class Runtime::OwnTenant {
 public:
  explicit OwnTenant(const Runtime& rt) {
    if (outer_ == &rt) return;  // a task of this loop waits for a group in turn: bound already
    accel_thread_set_tenant(rt.no_device_tenant_, &previous_);
    t_running_own_of = &rt;
  }
  ~OwnTenant() {
    if (t_running_own_of == outer_) return;
    t_running_own_of = outer_;
    accel_thread_set_tenant(previous_, nullptr);
  }
  OwnTenant(const OwnTenant&) = delete;
  OwnTenant& operator=(const OwnTenant&) = delete;

 private:
  const Runtime* outer_ = t_running_own_of;
  accel_tenant_t previous_ = nullptr;
};

size_t Runtime::RunOwnQueued(size_t most) {
  DirectShard& shard = direct_[ThreadSlot() % kDirectShards];
  OwnTasks& own = t_own_tasks;
  const bool listed = own.runtime == serial_ && !own.tasks.empty();
  if (shard.Size() == 0 && !listed) return 0;
  const InlineScope counted(*this);
  const OwnTenant bound(*this);
  size_t ran = 0;
  // After the count (seq_cst both): either Shutdown waits for this count, or this sees `stopping_` and takes nothing
  // its drain would have cancelled.
  // The group tasks this thread submitted, newest first, while workers take the oldest from the shard: the two ends
  // meet only near the last one, and a task run here stays in this core's cache from its submission to its end.
  while (listed && ran < most && !own.tasks.empty() && !stopping_.load(std::memory_order_seq_cst)) {
    std::shared_ptr<Task> task = std::move(own.tasks.back());
    own.tasks.pop_back();
    if (!Claim(*task)) continue;  // a worker or a cancel has it
    shard.Beat();                 // client slots
    LeaveShard(*task);
    RunDirect(task);
    ++ran;
  }
  while (ran < most && !stopping_.load(std::memory_order_seq_cst)) {
    std::shared_ptr<Task> task = shard.Take(true);
    if (!task) break;
    if (!Claim(*task)) continue;  // a worker, a waiter or a cancel has it; Take dropped the shard's reference
    shard.Beat();
    RunDirect(task);
    ++ran;
  }
  return ran;
}

void Runtime::RunDirect(const std::shared_ptr<Task>& task) {
  std::string message;
  const accel_status_t result = Execute(task, &message);
  FinishDirect(task, result, std::move(message));
}

void Runtime::FinishDirect(const std::shared_ptr<Task>& task, accel_status_t result, std::string message) {
  task->result = result;
  task->message = std::move(message);
  RecordObjects(*task, result);
  CounterShard& shard = Shard();
  if (task->queue) {
    task->queue->open_work.fetch_sub(1, std::memory_order_relaxed);
    for (Queue* q = task->queue.get(); q != nullptr; q = q->parent.get())
      q->finished.fetch_add(1, std::memory_order_relaxed);
  } else {
    shard.Add(&CounterShard::default_finished);  // see SubmitDirect
  }
  shard.Add(&CounterShard::run_out);
  // Before the future is done: once a wait returns, the user data is released.
  if (auto release = std::exchange(task->release_user_data, nullptr); release != nullptr) release(task->user_data);
  Publish(*task, result);
  ReleaseObjects(*task);
  // Pairs with WatchDependencies: either a dependent's pass sees `done`, or this sees `has_dependents`.
  if (task->has_dependents.load(std::memory_order_seq_cst)) {
    {
      std::unique_lock lock(mutex_);
      ReleaseDependents(*task);
      Schedule(lock);
    }
    FlushReleases();
  }
}

void Runtime::RecordObjects(Task& task, accel_status_t result) {
  if (task.remake) {
    if (auto target = task.remake_for.lock())
      store_->EndRemake(target, task.result_object.object, result, task.message);
    return;  // a remake's result object is nobody's: ReleaseObjects drops it
  }
  if (task.kind != TaskKind::kTask || !task.result_object.object) return;
  if (result != ACCEL_SUCCESS) {
    task.drop_later.push_back(std::exchange(task.result_object, {}));  // no result to give: dropped at the end
    return;
  }
  auto lineage = std::make_shared<TaskLineage>(weak_from_this(), task);
  if (!store_->SetLineage(task.result_object.object, lineage)) task.unused_lineage = std::move(lineage);
}

bool Runtime::ReleaseObjects(Task& task) {
  if (!HoldsObjects(task)) return false;
  auto release = [&](const HeldObject& held) { ReleaseObject(held, store_.get()); };
  for (const HeldObject& held : task.near) release(held);
  task.near.clear();
  for (const HeldObject& held : task.drop_later) release(held);
  task.drop_later.clear();
  if (task.result_object.object && (task.remake || task.result_holders.fetch_sub(1, std::memory_order_acq_rel) == 1)) {
    release(std::exchange(task.result_object, {}));
  }
  task.unused_lineage.reset();  // may release user data
  task.remake_lineage.reset();  // likewise
  return true;
}

void Runtime::WatchDependencies(const Task& task) {
  for (const auto& dep : task.dependencies) {
    if (dep->direct) dep->has_dependents.store(true, std::memory_order_seq_cst);
  }
}

void Runtime::CountEnd(CounterShard& shard, const Task& task, accel_status_t result) {
  if (result == ACCEL_SUCCESS) {
    shard.Add(&CounterShard::finished);
  } else if (result == ACCEL_ERROR_CANCELLED) {
    shard.Add(&CounterShard::cancelled);
  } else {
    shard.Add(&CounterShard::failed);
  }
  LogTask(result == ACCEL_SUCCESS           ? ACCEL_RUNTIME_EVENT_FINISHED
          : result == ACCEL_ERROR_CANCELLED ? ACCEL_RUNTIME_EVENT_CANCELLED
                                            : ACCEL_RUNTIME_EVENT_FAILED,
          task, result);
}

void Runtime::Publish(Task& task, accel_status_t result) {
  CountEnd(Shard(), task, result);
  task.final_result = result;
  if (!task.message.empty()) task.final_message = task.message;  // a success's is empty: no store to its line
  if (TaskGroup* group = task.group(); group != nullptr) {
    // No future, and so no waiter and no dependent: its group's count is what others read.
    task.done.store(true, std::memory_order_release);
    EndInGroup(*group, task, result, task.final_message);
    return;
  }
  task.done.store(true, std::memory_order_seq_cst);
  // Pairs with the waiter's count: a waiter that counted itself before `done` was set is woken under its lock.
  if (task.waiters.load(std::memory_order_seq_cst) > 0) {
    DoneWait& wait = DoneWait::For(&task);
    { std::lock_guard done_lock(wait.mutex); }
    wait.cv.notify_all();
  }
}

void TaskGroup::End(accel_status_t result, std::string_view message) {
  if (result != ACCEL_SUCCESS) {
    std::lock_guard lock(mutex);
    if (failures++ == 0) {
      first_error = result;
      first_message = message;
    }
  }
  CountEnded(1);
}

void TaskGroup::CountEnded(uint64_t n) {
  counts[ThreadSlot() % kCountShards].ended.fetch_add(n, std::memory_order_seq_cst);
  // Pairs with the waiter's count, as Publish's `done` does. Of the ends that find a waiter, the last in that order
  // sees every count before it, and so sees none open.
  if (waiters.load(std::memory_order_seq_cst) > 0 && Open() == 0) {
    { std::lock_guard lock(mutex); }
    ended_cv.notify_all();
  }
}

void TaskGroup::Add() { counts[ThreadSlot() % kCountShards].submitted.fetch_add(1, std::memory_order_seq_cst); }

uint64_t TaskGroup::Open() const {
  // The ends first: a task's end follows its submission, so every end read here has its submission in the sum read
  // after; equal sums leave no task open that was submitted before the ends were read.
  uint64_t ended = 0;
  for (const Counts& c : counts) ended += c.ended.load(std::memory_order_seq_cst);
  uint64_t submitted = 0;
  for (const Counts& c : counts) submitted += c.submitted.load(std::memory_order_seq_cst);
  return submitted - ended;
}

inline uint64_t Runtime::NextTaskId() {
  TaskIdBlock& ids = t_task_ids;
  if (ids.runtime != serial_ || ids.next == ids.end) {
    ids.runtime = serial_;
    ids.next = next_task_.fetch_add(kTaskIdBlock, std::memory_order_relaxed);
    ids.end = ids.next + kTaskIdBlock;
  }
  return ids.next++;
}

TaskGroup::~TaskGroup() {
  for (auto& lane : lanes) delete lane.load(std::memory_order_relaxed);
}

bool Runtime::AddGroup(const std::shared_ptr<TaskGroup>& group) {
  std::lock_guard lock(groups_mutex_);
  if (groups_gone_) return false;
  if (groups_.size() == groups_.capacity()) {
    // Before the list grows: the expired go, so that it holds about twice the live groups at most.
    std::erase_if(groups_, [](const std::weak_ptr<TaskGroup>& g) { return g.expired(); });
  }
  groups_.push_back(group);
  return true;
}

std::vector<std::shared_ptr<TaskGroup>> Runtime::MarkGroupsGone() {
  std::vector<std::shared_ptr<TaskGroup>> live;
  std::lock_guard lock(groups_mutex_);
  for (const auto& weak : groups_) {
    if (auto g = weak.lock()) {
      g->runtime_gone.store(true, std::memory_order_seq_cst);  // before the destroy's seq_cst look at the pins
      live.push_back(std::move(g));
    }
  }
  groups_.clear();
  groups_gone_ = true;
  return live;
}

bool Runtime::SubmitLight(TaskGroup& group, const LightTask& light) {
  const size_t slot = ThreadSlot();
  if (slot >= TaskGroup::kLightSlots || events_.enabled() || stopping_.load(std::memory_order_relaxed)) return false;
  // Only this slot's thread writes its lane's pointer (slots go to one thread at a time).
  LightLane* lane = group.lanes[slot].load(std::memory_order_relaxed);
  if (lane == nullptr) [[unlikely]] {
    lane = new LightLane;
    group.lanes[slot].store(lane, std::memory_order_release);
  }
  if (!lane->HasRoom()) return false;  // only this thread adds to it
  LightTask task = light;
  task.id = NextTaskId();
  // Client slots, as for a group's direct tasks (SubmitDirect).
  const auto shard = static_cast<uint32_t>(slot % kDirectShards);
  const bool as_client = ClientTasks(serial_, clients_, shard, t_worker_of == this).clients != nullptr;
  direct_[shard].Beat();
  // Counted before it can end. Add is a seq_cst read-modify-write, and so is ordered before the load of `listed`:
  // either this sees a worker's unlisting (and lists the group again), or that worker's count of open tasks sees
  // this one (StealLight).
  group.Add();
  if (!group.listed.load(std::memory_order_seq_cst)) ListLight(group);
  lane->Push(task);  // room checked above
  CounterShard& counters = Shard();
  counters.Add(&CounterShard::submitted);
  counters.Add(&CounterShard::placed);
  counters.Add(&CounterShard::run_in);
  if (stopping_.load(std::memory_order_seq_cst)) {
    // The shutdown began and may have drained the lanes already: take it back (unless a drain or a worker did).
    LightTask back;
    if (lane->Pop(&back)) {
      // Its release may destroy the group's handle; the caller's pin then no longer holds the group.
      const std::shared_ptr<TaskGroup> keep = group.shared_from_this();
      RunLight(group, back, true);
    }
  } else if (as_client) {
    // The owner's count (the thieves' end as last read) unless it looks deep: then the lane's.
    const size_t queued = lane->OwnerSize();
    WakeForClient(queued < kClientDeep ? queued : lane->Size());
  } else {
    WakeOne();
  }
  return true;
}

void Runtime::ListLight(TaskGroup& group) {
  std::shared_ptr<TaskGroup> held = group.shared_from_this();  // outside the spin lock
  std::lock_guard lock(light_lock_);
  if (group.listed.exchange(true, std::memory_order_seq_cst)) return;
  light_groups_.push_back(std::move(held));
  light_listed_.store(light_groups_.size(), std::memory_order_seq_cst);
}

size_t Runtime::RunOwnLight(TaskGroup& group) {
  const size_t slot = ThreadSlot();
  if (slot >= TaskGroup::kLightSlots) return 0;
  LightLane* lane = group.lanes[slot].load(std::memory_order_acquire);
  if (lane == nullptr || lane->Size() == 0) return 0;
  const InlineScope counted(*this);
  const OwnTenant bound(*this);
  DirectShard& shard = direct_[slot % kDirectShards];
  size_t ran = 0;
  // A batch at a time (one fence to take it, one count of its successes in the group), newest first; the last few,
  // which thieves may reach, one at a time.
  constexpr size_t kBatch = 16;
  std::array<LightTask, kBatch> batch;
  // After the count (seq_cst both): either Shutdown waits for this count, or this sees `stopping_` and ends the
  // rest as cancelled, with the drain (what this took, it ends as the drain would).
  while (!stopping_.load(std::memory_order_seq_cst)) {
    size_t n = lane->PopBatch(batch.data(), kBatch);
    if (n == 0 && lane->Pop(&batch[0])) n = 1;
    if (n == 0) break;
    RunLightBatch(group, batch.data(), n, &shard);
    ran += n;
  }
  if (stopping_.load(std::memory_order_seq_cst)) {
    // The drain may have passed this lane while a batch held its bottom low (its size then reads 0): what is left,
    // this thread ends as the drain would. Pop and the drain's Steal each take a task once.
    LightTask left;
    while (lane->Pop(&left)) {
      RunLight(group, left, true);
      ++ran;
    }
  }
  return ran;
}

void Runtime::RunLightBatch(TaskGroup& group, const LightTask* tasks, size_t n, DirectShard* beat) {
  uint64_t succeeded = 0;
  for (size_t i = 0; i < n; ++i) {
    if (beat != nullptr) beat->Beat();
    if (RunLight(group, tasks[i], stopping_.load(std::memory_order_relaxed), true)) ++succeeded;
  }
  if (succeeded > 0) group.CountEnded(succeeded);  // one count for the batch
}

bool Runtime::RunLight(TaskGroup& group, const LightTask& light, bool cancel, bool defer) {
  std::unique_ptr<LightFrames>& frames = t_light_frames;
  if (!frames) [[unlikely]]
    frames = std::make_unique<LightFrames>();
  const size_t depth = frames->depth;
  const std::shared_ptr<Task>& frame =
      depth < LightFrames::kFixed && frames->fixed[depth] ? frames->fixed[depth] : frames->At(depth);
  struct Level {
    size_t& depth;
    explicit Level(size_t& d) : depth(d) { ++depth; }
    ~Level() { --depth; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;
  } level(frames->depth);
  Task& t = *frame;
  t.owner = this;
  t.runtime_handle = handle_;
  t.id = light.id;
  t.function = light.function;
  t.user_data = light.user_data;
  t.release_user_data = light.release_user_data;
  t.light_group = &group;
  t.direct = true;
  t.state = TaskState::kRunning;
  // What Execute and FinishDirect do for a direct task, less what a light one cannot have (devices, a queue,
  // objects, dependents, a future).
  accel_status_t result = ACCEL_SUCCESS;
  std::string message;
  if (cancel) {
    result = ACCEL_ERROR_CANCELLED;
    message = fmt::format("{} was cancelled: the runtime was destroyed first", t.Name());
  } else {
    LogTask(ACCEL_RUNTIME_EVENT_STARTED, t);
    if (group.cancelled.load(std::memory_order_acquire)) {
      result = ACCEL_ERROR_CANCELLED;
      message = fmt::format("{} was cancelled before it started (its {} was cancelled)", t.Name(), group.label);
    } else {
      result = CallFunction(frame, t.function, t.user_data, no_device_tenant_, &message);
    }
  }
  t.result = result;
  CounterShard& counters = Shard();
  counters.Add(&CounterShard::default_finished);
  counters.Add(&CounterShard::run_out);
  if (auto release = std::exchange(t.release_user_data, nullptr); release != nullptr) release(t.user_data);
  CountEnd(counters, t, result);
  const bool deferred = defer && result == ACCEL_SUCCESS;
  if (!deferred) EndInGroup(group, t, result, message);
  t.light_group = nullptr;
  t.user_data = nullptr;
  t.release_user_data = nullptr;
  return deferred;
}

size_t Runtime::LightMost(WorkerView& view) {
  if (light_listed_.load(std::memory_order_relaxed) == 0) return 0;
  size_t most = 0;
  std::lock_guard lock(light_lock_);
  for (const auto& g : light_groups_) {
    for (size_t slot = 0; slot < TaskGroup::kLightSlots; ++slot) {
      const LightLane* lane = g->lanes[slot].load(std::memory_order_acquire);
      const size_t n = lane != nullptr ? lane->Size() : 0;
      if (n > most && MayTakeFrom(slot % kDirectShards, n, view) != MayTake::kNo) most = n;
    }
  }
  return most;
}

void Runtime::DrainLight() {
  std::vector<std::shared_ptr<TaskGroup>> groups;
  {
    std::lock_guard lock(light_lock_);
    groups.swap(light_groups_);
    light_listed_.store(0, std::memory_order_seq_cst);
  }
  for (const auto& g : groups) {
    g->listed.store(false, std::memory_order_seq_cst);
    for (auto& lane_ptr : g->lanes) {
      LightLane* lane = lane_ptr.load(std::memory_order_acquire);
      LightTask task;
      while (lane != nullptr && lane->Size() > 0) {
        if (lane->Steal(&task)) RunLight(*g, task, true);
      }
    }
  }
}

bool Runtime::StealLight(WorkerView& view, std::shared_ptr<TaskGroup>* group, std::vector<LightTask>* batch,
                         bool* helping) {
  *helping = false;
  std::vector<std::shared_ptr<TaskGroup>> unlisted;  // dropped outside the lock
  bool found = false;
  {
    std::lock_guard lock(light_lock_);
    for (size_t i = 0; i < light_groups_.size() && !found;) {
      const size_t at = (light_next_ + i) % light_groups_.size();
      const std::shared_ptr<TaskGroup>& g = light_groups_[at];
      for (size_t slot = 0; slot < TaskGroup::kLightSlots && !found; ++slot) {
        LightLane* lane = g->lanes[slot].load(std::memory_order_acquire);
        const size_t n = lane != nullptr ? lane->Size() : 0;
        if (n == 0) continue;
        const MayTake may = Admit(slot % kDirectShards, n, view);
        if (may == MayTake::kNo) continue;
        LightTask task;
        for (size_t take = Share(n); take > 0 && lane->Steal(&task); --take) batch->push_back(task);
        if (batch->empty()) {
          if (may == MayTake::kHelp) helping_.fetch_sub(1, std::memory_order_relaxed);
          continue;
        }
        *group = g;
        *helping = may == MayTake::kHelp;
        light_next_ = at + 1;
        found = true;
      }
      if (found) break;
      // Nothing taken here: a group with nothing open leaves the list. Unlisted first, then its count read (seq_cst
      // both): a submission either finds it unlisted and lists it again, or is counted in what this reads.
      if (g->listed.load(std::memory_order_relaxed)) {
        g->listed.store(false, std::memory_order_seq_cst);
        if (g->Open() > 0) {
          g->listed.store(true, std::memory_order_seq_cst);
        } else {
          unlisted.push_back(std::move(light_groups_[at]));
          light_groups_[at] = std::move(light_groups_.back());
          light_groups_.pop_back();
          light_listed_.store(light_groups_.size(), std::memory_order_seq_cst);
          continue;  // `at` holds another group now
        }
      }
      ++i;
    }
  }
  return found;
}

void Runtime::CancelGroupTasks(const TaskGroup& group) {
  {
    std::unique_lock lock(mutex_);
    std::vector<std::shared_ptr<Task>> marked;
    auto mark = [&](const std::shared_ptr<Task>& t) {
      if (t->task_group.get() == &group && !t->cancel_requested) marked.push_back(t);
    };
    for (const auto& t : queue_) mark(t);
    for (const auto& t : blocked_) mark(t);
    for (const auto& t : unblocked_) mark(t);
    if (marked.empty()) return;
    for (const auto& t : marked) {
      t->cancel_requested = true;
      Unblock(t);  // the next pass ends it
    }
    Schedule(lock);
  }
  FlushReleases();
}

void Runtime::LogTaskOn(accel_runtime_event_kind_t kind, const Task& task, accel_status_t status) {
  const uint32_t device = task.ranks.empty() ? EventLog::kNoDevice : task.ranks.front();
  events_.Record(kind, task.id, task.Name(), device, static_cast<uint32_t>(task.ranks.size()), status);
}

void Runtime::Start(const std::shared_ptr<Task>& task) {
  task->state = TaskState::kRunning;
  if (Counted(*task)) {
    Shard().Add(&CounterShard::placed);
    LogTask(ACCEL_RUNTIME_EVENT_PLACED, *task);
  }
  if (task->kind == TaskKind::kActorInit) task->actor->busy = true;
  MakeReady(task);
}

accel_status_t Runtime::ReadRequest(const accel_resource_request_t* in, std::string_view field, bool in_group,
                                    Request* out, std::string* why) const {
  auto fail = [&](accel_status_t code, std::string text) {
    *why = std::move(text);
    return code;
  };
  if (in == nullptr) return ACCEL_SUCCESS;  // no device
  if (in->stype != ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST) {
    return fail(ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'{}' has stype {}, expected {}", field, in->stype,
                                                          static_cast<int>(ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST)));
  }
  if (in->struct_size < 16) {
    return fail(ACCEL_ERROR_INVALID_ARGUMENT,
                fmt::format("'{}' has struct_size {}, smaller than the 16-byte header", field, in->struct_size));
  }
  accel_resource_request_t r{};
  std::memcpy(&r, in, std::min<size_t>(in->struct_size, sizeof(r)));
  if (r.reserved0 != 0 || r.reserved1 != 0) {
    return fail(ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'{}->reserved0' and 'reserved1' must be 0", field));
  }
  Request q;
  q.device_count = r.device_count;
  const std::string selector = r.selector != nullptr ? r.selector : "";
  if (r.device_count == 0) {
    if (in_group) return fail(ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'{}->device_count' is 0", field));
    if (!selector.empty()) {
      return fail(ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'{}->selector' is set but '{}->device_count' is 0", field, field));
    }
    if (r.placement_group != nullptr) {
      return fail(ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'{}->placement_group' is set but '{}->device_count' is 0", field, field));
    }
    *out = q;
    return ACCEL_SUCCESS;
  }
  if (std::isnan(r.share) || r.share <= 0.0 || r.share > 1.0) {
    return fail(ACCEL_ERROR_INVALID_ARGUMENT,
                fmt::format("'{}->share' is {}: a share of a device must be in (0, 1]", field, r.share));
  }
  q.share = r.share;
  q.memory = r.memory;
  std::optional<selector::Selector> parsed;
  if (!selector.empty()) {
    auto p = selector::Parse(selector);
    if (!p) return fail(ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'{}->selector' {}", field, p.error().ToString()));
    parsed = std::move(p).value();
  }
  q.selector = selector;
  if (r.placement_group != nullptr) {
    if (in_group) {
      return fail(ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'{}->placement_group' must be NULL in a placement group's bundle", field));
    }
    std::string what;
    auto found =
        HandleTable::Get().Find(reinterpret_cast<uint64_t>(r.placement_group), HandleType::kPlacementGroup, &what);
    if (!found) return fail(ACCEL_ERROR_INVALID_HANDLE, fmt::format("'{}->placement_group' {}", field, what));
    q.group = std::static_pointer_cast<PlacementGroup>(found);
    if (q.group->runtime.lock().get() != this) {
      return fail(ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'{}->placement_group' is a placement group of another runtime", field));
    }
    if (r.bundle_index >= q.group->bundle_count) {
      return fail(ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'{}->bundle_index' {} is past the group's {} bundle(s)",
                                                            field, r.bundle_index, q.group->bundle_count));
    }
    q.bundle = r.bundle_index;
    if (q.memory == 0) {
      // A share of the bundle's memory, in proportion to the share of its compute (of what the bundle asked, while
      // its group is pending).
      std::lock_guard lock(mutex_);
      for (const auto& slot : q.group->slots) {
        if (slot.bundle != q.bundle) continue;
        const double part = std::min(1.0, static_cast<double>(ShareUnits(q.share)) / static_cast<double>(slot.share));
        q.memory = static_cast<uint64_t>(static_cast<double>(slot.memory) * part);
        break;
      }
      if (q.group->pending && q.bundle < q.group->gang.bundles.size()) {
        const planner::Bundle& b = q.group->gang.bundles[q.bundle];
        const double part = std::min(1.0, q.share / b.share);
        q.memory = static_cast<uint64_t>(static_cast<double>(b.memory) * part);
      }
    }
  } else if (q.memory == 0) {
    // `share` of the smallest matching device's memory: reserved, like any other bytes.
    uint64_t smallest = 0;
    const auto& devices = resources_.cluster->devices();
    for (size_t i = 0; i < devices.size(); ++i) {
      if (parsed && !parsed->Matches(devices[i].attributes)) continue;
      if (smallest == 0 || devices[i].memory < smallest) smallest = devices[i].memory;
    }
    q.memory = static_cast<uint64_t>(static_cast<double>(smallest) * q.share);
  }
  *out = std::move(q);
  return ACCEL_SUCCESS;
}

planner::Gang Runtime::GangOf(const Request& request) const {
  planner::Gang gang;
  planner::Bundle b;
  b.devices = request.device_count;
  b.share = request.share;
  b.memory = request.memory;
  b.selector = request.selector;
  gang.bundles.push_back(std::move(b));
  gang.strategy = planner::Strategy::kPack;  // a multi-device task gets its nearest devices
  gang.level = planner::Level::kClique;
  return gang;
}

accel_status_t Runtime::Feasible(const Request& request, std::string* why) const {
  if (request.device_count == 0) return ACCEL_SUCCESS;
  if (request.group && request.group->pending) {
    // What the bundle will hold once placed: the amounts it asked for on each of its devices.
    const planner::Bundle& b = request.group->gang.bundles[request.bundle];
    if (b.devices >= request.device_count && ShareUnits(b.share) >= ShareUnits(request.share) &&
        b.memory >= request.memory) {
      return ACCEL_SUCCESS;
    }
    *why = fmt::format(
        "bundle {} of placement group '{}' asks {} device(s) with share {:g} and {} each; the task asks {} "
        "device(s) with share {:g} and {}",
        request.bundle, request.group->name, b.devices, b.share, Bytes(b.memory), request.device_count, request.share,
        Bytes(request.memory));
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  }
  if (request.group) {
    uint32_t fit = 0;
    uint32_t held = 0;
    uint32_t lost = 0;
    for (const auto& slot : request.group->slots) {
      if (slot.bundle != request.bundle) continue;
      ++held;
      if (planner_.disabled(slot.rank)) {  // TryPlace never places on it: a task waiting for it would wait forever
        ++lost;
        continue;
      }
      if (slot.share >= ShareUnits(request.share) && slot.memory >= request.memory) ++fit;
    }
    if (fit >= request.device_count) return ACCEL_SUCCESS;
    *why = fmt::format(
        "bundle {} of placement group '{}' holds {} device(s) ({} lost), {} of them with share {:g} and {} for "
        "the task; it asks {} device(s)",
        request.bundle, request.group->name, held, lost, fit, request.share, Bytes(request.memory),
        request.device_count);
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  }
  const auto& devices = resources_.cluster->devices();
  if (!request.selector.empty()) {
    auto parsed = selector::Parse(request.selector);
    uint32_t matching = 0;
    std::string misses;
    for (size_t i = 0; i < devices.size(); ++i) {
      if (planner_.disabled(static_cast<uint32_t>(i))) continue;
      if (parsed->Matches(devices[i].attributes)) {
        ++matching;
      } else if (i < 4) {
        misses += fmt::format("{}{}: {}", misses.empty() ? "" : "; ", resources_.devices[i].label,
                              parsed->Explain(devices[i].attributes));
      }
    }
    if (matching == 0) {
      *why = fmt::format("selector '{}' matches none of the {} device(s) in service: {}{}", request.selector,
                         devices.size(), misses, devices.size() > 4 ? "; ..." : "");
      return ACCEL_ERROR_NOT_FOUND;
    }
  }
  auto placed = PlaceAllFree(GangOf(request));
  if (placed) return ACCEL_SUCCESS;
  *why = fmt::format("no device of the runtime could ever hold it, even all free: {}", placed.error().message);
  return ACCEL_ERROR_RESOURCE_EXHAUSTED;
}

planner::Expected<planner::Placement> Runtime::PlaceAllFree(const planner::Gang& gang) const {
  planner::Planner scratch(*resources_.cluster);
  for (uint32_t i = 0; i < resources_.devices.size(); ++i) {
    if (planner_.disabled(i)) scratch.Disable(i);
  }
  return scratch.Place(gang);
}

std::string Runtime::BeyondLimits(const Queue* leaf, int64_t share, uint64_t memory) const {
  for (const Queue* q = leaf; q != nullptr; q = q->parent.get()) {
    if ((q->limit_share > 0 && share > q->limit_share) || (q->limit_memory > 0 && memory > q->limit_memory)) {
      return fmt::format(
          "it asks {:g} device(s) and {} in all, more than queue '{}' may ever hold ({:g} device(s), {})",
          Devices(share), Bytes(memory), q->name, Devices(q->limit_share),
          q->limit_memory > 0 ? Bytes(q->limit_memory) : std::string("no memory limit"));
    }
  }
  return "";
}

accel_status_t Runtime::SubmitDirect(const std::shared_ptr<Task>& task, std::string* why) {
  // A task of the default queue keeps a null `queue` and touches no line shared with other threads: the default
  // queue never has children nor is destroyed, so its open work need not be counted, and its finished tasks are
  // counted in the thread's shard (Usage adds them).
  if (task->queue) {
    // Counted first, then checked; CreateQueue does the reverse: one of the two sees the other.
    task->queue->open_work.fetch_add(1, std::memory_order_seq_cst);
    if (task->queue->children.load(std::memory_order_seq_cst) > 0) {
      task->queue->open_work.fetch_sub(1, std::memory_order_seq_cst);
      *why = fmt::format("queue '{}' has child queues: tasks and actors go to leaf queues", task->queue->name);
      return ACCEL_ERROR_INVALID_ARGUMENT;
    }
  }
  task->id = NextTaskId();
  // An unnamed direct task's name ("task 7") is made when a message needs it (Task::Name).
  if (!task->name.empty()) task->name = fmt::format("task {} ('{}')", task->id, task->name);
  task->direct = true;
  task->state = TaskState::kRunning;
  CounterShard& shard = Shard();
  shard.Add(&CounterShard::submitted);
  shard.Add(&CounterShard::placed);
  shard.Add(&CounterShard::run_in);
  LogTask(ACCEL_RUNTIME_EVENT_SUBMITTED, *task);
  LogTask(ACCEL_RUNTIME_EVENT_PLACED, *task);
  task->shard = static_cast<uint32_t>(ThreadSlot() % kDirectShards);
  DirectShard& ds = direct_[task->shard];
  bool as_client = false;  // submitted by a thread that holds a client slot
  if (task->task_group) {
    // Client slots: the thread holds one from its first group submission until a group wait of its blocks or
    // returns.
    OwnTasks& own = ClientTasks(serial_, clients_, task->shard, t_worker_of == this);
    as_client = own.clients != nullptr;
    ds.Beat();
    if (own.tasks.size() >= kMostOwnTasks) {
      own.tasks.erase(own.tasks.begin(), own.tasks.begin() + static_cast<std::ptrdiff_t>(kMostOwnTasks / 2));
    }
    own.tasks.push_back(task);
  }
  task->queued = task;
  // The newest waits where its submitter may take it back; the one it displaces goes to the ring. The exchange is
  // seq_cst: it pairs with a worker's count of sleeping_ and with the shutdown's store of stopping_ (the loads
  // below), so that one side of each pair sees the other.
  if (Task* older = ds.newest.exchange(task.get(), std::memory_order_seq_cst); older != nullptr) {
    if (!ds.ring.Push(older)) {
      std::lock_guard lock(ds.overflow_lock);
      ds.overflow.push_back(std::move(older->queued));
      ds.overflow_size.store(ds.overflow.size(), std::memory_order_relaxed);
    }
  }
  if (stopping_.load(std::memory_order_seq_cst)) {
    // The shutdown began between the check in Submit and here and may have drained the shards already: the task
    // ends cancelled, as a queued one does (the claim decides who ends it; the destructor frees what stays queued).
    CancelForShutdown(task);
  } else if (as_client) {
    WakeForClient(ds.Size());
  } else {
    WakeOne();
  }
  return ACCEL_SUCCESS;
}

accel_status_t Runtime::Submit(const std::shared_ptr<Task>& task, std::string* why) {
  if (stopping_) {
    *why = "the runtime is being destroyed";
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  if (task->dependencies.empty() && task->request.device_count == 0 && !task->request.group &&
      task->kind == TaskKind::kTask && task->max_retries == 0) {
    // Nothing to wait for, nothing to hold, nothing to retry: the direct path, without the runtime's lock.
    return SubmitDirect(task, why);
  }
  {
    std::unique_lock lock(mutex_);
    if (stopping_) {
      *why = "the runtime is being destroyed";
      return ACCEL_ERROR_FAILED_PRECONDITION;
    }
    const accel_status_t feasible = Feasible(task->request, why);
    if (feasible != ACCEL_SUCCESS) return feasible;
    if (!task->queue) task->queue = default_queue_;
    if (task->queue->children > 0) {
      *why = fmt::format("queue '{}' has child queues: tasks and actors go to leaf queues", task->queue->name);
      return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    if (!task->request.group) {
      const auto [share, memory] = Need(task->request);
      *why = BeyondLimits(task->queue.get(), share, memory);
      if (!why->empty()) return ACCEL_ERROR_RESOURCE_EXHAUSTED;
    }
    ++task->queue->open_work;
    task->id = next_task_++;
    task->name =
        task->name.empty() ? fmt::format("task {}", task->id) : fmt::format("task {} ('{}')", task->id, task->name);
    Shard().Add(&CounterShard::submitted);
    LogTask(ACCEL_RUNTIME_EVENT_SUBMITTED, *task);
    WatchDependencies(*task);
    Enqueue(task);
    ScheduleSubmitted(lock, task);
  }
  FlushReleases();
  return ACCEL_SUCCESS;
}

void Runtime::Enqueue(const std::shared_ptr<Task>& task) {
  if (task->kind == TaskKind::kTask && !task->dependencies.empty()) {
    // After WatchDependencies, and one read of `done` per dependency: a direct dependency either reads `done` here,
    // or its end sees `has_dependents` and takes this lock to release the task (FinishDirect).
    size_t first_open = task->dependencies.size();
    bool failed = false;
    for (size_t i = 0; i < task->dependencies.size(); ++i) {
      const Task* dep = task->dependencies[i].get();
      if (dep->done.load(std::memory_order_seq_cst)) {
        failed = failed || dep->result != ACCEL_SUCCESS;
        continue;
      }
      auto& list = dependents_[dep];
      if (!list.empty() && list.back() == task) continue;  // named twice: released once
      list.push_back(task);
      ++task->unmet;
      if (first_open == task->dependencies.size()) first_open = i;
    }
    if (task->unmet > 0 && !failed) {  // a failed one ends it in the next pass
      task->blocked = true;
      task->message = WaitingFor(*task, first_open);
      blocked_.insert(task);
      return;
    }
  }
  queue_.push_back(task);
}

void Runtime::Unblock(const std::shared_ptr<Task>& task) {
  if (!task->blocked) return;
  task->blocked = false;
  blocked_.erase(task);
  unblocked_.push_back(task);  // not queue_: a pass may be reading it (Schedule moves them over)
}

void Runtime::ReleaseDependents(const Task& dependency) {
  auto it = dependents_.find(&dependency);
  if (it == dependents_.end()) return;
  std::vector<std::shared_ptr<Task>> dependents = std::move(it->second);
  dependents_.erase(it);
  for (const auto& task : dependents) {
    if (!task->blocked) continue;  // released already (another dependency failed, or it was cancelled)
    if (task->unmet > 0) --task->unmet;
    if (task->unmet == 0 || dependency.result != ACCEL_SUCCESS) {
      Unblock(task);
      continue;
    }
    for (size_t i = 0; i < task->dependencies.size(); ++i) {
      if (!task->dependencies[i]->done.load(std::memory_order_seq_cst)) {
        task->message = WaitingFor(*task, i);
        break;
      }
    }
  }
}

void Runtime::Cancel(const std::shared_ptr<Task>& task) {
  if (task->direct) {
    task->cancel_requested = true;
    if (Claim(*task))
      FinishDirect(task, ACCEL_ERROR_CANCELLED, fmt::format("{} was cancelled before it started", task->Name()));
    return;
  }
  {
    std::unique_lock lock(mutex_);
    task->cancel_requested = true;
    Unblock(task);  // the next pass ends it
    if (task->state == TaskState::kWaiting || task->state == TaskState::kPending) Schedule(lock);
  }
  FlushReleases();
}

void Runtime::FlushReleases() {
  if (!releases_due_.load(std::memory_order_acquire)) return;  // the common case: no lock taken
  std::vector<std::shared_ptr<Task>> tasks;
  std::vector<std::shared_ptr<Actor>> actors;
  {
    std::lock_guard lock(mutex_);
    tasks.swap(to_release_);
    actors.swap(actors_to_release_);
    releases_due_.store(false, std::memory_order_release);
  }
  for (auto& task : tasks) {
    ReleaseObjects(*task);
    auto release = task->release_user_data;
    task->release_user_data = nullptr;
    if (release != nullptr) release(task->user_data);
  }
  for (auto& actor : actors) {
    auto release = actor->release_user_data;
    actor->release_user_data = nullptr;
    if (release != nullptr) release(actor->user_data);
  }
}

void Runtime::ScheduleSubmitted(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Task>& task) {
  Task& t = *task;
  // What a full pass would decide differently for the others, or for this task's place among them, needs one.
  if (!delta_ok_ || FullPassDue() || t.blocked || !t.dependencies.empty() || t.kind != TaskKind::kTask ||
      t.request.group || t.cancel_requested || queue_.empty() || queue_.back() != task || UnderQuota(*t.queue)) {
    Schedule(lock);
    return;
  }
  // The others found no room with at least the capacity free now, and nothing this pass could change makes them
  // fit: only the new task may start, as it would in a full pass (it is tried at its turn there, and no hold nor
  // waiting queue under its quota stands before it).
  try {
    TrySubmittedAlone(task);
  } catch (...) {
    DropDelta();  // the task may be queued but not in waiting_: the next pass is a full one
    throw;
  }
}

bool Runtime::FullPassDue() const {
  return stopping_ || !pending_groups_.empty() || !unblocked_.empty() || !holding_.empty();
}

bool Runtime::AddWaiting(const std::shared_ptr<Task>& task) {
  const Task& t = *task;
  // A queue with a quota reclaims and holds when under it, and its standing changes as tasks start: full passes.
  if (t.queue->quota_share > 0 || t.queue->quota_memory > 0) return false;
  auto& tasks = waiting_[t.queue.get()].try_emplace(Shape(ShapeOf(t.request))).first->second;
  tasks.emplace_hint(tasks.end(), WaitOrder{-static_cast<int64_t>(t.priority), t.id}, task);  // usually the last
  return true;
}

void Runtime::DropDelta() noexcept {
  delta_ok_ = false;
  waiting_.clear();
  waiting_built_ = false;
  no_room_.clear();
  ReleaseHold();
}

void Runtime::TrySubmittedAlone(const std::shared_ptr<Task>& task) {
  Task& t = *task;
  t.state = TaskState::kPending;
  const auto started = [&] {
    Start(task);
    queue_.pop_back();
  };
  if (t.request.device_count == 0) {
    if (TryPlace(t)) started();
    return;
  }
  const auto shape = ShapeOf(t.request);
  // It waits: with the others of its shape, when they are kept (waiting_); when its queue has a quota, they are not
  // kept any more, and the next ending's pass is a full one.
  const auto waits = [&] {
    if (waiting_built_ && !AddWaiting(task)) {
      waiting_.clear();
      waiting_built_ = false;
    }
  };
  const auto [need_share, need_memory] = Need(t.request);
  if (std::string limit = OverLimit(t.queue.get(), need_share, need_memory, "task"); !limit.empty()) {
    t.message = std::move(limit);
    waits();
    return;
  }
  if (const auto known = no_room_.find(shape); known != no_room_.end()) {
    t.message = known->second;
    waits();
    return;
  }
  if (TryPlace(t)) {
    Charge(t, +1);
    if (t.preemptible) preemptible_[t.id] = task;
    started();
    return;
  }
  no_room_.emplace(Shape(shape), t.message);
  // A full pass would hold devices for it from the smaller requests after it (HoldForTask): theirs are full passes.
  if (t.request.device_count >= 2) delta_ok_ = false;
  waits();
}

bool Runtime::BuildWaiting() {
  waiting_.clear();
  waiting_built_ = false;
  for (const auto& task : queue_) {
    const Task& t = *task;
    if (t.state != TaskState::kPending || t.kind != TaskKind::kTask || t.request.device_count == 0 || t.request.group ||
        t.cancel_requested || !AddWaiting(task)) {
      waiting_.clear();
      return false;
    }
  }
  waiting_built_ = true;
  return true;
}

void Runtime::ScheduleEnded(std::unique_lock<std::mutex>& lock, bool clean) {
  if (!clean || FullPassDue() || (!waiting_built_ && !BuildWaiting())) {
    Schedule(lock);
    return;
  }
  try {
    if (!TryEndedByShape()) Schedule(lock);
  } catch (...) {
    DropDelta();
    throw;
  }
}

bool Runtime::TryEndedByShape() {
  // Every waiting task found no room before this release, and its queue has no quota (no reclaim, no hold for a
  // queue under it). A full pass (PlaceByQueue) would take, at each step, the next task of the leaf queue reached by
  // descending through the siblings' order; a task whose shape found no room earlier in the pass, or that would take
  // its queue past a limit, changes nothing. So each leaf's next task of a shape that may still fit is tried, in that
  // order, and after one that is placed the next of its shape.
  no_room_.clear();
  using Head = std::pair<WaitOrder, WaitingShapes::iterator>;
  const auto later = [](const Head& a, const Head& b) { return a.first > b.first; };
  struct Node {
    const Queue* queue = nullptr;  // null: the top level
    Node* parent = nullptr;
    std::vector<Node*> children;
    size_t active = 0;                // leaves below (or this one) with heads left
    WaitingShapes* shapes = nullptr;  // a leaf's
    std::vector<Head> heads;          // a leaf's: the first task of each shape that may still fit, a min-heap
  };
  std::unordered_map<const Queue*, Node> nodes;
  Node& root = nodes[nullptr];
  for (auto& [queue, shapes] : waiting_) {
    if (shapes.empty()) continue;
    Node& leaf = TreeNode(nodes, queue);
    leaf.shapes = &shapes;
    for (auto it = shapes.begin(); it != shapes.end(); ++it) leaf.heads.emplace_back(it->second.begin()->first, it);
    std::make_heap(leaf.heads.begin(), leaf.heads.end(), later);
    for (Node* a = &leaf; a != nullptr; a = a->parent) ++a->active;
  }
  for (;;) {
    Node* at = &root;
    while (at->shapes == nullptr) {
      Node* best = nullptr;
      for (Node* c : at->children) {
        if (c->active > 0 && (best == nullptr || SiblingOrder(*c->queue) < SiblingOrder(*best->queue))) best = c;
      }
      if (best == nullptr) break;
      at = best;
    }
    if (at->shapes == nullptr) break;  // nothing left to try
    std::pop_heap(at->heads.begin(), at->heads.end(), later);
    const auto shape = at->heads.back().second;
    at->heads.pop_back();
    auto& tasks = shape->second;
    const std::shared_ptr<Task> task = tasks.begin()->second;
    Task& t = *task;
    if (t.cancel_requested) {
      // Asked to stop without a pass (accel_future_cancel while the runtime's destroy began): a full pass ends it.
      ReleaseHold();
      return false;
    }
    const auto [need_share, need_memory] = Need(t.request);
    std::string limit;
    if (no_room_.find(shape->first) != no_room_.end()) {
      // found no room in another queue's try: so does every one of this shape, in this pass
    } else if (limit = OverLimit(t.queue.get(), need_share, need_memory, "task"); !limit.empty()) {
      t.message = std::move(limit);  // and every later one of the shape: its queue's usage only grows in a pass
    } else if (!TryPlace(t)) {
      no_room_.emplace(shape->first, t.message);
      HoldForTask(t);  // as a full pass would: from the tries after it in this pass
    } else {
      Charge(t, +1);
      if (t.preemptible) preemptible_[t.id] = task;
      Start(task);
      // The oldest waiting tasks are near the front: the search and the deque's erase stop early.
      if (auto where = std::find(queue_.begin(), queue_.end(), task); where != queue_.end()) queue_.erase(where);
      tasks.erase(tasks.begin());
      if (tasks.empty()) {
        at->shapes->erase(shape);
      } else {
        at->heads.emplace_back(tasks.begin()->first, shape);
        std::push_heap(at->heads.begin(), at->heads.end(), later);
      }
    }
    if (at->heads.empty()) {
      for (Node* a = at; a != nullptr; a = a->parent) --a->active;
    }
  }
  std::erase_if(waiting_, [](const auto& entry) { return entry.second.empty(); });
  delta_ok_ = holding_.empty();
  ReleaseHold();
  return true;
}

void Runtime::Schedule(std::unique_lock<std::mutex>& lock) {
  DropDelta();  // anything may have changed: each request shape asks the planner again
  // A member, not a local: a pass per submission must not allocate it anew. Pointers to queue_'s own references
  // (a pass reads thousands of tasks; copying each reference twice per pass was a third of its time): queue_ keeps its
  // elements where they are until the pass's end, which takes out those that ended or started.
  std::vector<const std::shared_ptr<Task>*>& candidates = schedule_candidates_;
  bool progress = true;
  // Ending a task can release its dependents in the same pass: repeat until stable.
  while (progress) {
    progress = false;
    for (auto& task : unblocked_) queue_.push_back(std::move(task));
    unblocked_.clear();
    ReleaseHold();
    // Pending placement groups first, oldest first (docs/scheduler.md, "Placement groups"): a gang that fits now is
    // placed before single tasks take the room.
    for (auto it = pending_groups_.begin(); it != pending_groups_.end();) {
      PlacementGroup& g = **it;
      if (!g.destroyed && !stopping_) {
        std::string why;
        if (PlaceGroup(g, &why) != ACCEL_SUCCESS) {
          // Within its queue's quota, it reclaims as a waiting task does: only when the whole gang stays within it
          // (a gang is large; a queue's quota is what it may take back from others, not a start past it).
          if (g.queue && UnderQuota(*g.queue)) {
            const Queue& q = *g.queue;
            const auto [share, memory] = GangNeed(g.gang);
            if ((q.quota_share > 0 && q.used_share + share > q.quota_share) ||
                (q.quota_memory > 0 && q.used_memory + memory > q.quota_memory)) {
              why += fmt::format(
                  "; queue '{}' is under its quota, but the group ({:g} device(s), {}) would take it past its "
                  "quota ({:g} device(s) of {:g} held): it waits for free capacity",
                  q.name, Devices(share), Bytes(memory), Devices(q.used_share), Devices(q.quota_share));
            } else {
              why += Reclaim(g.gang, g.queue.get())
                         ? fmt::format(
                               "; queue '{}' is under its quota: preempted work of queues over theirs is "
                               "stopping to make room",
                               q.name)
                         : fmt::format(
                               "; queue '{}' is under its quota, but no preemptible work of a queue over "
                               "its quota would make room",
                               q.name);
            }
          }
          g.message = std::move(why);
          ++it;
          continue;
        }
        g.pending = false;
        progress = true;  // placed: its waiting tasks may start
      }
      g.placed_cv.notify_all();  // placed, or never will be (its waits end)
      it = pending_groups_.erase(it);
    }
    HoldForPendingGroup();
    candidates.clear();
    std::unordered_set<const Actor*> blocked;  // actors whose next call in order cannot start now
    for (const std::shared_ptr<Task>& task : queue_) {
      if (task->state == TaskState::kDone || task->state == TaskState::kRunning) continue;  // by an earlier round
      if (task->cancel_requested) {
        Finish(task, ACCEL_ERROR_CANCELLED, fmt::format("{} was cancelled before it started", task->Name()));
        progress = true;
        continue;
      }
      if (task->request.group && task->request.group->destroyed) {
        Finish(task, ACCEL_ERROR_CANCELLED,
               fmt::format("{} was cancelled: placement group '{}' was destroyed", task->Name(),
                           task->request.group->name));
        progress = true;
        continue;
      }
      if (task->kind == TaskKind::kActorCall && task->actor->state == ACCEL_ACTOR_STATE_DEAD) {
        Finish(task, ACCEL_ERROR_FAILED_PRECONDITION,
               fmt::format("{} did not run: {}", task->Name(), task->actor->message));
        progress = true;
        continue;
      }
      if (task->state == TaskState::kWaiting) {
        // A dependency that ended without success ends the task, whichever of them it is; else it waits for the
        // first that has not ended (an actor's call: tasks wait blocked, out of this queue, until then).
        size_t open = task->dependencies.size();
        bool ended = false;
        for (size_t i = 0; i < task->dependencies.size() && !ended; ++i) {
          const Task& dep = *task->dependencies[i];
          if (!dep.done.load(std::memory_order_seq_cst)) {
            open = std::min(open, i);
            continue;
          }
          if (dep.result != ACCEL_SUCCESS) {
            const accel_status_t code =
                dep.result == ACCEL_ERROR_CANCELLED ? ACCEL_ERROR_CANCELLED : ACCEL_ERROR_FAILED_PRECONDITION;
            Finish(task, code,
                   fmt::format("{} did not run: dependency {} ({}) ended with {}: {}", task->Name(), i, dep.Name(),
                               accel_status_name(dep.result), dep.message));
            ended = true;
          }
        }
        if (ended) {
          progress = true;
          continue;
        }
        if (open < task->dependencies.size()) {
          task->message = WaitingFor(*task, open);
          if (task->kind == TaskKind::kActorCall) blocked.insert(task->actor.get());
          continue;
        }
        task->state = TaskState::kPending;
        DropDependencies(task->dependencies);  // all ended well: nothing to say about them any more
      }
      if (task->kind == TaskKind::kActorCall) {
        Actor& a = *task->actor;
        const bool first = blocked.insert(&a).second;  // later calls wait behind this one
        if (!first || a.busy || a.state != ACCEL_ACTOR_STATE_ALIVE || stopping_) {
          task->message = !first ? fmt::format("waiting for an earlier call of {}", a.name)
                          : a.busy
                              ? fmt::format("waiting for {} to finish its current call", a.name)
                              : fmt::format("waiting for {} ({}): {}", a.name,
                                            a.state == ACCEL_ACTOR_STATE_RESTARTING ? "restarting" : "not placed yet",
                                            a.holder ? a.holder->message : std::string());
          continue;
        }
        a.busy = true;
        task->ranks = a.holder->ranks;
        task->memory = a.holder->memory;
        task->state = TaskState::kRunning;
        task->message.clear();
        MakeReady(task);
        continue;
      }
      if (stopping_) {
        continue;
      }
      if (task->request.group && task->request.group->pending) {
        task->message = fmt::format("placement group '{}' is not placed yet: {}", task->request.group->name,
                                    task->request.group->message);
        continue;
      }
      if (task->request.device_count == 0 || task->request.group) {
        // Outside queue accounting: nothing to hold, or the bundle's reservation.
        if (TryPlace(*task)) {
          Start(task);
          continue;
        }
        continue;
      }
      candidates.push_back(&task);
    }
    if (!unblocked_.empty()) progress = true;  // released by tasks this pass ended
  }
  const bool in_order = candidates.empty() || stopping_ || PlaceByQueue(candidates);
  // What ended or started leaves the queue; the rest keeps its order.
  std::erase_if(queue_, [](const std::shared_ptr<Task>& t) {
    return t->state == TaskState::kDone || t->state == TaskState::kRunning;
  });
  ReleaseHold();
  candidates.clear();
  delta_ok_ = in_order && pending_groups_.empty() && !stopping_;
  if (!unblocked_.empty()) Schedule(lock);  // released meanwhile: their pass now, not at the next event
}

void Runtime::HoldForPendingGroup() {
  for (const auto& g : pending_groups_) {
    if (g->destroyed || !g->pending) continue;
    Hold(g->gang, fmt::format("placement group '{}'", g->name));
    return;  // the oldest only: a later one waits behind it
  }
}

void Runtime::HoldForTask(const Task& task) {
  if (!holding_.empty() || task.request.device_count < 2) return;
  Hold(GangOf(task.request), task.Name());
}

void Runtime::Hold(const planner::Gang& gang, std::string what) {
  // The devices it gets once the work already asked to stop (preempted for it, or cancelled) ends; else those it
  // would get were every device free, a plan that stays valid however the running work ends.
  planner::Planner scratch = planner_;
  for (auto& [id, t] : preemptible_) {
    if ((t->preempt_requested || t->cancel_requested) && t->placement != 0) (void)scratch.Release(t->placement);
  }
  auto plan = scratch.Place(gang);
  if (!plan) plan = PlaceAllFree(gang);
  if (!plan) return;  // it could not be placed even so (a device was lost since): hold nothing
  for (const auto& a : plan->assignments) {
    if (std::find(held_ranks_.begin(), held_ranks_.end(), a.device) != held_ranks_.end()) continue;
    held_ranks_.push_back(a.device);
    planner_.Reserve(a.device);
  }
  std::sort(held_ranks_.begin(), held_ranks_.end());
  holding_ = std::move(what);
}

void Runtime::ReleaseHold() {
  for (uint32_t rank : held_ranks_) planner_.Unreserve(rank);
  held_ranks_.clear();
  holding_.clear();
}

std::string Runtime::HoldNote() const {
  if (holding_.empty()) return "";
  std::string ranks;
  for (uint32_t rank : held_ranks_) ranks += fmt::format("{}{}", ranks.empty() ? "" : ", ", rank);
  return fmt::format("; device(s) {} are held for {}, which waits for them", ranks, holding_);
}

bool Runtime::UnderQuota(const Queue& q) const {
  if (q.quota_share == 0 && q.quota_memory == 0) return false;
  return (q.quota_share == 0 || q.used_share < q.quota_share) &&
         (q.quota_memory == 0 || q.used_memory < q.quota_memory);
}

std::tuple<int, double, const std::string&> Runtime::SiblingOrder(const Queue& q) const {
  const bool under = UnderQuota(q);
  double value = 0.0;
  if (under) {
    if (q.quota_share > 0) value = static_cast<double>(q.used_share) / static_cast<double>(q.quota_share);
    if (q.quota_memory > 0) {
      value = std::max(value, static_cast<double>(q.used_memory) / static_cast<double>(q.quota_memory));
    }
  } else {
    value = Dominant(q) / q.weight;
  }
  return {under ? 0 : 1, value, q.name};
}

double Runtime::Dominant(const Queue& q) const {
  const double d = total_share_ > 0 ? static_cast<double>(q.used_share) / static_cast<double>(total_share_) : 0.0;
  const double m = total_memory_ > 0 ? static_cast<double>(q.used_memory) / static_cast<double>(total_memory_) : 0.0;
  return std::max(d, m);
}

std::string Runtime::OverLimit(const Queue* leaf, int64_t share, uint64_t memory, const char* asker) const {
  for (const Queue* q = leaf; q != nullptr; q = q->parent.get()) {
    if (q->limit_share > 0 && q->used_share + share > q->limit_share) {
      return fmt::format("queue '{}' is at its limit: it holds {:g} of {:g} device(s) and the {} asks {:g}", q->name,
                         Devices(q->used_share), Devices(q->limit_share), asker, Devices(share));
    }
    if (q->limit_memory > 0 && q->used_memory + memory > q->limit_memory) {
      return fmt::format("queue '{}' is at its memory limit: it holds {} of {} and the {} asks {}", q->name,
                         Bytes(q->used_memory), Bytes(q->limit_memory), asker, Bytes(memory));
    }
  }
  return "";
}

void Runtime::ChargePath(Queue* leaf, int64_t share, uint64_t memory, int sign) {
  for (Queue* q = leaf; q != nullptr; q = q->parent.get()) {
    if (sign > 0) {
      q->used_share += share;
      q->used_memory += memory;
    } else {
      q->used_share -= share;
      q->used_memory -= memory;
    }
  }
}

void Runtime::Charge(Task& task, int sign) {
  if (!task.queue || task.charged == (sign > 0)) return;
  task.charged = sign > 0;
  int64_t share = 0;
  uint64_t memory = 0;
  for (size_t i = 0; i < task.ranks.size(); ++i) {
    share += task.shares[i];
    memory += task.memory[i];
  }
  ChargePath(task.queue.get(), share, memory, sign);
  for (Queue* q = task.queue.get(); q != nullptr; q = q->parent.get()) q->running += sign > 0 ? 1 : -1;
}

bool Runtime::PlaceByQueue(const std::vector<const std::shared_ptr<Task>*>& candidates) {
  // The queues holding candidates and their ancestors, each looked up once per pass, not once per candidate; each
  // leaf's candidates (pointers to the queue's references: a pass reads thousands) highest priority first, then in
  // submission order.
  struct Node {
    const Queue* queue = nullptr;  // null: the top level
    Node* parent = nullptr;
    std::vector<Node*> children;
    std::vector<const std::shared_ptr<Task>*> tasks;  // a leaf's candidates
    size_t next = 0;                                  // the next of `tasks` to try
    size_t remaining = 0;                             // candidates left in the subtree
  };
  std::unordered_map<const Queue*, Node> nodes;
  Node& root = nodes[nullptr];
  for (const std::shared_ptr<Task>* t : candidates) {
    Node& leaf = TreeNode(nodes, (*t)->queue.get());
    leaf.tasks.push_back(t);
    for (Node* a = &leaf; a != nullptr; a = a->parent) ++a->remaining;
  }
  const auto before = [](const std::shared_ptr<Task>* const a, const std::shared_ptr<Task>* const b) {
    const Task& x = **a;
    const Task& y = **b;
    return x.priority != y.priority ? x.priority > y.priority : x.id < y.id;
  };
  for (auto& [q, n] : nodes) {
    // Usually in order already (the queue is in submission order): then no sort.
    if (!std::is_sorted(n.tasks.begin(), n.tasks.end(), before)) std::sort(n.tasks.begin(), n.tasks.end(), before);
  }
  // Siblings: those under their quota first (the least used of it first),
  // then weighted dominant-resource fair share; the name breaks ties.
  auto key = [&](const Queue* q) { return SiblingOrder(*q); };
  std::map<Shape, std::string, std::less<>>& no_room = no_room_;
  bool hold = false;  // a queue under its quota waits for capacity: over-quota queues get nothing new
  std::string hold_queue;
  std::string hold_task;
  for (;;) {
    Node* at = &root;
    for (;;) {
      Node* best = nullptr;
      for (Node* c : at->children) {
        if (c->remaining == 0) continue;
        if (best == nullptr || key(c->queue) < key(best->queue)) best = c;
      }
      if (best == nullptr) break;
      at = best;
    }
    if (at == &root) break;
    const Queue* node = at->queue;
    const std::shared_ptr<Task>& task = *at->tasks[at->next++];
    Task* t = task.get();
    for (Node* a = at; a != nullptr; a = a->parent) --a->remaining;
    const auto [need_share, need_memory] = Need(t->request);
    const std::string limit = OverLimit(t->queue.get(), need_share, need_memory, "task");
    if (!limit.empty()) {
      t->message = limit;
      continue;
    }
    const bool under = UnderQuota(*node);
    if (hold && !under) {
      t->message =
          fmt::format("queue '{}' is over its quota while queue '{}', under its quota, waits for capacity ({})",
                      node->name, hold_queue, hold_task);
      continue;
    }
    const auto shape = ShapeOf(t->request);  // the selector copied only into a new entry
    const auto known = no_room.find(shape);
    if (known != no_room.end()) {
      t->message = known->second;
    } else if (TryPlace(*t)) {
      Charge(*t, +1);
      if (t->preemptible) preemptible_[t->id] = task;
      Start(task);
      continue;
    }
    if (known == no_room.end()) {
      no_room.emplace(Shape(shape), t->message);
      // The first large task without room holds its devices from the smaller ones after it (this pass only).
      HoldForTask(*t);
    }
    if (under) {
      const std::string capacity = t->message;
      if (Reclaim(GangOf(t->request), t->queue.get())) {
        t->message = fmt::format(
            "{}; queue '{}' is under its quota: preempted work of queues over theirs is "
            "stopping to make room",
            capacity, node->name);
      } else {
        t->message = fmt::format(
            "{}; queue '{}' is under its quota, but no preemptible work of a queue over its "
            "quota would make room",
            capacity, node->name);
      }
      if (!hold) {
        hold = true;
        hold_queue = node->name;
        hold_task = t->Name();
      }
    }
  }
  return !hold && holding_.empty();
}

bool Runtime::Reclaim(const planner::Gang& gang, const Queue* queue) {
  planner::Planner scratch = planner_;
  bool releasing = false;  // capacity already being given back
  for (auto& [id, t] : preemptible_) {
    if ((t->preempt_requested || t->cancel_requested) && t->placement != 0) {
      (void)scratch.Release(t->placement);
      releasing = true;
    }
  }
  if (releasing) {
    planner::Planner probe = scratch;
    if (probe.Place(gang)) return true;
  }
  std::vector<Task*> victims;
  for (auto& [id, t] : preemptible_) {
    if (t->preempt_requested || t->cancel_requested || t->placement == 0) continue;
    if (!t->queue || Within(queue, t->queue.get())) continue;
    victims.push_back(t.get());
  }
  std::sort(victims.begin(), victims.end(), [&](const Task* a, const Task* b) {
    const double da = Dominant(*a->queue) / a->queue->weight;
    const double db = Dominant(*b->queue) / b->queue->weight;
    if (da != db) return da > db;  // the most over its fair share first
    if (a->priority != b->priority) return a->priority < b->priority;
    return a->id > b->id;  // the newest first
  });
  std::unordered_map<const Queue*, int64_t> taken;  // share preempted per queue so far
  std::vector<Task*> chosen;
  bool fits = false;
  for (Task* v : victims) {
    int64_t share = 0;
    for (int64_t s : v->shares) share += s;
    // Never below a quota: every queue of the victim's branch the waiter is
    // not inside keeps at least its quota.
    bool allowed = true;
    for (const Queue* q = v->queue.get(); q != nullptr && allowed; q = q->parent.get()) {
      if (Within(queue, q)) break;
      allowed = q->used_share - taken[q] - share >= q->quota_share;
    }
    if (!allowed) continue;
    for (const Queue* q = v->queue.get(); q != nullptr; q = q->parent.get()) taken[q] += share;
    (void)scratch.Release(v->placement);
    chosen.push_back(v);
    planner::Planner probe = scratch;
    if (probe.Place(gang)) {
      fits = true;
      break;
    }
  }
  if (!fits) return releasing;
  // Keep only the victims the room needs.
  for (size_t i = 0; i < chosen.size();) {
    planner::Planner probe = planner_;
    for (auto& [id, t] : preemptible_) {
      if ((t->preempt_requested || t->cancel_requested) && t->placement != 0) (void)probe.Release(t->placement);
    }
    for (size_t j = 0; j < chosen.size(); ++j) {
      if (j != i) (void)probe.Release(chosen[j]->placement);
    }
    if (probe.Place(gang)) {
      chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  for (Task* v : chosen) {
    v->preempt_requested = true;
    ++counters_.preempted;
    LogTask(ACCEL_RUNTIME_EVENT_PREEMPTED, *v);
    for (Queue* q = v->queue.get(); q != nullptr; q = q->parent.get()) ++q->preempted;
  }
  return true;
}

bool Runtime::TryPlace(Task& task) {
  const Request& r = task.request;
  task.ranks.clear();
  task.shares.clear();
  task.memory.clear();
  task.placement = 0;
  if (r.device_count == 0) return true;
  const int64_t share = ShareUnits(r.share);
  if (r.group) {
    PlacementGroup& g = *r.group;
    std::vector<PlacementGroup::Slot*> fit;
    uint32_t held = 0;
    for (auto& slot : g.slots) {
      if (slot.bundle != r.bundle) continue;
      ++held;
      if (slot.share_free >= share && slot.memory_free >= r.memory && !planner_.disabled(slot.rank)) {
        fit.push_back(&slot);
      }
    }
    if (fit.size() < r.device_count) {
      task.message = fmt::format(
          "bundle {} of placement group '{}': {} of its {} device(s) have share {:g} and {} free; the task asks {}",
          r.bundle, g.name, fit.size(), held, r.share, Bytes(r.memory), r.device_count);
      return false;
    }
    for (uint32_t i = 0; i < r.device_count; ++i) {
      fit[i]->share_free -= share;
      fit[i]->memory_free -= r.memory;
      task.ranks.push_back(fit[i]->rank);
      task.shares.push_back(share);
      task.memory.push_back(r.memory);
    }
    ++g.running;
    task.message.clear();
    return true;
  }
  planner::Expected<planner::Placement> placed = planner::Error{""};
  if (!task.near.empty()) {
    // Locality first (docs/objectstore.md, "Locality"): the same request restricted to the devices holding the most
    // bytes of its objects in ready replicas, then to any device holding some.
    std::vector<uint64_t> bytes(resources_.devices.size(), 0);
    uint64_t most = 0;
    for (uint32_t rank = 0; rank < resources_.devices.size(); ++rank) {
      for (const auto& held : task.near) {
        if (store_->OnDevice(*held.object, rank)) bytes[rank] += held.object->size;
      }
      most = std::max(most, bytes[rank]);
    }
    const auto holders = [&](uint64_t at_least) {
      std::string ids;
      for (uint32_t rank = 0; rank < resources_.devices.size(); ++rank) {
        if (bytes[rank] == 0 || bytes[rank] < at_least) continue;
        std::string quoted;
        for (char c : resources_.devices[rank].id) {
          if (c == '"' || c == '\\') quoted += '\\';
          quoted += c;
        }
        ids += fmt::format("{}\"{}\"", ids.empty() ? "" : ", ", quoted);
      }
      return ids;
    };
    const auto place_on = [&](const std::string& ids) {
      planner::Gang near = GangOf(r);
      const std::string on = fmt::format("physical_device_id in ({})", ids);
      for (auto& b : near.bundles) b.selector = b.selector.empty() ? on : fmt::format("({}) && {}", b.selector, on);
      placed = planner_.Place(near);
    };
    if (most > 0) {
      const std::string best = holders(most);
      const std::string any = holders(1);
      place_on(best);
      if (!placed && any != best) place_on(any);
    }
  }
  if (!placed) placed = planner_.Place(GangOf(r));
  if (!placed) {
    task.message = placed.error().message + HoldNote();
    return false;
  }
  task.placement = placed->id;
  for (const auto& a : placed->assignments) {
    task.ranks.push_back(a.device);
    task.shares.push_back(a.share);
    task.memory.push_back(a.memory);
  }
  task.message.clear();
  return true;
}

void Runtime::ReleasePlacement(Task& task) {
  delta_ok_ = false;  // capacity comes back: what found no room may now
  Charge(task, -1);
  preemptible_.erase(task.id);
  if (task.request.group) {
    PlacementGroup& g = *task.request.group;
    for (size_t i = 0; i < task.ranks.size(); ++i) {
      for (auto& slot : g.slots) {
        if (slot.bundle == task.request.bundle && slot.rank == task.ranks[i]) {
          slot.share_free += task.shares[i];
          slot.memory_free += task.memory[i];
          break;
        }
      }
    }
    if (!task.ranks.empty() && g.running > 0) --g.running;
    ReleaseGroup(g);
  } else if (task.placement != 0) {
    planner_.Release(task.placement);
  }
  task.placement = 0;
  task.ranks.clear();
  task.shares.clear();
  task.memory.clear();
}

void Runtime::Finish(const std::shared_ptr<Task>& task, accel_status_t result, std::string message) {
  task->state = TaskState::kDone;
  task->result = result;
  task->message = std::move(message);
  if (task->kind == TaskKind::kActorInit) {
    // The actor's reservation request ended without an actor: it dies (or was destroyed).
    Actor& a = *task->actor;
    if (!a.ended) {
      KillActor(a, a.destroyed ? fmt::format("{} was destroyed", a.name) : task->message);
      EndActor(task->actor);
    }
    return;
  }
  if (task->kind == TaskKind::kActorFinalize) return;
  if (task->kind == TaskKind::kActorCall) {
    --task->actor->calls_pending;
    ++task->actor->calls_done;
  } else if (task->queue) {
    --task->queue->open_work;
    for (Queue* q = task->queue.get(); q != nullptr; q = q->parent.get()) ++q->finished;
  }
  RecordObjects(*task, result);
  Publish(*task, result);
  ReleaseDependents(*task);
  DropDependencies(task->dependencies);
  if (task->release_user_data != nullptr || HoldsObjects(*task)) {
    to_release_.push_back(task);
    releases_due_.store(true, std::memory_order_release);
  }
}

accel_status_t Runtime::CallFunction(const std::shared_ptr<Task>& task, accel_task_function_t function, void* user_data,
                                     accel_tenant_t tenant, std::string* message) {
  // A worker keeps the shared tenant of tasks without devices between them: switching costs two libaccel calls
  // per task, and a worker allocates nothing of its own between tasks.
  const bool own = t_running_own_of == this && tenant == no_device_tenant_;  // bound by RunOwnQueued
  const bool keep = own || (t_worker_of == this && tenant == no_device_tenant_);
  accel_tenant_t previous = nullptr;
  if (!keep) {
    accel_thread_set_tenant(tenant, &previous);
  } else if (!own && t_worker_tenant != tenant) {
    accel_thread_set_tenant(tenant, nullptr);
    t_worker_tenant = tenant;
  }
  if (Counted(*task)) Shard().Add(&CounterShard::started);  // no lock on the task's path
  Task* outer = t_current_task;
  t_current_task = task.get();
  accel_set_last_error(ACCEL_SUCCESS, nullptr);
  accel_status_t result = function(reinterpret_cast<accel_task_context_t>(task.get()), user_data);
  if (result < 0) {
    *message = accel_last_error();
    if (message->empty()) *message = fmt::format("{} returned {}", task->Name(), accel_status_name(result));
  } else if (result > 0) {
    *message = fmt::format("{} returned {}, not a result: a task returns ACCEL_SUCCESS or an error", task->Name(),
                           accel_status_name(result));
    result = ACCEL_ERROR_INTERNAL;
  }
  t_current_task = outer;
  if (!keep) accel_thread_set_tenant(previous, nullptr);
  return result;
}

namespace {

// A tenant holding `memory[i]` on each of `ranks`' devices and nothing elsewhere.
accel_status_t MakeTenant(accel_instance_t instance, const Resources& resources, const Task& task,
                          accel_tenant_t* out) {
  std::vector<accel_tenant_limit_t> limits;
  for (size_t i = 0; i < task.ranks.size(); ++i)
    limits.push_back({resources.devices[task.ranks[i]].physical, task.memory[i]});
  accel_tenant_desc_t td{};
  td.stype = ACCEL_STRUCTURE_TYPE_TENANT_DESC;
  td.struct_size = sizeof(td);
  const std::string name = task.Name();
  td.name = name.c_str();
  td.limits = limits.data();
  td.limit_count = static_cast<uint32_t>(limits.size());
  td.other_limit = 0;
  return accel_tenant_create(instance, &td, out);
}

}  // namespace

bool Runtime::ProbeLost(const std::vector<uint32_t>& ranks) {
  bool lost = false;
  for (uint32_t rank : ranks) {
    if (planner_.disabled(rank)) {
      lost = true;
      continue;
    }
    uint64_t free_bytes = 0;
    if (accel_device_get_memory_info(resources_.devices[rank].path, &free_bytes, nullptr) == ACCEL_ERROR_DEVICE_LOST) {
      planner_.Disable(rank);
      ++counters_.devices_lost;
      events_.Record(ACCEL_RUNTIME_EVENT_DEVICE_LOST, 0, "", rank, 1, ACCEL_ERROR_DEVICE_LOST);
      lost = true;
    }
  }
  return lost;
}

accel_status_t Runtime::Execute(const std::shared_ptr<Task>& task, std::string* message_out) {
  LogTask(ACCEL_RUNTIME_EVENT_STARTED, *task);
  if (task->kind != TaskKind::kTask) return ExecuteActorWork(task, message_out);
  accel_status_t result = ACCEL_SUCCESS;
  std::string& message = *message_out;
  accel_tenant_t tenant = nullptr;
  const bool shared_tenant = task->ranks.empty();
  if (shared_tenant) tenant = no_device_tenant_;
  if (!shared_tenant && MakeTenant(instance_, resources_, *task, &tenant) != ACCEL_SUCCESS) {
    result = ACCEL_ERROR_INTERNAL;
    message = fmt::format("{}: its tenant could not be made: {}", task->Name(), accel_last_error());
  } else if (task->cancel_requested) {
    result = ACCEL_ERROR_CANCELLED;
    message = fmt::format("{} was cancelled before it started", task->Name());
  } else if (task->GroupCancelled()) {
    result = ACCEL_ERROR_CANCELLED;
    message =
        fmt::format("{} was cancelled before it started (its {} was cancelled)", task->Name(), task->group()->label);
  } else {
    task->tenant = tenant;
    result = CallFunction(task, task->function, task->user_data, tenant, &message);
    task->tenant = nullptr;
  }
  if (tenant != nullptr && !shared_tenant) accel_tenant_destroy(tenant);
  return result;
}

void Runtime::Complete(const std::shared_ptr<Task>& task, accel_status_t result, std::string message,
                       std::unique_lock<std::mutex>& lock) {
  if (task->kind != TaskKind::kTask) {
    AfterActorWork(task, result, std::move(message));
    Schedule(lock);
    return;
  }
  {
    // Before the release clears it: whether the passes' state allows the pass of an ending (ScheduleEnded).
    const bool clean = delta_ok_ && result != ACCEL_ERROR_DEVICE_LOST;
    const std::vector<uint32_t> ranks = task->ranks;
    ReleasePlacement(*task);
    bool retry = false;
    const bool preempted = task->preempt_requested && result != ACCEL_SUCCESS && !task->cancel_requested && !stopping_;
    if (result == ACCEL_ERROR_DEVICE_LOST && !task->cancel_requested && !stopping_) {
      (void)ProbeLost(ranks);
      if (task->attempt < task->max_retries) {
        std::string why;
        if (Feasible(task->request, &why) == ACCEL_SUCCESS) {
          retry = true;
        } else {
          message = fmt::format("{} (attempt {}), and no retry can run: {}", message, task->attempt, why);
        }
      }
    }
    if (preempted) {
      // Queued again as it was: preemption is not a failure.
      task->preempt_requested = false;
      task->state = TaskState::kPending;
      task->message = fmt::format("preempted (queue '{}' over its quota); queued again", task->queue->name);
      queue_.push_back(task);
    } else if (retry) {
      if (task->result_object.object)
        task->drop_later.push_back(std::exchange(task->result_object, {}));  // that attempt's
      ++task->attempt;
      ++counters_.retried;
      LogTask(ACCEL_RUNTIME_EVENT_RETRIED, *task);
      task->state = TaskState::kPending;
      task->message = fmt::format("retry {} of {} after: {}", task->attempt, task->max_retries, message);
      queue_.push_front(task);
    } else {
      Finish(task, result, message);
    }
    ScheduleEnded(lock, clean && !preempted && !retry);
  }
}

void Runtime::ReleaseGroup(PlacementGroup& g) {
  if (!g.destroyed || g.running != 0 || g.placement == 0) return;
  delta_ok_ = false;  // capacity comes back
  planner_.Release(g.placement);
  g.placement = 0;
  if (g.queue) {
    ChargePath(g.queue.get(), g.charged_share, g.charged_memory, -1);
    --g.queue->open_work;
    g.queue.reset();
  }
}

accel_status_t Runtime::CreateGroup(const accel_placement_group_desc_t& desc, std::shared_ptr<Queue> queue,
                                    std::shared_ptr<PlacementGroup>* out, std::string* why) {
  if (desc.bundle_count == 0) {
    *why = "'desc->bundle_count' is 0: a placement group needs at least one bundle";
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  if (desc.bundles == nullptr) {
    *why = fmt::format("'desc->bundles' is NULL with 'desc->bundle_count' {}", desc.bundle_count);
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  planner::Gang gang;
  switch (desc.strategy) {
    case ACCEL_PLACEMENT_STRATEGY_PACK: gang.strategy = planner::Strategy::kPack; break;
    case ACCEL_PLACEMENT_STRATEGY_SPREAD: gang.strategy = planner::Strategy::kSpread; break;
    case ACCEL_PLACEMENT_STRATEGY_STRICT_PACK: gang.strategy = planner::Strategy::kStrictPack; break;
    case ACCEL_PLACEMENT_STRATEGY_STRICT_SPREAD: gang.strategy = planner::Strategy::kStrictSpread; break;
    default:
      *why = fmt::format("'desc->strategy' {} is not an accel_placement_strategy_t", static_cast<int>(desc.strategy));
      return ACCEL_ERROR_INVALID_ENUM;
  }
  switch (desc.level) {
    case ACCEL_TOPOLOGY_LEVEL_CLIQUE: gang.level = planner::Level::kClique; break;
    case ACCEL_TOPOLOGY_LEVEL_PCIE_ROOT: gang.level = planner::Level::kPcieRoot; break;
    case ACCEL_TOPOLOGY_LEVEL_NUMA: gang.level = planner::Level::kNuma; break;
    case ACCEL_TOPOLOGY_LEVEL_NODE: gang.level = planner::Level::kNode; break;
    case ACCEL_TOPOLOGY_LEVEL_RACK: gang.level = planner::Level::kRack; break;
    case ACCEL_TOPOLOGY_LEVEL_BLOCK: gang.level = planner::Level::kBlock; break;
    default:
      *why = fmt::format("'desc->level' {} is not an accel_topology_level_t", static_cast<int>(desc.level));
      return ACCEL_ERROR_INVALID_ENUM;
  }
  if (desc.required > 1) {
    *why = fmt::format("'desc->required' is {}: 0 or 1", desc.required);
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  gang.required = desc.required == 1;
  const uint32_t stride = desc.bundles[0].struct_size;
  for (uint32_t i = 0; i < desc.bundle_count; ++i) {
    const auto* in = reinterpret_cast<const accel_resource_request_t*>(reinterpret_cast<const char*>(desc.bundles) +
                                                                       size_t{i} * stride);
    Request q;
    const accel_status_t status = ReadRequest(in, fmt::format("desc->bundles[{}]", i), true, &q, why);
    if (status != ACCEL_SUCCESS) return status;
    planner::Bundle b;
    b.devices = q.device_count;
    b.share = q.share;
    b.memory = q.memory;
    b.selector = q.selector;
    gang.bundles.push_back(std::move(b));
  }
  const uint32_t flags =
      desc.struct_size >= offsetof(accel_placement_group_desc_t, flags) + sizeof(desc.flags) ? desc.flags : 0;
  if ((flags & ~ACCEL_PLACEMENT_GROUP_WAIT) != 0) {
    *why = fmt::format("'desc->flags' 0x{:x} has bits no ACCEL_PLACEMENT_GROUP_* flag names", flags);
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  if (desc.struct_size >= offsetof(accel_placement_group_desc_t, reserved1) + sizeof(desc.reserved1) &&
      desc.reserved1 != 0) {
    *why = "'desc->reserved1' must be 0";
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  auto group = std::make_shared<PlacementGroup>();
  group->bundle_count = desc.bundle_count;
  group->runtime = weak_from_this();
  group->gang = std::move(gang);
  group->label = desc.name != nullptr ? fmt::format("placement group '{}': ", desc.name) : std::string();
  if (desc.name != nullptr && desc.name[0] != '\0') group->name = desc.name;
  std::unique_lock lock(mutex_);
  if (stopping_) {
    *why = "the runtime is being destroyed";
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  if (queue && queue->children > 0) {
    *why = fmt::format("{}queue '{}' has child queues: placement groups go to leaf queues", group->label, queue->name);
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  group->queue = std::move(queue);  // charged once placed
  // Counted and logged once whichever check refuses it; nothing is held.
  const auto refuse = [&](const std::string& reason) {
    ++counters_.placement_groups_refused;
    events_.Record(ACCEL_RUNTIME_EVENT_GROUP_REFUSED, 0, group->name, EventLog::kNoDevice, 0,
                   ACCEL_ERROR_RESOURCE_EXHAUSTED);
    *why = fmt::format("{}nothing is held: {}", group->label, reason);
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  };
  std::string placed_why;
  // An older pending group's devices are not this one's to take.
  HoldForPendingGroup();
  const accel_status_t placed = PlaceGroup(*group, &placed_why);
  if (placed != ACCEL_SUCCESS) placed_why += HoldNote();
  ReleaseHold();
  if (placed == ACCEL_SUCCESS) {
    *out = std::move(group);
    return ACCEL_SUCCESS;
  }
  if ((flags & ACCEL_PLACEMENT_GROUP_WAIT) != 0) {
    // Waits only for what could ever fit: every device free (lost ones excepted), and within its queue's limits.
    auto ever = PlaceAllFree(group->gang);
    std::string never;
    if (!ever) {
      never = fmt::format("no devices of the runtime could ever hold it, even all free: {}", ever.error().message);
    } else if (group->queue) {
      const auto [share, memory] = GangNeed(group->gang);
      never = BeyondLimits(group->queue.get(), share, memory);
    }
    if (never.empty()) {
      group->pending = true;
      group->message = std::move(placed_why);
      if (group->name.empty()) group->name = fmt::format("pending group {}", pending_groups_.size() + 1);
      if (group->queue) ++group->queue->open_work;  // a queue with a pending group is not empty
      pending_groups_.push_back(group);
      *out = std::move(group);
      Schedule(lock);  // reclaims for it when its queue is under its quota
      lock.unlock();
      FlushReleases();
      return ACCEL_SUCCESS;
    }
    return refuse(never);
  }
  return refuse(placed_why);
}

accel_status_t Runtime::PlaceGroup(PlacementGroup& group, std::string* why) {
  auto placed = planner_.Place(group.gang);
  if (!placed) {
    *why = placed.error().message;
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  }
  int64_t share = 0;
  uint64_t memory = 0;
  for (const auto& a : placed->assignments) {
    share += a.share;
    memory += a.memory;
  }
  if (group.queue) {
    // The same limits as a task's (docs/scheduler.md, "Queues"): refused (or still pending), nothing held.
    const std::string limit = OverLimit(group.queue.get(), share, memory, "group");
    if (!limit.empty()) {
      planner_.Release(placed->id);
      *why = limit;
      return ACCEL_ERROR_RESOURCE_EXHAUSTED;
    }
    ChargePath(group.queue.get(), share, memory, +1);
    if (!group.pending) ++group.queue->open_work;  // a pending group counted itself already
    group.charged_share = share;
    group.charged_memory = memory;
  }
  ++counters_.placement_groups_created;
  group.placement = placed->id;
  if (group.name.empty()) group.name = fmt::format("group {}", placed->id);
  for (const auto& a : placed->assignments) {
    group.slots.push_back({a.bundle, a.device, a.share, a.memory, a.share, a.memory});
  }
  if (events_.enabled()) {
    // Slots are one per unit (bundles may share a device): the event counts distinct devices.
    std::set<uint32_t> ranks;
    for (const auto& slot : group.slots) ranks.insert(slot.rank);
    events_.Record(ACCEL_RUNTIME_EVENT_GROUP_CREATED, placed->id, group.name,
                   ranks.empty() ? EventLog::kNoDevice : *ranks.begin(), static_cast<uint32_t>(ranks.size()),
                   ACCEL_SUCCESS);
  }
  return ACCEL_SUCCESS;
}

accel_status_t Runtime::WaitGroup(const std::shared_ptr<PlacementGroup>& group, uint64_t timeout_ns, std::string* why) {
  std::unique_lock lock(mutex_);
  const auto ended = [&] { return !group->pending || group->destroyed || stopping_; };
  if (timeout_ns == ACCEL_TIMEOUT_INFINITE) {
    group->placed_cv.wait(lock, ended);
  } else if (!group->placed_cv.wait_for(lock, std::chrono::nanoseconds(std::min<uint64_t>(timeout_ns, INT64_MAX / 2)),
                                        ended)) {
    *why = fmt::format("{}not placed within {} ns: {}", group->label, timeout_ns, group->message);
    return ACCEL_ERROR_TIMEOUT;
  }
  if (!group->pending) return ACCEL_SUCCESS;
  *why = fmt::format("{}{} before it was placed", group->label,
                     group->destroyed ? "destroyed" : "its runtime was destroyed");
  return ACCEL_ERROR_CANCELLED;
}

bool Runtime::GroupSlots(const PlacementGroup& group, std::vector<PlacementGroup::Slot>* out) const {
  std::lock_guard lock(mutex_);
  if (group.pending) return false;
  *out = group.slots;
  return true;
}

std::string Runtime::GroupMessage(const PlacementGroup& group) const {
  std::lock_guard lock(mutex_);
  if (!group.pending) return "placed";
  if (group.destroyed) return "destroyed before it was placed";
  return group.message;
}

void Runtime::DestroyGroup(const std::shared_ptr<PlacementGroup>& group) {
  {
    std::unique_lock lock(mutex_);
    group->destroyed = true;
    if (group->pending) {
      if (group->queue) --group->queue->open_work;
      group->placed_cv.notify_all();
    }
    ReleaseGroup(*group);
    std::vector<std::shared_ptr<Task>> in_group;
    for (const auto& t : blocked_) {
      if (t->request.group == group) in_group.push_back(t);
    }
    for (const auto& t : in_group) Unblock(t);
    Schedule(lock);  // drops it from the pending ones, cancels its waiting tasks
  }
  FlushReleases();
}

std::string Runtime::Explain(const Task& task) const {
  if (task.direct) return "";  // never waits for anything but a thread
  std::lock_guard lock(mutex_);
  if (task.state == TaskState::kWaiting || task.state == TaskState::kPending) return task.message;
  return "";
}

accel_runtime_counters_t Runtime::Counters() const {
  std::lock_guard lock(mutex_);
  accel_runtime_counters_t c = counters_;
  uint64_t run_in = 0;
  uint64_t run_out = 0;
  for (const CounterShard& shard : shards_) {
    run_in += shard.run_in.load(std::memory_order_relaxed);
    run_out += shard.run_out.load(std::memory_order_relaxed);
    c.submitted += shard.submitted.load(std::memory_order_relaxed);
    c.placed += shard.placed.load(std::memory_order_relaxed);
    c.started += shard.started.load(std::memory_order_relaxed);
    c.finished += shard.finished.load(std::memory_order_relaxed);
    c.failed += shard.failed.load(std::memory_order_relaxed);
    c.cancelled += shard.cancelled.load(std::memory_order_relaxed);
  }
  c.pending = queue_.size() + blocked_.size() + unblocked_.size();
  c.running = run_in >= run_out ? run_in - run_out : 0;  // the shards are read one by one
  return c;
}

accel_runtime_device_t Runtime::Device(uint32_t rank) const {
  std::lock_guard lock(mutex_);
  accel_runtime_device_t d{};
  d.physical_device = resources_.devices[rank].physical;
  d.share_free = static_cast<double>(planner_.free()[rank].share) / static_cast<double>(planner::kShareUnits);
  d.memory_free = planner_.free()[rank].memory;
  d.memory_total = resources_.devices[rank].memory;
  d.lost = planner_.disabled(rank) ? 1 : 0;
  return d;
}

// --- Actors ---------------------------------------------------------------

accel_status_t Runtime::CreateActor(const std::shared_ptr<Actor>& actor, const std::shared_ptr<Task>& holder,
                                    std::string* why) {
  {
    std::unique_lock lock(mutex_);
    if (stopping_) {
      *why = "the runtime is being destroyed";
      return ACCEL_ERROR_FAILED_PRECONDITION;
    }
    const accel_status_t feasible = Feasible(holder->request, why);
    if (feasible != ACCEL_SUCCESS) return feasible;
    if (!holder->queue) holder->queue = default_queue_;
    if (holder->queue->children > 0) {
      *why = fmt::format("queue '{}' has child queues: tasks and actors go to leaf queues", holder->queue->name);
      return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    const uint64_t id = next_actor_++;
    actor->name = actor->name.empty() ? fmt::format("actor {}", id) : fmt::format("actor {} ('{}')", id, actor->name);
    actor->owner = this;
    actor->runtime = weak_from_this();
    actor->holder = holder;
    holder->kind = TaskKind::kActorInit;
    holder->actor = actor;
    holder->owner = this;
    holder->id = next_task_++;
    holder->name = actor->name;
    holder->state = TaskState::kPending;
    ++holder->queue->open_work;
    ++counters_.actors_created;
    LogTask(ACCEL_RUNTIME_EVENT_ACTOR_CREATED, *holder);
    actors_.push_back(actor);
    queue_.push_back(holder);
    Schedule(lock);
  }
  FlushReleases();
  return ACCEL_SUCCESS;
}

accel_status_t Runtime::Call(const std::shared_ptr<Task>& call, std::string* why) {
  {
    std::unique_lock lock(mutex_);
    Actor& a = *call->actor;
    if (stopping_) {
      *why = "the runtime is being destroyed";
      return ACCEL_ERROR_FAILED_PRECONDITION;
    }
    if (a.destroyed || a.state == ACCEL_ACTOR_STATE_DEAD) {
      *why = a.state == ACCEL_ACTOR_STATE_DEAD ? a.message : fmt::format("{} is being destroyed", a.name);
      return ACCEL_ERROR_FAILED_PRECONDITION;
    }
    call->kind = TaskKind::kActorCall;
    call->id = next_task_++;
    call->name = call->name.empty() ? fmt::format("call {} of {}", call->id, a.name)
                                    : fmt::format("call {} ('{}') of {}", call->id, call->name, a.name);
    ++a.calls_pending;
    Shard().Add(&CounterShard::submitted);
    LogTask(ACCEL_RUNTIME_EVENT_SUBMITTED, *call);
    WatchDependencies(*call);
    queue_.push_back(call);
    Schedule(lock);
  }
  FlushReleases();
  return ACCEL_SUCCESS;
}

accel_status_t Runtime::ExecuteActorWork(const std::shared_ptr<Task>& task, std::string* message_out) {
  const std::shared_ptr<Actor> actor = task->actor;
  Actor& a = *actor;
  accel_status_t result = ACCEL_SUCCESS;
  std::string& message = *message_out;
  if (task->kind == TaskKind::kActorInit) {
    // A tenant for the actor's life, over its reservation.
    accel_tenant_t tenant = nullptr;
    if (MakeTenant(instance_, resources_, *task, &tenant) != ACCEL_SUCCESS) {
      result = ACCEL_ERROR_INTERNAL;
      message = fmt::format("{}: its tenant could not be made: {}", a.name, accel_last_error());
    } else {
      {
        std::lock_guard lock(mutex_);
        a.tenant = tenant;
        if (!task->cancel_requested) a.placed_once = true;
      }
      if (task->cancel_requested) {
        result = ACCEL_ERROR_CANCELLED;
        message = fmt::format("{} was destroyed before it started", a.name);
      } else if (a.init != nullptr) {
        result = CallFunction(task, a.init, a.user_data, tenant, &message);
      }
    }
  } else if (task->kind == TaskKind::kActorCall) {
    if (task->cancel_requested) {
      result = ACCEL_ERROR_CANCELLED;
      message = fmt::format("{} was cancelled before it started", task->Name());
    } else {
      result = CallFunction(task, task->function, task->user_data, a.tenant, &message);
    }
  } else if (a.finalize != nullptr) {
    result = CallFunction(task, a.finalize, a.user_data, a.tenant, &message);
  }
  return result;
}

void Runtime::KillActor(Actor& actor, std::string message) {
  if (actor.state == ACCEL_ACTOR_STATE_DEAD) return;
  actor.state = ACCEL_ACTOR_STATE_DEAD;
  actor.message = std::move(message);
  if (!actor.destroyed) {
    ++counters_.actors_died;
    if (actor.holder) LogTask(ACCEL_RUNTIME_EVENT_ACTOR_DIED, *actor.holder);
  }
}

bool Runtime::RestartOrKill(const std::shared_ptr<Actor>& actor, const std::string& why) {
  Actor& a = *actor;
  Task& holder = *a.holder;
  ReleasePlacement(holder);
  if (a.tenant != nullptr) {
    accel_tenant_destroy(a.tenant);
    a.tenant = nullptr;
  }
  std::string reason;
  if (a.destroyed || stopping_) {
    reason = fmt::format("{} lost a device while being destroyed: {}", a.name, why);
  } else if (a.restarts >= a.max_restarts) {
    reason = fmt::format("{} died: {}; no restart is left ({} of {} used)", a.name, why, a.restarts, a.max_restarts);
  } else if (std::string infeasible; Feasible(holder.request, &infeasible) != ACCEL_SUCCESS) {
    reason = fmt::format("{} died: {}; it cannot be placed again: {}", a.name, why, infeasible);
  } else {
    ++a.restarts;
    ++counters_.actors_restarted;
    LogTask(ACCEL_RUNTIME_EVENT_ACTOR_RESTARTED, holder);
    a.state = ACCEL_ACTOR_STATE_RESTARTING;
    a.message = why;
    holder.attempt = a.restarts;
    holder.state = TaskState::kPending;
    holder.message = fmt::format("restart {} of {} after: {}", a.restarts, a.max_restarts, why);
    queue_.push_front(a.holder);
    return true;
  }
  KillActor(a, reason);
  return false;
}

void Runtime::AfterActorWork(const std::shared_ptr<Task>& task, accel_status_t result, std::string message) {
  const std::shared_ptr<Actor> actor = task->actor;
  Actor& a = *actor;
  a.busy = false;
  if (task->kind == TaskKind::kActorFinalize) {
    CompleteActorEnd(a);
    return;
  }
  if (task->kind == TaskKind::kActorInit) {
    if (result == ACCEL_SUCCESS && !a.destroyed && !stopping_) {
      a.state = ACCEL_ACTOR_STATE_ALIVE;
      a.message.clear();
      task->message.clear();
      return;
    }
    if (result == ACCEL_ERROR_DEVICE_LOST && ProbeLost(task->ranks)) {
      if (RestartOrKill(actor, fmt::format("init lost a device: {}", message))) return;
    } else if (result == ACCEL_SUCCESS || a.destroyed || stopping_) {
      KillActor(a, fmt::format("{} was destroyed", a.name));
    } else {
      KillActor(a, fmt::format("{} died: init returned {}: {}", a.name, accel_status_name(result), message));
    }
    EndActor(actor);
    return;
  }
  // A call.
  const std::vector<uint32_t> ranks = task->ranks;
  task->ranks.clear();
  task->memory.clear();
  if (result == ACCEL_ERROR_DEVICE_LOST && !task->cancel_requested && ProbeLost(ranks)) {
    const bool restarting = RestartOrKill(actor, fmt::format("{} lost a device: {}", task->Name(), message));
    if (restarting && task->attempt < task->max_retries) {
      ++task->attempt;
      ++counters_.retried;
      LogTask(ACCEL_RUNTIME_EVENT_RETRIED, *task);
      task->state = TaskState::kPending;
      task->message = fmt::format("retry {} of {} after: {}", task->attempt, task->max_retries, message);
      queue_.push_front(task);
      return;
    }
    Finish(task, result, message);
    if (!restarting) EndActor(actor);
    return;
  }
  Finish(task, result, message);
  if (a.destroyed) EndActor(actor);
}

void Runtime::EndActor(const std::shared_ptr<Actor>& actor) {
  Actor& a = *actor;
  if (a.ended || a.busy) return;  // the running work ends it
  if (a.state != ACCEL_ACTOR_STATE_DEAD) KillActor(a, fmt::format("{} was destroyed", a.name));
  // Calls still queued fail now.
  for (auto& t : queue_) {
    if (t->kind == TaskKind::kActorCall && t->actor == actor) t->cancel_requested = t->cancel_requested || a.destroyed;
  }
  if (a.holder && (a.holder->state == TaskState::kWaiting || a.holder->state == TaskState::kPending)) {
    // Still waiting for a reservation: Schedule ends that wait, then this.
    a.holder->cancel_requested = true;
    return;
  }
  if (a.placed_once && a.finalize != nullptr) {
    a.placed_once = false;  // finalize runs once
    auto fin = NewTask();
    fin->kind = TaskKind::kActorFinalize;
    fin->owner = this;
    fin->actor = actor;
    fin->id = next_task_++;
    fin->name = fmt::format("finalize of {}", a.name);
    fin->ranks = a.holder->ranks;
    fin->memory = a.holder->memory;
    fin->state = TaskState::kRunning;
    a.busy = true;
    MakeReady(fin);  // wakes a worker
    return;
  }
  CompleteActorEnd(a);
}

void Runtime::CompleteActorEnd(Actor& a) {
  if (a.ended) return;
  a.ended = true;
  if (a.holder) {
    ReleasePlacement(*a.holder);
    a.holder->state = TaskState::kDone;
    if (a.holder->queue) --a.holder->queue->open_work;
  }
  if (a.tenant != nullptr) {
    accel_tenant_destroy(a.tenant);
    a.tenant = nullptr;
  }
  for (auto& weak : actors_) {
    if (auto p = weak.lock(); p.get() == &a) {
      actors_to_release_.push_back(p);
      releases_due_.store(true, std::memory_order_release);
      break;
    }
  }
  if (a.holder) a.holder->actor.reset();  // the holder and the actor pointed at each other
  a.holder.reset();
  std::erase_if(actors_, [](const std::weak_ptr<Actor>& w) { return w.expired(); });
}

void Runtime::DestroyActor(const std::shared_ptr<Actor>& actor) {
  {
    std::unique_lock lock(mutex_);
    Actor& a = *actor;
    if (a.destroyed) return;
    a.destroyed = true;
    for (auto& t : queue_) {
      if (t->kind == TaskKind::kActorCall && t->actor == actor) t->cancel_requested = true;
    }
    if (a.state == ACCEL_ACTOR_STATE_PENDING || a.state == ACCEL_ACTOR_STATE_RESTARTING) {
      // Waiting, placed or in init: the holder ends it (Schedule or AfterActorWork).
      a.holder->cancel_requested = true;
    } else {
      EndActor(actor);
    }
    Schedule(lock);
  }
  FlushReleases();
}

accel_actor_info_t Runtime::Info(const Actor& actor) const {
  std::lock_guard lock(mutex_);
  accel_actor_info_t info{};
  info.state = actor.state;
  info.restarts = actor.restarts;
  info.calls_pending = actor.calls_pending;
  info.calls_done = actor.calls_done;
  return info;
}

std::string Runtime::ActorMessage(const Actor& actor) const {
  std::lock_guard lock(mutex_);
  if (actor.state == ACCEL_ACTOR_STATE_DEAD) return actor.message;
  if ((actor.state == ACCEL_ACTOR_STATE_PENDING || actor.state == ACCEL_ACTOR_STATE_RESTARTING) && actor.holder) {
    return actor.holder->message;
  }
  return "";
}

// --- Queues ---------------------------------------------------------------

accel_status_t Runtime::CreateQueue(const accel_queue_desc_t& desc, std::shared_ptr<Queue> parent,
                                    std::shared_ptr<Queue>* out, std::string* why) {
  auto bad = [&](std::string text) {
    *why = std::move(text);
    return ACCEL_ERROR_INVALID_ARGUMENT;
  };
  if (desc.name == nullptr || desc.name[0] == '\0') return bad("'desc->name' is NULL or empty");
  const std::string name = desc.name;
  if (name.find('/') != std::string::npos) return bad(fmt::format("'desc->name' '{}' contains '/'", name));
  auto amount = [&](double v, const char* field) -> std::string {
    if (std::isnan(v) || v < 0.0 || std::isinf(v)) {
      return fmt::format("'desc->{}' is {}: an amount of devices is finite and >= 0", field, v);
    }
    // In share units it must fit an int64 (llround past it is undefined, and made a negative quota).
    if (v * static_cast<double>(planner::kShareUnits) >= 9.2e18) {
      return fmt::format("'desc->{}' is {:g}: at most 9.2e18 / {} devices", field, v, planner::kShareUnits);
    }
    return "";
  };
  for (auto [v, f] : {std::pair{desc.quota_devices, "quota_devices"}, std::pair{desc.limit_devices, "limit_devices"}}) {
    if (auto e = amount(v, f); !e.empty()) return bad(e);
  }
  if (std::isnan(desc.weight) || desc.weight < 0.0 || std::isinf(desc.weight)) {
    return bad(fmt::format("'desc->weight' is {}: a weight is finite and > 0 (0 means 1)", desc.weight));
  }
  if (desc.limit_devices > 0.0 && desc.limit_devices < desc.quota_devices) {
    return bad(fmt::format("'desc->limit_devices' {:g} is below 'desc->quota_devices' {:g}", desc.limit_devices,
                           desc.quota_devices));
  }
  if (desc.limit_memory > 0 && desc.limit_memory < desc.quota_memory) {
    return bad(
        fmt::format("'desc->limit_memory' {} is below 'desc->quota_memory' {}", desc.limit_memory, desc.quota_memory));
  }
  std::lock_guard lock(mutex_);
  if (stopping_) {
    *why = "the runtime is being destroyed";
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  if (parent) {
    if (parent->owner != this) return bad("'desc->parent' is a queue of another runtime");
    if (parent.get() == default_queue_.get()) return bad("'desc->parent' is the default queue, which has no children");
    if (parent->open_work > 0) {
      *why = fmt::format(
          "'desc->parent' ('{}') holds {} task(s) or actor(s) not ended: only a queue without work "
          "gets children",
          parent->name, parent->open_work.load());
      return ACCEL_ERROR_FAILED_PRECONDITION;
    }
  }
  const std::string path = parent ? parent->name + "/" + name : name;
  std::erase_if(queues_, [](const std::weak_ptr<Queue>& w) { return w.expired(); });
  for (const auto& weak : queues_) {
    auto q = weak.lock();
    if (q && !q->destroyed && q->name == path) return bad(fmt::format("'desc->name': queue '{}' exists", path));
  }
  auto q = std::make_shared<Queue>();
  q->name = path;
  q->parent = parent;
  q->quota_share = static_cast<int64_t>(std::llround(desc.quota_devices * static_cast<double>(planner::kShareUnits)));
  q->limit_share = static_cast<int64_t>(std::llround(desc.limit_devices * static_cast<double>(planner::kShareUnits)));
  q->quota_memory = desc.quota_memory;
  q->limit_memory = desc.limit_memory;
  q->weight = desc.weight > 0.0 ? desc.weight : 1.0;
  q->owner = this;
  q->runtime = weak_from_this();
  if (parent) {
    // Counted first, then checked again: a direct task submitted meanwhile (without the lock) does the reverse.
    parent->children.fetch_add(1, std::memory_order_seq_cst);
    if (parent->open_work.load(std::memory_order_seq_cst) > 0) {
      parent->children.fetch_sub(1, std::memory_order_seq_cst);
      *why = fmt::format("'desc->parent' ('{}') got a task just now: only a queue without work gets children",
                         parent->name);
      return ACCEL_ERROR_FAILED_PRECONDITION;
    }
  }
  queues_.push_back(q);
  *out = std::move(q);
  return ACCEL_SUCCESS;
}

accel_status_t Runtime::DestroyQueue(const std::shared_ptr<Queue>& queue, std::string* why) {
  std::lock_guard lock(mutex_);
  if (queue->destroyed) {  // another thread's destroy won: its parent's child count is not lowered twice
    *why = "'queue' is a stale queue handle (already destroyed)";
    return ACCEL_ERROR_INVALID_HANDLE;
  }
  if (queue->children > 0 || queue->open_work > 0) {
    *why = fmt::format("queue '{}' still has {} child queue(s) and {} task(s) or actor(s) not ended", queue->name,
                       queue->children.load(), queue->open_work.load());
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  queue->destroyed = true;
  if (queue->parent) --queue->parent->children;
  return ACCEL_SUCCESS;
}

accel_queue_usage_t Runtime::Usage(const Queue& queue) const {
  std::lock_guard lock(mutex_);
  accel_queue_usage_t u{};
  u.devices = Devices(queue.used_share);
  u.memory = queue.used_memory;
  for (const auto& t : queue_) {
    if (t->state == TaskState::kPending && t->kind == TaskKind::kTask && Within(t->queue.get(), &queue)) ++u.pending;
  }
  u.running = queue.running;
  u.finished = queue.finished;
  if (&queue == default_queue_.get()) {
    for (const CounterShard& shard : shards_) u.finished += shard.default_finished.load(std::memory_order_relaxed);
  }
  u.preempted = queue.preempted;
  u.dominant_share = Dominant(queue);
  // Over quota: past the quota of a dimension that has one; a queue without any quota is over it once it holds
  // anything (docs/scheduler.md, "Queues").
  const bool no_quota = queue.quota_share == 0 && queue.quota_memory == 0;
  const bool over = no_quota ? (queue.used_share > 0 || queue.used_memory > 0)
                             : ((queue.quota_share > 0 && queue.used_share > queue.quota_share) ||
                                (queue.quota_memory > 0 && queue.used_memory > queue.quota_memory));
  u.over_quota = over ? 1 : 0;
  return u;
}

}  // namespace accel::runtime
