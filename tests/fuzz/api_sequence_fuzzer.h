// The API-sequence fuzzer's entry points (api_sequence_fuzzer.cc), for the
// driver that runs it without libFuzzer (api_sequence_main.cc).
#ifndef ACCEL_TESTS_FUZZ_API_SEQUENCE_FUZZER_H_
#define ACCEL_TESTS_FUZZ_API_SEQUENCE_FUZZER_H_

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// C API calls made so far, and how many of them returned an error.
uint64_t AccelApiFuzzCalls();
uint64_t AccelApiFuzzErrors();

#endif  // ACCEL_TESTS_FUZZ_API_SEQUENCE_FUZZER_H_
