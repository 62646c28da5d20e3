# Certification of the CUDA backend (backends/cuda) without a GPU: on the fake driver of tests/cuda
# (fake_libcuda.cc: host memory, a thread per stream, the corpus's kernels in C++), two devices with peer access,
# so that every profile runs, multi-device included, with no skip. Included from tests/conformance/CMakeLists.txt
# when the target accel_backend_cuda exists. On a GPU, scripts/gpu-check.sh certifies the real driver.
if(TARGET accel-info)
  foreach(p IN LISTS _profiles)
    accel_add_conformance_test(conformance.cuda-fake.${p} certify --backend ${_manifests}/cuda.json --profile ${p}
      --expectations ${PROJECT_SOURCE_DIR}/backends/cuda/expectations.json --max-skips 0
      --keep ${CMAKE_BINARY_DIR}/conformance/certificates/cuda-fake-${p}.json)
    set_property(TEST conformance.cuda-fake.${p} APPEND PROPERTY ENVIRONMENT
      "ACCEL_CUDA_LIBRARY=${CMAKE_BINARY_DIR}/tests/cuda/libcuda_fake.so" ACCEL_FAKE_CUDA_DEVICES=2)
    set_property(TEST conformance.cuda-fake.${p} APPEND PROPERTY LABELS cuda)
  endforeach()
endif()
