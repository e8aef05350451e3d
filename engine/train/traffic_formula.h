// Bytes a rank should send per training step to each of its groups, by formula, for
// `runs show` to print beside what it measured: the data group's ring all-reduce of the
// rank's gradient, 2 (n - 1) / n of its bytes (ZeRO 1 and 2's reduce-scatter and all-gather
// the same, 3's 1.5 times); the tensor group's f and g, each a ring all-reduce of the batch's
// activation at that layer, 2 (t - 1) / t of it (a GPT block's four: batch x context x
// width; under sequence parallelism its reduce-scatters and all-gathers, (t - 1) / t each,
// and the LayerNorm gradients' sums); the pipeline's activations forward and their gradients
// backward, the batch's whole output or input of the stage, and a GPT's token table between its
// first and last stages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/job/job_spec.h"
#include "engine/model/network.h"
#include "engine/train/parallel_layout.h"

namespace ranklab {

struct TrafficFormula {
  std::optional<int64_t> data, tensor, pipeline;  // none: no formula for this setup
  // "data 123 tensor 0 pipeline 456" (a "-" for none): the "traffic" event's text after
  // "formula bytes per step: ".
  std::string str() const;
};

// For the stage (or slice) `part` of the model this rank holds, at `at` in a layout of
// `degrees`, training `job`.
TrafficFormula trafficFormula(const JobSpec& job, const Network& part, const LayoutCoords& at,
                              const LayoutDegrees& degrees);

}  // namespace ranklab
