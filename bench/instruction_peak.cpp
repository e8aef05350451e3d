// bench_instruction_peak: what one core's multiply-add units allow, the ceiling under every
// GEMM: fp32 FMAs (AVX-512 where the CPU has it, else AVX2) and bf16 dot products (AVX-512
// BF16's vdpbf16ps, 32 products summed into 16 floats an instruction), each timed on
// independent accumulators in registers, no memory touched; best of 5 rounds. A GEMM's
// GFLOP/s over these says how much of the core it uses (bench/run-limits).
// Usage: bench_instruction_peak [--json]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "bench/bench_args.h"

namespace ranklab {
namespace {

constexpr int kRounds = 5, kChains = 10;  // ten chains keep every unit busy through a latency
constexpr long kIterations = 20'000'000;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

volatile float sink;  // each loop's sum lands here, so no loop is elided

template <class Measure>
double bestGflops(Measure seconds, double flops_per_instruction) {
  double best = 0;
  for (int round = 0; round < kRounds; ++round)
    best = std::max(best, kChains * kIterations * flops_per_instruction / seconds() / 1e9);
  return best;
}

// The loops are written out per instruction set: an intrinsic inlines only into a function
// compiled for its instructions, and the rest of the program must run on any x86-64.
__attribute__((target("avx512f"))) double fmaAvx512Seconds() {
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1.001f);
  __m512 acc[kChains];
  for (__m512& a : acc) a = _mm512_setzero_ps();
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < kIterations; ++i) {
#pragma GCC unroll 10
    for (__m512& a : acc) a = _mm512_fmadd_ps(x, y, a);
  }
  const double s = secondsSince(start);
  for (const __m512& a : acc) sink = sink + _mm512_cvtss_f32(a);
  return s;
}

__attribute__((target("avx2,fma"))) double fmaAvx2Seconds() {
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1.001f);
  __m256 acc[kChains];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < kIterations; ++i) {
#pragma GCC unroll 10
    for (__m256& a : acc) a = _mm256_fmadd_ps(x, y, a);
  }
  const double s = secondsSince(start);
  for (const __m256& a : acc) sink = sink + _mm256_cvtss_f32(a);
  return s;
}

__attribute__((target("avx512f,avx512bf16"))) double dotBf16Seconds() {
  const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80);  // 1.0 in bf16
  __m512 acc[kChains];
  for (__m512& a : acc) a = _mm512_setzero_ps();
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < kIterations; ++i) {
#pragma GCC unroll 10
    for (__m512& a : acc) a = _mm512_dpbf16_ps(a, x, x);
  }
  const double s = secondsSince(start);
  for (const __m512& a : acc) sink = sink + _mm512_cvtss_f32(a);
  return s;
}

int run(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "--json") {
      std::fprintf(stderr, "bench_instruction_peak: unknown option %s (allowed: --json)\n",
                   argv[i]);
      return 2;
    }
    json = true;
  }
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const double fma = avx512 ? bestGflops(fmaAvx512Seconds, 32) : bestGflops(fmaAvx2Seconds, 16);
  const double bf16 =
      avx512 && __builtin_cpu_supports("avx512bf16") ? bestGflops(dotBf16Seconds, 64) : 0;
  const char* fma_isa = avx512 ? "avx512f" : "avx2";
  if (json) {
    std::printf("{\"fma_isa\":\"%s\",\"fma_gflops\":%.2f,\"bf16_dot_gflops\":%.2f}\n", fma_isa, fma,
                bf16);
  } else if (bf16 > 0) {
    std::printf("one core: fp32 FMA (%s) %.1f GFLOP/s, bf16 dot %.1f GFLOP/s\n", fma_isa, fma,
                bf16);
  } else {
    std::printf("one core: fp32 FMA (%s) %.1f GFLOP/s, bf16 dot - (no AVX-512 BF16)\n", fma_isa,
                fma);
  }
  return 0;
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  return ranklab::bench::runReportingErrors("bench_instruction_peak", ranklab::run, argc, argv);
}
