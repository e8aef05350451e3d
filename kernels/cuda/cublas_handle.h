// The cuBLAS handle every ranklab product goes through, and the row-major operand flags.
#pragma once

#include <cublas_v2.h>

#include "kernels/cpu/gemm.h"

namespace ranklab::cuda {

// This thread's handle for its current device, made on first use with plain fp32 math (TF32
// would lose the CPU's answers past the fifth digit) and bound to cudaStreamPerThread, so its
// products queue behind the thread's kernels: handles are neither thread-safe nor usable on a
// device other than the one current when they were made.
cublasHandle_t cublasHandle();

inline cublasOperation_t cublasOp(kernels::Trans t) {
  return t == kernels::Trans::kYes ? CUBLAS_OP_T : CUBLAS_OP_N;
}

}  // namespace ranklab::cuda
