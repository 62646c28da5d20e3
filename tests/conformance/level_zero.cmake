# Certification of the Level Zero backend (backends/level_zero) without an Intel GPU: on the fake loader of
# tests/level_zero (fake_libze_loader.cc: host memory, a thread per command list, the corpus's kernels in C++), two
# devices with peer access, so that every profile runs, multi-device included, with no skip; execution loads the
# corpus's spirv-opencl SPIR-V, which the backend reflects. Included from tests/conformance/CMakeLists.txt when the
# target accel_backend_level_zero exists.
if(TARGET accel-info)
  foreach(p IN LISTS _profiles)
    accel_add_conformance_test(conformance.level_zero-fake.${p} certify --backend ${_manifests}/level_zero.json
      --profile ${p} --expectations ${PROJECT_SOURCE_DIR}/backends/level_zero/expectations.json --max-skips 0
      --keep ${CMAKE_BINARY_DIR}/conformance/certificates/level_zero-fake-${p}.json)
    set_property(TEST conformance.level_zero-fake.${p} APPEND PROPERTY ENVIRONMENT
      "ACCEL_LEVEL_ZERO_LIBRARY=${CMAKE_BINARY_DIR}/tests/level_zero/libze_loader_fake.so" ACCEL_FAKE_ZE_DEVICES=2)
    set_property(TEST conformance.level_zero-fake.${p} APPEND PROPERTY LABELS level_zero)
  endforeach()
endif()
