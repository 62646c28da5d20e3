// Client slots (docs/scheduler.md, "Client slots"): a thread that submits into a task group holds a CPU until its
// group wait blocks or returns, and the workers leave its queued tasks to it while clients hold every CPU the
// process may run on; they take them anyway when its shard grows deep, when it stays away for the lease, when it
// waits with a timeout, or when it exits. The runtimes here are made on one CPU (the creating thread's affinity,
// which the workers inherit) so that one client fills the CPUs.
#include <accel/runtime.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

// Binds the calling thread to one CPU of its affinity while it lives.
class OneCpu {
 public:
  OneCpu() {
    CPU_ZERO(&old_);
    EXPECT_EQ(sched_getaffinity(0, sizeof(old_), &old_), 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &old_)) {
        CPU_SET(cpu, &one);
        break;
      }
    }
    EXPECT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  }
  ~OneCpu() { sched_setaffinity(0, sizeof(old_), &old_); }
  OneCpu(const OneCpu&) = delete;
  OneCpu& operator=(const OneCpu&) = delete;

 private:
  cpu_set_t old_;
};

// A runtime whose process may run on one CPU (its workers, 2, bound to it), with a client lease of `lease_us`.
class OneCpuRuntime {
 public:
  explicit OneCpuRuntime(const std::string& lease_us) {
    const ScopedEnv lease("ACCEL_RUNTIME_CLIENT_LEASE_US", lease_us);
    const OneCpu one;
    rt_ = std::make_unique<RuntimeFixture>(nullptr, 2);
  }
  accel_runtime_t get() const { return rt_->get(); }

 private:
  std::unique_ptr<RuntimeFixture> rt_;
};

accel_task_group_t NewGroup(accel_runtime_t rt) {
  accel_task_group_t g = nullptr;
  EXPECT_EQ(accel_task_group_create(rt, nullptr, &g), ACCEL_SUCCESS) << accel_last_error();
  return g;
}

// Submits `n` tasks into `g` that count their runs, and those on `client`'s thread.
void SubmitCounting(accel_task_group_t g, int n, std::thread::id client, std::atomic<int>& ran,
                    std::atomic<int>& on_client) {
  for (int i = 0; i < n; ++i) {
    auto* owned = new Body([&ran, &on_client, client](accel_task_context_t) {
      if (std::this_thread::get_id() == client) ++on_client;
      ++ran;
      return ACCEL_SUCCESS;
    });
    const accel_task_desc_t d = BodyDesc(owned);
    ASSERT_EQ(accel_task_group_submit(g, &d), ACCEL_SUCCESS) << accel_last_error();
  }
}

constexpr const char* kLongLease = "60000000";  // 60 s: no client is away for it in these tests

TEST(ClientSlots, WithEveryCpuHeldByAClientItsTasksWaitForItsWaitAndRunThere) {
  OneCpuRuntime rt(kLongLease);
  accel_task_group_t g = NewGroup(rt.get());
  std::atomic<int> ran{0};
  std::atomic<int> on_client{0};
  SubmitCounting(g, 200, std::this_thread::get_id(), ran, on_client);
  // The workers were free to run them since the first submission (2 workers, nothing else to do).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(ran.load(), 0) << "a worker took tasks of a client that holds the only CPU";
  ASSERT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(ran.load(), 200);
  EXPECT_EQ(on_client.load(), 200);
  // The wait gave the slot up; the next submission takes it again.
  SubmitCounting(g, 50, std::this_thread::get_id(), ran, on_client);
  ASSERT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(on_client.load(), 250);
  ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(ClientSlots, ADeepShardIsTheWorkersWhateverTheCpus) {
  OneCpuRuntime rt(kLongLease);
  accel_task_group_t g = NewGroup(rt.get());
  std::atomic<int> ran{0};
  std::atomic<int> on_client{0};
  constexpr int kTasks = 3000;
  constexpr int kDeep = 2048;  // runtime.cc's kClientDeep
  SubmitCounting(g, kTasks, std::this_thread::get_id(), ran, on_client);
  // No wait: the workers bring the shard below the depth by themselves.
  EXPECT_TRUE(Eventually([&] { return ran.load() > kTasks - kDeep; })) << ran.load() << " ran";
  EXPECT_EQ(on_client.load(), 0);
  ASSERT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(ran.load(), kTasks);
  EXPECT_GT(on_client.load(), 0) << "the client's wait ran what stayed below the depth";
  ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(ClientSlots, AClientAwayForTheLeaseLosesItsTasksToTheWorkers) {
  OneCpuRuntime rt("2000");  // 2 ms
  accel_task_group_t g = NewGroup(rt.get());
  std::atomic<int> ran{0};
  std::atomic<int> on_client{0};
  SubmitCounting(g, 20, std::this_thread::get_id(), ran, on_client);
  // The client neither submits nor waits: after the lease the workers run its tasks.
  EXPECT_TRUE(Eventually([&] { return ran.load() == 20; })) << ran.load() << " ran";
  EXPECT_EQ(on_client.load(), 0);
  ASSERT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(ClientSlots, AFiniteWaitGivesTheSlotUp) {
  OneCpuRuntime rt(kLongLease);
  accel_task_group_t g = NewGroup(rt.get());
  std::atomic<int> ran{0};
  std::atomic<int> on_client{0};
  SubmitCounting(g, 20, std::this_thread::get_id(), ran, on_client);
  // A finite wait runs nothing itself (it must return in time): the workers run the tasks, well inside the lease.
  ASSERT_EQ(accel_task_group_wait(g, 30'000'000'000ULL), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(ran.load(), 20);
  EXPECT_EQ(on_client.load(), 0);
  ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(ClientSlots, AClientThatExitsWithoutWaitingGivesItsSlotUp) {
  OneCpuRuntime rt(kLongLease);
  accel_task_group_t g = NewGroup(rt.get());
  std::atomic<int> ran{0};
  std::atomic<int> on_client{0};
  std::thread::id client;
  std::thread([&] {
    client = std::this_thread::get_id();
    SubmitCounting(g, 20, client, ran, on_client);
  }).join();
  // Another thread's wait (it queued nothing itself) wakes a worker, and the CPU the exited client held is free.
  ASSERT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(ran.load(), 20);
  EXPECT_EQ(on_client.load(), 0);
  ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(ClientSlots, WithACpuLeftOverAWorkerHelpsTheClient) {
  // Two CPUs (or more), one client: a worker may take its tasks while it submits.
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  if (CPU_COUNT(&set) < 2) GTEST_SKIP() << "the process may run on one CPU: no CPU is left over for a worker";
  const ScopedEnv lease("ACCEL_RUNTIME_CLIENT_LEASE_US", kLongLease);
  RuntimeFixture rt(nullptr, 2);
  accel_task_group_t g = NewGroup(rt.get());
  std::atomic<int> ran{0};
  std::atomic<int> on_client{0};
  SubmitCounting(g, 20, std::this_thread::get_id(), ran, on_client);
  EXPECT_TRUE(Eventually([&] { return ran.load() == 20; })) << ran.load() << " ran";
  EXPECT_EQ(on_client.load(), 0);
  ASSERT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(ClientSlots, ABadLeaseIsRefusedWithTheVariableNamed) {
  const ScopedInstance instance(nullptr);
  for (const char* bad : {"abc", "-5", "12x", "60000001", "99999999999999999999999"}) {
    const ScopedEnv lease("ACCEL_RUNTIME_CLIENT_LEASE_US", bad);
    accel_runtime_t out = nullptr;
    EXPECT_EQ(CreateRuntime(instance.get(), 2, &out), ACCEL_ERROR_INVALID_ARGUMENT) << bad;
    EXPECT_EQ(out, nullptr);
    const std::string message = accel_last_error();
    EXPECT_NE(message.find("ACCEL_RUNTIME_CLIENT_LEASE_US"), std::string::npos) << message;
    EXPECT_NE(message.find(bad), std::string::npos) << message;
  }
  const ScopedEnv lease("ACCEL_RUNTIME_CLIENT_LEASE_US", "0");
  accel_runtime_t out = nullptr;
  ASSERT_EQ(CreateRuntime(instance.get(), 2, &out), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_runtime_destroy(out), ACCEL_SUCCESS);
}

}  // namespace
