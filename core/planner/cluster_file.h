// The cluster file (docs/planner.md, "Cluster file"): {"format_version":
// "1.0", "nodes": [<topology description>, ...]}, each node as
// docs/topology.md defines it. Pure functions of the text: thread-safe.
#ifndef ACCEL_CORE_PLANNER_CLUSTER_FILE_H_
#define ACCEL_CORE_PLANNER_CLUSTER_FILE_H_

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "cluster.h"

namespace accel::planner {

// Parses a cluster file, or a single topology description as a one-node
// cluster. Errors are "<source>: <field>: <reason>":
// "c.json: nodes[2].devices[0].memory: missing (required)".
Expected<Cluster> ParseCluster(std::string_view text, std::string_view source);
// The same from a document parsed already (accel-plan's, for the "topology" member of an `accel-info --json`
// document: never serialized again, which recursed once per nesting level and overflowed the stack).
Expected<Cluster> ParseClusterDocument(const nlohmann::json& doc, std::string_view source);
// Reads and parses the file at `path`.
Expected<Cluster> LoadCluster(const std::string& path);

}  // namespace accel::planner

#endif  // ACCEL_CORE_PLANNER_CLUSTER_FILE_H_
