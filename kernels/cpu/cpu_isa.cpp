#include "kernels/cpu/cpu_isa.h"

#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace ranklab::kernels {

namespace {

constexpr Isa kAll[] = {Isa::kDefault, Isa::kAvx2, Isa::kAvx512};

struct Flag {
  const char* name;
  bool present;
};

// The SIMD features the builds need or oneDNN's bf16 kernels use (__builtin_cpu_supports
// takes string literals only, hence the list).
const std::vector<Flag>& simdFlags() {
  static const std::vector<Flag> flags = [] {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return std::vector<Flag>{{"avx2", __builtin_cpu_supports("avx2") != 0},
                             {"fma", __builtin_cpu_supports("fma") != 0},
                             {"avx512f", __builtin_cpu_supports("avx512f") != 0},
                             {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
                             {"avx512vl", __builtin_cpu_supports("avx512vl") != 0},
                             {"avx512bf16", __builtin_cpu_supports("avx512bf16") != 0}};
#else
    return std::vector<Flag>{};
#endif
  }();
  return flags;
}

bool supports(const std::string& name) {
  for (const Flag& f : simdFlags()) {
    if (name == f.name) return f.present;
  }
  return false;
}

}  // namespace

const char* isaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "avx512f";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kDefault:
      break;
  }
  return "default";
}

Isa hostIsa() {
  // Both wider builds are compiled with FMA (vectorize.h), so each needs it as well.
  if (!supports("fma")) return Isa::kDefault;
  if (supports("avx512f")) return Isa::kAvx512;
  return supports("avx2") ? Isa::kAvx2 : Isa::kDefault;
}

Isa parseIsa(const std::string& value, Isa host) {
  for (Isa isa : kAll) {
    if (value != isaName(isa)) continue;
    if (isa > host) {
      throw std::invalid_argument("RANKLAB_CPU_ISA = \"" + value +
                                  "\": this CPU supports at most \"" + isaName(host) +
                                  "\" (its flags: " + cpuSimdFlags() + ")");
    }
    return isa;
  }
  throw std::invalid_argument("RANKLAB_CPU_ISA = \"" + value +
                              "\": allowed \"avx512f\", \"avx2\" or \"default\" (unset: the "
                              "best this CPU has)");
}

Isa activeIsa() {
  static const Isa isa = [] {
    const char* env = std::getenv("RANKLAB_CPU_ISA");
    return env && *env ? parseIsa(env, hostIsa()) : hostIsa();
  }();
  return isa;
}

std::string cpuSimdFlags() {
  std::string flags;
  for (const Flag& f : simdFlags()) {
    if (!f.present) continue;
    flags += flags.empty() ? "" : " ";
    flags += f.name;
  }
  return flags.empty() ? "none beyond SSE2" : flags;
}

}  // namespace ranklab::kernels
