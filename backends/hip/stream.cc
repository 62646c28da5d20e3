// Streams and events (docs/streams.md): a hipStream_t (non-blocking, on its device) plus a worker thread, as
// common/gpu_stream.h describes, which holds everything but the vendor calls. This file supplies those (GpuTraits),
// the slots, and the operations that enqueue vendor work of their own: copies and fills.
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "hip_backend.h"

namespace accel::hip {
namespace {

using Result = GpuTraits::Result;
using StreamHandle = GpuTraits::StreamHandle;
using EventHandle = GpuTraits::EventHandle;

const HipApi& Api(const Device* device) { return device->runtime->hip; }

}  // namespace

// --- The vendor calls of the shared streams and events --------------------------------------------------------------

Result GpuTraits::EventCreate(const Device* device, EventHandle* out, bool timing, bool blocking_sync) {
  return Api(device).hipEventCreateWithFlags(
      out, (timing ? 0u : hipEventDisableTiming) | (blocking_sync ? hipEventBlockingSync : 0u));
}
Result GpuTraits::EventDestroy(const Device* device, EventHandle event) { return Api(device).hipEventDestroy(event); }
Result GpuTraits::EventQuery(const Device* device, EventHandle event) { return Api(device).hipEventQuery(event); }
Result GpuTraits::EventSynchronize(const Device* device, EventHandle event) {
  return Api(device).hipEventSynchronize(event);
}
Result GpuTraits::EventRecord(const Device* device, EventHandle event, StreamHandle stream) {
  return Api(device).hipEventRecord(event, stream);
}
Result GpuTraits::EventElapsedTime(const Device* device, float* out_ms, EventHandle start, EventHandle end) {
  return Api(device).hipEventElapsedTime(out_ms, start, end);
}
Result GpuTraits::StreamCreate(const Device* device, StreamHandle* out) {
  return Api(device).hipStreamCreateWithFlags(out, hipStreamNonBlocking);
}
Result GpuTraits::StreamDestroy(const Device* device, StreamHandle stream) {
  return Api(device).hipStreamDestroy(stream);
}
Result GpuTraits::StreamQuery(const Device* device, StreamHandle stream) { return Api(device).hipStreamQuery(stream); }
Result GpuTraits::StreamSynchronize(const Device* device, StreamHandle stream) {
  return Api(device).hipStreamSynchronize(stream);
}
Result GpuTraits::StreamWaitEvent(const Device* device, StreamHandle stream, EventHandle event) {
  return Api(device).hipStreamWaitEvent(stream, event, 0);
}
accel_status_t GpuTraits::StatusFrom(Result code) { return StatusFromHip(code); }
std::string GpuTraits::Failure(const Device* device, const char* call, Result code) {
  return HipFailure(Api(device), call, code);
}
void GpuTraits::DestroyBuffer(accel_bk_buffer_t buffer) { backend::GpuBufferSlots<GpuTraits>::BufferDestroy(buffer); }

accel_status_t EnqueueOperation(Stream* stream, Operation op) { return stream->Enqueue(std::move(op)); }

Device* StreamDevice(Stream* stream) { return stream->device(); }

// --- Stream slots ------------------------------------------------------------------------------------------------

namespace {

// The status of an enqueue: ACCEL_SUCCESS, or its failure with `*message` naming the call.
accel_status_t Enqueued(const HipApi& hip, const char* call, hipError_t r, std::string* message) {
  if (r == hipSuccess) return ACCEL_SUCCESS;
  *message = HipFailure(hip, call, r);
  return StatusFromHip(r);
}

}  // namespace

accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t handle, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_host_to_buffer", [&] {
    std::shared_ptr<Storage> to = Unwrap(dst)->storage;
    const HipApi* hip = &stream->device()->runtime->hip;
    Operation op;
    op.what = "copy host to buffer";
    op.submit = [hip, address = to->address() + dst_offset, src, size](hipStream_t s, std::string* message) {
      return Enqueued(*hip, "hipMemcpyHtoDAsync",
                      hip->hipMemcpyHtoDAsync(Ptr(address), const_cast<void*>(src), static_cast<size_t>(size), s),
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
    const HipApi* hip = &stream->device()->runtime->hip;
    Operation op;
    op.what = "copy buffer to host";
    op.submit = [hip, address = from->address() + src_offset, dst, size](hipStream_t s, std::string* message) {
      return Enqueued(*hip, "hipMemcpyDtoHAsync",
                      hip->hipMemcpyDtoHAsync(dst, Ptr(address), static_cast<size_t>(size), s), message);
    };
    op.keep.push_back(std::move(from));
    op.copies.device_to_host_copies = 1;
    op.copies.device_to_host_bytes = size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBuffer(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept {
  // One device: hipMemcpyDtoDAsync. Two devices: hipMemcpyPeerAsync, which goes peer to peer where access is enabled
  // (backend.cc) and is staged by the runtime otherwise; counted as the link between them declares.
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer", [&] {
    std::shared_ptr<Storage> from = Unwrap(src)->storage;
    std::shared_ptr<Storage> to = Unwrap(dst)->storage;
    Device* here = stream->device();
    const HipApi* hip = &here->runtime->hip;
    const DeviceAddress from_address = from->address() + src_offset;
    const DeviceAddress to_address = to->address() + dst_offset;
    Operation op;
    op.what = "copy buffer";
    if (from->device() == to->device()) {
      op.submit = [hip, from_address, to_address, size](hipStream_t s, std::string* message) {
        return Enqueued(*hip, "hipMemcpyDtoDAsync",
                        hip->hipMemcpyDtoDAsync(Ptr(to_address), Ptr(from_address), static_cast<size_t>(size), s),
                        message);
      };
    } else {
      const int from_ordinal = from->device()->ordinal;
      const int to_ordinal = to->device()->ordinal;
      op.submit = [hip, from_address, to_address, from_ordinal, to_ordinal, size](hipStream_t s, std::string* message) {
        return Enqueued(*hip, "hipMemcpyPeerAsync",
                        hip->hipMemcpyPeerAsync(Ptr(to_address), to_ordinal, Ptr(from_address), from_ordinal,
                                                static_cast<size_t>(size), s),
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
    // 256-byte aligned, so the address is aligned for hipMemsetD16/D32.
    if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4) {
      return stream->host().Fail(ACCEL_ERROR_INVALID_ARGUMENT, "fill patterns are 1, 2 or 4 bytes");
    }
    uint32_t value = 0;  // copied now: the caller's pattern is valid for the call only
    std::memcpy(&value, pattern, pattern_size);
    std::shared_ptr<Storage> to = Unwrap(buffer)->storage;
    const HipApi* hip = &stream->device()->runtime->hip;
    Operation op;
    op.what = "fill buffer";
    op.submit = [hip, address = to->address() + offset, count = static_cast<size_t>(size / pattern_size), value,
                 pattern_size](hipStream_t s, std::string* message) {
      switch (pattern_size) {
        case 1:
          return Enqueued(*hip, "hipMemsetD8Async",
                          hip->hipMemsetD8Async(Ptr(address), static_cast<unsigned char>(value), count, s), message);
        case 2:
          return Enqueued(*hip, "hipMemsetD16Async",
                          hip->hipMemsetD16Async(Ptr(address), static_cast<unsigned short>(value), count, s),  // NOLINT
                          message);
        default:
          return Enqueued(*hip, "hipMemsetD32Async",
                          hip->hipMemsetD32Async(Ptr(address), static_cast<int>(value), count, s), message);
      }
    };
    op.keep.push_back(std::move(to));
    return stream->Enqueue(std::move(op));
  });
}

}  // namespace accel::hip
