// Memory interop on the host device: host-pointer import is zero-copy and
// follows the stream-ordered free rules; read-only imports; export and the
// host and device address queries.
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "gate.h"
#include "native_kernels.h"
#include "test_util.h"

namespace {

using accel_test::BufferArg;
using accel_test::BufferDesc;
using accel_test::ScopedInstance;

void CountRelease(void* user_data) { static_cast<std::atomic<int>*>(user_data)->fetch_add(1); }

accel_buffer_import_desc_t HostImport(void* pointer, uint64_t size, std::atomic<int>* released, uint64_t flags = 0) {
  accel_buffer_import_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC;
  d.struct_size = sizeof(d);
  d.type = ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER;
  d.handle = reinterpret_cast<uint64_t>(pointer);
  d.size = size;
  d.flags = flags;
  d.release = released != nullptr ? CountRelease : nullptr;
  d.release_user_data = released;
  return d;
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class InteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = instance_.DeviceOf("host");
    ASSERT_NE(device_, nullptr);
    ASSERT_EQ(accel_stream_create(device_, nullptr, &stream_), ACCEL_SUCCESS) << accel_last_error();
  }
  void TearDown() override {
    if (stream_ != nullptr) {
      EXPECT_EQ(accel_stream_destroy(stream_), ACCEL_SUCCESS);
    }
  }
  ScopedInstance instance_{nullptr};
  accel_device_t device_ = nullptr;
  accel_stream_t stream_ = nullptr;
};

TEST_F(InteropTest, HostPointerImportIsZeroCopy) {
  alignas(64) static uint32_t memory[1024];
  for (uint32_t i = 0; i < 1024; ++i) memory[i] = i;
  std::atomic<int> released{0};
  accel_buffer_import_desc_t desc = HostImport(memory, sizeof(memory), &released);
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_import(device_, &desc, &buffer), ACCEL_SUCCESS) << accel_last_error();

  void* address = nullptr;
  ASSERT_EQ(accel_buffer_get_host_address(buffer, &address), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(address, memory) << "the buffer's bytes are the caller's bytes";
  void* mapped = nullptr;
  ASSERT_EQ(accel_buffer_map(buffer, 16, 64, ACCEL_MAP_READ, &mapped), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(mapped, reinterpret_cast<char*>(memory) + 16);
  ASSERT_EQ(accel_buffer_unmap(buffer), ACCEL_SUCCESS);
  uint64_t device_address = 0;
  ASSERT_EQ(accel_buffer_get_device_address(buffer, &device_address), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(device_address, reinterpret_cast<uint64_t>(memory));

  // Stream work on the buffer changes the caller's memory in place.
  const uint32_t pattern = 0xABCD1234;
  ASSERT_EQ(accel_stream_fill_buffer(stream_, buffer, 0, 64, &pattern, 4), ACCEL_SUCCESS) << accel_last_error();
  std::vector<uint32_t> back(1024);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, buffer, 0, back.data(), sizeof(memory)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(memory[i], pattern);
  EXPECT_EQ(memory[16], 16u);
  EXPECT_EQ(back[16], 16u);
  EXPECT_EQ(back[0], pattern);

  accel_buffer_properties_t p{};
  p.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
  p.struct_size = sizeof(p);
  ASSERT_EQ(accel_buffer_get_properties(buffer, &p), ACCEL_SUCCESS);
  EXPECT_EQ(p.size, sizeof(memory));
  EXPECT_EQ(p.memory_kind, ACCEL_MEMORY_KIND_HOST_PINNED);

  accel_external_memory_t exported{};
  exported.stype = ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY;
  exported.struct_size = sizeof(exported);
  ASSERT_EQ(accel_buffer_export(buffer, ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER, &exported), ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_EQ(exported.type, ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER);
  EXPECT_EQ(exported.handle, reinterpret_cast<uint64_t>(memory));
  EXPECT_EQ(exported.size, sizeof(memory));

  EXPECT_EQ(released.load(), 0);
  ASSERT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
  EXPECT_EQ(released.load(), 1) << "released once, when nothing uses it any more";
}

TEST_F(InteropTest, ImportedMemoryIsReleasedOnlyAfterQueuedWorkCompletes) {
  std::vector<uint8_t> memory(4096, 0);
  std::atomic<int> released{0};
  accel_buffer_import_desc_t desc = HostImport(memory.data(), memory.size(), &released);
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_import(device_, &desc, &buffer), ACCEL_SUCCESS) << accel_last_error();
  accel_test::Gate gate;
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, accel_test::Gate::Wait, &gate), ACCEL_SUCCESS);
  const uint8_t value = 0x7E;
  ASSERT_EQ(accel_stream_fill_buffer(stream_, buffer, 0, memory.size(), &value, 1), ACCEL_SUCCESS);
  ASSERT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);  // queued work still uses it
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(released.load(), 0) << "released while a queued fill still uses the memory";
  gate.Open();
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  for (uint8_t b : memory) ASSERT_EQ(b, value) << "the fill ran on the caller's memory";
  for (int i = 0; i < 100 && released.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(released.load(), 1);
}

TEST_F(InteropTest, StreamOrderedFreeOfAnImportWaitsForTheStream) {
  std::vector<uint8_t> memory(256, 1);
  std::atomic<int> released{0};
  accel_buffer_import_desc_t desc = HostImport(memory.data(), memory.size(), &released);
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_import(device_, &desc, &buffer), ACCEL_SUCCESS) << accel_last_error();
  accel_test::Gate gate;
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, accel_test::Gate::Wait, &gate), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_free_buffer(stream_, buffer), ACCEL_SUCCESS) << accel_last_error();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(released.load(), 0);
  gate.Open();
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  for (int i = 0; i < 100 && released.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(released.load(), 1);
}

TEST_F(InteropTest, InstanceDestroyReleasesImportsItStillHolds) {
  std::vector<uint8_t> memory(64);
  std::atomic<int> released{0};
  {
    ScopedInstance other(nullptr);
    accel_buffer_import_desc_t desc = HostImport(memory.data(), memory.size(), &released);
    accel_buffer_t buffer = nullptr;
    ASSERT_EQ(accel_buffer_import(other.DeviceOf("host"), &desc, &buffer), ACCEL_SUCCESS) << accel_last_error();
  }
  EXPECT_EQ(released.load(), 1);
}

TEST_F(InteropTest, ReadOnlyImportsRefuseWrites) {
  std::vector<uint32_t> memory(64, 9);
  accel_buffer_import_desc_t desc = HostImport(memory.data(), 256, nullptr, ACCEL_IMPORT_FLAG_READ_ONLY);
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_import(device_, &desc, &buffer), ACCEL_SUCCESS) << accel_last_error();
  const uint32_t zero = 0;
  EXPECT_EQ(accel_stream_fill_buffer(stream_, buffer, 0, 4, &zero, 4), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(accel_last_error(), "'buffer' is read-only")) << accel_last_error();
  EXPECT_EQ(accel_stream_copy_host_to_buffer(stream_, &zero, buffer, 0, 4), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(accel_last_error(), "'dst' is read-only")) << accel_last_error();
  void* p = nullptr;
  EXPECT_EQ(accel_buffer_map(buffer, 0, 4, ACCEL_MAP_WRITE, &p), ACCEL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(accel_buffer_map(buffer, 0, 4, 0, &p), ACCEL_SUCCESS) << "a plain map of a read-only buffer reads";
  EXPECT_EQ(accel_buffer_unmap(buffer), ACCEL_SUCCESS);

  // Kernels may read it, not write it.
  accel_module_source_t source = accel_test::NativeSource(accel_test::TestModule());
  accel_module_desc_t md = accel_test::ModuleDesc(&source, 1, nullptr);
  accel_module_t module = nullptr;
  ASSERT_EQ(accel_module_create(device_, &md, &module), ACCEL_SUCCESS) << accel_last_error();
  accel_kernel_t vadd = nullptr;
  ASSERT_EQ(accel_module_get_kernel(module, "vadd", &vadd), ACCEL_SUCCESS);
  accel_buffer_desc_t bd = BufferDesc(256);
  accel_buffer_t out = nullptr;
  ASSERT_EQ(accel_buffer_create(device_, &bd, &out), ACCEL_SUCCESS);
  uint32_t n = 64;
  accel_kernel_arg_t write_it[] = {BufferArg(buffer), BufferArg(buffer), BufferArg(buffer), accel_test::ScalarArg(&n)};
  accel_launch_desc_t bad = accel_test::Launch({1, 1, 1}, {64, 1, 1}, write_it, 4);
  EXPECT_EQ(accel_stream_launch_kernel(stream_, vadd, &bad), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(accel_last_error(), "'desc->args[2].buffer' is read-only")) << accel_last_error();
  accel_kernel_arg_t read_it[] = {BufferArg(buffer), BufferArg(buffer), BufferArg(out), accel_test::ScalarArg(&n)};
  accel_launch_desc_t good = accel_test::Launch({1, 1, 1}, {64, 1, 1}, read_it, 4);
  ASSERT_EQ(accel_stream_launch_kernel(stream_, vadd, &good), ACCEL_SUCCESS) << accel_last_error();
  std::vector<float> result(64);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, out, 0, result.data(), 256), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  float nine = 0;
  std::memcpy(&nine, &memory[0], 4);
  EXPECT_EQ(result[0], nine + nine);
  for (uint32_t v : memory) EXPECT_EQ(v, 9u) << "the read-only memory was not written";
  EXPECT_EQ(accel_module_destroy(module), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(out), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
}

TEST_F(InteropTest, OtherTypesAreUnsupportedAndSayWhatIsImported) {
  accel_buffer_import_desc_t desc = HostImport(nullptr, 64, nullptr);
  desc.type = ACCEL_EXTERNAL_MEMORY_TYPE_DMA_BUF_FD;
  desc.handle = 3;
  accel_buffer_t buffer = nullptr;
  EXPECT_EQ(accel_buffer_import(device_, &desc, &buffer), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_EQ(buffer, nullptr);
  EXPECT_TRUE(Has(accel_last_error(), "accel_buffer_import: device 0")) << accel_last_error();

  desc.type = static_cast<accel_external_memory_type_t>(99);
  EXPECT_EQ(accel_buffer_import(device_, &desc, &buffer), ACCEL_ERROR_INVALID_ENUM);
  desc = HostImport(nullptr, 64, nullptr);
  EXPECT_EQ(accel_buffer_import(device_, &desc, &buffer), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(accel_last_error(), "'desc->handle' is a NULL pointer"));

  accel_buffer_desc_t bd = BufferDesc(128);
  ASSERT_EQ(accel_buffer_create(device_, &bd, &buffer), ACCEL_SUCCESS);
  void* host = nullptr;
  ASSERT_EQ(accel_buffer_get_host_address(buffer, &host), ACCEL_SUCCESS) << "host memory has a host address";
  accel_external_memory_t m{};
  m.stype = ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY;
  m.struct_size = sizeof(m);
  ASSERT_EQ(accel_buffer_export(buffer, ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER, &m), ACCEL_SUCCESS);
  EXPECT_EQ(m.handle, reinterpret_cast<uint64_t>(host));
  EXPECT_EQ(accel_buffer_export(buffer, ACCEL_EXTERNAL_MEMORY_TYPE_OPENCL_MEM, &m), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
}

}  // namespace
