// The job's training and test sets ([data] dataset): Fashion-MNIST from its IDX files, or a
// synthetic 2-D set (spirals, moons) drawn from the job's seed for fast teaching demos, or
// byte-level text (text_dataset.h) for the GPT.
#pragma once

#include <cstdint>

#include "engine/data/idx_dataset.h"
#include "engine/job/job_spec.h"

namespace ranklab {

struct DataSplits {
  Dataset train;
  Dataset test;
};

// Throws DataError naming the file or key when the data cannot be had. `context` is a text
// sample's length (model.context; engine/data/text_dataset.h), unused by the others.
DataSplits loadJobData(const DataSpec& data, uint64_t seed, int context = 0);

// `arms` interleaved spiral arms in the unit disc, one class per arm, samples dealt to the
// arms in turn; each point jittered by N(0, noise^2) in both coordinates.
Dataset makeSpirals(int64_t count, int arms, double noise, uint64_t seed);
// Two interleaving half circles (scikit-learn's make_moons), classes 0 and 1 in turn.
Dataset makeMoons(int64_t count, double noise, uint64_t seed);

}  // namespace ranklab
