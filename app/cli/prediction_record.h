// What was predicted for a run, kept beside what it measured: a real run whose job (same
// model, batch, layout, codec, precision and faults, on the same machine) was simulated
// before records the latest such simulation as its `prediction` event when it ends (`ranklab
// run`, and every run `plan --run` launches); `runs show --json` prints it with the signed
// relative error of the measured run against it (docs/plan.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "app/cli/report_format.h"
#include "storage/run_store.h"

namespace ranklab {

// The newest simulated run of `real`'s job on `real`'s machine, if any.
std::optional<int64_t> matchingSimulation(RunStore& store, int64_t real);

// Stores the simulated run `simulated`'s prediction as run `real`'s `prediction` event.
void recordPrediction(RunStore& store, int64_t real, int64_t simulated);

// The same for the newest matching simulation, if there is one; its id.
std::optional<int64_t> recordMatchingPrediction(RunStore& store, int64_t real);

// A run's time per step and memory by the accuracy's measure (storage/analysis/step_measure.h)
// as JSON: {"step_s", "memory_bytes", "phases": {name: s}}.
nlohmann::json measuredStepJson(RunStore& store, int64_t run);

// {"prediction": {...}, "prediction_error": {"step", "memory"}} for a run that has one; an
// empty object otherwise.
nlohmann::json predictionJson(RunStore& store, int64_t run);

// A run's summary (its JSON with --json) followed by its prediction and the error, if any.
void printRunWithPrediction(std::ostream& out, RunStore& store, const RunSummary& summary,
                            bool json, SummaryDetail detail = SummaryDetail::full);

}  // namespace ranklab
