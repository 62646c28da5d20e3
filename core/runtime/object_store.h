// The object store behind accel/object_store.h (docs/objectstore.md):
// immutable objects with replicas on the host and on the runtime's devices,
// made on demand by the best path, dropped or moved under pressure (least
// recently used first, never a viewed or the last copy without moving it),
// spilled to checksummed files, read back on get. Works through libaccel's
// public API only. Thread-safe: one mutex guards the placement of every
// replica; copies into a new replica run without it (the replica is marked
// filling, and concurrent gets of it wait for that one transfer), while the
// copies that make room (a device's last copy to the host, the host's last
// copy to a spill file) run under it.
#ifndef ACCEL_RUNTIME_OBJECT_STORE_H_
#define ACCEL_RUNTIME_OBJECT_STORE_H_

#include <accel/accel.h>
#include <accel/object_store.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "agent_link.h"
#include "resources.h"

namespace accel::runtime {

class ObjectStore;
class Runtime;

// One copy of an object at one place. Fields under the store's mutex.
struct Replica {
  bool ready = false;               // filled; false while a transfer fills it
  bool moving = false;              // a device's last copy on its way to the host: gets and victims skip it
  bool charged = false;             // counted in its place's figures (a placeholder is not, until room is made)
  void* host = nullptr;             // a host replica's bytes (owned)
  accel_buffer_t buffer = nullptr;  // a device replica's buffer (owned)
  uint32_t pins = 0;                // views and transfers using it: never dropped or moved while > 0
  uint64_t last_use = 0;            // the store's clock at its last get
  bool mapped = false;              // `host` is a read-only mapping of an imported object's memfd: never dropped,
                                    // moved or spilled (it is not the store's), not charged to the host's figures
  // An adopted host replica (ACCEL_OBJECT_PUT_ADOPT): `host` is the caller's, given back through this.
  void (*release)(void*, const void*) = nullptr;
  void* release_user_data = nullptr;

  // What a get may use or a source copy from.
  bool Usable() const { return ready && !moving; }
};

struct Object;

// How to make an object again when every copy of it is lost (docs/objectstore.md, "Lineage"): the task that
// produced it. The runtime implements it; the object owns it, and the store destroys it outside its lock once
// the object is freed (the destructor may run user code: a task's release_user_data).
class Lineage {
 public:
  virtual ~Lineage() = default;
  // Starts making `object` again; its end calls ObjectStore::EndRemake. False with `why` when it cannot start.
  virtual bool Remake(const std::shared_ptr<Object>& object, std::string* why) = 0;
  // What made the object: "task 7 ('load')".
  virtual const std::string& producer() const = 0;
};

// An object. `references` counts C handles' references; the rest is under
// the store's mutex.
struct Object {
  uint64_t id = 0;
  std::string name;  // "object 7 ('weights')"
  uint64_t size = 0;
  std::atomic<uint32_t> references{1};
  uint32_t views = 0;
  bool dropped = false;                 // the last reference went; freed when no view holds it
  std::map<int32_t, Replica> replicas;  // by location: -1 the host, else the device index
  std::string spill_path;               // "" when not on disk
  uint32_t spill_crc = 0;
  uint64_t spill_id = 0;  // the object id its header holds: a remade object's file was written for the re-run's
  std::shared_ptr<Lineage> lineage;  // the task that made it, when one did (accel_task_context_set_result)
  bool remaking = false;             // its lineage runs again: gets wait for its end
  std::string lost;                  // why copies went without another left ("device 2 (gpu2) was lost")
  std::string token;                 // shared or imported (accel_object_share, _import): its token; else ""
};

// What an object handle holds: the object, and its runtime (empty once destroyed).
struct ObjectRef {
  std::shared_ptr<Object> object;
  std::weak_ptr<Runtime> runtime;
};

// A counted reference to an object through its handle: what accel_object_retain adds and accel_object_release
// drops. Plain value.
struct HeldObject {
  std::shared_ptr<Object> object;
  uint64_t handle = 0;
};
// Adds a reference to `object`; false when its last one went already.
bool RetainObject(Object& object);
// Drops the reference `held` stands for; the last one removes the handle and drops the object from `store` (null
// once the runtime is gone: its store freed everything).
void ReleaseObject(const HeldObject& held, ObjectStore* store);

// A view: a pinned replica of an object. Plain value.
struct View {
  std::shared_ptr<Object> object;
  int32_t location = -1;
  const void* host = nullptr;
  accel_buffer_t buffer = nullptr;
};

class ObjectStore {
 public:
  struct Options {
    uint64_t host_capacity = 0;    // 0: default
    uint64_t device_capacity = 0;  // 0: default
    std::string spill_directory;   // "": default
  };

  // Makes the store for `resources` (the runtime's devices, by index).
  static accel_status_t Create(accel_instance_t instance, const Resources& resources, Options options,
                               std::unique_ptr<ObjectStore>* out, std::string* why);
  ~ObjectStore();
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;

  // Frees every replica and spill file; later calls fail.
  void Shutdown();

  accel_status_t Put(const accel_object_put_desc_t& desc, std::shared_ptr<Object>* out, std::string* why);
  // Streams a file's range into one object per part (accel_object_put_file); all or none.
  accel_status_t PutFile(const accel_object_file_desc_t& desc, std::vector<std::shared_ptr<Object>>* out,
                         std::string* why);
  // A pinned replica of `object` at `location`, made when missing.
  accel_status_t Get(const std::shared_ptr<Object>& object, int32_t location, uint64_t timeout_ns, View* out,
                     std::string* why);
  void ReleaseView(const View& view);
  // The last reference of `object` went (an agent reference it held goes too).
  void Drop(const std::shared_ptr<Object>& object);
  // Makes `object` readable by other processes (accel_object_share): its bytes copied once into a sealed memfd
  // registered with the node's agent under a new token; the same token when shared already.
  accel_status_t Share(const std::shared_ptr<Object>& object, std::string* token, std::string* why);
  // The object another process shared as `token`, its host replica a read-only mapping of that memfd.
  accel_status_t Import(const std::string& token, std::shared_ptr<Object>* out, std::string* why);

  // Records what made `object`; false (nothing kept) when it has a lineage already or is gone.
  bool SetLineage(const std::shared_ptr<Object>& object, const std::shared_ptr<Lineage>& lineage);
  // The end of a remake of `target` started through its lineage: `made` (the remade object, or null) gives its
  // bytes to `target`, or `status` and `message` say why there are none.
  void EndRemake(const std::shared_ptr<Object>& target, const std::shared_ptr<Object>& made, accel_status_t status,
                 const std::string& message);
  // Called, without the store's lock, with the index of a device found lost while reading a replica there.
  void SetDeviceLostHandler(std::function<void(uint32_t)> handler) { device_lost_ = std::move(handler); }

  accel_object_info_t Info(const Object& object) const;
  bool OnDevice(const Object& object, uint32_t device) const;
  bool ValidLocation(int32_t location) const;
  accel_object_store_usage_t Usage(int32_t location) const;
  size_t device_count() const { return devices_.size(); }

 private:
  // Figures and limits of one place. Under mutex_.
  struct Place {
    uint64_t capacity = 0;
    uint64_t used = 0;
    uint64_t replicas = 0;
    uint64_t transfers_in = 0, evicted = 0, moved_out = 0, restored = 0;
    // The replicas here by last use, oldest first: (last_use, object id), kept as replicas are used (Touch) and
    // freed, so that finding a victim costs the entries skipped (in use), not a pass over every object. An entry
    // whose replica is gone or was used since (a path that missed the index) is dropped when MakeRoom meets it.
    std::set<std::pair<uint64_t, uint64_t>> lru;
  };

  ObjectStore(accel_instance_t instance, const Resources& resources);
  Place& PlaceAt(int32_t location) { return places_[static_cast<size_t>(location + 1)]; }
  const Place& PlaceAt(int32_t location) const { return places_[static_cast<size_t>(location + 1)]; }
  std::string PlaceName(int32_t location) const;
  // Under the lock: `r` (`o`'s replica at `location`) was used at `when` (the store's clock).
  void Touch(const Object& o, int32_t location, Replica& r, uint64_t when);
  // Under the lock: frees replicas at `location` until `bytes` more fit, or says why not.
  bool MakeRoom(int32_t location, uint64_t bytes, std::unique_lock<std::mutex>& lock, std::string* why);
  // Under the lock: allocates an empty (filling, pinned) replica of `object` at `location`, or, with `adopted`,
  // makes room for that memory (its host or buffer, and release) and takes it as the replica.
  accel_status_t Reserve(Object& object, int32_t location, std::unique_lock<std::mutex>& lock, std::string* why,
                         const Replica* adopted = nullptr);
  void FreeReplica(Object& object, int32_t location);
  void FreeAll(Object& object);
  // Frees a dropped object once no view and no transfer uses it.
  void MaybeFree(Object& object);

 public:
  // Runs what freeing replicas and objects left to do without the lock (user code: lineages' user data, adopted
  // memory's release_data). Called by the store's own entry points that free, and by the API after a put or get.
  void RunDeferred();

 private:
  // True when `device` answers DEVICE_LOST.
  bool DeviceLost(uint32_t device) const;
  // Copies `size` bytes between replicas (either may be the host); without the lock.
  accel_status_t Copy(int32_t from, const Replica& src, int32_t to, const Replica& dst, uint64_t size,
                      std::string* why);
  accel_status_t WriteSpill(Object& object, const Replica& host, std::string* why);
  accel_status_t ReadSpill(const Object& object, void* into, std::string* why) const;
  // A stream of `device` for one operation alone, from the device's idle streams or new (null when none can be
  // made, with `why` and stream_create's status in `*status`: DEVICE_LOST for a lost device, which the callers treat
  // as the loss it is); under the lock. A stream's error is sticky and a skipped copy reports nothing of its own, so
  // two operations never share one: each judges its copies by its own synchronize (docs/objectstore.md).
  accel_stream_t TakeStream(uint32_t device, std::string* why, accel_status_t* status);
  // Gives a stream back once its operation's copies ended, waiting for it and clearing its error first if the
  // operation failed (`failed`); without the lock.
  void GiveBackStream(uint32_t device, accel_stream_t stream, bool failed);
  // Reads [offset, offset + size) of `fd` into the replica of `object` at `location`, chunk by chunk (device
  // replicas through `staging`, two buffers of `chunk` bytes); calls `progress` after each read. Without the lock.
  accel_status_t Stream(int fd, const std::string& path, uint64_t offset, Object& object, int32_t location,
                        const Replica& dst, uint64_t chunk, void* const staging[2],
                        const std::function<void(uint64_t)>& progress, std::string* why);

  accel_instance_t instance_;
  std::vector<accel_device_t> devices_;  // by index
  std::vector<std::string> device_labels_;
  std::string spill_directory_;
  bool made_spill_directory_ = false;
  bool default_spill_directory_ = false;  // in $TMPDIR under a name others can guess: checked before use
  accel_tenant_t tenant_ = nullptr;       // the store's device allocations count here, not in a task's share

  // Counts a put or get in flight (constructed and destroyed under mutex_): Shutdown waits for none.
  class Operation {
   public:
    explicit Operation(ObjectStore& store) : store_(store) { ++store_.operations_; }
    ~Operation() {
      if (--store_.operations_ == 0) store_.idle_.notify_all();
    }
    Operation(const Operation&) = delete;
    Operation& operator=(const Operation&) = delete;

   private:
    ObjectStore& store_;
  };

  // Counts an operation that takes and drops mutex_ itself (Share, Import): Shutdown waits for it too.
  bool BeginOperation(std::string* why);
  void EndOperation();

  std::mutex
      share_mutex_;  // one Share at a time (taken before mutex_): a second share of an object waits for the first
  std::unique_ptr<AgentLink> link_ = std::make_unique<AgentLink>();  // connects on first use
  mutable std::mutex mutex_;
  std::condition_variable filled_;  // a replica became ready, was given up, or stopped moving
  std::condition_variable idle_;    // operations_ reached 0
  uint32_t operations_ = 0;
  uint64_t serial_ = 0;        // this store's number in the process: part of spill directory and file names
  std::vector<Place> places_;  // [0] the host, [1 + i] device i
  std::vector<std::vector<accel_stream_t>> idle_streams_;   // per device: streams no operation holds
  std::map<uint64_t, std::weak_ptr<Object>> objects_;       // live objects, by id
  std::vector<std::shared_ptr<Lineage>> lineages_to_free_;  // of freed objects: RunDeferred
  struct Release {
    void (*release)(void*, const void*);
    void* user_data;
    const void* data;
  };
  std::vector<Release> releases_to_run_;       // of freed adopted host replicas: RunDeferred
  std::atomic<bool> deferred_pending_{false};  // either holds something: RunDeferred takes the lock only then
  std::function<void(uint32_t)> device_lost_;  // set once, before any get
  uint64_t next_id_ = 1;
  uint64_t clock_ = 0;
  bool shut_down_ = false;
};

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_OBJECT_STORE_H_
