// GEMMs with a narrow output or a short inner dimension (a convolution: N = Cout <= 64, or
// K = Cout for its input gradient), where OpenBLAS spends much of its time packing its
// operands. Register-tiled: a tile of C stays in registers for the whole K loop, B vectors
// are loaded once per tile row group, A values are broadcast into the FMAs. Internal to
// kernels/: sgemm() routes the shapes it accepts here. Row-major, as sgemm().
#pragma once

namespace ranklab::kernels::skinny {

inline constexpr int kMaxOuter = 64;  // the widest C these kernels keep in registers

inline bool fitsNT(int n, int k) {
  return n <= kMaxOuter && k <= 2048;
}
// Narrow outputs (a convolution's channels) or a short inner dimension (its input gradient).
inline bool fitsNN(int n, int k) {
  return n <= kMaxOuter || k <= kMaxOuter;
}
// A weight gradient computed as (K, Cout) = columns^T . dy.
inline bool fitsTN(int n) {
  return n <= kMaxOuter;
}

// Where the rows of a matrix A are: row i starts at rows[i], and its columns come in
// `segments` runs of `run` floats, `stride` floats apart. A plain row-major matrix is one
// run per row; the im2col matrix of a padded image is k runs (one per kernel row) read in
// place from the image, so it never has to be formed.
struct ARows {
  const float* const* rows = nullptr;
  int segments = 1;
  int run = 0;
  long stride = 0;
};

// C (M, N) = alpha A (M, K) . B^T + beta C, B (N, K): row by row, vectorized over N.
void gemmNT(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc);
// C (M, N) = alpha A (M, K) . B (K, N) + beta C: B's rows are used in place (no packing),
// in panels of 64 columns.
void gemmNN(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc);
// The same with A given by its rows (K = segments * run).
void gemmRowsNN(const ARows& a, int m, int n, float alpha, const float* b, int ldb, float beta,
                float* c, int ldc);
// C (M, N) = alpha A^T . B + beta C, A (K, M), B (K, N): row tiles of C over all K rows.
void gemmTN(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc);
// The same with A (K, M) given by its K rows, its M columns addressed through the runs.
void gemmRowsTN(const ARows& a, int m, int n, int k, float alpha, const float* b, int ldb,
                float beta, float* c, int ldc);

}  // namespace ranklab::kernels::skinny
