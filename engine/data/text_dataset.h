// Byte-level text (data.dataset = "text"): any UTF-8 file is a sequence of tokens 0..255.
// The first 90 % of the file trains, the last 10 % validates. A sample is a window of
// `context` tokens and, as its labels, the `context` tokens that follow each of them (the
// window shifted by one); windows start every `context` bytes, so each byte is predicted
// once an epoch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/data/idx_dataset.h"
#include "storage/bounded_read.h"

namespace ranklab {

inline constexpr int kTextVocab = 256;  // byte-level tokens

// The largest text file data.path may name.
inline constexpr uintmax_t kMaxTextBytes = uintmax_t{1} << 30;
inline constexpr ReadLimit kTextFileLimit{kMaxTextBytes, "text data files"};

struct TextSplits {
  Dataset train;
  Dataset validation;
};

// Throws DataError naming the file and what is wrong: missing, not a regular file (a device,
// a FIFO: refused without blocking), larger than kMaxTextBytes, unreadable, not UTF-8 (with the
// byte offset), or too short for one window of `context` in each split.
TextSplits loadText(const std::string& path, int context);

// The windows of `text` as a Dataset (exposed for tests).
Dataset textWindows(const std::vector<uint8_t>& text, int context);

// The cross-entropy (nats per token) on `validation`'s positions of a bigram model counted on
// `train`'s (each position's byte and the next), add-one smoothed so every pair has a
// chance: the bar a byte-level language model must pass to have learned more than pairs.
double bigramBaseline(const Dataset& train, const Dataset& validation);

// The byte offset of the first byte that is not well-formed UTF-8, or -1.
int64_t firstInvalidUtf8(const std::vector<uint8_t>& bytes);

}  // namespace ranklab
