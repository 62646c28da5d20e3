// TaskLineage: running a task again to make its lost result.
#include "lineage.h"

#include <fmt/format.h>

#include <utility>

namespace accel::runtime {

TaskLineage::TaskLineage(std::weak_ptr<Runtime> runtime, Task& task)
    : runtime_(std::move(runtime)),
      producer_(task.Name()),
      function_(task.function),
      user_data_(task.user_data),
      release_user_data_(std::exchange(task.release_user_data, nullptr)),
      request_(task.request),
      queue_(task.queue),
      max_retries_(task.max_retries),
      priority_(task.priority) {
  // A bundle's group may be gone by the time of a remake: the same amounts, anywhere.
  request_.group.reset();
  request_.bundle = 0;
  for (const HeldObject& held : task.near) {
    if (RetainObject(*held.object)) arguments_.push_back(held);
  }
}

TaskLineage::~TaskLineage() {
  auto rt = runtime_.lock();
  for (const HeldObject& held : arguments_) ReleaseObject(held, rt ? &rt->store() : nullptr);
  if (release_user_data_ != nullptr) release_user_data_(user_data_);
}

bool TaskLineage::Remake(const std::shared_ptr<Object>& object, std::string* why) {
  auto rt = runtime_.lock();
  if (!rt || rt->stopping()) {
    *why = "the runtime is being destroyed";
    return false;
  }
  if (queue_ && queue_->destroyed) {
    *why = fmt::format("its queue '{}' was destroyed", queue_->name);
    return false;
  }
  auto task = NewTask();
  task->owner = rt.get();
  task->name = fmt::format("re-run of {} for {}", producer_, object->name);
  task->function = function_;
  task->user_data = user_data_;               // still the lineage's: released with it,
  task->remake_lineage = shared_from_this();  // which the task keeps until it ended
  task->request = request_;
  task->queue = queue_;
  task->max_retries = max_retries_;
  task->priority = priority_;
  task->remake_for = object;
  task->remake = true;
  for (const HeldObject& held : arguments_) {
    if (RetainObject(*held.object)) task->near.push_back(held);
  }
  const accel_status_t status = rt->Submit(task, why);
  if (status != ACCEL_SUCCESS) {
    for (const HeldObject& held : task->near) ReleaseObject(held, &rt->store());
    return false;
  }
  return true;
}

}  // namespace accel::runtime
