// Where accel-plan's cluster comes from (docs/planner.md, "CLI"): a file (a
// cluster file, one topology description such as a sim profile, or a whole
// `accel-info --json` document), or a generated cluster (--generate). Pure
// functions: thread-safe.
#ifndef ACCEL_TOOLS_ACCEL_PLAN_CLUSTER_INPUT_H_
#define ACCEL_TOOLS_ACCEL_PLAN_CLUSTER_INPUT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "cluster.h"
#include "generator.h"

namespace accel::plan {

// The most devices --generate builds (nodes x devices per node).
inline constexpr uint64_t kMaxGeneratedDevices = uint64_t{1} << 20;

// Reads the cluster file at `path` (planner::ParseCluster). A whole
// `accel-info --json` document is read as its "topology" member (errors then
// name "<path>: topology: <field>"), as the sim backend does. Errors are
// "<path>: <field>: <reason>", "<path>: not valid JSON: ...", "<path>: cannot
// open: ...", and for `accel-info topo --json` output (a link matrix, not a
// description) a line saying what to give instead.
planner::Expected<planner::Cluster> LoadClusterInput(const std::string& path);

// --generate's value: "NODESxDEVICES" then optional ",key=value" items:
// cliques=C (per node, default 1), numa=N (per node, default 2, 1 for an odd
// device count), rack=R (nodes per rack, default 8), block=B (racks per
// block, default 16), memory=SIZE (per device, default 80GiB). Errors are "--generate: <item>:
// <reason>"; at most kMaxGeneratedDevices devices.
planner::Expected<planner::GeneratorSpec> ParseGenerateSpec(std::string_view text);

}  // namespace accel::plan

#endif  // ACCEL_TOOLS_ACCEL_PLAN_CLUSTER_INPUT_H_
