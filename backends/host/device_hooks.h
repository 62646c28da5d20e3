// What a backend built on the host engine adds to its devices beyond the host's
// CPU: how a copy between two of its devices travels. The host backend has
// one device and no hooks; the sim backend routes copies by its topology.
#ifndef ACCEL_BACKENDS_HOST_DEVICE_HOOKS_H_
#define ACCEL_BACKENDS_HOST_DEVICE_HOOKS_H_

namespace accel::host {

struct Device;

// The path of a buffer-to-buffer copy (accel_copy_statistics_t counts each).
enum class CopyPath {
  kLocal,   // both buffers on one device
  kPeer,    // between two devices, directly
  kStaged,  // between two devices, through a host bounce buffer
};

// Per-device policy of a backend built on the engine. Implementations are immutable after the context creates them
// and safe to call from any thread.
class DeviceHooks {
 public:
  virtual ~DeviceHooks() = default;
  // How a copy from a buffer of `src` to a buffer of `dst` travels; `src` and `dst` differ.
  virtual CopyPath PathBetween(const Device& src, const Device& dst) const = 0;
};

}  // namespace accel::host

#endif  // ACCEL_BACKENDS_HOST_DEVICE_HOOKS_H_
