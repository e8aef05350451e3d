// bench_train_throughput: 1-rank training throughput of the benchmark MLP or CNN on
// Fashion-MNIST, in samples/s and in GEMM GFLOP/s.
//   mlp  784-256-128-10 (ReLU), SGD lr 0.05 momentum 0.9
//   cnn  conv(1->16, 5x5) pool ReLU conv(16->32, 5x5) pool ReLU fc(1568->10), same SGD
//        (the resources/jobs/fashion-cnn.toml model)
//   cnn-wide  conv(1->32, 5x5) pool ReLU conv(32->64, 5x5) pool ReLU fc(3136->256) ReLU
//        fc(256->128) ReLU fc(128->10) (the quickstart with model.kind = "cnn")
//   gpt  the resources/jobs/gpt-char.toml model (4 blocks, 4 heads, width 128, context 64,
//        byte vocabulary) on the default text corpus; a sample is a window of 64 tokens
// A timed step is the whole training step as the trainer runs it: take the next batch from
// a BatchStream over a world-1 ShardLoader (gathered ahead on its background thread, with
// the job file's default data.prefetch), forward, zero grads, backward, SGD update.
// bench/torch_train.py is the PyTorch twin. GFLOP/s counts the GEMM work of a step
// (2·M·N·K per GEMM: forward, weight gradients, input gradients except the first layer's),
// the figure the SGEMM peak is compared with; also per CPU-second of the training thread.
// Usage: bench_train_throughput --model mlp|cnn|cnn-wide|gpt --batch N --threads T --steps S
// --warmup W
//                               [--json]
#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "engine/data/batch_stream.h"
#include "engine/data/idx_dataset.h"
#include "engine/data/shard_loader.h"
#include "engine/data/text_dataset.h"
#include "engine/job/job_spec.h"
#include "engine/model/layers.h"
#include "engine/model/models.h"
#include "engine/model/transformer_block.h"
#include "engine/optim/optimizer.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {
namespace {

constexpr const char* kDataFolder = "/usr/share/datasets/fashion-mnist";
constexpr uint64_t kSeed = 1;
constexpr double kLr = 0.05;
constexpr double kMomentum = 0.9;

const GptShape kGpt{256, 64, 128, 4, 4, 0.f};

Network benchmarkModel(const std::string& kind, const Dataset& data) {
  if (kind == "gpt") return makeGpt(kGpt, kSeed);
  const Shape image{data.height, data.width, 1};
  if (kind == "mlp") return makeMlp(image, {256, 128}, data.classes, 0.f, kSeed);
  if (kind == "cnn-wide") return makeCnn(image, {32, 64}, 5, {256, 128}, data.classes, 0.f, kSeed);
  return makeCnn(image, {16, 32}, 5, {}, data.classes, 0.f, kSeed);
}

// CPU time of the whole process (clock CLOCK_PROCESS_CPUTIME_ID) or of the calling thread
// (CLOCK_THREAD_CPUTIME_ID): with other work on the machine, wall time alone cannot tell a
// slow program from a descheduled one.
double cpuSeconds(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
}

// The GPT's matrix products per sample of `context` tokens, forward: each block's four
// Linear layers (12 width^2 per token) and attention's two products (q k^T and p v, the whole
// square: 2 context^2 width), the tied head (width vocab per token); training is 3x that.
double gptFlopsPerSample(const GptShape& g) {
  const double t = g.context, c = g.width;
  const double block = 2.0 * t * 12.0 * c * c + 2.0 * 2.0 * t * t * c;
  return 3.0 * (g.blocks * block + 2.0 * t * c * g.vocab);
}

// GEMM floating-point operations of one training step per sample.
double gemmFlopsPerSample(const Network& model) {
  if (model.positions() > 1) return gptFlopsPerSample(kGpt);
  double flops = 0;
  bool first = true;  // the first weighted layer needs no input gradient
  for (const auto& layer : model.layers()) {
    const auto tensors = layer->paramTensors();
    if (tensors.empty()) continue;
    // Linear: (1 x in) . (in x out); Conv2d: (HoWo x Cin k k) . (Cin k k x Cout).
    const Shape out = layer->outputShape();
    const double rows = static_cast<double>(out.height) * out.width;
    const double forward = 2.0 * rows * static_cast<double>(tensors[0].size);
    flops += forward * (first ? 2 : 3);
    first = false;
  }
  return flops;
}

// One rank's training loop, set up once; step() is the unit being timed.
class TrainingStep {
 public:
  TrainingStep(const std::string& kind, const Dataset& data, int batch)
      : batch_(batch),
        model_(benchmarkModel(kind, data)),
        optimizer_(model_.parameterCount(), kMomentum, 0.0),
        loader_(checkedLoader(data, batch)),
        // Epochs without end: a long run reshuffles as the trainer does.
        batches_(loader_, data.features, 1, 0, std::numeric_limits<int>::max(),
                 DataSpec{}.prefetch) {}

  const Network& model() const { return model_; }
  void setPrecision(kernels::Precision precision) { model_.setPrecision(precision, true); }

  // Runs one full step and returns its mean loss.
  double step() {
    const Batch* next = batches_.next();
    const BatchLoss loss = model_.forward(next->images.data(), next->labels.data(), batch_);
    model_.zeroGrads();
    model_.backward(next->images.data(), next->labels.data(), batch_);
    optimizer_.step(model_.params(), model_.grads(), kLr);
    return loss.loss_sum / (static_cast<double>(batch_) * model_.positions());
  }

 private:
  static ShardLoader checkedLoader(const Dataset& data, int batch) {
    ShardLoader loader(data, /*rank=*/0, /*world=*/1, batch, kSeed);
    if (loader.stepsPerEpoch() == 0) {
      throw std::invalid_argument("bench_train_throughput: --batch " + std::to_string(batch) +
                                  " exceeds the " + std::to_string(data.count) +
                                  " training samples");
    }
    return loader;
  }

  int batch_;
  Network model_;
  Sgd optimizer_;
  ShardLoader loader_;
  BatchStream batches_;
};

int run(const bench::Args& args) {
  kernels::setBlasThreads(args.threads);
  if (kernels::blasThreads() != args.threads) {
    std::fprintf(stderr, "bench_train_throughput: asked OpenBLAS for %d threads, it uses %d\n",
                 args.threads, kernels::blasThreads());
    return 1;
  }
  const Dataset data = args.model == "gpt" ? loadText(kDefaultTextCorpus, kGpt.context).train
                                           : loadFashionMnist(kDataFolder, "train", 0);
  TrainingStep training(args.model, data, args.batch);
  // bf16 AMP's products, as amp.dtype = "bf16" trains (the logits' layer in fp32; bf16 needs
  // no loss scaling).
  if (args.dtype == "bf16") training.setPrecision(kernels::Precision::kBf16);
  const double flops_per_sample = gemmFlopsPerSample(training.model());

  for (int i = 0; i < args.warmup; ++i) training.step();
  double loss = 0;
  const double cpu_start = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  const double thread_cpu_start = cpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < args.steps; ++i) loss = training.step();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_seconds = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
  // The training thread alone: the batches are gathered on the BatchStream's thread.
  const double thread_cpu_seconds = cpuSeconds(CLOCK_THREAD_CPUTIME_ID) - thread_cpu_start;
  const double samples_per_s = static_cast<double>(args.steps) * args.batch / seconds;
  const double gflops = samples_per_s * flops_per_sample / 1e9;
  const double samples = static_cast<double>(args.steps) * args.batch;
  const double thread_cpu_gflops = samples * flops_per_sample / thread_cpu_seconds / 1e9;

  // A throughput figure from a run that diverged measures nothing.
  if (!std::isfinite(loss)) {
    std::fprintf(stderr, "bench_train_throughput: final loss is %f, training diverged\n", loss);
    return 1;
  }
  if (args.json) {
    std::printf(
        "{\"impl\":\"ranklab\",\"model\":\"%s\",\"dtype\":\"%s\",\"batch\":%d,\"threads\":%d,"
        "\"samples_per_s\":%.1f,\"tokens_per_s\":%.1f,\"cpu_s\":%.4f,\"train_thread_cpu_s\":%.4f,"
        "\"wall_s\":%.4f,\"gemm_"
        "flops_per_sample\":%.0f,"
        "\"gflops\":%.2f,\"thread_cpu_gflops\":%.2f,\"final_loss\":%.6f}\n",
        args.model.c_str(), args.dtype.c_str(), args.batch, args.threads, samples_per_s,
        samples_per_s * training.model().positions(), cpu_seconds, thread_cpu_seconds, seconds,
        flops_per_sample, gflops, thread_cpu_gflops, loss);
  } else {
    std::printf(
        "ranklab %s %s: batch %d, threads %d: %.1f samples/s, %.1f GEMM GFLOP/s, %.1f per "
        "training-thread CPU-second (%d steps in %.3f s), final loss %.4f\n",
        args.model.c_str(), args.dtype.c_str(), args.batch, args.threads, samples_per_s, gflops,
        thread_cpu_gflops, args.steps, seconds, loss);
  }
  return 0;
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  try {
    return ranklab::run(ranklab::bench::parseArgs("bench_train_throughput", argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
