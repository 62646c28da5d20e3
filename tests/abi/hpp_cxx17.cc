// Compiles accel.hpp as strict C++17 (-std=c++17 -pedantic -Werror) and
// runs its library-free checks (hpp_compile.h). Links nothing.
#include "hpp_compile.h"

static_assert(__cplusplus == 201703L, "hpp_cxx17.cc must be compiled as C++17");

int main() {
  const int failures = hpp_compile::run_checks();
  std::printf("accel.hpp, C++17: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
