// The bad-input table: one row per function libaccel exports. Each row calls
// its function with a NULL, a stale handle, a wrong-type handle, a garbage
// handle and an out-of-range value (or says, with a reason, why a kind does not
// apply), and checks the code accel.h documents, that accel_last_error() names
// the function and the argument, that accel_last_error_status() agrees, and
// that the live objects still work afterwards. A second test lists the exported
// symbols (nm -D) and fails for any function without a row.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "native_kernels.h"
#include "test_util.h"

namespace {

using accel_test::BufferDesc;
using accel_test::ScopedInstance;

constexpr uint64_t kBufferSize = 4096;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}
constexpr uintptr_t kGarbageHandle = 0x1234;

// --- The live objects every case runs against ------------------------------------------------------------------------

struct Fixture {
  accel_instance_t instance = nullptr;
  accel_backend_t backend = nullptr;
  accel_device_t device = nullptr;
  accel_physical_device_t physical = nullptr;
  accel_buffer_t buffer = nullptr;
  accel_stream_t stream = nullptr;
  accel_event_t event = nullptr;               // created without ACCEL_EVENT_FLAG_TIMING
  accel_event_t timing_start = nullptr;        // timing, never recorded
  accel_event_t timing_end = nullptr;          // timing, never recorded
  accel_module_t module = nullptr;             // accel_test::TestModule()
  accel_kernel_t kernel = nullptr;             // its "vadd"
  accel_tenant_t tenant = nullptr;             // no limits
  accel_prepared_launch_t prepared = nullptr;  // vadd over `buffer`'s first 16 floats

  // Stale handles: objects created and destroyed (the first four with their instance).
  accel_instance_t stale_instance = nullptr;
  accel_backend_t stale_backend = nullptr;
  accel_device_t stale_device = nullptr;
  accel_physical_device_t stale_physical = nullptr;
  accel_buffer_t stale_buffer = nullptr;
  accel_stream_t stale_stream = nullptr;
  accel_event_t stale_event = nullptr;
  accel_module_t stale_module = nullptr;
  accel_kernel_t stale_kernel = nullptr;  // a kernel of stale_module
  accel_tenant_t stale_tenant = nullptr;
  accel_prepared_launch_t stale_prepared = nullptr;

  std::atomic<bool> release_callback{false};
};

accel_instance_desc_t HostOnly() { return ScopedInstance::Files(ACCEL_TEST_HOST_MANIFEST); }

// The fixture kernel's launch: c = a + b over the fixture buffer's first 16 floats (a and b its bytes [0, 64), c
// [64, 128)), grid 2 x block 8. `desc` points into `args`: not copyable.
struct VaddLaunch {
  static constexpr uint32_t kN = 16;
  explicit VaddLaunch(accel_buffer_t buffer)
      : args{accel_test::BufferArg(buffer, 0, 64), accel_test::BufferArg(buffer, 0, 64),
             accel_test::BufferArg(buffer, 64, 64), accel_test::ScalarArg(&kN)},
        desc(accel_test::Launch({2, 1, 1}, {8, 1, 1}, args, 4)) {}
  VaddLaunch(const VaddLaunch&) = delete;
  VaddLaunch& operator=(const VaddLaunch&) = delete;
  accel_kernel_arg_t args[4];
  accel_launch_desc_t desc;
};

accel_device_t FirstDevice(accel_instance_t instance) {
  uint32_t n = 0;
  if (accel_instance_enumerate_devices(instance, &n, nullptr) != ACCEL_SUCCESS || n == 0) return nullptr;
  std::vector<accel_device_t> devices(n);
  if (accel_instance_enumerate_devices(instance, &n, devices.data()) != ACCEL_SUCCESS) return nullptr;
  return devices[0];
}

// Builds the fixture; ASSERTs (the caller checks HasFatalFailure).
void Build(Fixture& f) {
  accel_instance_desc_t desc = HostOnly();
  ASSERT_EQ(accel_instance_create(&desc, &f.instance), ACCEL_SUCCESS) << accel_last_error();
  f.device = FirstDevice(f.instance);
  ASSERT_NE(f.device, nullptr) << "no host device";
  ASSERT_EQ(accel_device_get_backend(f.device, &f.backend), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_device_get_physical_device(f.device, &f.physical), ACCEL_SUCCESS) << accel_last_error();
  accel_buffer_desc_t bd = BufferDesc(kBufferSize);
  ASSERT_EQ(accel_buffer_create(f.device, &bd, &f.buffer), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_create(f.device, nullptr, &f.stream), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_event_create(f.device, nullptr, &f.event), ACCEL_SUCCESS) << accel_last_error();
  accel_event_desc_t timing{};
  timing.stype = ACCEL_STRUCTURE_TYPE_EVENT_DESC;
  timing.struct_size = sizeof(timing);
  timing.flags = ACCEL_EVENT_FLAG_TIMING;
  ASSERT_EQ(accel_event_create(f.device, &timing, &f.timing_start), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_event_create(f.device, &timing, &f.timing_end), ACCEL_SUCCESS) << accel_last_error();

  // Stale instance, backend, device, physical device: a second instance, destroyed.
  ASSERT_EQ(accel_instance_create(&desc, &f.stale_instance), ACCEL_SUCCESS) << accel_last_error();
  f.stale_device = FirstDevice(f.stale_instance);
  ASSERT_NE(f.stale_device, nullptr);
  ASSERT_EQ(accel_device_get_backend(f.stale_device, &f.stale_backend), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_device_get_physical_device(f.stale_device, &f.stale_physical), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_instance_destroy(f.stale_instance), ACCEL_SUCCESS) << accel_last_error();

  // Stale buffer, stream, event: created on the live device and destroyed.
  ASSERT_EQ(accel_buffer_create(f.device, &bd, &f.stale_buffer), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_buffer_destroy(f.stale_buffer), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_create(f.device, nullptr, &f.stale_stream), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_destroy(f.stale_stream), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_event_create(f.device, nullptr, &f.stale_event), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_event_destroy(f.stale_event), ACCEL_SUCCESS) << accel_last_error();

  // A live module and kernel; a stale module and kernel (the module destroyed).
  const accel_module_source_t source = accel_test::NativeSource(accel_test::TestModule());
  const accel_module_desc_t md = accel_test::ModuleDesc(&source, 1, "bad-input");
  ASSERT_EQ(accel_module_create(f.device, &md, &f.module), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_module_get_kernel(f.module, "vadd", &f.kernel), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_module_create(f.device, &md, &f.stale_module), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_module_get_kernel(f.stale_module, "vadd", &f.stale_kernel), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_module_destroy(f.stale_module), ACCEL_SUCCESS) << accel_last_error();

  // A live tenant and a stale one.
  accel_tenant_desc_t td{};
  td.stype = ACCEL_STRUCTURE_TYPE_TENANT_DESC;
  td.struct_size = sizeof(td);
  td.other_limit = ACCEL_MEMORY_UNLIMITED;
  ASSERT_EQ(accel_tenant_create(f.instance, &td, &f.tenant), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_tenant_create(f.instance, &td, &f.stale_tenant), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_tenant_destroy(f.stale_tenant), ACCEL_SUCCESS) << accel_last_error();

  // A live prepared launch of vadd and a stale one.
  const VaddLaunch vadd(f.buffer);
  ASSERT_EQ(accel_kernel_prepare_launch(f.kernel, &vadd.desc, &f.prepared), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_kernel_prepare_launch(f.kernel, &vadd.desc, &f.stale_prepared), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_prepared_launch_destroy(f.stale_prepared), ACCEL_SUCCESS) << accel_last_error();
}

template <typename T>
T OutStruct(uint32_t stype) {
  T t{};
  t.stype = stype;
  t.struct_size = sizeof(T);
  return t;
}

// Bad input loses nothing: every live object still does its job.
void ExpectFixtureStillWorks(Fixture& f) {
  SCOPED_TRACE("fixture objects after the bad-input cases");
  std::vector<uint8_t> in(256), out(256, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7 + 3);
  EXPECT_EQ(accel_stream_copy_host_to_buffer(f.stream, in.data(), f.buffer, 128, in.size()), ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_EQ(accel_stream_record_event(f.stream, f.event), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_copy_buffer_to_host(f.stream, f.buffer, 128, out.data(), out.size()), ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(f.stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(in, out) << "stream copy round trip";
  EXPECT_EQ(accel_event_synchronize(f.event, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();

  accel_buffer_properties_t bp{};
  bp.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
  bp.struct_size = sizeof(bp);
  EXPECT_EQ(accel_buffer_get_properties(f.buffer, &bp), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(bp.size, kBufferSize);
  EXPECT_EQ(bp.mapped, 0u) << "a bad-input case left the buffer mapped";
  EXPECT_EQ(bp.device, f.device);

  accel_device_capabilities_t caps{};
  caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  caps.struct_size = sizeof(caps);
  EXPECT_EQ(accel_device_get_capabilities(f.device, &caps), ACCEL_SUCCESS) << accel_last_error();
  accel_backend_properties_t backp{};
  backp.stype = ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES;
  backp.struct_size = sizeof(backp);
  EXPECT_EQ(accel_backend_get_properties(f.backend, &backp), ACCEL_SUCCESS) << accel_last_error();
  accel_physical_device_properties_t pp{};
  pp.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
  pp.struct_size = sizeof(pp);
  EXPECT_EQ(accel_physical_device_get_properties(f.physical, &pp), ACCEL_SUCCESS) << accel_last_error();
  uint32_t entries = 0;
  EXPECT_EQ(accel_instance_get_loader_entry_count(f.instance, &entries), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(FirstDevice(f.instance), f.device);
  for (accel_event_t e : {f.timing_start, f.timing_end}) {
    EXPECT_EQ(accel_event_query(e), ACCEL_SUCCESS) << accel_last_error();
  }

  // The kernel still launches: c = a + b over the buffer's first 16 floats, in place.
  std::vector<float> values(16, 1.25f), sums(16, 0.0f);
  const VaddLaunch vadd(f.buffer);
  EXPECT_EQ(accel_stream_copy_host_to_buffer(f.stream, values.data(), f.buffer, 0, 64), ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_EQ(accel_stream_launch_kernel(f.stream, f.kernel, &vadd.desc), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_copy_buffer_to_host(f.stream, f.buffer, 64, sums.data(), 64), ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(f.stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  for (float v : sums) EXPECT_EQ(v, 2.5f) << "vadd after the bad-input cases";
  auto mp = OutStruct<accel_module_properties_t>(ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES);
  EXPECT_EQ(accel_module_get_properties(f.module, &mp), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(mp.kernel_count, 4u);
}

void TearDownFixture(Fixture& f) {
  if (f.instance == nullptr) return;
  // Explicit destroys of the children first (they must all still be live), then the instance.
  for (accel_event_t e : {f.event, f.timing_start, f.timing_end}) {
    if (e != nullptr) {
      EXPECT_EQ(accel_event_destroy(e), ACCEL_SUCCESS) << accel_last_error();
    }
  }
  if (f.stream != nullptr) {
    EXPECT_EQ(accel_stream_destroy(f.stream), ACCEL_SUCCESS) << accel_last_error();
  }
  if (f.module != nullptr) {
    EXPECT_EQ(accel_module_destroy(f.module), ACCEL_SUCCESS) << accel_last_error();
  }
  if (f.buffer != nullptr) {
    EXPECT_EQ(accel_buffer_destroy(f.buffer), ACCEL_SUCCESS) << accel_last_error();
  }
  if (f.tenant != nullptr) {
    EXPECT_EQ(accel_tenant_destroy(f.tenant), ACCEL_SUCCESS) << accel_last_error();
  }
  EXPECT_EQ(accel_instance_destroy(f.instance), ACCEL_SUCCESS) << accel_last_error();
  f.instance = nullptr;
}

accel_status_t BlockUntilReleased(void* user_data, accel_status_t /*status*/) {
  auto* release = static_cast<std::atomic<bool>*>(user_data);
  while (!release->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return ACCEL_SUCCESS;
}

accel_status_t Succeed(void* /*user_data*/, accel_status_t /*status*/) { return ACCEL_SUCCESS; }

// --- Handle traits: the stale and foreign (wrong-type) value for each handle type ------------------------------------

template <typename H>
struct HandleTraits;
template <>
struct HandleTraits<accel_instance_t> {
  static constexpr const char* kName = "instance";
  static constexpr const char* kForeignName = "device";
  static accel_instance_t Stale(const Fixture& f) { return f.stale_instance; }
  static accel_instance_t Foreign(const Fixture& f) { return reinterpret_cast<accel_instance_t>(f.device); }
};
template <>
struct HandleTraits<accel_backend_t> {
  static constexpr const char* kName = "backend";
  static constexpr const char* kForeignName = "device";
  static accel_backend_t Stale(const Fixture& f) { return f.stale_backend; }
  static accel_backend_t Foreign(const Fixture& f) { return reinterpret_cast<accel_backend_t>(f.device); }
};
template <>
struct HandleTraits<accel_device_t> {
  static constexpr const char* kName = "device";
  static constexpr const char* kForeignName = "buffer";
  static accel_device_t Stale(const Fixture& f) { return f.stale_device; }
  static accel_device_t Foreign(const Fixture& f) { return reinterpret_cast<accel_device_t>(f.buffer); }
};
template <>
struct HandleTraits<accel_physical_device_t> {
  static constexpr const char* kName = "physical device";
  static constexpr const char* kForeignName = "device";
  static accel_physical_device_t Stale(const Fixture& f) { return f.stale_physical; }
  static accel_physical_device_t Foreign(const Fixture& f) {
    return reinterpret_cast<accel_physical_device_t>(f.device);
  }
};
template <>
struct HandleTraits<accel_buffer_t> {
  static constexpr const char* kName = "buffer";
  static constexpr const char* kForeignName = "stream";
  static accel_buffer_t Stale(const Fixture& f) { return f.stale_buffer; }
  static accel_buffer_t Foreign(const Fixture& f) { return reinterpret_cast<accel_buffer_t>(f.stream); }
};
template <>
struct HandleTraits<accel_stream_t> {
  static constexpr const char* kName = "stream";
  static constexpr const char* kForeignName = "event";
  static accel_stream_t Stale(const Fixture& f) { return f.stale_stream; }
  static accel_stream_t Foreign(const Fixture& f) { return reinterpret_cast<accel_stream_t>(f.event); }
};
template <>
struct HandleTraits<accel_event_t> {
  static constexpr const char* kName = "event";
  static constexpr const char* kForeignName = "buffer";
  static accel_event_t Stale(const Fixture& f) { return f.stale_event; }
  static accel_event_t Foreign(const Fixture& f) { return reinterpret_cast<accel_event_t>(f.buffer); }
};

template <>
struct HandleTraits<accel_module_t> {
  static constexpr const char* kName = "module";
  static constexpr const char* kForeignName = "kernel";
  static accel_module_t Stale(const Fixture& f) { return f.stale_module; }
  static accel_module_t Foreign(const Fixture& f) { return reinterpret_cast<accel_module_t>(f.kernel); }
};
template <>
struct HandleTraits<accel_kernel_t> {
  static constexpr const char* kName = "kernel";
  static constexpr const char* kForeignName = "module";
  static accel_kernel_t Stale(const Fixture& f) { return f.stale_kernel; }
  static accel_kernel_t Foreign(const Fixture& f) { return reinterpret_cast<accel_kernel_t>(f.module); }
};

template <>
struct HandleTraits<accel_tenant_t> {
  static constexpr const char* kName = "tenant";
  static constexpr const char* kForeignName = "buffer";
  static accel_tenant_t Stale(const Fixture& f) { return f.stale_tenant; }
  static accel_tenant_t Foreign(const Fixture& f) { return reinterpret_cast<accel_tenant_t>(f.buffer); }
};
template <>
struct HandleTraits<accel_prepared_launch_t> {
  static constexpr const char* kName = "prepared launch";
  static constexpr const char* kForeignName = "kernel";
  static accel_prepared_launch_t Stale(const Fixture& f) { return f.stale_prepared; }
  static accel_prepared_launch_t Foreign(const Fixture& f) {
    return reinterpret_cast<accel_prepared_launch_t>(f.kernel);
  }
};

// --- The table -------------------------------------------------------------------------------------------------------

enum class Kind { kNull, kStale, kWrongType, kGarbage, kOutOfRange, kBehaviour };
constexpr Kind kRequiredKinds[] = {Kind::kNull, Kind::kStale, Kind::kWrongType, Kind::kGarbage, Kind::kOutOfRange};

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kNull: return "NULL";
    case Kind::kStale: return "stale handle";
    case Kind::kWrongType: return "wrong-type handle";
    case Kind::kGarbage: return "garbage handle";
    case Kind::kOutOfRange: return "out-of-range value";
    case Kind::kBehaviour: return "documented behaviour";
  }
  return "?";
}

using Call = std::function<accel_status_t(Fixture&)>;
using Check = std::function<void(Fixture&)>;

struct Case {
  Kind kind = Kind::kNull;
  std::string label;  // what the case passes
  Call call;          // status-returning case
  accel_status_t expected = ACCEL_SUCCESS;
  std::string argument;        // must appear in the message, quoted: "'offset'"
  std::string detail;          // optional further substring of the message
  Check check;                 // a case for a function that returns no status
  std::string not_applicable;  // non-empty: the reason this kind does not apply
  bool applicable() const { return not_applicable.empty(); }
};

struct Row {
  std::string function;
  std::vector<Case> cases;
};

void PrintTo(const Row& row, std::ostream* os) { *os << row.function; }

std::string Quoted(const std::string& argument) { return "'" + argument + "'"; }

// Builds one row.
class RowBuilder {
 public:
  explicit RowBuilder(std::string function) { row_.function = std::move(function); }

  // A status-returning case. `argument` is the parameter name, unquoted.
  RowBuilder& Expect(Kind kind, std::string label, accel_status_t code, const std::string& argument, Call call,
                     std::string detail = "") {
    Case c;
    c.kind = kind;
    c.label = std::move(label);
    c.call = std::move(call);
    c.expected = code;
    c.argument = Quoted(argument);
    c.detail = std::move(detail);
    row_.cases.push_back(std::move(c));
    return *this;
  }

  // NULL, stale, wrong-type and garbage values for one handle parameter;
  // `call(f, h)` calls the function with `h` in that parameter.
  template <typename H>
  RowBuilder& Handle(const std::string& argument, std::function<accel_status_t(Fixture&, H)> call) {
    using T = HandleTraits<H>;
    const std::string want = T::kName;
    Expect(
        Kind::kNull, "NULL " + Quoted(argument), ACCEL_ERROR_INVALID_HANDLE, argument,
        [call](Fixture& f) { return call(f, H{}); }, "is NULL (expected a " + want + " handle)");
    Expect(
        Kind::kStale, "stale " + want + " as " + Quoted(argument), ACCEL_ERROR_INVALID_HANDLE, argument,
        [call](Fixture& f) { return call(f, T::Stale(f)); }, "is a stale " + want + " handle");
    Expect(
        Kind::kWrongType, std::string("live ") + T::kForeignName + " handle as " + Quoted(argument),
        ACCEL_ERROR_INVALID_HANDLE, argument, [call](Fixture& f) { return call(f, T::Foreign(f)); },
        std::string("is a ") + T::kForeignName + " handle, not a " + want + " handle");
    Expect(
        Kind::kGarbage, "0x1234 as " + Quoted(argument), ACCEL_ERROR_INVALID_HANDLE, argument,
        [call](Fixture& f) { return call(f, reinterpret_cast<H>(kGarbageHandle)); },
        "(0x1234) is not an Accel handle (expected a " + want + " handle)");
    return *this;
  }

  RowBuilder& NotApplicable(Kind kind, std::string reason) {
    Case c;
    c.kind = kind;
    c.not_applicable = std::move(reason);
    row_.cases.push_back(std::move(c));
    return *this;
  }
  RowBuilder& NoHandle() {
    NotApplicable(Kind::kStale, "takes no handle");
    NotApplicable(Kind::kWrongType, "takes no handle");
    return NotApplicable(Kind::kGarbage, "takes no handle");
  }

  RowBuilder& Behaviour(Kind kind, std::string label, Check check) {
    Case c;
    c.kind = kind;
    c.label = std::move(label);
    c.check = std::move(check);
    row_.cases.push_back(std::move(c));
    return *this;
  }

  Row Build() { return std::move(row_); }

 private:
  Row row_;
};

// Destroys what a case created if the call unexpectedly succeeded.
template <typename H, typename D>
accel_status_t Cleanup(accel_status_t s, H h, D destroy) {
  if (s == ACCEL_SUCCESS && h != nullptr) destroy(h);
  return s;
}

accel_instance_desc_t BadInstanceDesc(void (*edit)(accel_instance_desc_t&)) {
  accel_instance_desc_t d = HostOnly();
  edit(d);
  return d;
}

accel_status_t CreateInstance(const accel_instance_desc_t& d) {
  accel_instance_t i = nullptr;
  return Cleanup(accel_instance_create(&d, &i), i, accel_instance_destroy);
}

accel_status_t CreateBuffer(accel_device_t device, const accel_buffer_desc_t& d) {
  accel_buffer_t b = nullptr;
  return Cleanup(accel_buffer_create(device, &d, &b), b, accel_buffer_destroy);
}

accel_status_t CreateStream(accel_device_t device, const accel_stream_desc_t* d) {
  accel_stream_t s = nullptr;
  return Cleanup(accel_stream_create(device, d, &s), s, accel_stream_destroy);
}

accel_status_t CreateEvent(accel_device_t device, const accel_event_desc_t* d) {
  accel_event_t e = nullptr;
  return Cleanup(accel_event_create(device, d, &e), e, accel_event_destroy);
}

accel_stream_desc_t StreamDesc() {
  accel_stream_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_STREAM_DESC;
  d.struct_size = sizeof(d);
  return d;
}

accel_event_desc_t EventDesc() {
  accel_event_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_EVENT_DESC;
  d.struct_size = sizeof(d);
  return d;
}

// Out-struct cases shared by every get_properties-like function: NULL, wrong
// stype, struct_size 0 (smaller than the header).
template <typename T>
RowBuilder& OutStructCases(RowBuilder& b, const std::string& argument, uint32_t stype,
                           std::function<accel_status_t(Fixture&, T*)> call) {
  b.Expect(
      Kind::kNull, "NULL " + Quoted(argument), ACCEL_ERROR_INVALID_ARGUMENT, argument,
      [call](Fixture& f) { return call(f, nullptr); }, "is NULL");
  b.Expect(Kind::kOutOfRange, Quoted(argument) + " with a wrong stype", ACCEL_ERROR_INVALID_ARGUMENT, argument,
           [call, stype](Fixture& f) {
             T t = OutStruct<T>(stype + 1000);
             return call(f, &t);
           });
  b.Expect(Kind::kOutOfRange, Quoted(argument) + " with struct_size 0", ACCEL_ERROR_INVALID_ARGUMENT, argument,
           [call, stype](Fixture& f) {
             T t = OutStruct<T>(stype);
             t.struct_size = 0;
             return call(f, &t);
           });
  return b;
}

// Enumeration cases: NULL inout_count, and a too-small capacity (the total is
// written back). `call(f, count, array)`.
template <typename H>
RowBuilder& EnumerationCases(RowBuilder& b, std::function<accel_status_t(Fixture&, uint32_t*, H*)> call) {
  b.Expect(
      Kind::kNull, "NULL 'inout_count'", ACCEL_ERROR_INVALID_ARGUMENT, "inout_count",
      [call](Fixture& f) { return call(f, nullptr, nullptr); }, "is NULL");
  b.Expect(Kind::kOutOfRange, "capacity 0 with an array (total written back)", ACCEL_ERROR_INVALID_ARGUMENT,
           "inout_count", [call](Fixture& f) {
             uint32_t total = 0;
             EXPECT_EQ(call(f, &total, nullptr), ACCEL_SUCCESS) << accel_last_error();
             EXPECT_GE(total, 1u);
             std::vector<H> array(total + 1, nullptr);
             uint32_t count = 0;
             accel_status_t s = call(f, &count, array.data());
             EXPECT_EQ(count, total) << "the total is written back to 'inout_count'";
             for (H h : array) EXPECT_EQ(h, nullptr) << "nothing is written to a too-small array";
             return s;
           });
  return b;
}

std::vector<Row> MakeTable() {
  std::vector<Row> rows;
  using S = accel_status_t;

  // ---- Status, last error, version ----
  rows.push_back(RowBuilder("accel_status_name")
                     .NotApplicable(Kind::kNull, "takes a plain enum value, no pointer")
                     .NoHandle()
                     .Behaviour(Kind::kOutOfRange, "unknown values give \"ACCEL_STATUS_UNKNOWN\"",
                                [](Fixture&) {
                                  for (int v : {2, -15, 12345, -99999, static_cast<int>(ACCEL_STATUS_FORCE32)}) {
                                    const char* name = accel_status_name(static_cast<accel_status_t>(v));
                                    ASSERT_NE(name, nullptr) << v;
                                    EXPECT_STREQ(name, "ACCEL_STATUS_UNKNOWN") << v;
                                  }
                                })
                     .Behaviour(Kind::kBehaviour, "known values give their enumerator's name",
                                [](Fixture&) {
                                  EXPECT_STREQ(accel_status_name(ACCEL_SUCCESS), "ACCEL_SUCCESS");
                                  EXPECT_STREQ(accel_status_name(ACCEL_NOT_READY), "ACCEL_NOT_READY");
                                  EXPECT_STREQ(accel_status_name(ACCEL_ERROR_INVALID_HANDLE),
                                               "ACCEL_ERROR_INVALID_HANDLE");
                                  EXPECT_STREQ(accel_status_name(ACCEL_ERROR_INTERNAL), "ACCEL_ERROR_INTERNAL");
                                })
                     .Build());

  rows.push_back(RowBuilder("accel_last_error")
                     .NotApplicable(Kind::kNull, "takes no argument")
                     .NoHandle()
                     .NotApplicable(Kind::kOutOfRange, "takes no argument")
                     .Behaviour(Kind::kBehaviour, "reports the last failing call; a succeeding call leaves it",
                                [](Fixture& f) {
                                  accel_buffer_t b = nullptr;
                                  ASSERT_EQ(accel_buffer_create(f.device, nullptr, &b), ACCEL_ERROR_INVALID_ARGUMENT);
                                  const std::string failed = accel_last_error();
                                  EXPECT_EQ(failed, "accel_buffer_create: 'desc' is NULL");
                                  uint32_t n = 0;
                                  ASSERT_EQ(accel_instance_enumerate_devices(f.instance, &n, nullptr), ACCEL_SUCCESS);
                                  EXPECT_EQ(std::string(accel_last_error()), failed) << "a succeeding call changed it";
                                  EXPECT_EQ(accel_stream_query(f.stream), ACCEL_SUCCESS);
                                  EXPECT_EQ(std::string(accel_last_error()), failed);
                                })
                     .Behaviour(Kind::kBehaviour, "\"\" (never NULL) on a thread where nothing failed; thread-local",
                                [](Fixture& f) {
                                  ASSERT_EQ(accel_buffer_unmap(f.buffer), ACCEL_ERROR_FAILED_PRECONDITION);
                                  std::string other;
                                  bool was_null = true;
                                  std::thread([&] {
                                    const char* m = accel_last_error();
                                    was_null = (m == nullptr);
                                    if (m != nullptr) other = m;
                                  }).join();
                                  EXPECT_FALSE(was_null);
                                  EXPECT_EQ(other, "");
                                  EXPECT_TRUE(
                                      Contains(accel_last_error(), "accel_buffer_unmap: 'buffer' is not mapped"));
                                })
                     .Build());

  rows.push_back(RowBuilder("accel_set_last_error")
                     .NotApplicable(Kind::kNull, "NULL 'message' is valid: an empty message")
                     .NoHandle()
                     .NotApplicable(Kind::kOutOfRange, "any status is accepted, as a layer above may define it")
                     .Behaviour(Kind::kBehaviour, "sets the code and a copy of the text; returns the code",
                                [](Fixture&) {
                                  std::string text = "runtime: task 'x' failed";
                                  EXPECT_EQ(accel_set_last_error(ACCEL_ERROR_CANCELLED, text.c_str()),
                                            ACCEL_ERROR_CANCELLED);
                                  text.assign(text.size(), '#');
                                  EXPECT_STREQ(accel_last_error(), "runtime: task 'x' failed");
                                  EXPECT_EQ(accel_last_error_status(), ACCEL_ERROR_CANCELLED);
                                  EXPECT_EQ(accel_set_last_error(ACCEL_SUCCESS, nullptr), ACCEL_SUCCESS);
                                  EXPECT_STREQ(accel_last_error(), "");
                                })
                     .Build());
  rows.push_back(RowBuilder("accel_last_error_status")
                     .NotApplicable(Kind::kNull, "takes no argument")
                     .NoHandle()
                     .NotApplicable(Kind::kOutOfRange, "takes no argument")
                     .Behaviour(Kind::kBehaviour, "the code of the last failing call; a succeeding call leaves it",
                                [](Fixture& f) {
                                  ASSERT_EQ(accel_device_get_info(f.device, static_cast<accel_device_info_key_t>(0), 0,
                                                                  nullptr, nullptr),
                                            ACCEL_ERROR_INVALID_ENUM);
                                  EXPECT_EQ(accel_last_error_status(), ACCEL_ERROR_INVALID_ENUM);
                                  ASSERT_EQ(accel_stream_destroy(nullptr), ACCEL_ERROR_INVALID_HANDLE);
                                  EXPECT_EQ(accel_last_error_status(), ACCEL_ERROR_INVALID_HANDLE);
                                  uint32_t n = 0;
                                  ASSERT_EQ(accel_instance_get_loader_entry_count(f.instance, &n), ACCEL_SUCCESS);
                                  EXPECT_EQ(accel_last_error_status(), ACCEL_ERROR_INVALID_HANDLE)
                                      << "a success changed it";
                                })
                     .Behaviour(Kind::kBehaviour, "ACCEL_SUCCESS on a thread where nothing failed",
                                [](Fixture&) {
                                  ASSERT_EQ(accel_version_get(nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
                                  accel_status_t other = ACCEL_ERROR_INTERNAL;
                                  std::thread([&] { other = accel_last_error_status(); }).join();
                                  EXPECT_EQ(other, ACCEL_SUCCESS);
                                  EXPECT_EQ(accel_last_error_status(), ACCEL_ERROR_INVALID_ARGUMENT);
                                })
                     .Build());

  {
    RowBuilder b("accel_version_get");
    b.NoHandle();
    OutStructCases<accel_version_info_t>(b, "out_info", ACCEL_STRUCTURE_TYPE_VERSION_INFO,
                                         [](Fixture&, accel_version_info_t* v) { return accel_version_get(v); });
    b.Expect(Kind::kOutOfRange, "'out_info' with struct_size 8 (half the header)", ACCEL_ERROR_INVALID_ARGUMENT,
             "out_info", [](Fixture&) {
               accel_version_info_t v = OutStruct<accel_version_info_t>(ACCEL_STRUCTURE_TYPE_VERSION_INFO);
               v.struct_size = 8;
               return accel_version_get(&v);
             });
    rows.push_back(b.Build());
  }

  // ---- Instances and the loader report ----
  rows.push_back(
      RowBuilder("accel_instance_create")
          .Expect(Kind::kNull, "NULL 'out_instance'", ACCEL_ERROR_INVALID_ARGUMENT, "out_instance",
                  [](Fixture&) {
                    accel_instance_desc_t d = HostOnly();
                    return accel_instance_create(&d, nullptr);
                  })
          .NotApplicable(Kind::kStale, "takes no handle (it creates one)")
          .NotApplicable(Kind::kWrongType, "takes no handle (it creates one)")
          .NotApplicable(Kind::kGarbage, "takes no handle (it creates one)")
          .Expect(Kind::kOutOfRange, "'desc' with a wrong stype", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
                  [](Fixture&) {
                    return CreateInstance(
                        BadInstanceDesc([](accel_instance_desc_t& d) { d.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC; }));
                  })
          .Expect(Kind::kOutOfRange, "'desc' with struct_size 0", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
                  [](Fixture&) {
                    return CreateInstance(BadInstanceDesc([](accel_instance_desc_t& d) { d.struct_size = 0; }));
                  })
          .Expect(Kind::kOutOfRange, "'desc->flags' with unknown bits", ACCEL_ERROR_INVALID_ARGUMENT, "desc->flags",
                  [](Fixture&) {
                    return CreateInstance(BadInstanceDesc([](accel_instance_desc_t& d) { d.flags |= 1u << 8; }));
                  })
          .Expect(Kind::kOutOfRange, "'desc->log_level' 99", ACCEL_ERROR_INVALID_ENUM, "desc->log_level",
                  [](Fixture&) {
                    return CreateInstance(BadInstanceDesc(
                        [](accel_instance_desc_t& d) { d.log_level = static_cast<accel_log_level_t>(99); }));
                  })
          .Build());

  rows.push_back(
      RowBuilder("accel_instance_destroy")
          .Handle<accel_instance_t>("instance", [](Fixture&, accel_instance_t i) { return accel_instance_destroy(i); })
          .NotApplicable(Kind::kOutOfRange, "has no value parameter, only the handle")
          .Build());

  rows.push_back(RowBuilder("accel_instance_get_loader_entry_count")
                     .Handle<accel_instance_t>("instance",
                                               [](Fixture&, accel_instance_t i) {
                                                 uint32_t n = 0;
                                                 return accel_instance_get_loader_entry_count(i, &n);
                                               })
                     .Expect(Kind::kNull, "NULL 'out_count'", ACCEL_ERROR_INVALID_ARGUMENT, "out_count",
                             [](Fixture& f) { return accel_instance_get_loader_entry_count(f.instance, nullptr); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter with a range")
                     .Build());

  {
    RowBuilder b("accel_instance_get_loader_entry");
    b.Handle<accel_instance_t>("instance", [](Fixture&, accel_instance_t i) {
      auto e = OutStruct<accel_loader_entry_t>(ACCEL_STRUCTURE_TYPE_LOADER_ENTRY);
      return accel_instance_get_loader_entry(i, 0, &e);
    });
    OutStructCases<accel_loader_entry_t>(
        b, "out_entry", ACCEL_STRUCTURE_TYPE_LOADER_ENTRY,
        [](Fixture& f, accel_loader_entry_t* e) { return accel_instance_get_loader_entry(f.instance, 0, e); });
    b.Expect(Kind::kOutOfRange, "'index' == the entry count", ACCEL_ERROR_INVALID_ARGUMENT, "index", [](Fixture& f) {
      uint32_t n = 0;
      EXPECT_EQ(accel_instance_get_loader_entry_count(f.instance, &n), ACCEL_SUCCESS);
      auto e = OutStruct<accel_loader_entry_t>(ACCEL_STRUCTURE_TYPE_LOADER_ENTRY);
      return accel_instance_get_loader_entry(f.instance, n, &e);
    });
    b.Expect(Kind::kOutOfRange, "'index' UINT32_MAX", ACCEL_ERROR_INVALID_ARGUMENT, "index", [](Fixture& f) {
      auto e = OutStruct<accel_loader_entry_t>(ACCEL_STRUCTURE_TYPE_LOADER_ENTRY);
      return accel_instance_get_loader_entry(f.instance, UINT32_MAX, &e);
    });
    rows.push_back(b.Build());
  }

  rows.push_back(RowBuilder("accel_instance_get_loader_warning_count")
                     .Handle<accel_instance_t>("instance",
                                               [](Fixture&, accel_instance_t i) {
                                                 uint32_t n = 0;
                                                 return accel_instance_get_loader_warning_count(i, &n);
                                               })
                     .Expect(Kind::kNull, "NULL 'out_count'", ACCEL_ERROR_INVALID_ARGUMENT, "out_count",
                             [](Fixture& f) { return accel_instance_get_loader_warning_count(f.instance, nullptr); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter with a range")
                     .Build());

  {
    RowBuilder b("accel_instance_get_loader_warning");
    b.Handle<accel_instance_t>("instance", [](Fixture&, accel_instance_t i) {
      auto w = OutStruct<accel_loader_warning_t>(ACCEL_STRUCTURE_TYPE_LOADER_WARNING);
      return accel_instance_get_loader_warning(i, 0, &w);
    });
    OutStructCases<accel_loader_warning_t>(
        b, "out_warning", ACCEL_STRUCTURE_TYPE_LOADER_WARNING,
        [](Fixture& f, accel_loader_warning_t* w) { return accel_instance_get_loader_warning(f.instance, 0, w); });
    b.Expect(Kind::kOutOfRange, "'index' == the warning count", ACCEL_ERROR_INVALID_ARGUMENT, "index", [](Fixture& f) {
      uint32_t n = 0;
      EXPECT_EQ(accel_instance_get_loader_warning_count(f.instance, &n), ACCEL_SUCCESS);
      auto w = OutStruct<accel_loader_warning_t>(ACCEL_STRUCTURE_TYPE_LOADER_WARNING);
      return accel_instance_get_loader_warning(f.instance, n, &w);
    });
    rows.push_back(b.Build());
  }

  // ---- Enumerations ----
  {
    RowBuilder b("accel_instance_enumerate_backends");
    b.Handle<accel_instance_t>("instance", [](Fixture&, accel_instance_t i) {
      uint32_t n = 0;
      return accel_instance_enumerate_backends(i, &n, nullptr);
    });
    EnumerationCases<accel_backend_t>(b, [](Fixture& f, uint32_t* n, accel_backend_t* a) {
      return accel_instance_enumerate_backends(f.instance, n, a);
    });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_instance_enumerate_devices");
    b.Handle<accel_instance_t>("instance", [](Fixture&, accel_instance_t i) {
      uint32_t n = 0;
      return accel_instance_enumerate_devices(i, &n, nullptr);
    });
    EnumerationCases<accel_device_t>(b, [](Fixture& f, uint32_t* n, accel_device_t* a) {
      return accel_instance_enumerate_devices(f.instance, n, a);
    });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_instance_enumerate_physical_devices");
    b.Handle<accel_instance_t>("instance", [](Fixture&, accel_instance_t i) {
      uint32_t n = 0;
      return accel_instance_enumerate_physical_devices(i, &n, nullptr);
    });
    EnumerationCases<accel_physical_device_t>(b, [](Fixture& f, uint32_t* n, accel_physical_device_t* a) {
      return accel_instance_enumerate_physical_devices(f.instance, n, a);
    });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_backend_enumerate_devices");
    b.Handle<accel_backend_t>("backend", [](Fixture&, accel_backend_t h) {
      uint32_t n = 0;
      return accel_backend_enumerate_devices(h, &n, nullptr);
    });
    EnumerationCases<accel_device_t>(
        b, [](Fixture& f, uint32_t* n, accel_device_t* a) { return accel_backend_enumerate_devices(f.backend, n, a); });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_physical_device_enumerate_devices");
    b.Handle<accel_physical_device_t>("physical_device", [](Fixture&, accel_physical_device_t h) {
      uint32_t n = 0;
      return accel_physical_device_enumerate_devices(h, &n, nullptr);
    });
    EnumerationCases<accel_device_t>(b, [](Fixture& f, uint32_t* n, accel_device_t* a) {
      return accel_physical_device_enumerate_devices(f.physical, n, a);
    });
    rows.push_back(b.Build());
  }

  // ---- Properties ----
  {
    RowBuilder b("accel_backend_get_properties");
    b.Handle<accel_backend_t>("backend", [](Fixture&, accel_backend_t h) {
      auto p = OutStruct<accel_backend_properties_t>(ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES);
      return accel_backend_get_properties(h, &p);
    });
    OutStructCases<accel_backend_properties_t>(
        b, "out_properties", ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES,
        [](Fixture& f, accel_backend_properties_t* p) { return accel_backend_get_properties(f.backend, p); });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_physical_device_get_properties");
    b.Handle<accel_physical_device_t>("physical_device", [](Fixture&, accel_physical_device_t h) {
      auto p = OutStruct<accel_physical_device_properties_t>(ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES);
      return accel_physical_device_get_properties(h, &p);
    });
    OutStructCases<accel_physical_device_properties_t>(b, "out_properties",
                                                       ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES,
                                                       [](Fixture& f, accel_physical_device_properties_t* p) {
                                                         return accel_physical_device_get_properties(f.physical, p);
                                                       });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_device_get_capabilities");
    b.Handle<accel_device_t>("device", [](Fixture&, accel_device_t h) {
      auto c = OutStruct<accel_device_capabilities_t>(ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES);
      return accel_device_get_capabilities(h, &c);
    });
    OutStructCases<accel_device_capabilities_t>(
        b, "out_capabilities", ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES,
        [](Fixture& f, accel_device_capabilities_t* c) { return accel_device_get_capabilities(f.device, c); });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_buffer_get_properties");
    b.Handle<accel_buffer_t>("buffer", [](Fixture&, accel_buffer_t h) {
      auto p = OutStruct<accel_buffer_properties_t>(ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES);
      return accel_buffer_get_properties(h, &p);
    });
    OutStructCases<accel_buffer_properties_t>(
        b, "out_properties", ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES,
        [](Fixture& f, accel_buffer_properties_t* p) { return accel_buffer_get_properties(f.buffer, p); });
    rows.push_back(b.Build());
  }

  // ---- Devices ----
  rows.push_back(
      RowBuilder("accel_device_info_key_describe")
          .Expect(
              Kind::kNull, "'out_name' and 'out_type' both NULL", ACCEL_ERROR_INVALID_ARGUMENT, "out_name",
              [](Fixture&) { return accel_device_info_key_describe(ACCEL_DEVICE_INFO_NAME, nullptr, nullptr); },
              "'out_type'")
          .NoHandle()
          .Expect(Kind::kOutOfRange, "'key' 0", ACCEL_ERROR_INVALID_ENUM, "key",
                  [](Fixture&) {
                    const char* name = nullptr;
                    return accel_device_info_key_describe(static_cast<accel_device_info_key_t>(0), &name, nullptr);
                  })
          .Expect(Kind::kOutOfRange, "'key' one past the last registered key", ACCEL_ERROR_INVALID_ENUM, "key",
                  [](Fixture&) {
                    accel_value_type_t type{};
                    return accel_device_info_key_describe(
                        static_cast<accel_device_info_key_t>(ACCEL_DEVICE_INFO_BACKEND_INDEX + 1), nullptr, &type);
                  })
          .Build());

  rows.push_back(RowBuilder("accel_selector_check")
                     .Expect(Kind::kNull, "NULL 'selector'", ACCEL_ERROR_INVALID_ARGUMENT, "selector",
                             [](Fixture&) { return accel_selector_check(nullptr, nullptr); })
                     .NoHandle()
                     .Expect(Kind::kOutOfRange, "a selector missing a value", ACCEL_ERROR_INVALID_ARGUMENT, "selector",
                             [](Fixture&) {
                               uint32_t column = 0;
                               return accel_selector_check("kind==gpu && (mem>=)", &column);
                             })
                     .Build());
  {
    RowBuilder b("accel_physical_device_get_memory_usage");
    b.Handle<accel_physical_device_t>("physical_device", [](Fixture&, accel_physical_device_t h) {
      auto u = OutStruct<accel_memory_usage_t>(ACCEL_STRUCTURE_TYPE_MEMORY_USAGE);
      return accel_physical_device_get_memory_usage(h, &u);
    });
    OutStructCases<accel_memory_usage_t>(
        b, "out_usage", ACCEL_STRUCTURE_TYPE_MEMORY_USAGE,
        [](Fixture& f, accel_memory_usage_t* u) { return accel_physical_device_get_memory_usage(f.physical, u); });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_tenant_create");
    auto desc = [] {
      accel_tenant_desc_t d{};
      d.stype = ACCEL_STRUCTURE_TYPE_TENANT_DESC;
      d.struct_size = sizeof(d);
      return d;
    };
    b.Handle<accel_instance_t>("instance", [desc](Fixture&, accel_instance_t i) {
      const accel_tenant_desc_t d = desc();
      accel_tenant_t t = nullptr;
      return accel_tenant_create(i, &d, &t);
    });
    b.Expect(Kind::kNull, "NULL 'desc'", ACCEL_ERROR_INVALID_ARGUMENT, "desc", [](Fixture& f) {
      accel_tenant_t t = nullptr;
      return accel_tenant_create(f.instance, nullptr, &t);
    });
    b.Expect(Kind::kNull, "NULL 'out_tenant'", ACCEL_ERROR_INVALID_ARGUMENT, "out_tenant", [desc](Fixture& f) {
      const accel_tenant_desc_t d = desc();
      return accel_tenant_create(f.instance, &d, nullptr);
    });
    b.Expect(Kind::kOutOfRange, "'desc->reserved0' 1", ACCEL_ERROR_INVALID_ARGUMENT, "desc->reserved0",
             [desc](Fixture& f) {
               accel_tenant_desc_t d = desc();
               d.reserved0 = 1;
               accel_tenant_t t = nullptr;
               return accel_tenant_create(f.instance, &d, &t);
             });
    b.Expect(Kind::kOutOfRange, "a stale physical device in 'desc->limits'", ACCEL_ERROR_INVALID_HANDLE,
             "desc->limits[0].physical_device", [desc](Fixture& f) {
               accel_tenant_desc_t d = desc();
               const accel_tenant_limit_t limit{f.stale_physical, 1};
               d.limits = &limit;
               d.limit_count = 1;
               accel_tenant_t t = nullptr;
               return accel_tenant_create(f.instance, &d, &t);
             });
    rows.push_back(b.Build());
  }
  rows.push_back(
      RowBuilder("accel_tenant_destroy")
          .Handle<accel_tenant_t>("tenant", [](Fixture&, accel_tenant_t t) { return accel_tenant_destroy(t); })
          .NotApplicable(Kind::kOutOfRange, "has no value parameter, only the handle")
          .Build());
  {
    RowBuilder b("accel_tenant_get_memory_usage");
    b.Handle<accel_tenant_t>("tenant", [](Fixture& f, accel_tenant_t t) {
      auto u = OutStruct<accel_memory_usage_t>(ACCEL_STRUCTURE_TYPE_MEMORY_USAGE);
      return accel_tenant_get_memory_usage(t, f.physical, &u);
    });
    b.Expect(Kind::kOutOfRange, "a physical device of another instance", ACCEL_ERROR_INVALID_HANDLE, "physical_device",
             [](Fixture& f) {
               auto u = OutStruct<accel_memory_usage_t>(ACCEL_STRUCTURE_TYPE_MEMORY_USAGE);
               return accel_tenant_get_memory_usage(f.tenant, f.stale_physical, &u);
             });
    OutStructCases<accel_memory_usage_t>(
        b, "out_usage", ACCEL_STRUCTURE_TYPE_MEMORY_USAGE,
        [](Fixture& f, accel_memory_usage_t* u) { return accel_tenant_get_memory_usage(f.tenant, f.physical, u); });
    rows.push_back(b.Build());
  }
  rows.push_back(
      RowBuilder("accel_thread_set_tenant")
          .NotApplicable(Kind::kNull, "NULL 'tenant' is valid: it binds no tenant")
          .Expect(Kind::kStale, "stale tenant as 'tenant'", ACCEL_ERROR_INVALID_HANDLE, "tenant",
                  [](Fixture& f) { return accel_thread_set_tenant(f.stale_tenant, nullptr); })
          .Expect(
              Kind::kWrongType, "live buffer handle as 'tenant'", ACCEL_ERROR_INVALID_HANDLE, "tenant",
              [](Fixture& f) { return accel_thread_set_tenant(reinterpret_cast<accel_tenant_t>(f.buffer), nullptr); })
          .Expect(Kind::kGarbage, "0x1234 as 'tenant'", ACCEL_ERROR_INVALID_HANDLE, "tenant",
                  [](Fixture&) {
                    return accel_thread_set_tenant(reinterpret_cast<accel_tenant_t>(kGarbageHandle), nullptr);
                  })
          .NotApplicable(Kind::kOutOfRange, "has no value parameter with a range")
          .Build());
  rows.push_back(RowBuilder("accel_physical_device_matches")
                     .Handle<accel_physical_device_t>("physical_device",
                                                      [](Fixture&, accel_physical_device_t h) {
                                                        uint32_t matches = 0;
                                                        return accel_physical_device_matches(h, "fp32", &matches);
                                                      })
                     .Expect(Kind::kNull, "NULL 'out_matches'", ACCEL_ERROR_INVALID_ARGUMENT, "out_matches",
                             [](Fixture& f) { return accel_physical_device_matches(f.physical, "fp32", nullptr); })
                     .Expect(Kind::kOutOfRange, "an unknown key", ACCEL_ERROR_INVALID_ARGUMENT, "selector",
                             [](Fixture& f) {
                               uint32_t matches = 0;
                               return accel_physical_device_matches(f.physical, "memroy >= 1GiB", &matches);
                             })
                     .Build());
  rows.push_back(
      RowBuilder("accel_physical_device_explain")
          .Handle<accel_physical_device_t>("physical_device",
                                           [](Fixture&, accel_physical_device_t h) {
                                             size_t size = 0;
                                             return accel_physical_device_explain(h, "fp32", 0, nullptr, &size);
                                           })
          .Expect(Kind::kNull, "'out_text' and 'out_size' both NULL", ACCEL_ERROR_INVALID_ARGUMENT, "out_text",
                  [](Fixture& f) { return accel_physical_device_explain(f.physical, "fp32", 0, nullptr, nullptr); })
          .Expect(Kind::kOutOfRange, "'size' too small for the explanation", ACCEL_ERROR_INVALID_ARGUMENT, "size",
                  [](Fixture& f) {
                    char text[2];
                    return accel_physical_device_explain(f.physical, "kind==tpu", sizeof(text), text, nullptr);
                  })
          .Build());

  rows.push_back(
      RowBuilder("accel_device_get_info")
          .Handle<accel_device_t>("device",
                                  [](Fixture&, accel_device_t h) {
                                    size_t n = 0;
                                    return accel_device_get_info(h, ACCEL_DEVICE_INFO_KIND, 0, nullptr, &n);
                                  })
          .Expect(
              Kind::kNull, "'value' and 'out_size' both NULL", ACCEL_ERROR_INVALID_ARGUMENT, "value",
              [](Fixture& f) { return accel_device_get_info(f.device, ACCEL_DEVICE_INFO_NAME, 0, nullptr, nullptr); },
              "'out_size'")
          .Expect(Kind::kOutOfRange, "unknown 'key' 0", ACCEL_ERROR_INVALID_ENUM, "key",
                  [](Fixture& f) {
                    size_t n = 0;
                    return accel_device_get_info(f.device, static_cast<accel_device_info_key_t>(0), 0, nullptr, &n);
                  })
          .Expect(Kind::kOutOfRange, "unknown 'key' 9999", ACCEL_ERROR_INVALID_ENUM, "key",
                  [](Fixture& f) {
                    uint64_t v = 0;
                    return accel_device_get_info(f.device, static_cast<accel_device_info_key_t>(9999), sizeof(v), &v,
                                                 nullptr);
                  })
          .Expect(Kind::kOutOfRange, "'size' 1 for the name (needed size written to 'out_size')",
                  ACCEL_ERROR_INVALID_ARGUMENT, "size",
                  [](Fixture& f) {
                    size_t needed = 0;
                    EXPECT_EQ(accel_device_get_info(f.device, ACCEL_DEVICE_INFO_NAME, 0, nullptr, &needed),
                              ACCEL_SUCCESS);
                    EXPECT_GT(needed, 1u);
                    char value[4] = {'x', 'x', 'x', 'x'};
                    size_t got = 0;
                    S s = accel_device_get_info(f.device, ACCEL_DEVICE_INFO_NAME, 1, value, &got);
                    EXPECT_EQ(got, needed) << "the needed size goes to 'out_size'";
                    EXPECT_EQ(value[1], 'x') << "nothing past 'size' is written";
                    return s;
                  })
          .Expect(Kind::kOutOfRange, "'size' 4 for a uint64 key", ACCEL_ERROR_INVALID_ARGUMENT, "size",
                  [](Fixture& f) {
                    uint64_t v = 0;
                    return accel_device_get_info(f.device, ACCEL_DEVICE_INFO_MEMORY_TOTAL, 4, &v, nullptr);
                  })
          .Build());

  rows.push_back(RowBuilder("accel_device_get_memory_info")
                     .Handle<accel_device_t>("device",
                                             [](Fixture&, accel_device_t h) {
                                               uint64_t total = 0;
                                               return accel_device_get_memory_info(h, nullptr, &total);
                                             })
                     .Expect(
                         Kind::kNull, "'out_free' and 'out_total' both NULL", ACCEL_ERROR_INVALID_ARGUMENT, "out_free",
                         [](Fixture& f) { return accel_device_get_memory_info(f.device, nullptr, nullptr); },
                         "'out_total'")
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter with a range")
                     .Build());

  rows.push_back(RowBuilder("accel_device_get_backend")
                     .Handle<accel_device_t>("device",
                                             [](Fixture&, accel_device_t h) {
                                               accel_backend_t b = nullptr;
                                               return accel_device_get_backend(h, &b);
                                             })
                     .Expect(Kind::kNull, "NULL 'out_backend'", ACCEL_ERROR_INVALID_ARGUMENT, "out_backend",
                             [](Fixture& f) { return accel_device_get_backend(f.device, nullptr); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter with a range")
                     .Build());

  rows.push_back(RowBuilder("accel_device_get_physical_device")
                     .Handle<accel_device_t>("device",
                                             [](Fixture&, accel_device_t h) {
                                               accel_physical_device_t p = nullptr;
                                               return accel_device_get_physical_device(h, &p);
                                             })
                     .Expect(Kind::kNull, "NULL 'out_physical_device'", ACCEL_ERROR_INVALID_ARGUMENT,
                             "out_physical_device",
                             [](Fixture& f) { return accel_device_get_physical_device(f.device, nullptr); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter with a range")
                     .Build());

  // ---- Buffers ----
  rows.push_back(
      RowBuilder("accel_buffer_create")
          .Handle<accel_device_t>("device", [](Fixture&, accel_device_t h) { return CreateBuffer(h, BufferDesc(64)); })
          .Expect(Kind::kNull, "NULL 'desc'", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
                  [](Fixture& f) {
                    accel_buffer_t b = nullptr;
                    return Cleanup(accel_buffer_create(f.device, nullptr, &b), b, accel_buffer_destroy);
                  })
          .Expect(Kind::kNull, "NULL 'out_buffer'", ACCEL_ERROR_INVALID_ARGUMENT, "out_buffer",
                  [](Fixture& f) {
                    accel_buffer_desc_t d = BufferDesc(64);
                    return accel_buffer_create(f.device, &d, nullptr);
                  })
          .Expect(Kind::kOutOfRange, "'desc->size' 0", ACCEL_ERROR_INVALID_ARGUMENT, "desc->size",
                  [](Fixture& f) { return CreateBuffer(f.device, BufferDesc(0)); })
          .Expect(
              Kind::kOutOfRange, "memory kind 99", ACCEL_ERROR_INVALID_ENUM, "desc->memory_kind",
              [](Fixture& f) { return CreateBuffer(f.device, BufferDesc(64, static_cast<accel_memory_kind_t>(99))); })
          .Expect(Kind::kOutOfRange, "'desc->flags' not 0", ACCEL_ERROR_INVALID_ARGUMENT, "desc->flags",
                  [](Fixture& f) {
                    accel_buffer_desc_t d = BufferDesc(64);
                    d.flags = 1;
                    return CreateBuffer(f.device, d);
                  })
          .Expect(Kind::kOutOfRange, "'desc' with a wrong stype", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
                  [](Fixture& f) {
                    accel_buffer_desc_t d = BufferDesc(64);
                    d.stype = ACCEL_STRUCTURE_TYPE_STREAM_DESC;
                    return CreateBuffer(f.device, d);
                  })
          .Expect(Kind::kOutOfRange, "'desc' with struct_size 0", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
                  [](Fixture& f) {
                    accel_buffer_desc_t d = BufferDesc(64);
                    d.struct_size = 0;
                    return CreateBuffer(f.device, d);
                  })
          .Expect(Kind::kOutOfRange, "'desc->size' UINT64_MAX, past max_allocation", ACCEL_ERROR_RESOURCE_EXHAUSTED,
                  "desc->size", [](Fixture& f) { return CreateBuffer(f.device, BufferDesc(UINT64_MAX)); })
          .Build());

  rows.push_back(
      RowBuilder("accel_buffer_destroy")
          .Handle<accel_buffer_t>("buffer", [](Fixture&, accel_buffer_t h) { return accel_buffer_destroy(h); })
          .NotApplicable(Kind::kOutOfRange, "has no value parameter, only the handle")
          .Build());

  rows.push_back(
      RowBuilder("accel_buffer_map")
          .Handle<accel_buffer_t>("buffer",
                                  [](Fixture&, accel_buffer_t h) {
                                    void* p = nullptr;
                                    return accel_buffer_map(h, 0, 16, ACCEL_MAP_READ, &p);
                                  })
          .Expect(Kind::kNull, "NULL 'out_ptr'", ACCEL_ERROR_INVALID_ARGUMENT, "out_ptr",
                  [](Fixture& f) { return accel_buffer_map(f.buffer, 0, 16, ACCEL_MAP_READ, nullptr); })
          .Expect(Kind::kOutOfRange, "'offset' + 'size' past the end", ACCEL_ERROR_INVALID_ARGUMENT, "offset",
                  [](Fixture& f) {
                    void* p = nullptr;
                    S s = accel_buffer_map(f.buffer, kBufferSize - 8, 16, ACCEL_MAP_READ, &p);
                    EXPECT_EQ(p, nullptr);
                    return s;
                  })
          .Expect(Kind::kOutOfRange, "'offset' UINT64_MAX (overflowing 'offset' + 'size')",
                  ACCEL_ERROR_INVALID_ARGUMENT, "offset",
                  [](Fixture& f) {
                    void* p = nullptr;
                    return accel_buffer_map(f.buffer, UINT64_MAX, 2, ACCEL_MAP_READ, &p);
                  })
          .Expect(Kind::kOutOfRange, "'flags' with a bit outside ACCEL_MAP_*", ACCEL_ERROR_INVALID_ARGUMENT, "flags",
                  [](Fixture& f) {
                    void* p = nullptr;
                    return accel_buffer_map(f.buffer, 0, 16, ACCEL_MAP_READ | (uint64_t{1} << 7), &p);
                  })
          .Expect(
              Kind::kOutOfRange, "already mapped", ACCEL_ERROR_FAILED_PRECONDITION, "buffer",
              [](Fixture& f) {
                void* p = nullptr;
                EXPECT_EQ(accel_buffer_map(f.buffer, 0, 16, ACCEL_MAP_READ, &p), ACCEL_SUCCESS) << accel_last_error();
                void* q = nullptr;
                S s = accel_buffer_map(f.buffer, 0, 16, ACCEL_MAP_READ, &q);
                EXPECT_EQ(accel_buffer_unmap(f.buffer), ACCEL_SUCCESS);
                return s;
              },
              "already mapped")
          .Build());

  rows.push_back(RowBuilder("accel_buffer_unmap")
                     .Handle<accel_buffer_t>("buffer", [](Fixture&, accel_buffer_t h) { return accel_buffer_unmap(h); })
                     .Expect(
                         Kind::kOutOfRange, "not mapped", ACCEL_ERROR_FAILED_PRECONDITION, "buffer",
                         [](Fixture& f) { return accel_buffer_unmap(f.buffer); }, "not mapped")
                     .Build());

  // ---- Streams ----
  rows.push_back(
      RowBuilder("accel_stream_create")
          .Handle<accel_device_t>("device", [](Fixture&, accel_device_t h) { return CreateStream(h, nullptr); })
          .Expect(Kind::kNull, "NULL 'out_stream'", ACCEL_ERROR_INVALID_ARGUMENT, "out_stream",
                  [](Fixture& f) { return accel_stream_create(f.device, nullptr, nullptr); })
          .Expect(Kind::kOutOfRange, "'desc' with a wrong stype", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
                  [](Fixture& f) {
                    accel_stream_desc_t d = StreamDesc();
                    d.stype = ACCEL_STRUCTURE_TYPE_EVENT_DESC;
                    return CreateStream(f.device, &d);
                  })
          .Expect(Kind::kOutOfRange, "'desc' with struct_size 0", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
                  [](Fixture& f) {
                    accel_stream_desc_t d = StreamDesc();
                    d.struct_size = 0;
                    return CreateStream(f.device, &d);
                  })
          .Expect(Kind::kOutOfRange, "'desc->flags' not 0", ACCEL_ERROR_INVALID_ARGUMENT, "desc->flags",
                  [](Fixture& f) {
                    accel_stream_desc_t d = StreamDesc();
                    d.flags = 4;
                    return CreateStream(f.device, &d);
                  })
          .Build());

  rows.push_back(
      RowBuilder("accel_stream_destroy")
          .Handle<accel_stream_t>("stream", [](Fixture&, accel_stream_t h) { return accel_stream_destroy(h); })
          .NotApplicable(Kind::kOutOfRange, "has no value parameter, only the handle")
          .Build());

  rows.push_back(
      RowBuilder("accel_stream_copy_host_to_buffer")
          .Handle<accel_stream_t>("stream",
                                  [](Fixture& f, accel_stream_t h) {
                                    static const char src[16] = {};
                                    return accel_stream_copy_host_to_buffer(h, src, f.buffer, 0, sizeof(src));
                                  })
          .Handle<accel_buffer_t>("dst",
                                  [](Fixture& f, accel_buffer_t h) {
                                    static const char src[16] = {};
                                    return accel_stream_copy_host_to_buffer(f.stream, src, h, 0, sizeof(src));
                                  })
          .Expect(Kind::kNull, "NULL 'src'", ACCEL_ERROR_INVALID_ARGUMENT, "src",
                  [](Fixture& f) { return accel_stream_copy_host_to_buffer(f.stream, nullptr, f.buffer, 0, 16); })
          .Expect(Kind::kOutOfRange, "'dst_offset' + 'size' past the end", ACCEL_ERROR_INVALID_ARGUMENT, "dst_offset",
                  [](Fixture& f) {
                    static const char src[100] = {};
                    return accel_stream_copy_host_to_buffer(f.stream, src, f.buffer, kBufferSize - 99, sizeof(src));
                  })
          .Expect(Kind::kOutOfRange, "'dst_offset' UINT64_MAX", ACCEL_ERROR_INVALID_ARGUMENT, "dst_offset",
                  [](Fixture& f) {
                    static const char src[2] = {};
                    return accel_stream_copy_host_to_buffer(f.stream, src, f.buffer, UINT64_MAX, sizeof(src));
                  })
          .Build());

  rows.push_back(
      RowBuilder("accel_stream_copy_buffer_to_host")
          .Handle<accel_stream_t>("stream",
                                  [](Fixture& f, accel_stream_t h) {
                                    static char dst[16];
                                    return accel_stream_copy_buffer_to_host(h, f.buffer, 0, dst, sizeof(dst));
                                  })
          .Handle<accel_buffer_t>("src",
                                  [](Fixture& f, accel_buffer_t h) {
                                    static char dst[16];
                                    return accel_stream_copy_buffer_to_host(f.stream, h, 0, dst, sizeof(dst));
                                  })
          .Expect(Kind::kNull, "NULL 'dst'", ACCEL_ERROR_INVALID_ARGUMENT, "dst",
                  [](Fixture& f) { return accel_stream_copy_buffer_to_host(f.stream, f.buffer, 0, nullptr, 16); })
          .Expect(Kind::kOutOfRange, "'src_offset' + 'size' past the end", ACCEL_ERROR_INVALID_ARGUMENT, "src_offset",
                  [](Fixture& f) {
                    static char dst[64];
                    return accel_stream_copy_buffer_to_host(f.stream, f.buffer, kBufferSize - 32, dst, sizeof(dst));
                  })
          .Expect(Kind::kOutOfRange, "'src_offset' past the end, 'size' 0", ACCEL_ERROR_INVALID_ARGUMENT, "src_offset",
                  [](Fixture& f) {
                    static char dst[1];
                    return accel_stream_copy_buffer_to_host(f.stream, f.buffer, kBufferSize + 1, dst, 0);
                  })
          .Build());

  rows.push_back(
      RowBuilder("accel_stream_copy_buffer")
          .Handle<accel_stream_t>(
              "stream",
              [](Fixture& f, accel_stream_t h) { return accel_stream_copy_buffer(h, f.buffer, 0, f.buffer, 64, 16); })
          .Handle<accel_buffer_t>(
              "src",
              [](Fixture& f, accel_buffer_t h) { return accel_stream_copy_buffer(f.stream, h, 0, f.buffer, 64, 16); })
          .Handle<accel_buffer_t>(
              "dst",
              [](Fixture& f, accel_buffer_t h) { return accel_stream_copy_buffer(f.stream, f.buffer, 0, h, 64, 16); })
          .Expect(
              Kind::kOutOfRange, "'src_offset' + 'size' past the end", ACCEL_ERROR_INVALID_ARGUMENT, "src_offset",
              [](Fixture& f) { return accel_stream_copy_buffer(f.stream, f.buffer, kBufferSize - 8, f.buffer, 0, 16); })
          .Expect(
              Kind::kOutOfRange, "'dst_offset' + 'size' past the end", ACCEL_ERROR_INVALID_ARGUMENT, "dst_offset",
              [](Fixture& f) { return accel_stream_copy_buffer(f.stream, f.buffer, 0, f.buffer, kBufferSize - 8, 16); })
          .Expect(
              Kind::kOutOfRange, "overlapping ranges of one buffer", ACCEL_ERROR_INVALID_ARGUMENT, "src",
              [](Fixture& f) { return accel_stream_copy_buffer(f.stream, f.buffer, 0, f.buffer, 8, 16); }, "'dst'")
          .Build());

  rows.push_back(RowBuilder("accel_stream_fill_buffer")
                     .Handle<accel_stream_t>("stream",
                                             [](Fixture& f, accel_stream_t h) {
                                               static const uint32_t pattern = 0xABCD1234u;
                                               return accel_stream_fill_buffer(h, f.buffer, 0, 16, &pattern, 4);
                                             })
                     .Handle<accel_buffer_t>("buffer",
                                             [](Fixture& f, accel_buffer_t h) {
                                               static const uint32_t pattern = 0xABCD1234u;
                                               return accel_stream_fill_buffer(f.stream, h, 0, 16, &pattern, 4);
                                             })
                     .Expect(Kind::kNull, "NULL 'pattern'", ACCEL_ERROR_INVALID_ARGUMENT, "pattern",
                             [](Fixture& f) { return accel_stream_fill_buffer(f.stream, f.buffer, 0, 16, nullptr, 4); })
                     .Expect(Kind::kOutOfRange, "'pattern_size' 3", ACCEL_ERROR_INVALID_ARGUMENT, "pattern_size",
                             [](Fixture& f) {
                               static const uint32_t pattern = 0;
                               return accel_stream_fill_buffer(f.stream, f.buffer, 0, 12, &pattern, 3);
                             })
                     .Expect(Kind::kOutOfRange, "'pattern_size' 0", ACCEL_ERROR_INVALID_ARGUMENT, "pattern_size",
                             [](Fixture& f) {
                               static const uint32_t pattern = 0;
                               return accel_stream_fill_buffer(f.stream, f.buffer, 0, 12, &pattern, 0);
                             })
                     .Expect(Kind::kOutOfRange, "'offset' not a multiple of 'pattern_size'",
                             ACCEL_ERROR_INVALID_ARGUMENT, "offset",
                             [](Fixture& f) {
                               static const uint32_t pattern = 0;
                               return accel_stream_fill_buffer(f.stream, f.buffer, 2, 16, &pattern, 4);
                             })
                     .Expect(Kind::kOutOfRange, "'offset' + 'size' past the end", ACCEL_ERROR_INVALID_ARGUMENT,
                             "offset",
                             [](Fixture& f) {
                               static const uint32_t pattern = 0;
                               return accel_stream_fill_buffer(f.stream, f.buffer, kBufferSize - 4, 8, &pattern, 4);
                             })
                     .Build());

  rows.push_back(RowBuilder("accel_stream_enqueue_host_callback")
                     .Handle<accel_stream_t>("stream",
                                             [](Fixture&, accel_stream_t h) {
                                               return accel_stream_enqueue_host_callback(h, Succeed, nullptr);
                                             })
                     .Expect(Kind::kNull, "NULL 'callback'", ACCEL_ERROR_INVALID_ARGUMENT, "callback",
                             [](Fixture& f) { return accel_stream_enqueue_host_callback(f.stream, nullptr, nullptr); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter with a range ('user_data' is opaque)")
                     .Build());

  rows.push_back(RowBuilder("accel_stream_free_buffer")
                     .Handle<accel_stream_t>(
                         "stream", [](Fixture& f, accel_stream_t h) { return accel_stream_free_buffer(h, f.buffer); })
                     .Handle<accel_buffer_t>(
                         "buffer", [](Fixture& f, accel_buffer_t h) { return accel_stream_free_buffer(f.stream, h); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter, only handles")
                     .Build());

  rows.push_back(RowBuilder("accel_stream_record_event")
                     .Handle<accel_stream_t>(
                         "stream", [](Fixture& f, accel_stream_t h) { return accel_stream_record_event(h, f.event); })
                     .Handle<accel_event_t>(
                         "event", [](Fixture& f, accel_event_t h) { return accel_stream_record_event(f.stream, h); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter, only handles")
                     .Build());

  rows.push_back(RowBuilder("accel_stream_wait_event")
                     .Handle<accel_stream_t>(
                         "stream", [](Fixture& f, accel_stream_t h) { return accel_stream_wait_event(h, f.event); })
                     .Handle<accel_event_t>(
                         "event", [](Fixture& f, accel_event_t h) { return accel_stream_wait_event(f.stream, h); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter, only handles")
                     .Build());

  rows.push_back(RowBuilder("accel_stream_query")
                     .Handle<accel_stream_t>("stream", [](Fixture&, accel_stream_t h) { return accel_stream_query(h); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter, only the handle")
                     .Build());

  rows.push_back(
      RowBuilder("accel_stream_synchronize")
          .Handle<accel_stream_t>(
              "stream", [](Fixture&, accel_stream_t h) { return accel_stream_synchronize(h, ACCEL_TIMEOUT_INFINITE); })
          .NotApplicable(Kind::kOutOfRange, "every 'timeout_ns' is valid (UINT64_MAX: infinite)")
          .Build());

  rows.push_back(
      RowBuilder("accel_stream_clear_error")
          .Handle<accel_stream_t>("stream", [](Fixture&, accel_stream_t h) { return accel_stream_clear_error(h); })
          .Expect(Kind::kOutOfRange, "work pending (a blocked host callback)", ACCEL_ERROR_FAILED_PRECONDITION,
                  "stream",
                  [](Fixture& f) {
                    f.release_callback = false;
                    EXPECT_EQ(accel_stream_enqueue_host_callback(f.stream, BlockUntilReleased, &f.release_callback),
                              ACCEL_SUCCESS)
                        << accel_last_error();
                    S s = accel_stream_clear_error(f.stream);
                    f.release_callback = true;
                    EXPECT_EQ(accel_stream_synchronize(f.stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
                    return s;
                  })
          .Build());

  {
    RowBuilder b("accel_stream_get_copy_statistics");
    b.Handle<accel_stream_t>("stream", [](Fixture&, accel_stream_t h) {
      auto c = OutStruct<accel_copy_statistics_t>(ACCEL_STRUCTURE_TYPE_COPY_STATISTICS);
      return accel_stream_get_copy_statistics(h, &c);
    });
    OutStructCases<accel_copy_statistics_t>(
        b, "out_statistics", ACCEL_STRUCTURE_TYPE_COPY_STATISTICS,
        [](Fixture& f, accel_copy_statistics_t* c) { return accel_stream_get_copy_statistics(f.stream, c); });
    rows.push_back(b.Build());
  }

  // ---- Events ----
  rows.push_back(
      RowBuilder("accel_event_create")
          .Handle<accel_device_t>("device", [](Fixture&, accel_device_t h) { return CreateEvent(h, nullptr); })
          .Expect(Kind::kNull, "NULL 'out_event'", ACCEL_ERROR_INVALID_ARGUMENT, "out_event",
                  [](Fixture& f) { return accel_event_create(f.device, nullptr, nullptr); })
          .Expect(Kind::kOutOfRange, "'desc->flags' with unknown bits", ACCEL_ERROR_INVALID_ARGUMENT, "desc->flags",
                  [](Fixture& f) {
                    accel_event_desc_t d = EventDesc();
                    d.flags = ACCEL_EVENT_FLAG_TIMING | (uint64_t{1} << 9);
                    return CreateEvent(f.device, &d);
                  })
          .Expect(Kind::kOutOfRange, "'desc' with a wrong stype", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
                  [](Fixture& f) {
                    accel_event_desc_t d = EventDesc();
                    d.stype = ACCEL_STRUCTURE_TYPE_STREAM_DESC;
                    return CreateEvent(f.device, &d);
                  })
          .Expect(Kind::kOutOfRange, "'desc' with struct_size 0", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
                  [](Fixture& f) {
                    accel_event_desc_t d = EventDesc();
                    d.struct_size = 0;
                    return CreateEvent(f.device, &d);
                  })
          .Build());

  rows.push_back(RowBuilder("accel_event_destroy")
                     .Handle<accel_event_t>("event", [](Fixture&, accel_event_t h) { return accel_event_destroy(h); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter, only the handle")
                     .Build());

  rows.push_back(RowBuilder("accel_event_query")
                     .Handle<accel_event_t>("event", [](Fixture&, accel_event_t h) { return accel_event_query(h); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter, only the handle")
                     .Build());

  rows.push_back(
      RowBuilder("accel_event_synchronize")
          .Handle<accel_event_t>(
              "event", [](Fixture&, accel_event_t h) { return accel_event_synchronize(h, ACCEL_TIMEOUT_INFINITE); })
          .NotApplicable(Kind::kOutOfRange, "every 'timeout_ns' is valid (UINT64_MAX: infinite)")
          .Build());

  rows.push_back(RowBuilder("accel_event_elapsed_time")
                     .Handle<accel_event_t>("start",
                                            [](Fixture& f, accel_event_t h) {
                                              uint64_t ns = 0;
                                              return accel_event_elapsed_time(h, f.timing_end, &ns);
                                            })
                     .Handle<accel_event_t>("end",
                                            [](Fixture& f, accel_event_t h) {
                                              uint64_t ns = 0;
                                              return accel_event_elapsed_time(f.timing_start, h, &ns);
                                            })
                     .Expect(Kind::kNull, "NULL 'out_nanoseconds'", ACCEL_ERROR_INVALID_ARGUMENT, "out_nanoseconds",
                             [](Fixture& f) { return accel_event_elapsed_time(f.timing_start, f.timing_end, nullptr); })
                     .Expect(
                         Kind::kOutOfRange, "'start' created without ACCEL_EVENT_FLAG_TIMING",
                         ACCEL_ERROR_FAILED_PRECONDITION, "start",
                         [](Fixture& f) {
                           uint64_t ns = 0;
                           return accel_event_elapsed_time(f.event, f.timing_end, &ns);
                         },
                         "ACCEL_EVENT_FLAG_TIMING")
                     .Expect(
                         Kind::kOutOfRange, "'end' created without ACCEL_EVENT_FLAG_TIMING",
                         ACCEL_ERROR_FAILED_PRECONDITION, "end",
                         [](Fixture& f) {
                           uint64_t ns = 0;
                           return accel_event_elapsed_time(f.timing_start, f.event, &ns);
                         },
                         "ACCEL_EVENT_FLAG_TIMING")
                     .Expect(
                         Kind::kOutOfRange, "timing events never recorded", ACCEL_ERROR_FAILED_PRECONDITION, "start",
                         [](Fixture& f) {
                           uint64_t ns = 12345;
                           S s = accel_event_elapsed_time(f.timing_start, f.timing_end, &ns);
                           EXPECT_EQ(ns, 12345u) << "nothing written on failure";
                           return s;
                         },
                         "never recorded")
                     .Build());

  // ---- Names of enum values ----
  rows.push_back(
      RowBuilder("accel_kernel_format_name")
          .NotApplicable(Kind::kNull, "takes a plain bit mask, no pointer")
          .NoHandle()
          .Behaviour(Kind::kOutOfRange, "0, two bits and unknown bits give NULL",
                     [](Fixture&) {
                       for (accel_kernel_formats_t v :
                            {accel_kernel_formats_t{0}, ACCEL_KERNEL_FORMAT_PTX | ACCEL_KERNEL_FORMAT_CUBIN,
                             accel_kernel_formats_t{1} << 40, ~accel_kernel_formats_t{0}}) {
                         EXPECT_EQ(accel_kernel_format_name(v), nullptr) << v;
                       }
                     })
          .Behaviour(Kind::kBehaviour, "each known bit gives its registry name",
                     [](Fixture&) {
                       EXPECT_STREQ(accel_kernel_format_name(ACCEL_KERNEL_FORMAT_NATIVE_HOST), "native-host");
                       EXPECT_STREQ(accel_kernel_format_name(ACCEL_KERNEL_FORMAT_SPIRV_VULKAN), "spirv-vulkan");
                       EXPECT_STREQ(accel_kernel_format_name(ACCEL_KERNEL_FORMAT_HSACO), "hsaco");
                     })
          .Build());
  rows.push_back(RowBuilder("accel_link_class_name")
                     .NotApplicable(Kind::kNull, "takes a plain enum value, no pointer")
                     .NoHandle()
                     .Behaviour(Kind::kOutOfRange, "values this version does not know give NULL",
                                [](Fixture&) {
                                  for (int v : {-1, 10, 12345, static_cast<int>(ACCEL_LINK_CLASS_FORCE32)}) {
                                    EXPECT_EQ(accel_link_class_name(static_cast<accel_link_class_t>(v)), nullptr) << v;
                                  }
                                })
                     .Behaviour(Kind::kBehaviour, "known values give the nvidia-smi style names",
                                [](Fixture&) {
                                  EXPECT_STREQ(accel_link_class_name(ACCEL_LINK_CLASS_PIX), "PIX");
                                  EXPECT_STREQ(accel_link_class_name(ACCEL_LINK_CLASS_SYS), "SYS");
                                  EXPECT_STREQ(accel_link_class_name(ACCEL_LINK_CLASS_HOST_STAGED), "HOST_STAGED");
                                })
                     .Build());
  rows.push_back(RowBuilder("accel_domain_level_name")
                     .NotApplicable(Kind::kNull, "takes a plain enum value, no pointer")
                     .NoHandle()
                     .Behaviour(Kind::kOutOfRange, "values this version does not know give NULL",
                                [](Fixture&) {
                                  for (int v : {-1, 0, 99, static_cast<int>(ACCEL_DOMAIN_LEVEL_FORCE32)}) {
                                    EXPECT_EQ(accel_domain_level_name(static_cast<accel_domain_level_t>(v)), nullptr)
                                        << v;
                                  }
                                })
                     .Behaviour(Kind::kBehaviour, "known values give their names",
                                [](Fixture&) {
                                  EXPECT_STREQ(accel_domain_level_name(ACCEL_DOMAIN_LEVEL_NODE), "node");
                                  EXPECT_STREQ(accel_domain_level_name(ACCEL_DOMAIN_LEVEL_RACK), "rack");
                                })
                     .Build());

  // ---- Modules and kernels ----
  {
    using accel_test::ModuleDesc;
    using accel_test::NativeSource;
    RowBuilder b("accel_module_create");
    auto create = [](accel_device_t device, const accel_module_desc_t* d) {
      accel_module_t m = nullptr;
      return Cleanup(accel_module_create(device, d, &m), m, accel_module_destroy);
    };
    // Builds a one-source module description after `edit` changes the source.
    using EditSource = void (*)(accel_module_source_t&);
    auto with_source = [create](EditSource edit) {
      return [create, edit](Fixture& f) {
        accel_module_source_t s = NativeSource(accel_test::TestModule());
        edit(s);
        const accel_module_desc_t d = ModuleDesc(&s, 1, "edited");
        return create(f.device, &d);
      };
    };
    b.Handle<accel_device_t>("device", [create](Fixture&, accel_device_t h) {
      const accel_module_source_t s = NativeSource(accel_test::TestModule());
      const accel_module_desc_t d = ModuleDesc(&s, 1, "m");
      return create(h, &d);
    });
    b.Expect(
        Kind::kNull, "NULL 'desc'", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
        [create](Fixture& f) { return create(f.device, nullptr); }, "is NULL");
    b.Expect(Kind::kNull, "NULL 'out_module'", ACCEL_ERROR_INVALID_ARGUMENT, "out_module", [](Fixture& f) {
      const accel_module_source_t s = NativeSource(accel_test::TestModule());
      const accel_module_desc_t d = ModuleDesc(&s, 1, "m");
      return accel_module_create(f.device, &d, nullptr);
    });
    b.Expect(Kind::kNull, "'desc->sources' NULL", ACCEL_ERROR_INVALID_ARGUMENT, "desc->sources", [create](Fixture& f) {
      const accel_module_desc_t d = ModuleDesc(nullptr, 1, "m");
      return create(f.device, &d);
    });
    b.Expect(Kind::kOutOfRange, "'desc->source_count' 0", ACCEL_ERROR_INVALID_ARGUMENT, "desc->source_count",
             [create](Fixture& f) {
               const accel_module_source_t s = NativeSource(accel_test::TestModule());
               const accel_module_desc_t d = ModuleDesc(&s, 0, "m");
               return create(f.device, &d);
             });
    // A count of 2^32 - 1 whose second entry is bad: the entry is named (a vector of 2^32 - 1 sources was allocated
    // before any was read: out of host memory, or gigabytes zeroed).
    b.Expect(
        Kind::kOutOfRange, "'desc->source_count' 2^32 - 1, the second source bad", ACCEL_ERROR_INVALID_ARGUMENT,
        "desc->sources[1]", [create](Fixture& f) {
          accel_module_source_t s[2] = {NativeSource(accel_test::TestModule()), NativeSource(accel_test::TestModule())};
          s[1].stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
          const accel_module_desc_t d = ModuleDesc(s, UINT32_MAX, "m");
          return create(f.device, &d);
        });
    b.Expect(Kind::kOutOfRange, "'desc->flags' set", ACCEL_ERROR_INVALID_ARGUMENT, "desc->flags", [create](Fixture& f) {
      const accel_module_source_t s = NativeSource(accel_test::TestModule());
      accel_module_desc_t d = ModuleDesc(&s, 1, "m");
      d.flags = 4;
      return create(f.device, &d);
    });
    b.Expect(Kind::kOutOfRange, "a source with two format bits", ACCEL_ERROR_INVALID_ARGUMENT,
             "desc->sources[0].format",
             with_source([](accel_module_source_t& s) { s.format |= ACCEL_KERNEL_FORMAT_PTX; }), "exactly one");
    b.Expect(Kind::kOutOfRange, "a source with an unknown format bit", ACCEL_ERROR_INVALID_ARGUMENT,
             "desc->sources[0].format",
             with_source([](accel_module_source_t& s) { s.format = accel_kernel_formats_t{1} << 50; }),
             "not a kernel format this version knows");
    b.Expect(Kind::kOutOfRange, "a source with both 'data' and 'path'", ACCEL_ERROR_INVALID_ARGUMENT,
             "desc->sources[0]", with_source([](accel_module_source_t& s) { s.path = "/nonexistent.so"; }),
             "exactly one of 'data' and 'path'");
    b.Expect(Kind::kOutOfRange, "a source with 'data' and size 0", ACCEL_ERROR_INVALID_ARGUMENT,
             "desc->sources[0].size", with_source([](accel_module_source_t& s) { s.size = 0; }));
    b.Expect(Kind::kOutOfRange, "a source with a wrong stype", ACCEL_ERROR_INVALID_ARGUMENT, "desc->sources[0]",
             with_source([](accel_module_source_t& s) { s.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG; }));
    b.Expect(Kind::kOutOfRange, "a 'path' that cannot be read", ACCEL_ERROR_NOT_FOUND, "desc->sources[0].path",
             with_source([](accel_module_source_t& s) {
               s.data = nullptr;
               s.size = 0;
               s.path = "/nonexistent/accel-module.so";
             }),
             "cannot be read");
    b.Expect(
        Kind::kOutOfRange, "no format the device executes", ACCEL_ERROR_UNSUPPORTED, "gpu",
        [create](Fixture& f) {
          const char blob[] = "spir-v words";
          accel_module_source_t s{};
          s.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
          s.struct_size = sizeof(s);
          s.format = ACCEL_KERNEL_FORMAT_SPIRV_VULKAN;
          s.data = blob;
          s.size = sizeof(blob);
          const accel_module_desc_t d = ModuleDesc(&s, 1, "gpu");
          return create(f.device, &d);
        },
        "has spirv-vulkan; the device executes native-host");
    b.Expect(
        Kind::kOutOfRange, "a native module whose kernel has no function", ACCEL_ERROR_INVALID_ARGUMENT,
        "desc->sources[0]",
        [create](Fixture& f) {
          static const accel_native_kernel_desc_t kernels[] = {
              accel_test::NativeKernel("nothing", nullptr, nullptr, 0)};
          static const accel_native_module_t native = {
              ACCEL_STRUCTURE_TYPE_NATIVE_MODULE, sizeof(accel_native_module_t), nullptr, kernels, 1, 0};
          const accel_module_source_t s = NativeSource(native);
          const accel_module_desc_t d = ModuleDesc(&s, 1, "broken");
          return create(f.device, &d);
        },
        "'kernels[0].function' of kernel 'nothing' is NULL");
    rows.push_back(b.Build());
  }
  rows.push_back(
      RowBuilder("accel_module_destroy")
          .Handle<accel_module_t>("module", [](Fixture&, accel_module_t h) { return accel_module_destroy(h); })
          .NotApplicable(Kind::kOutOfRange, "has no value parameter, only the handle")
          .Build());
  {
    RowBuilder b("accel_module_get_properties");
    b.Handle<accel_module_t>("module", [](Fixture&, accel_module_t h) {
      auto p = OutStruct<accel_module_properties_t>(ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES);
      return accel_module_get_properties(h, &p);
    });
    OutStructCases<accel_module_properties_t>(
        b, "out_properties", ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES,
        [](Fixture& f, accel_module_properties_t* p) { return accel_module_get_properties(f.module, p); });
    rows.push_back(b.Build());
  }
  rows.push_back(RowBuilder("accel_module_get_kernel_name")
                     .Handle<accel_module_t>("module",
                                             [](Fixture&, accel_module_t h) {
                                               const char* name = nullptr;
                                               return accel_module_get_kernel_name(h, 0, &name);
                                             })
                     .Expect(Kind::kNull, "NULL 'out_name'", ACCEL_ERROR_INVALID_ARGUMENT, "out_name",
                             [](Fixture& f) { return accel_module_get_kernel_name(f.module, 0, nullptr); })
                     .Expect(
                         Kind::kOutOfRange, "'index' == kernel_count", ACCEL_ERROR_INVALID_ARGUMENT, "index",
                         [](Fixture& f) {
                           const char* name = "untouched";
                           S s = accel_module_get_kernel_name(f.module, 4, &name);
                           EXPECT_EQ(name, nullptr) << "NULL is written on failure";
                           return s;
                         },
                         "the module has 4 kernel(s)")
                     .Build());
  rows.push_back(RowBuilder("accel_module_get_kernel")
                     .Handle<accel_module_t>("module",
                                             [](Fixture&, accel_module_t h) {
                                               accel_kernel_t k = nullptr;
                                               return accel_module_get_kernel(h, "vadd", &k);
                                             })
                     .Expect(Kind::kNull, "NULL 'name'", ACCEL_ERROR_INVALID_ARGUMENT, "name",
                             [](Fixture& f) {
                               accel_kernel_t k = nullptr;
                               return accel_module_get_kernel(f.module, nullptr, &k);
                             })
                     .Expect(Kind::kNull, "NULL 'out_kernel'", ACCEL_ERROR_INVALID_ARGUMENT, "out_kernel",
                             [](Fixture& f) { return accel_module_get_kernel(f.module, "vadd", nullptr); })
                     .Expect(
                         Kind::kOutOfRange, "a name the module does not have", ACCEL_ERROR_NOT_FOUND, "no_such_kernel",
                         [](Fixture& f) {
                           accel_kernel_t k = f.kernel;
                           S s = accel_module_get_kernel(f.module, "no_such_kernel", &k);
                           EXPECT_EQ(k, nullptr) << "NULL is written on failure";
                           return s;
                         },
                         "it has 'vadd', 'reduce', 'fail_at', 'fixed'")
                     .Build());
  {
    RowBuilder b("accel_kernel_get_properties");
    b.Handle<accel_kernel_t>("kernel", [](Fixture&, accel_kernel_t h) {
      auto p = OutStruct<accel_kernel_properties_t>(ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES);
      return accel_kernel_get_properties(h, &p);
    });
    OutStructCases<accel_kernel_properties_t>(
        b, "out_properties", ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES,
        [](Fixture& f, accel_kernel_properties_t* p) { return accel_kernel_get_properties(f.kernel, p); });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_kernel_get_argument_info");
    b.Handle<accel_kernel_t>("kernel", [](Fixture&, accel_kernel_t h) {
      auto a = OutStruct<accel_kernel_argument_info_t>(ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO);
      return accel_kernel_get_argument_info(h, 0, &a);
    });
    OutStructCases<accel_kernel_argument_info_t>(
        b, "out_info", ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO,
        [](Fixture& f, accel_kernel_argument_info_t* a) { return accel_kernel_get_argument_info(f.kernel, 0, a); });
    b.Expect(
        Kind::kOutOfRange, "'index' == argument_count", ACCEL_ERROR_INVALID_ARGUMENT, "index",
        [](Fixture& f) {
          auto a = OutStruct<accel_kernel_argument_info_t>(ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO);
          return accel_kernel_get_argument_info(f.kernel, 4, &a);
        },
        "kernel 'vadd' takes 4 argument(s)");
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_stream_launch_kernel");
    // vadd over the fixture buffer's first 16 floats, after `edit` changes the description.
    using EditLaunch = void (*)(Fixture&, accel_kernel_arg_t*, accel_launch_desc_t&);
    auto launch = [](EditLaunch edit) {
      return [edit](Fixture& f) {
        VaddLaunch l(f.buffer);
        edit(f, l.args, l.desc);
        return accel_stream_launch_kernel(f.stream, f.kernel, &l.desc);
      };
    };
    b.Handle<accel_stream_t>("stream", [](Fixture& f, accel_stream_t h) {
      const VaddLaunch l(f.buffer);
      return accel_stream_launch_kernel(h, f.kernel, &l.desc);
    });
    b.Handle<accel_kernel_t>("kernel", [](Fixture& f, accel_kernel_t h) {
      const VaddLaunch l(f.buffer);
      return accel_stream_launch_kernel(f.stream, h, &l.desc);
    });
    b.Expect(Kind::kNull, "NULL 'desc'", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
             [](Fixture& f) { return accel_stream_launch_kernel(f.stream, f.kernel, nullptr); });
    b.Expect(Kind::kNull, "'desc->args' NULL with arg_count 4", ACCEL_ERROR_INVALID_ARGUMENT, "desc->args",
             launch([](Fixture&, accel_kernel_arg_t*, accel_launch_desc_t& d) { d.args = nullptr; }));
    b.Expect(Kind::kStale, "a stale buffer in 'desc->args[2]'", ACCEL_ERROR_INVALID_HANDLE, "desc->args[2].buffer",
             launch([](Fixture& f, accel_kernel_arg_t* a, accel_launch_desc_t&) { a[2].buffer = f.stale_buffer; }),
             "is a stale buffer handle");
    b.Expect(Kind::kOutOfRange, "'desc->arg_count' 3 for a 4-argument kernel", ACCEL_ERROR_INVALID_ARGUMENT,
             "desc->arg_count", launch([](Fixture&, accel_kernel_arg_t*, accel_launch_desc_t& d) { d.arg_count = 3; }),
             "kernel 'vadd' takes 4 argument(s)");
    b.Expect(Kind::kOutOfRange, "a scalar where a buffer is declared", ACCEL_ERROR_INVALID_ARGUMENT, "desc->args[1]",
             launch([](Fixture&, accel_kernel_arg_t* a, accel_launch_desc_t&) { a[1] = a[3]; }),
             "is a SCALAR argument");
    b.Expect(Kind::kOutOfRange, "'desc->grid[1]' 0", ACCEL_ERROR_INVALID_ARGUMENT, "desc->grid[1]",
             launch([](Fixture&, accel_kernel_arg_t*, accel_launch_desc_t& d) { d.grid[1] = 0; }));
    b.Expect(Kind::kOutOfRange, "'desc->flags' set", ACCEL_ERROR_INVALID_ARGUMENT, "desc->flags",
             launch([](Fixture&, accel_kernel_arg_t*, accel_launch_desc_t& d) { d.flags = 1; }));
    b.Expect(Kind::kOutOfRange, "a binding past the buffer's end", ACCEL_ERROR_INVALID_ARGUMENT, "desc->args[0]",
             launch([](Fixture&, accel_kernel_arg_t* a, accel_launch_desc_t&) { a[0].offset = kBufferSize - 32; }),
             "of a 4096-byte buffer");
    b.Expect(Kind::kOutOfRange, "a scalar of the wrong size", ACCEL_ERROR_INVALID_ARGUMENT, "desc->args[3].size",
             launch([](Fixture&, accel_kernel_arg_t* a, accel_launch_desc_t&) { a[3].size = 8; }));
    b.Expect(Kind::kOutOfRange, "an unknown argument kind", ACCEL_ERROR_INVALID_ENUM, "desc->args[0].kind",
             launch([](Fixture&, accel_kernel_arg_t* a, accel_launch_desc_t&) {
               a[0].kind = static_cast<accel_kernel_arg_kind_t>(77);
             }));
    rows.push_back(b.Build());
  }

  {
    RowBuilder b("accel_kernel_prepare_launch");
    // The fixture's vadd launch after `edit` changes the description; what it makes is destroyed.
    using EditLaunch = void (*)(Fixture&, accel_kernel_arg_t*, accel_launch_desc_t&);
    auto prepare = [](EditLaunch edit) {
      return [edit](Fixture& f) {
        VaddLaunch l(f.buffer);
        edit(f, l.args, l.desc);
        accel_prepared_launch_t out = nullptr;
        return Cleanup(accel_kernel_prepare_launch(f.kernel, &l.desc, &out), out, accel_prepared_launch_destroy);
      };
    };
    b.Handle<accel_kernel_t>("kernel", [](Fixture& f, accel_kernel_t h) {
      const VaddLaunch l(f.buffer);
      accel_prepared_launch_t out = nullptr;
      return Cleanup(accel_kernel_prepare_launch(h, &l.desc, &out), out, accel_prepared_launch_destroy);
    });
    b.Expect(Kind::kNull, "NULL 'desc'", ACCEL_ERROR_INVALID_ARGUMENT, "desc", [](Fixture& f) {
      accel_prepared_launch_t out = nullptr;
      return Cleanup(accel_kernel_prepare_launch(f.kernel, nullptr, &out), out, accel_prepared_launch_destroy);
    });
    b.Expect(Kind::kNull, "NULL 'out_prepared'", ACCEL_ERROR_INVALID_ARGUMENT, "out_prepared", [](Fixture& f) {
      const VaddLaunch l(f.buffer);
      return accel_kernel_prepare_launch(f.kernel, &l.desc, nullptr);
    });
    b.Expect(Kind::kStale, "a stale buffer in 'desc->args[2]'", ACCEL_ERROR_INVALID_HANDLE, "desc->args[2].buffer",
             prepare([](Fixture& f, accel_kernel_arg_t* a, accel_launch_desc_t&) { a[2].buffer = f.stale_buffer; }),
             "is a stale buffer handle");
    b.Expect(Kind::kOutOfRange, "'desc->arg_count' 3 for a 4-argument kernel", ACCEL_ERROR_INVALID_ARGUMENT,
             "desc->arg_count", prepare([](Fixture&, accel_kernel_arg_t*, accel_launch_desc_t& d) { d.arg_count = 3; }),
             "kernel 'vadd' takes 4 argument(s)");
    b.Expect(Kind::kOutOfRange, "a binding past the buffer's end", ACCEL_ERROR_INVALID_ARGUMENT, "desc->args[0]",
             prepare([](Fixture&, accel_kernel_arg_t* a, accel_launch_desc_t&) { a[0].offset = kBufferSize - 32; }),
             "of a 4096-byte buffer");
    rows.push_back(b.Build());
  }
  rows.push_back(
      RowBuilder("accel_prepared_launch_destroy")
          .Handle<accel_prepared_launch_t>(
              "prepared", [](Fixture&, accel_prepared_launch_t p) { return accel_prepared_launch_destroy(p); })
          .NotApplicable(Kind::kOutOfRange, "has no value parameter, only the handle")
          .Build());
  rows.push_back(
      RowBuilder("accel_stream_launch_prepared")
          .Handle<accel_stream_t>(
              "stream", [](Fixture& f, accel_stream_t s) { return accel_stream_launch_prepared(s, f.prepared); })
          .Handle<accel_prepared_launch_t>(
              "prepared",
              [](Fixture& f, accel_prepared_launch_t p) { return accel_stream_launch_prepared(f.stream, p); })
          .NotApplicable(Kind::kOutOfRange,
                         "has no value parameter; a stream of another device is in tests/api/kernel_test.cc")
          .Build());

  // ---- Memory interop ----
  {
    RowBuilder b("accel_buffer_import");
    auto import = [](accel_device_t device, const accel_buffer_import_desc_t* d) {
      accel_buffer_t out = nullptr;
      return Cleanup(accel_buffer_import(device, d, &out), out, accel_buffer_destroy);
    };
    static uint8_t memory[256];
    using EditImport = void (*)(accel_buffer_import_desc_t&);
    auto with = [import](EditImport edit) {
      return [import, edit](Fixture& f) {
        accel_buffer_import_desc_t d{};
        d.stype = ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC;
        d.struct_size = sizeof(d);
        d.type = ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER;
        d.handle = reinterpret_cast<uint64_t>(memory);
        d.size = sizeof(memory);
        edit(d);
        return import(f.device, &d);
      };
    };
    b.Handle<accel_device_t>("device", [import](Fixture&, accel_device_t h) {
      accel_buffer_import_desc_t d{};
      d.stype = ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC;
      d.struct_size = sizeof(d);
      d.type = ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER;
      d.handle = reinterpret_cast<uint64_t>(memory);
      d.size = sizeof(memory);
      return import(h, &d);
    });
    b.Expect(Kind::kNull, "NULL 'desc'", ACCEL_ERROR_INVALID_ARGUMENT, "desc",
             [import](Fixture& f) { return import(f.device, nullptr); });
    b.Expect(Kind::kNull, "NULL 'out_buffer'", ACCEL_ERROR_INVALID_ARGUMENT, "out_buffer", [](Fixture& f) {
      accel_buffer_import_desc_t d{};
      d.stype = ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC;
      d.struct_size = sizeof(d);
      d.type = ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER;
      d.handle = reinterpret_cast<uint64_t>(memory);
      d.size = sizeof(memory);
      return accel_buffer_import(f.device, &d, nullptr);
    });
    b.Expect(Kind::kNull, "a NULL host pointer", ACCEL_ERROR_INVALID_ARGUMENT, "desc->handle",
             with([](accel_buffer_import_desc_t& d) { d.handle = 0; }));
    b.Expect(Kind::kOutOfRange, "'desc->type' 0", ACCEL_ERROR_INVALID_ENUM, "desc->type",
             with([](accel_buffer_import_desc_t& d) { d.type = static_cast<accel_external_memory_type_t>(0); }));
    b.Expect(Kind::kOutOfRange, "'desc->size' 0", ACCEL_ERROR_INVALID_ARGUMENT, "desc->size",
             with([](accel_buffer_import_desc_t& d) { d.size = 0; }));
    b.Expect(Kind::kOutOfRange, "unknown 'desc->flags'", ACCEL_ERROR_INVALID_ARGUMENT, "desc->flags",
             with([](accel_buffer_import_desc_t& d) { d.flags = 0x10; }));
    b.Expect(Kind::kOutOfRange, "'desc->offset' + size wrapping around", ACCEL_ERROR_INVALID_ARGUMENT, "desc->offset",
             with([](accel_buffer_import_desc_t& d) { d.offset = UINT64_MAX - 8; }));
    b.Expect(Kind::kOutOfRange, "a memory type the host device cannot import", ACCEL_ERROR_UNSUPPORTED, "desc->type",
             with([](accel_buffer_import_desc_t& d) { d.type = ACCEL_EXTERNAL_MEMORY_TYPE_CUDA_DEVICE_POINTER; }),
             "imports");
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_buffer_export");
    b.Handle<accel_buffer_t>("buffer", [](Fixture&, accel_buffer_t h) {
      auto m = OutStruct<accel_external_memory_t>(ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY);
      return accel_buffer_export(h, ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER, &m);
    });
    OutStructCases<accel_external_memory_t>(
        b, "out_memory", ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY, [](Fixture& f, accel_external_memory_t* m) {
          return accel_buffer_export(f.buffer, ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER, m);
        });
    b.Expect(Kind::kOutOfRange, "'type' 99", ACCEL_ERROR_INVALID_ENUM, "type", [](Fixture& f) {
      auto m = OutStruct<accel_external_memory_t>(ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY);
      return accel_buffer_export(f.buffer, static_cast<accel_external_memory_type_t>(99), &m);
    });
    b.Expect(Kind::kOutOfRange, "a type the host device cannot export", ACCEL_ERROR_UNSUPPORTED, "type",
             [](Fixture& f) {
               auto m = OutStruct<accel_external_memory_t>(ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY);
               return accel_buffer_export(f.buffer, ACCEL_EXTERNAL_MEMORY_TYPE_DMA_BUF_FD, &m);
             });
    rows.push_back(b.Build());
  }
  rows.push_back(RowBuilder("accel_buffer_get_host_address")
                     .Handle<accel_buffer_t>("buffer",
                                             [](Fixture&, accel_buffer_t h) {
                                               void* p = nullptr;
                                               return accel_buffer_get_host_address(h, &p);
                                             })
                     .Expect(Kind::kNull, "NULL 'out_address'", ACCEL_ERROR_INVALID_ARGUMENT, "out_address",
                             [](Fixture& f) { return accel_buffer_get_host_address(f.buffer, nullptr); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter, only the handle and the output")
                     .Build());
  rows.push_back(RowBuilder("accel_buffer_get_device_address")
                     .Handle<accel_buffer_t>("buffer",
                                             [](Fixture&, accel_buffer_t h) {
                                               uint64_t a = 0;
                                               return accel_buffer_get_device_address(h, &a);
                                             })
                     .Expect(Kind::kNull, "NULL 'out_address'", ACCEL_ERROR_INVALID_ARGUMENT, "out_address",
                             [](Fixture& f) { return accel_buffer_get_device_address(f.buffer, nullptr); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter, only the handle and the output")
                     .Build());

  // ---- Topology ----
  {
    RowBuilder b("accel_device_get_topology");
    b.Handle<accel_device_t>("device", [](Fixture&, accel_device_t h) {
      auto t = OutStruct<accel_device_topology_t>(ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY);
      return accel_device_get_topology(h, &t);
    });
    OutStructCases<accel_device_topology_t>(
        b, "out_topology", ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY,
        [](Fixture& f, accel_device_topology_t* t) { return accel_device_get_topology(f.device, t); });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_device_get_link");
    b.Handle<accel_device_t>("device", [](Fixture& f, accel_device_t h) {
      auto l = OutStruct<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
      return accel_device_get_link(h, f.device, &l);
    });
    b.Handle<accel_device_t>("peer", [](Fixture& f, accel_device_t h) {
      auto l = OutStruct<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
      return accel_device_get_link(f.device, h, &l);
    });
    OutStructCases<accel_device_link_t>(
        b, "out_link", ACCEL_STRUCTURE_TYPE_DEVICE_LINK,
        [](Fixture& f, accel_device_link_t* l) { return accel_device_get_link(f.device, f.device, l); });
    b.Expect(
        Kind::kOutOfRange, "'peer' from another instance", ACCEL_ERROR_INVALID_ARGUMENT, "peer",
        [](Fixture& f) {
          accel_instance_desc_t desc = HostOnly();
          accel_instance_t other = nullptr;
          EXPECT_EQ(accel_instance_create(&desc, &other), ACCEL_SUCCESS);
          auto l = OutStruct<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
          S s = accel_device_get_link(f.device, FirstDevice(other), &l);
          const std::string message = accel_last_error();
          EXPECT_EQ(accel_instance_destroy(other), ACCEL_SUCCESS);
          // Put back the failure the destroy's success left alone (it is unchanged either way).
          EXPECT_EQ(std::string(accel_last_error()), message);
          return s;
        },
        "different instances");
    rows.push_back(b.Build());
  }
  rows.push_back(RowBuilder("accel_instance_get_nic_count")
                     .Handle<accel_instance_t>("instance",
                                               [](Fixture&, accel_instance_t h) {
                                                 uint32_t n = 0;
                                                 return accel_instance_get_nic_count(h, &n);
                                               })
                     .Expect(Kind::kNull, "NULL 'out_count'", ACCEL_ERROR_INVALID_ARGUMENT, "out_count",
                             [](Fixture& f) { return accel_instance_get_nic_count(f.instance, nullptr); })
                     .NotApplicable(Kind::kOutOfRange, "has no value parameter with a range")
                     .Build());
  {
    RowBuilder b("accel_instance_get_nic");
    b.Handle<accel_instance_t>("instance", [](Fixture&, accel_instance_t h) {
      auto p = OutStruct<accel_nic_properties_t>(ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES);
      return accel_instance_get_nic(h, 0, &p);
    });
    OutStructCases<accel_nic_properties_t>(
        b, "out_properties", ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES,
        [](Fixture& f, accel_nic_properties_t* p) { return accel_instance_get_nic(f.instance, 0, p); });
    b.Expect(Kind::kOutOfRange, "'index' == the NIC count", ACCEL_ERROR_INVALID_ARGUMENT, "index", [](Fixture& f) {
      uint32_t n = 0;
      EXPECT_EQ(accel_instance_get_nic_count(f.instance, &n), ACCEL_SUCCESS);
      auto p = OutStruct<accel_nic_properties_t>(ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES);
      return accel_instance_get_nic(f.instance, n, &p);
    });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_device_get_nic_link");
    b.Handle<accel_device_t>("device", [](Fixture&, accel_device_t h) {
      auto l = OutStruct<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
      return accel_device_get_nic_link(h, 0, &l);
    });
    OutStructCases<accel_device_link_t>(
        b, "out_link", ACCEL_STRUCTURE_TYPE_DEVICE_LINK,
        [](Fixture& f, accel_device_link_t* l) { return accel_device_get_nic_link(f.device, 0, l); });
    b.Expect(Kind::kOutOfRange, "'nic_index' == the NIC count", ACCEL_ERROR_INVALID_ARGUMENT, "nic_index",
             [](Fixture& f) {
               uint32_t n = 0;
               EXPECT_EQ(accel_instance_get_nic_count(f.instance, &n), ACCEL_SUCCESS);
               auto l = OutStruct<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
               return accel_device_get_nic_link(f.device, n, &l);
             });
    rows.push_back(b.Build());
  }
  {
    RowBuilder b("accel_device_get_domain");
    b.Handle<accel_device_t>("device", [](Fixture&, accel_device_t h) {
      auto d = OutStruct<accel_domain_t>(ACCEL_STRUCTURE_TYPE_DOMAIN);
      return accel_device_get_domain(h, 0, &d);
    });
    OutStructCases<accel_domain_t>(b, "out_domain", ACCEL_STRUCTURE_TYPE_DOMAIN, [](Fixture& f, accel_domain_t* d) {
      return accel_device_get_domain(f.device, 0, d);
    });
    b.Expect(Kind::kOutOfRange, "'index' == domain_count", ACCEL_ERROR_INVALID_ARGUMENT, "index", [](Fixture& f) {
      auto t = OutStruct<accel_device_topology_t>(ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY);
      EXPECT_EQ(accel_device_get_topology(f.device, &t), ACCEL_SUCCESS);
      auto d = OutStruct<accel_domain_t>(ACCEL_STRUCTURE_TYPE_DOMAIN);
      return accel_device_get_domain(f.device, t.domain_count, &d);
    });
    rows.push_back(b.Build());
  }

  return rows;
}

const std::vector<Row>& Table() {
  static const std::vector<Row> rows = MakeTable();
  return rows;
}

// --- The exported functions ------------------------------------------------------------------------------------------

std::set<std::string> ExportedFunctions(std::string* error) {
  std::string output;
  int rc = accel_test::RunCommand(std::string("nm -D --defined-only '") + ACCEL_TEST_LIBACCEL + "'", &output);
  std::set<std::string> names;
  if (rc != 0) {
    *error = "nm failed with " + std::to_string(rc) + ": " + output;
    return names;
  }
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    // "<address> <type> <name>[@@VERSION]"
    std::istringstream fields(line);
    std::string address, type, name;
    if (!(fields >> address >> type >> name)) continue;
    if (name.rfind("accel_", 0) != 0) continue;
    name = name.substr(0, name.find('@'));
    if (type != "T" && type != "t" && type != "W" && type != "i") {
      *error += "exported accel_ symbol that is not a function: " + line + "\n";
      continue;
    }
    names.insert(name);
  }
  return names;
}

TEST(BadInput, EveryExportedFunctionHasARow) {
  std::string error;
  std::set<std::string> exported = ExportedFunctions(&error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_FALSE(exported.empty()) << "nm found no accel_ functions in " << ACCEL_TEST_LIBACCEL;

  std::set<std::string> rows;
  for (const Row& row : Table()) {
    EXPECT_TRUE(rows.insert(row.function).second) << "two rows for " << row.function;
  }
  std::string missing, extra;
  for (const std::string& f : exported) {
    if (rows.count(f) == 0) missing += "  " + f + "\n";
  }
  for (const std::string& f : rows) {
    if (exported.count(f) == 0) extra += "  " + f + "\n";
  }
  EXPECT_TRUE(missing.empty()) << "exported by " << ACCEL_TEST_LIBACCEL << " but without a bad-input row:\n" << missing;
  EXPECT_TRUE(extra.empty()) << "rows naming functions libaccel does not export:\n" << extra;
  std::cout << "[ BadInput ] " << exported.size() << " exported functions, " << Table().size() << " rows\n";
}

// --- One test per row ------------------------------------------------------------------------------------------------

class BadInputTable : public ::testing::TestWithParam<Row> {
 protected:
  void SetUp() override { Build(fixture_); }
  void TearDown() override { TearDownFixture(fixture_); }
  Fixture fixture_;
};

// A failure of a known function, so that a case that sets nothing is caught.
void SetSentinelError(const std::string& function) {
  if (function != "accel_version_get") {
    ASSERT_EQ(accel_version_get(nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  } else {
    ASSERT_EQ(accel_device_info_key_describe(static_cast<accel_device_info_key_t>(0), nullptr, nullptr),
              ACCEL_ERROR_INVALID_ENUM);
  }
}

TEST_P(BadInputTable, Call) {
  const Row& row = GetParam();
  ASSERT_FALSE(HasFatalFailure()) << "fixture";

  // The row covers every kind, with a case or a reason, and has something to run.
  int applicable = 0;
  for (Kind kind : kRequiredKinds) {
    bool has_case = false, has_reason = false;
    for (const Case& c : row.cases) {
      if (c.kind != kind) continue;
      (c.applicable() ? has_case : has_reason) = true;
    }
    EXPECT_TRUE(has_case || has_reason) << row.function << ": no " << KindName(kind)
                                        << " case and no reason why it does not apply";
    EXPECT_FALSE(has_case && has_reason) << row.function << ": " << KindName(kind) << " both run and not applicable";
  }
  for (const Case& c : row.cases) applicable += c.applicable() ? 1 : 0;
  EXPECT_GT(applicable, 0) << row.function << " has no applicable case";

  for (const Case& c : row.cases) {
    if (!c.applicable()) {
      std::cout << "[   N/A    ] " << row.function << " / " << KindName(c.kind) << ": " << c.not_applicable << "\n";
      continue;
    }
    std::cout << "[   CASE   ] " << row.function << " / " << KindName(c.kind) << ": " << c.label << "\n";
    SCOPED_TRACE(row.function + " / " + KindName(c.kind) + ": " + c.label);
    if (c.check) {
      c.check(fixture_);
      continue;
    }
    SetSentinelError(row.function);
    const std::string sentinel = accel_last_error();
    accel_status_t got = c.call(fixture_);
    const std::string message = accel_last_error();
    const accel_status_t last = accel_last_error_status();
    EXPECT_EQ(got, c.expected) << "returned " << accel_status_name(got) << ", documented "
                               << accel_status_name(c.expected) << "; message: " << message;
    EXPECT_NE(message, sentinel) << "the call did not set the last error";
    EXPECT_TRUE(Contains(message, row.function + ":")) << "the message does not name the function";
    EXPECT_TRUE(Contains(message, c.argument)) << "the message does not name the argument";
    if (!c.detail.empty()) {
      EXPECT_TRUE(Contains(message, c.detail));
    }
    EXPECT_EQ(last, c.expected) << "accel_last_error_status() is " << accel_status_name(last);
  }

  ExpectFixtureStillWorks(fixture_);
}

INSTANTIATE_TEST_SUITE_P(Rows, BadInputTable, ::testing::ValuesIn(Table()),
                         [](const ::testing::TestParamInfo<Row>& row_info) { return row_info.param.function; });

}  // namespace
