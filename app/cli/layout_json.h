// The parallel layout of a stored run, read back from its resolved job, with the pipeline's
// bubble: measured (blocked on a neighbour over training time, mean over the ranks) beside
// GPipe's formula (p - 1) / (m + p - 1). For `runs show --json`.
#pragma once

#include <nlohmann/json.hpp>

#include "storage/records.h"

namespace ranklab {

// {"layout": {...}, "bubble_fraction": x, "bubble_formula": y}; the bubble fields are null
// without a pipeline, and everything is null when the stored job cannot be read.
nlohmann::json layoutJson(const RunSummary& s);

// A language model's figures: {"tokens_per_s": samples/s x context, "val_loss": the latest
// evaluation's loss on the validation split, "bigram_baseline": its bar}; each null where the
// run is not a GPT on text (or has no evaluation, or no baseline recorded).
nlohmann::json languageJson(const RunSummary& s);

// A rank's bytes sent per step to each group, measured (mean over its steps) beside the
// formula its run recorded: {"data": {"measured": m, "formula": f}, "tensor": ...,
// "pipeline": ...}; a formula is null where none applies (another algorithm, a codec) or the
// run recorded none.
nlohmann::json trafficJson(const RankSummary& r);

// A rank's memory ledger per layer: [{"layer": "h0", "bytes": kept for backward, "formula":
// the GPT's formula or null, "workspace": its backward's buffers}]; empty where the run
// recorded none.
nlohmann::json activationsJson(const RankSummary& r);

}  // namespace ranklab
