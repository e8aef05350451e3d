// The kernels' precision for the job's amp.dtype (the kernels know no job).
#pragma once

#include "engine/job/job_choices.h"
#include "kernels/cpu/mixed_gemm.h"

namespace ranklab {

constexpr kernels::Precision precisionOf(AmpDtype dtype) {
  switch (dtype) {
    case AmpDtype::kFp32:
      return kernels::Precision::kFp32;
    case AmpDtype::kBf16:
      return kernels::Precision::kBf16;
    case AmpDtype::kFp16:
      return kernels::Precision::kFp16;
  }
  return kernels::Precision::kFp32;
}

}  // namespace ranklab
