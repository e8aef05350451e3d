// Hot loops are compiled once per instruction set and picked at load time for the CPU
// they run on, so a portable x86-64 build still uses AVX-512 or AVX2+FMA where present.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RANKLAB_VECTORIZED \
  __attribute__((target_clones("arch=skylake-avx512", "arch=haswell", "default")))
#else
#define RANKLAB_VECTORIZED
#endif
