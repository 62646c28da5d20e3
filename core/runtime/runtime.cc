// The scheduler (docs/scheduler.md).
#include "runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "handles.h"
#include "selector.h"

namespace accel::runtime {

namespace {

thread_local Task* t_current_task = nullptr;        // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
thread_local const Runtime* t_worker_of = nullptr;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

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

}  // namespace

Task* CurrentTask() { return t_current_task; }

planner::Expected<std::shared_ptr<Runtime>> Runtime::Create(accel_instance_t instance, uint32_t workers) {
  auto resources = ReadResources(instance);
  if (!resources) return resources.error();
  std::shared_ptr<Runtime> runtime(new Runtime(instance, std::move(resources).value()));
  if (workers == 0) workers = std::max(2U, std::thread::hardware_concurrency());
  runtime->workers_.reserve(workers);
  for (uint32_t i = 0; i < workers; ++i) runtime->workers_.emplace_back([r = runtime.get()] { r->WorkerLoop(); });
  return runtime;
}

Runtime::Runtime(accel_instance_t instance, Resources resources)
    : instance_(instance), resources_(std::move(resources)), planner_(*resources_.cluster) {
  counters_.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS;
  counters_.struct_size = sizeof(counters_);
}

Runtime::~Runtime() { Shutdown(); }

bool Runtime::OnWorker() const { return t_worker_of == this; }

void Runtime::Shutdown() {
  {
    std::unique_lock lock(mutex_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    for (auto& task : queue_) {
      Finish(task, ACCEL_ERROR_CANCELLED, fmt::format("{} was cancelled: the runtime was destroyed first", task->name));
    }
    queue_.clear();
    for (auto& task : ready_) {
      ReleasePlacement(*task);
      Finish(task, ACCEL_ERROR_CANCELLED, fmt::format("{} was cancelled: the runtime was destroyed first", task->name));
    }
    ready_.clear();
  }
  work_cv_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
  FlushReleases();
}

void Runtime::WorkerLoop() {
  t_worker_of = this;
  std::unique_lock lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
    if (ready_.empty()) {
      if (stopping_) return;
      continue;
    }
    std::shared_ptr<Task> task = std::move(ready_.front());
    ready_.pop_front();
    ++busy_;
    lock.unlock();
    Run(task);
    lock.lock();
    --busy_;
  }
}

accel_status_t Runtime::ReadRequest(const accel_resource_request_t* in, const std::string& field, bool in_group,
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
      // A share of the bundle's memory, in proportion to the share of its compute.
      std::lock_guard lock(mutex_);
      for (const auto& slot : q.group->slots) {
        if (slot.bundle != q.bundle) continue;
        const double part = std::min(1.0, static_cast<double>(ShareUnits(q.share)) / static_cast<double>(slot.share));
        q.memory = static_cast<uint64_t>(static_cast<double>(slot.memory) * part);
        break;
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
  if (request.group) {
    uint32_t fit = 0;
    uint32_t held = 0;
    for (const auto& slot : request.group->slots) {
      if (slot.bundle != request.bundle) continue;
      ++held;
      if (slot.share >= ShareUnits(request.share) && slot.memory >= request.memory) ++fit;
    }
    if (fit >= request.device_count) return ACCEL_SUCCESS;
    *why = fmt::format(
        "bundle {} of placement group '{}' holds {} device(s), {} of them with share {:g} and {} for "
        "the task; it asks {} device(s)",
        request.bundle, request.group->name, held, fit, request.share, Bytes(request.memory), request.device_count);
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
  planner::Planner scratch(*resources_.cluster);
  for (uint32_t i = 0; i < devices.size(); ++i) {
    if (planner_.disabled(i)) scratch.Disable(i);
  }
  auto placed = scratch.Place(GangOf(request));
  if (placed) return ACCEL_SUCCESS;
  *why = fmt::format("no device of the runtime could ever hold it, even all free: {}", placed.error().message);
  return ACCEL_ERROR_RESOURCE_EXHAUSTED;
}

accel_status_t Runtime::Submit(const std::shared_ptr<Task>& task, std::string* why) {
  {
    std::unique_lock lock(mutex_);
    if (stopping_) {
      *why = "the runtime is being destroyed";
      return ACCEL_ERROR_FAILED_PRECONDITION;
    }
    const accel_status_t feasible = Feasible(task->request, why);
    if (feasible != ACCEL_SUCCESS) return feasible;
    task->id = next_task_++;
    task->name =
        task->name.empty() ? fmt::format("task {}", task->id) : fmt::format("task {} ('{}')", task->id, task->name);
    ++counters_.submitted;
    queue_.push_back(task);
    Schedule(lock);
  }
  work_cv_.notify_all();
  FlushReleases();
  return ACCEL_SUCCESS;
}

void Runtime::Cancel(const std::shared_ptr<Task>& task) {
  {
    std::unique_lock lock(mutex_);
    task->cancel_requested = true;
    if (task->state == TaskState::kWaiting || task->state == TaskState::kPending) Schedule(lock);
  }
  FlushReleases();
}

void Runtime::FlushReleases() {
  std::vector<std::shared_ptr<Task>> tasks;
  {
    std::lock_guard lock(mutex_);
    tasks.swap(to_release_);
  }
  for (auto& task : tasks) {
    auto release = task->release_user_data;
    task->release_user_data = nullptr;
    if (release != nullptr) release(task->user_data);
  }
}

void Runtime::Schedule(std::unique_lock<std::mutex>& lock) {
  (void)lock;
  std::deque<std::shared_ptr<Task>> keep;
  bool progress = true;
  // Ending a task can release its dependents in the same pass: repeat until stable.
  while (progress) {
    progress = false;
    keep.clear();
    for (auto& task : queue_) {
      if (task->cancel_requested) {
        Finish(task, ACCEL_ERROR_CANCELLED, fmt::format("{} was cancelled before it started", task->name));
        progress = true;
        continue;
      }
      if (task->request.group && task->request.group->destroyed) {
        Finish(
            task, ACCEL_ERROR_CANCELLED,
            fmt::format("{} was cancelled: placement group '{}' was destroyed", task->name, task->request.group->name));
        progress = true;
        continue;
      }
      if (task->state == TaskState::kWaiting) {
        bool all = true;
        bool ended = false;
        for (size_t i = 0; i < task->dependencies.size() && !ended; ++i) {
          const Task& dep = *task->dependencies[i];
          if (dep.state != TaskState::kDone) {
            task->message = fmt::format("waiting for dependency {} ({})", i, dep.name);
            all = false;
            break;
          }
          if (dep.result != ACCEL_SUCCESS) {
            const accel_status_t code =
                dep.result == ACCEL_ERROR_CANCELLED ? ACCEL_ERROR_CANCELLED : ACCEL_ERROR_FAILED_PRECONDITION;
            Finish(task, code,
                   fmt::format("{} did not run: dependency {} ({}) ended with {}: {}", task->name, i, dep.name,
                               accel_status_name(dep.result), dep.message));
            ended = true;
          }
        }
        if (ended) {
          progress = true;
          continue;
        }
        if (!all) {
          keep.push_back(task);
          continue;
        }
        task->state = TaskState::kPending;
      }
      if (!stopping_ && TryPlace(*task)) {
        task->state = TaskState::kRunning;
        ++counters_.placed;
        ready_.push_back(task);
        continue;
      }
      keep.push_back(task);
    }
    queue_.swap(keep);
  }
  counters_.pending = queue_.size();
  counters_.running = ready_.size() + busy_;
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
  auto placed = planner_.Place(GangOf(r));
  if (!placed) {
    task.message = placed.error().message;
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
    if (g.destroyed && g.running == 0 && g.placement != 0) {
      planner_.Release(g.placement);
      g.placement = 0;
    }
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
  if (result == ACCEL_SUCCESS) {
    ++counters_.finished;
  } else if (result == ACCEL_ERROR_CANCELLED) {
    ++counters_.cancelled;
  } else {
    ++counters_.failed;
  }
  {
    std::lock_guard done(task->done_mutex);
    task->done = true;
    task->final_result = result;
    task->final_message = task->message;
  }
  task->done_cv.notify_all();
  if (task->release_user_data != nullptr) to_release_.push_back(task);
}

void Runtime::Run(const std::shared_ptr<Task>& task) {
  // A tenant with the task's memory on its devices and nothing elsewhere.
  std::vector<accel_tenant_limit_t> limits;
  for (size_t i = 0; i < task->ranks.size(); ++i) {
    limits.push_back({resources_.devices[task->ranks[i]].physical, task->memory[i]});
  }
  accel_tenant_desc_t td{};
  td.stype = ACCEL_STRUCTURE_TYPE_TENANT_DESC;
  td.struct_size = sizeof(td);
  td.name = task->name.c_str();
  td.limits = limits.data();
  td.limit_count = static_cast<uint32_t>(limits.size());
  td.other_limit = 0;
  accel_status_t result = ACCEL_SUCCESS;
  std::string message;
  accel_tenant_t tenant = nullptr;
  if (accel_tenant_create(instance_, &td, &tenant) != ACCEL_SUCCESS) {
    result = ACCEL_ERROR_INTERNAL;
    message = fmt::format("{}: its tenant could not be made: {}", task->name, accel_last_error());
  } else if (task->cancel_requested) {
    result = ACCEL_ERROR_CANCELLED;
    message = fmt::format("{} was cancelled before it started", task->name);
  } else {
    task->tenant = tenant;
    accel_tenant_t previous = nullptr;
    accel_thread_set_tenant(tenant, &previous);
    {
      std::lock_guard lock(mutex_);
      ++counters_.started;
    }
    Task* outer = t_current_task;
    t_current_task = task.get();
    accel_set_last_error(ACCEL_SUCCESS, nullptr);
    result = task->function(reinterpret_cast<accel_task_context_t>(task.get()), task->user_data);
    if (result < 0) {
      message = accel_last_error();
      if (message.empty()) message = fmt::format("{} returned {}", task->name, accel_status_name(result));
    } else if (result > 0) {
      message = fmt::format("{} returned {}, not a result: a task returns ACCEL_SUCCESS or an error", task->name,
                            accel_status_name(result));
      result = ACCEL_ERROR_INTERNAL;
    }
    t_current_task = outer;
    accel_thread_set_tenant(previous, nullptr);
    task->tenant = nullptr;
  }
  if (tenant != nullptr) accel_tenant_destroy(tenant);

  {
    std::unique_lock lock(mutex_);
    const std::vector<uint32_t> ranks = task->ranks;
    ReleasePlacement(*task);
    bool retry = false;
    if (result == ACCEL_ERROR_DEVICE_LOST && !task->cancel_requested && !stopping_) {
      for (uint32_t rank : ranks) {
        uint64_t free_bytes = 0;
        if (!planner_.disabled(rank) && accel_device_get_memory_info(resources_.devices[rank].path, &free_bytes,
                                                                     nullptr) == ACCEL_ERROR_DEVICE_LOST) {
          planner_.Disable(rank);
          ++counters_.devices_lost;
        }
      }
      if (task->attempt < task->max_retries) {
        std::string why;
        if (Feasible(task->request, &why) == ACCEL_SUCCESS) {
          retry = true;
        } else {
          message = fmt::format("{} (attempt {}), and no retry can run: {}", message, task->attempt, why);
        }
      }
    }
    if (retry) {
      ++task->attempt;
      ++counters_.retried;
      task->state = TaskState::kPending;
      task->message = fmt::format("retry {} of {} after: {}", task->attempt, task->max_retries, message);
      queue_.push_front(task);
    } else {
      Finish(task, result, message);
    }
    Schedule(lock);
  }
  work_cv_.notify_all();
  FlushReleases();
}

accel_status_t Runtime::CreateGroup(const accel_placement_group_desc_t& desc, std::shared_ptr<PlacementGroup>* out,
                                    std::string* why) {
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
  auto group = std::make_shared<PlacementGroup>();
  group->bundle_count = desc.bundle_count;
  group->runtime = weak_from_this();
  std::lock_guard lock(mutex_);
  if (stopping_) {
    *why = "the runtime is being destroyed";
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  auto placed = planner_.Place(gang);
  if (!placed) {
    ++counters_.placement_groups_refused;
    *why = fmt::format("{}nothing is held: {}",
                       desc.name != nullptr ? fmt::format("placement group '{}': ", desc.name) : std::string(),
                       placed.error().message);
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  }
  ++counters_.placement_groups_created;
  group->placement = placed->id;
  group->name = desc.name != nullptr && desc.name[0] != '\0' ? desc.name : fmt::format("group {}", placed->id);
  for (const auto& a : placed->assignments) {
    group->slots.push_back({a.bundle, a.device, a.share, a.memory, a.share, a.memory});
  }
  *out = std::move(group);
  return ACCEL_SUCCESS;
}

void Runtime::DestroyGroup(const std::shared_ptr<PlacementGroup>& group) {
  {
    std::unique_lock lock(mutex_);
    group->destroyed = true;
    if (group->running == 0 && group->placement != 0) {
      planner_.Release(group->placement);
      group->placement = 0;
    }
    Schedule(lock);
  }
  work_cv_.notify_all();
  FlushReleases();
}

std::string Runtime::Explain(const Task& task) const {
  std::lock_guard lock(mutex_);
  if (task.state == TaskState::kWaiting || task.state == TaskState::kPending) return task.message;
  return "";
}

accel_runtime_counters_t Runtime::Counters() const {
  std::lock_guard lock(mutex_);
  accel_runtime_counters_t c = counters_;
  c.pending = queue_.size();
  c.running = ready_.size() + busy_;
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

}  // namespace accel::runtime
