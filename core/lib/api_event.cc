// C entry points: events.
#include "api_common.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

namespace {

Status OnEvent(const Event& e, Status status) {
  if (status.ok()) return status;
  return Status(status.code(), "'event' on " + e.device->label + ": " + status.message());
}

}  // namespace

extern "C" {

ACCEL_API accel_status_t accel_event_create(accel_device_t device, const accel_event_desc_t* desc,
                                            accel_event_t* out_event) {
  return GuardedOutput(__func__, out_event, [&]() -> Status {
    ACCEL_RESOLVE(dev, Device, device);
    ACCEL_NOT_NULL(out_event);
    accel_event_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_EVENT_DESC;
    d.struct_size = sizeof(d);
    ACCEL_TRY(ReadInStruct(desc, ACCEL_STRUCTURE_TYPE_EVENT_DESC, "desc", &d));
    ACCEL_REQUIRE((d.flags & ~ACCEL_EVENT_FLAG_TIMING) == 0, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'desc->flags' has unknown bits 0x{:x}", d.flags & ~ACCEL_EVENT_FLAG_TIMING);
    if ((d.flags & ACCEL_EVENT_FLAG_TIMING) != 0 && (dev->caps.features & ACCEL_DEVICE_FEATURE_EVENT_TIMING) == 0) {
      return Error(ACCEL_ERROR_UNSUPPORTED, "{}: ACCEL_EVENT_FLAG_TIMING needs event timing, which the device lacks",
                   dev->label);
    }
    auto event = std::make_shared<Event>();
    event->device = dev;
    event->flags = d.flags;
    ACCEL_TRY(OnDevice(*dev, ACCEL_SLOT(*dev->backend, event_create, dev->bk, &d, &event->bk)));
    *out_event = ToHandle<accel_event_t>(InstanceOf(*dev).Adopt(HandleType::kEvent, event));
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_event_destroy(accel_event_t event) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Event, event);
    std::shared_ptr<Object> owned = InstanceOf(*self->device).Forget(self->handle());
    ACCEL_REQUIRE(owned != nullptr, ACCEL_ERROR_INVALID_HANDLE, "'event' is a stale event handle (already destroyed)");
    // The backend object goes when the last reference does: a call in flight
    // on another thread keeps it alive until it returns.
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_event_query(accel_event_t event) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Event, event);
    return OnEvent(*self, ACCEL_SLOT(*self->device->backend, event_query, self->bk));
  });
}

ACCEL_API accel_status_t accel_event_synchronize(accel_event_t event, uint64_t timeout_ns) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Event, event);
    return OnEvent(*self, ACCEL_SLOT(*self->device->backend, event_synchronize, self->bk, timeout_ns));
  });
}

ACCEL_API accel_status_t accel_event_elapsed_time(accel_event_t start, accel_event_t end, uint64_t* out_nanoseconds) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(first, Event, start);
    ACCEL_RESOLVE(last, Event, end);
    ACCEL_NOT_NULL(out_nanoseconds);
    ACCEL_REQUIRE(first->device == last->device, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'start' belongs to {} and 'end' to {}: elapsed time needs events of one device",
                  first->device->label, last->device->label);
    for (const auto& [e, name] : {std::pair{first.get(), "start"}, std::pair{last.get(), "end"}}) {
      ACCEL_REQUIRE((e->flags & ACCEL_EVENT_FLAG_TIMING) != 0, ACCEL_ERROR_FAILED_PRECONDITION,
                    "'{}' was created without ACCEL_EVENT_FLAG_TIMING", name);
    }
    return OnEvent(*first,
                   ACCEL_SLOT(*first->device->backend, event_elapsed_time, first->bk, last->bk, out_nanoseconds));
  });
}

}  // extern "C"
