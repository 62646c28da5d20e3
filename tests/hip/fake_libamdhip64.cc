// A fake HIP runtime for tests on machines without an AMD GPU (tests/hip/CMakeLists.txt): a shared library exporting
// host implementations of every entry point backends/hip/symbols.h lists, with the runtime's asynchronous semantics:
// memory is host memory, each hipStream_t is a thread running its work in order, events complete when the stream
// reaches them, and "kernels" are the five kernels of the conformance corpus (conformance/corpus/README.md) written
// in C++ and looked up by name in any code object. The backend loads it through ACCEL_HIP_LIBRARY.
//
// ACCEL_FAKE_HIP_DEVICES (default 2) sets the number of devices ("Fake HIP GPU <n>", gfx942, 256 MiB, 4 CUs, PCI
// 00fa:1<n>:00.0, joined by xGMI, peer access to the others); 0 makes hipInit fail with hipErrorNoDevice, as the
// real runtime does without a GPU. Built with ACCEL_FAKE_HIP_ROCM5 defined (libamdhip64_fake5.so), it leaves out ROCm
// 6's hipGetDevicePropertiesR0600, so that the backend reads ROCm 5's layout. Test-only: globals are fine here.
#define ACCEL_FAKE_API extern "C" __attribute__((visibility("default")))
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
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

using namespace accel::hip;  // NOLINT: the runtime API's declarations

namespace {

constexpr hipError_t kInvalidHandle = 400;
constexpr uint64_t kMemory = 256ull << 20;

struct Globals {
  std::mutex mutex;
  int device_count = 2;
  bool initialised = false;
  std::vector<uint64_t> used;
  std::map<uintptr_t, std::pair<int, size_t>> allocations;  // address -> device, size
};

Globals& G() {
  static Globals* globals = new Globals;  // never destroyed: driver threads may outlive static destruction
  return *globals;
}

thread_local int tls_device = 0;

int CurrentDevice() { return tls_device; }

double NowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// --- Streams: a thread running closures in order -------------------------------------------------------------------

struct FakeStream {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  bool busy = false;
  bool stop = false;
  std::thread thread;

  FakeStream() {
    thread = std::thread([this] {
      std::unique_lock lock(mutex);
      for (;;) {
        cv.wait(lock, [&] { return stop || !queue.empty(); });
        if (queue.empty()) return;
        auto work = std::move(queue.front());
        queue.pop_front();
        busy = true;
        lock.unlock();
        work();
        lock.lock();
        busy = false;
        cv.notify_all();
      }
    });
  }
  ~FakeStream() {
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    cv.notify_all();
    thread.join();
  }
  void Push(std::function<void()> work) {
    {
      std::lock_guard lock(mutex);
      queue.push_back(std::move(work));
    }
    cv.notify_all();
  }
  bool Idle() {
    std::lock_guard lock(mutex);
    return queue.empty() && !busy;
  }
  void Wait() {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return queue.empty() && !busy; });
  }
};

struct FakeEvent {
  unsigned int flags = 0;
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t recorded = 0;
  uint64_t completed = 0;
  double time_ms = 0;
};

FakeStream* S(hipStream_t s) { return reinterpret_cast<FakeStream*>(s); }
FakeEvent* E(hipEvent_t e) { return reinterpret_cast<FakeEvent*>(e); }
void* P(void* p) { return p; }

// --- The corpus's kernels ------------------------------------------------------------------------------------------

struct FakeFunction {
  std::string name;
  std::vector<size_t> params;  // sizes
};

struct FakeModule {
  std::vector<std::unique_ptr<FakeFunction>> functions;
};

using accel_test::fake_corpus::Kernels;
using accel_test::fake_corpus::Launch;
using accel_test::fake_corpus::Run;

// --- Entry points ----------------------------------------------------------------------------------------------

}  // namespace

ACCEL_FAKE_API hipError_t hipInit(unsigned int) {
  std::lock_guard lock(G().mutex);
  if (!G().initialised) {
    const char* count = std::getenv("ACCEL_FAKE_HIP_DEVICES");
    G().device_count = count != nullptr ? std::atoi(count) : 2;
    if (G().device_count <= 0) return hipErrorNoDevice;
    G().used.assign(static_cast<size_t>(G().device_count), 0);
    G().initialised = true;
  }
  return hipSuccess;
}
ACCEL_FAKE_API const char* hipGetErrorName(hipError_t code) {
  switch (code) {
    case hipSuccess: return "hipSuccess";
    case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
    case hipErrorNoDevice: return "hipErrorNoDevice";
    case hipErrorNotReady: return "hipErrorNotReady";
    case hipErrorInvalidImage: return "hipErrorInvalidImage";
    default: return "hipErrorUnknown";
  }
}
ACCEL_FAKE_API const char* hipGetErrorString(hipError_t code) {
  return code == hipErrorNoDevice ? "no ROCm-capable device is detected" : "fake HIP runtime error";
}
ACCEL_FAKE_API hipError_t hipDriverGetVersion(int* v) {
  *v = 60342134;
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipRuntimeGetVersion(int* v) {
  *v = 60342134;  // HIP 6.3
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipGetDeviceCount(int* n) {
  if (!G().initialised) return hipErrorNoDevice;
  *n = G().device_count;
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipGetDevice(int* d) {
  *d = tls_device;
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipSetDevice(int d) {
  if (d < 0 || d >= G().device_count) return hipErrorInvalidDevice;
  tls_device = d;
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipDeviceGet(hipDevice_t* d, int ordinal) {
  if (ordinal < 0 || ordinal >= G().device_count) return hipErrorInvalidDevice;
  *d = ordinal;
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipDeviceGetName(char* name, int len, hipDevice_t d) {
  std::snprintf(name, static_cast<size_t>(len), "Fake HIP GPU %d", d);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipDeviceGetAttribute(int* v, int attribute, int d) {
  switch (attribute) {
    case hipDeviceAttributeMaxThreadsPerBlock: *v = 1024; break;
    case hipDeviceAttributeMaxBlockDimX:
    case hipDeviceAttributeMaxBlockDimY:
    case hipDeviceAttributeMaxBlockDimZ: *v = 1024; break;
    case hipDeviceAttributeMaxGridDimX: *v = 2147483647; break;
    case hipDeviceAttributeMaxGridDimY:
    case hipDeviceAttributeMaxGridDimZ: *v = 65536; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: *v = 65536; break;
    case hipDeviceAttributeWarpSize: *v = 64; break;
    case hipDeviceAttributeClockRate: *v = 2100000; break;
    case hipDeviceAttributeMultiprocessorCount: *v = 4; break;
    case hipDeviceAttributeComputeCapabilityMajor: *v = 9; break;
    case hipDeviceAttributeComputeCapabilityMinor: *v = 4; break;
    case hipDeviceAttributeL2CacheSize: *v = 4 << 20; break;
    case hipDeviceAttributePciDomainId: *v = 0x0fa; break;  // no such PCI domain on a real machine
    case hipDeviceAttributePciBusId: *v = 0x10 + d; break;
    case hipDeviceAttributeCanMapHostMemory:
    case hipDeviceAttributeUnifiedAddressing: *v = 1; break;
    default: *v = 0; break;
  }
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t) {
  *bytes = kMemory;
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipDeviceGetPCIBusId(char* text, int len, int d) {
  std::snprintf(text, static_cast<size_t>(len), "00FA:%02X:00.0", 0x10 + d);  // HIP's upper-case hex
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipDeviceGetUuid(hipUUID* uuid, hipDevice_t d) {
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(0xa0 + i);
  uuid->bytes[15] = static_cast<char>(d);
  return hipSuccess;
}
namespace {
hipError_t WriteProperties(void* props, size_t arch_offset, int d) {
  if (d < 0 || d >= G().device_count) return hipErrorInvalidDevice;
  std::snprintf(static_cast<char*>(props), 256, "Fake HIP GPU %d", d);
  std::snprintf(static_cast<char*>(props) + arch_offset, kPropsGcnArchNameSize, "gfx942:sramecc+:xnack-");
  return hipSuccess;
}
}  // namespace
#ifndef ACCEL_FAKE_HIP_ROCM5
ACCEL_FAKE_API hipError_t hipGetDevicePropertiesR0600(void* props, int d) {
  return WriteProperties(props, kPropsR0600GcnArchNameOffset, d);
}
#endif
ACCEL_FAKE_API hipError_t hipGetDeviceProperties(void* props, int d) {
  return WriteProperties(props, kPropsR0000GcnArchNameOffset, d);
}
ACCEL_FAKE_API hipError_t hipDeviceCanAccessPeer(int* can, int a, int b) {
  *can = a != b ? 1 : 0;
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipDeviceEnablePeerAccess(int, unsigned int) { return hipSuccess; }
ACCEL_FAKE_API hipError_t hipExtGetLinkTypeAndHopCount(int, int, uint32_t* type, uint32_t* hops) {
  *type = 4;  // xGMI
  *hops = 1;
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipMemGetInfo(size_t* free_bytes, size_t* total) {
  const int d = CurrentDevice();
  if (d < 0) return hipErrorInvalidContext;
  std::lock_guard lock(G().mutex);
  *total = kMemory;
  *free_bytes = kMemory - G().used[static_cast<size_t>(d)];
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipMalloc(void** p, size_t size) {
  const int d = CurrentDevice();
  if (d < 0) return hipErrorInvalidContext;
  std::lock_guard lock(G().mutex);
  if (size > kMemory - G().used[static_cast<size_t>(d)]) return hipErrorOutOfMemory;
  void* memory = std::aligned_alloc(256, (size + 255) / 256 * 256);
  if (memory == nullptr) return hipErrorOutOfMemory;
  G().used[static_cast<size_t>(d)] += size;
  G().allocations[reinterpret_cast<uintptr_t>(memory)] = {d, size};
  *p = memory;
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipFree(hipDeviceptr_t p) {
  std::lock_guard lock(G().mutex);
  const auto found = G().allocations.find(reinterpret_cast<uintptr_t>(p));
  if (found == G().allocations.end()) return hipErrorInvalidValue;
  G().used[static_cast<size_t>(found->second.first)] -= found->second.second;
  std::free(P(p));
  G().allocations.erase(found);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipHostMalloc(void** p, size_t size, unsigned int) {
  *p = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  return *p != nullptr ? hipSuccess : hipErrorOutOfMemory;
}
ACCEL_FAKE_API hipError_t hipHostFree(void* p) {
  std::free(p);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipHostGetDevicePointer(void** d, void* p, unsigned int) {
  *d = p;
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipMemcpyHtoD(hipDeviceptr_t d, void* s, size_t n) {
  std::memcpy(P(d), s, n);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipMemcpyDtoH(void* d, hipDeviceptr_t s, size_t n) {
  std::memcpy(d, P(s), n);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t d, void* s, size_t n, hipStream_t st) {
  S(st)->Push([=] { std::memcpy(P(d), s, n); });
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipMemcpyDtoHAsync(void* d, hipDeviceptr_t s, size_t n, hipStream_t st) {
  S(st)->Push([=] { std::memcpy(d, P(s), n); });
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t d, hipDeviceptr_t s, size_t n, hipStream_t st) {
  S(st)->Push([=] { std::memmove(P(d), P(s), n); });
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipMemcpyPeerAsync(void* d, int, const void* s, int, size_t n, hipStream_t st) {
  return hipMemcpyDtoDAsync(d, const_cast<void*>(s), n, st);
}
template <typename T>
hipError_t Memset(hipDeviceptr_t d, T value, size_t count, hipStream_t st) {
  S(st)->Push([=] { std::fill_n(static_cast<T*>(P(d)), count, value); });
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipMemsetD8Async(hipDeviceptr_t d, unsigned char v, size_t n, hipStream_t s) {
  return Memset(d, v, n, s);
}
ACCEL_FAKE_API hipError_t hipMemsetD16Async(hipDeviceptr_t d, unsigned short v, size_t n,
                                            hipStream_t s) {  // NOLINT(runtime/int)
  return Memset(d, v, n, s);
}
ACCEL_FAKE_API hipError_t hipMemsetD32Async(hipDeviceptr_t d, int v, size_t n, hipStream_t s) {
  return Memset(d, static_cast<unsigned int>(v), n, s);
}
ACCEL_FAKE_API hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned int) {
  *s = reinterpret_cast<hipStream_t>(new FakeStream);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipStreamDestroy(hipStream_t s) {
  delete S(s);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipStreamSynchronize(hipStream_t s) {
  S(s)->Wait();
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipStreamQuery(hipStream_t s) { return S(s)->Idle() ? hipSuccess : hipErrorNotReady; }
ACCEL_FAKE_API hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned int) {
  FakeEvent* event = E(e);
  uint64_t epoch = 0;
  {
    std::lock_guard lock(event->mutex);
    epoch = event->recorded;
  }
  S(s)->Push([event, epoch] {
    std::unique_lock lock(event->mutex);
    event->cv.wait(lock, [&] { return event->completed >= epoch; });
  });
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned int flags) {
  auto* event = new FakeEvent;
  event->flags = flags;
  *e = reinterpret_cast<hipEvent_t>(event);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipEventDestroy(hipEvent_t e) {
  delete E(e);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) {
  FakeEvent* event = E(e);
  uint64_t epoch = 0;
  {
    std::lock_guard lock(event->mutex);
    epoch = ++event->recorded;
  }
  S(s)->Push([event, epoch] {
    {
      std::lock_guard lock(event->mutex);
      event->completed = std::max(event->completed, epoch);
      event->time_ms = NowMs();
    }
    event->cv.notify_all();
  });
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipEventQuery(hipEvent_t e) {
  std::lock_guard lock(E(e)->mutex);
  return E(e)->completed >= E(e)->recorded ? hipSuccess : hipErrorNotReady;
}
ACCEL_FAKE_API hipError_t hipEventSynchronize(hipEvent_t e) {
  FakeEvent* event = E(e);
  std::unique_lock lock(event->mutex);
  const uint64_t epoch = event->recorded;
  event->cv.wait(lock, [&] { return event->completed >= epoch; });
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) {
  FakeEvent* events[2] = {E(a), E(b)};
  double t[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    std::lock_guard lock(events[i]->mutex);
    if ((events[i]->flags & hipEventDisableTiming) != 0 || events[i]->recorded == 0) return kInvalidHandle;
    if (events[i]->completed < events[i]->recorded) return hipErrorNotReady;
    t[i] = events[i]->time_ms;
  }
  *ms = static_cast<float>(t[1] - t[0]);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipModuleLoadData(hipModule_t* m, const void* image) {
  // Any ELF image: the corpus kernels whose names it holds (the backend read them from its metadata already).
  const auto* bytes = static_cast<const char*>(image);
  if (std::memcmp(bytes,
                  "\x7f"
                  "ELF",
                  4) != 0)
    return hipErrorInvalidImage;
  // The image's size: its section headers come last (as LLVM lays out code objects).
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0;
  std::memcpy(&shoff, bytes + 40, 8);
  std::memcpy(&shentsize, bytes + 58, 2);
  std::memcpy(&shnum, bytes + 60, 2);
  const size_t size = static_cast<size_t>(shoff + uint64_t{shentsize} * shnum);
  auto* module = new FakeModule;
  for (const auto& [name, params] : Kernels()) {
    if (memmem(bytes, size, name.c_str(), name.size()) != nullptr) {
      module->functions.push_back(std::make_unique<FakeFunction>(FakeFunction{name, params}));
    }
  }
  *m = reinterpret_cast<hipModule_t>(module);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipModuleUnload(hipModule_t m) {
  delete reinterpret_cast<FakeModule*>(m);
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipModuleGetFunction(hipFunction_t* f, hipModule_t m, const char* name) {
  for (auto& function : reinterpret_cast<FakeModule*>(m)->functions) {
    if (function->name == name) {
      *f = reinterpret_cast<hipFunction_t>(function.get());
      return hipSuccess;
    }
  }
  return hipErrorNotFound;
}
ACCEL_FAKE_API hipError_t hipFuncGetAttribute(int* v, int attribute, hipFunction_t) {
  *v = attribute == HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
  return hipSuccess;
}
ACCEL_FAKE_API hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                                unsigned int bx, unsigned int by, unsigned int bz, unsigned int,
                                                hipStream_t s, void** params, void**) {
  const auto* function = reinterpret_cast<FakeFunction*>(f);
  Launch launch{{gx, gy, gz}, {bx, by, bz}, {}};
  for (size_t i = 0; i < function->params.size(); ++i) {  // copied now, as the driver does
    const auto* p = static_cast<const unsigned char*>(params[i]);
    launch.params.emplace_back(p, p + function->params[i]);
  }
  S(s)->Push([name = function->name, launch] { Run(name, launch); });
  return hipSuccess;
}
