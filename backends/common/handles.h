// Conversions between a backend's objects and the opaque accel_bk_* handles of the ABI. Part of
// accel_backend_support (backend_support.h).
#ifndef ACCEL_BACKENDS_COMMON_HANDLES_H_
#define ACCEL_BACKENDS_COMMON_HANDLES_H_

#include <accel_backend.h>

// Defines, in the enclosing namespace, `Type* Unwrap(handle_type)` and `handle_type Wrap(Type*)`.
#define ACCEL_BACKEND_HANDLE(handle_type, Type)                                       \
  inline Type* Unwrap(handle_type handle) { return reinterpret_cast<Type*>(handle); } \
  inline handle_type Wrap(Type* object) { return reinterpret_cast<handle_type>(object); }

// Wrap and Unwrap for each of a backend's seven object types, in the enclosing namespace.
#define ACCEL_BACKEND_HANDLES(Context, Device, Buffer, Stream, Event, Module, Kernel) \
  ACCEL_BACKEND_HANDLE(accel_bk_context_t, Context)                                   \
  ACCEL_BACKEND_HANDLE(accel_bk_device_t, Device)                                     \
  ACCEL_BACKEND_HANDLE(accel_bk_buffer_t, Buffer)                                     \
  ACCEL_BACKEND_HANDLE(accel_bk_stream_t, Stream)                                     \
  ACCEL_BACKEND_HANDLE(accel_bk_event_t, Event)                                       \
  ACCEL_BACKEND_HANDLE(accel_bk_module_t, Module)                                     \
  ACCEL_BACKEND_HANDLE(accel_bk_kernel_t, Kernel)

#endif  // ACCEL_BACKENDS_COMMON_HANDLES_H_
