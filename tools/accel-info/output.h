// The output formats of accel-info: each prints one Report to stdout
// (docs/accel-info.md describes them). Called from one thread.
#ifndef ACCEL_TOOLS_ACCEL_INFO_OUTPUT_H_
#define ACCEL_TOOLS_ACCEL_INFO_OUTPUT_H_

#include <nlohmann/json.hpp>
#include <string>

#include "report.h"

namespace accel::info {

// Default: one line per physical device. When `hint_loader_debug` is set, a
// report without devices (or with failed backends) ends with a hint to run
// --loader-debug.
void PrintTable(const Report& report, bool hint_loader_debug);

// -v: every physical device, each access path, and every capability key.
void PrintVerbose(const Report& report, bool hint_loader_debug);

// One line on stderr per setting warning ("accel-info: warning: ACCEL_BACKENDS=h0st: ..."), whatever the output
// format: an override that named nothing is visible without ACCEL_LOG.
void PrintSettingWarnings(const std::vector<LoaderWarning>& warnings);

// --loader-debug: one block per loader entry, then the setting warnings.
void PrintLoaderReport(const Report& report);

// --json: one JSON document (docs/accel-info.schema.json), with `topology`
// (TopologyDescription) as its "topology" member. ReportJson builds it,
// PrintJson prints it.
nlohmann::ordered_json ReportJson(const Report& report, const nlohmann::ordered_json& topology);
void PrintJson(const Report& report, const nlohmann::ordered_json& topology);

// The node's topology description (docs/topology.md): the sim backend's
// profile format, so that it can be read back as ACCEL_SIM_PROFILE.
nlohmann::ordered_json TopologyDescription(const Report& report, const TopoReport& topo);

// `accel-info export`'s options (docs/exports.md).
struct ExportOptions {
  std::string format;     // nfd, dra or ray
  std::string node_name;  // --node-name; empty: the host name (dra), the topology's node (ray)
  std::string host_name;  // this machine's name
  bool json = false;      // --json (ray): the resources, labels and environment as one JSON document
};

// `export --format nfd|dra|ray`. Returns 1 for an unknown format.
int PrintExport(const ExportOptions& options, const Report& report, const TopoReport& topo);

// `profiles`: the sim backend's shipped profiles found under `dir`, one per
// line with its description. Returns how many.
int PrintProfiles(const std::string& dir);

// The shipped profiles' folder, next to this program: <bin>/../share/accel/sim/profiles.
std::string ShippedProfileDir();

// The text form of one capability value, as -v prints it.
std::string TextValue(const Capability& capability);

// The line printed when no device is visible.
void PrintNoDevices(bool hint_loader_debug);

// A line saying how many backend devices ACCEL_VISIBLE_DEVICES hid, if any.
void PrintHiddenDevices(const Report& report);

// `topo`: the device (and NIC) matrix like `nvidia-smi topo -m`, CPU and
// NUMA affinity, the legends and each device's domains (docs/topology.md).
void PrintTopo(const TopoReport& report, bool hint_loader_debug);

// `topo --json`: one JSON document (docs/accel-info-topo.schema.json);
// TopoJson builds it, PrintTopoJson prints it.
nlohmann::ordered_json TopoJson(const TopoReport& report);
void PrintTopoJson(const TopoReport& report);

// The short form of a link class in the matrix: X, NVLINK12 (FABRIC: the
// fabric's leading letters and the link count; FAB<n> unnamed), PIX, PXB,
// PHB, NODE, SYS, HOST (HOST_STAGED), - (NONE), ? (unknown).
std::string LinkShortName(const accel_device_link_t& link);

// A link class's or domain level's name ("PIX", "rack"), or "CLASS<n>" / "level<n>" for a value this build does not
// name (accel_link_class_name and accel_domain_level_name return NULL there, which std::string cannot take).
std::string ClassName(accel_link_class_t link_class);
std::string LevelName(accel_domain_level_t level);

}  // namespace accel::info

#endif  // ACCEL_TOOLS_ACCEL_INFO_OUTPUT_H_
