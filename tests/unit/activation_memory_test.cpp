// The memory ledger per layer against its formula (engine/model/activation_formula.h): a
// GPT's blocks, embedding, final LayerNorm, head and loss measured from the buffers they hold
// after a real training step, across context lengths, batch sizes, tensor degrees (with
// and without sequence parallelism), dropout and pipeline copies; and the step record's activations
// are their sum.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "storage/activations_event.h"
#include "tests/support/thread_ranks.h"
#include "tests/support/tiny_gpt.h"

namespace ranklab {
namespace {

// Rank `rank`'s ledger per layer, from its "activations" event.
std::vector<LayerActivations> ledgerOf(const testing::RunRecorder& rank) {
  for (const std::string& event : rank.events)
    if (event.rfind("activations: ", 0) == 0) return parseActivationsEvent(event.substr(13));
  return {};
}

struct Setting {
  int context, batch, tensor;
  double dropout;
  int pipeline = 1;
  bool sequence_parallel = false;
};

std::string describe(const Setting& s) {
  char text[112];
  std::snprintf(text, sizeof text, "context %d, batch %d, tensor %d%s, dropout %g, pipeline %d",
                s.context, s.batch, s.tensor, s.sequence_parallel ? " (SP)" : "", s.dropout,
                s.pipeline);
  return text;
}

JobSpec jobFor(const Setting& s) {
  JobSpec job = testing::tinyGpt({});
  job.model.context = s.context;
  job.model.dropout = s.dropout;
  job.train.batch_size = s.batch;
  job.train.max_steps = 2;
  job.train.epochs = 1;
  job.parallel.tensor = s.tensor;
  job.parallel.pipeline = s.pipeline;
  job.parallel.microbatches = s.pipeline > 1 ? 2 : 1;
  job.parallel.ranks = s.tensor * s.pipeline;
  job.parallel.sequence_parallel = s.sequence_parallel;
  return job;
}

TEST(ActivationMemory, EveryGptLayerHoldsWhatItsFormulaSays) {
  const std::vector<Setting> settings = {{16, 8, 1, 0},
                                         {64, 8, 1, 0},
                                         {16, 2, 1, 0},
                                         {64, 4, 2, 0},
                                         {32, 8, 4, 0},
                                         {32, 8, 1, 0.1},
                                         {32, 8, 1, 0, 2},
                                         {32, 8, 2, 0, 2},
                                         // Sequence parallelism: every term over the slices.
                                         {64, 4, 2, 0, 1, true},
                                         {32, 8, 4, 0, 1, true},
                                         {32, 8, 2, 0, 2, true}};
  std::printf("%-52s %10s %10s\n", "setting: a block's bytes", "measured", "formula");
  for (const Setting& s : settings) {
    const JobSpec job = jobFor(s);
    const Dataset train_set = testing::lineWindows(0, 6000, s.context),
                  test_set = testing::lineWindows(6000, 7000, s.context);
    const auto ranks = testing::trainWithThreads(job, train_set, test_set);
    for (size_t r = 0; r < ranks.size(); ++r) {
      const std::vector<LayerActivations> ledger = ledgerOf(ranks[r]);
      ASSERT_FALSE(ledger.empty()) << describe(s) << " rank " << r;
      int64_t sum = 0;
      for (const LayerActivations& layer : ledger) {
        ASSERT_TRUE(layer.formula) << describe(s) << ": " << layer.layer;
        const double gap = std::abs(double(layer.bytes - *layer.formula)) / double(*layer.formula);
        EXPECT_LT(gap, 0.05) << describe(s) << " rank " << r << ": " << layer.layer << " holds "
                             << layer.bytes << ", the formula says " << *layer.formula;
        if (layer.layer == "h0" && r == 0) {
          std::printf("%-52s %10lld %10lld\n", describe(s).c_str(),
                      static_cast<long long>(layer.bytes), static_cast<long long>(*layer.formula));
        }
        sum += layer.bytes;
      }
      // The step record's activations are the layers' sum (a pipeline's copies too).
      EXPECT_EQ(ranks[r].stats.back().mem_activations, sum) << describe(s);
    }
  }
}

}  // namespace
}  // namespace ranklab
