#include "engine/train/traffic_formula.h"

#include "comm/collectives/allreduce_registry.h"
#include "engine/job/strategy_traits.h"
#include "engine/model/transformer_block.h"

namespace ranklab {
namespace {

// A ring all-reduce's bytes sent per rank: 2 (n - 1) / n of `bytes`.
int64_t ringBytes(int64_t bytes, int n) {
  return n == 1 ? 0 : 2 * (n - 1) * bytes / n;
}

// Floats of the layers kept whole for the step under ZeRO 2 and 3 (a GPT's token table).
int64_t heldFloats(const Network& part) {
  int64_t floats = 0;
  for (const auto& layer : part.layers()) {
    if (!layer->usedOutsideItsTurn()) continue;
    for (const ParamTensor& tensor : layer->paramTensors())
      floats += static_cast<int64_t>(tensor.size);
  }
  return floats;
}

// The data group's all-reduce of the gradient, where every rank sends the same share (its
// entry's formula); ZeRO 3 gathers the parameters once more in backward, but for a held
// layer's, gathered once a step (a rank's share of it: its owners send it, on average
// (n - 1) / n of it each).
std::optional<int64_t> dataFormula(const JobSpec& job, const Network& part, int n) {
  const ParallelSpec& p = job.parallel;
  if (n == 1) return 0;
  const AllreduceAlgorithm* entry = findAllreduce(p.algorithm);
  if (!strategyTraitsOr(p.strategy).all_reduces_gradient || entry == nullptr ||
      !entry->even_share || job.compression.compresses())
    return std::nullopt;  // uneven shares, other strategies and codecs: their own counts
  const double share = entry->bytes_sent(0, n, p.ranks_per_host, part.parameterCount() * 4.0);
  const auto bytes = static_cast<int64_t>(share);
  if (p.zero != 3) return bytes;
  return bytes * 3 / 2 - heldFloats(part) * 4 * (n - 1) / n;
}

// Floats each f or g sums per sample: a slice layer's input; a GPT block's four.
int64_t sliceSumFloatsPerSample(const Network& part) {
  int64_t floats = 0;
  for (const auto& layer : part.layers()) {
    if (layer->communicates())  // Megatron's f or g
      floats += static_cast<int64_t>(layer->inputShape().size());
    else if (dynamic_cast<const TransformerBlock*>(layer.get()))
      floats += 4 * static_cast<int64_t>(layer->inputShape().size());
  }
  return floats;
}

int64_t pipelineFormula(const JobSpec& job, const Network& part, int stage, int stages) {
  if (stages == 1) return 0;
  const int64_t batch = job.train.batch_size;
  int64_t bytes = 0;
  if (stage + 1 < stages) bytes += batch * static_cast<int64_t>(part.outputShape().size()) * 4;
  if (stage > 0) bytes += batch * static_cast<int64_t>(part.inputShape().size()) * 4;
  for (const ParamView& view : part.views())  // a GPT's tied table, first stage to last
    if (view.name == "embed.token" || view.name == "lm_head.weight")
      bytes += static_cast<int64_t>(view.size) * 4;
  return bytes;
}

}  // namespace

std::string TrafficFormula::str() const {
  const auto text = [](const std::optional<int64_t>& v) {
    return v ? std::to_string(*v) : std::string("-");
  };
  return "data " + text(data) + " tensor " + text(tensor) + " pipeline " + text(pipeline);
}

TrafficFormula trafficFormula(const JobSpec& job, const Network& part, const LayoutCoords& at,
                              const LayoutDegrees& degrees) {
  TrafficFormula f;
  f.data = dataFormula(job, part, degrees.data);
  const int64_t samples = int64_t{job.train.batch_size} * job.train.accumulate_steps;
  f.tensor = ringBytes(samples * sliceSumFloatsPerSample(part) * 4, degrees.tensor);
  f.pipeline = pipelineFormula(job, part, at.stage, degrees.pipeline);
  return f;
}

}  // namespace ranklab
