// Streams and events on the host device: real asynchrony, ordering within
// and across streams, timing, asynchronous errors, use from many threads.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <latch>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gate.h"
#include "native_kernels.h"
#include "test_util.h"

namespace {

using accel_test::BufferDesc;
using accel_test::Gate;
using accel_test::ScopedInstance;

// gated_scale(gate, data): waits until the gate (its address as a uint64 scalar) opens, then data[0] = data[1] * 10
// (uint32). A kernel that runs as long as the test wants, and whose result shows what ran before it.
accel_status_t GatedScale(const accel_native_work_group_t*, const accel_native_arg_t* args) {
  uint64_t gate = 0;
  std::memcpy(&gate, args[0].pointer, sizeof(gate));
  (void)Gate::Wait(reinterpret_cast<Gate*>(static_cast<uintptr_t>(gate)), ACCEL_SUCCESS);
  auto* data = static_cast<uint32_t*>(args[1].pointer);
  data[0] = data[1] * 10;
  return ACCEL_SUCCESS;
}
const accel_kernel_argument_info_t kGatedScaleArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 8, "gate"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ_WRITE, 0, "data"),
};
const accel_native_kernel_desc_t kInlineKernels[] = {
    accel_test::NativeKernel("gated_scale", GatedScale, kGatedScaleArgs, 2),
    accel_test::NativeKernel("fail_at", accel_test::FailAt, accel_test::kFailAtArgs, 1),
};
const accel_native_module_t kInlineModule = {
    ACCEL_STRUCTURE_TYPE_NATIVE_MODULE, sizeof(accel_native_module_t), nullptr, kInlineKernels, 2, 0};

accel_status_t WaitOnLatch(void* latch, accel_status_t status) {
  if (status == ACCEL_SUCCESS) static_cast<std::latch*>(latch)->wait();
  return ACCEL_SUCCESS;
}

// Appends its id to a shared log when it runs.
struct Order {
  std::mutex mutex;
  std::vector<int> seen;
  struct Step {
    Order* order;
    int id;
  };
  std::vector<std::unique_ptr<Step>> steps;
  Step* Make(int id) { return steps.emplace_back(new Step{this, id}).get(); }
  static accel_status_t Run(void* p, accel_status_t status) {
    auto* step = static_cast<Step*>(p);
    std::lock_guard lock(step->order->mutex);
    step->order->seen.push_back(status == ACCEL_SUCCESS ? step->id : -step->id);
    return ACCEL_SUCCESS;
  }
};

class StreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = instance_.DeviceOf("host");
    ASSERT_NE(device_, nullptr);
  }
  accel_stream_t NewStream() {
    accel_stream_t s = nullptr;
    EXPECT_EQ(accel_stream_create(device_, nullptr, &s), ACCEL_SUCCESS) << accel_last_error();
    return s;
  }
  accel_event_t NewEvent(uint64_t flags = 0) {
    accel_event_desc_t desc{};
    desc.stype = ACCEL_STRUCTURE_TYPE_EVENT_DESC;
    desc.struct_size = sizeof(desc);
    desc.flags = flags;
    accel_event_t e = nullptr;
    EXPECT_EQ(accel_event_create(device_, &desc, &e), ACCEL_SUCCESS) << accel_last_error();
    return e;
  }
  ScopedInstance instance_{nullptr};
  accel_device_t device_ = nullptr;
};

TEST_F(StreamTest, EnqueueReturnsAtOnceAndWorkCompletesInOrderWhenReleased) {
  accel_stream_t stream = NewStream();
  accel_event_t done = NewEvent();
  std::latch gate(1);
  Order order;
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, &WaitOnLatch, &gate), ACCEL_SUCCESS);
  for (int i = 1; i <= 3; ++i)
    ASSERT_EQ(accel_stream_enqueue_host_callback(stream, &Order::Run, order.Make(i)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_record_event(stream, done), ACCEL_SUCCESS);
  // Nothing ran: the worker is blocked on the latch while we hold it.
  EXPECT_EQ(accel_event_query(done), ACCEL_NOT_READY);
  EXPECT_EQ(accel_stream_query(stream), ACCEL_NOT_READY);
  EXPECT_EQ(accel_stream_synchronize(stream, 1'000'000), ACCEL_ERROR_TIMEOUT);
  EXPECT_EQ(accel_event_synchronize(done, 1'000'000), ACCEL_ERROR_TIMEOUT);
  {
    std::lock_guard lock(order.mutex);
    EXPECT_TRUE(order.seen.empty());
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30)) << "enqueue blocked";
  gate.count_down();
  ASSERT_EQ(accel_event_synchronize(done, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_query(stream), ACCEL_SUCCESS);
  EXPECT_EQ(order.seen, (std::vector<int>{1, 2, 3}));
  accel_event_destroy(done);
  accel_stream_destroy(stream);
}

TEST_F(StreamTest, CrossStreamWaitOrdersWork) {
  accel_stream_t producer = NewStream(), consumer = NewStream();
  accel_event_t ready = NewEvent();
  accel_buffer_desc_t desc = BufferDesc(1 << 16);
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_create(device_, &desc, &buffer), ACCEL_SUCCESS);
  std::latch gate(1);
  std::vector<uint8_t> in(1 << 16, 0x3C), out(1 << 16, 0);
  ASSERT_EQ(accel_stream_enqueue_host_callback(producer, &WaitOnLatch, &gate), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(producer, in.data(), buffer, 0, in.size()), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_record_event(producer, ready), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_wait_event(consumer, ready), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(consumer, buffer, 0, out.data(), out.size()), ACCEL_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(accel_stream_query(consumer), ACCEL_NOT_READY) << "the consumer must wait for the producer";
  gate.count_down();
  ASSERT_EQ(accel_stream_synchronize(consumer, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(out, in);
  accel_stream_destroy(producer);
  accel_stream_destroy(consumer);
  accel_event_destroy(ready);
  accel_buffer_destroy(buffer);
}

TEST_F(StreamTest, NeverRecordedEventIsCompleteAndRerecordReplaces) {
  accel_stream_t stream = NewStream();
  accel_event_t e = NewEvent();
  EXPECT_EQ(accel_event_query(e), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_wait_event(stream, e), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  std::latch gate(1);
  ASSERT_EQ(accel_stream_record_event(stream, e), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(accel_event_query(e), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, &WaitOnLatch, &gate), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_record_event(stream, e), ACCEL_SUCCESS);
  EXPECT_EQ(accel_event_query(e), ACCEL_NOT_READY) << "the new record is pending";
  gate.count_down();
  EXPECT_EQ(accel_event_synchronize(e, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  accel_event_destroy(e);
  accel_stream_destroy(stream);
}

accel_status_t Sleep2ms(void*, accel_status_t) {
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return ACCEL_SUCCESS;
}

TEST_F(StreamTest, EventTimingIsMonotonic) {
  accel_stream_t stream = NewStream();
  std::vector<accel_event_t> events;
  for (int i = 0; i < 4; ++i) {
    events.push_back(NewEvent(ACCEL_EVENT_FLAG_TIMING));
    ASSERT_EQ(accel_stream_record_event(stream, events.back()), ACCEL_SUCCESS);
    ASSERT_EQ(accel_stream_enqueue_host_callback(stream, &Sleep2ms, nullptr), ACCEL_SUCCESS);
  }
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  uint64_t previous = 0;
  for (size_t i = 1; i < events.size(); ++i) {
    uint64_t ns = 0;
    ASSERT_EQ(accel_event_elapsed_time(events[0], events[i], &ns), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_GE(ns, previous);
    EXPECT_GE(ns, i * 2'000'000u) << "each gap holds a 2 ms sleep";
    previous = ns;
  }
  accel_event_t untimed = NewEvent();
  ASSERT_EQ(accel_stream_record_event(stream, untimed), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  uint64_t ns = 0;
  EXPECT_EQ(accel_event_elapsed_time(events[0], untimed, &ns), ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_NE(std::string(accel_last_error()).find("'end' was created without ACCEL_EVENT_FLAG_TIMING"),
            std::string::npos);
  accel_event_t unrecorded = NewEvent(ACCEL_EVENT_FLAG_TIMING);
  EXPECT_EQ(accel_event_elapsed_time(events[0], unrecorded, &ns), ACCEL_ERROR_FAILED_PRECONDITION);
  for (accel_event_t e : events) accel_event_destroy(e);
  accel_event_destroy(untimed);
  accel_event_destroy(unrecorded);
  accel_stream_destroy(stream);
}

accel_status_t FailWithInternal(void*, accel_status_t) { return ACCEL_ERROR_INTERNAL; }

TEST_F(StreamTest, AsynchronousErrorsLandOnStreamAndEventsAndSkipLaterWork) {
  accel_stream_t stream = NewStream(), other = NewStream();
  accel_event_t after = NewEvent();
  Order order;
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, &Order::Run, order.Make(1)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, &FailWithInternal, nullptr), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, &Order::Run, order.Make(2)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_record_event(stream, after), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  std::string message = accel_last_error();
  EXPECT_NE(message.find("accel_stream_synchronize: 'stream' on device 0 (host: "), std::string::npos) << message;
  EXPECT_NE(message.find("host callback"), std::string::npos) << message;
  EXPECT_EQ(accel_last_error_status(), ACCEL_ERROR_INTERNAL);
  EXPECT_EQ(accel_stream_query(stream), ACCEL_ERROR_INTERNAL);
  EXPECT_EQ(accel_event_query(after), ACCEL_ERROR_INTERNAL);
  // The skipped callback still ran once, told of the error, so it could clean up.
  EXPECT_EQ(order.seen, (std::vector<int>{1, -2}));
  // The error passes to a stream that waits on the event.
  ASSERT_EQ(accel_stream_wait_event(other, after), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(other, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  // Cleared, the stream works again.
  ASSERT_EQ(accel_stream_clear_error(stream), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, &Order::Run, order.Make(3)), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(order.seen, (std::vector<int>{1, -2, 3}));
  accel_event_destroy(after);
  accel_stream_destroy(stream);
  accel_stream_destroy(other);
}

// On the host device a buffer's host address is its bytes: a copy between a buffer and a range of its own host
// address overlaps, and moves the bytes as memmove does (a memcpy there was undefined; ASan reports it).
TEST_F(StreamTest, CopiesBetweenABufferAndItsOwnHostAddressMayOverlap) {
  accel_buffer_desc_t desc = BufferDesc(16 * sizeof(uint32_t));
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_create(device_, &desc, &buffer), ACCEL_SUCCESS) << accel_last_error();
  void* address = nullptr;
  ASSERT_EQ(accel_buffer_get_host_address(buffer, &address), ACCEL_SUCCESS) << accel_last_error();
  auto* words = static_cast<uint32_t*>(address);
  accel_stream_t stream = NewStream();
  ASSERT_NE(stream, nullptr);
  std::vector<uint32_t> expected(16);
  for (uint32_t i = 0; i < 16; ++i) words[i] = expected[i] = i;
  // Up by one word: buffer[0, 12) from its own words [1, 13).
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, words + 1, buffer, 0, 12 * sizeof(uint32_t)), ACCEL_SUCCESS)
      << accel_last_error();
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  std::copy(expected.begin() + 1, expected.begin() + 13, expected.begin());
  EXPECT_EQ(std::vector<uint32_t>(words, words + 16), expected);
  // Down by two words: its words [2, 14) from buffer[0, 12).
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream, buffer, 0, words + 2, 12 * sizeof(uint32_t)), ACCEL_SUCCESS)
      << accel_last_error();
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  std::copy_backward(expected.begin(), expected.begin() + 12, expected.begin() + 14);
  EXPECT_EQ(std::vector<uint32_t>(words, words + 16), expected);
  accel_stream_destroy(stream);
  accel_buffer_destroy(buffer);
}

TEST_F(StreamTest, ManyThreadsShareTheDevice) {
  constexpr int kThreads = 4, kIterations = 20, kSize = 4096;
  std::atomic<int> failures{0};
  accel_stream_t shared = NewStream();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      accel_stream_t own = nullptr;
      if (accel_stream_create(device_, nullptr, &own) != ACCEL_SUCCESS) ++failures;
      for (int i = 0; i < kIterations; ++i) {
        accel_stream_t s = (i % 2 == 0) ? own : shared;
        accel_buffer_desc_t desc = BufferDesc(kSize);
        accel_buffer_t b = nullptr;
        if (accel_buffer_create(device_, &desc, &b) != ACCEL_SUCCESS) {
          ++failures;
          continue;
        }
        std::vector<uint8_t> in(kSize, static_cast<uint8_t>(t * 16 + i)), out(kSize, 0);
        accel_event_t e = nullptr;
        if (accel_event_create(device_, nullptr, &e) != ACCEL_SUCCESS) ++failures;
        if (accel_stream_copy_host_to_buffer(s, in.data(), b, 0, kSize) != ACCEL_SUCCESS) ++failures;
        if (accel_stream_copy_buffer_to_host(s, b, 0, out.data(), kSize) != ACCEL_SUCCESS) ++failures;
        if (accel_stream_free_buffer(s, b) != ACCEL_SUCCESS) ++failures;
        if (accel_stream_record_event(s, e) != ACCEL_SUCCESS) ++failures;
        if (accel_event_synchronize(e, ACCEL_TIMEOUT_INFINITE) != ACCEL_SUCCESS) ++failures;
        if (in != out) ++failures;
        accel_event_destroy(e);
      }
      if (accel_stream_destroy(own) != ACCEL_SUCCESS) ++failures;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(accel_stream_synchronize(shared, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  accel_stream_destroy(shared);
}

// Handle lookups take no lock shared with each other (docs/handles.md, "Lookup"): lookups racing a thread that
// destroys buffers and creates new ones in the freed slots must see, for each handle, its own buffer or "stale",
// never the buffer that reused the slot; lookups of one stream from many threads all succeed.
TEST_F(StreamTest, LookupsRacingDestroyAndSlotReuseNeverSeeAnotherBuffer) {
  constexpr int kBuffers = 600, kReaders = 3;
  accel_stream_t stream = NewStream();
  std::vector<accel_buffer_t> handles(kBuffers, nullptr);
  std::vector<uint64_t> sizes(kBuffers, 0);
  std::atomic<int> published{-1};  // handles[0..published] are written (some destroyed since)
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0}, seen_live{0}, seen_stale{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      uint32_t next = static_cast<uint32_t>(r) * 7919;
      while (!done.load(std::memory_order_acquire)) {
        if (accel_stream_query(stream) != ACCEL_SUCCESS) ++wrong;
        const int last = published.load(std::memory_order_acquire);
        if (last < 0) continue;
        next = next * 1103515245 + 12345;
        // Mostly the newest buffers, whose slots are being freed and reused right now.
        const int j = (next >> 8) % 4 == 0 ? static_cast<int>((next >> 12) % static_cast<uint32_t>(last + 1))
                                           : std::max(0, last - static_cast<int>((next >> 12) % 3));
        accel_buffer_properties_t props{};
        props.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
        props.struct_size = sizeof(props);
        const accel_status_t s = accel_buffer_get_properties(handles[j], &props);
        if (s == ACCEL_SUCCESS) {
          ++seen_live;
          if (props.size != sizes[j]) ++wrong;
        } else {
          ++seen_stale;
          if (s != ACCEL_ERROR_INVALID_HANDLE || std::strstr(accel_last_error(), "stale buffer handle") == nullptr) {
            ++wrong;
          }
        }
      }
    });
  }
  int failures = 0;
  for (int i = 0; i < kBuffers; ++i) {
    sizes[i] = 64 * (1 + static_cast<uint64_t>(i) % 97);  // a slot's next buffer differs in size from its last
    accel_buffer_desc_t desc = BufferDesc(sizes[i]);
    if (accel_buffer_create(device_, &desc, &handles[i]) != ACCEL_SUCCESS) ++failures;
    published.store(i, std::memory_order_release);
    if (i >= 2 && accel_buffer_destroy(handles[i - 2]) != ACCEL_SUCCESS) ++failures;  // its slot is reused next
    if (i % 64 == 0) std::this_thread::yield();
  }
  // Readers that a busy machine did not run during the churn still check both outcomes before they stop.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((seen_live.load() == 0 || seen_stale.load() == 0) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  done.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(seen_live.load(), 0);
  EXPECT_GT(seen_stale.load(), 0) << "no lookup raced a destroyed handle; the test proved nothing about reuse";
  accel_buffer_destroy(handles[kBuffers - 2]);
  accel_buffer_destroy(handles[kBuffers - 1]);
  accel_stream_destroy(stream);
}

// accel_stream_free_buffer while another thread's copy into the same buffer is in flight (docs/threading.md: never a
// crash; the call in flight keeps the backend buffer until it returns, and the free then follows, in the freeing
// stream's order). Every copy either completes on a live buffer or finds the handle stale, and once both streams are
// idle every buffer's bytes are back: the process holds what it held before.
TEST_F(StreamTest, AStreamOrderedFreeRacingAnotherThreadsCopyFreesTheBufferOnceTheCopyReturns) {
  constexpr int kRounds = 200;
  accel_stream_t freeing = NewStream();
  accel_stream_t copying = NewStream();
  accel_physical_device_t physical = nullptr;
  ASSERT_EQ(accel_device_get_physical_device(device_, &physical), ACCEL_SUCCESS) << accel_last_error();
  auto usage = [&] {
    accel_memory_usage_t u{};
    u.stype = ACCEL_STRUCTURE_TYPE_MEMORY_USAGE;
    u.struct_size = sizeof(u);
    EXPECT_EQ(accel_physical_device_get_memory_usage(physical, &u), ACCEL_SUCCESS) << accel_last_error();
    return u;
  };
  const accel_memory_usage_t before = usage();
  std::vector<unsigned char> bytes(64 * 1024, 7);
  int wrong = 0, copies = 0, stale = 0;
  for (int round = 0; round < kRounds; ++round) {
    accel_buffer_desc_t desc = BufferDesc(bytes.size());
    accel_buffer_t buffer = nullptr;
    ASSERT_EQ(accel_buffer_create(device_, &desc, &buffer), ACCEL_SUCCESS) << accel_last_error();
    std::atomic<bool> started{false};
    std::thread copier([&] {
      for (;;) {
        started.store(true, std::memory_order_release);
        const accel_status_t s = accel_stream_copy_host_to_buffer(copying, bytes.data(), buffer, 0, bytes.size());
        if (s == ACCEL_SUCCESS) {
          ++copies;
        } else {
          if (s != ACCEL_ERROR_INVALID_HANDLE) ++wrong;
          ++stale;
          return;
        }
      }
    });
    while (!started.load(std::memory_order_acquire)) std::this_thread::yield();
    if (round % 2 == 1) std::this_thread::yield();  // sometimes between two copies, sometimes inside one
    if (accel_stream_free_buffer(freeing, buffer) != ACCEL_SUCCESS) ++wrong;
    copier.join();
  }
  EXPECT_EQ(accel_stream_synchronize(copying, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(freeing, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(stale, kRounds) << "every copier ends on the stale handle";
  EXPECT_GT(copies, 0);
  const accel_memory_usage_t after = usage();
  EXPECT_EQ(after.buffers, before.buffers) << "a freed buffer is still counted";
  EXPECT_EQ(after.used, before.used) << "a freed buffer's bytes did not come back";
  EXPECT_EQ(accel_stream_destroy(copying), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_destroy(freeing), ACCEL_SUCCESS);
}

// A host callback queries its own stream (allowed) while another thread destroys the stream's handle, so the
// callback's call may hold the last reference: the stream is still destroyed once the callback returned, not leaked
// (the backend refuses a destroy from the stream's own worker and says so in the log, which must stay silent).
TEST(StreamRelease, AStreamWhoseLastReferenceGoesInItsOwnCallbackIsStillDestroyed) {
  struct Log {
    std::mutex mutex;
    std::vector<std::string> lines;
    static void Callback(void* user, accel_log_level_t, const char* message) {
      auto* self = static_cast<Log*>(user);
      std::lock_guard lock(self->mutex);
      self->lines.emplace_back(message);
    }
  } log;
  accel_instance_desc_t desc = ScopedInstance::Backends("host");
  desc.log_level = ACCEL_LOG_LEVEL_WARN;
  desc.log_callback = &Log::Callback;
  desc.log_user_data = &log;
  ScopedInstance instance(&desc);
  accel_device_t device = instance.DeviceOf("host");
  ASSERT_NE(device, nullptr);
  struct Round {
    accel_stream_t stream = nullptr;
    std::atomic<bool> started{false};
    std::atomic<bool> returned{false};
    std::atomic<int> wrong{0};
  };
  constexpr int kRounds = 100;
  std::vector<std::unique_ptr<Round>> rounds;
  for (int i = 0; i < kRounds; ++i) {
    auto& r = *rounds.emplace_back(std::make_unique<Round>());
    ASSERT_EQ(accel_stream_create(device, nullptr, &r.stream), ACCEL_SUCCESS) << accel_last_error();
    auto query_until_stale = [](void* p, accel_status_t) -> accel_status_t {
      auto* round = static_cast<Round*>(p);
      round->started = true;
      for (;;) {
        const accel_status_t s = accel_stream_query(round->stream);  // NOT_READY: this callback is pending
        if (s == ACCEL_ERROR_INVALID_HANDLE) break;
        if (s != ACCEL_NOT_READY) ++round->wrong;
      }
      round->returned = true;
      return ACCEL_SUCCESS;
    };
    ASSERT_EQ(accel_stream_enqueue_host_callback(r.stream, query_until_stale, &r), ACCEL_SUCCESS);
    while (!r.started) std::this_thread::yield();
    ASSERT_EQ(accel_stream_destroy(r.stream), ACCEL_SUCCESS) << accel_last_error();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (auto& r : rounds) {
    while (!r->returned && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    EXPECT_TRUE(r->returned);
    EXPECT_EQ(r->wrong.load(), 0);
  }
  std::lock_guard lock(log.mutex);  // a refused destroy is logged before the callback returns
  for (const std::string& line : log.lines) EXPECT_EQ(line.find("leaked"), std::string::npos) << line;
}

TEST_F(StreamTest, DestroyWaitsForPendingWork) {
  accel_stream_t stream = NewStream();
  std::atomic<bool> ran{false};
  auto mark = [](void* p, accel_status_t) -> accel_status_t {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    static_cast<std::atomic<bool>*>(p)->store(true);
    return ACCEL_SUCCESS;
  };
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, mark, &ran), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  EXPECT_TRUE(ran.load());
  EXPECT_EQ(accel_stream_query(stream), ACCEL_ERROR_INVALID_HANDLE);
}

// A callback that destroys its own stream (issue 22, item 7) is refused with
// FAILED_PRECONDITION; the stream keeps working and is destroyed normally
// afterwards (LeakSanitizer checks that nothing leaked). A callback may
// destroy another stream; it may not destroy its instance.
struct DestroyFromCallback {
  accel_stream_t target = nullptr;
  accel_instance_t instance = nullptr;
  accel_status_t status = ACCEL_SUCCESS;
  accel_status_t instance_status = ACCEL_SUCCESS;
  accel_status_t sync_status = ACCEL_SUCCESS;
  std::string message;
  std::string sync_message;
  std::string instance_message;
  static accel_status_t Run(void* p, accel_status_t) {
    auto* self = static_cast<DestroyFromCallback*>(p);
    if (self->instance != nullptr) {
      self->sync_status = accel_stream_synchronize(self->target, ACCEL_TIMEOUT_INFINITE);
      self->sync_message = accel_last_error();
    }
    self->status = accel_stream_destroy(self->target);
    self->message = accel_last_error();
    if (self->instance != nullptr) {
      self->instance_status = accel_instance_destroy(self->instance);
      self->instance_message = accel_last_error();
    }
    return ACCEL_SUCCESS;
  }
};

TEST_F(StreamTest, DestroyFromItsOwnCallbackIsRefusedAndTheStreamKeepsWorking) {
  accel_stream_t stream = NewStream();
  DestroyFromCallback call;
  call.target = stream;
  call.instance = instance_.get();
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, &DestroyFromCallback::Run, &call), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(call.status, ACCEL_ERROR_FAILED_PRECONDITION) << call.message;
  EXPECT_NE(call.message.find("accel_stream_destroy: 'stream' on device 0 (host"), std::string::npos) << call.message;
  EXPECT_NE(call.message.find("is running this host callback: a stream cannot be destroyed from its own callback"),
            std::string::npos)
      << call.message;
  EXPECT_EQ(call.sync_status, ACCEL_ERROR_FAILED_PRECONDITION) << call.sync_message;
  EXPECT_NE(call.sync_message.find("synchronizing a stream from its own callback would wait for itself"),
            std::string::npos)
      << call.sync_message;
  EXPECT_EQ(call.instance_status, ACCEL_ERROR_FAILED_PRECONDITION) << call.instance_message;
  EXPECT_NE(call.instance_message.find("an instance cannot be destroyed from a callback of its own streams"),
            std::string::npos)
      << call.instance_message;
  // Still a live stream, and the instance still works.
  accel_buffer_desc_t desc = BufferDesc(16);
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_create(device_, &desc, &buffer), ACCEL_SUCCESS) << accel_last_error();
  const char in[16] = "still works";
  char out[16] = {};
  EXPECT_EQ(accel_stream_copy_host_to_buffer(stream, in, buffer, 0, sizeof(in)), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_copy_buffer_to_host(stream, buffer, 0, out, sizeof(out)), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_STREQ(out, "still works");
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_query(stream), ACCEL_ERROR_INVALID_HANDLE);
}

TEST_F(StreamTest, CallbackMayDestroyAnotherStream) {
  accel_stream_t stream = NewStream();
  accel_stream_t other = NewStream();
  std::atomic<bool> ran{false};
  auto mark = [](void* p, accel_status_t) -> accel_status_t {
    static_cast<std::atomic<bool>*>(p)->store(true);
    return ACCEL_SUCCESS;
  };
  ASSERT_EQ(accel_stream_enqueue_host_callback(other, mark, &ran), ACCEL_SUCCESS);
  DestroyFromCallback call;
  call.target = other;
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, &DestroyFromCallback::Run, &call), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(call.status, ACCEL_SUCCESS) << call.message;
  EXPECT_TRUE(ran.load()) << "destroying the other stream waited for its callback";
  EXPECT_EQ(accel_stream_query(other), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
}

// A callback that throws fails its stream (the host backend catches it: INTERNAL), and the callbacks after it, on
// the same worker thread, still know which callback runs: the core's record of the running callback was left at the
// freed one, which every later check walked (ASan: heap-use-after-free; a reused address: a false refusal).
TEST_F(StreamTest, ACallbackThatThrowsLeavesTheNextCallbacksChecksWorking) {
  accel_stream_t stream = NewStream();
  accel_stream_t other = NewStream();
  auto thrower = [](void*, accel_status_t) -> accel_status_t { throw std::runtime_error("thrown by the callback"); };
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, thrower, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  EXPECT_NE(std::string(accel_last_error()).find("(host callback) threw an exception"), std::string::npos)
      << accel_last_error();
  ASSERT_EQ(accel_stream_clear_error(stream), ACCEL_SUCCESS) << accel_last_error();
  DestroyFromCallback call;  // synchronizes and destroys `other` from a callback of `stream`: allowed
  call.target = other;
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, &DestroyFromCallback::Run, &call), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(call.status, ACCEL_SUCCESS) << call.message;
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS) << accel_last_error();
}

// Copies, fills, records and frees on an idle stream may run on the caller's thread (docs/streams.md). These tests
// pin what must hold either way: stream order, events, statistics and errors.
class InlineCopyTest : public StreamTest {
 protected:
  void SetUp() override {
    StreamTest::SetUp();
    const accel_module_source_t source = accel_test::NativeSource(kInlineModule);
    const accel_module_desc_t desc = accel_test::ModuleDesc(&source, 1, "inline");
    ASSERT_EQ(accel_module_create(device_, &desc, &module_), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_module_get_kernel(module_, "gated_scale", &gated_scale_), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_module_get_kernel(module_, "fail_at", &fail_at_), ACCEL_SUCCESS) << accel_last_error();
    accel_buffer_desc_t bdesc = BufferDesc(8);
    ASSERT_EQ(accel_buffer_create(device_, &bdesc, &buffer_), ACCEL_SUCCESS) << accel_last_error();
    stream_ = NewStream();
  }
  void TearDown() override {
    if (stream_ != nullptr) accel_stream_destroy(stream_);
    if (buffer_ != nullptr) accel_buffer_destroy(buffer_);
    if (module_ != nullptr) accel_module_destroy(module_);
  }
  accel_status_t LaunchGated(Gate* gate) {
    gate_address_ = reinterpret_cast<uintptr_t>(gate);
    const accel_kernel_arg_t args[2] = {accel_test::ScalarArg(&gate_address_), accel_test::BufferArg(buffer_)};
    const accel_launch_desc_t launch = accel_test::Launch({1, 1, 1}, {1, 1, 1}, args, 2);
    return accel_stream_launch_kernel(stream_, gated_scale_, &launch);
  }
  accel_copy_statistics_t Statistics() {
    accel_copy_statistics_t stats{};
    stats.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
    stats.struct_size = sizeof(stats);
    EXPECT_EQ(accel_stream_get_copy_statistics(stream_, &stats), ACCEL_SUCCESS) << accel_last_error();
    return stats;
  }

  accel_module_t module_ = nullptr;
  accel_kernel_t gated_scale_ = nullptr;
  accel_kernel_t fail_at_ = nullptr;
  accel_buffer_t buffer_ = nullptr;
  accel_stream_t stream_ = nullptr;
  uint64_t gate_address_ = 0;
};

TEST_F(InlineCopyTest, CopiesQueuedBehindASlowKernelRunAfterItInOrder) {
  const uint32_t initial[2] = {1, 5};
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, initial, buffer_, 0, sizeof(initial)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();

  Gate gate;
  accel_event_t after = NewEvent();
  ASSERT_EQ(LaunchGated(&gate), ACCEL_SUCCESS) << accel_last_error();
  // Behind the kernel, which reads data[1]: an upload that overwrites data[1], then a download of both elements.
  const uint32_t seven = 7;
  uint32_t out[2] = {0xDEADBEEF, 0xDEADBEEF};
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, &seven, buffer_, 4, 4), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, buffer_, 0, out, sizeof(out)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_record_event(stream_, after), ACCEL_SUCCESS);
  // The kernel is still held: neither copy may have run (an inline download would have written `out`).
  EXPECT_EQ(out[0], 0xDEADBEEF);
  EXPECT_EQ(out[1], 0xDEADBEEF);
  EXPECT_EQ(accel_event_query(after), ACCEL_NOT_READY);
  EXPECT_EQ(accel_stream_query(stream_), ACCEL_NOT_READY);
  EXPECT_EQ(Statistics().host_to_device_copies, 1u) << "only the first upload completed";

  gate.Open();
  ASSERT_EQ(accel_event_synchronize(after, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(out[0], 50u) << "the kernel read data[1] before the upload behind it overwrote it";
  EXPECT_EQ(out[1], 7u) << "the download ran after the upload";
  const accel_copy_statistics_t stats = Statistics();
  EXPECT_EQ(stats.host_to_device_copies, 2u);
  EXPECT_EQ(stats.device_to_host_copies, 1u);
  accel_event_destroy(after);
}

TEST_F(InlineCopyTest, CopiesFromManyThreadsKeepEachThreadsOrder) {
  // Each thread uploads to its own slot and downloads it back, without waiting in between: whichever copies run
  // inline and whichever queue behind another thread's, each download sees the upload its thread enqueued before.
  constexpr uint32_t kThreads = 4;
  accel_buffer_desc_t desc = BufferDesc(kThreads * 4);
  accel_buffer_t slots = nullptr;
  ASSERT_EQ(accel_buffer_create(device_, &desc, &slots), ACCEL_SUCCESS) << accel_last_error();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t i = 0; i < 200; ++i) {
        const uint32_t value = t * 1000 + i;
        uint32_t back = 0;
        if (accel_stream_copy_host_to_buffer(stream_, &value, slots, t * 4, 4) != ACCEL_SUCCESS ||
            accel_stream_copy_buffer_to_host(stream_, slots, t * 4, &back, 4) != ACCEL_SUCCESS ||
            accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE) != ACCEL_SUCCESS || back != value) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  const accel_copy_statistics_t stats = Statistics();
  EXPECT_EQ(stats.host_to_device_copies, kThreads * 200);
  EXPECT_EQ(stats.device_to_host_copies, kThreads * 200);
  accel_buffer_destroy(slots);
}

TEST_F(InlineCopyTest, EventsRecordedAfterAnIdleStreamCopyCompleteWithIt) {
  accel_event_t start = NewEvent(ACCEL_EVENT_FLAG_TIMING);
  accel_event_t end = NewEvent(ACCEL_EVENT_FLAG_TIMING);
  const uint32_t value[2] = {3, 4};
  uint32_t back[2] = {0, 0};
  ASSERT_EQ(accel_stream_record_event(stream_, start), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, value, buffer_, 0, sizeof(value)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, buffer_, 0, back, sizeof(back)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_record_event(stream_, end), ACCEL_SUCCESS);
  ASSERT_EQ(accel_event_synchronize(end, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(back[0], 3u);
  EXPECT_EQ(back[1], 4u);
  EXPECT_EQ(accel_event_query(start), ACCEL_SUCCESS);
  uint64_t ns = UINT64_MAX;
  EXPECT_EQ(accel_event_elapsed_time(start, end, &ns), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_NE(ns, UINT64_MAX);
  accel_event_destroy(start);
  accel_event_destroy(end);
}

TEST_F(InlineCopyTest, CopiesOnAStreamWithAnErrorAreSkippedNotRunInline) {
  const uint32_t zero[2] = {0, 0};
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, zero, buffer_, 0, sizeof(zero)), ACCEL_SUCCESS);
  const uint32_t group = 0;
  const accel_kernel_arg_t arg = accel_test::ScalarArg(&group);
  const accel_launch_desc_t launch = accel_test::Launch({1, 1, 1}, {1, 1, 1}, &arg, 1);
  ASSERT_EQ(accel_stream_launch_kernel(stream_, fail_at_, &launch), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  // The stream is idle but holds the error: the upload is skipped, the download leaves `back` alone, and an event
  // recorded after them carries the error.
  const uint32_t nine[2] = {9, 9};
  uint32_t back[2] = {0xDEADBEEF, 0xDEADBEEF};
  accel_event_t after = NewEvent();
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, nine, buffer_, 0, sizeof(nine)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, buffer_, 0, back, sizeof(back)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_record_event(stream_, after), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  EXPECT_EQ(accel_event_synchronize(after, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  EXPECT_EQ(back[0], 0xDEADBEEF);
  EXPECT_EQ(Statistics().host_to_device_copies, 1u) << "skipped copies do not count";
  ASSERT_EQ(accel_stream_clear_error(stream_), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, buffer_, 0, back, sizeof(back)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(back[0], 0u) << "the upload after the error never ran";
  EXPECT_EQ(back[1], 0u);
  accel_event_destroy(after);
}

}  // namespace
