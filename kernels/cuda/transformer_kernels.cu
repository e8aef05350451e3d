// The transformer's kernels on a GPU (transformer_kernels.h). A LayerNorm row is one block
// (its sums a fixed tree over kRowThreads threads); a softmax row one warp; element-wise
// work grid-stride loops; the attention's products cuBLAS's strided batches over the heads,
// one batch of heads per sequence.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cublas_handle.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_scratch.h"
#include "kernels/cuda/grid_stride.h"
#include "kernels/cuda/layer_kernels.h"
#include "kernels/cuda/transformer_kernels.h"

namespace ranklab::cuda {

namespace {

constexpr int kRowThreads = 256;  // a LayerNorm row's block: 8 warps
constexpr int kWarp = 32;

void checkLaunch(const char* operation) {
  check(cudaGetLastError(), operation);
}

// Blocks of one row each, at most kMaxBlocks (the kernels step over the rest).
unsigned rowBlocks(size_t rows) {
  return static_cast<unsigned>(rows < 1 ? 1 : rows < kMaxBlocks ? rows : kMaxBlocks);
}

__device__ float warpSum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__device__ float warpMax(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

// The sum of every thread's v over a block of kRowThreads, the same on every thread; `shared`
// holds kRowThreads / 32 floats. Every thread of the block must call it.
__device__ float blockSum(float v, float* shared) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warpSum(v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kRowThreads / kWarp ? shared[lane] : 0.f;
    v = warpSum(v);
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const float total = shared[0];
  __syncthreads();  // shared is written again by the next call
  return total;
}

// ---- LayerNorm ----

__global__ void layerNormForwardKernel(const float* x, const float* weight, const float* bias,
                                       float* y, float* mean, float* rstd, size_t rows, int width,
                                       float eps) {
  __shared__ float shared[kRowThreads / kWarp];
  for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* in = x + r * width;
    float sum = 0.f;
    for (int i = threadIdx.x; i < width; i += blockDim.x) sum += in[i];
    const float mu = blockSum(sum, shared) / static_cast<float>(width);
    float squares = 0.f;
    for (int i = threadIdx.x; i < width; i += blockDim.x) squares += (in[i] - mu) * (in[i] - mu);
    const float inv = rsqrtf(blockSum(squares, shared) / static_cast<float>(width) + eps);
    float* out = y + r * width;
    for (int i = threadIdx.x; i < width; i += blockDim.x)
      out[i] = (in[i] - mu) * inv * weight[i] + bias[i];
    if (threadIdx.x == 0) {
      mean[r] = mu;
      rstd[r] = inv;
    }
  }
}

// dx per row, and dy * xhat into `xhat_dy` for the weight's column sums.
__global__ void layerNormBackwardKernel(const float* x, const float* weight, const float* mean,
                                        const float* rstd, const float* dy, float* dx,
                                        float* xhat_dy, size_t rows, int width) {
  __shared__ float shared[kRowThreads / kWarp];
  for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* in = x + r * width;
    const float* grad = dy + r * width;
    const float mu = mean[r], inv = rstd[r];
    float dxhat = 0.f, dxhat_xhat = 0.f;
    for (int i = threadIdx.x; i < width; i += blockDim.x) {
      const float xhat = (in[i] - mu) * inv;
      xhat_dy[r * width + i] = grad[i] * xhat;
      dxhat += grad[i] * weight[i];
      dxhat_xhat += grad[i] * weight[i] * xhat;
    }
    const float a = blockSum(dxhat, shared) / static_cast<float>(width);
    const float b = blockSum(dxhat_xhat, shared) / static_cast<float>(width);
    if (dx == nullptr) continue;
    float* out = dx + r * width;
    for (int i = threadIdx.x; i < width; i += blockDim.x)
      out[i] = inv * (grad[i] * weight[i] - a - (in[i] - mu) * inv * b);
  }
}

// ---- GELU ----

__global__ void geluForwardKernel(const float* x, float* y, float* slope, size_t n) {
  const float inv_sqrt_2pi = 0.3989422804014327f;
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const float v = x[i];
    const float cdf = 0.5f * (1.f + erff(v * 0.7071067811865476f));
    y[i] = v * cdf;
    if (slope != nullptr) slope[i] = cdf + v * inv_sqrt_2pi * expf(-0.5f * v * v);
  }
}

__global__ void multiplyKernel(const float* a, const float* b, float* out, size_t n) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) out[i] = a[i] * b[i];
}

// ---- attention ----

// Each row t of the (length, length) matrices: the softmax of its first t + 1 entries, the
// future 0. One warp a row; rows counts every row of every matrix.
__global__ void causalSoftmaxKernel(float* scores, size_t rows, int length) {
  const size_t warps = static_cast<size_t>(gridDim.x) * blockDim.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  for (size_t r = firstIndex() / kWarp; r < rows; r += warps) {
    float* row = scores + r * length;
    const int t = static_cast<int>(r % length);
    float top = -INFINITY;
    for (int s = lane; s <= t; s += kWarp) top = fmaxf(top, row[s]);
    top = __shfl_sync(0xffffffffu, warpMax(top), 0);
    float sum = 0.f;
    for (int s = lane; s <= t; s += kWarp) {
      row[s] = expf(row[s] - top);
      sum += row[s];
    }
    const float inv = 1.f / __shfl_sync(0xffffffffu, warpSum(sum), 0);
    for (int s = lane; s < length; s += kWarp) row[s] = s <= t ? row[s] * inv : 0.f;
  }
}

// ds = p * (dp - rowsum(p * dp)) in place of dp, 0 in the future; one warp a row.
__global__ void causalSoftmaxBackwardKernel(const float* probs, float* dp, size_t rows,
                                            int length) {
  const size_t warps = static_cast<size_t>(gridDim.x) * blockDim.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  for (size_t r = firstIndex() / kWarp; r < rows; r += warps) {
    const float* p = probs + r * length;
    float* d = dp + r * length;
    const int t = static_cast<int>(r % length);
    float dot = 0.f;
    for (int s = lane; s <= t; s += kWarp) dot += p[s] * d[s];
    dot = __shfl_sync(0xffffffffu, warpSum(dot), 0);
    for (int s = lane; s < length; s += kWarp) d[s] = s <= t ? p[s] * (d[s] - dot) : 0.f;
  }
}

unsigned warpBlocks(size_t rows) {
  return blocksFor(rows * kWarp);
}

// Row-major C_i = alpha op(A_i) op(B_i) + beta C_i for i < count, each operand `stride_*`
// floats after the last (kernels::sgemm's layout, batched).
void sgemmBatched(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k, float alpha,
                  const float* a, int lda, long long stride_a, const float* b, int ldb,
                  long long stride_b, float* c, int ldc, long long stride_c, int count) {
  const float beta = 0.f;
  // Row-major C = A.B is column-major C^T = B^T.A^T: swap the operands, keep the flags.
  check(cublasSgemmStridedBatched(cublasHandle(), cublasOp(trans_b), cublasOp(trans_a), n, m, k,
                                  &alpha, b, ldb, stride_b, a, lda, stride_a, &beta, c, ldc,
                                  stride_c, count),
        "attention sgemm");
}

// ---- embedding ----

__global__ void embeddingForwardKernel(const float* tokens, const float* token_table,
                                       const float* position_table, float* y, size_t rows,
                                       int length, int width, int vocab,
                                       unsigned long long* first_bad) {
  const size_t n = rows * width;
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const size_t r = i / width;
    const int column = static_cast<int>(i % width);
    const float value = tokens[r];
    if (!(value >= 0.f && value < static_cast<float>(vocab)) || value != floorf(value)) {
      atomicMin(first_bad, static_cast<unsigned long long>(r));
      y[i] = 0.f;
      continue;
    }
    const size_t token = static_cast<size_t>(value);
    y[i] = token_table[token * width + column] +
           position_table[static_cast<size_t>(r % length) * width + column];
  }
}

// One thread per table cell (token, column): its rows' gradients in order.
__global__ void tokenGradientKernel(const float* tokens, const float* dy, float* dtoken_table,
                                    size_t rows, int width, int vocab) {
  const size_t n = static_cast<size_t>(vocab) * width;
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const float token = static_cast<float>(i / width);
    const size_t column = i % width;
    float sum = 0.f;
    for (size_t r = 0; r < rows; ++r)
      if (tokens[r] == token) sum += dy[r * width + column];
    dtoken_table[i] += sum;
  }
}

// One thread per (position, column): the batch's gradients in order.
__global__ void positionGradientKernel(const float* dy, float* dposition_table, int batch,
                                       int length, int width, bool accumulate) {
  const size_t n = static_cast<size_t>(length) * width;
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    float sum = accumulate ? dposition_table[i] : 0.f;
    for (int b = 0; b < batch; ++b) sum += dy[static_cast<size_t>(b) * n + i];
    dposition_table[i] = sum;
  }
}

}  // namespace

void layerNormForward(const float* x, const float* weight, const float* bias, float* y, float* mean,
                      float* rstd, size_t rows, int width, float eps) {
  if (rows == 0) return;
  layerNormForwardKernel<<<rowBlocks(rows), kRowThreads>>>(x, weight, bias, y, mean, rstd, rows,
                                                           width, eps);
  checkLaunch("layer norm forward");
}

void layerNormBackward(const float* x, const float* weight, const float* mean, const float* rstd,
                       const float* dy, float* dx, float* dweight, float* dbias, size_t rows,
                       int width, bool accumulate, float* scratch) {
  if (rows > 0) {
    layerNormBackwardKernel<<<rowBlocks(rows), kRowThreads>>>(x, weight, mean, rstd, dy, dx,
                                                              scratch, rows, width);
    checkLaunch("layer norm backward");
  }
  sumRows(dweight, scratch, rows, width, accumulate);
  sumRows(dbias, dy, rows, width, accumulate);
}

void geluForward(const float* x, float* y, float* slope, size_t n) {
  if (n == 0) return;
  geluForwardKernel<<<blocksFor(n), kThreads>>>(x, y, slope, n);
  checkLaunch("gelu forward");
}

void geluBackward(const float* slope, const float* dy, float* dx, size_t n) {
  if (n == 0) return;
  multiplyKernel<<<blocksFor(n), kThreads>>>(dy, slope, dx, n);
  checkLaunch("gelu backward");
}

void causalAttentionForward(const float* qkv, float* y, float* probs, int batch, int length,
                            int width, int heads) {
  if (batch == 0 || length == 0) return;
  const int d = width / heads, row = 3 * width;
  const float scale = 1.f / std::sqrt(static_cast<float>(d));
  const long long square = static_cast<long long>(length) * length;
  using kernels::Trans;
  for (int b = 0; b < batch; ++b) {
    const float* seq = qkv + static_cast<size_t>(b) * length * row;
    // p_h = q_h k_h^T / sqrt(d) for every head at once.
    sgemmBatched(Trans::kNo, Trans::kYes, length, length, d, scale, seq, row, d, seq + width, row,
                 d, probs + b * heads * square, length, square, heads);
  }
  const size_t rows = static_cast<size_t>(batch) * heads * length;
  causalSoftmaxKernel<<<warpBlocks(rows), kThreads>>>(probs, rows, length);
  checkLaunch("causal softmax");
  for (int b = 0; b < batch; ++b) {
    const float* seq = qkv + static_cast<size_t>(b) * length * row;
    // y_h = p_h v_h, the heads side by side in y's row.
    sgemmBatched(Trans::kNo, Trans::kNo, length, d, length, 1.f, probs + b * heads * square, length,
                 square, seq + 2 * width, row, d, y + static_cast<size_t>(b) * length * width,
                 width, d, heads);
  }
}

void causalAttentionBackward(const float* qkv, const float* probs, const float* dy, float* dqkv,
                             int batch, int length, int width, int heads, float* scratch) {
  if (batch == 0 || length == 0) return;
  const int d = width / heads, row = 3 * width;
  const float scale = 1.f / std::sqrt(static_cast<float>(d));
  const long long square = static_cast<long long>(length) * length;
  const size_t rows = static_cast<size_t>(heads) * length;
  using kernels::Trans;
  for (int b = 0; b < batch; ++b) {
    const size_t at = static_cast<size_t>(b) * length * row;
    const float* seq = qkv + at;
    float* dseq = dqkv + at;
    const float* dyb = dy + static_cast<size_t>(b) * length * width;
    const float* p = probs + b * heads * square;
    // dp = dy_h v_h^T; dv_h = p_h^T dy_h
    sgemmBatched(Trans::kNo, Trans::kYes, length, length, d, 1.f, dyb, width, d, seq + 2 * width,
                 row, d, scratch, length, square, heads);
    sgemmBatched(Trans::kYes, Trans::kNo, length, d, length, 1.f, p, length, square, dyb, width, d,
                 dseq + 2 * width, row, d, heads);
    causalSoftmaxBackwardKernel<<<warpBlocks(rows), kThreads>>>(p, scratch, rows, length);
    checkLaunch("causal softmax backward");
    // dq_h = ds_h k_h / sqrt(d); dk_h = ds_h^T q_h / sqrt(d)
    sgemmBatched(Trans::kNo, Trans::kNo, length, d, length, scale, scratch, length, square,
                 seq + width, row, d, dseq, row, d, heads);
    sgemmBatched(Trans::kYes, Trans::kNo, length, d, length, scale, scratch, length, square, seq,
                 row, d, dseq + width, row, d, heads);
  }
}

void embeddingForward(const float* tokens, const float* token_table, const float* position_table,
                      float* y, int batch, int length, int width, int vocab) {
  const size_t rows = static_cast<size_t>(batch) * length;
  if (rows == 0) return;
  Scratch scratch;
  auto* first_bad = static_cast<unsigned long long*>(scratch.get(sizeof(unsigned long long)));
  check(cudaMemsetAsync(first_bad, 0xff, sizeof(unsigned long long), cudaStreamPerThread),
        "embedding check");
  embeddingForwardKernel<<<blocksFor(rows * width), kThreads>>>(
      tokens, token_table, position_table, y, rows, length, width, vocab, first_bad);
  checkLaunch("embedding forward");
  unsigned long long bad = 0;
  check(cudaMemcpyAsync(&bad, first_bad, sizeof bad, cudaMemcpyDeviceToHost, cudaStreamPerThread),
        "embedding check");
  check(cudaStreamSynchronize(cudaStreamPerThread), "embedding check");
  if (bad == ULLONG_MAX) return;
  float value = 0.f;
  check(cudaMemcpy(&value, tokens + bad, sizeof value, cudaMemcpyDeviceToHost), "embedding check");
  throw std::out_of_range("embedding: token " + std::to_string(value) + " at position " +
                          std::to_string(bad) + " is not an id in [0, " + std::to_string(vocab) +
                          ")");
}

void embeddingBackward(const float* tokens, const float* dy, float* dtoken_table,
                       float* dposition_table, int batch, int length, int width, int vocab,
                       bool accumulate_positions) {
  const size_t rows = static_cast<size_t>(batch) * length;
  const size_t cells = static_cast<size_t>(vocab) * width;
  tokenGradientKernel<<<blocksFor(cells), kThreads>>>(tokens, dy, dtoken_table, rows, width, vocab);
  checkLaunch("embedding backward (tokens)");
  const size_t positions = static_cast<size_t>(length) * width;
  positionGradientKernel<<<blocksFor(positions), kThreads>>>(dy, dposition_table, batch, length,
                                                             width, accumulate_positions);
  checkLaunch("embedding backward (positions)");
}

}  // namespace ranklab::cuda
