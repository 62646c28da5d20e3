# Where lavapipe's driver manifest is (Debian: mesa-vulkan-drivers) and the environment every test of the Vulkan
# backend runs with: that driver only (VK_DRIVER_FILES), and LSan's suppressions for Mesa, LLVM and the Vulkan
# loader (lsan.supp; never Accel's own code). Included by tests/conformance/vulkan.cmake and tests/vulkan.
if(DEFINED ACCEL_VULKAN_TEST_ENVIRONMENT)
  return()
endif()
if(NOT ACCEL_LAVAPIPE_ICD OR NOT EXISTS "${ACCEL_LAVAPIPE_ICD}")
  file(GLOB _accel_lavapipe_icds /usr/share/vulkan/icd.d/lvp_icd.${CMAKE_SYSTEM_PROCESSOR}.json
    /usr/share/vulkan/icd.d/lvp_icd*.json)
  if(_accel_lavapipe_icds)
    list(GET _accel_lavapipe_icds 0 _accel_lavapipe_icd)
    set(ACCEL_LAVAPIPE_ICD "${_accel_lavapipe_icd}" CACHE FILEPATH
      "lavapipe's Vulkan driver manifest (Debian: mesa-vulkan-drivers), for the Vulkan backend's tests" FORCE)
  endif()
endif()
if(ACCEL_LAVAPIPE_ICD AND EXISTS "${ACCEL_LAVAPIPE_ICD}")
  set(ACCEL_VULKAN_TEST_ENVIRONMENT
    "VK_DRIVER_FILES=${ACCEL_LAVAPIPE_ICD}"
    "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/vulkan/lsan.supp:print_suppressions=0")
else()
  message(STATUS "Vulkan backend: no lavapipe driver manifest under /usr/share/vulkan/icd.d "
    "(mesa-vulkan-drivers): its device tests and certification are not added")
  set(ACCEL_VULKAN_TEST_ENVIRONMENT "")
endif()
