// The agent's wire format and path rules (protocol.h).
#include "protocol.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace accel::object_agent {
namespace {

constexpr size_t kMaxFds = 4;  // more than one is malformed; room to receive and close a few

std::string Env(const char* name) {
  const char* value = secure_getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace

bool Send(int socket, uint16_t op, int32_t status, const void* payload, size_t size, int fd, bool nonblocking) {
  Header header;
  header.op = op;
  header.status = status;
  header.length = static_cast<uint32_t>(size);
  iovec iov[2] = {{&header, sizeof(header)}, {const_cast<void*>(payload), size}};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = size > 0 ? 2 : 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  for (;;) {
    const ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL | (nonblocking ? MSG_DONTWAIT : 0));
    if (n < 0 && errno == EINTR) continue;
    return n == static_cast<ssize_t>(sizeof(header) + size);
  }
}

int Receive(int socket, Message* out, std::string* why) {
  std::vector<char> buffer(kMaxMessage);
  iovec iov{buffer.data(), buffer.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n = 0;
  do {
    n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  out->fd = -1;
  // Every descriptor that came: the first is kept, the others closed.
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (out->fd < 0) {
        out->fd = fd;
      } else {
        ::close(fd);
        if (why->empty()) *why = "more than one descriptor came with one message";
      }
    }
  }
  auto malformed = [&](std::string reason) {
    if (out->fd >= 0) ::close(out->fd);
    out->fd = -1;
    *why = std::move(reason);
    errno = 0;
    return -1;
  };
  if (n < 0) {
    const int saved = errno;
    if (out->fd >= 0) ::close(out->fd);
    out->fd = -1;
    errno = saved;
    return -1;
  }
  if (n == 0) {
    if (out->fd >= 0) ::close(out->fd);
    out->fd = -1;
    return 0;
  }
  if (!why->empty()) return malformed(*why);
  if ((msg.msg_flags & MSG_TRUNC) != 0) return malformed("a message longer than 4096 bytes");
  if ((msg.msg_flags & MSG_CTRUNC) != 0) return malformed("too many descriptors with one message");
  if (static_cast<size_t>(n) < sizeof(Header)) {
    return malformed(std::string("a message of ") + std::to_string(n) + " bytes, shorter than the 16-byte header");
  }
  std::memcpy(&out->header, buffer.data(), sizeof(Header));
  if (out->header.magic != kMagic) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "%08x", out->header.magic);
    return malformed(std::string("a message with magic 0x") + hex + ", not an accel object agent message");
  }
  if (out->header.version != kVersion) {
    return malformed("protocol version " + std::to_string(out->header.version) + " (this side speaks " +
                     std::to_string(kVersion) + ")");
  }
  if (out->header.length != static_cast<size_t>(n) - sizeof(Header)) {
    return malformed("a header that says " + std::to_string(out->header.length) + " payload bytes where " +
                     std::to_string(static_cast<size_t>(n) - sizeof(Header)) + " came");
  }
  out->payload.assign(buffer.data() + sizeof(Header), static_cast<size_t>(n) - sizeof(Header));
  return 1;
}

bool ValidToken(const char* token, size_t max, std::string* why) {
  if (token == nullptr) {
    *why = "the token is NULL";
    return false;
  }
  const size_t length = strnlen(token, max);
  if (length == max) {
    *why = "the token is not NUL-terminated within " + std::to_string(max) + " bytes";
    return false;
  }
  const std::string text(token, length);
  const size_t prefix = std::strlen(kTokenPrefix);
  std::string shown = text.substr(0, 80);
  for (char& c : shown) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  if (text.compare(0, prefix, kTokenPrefix) != 0 || length != prefix + kTokenHexDigits) {
    *why = "'" + shown + "' is not an object token (\"accel-object:\" and 32 hex digits, from accel_object_share)";
    return false;
  }
  for (size_t i = prefix; i < length; ++i) {
    const char c = text[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      *why = "'" + shown + "' is not an object token: '" + std::string(1, c) + "' at " + std::to_string(i) +
             " is no lower-case hex digit";
      return false;
    }
  }
  return true;
}

std::string MakeToken() {
  unsigned char random[kTokenHexDigits / 2];
  size_t done = 0;
  while (done < sizeof(random)) {
    const ssize_t n = ::getrandom(random + done, sizeof(random) - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";
    done += static_cast<size_t>(n);
  }
  std::string token = kTokenPrefix;
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned char b : random) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

std::string SocketPath() {
  std::string path = Env("ACCEL_OBJECT_AGENT_SOCKET");
  if (!path.empty()) return path;
  const std::string xdg = Env("XDG_RUNTIME_DIR");
  struct stat st {};
  if (!xdg.empty() && xdg[0] == '/' && ::stat(xdg.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == ::geteuid() && ::access(xdg.c_str(), W_OK | X_OK) == 0) {
    return xdg + "/accel/object-agent.sock";
  }
  return "/tmp/accel-" + std::to_string(::geteuid()) + "/object-agent.sock";
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool SecureDirectory(const std::string& dir, std::string* why) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *why = "the agent's directory '" + dir + "' could not be made: " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    *why = "the agent's directory '" + dir + "' cannot be read: " + std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    *why = "the agent's directory '" + dir + "' is not a directory (a link or a file): refused";
    return false;
  }
  if (st.st_uid != ::geteuid()) {
    *why = "the agent's directory '" + dir + "' belongs to uid " + std::to_string(st.st_uid) + ", not to this uid " +
           std::to_string(::geteuid()) + ": refused";
    return false;
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    *why = "the agent's directory '" + dir + "' has mode " + mode +
           ": group or others have access (it must be 0700): refused";
    return false;
  }
  return true;
}

}  // namespace accel::object_agent
