#include "status.h"

namespace accel::core {
namespace {

// Per thread: the last error that reached the application, and the message a
// backend set during the slot call in progress (pending while
// t_backend_message_pending is set).
struct ThreadErrors {
  std::string last_message;
  accel_status_t last_status = ACCEL_SUCCESS;
  std::string backend_message;

  ThreadErrors() = default;
  ThreadErrors(const ThreadErrors&) = delete;
  ThreadErrors& operator=(const ThreadErrors&) = delete;
  ~ThreadErrors();
};

// The calling thread's errors. The object is a thread_local with a destructor, which every access would check for
// its construction; the plain pointer beside it makes the common access a load (a task group's task clears the
// error once per task).
thread_local ThreadErrors* t_errors = nullptr;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

ThreadErrors& MakeErrors() {
  thread_local ThreadErrors errors;
  t_errors = &errors;
  return errors;
}

ThreadErrors& Errors() {
  ThreadErrors* e = t_errors;
  return e != nullptr ? *e : MakeErrors();
}

// A call from another thread_local's destructor after this one's goes through MakeErrors, as every call did before
// the pointer.
ThreadErrors::~ThreadErrors() { t_errors = nullptr; }

}  // namespace

const std::string& Status::EmptyMessage() {
  static const std::string empty;
  return empty;
}

accel_status_t SetLastError(const char* function, const Status& status) {
  ThreadErrors& e = Errors();
  try {
    e.last_message = fmt::format("{}: {}", function, status.message());
  } catch (...) {
    e.last_message.clear();  // Out of memory: keep the code at least.
  }
  e.last_status = status.code();
  return status.code();
}

accel_status_t SetLastErrorText(accel_status_t code, const char* message) {
  ThreadErrors& e = Errors();
  try {
    if (message == nullptr || message[0] == '\0') {
      e.last_message.clear();  // the common case (a success clearing it), without measuring or copying
    } else {
      e.last_message = message;
    }
  } catch (...) {
    e.last_message.clear();
  }
  e.last_status = code;
  return code;
}

constinit thread_local bool t_backend_message_pending =
    false;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

void SetBackendMessage(accel_status_t /*code*/, const char* message) {
  ThreadErrors& e = Errors();
  try {
    e.backend_message = message != nullptr ? message : "";
    t_backend_message_pending = true;
  } catch (...) {
  }
}

void ClearPendingBackendMessage() {
  t_backend_message_pending = false;
  ThreadErrors* e = t_errors;
  if (e == nullptr) return;
  e->backend_message.clear();
}

std::string TakeBackendMessage() {
  ThreadErrors& e = Errors();
  std::string m = std::move(e.backend_message);
  e.backend_message.clear();
  t_backend_message_pending = false;
  return m;
}

const char* StatusName(accel_status_t status) {
  switch (status) {
    case ACCEL_SUCCESS: return "ACCEL_SUCCESS";
    case ACCEL_NOT_READY: return "ACCEL_NOT_READY";
    case ACCEL_ERROR_INVALID_ARGUMENT: return "ACCEL_ERROR_INVALID_ARGUMENT";
    case ACCEL_ERROR_INVALID_HANDLE: return "ACCEL_ERROR_INVALID_HANDLE";
    case ACCEL_ERROR_INVALID_ENUM: return "ACCEL_ERROR_INVALID_ENUM";
    case ACCEL_ERROR_UNSUPPORTED: return "ACCEL_ERROR_UNSUPPORTED";
    case ACCEL_ERROR_UNIMPLEMENTED: return "ACCEL_ERROR_UNIMPLEMENTED";
    case ACCEL_ERROR_NOT_FOUND: return "ACCEL_ERROR_NOT_FOUND";
    case ACCEL_ERROR_RESOURCE_EXHAUSTED: return "ACCEL_ERROR_RESOURCE_EXHAUSTED";
    case ACCEL_ERROR_FAILED_PRECONDITION: return "ACCEL_ERROR_FAILED_PRECONDITION";
    case ACCEL_ERROR_TIMEOUT: return "ACCEL_ERROR_TIMEOUT";
    case ACCEL_ERROR_DEVICE_LOST: return "ACCEL_ERROR_DEVICE_LOST";
    case ACCEL_ERROR_BACKEND_UNAVAILABLE: return "ACCEL_ERROR_BACKEND_UNAVAILABLE";
    case ACCEL_ERROR_INCOMPATIBLE_VERSION: return "ACCEL_ERROR_INCOMPATIBLE_VERSION";
    case ACCEL_ERROR_INTERNAL: return "ACCEL_ERROR_INTERNAL";
    case ACCEL_ERROR_CANCELLED: return "ACCEL_ERROR_CANCELLED";
    default: return "ACCEL_STATUS_UNKNOWN";
  }
}

const char* LastErrorMessage() { return Errors().last_message.c_str(); }
accel_status_t LastErrorStatus() { return Errors().last_status; }

}  // namespace accel::core
