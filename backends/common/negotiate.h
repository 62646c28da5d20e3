// The body of accel_backend_get_api, the one entry point of a backend. Part of accel_backend_support
// (backend_support.h).
#ifndef ACCEL_BACKENDS_COMMON_NEGOTIATE_H_
#define ACCEL_BACKENDS_COMMON_NEGOTIATE_H_

#include <accel_backend.h>

namespace accel::backend {

// Negotiation: the major of the core's newest version must be ours; the answer is the older of the two newest, and
// it must not be older than the oldest the core accepts. Reads only what the core's struct_size covers; answers
// `api` (a static table). Messages name `backend_name` (static).
accel_status_t NegotiateApi(accel_backend_get_api_args_t* args, const accel_backend_api_t* api,
                            const char* backend_name) noexcept;

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_NEGOTIATE_H_
