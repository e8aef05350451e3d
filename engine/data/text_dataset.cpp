#include "engine/data/text_dataset.h"

#include <cstdio>
#include <fstream>
#include <iterator>

namespace ranklab {

namespace {

// Bytes a UTF-8 sequence starting with `lead` has, 0 for a byte no sequence starts with.
int sequenceLength(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

}  // namespace

int64_t firstInvalidUtf8(const std::vector<uint8_t>& bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    const int length = sequenceLength(bytes[i]);
    if (length == 0 || i + length > bytes.size()) return static_cast<int64_t>(i);
    for (int k = 1; k < length; ++k)
      if ((bytes[i + k] & 0xc0) != 0x80) return static_cast<int64_t>(i);
    // Overlong three- and four-byte forms, surrogates and code points past U+10FFFF.
    const uint8_t second = length > 1 ? bytes[i + 1] : 0;
    if ((bytes[i] == 0xe0 && second < 0xa0) || (bytes[i] == 0xed && second > 0x9f) ||
        (bytes[i] == 0xf0 && second < 0x90) || (bytes[i] == 0xf4 && second > 0x8f))
      return static_cast<int64_t>(i);
    i += length;
  }
  return -1;
}

Dataset textWindows(const std::vector<uint8_t>& text, int context) {
  Dataset d;
  d.count = text.size() > 1 ? static_cast<int64_t>((text.size() - 1) / context) : 0;
  d.features = context;
  d.height = context;
  d.width = 1;
  d.classes = kTextVocab;
  d.labels_per_sample = context;
  d.images.resize(static_cast<size_t>(d.count) * context);
  d.labels.resize(static_cast<size_t>(d.count) * context);
  for (size_t i = 0; i < d.images.size(); ++i) {
    d.images[i] = static_cast<float>(text[i]);
    d.labels[i] = text[i + 1];
  }
  return d;
}

TextSplits loadText(const std::string& path, int context) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError("data.path \"" + path + "\": cannot open it as a text file");
  const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                                   std::istreambuf_iterator<char>()};
  if (in.bad()) throw DataError("data.path \"" + path + "\": reading it failed");
  if (const int64_t bad = firstInvalidUtf8(bytes); bad >= 0) {
    throw DataError("data.path \"" + path + "\": not UTF-8 text: byte " + std::to_string(bad) +
                    " (0x" +
                    [&] {
                      char hex[3];
                      std::snprintf(hex, sizeof hex, "%02x", bytes[bad]);
                      return std::string(hex);
                    }() +
                    ") starts no valid character");
  }
  const size_t split = bytes.size() * 9 / 10;
  const size_t need = static_cast<size_t>(context) + 1;
  if (split < need || bytes.size() - split < need) {
    throw DataError("data.path \"" + path + "\": " + std::to_string(bytes.size()) +
                    " bytes are too few: each split (90 % training, 10 % validation) needs a "
                    "window of model.context + 1 = " +
                    std::to_string(need) + " bytes, so at least " + std::to_string(need * 10) +
                    " bytes");
  }
  return {textWindows({bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(split)}, context),
          textWindows({bytes.begin() + static_cast<std::ptrdiff_t>(split), bytes.end()}, context)};
}

}  // namespace ranklab
