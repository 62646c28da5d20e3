// The lineage of an object a task made (docs/objectstore.md, "Lineage"):
// what it takes to run that task again when every copy of its result is
// lost. It keeps the task's function, user data (whose release it takes
// over: the user data lives as long as the object), request, queue and
// argument objects (a reference each).
//
//   // At the end of a task that called accel_task_context_set_result:
//   store.SetLineage(task.result.object, std::make_shared<TaskLineage>(runtime, task));
//
// Thread-safe: Remake may be called from any thread; the object store calls
// it without its lock.
#ifndef ACCEL_RUNTIME_LINEAGE_H_
#define ACCEL_RUNTIME_LINEAGE_H_

#include <accel/runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "object_store.h"
#include "runtime.h"

namespace accel::runtime {

class TaskLineage final : public Lineage, public std::enable_shared_from_this<TaskLineage> {
 public:
  // Takes `task`'s release_user_data (the object's life now bounds the user data's) and a new reference to each
  // of its argument objects.
  TaskLineage(std::weak_ptr<Runtime> runtime, Task& task);
  // Releases the user data and the argument references.
  ~TaskLineage() override;
  TaskLineage(const TaskLineage&) = delete;
  TaskLineage& operator=(const TaskLineage&) = delete;

  // Submits the task again, with remake_for set to `object`: its end hands its result to the store. The task holds
  // the lineage (and so its user data) until it ended. Made by std::make_shared.
  bool Remake(const std::shared_ptr<Object>& object, std::string* why) override;
  const std::string& producer() const override { return producer_; }

 private:
  std::weak_ptr<Runtime> runtime_;
  std::string producer_;  // "task 7 ('load')"
  accel_task_function_t function_ = nullptr;
  void* user_data_ = nullptr;
  void (*release_user_data_)(void*) = nullptr;
  Request request_;
  std::shared_ptr<Queue> queue_;
  uint32_t max_retries_ = 0;
  int32_t priority_ = 0;
  std::vector<HeldObject> arguments_;
};

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_LINEAGE_H_
