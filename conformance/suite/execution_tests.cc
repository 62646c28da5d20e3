// Profile `execution`: the kernel corpus (conformance/corpus/README.md) on
// several grid and block shapes, results checked element by element; the
// runner picks, per device, the corpus formats the device executes.
#include <cstring>
#include <map>

#include "corpus_file.h"
#include "harness.h"
#include "names.h"

namespace accel::conformance {
namespace {

struct Shape {
  uint32_t grid[3];
  uint32_t block[3];
  uint64_t groups() const { return uint64_t{grid[0]} * grid[1] * grid[2]; }
  uint64_t group_size() const { return uint64_t{block[0]} * block[1] * block[2]; }
  uint64_t items() const { return groups() * group_size(); }
};

const Shape kShapes[] = {
    {{1, 1, 1}, {1, 1, 1}}, {{7, 1, 1}, {64, 1, 1}}, {{33, 1, 1}, {3, 1, 1}},
    {{3, 2, 1}, {5, 3, 1}}, {{2, 2, 2}, {4, 2, 2}},  {{1, 1, 1}, {256, 1, 1}},
};

// A kernel of the corpus loaded on one device.
class CorpusKernel {
 public:
  CorpusKernel(const DeviceUnderTest& dut, const char* name) {
    const auto corpus = ReadKernelCorpus(TheTarget().corpus_dir, &error_);
    if (!corpus) return;
    const auto files = corpus->kernels.find(name);
    if (files == corpus->kernels.end()) {
      error_ = (TheTarget().corpus_dir / "corpus.json").string() + " has no kernel '" + std::string(name) + "'";
      return;
    }
    std::string has;
    for (const auto& f : accel::info::KernelFormatNames()) {
      if (!files->second.contains(f.name)) continue;
      has += std::string(has.empty() ? "" : ", ") + f.name;
      if ((dut.caps.kernel_formats & f.bit) == 0) continue;
      paths_.push_back(corpus->File(name, f.name)->string());
      accel_module_source_t s{};
      s.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
      s.struct_size = sizeof(s);
      s.format = f.bit;
      sources_.push_back(s);
    }
    if (sources_.empty()) {
      error_ =
          "the corpus has " + name_list(has) + " for '" + name + "'; " + dut.label + " executes " +
          accel::info::Join(accel::info::FlagNames(accel::info::KernelFormatNames(), dut.caps.kernel_formats), ", ") +
          ": supply a corpus in its format with --corpus (conformance/corpus/README.md)";
      return;
    }
    for (size_t i = 0; i < sources_.size(); ++i) sources_[i].path = paths_[i].c_str();
    accel_module_desc_t desc{};
    desc.stype = ACCEL_STRUCTURE_TYPE_MODULE_DESC;
    desc.struct_size = sizeof(desc);
    desc.sources = sources_.data();
    desc.source_count = static_cast<uint32_t>(sources_.size());
    desc.name = name;
    accel_status_t s = accel_module_create(dut.device, &desc, &module_);
    if (s != ACCEL_SUCCESS) {
      error_ = std::string("accel_module_create('") + name + "'): " + Why(s);
      module_ = nullptr;
      return;
    }
    s = accel_module_get_kernel(module_, name, &kernel_);
    if (s != ACCEL_SUCCESS) error_ = std::string("accel_module_get_kernel('") + name + "'): " + Why(s);
    properties_.stype = ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES;
    properties_.struct_size = sizeof(properties_);
    if (s == ACCEL_SUCCESS) accel_kernel_get_properties(kernel_, &properties_);
  }
  ~CorpusKernel() {
    if (module_ != nullptr) accel_module_destroy(module_);
  }
  CorpusKernel(const CorpusKernel&) = delete;
  CorpusKernel& operator=(const CorpusKernel&) = delete;
  const std::string& error() const { return error_; }
  accel_kernel_t get() const { return kernel_; }
  const accel_kernel_properties_t& properties() const { return properties_; }

  // Whether `shape` fits the device's and the kernel's limits.
  bool Fits(const DeviceUnderTest& dut, const Shape& shape) const {
    for (int d = 0; d < 3; ++d) {
      if (shape.block[d] > dut.caps.max_work_group_dims[d] || shape.grid[d] > dut.caps.max_grid_dims[d]) return false;
      if (properties_.required_work_group_size[d] != 0 && properties_.required_work_group_size[d] != shape.block[d]) {
        return false;
      }
    }
    const uint64_t max =
        properties_.max_work_group_size != 0 ? properties_.max_work_group_size : dut.caps.max_work_group_size;
    return shape.group_size() <= max;
  }

  // The shapes of kShapes that fit (Fits), expecting at least three: a kernel test that ran on fewer would prove
  // little.
  std::vector<Shape> ShapesFor(const DeviceUnderTest& dut) const {
    std::vector<Shape> shapes;
    for (const Shape& shape : kShapes) {
      if (Fits(dut, shape)) shapes.push_back(shape);
    }
    EXPECT_GE(shapes.size(), 3u) << "fewer than three shapes fit the device's limits";
    return shapes;
  }

 private:
  static std::string name_list(const std::string& s) { return s.empty() ? "no format" : s; }
  std::string error_;
  std::vector<std::string> paths_;
  std::vector<accel_module_source_t> sources_;
  accel_module_t module_ = nullptr;
  accel_kernel_t kernel_ = nullptr;
  accel_kernel_properties_t properties_{};
};

accel_kernel_arg_t BufferArg(accel_buffer_t b, uint64_t offset = 0, uint64_t size = 0) {
  accel_kernel_arg_t a{};
  a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
  a.struct_size = sizeof(a);
  a.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
  a.buffer = b;
  a.offset = offset;
  a.size = size;
  return a;
}

accel_kernel_arg_t ScalarArg(const uint32_t* value) {
  accel_kernel_arg_t a{};
  a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
  a.struct_size = sizeof(a);
  a.kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  a.value = value;
  a.size = sizeof(uint32_t);
  return a;
}

accel_kernel_arg_t LocalArg(uint64_t bytes) {
  accel_kernel_arg_t a{};
  a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
  a.struct_size = sizeof(a);
  a.kind = ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY;
  a.size = bytes;
  return a;
}

// The launch of `shape` with `args` (which it points into).
accel_launch_desc_t Desc(const Shape& shape, const std::vector<accel_kernel_arg_t>& args) {
  accel_launch_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_LAUNCH_DESC;
  desc.struct_size = sizeof(desc);
  std::memcpy(desc.grid, shape.grid, sizeof(desc.grid));
  std::memcpy(desc.block, shape.block, sizeof(desc.block));
  desc.args = args.data();
  desc.arg_count = static_cast<uint32_t>(args.size());
  return desc;
}

accel_status_t Launch(const Stream& stream, const CorpusKernel& k, const Shape& shape,
                      const std::vector<accel_kernel_arg_t>& args) {
  const accel_launch_desc_t desc = Desc(shape, args);
  return accel_stream_launch_kernel(stream.get(), k.get(), &desc);
}

// accel_kernel_prepare_launch of what Launch would enqueue; the prepared launch or NULL, and the status.
accel_status_t Prepare(const CorpusKernel& k, const Shape& shape, const std::vector<accel_kernel_arg_t>& args,
                       accel_prepared_launch_t* out) {
  const accel_launch_desc_t desc = Desc(shape, args);
  return accel_kernel_prepare_launch(k.get(), &desc, out);
}

std::string ShapeText(const Shape& s) {
  return "grid " + std::to_string(s.grid[0]) + "x" + std::to_string(s.grid[1]) + "x" + std::to_string(s.grid[2]) +
         ", block " + std::to_string(s.block[0]) + "x" + std::to_string(s.block[1]) + "x" + std::to_string(s.block[2]);
}

template <typename T>
std::vector<T> As(const std::vector<uint8_t>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

template <typename T>
void Put(const Stream& stream, accel_buffer_t b, const std::vector<T>& values) {
  Upload(stream, b, 0, values.data(), values.size() * sizeof(T));
}

#define ACCEL_REQUIRE_KERNELS(dut)                                                                         \
  do {                                                                                                     \
    if ((dut).caps.kernel_formats == 0) {                                                                  \
      GTEST_SKIP() << ::accel::conformance::kAbsentPrefix << (dut).label                                   \
                   << " reports no kernel formats (ACCEL_DEVICE_INFO_KERNEL_FORMATS): it runs no kernels"; \
    }                                                                                                      \
  } while (0)

#define ACCEL_LOAD_KERNEL(var, dut, name) \
  ACCEL_REQUIRE_KERNELS(dut);             \
  CorpusKernel var(dut, name);            \
  ASSERT_TRUE(var.error().empty()) << var.error()

constexpr uint32_t kSentinel = 0xDEADBEEF;

}  // namespace

ACCEL_CONFORMANCE_DEVICE_CASE(kExecution, corpus, kernels_declare_the_contract) {
  ACCEL_REQUIRE_KERNELS(dut);
  struct Expect {
    const char* name;
    std::vector<accel_kernel_arg_kind_t> kinds;
  };
  const accel_kernel_arg_kind_t B = ACCEL_KERNEL_ARG_KIND_BUFFER;
  const accel_kernel_arg_kind_t S = ACCEL_KERNEL_ARG_KIND_SCALAR;
  const accel_kernel_arg_kind_t L = ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY;
  const Expect kernels[] = {{"fill_u32", {B, S, S}},
                            {"copy_offset_u32", {B, B, S, S, S}},
                            {"vadd_f32", {B, B, B, S}},
                            {"reduce_u32", {B, B, S, L}},
                            {"atomic_add_u32", {B, B, S, S}}};
  for (const auto& e : kernels) {
    CorpusKernel k(dut, e.name);
    ASSERT_TRUE(k.error().empty()) << k.error();
    // NOT_FOUND for a name the module lacks (the slot's contract), and the
    // same handle again for a name it has.
    accel_kernel_t none = nullptr;
    accel_module_t module = k.properties().module;
    EXPECT_EQ(accel_module_get_kernel(module, "no_such_kernel", &none), ACCEL_ERROR_NOT_FOUND);
    EXPECT_EQ(none, nullptr);
    accel_kernel_t again = nullptr;
    ACCEL_EXPECT_OK(accel_module_get_kernel(module, e.name, &again));
    EXPECT_EQ(again, k.get()) << e.name << ": a second lookup gave another handle";
    ASSERT_EQ(k.properties().argument_count, e.kinds.size()) << e.name;
    for (uint32_t i = 0; i < e.kinds.size(); ++i) {
      accel_kernel_argument_info_t info{};
      info.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO;
      info.struct_size = sizeof(info);
      ACCEL_ASSERT_OK(accel_kernel_get_argument_info(k.get(), i, &info));
      EXPECT_EQ(info.kind, e.kinds[i]) << e.name << " argument " << i;
    }
  }
}

ACCEL_CONFORMANCE_DEVICE_CASE(kExecution, kernels, fill) {
  ACCEL_LOAD_KERNEL(k, dut, "fill_u32");
  Stream stream(dut);
  for (const Shape& shape : k.ShapesFor(dut)) {
    const uint32_t n = static_cast<uint32_t>(shape.items() > 3 ? shape.items() - 3 : shape.items());
    const uint64_t count = shape.items() + 4;
    Buffer out(dut, count * 4);
    Put(stream, out.get(), std::vector<uint32_t>(count, kSentinel));
    const uint32_t value = 0x1234567u + n;
    ACCEL_ASSERT_OK(Launch(stream, k, shape, {BufferArg(out.get()), ScalarArg(&value), ScalarArg(&n)}));
    ACCEL_ASSERT_OK(stream.Sync());
    const auto got = As<uint32_t>(Download(stream, out.get(), 0, count * 4));
    for (uint64_t i = 0; i < count; ++i) {
      ASSERT_EQ(got[i], i < n ? value : kSentinel) << ShapeText(shape) << ", n " << n << ": element " << i;
    }
  }
}

ACCEL_CONFORMANCE_DEVICE_CASE(kExecution, kernels, copy_with_offsets) {
  ACCEL_LOAD_KERNEL(k, dut, "copy_offset_u32");
  Stream stream(dut);
  for (const Shape& shape : k.ShapesFor(dut)) {
    const uint32_t n = static_cast<uint32_t>(shape.items());
    const uint32_t src_offset = 5;
    const uint32_t dst_offset = 3;
    const uint64_t count = n + 16;
    std::vector<uint32_t> src(count);
    for (uint64_t i = 0; i < count; ++i) src[i] = static_cast<uint32_t>(i * 2654435761u);
    Buffer s(dut, count * 4);
    Buffer d(dut, count * 4);
    Put(stream, s.get(), src);
    Put(stream, d.get(), std::vector<uint32_t>(count, kSentinel));
    // Element offsets through the scalars, and a byte offset through the
    // destination's binding (16 bytes = 4 elements) on top.
    const uint64_t bind = 16;
    ACCEL_ASSERT_OK(Launch(stream, k, shape,
                           {BufferArg(s.get()), BufferArg(d.get(), bind, count * 4 - bind), ScalarArg(&src_offset),
                            ScalarArg(&dst_offset), ScalarArg(&n)}));
    ACCEL_ASSERT_OK(stream.Sync());
    const auto got = As<uint32_t>(Download(stream, d.get(), 0, count * 4));
    const uint64_t first = bind / 4 + dst_offset;
    for (uint64_t i = 0; i < count; ++i) {
      const uint32_t want = (i >= first && i < first + n) ? src[i - first + src_offset] : kSentinel;
      ASSERT_EQ(got[i], want) << ShapeText(shape) << ": element " << i;
    }
  }
}

ACCEL_CONFORMANCE_DEVICE_CASE(kExecution, kernels, vector_add) {
  ACCEL_LOAD_KERNEL(k, dut, "vadd_f32");
  Stream stream(dut);
  for (const Shape& shape : k.ShapesFor(dut)) {
    const uint32_t n = static_cast<uint32_t>(shape.items() > 1 ? shape.items() - 1 : 1);
    const uint64_t count = shape.items() + 2;
    std::vector<float> a(count);
    std::vector<float> b(count);
    for (uint64_t i = 0; i < count; ++i) {
      a[i] = static_cast<float>(i) * 0.5f;
      b[i] = 1000.0f - static_cast<float>(i);
    }
    Buffer ba(dut, count * 4);
    Buffer bb(dut, count * 4);
    Buffer bc(dut, count * 4);
    Put(stream, ba.get(), a);
    Put(stream, bb.get(), b);
    Put(stream, bc.get(), std::vector<float>(count, -1.0f));
    ACCEL_ASSERT_OK(
        Launch(stream, k, shape, {BufferArg(ba.get()), BufferArg(bb.get()), BufferArg(bc.get()), ScalarArg(&n)}));
    ACCEL_ASSERT_OK(stream.Sync());
    const auto got = As<float>(Download(stream, bc.get(), 0, count * 4));
    for (uint64_t i = 0; i < count; ++i) {
      ASSERT_EQ(got[i], i < n ? a[i] + b[i] : -1.0f) << ShapeText(shape) << ": element " << i;
    }
  }
}

ACCEL_CONFORMANCE_DEVICE_CASE(kExecution, kernels, reduction_with_local_memory) {
  ACCEL_LOAD_KERNEL(k, dut, "reduce_u32");
  Stream stream(dut);
  int ran = 0;
  for (const Shape& shape : k.ShapesFor(dut)) {
    const uint64_t size = shape.group_size();
    if (size * 4 + k.properties().local_memory_size > dut.caps.local_memory_size) continue;
    ++ran;
    const uint32_t n = static_cast<uint32_t>(shape.items() > 2 ? shape.items() - 2 : shape.items());
    std::vector<uint32_t> in(shape.items());
    for (uint64_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 7 + 1) ^ 0x9E3779B9u;
    Buffer bin(dut, in.size() * 4);
    Buffer bpartial(dut, (shape.groups() + 1) * 4);
    Put(stream, bin.get(), in);
    Put(stream, bpartial.get(), std::vector<uint32_t>(shape.groups() + 1, kSentinel));
    ACCEL_ASSERT_OK(
        Launch(stream, k, shape, {BufferArg(bin.get()), BufferArg(bpartial.get()), ScalarArg(&n), LocalArg(size * 4)}));
    ACCEL_ASSERT_OK(stream.Sync());
    const auto got = As<uint32_t>(Download(stream, bpartial.get(), 0, (shape.groups() + 1) * 4));
    for (uint64_t g = 0; g < shape.groups(); ++g) {
      uint32_t want = 0;
      for (uint64_t l = 0; l < size; ++l) {
        if (g * size + l < n) want += in[g * size + l];
      }
      ASSERT_EQ(got[g], want) << ShapeText(shape) << ": work-group " << g;
    }
    EXPECT_EQ(got[shape.groups()], kSentinel) << ShapeText(shape) << ": wrote past the last work-group";
  }
  EXPECT_GE(ran, 1) << "no shape's scratch (4 bytes a work-item) fits the device's local memory";
}

ACCEL_CONFORMANCE_DEVICE_CASE(kExecution, kernels, atomic_add) {
  ACCEL_LOAD_KERNEL(k, dut, "atomic_add_u32");
  Stream stream(dut);
  for (const Shape& shape : k.ShapesFor(dut)) {
    const uint32_t n = static_cast<uint32_t>(shape.items());
    const uint32_t bins = 7;
    std::vector<uint32_t> values(n);
    for (uint32_t i = 0; i < n; ++i) values[i] = i % 13 + 1;
    Buffer bv(dut, uint64_t{n} * 4);
    Buffer bs(dut, bins * 4);
    Put(stream, bv.get(), values);
    std::vector<uint32_t> start(bins);
    for (uint32_t b = 0; b < bins; ++b) start[b] = b * 1000;
    Put(stream, bs.get(), start);
    ACCEL_ASSERT_OK(
        Launch(stream, k, shape, {BufferArg(bv.get()), BufferArg(bs.get()), ScalarArg(&n), ScalarArg(&bins)}));
    ACCEL_ASSERT_OK(stream.Sync());
    const auto got = As<uint32_t>(Download(stream, bs.get(), 0, bins * 4));
    std::vector<uint32_t> want = start;
    for (uint32_t i = 0; i < n; ++i) want[i % bins] += values[i];
    EXPECT_EQ(got, want) << ShapeText(shape);
  }
}

ACCEL_CONFORMANCE_DEVICE_CASE(kExecution, launch, bad_launches_refused) {
  ACCEL_LOAD_KERNEL(k, dut, "fill_u32");
  Stream stream(dut);
  Buffer out(dut, 64);
  Put(stream, out.get(), std::vector<uint32_t>(16, kSentinel));
  const uint32_t value = 1;
  const uint32_t n = 16;
  const Shape ok{{1, 1, 1}, {16, 1, 1}};
  auto refused = [](accel_status_t s, const char* what) {
    EXPECT_EQ(s, ACCEL_ERROR_INVALID_ARGUMENT) << what << ": " << Why(s);
    EXPECT_FALSE(std::string(accel_last_error()).empty()) << what;
  };
  refused(Launch(stream, k, ok, {BufferArg(out.get()), ScalarArg(&value)}), "one argument short");
  refused(Launch(stream, k, ok, {ScalarArg(&value), ScalarArg(&value), ScalarArg(&n)}), "a scalar for a buffer");
  refused(Launch(stream, k, Shape{{1, 1, 1}, {0, 1, 1}}, {BufferArg(out.get()), ScalarArg(&value), ScalarArg(&n)}),
          "a zero block");
  const uint32_t too_wide = dut.caps.max_work_group_dims[0] + 1;
  refused(
      Launch(stream, k, Shape{{1, 1, 1}, {too_wide, 1, 1}}, {BufferArg(out.get()), ScalarArg(&value), ScalarArg(&n)}),
      "a block past max_work_group_dims");
  refused(Launch(stream, k, ok, {BufferArg(out.get(), 60, 8), ScalarArg(&value), ScalarArg(&n)}),
          "a buffer range past the end");
  ACCEL_ASSERT_OK(stream.Sync());
  EXPECT_EQ(As<uint32_t>(Download(stream, out.get(), 0, 64)), std::vector<uint32_t>(16, kSentinel))
      << "a refused launch ran";
}

// Prepared launches (docs/kernels.md, "Prepared launches"): each enqueue runs the launch once, in stream order with
// plain launches and copies; scalars are copied when it is prepared; a buffer whose handle was destroyed and a
// prepared launch destroyed after its enqueues still serve the launches; buffers bound at an offset or for part of
// their size bind that range. What is refused is what accel_stream_launch_kernel refuses.
ACCEL_CONFORMANCE_DEVICE_CASE(kExecution, launch, prepared_launches) {
  ACCEL_LOAD_KERNEL(add, dut, "atomic_add_u32");
  ACCEL_LOAD_KERNEL(fill, dut, "fill_u32");
  Stream stream(dut);
  constexpr uint32_t kItems = 64;
  constexpr uint32_t kBins = 4;
  constexpr uint64_t kSumsAt = 256;  // bytes: the bins' range in `sums`, at an offset every device binds at
  std::vector<uint32_t> values(kItems);
  for (uint32_t i = 0; i < kItems; ++i) values[i] = i + 1;
  Buffer source(dut, kItems * 4);
  Put(stream, source.get(), values);
  Buffer sums(dut, kSumsAt + kBins * 4);
  Put(stream, sums.get(), std::vector<uint32_t>((kSumsAt + kBins * 4) / 4, kSentinel));
  const Shape shape{{kItems, 1, 1}, {1, 1, 1}};

  uint32_t n = kItems;
  uint32_t bins = kBins;
  const std::vector<accel_kernel_arg_t> add_args = {BufferArg(source.get()), BufferArg(sums.get(), kSumsAt, kBins * 4),
                                                    ScalarArg(&n), ScalarArg(&bins)};
  accel_prepared_launch_t add_prepared = nullptr;
  ACCEL_ASSERT_OK(Prepare(add, shape, add_args, &add_prepared));
  ASSERT_NE(add_prepared, nullptr);
  const uint32_t zero = 0;
  const uint32_t four = kBins;
  accel_prepared_launch_t zero_bins = nullptr;
  ACCEL_ASSERT_OK(Prepare(fill, Shape{{kBins, 1, 1}, {1, 1, 1}},
                          {BufferArg(sums.get(), kSumsAt, kBins * 4), ScalarArg(&zero), ScalarArg(&four)}, &zero_bins));
  const uint32_t marker = 0x600DF00D;
  const uint32_t two = 2;
  accel_prepared_launch_t mark = nullptr;  // elements 0 and 1: a range at offset 0, shorter than the buffer
  ACCEL_ASSERT_OK(Prepare(fill, Shape{{2, 1, 1}, {1, 1, 1}},
                          {BufferArg(sums.get(), 0, 8), ScalarArg(&marker), ScalarArg(&two)}, &mark));
  // Copied when prepared: what the variables hold later does not matter, nor the source's handle.
  n = 1;
  bins = 0;
  const accel_buffer_t source_handle = source.release();
  ACCEL_ASSERT_OK(accel_buffer_destroy(source_handle));

  constexpr int kRepeats = 5;
  ACCEL_ASSERT_OK(accel_stream_launch_prepared(stream.get(), zero_bins));
  for (int r = 0; r < kRepeats; ++r) ACCEL_ASSERT_OK(accel_stream_launch_prepared(stream.get(), add_prepared));
  ACCEL_ASSERT_OK(accel_prepared_launch_destroy(add_prepared));  // its launches are enqueued: they still run
  ACCEL_ASSERT_OK(accel_stream_launch_prepared(stream.get(), mark));
  ACCEL_ASSERT_OK(stream.Sync());
  auto got = As<uint32_t>(Download(stream, sums.get(), 0, kSumsAt + kBins * 4));
  std::vector<uint32_t> want((kSumsAt + kBins * 4) / 4, kSentinel);
  want[0] = marker;
  want[1] = marker;
  for (uint32_t b = 0; b < kBins; ++b) want[kSumsAt / 4 + b] = 0;
  for (uint32_t i = 0; i < kItems; ++i) want[kSumsAt / 4 + i % kBins] += kRepeats * values[i];
  EXPECT_EQ(got, want) << "zero the bins, add " << kRepeats << " times, mark elements 0 and 1";

  // In order with a copy and a plain launch on the same stream, none waited for: the copy's sevens, then the
  // prepared fill's zeros, then the plain fill of the first bin.
  const std::vector<uint32_t> sevens(kBins, 7);
  ACCEL_ASSERT_OK(accel_stream_copy_host_to_buffer(stream.get(), sevens.data(), sums.get(), kSumsAt, kBins * 4));
  ACCEL_ASSERT_OK(accel_stream_launch_prepared(stream.get(), zero_bins));
  const uint32_t nine = 9;
  const uint32_t one = 1;
  ACCEL_ASSERT_OK(Launch(stream, fill, Shape{{1, 1, 1}, {1, 1, 1}},
                         {BufferArg(sums.get(), kSumsAt, 4), ScalarArg(&nine), ScalarArg(&one)}));
  ACCEL_ASSERT_OK(stream.Sync());
  got = As<uint32_t>(Download(stream, sums.get(), kSumsAt, kBins * 4));
  EXPECT_EQ(got, (std::vector<uint32_t>{nine, 0, 0, 0})) << "a copy, a prepared fill, a plain fill of the first bin";

  // Refused as a plain launch would be, with nothing made; stale handles are refused.
  accel_prepared_launch_t refused = nullptr;
  EXPECT_EQ(Prepare(fill, Shape{{1, 1, 1}, {1, 1, 1}}, {BufferArg(sums.get()), ScalarArg(&zero)}, &refused),
            ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(refused, nullptr);
  EXPECT_EQ(accel_stream_launch_prepared(stream.get(), add_prepared), ACCEL_ERROR_INVALID_HANDLE)
      << "a destroyed prepared launch";
  EXPECT_EQ(accel_prepared_launch_destroy(add_prepared), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_stream_launch_prepared(stream.get(), nullptr), ACCEL_ERROR_INVALID_HANDLE);
  ACCEL_EXPECT_OK(accel_prepared_launch_destroy(zero_bins));
  ACCEL_EXPECT_OK(accel_prepared_launch_destroy(mark));
}

}  // namespace accel::conformance
