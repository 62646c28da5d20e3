// accel-bench's thread hand-off baseline (docs/accel-bench.md): the work of
// each benchmark handed to one other thread and waited for, with nothing else.
// It is what an asynchronous stream on the host cannot avoid, so the host
// backend's figures are set against it; on other devices it shows how much of
// a figure the hand-off to a runtime's thread could explain.
//
// The worker sleeps on a condition variable until an item arrives; the caller
// sleeps on another until its items are done (std::mutex and
// std::condition_variable, no spinning: the plain way to hand work to a
// thread). An item is a 4-byte store for a launch, a memcpy of the copy's size
// between two host allocations for a copy.
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "bench.h"

namespace accel::bench {
namespace {

class HandOffPath final : public Path {
 public:
  explicit HandOffPath(uint64_t max_size) : host_(max_size, 1), a_(max_size, 2), b_(max_size, 0) {
    worker_ = std::thread([this] { Run(); });
  }
  ~HandOffPath() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_.notify_one();
    worker_.join();
  }

  std::string Name() const override { return "handoff"; }

  bool TinyLaunchAndWait() override { return HandAndWait(Item{&tiny_, &value_, sizeof(value_)}, 1); }
  bool LaunchBatch(int count) override { return HandAndWait(Item{&tiny_, &value_, sizeof(value_)}, count); }
  bool HostToDevice(uint64_t size) override { return HandAndWait(Item{a_.data(), host_.data(), size}, 1); }
  bool DeviceToHost(uint64_t size) override { return HandAndWait(Item{host_.data(), a_.data(), size}, 1); }
  bool DeviceToDevice(uint64_t size) override { return HandAndWait(Item{b_.data(), a_.data(), size}, 1); }
  bool Fill(uint64_t size) override { return HandAndWait(Item{b_.data(), nullptr, size}, 1); }

 private:
  struct Item {
    void* dst;
    const void* src;  // null: a fill (memset)
    uint64_t size;
  };

  // Hands `count` copies of `item` to the worker, one notification each, then waits until it ran them all.
  bool HandAndWait(Item item, int count) {
    uint64_t target = 0;
    for (int i = 0; i < count; ++i) {
      {
        std::lock_guard lock(mutex_);
        item_ = item;
        target = ++handed_;
      }
      work_.notify_one();
    }
    std::unique_lock lock(mutex_);
    done_cv_.wait(lock, [&] { return done_ >= target; });
    return true;
  }

  void Run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_.wait(lock, [this] { return stopping_ || done_ < handed_; });
      if (stopping_) return;
      const Item item = item_;
      const uint64_t from = done_;
      const uint64_t upto = handed_;
      lock.unlock();
      for (uint64_t i = from; i < upto; ++i) {
        if (item.src != nullptr) {
          std::memcpy(item.dst, item.src, item.size);
        } else {
          std::memset(item.dst, 4, item.size);
        }
      }
      lock.lock();
      done_ = upto;
      done_cv_.notify_one();
    }
  }

  std::vector<uint8_t> host_, a_, b_;
  uint32_t tiny_ = 0;
  uint32_t value_ = 7;
  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable done_cv_;
  Item item_{};
  uint64_t handed_ = 0;  // items handed so far
  uint64_t done_ = 0;    // items the worker ran
  bool stopping_ = false;
  std::thread worker_;  // last: started once the rest is constructed
};

}  // namespace

std::unique_ptr<Path> MakeHandOffPath(uint64_t max_size) { return std::make_unique<HandOffPath>(max_size); }

}  // namespace accel::bench
