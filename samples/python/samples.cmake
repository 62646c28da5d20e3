# The Python samples of this folder as ctests, python.sample.<script>: each runs on the host backend with the
# interpreter and environment of python.pytest and passes when the script exits 0.
#
# tests/python/CMakeLists.txt includes this file after it sets ACCEL_PYTHON_TEST_INTERPRETER (the python
# executable) and ACCEL_PYTHON_TEST_ENVIRONMENT (NAME=VALUE entries: PYTHONPATH to the package and this build's
# extension, ASan's LD_PRELOAD in sanitized builds, and ACCEL_TEST_CORPUS, the kernel corpus vector_add.py loads).
if(NOT DEFINED ACCEL_PYTHON_TEST_INTERPRETER OR NOT DEFINED ACCEL_PYTHON_TEST_ENVIRONMENT)
  message(STATUS "Python samples: not registered (ACCEL_PYTHON_TEST_INTERPRETER and "
                 "ACCEL_PYTHON_TEST_ENVIRONMENT are not set; include this file from tests/python/CMakeLists.txt)")
  return()
endif()

foreach(_accel_py_sample list_devices dlpack_numpy vector_add)
  add_test(NAME python.sample.${_accel_py_sample}
    COMMAND ${ACCEL_PYTHON_TEST_INTERPRETER} ${CMAKE_CURRENT_LIST_DIR}/${_accel_py_sample}.py)
  set_tests_properties(python.sample.${_accel_py_sample} PROPERTIES
    ENVIRONMENT "${ACCEL_PYTHON_TEST_ENVIRONMENT};ACCEL_BACKENDS=host" TIMEOUT 120)
endforeach()

# scheduling.py on the sim backend's eight simulated H100s (one NVLink clique).
if(TARGET accel_backend_sim)
  add_test(NAME python.sample.scheduling
    COMMAND ${ACCEL_PYTHON_TEST_INTERPRETER} ${CMAKE_CURRENT_LIST_DIR}/scheduling.py)
  set_tests_properties(python.sample.scheduling PROPERTIES
    ENVIRONMENT "${ACCEL_PYTHON_TEST_ENVIRONMENT};ACCEL_BACKENDS=sim;ACCEL_SIM_PROFILE=h100-sxm-8" TIMEOUT 120)
endif()

# vector_add.py again on PoCL, where the opencl-c source is loaded (the exit code says the result matched;
# FAIL_REGULAR_EXPRESSION catches a fallback to the native-host library).
if(TARGET accel_backend_opencl)
  add_test(NAME python.sample.vector_add.opencl
    COMMAND ${ACCEL_PYTHON_TEST_INTERPRETER} ${CMAKE_CURRENT_LIST_DIR}/vector_add.py)
  set_tests_properties(python.sample.vector_add.opencl PROPERTIES
    ENVIRONMENT "${ACCEL_PYTHON_OPENCL_TEST_ENVIRONMENT};ACCEL_BACKENDS=opencl"
    FAIL_REGULAR_EXPRESSION "module: native-host" TIMEOUT 120 LABELS opencl)
endif()
