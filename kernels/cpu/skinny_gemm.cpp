#include "kernels/cpu/skinny_gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/vectorize.h"

// The 64-byte vector helpers below are always inlined into the per-ISA clones, so the
// calling convention GCC warns about for them (-Wpsabi) is never used.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ranklab::kernels::skinny {

namespace {

// 16 floats: one AVX-512 register, or two AVX2 ones in the AVX2 build of these functions.
constexpr int kLanes = 16;
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));

[[gnu::always_inline]] inline Lanes load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

int paddedWidth(int n) {
  return (n + kLanes - 1) / kLanes * kLanes;
}

// c[0..n) = alpha * acc + beta * c, not reading c when beta is 0 (it may be uninitialised).
[[gnu::always_inline]] inline void store(float* c, const float* acc, int n, float alpha,
                                         float beta) {
  if (beta == 0.f) {
    for (int j = 0; j < n; ++j) c[j] = alpha * acc[j];
  } else {
    for (int j = 0; j < n; ++j) c[j] = alpha * acc[j] + beta * c[j];
  }
}

// The first min(remaining, 16) values of c = alpha * acc + beta * c.
[[gnu::always_inline]] inline void storeRow(float* c, Lanes acc, int remaining, float alpha,
                                            float beta) {
  if (remaining >= kLanes && beta == 0.f) {  // the common case: one vector store
    const Lanes scaled = alpha * acc;
    std::memcpy(c, &scaled, sizeof(Lanes));
    return;
  }
  alignas(64) float sums[kLanes];
  std::memcpy(sums, &acc, sizeof(Lanes));
  store(c, sums, std::min(kLanes, remaining), alpha, beta);
}

// The column offset of A's column `col` within a row (segments of `run` floats, `stride`
// apart).
[[gnu::always_inline]] inline long columnOffset(const ARows& a, int col) {
  return a.segments == 1 ? col : (col / a.run) * a.stride + col % a.run;
}

// C rows i0 .. i0+kRows-1 = A's rows times B^T, kBlocks * 16 columns wide: the
// accumulators stay in registers for the whole K loop; each B^T vector is loaded once per
// kRows rows and each A value is broadcast straight from memory into its FMA.
template <int kBlocks, int kRows>
[[gnu::always_inline]] inline void tileNT(const ARows& a, int i0, const float* bt, long width,
                                          float alpha, float beta, float* c, int ldc, int n) {
  const float* rows[kRows];
#pragma GCC unroll 12
  for (int r = 0; r < kRows; ++r) rows[r] = a.rows[i0 + r];
  Lanes acc[kRows][kBlocks] = {};
  const float* bk = bt;
  for (int s = 0; s < a.segments; ++s) {
    const long base = s * a.stride;
    for (int j = 0; j < a.run; ++j, bk += width) {
      Lanes columns[kBlocks];
#pragma GCC unroll 4
      for (int q = 0; q < kBlocks; ++q) columns[q] = load(bk + q * kLanes);
#pragma GCC unroll 12
      for (int r = 0; r < kRows; ++r) {
        const float value = rows[r][base + j];
#pragma GCC unroll 4
        for (int q = 0; q < kBlocks; ++q) acc[r][q] += value * columns[q];
      }
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int q = 0; q < kBlocks; ++q) {
      storeRow(c + static_cast<long>(i0 + r) * ldc + q * kLanes, acc[r][q], n - q * kLanes, alpha,
               beta);
    }
  }
}

// A column panel of C (kBlocks * 16 wide, n of them valid) in row tiles of kRows, then
// the leftover rows one at a time; bt holds the panel's B rows, `width` floats apart.
template <int kBlocks, int kRows>
[[gnu::always_inline]] inline void rowsNT(int m, int n, float alpha, const ARows& a,
                                          const float* bt, long width, float beta, float* c,
                                          int ldc) {
  int i = 0;
  for (; i + kRows <= m; i += kRows)
    tileNT<kBlocks, kRows>(a, i, bt, width, alpha, beta, c, ldc, n);
  for (; i < m; ++i) tileNT<kBlocks, 1>(a, i, bt, width, alpha, beta, c, ldc, n);
}

// One panel of at most 64 columns of C, with row tiles sized so that the accumulators and
// the B vectors fit the 32 AVX-512 registers.
constexpr int kPanel = 4 * kLanes;
[[gnu::always_inline]] inline void panel(int m, int n, float alpha, const ARows& a, const float* bt,
                                         long width, float beta, float* c, int ldc) {
  switch (paddedWidth(n) / kLanes) {
    case 1:
      return rowsNT<1, 12>(m, n, alpha, a, bt, width, beta, c, ldc);
    case 2:
      return rowsNT<2, 8>(m, n, alpha, a, bt, width, beta, c, ldc);
    case 3:
      return rowsNT<3, 8>(m, n, alpha, a, bt, width, beta, c, ldc);
    default:
      return rowsNT<4, 6>(m, n, alpha, a, bt, width, beta, c, ldc);
  }
}

// Rows i0 .. i0+rows-1 of C = A^T B, i.e. columns i0.. of A against all of B, summed over
// A's k rows: the accumulators stay in registers; each B row's vectors are loaded once per
// tile and A's values are broadcast into the FMAs. B rows from direct_rows on come from
// `tail` (zero-padded copies), so that no load runs past B's end.
template <int kBlocks, int kRows>
[[gnu::always_inline]] inline void tileTN(const ARows& a, int i0, int rows, int k, const float* b,
                                          int ldb, int direct_rows, const float* tail, float alpha,
                                          float beta, float* c, int ldc, int n) {
  long offsets[kRows];  // rows past the end repeat the last one; their sums are never stored
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) offsets[i] = columnOffset(a, i0 + std::min(i, rows - 1));
  Lanes acc[kRows][kBlocks] = {};
  for (int r = 0; r < k; ++r) {
    const float* row_b = r < direct_rows
                             ? b + static_cast<long>(r) * ldb
                             : tail + static_cast<long>(r - direct_rows) * (kBlocks * kLanes);
    Lanes values[kBlocks];
#pragma GCC unroll 4
    for (int q = 0; q < kBlocks; ++q) values[q] = load(row_b + q * kLanes);
    const float* row_a = a.rows[r];
#pragma GCC unroll 12
    for (int i = 0; i < kRows; ++i) {
      const float value = row_a[offsets[i]];
#pragma GCC unroll 4
      for (int q = 0; q < kBlocks; ++q) acc[i][q] += value * values[q];
    }
  }
  for (int i = 0; i < rows; ++i) {
#pragma GCC unroll 4
    for (int q = 0; q < kBlocks; ++q) {
      storeRow(c + static_cast<long>(i0 + i) * ldc + q * kLanes, acc[i][q], n - q * kLanes, alpha,
               beta);
    }
  }
}

template <int kBlocks, int kRows>
[[gnu::always_inline]] inline void columnsTN(int m, int n, int k, float alpha, const ARows& a,
                                             const float* b, int ldb, int direct_rows,
                                             const float* tail, float beta, float* c, int ldc) {
  for (int i0 = 0; i0 < m; i0 += kRows) {
    tileTN<kBlocks, kRows>(a, i0, std::min(kRows, m - i0), k, b, ldb, direct_rows, tail, alpha,
                           beta, c, ldc, n);
  }
}

// A plain row-major matrix's rows as an ARows (pointers in a per-thread buffer).
ARows plainRows(const float* a, int lda, int rows, int columns) {
  thread_local std::vector<const float*> pointers;
  pointers.resize(rows);
  for (int i = 0; i < rows; ++i) pointers[i] = a + static_cast<long>(i) * lda;
  return {pointers.data(), 1, columns, 0};
}

}  // namespace

RANKLAB_VECTORIZED
void gemmNT(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) {
  const int width = paddedWidth(n);
  // B^T, (K, N padded with zeros): a row of it is the kBlocks vectors one A value meets.
  thread_local std::vector<float> bt;
  bt.assign(static_cast<size_t>(k) * width, 0.f);
  for (int j = 0; j < n; ++j) {
    for (int kk = 0; kk < k; ++kk)
      bt[static_cast<size_t>(kk) * width + j] = b[j * static_cast<long>(ldb) + kk];
  }
  panel(m, n, alpha, plainRows(a, lda, m, k), bt.data(), width, beta, c, ldc);
}

RANKLAB_VECTORIZED
void gemmRowsNN(const ARows& a, int m, int n, float alpha, const float* b, int ldb, float beta,
                float* c, int ldc) {
  const int k = a.segments * a.run;
  // Full-width loads of a B row read past N in the last panel; unless N fills whole
  // vectors, that panel's B columns are copied with zero padding (so nothing is read past
  // B's end).
  thread_local std::vector<float> padded;
  for (int j0 = 0; j0 < n; j0 += kPanel) {
    const int cols = std::min(kPanel, n - j0);
    const float* panel_b = b + j0;
    long stride = ldb;
    if (cols % kLanes != 0) {
      stride = paddedWidth(cols);
      padded.assign(static_cast<size_t>(k) * stride, 0.f);
      for (int kk = 0; kk < k; ++kk) {
        std::memcpy(padded.data() + kk * stride, b + static_cast<long>(kk) * ldb + j0,
                    cols * sizeof(float));
      }
      panel_b = padded.data();
    }
    panel(m, cols, alpha, a, panel_b, stride, beta, c + j0, ldc);
  }
}

void gemmNN(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) {
  gemmRowsNN(plainRows(a, lda, m, k), m, n, alpha, b, ldb, beta, c, ldc);
}

RANKLAB_VECTORIZED
void gemmRowsTN(const ARows& a, int m, int n, int k, float alpha, const float* b, int ldb,
                float beta, float* c, int ldc) {
  const int blocks = paddedWidth(n) / kLanes;
  // A full-width load of B's row r reads on past N into the rows after it; those lanes sum
  // into columns that are never stored. Rows whose load would run past B's end are read
  // from a zero-padded copy instead.
  const long b_end = static_cast<long>(k - 1) * ldb + n;
  const long width = blocks * kLanes;
  // Row r's load ends at r * ldb + width: rows up to (b_end - width) / ldb stay inside B.
  const int direct_rows =
      b_end < width ? 0 : static_cast<int>(std::min<long>((b_end - width) / ldb + 1, k));
  thread_local std::vector<float> tail;
  tail.assign(static_cast<size_t>(k - direct_rows) * width, 0.f);
  for (int r = direct_rows; r < k; ++r) {
    std::memcpy(tail.data() + (r - direct_rows) * width, b + static_cast<long>(r) * ldb,
                n * sizeof(float));
  }
  switch (blocks) {
    case 1:
      return columnsTN<1, 12>(m, n, k, alpha, a, b, ldb, direct_rows, tail.data(), beta, c, ldc);
    case 2:
      return columnsTN<2, 8>(m, n, k, alpha, a, b, ldb, direct_rows, tail.data(), beta, c, ldc);
    case 3:
      return columnsTN<3, 8>(m, n, k, alpha, a, b, ldb, direct_rows, tail.data(), beta, c, ldc);
    default:
      return columnsTN<4, 6>(m, n, k, alpha, a, b, ldb, direct_rows, tail.data(), beta, c, ldc);
  }
}

void gemmTN(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) {
  gemmRowsTN(plainRows(a, lda, k, m), m, n, k, alpha, b, ldb, beta, c, ldc);
}

}  // namespace ranklab::kernels::skinny
