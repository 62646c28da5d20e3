// A value or the reason there is none: how the planner reports every error
// (bad input, an unplaceable gang) without exceptions. Plain value.
#ifndef ACCEL_CORE_PLANNER_EXPECTED_H_
#define ACCEL_CORE_PLANNER_EXPECTED_H_

#include <string>
#include <utility>
#include <variant>

namespace accel::planner {

// Why an operation failed: one sentence naming the field or the constraint.
struct Error {
  std::string message;
};

template <typename T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Expected(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace accel::planner

#endif  // ACCEL_CORE_PLANNER_EXPECTED_H_
