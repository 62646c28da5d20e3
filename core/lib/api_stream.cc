// C entry points: streams.
#include "api_common.h"
#include "host_callback.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

namespace {

std::string StreamLabel(const Stream& s) { return "'stream' on " + s.device->label; }

[[gnu::cold]] Status OnStreamFailed(const Stream& s, const Status& status) {
  return Status(status.code(), StreamLabel(s) + ": " + status.message());
}

inline Status OnStream(const Stream& s, Status status) {
  if (status.ok()) [[likely]]
    return status;
  return OnStreamFailed(s, status);
}

// A buffer used on a stream must belong to the stream's backend.
Status SameBackend(const Stream& s, const Device& other, const char* argument) {
  if (other.backend != s.device->backend) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' belongs to {}, which the stream's backend '{}' cannot reach",
                 argument, other.label, s.device->backend->name());
  }
  return Status::Ok();
}

// Same device: the simple and common case. Other devices of one backend are
// accepted for buffer-to-buffer copies only.
[[gnu::cold]] Status OtherDevice(const Stream& s, const Buffer& b, const char* argument) {
  return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' belongs to {}, not to the stream's {}", argument, b.device->label,
               s.device->label);
}

inline Status SameDevice(const Stream& s, const Buffer& b, const char* argument) {
  if (b.device != s.device) [[unlikely]]
    return OtherDevice(s, b, argument);
  return Status::Ok();
}

}  // namespace

extern "C" {

ACCEL_API accel_status_t accel_stream_create(accel_device_t device, const accel_stream_desc_t* desc,
                                             accel_stream_t* out_stream) {
  return GuardedOutput(__func__, out_stream, [&]() -> Status {
    ACCEL_RESOLVE(dev, Device, device);
    ACCEL_NOT_NULL(out_stream);
    accel_stream_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_STREAM_DESC;
    d.struct_size = sizeof(d);
    ACCEL_TRY(ReadInStruct(desc, ACCEL_STRUCTURE_TYPE_STREAM_DESC, "desc", &d));
    ACCEL_REQUIRE(d.flags == 0, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->flags' 0x{:x} must be 0", d.flags);
    auto stream = std::make_shared<Stream>();
    stream->device = dev;
    ACCEL_TRY(OnDevice(*dev, ACCEL_SLOT(*dev->backend, stream_create, dev->bk, &d, &stream->bk)));
    *out_stream = ToHandle<accel_stream_t>(InstanceOf(*dev).Adopt(HandleType::kStream, stream));
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_stream_destroy(accel_stream_t stream) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_REQUIRE(!InCallbackOf(self.get()), ACCEL_ERROR_FAILED_PRECONDITION,
                  "{} is running this host callback: a stream cannot be destroyed from its own callback (destroy it "
                  "from another thread, or after the callback returns); the stream is left as it was",
                  StreamLabel(*self));
    std::shared_ptr<Object> owned = InstanceOf(*self->device).Forget(self->handle());
    ACCEL_REQUIRE(owned != nullptr, ACCEL_ERROR_INVALID_HANDLE,
                  "'stream' is a stale stream handle (already destroyed)");
    // The backend object goes when the last reference does: a call in flight
    // on another thread keeps it alive until it returns.
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_stream_copy_host_to_buffer(accel_stream_t stream, const void* src, accel_buffer_t dst,
                                                          uint64_t dst_offset, uint64_t size) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_RESOLVE(buffer, Buffer, dst);
    ACCEL_NOT_NULL(src);
    ACCEL_TRY(SameDevice(*self, *buffer, "dst"));
    ACCEL_TRY(CheckWritable(*buffer, "dst"));
    ACCEL_TRY(CheckRange(*buffer, dst_offset, size, "dst", "dst_offset"));
    if (size == 0) return Status::Ok();
    return OnStream(*self, ACCEL_SLOT(*self->device->backend, stream_copy_host_to_buffer, self->bk, src, buffer->bk,
                                      dst_offset, size));
  });
}

ACCEL_API accel_status_t accel_stream_copy_buffer_to_host(accel_stream_t stream, accel_buffer_t src,
                                                          uint64_t src_offset, void* dst, uint64_t size) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_RESOLVE(buffer, Buffer, src);
    ACCEL_NOT_NULL(dst);
    ACCEL_TRY(SameDevice(*self, *buffer, "src"));
    ACCEL_TRY(CheckRange(*buffer, src_offset, size, "src", "src_offset"));
    if (size == 0) return Status::Ok();
    return OnStream(*self, ACCEL_SLOT(*self->device->backend, stream_copy_buffer_to_host, self->bk, buffer->bk,
                                      src_offset, dst, size));
  });
}

ACCEL_API accel_status_t accel_stream_copy_buffer(accel_stream_t stream, accel_buffer_t src, uint64_t src_offset,
                                                  accel_buffer_t dst, uint64_t dst_offset, uint64_t size) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_RESOLVE(source, Buffer, src);
    ACCEL_RESOLVE(target, Buffer, dst);
    ACCEL_TRY(SameBackend(*self, *source->device, "src"));
    ACCEL_TRY(SameBackend(*self, *target->device, "dst"));
    ACCEL_TRY(CheckRange(*source, src_offset, size, "src", "src_offset"));
    ACCEL_TRY(CheckRange(*target, dst_offset, size, "dst", "dst_offset"));
    ACCEL_TRY(CheckWritable(*target, "dst"));
    if (source == target && src_offset < dst_offset + size && dst_offset < src_offset + size && size > 0) {
      return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'src' and 'dst' are one buffer and [{}, {}) overlaps [{}, {})",
                   src_offset, src_offset + size, dst_offset, dst_offset + size);
    }
    if (size == 0) return Status::Ok();
    return OnStream(*self, ACCEL_SLOT(*self->device->backend, stream_copy_buffer, self->bk, source->bk, src_offset,
                                      target->bk, dst_offset, size));
  });
}

ACCEL_API accel_status_t accel_stream_fill_buffer(accel_stream_t stream, accel_buffer_t buffer, uint64_t offset,
                                                  uint64_t size, const void* pattern, uint32_t pattern_size) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_RESOLVE(target, Buffer, buffer);
    ACCEL_NOT_NULL(pattern);
    ACCEL_REQUIRE(pattern_size == 1 || pattern_size == 2 || pattern_size == 4, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'pattern_size' {} must be 1, 2 or 4", pattern_size);
    ACCEL_REQUIRE(offset % pattern_size == 0 && size % pattern_size == 0, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'offset' {} and 'size' {} must be multiples of 'pattern_size' {}", offset, size, pattern_size);
    ACCEL_TRY(SameDevice(*self, *target, "buffer"));
    ACCEL_TRY(CheckRange(*target, offset, size, "buffer", "offset"));
    ACCEL_TRY(CheckWritable(*target, "buffer"));
    if (size == 0) return Status::Ok();
    return OnStream(*self, ACCEL_SLOT(*self->device->backend, stream_fill_buffer, self->bk, target->bk, offset, size,
                                      pattern, pattern_size));
  });
}

ACCEL_API accel_status_t accel_stream_enqueue_host_callback(accel_stream_t stream, accel_host_callback_t callback,
                                                            void* user_data) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_NOT_NULL(callback);
    // The backend runs the core's trampoline, which marks the stream as
    // running a callback on that thread (host_callback.h).
    auto record = std::make_unique<HostCallback>();
    record->callback = callback;
    record->user_data = user_data;
    record->stream = self.get();
    record->instance = self->device->instance;
    Status s = OnStream(*self, ACCEL_SLOT(*self->device->backend, stream_enqueue_host_callback, self->bk,
                                          &RunHostCallback, record.get()));
    if (s.ok()) (void)record.release();  // the backend runs it exactly once; RunHostCallback frees it
    return s;
  });
}

ACCEL_API accel_status_t accel_stream_free_buffer(accel_stream_t stream, accel_buffer_t buffer) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_RESOLVE(target, Buffer, buffer);
    ACCEL_TRY(SameBackend(*self, *target->device, "buffer"));
    const Backend& backend = *self->device->backend;
    if (backend.api().stream_free_buffer == nullptr) {
      return OnStream(*self, Error(ACCEL_ERROR_UNIMPLEMENTED, "backend '{}' does not implement stream_free_buffer",
                                   backend.name()));
    }
    std::shared_ptr<Object> owned = InstanceOf(*target->device).Forget(target->handle());
    ACCEL_REQUIRE(owned != nullptr, ACCEL_ERROR_INVALID_HANDLE,
                  "'buffer' is a stale buffer handle (already destroyed)");
    // The handle is stale now, so no call can take a new reference. Another thread's call that resolved the buffer
    // before may still be using its backend object (docs/threading.md): then the free is enqueued when that call
    // lets go of it, by the last reference (Buffer's destructor), later in this stream's order. Such a call holds
    // the buffer through a hazard slot (docs/handles.md, "Lookup") or a counted reference; this call's own are
    // `owned`, `target` when counted, and the retired list's while `target` is published.
    const long ours = 1 + (target.counted() ? 1 : 0) + (hazard::IsRetired(target.get()) ? 1 : 0);
    if (hazard::PublishedByOthers(target.get()) || owned.use_count() > ours) {
      target->free_on = self;
      return Status::Ok();
    }
    if (target->released.exchange(true)) return Status::Ok();
    Status s = ACCEL_SLOT(backend, stream_free_buffer, self->bk, target->bk);
    if (!s.ok()) {
      // The buffer is gone from the application either way; hand it to the
      // backend's own deferred free so nothing leaks.
      if (backend.api().buffer_destroy != nullptr) backend.api().buffer_destroy(target->bk);
      return OnStream(*self, Status(s.code(), s.message() + " (the buffer was freed after pending work instead)"));
    }
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_stream_record_event(accel_stream_t stream, accel_event_t event) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_RESOLVE(ev, Event, event);
    ACCEL_TRY(SameBackend(*self, *ev->device, "event"));
    return OnStream(*self, ACCEL_SLOT(*self->device->backend, stream_record_event, self->bk, ev->bk));
  });
}

ACCEL_API accel_status_t accel_stream_wait_event(accel_stream_t stream, accel_event_t event) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_RESOLVE(ev, Event, event);
    ACCEL_TRY(SameBackend(*self, *ev->device, "event"));
    return OnStream(*self, ACCEL_SLOT(*self->device->backend, stream_wait_event, self->bk, ev->bk));
  });
}

ACCEL_API accel_status_t accel_stream_query(accel_stream_t stream) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    return OnStream(*self, ACCEL_SLOT(*self->device->backend, stream_query, self->bk));
  });
}

ACCEL_API accel_status_t accel_stream_synchronize(accel_stream_t stream, uint64_t timeout_ns) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_REQUIRE(!InCallbackOf(self.get()), ACCEL_ERROR_FAILED_PRECONDITION,
                  "{} is running this host callback: synchronizing a stream from its own callback would wait for "
                  "itself",
                  StreamLabel(*self));
    return OnStream(*self, ACCEL_SLOT(*self->device->backend, stream_synchronize, self->bk, timeout_ns));
  });
}

ACCEL_API accel_status_t accel_stream_clear_error(accel_stream_t stream) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    return OnStream(*self, ACCEL_SLOT(*self->device->backend, stream_clear_error, self->bk));
  });
}

ACCEL_API accel_status_t accel_stream_get_copy_statistics(accel_stream_t stream,
                                                          accel_copy_statistics_t* out_statistics) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Stream, stream);
    ACCEL_TRY(CheckOutStruct(out_statistics, ACCEL_STRUCTURE_TYPE_COPY_STATISTICS, "out_statistics"));
    accel_copy_statistics_t stats{};
    stats.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
    stats.struct_size = sizeof(stats);
    ACCEL_TRY(OnStream(*self, ACCEL_SLOT(*self->device->backend, stream_get_copy_statistics, self->bk, &stats)));
    stats.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
    stats.struct_size = sizeof(stats);
    stats.next = nullptr;
    FillOutStruct(out_statistics, stats);
    return Status::Ok();
  });
}

}  // extern "C"
