#include "engine/train/traffic_formula.h"

#include <algorithm>

#include "comm/collectives/allreduce_registry.h"
#include "engine/job/strategy_traits.h"
#include "engine/model/transformer_block.h"

namespace ranklab {
namespace {

// Bytes sent per rank by ring passes (reduce-scatters or all-gathers) of `bytes` in all.
int64_t ringPassBytes(int64_t bytes, int n) {
  return n == 1 ? 0 : (n - 1) * bytes / n;
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

// Floats the slices' collectives move per sample, counted in ring passes (a reduce-scatter
// or an all-gather is one, (t - 1) / t of its floats sent; an all-reduce two): f or g, a
// slice layer's input twice; a GPT block's four all-reduces of its rows, eight passes, or
// under sequence parallelism ten of its whole rows (forward 2 all-gathers and 2
// reduce-scatters, backward 4 all-gathers and 2 reduce-scatters); the sequence layers' one
// all-gather each.
int64_t slicePassFloatsPerSample(const Network& part) {
  int64_t floats = 0;
  for (const auto& layer : part.layers()) {
    const auto* block = dynamic_cast<const TransformerBlock*>(layer.get());
    const Shape in = layer->inputShape(), out = layer->outputShape();
    if (block && block->splitsRows())
      floats += 10 * int64_t{block->shape().context} * block->shape().width;
    else if (block)
      floats += 8 * static_cast<int64_t>(layer->inputShape().size());
    else if (layer->communicates() && in != out)  // the sequence layers: their whole rows
      floats += static_cast<int64_t>(std::max(in.size(), out.size()));
    else if (layer->communicates())  // Megatron's f or g
      floats += 2 * static_cast<int64_t>(layer->inputShape().size());
  }
  return floats;
}

// Floats summed once per backward pass, whatever the batch: under sequence parallelism each
// block's LayerNorm gradients (two all-reduces' passes of 4 x width).
int64_t slicePassFloatsPerBackward(const Network& part) {
  int64_t floats = 0;
  for (const auto& layer : part.layers())
    if (const auto* block = dynamic_cast<const TransformerBlock*>(layer.get()))
      if (block->splitsRows()) floats += 2 * 4 * int64_t{block->shape().width};
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
  const int64_t backwards = int64_t{job.parallel.microbatches} * job.train.accumulate_steps;
  const int64_t pass_bytes =
      4 * (samples * slicePassFloatsPerSample(part) + backwards * slicePassFloatsPerBackward(part));
  f.tensor = ringPassBytes(pass_bytes, degrees.tensor);
  f.pipeline = pipelineFormula(job, part, at.stage, degrees.pipeline);
  return f;
}

}  // namespace ranklab
