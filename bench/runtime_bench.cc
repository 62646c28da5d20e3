// accel-runtime-bench: libaccel-runtime's scheduling costs beside named
// baselines, in one run (docs/scheduler.md, "Figures"): empty tasks against
// oneTBB's tbb::task_group, placement groups against the raw planner and
// Ray's published figure. Prints figures; asserts nothing about time.
//
//   accel-runtime-bench [--tasks N] [--groups N] [--chain C] [--backlog B] [--batch K] [--repeat R] [--seed S] [--json]
//
// Empty tasks: N tasks with no device request, split evenly between the
// client threads; each client submits K tasks, then waits for those K
// (throughput): in a task group of its own, with one group wait, and with a
// future each, waited for and released one by one; the round-trip row
// submits, waits and releases one task at a time (N / 10 of them). The baseline does the same with
// tbb::task_group::run and wait. Dependency chains: C empty tasks, each
// submitted with the one before it as its dependency, then a wait for the
// last and the releases; the baseline builds a tbb::flow::graph of C
// continue_nodes, each an edge from the one before, puts a message into the
// first and waits for the graph. Capacity backlog: B tasks of one whole device
// submitted behind 8 tasks that hold every device (every one waits for
// capacity), against the same B submitted onto an idle node; timed: the
// submissions, and the submissions until every task ended (behind the
// backlog: then the 8 end and it drains). Placement groups: 8 bundles of one whole
// device each, PACK at clique, created and destroyed N times on the sim
// backend's h100-sxm-8 node (ACCEL_SIM_PROFILE is set to it, ACCEL_BACKENDS
// to sim); the local baseline is the planner alone (Planner::Place and
// Release) on a generated node of the same shape. Each figure is the median
// of R repeats (default 3); --seed decides which contender runs first in each
// repeat. Exit status 1 when a call fails or a task did not run once.
#include <accel/runtime.h>
#include <fmt/format.h>
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/version.h>
#include <sched.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "generator.h"
#include "paired.h"
#include "planner.h"

namespace {

constexpr const char* kProfile = "h100-sxm-8";
constexpr uint32_t kBundles = 8;
// Ray's published placement group create+remove rate, as issue 16 quotes it
// (about 790/s): a reference constant, not measured here.
constexpr double kRayGroupsPerSecond = 790.0;
constexpr double kGoalTasksPerSecond = 500000.0;
constexpr double kGoalRatioToTbb = 0.5;

struct Options {
  uint64_t tasks = 200000;
  uint64_t groups = 2000;
  uint64_t chain = 20000;
  uint64_t backlog = 3000;
  uint32_t batch = 1024;
  uint64_t seed = 1;
  uint32_t repeat = 3;
  bool json = false;
};

// The first failure of a run, from any thread. Thread-safe.
class Failure {
 public:
  void Set(std::string message) {
    std::lock_guard lock(mutex_);
    if (message_.empty()) message_ = std::move(message);
    failed_ = true;
  }
  bool failed() const { return failed_; }
  std::string message() const {
    std::lock_guard lock(mutex_);
    return message_;
  }

 private:
  mutable std::mutex mutex_;
  std::string message_;
  std::atomic<bool> failed_{false};
};

Failure g_failure;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): the bench's one error slot

bool Check(accel_status_t status, const char* what) {
  if (status == ACCEL_SUCCESS) return true;
  g_failure.Set(fmt::format("{}: {} ({})", what, accel_status_name(status), accel_last_error()));
  return false;
}

// Whether this thread is one of TimeClients' clients: a task that runs on it ran inline (the client waited for it and
// ran it itself, or the contender had no worker free), not on a worker thread.
thread_local bool t_client = false;

// Tasks run, and of those the ones a client thread ran.
struct Ran {
  std::atomic<uint64_t> all{0};
  std::atomic<uint64_t> on_client{0};
  void Reset() {
    all = 0;
    on_client = 0;
  }
  void Count() {
    all.fetch_add(1, std::memory_order_relaxed);
    if (t_client) on_client.fetch_add(1, std::memory_order_relaxed);
  }
};

// Runs `body(client)` on `clients` threads started together; returns the
// seconds from the start to the last one's end (thread creation excluded).
double TimeClients(uint32_t clients, const std::function<void(uint32_t)>& body) {
  std::latch ready(clients);
  std::latch go(1);
  std::vector<std::thread> threads;
  threads.reserve(clients);
  for (uint32_t c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      t_client = true;
      ready.count_down();
      go.wait();
      body(c);
    });
  }
  ready.wait();
  const auto start = std::chrono::steady_clock::now();
  go.count_down();
  for (auto& t : threads) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Client `c`'s part of `total` split between `clients`.
uint64_t Part(uint64_t total, uint32_t clients, uint32_t c) { return total / clients + (c < total % clients ? 1 : 0); }

accel_status_t CountTask(accel_task_context_t /*context*/, void* user_data) {
  static_cast<Ran*>(user_data)->Count();
  return ACCEL_SUCCESS;
}

// Empty tasks on libaccel-runtime; returns the seconds taken.
class AccelTasks {
 public:
  explicit AccelTasks(accel_runtime_t runtime) : runtime_(runtime) {}

  double Batched(uint64_t tasks, uint32_t clients, uint32_t batch) {
    ran_.Reset();
    return TimeClients(clients, [&](uint32_t c) {
      std::vector<accel_future_t> futures;
      futures.reserve(batch);
      for (uint64_t left = Part(tasks, clients, c); left > 0 && !g_failure.failed();) {
        const uint64_t n = std::min<uint64_t>(left, batch);
        futures.clear();
        for (uint64_t i = 0; i < n; ++i) {
          accel_future_t f = nullptr;
          if (!Check(Submit(&f), "accel_task_submit")) break;
          futures.push_back(f);
        }
        for (accel_future_t f : futures) {
          Check(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), "accel_future_wait");
          Check(accel_future_release(f), "accel_future_release");
        }
        left -= n;
      }
    });
  }

  // The same batches in a task group per client (accel_task_group_*: no future per task), tbb::task_group's
  // counterpart.
  double Grouped(uint64_t tasks, uint32_t clients, uint32_t batch) {
    ran_.Reset();
    return TimeClients(clients, [&](uint32_t c) {
      accel_task_group_t group = nullptr;
      if (!Check(accel_task_group_create(runtime_, nullptr, &group), "accel_task_group_create")) return;
      const accel_task_desc_t d = Desc();
      for (uint64_t left = Part(tasks, clients, c); left > 0 && !g_failure.failed();) {
        const uint64_t n = std::min<uint64_t>(left, batch);
        for (uint64_t i = 0; i < n; ++i) {
          if (!Check(accel_task_group_submit(group, &d), "accel_task_group_submit")) break;
        }
        Check(accel_task_group_wait(group, ACCEL_TIMEOUT_INFINITE), "accel_task_group_wait");
        left -= n;
      }
      Check(accel_task_group_destroy(group), "accel_task_group_destroy");
    });
  }

  double RoundTrip(uint64_t tasks) {
    ran_.Reset();
    return TimeClients(1, [&](uint32_t) {
      for (uint64_t i = 0; i < tasks && !g_failure.failed(); ++i) {
        accel_future_t f = nullptr;
        if (!Check(Submit(&f), "accel_task_submit")) return;
        Check(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), "accel_future_wait");
        Check(accel_future_release(f), "accel_future_release");
      }
    });
  }

  uint64_t ran() const { return ran_.all.load(); }
  uint64_t on_client() const { return ran_.on_client.load(); }

 private:
  accel_task_desc_t Desc() {
    accel_task_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
    d.struct_size = sizeof(d);
    d.function = CountTask;
    d.user_data = &ran_;
    d.request = nullptr;  // no device
    return d;
  }

  accel_status_t Submit(accel_future_t* out) {
    const accel_task_desc_t d = Desc();
    return accel_task_submit(runtime_, &d, out);
  }

  accel_runtime_t runtime_;
  Ran ran_;
};

// The same work on tbb::task_group; returns the seconds taken.
class TbbTasks {
 public:
  double Batched(uint64_t tasks, uint32_t clients, uint32_t batch) {
    ran_.Reset();
    return TimeClients(clients, [&](uint32_t c) {
      tbb::task_group group;
      for (uint64_t left = Part(tasks, clients, c); left > 0;) {
        const uint64_t n = std::min<uint64_t>(left, batch);
        for (uint64_t i = 0; i < n; ++i) group.run([this] { ran_.Count(); });
        group.wait();
        left -= n;
      }
    });
  }

  double RoundTrip(uint64_t tasks) {
    ran_.Reset();
    return TimeClients(1, [&](uint32_t) {
      tbb::task_group group;
      for (uint64_t i = 0; i < tasks; ++i) {
        group.run([this] { ran_.Count(); });
        group.wait();
      }
    });
  }

  uint64_t ran() const { return ran_.all.load(); }
  uint64_t on_client() const { return ran_.on_client.load(); }

 private:
  Ran ran_;
};

// A chain of `n` empty tasks on libaccel-runtime, each depending on the one before; returns the seconds taken.
double AccelChain(accel_runtime_t runtime, uint64_t n, std::atomic<uint64_t>* ran) {
  std::vector<accel_future_t> futures(n, nullptr);
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n && !g_failure.failed(); ++i) {
    accel_task_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
    d.struct_size = sizeof(d);
    d.function = [](accel_task_context_t, void* p) {
      static_cast<std::atomic<uint64_t>*>(p)->fetch_add(1, std::memory_order_relaxed);
      return ACCEL_SUCCESS;
    };
    d.user_data = ran;
    d.dependencies = i > 0 ? &futures[i - 1] : nullptr;
    d.dependency_count = i > 0 ? 1 : 0;
    Check(accel_task_submit(runtime, &d, &futures[i]), "accel_task_submit (chain)");
  }
  if (!g_failure.failed()) Check(accel_future_wait(futures.back(), ACCEL_TIMEOUT_INFINITE), "accel_future_wait");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (accel_future_t f : futures) {
    if (f != nullptr) Check(accel_future_release(f), "accel_future_release");
  }
  return seconds;
}

// The same chain as a tbb::flow::graph of continue_nodes; returns the seconds taken.
double TbbChain(uint64_t n, std::atomic<uint64_t>* ran) {
  using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;
  const auto start = std::chrono::steady_clock::now();
  tbb::flow::graph graph;
  std::vector<std::unique_ptr<Node>> nodes;
  nodes.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    nodes.push_back(std::make_unique<Node>(graph, [ran](const tbb::flow::continue_msg&) {
      ran->fetch_add(1, std::memory_order_relaxed);
      return tbb::flow::continue_msg{};
    }));
    if (i > 0) tbb::flow::make_edge(*nodes[i - 1], *nodes[i]);
  }
  nodes.front()->try_put(tbb::flow::continue_msg{});
  graph.wait_for_all();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

accel_placement_group_desc_t GroupDesc(const std::vector<accel_resource_request_t>& bundles) {
  accel_placement_group_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC;
  d.struct_size = sizeof(d);
  d.bundles = bundles.data();
  d.bundle_count = static_cast<uint32_t>(bundles.size());
  d.strategy = ACCEL_PLACEMENT_STRATEGY_PACK;
  d.level = ACCEL_TOPOLOGY_LEVEL_CLIQUE;
  return d;
}

std::vector<accel_resource_request_t> GroupBundles() {
  accel_resource_request_t r{};
  r.stype = ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST;
  r.struct_size = sizeof(r);
  r.device_count = 1;
  r.share = 1.0;
  return std::vector<accel_resource_request_t>(kBundles, r);
}

// Submits `n` tasks of one whole device each and times the submissions alone; with `behind`, first occupies every
// one of the node's `devices` devices with a task that waits until the submissions are done, so that all `n` wait
// for capacity (each submission's pass tries the new task alone: docs/scheduler.md, "Scheduling passes"). Then lets
// everything end and releases it. The seconds the submissions took, and those from the first submission until every
// task ended (behind the backlog: the submissions, then the drain as the 8 end).
std::pair<double, double> AccelBacklog(accel_runtime_t runtime, uint32_t devices, uint64_t n, bool behind) {
  accel_resource_request_t one{};
  one.stype = ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST;
  one.struct_size = sizeof(one);
  one.device_count = 1;
  one.share = 1.0;
  std::atomic<bool> open{!behind};
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.request = &one;
  d.user_data = &open;
  d.function = [](accel_task_context_t, void* p) {
    while (!static_cast<std::atomic<bool>*>(p)->load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    return ACCEL_SUCCESS;
  };
  std::vector<accel_future_t> futures;
  futures.reserve(n + devices);
  for (uint32_t i = 0; behind && i < devices && !g_failure.failed(); ++i) {
    accel_future_t f = nullptr;
    if (Check(accel_task_submit(runtime, &d, &f), "accel_task_submit (backlog)")) futures.push_back(f);
  }
  d.function = [](accel_task_context_t, void*) { return ACCEL_SUCCESS; };
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n && !g_failure.failed(); ++i) {
    accel_future_t f = nullptr;
    if (Check(accel_task_submit(runtime, &d, &f), "accel_task_submit (backlog)")) futures.push_back(f);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  open = true;
  for (accel_future_t f : futures) Check(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), "accel_future_wait (backlog)");
  const double all = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (accel_future_t f : futures) Check(accel_future_release(f), "accel_future_release");
  return {seconds, all};
}

// Creates and destroys `groups` placement groups; the seconds taken.
double AccelGroups(accel_runtime_t runtime, uint64_t groups) {
  const auto bundles = GroupBundles();
  const accel_placement_group_desc_t desc = GroupDesc(bundles);
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < groups; ++i) {
    accel_placement_group_t g = nullptr;
    if (!Check(accel_placement_group_create(runtime, &desc, &g), "accel_placement_group_create")) break;
    if (!Check(accel_placement_group_destroy(g), "accel_placement_group_destroy")) break;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The planner alone on a generated node of the runtime's shape (one node,
// `devices` devices in one clique, two NUMA nodes, `memory` bytes each):
// Place and Release the same gang `groups` times; the seconds taken.
double PlannerGroups(uint32_t devices, uint64_t memory, uint64_t groups) {
  using namespace accel::planner;
  GeneratorSpec spec;
  spec.nodes = 1;
  spec.devices_per_node = devices;
  spec.cliques_per_node = 1;
  spec.numa_per_node = 2;
  spec.memory = memory;
  auto cluster = Cluster::Build(GenerateNodes(spec));
  if (!cluster) {
    g_failure.Set("planner cluster: " + cluster.error().message);
    return 0;
  }
  Planner planner(cluster.value());
  Gang gang;
  gang.bundles.assign(kBundles, Bundle{1, 1.0, memory, ""});
  gang.strategy = Strategy::kPack;
  gang.level = Level::kClique;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < groups; ++i) {
    auto placed = planner.Place(gang);
    if (!placed) {
      g_failure.Set("Planner::Place: " + placed.error().message);
      break;
    }
    if (!planner.Release(placed->id)) {
      g_failure.Set("Planner::Release failed");
      break;
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Every measured run calls each of its tasks exactly once.
void CheckRan(const char* who, uint64_t ran, uint64_t expected) {
  if (ran != expected && !g_failure.failed()) {
    g_failure.Set(fmt::format("{} ran {} task(s), expected {}", who, ran, expected));
  }
}

using accel_bench::Median;

double Rate(uint64_t n, double seconds) { return seconds > 0 ? static_cast<double>(n) / seconds : 0.0; }

// One row: Accel's figure beside its baseline's.
struct Row {
  std::string key;    // "tasks.group.1", "tasks.batched.2", ...
  std::string label;  // for the table
  uint64_t count = 0;
  double accel = 0;     // per second
  double baseline = 0;  // per second
  std::string baseline_name;
  std::string goal;  // "" none
  // Tasks rows: the share of the tasks a client thread ran itself, over every repeat; -1 unknown.
  double accel_inline = -1;
  double baseline_inline = -1;
};

void PrintTable(const std::vector<Row>& rows) {
  const auto ratio = [](const Row& r) { return r.baseline > 0 ? r.accel / r.baseline : 0.0; };
  fmt::print("\nEmpty tasks (request NULL)                  {:>14} {:>14} {:>10} {:>16}  {}\n", "Accel tasks/s",
             "oneTBB tasks/s", "Accel/TBB", "on clients A/T", "goal");
  for (const Row& r : rows) {
    if (r.key.rfind("tasks.", 0) != 0) continue;
    fmt::print("  {:<41} {:>14.0f} {:>14.0f} {:>9.3f}x {:>7.0f}%/{:>3.0f}%  {}\n", r.label, r.accel, r.baseline,
               ratio(r), 100 * r.accel_inline, 100 * r.baseline_inline, r.goal.empty() ? "-" : r.goal);
  }
  for (const Row& r : rows) {
    if (r.key != "tasks.round_trip") continue;
    fmt::print("  {:<41} {:>11.2f} us {:>11.2f} us\n", "round trip, latency per task", 1e6 / r.accel, 1e6 / r.baseline);
  }
  for (const Row& r : rows) {
    if (r.key != "chain") continue;
    fmt::print("\nDependency chains (each task after the one before) {:>12} {:>14} {:>10}\n", "Accel tasks/s",
               "oneTBB tasks/s", "Accel/TBB");
    fmt::print("  {:<49} {:>12.0f} {:>14.0f} {:>9.3f}x\n", r.label, r.accel, r.baseline, ratio(r));
  }
  for (const Row& r : rows) {
    if (r.key != "backlog") continue;
    fmt::print("\nCapacity backlog ({} tasks of one whole device)  {:>14}\n", r.count, "submissions/s");
    fmt::print("  {:<47} {:>14.0f}\n", "behind 8 running tasks (all wait for capacity)", r.accel);
    fmt::print("  {:<47} {:>14.0f}\n", r.baseline_name, r.baseline);
    fmt::print("  {:<47} {:>13.3f}x\n", "backlog / idle", ratio(r));
  }
  for (const Row& r : rows) {
    if (r.key != "backlog.drain") continue;
    fmt::print("  {:<47} {:>14}\n", "submitted, then all ended", "tasks/s");
    fmt::print("  {:<47} {:>14.0f}\n", "behind 8 running tasks (then the drain)", r.accel);
    fmt::print("  {:<47} {:>14.0f}\n", r.baseline_name, r.baseline);
    fmt::print("  {:<47} {:>13.3f}x\n", "backlog / idle", ratio(r));
  }
  fmt::print("\nPlacement groups ({} x 1 device, PACK at clique)  {:>10}\n", kBundles, "groups/s");
  for (const Row& r : rows) {
    if (r.key != "groups") continue;
    fmt::print("  {:<47} {:>10.0f}\n", r.label, r.accel);
    fmt::print("  {:<47} {:>10.0f}\n", r.baseline_name, r.baseline);
    fmt::print("  {:<47} {:>10.0f}   (reference constant, not measured)\n", "Ray (published)", kRayGroupsPerSecond);
    fmt::print("  {:<47} {:>9.1f}x\n", "Accel runtime / Ray (published)", r.accel / kRayGroupsPerSecond);
  }
}

void PrintJson(const Options& o, const nlohmann::json& machine, const std::vector<Row>& rows) {
  nlohmann::json out;
  out["bench"] = "accel-runtime-bench";
  out["options"] = {{"tasks", o.tasks}, {"groups", o.groups}, {"chain", o.chain}, {"backlog", o.backlog},
                    {"batch", o.batch}, {"repeat", o.repeat}, {"seed", o.seed}};
  out["machine"] = machine;
  out["rows"] = nlohmann::json::array();
  for (const Row& r : rows) {
    out["rows"].push_back({{"key", r.key},
                           {"label", r.label},
                           {"count", r.count},
                           {"accel_per_s", r.accel},
                           {"baseline", r.baseline_name},
                           {"baseline_per_s", r.baseline},
                           {"ratio", r.baseline > 0 ? r.accel / r.baseline : 0.0},
                           {"accel_on_clients", r.accel_inline},
                           {"baseline_on_clients", r.baseline_inline},
                           {"goal", r.goal}});
  }
  out["reference"] = {{"name", "Ray (published)"},
                      {"what", "placement group create+remove per second"},
                      {"per_s", kRayGroupsPerSecond},
                      {"measured", false}};
  fmt::print("{}\n", out.dump(2));
}

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: accel-runtime-bench [--tasks N] [--groups N] [--chain C] [--backlog B] [--batch K] [--repeat R] "
               "[--seed S] [--json]\n");
  std::exit(2);
}

std::optional<Options> ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto number = [&]() -> uint64_t {
      if (i + 1 >= argc) Usage();
      char* end = nullptr;
      const uint64_t v = std::strtoull(argv[++i], &end, 10);
      if (end == argv[i] || *end != '\0') Usage();
      return v;
    };
    if (arg == "--tasks") {
      o.tasks = number();
    } else if (arg == "--groups") {
      o.groups = number();
    } else if (arg == "--chain") {
      o.chain = number();
    } else if (arg == "--backlog") {
      o.backlog = number();
    } else if (arg == "--batch") {
      o.batch = static_cast<uint32_t>(std::clamp<uint64_t>(number(), 1, 1U << 20));
    } else if (arg == "--repeat") {
      o.repeat = static_cast<uint32_t>(std::clamp<uint64_t>(number(), 1, 1000));
    } else if (arg == "--seed") {
      o.seed = number();
    } else if (arg == "--json") {
      o.json = true;
    } else {
      return std::nullopt;
    }
  }
  if (o.tasks == 0 || o.groups == 0 || o.chain == 0 || o.backlog == 0) return std::nullopt;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const auto parsed = ParseOptions(argc, argv);
  if (!parsed) Usage();
  const Options o = parsed.value();

  // The node the placement groups run on; tasks need no device.
  setenv("ACCEL_SIM_PROFILE", kProfile, 1);
  accel_instance_desc_t id{};
  id.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  id.struct_size = sizeof(id);
  id.backends = "sim";
  accel_instance_t instance = nullptr;
  if (!Check(accel_instance_create(&id, &instance), "accel_instance_create")) {
    std::fprintf(stderr, "accel-runtime-bench: %s\n", g_failure.message().c_str());
    return 1;
  }
  accel_runtime_t runtime = nullptr;
  uint32_t devices = 0;
  accel_runtime_device_t device0{};
  device0.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE;
  device0.struct_size = sizeof(device0);
  if (Check(accel_runtime_create(instance, nullptr, &runtime), "accel_runtime_create") &&
      Check(accel_runtime_get_device_count(runtime, &devices), "accel_runtime_get_device_count") && devices > 0) {
    Check(accel_runtime_get_device(runtime, 0, &device0), "accel_runtime_get_device");
  }
  if (!g_failure.failed() && devices < kBundles) {
    g_failure.Set(
        fmt::format("ACCEL_SIM_PROFILE={} gave {} device(s); the groups need {}", kProfile, devices, kBundles));
  }

  // The CPUs this process may run on (taskset, a container's cpuset), as the runtime counts them for its default.
  unsigned cpus = std::thread::hardware_concurrency();
  if (cpu_set_t set; sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
    cpus = static_cast<unsigned>(CPU_COUNT(&set));
  }
  const uint32_t workers = std::max(2U, cpus);  // the runtime's default (worker_threads 0)
  const int tbb_threads = tbb::this_task_arena::max_concurrency();
  const uint64_t round_trips = std::max<uint64_t>(1, o.tasks / 10);
  std::mt19937_64 rng(o.seed);
  // Times both contenders `o.repeat` times, each repetition in a seeded
  // order; the median seconds of each.
  auto pair = [&](const std::function<double()>& accel, const std::function<double()>& baseline) {
    return accel_bench::Paired(
        o.repeat, rng, [] { return g_failure.failed(); }, accel, baseline);
  };

  std::vector<Row> rows;
  if (!g_failure.failed()) {
    AccelTasks accel_tasks(runtime);
    TbbTasks tbb_tasks;
    // Warm-up: worker threads, TBB's arena, the allocators.
    const uint64_t warm = std::min<uint64_t>(o.tasks, 2000);
    accel_tasks.Batched(warm, 2, o.batch);
    accel_tasks.Grouped(warm, 2, o.batch);
    tbb_tasks.Batched(warm, 2, o.batch);
    const std::string goal = fmt::format(">= {:.0f} tasks/s and >= {:.1f}x TBB", kGoalTasksPerSecond, kGoalRatioToTbb);
    // The share of tasks the clients ran themselves, over all repeats of a row.
    struct Inline {
      uint64_t on_client = 0;
      uint64_t all = 0;
      double Share() const { return all > 0 ? static_cast<double>(on_client) / static_cast<double>(all) : -1; }
    };
    for (const auto& [clients, grouped] : {std::pair{1U, true}, {2U, true}, {1U, false}, {2U, false}}) {
      Inline ai;
      Inline ti;
      const auto [a, t] = pair(
          [&] {
            const double s = grouped ? accel_tasks.Grouped(o.tasks, clients, o.batch)
                                     : accel_tasks.Batched(o.tasks, clients, o.batch);
            CheckRan("Accel", accel_tasks.ran(), o.tasks);
            ai.on_client += accel_tasks.on_client();
            ai.all += accel_tasks.ran();
            return s;
          },
          [&] {
            const double s = tbb_tasks.Batched(o.tasks, clients, o.batch);
            CheckRan("oneTBB", tbb_tasks.ran(), o.tasks);
            ti.on_client += tbb_tasks.on_client();
            ti.all += tbb_tasks.ran();
            return s;
          });
      Row row{fmt::format("tasks.{}.{}", grouped ? "group" : "batched", clients),
              fmt::format("{}, {} client{}, batches of {}", grouped ? "task group" : "a future each", clients,
                          clients > 1 ? "s" : "", o.batch),
              o.tasks,
              Rate(o.tasks, a),
              Rate(o.tasks, t),
              "oneTBB tbb::task_group",
              grouped ? goal : ""};
      row.accel_inline = ai.Share();
      row.baseline_inline = ti.Share();
      rows.push_back(std::move(row));
    }
    Inline ai;
    Inline ti;
    const auto [a, t] = pair(
        [&] {
          const double s = accel_tasks.RoundTrip(round_trips);
          CheckRan("Accel", accel_tasks.ran(), round_trips);
          ai.on_client += accel_tasks.on_client();
          ai.all += accel_tasks.ran();
          return s;
        },
        [&] {
          const double s = tbb_tasks.RoundTrip(round_trips);
          CheckRan("oneTBB", tbb_tasks.ran(), round_trips);
          ti.on_client += tbb_tasks.on_client();
          ti.all += tbb_tasks.ran();
          return s;
        });
    Row row{"tasks.round_trip",
            fmt::format("round trip (submit, wait, release) x{}", round_trips),
            round_trips,
            Rate(round_trips, a),
            Rate(round_trips, t),
            "oneTBB tbb::task_group",
            ""};
    row.accel_inline = ai.Share();
    row.baseline_inline = ti.Share();
    rows.push_back(std::move(row));
  }
  if (!g_failure.failed()) {
    std::atomic<uint64_t> accel_ran{0};
    std::atomic<uint64_t> tbb_ran{0};
    const auto [a, t] = pair(
        [&] {
          accel_ran = 0;
          const double s = AccelChain(runtime, o.chain, &accel_ran);
          CheckRan("Accel (chain)", accel_ran.load(), o.chain);
          return s;
        },
        [&] {
          tbb_ran = 0;
          const double s = TbbChain(o.chain, &tbb_ran);
          CheckRan("oneTBB (chain)", tbb_ran.load(), o.chain);
          return s;
        });
    rows.push_back({"chain", fmt::format("{} tasks, submitted (built) and run", o.chain), o.chain, Rate(o.chain, a),
                    Rate(o.chain, t), "oneTBB tbb::flow::graph of continue_nodes", ""});
  }
  if (!g_failure.failed()) {
    std::vector<double> behind_all;
    std::vector<double> idle_all;
    const auto [a, idle] = pair(
        [&] {
          const auto [submitted, all] = AccelBacklog(runtime, devices, o.backlog, true);
          behind_all.push_back(all);
          return submitted;
        },
        [&] {
          const auto [submitted, all] = AccelBacklog(runtime, devices, o.backlog, false);
          idle_all.push_back(all);
          return submitted;
        });
    rows.push_back({"backlog.drain", "capacity backlog, submitted and ended", o.backlog,
                    Rate(o.backlog, Median(behind_all)), Rate(o.backlog, Median(idle_all)),
                    "onto an idle node (baseline)", ""});
    rows.push_back({"backlog", "capacity backlog", o.backlog, Rate(o.backlog, a), Rate(o.backlog, idle),
                    "onto an idle node (baseline)", ""});
  }
  if (!g_failure.failed()) {
    AccelGroups(runtime, std::min<uint64_t>(o.groups, 50));  // warm-up
    const auto [a, p] = pair([&] { return AccelGroups(runtime, o.groups); },
                             [&] { return PlannerGroups(devices, device0.memory_total, o.groups); });
    rows.push_back({"groups", "Accel runtime (create + destroy)", o.groups, Rate(o.groups, a), Rate(o.groups, p),
                    fmt::format("planner alone (Place + Release, 1x{} node)", devices), ""});
  }

  accel_runtime_counters_t counters{};
  counters.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS;
  counters.struct_size = sizeof(counters);
  if (runtime != nullptr && Check(accel_runtime_get_counters(runtime, &counters), "accel_runtime_get_counters") &&
      !g_failure.failed() && counters.finished != counters.submitted) {
    g_failure.Set(fmt::format("counters: {} submitted, {} finished", counters.submitted, counters.finished));
  }
  if (runtime != nullptr) Check(accel_runtime_destroy(runtime), "accel_runtime_destroy");
  Check(accel_instance_destroy(instance), "accel_instance_destroy");
  if (g_failure.failed()) {
    std::fprintf(stderr, "accel-runtime-bench: %s\n", g_failure.message().c_str());
    return 1;
  }

  const nlohmann::json machine = {{"cpus", cpus},
                                  {"runtime_workers", workers},
                                  {"tbb_version", TBB_runtime_version()},
                                  {"tbb_threads", tbb_threads},
                                  {"sim_profile", kProfile},
                                  {"devices", devices}};
  if (o.json) {
    PrintJson(o, machine, rows);
    return 0;
  }
  fmt::print(
      "accel-runtime-bench: {} CPUs; Accel runtime: {} worker threads (the default); oneTBB {}: {} threads; "
      "sim {} ({} devices); seed {} (which contender runs first in each repeat)\n",
      cpus, workers, TBB_runtime_version(), tbb_threads, kProfile, devices, o.seed);
  fmt::print("tasks={} round_trips={} groups={} batch={} repeat={} (each figure: the median of the repeats)\n", o.tasks,
             round_trips, o.groups, o.batch, o.repeat);
  PrintTable(rows);
  return 0;
}
