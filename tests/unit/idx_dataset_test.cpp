// The IDX loader on the real Fashion-MNIST files and on broken files it must refuse.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/data/idx_dataset.h"
#include "tests/support/second_account.h"
#include "tests/support/temp_folder.h"

namespace ranklab {
namespace {

const std::string kFashion = "/usr/share/datasets/fashion-mnist";

using ranklab::testing::TempFolder;

void writeGzip(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

std::vector<uint8_t> header(uint32_t magic, std::vector<uint32_t> dims) {
  std::vector<uint8_t> out;
  auto put = [&](uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
  };
  put(magic);
  for (auto d : dims) put(d);
  return out;
}

// Two 28x28 images and labels, optionally corrupted.
void writeTinySet(const TempFolder& dir, uint32_t image_magic, size_t pixel_bytes, uint8_t label) {
  auto images = header(image_magic, {2, 28, 28});
  images.resize(images.size() + pixel_bytes, 128);
  writeGzip(dir.file("train-images-idx3-ubyte.gz"), images);
  auto labels = header(0x801, {2});
  labels.push_back(3);
  labels.push_back(label);
  writeGzip(dir.file("train-labels-idx1-ubyte.gz"), labels);
}

std::string loadError(const TempFolder& dir) {
  try {
    loadFashionMnist(dir.file(""), "train", 0);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST(IdxDataset, LoadsTheRealTrainingSet) {
  const Dataset train = loadFashionMnist(kFashion, "train", 0);
  EXPECT_EQ(train.count, 60000);
  EXPECT_EQ(train.features, 784);
  EXPECT_EQ(train.classes, 10);
  std::vector<int> per_class(10);
  for (auto l : train.labels) ++per_class[l];
  for (int c = 0; c < 10; ++c) EXPECT_EQ(per_class[c], 6000) << "class " << c;
  double mean = 0;
  for (float v : train.images) mean += v;
  EXPECT_NEAR(mean / train.images.size(), 0.0, 0.01);  // normalized with the dataset's mean
}

TEST(IdxDataset, LimitKeepsTheFirstSamples) {
  const Dataset test = loadFashionMnist(kFashion, "t10k", 100);
  EXPECT_EQ(test.count, 100);
  EXPECT_EQ(test.labels.size(), 100u);
}

TEST(IdxDataset, MissingFileNamesThePathAndThePackage) {
  TempFolder dir;
  const std::string error = loadError(dir);
  EXPECT_NE(error.find("train-images-idx3-ubyte.gz"), std::string::npos) << error;
  EXPECT_NE(error.find("dataset-fashion-mnist"), std::string::npos) << error;
}

TEST(IdxDataset, WrongMagicIsRefused) {
  TempFolder dir;
  writeTinySet(dir, 0x802, 2 * 784, 1);
  const std::string error = loadError(dir);
  EXPECT_NE(error.find("wrong magic"), std::string::npos) << error;
  EXPECT_NE(error.find("train-images"), std::string::npos) << error;
}

TEST(IdxDataset, TruncatedImagesAreRefused) {
  TempFolder dir;
  writeTinySet(dir, 0x803, 784 + 10, 1);
  const std::string error = loadError(dir);
  EXPECT_NE(error.find("header promises 1568"), std::string::npos) << error;
}

TEST(IdxDataset, LabelOutOfRangeIsRefused) {
  TempFolder dir;
  writeTinySet(dir, 0x803, 2 * 784, 12);
  const std::string error = loadError(dir);
  EXPECT_NE(error.find("label 12 at index 1"), std::string::npos) << error;
}

TEST(IdxDataset, ValidTinySetLoads) {
  TempFolder dir;
  writeTinySet(dir, 0x803, 2 * 784, 9);
  const Dataset d = loadFashionMnist(dir.file(""), "train", 0);
  EXPECT_EQ(d.count, 2);
  EXPECT_EQ(d.labels[1], 9);
}

// A file of the set in `dir`, named as the loader names it.
std::string inSet(const TempFolder& dir, const std::string& name) {
  return dir.file("") + "/" + name;
}

// The refusal of loading the set in `dir`, and that it came within a second.
std::string timedLoadError(const TempFolder& dir) {
  const auto start = std::chrono::steady_clock::now();
  const std::string error = loadError(dir);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << error;
  return error;
}

// Issue 57, item 6: a gzip bomb was inflated whole; the header's promise now bounds it.
TEST(IdxDataset, AGzipBombStopsAtWhatItsHeaderDeclares) {
  TempFolder dir;
  writeTinySet(dir, 0x803, 2 * 784, 1);
  const std::string images = inSet(dir, "train-images-idx3-ubyte.gz");
  gzFile f = gzopen(images.c_str(), "wb1");
  const auto head = header(0x803, {2, 28, 28});
  gzwrite(f, head.data(), static_cast<unsigned>(head.size()));
  const std::vector<uint8_t> zeros(1 << 20);
  for (int i = 0; i < 64; ++i) gzwrite(f, zeros.data(), static_cast<unsigned>(zeros.size()));
  gzclose(f);
  ASSERT_LT(std::filesystem::file_size(images), 1u << 20);  // 64 MiB in under 1 MiB
  EXPECT_EQ(timedLoadError(dir),
            images + ": holds more than the 1568 bytes of data its header declares");
}

TEST(IdxDataset, AHeaderDeclaringMoreThanTheLimitIsRefusedBeforeReading) {
  TempFolder dir;
  writeTinySet(dir, 0x803, 0, 1);
  const std::string images = inSet(dir, "train-images-idx3-ubyte.gz");
  writeGzip(images, header(0x803, {4'000'000, 28, 28}));
  EXPECT_EQ(timedLoadError(dir), images +
                                     ": its header declares more than 1 GiB of data; IDX files "
                                     "are limited to 1 GiB decompressed");
}

TEST(IdxDataset, DevicesFifosAndProcSelfMemAreRefusedNamingTheFile) {
  TempFolder dir;
  writeTinySet(dir, 0x803, 2 * 784, 1);
  const std::string images = inSet(dir, "train-images-idx3-ubyte.gz");
  const std::string labels = inSet(dir, "train-labels-idx1-ubyte.gz");
  std::filesystem::remove(images);
  std::filesystem::create_symlink("/dev/zero", images);
  EXPECT_EQ(timedLoadError(dir), images + ": is a character device, not a regular file");
  std::filesystem::remove(images);
  std::filesystem::create_symlink("/proc/self/mem", images);
  EXPECT_EQ(timedLoadError(dir), images + ": cannot read: input/output error");
  std::filesystem::remove(images);
  writeTinySet(dir, 0x803, 2 * 784, 1);
  std::filesystem::remove(labels);
  ASSERT_EQ(mkfifo(labels.c_str(), 0600), 0);
  EXPECT_EQ(timedLoadError(dir), labels + ": is a FIFO (a named pipe), not a regular file");
}

TEST(IdxDataset, AFileThisAccountMayNotReadSaysPermissionDenied) {
  if (!ranklab::testing::canBecomeNobody()) GTEST_SKIP() << "needs root to become nobody";
  TempFolder dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
  writeTinySet(dir, 0x803, 2 * 784, 1);
  const std::string images = inSet(dir, "train-images-idx3-ubyte.gz");
  ASSERT_EQ(chmod(images.c_str(), 0), 0);
  EXPECT_TRUE(ranklab::testing::asNobody(
      [&] { return loadError(dir) == images + ": cannot open: permission denied"; }));
}

}  // namespace
}  // namespace ranklab
