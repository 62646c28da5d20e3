// Profile `memory`: allocation limits, every copy direction, offsets and
// sizes at the edges, map/unmap, fills, zero-size and out-of-range requests,
// stream-ordered free and imports (docs/conformance.md).
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "harness.h"

namespace accel::conformance {
namespace {

uint64_t FreeMemory(const DeviceUnderTest& dut) {
  uint64_t free = 0;
  accel_device_get_memory_info(dut.device, &free, nullptr);
  return free;
}

}  // namespace

ACCEL_CONFORMANCE_DEVICE_CASE(kMemory, alloc, sizes_and_properties) {
  for (uint64_t size : {uint64_t{1}, uint64_t{3}, uint64_t{4096}, uint64_t{(1u << 20) + 7}}) {
    Buffer b(dut, size);
    ASSERT_NE(b.get(), nullptr);
    accel_buffer_properties_t p{};
    p.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
    p.struct_size = sizeof(p);
    ACCEL_ASSERT_OK(accel_buffer_get_properties(b.get(), &p));
    EXPECT_EQ(p.size, size);
  }
  accel_buffer_desc_t zero{ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(zero), nullptr, 0, ACCEL_MEMORY_KIND_DEVICE, 0, 0};
  accel_buffer_t b = nullptr;
  EXPECT_EQ(accel_buffer_create(dut.device, &zero, &b), ACCEL_ERROR_INVALID_ARGUMENT) << "a zero-size buffer";
  EXPECT_EQ(b, nullptr);
}

ACCEL_CONFORMANCE_DEVICE_CASE(kMemory, alloc, capacity) {
  const bool simulated = (dut.caps.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0;
  const uint64_t before = FreeMemory(dut);
  accel_buffer_desc_t desc{ACCEL_STRUCTURE_TYPE_BUFFER_DESC,
                           sizeof(desc),
                           nullptr,
                           dut.caps.max_allocation + 1,
                           ACCEL_MEMORY_KIND_DEVICE,
                           0,
                           0};
  accel_buffer_t b = nullptr;
  EXPECT_EQ(accel_buffer_create(dut.device, &desc, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error()).find("request"), std::string::npos)
      << "the message names the request: " << accel_last_error();
  if (!simulated) return;  // real memory: an over-limit request only, it touches nothing
  // Simulated memory costs nothing until touched: fill the device, see the
  // next allocation refused, free, and see the capacity restored.
  EXPECT_LE(before, dut.caps.memory_total);
  std::vector<accel_buffer_t> held;
  uint64_t granted = 0;
  const uint64_t chunk = std::max<uint64_t>(dut.caps.max_allocation / 2, 1);
  for (int i = 0; i < 4096; ++i) {
    desc.size = chunk;
    accel_buffer_t h = nullptr;
    const accel_status_t s = accel_buffer_create(dut.device, &desc, &h);
    if (s == ACCEL_ERROR_RESOURCE_EXHAUSTED) break;
    ASSERT_EQ(s, ACCEL_SUCCESS) << Why(s);
    held.push_back(h);
    granted += chunk;
  }
  EXPECT_LE(granted, dut.caps.memory_total) << "granted more than memory_total";
  EXPECT_GT(granted + chunk, FreeMemory(dut)) << "refused while memory info reports room";
  for (accel_buffer_t h : held) accel_buffer_destroy(h);
  EXPECT_EQ(FreeMemory(dut), before) << "freeing did not restore the free memory";
}

ACCEL_CONFORMANCE_DEVICE_CASE(kMemory, copy, all_directions) {
  Stream stream(dut);
  const uint64_t size = 64 * 1024 + 13;
  Buffer a(dut, size);
  Buffer b(dut, size);
  ASSERT_NE(a.get(), nullptr);
  ASSERT_NE(b.get(), nullptr);
  const std::vector<uint8_t> data = Pattern(size, 1);
  Upload(stream, a.get(), 0, data.data(), size);  // host to device
  EXPECT_EQ(Download(stream, a.get(), 0, size), data) << "host->device->host";
  ACCEL_ASSERT_OK(accel_stream_copy_buffer(stream.get(), a.get(), 0, b.get(), 0, size));  // device to device
  EXPECT_EQ(Download(stream, b.get(), 0, size), data) << "device->device";
  // Within one buffer, disjoint ranges.
  const uint64_t half = size / 2;
  ACCEL_ASSERT_OK(accel_stream_copy_buffer(stream.get(), a.get(), 0, a.get(), half + 1, half - 1));
  const std::vector<uint8_t> back = Download(stream, a.get(), 0, size);
  EXPECT_TRUE(std::equal(back.begin() + half + 1, back.begin() + 2 * half, data.begin())) << "within one buffer";
  EXPECT_TRUE(std::equal(back.begin(), back.begin() + half + 1, data.begin())) << "the source range changed";
}

ACCEL_CONFORMANCE_DEVICE_CASE(kMemory, copy, offsets_and_sizes_at_the_edges) {
  Stream stream(dut);
  const uint64_t size = 4099;
  Buffer buf(dut, size);
  Buffer other(dut, size);
  ASSERT_NE(buf.get(), nullptr);
  std::vector<uint8_t> expect(size, 0);
  Upload(stream, buf.get(), 0, expect.data(), size);
  struct Range {
    uint64_t offset, length;
  };
  uint32_t seed = 10;
  for (Range r : {Range{0, 1}, Range{size - 1, 1}, Range{1, 3}, Range{4095, 4}, Range{7, size - 7}, Range{0, size}}) {
    const std::vector<uint8_t> data = Pattern(r.length, seed++);
    Upload(stream, buf.get(), r.offset, data.data(), r.length);
    std::copy(data.begin(), data.end(), expect.begin() + static_cast<ptrdiff_t>(r.offset));
    EXPECT_EQ(Download(stream, buf.get(), 0, size), expect)
        << "after writing [" << r.offset << ", +" << r.length << ")";
    EXPECT_EQ(Download(stream, buf.get(), r.offset, r.length), data)
        << "reading [" << r.offset << ", +" << r.length << ")";
    ACCEL_ASSERT_OK(
        accel_stream_copy_buffer(stream.get(), buf.get(), r.offset, other.get(), size - r.length, r.length));
    EXPECT_EQ(Download(stream, other.get(), size - r.length, r.length), data) << "device copy to the far edge";
  }
}

ACCEL_CONFORMANCE_DEVICE_CASE(kMemory, copy, out_of_range_refused) {
  Stream stream(dut);
  const uint64_t size = 256;
  Buffer a(dut, size);
  Buffer b(dut, size);
  ASSERT_NE(a.get(), nullptr);
  const std::vector<uint8_t> data = Pattern(size, 3);
  Upload(stream, a.get(), 0, data.data(), size);
  Upload(stream, b.get(), 0, data.data(), size);
  std::vector<uint8_t> host(2 * size, 0);
  auto refused = [](accel_status_t s, const char* what) {
    EXPECT_EQ(s, ACCEL_ERROR_INVALID_ARGUMENT) << what << ": " << Why(s);
    EXPECT_FALSE(std::string(accel_last_error()).empty()) << what << ": no message";
  };
  refused(accel_stream_copy_host_to_buffer(stream.get(), host.data(), a.get(), 1, size),
          "host->device one past the end");
  refused(accel_stream_copy_host_to_buffer(stream.get(), host.data(), a.get(), size + 1, 0), "offset past the end");
  refused(accel_stream_copy_host_to_buffer(stream.get(), host.data(), a.get(), UINT64_MAX, 2), "offset overflow");
  refused(accel_stream_copy_buffer_to_host(stream.get(), a.get(), size - 1, host.data(), 2),
          "device->host past the end");
  refused(accel_stream_copy_buffer(stream.get(), a.get(), 0, b.get(), 1, size), "device->device past the end");
  refused(accel_stream_copy_buffer(stream.get(), a.get(), 0, a.get(), 8, 16), "overlapping ranges of one buffer");
  refused(accel_stream_copy_host_to_buffer(stream.get(), nullptr, a.get(), 0, 4), "NULL source");
  // Zero-size copies inside the buffer are accepted and do nothing.
  ACCEL_EXPECT_OK(accel_stream_copy_host_to_buffer(stream.get(), host.data(), a.get(), size, 0));
  ACCEL_EXPECT_OK(stream.Sync());
  // Nothing refused touched the data, and the stream still works.
  EXPECT_EQ(Download(stream, a.get(), 0, size), data);
  EXPECT_EQ(Download(stream, b.get(), 0, size), data);
}

ACCEL_CONFORMANCE_DEVICE_CASE(kMemory, fill, patterns) {
  Stream stream(dut);
  const uint64_t size = 1024;
  Buffer b(dut, size);
  ASSERT_NE(b.get(), nullptr);
  std::vector<uint8_t> expect(size, 0);
  Upload(stream, b.get(), 0, expect.data(), size);
  const uint8_t p1 = 0x5A;
  ACCEL_ASSERT_OK(accel_stream_fill_buffer(stream.get(), b.get(), 3, 5, &p1, 1));
  std::fill(expect.begin() + 3, expect.begin() + 8, p1);
  const uint16_t p2 = 0xBEEF;
  ACCEL_ASSERT_OK(accel_stream_fill_buffer(stream.get(), b.get(), 10, 6, &p2, 2));
  for (int i = 0; i < 3; ++i) std::memcpy(expect.data() + 10 + 2 * i, &p2, 2);
  const uint32_t p4 = 0x01020304;
  ACCEL_ASSERT_OK(accel_stream_fill_buffer(stream.get(), b.get(), 512, 512, &p4, 4));
  for (int i = 0; i < 128; ++i) std::memcpy(expect.data() + 512 + 4 * i, &p4, 4);
  EXPECT_EQ(Download(stream, b.get(), 0, size), expect);
  EXPECT_EQ(accel_stream_fill_buffer(stream.get(), b.get(), 2, 8, &p4, 4), ACCEL_ERROR_INVALID_ARGUMENT)
      << "an offset not a multiple of the pattern";
  EXPECT_EQ(accel_stream_fill_buffer(stream.get(), b.get(), 0, 9, &p4, 3), ACCEL_ERROR_INVALID_ARGUMENT)
      << "a 3-byte pattern";
  EXPECT_EQ(accel_stream_fill_buffer(stream.get(), b.get(), 1020, 8, &p4, 4), ACCEL_ERROR_INVALID_ARGUMENT)
      << "past the end";
  EXPECT_EQ(Download(stream, b.get(), 0, size), expect) << "a refused fill changed the data";
}

ACCEL_CONFORMANCE_DEVICE_CASE(kMemory, map, read_write_and_state) {
  Stream stream(dut);
  const uint64_t size = 8192;
  Buffer b(dut, size);
  ASSERT_NE(b.get(), nullptr);
  const std::vector<uint8_t> data = Pattern(size, 5);
  Upload(stream, b.get(), 0, data.data(), size);
  void* p = nullptr;
  const accel_status_t s = accel_buffer_map(b.get(), 100, 200, ACCEL_MAP_READ | ACCEL_MAP_WRITE, &p);
  if (s == ACCEL_ERROR_UNSUPPORTED) {
    // Only memory the device says is not host-mappable may refuse.
    EXPECT_EQ(dut.caps.features & ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY, 0u)
        << "map refused on a device reporting host-mapped-memory: " << accel_last_error();
    return;
  }
  ACCEL_ASSERT_OK(s);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::memcmp(p, data.data() + 100, 200), 0) << "the mapping does not show the buffer's bytes";
  void* again = nullptr;
  EXPECT_EQ(accel_buffer_map(b.get(), 0, 8, ACCEL_MAP_READ, &again), ACCEL_ERROR_FAILED_PRECONDITION)
      << "a second mapping";
  std::memset(p, 0x77, 200);
  ACCEL_ASSERT_OK(accel_buffer_unmap(b.get()));
  EXPECT_EQ(accel_buffer_unmap(b.get()), ACCEL_ERROR_FAILED_PRECONDITION) << "unmapping an unmapped buffer";
  std::vector<uint8_t> expect = data;
  std::fill(expect.begin() + 100, expect.begin() + 300, 0x77);
  EXPECT_EQ(Download(stream, b.get(), 0, size), expect) << "writes through the mapping are not visible to streams";
  EXPECT_EQ(accel_buffer_map(b.get(), size - 4, 8, ACCEL_MAP_READ, &p), ACCEL_ERROR_INVALID_ARGUMENT) << "past the end";
  EXPECT_EQ(accel_buffer_map(b.get(), 0, 8, uint64_t{1} << 40, &p), ACCEL_ERROR_INVALID_ARGUMENT) << "unknown flags";
  // The last byte alone maps.
  ACCEL_ASSERT_OK(accel_buffer_map(b.get(), size - 1, 1, ACCEL_MAP_READ, &p));
  EXPECT_EQ(*static_cast<uint8_t*>(p), data[size - 1]);
  ACCEL_EXPECT_OK(accel_buffer_unmap(b.get()));
}

ACCEL_CONFORMANCE_DEVICE_CASE(kMemory, free, stream_ordered) {
  Stream stream(dut);
  const uint64_t size = 4096;
  accel_buffer_t b = Buffer(dut, size).release();
  ASSERT_NE(b, nullptr);
  std::vector<uint8_t> out(size, 0);
  const std::vector<uint8_t> data = Pattern(size, 6);
  {
    Gate gate;
    ACCEL_ASSERT_OK(gate.EnqueueOn(stream.get()));
    // Work queued behind the gate still uses the buffer after it is freed.
    ACCEL_ASSERT_OK(accel_stream_copy_host_to_buffer(stream.get(), data.data(), b, 0, size));
    ACCEL_ASSERT_OK(accel_stream_copy_buffer_to_host(stream.get(), b, 0, out.data(), size));
    ACCEL_ASSERT_OK(accel_stream_free_buffer(stream.get(), b));
    accel_buffer_properties_t p{};
    p.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
    p.struct_size = sizeof(p);
    EXPECT_EQ(accel_buffer_get_properties(b, &p), ACCEL_ERROR_INVALID_HANDLE) << "the handle lives on after the free";
    gate.Open();
    ACCEL_ASSERT_OK(stream.Sync());
  }
  EXPECT_EQ(out, data) << "work enqueued before the free did not see the buffer";
  // Destroying a buffer with pending work is stream-ordered too.
  accel_buffer_t c = Buffer(dut, size).release();
  ASSERT_NE(c, nullptr);
  std::fill(out.begin(), out.end(), 0);
  {
    Gate gate;
    ACCEL_ASSERT_OK(gate.EnqueueOn(stream.get()));
    ACCEL_ASSERT_OK(accel_stream_copy_host_to_buffer(stream.get(), data.data(), c, 0, size));
    ACCEL_ASSERT_OK(accel_stream_copy_buffer_to_host(stream.get(), c, 0, out.data(), size));
    ACCEL_ASSERT_OK(accel_buffer_destroy(c));
    gate.Open();
    ACCEL_ASSERT_OK(stream.Sync());
  }
  EXPECT_EQ(out, data) << "destroying a buffer cut short the work enqueued on it";
}

ACCEL_CONFORMANCE_DEVICE_CASE(kMemory, interop, invalid_handles_refused) {
  // A descriptor that is not open is never imported, whatever the type.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  close(fds[1]);
  for (accel_external_memory_type_t type :
       {ACCEL_EXTERNAL_MEMORY_TYPE_DMA_BUF_FD, ACCEL_EXTERNAL_MEMORY_TYPE_OPAQUE_FD}) {
    accel_buffer_import_desc_t desc{};
    desc.stype = ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC;
    desc.struct_size = sizeof(desc);
    desc.type = type;
    desc.handle = static_cast<uint64_t>(fds[0]);
    desc.size = 4096;
    accel_buffer_t b = nullptr;
    const accel_status_t s = accel_buffer_import(dut.device, &desc, &b);
    EXPECT_NE(s, ACCEL_SUCCESS) << "imported closed descriptor " << fds[0] << " as type " << type;
    EXPECT_TRUE(s == ACCEL_ERROR_UNSUPPORTED || s == ACCEL_ERROR_INVALID_ARGUMENT || s == ACCEL_ERROR_UNIMPLEMENTED)
        << Why(s);
    EXPECT_EQ(b, nullptr);
    if (b != nullptr) accel_buffer_destroy(b);
  }
}

ACCEL_CONFORMANCE_DEVICE_CASE(kMemory, interop, host_pointer_import) {
  const uint64_t size = 4096;
  std::vector<uint8_t> memory = Pattern(size, 8);
  static std::atomic<int> released{0};
  released = 0;
  accel_buffer_import_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC;
  desc.struct_size = sizeof(desc);
  desc.type = ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER;
  desc.handle = reinterpret_cast<uint64_t>(memory.data());
  desc.size = size;
  desc.release = [](void*) { released++; };
  accel_buffer_t b = nullptr;
  const accel_status_t s = accel_buffer_import(dut.device, &desc, &b);
  if (s == ACCEL_ERROR_UNSUPPORTED || s == ACCEL_ERROR_UNIMPLEMENTED) {
    EXPECT_EQ(released.load(), 0) << "a failed import ran the release callback";
    return;  // importing host memory is optional
  }
  ACCEL_ASSERT_OK(s);
  Stream stream(dut);
  EXPECT_EQ(Download(stream, b, 0, size), memory) << "the import does not show the host bytes";
  const std::vector<uint8_t> data = Pattern(size, 9);
  Upload(stream, b, 0, data.data(), size);
  EXPECT_EQ(memory, data) << "writes to the imported buffer do not reach the host memory";
  ACCEL_ASSERT_OK(accel_buffer_destroy(b));
  ACCEL_ASSERT_OK(stream.Sync());
  EXPECT_EQ(released.load(), 1) << "the release callback runs exactly once after destroy";
}

}  // namespace accel::conformance
