// Text a language model writes: what a user reads to see a GPT get better as its loss falls
// (train.sample_chars, drawn at each evaluation by the first rank).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "engine/model/network.h"

namespace ranklab {

// `count` bytes continuing `prompt`, each drawn from the model's next-byte distribution at
// temperature 1 with a generator seeded by `seed` (the same text for the same model and
// seed). The model sees the last context bytes (a shorter window is padded after its end,
// which a causal model does not read). The result holds the prompt and the drawn bytes,
// with each byte that is not printable UTF-8 (a broken sequence, a control character but
// newline and tab) written as '?', so it is safe in a terminal, a database and JSON.
std::string sampleText(Network& model, const std::string& prompt, int count, uint64_t seed);

// The same over a model split across ranks (a pipeline's stages), every rank calling it
// alike: `next` runs the model on a window of `context` token ids and writes the logits of
// position `last` (`vocab` floats, host memory) where this rank has them (returning true);
// `share` gives every rank the byte the rank with the logits drew (its argument: the drawn
// byte there, -1 elsewhere).
struct SplitTextModel {
  int context = 0, vocab = 0;
  std::function<bool(const float* window, int last, float* logits)> next;
  std::function<int(int drawn)> share;
};
std::string sampleText(const SplitTextModel& model, const std::string& prompt, int count,
                       uint64_t seed);

// `bytes` with every byte that is not part of printable UTF-8 (newline and tab allowed)
// replaced by '?'.
std::string printableUtf8(const std::string& bytes);

}  // namespace ranklab
