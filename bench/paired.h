// Side-by-side timing shared by the benches (accel-runtime-bench,
// accel-object-store-bench): each contender runs `repeat` times, in an order a
// seeded coin decides per repeat, and each gets the median of its figures.
// Header-only; not thread-safe (one bench thread drives it).
#ifndef ACCEL_BENCH_PAIRED_H_
#define ACCEL_BENCH_PAIRED_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

namespace accel_bench {

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The medians of `accel` and `baseline` (each returns one figure) over `repeat` runs; stops early once `failed`.
inline std::pair<double, double> Paired(uint32_t repeat, std::mt19937_64& rng, const std::function<bool()>& failed,
                                        const std::function<double()>& accel, const std::function<double()>& baseline) {
  std::vector<double> a, b;
  for (uint32_t r = 0; r < repeat && !failed(); ++r) {
    if (std::bernoulli_distribution(0.5)(rng)) {
      a.push_back(accel());
      b.push_back(baseline());
    } else {
      b.push_back(baseline());
      a.push_back(accel());
    }
  }
  return {Median(a), Median(b)};
}

}  // namespace accel_bench

#endif  // ACCEL_BENCH_PAIRED_H_
