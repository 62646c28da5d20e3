# Certification of the HIP backend (backends/hip) without an AMD GPU: on the fake runtime of tests/hip
# (fake_libamdhip64.cc: host memory, a thread per stream), two devices with peer access. The abi, query, memory and
# streams profiles run with no skip; execution and multi-device need a hsaco kernel corpus, which the conformance
# corpus does not build yet (conformance/corpus/README.md: hsaco is "missing"), so they are not run here. Included
# from tests/conformance/CMakeLists.txt when the target accel_backend_hip exists.
if(TARGET accel-info)
  foreach(p abi query memory streams)
    accel_add_conformance_test(conformance.hip-fake.${p} certify --backend ${_manifests}/hip.json --profile ${p}
      --expectations ${PROJECT_SOURCE_DIR}/backends/hip/expectations.json --max-skips 0
      --keep ${CMAKE_BINARY_DIR}/conformance/certificates/hip-fake-${p}.json)
    set_property(TEST conformance.hip-fake.${p} APPEND PROPERTY ENVIRONMENT
      "ACCEL_HIP_LIBRARY=${CMAKE_BINARY_DIR}/tests/hip/libamdhip64_fake.so" ACCEL_FAKE_HIP_DEVICES=2)
    set_property(TEST conformance.hip-fake.${p} APPEND PROPERTY LABELS hip)
  endforeach()
endif()
