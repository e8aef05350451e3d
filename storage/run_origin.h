// Where a stored run came from: the run store's `origin` column, each value named once, so
// code asks the run's origin instead of comparing its text.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "storage/records.h"

namespace ranklab {

enum class RunOrigin {
  kRanklab,        // trained by ranklab's engine
  kRanklabTrace,   // read back from a Chrome trace ranklab exported
  kPytorchImport,  // imported from PyTorch's profiler traces (ranklab import)
  kPytorchLive,    // a PyTorch job's ranks, watched live (ranklab.torch.watch)
  kSimulated,      // computed from a model of the job (ranklab simulate): nothing trained
};

inline constexpr std::array<std::pair<RunOrigin, std::string_view>, 5> kRunOrigins = {{
    {RunOrigin::kRanklab, "ranklab"},
    {RunOrigin::kRanklabTrace, "ranklab-trace"},
    {RunOrigin::kPytorchImport, "pytorch-import"},
    {RunOrigin::kPytorchLive, "pytorch-live"},
    {RunOrigin::kSimulated, "simulated"},
}};

// The text the store keeps for `origin`.
inline std::string originName(RunOrigin origin) {
  for (const auto& [value, name] : kRunOrigins)
    if (value == origin) return std::string(name);
  return "ranklab";
}

// The origin a run was stored with; ranklab's own for a text no value names.
inline RunOrigin originOf(const NewRun& run) {
  for (const auto& [value, name] : kRunOrigins)
    if (run.origin == name) return value;
  return RunOrigin::kRanklab;
}

}  // namespace ranklab
