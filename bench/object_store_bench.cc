// accel-object-store-bench: libaccel-runtime's object store beside named
// baselines, in one run (docs/objectstore.md, "Figures"). Prints figures;
// asserts nothing about time.
//
//   accel-object-store-bench [--size-mb N] [--file-mb N] [--small N] [--small-bytes B] [--xproc N] [--repeat R]
//                            [--seed S] [--json]
//
// Weights (--file-mb, default 800): a file streamed to device 0 by
// accel_object_put_file against reading it all into host memory then one
// copy, the file dropped from the page cache before each run.
// Large objects (N MB, default 800): put from host memory against malloc +
// memcpy of the same bytes (what a put must do: fresh memory, one copy) and
// against memcpy into memory already touched; get on a device (one host to
// device copy into a new replica) against accel_stream_copy_host_to_buffer
// into a buffer made for it. Small objects (B bytes, default 1 KiB): put,
// get on the host and release, N times (default 20,000), beside Ray's
// published plasma figures (about 5,000 puts/s and 10,000 gets/s; constants,
// not measured here). Zero-copy host get: get + view release of an object
// with a host replica. Cross-process get (--xproc N objects of B bytes,
// default 2,000): a second process (this bench again, --import-child) imports
// each shared object by its token and takes a host view, timed per object,
// beside the least that can do the same across processes (a request over a
// Unix socket answered with a memfd by SCM_RIGHTS, then mmap and a read:
// what the protocol cannot avoid) and beside the same-process zero-copy get.
// Each figure is the median of R repeats (default 3);
// --seed decides which contender runs first in each. On the sim backend's
// h100-sxm-8 node (ACCEL_SIM_PROFILE and ACCEL_BACKENDS are set to it).
// Exit status 1 when a call fails or bytes differ.
#include <accel/object_store.h>
#include <accel/runtime.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "paired.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): the reader process gets it

namespace {

constexpr const char* kProfile = "h100-sxm-8";
constexpr double kRayPutsPerSecond = 5000.0;   // Ray's plasma store, as issue 17 quotes it
constexpr double kRayGetsPerSecond = 10000.0;  // idem
constexpr double kGoalRatio = 0.9;             // put and get against memcpy
constexpr double kGoalHostGetUs = 5.0;

std::string g_failure;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): the bench's one error slot

bool Check(accel_status_t status, const char* what) {
  if (status == ACCEL_SUCCESS) return true;
  if (g_failure.empty()) g_failure = fmt::format("{}: {} ({})", what, accel_status_name(status), accel_last_error());
  return false;
}

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

using accel_bench::Median;

struct Row {
  std::string name;
  double accel = 0.0;
  double baseline = 0.0;
  std::string unit;
  std::string baseline_name;
  std::string goal;
};

accel_object_t Put(accel_runtime_t rt, const void* data, uint64_t size) {
  accel_object_put_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
  d.struct_size = sizeof(d);
  d.data = data;
  d.size = size;
  accel_object_t o = nullptr;
  Check(accel_object_put(rt, &d, &o), "accel_object_put");
  return o;
}

std::string TempDirectory() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp";
}

// Writes `size` bytes of a pattern to `path`, synced to disk (so that the page cache may drop it).
bool WriteFile(const std::string& path, uint64_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::vector<uint8_t> block(size_t{4} << 20);
  for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<uint8_t>(i * 31);
  bool ok = true;
  for (uint64_t done = 0; done < size && ok;) {
    const uint64_t n = std::min<uint64_t>(block.size(), size - done);
    ok = ::write(fd, block.data(), n) == static_cast<ssize_t>(n);
    done += n;
  }
  ok = ok && ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

// Asks the kernel to drop `path` from the page cache (its pages are clean: written and synced).
void DropFromPageCache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

accel_device_t DeviceOf(accel_runtime_t rt, uint32_t index) {
  accel_runtime_device_t rd{};
  rd.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE;
  rd.struct_size = sizeof(rd);
  Check(accel_runtime_get_device(rt, index, &rd), "accel_runtime_get_device");
  uint32_t n = 1;
  accel_device_t device = nullptr;
  Check(accel_physical_device_enumerate_devices(rd.physical_device, &n, &device), "enumerate_devices");
  return device;
}

// The baseline of streaming: the whole file read into fresh host memory, then one copy into a new device buffer.
void ReadThenCopy(const std::string& path, uint64_t size, accel_device_t device) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    g_failure = fmt::format("'{}' cannot be opened", path);
    return;
  }
  auto* host = static_cast<uint8_t*>(std::malloc(size));
  for (uint64_t done = 0; done < size;) {
    const ssize_t n = ::pread(fd, host + done, size - done, static_cast<off_t>(done));
    if (n <= 0) break;
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  accel_buffer_desc_t bd{};
  bd.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
  bd.struct_size = sizeof(bd);
  bd.size = size;
  accel_buffer_t b = nullptr;
  accel_stream_t stream = nullptr;
  if (Check(accel_buffer_create(device, &bd, &b), "accel_buffer_create") &&
      Check(accel_stream_create(device, nullptr, &stream), "accel_stream_create") &&
      Check(accel_stream_copy_host_to_buffer(stream, host, b, 0, size), "copy_host_to_buffer")) {
    Check(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), "accel_stream_synchronize");
  }
  if (stream != nullptr) accel_stream_destroy(stream);
  if (b != nullptr) accel_buffer_destroy(b);
  std::free(host);
}

// A sealed memfd of `size` bytes (the raw baseline's object); -1 on failure.
int SealedMemfd(uint64_t size) {
  const int fd = ::memfd_create("accel-bench-raw", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  std::vector<uint8_t> bytes(size, 5);
  if (::write(fd, bytes.data(), size) != static_cast<ssize_t>(size) ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The raw baseline's server (a thread of the exporting process): each 1-byte request on `socket` is answered with
// one byte and `memfd` attached, until the peer closes.
void ServeRaw(int socket, int memfd) {
  for (;;) {
    char request = 0;
    if (::recv(socket, &request, 1, 0) != 1) return;
    char reply = 1;
    iovec iov{&reply, 1};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &memfd, sizeof(int));
    if (::sendmsg(socket, &msg, MSG_NOSIGNAL) != 1) return;
  }
}

// --import-child: the reading process. Tokens on stdin (one a line), the raw baseline's socket as descriptor 3.
// Per object, alternately: accel_object_import + host get + a read of its first byte (the view and the object
// released after the clock stops), and the raw round trip + mmap + a read (unmapped after). Prints the two medians
// in microseconds.
int ImportChild() {
  std::vector<std::string> tokens;
  for (std::string line; std::getline(std::cin, line);) {
    if (!line.empty()) tokens.push_back(line);
  }
  accel_instance_desc_t id{};
  id.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  id.struct_size = sizeof(id);
  id.backends = "sim";
  accel_instance_t instance = nullptr;
  accel_runtime_t rt = nullptr;
  accel_runtime_desc_t rd{};
  rd.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DESC;
  rd.struct_size = sizeof(rd);
  rd.worker_threads = 1;
  if (!Check(accel_instance_create(&id, &instance), "accel_instance_create") ||
      !Check(accel_runtime_create(instance, &rd, &rt), "accel_runtime_create")) {
    std::fprintf(stderr, "accel-object-store-bench --import-child: %s\n", g_failure.c_str());
    return 1;
  }
  std::vector<double> accel_us, raw_us;
  volatile uint8_t sink = 0;
  for (const std::string& token : tokens) {
    auto t = Clock::now();
    accel_object_t o = nullptr;
    accel_object_view_t v = nullptr;
    if (!Check(accel_object_import(rt, token.c_str(), &o), "accel_object_import") ||
        !Check(accel_object_get(o, ACCEL_OBJECT_LOCATION_HOST, ACCEL_TIMEOUT_INFINITE, &v), "accel_object_get")) {
      break;
    }
    accel_object_view_info_t vi{};
    vi.stype = ACCEL_STRUCTURE_TYPE_OBJECT_VIEW_INFO;
    vi.struct_size = sizeof(vi);
    Check(accel_object_view_get_info(v, &vi), "accel_object_view_get_info");
    sink = sink + *static_cast<const volatile uint8_t*>(vi.host_address);
    accel_us.push_back(Seconds(t) * 1e6);
    accel_object_view_release(v);
    accel_object_release(o);

    t = Clock::now();
    char request = 0;
    if (::send(3, &request, 1, MSG_NOSIGNAL) != 1) {
      g_failure = "the raw baseline's socket failed";
      break;
    }
    char reply = 0;
    iovec iov{&reply, 1};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    int fd = -1;
    if (::recvmsg(3, &msg, MSG_CMSG_CLOEXEC) == 1 && CMSG_FIRSTHDR(&msg) != nullptr) {
      std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
    }
    struct stat st {};
    void* map = fd >= 0 && ::fstat(fd, &st) == 0
                    ? ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0)
                    : MAP_FAILED;
    if (map == MAP_FAILED) {
      g_failure = "the raw baseline's memfd could not be received or mapped";
      if (fd >= 0) ::close(fd);
      break;
    }
    sink = sink + *static_cast<const volatile uint8_t*>(map);
    raw_us.push_back(Seconds(t) * 1e6);
    ::munmap(map, static_cast<size_t>(st.st_size));
    ::close(fd);
  }
  accel_runtime_destroy(rt);
  accel_instance_destroy(instance);
  if (!g_failure.empty()) {
    std::fprintf(stderr, "accel-object-store-bench --import-child: %s\n", g_failure.c_str());
    return 1;
  }
  std::printf("%.3f %.3f\n", Median(accel_us), Median(raw_us));
  return 0;
}

// Runs the reading process over `tokens` (this executable, --import-child): the medians of its two figures.
bool CrossProcess(const std::vector<std::string>& tokens, int raw_socket, double* accel_us, double* raw_us) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return false;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, raw_socket, 3);
  std::string self = "/proc/self/exe";
  std::string flag = "--import-child";
  char* argv[] = {self.data(), flag.data(), nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  if (spawned == 0) {
    std::string text;
    for (const auto& t : tokens) text += t + "\n";
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(in[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  }
  ::close(in[1]);
  std::string said;
  char buffer[256];
  for (ssize_t n = 0; spawned == 0 && (n = ::read(out[0], buffer, sizeof(buffer))) > 0;) {
    said.append(buffer, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 1;
  if (spawned == 0) ::waitpid(pid, &status, 0);
  return spawned == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
         std::sscanf(said.c_str(), "%lf %lf", accel_us, raw_us) == 2;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t size_mb = 800;
  uint64_t small = 20000;
  uint64_t file_mb = 800;
  uint64_t small_bytes = 1024;
  uint32_t repeat = 3;
  uint64_t seed = 1;
  bool json = false;
  uint64_t xproc = 2000;
  bool import_child = false;
  CLI::App app{"accel-object-store-bench: the object store beside memcpy, raw copies and Ray's published figures"};
  app.add_option("--size-mb", size_mb, "large object size in MB (10^6 bytes)")->check(CLI::Range(1, 16000));
  app.add_option("--small", small, "small objects put, got and released")->check(CLI::Range(1, 10000000));
  app.add_option("--file-mb", file_mb, "file streamed to device 0, in MB (0: skip that row)")
      ->check(CLI::Range(0, 16000));
  app.add_option("--small-bytes", small_bytes, "bytes of each small object")->check(CLI::Range(1, 1 << 20));
  app.add_option("--repeat", repeat, "repeats; each figure is their median")->check(CLI::Range(1, 1000));
  app.add_option("--seed", seed, "decides which contender runs first in each repeat");
  app.add_flag("--json", json, "print the figures as JSON");
  app.add_option("--xproc", xproc, "objects imported by a second process (0: skip that row)")
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--import-child", import_child, "(internal) the reading process of the cross-process row");
  CLI11_PARSE(app, argc, argv);

  setenv("ACCEL_SIM_PROFILE", kProfile, 1);
  if (import_child) return ImportChild();
  // The agent of the cross-process row: a private socket unless one is named, gone soon after the bench.
  std::string agent_dir;
  if (std::getenv("ACCEL_OBJECT_AGENT_SOCKET") == nullptr) {
    std::string pattern = TempDirectory() + "/accel-bench-agent-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) {
      agent_dir = pattern;
      setenv("ACCEL_OBJECT_AGENT_SOCKET", (agent_dir + "/object-agent.sock").c_str(), 1);
      setenv("ACCEL_OBJECT_AGENT_IDLE_MS", "200", 1);
    }
  }
  accel_instance_desc_t id{};
  id.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  id.struct_size = sizeof(id);
  id.backends = "sim";
  accel_instance_t instance = nullptr;
  if (!Check(accel_instance_create(&id, &instance), "accel_instance_create")) {
    std::fprintf(stderr, "accel-object-store-bench: %s\n", g_failure.c_str());
    return 1;
  }
  const uint64_t size = size_mb * 1000 * 1000;
  accel_object_store_desc_t sd{};
  sd.stype = ACCEL_STRUCTURE_TYPE_OBJECT_STORE_DESC;
  sd.struct_size = sizeof(sd);
  sd.host_capacity = 2 * size + (uint64_t{1} << 30);
  sd.device_capacity = 2 * size + (uint64_t{1} << 30);
  accel_runtime_desc_t rd{};
  rd.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DESC;
  rd.struct_size = sizeof(rd);
  rd.next = &sd;
  accel_runtime_t rt = nullptr;
  Check(accel_runtime_create(instance, &rd, &rt), "accel_runtime_create");

  std::vector<Row> rows;
  std::mt19937_64 rng(seed);
  auto pair = [&](const std::function<double()>& accel, const std::function<double()>& baseline) {
    return accel_bench::Paired(
        repeat, rng, [] { return !g_failure.empty(); }, accel, baseline);
  };

  if (g_failure.empty()) {
    std::vector<uint8_t> source(size);
    for (size_t i = 0; i < source.size(); i += 4096) source[i] = static_cast<uint8_t>(i / 4096);
    std::vector<uint8_t> warm(size, 1);
    // Put: a fresh copy in the store.
    const auto [put_s, fresh_s] = pair(
        [&] {
          const auto t = Clock::now();
          accel_object_t o = Put(rt, source.data(), size);
          const double s = Seconds(t);
          if (o != nullptr) accel_object_release(o);
          return s;
        },
        [&] {
          const auto t = Clock::now();
          void* p = std::malloc(size);
          std::memcpy(p, source.data(), size);
          asm volatile("" : : "r"(p) : "memory");  // the copy is used: not elided
          const double s = Seconds(t);
          std::free(p);
          return s;
        });
    double warm_s = 0.0;
    {
      std::vector<double> w;
      for (uint32_t r = 0; r < repeat; ++r) {
        const auto t = Clock::now();
        std::memcpy(warm.data(), source.data(), size);
        asm volatile("" : : "r"(warm.data()) : "memory");
        w.push_back(Seconds(t));
      }
      warm_s = Median(w);
    }
    const double gb = static_cast<double>(size) / 1e9;
    rows.push_back({fmt::format("put {} MB from host", size_mb), gb / put_s, gb / fresh_s, "GB/s",
                    "malloc + memcpy (fresh memory)", fmt::format(">= {}x", kGoalRatio)});
    rows.push_back({fmt::format("put {} MB from host", size_mb), gb / put_s, gb / warm_s, "GB/s",
                    "memcpy into touched memory", "-"});
    // Put by adoption (ACCEL_OBJECT_PUT_ADOPT): the caller's memory becomes the replica, nothing copied.
    {
      std::vector<double> adopt;
      for (uint32_t r = 0; r < repeat && g_failure.empty(); ++r) {
        accel_object_put_desc_t d{};
        d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
        d.struct_size = sizeof(d);
        d.data = warm.data();
        d.size = size;
        d.flags = ACCEL_OBJECT_PUT_ADOPT;
        d.release_data = [](void*, const void*) {};  // `warm` stays the bench's
        accel_object_t o = nullptr;
        const auto t = Clock::now();
        const accel_status_t status = accel_object_put(rt, &d, &o);
        adopt.push_back(Seconds(t));
        if (status != ACCEL_SUCCESS) g_failure = fmt::format("adopting put: {}", accel_last_error());
        if (o != nullptr) accel_object_release(o);
      }
      if (g_failure.empty()) {
        rows.push_back({fmt::format("put {} MB by adopting it", size_mb), gb / Median(adopt), gb / warm_s, "GB/s",
                        "memcpy into touched memory", "-"});
      }
    }

    // Get on device 0: a new replica there by one host-to-device copy.
    accel_object_t object = Put(rt, source.data(), size);
    accel_runtime_device_t rdev{};
    rdev.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE;
    rdev.struct_size = sizeof(rdev);
    Check(accel_runtime_get_device(rt, 0, &rdev), "accel_runtime_get_device");
    uint32_t n = 1;
    accel_device_t device = nullptr;
    Check(accel_physical_device_enumerate_devices(rdev.physical_device, &n, &device), "enumerate_devices");
    accel_stream_t stream = nullptr;
    if (device != nullptr) Check(accel_stream_create(device, nullptr, &stream), "accel_stream_create");
    const auto [get_s, raw_s] = pair(
        [&] {
          const auto t = Clock::now();
          accel_object_view_t v = nullptr;
          Check(accel_object_get(object, 0, ACCEL_TIMEOUT_INFINITE, &v), "accel_object_get");
          const double s = Seconds(t);
          if (v != nullptr) accel_object_view_release(v);
          // Drop the device replica for the next repeat: a fresh object each time would time the put too.
          accel_object_release(object);
          object = Put(rt, source.data(), size);
          return s;
        },
        [&] {
          accel_buffer_desc_t bd{};
          bd.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
          bd.struct_size = sizeof(bd);
          bd.size = size;
          const auto t = Clock::now();
          accel_buffer_t b = nullptr;
          if (Check(accel_buffer_create(device, &bd, &b), "accel_buffer_create") &&
              Check(accel_stream_copy_host_to_buffer(stream, source.data(), b, 0, size), "copy_host_to_buffer")) {
            Check(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), "accel_stream_synchronize");
          }
          const double s = Seconds(t);
          if (b != nullptr) accel_buffer_destroy(b);
          return s;
        });
    rows.push_back({fmt::format("get {} MB on device 0 (new replica)", size_mb), gb / get_s, gb / raw_s, "GB/s",
                    "buffer create + copy_host_to_buffer", fmt::format(">= {}x", kGoalRatio)});
    if (stream != nullptr) accel_stream_destroy(stream);
    if (object != nullptr) accel_object_release(object);
  }

  if (g_failure.empty() && file_mb > 0) {
    // A file (weights) into device 0: accel_object_put_file (chunked reads overlapped with copies) against reading
    // the whole file into host memory, then one copy. The file leaves the page cache before each run.
    const uint64_t file_size = file_mb * 1000 * 1000;
    const std::string path = fmt::format("{}/accel-object-store-bench-{}.bin", TempDirectory(), getpid());
    if (!WriteFile(path, file_size)) {
      g_failure = fmt::format("could not write {} bytes to '{}'", file_size, path);
    } else {
      accel_device_t device = DeviceOf(rt, 0);
      const auto [stream_s, read_copy_s] = pair(
          [&] {
            DropFromPageCache(path);
            const int32_t where = 0;
            accel_object_file_desc_t d{};
            d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_FILE_DESC;
            d.struct_size = sizeof(d);
            d.path = path.c_str();
            d.locations = &where;
            d.location_count = 1;
            const auto t = Clock::now();
            accel_object_t o = nullptr;
            Check(accel_object_put_file(rt, &d, &o), "accel_object_put_file");
            const double s = Seconds(t);
            if (o != nullptr) accel_object_release(o);
            return s;
          },
          [&] {
            DropFromPageCache(path);
            const auto t = Clock::now();
            ReadThenCopy(path, file_size, device);
            return Seconds(t);
          });
      const double gb = static_cast<double>(file_size) / 1e9;
      rows.push_back({fmt::format("stream a {} MB file to device 0", file_mb), gb / stream_s, gb / read_copy_s, "GB/s",
                      "read it all, then one copy", ">= 1.5x"});
      ::unlink(path.c_str());
    }
  }

  if (g_failure.empty()) {
    // Small objects: put, get on the host, release.
    std::vector<uint8_t> bytes(small_bytes, 7);
    std::vector<double> puts, gets;
    for (uint32_t r = 0; r < repeat && g_failure.empty(); ++r) {
      std::vector<accel_object_t> objects(small);
      auto t = Clock::now();
      for (auto& o : objects) o = Put(rt, bytes.data(), bytes.size());
      puts.push_back(static_cast<double>(small) / Seconds(t));
      t = Clock::now();
      for (auto* o : objects) {
        accel_object_view_t v = nullptr;
        if (Check(accel_object_get(o, ACCEL_OBJECT_LOCATION_HOST, ACCEL_TIMEOUT_INFINITE, &v), "accel_object_get")) {
          accel_object_view_release(v);
        }
      }
      gets.push_back(static_cast<double>(small) / Seconds(t));
      for (auto* o : objects) {
        if (o != nullptr) accel_object_release(o);
      }
    }
    rows.push_back({fmt::format("small objects ({} bytes): puts", small_bytes), Median(puts), kRayPutsPerSecond, "/s",
                    "Ray plasma (published)", "-"});
    rows.push_back({fmt::format("small objects ({} bytes): host gets", small_bytes), Median(gets), kRayGetsPerSecond,
                    "/s", "Ray plasma (published)", "-"});
    rows.push_back({"zero-copy host get + view release", 1e6 / Median(gets), 0.0, "us", "-",
                    fmt::format("< {} us", kGoalHostGetUs)});
  }

  if (g_failure.empty() && xproc > 0) {
    // Cross-process get: objects shared here, imported and read by a second process, per object, beside the raw
    // memfd round trip (same process pair, same socket kind, interleaved) and the same-process zero-copy get.
    std::vector<uint8_t> bytes(small_bytes, 9);
    std::vector<accel_object_t> objects;
    std::vector<std::string> tokens;
    for (uint64_t i = 0; i < xproc && g_failure.empty(); ++i) {
      accel_object_t o = Put(rt, bytes.data(), bytes.size());
      accel_object_token_t t{};
      t.stype = ACCEL_STRUCTURE_TYPE_OBJECT_TOKEN;
      t.struct_size = sizeof(t);
      if (o != nullptr && Check(accel_object_share(o, &t), "accel_object_share")) tokens.push_back(t.text);
      if (o != nullptr) objects.push_back(o);
    }
    std::vector<double> same;
    for (auto* o : objects) {
      const auto t = Clock::now();
      accel_object_view_t v = nullptr;
      if (!Check(accel_object_get(o, ACCEL_OBJECT_LOCATION_HOST, ACCEL_TIMEOUT_INFINITE, &v), "accel_object_get")) {
        break;
      }
      same.push_back(Seconds(t) * 1e6);
      accel_object_view_release(v);
    }
    int pair_fds[2] = {-1, -1};
    const int memfd = SealedMemfd(small_bytes);
    if (g_failure.empty() && (memfd < 0 || ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair_fds) != 0)) {
      g_failure = "the raw baseline's memfd or socket pair could not be made";
    }
    if (g_failure.empty()) {
      std::thread server(ServeRaw, pair_fds[0], memfd);
      std::vector<double> accel_us, raw_us;
      for (uint32_t r = 0; r < repeat && g_failure.empty(); ++r) {
        double a = 0, b = 0;
        if (!CrossProcess(tokens, pair_fds[1], &a, &b)) {
          g_failure = "the reading process (--import-child) failed";
          break;
        }
        accel_us.push_back(a);
        raw_us.push_back(b);
      }
      ::shutdown(pair_fds[0], SHUT_RDWR);
      server.join();
      const std::string name = fmt::format("cross-process get of {} B objects", small_bytes);
      rows.push_back({name, Median(accel_us), Median(raw_us), "us", "memfd over a Unix socket + mmap", "-"});
      rows.push_back({name, Median(accel_us), Median(same), "us", "host get in the same process", "-"});
    }
    for (int fd : pair_fds) {
      if (fd >= 0) ::close(fd);
    }
    if (memfd >= 0) ::close(memfd);
    for (auto* o : objects) accel_object_release(o);
  }

  if (rt != nullptr) accel_runtime_destroy(rt);
  accel_instance_destroy(instance);
  if (!agent_dir.empty()) {
    // The private agent exits once idle (it removes its socket); then its directory goes.
    const std::string socket = agent_dir + "/object-agent.sock";
    for (int i = 0; i < 500 && ::access(socket.c_str(), F_OK) == 0; ++i) ::usleep(10000);
    ::unlink((socket + ".lock").c_str());
    ::rmdir(agent_dir.c_str());
  }
  if (!g_failure.empty()) {
    std::fprintf(stderr, "accel-object-store-bench: %s\n", g_failure.c_str());
    return 1;
  }
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows) {
      out.push_back({{"figure", r.name},
                     {"accel", r.accel},
                     {"baseline", r.baseline},
                     {"unit", r.unit},
                     {"baseline_name", r.baseline_name},
                     {"goal", r.goal}});
    }
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print(
      "accel-object-store-bench: sim {} node; large objects {} MB; {} small objects of {} bytes; repeat {}; "
      "seed {}\n\n",
      kProfile, size_mb, small, small_bytes, repeat, seed);
  fmt::print("{:<44} {:>12} {:>12} {:>8}  {:<38} {}\n", "figure", "Accel", "baseline", "ratio", "baseline", "goal");
  for (const Row& r : rows) {
    const std::string ratio = r.baseline > 0.0 ? fmt::format("{:.2f}x", r.accel / r.baseline) : "-";
    fmt::print("{:<44} {:>9.2f} {:<2} {:>9.2f} {:<2} {:>8}  {:<38} {}\n", r.name, r.accel, r.unit, r.baseline,
               r.baseline > 0.0 ? r.unit : "", ratio, r.baseline_name, r.goal);
  }
  return 0;
}
