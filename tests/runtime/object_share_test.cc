// Host objects across processes (accel_object_share / accel_object_import,
// docs/objectstore.md, "Across processes"), on the sim backend: another
// process (accel_object_share_reader, spawned) reads a shared object
// zero-copy from a read-only memfd mapping; its references go when it is
// killed; the socket is 0600 in a 0700 directory, one agent per socket,
// another uid refused; a SIGKILLed agent loses nothing; bad input and
// malformed protocol messages get clear errors. Each test has its own agent
// socket and a short idle time, and waits for the agents it saw to exit.
#include <accel/object_store.h>
#include <accel/runtime.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <accel/object_store.hpp>

#include <cinttypes>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "agent/protocol.h"
#include "object_fixture.h"
#include "object_share_util.h"
#include "runtime_fixture.h"
#include "test_util.h"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)
namespace oa = accel::object_agent;

std::string Checksum(const std::vector<uint8_t>& bytes) {
  return accel_share_test::Checksum(bytes.data(), bytes.size());
}
using accel_share_test::MappingOf;

size_t OpenFds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

bool Alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

// A runtime with its instance and one worker, the store's defaults.
class Rt : public StoreRuntime {
 public:
  Rt() : StoreRuntime(0, 0, "", 1) {}
};

std::string Share(accel_object_t object) {
  accel_object_token_t t{};
  t.stype = ACCEL_STRUCTURE_TYPE_OBJECT_TOKEN;
  t.struct_size = sizeof(t);
  EXPECT_EQ(accel_object_share(object, &t), ACCEL_SUCCESS) << accel_last_error();
  return t.text;
}

struct HostView {
  accel_object_view_t view = nullptr;
  accel_object_view_info_t info{};
};

HostView GetView(accel_object_t object, int32_t location) {
  HostView v;
  EXPECT_EQ(accel_object_get(object, location, ACCEL_TIMEOUT_INFINITE, &v.view), ACCEL_SUCCESS) << accel_last_error();
  v.info.stype = ACCEL_STRUCTURE_TYPE_OBJECT_VIEW_INFO;
  v.info.struct_size = sizeof(v.info);
  if (v.view != nullptr) {
    EXPECT_EQ(accel_object_view_get_info(v.view, &v.info), ACCEL_SUCCESS);
  }
  return v;
}

// A spawned reader with a pipe to its stdin and one from its stdout.
struct Reader {
  pid_t pid = -1;
  int in = -1;   // its stdin
  int out = -1;  // its stdout

  static Reader Start(const std::string& token, const std::string& checksum, const std::string& mode) {
    Reader r;
    int to[2], from[2];
    EXPECT_EQ(::pipe2(to, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(from, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from[1], 1);
    std::vector<std::string> args = {ACCEL_TEST_SHARE_READER, token, checksum, mode};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(::posix_spawn(&r.pid, ACCEL_TEST_SHARE_READER, &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(to[0]);
    ::close(from[1]);
    r.in = to[1];
    r.out = from[0];
    return r;
  }
  // One line of its stdout ("" after 30 s or at EOF).
  std::string Line() const {
    std::string line;
    char c = 0;
    while (line.size() < 4096) {
      pollfd p{out, POLLIN, 0};
      if (::poll(&p, 1, 30000) <= 0) break;
      if (::read(out, &c, 1) != 1 || c == '\n') break;
      line += c;
    }
    return line;
  }
  void Send(const std::string& text) const {
    EXPECT_EQ(::write(in, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  // Closes its stdin and waits: its exit status (-signal when killed).
  int Finish() {
    if (in >= 0) ::close(in);
    in = -1;
    int status = 0;
    if (pid > 0) {
      EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    }
    pid = -1;
    if (out >= 0) ::close(out);
    out = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
};

// Each test: a private agent socket, a short idle time, and no agent left behind.
class ObjectShare : public ::testing::Test {
 protected:
  ObjectShare()
      : socket_dir_(dir_.path().string() + "/agent"),
        socket_(socket_dir_ + "/object-agent.sock"),
        socket_env_("ACCEL_OBJECT_AGENT_SOCKET", socket_),
        idle_env_("ACCEL_OBJECT_AGENT_IDLE_MS", "200") {}

  ~ObjectShare() override {
    // Every agent seen exits once its clients are gone (idle 200 ms); none outlives the test. The one serving the
    // socket now (if any) is seen here.
    Stats();
    for (pid_t pid : agents_) {
      const bool gone = Eventually([&] { return !Alive(pid); });
      if (!gone) ::kill(pid, SIGKILL);
      EXPECT_TRUE(gone) << "agent " << pid << " did not exit after its clients went";
    }
  }

  // The agent's figures (a connection of its own), or all zero when none answers.
  oa::StatsReply Stats(const std::string& token = "") {
    oa::StatsReply r;
    const int fd = Connect();
    if (fd < 0) return r;
    oa::TokenRequest q;
    std::snprintf(q.token, sizeof(q.token), "%s", token.c_str());
    oa::Message m;
    std::string why;
    if (oa::Send(fd, static_cast<uint16_t>(oa::Op::kStats), 0, &q, sizeof(q)) && oa::Receive(fd, &m, &why) == 1 &&
        m.header.status == 0 && m.payload.size() == sizeof(r)) {
      std::memcpy(&r, m.payload.data(), sizeof(r));
      // This connection is one of the clients.
      r.clients -= 1;
      agents_.insert(static_cast<pid_t>(r.pid));
    }
    if (m.fd >= 0) ::close(m.fd);
    ::close(fd);
    return r;
  }

  int Connect() const {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_.c_str());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }

  // One raw request and its reply: status and payload.
  std::pair<int32_t, std::string> Raw(int fd, const void* bytes, size_t size, int send_fd = -1,
                                      int second_fd = -1) const {
    iovec iov{const_cast<void*>(bytes), size};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
    if (send_fd >= 0) {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int));
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &send_fd, sizeof(int));
      if (second_fd >= 0) {
        msg.msg_controllen = CMSG_SPACE(2 * sizeof(int));
        c->cmsg_len = CMSG_LEN(2 * sizeof(int));
        std::memcpy(CMSG_DATA(c) + sizeof(int), &second_fd, sizeof(int));
      }
    }
    EXPECT_EQ(::sendmsg(fd, &msg, MSG_NOSIGNAL), static_cast<ssize_t>(size));
    oa::Message m;
    std::string why;
    EXPECT_EQ(oa::Receive(fd, &m, &why), 1) << why;
    if (m.fd >= 0) ::close(m.fd);
    return {m.header.status, m.payload};
  }

  TempDir dir_;
  std::string socket_dir_;
  std::string socket_;
  ScopedEnv socket_env_;
  ScopedEnv idle_env_;
  std::set<pid_t> agents_;
};

TEST_F(ObjectShare, ASpawnedReaderReadsZeroCopyAndItsReferencesGoWhenItIsKilled) {
  Rt rt;
  const auto bytes = Pattern(3 << 20, 1);
  accel_object_t object = rt.Put(bytes);
  const std::string token = Share(object);
  std::string why;
  EXPECT_TRUE(oa::ValidToken(token.c_str(), ACCEL_OBJECT_TOKEN_SIZE, &why)) << token << ": " << why;
  EXPECT_EQ(Share(object), token) << "sharing again gives the same token";
  EXPECT_EQ(Stats(token).token_references, 1U);

  // A reader that exits: its references go with it.
  Reader once = Reader::Start(token, Checksum(bytes), "once");
  const std::string first = once.Line();
  EXPECT_EQ(first, "ok " + Checksum(bytes) + " maps=r--s:memfd used=0 transfers=0")
      << "the reader's host view is the memfd's read-only shared mapping, and its store made no copy";
  EXPECT_EQ(once.Finish(), 0);

  // A reader killed while it holds the object: the agent drops its reference.
  Reader held = Reader::Start(token, Checksum(bytes), "hold");
  EXPECT_EQ(held.Line().substr(0, 3), "ok ");
  const auto with_reader = Stats(token);
  EXPECT_EQ(with_reader.token_references, 2U);
  EXPECT_EQ(with_reader.token_holders, 2U);
  ASSERT_EQ(::kill(held.pid, SIGKILL), 0);
  EXPECT_EQ(held.Finish(), -SIGKILL);
  EXPECT_TRUE(Eventually([&] { return Stats(token).token_references == 1; })) << "the killed reader's reference stays";
  EXPECT_EQ(Stats().clients, 1U) << "only the exporter is connected";

  // The exporter's release is the last: the object leaves the agent, and its token finds nothing.
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
  EXPECT_TRUE(Eventually([&] { return Stats().objects == 0; }));
  Reader late = Reader::Start(token, "-", "error");
  const std::string error = late.Line();
  EXPECT_EQ(error.rfind("ACCEL_ERROR_NOT_FOUND", 0), 0U) << error;
  EXPECT_NE(error.find(token), std::string::npos) << error;
  EXPECT_EQ(late.Finish(), 0);
}

TEST_F(ObjectShare, AnImportIsAReadOnlyMemfdMappingAndNoCopy) {
  const size_t fds_before = OpenFds();
  {
    Rt exporter;
    Rt importer;
    const auto bytes = Pattern(1 << 20, 2);
    accel_object_t object = exporter.Put(bytes);
    const std::string token = Share(object);
    accel_object_t imported = nullptr;
    ASSERT_EQ(accel_object_import(importer.get(), token.c_str(), &imported), ACCEL_SUCCESS) << accel_last_error();
    HostView v = GetView(imported, kHost);
    ASSERT_NE(v.info.host_address, nullptr);
    EXPECT_EQ(MappingOf(v.info.host_address), "r--s:memfd");
    EXPECT_EQ(std::memcmp(v.info.host_address, bytes.data(), bytes.size()), 0);
    EXPECT_EQ(v.info.size, bytes.size());
    const auto usage = importer.Usage(kHost);
    EXPECT_EQ(usage.used, 0U) << "an imported replica is the memfd's pages, not the store's";
    EXPECT_EQ(usage.replicas, 0U);
    EXPECT_EQ(usage.transfers_in, 0U);
    accel_object_info_t info{};
    info.stype = ACCEL_STRUCTURE_TYPE_OBJECT_INFO;
    info.struct_size = sizeof(info);
    ASSERT_EQ(accel_object_get_info(imported, &info), ACCEL_SUCCESS);
    EXPECT_EQ(info.on_host, 1U);
    EXPECT_EQ(info.size, bytes.size());
    EXPECT_EQ(Share(imported), token) << "an imported object shares as its own token";
    // A device get copies from the mapping like from any host replica.
    HostView d = GetView(imported, 3);
    EXPECT_EQ(d.info.location, 3);
    EXPECT_EQ(importer.Usage(3).transfers_in, 1U);
    EXPECT_EQ(accel_object_view_release(d.view), ACCEL_SUCCESS);
    EXPECT_EQ(Stats(token).token_references, 2U);
    // The exporter's release leaves the importer's bytes and reference.
    EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
    EXPECT_TRUE(Eventually([&] { return Stats(token).token_references == 1; }));
    EXPECT_EQ(std::memcmp(v.info.host_address, bytes.data(), bytes.size()), 0);
    EXPECT_EQ(accel_object_release(imported), ACCEL_SUCCESS);
    EXPECT_EQ(std::memcmp(v.info.host_address, bytes.data(), bytes.size()), 0) << "a view outlives the reference";
    EXPECT_EQ(accel_object_view_release(v.view), ACCEL_SUCCESS);
    EXPECT_EQ(MappingOf(v.info.host_address).find("memfd"), std::string::npos) << "unmapped with its last view";
    EXPECT_TRUE(Eventually([&] { return Stats().objects == 0; }));
  }
  EXPECT_EQ(OpenFds(), fds_before) << "no descriptor left behind";
}

TEST_F(ObjectShare, SharesFromADeviceReplicaOrASpillFile) {
  Rt exporter;
  Rt importer;
  const auto bytes = Pattern(1 << 20, 3);
  // Only on device 2: put from a device buffer.
  accel_device_t device = exporter.Device(2);
  accel_buffer_t buffer = nullptr;
  const auto desc = accel_test::BufferDesc(bytes.size());
  ASSERT_EQ(accel_buffer_create(device, &desc, &buffer), ACCEL_SUCCESS) << accel_last_error();
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(device, nullptr, &stream), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, bytes.data(), buffer, 0, bytes.size()), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  accel_object_put_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
  d.struct_size = sizeof(d);
  d.buffer = buffer;
  d.size = bytes.size();
  accel_object_t object = nullptr;
  ASSERT_EQ(accel_object_put(exporter.get(), &d, &object), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
  const std::string token = Share(object);
  EXPECT_EQ(exporter.Usage(kHost).replicas, 0U) << "the memfd is filled from the device replica, no host replica made";
  accel_object_t imported = nullptr;
  ASSERT_EQ(accel_object_import(importer.get(), token.c_str(), &imported), ACCEL_SUCCESS) << accel_last_error();
  HostView v = GetView(imported, kHost);
  EXPECT_EQ(std::memcmp(v.info.host_address, bytes.data(), bytes.size()), 0);
  EXPECT_EQ(accel_object_view_release(v.view), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(imported), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);

  // Only in a spill file: read back (through a host replica) into the memfd.
  accel_object_store_desc_t sd{};
  sd.stype = ACCEL_STRUCTURE_TYPE_OBJECT_STORE_DESC;
  sd.struct_size = sizeof(sd);
  sd.host_capacity = bytes.size();
  const std::string spill = dir_.path().string() + "/spill";
  sd.spill_directory = spill.c_str();
  accel_runtime_desc_t rd{};
  rd.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DESC;
  rd.struct_size = sizeof(rd);
  rd.next = &sd;
  rd.worker_threads = 1;
  accel_runtime_t small = nullptr;
  ASSERT_EQ(accel_runtime_create(exporter.instance(), &rd, &small), ACCEL_SUCCESS) << accel_last_error();
  accel_object_put_desc_t pd{};
  pd.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
  pd.struct_size = sizeof(pd);
  pd.data = bytes.data();
  pd.size = bytes.size();
  accel_object_t spilled = nullptr, other = nullptr;
  ASSERT_EQ(accel_object_put(small, &pd, &spilled), ACCEL_SUCCESS) << accel_last_error();
  const auto second = Pattern(bytes.size(), 13);
  pd.data = second.data();
  ASSERT_EQ(accel_object_put(small, &pd, &other), ACCEL_SUCCESS) << accel_last_error();
  accel_object_info_t info{};
  info.stype = ACCEL_STRUCTURE_TYPE_OBJECT_INFO;
  info.struct_size = sizeof(info);
  ASSERT_EQ(accel_object_get_info(spilled, &info), ACCEL_SUCCESS);
  ASSERT_EQ(info.on_disk, 1U);
  ASSERT_EQ(info.on_host, 0U);
  const std::string from_disk = Share(spilled);
  ASSERT_EQ(accel_object_import(importer.get(), from_disk.c_str(), &imported), ACCEL_SUCCESS) << accel_last_error();
  v = GetView(imported, kHost);
  EXPECT_EQ(std::memcmp(v.info.host_address, bytes.data(), bytes.size()), 0);
  EXPECT_EQ(accel_object_view_release(v.view), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(imported), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(spilled), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(other), ACCEL_SUCCESS);
  EXPECT_EQ(accel_runtime_destroy(small), ACCEL_SUCCESS) << accel_last_error();
}

TEST_F(ObjectShare, TheSocketIs0600InA0700DirectoryAndOneAgentServesIt) {
  Rt rt;
  accel_object_t object = rt.Put(Pattern(4096, 4));
  const std::string token = Share(object);
  struct stat st {};
  ASSERT_EQ(::lstat(socket_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600U);
  EXPECT_EQ(st.st_uid, ::geteuid());
  ASSERT_EQ(::lstat(socket_dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700U);
  // A second agent on the same socket finds the lock held and leaves the first alone.
  const pid_t first = static_cast<pid_t>(Stats().pid);
  std::vector<std::string> args = {ACCEL_TEST_OBJECT_AGENT, "--socket", socket_, "--idle-ms", "200"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t second = 0;
  ASSERT_EQ(::posix_spawn(&second, ACCEL_TEST_OBJECT_AGENT, nullptr, nullptr, argv.data(), environ), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(second, &status, 0), second);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(static_cast<pid_t>(Stats().pid), first);
  EXPECT_EQ(Stats(token).token_references, 1U);
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
}

TEST_F(ObjectShare, AnUnsafeSocketDirectoryIsRefusedWithTheReason) {
  const std::string open_dir = dir_.path().string() + "/open";
  ASSERT_EQ(::mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0755), 0);
  ScopedEnv socket("ACCEL_OBJECT_AGENT_SOCKET", open_dir + "/object-agent.sock");
  Rt rt;
  accel_object_t object = rt.Put(Pattern(4096, 5));
  accel_object_token_t t{};
  t.stype = ACCEL_STRUCTURE_TYPE_OBJECT_TOKEN;
  t.struct_size = sizeof(t);
  EXPECT_EQ(accel_object_share(object, &t), ACCEL_ERROR_FAILED_PRECONDITION);
  const std::string message = accel_last_error();
  EXPECT_NE(message.find(open_dir), std::string::npos) << message;
  EXPECT_NE(message.find("0755"), std::string::npos) << message;
  EXPECT_EQ(t.text[0], '\0');
  // Nothing lost: the object is still readable here.
  HostView v = GetView(object, kHost);
  EXPECT_NE(v.info.host_address, nullptr);
  EXPECT_EQ(accel_object_view_release(v.view), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
}

TEST_F(ObjectShare, AnotherUserIsRefused) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to run a child as uid 65534 (nobody); this runs as uid " << ::geteuid();
  Rt rt;
  accel_object_t object = rt.Put(Pattern(4096, 6));
  Share(object);
  // Children that only make system calls (no runtime in a fork of this multithreaded process).
  auto child = [&](bool keep_filesystem_root) {
    int p[2];
    EXPECT_EQ(::pipe(p), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(p[0]);
      // euid nobody; with the filesystem uid kept at 0 the socket can be reached, so the agent's own check
      // (SO_PEERCRED reports the euid) is what refuses.
      if (::syscall(SYS_setresuid, -1, 65534, -1) != 0) _exit(3);
      if (keep_filesystem_root) ::syscall(SYS_setfsuid, 0);
      const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::memcpy(addr.sun_path, socket_.c_str(), socket_.size() + 1);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        const std::string text = std::string("connect: ") + std::strerror(errno);
        static_cast<void>(::write(p[1], text.data(), text.size()));
        _exit(0);
      }
      oa::Header h;
      h.op = static_cast<uint16_t>(oa::Op::kHello);
      static_cast<void>(::send(fd, &h, sizeof(h), MSG_NOSIGNAL));
      char buffer[1024];
      const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n > static_cast<ssize_t>(sizeof(oa::Header))) {
        static_cast<void>(::write(p[1], buffer + sizeof(oa::Header), static_cast<size_t>(n) - sizeof(oa::Header)));
      }
      _exit(0);
    }
    ::close(p[1]);
    std::string text;
    char buffer[1024];
    ssize_t n = 0;
    while ((n = ::read(p[0], buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
    ::close(p[0]);
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return text;
  };
  const std::string refused = child(true);
  EXPECT_NE(refused.find("refused"), std::string::npos) << refused;
  EXPECT_NE(refused.find("uid 65534"), std::string::npos) << refused;
  const std::string blocked = child(false);
  EXPECT_EQ(blocked, std::string("connect: ") + std::strerror(EACCES)) << "the 0700 directory keeps others out first";
  EXPECT_EQ(Stats().clients, 1U) << "only the exporter is connected";
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
}

TEST_F(ObjectShare, AKilledAgentLosesNothing) {
  Rt exporter;
  const auto bytes = Pattern(2 << 20, 7);
  accel_object_t object = exporter.Put(bytes);
  const std::string token = Share(object);
  // Killed between share and import: the exporter's watcher starts a new agent and registers the object again.
  const auto before = Stats(token);
  ASSERT_GT(before.pid, 0U);
  ASSERT_EQ(::kill(static_cast<pid_t>(before.pid), SIGKILL), 0);
  EXPECT_TRUE(Eventually([&] {
    const auto s = Stats(token);
    return s.pid != 0 && s.pid != before.pid && s.token_references == 1;
  })) << "no new agent holds the object";
  Reader once = Reader::Start(token, Checksum(bytes), "once");
  EXPECT_EQ(once.Line().substr(0, 3), "ok ");
  EXPECT_EQ(once.Finish(), 0);

  // Killed after imports: mappings keep reading, and every holder registers again.
  Rt importer;
  accel_object_t imported = nullptr;
  ASSERT_EQ(accel_object_import(importer.get(), token.c_str(), &imported), ACCEL_SUCCESS) << accel_last_error();
  HostView v = GetView(imported, kHost);
  Reader held = Reader::Start(token, Checksum(bytes), "hold");
  EXPECT_EQ(held.Line().substr(0, 3), "ok ");
  const auto second = Stats(token);
  EXPECT_EQ(second.token_references, 3U);
  ASSERT_EQ(::kill(static_cast<pid_t>(second.pid), SIGKILL), 0);
  held.Send("check\n");
  EXPECT_EQ(held.Line().substr(0, 3), "ok ") << "the reader's mapping outlives the agent";
  EXPECT_EQ(std::memcmp(v.info.host_address, bytes.data(), bytes.size()), 0);
  EXPECT_TRUE(Eventually([&] {
    const auto s = Stats(token);
    return s.pid != 0 && s.pid != second.pid && s.token_references == 3 && s.token_holders == 3;
  })) << "the exporter, the importer here and the reader all registered again";
  // The exporter lets go; the token still works while others hold it.
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
  Reader late = Reader::Start(token, Checksum(bytes), "once");
  EXPECT_EQ(late.Line().substr(0, 3), "ok ");
  EXPECT_EQ(late.Finish(), 0);
  EXPECT_EQ(held.Finish(), 0);
  EXPECT_EQ(accel_object_view_release(v.view), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(imported), ACCEL_SUCCESS);
  EXPECT_TRUE(Eventually([&] { return Stats().objects == 0; }));
}

TEST_F(ObjectShare, BadInputGetsClearErrors) {
  Rt rt;
  accel_object_t object = rt.Put(Pattern(4096, 8));
  accel_object_t out = nullptr;
  // Tokens.
  EXPECT_EQ(accel_object_import(rt.get(), "not a token", &out), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'not a token' is not an object token"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(accel_object_import(rt.get(), "accel-object:0123456789abcdef0123456789ABCDEF", &out),
            ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("no lower-case hex digit"), std::string::npos) << accel_last_error();
  const std::string unknown = "accel-object:0123456789abcdef0123456789abcdef";
  EXPECT_EQ(accel_object_import(rt.get(), unknown.c_str(), &out), ACCEL_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(accel_last_error()).find("no object '" + unknown + "' on this node"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(out, nullptr);
  // NULLs and bad structs.
  EXPECT_EQ(accel_object_import(rt.get(), nullptr, &out), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'token' is NULL"), std::string::npos);
  EXPECT_EQ(accel_object_import(rt.get(), unknown.c_str(), nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'out_object' is NULL"), std::string::npos);
  EXPECT_EQ(accel_object_import(nullptr, unknown.c_str(), &out), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_object_share(object, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'out_token' is NULL"), std::string::npos);
  accel_object_token_t t{};
  t.stype = ACCEL_STRUCTURE_TYPE_OBJECT_INFO;
  t.struct_size = sizeof(t);
  EXPECT_EQ(accel_object_share(object, &t), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("stype"), std::string::npos);
  t.stype = ACCEL_STRUCTURE_TYPE_OBJECT_TOKEN;
  t.struct_size = 32;
  EXPECT_EQ(accel_object_share(object, &t), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("too small"), std::string::npos) << accel_last_error();
  // A released object: its handle is stale, and its token finds nothing once no one holds it.
  const std::string token = Share(object);
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
  t.struct_size = sizeof(t);
  EXPECT_EQ(accel_object_share(object, &t), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_object_import(rt.get(), token.c_str(), &out), ACCEL_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(accel_last_error()).find(token), std::string::npos);
  // An object of a destroyed runtime.
  Rt other;
  accel_object_t orphan = other.Put(Pattern(64, 9));
  other.Destroy();
  EXPECT_EQ(accel_object_share(orphan, &t), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("destroyed"), std::string::npos);
  EXPECT_EQ(accel_object_release(orphan), ACCEL_SUCCESS);
}

TEST_F(ObjectShare, AMissingAgentExecutableIsNamed) {
  ScopedEnv agent("ACCEL_OBJECT_AGENT", dir_.path().string() + "/no-such-agent");
  Rt rt;
  accel_object_t object = rt.Put(Pattern(64, 10));
  accel_object_token_t t{};
  t.stype = ACCEL_STRUCTURE_TYPE_OBJECT_TOKEN;
  t.struct_size = sizeof(t);
  EXPECT_EQ(accel_object_share(object, &t), ACCEL_ERROR_FAILED_PRECONDITION);
  const std::string message = accel_last_error();
  EXPECT_NE(message.find("no-such-agent' cannot be run"), std::string::npos) << message;
  EXPECT_NE(message.find("ACCEL_OBJECT_AGENT"), std::string::npos) << message;
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
}

TEST_F(ObjectShare, TheAgentAnswersMalformedMessagesAndKeepsServing) {
  Rt rt;
  const auto bytes = Pattern(8192, 11);
  accel_object_t object = rt.Put(bytes);
  const std::string token = Share(object);
  const int fd = Connect();
  ASSERT_GE(fd, 0);
  auto expect = [&](const std::pair<int32_t, std::string>& reply, int32_t status, const std::string& words) {
    EXPECT_EQ(reply.first, status) << reply.second;
    EXPECT_NE(reply.second.find(words), std::string::npos) << reply.second;
  };
  expect(Raw(fd, "xy", 2), ACCEL_ERROR_INVALID_ARGUMENT, "shorter than the 16-byte header");
  const std::vector<char> big(8192, 'x');
  expect(Raw(fd, big.data(), big.size()), ACCEL_ERROR_INVALID_ARGUMENT, "longer than 4096 bytes");
  oa::Header h;
  h.magic = 0x12345678;
  expect(Raw(fd, &h, sizeof(h)), ACCEL_ERROR_INVALID_ARGUMENT, "magic 0x12345678");
  h = oa::Header{};
  h.version = 99;
  expect(Raw(fd, &h, sizeof(h)), ACCEL_ERROR_INVALID_ARGUMENT, "protocol version 99");
  h = oa::Header{};
  h.op = static_cast<uint16_t>(oa::Op::kOpen);
  h.length = 500;
  expect(Raw(fd, &h, sizeof(h)), ACCEL_ERROR_INVALID_ARGUMENT, "says 500 payload bytes where 0 came");
  h.length = 0;
  h.op = 77;
  expect(Raw(fd, &h, sizeof(h)), ACCEL_ERROR_INVALID_ARGUMENT, "unknown operation 77");
  h.op = static_cast<uint16_t>(oa::Op::kOpen);
  expect(Raw(fd, &h, sizeof(h)), ACCEL_ERROR_INVALID_ARGUMENT, "needs a 80-byte request, not 0 bytes");
  // Well-formed requests with bad content.
  struct {
    oa::Header h;
    oa::TokenRequest q;
  } req;
  req.h.length = sizeof(req.q);
  req.h.op = static_cast<uint16_t>(oa::Op::kOpen);
  std::memset(req.q.token, 'x', sizeof(req.q.token));
  expect(Raw(fd, &req, sizeof(req)), ACCEL_ERROR_INVALID_ARGUMENT, "not NUL-terminated");
  std::snprintf(req.q.token, sizeof(req.q.token), "accel-object:zz");
  expect(Raw(fd, &req, sizeof(req)), ACCEL_ERROR_INVALID_ARGUMENT, "is not an object token");
  std::snprintf(req.q.token, sizeof(req.q.token), "%s", token.c_str());
  req.h.op = static_cast<uint16_t>(oa::Op::kRelease);
  req.q.count = 1;
  expect(Raw(fd, &req, sizeof(req)), ACCEL_ERROR_FAILED_PRECONDITION, "holds no reference");
  req.h.op = static_cast<uint16_t>(oa::Op::kRegister);
  req.q.size = 4096;
  expect(Raw(fd, &req, sizeof(req)), ACCEL_ERROR_INVALID_ARGUMENT, "without a descriptor");
  const int unsealed = ::memfd_create("unsealed", MFD_CLOEXEC);
  ASSERT_EQ(::ftruncate(unsealed, 4096), 0);
  expect(Raw(fd, &req, sizeof(req), unsealed), ACCEL_ERROR_FAILED_PRECONDITION, "is not sealed");
  ::close(unsealed);
  const int sealed = ::memfd_create("sealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_EQ(::ftruncate(sealed, 4096), 0);
  ASSERT_EQ(::fcntl(sealed, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL), 0);
  expect(Raw(fd, &req, sizeof(req), sealed), ACCEL_ERROR_INVALID_ARGUMENT, "registered already for another memfd");
  req.q.size = 1;
  expect(Raw(fd, &req, sizeof(req), sealed), ACCEL_ERROR_INVALID_ARGUMENT, "has 4096 bytes, the request says 1");
  expect(Raw(fd, &req, sizeof(req), sealed, sealed), ACCEL_ERROR_INVALID_ARGUMENT,
         "more than one descriptor came with one message");
  ::close(sealed);
  // Still serving, with nothing changed.
  const auto stats = Stats(token);
  EXPECT_EQ(stats.objects, 1U);
  EXPECT_EQ(stats.token_references, 1U);
  accel_object_t imported = nullptr;
  ASSERT_EQ(accel_object_import(rt.get(), token.c_str(), &imported), ACCEL_SUCCESS) << accel_last_error();
  HostView v = GetView(imported, kHost);
  EXPECT_EQ(std::memcmp(v.info.host_address, bytes.data(), bytes.size()), 0);
  EXPECT_EQ(accel_object_view_release(v.view), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(imported), ACCEL_SUCCESS);
  ::close(fd);
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
}

TEST_F(ObjectShare, TheCppWrapperSharesAndImports) {
  accel::Instance instance;
  accel::Runtime exporter(instance);
  accel::Runtime importer(instance);
  const auto bytes = Pattern(4096, 12);
  accel::Object object = accel::put(exporter, bytes.data(), bytes.size(), "shared");
  const std::string token = object.share();
  EXPECT_EQ(object.share(), token);
  accel::Object imported = accel::import_object(importer, token);
  accel::ObjectView view = imported.get();
  EXPECT_EQ(std::memcmp(view.data(), bytes.data(), bytes.size()), 0);
  EXPECT_EQ(MappingOf(view.data()), "r--s:memfd");
  try {
    accel::import_object(importer, "accel-object:bad");
    ADD_FAILURE() << "a bad token was imported";
  } catch (const accel::Error& e) {
    EXPECT_EQ(e.status(), ACCEL_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("'accel-object:bad' is not an object token"), std::string::npos) << e.what();
  }
}

}  // namespace
