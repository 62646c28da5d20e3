// A fake Level Zero loader for tests on machines without an Intel GPU (tests/level_zero/CMakeLists.txt): a shared
// library exporting host implementations of every entry point backends/level_zero/symbols.h lists, with Level
// Zero's asynchronous semantics: memory is host memory, each asynchronous immediate command list is a thread running
// its commands in order (a synchronous one runs them on the caller), events are signalled when their list reaches
// them and carry the host's clock in nanoseconds as their kernel timestamps. Modules accept any SPIR-V; their
// "kernels" are the five kernels of the conformance corpus written in C++ (tests/common/fake_corpus_kernels.h),
// looked up by name, with the corpus's SPIR-V parameters (reduce_u32's local-memory scratch last). The backend loads
// it through ACCEL_LEVEL_ZERO_LIBRARY.
//
// ACCEL_FAKE_ZE_DEVICES (default 2) sets the number of devices of its one driver ("Fake Level Zero GPU <n>",
// product 0x0bd9 (xe-hpc), 256 MiB, 4 Xe-cores, PCI 00fa:2<n>:00.0, peers of each other unless
// ACCEL_FAKE_ZE_NO_PEERS=1); 0 makes zeInit fail with
// ZE_RESULT_ERROR_UNINITIALIZED, as the real loader does without a driver. ACCEL_FAKE_ZE_COMMAND_DELAY_US (read when
// a list is created; default 0) makes every command of an asynchronous list take that long, so that work stays
// pending while a test polls; accel_fake_ze_live_event_pools() says how many event pools exist. Test-only: globals
// are fine here. An event used on a device its pool was not created for is refused (ZE_RESULT_ERROR_INVALID_ARGUMENT),
// as the spec does not allow it. ACCEL_FAKE_ZE_REQUIRED_GROUP="x,y,z" makes every kernel report that required
// work-group size.
#define ACCEL_FAKE_API extern "C" __attribute__((visibility("default")))
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/fake_corpus_kernels.h"
#include "symbols.h"

using namespace accel::level_zero;  // NOLINT: the API's declarations

namespace {

constexpr uint64_t kMemory = 256ull << 20;

struct _Device {
  int index = 0;
};

struct Globals {
  std::mutex mutex;
  bool initialised = false;
  int driver = 0;  // its address is the one driver's handle
  std::vector<std::unique_ptr<_Device>> devices;
  std::vector<uint64_t> used;
  std::map<uintptr_t, std::pair<int, size_t>> allocations;  // address -> device (-1 host), size
};

Globals& G() {
  static Globals* globals = new Globals;  // never destroyed: list threads may outlive static destruction
  return *globals;
}

_Device* D(ze_device_handle_t d) { return reinterpret_cast<_Device*>(d); }

uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// --- Command lists: a thread running closures in order (asynchronous), or the caller (synchronous) ----------------

std::atomic<int64_t> g_live_pools{0};

struct FakeList {
  ze_device_handle_t device = nullptr;  // whose list it is (the pool-visibility check)
  bool synchronous = false;
  std::chrono::microseconds delay{0};  // ACCEL_FAKE_ZE_COMMAND_DELAY_US
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  bool stop = false;
  std::thread thread;

  explicit FakeList(bool sync) : synchronous(sync) {
    if (synchronous) return;
    if (const char* us = std::getenv("ACCEL_FAKE_ZE_COMMAND_DELAY_US"))
      delay = std::chrono::microseconds(std::atoll(us));
    thread = std::thread([this] {
      std::unique_lock lock(mutex);
      for (;;) {
        cv.wait(lock, [&] { return stop || !queue.empty(); });
        if (queue.empty()) return;
        auto work = std::move(queue.front());
        queue.pop_front();
        lock.unlock();
        if (delay.count() > 0) std::this_thread::sleep_for(delay);
        work();
        lock.lock();
      }
    });
  }
  ~FakeList() {
    if (synchronous) return;
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    cv.notify_all();
    thread.join();
  }
  void Push(std::function<void()> work) {
    if (synchronous) {
      work();
      return;
    }
    {
      std::lock_guard lock(mutex);
      queue.push_back(std::move(work));
    }
    cv.notify_all();
  }
};

struct FakePool {
  uint32_t flags = 0;
  std::vector<ze_device_handle_t> devices;  // those it was created for; empty: every device of the context
};

struct FakeEvent {
  FakePool* pool = nullptr;
  std::mutex mutex;
  std::condition_variable cv;
  bool signalled = false;
  uint64_t time_ns = 0;
  void Signal() {
    {
      std::lock_guard lock(mutex);
      signalled = true;
      time_ns = NowNs();
    }
    cv.notify_all();
  }
};

struct FakeModule {};
// A kernel: its name, group size and arguments as last set (a local-memory argument has no bytes).
struct FakeKernel {
  std::string name;
  uint32_t parameters = 0;
  uint32_t group[3] = {1, 1, 1};
  std::map<uint32_t, std::vector<unsigned char>> arguments;
};

using accel_test::fake_corpus::Kernels;
using accel_test::fake_corpus::Launch;
using accel_test::fake_corpus::Run;

FakeKernel* K(ze_kernel_handle_t k) { return reinterpret_cast<FakeKernel*>(k); }

FakeList* L(ze_command_list_handle_t l) { return reinterpret_cast<FakeList*>(l); }
FakeEvent* E(ze_event_handle_t e) { return reinterpret_cast<FakeEvent*>(e); }

// The spec: an event may be used only on the devices its pool was created for (every device of the context when
// the pool named none). A real driver's behaviour otherwise is undefined; the fake refuses.
bool Visible(ze_event_handle_t e, ze_command_list_handle_t list) {
  const std::vector<ze_device_handle_t>& devices = E(e)->pool->devices;
  return devices.empty() || std::find(devices.begin(), devices.end(), L(list)->device) != devices.end();
}

bool Valid(ze_device_handle_t d) {
  for (const auto& device : G().devices) {
    if (reinterpret_cast<ze_device_handle_t>(device.get()) == d) return true;
  }
  return false;
}

}  // namespace

// --- Drivers and devices ---------------------------------------------------------------------------------------

ACCEL_FAKE_API ze_result_t zeInit(uint32_t) {
  std::lock_guard lock(G().mutex);
  if (!G().initialised) {
    const char* count = std::getenv("ACCEL_FAKE_ZE_DEVICES");
    const int n = count != nullptr ? std::atoi(count) : 2;
    if (n <= 0) return ZE_RESULT_ERROR_UNINITIALIZED;
    for (int i = 0; i < n; ++i) {
      G().devices.push_back(std::make_unique<_Device>());
      G().devices.back()->index = i;
    }
    G().used.assign(static_cast<size_t>(n), 0);
    G().initialised = true;
  }
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeDriverGet(uint32_t* count, ze_driver_handle_t* drivers) {
  if (!G().initialised) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (drivers != nullptr && *count >= 1) drivers[0] = reinterpret_cast<ze_driver_handle_t>(&G().driver);
  *count = 1;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeDriverGetProperties(ze_driver_handle_t, ze_driver_properties_t* p) {
  p->driverVersion = 0x01036b1d;  // "1.3.27421"
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeDeviceGet(ze_driver_handle_t, uint32_t* count, ze_device_handle_t* devices) {
  const auto n = static_cast<uint32_t>(G().devices.size());
  if (devices != nullptr) {
    for (uint32_t i = 0; i < std::min(*count, n); ++i)
      devices[i] = reinterpret_cast<ze_device_handle_t>(G().devices[i].get());
  }
  *count = devices != nullptr ? std::min(*count, n) : n;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeDeviceGetSubDevices(ze_device_handle_t, uint32_t* count, ze_device_handle_t*) {
  *count = 0;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeDeviceGetProperties(ze_device_handle_t d, ze_device_properties_t* p) {
  if (!Valid(d)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  p->type = ZE_DEVICE_TYPE_GPU;
  p->vendorId = 0x8086;
  p->deviceId = 0x0bd9;
  p->flags = ZE_DEVICE_PROPERTY_FLAG_ECC;
  p->coreClockRate = 1600;
  p->maxMemAllocSize = kMemory;
  p->numThreadsPerEU = 8;
  p->physicalEUSimdWidth = 16;
  p->numEUsPerSubslice = 8;
  p->numSubslicesPerSlice = 4;
  p->numSlices = 1;
  p->timerResolution = 1;
  p->timestampValidBits = 64;
  p->kernelTimestampValidBits = 64;
  for (int i = 0; i < 16; ++i) p->uuid[i] = static_cast<uint8_t>(0xb0 + i);
  p->uuid[15] = static_cast<uint8_t>(D(d)->index);
  std::snprintf(p->name, sizeof(p->name), "Fake Level Zero GPU %d", D(d)->index);
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeDeviceGetComputeProperties(ze_device_handle_t, ze_device_compute_properties_t* p) {
  p->maxTotalGroupSize = 1024;
  p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
  p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 0xffffffffu;
  p->maxSharedLocalMemory = 64 << 10;
  p->numSubGroupSizes = 2;
  p->subGroupSizes[0] = 16;
  p->subGroupSizes[1] = 32;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeDeviceGetModuleProperties(ze_device_handle_t, ze_device_module_properties_t* p) {
  p->spirvVersionSupported = (1u << 16) | (2u << 8);
  p->flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64 | ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS |
             ZE_DEVICE_MODULE_FLAG_DP4A;
  p->maxArgumentsSize = 2048;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t, uint32_t* count,
                                                       ze_device_memory_properties_t* p) {
  if (p != nullptr && *count >= 1) {
    p[0].totalSize = kMemory;
    std::snprintf(p[0].name, sizeof(p[0].name), "HBM");
  }
  *count = 1;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeDevicePciGetPropertiesExt(ze_device_handle_t d, ze_pci_ext_properties_t* p) {
  p->domain = 0x0fa;  // no such PCI domain on a real machine
  p->bus = 0x20 + static_cast<uint32_t>(D(d)->index);
  p->device = 0;
  p->function = 0;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeDeviceCanAccessPeer(ze_device_handle_t a, ze_device_handle_t b, ze_bool_t* value) {
  const char* none = std::getenv("ACCEL_FAKE_ZE_NO_PEERS");
  *value = a != b && (none == nullptr || std::strcmp(none, "1") != 0) ? 1 : 0;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeContextCreate(ze_driver_handle_t, const ze_context_desc_t*, ze_context_handle_t* c) {
  *c = reinterpret_cast<ze_context_handle_t>(new int(0));
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeContextDestroy(ze_context_handle_t c) {
  delete reinterpret_cast<int*>(c);
  return ZE_RESULT_SUCCESS;
}

// --- Memory ------------------------------------------------------------------------------------------------------

ACCEL_FAKE_API ze_result_t zeMemAllocDevice(ze_context_handle_t, const ze_device_mem_alloc_desc_t*, size_t size,
                                            size_t alignment, ze_device_handle_t d, void** p) {
  const auto index = static_cast<size_t>(D(d)->index);
  std::lock_guard lock(G().mutex);
  if (size > kMemory - G().used[index]) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  const size_t align = std::max<size_t>(alignment, 256);
  void* memory = std::aligned_alloc(align, (size + align - 1) / align * align);
  if (memory == nullptr) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  G().used[index] += size;
  G().allocations[reinterpret_cast<uintptr_t>(memory)] = {static_cast<int>(index), size};
  *p = memory;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeMemAllocHost(ze_context_handle_t, const ze_host_mem_alloc_desc_t*, size_t size, size_t,
                                          void** p) {
  void* memory = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  if (memory == nullptr) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  std::lock_guard lock(G().mutex);
  G().allocations[reinterpret_cast<uintptr_t>(memory)] = {-1, size};
  *p = memory;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeMemFree(ze_context_handle_t, void* p) {
  std::lock_guard lock(G().mutex);
  const auto found = G().allocations.find(reinterpret_cast<uintptr_t>(p));
  if (found == G().allocations.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (found->second.first >= 0) G().used[static_cast<size_t>(found->second.first)] -= found->second.second;
  std::free(p);
  G().allocations.erase(found);
  return ZE_RESULT_SUCCESS;
}

// --- Command lists -----------------------------------------------------------------------------------------------

ACCEL_FAKE_API ze_result_t zeCommandListCreateImmediate(ze_context_handle_t, ze_device_handle_t device,
                                                        const ze_command_queue_desc_t* desc,
                                                        ze_command_list_handle_t* list) {
  auto* fake = new FakeList(desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  fake->device = device;
  *list = reinterpret_cast<ze_command_list_handle_t>(fake);
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeCommandListDestroy(ze_command_list_handle_t list) {
  delete L(list);
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t list, void* dst, const void* src,
                                                         size_t size, ze_event_handle_t signal, uint32_t,
                                                         ze_event_handle_t*) {
  L(list)->Push([=] {
    std::memmove(dst, src, size);
    if (signal != nullptr) E(signal)->Signal();
  });
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeCommandListAppendMemoryFill(ze_command_list_handle_t list, void* ptr, const void* pattern,
                                                         size_t pattern_size, size_t size, ze_event_handle_t signal,
                                                         uint32_t, ze_event_handle_t*) {
  if (pattern_size == 0 || pattern_size > 16 || size % pattern_size != 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  std::vector<unsigned char> value(static_cast<const unsigned char*>(pattern),
                                   static_cast<const unsigned char*>(pattern) + pattern_size);
  L(list)->Push([=] {
    for (size_t at = 0; at < size; at += value.size())
      std::memcpy(static_cast<char*>(ptr) + at, value.data(), value.size());
    if (signal != nullptr) E(signal)->Signal();
  });
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeCommandListAppendBarrier(ze_command_list_handle_t list, ze_event_handle_t signal, uint32_t,
                                                      ze_event_handle_t*) {
  // The list runs in order already: a barrier only signals.
  if (signal != nullptr && !Visible(signal, list)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (signal != nullptr) L(list)->Push([signal] { E(signal)->Signal(); });
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeCommandListAppendSignalEvent(ze_command_list_handle_t list, ze_event_handle_t signal) {
  return zeCommandListAppendBarrier(list, signal, 0, nullptr);
}
ACCEL_FAKE_API ze_result_t zeCommandListAppendWaitOnEvents(ze_command_list_handle_t list, uint32_t count,
                                                           ze_event_handle_t* events) {
  std::vector<FakeEvent*> waits;
  for (uint32_t i = 0; i < count; ++i) {
    if (!Visible(events[i], list)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    waits.push_back(E(events[i]));
  }
  L(list)->Push([waits] {
    for (FakeEvent* e : waits) {
      std::unique_lock lock(e->mutex);
      e->cv.wait(lock, [&] { return e->signalled; });
    }
  });
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t list, ze_kernel_handle_t k,
                                                           const ze_group_count_t* groups, ze_event_handle_t signal,
                                                           uint32_t, ze_event_handle_t*) {
  const FakeKernel* kernel = K(k);
  Launch launch{{groups->groupCountX, groups->groupCountY, groups->groupCountZ},
                {kernel->group[0], kernel->group[1], kernel->group[2]},
                {}};
  for (uint32_t i = 0; i < kernel->parameters; ++i) {  // copied now, as the driver does
    const auto found = kernel->arguments.find(i);
    if (found == kernel->arguments.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // an argument never set
    launch.params.push_back(found->second);
  }
  L(list)->Push([name = kernel->name, launch, signal] {
    Run(name, launch);
    if (signal != nullptr) E(signal)->Signal();
  });
  return ZE_RESULT_SUCCESS;
}

// --- Events ------------------------------------------------------------------------------------------------------

ACCEL_FAKE_API ze_result_t zeEventPoolCreate(ze_context_handle_t, const ze_event_pool_desc_t* desc, uint32_t count,
                                             ze_device_handle_t* devices, ze_event_pool_handle_t* pool) {
  auto* p = new FakePool;
  ++g_live_pools;
  p->flags = desc->flags;
  if (devices != nullptr) p->devices.assign(devices, devices + count);
  *pool = reinterpret_cast<ze_event_pool_handle_t>(p);
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeEventPoolDestroy(ze_event_pool_handle_t pool) {
  --g_live_pools;
  delete reinterpret_cast<FakePool*>(pool);
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeEventCreate(ze_event_pool_handle_t pool, const ze_event_desc_t*, ze_event_handle_t* e) {
  auto* event = new FakeEvent;
  event->pool = reinterpret_cast<FakePool*>(pool);
  *e = reinterpret_cast<ze_event_handle_t>(event);
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeEventDestroy(ze_event_handle_t e) {
  delete E(e);
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeEventHostSynchronize(ze_event_handle_t e, uint64_t) {
  std::unique_lock lock(E(e)->mutex);
  E(e)->cv.wait(lock, [&] { return E(e)->signalled; });
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeEventQueryStatus(ze_event_handle_t e) {
  std::lock_guard lock(E(e)->mutex);
  return E(e)->signalled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}
ACCEL_FAKE_API ze_result_t zeEventHostReset(ze_event_handle_t e) {
  std::lock_guard lock(E(e)->mutex);
  E(e)->signalled = false;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeEventQueryKernelTimestamp(ze_event_handle_t e, ze_kernel_timestamp_result_t* t) {
  FakeEvent* event = E(e);
  if ((event->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) == 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(event->mutex);
  if (!event->signalled) return ZE_RESULT_NOT_READY;
  t->globalStart = t->globalEnd = t->contextStart = t->contextEnd = event->time_ns;
  return ZE_RESULT_SUCCESS;
}

// --- Modules and kernels -----------------------------------------------------------------------------------------

ACCEL_FAKE_API ze_result_t zeModuleCreate(ze_context_handle_t, ze_device_handle_t, const ze_module_desc_t* desc,
                                          ze_module_handle_t* m, ze_module_build_log_handle_t* log) {
  if (log != nullptr) *log = nullptr;
  uint32_t magic = 0;
  if (desc->inputSize >= 4) std::memcpy(&magic, desc->pInputModule, 4);
  if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV || magic != 0x07230203) return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  *m = reinterpret_cast<ze_module_handle_t>(new FakeModule);
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeModuleDestroy(ze_module_handle_t m) {
  delete reinterpret_cast<FakeModule*>(m);
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t) { return ZE_RESULT_SUCCESS; }
ACCEL_FAKE_API ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t, size_t* size, char* text) {
  if (text != nullptr && *size > 0) text[0] = '\0';
  *size = 1;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeKernelCreate(ze_module_handle_t, const ze_kernel_desc_t* desc, ze_kernel_handle_t* k) {
  const auto found = Kernels().find(desc->pKernelName);
  if (found == Kernels().end()) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
  auto* kernel = new FakeKernel;
  kernel->name = desc->pKernelName;
  // The SPIR-V kernel has reduce_u32's local-memory scratch as a last parameter, which CUDA's and HIP's have not.
  kernel->parameters = static_cast<uint32_t>(found->second.size()) + (kernel->name == "reduce_u32" ? 1 : 0);
  *k = reinterpret_cast<ze_kernel_handle_t>(kernel);
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeKernelDestroy(ze_kernel_handle_t k) {
  delete K(k);
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t k, uint32_t x, uint32_t y, uint32_t z) {
  if (x == 0 || y == 0 || z == 0 || uint64_t{x} * y * z > 1024) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  K(k)->group[0] = x;
  K(k)->group[1] = y;
  K(k)->group[2] = z;
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t k, uint32_t index, size_t size,
                                                    const void* value) {
  if (index >= K(k)->parameters) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
  const auto* bytes = static_cast<const unsigned char*>(value);
  K(k)->arguments[index] =
      value != nullptr ? std::vector<unsigned char>(bytes, bytes + size) : std::vector<unsigned char>();
  return ZE_RESULT_SUCCESS;
}
ACCEL_FAKE_API ze_result_t zeKernelGetProperties(ze_kernel_handle_t k, ze_kernel_properties_t* p) {
  p->numKernelArgs = K(k)->parameters;
  // ACCEL_FAKE_ZE_REQUIRED_GROUP="x,y,z": every kernel says it was compiled for that work-group size.
  if (const char* required = std::getenv("ACCEL_FAKE_ZE_REQUIRED_GROUP")) {
    unsigned x = 0, y = 0, z = 0;
    if (std::sscanf(required, "%u,%u,%u", &x, &y, &z) == 3) {
      p->requiredGroupSizeX = x;
      p->requiredGroupSizeY = y;
      p->requiredGroupSizeZ = z;
    }
  }
  return ZE_RESULT_SUCCESS;
}

ACCEL_FAKE_API int64_t accel_fake_ze_live_event_pools() { return g_live_pools.load(); }
