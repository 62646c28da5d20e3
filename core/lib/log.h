// The instance's log sink: one function with levels, set by ACCEL_LOG or the
// instance description; the library never prints otherwise.
#ifndef ACCEL_CORE_LOG_H_
#define ACCEL_CORE_LOG_H_

#include <fmt/format.h>

#include <string_view>

#include "accel/accel.h"

namespace accel::core {

// Filters by level and forwards to the application's callback or stderr.
// Thread-safe: configuration is fixed at construction.
class Logger {
 public:
  Logger() = default;
  Logger(accel_log_level_t level, accel_log_callback_t callback, void* user_data)
      : level_(level), callback_(callback), user_data_(user_data) {}

  bool Enabled(accel_log_level_t level) const { return level != ACCEL_LOG_LEVEL_OFF && level <= level_; }
  void Write(accel_log_level_t level, std::string_view message) const;

  template <typename... Args>
  void Log(accel_log_level_t level, fmt::format_string<Args...> format, Args&&... args) const {
    if (Enabled(level)) Write(level, fmt::format(format, std::forward<Args>(args)...));
  }

  // Parses "error|warn|info|debug" (or "off"); unknown text gives `fallback`.
  static accel_log_level_t ParseLevel(const char* text, accel_log_level_t fallback);

 private:
  accel_log_level_t level_ = ACCEL_LOG_LEVEL_OFF;
  accel_log_callback_t callback_ = nullptr;
  void* user_data_ = nullptr;
};

}  // namespace accel::core

#endif  // ACCEL_CORE_LOG_H_
