# The Vulkan backend's certification on Mesa's lavapipe (Vulkan on the CPU; backends/vulkan/README.md): one runner
# process per profile, each checked by conformance_test.py. Included from tests/conformance/CMakeLists.txt when the
# target accel_backend_vulkan exists; not added where lavapipe is not installed (tests/vulkan/lavapipe.cmake says so).
include(${PROJECT_SOURCE_DIR}/tests/vulkan/lavapipe.cmake)
if(NOT ACCEL_VULKAN_TEST_ENVIRONMENT)
  return()
endif()
# One device (lavapipe): no skips at all, none marked unsupported; multi-device needs two devices and is not run.
foreach(p abi query memory streams execution)
  accel_add_conformance_test(conformance.vulkan.${p} certify --backend ${_manifests}/vulkan.json --profile ${p}
    --expectations ${PROJECT_SOURCE_DIR}/backends/vulkan/expectations.json --max-skips 0
    --keep ${CMAKE_BINARY_DIR}/conformance/certificates/vulkan-${p}.json)
  set_property(TEST conformance.vulkan.${p} APPEND PROPERTY ENVIRONMENT ${ACCEL_VULKAN_TEST_ENVIRONMENT})
endforeach()
