// Full training steps of the MLP and the CNN against PyTorch 1.13, from the same initial
// weights and batch: tests/reference/torch_training_steps.py writes the reference (the
// ctest fixture torch_reference runs it before this test). For each optimizer case, three
// steps on one batch: the loss, every gradient and every parameter after the update.
// Tolerances (absolute, float32 against float32 with different summation orders):
//   loss 2e-6; gradients 2e-6; parameters 2e-6 after an SGD step, 2e-5 after Adam/AdamW
//   (whose update divides by sqrt(v) + eps and so magnifies the tiniest gradients).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "engine/model/models.h"
#include "engine/model/transformer_block.h"
#include "engine/optim/optimizer.h"
#include "engine/train/gradient_norm.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {
namespace {

using Records = std::map<std::string, std::vector<float>>;

Records readReference(const std::string& model) {
  const std::string path = std::string(RANKLAB_TORCH_REFERENCE_DIR) + "/" + model + ".bin";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << path << ": missing; it is written by /usr/bin/python3 "
                  << "tests/reference/torch_training_steps.py " << RANKLAB_TORCH_REFERENCE_DIR
                  << " (the ctest fixture torch_reference runs it)";
    return {};
  }
  Records records;
  uint16_t length = 0;
  while (in.read(reinterpret_cast<char*>(&length), sizeof length)) {
    std::string name(length, '\0');
    uint64_t count = 0;
    in.read(name.data(), length);
    in.read(reinterpret_cast<char*>(&count), sizeof count);
    std::vector<float> values(count);
    in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * 4));
    if (!in) {
      ADD_FAILURE() << path << ": truncated in record " << name;
      return {};
    }
    records[name] = std::move(values);
  }
  return records;
}

// The largest |ours - reference| over all values, printed, and checked against `tolerance`.
double expectClose(const float* ours, const std::vector<float>& reference, double tolerance,
                   const std::string& what) {
  double worst = 0;
  size_t where = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double diff = std::abs(static_cast<double>(ours[i]) - reference[i]);
    if (diff > worst) {
      worst = diff;
      where = i;
    }
  }
  std::printf("  %-28s largest |ranklab - pytorch| = %.3g (at %zu of %zu), tolerance %.0e\n",
              what.c_str(), worst, where, reference.size(), tolerance);
  EXPECT_LE(worst, tolerance) << what << " at " << where << ": ranklab " << ours[where]
                              << ", pytorch " << reference[where];
  return worst;
}

struct OptimizerCase {
  std::string name;
  TrainSpec spec;
  double lr;
};

void replay(const std::string& model_name, Network model, const std::vector<OptimizerCase>& cases) {
  kernels::setBlasThreads(1);  // as a rank on a machine shared by its ranks runs
  const Records ref = readReference(model_name);
  ASSERT_FALSE(ref.empty());
  ASSERT_EQ(ref.at("params").size(), model.parameterCount()) << model.describe();
  const std::vector<float>& x = ref.at("x");
  std::vector<uint8_t> labels;
  for (float label : ref.at("labels")) labels.push_back(static_cast<uint8_t>(label));
  const int rows = static_cast<int>(labels.size());  // scored positions: a label each
  const int batch = rows / model.positions();
  std::printf("%s: %s, batch %d\n", model_name.c_str(), model.describe().c_str(), batch);

  for (const auto& c : cases) {
    std::memcpy(model.params(), ref.at("params").data(), model.parameterCount() * sizeof(float));
    auto optimizer = makeOptimizer(c.spec, model.parameterCount());
    const bool adam = c.spec.optimizer != OptimizerKind::kSgd;
    const double params_tolerance = adam ? 2e-5 : 2e-6;
    std::vector<bool> noise(model.parameterCount(), false);
    for (int step = 1; step <= 3; ++step) {
      const std::string key = c.name + "." + std::to_string(step);
      const float loss =
          static_cast<float>(model.forward(x.data(), labels.data(), batch).loss_sum / rows);
      model.zeroGrads();
      model.backward(x.data(), labels.data(), batch);
      expectClose(&loss, ref.at(key + ".loss"), 2e-6, key + " loss");
      expectClose(model.grads(), ref.at(key + ".grads"), 2e-6, key + " gradients");
      optimizer->step(model.params(), model.grads(), c.lr);
      if (!adam) {
        expectClose(model.params(), ref.at(key + ".params"), params_tolerance, key + " parameters");
        continue;
      }
      // Adam divides each gradient by its own size, so where the gradient is rounding noise
      // (the GPT's key biases: analytically 0, as a softmax ignores what a key bias adds to a
      // whole row) each framework's noise moves the parameter by up to lr, either way. Those
      // are held to that bound; every other parameter to the tolerance.
      // Noise on either side: PyTorch's sum can round to exactly 0 where ranklab's does not
      // (and the other way), which depends on each CPU's kernels.
      const std::vector<float>& grads = ref.at(key + ".grads");
      const float* own_grads = model.grads();
      for (size_t i = 0; i < noise.size(); ++i) {
        const float larger = std::max(std::abs(grads[i]), std::abs(own_grads[i]));
        noise[i] = noise[i] || (larger != 0.f && larger < 1e-8f);
      }
      std::vector<float> ours(model.params(), model.params() + model.parameterCount());
      std::vector<float> want = ref.at(key + ".params");
      size_t held = 0;
      for (size_t i = 0; i < noise.size(); ++i) {
        if (!noise[i]) continue;
        ++held;
        EXPECT_LE(std::abs(ours[i] - want[i]), 2 * c.lr * step * 1.01) << key << " parameter " << i;
        ours[i] = want[i];
      }
      expectClose(ours.data(), want, params_tolerance,
                  key + " parameters" + (held ? " (" + std::to_string(held) + " noise)" : ""));
    }
  }
}

TrainSpec sgd(double momentum, bool nesterov, double weight_decay) {
  TrainSpec spec;
  spec.optimizer = OptimizerKind::kSgd;
  spec.momentum = momentum;
  spec.nesterov = nesterov;
  spec.weight_decay = weight_decay;
  return spec;
}

TrainSpec adam(const std::string& kind, double weight_decay) {
  TrainSpec spec;
  spec.optimizer = choiceFrom<OptimizerKind>(kind);
  spec.weight_decay = weight_decay;
  return spec;
}

TEST(TorchStep, MlpMatchesPyTorch) {
  replay("mlp", makeMlp({28, 28, 1}, {64, 32}, 10, 0.f, 1),
         {{"sgd_nesterov", sgd(0.9, true, 1e-3), 0.1}, {"adam", adam("adam", 1e-3), 1e-3}});
}

// nanoGPT's model: embeddings, two blocks of causal attention and GELU MLP, the tied head;
// the loss over every position.
TEST(TorchStep, GptMatchesPyTorch) {
  replay("gpt", makeGpt({32, 8, 16, 4, 2, 0.f}, 1),
         {{"sgd", sgd(0.9, false, 0.0), 0.1}, {"adamw", adam("adamw", 0.1), 1e-3}});
}

// 20 AdamW steps of the GPT, each on its own batch, the gradient clipped to norm 0.5 by the
// trainer's clipping (engine/train/gradient_norm.h) as by PyTorch's clip_grad_norm_: every
// step's loss and its norm before clipping within 1e-5 relative.
TEST(TorchStep, GptTrainsTwentyClippedAdamWStepsAsPyTorch) {
  kernels::setBlasThreads(1);
  const Records ref = readReference("gpt");
  ASSERT_FALSE(ref.empty());
  Network model = makeGpt({32, 8, 16, 4, 2, 0.f}, 1);
  std::memcpy(model.params(), ref.at("params").data(), model.parameterCount() * sizeof(float));
  TrainSpec spec = adam("adamw", 0.1);
  auto optimizer = makeOptimizer(spec, model.parameterCount());
  const GradientNorm clip(0.5, {}, {});
  const std::vector<float>& xs = ref.at("clip.x");
  const std::vector<float>& ys = ref.at("clip.labels");
  const size_t steps = ref.at("clip.losses").size(), per_step = xs.size() / steps;
  const int batch = static_cast<int>(per_step) / model.positions();
  std::vector<float> losses, norms;
  for (size_t k = 0; k < steps; ++k) {
    std::vector<uint8_t> labels;
    for (size_t i = 0; i < per_step; ++i)
      labels.push_back(static_cast<uint8_t>(ys[k * per_step + i]));
    const float* x = xs.data() + k * per_step;
    losses.push_back(
        static_cast<float>(model.forward(x, labels.data(), batch).loss_sum / per_step));
    model.zeroGrads();
    model.backward(x, labels.data(), batch);
    int64_t sums = 0;
    norms.push_back(static_cast<float>(
        clip.measureAndClip(model, model.grads(), 0, model.parameterCount(), cpuDevice(), sums)));
    optimizer->step(model.params(), model.grads(), 1e-2);
  }
  std::vector<float> loss_gap, norm_gap;
  for (size_t k = 0; k < steps; ++k) {
    loss_gap.push_back(losses[k] / ref.at("clip.losses")[k] - 1.f);
    norm_gap.push_back(norms[k] / ref.at("clip.norms")[k] - 1.f);
  }
  const std::vector<float> zeros(steps, 0.f);
  expectClose(loss_gap.data(), zeros, 1e-5, "20 clipped steps' losses, relative");
  expectClose(norm_gap.data(), zeros, 1e-5, "their gradient norms, relative");
  EXPECT_GT(*std::max_element(ref.at("clip.norms").begin(), ref.at("clip.norms").end()), 0.5f)
      << "the clip bites on some step";
}

TEST(TorchStep, CnnMatchesPyTorch) {
  replay("cnn", makeCnn({28, 28, 1}, {4, 8}, 5, {16}, 10, 0.f, 1),
         {{"sgd", sgd(0.9, false, 5e-4), 0.05}, {"adamw", adam("adamw", 0.01), 1e-3}});
}

}  // namespace
}  // namespace ranklab
