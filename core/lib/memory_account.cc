// Device memory accounting and ACCEL_MEMORY_LIMIT (docs/memory-limits.md).
#include "memory_account.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <mutex>

#include "names.h"

namespace accel::core {

std::optional<uint64_t> MemoryAccount::Reserve(uint64_t bytes) {
  const uint64_t limit = limit_.load();
  uint64_t used = used_.load();
  do {
    if (bytes > limit || used > limit - bytes) {
      refused_.fetch_add(1);
      return std::nullopt;
    }
  } while (!used_.compare_exchange_weak(used, used + bytes));
  return used + bytes;
}

void MemoryAccount::Commit(uint64_t used_after) {
  uint64_t peak = peak_.load();
  while (used_after > peak && !peak_.compare_exchange_weak(peak, used_after)) {
  }
  buffers_.fetch_add(1);
}

void MemoryAccount::Uncharge(uint64_t bytes) {
  used_.fetch_sub(bytes);
  buffers_.fetch_sub(1);
}

void MemoryAccount::SetLimitOf(const void* owner, uint64_t limit) {
  std::lock_guard lock(owners_mutex_);
  auto it = std::find_if(owners_.begin(), owners_.end(), [&](const auto& o) { return o.first == owner; });
  if (it == owners_.end()) {
    owners_.emplace_back(owner, limit);
  } else {
    it->second = limit;
  }
  StoreLowestLimitLocked();
}

void MemoryAccount::DropLimitOf(const void* owner) {
  std::lock_guard lock(owners_mutex_);
  std::erase_if(owners_, [&](const auto& o) { return o.first == owner; });
  StoreLowestLimitLocked();
}

void MemoryAccount::StoreLowestLimitLocked() {
  uint64_t lowest = ACCEL_MEMORY_UNLIMITED;
  for (const auto& o : owners_) lowest = std::min(lowest, o.second);
  limit_.store(lowest);
}

accel_memory_usage_t MemoryAccount::Usage() const {
  accel_memory_usage_t u{};
  u.used = used_.load();
  u.peak = peak_.load();
  u.limit = limit_.load();
  u.refused = refused_.load();
  u.buffers = buffers_.load();
  return u;
}

MemoryCharge::~MemoryCharge() {
  for (const auto& account : accounts_) account->Uncharge(bytes_);
}

std::shared_ptr<MemoryAccount> ProcessAccount(const std::string& id) {
  // Leaked on purpose: buffers of instances destroyed at exit still give
  // their bytes back to it.
  static auto* mutex = new std::mutex;
  static auto* accounts = new std::map<std::string, std::shared_ptr<MemoryAccount>>;
  std::lock_guard lock(*mutex);
  auto& account = (*accounts)[id];
  if (!account) account = std::make_shared<MemoryAccount>();
  return account;
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Status ParseAmount(std::string_view item, std::string_view text, MemoryLimitEntry& entry) {
  text = Trim(text);
  if (text.empty()) return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}': no size", item);
  // Exponents too ("1e9"), as ACCEL_MEMORY_LIMIT has always read them.
  const info::ByteSize size = info::ParseByteSize(text, std::chars_format::general);
  switch (size.outcome) {
    case info::ByteSize::Outcome::kBytes: entry.bytes = size.bytes; return Status::Ok();
    case info::ByteSize::Outcome::kNotANumber: break;
    case info::ByteSize::Outcome::kUnknownUnit:
      if (size.unit == "%") {
        if (size.value <= 0 || size.value > 100) {
          return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}': {}% is not a share in (0, 100]", item, size.value);
        }
        entry.is_percent = true;
        entry.percent = size.value;
        return Status::Ok();
      }
      return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}': unknown unit '{}' ({}, or a percentage such as 25%)", item,
                   size.unit, info::kByteSizeUnits);
    case info::ByteSize::Outcome::kTooLarge:
      return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}': {} is larger than 2^64 bytes", item, text);
  }
  return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}': '{}' is not a size ({}, or a percentage such as 25%)", item, text,
               info::kByteSizeUnits);
}

}  // namespace

Expected<std::vector<MemoryLimitEntry>> ParseMemoryLimit(std::string_view text) {
  std::vector<MemoryLimitEntry> entries;
  if (Trim(text).empty()) return Error(ACCEL_ERROR_INVALID_ARGUMENT, "the value is empty");
  size_t start = 0;
  for (size_t number = 1; start <= text.size(); ++number) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = Trim(text.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) return Error(ACCEL_ERROR_INVALID_ARGUMENT, "item {} of '{}' is empty", number, text);
    MemoryLimitEntry entry;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      Status parsed = ParseAmount(item, item, entry);
      if (!parsed.ok()) return parsed;
    } else {
      entry.device = std::string(Trim(item.substr(0, eq)));
      if (entry.device.empty()) return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}': no device before '='", item);
      Status parsed = ParseAmount(item, item.substr(eq + 1), entry);
      if (!parsed.ok()) return parsed;
    }
    for (const auto& e : entries) {
      if (e.device == entry.device) {
        return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}': {} has a limit already", item,
                     entry.device.empty() ? std::string("every device") : "device '" + entry.device + "'");
      }
    }
    entries.push_back(std::move(entry));
    if (comma == text.size()) break;
  }
  return entries;
}

}  // namespace accel::core
