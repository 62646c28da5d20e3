// Profile `streams`: ordering within a stream, cross-stream waits on events,
// host callbacks, event queries, monotonic timing, error propagation to events,
// and many streams from many threads (docs/conformance.md).
#include <thread>

#include "harness.h"

namespace accel::conformance {
namespace {

struct CallbackLog {
  std::mutex mutex;
  std::vector<int> order;
  std::vector<accel_status_t> statuses;
};

struct LogEntry {
  CallbackLog* log;
  int value;
  accel_status_t result;
};

accel_status_t LogCallback(void* user_data, accel_status_t status) {
  auto* e = static_cast<LogEntry*>(user_data);
  std::lock_guard lock(e->log->mutex);
  e->log->order.push_back(e->value);
  e->log->statuses.push_back(status);
  return e->result;
}

accel_status_t SleepCallback(void* user_data, accel_status_t /*status*/) {
  std::this_thread::sleep_for(std::chrono::milliseconds(*static_cast<int*>(user_data)));
  return ACCEL_SUCCESS;
}

}  // namespace

ACCEL_CONFORMANCE_DEVICE_CASE(kStreams, order, writes_in_enqueue_order) {
  // Consecutive writes to one range complete in the order enqueued: the last
  // one wins. Held behind a gate, so nothing runs before all are enqueued.
  Stream stream(dut);
  const uint64_t size = 4096;
  Buffer b(dut, size);
  ASSERT_NE(b.get(), nullptr);
  std::vector<std::vector<uint8_t>> versions;
  for (uint32_t v = 0; v < 6; ++v) versions.push_back(Pattern(size, 100 + v));
  std::vector<uint8_t> out(size, 0);
  {
    Gate gate;
    ACCEL_ASSERT_OK(gate.EnqueueOn(stream.get()));
    for (const auto& v : versions) {
      ACCEL_ASSERT_OK(accel_stream_copy_host_to_buffer(stream.get(), v.data(), b.get(), 0, size));
    }
    ACCEL_ASSERT_OK(accel_stream_copy_buffer_to_host(stream.get(), b.get(), 0, out.data(), size));
    gate.Open();
    ACCEL_ASSERT_OK(stream.Sync());
  }
  EXPECT_EQ(out, versions.back()) << "the last write enqueued is not the one left in the buffer";
}

ACCEL_CONFORMANCE_DEVICE_CASE(kStreams, order, callbacks_run_once_in_order) {
  Stream stream(dut);
  CallbackLog log;
  std::vector<LogEntry> entries;
  for (int i = 0; i < 64; ++i) entries.push_back({&log, i, ACCEL_SUCCESS});
  for (auto& e : entries) ACCEL_ASSERT_OK(accel_stream_enqueue_host_callback(stream.get(), LogCallback, &e));
  ACCEL_ASSERT_OK(stream.Sync());
  std::vector<int> expect(64);
  for (int i = 0; i < 64; ++i) expect[i] = i;
  EXPECT_EQ(log.order, expect) << "callbacks ran out of order, twice or not at all";
  for (accel_status_t s : log.statuses) EXPECT_EQ(s, ACCEL_SUCCESS);
}

ACCEL_CONFORMANCE_DEVICE_CASE(kStreams, order, callback_sees_prior_copies) {
  Stream stream(dut);
  const uint64_t size = 1024;
  Buffer b(dut, size);
  ASSERT_NE(b.get(), nullptr);
  const std::vector<uint8_t> data = Pattern(size, 11);
  std::vector<uint8_t> out(size, 0);
  struct Check {
    std::vector<uint8_t>* out;
    const std::vector<uint8_t>* data;
    bool matched = false;
  } check{&out, &data};
  ACCEL_ASSERT_OK(accel_stream_copy_host_to_buffer(stream.get(), data.data(), b.get(), 0, size));
  ACCEL_ASSERT_OK(accel_stream_copy_buffer_to_host(stream.get(), b.get(), 0, out.data(), size));
  ACCEL_ASSERT_OK(accel_stream_enqueue_host_callback(
      stream.get(),
      [](void* user, accel_status_t) -> accel_status_t {
        auto* c = static_cast<Check*>(user);
        c->matched = *c->out == *c->data;
        return ACCEL_SUCCESS;
      },
      &check));
  ACCEL_ASSERT_OK(stream.Sync());
  EXPECT_TRUE(check.matched) << "a host callback ran before the copies enqueued ahead of it completed";
}

ACCEL_CONFORMANCE_DEVICE_CASE(kStreams, events, pending_until_prior_work_completes) {
  Stream stream(dut);
  Event event(dut);
  ASSERT_NE(event.get(), nullptr);
  EXPECT_EQ(accel_event_query(event.get()), ACCEL_SUCCESS) << "an event never recorded is complete";
  Gate gate;
  ACCEL_ASSERT_OK(gate.EnqueueOn(stream.get()));
  ACCEL_ASSERT_OK(accel_stream_record_event(stream.get(), event.get()));
  ASSERT_TRUE(gate.WaitUntilEntered(std::chrono::seconds(10))) << "the stream never started its work";
  EXPECT_EQ(accel_event_query(event.get()), ACCEL_NOT_READY) << "the event completed before the work before it";
  EXPECT_EQ(accel_event_synchronize(event.get(), 2000000), ACCEL_ERROR_TIMEOUT)
      << "event_synchronize returned while the work before it was pending";
  EXPECT_EQ(accel_stream_query(stream.get()), ACCEL_NOT_READY)
      << "stream_query while a host callback was running and an event record was queued behind it: both are "
         "pending; return ACCEL_NOT_READY (docs/streams.md)";
  gate.Open();
  ACCEL_EXPECT_OK(accel_event_synchronize(event.get(), ACCEL_TIMEOUT_INFINITE));
  EXPECT_EQ(accel_event_query(event.get()), ACCEL_SUCCESS);
  ACCEL_EXPECT_OK(stream.Sync());
}

ACCEL_CONFORMANCE_DEVICE_CASE(kStreams, events, synchronize_waits_for_the_work) {
  Stream stream(dut);
  Event event(dut);
  std::atomic<bool> done{false};
  struct Slow {
    std::atomic<bool>* done;
  } slow{&done};
  ACCEL_ASSERT_OK(accel_stream_enqueue_host_callback(
      stream.get(),
      [](void* user, accel_status_t) -> accel_status_t {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        static_cast<Slow*>(user)->done->store(true);
        return ACCEL_SUCCESS;
      },
      &slow));
  ACCEL_ASSERT_OK(accel_stream_record_event(stream.get(), event.get()));
  ACCEL_ASSERT_OK(accel_event_synchronize(event.get(), ACCEL_TIMEOUT_INFINITE));
  EXPECT_TRUE(done.load()) << "event_synchronize returned before the work recorded before the event ran";
  ACCEL_EXPECT_OK(stream.Sync());
}

ACCEL_CONFORMANCE_DEVICE_CASE(kStreams, events, cross_stream_wait) {
  Stream producer(dut);
  Stream consumer(dut);
  Event event(dut);
  const uint64_t size = 8192;
  Buffer b(dut, size);
  ASSERT_NE(b.get(), nullptr);
  const std::vector<uint8_t> data = Pattern(size, 12);
  std::vector<uint8_t> out(size, 0);
  {
    Gate gate;
    ACCEL_ASSERT_OK(gate.EnqueueOn(producer.get()));
    ACCEL_ASSERT_OK(accel_stream_copy_host_to_buffer(producer.get(), data.data(), b.get(), 0, size));
    ACCEL_ASSERT_OK(accel_stream_record_event(producer.get(), event.get()));
    ACCEL_ASSERT_OK(accel_stream_wait_event(consumer.get(), event.get()));
    ACCEL_ASSERT_OK(accel_stream_copy_buffer_to_host(consumer.get(), b.get(), 0, out.data(), size));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(accel_stream_query(consumer.get()), ACCEL_NOT_READY) << "the consumer did not wait for the event";
    gate.Open();
    ACCEL_ASSERT_OK(consumer.Sync());
  }
  EXPECT_EQ(out, data) << "the consumer read before the producer's write completed";
  ACCEL_EXPECT_OK(producer.Sync());
}

ACCEL_CONFORMANCE_DEVICE_CASE(kStreams, errors, propagate_to_events_and_callbacks) {
  Stream stream(dut);
  Event before(dut);
  Event after(dut);
  CallbackLog log;
  LogEntry fail{&log, 1, ACCEL_ERROR_INTERNAL};
  LogEntry later{&log, 2, ACCEL_SUCCESS};
  ACCEL_ASSERT_OK(accel_stream_record_event(stream.get(), before.get()));
  ACCEL_ASSERT_OK(accel_stream_enqueue_host_callback(stream.get(), LogCallback, &fail));
  ACCEL_ASSERT_OK(accel_stream_record_event(stream.get(), after.get()));
  ACCEL_ASSERT_OK(accel_stream_enqueue_host_callback(stream.get(), LogCallback, &later));
  EXPECT_EQ(stream.Sync(), ACCEL_ERROR_INTERNAL) << "the stream did not report the callback's error";
  EXPECT_EQ(accel_event_synchronize(before.get(), ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS)
      << "an event recorded before the failure took the error";
  EXPECT_EQ(accel_event_synchronize(after.get(), ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL)
      << "an event recorded after the failure did not take the error";
  EXPECT_EQ(accel_stream_query(stream.get()), ACCEL_ERROR_INTERNAL);
  ASSERT_EQ(log.statuses.size(), 2u);
  EXPECT_EQ(log.statuses[0], ACCEL_SUCCESS);
  EXPECT_EQ(log.statuses[1], ACCEL_ERROR_INTERNAL) << "a later callback was not told the stream's error";
  // Cleared, the stream works again.
  ACCEL_ASSERT_OK(accel_stream_clear_error(stream.get()));
  const uint64_t size = 64;
  Buffer b(dut, size);
  const std::vector<uint8_t> data = Pattern(size, 13);
  Upload(stream, b.get(), 0, data.data(), size);
  EXPECT_EQ(Download(stream, b.get(), 0, size), data);
}

ACCEL_CONFORMANCE_DEVICE_CASE(kStreams, sync, timeout_then_completion) {
  // Checked once the gate runs, so the verdict never depends on when the
  // worker picks it up: work that has started but not completed is pending.
  Stream stream(dut);
  Gate gate;
  ACCEL_ASSERT_OK(gate.EnqueueOn(stream.get()));
  ASSERT_TRUE(gate.WaitUntilEntered(std::chrono::seconds(10)))
      << "a host callback enqueued on an idle stream did not start within 10 s";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(accel_stream_synchronize(stream.get(), 5000000), ACCEL_ERROR_TIMEOUT)
      << "stream_synchronize(5 ms) while a host callback was running: it is pending; return ACCEL_ERROR_TIMEOUT "
         "(docs/streams.md)";
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(4)) << "a 5 ms timeout returned early";
  EXPECT_EQ(accel_stream_synchronize(stream.get(), 0), ACCEL_ERROR_TIMEOUT) << "a zero timeout polls";
  gate.Open();
  ACCEL_EXPECT_OK(stream.Sync());
  EXPECT_EQ(accel_stream_query(stream.get()), ACCEL_SUCCESS);
}

ACCEL_CONFORMANCE_DEVICE_CASE(kStreams, timing, monotonic) {
  ACCEL_REQUIRE_FEATURE(dut, ACCEL_DEVICE_FEATURE_EVENT_TIMING);
  Stream stream(dut);
  Event e1(dut, ACCEL_EVENT_FLAG_TIMING);
  Event e2(dut, ACCEL_EVENT_FLAG_TIMING);
  Event e3(dut, ACCEL_EVENT_FLAG_TIMING);
  Event untimed(dut, 0);
  int sleep_ms = 10;
  ACCEL_ASSERT_OK(accel_stream_record_event(stream.get(), e1.get()));
  ACCEL_ASSERT_OK(accel_stream_enqueue_host_callback(stream.get(), SleepCallback, &sleep_ms));
  ACCEL_ASSERT_OK(accel_stream_record_event(stream.get(), e2.get()));
  ACCEL_ASSERT_OK(accel_stream_record_event(stream.get(), e3.get()));
  ACCEL_ASSERT_OK(accel_stream_record_event(stream.get(), untimed.get()));
  ACCEL_ASSERT_OK(stream.Sync());
  uint64_t t12 = 0;
  uint64_t t13 = 0;
  uint64_t t23 = 0;
  ACCEL_ASSERT_OK(accel_event_elapsed_time(e1.get(), e2.get(), &t12));
  ACCEL_ASSERT_OK(accel_event_elapsed_time(e1.get(), e3.get(), &t13));
  ACCEL_ASSERT_OK(accel_event_elapsed_time(e2.get(), e3.get(), &t23));
  // The 10 ms callback lies between e1 and e2 (a semantic bound, not a speed one).
  EXPECT_GE(t12, 9000000u) << "elapsed time shorter than the work between the events";
  EXPECT_GE(t13, t12) << "later events are not later";
  EXPECT_LE(t23, t13);
  // Reversed (an end recorded before its start): never negative, never a wrapped counter, 0 (docs/streams.md).
  uint64_t t21 = 99;
  ACCEL_ASSERT_OK(accel_event_elapsed_time(e2.get(), e1.get(), &t21));
  EXPECT_EQ(t21, 0u) << "elapsed time from e2 back to e1, recorded 10 ms before it, must clamp at 0";
  uint64_t t = 0;
  EXPECT_EQ(accel_event_elapsed_time(e1.get(), untimed.get(), &t), ACCEL_ERROR_FAILED_PRECONDITION)
      << "an event created without timing";
  Event never(dut, ACCEL_EVENT_FLAG_TIMING);
  EXPECT_EQ(accel_event_elapsed_time(e1.get(), never.get(), &t), ACCEL_ERROR_FAILED_PRECONDITION)
      << "an event never recorded";
  // A pending event is NOT_READY.
  Gate gate;
  Event pending(dut, ACCEL_EVENT_FLAG_TIMING);
  ACCEL_ASSERT_OK(gate.EnqueueOn(stream.get()));
  ACCEL_ASSERT_OK(accel_stream_record_event(stream.get(), pending.get()));
  EXPECT_EQ(accel_event_elapsed_time(e1.get(), pending.get(), &t), ACCEL_NOT_READY);
  gate.Open();
  ACCEL_EXPECT_OK(stream.Sync());
}

ACCEL_CONFORMANCE_DEVICE_CASE(kStreams, threads, many_streams_from_many_threads) {
  constexpr int kThreads = 8;
  constexpr int kStreamsPerThread = 4;
  constexpr uint64_t kSize = 16384;
  std::atomic<int> mismatches{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<accel_stream_t> streams;
      std::vector<accel_buffer_t> buffers;
      std::vector<std::vector<uint8_t>> data;
      std::vector<std::vector<uint8_t>> out;
      for (int s = 0; s < kStreamsPerThread; ++s) {
        accel_stream_t stream = nullptr;
        accel_buffer_t buffer = nullptr;
        accel_buffer_desc_t desc{
            ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), nullptr, kSize, ACCEL_MEMORY_KIND_DEVICE, 0, 0};
        if (accel_stream_create(dut.device, nullptr, &stream) != ACCEL_SUCCESS ||
            accel_buffer_create(dut.device, &desc, &buffer) != ACCEL_SUCCESS) {
          errors++;
          if (stream != nullptr) accel_stream_destroy(stream);  // the buffer create failed
          continue;
        }
        streams.push_back(stream);
        buffers.push_back(buffer);
        data.push_back(Pattern(kSize, static_cast<uint32_t>(1000 + t * 16 + s)));
        out.emplace_back(kSize, 0);
      }
      for (int round = 0; round < 8; ++round) {
        for (size_t s = 0; s < streams.size(); ++s) {
          if (accel_stream_copy_host_to_buffer(streams[s], data[s].data(), buffers[s], 0, kSize) != ACCEL_SUCCESS ||
              accel_stream_copy_buffer_to_host(streams[s], buffers[s], 0, out[s].data(), kSize) != ACCEL_SUCCESS) {
            errors++;
          }
        }
        for (size_t s = 0; s < streams.size(); ++s) {
          if (accel_stream_synchronize(streams[s], ACCEL_TIMEOUT_INFINITE) != ACCEL_SUCCESS) errors++;
          if (out[s] != data[s]) mismatches++;
          std::fill(out[s].begin(), out[s].end(), 0);
        }
      }
      for (size_t s = 0; s < streams.size(); ++s) {
        accel_buffer_destroy(buffers[s]);
        accel_stream_destroy(streams[s]);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0) << "calls failed under concurrency";
  EXPECT_EQ(mismatches.load(), 0) << "round trips returned the wrong bytes under concurrency";
}

}  // namespace accel::conformance
