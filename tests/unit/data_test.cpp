// Synthetic datasets, the job's data selection, and the batch stream with and without
// background prefetch (same batches, in order, from any starting point).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "engine/data/batch_stream.h"
#include "engine/data/datasets.h"
#include "engine/data/text_dataset.h"
#include "engine/job/job_file.h"
#include "tests/support/second_account.h"
#include "tests/support/temp_folder.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

TEST(SyntheticData, SpiralsAreBalancedReproducibleAndInTheUnitDisc) {
  const Dataset a = makeSpirals(3000, 3, 0.0, 5), b = makeSpirals(3000, 3, 0.0, 5);
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(a.features, 2);
  EXPECT_EQ(a.classes, 3);
  std::vector<int> per_class(3);
  for (int64_t i = 0; i < a.count; ++i) {
    ++per_class[a.labels[i]];
    EXPECT_LE(std::hypot(a.images[2 * i], a.images[2 * i + 1]), 1.0 + 1e-6);
  }
  EXPECT_EQ(per_class, (std::vector<int>{1000, 1000, 1000}));
  EXPECT_NE(makeSpirals(3000, 3, 0.0, 6).images, a.images);
}

TEST(SyntheticData, MoonsLieOnTwoHalfCircles) {
  const Dataset d = makeMoons(1000, 0.0, 3);
  EXPECT_EQ(d.classes, 2);
  for (int64_t i = 0; i < d.count; ++i) {
    const double x = d.images[2 * i], y = d.images[2 * i + 1];
    // Upper moon: the unit circle around (0, 0); lower moon: around (1, 0.5).
    const double r = d.labels[i] == 0 ? std::hypot(x, y) : std::hypot(x - 1.0, y - 0.5);
    ASSERT_NEAR(r, 1.0, 1e-5) << i;
  }
}

TEST(SyntheticData, TheJobChoosesTheSetAndItsSizes) {
  DataSpec spec;
  spec.dataset = DatasetKind::kMoons;
  spec.samples = 300;
  spec.test_samples = 70;
  const DataSplits data = loadJobData(spec, 1);
  EXPECT_EQ(data.train.count, 300);
  EXPECT_EQ(data.test.count, 70);
  EXPECT_NE(std::vector<float>(data.train.images.begin(), data.train.images.begin() + 140),
            data.test.images);  // the test set is a separate draw
  spec.dataset = DatasetKind::kSpirals;
  spec.arms = 5;
  EXPECT_EQ(loadJobData(spec, 1).train.classes, 5);
}

// Byte-level text: windows of `context` tokens, each labelled with the tokens that follow.
TEST(TextData, WindowsAreLabelledWithTheNextByteAtEveryPosition) {
  const std::string text = "hello, world";  // 12 bytes: (12 - 1) / 4 = 2 windows
  const Dataset d = textWindows({text.begin(), text.end()}, 4);
  ASSERT_EQ(d.count, 2);
  EXPECT_EQ(d.features, 4);
  EXPECT_EQ(d.height, 4);
  EXPECT_EQ(d.classes, 256);
  EXPECT_EQ(d.labels_per_sample, 4);
  EXPECT_EQ(d.images, (std::vector<float>{'h', 'e', 'l', 'l', 'o', ',', ' ', 'w'}));
  EXPECT_EQ(std::string(d.labels.begin(), d.labels.end()), "ello, wo");
}

TEST(TextData, TheLastTenthValidatesAndTheDefaultCorpusIsRead) {
  testing::TempFolder folder;
  const std::string path = folder.file("corpus.txt");
  std::string text;
  for (int i = 0; i < 100; ++i) text += static_cast<char>('a' + i % 26);
  std::ofstream(path) << text;
  const TextSplits splits = loadText(path, 8);
  EXPECT_EQ(splits.train.count, (90 - 1) / 8);
  EXPECT_EQ(splits.validation.count, (10 - 1) / 8);
  EXPECT_EQ(splits.validation.images.front(), static_cast<float>('a' + 90 % 26));
  DataSpec spec;
  spec.dataset = DatasetKind::kText;
  spec.path = defaultDataPath(spec.dataset);  // as a job file that names none: the fortunes
  const DataSplits corpus = loadJobData(spec, 1, 64);
  EXPECT_GT(corpus.train.count, 3000);
  EXPECT_GT(corpus.test.count, 300);
}

TEST(TextData, BadTextIsRefusedNamingTheFileAndTheOffset) {
  testing::TempFolder folder;
  const std::string binary = folder.file("binary.bin");
  std::ofstream(binary) << std::string(500, 'a') << "\xff\xfe" << std::string(500, 'b');
  const std::string short_file = folder.file("short.txt");
  std::ofstream(short_file) << "too short";
  const std::pair<std::string, std::string> cases[] = {
      {binary, "not UTF-8 text: byte 500 (0xff) starts no valid character"},
      {short_file, "9 bytes are too few"},
      {folder.file("missing.txt"), "cannot open: no such file or directory"},
      {"/dev/zero", "is a character device, not a regular file"},
      {folder.path().string(), "is a folder, not a regular file"}};
  for (const auto& [path, expected] : cases) {
    try {
      loadText(path, 8);
      ADD_FAILURE() << path << " was read";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(firstInvalidUtf8({'a', 0xc3, 0xa9, 'b'}), -1);  // "aéb"
  EXPECT_EQ(firstInvalidUtf8({'a', 0xc3}), 1);              // cut short
  EXPECT_EQ(firstInvalidUtf8({0xed, 0xa0, 0x80}), 0);       // a surrogate
}

// The refusal of data.path = `path` as text, and that it came within a second.
std::string textRefusal(const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    loadText(path, 8);
  } catch (const DataError& e) {
    message = e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << path;
  return message;
}

// Issue 57, item 6: /proc/self/mem ended in "basic_filebuf::underflow error", naming no file;
// a FIFO without a writer blocked.
TEST(TextData, FifosUnreadableAndHugeFilesAreRefusedWithinASecond) {
  testing::TempFolder folder;
  const std::string fifo = folder.file("pipe.txt");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string huge = folder.file("huge.txt");
  std::ofstream(huge) << "text";
  std::filesystem::resize_file(huge, (uint64_t{1} << 30) + (uint64_t{1} << 29));  // sparse
  EXPECT_EQ(textRefusal(fifo),
            "data.path \"" + fifo + "\": is a FIFO (a named pipe), not a regular file");
  EXPECT_EQ(textRefusal("/proc/self/mem"),
            "data.path \"/proc/self/mem\": cannot read: input/output error");
  EXPECT_EQ(textRefusal(huge),
            "data.path \"" + huge + "\": is 1.5 GiB; text data files are limited to 1 GiB");
}

TEST(TextData, AFileThisAccountMayNotReadSaysPermissionDenied) {
  if (!testing::canBecomeNobody()) GTEST_SKIP() << "needs root to become nobody (uid 65534)";
  testing::TempFolder folder;
  std::filesystem::permissions(folder.path(), std::filesystem::perms(0755));
  const std::string secret = folder.file("secret.txt");
  std::ofstream(secret) << std::string(200, 'a');
  ASSERT_EQ(chmod(secret.c_str(), 0), 0);
  EXPECT_TRUE(testing::asNobody([&] {
    return textRefusal(secret) == "data.path \"" + secret + "\": cannot open: permission denied";
  }));
}

using testing::numberedSet;

struct Seen {
  int epoch;
  int64_t step;
  std::vector<float> images;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> drain(const Dataset& data, int first_epoch, int64_t first_step, int last_epoch,
                        int prefetch, size_t limit = SIZE_MAX) {
  ShardLoader loader(data, 1, 2, 4, 7);
  BatchStream stream(loader, data.features, first_epoch, first_step, last_epoch, prefetch);
  std::vector<Seen> seen;
  while (seen.size() < limit) {
    const Batch* b = stream.next();
    if (!b) break;
    seen.push_back({b->epoch, b->step, b->images});
  }
  return seen;
}

TEST(BatchStream, PrefetchingGivesExactlyTheLoadersBatchesInOrder) {
  const Dataset data = numberedSet(50);  // rank 1 of 2, batch 4: 6 steps per epoch
  const auto direct = drain(data, 1, 0, 3, 0);
  ASSERT_EQ(direct.size(), 18u);
  EXPECT_EQ(direct[6].epoch, 2);
  EXPECT_EQ(direct[6].step, 0);
  ShardLoader loader(data, 1, 2, 4, 7);
  loader.startEpoch(2);
  std::vector<float> images(8);
  std::vector<uint8_t> labels(4);
  loader.batch(3, images.data(), labels.data());
  EXPECT_EQ(direct[9].images, images);
  for (int prefetch : {1, 2, 5}) EXPECT_EQ(drain(data, 1, 0, 3, prefetch), direct) << prefetch;
}

// The producer sleeps until a burst of slots is free and each side wakes the other only when
// it sleeps: a consumer slower than the producer, then faster, must still see every batch.
TEST(BatchStream, WakesTheProducerWhetherTheConsumerIsSlowOrFast) {
  const Dataset data = numberedSet(50);
  const auto direct = drain(data, 1, 0, 3, 0);
  for (int prefetch : {1, 2, 4}) {
    ShardLoader loader(data, 1, 2, 4, 7);
    BatchStream stream(loader, data.features, 1, 0, 3, prefetch);
    std::vector<Seen> seen;
    while (const Batch* b = stream.next()) {
      seen.push_back({b->epoch, b->step, b->images});
      // Slow for the first half (the producer fills up and sleeps), fast after.
      if (seen.size() < direct.size() / 2)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(seen, direct) << "prefetch " << prefetch;
  }
}

TEST(BatchStream, StartsAnywhereAndStopsEarlyCleanly) {
  const Dataset data = numberedSet(50);
  const auto all = drain(data, 1, 0, 3, 0);
  const auto from_middle = drain(data, 2, 4, 3, 2);
  EXPECT_EQ(from_middle, std::vector<Seen>(all.begin() + 10, all.end()));
  // A resume point at the end of an epoch begins with the next epoch.
  EXPECT_EQ(drain(data, 1, 6, 3, 1), std::vector<Seen>(all.begin() + 6, all.end()));
  EXPECT_TRUE(drain(data, 3, 6, 3, 1).empty());
  EXPECT_EQ(drain(data, 1, 0, 3, 3, 2).size(), 2u);  // the stream is abandoned mid-way
}

// A GPU run page-locks every buffer a batch is loaded into, before any is loaded, keeps
// them locked while the stream lives, and sees the same batches.
TEST(BatchStream, PinsEveryBatchBufferOnceAndReleasesThemWithTheStream) {
  const Dataset data = numberedSet(50);
  const auto direct = drain(data, 1, 0, 3, 0);
  struct Pin {
    const void* data;
    size_t bytes;
  };
  std::vector<Pin> pinned;
  auto released = std::make_shared<int>(0);
  ShardLoader loader(data, 1, 2, 4, 7);
  std::vector<Seen> seen;
  {
    const PinHostFn pin = [&](void* p, size_t bytes) {
      pinned.push_back({p, bytes});
      return std::shared_ptr<void>(p, [released](void*) { ++*released; });
    };
    BatchStream stream(loader, data.features, 1, 0, 3, /*prefetch=*/2, 0, pin);
    ASSERT_EQ(pinned.size(), 6u);  // 3 slots (prefetch + 1): images and labels each
    while (const Batch* b = stream.next()) {
      seen.push_back({b->epoch, b->step, b->images});
      bool images = false, labels = false;
      for (const Pin& p : pinned) {
        images |= p.data == b->images.data() && p.bytes == b->images.size() * sizeof(float);
        labels |= p.data == b->labels.data() && p.bytes == b->labels.size();
      }
      EXPECT_TRUE(images && labels) << "batch " << seen.size() << " is in memory not pinned";
    }
    EXPECT_EQ(*released, 0);
  }
  EXPECT_EQ(*released, 6);
  EXPECT_EQ(pinned.size(), 6u);
  EXPECT_EQ(seen, direct);
}

}  // namespace
}  // namespace ranklab
