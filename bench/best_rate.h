// The rate the GEMM benches report: GFLOP/s of the best of 5 timed batches of calls, after
// one untimed batch that warms the operands and the kernels.
#pragma once

#include <algorithm>
#include <chrono>

namespace ranklab::bench {

template <class Call>
double bestGflops(Call call, double flops_per_call, int calls_per_batch) {
  for (int i = 0; i < calls_per_batch; ++i) call();
  double best = 0;
  for (int repeat = 0; repeat < 5; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls_per_batch; ++i) call();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, calls_per_batch * flops_per_call / s / 1e9);
  }
  return best;
}

}  // namespace ranklab::bench
