// The CUDA device computes what the CPU device computes: each layer kind forward and backward
// from the same request and seed, a table of cases (the same class on both, so these check
// the device's passes, device_layer_ops.h, through the layer that runs them), the loss head,
// whole networks over 20 SGD steps (its memory, optimizer and codec operations:
// cuda_device_ops_test.cpp). Skipped with the reason where no GPU is present.
// Differences are measured relative to the largest expected value and printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/cuda_device.h"
#include "engine/model/models.h"
#include "engine/model/network.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/low_precision.h"
#include "kernels/cpu/mixed_gemm.h"
#include "kernels/cpu/optimizer_update.h"
#include "kernels/cuda/layer_kernels.h"
#include "kernels/gpu_probe.h"
#include "tests/support/cuda_device_support.h"

namespace ranklab {
namespace {

using testing::CudaDeviceTest;
using testing::expectClose;
using testing::expectSameBits;
using testing::Floats;
using testing::randomFloats;
using testing::randomLabels;

size_t parameterCount(const Layer& layer) {
  size_t count = 0;
  for (const auto& tensor : layer.paramTensors()) count += tensor.size;
  return count;
}

// One request made by the CPU device and the GPU's, bound to buffers of their own and drawn
// from one seed; runs the same passes on both and compares what they give.
class LayerPair {
 public:
  LayerPair(const LayerRequest& request, const ComputeDevice& gpu, uint64_t seed = 7)
      : gpu_device_(gpu),
        cpu_(cpuDevice().makeLayer(request)),
        gpu_(gpu.makeLayer(request)),
        count_(parameterCount(*cpu_)),
        cpu_params_(count_),
        cpu_grads_(count_, 123.f),  // garbage that a writing backward must overwrite
        gpu_params_(gpu.allocate(count_)),
        gpu_grads_(gpu.allocate(count_)) {
    EXPECT_EQ(cpu_->describe(), gpu_->describe());
    EXPECT_EQ(count_, parameterCount(*gpu_));
    EXPECT_EQ(cpu_->outputShape(), gpu_->outputShape());
    gpu.fill(gpu_grads_->data(), count_, 123.f);
    cpu_->bind(cpu_params_.data(), cpu_grads_.data());
    gpu_->bind(gpu_params_->data(), gpu_grads_->data());
    std::mt19937_64 cpu_rng(seed), gpu_rng(seed);
    cpu_->init(cpu_rng);
    gpu_->init(gpu_rng);
  }

  Layer& cpu() { return *cpu_; }
  Layer& gpu() { return *gpu_; }
  void absorbRelu() {
    EXPECT_TRUE(cpu_->absorbFollowingRelu());
    EXPECT_TRUE(gpu_->absorbFollowingRelu());
  }
  void setPrecision(kernels::Precision precision) {
    cpu_->setPrecision(precision);
    gpu_->setPrecision(precision);
  }

  // A CPU and a CUDA model from one seed start equal, bit for bit.
  void expectEqualParameters() {
    if (count_ == 0) return;
    expectSameBits("parameters after init", download(gpu_params_->data(), count_), cpu_params_);
  }

  // forward, then backward writing the gradients, then backward adding to them; compares
  // the output, the input gradient and the parameter gradients after each.
  // `inputs`: the forward's x (token ids for an embedding); random where empty.
  void compare(int batch, const ForwardPass& pass, double tolerance, const Floats& inputs = {}) {
    const size_t in = batch * cpu_->inputShape().size(), out = batch * cpu_->outputShape().size();
    const Floats x = inputs.empty() ? randomFloats(in, 11) : inputs, dy = randomFloats(out, 12);
    Floats cpu_y(out), cpu_dx(in);
    auto gpu_x = upload(x), gpu_dy = upload(dy);
    auto gpu_y = gpu_device_.allocate(out), gpu_dx = gpu_device_.allocate(in);
    gpu_device_.fill(gpu_dx->data(), in, 0.f);  // as cpu_dx: a layer without dx leaves it

    cpu_->forward(x.data(), cpu_y.data(), batch, pass);
    gpu_->forward(gpu_x->data(), gpu_y->data(), batch, pass);
    expectClose("forward y", download(gpu_y->data(), out), cpu_y, tolerance);
    for (bool overwrite : {true, false}) {
      const std::string step = overwrite ? " (writing)" : " (adding)";
      cpu_->overwriteGradients(overwrite);
      gpu_->overwriteGradients(overwrite);
      cpu_->backward(x.data(), cpu_y.data(), dy.data(), cpu_dx.data(), batch);
      gpu_->backward(gpu_x->data(), gpu_y->data(), gpu_dy->data(), gpu_dx->data(), batch);
      expectClose("backward dx" + step, download(gpu_dx->data(), in), cpu_dx, tolerance);
      if (count_ > 0) {
        expectClose("parameter gradients" + step, download(gpu_grads_->data(), count_), cpu_grads_,
                    tolerance);
      }
    }
  }

 private:
  std::unique_ptr<DeviceBuffer> upload(const Floats& host) {
    auto buffer = gpu_device_.allocate(host.size());
    gpu_device_.upload(buffer->data(), host.data(), host.size());
    return buffer;
  }
  Floats download(const float* from, size_t n) {
    Floats host(n);
    gpu_device_.download(host.data(), from, n);
    return host;
  }

  const ComputeDevice& gpu_device_;
  std::unique_ptr<Layer> cpu_, gpu_;
  size_t count_;
  Floats cpu_params_, cpu_grads_;
  std::unique_ptr<DeviceBuffer> gpu_params_, gpu_grads_;
};

LayerRequest request(LayerKind kind, Shape input, int outputs = 0, int kernel = 0,
                     float dropout = 0.f) {
  LayerRequest r;
  r.kind = kind;
  r.name = "layer0";
  r.input = input;
  r.outputs = outputs;
  r.kernel = kernel;
  r.dropout = dropout;
  return r;
}

ForwardPass training(uint64_t key = 0x1234abcdULL) {
  return {true, key};
}

constexpr double kFp32Tolerance = 1e-5;
// bf16 / fp16 operands are cast alike on both sides and their products are exact in fp32:
// only the order of the fp32 accumulation differs. An fp16 product is then rounded to fp16
// (as kernels::gemmFp16 does), where that order can move a value by one fp16 ulp (2^-10).
double lowPrecisionTolerance(kernels::Precision precision) {
  return precision == kernels::Precision::kFp16 ? 2e-3 : 1e-4;
}

// ---- the device itself (these run without a GPU too) ----

TEST(CudaDeviceIndex, OutOfRangeThrowsNamingTheIndexAndTheCount) {
  std::string why;
  const int count = kernels::usableGpus(&why);
  if (count == 0) {
    EXPECT_FALSE(why.empty());
  }
  try {
    cudaDevice(count);
    FAIL() << "cudaDevice(" << count << ") did not throw";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cuda:" + std::to_string(count)), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(count) + " usable"), std::string::npos) << message;
  }
  EXPECT_THROW(cudaDevice(-1), std::invalid_argument);
}

TEST_F(CudaDeviceTest, IsOneDevicePerIndexWithDeviceMemory) {
  EXPECT_EQ(&gpu(), &cudaDevice(0));
  EXPECT_EQ(gpu().name(), "cuda:0");
  EXPECT_FALSE(gpu().hostMemory());
  auto buffer = gpu().allocate(1001);
  EXPECT_EQ(buffer->size(), 1001u);
  EXPECT_EQ(toHost(buffer->data(), 1001), Floats(1001, 0.f));  // zeroed when made
  EXPECT_EQ(gpu().allocate(0)->size(), 0u);
}

// ---- layers against the CPU's ----

// One layer of each kind, made on both devices from one request and seed, and what its
// passes must match: the output, the input gradient and the parameter gradients (written,
// then added), within `tolerance` of the largest CPU value.
struct LayerCase {
  std::string name;  // the test's
  LayerRequest request;
  int batch = 1;
  ForwardPass pass = training();
  double tolerance = kFp32Tolerance;
  bool same_init = false;  // the parameters drawn alike, bit for bit
  bool absorb_relu = false;
  std::optional<kernels::Precision> precision = std::nullopt;
  uint64_t seed = 7;
  Floats inputs = {};  // the forward's x where it is not random (an embedding's token ids)
};

// gtest names a case by it, not by its bytes.
void PrintTo(const LayerCase& c, std::ostream* out) {
  *out << c.name;
}

// The MLP's and CNN's layers in fp32.
void addImageLayerCases(std::vector<LayerCase>& cases) {
  const auto add = [&](LayerCase c) { cases.push_back(std::move(c)); };
  add({.name = "Linear",
       .request = request(LayerKind::kLinear, {1, 1, 37}, 19),
       .batch = 13,
       .same_init = true});
  add({.name = "LinearWithAnAbsorbedRelu",
       .request = request(LayerKind::kLinear, {1, 1, 50}, 33),
       .batch = 17,
       .absorb_relu = true});
  LayerRequest row_slice = request(LayerKind::kLinear, {1, 1, 24}, 8);
  row_slice.slice = {SliceSplit::kInputs, 1, 2};  // a row-parallel slice other than the first
  add({.name = "LinearAddingNoBias", .request = row_slice, .batch = 9});
  for (int kernel : {1, 3, 4, 5})
    add({.name = "Conv2dKernel" + std::to_string(kernel),
         .request = request(LayerKind::kConv2d, {9, 7, 3}, 5, kernel),
         .batch = 4,
         .same_init = true,
         .seed = 3ull + kernel});
  // 24x24 pixels of 32*7*7 columns: ~0.9M floats an image, so 20 images take two chunks.
  add({.name = "Conv2dOverSeveralChunks",
       .request = request(LayerKind::kConv2d, {24, 24, 32}, 8, 7),
       .batch = 20});
  add({.name = "MaxPool2dOverOddSizes",
       .request = request(LayerKind::kMaxPool2d, {7, 5, 3}),
       .batch = 3,
       .tolerance = 0});
  add({.name = "Relu",
       .request = request(LayerKind::kReLU, {3, 4, 5}),
       .batch = 6,
       .tolerance = 0});
  add({.name = "DropoutInTraining",
       .request = request(LayerKind::kDropout, {1, 1, 1000}, 0, 0, 0.3f),
       .batch = 7,
       .pass = training(987654321),
       .tolerance = 0});
  add({.name = "DropoutInEvaluation",
       .request = request(LayerKind::kDropout, {2, 3, 4}, 0, 0, 0.5f),
       .batch = 5,
       .pass = ForwardPass{false, 42},
       .tolerance = 0});
  add({.name = "Flatten",
       .request = request(LayerKind::kFlatten, {3, 4, 5}),
       .batch = 4,
       .tolerance = 0});
}

// Linear and Conv2d in bf16 and fp16, each side casting its operands alike.
void addAmpLayerCases(std::vector<LayerCase>& cases) {
  const auto add = [&](LayerCase c) { cases.push_back(std::move(c)); };
  for (auto precision : {kernels::Precision::kBf16, kernels::Precision::kFp16}) {
    const std::string amp = precision == kernels::Precision::kBf16 ? "Bf16" : "Fp16";
    add({.name = "AmpLinear" + amp,
         .request = request(LayerKind::kLinear, {1, 1, 64}, 32),
         .batch = 16,
         .tolerance = lowPrecisionTolerance(precision),
         .absorb_relu = true,
         .precision = precision});
    add({.name = "AmpConv2d" + amp,
         .request = request(LayerKind::kConv2d, {8, 8, 4}, 6, 3),
         .batch = 3,
         .tolerance = lowPrecisionTolerance(precision),
         .precision = precision});
  }
}

// The GPT's own layers.
void addTransformerLayerCases(std::vector<LayerCase>& cases) {
  const auto add = [&](LayerCase c) { cases.push_back(std::move(c)); };
  // LayerNorm's rows (a block's tree of sums against the CPU's vector lanes), over a width
  // that is not a multiple of the block.
  add({.name = "LayerNorm",
       .request = request(LayerKind::kLayerNorm, {16, 1, 48}),
       .batch = 5,
       .same_init = true});
  // The exact GELU: the GPU's erff and expf against the CPU's polynomial approximations.
  add({.name = "Gelu", .request = request(LayerKind::kGelu, {16, 1, 40}), .batch = 3});
  // 4 heads over 3 sequences of 16 positions: cuBLAS's batched products and a warp's softmax
  // per row against the CPU's.
  LayerRequest attention = request(LayerKind::kCausalSelfAttention, {16, 1, 3 * 32});
  attention.heads = 4;
  add({.name = "CausalSelfAttention", .request = attention, .batch = 3});
  // The token and position tables: each row's gradient summed over its positions (repeated
  // tokens included), the position table's over the batch.
  LayerRequest embedding = request(LayerKind::kEmbedding, {12, 1, 1}, 24);
  embedding.vocab = 7;
  Floats tokens(3 * 12);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<float>((i * 5 + i / 7) % 7);
  add({.name = "Embedding",
       .request = embedding,
       .batch = 3,
       .tolerance = 1e-6,
       .same_init = true,
       .inputs = tokens});
}

std::vector<LayerCase> layerCases() {
  std::vector<LayerCase> cases;
  addImageLayerCases(cases);
  addAmpLayerCases(cases);
  addTransformerLayerCases(cases);
  return cases;
}

class LayerOnTheGpu : public CudaDeviceTest, public ::testing::WithParamInterface<LayerCase> {};

TEST_P(LayerOnTheGpu, MatchesTheCpu) {
  const LayerCase& c = GetParam();
  LayerPair pair(c.request, gpu(), c.seed);
  if (c.absorb_relu) pair.absorbRelu();
  if (c.precision) pair.setPrecision(*c.precision);
  if (c.same_init) pair.expectEqualParameters();
  pair.compare(c.batch, c.pass, c.tolerance, c.inputs);
}

INSTANTIATE_TEST_SUITE_P(Layers, LayerOnTheGpu, ::testing::ValuesIn(layerCases()),
                         [](const ::testing::TestParamInfo<LayerCase>& info) {
                           return info.param.name;
                         });

TEST_F(CudaDeviceTest, DropoutMaskHasTheCpuBits) {
  const size_t n = 100003;
  auto scale = gpu().allocate(n);
  for (float p : {0.f, 0.1f, 0.5f, 0.9f}) {
    for (uint64_t key : {uint64_t{0}, uint64_t{1}, uint64_t{0xdeadbeefcafef00d}}) {
      Floats expected(n);
      kernels::dropoutMask(key, p, expected.data(), n);
      cuda::dropoutMask(key, p, scale->data(), n);
      expectSameBits("dropout mask p=" + std::to_string(p), toHost(scale->data(), n), expected);
    }
  }
}

// The bias gradient's column sums, one pass for a few rows and runs of rows summed side by
// side for a tall matrix (a conv's at batch 512: 401,408 rows of 16 channels): within fp32
// rounding of a double sum, the same bits on every call, dz the CPU's ReLU mask exactly, and
// `accumulate` adding the same sums to what was there.
TEST_F(CudaDeviceTest, ColumnSumsOfEveryShapeAreTheSumsAndRepeatThemselves) {
  struct ColumnShape {
    size_t rows;
    int cols;
  };
  for (const ColumnShape shape :
       {ColumnShape{17, 33}, ColumnShape{100003, 37}, ColumnShape{401408, 16}}) {
    const size_t rows = shape.rows, n = rows * shape.cols;
    const std::string what = std::to_string(rows) + "x" + std::to_string(shape.cols);
    const Floats dy = randomFloats(n, 19), y = randomFloats(n, 20);
    Floats want_dz(n);
    kernels::reluBackward(dy.data(), y.data(), want_dz.data(), n);
    std::vector<double> want(shape.cols, 0.0), magnitude(shape.cols, 0.0);
    for (size_t i = 0; i < n; ++i) {
      want[i % shape.cols] += want_dz[i];
      magnitude[i % shape.cols] += std::abs(want_dz[i]);
    }
    auto on_dy = onGpu(dy), on_y = onGpu(y), dz = gpu().allocate(n);
    auto sums = gpu().allocate(shape.cols), again = gpu().allocate(shape.cols);
    cuda::reluMaskSumRows(on_dy->data(), on_y->data(), dz->data(), sums->data(), rows, shape.cols,
                          false);
    cuda::sumRows(again->data(), dz->data(), rows, shape.cols, false);
    expectSameBits("relu mask " + what, toHost(dz->data(), n), want_dz);
    const Floats got = toHost(sums->data(), shape.cols);
    // No value passes through more than ~128 fp32 additions: each off by 2^-24 of at most the
    // column's sum of magnitudes.
    for (int c = 0; c < shape.cols; ++c)
      EXPECT_LE(std::abs(got[c] - want[c]), 1e-5 * magnitude[c]) << what << " column " << c;
    expectSameBits("column sums again " + what, toHost(again->data(), shape.cols), got);
    const Floats before = randomFloats(shape.cols, 21);
    gpu().upload(again->data(), before.data(), shape.cols);
    cuda::sumRows(again->data(), dz->data(), rows, shape.cols, true);
    Floats added(shape.cols);
    for (int c = 0; c < shape.cols; ++c) added[c] = before[c] + got[c];
    expectSameBits("column sums added " + what, toHost(again->data(), shape.cols), added);
  }
}

// ---- the loss head ----

TEST_F(CudaDeviceTest, LossHeadMatchesTheCpu) {
  const int batch = 33, classes = 10;
  const Floats logits = randomFloats(batch * classes, 5, 3.f);
  const auto labels = randomLabels(batch, classes, 6);
  auto cpu_head = cpuDevice().makeLossHead();
  auto gpu_head = gpu().makeLossHead();
  auto gpu_logits = onGpu(logits);
  const BatchLoss want = cpu_head->forward(logits.data(), labels.data(), batch, classes);
  const BatchLoss got = gpu_head->forward(gpu_logits->data(), labels.data(), batch, classes);
  std::printf("  loss sum: cuda %.17g, cpu %.17g; correct: cuda %lld, cpu %lld\n", got.loss_sum,
              want.loss_sum, static_cast<long long>(got.correct),
              static_cast<long long>(want.correct));
  EXPECT_NEAR(got.loss_sum, want.loss_sum, 1e-6 * std::abs(want.loss_sum));
  EXPECT_EQ(got.correct, want.correct);

  const float scale = 0.37f / batch;
  Floats cpu_dlogits(logits.size());
  auto gpu_dlogits = gpu().allocate(logits.size());
  cpu_head->backward(cpu_dlogits.data(), labels.data(), batch, scale);
  gpu_head->backward(gpu_dlogits->data(), labels.data(), batch, scale);
  expectClose("dlogits", toHost(gpu_dlogits->data(), logits.size()), cpu_dlogits, kFp32Tolerance);
}

TEST_F(CudaDeviceTest, LossHeadRejectsALabelBeyondTheClasses) {
  auto head = gpu().makeLossHead();
  auto logits = onGpu(Floats(2 * 4, 0.f));
  const std::vector<uint8_t> labels = {1, 4};
  EXPECT_THROW(head->forward(logits->data(), labels.data(), 2, 4), std::invalid_argument);
}

// ---- whole networks: 20 SGD steps on both devices ----

struct StepData {
  Floats x;
  std::vector<uint8_t> labels;
};

StepData stepData(const Network& model, int batch, unsigned step) {
  return {randomFloats(batch * model.inputShape().size(), 100 + step),
          randomLabels(batch, model.classes(), 200 + step)};
}

// Trains both for `steps` SGD steps on the same batches (the network uploads the host
// inputs itself); compares every step's loss and, at the end, parameters and gradients.
void trainSideBySide(Network& on_cpu, Network& on_gpu, const ComputeDevice& gpu, int batch,
                     int steps) {
  ASSERT_EQ(on_cpu.describe(), on_gpu.describe());
  const size_t n = on_cpu.parameterCount();
  ASSERT_EQ(n, on_gpu.parameterCount());
  Floats gpu_params(n);
  gpu.download(gpu_params.data(), on_gpu.params(), n);
  expectSameBits("parameters after init", gpu_params, Floats(on_cpu.params(), on_cpu.params() + n));
  Floats cpu_velocity(n, 0.f);
  auto gpu_velocity = gpu.allocate(n);
  const float lr = 0.05f, momentum = 0.9f, weight_decay = 1e-4f;
  for (int step = 0; step < steps; ++step) {
    const StepData data = stepData(on_cpu, batch, step);
    const BatchLoss want = on_cpu.forward(data.x.data(), data.labels.data(), batch);
    const BatchLoss got = on_gpu.forward(data.x.data(), data.labels.data(), batch);
    EXPECT_NEAR(got.loss_sum, want.loss_sum, 1e-5 * std::abs(want.loss_sum)) << "step " << step;
    EXPECT_EQ(got.correct, want.correct) << "step " << step;
    for (Network* model : {&on_cpu, &on_gpu}) {
      model->zeroGrads();
      model->backward(data.x.data(), data.labels.data(), batch);
    }
    kernels::sgdUpdate(on_cpu.params(), on_cpu.grads(), cpu_velocity.data(), n, lr, momentum,
                       weight_decay, false);
    gpu.sgdUpdate(on_gpu.params(), on_gpu.grads(), gpu_velocity->data(), n, lr, momentum,
                  weight_decay, false);
  }
  Floats gpu_grads(n);
  gpu.download(gpu_params.data(), on_gpu.params(), n);
  gpu.download(gpu_grads.data(), on_gpu.grads(), n);
  // 20 steps let rounding differences grow a little: 1e-4 of the largest value.
  expectClose("parameters after training", gpu_params, Floats(on_cpu.params(), on_cpu.params() + n),
              1e-4);
  expectClose("last gradients", gpu_grads, Floats(on_cpu.grads(), on_cpu.grads() + n), 1e-4);
}

TEST_F(CudaDeviceTest, MlpTrainsAsOnTheCpu) {
  Network on_cpu = makeMlp({1, 1, 30}, {24, 16}, 5, 0.25f, 11);
  Network on_gpu = makeMlp({1, 1, 30}, {24, 16}, 5, 0.25f, 11, gpu());
  EXPECT_EQ(on_gpu.device().name(), "cuda:0");
  trainSideBySide(on_cpu, on_gpu, gpu(), 16, 20);
}

TEST_F(CudaDeviceTest, CnnTrainsAndEvaluatesAsOnTheCpu) {
  Network on_cpu = makeCnn({12, 12, 2}, {4, 6}, 3, {16}, 5, 0.2f, 13);
  Network on_gpu = makeCnn({12, 12, 2}, {4, 6}, 3, {16}, 5, 0.2f, 13, gpu());
  trainSideBySide(on_cpu, on_gpu, gpu(), 8, 20);
  // Evaluation in batches with a short last one: the input staged batch by batch.
  const StepData data = stepData(on_cpu, 40, 999);
  const BatchLoss want = on_cpu.evaluate(data.x.data(), data.labels.data(), 40, 16);
  const BatchLoss got = on_gpu.evaluate(data.x.data(), data.labels.data(), 40, 16);
  EXPECT_NEAR(got.loss_sum, want.loss_sum, 1e-4 * std::abs(want.loss_sum));
  EXPECT_EQ(got.correct, want.correct);
}

// ---- the GPT's layers ----

TEST_F(CudaDeviceTest, EmbeddingRejectsATokenOutsideTheVocabularyNamingIt) {
  LayerRequest r = request(LayerKind::kEmbedding, {4, 1, 1}, 8);
  r.vocab = 5;
  const auto layer = gpu().makeLayer(r);
  auto params = gpu().allocate(5 * 8 + 4 * 8), grads = gpu().allocate(5 * 8 + 4 * 8);
  layer->bind(params->data(), grads->data());
  const Floats tokens = {1, 2, 9, 0};
  auto x = gpu().allocate(4), y = gpu().allocate(4 * 8);
  gpu().upload(x->data(), tokens.data(), 4);
  try {
    layer->forward(x->data(), y->data(), 1, {});
    ADD_FAILURE() << "a token of 9 in a vocabulary of 5 was embedded";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("token 9.000000 at position 2"), std::string::npos)
        << e.what();
  }
}

// Every kind in the one list is in the CUDA device's table too, and describes itself,
// holds as many parameters and gives the shape the CPU's does.
TEST_F(CudaDeviceTest, EveryLayerKindIsMadeOnTheGpuAsOnTheCpu) {
  for (LayerKind kind : kLayerKinds) {
    SCOPED_TRACE(layerKindName(kind));
    LayerRequest r = request(kind, {6, 6, 2}, 3, 3, 0.5f);
    if (kind == LayerKind::kEmbedding) r.input = {6, 1, 1}, r.vocab = 5;
    if (kind == LayerKind::kCausalSelfAttention) r.input = {6, 1, 12}, r.heads = 2;
    LayerPair pair(r, gpu());
    pair.expectEqualParameters();
  }
}

// Counts past what an int (cuBLAS's dimensions, Shape) or a uint32 index (the sparse codecs')
// holds are refused naming the count, before any memory is touched.
TEST_F(CudaDeviceTest, CountsTooLargeForTheirTypesAreRefusedNamingThem) {
  const Shape huge{50000, 50000, 1};  // 2,500,000,000 values
  for (LayerKind kind : {LayerKind::kLinear, LayerKind::kFlatten}) {
    try {
      gpu().makeLayer(request(kind, huge, 1));
      FAIL() << "a layer over " << huge.size() << " inputs was made";
    } catch (const std::length_error& e) {
      EXPECT_NE(std::string(e.what()).find("2500000000"), std::string::npos) << e.what();
    }
  }
  const size_t n = size_t{1} << 32;
  std::vector<uint32_t> indices;
  Floats values;
  try {
    gpu().selectTopk(nullptr, n, 1, indices, values);
    FAIL() << "topk over 2^32 elements was not refused";
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("4294967296"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gpu().selectAtLeast(nullptr, n, 1.f, indices, values), std::length_error);
}

}  // namespace
}  // namespace ranklab
