// Streams and events (docs/streams.md): a CUstream (non-blocking, in the device's primary context) plus a worker
// thread, as common/gpu_stream.h describes, which holds everything but the vendor calls. This file supplies those
// (GpuTraits), the slots, and the operations that enqueue vendor work of their own: copies and fills.
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "cuda_backend.h"

namespace accel::cuda {
namespace {

using Result = GpuTraits::Result;
using StreamHandle = GpuTraits::StreamHandle;
using EventHandle = GpuTraits::EventHandle;

const CuApi& Api(const Device* device) { return device->runtime->cu; }

}  // namespace

// --- The vendor calls of the shared streams and events --------------------------------------------------------------

Result GpuTraits::EventCreate(const Device* device, EventHandle* out, bool timing, bool blocking_sync) {
  return Api(device).cuEventCreate(
      out, (timing ? 0u : CU_EVENT_DISABLE_TIMING) | (blocking_sync ? CU_EVENT_BLOCKING_SYNC : 0u));
}
Result GpuTraits::EventDestroy(const Device* device, EventHandle event) { return Api(device).cuEventDestroy(event); }
Result GpuTraits::EventQuery(const Device* device, EventHandle event) { return Api(device).cuEventQuery(event); }
Result GpuTraits::EventSynchronize(const Device* device, EventHandle event) {
  return Api(device).cuEventSynchronize(event);
}
Result GpuTraits::EventRecord(const Device* device, EventHandle event, StreamHandle stream) {
  return Api(device).cuEventRecord(event, stream);
}
Result GpuTraits::EventElapsedTime(const Device* device, float* out_ms, EventHandle start, EventHandle end) {
  return Api(device).cuEventElapsedTime(out_ms, start, end);
}
Result GpuTraits::StreamCreate(const Device* device, StreamHandle* out) {
  return Api(device).cuStreamCreate(out, CU_STREAM_NON_BLOCKING);
}
Result GpuTraits::StreamDestroy(const Device* device, StreamHandle stream) {
  return Api(device).cuStreamDestroy(stream);
}
Result GpuTraits::StreamQuery(const Device* device, StreamHandle stream) { return Api(device).cuStreamQuery(stream); }
Result GpuTraits::StreamSynchronize(const Device* device, StreamHandle stream) {
  return Api(device).cuStreamSynchronize(stream);
}
Result GpuTraits::StreamWaitEvent(const Device* device, StreamHandle stream, EventHandle event) {
  return Api(device).cuStreamWaitEvent(stream, event, 0);
}
accel_status_t GpuTraits::StatusFrom(Result code) { return StatusFromCu(code); }
std::string GpuTraits::Failure(const Device* device, const char* call, Result code) {
  return CuFailure(Api(device), call, code);
}
void GpuTraits::DestroyBuffer(accel_bk_buffer_t buffer) { backend::GpuBufferSlots<GpuTraits>::BufferDestroy(buffer); }

accel_status_t EnqueueOperation(Stream* stream, Operation op) { return stream->Enqueue(std::move(op)); }

Device* StreamDevice(Stream* stream) { return stream->device(); }

// --- Stream slots ------------------------------------------------------------------------------------------------

namespace {

// The status of an enqueue: ACCEL_SUCCESS, or its failure with `*message` naming the call.
accel_status_t Enqueued(const CuApi& cu, const char* call, CUresult r, std::string* message) {
  if (r == CUDA_SUCCESS) return ACCEL_SUCCESS;
  *message = CuFailure(cu, call, r);
  return StatusFromCu(r);
}

}  // namespace

accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t handle, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_host_to_buffer", [&] {
    std::shared_ptr<Storage> to = Unwrap(dst)->storage;
    const CuApi* cu = &stream->device()->runtime->cu;
    Operation op;
    op.what = "copy host to buffer";
    op.submit = [cu, address = to->address() + dst_offset, src, size](CUstream s, std::string* message) {
      return Enqueued(*cu, "cuMemcpyHtoDAsync", cu->cuMemcpyHtoDAsync(address, src, static_cast<size_t>(size), s),
                      message);
    };
    op.keep.push_back(std::move(to));
    op.copies.host_to_device_copies = 1;
    op.copies.host_to_device_bytes = size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBufferToHost(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset, void* dst,
                                      uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer_to_host", [&] {
    std::shared_ptr<Storage> from = Unwrap(src)->storage;
    const CuApi* cu = &stream->device()->runtime->cu;
    Operation op;
    op.what = "copy buffer to host";
    op.submit = [cu, address = from->address() + src_offset, dst, size](CUstream s, std::string* message) {
      return Enqueued(*cu, "cuMemcpyDtoHAsync", cu->cuMemcpyDtoHAsync(dst, address, static_cast<size_t>(size), s),
                      message);
    };
    op.keep.push_back(std::move(from));
    op.copies.device_to_host_copies = 1;
    op.copies.device_to_host_bytes = size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBuffer(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept {
  // One device: cuMemcpyDtoDAsync. Two devices: cuMemcpyPeerAsync, which goes peer to peer where access is enabled
  // (backend.cc) and is staged by the driver otherwise; counted as the link between them declares.
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer", [&] {
    std::shared_ptr<Storage> from = Unwrap(src)->storage;
    std::shared_ptr<Storage> to = Unwrap(dst)->storage;
    Device* here = stream->device();
    const CuApi* cu = &here->runtime->cu;
    const CUdeviceptr from_address = from->address() + src_offset;
    const CUdeviceptr to_address = to->address() + dst_offset;
    Operation op;
    op.what = "copy buffer";
    if (from->device() == to->device()) {
      op.submit = [cu, from_address, to_address, size](CUstream s, std::string* message) {
        return Enqueued(*cu, "cuMemcpyDtoDAsync",
                        cu->cuMemcpyDtoDAsync(to_address, from_address, static_cast<size_t>(size), s), message);
      };
    } else {
      CUcontext from_context = from->device()->primary;
      CUcontext to_context = to->device()->primary;
      op.submit = [cu, from_address, to_address, from_context, to_context, size](CUstream s, std::string* message) {
        return Enqueued(
            *cu, "cuMemcpyPeerAsync",
            cu->cuMemcpyPeerAsync(to_address, to_context, from_address, from_context, static_cast<size_t>(size), s),
            message);
      };
    }
    backend::CountBufferCopy(
        from->device() == here && to->device() == here,
        from->device() != to->device() && LinkBetween(*from->device(), *to->device()).peer_access != 0, size,
        &op.copies);
    op.keep.push_back(std::move(from));
    op.keep.push_back(std::move(to));
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamFillBuffer(accel_bk_stream_t handle, accel_bk_buffer_t buffer, uint64_t offset, uint64_t size,
                                const void* pattern, uint32_t pattern_size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_fill_buffer", [&] {
    // The core checked that pattern_size is 1, 2 or 4 and that offset and size are multiples of it; buffers start
    // 256-byte aligned, so the address is aligned for cuMemsetD16/D32.
    if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4) {
      return stream->host().Fail(ACCEL_ERROR_INVALID_ARGUMENT, "fill patterns are 1, 2 or 4 bytes");
    }
    uint32_t value = 0;  // copied now: the caller's pattern is valid for the call only
    std::memcpy(&value, pattern, pattern_size);
    std::shared_ptr<Storage> to = Unwrap(buffer)->storage;
    const CuApi* cu = &stream->device()->runtime->cu;
    Operation op;
    op.what = "fill buffer";
    op.submit = [cu, address = to->address() + offset, count = static_cast<size_t>(size / pattern_size), value,
                 pattern_size](CUstream s, std::string* message) {
      switch (pattern_size) {
        case 1:
          return Enqueued(*cu, "cuMemsetD8Async",
                          cu->cuMemsetD8Async(address, static_cast<unsigned char>(value), count, s), message);
        case 2:
          return Enqueued(*cu, "cuMemsetD16Async",
                          cu->cuMemsetD16Async(address, static_cast<unsigned short>(value), count, s),  // NOLINT
                          message);
        default: return Enqueued(*cu, "cuMemsetD32Async", cu->cuMemsetD32Async(address, value, count, s), message);
      }
    };
    op.keep.push_back(std::move(to));
    return stream->Enqueue(std::move(op));
  });
}

}  // namespace accel::cuda
