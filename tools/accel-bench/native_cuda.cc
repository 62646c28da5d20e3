// accel-bench's native CUDA path (docs/accel-bench.md, "--native"): the work of accel_path.cc on the same CUDA
// device, through the driver API opened with dlopen and resolved through cuGetProcAddress_v2 at CUDA 12.0 as
// backends/cuda does (its symbols.h declares the types), in the most direct way, as the baseline Accel is compared
// with:
//
//   init      the device's primary context (cuDevicePrimaryCtxRetain, pushed current), one non-blocking stream,
//             three buffers (cuMemAlloc: two of max_size, one of 4 KiB), pageable host memory of max_size,
//             fill_u32 from the corpus's PTX (cuModuleLoadData + cuModuleGetFunction), its parameters built once
//             (tiny buffer, value 7, n 1), one warm-up launch
//   launch    cuLaunchKernel(grid 1, block 1, no shared memory), then cuStreamSynchronize
//   batch     `count` cuLaunchKernel, then one cuStreamSynchronize
//   copies    cuMemcpyHtoDAsync / cuMemcpyDtoHAsync (from / to the pageable host memory) or cuMemcpyDtoDAsync, then
//             cuStreamSynchronize
//   fill      cuMemsetD32Async (a 4-byte pattern), then cuStreamSynchronize
//
// The driver is the one the backend loads (ACCEL_CUDA_LIBRARY, else libcuda.so.1). The device is found by its PCI
// bus id (the backend's `pci_bus_id`), else by its index among the driver's devices.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench.h"
#include "symbols.h"

namespace accel::bench {
namespace {

using namespace accel::cuda;  // NOLINT: the driver API's declarations

class CudaPath final : public Path {
 public:
  ~CudaPath() override {
    if (stream_ != nullptr) cu_.cuStreamSynchronize(stream_);
    if (module_ != nullptr) cu_.cuModuleUnload(module_);
    for (CUdeviceptr m : {a_, b_, tiny_}) {
      if (m != 0) cu_.cuMemFree(m);
    }
    if (stream_ != nullptr) cu_.cuStreamDestroy(stream_);
    if (pushed_) {
      CUcontext popped = nullptr;
      cu_.cuCtxPopCurrent(&popped);
    }
    if (context_ != nullptr) cu_.cuDevicePrimaryCtxRelease(device_);
    if (library_ != nullptr) dlclose(library_);  // RTLD_NODELETE, like the backend
  }

  std::string Name() const override { return "cuda"; }

  // Opens the driver and finds the device; false with `*why` (not error_) when this device has no native twin.
  bool Find(const accel_device_capabilities_t& caps, uint32_t index_in_backend, std::string* why) {
    // The driver the backend loads: ACCEL_CUDA_LIBRARY when set (backends/cuda/README.md), else libcuda.so.1.
    const char* configured = std::getenv("ACCEL_CUDA_LIBRARY");
    const std::string name = configured != nullptr && configured[0] != '\0' ? configured : kDriverLibraryName;
    dlerror();
    library_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (library_ == nullptr) {
      const char* e = dlerror();
      *why = "cannot load " + name + ": " + (e != nullptr ? e : "unknown error");
      return false;
    }
    cu_.cuInit = reinterpret_cast<CuInitFn>(dlsym(library_, "cuInit"));
    cu_.cuGetErrorName = reinterpret_cast<CuGetErrorNameFn>(dlsym(library_, "cuGetErrorName"));
    auto get_proc = reinterpret_cast<CuGetProcAddressV2Fn>(dlsym(library_, "cuGetProcAddress_v2"));
    if (cu_.cuInit == nullptr || get_proc == nullptr) {
      *why = name + " is not a CUDA 12 driver";
      return false;
    }
    CUresult r = cu_.cuInit(0);
    if (r != CUDA_SUCCESS) {
      *why = Failure("cuInit", r);
      return false;
    }
#define ACCEL_BENCH_CU_RESOLVE(symbol, type)                                                            \
  {                                                                                                     \
    void* address = nullptr;                                                                            \
    int status = 0;                                                                                     \
    r = get_proc(#symbol, &address, kCudaApiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status);             \
    if (r != CUDA_SUCCESS || address == nullptr) {                                                      \
      *why = Failure("cuGetProcAddress_v2(" #symbol ")", r == CUDA_SUCCESS ? CUDA_ERROR_NOT_FOUND : r); \
      return false;                                                                                     \
    }                                                                                                   \
    cu_.symbol = reinterpret_cast<type>(address);                                                       \
  }
    ACCEL_CUDA_ENTRY_POINTS(ACCEL_BENCH_CU_RESOLVE)
#undef ACCEL_BENCH_CU_RESOLVE
    int count = 0;
    if ((r = cu_.cuDeviceGetCount(&count)) != CUDA_SUCCESS || count == 0) {
      *why = r != CUDA_SUCCESS ? Failure("cuDeviceGetCount", r) : "the driver reports no device";
      return false;
    }
    int chosen = -1;
    for (int i = 0; i < count && chosen < 0; ++i) {
      CUdevice d = 0;
      int domain = 0, bus = 0, slot = 0;
      if (cu_.cuDeviceGet(&d, i) != CUDA_SUCCESS) continue;
      cu_.cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d);
      cu_.cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
      cu_.cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d);
      char id[32];
      std::snprintf(id, sizeof(id), "%04x:%02x:%02x.0", domain, bus, slot);
      if (caps.pci_bus_id[0] != '\0' && std::strcmp(id, caps.pci_bus_id) == 0) chosen = i;
    }
    if (chosen < 0 && caps.pci_bus_id[0] == '\0' && index_in_backend < static_cast<uint32_t>(count)) {
      chosen = static_cast<int>(index_in_backend);
    }
    if (chosen < 0) {
      *why = std::string("no CUDA device is at PCI ") + caps.pci_bus_id;
      return false;
    }
    if ((r = cu_.cuDeviceGet(&device_, chosen)) != CUDA_SUCCESS) {
      *why = Failure("cuDeviceGet", r);
      return false;
    }
    return true;
  }

  bool Init(uint64_t max_size, const std::string& corpus_dir) {
    host_.assign(max_size, 1);
    CUresult r = cu_.cuDevicePrimaryCtxRetain(&context_, device_);
    if (r != CUDA_SUCCESS) {
      context_ = nullptr;
      return Fail("cuDevicePrimaryCtxRetain", r);
    }
    if ((r = cu_.cuCtxPushCurrent(context_)) != CUDA_SUCCESS) return Fail("cuCtxPushCurrent", r);
    pushed_ = true;
    if ((r = cu_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) return Fail("cuStreamCreate", r);
    const size_t big = static_cast<size_t>(std::max<uint64_t>(max_size, 1));
    for (auto [out, size] : {std::pair{&a_, big}, std::pair{&b_, big}, std::pair{&tiny_, size_t{4096}}}) {
      if ((r = cu_.cuMemAlloc(out, size)) != CUDA_SUCCESS) return Fail("cuMemAlloc", r);
    }
    const std::string path = CorpusFile(corpus_dir, "ptx", &error_);
    if (path.empty()) return false;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      error_ = "cannot read " + path;
      return false;
    }
    std::stringstream text;
    text << in.rdbuf();
    const std::string ptx = text.str();
    if ((r = cu_.cuModuleLoadDataEx(&module_, ptx.c_str(), 0, nullptr, nullptr)) != CUDA_SUCCESS) {
      module_ = nullptr;
      Fail("cuModuleLoadDataEx", r);
      error_ += " for " + path;
      return false;
    }
    if ((r = cu_.cuModuleGetFunction(&function_, module_, "fill_u32")) != CUDA_SUCCESS) {
      return Fail("cuModuleGetFunction(fill_u32)", r);
    }
    // The parameters never change: built once (the Accel path passes the same three every launch).
    params_[0] = &tiny_;
    params_[1] = &value_;
    params_[2] = &n_;
    return TinyLaunchAndWait();  // the first launch loads the kernel; time what follows, not that
  }

  bool TinyLaunchAndWait() override { return Launch() && Wait(); }
  bool LaunchBatch(int count) override {
    for (int i = 0; i < count; ++i) {
      if (!Launch()) return false;
    }
    return Wait();
  }
  bool HostToDevice(uint64_t size) override {
    const CUresult r = cu_.cuMemcpyHtoDAsync(a_, host_.data(), static_cast<size_t>(size), stream_);
    return r == CUDA_SUCCESS ? Wait() : Fail("cuMemcpyHtoDAsync", r);
  }
  bool DeviceToHost(uint64_t size) override {
    const CUresult r = cu_.cuMemcpyDtoHAsync(host_.data(), a_, static_cast<size_t>(size), stream_);
    return r == CUDA_SUCCESS ? Wait() : Fail("cuMemcpyDtoHAsync", r);
  }
  bool DeviceToDevice(uint64_t size) override {
    const CUresult r = cu_.cuMemcpyDtoDAsync(b_, a_, static_cast<size_t>(size), stream_);
    return r == CUDA_SUCCESS ? Wait() : Fail("cuMemcpyDtoDAsync", r);
  }
  bool Fill(uint64_t size) override {
    const CUresult r = cu_.cuMemsetD32Async(b_, 0x01020304u, static_cast<size_t>(size / 4), stream_);
    return r == CUDA_SUCCESS ? Wait() : Fail("cuMemsetD32Async", r);
  }

 private:
  std::string Failure(const char* call, CUresult r) const {
    const char* name = nullptr;
    if (cu_.cuGetErrorName == nullptr || cu_.cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) {
      name = "CUDA error";
    }
    return std::string(call) + " failed with " + name + " (" + std::to_string(r) + ")";
  }
  bool Fail(const char* call, CUresult r) {
    error_ = Failure(call, r);
    return false;
  }
  bool Launch() {
    const CUresult r = cu_.cuLaunchKernel(function_, 1, 1, 1, 1, 1, 1, 0, stream_, params_, nullptr);
    return r == CUDA_SUCCESS || Fail("cuLaunchKernel", r);
  }
  bool Wait() {
    const CUresult r = cu_.cuStreamSynchronize(stream_);
    return r == CUDA_SUCCESS || Fail("cuStreamSynchronize", r);
  }

  void* library_ = nullptr;
  CuApi cu_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  bool pushed_ = false;
  CUstream stream_ = nullptr;
  CUdeviceptr a_ = 0, b_ = 0, tiny_ = 0;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  void* params_[3] = {};
  std::vector<uint8_t> host_;
  unsigned int value_ = 7;
  unsigned int n_ = 1;
};

}  // namespace

std::unique_ptr<Path> MakeCudaPath(const accel_device_capabilities_t& caps, uint32_t index_in_backend,
                                   uint64_t max_size, const std::string& corpus_dir, std::string* why) {
  auto path = std::make_unique<CudaPath>();
  if (!path->Find(caps, index_in_backend, why)) return nullptr;
  if (!path->Init(max_size, corpus_dir)) {
    *why = "cuda: " + path->Error();
    return nullptr;
  }
  return path;
}

}  // namespace accel::bench
