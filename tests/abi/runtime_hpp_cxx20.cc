// Compiles runtime.hpp as strict C++20 (-std=c++20 -pedantic -Werror) and
// runs its library-free checks (runtime_hpp_compile.h). Links nothing.
#include "runtime_hpp_compile.h"

static_assert(__cplusplus == 202002L, "runtime_hpp_cxx20.cc must be compiled as C++20");

int main() {
  const int failures = runtime_hpp_compile::run_checks();
  std::printf("runtime.hpp, C++20: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
