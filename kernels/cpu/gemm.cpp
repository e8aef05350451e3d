#include "kernels/cpu/gemm.h"

#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/skinny_gemm.h"

#ifdef RANKLAB_HAVE_DNNL
#include <dnnl.h>
#include <omp.h>
#endif

namespace ranklab::kernels {

namespace {

CBLAS_TRANSPOSE toCblas(Trans t) {
  return t == Trans::kYes ? CblasTrans : CblasNoTrans;
}

#ifdef RANKLAB_HAVE_DNNL
bool openBlasForced() {
  const char* env = std::getenv("RANKLAB_SGEMM");
  return env && std::strcmp(env, "openblas") == 0;
}

// oneDNN's SGEMM on the calling thread's OpenMP team; row-major like ours.
void onednnSgemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
                 int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  useOnednnTeam();
  dnnl_sgemm(trans_a == Trans::kYes ? 'T' : 'N', trans_b == Trans::kYes ? 'T' : 'N', m, n, k, alpha,
             a, lda, b, ldb, beta, c, ldc);
}
#endif

// Whether GEMMs beyond the skinny shapes go to oneDNN.
bool onednnChosen() {
#ifdef RANKLAB_HAVE_DNNL
  static const bool use = !openBlasForced();
  return use;
#else
  return false;
#endif
}

// The narrow and short shapes the skinny kernels compute (one BLAS thread only).
bool skinnyTakes(Trans trans_a, Trans trans_b, int n, int k) {
  if (trans_a == Trans::kNo && trans_b == Trans::kYes) return skinny::fitsNT(n, k);
  if (trans_a == Trans::kNo && trans_b == Trans::kNo) return skinny::fitsNN(n, k);
  if (trans_a == Trans::kYes && trans_b == Trans::kNo) return skinny::fitsTN(n);
  return false;
}

#ifdef RANKLAB_HAVE_DNNL
// Caps oneDNN's JIT kernels at the kernels' instruction set, so RANKLAB_CPU_ISA=avx2 runs
// what an AVX2 CPU runs; before oneDNN's first kernel is built, which is the only time it can.
void capOnednnIsa() {
  static const bool capped = [] {
    switch (activeIsa()) {
      case Isa::kAvx512:
        return true;
      case Isa::kAvx2:
        return dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx2) == dnnl_success;
      case Isa::kDefault:
        break;
    }
    return dnnl_set_max_cpu_isa(dnnl_cpu_isa_sse41) == dnnl_success;
  }();
  (void)capped;
}
#endif

}  // namespace

#ifdef RANKLAB_HAVE_DNNL
void useOnednnTeam() {
  capOnednnIsa();
  if (const int threads = blasThreads(); omp_get_max_threads() != threads) {
    omp_set_num_threads(threads);
  }
}
#endif

const char* gemmKernelName(GemmKernel kernel) {
  switch (kernel) {
    case GemmKernel::kSkinny:
      return "skinny";
    case GemmKernel::kOnednn:
      return "oneDNN";
    case GemmKernel::kOpenBlas:
      break;
  }
  return "OpenBLAS";
}

GemmKernel chooseSgemmKernel(Trans trans_a, Trans trans_b, int m, int n, int k, int threads,
                             bool onednn) {
  // Narrow or short shapes on one thread: OpenBLAS and oneDNN would spend much of their
  // time packing, and the skinny kernels keep a tile of C in registers over all of K. They
  // run on the calling thread, so with more BLAS threads the libraries keep them.
  if (m > 0 && k > 0 && threads == 1 && skinnyTakes(trans_a, trans_b, n, k)) {
    return GemmKernel::kSkinny;
  }
  // One thread: oneDNN's SGEMM measured 5-20 % faster than OpenBLAS's on every shape tried,
  // the MLP's and large squares alike (bench/LOG.md). More threads: every product on
  // oneDNN's one OpenMP team, because OpenBLAS's threads and OpenMP's spinning ones fight
  // for the cores when a step uses both (bf16 AMP with an fp32 head ran at 1.0x fp32 on 2
  // threads instead of 1.8x).
  return onednn && k > 0 ? GemmKernel::kOnednn : GemmKernel::kOpenBlas;
}

GemmKernel sgemmKernel(Trans trans_a, Trans trans_b, int m, int n, int k) {
  return chooseSgemmKernel(trans_a, trans_b, m, n, k, blasThreads(), onednnChosen());
}

bool sgemmRunsInOnednn(Trans trans_a, Trans trans_b, int m, int n, int k) {
  return sgemmKernel(trans_a, trans_b, m, n, k) == GemmKernel::kOnednn;
}

bool sgemmKernelApplies(GemmKernel kernel, Trans trans_a, Trans trans_b, int n, int k) {
  switch (kernel) {
    case GemmKernel::kSkinny:
      return k > 0 && skinnyTakes(trans_a, trans_b, n, k);
    case GemmKernel::kOnednn:
#ifdef RANKLAB_HAVE_DNNL
      return k > 0;
#else
      return false;
#endif
    case GemmKernel::kOpenBlas:
      break;
  }
  return true;
}

void sgemmWith(GemmKernel kernel, Trans trans_a, Trans trans_b, int m, int n, int k, float alpha,
               const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  if (!sgemmKernelApplies(kernel, trans_a, trans_b, n, k)) {
    throw std::invalid_argument(std::string("sgemmWith: ") + gemmKernelName(kernel) +
                                " cannot compute this product (n " + std::to_string(n) + ", k " +
                                std::to_string(k) + ")");
  }
  if (kernel == GemmKernel::kSkinny) {
    if (trans_b == Trans::kYes) return skinny::gemmNT(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (trans_a == Trans::kNo) return skinny::gemmNN(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return skinny::gemmTN(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
#ifdef RANKLAB_HAVE_DNNL
  if (kernel == GemmKernel::kOnednn) {
    return onednnSgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
#endif
  sgemmOpenBlas(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sgemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  sgemmWith(sgemmKernel(trans_a, trans_b, m, n, k), trans_a, trans_b, m, n, k, alpha, a, lda, b,
            ldb, beta, c, ldc);
}

void sgemmOpenBlas(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
                   int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, toCblas(trans_a), toCblas(trans_b), m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

const char* sgemmLibrary() {
  return onednnChosen() ? "oneDNN" : "OpenBLAS";
}

void setBlasThreads(int threads) {
  openblas_set_num_threads(threads);
}

int blasThreads() {
  return openblas_get_num_threads();
}

}  // namespace ranklab::kernels
