// bench_mlp_throughput: 1-rank training throughput of the preset MLP (784-256-128-10, ReLU,
// softmax cross-entropy, SGD lr 0.05 momentum 0.9) on Fashion-MNIST, in samples/s.
// A timed step is the whole training step: gather the batch from a world-1 ShardLoader,
// forward, zero grads, backward, SGD update. bench/torch_mlp.py is the PyTorch twin.
// Usage: bench_mlp_throughput --batch N --threads T --steps S --warmup W [--json]
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/data/idx_dataset.h"
#include "engine/data/shard_loader.h"
#include "engine/model/models.h"
#include "engine/optim/optimizer.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {
namespace {

constexpr const char* kDataFolder = "/usr/share/datasets/fashion-mnist";
constexpr uint64_t kSeed = 1;
constexpr double kLr = 0.05;
constexpr double kMomentum = 0.9;

struct BenchArgs {
  int batch = 64;
  int threads = 1;
  int steps = 500;
  int warmup = 20;
  bool json = false;
};

int positiveInt(const std::string& flag, const std::string& value, int minimum) {
  size_t used = 0;
  int parsed = 0;
  try {
    parsed = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || parsed < minimum) {
    throw std::invalid_argument("bench_mlp_throughput: " + flag + " expects an integer >= " +
                                std::to_string(minimum) + ", got '" + value + "'");
  }
  return parsed;
}

BenchArgs parseArgs(int argc, char** argv) {
  BenchArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--json") {
      args.json = true;
      continue;
    }
    if (i + 1 >= argc)
      throw std::invalid_argument("bench_mlp_throughput: " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--batch")
      args.batch = positiveInt(flag, value, 1);
    else if (flag == "--threads")
      args.threads = positiveInt(flag, value, 1);
    else if (flag == "--steps")
      args.steps = positiveInt(flag, value, 1);
    else if (flag == "--warmup")
      args.warmup = positiveInt(flag, value, 0);
    else
      throw std::invalid_argument("bench_mlp_throughput: unknown option " + flag +
                                  " (allowed: --batch, --threads, --steps, --warmup, --json)");
  }
  return args;
}

// One rank's training loop, set up once; step() is the unit being timed.
class TrainingStep {
 public:
  TrainingStep(const Dataset& data, int batch)
      : batch_(batch),
        model_(makeMlp({1, 1, data.features}, {256, 128}, data.classes, 0.f, kSeed)),
        optimizer_(model_.parameterCount(), kMomentum, 0.0),
        loader_(data, /*rank=*/0, /*world=*/1, batch, kSeed),
        images_(static_cast<size_t>(batch) * data.features),
        labels_(batch) {
    if (loader_.stepsPerEpoch() == 0) {
      throw std::invalid_argument("bench_mlp_throughput: --batch " + std::to_string(batch) +
                                  " exceeds the " + std::to_string(data.count) +
                                  " training samples");
    }
    loader_.startEpoch(epoch_);
  }

  // Runs one full step and returns its mean loss.
  double step() {
    // Reshuffle when the epoch runs out, as the trainer does, so long runs stay valid.
    if (step_in_epoch_ == loader_.stepsPerEpoch()) {
      loader_.startEpoch(++epoch_);
      step_in_epoch_ = 0;
    }
    loader_.batch(step_in_epoch_++, images_.data(), labels_.data());
    const BatchLoss loss = model_.forward(images_.data(), labels_.data(), batch_);
    model_.zeroGrads();
    model_.backward(images_.data(), labels_.data(), batch_);
    optimizer_.step(model_.params(), model_.grads(), kLr);
    return loss.loss_sum / batch_;
  }

 private:
  int batch_;
  Network model_;
  Sgd optimizer_;
  ShardLoader loader_;
  std::vector<float> images_;    // (B, 784)
  std::vector<uint8_t> labels_;  // (B)
  int epoch_ = 1;
  int64_t step_in_epoch_ = 0;
};

int run(const BenchArgs& args) {
  kernels::setBlasThreads(args.threads);
  if (kernels::blasThreads() != args.threads) {
    std::fprintf(stderr, "bench_mlp_throughput: asked OpenBLAS for %d threads, it uses %d\n",
                 args.threads, kernels::blasThreads());
    return 1;
  }
  const Dataset data = loadFashionMnist(kDataFolder, "train", 0);
  TrainingStep training(data, args.batch);

  for (int i = 0; i < args.warmup; ++i) training.step();
  double loss = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < args.steps; ++i) loss = training.step();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double samples_per_s = static_cast<double>(args.steps) * args.batch / seconds;

  // A throughput figure from a run that diverged measures nothing.
  if (!std::isfinite(loss)) {
    std::fprintf(stderr, "bench_mlp_throughput: final loss is %f, training diverged\n", loss);
    return 1;
  }
  if (args.json) {
    std::printf(
        "{\"impl\":\"ranklab\",\"batch\":%d,\"threads\":%d,\"samples_per_s\":%.1f,"
        "\"final_loss\":%.6f}\n",
        args.batch, args.threads, samples_per_s, loss);
  } else {
    std::printf(
        "ranklab: batch %d, threads %d: %.1f samples/s (%d steps in %.3f s), final loss %.4f\n",
        args.batch, args.threads, samples_per_s, args.steps, seconds, loss);
  }
  return 0;
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  try {
    return ranklab::run(ranklab::parseArgs(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
