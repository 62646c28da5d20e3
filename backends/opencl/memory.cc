// Buffers: one cl_mem each in the device's platform context
// (CL_MEM_READ_WRITE; CL_MEM_ALLOC_HOST_PTR for the host-pinned kind), counted
// against the device's memory_total. Maps go through clEnqueueMapBuffer on the
// device's internal queue. Freeing is stream-ordered because queued operations
// hold their own Storage references.
#include <memory>
#include <string>

#include "opencl_backend.h"

namespace accel::opencl {
namespace {

std::string Bytes(uint64_t bytes) { return std::to_string(bytes) + " bytes"; }

// Waits for `event` (taking ownership) and returns its failure, if any.
cl_int WaitAndRelease(Runtime* runtime, cl_event event) {
  ClEvent owned(runtime, event);
  if (event == nullptr) return CL_SUCCESS;
  cl_int err = runtime->cl.WaitForEvents(1, &event);
  cl_int status = CL_COMPLETE;
  if (runtime->cl.GetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr) ==
          CL_SUCCESS &&
      status < 0) {
    err = status;
  }
  return err;
}

}  // namespace

Storage::~Storage() {
  if (mapped_ != nullptr) {
    // Destroyed while mapped: the mapping goes with it.
    cl_event event = nullptr;
    Runtime* runtime = device_->runtime;
    if (runtime->cl.EnqueueUnmapMemObject(device_->internal_queue.get(), mem_.get(), mapped_, 0, nullptr, &event) ==
        CL_SUCCESS) {
      WaitAndRelease(runtime, event);
    }
  }
  mem_.reset();
  device_->Unreserve(size_);
}

accel_status_t Storage::Map(uint64_t offset, uint64_t size, uint64_t flags, void** out_ptr) {
  std::lock_guard lock(mutex_);
  if (mapped_ != nullptr) return device_->host->Fail(ACCEL_ERROR_FAILED_PRECONDITION, "the buffer is already mapped");
  cl_map_flags map_flags = 0;
  if ((flags & ACCEL_MAP_READ) != 0) map_flags |= CL_MAP_READ;
  if ((flags & ACCEL_MAP_WRITE) != 0) map_flags |= CL_MAP_WRITE;
  if (map_flags == 0) map_flags = CL_MAP_READ | CL_MAP_WRITE;
  cl_int err = CL_SUCCESS;
  void* p = device_->runtime->cl.EnqueueMapBuffer(device_->internal_queue.get(), mem_.get(), CL_TRUE, map_flags,
                                                  static_cast<size_t>(offset), static_cast<size_t>(size), 0, nullptr,
                                                  nullptr, &err);
  if (p == nullptr || err != CL_SUCCESS) {
    return device_->host->Fail(StatusFromCl(err), ClFailure("clEnqueueMapBuffer", err) + " mapping " + Bytes(size) +
                                                      " at offset " + std::to_string(offset));
  }
  mapped_ = p;
  *out_ptr = p;
  return ACCEL_SUCCESS;
}

accel_status_t Storage::Unmap() {
  std::lock_guard lock(mutex_);
  if (mapped_ == nullptr) return device_->host->Fail(ACCEL_ERROR_FAILED_PRECONDITION, "the buffer is not mapped");
  Runtime* runtime = device_->runtime;
  cl_event event = nullptr;
  cl_int err =
      runtime->cl.EnqueueUnmapMemObject(device_->internal_queue.get(), mem_.get(), mapped_, 0, nullptr, &event);
  if (err == CL_SUCCESS) err = WaitAndRelease(runtime, event);
  if (err != CL_SUCCESS) return device_->host->Fail(StatusFromCl(err), ClFailure("clEnqueueUnmapMemObject", err));
  mapped_ = nullptr;
  return ACCEL_SUCCESS;
}

accel_status_t BufferCreate(accel_bk_device_t device_handle, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept {
  Device* device = Unwrap(device_handle);
  const Host& host = *device->host;
  return Guard(host, "buffer_create", [&] {
    // The core checked the size (> 0, within max_allocation) and the memory kind.
    if (!ACCEL_BACKEND_HAS_FIELD(desc, accel_buffer_desc_t, memory_kind)) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "buffer description too small for ABI 1.0");
    }
    const uint64_t size = desc->size;
    const bool pinned = desc->memory_kind == ACCEL_MEMORY_KIND_HOST_PINNED;
    if (!device->Reserve(size)) {
      const uint64_t total = device->capabilities.memory_total;
      return host.Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                       "OpenCL device '" + device->properties.name + "': " + Bytes(size) + " requested, " +
                           Bytes(total - device->Used()) + " free of " + Bytes(total) + " (CL_DEVICE_GLOBAL_MEM_SIZE)");
    }
    const cl_mem_flags flags = CL_MEM_READ_WRITE | (pinned ? CL_MEM_ALLOC_HOST_PTR : 0);
    cl_int err = CL_SUCCESS;
    cl_mem mem = device->runtime->cl.CreateBuffer(device->platform->context.get(), flags, static_cast<size_t>(size),
                                                  nullptr, &err);
    if (mem == nullptr) {
      device->Unreserve(size);
      return host.Fail(StatusFromCl(err),
                       ClFailure("clCreateBuffer", err) + " for " + Bytes(size) +
                           (pinned ? " (CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR)" : " (CL_MEM_READ_WRITE)"));
    }
    ClMem owned(device->runtime, mem);
    std::shared_ptr<Storage> storage;
    try {
      storage = std::make_shared<Storage>(device, std::move(owned), size);  // from here the storage unreserves
    } catch (...) {
      device->Unreserve(size);
      throw;
    }
    *out_buffer = Wrap(std::make_unique<Buffer>(Buffer{device, std::move(storage)}).release());
    return ACCEL_SUCCESS;
  });
}

void BufferDestroy(accel_bk_buffer_t buffer) noexcept {
  // Drops the handle's reference; operations still queued keep the storage until they complete.
  std::unique_ptr<Buffer> owned(Unwrap(buffer));
}

accel_status_t BufferMap(accel_bk_buffer_t handle, uint64_t offset, uint64_t size, uint64_t flags,
                         void** out_ptr) noexcept {
  // Ordering with stream work is the caller's (docs/streams.md); the map itself blocks until the bytes are there.
  Buffer* buffer = Unwrap(handle);
  return Guard(*buffer->device->host, "buffer_map", [&] { return buffer->storage->Map(offset, size, flags, out_ptr); });
}

accel_status_t BufferUnmap(accel_bk_buffer_t handle) noexcept {
  Buffer* buffer = Unwrap(handle);
  return Guard(*buffer->device->host, "buffer_unmap", [&] { return buffer->storage->Unmap(); });
}

}  // namespace accel::opencl
