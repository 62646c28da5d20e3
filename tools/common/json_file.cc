#include "json_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace accel::tools {

bool WriteJsonFile(const std::string& path, const nlohmann::json& doc, std::string* error) {
  const std::string text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  auto fail = [&](const char* step) {
    *error = "cannot write --json " + path + ": " + step + ": " + std::strerror(errno);
    return false;
  };
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot create a temporary file next to it");
  std::string_view left = text;
  while (!left.empty()) {
    const ssize_t n = write(fd, left.data(), left.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      close(fd);
      unlink(temporary.c_str());
      errno = saved;
      return fail("write");
    }
    left.remove_prefix(static_cast<size_t>(n));
  }
  if (close(fd) != 0) {
    const int saved = errno;
    unlink(temporary.c_str());
    errno = saved;
    return fail("close");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    unlink(temporary.c_str());
    errno = saved;
    return fail("rename");
  }
  return true;
}

}  // namespace accel::tools
