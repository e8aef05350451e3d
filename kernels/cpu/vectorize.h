// Hot loops are compiled once per instruction set and picked at load time for the CPU
// they run on, so a portable x86-64 build still uses AVX-512 or AVX2+FMA where present.
#pragma once

// The clones are chosen by CPU feature (an "arch=" clone would need that exact CPU model);
// -mavx512f implies AVX2 and FMA. Not under ThreadSanitizer: the clones' resolver runs while
// the program is being loaded, before TSan's runtime is up, and its instrumented code crashes.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define RANKLAB_VECTORIZED __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RANKLAB_VECTORIZED
#endif
