// A runtime's connection to accel-object-agent, the per-node agent that
// counts references to host objects shared across processes
// (docs/objectstore.md, "Across processes"). Connects on first use, starting
// the agent when none answers; holds, per token, the memfd and how many
// references this connection has, so that when the agent dies (killed,
// crashed) a watcher thread reconnects at once, starting a new one, and
// registers them all again: imports of those tokens keep working, and the
// mappings this process has are never touched. Thread-safe: one mutex
// (never held with the store's) guards the connection; a call waits for the
// agent's reply at most kReplyTimeout.
#ifndef ACCEL_RUNTIME_AGENT_LINK_H_
#define ACCEL_RUNTIME_AGENT_LINK_H_

#include <accel/accel.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace accel::runtime {

class AgentLink {
 public:
  AgentLink() = default;
  ~AgentLink();  // stops the watcher; closing the connection drops every reference it held
  AgentLink(const AgentLink&) = delete;
  AgentLink& operator=(const AgentLink&) = delete;

  // Registers the sealed memfd `fd` of `size` bytes as `token`, with one reference for this connection. Takes `fd`
  // (closed on failure).
  accel_status_t Register(const std::string& token, int fd, uint64_t size, std::string* why);
  // One reference to `token` for this connection; `*out_fd` a descriptor of its memfd for the caller to close.
  accel_status_t Open(const std::string& token, int* out_fd, uint64_t* out_size, std::string* why);
  // Drops one reference this connection holds (Register or Open); best effort.
  void Release(const std::string& token);
  // The agent's pid when connected (0 otherwise), for messages.
  uint64_t agent_pid() const;

 private:
  struct Held {
    int fd = -1;  // the memfd, kept to register again with a new agent
    uint64_t size = 0;
    uint64_t count = 0;
  };
  // Under mutex_: connected (or connects, starting the agent when none answers) and registers every held token.
  accel_status_t EnsureConnected(std::string* why);
  // Under mutex_: one request and its reply; on a broken connection, reconnects once and retries.
  accel_status_t Call(uint16_t op, const void* request, size_t size, int fd, std::string* reply, int* reply_fd,
                      std::string* why);
  accel_status_t CallOnce(uint16_t op, const void* request, size_t size, int fd, std::string* reply, int* reply_fd,
                          bool* broken, std::string* why);
  void Disconnect();  // under mutex_
  void StartWatcher();
  void Watch();

  mutable std::mutex mutex_;
  std::string path_;
  int socket_ = -1;
  uint64_t generation_ = 0;  // bumped on each new connection
  uint64_t agent_pid_ = 0;
  std::map<std::string, Held> held_;
  std::thread watcher_;
  int wake_ = -1;  // eventfd: the watcher looks again (new connection, or stop)
  bool stopping_ = false;
};

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_AGENT_LINK_H_
