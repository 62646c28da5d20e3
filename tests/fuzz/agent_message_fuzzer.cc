// libFuzzer target for the object agent's messages (core/runtime/agent/
// protocol.h), as the agent and the library receive them from another
// process: the first byte says how many descriptors travel with the datagram
// (0 to 5), the rest is the datagram, sent over a SOCK_SEQPACKET socket pair
// and read back with Receive. A message is taken only when its header is whole,
// its magic and version are ours and its length is what came, with its payload
// intact and its one descriptor (if any); anything else is refused with a reason
// (errno 0); no descriptor is ever leaked. A request's token is accepted by
// ValidToken exactly when it is "accel-object:" and 32 lower-case hex digits.
// Nothing crashes, leaks or reads out of bounds (ASan and UBSan).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "agent/protocol.h"

namespace oa = accel::object_agent;

namespace {

// The lowest free descriptor: it is the same after every input when none leaked.
int LowestFree() {
  const int fd = ::dup(0);
  if (fd >= 0) ::close(fd);
  return fd;
}

bool IsToken(const char* token, size_t max) {
  const size_t length = strnlen(token, max);
  const size_t prefix = std::strlen(oa::kTokenPrefix);
  if (length != prefix + oa::kTokenHexDigits || std::strncmp(token, oa::kTokenPrefix, prefix) != 0) return false;
  for (size_t i = prefix; i < length; ++i) {
    if (std::strchr("0123456789abcdef", token[i]) == nullptr) return false;
  }
  return true;
}

void CheckToken(const char* token, size_t max) {
  std::string why;
  const bool valid = oa::ValidToken(token, max, &why);
  if (valid != IsToken(token, max) || valid != why.empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static int pair[2] = {-1, -1};
  static int baseline = -1;
  if (pair[0] < 0) {
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) __builtin_trap();
    baseline = LowestFree();
  }
  if (size == 0) return 0;
  const int fds_sent = data[0] % 6;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  const size_t length = size - 1;

  // The datagram, with `fds_sent` descriptors of /dev/null.
  int fds[5];
  for (int i = 0; i < fds_sent; ++i) fds[i] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  iovec iov{const_cast<char*>(bytes), length};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(fds))] = {};
  if (fds_sent > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<size_t>(fds_sent));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<size_t>(fds_sent));
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * static_cast<size_t>(fds_sent));
  }
  const bool sent = ::sendmsg(pair[1], &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(length);
  for (int i = 0; i < fds_sent; ++i) ::close(fds[i]);
  if (!sent) __builtin_trap();  // the socket buffer holds any input up to -max_len

  oa::Message m;
  std::string why;
  const int got = oa::Receive(pair[0], &m, &why);
  if (length == 0) {
    if (got != 0 || m.fd != -1) __builtin_trap();  // an empty datagram reads as the peer's close
  } else if (got == 1) {
    oa::Header h;
    if (length < sizeof(h) || length > oa::kMaxMessage || fds_sent > 1 || !why.empty()) __builtin_trap();
    std::memcpy(&h, bytes, sizeof(h));
    if (h.magic != oa::kMagic || h.version != oa::kVersion || h.length != length - sizeof(h)) __builtin_trap();
    if (std::memcmp(&m.header, &h, sizeof(h)) != 0 || m.payload != std::string(bytes + sizeof(h), h.length)) {
      __builtin_trap();
    }
    if ((m.fd >= 0) != (fds_sent == 1)) __builtin_trap();
    if (m.payload.size() == sizeof(oa::TokenRequest)) {
      oa::TokenRequest q;
      std::memcpy(&q, m.payload.data(), sizeof(q));
      CheckToken(q.token, sizeof(q.token));
    }
    if (m.fd >= 0) ::close(m.fd);
  } else {
    if (got != -1 || errno != 0 || why.empty() || m.fd != -1) __builtin_trap();  // refused, saying why
  }
  // Any bytes as a token field too.
  if (length > 0) {
    char token[oa::kTokenSize];
    std::memcpy(token, bytes, std::min(length, sizeof(token)));
    if (length < sizeof(token)) token[length] = '\0';
    CheckToken(token, length < sizeof(token) ? length + 1 : sizeof(token));
  }
  if (LowestFree() != baseline) __builtin_trap();  // no descriptor leaked
  return 0;
}
