// The CUDA device's layer kernels (layer_kernels.h). Conventions: one thread per output
// element in grid-stride loops (so no grid is ever too large), size_t indices, the calling
// thread's own default stream (nvcc --default-stream=per-thread), cudaGetLastError after
// every launch. Where the CPU kernel's result is meant to be matched bit for bit (dropout,
// max-pool, transposes) the arithmetic is the same; elsewhere only the order of summation
// differs.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cublas_handle.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_scratch.h"
#include "kernels/cuda/grid_stride.h"
#include "kernels/cuda/layer_kernels.h"

namespace ranklab::cuda {

namespace {

void checkLaunch(const char* operation) {
  check(cudaGetLastError(), operation);
}

cudaDataType lowType(kernels::Precision precision) {
  switch (precision) {
    case kernels::Precision::kBf16:
      return CUDA_R_16BF;
    case kernels::Precision::kFp16:
      return CUDA_R_16F;
    case kernels::Precision::kFp32:
      break;
  }
  throw std::invalid_argument("cuda gemmLowPrecision: the precision must be bf16 or fp16");
}

// ---- kernels ----

__global__ void probeKernel() {}

__global__ void castToBf16Kernel(const float* x, uint16_t* out, size_t n) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    out[i] = __bfloat16_as_ushort(__float2bfloat16_rn(x[i]));
  }
}

__global__ void castToFp16Kernel(const float* x, uint16_t* out, size_t n) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    out[i] = __half_as_ushort(__float2half_rn(x[i]));
  }
}

// c (m, n) = alpha * fp16(product) + beta * c, as kernels::gemmFp16 rounds (no FMA); c is not
// read when beta is 0 (product may be c itself then).
__global__ void fp16ProductKernel(const float* product, int product_ld, float* c, int ldc, size_t m,
                                  int n, float alpha, float beta) {
  const size_t cells = m * n;
  for (size_t i = firstIndex(); i < cells; i += gridStride()) {
    const size_t r = i / n, j = i % n;
    const float p = __half2float(__float2half_rn(product[r * product_ld + j]));
    float* out = c + r * ldc + j;
    *out =
        beta == 0.f ? __fmul_rn(alpha, p) : __fadd_rn(__fmul_rn(alpha, p), __fmul_rn(beta, *out));
  }
}

__global__ void addBiasAndReluKernel(float* y, const float* bias, size_t rows, int cols,
                                     bool relu) {
  const size_t n = rows * cols;
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    float v = y[i];
    if (bias != nullptr) v += bias[i % cols];
    y[i] = relu && !(v > 0.f) ? 0.f : v;
  }
}

__global__ void reluKernel(const float* x, float* y, size_t n) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

__global__ void reluGradientKernel(const float* dy, const float* y, float* dx, size_t n) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) dx[i] = y[i] > 0.f ? dy[i] : 0.f;
}

// Column sums: a block owns 32 columns of a run of rows (blockIdx.y picks the run); its
// 32 x 32 threads sum every 32nd row of the run, then one thread per column adds the 32
// partial sums in a fixed order into row blockIdx.y of `sums` (cols wide). With one run that
// row is the bias gradient; with several, the runs' sums are summed by this kernel again in
// one run. Every order is fixed by the shape alone: the same bits on every call.
constexpr int kSumColumns = 32;
constexpr int kSumRowThreads = 32;
// A run is at least 32 rows per thread; a tall matrix gets up to kSumBlocks blocks, several
// waves on any GPU (a conv's bias gradient at batch 512 is 401,408 rows of 16 columns).
constexpr size_t kMinRunRows = size_t{kSumRowThreads} * 32;
constexpr size_t kSumBlocks = 1024;

template <bool kMask>
__global__ void columnSumsKernel(const float* dy, const float* y, float* dz, float* sums,
                                 size_t rows, int cols, size_t run_rows, bool accumulate) {
  __shared__ float partial[kSumRowThreads][kSumColumns + 1];  // +1: no bank conflicts
  const int c = blockIdx.x * kSumColumns + threadIdx.x;
  const size_t first = blockIdx.y * run_rows;
  const size_t end = first + run_rows < rows ? first + run_rows : rows;
  float sum = 0.f;
  if (c < cols) {
    for (size_t r = first + threadIdx.y; r < end; r += kSumRowThreads) {
      const size_t at = r * cols + c;
      float g = dy[at];
      if (kMask) {
        g = y[at] > 0.f ? g : 0.f;
        dz[at] = g;
      }
      sum += g;
    }
  }
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y != 0 || c >= cols) return;
  float total = 0.f;
  for (int t = 0; t < kSumRowThreads; ++t) total += partial[t][threadIdx.x];
  float* out = sums + static_cast<size_t>(blockIdx.y) * cols + c;
  *out = accumulate ? *out + total : total;
}

// ConvShape with its derived sizes worked out on the host (its methods are host code).
struct ConvDims {
  int height, width, channels, kernel, padding;
  int out_h, out_w, columns;
};

ConvDims dimsOf(const ConvShape& s) {
  return {s.height,  s.width,       s.channels,   s.kernel,
          s.padding, s.outHeight(), s.outWidth(), s.columns()};
}

__global__ void im2colKernel(const float* x, ConvDims s, size_t rows, float* col) {
  const int k = s.kernel, taps = k * k, columns = s.columns;
  const int out_h = s.out_h, out_w = s.out_w;
  const size_t n = rows * columns, per_image = static_cast<size_t>(out_h) * out_w;
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const size_t r = i / columns;
    const int j = static_cast<int>(i % columns);
    const int c = j / taps, ky = (j % taps) / k, kx = j % k;
    const size_t b = r / per_image;
    const int pixel = static_cast<int>(r % per_image);
    const int iy = pixel / out_w + ky - s.padding, ix = pixel % out_w + kx - s.padding;
    const bool inside = iy >= 0 && iy < s.height && ix >= 0 && ix < s.width;
    col[i] = inside ? x[((b * s.height + iy) * s.width + ix) * s.channels + c] : 0.f;
  }
}

__global__ void col2imKernel(const float* dcol, ConvDims s, size_t images, float* dx) {
  const int k = s.kernel, columns = s.columns;
  const int out_h = s.out_h, out_w = s.out_w;
  const size_t n = images * s.height * s.width * s.channels;
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const int c = static_cast<int>(i % s.channels);
    const size_t pixel = i / s.channels;
    const int ix = static_cast<int>(pixel % s.width);
    const int iy = static_cast<int>((pixel / s.width) % s.height);
    const size_t b = pixel / (static_cast<size_t>(s.width) * s.height);
    float sum = 0.f;
    for (int ky = 0; ky < k; ++ky) {
      const int oy = iy + s.padding - ky;
      if (oy < 0 || oy >= out_h) continue;
      for (int kx = 0; kx < k; ++kx) {
        const int ox = ix + s.padding - kx;
        if (ox < 0 || ox >= out_w) continue;
        const size_t r = (b * out_h + oy) * out_w + ox;
        sum += dcol[r * columns + (c * k + ky) * k + kx];
      }
    }
    dx[i] = sum;
  }
}

__global__ void maxPoolForwardKernel(const float* x, float* y, uint8_t* argmax, size_t batch,
                                     int height, int width, int channels) {
  const int out_h = height / 2, out_w = width / 2;
  const size_t n = batch * out_h * out_w * channels, row = static_cast<size_t>(width) * channels;
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const int c = static_cast<int>(i % channels);
    const size_t pixel = i / channels;
    const int ox = static_cast<int>(pixel % out_w), oy = static_cast<int>((pixel / out_w) % out_h);
    const size_t b = pixel / (static_cast<size_t>(out_w) * out_h);
    const float* top = x + ((b * height + 2 * oy) * width + 2 * ox) * channels + c;
    const float taps[4] = {top[0], top[channels], top[row], top[row + channels]};
    float best = taps[0];
    uint8_t which = 0;
    for (uint8_t t = 1; t < 4; ++t) {
      if (taps[t] > best || taps[t] != taps[t]) {  // as the CPU kernel: NaN propagates
        best = taps[t];
        which = t;
      }
    }
    y[i] = best;
    argmax[i] = which;
  }
}

__global__ void maxPoolBackwardKernel(const float* dy, const uint8_t* argmax, float* dx,
                                      size_t batch, int height, int width, int channels) {
  const int out_h = height / 2, out_w = width / 2;
  const size_t n = batch * height * width * channels;
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const int c = static_cast<int>(i % channels);
    const size_t pixel = i / channels;
    const int ix = static_cast<int>(pixel % width), iy = static_cast<int>((pixel / width) % height);
    const size_t b = pixel / (static_cast<size_t>(width) * height);
    const int oy = iy / 2, ox = ix / 2;
    float g = 0.f;  // floor mode: an odd last row or column is in no window
    if (oy < out_h && ox < out_w) {
      const size_t at = ((b * out_h + oy) * out_w + ox) * channels + c;
      const int tap = (iy % 2) * 2 + ix % 2;
      if (argmax[at] == tap) g = dy[at];
    }
    dx[i] = g;
  }
}

// kernels/cpu/elementwise.cpp's SplitMix64 finalizer, the same arithmetic.
__host__ __device__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__global__ void dropoutMaskKernel(uint64_t base, uint32_t threshold, float keep_scale, float* scale,
                                  size_t n) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const uint64_t counter = base + 0x9e3779b97f4a7c15ULL * (static_cast<uint64_t>(i) + 1);
    const uint32_t u = static_cast<uint32_t>(mix64(counter) >> 40);
    scale[i] = u < threshold ? 0.f : keep_scale;
  }
}

__global__ void multiplyKernel(const float* a, const float* b, float* out, size_t n) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) out[i] = __fmul_rn(a[i], b[i]);
}

__global__ void transposeKernel(const float* x, float* y, size_t batch, size_t rows, size_t cols) {
  const size_t matrix = rows * cols, n = batch * matrix;
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const size_t b = i / matrix, at = i % matrix;
    const size_t c = at / rows, r = at % rows;  // y[b][c][r] = x[b][r][c]
    y[i] = x[b * matrix + r * cols + c];
  }
}

// One thread per row, as kernels::softmaxXentForward computes a row: exp as the double exp
// rounded to float (glibc's expf is correctly rounded; CUDA's expf is not).
__global__ void softmaxXentRowsKernel(const float* logits, const uint8_t* labels, float* probs,
                                      int rows, int classes, double* row_loss, int* row_correct) {
  for (size_t r = firstIndex(); r < static_cast<size_t>(rows); r += gridStride()) {
    const float* z = logits + r * classes;
    float* p = probs + r * classes;
    int best = 0;
    for (int c = 1; c < classes; ++c) {
      if (z[c] > z[best]) best = c;  // the first maximum, as std::max_element
    }
    const float zmax = z[best];
    double sum = 0;
    for (int c = 0; c < classes; ++c) {
      p[c] = static_cast<float>(exp(static_cast<double>(__fsub_rn(z[c], zmax))));
      sum += p[c];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int c = 0; c < classes; ++c) p[c] = __fmul_rn(p[c], inv);
    const int label = labels[r];
    row_loss[r] = -(static_cast<double>(__fsub_rn(z[label], zmax)) - log(sum));
    row_correct[r] = best == label ? 1 : 0;
  }
}

// One block sums the rows' losses and hits in a fixed order (the same totals every run).
__global__ void softmaxXentTotalsKernel(const double* row_loss, const int* row_correct, int rows,
                                        XentTotals* totals) {
  __shared__ double loss[kThreads];
  __shared__ long long correct[kThreads];
  double my_loss = 0;
  long long my_correct = 0;
  for (int r = threadIdx.x; r < rows; r += kThreads) {
    my_loss += row_loss[r];
    my_correct += row_correct[r];
  }
  loss[threadIdx.x] = my_loss;
  correct[threadIdx.x] = my_correct;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      loss[threadIdx.x] += loss[threadIdx.x + half];
      correct[threadIdx.x] += correct[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    totals->loss_sum = loss[0];
    totals->correct = correct[0];
  }
}

__global__ void softmaxXentBackwardKernel(float* dlogits, const float* probs, const uint8_t* labels,
                                          size_t rows, int classes, float scale) {
  const size_t n = rows * classes;
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const float d = __fmul_rn(probs[i], scale);  // no FMA: the CPU's two roundings
    dlogits[i] = static_cast<int>(i % classes) == labels[i / classes] ? __fsub_rn(d, scale) : d;
  }
}

// The workspace of softmaxXentForward: the totals, then per-row losses and hits.
struct XentWorkspace {
  XentTotals* totals;
  double* row_loss;
  int* row_correct;
};

XentWorkspace xentWorkspace(void* workspace, int rows) {
  auto* bytes = static_cast<char*>(workspace);
  XentWorkspace w;
  w.totals = reinterpret_cast<XentTotals*>(bytes);
  w.row_loss = reinterpret_cast<double*>(bytes + sizeof(XentTotals));
  w.row_correct = reinterpret_cast<int*>(bytes + sizeof(XentTotals) + sizeof(double) * rows);
  return w;
}

// C (M, N) = alpha * op(A) . op(B) + beta * C, A and B of `type`, accumulated in fp32.
void gemmEx(cudaDataType type, kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k,
            float alpha, const uint16_t* a, int lda, const uint16_t* b, int ldb, float beta,
            float* c, int ldc) {
  // Row-major C = A.B is column-major C^T = B^T.A^T: swap the operands, keep the flags.
  check(cublasGemmEx(cublasHandle(), cublasOp(trans_b), cublasOp(trans_a), n, m, k, &alpha, b, type,
                     ldb, a, type, lda, &beta, c, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT),
        "gemmEx (low precision, fp32 accumulation)");
}

// Room for `floats` fp32 values, per thread and device, kept for the next call.
float* productScratch(size_t floats) {
  thread_local ThreadScratch product;
  return product.get<float>(floats);
}

// The column sums' runs of rows: one where the rows are few (no partial sums), else enough
// to fill the GPU with blocks of kMinRunRows rows or more.
unsigned columnSumRuns(size_t rows, int cols) {
  const size_t column_blocks = (static_cast<size_t>(cols) + kSumColumns - 1) / kSumColumns;
  const size_t wanted = (rows + kMinRunRows - 1) / kMinRunRows;
  const size_t room = std::max<size_t>(1, kSumBlocks / column_blocks);
  return static_cast<unsigned>(std::max<size_t>(1, std::min(wanted, room)));
}

// dbias (cols) = (or +=) the column sums of dy (rows, cols), through dz = dy * (y > 0) when
// kMask: one pass where one run covers the rows, else each run's sums, then theirs.
template <bool kMask>
void columnSums(const float* dy, const float* y, float* dz, float* dbias, size_t rows, int cols,
                bool accumulate, const char* operation) {
  const dim3 block(kSumColumns, kSumRowThreads);
  const unsigned column_blocks = (static_cast<unsigned>(cols) + kSumColumns - 1) / kSumColumns;
  const unsigned runs = columnSumRuns(rows, cols);
  if (runs == 1) {
    columnSumsKernel<kMask>
        <<<column_blocks, block>>>(dy, y, dz, dbias, rows, cols, rows, accumulate);
    return checkLaunch(operation);
  }
  const size_t run_rows = (rows + runs - 1) / runs;
  thread_local ThreadScratch run_sums;  // (runs, cols), reused in this thread's stream order
  float* partial = run_sums.get<float>(static_cast<size_t>(runs) * cols);
  columnSumsKernel<kMask>
      <<<dim3(column_blocks, runs), block>>>(dy, y, dz, partial, rows, cols, run_rows, false);
  checkLaunch(operation);
  columnSumsKernel<false>
      <<<column_blocks, block>>>(partial, nullptr, nullptr, dbias, runs, cols, runs, accumulate);
  checkLaunch(operation);
}

}  // namespace

bool kernelsRunOn(int device, std::string* why) {
  cudaError_t code = cudaSetDevice(device);
  if (code == cudaSuccess) {
    cudaFuncAttributes attributes;
    code = cudaFuncGetAttributes(&attributes, probeKernel);
  }
  if (code == cudaSuccess) return true;
  cudaGetLastError();  // not sticky: clear it so the next check does not see it
  if (why) {
    *why = "CUDA device " + std::to_string(device) +
           " cannot run ranklab's kernels: " + cudaGetErrorString(code) +
           " (rebuild with CMAKE_CUDA_ARCHITECTURES covering this GPU)";
  }
  return false;
}

// ---- matrix products ----

void gemmLowPrecision(kernels::Precision precision, kernels::Trans trans_a, kernels::Trans trans_b,
                      int m, int n, int k, float alpha, const uint16_t* a, int lda,
                      const uint16_t* b, int ldb, float beta, float* c, int ldc) {
  const cudaDataType type = lowType(precision);
  if (m == 0 || n == 0) return;
  if (precision == kernels::Precision::kBf16) {
    return gemmEx(type, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  // fp16 as kernels::gemmFp16: C = alpha * fp16(op(A) op(B)) + beta * C, the product rounded
  // to fp16 (beyond 65504 it is inf, which the loss scaler must see).
  const size_t cells = static_cast<size_t>(m) * n;
  float* product = c;
  int product_ld = ldc;
  if (beta != 0.f) {  // C is still needed: the product goes to a scratch first
    product = productScratch(cells);
    product_ld = n;
  }
  gemmEx(type, trans_a, trans_b, m, n, k, 1.f, a, lda, b, ldb, 0.f, product, product_ld);
  fp16ProductKernel<<<blocksFor(cells), kThreads>>>(product, product_ld, c, ldc, m, n, alpha, beta);
  checkLaunch("round the fp16 product");
}

void castFromFp32(kernels::Precision precision, const float* x, uint16_t* out, size_t n) {
  if (n == 0) return;
  if (precision == kernels::Precision::kBf16) {
    castToBf16Kernel<<<blocksFor(n), kThreads>>>(x, out, n);
  } else if (precision == kernels::Precision::kFp16) {
    castToFp16Kernel<<<blocksFor(n), kThreads>>>(x, out, n);
  } else {
    throw std::invalid_argument("cuda castFromFp32: the precision must be bf16 or fp16");
  }
  checkLaunch("cast to bf16/fp16");
}

// ---- bias and ReLU ----

void addBiasAndRelu(float* y, const float* bias, size_t rows, int cols, bool relu) {
  const size_t n = rows * cols;
  if (n == 0 || (bias == nullptr && !relu)) return;
  addBiasAndReluKernel<<<blocksFor(n), kThreads>>>(y, bias, rows, cols, relu);
  checkLaunch("add bias and relu");
}

void applyRelu(const float* x, float* y, size_t n) {
  if (n == 0) return;
  reluKernel<<<blocksFor(n), kThreads>>>(x, y, n);
  checkLaunch("relu forward");
}

void reluGradient(const float* dy, const float* y, float* dx, size_t n) {
  if (n == 0) return;
  reluGradientKernel<<<blocksFor(n), kThreads>>>(dy, y, dx, n);
  checkLaunch("relu backward");
}

void sumRows(float* dbias, const float* dy, size_t rows, int cols, bool accumulate) {
  if (cols == 0) return;
  columnSums<false>(dy, nullptr, nullptr, dbias, rows, cols, accumulate,
                    "column sums (bias gradient)");
}

void reluMaskSumRows(const float* dy, const float* y, float* dz, float* dbias, size_t rows,
                     int cols, bool accumulate) {
  if (cols == 0) return;
  columnSums<true>(dy, y, dz, dbias, rows, cols, accumulate, "relu backward with column sums");
}

// ---- convolution ----

void im2col(const float* x, const ConvShape& s, int images, float* col) {
  const size_t rows = static_cast<size_t>(images) * s.outHeight() * s.outWidth();
  const size_t n = rows * s.columns();
  if (n == 0) return;
  im2colKernel<<<blocksFor(n), kThreads>>>(x, dimsOf(s), rows, col);
  checkLaunch("im2col");
}

void col2im(const float* dcol, const ConvShape& s, int images, float* dx) {
  const size_t n = static_cast<size_t>(images) * s.height * s.width * s.channels;
  if (n == 0) return;
  col2imKernel<<<blocksFor(n), kThreads>>>(dcol, dimsOf(s), images, dx);
  checkLaunch("col2im");
}

// ---- pooling, dropout, layout ----

void maxPool2x2Forward(const float* x, float* y, uint8_t* argmax, int batch, int height, int width,
                       int channels) {
  const size_t n = static_cast<size_t>(batch) * (height / 2) * (width / 2) * channels;
  if (n == 0) return;
  maxPoolForwardKernel<<<blocksFor(n), kThreads>>>(x, y, argmax, batch, height, width, channels);
  checkLaunch("max-pool forward");
}

void maxPool2x2Backward(const float* dy, const uint8_t* argmax, float* dx, int batch, int height,
                        int width, int channels) {
  const size_t n = static_cast<size_t>(batch) * height * width * channels;
  if (n == 0) return;
  maxPoolBackwardKernel<<<blocksFor(n), kThreads>>>(dy, argmax, dx, batch, height, width, channels);
  checkLaunch("max-pool backward");
}

void dropoutMask(uint64_t key, float p, float* scale, size_t n) {
  if (n == 0) return;
  // The CPU's constants, computed on the host with the same operations.
  const float keep_scale = 1.f / (1.f - p);
  const uint32_t threshold = static_cast<uint32_t>(static_cast<double>(p) * (1u << 24));
  dropoutMaskKernel<<<blocksFor(n), kThreads>>>(mix64(key), threshold, keep_scale, scale, n);
  checkLaunch("dropout mask");
}

void multiply(const float* a, const float* b, float* out, size_t n) {
  if (n == 0) return;
  multiplyKernel<<<blocksFor(n), kThreads>>>(a, b, out, n);
  checkLaunch("multiply");
}

void transposeEach(const float* x, float* y, int batch, size_t rows, size_t cols) {
  const size_t n = static_cast<size_t>(batch) * rows * cols;
  if (n == 0) return;
  transposeKernel<<<blocksFor(n), kThreads>>>(x, y, batch, rows, cols);
  checkLaunch("transpose");
}

// ---- softmax cross-entropy ----

size_t softmaxXentWorkspaceBytes(int rows) {
  return sizeof(XentTotals) + (sizeof(double) + sizeof(int)) * static_cast<size_t>(rows);
}

XentTotals softmaxXentForward(const float* logits, const uint8_t* labels, float* probs, int rows,
                              int classes, void* workspace) {
  XentTotals totals;
  if (rows == 0) return totals;
  const XentWorkspace w = xentWorkspace(workspace, rows);
  softmaxXentRowsKernel<<<blocksFor(rows), kThreads>>>(logits, labels, probs, rows, classes,
                                                       w.row_loss, w.row_correct);
  checkLaunch("softmax cross-entropy forward");
  softmaxXentTotalsKernel<<<1, kThreads>>>(w.row_loss, w.row_correct, rows, w.totals);
  checkLaunch("softmax cross-entropy totals");
  check(cudaMemcpy(&totals, w.totals, sizeof totals, cudaMemcpyDeviceToHost),
        "copy the loss totals to the host");
  return totals;
}

void softmaxXentBackward(float* dlogits, const float* probs, const uint8_t* labels, int rows,
                         int classes, float scale) {
  const size_t n = static_cast<size_t>(rows) * classes;
  if (n == 0) return;
  softmaxXentBackwardKernel<<<blocksFor(n), kThreads>>>(dlogits, probs, labels, rows, classes,
                                                        scale);
  checkLaunch("softmax cross-entropy backward");
}

}  // namespace ranklab::cuda
