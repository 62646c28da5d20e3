// The body of the runtime.hpp compile tests (runtime_hpp_cxx17.cc,
// runtime_hpp_cxx20.cc), as hpp_compile.h is for accel.hpp.
//
// exercise() uses every class and member of runtime.hpp, so each template is
// instantiated and type-checked; it is an inline function nobody calls, so
// nothing of it is emitted and the tests link without libaccel or
// libaccel-runtime. main() then checks the parts that need no library at run
// time (the builders of the C structs). Behaviour against the sim backend is
// tested in tests/runtime/runtime_hpp_test.cc.
#ifndef ACCEL_TESTS_ABI_RUNTIME_HPP_COMPILE_H_
#define ACCEL_TESTS_ABI_RUNTIME_HPP_COMPILE_H_

#include "accel/object_store.hpp"
#include "accel/runtime.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace runtime_hpp_compile {

// Owners are move-only and never throw on move or destruction.
template <class T>
constexpr bool kMoveOnlyOwner = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                                std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T> &&
                                std::is_nothrow_destructible_v<T> && std::is_nothrow_default_constructible_v<T>;
static_assert(kMoveOnlyOwner<accel::Runtime>);
static_assert(kMoveOnlyOwner<accel::Future>);
static_assert(kMoveOnlyOwner<accel::PlacementGroup>);
static_assert(kMoveOnlyOwner<accel::Queue>);
static_assert(kMoveOnlyOwner<accel::Actor<int>>);
static_assert(kMoveOnlyOwner<accel::Actor<std::unique_ptr<int>>>);
// 1.2: the object store (object_store.hpp). An Object is a counted reference: copyable; a view is move-only.
static_assert(kMoveOnlyOwner<accel::ObjectView>);
static_assert(std::is_copy_constructible_v<accel::Object> && std::is_nothrow_move_constructible_v<accel::Object> &&
              std::is_nothrow_destructible_v<accel::Object>);

// Every member of object_store.hpp, type-checked; never called.
inline void exercise_objects(const accel::Runtime& rt, accel_buffer_t buffer) {
  accel::Runtime with_store = accel::make_runtime_with_store(nullptr, accel::ObjectStoreOptions{1, 2, "/tmp/x"}, 2);
  accel::Object o = accel::put(rt, "x", 1, "name");
  accel::Object from_buffer = accel::put(rt, buffer, 0, 16);
  accel::Object adopted_buffer = accel::adopt(rt, buffer, 16, "name");
  accel::Object copy = o;
  copy = from_buffer;
  std::vector<accel::Object> parts =
      accel::put_file(rt, "/tmp/weights.bin", {0, 1, ACCEL_OBJECT_LOCATION_HOST}, 1 << 20);
  accel::ObjectView view = o.get(0, std::chrono::seconds(1));
  static_cast<void>(accel::TaskOptions().near(o.handle()));
  accel::ObjectView host = o.get();
  static_cast<void>(view.data() == nullptr && view.buffer() == nullptr && view.offset() + view.size() > 0 &&
                    view.location() == 0 && host.info().size > 0);
  static_cast<void>(o.size() + o.info().references + (o.on_device(0) ? 1 : 0) +
                    accel::object_store_usage(rt, ACCEL_OBJECT_LOCATION_HOST).used);
  accel_object_t raw = copy.release();
  accel::Object adopted = accel::Object::adopt(raw);
  accel::ObjectView adopted_view = accel::ObjectView::adopt(host.release());
  const std::string token = o.share();
  accel::Object imported = accel::import_object(rt, token);
  static_cast<void>(static_cast<bool>(adopted) && static_cast<bool>(adopted_view) && o.handle() != nullptr &&
                    static_cast<bool>(imported));
  const accel::TaskContext context;
  accel::set_result(context, o);
  accel::Object argument = accel::task_object(context, 0);
  const accel::Future future;
  accel::Object result = accel::result_object(future);
  static_cast<void>(static_cast<bool>(argument) && static_cast<bool>(result) && static_cast<bool>(adopted_buffer));
}
static_assert(sizeof(accel::Runtime) == sizeof(accel_runtime_t) && sizeof(accel::Future) == sizeof(accel_future_t));
static_assert(sizeof(accel::Actor<std::string>) == sizeof(accel_actor_t));
// The task context is a handle and nothing more.
static_assert(std::is_trivially_copyable_v<accel::TaskContext> &&
              sizeof(accel::TaskContext) == sizeof(accel_task_context_t) &&
              std::is_nothrow_default_constructible_v<accel::TaskContext>);
// No accidental conversions from raw handles.
static_assert(!std::is_convertible_v<accel_instance_t, accel::Runtime>);
static_assert(!std::is_convertible_v<accel_task_context_t, accel::TaskContext>);
static_assert(!std::is_constructible_v<accel::Future, accel_future_t>);  // adopt() says so instead
static_assert(!std::is_constructible_v<accel::Queue, accel_queue_t>);
static_assert(!std::is_constructible_v<accel::Runtime, accel_runtime_t>);
static_assert(!std::is_convertible_v<std::string, accel::QueueDesc>);
// Plain values.
static_assert(std::is_copy_constructible_v<accel::ResourceRequest> &&
              std::is_nothrow_move_constructible_v<accel::ResourceRequest>);
static_assert(std::is_copy_constructible_v<accel::TaskOptions> &&
              std::is_nothrow_move_constructible_v<accel::TaskOptions>);
static_assert(std::is_copy_constructible_v<accel::QueueDesc>);
static_assert(std::is_copy_constructible_v<accel::ActorOptions<int>>);

inline accel_status_t plain_task(accel::TaskContext&) { return ACCEL_SUCCESS; }
inline void plain_void_task(accel::TaskContext&) {}

struct MoveOnlyTask {
  std::unique_ptr<int> data;
  void operator()(accel::TaskContext&) {}
};

struct Model {
  std::unique_ptr<int> weights;  // a move-only state
  int steps = 0;
};

// Never called: instantiates the whole wrapper.
inline void exercise() {
  accel::Instance instance;
  accel::Runtime runtime(instance);
  accel::Runtime few(instance, 2);
  accel::Runtime raw(instance.handle());
  raw = std::move(few);
  accel::Runtime adopted = accel::Runtime::adopt(raw.release());
  std::vector<accel_runtime_device_t> devices = runtime.devices();
  accel_runtime_counters_t counters = adopted.counters();
  std::printf("%zu %llu %u\n", devices.size(), static_cast<unsigned long long>(counters.submitted),
              accel::runtime_version());

  // Tasks.
  accel::Future first = runtime.submit([](accel::TaskContext& ctx) {
    accel::Device device = ctx.device(0);
    accel::PhysicalDevice chip = ctx.physical_device(0);
    std::printf("%u %llu %u %d %d %d %p\n", ctx.device_count(), static_cast<unsigned long long>(ctx.memory_limit(0)),
                ctx.attempt(), ctx.cancelled(), ctx.preempted(), device == accel::Device() || !chip,
                static_cast<void*>(ctx.handle()));
  });
  accel::Future second = runtime.submit([](const accel::TaskContext&) -> accel_status_t { return ACCEL_SUCCESS; },
                                        accel::TaskOptions().after(first));
  accel::Future third = runtime.submit(&plain_task);
  accel::Future fourth = runtime.submit(plain_void_task);
  accel::Future fifth = runtime.submit(MoveOnlyTask{});
  std::vector<accel::Future> both;
  both.push_back(std::move(third));
  both.push_back(std::move(fourth));
  accel::Queue prod(runtime, accel::QueueDesc("prod").quota(4.0, 64ull << 30).limit(6.0).weight(3.0));
  accel::Queue team(runtime, accel::QueueDesc("team").parent(prod));
  accel::PlacementGroup gang(runtime, std::vector<accel::ResourceRequest>(8, accel::ResourceRequest().devices(1)),
                             ACCEL_PLACEMENT_STRATEGY_STRICT_PACK, ACCEL_TOPOLOGY_LEVEL_CLIQUE, true, "gang");
  accel::PlacementGroup defaults(runtime, {accel::ResourceRequest().devices(2).share(0.5)});
  accel::PlacementGroup adopted_group = accel::PlacementGroup::adopt(defaults.release());
  accel::PlacementGroup pending(runtime, {accel::ResourceRequest().devices(1)}, ACCEL_PLACEMENT_STRATEGY_PACK,
                                ACCEL_TOPOLOGY_LEVEL_CLIQUE, true, "later", nullptr, ACCEL_PLACEMENT_GROUP_WAIT);
  static_cast<void>(pending.wait(std::chrono::seconds(1)) && !pending.message().empty());
  const accel::TaskOptions options = accel::TaskOptions()
                                         .name("train")
                                         .request(accel::ResourceRequest()
                                                      .devices(1)
                                                      .share(0.25)
                                                      .memory(1ull << 30)
                                                      .selector("kind==gpu")
                                                      .placement_group(gang, 3))
                                         .after(second)
                                         .after(both)
                                         .max_retries(2)
                                         .queue(team)
                                         .priority(-1)
                                         .preemptible();
  accel::Future sixth =
      runtime.submit([big = std::vector<int>(100)](accel::TaskContext&) mutable { big.push_back(1); }, options);
  for (const accel_bundle_device_t& d : gang.devices()) std::printf("%u %u\n", d.bundle, d.rank);
  accel_queue_usage_t usage = team.usage();
  accel::Queue adopted_queue = accel::Queue::adopt(prod.release());
  accel_status_t status = sixth.query();
  bool ended = sixth.wait() && sixth.wait(std::chrono::milliseconds(10)) && fifth.wait(accel::infinite);
  sixth.get();
  sixth.cancel();
  std::string why = sixth.message();
  accel::Future readopted = accel::Future::adopt(sixth.release());
  std::printf("%f %d %d %s %d\n", usage.devices, static_cast<int>(status), ended, why.c_str(),
              !readopted || !adopted_group || !adopted_queue);

  // Actors.
  accel::Actor<Model> model(
      runtime, Model{std::make_unique<int>(1), 0},
      accel::ActorOptions<Model>()
          .name("model")
          .request(accel::ResourceRequest().devices(1).share(0.5))
          .queue(team)
          .priority(3)
          .max_restarts(1)
          .init([](accel::TaskContext& ctx, Model& m) { m.steps = static_cast<int>(ctx.attempt()); })
          .finalize([](accel::TaskContext&, Model&) -> accel_status_t { return ACCEL_SUCCESS; }));
  accel::Actor<int> counter(runtime, 0);
  accel::Future step = model.call([](accel::TaskContext&, Model& m) { ++m.steps; });
  accel::Future named = model.call([](accel::TaskContext&, Model&) -> accel_status_t { return ACCEL_SUCCESS; },
                                   accel::TaskOptions().name("step").after(step).max_retries(1));
  counter.call([](accel::TaskContext&, int& n) { ++n; }).get();
  accel_actor_info_t info = model.info();
  std::printf("%d %u %s\n", static_cast<int>(info.state), info.restarts, model.message().c_str());
  accel::Actor<int> moved_counter = std::move(counter);
  accel_actor_t raw_actor = moved_counter.release();
  static_cast<void>(raw_actor);
  static_cast<void>(named);
}

// The parts of runtime.hpp that run without libaccel. Returns the failures.
inline int run_checks() {
  int failures = 0;
  auto expect = [&failures](bool ok, const char* what) {
    if (!ok) {
      std::printf("FAIL %s\n", what);
      ++failures;
    }
  };

  const accel_resource_request_t none = accel::ResourceRequest().c_request();
  expect(none.stype == ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST && none.struct_size == sizeof none && none.next == nullptr,
         "ResourceRequest::c_request fills the header");
  expect(none.device_count == 0 && none.share == 1.0 && none.memory == 0 && none.selector == nullptr &&
             none.placement_group == nullptr && none.bundle_index == 0,
         "an empty request asks for no device, a whole share when it does");
  const accel::ResourceRequest quarter = accel::ResourceRequest().devices(2).share(0.25).memory(4096).selector("bf16");
  const accel::ResourceRequest copied = quarter;
  const accel_resource_request_t c_quarter = copied.c_request();
  expect(c_quarter.device_count == 2 && c_quarter.share == 0.25 && c_quarter.memory == 4096 &&
             c_quarter.selector != nullptr && std::strcmp(c_quarter.selector, "bf16") == 0,
         "the setters are passed on, and survive a copy");

  accel_resource_request_t storage{};
  const accel_task_desc_t plain = accel::TaskOptions().c_desc(storage);
  expect(plain.stype == ACCEL_STRUCTURE_TYPE_TASK_DESC && plain.struct_size == sizeof plain && plain.next == nullptr,
         "TaskOptions::c_desc fills the header (the 1.1 size)");
  expect(plain.name == nullptr && plain.request == nullptr && plain.dependencies == nullptr &&
             plain.dependency_count == 0 && plain.function == nullptr && plain.user_data == nullptr &&
             plain.queue == nullptr && plain.priority == 0 && plain.preemptible == 0 && plain.max_retries == 0,
         "empty options leave everything NULL or 0");
  const accel::TaskOptions options =
      accel::TaskOptions().name("load").request(quarter).max_retries(3).priority(-2).preemptible();
  const accel_task_desc_t set = options.c_desc(storage);
  expect(set.name != nullptr && std::strcmp(set.name, "load") == 0 && set.max_retries == 3 && set.priority == -2 &&
             set.preemptible == 1,
         "name, retries, priority and preemptible are passed on");
  expect(set.request == &storage && storage.stype == ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST &&
             storage.device_count == 2 && storage.selector != nullptr && std::strcmp(storage.selector, "bf16") == 0,
         "the request is written where the caller says");
  expect(accel::TaskOptions().preemptible(true).preemptible(false).c_desc(storage).preemptible == 0,
         "preemptible(false) clears it");

  const accel::QueueDesc queue = accel::QueueDesc("prod").quota(4.0, 1024).limit(6.0, 2048).weight(3.0);
  const accel_queue_desc_t c_queue = queue.c_desc();
  expect(c_queue.stype == ACCEL_STRUCTURE_TYPE_QUEUE_DESC && c_queue.struct_size == sizeof c_queue &&
             std::strcmp(c_queue.name, "prod") == 0 && c_queue.parent == nullptr && c_queue.quota_devices == 4.0 &&
             c_queue.quota_memory == 1024 && c_queue.limit_devices == 6.0 && c_queue.limit_memory == 2048 &&
             c_queue.weight == 3.0,
         "QueueDesc passes every field on");
  const accel_queue_desc_t c_default = accel::QueueDesc("q").c_desc();
  expect(c_default.quota_devices == 0.0 && c_default.limit_devices == 0.0 && c_default.weight == 1.0,
         "a default queue has no quota, no limit and weight 1");

  int hook_calls = 0;
  const accel::ActorOptions<int> actor =
      accel::ActorOptions<int>().name("kv").request(quarter).priority(5).max_restarts(2).init(
          [&hook_calls](accel::TaskContext&, int& n) {
            ++hook_calls;
            n = 7;
          });
  const accel_actor_desc_t c_actor = actor.c_desc(storage);
  expect(c_actor.stype == ACCEL_STRUCTURE_TYPE_ACTOR_DESC && c_actor.struct_size == sizeof c_actor &&
             std::strcmp(c_actor.name, "kv") == 0 && c_actor.request == &storage && c_actor.priority == 5 &&
             c_actor.max_restarts == 2 && c_actor.queue == nullptr && c_actor.init == nullptr &&
             c_actor.user_data == nullptr,
         "ActorOptions::c_desc passes the fields on, hooks left to Actor");
  accel::TaskContext no_context;
  int state = 0;
  expect(static_cast<bool>(actor.init_hook()) && !actor.finalize_hook(), "only the hook set is set");
  expect(actor.init_hook()(no_context, state) == ACCEL_SUCCESS && state == 7 && hook_calls == 1,
         "a hook that returns nothing succeeds");
  expect(!no_context && no_context.handle() == nullptr, "a default TaskContext is null");

  return failures;
}

}  // namespace runtime_hpp_compile

#endif  // ACCEL_TESTS_ABI_RUNTIME_HPP_COMPILE_H_
