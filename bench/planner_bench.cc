// accel-plan-bench: the gang placement planner against a first-fit baseline
// on one seeded stream of gangs over a generated cluster, side by side
// (docs/planner.md, "Figures"). Prints figures; asserts nothing about time.
//
//   accel-plan-bench [--nodes N] [--devices-per-node D] [--rack NODES] [--fabric NODES] [--gangs G] [--seed S]
//   [--check]
//
// --check exits 1 (and prints "check: FAILED") unless the planner places at
// least as many multi-device gangs inside one clique as first fit does.
// --fabric NODES puts every NODES consecutive nodes in one clique spanning
// them (an NVL72 rack: --devices-per-node 4 --rack 18 --fabric 18).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cluster.h"
#include "first_fit.h"
#include "generator.h"
#include "planner.h"

namespace {

using namespace accel::planner;

struct Job {
  Gang gang;
  uint32_t size = 1;
  uint32_t life = 1;  // steps it holds its devices
};

struct Figures {
  double ms = 0;
  size_t placed = 0, multi = 0, clique_sized = 0, one_clique = 0, one_rack = 0;
};

template <typename P>
Figures Run(P& planner, const Cluster& cluster, const std::vector<Job>& jobs) {
  Figures f;
  using Expiry = std::pair<uint64_t, uint64_t>;  // (step, placement id)
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<>> live;
  std::vector<Placement> placements;
  placements.reserve(jobs.size());
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t step = 0; step < jobs.size(); ++step) {
    while (!live.empty() && live.top().first <= step) {
      (void)planner.Release(live.top().second);
      live.pop();
    }
    auto p = planner.Place(jobs[step].gang);
    if (!p) continue;
    live.emplace(step + jobs[step].life, p->id);
    placements.push_back(std::move(p.value()));
  }
  f.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  size_t clique_size = 0;
  for (const Domain& d : cluster.domains(Level::kClique)) clique_size = std::max(clique_size, d.devices.size());
  for (const Placement& p : placements) {
    ++f.placed;
    if (p.assignments.size() < 2) continue;
    ++f.multi;
    f.clique_sized += p.assignments.size() <= clique_size;
    bool clique = true, rack = true;
    const auto& first = cluster.devices()[p.assignments.front().device].domain;
    for (const Assignment& a : p.assignments) {
      const auto& d = cluster.devices()[a.device].domain;
      clique = clique && d[static_cast<size_t>(Level::kClique)] == first[static_cast<size_t>(Level::kClique)];
      rack = rack && d[static_cast<size_t>(Level::kRack)] == first[static_cast<size_t>(Level::kRack)];
    }
    f.one_clique += clique;
    f.one_rack += rack;
  }
  return f;
}

void Print(const char* name, const Figures& f, size_t gangs) {
  auto pct = [](size_t n, size_t of) { return of ? 100.0 * static_cast<double>(n) / static_cast<double>(of) : 0.0; };
  fmt::print(
      "{:<10} total_ms={:.1f} gangs_per_s={:.0f} placed={}/{} multi_device={} one_clique={} ({:.1f}%, "
      "{:.1f}% of the {} that fit a clique) one_rack={} ({:.1f}%)\n",
      name, f.ms, static_cast<double>(gangs) / (f.ms / 1000.0), f.placed, gangs, f.multi, f.one_clique,
      pct(f.one_clique, f.multi), pct(f.one_clique, f.clique_sized), f.clique_sized, f.one_rack,
      pct(f.one_rack, f.multi));
}

}  // namespace

int main(int argc, char** argv) {
  GeneratorSpec spec;
  size_t gangs = 10000;
  uint64_t seed = 1;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: missing value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--nodes") {
      spec.nodes = static_cast<uint32_t>(std::strtoul(next(), nullptr, 10));
    } else if (arg == "--devices-per-node") {
      spec.devices_per_node = static_cast<uint32_t>(std::strtoul(next(), nullptr, 10));
      spec.numa_per_node = std::min(spec.numa_per_node, std::max(1U, spec.devices_per_node));
    } else if (arg == "--rack") {
      spec.nodes_per_rack = static_cast<uint32_t>(std::strtoul(next(), nullptr, 10));
    } else if (arg == "--fabric") {
      spec.nodes_per_fabric = static_cast<uint32_t>(std::strtoul(next(), nullptr, 10));
    } else if (arg == "--gangs") {
      gangs = std::strtoull(next(), nullptr, 10);
    } else if (arg == "--seed") {
      seed = std::strtoull(next(), nullptr, 10);
    } else if (arg == "--check") {
      check = true;
    } else {
      std::fprintf(stderr,
                   "usage: accel-plan-bench [--nodes N] [--devices-per-node D] [--rack NODES] [--fabric NODES] "
                   "[--gangs G] [--seed S] [--check]\n");
      return 2;
    }
  }
  auto cluster = Cluster::Build(GenerateNodes(spec));
  if (!cluster) {
    std::fprintf(stderr, "%s\n", cluster.error().message.c_str());
    return 1;
  }
  const size_t devices = cluster->devices().size();
  // Gang sizes 1-64 (powers of two, small ones common); lifetimes keep the
  // cluster about 90% busy at steady state.
  const uint32_t sizes[] = {1, 2, 4, 8, 16, 32, 64};
  std::discrete_distribution<int> size_dist({30, 20, 20, 15, 8, 5, 2});
  double mean_size = 0;
  {
    const double w[] = {30, 20, 20, 15, 8, 5, 2};
    for (int k = 0; k < 7; ++k) mean_size += w[k] / 100.0 * sizes[k];
  }
  const auto mean_life = static_cast<uint32_t>(0.9 * static_cast<double>(devices) / mean_size) + 1;
  std::uniform_int_distribution<uint32_t> life_dist(1, 2 * mean_life);
  std::mt19937_64 rng(seed);
  std::vector<Job> jobs(gangs);
  for (Job& j : jobs) {
    j.size = sizes[size_dist(rng)];
    j.life = life_dist(rng);
    j.gang.bundles.assign(j.size, Bundle{});
    j.gang.strategy = Strategy::kPack;
    j.gang.level = Level::kClique;
  }
  fmt::print(
      "workload: nodes={} devices={} devices_per_node={} nodes_per_rack={} racks_per_block={} nodes_per_fabric={} "
      "gangs={} sizes=1-64 mean_life={} seed={} strategy=PACK level=clique (preferred: clique, node, rack, block)\n",
      spec.nodes, devices, spec.devices_per_node, spec.nodes_per_rack, spec.racks_per_block, spec.nodes_per_fabric,
      gangs, mean_life, seed);
  Planner planner(cluster.value());
  FirstFit first_fit(cluster.value());
  const Figures p = Run(planner, cluster.value(), jobs);
  const Figures f = Run(first_fit, cluster.value(), jobs);
  Print("planner", p, gangs);
  Print("first_fit", f, gangs);
  if (check) {
    const bool ok = p.one_clique >= f.one_clique;
    fmt::print("check: {}\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
  }
  return 0;
}
