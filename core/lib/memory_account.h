// Device memory accounting (docs/memory-limits.md): the bytes a process, or a
// tenant inside it, holds on one physical device, against an optional limit.
#ifndef ACCEL_CORE_MEMORY_ACCOUNT_H_
#define ACCEL_CORE_MEMORY_ACCOUNT_H_

#include <accel/accel.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "status.h"

namespace accel::core {

// Bytes held on one device and the limit they may not pass. Thread-safe:
// the counters are atomic; Reserve never lets `used` pass the limit.
//
// A charge is two steps, so that an allocation two accounts must accept (a tenant's and the process's) leaves both
// as they were when either refuses: Reserve on each (it moves only `used`), then Commit on each (one more buffer, the
// peak), or Cancel on those that accepted.
class MemoryAccount {
 public:
  explicit MemoryAccount(uint64_t limit = ACCEL_MEMORY_UNLIMITED) : limit_(limit) {}

  // Adds `bytes` to `used` unless that passes the limit (then counts a refusal); returns `used` after the addition.
  std::optional<uint64_t> Reserve(uint64_t bytes);
  // Makes a reservation a buffer's charge; `used_after` is what Reserve returned.
  void Commit(uint64_t used_after);
  // Gives back a reservation that was not committed.
  void Cancel(uint64_t bytes) { used_.fetch_sub(bytes); }
  // Gives back a committed charge.
  void Uncharge(uint64_t bytes);

  // A tenant's limit: one owner sets it.
  void set_limit(uint64_t limit) { limit_.store(limit); }
  // The process account's limit, which every instance of the process sets from ACCEL_MEMORY_LIMIT as it read it:
  // the account obeys the lowest of the limits its live instances set (a second instance is no way around the
  // first's limit, whatever its device indices), and `owner` takes its limit away when it is destroyed.
  void SetLimitOf(const void* owner, uint64_t limit);
  void DropLimitOf(const void* owner);

  uint64_t limit() const { return limit_.load(); }
  uint64_t used() const { return used_.load(); }
  accel_memory_usage_t Usage() const;  // header left to the caller

 private:
  void StoreLowestLimitLocked();  // limit_ = the lowest of owners_ (under owners_mutex_)

  std::atomic<uint64_t> limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> peak_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> buffers_{0};
  std::mutex owners_mutex_;
  std::vector<std::pair<const void*, uint64_t>> owners_;  // SetLimitOf's, under owners_mutex_
};

// What one buffer holds against its accounts; gives it back when destroyed.
// Not copyable; owned by the buffer.
class MemoryCharge {
 public:
  MemoryCharge(std::vector<std::shared_ptr<MemoryAccount>> accounts, uint64_t bytes)
      : accounts_(std::move(accounts)), bytes_(bytes) {}
  ~MemoryCharge();
  MemoryCharge(const MemoryCharge&) = delete;
  MemoryCharge& operator=(const MemoryCharge&) = delete;

 private:
  std::vector<std::shared_ptr<MemoryAccount>> accounts_;
  uint64_t bytes_ = 0;
};

// The process-wide account of the physical device with stable id `id`,
// shared by every instance of the process. Thread-safe.
std::shared_ptr<MemoryAccount> ProcessAccount(const std::string& id);

// One device's limit from ACCEL_MEMORY_LIMIT.
struct MemoryLimitEntry {
  std::string device;  // "" every device; else a physical index or a stable id
  uint64_t bytes = 0;  // when !percent
  double percent = 0;  // of the device's memory, when `is_percent`
  bool is_percent = false;
};

// Parses ACCEL_MEMORY_LIMIT: "<size>" or "<device>=<size>[,...]", a size
// being bytes with an optional unit (B, kB, KB, MB, GB, TB, KiB, MiB, GiB,
// TiB) or a percentage of the device's memory ("25%"). Errors name the item:
// "'0=12XB': unknown unit 'XB' (B, kB, ..., TiB)".
Expected<std::vector<MemoryLimitEntry>> ParseMemoryLimit(std::string_view text);

}  // namespace accel::core

#endif  // ACCEL_CORE_MEMORY_ACCOUNT_H_
