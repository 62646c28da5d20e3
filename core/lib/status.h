// Status and Expected<T>: how errors travel inside libaccel, and the
// thread-local last-error message they end in (docs/errors.md).
#ifndef ACCEL_CORE_STATUS_H_
#define ACCEL_CORE_STATUS_H_

#include <fmt/format.h>

#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "accel/accel.h"

namespace accel::core {

// A status code with the message that explains it. Plain value; not shared.
// A status without a message (every success) holds no string: making,
// moving and destroying one costs what an integer and a null pointer do, so
// that the hot paths' many checks that pass cost nearly nothing
// (docs/overhead.md).
class Status {
 public:
  Status() = default;
  Status(accel_status_t code, std::string message) : code_(code) {
    if (!message.empty()) message_ = std::make_unique<std::string>(std::move(message));
  }
  // A code without a message (a success other than ACCEL_SUCCESS, such as ACCEL_NOT_READY).
  explicit Status(accel_status_t code) : code_(code) {}
  Status(const Status& other)
      : code_(other.code_), message_(other.message_ ? std::make_unique<std::string>(*other.message_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) *this = Status(other);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status Ok() { return {}; }
  bool ok() const { return code_ >= 0; }
  accel_status_t code() const { return code_; }
  const std::string& message() const { return message_ ? *message_ : EmptyMessage(); }

 private:
  static const std::string& EmptyMessage();

  accel_status_t code_ = ACCEL_SUCCESS;
  std::unique_ptr<std::string> message_;  // null when empty
};

template <typename... Args>
Status Error(accel_status_t code, fmt::format_string<Args...> format, Args&&... args) {
  return Status(code, fmt::format(format, std::forward<Args>(args)...));
}

// A value or the Status that explains why there is none. Plain value.
template <typename T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Expected(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  T& value() { return std::get<0>(v_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const Status& status() const { return std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

// Sets the calling thread's last error to "<function>: <message>" and returns
// the code, for the last line of a failing C entry point.
accel_status_t SetLastError(const char* function, const Status& status);
// Sets the calling thread's last error to `message` as it is (NULL: "").
accel_status_t SetLastErrorText(accel_status_t code, const char* message);

// The message a backend handed over through host->set_error during the slot
// call in progress on this thread (docs/errors.md).
void SetBackendMessage(accel_status_t code, const char* message);
// Set while a backend message is pending on this thread, so that clearing
// none (every slot call, twice) costs one thread-local load.
extern constinit thread_local bool
    t_backend_message_pending;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
void ClearPendingBackendMessage();
inline void ClearBackendMessage() {
  if (t_backend_message_pending) ClearPendingBackendMessage();
}
// Takes the pending backend message ("" when none).
std::string TakeBackendMessage();

const char* StatusName(accel_status_t status);
const char* LastErrorMessage();
accel_status_t LastErrorStatus();

}  // namespace accel::core

#endif  // ACCEL_CORE_STATUS_H_
