#include "json_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace accel::tools {
namespace {

// Writes all of `text` to `fd`; false with errno set on failure.
bool WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

bool WriteJsonFile(const std::string& path, const nlohmann::json& doc, std::string* error) {
  const std::string text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  auto fail = [&](const char* step) {
    *error = "cannot write --json " + path + ": " + step + ": " + std::strerror(errno);
    return false;
  };
  struct stat existing {};
  const bool exists = stat(path.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) {
    // /dev/null, /dev/stdout, a pipe: written as they are (a rename would replace the device or the link).
    const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return fail("open");
    const bool written = WriteAll(fd, text);
    const int saved = errno;
    close(fd);
    errno = saved;
    return written || fail("write");
  }
  // A temporary file of a name no one could plant (mkstemp: O_EXCL), next to the file, renamed over it once whole;
  // it keeps the old file's permissions, else the usual 0644 less the umask.
  std::vector<char> temporary(path.begin(), path.end());
  const std::string_view suffix = ".tmp.XXXXXX";
  temporary.insert(temporary.end(), suffix.begin(), suffix.end());
  temporary.push_back('\0');
  const int fd = mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) return fail("cannot create a temporary file next to it");
  mode_t mode = 0644;
  if (exists) {
    mode = existing.st_mode & 07777;
  } else {
    const mode_t mask = umask(0);
    umask(mask);
    mode &= ~mask;
  }
  auto abandon = [&](const char* step) {
    const int saved = errno;
    close(fd);
    unlink(temporary.data());
    errno = saved;
    return fail(step);
  };
  if (fchmod(fd, mode) != 0) return abandon("fchmod");
  if (!WriteAll(fd, text)) return abandon("write");
  if (close(fd) != 0) {
    const int saved = errno;
    unlink(temporary.data());
    errno = saved;
    return fail("close");
  }
  if (std::rename(temporary.data(), path.c_str()) != 0) {
    const int saved = errno;
    unlink(temporary.data());
    errno = saved;
    return fail("rename");
  }
  return true;
}

}  // namespace accel::tools
