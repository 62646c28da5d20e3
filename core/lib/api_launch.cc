// C entry point: kernel launches, with every argument checked against the
// kernel's declaration before the backend sees it (docs/kernels.md).
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "api_common.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

namespace {

// Names argument `index` of a launch in messages: "desc->args[2]", or with
// `field` ".buffer", "desc->args[2].buffer". Formatted only when a message
// is, so that a launch that passes formats nothing (docs/overhead.md).
struct ArgName {
  uint32_t index;
  const char* field;
};

}  // namespace

template <>
struct fmt::formatter<ArgName> : fmt::formatter<fmt::string_view> {
  template <typename Context>
  auto format(const ArgName& name, Context& ctx) const {
    return fmt::format_to(ctx.out(), "desc->args[{}]{}", name.index, name.field);
  }
};

namespace {

// a + b, or UINT64_MAX when the sum wraps: local-memory sizes that wrap must not pass the launch's check as a small
// total.
uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

const char* KindName(accel_kernel_arg_kind_t kind) {
  switch (kind) {
    case ACCEL_KERNEL_ARG_KIND_BUFFER: return "BUFFER";
    case ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS: return "DEVICE_ADDRESS";
    case ACCEL_KERNEL_ARG_KIND_SCALAR: return "SCALAR";
    case ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY: return "LOCAL_MEMORY";
    default: return nullptr;
  }
}

std::string KindText(accel_kernel_arg_kind_t kind) {
  const char* name = KindName(kind);
  return name != nullptr ? name : fmt::format("kind {}", static_cast<int>(kind));
}

// "argument 1 ('b')" or "argument 1".
std::string Declared(const Kernel& k, uint32_t i) {
  const std::string& name = k.argument_names[i];
  return name.empty() ? fmt::format("argument {}", i) : fmt::format("argument {} ('{}')", i, name);
}

std::string Signature(const Kernel& k) {
  std::string out;
  for (uint32_t i = 0; i < k.arguments.size(); ++i) {
    if (!out.empty()) out += ", ";
    out += KindText(k.arguments[i].kind);
    if (!k.argument_names[i].empty()) out += " " + k.argument_names[i];
  }
  return "(" + out + ")";
}

Status CheckGeometry(const Device& dev, const Kernel& k, const accel_launch_desc_t& d) {
  static const char* const kAxis[] = {"x", "y", "z"};
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    ACCEL_REQUIRE(d.grid[i] >= 1, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->grid[{}]' ({}) is 0; every dimension is >= 1",
                  i, kAxis[i]);
    ACCEL_REQUIRE(d.block[i] >= 1, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->block[{}]' ({}) is 0; every dimension is >= 1",
                  i, kAxis[i]);
    const uint32_t grid_max = dev.caps.max_grid_dims[i];
    ACCEL_REQUIRE(grid_max == 0 || d.grid[i] <= grid_max, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'desc->grid[{}]' {} is past the device's limit {}", i, d.grid[i], grid_max);
    const uint32_t block_max = dev.caps.max_work_group_dims[i];
    ACCEL_REQUIRE(block_max == 0 || d.block[i] <= block_max, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'desc->block[{}]' {} is past the device's limit {}", i, d.block[i], block_max);
    // Saturating: three 32-bit sizes can wrap a 64-bit product to 0 (2^22 x 2^22 x 2^20) where a device gives no
    // per-dimension limit, and pass the work-group check below.
    if (__builtin_mul_overflow(threads, uint64_t{d.block[i]}, &threads)) threads = UINT64_MAX;
  }
  const accel_kernel_properties_t& p = k.properties;
  if (p.required_work_group_size[0] != 0 &&
      (d.block[0] != p.required_work_group_size[0] || d.block[1] != p.required_work_group_size[1] ||
       d.block[2] != p.required_work_group_size[2])) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'desc->block' is {}x{}x{}, but kernel '{}' requires {}x{}x{}",
                 d.block[0], d.block[1], d.block[2], k.name, p.required_work_group_size[0],
                 p.required_work_group_size[1], p.required_work_group_size[2]);
  }
  if (p.max_work_group_size != 0 && threads > p.max_work_group_size) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT,
                 "'desc->block' {}x{}x{} has {} work-items, past kernel '{}''s maximum work-group size {}", d.block[0],
                 d.block[1], d.block[2], threads, k.name, p.max_work_group_size);
  }
  return Status::Ok();
}

// The launch after checking, with references that keep its buffers alive
// for the call. The first kInlineArgs arguments live in the object itself (on
// the caller's stack), so that a launch allocates nothing (docs/overhead.md);
// a launch with more takes vectors.
constexpr uint32_t kInlineArgs = 16;
class Checked {
 public:
  explicit Checked(uint32_t count) : inline_(count <= kInlineArgs) {
    if (!inline_) {
      more_args_.resize(count);
      more_buffers_.reserve(count);
      args_ = more_args_.data();
    }
  }
  ~Checked() {
    for (uint32_t i = 0; i < held_; ++i) std::destroy_at(&inline_buffers_[i]);
  }
  Checked(const Checked&) = delete;
  Checked& operator=(const Checked&) = delete;

  // Argument i, to be written as it is checked, in place (arguments are checked in order); counted once Done(i).
  accel_bk_kernel_arg_t& At(uint32_t i) { return args_[i]; }
  void Done(uint32_t i) { count_ = i + 1; }
  // Keeps a buffer alive for the call.
  void Hold(Ref<Buffer> buffer) {
    if (inline_) {
      std::construct_at(&inline_buffers_[held_++], std::move(buffer));
    } else {
      more_buffers_.push_back(std::move(buffer));
    }
  }

  const accel_bk_kernel_arg_t* args() const { return args_; }
  uint32_t count() const { return count_; }
  // Counted references to the buffers held, to keep them beyond the call.
  std::vector<std::shared_ptr<Buffer>> SharedBuffers() const {
    std::vector<std::shared_ptr<Buffer>> out;
    out.reserve(inline_ ? held_ : more_buffers_.size());
    if (inline_) {
      for (uint32_t i = 0; i < held_; ++i) out.push_back(inline_buffers_[i].shared());
    } else {
      for (const Ref<Buffer>& b : more_buffers_) out.push_back(b.shared());
    }
    return out;
  }
  uint64_t dynamic_local = 0;

 private:
  const bool inline_;
  std::array<accel_bk_kernel_arg_t, kInlineArgs> inline_args_;  // written as checked
  union {
    Ref<Buffer> inline_buffers_[kInlineArgs];  // the first `held_` constructed (no cost for the rest)
  };
  uint32_t held_ = 0;
  std::vector<accel_bk_kernel_arg_t> more_args_;
  std::vector<Ref<Buffer>> more_buffers_;
  accel_bk_kernel_arg_t* args_ = inline_args_.data();
  uint32_t count_ = 0;
};

Status CheckArgument(const Device& dev, const Kernel& k, const accel_kernel_arg_t& a, uint32_t i, const char* whose,
                     Checked* out) {
  const accel_kernel_argument_info_t& declared = k.arguments[i];
  const ArgName arg{i, ""};
  const ArgName buffer_arg{i, ".buffer"};
  if (KindName(a.kind) == nullptr) {
    return Error(ACCEL_ERROR_INVALID_ENUM, "'{}.kind' {} is not an accel_kernel_arg_kind_t", arg,
                 static_cast<int>(a.kind));
  }
  if (a.kind != declared.kind) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' is a {} argument, but kernel '{}' declares {} a {} {}", arg,
                 KindText(a.kind), k.name, Declared(k, i), KindText(declared.kind), Signature(k));
  }
  accel_bk_kernel_arg_t& b = out->At(i);
  b = accel_bk_kernel_arg_t{};
  b.stype = ACCEL_STRUCTURE_TYPE_BACKEND_KERNEL_ARG;
  b.struct_size = sizeof(b);
  b.kind = a.kind;
  b.access = ACCEL_ACCESS_READ;
  switch (a.kind) {
    case ACCEL_KERNEL_ARG_KIND_BUFFER: {
      Ref<Buffer> buffer = Pin<Buffer>(a.buffer);  // a hazard slot, no reference count (docs/handles.md)
      if (buffer == nullptr) {
        auto resolved = ResolveNamed<Buffer>(a.buffer, buffer_arg);  // the message (or a handle made live meanwhile)
        if (!resolved.ok()) return resolved.status();
        buffer = Ref<Buffer>(std::move(resolved.value()));
      }
      if (buffer->device.get() != &dev) {
        return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' belongs to {}, not to the {}'s {}", buffer_arg,
                     buffer->device->label, whose, dev.label);
      }
      if (a.offset > buffer->size || (a.size == 0 && a.offset == buffer->size) || a.size > buffer->size - a.offset) {
        uint64_t end = 0;
        if (a.size != 0 && __builtin_add_overflow(a.offset, a.size, &end)) {  // [8, 7) said the wrapped end
          return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' binds {} bytes at offset {}: the range wraps around", arg,
                       a.size, a.offset);
        }
        return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' binds [{}, {}) of a {}-byte buffer", arg, a.offset,
                     a.size == 0 ? buffer->size : end, buffer->size);
      }
      b.size = a.size == 0 ? buffer->size - a.offset : a.size;
      if (dev.caps.max_buffer_range != 0 && b.size > dev.caps.max_buffer_range) {
        return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' binds {}, past the device's max buffer range {}", arg,
                     FormatBytes(b.size), FormatBytes(dev.caps.max_buffer_range));
      }
      const uint32_t access = a.access == 0 ? static_cast<uint32_t>(declared.access) : static_cast<uint32_t>(a.access);
      if (access < ACCEL_ACCESS_READ || access > ACCEL_ACCESS_READ_WRITE) {
        return Error(ACCEL_ERROR_INVALID_ENUM, "'{}.access' {} is not an accel_access_t", arg, access);
      }
      if ((access & ~static_cast<uint32_t>(declared.access)) != 0) {
        return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}.access' asks for {} access, but kernel '{}' declares {} {}",
                     arg,
                     access == ACCEL_ACCESS_READ    ? "read"
                     : access == ACCEL_ACCESS_WRITE ? "write"
                                                    : "read-write",
                     k.name, Declared(k, i), declared.access == ACCEL_ACCESS_READ ? "read-only" : "write-only");
      }
      if ((access & ACCEL_ACCESS_WRITE) != 0 && buffer->read_only) {
        return CheckWritable(*buffer, fmt::format("{}", buffer_arg).c_str());
      }
      b.access = static_cast<accel_access_t>(access);
      b.buffer = buffer->bk;
      b.offset = a.offset;
      out->Hold(std::move(buffer));
      break;
    }
    case ACCEL_KERNEL_ARG_KIND_SCALAR:
      ACCEL_REQUIRE(a.value != nullptr, ACCEL_ERROR_INVALID_ARGUMENT, "'{}.value' is NULL", arg);
      ACCEL_REQUIRE(a.size > 0, ACCEL_ERROR_INVALID_ARGUMENT, "'{}.size' is 0", arg);
      if (declared.size != 0 && a.size != declared.size) {
        return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}.size' is {} bytes, but kernel '{}' declares {} of {} bytes",
                     arg, a.size, k.name, Declared(k, i), declared.size);
      }
      if (dev.caps.max_argument_size != 0 && a.size > dev.caps.max_argument_size) {
        return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}.size' {} is past the device's max argument size {}", arg,
                     a.size, dev.caps.max_argument_size);
      }
      b.value = a.value;
      b.size = a.size;
      break;
    case ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY:
      ACCEL_REQUIRE(a.size > 0, ACCEL_ERROR_INVALID_ARGUMENT, "'{}.size' is 0: local memory needs a size", arg);
      b.size = a.size;
      out->dynamic_local = SaturatingAdd(out->dynamic_local, a.size);
      break;
    case ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS:
      if ((dev.caps.features & ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES) == 0) {
        return Error(ACCEL_ERROR_UNSUPPORTED, "'{}' is a device address, but {} has no device addresses", arg,
                     dev.label);
      }
      b.device_address = a.device_address;
      break;
    default: break;
  }
  out->Done(i);
  return Status::Ok();
}

// Reads `desc` into `*d` and checks all but the arguments, for a launch of `k` on `dev`.
Status CheckDesc(const Device& dev, const Kernel& k, const accel_launch_desc_t* desc, accel_launch_desc_t* d) {
  ACCEL_TRY(ReadInStruct(desc, ACCEL_STRUCTURE_TYPE_LAUNCH_DESC, "desc", d));
  ACCEL_REQUIRE(d->flags == 0, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->flags' 0x{:x} must be 0", d->flags);
  ACCEL_TRY(CheckGeometry(dev, k, *d));
  const auto expected = static_cast<uint32_t>(k.arguments.size());
  if (d->arg_count != expected) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'desc->arg_count' is {}, but kernel '{}' takes {} argument(s) {}",
                 d->arg_count, k.name, expected, Signature(k));
  }
  ACCEL_REQUIRE(d->arg_count == 0 || d->args != nullptr, ACCEL_ERROR_INVALID_ARGUMENT,
                "'desc->args' is NULL with 'desc->arg_count' {}", d->arg_count);
  return Status::Ok();
}

// Checks the arguments of `d` (CheckDesc passed) into `*checked`, and the local memory they add up to.
// `whose` names what `dev` is the device of, for the messages ("stream", or "kernel" when preparing).
Status CheckArgs(const Device& dev, const Kernel& k, const accel_launch_desc_t& d, const char* whose,
                 Checked* checked) {
  for (uint32_t i = 0; i < d.arg_count; ++i) {
    const accel_kernel_arg_t* element = nullptr;
    ACCEL_TRY(ArrayElement(d.args, d.arg_count, i, "desc->args", &element));
    accel_kernel_arg_t a{};
    ACCEL_TRY(ReadInStruct(element, ACCEL_STRUCTURE_TYPE_KERNEL_ARG, ArgName{i, ""}, &a));
    ACCEL_TRY(CheckArgument(dev, k, a, i, whose, checked));
  }
  const uint64_t local = SaturatingAdd(k.properties.local_memory_size, checked->dynamic_local);
  if (local > dev.caps.local_memory_size) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT,
                 "kernel '{}' needs {} of local memory ({} static + {} from LOCAL_MEMORY arguments); {} has {}", k.name,
                 FormatBytes(local), FormatBytes(k.properties.local_memory_size), FormatBytes(checked->dynamic_local),
                 dev.label, FormatBytes(dev.caps.local_memory_size));
  }
  return Status::Ok();
}

// The launch as the backend receives it; its args are `checked`'s.
accel_bk_launch_t BackendLaunch(const accel_launch_desc_t& d, const Checked& checked) {
  accel_bk_launch_t launch{};
  launch.stype = ACCEL_STRUCTURE_TYPE_BACKEND_LAUNCH;
  launch.struct_size = sizeof(launch);
  for (int i = 0; i < 3; ++i) {
    launch.grid[i] = d.grid[i];
    launch.block[i] = d.block[i];
  }
  launch.args = checked.args();
  launch.arg_count = checked.count();
  launch.dynamic_local_memory_size = checked.dynamic_local;
  return launch;
}

// A backend's failure to enqueue, named as the launch's.
Status OnLaunch(const Device& dev, const Kernel& k, Status s) {
  if (s.ok()) return s;
  return Status(s.code(), fmt::format("'stream' on {}: kernel '{}': {}", dev.label, k.name, s.message()));
}

// Whether the backend prepares launches itself (all three 1.1 slots set).
bool BackendPrepares(const Device& dev) {
  const accel_backend_api_t& api = dev.backend->api();
  return api.kernel_prepare_launch != nullptr && api.prepared_launch_destroy != nullptr &&
         api.stream_launch_prepared != nullptr;
}

}  // namespace

extern "C" {

ACCEL_API accel_status_t accel_stream_launch_kernel(accel_stream_t stream, accel_kernel_t kernel,
                                                    const accel_launch_desc_t* desc) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_RESOLVE(k, Kernel, kernel);
    ACCEL_NOT_NULL(desc);
    const Device& dev = *self->device;
    if (k->device != self->device) {
      return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'kernel' '{}' was loaded on {}, not on the stream's {}", k->name,
                   k->device->label, dev.label);
    }
    accel_launch_desc_t d{};
    ACCEL_TRY(CheckDesc(dev, *k, desc, &d));
    Checked checked(d.arg_count);
    ACCEL_TRY(CheckArgs(dev, *k, d, "stream", &checked));
    const accel_bk_launch_t launch = BackendLaunch(d, checked);
    return OnLaunch(dev, *k, ACCEL_SLOT(*dev.backend, stream_launch_kernel, self->bk, k->bk, &launch));
  });
}

ACCEL_API accel_status_t accel_kernel_prepare_launch(accel_kernel_t kernel, const accel_launch_desc_t* desc,
                                                     accel_prepared_launch_t* out_prepared) {
  return GuardedOutput(__func__, out_prepared, [&]() -> Status {
    ACCEL_RESOLVE(k, Kernel, kernel);
    ACCEL_NOT_NULL(desc);
    ACCEL_NOT_NULL(out_prepared);
    const Device& dev = *k->device;
    accel_launch_desc_t d{};
    ACCEL_TRY(CheckDesc(dev, *k, desc, &d));
    Checked checked(d.arg_count);
    ACCEL_TRY(CheckArgs(dev, *k, d, "kernel", &checked));
    auto prepared = std::make_shared<PreparedLaunch>();
    prepared->device = k->device;
    prepared->kernel = k.shared();
    prepared->buffers = checked.SharedBuffers();
    prepared->args.assign(checked.args(), checked.args() + checked.count());
    size_t bytes = 0;
    for (const accel_bk_kernel_arg_t& a : prepared->args) {
      if (a.kind == ACCEL_KERNEL_ARG_KIND_SCALAR) bytes += static_cast<size_t>(a.size);
    }
    prepared->values.resize(bytes);
    bytes = 0;
    for (accel_bk_kernel_arg_t& a : prepared->args) {
      if (a.kind != ACCEL_KERNEL_ARG_KIND_SCALAR) continue;
      std::memcpy(prepared->values.data() + bytes, a.value, static_cast<size_t>(a.size));
      a.value = prepared->values.data() + bytes;
      bytes += static_cast<size_t>(a.size);
    }
    prepared->launch = BackendLaunch(d, checked);
    prepared->launch.args = prepared->args.data();
    if (BackendPrepares(dev)) {
      Status s = ACCEL_SLOT(*dev.backend, kernel_prepare_launch, k->bk, &prepared->launch, &prepared->bk);
      if (s.code() == ACCEL_ERROR_UNSUPPORTED) {
        prepared->bk = nullptr;  // not this launch: the core enqueues its checked copy each time
      } else if (!s.ok()) {
        return Status(s.code(), fmt::format("{}: kernel '{}': {}", dev.label, k->name, s.message()));
      }
    }
    *out_prepared = ToHandle<accel_prepared_launch_t>(InstanceOf(dev).Adopt(HandleType::kPreparedLaunch, prepared));
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_prepared_launch_destroy(accel_prepared_launch_t prepared) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, PreparedLaunch, prepared);
    std::shared_ptr<Object> owned = InstanceOf(*self->device).Forget(self->handle());
    ACCEL_REQUIRE(owned != nullptr, ACCEL_ERROR_INVALID_HANDLE,
                  "'prepared' is a stale prepared launch handle (already destroyed)");
    // The backend's prepared launch goes when the last reference does: an enqueue in flight on another thread
    // keeps it until it returns.
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_stream_launch_prepared(accel_stream_t stream, accel_prepared_launch_t prepared) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_RESOLVE(p, PreparedLaunch, prepared);
    const Device& dev = *self->device;
    if (p->device != self->device) {
      return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'prepared' launches kernel '{}' on {}, not on the stream's {}",
                   p->kernel->name, p->device->label, dev.label);
    }
    if (p->bk != nullptr) {
      return OnLaunch(dev, *p->kernel, ACCEL_SLOT(*dev.backend, stream_launch_prepared, self->bk, p->bk));
    }
    return OnLaunch(dev, *p->kernel,
                    ACCEL_SLOT(*dev.backend, stream_launch_kernel, self->bk, p->kernel->bk, &p->launch));
  });
}

}  // extern "C"
