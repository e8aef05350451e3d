#include "engine/model/network.h"

#include <algorithm>
#include <stdexcept>

#include "engine/model/layers.h"
#include "engine/model/part_values.h"
#include "kernels/cpu/mixed_gemm.h"

namespace ranklab {
namespace {

// A layer's buffer: the one held for it, else the scratch, else its slice of the flat one.
float* firstOf(float* held, float* scratch, float* flat) {
  return held ? held : scratch ? scratch : flat;
}

}  // namespace

Network::Network(std::vector<std::unique_ptr<Layer>> layers, uint64_t seed,
                 const ComputeDevice& device)
    : layers_(std::move(layers)), device_(&device), head_(device.makeLossHead()) {
  allocateAndBind();
  std::mt19937_64 rng(seed);
  for (auto& layer : layers_) layer->init(rng);
  setDropoutStream(seed, 0);
}

Network::Network(std::vector<std::unique_ptr<Layer>> layers, PartOfModel part,
                 const ComputeDevice& device)
    : layers_(std::move(layers)),
      first_layer_(part.first_layer),
      device_(&device),
      head_(device.makeLossHead()) {
  allocateAndBind();
  for (auto& layer : layers_) layer->valuesGiven();
}

void Network::allocateAndBind() {
  if (layers_.empty()) throw std::invalid_argument("Network: no layers");
  size_t offset = 0;
  for (size_t l = 0; l < layers_.size(); ++l) {
    if (l > 0 && !(layers_[l]->inputShape() == layers_[l - 1]->outputShape())) {
      throw std::invalid_argument(
          "Network: " + layers_[l]->name() + " takes " + layers_[l]->inputShape().str() + " but " +
          layers_[l - 1]->name() + " gives " + layers_[l - 1]->outputShape().str());
    }
    layer_offset_.push_back(offset);
    for (const auto& tensor : layers_[l]->paramTensors()) {
      views_.push_back({layers_[l]->name() + "." + tensor.suffix, offset, tensor.size, tensor.rows,
                        tensor.part.isCut()});
      offset += tensor.size;
    }
    layer_count_.push_back(offset - layer_offset_.back());
  }
  count_ = offset;
  own_params_ = device_->allocate(offset);
  own_grads_ = device_->allocate(offset);
  bindLayers(own_params_->data(), own_grads_->data());
  relu_absorbed_.assign(layers_.size(), false);
  for (size_t l = 0; l + 1 < layers_.size(); ++l) {
    relu_absorbed_[l] = absorbIfRelu(*layers_[l], *layers_[l + 1]);
  }
}

void Network::bindLayers(float* params, float* grads) {
  params_ = params;
  grads_ = grads;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const HeldLayer held = l < held_.size() ? held_[l] : HeldLayer{};
    float* own_params = params_ ? params_ + layer_offset_[l] : nullptr;
    float* own_grads = grads_ ? grads_ + layer_offset_[l] : nullptr;
    layers_[l]->bind(firstOf(held.params, param_scratch_, own_params),
                     firstOf(held.grads, grad_scratch_, own_grads));
  }
}

void Network::holdLayersUsedOutsideTheirTurn(const HoldLayerFn& hold) {
  held_.assign(layers_.size(), {});
  for (size_t l = 0; l < layers_.size(); ++l) {
    if (layers_[l]->usedOutsideItsTurn() && layer_count_[l] > 0)
      held_[l] = hold(layer_offset_[l], layer_count_[l]);
  }
  bindLayers(params_, grads_);
}

float* Network::gradientsAt(size_t offset) {
  if (float* grads = settledGrads()) return grads + offset;
  for (size_t l = 0; l < held_.size(); ++l) {
    if (held_[l].grads && offset >= layer_offset_[l] && offset < layer_offset_[l] + layer_count_[l])
      return held_[l].grads + (offset - layer_offset_[l]);
  }
  throw std::logic_error("Network: parameter " + std::to_string(offset) +
                         " has no gradient kept past its layer's turn");
}

void Network::gatherParameters(size_t l) const {
  if (gather_ && layer_count_[l] > 0) gather_(layer_offset_[l], layer_count_[l]);
}

void Network::useBuffers(float* params, float* grads) {
  bindLayers(params, grads);
  // Layers keep no other pointer into the buffers (they re-read them each pass).
  own_params_.reset();
  own_grads_.reset();
}

void Network::useGradientScratch(float* scratch) {
  grad_scratch_ = scratch;
  bindLayers(params_, nullptr);
  own_grads_.reset();
}

void Network::useParameterScratch(float* scratch, ParamGatherFn gather) {
  param_scratch_ = scratch;
  gather_ = std::move(gather);
  bindLayers(nullptr, grads_);
  own_params_.reset();
}

size_t Network::largestLayerParameters() const {
  return *std::max_element(layer_count_.begin(), layer_count_.end());
}

size_t Network::activationBytes() const {
  size_t bytes = 0;
  for (const LayerMemory& layer : memoryPerLayer()) bytes += layer.activations;
  return bytes;
}

std::vector<LayerMemory> Network::memoryPerLayer() const {
  std::vector<LayerMemory> memory;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const size_t outputs = l < outputs_.size() ? outputs_[l]->size() * sizeof(float) : 0;
    // The output's gradient is the output's size.
    memory.push_back({layers_[l]->name(), outputs + layers_[l]->keptBytes(),
                      outputs + layers_[l]->workspaceBytes()});
  }
  if (head_ && head_->keptBytes() > 0) memory.push_back({"loss", head_->keptBytes(), 0});
  return memory;
}

std::string Network::describe() const {
  return describeLayers(layers_);
}

void Network::setDropoutStream(uint64_t seed, int rank) {
  dropout_seed_ =
      seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(rank) * 0xd1b54a32d192ed03ULL;
}

void setPrecisionOf(const ModelLayers& layers, kernels::Precision precision, bool head_in_fp32) {
  for (const auto& layer : layers) layer->setPrecision(precision);
  if (!head_in_fp32) return;
  for (size_t l = layers.size(); l-- > 0;) {
    if (!layers[l]->paramTensors().empty()) {
      layers[l]->setPrecision(kernels::Precision::kFp32);
      return;
    }
  }
}

void Network::setPrecision(kernels::Precision precision, bool head_in_fp32) {
  setPrecisionOf(layers_, precision, head_in_fp32);
}

void Network::ensureBatch(int batch) {
  if (batch <= batch_capacity_) return;
  batch_capacity_ = batch;
  outputs_.resize(layers_.size());
  output_grads_.resize(layers_.size());
  for (size_t l = 0; l < layers_.size(); ++l) {
    const size_t floats = static_cast<size_t>(batch) * layers_[l]->outputShape().size();
    outputs_[l] = device_->allocate(floats);
    output_grads_[l] = device_->allocate(floats);
  }
  if (!device_->hostMemory())
    staged_input_ = device_->allocate(static_cast<size_t>(batch) * inputShape().size());
}

const float* Network::stageInput(const float* x, int batch, const ForwardPass& pass) {
  if (device_->hostMemory()) return x;
  traceBegin(pass.training, "dev-input");
  // Queued: forward's loss comes down after it, and a step's batch outlives its forward.
  device_->uploadAsync(staged_input_->data(), x, static_cast<size_t>(batch) * inputShape().size());
  traceEnd(pass.training);
  return staged_input_->data();
}

void Network::traceBegin(bool traced, const char* kind, int layer) const {
  if (trace_ && traced) trace_->begin(kind, layer);
}

void Network::traceEnd(bool traced) const {
  if (trace_ && traced) trace_->end();
}

const float* Network::stagedInput(const float* x) const {
  return device_->hostMemory() ? x : staged_input_->data();
}

const float* Network::run(const float* x, int batch, const ForwardPass& pass) {
  ensureBatch(batch);
  const float* input = stageInput(x, batch, pass);
  for (size_t l = 0; l < layers_.size(); ++l) {
    ForwardPass layer_pass = pass;
    layer_pass.dropout_key = pass.dropout_key + 0xbf58476d1ce4e5b9ULL * (first_layer_ + l + 1);
    // A layer that absorbed the following ReLU writes the ReLU's output; the ReLU is skipped.
    const size_t written = relu_absorbed_[l] ? l + 1 : l;
    if (gate_ && layer_count_[l] > 0) gate_(layer_offset_[l], layer_count_[l]);
    gatherParameters(l);
    const bool traced = pass.training && !layers_[l]->communicates();
    traceBegin(traced, "dev-fwd", static_cast<int>(first_layer_ + l));
    layers_[l]->forward(input, outputs_[written]->data(), batch, layer_pass);
    traceEnd(traced);
    input = outputs_[written]->data();
    l = written;
  }
  return input;
}

const float* Network::forwardActivations(const float* x, int batch) {
  ForwardPass pass;
  pass.training = true;
  pass.dropout_key = dropout_seed_ + 0x94d049bb133111ebULL * ++training_passes_;
  return run(x, batch, pass);
}

BatchLoss Network::forward(const float* x, const uint8_t* labels, int batch) {
  const float* output = forwardActivations(x, batch);
  traceBegin(true, "dev-loss");
  const BatchLoss loss = head_->forward(output, labels, batch * positions(), classes());
  traceEnd(true);
  return loss;
}

float* Network::settledGrads() const {
  if (zero_pending_ && grads_) {
    device_->fill(grads_, count_, 0.f);
    zero_pending_ = false;
  }
  return grads_;
}

void Network::lossGradient(const uint8_t* labels, int batch) {
  traceBegin(true, "dev-loss");
  const int rows = batch * positions();  // the mean is over every position's loss
  head_->backward(outputGradient(), labels, rows, loss_scale_ / static_cast<float>(rows));
  traceEnd(true);
}

void Network::backward(const float* x, const uint8_t* labels, int batch,
                       const GradientReadyFn& on_ready) {
  lossGradient(labels, batch);
  backwardFrom(x, nullptr, batch, on_ready);
}

const float* Network::predict(const float* x, int batch) {
  ForwardPass pass;
  pass.training = false;
  return run(x, batch, pass);
}

BatchLoss Network::score(const float* output, const uint8_t* labels, int batch) {
  return head_->forward(output, labels, batch * positions(), classes());
}

void Network::backwardFrom(const float* x, float* dx, int batch, const GradientReadyFn& on_ready) {
  const size_t last = layers_.size() - 1;
  // After zeroGrads() every layer writes its gradients; otherwise they accumulate.
  for (auto& layer : layers_) layer->overwriteGradients(zero_pending_ || grad_scratch_);
  zero_pending_ = false;
  for (size_t l = last + 1; l-- > 0;) {
    if (l > 0 && relu_absorbed_[l - 1]) continue;  // differentiated by the layer before it
    const float* input = l == 0 ? stagedInput(x) : outputs_[l - 1]->data();
    float* input_grad = l == 0 ? dx : output_grads_[l - 1]->data();
    const size_t out = relu_absorbed_[l] ? l + 1 : l;
    gatherParameters(l);
    const bool traced = !layers_[l]->communicates();
    traceBegin(traced, "dev-bwd", static_cast<int>(first_layer_ + l));
    layers_[l]->backward(input, outputs_[out]->data(), output_grads_[out]->data(), input_grad,
                         batch);
    traceEnd(traced);
    if (on_ready && layer_count_[l] > 0) on_ready(layer_offset_[l], layer_count_[l]);
  }
  device_->synchronize();  // a GPU's queued kernels are backward's time, not the sync's
}

BatchLoss Network::evaluate(const float* x, const uint8_t* labels, int64_t n, int batch) {
  const size_t features = inputShape().size();
  BatchLoss total;
  for (int64_t start = 0; start < n; start += batch) {
    const int b = static_cast<int>(std::min<int64_t>(batch, n - start));
    const BatchLoss part = score(predict(x + start * features, b), labels + start * positions(), b);
    total.loss_sum += part.loss_sum;
    total.correct += part.correct;
  }
  return total;
}

}  // namespace ranklab
