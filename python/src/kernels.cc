// Modules, kernels and launches (accel.load_module, accel.Module,
// accel.Kernel, Stream.launch): accel_module_create and
// accel_stream_launch_kernel for Python. Arguments are matched to the
// kernel's declared arguments (docs/kernels.md); the buffers a launch binds
// remember it, so host access to them waits for it (python/README.md,
// "Streams and pending work").
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "common.h"

namespace accelpy {

namespace {

struct Module {
  std::shared_ptr<Instance> inst;
  Device device;
  accel_module_t handle = nullptr;
  bool closed = false;
  ~Module() { close(); }
  void close() {
    if (closed) return;
    closed = true;
    accel_module_destroy(handle);
  }
  accel_module_t live() const {
    if (closed) raise(ACCEL_ERROR_INVALID_HANDLE, "the accel.Module was closed");
    return handle;
  }
};
using ModulePtr = std::shared_ptr<Module>;

struct Kernel {
  ModulePtr module;  // kernel handles live as long as their module
  accel_kernel_t handle = nullptr;
  std::string name;
  std::vector<accel_kernel_argument_info_t> arguments;
  std::vector<std::string> argument_names;  // owned copies of arguments[i].name
};
using KernelPtr = std::shared_ptr<Kernel>;

// Work-group local memory of `size` bytes, for a LOCAL_MEMORY argument.
struct LocalMemory {
  uint64_t size;
};

accel_kernel_formats_t format_from_name(const std::string& name) {
  std::string known;
  for (int bit = 0; bit < 64; ++bit) {
    const char* n = accel_kernel_format_name(uint64_t{1} << bit);
    if (n == nullptr) continue;
    if (name == n) return uint64_t{1} << bit;
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  raise(ACCEL_ERROR_INVALID_ARGUMENT, "unknown kernel format '" + name + "' (known: " + known + ")");
}

std::string format_name(accel_kernel_formats_t format) {
  const char* n = accel_kernel_format_name(format);
  return n != nullptr ? n : "unknown";
}

const char* kind_name(accel_kernel_arg_kind_t kind) {
  switch (kind) {
    case ACCEL_KERNEL_ARG_KIND_BUFFER: return "buffer";
    case ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS: return "device_address";
    case ACCEL_KERNEL_ARG_KIND_SCALAR: return "scalar";
    case ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY: return "local_memory";
    default: return "unknown";
  }
}

const char* access_name(accel_access_t access) {
  switch (access) {
    case ACCEL_ACCESS_READ: return "read";
    case ACCEL_ACCESS_WRITE: return "write";
    case ACCEL_ACCESS_READ_WRITE: return "read_write";
    default: return "unknown";
  }
}

// One source of a module: the blob's bytes, or a path the core reads.
struct Source {
  accel_kernel_formats_t format;
  std::string data;
  std::string path;
  std::string options;
};

Source source_from(const std::string& format, py::handle blob, py::handle options) {
  Source src{format_from_name(format), {}, {}, {}};
  if (py::isinstance<py::bytes>(blob) || py::isinstance<py::bytearray>(blob) || py::isinstance<py::memoryview>(blob)) {
    src.data = py::bytes(py::reinterpret_borrow<py::object>(blob)).cast<std::string>();
    if (src.data.empty()) raise(ACCEL_ERROR_INVALID_ARGUMENT, "the " + format + " source is empty");
  } else if (py::isinstance<py::str>(blob) || py::hasattr(blob, "__fspath__")) {
    src.path = py::module_::import("os").attr("fspath")(blob).cast<std::string>();
  } else {
    throw py::type_error("a module source is bytes (the blob) or a path (str or os.PathLike), not " +
                         py::str(py::type::handle_of(blob)).cast<std::string>());
  }
  if (!options.is_none()) src.options = options.cast<std::string>();
  return src;
}

// sources: {format: blob or path} (tried in order), or a list of
// (format, blob or path[, options]) tuples.
std::vector<Source> sources_from(py::handle sources, py::handle options) {
  std::vector<Source> out;
  if (py::isinstance<py::dict>(sources)) {
    for (auto [format, blob] : py::reinterpret_borrow<py::dict>(sources))
      out.push_back(source_from(format.cast<std::string>(), blob, options));
  } else {
    for (auto item : py::iter(sources)) {
      auto t = item.cast<py::tuple>();
      if (t.size() < 2 || t.size() > 3)
        throw py::value_error("a module source tuple is (format, blob or path[, options])");
      out.push_back(source_from(t[0].cast<std::string>(), t[1], t.size() == 3 ? t[2] : options));
    }
  }
  if (out.empty()) raise(ACCEL_ERROR_INVALID_ARGUMENT, "load_module: no sources given");
  return out;
}

ModulePtr load_module(py::object sources, py::object device_obj, py::object name, py::object options) {
  Device device = resolve_device(device_obj);
  auto srcs = sources_from(sources, options);
  std::vector<accel_module_source_t> descs(
      srcs.size(), accel::detail::sized<accel_module_source_t>(ACCEL_STRUCTURE_TYPE_MODULE_SOURCE));
  for (size_t i = 0; i < srcs.size(); ++i) {
    auto& d = descs[i];
    d.format = srcs[i].format;
    if (srcs[i].path.empty()) {
      d.data = srcs[i].data.data();
      d.size = srcs[i].data.size();
    } else {
      d.path = srcs[i].path.c_str();
    }
    d.options = srcs[i].options.empty() ? nullptr : srcs[i].options.c_str();
  }
  std::string module_name = name.is_none() ? std::string() : name.cast<std::string>();
  auto desc = accel::detail::sized<accel_module_desc_t>(ACCEL_STRUCTURE_TYPE_MODULE_DESC);
  desc.sources = descs.data();
  desc.source_count = static_cast<uint32_t>(descs.size());
  desc.name = module_name.empty() ? nullptr : module_name.c_str();
  auto module = std::make_shared<Module>();
  module->inst = device.inst;
  module->device = device;
  accel_status_t status;
  {
    NoGil nogil;  // source formats compile here
    status = accel_module_create(device.handle, &desc, &module->handle);
  }
  check(status);
  return module;
}

accel_module_properties_t module_properties(const Module& m) {
  auto props = accel::detail::sized<accel_module_properties_t>(ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES);
  check(accel_module_get_properties(m.live(), &props));
  return props;
}

KernelPtr get_kernel(const ModulePtr& module, const std::string& name) {
  auto kernel = std::make_shared<Kernel>();
  kernel->module = module;
  kernel->name = name;
  check(accel_module_get_kernel(module->live(), name.c_str(), &kernel->handle));
  auto props = accel::detail::sized<accel_kernel_properties_t>(ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES);
  check(accel_kernel_get_properties(kernel->handle, &props));
  for (uint32_t i = 0; i < props.argument_count; ++i) {
    auto info = accel::detail::sized<accel_kernel_argument_info_t>(ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO);
    check(accel_kernel_get_argument_info(kernel->handle, i, &info));
    kernel->argument_names.emplace_back(info.name != nullptr ? info.name : "");
    info.name = nullptr;
    kernel->arguments.push_back(info);
  }
  return kernel;
}

accel_kernel_properties_t kernel_properties(const Kernel& k) {
  k.module->live();
  auto props = accel::detail::sized<accel_kernel_properties_t>(ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES);
  check(accel_kernel_get_properties(k.handle, &props));
  return props;
}

std::string arg_label(const Kernel& k, size_t i) {
  std::string label = "argument " + std::to_string(i);
  if (!k.argument_names[i].empty()) label += " ('" + k.argument_names[i] + "')";
  return label + " of kernel '" + k.name + "'";
}

[[noreturn]] void arg_error(const Kernel& k, size_t i, const std::string& why) {
  raise(ACCEL_ERROR_INVALID_ARGUMENT, arg_label(k, i) + ": " + why);
}

// The bytes of a scalar argument declared `size` bytes (0: any size).
std::string scalar_bytes(const Kernel& k, size_t i, py::handle value, uint32_t size) {
  auto fail = [&](const std::string& why) { arg_error(k, i, why); };
  if (py::isinstance<py::bytes>(value)) return value.cast<std::string>();
  // numpy scalars and 0-d arrays: their own bytes, whose size must match.
  if (py::hasattr(value, "dtype") && py::hasattr(value, "tobytes") && !py::isinstance<Array>(value)) {
    if (py::hasattr(value, "ndim") && value.attr("ndim").cast<int>() != 0)
      fail("a scalar argument takes a scalar, not an array of shape " +
           py::str(value.attr("shape")).cast<std::string>());
    auto bytes = value.attr("tobytes")().cast<std::string>();
    if (size != 0 && bytes.size() != size)
      fail("the kernel declares a " + std::to_string(size) + "-byte scalar but the " +
           py::str(value.attr("dtype")).cast<std::string>() + " value has " + std::to_string(bytes.size()));
    return bytes;
  }
  if (py::isinstance<py::bool_>(value)) {
    std::string out(size == 0 ? 4 : size, '\0');
    out[0] = value.cast<bool>() ? 1 : 0;
    return out;
  }
  if (py::isinstance<py::int_>(value)) {
    uint32_t n = size == 0 ? 8 : size;
    if (n != 1 && n != 2 && n != 4 && n != 8) fail("an int cannot fill a " + std::to_string(n) + "-byte scalar");
    auto big = py::reinterpret_borrow<py::int_>(value);
    int64_t lo = n == 8 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (n * 8 - 1));
    bool negative = py::reinterpret_borrow<py::object>(big) < py::int_(0);
    uint64_t bits = 0;
    if (negative) {
      int64_t v = big.cast<int64_t>();
      if (v < lo) fail(std::to_string(v) + " does not fit in a " + std::to_string(n) + "-byte integer");
      bits = static_cast<uint64_t>(v);
    } else {
      bits = big.cast<uint64_t>();
      if (n < 8 && bits >> (n * 8) != 0)
        fail(std::to_string(bits) + " does not fit in a " + std::to_string(n) + "-byte integer");
    }
    std::string out(n, '\0');
    std::memcpy(out.data(), &bits, n);  // little-endian hosts (docs/abi.md)
    return out;
  }
  if (py::isinstance<py::float_>(value)) {
    double d = value.cast<double>();
    if (size == 4) {
      float f = static_cast<float>(d);
      return std::string(reinterpret_cast<const char*>(&f), 4);
    }
    if (size == 8 || size == 0) return std::string(reinterpret_cast<const char*>(&d), 8);
    arg_error(
        k, i,
        "a float cannot fill a " + std::to_string(size) + "-byte scalar (pass a numpy scalar, e.g. numpy.float16)");
  }
  arg_error(k, i,
            "a scalar argument takes an int, float, bool, numpy scalar or bytes, not " +
                py::str(py::type::handle_of(value)).cast<std::string>());
}

std::array<uint32_t, 3> dims(py::handle obj, const char* what) {
  std::array<uint32_t, 3> out{1, 1, 1};
  std::vector<int64_t> values;
  if (py::isinstance<py::int_>(obj)) {
    values.push_back(obj.cast<int64_t>());
  } else {
    for (auto v : py::iter(obj)) values.push_back(v.cast<int64_t>());
  }
  if (values.empty() || values.size() > 3)
    raise(ACCEL_ERROR_INVALID_ARGUMENT,
          std::string(what) + " has 1 to 3 dimensions, not " + std::to_string(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 1 || values[i] > std::numeric_limits<uint32_t>::max())
      raise(ACCEL_ERROR_INVALID_ARGUMENT, std::string(what) + "[" + std::to_string(i) + "] is " +
                                              std::to_string(values[i]) + "; each dimension is 1 to 2^32-1");
    out[i] = static_cast<uint32_t>(values[i]);
  }
  return out;
}

// The stream a launch of `kernel` goes to: `stream`, or when null the current
// stream of the kernel's device, else the package's own stream there.
accel_stream_t launch_stream(const Kernel& kernel, StreamPtr stream) {
  const Device& device = kernel.module->device;
  kernel.module->live();
  if (!stream) stream = current_stream(device);
  accel_stream_t handle = stream ? stream->live() : device.inst->internal_stream(device.handle);
  if (stream && stream->device.handle != device.handle)
    raise(ACCEL_ERROR_INVALID_ARGUMENT, "kernel '" + kernel.name + "' was loaded on device " +
                                            std::to_string(device.index) + " but the stream is on device " +
                                            std::to_string(stream->device.index));
  return handle;
}

// A launch's arguments as the C API takes them, with what they point at.
struct LaunchArgs {
  accel_launch_desc_t desc{};
  std::vector<accel_kernel_arg_t> args;
  std::vector<std::string> scalars;
  std::vector<std::shared_ptr<Buffer>> bound;  // the buffers it binds
};

// Later host access to the buffers a launch just enqueued on `stream` binds waits for it.
void track(const Device& device, accel_stream_t stream, const std::vector<std::shared_ptr<Buffer>>& bound) {
  if (bound.empty()) return;
  auto event_desc = accel::detail::sized<accel_event_desc_t>(ACCEL_STRUCTURE_TYPE_EVENT_DESC);
  accel_event_t event = nullptr;
  check(accel_event_create(device.handle, &event_desc, &event));
  auto work = std::make_shared<PendingWork>(device.inst, event);
  check(accel_stream_record_event(stream, event));
  for (auto& buffer : bound) buffer->pending = work;
}

// Work queued on other streams that used these buffers comes first.
void wait_for(accel_stream_t stream, const std::vector<std::shared_ptr<Buffer>>& bound) {
  for (auto& buffer : bound)
    if (buffer->pending) check(accel_stream_wait_event(stream, buffer->pending->event));
}

// Matches `args` to the kernel's declared arguments (the checks of the C API follow).
void launch_args(const KernelPtr& kernel, py::object grid, py::object block, py::args args, LaunchArgs* out) {
  if (args.size() != kernel->arguments.size())
    raise(ACCEL_ERROR_INVALID_ARGUMENT, "kernel '" + kernel->name + "' takes " +
                                            std::to_string(kernel->arguments.size()) + " arguments, " +
                                            std::to_string(args.size()) + " given");
  std::vector<accel_kernel_arg_t>& launch_args = out->args;
  launch_args.assign(args.size(), accel::detail::sized<accel_kernel_arg_t>(ACCEL_STRUCTURE_TYPE_KERNEL_ARG));
  std::vector<std::string>& scalars = out->scalars;
  scalars.assign(args.size(), std::string());
  std::vector<std::shared_ptr<Buffer>>& bound = out->bound;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& info = kernel->arguments[i];
    auto& a = launch_args[i];
    a.kind = info.kind;
    py::handle value = args[i];
    switch (info.kind) {
      case ACCEL_KERNEL_ARG_KIND_BUFFER:
      case ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS: {
        if (!py::isinstance<Array>(value))
          raise(ACCEL_ERROR_INVALID_ARGUMENT, arg_label(*kernel, i) + " is a " + kind_name(info.kind) +
                                                  " and takes an accel.Array, not " +
                                                  py::str(py::type::handle_of(value)).cast<std::string>());
        const auto& array = value.cast<const Array&>();
        if (!array.buffer)
          raise(ACCEL_ERROR_INVALID_ARGUMENT, arg_label(*kernel, i) + ": a zero-size array has no memory to bind");
        if (array.buffer->destroyed)
          raise(ACCEL_ERROR_INVALID_HANDLE, arg_label(*kernel, i) + ": the array's buffer was freed");
        // A read-only array (an object store replica from ref.get(i), a read-only import) is never written: the
        // C layer guards read-only imports only, and a store replica is shared by every reader of the object.
        if (array.readonly &&
            (info.kind == ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS || (info.access & ACCEL_ACCESS_WRITE) != 0)) {
          raise(ACCEL_ERROR_INVALID_ARGUMENT,
                arg_label(*kernel, i) + " is " +
                    (info.kind == ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS ? std::string("a device address")
                                                                       : std::string(access_name(info.access))) +
                    ", and the array is read-only");
        }
        auto [lo, hi] = array.extent();
        if (info.kind == ACCEL_KERNEL_ARG_KIND_BUFFER) {
          a.buffer = array.buffer->handle;
          a.offset = array.offset + lo;
          a.size = hi - lo;
        } else {
          uint64_t address = 0;
          check(accel_buffer_get_device_address(array.buffer->handle, &address));
          a.device_address = address + array.offset + lo;
        }
        bound.push_back(array.buffer);
        break;
      }
      case ACCEL_KERNEL_ARG_KIND_SCALAR:
        scalars[i] = scalar_bytes(*kernel, i, value, info.size);
        a.value = scalars[i].data();
        a.size = scalars[i].size();
        break;
      case ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY:
        if (!py::isinstance<LocalMemory>(value))
          raise(ACCEL_ERROR_INVALID_ARGUMENT, arg_label(*kernel, i) +
                                                  " is work-group local memory and takes "
                                                  "accel.LocalMemory(nbytes)");
        a.size = value.cast<const LocalMemory&>().size;
        break;
      default:
        raise(ACCEL_ERROR_UNSUPPORTED, arg_label(*kernel, i) + " has an argument kind this package does not know (" +
                                           std::to_string(static_cast<int>(info.kind)) + ")");
    }
  }
  auto& desc = out->desc;
  desc = accel::detail::sized<accel_launch_desc_t>(ACCEL_STRUCTURE_TYPE_LAUNCH_DESC);
  auto g = dims(grid, "grid");
  auto b = dims(block, "block");
  std::copy(g.begin(), g.end(), desc.grid);
  std::copy(b.begin(), b.end(), desc.block);
  desc.args = launch_args.data();
  desc.arg_count = static_cast<uint32_t>(launch_args.size());
}

// Enqueues `kernel` on `stream` (null: the current stream of the kernel's
// device, else the package's own stream there).
void launch(const KernelPtr& kernel, py::object grid, py::object block, py::args args, StreamPtr stream) {
  accel_stream_t handle = launch_stream(*kernel, std::move(stream));
  LaunchArgs l;
  launch_args(kernel, std::move(grid), std::move(block), std::move(args), &l);
  wait_for(handle, l.bound);
  check(accel_stream_launch_kernel(handle, kernel->handle, &l.desc));
  track(kernel->module->device, handle, l.bound);
}

// A launch checked once (accel_kernel_prepare_launch) and enqueued by each
// launch(); it keeps the kernel's module and the bound buffers.
struct PreparedLaunch {
  KernelPtr kernel;
  accel_prepared_launch_t handle = nullptr;
  std::vector<std::shared_ptr<Buffer>> bound;
  bool closed = false;
  ~PreparedLaunch() { close(); }
  void close() {
    if (closed) return;
    closed = true;
    accel_prepared_launch_destroy(handle);  // a stale handle (its instance closed) is refused, harmlessly
  }
};
using PreparedLaunchPtr = std::shared_ptr<PreparedLaunch>;

PreparedLaunchPtr prepare(const KernelPtr& kernel, py::object grid, py::object block, py::args args) {
  kernel->module->live();
  LaunchArgs l;
  launch_args(kernel, std::move(grid), std::move(block), std::move(args), &l);
  auto prepared = std::make_shared<PreparedLaunch>();
  prepared->kernel = kernel;
  prepared->bound = std::move(l.bound);
  check(accel_kernel_prepare_launch(kernel->handle, &l.desc, &prepared->handle));
  return prepared;
}

void launch_prepared(const PreparedLaunchPtr& prepared, StreamPtr stream) {
  if (prepared->closed) raise(ACCEL_ERROR_INVALID_HANDLE, "the accel.PreparedLaunch was closed");
  accel_stream_t handle = launch_stream(*prepared->kernel, std::move(stream));
  for (const auto& buffer : prepared->bound) {
    if (buffer->destroyed) raise(ACCEL_ERROR_INVALID_HANDLE, "a buffer the prepared launch binds was freed");
  }
  wait_for(handle, prepared->bound);
  check(accel_stream_launch_prepared(handle, prepared->handle));
  track(prepared->kernel->module->device, handle, prepared->bound);
}

py::dict argument_dict(const Kernel& k, size_t i) {
  const auto& info = k.arguments[i];
  py::dict d;
  d["name"] = k.argument_names[i];
  d["kind"] = kind_name(info.kind);
  d["access"] = info.kind == ACCEL_KERNEL_ARG_KIND_BUFFER ? py::object(py::str(access_name(info.access)))
                                                          : py::object(py::none());
  d["size"] = info.size;
  return d;
}

}  // namespace

void init_kernels(py::module_& m, py::class_<Stream, StreamPtr>& stream) {
  py::class_<LocalMemory>(m, "LocalMemory",
                          "Work-group local memory of `nbytes` bytes, for a kernel's local-memory argument.")
      .def(py::init([](int64_t size) {
             if (size < 0) raise(ACCEL_ERROR_INVALID_ARGUMENT, "LocalMemory: a negative size");
             return LocalMemory{static_cast<uint64_t>(size)};
           }),
           py::arg("nbytes"))
      .def_property_readonly("nbytes", [](const LocalMemory& l) { return l.size; })
      .def("__repr__", [](const LocalMemory& l) { return "<accel.LocalMemory " + std::to_string(l.size) + " bytes>"; });

  py::class_<Module, ModulePtr>(m, "Module",
                                "Kernels loaded on one device (accel.load_module); module[\"name\"] is a Kernel.")
      .def_property_readonly("device", [](const Module& mod) { return mod.device; })
      .def_property_readonly("format", [](const Module& mod) { return format_name(module_properties(mod).format); })
      .def_property_readonly(
          "available_formats",
          [](const Module& mod) { return kernel_format_names(module_properties(mod).available_formats); })
      .def_property_readonly("source_index", [](const Module& mod) { return module_properties(mod).source_index; })
      .def_property_readonly("name", [](const Module& mod) { return std::string(module_properties(mod).name); })
      .def_property_readonly("kernel_names",
                             [](const Module& mod) {
                               auto props = module_properties(mod);
                               std::vector<std::string> names;
                               for (uint32_t i = 0; i < props.kernel_count; ++i) {
                                 const char* n = nullptr;
                                 check(accel_module_get_kernel_name(mod.live(), i, &n));
                                 names.emplace_back(n);
                               }
                               return names;
                             })
      .def("kernel", &get_kernel, py::arg("name"),
           "The kernel `name`; AccelError (NOT_FOUND) lists the ones there are.")
      .def("__getitem__", &get_kernel)
      .def("close", &Module::close)
      .def_property_readonly("closed", [](const Module& mod) { return mod.closed; })
      .def("__enter__", [](ModulePtr mod) { return mod; })
      .def("__exit__",
           [](Module& mod, py::args) {
             mod.close();
             return false;
           })
      .def("__repr__", [](const Module& mod) {
        if (mod.closed) return std::string("<accel.Module closed>");
        auto props = module_properties(mod);
        return "<accel.Module '" + std::string(props.name) + "' " + format_name(props.format) +
               " device=" + std::to_string(mod.device.index) + " kernels=" + std::to_string(props.kernel_count) + ">";
      });

  py::class_<Kernel, KernelPtr>(
      m, "Kernel", "One kernel of a module: its declared arguments and launch(grid, block, *args, stream=None).")
      .def_property_readonly("name", [](const Kernel& k) { return k.name; })
      .def_property_readonly("module", [](const Kernel& k) { return k.module; })
      .def_property_readonly("arguments",
                             [](const Kernel& k) {
                               py::list out;
                               for (size_t i = 0; i < k.arguments.size(); ++i) out.append(argument_dict(k, i));
                               return out;
                             })
      .def_property_readonly("max_work_group_size",
                             [](const Kernel& k) { return kernel_properties(k).max_work_group_size; })
      .def_property_readonly("required_work_group_size",
                             [](const Kernel& k) {
                               auto p = kernel_properties(k);
                               return py::make_tuple(p.required_work_group_size[0], p.required_work_group_size[1],
                                                     p.required_work_group_size[2]);
                             })
      .def_property_readonly("local_memory_size",
                             [](const Kernel& k) { return kernel_properties(k).local_memory_size; })
      .def(
          "launch",
          [](const KernelPtr& k, py::object grid, py::object block, py::args args, py::kwargs kwargs) {
            StreamPtr on;
            for (auto [key, value] : kwargs) {
              if (key.cast<std::string>() != "stream")
                throw py::type_error("Kernel.launch() got an unexpected keyword argument '" + key.cast<std::string>() +
                                     "'");
              if (!value.is_none()) on = value.cast<StreamPtr>();
            }
            launch(k, std::move(grid), std::move(block), std::move(args), std::move(on));
          },
          py::arg("grid"), py::arg("block"),
          "launch(grid, block, *args, stream=None): enqueues one launch of grid work-groups of block work-items on "
          "`stream` (None: the current stream, else the package's own); arguments as the kernel declares them "
          "(Array, int/float/numpy scalar/bytes, LocalMemory). Asynchronous: host access to bound arrays waits.")
      .def("prepare", &prepare, py::arg("grid"), py::arg("block"),
           "prepare(grid, block, *args): the launch checked once, as launch() would check it (docs/kernels.md, "
           "\"Prepared launches\"); PreparedLaunch.launch() enqueues it.")
      .def("__repr__", [](const Kernel& k) {
        return "<accel.Kernel '" + k.name + "' (" + std::to_string(k.arguments.size()) + " arguments)>";
      });

  py::class_<PreparedLaunch, PreparedLaunchPtr>(
      m, "PreparedLaunch", "A launch checked once (Kernel.prepare) and enqueued by each launch(stream=None).")
      .def_property_readonly("kernel", [](const PreparedLaunch& p) { return p.kernel; })
      .def(
          "launch", [](const PreparedLaunchPtr& p, StreamPtr s) { launch_prepared(p, std::move(s)); },
          py::arg("stream") = py::none(),
          "Enqueues the launch once on `stream` (None: the current stream, else the package's own). Asynchronous: "
          "host access to the bound arrays waits.")
      .def("close", &PreparedLaunch::close)
      .def_property_readonly("closed", [](const PreparedLaunch& p) { return p.closed; })
      .def("__enter__", [](PreparedLaunchPtr p) { return p; })
      .def("__exit__",
           [](PreparedLaunch& p, py::args) {
             p.close();
             return false;
           })
      .def("__repr__", [](const PreparedLaunch& p) {
        return "<accel.PreparedLaunch of '" + p.kernel->name + "'" + (p.closed ? " closed>" : ">");
      });

  stream.def(
      "launch",
      [](StreamPtr s, const KernelPtr& kernel, py::object grid, py::object block, py::args args) {
        launch(kernel, std::move(grid), std::move(block), std::move(args), std::move(s));
      },
      py::arg("kernel"), py::arg("grid"), py::arg("block"), "Enqueues `kernel` on this stream (Kernel.launch).");
  stream.def(
      "launch", [](StreamPtr s, const PreparedLaunchPtr& prepared) { launch_prepared(prepared, std::move(s)); },
      py::arg("prepared"), "Enqueues a prepared launch on this stream (PreparedLaunch.launch).");

  m.def("load_module", &load_module, py::arg("sources"), py::arg("device") = py::none(), py::arg("name") = py::none(),
        py::arg("options") = py::none(),
        "Loads the first source (format -> blob or path), in order, whose kernel format the device executes.");
  m.def("kernel_formats", [] { return kernel_format_names(~uint64_t{0}); });
}

}  // namespace accelpy
