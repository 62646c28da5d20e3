// The host device: the machine's CPU, described once from hwloc and the kernel's
// /proc and /sys files. The mapping from what the machine reports to Accel's
// descriptor is split into small pure functions so that tests can feed them text.
#ifndef ACCEL_BACKENDS_HOST_DEVICE_H_
#define ACCEL_BACKENDS_HOST_DEVICE_H_

#include <hwloc.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "device_hooks.h"
#include "host_backend.h"

namespace accel::host {

class ThreadPool;

// Where the device sits in the machine (topology.cc computes it, device_get_topology reports it).
struct Placement {
  int32_t numa_node = -1;  // the only NUMA node's OS index, or -1 when there are several
  std::string local_cpus;  // the allowed cpuset as a Linux cpulist ("0-15,32-47"), at most ACCEL_CPU_LIST_SIZE - 1
  uint32_t local_cpu_count = 0;  // CPUs in `local_cpus`
};

// A device of the engine: for the host backend the machine's CPU, with its descriptor, its placement and the
// context's thread pool; the sim backend makes one per simulated device, with its hooks.
// Immutable after the context creates it; safe to read from any thread (the pool is itself thread-safe).
struct Device {
  const HostServices* host = nullptr;          // the context's services
  accel_device_capabilities_t capabilities{};  // full size, every backend-owned field filled
  Placement placement;
  ThreadPool* pool = nullptr;          // the context's, runs the work-groups of every launch
  const DeviceHooks* hooks = nullptr;  // a backend built on the engine (sim); null for the host's CPU
};

// One loaded hwloc topology of this machine (hwloc_topology_init and _load), destroyed with the object.
// Read-only after loading; hwloc allows concurrent reads of a loaded topology.
class Topology {
 public:
  // Loads the topology; on failure returns nullptr and says why in *error.
  static std::unique_ptr<Topology> Load(std::string* error);
  explicit Topology(hwloc_topology_t topology) : topology_(topology) {}
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_;
};

// Fills every backend-owned field of `out` (a full-size struct) from the topology, /proc and /sys. Messages about
// disagreeing sources go to `host`'s log.
void DescribeMachine(const Topology& topology, const HostServices& host, accel_device_capabilities_t* out);

// The placement of the machine's CPU: the allowed cpuset of hwloc's root object and `numa_node`. Defined in
// topology.cc.
Placement DescribePlacement(const Topology& topology, int32_t numa_node, const HostServices& host);

// `list` (a Linux cpulist) cut to fit `capacity` bytes with its NUL: whole entries only, cut at a ','. Defined in
// topology.cc.
std::string FitCpuList(const std::string& list, size_t capacity);

// Copies `from` into `to` field by field, as far as to->struct_size reaches; leaves the header, stable_id and
// backend_name (the core's) alone.
void CopyCapabilities(const accel_device_capabilities_t& from, accel_device_capabilities_t* to);

// --- Pure mappings -----------------------------------------------------------------------------------------------

// "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz" -> "intel-r-xeon-r-gold-6348-cpu-2-60ghz": lowercase ASCII letters and
// digits, every other run of characters one '-', none leading or trailing, at most ACCEL_SHORT_STRING_SIZE - 1
// characters; "cpu" when nothing is left.
std::string NormaliseSku(std::string_view name);

// FP64, FP32, INT8 and INT64 always; FP16 with avx512_fp16; BF16 with avx512_bf16 or amx_bf16. `flags` is the
// value of /proc/cpuinfo's "flags" line (whitespace-separated).
accel_numeric_formats_t NumericFormatsFromCpuFlags(std::string_view flags);

// The value of the first "key<tabs/spaces>: value" line of /proc/cpuinfo text, without surrounding blanks.
std::optional<std::string> FindCpuinfoField(std::string_view cpuinfo, std::string_view key);

// The value of the "key:  N kB" line of /proc/meminfo text, in bytes.
std::optional<uint64_t> FindMeminfoBytes(std::string_view meminfo, std::string_view key);

// MHz from cpufreq's cpuinfo_max_freq text (kHz); 0 when it does not parse.
uint32_t ClockMhzFromCpufreqKhz(std::string_view text);

// The machine's memory: the kernel's MemTotal when /proc/meminfo had it, else hwloc's sum over NUMA nodes.
uint64_t ChooseMemoryTotal(uint64_t hwloc_total, std::optional<uint64_t> meminfo_total);

// The whole of a small text file such as /proc/meminfo; nullopt when it cannot be read.
std::optional<std::string> ReadTextFile(const char* path);

// Live MemAvailable in bytes (sysinfo's free RAM where /proc/meminfo cannot be read).
uint64_t AvailableMemoryBytes();

}  // namespace accel::host

#endif  // ACCEL_BACKENDS_HOST_DEVICE_H_
