// The report: everything accel-info prints, read once through the C API into
// plain data, so each output format (table, verbose, JSON) is a pure function
// of it. Collect() is called from one thread; a Report is immutable after it.
#ifndef ACCEL_TOOLS_ACCEL_INFO_REPORT_H_
#define ACCEL_TOOLS_ACCEL_INFO_REPORT_H_

#include <accel/accel.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace accel::info {

// A failed Accel call: the call's name, its status and the calling thread's
// accel_last_error() at the time of the failure.
class QueryError : public std::runtime_error {
 public:
  QueryError(const std::string& call, accel_status_t status, const std::string& message);
  accel_status_t status() const { return status_; }

 private:
  accel_status_t status_;
};

// Throws QueryError when `status` is an error (negative); returns it otherwise.
accel_status_t Check(accel_status_t status, const char* call);

// One registered capability key, as accel_device_info_key_describe names it.
struct CapabilityKey {
  accel_device_info_key_t key;
  std::string name;
  accel_value_type_t type;
};

// One capability value of one access path.
struct Capability {
  CapabilityKey key;
  bool available = true;             // false: the device lacks it (UNSUPPORTED/UNIMPLEMENTED)
  std::string unavailable_reason;    // accel_last_error() when !available
  std::string text;                  // STRING
  uint64_t unsigned_value = 0;       // UINT32, UINT64, FLAGS64
  int64_t signed_value = 0;          // INT32
  std::array<uint32_t, 3> dims{};    // UINT32_3
  uint8_t bytes[ACCEL_UUID_SIZE]{};  // BYTES_16
};

// One access path (backend device) of a physical device.
struct AccessPath {
  std::string backend;                   // the backend's name
  accel_device_capabilities_t caps{};    // the typed snapshot
  std::vector<Capability> capabilities;  // every registered key, in key order
};

struct PhysicalDevice {
  accel_physical_device_properties_t props{};
  std::vector<AccessPath> access_paths;
};

struct Backend {
  std::string name;
  std::string version;
  std::string library_path;
  uint32_t abi_version = 0;
  uint32_t device_count = 0;
};

struct LoaderEntry {
  std::string backend_name;
  std::string manifest_path;
  std::string library_path;
  std::string reason;
  accel_loader_state_t state = ACCEL_LOADER_STATE_FAILED;
  accel_status_t status = ACCEL_SUCCESS;
  uint32_t negotiated_abi_version = 0;
  uint32_t backend_abi_version = 0;
  uint32_t device_count = 0;
};

struct LoaderWarning {
  std::string setting;
  std::string value;
  std::string item;
  std::string message;
};

struct Report {
  uint32_t library_version = 0;
  uint32_t abi_version = 0;
  uint32_t backend_abi_min = 0;
  uint32_t backend_abi_max = 0;
  std::string build;
  std::vector<CapabilityKey> keys;  // every key libaccel registers, in key order
  std::vector<Backend> backends;
  std::vector<PhysicalDevice> physical_devices;
  std::vector<LoaderEntry> loader;
  std::vector<LoaderWarning> warnings;  // setting warnings (accel_instance_get_loader_warning)
};

// Reads the library version (no instance needed). Throws QueryError.
accel_version_info_t GetVersion();

// Reads everything from `instance`. Throws QueryError when a call fails.
Report Collect(accel_instance_t instance);

// The instance's setting warnings. Throws QueryError when a call fails.
std::vector<LoaderWarning> CollectWarnings(accel_instance_t instance);

// One visible access path, as `accel-info topo` shows it (docs/topology.md).
struct TopoDevice {
  uint32_t index = 0;  // position in accel_instance_enumerate_devices: DEV<index>
  std::string stable_id;
  std::string name;
  std::string backend;
  accel_device_topology_t topology{};
  std::vector<accel_domain_t> domains;  // innermost first
};

// What `accel-info topo` prints: the devices, the links between every pair,
// the NICs and the links from each device to each NIC. Immutable after
// CollectTopology.
struct TopoReport {
  std::vector<TopoDevice> devices;
  std::vector<std::vector<accel_device_link_t>> links;      // [i][j]: DEV<i> to DEV<j>
  std::vector<accel_nic_properties_t> nics;                 // NIC<k>
  std::vector<std::vector<accel_device_link_t>> nic_links;  // [i][k]: DEV<i> to NIC<k>
};

// Reads the topology of every visible device of `instance`. Throws QueryError.
TopoReport CollectTopology(accel_instance_t instance);

}  // namespace accel::info

#endif  // ACCEL_TOOLS_ACCEL_INFO_REPORT_H_
