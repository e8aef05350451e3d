// The memory ledger per layer, as the "activations" event tells it: each layer's bytes on
// this rank beside the formula (engine/model/activation_formula.h) where there is one.
#pragma once

#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "engine/model/network.h"

namespace ranklab {

// "per layer at micro-batch 16 x 2 copies (bytes kept for backward, formula, backward
// workspace): embed 65536 65536 131072; h0 ...; loss 262144 262144 0", a "-" where no
// formula is known (an MLP's layers). `layers` sums the model's `copies`, each of which ran
// micro-batches of the job's; `vocab`: the model's classes.
std::string activationsEventText(const std::vector<LayerMemory>& layers, const JobSpec& job,
                                 int vocab, int copies);

}  // namespace ranklab
