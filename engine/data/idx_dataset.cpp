#include "engine/data/idx_dataset.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace ranklab {

namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned byte, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned byte, 1 dimension
constexpr int kClasses = 10;
// Fashion-MNIST's published pixel mean and standard deviation (after scaling to [0, 1]).
constexpr float kMean = 0.2860f;
constexpr float kStd = 0.3530f;

uint32_t bigEndian32(const std::vector<uint8_t>& bytes, size_t offset) {
  return (uint32_t{bytes[offset]} << 24) | (uint32_t{bytes[offset + 1]} << 16) |
         (uint32_t{bytes[offset + 2]} << 8) | uint32_t{bytes[offset + 3]};
}

void require(bool ok, const std::string& path, const std::string& what) {
  if (!ok) throw DataError(path + ": " + what);
}

}  // namespace

std::vector<uint8_t> readGzipFile(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    throw DataError(path + ": cannot open: " + std::strerror(errno) +
                    " (install the Debian package dataset-fashion-mnist, or set data.path)");
  }
  std::vector<uint8_t> bytes;
  uint8_t buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + n);
  int code = Z_OK;
  const std::string message = n < 0 ? gzerror(file, &code) : "";
  gzclose(file);
  require(n >= 0, path, "not a readable gzip file: " + message);
  return bytes;
}

Dataset loadFashionMnist(const std::string& folder, const std::string& prefix, int64_t limit) {
  const std::string images_path = folder + "/" + prefix + "-images-idx3-ubyte.gz";
  const std::string labels_path = folder + "/" + prefix + "-labels-idx1-ubyte.gz";
  const auto images = readGzipFile(images_path);
  const auto labels = readGzipFile(labels_path);

  require(images.size() >= 16, images_path, "too short for an IDX image header");
  require(bigEndian32(images, 0) == kImagesMagic, images_path,
          "wrong magic number (expected 0x00000803, IDX unsigned-byte images)");
  const int64_t count = bigEndian32(images, 4);
  const int rows = static_cast<int>(bigEndian32(images, 8));
  const int cols = static_cast<int>(bigEndian32(images, 12));
  require(rows == 28 && cols == 28, images_path,
          "images are " + std::to_string(rows) + "x" + std::to_string(cols) + ", expected 28x28");
  const size_t pixels = static_cast<size_t>(count) * rows * cols;
  require(images.size() == 16 + pixels, images_path,
          "holds " + std::to_string(images.size() - 16) + " pixel bytes, header promises " +
              std::to_string(pixels));

  require(labels.size() >= 8, labels_path, "too short for an IDX label header");
  require(bigEndian32(labels, 0) == kLabelsMagic, labels_path,
          "wrong magic number (expected 0x00000801, IDX unsigned-byte labels)");
  const int64_t label_count = bigEndian32(labels, 4);
  require(label_count == count, labels_path,
          std::to_string(label_count) + " labels for " + std::to_string(count) + " images");
  require(labels.size() == 8 + static_cast<size_t>(count), labels_path,
          "label bytes do not match the header's count");

  Dataset data;
  data.count = limit > 0 ? std::min(limit, count) : count;
  data.features = rows * cols;
  data.height = rows;
  data.width = cols;
  data.classes = kClasses;
  data.images.resize(static_cast<size_t>(data.count) * data.features);
  for (size_t i = 0; i < data.images.size(); ++i) {
    data.images[i] = (images[16 + i] / 255.f - kMean) / kStd;
  }
  data.labels.assign(labels.begin() + 8, labels.begin() + 8 + data.count);
  for (int64_t i = 0; i < data.count; ++i) {
    require(data.labels[i] < kClasses, labels_path,
            "label " + std::to_string(data.labels[i]) + " at index " + std::to_string(i) +
                " is outside 0..9");
  }
  return data;
}

}  // namespace ranklab
