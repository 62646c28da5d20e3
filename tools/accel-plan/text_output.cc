// The text report (output.h).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "names.h"
#include "output.h"

namespace accel::plan {
namespace {

using planner::Level;

constexpr size_t kListed = 4;  // domains named on a gang's line before "..."

std::string Plural(size_t n, const std::string& word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

// "1 clique", "2 numa domains", "8 pcie_roots".
std::string Domains(size_t n, Level level) {
  const std::string name(planner::LevelName(level));
  return Plural(n, level == Level::kNuma ? name + " domain" : name);
}

// "STRICT_PACK at clique", "STRICT_PACK at clique (preferred)".
std::string How(const planner::Gang& gang) {
  const bool strict =
      gang.strategy == planner::Strategy::kStrictPack || gang.strategy == planner::Strategy::kStrictSpread;
  return fmt::format("{} at {}{}", planner::StrategyName(gang.strategy), planner::LevelName(gang.level),
                     strict && !gang.required ? " (preferred)" : "");
}

// A domain in a table cell, beside its node's column: "nvl0" for "n0/nvl0",
// and "-" for an implicit one (a device without a clique, a node without a
// rack: a domain of its own, "n0/~gpu3", "~node:n0").
std::string Cell(const std::string& domain, const std::string& node) {
  std::string local = domain;
  if (domain.size() > node.size() && domain.compare(0, node.size(), node) == 0 && domain[node.size()] == '/') {
    local = domain.substr(node.size() + 1);
  }
  return local.empty() || local.front() == '~' ? "-" : local;
}

// Columns padded to their widest cell, two spaces apart, indented by two.
void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      line += " " + row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 1, ' ');
    }
    fmt::print("{}\n", line);
  }
}

// "8 devices", or "3 units on 2 devices" where units of different bundles share a device (assignments sorted by
// device, as a placement's are).
std::string UnitsOnDevices(const std::vector<planner::Assignment>& assignments) {
  size_t devices = 0;
  for (size_t i = 0; i < assignments.size(); ++i) {
    devices += i == 0 || assignments[i].device != assignments[i - 1].device;
  }
  return devices == assignments.size()
             ? Plural(devices, "device")
             : fmt::format("{} on {}", Plural(assignments.size(), "unit"), Plural(devices, "device"));
}

void PrintPlaced(const planner::Cluster& cluster, const GangRequest& request, const GangOutcome& outcome,
                 bool explain) {
  const Level level = request.gang.level;
  const std::vector<uint32_t> used = DomainsUsed(cluster, outcome.placement, level);
  std::string names;
  for (size_t i = 0; i < used.size() && i < kListed; ++i) {
    names += (i ? ", " : "") + cluster.domains(level)[used[i]].id;
  }
  if (used.size() > kListed) names += ", ...";
  const std::string what = UnitsOnDevices(outcome.placement.assignments);
  fmt::print("{}: placed, {}: {} in {}: {}\n", request.name, How(request.gang), what, Domains(used.size(), level),
             names);

  // The domain columns: the gang's level, or with `explain` every level but node (a column of its own).
  std::vector<Level> levels;
  for (Level l : planner::kAllLevels) {
    if (l != Level::kNode && (explain || l == level)) levels.push_back(l);
  }
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"rank", "node", "device", "bundle", "share", "memory"});
  for (Level l : levels) rows.front().emplace_back(planner::LevelName(l));
  for (const planner::Assignment& a : outcome.placement.assignments) {
    const planner::Device& d = cluster.devices()[a.device];
    std::vector<std::string> row = {fmt::format("{}", a.device),
                                    cluster.nodes()[d.node].id,
                                    d.id,
                                    fmt::format("{}", a.bundle),
                                    fmt::format("{:g}", ShareValue(a.share)),
                                    info::HumanBytes(a.memory)};
    for (Level l : levels)
      row.push_back(Cell(cluster.domains(l)[d.domain[static_cast<size_t>(l)]].id, cluster.nodes()[d.node].id));
    rows.push_back(std::move(row));
  }
  PrintTable(rows);
}

// --explain for a refused gang: the freest domains at its level when it was refused.
void PrintFreest(const planner::Cluster& cluster, const GangRequest& request, const GangOutcome& outcome) {
  const Level level = request.gang.level;
  std::string list;
  for (const DomainRoom& r : outcome.freest) {
    list += fmt::format("{}{} {:.2f} free on {}", list.empty() ? "" : ", ", cluster.domains(level)[r.domain].id,
                        ShareValue(r.free_share), Plural(r.devices_with_room, "device"));
  }
  if (outcome.domains_at_level > outcome.freest.size()) {
    list += fmt::format(", and {} more", outcome.domains_at_level - outcome.freest.size());
  }
  fmt::print("  freest {} of {}: {}\n", outcome.freest.size(), Domains(outcome.domains_at_level, level), list);
}

}  // namespace

void PrintText(const Report& report, bool explain) {
  const planner::Cluster& cluster = *report.cluster;
  std::string domains;
  for (Level l : planner::kAllLevels) {
    domains += fmt::format("{}{}", domains.empty() ? "" : ", ", Domains(cluster.domains(l).size(), l));
  }
  fmt::print("cluster {}: {}, {}; domains: {}\n", report.source, Plural(cluster.nodes().size(), "node"),
             Plural(cluster.devices().size(), "device"), domains);

  const std::vector<GangRequest>& gangs = *report.gangs;
  size_t placed = 0;
  for (size_t i = 0; i < gangs.size(); ++i) {
    const GangOutcome& o = report.outcome->gangs[i];
    fmt::print("\n");
    for (size_t earlier : o.released) {
      const GangOutcome& e = report.outcome->gangs[earlier];
      if (e.placed) {
        fmt::print("{}: released ({})\n", gangs[earlier].name, UnitsOnDevices(e.placement.assignments));
      } else {
        fmt::print("{}: released (it was refused: nothing held)\n", gangs[earlier].name);
      }
    }
    if (o.placed) {
      ++placed;
      PrintPlaced(cluster, gangs[i], o, explain);
    } else {
      fmt::print("{}: refused: {}\n", gangs[i].name, o.reason);
      if (explain) PrintFreest(cluster, gangs[i], o);
    }
  }
  const Usage usage = Summarise(cluster, *report.outcome);
  fmt::print("\n{}: {} placed, {} refused; {} of {} in use, {:.2f} of {} free\n", Plural(gangs.size(), "gang"), placed,
             gangs.size() - placed, usage.devices_in_use, Plural(cluster.devices().size(), "device"),
             ShareValue(usage.free_share), cluster.devices().size());
}

}  // namespace accel::plan
