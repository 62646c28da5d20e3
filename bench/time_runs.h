/* Timing shared by bench/launch_cost.c and bench/opencl_back_to_back.c: the monotonic clock in microseconds, and
 * time_runs, which times 5 runs of an operation and prints nanoseconds per operation for each, their median last. */
#ifndef ACCEL_BENCH_TIME_RUNS_H_
#define ACCEL_BENCH_TIME_RUNS_H_

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static inline int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Prints the median of 5 timed runs of `run` (nanoseconds per operation); 0, or 1 when a run fails (non-zero). */
static inline int time_runs(const char* what, int count, int (*run)(void* context, int count), void* context) {
  double per_op[5];
  for (int r = 0; r < 5; ++r) {
    const double start = now_us();
    if (run(context, count) != 0) return 1;
    per_op[r] = (now_us() - start) * 1000.0 / count;
    printf("%s: %.1f ns\n", what, per_op[r]);
  }
  qsort(per_op, 5, sizeof(double), compare_doubles);
  printf("median: %.1f ns per %s\n", per_op[2], what);
  return 0;
}

#endif /* ACCEL_BENCH_TIME_RUNS_H_ */
