// Streams and events (docs/streams.md): an immediate command list (asynchronous) plus a worker thread, as
// common/gpu_stream.h describes, which holds everything but the vendor calls. This file supplies those (GpuTraits),
// the slots, and the operations that enqueue vendor work of their own: copies and fills.
//
// Level Zero differs from CUDA and HIP in three ways the traits absorb: an event lives in an event pool (one pool an
// event here) and is signalled by a barrier (zeCommandListAppendBarrier with the event), which also orders it after
// everything before it; a command list cannot say whether it is idle, so stream query and synchronize append a
// marker event and ask it; and a timing event's time is its kernel timestamp, in device timer ticks.
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "level_zero_backend.h"

namespace accel::level_zero {
namespace {

using Result = GpuTraits::Result;
using StreamHandle = GpuTraits::StreamHandle;
using EventHandle = GpuTraits::EventHandle;

const ZeApi& Api(const Device* device) { return device->runtime->ze; }

// The most signalled markers a stream keeps for reuse.
constexpr size_t kSpareMarkers = 4;

// A marker for `stream` that covers everything appended so far, taken for one caller (ReleaseMarker gives it back):
// the newest pending marker when nothing was appended after it (a caller polling a long kernel appends nothing new:
// one barrier and one event for all its polls), else a new barrier with a spare or new event. Under the list mutex.
Result TakeMarkerLocked(const Device* device, ZeStream* stream, ZeEvent** out) {
  if (!stream->pending.empty() && stream->pending.back()->after == stream->appended) {
    *out = stream->pending.back();
    ++(*out)->users;
    return ZE_RESULT_SUCCESS;
  }
  const ZeApi& ze = Api(device);
  ZeEvent* marker = nullptr;
  if (!stream->spare.empty()) {
    marker = stream->spare.back();
    stream->spare.pop_back();
    const Result r = ze.zeEventHostReset(marker->event);
    if (r != ZE_RESULT_SUCCESS) {
      GpuTraits::EventDestroy(device, marker);
      return r;
    }
  } else {
    const Result r = GpuTraits::EventCreate(device, &marker, /*timing=*/false, /*blocking_sync=*/false);
    if (r != ZE_RESULT_SUCCESS) return r;
  }
  const Result r = ze.zeCommandListAppendBarrier(stream->list, marker->event, 0, nullptr);
  if (r != ZE_RESULT_SUCCESS) {
    stream->spare.push_back(marker);  // never appended: no signal pending on it
    return r;
  }
  marker->after = ++stream->appended;
  marker->users = 1;
  stream->pending.push_back(marker);
  *out = marker;
  return ZE_RESULT_SUCCESS;
}

// Gives `marker` back, then moves the markers seen signalled and no longer asked, oldest first, to the spares (the
// list runs in order, so the first pending one that is not signalled, or still asked, ends the walk); spares past
// kSpareMarkers are destroyed.
void ReleaseMarker(const Device* device, ZeStream* stream, ZeEvent* marker) {
  std::lock_guard lock(stream->mutex);
  --marker->users;
  while (!stream->pending.empty() && stream->pending.front()->users == 0 &&
         Api(device).zeEventQueryStatus(stream->pending.front()->event) == ZE_RESULT_SUCCESS) {
    ZeEvent* done = stream->pending.front();
    stream->pending.pop_front();
    if (stream->spare.size() < kSpareMarkers) {
      stream->spare.push_back(done);
    } else {
      GpuTraits::EventDestroy(device, done);
    }
  }
}

}  // namespace

// --- The vendor calls of the shared streams and events --------------------------------------------------------------

Result GpuTraits::EventCreate(const Device* device, EventHandle* out, bool timing, bool) {
  // Host waits poll or sleep as the driver chooses: Level Zero events have no blocking-sync flag.
  const ZeApi& ze = Api(device);
  auto event = std::make_unique<ZeEvent>();
  ze_event_pool_desc_t pool_desc{};
  pool_desc.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  pool_desc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | (timing ? ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP : 0u);
  pool_desc.count = 1;
  // For every device of the context, not this one alone: a stream of another device may wait on the event, and
  // the spec allows an event only on the devices its pool was created for.
  Result r = ze.zeEventPoolCreate(device->ze_context, &pool_desc, 0, nullptr, &event->pool);
  if (r != ZE_RESULT_SUCCESS) return r;
  event->context = device->ze_context;
  ze_event_desc_t event_desc{};
  event_desc.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
  event_desc.index = 0;
  event_desc.signal = ZE_EVENT_SCOPE_FLAG_HOST;  // what the device wrote is visible to the host once signalled
  event_desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
  r = ze.zeEventCreate(event->pool, &event_desc, &event->event);
  if (r != ZE_RESULT_SUCCESS) {
    ze.zeEventPoolDestroy(event->pool);
    return r;
  }
  *out = event.release();
  return ZE_RESULT_SUCCESS;
}
Result GpuTraits::EventDestroy(const Device* device, EventHandle event) {
  std::unique_ptr<ZeEvent> owned(event);
  const Result r = Api(device).zeEventDestroy(event->event);
  const Result p = Api(device).zeEventPoolDestroy(event->pool);
  return r != ZE_RESULT_SUCCESS ? r : p;
}
Result GpuTraits::EventQuery(const Device* device, EventHandle event) {
  return Api(device).zeEventQueryStatus(event->event);
}
Result GpuTraits::EventSynchronize(const Device* device, EventHandle event) {
  return Api(device).zeEventHostSynchronize(event->event, UINT64_MAX);
}
Result GpuTraits::EventRecord(const Device* device, EventHandle event, StreamHandle stream) {
  // An event is recorded again only after its last signal was waited for (a record's event once; the drain event
  // after each drain): resetting it cannot race a pending signal.
  const ZeApi& ze = Api(device);
  std::lock_guard lock(stream->mutex);
  const Result r = ze.zeEventHostReset(event->event);
  if (r != ZE_RESULT_SUCCESS) return r;
  ++stream->appended;
  return ze.zeCommandListAppendBarrier(stream->list, event->event, 0, nullptr);
}
Result GpuTraits::EventElapsedTime(const Device* device, float* out_ms, EventHandle start, EventHandle end) {
  const ZeApi& ze = Api(device);
  ze_kernel_timestamp_result_t t[2]{};
  const EventHandle events[2] = {start, end};
  for (int i = 0; i < 2; ++i) {
    const Result status = ze.zeEventQueryStatus(events[i]->event);
    if (status != ZE_RESULT_SUCCESS) return status;
    const Result r = ze.zeEventQueryKernelTimestamp(events[i]->event, &t[i]);
    if (r != ZE_RESULT_SUCCESS) return r;
  }
  // Ticks of the global timer, which wraps after kernelTimestampValidBits bits.
  const uint32_t bits = device->attributes.kernel_timestamp_bits;
  const uint64_t mask = bits == 0 || bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  uint64_t ticks = (t[1].globalEnd - t[0].globalEnd) & mask;
  // More than half the timer's range is an end before its start that wrapped: clamped at 0 (docs/streams.md), as
  // every backend does, not a span of minutes.
  if (ticks > (mask >> 1)) ticks = 0;
  const double ns = static_cast<double>(ticks) * static_cast<double>(device->attributes.timer_resolution_ns);
  *out_ms = static_cast<float>(ns / 1e6);
  return ZE_RESULT_SUCCESS;
}
Result GpuTraits::StreamCreate(const Device* device, StreamHandle* out) {
  auto stream = std::make_unique<ZeStream>();
  ze_command_queue_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  const Result r = Api(device).zeCommandListCreateImmediate(device->ze_context, device->device, &desc, &stream->list);
  if (r != ZE_RESULT_SUCCESS) return r;
  *out = stream.release();
  return ZE_RESULT_SUCCESS;
}
Result GpuTraits::StreamDestroy(const Device* device, StreamHandle stream) {
  std::unique_ptr<ZeStream> owned(stream);
  // The shared code synchronized the stream first: every marker is signalled.
  for (ZeEvent* marker : stream->pending) EventDestroy(device, marker);
  for (ZeEvent* marker : stream->spare) EventDestroy(device, marker);
  return Api(device).zeCommandListDestroy(stream->list);
}
Result GpuTraits::StreamQuery(const Device* device, StreamHandle stream) {
  ZeEvent* marker = nullptr;
  {
    std::lock_guard lock(stream->mutex);
    const Result r = TakeMarkerLocked(device, stream, &marker);
    if (r != ZE_RESULT_SUCCESS) return r;
  }
  const Result r = Api(device).zeEventQueryStatus(marker->event);
  ReleaseMarker(device, stream, marker);
  return r;
}
Result GpuTraits::StreamSynchronize(const Device* device, StreamHandle stream) {
  ZeEvent* marker = nullptr;
  {
    std::lock_guard lock(stream->mutex);
    const Result r = TakeMarkerLocked(device, stream, &marker);
    if (r != ZE_RESULT_SUCCESS) return r;
  }
  const Result r = Api(device).zeEventHostSynchronize(marker->event, UINT64_MAX);
  ReleaseMarker(device, stream, marker);
  return r;
}
Result GpuTraits::StreamWaitEvent(const Device* device, StreamHandle stream, EventHandle event) {
  // An event of another driver's context cannot be waited on by this context's lists: the host waits for it (the
  // record was enqueued already: the shared code waits for that first).
  if (event->context != device->ze_context) return Api(device).zeEventHostSynchronize(event->event, UINT64_MAX);
  ze_event_handle_t handle = event->event;
  return AppendInOrder(device, stream, [&](ze_command_list_handle_t list) {
    return Api(device).zeCommandListAppendWaitOnEvents(list, 1, &handle);
  });
}
accel_status_t GpuTraits::StatusFrom(Result code) { return StatusFromZe(code); }
std::string GpuTraits::Failure(const Device*, const char* call, Result code) { return ZeFailure(call, code); }
void GpuTraits::DestroyBuffer(accel_bk_buffer_t buffer) { backend::GpuBufferSlots<GpuTraits>::BufferDestroy(buffer); }

accel_status_t EnqueueOperation(Stream* stream, Operation op) { return stream->Enqueue(std::move(op)); }

// --- Stream slots ------------------------------------------------------------------------------------------------

namespace {

// The status of an enqueue: ACCEL_SUCCESS, or its failure with `*message` naming the call.
accel_status_t Enqueued(const char* call, ze_result_t r, std::string* message) {
  if (r == ZE_RESULT_SUCCESS) return ACCEL_SUCCESS;
  *message = ZeFailure(call, r);
  return StatusFromZe(r);
}

// An operation that copies `size` bytes from `src` to `dst` (device, host or pinned addresses alike: Level Zero
// copies between any two addresses the context knows, and from and to ordinary host memory).
Operation CopyOperation(Device* device, const char* what, void* dst, const void* src, uint64_t size) {
  Operation op;
  op.what = what;
  op.submit = [device, dst, src, size](ZeStream* s, std::string* message) {
    return Enqueued("zeCommandListAppendMemoryCopy",
                    AppendInOrder(device, s,
                                  [&](ze_command_list_handle_t list) {
                                    return device->runtime->ze.zeCommandListAppendMemoryCopy(
                                        list, dst, src, static_cast<size_t>(size), nullptr, 0, nullptr);
                                  }),
                    message);
  };
  return op;
}

}  // namespace

accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t handle, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_host_to_buffer", [&] {
    std::shared_ptr<Storage> to = Unwrap(dst)->storage;
    Operation op = CopyOperation(stream->device(), "copy host to buffer", Ptr(to->address() + dst_offset), src, size);
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
    Operation op = CopyOperation(stream->device(), "copy buffer to host", dst, Ptr(from->address() + src_offset), size);
    op.keep.push_back(std::move(from));
    op.copies.device_to_host_copies = 1;
    op.copies.device_to_host_bytes = size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBuffer(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept {
  // One copy command whatever the devices: within a driver's context Level Zero copies between devices, peer to peer
  // where zeDeviceCanAccessPeer says so; counted as the link between them declares. Without peer access the spec
  // does not promise the copy: it should be staged through host memory (docs/backend-abi.md: "a peer or host-staged
  // copy"); refusing it failed conformance's multi-device copies. Not done yet (backends/level_zero/README.md).
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer", [&] {
    std::shared_ptr<Storage> from = Unwrap(src)->storage;
    std::shared_ptr<Storage> to = Unwrap(dst)->storage;
    Device* here = stream->device();
    if (from->device()->ze_context != to->device()->ze_context) {
      return stream->host().Fail(ACCEL_ERROR_UNSUPPORTED,
                                 from->device()->label + " and " + to->device()->label +
                                     " belong to different Level Zero drivers: copy through the host");
    }
    Operation op =
        CopyOperation(here, "copy buffer", Ptr(to->address() + dst_offset), Ptr(from->address() + src_offset), size);
    backend::CountBufferCopy(from->device() == here && to->device() == here,
                             from->device() != to->device() && PeerAccess(*from->device(), *to->device()), size,
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
    if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4) {
      return stream->host().Fail(ACCEL_ERROR_INVALID_ARGUMENT, "fill patterns are 1, 2 or 4 bytes");
    }
    // The pattern is copied now (the caller's is valid for the call only) into memory the operation keeps until
    // the fill completed: the spec does not say when the driver reads it.
    auto value = std::make_shared<uint32_t>(0);
    std::memcpy(value.get(), pattern, pattern_size);
    std::shared_ptr<Storage> to = Unwrap(buffer)->storage;
    Device* device = stream->device();
    Operation op;
    op.what = "fill buffer";
    op.submit = [device, address = to->address() + offset, size, value = value.get(), pattern_size](
                    ZeStream* s, std::string* message) {
      return Enqueued("zeCommandListAppendMemoryFill",
                      AppendInOrder(device, s,
                                    [&](ze_command_list_handle_t list) {
                                      return device->runtime->ze.zeCommandListAppendMemoryFill(
                                          list, Ptr(address), value, pattern_size, static_cast<size_t>(size), nullptr,
                                          0, nullptr);
                                    }),
                      message);
    };
    op.keep.push_back(std::move(to));
    op.keep.push_back(std::move(value));
    return stream->Enqueue(std::move(op));
  });
}

}  // namespace accel::level_zero
