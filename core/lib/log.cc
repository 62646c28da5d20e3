#include "log.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace accel::core {

void Logger::Write(accel_log_level_t level, std::string_view message) const {
  if (!Enabled(level)) return;
  std::string text(message);
  if (callback_ != nullptr) {
    callback_(user_data_, level, text.c_str());
    return;
  }
  static const char* const kNames[] = {"off", "error", "warn", "info", "debug"};
  const char* name = (level >= 0 && level <= ACCEL_LOG_LEVEL_DEBUG) ? kNames[level] : "log";
  std::fprintf(stderr, "accel[%s]: %s\n", name, text.c_str());
}

accel_log_level_t Logger::ParseLevel(const char* text, accel_log_level_t fallback) {
  if (text == nullptr) return fallback;
  struct Name {
    const char* name;
    accel_log_level_t level;
  };
  static const Name kNames[] = {{"off", ACCEL_LOG_LEVEL_OFF},   {"error", ACCEL_LOG_LEVEL_ERROR},
                                {"warn", ACCEL_LOG_LEVEL_WARN}, {"warning", ACCEL_LOG_LEVEL_WARN},
                                {"info", ACCEL_LOG_LEVEL_INFO}, {"debug", ACCEL_LOG_LEVEL_DEBUG}};
  for (const Name& n : kNames) {
    if (strcasecmp(text, n.name) == 0) return n.level;
  }
  return fallback;
}

}  // namespace accel::core
