// Outputs on failure (docs/errors.md): every handle, pointer or address
// output is NULL (0) after any failure, an invalid input handle included;
// other outputs keep what the caller put there. One row per function of
// accel.h with such an output, each failed in two ways (an early check and a
// later one) with a sentinel in the output; a second test reads accel.h and
// fails for a function with such an output and no row.
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "native_kernels.h"
#include "test_util.h"

namespace {

using accel_test::BufferDesc;
using accel_test::ScopedInstance;

// A value no call would return: what a caller's uninitialised variable or an
// earlier object's handle might hold.
template <typename T>
T Sentinel() {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<T>(uintptr_t{0x5e5e5e5e});
  } else {
    return T{0x5e5e5e5e};
  }
}

struct Objects {
  accel_device_t device = nullptr;
  accel_buffer_t buffer = nullptr;  // device memory, 256 bytes
  accel_module_t module = nullptr;  // accel_test::TestModule()
  accel_buffer_t stale_buffer = nullptr;
  accel_module_t stale_module = nullptr;
  accel_device_t garbage_device = reinterpret_cast<accel_device_t>(uintptr_t{0x1234});
};

// One way to fail a function; `out` is the output under test, holding the
// sentinel when called.
template <typename T>
using FailingCall = std::function<accel_status_t(const Objects&, T* out)>;

struct Row {
  std::string function;
  std::function<void(const Objects&)> check;
};

// Calls each way of failing with the sentinel in the output and expects the
// documented code and a NULL (0) output.
template <typename T>
Row Output(const std::string& function, std::vector<std::pair<accel_status_t, FailingCall<T>>> ways) {
  return {function, [function, ways](const Objects& o) {
            for (size_t i = 0; i < ways.size(); ++i) {
              T out = Sentinel<T>();
              const accel_status_t s = ways[i].second(o, &out);
              EXPECT_EQ(s, ways[i].first)
                  << function << " way " << i << ": " << accel_status_name(s) << ": " << accel_last_error();
              EXPECT_EQ(out, T{}) << function << " way " << i << " (" << accel_last_error()
                                  << ") left its output as it was, not NULL";
            }
          }};
}

accel_module_desc_t ModuleOf(const accel_module_source_t* source) {
  return accel_test::ModuleDesc(source, 1, "outputs");
}

std::vector<Row> Rows() {
  static const accel_module_source_t kNative = accel_test::NativeSource(accel_test::TestModule());
  std::vector<Row> rows;
  rows.push_back(Output<accel_instance_t>("accel_instance_create",
                                          {{ACCEL_ERROR_INVALID_ARGUMENT,
                                            [](const Objects&, accel_instance_t* out) {
                                              accel_instance_desc_t d{};
                                              d.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;  // wrong stype
                                              d.struct_size = sizeof(d);
                                              return accel_instance_create(&d, out);
                                            }},
                                           {ACCEL_ERROR_INVALID_ENUM, [](const Objects&, accel_instance_t* out) {
                                              accel_instance_desc_t d{};
                                              d.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
                                              d.struct_size = sizeof(d);
                                              d.log_level = static_cast<accel_log_level_t>(99);
                                              return accel_instance_create(&d, out);
                                            }}}));
  rows.push_back(Output<const char*>("accel_device_info_key_describe",
                                     {{ACCEL_ERROR_INVALID_ENUM, [](const Objects&, const char** out) {
                                         accel_value_type_t type = ACCEL_VALUE_TYPE_UINT32;
                                         return accel_device_info_key_describe(
                                             static_cast<accel_device_info_key_t>(100000), out, &type);
                                       }}}));
  rows.push_back(Output<accel_backend_t>("accel_device_get_backend",
                                         {{ACCEL_ERROR_INVALID_HANDLE, [](const Objects& o, accel_backend_t* out) {
                                             return accel_device_get_backend(o.garbage_device, out);
                                           }}}));
  rows.push_back(
      Output<accel_physical_device_t>("accel_device_get_physical_device",
                                      {{ACCEL_ERROR_INVALID_HANDLE, [](const Objects& o, accel_physical_device_t* out) {
                                          return accel_device_get_physical_device(o.garbage_device, out);
                                        }}}));
  rows.push_back(Output<accel_buffer_t>("accel_buffer_create",
                                        {{ACCEL_ERROR_INVALID_HANDLE,
                                          [](const Objects& o, accel_buffer_t* out) {
                                            const accel_buffer_desc_t d = BufferDesc(64);
                                            return accel_buffer_create(o.garbage_device, &d, out);
                                          }},
                                         {ACCEL_ERROR_RESOURCE_EXHAUSTED, [](const Objects& o, accel_buffer_t* out) {
                                            const accel_buffer_desc_t d = BufferDesc(uint64_t{1} << 60);
                                            return accel_buffer_create(o.device, &d, out);
                                          }}}));
  rows.push_back(Output<accel_buffer_t>(
      "accel_buffer_import",
      {{ACCEL_ERROR_INVALID_HANDLE,
        [](const Objects& o, accel_buffer_t* out) { return accel_buffer_import(o.garbage_device, nullptr, out); }},
       {ACCEL_ERROR_INVALID_ENUM, [](const Objects& o, accel_buffer_t* out) {
          accel_buffer_import_desc_t d{};
          d.stype = ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC;
          d.struct_size = sizeof(d);  // type 0: no memory type
          return accel_buffer_import(o.device, &d, out);
        }}}));
  rows.push_back(Output<void*>(
      "accel_buffer_map",
      {{ACCEL_ERROR_INVALID_HANDLE,
        [](const Objects& o, void** out) { return accel_buffer_map(o.stale_buffer, 0, 16, ACCEL_MAP_READ, out); }},
       {ACCEL_ERROR_INVALID_ARGUMENT,
        [](const Objects& o, void** out) { return accel_buffer_map(o.buffer, 0, 16, uint64_t{1} << 40, out); }}}));
  rows.push_back(
      Output<void*>("accel_buffer_get_host_address", {{ACCEL_ERROR_INVALID_HANDLE, [](const Objects& o, void** out) {
                                                         return accel_buffer_get_host_address(o.stale_buffer, out);
                                                       }}}));
  rows.push_back(Output<uint64_t>("accel_buffer_get_device_address",
                                  {{ACCEL_ERROR_INVALID_HANDLE, [](const Objects& o, uint64_t* out) {
                                      return accel_buffer_get_device_address(o.stale_buffer, out);
                                    }}}));
  rows.push_back(Output<accel_stream_t>(
      "accel_stream_create",
      {{ACCEL_ERROR_INVALID_HANDLE,
        [](const Objects& o, accel_stream_t* out) { return accel_stream_create(o.garbage_device, nullptr, out); }},
       {ACCEL_ERROR_INVALID_ARGUMENT, [](const Objects& o, accel_stream_t* out) {
          accel_stream_desc_t d{};
          d.stype = ACCEL_STRUCTURE_TYPE_STREAM_DESC;
          d.struct_size = sizeof(d);
          d.flags = uint64_t{1} << 63;
          return accel_stream_create(o.device, &d, out);
        }}}));
  rows.push_back(Output<accel_event_t>(
      "accel_event_create",
      {{ACCEL_ERROR_INVALID_HANDLE,
        [](const Objects& o, accel_event_t* out) { return accel_event_create(o.garbage_device, nullptr, out); }},
       {ACCEL_ERROR_INVALID_ARGUMENT, [](const Objects& o, accel_event_t* out) {
          accel_event_desc_t d{};
          d.stype = ACCEL_STRUCTURE_TYPE_EVENT_DESC;
          d.struct_size = sizeof(d);
          d.flags = uint64_t{1} << 63;
          return accel_event_create(o.device, &d, out);
        }}}));
  rows.push_back(Output<accel_module_t>("accel_module_create",
                                        {{ACCEL_ERROR_INVALID_HANDLE,
                                          [](const Objects& o, accel_module_t* out) {
                                            const accel_module_desc_t d = ModuleOf(&kNative);
                                            return accel_module_create(o.garbage_device, &d, out);
                                          }},
                                         {ACCEL_ERROR_UNSUPPORTED, [](const Objects& o, accel_module_t* out) {
                                            const char blob[] = "not a module";
                                            accel_module_source_t s = kNative;
                                            s.format = ACCEL_KERNEL_FORMAT_HSACO;
                                            s.data = blob;
                                            s.size = sizeof(blob);
                                            const accel_module_desc_t d = ModuleOf(&s);
                                            return accel_module_create(o.device, &d, out);
                                          }}}));
  rows.push_back(Output<const char*>(
      "accel_module_get_kernel_name",
      {{ACCEL_ERROR_INVALID_HANDLE,
        [](const Objects& o, const char** out) { return accel_module_get_kernel_name(o.stale_module, 0, out); }},
       {ACCEL_ERROR_INVALID_ARGUMENT,
        [](const Objects& o, const char** out) { return accel_module_get_kernel_name(o.module, 1000, out); }}}));
  rows.push_back(Output<accel_kernel_t>(
      "accel_module_get_kernel",
      {{ACCEL_ERROR_INVALID_HANDLE,
        [](const Objects& o, accel_kernel_t* out) { return accel_module_get_kernel(o.stale_module, "vadd", out); }},
       {ACCEL_ERROR_NOT_FOUND,
        [](const Objects& o, accel_kernel_t* out) { return accel_module_get_kernel(o.module, "nope", out); }}}));
  return rows;
}

class Outputs : public ::testing::Test {
 protected:
  void SetUp() override {
    o_.device = instance_.DeviceOf("host");
    ASSERT_NE(o_.device, nullptr);
    accel_buffer_desc_t d = BufferDesc(256);
    ASSERT_EQ(accel_buffer_create(o_.device, &d, &o_.buffer), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_buffer_create(o_.device, &d, &o_.stale_buffer), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_buffer_destroy(o_.stale_buffer), ACCEL_SUCCESS);
    const accel_module_source_t source = accel_test::NativeSource(accel_test::TestModule());
    const accel_module_desc_t md = ModuleOf(&source);
    ASSERT_EQ(accel_module_create(o_.device, &md, &o_.module), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_module_create(o_.device, &md, &o_.stale_module), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_EQ(accel_module_destroy(o_.stale_module), ACCEL_SUCCESS);
  }
  void TearDown() override {
    if (o_.module != nullptr) {
      EXPECT_EQ(accel_module_destroy(o_.module), ACCEL_SUCCESS);
    }
    if (o_.buffer != nullptr) {
      EXPECT_EQ(accel_buffer_destroy(o_.buffer), ACCEL_SUCCESS);
    }
  }
  ScopedInstance instance_{nullptr};
  Objects o_;
};

TEST_F(Outputs, HandlePointerAndAddressOutputsAreNullAfterEveryFailure) {
  for (const Row& row : Rows()) {
    SCOPED_TRACE(row.function);
    row.check(o_);
  }
}

// The other outputs keep the caller's contents: a struct, a count, a type.
TEST_F(Outputs, OtherOutputsAreLeftAsTheCallerHadThem) {
  accel_buffer_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
  props.struct_size = sizeof(props);
  props.size = 777;
  EXPECT_EQ(accel_buffer_get_properties(o_.stale_buffer, &props), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(props.size, 777u);
  accel_value_type_t type = static_cast<accel_value_type_t>(77);
  const char* name = "kept";
  EXPECT_EQ(accel_device_info_key_describe(static_cast<accel_device_info_key_t>(100000), &name, &type),
            ACCEL_ERROR_INVALID_ENUM);
  EXPECT_EQ(type, static_cast<accel_value_type_t>(77));
  EXPECT_EQ(name, nullptr);
  uint64_t free_bytes = 5;
  uint64_t total = 6;
  EXPECT_EQ(accel_device_get_memory_info(o_.garbage_device, &free_bytes, &total), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(free_bytes, 5u);
  EXPECT_EQ(total, 6u);
  // The documented exception: the enumeration pattern writes the total back.
  uint32_t count = 0;
  accel_device_t devices[1] = {Sentinel<accel_device_t>()};
  EXPECT_EQ(accel_instance_enumerate_devices(instance_.get(), &count, devices), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_GE(count, 1u);
  EXPECT_EQ(devices[0], Sentinel<accel_device_t>());
}

// Every function of accel.h with a handle, pointer or address output has a
// row above; a new one without a row fails here.
TEST_F(Outputs, EveryFunctionWithSuchAnOutputHasARow) {
  std::ifstream in(ACCEL_TEST_ACCEL_H);
  ASSERT_TRUE(in) << "cannot read " << ACCEL_TEST_ACCEL_H;
  std::stringstream text;
  text << in.rdbuf();
  // Declarations run from "ACCEL_API" to ";"; comments removed first.
  const std::string header = std::regex_replace(text.str(), std::regex(R"(/\*[\s\S]*?\*/)"), " ");
  const std::regex declaration(R"(ACCEL_API\s+[\w\s\*]+?\b(accel_\w+)\s*\(([^;]*)\)\s*;)");
  // accel_<object>_t* out_x, void** out_x, const char** out_x, uint64_t* out_address.
  const std::regex output(
      R"(\b(accel_(?!value_type|copy_statistics)\w+_t\s*\*\s*out_\w+|void\s*\*\*\s*out_\w+|const char\s*\*\*\s*out_\w+|uint64_t\s*\*\s*out_address))");
  std::set<std::string> rows;
  for (const Row& row : Rows()) rows.insert(row.function);
  std::set<std::string> found;
  for (std::sregex_iterator it(header.begin(), header.end(), declaration), end; it != end; ++it) {
    const std::string name = (*it)[1];
    std::string params = (*it)[2];
    // Output structs (out_properties, out_info, ...) are not handles: keep
    // only parameters whose type is a handle, a pointer or an address.
    for (std::sregex_iterator p(params.begin(), params.end(), output), pend; p != pend; ++p) {
      const std::string param = (*p)[1];
      static const std::regex handle_type(
          R"(accel_(instance|backend|device|physical_device|buffer|stream|event|module|kernel)_t\s*\*)");
      if (param.rfind("accel_", 0) == 0 && !std::regex_search(param, handle_type)) continue;
      // Enumeration arrays keep the caller's contents on failure.
      if (param.find("out_array") != std::string::npos) continue;
      found.insert(name);
    }
  }
  EXPECT_GE(found.size(), 14u) << "the header scan found too few functions: the regex is broken";
  for (const std::string& f : found) EXPECT_EQ(rows.count(f), 1u) << f << " has a handle or pointer output but no row";
  for (const std::string& r : rows) EXPECT_EQ(found.count(r), 1u) << r << " has a row but the scan did not find it";
}

}  // namespace
