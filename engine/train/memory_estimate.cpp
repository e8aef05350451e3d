#include "engine/train/memory_estimate.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "comm/codecs/powersgd.h"
#include "comm/silent_peers.h"
#include "engine/data/text_dataset.h"
#include "engine/model/activation_formula.h"
#include "engine/model/layers.h"
#include "engine/model/models.h"
#include "engine/model/transformer_block.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/model_part.h"
#include "engine/train/pipeline_schedule.h"

namespace ranklab {

namespace {

constexpr size_t kFloat = sizeof(float);

size_t setBytes(int64_t samples, size_t features, size_t labels = 1) {
  return static_cast<size_t>(samples) * (features * kFloat + labels);
}

int64_t limited(int64_t all, int64_t limit) {
  return limit > 0 ? std::min(all, limit) : all;
}

// A text file's windows: 4 bytes of floats and 1 label per byte of the file (text_dataset.h).
size_t textBytes(const DataSpec& data) {
  std::error_code error;
  const uintmax_t bytes = std::filesystem::file_size(data.path, error);
  return error ? 0 : static_cast<size_t>(std::min(bytes, kMaxTextBytes)) * (kFloat + 1);
}

}  // namespace

DataShape dataShapeOf(const JobSpec& job) {
  const DataSpec& d = job.data;
  if (d.dataset ==
      DatasetKind::kFashionMnist) {  // 60,000 training and 10,000 test images of 28 x 28
    const int64_t samples = limited(60000, d.train_limit) + limited(10000, d.test_limit);
    return {{28, 28, 1}, 10, setBytes(samples, 28 * 28)};
  }
  if (d.dataset == DatasetKind::kText) return {{job.model.context, 1, 1}, kTextVocab, textBytes(d)};
  const int classes = d.dataset == DatasetKind::kSpirals ? d.arms : 2;
  return {{1, 1, 2}, classes, setBytes(d.samples + d.test_samples, 2)};
}

namespace {

size_t layerParameters(const Layer& layer) {
  size_t n = 0;
  for (const ParamTensor& tensor : layer.paramTensors()) n += tensor.size;
  return n;
}

// What a layer keeps for backward beyond its output, for a micro-batch of `rows` samples:
// the GPT's formula less its output, a dropout's mask, a max-pool's winners.
size_t keptBytes(const Layer& layer, const JobSpec& job, const std::optional<GptShape>& gpt,
                 int rows) {
  const size_t output = static_cast<size_t>(rows) * layer.outputShape().size() * kFloat;
  if (gpt) {
    const auto formula = gptActivationFormula(layer.name(), *gpt, rows, job.parallel.tensor,
                                              job.parallel.sequence_parallel);
    if (formula) return *formula > output ? *formula - output : 0;
  }
  if (dynamic_cast<const Dropout*>(&layer))
    return static_cast<size_t>(rows) * layer.inputShape().size() * kFloat;
  if (dynamic_cast<const MaxPool2d*>(&layer))
    return static_cast<size_t>(rows) * layer.outputShape().size();
  return 0;
}

// A layer's output (and its gradient's) bytes at `rows` samples; a sequence-parallel block
// holds its slice's rows alone.
size_t outputBytes(const Layer& layer, const JobSpec& job, int rows) {
  size_t bytes = static_cast<size_t>(rows) * layer.outputShape().size() * kFloat;
  if (job.parallel.sequence_parallel && dynamic_cast<const TransformerBlock*>(&layer))
    bytes /= static_cast<size_t>(job.parallel.tensor);
  return bytes;
}

// A convolution's own buffers, beyond the ledger's workspace (layers.h): its weight packed
// for im2col, its transpose and its gradient, and the zero-bordered input and its gradient.
size_t convolutionBuffers(const Layer& layer, const JobSpec& job, int rows) {
  if (!dynamic_cast<const Conv2d*>(&layer)) return 0;
  const Shape in = layer.inputShape();
  const size_t border = static_cast<size_t>(job.model.kernel_size / 2) * 2;
  const size_t padded = (in.height + border) * (in.width + border) * in.channels;
  return 3 * layerParameters(layer) * kFloat + 2 * static_cast<size_t>(rows) * padded * kFloat;
}

// The whole model's layers, and slice 0's as its rank builds them (every slice holds as
// many parameters): the estimate counts the part's own tensors and cuts the stages where the
// run does, so it needs no second copy of how layers are split.
struct Model {
  ModelLayers layers;  // the whole model's
  DataShape data;
  std::optional<GptShape> gpt;
  std::unique_ptr<SilentPeers> peers;  // slice 0's, for its part's f and g
  std::unique_ptr<TensorGroup> group;
  ModelLayers part;         // slice 0's layers (the whole model's without tensor parallelism)
  std::vector<bool> split;  // per whole layer: the part holds a cut of its tensors
  std::vector<size_t> bounds, part_bounds;  // each stage's first layer, in layers and in part
};

// One copy of a stage's activations and output gradients: outputs for `out_rows` samples
// (the largest batch it has seen: an evaluation's), the kept state for a micro-batch's.
void addCopy(RankMemory& m, const Model& model, const JobSpec& job, size_t first, size_t end,
             int micro, int out_rows) {
  const int tensor = std::max(1, job.parallel.tensor);
  bool inside = false;   // between a column-parallel Linear and its row-parallel partner
  bool learned = false;  // a layer before this one has parameters
  for (size_t l = 0; l < end; ++l) {
    const Layer& layer = *model.layers[l];
    const bool split_linear = model.split[l] && dynamic_cast<const Linear*>(&layer);
    // A slice holds 1/t of the column-parallel output and of what acts on it elementwise;
    // the f before a pair (but the model's first) keeps a whole copy of its input, the g
    // after it a whole copy of its output (tensor_parallel.cpp).
    const bool column = split_linear && !inside, row = split_linear && inside;
    const size_t full = outputBytes(layer, job, out_rows);
    const size_t output = (inside && !row) || column ? full / tensor : full;
    const size_t f_copy =
        column && learned ? static_cast<size_t>(out_rows) * layer.inputShape().size() * kFloat : 0;
    const size_t copies = f_copy + (row ? full : 0);
    if (split_linear) inside = !inside;
    learned = learned || !layer.paramTensors().empty();
    if (l < first) continue;
    m.activations += output + copies + keptBytes(layer, job, model.gpt, micro);
    m.workspace += output + copies + convolutionBuffers(layer, job, out_rows);
  }
}

// The loss head's probabilities on the last stage: the GPT's formula, or one per class.
size_t lossBytes(const Model& model, int rows) {
  if (model.gpt) return gptActivationFormula("loss", *model.gpt, rows).value_or(0);
  const Shape out = model.layers.back()->outputShape();
  return static_cast<size_t>(rows) * out.height * out.width * model.data.classes * kFloat;
}

// PowerSGD's buffers (powersgd_sync.h): the host's two summed buffers and warm start's Q, the
// device's P and Q, and error feedback's residual, sized by the engine's own PowerSgd.
size_t lowRankBytes(const Model& model, const JobSpec& job, int stage) {
  const size_t first = model.part_bounds[stage], end = model.part_bounds[stage + 1];
  std::vector<MatrixBlock> blocks = weightMatrices(model.part, first, end);
  size_t floats = 0;  // the stage's parameters
  for (size_t l = first; l < end; ++l) floats += layerParameters(*model.part[l]);
  const CodecOptions options = codecOptions(job);
  const PowerSgd sizes(std::move(blocks), floats, options.rank, options.warm_start, options.seed);
  const size_t residual = options.error_feedback ? floats : 0;
  return (sizes.firstFloats() + sizes.restOffset() + 3 * sizes.secondFloats() + residual) * kFloat;
}

RankMemory stageMemory(const Model& model, const JobSpec& job, int stage, bool evaluated) {
  const ParallelSpec& p = job.parallel;
  const size_t first = model.bounds[stage], end = model.bounds[stage + 1];
  const size_t replicas = static_cast<size_t>(std::max(1, degreesOf(job, p.ranks).data));
  size_t count = 0, largest = 0, held = 0;
  for (size_t l = model.part_bounds[stage]; l < model.part_bounds[stage + 1]; ++l) {
    const size_t n = layerParameters(*model.part[l]);
    count += n;
    largest = std::max(largest, n);
    if (model.part[l]->usedOutsideItsTurn()) held += n;
  }
  RankMemory m;
  m.stage = stage;
  const size_t bytes = count * kFloat;
  const size_t state_per_param =
      job.train.optimizer == OptimizerKind::kSgd ? 1 : 2;  // momentum; m and v
  m.params = p.zero == 3 ? bytes / replicas : bytes;
  m.grads = p.zero >= 2 ? bytes / replicas : bytes;
  m.optimizer = state_per_param * (p.zero >= 1 ? bytes / replicas : bytes);
  // ZeRO 2 and 3: a one-layer scratch each for gradients (and parameters), and the layers
  // used outside their turn held whole for the step (zero_sync.h).
  if (p.zero >= 2) m.buffers += (largest + held) * kFloat;
  if (p.zero == 3) m.buffers += (largest + held) * kFloat;
  if (job.compression.codec == "powersgd") m.buffers += lowRankBytes(model, job, stage);
  const int micro = std::max(1, job.train.batch_size / std::max(1, p.microbatches));
  // Evaluation runs whole batches: 256 samples, a sequence model its training batch.
  const int eval_rows = evaluated ? std::max(micro, model.gpt ? job.train.batch_size : 256) : micro;
  const int copies = p.pipeline == 1 ? 1
                     : p.schedule == PipelineOrder::kGpipe
                         ? p.microbatches
                         : std::min(p.pipeline - stage, p.microbatches);
  addCopy(m, model, job, first, end, micro, eval_rows);
  for (int c = 1; c < copies; ++c) addCopy(m, model, job, first, end, micro, micro);
  if (end == model.layers.size()) m.activations += copies * lossBytes(model, micro);
  m.data = model.data.bytes;
  m.baseline = kRankProcessBaseline;
  return m;
}

// A parameter server: its key range of the parameters and their optimizer state.
RankMemory serverMemory(const RankMemory& whole_model, const JobSpec& job) {
  RankMemory m;
  m.server = true;
  const size_t servers = static_cast<size_t>(std::max(1, job.parallel.servers));
  m.params = whole_model.params / servers;
  m.optimizer = whole_model.optimizer / servers;
  m.baseline = kRankProcessBaseline;
  return m;
}

// Per whole layer, whether its namesake in the part holds a cut of its tensors.
std::vector<bool> splitLayers(const ModelLayers& layers, const ModelLayers& part) {
  std::map<std::string, const Layer*> by_name;
  for (const auto& layer : part) by_name[layer->name()] = layer.get();
  std::vector<bool> split;
  for (const auto& layer : layers) {
    const auto found = by_name.find(layer->name());
    bool cut = false;
    if (found != by_name.end())
      for (const ParamTensor& t : found->second->paramTensors()) cut = cut || t.part.isCut();
    split.push_back(cut);
  }
  return split;
}

// Each stage's first layer in the whole model's layers: its first part layer's namesake.
std::vector<size_t> wholeBounds(const Model& model) {
  std::map<std::string, size_t> index;
  for (size_t l = 0; l < model.layers.size(); ++l) index[model.layers[l]->name()] = l;
  std::vector<size_t> bounds;
  for (size_t b = 0; b + 1 < model.part_bounds.size(); ++b)
    bounds.push_back(index.at(model.part[model.part_bounds[b]]->name()));
  bounds.push_back(model.layers.size());
  return bounds;
}

Model modelOf(const JobSpec& job) {
  Model model;
  model.data = dataShapeOf(job);
  const bool head_apart = job.parallel.pipeline > 1;
  model.layers =
      modelLayers(job.model, model.data.sample, model.data.classes, cpuDevice(), head_apart);
  if (job.model.kind == ModelKind::kGpt) model.gpt = gptShapeOf(job.model, model.data.classes);
  if (job.parallel.tensor > 1) {
    model.peers = std::make_unique<SilentPeers>(0, job.parallel.tensor);
    model.group = std::make_unique<TensorGroup>(*model.peers, job.parallel.sequence_parallel);
  }
  model.part = modelLayers(job.model, model.data.sample, model.data.classes, cpuDevice(),
                           head_apart, model.group.get());
  model.split = splitLayers(model.layers, model.part);
  model.part_bounds = stageBoundsOf(job, model.part);
  model.bounds = wholeBounds(model);
  return model;
}

}  // namespace

size_t RankMemory::total() const {
  return params + grads + optimizer + activations + workspace + buffers + data + baseline;
}

const RankMemory& MemoryEstimate::peak() const {
  return *std::max_element(ranks.begin(), ranks.end(),
                           [](const auto& a, const auto& b) { return a.total() < b.total(); });
}

bool MemoryEstimate::ranksDiffer() const {
  for (const RankMemory& r : ranks)
    if (r.total() != ranks.front().total()) return true;
  return false;
}

MemoryEstimate estimateMemory(const JobSpec& job, bool evaluated) {
  const Model model = modelOf(job);
  const ParallelSpec& p = job.parallel;
  std::vector<RankMemory> stages;
  for (int s = 0; s + 1 < static_cast<int>(model.bounds.size()); ++s)
    stages.push_back(stageMemory(model, job, s, evaluated));
  MemoryEstimate estimate;
  const LayoutDegrees degrees = degreesOf(job, p.ranks);
  for (int r = 0; r < p.ranks; ++r) {
    RankMemory m = stages[p.pipeline > 1 ? coordsOf(r, degrees).stage : 0];
    m.rank = r;
    estimate.ranks.push_back(m);
  }
  if (usesParameterServer(job)) {  // a server holds the whole model (no pipeline, no slices)
    for (int s = 0; s < p.servers; ++s) {
      estimate.ranks.push_back(serverMemory(stages.front(), job));
      estimate.ranks.back().rank = p.ranks + s;
    }
  }
  return estimate;
}

namespace {

// The sizing keys of the job, each with a way to halve it: what drivingKey weighs.
struct SizingKey {
  std::string name;
  std::function<int&(JobSpec&)> value;
};

std::vector<SizingKey> sizingKeys(const JobSpec& job) {
  std::vector<SizingKey> keys;
  const ModelKind kind = job.model.kind;
  if (kind != ModelKind::kGpt) {
    for (size_t i = 0; i < job.model.layers.size(); ++i)
      keys.push_back({"model.layers[" + std::to_string(i) + "]",
                      [i](JobSpec& j) -> int& { return j.model.layers[i]; }});
  }
  if (kind == ModelKind::kCnn) {
    for (size_t i = 0; i < job.model.channels.size(); ++i)
      keys.push_back({"model.channels[" + std::to_string(i) + "]",
                      [i](JobSpec& j) -> int& { return j.model.channels[i]; }});
  }
  if (kind == ModelKind::kGpt) {
    keys.push_back({"model.width", [](JobSpec& j) -> int& { return j.model.width; }});
    keys.push_back({"model.blocks", [](JobSpec& j) -> int& { return j.model.blocks; }});
    keys.push_back({"model.context", [](JobSpec& j) -> int& { return j.model.context; }});
  }
  keys.push_back({"train.batch_size", [](JobSpec& j) -> int& { return j.train.batch_size; }});
  return keys;
}

}  // namespace

std::string drivingKey(const JobSpec& job) {
  const size_t peak = estimateMemory(job).peak().total();
  std::string best;
  size_t best_saving = 0;
  for (const SizingKey& key : sizingKeys(job)) {
    JobSpec halved = job;
    int& value = key.value(halved);
    const int before = value;
    if (value < 2) continue;
    value /= 2;
    if (job.model.kind == ModelKind::kGpt && halved.model.width % halved.model.heads != 0) continue;
    size_t smaller = peak;
    try {
      smaller = estimateMemory(halved).peak().total();
    } catch (const std::exception&) {
      continue;  // a shape the model cannot take (too few pixels left for the stages)
    }
    if (smaller < peak && peak - smaller > best_saving) {
      best_saving = peak - smaller;
      best = key.name + " = " + std::to_string(before);
    }
  }
  return best;
}

std::string byteText(size_t bytes) {
  static const char* const kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 5) value /= 1000, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 || value >= 100 ? "%.0f %s" : "%.3g %s", value,
                kUnits[unit]);
  return text;
}

std::string partsText(const RankMemory& r) {
  const std::pair<const char*, size_t> parts[] = {{"parameters", r.params},
                                                  {"gradients", r.grads},
                                                  {"optimizer state", r.optimizer},
                                                  {"activations", r.activations},
                                                  {"output gradients", r.workspace},
                                                  {"buffers", r.buffers},
                                                  {"data", r.data},
                                                  {"process", r.baseline}};
  std::string text;
  for (const auto& [name, bytes] : parts)
    if (bytes > 0) text += (text.empty() ? "" : ", ") + std::string(name) + " " + byteText(bytes);
  return text;
}

}  // namespace ranklab
