// Attributes of a device from its capability snapshot, and the union rule
// that makes one attribute set of a physical device's access paths
// (docs/selectors.md, "Physical devices"). Pure functions: thread-safe.
#ifndef ACCEL_CORE_SELECTOR_CAPABILITIES_H_
#define ACCEL_CORE_SELECTOR_CAPABILITIES_H_

#include <accel/accel.h>

#include "attributes.h"

namespace accel::selector {

// Every selector key of one access path, from its snapshot (memory_free is
// absent: it is read live, not part of the snapshot).
MapAttributes CapabilityAttributes(const accel_device_capabilities_t& caps);

// Adds another access path of the same physical device to `attributes`:
// kernel formats, modeled kernel formats, features and numeric formats become
// the union, memory_total and compute_units the largest; the rest stays the
// first path's.
void MergeAccessPath(MapAttributes& attributes, const accel_device_capabilities_t& caps);

}  // namespace accel::selector

#endif  // ACCEL_CORE_SELECTOR_CAPABILITIES_H_
