// Fashion-MNIST (IDX, gzip) loaded and validated; pixels scaled and normalized to floats.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/bounded_read.h"

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

// An IDX file of unsigned bytes (gzip-compressed): the header's sizes and the data.
struct IdxFile {
  std::vector<uint32_t> sizes;  // one per dimension, the first the count of samples
  std::vector<uint8_t> data;    // exactly the sizes' product
};

// The compressed file and the data it holds, each bounded: a device, a FIFO, a file over
// kIdxFileLimit or one whose header declares more than kMaxIdxBytes is refused before it is
// read; a file that holds more than its header declares (a gzip bomb) once the declared
// bytes are read. Also refused: the wrong magic number (`kind` names what it should be), a
// header or data cut short. Each a DataError naming the file.
inline constexpr ReadLimit kIdxFileLimit{uint64_t{1} << 30, "IDX files"};
inline constexpr uint64_t kMaxIdxBytes = uint64_t{1} << 30;
IdxFile readIdxFile(const std::string& path, uint32_t magic, const char* kind);

}  // namespace ranklab
