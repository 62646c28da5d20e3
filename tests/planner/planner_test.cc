// The gang placement planner (docs/planner.md): known answers, atomicity,
// seeded property tests, bad input, and the cluster file.
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cluster_file.h"
#include "first_fit.h"
#include "generator.h"
#include "planner.h"

namespace {

using namespace accel::planner;

constexpr size_t At(Level l) { return static_cast<size_t>(l); }
constexpr uint64_t kGiB = uint64_t{1} << 30;

Cluster Build(std::vector<NodeSpec> nodes) {
  auto c = Cluster::Build(std::move(nodes));
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return std::move(c).value();
}

Cluster Generated(GeneratorSpec spec) { return Build(GenerateNodes(spec)); }

Gang Devices(uint32_t n, Strategy s, Level level, bool required = true) {
  Gang g;
  g.bundles.assign(n, Bundle{});
  g.strategy = s;
  g.level = level;
  g.required = required;
  return g;
}

std::set<uint32_t> DomainsOf(const Cluster& c, const Placement& p, Level level) {
  std::set<uint32_t> out;
  for (const Assignment& a : p.assignments) out.insert(c.devices()[a.device].domain[At(level)]);
  return out;
}

TEST(Planner, EightDeviceGangLandsInAFreeCliqueNotAcrossHalfUsedOnes) {
  // Node a: 16 devices in two 8-device cliques; node b: one 8-device clique.
  GeneratorSpec two{.nodes = 1, .devices_per_node = 16, .cliques_per_node = 2};
  std::vector<NodeSpec> nodes = GenerateNodes(two);
  nodes[0].id = "a";
  GeneratorSpec one{.nodes = 1, .devices_per_node = 8, .cliques_per_node = 1};
  nodes.push_back(GenerateNodes(one)[0]);
  nodes[1].id = "b";
  Cluster c = Build(nodes);
  // Half-use both cliques of node a: fill it with 16 one-device gangs, then
  // release every other one.
  auto half_use = [](auto& p) {
    std::vector<uint64_t> ids;
    for (int i = 0; i < 16; ++i) ids.push_back(p.Place(Devices(1, Strategy::kPack, Level::kClique)).value().id);
    for (size_t i = 0; i < ids.size(); i += 2) ASSERT_TRUE(p.Release(ids[i]).ok());
  };
  Planner planner(c);
  half_use(planner);
  auto p = planner.Place(Devices(8, Strategy::kPack, Level::kClique));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(DomainsOf(c, *p, Level::kClique).size(), 1u);
  EXPECT_EQ(c.nodes()[c.devices()[p->assignments[0].device].node].id, "b");
  // Rank order: node, clique, position.
  for (size_t i = 1; i < p->assignments.size(); ++i) EXPECT_LT(p->assignments[i - 1].device, p->assignments[i].device);
  // First fit takes node a's eight free devices, across both cliques.
  FirstFit ff(c);
  half_use(ff);
  auto f = ff.Place(Devices(8, Strategy::kPack, Level::kClique));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(DomainsOf(c, *f, Level::kClique).size(), 2u);
}

TEST(Planner, StrictSpreadAcrossNumaNodes) {
  Cluster c = Generated({.nodes = 1, .devices_per_node = 8, .numa_per_node = 2});
  Planner planner(c);
  auto p = planner.Place(Devices(2, Strategy::kStrictSpread, Level::kNuma));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(DomainsOf(c, *p, Level::kNuma).size(), 2u);
  auto bad = planner.Place(Devices(3, Strategy::kStrictSpread, Level::kNuma));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("STRICT_SPREAD at numa"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("3 distinct numa domains"), std::string::npos) << bad.error().message;
  // Preferred: falls back to SPREAD and places.
  auto soft = planner.Place(Devices(3, Strategy::kStrictSpread, Level::kNuma, /*required=*/false));
  ASSERT_TRUE(soft.ok()) << soft.error().message;
  EXPECT_EQ(DomainsOf(c, *soft, Level::kNuma).size(), 2u);
}

TEST(Planner, StrictPackAtRack) {
  Cluster c = Generated({.nodes = 4, .devices_per_node = 8, .nodes_per_rack = 2});  // two racks of 16
  Planner planner(c);
  ASSERT_TRUE(planner.Place(Devices(10, Strategy::kStrictPack, Level::kRack)).ok());
  auto p = planner.Place(Devices(16, Strategy::kStrictPack, Level::kRack));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(DomainsOf(c, *p, Level::kRack).size(), 1u);
  auto bad = planner.Place(Devices(7, Strategy::kStrictPack, Level::kRack));  // 6 free in the one rack left
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("STRICT_PACK at rack: no single rack can hold the gang (7 devices"),
            std::string::npos)
      << bad.error().message;
  EXPECT_NE(bad.error().message.find("the freest rack has 6.00 free"), std::string::npos) << bad.error().message;
}

TEST(Planner, FractionalSharesFillADeviceAndTheFifthDoesNotFit) {
  Cluster c = Generated({.nodes = 1, .devices_per_node = 1});
  Planner planner(c);
  Gang quarter;
  quarter.bundles = {Bundle{.devices = 1, .share = 0.25}};
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(planner.Place(quarter).ok()) << i;
  EXPECT_EQ(planner.free()[0].share, 0);
  auto fifth = planner.Place(quarter);
  ASSERT_FALSE(fifth.ok());
  EXPECT_NE(fifth.error().message.find("capacity"), std::string::npos) << fifth.error().message;
}

TEST(Planner, AReservedDeviceTakesNothingNewAndKeepsWhatIsReleasedThere) {
  Cluster c = Generated({.nodes = 1, .devices_per_node = 2});
  Planner planner(c);
  Gang quarter;
  quarter.bundles = {Bundle{.devices = 1, .share = 0.25, .memory = kGiB}};
  auto first = planner.Place(quarter);
  ASSERT_TRUE(first.ok());
  const uint32_t busy = first->assignments[0].device;
  const uint32_t other = 1 - busy;
  const std::vector<Free> before = planner.free();

  planner.Reserve(busy);
  EXPECT_TRUE(planner.reserved(busy));
  EXPECT_FALSE(planner.reserved(other));
  EXPECT_EQ(planner.free()[busy].share, 0);
  EXPECT_EQ(planner.free()[busy].memory, 0U);
  // New work goes only to the other device, until that is full too.
  for (int i = 0; i < 4; ++i) {
    auto p = planner.Place(quarter);
    ASSERT_TRUE(p.ok()) << i;
    EXPECT_EQ(p->assignments[0].device, other) << i;
  }
  EXPECT_FALSE(planner.Place(quarter).ok()) << "the reserved device's free 0.75 is set aside";
  // What the earlier placement releases on the reserved device is set aside as well.
  ASSERT_TRUE(planner.Release(first->id).ok());
  EXPECT_EQ(planner.free()[busy].share, 0);
  planner.Reserve(busy);  // again: no effect
  planner.Unreserve(busy);
  EXPECT_FALSE(planner.reserved(busy));
  EXPECT_EQ(planner.free()[busy].share, kShareUnits) << "all of it back: what was free and what was released";
  EXPECT_EQ(planner.free()[busy].memory, before[busy].memory + kGiB);
  planner.Unreserve(busy);  // not reserved: no effect
  EXPECT_EQ(planner.free()[busy].share, kShareUnits);

  // A reserved device that is lost gives nothing back.
  planner.Reserve(busy);
  planner.Disable(busy);
  planner.Unreserve(busy);
  EXPECT_EQ(planner.free()[busy].share, 0);
  EXPECT_EQ(planner.free()[busy].memory, 0U);
}

TEST(Planner, TheDevicesOfOneBundleAreDistinctWhateverTheirShares) {
  Cluster one = Generated({.nodes = 1, .devices_per_node = 1});
  Planner p1(one);
  Gang two_halves;
  two_halves.bundles = {Bundle{.devices = 2, .share = 0.5}};
  EXPECT_FALSE(p1.Place(two_halves).ok()) << "two devices cannot be one device twice";
  EXPECT_EQ(p1.free()[0].share, kShareUnits);
  Cluster two = Generated({.nodes = 1, .devices_per_node = 2});
  Planner p2(two);
  auto placed = p2.Place(two_halves);
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  ASSERT_EQ(placed->assignments.size(), 2U);
  EXPECT_NE(placed->assignments[0].device, placed->assignments[1].device);
  // Two bundles of one device each may share a device.
  Gang halves;
  halves.bundles = {Bundle{.devices = 1, .share = 0.5}, Bundle{.devices = 1, .share = 0.5}};
  auto shared = p1.Place(halves);
  ASSERT_TRUE(shared.ok()) << shared.error().message;
  EXPECT_EQ(shared->assignments[0].device, shared->assignments[1].device);
}

TEST(FirstFit, TheDevicesOfOneBundleAreDistinctToo) {
  // The baseline placed {devices: 2, share: 0.5} on one device twice.
  Cluster two = Generated({.nodes = 1, .devices_per_node = 2});
  FirstFit fit(two);
  Gang two_halves;
  two_halves.bundles = {Bundle{.devices = 2, .share = 0.5}};
  auto placed = fit.Place(two_halves);
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  ASSERT_EQ(placed->assignments.size(), 2U);
  EXPECT_NE(placed->assignments[0].device, placed->assignments[1].device);
  Cluster one = Generated({.nodes = 1, .devices_per_node = 1});
  FirstFit alone(one);
  EXPECT_FALSE(alone.Place(two_halves).ok()) << "two devices cannot be one device twice";
}

TEST(Planner, MemoryIsCapacityToo) {
  Cluster c = Generated({.nodes = 1, .devices_per_node = 2, .memory = 80 * kGiB});
  Planner planner(c);
  Gang g;
  g.bundles = {Bundle{.devices = 1, .share = 0.1, .memory = 50 * kGiB}};
  ASSERT_TRUE(planner.Place(g).ok());
  auto second = planner.Place(g);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->assignments[0].device, 1u);  // 30 GiB left on device 0: not enough
  auto third = planner.Place(g);
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.error().message.find("not on devices that fit every bundle"), std::string::npos)
      << third.error().message;
}

TEST(Planner, SelectorPicksDevices) {
  std::vector<NodeSpec> nodes = GenerateNodes({.nodes = 2, .devices_per_node = 2});
  for (auto& d : nodes[1].devices) d.attributes.Set("sku", std::string("big-gpu"));
  Cluster c = Build(nodes);
  Planner planner(c);
  Gang g;
  g.bundles = {Bundle{.devices = 2, .selector = "sku == big-gpu"}};
  auto p = planner.Place(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  for (const Assignment& a : p->assignments) EXPECT_EQ(c.devices()[a.device].node, 1u);
}

TEST(Planner, FailedGangHoldsNothing) {
  Cluster c = Generated({.nodes = 8, .devices_per_node = 8, .nodes_per_rack = 2});
  Planner planner(c);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20; ++i) {
    (void)planner.Place(Devices(1 + static_cast<uint32_t>(rng() % 6), Strategy::kPack, Level::kNode));
  }
  const std::vector<Free> before = planner.free();
  for (const Gang& g :
       {Devices(64, Strategy::kPack, Level::kNode), Devices(17, Strategy::kStrictPack, Level::kRack),
        Devices(9, Strategy::kStrictSpread, Level::kNode), Devices(60, Strategy::kSpread, Level::kNode)}) {
    auto p = planner.Place(g);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(planner.free(), before) << p.error().message;
  }
  FirstFit ff(c);
  const std::vector<Free> ff_before = ff.free();
  EXPECT_FALSE(ff.Place(Devices(65, Strategy::kPack, Level::kNode)).ok());
  EXPECT_EQ(ff.free(), ff_before);
}

TEST(Planner, RandomStreamsNeverOversubscribeNorBreakStrictConstraints) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    GeneratorSpec spec{.nodes = 1 + static_cast<uint32_t>(rng() % 12),
                       .devices_per_node = 1 + static_cast<uint32_t>(rng() % 8),
                       .cliques_per_node = 1 + static_cast<uint32_t>(rng() % 2),
                       .numa_per_node = 1 + static_cast<uint32_t>(rng() % 2),
                       .nodes_per_rack = 1 + static_cast<uint32_t>(rng() % 4),
                       .racks_per_block = 1 + static_cast<uint32_t>(rng() % 3),
                       // Every other seed: cliques spanning 1 to 3 nodes (fabric cliques).
                       .nodes_per_fabric = seed % 2 == 0 ? 1 + static_cast<uint32_t>(rng() % 3) : 0,
                       .memory = 16 * kGiB};
    Cluster c = Generated(spec);
    Planner planner(c);
    std::map<uint64_t, std::pair<Gang, Placement>> live;
    for (int step = 0; step < 400; ++step) {
      if (!live.empty() && rng() % 3 == 0) {
        auto it = live.begin();
        std::advance(it, static_cast<long>(rng() % live.size()));
        ASSERT_TRUE(planner.Release(it->first).ok());
        live.erase(it);
      } else {
        Gang g;
        const uint32_t bundles = 1 + static_cast<uint32_t>(rng() % 6);
        for (uint32_t b = 0; b < bundles; ++b) {
          const double shares[] = {0.25, 0.5, 1.0, 0.3};
          g.bundles.push_back(Bundle{.devices = 1 + static_cast<uint32_t>(rng() % 2),
                                     .share = shares[rng() % 4],
                                     .memory = (rng() % 3) * 4 * kGiB});
        }
        g.strategy = static_cast<Strategy>(rng() % 4);
        g.level = kAllLevels[rng() % kLevelCount];
        g.required = rng() % 4 != 0;
        const std::vector<Free> before = planner.free();
        auto p = planner.Place(g);
        if (!p.ok()) {
          ASSERT_EQ(planner.free(), before) << "seed " << seed << " step " << step;
          continue;
        }
        size_t units = 0;
        for (const Bundle& b : g.bundles) units += b.devices;
        ASSERT_EQ(p->assignments.size(), units);
        if (g.required && g.strategy == Strategy::kStrictPack) {
          ASSERT_EQ(DomainsOf(c, *p, g.level).size(), 1u) << "seed " << seed << " step " << step;
        }
        if (g.required && g.strategy == Strategy::kStrictSpread) {
          ASSERT_EQ(DomainsOf(c, *p, g.level).size(), units) << "seed " << seed << " step " << step;
        }
        live.emplace(p->id, std::make_pair(g, p.value()));
      }
      // Recompute use from the live placements: never above capacity, and
      // the planner's free capacity agrees.
      std::vector<int64_t> share(c.devices().size(), 0);
      std::vector<uint64_t> memory(c.devices().size(), 0);
      for (const auto& [id, gp] : live) {
        for (const Assignment& a : gp.second.assignments) {
          share[a.device] += a.share;
          memory[a.device] += a.memory;
        }
      }
      for (size_t d = 0; d < share.size(); ++d) {
        ASSERT_LE(share[d], kShareUnits) << "seed " << seed << " step " << step;
        ASSERT_LE(memory[d], c.devices()[d].memory);
        ASSERT_EQ(planner.free()[d], (Free{kShareUnits - share[d], c.devices()[d].memory - memory[d]}));
      }
    }
  }
}

// Cliques spanning nodes (docs/planner.md, "Model"): 36 nodes of 4 devices, two fabric cliques of 18 nodes (72
// devices each, as two NVL72 racks).
Cluster Nvl72Pair() {
  return Generated(
      {.nodes = 36, .devices_per_node = 4, .numa_per_node = 1, .nodes_per_rack = 18, .nodes_per_fabric = 18});
}

std::set<uint32_t> NodesOf(const Cluster& c, const Placement& p) {
  std::set<uint32_t> out;
  for (const Assignment& a : p.assignments) out.insert(c.devices()[a.device].node);
  return out;
}

TEST(Planner, AFabricCliqueHoldsAGangAcrossItsNodesOnAsFewNodesAsItCan) {
  Cluster c = Nvl72Pair();
  ASSERT_EQ(c.domains(Level::kClique).size(), 2u);
  EXPECT_EQ(c.domains(Level::kClique)[0].id, "f0");
  EXPECT_EQ(c.domains(Level::kClique)[0].devices.size(), 72u);
  EXPECT_EQ(c.domains(Level::kClique)[0].nodes.size(), 18u);
  Planner planner(c);
  auto big = planner.Place(Devices(64, Strategy::kStrictPack, Level::kClique));
  ASSERT_TRUE(big.ok()) << big.error().message;
  EXPECT_EQ(DomainsOf(c, *big, Level::kClique).size(), 1u) << "one NVLink domain";
  EXPECT_EQ(NodesOf(c, *big).size(), 16u) << "64 devices on 16 whole nodes of 4";
  // A second 64 cannot share the first fabric (8 left there): it takes the other one whole.
  auto second = planner.Place(Devices(64, Strategy::kStrictPack, Level::kClique));
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_NE(*DomainsOf(c, *second, Level::kClique).begin(), *DomainsOf(c, *big, Level::kClique).begin());
  // A third does not fit any fabric clique whole.
  auto third = planner.Place(Devices(64, Strategy::kStrictPack, Level::kClique));
  EXPECT_FALSE(third.ok());
}

TEST(Planner, ANodeInsideAFabricCliqueIsStillANode) {
  Cluster c = Nvl72Pair();
  Planner planner(c);
  // Two devices of the first node taken: its 2 free devices and the next node's 4 are all in one fabric clique.
  auto pair = planner.Place(Devices(2, Strategy::kStrictPack, Level::kNode));
  ASSERT_TRUE(pair.ok()) << pair.error().message;
  auto four = planner.Place(Devices(4, Strategy::kStrictPack, Level::kNode));
  ASSERT_TRUE(four.ok()) << four.error().message;
  EXPECT_EQ(NodesOf(c, *four).size(), 1u) << "STRICT_PACK at node: one node, though its clique spans 18";
  // Best fit inside the fabric: two more devices go to the half-used node, not to a fresh one.
  auto two = planner.Place(Devices(2, Strategy::kPack, Level::kClique));
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(NodesOf(c, *two), NodesOf(c, *pair));
}

TEST(Planner, StrictSpreadCountsAFabricCliqueOnce) {
  Cluster c = Nvl72Pair();
  Planner planner(c);
  auto two = planner.Place(Devices(2, Strategy::kStrictSpread, Level::kClique));
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(DomainsOf(c, *two, Level::kClique).size(), 2u);
  const std::vector<Free> before = planner.free();
  EXPECT_FALSE(planner.Place(Devices(3, Strategy::kStrictSpread, Level::kClique)).ok()) << "only two cliques";
  EXPECT_EQ(planner.free(), before);
}

TEST(Planner, BadInputIsAClearError) {
  Cluster c = Generated({.nodes = 1});
  Planner planner(c);
  const std::vector<Free> before = planner.free();
  auto expect = [&](const Gang& g, const std::string& message) {
    auto p = planner.Place(g);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().message, message);
  };
  expect(Gang{}, "bundles: the gang has no bundles");
  expect(Gang{.bundles = {Bundle{}, Bundle{.devices = 0}}}, "bundles[1].devices: zero devices (must be at least 1)");
  expect(Gang{.bundles = {Bundle{.share = std::nan("")}}}, "bundles[0].share: NaN (must be in (0, 1])");
  expect(Gang{.bundles = {Bundle{.share = -0.5}}}, "bundles[0].share: -0.5 is out of range (must be in (0, 1])");
  expect(Gang{.bundles = {Bundle{.share = 0.0}}}, "bundles[0].share: 0 is out of range (must be in (0, 1])");
  expect(Gang{.bundles = {Bundle{.share = 1.5}}}, "bundles[0].share: 1.5 is out of range (must be in (0, 1])");
  auto sel = planner.Place(Gang{.bundles = {Bundle{.selector = "mem >= "}}});
  ASSERT_FALSE(sel.ok());
  EXPECT_EQ(sel.error().message.rfind("bundles[0].selector: column", 0), 0u) << sel.error().message;
  EXPECT_EQ(planner.free(), before);
  EXPECT_FALSE(planner.Release(12345).ok());
}

TEST(ClusterFile, ParsesNodesWithDomains) {
  const char* text = R"({"format_version": "1.0", "nodes": [
    {"format_version": "1.0", "node": {"id": "n0", "domain": "r1"},
     "domains": [{"level": "rack", "id": "r1", "parent": "b1"}, {"level": "block", "id": "b1"}],
     "devices": [{"id": "gpu0", "kind": "gpu", "name": "G", "vendor": "V", "sku": "s", "memory": 1024,
                  "compute_units": 4, "clique": "c0", "numa_node": 1, "features": ["peer-access"]}]},
    {"format_version": "1.0", "node": {"id": "n1"},
     "devices": [{"id": "gpu0", "kind": "gpu", "name": "G", "vendor": "V", "sku": "t", "memory": 2048,
                  "compute_units": 4}]}]})";
  auto c = ParseCluster(text, "c.json");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->devices().size(), 2u);
  EXPECT_EQ(c->domains(Level::kRack)[c->devices()[0].domain[At(Level::kRack)]].id, "r1");
  EXPECT_EQ(c->domains(Level::kBlock)[c->devices()[0].domain[At(Level::kBlock)]].id, "b1");
  EXPECT_EQ(c->domains(Level::kClique)[c->devices()[0].domain[At(Level::kClique)]].id, "n0/c0");
  Planner planner(c.value());
  Gang g{.bundles = {Bundle{.selector = "sku == t && mem >= 2KiB"}}};
  auto p = planner.Place(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->assignments[0].device, 1u);
}

TEST(ClusterFile, ANodeLevelCliqueDomainJoinsNodesInOneFabricClique) {
  auto node = [](const char* id, const char* fabric) {
    return fmt::format(R"({{"format_version": "1.0", "node": {{"id": "{}"}},
     "domains": [{{"level": "clique", "id": "{}"}}, {{"level": "rack", "id": "r0"}}],
     "devices": [{{"id": "gpu0", "kind": "gpu", "name": "G", "vendor": "V", "sku": "s", "memory": 1024,
                  "compute_units": 4, "clique": "nvl0"}},
                 {{"id": "gpu1", "kind": "gpu", "name": "G", "vendor": "V", "sku": "s", "memory": 1024,
                  "compute_units": 4}}]}})",
                       id, fabric);
  };
  const std::string text =
      R"({"format_version": "1.0", "nodes": [)" + node("t0", "nvl72-a") + "," + node("t1", "nvl72-a") + "]}";
  auto c = ParseCluster(text, "c.json");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const auto clique = [&](size_t rank) {
    return c->domains(Level::kClique)[c->devices()[rank].domain[At(Level::kClique)]];
  };
  // Ranks: t0/gpu1 (no clique: its own) sorts before t0/gpu0 ("" < "nvl0"); the same in t1.
  EXPECT_EQ(clique(1).id, "nvl72-a");
  EXPECT_EQ(clique(3).id, "nvl72-a");
  EXPECT_EQ(clique(1).devices.size(), 2u) << "one device of each node";
  EXPECT_EQ(clique(0).id, "t0/~gpu1") << "a device without a clique stays on its own";
  const std::string bad = R"({"format_version": "1.0", "nodes": [)" + node("t0", "a/b") + "]}";
  auto err = ParseCluster(bad, "c.json");
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("nodes[0].fabric_clique: 'a/b' has a '/'"), std::string::npos)
      << err.error().message;
}

TEST(ClusterFile, DomainsOfDifferentNodesNeverMergeByTheirIds) {
  // Domain ids were node-qualified by joining with '/' and made-up ones marked with '~': node "a/b" with clique "c"
  // and node "a" with clique "b/c" made one clique, and a rack named "~node:n1" was node n1's own rack; a STRICT_PACK
  // gang was then placed across two nodes.
  auto device = [](const char* clique) {
    return fmt::format(R"({{"id": "g", "kind": "gpu", "name": "G", "vendor": "V", "sku": "s", "memory": 1024,
                        "compute_units": 1, "clique": "{}"}})",
                       clique);
  };
  const std::string cliques = R"({"format_version": "1.0", "nodes": [
      {"format_version": "1.0", "node": {"id": "a/b"}, "devices": [)" +
                              device("c") + R"(]},
      {"format_version": "1.0", "node": {"id": "a"}, "devices": [)" +
                              device("b/c") + R"(]}]})";
  // The two devices are in different domains at `level`, and a STRICT_PACK gang of both is refused there.
  auto expect_apart = [](const std::string& json, Level level) {
    auto cluster = ParseCluster(json, "c.json");
    ASSERT_TRUE(cluster.ok()) << cluster.error().message;
    EXPECT_NE(cluster->devices()[0].domain[At(level)], cluster->devices()[1].domain[At(level)]);
    EXPECT_FALSE(Planner(cluster.value()).Place(Devices(2, Strategy::kStrictPack, level)).ok());
  };
  expect_apart(cliques, Level::kClique);

  const std::string racks = R"({"format_version": "1.0", "nodes": [
      {"format_version": "1.0", "node": {"id": "n0"}, "domains": [{"level": "rack", "id": "~node:n1"}],
       "devices": [)" + device("x") +
                            R"(]},
      {"format_version": "1.0", "node": {"id": "n1"}, "devices": [)" +
                            device("x") + R"(]}]})";
  expect_apart(racks, Level::kRack);
}

TEST(ClusterFile, MalformedInputNamesTheField) {
  auto err = [](const std::string& text) {
    auto c = ParseCluster(text, "c.json");
    return c.ok() ? std::string("(parsed)") : c.error().message;
  };
  EXPECT_EQ(err("{").rfind("c.json: not valid JSON: ", 0), 0u) << err("{");
  // A number past a double is the JSON library's out_of_range, not a parse error: still an error, never an abort.
  EXPECT_EQ(err(R"({"format_version": "1.0", "nodes": [1e999]})").rfind("c.json: not valid JSON: ", 0), 0u)
      << err(R"({"nodes": [1e999]})");
  EXPECT_EQ(err(R"({"nodes": []})"), "c.json: format_version: missing (required)");
  EXPECT_EQ(err(R"({"format_version": "2.0", "nodes": []})"), "c.json: format_version: '2.0' is not 1.x");
  EXPECT_EQ(err(R"({"format_version": "1.0"})"), "c.json: nodes: missing (required)");
  const std::string node = R"({"format_version": "1.0", "node": {"id": "n0"}, "devices": [{"id": "gpu0",
      "kind": "gpu", "name": "G", "vendor": "V", "sku": "s", "compute_units": 1}]})";
  EXPECT_EQ(err(R"({"format_version": "1.0", "nodes": [)" + node + "]}"),
            "c.json: nodes[0].devices[0].memory: missing (required)");
  EXPECT_EQ(err(R"({"format_version": "1.0", "nodes": [{"format_version": "1.0", "devices": [{"id": "g",
      "kind": "gpu", "name": "G", "vendor": "V", "sku": "s", "compute_units": 1, "memory": "80GB"}]}]})"),
            "c.json: nodes[0].devices[0].memory: expected an unsigned integer, got a string");
  const std::string ok = R"({"format_version": "1.0", "node": {"id": "n0"}, "devices": [{"id": "gpu0",
      "kind": "gpu", "name": "G", "vendor": "V", "sku": "s", "compute_units": 1, "memory": 1}]})";
  EXPECT_EQ(err(R"({"format_version": "1.0", "nodes": [)" + ok + "," + ok + "]}"),
            "c.json: nodes[1].id: duplicate 'n0' (also nodes[0])");
  // An empty domain id and a level given twice were ignored or overwritten; a NUMA node past int64 was -1.
  const std::string devices = R"("devices": [{"id": "gpu0", "kind": "gpu", "name": "G", "vendor": "V", "sku": "s",
      "compute_units": 1, "memory": 1}])";
  EXPECT_EQ(err(R"({"format_version": "1.0", "nodes": [{"format_version": "1.0", "domains": [{"level": "rack",
      "id": ""}], )" +
                devices + "}]}"),
            "c.json: nodes[0].domains[0].id: empty");
  EXPECT_EQ(err(R"({"format_version": "1.0", "nodes": [{"format_version": "1.0", "domains": [{"level": "rack",
      "id": "r1"}, {"level": "rack", "id": "r2"}], )" +
                devices + "}]}"),
            "c.json: nodes[0].domains[1].level: 'rack' is given twice for this node");
  EXPECT_EQ(err(R"({"format_version": "1.0", "nodes": [{"format_version": "1.0", "devices": [{"id": "g",
      "kind": "gpu", "name": "G", "vendor": "V", "sku": "s", "compute_units": 1, "memory": 1,
      "numa_node": 18446744073709551615}]}]})"),
            "c.json: nodes[0].devices[0].numa_node: 18446744073709551615 is outside -1..65535");
}

TEST(ClusterFile, LoadsASimProfileAsAOneNodeCluster) {
  auto c = LoadCluster(std::string(ACCEL_TEST_SOURCE_DIR) + "/backends/sim/profiles/h100-sxm-8.json");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->devices().size(), 8u);
  EXPECT_EQ(c->nodes()[0].id, "sim-h100-sxm-8");
  EXPECT_EQ(c->domains(Level::kClique).size(), 1u);  // one NVLink clique
  EXPECT_EQ(c->domains(Level::kNuma).size(), 2u);
  Planner planner(c.value());
  auto p = planner.Place(Gang{.bundles = {Bundle{.devices = 8, .selector = "sku == nvidia-h100-sxm5-80gb && fp8"}},
                              .strategy = Strategy::kStrictPack,
                              .level = Level::kClique});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->assignments.size(), 8u);
  planner.Release(p->id).value();
  auto spread = planner.Place(Devices(2, Strategy::kStrictSpread, Level::kNuma));
  ASSERT_TRUE(spread.ok()) << spread.error().message;
  EXPECT_EQ(DomainsOf(c.value(), *spread, Level::kNuma).size(), 2u);
}

}  // namespace
