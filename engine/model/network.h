// A feed-forward network: a chain of layers (engine/model/layers.h) and, apart from them, a
// softmax cross-entropy head (engine/model/loss_head.h). A pipeline stage runs the layers
// alone (forwardActivations, backwardFrom); forward/backward/evaluate add the head. All parameters
// live in one flat buffer (and gradients in a twin) with named views, so a strategy reduces one
// buffer (or buckets of it) and an optimizer is one loop. Each layer's tensors are contiguous,
// weight then bias, in PyTorch's layout.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/device_trace.h"
#include "engine/model/layer.h"
#include "engine/model/loss_head.h"

namespace ranklab {

struct ParamView {
  std::string name;  // "fc0.weight", "conv1.bias", ...
  size_t offset = 0;
  size_t size = 0;
  int rows = 0;         // a matrix's (ParamTensor::rows); 0: a vector
  bool sliced = false;  // a tensor-parallel slice holds its own part of it (TensorPart)
};

// Called by backward() as soon as one layer's parameter gradients are complete, in reverse
// layer order, with that layer's slice of the flat gradient buffer: where bucketed
// communication can start while the earlier layers are still being differentiated.
using GradientReadyFn = std::function<void(size_t offset, size_t count)>;
// Fills a layer's parameters [offset, offset + count) into the parameter scratch (ZeRO 3).
using ParamGatherFn = std::function<void(size_t offset, size_t count)>;
// Where a layer used outside its turn keeps its parameters and gradients for the step under
// the scratches (null: the flat buffer's, where there is one).
struct HeldLayer {
  float* params = nullptr;
  float* grads = nullptr;
};
using HoldLayerFn = std::function<HeldLayer(size_t offset, size_t count)>;

// One layer's share of the memory ledger, in bytes.
struct LayerMemory {
  std::string layer;       // its name: "h0"
  size_t activations = 0;  // its output and what it keeps for backward (Layer::keptBytes)
  size_t workspace = 0;    // its output's gradient and its backward's own buffers
};

// The precision of every layer's matrix products (AMP); head_in_fp32 keeps the last layer
// with parameters (the one producing the logits) in fp32.
void setPrecisionOf(const ModelLayers& layers, kernels::Precision precision,
                    bool head_in_fp32 = false);

class Network {
 public:
  // Takes the layers in order (each one's input shape is the previous one's output) and
  // draws the parameters layer by layer from `seed`, so every rank starts from one model.
  // The buffers and the loss head come from `device`, which made the layers.
  Network(std::vector<std::unique_ptr<Layer>> layers, uint64_t seed,
          const ComputeDevice& device = cpuDevice());
  // A part of a model (a pipeline stage from the whole model's layer `first_layer`, a
  // tensor slice, or both) whose values the caller uploads (buildModelPart): nothing drawn.
  struct PartOfModel {
    size_t first_layer = 0;
  };
  Network(std::vector<std::unique_ptr<Layer>> layers, PartOfModel part,
          const ComputeDevice& device);

  const ComputeDevice& device() const { return *device_; }

  Shape inputShape() const { return layers_.front()->inputShape(); }
  Shape outputShape() const { return layers_.back()->outputShape(); }
  // The head scores each position of a sample's output (a sequence's: each token) over the
  // classes of its last dimension: one label per position.
  int classes() const { return outputShape().channels; }
  int positions() const { return outputShape().height * outputShape().width; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  // "Linear(784, 256) -> ReLU() -> Linear(256, 10)": identifies the architecture.
  std::string describe() const;

  size_t parameterCount() const { return count_; }
  float* params() { return params_; }
  const float* params() const { return params_; }
  float* grads() { return settledGrads(); }
  const float* grads() const { return settledGrads(); }
  const std::vector<ParamView>& views() const { return views_; }
  // Moves the flat buffers into memory the caller owns and keeps alive (shared memory the
  // ranks of one host read the parameters from): `params` must already hold params()'s
  // values; `grads` is any memory of parameterCount() floats. Any pending zeroGrads() holds.
  void useBuffers(float* params, float* grads);
  // ZeRO 2: no flat gradient. Each layer writes its gradients (overwriting, in its own
  // layout) into `scratch`, over the previous layer's, so on_ready must take them before
  // the next layer's backward; grads() is null from then on. `scratch` holds
  // largestLayerParameters() floats.
  void useGradientScratch(float* scratch);
  // ZeRO 3: no flat parameters either. Each layer's parameters are read from `scratch`
  // (largestLayerParameters() floats), which `gather(offset, count)` fills with that
  // layer's slice of the flat index before its forward and again before its backward;
  // params() is null from then on.
  void useParameterScratch(float* scratch, ParamGatherFn gather);
  // Under the scratches: each layer used outside its turn (Layer::usedOutsideItsTurn, a
  // GPT's token table) is bound to the buffers `hold(offset, count)` gives it instead, which
  // keep its tensors for the whole step.
  void holdLayersUsedOutsideTheirTurn(const HoldLayerFn& hold);
  // The gradient of parameter `offset` of the flat index: in the flat gradient, or in the
  // held buffers of the layer that owns it (throws std::logic_error where it is in neither).
  float* gradientsAt(size_t offset);
  // Priority-scheduled communication: `gate(offset, count)` returns once that layer's slice
  // of the flat parameters holds this step's values; called before each layer's forward.
  void gateParameters(ParamGatherFn gate) { gate_ = std::move(gate); }
  size_t largestLayerParameters() const;
  // The memory ledger: bytes of the flat gradient (0 under a scratch), and of the layer
  // outputs and the state layers keep for backward (the outputs sized for the largest batch
  // seen, the state for the last forward's), in all and per layer.
  size_t flatGradientBytes() const { return grads_ ? count_ * sizeof(float) : 0; }
  size_t flatParameterBytes() const { return params_ ? count_ * sizeof(float) : 0; }
  size_t activationBytes() const;
  std::vector<LayerMemory> memoryPerLayer() const;

  // Dropout masks are drawn from (seed, rank, training pass number), so they are
  // reproducible and differ between ranks; the pass number is checkpointed.
  void setDropoutStream(uint64_t seed, int rank);
  uint64_t trainingPasses() const { return training_passes_; }
  void setTrainingPasses(uint64_t passes) { training_passes_ = passes; }

  // Non-null: each training pass's layers, input copy and loss head are timed on the
  // device into `trace` as they are queued (a sampled step); null stops it.
  void traceDevice(DeviceTrace* trace) { trace_ = trace; }
  DeviceTrace* deviceTrace() const { return trace_; }
  // Index of layers()[0] in the whole model (a pipeline stage's first): a DeviceSpan's layer.
  size_t firstLayer() const { return first_layer_; }

  // setPrecisionOf its layers; fp32 by default.
  void setPrecision(kernels::Precision precision, bool head_in_fp32 = false);
  // backward() differentiates loss_scale * mean loss (AMP's loss scaling); 1 by default.
  void setLossScale(float loss_scale) { loss_scale_ = loss_scale; }

  // Inputs x and labels are host memory on every device (the network uploads them);
  // outputs, gradients and params()/grads() are the device's memory.
  // Training forward pass of the layers alone over x (B, input): returns their output
  // (B, output), valid until the next forward; keeps what backwardFrom() needs.
  const float* forwardActivations(const float* x, int batch);
  // Where the gradient of the loss with respect to that output goes (B, output) before
  // backwardFrom(): the head writes it, or a pipeline stage receives it there.
  float* outputGradient() { return output_grads_.back()->data(); }
  // Backward through the layers from outputGradient() for the last forward over x: adds the
  // parameter gradients as backward() does, and writes dx (B, input) unless it is null.
  void backwardFrom(const float* x, float* dx, int batch, const GradientReadyFn& on_ready = {});

  // The head's gradient d(loss_scale * mean loss)/d(output) of the last forward(), written to
  // outputGradient(): a last pipeline stage's first half of backward().
  void lossGradient(const uint8_t* labels, int batch);
  // Evaluation forward of the layers alone (no dropout), and the head's loss over an output.
  const float* predict(const float* x, int batch);
  BatchLoss score(const float* output, const uint8_t* labels, int batch);

  // Training forward pass over x (B, input) and the head; keeps what backward() needs.
  BatchLoss forward(const float* x, const uint8_t* labels, int batch);
  // Zeroes the gradients lazily: the next backward() writes them instead of adding (no pass
  // over the buffer); reading grads() before then sees zeros.
  void zeroGrads() { zero_pending_ = true; }
  // Adds d(mean loss)/d(params) of the last forward() into grads(); calls on_ready (if set)
  // after each layer with parameters, last layer first.
  void backward(const float* x, const uint8_t* labels, int batch,
                const GradientReadyFn& on_ready = {});

  // Loss and accuracy over n samples in batches of `batch`, no dropout, no gradients.
  BatchLoss evaluate(const float* x, const uint8_t* labels, int64_t n, int batch);

 private:
  // Checks the chain of shapes, lays out the flat buffers and binds the layers to them.
  void allocateAndBind();
  const float* run(const float* x, int batch, const ForwardPass& pass);
  // Marks a piece of a training pass in trace_ (nothing where none is set, or when not
  // `traced`: evaluating, or a layer that talks to other ranks).
  void traceBegin(bool traced, const char* kind, int layer = -1) const;
  void traceEnd(bool traced) const;
  // x itself where the device computes in host memory, else its copy in the device's.
  const float* stageInput(const float* x, int batch, const ForwardPass& pass);
  const float* stagedInput(const float* x) const;
  void ensureBatch(int batch);
  // Points params_, grads_ and every layer at these buffers (or at the scratches).
  void bindLayers(float* params, float* grads);
  // Before layer l runs forward or backward: its parameters into the scratch (ZeRO 3).
  void gatherParameters(size_t l) const;
  // grads_, zeroed first if a zeroGrads() is still pending.
  float* settledGrads() const;

  std::vector<std::unique_ptr<Layer>> layers_;
  size_t first_layer_ = 0;            // index of layers_[0] in the whole model (a stage's)
  std::vector<size_t> layer_offset_;  // each layer's first parameter in the flat buffer
  std::vector<size_t> layer_count_;   // and how many it owns
  std::vector<bool> relu_absorbed_;   // [l]: layer l applies the ReLU at l + 1 itself
  size_t count_ = 0;
  const ComputeDevice* device_;
  std::unique_ptr<DeviceBuffer> own_params_, own_grads_;  // the buffers until useBuffers()
  float* params_ = nullptr;
  // Written through a const read: a pending zeroGrads() is carried out by whichever reader
  // comes first.
  float* grads_ = nullptr;
  mutable bool zero_pending_ = false;
  float* grad_scratch_ = nullptr;   // useGradientScratch()
  float* param_scratch_ = nullptr;  // useParameterScratch()
  std::vector<HeldLayer> held_;     // [l]: holdLayersUsedOutsideTheirTurn(), else empty
  ParamGatherFn gather_;
  ParamGatherFn gate_;            // gateParameters()
  DeviceTrace* trace_ = nullptr;  // traceDevice()
  std::vector<ParamView> views_;
  uint64_t dropout_seed_ = 0;
  float loss_scale_ = 1.f;
  uint64_t training_passes_ = 0;
  int batch_capacity_ = 0;
  // In the device's memory: outputs_[l] (B, output of layer l), output_grads_[l] the same
  // shape (d loss / d outputs_[l]), and on a device without host memory the input (B, input)
  // uploaded from the caller's host batch.
  std::vector<std::unique_ptr<DeviceBuffer>> outputs_;
  std::vector<std::unique_ptr<DeviceBuffer>> output_grads_;
  std::unique_ptr<DeviceBuffer> staged_input_;
  std::unique_ptr<LossHead> head_;
};

}  // namespace ranklab
