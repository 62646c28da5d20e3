// accel-bench's measurements (docs/accel-bench.md): one operation timed many
// times, and the work each benchmark runs through Accel or through a backend's
// native API.
//
//   Samples s = TimeEach(200, [&] { op(); });
//   std::printf("%.1f us\n", s.Median() * 1e6);
//
// Thread-safety: a Device and its native twin are used from one thread.
#ifndef ACCEL_TOOLS_ACCEL_BENCH_BENCH_H_
#define ACCEL_TOOLS_ACCEL_BENCH_BENCH_H_

#include <accel/accel.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace accel::bench {

// Seconds per repetition.
struct Samples {
  std::vector<double> seconds;
  double Median() const;
  double Quantile(double q) const;
};

inline double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The operations a benchmark times, on one device, through one API. Each
// returns false (with Error() set) when the API refuses it.
class Path {
 public:
  virtual ~Path() = default;
  virtual std::string Name() const = 0;  // "accel", "handoff", or "opencl", "vulkan", "cuda"
  // One tiny kernel (fill one element) enqueued and waited for.
  virtual bool TinyLaunchAndWait() = 0;
  // `count` tiny kernels back to back, then one wait.
  virtual bool LaunchBatch(int count) = 0;
  // The same, the launch checked once and enqueued `count` times (Accel's prepared launch, docs/kernels.md). The
  // native paths set the kernel's arguments once already: their LaunchBatch.
  virtual bool PreparedLaunchBatch(int count) { return LaunchBatch(count); }
  // One copy of `size` bytes, waited for.
  virtual bool HostToDevice(uint64_t size) = 0;
  virtual bool DeviceToHost(uint64_t size) = 0;
  virtual bool DeviceToDevice(uint64_t size) = 0;
  // `size` bytes of a buffer filled with a 4-byte pattern, waited for.
  virtual bool Fill(uint64_t size) = 0;
  const std::string& Error() const { return error_; }

 protected:
  std::string error_;
};

// The device through Accel: buffers of the largest size, a stream, the corpus's
// fill_u32 in a format the device executes. Returns null with `error` set when
// the device cannot run the benchmarks.
std::unique_ptr<Path> MakeAccelPath(accel_device_t device, uint64_t max_size, const std::string& corpus_dir,
                                    std::string* error);

// The file the kernel corpus's corpus.json in `corpus_dir` names for fill_u32
// in `format`; empty with `*error` set when the corpus cannot be read or is
// rejected (conformance/corpus/corpus_file.h), or has none (with the corpus's
// reason when it gives one) (native.cc).
std::string CorpusFile(const std::string& corpus_dir, const char* format, std::string* error);

// The thread hand-off baseline (handoff.cc): each benchmark's work (a 4-byte
// store for a launch, a memcpy for a copy) handed to another thread, asleep on a
// condition variable, and waited for.
std::unique_ptr<Path> MakeHandOffPath(uint64_t max_size);

// The same device through its backend's native API, where accel-bench knows
// it (native_opencl.cc, native_vulkan.cc, native_cuda.cc); null with `why` set otherwise.
std::unique_ptr<Path> MakeNativePath(const accel_device_capabilities_t& caps, uint32_t index_in_backend,
                                     uint64_t max_size, const std::string& corpus_dir, std::string* why);

}  // namespace accel::bench

#endif  // ACCEL_TOOLS_ACCEL_BENCH_BENCH_H_
