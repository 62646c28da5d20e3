// Profile `query`: every registered capability key, descriptor consistency,
// limits against behaviour, and topology consistency (docs/conformance.md).
#include <cstring>
#include <regex>
#include <set>

#include "harness.h"

namespace accel::conformance {
namespace {

size_t TypeSize(accel_value_type_t type) {
  switch (type) {
    case ACCEL_VALUE_TYPE_UINT32:
    case ACCEL_VALUE_TYPE_INT32: return 4;
    case ACCEL_VALUE_TYPE_UINT64:
    case ACCEL_VALUE_TYPE_FLAGS64: return 8;
    case ACCEL_VALUE_TYPE_UINT32_3: return 12;
    case ACCEL_VALUE_TYPE_BYTES_16: return 16;
    default: return 0;
  }
}

template <typename T>
T Read(const DeviceUnderTest& dut, accel_device_info_key_t key) {
  T value{};
  EXPECT_EQ(accel_device_get_info(dut.device, key, sizeof(value), &value, nullptr), ACCEL_SUCCESS)
      << "key " << key << ": " << accel_last_error();
  return value;
}

std::string ReadString(const DeviceUnderTest& dut, accel_device_info_key_t key) {
  size_t size = 0;
  EXPECT_EQ(accel_device_get_info(dut.device, key, 0, nullptr, &size), ACCEL_SUCCESS) << accel_last_error();
  std::string s(size, '\0');
  EXPECT_EQ(accel_device_get_info(dut.device, key, size, s.data(), nullptr), ACCEL_SUCCESS) << accel_last_error();
  if (!s.empty()) s.pop_back();
  return s;
}

}  // namespace

ACCEL_CONFORMANCE_DEVICE_CASE(kQuery, keys, every_key_readable) {
  int keys = 0;
  for (uint32_t k = 1;; ++k) {
    const auto key = static_cast<accel_device_info_key_t>(k);
    const char* name = nullptr;
    accel_value_type_t type{};
    const accel_status_t described = accel_device_info_key_describe(key, &name, &type);
    if (described == ACCEL_ERROR_INVALID_ENUM) break;
    ASSERT_EQ(described, ACCEL_SUCCESS) << "key " << k;
    ++keys;
    size_t size = 0;
    const accel_status_t s = accel_device_get_info(dut.device, key, 0, nullptr, &size);
    ASSERT_EQ(s, ACCEL_SUCCESS) << "key " << k << " (" << name << ") is not readable: " << Why(s);
    if (type == ACCEL_VALUE_TYPE_STRING) {
      ASSERT_GE(size, 1u) << name << ": a string's size includes its NUL";
    } else {
      ASSERT_EQ(size, TypeSize(type)) << name << ": size does not match its value type";
    }
    std::vector<uint8_t> value(size + 8, 0xCC);
    ASSERT_EQ(accel_device_get_info(dut.device, key, size, value.data(), nullptr), ACCEL_SUCCESS) << name;
    if (type == ACCEL_VALUE_TYPE_STRING) {
      EXPECT_EQ(value[size - 1], 0) << name << ": not NUL-terminated";
    }
    for (size_t i = size; i < value.size(); ++i) ASSERT_EQ(value[i], 0xCC) << name << ": wrote past `size`";
    if (size > 0) {
      size_t needed = 0;
      EXPECT_EQ(accel_device_get_info(dut.device, key, size - 1, value.data(), &needed), ACCEL_ERROR_INVALID_ARGUMENT)
          << name << ": a too-small buffer was accepted";
      EXPECT_EQ(needed, size) << name << ": the needed size is not written back";
    }
  }
  EXPECT_GE(keys, 32) << "fewer keys than ABI 1.0 registers";
}

ACCEL_CONFORMANCE_DEVICE_CASE(kQuery, keys, agree_with_descriptor) {
  const auto& c = dut.caps;
  EXPECT_EQ(Read<uint32_t>(dut, ACCEL_DEVICE_INFO_KIND), static_cast<uint32_t>(c.kind));
  EXPECT_EQ(ReadString(dut, ACCEL_DEVICE_INFO_NAME), std::string(c.name));
  EXPECT_EQ(ReadString(dut, ACCEL_DEVICE_INFO_SKU), std::string(c.sku));
  EXPECT_EQ(ReadString(dut, ACCEL_DEVICE_INFO_BACKEND_NAME), TheTarget().name);
  EXPECT_EQ(ReadString(dut, ACCEL_DEVICE_INFO_STABLE_ID), std::string(c.stable_id));
  EXPECT_EQ(ReadString(dut, ACCEL_DEVICE_INFO_PCI_BUS_ID), std::string(c.pci_bus_id));
  EXPECT_EQ(Read<uint32_t>(dut, ACCEL_DEVICE_INFO_COMPUTE_UNITS), c.compute_units);
  EXPECT_EQ(Read<uint64_t>(dut, ACCEL_DEVICE_INFO_MEMORY_TOTAL), c.memory_total);
  EXPECT_EQ(Read<uint64_t>(dut, ACCEL_DEVICE_INFO_MAX_ALLOCATION), c.max_allocation);
  EXPECT_EQ(Read<uint64_t>(dut, ACCEL_DEVICE_INFO_MAX_BUFFER_RANGE), c.max_buffer_range);
  EXPECT_EQ(Read<uint64_t>(dut, ACCEL_DEVICE_INFO_LOCAL_MEMORY_SIZE), c.local_memory_size);
  EXPECT_EQ(Read<uint32_t>(dut, ACCEL_DEVICE_INFO_MAX_WORK_GROUP_SIZE), c.max_work_group_size);
  EXPECT_EQ(Read<uint64_t>(dut, ACCEL_DEVICE_INFO_KERNEL_FORMATS), c.kernel_formats);
  EXPECT_EQ(Read<uint64_t>(dut, ACCEL_DEVICE_INFO_FEATURES), c.features);
  EXPECT_EQ(Read<uint64_t>(dut, ACCEL_DEVICE_INFO_NUMERIC_FORMATS), c.numeric_formats);
  EXPECT_EQ(Read<uint64_t>(dut, ACCEL_DEVICE_INFO_FLAGS), c.flags);
  EXPECT_EQ(Read<uint32_t>(dut, ACCEL_DEVICE_INFO_SIMULATED), (c.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0 ? 1u : 0u);
  uint8_t uuid[16];
  ASSERT_EQ(accel_device_get_info(dut.device, ACCEL_DEVICE_INFO_UUID, sizeof(uuid), uuid, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(std::memcmp(uuid, c.uuid, sizeof(uuid)), 0);
  uint32_t dims[3];
  ASSERT_EQ(accel_device_get_info(dut.device, ACCEL_DEVICE_INFO_MAX_WORK_GROUP_DIMS, sizeof(dims), dims, nullptr),
            ACCEL_SUCCESS);
  EXPECT_EQ(std::memcmp(dims, c.max_work_group_dims, sizeof(dims)), 0);
  ASSERT_EQ(accel_device_get_info(dut.device, ACCEL_DEVICE_INFO_MAX_GRID_DIMS, sizeof(dims), dims, nullptr),
            ACCEL_SUCCESS);
  EXPECT_EQ(std::memcmp(dims, c.max_grid_dims, sizeof(dims)), 0);
}

ACCEL_CONFORMANCE_DEVICE_CASE(kQuery, descriptor, consistent) {
  const auto& c = dut.caps;
  EXPECT_GE(static_cast<uint32_t>(c.kind), 1u) << "kind is UNKNOWN";
  EXPECT_LE(static_cast<uint32_t>(c.kind), static_cast<uint32_t>(ACCEL_DEVICE_KIND_FPGA)) << "kind out of range";
  EXPECT_GT(std::strlen(c.name), 0u) << "empty name";
  EXPECT_GT(std::strlen(c.vendor), 0u) << "empty vendor";
  EXPECT_GT(std::strlen(c.stable_id), 0u) << "empty stable id";
  EXPECT_EQ(std::string(c.backend_name), TheTarget().name);
  EXPECT_GT(c.memory_total, 0u);
  EXPECT_GT(c.max_allocation, 0u);
  EXPECT_LE(c.max_allocation, c.memory_total) << "max_allocation above memory_total";
  EXPECT_GT(c.max_buffer_range, 0u);
  EXPECT_LE(c.max_buffer_range, c.max_allocation) << "max_buffer_range above max_allocation";
  EXPECT_GE(c.compute_units, 1u);
  EXPECT_GE(c.max_argument_size, 4u);
  if (c.kernel_formats != 0) {
    EXPECT_GE(c.max_work_group_size, 1u);
    for (int d = 0; d < 3; ++d) {
      EXPECT_GE(c.max_work_group_dims[d], 1u) << "dimension " << d;
      EXPECT_LE(c.max_work_group_dims[d], c.max_work_group_size) << "dimension " << d;
      EXPECT_GE(c.max_grid_dims[d], 1u) << "dimension " << d;
    }
  }
  if ((c.features & ACCEL_DEVICE_FEATURE_SUBGROUPS) != 0) {
    EXPECT_GT(c.subgroup_size, 0u);
  }
  if ((c.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE) != 0) {
    static const uint8_t zero[16] = {};
    EXPECT_NE(std::memcmp(c.uuid, zero, 16), 0) << "uuid-unique with an all-zero uuid";
  }
  if (c.pci_bus_id[0] != '\0') {
    EXPECT_TRUE(std::regex_match(c.pci_bus_id, std::regex("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]")))
        << "pci_bus_id '" << c.pci_bus_id << "' is not DDDD:BB:DD.F in lowercase hex";
  }
  EXPECT_GE(c.numa_node, -1);
  const uint64_t known_formats = (ACCEL_KERNEL_FORMAT_HSACO << 1) - 1;
  EXPECT_EQ(c.kernel_formats & ~known_formats, 0u) << "unknown kernel format bits";
  // Stable ids are unique within the backend.
  for (const auto& other : TheTarget().all_devices) {
    if (other.index != dut.index) {
      EXPECT_STRNE(other.caps.stable_id, c.stable_id) << "devices " << dut.index << " and " << other.index;
    }
  }
}

ACCEL_CONFORMANCE_DEVICE_CASE(kQuery, descriptor, stable_across_instances) {
  // A second instance over the same backend sees the same device, same id.
  accel_instance_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  desc.struct_size = sizeof(desc);
  desc.backend_files = TheTarget().backend_arg.c_str();
  desc.add_backend_files = "";
  desc.backends = "";
  accel_instance_t other = nullptr;
  ACCEL_ASSERT_OK(accel_instance_create(&desc, &other));
  uint32_t count = 0;
  accel_instance_enumerate_devices(other, &count, nullptr);
  std::vector<accel_device_t> devices(count);
  if (count > 0) accel_instance_enumerate_devices(other, &count, devices.data());
  bool found = false;
  for (accel_device_t d : devices) {
    accel_device_capabilities_t c{};
    c.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
    c.struct_size = sizeof(c);
    ASSERT_EQ(accel_device_get_capabilities(d, &c), ACCEL_SUCCESS);
    if (std::strcmp(c.stable_id, dut.caps.stable_id) == 0) {
      found = true;
      EXPECT_STREQ(c.name, dut.caps.name);
      EXPECT_EQ(c.memory_total, dut.caps.memory_total);
      EXPECT_EQ(c.kernel_formats, dut.caps.kernel_formats);
      EXPECT_EQ(c.features, dut.caps.features);
    }
  }
  accel_instance_destroy(other);
  EXPECT_TRUE(found) << "stable id " << dut.caps.stable_id << " is not found in a second instance";
}

ACCEL_CONFORMANCE_DEVICE_CASE(kQuery, limits, memory_info_matches_descriptor) {
  uint64_t free = 0;
  uint64_t total = 0;
  const accel_status_t s = accel_device_get_memory_info(dut.device, &free, &total);
  if (s == ACCEL_ERROR_UNIMPLEMENTED) return;  // a NULL slot: abi.slots.null_is_unimplemented checks the answer
  ACCEL_ASSERT_OK(s);
  EXPECT_EQ(total, dut.caps.memory_total) << "memory info's total differs from the descriptor's memory_total";
  EXPECT_LE(free, total) << "more memory free than there is";
  EXPECT_EQ(Read<uint64_t>(dut, ACCEL_DEVICE_INFO_MEMORY_FREE) <= total, true);
}

ACCEL_CONFORMANCE_DEVICE_CASE(kQuery, limits, allocation_limit_is_enforced) {
  // Past the largest allocation: refused, nothing allocated. At or below a
  // modest size: granted. Simulated devices, whose memory costs nothing
  // until touched, also get the largest allocation itself.
  accel_buffer_desc_t desc{ACCEL_STRUCTURE_TYPE_BUFFER_DESC,
                           sizeof(desc),
                           nullptr,
                           dut.caps.max_allocation + 1,
                           ACCEL_MEMORY_KIND_DEVICE,
                           0,
                           0};
  accel_buffer_t b = nullptr;
  EXPECT_EQ(accel_buffer_create(dut.device, &desc, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(b, nullptr);
  desc.size = std::min<uint64_t>(dut.caps.max_allocation, 16u << 20);
  ACCEL_EXPECT_OK(accel_buffer_create(dut.device, &desc, &b));
  if (b != nullptr) accel_buffer_destroy(b);
  if ((dut.caps.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0) {
    desc.size = dut.caps.max_allocation;
    b = nullptr;
    ACCEL_EXPECT_OK(accel_buffer_create(dut.device, &desc, &b));
    if (b != nullptr) accel_buffer_destroy(b);
  }
}

ACCEL_CONFORMANCE_DEVICE_CASE(kQuery, topology, placement_agrees) {
  accel_device_topology_t t{};
  t.stype = ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY;
  t.struct_size = sizeof(t);
  ACCEL_ASSERT_OK(accel_device_get_topology(dut.device, &t));
  EXPECT_STREQ(t.pci_bus_id, dut.caps.pci_bus_id) << "topology and descriptor disagree on the PCI bus id";
  EXPECT_GE(t.numa_node, -1);
  if (dut.caps.numa_node >= 0) {
    EXPECT_EQ(t.numa_node, dut.caps.numa_node);
  }
  EXPECT_GE(t.nearest_nic, -1);
  uint32_t nics = 0;
  ACCEL_ASSERT_OK(accel_instance_get_nic_count(TheTarget().instance, &nics));
  EXPECT_LT(t.nearest_nic, static_cast<int32_t>(nics)) << "nearest_nic is not a NIC of the instance";
  const accel_device_link_t self = Link(dut.device, dut.device);
  EXPECT_EQ(self.link_class, ACCEL_LINK_CLASS_SELF) << "a device's link to itself is SELF";
}

ACCEL_CONFORMANCE_DEVICE_CASE(kQuery, topology, links_symmetric) {
  for (const auto& other : TheTarget().all_devices) {
    if (other.index == dut.index) continue;
    const accel_device_link_t ab = Link(dut.device, other.device);
    const accel_device_link_t ba = Link(other.device, dut.device);
    EXPECT_EQ(ab.link_class, ba.link_class) << dut.index << "<->" << other.index;
    EXPECT_EQ(ab.link_count, ba.link_count) << dut.index << "<->" << other.index;
    EXPECT_EQ(ab.bandwidth, ba.bandwidth) << dut.index << "<->" << other.index;
    EXPECT_EQ(ab.peer_access, ba.peer_access) << dut.index << "<->" << other.index;
    EXPECT_STREQ(ab.fabric, ba.fabric) << dut.index << "<->" << other.index;
    // SELF only between two access paths of one physical device (a runtime
    // listing the host CPU twice, docs/devices.md).
    const bool same_physical = ReadString(dut, ACCEL_DEVICE_INFO_PHYSICAL_DEVICE_ID) ==
                               ReadString(other, ACCEL_DEVICE_INFO_PHYSICAL_DEVICE_ID);
    EXPECT_EQ(ab.link_class == ACCEL_LINK_CLASS_SELF, same_physical)
        << dut.index << "<->" << other.index << ": SELF exactly when both are access paths of one physical device";
    if (ab.link_class == ACCEL_LINK_CLASS_FABRIC) {
      EXPECT_GE(ab.link_count, 1u) << "a FABRIC link with no links";
    }
    if (ab.peer_access != 0 && ab.link_class != ACCEL_LINK_CLASS_SELF) {  // SELF shares its memory anyway
      EXPECT_NE(dut.caps.features & ACCEL_DEVICE_FEATURE_PEER_ACCESS, 0u)
          << "peer access to device " << other.index << " without the peer-access feature";
      EXPECT_NE(ab.link_class, ACCEL_LINK_CLASS_HOST_STAGED) << "peer access over a host-staged path";
      EXPECT_NE(ab.link_class, ACCEL_LINK_CLASS_NONE) << "peer access with no path";
    }
  }
}

}  // namespace accel::conformance
