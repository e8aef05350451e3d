#include "engine/model/mlp.h"

#include <cmath>
#include <random>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {

using kernels::Trans;

Mlp::Mlp(std::vector<int> widths, uint64_t seed) : widths_(std::move(widths)) {
  size_t offset = 0;
  for (int l = 0; l < layers(); ++l) {
    const size_t in = widths_[l], out = widths_[l + 1];
    views_.push_back({"fc" + std::to_string(l) + ".weight", offset, out * in});
    offset += out * in;
    views_.push_back({"fc" + std::to_string(l) + ".bias", offset, out});
    offset += out;
  }
  params_.resize(offset);
  grads_.assign(offset, 0.f);
  std::mt19937_64 rng(seed);
  for (int l = 0; l < layers(); ++l) {
    const float bound = 1.f / std::sqrt(static_cast<float>(widths_[l]));
    std::uniform_real_distribution<float> dist(-bound, bound);
    for (const auto& view : {views_[2 * l], views_[2 * l + 1]}) {
      for (size_t i = 0; i < view.size; ++i) params_[view.offset + i] = dist(rng);
    }
  }
}

void Mlp::ensureBatch(int batch) {
  if (batch <= batch_capacity_) return;
  batch_capacity_ = batch;
  acts_.resize(layers());
  deltas_.resize(layers());
  for (int l = 0; l < layers(); ++l) {
    acts_[l].resize(static_cast<size_t>(batch) * widths_[l + 1]);
    deltas_[l].resize(acts_[l].size());
  }
  probs_.resize(static_cast<size_t>(batch) * widths_.back());
}

BatchLoss Mlp::forward(const float* x, const uint8_t* labels, int batch) {
  ensureBatch(batch);
  const float* input = x;  // (B, in)
  for (int l = 0; l < layers(); ++l) {
    const int in = widths_[l], out = widths_[l + 1];
    float* y = acts_[l].data();  // (B, out) = input (B, in) . W^T (in, out) + b
    kernels::sgemm(Trans::kNo, Trans::kYes, batch, out, in, 1.f, input, in, weight(l), in, 0.f, y,
                   out);
    kernels::addBiasRows(y, bias(l), batch, out);
    if (l + 1 < layers()) kernels::reluForward(y, static_cast<size_t>(batch) * out);
    input = y;
  }
  const auto result =
      kernels::softmaxXentForward(input, labels, probs_.data(), batch, widths_.back());
  return {result.loss_sum, result.correct};
}

void Mlp::zeroGrads() {
  std::fill(grads_.begin(), grads_.end(), 0.f);
}

void Mlp::backward(const float* x, const uint8_t* labels, int batch) {
  const int last = layers() - 1;
  // d(mean loss)/d(logits) = (softmax - onehot) / B
  kernels::softmaxXentBackward(deltas_[last].data(), probs_.data(), labels, batch, widths_.back(),
                               1.f / batch);
  for (int l = last; l >= 0; --l) {
    const int in = widths_[l], out = widths_[l + 1];
    const float* input = l == 0 ? x : acts_[l - 1].data();  // (B, in)
    const float* delta = deltas_[l].data();                 // (B, out)
    // dW (out, in) += delta^T (out, B) . input (B, in)
    kernels::sgemm(Trans::kYes, Trans::kNo, out, in, batch, 1.f, delta, out, input, in, 1.f,
                   weightGrad(l), in);
    kernels::sumRowsInto(biasGrad(l), delta, batch, out);
    if (l == 0) break;
    // d input (B, in) = delta (B, out) . W (out, in), then through the previous ReLU
    float* prev = deltas_[l - 1].data();
    kernels::sgemm(Trans::kNo, Trans::kNo, batch, in, out, 1.f, delta, out, weight(l), in, 0.f,
                   prev, in);
    kernels::reluBackward(prev, acts_[l - 1].data(), static_cast<size_t>(batch) * in);
  }
}

BatchLoss Mlp::evaluate(const float* x, const uint8_t* labels, int64_t n, int batch) {
  BatchLoss total;
  for (int64_t start = 0; start < n; start += batch) {
    const int b = static_cast<int>(std::min<int64_t>(batch, n - start));
    const auto part = forward(x + start * widths_[0], labels + start, b);
    total.loss_sum += part.loss_sum;
    total.correct += part.correct;
  }
  return total;
}

}  // namespace ranklab
