// The dashboard's HTTP server over cpp-httplib (serve.h, docs/dashboard.md).
// Read-only: GET and HEAD only. Every refusal carries a message saying what
// was wrong. Debian's libcpp-httplib is built with its default limits (a
// request line or one header line of at most 8192 bytes: 414 or 400); on top
// of them this server refuses more than kMaxHeaders headers or kMaxHeaderBytes
// of headers in all (431), and any request body over kMaxBodyBytes (413).
#include <fmt/format.h>
#include <httplib.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "names.h"
#include "output.h"
#include "report.h"
#include "serve.h"

namespace accel::info::serve {
namespace {

using json = nlohmann::ordered_json;

constexpr size_t kMaxHeaders = 100;
constexpr size_t kMaxHeaderBytes = 16 * 1024;
constexpr size_t kMaxBodyBytes = 4096;
constexpr const char* kPaths[] = {"/", "/api/devices", "/api/topology", "/api/metrics", "/metrics"};

// Names come from drivers: invalid UTF-8 is replaced rather than refused.
std::string Dump(const json& doc) { return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

void Refuse(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(Dump({{"error", message}, {"status", status}}), "application/json");
}

// The message for a refusal cpp-httplib made itself, before any handler ran.
std::string LibraryRefusal(int status) {
  switch (status) {
    case 400:
      return "bad request: the request line or a header could not be read (malformed, or a header line longer "
             "than 8192 bytes)";
    case 413: return fmt::format("request body too large: this server accepts at most {} bytes", kMaxBodyBytes);
    case 414: return "request target too long: at most 8192 bytes";
    default: return fmt::format("request refused with HTTP status {}", status);
  }
}

}  // namespace

struct Server::Impl {
  accel_instance_t instance;
  accel_runtime_t runtime;
  const Watch& watch;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::string devices;   // /api/devices: `accel-info --json`
  std::string topology;  // /api/topology: `accel-info topo --json`
  httplib::Server http;

  Impl(accel_instance_t i, accel_runtime_t r, const Watch& w) : instance(i), runtime(r), watch(w) {
    const Report report = Collect(instance);
    const TopoReport topo = CollectTopology(instance);
    devices = Dump(ReportJson(report, TopologyDescription(report, topo)));
    topology = Dump(TopoJson(topo));
    Routes();
  }

  void Routes() {
    http.set_payload_max_length(kMaxBodyBytes);
    http.set_read_timeout(5, 0);
    http.set_write_timeout(5, 0);
    // Runs after the headers were read and before any body is.
    http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
      if (req.method != "GET" && req.method != "HEAD") {
        res.set_header("Allow", "GET, HEAD");
        Refuse(res, 405,
               fmt::format("method {} not allowed: this dashboard is read-only (GET and HEAD only)", req.method));
        return httplib::Server::HandlerResponse::Handled;
      }
      size_t bytes = 0;
      for (const auto& [name, value] : req.headers) bytes += name.size() + value.size() + 4;
      if (req.headers.size() > kMaxHeaders || bytes > kMaxHeaderBytes) {
        Refuse(res, 431,
               fmt::format("request header fields too large: {} headers, {} bytes (at most {} headers, {} bytes)",
                           req.headers.size(), bytes, kMaxHeaders, kMaxHeaderBytes));
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    http.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(PageHtml(), "text/html; charset=utf-8");
    });
    http.Get("/api/devices",
             [this](const httplib::Request&, httplib::Response& res) { res.set_content(devices, "application/json"); });
    http.Get("/api/topology", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(topology, "application/json");
    });
    http.Get("/api/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(Dump(MetricsJson(CollectMetrics(instance, runtime, watch, started))), "application/json");
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(PrometheusText(CollectMetrics(instance, runtime, watch, started)),
                      "text/plain; version=0.0.4; charset=utf-8");
    });
    // Routes match in order: this one takes every other path.
    http.Get(".*", [](const httplib::Request& req, httplib::Response& res) {
      Refuse(res, 404,
             fmt::format("no such path: '{}' (the paths are {})", req.path,
                         Join(std::vector<std::string>(std::begin(kPaths), std::end(kPaths)), ", ")));
    });
    http.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr e) {
      std::string what = "unknown error";
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        what = ex.what();
      } catch (...) {
      }
      Refuse(res, 500, fmt::format("{}: {}", req.path, what));
    });
    // Refusals cpp-httplib makes itself come without a body: give them one.
    http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      Refuse(res, res.status, LibraryRefusal(res.status));
      return httplib::Server::HandlerResponse::Handled;
    }));
  }
};

Server::Server(accel_instance_t instance, accel_runtime_t runtime, const Watch& watch)
    : impl_(std::make_unique<Impl>(instance, runtime, watch)) {}

Server::~Server() = default;

std::optional<int> Server::Bind(const std::string& address, int port, std::string* error) {
  errno = 0;
  const int bound =
      port == 0 ? impl_->http.bind_to_any_port(address) : (impl_->http.bind_to_port(address, port) ? port : -1);
  if (bound <= 0) {
    const int saved = errno;
    *error = fmt::format("cannot listen on {}:{}{}", address, port,
                         saved != 0 ? fmt::format(": {}", std::strerror(saved)) : std::string());
    return std::nullopt;
  }
  return bound;
}

bool Server::Serve() { return impl_->http.listen_after_bind(); }

bool Server::Running() const { return impl_->http.is_running(); }

void Server::Stop() { impl_->http.stop(); }

}  // namespace accel::info::serve
