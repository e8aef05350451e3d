// Which instruction set the kernels' per-ISA builds (vectorize.h) run: the best this CPU
// has, or a lower one named by RANKLAB_CPU_ISA, so that every build can be tested and
// benchmarked on one machine (an AVX-512 developer's runs the AVX2 build users' CPUs get).
#pragma once

#include <string>

namespace ranklab::kernels {

enum class Isa { kDefault, kAvx2, kAvx512 };

// RANKLAB_CPU_ISA's spellings, lowest first: "default" (the x86-64 baseline, SSE2),
// "avx2" (AVX2 + FMA), "avx512f" (AVX-512F + FMA).
const char* isaName(Isa isa);

// The best instruction set this CPU supports among the three.
Isa hostIsa();

// The instruction set the kernels run: RANKLAB_CPU_ISA where set, else hostIsa(). Read once.
// Throws std::invalid_argument naming the variable, its value and what is allowed (an
// unknown name, or one above what the CPU supports).
Isa activeIsa();

// Parses a RANKLAB_CPU_ISA value against a CPU that supports up to `host` (for tests).
Isa parseIsa(const std::string& value, Isa host);

// This CPU's SIMD flags as /proc/cpuinfo spells them (avx2 fma avx512f avx512_bf16 ...).
std::string cpuSimdFlags();

}  // namespace ranklab::kernels
