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

// A task group of tasks that count their runs, and those on the thread named as the client. Destroyed with it.
struct CountedGroup {
  explicit CountedGroup(accel_runtime_t rt) : g(NewTaskGroup(rt)) {}
  ~CountedGroup() { EXPECT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS); }
  CountedGroup(const CountedGroup&) = delete;
  CountedGroup& operator=(const CountedGroup&) = delete;

  // Submits `n` tasks from the calling thread, which `client` names.
  void Submit(int n, std::thread::id client = std::this_thread::get_id()) {
    for (int i = 0; i < n; ++i) {
      auto* owned = new Body([this, client](accel_task_context_t) {
        if (std::this_thread::get_id() == client) ++on_client;
        ++ran;
        return ACCEL_SUCCESS;
      });
      const accel_task_desc_t d = BodyDesc(owned);
      ASSERT_EQ(accel_task_group_submit(g, &d), ACCEL_SUCCESS) << accel_last_error();
    }
  }
  accel_status_t Wait(uint64_t timeout_ns = ACCEL_TIMEOUT_INFINITE) const {
    return accel_task_group_wait(g, timeout_ns);
  }

  accel_task_group_t g;
  std::atomic<int> ran{0};
  std::atomic<int> on_client{0};
};

constexpr const char* kLongLease = "60000000";  // 60 s: no client is away for it in these tests

TEST(ClientSlots, WithEveryCpuHeldByAClientItsTasksWaitForItsWaitAndRunThere) {
  OneCpuRuntime rt(kLongLease);
  CountedGroup c(rt.get());
  c.Submit(200);
  // The workers were free to run them since the first submission (2 workers, nothing else to do).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(c.ran.load(), 0) << "a worker took tasks of a client that holds the only CPU";
  ASSERT_EQ(c.Wait(), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(c.ran.load(), 200);
  EXPECT_EQ(c.on_client.load(), 200);
  // The wait gave the slot up; the next submission takes it again.
  c.Submit(50);
  ASSERT_EQ(c.Wait(), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(c.on_client.load(), 250);
}

TEST(ClientSlots, ADeepShardIsTheWorkersWhateverTheCpus) {
  OneCpuRuntime rt(kLongLease);
  CountedGroup c(rt.get());
  constexpr int kTasks = 3000;
  constexpr int kDeep = 2048;  // runtime.cc's kClientDeep
  c.Submit(kTasks);
  // No wait: the workers bring the lane below the depth by themselves.
  EXPECT_TRUE(Eventually([&] { return c.ran.load() > kTasks - kDeep; })) << c.ran.load() << " ran";
  EXPECT_EQ(c.on_client.load(), 0);
  ASSERT_EQ(c.Wait(), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(c.ran.load(), kTasks);
  EXPECT_GT(c.on_client.load(), 0) << "the client's wait ran what stayed below the depth";
}

TEST(ClientSlots, AClientAwayForTheLeaseLosesItsTasksToTheWorkers) {
  OneCpuRuntime rt("2000");  // 2 ms
  CountedGroup c(rt.get());
  c.Submit(20);
  // The client neither submits nor waits: after the lease the workers run its tasks.
  EXPECT_TRUE(Eventually([&] { return c.ran.load() == 20; })) << c.ran.load() << " ran";
  EXPECT_EQ(c.on_client.load(), 0);
  ASSERT_EQ(c.Wait(), ACCEL_SUCCESS) << accel_last_error();
}

TEST(ClientSlots, AFiniteWaitGivesTheSlotUp) {
  OneCpuRuntime rt(kLongLease);
  CountedGroup c(rt.get());
  c.Submit(20);
  // A finite wait runs nothing itself (it must return in time): the workers run the tasks, well inside the lease.
  ASSERT_EQ(c.Wait(30'000'000'000ULL), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(c.ran.load(), 20);
  EXPECT_EQ(c.on_client.load(), 0);
}

TEST(ClientSlots, AClientThatExitsWithoutWaitingGivesItsSlotUp) {
  OneCpuRuntime rt(kLongLease);
  CountedGroup c(rt.get());
  std::thread([&] { c.Submit(20); }).join();
  // Another thread's wait (it queued nothing itself) wakes a worker, and the CPU the exited client held is free.
  ASSERT_EQ(c.Wait(), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(c.ran.load(), 20);
  EXPECT_EQ(c.on_client.load(), 0);
}

TEST(ClientSlots, WithACpuLeftOverAWorkerHelpsTheClient) {
  // Two CPUs (or more), one client: a worker may take its tasks while it submits.
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  if (CPU_COUNT(&set) < 2) GTEST_SKIP() << "the process may run on one CPU: no CPU is left over for a worker";
  const ScopedEnv lease("ACCEL_RUNTIME_CLIENT_LEASE_US", kLongLease);
  RuntimeFixture rt(nullptr, 2);
  CountedGroup c(rt.get());
  c.Submit(20);
  EXPECT_TRUE(Eventually([&] { return c.ran.load() == 20; })) << c.ran.load() << " ran";
  EXPECT_EQ(c.on_client.load(), 0);
  ASSERT_EQ(c.Wait(), ACCEL_SUCCESS) << accel_last_error();
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
