// Fashion-MNIST (IDX, gzip) loaded and validated; pixels scaled and normalized to floats.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ranklab {

class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Samples (N, features) row-major floats, labels (N) in [0, classes). An image sample is
// (height, width, channels) channels-last; a point or feature vector is 1 x 1 x features.
struct Dataset {
  int64_t count = 0;
  int features = 0;
  int classes = 0;
  int height = 1;
  int width = 1;
  std::vector<float> images;
  std::vector<uint8_t> labels;  // (N, labels_per_sample)
  int labels_per_sample = 1;    // a text window's: one next token per position
  const float* image(int64_t i) const { return images.data() + i * features; }
};

// Reads `<folder>/<prefix>-images-idx3-ubyte.gz` and `-labels-idx1-ubyte.gz`
// (prefix "train" or "t10k"). Validates magic numbers, dimensions and counts; a missing,
// truncated or foreign file is a DataError naming the file. limit > 0 keeps the first N.
Dataset loadFashionMnist(const std::string& folder, const std::string& prefix, int64_t limit);

// Raw IDX reading, exposed for tests: the gunzipped bytes of `path`.
std::vector<uint8_t> readGzipFile(const std::string& path);

}  // namespace ranklab
