// The object store of libaccel-runtime 1.2 (include/accel/object_store.h,
// docs/objectstore.md) on the sim backend's 8-GPU node: reference counts,
// every location kind (host, device, peer device, from a device buffer), one
// shared transfer for concurrent gets, eviction, moves to the host, spill to
// checksummed files and restore with the bytes verified, viewed replicas
// never dropped, clear errors for a corrupt spill file and an unusable spill
// directory with nothing lost, and bad input.
#include <accel/object_store.h>
#include <accel/runtime.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <latch>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "object_fixture.h"
#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

TEST(ObjectStore, ReferencesCountAndAViewOutlivesTheLastReference) {
  StoreRuntime rt(0, 0, "");
  const auto bytes = Pattern(1 << 20, 1);
  accel_object_t object = nullptr;
  ASSERT_EQ(rt.Put(bytes, &object, "weights"), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(Info(object).references, 1U);
  EXPECT_EQ(Info(object).on_host, 1U);
  EXPECT_EQ(Info(object).size, bytes.size());
  EXPECT_EQ(accel_object_retain(object), ACCEL_SUCCESS);
  EXPECT_EQ(Info(object).references, 2U);

  accel_object_view_t view = nullptr;
  ASSERT_EQ(accel_object_get(object, kHost, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_SUCCESS) << accel_last_error();
  const auto info = ViewInfo(view);
  EXPECT_NE(info.host_address, bytes.data()) << "a put copies";
  EXPECT_EQ(info.location, kHost);
  EXPECT_EQ(Info(object).views, 1U);
  EXPECT_EQ(rt.Usage(kHost).used, bytes.size());

  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(object), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("'object' is a stale object handle"), std::string::npos)
      << accel_last_error();
  accel_object_info_t stale{};
  stale.stype = ACCEL_STRUCTURE_TYPE_OBJECT_INFO;
  stale.struct_size = sizeof(stale);
  EXPECT_EQ(accel_object_get_info(object, &stale), ACCEL_ERROR_INVALID_HANDLE);
  // Nothing referenced is lost: the view still reads the bytes.
  EXPECT_EQ(Read(view), bytes);
  EXPECT_EQ(rt.Usage(kHost).used, bytes.size());
  EXPECT_EQ(accel_object_view_release(view), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_view_release(view), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(rt.Usage(kHost).used, 0U) << "freed with its last view";
  EXPECT_EQ(rt.Usage(kHost).replicas, 0U);
}

TEST(ObjectStore, EveryLocationKindHoldsTheSameBytes) {
  StoreRuntime rt(0, 0, "");
  const auto bytes = Pattern(3 << 20, 2);
  accel_object_t object = nullptr;
  ASSERT_EQ(rt.Put(bytes, &object), ACCEL_SUCCESS) << accel_last_error();
  // Host -> device 0, then device 0 -> device 1 (a peer copy within the sim backend).
  EXPECT_EQ(GetBytes(object, 0), bytes);
  EXPECT_EQ(GetBytes(object, 1), bytes);
  uint32_t present = 0;
  EXPECT_EQ(accel_object_is_on_device(object, 1, &present), ACCEL_SUCCESS);
  EXPECT_EQ(present, 1U);
  EXPECT_EQ(accel_object_is_on_device(object, 2, &present), ACCEL_SUCCESS);
  EXPECT_EQ(present, 0U);
  EXPECT_EQ(Info(object).device_replicas, 2U);
  EXPECT_EQ(rt.Usage(0).transfers_in, 1U);
  EXPECT_EQ(rt.Usage(1).transfers_in, 1U);
  // A second get on a device with a replica copies nothing.
  EXPECT_EQ(GetBytes(object, 1), bytes);
  EXPECT_EQ(rt.Usage(1).transfers_in, 1U);

  // From a device buffer on device 2, at an offset: a device replica there, then the host.
  accel_object_t from_device = PutFromDevice(rt, 2, bytes, 4096);
  ASSERT_NE(from_device, nullptr);
  EXPECT_EQ(Info(from_device).on_host, 0U);
  EXPECT_EQ(Info(from_device).device_replicas, 1U);
  EXPECT_EQ(GetBytes(from_device, kHost), bytes);
  EXPECT_EQ(GetBytes(from_device, 5), bytes);
  EXPECT_EQ(accel_object_release(from_device), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
  for (int32_t where : {kHost, 0, 1, 2, 5}) EXPECT_EQ(rt.Usage(where).used, 0U) << where;
}

TEST(ObjectStore, ConcurrentGetsOnOneDeviceShareOneTransfer) {
  StoreRuntime rt(0, 0, "");
  const auto bytes = Pattern(32 << 20, 3);
  accel_object_t object = nullptr;
  ASSERT_EQ(rt.Put(bytes, &object), ACCEL_SUCCESS) << accel_last_error();
  constexpr int kThreads = 8;
  std::latch start(kThreads);
  std::vector<accel_object_view_t> views(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      EXPECT_EQ(accel_object_get(object, 3, ACCEL_TIMEOUT_INFINITE, &views[i]), ACCEL_SUCCESS) << accel_last_error();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(rt.Usage(3).transfers_in, 1U) << "eight gets, one copy";
  EXPECT_EQ(rt.Usage(3).replicas, 1U);
  EXPECT_EQ(Info(object).views, static_cast<uint32_t>(kThreads));
  for (auto* v : views) EXPECT_EQ(ViewInfo(v).buffer, ViewInfo(views[0]).buffer);
  EXPECT_EQ(Read(views[5]), bytes);
  for (auto* v : views) EXPECT_EQ(accel_object_view_release(v), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(object), ACCEL_SUCCESS);
}

// A small store: 4 MiB of host, 2 MiB per device. Six 1 MiB objects push the
// two least recently used to spill files; a get reads them back, verified.
TEST(ObjectStore, EvictionSpillAndRestoreKeepEveryByte) {
  TempDir dir;
  const std::string spill = dir.path().string() + "/spill";
  constexpr uint64_t kMiB1 = 1 << 20;
  StoreRuntime rt(4 * kMiB1, 2 * kMiB1, spill);
  std::vector<std::vector<uint8_t>> data;
  std::vector<accel_object_t> objects;
  for (uint32_t i = 0; i < 6; ++i) {
    data.push_back(Pattern(kMiB1, 10 + i));
    accel_object_t o = nullptr;
    ASSERT_EQ(rt.Put(data.back(), &o), ACCEL_SUCCESS) << i << ": " << accel_last_error();
    objects.push_back(o);
  }
  auto host = rt.Usage(kHost);
  EXPECT_EQ(host.used, 4 * kMiB1);
  EXPECT_EQ(host.moved_out, 2U) << "objects 0 and 1 went to spill files";
  EXPECT_EQ(Info(objects[0]).on_host, 0U);
  EXPECT_EQ(Info(objects[0]).on_disk, 1U);
  EXPECT_EQ(Info(objects[5]).on_host, 1U);
  // The spill files: private to the user, one per object on disk.
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(spill)) {
    ++files;
    struct stat st {};
    ASSERT_EQ(::stat(entry.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600U) << entry.path();
  }
  EXPECT_EQ(files, 2U);
  struct stat dst {};
  ASSERT_EQ(::stat(spill.c_str(), &dst), 0);
  EXPECT_EQ(dst.st_mode & 0777, 0700U);

  // Read back from disk (which spills the least recently used in its place).
  EXPECT_EQ(GetBytes(objects[0], kHost), data[0]);
  host = rt.Usage(kHost);
  EXPECT_EQ(host.restored, 1U);
  EXPECT_EQ(host.moved_out, 3U);

  // Devices: 2 MiB each. Three objects on device 4: the least recently used one is evicted (its host or disk copy
  // stays), never lost.
  for (int i : {3, 4, 5}) EXPECT_EQ(GetBytes(objects[i], 4), data[i]);
  auto dev = rt.Usage(4);
  EXPECT_EQ(dev.used, 2 * kMiB1);
  EXPECT_EQ(dev.evicted, 1U);
  EXPECT_EQ(dev.transfers_in, 3U);
  // An object only on a device moves to the host when the device needs room.
  accel_object_t only_device = PutFromDevice(rt, 6, data[2]);
  EXPECT_EQ(GetBytes(objects[4], 6), data[4]);
  EXPECT_EQ(GetBytes(objects[5], 6), data[5]);  // device 6 full: only_device (least recently used) moves out
  EXPECT_EQ(rt.Usage(6).moved_out, 1U);
  EXPECT_EQ(Info(only_device).device_replicas, 0U);
  EXPECT_TRUE(Info(only_device).on_host == 1U || Info(only_device).on_disk == 1U);
  EXPECT_EQ(GetBytes(only_device, kHost), data[2]);

  // Every object still reads back whole, wherever it is now.
  for (size_t i = 0; i < objects.size(); ++i) EXPECT_EQ(GetBytes(objects[i], kHost), data[i]) << i;
  for (auto* o : objects) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(only_device), ACCEL_SUCCESS);
  EXPECT_EQ(rt.Usage(kHost).used, 0U);
  EXPECT_TRUE(std::filesystem::is_empty(spill)) << "released objects leave no spill file";
}

TEST(ObjectStore, ViewedReplicasAreNeverDroppedAndAFullStoreSaysWhy) {
  TempDir dir;
  constexpr uint64_t kMiB1 = 1 << 20;
  StoreRuntime rt(2 * kMiB1, 0, dir.path().string());
  const auto a = Pattern(kMiB1, 20);
  const auto b = Pattern(kMiB1, 21);
  accel_object_t oa = nullptr;
  accel_object_t ob = nullptr;
  ASSERT_EQ(rt.Put(a, &oa), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Put(b, &ob), ACCEL_SUCCESS);
  accel_object_view_t va = nullptr;
  accel_object_view_t vb = nullptr;
  ASSERT_EQ(accel_object_get(oa, kHost, 0, &va), ACCEL_SUCCESS);
  ASSERT_EQ(accel_object_get(ob, kHost, 0, &vb), ACCEL_SUCCESS);
  accel_object_t oc = nullptr;
  EXPECT_EQ(rt.Put(Pattern(kMiB1, 22), &oc), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error()).find("in use (viewed, being copied or moving)"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(oc, nullptr);
  EXPECT_EQ(rt.Put(Pattern(3 * kMiB1, 23), &oc), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error()).find("larger than the store's capacity on the host"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(Read(va), a);
  EXPECT_EQ(accel_object_view_release(va), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Put(Pattern(kMiB1, 22), &oc), ACCEL_SUCCESS) << "room once a view went: " << accel_last_error();
  EXPECT_EQ(Info(oa).on_disk, 1U);
  EXPECT_EQ(Read(vb), b);
  EXPECT_EQ(accel_object_view_release(vb), ACCEL_SUCCESS);
  EXPECT_EQ(GetBytes(oa, kHost), a);
  for (auto* o : {oa, ob, oc}) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
}

TEST(ObjectStore, ACorruptSpillFileIsAClearErrorAndOthersAreUntouched) {
  TempDir dir;
  constexpr uint64_t kMiB1 = 1 << 20;
  StoreRuntime rt(kMiB1, 0, dir.path().string());
  const auto a = Pattern(kMiB1, 30);
  const auto b = Pattern(kMiB1, 31);
  accel_object_t oa = nullptr;
  accel_object_t ob = nullptr;
  ASSERT_EQ(rt.Put(a, &oa), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Put(b, &ob), ACCEL_SUCCESS);  // a goes to disk
  ASSERT_EQ(Info(oa).on_disk, 1U);
  std::string file;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) file = entry.path().string();
  ASSERT_FALSE(file.empty());
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    const char flipped = 0x5A;
    f.write(&flipped, 1);
  }
  accel_object_view_t view = nullptr;
  EXPECT_EQ(accel_object_get(oa, kHost, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(accel_last_error()).find("fails its checksum"), std::string::npos) << accel_last_error();
  EXPECT_NE(std::string(accel_last_error()).find(file), std::string::npos) << accel_last_error();
  EXPECT_EQ(view, nullptr);
  EXPECT_EQ(GetBytes(ob, kHost), b);
  EXPECT_EQ(rt.Usage(kHost).used, kMiB1) << "the failed read gave its room back";
  for (auto* o : {oa, ob}) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
}

// The default spill directory ($TMPDIR/accel-spill-<pid>-<store>) is a name anyone can guess: one made first by
// someone else (here: a directory group and others may write) is refused, not used; the put that needed it fails
// naming it, and nothing is lost.
TEST(ObjectStore, ADefaultSpillDirectoryMadeBySomeoneElseIsRefused) {
  constexpr uint64_t kMiB1 = 1 << 20;
  TempDir dir;
  ScopedEnv tmp("TMPDIR", dir.path().string());
  const char* user_dir = std::getenv("ACCEL_SPILL_DIR");
  ASSERT_TRUE(user_dir == nullptr || user_dir[0] == '\0') << "the default directory is under test";
  for (int store = 0; store < 256; ++store) {  // whichever number the next store gets
    const std::string taken =
        dir.path().string() + "/accel-spill-" + std::to_string(::getpid()) + "-" + std::to_string(store);
    ASSERT_EQ(::mkdir(taken.c_str(), 0700), 0);
    ASSERT_EQ(::chmod(taken.c_str(), 0777), 0);
  }
  StoreRuntime rt(2 * kMiB1, 0, "");
  const auto a = Pattern(kMiB1, 43);
  const auto b = Pattern(kMiB1, 44);
  accel_object_t oa = nullptr;
  accel_object_t ob = nullptr;
  accel_object_t oc = nullptr;
  ASSERT_EQ(rt.Put(a, &oa), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Put(b, &ob), ACCEL_SUCCESS);
  EXPECT_EQ(rt.Put(Pattern(kMiB1, 45), &oc), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error()).find("is not this user's private directory"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(GetBytes(oa, kHost), a);
  EXPECT_EQ(GetBytes(ob, kHost), b);
  EXPECT_EQ(rt.Usage(kHost).moved_out, 0U);
  for (auto* o : {oa, ob}) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
}

TEST(ObjectStore, AnUnusableSpillDirectoryRefusesThePutAndLosesNothing) {
  constexpr uint64_t kMiB1 = 1 << 20;
  // Not a directory anyone can make (a file's child).
  TempDir dir;
  const std::string blocker = dir.path().string() + "/a-file";
  std::ofstream(blocker) << "x";
  StoreRuntime rt(2 * kMiB1, 0, blocker + "/spill");
  const auto a = Pattern(kMiB1, 40);
  const auto b = Pattern(kMiB1, 41);
  accel_object_t oa = nullptr;
  accel_object_t ob = nullptr;
  accel_object_t oc = nullptr;
  ASSERT_EQ(rt.Put(a, &oa), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Put(b, &ob), ACCEL_SUCCESS);
  EXPECT_EQ(rt.Put(Pattern(kMiB1, 42), &oc), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error()).find("spill directory"), std::string::npos) << accel_last_error();
  EXPECT_NE(std::string(accel_last_error()).find(blocker), std::string::npos) << accel_last_error();
  EXPECT_EQ(GetBytes(oa, kHost), a);
  EXPECT_EQ(GetBytes(ob, kHost), b);
  EXPECT_EQ(rt.Usage(kHost).moved_out, 0U);
  for (auto* o : {oa, ob}) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
}

// A spill directory on a full file system (a 1.5 MiB tmpfs mounted in a private mount namespace when the test may;
// else a file size limit, which fails the same write with EFBIG): the put that needed the spill fails with the
// reason, nothing is lost (what is in memory reads; the spilled object stays on disk and reads back once there is
// room), and the failed put succeeds later.
TEST(ObjectStore, AFullSpillDiskIsAClearErrorAndLosesNothing) {
  constexpr uint64_t kMiB1 = 1 << 20;
  TempDir dir;
  const std::string spill = dir.path().string() + "/spill";
  std::filesystem::create_directory(spill);
  const auto a = Pattern(kMiB1, 43);
  const auto b = Pattern(kMiB1, 44);
  const auto c = Pattern(kMiB1, 45);
  const auto d = Pattern(kMiB1, 46);
  accel_object_t oa = nullptr, ob = nullptr, oc = nullptr, od = nullptr;
  const bool own_mount = unshare(CLONE_NEWNS) == 0 && mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
                         mount("tmpfs", spill.c_str(), "tmpfs", 0, "size=1536k,mode=0700") == 0;
  if (!own_mount) {
    // No mount allowed (not root): a file size limit of 512 KiB fails every spill write the same way (EFBIG).
    rlimit old_limit{};
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    std::signal(SIGXFSZ, SIG_IGN);  // the write fails instead of killing the process
    rlimit limit = old_limit;
    limit.rlim_cur = 512 * 1024;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
    {
      StoreRuntime rt(2 * kMiB1, 0, spill);
      ASSERT_EQ(rt.Put(a, &oa), ACCEL_SUCCESS);
      ASSERT_EQ(rt.Put(b, &ob), ACCEL_SUCCESS);
      EXPECT_EQ(rt.Put(c, &oc), ACCEL_ERROR_RESOURCE_EXHAUSTED);
      EXPECT_NE(std::string(accel_last_error()).find("File too large"), std::string::npos) << accel_last_error();
      EXPECT_EQ(GetBytes(oa, kHost), a);
      EXPECT_EQ(GetBytes(ob, kHost), b);
      EXPECT_TRUE(std::filesystem::is_empty(spill)) << "a half-written spill file was left";
      ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
      ASSERT_EQ(rt.Put(c, &oc), ACCEL_SUCCESS) << accel_last_error();  // the disk takes it now
      EXPECT_EQ(GetBytes(oa, kHost), a);
      for (auto* o : {oa, ob, oc}) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
    }
    GTEST_SKIP() << "ran with a file size limit instead of a full tmpfs: mounting needs root (CAP_SYS_ADMIN)";
  }
  {
    StoreRuntime rt(2 * kMiB1, 0, spill);
    ASSERT_EQ(rt.Put(a, &oa), ACCEL_SUCCESS);
    ASSERT_EQ(rt.Put(b, &ob), ACCEL_SUCCESS);
    // c needs a spilled: 1 MiB (and its header) fits the disk.
    ASSERT_EQ(rt.Put(c, &oc), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(Info(oa).on_disk, 1U);
    // d needs b spilled too: no room left on the disk.
    EXPECT_EQ(rt.Put(d, &od), ACCEL_ERROR_RESOURCE_EXHAUSTED);
    const std::string why = accel_last_error();
    EXPECT_NE(why.find("could not be written"), std::string::npos) << why;
    EXPECT_NE(why.find("No space left on device"), std::string::npos) << why;
    EXPECT_EQ(od, nullptr);
    // Nothing lost: what is in memory reads; the spilled one stays on disk, and reading it back (which needs room
    // in memory, so another spill) fails with the same reason until there is space.
    EXPECT_EQ(GetBytes(ob, kHost), b);
    EXPECT_EQ(GetBytes(oc, kHost), c);
    accel_object_view_t view = nullptr;
    EXPECT_EQ(accel_object_get(oa, kHost, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_ERROR_RESOURCE_EXHAUSTED);
    EXPECT_NE(std::string(accel_last_error()).find("No space left on device"), std::string::npos) << accel_last_error();
    EXPECT_EQ(Info(oa).on_disk, 1U);
    // Room back in memory (c goes): a reads back from its file, byte for byte; d then fits by dropping a's memory
    // copy (its file is another copy), although b, less recently used, cannot be spilled.
    EXPECT_EQ(accel_object_release(oc), ACCEL_SUCCESS);
    EXPECT_EQ(GetBytes(oa, kHost), a);
    ASSERT_EQ(rt.Put(d, &od), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(GetBytes(od, kHost), d);
    EXPECT_EQ(GetBytes(ob, kHost), b);
    for (auto* o : {oa, ob, od}) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
  }
  EXPECT_EQ(umount(spill.c_str()), 0);
}

// ACCEL_OBJECT_PUT_ADOPT: the caller's host memory or device buffer becomes the replica (no copy); host memory is
// given back once through release_data when the store is done with it (released, or spilled), a buffer is destroyed
// with its replica; a refused adopt leaves the memory the caller's.
TEST(ObjectStore, AdoptTakesTheCallersMemoryWithoutACopy) {
  constexpr uint64_t kMiB1 = 1 << 20;
  TempDir dir;
  StoreRuntime rt(2 * kMiB1, 2 * kMiB1, dir.path().string());
  struct Given {
    std::atomic<int> calls{0};
    std::atomic<const void*> data{nullptr};
  } given;
  const auto release = [](void* user_data, const void* data) {
    auto* g = static_cast<Given*>(user_data);
    ++g->calls;
    g->data = data;
    std::free(const_cast<void*>(data));
  };
  auto adopt_host = [&](const std::vector<uint8_t>& bytes, accel_object_t* out) {
    void* memory = std::malloc(bytes.size());
    std::memcpy(memory, bytes.data(), bytes.size());
    accel_object_put_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
    d.struct_size = sizeof(d);
    d.data = memory;
    d.size = bytes.size();
    d.flags = ACCEL_OBJECT_PUT_ADOPT;
    d.release_data = release;
    d.release_user_data = &given;
    const accel_status_t s = accel_object_put(rt.get(), &d, out);
    if (s != ACCEL_SUCCESS) std::free(memory);  // still ours
    return std::make_pair(s, static_cast<const void*>(memory));
  };

  // Host: the view is the caller's memory; released once, with the object.
  const auto a = Pattern(kMiB1, 90);
  accel_object_t oa = nullptr;
  const auto [sa, memory_a] = adopt_host(a, &oa);
  ASSERT_EQ(sa, ACCEL_SUCCESS) << accel_last_error();
  accel_object_view_t view = nullptr;
  ASSERT_EQ(accel_object_get(oa, kHost, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_SUCCESS);
  EXPECT_EQ(ViewInfo(view).host_address, memory_a) << "zero-copy: the adopted memory itself";
  EXPECT_EQ(rt.Usage(kHost).used, kMiB1);
  EXPECT_EQ(accel_object_view_release(view), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(oa), ACCEL_SUCCESS);
  EXPECT_EQ(given.calls.load(), 1);
  EXPECT_EQ(given.data.load(), memory_a);
  EXPECT_EQ(rt.Usage(kHost).used, 0U);

  // Host, spilled: given back when its bytes went to the file; they read back from there.
  accel_object_t ob = nullptr, oc = nullptr, od = nullptr;
  const auto b = Pattern(kMiB1, 91);
  ASSERT_EQ(adopt_host(b, &ob).first, ACCEL_SUCCESS);
  ASSERT_EQ(rt.Put(Pattern(kMiB1, 92), &oc), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Put(Pattern(kMiB1, 93), &od), ACCEL_SUCCESS);  // b, least recently used, spills
  EXPECT_EQ(Info(ob).on_disk, 1U);
  EXPECT_EQ(given.calls.load(), 2) << "the store was done with b's memory once it was on disk";
  EXPECT_EQ(GetBytes(ob, kHost), b);
  for (auto* o : {ob, oc, od}) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
  EXPECT_EQ(given.calls.load(), 2) << "never twice";

  // Device: the buffer is the replica, destroyed with it.
  const auto e = Pattern(kMiB1, 94);
  accel_device_t device = rt.Device(3);
  accel_buffer_t buffer = nullptr;
  const auto bd = BufferDesc(e.size());
  ASSERT_EQ(accel_buffer_create(device, &bd, &buffer), ACCEL_SUCCESS);
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(device, nullptr, &stream), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, e.data(), buffer, 0, e.size()), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  accel_object_put_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
  d.struct_size = sizeof(d);
  d.buffer = buffer;
  d.size = e.size();
  d.flags = ACCEL_OBJECT_PUT_ADOPT;
  accel_object_t oe = nullptr;
  ASSERT_EQ(accel_object_put(rt.get(), &d, &oe), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_object_get(oe, 3, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_SUCCESS);
  EXPECT_EQ(ViewInfo(view).buffer, buffer) << "zero-copy: the adopted buffer itself";
  EXPECT_EQ(rt.Usage(3).transfers_in, 0U);
  EXPECT_EQ(accel_object_view_release(view), ACCEL_SUCCESS);
  EXPECT_EQ(GetBytes(oe, kHost), e);
  EXPECT_EQ(accel_object_release(oe), ACCEL_SUCCESS);
  accel_buffer_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
  props.struct_size = sizeof(props);
  EXPECT_EQ(accel_buffer_get_properties(buffer, &props), ACCEL_ERROR_INVALID_HANDLE) << "destroyed with the replica";

  // Bad input, and a refused adopt: nothing taken, nothing given back.
  std::vector<uint8_t> small(64, 7);
  d = accel_object_put_desc_t{};
  d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
  d.struct_size = sizeof(d);
  d.data = small.data();
  d.size = small.size();
  d.flags = ACCEL_OBJECT_PUT_ADOPT;
  accel_object_t bad = nullptr;
  EXPECT_EQ(accel_object_put(rt.get(), &d, &bad), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->release_data' is NULL"), std::string::npos)
      << accel_last_error();
  d.flags = 0x6;
  EXPECT_EQ(accel_object_put(rt.get(), &d, &bad), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->flags' 0x6"), std::string::npos) << accel_last_error();
  d.flags = 0;
  d.release_data = release;
  EXPECT_EQ(accel_object_put(rt.get(), &d, &bad), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("without ACCEL_OBJECT_PUT_ADOPT"), std::string::npos)
      << accel_last_error();
  const auto big = Pattern(3 * kMiB1, 95);
  accel_object_t too_big = nullptr;
  EXPECT_EQ(adopt_host(big, &too_big).first, ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(too_big, nullptr);
  EXPECT_EQ(given.calls.load(), 2) << "a refused adopt gives nothing back: the memory stayed the caller's";
}

// Regressions from a review (each failed before its fix).

// The room a device get makes (moving a device-only object to the host, which spills the host's least recently
// used copy) must not take away the get's own source.
TEST(ObjectStore, MakingRoomNeverTakesTheGetsOwnSource) {
  TempDir dir;
  constexpr uint64_t kMiB1 = 1 << 20;
  StoreRuntime rt(2 * kMiB1, kMiB1, dir.path().string());
  const auto a = Pattern(kMiB1, 70);
  const auto b = Pattern(kMiB1, 71);
  const auto c = Pattern(kMiB1, 72);
  accel_object_t oa = nullptr;
  accel_object_t oc = nullptr;
  ASSERT_EQ(rt.Put(a, &oa), ACCEL_SUCCESS);
  accel_object_t ob = PutFromDevice(rt, 0, b);
  ASSERT_EQ(rt.Put(c, &oc), ACCEL_SUCCESS);
  EXPECT_EQ(GetBytes(oa, 0), a);
  EXPECT_EQ(GetBytes(oa, 0), a) << "a second get finds the replica (no stuck filling one)";
  EXPECT_EQ(GetBytes(ob, kHost), b);
  EXPECT_EQ(GetBytes(oc, kHost), c);
  for (auto* o : {oa, ob, oc}) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
  for (int32_t where : {kHost, 0}) EXPECT_EQ(rt.Usage(where).used, 0U) << where;
}

// Two gets of one object on a full device at once: one transfer, one replica, the figures exact.
TEST(ObjectStore, ConcurrentGetsThatMakeRoomReserveOnce) {
  TempDir dir;
  constexpr uint64_t kSize = 64 << 20;
  StoreRuntime rt(16 * kSize, 2 * kSize, dir.path().string());
  accel_object_t v = PutFromDevice(rt, 0, Pattern(kSize, 80));
  accel_object_t w = PutFromDevice(rt, 0, Pattern(kSize, 81));
  const auto x = Pattern(kSize, 82);
  accel_object_t ox = nullptr;
  ASSERT_EQ(rt.Put(x, &ox), ACCEL_SUCCESS);
  accel_object_view_t v1 = nullptr;
  accel_object_view_t v2 = nullptr;
  std::thread t1([&] { EXPECT_EQ(accel_object_get(ox, 0, ACCEL_TIMEOUT_INFINITE, &v1), ACCEL_SUCCESS); });
  std::thread t2([&] { EXPECT_EQ(accel_object_get(ox, 0, ACCEL_TIMEOUT_INFINITE, &v2), ACCEL_SUCCESS); });
  t1.join();
  t2.join();
  EXPECT_EQ(ViewInfo(v1).buffer, ViewInfo(v2).buffer);
  EXPECT_EQ(Read(v1), x);
  EXPECT_EQ(rt.Usage(0).used, 2 * kSize);
  EXPECT_EQ(rt.Usage(0).replicas, 2U);
  EXPECT_EQ(rt.Usage(kHost).used, 2 * kSize) << "x, and v moved to the host";
  EXPECT_EQ(rt.Usage(kHost).replicas, 2U);
  for (auto* view : {v1, v2}) EXPECT_EQ(accel_object_view_release(view), ACCEL_SUCCESS);
  for (auto* o : {v, w, ox}) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
}

// Destroying the runtime while a get copies waits for the copy (no crash, no leak under ASan).
TEST(ObjectStore, DestroyDuringATransferWaitsForIt) {
  auto rt = std::make_unique<StoreRuntime>(0, 0, "");
  const auto x = Pattern(128 << 20, 90);
  accel_object_t ox = nullptr;
  ASSERT_EQ(rt->Put(x, &ox), ACCEL_SUCCESS);
  std::atomic<accel_status_t> got{ACCEL_NOT_READY};
  std::thread getter([&] {
    accel_object_view_t view = nullptr;
    got = accel_object_get(ox, 0, ACCEL_TIMEOUT_INFINITE, &view);
    if (view != nullptr) accel_object_view_release(view);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  rt.reset();  // destroys the runtime
  getter.join();
  EXPECT_TRUE(got == ACCEL_SUCCESS || got == ACCEL_ERROR_FAILED_PRECONDITION || got == ACCEL_ERROR_INVALID_HANDLE)
      << accel_status_name(got);
  EXPECT_EQ(accel_object_release(ox), ACCEL_SUCCESS);
}

// Two runtimes spilling into one directory never share a file.
TEST(ObjectStore, TwoStoresInOneDirectoryKeepTheirOwnSpillFiles) {
  TempDir dir;
  constexpr uint64_t kMiB1 = 1 << 20;
  StoreRuntime r1(kMiB1, 0, dir.path().string());
  StoreRuntime r2(kMiB1, 0, dir.path().string());
  const auto a = Pattern(kMiB1, 100);
  const auto b = Pattern(kMiB1, 101);
  accel_object_t a1 = nullptr, a2 = nullptr, b1 = nullptr, b2 = nullptr;
  ASSERT_EQ(r1.Put(a, &a1), ACCEL_SUCCESS);
  ASSERT_EQ(r1.Put(Pattern(kMiB1, 102), &a2), ACCEL_SUCCESS);  // a1 spills
  ASSERT_EQ(r2.Put(b, &b1), ACCEL_SUCCESS);
  ASSERT_EQ(r2.Put(Pattern(kMiB1, 103), &b2), ACCEL_SUCCESS);  // b1 spills: object 1 of another store
  EXPECT_EQ(GetBytes(a1, kHost), a);
  EXPECT_EQ(GetBytes(b1, kHost), b);
  EXPECT_EQ(accel_object_release(b1), ACCEL_SUCCESS);
  EXPECT_EQ(GetBytes(a1, kHost), a) << "releasing the other store's object 1 removed nothing of this one";
  for (auto* o : {a1, a2, b2}) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
}

// A file streamed into three parts (two devices and the host) in small chunks: every byte where it belongs, the
// progress counting up to the total.
TEST(ObjectStore, AFileStreamsIntoPartsOnDevicesAndTheHost) {
  TempDir dir;
  const std::string path = dir.path().string() + "/weights.bin";
  const auto bytes = Pattern((3 << 20) + 12345, 110);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  StoreRuntime rt(0, 0, "");
  const int32_t locations[] = {2, 5, kHost};
  struct Progress {
    std::vector<uint64_t> done;
    uint64_t total = 0;
  } progress;
  accel_object_file_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_FILE_DESC;
  d.struct_size = sizeof(d);
  d.path = path.c_str();
  d.offset = 100;
  d.locations = locations;
  d.location_count = 3;
  d.chunk_size = 64 << 10;
  d.progress = [](void* user, uint64_t done, uint64_t total) {
    auto* p = static_cast<Progress*>(user);
    p->done.push_back(done);
    p->total = total;
  };
  d.user_data = &progress;
  d.name = "weights";
  accel_object_t parts[3] = {};
  ASSERT_EQ(accel_object_put_file(rt.get(), &d, parts), ACCEL_SUCCESS) << accel_last_error();
  const uint64_t size = bytes.size() - 100;
  const uint64_t part = size / 3;
  EXPECT_EQ(Info(parts[0]).size, part);
  EXPECT_EQ(Info(parts[2]).size, size - 2 * part);
  uint64_t at = 100;
  for (int i = 0; i < 3; ++i) {
    const uint64_t n = Info(parts[i]).size;
    const std::vector<uint8_t> want(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                                    bytes.begin() + static_cast<std::ptrdiff_t>(at + n));
    EXPECT_EQ(GetBytes(parts[i], locations[i]), want) << "part " << i;
    at += n;
  }
  uint32_t present = 0;
  EXPECT_EQ(accel_object_is_on_device(parts[1], 5, &present), ACCEL_SUCCESS);
  EXPECT_EQ(present, 1U);
  EXPECT_EQ(Info(parts[1]).on_host, 0U) << "a device part never had a host replica";
  ASSERT_FALSE(progress.done.empty());
  EXPECT_TRUE(std::is_sorted(progress.done.begin(), progress.done.end()));
  EXPECT_EQ(progress.done.back(), size);
  EXPECT_EQ(progress.total, size);
  EXPECT_GE(progress.done.size(), size / d.chunk_size);
  for (auto* o : parts) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);

  // A chunk size near 2^64 is the whole range in one chunk (it sized the staging buffers, whose length wrapped).
  d.chunk_size = UINT64_MAX - 4096;
  ASSERT_EQ(accel_object_put_file(rt.get(), &d, parts), ACCEL_SUCCESS) << accel_last_error();
  at = 100;
  for (int i = 0; i < 3; ++i) {
    const uint64_t n = Info(parts[i]).size;
    const std::vector<uint8_t> want(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                                    bytes.begin() + static_cast<std::ptrdiff_t>(at + n));
    EXPECT_EQ(GetBytes(parts[i], locations[i]), want) << "part " << i << " in one chunk";
    at += n;
  }
  for (auto* o : parts) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
  d.chunk_size = 64 << 10;

  // Bad input: each names what was wrong, and nothing is left behind.
  accel_object_t one[3] = {};
  d.offset = bytes.size() + 1;
  EXPECT_EQ(accel_object_put_file(rt.get(), &d, one), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->offset'"), std::string::npos) << accel_last_error();
  d.offset = 0;
  d.size = bytes.size() + 1;
  EXPECT_EQ(accel_object_put_file(rt.get(), &d, one), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("past the end"), std::string::npos) << accel_last_error();
  d.size = 0;
  const int32_t bad[] = {0, 42};
  d.locations = bad;
  d.location_count = 2;
  EXPECT_EQ(accel_object_put_file(rt.get(), &d, one), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->locations[1]' 42"), std::string::npos) << accel_last_error();
  d.locations = nullptr;
  const std::string missing = dir.path().string() + "/no-such-file";
  d.path = missing.c_str();
  EXPECT_EQ(accel_object_put_file(rt.get(), &d, one), ACCEL_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(accel_last_error()).find(missing), std::string::npos) << accel_last_error();
  EXPECT_NE(std::string(accel_last_error()).find("No such file"), std::string::npos) << accel_last_error();
  EXPECT_EQ(one[0], nullptr);
  for (int32_t where : {kHost, 2, 5}) EXPECT_EQ(rt.Usage(where).used, 0U) << where;
}

// Faults injected by the sim backend (docs/sim.md, "Faults") fail only the call that met them: the object stays
// readable elsewhere, nothing stays counted, and the store's stream on that device works again afterwards.
TEST(ObjectStore, InjectedFaultsFailOnlyTheCallThatMetThem) {
  const auto x = Pattern(1 << 20, 120);
  {
    // gpu1 is lost at its second operation: the copy into the new replica.
    ScopedEnv faults("ACCEL_SIM_FAULTS", "device_lost_after=1,devices=gpu1");
    StoreRuntime rt(0, 0, "");
    accel_object_t o = nullptr;
    ASSERT_EQ(rt.Put(x, &o), ACCEL_SUCCESS);
    accel_object_view_t view = nullptr;
    EXPECT_EQ(accel_object_get(o, 1, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_ERROR_DEVICE_LOST);
    EXPECT_NE(std::string(accel_last_error()).find("device 1"), std::string::npos) << accel_last_error();
    EXPECT_EQ(view, nullptr);
    EXPECT_EQ(accel_object_get(o, 1, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_ERROR_DEVICE_LOST) << "still lost";
    EXPECT_EQ(rt.Usage(1).used, 0U);
    EXPECT_EQ(rt.Usage(1).replicas, 0U);
    EXPECT_EQ(GetBytes(o, kHost), x);
    EXPECT_EQ(GetBytes(o, 2), x) << "another device is untouched";
    EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
  }
  {
    // An object adopted from a buffer on gpu4 (so the store holds no stream there yet); gpu4 is lost at its next
    // operation after the buffer's creation: the stream a get to the host needs, which stream_create refuses with
    // DEVICE_LOST. The get says DEVICE_LOST too (it said INTERNAL, "no stream", and the chaos test counted a wrong
    // read), and the lost replica is gone.
    ScopedEnv faults("ACCEL_SIM_FAULTS", "device_lost_after=1,devices=gpu4");
    StoreRuntime rt(0, 0, "");
    const accel_buffer_desc_t bd = accel_test::BufferDesc(x.size());
    accel_buffer_t buffer = nullptr;
    ASSERT_EQ(accel_buffer_create(rt.Device(4), &bd, &buffer), ACCEL_SUCCESS) << accel_last_error();
    accel_object_put_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
    d.struct_size = sizeof(d);
    d.buffer = buffer;
    d.size = x.size();
    d.flags = ACCEL_OBJECT_PUT_ADOPT;
    accel_object_t o = nullptr;
    ASSERT_EQ(accel_object_put(rt.get(), &d, &o), ACCEL_SUCCESS) << accel_last_error();
    accel_buffer_t second = nullptr;  // the operation at which the loss fires
    ASSERT_EQ(accel_buffer_create(rt.Device(4), &bd, &second), ACCEL_ERROR_DEVICE_LOST);
    accel_object_view_t view = nullptr;
    EXPECT_EQ(accel_object_get(o, kHost, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_ERROR_DEVICE_LOST);
    EXPECT_NE(std::string(accel_last_error()).find("device 4"), std::string::npos) << accel_last_error();
    EXPECT_EQ(view, nullptr);
    EXPECT_EQ(rt.Usage(4).replicas, 0U) << "the lost replica is gone";
    EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
  }
  {
    // Every allocation on gpu2 fails.
    ScopedEnv faults("ACCEL_SIM_FAULTS", "alloc_fail=1,devices=gpu2");
    StoreRuntime rt(0, 0, "");
    accel_object_t o = nullptr;
    ASSERT_EQ(rt.Put(x, &o), ACCEL_SUCCESS);
    accel_object_view_t view = nullptr;
    EXPECT_EQ(accel_object_get(o, 2, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_ERROR_RESOURCE_EXHAUSTED);
    EXPECT_NE(std::string(accel_last_error()).find("failed by injection"), std::string::npos) << accel_last_error();
    EXPECT_EQ(rt.Usage(2).used, 0U);
    EXPECT_EQ(GetBytes(o, 3), x);
    EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
  }
  {
    // gpu3's streams fail their second operation, once: the second copy onto gpu3.
    ScopedEnv faults("ACCEL_SIM_FAULTS", "stream_error_after=1,devices=gpu3");
    StoreRuntime rt(0, 0, "");
    const auto y = Pattern(1 << 20, 121);
    accel_object_t o = nullptr;
    accel_object_t p = nullptr;
    ASSERT_EQ(rt.Put(x, &o), ACCEL_SUCCESS);
    ASSERT_EQ(rt.Put(y, &p), ACCEL_SUCCESS);
    EXPECT_EQ(GetBytes(o, 3), x);
    accel_object_view_t view = nullptr;
    EXPECT_EQ(accel_object_get(p, 3, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_ERROR_INTERNAL);
    EXPECT_NE(std::string(accel_last_error()).find("failed by injection"), std::string::npos) << accel_last_error();
    EXPECT_EQ(view, nullptr);
    EXPECT_EQ(rt.Usage(3).used, x.size()) << "the failed replica gave its room back";
    EXPECT_EQ(GetBytes(p, 3), y) << "the store's stream on gpu3 was cleared: the next get copies";
    for (auto* obj : {o, p}) EXPECT_EQ(accel_object_release(obj), ACCEL_SUCCESS);
  }
}

// What a task of the locality tests saw: the physical device it ran on; it waits for `gate` when one is set.
struct Seen {
  std::atomic<accel_physical_device_t> device{nullptr};  // written by the task, read by the test
  Gate* gate = nullptr;
};

// Submits a task of `share` of one device near `objects`, recording where it runs into `seen`.
accel_status_t SubmitNear(accel_runtime_t rt, double share, const std::vector<accel_object_t>& objects, Seen* seen,
                          accel_future_t* out) {
  const accel_resource_request_t request = Request(1, share);
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.function = [](accel_task_context_t ctx, void* p) {
    auto* s = static_cast<Seen*>(p);
    accel_physical_device_t device = nullptr;
    EXPECT_EQ(accel_task_context_get_physical_device(ctx, 0, &device), ACCEL_SUCCESS);
    s->device = device;
    if (s->gate != nullptr) s->gate->Wait();
    return ACCEL_SUCCESS;
  };
  d.user_data = seen;
  d.request = &request;
  d.near_objects = objects.empty() ? nullptr : objects.data();
  d.near_object_count = static_cast<uint32_t>(objects.size());
  return accel_task_submit(rt, &d, out);
}

// The physical device of runtime device `index`.
accel_physical_device_t PhysicalDevice(accel_runtime_t rt, uint32_t index) {
  accel_runtime_device_t rd{};
  rd.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE;
  rd.struct_size = sizeof(rd);
  EXPECT_EQ(accel_runtime_get_device(rt, index, &rd), ACCEL_SUCCESS) << accel_last_error();
  return rd.physical_device;
}

// A task naming an object (accel_task_desc_t::near_objects) is placed on a device holding a replica of it, and
// elsewhere (without waiting) when that device has no room.
TEST(ObjectStore, TasksNearAnObjectRunWhereItsReplicaIs) {
  StoreRuntime rt(0, 0, "");
  accel_object_t o = nullptr;
  ASSERT_EQ(rt.Put(Pattern(1 << 20, 130), &o), ACCEL_SUCCESS);
  EXPECT_EQ(GetBytes(o, 5), Pattern(1 << 20, 130));  // a replica on device 5
  const accel_physical_device_t holder = PhysicalDevice(rt.get(), 5);
  auto submit = [&](double share, Seen* seen, accel_future_t* out, bool near) {
    return SubmitNear(rt.get(), share, near ? std::vector<accel_object_t>{o} : std::vector<accel_object_t>{}, seen,
                      out);
  };
  Seen plain;
  Seen near;
  accel_future_t f1 = nullptr;
  accel_future_t f2 = nullptr;
  ASSERT_EQ(submit(0.5, &plain, &f1, false), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_future_wait(f1, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_NE(plain.device.load(), holder) << "without the object, the planner's first choice is another device";
  ASSERT_EQ(submit(0.5, &near, &f2, true), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_future_wait(f2, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(near.device.load(), holder) << "near its object's replica";

  // Device 5 full: a task near the object runs elsewhere, now.
  Gate gate;
  Seen blocker;
  blocker.gate = &gate;
  Seen elsewhere;
  accel_future_t f3 = nullptr;
  accel_future_t f4 = nullptr;
  ASSERT_EQ(submit(1.0, &blocker, &f3, true), ACCEL_SUCCESS);
  ASSERT_TRUE(Eventually([&] { return blocker.device.load() != nullptr; }));
  EXPECT_EQ(blocker.device.load(), holder);
  ASSERT_EQ(submit(1.0, &elsewhere, &f4, true), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(f4, 30ULL * 1000 * 1000 * 1000), ACCEL_SUCCESS) << "it did not wait for device 5";
  EXPECT_NE(elsewhere.device.load(), holder);
  gate.Open();
  EXPECT_EQ(accel_future_wait(f3, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);

  // Bad input names the field.
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.function = [](accel_task_context_t, void*) { return ACCEL_SUCCESS; };
  d.near_object_count = 1;
  accel_future_t bad = nullptr;
  EXPECT_EQ(accel_task_submit(rt.get(), &d, &bad), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->near_objects' is NULL"), std::string::npos)
      << accel_last_error();
  accel_object_t wrong = reinterpret_cast<accel_object_t>(rt.get());
  d.near_objects = &wrong;
  EXPECT_EQ(accel_task_submit(rt.get(), &d, &bad), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->near_objects[0]'"), std::string::npos) << accel_last_error();
  for (auto* f : {f1, f2, f3, f4}) EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
}

// Locality by bytes: a task near two objects goes to the device holding more of their bytes, and when that one has
// no room, to the other holder before any device that holds none.
TEST(ObjectStore, TasksNearSeveralObjectsGoWhereTheMostBytesAre) {
  StoreRuntime rt(0, 0, "");
  accel_object_t small = nullptr;
  accel_object_t big = nullptr;
  ASSERT_EQ(rt.Put(Pattern(1 << 20, 140), &small), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Put(Pattern(4 << 20, 141), &big), ACCEL_SUCCESS);
  EXPECT_FALSE(GetBytes(small, 2).empty());  // 1 MiB on device 2
  EXPECT_FALSE(GetBytes(big, 5).empty());    // 4 MiB on device 5
  const auto physical = [&](uint32_t index) { return PhysicalDevice(rt.get(), index); };
  auto submit = [&](Seen* seen, accel_future_t* out) { return SubmitNear(rt.get(), 1.0, {small, big}, seen, out); };
  Gate gate;
  Seen first;
  first.gate = &gate;
  accel_future_t f1 = nullptr;
  ASSERT_EQ(submit(&first, &f1), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_TRUE(Eventually([&] { return first.device.load() != nullptr; }));
  EXPECT_EQ(first.device.load(), physical(5)) << "the device with 4 MiB of its objects, not the one with 1 MiB";
  // Device 5 is taken whole: the next goes to the other holder.
  Seen second;
  accel_future_t f2 = nullptr;
  ASSERT_EQ(submit(&second, &f2), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(f2, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f2);
  EXPECT_EQ(second.device.load(), physical(2));
  gate.Open();
  EXPECT_EQ(accel_future_wait(f1, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  for (auto* f : {f1, f2}) EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  for (auto* o : {small, big}) EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
}

TEST(ObjectStore, BadInputIsRefusedWithTheFieldNamed) {
  StoreRuntime rt(0, 0, "");
  const auto bytes = Pattern(4096, 50);
  accel_object_t o = nullptr;
  accel_object_put_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
  d.struct_size = sizeof(d);
  auto expect = [&](accel_status_t want, const char* text) {
    EXPECT_EQ(accel_object_put(rt.get(), &d, &o), want);
    EXPECT_NE(std::string(accel_last_error()).find(text), std::string::npos) << accel_last_error();
    EXPECT_EQ(o, nullptr);
  };
  d.size = 4096;
  expect(ACCEL_ERROR_INVALID_ARGUMENT, "'desc->data' and 'desc->buffer' are both NULL");
  d.data = bytes.data();
  d.size = 0;
  expect(ACCEL_ERROR_INVALID_ARGUMENT, "'desc->size' is 0");
  d.size = 4096;
  d.buffer_offset = 8;
  expect(ACCEL_ERROR_INVALID_ARGUMENT, "'desc->buffer_offset' is set without 'desc->buffer'");
  d.buffer_offset = 0;
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  expect(ACCEL_ERROR_INVALID_ARGUMENT, "'desc' has stype");
  d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
  EXPECT_EQ(accel_object_put(rt.get(), nullptr, &o), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(accel_object_put(rt.get(), &d, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(accel_object_put(nullptr, &d, &o), ACCEL_ERROR_INVALID_HANDLE);
  ASSERT_EQ(accel_object_put(rt.get(), &d, &o), ACCEL_SUCCESS);
  accel_object_view_t view = nullptr;
  EXPECT_EQ(accel_object_get(o, 99, 0, &view), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'location' 99"), std::string::npos) << accel_last_error();
  EXPECT_EQ(accel_object_get(o, -2, 0, &view), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(accel_object_get(o, kHost, 0, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  uint32_t present = 0;
  EXPECT_EQ(accel_object_is_on_device(o, 8, &present), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(accel_object_get(reinterpret_cast<accel_object_t>(rt.get()), kHost, 0, &view), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("is a runtime handle, not an object handle"), std::string::npos)
      << accel_last_error();
  accel_object_store_usage_t u{};
  u.stype = ACCEL_STRUCTURE_TYPE_OBJECT_STORE_USAGE;
  u.struct_size = sizeof(u);
  EXPECT_EQ(accel_object_store_get_usage(rt.get(), 8, &u), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
  EXPECT_EQ(accel_object_get(o, kHost, 0, &view), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_object_retain(o), ACCEL_ERROR_INVALID_HANDLE);
}

TEST(ObjectStore, DestroyingTheRuntimeFreesTheStoreAndLeavesStaleHandles) {
  accel_object_t o = nullptr;
  accel_object_view_t view = nullptr;
  {
    StoreRuntime rt(0, 0, "");
    ASSERT_EQ(rt.Put(Pattern(1 << 20, 60), &o), ACCEL_SUCCESS);
    ASSERT_EQ(accel_object_get(o, 0, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_SUCCESS);
  }
  accel_object_view_t again = nullptr;
  EXPECT_EQ(accel_object_get(o, kHost, 0, &again), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("belongs to a runtime that was destroyed"), std::string::npos)
      << accel_last_error();
  accel_object_view_info_t info{};
  info.stype = ACCEL_STRUCTURE_TYPE_OBJECT_VIEW_INFO;
  info.struct_size = sizeof(info);
  EXPECT_EQ(accel_object_view_get_info(view, &info), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_object_view_release(view), ACCEL_SUCCESS) << "releasing is still allowed (and frees the handle)";
  EXPECT_EQ(accel_object_release(o), ACCEL_SUCCESS);
}

}  // namespace
