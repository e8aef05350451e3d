#include "engine/model/text_sampler.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "engine/job/utf8.h"

namespace ranklab {
namespace {

// Index of a draw from softmax(logits).
int draw(const std::vector<float>& logits, std::mt19937_64& rng) {
  const float top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> weights(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) weights[i] = std::exp(double(logits[i]) - top);
  return std::discrete_distribution<int>(weights.begin(), weights.end())(rng);
}

}  // namespace

std::string printableUtf8(const std::string& bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size();) {
    const size_t length =
        utf8SequenceAt(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), i);
    const auto c = static_cast<uint8_t>(bytes[i]);
    const bool control = length == 1 && (c < 0x20 || c == 0x7f) && c != '\n' && c != '\t';
    if (length == 0 || control) {
      out += '?';
      ++i;
      continue;
    }
    out.append(bytes, i, length);
    i += length;
  }
  return out;
}

std::string sampleText(Network& model, const std::string& prompt, int count, uint64_t seed) {
  const int context = model.positions(), vocab = model.classes();
  if (prompt.empty()) throw std::invalid_argument("sampleText: the prompt is empty");
  if (model.inputShape() != Shape{context, 1, 1})
    throw std::invalid_argument("sampleText: the model does not read token sequences");
  std::string text = prompt;
  std::mt19937_64 rng(seed);
  std::vector<float> window(context, 0.f), logits(vocab);
  for (int n = 0; n < count; ++n) {
    const size_t length = std::min(text.size(), static_cast<size_t>(context));
    const size_t from = text.size() - length;
    std::fill(window.begin(), window.end(), 0.f);
    for (size_t i = 0; i < length; ++i)
      window[i] = static_cast<float>(static_cast<uint8_t>(text[from + i]));
    const float* out = model.predict(window.data(), 1);
    model.device().download(logits.data(), out + (length - 1) * vocab, vocab);
    text += static_cast<char>(draw(logits, rng));
  }
  return printableUtf8(text);
}

}  // namespace ranklab
