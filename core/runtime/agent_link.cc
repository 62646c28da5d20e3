// A runtime's connection to accel-object-agent (agent_link.h).
#include "agent_link.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "agent/protocol.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): posix_spawn passes it on

namespace accel::runtime {
namespace {

namespace oa = accel::object_agent;
using oa::Op;
using Clock = std::chrono::steady_clock;

constexpr auto kConnectTimeout = std::chrono::seconds(5);  // to start an agent and reach it
constexpr int kReplyTimeoutSeconds = 10;                   // for one reply

std::string Env(const char* name) {
  const char* value = secure_getenv(name);
  return value != nullptr ? value : "";
}

// The agent's executable: $ACCEL_OBJECT_AGENT, else beside libaccel-runtime as installed (and as laid out in the
// build tree): <libdir>/ACCEL_OBJECT_AGENT_RELATIVE.
std::string AgentBinary() {
  std::string path = Env("ACCEL_OBJECT_AGENT");
  if (!path.empty()) return path;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&AgentBinary), &info) == 0 || info.dli_fname == nullptr) {
    return "accel-object-agent";
  }
  return oa::DirectoryOf(info.dli_fname) + "/" + ACCEL_OBJECT_AGENT_RELATIVE;
}

// Starts an agent for `socket_path`: the agent forks once it listens, so when the process started here exits the
// socket is there (or the agent said on its stderr, a pipe read here, why not).
accel_status_t StartAgent(const std::string& socket_path, std::string* why) {
  const std::string binary = AgentBinary();
  if (::access(binary.c_str(), X_OK) != 0) {
    *why = fmt::format(
        "the object agent '{}' cannot be run ({}); set ACCEL_OBJECT_AGENT to the path of accel-object-agent", binary,
        std::strerror(errno));
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  int err[2] = {-1, -1};
  if (::pipe2(err, O_CLOEXEC) != 0) {
    *why = fmt::format("starting the object agent: pipe: {}", std::strerror(errno));
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::string idle = Env("ACCEL_OBJECT_AGENT_IDLE_MS");
  if (idle.empty() || idle.find_first_not_of("0123456789") != std::string::npos) idle = "60000";
  std::vector<std::string> args = {binary, "--daemon", "--socket", socket_path, "--idle-ms", idle};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, binary.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(err[1]);
  if (spawned != 0) {
    ::close(err[0]);
    *why = fmt::format("the object agent '{}' could not be started: {}", binary, std::strerror(spawned));
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  // Its stderr until the first process exits and the daemon let go of the pipe.
  std::string said;
  const auto deadline = Clock::now() + kConnectTimeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{err[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char buffer[512];
    const ssize_t n = ::read(err[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (said.size() < 4096) said.append(buffer, static_cast<size_t>(n));
  }
  ::close(err[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ACCEL_SUCCESS;
  while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
  *why = fmt::format("the object agent '{}' did not start (exit status {}){}{}", binary,
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1, said.empty() ? "" : ": ", said);
  return ACCEL_ERROR_FAILED_PRECONDITION;
}

}  // namespace

AgentLink::~AgentLink() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  if (wake_ >= 0) {
    const uint64_t one = 1;
    static_cast<void>(::write(wake_, &one, sizeof(one)));
  }
  if (watcher_.joinable()) watcher_.join();
  std::lock_guard lock(mutex_);
  Disconnect();
  for (auto& [token, held] : held_) ::close(held.fd);
  held_.clear();
  if (wake_ >= 0) ::close(wake_);
}

uint64_t AgentLink::agent_pid() const {
  std::lock_guard lock(mutex_);
  return agent_pid_;
}

void AgentLink::Disconnect() {
  if (socket_ < 0) return;
  ::close(socket_);
  socket_ = -1;
  agent_pid_ = 0;
  if (wake_ >= 0) {
    const uint64_t one = 1;
    static_cast<void>(::write(wake_, &one, sizeof(one)));
  }
}

accel_status_t AgentLink::EnsureConnected(std::string* why) {
  if (socket_ >= 0) return ACCEL_SUCCESS;
  path_ = oa::SocketPath();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof(addr.sun_path)) {
    *why = fmt::format("the object agent's socket path '{}' is longer than {} bytes (ACCEL_OBJECT_AGENT_SOCKET)", path_,
                       sizeof(addr.sun_path) - 1);
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  if (!oa::SecureDirectory(oa::DirectoryOf(path_), why)) return ACCEL_ERROR_FAILED_PRECONDITION;
  const auto deadline = Clock::now() + kConnectTimeout;
  bool started_once = false;
  auto started = Clock::now();
  for (;;) {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      *why = fmt::format("no socket for the object agent: {}", std::strerror(errno));
      return ACCEL_ERROR_RESOURCE_EXHAUSTED;
    }
    const timeval tv{kReplyTimeoutSeconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      // HELLO. A refusal (another uid) arrives as the reply; an agent exiting on idle just closes.
      static_cast<void>(oa::Send(fd, static_cast<uint16_t>(Op::kHello), 0, nullptr, 0));
      oa::Message m;
      std::string bad;
      const int got = oa::Receive(fd, &m, &bad);
      if (m.fd >= 0) ::close(m.fd);
      if (got == 1 && m.header.status == 0 && m.payload.size() == sizeof(oa::HelloReply)) {
        oa::HelloReply hello;
        std::memcpy(&hello, m.payload.data(), sizeof(hello));
        socket_ = fd;
        agent_pid_ = hello.pid;
        ++generation_;
        // Whatever this connection held with an agent that went: registered again.
        for (auto& [token, held] : held_) {
          oa::TokenRequest q;
          std::memcpy(q.token, token.c_str(), token.size() + 1);
          q.size = held.size;
          q.count = held.count;
          std::string reply, ignored;
          int reply_fd = -1;
          bool broken = false;
          static_cast<void>(CallOnce(static_cast<uint16_t>(Op::kRegister), &q, sizeof(q), held.fd, &reply, &reply_fd,
                                     &broken, &ignored));
          if (broken) {
            Disconnect();
            break;
          }
        }
        StartWatcher();
        if (socket_ < 0) {
          *why =
              fmt::format("the object agent at '{}' went away while this process registered its objects again", path_);
          return ACCEL_ERROR_FAILED_PRECONDITION;
        }
        return ACCEL_SUCCESS;
      }
      ::close(fd);
      if (got == 1 && m.header.status < 0) {
        *why = fmt::format("the object agent at '{}' refused this process: {}", path_, m.payload);
        return ACCEL_ERROR_FAILED_PRECONDITION;
      }
      if (got < 0 && errno == 0) {
        *why = fmt::format("the process at '{}' is no object agent of this version: {}", path_, bad);
        return ACCEL_ERROR_FAILED_PRECONDITION;
      }
    } else {
      const int error = errno;
      ::close(fd);
      if (error != ENOENT && error != ECONNREFUSED && error != EAGAIN && error != EINTR) {
        *why = fmt::format("cannot connect to the object agent at '{}': {}", path_, std::strerror(error));
        return ACCEL_ERROR_FAILED_PRECONDITION;
      }
      // None there (or a dead one's socket): start one, again at most every 250 ms.
      if (!started_once || Clock::now() - started > std::chrono::milliseconds(250)) {
        const accel_status_t status = StartAgent(path_, why);
        if (status != ACCEL_SUCCESS) return status;
        started_once = true;
        started = Clock::now();
        continue;
      }
    }
    if (Clock::now() > deadline) {
      *why = fmt::format("no object agent answered at '{}' within {} s", path_,
                         std::chrono::duration_cast<std::chrono::seconds>(kConnectTimeout).count());
      return ACCEL_ERROR_FAILED_PRECONDITION;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

accel_status_t AgentLink::CallOnce(uint16_t op, const void* request, size_t size, int fd, std::string* reply,
                                   int* reply_fd, bool* broken, std::string* why) {
  *broken = false;
  if (!oa::Send(socket_, op, 0, request, size, fd)) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      *why = fmt::format("the object agent at '{}' took no request within {} s", path_, kReplyTimeoutSeconds);
      Disconnect();
      return ACCEL_ERROR_FAILED_PRECONDITION;
    }
    *broken = true;
    *why = fmt::format("the object agent at '{}' went away: {}", path_, std::strerror(errno));
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  oa::Message m;
  std::string bad;
  const int got = oa::Receive(socket_, &m, &bad);
  if (got == 1 && m.header.op != (op | static_cast<uint16_t>(Op::kReply))) {
    bad = fmt::format("a reply to operation {} where {} was asked", m.header.op & 0xFF, op);
    if (m.fd >= 0) ::close(m.fd);
    m.fd = -1;
    Disconnect();
    *why = fmt::format("the object agent at '{}' answered out of turn: {}", path_, bad);
    return ACCEL_ERROR_INTERNAL;
  }
  if (got == 1) {
    if (m.header.status < 0) {
      if (m.fd >= 0) ::close(m.fd);
      *why = m.payload;
      return static_cast<accel_status_t>(m.header.status);
    }
    *reply = std::move(m.payload);
    if (reply_fd != nullptr) {
      *reply_fd = m.fd;
    } else if (m.fd >= 0) {
      ::close(m.fd);
    }
    return ACCEL_SUCCESS;
  }
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    *why = fmt::format("the object agent at '{}' did not answer within {} s", path_, kReplyTimeoutSeconds);
    Disconnect();
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  if (got < 0 && errno == 0) {
    *why = fmt::format("the object agent at '{}' sent a malformed reply: {}", path_, bad);
    Disconnect();
    return ACCEL_ERROR_INTERNAL;
  }
  *broken = true;
  *why = fmt::format("the object agent at '{}' went away", path_);
  return ACCEL_ERROR_FAILED_PRECONDITION;
}

accel_status_t AgentLink::Call(uint16_t op, const void* request, size_t size, int fd, std::string* reply, int* reply_fd,
                               std::string* why) {
  for (int attempt = 0;; ++attempt) {
    accel_status_t status = EnsureConnected(why);
    if (status != ACCEL_SUCCESS) return status;
    bool broken = false;
    status = CallOnce(op, request, size, fd, reply, reply_fd, &broken, why);
    if (!broken || attempt == 1) return status;
    Disconnect();  // the agent died: a new one, everything registered again, and this request once more
  }
}

accel_status_t AgentLink::Register(const std::string& token, int fd, uint64_t size, std::string* why) {
  std::lock_guard lock(mutex_);
  oa::TokenRequest q;
  std::memcpy(q.token, token.c_str(), token.size() + 1);
  q.size = size;
  q.count = 1;
  std::string reply;
  const accel_status_t status = Call(static_cast<uint16_t>(Op::kRegister), &q, sizeof(q), fd, &reply, nullptr, why);
  if (status != ACCEL_SUCCESS) {
    ::close(fd);
    return status;
  }
  Held& held = held_[token];
  if (held.fd < 0) {
    held.fd = fd;
    held.size = size;
  } else {
    ::close(fd);
  }
  ++held.count;
  return ACCEL_SUCCESS;
}

accel_status_t AgentLink::Open(const std::string& token, int* out_fd, uint64_t* out_size, std::string* why) {
  std::lock_guard lock(mutex_);
  oa::TokenRequest q;
  std::memcpy(q.token, token.c_str(), token.size() + 1);
  std::string reply;
  int fd = -1;
  const accel_status_t status = Call(static_cast<uint16_t>(Op::kOpen), &q, sizeof(q), -1, &reply, &fd, why);
  if (status != ACCEL_SUCCESS) return status;
  auto undo = [&] {
    // The agent counted a reference for this connection: give it back.
    q.count = 1;
    std::string ignored;
    bool broken = false;
    static_cast<void>(
        CallOnce(static_cast<uint16_t>(Op::kRelease), &q, sizeof(q), -1, &reply, nullptr, &broken, &ignored));
  };
  oa::OpenReply r;
  if (fd < 0 || reply.size() != sizeof(r)) {
    if (fd >= 0) ::close(fd);
    undo();
    *why = fmt::format("the object agent at '{}' answered an open of '{}' without {}", path_, token,
                       fd < 0 ? "a descriptor" : "its size");
    return ACCEL_ERROR_INTERNAL;
  }
  std::memcpy(&r, reply.data(), sizeof(r));
  Held& held = held_[token];
  if (held.fd < 0) {
    held.fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (held.fd < 0) {
      held_.erase(token);
      ::close(fd);
      undo();
      *why = fmt::format("no descriptor left to hold '{}': {}", token, std::strerror(errno));
      return ACCEL_ERROR_RESOURCE_EXHAUSTED;
    }
    held.size = r.size;
  }
  ++held.count;
  *out_fd = fd;
  *out_size = r.size;
  return ACCEL_SUCCESS;
}

void AgentLink::Release(const std::string& token) {
  std::lock_guard lock(mutex_);
  auto it = held_.find(token);
  if (it == held_.end()) return;
  if (--it->second.count == 0) {
    ::close(it->second.fd);
    held_.erase(it);
  }
  if (socket_ < 0) return;  // the agent went, and with it this reference; the next one is not told of it
  oa::TokenRequest q;
  std::memcpy(q.token, token.c_str(), token.size() + 1);
  q.count = 1;
  std::string reply, ignored;
  bool broken = false;
  static_cast<void>(
      CallOnce(static_cast<uint16_t>(Op::kRelease), &q, sizeof(q), -1, &reply, nullptr, &broken, &ignored));
  if (broken) Disconnect();  // the watcher reconnects and registers what is still held
}

void AgentLink::StartWatcher() {
  if (watcher_.joinable()) return;
  wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_ < 0) return;  // no watcher: a lost agent is found at the next call instead
  watcher_ = std::thread([this] { Watch(); });
}

void AgentLink::Watch() {
  for (;;) {
    int fd = -1;
    uint64_t generation = 0;
    bool retry = false;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      fd = socket_;
      generation = generation_;
      retry = socket_ < 0 && !held_.empty();
    }
    // Only hang-ups of the connection wake this (events 0): replies are read by the callers.
    pollfd p[2] = {{wake_, POLLIN, 0}, {fd, 0, 0}};
    const int n = ::poll(p, fd >= 0 ? 2 : 1, retry ? 200 : -1);
    if (n < 0 && errno != EINTR) return;
    if ((p[0].revents & POLLIN) != 0) {
      uint64_t value = 0;
      static_cast<void>(::read(wake_, &value, sizeof(value)));
    }
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    if (fd >= 0 && (p[1].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0 && generation == generation_) Disconnect();
    if (socket_ < 0 && !held_.empty()) {
      // The agent died: start a new one and register every token this process holds, before anyone asks.
      std::string why;
      static_cast<void>(EnsureConnected(&why));
    }
  }
}

}  // namespace accel::runtime
