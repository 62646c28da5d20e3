// The API-sequence fuzzer: the bytes of an input decode into a sequence of
// public C API calls (include/accel/accel.h) against the host and sim
// backends -- buffers, streams, events, copies, fills, maps, imports,
// tenants, native-host kernel launches, synchronisation, device queries and
// selectors -- with live, destroyed, garbage, wrong-type and other-instance
// handles, NULL pointers and huge sizes and offsets. It promises: every call
// returns a status accel.h documents (never a crash: ASan and UBSan), a
// failing call leaves a message in accel_last_error(), a destroyed or
// garbage handle gives ACCEL_ERROR_INVALID_HANDLE, destroying the instances
// succeeds and releases everything (LeakSanitizer), and every imported host
// range is released exactly once.
//
// LLVMFuzzerTestOneInput is libFuzzer's entry point; api_sequence_main.cc
// drives it without libFuzzer (replayed files, then random inputs from a seed).
#include <accel/accel.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "api_sequence_fuzzer.h"

namespace {

uint64_t g_calls = 0;
uint64_t g_errors = 0;
uint64_t g_imported = 0;
uint64_t g_released = 0;

[[noreturn]] void Fail(const char* call, accel_status_t status, const char* why) {
  std::fprintf(stderr, "api-sequence fuzzer: %s returned %d (%s): %s; last error: %s\n", call, static_cast<int>(status),
               accel_status_name(status), why, accel_last_error());
  std::abort();
}

// Every call goes through here: a documented status, and a message with each error.
accel_status_t Check(const char* call, accel_status_t status) {
  ++g_calls;
  const bool documented = status == ACCEL_SUCCESS || status == ACCEL_NOT_READY ||
                          (status <= ACCEL_ERROR_INVALID_ARGUMENT && status >= ACCEL_ERROR_CANCELLED);
  if (!documented) Fail(call, status, "not a status accel.h documents");
  if (status < 0) {
    ++g_errors;
    if (accel_last_error_status() != status) Fail(call, status, "accel_last_error_status() disagrees");
    if (accel_last_error()[0] == '\0') Fail(call, status, "an error without a message");
  }
  return status;
}

// A handle that is not live must be refused as such.
void ExpectInvalidHandle(const char* call, accel_status_t status) {
  if (Check(call, status) != ACCEL_ERROR_INVALID_HANDLE) Fail(call, status, "a dead or garbage handle was not refused");
}

#define CALL(f, ...) Check(#f, f(__VA_ARGS__))

// The bytes of the input, read front to back; 0 once they run out.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  uint8_t U8() { return at_ < size_ ? data_[at_++] : 0; }
  uint32_t U32() { return U8() | uint32_t{U8()} << 8 | uint32_t{U8()} << 16 | uint32_t{U8()} << 24; }
  uint64_t U64() { return U32() | uint64_t{U32()} << 32; }
  // A size or offset: mostly small, sometimes huge or at the edge of overflow.
  uint64_t Size() {
    switch (U8() % 10) {
      case 0: return 0;
      case 1: return U8() + 1;
      case 2: return 4 * (U8() + 1);
      case 3: return 4096;
      case 4: return U32() % (64 * 1024) + 1;
      case 5: return UINT64_MAX - U8();
      case 6: return uint64_t{1} << (40 + U8() % 24);
      case 7: return 64;
      case 8: return 256;
      default: return 1024;
    }
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// Host memory that outlives every copy, map and import of an input (copies complete before their instance is
// destroyed, and each input destroys its instances).
alignas(64) uint8_t g_arena[256 * 1024];
constexpr uint64_t kArenaHalf = sizeof(g_arena) / 2;

// An object created by the sequence: its handle, its instance, and whether it is still alive.
template <typename H>
struct Object {
  H handle;
  int instance;
  bool alive;
};

// The native-host kernel the sequence launches: out[i] = value for i < n, refusing a range past the bound buffer.
accel_status_t FillKernel(const accel_native_work_group_t* group, const accel_native_arg_t* args) {
  uint32_t value = 0;
  uint32_t n = 0;
  std::memcpy(&value, args[1].pointer, 4);
  std::memcpy(&n, args[2].pointer, 4);
  if (uint64_t{n} * 4 > args[0].size) return ACCEL_ERROR_INVALID_ARGUMENT;
  auto* out = static_cast<uint32_t*>(args[0].pointer);
  const uint64_t size = uint64_t{group->group_size[0]} * group->group_size[1] * group->group_size[2];
  const uint64_t group_linear =
      (uint64_t{group->group_id[2]} * group->grid_size[1] + group->group_id[1]) * group->grid_size[0] +
      group->group_id[0];
  for (uint64_t l = 0; l < size; ++l) {
    const uint64_t i = group_linear * size + l;
    if (i < n) out[i] = value;
  }
  return ACCEL_SUCCESS;
}

const accel_kernel_argument_info_t kFillArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_WRITE, 0, "out"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 4, "value"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 4, "n"),
};
const accel_native_kernel_desc_t kKernels[] = {{ACCEL_STRUCTURE_TYPE_NATIVE_KERNEL_DESC,
                                                sizeof(accel_native_kernel_desc_t),
                                                nullptr,
                                                "fill",
                                                FillKernel,
                                                kFillArgs,
                                                3,
                                                0,
                                                {0, 0, 0},
                                                0,
                                                0}};
const accel_native_module_t kModule = {
    ACCEL_STRUCTURE_TYPE_NATIVE_MODULE, sizeof(accel_native_module_t), nullptr, kKernels, 1, 0};

accel_status_t Callback(void* user_data, accel_status_t status) {
  if (status != ACCEL_SUCCESS) return status;
  return user_data != nullptr ? ACCEL_ERROR_FAILED_PRECONDITION : ACCEL_SUCCESS;
}

void Release(void* /*user_data*/) { ++g_released; }

template <typename T>
T Out(accel_structure_type_t stype) {
  T out{};
  out.stype = stype;
  out.struct_size = sizeof(T);
  return out;
}

class Sequence {
 public:
  explicit Sequence(Bytes* in) : in_(in) {}

  void Run() {
    CreateInstance(0);
    if (instance_[0] == nullptr) return;
    for (int steps = 0; !in_->done() && steps < 400; ++steps) Step();
    for (int i = 0; i < 2; ++i) DestroyInstance(i);
    CALL(accel_thread_set_tenant, nullptr, nullptr);
    // After destruction, every handle of the input is stale.
    for (auto& b : buffers_) ExpectInvalidHandle("accel_buffer_destroy", accel_buffer_destroy(b.handle));
    for (auto& s : streams_) ExpectInvalidHandle("accel_stream_query", accel_stream_query(s.handle));
    for (auto& e : events_) ExpectInvalidHandle("accel_event_destroy", accel_event_destroy(e.handle));
    for (auto& m : modules_) ExpectInvalidHandle("accel_module_destroy", accel_module_destroy(m.handle));
  }

 private:
  void CreateInstance(int i) {
    accel_instance_t instance = nullptr;
    if (CALL(accel_instance_create, nullptr, &instance) != ACCEL_SUCCESS) return;
    instance_[i] = instance;
    uint32_t n = 0;
    CALL(accel_instance_enumerate_devices, instance, &n, nullptr);
    devices_[i].assign(n, nullptr);
    if (n > 0) CALL(accel_instance_enumerate_devices, instance, &n, devices_[i].data());
    uint32_t p = 0;
    CALL(accel_instance_enumerate_physical_devices, instance, &p, nullptr);
    physical_[i].assign(p, nullptr);
    if (p > 0) CALL(accel_instance_enumerate_physical_devices, instance, &p, physical_[i].data());
  }

  void DestroyInstance(int i) {
    if (instance_[i] == nullptr) return;
    if (const accel_status_t s = CALL(accel_instance_destroy, instance_[i]); s != ACCEL_SUCCESS) {
      Fail("accel_instance_destroy", s, "destroying an instance failed");
    }
    ExpectInvalidHandle("accel_instance_destroy", accel_instance_destroy(instance_[i]));
    instance_[i] = nullptr;
    Kill(i, &buffers_);
    Kill(i, &streams_);
    Kill(i, &events_);
    Kill(i, &modules_);
    Kill(i, &kernels_);
    Kill(i, &tenants_);
    Kill(i, &prepared_);
    dead_devices_.insert(dead_devices_.end(), devices_[i].begin(), devices_[i].end());
    devices_[i].clear();
    physical_[i].clear();
  }

  template <typename H>
  static void Kill(int instance, std::vector<Object<H>>* objects) {
    for (auto& o : *objects) {
      if (o.instance == instance) o.alive = false;
    }
  }

  // A handle of type H: mostly one the sequence made (alive or not), else NULL, garbage or another type's.
  template <typename H>
  H Pick(const std::vector<Object<H>>& objects) {
    const uint8_t how = in_->U8();
    if (how < 200 && !objects.empty()) return objects[in_->U8() % objects.size()].handle;
    if (how < 215) return nullptr;
    if (how < 230) return reinterpret_cast<H>(static_cast<uintptr_t>(in_->U64()));
    if (how < 245 && !streams_.empty()) return reinterpret_cast<H>(streams_[in_->U8() % streams_.size()].handle);
    if (!buffers_.empty()) return reinterpret_cast<H>(buffers_[in_->U8() % buffers_.size()].handle);
    return nullptr;
  }

  // A live object, for the checks that a dead one is refused: index or -1.
  template <typename H>
  int PickDead(const std::vector<Object<H>>& objects) {
    if (objects.empty()) return -1;
    const size_t i = in_->U8() % objects.size();
    return objects[i].alive ? -1 : static_cast<int>(i);
  }

  accel_device_t Device() {
    const uint8_t how = in_->U8();
    const int i = how & 1;
    if (how < 220 && !devices_[i].empty()) return devices_[i][in_->U8() % devices_[i].size()];
    if (how < 230 && !devices_[0].empty()) return devices_[0][in_->U8() % devices_[0].size()];
    if (how < 240 && !dead_devices_.empty()) return dead_devices_[in_->U8() % dead_devices_.size()];
    if (how < 250) return reinterpret_cast<accel_device_t>(static_cast<uintptr_t>(in_->U64()));
    return nullptr;
  }

  int InstanceOf(accel_device_t device) const {
    for (int i = 0; i < 2; ++i) {
      for (auto d : devices_[i]) {
        if (d == device) return i;
      }
    }
    return 0;
  }

  // A host range inside the arena of up to `size` bytes (the arena's second half absorbs any in-range size).
  uint8_t* Host(uint64_t size) {
    const uint8_t how = in_->U8();
    if (how < 8) return nullptr;
    return g_arena + (size <= kArenaHalf ? in_->U32() % kArenaHalf : 0);
  }

  uint64_t Timeout() {
    switch (in_->U8() % 3) {
      case 0: return 0;
      case 1: return 1000000;
      default: return ACCEL_TIMEOUT_INFINITE;
    }
  }

  void Step() {
    switch (in_->U8() % 32) {
      case 0:
      case 1: {
        auto desc = Out<accel_buffer_desc_t>(ACCEL_STRUCTURE_TYPE_BUFFER_DESC);
        desc.size = in_->Size();
        const uint8_t kind = in_->U8();
        desc.memory_kind = static_cast<accel_memory_kind_t>(kind < 200 ? 0 : kind < 250 ? 1 : kind);
        if (in_->U8() > 250) desc.flags = 1;
        const accel_device_t device = Device();
        accel_buffer_t buffer = nullptr;
        if (CALL(accel_buffer_create, device, in_->U8() > 5 ? &desc : nullptr, &buffer) == ACCEL_SUCCESS) {
          buffers_.push_back({buffer, InstanceOf(device), true});
        }
        break;
      }
      case 2: {
        if (int dead = PickDead(buffers_); dead >= 0) {
          ExpectInvalidHandle("accel_buffer_destroy", accel_buffer_destroy(buffers_[dead].handle));
          break;
        }
        accel_buffer_t b = Pick(buffers_);
        if (CALL(accel_buffer_destroy, b) == ACCEL_SUCCESS) MarkDead(&buffers_, b);
        break;
      }
      case 3: {
        auto desc = Out<accel_stream_desc_t>(ACCEL_STRUCTURE_TYPE_STREAM_DESC);
        if (in_->U8() > 250) desc.struct_size = 3;
        const accel_device_t device = Device();
        accel_stream_t stream = nullptr;
        if (CALL(accel_stream_create, device, in_->U8() > 128 ? &desc : nullptr, &stream) == ACCEL_SUCCESS) {
          streams_.push_back({stream, InstanceOf(device), true});
        }
        break;
      }
      case 4: {
        if (int dead = PickDead(streams_); dead >= 0) {
          ExpectInvalidHandle("accel_stream_destroy", accel_stream_destroy(streams_[dead].handle));
          break;
        }
        accel_stream_t s = Pick(streams_);
        if (CALL(accel_stream_destroy, s) == ACCEL_SUCCESS) MarkDead(&streams_, s);
        break;
      }
      case 5: {
        auto desc = Out<accel_event_desc_t>(ACCEL_STRUCTURE_TYPE_EVENT_DESC);
        desc.flags = in_->U8() % 4;
        const accel_device_t device = Device();
        accel_event_t event = nullptr;
        if (CALL(accel_event_create, device, in_->U8() > 64 ? &desc : nullptr, &event) == ACCEL_SUCCESS) {
          events_.push_back({event, InstanceOf(device), true});
        }
        break;
      }
      case 6: {
        if (int dead = PickDead(events_); dead >= 0) {
          ExpectInvalidHandle("accel_event_destroy", accel_event_destroy(events_[dead].handle));
          break;
        }
        accel_event_t e = Pick(events_);
        if (CALL(accel_event_destroy, e) == ACCEL_SUCCESS) MarkDead(&events_, e);
        break;
      }
      case 7: {
        const uint64_t offset = in_->Size();
        const uint64_t size = in_->Size();
        CALL(accel_stream_copy_host_to_buffer, Pick(streams_), Host(size), Pick(buffers_), offset, size);
        break;
      }
      case 8: {
        const uint64_t offset = in_->Size();
        const uint64_t size = in_->Size();
        CALL(accel_stream_copy_buffer_to_host, Pick(streams_), Pick(buffers_), offset, Host(size), size);
        break;
      }
      case 9: {
        const accel_stream_t s = Pick(streams_);
        const accel_buffer_t src = Pick(buffers_);
        const uint64_t src_offset = in_->Size();
        const accel_buffer_t dst = Pick(buffers_);
        CALL(accel_stream_copy_buffer, s, src, src_offset, dst, in_->Size(), in_->Size());
        break;
      }
      case 10: {
        const uint32_t pattern = in_->U32();
        const uint32_t pattern_size = in_->U8() % 6;
        const accel_stream_t s = Pick(streams_);
        const accel_buffer_t b = Pick(buffers_);
        const uint64_t offset = in_->Size();
        CALL(accel_stream_fill_buffer, s, b, offset, in_->Size(), in_->U8() > 8 ? &pattern : nullptr, pattern_size);
        break;
      }
      case 11: CALL(accel_stream_synchronize, Pick(streams_), Timeout()); break;
      case 12: CALL(accel_stream_query, Pick(streams_)); break;
      case 13: CALL(accel_stream_record_event, Pick(streams_), Pick(events_)); break;
      case 14: CALL(accel_stream_wait_event, Pick(streams_), Pick(events_)); break;
      case 15:
        if (in_->U8() & 1) {
          CALL(accel_event_query, Pick(events_));
        } else {
          CALL(accel_event_synchronize, Pick(events_), Timeout());
        }
        break;
      case 16: {
        uint64_t ns = 0;
        const accel_event_t a = Pick(events_);
        CALL(accel_event_elapsed_time, a, Pick(events_), in_->U8() > 8 ? &ns : nullptr);
        break;
      }
      case 17: {
        const accel_buffer_t b = Pick(buffers_);
        if (in_->U8() & 1) {
          CALL(accel_buffer_unmap, b);
          break;
        }
        void* p = nullptr;
        const uint64_t offset = in_->Size();
        const uint64_t size = in_->Size();
        const uint64_t flags = in_->U8() % 5;
        if (CALL(accel_buffer_map, b, offset, size, flags, in_->U8() > 8 ? &p : nullptr) == ACCEL_SUCCESS) {
          if (p == nullptr) Fail("accel_buffer_map", ACCEL_SUCCESS, "succeeded with a NULL pointer");
          std::memset(p, 0xA5, size);  // the whole range is the caller's (ASan checks it)
        }
        break;
      }
      case 18: {
        const accel_buffer_t b = Pick(buffers_);
        auto props = Out<accel_buffer_properties_t>(ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES);
        CALL(accel_buffer_get_properties, b, in_->U8() > 8 ? &props : nullptr);
        void* host = nullptr;
        CALL(accel_buffer_get_host_address, b, &host);
        uint64_t address = 0;
        CALL(accel_buffer_get_device_address, b, &address);
        break;
      }
      case 19: {
        const accel_stream_t s = Pick(streams_);
        const accel_buffer_t b = Pick(buffers_);
        if (CALL(accel_stream_free_buffer, s, b) == ACCEL_SUCCESS) MarkDead(&buffers_, b);
        break;
      }
      case 20: {
        accel_module_source_t source = Out<accel_module_source_t>(ACCEL_STRUCTURE_TYPE_MODULE_SOURCE);
        source.format = in_->U8() > 16 ? ACCEL_KERNEL_FORMAT_NATIVE_HOST : uint64_t{1} << (in_->U8() % 9);
        source.data = &kModule;
        source.size = sizeof(kModule);
        auto desc = Out<accel_module_desc_t>(ACCEL_STRUCTURE_TYPE_MODULE_DESC);
        desc.sources = &source;
        desc.source_count = in_->U8() > 8 ? 1 : 0;
        desc.name = "fuzz";
        const accel_device_t device = Device();
        accel_module_t module = nullptr;
        if (CALL(accel_module_create, device, &desc, &module) == ACCEL_SUCCESS) {
          modules_.push_back({module, InstanceOf(device), true});
          accel_kernel_t kernel = nullptr;
          if (CALL(accel_module_get_kernel, module, "fill", &kernel) == ACCEL_SUCCESS) {
            kernels_.push_back({kernel, InstanceOf(device), true});
          }
        }
        break;
      }
      case 21: {
        const accel_module_t m = Pick(modules_);
        accel_kernel_t kernel = nullptr;
        CALL(accel_module_get_kernel, m, in_->U8() > 128 ? "fill" : "missing", &kernel);
        auto props = Out<accel_module_properties_t>(ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES);
        CALL(accel_module_get_properties, m, &props);
        const char* name = nullptr;
        CALL(accel_module_get_kernel_name, m, in_->U8() % 3, &name);
        auto kprops = Out<accel_kernel_properties_t>(ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES);
        CALL(accel_kernel_get_properties, Pick(kernels_), &kprops);
        auto info = Out<accel_kernel_argument_info_t>(ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO);
        CALL(accel_kernel_get_argument_info, Pick(kernels_), in_->U8() % 5, &info);
        break;
      }
      case 22: {
        if (int dead = PickDead(modules_); dead >= 0) {
          ExpectInvalidHandle("accel_module_destroy", accel_module_destroy(modules_[dead].handle));
          break;
        }
        accel_module_t m = Pick(modules_);
        if (CALL(accel_module_destroy, m) == ACCEL_SUCCESS) MarkDead(&modules_, m);
        break;
      }
      case 23:
      case 24: Launch(); break;
      case 25:
        CALL(accel_stream_enqueue_host_callback, Pick(streams_), in_->U8() > 8 ? Callback : nullptr,
             in_->U8() > 200 ? &g_calls : nullptr);
        break;
      case 26: CALL(accel_stream_clear_error, Pick(streams_)); break;
      case 27: {
        auto desc = Out<accel_buffer_import_desc_t>(ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC);
        desc.type = static_cast<accel_external_memory_type_t>(in_->U8() > 32 ? 1 : in_->U8() % 10);
        // The caller vouches for the range it imports, so it stays inside the arena, but for sizes and offsets that
        // wrap around the address space, which must be refused.
        const uint64_t size = in_->Size();
        desc.size = size > UINT64_MAX - 256 ? size : size % (kArenaHalf / 2) + 1;
        uint8_t* host = Host(desc.size);
        desc.handle = reinterpret_cast<uintptr_t>(host);
        const uint8_t offset = in_->U8();
        desc.offset = offset > 240 ? UINT64_MAX - offset : offset > 200 ? in_->U32() % (kArenaHalf / 2) : 0;
        desc.flags = in_->U8() % 3;
        desc.release = in_->U8() > 16 ? Release : nullptr;
        const accel_device_t device = Device();
        accel_buffer_t buffer = nullptr;
        if (CALL(accel_buffer_import, device, &desc, &buffer) == ACCEL_SUCCESS) {
          buffers_.push_back({buffer, InstanceOf(device), true});
          if (desc.release != nullptr) ++g_imported;
        }
        break;
      }
      case 28: Tenant(); break;
      case 29:
        if (instance_[1] == nullptr) {
          CreateInstance(1);
        } else {
          DestroyInstance(1);
        }
        break;
      case 30: Query(); break;
      default: {
        auto stats = Out<accel_copy_statistics_t>(ACCEL_STRUCTURE_TYPE_COPY_STATISTICS);
        CALL(accel_stream_get_copy_statistics, Pick(streams_), &stats);
        break;
      }
    }
  }

  void Launch() {
    static const uint32_t kGrid[] = {0, 1, 2, 5, 16};
    static const uint32_t kBlock[] = {0, 1, 3, 64, 256, 1025, UINT32_MAX};
    auto desc = Out<accel_launch_desc_t>(ACCEL_STRUCTURE_TYPE_LAUNCH_DESC);
    for (int d = 0; d < 3; ++d) {
      desc.grid[d] = d == 0 || in_->U8() > 200 ? kGrid[in_->U8() % 5] : 1;
      desc.block[d] = d == 0 || in_->U8() > 200 ? kBlock[in_->U8() % 7] : 1;
    }
    const uint32_t value = in_->U32();
    const uint32_t n = in_->U8() % 2 ? in_->U32() % 4096 : in_->U32();
    std::array<accel_kernel_arg_t, 4> args{};
    for (auto& a : args) a = Out<accel_kernel_arg_t>(ACCEL_STRUCTURE_TYPE_KERNEL_ARG);
    args[0].kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
    args[0].buffer = Pick(buffers_);
    args[0].offset = in_->U8() > 200 ? in_->Size() : 0;
    args[0].size = in_->U8() > 128 ? in_->Size() : 0;
    args[0].access = static_cast<accel_access_t>(in_->U8() % 5);
    args[1].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
    args[1].value = in_->U8() > 8 ? &value : nullptr;
    args[1].size = in_->U8() > 16 ? 4 : in_->U8() % 9;
    args[2].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
    args[2].value = &n;
    args[2].size = 4;
    args[3].kind = static_cast<accel_kernel_arg_kind_t>(in_->U8() % 6);
    args[3].size = in_->Size();
    if (in_->U8() > 240) args[in_->U8() % 3].kind = static_cast<accel_kernel_arg_kind_t>(in_->U8() % 6);
    desc.args = in_->U8() > 8 ? args.data() : nullptr;
    desc.arg_count = in_->U8() > 32 ? 3 : in_->U8() % 5;
    // A plain launch, or the same checked once and kept (a prepared launch), enqueued or destroyed later.
    const uint8_t how = in_->U8();
    if (how < 180) {
      CALL(accel_stream_launch_kernel, Pick(streams_), Pick(kernels_), &desc);
    } else if (how < 210) {
      const accel_kernel_t kernel = Pick(kernels_);
      accel_prepared_launch_t prepared = nullptr;
      if (CALL(accel_kernel_prepare_launch, kernel, &desc, &prepared) == ACCEL_SUCCESS) {
        int instance = 0;
        for (const auto& k : kernels_) {
          if (k.handle == kernel) instance = k.instance;
        }
        prepared_.push_back({prepared, instance, true});
      }
    } else if (how < 245) {
      for (int repeat = in_->U8() % 4; repeat >= 0; --repeat) {
        CALL(accel_stream_launch_prepared, Pick(streams_), Pick(prepared_));
      }
    } else {
      const accel_prepared_launch_t prepared = Pick(prepared_);
      if (CALL(accel_prepared_launch_destroy, prepared) == ACCEL_SUCCESS) MarkDead(&prepared_, prepared);
    }
  }

  void Tenant() {
    const uint8_t what = in_->U8() % 4;
    const int i = in_->U8() & 1;
    if (what == 0 && instance_[i] != nullptr) {
      auto desc = Out<accel_tenant_desc_t>(ACCEL_STRUCTURE_TYPE_TENANT_DESC);
      accel_tenant_limit_t limit{};
      if (!physical_[i].empty() && in_->U8() > 64) {
        limit.physical_device = physical_[i][in_->U8() % physical_[i].size()];
        limit.bytes = in_->Size();
        desc.limits = &limit;
        desc.limit_count = 1;
      }
      desc.other_limit = in_->U8() > 128 ? ACCEL_MEMORY_UNLIMITED : in_->Size();
      accel_tenant_t tenant = nullptr;
      if (CALL(accel_tenant_create, instance_[i], &desc, &tenant) == ACCEL_SUCCESS) {
        tenants_.push_back({tenant, i, true});
      }
    } else if (what == 1) {
      accel_tenant_t t = Pick(tenants_);
      if (CALL(accel_tenant_destroy, t) == ACCEL_SUCCESS) MarkDead(&tenants_, t);
    } else if (what == 2) {
      accel_tenant_t previous = nullptr;
      CALL(accel_thread_set_tenant, in_->U8() > 64 ? Pick(tenants_) : nullptr, &previous);
    } else if (!physical_[i].empty()) {
      auto usage = Out<accel_memory_usage_t>(ACCEL_STRUCTURE_TYPE_MEMORY_USAGE);
      CALL(accel_tenant_get_memory_usage, Pick(tenants_), physical_[i][in_->U8() % physical_[i].size()], &usage);
      CALL(accel_physical_device_get_memory_usage, physical_[i][in_->U8() % physical_[i].size()], &usage);
    }
  }

  void Query() {
    const accel_device_t device = Device();
    switch (in_->U8() % 6) {
      case 0: {
        uint8_t value[1100];
        size_t size = 0;
        const auto key = static_cast<accel_device_info_key_t>(in_->U8() % 40);
        const size_t capacity = in_->U8() > 64 ? sizeof(value) : in_->U8() % 9;
        CALL(accel_device_get_info, device, key, capacity, in_->U8() > 32 ? value : nullptr,
             in_->U8() > 32 ? &size : nullptr);
        break;
      }
      case 1: {
        auto caps = Out<accel_device_capabilities_t>(ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES);
        if (in_->U8() > 240) caps.struct_size = in_->U8();
        CALL(accel_device_get_capabilities, device, &caps);
        uint64_t free = 0;
        uint64_t total = 0;
        CALL(accel_device_get_memory_info, device, &free, in_->U8() > 16 ? &total : nullptr);
        break;
      }
      case 2: {
        auto link = Out<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
        CALL(accel_device_get_link, device, Device(), &link);
        CALL(accel_device_get_nic_link, device, in_->U8() % 3, &link);
        auto topology = Out<accel_device_topology_t>(ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY);
        CALL(accel_device_get_topology, device, &topology);
        auto domain = Out<accel_domain_t>(ACCEL_STRUCTURE_TYPE_DOMAIN);
        CALL(accel_device_get_domain, device, in_->U8() % 5, &domain);
        break;
      }
      case 3: {
        // A selector from the input's own bytes.
        std::string text;
        for (uint8_t len = in_->U8() % 48; len > 0; --len) text.push_back(static_cast<char>(in_->U8()));
        static const char* const kSelectors[] = {"kind==gpu", "mem>=40GiB && fp8", "format:native-host || !simulated"};
        const char* selector = in_->U8() > 128 ? kSelectors[in_->U8() % 3] : text.c_str();
        uint32_t column = 0;
        CALL(accel_selector_check, selector, &column);
        const int i = in_->U8() & 1;
        if (!physical_[i].empty()) {
          const accel_physical_device_t p = physical_[i][in_->U8() % physical_[i].size()];
          uint32_t matches = 0;
          CALL(accel_physical_device_matches, p, selector, &matches);
          char why[256];
          size_t size = 0;
          CALL(accel_physical_device_explain, p, selector, in_->U8() > 32 ? sizeof(why) : 4, why, &size);
        }
        break;
      }
      case 4: {
        accel_physical_device_t physical = nullptr;
        CALL(accel_device_get_physical_device, device, &physical);
        accel_backend_t backend = nullptr;
        if (CALL(accel_device_get_backend, device, &backend) == ACCEL_SUCCESS) {
          auto props = Out<accel_backend_properties_t>(ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES);
          CALL(accel_backend_get_properties, backend, &props);
          uint32_t n = in_->U8() % 3;
          accel_device_t devices[2];
          CALL(accel_backend_enumerate_devices, backend, &n, in_->U8() > 64 ? devices : nullptr);
        }
        break;
      }
      default: {
        const int i = in_->U8() & 1;
        uint32_t n = in_->U8() % 4;
        accel_device_t devices[3];
        CALL(accel_instance_enumerate_devices, in_->U8() > 16 ? instance_[i] : nullptr, &n,
             in_->U8() > 64 ? devices : nullptr);
        auto entry = Out<accel_loader_entry_t>(ACCEL_STRUCTURE_TYPE_LOADER_ENTRY);
        CALL(accel_instance_get_loader_entry, instance_[i], in_->U8() % 8, &entry);
        break;
      }
    }
  }

  template <typename H>
  static void MarkDead(std::vector<Object<H>>* objects, H handle) {
    for (auto& o : *objects) {
      if (o.handle == handle) o.alive = false;
    }
  }

  Bytes* in_;
  accel_instance_t instance_[2] = {nullptr, nullptr};
  std::vector<accel_device_t> devices_[2];
  std::vector<accel_physical_device_t> physical_[2];
  std::vector<accel_device_t> dead_devices_;
  std::vector<Object<accel_buffer_t>> buffers_;
  std::vector<Object<accel_stream_t>> streams_;
  std::vector<Object<accel_event_t>> events_;
  std::vector<Object<accel_module_t>> modules_;
  std::vector<Object<accel_kernel_t>> kernels_;
  std::vector<Object<accel_tenant_t>> tenants_;
  std::vector<Object<accel_prepared_launch_t>> prepared_;
};

}  // namespace

uint64_t AccelApiFuzzCalls() { return g_calls; }
uint64_t AccelApiFuzzErrors() { return g_errors; }

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  setenv("ACCEL_BACKENDS", "host,sim", 1);
  setenv("ACCEL_SIM_PROFILE", "a100-pcie-4", 0);  // four simulated devices: peer copies, several streams
  unsetenv("ACCEL_VISIBLE_DEVICES");
  unsetenv("ACCEL_MEMORY_LIMIT");
  unsetenv("ACCEL_SIM_FAULTS");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  Sequence(&in).Run();
  if (g_imported != g_released) {
    std::fprintf(stderr, "api-sequence fuzzer: %llu host imports, %llu releases\n",
                 static_cast<unsigned long long>(g_imported), static_cast<unsigned long long>(g_released));
    std::abort();
  }
  return 0;
}
