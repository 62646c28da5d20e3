// Compiles accel.hpp as strict C++20 (-std=c++20 -pedantic -Werror) and
// runs its library-free checks (hpp_compile.h). Links nothing.
#include "hpp_compile.h"

static_assert(__cplusplus == 202002L, "hpp_cxx20.cc must be compiled as C++20");

int main() {
  const int failures = hpp_compile::run_checks();
  std::printf("accel.hpp, C++20: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
