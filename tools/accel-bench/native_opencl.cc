// accel-bench's native OpenCL path (docs/accel-bench.md, "--native"): the work
// of accel_path.cc on the same OpenCL device, through the ICD loader opened
// with dlopen as backends/opencl does, in the most direct OpenCL way, as the
// baseline Accel is compared with:
//
//   init      one cl_context for the device, one in-order queue (no profiling), three buffers
//             (clCreateBuffer CL_MEM_READ_WRITE: two of max_size, one of 4 KiB), pageable host memory
//             of max_size, fill_u32 built from the corpus's OpenCL C (clCreateProgramWithSource +
//             clBuildProgram, no options), its arguments set once (clSetKernelArg: tiny buffer,
//             value 7, n 1), one warm-up launch
//   launch    clEnqueueNDRangeKernel(work_dim 1, global 1, local 1), then clFinish
//   batch     `count` clEnqueueNDRangeKernel, then one clFinish
//   copies    clEnqueueWriteBuffer / clEnqueueReadBuffer (non-blocking, from / to the pageable host
//             memory) or clEnqueueCopyBuffer, then clFinish
//   fill      clEnqueueFillBuffer (a 4-byte pattern), then clFinish
//
// The device is found as the backend lists it: platforms in order, each one's usable devices in
// order (backends/opencl/backend.cc), matched by CL_DEVICE_NAME (the backend's `name`).
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench.h"

namespace accel::bench {
namespace {

// The entry points used, as X(name without the "cl" prefix).
#define ACCEL_BENCH_CL_ENTRY_POINTS(X) \
  X(GetPlatformIDs)                    \
  X(GetPlatformInfo)                   \
  X(GetDeviceIDs)                      \
  X(GetDeviceInfo)                     \
  X(CreateContext)                     \
  X(ReleaseContext)                    \
  X(CreateCommandQueue)                \
  X(ReleaseCommandQueue)               \
  X(Finish)                            \
  X(CreateBuffer)                      \
  X(ReleaseMemObject)                  \
  X(EnqueueWriteBuffer)                \
  X(EnqueueReadBuffer)                 \
  X(EnqueueCopyBuffer)                 \
  X(EnqueueFillBuffer)                 \
  X(CreateProgramWithSource)           \
  X(BuildProgram)                      \
  X(GetProgramBuildInfo)               \
  X(ReleaseProgram)                    \
  X(CreateKernel)                      \
  X(ReleaseKernel)                     \
  X(SetKernelArg)                      \
  X(EnqueueNDRangeKernel)

struct ClApi {
#define ACCEL_BENCH_CL_DECLARE(name) decltype(&::cl##name) name = nullptr;
  ACCEL_BENCH_CL_ENTRY_POINTS(ACCEL_BENCH_CL_DECLARE)
#undef ACCEL_BENCH_CL_DECLARE
};

std::string ClErrorName(cl_int code) {
  switch (code) {
#define ACCEL_BENCH_CL_ERROR(e) \
  case e: return #e " (" + std::to_string(code) + ")";
    ACCEL_BENCH_CL_ERROR(CL_DEVICE_NOT_FOUND)
    ACCEL_BENCH_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    ACCEL_BENCH_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    ACCEL_BENCH_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    ACCEL_BENCH_CL_ERROR(CL_OUT_OF_RESOURCES)
    ACCEL_BENCH_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    ACCEL_BENCH_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    ACCEL_BENCH_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_VALUE)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_PLATFORM)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_DEVICE)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_CONTEXT)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_HOST_PTR)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_MEM_OBJECT)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_BINARY)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_PROGRAM)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_KERNEL_NAME)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_KERNEL)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_ARG_INDEX)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_ARG_VALUE)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_ARG_SIZE)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_EVENT)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_OPERATION)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    ACCEL_BENCH_CL_ERROR(CL_INVALID_PROPERTY)
#undef ACCEL_BENCH_CL_ERROR
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (-1001)";
    default: break;
  }
  return "OpenCL error " + std::to_string(code);
}

std::string Failure(const char* call, cl_int code) { return std::string(call) + " failed with " + ClErrorName(code); }

std::string PlatformString(const ClApi& cl, cl_platform_id platform, cl_platform_info key) {
  size_t size = 0;
  if (cl.GetPlatformInfo(platform, key, 0, nullptr, &size) != CL_SUCCESS || size == 0) return std::string();
  std::string value(size, '\0');
  if (cl.GetPlatformInfo(platform, key, size, value.data(), nullptr) != CL_SUCCESS) return std::string();
  value.resize(std::strlen(value.c_str()));
  return value;
}

std::string DeviceString(const ClApi& cl, cl_device_id device, cl_device_info key) {
  size_t size = 0;
  if (cl.GetDeviceInfo(device, key, 0, nullptr, &size) != CL_SUCCESS || size == 0) return std::string();
  std::string value(size, '\0');
  if (cl.GetDeviceInfo(device, key, size, value.data(), nullptr) != CL_SUCCESS) return std::string();
  value.resize(std::strlen(value.c_str()));
  return value;
}

// Whether "OpenCL <major>.<minor>..." names 1.2 or newer.
bool AtLeast12(const std::string& version) {
  int major = 0;
  int minor = 0;
  if (std::sscanf(version.c_str(), "OpenCL %d.%d", &major, &minor) != 2) return false;
  return major > 1 || (major == 1 && minor >= 2);
}

class OpenClPath final : public Path {
 public:
  ~OpenClPath() override {
    if (queue_ != nullptr) cl_.Finish(queue_);
    if (kernel_ != nullptr) cl_.ReleaseKernel(kernel_);
    if (program_ != nullptr) cl_.ReleaseProgram(program_);
    for (cl_mem m : {a_, b_, tiny_}) {
      if (m != nullptr) cl_.ReleaseMemObject(m);
    }
    if (queue_ != nullptr) cl_.ReleaseCommandQueue(queue_);
    if (context_ != nullptr) cl_.ReleaseContext(context_);
    // Opened RTLD_NODELETE like the backend: the drivers' threads and exit handlers outlive this.
    if (library_ != nullptr) dlclose(library_);
  }

  std::string Name() const override { return "opencl"; }

  // Opens the loader and finds the device; false with `*why` (not error_) when this device has no native twin.
  bool Find(const accel_device_capabilities_t& caps, uint32_t index_in_backend, std::string* why) {
    dlerror();
    library_ = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (library_ == nullptr) {
      const char* e = dlerror();
      *why = std::string("cannot load libOpenCL.so.1: ") + (e != nullptr ? e : "unknown error");
      return false;
    }
#define ACCEL_BENCH_CL_RESOLVE(name)                                            \
  cl_.name = reinterpret_cast<decltype(cl_.name)>(dlsym(library_, "cl" #name)); \
  if (cl_.name == nullptr) {                                                    \
    *why = "libOpenCL.so.1 does not export cl" #name;                           \
    return false;                                                               \
  }
    ACCEL_BENCH_CL_ENTRY_POINTS(ACCEL_BENCH_CL_RESOLVE)
#undef ACCEL_BENCH_CL_RESOLVE

    // The backend's devices, in its order: usable devices (available, OpenCL 1.2+, with global memory) of the
    // OpenCL 1.2+ platforms.
    struct Candidate {
      cl_platform_id platform;
      cl_device_id device;
      std::string name;
    };
    std::vector<Candidate> listed;
    cl_uint count = 0;
    cl_int err = cl_.GetPlatformIDs(0, nullptr, &count);
    if (err != CL_SUCCESS || count == 0) {
      *why = err != CL_SUCCESS ? Failure("clGetPlatformIDs", err) : "the OpenCL ICD loader found no platform";
      return false;
    }
    std::vector<cl_platform_id> platforms(count);
    err = cl_.GetPlatformIDs(count, platforms.data(), nullptr);
    if (err != CL_SUCCESS) {
      *why = Failure("clGetPlatformIDs", err);
      return false;
    }
    for (cl_platform_id platform : platforms) {
      if (!AtLeast12(PlatformString(cl_, platform, CL_PLATFORM_VERSION))) continue;
      cl_uint n = 0;
      if (cl_.GetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
      std::vector<cl_device_id> ids(n);
      if (cl_.GetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr) != CL_SUCCESS) continue;
      for (cl_device_id id : ids) {
        cl_bool available = CL_FALSE;
        cl_ulong global = 0;
        cl_.GetDeviceInfo(id, CL_DEVICE_AVAILABLE, sizeof(available), &available, nullptr);
        cl_.GetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(global), &global, nullptr);
        if (available != CL_TRUE || global == 0 || !AtLeast12(DeviceString(cl_, id, CL_DEVICE_VERSION))) continue;
        listed.push_back({platform, id, DeviceString(cl_, id, CL_DEVICE_NAME)});
      }
    }
    // caps.name holds CL_DEVICE_NAME, cut to its capacity.
    auto matches = [&](const Candidate& c) { return c.name.substr(0, sizeof(caps.name) - 1) == caps.name; };
    const Candidate* chosen = nullptr;
    if (index_in_backend < listed.size() && matches(listed[index_in_backend])) {
      chosen = &listed[index_in_backend];
    } else {
      for (const Candidate& c : listed) {
        if (matches(c)) {
          chosen = &c;
          break;
        }
      }
    }
    if (chosen == nullptr) {
      std::string names;
      for (const Candidate& c : listed) names += (names.empty() ? "'" : ", '") + c.name + "'";
      *why = std::string("no OpenCL device is named '") + caps.name + "' (the ICD loader lists " +
             (names.empty() ? std::string("none") : names) + ")";
      return false;
    }
    platform_ = chosen->platform;
    device_ = chosen->device;
    return true;
  }

  bool Init(uint64_t max_size, const std::string& corpus_dir) {
    host_.assign(max_size, 1);
    const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform_),
                                                0};
    cl_int err = CL_SUCCESS;
    context_ = cl_.CreateContext(properties, 1, &device_, nullptr, nullptr, &err);
    if (context_ == nullptr) return Fail("clCreateContext", err);
    queue_ = cl_.CreateCommandQueue(context_, device_, 0, &err);
    if (queue_ == nullptr) return Fail("clCreateCommandQueue", err);
    // A zero max_size (every size past max_allocation) still makes valid buffers.
    const size_t big = static_cast<size_t>(std::max<uint64_t>(max_size, 1));
    for (auto [out, size] : {std::pair{&a_, big}, std::pair{&b_, big}, std::pair{&tiny_, size_t{4096}}}) {
      *out = cl_.CreateBuffer(context_, CL_MEM_READ_WRITE, size, nullptr, &err);
      if (*out == nullptr) return Fail("clCreateBuffer", err);
    }

    const std::string path = CorpusFile(corpus_dir, "opencl-c", &error_);
    if (path.empty()) return false;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      error_ = "cannot read " + path;
      return false;
    }
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    const char* sources[] = {source.c_str()};
    const size_t lengths[] = {source.size()};
    program_ = cl_.CreateProgramWithSource(context_, 1, sources, lengths, &err);
    if (program_ == nullptr) return Fail("clCreateProgramWithSource", err);
    err = cl_.BuildProgram(program_, 1, &device_, "", nullptr, nullptr);
    if (err != CL_SUCCESS) {
      size_t size = 0;
      std::string log;
      if (cl_.GetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) == CL_SUCCESS &&
          size > 0) {
        log.resize(size);
        cl_.GetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
        log.resize(std::strlen(log.c_str()));
      }
      Fail("clBuildProgram", err);
      error_ += " for " + path + (log.empty() ? "" : ": " + log);
      return false;
    }
    kernel_ = cl_.CreateKernel(program_, "fill_u32", &err);
    if (kernel_ == nullptr) return Fail("clCreateKernel(fill_u32)", err);
    // The arguments never change: set once (the Accel path passes the same three every launch).
    if ((err = cl_.SetKernelArg(kernel_, 0, sizeof(cl_mem), &tiny_)) != CL_SUCCESS)
      return Fail("clSetKernelArg(0)", err);
    if ((err = cl_.SetKernelArg(kernel_, 1, sizeof(value_), &value_)) != CL_SUCCESS)
      return Fail("clSetKernelArg(1)", err);
    if ((err = cl_.SetKernelArg(kernel_, 2, sizeof(n_), &n_)) != CL_SUCCESS) return Fail("clSetKernelArg(2)", err);
    // The first launch finishes building the kernel; time what follows, not that.
    return TinyLaunchAndWait();
  }

  bool TinyLaunchAndWait() override { return Launch() && Wait(); }
  bool LaunchBatch(int count) override {
    for (int i = 0; i < count; ++i) {
      if (!Launch()) return false;
    }
    return Wait();
  }
  bool HostToDevice(uint64_t size) override {
    const cl_int err =
        cl_.EnqueueWriteBuffer(queue_, a_, CL_FALSE, 0, static_cast<size_t>(size), host_.data(), 0, nullptr, nullptr);
    return err == CL_SUCCESS ? Wait() : Fail("clEnqueueWriteBuffer", err);
  }
  bool DeviceToHost(uint64_t size) override {
    const cl_int err =
        cl_.EnqueueReadBuffer(queue_, a_, CL_FALSE, 0, static_cast<size_t>(size), host_.data(), 0, nullptr, nullptr);
    return err == CL_SUCCESS ? Wait() : Fail("clEnqueueReadBuffer", err);
  }
  bool DeviceToDevice(uint64_t size) override {
    const cl_int err = cl_.EnqueueCopyBuffer(queue_, a_, b_, 0, 0, static_cast<size_t>(size), 0, nullptr, nullptr);
    return err == CL_SUCCESS ? Wait() : Fail("clEnqueueCopyBuffer", err);
  }
  bool Fill(uint64_t size) override {
    const cl_uint pattern = 0x01020304;
    const cl_int err =
        cl_.EnqueueFillBuffer(queue_, b_, &pattern, sizeof(pattern), 0, static_cast<size_t>(size), 0, nullptr, nullptr);
    return err == CL_SUCCESS ? Wait() : Fail("clEnqueueFillBuffer", err);
  }

 private:
  bool Fail(const char* call, cl_int err) {
    error_ = Failure(call, err);
    return false;
  }
  bool Launch() {
    const size_t global = 1;
    const size_t local = 1;
    const cl_int err = cl_.EnqueueNDRangeKernel(queue_, kernel_, 1, nullptr, &global, &local, 0, nullptr, nullptr);
    return err == CL_SUCCESS || Fail("clEnqueueNDRangeKernel", err);
  }
  bool Wait() {
    const cl_int err = cl_.Finish(queue_);
    return err == CL_SUCCESS || Fail("clFinish", err);
  }

  void* library_ = nullptr;
  ClApi cl_;
  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_mem a_ = nullptr, b_ = nullptr, tiny_ = nullptr;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  std::vector<uint8_t> host_;
  cl_uint value_ = 7;
  cl_uint n_ = 1;
};

}  // namespace

std::unique_ptr<Path> MakeOpenClPath(const accel_device_capabilities_t& caps, uint32_t index_in_backend,
                                     uint64_t max_size, const std::string& corpus_dir, std::string* why) {
  auto path = std::make_unique<OpenClPath>();
  if (!path->Find(caps, index_in_backend, why)) return nullptr;
  if (!path->Init(max_size, corpus_dir)) {
    *why = "opencl: " + path->Error();
    return nullptr;
  }
  return path;
}

}  // namespace accel::bench
