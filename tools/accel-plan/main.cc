// accel-plan: places gangs on a cluster described as data, without backends
// (docs/planner.md, "CLI"): the planner of core/planner over a cluster file,
// a topology description or a generated cluster, and a gangs file.
//
// Exit codes: 0 the input was valid (also when gangs were refused), 1 usage
// error, 2 bad input ("<file>: <field>: <reason>" on stderr), 3 the output
// could not be written (or another failure).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "cluster_file.h"
#include "cluster_input.h"
#include "command_line.h"
#include "gangs_file.h"
#include "generator.h"
#include "names.h"
#include "output.h"
#include "plan.h"

namespace accel::plan {
namespace {

constexpr int kExitSuccess = 0;
// 1, a usage error: tools::kExitUsage, from tools::ParseCommandLine.
constexpr int kExitBadInput = 2;
constexpr int kExitFailure = 3;

struct Options {
  std::string cluster;     // --cluster FILE
  std::string generate;    // --generate NODESxDEVICES[,key=value...]
  bool generated = false;  // --generate was given
  std::string gangs;       // --gangs FILE; "" places none
  bool json = false;
  bool explain = false;
};

int BadInput(const std::string& message) {
  fmt::print(stderr, "accel-plan: {}\n", message);
  return kExitBadInput;
}

int Run(const Options& options) {
  std::optional<planner::Cluster> cluster;
  std::string source;
  if (options.generated) {
    auto spec = ParseGenerateSpec(options.generate);
    if (!spec) return BadInput(spec.error().message);
    const planner::GeneratorSpec& s = spec.value();
    auto built = planner::Cluster::Build(planner::GenerateNodes(s));
    if (!built) return BadInput(fmt::format("--generate: {}", built.error().message));
    cluster.emplace(std::move(built.value()));
    source = fmt::format("generated {}x{} (cliques={}, numa={}, rack={}, block={}{}, memory={})", s.nodes,
                         s.devices_per_node, s.cliques_per_node, s.numa_per_node, s.nodes_per_rack, s.racks_per_block,
                         s.nodes_per_fabric > 0 ? fmt::format(", fabric={}", s.nodes_per_fabric) : "",
                         info::HumanBytes(s.memory));
  } else {
    auto loaded = LoadClusterInput(options.cluster);
    if (!loaded) return BadInput(loaded.error().message);
    cluster.emplace(std::move(loaded.value()));
    source = options.cluster;
  }
  std::vector<GangRequest> gangs;
  if (!options.gangs.empty()) {
    auto loaded = LoadGangs(options.gangs);
    if (!loaded) return BadInput(loaded.error().message);
    gangs = std::move(loaded.value());
  }

  const PlanOutcome outcome = Plan(*cluster, gangs, options.explain);
  const Report report{source, &*cluster, &gangs, &outcome};
  if (options.json) {
    PrintJson(report);
  } else {
    PrintText(report, options.explain);
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    fmt::print(stderr, "accel-plan: writing the output failed: {}\n", std::strerror(errno));
    return kExitFailure;
  }
  return kExitSuccess;
}

}  // namespace
}  // namespace accel::plan

int main(int argc, char** argv) {
  using namespace accel::plan;  // NOLINT(google-build-using-namespace)
  Options options;
  CLI::App app{
      "Places gangs (placement groups) on a cluster described as data, without backends: each gang in the order "
      "of the gangs file, all-or-nothing, holding what earlier ones took.",
      "accel-plan"};
  CLI::Option* cluster =
      app.add_option(
             "--cluster", options.cluster,
             "A cluster file ({\"format_version\": \"1.0\", \"nodes\": [<topology description>, ...]}), one topology "
             "description (a sim profile) or `accel-info --json` output")
          ->type_name("FILE");
  CLI::Option* generate =
      app.add_option("--generate", options.generate,
                     "A generated cluster instead: "
                     "NODESxDEVICES[,cliques=C][,numa=N][,rack=NODES][,block=RACKS][,fabric=NODES][,memory=SIZE]")
          ->type_name("SPEC");
  cluster->excludes(generate);
  app.add_option("--gangs", options.gangs,
                 "The gangs file ({\"format_version\": \"1.0\", \"gangs\": [...]}); without it only the cluster is "
                 "read and summarised")
      ->type_name("FILE");
  app.add_flag("--json", options.json, "Print one JSON document instead of the text report");
  app.add_flag("--explain", options.explain,
               "Show every placed device's domain at every level, and for a refused gang the freest domains at its "
               "level when it was refused (also in --json)");
  app.set_version_flag("--version", fmt::format("accel-plan {}", ACCEL_PLAN_VERSION));
  app.footer(
      "Exit status: 0 the input was valid (also when gangs were refused), 1 usage error, 2 bad input (the message "
      "names the file and the field), 3 the output could not be written (or another failure). docs/planner.md "
      "describes both files.");

  // Run at the end of the parse, so that its error is a usage error like CLI11's own.
  app.callback([&] {
    if (cluster->count() == 0 && generate->count() == 0) throw CLI::RequiredError("--cluster or --generate");
  });
  if (const auto exit = accel::tools::ParseCommandLine(app, argc, argv, "accel-plan")) return *exit;
  options.generated = generate->count() > 0;
  try {
    return Run(options);
  } catch (const std::exception& e) {
    std::fputs(fmt::format("accel-plan: {}\n", e.what()).c_str(), stderr);
    return kExitFailure;
  }
}
