// Streams of simulated devices: the engine's streams, wrapped to count each
// operation against the injected faults (a device lost after N operations, a
// stream that fails the operation past N, a copy slowed down) before handing
// it to the engine.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "memory.h"
#include "sim_backend.h"

namespace accel::sim {
namespace {

// Counts one stream operation; on the stream-error fault queues the failure first (the operation itself still
// follows, and the engine skips it as it skips all work after an error, so ownership-moving operations such as a
// stream-ordered free still release what they hold). Then `forward` enqueues the operation.
template <typename Forward>
accel_status_t Enqueue(accel_bk_stream_t handle, const char* what, Forward&& forward) noexcept {
  SimStream* stream = Unwrap(handle);
  SimDevice* device = stream->device;
  return host::Guard(device->context()->host(), what, [&]() -> accel_status_t {
    if (accel_status_t s = device->Operate(what); s != ACCEL_SUCCESS) return s;
    const uint64_t n = stream->operations.fetch_add(1) + 1;
    const FaultSpec& f = device->context()->profile().faults;
    if (device->faulty() && f.stream_error_after > 0 && n == f.stream_error_after + 1) {
      const std::string message = "operation #" + std::to_string(n) + " (" + what + ") on a stream of " +
                                  device->label() +
                                  " failed by injection (stream_error_after=" + std::to_string(f.stream_error_after) +
                                  ", seed " + std::to_string(f.seed) + ")";
      device->context()->host().Log(ACCEL_LOG_LEVEL_INFO, message);
      if (accel_status_t s = host::StreamEnqueueFailure(stream->engine, f.stream_error_status, message);
          s != ACCEL_SUCCESS) {
        return s;
      }
    }
    return forward(stream->engine);
  });
}

// The slow_copy fault's wait, run on the stream's worker before the copy: `user_data` is the delay in microseconds.
accel_status_t SlowCopyWait(void* user_data, accel_status_t status) {
  if (status == ACCEL_SUCCESS) {
    std::this_thread::sleep_for(std::chrono::microseconds(reinterpret_cast<uintptr_t>(user_data)));
  }
  return ACCEL_SUCCESS;
}

// A copy: on the slow_copy fault the stream first waits (the copy itself, its result and its bytes are unchanged).
template <typename Forward>
accel_status_t EnqueueCopy(accel_bk_stream_t handle, const char* what, Forward&& forward) noexcept {
  return Enqueue(handle, what, [&](accel_bk_stream_t engine) -> accel_status_t {
    SimDevice* device = Unwrap(handle)->device;
    uint64_t number = 0;
    if (device->DrawSlowCopy(&number)) {
      const FaultSpec& f = device->context()->profile().faults;
      device->context()->host().Log(
          ACCEL_LOG_LEVEL_INFO, device->label() + ": copy #" + std::to_string(number) + " (" + what + ") slowed by " +
                                    std::to_string(f.slow_copy_delay_us) +
                                    " us by injection (slow_copy=" + ProbabilityText(f.slow_copy_probability) +
                                    ", seed " + std::to_string(f.seed) + ")");
      if (accel_status_t s = host::StreamEnqueueHostCallback(
              engine, &SlowCopyWait, reinterpret_cast<void*>(static_cast<uintptr_t>(f.slow_copy_delay_us)));
          s != ACCEL_SUCCESS) {
        return s;
      }
    }
    return forward(engine);
  });
}

}  // namespace

accel_status_t StreamCreate(accel_bk_device_t device_handle, const accel_stream_desc_t* desc,
                            accel_bk_stream_t* out_stream) noexcept {
  SimDevice* device = Sim(device_handle);
  return host::Guard(device->context()->host(), "stream_create", [&]() -> accel_status_t {
    if (accel_status_t s = device->CheckAlive(); s != ACCEL_SUCCESS) return s;
    auto stream = std::make_unique<SimStream>();
    stream->device = device;
    if (accel_status_t s = host::StreamCreate(device_handle, desc, &stream->engine); s != ACCEL_SUCCESS) return s;
    *out_stream = Wrap(stream.release());
    return ACCEL_SUCCESS;
  });
}

void StreamDestroy(accel_bk_stream_t handle) noexcept {
  std::unique_ptr<SimStream> stream(Unwrap(handle));
  host::StreamDestroy(stream->engine);
}

accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t stream, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept {
  return EnqueueCopy(stream, "stream_copy_host_to_buffer", [&](accel_bk_stream_t engine) {
    return host::StreamCopyHostToBuffer(engine, src, dst, dst_offset, size);
  });
}

accel_status_t StreamCopyBufferToHost(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset, void* dst,
                                      uint64_t size) noexcept {
  return EnqueueCopy(stream, "stream_copy_buffer_to_host", [&](accel_bk_stream_t engine) {
    return host::StreamCopyBufferToHost(engine, src, src_offset, dst, size);
  });
}

accel_status_t StreamCopyBuffer(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept {
  return EnqueueCopy(stream, "stream_copy_buffer", [&](accel_bk_stream_t engine) {
    // A lost device's memory is gone for every stream: a copy from or to it on another device's stream returned
    // the lost device's bytes (docs/errors.md: a lost device's objects are unusable).
    for (accel_bk_buffer_t buffer : {src, dst}) {
      const auto* owner = static_cast<const SimDevice*>(host::Unwrap(buffer)->device->hooks);
      if (accel_status_t s = owner->CheckAlive(); s != ACCEL_SUCCESS) return s;
    }
    return host::StreamCopyBuffer(engine, src, src_offset, dst, dst_offset, size);
  });
}

accel_status_t StreamFillBuffer(accel_bk_stream_t stream, accel_bk_buffer_t buffer, uint64_t offset, uint64_t size,
                                const void* pattern, uint32_t pattern_size) noexcept {
  return Enqueue(stream, "stream_fill_buffer", [&](accel_bk_stream_t engine) {
    return host::StreamFillBuffer(engine, buffer, offset, size, pattern, pattern_size);
  });
}

accel_status_t StreamEnqueueHostCallback(accel_bk_stream_t stream, accel_host_callback_t callback,
                                         void* user_data) noexcept {
  return Enqueue(stream, "stream_enqueue_host_callback", [&](accel_bk_stream_t engine) {
    return host::StreamEnqueueHostCallback(engine, callback, user_data);
  });
}

accel_status_t StreamFreeBuffer(accel_bk_stream_t stream, accel_bk_buffer_t buffer) noexcept {
  return Enqueue(stream, "stream_free_buffer",
                 [&](accel_bk_stream_t engine) { return host::StreamFreeBuffer(engine, buffer); });
}

accel_status_t StreamRecordEvent(accel_bk_stream_t stream, accel_bk_event_t event) noexcept {
  return Enqueue(stream, "stream_record_event",
                 [&](accel_bk_stream_t engine) { return host::StreamRecordEvent(engine, event); });
}

accel_status_t StreamWaitEvent(accel_bk_stream_t stream, accel_bk_event_t event) noexcept {
  return Enqueue(stream, "stream_wait_event",
                 [&](accel_bk_stream_t engine) { return host::StreamWaitEvent(engine, event); });
}

accel_status_t StreamLaunchKernel(accel_bk_stream_t stream, accel_bk_kernel_t kernel,
                                  const accel_bk_launch_t* launch) noexcept {
  return Enqueue(stream, "stream_launch_kernel",
                 [&](accel_bk_stream_t engine) { return host::StreamLaunchKernel(engine, kernel, launch); });
}

accel_status_t StreamQuery(accel_bk_stream_t handle) noexcept {
  SimStream* stream = Unwrap(handle);
  if (accel_status_t s = stream->device->CheckAlive(); s != ACCEL_SUCCESS) return s;
  return host::StreamQuery(stream->engine);
}

accel_status_t StreamSynchronize(accel_bk_stream_t handle, uint64_t timeout_ns) noexcept {
  SimStream* stream = Unwrap(handle);
  const accel_status_t s = host::StreamSynchronize(stream->engine, timeout_ns);
  if (accel_status_t lost = stream->device->CheckAlive(); lost != ACCEL_SUCCESS) return lost;
  return s;
}

accel_status_t StreamClearError(accel_bk_stream_t handle) noexcept {
  SimStream* stream = Unwrap(handle);
  if (accel_status_t s = stream->device->CheckAlive(); s != ACCEL_SUCCESS) return s;
  return host::StreamClearError(stream->engine);
}

accel_status_t StreamGetCopyStatistics(accel_bk_stream_t handle, accel_copy_statistics_t* out) noexcept {
  return host::StreamGetCopyStatistics(Unwrap(handle)->engine, out);
}

}  // namespace accel::sim
