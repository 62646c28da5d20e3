// Loading and checking expectations files; sha256 of files.
#include "expectations.h"

#include <fnmatch.h>
#include <openssl/evp.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "names.h"

namespace accel::conformance {
namespace {

bool Matches(const std::string& pattern, const std::string& id) { return fnmatch(pattern.c_str(), id.c_str(), 0) == 0; }

// Whether `device` reports `capability` present; nullopt for an unknown name.
std::optional<bool> HasCapability(const DeviceUnderTest& device, const std::string& capability) {
  const auto colon = capability.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const std::string kind = capability.substr(0, colon);
  const std::string name = capability.substr(colon + 1);
  std::span<const accel::info::FlagName> table;
  uint64_t bits = 0;
  if (kind == "feature") {
    table = accel::info::DeviceFeatureNames();
    bits = device.caps.features;
  } else if (kind == "kernel-format") {
    table = accel::info::KernelFormatNames();
    bits = device.caps.kernel_formats;
  } else if (kind == "numeric-format") {
    table = accel::info::NumericFormatNames();
    bits = device.caps.numeric_formats;
  } else {
    return std::nullopt;
  }
  for (const auto& f : table) {
    if (name == f.name) return (bits & f.bit) != 0;
  }
  return std::nullopt;
}

}  // namespace

const Expectations::Unsupported* Expectations::FindUnsupported(const std::string& id) const {
  for (const auto& u : unsupported) {
    if (Matches(u.test, id)) return &u;
  }
  return nullptr;
}

const Expectations::ExpectedFailure* Expectations::FindExpectedFailure(const std::string& id) const {
  for (const auto& x : expected_failures) {
    if (Matches(x.test, id)) return &x;
  }
  return nullptr;
}

std::optional<std::string> LoadExpectations(const std::string& path, const std::vector<std::string>& case_ids,
                                            const Target& target, Expectations* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot be read";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (auto error = ParseExpectations(text, path, case_ids, target, out)) return error;
  out->sha256 = Sha256File(path);
  return std::nullopt;
}

std::optional<std::string> ParseExpectations(std::string_view contents, const std::string& path,
                                             const std::vector<std::string>& case_ids, const Target& target,
                                             Expectations* out) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(contents);
  } catch (const nlohmann::json::exception& e) {
    return path + ": not JSON: " + e.what();
  }
  if (!doc.is_object()) return path + ": the top level must be an object";
  for (const auto& [key, value] : doc.items()) {
    if (key != "unsupported" && key != "expected-failure" && key != "$comment") {
      return path + ": unknown member '" + key + "' (expected 'unsupported' and 'expected-failure')";
    }
    if (key != "$comment" && !value.is_array()) return path + ": '" + key + "' must be an array";
  }
  out->path = path;
  auto text = [&](const nlohmann::json& entry, const std::string& where, const char* field,
                  std::string* value) -> std::optional<std::string> {
    if (!entry.contains(field) || !entry[field].is_string() || entry[field].get<std::string>().empty()) {
      return path + ": " + where + " needs a non-empty string '" + field + "'";
    }
    *value = entry[field].get<std::string>();
    return std::nullopt;
  };
  auto names_a_test = [&](const std::string& pattern) {
    for (const auto& id : case_ids) {
      if (Matches(pattern, id)) return true;
    }
    return false;
  };
  if (doc.contains("unsupported")) {
    for (size_t i = 0; i < doc["unsupported"].size(); ++i) {
      const auto& entry = doc["unsupported"][i];
      const std::string where = "unsupported[" + std::to_string(i) + "]";
      if (!entry.is_object()) return path + ": " + where + " must be an object";
      Expectations::Unsupported u;
      if (auto e = text(entry, where, "test", &u.test)) return e;
      if (auto e = text(entry, where, "capability", &u.capability)) return e;
      if (auto e = text(entry, where, "reason", &u.reason)) return e;
      if (!names_a_test(u.test)) return path + ": " + where + " names no test of the suite: '" + u.test + "'";
      for (uint32_t d : target.selected) {
        const DeviceUnderTest& dut = target.all_devices[d];
        const auto has = HasCapability(dut, u.capability);
        if (!has) {
          return path + ": " + where + " names an unknown capability '" + u.capability +
                 "' (use feature:<name>, kernel-format:<name> or numeric-format:<name>, as accel-info prints them)";
        }
        if (*has) {
          return path + ": " + where + " marks '" + u.test + "' unsupported for want of capability '" + u.capability +
                 "', but " + dut.label +
                 " reports it present: an unsupported entry may only name a capability the device lacks";
        }
      }
      out->unsupported.push_back(std::move(u));
    }
  }
  if (doc.contains("expected-failure")) {
    for (size_t i = 0; i < doc["expected-failure"].size(); ++i) {
      const auto& entry = doc["expected-failure"][i];
      const std::string where = "expected-failure[" + std::to_string(i) + "]";
      if (!entry.is_object()) return path + ": " + where + " must be an object";
      Expectations::ExpectedFailure x;
      if (auto e = text(entry, where, "test", &x.test)) return e;
      if (auto e = text(entry, where, "reason", &x.reason)) return e;
      if (!names_a_test(x.test)) return path + ": " + where + " names no test of the suite: '" + x.test + "'";
      out->expected_failures.push_back(std::move(x));
    }
  }
  return std::nullopt;
}

std::string Sha256File(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (ctx == nullptr) return "";
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  char chunk[65536];
  while (in) {
    in.read(chunk, sizeof(chunk));
    if (in.gcount() > 0) EVP_DigestUpdate(ctx, chunk, static_cast<size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx, digest, &length);
  EVP_MD_CTX_free(ctx);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 15]);
  }
  return hex;
}

}  // namespace accel::conformance
