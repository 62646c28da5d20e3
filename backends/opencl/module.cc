// Modules and kernels (docs/kernels.md). A module is one cl_program built for
// its device: OpenCL C from source (with the source's options and
// -cl-kernel-arg-info), SPIR 1.2 bitcode (-x spir -spir-std=1.2) and SPIR-V
// (clCreateProgramWithIL) where the device takes them. Every kernel is
// reflected when the module is built, from clGetKernelArgInfo and
// clGetKernelWorkGroupInfo, so a runtime that keeps no argument information
// for a format fails module_create and the core tries the next source.
//
// A launch is a stream operation: its arguments are copied at enqueue; when
// the stream's worker reaches it, clSetKernelArg per argument and
// clEnqueueNDRangeKernel run under the kernel's mutex (a cl_kernel's arguments
// are shared state); an argument whose value is the one last set on the
// cl_kernel is not set again (SetArgument). A buffer bound at a non-zero offset becomes a sub-buffer
// when the offset meets CL_DEVICE_MEM_BASE_ADDR_ALIGN, else a bounce buffer:
// the range is copied in before the kernel and, when the kernel may write it,
// back after it, all on the stream's queue. A prepared launch
// (kernel_prepare_launch) has a cl_kernel of its own, its arguments set once:
// each of its launches is one clEnqueueNDRangeKernel (PreparedLaunch).
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "opencl_backend.h"

namespace accel::opencl {

// --- Pure functions ----------------------------------------------------------------------------------------------

uint32_t ScalarSize(std::string_view type_name, uint32_t address_bits) {
  std::string name(type_name);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  if (name.rfind("unsigned ", 0) == 0) name = "u" + name.substr(9);  // "unsigned int" -> "uint"
  struct Base {
    const char* name;
    uint32_t size;
  };
  static const Base kBases[] = {{"char", 1}, {"uchar", 1}, {"bool", 1},  {"short", 2}, {"ushort", 2}, {"half", 2},
                                {"int", 4},  {"uint", 4},  {"float", 4}, {"long", 8},  {"ulong", 8},  {"double", 8}};
  const uint32_t pointer_size = address_bits / 8;
  for (const char* sized : {"size_t", "ptrdiff_t", "intptr_t", "uintptr_t"}) {
    if (name == sized) return pointer_size;
  }
  // A vector: the base name and 2, 3, 4, 8 or 16 lanes (a 3-vector takes the room of 4).
  size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
  const std::string base = name.substr(0, digits);
  uint32_t lanes = 1;
  if (digits < name.size()) {
    const std::string count = name.substr(digits);
    if (count == "2" || count == "4" || count == "8" || count == "16") {
      lanes = static_cast<uint32_t>(std::stoul(count));
    } else if (count == "3") {
      lanes = 4;
    } else {
      return 0;
    }
  }
  for (const Base& b : kBases) {
    if (base == b.name) return b.size * lanes;
  }
  return 0;  // a struct or a typedef the runtime did not resolve: any size
}

ArgumentDeclaration DeclareArgument(cl_kernel_arg_address_qualifier address, cl_kernel_arg_type_qualifier type,
                                    std::string type_name, std::string name, uint32_t address_bits) {
  ArgumentDeclaration a;
  a.name = std::move(name);
  a.type_name = std::move(type_name);
  const std::string& t = a.type_name;
  const bool pointer = !t.empty() && t.back() == '*';
  for (const char* opaque : {"image", "sampler_t", "queue_t", "clk_event_t", "reserve_id_t"}) {
    if (t.rfind(opaque, 0) == 0) {
      a.unusable = "is an " + t + "; Accel passes buffers, scalars and local memory only";
      return a;
    }
  }
  if ((type & kClKernelArgTypePipe) != 0) {
    a.unusable = "is a pipe; Accel passes buffers, scalars and local memory only";
    return a;
  }
  switch (address) {
    case CL_KERNEL_ARG_ADDRESS_GLOBAL:
    case CL_KERNEL_ARG_ADDRESS_CONSTANT:
      a.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
      // OpenCL has no write-only buffer qualifier: a non-const pointer reads and writes.
      a.access = (address == CL_KERNEL_ARG_ADDRESS_CONSTANT || (type & CL_KERNEL_ARG_TYPE_CONST) != 0)
                     ? ACCEL_ACCESS_READ
                     : ACCEL_ACCESS_READ_WRITE;
      if (!pointer) a.unusable = "is a __global " + t + " that is not a pointer";
      return a;
    case CL_KERNEL_ARG_ADDRESS_LOCAL:
      a.kind = ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY;
      a.access = ACCEL_ACCESS_READ;
      return a;
    default:
      a.kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
      a.access = ACCEL_ACCESS_READ;
      a.size = ScalarSize(t, address_bits);
      return a;
  }
}

std::string BuildLogGist(std::string_view log, size_t limit) {
  std::vector<std::string_view> lines;
  std::vector<std::string_view> errors;
  for (size_t at = 0; at < log.size();) {
    size_t end = log.find('\n', at);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(at, end - at);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!line.empty()) {
      lines.push_back(line);
      std::string lower(line);
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower.find("error") != std::string::npos) errors.push_back(line);
    }
    at = end + 1;
  }
  const std::vector<std::string_view>& chosen = errors.empty() ? lines : errors;
  std::string gist;
  for (std::string_view line : chosen) {
    if (!gist.empty()) gist += " | ";
    gist += line;
    if (gist.size() >= limit) break;
  }
  if (gist.empty()) return "the build log is empty";
  if (gist.size() > limit) gist = gist.substr(0, limit > 3 ? limit - 3 : 0) + "...";
  return gist;
}

std::vector<std::string> SplitKernelNames(std::string_view names) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= names.size();) {
    size_t end = names.find(';', at);
    if (end == std::string_view::npos) end = names.size();
    std::string_view name = names.substr(at, end - at);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\0')) name.remove_suffix(1);
    if (!name.empty()) out.emplace_back(name);
    at = end + 1;
  }
  return out;
}

// --- Objects -----------------------------------------------------------------------------------------------------

namespace {

// One kernel as reflected when its module was built.
struct KernelInfo {
  std::string name;
  std::vector<ArgumentDeclaration> arguments;
  uint32_t max_work_group_size = 0;
  uint32_t required_work_group_size[3] = {0, 0, 0};
  uint64_t local_memory_size = 0;
  std::string unusable;  // why Accel cannot launch it; "" launchable
};

// The built program, shared by the module, its kernels and their queued launches.
struct ProgramState {
  Device* device = nullptr;
  ClProgram program;
};

// What a cl_kernel's argument was last set to, so that a launch with the same value skips clSetKernelArg (the
// arguments are the cl_kernel's state and persist between enqueues). A buffer counts as the same only while the
// Storage it was set from is alive (then its cl_mem is too, and cannot have been reused by another buffer); a
// sub-buffer or bounce buffer is made per launch and never counts.
struct SetArgument {
  bool valid = false;
  accel_kernel_arg_kind_t kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  cl_mem mem = nullptr;
  std::weak_ptr<Storage> storage;
  uint64_t local_size = 0;
  std::vector<std::byte> value;
};

}  // namespace

// One kernel handle's cl_kernel. Thread-safe: `mutex` guards the cl_kernel's arguments (and `set`, what they hold)
// from setting them to enqueueing the launch; everything else is immutable.
struct KernelState {
  std::shared_ptr<ProgramState> program;
  ClKernel kernel;
  KernelInfo info;
  std::mutex mutex;
  std::vector<SetArgument> set;  // per argument index, under `mutex`
};

// A module handle. Immutable after module_create.
struct Module {
  Device* device = nullptr;
  std::shared_ptr<ProgramState> program;
  std::vector<KernelInfo> kernels;
  std::vector<const char*> names;  // into `kernels`
};

// A kernel handle.
struct Kernel {
  Device* device = nullptr;
  std::shared_ptr<KernelState> state;
};

// A launch prepared once (kernel_prepare_launch): a cl_kernel of its own whose arguments are set when it is prepared
// and never again, so that any stream enqueues it without the kernel's mutex (only clSetKernelArg on one cl_kernel
// is not thread-safe) and without setting an argument. It keeps the buffers' storage and the sub-buffers of
// arguments at an offset; launches enqueued from it keep it. Immutable once made.
struct PreparedLaunch {
  std::shared_ptr<KernelState> state;  // the program the cl_kernel comes from; the kernel's name for messages
  std::array<size_t, 3> global{};
  std::array<size_t, 3> local{};
  std::vector<std::shared_ptr<Storage>> storage;
  std::vector<ClMem> sub_buffers;
  ClKernel kernel;  // last: released first
};

// A prepared launch handle.
struct Prepared {
  std::shared_ptr<const PreparedLaunch> launch;
};

namespace {

const char* FormatName(accel_kernel_formats_t format) {
  switch (format) {
    case ACCEL_KERNEL_FORMAT_OPENCL_C: return "opencl-c";
    case ACCEL_KERNEL_FORMAT_SPIR: return "spir";
    case ACCEL_KERNEL_FORMAT_SPIRV_OPENCL: return "spirv-opencl";
    default: return "a format the OpenCL backend does not build";
  }
}

// A cl_kernel of kernel `name` of `program`; null with the failure in `*err` and `*message`.
ClKernel NewClKernel(Runtime* runtime, cl_program program, const std::string& name, cl_int* err, std::string* message) {
  ClKernel kernel(runtime, runtime->cl.CreateKernel(program, name.c_str(), err));
  if (!kernel) *message = "kernel '" + name + "': " + ClFailure("clCreateKernel", *err);
  return kernel;
}

// A sub-buffer of `parent`'s [offset, offset + size), bound as argument `index`; null with the failure in `*err` and
// `*message`.
ClMem NewSubBuffer(Runtime* runtime, cl_mem parent, uint64_t offset, uint64_t size, size_t index, cl_int* err,
                   std::string* message) {
  const cl_buffer_region region{static_cast<size_t>(offset), static_cast<size_t>(size)};
  ClMem sub(runtime,
            runtime->cl.CreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, err));
  if (!sub) {
    *message = ClFailure("clCreateSubBuffer", *err) + " for argument " + std::to_string(index) + " at offset " +
               std::to_string(offset);
  }
  return sub;
}

// clSetKernelArg's failure `err` for argument `index` of the kernel.
std::string SetArgFailure(const KernelState& state, size_t index, cl_int err) {
  const std::string& name = state.info.arguments[index].name;
  return ClFailure("clSetKernelArg", err) + " for argument " + std::to_string(index) +
         (name.empty() ? std::string() : " ('" + name + "')") + " of kernel '" + state.info.name + "'";
}

// A launch's global size (grid * block) and local size (block), per dimension.
void LaunchSizes(const accel_bk_launch_t& launch, std::array<size_t, 3>* global, std::array<size_t, 3>* local) {
  for (int d = 0; d < 3; ++d) {
    (*global)[d] = static_cast<size_t>(launch.grid[d]) * launch.block[d];
    (*local)[d] = launch.block[d];
  }
}

cl_int ArgString(const ClApi& cl, cl_kernel kernel, cl_uint index, cl_kernel_arg_info key, std::string* out) {
  size_t size = 0;
  cl_int err = cl.GetKernelArgInfo(kernel, index, key, 0, nullptr, &size);
  if (err != CL_SUCCESS) return err;
  std::string value(size, '\0');
  if (size > 0) err = cl.GetKernelArgInfo(kernel, index, key, size, value.data(), nullptr);
  value.resize(std::strlen(value.c_str()));
  *out = std::move(value);
  return err;
}

// Reflects kernel `name` of `program`; a failure sets `*status` and `*message`.
bool Reflect(const Device& device, cl_program program, const std::string& name, const char* format, KernelInfo* out,
             accel_status_t* status, std::string* message) {
  const ClApi& cl = device.runtime->cl;
  cl_int err = CL_SUCCESS;
  ClKernel kernel = NewClKernel(device.runtime, program, name, &err, message);
  if (!kernel) {
    *status = StatusFromCl(err);
    return false;
  }
  out->name = name;
  cl_uint count = 0;
  err = cl.GetKernelInfo(kernel.get(), CL_KERNEL_NUM_ARGS, sizeof(count), &count, nullptr);
  if (err != CL_SUCCESS) {
    *status = StatusFromCl(err);
    *message = "kernel '" + name + "': " + ClFailure("clGetKernelInfo(CL_KERNEL_NUM_ARGS)", err);
    return false;
  }
  for (cl_uint i = 0; i < count; ++i) {
    cl_kernel_arg_address_qualifier address = 0;
    cl_kernel_arg_type_qualifier type = 0;
    std::string type_name;
    std::string arg_name;
    err = cl.GetKernelArgInfo(kernel.get(), i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(address), &address, nullptr);
    if (err == CL_SUCCESS) {
      err = cl.GetKernelArgInfo(kernel.get(), i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof(type), &type, nullptr);
    }
    if (err == CL_SUCCESS) err = ArgString(cl, kernel.get(), i, CL_KERNEL_ARG_TYPE_NAME, &type_name);
    if (err == CL_SUCCESS) err = ArgString(cl, kernel.get(), i, CL_KERNEL_ARG_NAME, &arg_name);
    if (err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE) {
      *status = ACCEL_ERROR_UNSUPPORTED;
      *message = "kernel '" + name + "': " + ClFailure("clGetKernelArgInfo", err) +
                 ": this OpenCL runtime keeps no argument information for " + format +
                 " modules, and Accel needs it to check launches";
      return false;
    }
    if (err != CL_SUCCESS) {
      *status = StatusFromCl(err);
      *message = "kernel '" + name + "' argument " + std::to_string(i) + ": " + ClFailure("clGetKernelArgInfo", err);
      return false;
    }
    ArgumentDeclaration a =
        DeclareArgument(address, type, std::move(type_name), std::move(arg_name), device.properties.address_bits);
    if (!a.unusable.empty() && out->unusable.empty()) {
      out->unusable = "argument " + std::to_string(i) + " ('" + a.name + "') " + a.unusable;
    }
    out->arguments.push_back(std::move(a));
  }
  size_t work_group_size = 0;
  size_t required[3] = {0, 0, 0};
  cl_ulong local = 0;
  err = cl.GetKernelWorkGroupInfo(kernel.get(), device.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof(work_group_size),
                                  &work_group_size, nullptr);
  if (err == CL_SUCCESS) {
    err = cl.GetKernelWorkGroupInfo(kernel.get(), device.id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof(required),
                                    required, nullptr);
  }
  if (err == CL_SUCCESS) {
    err = cl.GetKernelWorkGroupInfo(kernel.get(), device.id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(local), &local, nullptr);
  }
  if (err != CL_SUCCESS) {
    *status = StatusFromCl(err);
    *message = "kernel '" + name + "': " + ClFailure("clGetKernelWorkGroupInfo", err);
    return false;
  }
  out->max_work_group_size = std::min(Clamp32(work_group_size), device.capabilities.max_work_group_size);
  for (int d = 0; d < 3; ++d) out->required_work_group_size[d] = Clamp32(required[d]);
  if (required[0] == 0 || required[1] == 0 || required[2] == 0) {
    for (uint32_t& r : out->required_work_group_size) r = 0;  // no reqd_work_group_size: any block
  }
  out->local_memory_size = local;
  return true;
}

// The module's bytes: the blob, or the file the core checked is readable.
accel_status_t ReadSource(const Host& host, const accel_module_source_t& source, std::vector<char>* out) {
  if (source.data != nullptr) {
    const char* bytes = static_cast<const char*>(source.data);
    out->assign(bytes, bytes + source.size);
    return ACCEL_SUCCESS;
  }
  std::ifstream in(source.path, std::ios::binary);
  if (!in)
    return host.Fail(ACCEL_ERROR_NOT_FOUND, std::string("cannot read '") + source.path + "': " + std::strerror(errno));
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return host.Fail(ACCEL_ERROR_NOT_FOUND, std::string("cannot read '") + source.path + "'");
  return ACCEL_SUCCESS;
}

std::string BuildLog(const Device& device, cl_program program) {
  size_t size = 0;
  const ClApi& cl = device.runtime->cl;
  if (cl.GetProgramBuildInfo(program, device.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS || size == 0) {
    return std::string();
  }
  std::string log(size, '\0');
  if (cl.GetProgramBuildInfo(program, device.id, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) {
    return std::string();
  }
  log.resize(std::strlen(log.c_str()));
  return log;
}

}  // namespace

namespace {

// clEnqueueNDRangeKernel's failure, with the kernel and the sizes.
accel_status_t EnqueueFailed(cl_int err, const KernelState& state, const size_t* global, const size_t* local,
                             std::string* message) {
  *message = ClFailure("clEnqueueNDRangeKernel", err) + " for kernel '" + state.info.name + "' (global " +
             std::to_string(global[0]) + "x" + std::to_string(global[1]) + "x" + std::to_string(global[2]) +
             ", local " + std::to_string(local[0]) + "x" + std::to_string(local[1]) + "x" + std::to_string(local[2]) +
             ")";
  return StatusFromCl(err);
}

}  // namespace

accel_status_t SubmitPrepared(const PreparedLaunch& p, Submission& s, std::string* message) {
  const cl_int err = s.runtime->cl.EnqueueNDRangeKernel(s.queue, p.kernel.get(), 3, nullptr, p.global.data(),
                                                        p.local.data(), 0, nullptr, nullptr);
  return err == CL_SUCCESS ? ACCEL_SUCCESS : EnqueueFailed(err, *p.state, p.global.data(), p.local.data(), message);
}

// Enqueues the launch on the stream's queue (the file comment says how buffers at offsets are bound). Allocates
// nothing unless an argument needs a sub-buffer or a bounce buffer, or a scalar outgrows what was set before. A
// prepared launch's arguments are set already: it is one clEnqueueNDRangeKernel.
accel_status_t SubmitLaunch(Launch& launch, Submission& s, std::string* message) {
  const ClApi& cl = s.runtime->cl;
  if (launch.prepared != nullptr) return SubmitPrepared(*launch.prepared, s, message);
  Device* device = s.device;
  KernelState& state = *launch.kernel;
  std::vector<BoundArgument>& args = launch.args;
  const size_t* const global = launch.global.data();
  const size_t* const local = launch.local.data();
  bool copy_back = false;  // a bounce buffer is copied back after the kernel
  for (size_t i = 0; i < args.size(); ++i) {
    BoundArgument& a = args[i];
    a.mem = nullptr;
    if (a.kind != ACCEL_KERNEL_ARG_KIND_BUFFER) continue;
    if (a.offset == 0) {
      a.mem = a.storage->mem();
      continue;
    }
    cl_int err = CL_SUCCESS;
    if (a.offset % device->base_alignment == 0) {
      ClMem sub = NewSubBuffer(s.runtime, a.storage->mem(), a.offset, a.size, i, &err, message);
      if (!sub) return StatusFromCl(err);
      a.mem = sub.get();
      s.temporaries.push_back(std::move(sub));
      continue;
    }
    // The offset is not a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN: bounce through a buffer of the range's size.
    cl_mem bounce =
        cl.CreateBuffer(device->platform->context.get(), CL_MEM_READ_WRITE, static_cast<size_t>(a.size), nullptr, &err);
    if (bounce == nullptr) {
      *message = ClFailure("clCreateBuffer", err) + " for the " + std::to_string(a.size) +
                 "-byte bounce buffer of argument " + std::to_string(i) + " (offset " + std::to_string(a.offset) +
                 " is not a multiple of the device's " + std::to_string(device->base_alignment) + "-byte alignment)";
      return StatusFromCl(err);
    }
    s.temporaries.emplace_back(s.runtime, bounce);
    a.mem = bounce;
    err = cl.EnqueueCopyBuffer(s.queue, a.storage->mem(), bounce, static_cast<size_t>(a.offset), 0,
                               static_cast<size_t>(a.size), 0, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      *message = ClFailure("clEnqueueCopyBuffer", err) + " into the bounce buffer of argument " + std::to_string(i);
      return StatusFromCl(err);
    }
    if ((a.access & ACCEL_ACCESS_WRITE) != 0) copy_back = true;
  }
  {
    std::lock_guard lock(state.mutex);
    cl_kernel kernel = state.kernel.get();
    if (state.set.size() < args.size()) state.set.resize(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      const BoundArgument& a = args[i];
      const auto index = static_cast<cl_uint>(i);
      SetArgument& last = state.set[i];
      cl_int err = CL_SUCCESS;
      switch (a.kind) {
        case ACCEL_KERNEL_ARG_KIND_BUFFER: {
          const bool whole = a.mem == a.storage->mem();  // else a sub-buffer or bounce buffer of this launch
          // The same storage: one control block (a weak_ptr keeps it, so no other storage can have it since),
          // compared without locking the weak_ptr (two atomic operations a launch would pay per buffer).
          if (whole && last.valid && last.kind == a.kind && last.mem == a.mem &&
              !last.storage.owner_before(a.storage) && !a.storage.owner_before(last.storage)) {
            continue;
          }
          last.valid = false;
          err = cl.SetKernelArg(kernel, index, sizeof(cl_mem), &a.mem);
          if (err == CL_SUCCESS && whole) {
            last.kind = a.kind;
            last.mem = a.mem;
            last.storage = a.storage;
            last.valid = true;
          }
          break;
        }
        case ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY:
          if (last.valid && last.kind == a.kind && last.local_size == a.size) continue;
          last.valid = false;
          err = cl.SetKernelArg(kernel, index, static_cast<size_t>(a.size), nullptr);
          if (err == CL_SUCCESS) {
            last.kind = a.kind;
            last.local_size = a.size;
            last.valid = true;
          }
          break;
        default: {
          const std::byte* value = launch.values.data() + a.value_offset;
          const auto size = static_cast<size_t>(a.size);
          if (last.valid && last.kind == a.kind && last.value.size() == size &&
              std::memcmp(last.value.data(), value, size) == 0) {
            continue;
          }
          last.valid = false;
          err = cl.SetKernelArg(kernel, index, size, value);
          if (err == CL_SUCCESS) {
            last.kind = a.kind;
            last.value.assign(value, value + size);
            last.valid = true;
          }
          break;
        }
      }
      if (err != CL_SUCCESS) {
        *message = SetArgFailure(state, i, err);
        return StatusFromCl(err);
      }
    }
    const cl_int err = cl.EnqueueNDRangeKernel(s.queue, kernel, 3, nullptr, global, local, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return EnqueueFailed(err, state, global, local, message);
  }
  if (!copy_back) return ACCEL_SUCCESS;
  for (const BoundArgument& a : args) {
    // The bounce buffers: arguments at an offset that is not a multiple of the alignment.
    if (a.kind != ACCEL_KERNEL_ARG_KIND_BUFFER || a.offset % device->base_alignment == 0 ||
        (a.access & ACCEL_ACCESS_WRITE) == 0) {
      continue;
    }
    const cl_int err = cl.EnqueueCopyBuffer(s.queue, a.mem, a.storage->mem(), 0, static_cast<size_t>(a.offset),
                                            static_cast<size_t>(a.size), 0, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      *message = ClFailure("clEnqueueCopyBuffer", err) + " back from a bounce buffer";
      return StatusFromCl(err);
    }
  }
  return ACCEL_SUCCESS;
}

// --- Slots -------------------------------------------------------------------------------------------------------

accel_status_t ModuleCreate(accel_bk_device_t device_handle, const accel_module_source_t* source,
                            accel_bk_module_t* out_module) noexcept {
  Device* device = Unwrap(device_handle);
  const Host& host = *device->host;
  return Guard(host, "module_create", [&] {
    const ClApi& cl = device->runtime->cl;
    const accel_kernel_formats_t format = source->format;
    const char* format_name = FormatName(format);
    if ((device->capabilities.kernel_formats & format) == 0) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, std::string("the device does not take ") + format_name + " modules");
    }
    std::vector<char> bytes;
    if (accel_status_t s = ReadSource(host, *source, &bytes); s != ACCEL_SUCCESS) return s;
    if (bytes.empty())
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, std::string("the ") + format_name + " module is empty");
    const char* user_options =
        ACCEL_BACKEND_HAS_FIELD(source, accel_module_source_t, options) && source->options != nullptr ? source->options
                                                                                                      : "";
    cl_context context = device->platform->context.get();
    cl_int err = CL_SUCCESS;
    cl_program program = nullptr;
    std::string options;
    const char* creator = "";
    if (format == ACCEL_KERNEL_FORMAT_OPENCL_C) {
      creator = "clCreateProgramWithSource";
      const char* text = bytes.data();
      const size_t length = bytes.size();
      program = cl.CreateProgramWithSource(context, 1, &text, &length, &err);
      options = std::string(user_options) + " -cl-kernel-arg-info";
    } else if (format == ACCEL_KERNEL_FORMAT_SPIR) {
      creator = "clCreateProgramWithBinary";
      const auto* binary = reinterpret_cast<const unsigned char*>(bytes.data());
      const size_t length = bytes.size();
      cl_int binary_status = CL_SUCCESS;
      program = cl.CreateProgramWithBinary(context, 1, &device->id, &length, &binary, &binary_status, &err);
      if (program != nullptr && binary_status != CL_SUCCESS) err = binary_status;
      options = "-x spir -spir-std=1.2 " + std::string(user_options);
    } else if (format == ACCEL_KERNEL_FORMAT_SPIRV_OPENCL && device->create_program_with_il != nullptr) {
      creator = "clCreateProgramWithIL";
      program = device->create_program_with_il(context, bytes.data(), bytes.size(), &err);
      options = user_options;
    } else {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED,
                       std::string("the OpenCL backend cannot build ") + format_name + " modules for this device");
    }
    ClProgram owned(device->runtime, program);
    if (!owned || err != CL_SUCCESS) {
      const bool invalid = err == CL_INVALID_BINARY || err == CL_INVALID_VALUE;
      return host.Fail(invalid ? ACCEL_ERROR_INVALID_ARGUMENT : StatusFromCl(err),
                       std::string("not a valid ") + format_name + " module: " + ClFailure(creator, err));
    }
    err = cl.BuildProgram(owned.get(), 1, &device->id, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
      const accel_status_t status =
          err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BINARY || err == CL_INVALID_BUILD_OPTIONS
              ? ACCEL_ERROR_INVALID_ARGUMENT
          : err == CL_COMPILER_NOT_AVAILABLE ? ACCEL_ERROR_UNSUPPORTED
                                             : StatusFromCl(err);
      return host.Fail(status, ClFailure("clBuildProgram", err) + " for the " + format_name + " module (options '" +
                                   options + "'): " + BuildLogGist(BuildLog(*device, owned.get())));
    }
    size_t size = 0;
    err = cl.GetProgramInfo(owned.get(), CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &size);
    std::string names(size, '\0');
    if (err == CL_SUCCESS && size > 0)
      err = cl.GetProgramInfo(owned.get(), CL_PROGRAM_KERNEL_NAMES, size, names.data(), nullptr);
    if (err != CL_SUCCESS) {
      return host.Fail(StatusFromCl(err), ClFailure("clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)", err));
    }
    auto module = std::make_unique<Module>();
    module->device = device;
    for (const std::string& name : SplitKernelNames(names)) {
      KernelInfo info;
      accel_status_t status = ACCEL_SUCCESS;
      std::string message;
      if (!Reflect(*device, owned.get(), name, format_name, &info, &status, &message))
        return host.Fail(status, message);
      module->kernels.push_back(std::move(info));
    }
    for (const KernelInfo& k : module->kernels) module->names.push_back(k.name.c_str());
    module->program = std::make_shared<ProgramState>();
    module->program->device = device;
    module->program->program = std::move(owned);
    *out_module = Wrap(module.release());
    return ACCEL_SUCCESS;
  });
}

void ModuleDestroy(accel_bk_module_t module) noexcept {
  // Kernels and queued launches hold the program themselves.
  std::unique_ptr<Module> owned(Unwrap(module));
}

accel_status_t ModuleEnumerateKernels(accel_bk_module_t handle, uint32_t* inout_count,
                                      const char** out_names) noexcept {
  Module* module = Unwrap(handle);
  const auto count = static_cast<uint32_t>(module->names.size());
  if (out_names == nullptr) {
    *inout_count = count;
    return ACCEL_SUCCESS;
  }
  if (*inout_count < count) {
    const uint32_t capacity = *inout_count;
    *inout_count = count;
    return module->device->host->Fail(
        ACCEL_ERROR_INVALID_ARGUMENT,
        "room for " + std::to_string(capacity) + " names, the module has " + std::to_string(count) + " kernels");
  }
  for (uint32_t i = 0; i < count; ++i) out_names[i] = module->names[i];
  *inout_count = count;
  return ACCEL_SUCCESS;
}

accel_status_t ModuleGetKernel(accel_bk_module_t handle, const char* name, accel_bk_kernel_t* out_kernel) noexcept {
  Module* module = Unwrap(handle);
  const Host& host = *module->device->host;
  return Guard(host, "module_get_kernel", [&] {
    const auto it = std::find_if(module->kernels.begin(), module->kernels.end(),
                                 [&](const KernelInfo& k) { return k.name == name; });
    if (it == module->kernels.end()) {
      return host.Fail(ACCEL_ERROR_NOT_FOUND, std::string("the module has no kernel '") + name + "'");
    }
    if (!it->unusable.empty()) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED,
                       "kernel '" + it->name + "' cannot be launched through Accel: " + it->unusable);
    }
    Device* device = module->device;
    cl_int err = CL_SUCCESS;
    std::string message;
    ClKernel kernel = NewClKernel(device->runtime, module->program->program.get(), it->name, &err, &message);
    if (!kernel) return host.Fail(StatusFromCl(err), message);
    auto state = std::make_shared<KernelState>();
    state->program = module->program;
    state->kernel = std::move(kernel);
    state->info = *it;
    *out_kernel = Wrap(std::make_unique<Kernel>(Kernel{device, std::move(state)}).release());
    return ACCEL_SUCCESS;
  });
}

void KernelDestroy(accel_bk_kernel_t kernel) noexcept {
  // Queued launches hold the kernel's state themselves.
  std::unique_ptr<Kernel> owned(Unwrap(kernel));
}

accel_status_t KernelGetProperties(accel_bk_kernel_t handle, accel_kernel_properties_t* out) noexcept {
  // Everything but `name` and `module`, the core's; only the fields the core's struct has.
  const KernelInfo& info = Unwrap(handle)->state->info;
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, argument_count)) {
    out->argument_count = static_cast<uint32_t>(info.arguments.size());
  }
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, max_work_group_size)) {
    out->max_work_group_size = info.max_work_group_size;
  }
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, required_work_group_size)) {
    std::memcpy(out->required_work_group_size, info.required_work_group_size, sizeof(out->required_work_group_size));
  }
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, local_memory_size)) {
    out->local_memory_size = info.local_memory_size;
  }
  return ACCEL_SUCCESS;
}

accel_status_t KernelGetArgumentInfo(accel_bk_kernel_t handle, uint32_t index,
                                     accel_kernel_argument_info_t* out) noexcept {
  const ArgumentDeclaration& a = Unwrap(handle)->state->info.arguments[index];  // the core checked the index
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, kind)) out->kind = a.kind;
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, access)) out->access = a.access;
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, size)) out->size = a.size;
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, name)) out->name = a.name.c_str();
  return ACCEL_SUCCESS;
}

namespace {

// The stride of the launch's arguments, checked to reach ABI 1.0's last field.
accel_status_t ArgumentStride(const Host& host, const accel_bk_launch_t& launch, size_t* stride) {
  *stride = launch.arg_count > 0 ? launch.args[0].struct_size : 0;
  if (launch.arg_count > 0 && *stride < offsetof(accel_bk_kernel_arg_t, value) + sizeof(void*)) {
    return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                     "kernel arguments of " + std::to_string(*stride) + " bytes are too small for ABI 1.0");
  }
  return ACCEL_SUCCESS;
}

// What StreamLaunchKernel hands to EnqueueLaunch to copy.
struct LaunchToCopy {
  const Host* host;
  Kernel* kernel;
  const accel_bk_launch_t* launch;
  size_t stride;  // of launch->args
};

// Copies the launch into `copy` (EnqueueLaunch's fill, under the stream's mutex): the core checked it against the
// kernel's declaration and limits.
accel_status_t CopyLaunch(void* context, Launch& copy) {
  const auto& in = *static_cast<const LaunchToCopy*>(context);
  const accel_bk_launch_t* launch = in.launch;
  copy.kernel = in.kernel->state;
  copy.args.resize(launch->arg_count);
  for (uint32_t i = 0; i < launch->arg_count; ++i) {
    const auto* arg =
        reinterpret_cast<const accel_bk_kernel_arg_t*>(reinterpret_cast<const char*>(launch->args) + i * in.stride);
    BoundArgument& a = copy.args[i];
    a.kind = arg->kind;
    a.access = arg->access;
    a.offset = arg->offset;
    a.size = arg->size;
    switch (arg->kind) {
      case ACCEL_KERNEL_ARG_KIND_BUFFER: a.storage = Unwrap(arg->buffer)->storage; break;
      case ACCEL_KERNEL_ARG_KIND_SCALAR: {
        const auto* bytes = static_cast<const std::byte*>(arg->value);
        a.value_offset = copy.values.size();
        copy.values.insert(copy.values.end(), bytes, bytes + arg->size);
        break;
      }
      case ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY: break;
      default:
        return in.host->Fail(ACCEL_ERROR_UNSUPPORTED, "argument " + std::to_string(i) +
                                                          ": the OpenCL backend passes buffers, scalars and local "
                                                          "memory only (no device addresses)");
    }
  }
  LaunchSizes(*launch, &copy.global, &copy.local);
  return ACCEL_SUCCESS;
}

}  // namespace

accel_status_t StreamLaunchKernel(accel_bk_stream_t stream_handle, accel_bk_kernel_t kernel_handle,
                                  const accel_bk_launch_t* launch) noexcept {
  Stream* stream = Unwrap(stream_handle);
  Kernel* kernel = Unwrap(kernel_handle);
  const Host& host = *kernel->device->host;
  return Guard(host, "stream_launch_kernel", [&] {
    // Everything is copied now, into a launch the stream recycles (nothing is allocated once its vectors have grown).
    size_t stride = 0;
    if (const accel_status_t s = ArgumentStride(host, *launch, &stride); s != ACCEL_SUCCESS) return s;
    LaunchToCopy context{&host, kernel, launch, stride};
    return EnqueueLaunch(stream, CopyLaunch, &context);
  });
}

accel_status_t KernelPrepareLaunch(accel_bk_kernel_t kernel_handle, const accel_bk_launch_t* launch,
                                   accel_bk_prepared_launch_t* out_prepared) noexcept {
  Kernel* kernel = Unwrap(kernel_handle);
  Device* device = kernel->device;
  const Host& host = *device->host;
  return Guard(host, "kernel_prepare_launch", [&]() -> accel_status_t {
    size_t stride = 0;
    if (const accel_status_t s = ArgumentStride(host, *launch, &stride); s != ACCEL_SUCCESS) return s;
    const auto arg = [&](uint32_t i) {
      return reinterpret_cast<const accel_bk_kernel_arg_t*>(reinterpret_cast<const char*>(launch->args) + i * stride);
    };
    // A buffer at an offset the device cannot make a sub-buffer at needs a bounce buffer per launch: not prepared
    // (the core then enqueues the checked launch each time).
    for (uint32_t i = 0; i < launch->arg_count; ++i) {
      const accel_bk_kernel_arg_t* a = arg(i);
      if (a->kind == ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS ||
          (a->kind == ACCEL_KERNEL_ARG_KIND_BUFFER && a->offset % device->base_alignment != 0)) {
        return ACCEL_ERROR_UNSUPPORTED;
      }
    }
    const ClApi& cl = device->runtime->cl;
    const KernelState& state = *kernel->state;
    auto prepared = std::make_shared<PreparedLaunch>();
    prepared->state = kernel->state;
    cl_int err = CL_SUCCESS;
    std::string message;
    prepared->kernel = NewClKernel(device->runtime, state.program->program.get(), state.info.name, &err, &message);
    if (!prepared->kernel) return host.Fail(StatusFromCl(err), message);
    for (uint32_t i = 0; i < launch->arg_count; ++i) {
      const accel_bk_kernel_arg_t* a = arg(i);
      switch (a->kind) {
        case ACCEL_KERNEL_ARG_KIND_BUFFER: {
          const std::shared_ptr<Storage>& storage = Unwrap(a->buffer)->storage;
          prepared->storage.push_back(storage);
          cl_mem mem = storage->mem();
          if (a->offset != 0) {
            ClMem sub = NewSubBuffer(device->runtime, storage->mem(), a->offset, a->size, i, &err, &message);
            if (!sub) return host.Fail(StatusFromCl(err), message);
            mem = sub.get();
            prepared->sub_buffers.push_back(std::move(sub));  // owned from its creation: a throw here releases it
          }
          err = cl.SetKernelArg(prepared->kernel.get(), i, sizeof(cl_mem), &mem);
          break;
        }
        case ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY:
          err = cl.SetKernelArg(prepared->kernel.get(), i, static_cast<size_t>(a->size), nullptr);
          break;
        default: err = cl.SetKernelArg(prepared->kernel.get(), i, static_cast<size_t>(a->size), a->value); break;
      }
      if (err != CL_SUCCESS) return host.Fail(StatusFromCl(err), SetArgFailure(state, i, err));
    }
    LaunchSizes(*launch, &prepared->global, &prepared->local);
    *out_prepared = Wrap(std::make_unique<Prepared>(Prepared{std::move(prepared)}).release());
    return ACCEL_SUCCESS;
  });
}

void PreparedLaunchDestroy(accel_bk_prepared_launch_t prepared) noexcept {
  // Queued launches hold the prepared launch themselves.
  std::unique_ptr<Prepared> owned(Unwrap(prepared));
}

accel_status_t StreamLaunchPrepared(accel_bk_stream_t stream, accel_bk_prepared_launch_t prepared) noexcept {
  const std::shared_ptr<const PreparedLaunch>& launch = Unwrap(prepared)->launch;
  const Host& host = *launch->state->program->device->host;
  return Guard(host, "stream_launch_prepared", [&] { return EnqueuePrepared(Unwrap(stream), launch); });
}

}  // namespace accel::opencl
