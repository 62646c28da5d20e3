// accel-object-agent: the per-node agent that counts references to host
// objects shared across processes (docs/objectstore.md, "Across processes").
//
//   accel-object-agent [--socket PATH] [--idle-ms N] [--daemon]
//   accel-object-agent --stats [--socket PATH] [--token T]
//
// It holds one memfd per shared object and, per connection, how many
// references that connection has to it. A process registers a sealed memfd
// (the exporter) or opens one by its token (an importer: the memfd comes
// back over SCM_RIGHTS); when a connection closes, for whatever reason (a
// crash, a SIGKILL), every reference it held goes, and an object with none
// left is closed. Only processes of the agent's own uid are served
// (SO_PEERCRED on every connection); the socket is 0600 in a 0700 directory.
// One agent per socket: an flock on "<socket>.lock" is held for its life.
// It exits after --idle-ms (default 60000) without connections. Single-
// threaded: one poll loop; a malformed message gets an error reply and
// never ends the agent. libaccel-runtime starts it on demand with --daemon
// (it forks once it listens, so the starter knows it can connect).
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "protocol.h"

namespace {

namespace oa = accel::object_agent;
using oa::Op;

// accel_status_t values (the agent does not link libaccel).
constexpr int32_t kInvalidArgument = -1;
constexpr int32_t kNotFound = -6;
constexpr int32_t kResourceExhausted = -7;
constexpr int32_t kFailedPrecondition = -8;

constexpr unsigned kRequiredSeals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
constexpr uint64_t kMaxCount = uint64_t{1} << 32;

class Agent {
 public:
  Agent(std::string path, int listener, uint64_t idle_ms)
      : path_(std::move(path)), listener_(listener), idle_ms_(idle_ms) {
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0) socket_inode_ = st.st_ino;
  }

  int Run(int signals) {
    auto idle_since = std::chrono::steady_clock::now();
    for (;;) {
      std::vector<pollfd> fds;
      fds.push_back({listener_, POLLIN, 0});
      fds.push_back({signals, POLLIN, 0});
      for (const auto& [id, c] : clients_) fds.push_back({c.fd, POLLIN, 0});
      int timeout = -1;
      if (clients_.empty()) {
        const auto waited =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - idle_since)
                .count();
        if (static_cast<uint64_t>(waited) >= idle_ms_) return Exit("idle");
        timeout = static_cast<int>(std::min<uint64_t>(idle_ms_ - static_cast<uint64_t>(waited), 1u << 30));
      }
      const int n = ::poll(fds.data(), fds.size(), timeout);
      if (n < 0 && errno != EINTR) return Exit("poll failed");
      if (n <= 0) continue;
      if ((fds[1].revents & POLLIN) != 0) return Exit("signal");
      // Clients first (their ids are stable), then new connections.
      std::vector<uint64_t> ids;
      for (const auto& [id, c] : clients_) ids.push_back(id);
      for (size_t i = 0; i < ids.size(); ++i) {
        const short ev = fds[i + 2].revents;
        if (ev == 0) continue;
        if ((ev & POLLIN) != 0) {
          if (!Serve(ids[i])) Drop(ids[i]);
        } else {
          Drop(ids[i]);  // POLLHUP / POLLERR without data
        }
      }
      if ((fds[0].revents & POLLIN) != 0) Accept();
      if (clients_.empty()) idle_since = std::chrono::steady_clock::now();
    }
  }

 private:
  struct Client {
    int fd = -1;
    pid_t pid = 0;
  };
  struct Object {
    int fd = -1;
    uint64_t size = 0;
    dev_t dev = 0;
    ino_t ino = 0;
    std::map<uint64_t, uint64_t> references;  // by client id
  };

  int Exit(const char* why) {
    // The socket goes only while it is still ours (a later agent may have replaced a stale one: it holds the lock
    // then, which this one still does, so that cannot happen; the check is cheap).
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0 && st.st_ino == socket_inode_) ::unlink(path_.c_str());
    for (auto& [id, c] : clients_) ::close(c.fd);
    for (auto& [token, o] : objects_) ::close(o.fd);
    clients_.clear();
    objects_.clear();
    ::close(listener_);
    std::fprintf(stderr, "accel-object-agent: exiting (%s)\n", why);
    return 0;
  }

  void Accept() {
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::geteuid()) {
      const std::string why = "accel-object-agent: refused: the connecting process (pid " + std::to_string(cred.pid) +
                              ", uid " + std::to_string(cred.uid) + ") is not of this agent's uid " +
                              std::to_string(::geteuid());
      oa::Send(fd, static_cast<uint16_t>(Op::kHello) | static_cast<uint16_t>(Op::kReply), kFailedPrecondition,
               why.data(), why.size(), -1, true);
      // Closing with its request unread would reset the connection, and the peer would read the reset, not the
      // refusal: no more requests (their sends fail from here), what came drained, then closed.
      ::shutdown(fd, SHUT_RDWR);
      char sink[256];
      while (::recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
      }
      ::close(fd);
      return;
    }
    const uint64_t id = next_client_++;
    clients_[id] = Client{fd, cred.pid};
  }

  // Drops a connection and every reference it held.
  void Drop(uint64_t id) {
    auto it = clients_.find(id);
    if (it == clients_.end()) return;
    ::close(it->second.fd);
    clients_.erase(it);
    for (auto o = objects_.begin(); o != objects_.end();) {
      o->second.references.erase(id);
      if (o->second.references.empty()) {
        ::close(o->second.fd);
        o = objects_.erase(o);
      } else {
        ++o;
      }
    }
  }

  bool Reply(int fd, uint16_t op, int32_t status, const void* payload, size_t size, int send_fd = -1) {
    // Non-blocking: a client that never reads loses its connection, it never stalls the agent.
    return oa::Send(fd, op | static_cast<uint16_t>(Op::kReply), status, payload, size, send_fd, true);
  }
  bool Error(int fd, uint16_t op, int32_t status, const std::string& message) {
    const std::string text = "accel-object-agent: " + message;
    return Reply(fd, op, status, text.data(), text.size());
  }

  // One request of client `id`; false when the connection is to go.
  bool Serve(uint64_t id) {
    const int fd = clients_.at(id).fd;
    oa::Message m;
    std::string why;
    const int got = oa::Receive(fd, &m, &why);
    if (got == 0) return false;
    if (got < 0) {
      if (errno != 0) return false;
      return Error(fd, 0, kInvalidArgument, "malformed message: " + why);
    }
    struct FdCloser {
      int& fd;
      ~FdCloser() {
        if (fd >= 0) ::close(fd);
      }
    } closer{m.fd};
    const uint16_t op = m.header.op;
    if (op == static_cast<uint16_t>(Op::kHello)) {
      oa::HelloReply r;
      r.pid = static_cast<uint64_t>(::getpid());
      r.uid = ::geteuid();
      return Reply(fd, op, 0, &r, sizeof(r));
    }
    if (op < static_cast<uint16_t>(Op::kRegister) || op > static_cast<uint16_t>(Op::kStats)) {
      return Error(fd, op, kInvalidArgument, "unknown operation " + std::to_string(op));
    }
    if (m.payload.size() != sizeof(oa::TokenRequest)) {
      return Error(fd, op, kInvalidArgument,
                   "operation " + std::to_string(op) + " needs a " + std::to_string(sizeof(oa::TokenRequest)) +
                       "-byte request, not " + std::to_string(m.payload.size()) + " bytes");
    }
    oa::TokenRequest q;
    std::memcpy(&q, m.payload.data(), sizeof(q));
    if (op == static_cast<uint16_t>(Op::kStats)) {
      oa::StatsReply r;
      r.objects = objects_.size();
      r.clients = clients_.size();
      r.pid = static_cast<uint64_t>(::getpid());
      for (const auto& [token, o] : objects_) {
        for (const auto& [client, n] : o.references) r.references += n;
      }
      if (q.token[0] != '\0' && ::strnlen(q.token, sizeof(q.token)) < sizeof(q.token)) {
        auto it = objects_.find(q.token);
        if (it != objects_.end()) {
          r.token_present = 1;
          r.token_holders = it->second.references.size();
          for (const auto& [client, n] : it->second.references) r.token_references += n;
        }
      }
      return Reply(fd, op, 0, &r, sizeof(r));
    }
    if (!oa::ValidToken(q.token, sizeof(q.token), &why)) return Error(fd, op, kInvalidArgument, why);
    const std::string token = q.token;
    if (op == static_cast<uint16_t>(Op::kRegister)) return Register(id, fd, token, q, m.fd);
    auto it = objects_.find(token);
    if (op == static_cast<uint16_t>(Op::kOpen)) {
      if (it == objects_.end()) {
        return Error(
            fd, op, kNotFound,
            "no object '" + token + "' on this node (released by every process that held it, or never shared)");
      }
      uint64_t& mine = it->second.references[id];
      ++mine;
      oa::OpenReply r;
      r.size = it->second.size;
      if (!Reply(fd, op, 0, &r, sizeof(r), it->second.fd)) {
        if (--mine == 0) it->second.references.erase(id);
        return false;
      }
      return true;
    }
    // kRelease
    if (it == objects_.end() || it->second.references.count(id) == 0) {
      return Error(fd, op, kFailedPrecondition, "this connection holds no reference to '" + token + "'");
    }
    uint64_t& mine = it->second.references[id];
    if (q.count == 0 || q.count > mine) {
      return Error(fd, op, kInvalidArgument,
                   "releasing " + std::to_string(q.count) + " reference(s) to '" + token +
                       "' where this connection holds " + std::to_string(mine));
    }
    mine -= q.count;
    if (mine == 0) it->second.references.erase(id);
    if (it->second.references.empty()) {
      ::close(it->second.fd);
      objects_.erase(it);
    }
    return Reply(fd, op, 0, nullptr, 0);
  }

  bool Register(uint64_t id, int fd, const std::string& token, const oa::TokenRequest& q, int& memfd) {
    const uint16_t op = static_cast<uint16_t>(Op::kRegister);
    if (memfd < 0) return Error(fd, op, kInvalidArgument, "registering '" + token + "' without a descriptor");
    if (q.count == 0 || q.count > kMaxCount) {
      return Error(fd, op, kInvalidArgument, "registering " + std::to_string(q.count) + " references");
    }
    struct stat st {};
    if (::fstat(memfd, &st) != 0 || !S_ISREG(st.st_mode)) {
      return Error(fd, op, kInvalidArgument, "the descriptor registered for '" + token + "' is not a memfd");
    }
    const int seals = ::fcntl(memfd, F_GET_SEALS);
    if (seals < 0 || (static_cast<unsigned>(seals) & kRequiredSeals) != kRequiredSeals) {
      return Error(
          fd, op, kFailedPrecondition,
          "the memfd registered for '" + token +
              "' is not sealed against writes and resizing (F_SEAL_WRITE|F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_SEAL)");
    }
    if (static_cast<uint64_t>(st.st_size) != q.size) {
      return Error(fd, op, kInvalidArgument,
                   "the memfd registered for '" + token + "' has " + std::to_string(st.st_size) +
                       " bytes, the request says " + std::to_string(q.size));
    }
    auto it = objects_.find(token);
    if (it != objects_.end()) {
      // Another holder (or this one again, after the agent restarted): the same file, or refused.
      if (it->second.dev != st.st_dev || it->second.ino != st.st_ino) {
        return Error(fd, op, kInvalidArgument, "'" + token + "' is registered already for another memfd");
      }
      it->second.references[id] += q.count;
      return Reply(fd, op, 0, nullptr, 0);
    }
    if (objects_.size() >= kMaxObjects) {
      return Error(fd, op, kResourceExhausted,
                   "the agent holds " + std::to_string(objects_.size()) + " objects already");
    }
    Object o;
    o.fd = memfd;
    memfd = -1;  // the agent's now
    o.size = q.size;
    o.dev = st.st_dev;
    o.ino = st.st_ino;
    o.references[id] = q.count;
    objects_.emplace(token, std::move(o));
    return Reply(fd, op, 0, nullptr, 0);
  }

  static constexpr size_t kMaxObjects = 1 << 20;

  std::string path_;
  int listener_;
  uint64_t idle_ms_;
  ino_t socket_inode_ = 0;
  uint64_t next_client_ = 1;
  std::map<uint64_t, Client> clients_;
  std::map<std::string, Object> objects_;
};

int Usage() {
  std::fprintf(stderr,
               "usage: accel-object-agent [--socket PATH] [--idle-ms N] [--daemon]\n"
               "       accel-object-agent --stats [--socket PATH] [--token T]\n");
  return 2;
}

// --stats: one line of figures from the running agent.
int Stats(const std::string& path, const std::string& token) {
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::fprintf(stderr, "accel-object-agent: no agent at '%s': %s\n", path.c_str(), std::strerror(errno));
    ::close(fd);
    return 1;
  }
  oa::TokenRequest q;
  std::snprintf(q.token, sizeof(q.token), "%s", token.c_str());
  oa::Message m;
  std::string why;
  if (!oa::Send(fd, static_cast<uint16_t>(Op::kStats), 0, &q, sizeof(q)) || oa::Receive(fd, &m, &why) != 1 ||
      m.header.status != 0 || m.payload.size() != sizeof(oa::StatsReply)) {
    std::fprintf(stderr, "accel-object-agent: no figures from '%s': %s%s\n", path.c_str(), why.c_str(),
                 m.header.status != 0 ? m.payload.c_str() : "");
    if (m.fd >= 0) ::close(m.fd);
    ::close(fd);
    return 1;
  }
  oa::StatsReply r;
  std::memcpy(&r, m.payload.data(), sizeof(r));
  std::printf("{\"pid\": %llu, \"objects\": %llu, \"references\": %llu, \"clients\": %llu", (unsigned long long)r.pid,
              (unsigned long long)r.objects, (unsigned long long)r.references, (unsigned long long)r.clients);
  if (!token.empty()) {
    std::printf(", \"token_present\": %llu, \"token_references\": %llu", (unsigned long long)r.token_present,
                (unsigned long long)r.token_references);
  }
  std::printf("}\n");
  ::close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Descriptors the starter let through are not the agent's (a test's pipe held open would never see EOF).
  ::close_range(3, ~0U, 0);
  std::string path;
  std::string token;
  uint64_t idle_ms = 60000;
  bool daemon = false;
  bool stats = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--socket" && i + 1 < argc) {
      path = argv[++i];
    } else if (a == "--idle-ms" && i + 1 < argc) {
      char* end = nullptr;
      idle_ms = std::strtoull(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0') return Usage();
    } else if (a == "--token" && i + 1 < argc) {
      token = argv[++i];
    } else if (a == "--daemon") {
      daemon = true;
    } else if (a == "--stats") {
      stats = true;
    } else {
      return Usage();
    }
  }
  if (path.empty()) path = oa::SocketPath();
  if (stats) return Stats(path, token);
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    std::fprintf(stderr, "accel-object-agent: the socket path '%s' is longer than %zu bytes\n", path.c_str(),
                 sizeof(addr.sun_path) - 1);
    return 2;
  }
  std::string why;
  if (!oa::SecureDirectory(oa::DirectoryOf(path), &why)) {
    std::fprintf(stderr, "accel-object-agent: %s\n", why.c_str());
    return 2;
  }
  // One agent per socket: whoever holds the lock owns the socket path.
  const std::string lock_path = path + ".lock";
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock < 0) {
    std::fprintf(stderr, "accel-object-agent: '%s' cannot be opened: %s\n", lock_path.c_str(), std::strerror(errno));
    return 2;
  }
  if (::flock(lock, LOCK_EX | LOCK_NB) != 0) return 0;  // another agent serves this socket
  ::umask(077);
  ::unlink(path.c_str());  // a stale socket of an agent that died
  const int listener = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::chmod(path.c_str(), 0600) != 0 || ::listen(listener, 64) != 0) {
    std::fprintf(stderr, "accel-object-agent: cannot listen on '%s': %s\n", path.c_str(), std::strerror(errno));
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int signals = ::signalfd(-1, &mask, SFD_CLOEXEC);
  if (daemon) {
    // Listening already: the starter may connect as soon as this process exits.
    const pid_t child = ::fork();
    if (child < 0) {
      std::fprintf(stderr, "accel-object-agent: fork failed: %s\n", std::strerror(errno));
      return 2;
    }
    if (child > 0) _exit(0);
    ::setsid();
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::close(null);
    }
  }
  Agent agent(path, listener, idle_ms);
  const int status = agent.Run(signals);
  ::close(signals);
  ::close(lock);  // after the socket went: the next agent finds no stale one to race with
  return status;
}
