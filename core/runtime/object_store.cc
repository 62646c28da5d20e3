// The object store (docs/objectstore.md).
#include "object_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "agent/protocol.h"
#include "handles.h"
#include "names.h"

namespace accel::runtime {
namespace {

constexpr size_t kHostAlignment = 64;
constexpr uint32_t kSpillMagic = 0x4A424F41;  // "AOBJ"
constexpr size_t kIoChunk = size_t{1} << 26;  // 64 MiB per read/write call and per CRC update

struct SpillHeader {
  uint32_t magic = kSpillMagic;
  uint32_t crc = 0;
  uint64_t size = 0;
  uint64_t id = 0;
};

uint32_t Crc(const void* data, uint64_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = static_cast<const Bytef*>(data);
  for (uint64_t done = 0; done < size;) {
    const auto n = static_cast<uInt>(std::min<uint64_t>(size - done, kIoChunk));
    crc = crc32(crc, p + done, n);
    done += n;
  }
  return static_cast<uint32_t>(crc);
}

bool WriteAll(int fd, const void* data, uint64_t size) {
  const auto* p = static_cast<const char*>(data);
  for (uint64_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, p + done, std::min<uint64_t>(size - done, kIoChunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<uint64_t>(n);
  }
  return true;
}

bool ReadAll(int fd, void* data, uint64_t size) {
  auto* p = static_cast<char*>(data);
  for (uint64_t done = 0; done < size;) {
    const ssize_t n = ::read(fd, p + done, std::min<uint64_t>(size - done, kIoChunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<uint64_t>(n);
  }
  return true;
}

// Host memory for a replica: small ones from the heap; from 2 MiB on, an
// anonymous mapping aligned to 2 MiB with transparent huge pages asked for (a
// put of 800 MB then takes some 400 page faults, not 200,000). Null when out
// of memory.
constexpr uint64_t kHugePage = uint64_t{2} << 20;

void* HostAlloc(uint64_t size) {
  if (size > UINT64_MAX - 2 * kHugePage) return nullptr;  // the rounded length would wrap (and map nothing)
  if (size < kHugePage)
    return std::aligned_alloc(kHostAlignment, (size + kHostAlignment - 1) / kHostAlignment * kHostAlignment);
  const uint64_t length = (size + kHugePage - 1) / kHugePage * kHugePage;
  void* raw = ::mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) ::munmap(raw, aligned - start);
  const uintptr_t end = start + length + kHugePage;
  if (end > aligned + length) ::munmap(reinterpret_cast<void*>(aligned + length), end - (aligned + length));
  ::madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);  // a hint: without THP, plain pages
  return reinterpret_cast<void*>(aligned);
}

void HostFree(void* p, uint64_t size) {
  if (p == nullptr) return;
  if (size < kHugePage) {
    std::free(p);
    return;
  }
  ::munmap(p, (size + kHugePage - 1) / kHugePage * kHugePage);
}

uint64_t HostMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : uint64_t{8} << 30;
}

// Binds `tenant` to this thread for one scope.
class TenantScope {
 public:
  explicit TenantScope(accel_tenant_t tenant) { accel_thread_set_tenant(tenant, &previous_); }
  ~TenantScope() { accel_thread_set_tenant(previous_, nullptr); }
  TenantScope(const TenantScope&) = delete;
  TenantScope& operator=(const TenantScope&) = delete;

 private:
  accel_tenant_t previous_ = nullptr;
};

}  // namespace

ObjectStore::ObjectStore(accel_instance_t instance, const Resources& resources) : instance_(instance) {
  for (const Resource& r : resources.devices) {
    devices_.push_back(r.path);
    device_labels_.push_back(r.label);
  }
  places_.resize(devices_.size() + 1);
  idle_streams_.resize(devices_.size());
}

accel_status_t ObjectStore::Create(accel_instance_t instance, const Resources& resources, Options options,
                                   std::unique_ptr<ObjectStore>* out, std::string* why) {
  std::unique_ptr<ObjectStore> store(new ObjectStore(instance, resources));
  static std::atomic<uint64_t> next_serial{1};
  store->serial_ = next_serial.fetch_add(1, std::memory_order_relaxed);
  store->places_[0].capacity = options.host_capacity > 0 ? options.host_capacity : HostMemory() / 4;
  std::vector<accel_tenant_limit_t> limits;
  for (size_t i = 0; i < resources.devices.size(); ++i) {
    const uint64_t all = resources.devices[i].memory;
    const uint64_t capacity = options.device_capacity > 0 ? std::min(options.device_capacity, all) : all / 2;
    store->places_[i + 1].capacity = capacity;
    limits.push_back({resources.devices[i].physical, capacity});
  }
  std::string dir = options.spill_directory;
  if (dir.empty()) {
    const char* env = std::getenv("ACCEL_SPILL_DIR");
    if (env != nullptr && env[0] != '\0') {
      dir = env;
    } else {
      const char* tmp = std::getenv("TMPDIR");
      dir = fmt::format("{}/accel-spill-{}-{}", tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp", getpid(),
                        store->serial_);
      store->default_spill_directory_ = true;
    }
  }
  store->spill_directory_ = dir;
  accel_tenant_desc_t td{};
  td.stype = ACCEL_STRUCTURE_TYPE_TENANT_DESC;
  td.struct_size = sizeof(td);
  td.name = "accel-runtime: the object store";
  td.limits = limits.data();
  td.limit_count = static_cast<uint32_t>(limits.size());
  td.other_limit = 0;
  if (accel_tenant_create(instance, &td, &store->tenant_) != ACCEL_SUCCESS) {
    *why = fmt::format("the object store's tenant could not be made: {}", accel_last_error());
    return ACCEL_ERROR_INTERNAL;
  }
  *out = std::move(store);
  return ACCEL_SUCCESS;
}

ObjectStore::~ObjectStore() {
  Shutdown();
  if (tenant_ != nullptr) accel_tenant_destroy(tenant_);
}

void ObjectStore::Shutdown() {
  std::vector<accel_stream_t> streams;
  {
    std::unique_lock lock(mutex_);
    if (shut_down_) return;
    shut_down_ = true;
    filled_.notify_all();  // gets waiting for another's transfer give up
    // Puts and gets under way finish first: their copies use replicas and streams freed here.
    idle_.wait(lock, [&] { return operations_ == 0; });
    for (auto& [id, weak] : objects_) {
      if (auto object = weak.lock()) {
        FreeAll(*object);
        if (object->lineage) {
          lineages_to_free_.push_back(std::move(object->lineage));
          deferred_pending_.store(true, std::memory_order_release);
        }
      }
    }
    objects_.clear();
    for (auto& idle : idle_streams_) {  // no operation holds one now (operations_ is 0)
      streams.insert(streams.end(), idle.begin(), idle.end());
      idle.clear();
    }
  }
  filled_.notify_all();
  RunDeferred();
  for (accel_stream_t s : streams) {
    if (s != nullptr) accel_stream_destroy(s);
  }
  if (made_spill_directory_) ::rmdir(spill_directory_.c_str());
  link_.reset();  // the connection closes: the agent drops every reference this store held
}

std::string ObjectStore::PlaceName(int32_t location) const {
  if (location < 0) return "the host";
  return fmt::format("device {} ({})", location, device_labels_[static_cast<size_t>(location)]);
}

bool ObjectStore::ValidLocation(int32_t location) const {
  return location == ACCEL_OBJECT_LOCATION_HOST || (location >= 0 && static_cast<size_t>(location) < devices_.size());
}

accel_stream_t ObjectStore::TakeStream(uint32_t device, std::string* why, accel_status_t* status) {
  // Under the lock.
  std::vector<accel_stream_t>& idle = idle_streams_[device];
  if (!idle.empty()) {
    accel_stream_t stream = idle.back();
    idle.pop_back();
    return stream;
  }
  idle.reserve(idle.size() + 1);  // the give-back cannot fail
  accel_stream_t stream = nullptr;
  *status = accel_stream_create(devices_[device], nullptr, &stream);
  if (*status != ACCEL_SUCCESS) {
    // Its status goes on: a lost device's stream_create says DEVICE_LOST, which the callers handle as a loss.
    *why = fmt::format("no stream on {}: {}", PlaceName(static_cast<int32_t>(device)), accel_last_error());
    return nullptr;
  }
  return stream;
}

void ObjectStore::GiveBackStream(uint32_t device, accel_stream_t stream, bool failed) {
  if (stream == nullptr) return;
  if (failed) {  // a lost device stays lost: its stream keeps failing, as a new one would
    static_cast<void>(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
    static_cast<void>(accel_stream_clear_error(stream));
  }
  std::lock_guard lock(mutex_);
  idle_streams_[device].push_back(stream);
}

void ObjectStore::FreeReplica(Object& object, int32_t location) {
  auto it = object.replicas.find(location);
  if (it == object.replicas.end()) return;
  Replica& r = it->second;
  if (r.release != nullptr) {
    releases_to_run_.push_back({r.release, r.release_user_data, r.host});  // adopted: given back (RunDeferred)
    deferred_pending_.store(true, std::memory_order_release);
  } else if (r.mapped) {
    ::munmap(r.host, object.size);
  } else if (r.host != nullptr) {
    HostFree(r.host, object.size);
  }
  if (r.buffer != nullptr) accel_buffer_destroy(r.buffer);
  Place& place = PlaceAt(location);
  if (r.charged) {
    place.used -= object.size;
    --place.replicas;
  }
  place.lru.erase({r.last_use, object.id});
  object.replicas.erase(it);
}

void ObjectStore::MaybeFree(Object& object) {
  if (!object.dropped || object.views > 0 || shut_down_) return;
  for (const auto& [where, r] : object.replicas) {
    if (r.pins > 0) return;  // a transfer still uses it: its end frees the object
  }
  FreeAll(object);
  objects_.erase(object.id);
  if (object.lineage) {
    lineages_to_free_.push_back(std::move(object.lineage));
    deferred_pending_.store(true, std::memory_order_release);
  }
}

void ObjectStore::RunDeferred() {
  if (!deferred_pending_.load(std::memory_order_acquire)) return;  // the common case: no lock
  std::vector<std::shared_ptr<Lineage>> lineages;
  std::vector<Release> releases;
  {
    std::lock_guard lock(mutex_);
    deferred_pending_.store(false, std::memory_order_relaxed);
    lineages.swap(lineages_to_free_);
    releases.swap(releases_to_run_);
  }
  lineages.clear();  // here: their destructors may release user data and object references
  for (const Release& r : releases) r.release(r.user_data, r.data);
}

bool ObjectStore::DeviceLost(uint32_t device) const {
  uint64_t free_bytes = 0;
  return accel_device_get_memory_info(devices_[device], &free_bytes, nullptr) == ACCEL_ERROR_DEVICE_LOST;
}

bool RetainObject(Object& object) {
  // Never back from 0: the last release is under way.
  uint32_t n = object.references.load();
  do {
    if (n == 0) return false;
  } while (!object.references.compare_exchange_weak(n, n + 1));
  return true;
}

void ReleaseObject(const HeldObject& held, ObjectStore* store) {
  uint32_t n = held.object->references.load();
  do {
    if (n == 0) return;
  } while (!held.object->references.compare_exchange_weak(n, n - 1));
  if (n != 1) return;
  HandleTable::Get().Remove(held.handle);
  if (store != nullptr) store->Drop(held.object);
}

bool ObjectStore::SetLineage(const std::shared_ptr<Object>& object, const std::shared_ptr<Lineage>& lineage) {
  std::lock_guard lock(mutex_);
  if (object->lineage || object->dropped || shut_down_) return false;
  object->lineage = lineage;
  return true;
}

void ObjectStore::EndRemake(const std::shared_ptr<Object>& target, const std::shared_ptr<Object>& made,
                            accel_status_t status, const std::string& message) {
  std::lock_guard lock(mutex_);
  Object& o = *target;
  o.remaking = false;
  filled_.notify_all();
  const std::string producer = o.lineage ? o.lineage->producer() : std::string("its task");
  if (status != ACCEL_SUCCESS) {
    o.lost = fmt::format("{}; making it again by re-running {} failed: {}", o.lost, producer, message);
    return;
  }
  if (!made) {
    o.lost = fmt::format("{}; {} ran again but set no result object", o.lost, producer);
    return;
  }
  if (made->size != o.size) {
    o.lost = fmt::format("{}; {} ran again but its result has {} bytes, not {}", o.lost, producer, made->size, o.size);
    return;
  }
  // The remade object's copies become the target's (the places' figures do not change: the bytes stay where they
  // are); the remade object keeps what is in use.
  for (auto it = made->replicas.begin(); it != made->replicas.end();) {
    if (it->second.Usable() && it->second.pins == 0 && o.replicas.count(it->first) == 0) {
      o.replicas.emplace(it->first, it->second);
      auto& lru = PlaceAt(it->first).lru;
      lru.erase({it->second.last_use, made->id});
      lru.emplace(it->second.last_use, o.id);
      it = made->replicas.erase(it);
    } else {
      ++it;
    }
  }
  if (o.spill_path.empty() && !made->spill_path.empty()) {
    o.spill_path = std::move(made->spill_path);
    o.spill_crc = made->spill_crc;
    o.spill_id = made->spill_id;
    made->spill_path.clear();
  }
}

void ObjectStore::FreeAll(Object& object) {
  while (!object.replicas.empty()) FreeReplica(object, object.replicas.begin()->first);
  if (!object.spill_path.empty()) {
    ::unlink(object.spill_path.c_str());
    object.spill_path.clear();
  }
}

accel_status_t ObjectStore::Copy(int32_t from, const Replica& src, int32_t to, const Replica& dst, uint64_t size,
                                 std::string* why) {
  if (from < 0 && to < 0) {
    std::memcpy(dst.host, src.host, size);
    return ACCEL_SUCCESS;
  }
  const int32_t on = to >= 0 ? to : from;  // the stream's device
  accel_stream_t stream = nullptr;
  accel_status_t status = ACCEL_SUCCESS;
  {
    std::lock_guard lock(mutex_);
    stream = TakeStream(static_cast<uint32_t>(on), why, &status);
  }
  if (stream == nullptr) return status;
  if (from < 0) {
    status = accel_stream_copy_host_to_buffer(stream, src.host, dst.buffer, 0, size);
  } else if (to < 0) {
    status = accel_stream_copy_buffer_to_host(stream, src.buffer, 0, dst.host, size);
  } else {
    // A peer copy where the two devices share a backend; else staged through the host.
    status = accel_stream_copy_buffer(stream, src.buffer, 0, dst.buffer, 0, size);
    if (status == ACCEL_ERROR_INVALID_ARGUMENT || status == ACCEL_ERROR_UNSUPPORTED) {
      GiveBackStream(static_cast<uint32_t>(on), stream, false);  // refused at once: nothing was enqueued
      void* staging = HostAlloc(size);
      if (staging == nullptr) {
        *why = fmt::format("no host memory to stage {} from {} to {}", info::HumanBytes(size), PlaceName(from),
                           PlaceName(to));
        return ACCEL_ERROR_RESOURCE_EXHAUSTED;
      }
      Replica host;
      host.host = staging;
      status = Copy(from, src, -1, host, size, why);
      if (status == ACCEL_SUCCESS) status = Copy(-1, host, to, dst, size, why);
      HostFree(staging, size);
      return status;
    }
  }
  if (status == ACCEL_SUCCESS) status = accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE);
  if (status != ACCEL_SUCCESS) {
    *why = fmt::format("copying {} from {} to {}: {}", info::HumanBytes(size), PlaceName(from), PlaceName(to),
                       accel_last_error());
  }
  GiveBackStream(static_cast<uint32_t>(on), stream, status != ACCEL_SUCCESS);
  return status;
}

accel_status_t ObjectStore::WriteSpill(Object& object, const Replica& host, std::string* why) {
  if (!made_spill_directory_) {
    if (::mkdir(spill_directory_.c_str(), 0700) == 0) {
      made_spill_directory_ = true;
    } else if (errno != EEXIST) {
      *why = fmt::format("spill directory '{}' could not be made: {}", spill_directory_, std::strerror(errno));
      return ACCEL_ERROR_RESOURCE_EXHAUSTED;
    } else if (default_spill_directory_) {
      // The default name in a shared folder can be taken by another user first (to delete or block the spill
      // files): used only when it is this user's own private directory, not a link.
      struct stat st {};
      if (::lstat(spill_directory_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
          (st.st_mode & 077) != 0) {
        *why = fmt::format(
            "spill directory '{}' existed already and is not this user's private directory (a directory of uid {} "
            "with mode 0700): refused; set ACCEL_SPILL_DIR or the store's spill_directory",
            spill_directory_, ::geteuid());
        return ACCEL_ERROR_RESOURCE_EXHAUSTED;
      }
    }
  }
  // Unique per process, store and object: stores sharing a directory never meet.
  const std::string path = fmt::format("{}/object-{}-{}-{}.bin", spill_directory_, getpid(), serial_, object.id);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    *why = fmt::format("spill file '{}' could not be made: {}", path, std::strerror(errno));
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  }
  SpillHeader header;
  header.size = object.size;
  header.id = object.id;
  header.crc = Crc(host.host, object.size);
  const bool ok = WriteAll(fd, &header, sizeof(header)) && WriteAll(fd, host.host, object.size) && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    *why =
        fmt::format("spill file '{}' could not be written (the copy in memory stays): {}", path, std::strerror(saved));
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  }
  object.spill_path = path;
  object.spill_crc = header.crc;
  object.spill_id = header.id;
  return ACCEL_SUCCESS;
}

accel_status_t ObjectStore::ReadSpill(const Object& object, void* into, std::string* why) const {
  const int fd = ::open(object.spill_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = fmt::format("{} is only in spill file '{}', which cannot be opened: {}", object.name, object.spill_path,
                       std::strerror(errno));
    return ACCEL_ERROR_NOT_FOUND;
  }
  SpillHeader header;
  const bool ok = ReadAll(fd, &header, sizeof(header)) && header.magic == kSpillMagic && header.size == object.size &&
                  header.id == object.spill_id && ReadAll(fd, into, object.size);
  ::close(fd);
  if (!ok) {
    *why = fmt::format("{}: spill file '{}' is truncated or not this object's", object.name, object.spill_path);
    return ACCEL_ERROR_NOT_FOUND;
  }
  const uint32_t crc = Crc(into, object.size);
  if (crc != object.spill_crc || crc != header.crc) {
    *why = fmt::format("{}: spill file '{}' fails its checksum (crc32 {:08x}, written {:08x}): it was changed on disk",
                       object.name, object.spill_path, crc, object.spill_crc);
    return ACCEL_ERROR_NOT_FOUND;
  }
  return ACCEL_SUCCESS;
}

void ObjectStore::Touch(const Object& o, int32_t location, Replica& r, uint64_t when) {
  auto& lru = PlaceAt(location).lru;
  lru.erase({r.last_use, o.id});
  r.last_use = when;
  lru.emplace(when, o.id);
}

bool ObjectStore::MakeRoom(int32_t location, uint64_t bytes, std::unique_lock<std::mutex>& lock, std::string* why) {
  Place& place = PlaceAt(location);
  if (bytes > place.capacity) {
    *why = fmt::format("{} is larger than the store's capacity on {} ({})", info::HumanBytes(bytes),
                       PlaceName(location), info::HumanBytes(place.capacity));
    return false;
  }
  // Victims whose last copy could not be moved out (the host full, the spill disk full): the next one is tried (it
  // may have another copy to drop); when none is left, the first such failure is the reason.
  std::vector<const Object*> unmovable;
  std::string first_failure;
  const auto failed = [&](const Object& o, std::string reason) {
    unmovable.push_back(&o);
    if (first_failure.empty()) first_failure = std::move(reason);
  };
  while (place.used + bytes > place.capacity) {
    // The least recently used replica here that nothing uses (not viewed, not being copied, not moving).
    std::shared_ptr<Object> victim;
    for (auto e = place.lru.begin(); e != place.lru.end();) {
      const auto found = objects_.find(e->second);
      std::shared_ptr<Object> object = found != objects_.end() ? found->second.lock() : nullptr;
      const Replica* r = nullptr;
      if (object) {
        auto it = object->replicas.find(location);
        if (it != object->replicas.end() && it->second.last_use == e->first) r = &it->second;
      }
      if (r == nullptr) {
        e = place.lru.erase(e);  // stale: gone, or used again since (a later entry stands for it)
        continue;
      }
      if (!r->Usable() || r->pins > 0 || r->mapped ||
          std::find(unmovable.begin(), unmovable.end(), object.get()) != unmovable.end()) {
        ++e;
        continue;
      }
      victim = std::move(object);
      break;
    }
    if (!victim) {
      *why = !first_failure.empty()
                 ? first_failure
                 : fmt::format(
                       "no room on {} for {}: {} of its {} hold replicas in use (viewed, being copied or "
                       "moving)",
                       PlaceName(location), info::HumanBytes(bytes), info::HumanBytes(place.used),
                       info::HumanBytes(place.capacity));
      return false;
    }
    Object& o = *victim;
    bool elsewhere = !o.spill_path.empty();
    for (const auto& [where, r] : o.replicas) elsewhere = elsewhere || (where != location && r.Usable());
    if (elsewhere) {
      FreeReplica(o, location);
      ++place.evicted;
      continue;
    }
    if (location >= 0) {
      // A device's last copy moves to the host. While it moves, gets treat it as not there (they wait for the
      // move, then find the host copy), and the host copy is reserved (counted, filling) before the copy starts.
      o.replicas.at(location).moving = true;
      std::string host_why;
      const accel_status_t reserved = Reserve(o, -1, lock, &host_why);
      if (reserved != ACCEL_SUCCESS) {
        o.replicas.at(location).moving = false;
        filled_.notify_all();
        failed(o, fmt::format("no room on {} for {}: moving {} to the host failed: {}", PlaceName(location),
                              info::HumanBytes(bytes), o.name, host_why));
        MaybeFree(o);  // released meanwhile: its last reference went while the move held it
        continue;
      }
      const Replica src = o.replicas.at(location);
      const Replica dst = o.replicas.at(-1);
      std::string copy_why;
      lock.unlock();
      const accel_status_t status = Copy(location, src, -1, dst, o.size, &copy_why);
      lock.lock();
      Replica& host = o.replicas.at(-1);
      host.pins = 0;
      if (status != ACCEL_SUCCESS) {
        FreeReplica(o, -1);
        o.replicas.at(location).moving = false;
        filled_.notify_all();
        failed(o,
               fmt::format("no room on {}: moving {} to the host failed: {}", PlaceName(location), o.name, copy_why));
        MaybeFree(o);  // released meanwhile: its replica and accounting go now, not never
        continue;
      }
      host.ready = true;
      Touch(o, -1, host, src.last_use);
      FreeReplica(o, location);  // pinned by no one: `moving` kept gets and victims away
      ++place.moved_out;
      filled_.notify_all();
      MaybeFree(o);
      continue;
    }
    // The host's last copy goes to a spill file (under the lock: see object_store.h).
    std::string spill_why;
    if (WriteSpill(o, o.replicas.at(location), &spill_why) != ACCEL_SUCCESS) {
      failed(o, fmt::format("no room on the host for {}: {}", info::HumanBytes(bytes), spill_why));
      continue;
    }
    FreeReplica(o, location);
    ++place.moved_out;
  }
  return true;
}

accel_status_t ObjectStore::Reserve(Object& object, int32_t location, std::unique_lock<std::mutex>& lock,
                                    std::string* why, const Replica* adopted) {
  // A filling placeholder first: gets arriving while room is made (which may unlock) wait for this transfer
  // instead of starting their own.
  if (object.replicas.count(location) != 0) {
    *why = fmt::format("{} already has a replica on {}", object.name, PlaceName(location));
    return ACCEL_ERROR_INTERNAL;
  }
  Replica& placeholder = object.replicas[location];
  placeholder.pins = 1;
  auto give_up = [&] {
    object.replicas.erase(location);
    filled_.notify_all();
  };
  if (!MakeRoom(location, object.size, lock, why)) {
    give_up();
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  }
  Replica& r = object.replicas.at(location);
  if (adopted != nullptr) {
    r.host = adopted->host;
    r.buffer = adopted->buffer;
    r.release = adopted->release;
    r.release_user_data = adopted->release_user_data;
  } else if (location < 0) {
    r.host = HostAlloc(object.size);
    if (r.host == nullptr) {
      give_up();
      *why = fmt::format("no host memory for {} of {}", info::HumanBytes(object.size), object.name);
      return ACCEL_ERROR_RESOURCE_EXHAUSTED;
    }
  } else {
    accel_buffer_desc_t bd{};
    bd.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
    bd.struct_size = sizeof(bd);
    bd.size = object.size;
    bd.memory_kind = ACCEL_MEMORY_KIND_DEVICE;
    TenantScope as_store(tenant_);
    const accel_status_t made = accel_buffer_create(devices_[static_cast<size_t>(location)], &bd, &r.buffer);
    if (made != ACCEL_SUCCESS) {
      *why = fmt::format("no memory on {} for {} of {}: {}", PlaceName(location), info::HumanBytes(object.size),
                         object.name, accel_last_error());
      give_up();
      // A lost device says so; anything else is a lack of memory there.
      return made == ACCEL_ERROR_DEVICE_LOST ? ACCEL_ERROR_DEVICE_LOST : ACCEL_ERROR_RESOURCE_EXHAUSTED;
    }
  }
  Touch(object, location, r, ++clock_);
  r.charged = true;
  Place& place = PlaceAt(location);
  place.used += object.size;
  ++place.replicas;
  return ACCEL_SUCCESS;
}

accel_status_t ObjectStore::Put(const accel_object_put_desc_t& d, std::shared_ptr<Object>* out, std::string* why) {
  int32_t location = -1;
  if (d.buffer != nullptr) {
    accel_buffer_properties_t props{};
    props.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
    props.struct_size = sizeof(props);
    if (accel_buffer_get_properties(d.buffer, &props) != ACCEL_SUCCESS) {
      *why = fmt::format("'desc->buffer': {}", accel_last_error());
      return ACCEL_ERROR_INVALID_HANDLE;
    }
    if (d.buffer_offset > props.size || d.size > props.size - d.buffer_offset) {
      *why = fmt::format("'desc->buffer_offset' {} + 'desc->size' {} is past the buffer's {} bytes", d.buffer_offset,
                         d.size, props.size);
      return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < devices_.size() && location < 0; ++i) {
      if (devices_[i] == props.device) location = static_cast<int32_t>(i);
    }
    if (location < 0) {
      *why =
          "'desc->buffer' is a buffer of no device of the runtime (its devices are those of accel_runtime_get_device)";
      return ACCEL_ERROR_INVALID_ARGUMENT;
    }
  }
  auto object = std::make_shared<Object>();
  object->size = d.size;
  std::unique_lock lock(mutex_);
  Operation operation(*this);
  if (shut_down_) {
    *why = "the runtime is being destroyed";
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  object->id = next_id_++;
  object->name = d.name != nullptr && d.name[0] != '\0' ? fmt::format("object {} ('{}')", object->id, d.name)
                                                        : fmt::format("object {}", object->id);
  objects_[object->id] = object;
  const bool adopt = (d.flags & ACCEL_OBJECT_PUT_ADOPT) != 0;
  Replica given;
  given.host = const_cast<void*>(d.data);  // never written: the store only reads replicas
  given.buffer = d.buffer;
  given.release = d.release_data;
  given.release_user_data = d.release_user_data;
  const accel_status_t reserved = Reserve(*object, location, lock, why, adopt ? &given : nullptr);
  if (reserved != ACCEL_SUCCESS) {
    objects_.erase(object->id);
    return reserved;
  }
  if (adopt) {
    // The caller's memory is the replica: nothing to copy.
    Replica& r = object->replicas.at(location);
    r.pins = 0;
    r.ready = true;
    filled_.notify_all();
    *out = std::move(object);
    return ACCEL_SUCCESS;
  }
  const Replica dst = object->replicas.at(location);
  accel_status_t status = ACCEL_SUCCESS;
  accel_stream_t stream = location >= 0 ? TakeStream(static_cast<uint32_t>(location), why, &status) : nullptr;
  lock.unlock();
  if (location < 0) {
    std::memcpy(dst.host, d.data, d.size);
  } else {
    if (stream != nullptr) {
      status = accel_stream_copy_buffer(stream, d.buffer, d.buffer_offset, dst.buffer, 0, d.size);
    }
    if (status == ACCEL_SUCCESS) status = accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE);
    if (status != ACCEL_SUCCESS && why->empty()) *why = fmt::format("copying 'desc->buffer': {}", accel_last_error());
    GiveBackStream(static_cast<uint32_t>(location), stream, status != ACCEL_SUCCESS);
  }
  lock.lock();
  Replica& r = object->replicas.at(location);
  r.pins = 0;
  if (status != ACCEL_SUCCESS) {
    FreeReplica(*object, location);
    objects_.erase(object->id);
    filled_.notify_all();
    return status;
  }
  r.ready = true;
  filled_.notify_all();
  *out = std::move(object);
  return ACCEL_SUCCESS;
}

accel_status_t ObjectStore::Stream(int fd, const std::string& path, uint64_t offset, Object& object, int32_t location,
                                   const Replica& dst, uint64_t chunk, void* const staging[2],
                                   const std::function<void(uint64_t)>& progress, std::string* why) {
  auto read_chunk = [&](void* into, uint64_t at, uint64_t n) {
    auto* p = static_cast<char*>(into);
    for (uint64_t done = 0; done < n;) {
      const ssize_t got = ::pread(fd, p + done, n - done, static_cast<off_t>(at + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        *why = got == 0
                   ? fmt::format("'{}' ended at byte {} while {} more were to be read (it shrank?)", path, at + done,
                                 n - done)
                   : fmt::format("'{}': reading {} bytes at {}: {}", path, n - done, at + done, std::strerror(errno));
        return false;
      }
      done += static_cast<uint64_t>(got);
    }
    progress(n);
    return true;
  };
  if (location < 0) {
    // Straight into the host replica.
    for (uint64_t done = 0; done < object.size; done += chunk) {
      const uint64_t n = std::min(chunk, object.size - done);
      if (!read_chunk(static_cast<char*>(dst.host) + done, offset + done, n)) return ACCEL_ERROR_NOT_FOUND;
    }
    return ACCEL_SUCCESS;
  }
  accel_stream_t stream = nullptr;
  accel_status_t status = ACCEL_SUCCESS;
  {
    std::lock_guard lock(mutex_);
    stream = TakeStream(static_cast<uint32_t>(location), why, &status);
  }
  if (stream == nullptr) return status;
  accel_event_t events[2] = {nullptr, nullptr};
  bool recorded[2] = {false, false};
  for (auto& e : events) {
    if (status == ACCEL_SUCCESS) status = accel_event_create(devices_[static_cast<size_t>(location)], nullptr, &e);
  }
  if (status != ACCEL_SUCCESS) *why = fmt::format("no event on {}: {}", PlaceName(location), accel_last_error());
  // Chunk k is read into staging[k % 2] once the copy of chunk k - 2 out of it is done: reads overlap copies.
  for (uint64_t done = 0, k = 0; status == ACCEL_SUCCESS && done < object.size; done += chunk, ++k) {
    const size_t slot = k % 2;
    const uint64_t n = std::min(chunk, object.size - done);
    if (recorded[slot]) status = accel_event_synchronize(events[slot], ACCEL_TIMEOUT_INFINITE);
    if (status != ACCEL_SUCCESS) break;
    if (!read_chunk(staging[slot], offset + done, n)) {
      status = ACCEL_ERROR_NOT_FOUND;
      break;
    }
    status = accel_stream_copy_host_to_buffer(stream, staging[slot], dst.buffer, done, n);
    if (status == ACCEL_SUCCESS) status = accel_stream_record_event(stream, events[slot]);
    recorded[slot] = true;
  }
  // The staging buffers are reused or freed after this: every copy out of them ends first.
  const accel_status_t synced = accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE);
  if (status == ACCEL_SUCCESS && synced != ACCEL_SUCCESS) status = synced;
  if (status != ACCEL_SUCCESS && status != ACCEL_ERROR_NOT_FOUND && why->empty()) {
    *why = fmt::format("copying '{}' to {}: {}", path, PlaceName(location), accel_last_error());
  }
  GiveBackStream(static_cast<uint32_t>(location), stream, synced != ACCEL_SUCCESS);
  for (auto* e : events) {
    if (e != nullptr) accel_event_destroy(e);
  }
  return status;
}

accel_status_t ObjectStore::PutFile(const accel_object_file_desc_t& d, std::vector<std::shared_ptr<Object>>* out,
                                    std::string* why) {
  const std::string path = d.path;
  const int fd = ::open(d.path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = fmt::format("'desc->path' ('{}') cannot be opened: {}", path, std::strerror(errno));
    return ACCEL_ERROR_NOT_FOUND;
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *why = fmt::format("'desc->path' ('{}') is not a regular file", path);
    return ACCEL_ERROR_NOT_FOUND;
  }
  const auto file_size = static_cast<uint64_t>(st.st_size);
  if (d.offset > file_size) {
    *why = fmt::format("'desc->offset' {} is past the end of '{}' ({} bytes)", d.offset, path, file_size);
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  const uint64_t size = d.size != 0 ? d.size : file_size - d.offset;
  if (d.size > file_size - d.offset) {
    *why = fmt::format("'desc->offset' {} + 'desc->size' {} is past the end of '{}' ({} bytes)", d.offset, d.size, path,
                       file_size);
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  // Where each part goes: `locations`, or one part on the host.
  const std::vector<int32_t> locations = d.locations != nullptr
                                             ? std::vector<int32_t>(d.locations, d.locations + d.location_count)
                                             : std::vector<int32_t>{ACCEL_OBJECT_LOCATION_HOST};
  const auto parts = static_cast<uint32_t>(locations.size());
  if (size == 0 || parts > size) {
    *why = fmt::format("'{}' has {} bytes from 'desc->offset' {}: too few for {} part(s)", path, size, d.offset, parts);
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  // No larger than the range: a chunk_size near 2^64 must not size the staging buffers (HostAlloc refuses those).
  const uint64_t chunk = std::min(d.chunk_size != 0 ? d.chunk_size : uint64_t{8} << 20, size);
  ::posix_fadvise(fd, static_cast<off_t>(d.offset), static_cast<off_t>(size), POSIX_FADV_SEQUENTIAL);

  // Every part reserved first (all or none), then streamed without the lock.
  std::vector<std::shared_ptr<Object>> objects;
  std::unique_lock lock(mutex_);
  Operation operation(*this);
  auto undo = [&] {
    for (auto& o : objects) {
      for (auto& [where, r] : o->replicas) r.pins = 0;
      FreeAll(*o);
      objects_.erase(o->id);
    }
    filled_.notify_all();
  };
  if (shut_down_) {
    *why = "the runtime is being destroyed";
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  for (uint32_t i = 0; i < parts; ++i) {
    const int32_t location = locations[i];
    auto object = std::make_shared<Object>();
    object->size = i + 1 < parts ? size / parts : size - (size / parts) * (parts - 1);
    object->id = next_id_++;
    const std::string label = d.name != nullptr && d.name[0] != '\0' ? d.name : path;
    object->name = parts == 1 ? fmt::format("object {} ('{}')", object->id, label)
                              : fmt::format("object {} ('{}', part {} of {})", object->id, label, i + 1, parts);
    objects_[object->id] = object;
    objects.push_back(object);
    const accel_status_t reserved = Reserve(*object, location, lock, why);
    if (reserved != ACCEL_SUCCESS) {
      objects.back()->replicas.clear();  // Reserve gave its placeholder up already
      undo();
      return reserved;
    }
  }
  std::vector<Replica> targets;
  for (uint32_t i = 0; i < parts; ++i) targets.push_back(objects[i]->replicas.at(locations[i]));
  lock.unlock();
  void* staging[2] = {HostAlloc(chunk), HostAlloc(chunk)};
  accel_status_t status =
      staging[0] != nullptr && staging[1] != nullptr ? ACCEL_SUCCESS : ACCEL_ERROR_RESOURCE_EXHAUSTED;
  if (status != ACCEL_SUCCESS)
    *why = fmt::format("no host memory for two staging buffers of {}", info::HumanBytes(chunk));
  uint64_t done = 0;
  const std::function<void(uint64_t)> progress = [&](uint64_t n) {
    done += n;
    if (d.progress != nullptr) d.progress(d.user_data, done, size);
  };
  uint64_t at = d.offset;
  for (uint32_t i = 0; i < parts && status == ACCEL_SUCCESS; ++i) {
    status = Stream(fd, path, at, *objects[i], locations[i], targets[i], chunk, staging, progress, why);
    at += objects[i]->size;
  }
  for (void* p : staging) HostFree(p, chunk);
  lock.lock();
  if (status != ACCEL_SUCCESS) {
    undo();
    return status;
  }
  for (uint32_t i = 0; i < parts; ++i) {
    Replica& r = objects[i]->replicas.at(locations[i]);
    r.pins = 0;
    r.ready = true;
  }
  filled_.notify_all();
  *out = std::move(objects);
  return ACCEL_SUCCESS;
}

accel_status_t ObjectStore::Get(const std::shared_ptr<Object>& object, int32_t location, uint64_t timeout_ns, View* out,
                                std::string* why) {
  Object& o = *object;
  const auto deadline =
      timeout_ns == ACCEL_TIMEOUT_INFINITE
          ? std::chrono::steady_clock::time_point::max()
          : std::chrono::steady_clock::now() + std::chrono::nanoseconds(std::min<uint64_t>(timeout_ns, INT64_MAX / 2));
  std::unique_lock lock(mutex_);
  Operation operation(*this);
  bool remade = false;  // this get started, or waited for, one remake of the object through its lineage
  for (;;) {
    if (shut_down_) {
      *why = "the runtime is being destroyed";
      return ACCEL_ERROR_FAILED_PRECONDITION;
    }
    auto it = o.replicas.find(location);
    if (it != o.replicas.end() && it->second.Usable()) {
      Replica& r = it->second;
      ++r.pins;
      ++o.views;
      Touch(o, location, r, ++clock_);
      out->object = object;
      out->location = location;
      out->host = r.host;
      out->buffer = r.buffer;
      return ACCEL_SUCCESS;
    }
    // Filling, moving away, or being made again by its task: wait for that to end, then look again.
    bool busy = it != o.replicas.end() || o.remaking;
    // A source that is moving (a device's last copy on its way to the host) has nothing to copy from yet.
    for (const auto& [where, r] : o.replicas) busy = busy || (r.moving && !r.Usable());
    if (busy) {
      if (filled_.wait_until(lock, deadline) == std::cv_status::timeout &&
          std::chrono::steady_clock::now() >= deadline) {
        *why = fmt::format("{} did not arrive on {} within {} ns ({} goes on)", o.name, PlaceName(location), timeout_ns,
                           o.remaking ? "making it again" : "the transfer");
        return ACCEL_ERROR_TIMEOUT;
      }
      continue;
    }
    // The source: a device replica (a peer copy for a device, the only way for the host), else the host's, else
    // the spill file (into the host first when the target is a device).
    int32_t from = -2;
    for (const auto& [where, r] : o.replicas) {
      if (r.Usable() && where >= 0 && from == -2) from = where;
    }
    if (from == -2 && o.replicas.count(-1) != 0 && o.replicas.at(-1).Usable()) from = -1;
    if (from == -2 && o.spill_path.empty()) {
      // No copy left: the task that made it makes it again (docs/objectstore.md, "Lineage"), once per get.
      if (o.lineage && !remade) {
        remade = true;
        if (!o.remaking) {
          o.remaking = true;
          auto lineage = o.lineage;
          lock.unlock();
          std::string why_not;
          const bool started = lineage->Remake(object, &why_not);
          lock.lock();
          if (!started) {
            o.remaking = false;
            filled_.notify_all();
            *why = fmt::format("{} has no copy left ({}) and re-running {} could not start: {}", o.name, o.lost,
                               lineage->producer(), why_not);
            return ACCEL_ERROR_DEVICE_LOST;
          }
        }
        continue;  // waits for the remake's end
      }
      if (!o.lost.empty()) {
        *why = fmt::format("{} has no copy left: {}{}", o.name, o.lost,
                           o.lineage ? "" : " (no task set it as its result, so nothing can make it again)");
        return ACCEL_ERROR_DEVICE_LOST;
      }
      *why = fmt::format("{} has no copy left to read (released while in use?)", o.name);
      return ACCEL_ERROR_INTERNAL;
    }
    if (from == -2 && location >= 0) {
      // Only on disk: through a host replica.
      lock.unlock();
      View host;
      accel_status_t status = Get(object, -1, timeout_ns, &host, why);
      if (status == ACCEL_SUCCESS) {
        status = Get(object, location, timeout_ns, out, why);
        ReleaseView(host);
      }
      lock.lock();  // `operation` ends under the lock
      return status;
    }
    // Pinned before room is made: making room may unlock, and must not take the source away.
    if (from != -2) ++o.replicas.at(from).pins;
    const accel_status_t reserved = Reserve(o, location, lock, why);
    if (reserved != ACCEL_SUCCESS) {
      if (from != -2) --o.replicas.at(from).pins;
      MaybeFree(o);  // released meanwhile (making room may unlock): freed now that nothing pins it
      return reserved;
    }
    const Replica dst = o.replicas.at(location);
    const Replica src = from != -2 ? o.replicas.at(from) : Replica{};
    lock.unlock();
    accel_status_t status = ACCEL_SUCCESS;
    if (from == -2) {
      status = ReadSpill(o, dst.host, why);  // location is the host here
    } else {
      status = Copy(from, src, location, dst, o.size, why);
    }
    // A copy from a device that is lost: that replica is gone; another copy, or the lineage, may serve.
    const bool source_lost = status == ACCEL_ERROR_DEVICE_LOST && from >= 0 && DeviceLost(static_cast<uint32_t>(from));
    if (source_lost && device_lost_) device_lost_(static_cast<uint32_t>(from));
    lock.lock();
    if (from != -2) --o.replicas.at(from).pins;
    Replica& r = o.replicas.at(location);
    if (status != ACCEL_SUCCESS) {
      r.pins = 0;
      FreeReplica(o, location);
      if (source_lost) {
        o.lost = fmt::format("{} was lost", PlaceName(from));
        if (auto lost = o.replicas.find(from); lost != o.replicas.end() && lost->second.pins == 0) {
          FreeReplica(o, from);
          filled_.notify_all();
          continue;  // another copy, else the lineage
        }
      }
      MaybeFree(o);
      filled_.notify_all();
      return status;
    }
    r.ready = true;
    Place& place = PlaceAt(location);
    if (from == -2) {
      ++place.restored;
    } else {
      ++place.transfers_in;
    }
    // The transfer's pin becomes the view's.
    Touch(o, location, r, ++clock_);
    ++o.views;
    out->object = object;
    out->location = location;
    out->host = r.host;
    out->buffer = r.buffer;
    filled_.notify_all();
    return ACCEL_SUCCESS;
  }
}

void ObjectStore::ReleaseView(const View& view) {
  {
    std::lock_guard lock(mutex_);
    Object& o = *view.object;
    auto it = o.replicas.find(view.location);
    if (it != o.replicas.end() && it->second.pins > 0) --it->second.pins;
    if (o.views > 0) --o.views;
    MaybeFree(o);
  }
  RunDeferred();
}

void ObjectStore::Drop(const std::shared_ptr<Object>& object) {
  std::string token;
  {
    std::lock_guard lock(mutex_);
    object->dropped = true;
    token = object->token;
    MaybeFree(*object);
    if (token.empty() || shut_down_) {
      token.clear();
    } else {
      ++operations_;  // link_ lives until Shutdown, which waits for this
    }
  }
  RunDeferred();
  if (token.empty()) return;
  link_->Release(token);
  EndOperation();
}

bool ObjectStore::BeginOperation(std::string* why) {
  std::lock_guard lock(mutex_);
  if (shut_down_) {
    *why = "the runtime is being destroyed";
    return false;
  }
  ++operations_;
  return true;
}

void ObjectStore::EndOperation() {
  std::lock_guard lock(mutex_);
  if (--operations_ == 0) idle_.notify_all();
}

accel_status_t ObjectStore::Share(const std::shared_ptr<Object>& object, std::string* token, std::string* why) {
  std::lock_guard share(share_mutex_);
  if (!BeginOperation(why)) return ACCEL_ERROR_FAILED_PRECONDITION;
  struct End {
    ObjectStore& store;
    ~End() { store.EndOperation(); }
  } end{*this};
  Object& o = *object;
  // The source: the host replica, else a device's, else the spill file (read back into a host replica).
  int32_t from = -1;
  {
    std::lock_guard lock(mutex_);
    if (!o.token.empty()) {
      *token = o.token;
      return ACCEL_SUCCESS;
    }
    auto host = o.replicas.find(-1);
    if (host == o.replicas.end() || !host->second.Usable()) {
      for (const auto& [where, r] : o.replicas) {
        if (where >= 0 && r.Usable()) {
          from = where;
          break;
        }
      }
    }
  }
  View source;
  accel_status_t status = Get(object, from, ACCEL_TIMEOUT_INFINITE, &source, why);
  if (status != ACCEL_SUCCESS) return status;
  struct Unpin {
    ObjectStore& store;
    const View& view;
    ~Unpin() { store.ReleaseView(view); }
  } unpin{*this, source};
  const std::string name = fmt::format("accel-object-{}-{}", getpid(), o.id);
  const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    *why = fmt::format("{}: no memfd to share it: {}", o.name, std::strerror(errno));
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  }
  auto fail = [&](const std::string& what) {
    *why = fmt::format("{}: {}: {}", o.name, what, std::strerror(errno));
    ::close(fd);
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  };
  if (::ftruncate(fd, static_cast<off_t>(o.size)) != 0) return fail(fmt::format("sizing its memfd to {}", o.size));
  void* map = ::mmap(nullptr, o.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return fail("mapping its memfd");
  if (source.location < 0) {
    std::memcpy(map, source.host, o.size);
  } else {
    Replica src;
    src.buffer = source.buffer;
    Replica dst;
    dst.host = map;
    status = Copy(source.location, src, -1, dst, o.size, why);
  }
  // A memfd with a writable mapping cannot be sealed against writes: the mapping goes first.
  ::munmap(map, o.size);
  if (status != ACCEL_SUCCESS) {
    ::close(fd);
    return status;
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    *why = fmt::format("{}: sealing its memfd: {}", o.name, std::strerror(errno));
    ::close(fd);
    return ACCEL_ERROR_INTERNAL;
  }
  const std::string made = object_agent::MakeToken();
  if (made.empty()) {
    *why = fmt::format("{}: no random token: {}", o.name, std::strerror(errno));
    ::close(fd);
    return ACCEL_ERROR_INTERNAL;
  }
  status = link_->Register(made, fd, o.size, why);  // takes fd
  if (status != ACCEL_SUCCESS) {
    *why = fmt::format("{} could not be shared: {}", o.name, *why);
    return status;
  }
  std::lock_guard lock(mutex_);
  o.token = made;
  *token = made;
  return ACCEL_SUCCESS;
}

accel_status_t ObjectStore::Import(const std::string& token, std::shared_ptr<Object>* out, std::string* why) {
  if (!BeginOperation(why)) return ACCEL_ERROR_FAILED_PRECONDITION;
  struct End {
    ObjectStore& store;
    ~End() { store.EndOperation(); }
  } end{*this};
  int fd = -1;
  uint64_t size = 0;
  accel_status_t status = link_->Open(token, &fd, &size, why);
  if (status != ACCEL_SUCCESS) return status;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // What the agent gave must be what sharing made: sealed, and as long as it says.
  struct stat st {};
  const int seals = ::fcntl(fd, F_GET_SEALS);
  constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
  if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != size || size == 0 || seals < 0 ||
      (seals & kSeals) != kSeals) {
    link_->Release(token);
    *why = fmt::format("'{}' came as a memfd of {} bytes with seals {:#x} (expected {} bytes, sealed {:#x})", token,
                       st.st_size, seals, size, kSeals);
    return ACCEL_ERROR_FAILED_PRECONDITION;
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    link_->Release(token);
    *why = fmt::format("'{}' ({}) could not be mapped: {}", token, info::HumanBytes(size), std::strerror(errno));
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  }
  auto object = std::make_shared<Object>();
  object->size = size;
  object->token = token;
  Replica r;
  r.ready = true;
  r.mapped = true;
  r.host = map;
  std::lock_guard lock(mutex_);
  object->id = next_id_++;
  object->name = fmt::format("object {} (imported '{}')", object->id, token);
  Replica& host = object->replicas[-1] = r;
  Touch(*object, -1, host, ++clock_);
  objects_[object->id] = object;
  *out = std::move(object);
  return ACCEL_SUCCESS;
}

accel_object_info_t ObjectStore::Info(const Object& o) const {
  std::lock_guard lock(mutex_);
  accel_object_info_t info{};
  info.size = o.size;
  info.references = o.references.load();
  info.views = o.views;
  info.on_disk = o.spill_path.empty() ? 0 : 1;
  for (const auto& [where, r] : o.replicas) {
    if (!r.Usable()) continue;
    if (where < 0) {
      info.on_host = 1;
    } else {
      ++info.device_replicas;
    }
  }
  return info;
}

bool ObjectStore::OnDevice(const Object& o, uint32_t device) const {
  std::lock_guard lock(mutex_);
  auto it = o.replicas.find(static_cast<int32_t>(device));
  return it != o.replicas.end() && it->second.Usable();
}

accel_object_store_usage_t ObjectStore::Usage(int32_t location) const {
  std::lock_guard lock(mutex_);
  const Place& p = PlaceAt(location);
  accel_object_store_usage_t u{};
  u.capacity = p.capacity;
  u.used = p.used;
  u.replicas = p.replicas;
  u.transfers_in = p.transfers_in;
  u.evicted = p.evicted;
  u.moved_out = p.moved_out;
  u.restored = p.restored;
  return u;
}

}  // namespace accel::runtime
