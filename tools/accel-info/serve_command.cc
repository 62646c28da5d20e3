// `accel-info serve`: checks the address, owns the instance, the runtime and
// the --demo workload, and serves the dashboard until --duration ends or
// SIGINT/SIGTERM arrives (serve.h, docs/dashboard.md).
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <thread>

#include "output.h"
#include "report.h"
#include "serve.h"

namespace accel::info::serve {
namespace {

// Exit statuses, as for the rest of accel-info: 1 usage, 2 the instance,
// the runtime or a query failed, or the address could not be bound.
constexpr int kExitUsage = 1;
constexpr int kExitFailed = 2;

struct InstanceDeleter {
  void operator()(accel_instance_t instance) const { accel_instance_destroy(instance); }
};
struct RuntimeDeleter {
  void operator()(accel_runtime_t runtime) const { accel_runtime_destroy(runtime); }
};

std::string UrlHost(const std::string& address) {
  return address.find(':') != std::string::npos ? "[" + address + "]" : address;
}

const char* SignalName(int number) { return number == SIGINT ? "SIGINT" : number == SIGTERM ? "SIGTERM" : "signal"; }

}  // namespace

std::optional<std::string> CheckBindAddress(const std::string& address, bool allow_remote) {
  bool loopback = false;
  in_addr v4{};
  in6_addr v6{};
  if (address == "localhost") {
    loopback = true;
  } else if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    loopback = (ntohl(v4.s_addr) >> 24) == 127;
  } else if (inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
    loopback = IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  } else {
    return fmt::format("--bind '{}': not an IP address (give an IPv4 or IPv6 address such as 127.0.0.1 or ::1)",
                       address);
  }
  if (loopback || allow_remote) return std::nullopt;
  return fmt::format(
      "--bind {}: not a loopback address. The dashboard has no authentication and shows this process's devices "
      "and workload to whoever connects; to serve it beyond this machine anyway, add --allow-remote",
      address);
}

int RunServe(const ServeOptions& options) {
  if (const auto refusal = CheckBindAddress(options.bind, options.allow_remote)) {
    fmt::print(stderr, "accel-info serve: {}\n", *refusal);
    return kExitUsage;
  }
  // Blocked before any thread starts, so that every thread (the runtime's
  // workers, the server's pool) inherits the mask and only the sigtimedwait
  // below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A client that goes away mid-response must not end the server.
  std::signal(SIGPIPE, SIG_IGN);

  accel_instance_t raw_instance = nullptr;
  const accel_status_t created = accel_instance_create(nullptr, &raw_instance);
  if (created != ACCEL_SUCCESS) {
    fmt::print(stderr, "accel-info serve: accel_instance_create failed with {}: {}\n", accel_status_name(created),
               accel_last_error());
    if (raw_instance != nullptr) accel_instance_destroy(raw_instance);
    return kExitFailed;
  }
  const std::unique_ptr<accel_instance_s, InstanceDeleter> instance(raw_instance);
  PrintSettingWarnings(CollectWarnings(instance.get()));
  accel_runtime_t raw_runtime = nullptr;
  const accel_status_t runtime_created = accel_runtime_create(instance.get(), nullptr, &raw_runtime);
  if (runtime_created != ACCEL_SUCCESS) {
    fmt::print(stderr, "accel-info serve: accel_runtime_create failed with {}: {}\n",
               accel_status_name(runtime_created), accel_last_error());
    return kExitFailed;
  }
  const std::unique_ptr<accel_runtime_s, RuntimeDeleter> runtime(raw_runtime);
  if (accel_runtime_set_event_log(runtime.get(), kDecisionLog) != ACCEL_SUCCESS) {  // the page's recent decisions
    fmt::print(stderr, "accel-info serve: accel_runtime_set_event_log failed: {}\n", accel_last_error());
    return kExitFailed;
  }

  Watch watch;
  std::unique_ptr<Demo> demo;
  if (options.demo) demo = std::make_unique<Demo>(instance.get(), runtime.get(), watch);
  Server server(instance.get(), runtime.get(), watch);
  std::string error;
  const std::optional<int> port = server.Bind(options.bind, options.port, &error);
  if (!port) {
    fmt::print(stderr, "accel-info serve: {}\n", error);
    return kExitFailed;
  }

  std::atomic<bool> served_ok{true};
  std::atomic<bool> stopping{false};
  std::atomic<bool> returned{false};
  std::thread serving([&] {
    served_ok = server.Serve();
    returned = true;
    // Ended without Stop: wake the wait below.
    if (!stopping) kill(getpid(), SIGTERM);
  });
  // The line tests read to find the port.
  fmt::print("http://{}:{}/\n", UrlHost(options.bind), *port);
  std::fflush(stdout);

  int received = 0;
  if (options.duration > 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.duration);
    while (received <= 0) {
      const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) break;
      timespec wait{static_cast<time_t>(left), static_cast<long>((left - std::floor(left)) * 1e9)};
      received = sigtimedwait(&signals, nullptr, &wait);
      if (received < 0 && errno != EAGAIN && errno != EINTR) break;
    }
  } else {
    while (sigwait(&signals, &received) != 0) {
    }
  }
  stopping = true;
  // A Stop before the server started listening would be lost: wait for it.
  while (!server.Running() && !returned) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server.Stop();
  serving.join();
  if (received > 0) fmt::print(stderr, "accel-info serve: {}: stopped\n", SignalName(received));
  if (!served_ok) {
    fmt::print(stderr, "accel-info serve: the server failed while listening on {}:{}\n", options.bind, *port);
    return kExitFailed;
  }
  return 0;
}

}  // namespace accel::info::serve
