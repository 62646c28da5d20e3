// The benchmarks' operations through Accel's C API.
#include <cstring>

#include "bench.h"
#include "corpus_file.h"
#include "names.h"

namespace accel::bench {
namespace {

class AccelPath final : public Path {
 public:
  ~AccelPath() override {
    if (stream_ != nullptr) accel_stream_destroy(stream_);
    if (prepared_ != nullptr) accel_prepared_launch_destroy(prepared_);
    for (accel_buffer_t b : {a_, b_, tiny_}) {
      if (b != nullptr) accel_buffer_destroy(b);
    }
    if (module_ != nullptr) accel_module_destroy(module_);
  }

  bool Init(accel_device_t device, uint64_t max_size, const std::string& corpus_dir) {
    device_ = device;
    host_.assign(max_size, 1);
    if (!Ok(accel_stream_create(device, nullptr, &stream_), "accel_stream_create")) return false;
    if (!Make(max_size, &a_) || !Make(max_size, &b_) || !Make(4096, &tiny_)) return false;
    return LoadFill(corpus_dir);
  }

  std::string Name() const override { return "accel"; }

  bool TinyLaunchAndWait() override {
    return Launch() && Ok(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), "accel_stream_synchronize");
  }
  bool LaunchBatch(int count) override {
    for (int i = 0; i < count; ++i) {
      if (!Launch()) return false;
    }
    return Ok(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), "accel_stream_synchronize");
  }
  bool PreparedLaunchBatch(int count) override {
    for (int i = 0; i < count; ++i) {
      if (!Ok(accel_stream_launch_prepared(stream_, prepared_), "accel_stream_launch_prepared")) return false;
    }
    return Ok(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), "accel_stream_synchronize");
  }
  bool HostToDevice(uint64_t size) override {
    return Ok(accel_stream_copy_host_to_buffer(stream_, host_.data(), a_, 0, size), "copy_host_to_buffer") &&
           Ok(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), "accel_stream_synchronize");
  }
  bool DeviceToHost(uint64_t size) override {
    return Ok(accel_stream_copy_buffer_to_host(stream_, a_, 0, host_.data(), size), "copy_buffer_to_host") &&
           Ok(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), "accel_stream_synchronize");
  }
  bool DeviceToDevice(uint64_t size) override {
    return Ok(accel_stream_copy_buffer(stream_, a_, 0, b_, 0, size), "copy_buffer") &&
           Ok(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), "accel_stream_synchronize");
  }
  bool Fill(uint64_t size) override {
    const uint32_t pattern = 0x01020304;
    return Ok(accel_stream_fill_buffer(stream_, b_, 0, size, &pattern, sizeof(pattern)), "fill_buffer") &&
           Ok(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), "accel_stream_synchronize");
  }

 private:
  bool Ok(accel_status_t s, const char* what) {
    if (s >= 0) return true;
    error_ = std::string(what) + ": " + accel_status_name(s) + ": " + accel_last_error();
    return false;
  }
  bool Make(uint64_t size, accel_buffer_t* out) {
    accel_buffer_desc_t desc{};
    desc.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
    desc.struct_size = sizeof(desc);
    desc.size = size;
    return Ok(accel_buffer_create(device_, &desc, out), "accel_buffer_create");
  }
  // fill_u32 from the conformance corpus, in every format the device executes.
  bool LoadFill(const std::string& corpus_dir) {
    const auto corpus = accel::conformance::ReadKernelCorpus(corpus_dir, &error_);
    if (!corpus) return false;
    if (!corpus->kernels.contains("fill_u32")) {
      error_ = corpus_dir + "/corpus.json has no fill_u32";
      return false;
    }
    uint64_t formats = 0;
    accel_device_get_info(device_, ACCEL_DEVICE_INFO_KERNEL_FORMATS, sizeof(formats), &formats, nullptr);
    std::vector<accel_module_source_t> sources;
    for (const auto& f : accel::info::KernelFormatNames()) {
      const auto file = corpus->File("fill_u32", f.name);
      if ((formats & f.bit) == 0 || !file) continue;
      paths_.push_back(file->string());
      accel_module_source_t s{};
      s.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
      s.struct_size = sizeof(s);
      s.format = f.bit;
      sources.push_back(s);
    }
    if (sources.empty()) {
      error_ = "the corpus has no format this device executes";
      return false;
    }
    for (size_t i = 0; i < sources.size(); ++i) sources[i].path = paths_[i].c_str();
    accel_module_desc_t desc{};
    desc.stype = ACCEL_STRUCTURE_TYPE_MODULE_DESC;
    desc.struct_size = sizeof(desc);
    desc.sources = sources.data();
    desc.source_count = static_cast<uint32_t>(sources.size());
    desc.name = "accel-bench";
    if (!Ok(accel_module_create(device_, &desc, &module_), "accel_module_create")) return false;
    if (!Ok(accel_module_get_kernel(module_, "fill_u32", &kernel_), "accel_module_get_kernel")) return false;
    for (auto& a : args_) {
      a = {};
      a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
      a.struct_size = sizeof(a);
    }
    args_[0].kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
    args_[0].buffer = tiny_;
    args_[1].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
    args_[1].value = &value_;
    args_[1].size = 4;
    args_[2].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
    args_[2].value = &n_;
    args_[2].size = 4;
    launch_ = {};
    launch_.stype = ACCEL_STRUCTURE_TYPE_LAUNCH_DESC;
    launch_.struct_size = sizeof(launch_);
    for (int d = 0; d < 3; ++d) launch_.grid[d] = launch_.block[d] = 1;
    launch_.args = args_;
    launch_.arg_count = 3;
    if (!Ok(accel_kernel_prepare_launch(kernel_, &launch_, &prepared_), "accel_kernel_prepare_launch")) return false;
    // The first launch builds pipelines; time what follows, not that.
    return TinyLaunchAndWait();
  }
  bool Launch() { return Ok(accel_stream_launch_kernel(stream_, kernel_, &launch_), "accel_stream_launch_kernel"); }

  accel_device_t device_ = nullptr;
  accel_stream_t stream_ = nullptr;
  accel_buffer_t a_ = nullptr, b_ = nullptr, tiny_ = nullptr;
  accel_module_t module_ = nullptr;
  accel_kernel_t kernel_ = nullptr;
  std::vector<std::string> paths_;
  std::vector<uint8_t> host_;
  accel_kernel_arg_t args_[3];
  accel_launch_desc_t launch_{};
  accel_prepared_launch_t prepared_ = nullptr;  // launch_, prepared
  uint32_t value_ = 7;
  uint32_t n_ = 1;
};

}  // namespace

std::unique_ptr<Path> MakeAccelPath(accel_device_t device, uint64_t max_size, const std::string& corpus_dir,
                                    std::string* error) {
  auto path = std::make_unique<AccelPath>();
  if (!path->Init(device, max_size, corpus_dir)) {
    *error = path->Error();
    return nullptr;
  }
  return path;
}

}  // namespace accel::bench
