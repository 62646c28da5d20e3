# Certification of the OpenCL backend (backends/opencl) on the machine's OpenCL
# runtime (PoCL in CI): one runner process per profile, as for the in-tree
# backends above. Included from tests/conformance/CMakeLists.txt when the
# target accel_backend_opencl exists. The runner opens only the given backend,
# whatever ACCEL_BACKENDS says. PoCL lists one device by default; the
# multi-device profile runs with two (below). LSAN_OPTIONS points
# LeakSanitizer (the asan preset) at the suppressions for PoCL's and LLVM's own
# allocations (tests/opencl/lsan.supp); Accel's code is never suppressed.
set(_opencl_lsan_options "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/opencl/lsan.supp:print_suppressions=0")
foreach(p IN ITEMS abi query memory streams execution)
  accel_add_conformance_test(conformance.opencl.${p} certify --backend ${_manifests}/opencl.json --profile ${p}
    --expectations ${PROJECT_SOURCE_DIR}/backends/opencl/expectations.json --max-skips 0
    --keep ${CMAKE_BINARY_DIR}/conformance/certificates/opencl-${p}.json)
  set_property(TEST conformance.opencl.${p} APPEND PROPERTY ENVIRONMENT ${_opencl_lsan_options})
  set_property(TEST conformance.opencl.${p} APPEND PROPERTY LABELS opencl)
endforeach()
# Two PoCL devices (POCL_DEVICES lists the pthread device twice): the
# multi-device profile on a real runtime. Both are access paths of the host
# CPU, so their link is SELF and copies stay in its memory (docs/devices.md).
accel_add_conformance_test(conformance.opencl-2.multi-device certify --backend ${_manifests}/opencl.json
  --profile multi-device --expectations ${PROJECT_SOURCE_DIR}/backends/opencl/expectations.json --max-skips 0
  --keep ${CMAKE_BINARY_DIR}/conformance/certificates/opencl-2-multi-device.json)
set_property(TEST conformance.opencl-2.multi-device APPEND PROPERTY ENVIRONMENT ${_opencl_lsan_options}
  "POCL_DEVICES=pthread pthread")
set_property(TEST conformance.opencl-2.multi-device APPEND PROPERTY LABELS opencl)
