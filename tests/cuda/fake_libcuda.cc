// A fake CUDA driver for tests on machines without a GPU (tests/cuda/CMakeLists.txt): a shared library exporting
// cuInit, cuGetErrorName and cuGetProcAddress_v2, which hands out host implementations of every entry point
// backends/cuda/symbols.h lists, with the driver's asynchronous semantics: memory is host memory, each CUstream is a
// thread running its work in order, events complete when the stream reaches them, and "kernels" are the five kernels
// of the conformance corpus (conformance/corpus/README.md) written in C++ and looked up by name in any PTX or cubin.
// It lets the whole conformance suite run against the CUDA backend in CI (conformance.cuda-fake.*).
//
// ACCEL_FAKE_CUDA_DEVICES (default 2) sets the number of devices, each with 256 MiB, compute capability 9.0, peer
// access to the others. Test-only: globals are fine here.
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

using namespace accel::cuda;  // NOLINT: the driver API's declarations

namespace {

constexpr CUresult kInvalidHandle = 400;
constexpr uint64_t kMemory = 256ull << 20;

struct FakeContext {
  int device = 0;
};

struct Globals {
  std::mutex mutex;
  int device_count = 2;
  std::vector<std::unique_ptr<FakeContext>> contexts;
  std::vector<uint64_t> used;
  std::map<uintptr_t, std::pair<int, size_t>> allocations;  // address -> device, size
};

Globals& G() {
  static Globals* globals = new Globals;  // never destroyed: driver threads may outlive static destruction
  return *globals;
}

thread_local std::vector<CUcontext> tls_stack;

int CurrentDevice() {
  if (tls_stack.empty() || tls_stack.back() == nullptr) return -1;
  return reinterpret_cast<FakeContext*>(tls_stack.back())->device;
}

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

FakeStream* S(CUstream s) { return reinterpret_cast<FakeStream*>(s); }
FakeEvent* E(CUevent e) { return reinterpret_cast<FakeEvent*>(e); }
void* P(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

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

CUresult DriverGetVersion(int* v) {
  *v = 12080;
  return CUDA_SUCCESS;
}
CUresult GetErrorString(CUresult, const char** s) {
  *s = "fake driver error";
  return CUDA_SUCCESS;
}
CUresult DeviceGetCount(int* n) {
  *n = G().device_count;
  return CUDA_SUCCESS;
}
CUresult DeviceGet(CUdevice* d, int ordinal) {
  if (ordinal < 0 || ordinal >= G().device_count) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult DeviceGetName(char* name, int len, CUdevice d) {
  std::snprintf(name, static_cast<size_t>(len), "Fake CUDA GPU %d", d);
  return CUDA_SUCCESS;
}
CUresult DeviceGetAttribute(int* v, int attribute, CUdevice d) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 101376; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1000000; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 4; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 1 << 20; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *v = 0x0fa; break;  // no such PCI domain on a real machine
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = 0x10 + d; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
    default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}
CUresult DeviceTotalMem(size_t* bytes, CUdevice) {
  *bytes = kMemory;
  return CUDA_SUCCESS;
}
CUresult DeviceGetUuid(CUuuid* uuid, CUdevice d) {
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(0xf0 + i);
  uuid->bytes[15] = static_cast<char>(d);
  return CUDA_SUCCESS;
}
CUresult DeviceCanAccessPeer(int* can, CUdevice a, CUdevice b) {
  *can = a != b ? 1 : 0;
  return CUDA_SUCCESS;
}
CUresult DeviceGetP2PAttribute(int* v, int, CUdevice, CUdevice) {
  *v = 1;
  return CUDA_SUCCESS;
}
CUresult PrimaryCtxRetain(CUcontext* c, CUdevice d) {
  *c = reinterpret_cast<CUcontext>(G().contexts[static_cast<size_t>(d)].get());
  return CUDA_SUCCESS;
}
CUresult PrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult CtxGetCurrent(CUcontext* c) {
  *c = tls_stack.empty() ? nullptr : tls_stack.back();
  return CUDA_SUCCESS;
}
CUresult CtxPushCurrent(CUcontext c) {
  tls_stack.push_back(c);
  return CUDA_SUCCESS;
}
CUresult CtxPopCurrent(CUcontext* c) {
  if (tls_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (c != nullptr) *c = tls_stack.back();
  tls_stack.pop_back();
  return CUDA_SUCCESS;
}
CUresult CtxEnablePeerAccess(CUcontext, unsigned int) { return CUDA_SUCCESS; }
CUresult MemGetInfo(size_t* free_bytes, size_t* total) {
  const int d = CurrentDevice();
  if (d < 0) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(G().mutex);
  *total = kMemory;
  *free_bytes = kMemory - G().used[static_cast<size_t>(d)];
  return CUDA_SUCCESS;
}
CUresult MemAlloc(CUdeviceptr* p, size_t size) {
  const int d = CurrentDevice();
  if (d < 0) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(G().mutex);
  if (size > kMemory - G().used[static_cast<size_t>(d)]) return CUDA_ERROR_OUT_OF_MEMORY;
  void* memory = std::aligned_alloc(256, (size + 255) / 256 * 256);
  if (memory == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  G().used[static_cast<size_t>(d)] += size;
  G().allocations[reinterpret_cast<uintptr_t>(memory)] = {d, size};
  *p = reinterpret_cast<uintptr_t>(memory);
  return CUDA_SUCCESS;
}
CUresult MemFree(CUdeviceptr p) {
  std::lock_guard lock(G().mutex);
  const auto found = G().allocations.find(static_cast<uintptr_t>(p));
  if (found == G().allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  G().used[static_cast<size_t>(found->second.first)] -= found->second.second;
  std::free(P(p));
  G().allocations.erase(found);
  return CUDA_SUCCESS;
}
CUresult MemHostAlloc(void** p, size_t size, unsigned int) {
  *p = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  return *p != nullptr ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult MemFreeHost(void* p) {
  std::free(p);
  return CUDA_SUCCESS;
}
CUresult MemHostGetDevicePointer(CUdeviceptr* d, void* p, unsigned int) {
  *d = reinterpret_cast<uintptr_t>(p);
  return CUDA_SUCCESS;
}
CUresult MemcpyHtoD(CUdeviceptr d, const void* s, size_t n) {
  std::memcpy(P(d), s, n);
  return CUDA_SUCCESS;
}
CUresult MemcpyDtoH(void* d, CUdeviceptr s, size_t n) {
  std::memcpy(d, P(s), n);
  return CUDA_SUCCESS;
}
CUresult MemcpyHtoDAsync(CUdeviceptr d, const void* s, size_t n, CUstream st) {
  S(st)->Push([=] { std::memcpy(P(d), s, n); });
  return CUDA_SUCCESS;
}
CUresult MemcpyDtoHAsync(void* d, CUdeviceptr s, size_t n, CUstream st) {
  S(st)->Push([=] { std::memcpy(d, P(s), n); });
  return CUDA_SUCCESS;
}
CUresult MemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  S(st)->Push([=] { std::memmove(P(d), P(s), n); });
  return CUDA_SUCCESS;
}
CUresult MemcpyPeerAsync(CUdeviceptr d, CUcontext, CUdeviceptr s, CUcontext, size_t n, CUstream st) {
  return MemcpyDtoDAsync(d, s, n, st);
}
template <typename T>
CUresult Memset(CUdeviceptr d, T value, size_t count, CUstream st) {
  S(st)->Push([=] { std::fill_n(static_cast<T*>(P(d)), count, value); });
  return CUDA_SUCCESS;
}
CUresult MemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { return Memset(d, v, n, s); }
CUresult MemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {  // NOLINT(runtime/int)
  return Memset(d, v, n, s);
}
CUresult MemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) { return Memset(d, v, n, s); }
CUresult StreamCreate(CUstream* s, unsigned int) {
  *s = reinterpret_cast<CUstream>(new FakeStream);
  return CUDA_SUCCESS;
}
CUresult StreamDestroy(CUstream s) {
  delete S(s);
  return CUDA_SUCCESS;
}
CUresult StreamSynchronize(CUstream s) {
  if (s == nullptr) return CUDA_SUCCESS;  // the legacy default stream: the fake's synchronous copies ran on it
  S(s)->Wait();
  return CUDA_SUCCESS;
}
CUresult StreamQuery(CUstream s) { return S(s)->Idle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY; }
CUresult StreamWaitEvent(CUstream s, CUevent e, unsigned int) {
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
  return CUDA_SUCCESS;
}
CUresult EventCreate(CUevent* e, unsigned int flags) {
  auto* event = new FakeEvent;
  event->flags = flags;
  *e = reinterpret_cast<CUevent>(event);
  return CUDA_SUCCESS;
}
CUresult EventDestroy(CUevent e) {
  delete E(e);
  return CUDA_SUCCESS;
}
CUresult EventRecord(CUevent e, CUstream s) {
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
  return CUDA_SUCCESS;
}
CUresult EventQuery(CUevent e) {
  std::lock_guard lock(E(e)->mutex);
  return E(e)->completed >= E(e)->recorded ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
CUresult EventSynchronize(CUevent e) {
  FakeEvent* event = E(e);
  std::unique_lock lock(event->mutex);
  const uint64_t epoch = event->recorded;
  event->cv.wait(lock, [&] { return event->completed >= epoch; });
  return CUDA_SUCCESS;
}
CUresult EventElapsedTime(float* ms, CUevent a, CUevent b) {
  FakeEvent* events[2] = {E(a), E(b)};
  double t[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    std::lock_guard lock(events[i]->mutex);
    if ((events[i]->flags & CU_EVENT_DISABLE_TIMING) != 0 || events[i]->recorded == 0) return kInvalidHandle;
    if (events[i]->completed < events[i]->recorded) return CUDA_ERROR_NOT_READY;
    t[i] = events[i]->time_ms;
  }
  *ms = static_cast<float>(t[1] - t[0]);
  return CUDA_SUCCESS;
}
CUresult ModuleLoadDataEx(CUmodule* m, const void* image, unsigned int count, int* options, void** values) {
  const auto* bytes = static_cast<const char*>(image);
  const bool elf = std::memcmp(bytes,
                               "\x7f"
                               "ELF",
                               4) == 0;
  if (!elf && std::strstr(bytes, ".entry") == nullptr) {
    for (unsigned int i = 0; i < count; ++i) {
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
        std::snprintf(static_cast<char*>(values[i]), 64, "fake ptxas: error: no .entry");
    }
    return CUDA_ERROR_INVALID_PTX;
  }
  auto* module = new FakeModule;
  for (const auto& [name, params] : Kernels()) {
    if (elf || std::strstr(bytes, (".entry " + name + "(").c_str()) != nullptr) {
      module->functions.push_back(std::make_unique<FakeFunction>(FakeFunction{name, params}));
    }
  }
  *m = reinterpret_cast<CUmodule>(module);
  return CUDA_SUCCESS;
}
CUresult ModuleUnload(CUmodule m) {
  delete reinterpret_cast<FakeModule*>(m);
  return CUDA_SUCCESS;
}
CUresult ModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  for (auto& function : reinterpret_cast<FakeModule*>(m)->functions) {
    if (function->name == name) {
      *f = reinterpret_cast<CUfunction>(function.get());
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}
CUresult FuncGetAttribute(int* v, int attribute, CUfunction) {
  *v = attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
  return CUDA_SUCCESS;
}
CUresult FuncSetAttribute(CUfunction, int, int) { return CUDA_SUCCESS; }
CUresult LaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                      unsigned int bz, unsigned int, CUstream s, void** params, void**) {
  const auto* function = reinterpret_cast<FakeFunction*>(f);
  Launch launch{{gx, gy, gz}, {bx, by, bz}, {}};
  for (size_t i = 0; i < function->params.size(); ++i) {  // copied now, as the driver does
    const auto* p = static_cast<const unsigned char*>(params[i]);
    launch.params.emplace_back(p, p + function->params[i]);
  }
  S(s)->Push([name = function->name, launch] { Run(name, launch); });
  return CUDA_SUCCESS;
}
CUresult ModuleGetFunctionCount(unsigned int* n, CUmodule m) {
  *n = static_cast<unsigned int>(reinterpret_cast<FakeModule*>(m)->functions.size());
  return CUDA_SUCCESS;
}
CUresult ModuleEnumerateFunctions(CUfunction* out, unsigned int n, CUmodule m) {
  auto& functions = reinterpret_cast<FakeModule*>(m)->functions;
  for (unsigned int i = 0; i < n && i < functions.size(); ++i)
    out[i] = reinterpret_cast<CUfunction>(functions[i].get());
  return CUDA_SUCCESS;
}
CUresult FuncGetName(const char** name, CUfunction f) {
  *name = reinterpret_cast<FakeFunction*>(f)->name.c_str();
  return CUDA_SUCCESS;
}
CUresult FuncGetParamInfo(CUfunction f, size_t index, size_t* offset, size_t* size) {
  const auto& params = reinterpret_cast<FakeFunction*>(f)->params;
  if (index >= params.size()) return CUDA_ERROR_INVALID_VALUE;
  *offset = 0;
  for (size_t i = 0; i < index; ++i) *offset += params[i];
  *size = params[index];
  return CUDA_SUCCESS;
}

const std::map<std::string, void*>& Table() {
  static const std::map<std::string, void*> table = {
      {"cuDriverGetVersion", reinterpret_cast<void*>(DriverGetVersion)},
      {"cuGetErrorString", reinterpret_cast<void*>(GetErrorString)},
      {"cuDeviceGetCount", reinterpret_cast<void*>(DeviceGetCount)},
      {"cuDeviceGet", reinterpret_cast<void*>(DeviceGet)},
      {"cuDeviceGetName", reinterpret_cast<void*>(DeviceGetName)},
      {"cuDeviceGetAttribute", reinterpret_cast<void*>(DeviceGetAttribute)},
      {"cuDeviceTotalMem", reinterpret_cast<void*>(DeviceTotalMem)},
      {"cuDeviceGetUuid", reinterpret_cast<void*>(DeviceGetUuid)},
      {"cuDeviceCanAccessPeer", reinterpret_cast<void*>(DeviceCanAccessPeer)},
      {"cuDeviceGetP2PAttribute", reinterpret_cast<void*>(DeviceGetP2PAttribute)},
      {"cuDevicePrimaryCtxRetain", reinterpret_cast<void*>(PrimaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease", reinterpret_cast<void*>(PrimaryCtxRelease)},
      {"cuCtxGetCurrent", reinterpret_cast<void*>(CtxGetCurrent)},
      {"cuCtxPushCurrent", reinterpret_cast<void*>(CtxPushCurrent)},
      {"cuCtxPopCurrent", reinterpret_cast<void*>(CtxPopCurrent)},
      {"cuCtxEnablePeerAccess", reinterpret_cast<void*>(CtxEnablePeerAccess)},
      {"cuMemGetInfo", reinterpret_cast<void*>(MemGetInfo)},
      {"cuMemAlloc", reinterpret_cast<void*>(MemAlloc)},
      {"cuMemFree", reinterpret_cast<void*>(MemFree)},
      {"cuMemHostAlloc", reinterpret_cast<void*>(MemHostAlloc)},
      {"cuMemFreeHost", reinterpret_cast<void*>(MemFreeHost)},
      {"cuMemHostGetDevicePointer", reinterpret_cast<void*>(MemHostGetDevicePointer)},
      {"cuMemcpyHtoD", reinterpret_cast<void*>(MemcpyHtoD)},
      {"cuMemcpyDtoH", reinterpret_cast<void*>(MemcpyDtoH)},
      {"cuMemcpyHtoDAsync", reinterpret_cast<void*>(MemcpyHtoDAsync)},
      {"cuMemcpyDtoHAsync", reinterpret_cast<void*>(MemcpyDtoHAsync)},
      {"cuMemcpyDtoDAsync", reinterpret_cast<void*>(MemcpyDtoDAsync)},
      {"cuMemcpyPeerAsync", reinterpret_cast<void*>(MemcpyPeerAsync)},
      {"cuMemsetD8Async", reinterpret_cast<void*>(MemsetD8Async)},
      {"cuMemsetD16Async", reinterpret_cast<void*>(MemsetD16Async)},
      {"cuMemsetD32Async", reinterpret_cast<void*>(MemsetD32Async)},
      {"cuStreamCreate", reinterpret_cast<void*>(StreamCreate)},
      {"cuStreamDestroy", reinterpret_cast<void*>(StreamDestroy)},
      {"cuStreamSynchronize", reinterpret_cast<void*>(StreamSynchronize)},
      {"cuStreamQuery", reinterpret_cast<void*>(StreamQuery)},
      {"cuStreamWaitEvent", reinterpret_cast<void*>(StreamWaitEvent)},
      {"cuEventCreate", reinterpret_cast<void*>(EventCreate)},
      {"cuEventDestroy", reinterpret_cast<void*>(EventDestroy)},
      {"cuEventRecord", reinterpret_cast<void*>(EventRecord)},
      {"cuEventQuery", reinterpret_cast<void*>(EventQuery)},
      {"cuEventSynchronize", reinterpret_cast<void*>(EventSynchronize)},
      {"cuEventElapsedTime", reinterpret_cast<void*>(EventElapsedTime)},
      {"cuModuleLoadDataEx", reinterpret_cast<void*>(ModuleLoadDataEx)},
      {"cuModuleUnload", reinterpret_cast<void*>(ModuleUnload)},
      {"cuModuleGetFunction", reinterpret_cast<void*>(ModuleGetFunction)},
      {"cuFuncGetAttribute", reinterpret_cast<void*>(FuncGetAttribute)},
      {"cuFuncSetAttribute", reinterpret_cast<void*>(FuncSetAttribute)},
      {"cuLaunchKernel", reinterpret_cast<void*>(LaunchKernel)},
      {"cuModuleGetFunctionCount", reinterpret_cast<void*>(ModuleGetFunctionCount)},
      {"cuModuleEnumerateFunctions", reinterpret_cast<void*>(ModuleEnumerateFunctions)},
      {"cuFuncGetName", reinterpret_cast<void*>(FuncGetName)},
      {"cuFuncGetParamInfo", reinterpret_cast<void*>(FuncGetParamInfo)},
  };
  return table;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuInit(unsigned int) {
  std::lock_guard lock(G().mutex);
  if (G().contexts.empty()) {
    const char* count = std::getenv("ACCEL_FAKE_CUDA_DEVICES");
    G().device_count = count != nullptr ? std::atoi(count) : 2;
    if (G().device_count <= 0) return CUDA_ERROR_NO_DEVICE;
    for (int d = 0; d < G().device_count; ++d) G().contexts.push_back(std::make_unique<FakeContext>(FakeContext{d}));
    G().used.assign(static_cast<size_t>(G().device_count), 0);
  }
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuGetErrorName(CUresult code, const char** name) {
  switch (code) {
    case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_READY: *name = "CUDA_ERROR_NOT_READY"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_PTX: *name = "CUDA_ERROR_INVALID_PTX"; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

extern "C" __attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int,
                                                                               cuuint64_t, int* status) {
  const auto found = Table().find(symbol);
  if (status != nullptr) *status = found != Table().end() ? 0 : 1;
  if (found == Table().end()) {
    *pfn = nullptr;
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = found->second;
  return CUDA_SUCCESS;
}
