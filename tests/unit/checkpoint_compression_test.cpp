// Checkpoints of compressed runs: every rank's codec state (error-feedback residual,
// momentum-correction velocity, PowerSGD's Q, random-stream positions) comes back, so a
// 2-rank compressed run resumed at step k gives the same losses, bit for bit, as the run
// that never stopped; another codec's checkpoint and a version-1 file are said clearly.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "engine/train/checkpoint.h"
#include "engine/train/trainer.h"
#include "tests/support/temp_folder.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

// Plain SGD with momentum: with a sparse codec the momentum moves into the codec's
// momentum correction, and error feedback is on, so every kind of state is in play.
JobSpec compressedJob(const std::string& codec, int64_t max_steps) {
  JobSpec job;
  job.model.layers = {32};
  job.train.optimizer = OptimizerKind::kSgd;
  job.train.momentum = 0.9;
  job.train.lr = 0.02;
  job.train.epochs = 2;
  job.train.batch_size = 25;
  job.train.max_steps = max_steps;
  job.parallel.ranks = 2;
  job.compression.codec = codec;
  job.compression.error_feedback = true;
  job.compression.momentum_correction = true;
  job.compression.ratio = 0.05;
  return job;
}

// Each rank's loss at each step: (rank, step) -> loss.
std::map<std::pair<int, int64_t>, double> trainAllRanks(
    const JobSpec& job, std::vector<std::string>* events = nullptr) {
  const auto ranks = testing::trainWithThreads(job);
  std::map<std::pair<int, int64_t>, double> losses;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    for (size_t i = 0; i < ranks[r].steps.size(); ++i)
      losses[{r, ranks[r].steps[i]}] = ranks[r].losses[i];
  }
  if (events) *events = ranks[0].events;
  return losses;
}

class CompressedCheckpoint : public ::testing::TestWithParam<std::string> {
 protected:
  std::string path(const std::string& name) const { return folder_.file(name); }
  testing::TempFolder folder_;
};

TEST_P(CompressedCheckpoint, ResumedRunContinuesTheLossCurveBitForBit) {
  const std::string codec = GetParam();
  const int64_t k = 30, more = 50;
  const auto uninterrupted = trainAllRanks(compressedJob(codec, k + more));

  JobSpec first = compressedJob(codec, k);
  first.train.checkpoint_path = path("run.ckpt");
  trainAllRanks(first);
  const Checkpoint saved = readCheckpoint(path("run.ckpt"));
  ASSERT_EQ(saved.codec_states.size(), 2u);
  if (codec != "fp16") {
    EXPECT_FALSE(saved.codec_states[1].empty());
  }

  JobSpec rest = compressedJob(codec, k + more);
  rest.train.resume_from = path("run.ckpt");
  std::vector<std::string> events;
  const auto resumed = trainAllRanks(rest, &events);
  ASSERT_EQ(resumed.size(), 2u * more);
  for (const auto& [at, loss] : resumed) {
    ASSERT_EQ(loss, uninterrupted.at(at)) << codec << " rank " << at.first << " step " << at.second;
  }
  for (const auto& event : events) EXPECT_EQ(event.find("warning"), std::string::npos) << event;
  std::printf("%s: rank 0 loss at step %lld: %.9g uninterrupted, %.9g resumed from step %lld\n",
              codec.c_str(), static_cast<long long>(k + more), uninterrupted.at({0, k + more}),
              resumed.at({0, k + more}), static_cast<long long>(k));
}

INSTANTIATE_TEST_SUITE_P(Codecs, CompressedCheckpoint,
                         ::testing::Values("topk", "qsgd", "powersgd", "fp16", "randomk", "sign"));

TEST(CompressedCheckpointFile, AnotherCodecsCheckpointSaysWhatDiffers) {
  testing::TempFolder folder;
  JobSpec first = compressedJob("topk", 5);
  first.train.checkpoint_path = folder.file("topk.ckpt");
  trainAllRanks(first);
  JobSpec other = compressedJob("qsgd", 10);
  other.train.resume_from = folder.file("topk.ckpt");
  try {
    trainAllRanks(other);
    FAIL() << "expected an error";
  } catch (const CheckpointError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("topk.ckpt: the checkpoint's compression is topk ratio=0.05"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("this job's is qsgd bits=4"), std::string::npos) << message;
  }
}

TEST(CompressedCheckpointFile, ATruncatedCheckpointNamesTheFile) {
  testing::TempFolder folder;
  JobSpec first = compressedJob("topk", 5);
  first.train.checkpoint_path = folder.file("cut.ckpt");
  trainAllRanks(first);
  std::filesystem::resize_file(folder.file("cut.ckpt"),
                               std::filesystem::file_size(folder.file("cut.ckpt")) - 100);
  JobSpec rest = compressedJob("topk", 10);
  rest.train.resume_from = folder.file("cut.ckpt");
  try {
    trainAllRanks(rest);
    FAIL() << "expected an error";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.ckpt: truncated"), std::string::npos) << e.what();
  }
}

// A version-1 file holds no codec state: the run resumes, and warns naming the job keys.
TEST(CompressedCheckpointFile, AVersion1CheckpointResumesWithAWarningNamingTheKeys) {
  testing::TempFolder folder;
  JobSpec first = compressedJob("topk", 5);
  first.train.checkpoint_path = folder.file("old.ckpt");
  trainAllRanks(first);
  std::fstream file(folder.file("old.ckpt"), std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(8);
  file.put(1);  // the version field; the CRC covers only the payload
  file.close();
  ASSERT_EQ(readCheckpoint(folder.file("old.ckpt")).codec_states.size(), 0u);
  JobSpec rest = compressedJob("topk", 10);
  rest.train.resume_from = folder.file("old.ckpt");
  std::vector<std::string> events;
  EXPECT_EQ(trainAllRanks(rest, &events).size(), 10u);
  bool warned = false;
  for (const auto& event : events) {
    warned |= event.find("warning: ") == 0 && event.find("old.ckpt") != std::string::npos &&
              event.find("compression.codec, compression.error_feedback") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

// ps-sync's codec state lives on the workers' encoders and the servers: not in the file.
TEST(CompressedCheckpointFile, APsSyncResumeWarnsNamingTheStrategyAndCodec) {
  testing::TempFolder folder;
  auto psJob = [](int64_t max_steps) {
    JobSpec job = compressedJob("topk", max_steps);
    job.parallel.strategy = "ps-sync";
    job.parallel.servers = 1;
    return job;
  };
  JobSpec first = psJob(5);
  first.train.checkpoint_path = folder.file("ps.ckpt");
  trainAllRanks(first);
  JobSpec rest = psJob(10);
  rest.train.resume_from = folder.file("ps.ckpt");
  std::vector<std::string> events;
  trainAllRanks(rest, &events);
  bool warned = false;
  for (const auto& event : events) {
    warned |=
        event.find("warning: ") == 0 && event.find("ps.ckpt") != std::string::npos &&
        event.find("parallel.strategy = ps-sync: compression.codec = topk") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace ranklab
