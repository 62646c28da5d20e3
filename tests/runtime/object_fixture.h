// Helpers of the object store tests (object_store_test.cc,
// object_task_test.cc): a runtime with store settings, byte patterns, and
// reading an object's bytes at a place.
#ifndef ACCEL_TESTS_RUNTIME_OBJECT_FIXTURE_H_
#define ACCEL_TESTS_RUNTIME_OBJECT_FIXTURE_H_

#include <accel/object_store.h>
#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "runtime_fixture.h"
#include "test_util.h"

namespace accel_runtime_test {

constexpr int32_t kHost = ACCEL_OBJECT_LOCATION_HOST;

// Bytes that differ per seed, per position and per 4 KiB page (a page copied to the wrong place shows), made in
// 64-bit words: cheap under ASan for objects of 100+ MiB.
inline std::vector<uint8_t> Pattern(size_t size, uint32_t seed) {
  std::vector<uint8_t> v(size);
  uint64_t x = 0x9E3779B97F4A7C15ULL * (seed + 1);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const uint64_t word = x + (i >> 12);
    std::memcpy(v.data() + i, &word, 8);
  }
  for (; i < size; ++i) v[i] = static_cast<uint8_t>(seed + i);
  return v;
}

// A runtime whose store has the given capacities and spill directory.
class StoreRuntime {
 public:
  StoreRuntime(uint64_t host_capacity, uint64_t device_capacity, const std::string& spill_directory,
               uint32_t workers = 2)
      : instance_(nullptr) {
    accel_object_store_desc_t sd{};
    sd.stype = ACCEL_STRUCTURE_TYPE_OBJECT_STORE_DESC;
    sd.struct_size = sizeof(sd);
    sd.host_capacity = host_capacity;
    sd.device_capacity = device_capacity;
    sd.spill_directory = spill_directory.empty() ? nullptr : spill_directory.c_str();
    accel_runtime_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DESC;
    d.struct_size = sizeof(d);
    d.next = &sd;
    d.worker_threads = workers;
    EXPECT_EQ(accel_runtime_create(instance_.get(), &d, &runtime_), ACCEL_SUCCESS) << accel_last_error();
  }
  ~StoreRuntime() { Destroy(); }
  // Destroys the runtime now (the destructor then does nothing).
  void Destroy() {
    if (runtime_ != nullptr) {
      EXPECT_EQ(accel_runtime_destroy(runtime_), ACCEL_SUCCESS) << accel_last_error();
    }
    runtime_ = nullptr;
  }
  StoreRuntime(const StoreRuntime&) = delete;
  StoreRuntime& operator=(const StoreRuntime&) = delete;

  accel_runtime_t get() const { return runtime_; }
  accel_instance_t instance() const { return instance_.get(); }

  accel_status_t Put(const std::vector<uint8_t>& bytes, accel_object_t* out, const char* name = nullptr) const {
    accel_object_put_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
    d.struct_size = sizeof(d);
    d.data = bytes.data();
    d.size = bytes.size();
    d.name = name;
    return accel_object_put(runtime_, &d, out);
  }

  // A put that must succeed; the object.
  accel_object_t Put(const std::vector<uint8_t>& bytes) const {
    accel_object_t o = nullptr;
    EXPECT_EQ(Put(bytes, &o), ACCEL_SUCCESS) << accel_last_error();
    return o;
  }

  accel_object_store_usage_t Usage(int32_t location) const {
    accel_object_store_usage_t u{};
    u.stype = ACCEL_STRUCTURE_TYPE_OBJECT_STORE_USAGE;
    u.struct_size = sizeof(u);
    EXPECT_EQ(accel_object_store_get_usage(runtime_, location, &u), ACCEL_SUCCESS) << accel_last_error();
    return u;
  }

  // The backend device behind runtime device `index`.
  accel_device_t Device(uint32_t index) const {
    accel_runtime_device_t rd{};
    rd.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE;
    rd.struct_size = sizeof(rd);
    EXPECT_EQ(accel_runtime_get_device(runtime_, index, &rd), ACCEL_SUCCESS) << accel_last_error();
    uint32_t n = 1;
    accel_device_t device = nullptr;
    EXPECT_EQ(accel_physical_device_enumerate_devices(rd.physical_device, &n, &device), ACCEL_SUCCESS);
    return device;
  }

 private:
  ScopedInstance instance_;
  accel_runtime_t runtime_ = nullptr;
};

inline accel_object_info_t Info(accel_object_t object) {
  accel_object_info_t info{};
  info.stype = ACCEL_STRUCTURE_TYPE_OBJECT_INFO;
  info.struct_size = sizeof(info);
  EXPECT_EQ(accel_object_get_info(object, &info), ACCEL_SUCCESS) << accel_last_error();
  return info;
}

inline accel_object_view_info_t ViewInfo(accel_object_view_t view) {
  accel_object_view_info_t info{};
  info.stype = ACCEL_STRUCTURE_TYPE_OBJECT_VIEW_INFO;
  info.struct_size = sizeof(info);
  EXPECT_EQ(accel_object_view_get_info(view, &info), ACCEL_SUCCESS) << accel_last_error();
  return info;
}

// The bytes a view shows, read back through a stream for device views.
inline std::vector<uint8_t> Read(accel_object_view_t view) {
  const accel_object_view_info_t info = ViewInfo(view);
  std::vector<uint8_t> out(info.size);
  if (info.location == kHost) {
    EXPECT_NE(info.host_address, nullptr);
    if (info.host_address != nullptr) std::memcpy(out.data(), info.host_address, info.size);
    return out;
  }
  accel_buffer_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
  props.struct_size = sizeof(props);
  EXPECT_EQ(accel_buffer_get_properties(info.buffer, &props), ACCEL_SUCCESS) << accel_last_error();
  accel_stream_t stream = nullptr;
  EXPECT_EQ(accel_stream_create(props.device, nullptr, &stream), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_copy_buffer_to_host(stream, info.buffer, info.offset, out.data(), info.size), ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  return out;
}

inline std::vector<uint8_t> GetBytes(accel_object_t object, int32_t location) {
  accel_object_view_t view = nullptr;
  EXPECT_EQ(accel_object_get(object, location, ACCEL_TIMEOUT_INFINITE, &view), ACCEL_SUCCESS) << accel_last_error();
  if (view == nullptr) return {};
  auto bytes = Read(view);
  EXPECT_EQ(accel_object_view_release(view), ACCEL_SUCCESS);
  return bytes;
}

// A put from a device buffer: `bytes` copied into a new buffer on runtime device `device_index` at `offset`, put
// from there, and the buffer destroyed (the object is a copy).
inline accel_object_t PutFromDevice(const StoreRuntime& rt, uint32_t device_index, const std::vector<uint8_t>& bytes,
                                    uint64_t offset = 0) {
  accel_device_t device = rt.Device(device_index);
  accel_buffer_t buffer = nullptr;
  const auto desc = BufferDesc(bytes.size() + offset);
  EXPECT_EQ(accel_buffer_create(device, &desc, &buffer), ACCEL_SUCCESS) << accel_last_error();
  accel_stream_t stream = nullptr;
  EXPECT_EQ(accel_stream_create(device, nullptr, &stream), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_copy_host_to_buffer(stream, bytes.data(), buffer, offset, bytes.size()), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  accel_object_put_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC;
  d.struct_size = sizeof(d);
  d.buffer = buffer;
  d.buffer_offset = offset;
  d.size = bytes.size();
  accel_object_t o = nullptr;
  EXPECT_EQ(accel_object_put(rt.get(), &d, &o), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS) << "the object is a copy: the buffer may go";
  return o;
}

}  // namespace accel_runtime_test

#endif  // ACCEL_TESTS_RUNTIME_OBJECT_FIXTURE_H_
