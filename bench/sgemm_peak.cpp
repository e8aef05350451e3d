// bench_sgemm_peak: the SGEMM rate this machine reaches, the yardstick for the training
// benchmarks' GFLOP/s. Square row-major C = A.B at n = 512, 1024 and 1536, each timed over
// repeated calls after a warm-up, through both libraries ranklab has: its kernels::sgemm
// (oneDNN with one thread, else OpenBLAS) and OpenBLAS directly. The best rate is the peak,
// so a faster library in the training runs raises the yardstick with it.
// Usage: bench_sgemm_peak [--threads T] [--json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {
namespace {

using kernels::Trans;

using SgemmFn = void (*)(Trans, Trans, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);

// GFLOP/s of the best of 5 timed batches of calls at size n.
double sgemmRate(SgemmFn sgemm, int n) {
  std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
  auto call = [&] {
    sgemm(Trans::kNo, Trans::kNo, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
  };
  const double flops = 2.0 * n * n * n;
  const int calls = std::max(2, static_cast<int>(4e9 / flops));  // about 30 ms per batch
  for (int i = 0; i < calls; ++i) call();
  double best = 0;
  for (int repeat = 0; repeat < 5; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, calls * flops / s / 1e9);
  }
  return best;
}

int run(int argc, char** argv) {
  int threads = 1;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--json") {
      json = true;
    } else if (flag == "--threads" && i + 1 < argc) {
      threads = bench::integerOption("bench_sgemm_peak", flag, argv[++i], 1);
    } else {
      std::fprintf(stderr, "bench_sgemm_peak: unknown option %s (allowed: --threads T, --json)\n",
                   flag.c_str());
      return 2;
    }
  }
  kernels::setBlasThreads(threads);
  struct Library {
    const char* name;
    SgemmFn sgemm;
    double peak = 0;
    int best_n = 0;
  };
  Library libraries[] = {{kernels::sgemmLibrary(), kernels::sgemm},
                         {"OpenBLAS", kernels::sgemmOpenBlas}};
  const Library* best = &libraries[0];
  for (Library& library : libraries) {
    for (int n : {512, 1024, 1536}) {
      const double rate = sgemmRate(library.sgemm, n);
      if (rate > library.peak) {
        library.peak = rate;
        library.best_n = n;
      }
    }
    if (library.peak > best->peak) best = &library;
  }
  const Library& ours = libraries[0];
  const Library& openblas = libraries[1];
  if (json) {
    std::printf(
        "{\"threads\":%d,\"gflops\":%.2f,\"n\":%d,\"library\":\"%s\",\"ranklab_sgemm\":\"%s\","
        "\"ranklab_gflops\":%.2f,\"openblas_gflops\":%.2f}\n",
        threads, best->peak, best->best_n, best->name, ours.name, ours.peak, openblas.peak);
  } else {
    std::printf(
        "SGEMM peak, %d thread(s): %.1f GFLOP/s (%s, n = %d); ranklab's sgemm (%s) %.1f, "
        "OpenBLAS %.1f\n",
        threads, best->peak, best->name, best->best_n, ours.name, ours.peak, openblas.peak);
  }
  return 0;
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  try {
    return ranklab::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
