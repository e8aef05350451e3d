#include "kernels/cpu/mixed_gemm.h"

#include <stdexcept>

#include "kernels/cpu/bf16_gemm.h"
#include "kernels/cpu/fp16_gemm.h"

namespace ranklab::kernels {

const char* precisionName(Precision precision) {
  switch (precision) {
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    default:
      return "fp32";
  }
}

void GemmOperand::set(Precision precision, const float* data, size_t count) {
  precision_ = precision;
  source_ = data;
  count_ = count;
  if (precision == Precision::kFp32) return;
  low_.resize(count);
  if (precision == Precision::kBf16) {
    floatToBf16(data, low_.data(), count);
  } else {
    floatToFp16(data, low_.data(), count);
  }
}

void gemmIn(Precision precision, Trans trans_a, Trans trans_b, int m, int n, int k, float alpha,
            const float* a32, const uint16_t* a_low, int lda, const float* b32,
            const uint16_t* b_low, int ldb, float beta, float* c, int ldc) {
  switch (precision) {
    case Precision::kFp32:
      return sgemm(trans_a, trans_b, m, n, k, alpha, a32, lda, b32, ldb, beta, c, ldc);
    case Precision::kBf16:
      return gemmBf16(trans_a, trans_b, m, n, k, alpha, a_low, lda, b_low, ldb, beta, c, ldc);
    case Precision::kFp16:
      return gemmFp16(trans_a, trans_b, m, n, k, alpha, a_low, lda, b_low, ldb, beta, c, ldc);
  }
}

void gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const GemmOperand& a,
          int lda, const GemmOperand& b, int ldb, float beta, float* c, int ldc) {
  if (a.precision() != b.precision()) {
    throw std::invalid_argument(std::string("gemm: operands in ") + precisionName(a.precision()) +
                                " and " + precisionName(b.precision()));
  }
  gemmIn(a.precision(), trans_a, trans_b, m, n, k, alpha, a.f32(), a.low(), lda, b.f32(), b.low(),
         ldb, beta, c, ldc);
}

}  // namespace ranklab::kernels
