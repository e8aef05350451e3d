#include "engine/data/text_dataset.h"

#include <cmath>
#include <cstdio>
#include "engine/job/utf8.h"
#include "storage/bounded_read.h"

namespace ranklab {

int64_t firstInvalidUtf8(const std::vector<uint8_t>& bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const size_t length = utf8SequenceAt(bytes.data(), bytes.size(), i);
    if (length == 0) return static_cast<int64_t>(i);
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

double bigramBaseline(const Dataset& train, const Dataset& validation) {
  const size_t vocab = static_cast<size_t>(train.classes);
  std::vector<double> pairs(vocab * vocab, 1.0), rows(vocab, static_cast<double>(vocab));
  for (size_t i = 0; i < train.labels.size(); ++i) {
    const auto from = static_cast<size_t>(train.images[i]);
    pairs[from * vocab + train.labels[i]] += 1;
    rows[from] += 1;
  }
  double nats = 0;
  for (size_t i = 0; i < validation.labels.size(); ++i) {
    const auto from = static_cast<size_t>(validation.images[i]);
    nats -= std::log(pairs[from * vocab + validation.labels[i]] / rows[from]);
  }
  return validation.labels.empty() ? 0 : nats / static_cast<double>(validation.labels.size());
}

TextSplits loadText(const std::string& path, int context) {
  if (context < 1)
    throw DataError("data.path \"" + path +
                    "\": model.context must be at least 1 to cut the "
                    "text into windows, got " +
                    std::to_string(context));
  // A device or a FIFO (/dev/zero) is refused, never read; a file over kMaxTextBytes too, as
  // it would take 5 bytes of memory per byte (a float token and a label).
  std::vector<uint8_t> bytes;
  try {
    bytes = readBoundedBytes(path, kTextFileLimit);
  } catch (const FileReadError& e) {
    throw DataError("data.path \"" + path + "\": " + e.cause());
  }
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
