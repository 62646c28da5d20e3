// native-host modules and kernels: the validated copy of a module's kernel table
// (from in-process function pointers or a shared library kept open), the
// module and kernel handles over it, and a launch copied at enqueue and run
// work-group by work-group on the context's thread pool.
#ifndef ACCEL_BACKENDS_HOST_MODULE_H_
#define ACCEL_BACKENDS_HOST_MODULE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host_backend.h"

namespace accel::host {

class Library;  // a dlopen()ed shared library, closed when the last owner drops it (module.cc)
class Scratch;
class ThreadPool;
class Storage;

// One kernel as the module declared it, with every string copied.
// Immutable once its image is built.
struct KernelDecl {
  std::string name;
  accel_native_kernel_fn function = nullptr;
  std::vector<accel_kernel_argument_info_t> arguments;  // `name` points into argument_names, or is NULL
  std::vector<std::string> argument_names;
  uint32_t max_work_group_size = 0;  // the declared one, or the device's when it declared 0
  uint32_t required_work_group_size[3] = {0, 0, 0};
  uint64_t local_memory_size = 0;  // static, bytes
};

// A loaded module: the library it came from (none for in-process functions) and its kernels. Shared by the module
// handle, its kernel handles and every launch of them, so the library stays open, and the strings stay valid, until
// the last of those is gone.
// Immutable after ModuleImage::Load; safe to read from any thread.
struct ModuleImage {
  std::shared_ptr<Library> library;  // first member: destroyed (dlclose) last
  std::vector<KernelDecl> kernels;
  std::vector<const char*> names;  // kernels[i].name.c_str(), for module_enumerate_kernels

  const KernelDecl* Find(const char* name) const;
};

// A module handle. Immutable.
struct Module {
  Device* device = nullptr;
  std::shared_ptr<const ModuleImage> image;
};

// A kernel handle: its module's image and its declaration in it. Immutable.
struct Kernel {
  Device* device = nullptr;
  std::shared_ptr<const ModuleImage> image;
  const KernelDecl* decl = nullptr;
};

// How a launch ended: ACCEL_SUCCESS, or the first failing work-group's error and what happened
// ("work-group (3,0,0) returned ACCEL_ERROR_INVALID_ARGUMENT").
struct LaunchResult {
  accel_status_t status = ACCEL_SUCCESS;
  std::string message;
};

// A kernel launch copied at enqueue: geometry, the scalar bytes, references to the buffers' storage (so that a
// buffer freed after the enqueue lives until the launch ran) and to the module image. A stream recycles its
// launches (Release, then Create into the same object), so that a launch allocates nothing once the vectors have
// grown to the kernel's arguments.
// Immutable between Create and Release; Run may be called from one thread at a time.
class Launch {
 public:
  // Copies `launch` of `kernel` into `*out`: into the Launch it holds (a released one, reused with its capacity),
  // or a new one when it is null. On failure calls host.Fail and returns its status; `*out` may then hold a
  // partly filled Launch, to be released.
  static accel_status_t Create(const HostServices& host, const Kernel& kernel, const accel_bk_launch_t& launch,
                               std::unique_ptr<Launch>* out);

  // Drops the references to the buffers' storage and the module image, keeping the memory for the next Create.
  void Release();

  const std::string& kernel_name() const { return decl_->name; }

  // Calls the kernel once per work-group, spread over `pool` and the calling thread (with `caller_scratch`), and
  // waits for all. After a work-group fails no further work-group starts.
  LaunchResult Run(ThreadPool& pool, Scratch& caller_scratch) const;

 private:
  Launch() = default;

  std::shared_ptr<const ModuleImage> image_;
  const KernelDecl* decl_ = nullptr;
  uint32_t grid_[3] = {1, 1, 1};
  uint32_t block_[3] = {1, 1, 1};
  std::vector<std::shared_ptr<Storage>> storages_;  // the buffer arguments' storage
  std::vector<std::byte> scalars_;                  // every scalar's bytes, each at a 16-byte aligned offset
  std::vector<accel_native_arg_t> args_;            // as the kernel receives them; LOCAL_MEMORY set per work-group
  std::vector<std::pair<uint32_t, uint64_t>> local_args_;  // LOCAL_MEMORY arguments: (index, offset in local memory)
  uint64_t local_memory_size_ = 0;                         // per work-group: static part, then each LOCAL_MEMORY region
  // Create's scratch: the scalar arguments read in its first pass, copied in its second.
  struct PendingScalar {
    uint32_t index;
    uint64_t offset;
    const void* value;
    uint64_t size;
  };
  std::vector<PendingScalar> pending_scalars_;
};

}  // namespace accel::host

#endif  // ACCEL_BACKENDS_HOST_MODULE_H_
