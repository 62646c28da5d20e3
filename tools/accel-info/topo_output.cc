// `accel-info topo`: the device matrix like `nvidia-smi topo -m`, and its
// JSON form (docs/accel-info.md, docs/accel-info-topo.schema.json).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "names.h"
#include "output.h"

namespace accel::info {
namespace {

using json = nlohmann::ordered_json;

// The schema `topo --json` follows; minor for additions, major for anything
// a consumer could trip on.
constexpr const char* kTopoSchemaVersion = "1.0";

std::string DeviceLabel(size_t i) { return fmt::format("DEV{}", i); }
std::string NicLabel(size_t k) { return fmt::format("NIC{}", k); }

std::string CpuAffinity(const accel_device_topology_t& t) {
  const std::string cpus = FixedString(t.local_cpus);
  return cpus.empty() ? "N/A" : cpus;
}

std::string NumaAffinity(int32_t numa_node) { return numa_node >= 0 ? fmt::format("{}", numa_node) : "N/A"; }

// Prints `rows` as columns, each as wide as its widest cell plus two spaces;
// the last column is not padded, and trailing blanks are trimmed.
void PrintColumns(const std::vector<std::vector<std::string>>& rows) {
  size_t columns = 0;
  for (const auto& row : rows) columns = std::max(columns, row.size());
  std::vector<size_t> widths(columns, 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += c + 1 == row.size() ? row[c] : fmt::format("{:<{}}  ", row[c], widths[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print("{}\n", line);
  }
}

std::string DomainList(const TopoDevice& device) {
  std::vector<std::string> items;
  for (const accel_domain_t& d : device.domains) items.push_back(LevelName(d.level) + "=" + FixedString(d.id));
  return items.empty() ? "-" : Join(items, ", ");
}

json LinkJson(const accel_device_link_t& link) {
  return {
      {"class", ClassName(link.link_class)}, {"short", LinkShortName(link)}, {"link_count", link.link_count},
      {"fabric", FixedString(link.fabric)},  {"bandwidth", link.bandwidth},  {"peer_access", link.peer_access != 0},
  };
}

}  // namespace

std::string ClassName(accel_link_class_t link_class) {
  const char* name = accel_link_class_name(link_class);
  return name != nullptr ? name : fmt::format("CLASS{}", static_cast<int>(link_class));
}

std::string LevelName(accel_domain_level_t level) {
  const char* name = accel_domain_level_name(level);
  return name != nullptr ? name : fmt::format("level{}", static_cast<int>(level));
}

std::string LinkShortName(const accel_device_link_t& link) {
  switch (link.link_class) {
    case ACCEL_LINK_CLASS_SELF: return "X";
    case ACCEL_LINK_CLASS_FABRIC: {
      // The fabric's leading letters, upper-cased, and the link count: NVLINK12, XGMI4; FAB<n> unnamed.
      std::string prefix;
      for (const char c : FixedString(link.fabric)) {
        if (std::isalpha(static_cast<unsigned char>(c)) == 0) break;
        prefix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      }
      return fmt::format("{}{}", prefix.empty() ? "FAB" : prefix, link.link_count);
    }
    case ACCEL_LINK_CLASS_PIX: return "PIX";
    case ACCEL_LINK_CLASS_PXB: return "PXB";
    case ACCEL_LINK_CLASS_PHB: return "PHB";
    case ACCEL_LINK_CLASS_NODE: return "NODE";
    case ACCEL_LINK_CLASS_SYS: return "SYS";
    case ACCEL_LINK_CLASS_HOST_STAGED: return "HOST";
    case ACCEL_LINK_CLASS_NONE: return "-";
    default: return "?";
  }
}

void PrintTopo(const TopoReport& report, bool hint_loader_debug) {
  if (report.devices.empty()) {
    PrintNoDevices(hint_loader_debug);
    return;
  }
  const size_t n = report.devices.size();
  const size_t m = report.nics.size();

  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{""};
  for (size_t j = 0; j < n; ++j) header.push_back(DeviceLabel(j));
  for (size_t k = 0; k < m; ++k) header.push_back(NicLabel(k));
  header.push_back("CPU Affinity");
  header.push_back("NUMA Affinity");
  rows.push_back(std::move(header));
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> row{DeviceLabel(i)};
    for (size_t j = 0; j < n; ++j) row.push_back(LinkShortName(report.links[i][j]));
    for (size_t k = 0; k < m; ++k) row.push_back(LinkShortName(report.nic_links[i][k]));
    row.push_back(CpuAffinity(report.devices[i].topology));
    row.push_back(NumaAffinity(report.devices[i].topology.numa_node));
    rows.push_back(std::move(row));
  }
  // NIC rows: the device columns mirror the device rows; NIC-to-NIC paths are
  // not part of the API, so only the diagonal is filled.
  for (size_t k = 0; k < m; ++k) {
    std::vector<std::string> row{NicLabel(k)};
    for (size_t j = 0; j < n; ++j) row.push_back(LinkShortName(report.nic_links[j][k]));
    for (size_t l = 0; l < m; ++l) row.push_back(l == k ? "X" : "");
    rows.push_back(std::move(row));
  }
  PrintColumns(rows);

  fmt::print(
      "\nLegend:\n\n"
      "  X      = Self: the same physical device\n"
      "  NAME#  = Connection through a bonded set of # device-fabric links, NAME the fabric (NVLINK, XGMI; FAB "
      "unnamed)\n"
      "  PIX    = Connection traversing at most a single PCIe bridge\n"
      "  PXB    = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
      "  PHB    = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  NODE   = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
      "  SYS    = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
      "  HOST   = No direct path: copies are staged through host memory (e.g. devices of different backends)\n"
      "  -      = No path\n"
      "  ?      = Unknown\n");
  if (m > 1) fmt::print("  NIC-to-NIC paths are not reported (blank).\n");

  fmt::print("\nDevice Legend:\n\n");
  for (size_t i = 0; i < n; ++i) {
    const TopoDevice& d = report.devices[i];
    const std::string bus = FixedString(d.topology.pci_bus_id);
    fmt::print("  {}: {} ({}: {}{})\n", DeviceLabel(i), d.stable_id, d.backend, d.name,
               bus.empty() ? std::string() : ", " + bus);
  }
  if (m > 0) {
    fmt::print("\nNIC Legend:\n\n");
    for (size_t k = 0; k < m; ++k) {
      const accel_nic_properties_t& nic = report.nics[k];
      const std::string kind = FixedString(nic.kind);
      const std::string bus = FixedString(nic.pci_bus_id);
      std::vector<std::string> details;
      if (!kind.empty()) details.push_back(kind);
      if (!bus.empty()) details.push_back(bus);
      details.push_back("NUMA " + NumaAffinity(nic.numa_node));
      fmt::print("  {}: {} ({})\n", NicLabel(k), FixedString(nic.name), Join(details, ", "));
    }
  }

  fmt::print("\nDomains (innermost first):\n\n");
  for (size_t i = 0; i < n; ++i) fmt::print("  {}: {}\n", DeviceLabel(i), DomainList(report.devices[i]));
}

json TopoJson(const TopoReport& report) {
  json devices = json::array();
  for (const TopoDevice& d : report.devices) {
    const accel_device_topology_t& t = d.topology;
    json domains = json::array();
    for (const accel_domain_t& domain : d.domains) {
      domains.push_back({{"level", LevelName(domain.level)}, {"id", FixedString(domain.id)}});
    }
    devices.push_back({
        {"index", d.index},
        {"stable_id", d.stable_id},
        {"name", d.name},
        {"backend", d.backend},
        {"pci_bus_id", FixedString(t.pci_bus_id)},
        {"pcie_root", FixedString(t.pcie_root)},
        {"numa_node", t.numa_node},
        {"local_cpus", FixedString(t.local_cpus)},
        {"local_cpu_count", t.local_cpu_count},
        {"nearest_nic", t.nearest_nic},
        {"domains", std::move(domains)},
    });
  }
  json links = json::array();
  for (const auto& row : report.links) {
    json cells = json::array();
    for (const accel_device_link_t& link : row) cells.push_back(LinkJson(link));
    links.push_back(std::move(cells));
  }
  json nics = json::array();
  for (size_t k = 0; k < report.nics.size(); ++k) {
    const accel_nic_properties_t& nic = report.nics[k];
    nics.push_back({
        {"index", k},
        {"name", FixedString(nic.name)},
        {"kind", FixedString(nic.kind)},
        {"pci_bus_id", FixedString(nic.pci_bus_id)},
        {"pcie_root", FixedString(nic.pcie_root)},
        {"numa_node", nic.numa_node},
    });
  }
  json nic_links = json::array();
  for (const auto& row : report.nic_links) {
    json cells = json::array();
    for (const accel_device_link_t& link : row) cells.push_back(LinkJson(link));
    nic_links.push_back(std::move(cells));
  }
  return {
      {"schema_version", kTopoSchemaVersion},
      {"devices", std::move(devices)},
      {"links", std::move(links)},
      {"nics", std::move(nics)},
      {"nic_links", std::move(nic_links)},
  };
}

void PrintTopoJson(const TopoReport& report) {
  fmt::print("{}\n", TopoJson(report).dump(2, ' ', false, json::error_handler_t::replace));
}

}  // namespace accel::info
