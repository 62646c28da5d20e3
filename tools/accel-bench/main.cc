// accel-bench: per device and backend, the latency of a tiny kernel launched
// and waited for, back-to-back launch throughput, and host-to-device,
// device-to-host and device-to-device copy bandwidth at several sizes
// (docs/accel-bench.md). With --native, the same work runs through the
// backend's native API in the same process, interleaved with Accel's (A/B), and
// the Accel/native ratios are printed with their spread; every row also
// shows the thread hand-off baseline (handoff.cc), interleaved too, and copies
// are set against host memcpy. Figures, never pass/fail: the exit code only
// says whether the benchmarks could run.
//
//   accel-bench [--backends host,opencl] [--device N]... [--native] [--sizes 4K,1M,16M,256M]
//               [--repetitions N] [--order interleaved|blocks] [--json FILE] [--corpus DIR]
#include <accel/accel.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "bench.h"
#include "json_file.h"
#include "names.h"

namespace accel::bench {

namespace {

struct Options {
  std::string backends;
  std::vector<uint32_t> devices;
  bool native = false;
  std::string sizes = "4K,1M,16M,256M";
  int repetitions = 0;  // 0: per benchmark defaults
  bool blocks = false;  // --order blocks: each path's repetitions in a row, not interleaved
  std::string json;
  std::string corpus;
};

std::optional<uint64_t> ParseSize(std::string s) {
  uint64_t scale = 1;
  if (!s.empty()) {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
    if (u == 'K' || u == 'M' || u == 'G') {
      scale = u == 'K' ? 1024 : u == 'M' ? 1024 * 1024 : uint64_t{1024} * 1024 * 1024;
      s.pop_back();
    }
  }
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  // Past 2^64 bytes is not a size: std::stoull threw out of main on "99999999999999999999", and "17179869185G"
  // wrapped to 1 GiB.
  uint64_t value = 0;
  uint64_t bytes = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc() || end != s.data() + s.size() || __builtin_mul_overflow(value, scale, &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

std::string SizeText(uint64_t b) {
  if (b >= (uint64_t{1} << 30) && b % (uint64_t{1} << 30) == 0) return std::to_string(b >> 30) + " GiB";
  if (b >= (1u << 20) && b % (1u << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

// One benchmark's samples for Accel, the thread hand-off baseline and, when present, the native path, taken
// interleaved: repetition i runs each path once, starting one path further along each time (so drift and caches hit
// them alike), and the ratios are taken per repetition. With `blocks`, each path runs all its repetitions in a row
// instead (Accel, native, hand-off), and repetition i of each is paired: what a path costs when it runs alone,
// without the other paths' threads waking between its operations.
struct AB {
  Samples accel;
  Samples native;
  Samples handoff;
  Samples ratio;          // accel_i / native_i per repetition
  Samples handoff_ratio;  // accel_i / handoff_i per repetition
  bool has_native = false;
};

template <typename Op>
bool Time(Path* path, Op op, double* out) {
  const double t0 = Now();
  if (!op(path)) return false;
  *out = Now() - t0;
  return true;
}

template <typename Op>
std::optional<AB> RunAB(Path* accel, Path* native, Path* handoff, int reps, bool blocks, Op op, std::string* error) {
  AB ab;
  ab.has_native = native != nullptr;
  std::vector<Path*> paths = {accel};
  if (native != nullptr) paths.push_back(native);
  paths.push_back(handoff);
  // times[p][i]: path p's repetition i.
  std::vector<std::vector<double>> times(paths.size(), std::vector<double>(static_cast<size_t>(reps)));
  const auto timed = [&](size_t p, int i) {
    if (Time(paths[p], op, &times[p][static_cast<size_t>(i)])) return true;
    *error = paths[p]->Name() + ": " + paths[p]->Error();
    return false;
  };
  for (size_t p = 0; blocks && p < paths.size(); ++p) {
    for (int i = 0; i < reps; ++i) {
      if (!timed(p, i)) return std::nullopt;
    }
  }
  for (int i = 0; !blocks && i < reps; ++i) {
    for (size_t k = 0; k < paths.size(); ++k) {
      if (!timed((static_cast<size_t>(i) + k) % paths.size(), i)) return std::nullopt;
    }
  }
  for (int i = 0; i < reps; ++i) {
    std::vector<double> t(paths.size());
    for (size_t p = 0; p < paths.size(); ++p) t[p] = times[p][static_cast<size_t>(i)];
    const double ta = t[0];
    const double th = t.back();
    ab.accel.seconds.push_back(ta);
    ab.handoff.seconds.push_back(th);
    ab.handoff_ratio.seconds.push_back(th > 0 ? ta / th : 0);
    if (native != nullptr) {
      const double tn = t[1];
      ab.native.seconds.push_back(tn);
      ab.ratio.seconds.push_back(tn > 0 ? ta / tn : 0);
    }
  }
  return ab;
}

nlohmann::json Stats(const Samples& s) {
  return {{"median_s", s.Median()}, {"p10_s", s.Quantile(0.1)}, {"p90_s", s.Quantile(0.9)}, {"n", s.seconds.size()}};
}

// "warm", "cold" or "unknown": whether ACCEL_CACHE_DIR held compiled kernels before this run.
std::string CacheState() {
  const char* dir = std::getenv("ACCEL_CACHE_DIR");
  if (dir == nullptr || *dir == '\0') return "unknown (ACCEL_CACHE_DIR unset: the runtimes' own caches)";
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec)) return std::string("warm (") + dir + " held compiled kernels)";
  }
  return std::string("cold (") + dir + " was empty)";
}

std::string DefaultCorpus() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (exe.parent_path().parent_path() / "share/accel/conformance/corpus").string();
}

int Run(const Options& o) {
  std::vector<uint64_t> sizes;
  for (size_t start = 0; start <= o.sizes.size();) {
    const size_t comma = o.sizes.find(',', start);
    const std::string item = o.sizes.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto size = ParseSize(item);
    if (!size || *size == 0) {
      std::fprintf(stderr, "accel-bench: --sizes: '%s' is not a size (e.g. 4K, 1M, 256M)\n", item.c_str());
      return 1;
    }
    sizes.push_back(*size);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const std::string cache = CacheState();
  const std::string corpus = o.corpus.empty() ? DefaultCorpus() : o.corpus;
  accel_instance_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  desc.struct_size = sizeof(desc);
  if (!o.backends.empty()) desc.backends = o.backends.c_str();
  accel_instance_t instance = nullptr;
  if (accel_instance_create(&desc, &instance) != ACCEL_SUCCESS) {
    std::fprintf(stderr, "accel-bench: accel_instance_create: %s\n", accel_last_error());
    return 2;
  }
  uint32_t count = 0;
  accel_instance_enumerate_devices(instance, &count, nullptr);
  std::vector<accel_device_t> devices(count);
  if (count > 0) accel_instance_enumerate_devices(instance, &count, devices.data());
  nlohmann::json report = {{"tool", "accel-bench"},
                           {"compiler_caches", cache},
                           {"order", o.blocks ? "blocks" : "interleaved"},
                           {"devices", nlohmann::json::array()}};
  std::printf("accel-bench: %u devices; compiler caches: %s\n", count, cache.c_str());
  for (uint32_t d : o.devices) {
    if (d >= count) {
      std::fprintf(stderr, "accel-bench: --device %u: there are %u devices (indices 0 to %u)\n", d, count,
                   count == 0 ? 0 : count - 1);
      accel_instance_destroy(instance);
      return 1;
    }
  }
  int failures = 0;
  int benchmarked = 0;  // devices whose benchmarks ran
  for (uint32_t d = 0; d < count; ++d) {
    if (!o.devices.empty() && std::find(o.devices.begin(), o.devices.end(), d) == o.devices.end()) continue;
    accel_device_capabilities_t caps{};
    caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
    caps.struct_size = sizeof(caps);
    accel_device_get_capabilities(devices[d], &caps);
    // The device's place in its backend's own list (the vendor's ordinal for CUDA), for the native path: its
    // place among the backend's visible devices is another device once ACCEL_VISIBLE_DEVICES hides one before it.
    uint32_t in_backend = 0;
    accel_device_get_info(devices[d], ACCEL_DEVICE_INFO_BACKEND_INDEX, sizeof(in_backend), &in_backend, nullptr);
    uint64_t max_size = 0;
    for (uint64_t s : sizes) {
      if (s <= caps.max_allocation) max_size = std::max(max_size, s);
    }
    std::printf("\ndevice %u: %s (%s, %s)\n", d, caps.name, caps.backend_name, caps.stable_id);
    nlohmann::json dj = {
        {"index", d}, {"name", caps.name}, {"backend", caps.backend_name}, {"stable_id", caps.stable_id}};
    std::string error;
    auto accel = MakeAccelPath(devices[d], max_size, corpus, &error);
    if (!accel) {
      std::printf("  skipped: %s\n", error.c_str());
      dj["skipped"] = error;
      report["devices"].push_back(dj);
      continue;
    }
    std::unique_ptr<Path> native;
    if (o.native) {
      std::string why;
      native = MakeNativePath(caps, in_backend, max_size, corpus, &why);
      std::printf("  native: %s\n", native ? native->Name().c_str() : why.c_str());
      dj["native"] = native ? nlohmann::json(native->Name()) : nlohmann::json(why);
    }
    const auto handoff = MakeHandOffPath(max_size);
    // `memcpy_s`: the host baseline's time (a memcpy of the size, or for fills a memset), named `base_name`.
    auto line = [&](const std::string& what, const AB& ab, bool bandwidth, uint64_t bytes, double memcpy_s,
                    const std::string& base_name = "") {
      auto value = [&](double s) {
        char buf[64];
        if (bandwidth) {
          std::snprintf(buf, sizeof(buf), "%8.2f GB/s", s > 0 ? static_cast<double>(bytes) / s / 1e9 : 0);
        } else {
          std::snprintf(buf, sizeof(buf), "%8.1f us", s * 1e6);
        }
        return std::string(buf);
      };
      std::printf("  %-28s accel %s", what.c_str(), value(ab.accel.Median()).c_str());
      nlohmann::json j = {{"accel", Stats(ab.accel)}};
      if (bandwidth) j["bytes"] = bytes;
      if (ab.has_native) {
        // Bandwidth ratios are native time over Accel time; latency ratios the reverse.
        const double r = ab.ratio.Median();
        const double lo = ab.ratio.Quantile(0.1);
        const double hi = ab.ratio.Quantile(0.9);
        const double shown = bandwidth ? 1 / r : r;
        const double shown_lo = bandwidth ? 1 / hi : lo;
        const double shown_hi = bandwidth ? 1 / lo : hi;
        std::printf("   native %s   accel/native %.3f [%.3f, %.3f]", value(ab.native.Median()).c_str(), shown, shown_lo,
                    shown_hi);
        j["native"] = Stats(ab.native);
        j["accel_over_native"] = {
            {"median", shown}, {"p10", shown_lo}, {"p90", shown_hi}, {"of", bandwidth ? "bandwidth" : "latency"}};
      }
      {
        // The hand-off baseline, with Accel against it as for native (latency: time ratio; copies: bandwidth).
        const double r = ab.handoff_ratio.Median();
        const double shown = bandwidth ? (r > 0 ? 1 / r : 0) : r;
        std::printf("   handoff %s   accel/handoff %.3f", value(ab.handoff.Median()).c_str(), shown);
        j["handoff"] = Stats(ab.handoff);
        j["accel_over_handoff"] = {{"median", shown}, {"of", bandwidth ? "bandwidth" : "latency"}};
      }
      if (memcpy_s > 0) {
        const double base = ab.has_native ? ab.native.Median() : ab.accel.Median();
        std::printf("   %s %s   %s/%s %.3f", base_name.c_str(), value(memcpy_s).c_str(),
                    ab.has_native ? "native" : "accel", base_name.c_str(), base > 0 ? memcpy_s / base : 0);
        j[base_name] = {{"median_s", memcpy_s}};
        j[std::string(ab.has_native ? "native_over_" : "accel_over_") + base_name] = base > 0 ? memcpy_s / base : 0;
      }
      std::printf("\n");
      dj[what] = j;
    };
    const int lat_reps = o.repetitions > 0 ? o.repetitions : 300;
    std::string err;
    auto lat = RunAB(
        accel.get(), native.get(), handoff.get(), lat_reps, o.blocks, [](Path* p) { return p->TinyLaunchAndWait(); },
        &err);
    if (!lat) {
      std::printf("  failed: %s\n", err.c_str());
      dj["failed"] = err;
      report["devices"].push_back(dj);
      ++failures;
      continue;
    }
    ++benchmarked;
    line("tiny kernel launch+wait", *lat, false, 0, 0);
    // Batches of 100 launches, one wait; the row's figures per launch.
    const int batch = 100;
    auto per_launch_row = [&](const std::string& what, bool (Path::*launches)(int)) {
      auto thr = RunAB(
          accel.get(), native.get(), handoff.get(), o.repetitions > 0 ? o.repetitions : 10, o.blocks,
          [&](Path* p) { return (p->*launches)(batch); }, &err);
      if (!thr) {
        std::printf("  %s failed: %s\n", what.c_str(), err.c_str());
        dj[what] = {{"failed", err}};
        ++failures;
        return;
      }
      for (auto* s : {&thr->accel, &thr->native, &thr->handoff}) {
        for (double& v : s->seconds) v /= batch;
      }
      line(what, *thr, false, 0, 0);
    };
    per_launch_row("back-to-back launch (each)", &Path::LaunchBatch);
    per_launch_row("back-to-back prepared (each)", &Path::PreparedLaunchBatch);
    std::vector<uint8_t> src(max_size, 3);
    std::vector<uint8_t> dst(max_size, 0);
    for (uint64_t size : sizes) {
      if (size > max_size) {
        std::printf("  %s: past the device's max_allocation (%s)\n", SizeText(size).c_str(),
                    SizeText(caps.max_allocation).c_str());
        continue;
      }
      const int reps = o.repetitions > 0 ? o.repetitions
                                         : static_cast<int>(std::clamp<uint64_t>((uint64_t{512} << 20) / size, 7, 200));
      Samples mc;
      Samples ms;
      for (int i = 0; i < reps; ++i) {
        double t0 = Now();
        std::memcpy(dst.data(), src.data(), size);
        mc.seconds.push_back(Now() - t0);
        t0 = Now();
        std::memset(dst.data(), i & 0xff, size);
        ms.seconds.push_back(Now() - t0);
      }
      const double memcpy_s = mc.Median();
      const double memset_s = ms.Median();
      // Copies against memcpy, fills (of 4-byte patterns: sizes that are multiples of 4) against memset.
      struct Kind {
        const char* name;  // as the row's name begins; a failure names it so
        bool (Path::*op)(uint64_t);
        double base_s;
        const char* base_name;
      };
      for (const Kind& k : {Kind{"copy host->device", &Path::HostToDevice, memcpy_s, "memcpy"},
                            Kind{"copy device->host", &Path::DeviceToHost, memcpy_s, "memcpy"},
                            Kind{"copy device->device", &Path::DeviceToDevice, memcpy_s, "memcpy"},
                            Kind{"fill", &Path::Fill, memset_s, "memset"}}) {
        if (k.op == &Path::Fill && size % 4 != 0) continue;
        auto ab = RunAB(
            accel.get(), native.get(), handoff.get(), reps, o.blocks, [&](Path* p) { return (p->*k.op)(size); }, &err);
        if (!ab) {
          std::printf("  %s %s failed: %s\n", k.name, SizeText(size).c_str(), err.c_str());
          ++failures;
          continue;
        }
        line(std::string(k.name) + " " + SizeText(size), *ab, true, size, k.base_s, k.base_name);
      }
    }
    report["devices"].push_back(dj);
  }
  accel_instance_destroy(instance);
  if (!o.json.empty()) {
    std::string why;
    if (!tools::WriteJsonFile(o.json, report, &why)) {
      std::fprintf(stderr, "accel-bench: %s\n", why.c_str());
      return 2;
    }
  }
  if (benchmarked == 0) {
    // Every device skipped (no kernel it runs, a corpus that does not read) or none at all: nothing could run.
    std::fprintf(stderr, "accel-bench: no device was benchmarked\n");
    return 2;
  }
  return failures == 0 ? 0 : 2;
}

}  // namespace
}  // namespace accel::bench

int main(int argc, char** argv) {
  accel::bench::Options o;
  CLI::App app{
      "Accel's benchmarks: kernel launch latency and throughput, copy bandwidth; --native compares the "
      "backend's own API (docs/accel-bench.md)",
      "accel-bench"};
  app.add_option("--backends", o.backends, "Backends to load (ACCEL_BACKENDS syntax: \"host,opencl\")");
  app.add_option("--device", o.devices, "Only this device index (repeatable)");
  app.add_flag("--native", o.native, "Also run the same work through the backend's native API, interleaved");
  app.add_option("--sizes", o.sizes, "Copy sizes, comma-separated (K, M, G suffixes)")->capture_default_str();
  app.add_option("--repetitions", o.repetitions, "Repetitions per benchmark (default: per benchmark)");
  std::string order = "interleaved";
  app.add_option("--order", order,
                 "interleaved: repetition i runs every path once; blocks: each path's repetitions in a row")
      ->check(CLI::IsMember({"interleaved", "blocks"}))
      ->capture_default_str();
  app.add_option("--json", o.json, "Write the figures as JSON here");
  app.add_option("--corpus", o.corpus, "The kernel corpus folder (holding corpus.json)");
  CLI11_PARSE(app, argc, argv);
  o.blocks = order == "blocks";
  try {
    return accel::bench::Run(o);
  } catch (const std::exception& e) {  // out of host memory for the largest size, above all
    std::fprintf(stderr, "accel-bench: %s\n", e.what());
    return 2;
  }
}
