// RANKLAB_CPU_ISA: the per-ISA builds a test or bench may force, and what it refuses.
#include "kernels/cpu/cpu_isa.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace ranklab::kernels {
namespace {

std::string refusalOf(const std::string& value, Isa host) {
  try {
    parseIsa(value, host);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(CpuIsa, NamesEachBuildAndTakesAnyUpToTheCpus) {
  for (Isa isa : {Isa::kDefault, Isa::kAvx2, Isa::kAvx512}) {
    EXPECT_EQ(parseIsa(isaName(isa), Isa::kAvx512), isa) << isaName(isa);
  }
  EXPECT_EQ(parseIsa("default", Isa::kAvx2), Isa::kDefault);
  EXPECT_EQ(parseIsa("avx2", Isa::kAvx2), Isa::kAvx2);
}

TEST(CpuIsa, RefusesAnUnknownNameOrOneAboveTheCpusSayingWhatIsAllowed) {
  const std::string unknown = refusalOf("avx512", Isa::kAvx512);
  EXPECT_NE(unknown.find("RANKLAB_CPU_ISA = \"avx512\""), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("allowed \"avx512f\", \"avx2\" or \"default\""), std::string::npos)
      << unknown;
  const std::string above = refusalOf("avx512f", Isa::kAvx2);
  EXPECT_NE(above.find("this CPU supports at most \"avx2\""), std::string::npos) << above;
}

TEST(CpuIsa, TheActiveBuildIsTheForcedOneOrTheCpusBest) {
  std::printf("kernels' ISA: %s (CPU's best %s; flags %s)\n", isaName(activeIsa()),
              isaName(hostIsa()), cpuSimdFlags().c_str());
  EXPECT_LE(activeIsa(), hostIsa());
  if (const char* forced = std::getenv("RANKLAB_CPU_ISA")) {
    EXPECT_STREQ(isaName(activeIsa()), forced);
  } else {
    EXPECT_EQ(activeIsa(), hostIsa());
  }
}

}  // namespace
}  // namespace ranklab::kernels
