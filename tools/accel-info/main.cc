// accel-info: lists the devices Accel sees, their access paths and
// capabilities, and the loader report; `accel-info topo` prints the topology
// matrix (docs/accel-info.md).
//
// Exit codes: 0 success (even with zero devices), 1 usage error, 2 the
// instance could not be created or a query failed, 3 --require-devices and no
// device is visible.
#include <accel/accel.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "command_line.h"
#include "names.h"
#include "output.h"
#include "report.h"
#include "serve.h"

namespace accel::info {
namespace {

constexpr int kExitSuccess = 0;
// 1, a usage error: tools::kExitUsage, from tools::ParseCommandLine.
constexpr int kExitQueryFailed = 2;
constexpr int kExitNoDevices = 3;

struct Options {
  bool verbose = false;
  bool json = false;
  bool loader_debug = false;
  bool require_devices = false;
  bool topo = false;       // the `topo` subcommand
  bool topo_json = false;  // `topo --json`
  bool exporting = false;  // the `export` subcommand
  std::string export_format;
  std::string node_name;
  bool export_json = false;
  bool profiles = false;  // the `profiles` subcommand
  std::string sim_profile;
};

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "node";
  return name;
}

// Sole owner of the instance: destroyed on every path out of Run().
struct InstanceDeleter {
  void operator()(accel_instance_t instance) const { accel_instance_destroy(instance); }
};
using InstancePtr = std::unique_ptr<accel_instance_s, InstanceDeleter>;

std::string VersionText() {
  std::string text = fmt::format("accel-info {}", ACCEL_INFO_VERSION);
  accel_version_info_t v{};
  v.stype = ACCEL_STRUCTURE_TYPE_VERSION_INFO;
  v.struct_size = sizeof(v);
  if (accel_version_get(&v) == ACCEL_SUCCESS) {
    text += fmt::format(" (libaccel {}, ABI {}, backend ABI {}..{})", VersionString(v.library_version),
                        AbiString(v.abi_version), AbiString(v.backend_abi_min), AbiString(v.backend_abi_max));
  }
  return text;
}

int Run(const Options& options) {
  if (options.profiles) {
    PrintProfiles(ShippedProfileDir());
    return kExitSuccess;
  }
  // --sim-profile is ACCEL_SIM_PROFILE for this run.
  if (!options.sim_profile.empty()) setenv("ACCEL_SIM_PROFILE", options.sim_profile.c_str(), 1);
  accel_instance_t raw = nullptr;
  const accel_status_t created = accel_instance_create(nullptr, &raw);
  if (created != ACCEL_SUCCESS) {
    fmt::print(stderr, "accel-info: accel_instance_create failed with {}: {}\n", accel_status_name(created),
               accel_last_error());
    if (raw != nullptr) accel_instance_destroy(raw);
    return kExitQueryFailed;
  }
  InstancePtr instance(raw);
  PrintSettingWarnings(CollectWarnings(instance.get()));

  if (options.topo) {
    const TopoReport topo = CollectTopology(instance.get());
    if (options.json || options.topo_json) {
      PrintTopoJson(topo);
    } else {
      PrintTopo(topo, !options.loader_debug);
      if (options.loader_debug) {
        fmt::print("\n");
        PrintLoaderReport(Collect(instance.get()));
      }
    }
    if (std::fflush(stdout) != 0) {
      fmt::print(stderr, "accel-info: writing the output failed: {}\n", std::strerror(errno));
      return kExitQueryFailed;
    }
    if (options.require_devices && topo.devices.empty()) {
      fmt::print(stderr, "accel-info: --require-devices: no device is visible (see `accel-info --loader-debug`)\n");
      return kExitNoDevices;
    }
    return kExitSuccess;
  }

  const Report report = Collect(instance.get());
  if (options.exporting) {
    const TopoReport topo = CollectTopology(instance.get());
    PrintExport({options.export_format, options.node_name, HostName(), options.export_json}, report, topo);
  } else if (options.json) {
    // The loader report is its "loader" array; the node's description its "topology" member.
    PrintJson(report, TopologyDescription(report, CollectTopology(instance.get())));
  } else {
    const bool hint = !options.loader_debug;
    if (options.verbose) {
      PrintVerbose(report, hint);
    } else {
      PrintTable(report, hint);
    }
    if (options.loader_debug) {
      fmt::print("\n");
      PrintLoaderReport(report);
    }
  }
  if (std::fflush(stdout) != 0) {
    fmt::print(stderr, "accel-info: writing the output failed: {}\n", std::strerror(errno));
    return kExitQueryFailed;
  }
  if (options.require_devices && report.physical_devices.empty()) {
    fmt::print(stderr, "accel-info: --require-devices: no device is visible (see `accel-info --loader-debug`)\n");
    return kExitNoDevices;
  }
  return kExitSuccess;
}

}  // namespace
}  // namespace accel::info

int main(int argc, char** argv) {
  using namespace accel::info;  // NOLINT(google-build-using-namespace)
  Options options;
  CLI::App app{
      "Lists the devices Accel sees: one line per physical device, or every access path and "
      "capability with -v, or one JSON document with --json.",
      "accel-info"};
  CLI::Option* verbose =
      app.add_flag("-v,--verbose", options.verbose, "Show each access path and every capability key");
  CLI::Option* json = app.add_flag("--json", options.json, "Print one JSON document (docs/accel-info.schema.json)");
  verbose->excludes(json);
  app.add_flag("--loader-debug", options.loader_debug,
               "Print the loader report: every backend considered, its state and the reason");
  app.add_flag("--require-devices", options.require_devices, "Exit with status 3 when no device is visible");
  app.set_version_flag("--version", VersionText);
  CLI::App* topo = app.add_subcommand(
      "topo", "Print the device and NIC matrix like `nvidia-smi topo -m`, with CPU and NUMA affinity and domains");
  topo->add_flag("--json", options.topo_json, "Print it as one JSON document (docs/accel-info-topo.schema.json)");
  topo->excludes(verbose);
  topo->fallthrough();  // `accel-info topo --loader-debug` works as `accel-info --loader-debug topo`
  app.add_option("--sim-profile", options.sim_profile,
                 "Simulate the node a sim profile describes, as ACCEL_SIM_PROFILE does (a shipped profile's name or a "
                 "file); `accel-info profiles` lists the shipped ones");
  CLI::App* exporter = app.add_subcommand(
      "export",
      "Print the node's devices for a cluster scheduler: Kubernetes NFD feature lines (nfd), a Kubernetes "
      "DRA ResourceSlice (dra) or `ray start` options (ray); docs/exports.md");
  exporter->add_option("--format", options.export_format, "nfd, dra or ray")
      ->required()
      ->check(CLI::IsMember({"nfd", "dra", "ray"}));
  exporter->add_option(
      "--node-name", options.node_name,
      "The node's name: the Kubernetes node for dra (default: the host name), the accel.dev/node label "
      "for ray (default: the topology's node id)");
  exporter->add_flag(
      "--json", options.export_json,
      "ray: print the resources, labels and environment as one JSON document (python/accel/ray reads it)");
  exporter->fallthrough();
  serve::ServeOptions serve_options;
  CLI::App* serve = app.add_subcommand(
      "serve",
      "Serve a read-only dashboard over HTTP: devices, topology, live memory, streams and scheduler figures, a "
      "JSON API and Prometheus /metrics (docs/dashboard.md)");
  serve->add_option("--bind", serve_options.bind, "The address to listen on; a non-loopback one needs --allow-remote")
      ->capture_default_str();
  serve->add_option("--port", serve_options.port, "The port; 0 picks a free one (the URL bound is printed)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  serve->add_flag("--allow-remote", serve_options.allow_remote,
                  "Allow a non-loopback --bind (the dashboard has no authentication)");
  serve->add_flag("--demo", serve_options.demo,
                  "Run a small continuous workload (two queues, tenants and streams) so the figures move");
  serve->add_option("--duration", serve_options.duration, "Stop after this many seconds (default: at SIGINT/SIGTERM)")
      ->check(
          [](const std::string& text) -> std::string {
            // NaN passes CLI::Range (every comparison with it is false), and a value past the clocks' range made
            // the deadline arithmetic undefined (the server stopped at once).
            double value = 0;
            const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
            const bool number = r.ec == std::errc() && r.ptr == text.data() + text.size();
            if (!number || !std::isfinite(value) || value < 0 || value > 1e9) {
              return "'" + text + "' is not a number of seconds from 0 to 1e9";
            }
            return "";
          },
          "SECONDS");
  serve->fallthrough();
  CLI::App* profiles =
      app.add_subcommand("profiles",
                         "List the sim backend's shipped profiles (h100-sxm-8, mi300x-8, a100-pcie-4, tpu-2x2, "
                         "mixed-vendor), each with its description");
  app.footer(
      "Exit status: 0 success (also with zero devices), 1 usage error, 2 instance creation or a query "
      "failed, 3 --require-devices and no device is visible.");

  if (const auto exit = accel::tools::ParseCommandLine(app, argc, argv, "accel-info")) return *exit;

  options.topo = topo->parsed();
  options.exporting = exporter->parsed();
  options.profiles = profiles->parsed();
  try {
    if (serve->parsed()) {
      // --sim-profile is ACCEL_SIM_PROFILE for this run, as in Run().
      if (!options.sim_profile.empty()) setenv("ACCEL_SIM_PROFILE", options.sim_profile.c_str(), 1);
      return serve::RunServe(serve_options);
    }
    return Run(options);
  } catch (const QueryError& e) {
    fmt::print(stderr, "accel-info: {}\n", e.what());
    return kExitQueryFailed;
  } catch (const std::exception& e) {
    std::fputs(fmt::format("accel-info: {}\n", e.what()).c_str(), stderr);
    return kExitQueryFailed;
  }
}
