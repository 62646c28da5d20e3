// The wire format between libaccel-runtime and accel-object-agent, the
// per-node agent that counts references to shared host objects
// (docs/objectstore.md, "Across processes"), and what both sides need around
// it: the socket path rules, the directory check, tokens. Internal: the agent
// and the library are built from one tree, and the version field lets a
// newer agent refuse an older library with a message instead of guessing.
//
// One message is one SOCK_SEQPACKET datagram: a Header, then `length` bytes
// of payload; a memfd travels with it as SCM_RIGHTS. Requests carry a
// TokenRequest (HELLO carries nothing); a reply has op | kReply, the status
// (an accel_status_t value) and either the op's reply struct (status 0) or
// the error message (status < 0). Functions here are thread-safe (no state).
#ifndef ACCEL_RUNTIME_AGENT_PROTOCOL_H_
#define ACCEL_RUNTIME_AGENT_PROTOCOL_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace accel::object_agent {

inline constexpr uint32_t kMagic = 0x4741'4F41;  // "AOAG"
inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kMaxMessage = 4096;  // header included
inline constexpr size_t kTokenSize = 64;     // ACCEL_OBJECT_TOKEN_SIZE
inline constexpr const char* kTokenPrefix = "accel-object:";
inline constexpr size_t kTokenHexDigits = 32;

enum class Op : uint16_t {
  kHello = 1,     // -> HelloReply
  kRegister = 2,  // TokenRequest{token, size, count} + the memfd: `count` references for this connection
  kOpen = 3,      // TokenRequest{token} -> OpenReply + the memfd: one reference for this connection
  kRelease = 4,   // TokenRequest{token, count}: drops `count` of this connection's references
  kStats = 5,     // TokenRequest{token or ""} -> StatsReply
  kReply = 0x100  // or'ed into the op of a reply
};

struct Header {
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  uint16_t op = 0;
  uint32_t length = 0;  // payload bytes after the header
  int32_t status = 0;   // replies: an accel_status_t
};
static_assert(sizeof(Header) == 16);

struct TokenRequest {
  char token[kTokenSize] = {};  // NUL-terminated
  uint64_t size = 0;            // kRegister: the memfd's size
  uint64_t count = 0;           // kRegister, kRelease: references
};

struct HelloReply {
  uint64_t pid = 0;
  uint64_t uid = 0;
};

struct OpenReply {
  uint64_t size = 0;
};

struct StatsReply {
  uint64_t objects = 0;     // tokens registered
  uint64_t references = 0;  // over all objects and connections
  uint64_t clients = 0;     // connections
  uint64_t pid = 0;
  uint64_t token_present = 0;     // the request's token is registered
  uint64_t token_references = 0;  // its references
  uint64_t token_holders = 0;     // connections holding it
};

// One received message. `fd` is owned by the receiver (-1 when none came).
struct Message {
  Header header;
  std::string payload;
  int fd = -1;
};

// Sends `op` with `payload` (and `fd` when >= 0) in one datagram, without SIGPIPE. False with errno set.
bool Send(int socket, uint16_t op, int32_t status, const void* payload, size_t size, int fd = -1,
          bool nonblocking = false);
// Receives one message: 1 done, 0 the peer closed, -1 a failure (errno) or a malformed message (`why` says how;
// errno 0). Every descriptor received beyond the first is closed; so is the first on failure.
int Receive(int socket, Message* out, std::string* why);

// Whether `token` (up to kTokenSize bytes, NUL-terminated) is "accel-object:" and 32 lower-case hex digits; `why`
// says what is wrong otherwise.
bool ValidToken(const char* token, size_t max, std::string* why);
// A fresh token from the kernel's random source; "" when it fails (errno).
std::string MakeToken();

// The agent's socket: $ACCEL_OBJECT_AGENT_SOCKET, else $XDG_RUNTIME_DIR/accel/object-agent.sock when
// $XDG_RUNTIME_DIR is a directory of ours, else /tmp/accel-<uid>/object-agent.sock. Environment variables are not
// read in a setuid process (secure_getenv).
std::string SocketPath();
// Makes `dir` with mode 0700 when missing (its parent must exist), then checks that it is a directory (not a link)
// owned by this user with no access for group and others. False with the reason otherwise.
bool SecureDirectory(const std::string& dir, std::string* why);
// The directory part of a socket path ("." when none).
std::string DirectoryOf(const std::string& path);

}  // namespace accel::object_agent

#endif  // ACCEL_RUNTIME_AGENT_PROTOCOL_H_
