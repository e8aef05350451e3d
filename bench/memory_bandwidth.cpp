// bench_memory_bandwidth: the memory bandwidth this machine reaches, STREAM's way: copy
// (c = a) and triad (a = b + s * c) over arrays far larger than the caches, on T threads at
// once (each its own arrays, as ranks are), best of 10 passes after a warm one. Bytes
// counted as STREAM counts them: copy 2 x 4 B a float, triad 3 x 4 B (no write-allocate).
// The yardstick of a large all-reduce, which is a few passes over memory (bench/run-limits).
// Usage: bench_memory_bandwidth [--threads T] [--mib M (per array, 64)] [--json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_args.h"

namespace ranklab {
namespace {

struct Rates {
  double copy_gbs = 0, triad_gbs = 0;
};

// Every thread runs the same pass over its own arrays; a pass's time is the slowest one's.
template <class Pass>
double bestGbs(int threads, double bytes_per_thread, Pass pass) {
  double best = 0;
  for (int round = 0; round < 11; ++round) {
    std::vector<std::thread> team;
    const auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) team.emplace_back(pass, t);
    for (auto& member : team) member.join();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (round > 0) best = std::max(best, threads * bytes_per_thread / s / 1e9);
  }
  return best;
}

Rates measure(int threads, size_t floats) {
  std::vector<std::vector<float>> a(threads, std::vector<float>(floats, 1.f)),
      b(threads, std::vector<float>(floats, 2.f)), c(threads, std::vector<float>(floats, 0.f));
  Rates r;
  r.copy_gbs = bestGbs(threads, 8.0 * floats,
                       [&](int t) { std::copy(a[t].begin(), a[t].end(), c[t].begin()); });
  r.triad_gbs = bestGbs(threads, 12.0 * floats, [&](int t) {
    float* x = a[t].data();
    const float *y = b[t].data(), *z = c[t].data();
    for (size_t i = 0; i < floats; ++i) x[i] = y[i] + 3.f * z[i];
  });
  return r;
}

int run(int argc, char** argv) {
  int threads = 1, mib = 64;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if ((flag == "--threads" || flag == "--mib") && i + 1 < argc) {
      (flag == "--threads" ? threads : mib) =
          bench::integerOption("bench_memory_bandwidth", flag, argv[++i], 1);
    } else if (flag == "--json") {
      json = true;
    } else {
      std::fprintf(stderr,
                   "bench_memory_bandwidth: unknown option %s (allowed: --threads T, --mib M, "
                   "--json)\n",
                   flag.c_str());
      return 2;
    }
  }
  const Rates r = measure(threads, static_cast<size_t>(mib) << 18);
  if (json) {
    std::printf("{\"threads\":%d,\"mib\":%d,\"copy_gbs\":%.3f,\"triad_gbs\":%.3f}\n", threads, mib,
                r.copy_gbs, r.triad_gbs);
  } else {
    std::printf("memory, %d thread(s), %d MiB arrays each: copy %.1f GB/s, triad %.1f GB/s\n",
                threads, mib, r.copy_gbs, r.triad_gbs);
  }
  return 0;
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  return ranklab::bench::runReportingErrors("bench_memory_bandwidth", ranklab::run, argc, argv);
}
