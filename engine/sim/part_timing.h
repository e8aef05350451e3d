// Measuring a part's compute on this machine: each layer's forward and backward at a
// micro-batch's rows, timed by the device trace a sampled step uses (the network's own
// passes, so a Linear that absorbed its ReLU is timed as it runs), the median of a few passes
// after a warm-up. What `ranklab calibrate` stores and the simulator looks up.
#pragma once

#include <string>

#include "engine/job/job_spec.h"
#include "engine/model/network.h"
#include "engine/sim/calibration.h"

namespace ranklab {

// The calibration key of a layer: its describe() and its parameter count (a slice's differ).
std::string layerKey(const Layer& layer);
// The loss head's key and its multiply-adds' stand-in (rows x positions x classes).
std::string lossKey(const Network& part);
// Multiply-adds of a layer's forward over `rows` samples.
double layerMacs(const Layer& layer, int rows);
// "Linear" of "Linear(784, 256)".
std::string layerKind(const std::string& key);

// Times `part` (the last stage's with its loss head) at `rows` samples on this process's BLAS
// threads (`threads`: recorded with each timing) and adds each layer's timing to `out`.
void timePart(Network& part, bool last_stage, int rows, int labels_per_sample, int threads,
              const std::string& precision, Calibration& out, int repeats = 5);

}  // namespace ranklab
