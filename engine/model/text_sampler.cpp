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

std::string sampleText(const SplitTextModel& model, const std::string& prompt, int count,
                       uint64_t seed) {
  if (prompt.empty()) throw std::invalid_argument("sampleText: the prompt is empty");
  std::string text = prompt;
  std::mt19937_64 rng(seed);
  std::vector<float> window(model.context, 0.f), logits(model.vocab);
  for (int n = 0; n < count; ++n) {
    const size_t length = std::min(text.size(), static_cast<size_t>(model.context));
    const size_t from = text.size() - length;
    std::fill(window.begin(), window.end(), 0.f);
    for (size_t i = 0; i < length; ++i)
      window[i] = static_cast<float>(static_cast<uint8_t>(text[from + i]));
    const bool mine = model.next(window.data(), static_cast<int>(length) - 1, logits.data());
    text += static_cast<char>(model.share(mine ? draw(logits, rng) : -1));
  }
  return printableUtf8(text);
}

std::string sampleText(Network& model, const std::string& prompt, int count, uint64_t seed) {
  const int context = model.positions(), vocab = model.classes();
  if (model.inputShape() != Shape{context, 1, 1})
    throw std::invalid_argument("sampleText: the model does not read token sequences");
  SplitTextModel whole{context, vocab, nullptr, [](int drawn) { return drawn; }};
  whole.next = [&model, vocab](const float* window, int last, float* logits) {
    const float* out = model.predict(window, 1);
    model.device().download(logits, out + static_cast<size_t>(last) * vocab, vocab);
    return true;
  };
  return sampleText(whole, prompt, count, seed);
}

}  // namespace ranklab
