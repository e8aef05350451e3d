#include "engine/data/idx_dataset.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>

#include "storage/bounded_read.h"

namespace ranklab {

namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned byte, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned byte, 1 dimension
constexpr int kClasses = 10;
// Fashion-MNIST's published pixel mean and standard deviation (after scaling to [0, 1]).
constexpr float kMean = 0.2860f;
constexpr float kStd = 0.3530f;

std::string hex32(uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

uint32_t bigEndian32(const uint8_t* bytes) {
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

void require(bool ok, const std::string& path, const std::string& what) {
  if (!ok) throw DataError(path + ": " + what);
}

using GzipFile = std::unique_ptr<gzFile_s, int (*)(gzFile)>;

// The compressed file, opened without blocking and refused if it is not a regular file of
// at most kIdxFileLimit; a missing one says where the data comes from.
GzipFile openGzip(const std::string& path) {
  try {
    BoundedFile file(path, kIdxFileLimit);
    const int fd = file.release();
    GzipFile gz(gzdopen(fd, "rb"), &gzclose);
    if (!gz) {
      ::close(fd);
      throw DataError(path + ": cannot read it as gzip: out of memory");
    }
    return gz;
  } catch (const FileReadError& e) {
    const bool missing = e.cause() == "cannot open: " + errnoCause(ENOENT);
    throw DataError(e.what() + std::string(missing ? " (install the Debian package "
                                                     "dataset-fashion-mnist, or set data.path)"
                                                   : ""));
  }
}

// Up to `size` more decompressed bytes onto `out`; fewer only at the end of the data.
void gunzip(gzFile gz, const std::string& path, size_t size, std::vector<uint8_t>& out) {
  while (size > 0) {
    const size_t at = out.size();
    const auto chunk = static_cast<unsigned>(std::min<size_t>(size, 1 << 20));
    out.resize(at + chunk);
    const int got = gzread(gz, out.data() + at, chunk);
    if (got < 0) {
      const int error = errno;
      int code = Z_OK;
      const std::string message = gzerror(gz, &code);
      throw DataError(path + ": " +
                      (code == Z_ERRNO ? "cannot read: " + errnoCause(error)
                                       : "not a readable gzip file: " + message));
    }
    out.resize(at + static_cast<size_t>(got));
    if (got == 0) return;
    size -= static_cast<size_t>(got);
  }
}

}  // namespace

IdxFile readIdxFile(const std::string& path, uint32_t magic, const char* kind) {
  const GzipFile gz = openGzip(path);
  const size_t dimensions = magic & 0xff;
  const size_t header = 4 + 4 * dimensions;
  std::vector<uint8_t> bytes;
  gunzip(gz.get(), path, header, bytes);
  require(bytes.size() >= 4 && bigEndian32(bytes.data()) == magic, path,
          "wrong magic number (expected " + hex32(magic) + ", " + kind + ")");
  require(bytes.size() == header, path, std::string("too short for an IDX header of ") + kind);
  IdxFile idx;
  uint64_t declared = 1;  // data bytes, the product of the sizes, checked before any is read
  for (size_t d = 0; d < dimensions; ++d) {
    idx.sizes.push_back(bigEndian32(bytes.data() + 4 + 4 * d));
    declared = std::min<uint64_t>(declared * idx.sizes.back(), kMaxIdxBytes + 1);
  }
  require(declared <= kMaxIdxBytes, path,
          "its header declares more than " + byteSize(kMaxIdxBytes) +
              " of data; IDX files are limited to " + byteSize(kMaxIdxBytes) + " decompressed");
  // One byte past the declared size tells a file longer than its header (a gzip bomb stops
  // there).
  gunzip(gz.get(), path, static_cast<size_t>(declared) + 1, idx.data);
  require(idx.data.size() <= declared, path,
          "holds more than the " + std::to_string(declared) + " bytes of data its header declares");
  require(idx.data.size() == declared, path,
          "holds " + std::to_string(idx.data.size()) + " bytes of data, the header promises " +
              std::to_string(declared));
  return idx;
}

Dataset loadFashionMnist(const std::string& folder, const std::string& prefix, int64_t limit) {
  const std::string images_path = folder + "/" + prefix + "-images-idx3-ubyte.gz";
  const std::string labels_path = folder + "/" + prefix + "-labels-idx1-ubyte.gz";
  const IdxFile images = readIdxFile(images_path, kImagesMagic, "IDX unsigned-byte images");
  const IdxFile labels = readIdxFile(labels_path, kLabelsMagic, "IDX unsigned-byte labels");

  const int64_t count = images.sizes[0];
  const int rows = static_cast<int>(images.sizes[1]);
  const int cols = static_cast<int>(images.sizes[2]);
  require(rows == 28 && cols == 28, images_path,
          "images are " + std::to_string(rows) + "x" + std::to_string(cols) + ", expected 28x28");
  const int64_t label_count = labels.sizes[0];
  require(label_count == count, labels_path,
          std::to_string(label_count) + " labels for " + std::to_string(count) + " images");

  Dataset data;
  data.count = limit > 0 ? std::min(limit, count) : count;
  data.features = rows * cols;
  data.height = rows;
  data.width = cols;
  data.classes = kClasses;
  data.images.resize(static_cast<size_t>(data.count) * data.features);
  for (size_t i = 0; i < data.images.size(); ++i) {
    data.images[i] = (images.data[i] / 255.f - kMean) / kStd;
  }
  data.labels.assign(labels.data.begin(), labels.data.begin() + data.count);
  for (int64_t i = 0; i < data.count; ++i) {
    require(data.labels[i] < kClasses, labels_path,
            "label " + std::to_string(data.labels[i]) + " at index " + std::to_string(i) +
                " is outside 0..9");
  }
  return data;
}

}  // namespace ranklab
