// Hot loops are compiled once per instruction set and the build for the CPU they run on is
// picked at the first call, so a portable x86-64 build still uses AVX-512 or AVX2 with FMA
// where present. The pick is ours, not an ifunc's (GCC's target_clones): RANKLAB_CPU_ISA
// (cpu_isa.h) can name a lower build, so tests and benches run every build on one machine.
//
//   RANKLAB_VECTORIZED(void, addInto, (float* y, const float* x, size_t n), (y, x, n)) {
//     for (size_t i = 0; i < n; ++i) y[i] += x[i];  // kIsa names the build being compiled
//   }
#pragma once

#include "kernels/cpu/cpu_isa.h"

// GCC's -mavx512f implies AVX2 but not FMA: each wider build names FMA itself.
#if defined(__x86_64__) && defined(__GNUC__)
#define RANKLAB_TARGET_AVX512 [[gnu::target("avx512f,fma")]]
#define RANKLAB_TARGET_AVX2 [[gnu::target("avx2,fma")]]
#else
#define RANKLAB_TARGET_AVX512
#define RANKLAB_TARGET_AVX2
#endif

namespace ranklab::kernels {

// The build of a function for activeIsa(), chosen once per function.
template <class Fn>
Fn pickBuild(Fn avx512, Fn avx2, Fn fallback) {
  switch (activeIsa()) {
    case Isa::kAvx512:
      return avx512;
    case Isa::kAvx2:
      return avx2;
    case Isa::kDefault:
      break;
  }
  return fallback;
}

}  // namespace ranklab::kernels

// Declares `ret name params`, whose body follows as a template over kIsa, inlined into one
// function per instruction set; `args` are the parameters' names, to forward them.
#define RANKLAB_VECTORIZED(ret, name, params, args)                                \
  template <::ranklab::kernels::Isa kIsa>                                          \
  [[gnu::always_inline]] inline ret name##Body params;                             \
  RANKLAB_TARGET_AVX512 static ret name##Avx512 params {                           \
    return name##Body<::ranklab::kernels::Isa::kAvx512> args;                      \
  }                                                                                \
  RANKLAB_TARGET_AVX2 static ret name##Avx2 params {                               \
    return name##Body<::ranklab::kernels::Isa::kAvx2> args;                        \
  }                                                                                \
  static ret name##Default params {                                                \
    return name##Body<::ranklab::kernels::Isa::kDefault> args;                     \
  }                                                                                \
  ret name params {                                                                \
    static const auto build =                                                      \
        ::ranklab::kernels::pickBuild(&name##Avx512, &name##Avx2, &name##Default); \
    return build args;                                                             \
  }                                                                                \
  template <::ranklab::kernels::Isa kIsa>                                          \
  [[gnu::always_inline]] inline ret name##Body params
