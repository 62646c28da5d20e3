// Compiles runtime.hpp as strict C++17 (-std=c++17 -pedantic -Werror) and
// runs its library-free checks (runtime_hpp_compile.h). Links nothing.
#include "runtime_hpp_compile.h"

static_assert(__cplusplus == 201703L, "runtime_hpp_cxx17.cc must be compiled as C++17");

int main() {
  const int failures = runtime_hpp_compile::run_checks();
  std::printf("runtime.hpp, C++17: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
