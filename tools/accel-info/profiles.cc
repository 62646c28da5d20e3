// `accel-info profiles`: the sim backend's shipped profiles, each with its
// description, as found next to this program (docs/sim.md).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "output.h"

namespace accel::info {

std::string ShippedProfileDir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return (self.parent_path().parent_path() / "share/accel/sim/profiles").string();
}

int PrintProfiles(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    fmt::print("No shipped sim profiles in {}.\n", dir);
    return 0;
  }
  size_t width = 0;
  for (const auto& f : files) width = std::max(width, f.stem().string().size());
  fmt::print("Shipped sim profiles ({}); use one with ACCEL_SIM_PROFILE=<name> or --sim-profile <name>:\n\n", dir);
  for (const auto& f : files) {
    std::string description;
    std::ifstream in(f);
    // allow_exceptions=false still throws out_of_range for a number too large for any type.
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(in, nullptr, false);
    } catch (const nlohmann::json::exception&) {
      doc = nlohmann::json(nlohmann::json::value_t::discarded);
    }
    if (doc.is_object() && doc.contains("description") && doc["description"].is_string()) {
      description = doc["description"].get<std::string>();
    }
    fmt::print("  {:<{}}  {}\n", f.stem().string(), width, description);
  }
  return static_cast<int>(files.size());
}

}  // namespace accel::info
