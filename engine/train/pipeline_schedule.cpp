#include "engine/train/pipeline_schedule.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "comm/steady_clock.h"

namespace ranklab {

namespace {

// Each block's first layer and counted cost: a block starts at every layer with parameters
// (and at layer 0), so a stage never separates a layer from the ReLU it absorbed.
struct Block {
  size_t first = 0;
  size_t cost = 0;
};

// A layer's multiply-adds per sample over a training step: each weight meets every output
// position once in forward, once for the input gradient and once for its own gradient;
// the network's first layer computes no input gradient.
size_t trainingMacs(const Layer& layer, bool first) {
  const Shape out = layer.outputShape();
  const size_t forward = layer.macsPerPosition() * static_cast<size_t>(out.height) * out.width;
  return forward * (first ? 2 : 3);
}

std::vector<Block> blocksOf(const ModelLayers& layers) {
  std::vector<Block> blocks;
  for (size_t l = 0; l < layers.size(); ++l) {
    const size_t cost = trainingMacs(*layers[l], l == 0);
    if (blocks.empty() || !layers[l]->paramTensors().empty()) blocks.push_back({l, 0});
    blocks.back().cost += cost;
  }
  return blocks;
}

}  // namespace

std::vector<size_t> stageBoundaries(const Network& model, int stages) {
  return stageBoundaries(model.layers(), stages);
}

std::vector<size_t> stageBoundaries(const Network& model, const std::vector<int>& counts) {
  return stageBoundaries(model.layers(), counts);
}

std::vector<size_t> stageBoundaries(const ModelLayers& layers, int stages) {
  const std::vector<Block> blocks = blocksOf(layers);
  const size_t n = blocks.size();
  if (stages < 1 || static_cast<size_t>(stages) > n) {
    throw std::invalid_argument("parallel.pipeline = " + std::to_string(stages) +
                                " stages, but the model has " + std::to_string(n) +
                                " blocks (a layer with parameters and what follows it) to "
                                "divide; use at most " +
                                std::to_string(n) + " stages or a deeper model");
  }
  // cost[k][i]: the least possible largest stage over blocks [0, i) in k stages.
  const size_t kInf = std::numeric_limits<size_t>::max();
  std::vector<std::vector<size_t>> cost(stages + 1, std::vector<size_t>(n + 1, kInf));
  std::vector<std::vector<size_t>> cut(stages + 1, std::vector<size_t>(n + 1, 0));
  std::vector<size_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + blocks[i].cost;
  cost[0][0] = 0;
  for (int k = 1; k <= stages; ++k) {
    for (size_t i = k; i <= n; ++i) {
      for (size_t j = k - 1; j < i; ++j) {
        if (cost[k - 1][j] == kInf) continue;
        const size_t largest = std::max(cost[k - 1][j], prefix[i] - prefix[j]);
        if (largest < cost[k][i]) cost[k][i] = largest, cut[k][i] = j;
      }
    }
  }
  std::vector<size_t> bounds(stages + 1, layers.size());
  for (size_t k = stages, i = n; k > 0; --k) {
    i = cut[k][i];
    bounds[k - 1] = blocks[i].first;
  }
  return bounds;
}

std::vector<size_t> stageBoundaries(const ModelLayers& layers, const std::vector<int>& counts) {
  const std::vector<Block> blocks = blocksOf(layers);
  int64_t sum = 0;
  for (int count : counts) sum += count;
  if (counts.empty() || *std::min_element(counts.begin(), counts.end()) < 1 ||
      sum != static_cast<int64_t>(blocks.size())) {
    throw std::invalid_argument(
        "parallel.stage_layers must give each stage at least one block "
        "and add up to the model's " +
        std::to_string(blocks.size()) + " blocks, got a sum of " + std::to_string(sum));
  }
  std::vector<size_t> bounds{0};
  size_t next = 0;
  for (size_t s = 0; s + 1 < counts.size(); ++s) {
    next += static_cast<size_t>(counts[s]);
    bounds.push_back(blocks[next].first);
  }
  bounds.push_back(layers.size());
  return bounds;
}

std::vector<PipelineSchedule::Pass> PipelineSchedule::passOrder(PipelineOrder order, int stage,
                                                                int stages, int microbatches) {
  std::vector<Pass> passes;
  const int m = microbatches;
  const int warmup = order == PipelineOrder::kGpipe ? m : std::min(stages - stage - 1, m);
  for (int i = 0; i < warmup; ++i) passes.push_back({true, i});
  for (int i = 0; i < m - warmup; ++i) {
    passes.push_back({true, warmup + i});
    passes.push_back({false, i});
  }
  for (int i = m - warmup; i < m; ++i) passes.push_back({false, i});
  return passes;
}

struct PipelineSchedule::Slot {
  std::unique_ptr<Network> own;  // null for the first slot, which is the model itself
  Network* net = nullptr;
  const float* x = nullptr;  // this micro-batch's input to the stage
  std::vector<float> input;  // received activations (not on the first stage)
  std::vector<float> dx;     // its gradient, sent back (not on the first stage)
  // Off the host (a GPU), MPI moves host copies: the output sent on, the output gradient
  // received, and dx as backward writes it in the device's memory.
  std::vector<float> output_host, output_grad_host;
  std::unique_ptr<DeviceBuffer> dx_device;
};

struct PipelineSchedule::StepState {
  Network* model = nullptr;
  const Batch* batch = nullptr;
  float loss_scale = 1;
  const StepHooks* hooks = nullptr;
  std::vector<int> begin, size;  // each micro-batch's first sample and sample count
  bool backward_started = false;
  int in_flight = 0;
  int64_t in_flight_bytes = 0;
  PassTimes times;
};

namespace {

// The bytes of layer outputs one micro-batch of n samples keeps for its backward.
int64_t stashBytes(const Network& net, int n) {
  size_t floats = 0;
  for (const auto& layer : net.layers()) floats += layer->outputShape().size();
  return static_cast<int64_t>(floats * sizeof(float)) * n;
}

}  // namespace

PipelineSchedule::PipelineSchedule(PipelineOrder order, int microbatches, Communicator& stages,
                                   std::function<Network()> make_stage, int labels_per_sample)
    : order_(order),
      microbatches_(microbatches),
      labels_per_sample_(labels_per_sample),
      stages_(stages),
      make_stage_(std::move(make_stage)) {}

int PipelineSchedule::samplesOf(const Batch& batch) const {
  return static_cast<int>(batch.labels.size()) / labels_per_sample_;
}

const uint8_t* PipelineSchedule::labelsOf(const Batch& batch, int sample) const {
  return batch.labels.data() + static_cast<size_t>(sample) * labels_per_sample_;
}

std::vector<LayerMemory> PipelineSchedule::memoryPerLayer(const Network& model) const {
  std::vector<LayerMemory> sum = model.memoryPerLayer();
  for (const auto& slot : slots_) {
    if (!slot->own) continue;  // the first copy is the model itself
    const std::vector<LayerMemory> copy = slot->own->memoryPerLayer();
    for (size_t l = 0; l < sum.size() && l < copy.size(); ++l) {
      sum[l].activations += copy[l].activations;
      sum[l].workspace += copy[l].workspace;
    }
  }
  return sum;
}

PipelineSchedule::Slot& PipelineSchedule::slotFor(Network& model, int micro) {
  const int p = stages_.size(), s = stages_.rank();
  const int copies =
      order_ == PipelineOrder::kGpipe ? microbatches_ : std::min(p - s, microbatches_);
  while (static_cast<int>(slots_.size()) < copies) {
    auto slot = std::make_unique<Slot>();
    if (!slots_.empty()) slot->own = std::make_unique<Network>(make_stage_());
    slots_.push_back(std::move(slot));
  }
  Slot& slot = *slots_[micro % copies];
  slot.net = slot.own ? slot.own.get() : &model;
  if (slot.own) slot.own->traceDevice(model.deviceTrace());  // a sampled step's, or none
  // Every copy reads and adds into the model's one pair of buffers.
  if (slot.own && slot.own->params() != model.params())
    slot.own->useBuffers(model.params(), model.grads());
  return slot;
}

namespace {

bool onHost(const Network& net) {
  return net.device().hostMemory();
}

}  // namespace

PipelineSchedule::Message PipelineSchedule::toHost(const Network& net, Message message,
                                                   std::vector<float>& host) {
  if (onHost(net) || message.floats == 0) return message;
  host.resize(message.floats);
  net.device().download(host.data(), message.data, message.floats);
  message.data = host.data();
  return message;
}

PipelineSchedule::Message PipelineSchedule::incoming(StepState& step, const Pass& pass) {
  const int s = stages_.rank(), last = stages_.size() - 1;
  Slot& slot = slotFor(*step.model, pass.micro);
  const size_t n = static_cast<size_t>(step.size[pass.micro]);
  if (pass.forward && s > 0) {
    slot.input.resize(n * slot.net->inputShape().size());
    return {slot.input.data(), slot.input.size(), s - 1};
  }
  if (!pass.forward && s < last) {
    const size_t floats = n * slot.net->outputShape().size();
    if (onHost(*slot.net)) return {slot.net->outputGradient(), floats, s + 1};
    slot.output_grad_host.resize(floats);  // uploaded by backward()
    return {slot.output_grad_host.data(), floats, s + 1};
  }
  return {};
}

PipelineSchedule::Message PipelineSchedule::forward(StepState& step, int micro) {
  Slot& slot = slotFor(*step.model, micro);
  const int s = stages_.rank(), last = stages_.size() - 1;
  const int n = step.size[micro];
  Network& net = *slot.net;
  slot.x = s == 0 ? step.batch->images.data() +
                        static_cast<size_t>(step.begin[micro]) * net.inputShape().size()
                  : slot.input.data();
  const int64_t t = steadyNowNs();
  Message out;
  if (s == last) {
    step.times.loss_sum +=
        net.forward(slot.x, labelsOf(*step.batch, step.begin[micro]), n).loss_sum;
  } else {
    out = {const_cast<float*>(net.forwardActivations(slot.x, n)),
           static_cast<size_t>(n) * net.outputShape().size(), s + 1};
    out = toHost(net, out, slot.output_host);
  }
  const int64_t done = steadyNowNs();
  step.times.forward_ns += done - t;
  step.times.passes.push_back({true, micro, t, done});
  step.times.stashed_peak = std::max(step.times.stashed_peak, ++step.in_flight);
  step.in_flight_bytes += stashBytes(net, n);
  step.times.stashed_bytes_peak = std::max(step.times.stashed_bytes_peak, step.in_flight_bytes);
  return out;
}

PipelineSchedule::Message PipelineSchedule::backward(StepState& step, int micro) {
  Slot& slot = slotFor(*step.model, micro);
  const int s = stages_.rank(), last = stages_.size() - 1;
  const int n = step.size[micro];
  Network& net = *slot.net;
  if (!step.backward_started && step.hooks->before_backward) step.hooks->before_backward();
  step.backward_started = true;
  const int64_t t = steadyNowNs();
  if (s == last) {
    // Each micro-batch's mean loss weighted by its share: the sum is the whole batch's mean.
    const int batch = samplesOf(*step.batch);
    net.setLossScale(step.loss_scale * static_cast<float>(n) / static_cast<float>(batch));
    net.lossGradient(labelsOf(*step.batch, step.begin[micro]), n);
  }
  if (s < last && !onHost(net)) {
    net.device().upload(net.outputGradient(), slot.output_grad_host.data(),
                        slot.output_grad_host.size());
  }
  Message out;
  if (s > 0) {
    slot.dx.resize(static_cast<size_t>(n) * net.inputShape().size());
    out = {slot.dx.data(), slot.dx.size(), s - 1};
    if (!onHost(net)) {
      if (!slot.dx_device || slot.dx_device->size() < slot.dx.size())
        slot.dx_device = net.device().allocate(slot.dx.size());
      out.data = slot.dx_device->data();
    }
  }
  const bool final_pass = micro + 1 == microbatches_;
  net.backwardFrom(slot.x, out.data, n, final_pass ? step.hooks->on_ready : GradientReadyFn{});
  if (out.data != nullptr && !onHost(net)) {
    net.device().download(slot.dx.data(), out.data, out.floats);
    out.data = slot.dx.data();
  }
  const int64_t done = steadyNowNs();
  step.times.backward_ns += done - t;
  step.times.passes.push_back({false, micro, t, done});
  --step.in_flight;
  step.in_flight_bytes -= stashBytes(net, n);
  return out;
}

void PipelineSchedule::waitCounted(StepState& step, Ticket& ticket) {
  if (!ticket) return;
  const int64_t t = steadyNowNs();
  ticket->wait();
  ticket.reset();
  step.times.wait_ns += steadyNowNs() - t;
}

PassTimes PipelineSchedule::run(Network& model, const Batch& batch, float loss_scale,
                                const StepHooks& hooks) {
  if (hooks.accumulate)
    throw std::logic_error("a pipeline accumulates its micro-batches, not whole steps");
  StepState step;
  step.model = &model;
  step.batch = &batch;
  step.loss_scale = loss_scale;
  step.hooks = &hooks;
  const int size = samplesOf(batch);
  for (int i = 0, begin = 0; i < microbatches_; ++i) {
    step.begin.push_back(begin);
    step.size.push_back(sliceSize(size, microbatches_, i));
    begin += step.size.back();
  }
  // Every copy adds into the one gradient buffer: zero it now (settle the lazy zeroing).
  model.zeroGrads();
  model.grads();
  const std::vector<Pass> passes = passOrder(order_, stages_.rank(), stages_.size(), microbatches_);
  Ticket receiving;  // the next pass's input, posted while this pass's output leaves
  for (size_t k = 0; k < passes.size(); ++k) {
    if (!receiving) receiving = post(step, incoming(step, passes[k]), /*send=*/false);
    waitCounted(step, receiving);
    const Message out =
        passes[k].forward ? forward(step, passes[k].micro) : backward(step, passes[k].micro);
    // As Megatron's batched p2p: the output's send and the next input's receive are posted
    // together and the send is waited for, so two neighbours sending to each other (1F1B's
    // steady state) both progress, and a send progresses while the receiver waits.
    Ticket sending = post(step, out, /*send=*/true);
    if (k + 1 < passes.size()) receiving = post(step, incoming(step, passes[k + 1]), false);
    waitCounted(step, sending);
  }
  // The loss from the last stage to every stage.
  const int64_t t = steadyNowNs();
  float loss = stages_.rank() == stages_.size() - 1 ? static_cast<float>(step.times.loss_sum) : 0;
  stages_.allreduceSumNative(&loss, 1);
  ++step.times.allreduces;
  step.times.loss_sum = loss;
  step.times.wait_ns += steadyNowNs() - t;
  return step.times;
}

Ticket PipelineSchedule::post(StepState& step, const Message& message, bool send) {
  if (message.floats == 0) return nullptr;
  const size_t bytes = message.floats * sizeof(float);
  if (send) {
    step.times.bytes_tx += static_cast<int64_t>(bytes);
    ++step.times.sends;
    return stages_.isend(message.data, bytes, message.peer, tags::kPipeline);
  }
  step.times.bytes_rx += static_cast<int64_t>(bytes);
  ++step.times.recvs;
  return stages_.irecv(message.data, bytes, message.peer, tags::kPipeline);
}

const float* PipelineSchedule::predict(Network& model, const float* x, int batch) {
  const int s = stages_.rank(), last = stages_.size() - 1;
  const size_t in = model.inputShape().size(), out = model.outputShape().size();
  const float* stage_input = x;
  if (s > 0) {
    predict_input_.resize(static_cast<size_t>(batch) * in);
    stages_.recv(predict_input_.data(), predict_input_.size() * sizeof(float), s - 1,
                 tags::kPipeline);
    stage_input = predict_input_.data();
  }
  const float* output = model.predict(stage_input, batch);
  if (s == last) return output;
  const Message sent =
      toHost(model, {const_cast<float*>(output), size_t(batch) * out, s + 1}, predict_output_);
  stages_.send(sent.data, sent.floats * sizeof(float), s + 1, tags::kPipeline);
  return nullptr;
}

ScoredSamples PipelineSchedule::evaluate(Network& model, const float* x, const uint8_t* labels,
                                         int64_t n, int batch) {
  const size_t in = model.inputShape().size();
  ScoredSamples scored;
  for (int64_t start = 0; start < n; start += batch) {
    const int b = static_cast<int>(std::min<int64_t>(batch, n - start));
    const float* output = predict(model, x + start * in, b);
    if (!output) continue;  // not the last stage: passed on
    const BatchLoss part = model.score(output, labels + start * labels_per_sample_, b);
    scored.loss_sum += part.loss_sum;
    scored.correct += part.correct;
    scored.samples += static_cast<int64_t>(b) * model.positions();  // scored positions
  }
  return scored;
}

std::unique_ptr<StepSchedule> makeStepSchedule(const JobSpec& job, ParallelLayout& layout,
                                               std::function<Network()> make_stage,
                                               int labels_per_sample) {
  if (layout.degrees().pipeline == 1)
    return std::make_unique<DataParallelSchedule>(job.parallel.microbatches);
  const PipelineOrder order =
      job.parallel.schedule == PipelineOrder::kGpipe ? PipelineOrder::kGpipe : PipelineOrder::k1F1B;
  return std::make_unique<PipelineSchedule>(order, job.parallel.microbatches,
                                            layout.pipelineGroup(), std::move(make_stage),
                                            labels_per_sample);
}

}  // namespace ranklab
