/* A shared object that is not a backend: it exports no accel_backend_get_api. */
__attribute__((visibility("default"))) int accel_tests_not_a_backend(void) { return 42; }
