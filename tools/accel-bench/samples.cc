// Samples (bench.h): quantiles of a benchmark's timings, shared by accel-bench and bench/latency_rounds.
#include <algorithm>
#include <vector>

#include "bench.h"

namespace accel::bench {

double Samples::Quantile(double q) const {
  if (seconds.empty()) return 0;
  std::vector<double> s = seconds;
  std::sort(s.begin(), s.end());
  const double pos = q * static_cast<double>(s.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (s[hi] - s[lo]) * (pos - static_cast<double>(lo));
}

double Samples::Median() const { return Quantile(0.5); }

}  // namespace accel::bench
