// The --json document (output.h); its fields are described in docs/planner.md, "CLI".
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "output.h"

namespace accel::plan {

using json = nlohmann::ordered_json;
using planner::Level;

namespace {

json DomainCounts(const planner::Cluster& cluster) {
  json counts = json::object();
  for (Level l : planner::kAllLevels) counts[std::string(planner::LevelName(l))] = cluster.domains(l).size();
  return counts;
}

json Gang(const planner::Cluster& cluster, const std::vector<GangRequest>& gangs, size_t index,
          const GangOutcome& outcome) {
  const GangRequest& request = gangs[index];
  json g;
  g["name"] = request.name;
  g["strategy"] = std::string(planner::StrategyName(request.gang.strategy));
  g["level"] = std::string(planner::LevelName(request.gang.level));
  g["required"] = request.gang.required;
  json released = json::array();
  for (size_t earlier : outcome.released) released.push_back(gangs[earlier].name);
  g["released"] = std::move(released);
  g["placed"] = outcome.placed;
  g["reason"] = outcome.placed ? json(nullptr) : json(outcome.reason);
  json used = json::array();
  json devices = json::array();
  if (outcome.placed) {
    for (uint32_t d : DomainsUsed(cluster, outcome.placement, request.gang.level)) {
      used.push_back(cluster.domains(request.gang.level)[d].id);
    }
    for (const planner::Assignment& a : outcome.placement.assignments) {
      const planner::Device& d = cluster.devices()[a.device];
      json domains = json::object();
      for (Level l : planner::kAllLevels) {
        domains[std::string(planner::LevelName(l))] = cluster.domains(l)[d.domain[static_cast<size_t>(l)]].id;
      }
      devices.push_back(json{{"rank", a.device},
                             {"node", cluster.nodes()[d.node].id},
                             {"device", d.id},
                             {"bundle", a.bundle},
                             {"share", ShareValue(a.share)},
                             {"memory", a.memory},
                             {"domains", std::move(domains)}});
    }
  }
  g["level_domains"] = std::move(used);
  g["devices"] = std::move(devices);
  json freest = json::array();
  for (const DomainRoom& r : outcome.freest) {
    freest.push_back(json{{"domain", cluster.domains(request.gang.level)[r.domain].id},
                          {"free_share", ShareValue(r.free_share)},
                          {"devices_with_room", r.devices_with_room}});
  }
  g["freest"] = std::move(freest);
  return g;
}

}  // namespace

void PrintJson(const Report& report) {
  const planner::Cluster& cluster = *report.cluster;
  json doc;
  doc["format_version"] = "1.0";
  doc["cluster"] = json{{"source", report.source},
                        {"nodes", cluster.nodes().size()},
                        {"devices", cluster.devices().size()},
                        {"domains", DomainCounts(cluster)}};
  json gangs = json::array();
  size_t placed = 0;
  for (size_t i = 0; i < report.gangs->size(); ++i) {
    const GangOutcome& o = report.outcome->gangs[i];
    placed += o.placed;
    gangs.push_back(Gang(cluster, *report.gangs, i, o));
  }
  doc["gangs"] = std::move(gangs);
  const Usage usage = Summarise(cluster, *report.outcome);
  doc["summary"] = json{{"gangs", report.gangs->size()},
                        {"placed", placed},
                        {"refused", report.gangs->size() - placed},
                        {"devices_in_use", usage.devices_in_use},
                        {"free_share", ShareValue(usage.free_share)}};
  fmt::print("{}\n", doc.dump(2, ' ', false, json::error_handler_t::replace));
}

}  // namespace accel::plan
