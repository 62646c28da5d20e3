// latency_rounds: a tiny kernel's launch+wait through Accel and through the backend's native API (accel-bench's
// paths, tools/accel-bench/bench.h), in rounds of `count` launches per path, the paths alternating which goes
// first, with nothing else in the process: per round and path the median time, and the context switches and CPU
// time per launch of the whole process (getrusage). For a row whose accel-bench ratio moves more from run to run
// than any cost could explain (docs/overhead.md, "Interleaved and in blocks").
//
//   ACCEL_BACKENDS=vulkan latency_rounds <corpus dir> [count] [rounds]
#include <sys/resource.h>

#include <accel/accel.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "bench.h"

namespace {

struct Usage {
  long switches = 0;
  double cpu_s = 0;
};

Usage UsageNow() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);  // every thread of the process: the runtime's own threads too
  return {u.ru_nvcsw + u.ru_nivcsw, static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                                        1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: latency_rounds <corpus dir> [count] [rounds]\n");
    return 2;
  }
  const std::string corpus = argv[1];
  const int count = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 8;
  if (count <= 0 || rounds <= 0) {
    std::fprintf(stderr, "latency_rounds: count and rounds must be positive\n");
    return 2;
  }
  accel_instance_t instance = nullptr;
  if (accel_instance_create(nullptr, &instance) != ACCEL_SUCCESS) {
    std::fprintf(stderr, "latency_rounds: accel_instance_create: %s\n", accel_last_error());
    return 1;
  }
  uint32_t n = 1;
  accel_device_t device = nullptr;
  if (accel_instance_enumerate_devices(instance, &n, &device) < 0 || n == 0) {
    std::fprintf(stderr, "latency_rounds: no device (set ACCEL_BACKENDS)\n");
    return 1;
  }
  accel_device_capabilities_t caps{};
  caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  caps.struct_size = sizeof(caps);
  accel_device_get_capabilities(device, &caps);
  uint32_t backend_index = 0;
  accel_device_get_info(device, ACCEL_DEVICE_INFO_BACKEND_INDEX, sizeof(backend_index), &backend_index, nullptr);
  std::string error;
  std::unique_ptr<accel::bench::Path> paths[2];
  paths[0] = accel::bench::MakeAccelPath(device, 4096, corpus, &error);
  if (paths[0]) paths[1] = accel::bench::MakeNativePath(caps, backend_index, 4096, corpus, &error);
  if (!paths[0] || !paths[1]) {
    std::fprintf(stderr, "latency_rounds: %s\n", error.c_str());
    return 1;
  }
  std::printf("device 0: %s (%s)\n", caps.name, caps.backend_name);
  accel::bench::Samples ratios;
  for (int r = 0; r < rounds; ++r) {
    double medians[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const int p = (r + k) % 2;
      accel::bench::Samples t;
      const Usage before = UsageNow();
      for (int i = 0; i < count; ++i) {
        const double t0 = accel::bench::Now();
        if (!paths[p]->TinyLaunchAndWait()) {
          std::fprintf(stderr, "latency_rounds: %s: %s\n", paths[p]->Name().c_str(), paths[p]->Error().c_str());
          return 1;
        }
        t.seconds.push_back(accel::bench::Now() - t0);
      }
      const Usage after = UsageNow();
      medians[p] = t.Median();
      std::printf("round %d %-6s median %7.1f us  context switches/launch %5.2f  CPU/launch %7.1f us\n", r,
                  paths[p]->Name().c_str(), 1e6 * medians[p],
                  static_cast<double>(after.switches - before.switches) / count,
                  1e6 * (after.cpu_s - before.cpu_s) / count);
    }
    ratios.seconds.push_back(medians[0] / medians[1]);
  }
  std::printf("accel/native per round:");
  for (double x : ratios.seconds) std::printf(" %.3f", x);
  std::printf("  median %.3f\n", ratios.Median());
  paths[0].reset();
  paths[1].reset();
  accel_instance_destroy(instance);
  return 0;
}
