// The conformance corpus's five kernels (conformance/corpus/README.md) in C++, for the fake vendor runtimes of the
// tests (tests/cuda/fake_libcuda.cc, tests/hip/fake_libamdhip64.cc, tests/level_zero/fake_libze_loader.cc): each
// fake collects a launch's geometry and parameter bytes and runs the kernel of that name on the host. Parameters are
// those of the CUDA and HIP corpus kernels (a device address per BUFFER, 4 bytes per SCALAR, none for reduce_u32's
// scratch); a fake whose launches carry more parameters (Level Zero's local-memory argument) passes them after these.
#ifndef ACCEL_TESTS_COMMON_FAKE_CORPUS_KERNELS_H_
#define ACCEL_TESTS_COMMON_FAKE_CORPUS_KERNELS_H_

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace accel_test::fake_corpus {

// A device address of the fakes' memory, which is host memory.
inline void* Address(uint64_t p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

// The parameter sizes of each kernel, by name.
inline const std::map<std::string, std::vector<size_t>>& Kernels() {
  static const std::map<std::string, std::vector<size_t>> kernels = {{"fill_u32", {8, 4, 4}},
                                                                     {"copy_offset_u32", {8, 8, 4, 4, 4}},
                                                                     {"vadd_f32", {8, 8, 8, 4}},
                                                                     {"reduce_u32", {8, 8, 4}},
                                                                     {"atomic_add_u32", {8, 8, 4, 4}}};
  return kernels;
}

// One launch: its grid, block and parameter bytes.
struct Launch {
  unsigned int grid[3];
  unsigned int block[3];
  std::vector<std::vector<unsigned char>> params;
  uint64_t U64(size_t i) const {
    uint64_t v = 0;
    std::memcpy(&v, params[i].data(), 8);
    return v;
  }
  uint32_t U32(size_t i) const {
    uint32_t v = 0;
    std::memcpy(&v, params[i].data(), 4);
    return v;
  }
};

// Runs kernel `name` over the launch's whole grid.
inline void Run(const std::string& name, const Launch& l) {
  const uint64_t W = uint64_t{l.grid[0]} * l.block[0];
  const uint64_t H = uint64_t{l.grid[1]} * l.block[1];
  const uint64_t S = uint64_t{l.block[0]} * l.block[1] * l.block[2];
  const auto each = [&](auto&& body) {
    for (uint64_t bz = 0; bz < l.grid[2]; ++bz)
      for (uint64_t by = 0; by < l.grid[1]; ++by)
        for (uint64_t bx = 0; bx < l.grid[0]; ++bx)
          for (uint64_t tz = 0; tz < l.block[2]; ++tz)
            for (uint64_t ty = 0; ty < l.block[1]; ++ty)
              for (uint64_t tx = 0; tx < l.block[0]; ++tx) {
                const uint64_t gx = bx * l.block[0] + tx, gy = by * l.block[1] + ty, gz = bz * l.block[2] + tz;
                body((gz * H + gy) * W + gx);
              }
  };
  if (name == "fill_u32") {
    auto* out = static_cast<uint32_t*>(Address(l.U64(0)));
    const uint32_t value = l.U32(1), n = l.U32(2);
    each([&](uint64_t i) {
      if (i < n) out[i] = value;
    });
  } else if (name == "copy_offset_u32") {
    auto* src = static_cast<const uint32_t*>(Address(l.U64(0)));
    auto* dst = static_cast<uint32_t*>(Address(l.U64(1)));
    const uint32_t so = l.U32(2), d = l.U32(3), n = l.U32(4);
    each([&](uint64_t i) {
      if (i < n) dst[d + i] = src[so + i];
    });
  } else if (name == "vadd_f32") {
    auto* a = static_cast<const float*>(Address(l.U64(0)));
    auto* b = static_cast<const float*>(Address(l.U64(1)));
    auto* c = static_cast<float*>(Address(l.U64(2)));
    const uint32_t n = l.U32(3);
    each([&](uint64_t i) {
      if (i < n) c[i] = a[i] + b[i];
    });
  } else if (name == "reduce_u32") {
    auto* in = static_cast<const uint32_t*>(Address(l.U64(0)));
    auto* partial = static_cast<uint32_t*>(Address(l.U64(1)));
    const uint32_t n = l.U32(2);
    const uint64_t groups = uint64_t{l.grid[0]} * l.grid[1] * l.grid[2];
    for (uint64_t g = 0; g < groups; ++g) {
      uint32_t sum = 0;
      for (uint64_t k = 0; k < S; ++k) {
        if (g * S + k < n) sum += in[g * S + k];
      }
      partial[g] = sum;
    }
  } else if (name == "atomic_add_u32") {
    auto* values = static_cast<const uint32_t*>(Address(l.U64(0)));
    auto* sums = static_cast<uint32_t*>(Address(l.U64(1)));
    const uint32_t n = l.U32(2), bins = l.U32(3);
    each([&](uint64_t i) {
      if (i < n && bins != 0) sums[i % bins] += values[i];
    });
  }
}

}  // namespace accel_test::fake_corpus

#endif  // ACCEL_TESTS_COMMON_FAKE_CORPUS_KERNELS_H_
