// A fully connected layer's forward product with its bias and an optional ReLU in one call,
// so no pass over the output is needed before or after the GEMM.
#pragma once

namespace ranklab::kernels {

// y (rows, out) = act(x (rows, in) . W^T + bias), W (out, in) row-major and bias (out), act
// ReLU when `relu`, else none. Where sgemm() would use oneDNN, one oneDNN matmul primitive
// per shape (made on first use, per thread) applies bias and ReLU in its epilogue; elsewhere
// (skinny shapes, several BLAS threads, RANKLAB_SGEMM=openblas) bias rows, sgemm, then ReLU.
void linearForward(const float* x, const float* w, const float* bias, float* y, int rows, int in,
                   int out, bool relu);

}  // namespace ranklab::kernels
