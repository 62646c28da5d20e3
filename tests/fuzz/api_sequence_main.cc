// Runs the API-sequence fuzzer without libFuzzer: replays each file (or each
// file of each folder) given, then --iterations random inputs generated from
// --seed (deterministic: the same seed makes the same inputs), and prints the
// counts. `--write DIR` also saves the random inputs, to replay one or seed a
// libFuzzer run.
//   accel_api_fuzzer [--seed N] [--iterations N] [--max-len BYTES] [--seconds S] [--write DIR] [FILE|DIR]...
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "api_sequence_fuzzer.h"

namespace {

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<uint8_t> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1;
  uint64_t iterations = 100;
  uint64_t max_len = 2048;
  double seconds = 0;  // > 0: run random inputs until then, whatever --iterations says
  std::string write_dir;
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--seed") {
      seed = std::stoull(value());
    } else if (arg == "--iterations") {
      iterations = std::stoull(value());
    } else if (arg == "--max-len") {
      max_len = std::stoull(value());
    } else if (arg == "--seconds") {
      seconds = std::stod(value());
    } else if (arg == "--write") {
      write_dir = value();
    } else {
      inputs.emplace_back(arg);
    }
  }
  LLVMFuzzerInitialize(&argc, &argv);
  const auto start = std::chrono::steady_clock::now();
  uint64_t replayed = 0;
  for (const auto& input : inputs) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(input)) {
      for (const auto& entry : std::filesystem::directory_iterator(input)) files.push_back(entry.path());
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(input);
    }
    for (const auto& file : files) {
      const std::vector<uint8_t> bytes = ReadFile(file);
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++replayed;
    }
  }
  uint64_t state = seed;
  uint64_t generated = 0;
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  while (seconds > 0 ? elapsed() < seconds : generated < iterations) {
    std::vector<uint8_t> bytes(16 + SplitMix64(&state) % (max_len > 16 ? max_len - 15 : 1));
    for (auto& b : bytes) b = static_cast<uint8_t>(SplitMix64(&state));
    if (!write_dir.empty()) {
      std::ofstream(std::filesystem::path(write_dir) / ("input-" + std::to_string(generated)), std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++generated;
  }
  std::printf(
      "api-sequence: %llu inputs replayed, %llu generated (seed %llu), %llu API calls, %llu errors returned, "
      "%.1f s\n",
      static_cast<unsigned long long>(replayed), static_cast<unsigned long long>(generated),
      static_cast<unsigned long long>(seed), static_cast<unsigned long long>(AccelApiFuzzCalls()),
      static_cast<unsigned long long>(AccelApiFuzzErrors()), elapsed());
  return 0;
}
