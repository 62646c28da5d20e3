// The context's thread pool: lazily started workers, and jobs whose items are
// claimed in chunks by the workers and by the thread that submitted them.
#include "thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <new>
#include <string>
#include <system_error>

namespace accel::host {

std::byte* Scratch::Reserve(uint64_t size) {
  if (size <= capacity_ && bytes_ != nullptr) return bytes_.get();
  if (size > SIZE_MAX - kScratchAlignment) throw std::bad_alloc();
  const uint64_t rounded = AlignUp(size == 0 ? 1 : size, kScratchAlignment);
  std::unique_ptr<std::byte[], FreeDeleter> grown(
      static_cast<std::byte*>(std::aligned_alloc(kScratchAlignment, static_cast<size_t>(rounded))));
  if (grown == nullptr) throw std::bad_alloc();
  bytes_ = std::move(grown);
  capacity_ = rounded;
  return bytes_.get();
}

ThreadPool::ThreadPool(const HostServices* host, unsigned thread_count)
    : host_(host),
      thread_count_(thread_count != 0 ? thread_count : std::max(1u, std::thread::hardware_concurrency())) {}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_available_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void ThreadPool::StartLocked() {
  const auto now = std::chrono::steady_clock::now();
  if (now < retry_at_) return;
  try {
    threads_.reserve(thread_count_);  // so that emplace_back below does not move the running ones
    while (threads_.size() < thread_count_) {
      threads_.emplace_back([this] { WorkerMain(); });
      pthread_setname_np(threads_.back().native_handle(), "accel-host-pool");
    }
    started_ = true;
  } catch (const std::exception& e) {  // std::system_error (no thread), std::bad_alloc (no memory)
    retry_at_ = now + std::chrono::seconds(1);
    if (host_ == nullptr) return;
    try {
      host_->Log(ACCEL_LOG_LEVEL_WARN, "started " + std::to_string(threads_.size()) + " of " +
                                           std::to_string(thread_count_) + " kernel worker threads (" + e.what() +
                                           "); trying again in a second");
    } catch (const std::bad_alloc&) {  // no memory for the message either
    }
  }
}

void ThreadPool::RemoveLocked(Job* job) {
  const auto it = std::find(jobs_.begin(), jobs_.end(), job);
  if (it != jobs_.end()) jobs_.erase(it);
}

void ThreadPool::Work(Job& job, Scratch& scratch) {
  for (;;) {
    if (job.stop.load(std::memory_order_relaxed)) return;
    const uint64_t begin = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (begin >= job.count) return;
    const uint64_t end = std::min(job.count, begin + job.chunk);
    for (uint64_t index = begin; index < end; ++index) {
      if (job.stop.load(std::memory_order_relaxed)) return;
      if (!(*job.body)(scratch, index)) {
        job.stop.store(true, std::memory_order_relaxed);
        return;
      }
    }
  }
}

void ThreadPool::WorkerMain() {
  Scratch scratch;  // this worker's, reused by every item it runs
  std::unique_lock lock(mutex_);
  for (;;) {
    work_available_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (stopping_) return;  // no Run is in flight when the pool is destroyed
    Job* job = jobs_.front();
    ++job->helpers;
    lock.unlock();
    Work(*job, scratch);
    lock.lock();
    RemoveLocked(job);  // exhausted or stopped: nothing left to claim
    if (--job->helpers == 0) helper_left_.notify_all();
  }
}

void ThreadPool::Run(uint64_t count, Scratch& caller_scratch, const Body& body) {
  if (count == 0) return;
  Job job;
  job.count = count;
  job.body = &body;
  const bool share = count > 1 && thread_count_ > 0;
  if (share) {
    // About eight chunks per thread: few enough claims to keep the counter cold, enough to balance uneven groups.
    job.chunk = std::max<uint64_t>(1, count / (uint64_t{8} * (thread_count_ + 1)));
    {
      std::lock_guard lock(mutex_);
      if (!started_) StartLocked();
      jobs_.push_back(&job);
    }
    const uint64_t chunks = (count + job.chunk - 1) / job.chunk;
    if (chunks - 1 >= thread_count_) {
      work_available_.notify_all();
    } else {
      for (uint64_t i = 0; i + 1 < chunks; ++i) work_available_.notify_one();
    }
  }
  Work(job, caller_scratch);
  if (!share) return;
  std::unique_lock lock(mutex_);
  RemoveLocked(&job);  // no worker joins it from now on
  helper_left_.wait(lock, [&job] { return job.helpers == 0; });
}

}  // namespace accel::host
