// `accel-info serve`: a read-only dashboard over HTTP (docs/dashboard.md).
// The pieces take an instance, an optional runtime and a Watch, and nothing
// else, so that an application can serve its own figures by linking them:
//   Watch       the named tenants, queues and streams shown besides the
//               instance's devices and the runtime's counters (serve_watch.cc)
//   Metrics     one snapshot of every figure, its JSON and its Prometheus
//               text (serve_metrics.cc, serve_prometheus.cc)
//   PageHtml    the page, with its own script (serve_page.cc)
//   Server      the HTTP server: routes, limits, refusals (serve_server.cc)
//   Demo        the --demo workload on the sim backend (serve_demo.cc)
//   RunServe    the subcommand: flags, bind check, signals (serve_command.cc)
#ifndef ACCEL_TOOLS_ACCEL_INFO_SERVE_H_
#define ACCEL_TOOLS_ACCEL_INFO_SERVE_H_

#include <accel/accel.h>
#include <accel/runtime.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace accel::info::serve {

// The objects, beyond the instance and the runtime, whose figures the
// dashboard shows, each under a name its owner gives: libaccel has no way to
// list the tenants or streams of an instance, nor the runtime its queues, so
// their owner registers them here. The owner keeps them alive while
// registered (a stale handle is shown as an error, never dereferenced).
// Thread-safe.
class Watch {
 public:
  template <typename Handle>
  struct Entry {
    std::string name;
    Handle handle;
  };

  void AddTenant(std::string name, accel_tenant_t tenant);
  void AddQueue(std::string name, accel_queue_t queue);
  void AddStream(std::string name, accel_stream_t stream);
  // Forgets every entry whose name starts with `prefix` (before its owner
  // destroys the objects).
  void RemovePrefix(const std::string& prefix);

  std::vector<Entry<accel_tenant_t>> Tenants() const;
  std::vector<Entry<accel_queue_t>> Queues() const;
  std::vector<Entry<accel_stream_t>> Streams() const;

 private:
  mutable std::mutex mutex_;
  std::vector<Entry<accel_tenant_t>> tenants_;
  std::vector<Entry<accel_queue_t>> queues_;
  std::vector<Entry<accel_stream_t>> streams_;
};

// One physical device: the process's memory account and, with a runtime,
// what the scheduler has left to hand out on it.
struct DeviceMetrics {
  uint32_t index = 0;
  std::string stable_id;
  std::string name;
  uint64_t memory_total = 0;
  accel_memory_usage_t usage{};
  bool scheduled = false;  // the runtime figures below are set
  double share_free = 0;
  uint64_t memory_free = 0;         // bytes not reserved by the runtime
  uint64_t memory_schedulable = 0;  // bytes the runtime hands out
  bool lost = false;
};

// One tenant's account on one physical device (devices where it has neither
// a limit nor bytes are left out).
struct TenantMetrics {
  std::string tenant;
  uint32_t device = 0;
  std::string stable_id;
  accel_memory_usage_t usage{};
};

struct QueueMetrics {
  std::string queue;
  accel_queue_usage_t usage{};
};

struct StreamMetrics {
  std::string stream;
  bool busy = false;        // accel_stream_query said NOT_READY
  std::string error;        // the query's or the statistics' error, "" when none
  bool has_copies = false;  // the backend keeps copy statistics
  accel_copy_statistics_t copies{};
};

// One snapshot of everything the dashboard shows live. Plain data.
struct Metrics {
  double uptime_seconds = 0;
  std::vector<DeviceMetrics> devices;
  std::vector<TenantMetrics> tenants;
  std::vector<QueueMetrics> queues;
  std::vector<StreamMetrics> streams;
  std::vector<std::string> errors;  // watched objects that could not be read, with why
  bool has_runtime = false;
  accel_runtime_counters_t counters{};
  std::vector<accel_runtime_event_t> decisions;  // the runtime's last decisions, oldest first (its event log)
};

// How many decisions the dashboard keeps in the runtime's event log, and how many it shows.
constexpr uint32_t kDecisionLog = 256;
constexpr uint32_t kDecisionsShown = 20;

// Reads the figures now. `runtime` may be NULL. Throws QueryError when a
// device of the instance cannot be read (watched objects' failures go to
// Metrics::errors instead: their owner may have destroyed them).
Metrics CollectMetrics(accel_instance_t instance, accel_runtime_t runtime, const Watch& watch,
                       std::chrono::steady_clock::time_point started);

// /api/metrics: the snapshot as JSON (docs/dashboard.md).
nlohmann::ordered_json MetricsJson(const Metrics& metrics);

// /metrics: the snapshot in the Prometheus text exposition format 0.0.4.
std::string PrometheusText(const Metrics& metrics);

// /: the page (HTML with its own script and style; nothing from the network).
const char* PageHtml();

// Why `address` may not be bound, or nothing: it must be an IPv4 or IPv6
// literal (or "localhost"), and a loopback one unless `allow_remote`.
std::optional<std::string> CheckBindAddress(const std::string& address, bool allow_remote);

// The dashboard's HTTP server: GET and HEAD on /, /api/devices,
// /api/topology, /api/metrics and /metrics; every other method 405, every
// other path 404, oversized requests 4xx, each with a message. The device
// report and the topology are read once at construction; metrics on each
// request. Bind and Stop are thread-safe against Serve.
class Server {
 public:
  Server(accel_instance_t instance, accel_runtime_t runtime, const Watch& watch);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds `address` (already checked) and `port` (0: any free one). Returns
  // the port bound, or nothing with `*error` saying why.
  std::optional<int> Bind(const std::string& address, int port, std::string* error);
  // Serves until Stop. Returns false when the server failed.
  bool Serve();
  // Whether Serve is listening: a Stop before that is lost.
  bool Running() const;
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The --demo workload: two lanes, "demo-a" and "demo-b", each with its queue,
// its tenant and its stream on its own physical device (0 and 1, or both on
// 0), allocating, filling and freeing buffers and submitting tasks that hold
// memory for a while, so the dashboard's figures move. Registers its objects
// in `watch`; the destructor stops it, waits for its tasks and unregisters
// them. Throws QueryError when it cannot start.
class Demo {
 public:
  Demo(accel_instance_t instance, accel_runtime_t runtime, Watch& watch);
  ~Demo();
  Demo(const Demo&) = delete;
  Demo& operator=(const Demo&) = delete;

 private:
  struct Lane;
  void Run(Lane& lane);

  Watch& watch_;
  accel_runtime_t runtime_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

struct ServeOptions {
  std::string bind = "127.0.0.1";
  int port = 8321;
  bool allow_remote = false;
  bool demo = false;
  double duration = 0;  // seconds; 0: until SIGINT or SIGTERM
};

// `accel-info serve`: checks the address, creates the instance, the runtime
// and (with --demo) the workload, prints the URL bound and serves until the
// duration ends or SIGINT/SIGTERM. Returns the exit status.
int RunServe(const ServeOptions& options);

}  // namespace accel::info::serve

#endif  // ACCEL_TOOLS_ACCEL_INFO_SERVE_H_
