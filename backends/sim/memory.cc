// Simulated device memory: capacity enforced per device, backed lazily by
// anonymous host mappings (MAP_NORESERVE), so a simulated 80 GiB device costs
// nothing until its pages are touched. Freeing stays stream-ordered: the
// engine's storage unmaps and returns the capacity when its last user is done.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "memory.h"
#include "sim_backend.h"

namespace accel::sim {
namespace {

// What the storage's release callback needs: the mapping and the capacity to return.
struct Mapping {
  void* address;
  size_t length;
  SimDevice* device;
  uint64_t reserved;
};

void ReleaseMapping(void* user_data) {
  std::unique_ptr<Mapping> m(static_cast<Mapping*>(user_data));
  munmap(m->address, m->length);
  m->device->Unreserve(m->reserved);
}

std::string Bytes(uint64_t n) {
  const double gib = static_cast<double>(n) / static_cast<double>(uint64_t{1} << 30);
  char text[64];
  std::snprintf(text, sizeof(text), "%llu bytes (%.2f GiB)", static_cast<unsigned long long>(n), gib);
  return text;
}

}  // namespace

accel_status_t BufferCreate(accel_bk_device_t handle, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept {
  SimDevice* device = Sim(handle);
  const host::HostServices& host = device->context()->host();
  return host::Guard(host, "buffer_create", [&]() -> accel_status_t {
    if (!ACCEL_BACKEND_HAS_FIELD(desc, accel_buffer_desc_t, memory_kind)) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                       "buffer description is " + std::to_string(desc->struct_size) + " bytes, too small for ABI 1.0");
    }
    const accel_memory_kind_t kind = desc->memory_kind;
    if (kind != ACCEL_MEMORY_KIND_DEVICE && kind != ACCEL_MEMORY_KIND_HOST_PINNED) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, "memory kind " + std::to_string(static_cast<int>(kind)) +
                                                    " is not supported by the sim backend");
    }
    if (accel_status_t s = device->Operate("buffer_create"); s != ACCEL_SUCCESS) return s;
    const uint64_t size = desc->size;
    const uint64_t total = device->engine.capabilities.memory_total;
    uint64_t number = 0;
    if (device->DrawAllocationFailure(&number)) {
      const FaultSpec& f = device->context()->profile().faults;
      const std::string message =
          device->label() + ": allocation #" + std::to_string(number) + " of " + std::to_string(size) +
          " bytes failed by injection (alloc_fail=" + ProbabilityText(f.allocation_failure_probability) + ", seed " +
          std::to_string(f.seed) + ")";
      host.Log(ACCEL_LOG_LEVEL_INFO, message);
      return host.Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED, message);
    }
    // Device memory only: a pinned host buffer is host memory (docs/memory-limits.md), not the device's capacity.
    const uint64_t reserved = kind == ACCEL_MEMORY_KIND_DEVICE ? size : 0;
    if (!device->Reserve(reserved)) {
      const uint64_t used = device->used();
      return host.Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED, device->label() + ": " + Bytes(size) + " requested, " +
                                                           Bytes(total - std::min(total, used)) + " free of " +
                                                           Bytes(total));
    }
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t length = size == 0 ? page : (size + page - 1) / page * page;
    void* address = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (address == MAP_FAILED) {
      const int error = errno;
      device->Unreserve(reserved);
      return host.Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                       device->label() + ": cannot map " + Bytes(size) +
                           " of host address space to back it: " + std::strerror(error));
    }
    Mapping* mapping = nullptr;
    try {
      mapping = new Mapping{address, length, device, reserved};  // NOLINT(cppcoreguidelines-owning-memory): owned below
      auto buffer = std::make_unique<host::Buffer>(host::Buffer{&device->engine, kind, nullptr});
      // From here the storage owns the mapping: its release callback unmaps it and returns the capacity.
      buffer->storage = host::Storage::Import(static_cast<std::byte*>(address), size, &ReleaseMapping, mapping);
      *out_buffer = host::Wrap(buffer.release());
    } catch (...) {
      // Nothing took the mapping (Storage::Import never runs the callback when it throws).
      if (mapping != nullptr) {
        ReleaseMapping(mapping);
      } else {
        munmap(address, length);
        device->Unreserve(reserved);
      }
      throw;
    }
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::sim
