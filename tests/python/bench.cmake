# python.bench: runs `python -m accel.bench` (python/accel/bench.py, the DLPack round-trip bench) briefly and
# checks its JSON report with check_bench.py: every size zero-copy, positive times for both paths. No
# thresholds on the times; the checker's exit status is the result.
#
# tests/python/CMakeLists.txt includes this file after it sets ACCEL_PYTHON_TEST_INTERPRETER and
# ACCEL_PYTHON_TEST_ENVIRONMENT (PYTHONPATH, ASan's LD_PRELOAD in sanitized builds, ...).
if(NOT DEFINED ACCEL_PYTHON_TEST_INTERPRETER OR NOT DEFINED ACCEL_PYTHON_TEST_ENVIRONMENT)
  message(STATUS "Python bench: python.bench not registered (ACCEL_PYTHON_TEST_INTERPRETER and "
                 "ACCEL_PYTHON_TEST_ENVIRONMENT are not set; include this file from tests/python/CMakeLists.txt)")
  return()
endif()

add_test(NAME python.bench
  COMMAND ${ACCEL_PYTHON_TEST_INTERPRETER} ${CMAKE_CURRENT_LIST_DIR}/check_bench.py
          --iterations 20 --repeat 3 --json)
set_tests_properties(python.bench PROPERTIES
  ENVIRONMENT "${ACCEL_PYTHON_TEST_ENVIRONMENT};ACCEL_BACKENDS=host" TIMEOUT 120)
