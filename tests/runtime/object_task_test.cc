// Tasks and objects (include/accel/object_store.h, docs/objectstore.md
// "Tasks and objects" and "Lineage") on the sim backend's 8-GPU node: a
// task's objects are held for its life and read through its context, its
// result object comes back through its future with counted references, and
// an object whose every copy is lost with a device is made again by running
// its task elsewhere, with the bytes verified, the user data released only
// when the object goes, and a clear error for an object no task made.
#include <accel/object_store.h>
#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "object_fixture.h"
#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

// What the tasks below share with the test.
struct Work {
  Work() = default;
  Work(accel_runtime_t rt, std::vector<uint8_t> what, bool on_device)
      : runtime(rt), bytes(std::move(what)), from_device(on_device) {}

  accel_runtime_t runtime = nullptr;
  std::vector<uint8_t> bytes;                            // what the task puts
  bool from_device = false;                              // put from a buffer on its device (else from the host)
  std::atomic<int> runs{0};                              // times the function ran
  std::atomic<int> released{0};                          // times its user data was released
  std::atomic<accel_physical_device_t> device{nullptr};  // the device of its last run
  Gate* gate = nullptr;                                  // when set, the task waits for it first
};

// Puts `work->bytes` (on the task's device when `from_device`), sets the
// object as the task's result and drops the task's own handle.
accel_status_t MakeResult(accel_task_context_t ctx, void* p) {
  auto* work = static_cast<Work*>(p);
  ++work->runs;
  if (work->gate != nullptr) work->gate->Wait();
  accel_object_put_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
  d.struct_size = sizeof(d);
  d.size = work->bytes.size();
  accel_buffer_t buffer = nullptr;
  if (work->from_device) {
    accel_device_t device = nullptr;
    accel_physical_device_t physical = nullptr;
    if (accel_task_context_get_device(ctx, 0, &device) != ACCEL_SUCCESS ||
        accel_task_context_get_physical_device(ctx, 0, &physical) != ACCEL_SUCCESS) {
      return ACCEL_ERROR_INTERNAL;
    }
    work->device = physical;
    const auto bd = BufferDesc(work->bytes.size());
    accel_status_t s = accel_buffer_create(device, &bd, &buffer);
    accel_stream_t stream = nullptr;
    if (s == ACCEL_SUCCESS) s = accel_stream_create(device, nullptr, &stream);
    if (s == ACCEL_SUCCESS) {
      s = accel_stream_copy_host_to_buffer(stream, work->bytes.data(), buffer, 0, work->bytes.size());
    }
    if (s == ACCEL_SUCCESS) s = accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE);
    if (stream != nullptr) accel_stream_destroy(stream);
    if (s != ACCEL_SUCCESS) {
      if (buffer != nullptr) accel_buffer_destroy(buffer);
      return s;
    }
    d.buffer = buffer;
  } else {
    d.data = work->bytes.data();
  }
  accel_object_t object = nullptr;
  accel_status_t s = accel_object_put(work->runtime, &d, &object);
  if (buffer != nullptr) accel_buffer_destroy(buffer);
  if (s != ACCEL_SUCCESS) return s;
  s = accel_task_context_set_result(ctx, object);
  accel_object_release(object);  // the task's result holds its own reference
  return s;
}

accel_status_t Submit(accel_runtime_t rt, Work* work, const accel_resource_request_t* request,
                      const accel_object_t* objects, uint32_t object_count, accel_future_t* out,
                      accel_task_function_t function = MakeResult) {
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.function = function;
  d.user_data = work;
  d.release_user_data = [](void* p) { ++static_cast<Work*>(p)->released; };
  d.request = request;
  d.near_objects = objects;
  d.near_object_count = object_count;
  d.name = "make";
  return accel_task_submit(rt, &d, out);
}

// Runs a task that makes `work`'s result on a device of `request` and returns the object (null, recorded, when
// that failed).
accel_object_t ResultOf(accel_runtime_t rt, Work* work, const accel_resource_request_t* request) {
  accel_future_t f = nullptr;
  EXPECT_EQ(Submit(rt, work, request, nullptr, 0, &f), ACCEL_SUCCESS) << accel_last_error();
  if (f == nullptr) return nullptr;
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
  accel_object_t result = nullptr;
  EXPECT_EQ(accel_future_get_object(f, &result), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  return result;
}

// Allocates on `device` until the loss injected on it (ACCEL_SIM_FAULTS device_lost_after) happens: true then.
bool UseUntilLost(accel_device_t device) {
  const auto bd = BufferDesc(4096);
  accel_status_t s = ACCEL_SUCCESS;
  for (int i = 0; i < 400 && s != ACCEL_ERROR_DEVICE_LOST; ++i) {
    accel_buffer_t b = nullptr;
    s = accel_buffer_create(device, &bd, &b);
    if (b != nullptr) accel_buffer_destroy(b);
  }
  return s == ACCEL_ERROR_DEVICE_LOST;
}

TEST(ObjectTasks, ATaskReadsItsObjectsAndItsResultComesBackThroughItsFuture) {
  StoreRuntime rt(0, 0, "");
  const auto input = Pattern(64 << 10, 200);
  accel_object_t in = nullptr;
  ASSERT_EQ(rt.Put(input, &in, "input"), ACCEL_SUCCESS);

  // The task reads its object (the submitter's handle is gone by then), puts the bytes reversed, sets that result.
  struct Reverse {
    accel_runtime_t runtime;
    Gate gate;
    std::string error;
  } reverse{rt.get(), {}, {}};
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.function = [](accel_task_context_t ctx, void* p) -> accel_status_t {
    auto* r = static_cast<Reverse*>(p);
    r->gate.Wait();
    accel_object_t object = nullptr;
    if (accel_task_context_get_object(ctx, 1, &object) != ACCEL_ERROR_INVALID_ARGUMENT ||
        std::string(accel_last_error()).find("'index' 1 is past the task's 1 object(s)") == std::string::npos) {
      r->error = std::string("index 1: ") + accel_last_error();
    }
    if (accel_task_context_get_object(ctx, 0, &object) != ACCEL_SUCCESS) return ACCEL_ERROR_INTERNAL;
    std::vector<uint8_t> bytes = GetBytes(object, ACCEL_OBJECT_LOCATION_HOST);
    accel_object_release(object);
    std::reverse(bytes.begin(), bytes.end());
    accel_object_put_desc_t put{};
    put.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
    put.struct_size = sizeof(put);
    put.data = bytes.data();
    put.size = bytes.size();
    accel_object_t result = nullptr;
    if (accel_object_put(r->runtime, &put, &result) != ACCEL_SUCCESS) return ACCEL_ERROR_INTERNAL;
    const accel_status_t s = accel_task_context_set_result(ctx, result);
    accel_object_release(result);
    return s;
  };
  d.user_data = &reverse;
  d.near_objects = &in;
  d.near_object_count = 1;
  accel_future_t f = nullptr;
  ASSERT_EQ(accel_task_submit(rt.get(), &d, &f), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(Info(in).references, 2U) << "the task holds one";
  EXPECT_EQ(accel_object_release(in), ACCEL_SUCCESS);
  accel_object_t out = nullptr;
  EXPECT_EQ(accel_future_get_object(f, &out), ACCEL_NOT_READY);
  EXPECT_EQ(out, nullptr);
  reverse.gate.Open();
  ASSERT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
  EXPECT_EQ(reverse.error, "");
  ASSERT_EQ(accel_future_get_object(f, &out), ACCEL_SUCCESS) << accel_last_error();
  std::vector<uint8_t> expected(input.rbegin(), input.rend());
  EXPECT_EQ(GetBytes(out, ACCEL_OBJECT_LOCATION_HOST), expected);
  EXPECT_EQ(Info(out).references, 2U) << "the future's and ours";
  // The input outlives the task: the result's lineage holds it (a re-run reads it again).
  EXPECT_EQ(rt.Usage(ACCEL_OBJECT_LOCATION_HOST).replicas, 2U);
  EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  // The task's end, which runs just after its future is done, drops its own reference (docs/objectstore.md).
  EXPECT_TRUE(Eventually([&] { return Info(out).references == 1U; })) << Info(out).references;
  EXPECT_EQ(accel_object_release(out), ACCEL_SUCCESS);
  // The result's last reference frees it, its lineage, and so the input.
  EXPECT_EQ(rt.Usage(ACCEL_OBJECT_LOCATION_HOST).replicas, 0U);
  EXPECT_EQ(rt.Usage(ACCEL_OBJECT_LOCATION_HOST).used, 0U);
}

TEST(ObjectTasks, AFutureReleasedBeforeItsTaskEndsLeavesNothingHeld) {
  StoreRuntime rt(0, 0, "");
  Gate gate;
  Work work;
  work.runtime = rt.get();
  work.bytes = Pattern(4096, 201);
  work.gate = &gate;
  accel_future_t f = nullptr;
  ASSERT_EQ(Submit(rt.get(), &work, nullptr, nullptr, 0, &f), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_TRUE(Eventually([&] { return work.runs.load() == 1; }));
  EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  gate.Open();
  // The result had no future left: dropped at the task's end, and with it the lineage (and the user data).
  EXPECT_TRUE(Eventually([&] { return work.released.load() == 1; }));
  EXPECT_TRUE(Eventually([&] { return rt.Usage(ACCEL_OBJECT_LOCATION_HOST).replicas == 0; }));
}

TEST(ObjectTasks, ResultBadInputAndTasksWithoutOne) {
  StoreRuntime rt(0, 0, "");
  accel_object_t o = nullptr;
  ASSERT_EQ(rt.Put(Pattern(64, 202), &o), ACCEL_SUCCESS);
  // Outside a task.
  EXPECT_EQ(accel_task_context_set_result(nullptr, o), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("'context' is NULL"), std::string::npos) << accel_last_error();
  accel_object_t out = nullptr;
  EXPECT_EQ(accel_task_context_get_object(nullptr, 0, &out), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_future_get_object(nullptr, &out), ACCEL_ERROR_INVALID_HANDLE);

  // A task that sets no result, one that fails after setting one, one that sets a stale handle.
  struct Case {
    accel_object_t object;
    int kind;  // 0 none, 1 set then fail, 2 stale handle
    accel_status_t set_status = ACCEL_SUCCESS;
  };
  Case cases[] = {{o, 0}, {o, 1}, {reinterpret_cast<accel_object_t>(rt.get()), 2}};
  std::vector<accel_future_t> futures;
  for (Case& c : cases) {
    accel_task_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
    d.struct_size = sizeof(d);
    d.function = [](accel_task_context_t ctx, void* p) -> accel_status_t {
      auto* one = static_cast<Case*>(p);
      if (one->kind == 0) return ACCEL_SUCCESS;
      one->set_status = accel_task_context_set_result(ctx, one->object);
      return one->kind == 1 ? accel_set_last_error(ACCEL_ERROR_NOT_FOUND, "no input") : ACCEL_SUCCESS;
    };
    d.user_data = &c;
    accel_future_t f = nullptr;
    ASSERT_EQ(accel_task_submit(rt.get(), &d, &f), ACCEL_SUCCESS);
    ASSERT_NE(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_NOT_READY);
    futures.push_back(f);
  }
  EXPECT_EQ(accel_future_get_object(futures[0], &out), ACCEL_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(accel_last_error()).find("ended without a result object"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(cases[1].set_status, ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_get_object(futures[1], &out), ACCEL_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(accel_last_error()).find("failed, so it has no result"), std::string::npos)
      << accel_last_error();
  EXPECT_NE(std::string(accel_last_error()).find("no input"), std::string::npos) << accel_last_error();
  EXPECT_EQ(cases[2].set_status, ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_future_get_object(futures[0], nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  for (accel_future_t f : futures) EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  EXPECT_EQ(Info(o).references, 1U) << "the failed task's hold on it was dropped";
  EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
}

// The device holding the only copy of a task's result is lost: a get runs the
// task again on another device and serves its new result; an object no task
// made says why it is gone.
TEST(ObjectTasks, AnObjectLostWithItsDeviceIsMadeAgainByItsTask) {
  const accel_resource_request_t one = Request(1, 1.0, 64 * kMiB);
  // The planner is deterministic: the device a first run gets is the one to lose (after the run, by using it up).
  const LoseFirstDevice lose("0,1,2", one, 200);
  const uint32_t first = lose.first;
  ASSERT_LT(first, 3U);
  StoreRuntime rt(0, 0, "");
  Work work(rt.get(), Pattern(1 << 20, 203), /*on_device=*/true);
  accel_object_t result = ResultOf(rt.get(), &work, &one);
  ASSERT_NE(result, nullptr);
  const accel_physical_device_t first_device = work.device.load();
  {
    const auto info = Info(result);
    EXPECT_EQ(info.device_replicas, 1U);
    EXPECT_EQ(info.on_host, 0U);
    EXPECT_EQ(info.on_disk, 0U);
  }
  EXPECT_EQ(work.released.load(), 0) << "the user data lives with the object";
  // An object put from the same device by the test: no task made it.
  accel_object_t orphan = PutFromDevice(rt, first, Pattern(4096, 204));

  // Use the device up until it is lost.
  ASSERT_TRUE(UseUntilLost(rt.Device(first)));

  // Two gets at once share one re-run. (On the host: the sim serves a peer read of a lost device's memory issued
  // on another device's stream, which real hardware would not.)
  std::vector<uint8_t> mine;
  std::vector<uint8_t> theirs;
  std::thread other([&] { theirs = GetBytes(result, ACCEL_OBJECT_LOCATION_HOST); });
  mine = GetBytes(result, ACCEL_OBJECT_LOCATION_HOST);
  other.join();
  EXPECT_EQ(mine, work.bytes) << "made again, byte for byte";
  EXPECT_EQ(theirs, work.bytes);
  EXPECT_EQ(work.runs.load(), 2) << "one re-run for both gets";
  EXPECT_NE(work.device.load(), first_device) << "the re-run went to another device";
  EXPECT_EQ(work.released.load(), 0);

  accel_object_view_t view = nullptr;
  EXPECT_EQ(accel_object_get(orphan, ACCEL_OBJECT_LOCATION_HOST, ACCEL_TIMEOUT_INFINITE, &view),
            ACCEL_ERROR_DEVICE_LOST);
  const std::string why = accel_last_error();
  EXPECT_NE(why.find("has no copy left: device " + std::to_string(first)), std::string::npos) << why;
  EXPECT_NE(why.find("no task set it as its result"), std::string::npos) << why;
  EXPECT_EQ(view, nullptr);

  EXPECT_EQ(accel_object_release(orphan), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(result), ACCEL_SUCCESS);
  // Released with the object, once the re-run that used it also let go of its lineage (at the task's end, which
  // may come just after its future completed).
  EXPECT_TRUE(Eventually([&] { return work.released.load() == 1; })) << work.released.load();
  EXPECT_EQ(work.released.load(), 1) << "released once";
}

// A get of a lost object starts its re-run and times out; the caller then releases the object. The re-run still
// uses the task's user data, which the object's lineage owns: it is released once the re-run ended, not when the
// object went (before, the lineage was destroyed with the object and the queued re-run used freed user data).
TEST(ObjectTasks, AReRunKeepsItsUserDataWhenItsObjectIsReleasedMeanwhile) {
  const accel_resource_request_t one = Request(1, 1.0, 64 * kMiB);
  const LoseFirstDevice lose("0,1,2", one, 200);
  ASSERT_LT(lose.first, 3U);
  StoreRuntime rt(0, 0, "");
  Work work(rt.get(), Pattern(1 << 16, 205), /*on_device=*/true);
  accel_object_t result = ResultOf(rt.get(), &work, &one);
  ASSERT_NE(result, nullptr);
  ASSERT_TRUE(UseUntilLost(rt.Device(lose.first)));

  Gate gate;
  work.gate = &gate;  // the re-run waits in its function until the test opens it
  accel_object_view_t view = nullptr;
  EXPECT_EQ(accel_object_get(result, ACCEL_OBJECT_LOCATION_HOST, 0, &view), ACCEL_ERROR_TIMEOUT) << accel_last_error();
  ASSERT_TRUE(Eventually([&] { return work.runs.load() == 2; })) << "the re-run started";
  EXPECT_EQ(accel_object_release(result), ACCEL_SUCCESS);
  EXPECT_EQ(work.released.load(), 0) << "the user data was released while its re-run still ran";
  gate.Open();
  EXPECT_TRUE(Eventually([&] { return work.released.load() == 1; })) << "released once the re-run ended";
}

}  // namespace
