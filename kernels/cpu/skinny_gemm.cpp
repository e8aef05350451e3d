#include "kernels/cpu/skinny_gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/vectorize.h"

// The vector helpers below are always inlined into the per-ISA builds, so the calling
// convention GCC warns about for them (-Wpsabi) is never used.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ranklab::kernels::skinny {

namespace {

// Each instruction set's vectors and how many of them a tile may keep in registers: its
// accumulators, the B vectors of one k step and the broadcast A value must fit (32 zmm
// registers; 16 ymm or xmm ones, where the baseline's lack of FMA costs one more for the
// product). Sized wrong, the accumulators spill and the AVX2 build ran at a tenth of
// PyTorch's speed on a convolution (issue 32).
template <Isa kIsa>
struct Registers;
template <>
struct Registers<Isa::kAvx512> {
  static constexpr int kLanes = 16, kMaxBlocks = 4;
  static constexpr int rows(int blocks) { return blocks == 1 ? 12 : blocks <= 3 ? 8 : 6; }
};
template <>
struct Registers<Isa::kAvx2> {
  static constexpr int kLanes = 8, kMaxBlocks = 2;
  static constexpr int rows(int blocks) { return blocks == 1 ? 12 : 6; }
};
template <>
struct Registers<Isa::kDefault> {
  static constexpr int kLanes = 4, kMaxBlocks = 2;
  static constexpr int rows(int blocks) { return blocks == 1 ? 8 : 4; }
};

template <Isa kIsa>
constexpr int kLanes = Registers<kIsa>::kLanes;
// The widest column panel a tile covers; wider outputs are computed panel by panel.
template <Isa kIsa>
constexpr int kPanel = Registers<kIsa>::kMaxBlocks* kLanes<kIsa>;

template <int kCount>
struct VectorOf {
  typedef float type __attribute__((vector_size(kCount * sizeof(float))));
};
// One register of the instruction set being compiled.
template <Isa kIsa>
using Lanes = typename VectorOf<kLanes<kIsa>>::type;

template <Isa kIsa>
[[gnu::always_inline]] inline Lanes<kIsa> load(const float* p) {
  Lanes<kIsa> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <Isa kIsa>
int paddedWidth(int n) {
  return (n + kLanes<kIsa> - 1) / kLanes<kIsa> * kLanes<kIsa>;
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

// The first min(remaining, lanes) values of c = alpha * acc + beta * c.
template <Isa kIsa>
[[gnu::always_inline]] inline void storeRow(float* c, const Lanes<kIsa>& acc, int remaining,
                                            float alpha, float beta) {
  constexpr int lanes = kLanes<kIsa>;
  if (remaining >= lanes && beta == 0.f) {  // the common case: one vector store
    const Lanes<kIsa> scaled = alpha * acc;
    std::memcpy(c, &scaled, sizeof scaled);
    return;
  }
  alignas(64) float sums[lanes];
  std::memcpy(sums, &acc, sizeof acc);
  store(c, sums, std::min(lanes, remaining), alpha, beta);
}

// The column offset of A's column `col` within a row (segments of `run` floats, `stride`
// apart).
[[gnu::always_inline]] inline long columnOffset(const ARows& a, int col) {
  return a.segments == 1 ? col : (col / a.run) * a.stride + col % a.run;
}

// C rows i0 .. i0+kRows-1 = A's rows times B^T, kBlocks vectors wide: the accumulators stay
// in registers for the whole K loop; each B^T vector is loaded once per kRows rows and each
// A value is broadcast straight from memory into its FMA.
template <Isa kIsa, int kBlocks, int kRows>
[[gnu::always_inline]] inline void tileNT(const ARows& a, int i0, const float* bt, long width,
                                          float alpha, float beta, float* c, int ldc, int n) {
  constexpr int lanes = kLanes<kIsa>;
  const float* rows[kRows];
#pragma GCC unroll 12
  for (int r = 0; r < kRows; ++r) rows[r] = a.rows[i0 + r];
  Lanes<kIsa> acc[kRows][kBlocks] = {};
  const float* bk = bt;
  for (int s = 0; s < a.segments; ++s) {
    const long base = s * a.stride;
    for (int j = 0; j < a.run; ++j, bk += width) {
      Lanes<kIsa> columns[kBlocks];
#pragma GCC unroll 4
      for (int q = 0; q < kBlocks; ++q) columns[q] = load<kIsa>(bk + q * lanes);
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
      storeRow<kIsa>(c + static_cast<long>(i0 + r) * ldc + q * lanes, acc[r][q], n - q * lanes,
                     alpha, beta);
    }
  }
}

// A column panel of C (kBlocks vectors wide, n of its columns valid) in row tiles, then the
// leftover rows one at a time; bt holds the panel's B rows, `width` floats apart.
template <Isa kIsa, int kBlocks>
[[gnu::always_inline]] inline void rowsNT(int m, int n, float alpha, const ARows& a,
                                          const float* bt, long width, float beta, float* c,
                                          int ldc) {
  constexpr int kRows = Registers<kIsa>::rows(kBlocks);
  int i = 0;
  for (; i + kRows <= m; i += kRows)
    tileNT<kIsa, kBlocks, kRows>(a, i, bt, width, alpha, beta, c, ldc, n);
  for (; i < m; ++i) tileNT<kIsa, kBlocks, 1>(a, i, bt, width, alpha, beta, c, ldc, n);
}

// One panel of at most kPanel columns of C, its tiles as wide as the panel needs.
template <Isa kIsa, int kBlocks = Registers<kIsa>::kMaxBlocks>
[[gnu::always_inline]] inline void panelNT(int m, int n, float alpha, const ARows& a,
                                           const float* bt, long width, float beta, float* c,
                                           int ldc) {
  if constexpr (kBlocks > 1) {
    if (paddedWidth<kIsa>(n) / kLanes<kIsa> < kBlocks) {
      return panelNT<kIsa, kBlocks - 1>(m, n, alpha, a, bt, width, beta, c, ldc);
    }
  }
  rowsNT<kIsa, kBlocks>(m, n, alpha, a, bt, width, beta, c, ldc);
}

// Rows i0 .. i0+rows-1 of C = A^T B, i.e. columns i0.. of A against a panel of B, summed
// over A's k rows: the accumulators stay in registers; each B row's vectors are loaded once
// per tile and A's values are broadcast into the FMAs. B rows from direct_rows on come from
// `tail` (zero-padded copies), so that no load runs past B's end.
template <Isa kIsa, int kBlocks, int kRows>
[[gnu::always_inline]] inline void tileTN(const ARows& a, int i0, int rows, int k, const float* b,
                                          int ldb, int direct_rows, const float* tail, float alpha,
                                          float beta, float* c, int ldc, int n) {
  constexpr int lanes = kLanes<kIsa>;
  long offsets[kRows];  // rows past the end repeat the last one; their sums are never stored
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) offsets[i] = columnOffset(a, i0 + std::min(i, rows - 1));
  Lanes<kIsa> acc[kRows][kBlocks] = {};
  for (int r = 0; r < k; ++r) {
    const float* row_b = r < direct_rows
                             ? b + static_cast<long>(r) * ldb
                             : tail + static_cast<long>(r - direct_rows) * (kBlocks * lanes);
    Lanes<kIsa> values[kBlocks];
#pragma GCC unroll 4
    for (int q = 0; q < kBlocks; ++q) values[q] = load<kIsa>(row_b + q * lanes);
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
      storeRow<kIsa>(c + static_cast<long>(i0 + i) * ldc + q * lanes, acc[i][q], n - q * lanes,
                     alpha, beta);
    }
  }
}

template <Isa kIsa, int kBlocks>
[[gnu::always_inline]] inline void columnsTN(int m, int n, int k, float alpha, const ARows& a,
                                             const float* b, int ldb, int direct_rows,
                                             const float* tail, float beta, float* c, int ldc) {
  constexpr int kRows = Registers<kIsa>::rows(kBlocks);
  for (int i0 = 0; i0 < m; i0 += kRows) {
    tileTN<kIsa, kBlocks, kRows>(a, i0, std::min(kRows, m - i0), k, b, ldb, direct_rows, tail,
                                 alpha, beta, c, ldc, n);
  }
}

template <Isa kIsa, int kBlocks = Registers<kIsa>::kMaxBlocks>
[[gnu::always_inline]] inline void panelTN(int blocks, int m, int n, int k, float alpha,
                                           const ARows& a, const float* b, int ldb, int direct_rows,
                                           const float* tail, float beta, float* c, int ldc) {
  if constexpr (kBlocks > 1) {
    if (blocks < kBlocks) {
      return panelTN<kIsa, kBlocks - 1>(blocks, m, n, k, alpha, a, b, ldb, direct_rows, tail, beta,
                                        c, ldc);
    }
  }
  columnsTN<kIsa, kBlocks>(m, n, k, alpha, a, b, ldb, direct_rows, tail, beta, c, ldc);
}

// A plain row-major matrix's rows as an ARows (pointers in a per-thread buffer).
ARows plainRows(const float* a, int lda, int rows, int columns) {
  thread_local std::vector<const float*> pointers;
  pointers.resize(rows);
  for (int i = 0; i < rows; ++i) pointers[i] = a + static_cast<long>(i) * lda;
  return {pointers.data(), 1, columns, 0};
}

}  // namespace

RANKLAB_VECTORIZED(void, gemmNT,
                   (int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                    int ldb, float beta, float* c, int ldc),
                   (m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) {
  const int width = paddedWidth<kIsa>(n);
  // B^T, (K, N padded with zeros): a row of it is the vectors one A value meets.
  thread_local std::vector<float> bt;
  bt.assign(static_cast<size_t>(k) * width, 0.f);
  for (int j = 0; j < n; ++j) {
    for (int kk = 0; kk < k; ++kk)
      bt[static_cast<size_t>(kk) * width + j] = b[j * static_cast<long>(ldb) + kk];
  }
  const ARows rows = plainRows(a, lda, m, k);
  for (int j0 = 0; j0 < n; j0 += kPanel<kIsa>) {
    panelNT<kIsa>(m, std::min(kPanel<kIsa>, n - j0), alpha, rows, bt.data() + j0, width, beta,
                  c + j0, ldc);
  }
}

RANKLAB_VECTORIZED(void, gemmRowsNN,
                   (const ARows& a, int m, int n, float alpha, const float* b, int ldb, float beta,
                    float* c, int ldc),
                   (a, m, n, alpha, b, ldb, beta, c, ldc)) {
  const int k = a.segments * a.run;
  // Full-width loads of a B row read past N in the last panel; unless N fills whole
  // vectors, that panel's B columns are copied with zero padding (so nothing is read past
  // B's end).
  thread_local std::vector<float> padded;
  for (int j0 = 0; j0 < n; j0 += kPanel<kIsa>) {
    const int cols = std::min(kPanel<kIsa>, n - j0);
    const float* panel_b = b + j0;
    long stride = ldb;
    if (cols % kLanes<kIsa> != 0) {
      stride = paddedWidth<kIsa>(cols);
      padded.assign(static_cast<size_t>(k) * stride, 0.f);
      for (int kk = 0; kk < k; ++kk) {
        std::memcpy(padded.data() + kk * stride, b + static_cast<long>(kk) * ldb + j0,
                    cols * sizeof(float));
      }
      panel_b = padded.data();
    }
    panelNT<kIsa>(m, cols, alpha, a, panel_b, stride, beta, c + j0, ldc);
  }
}

void gemmNN(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) {
  gemmRowsNN(plainRows(a, lda, m, k), m, n, alpha, b, ldb, beta, c, ldc);
}

RANKLAB_VECTORIZED(void, gemmRowsTN,
                   (const ARows& a, int m, int n, int k, float alpha, const float* b, int ldb,
                    float beta, float* c, int ldc),
                   (a, m, n, k, alpha, b, ldb, beta, c, ldc)) {
  thread_local std::vector<float> tail;
  for (int j0 = 0; j0 < n; j0 += kPanel<kIsa>) {
    const int cols = std::min(kPanel<kIsa>, n - j0);
    const float* panel_b = b + j0;
    const int blocks = paddedWidth<kIsa>(cols) / kLanes<kIsa>;
    // A full-width load of B's row r reads on past the panel into the columns and rows
    // after it; those lanes sum into columns that are never stored. Rows whose load would
    // run past B's end are read from a zero-padded copy instead.
    const long b_end = static_cast<long>(k - 1) * ldb + (n - j0);
    const long width = blocks * kLanes<kIsa>;
    // Row r's load ends at r * ldb + width: rows up to (b_end - width) / ldb stay inside B.
    const int direct_rows =
        b_end < width ? 0 : static_cast<int>(std::min<long>((b_end - width) / ldb + 1, k));
    tail.assign(static_cast<size_t>(k - direct_rows) * width, 0.f);
    for (int r = direct_rows; r < k; ++r) {
      std::memcpy(tail.data() + (r - direct_rows) * width, panel_b + static_cast<long>(r) * ldb,
                  cols * sizeof(float));
    }
    panelTN<kIsa>(blocks, m, cols, k, alpha, a, panel_b, ldb, direct_rows, tail.data(), beta,
                  c + j0, ldc);
  }
}

void gemmTN(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) {
  gemmRowsTN(plainRows(a, lda, k, m), m, n, k, alpha, b, ldb, beta, c, ldc);
}

}  // namespace ranklab::kernels::skinny
