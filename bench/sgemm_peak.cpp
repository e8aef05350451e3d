// bench_sgemm_peak: the SGEMM rate this machine reaches, the yardstick for the training
// benchmarks' GFLOP/s. Square row-major C = A.B at n = 512, 1024 and 1536, each timed over
// repeated calls after a warm-up, through both libraries ranklab has: its kernels::sgemm
// (oneDNN with one thread, else OpenBLAS) and OpenBLAS directly. The best rate is the peak,
// so a faster library in the training runs raises the yardstick with it.
// --mlp-gemms also times the MLP benchmark's five large GEMMs (batch 256) back to back on
// warm operands: the best a training step built on them could reach.
// Usage: bench_sgemm_peak [--threads T] [--json] [--mlp-gemms]
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "bench/best_rate.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {
namespace {

using kernels::Trans;

using SgemmFn = void (*)(Trans, Trans, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);

struct Product {
  Trans ta, tb;
  int m, n, k;
};

// The MLP benchmark's (784-256-128-10, batch 256) GEMMs beyond the skinny kernels' shapes,
// in step order: forward fc0 and fc1, fc1's weight and input gradients, fc0's weight gradient.
const std::vector<Product> kMlpProducts = {{Trans::kNo, Trans::kYes, 256, 256, 784},
                                           {Trans::kNo, Trans::kYes, 256, 128, 256},
                                           {Trans::kYes, Trans::kNo, 128, 256, 256},
                                           {Trans::kNo, Trans::kNo, 256, 256, 128},
                                           {Trans::kYes, Trans::kNo, 256, 784, 256}};

// GFLOP/s of the best of 5 timed batches of calls of `products` in turn, operands warm.
double sgemmRate(SgemmFn sgemm, const std::vector<Product>& products) {
  size_t floats = 0;
  double flops = 0;
  for (const Product& p : products) {
    floats = std::max({floats, static_cast<size_t>(p.m) * p.k, static_cast<size_t>(p.k) * p.n,
                       static_cast<size_t>(p.m) * p.n});
    flops += 2.0 * p.m * p.n * p.k;
  }
  std::vector<float> a(floats, 0.5f), b(floats, 0.25f), c(floats);
  auto call = [&] {
    for (const Product& p : products) {
      sgemm(p.ta, p.tb, p.m, p.n, p.k, 1.f, a.data(), p.ta == Trans::kNo ? p.k : p.m, b.data(),
            p.tb == Trans::kNo ? p.n : p.k, 0.f, c.data(), p.n);
    }
  };
  // About 30 ms per batch.
  return bench::bestGflops(call, flops, std::max(2, static_cast<int>(4e9 / flops)));
}

int run(int argc, char** argv) {
  int threads = 1;
  bool json = false;
  bool mlp_gemms = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--json") {
      json = true;
    } else if (flag == "--mlp-gemms") {
      mlp_gemms = true;
    } else if (flag == "--threads" && i + 1 < argc) {
      threads = bench::integerOption("bench_sgemm_peak", flag, argv[++i], 1);
    } else {
      std::fprintf(
          stderr,
          "bench_sgemm_peak: unknown option %s (allowed: --threads T, --json, --mlp-gemms)\n",
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
    double mlp = 0;  // the MLP's GEMMs back to back (--mlp-gemms)
  };
  Library libraries[] = {{kernels::sgemmLibrary(), kernels::sgemm},
                         {"OpenBLAS", kernels::sgemmOpenBlas}};
  const Library* best = &libraries[0];
  for (Library& library : libraries) {
    for (int n : {512, 1024, 1536}) {
      const double rate = sgemmRate(library.sgemm, {{Trans::kNo, Trans::kNo, n, n, n}});
      if (rate > library.peak) {
        library.peak = rate;
        library.best_n = n;
      }
    }
    if (library.peak > best->peak) best = &library;
    if (mlp_gemms) library.mlp = sgemmRate(library.sgemm, kMlpProducts);
  }
  const Library& ours = libraries[0];
  const Library& openblas = libraries[1];
  if (json) {
    std::printf(
        "{\"threads\":%d,\"gflops\":%.2f,\"n\":%d,\"library\":\"%s\",\"ranklab_sgemm\":\"%s\","
        "\"ranklab_gflops\":%.2f,\"openblas_gflops\":%.2f",
        threads, best->peak, best->best_n, best->name, ours.name, ours.peak, openblas.peak);
    if (mlp_gemms) {
      std::printf(",\"ranklab_mlp_gflops\":%.2f,\"openblas_mlp_gflops\":%.2f", ours.mlp,
                  openblas.mlp);
    }
    std::printf("}\n");
    return 0;
  }
  std::printf(
      "SGEMM peak, %d thread(s): %.1f GFLOP/s (%s, n = %d); ranklab's sgemm (%s) %.1f, "
      "OpenBLAS %.1f\n",
      threads, best->peak, best->name, best->best_n, ours.name, ours.peak, openblas.peak);
  if (mlp_gemms) {
    std::printf(
        "MLP batch-256 GEMMs back to back, warm: ranklab's sgemm %.1f GFLOP/s (%.0f%% of the "
        "peak), OpenBLAS %.1f (%.0f%%)\n",
        ours.mlp, 100 * ours.mlp / best->peak, openblas.mlp, 100 * openblas.mlp / best->peak);
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
